"""A secret used through the E2B face, with the official e2b SDK unchanged: a sandbox created
from template `net` (an egress runtime with secret `api`) holds a placeholder, a command's call
to the secret's host through the service's proxy carries the real value, a call elsewhere the
placeholder only, and neither the SDK's answers nor the activity log hold the value. The hosts
are the tests' own (tests/secret_hosts.py): nothing leaves the machine. Egress runtimes are
Docker's: the Kubernetes rerun leaves this file out (scripts/test.sh)."""

import secrets

import pytest
from e2b import Sandbox

from conftest import PYTHON_IMAGE, E2b, config, sdk_env
from secret_hosts import OTHER_HOST, SECRET_HOST, call_program, secret_host


@pytest.fixture(scope="module")
def secret_e2b(start_service):
    """A service of its own whose `net` template has the secret, the SDK pointed at it while
    the module runs (the suite's shared service is given back after)."""
    keys = ["e2b_" + secrets.token_hex(20) for _ in range(3)]
    with secret_host() as host:
        with start_service(config(*keys, egress=host.config(PYTHON_IMAGE)), keys[0], "e2b-secret") as running:
            with sdk_env(running.url, keys[0]):
                yield E2b(running.url, keys[0], keys[1], keys[2], running.instance_id), host


def test_a_secret_reaches_its_host_only_and_no_answer_holds_it(secret_e2b):
    e2b, host = secret_e2b
    box = Sandbox.create("net")
    try:
        placeholder = box.commands.run("printenv API_KEY").stdout.strip()
        assert placeholder and placeholder != host.value, placeholder

        sent_before = len(host.received)
        ran = box.commands.run(call_program(SECRET_HOST))
        assert ran.stdout.strip() == f"200 hello {SECRET_HOST}", (ran.stdout, ran.stderr)
        assert host.authorizations()[sent_before:] == [f"Bearer {host.value}"]

        # A host the secret is not for is passed through, never decrypted: it gets the
        # placeholder, worthless anywhere but through the proxy to the secret's host.
        ran = box.commands.run(call_program(OTHER_HOST))
        assert ran.stdout.strip() == f"200 hello {OTHER_HOST}", (ran.stdout, ran.stderr)
        assert host.authorizations()[sent_before + 1 :] == [f"Bearer {placeholder}"]

        # What the SDK reads back about the sandbox, and the files it reads, hold no value.
        host.assert_clean("the sandbox's info", repr(Sandbox.get_info(box.sandbox_id)))
        host.assert_clean("the sandbox list", repr(Sandbox.list().next_items()))
        host.assert_clean("the sandbox's environment", box.commands.run("env").stdout)
    finally:
        box.kill()
    entries = e2b.activity(box.sandbox_id)
    assert [e["target"] for e in entries if e["action"] == "egress.secret"] == [f"{SECRET_HOST}:443 secret api"], entries
    host.assert_clean("the activity log", repr(entries))
