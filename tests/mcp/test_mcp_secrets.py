"""A secret used through MCP, with the official MCP Python SDK: a session opened by the
`open_session` tool on an egress runtime with secret `api` holds a placeholder, a call to the
secret's host through the service's proxy carries the real value, a call elsewhere carries the
placeholder only, and no tool's answer (nor the service's log) holds the value. The hosts are
the tests' own (tests/secret_hosts.py): nothing leaves the machine."""

import secrets

import pytest

from conftest import PYTHON_IMAGE, config, running_service
from secret_hosts import OTHER_HOST, SECRET_HOST, call_program, secret_host
from test_mcp import activity, call, connect, structured

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def secret_service():
    token = "mcp-secret-" + secrets.token_hex(16)
    with secret_host() as host:
        # The runtimes go before [policy]: TOML tables that follow it would belong to it otherwise.
        head, policy = config(token).split("[policy]", 1)
        with running_service(f"{head}{host.config(PYTHON_IMAGE)}\n[policy]{policy}", token, "mcp-secret") as running:
            yield running, host


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_a_secret_reaches_its_host_only_and_no_answer_holds_it(secret_service, transport):
    service, host = secret_service
    async with connect(service, transport) as (session, _):
        answers = []

        async def tool(name, **arguments):
            result = await call(session, name, **arguments)
            answers.append((name, "\n".join(c.text for c in result.content if hasattr(c, "text"))))
            return structured(result)

        session_id = (await tool("open_session", runtime="net"))["id"]
        try:
            placeholder = (await tool("run_command", session_id=session_id, command="printenv API_KEY"))["stdout"]
            placeholder = placeholder.strip()
            assert placeholder and placeholder != host.value, placeholder

            sent_before = len(host.received)
            ran = await tool("run_command", session_id=session_id, command=call_program(SECRET_HOST))
            assert ran["stdout"].strip() == f"200 hello {SECRET_HOST}", ran
            assert host.authorizations()[sent_before:] == [f"Bearer {host.value}"]

            # A host the secret is not for is passed through, never decrypted: it gets the
            # placeholder, worthless anywhere but through the proxy to the secret's host.
            ran = await tool("run_command", session_id=session_id, command=call_program(OTHER_HOST))
            assert ran["stdout"].strip() == f"200 hello {OTHER_HOST}", ran
            assert host.authorizations()[sent_before + 1 :] == [f"Bearer {placeholder}"]

            await tool("get_network", session_id=session_id)
            await tool("list_sessions")
            await tool("list_runtimes")
        finally:
            await tool("close_session", session_id=session_id)

        for name, text in answers:
            host.assert_clean(f"the answer of {name}", text)
        entries = activity(service, session_id)
        secret_entries = [e for e in entries if e["action"] == "egress.secret"]
        assert [e["target"] for e in secret_entries] == [f"{SECRET_HOST}:443 secret api"], entries
        host.assert_clean("the activity log", str(entries))
