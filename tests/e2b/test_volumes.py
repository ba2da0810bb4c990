"""Volumes through the official E2B Python SDK, unchanged: `Volume.create`/`list`/`get_info`/
`destroy` on the control plane, `volume_mounts` at `Sandbox.create`, and the volume content
API (a volume's files without a sandbox, with the volume's own token). Data written through a
mount in one sandbox is read in the next and through the content API, and the other way round;
a mounted volume cannot be destroyed; another tenant's volume is not found; past the tenant's
quota a create is refused as E2B's rate limit, in the quota's words. Docker only (the
Kubernetes backend keeps no volumes: scripts/test.sh leaves this file out there)."""

import secrets

import pytest
from conftest import config
from e2b import (
    AuthenticationException,
    RateLimitException,
    Sandbox,
    SandboxException,
    Volume,
    VolumeException,
    VolumeNotFoundException,
    VolumePathNotFoundException,
)
from e2b.volume.types import VolumeFileType

def fresh_name() -> str:
    return "e2b-" + secrets.token_hex(4)


@pytest.fixture
def volume(e2b):
    """A new volume of the service token's, destroyed at the end (its sandboxes killed first)."""
    made = Volume.create(fresh_name())
    try:
        yield made
    finally:
        Volume.destroy(made.volume_id)


def test_data_written_in_one_sandbox_is_read_in_the_next_and_without_a_sandbox(e2b, volume):
    assert volume.name and volume.token, "create answers the volume's token"
    assert volume.volume_id in [v.volume_id for v in Volume.list()]
    info = Volume.get_info(volume.volume_id)
    assert (info.name, info.token) == (volume.name, volume.token)

    first = Sandbox.create(volume_mounts={"/home/user/data": volume}, metadata={"case": "volumes"})
    try:
        run = first.commands.run("echo kept > /home/user/data/notes.txt && stat -c %u /home/user/data/notes.txt")
        sandbox_uid = int(first.commands.run("id -u").stdout)
        assert int(run.stdout) == sandbox_uid, "the sandbox's user owns what it writes"
        with pytest.raises(VolumeException) as refused:
            Volume.destroy(volume.volume_id)
        assert "409" in str(refused.value) and first.sandbox_id in str(refused.value)
    finally:
        first.kill()

    # By name this time, at another writable place.
    second = Sandbox.create(volume_mounts={"/workspace/shared": volume.name}, metadata={"case": "volumes"})
    try:
        assert second.commands.run("cat /workspace/shared/notes.txt").stdout == "kept\n"
        # The volume's files without a sandbox, through the content API and the volume's token.
        assert volume.read_file("notes.txt") == "kept\n"
        assert volume.read_file("/notes.txt", format="bytes") == b"kept\n"
        written = volume.write_file("from-host/hello.txt", "from the host")
        assert (written.type, written.size, written.path) == (VolumeFileType.FILE, 13, "/from-host/hello.txt")
        assert written.uid == sandbox_uid, "what the host writes is the sandboxes' user's too"
        assert second.commands.run("cat /workspace/shared/from-host/hello.txt").stdout == "from the host"
        second.commands.run("mkdir -p /workspace/shared/deep/er && echo x > /workspace/shared/deep/er/f")
        # A symlink the sandbox makes leads the host nowhere: here it would be the host's /etc.
        second.commands.run("ln -s /etc /workspace/shared/out")
        mounts = [e for e in e2b.activity(second.sandbox_id) if e["action"] == "mount_volume"]
        assert [e["target"] for e in mounts] == [f"{volume.name} at /workspace/shared"]
    finally:
        second.kill()

    link = volume.get_info("out")
    assert (link.type, link.target) == (VolumeFileType.SYMLINK, "/etc")
    for through_the_link in (lambda: volume.read_file("out/passwd"), lambda: volume.list("out")):
        with pytest.raises(VolumeException, match="403"):
            through_the_link()
    volume.remove("out")
    assert not volume.exists("out")

    top = {entry.name: entry.type for entry in volume.list("/")}
    assert top == {
        "notes.txt": VolumeFileType.FILE,
        "from-host": VolumeFileType.DIRECTORY,
        "deep": VolumeFileType.DIRECTORY,
    }
    deep = [entry.path for entry in volume.list("deep", depth=3)]
    assert deep == ["/deep/er", "/deep/er/f"]
    assert volume.get_info("from-host").type == VolumeFileType.DIRECTORY
    assert volume.exists("notes.txt") and not volume.exists("nothing-here")
    made = volume.make_dir("a/b/c", force=True)
    assert (made.type, made.path) == (VolumeFileType.DIRECTORY, "/a/b/c")
    with pytest.raises(VolumePathNotFoundException):
        volume.make_dir("x/y")
    volume.remove("deep")
    with pytest.raises(VolumePathNotFoundException):
        volume.read_file("deep/er/f")
    with pytest.raises(VolumePathNotFoundException):
        volume.list("deep")
    with pytest.raises(VolumeException, match="uid, gid and mode"):
        volume.write_file("owned.txt", "x", uid=0)
    # Nothing but the volume's own token reaches its files.
    with pytest.raises(AuthenticationException):
        Volume(volume.volume_id, volume.name, token="0." + "0" * 64).read_file("notes.txt")


def test_a_destroyed_volume_is_not_found(e2b):
    gone = Volume.create(fresh_name())
    assert Volume.destroy(gone.volume_id) is True
    assert Volume.destroy(gone.volume_id) is False, "a second destroy finds nothing"
    with pytest.raises(VolumeNotFoundException):
        Volume.get_info(gone.volume_id)
    with pytest.raises(VolumeNotFoundException):
        Volume.connect(gone.volume_id)
    # The token of a destroyed volume reaches nothing.
    with pytest.raises(AuthenticationException):
        gone.read_file("anything")
    with pytest.raises(SandboxException, match="no volume named"):
        Sandbox.create(volume_mounts={"/home/user/data": gone.name})


def test_mounts_outside_the_writable_places_are_refused(volume):
    for path in ["/etc/data", "/proc/x", "/home/user", "relative/x", "/home/user/../../etc"]:
        with pytest.raises(SandboxException, match="cannot be mounted at"):
            Sandbox.create(volume_mounts={path: volume})


def test_another_tenants_volume_is_not_found(e2b):
    name = fresh_name()
    mine = Volume.create(name, api_key=e2b.tenant_a)
    try:
        with pytest.raises(VolumeNotFoundException):
            Volume.get_info(mine.volume_id, api_key=e2b.tenant_b)
        assert name not in [v.name for v in Volume.list(api_key=e2b.tenant_b)]
        assert name in [v.name for v in Volume.list(api_key=e2b.tenant_a)]
        assert Volume.destroy(mine.volume_id, api_key=e2b.tenant_b) is False
        with pytest.raises(SandboxException, match="no volume named"):
            Sandbox.create(volume_mounts={"/home/user/data": name}, api_key=e2b.tenant_b)
        # The same name is free in another tenant's namespace, and each token reaches its own.
        theirs = Volume.create(name, api_key=e2b.tenant_b)
        try:
            mine.write_file("whose.txt", "a")
            theirs.write_file("whose.txt", "b")
            assert (mine.read_file("whose.txt"), theirs.read_file("whose.txt")) == ("a", "b")
        finally:
            assert Volume.destroy(theirs.volume_id, api_key=e2b.tenant_b) is True
        assert mine.read_file("whose.txt") == "a"
    finally:
        assert Volume.destroy(mine.volume_id, api_key=e2b.tenant_a) is True


def test_the_tenants_volume_quota_is_e2bs_rate_limit_with_its_words(start_service):
    keys = ["e2b_" + secrets.token_hex(20) for _ in range(3)]
    text = config(*keys).replace("[policy]\n", "[policy]\nvolume_quota_count = 1\n", 1)
    with start_service(text, keys[0], "e2b-quota") as running:
        params = {"api_key": keys[0], "api_url": running.url}
        first = Volume.create(fresh_name(), **params)
        try:
            with pytest.raises(RateLimitException, match="volume_quota_count"):
                Volume.create(fresh_name(), **params)
            assert [v.name for v in Volume.list(**params)] == [first.name], "nothing else was made"
        finally:
            assert Volume.destroy(first.volume_id, **params) is True
