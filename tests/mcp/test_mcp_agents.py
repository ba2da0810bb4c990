"""What an agent relies on from sandboxd's MCP server, driven by the official MCP Python SDK
against a real service with real sandboxes: output sized for a model, cancellation that kills
the command, progress, strict and accurate schemas, OOM reports, body limits, and the
origins a browser tool may call from."""

import json
import time

import anyio
import httpx2
import jsonschema
import pytest
from mcp.shared.exceptions import MCPError as McpError

from conftest import INSPECTOR_ORIGIN, UPLOAD_CAP
from test_mcp import INITIALIZE, MCP_HEADERS, activity, call, connect, error_text, sse_messages, structured

pytestmark = pytest.mark.anyio

BUDGET = 24 << 10  # policy.mcp_output_bytes' default
OUTPUT_CAP = 1 << 20  # policy.max_output_bytes' default
SEQ_300000_BYTES = sum(len(str(n)) + 1 for n in range(1, 300_001))


async def open_session(session, runtime="sh"):
    return structured(await call(session, "open_session", runtime=runtime, tenant="mcp-tests"))["id"]


async def sh(session, session_id, command, **arguments):
    return structured(await call(session, "run_command", session_id=session_id, command=command, **arguments))


async def sleeps_left(session, session_id):
    """How many `sleep 30` processes run in the session (killed ones not yet reaped are zombies)."""
    ran = await sh(session, session_id, "cat /proc/[0-9]*/stat 2>/dev/null | grep -c '(sleep) [^Z]' || true")
    return int(ran["stdout"])


async def sleeps_come_to(session, session_id, count):
    # Generous for a loaded machine: on Kubernetes the end of the call reaches the agent
    # through the API server's port-forward, a few seconds later than on Docker.
    deadline = time.monotonic() + 10.0
    while True:
        left = await sleeps_left(session, session_id)
        if left == count or time.monotonic() > deadline:
            return left == count
        await anyio.sleep(0.1)


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_long_output_keeps_its_head_and_tail_within_the_budget(service, transport):
    async with connect(service, transport) as (session, _):
        session_id = await open_session(session)
        try:
            # About 2 MB on stdout, a little on stderr.
            result = await call(
                session,
                "run_command",
                session_id=session_id,
                command="seq 1 300000; echo the-error >&2",
            )
            ran = structured(result)
            # The service keeps the head and the real tail of each stream within its cap
            # (policy.max_output_bytes, 1 MiB), a line saying how much it left out between;
            # the answer counts what the command wrote and what was kept.
            assert ran["stdout_bytes"] == SEQ_300000_BYTES and ran["stdout_kept_bytes"] == OUTPUT_CAP, ran
            assert ran["stdout_truncated"] is True and ran["stdout_cut"] is True
            stdout = ran["stdout"]
            assert len(stdout) + len(ran["stderr"]) <= BUDGET + 1024, len(stdout)
            assert stdout.startswith("1\n2\n3\n") and stdout.endswith("299999\n300000\n")
            marker = next(line for line in stdout.splitlines() if line.startswith("[..."))
            assert "left out" in marker and ran["stdout_file"] in marker, marker
            assert f"wrote {SEQ_300000_BYTES} bytes" in marker and "only their first and last parts" in marker, marker
            assert ran["stderr"] == "the-error\n" and ran["stderr_cut"] is False
            # The text content reads as text, with real line breaks.
            text = result.content[0].text
            assert text.startswith("exit code 0"), text[:200]
            assert f"--- stdout: {SEQ_300000_BYTES} bytes; the service kept its first and last parts" in text
            # What the service kept is in the file the marker names: the head, the line saying
            # how much of the middle it left out, and the real last bytes.
            kept = await sh(session, session_id, f"wc -c < {ran['stdout_file']}; tail -c 14 {ran['stdout_file']}")
            assert kept["stdout"].split() == [str(OUTPUT_CAP), "299999", "300000"], kept
            left_out = await sh(session, session_id, f"grep -c 'bytes left out here' {ran['stdout_file']}; head -n 1 {ran['stdout_file']}")
            assert left_out["stdout"].split() == ["1", "1"], left_out
        finally:
            structured(await call(session, "close_session", session_id=session_id))


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_flood_of_output_costs_one_budget_and_reports_its_real_size(service, transport):
    """`seq 1 2000000` (14.9 MB): the answer, text and structured content together, stays
    within the budget (the output is not carried twice), and says how much was written."""
    async with connect(service, transport) as (session, _):
        session_id = await open_session(session)
        try:
            result = await call(session, "run_command", session_id=session_id, command="seq 1 2000000")
            ran = structured(result)
            written = sum(len(str(n)) + 1 for n in range(1, 2_000_001))
            assert ran["stdout_bytes"] == written and ran["stdout_kept_bytes"] == OUTPUT_CAP, ran
            answer = len(result.content[0].text.encode()) + len(json.dumps(result.structured_content))
            assert answer <= BUDGET + 2048, answer
            assert len(json.dumps(result.structured_content)) < 1024, result.structured_content
        finally:
            structured(await call(session, "close_session", session_id=session_id))


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_cancelled_or_timed_out_call_kills_its_command(service, transport):
    async with connect(service, transport) as (session, _):
        session_id = await open_session(session)
        try:
            # The caller cancels: the SDK sends notifications/cancelled.
            with anyio.move_on_after(1.5):
                await call(session, "run_command", session_id=session_id, command="sleep 30")
            assert await sleeps_come_to(session, session_id, 0), "sleep 30 still runs after the cancel"

            # The client's own timeout: the SDK gives up and cancels the request.
            with pytest.raises(McpError):
                await session.call_tool(
                    "run_command", {"session_id": session_id, "command": "sleep 30"}, read_timeout_seconds=1.5
                )
            assert await sleeps_come_to(session, session_id, 0), "sleep 30 still runs after the timeout"
        finally:
            structured(await call(session, "close_session", session_id=session_id))
    cancels = [e for e in activity(service, session_id) if e["action"] == "exec" and e["target"] == "sleep"]
    assert len(cancels) == 2 and all(e["status"] == "cancelled" for e in cancels), cancels
    assert all("agent" not in (e["error"] or "") for e in cancels), cancels


async def test_a_dropped_http_connection_kills_its_command(service):
    auth = {"Authorization": f"Bearer {service.token}"}
    async with connect(service, "http") as (session, _):
        session_id = await open_session(session)
        try:
            async with httpx2.AsyncClient(headers=MCP_HEADERS | auth, timeout=30) as http:
                opened = await http.post(f"{service.url}/mcp", json=INITIALIZE)
                mcp_session = opened.headers["mcp-session-id"]
                headers = {"mcp-session-id": mcp_session, "mcp-protocol-version": "2025-06-18"}
                await http.post(
                    f"{service.url}/mcp",
                    json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers=headers,
                )
                run = {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "run_command", "arguments": {"session_id": session_id, "command": "sleep 30"}},
                }
                async with http.stream("POST", f"{service.url}/mcp", json=run, headers=headers) as response:
                    assert response.status_code == 200
                    assert await sleeps_come_to(session, session_id, 1), "sleep 30 did not start"
                # Leaving the block closes the connection while the command runs.
            assert await sleeps_come_to(session, session_id, 0), "sleep 30 still runs after the disconnect"
        finally:
            structured(await call(session, "close_session", session_id=session_id))


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_long_command_reports_progress(service, transport):
    updates = []

    async def progress(done, total, message):
        updates.append((done, total, message))

    async with connect(service, transport) as (session, _):
        session_id = await open_session(session)
        try:
            result = await session.call_tool(
                "run_command",
                {
                    "session_id": session_id,
                    "command": "for i in 1 2 3 4 5; do echo step-$i; sleep 1; done; echo done",
                    "timeout_secs": 10,
                },
                progress_callback=progress,
            )
            assert structured(result)["stdout"].endswith("step-5\ndone\n")
        finally:
            structured(await call(session, "close_session", session_id=session_id))
    assert len(updates) >= 3, updates
    assert [u[0] for u in updates] == sorted(u[0] for u in updates), updates
    assert all(u[1] == 10 and "running for" in u[2] for u in updates), updates
    # A report carries the newest output (over stdio too, where the bridge reads the REST
    # exec as a stream): the steps printed so far, while the command still runs.
    shown = [u[2].rsplit("\n", 1)[-1] for u in updates if "output so far ends with:" in u[2]]
    assert any(line in ("step-1", "step-2", "step-3", "step-4") for line in shown), updates
    assert len(set(shown)) >= 2, updates


async def test_stdio_and_http_answer_a_command_alike(service):
    """The bridge over stdio (REST, streamed) and the service's own /mcp (the core in process)
    run the same command to the same result: output cut at the same places, the same exit."""
    command = "for i in 1 2 3; do echo out-$i; echo err-$i >&2; sleep 1; done; seq 1 200000; exit 7"
    answers = {}
    for transport in ("http", "stdio"):
        async with connect(service, transport) as (session, _):
            session_id = await open_session(session)
            try:
                answers[transport] = await sh(session, session_id, command)
            finally:
                structured(await call(session, "close_session", session_id=session_id))
    http, stdio = answers["http"], answers["stdio"]
    assert http["exit_code"] == 7 and http["stdout"].startswith("out-1\nout-2\nout-3\n1\n"), http
    assert http["stdout_truncated"] is True and "left out here" in http["stdout"], http
    assert {k: v for k, v in http.items() if k != "duration_ms"} == {k: v for k, v in stdio.items() if k != "duration_ms"}


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_unknown_arguments_are_refused_naming_the_accepted_ones(service, transport):
    async def refusal(tool, **arguments):
        try:
            result = await call(session, tool, **arguments)
        except McpError as error:
            return str(error)
        return error_text(result)

    async with connect(service, transport) as (session, _):
        started = time.monotonic()
        message = await refusal("run_command", session_id="x", command="sleep 4", timeout=1)
        assert time.monotonic() - started < 2, "the command ran"
        assert "unknown field `timeout`" in message and "timeout_secs" in message and "session_id" in message, message
        assert "unknown field `verbose`" in await refusal("list_runtimes", verbose=True)


async def test_every_schema_matches_what_the_tool_takes_and_returns(service):
    async with connect(service, "http") as (session, _):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "{" not in "".join(t.description for t in tools.values()), "a limit was left unfilled"
        run_command = tools["run_command"].description
        assert "20 s" in run_command and "60 s" in run_command and str(BUDGET) in run_command
        assert str(UPLOAD_CAP) in tools["write_file"].description
        assert tools["run_command"].input_schema["properties"]["timeout_secs"]["minimum"] == 1

        checked = set()

        async def check(tool, arguments):
            schema = tools[tool]
            jsonschema.validate(arguments, schema.input_schema)
            result = await call(session, tool, **arguments)
            assert not result.is_error, result.content[0].text
            if schema.output_schema is not None:
                jsonschema.validate(result.structured_content, schema.output_schema)
            checked.add(tool)
            if schema.output_schema is not None and "exit_code" in result.structured_content:
                return structured(result)
            return result.structured_content

        await check("list_runtimes", {})
        opened = await check(
            "open_session", {"runtime": "python", "tenant": "mcp-tests", "labels": {"purpose": "schemas"}}
        )
        session_id = opened["id"]
        assert opened["labels"] == {"purpose": "schemas"}
        try:
            await check("list_sessions", {"include_ended": True})
            await check("write_file", {"session_id": session_id, "path": "d/a.txt", "content": "hi\n"})
            await check("read_file", {"session_id": session_id, "path": "d/a.txt"})
            await check("list_directory", {"session_id": session_id, "path": "d"})
            ran = await check(
                "run_command",
                {
                    "session_id": session_id,
                    "command": "echo $GREETING; pwd; cat",
                    "cwd": "d",
                    "env": {"GREETING": "hello"},
                    "stdin": "in\n",
                    "timeout_secs": 5,
                },
            )
            assert ran["stdout"] == "hello\n/workspace/d\nin\n", ran
            code = await check(
                "run_code",
                {"session_id": session_id, "code": "import os\nprint(os.environ['X'], os.getcwd())", "env": {"X": "1"}, "cwd": "d"},
            )
            assert code["stdout"] == "1 /workspace/d\n", code
            await check("kill_all_processes", {"session_id": session_id})
            await check("pause_session", {"session_id": session_id})
            await check("resume_session", {"session_id": session_id})
            snapshot = await check("snapshot_session", {"session_id": session_id, "name": "schemas"})
            await check("list_snapshots", {})
            copy = await check("open_from_snapshot", {"snapshot_id": snapshot["id"], "labels": {"copy": "yes"}})
            await check("close_session", {"session_id": copy["id"]})
            await check("delete_snapshot", {"snapshot_id": snapshot["id"]})
            forked = await check("fork_session", {"session_id": session_id, "count": 1})
            for fork in forked["sessions"]:
                await call(session, "close_session", session_id=fork["id"])
            await check("list_volumes", {})
            await check("list_ports", {"session_id": session_id})
            share = await check("share_port", {"session_id": session_id, "port": 8000, "ttl_secs": 60})
            await check("list_shares", {"session_id": session_id})
            await check("revoke_share", {"session_id": session_id, "share_id": share["id"]})
            # The network tools need an egress runtime, and computer a desktop, which this
            # suite's service has not: their arguments are checked, and the answer says why
            # (test_mcp_computer checks computer's answers against its output schema).
            for tool, arguments, why in [
                ("get_network", {"session_id": session_id}, "egress"),
                ("set_network", {"session_id": session_id, "egress": []}, "egress"),
                ("computer", {"session_id": session_id, "action": "click", "x": 1, "y": 2, "screenshot": True}, "no_desktop"),
            ]:
                jsonschema.validate(arguments, tools[tool].input_schema)
                refused = await call(session, tool, **arguments)
                assert refused.is_error and why in refused.content[0].text, refused
                checked.add(tool)
        finally:
            await check("close_session", {"session_id": session_id})
        assert checked == set(tools), set(tools) - checked

        # The other lists answer, empty, rather than "method not found".
        assert (await session.list_resources()).resources == []
        assert (await session.list_resource_templates()).resource_templates == []
        assert (await session.list_prompts()).prompts == []
        await session.set_logging_level("info")


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_an_oom_kill_under_sh_is_reported(service, transport):
    async with connect(service, transport) as (session, _):
        session_id = await open_session(session, runtime="python")
        try:
            # python3 dies (256m runtime); the shell around it goes on and exits 0.
            bomb = "python3 -c 'b = bytearray(600 << 20)'; echo after"
            ran = await sh(session, session_id, bomb)
            assert ran["oom_killed"] is True and ran["stdout"] == "after\n", ran
            assert ran["exit_code"] == 0
            calm = await sh(session, session_id, "echo calm")
            assert calm["oom_killed"] is False
            # The REST API reports it the same way.
            rest = httpx2.post(
                f"{service.url}/v1/sessions/{session_id}/exec",
                json={"command": bomb},
                headers={"Authorization": f"Bearer {service.token}"},
                timeout=60,
            )
            assert rest.status_code == 200 and rest.json()["oom_killed"] is True, rest.text
            # And so does a background process's record.
            if transport == "http":
                auth = {"Authorization": f"Bearer {service.token}"}
                started = httpx2.post(
                    f"{service.url}/v1/sessions/{session_id}/processes", json={"command": bomb}, headers=auth
                )
                assert started.status_code == 201, started.text
                process = f"{service.url}/v1/sessions/{session_id}/processes/{started.json()['id']}"
                deadline = time.monotonic() + 30
                while (info := httpx2.get(process, headers=auth).json())["state"] == "running":
                    assert time.monotonic() < deadline, info
                    time.sleep(0.2)
                assert info["oom_killed"] is True and info["exit_code"] == 0, info
        finally:
            structured(await call(session, "close_session", session_id=session_id))


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_request_over_the_upload_cap_is_a_json_rpc_error_naming_it(service, transport):
    async with connect(service, transport) as (session, _):
        session_id = await open_session(session)
        try:
            with pytest.raises(McpError) as refused:
                await call(session, "write_file", session_id=session_id, path="big.txt", content="x" * (6 << 20))
            message = str(refused.value)
            assert str(UPLOAD_CAP) in message and "max_upload_bytes" in message, message
            # The connection serves on, and nothing was written.
            listing = structured(await call(session, "list_directory", session_id=session_id))
            assert "big.txt" not in [e["name"] for e in listing["entries"]]
        finally:
            structured(await call(session, "close_session", session_id=session_id))


async def test_the_inspectors_origin_may_call_mcp_and_nothing_else(service):
    auth = {"Authorization": f"Bearer {service.token}"}
    async with httpx2.AsyncClient(timeout=30) as http:
        preflight = await http.options(
            f"{service.url}/mcp",
            headers={
                "Origin": INSPECTOR_ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
            },
        )
        assert preflight.status_code == 200, preflight.text
        assert preflight.headers["access-control-allow-origin"] == INSPECTOR_ORIGIN
        assert "authorization" in preflight.headers["access-control-allow-headers"].lower()

        allowed = await http.post(
            f"{service.url}/mcp", json=INITIALIZE, headers=MCP_HEADERS | auth | {"Origin": INSPECTOR_ORIGIN}
        )
        assert allowed.status_code == 200, allowed.text
        assert allowed.headers["access-control-allow-origin"] == INSPECTOR_ORIGIN
        assert sse_messages(allowed.text)[0]["result"]["serverInfo"]["name"] == "sandboxd"
        assert "mcp-session-id" in allowed.headers["access-control-expose-headers"].lower()

        other = await http.post(
            f"{service.url}/mcp", json=INITIALIZE, headers=MCP_HEADERS | auth | {"Origin": "http://localhost:9999"}
        )
        assert other.status_code == 403 and other.json()["error"]["code"] == "forbidden_origin"
        # The REST API stays closed to that origin.
        rest = await http.get(f"{service.url}/v1/sessions", headers=auth | {"Origin": INSPECTOR_ORIGIN})
        assert rest.status_code == 403, rest.text
