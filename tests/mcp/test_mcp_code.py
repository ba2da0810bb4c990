"""run_code in a code context over MCP, with the official MCP Python SDK: on a runtime with a
kernel (the catalogue's python-interpreter recipe, built through the service on first use)
state persists between calls and a plot comes back as an image content block."""

import base64
import secrets
import struct

import anyio
import pytest

from conftest import config, running_service
from test_mcp import call, connect, output

pytestmark = pytest.mark.anyio

INTERPRETER = """
[runtimes.interpreter]
runtime = "python-interpreter"
mem_limit = "1g"

[build]
extra_ca_certificates = ["/etc/ssl/certs/ca-certificates.crt"]
"""


@pytest.fixture(scope="module")
def code_service():
    token = "mcp-code-" + secrets.token_hex(16)
    # The runtimes go before [policy]: TOML tables that follow it would belong to it otherwise.
    base = config(token)
    head, policy = base.split("[policy]", 1)
    with running_service(f"{head}{INTERPRETER}\n[policy]{policy}", token, "mcp-code") as running:
        yield running


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_run_code_returns_a_plot_as_an_image_block(code_service, transport):
    async with connect(code_service, transport) as (session, _):
        opened = await call(session, "open_session", runtime="interpreter")
        assert not opened.is_error, opened.content[0].text
        session_id = opened.structured_content["id"]
        try:
            first = await call(session, "run_code", session_id=session_id, code="x = 21\nprint('ready')")
            assert not first.is_error, first.content[0].text
            assert output(first)["stdout"] == "ready\n"
            assert first.structured_content["kernel"]["outcome"] == "ok"

            plot = await call(
                session,
                "run_code",
                session_id=session_id,
                code="import matplotlib.pyplot as plt\nplt.plot([1, x, 2])\nplt.show()\nx * 2",
            )
            assert not plot.is_error, plot.content[0].text
            images = [block for block in plot.content if block.type == "image"]
            assert len(images) == 1, plot.content
            assert images[0].mime_type == "image/png"
            png = base64.b64decode(images[0].data)
            assert png[:8] == b"\x89PNG\r\n\x1a\n"
            width, height = struct.unpack(">II", png[16:24])
            assert width > 100 and height > 100, (width, height)
            kernel = plot.structured_content["kernel"]
            # State persisted: x from the first call.
            main = [r for r in kernel["results"] if r["is_main_result"]]
            assert main[0]["data"]["text/plain"] == "42", kernel
            assert any("image/png" in r["images"] for r in kernel["results"]), kernel
            assert "42" in plot.content[0].text

            failing = await call(session, "run_code", session_id=session_id, code="1 / 0")
            assert failing.structured_content["kernel"]["error"]["name"] == "ZeroDivisionError"
            assert "ZeroDivisionError" in failing.content[0].text
        finally:
            await call(session, "close_session", session_id=session_id)


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_cancelled_run_code_interrupts_its_cell(code_service, transport):
    """A client that cancels `run_code` stops its cell (a KeyboardInterrupt, the context's state
    kept): the next call runs at once instead of waiting behind it past its own timeout."""
    async with connect(code_service, transport) as (session, _):
        opened = await call(session, "open_session", runtime="interpreter")
        assert not opened.is_error, opened.content[0].text
        session_id = opened.structured_content["id"]
        try:
            with anyio.move_on_after(3) as waited:
                await call(
                    session,
                    "run_code",
                    session_id=session_id,
                    code="import time\nstep = 1\ntime.sleep(300)\nstep = 2",
                )
            assert waited.cancelled_caught, "the cell ended by itself"
            after = await call(session, "run_code", session_id=session_id, code="print(step)", timeout_secs=30)
            assert not after.is_error, after.content[0].text
            assert output(after)["stdout"] == "1\n", after.content[0].text
        finally:
            await call(session, "close_session", session_id=session_id)
