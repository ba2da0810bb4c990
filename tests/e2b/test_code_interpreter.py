"""The e2b-code-interpreter Python SDK, unchanged, against sandboxd: its /execute stream and
/contexts API on port 49999, over a runtime of the python-interpreter recipe (built through
the service on first use)."""

import base64
import os
import secrets
import struct

import pytest

from conftest import config, e2b_env

INTERPRETER = """
[runtimes.interpreter]
runtime = "python-interpreter"
mem_limit = "1g"

[build]
extra_ca_certificates = ["/etc/ssl/certs/ca-certificates.crt"]
"""


@pytest.fixture(scope="module")
def interpreter_env(start_service):
    keys = ["e2b_" + secrets.token_hex(20) for _ in range(3)]
    head, policy = config(*keys).split("[policy]", 1)
    with start_service(f"{head}{INTERPRETER}\n[policy]{policy}", keys[0], "e2b-code") as running:
        saved = {name: os.environ.get(name) for name in ("E2B_API_URL", "E2B_SANDBOX_URL", "E2B_API_KEY")}
        os.environ.update(e2b_env(running.url, keys[0]))
        try:
            yield running
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def test_run_code_with_a_plot_gets_png(interpreter_env):
    from e2b_code_interpreter import Sandbox

    sandbox = Sandbox.create(template="interpreter", timeout=600)
    try:
        first = sandbox.run_code("x = 20\nprint('hello')")
        assert first.error is None, first.error
        assert first.logs.stdout == ["hello\n"]

        plot = sandbox.run_code(
            "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nx + 22"
        )
        assert plot.error is None, plot.error
        pngs = [r.png for r in plot.results if r.png]
        assert len(pngs) == 1, plot.results
        png = base64.b64decode(pngs[0])
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", png[16:24])
        assert width > 100 and height > 100
        assert plot.text == "42"

        failing = sandbox.run_code("1 / 0")
        assert failing.error.name == "ZeroDivisionError"
        assert "ZeroDivisionError" in failing.error.traceback

        context = sandbox.create_code_context()
        apart = sandbox.run_code("print(x)", context=context)
        assert apart.error is not None and apart.error.name == "NameError"
        table = sandbox.run_code("import pandas as pd\npd.DataFrame({'a': [1]})", context=context)
        assert "<table" in table.results[0].html
    finally:
        sandbox.kill()
