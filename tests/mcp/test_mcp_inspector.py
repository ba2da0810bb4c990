"""The MCP Inspector's command line (tests/mcp/package-lock.json pins it, with the Node 22 it
needs) against the service's /mcp: its `--strict` check of every tool's schemas finds nothing
to report, so clients that validate schemas strictly take our tools as they are."""

import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
INSPECTOR = HERE / "node_modules" / "@modelcontextprotocol" / "inspector"
NODE = HERE / "node_modules" / ".bin" / "node"


def inspector(service, *args: str) -> subprocess.CompletedProcess:
    assert NODE.exists() and INSPECTOR.is_dir(), "run `npm ci` in tests/mcp first (scripts/test.sh does)"
    version = json.loads((INSPECTOR / "package.json").read_text())["version"]
    assert version == "2.12.0", f"the Inspector is {version}, not what package-lock.json pins: run `npm ci`"
    return subprocess.run(
        [str(NODE), str(HERE / "node_modules" / ".bin" / "mcp-inspector"), "--cli", *args,
         f"{service.url}/mcp", "--header", f"Authorization: Bearer {service.token}"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_inspectors_strict_mode_finds_no_portability_problem_in_any_tool(service):
    run = inspector(service, "--strict", "--format", "json", "--method", "tools/list")
    assert run.returncode == 0, run.stderr[-4000:]
    envelope = json.loads(run.stdout)
    assert envelope.get("schemaFindings") is None, json.dumps(envelope["schemaFindings"])[:4000]
    assert run.stderr.strip() == "", f"the strict check reported:\n{run.stderr[-4000:]}"
    tools = envelope["result"]["tools"]
    names = {tool["name"] for tool in tools}
    assert {"open_session", "run_command", "run_code", "read_file", "write_file", "close_session"} <= names
    assert all(tool.get("title") for tool in tools), [t["name"] for t in tools if not t.get("title")]


def test_the_inspector_calls_a_tool_and_reads_its_answer(service):
    run = inspector(service, "--method", "tools/call", "--tool-name", "list_runtimes")
    assert run.returncode == 0, run.stderr[-4000:]
    answer = json.loads(run.stdout)
    assert answer.get("isError") is not True, answer
    assert "python" in json.dumps(answer["content"])
