"""Commands and terminals through the official E2B Python SDK: E2B processes are sandboxd
background processes (reconnect by pid, stdin, signals, PTY and resize)."""

import time

import pytest
from e2b import CommandExitException, PtySize, Sandbox, SandboxException, SandboxNotRunningException, TimeoutException


def test_foreground_output_exit_codes_and_stderr(sandbox):
    result = sandbox.commands.run("echo out; echo err >&2")
    assert (result.stdout, result.stderr, result.exit_code) == ("out\n", "err\n", 0)
    with pytest.raises(CommandExitException) as failed:
        sandbox.commands.run("echo partial; echo bad >&2; exit 3")
    assert failed.value.exit_code == 3
    assert failed.value.stdout == "partial\n"
    assert failed.value.stderr == "bad\n"


def test_callbacks_get_output_as_it_comes(sandbox):
    seen = []
    sandbox.commands.run(
        "echo one; sleep 0.3; echo two >&2",
        on_stdout=lambda text: seen.append(("out", text)),
        on_stderr=lambda text: seen.append(("err", text)),
    )
    assert seen == [("out", "one\n"), ("err", "two\n")]


def test_cwd_envs_and_user(sandbox):
    assert sandbox.commands.run("pwd", cwd="/tmp").stdout == "/tmp\n"
    assert sandbox.commands.run("echo $A$B", envs={"A": "x", "B": "y"}).stdout == "xy\n"
    assert sandbox.commands.run("id -u", user="user").stdout == "61000\n"
    with pytest.raises(SandboxException, match="not available"):
        sandbox.commands.run("id -u", user="root")


def test_background_wait_list_and_kill(sandbox):
    # The quick one ends when told, not after a time a loaded machine can outlast.
    quick = sandbox.commands.run(
        "until [ -e /tmp/go ]; do sleep 0.05; done; echo done", background=True
    )
    slow = sandbox.commands.run("sleep 60", background=True)
    running = {p.pid for p in sandbox.commands.list()}
    assert {quick.pid, slow.pid} <= running
    sandbox.files.write("/tmp/go", "")
    assert quick.wait().stdout == "done\n"
    assert slow.kill() is True
    with pytest.raises(CommandExitException):
        slow.wait()
    assert slow.pid not in {p.pid for p in sandbox.commands.list()}
    assert sandbox.commands.kill(slow.pid) is False


def test_stdin(sandbox):
    handle = sandbox.commands.run("read line; echo got $line", background=True, stdin=True)
    sandbox.commands.send_stdin(handle.pid, "hello\n")
    assert handle.wait().stdout == "got hello\n"
    handle = sandbox.commands.run("cat", background=True, stdin=True)
    handle.send_stdin("abc")
    handle.close_stdin()
    assert handle.wait().stdout == "abc"


def test_connect_to_a_running_command_after_a_disconnect(sandbox):
    handle = sandbox.commands.run(
        "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.4; done", background=True
    )
    time.sleep(0.5)
    handle.disconnect()
    again = sandbox.commands.connect(handle.pid)
    result = again.wait()
    assert "line6\n" in result.stdout
    assert result.exit_code == 0


def test_a_timeout_ends_the_call_and_kills_the_command(sandbox):
    started = time.monotonic()
    with pytest.raises(TimeoutException):
        sandbox.commands.run("sleep 30; echo never", timeout=2)
    assert time.monotonic() - started < 15
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not any("sleep" in p.cmd or p.cmd == "/bin/bash" for p in sandbox.commands.list()):
            break
        time.sleep(0.5)
    assert sandbox.commands.list() == []


def test_pty_create_input_resize_and_kill(sandbox):
    output = bytearray()
    terminal = sandbox.pty.create(PtySize(rows=24, cols=80))
    sandbox.pty.resize(terminal.pid, PtySize(rows=30, cols=100))
    sandbox.pty.send_stdin(terminal.pid, b"stty size; echo $((6*7)); exit\n")
    terminal.wait(on_pty=output.extend)
    text = output.decode(errors="replace")
    assert "30 100" in text
    assert "42" in text

    other = sandbox.pty.create(PtySize(rows=24, cols=80))
    assert sandbox.pty.kill(other.pid) is True
    with pytest.raises(CommandExitException):
        other.wait()


def test_a_command_of_a_killed_sandbox_ends_as_the_sandbox_gone(e2b):
    box = Sandbox.create()
    handle = box.commands.run("sleep 60", background=True)
    assert Sandbox.kill(box.sandbox_id) is True
    with pytest.raises(SandboxNotRunningException) as raised:
        handle.wait()
    message = str(raised.value)
    assert "was not found: it ended while the command ran (closed by the client)" in message, message
    assert "agent" not in message, message
