"""Pausing, resuming and snapshots through the official E2B Python SDK: a paused sandbox keeps
its files and its running processes and is listed as paused (on gVisor, its memory on disk);
connect resumes it; a sandbox
created with auto-pause pauses at its timeout instead of ending; a snapshot opens as a new
sandbox with the files and the environment of the one snapshotted, and a fork is independent
(on gVisor it carries the running processes)."""

import time

import pytest
from conftest import ISOLATION
from e2b import NotFoundException, Sandbox, SandboxException, SandboxQuery, SandboxState

COUNTER = "i=0; while true; do i=$((i+1)); echo $i > /tmp/count; sleep 0.2; done"


def counted(box) -> int:
    try:
        return int(box.files.read("/tmp/count").strip() or 0)
    except NotFoundException:
        return 0


def start_counter(box):
    """COUNTER in the background, once its first number is written."""
    counter = box.commands.run(COUNTER, background=True)
    assert still_counting(box, within=30), "the counter did not start"
    return counter


def still_counting(box, within: float) -> bool:
    """Whether the counter's number grows within WITHIN seconds: a deadline for a loaded machine
    where it should, a window of several of its 0.2 s ticks where it should not."""
    copied = counted(box)
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if counted(box) > copied:
            return True
    return False


def counts_on_where_memory_is_kept(box):
    """gVisor keeps the counter's process, which goes on; runc keeps its file only."""
    on_gvisor = ISOLATION == "gvisor"
    assert still_counting(box, within=30 if on_gvisor else 1.5) == on_gvisor, counted(box)


def states(case):
    listed = Sandbox.list(query=SandboxQuery(metadata={"case": case})).next_items()
    return {s.sandbox_id: s.state for s in listed}


def test_pause_then_connect_keeps_files_and_a_background_process(e2b):
    box = Sandbox.create(metadata={"case": "pause"})
    try:
        box.files.write("kept.txt", "written before the pause")
        counter = start_counter(box)
        assert box.pause() is True
        assert box.pause() is False, "pausing a paused sandbox says it already was"
        assert Sandbox.get_info(box.sandbox_id).state == SandboxState.PAUSED
        assert states("pause") == {box.sandbox_id: SandboxState.PAUSED}
        # On gVisor (the gvisor-e2b step) the pause went to disk, its RAM released.
        expected = "disk" if ISOLATION == "gvisor" else "ram"
        assert e2b.ours(f"/v1/sessions/{box.sandbox_id}")["paused_memory"] == expected
        paused = Sandbox.list(query=SandboxQuery(metadata={"case": "pause"}, state=[SandboxState.PAUSED]))
        assert [s.sandbox_id for s in paused.next_items()] == [box.sandbox_id]
        running = Sandbox.list(query=SandboxQuery(metadata={"case": "pause"}, state=[SandboxState.RUNNING]))
        assert running.next_items() == []

        again = Sandbox.connect(box.sandbox_id)
        assert again.get_info().state == SandboxState.RUNNING
        assert again.files.read("kept.txt") == "written before the pause"
        assert counter.pid in [p.pid for p in again.commands.list()]
        assert still_counting(again, within=30), "the process runs again after the resume"
        actions = [e["action"] for e in e2b.activity(box.sandbox_id) if e["interface"] == "e2b"]
        assert "pause" in actions and "resume" in actions, actions
    finally:
        box.kill()


def test_a_paused_sandbox_resumes_when_used(e2b):
    box = Sandbox.create(metadata={"case": "auto-resume"})
    try:
        box.files.write("kept.txt", "x")
        Sandbox.pause(box.sandbox_id)
        assert states("auto-resume") == {box.sandbox_id: SandboxState.PAUSED}
        # Any call to the sandbox's envd resumes it first.
        assert box.commands.run("cat kept.txt").stdout == "x"
        assert states("auto-resume") == {box.sandbox_id: SandboxState.RUNNING}
    finally:
        box.kill()


def test_auto_pause_pauses_at_the_timeout_instead_of_ending(e2b):
    box = Sandbox.create(metadata={"case": "auto-pause"}, timeout=2, lifecycle={"on_timeout": "pause"})
    try:
        box.files.write("kept.txt", "still here")
        deadline = time.monotonic() + 20
        while states("auto-pause").get(box.sandbox_id) != SandboxState.PAUSED:
            assert time.monotonic() < deadline, states("auto-pause")
            time.sleep(0.5)
        again = Sandbox.connect(box.sandbox_id, timeout=300)
        assert again.files.read("kept.txt") == "still here"
    finally:
        box.kill()
    # Without auto-pause the timeout ends the sandbox, as before.
    plain = Sandbox.create(timeout=2)
    deadline = time.monotonic() + 20
    while plain.is_running():
        assert time.monotonic() < deadline
        time.sleep(0.5)
    with pytest.raises(NotFoundException):
        Sandbox.connect(plain.sandbox_id)


def test_a_snapshot_opens_with_its_files_and_environment(e2b):
    box = Sandbox.create(envs={"FROM_CREATE": "kept"})
    try:
        box.files.write("notes/a.txt", "snapshotted")
        box.commands.run("printf '#!/bin/sh\\necho run\\n' > tool.sh && chmod 755 tool.sh && ln -s notes/a.txt link")
        start_counter(box)
        snapshot = box.create_snapshot(name="prepared")
        assert snapshot.names == ["prepared"]
        listed = Sandbox.list_snapshots(sandbox_id=box.sandbox_id).next_items()
        assert [s.snapshot_id for s in listed] == [snapshot.snapshot_id]
        assert [s.snapshot_id for s in Sandbox.list_snapshots(name="prepared").next_items()] == [snapshot.snapshot_id]
        box.files.write("notes/a.txt", "changed after the snapshot")
    finally:
        box.kill()

    opened = Sandbox.create(snapshot.snapshot_id, envs={"OWN": "also"})
    try:
        assert opened.get_info().template_id == "python"
        assert opened.files.read("notes/a.txt") == "snapshotted"
        ran = opened.commands.run("./tool.sh; readlink link; echo $FROM_CREATE $OWN")
        assert ran.stdout == "run\nnotes/a.txt\nkept also\n"
        # On gVisor the snapshot kept the running counter, which goes on in the new sandbox.
        counts_on_where_memory_is_kept(opened)
    finally:
        opened.kill()
    assert Sandbox.delete_snapshot(snapshot.snapshot_id) is True
    assert Sandbox.delete_snapshot(snapshot.snapshot_id) is False
    assert Sandbox.list_snapshots(name="prepared").next_items() == []


def test_a_tenant_cannot_see_or_open_another_tenants_snapshot(e2b):
    box = Sandbox.create(api_key=e2b.tenant_a)
    try:
        snapshot = box.create_snapshot()
    finally:
        box.kill()
    try:
        assert Sandbox.list_snapshots(api_key=e2b.tenant_b).next_items() == []
        # Answered as for an id nobody made: the snapshot's existence does not show.
        refusals = []
        for unknown in (snapshot.snapshot_id, "0" * len(snapshot.snapshot_id)):
            with pytest.raises(SandboxException, match=r"^404: template ") as caught:
                Sandbox.create(unknown, api_key=e2b.tenant_b)
            refusals.append(str(caught.value).replace(unknown, "ID"))
        assert refusals[0] == refusals[1], refusals
        assert "nor a snapshot of yours" in refusals[0], refusals
        assert Sandbox.delete_snapshot(snapshot.snapshot_id, api_key=e2b.tenant_b) is False
    finally:
        assert Sandbox.delete_snapshot(snapshot.snapshot_id, api_key=e2b.tenant_a) is True


def test_a_fork_has_the_files_and_environment_and_is_independent(e2b):
    box = Sandbox.create(envs={"FROM_CREATE": "forked"})
    try:
        box.files.write("state.txt", "before the fork")
        start_counter(box)
        (fork,) = box.fork(count=1, timeout=300)
        try:
            assert fork.sandbox_id != box.sandbox_id
            assert fork.files.read("state.txt") == "before the fork"
            assert fork.commands.run("echo $FROM_CREATE").stdout == "forked\n"
            # On gVisor the fork carries the running counter, which goes on from its number
            # in the copy; on runc only its file came along, and nothing counts there.
            assert fork.files.exists("/tmp/count")
            counts_on_where_memory_is_kept(fork)
            fork.files.write("state.txt", "the fork's own")
            assert box.files.read("state.txt") == "before the fork"
        finally:
            fork.kill()
        assert Sandbox.list_snapshots(sandbox_id=box.sandbox_id).next_items() == [], "the fork's snapshot is gone"
    finally:
        box.kill()


def test_a_pause_that_would_drop_memory_is_refused(e2b, sandbox):
    for options in [{"keep_memory": False}, {"mode": "filesystem"}, {"strict": True}]:
        with pytest.raises(SandboxException, match="not offered"):
            sandbox.pause(**options)
    assert sandbox.get_info().state == SandboxState.RUNNING
    with pytest.raises(SandboxException, match="autoPauseMemory false.* not offered"):
        Sandbox.create(lifecycle={"on_timeout": {"action": "pause", "mode": "filesystem"}})


def test_a_full_snapshot_keeps_the_memory_where_the_template_can(e2b, sandbox):
    """`mode="full"` asks for the processes: a gVisor template keeps them, runc says why not."""
    if ISOLATION != "gvisor":
        with pytest.raises(SandboxException, match="cannot keep its processes: runtime .* runs on runc"):
            sandbox.create_snapshot(mode="full")
        return
    start_counter(sandbox)
    snapshot = sandbox.create_snapshot(mode="full")
    try:
        opened = Sandbox.create(snapshot.snapshot_id)
        try:
            assert opened.files.exists("/tmp/count")
            assert still_counting(opened, within=30)
        finally:
            opened.kill()
    finally:
        assert Sandbox.delete_snapshot(snapshot.snapshot_id) is True
