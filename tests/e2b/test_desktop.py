"""E2B's Desktop SDK (e2b-desktop), unchanged, against sandboxd's embedded default config (plus
only a token): `Sandbox.create()` opens the template `desktop`, which the default maps to its
`desktop` runtime (the catalogue's `desktop` recipe, built through the service before the
test). Screen size, screenshot, mouse, an application launched, text typed into it and a key
pressed (proved by the file the typed command writes), the noVNC stream reached through the
port proxy, and kill; then the npm package @e2b/desktop's suite (desktop.test.mjs) the same way.
The gVisor step runs it with the desktop on gVisor."""

import os
import secrets
import struct
import subprocess
import time
import urllib.request

import httpx
import pytest

from conftest import ISOLATION, SANDBOXD, sdk_env, run_node_suite

PNG = b"\x89PNG\r\n\x1a\n"


def embedded_default(token: str) -> str:
    """The config `sandboxd config default` prints, with a token: no operator step. In the
    gVisor step every runtime of it is on gVisor (the service-wide `isolation`), the desktop
    too."""
    printed = subprocess.run([str(SANDBOXD), "config", "default"], capture_output=True, text=True, check=True)
    return f'token = "{token}"\nisolation = "{ISOLATION}"\n' + printed.stdout


def build(url: str, token: str, runtime: str):
    """POST /v1/runtimes/{runtime}/build, read to its end (the first build takes minutes)."""
    request = urllib.request.Request(
        f"{url}/v1/runtimes/{runtime}/build",
        method="POST",
        headers={"Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=1800) as answer:
        lines = answer.read().decode().strip().splitlines()
    assert '"ready"' in lines[-1], lines[-5:]


@pytest.fixture(scope="module")
def desktop_env(start_service):
    token = "e2b_" + secrets.token_hex(20)
    with start_service(embedded_default(token), token, "e2b-desktop") as running:
        build(running.url, token, "desktop")
        with sdk_env(running.url, token):
            yield running


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG, data[:16]
    return struct.unpack(">II", data[16:24])


SHELL_IN_TERMINAL = "pgrep -P \"$(pgrep -d, -x xfce4-terminal)\" || true"


def wait_for(probe, what: str, tries: int = 100, interval: float = 0.2):
    for _ in range(tries):
        value = probe()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"{what} did not happen")


def terminal_windows(desktop):
    """The terminal's windows; none yet is the search's exit status 1, an exception."""
    from e2b import CommandExitException

    try:
        return [w for w in desktop.get_application_windows("Xfce4-terminal") if w]
    except CommandExitException:
        return []


def test_the_desktop_sdk_works_unchanged(desktop_env):
    from e2b_desktop import Sandbox

    desktop = Sandbox.create(timeout=600)
    try:
        kernel = desktop.commands.run("cat /proc/version").stdout
        assert ("gvisor" in kernel) == (ISOLATION == "gvisor"), kernel
        assert desktop.get_screen_size() == (1024, 768)
        assert png_size(bytes(desktop.screenshot())) == (1024, 768)

        desktop.move_mouse(100, 200)
        assert desktop.get_cursor_position() == (100, 200)

        # An application launched by its desktop entry, focused, clicked into, typed into, and
        # a key pressed: the command typed into the terminal writes a file.
        desktop.launch("xfce4-terminal")
        windows = wait_for(lambda: terminal_windows(desktop), "a terminal window")
        title = desktop.get_window_title(windows[0])
        assert "Terminal" in title, title
        # Keys go to the terminal once its shell runs: a process whose parent is the terminal.
        wait_for(lambda: desktop.commands.run(SHELL_IN_TERMINAL).stdout.strip(), "the terminal's shell")
        desktop.left_click(512, 384)
        desktop.write("echo typed-$((6 * 7)) > /tmp/typed.txt")
        desktop.press("enter")
        typed = wait_for(
            lambda: desktop.commands.run("cat /tmp/typed.txt 2>/dev/null || true").stdout,
            "the typed command's file",
        )
        assert typed == "typed-42\n"

        # The noVNC stream, reached through the service's port proxy with the token.
        desktop.stream.start()
        assert f"6080-{desktop.sandbox_id}." in desktop.stream.get_url()
        assert "/vnc.html" in desktop.stream.get_url()
        page = httpx.get(
            f"{desktop_env.url}/v1/sessions/{desktop.sandbox_id}/ports/6080/vnc.html",
            headers={"Authorization": f"Bearer {desktop_env.token}"},
            timeout=30,
        )
        assert page.status_code == 200, page.text[:300]
        assert "noVNC" in page.text
        desktop.stream.stop()
    finally:
        desktop.kill()
    with pytest.raises(Exception):
        desktop.get_screen_size()


def test_the_node_desktop_sdk_works_unchanged(desktop_env):
    run = run_node_suite("desktop.test.mjs", "@e2b/desktop", "2.4.0", dict(os.environ), timeout=300)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "# fail 0" in run.stdout and "# pass 3" in run.stdout, run.stdout[-3000:]
