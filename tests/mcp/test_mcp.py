"""sandboxd's MCP server driven by the official MCP Python SDK, over streamable HTTP (the
service's /mcp) and over stdio (`sandboxd mcp` launched as a subprocess), against a real
service with real sandboxes."""

import json
import logging
import re
from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from conftest import MAX_SESSIONS, SANDBOXD

pytestmark = pytest.mark.anyio

TOOLS = {
    "list_runtimes",
    "open_session",
    "list_sessions",
    "close_session",
    "kill_all_processes",
    "run_command",
    "run_code",
    "write_file",
    "read_file",
    "list_directory",
    "pause_session",
    "resume_session",
    "snapshot_session",
    "list_snapshots",
    "delete_snapshot",
    "open_from_snapshot",
    "fork_session",
    "list_ports",
    "share_port",
    "list_shares",
    "revoke_share",
    "get_network",
    "set_network",
    "list_volumes",
}

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@asynccontextmanager
async def connect(service, transport, token=None):
    """An initialized MCP session with sandboxd over `transport`."""
    token = token or service.token
    if transport == "http":
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx2.Timeout(30, read=120),
        ) as http:
            async with streamable_http_client(f"{service.url}/mcp", http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    yield session, await session.initialize()
    else:
        server = StdioServerParameters(
            command=str(SANDBOXD),
            args=["mcp", "--url", service.url, "--token", token],
        )
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                yield session, await session.initialize()


def structured(result):
    """A tool's structured answer, failing the test with its text when it was an error. A
    command's output is in its text only: its answer comes with `stdout` and `stderr` read
    from there."""
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None, result.content
    assert len(result.content) == 1, result.content
    text = result.content[0].text
    if "exit_code" in result.structured_content:
        # A command's result reads as text: how it ended, then its output as it was written;
        # the structured content holds the facts, not a second copy of the output.
        assert text.startswith(("exit code", "killed by signal")), text
        assert not {"stdout", "stderr"} & set(result.structured_content), result.structured_content
        return {**result.structured_content, **output(result)}
    # Other results are the same JSON, indented, for clients that read only text.
    assert json.loads(text) == result.structured_content
    return result.structured_content


STREAM_HEADING = re.compile(r"^--- (stdout|stderr): (\d+) bytes[^\n]* ---\n", re.M)
SECTION_HEADING = re.compile(r"^--- (?:(?:stdout|stderr): \d+ bytes[^\n]*|result|display|error: [^\n]*) ---\n", re.M)


def output(result):
    """A command's or a code run's streams as its text shows them, each under a heading whose
    byte count is the structured content's."""
    text = result.content[0].text
    streams = {"stdout": "", "stderr": ""}
    for heading in STREAM_HEADING.finditer(text):
        name, written = heading.group(1), int(heading.group(2))
        assert written == result.structured_content[f"{name}_bytes"], (text, result.structured_content)
        following = SECTION_HEADING.search(text, heading.end())
        streams[name] = text[heading.end() : following.start() if following else len(text)]
    return streams


def error_text(result):
    assert result.is_error, result
    return result.content[0].text


def sse_messages(text):
    """The JSON-RPC messages of a Server-Sent Events answer."""
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]


async def call(session, tool, **arguments):
    return await session.call_tool(tool, arguments)


def activity(service, session_id):
    response = httpx2.get(
        f"{service.url}/v1/sessions/{session_id}/activity",
        headers={"Authorization": f"Bearer {service.token}"},
    )
    assert response.status_code == 200, response.text
    return response.json()["entries"]


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_open_write_run_read_list_close(service, transport):
    async with connect(service, transport) as (session, init):
        assert init.server_info.name == "sandboxd"
        assert "open_session" in (init.instructions or "")

        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert len(tool.description) > 40, tool.name
            assert tool.title, tool.name
            # Portable schemas: no type arrays (nullable results are one-type anyOf branches).
            assert '"type": [' not in json.dumps([tool.input_schema, tool.output_schema]), tool.name
            assert tool.input_schema["type"] == "object", tool.name
        run_command = tools["run_command"]
        assert set(run_command.input_schema["required"]) == {"session_id", "command"}
        assert "&&" in run_command.description and "cd" in run_command.description
        assert {"exit_code", "stdout_bytes", "stderr_bytes", "timed_out", "stdout_truncated"} <= set(
            run_command.output_schema["properties"]
        )

        runtimes = structured(await call(session, "list_runtimes"))
        python = next(r for r in runtimes["runtimes"] if r["name"] == "python")
        assert python["interpreter"] == ["python3"]

        opened = structured(await call(session, "open_session", runtime="python", tenant="mcp-tests"))
        session_id = opened["id"]
        assert opened["runtime"] == "python" and opened["state"] == "running"
        listed = structured(await call(session, "list_sessions"))
        assert session_id in [s["id"] for s in listed["sessions"]]

        program = (
            "import sys\n"
            "with open('results/out.txt', 'w') as f:\n"
            "    f.write('sum=%d\\n' % sum(range(10)))\n"
            "print('written')\n"
            "print('a warning', file=sys.stderr)\n"
        )
        written = structured(await call(session, "write_file", session_id=session_id, path="main.py", content=program))
        assert written["bytes"] == len(program.encode())

        ran = structured(
            await call(session, "run_command", session_id=session_id, command="mkdir -p results && python3 main.py")
        )
        assert ran["exit_code"] == 0, ran
        assert ran["stdout"] == "written\n"
        assert ran["stderr"] == "a warning\n"
        assert ran["timed_out"] is False and ran["stdout_truncated"] is False

        assert (await call(session, "read_file", session_id=session_id, path="results/out.txt")).content[
            0
        ].text == "sum=45\n"

        listing = structured(await call(session, "list_directory", session_id=session_id))
        entries = {e["name"]: e for e in listing["entries"]}
        assert entries["main.py"]["type"] == "file" and entries["main.py"]["size"] == len(program.encode())
        assert entries["results"]["type"] == "dir"

        code = structured(
            await call(session, "run_code", session_id=session_id, code="import os\nprint(6 * 7, os.getcwd())")
        )
        assert code["exit_code"] == 0, code
        assert code["stdout"] == "42 /workspace\n"

        failed = structured(await call(session, "run_command", session_id=session_id, command="exit 3"))
        assert failed["exit_code"] == 3, "a failing command is a result, not a tool error"

        # A detached leftover (out of its command's reach) is killed; the session carries on.
        detached = "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo started"
        assert structured(await call(session, "run_command", session_id=session_id, command=detached))[
            "stdout"
        ] == "started\n"
        killed = structured(await call(session, "kill_all_processes", session_id=session_id))
        assert killed["killed"] >= 1 and killed["remaining"] == 0, killed
        left = structured(
            await call(session, "run_command", session_id=session_id, command="cat /proc/[0-9]*/stat 2>/dev/null | grep -c '(sleep) [^Z]' || true")
        )
        assert left["stdout"] == "0\n", left  # a killed sleep not yet reaped is a zombie (Z)

        closed = structured(await call(session, "close_session", session_id=session_id))
        assert closed["state"] == "ended"

    entries = activity(service, session_id)
    actions = {e["action"] for e in entries}
    assert {"open", "write_file", "exec", "read_file", "list_files", "process_kill_all", "close"} <= actions, entries
    assert {e["interface"] for e in entries} == {"mcp"}, entries


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_errors_are_tool_errors_an_agent_can_act_on(service, transport):
    async with connect(service, transport) as (session, _):
        unknown = error_text(await call(session, "open_session", runtime="cobol"))
        assert "unknown_runtime" in unknown and "python" in unknown and "sh" in unknown
        assert "list_runtimes" in unknown and "/v1" not in unknown

        session_id = structured(await call(session, "open_session"))["id"]
        try:
            slow = structured(
                await call(session, "run_command", session_id=session_id, command="sleep 30", timeout_secs=1)
            )
            assert slow["timed_out"] is True
            assert slow["exit_code"] is None and slow["signal"] == 9

            too_long = error_text(
                await call(session, "run_command", session_id=session_id, command="true", timeout_secs=3600)
            )
            assert "timeout_too_large" in too_long and "60" in too_long and "/v1" not in too_long

            missing = error_text(await call(session, "read_file", session_id=session_id, path="nope.txt"))
            assert "not_found" in missing

            no_interpreter = error_text(await call(session, "run_code", session_id=session_id, code="echo hi"))
            assert "run_command" in no_interpreter
        finally:
            structured(await call(session, "close_session", session_id=session_id))

        ended = error_text(await call(session, "run_command", session_id=session_id, command="true"))
        assert "session_ended" in ended and "open_session" in ended and "/v1" not in ended
        gone = error_text(await call(session, "close_session", session_id="no-such-session"))
        assert "not_found" in gone and "list_sessions" in gone and "/v1" not in gone

        # The connection survived every error.
        assert TOOLS == {tool.name for tool in (await session.list_tools()).tools}


async def test_a_full_service_says_so(service):
    async with connect(service, "http") as (session, _):
        opened = []
        try:
            while True:
                result = await call(session, "open_session", runtime="sh")
                if result.is_error:
                    break
                opened.append(structured(result)["id"])
                assert len(opened) <= MAX_SESSIONS, "the service let more sessions open than allowed"
            full = error_text(result)
            assert len(opened) == MAX_SESSIONS, full
            assert "service_full" in full and "close_session" in full and "/v1" not in full
        finally:
            for session_id in opened:
                structured(await call(session, "close_session", session_id=session_id))


async def test_http_refuses_a_wrong_token(service):
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}):
        # A connection of its own each: the service may close one whose body it did not read.
        async with httpx2.AsyncClient() as http:
            response = await http.post(f"{service.url}/mcp", json=INITIALIZE, headers=MCP_HEADERS | headers)
            assert response.status_code == 401
            assert response.json()["error"]["code"] == "unauthorized"
    # The SDK's client, refused at its first request, ends with the server's error and nothing
    # else (not a connection failure, not a timeout).
    with pytest.raises(BaseExceptionGroup) as caught:
        async with connect(service, "http", token="wrong-token-0123456789"):
            pass
    leaves = leaf_exceptions(caught.value)
    assert [type(leaf) for leaf in leaves] == [MCPError], leaves
    assert "error response" in str(leaves[0]), leaves


def leaf_exceptions(error):
    """The exceptions an exception group holds, however deeply nested."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaf_exceptions(inner)]
    return [error]


async def test_stdio_with_a_wrong_token_says_so_on_each_call(service):
    async with connect(service, "stdio", token="wrong-token-0123456789") as (session, _):
        text = error_text(await call(session, "list_runtimes"))
        assert "unauthorized" in text and "SANDBOXD_TOKEN" in text


async def test_http_answers_the_hosts_the_service_answers(service):
    port = service.url.rsplit(":", 1)[1]
    auth = {"Authorization": f"Bearer {service.token}"}
    async with httpx2.AsyncClient() as http:
        # An IP address the service answers to, beyond rmcp's own loopback list.
        response = await http.post(
            f"{service.url}/mcp", json=INITIALIZE, headers=MCP_HEADERS | auth | {"Host": f"127.0.0.2:{port}"}
        )
        assert response.status_code == 200, response.text
        assert sse_messages(response.text)[0]["result"]["serverInfo"]["name"] == "sandboxd"
        # A name it does not answer to (DNS rebinding) is refused by the service's guard.
        response = await http.post(
            f"{service.url}/mcp", json=INITIALIZE, headers=MCP_HEADERS | auth | {"Host": f"evil.example:{port}"}
        )
        assert response.status_code == 403


async def test_ending_a_session_is_answered_as_the_sdk_expects(service, caplog):
    """The SDK ends its MCP session with DELETE /mcp when it closes: the answer is one it takes
    as done (it logs "Session termination failed: 202" for rmcp's 202), and the session is gone."""
    caplog.set_level(logging.DEBUG, logger="mcp.client.streamable_http")
    answers = []

    async def note(response):
        answers.append((response.request.method, response.status_code, response.headers.get("mcp-session-id")))

    auth = {"Authorization": f"Bearer {service.token}"}
    async with httpx2.AsyncClient(headers=auth, timeout=30, event_hooks={"response": [note]}) as http:
        async with streamable_http_client(f"{service.url}/mcp", http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                assert (await session.list_tools()).tools
        ended = [(status, sid) for method, status, sid in answers if method == "DELETE"]
        assert len(ended) == 1, answers
        assert ended[0][0] == 204, answers
        assert "Session termination failed" not in caplog.text, caplog.text
        session_id = next(sid for method, _, sid in answers if method == "POST" and sid)
        after = await http.post(
            f"{service.url}/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers=MCP_HEADERS | {"mcp-session-id": session_id, "mcp-protocol-version": "2025-06-18"},
        )
        assert after.status_code == 404, after.text


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_pause_snapshot_open_and_fork(service, transport):
    async with connect(service, transport) as (session, _):
        opened = structured(await call(session, "open_session"))
        sid = opened["id"]
        opened_ids = [sid]
        try:
            structured(await call(session, "write_file", session_id=sid, path="kept.txt", content="kept"))
            paused = structured(await call(session, "pause_session", session_id=sid))
            assert paused["state"] == "paused"
            # Any tool resumes it first.
            ran = structured(await call(session, "run_command", session_id=sid, command="cat kept.txt"))
            assert ran["stdout"] == "kept\n"  # the text ends each stream with a line break
            assert structured(await call(session, "resume_session", session_id=sid))["state"] == "running"

            snapshot = structured(await call(session, "snapshot_session", session_id=sid, name="mcp"))
            listed = structured(await call(session, "list_snapshots"))
            assert snapshot["id"] in [s["id"] for s in listed["snapshots"]]
            copy = structured(
                await call(session, "open_from_snapshot", snapshot_id=snapshot["id"], labels={"via": "mcp"})
            )
            opened_ids.append(copy["id"])
            assert copy["labels"]["via"] == "mcp"
            read = await call(session, "read_file", session_id=copy["id"], path="kept.txt")
            assert read.content[0].text == "kept", read
            structured(await call(session, "delete_snapshot", snapshot_id=snapshot["id"]))

            forked = structured(await call(session, "fork_session", session_id=sid, count=2))
            opened_ids += [s["id"] for s in forked["sessions"]]
            assert len(forked["sessions"]) == 2
            # The service holds 4 sessions: a fork of one more is refused whole.
            assert "service_full" in error_text(await call(session, "fork_session", session_id=sid, count=1))
        finally:
            for opened_id in opened_ids:
                await call(session, "close_session", session_id=opened_id)
