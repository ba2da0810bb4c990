"""A watcher flood through the official E2B Python SDK, on a service of its own: one tenant's
sandbox asks for 40 recursive watchers on /tmp (as many as a sandbox may hold are made, the
rest refused with the limit named), then makes and removes 12,000 files whose paths are about
3.5 KB long, without polling. The service's memory stays under 128 MB, and once the sandbox is
killed it returns to where it was before the flood; another tenant's watcher works throughout."""

import secrets
import time
from pathlib import Path

import pytest
from e2b import RateLimitException, Sandbox

from conftest import config, sdk_env

WATCHERS_ASKED = 40
# The E2B face's limit (crates/sandboxd-e2b/src/watch_limits.rs): each holds an agent connection.
WATCHERS_PER_SANDBOX = 8
FILES = 12_000
PEAK_LIMIT_KB = 128 * 1024
# A path of 16 directories of 200-character names under /tmp/flood, and a 200-character file name.
FLOOD = r"""
import os, sys
deep = "/tmp/flood/" + "/".join(f"{i:02d}" + "d" * 198 for i in range(16))
if sys.argv[1] == "prepare":
    os.makedirs(deep)
    print(len(deep) + 201)
else:
    for i in range(int(sys.argv[2])):
        path = f"{deep}/{i:05d}" + "f" * 195
        open(path, "w").close()
        os.remove(path)
"""


@pytest.fixture(scope="module")
def flood_service(start_service):
    keys = ["e2b_" + secrets.token_hex(20) for _ in range(3)]
    with start_service(config(*keys), keys[0], "e2b-watch") as running:
        with sdk_env(running.url, keys[0]):
            yield running, keys[1], keys[2]


def service_pid(instance_id: str) -> int:
    """The pid of the `sandboxd serve` whose state directory holds `instance_id`."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" not in argv or b"--state-dir" not in argv:
            continue
        state_dir = Path(argv[argv.index(b"--state-dir") + 1].decode())
        try:
            if (state_dir / "instance-id").read_text().strip() == instance_id:
                return int(proc.name)
        except OSError:
            continue
    raise AssertionError(f"no sandboxd serve process for instance {instance_id}")


def memory_kb(pid: int, field: str) -> int:
    """VmRSS (resident now) or VmHWM (the most resident so far) of `pid`, in KB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for pid {pid}")


def test_a_watcher_flood_is_bounded_and_freed_when_the_sandbox_ends(flood_service):
    running, tenant_a, tenant_b = flood_service
    pid = service_pid(running.instance_id)

    other = Sandbox.create(api_key=tenant_b)
    box = None
    try:
        theirs = other.files.watch_dir("/tmp", recursive=True)
        box = Sandbox.create(api_key=tenant_a)
        box.files.write("flood.py", FLOOD)
        path_length = int(box.commands.run("python3 flood.py prepare").stdout)
        assert path_length > 3400
        baseline = memory_kb(pid, "VmRSS")

        handles, refusals = [], []
        for _ in range(WATCHERS_ASKED):
            try:
                handles.append(box.files.watch_dir("/tmp", recursive=True))
            except RateLimitException as refused:
                refusals.append(str(refused))
        box.commands.run(f"python3 flood.py flood {FILES}", timeout=120)
        # What a flooded watcher kept is bounded: it reports the changes it had to drop. Its
        # changes may still be arriving when the command is done: polled until it says so.
        deadline = time.monotonic() + 60
        lost = None
        while lost is None and time.monotonic() < deadline:
            try:
                handles[0].get_new_events()
            except RateLimitException as failed:
                lost = str(failed)
            time.sleep(0.2)
        peak = memory_kb(pid, "VmHWM")
        print(f"\nservice RSS: baseline {baseline} KB, peak {peak} KB, {len(handles)} watchers")
        assert peak < PEAK_LIMIT_KB, f"the flood took the service to {peak} KB (baseline {baseline} KB)"
        assert lost is not None and "changes were lost" in lost, lost

        assert len(handles) == WATCHERS_PER_SANDBOX
        assert len(refusals) == WATCHERS_ASKED - WATCHERS_PER_SANDBOX
        assert "policy.max_watches_per_session" in refusals[0], refusals[0]
        # Another tenant's watcher is created, and its own watcher still works.
        extra = other.files.watch_dir("/tmp")
        extra.stop()
        other.files.write("/tmp/seen-by-b", "x")
        deadline = time.monotonic() + 30
        while not any(e.name == "seen-by-b" for e in theirs.get_new_events()):
            assert time.monotonic() < deadline, "tenant B's watcher saw nothing"
            time.sleep(0.2)

        box.kill()
        box = None
        deadline = time.monotonic() + 60
        while (rss := memory_kb(pid, "VmRSS")) > baseline * 1.1:
            assert time.monotonic() < deadline, (
                f"the service holds {rss} KB after the sandbox was killed (baseline {baseline} KB)"
            )
            time.sleep(0.5)
        print(f"service RSS after the kill: {rss} KB")
    finally:
        if box is not None:
            box.kill()
        other.kill()
