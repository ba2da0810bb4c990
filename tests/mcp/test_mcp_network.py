"""The network tools over MCP on an egress runtime, with the official MCP Python SDK: a session
reads its list, narrows it within its runtime's, is refused anything wider in words that name
the runtime's list, and the narrowing holds for the sandbox's next connection through the
service's proxy. The names resolve nowhere (a name server on loopback where none listens), so
nothing leaves the machine."""

import json
import secrets

import pytest

from conftest import PYTHON_IMAGE, config, running_service
from test_mcp import activity, call, connect, error_text, structured

pytestmark = pytest.mark.anyio

RUNTIME_LIST = ["allowed.example", "narrowed-away.example"]

EGRESS = f"""
[runtimes.net]
image = "{PYTHON_IMAGE}"
interpreter = ["python3"]
network_mode = "egress"
egress = {json.dumps(RUNTIME_LIST)}

[egress]
upstream_dns = ["127.0.0.1:9"]
"""


@pytest.fixture(scope="module")
def egress_service():
    token = "mcp-net-" + secrets.token_hex(16)
    # The runtimes go before [policy]: TOML tables that follow it would belong to it otherwise.
    head, policy = config(token).split("[policy]", 1)
    with running_service(f"{head}{EGRESS}\n[policy]{policy}", token, "mcp-net") as running:
        yield running


# A program in the sandbox fetching a URL through the proxy the environment names.
FETCH = """python3 -c "
import urllib.request, urllib.error
try:
    print(urllib.request.urlopen('http://{name}/', timeout=15).status)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
except Exception as e:
    print('failed', repr(e))
\""""


async def proxy_answer(session, session_id, name):
    """What the service's proxy answers the sandbox for http://NAME/."""
    ran = await call(session, "run_command", session_id=session_id, command=FETCH.format(name=name))
    return structured(ran)["stdout"].strip()


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_network_tools_read_narrow_and_refuse_wider(egress_service, transport):
    async with connect(egress_service, transport) as (session, _):
        session_id = structured(await call(session, "open_session", runtime="net"))["id"]
        try:
            read = structured(await call(session, "get_network", session_id=session_id))
            assert read["egress"] == RUNTIME_LIST, read

            # Before the narrowing, the proxy lets the name through (it then fails to resolve).
            before = await proxy_answer(session, session_id, "narrowed-away.example")
            narrowed = structured(
                await call(session, "set_network", session_id=session_id, egress=["allowed.example"])
            )
            assert narrowed["egress"] == ["allowed.example"], narrowed
            assert structured(await call(session, "get_network", session_id=session_id)) == narrowed
            after = await proxy_answer(session, session_id, "narrowed-away.example")
            assert before != after, (before, after)
            assert after.startswith("403 refused by policy"), after

            wider = await call(session, "set_network", session_id=session_id, egress=["elsewhere.example"])
            text = error_text(wider)
            assert "elsewhere.example" in text and "runtime" in text, text
            assert structured(await call(session, "get_network", session_id=session_id)) == narrowed

            entries = [e for e in activity(egress_service, session_id) if e["action"] == "set_network"]
            assert {e["interface"] for e in entries} == {"mcp"}, entries
            assert sorted(e["status"] for e in entries) == ["error", "ok"], entries
        finally:
            await call(session, "close_session", session_id=session_id)
