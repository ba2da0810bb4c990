"""The ports tools (list_ports, share_port, list_shares, revoke_share) driven by the official
MCP Python SDK over both transports: a server started in a session is listed, and the link
share_port makes answers its page over plain HTTP without the token until it is revoked."""

import asyncio
import secrets

import httpx2
import pytest

from test_mcp import call, connect, error_text, structured

pytestmark = pytest.mark.anyio

PORT = 8000


def readable(result):
    """A tool's structured answer and its text, which reads as lines rather than JSON."""
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None and len(result.content) == 1, result.content
    return result.structured_content, result.content[0].text


async def listed_port(session, session_id, port):
    """The list_ports entry for `port`, once the server has bound it."""
    for _ in range(100):
        result = await call(session, "list_ports", session_id=session_id)
        answer, text = readable(result)
        ports = answer["ports"]
        found = [p for p in ports if p["port"] == port]
        if found:
            return found[0], text
        await asyncio.sleep(0.1)
    raise AssertionError(f"port {port} was never listed: {ports}")


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_server_is_listed_and_shared_without_the_token(service, transport):
    marker = "page-" + secrets.token_hex(8)
    async with connect(service, transport) as (session, _):
        opened = structured(await call(session, "open_session", runtime="python"))
        session_id = opened["id"]
        try:
            structured(
                await call(session, "write_file", session_id=session_id, path="index.html", content=marker)
            )
            # Detached, so it outlives the command that started it.
            structured(
                await call(
                    session,
                    "run_command",
                    session_id=session_id,
                    command=f"setsid python3 -m http.server {PORT} >/dev/null 2>&1 </dev/null &",
                )
            )
            entry, text = await listed_port(session, session_id, PORT)
            assert entry["program"] == "python3", entry
            assert f"{PORT} on 0.0.0.0 (python3, pid {entry['pid']})" in text, text

            share, text = readable(await call(session, "share_port", session_id=session_id, port=PORT, ttl_secs=600))
            assert share["url"] in text and share["id"] in text, text
            assert share["port"] == PORT
            url = share["url"]
            assert url.startswith(service.url + "/p/"), url
            async with httpx2.AsyncClient(timeout=30) as http:
                page = await http.get(url)
                assert page.status_code == 200, page.text
                assert page.text == marker
                assert "set-cookie" not in page.headers

                listed = structured(await call(session, "list_shares", session_id=session_id))["shares"]
                assert [s["id"] for s in listed] == [share["id"]]
                assert "url" not in listed[0] and "path" not in listed[0]

                structured(await call(session, "revoke_share", session_id=session_id, share_id=share["id"]))
                assert (await http.get(url)).status_code == 404

            again = error_text(await call(session, "revoke_share", session_id=session_id, share_id=share["id"]))
            assert "not_found" in again and "/v1" not in again, again
            bad = error_text(await call(session, "share_port", session_id=session_id, port=PORT, ttl_secs=99999))
            assert "invalid_request" in bad and "ttl_secs" in bad, bad
        finally:
            structured(await call(session, "close_session", session_id=session_id))
        gone = error_text(await call(session, "list_ports", session_id=session_id))
        assert "list_sessions" in gone or "open_session" in gone, gone
