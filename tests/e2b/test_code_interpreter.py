"""The e2b-code-interpreter Python SDK, unchanged, against sandboxd: its /execute stream and
/contexts API on port 49999, over a runtime of the code-interpreter recipe (built through the
service on first use) that E2B's template name `code-interpreter-v1` opens, as
`Sandbox.create()` asks for it."""

import base64
import os
import secrets
import struct

import pytest

from conftest import config, sdk_env, run_node_suite

INTERPRETER = """
[runtimes.code-interpreter]
runtime = "code-interpreter"
mem_limit = "2g"

[e2b.templates]
code-interpreter-v1 = "code-interpreter"

[build]
extra_ca_certificates = ["/etc/ssl/certs/ca-certificates.crt"]
"""


@pytest.fixture(scope="module")
def interpreter_env(start_service):
    keys = ["e2b_" + secrets.token_hex(20) for _ in range(3)]
    head, policy = config(*keys).split("[policy]", 1)
    with start_service(f"{head}{INTERPRETER}\n[policy]{policy}", keys[0], "e2b-code") as running:
        with sdk_env(running.url, keys[0]):
            yield running


def test_run_code_with_a_plot_gets_png_and_chart_data(interpreter_env):
    from e2b_code_interpreter import Sandbox

    sandbox = Sandbox.create(timeout=600)
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
        # E2B's chart data of the figure, as the SDK's typed chart.
        charts = [r.chart for r in plot.results if r.chart]
        assert len(charts) == 1, plot.results
        assert charts[0].type.value == "line", charts[0]
        assert [tuple(p) for p in charts[0].elements[0].points] == [(0, 1), (1, 2), (2, 3)]

        failing = sandbox.run_code("1 / 0")
        assert failing.error.name == "ZeroDivisionError"
        assert "ZeroDivisionError" in failing.error.traceback

        context = sandbox.create_code_context()
        apart = sandbox.run_code("print(x)", context=context)
        assert apart.error is not None and apart.error.name == "NameError"
        table = sandbox.run_code("import pandas as pd\npd.DataFrame({'a': [1]})", context=context)
        assert "<table" in table.results[0].html
        assert table.results[0].data == {"a": [1]}, table.results[0]
    finally:
        sandbox.kill()


# Each language of the SDK's `RunCodeLanguage`, with a statement that keeps state and one that
# prints from it: what E2B's code-interpreter template runs.
LANGUAGES = [
    ("python", "n = 6 * 7", "print(n)"),
    ("javascript", "var n = 6 * 7;", "console.log(n)"),
    ("typescript", "const n: number = 6 * 7;", "console.log(n)"),
    ("r", "n <- 6 * 7", "cat(n, fill = TRUE)"),
    ("java", "int n = 6 * 7;", "System.out.println(n);"),
    ("bash", "n=$((6 * 7))", "echo $n"),
]


def test_every_language_of_the_sdk_runs_and_keeps_its_state(interpreter_env):
    from e2b_code_interpreter import Sandbox

    sandbox = Sandbox.create(timeout=600)
    try:
        for language, keep, show in LANGUAGES:
            kept = sandbox.run_code(keep, language=language)
            assert kept.error is None, (language, kept.error)
            shown = sandbox.run_code(show, language=language)
            assert shown.error is None, (language, shown.error)
            assert "".join(shown.logs.stdout) == "42\n", (language, shown.logs)
        contexts = {c.language for c in sandbox.list_code_contexts()}
        assert {language for language, _, _ in LANGUAGES} <= contexts, contexts
    finally:
        sandbox.kill()


def test_a_client_timeout_interrupts_the_cell_and_keeps_the_state(interpreter_env):
    from e2b import TimeoutException
    from e2b_code_interpreter import Sandbox

    sandbox = Sandbox.create(timeout=600)
    try:
        assert sandbox.run_code("import os; os.getcwd()").text == "/home/user"
        with pytest.raises(TimeoutException):
            sandbox.run_code("import time\nstep = 1\ntime.sleep(300)\nstep = 2", timeout=3)
        # Had the cell gone on, this would wait behind it (until the service's own limit, 120 s
        # here) and time out itself; the interrupt (not a restart) keeps what the cell did.
        after = sandbox.run_code("print(step)", timeout=30)
        assert after.error is None, after.error
        assert after.logs.stdout == ["1\n"], after.logs
    finally:
        sandbox.kill()


def test_a_dead_kernel_is_restarted_and_a_killed_sandbox_raises(interpreter_env):
    import threading

    from e2b_code_interpreter import Sandbox

    sandbox = Sandbox.create(timeout=600)
    try:
        sandbox.run_code("kept = 1")
        died = sandbox.run_code("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
        assert died.error is not None, died
        # A fresh kernel takes the next run: the state went with the old one.
        fresh = sandbox.run_code("print('kept' in globals())")
        assert fresh.error is None, fresh.error
        assert fresh.logs.stdout == ["False\n"], fresh.logs
        # Killed while a cell runs, the sandbox's answer breaks off and the call raises.
        killed = []
        killer = threading.Timer(2, lambda: killed.append(sandbox.kill()))
        killer.start()
        with pytest.raises(Exception) as raised:
            sandbox.run_code("import time\ntime.sleep(60)", timeout=50)
        killer.join(60)
        assert killed == [True], killed
        # The SDK's own words for a sandbox that died under a request, well before the timeout.
        assert "was killed while the request was in progress" in str(raised.value), raised.value
    finally:
        sandbox.kill()


# package.json's dependency, and the release package-lock.json pins under it.
NODE_RELEASES = [("@e2b/code-interpreter", "2.8.0"), ("@e2b/code-interpreter-2.7", "2.7.2")]


@pytest.mark.parametrize(("package", "version"), NODE_RELEASES, ids=[version for _, version in NODE_RELEASES])
def test_the_node_code_interpreter_suite_passes(interpreter_env, package, version):
    """The @e2b/code-interpreter npm SDK (tests/e2b/package-lock.json) over the same service,
    the newest two releases (the older under an npm alias in package.json)."""
    run = run_node_suite("code_interpreter.test.mjs", package, version, dict(os.environ), timeout=600)
    failed = "\n".join(line for line in run.stdout.splitlines() if line.strip().startswith(("not ok", "error:", "expected", "actual", "name:", "message:")))
    assert run.returncode == 0, failed + run.stdout[-4000:] + run.stderr[-3000:]
    assert "# fail 0" in run.stdout and "# pass 3" in run.stdout, run.stdout[-3000:]
