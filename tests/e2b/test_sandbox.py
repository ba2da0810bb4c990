"""The official E2B Python SDK, unchanged, against sandboxd: sandboxes (sessions), their
metadata, env vars, timeout, reconnection, tenants, and what sandboxd does not offer
(pausing and snapshots: test_pause.py)."""

import datetime

import pytest
from e2b import (
    AuthenticationException,
    InvalidArgumentException,
    NotFoundException,
    Sandbox,
    SandboxException,
    SandboxQuery,
)


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def test_create_info_list_set_timeout_connect_kill(e2b):
    box = Sandbox.create(metadata={"suite": "e2b", "case": "lifecycle"}, timeout=120)
    try:
        info = box.get_info()
        assert info.sandbox_id == box.sandbox_id
        assert info.metadata == {"suite": "e2b", "case": "lifecycle"}
        assert info.template_id == "python"
        # The timeout is the session's idle expiry: it ends 120 s after its last activity.
        assert abs((info.end_at - now()).total_seconds() - 120) < 15

        listed = Sandbox.list(query=SandboxQuery(metadata={"case": "lifecycle"})).next_items()
        assert [s.sandbox_id for s in listed] == [box.sandbox_id]
        assert Sandbox.list(query=SandboxQuery(metadata={"case": "none"})).next_items() == []

        box.set_timeout(600)
        assert abs((box.get_info().end_at - now()).total_seconds() - 600) < 15

        again = Sandbox.connect(box.sandbox_id)
        assert again.commands.run("echo reconnected").stdout == "reconnected\n"
        assert again.is_running()
    finally:
        assert box.kill() is True
    with pytest.raises(NotFoundException):
        Sandbox.get_info(box.sandbox_id)
    assert Sandbox.kill(box.sandbox_id) is False
    assert not box.is_running()


def test_a_timeout_over_the_policy_is_refused_not_cut(e2b):
    with pytest.raises(SandboxException, match="idle_timeout_secs"):
        Sandbox.create(timeout=86_400)


def test_env_vars_reach_every_command_under_its_own(e2b):
    box = Sandbox.create(envs={"GREETING": "hello", "OTHER": "x"})
    try:
        assert box.commands.run("echo $GREETING $OTHER").stdout == "hello x\n"
        assert box.commands.run("echo $GREETING", envs={"GREETING": "own"}).stdout == "own\n"
    finally:
        box.kill()


def test_a_template_names_a_runtime_and_base_the_default(e2b):
    box = Sandbox.create("base")
    try:
        assert box.get_info().template_id == "python"
    finally:
        box.kill()
    with pytest.raises(SandboxException, match=r'404: template "no-such-runtime" is neither.*templates: base, (net, )?python, sh'):
        Sandbox.create("no-such-runtime")


def test_commands_need_bash_and_busybox_says_so(e2b):
    box = Sandbox.create("sh")
    try:
        with pytest.raises(InvalidArgumentException, match="bash"):
            box.commands.run("true")
    finally:
        box.kill()


def test_a_tenant_sees_only_its_own_sandboxes(e2b):
    mine = Sandbox.create(api_key=e2b.tenant_a, metadata={"case": "tenants"})
    try:
        assert mine.commands.run("echo mine").stdout == "mine\n"
        with pytest.raises(NotFoundException):
            Sandbox.get_info(mine.sandbox_id, api_key=e2b.tenant_b)
        with pytest.raises(NotFoundException):
            Sandbox.connect(mine.sandbox_id, api_key=e2b.tenant_b)
        assert Sandbox.kill(mine.sandbox_id, api_key=e2b.tenant_b) is False
        theirs = Sandbox.list(api_key=e2b.tenant_b, query=SandboxQuery(metadata={"case": "tenants"}))
        assert theirs.next_items() == []
        ours = Sandbox.list(api_key=e2b.tenant_a, query=SandboxQuery(metadata={"case": "tenants"}))
        assert [s.sandbox_id for s in ours.next_items()] == [mine.sandbox_id]
        # The administrator sees it, as everywhere else.
        assert Sandbox.get_info(mine.sandbox_id).sandbox_id == mine.sandbox_id
    finally:
        assert mine.kill() is True


def test_a_wrong_key_or_access_token_is_refused(e2b, sandbox):
    with pytest.raises(AuthenticationException):
        Sandbox.list(api_key="e2b_" + "0" * 40).next_items()
    # Knowing a sandbox's id is not enough to reach its envd.
    stolen = Sandbox(
        sandbox_id=sandbox.sandbox_id,
        sandbox_domain=None,
        envd_version=sandbox._envd_version,
        envd_access_token="0" * 64,
        traffic_access_token=None,
        connection_config=_config_with_token(sandbox, "0" * 64),
    )
    with pytest.raises(AuthenticationException):
        stolen.commands.run("true")


def _config_with_token(sandbox, token):
    from e2b import ConnectionConfig

    return ConnectionConfig(
        extra_sandbox_headers={
            "E2b-Sandbox-Id": sandbox.sandbox_id,
            "E2b-Sandbox-Port": "49983",
            "X-Access-Token": token,
        }
    )


def test_the_activity_log_names_interface_e2b(e2b, sandbox):
    sandbox.commands.run("true")
    sandbox.files.write("logged.txt", "x")
    entries = e2b.activity(sandbox.sandbox_id)
    actions = {(e["interface"], e["action"]) for e in entries}
    assert ("e2b", "open") in actions
    assert ("e2b", "process_start") in actions
    assert ("e2b", "write_file") in actions
    assert all(e["principal"] == "admin" for e in entries if e["interface"] == "e2b")


def test_what_sandboxd_does_not_offer_is_a_clear_error(e2b, sandbox):
    with pytest.raises(SandboxException, match="not offered"):
        Sandbox.create(lifecycle={"on_timeout": "pause", "auto_resume": False})
    # The envd version reported makes the SDK itself refuse file metadata.
    with pytest.raises(SandboxException, match="metadata requires envd"):
        sandbox.files.write("meta.txt", "x", metadata={"k": "v"})


def test_connect_to_a_running_sandbox_only_extends_its_life(e2b):
    box = Sandbox.create(timeout=120)
    try:
        Sandbox.connect(box.sandbox_id, timeout=10)
        assert (box.get_info().end_at - now()).total_seconds() > 100, "connect(timeout=10) shortened it"
        Sandbox.connect(box.sandbox_id, timeout=300)
        assert (box.get_info().end_at - now()).total_seconds() > 280
    finally:
        box.kill()


def test_listing_is_newest_first_and_filters_by_template_and_start(e2b):
    started = now()
    boxes = [Sandbox.create(metadata={"case": "order"}) for _ in range(2)]
    try:
        query = SandboxQuery(metadata={"case": "order"})
        newest = Sandbox.list(query=query, limit=1)
        assert [s.sandbox_id for s in newest.next_items()] == [boxes[1].sandbox_id]
        assert newest.has_next
        assert [s.sandbox_id for s in newest.next_items()] == [boxes[0].sandbox_id]
        mine = SandboxQuery(metadata={"case": "order"}, template="python", started_after=started)
        assert len(Sandbox.list(query=mine).next_items()) == 2
        assert Sandbox.list(query=SandboxQuery(metadata={"case": "order"}, template="sh")).next_items() == []
        later = SandboxQuery(started_after=now() + datetime.timedelta(hours=1))
        assert Sandbox.list(query=later).next_items() == []
    finally:
        for box in boxes:
            box.kill()


def test_paging_with_limit_1_shows_each_sandbox_once_while_one_opens_between_pages(e2b):
    boxes = [Sandbox.create(metadata={"case": "cursor"}) for _ in range(3)]
    try:
        pages = Sandbox.list(query=SandboxQuery(metadata={"case": "cursor"}), limit=1)
        seen = [s.sandbox_id for s in pages.next_items()]
        # Newer than the page's cursor: with a position as the token, it shifted the next pages
        # and the first sandbox came again.
        boxes.append(Sandbox.create(metadata={"case": "cursor"}))
        while pages.has_next and len(seen) < 10:
            seen += [s.sandbox_id for s in pages.next_items()]
        assert seen == [boxes[2].sandbox_id, boxes[1].sandbox_id, boxes[0].sandbox_id], seen
    finally:
        for box in boxes:
            box.kill()


def test_old_sdk_defaults_open_a_sandbox_with_the_runtimes_own_network(e2b):
    # What releases up to 2.50 send on every create, on a runtime without network.
    box = Sandbox.create("python", allow_internet_access=True)
    try:
        assert box.commands.run("echo open").stdout == "open\n"
        assert box.get_info().allow_internet_access is False
    finally:
        box.kill()
