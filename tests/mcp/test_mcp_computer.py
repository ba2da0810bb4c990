"""The `computer` tool with the official MCP Python SDK, as an agent's loop uses it, on a session
of the catalogue's `desktop` recipe (built through the service before the tests): a screenshot
(an image block), a page served in the sandbox opened in Chromium, its button clicked (the
screenshot after the click shows the page turned green), text typed into its field (the window
title the page sets to it, and the field's pixels, show it), a key chord, and the activity log
naming each action with its coordinates or keys and typed text only by its length."""

import base64
import json
import secrets
import struct
import urllib.request
import zlib

import anyio
import jsonschema
import pytest

from conftest import config, running_service
from test_mcp import activity, call, connect, error_text, output

pytestmark = pytest.mark.anyio

DESKTOP = """
[runtimes.desktop]
runtime = "desktop"

[runtimes.desktop-pooled]
runtime = "desktop"
pool_size = 1

[build]
extra_ca_certificates = ["/etc/ssl/certs/ca-certificates.crt"]
"""

# The button fills 100..400 x 100..200 of the screen (Chromium in kiosk mode draws the page
# from the screen's corner); the field 100..700 x 300..360. Clicking the button turns the page
# green; the title is the field's text.
PAGE = """<!doctype html>
<html><head><title>start</title><style>
body { margin: 0; background: #ffffff; }
button { position: absolute; left: 100px; top: 100px; width: 300px; height: 100px; background: #3050f0; border: 0; }
input { position: absolute; left: 100px; top: 300px; width: 600px; height: 60px; font-size: 40px; border: 0; background: #ffffff; color: #000000; outline: none; }
</style></head><body>
<button onclick="document.body.style.background = '#00c000'">press</button>
<input id="field" oninput="document.title = this.value">
</body></html>
"""


@pytest.fixture(scope="module")
def desktop_service():
    token = "mcp-desktop-" + secrets.token_hex(16)
    head, policy = config(token).split("[policy]", 1)
    with running_service(f"{head}{DESKTOP}\n[policy]{policy}", token, "mcp-desktop") as running:
        request = urllib.request.Request(
            f"{running.url}/v1/runtimes/desktop/build",
            method="POST",
            headers={"Authorization": f"Bearer {token}"},
        )
        with urllib.request.urlopen(request, timeout=1800) as answer:
            lines = answer.read().decode().strip().splitlines()
        assert '"ready"' in lines[-1], lines[-5:]
        yield running


def image_of(result):
    images = [block for block in result.content if block.type == "image"]
    assert len(images) == 1, result.content
    assert images[0].mime_type == "image/png"
    return base64.b64decode(images[0].data)


def png_size(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def one_pixel(png):
    """The colour of a 1x1 RGB PNG: its one row, after the filter byte (every PNG filter leaves
    the first pixel of the first row as it is)."""
    assert png_size(png) == (1, 1)
    data, at = b"", 8
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        if kind == b"IDAT":
            data += png[at + 8 : at + 8 + length]
        at += 12 + length
    return tuple(zlib.decompress(data)[1:4])


async def mean_colour(service, session_id, x, y, width, height):
    """The mean colour of a region of the screen: the REST screenshot of it, scaled to 1x1."""
    return one_pixel(await anyio.to_thread.run_sync(region_png, service, session_id, x, y, width, height))


def region_png(service, session_id, x, y, width, height):
    request = urllib.request.Request(
        f"{service.url}/v1/sessions/{session_id}/computer/screenshot"
        f"?x={x}&y={y}&width={width}&height={height}&max_width=1",
        headers={"Authorization": f"Bearer {service.token}"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        assert answer.headers["Sandboxd-Screen-Region"] == f"{x},{y},{width},{height}"
        return answer.read()


def near(colour, expected):
    return all(abs(a - b) <= 3 for a, b in zip(colour, expected))


async def eventually(probe, what, tries=60):
    for _ in range(tries):
        value = await probe()
        if value:
            return value
        await anyio.sleep(0.5)
    raise AssertionError(f"{what} did not happen")


# The text field of PAGE: x, y, width, height.
FIELD = (100, 300, 600, 60)


async def until_colour(service, session_id, region, wanted, what):
    """Waits until the mean colour of REGION (x, y, width, height) is WANTED (a predicate):
    Chromium paints in its own time after an action. A failure names the last colour seen."""
    seen = []

    async def probe():
        seen.append(await mean_colour(service, session_id, *region))
        return wanted(seen[-1])

    try:
        await eventually(probe, what)
    except AssertionError as failed:
        raise AssertionError(f"{failed}: the last mean colour was {seen[-1]}") from None


@pytest.mark.parametrize("transport", ["http"])
async def test_an_agent_loop_clicks_and_types_on_a_page(desktop_service, transport):
    async with connect(desktop_service, transport) as (session, _):
        opened = await call(session, "open_session", runtime="desktop")
        assert not opened.is_error, opened.content[0].text
        session_id = opened.structured_content["id"]
        try:
            # The first action starts the display; the answer is an image block.
            first = await call(session, "computer", session_id=session_id, action="screenshot")
            assert not first.is_error, first.content[0].text
            assert png_size(image_of(first)) == (1024, 768)
            assert first.structured_content["screenshot"]["source"] == {"x": 0, "y": 0, "width": 1024, "height": 768}
            assert "png_base64" not in first.structured_content["screenshot"], "the image travels as a block"
            size = await call(session, "computer", session_id=session_id, action="screen_size")
            assert size.structured_content["screen"] == {"width": 1024, "height": 768}

            await call(session, "write_file", session_id=session_id, path="/workspace/page/index.html", content=PAGE)
            started = await call(
                session,
                "run_command",
                session_id=session_id,
                command="setsid -f python3 -m http.server 8000 --directory /workspace/page >/dev/null 2>&1; "
                # --test-type: no bar warning of the recipe's --no-sandbox over the page.
                "DISPLAY=:0 setsid -f chromium --kiosk --test-type --no-first-run --noerrdialogs --disable-gpu "
                "--user-data-dir=/tmp/chromium http://localhost:8000/ >/tmp/chromium.log 2>&1",
            )
            assert not started.is_error, started.content[0].text

            # The button's corner, away from its label.
            await until_colour(
                desktop_service,
                session_id,
                (110, 110, 60, 30),
                lambda c: near(c, (0x30, 0x50, 0xF0)),
                "the page in Chromium (its blue button)",
            )

            clicked = await call(
                session, "computer", session_id=session_id, action="click", x=250, y=150, screenshot=True
            )
            assert not clicked.is_error, clicked.content[0].text
            assert png_size(image_of(clicked)) == (1024, 768), "a fresh screenshot after the action"
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            jsonschema.validate(clicked.structured_content, tools["computer"].output_schema)
            await until_colour(
                desktop_service,
                session_id,
                (600, 600, 100, 100),
                lambda c: near(c, (0x00, 0xC0, 0x00)),
                "the click's handler turning the page green",
            )

            # Thresholds, not exact colours: the field's blinking caret may be drawn.
            blank = await mean_colour(desktop_service, session_id, *FIELD)
            assert min(blank) >= 252, blank
            await call(session, "computer", session_id=session_id, action="click", x=400, y=330)
            typed_text = "hello sandboxd"
            typed = await call(session, "computer", session_id=session_id, action="type", text=typed_text)
            assert not typed.is_error, typed.content[0].text

            async def window_title():
                ran = await call(
                    session,
                    "run_command",
                    session_id=session_id,
                    command="DISPLAY=:0 xdotool getactivewindow getwindowname",
                )
                return output(ran)["stdout"].strip()

            async def title_is_the_text():
                # Chromium names its window "TITLE - Chromium".
                return await window_title() == f"{typed_text} - Chromium"

            await eventually(title_is_the_text, "the typed text in the page's title")
            # The pointer (screenshots show it) out of the way of the field.
            moved = await call(session, "computer", session_id=session_id, action="mouse_move", x=900, y=700)
            assert not moved.is_error, moved.content[0].text
            # Chromium paints after its title changes: the pixels are awaited, not sampled once.
            await until_colour(
                desktop_service, session_id, FIELD, lambda c: max(c) <= 245, "the field's pixels showing the text"
            )

            # A chord: select all and delete, the title follows.
            keys = await call(session, "computer", session_id=session_id, action="key", keys="ctrl+a BackSpace")
            assert not keys.is_error, keys.content[0].text

            async def title_left_the_text():
                return typed_text not in await window_title()

            await eventually(title_left_the_text, "the page's title without the deleted text")
            # Between the two keys the selection is painted blue; after both, the field is white again.
            await until_colour(desktop_service, session_id, FIELD, lambda c: min(c) >= 252, "the field's pixels cleared")

            cursor = await call(session, "computer", session_id=session_id, action="cursor_position")
            assert cursor.structured_content["cursor"] == {"x": 900, "y": 700}

            refused = await call(session, "computer", session_id=session_id, action="key", keys="a exec")
            assert "invalid_request" in error_text(refused)

            entries = [e for e in activity(desktop_service, session_id) if e["action"].startswith("computer_")]
            by_action = {}
            for entry in entries:
                by_action.setdefault(entry["action"], []).append(entry)
            assert any(e["target"] == "250,150 left" for e in by_action["computer_click"]), entries
            assert by_action["computer_type"][0]["target"] == f"{len(typed_text)} characters"
            assert all(typed_text not in e["target"] for e in entries)
            assert by_action["computer_key"][0]["target"] == "ctrl+a BackSpace"
            assert "100,300 600x60" in [e["target"] for e in by_action["computer_screenshot"]]
        finally:
            await call(session, "close_session", session_id=session_id)


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_session_without_a_desktop_says_so(desktop_service, transport):
    async with connect(desktop_service, transport) as (session, _):
        opened = await call(session, "open_session", runtime="sh")
        session_id = opened.structured_content["id"]
        try:
            refused = await call(session, "computer", session_id=session_id, action="screenshot")
            text = error_text(refused)
            assert "no_desktop" in text and "desktop" in text, text
        finally:
            await call(session, "close_session", session_id=session_id)


def pooled(service) -> int:
    request = urllib.request.Request(f"{service.url}/v1/stats", headers={"Authorization": f"Bearer {service.token}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)["pooled"]


async def test_a_pooled_desktop_has_its_screen_up_before_the_first_action(desktop_service):
    """A desktop sandbox put in a warm pool has its display started before it is taken: the
    session's screen answers before any computer action asked for it."""
    with anyio.fail_after(180):
        while pooled(desktop_service) < 1:
            await anyio.sleep(0.5)
    async with connect(desktop_service, "http") as (session, _):
        opened = await call(session, "open_session", runtime="desktop-pooled")
        session_id = opened.structured_content["id"]
        try:
            probe = "xdpyinfo -display :0 >/dev/null 2>&1 && echo up || echo down"
            ran = await call(session, "run_command", session_id=session_id, command=probe)
            assert output(ran)["stdout"] == "up\n", ran.content[0].text
        finally:
            await call(session, "close_session", session_id=session_id)
