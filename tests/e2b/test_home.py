"""E2B's layout and file answers through the official SDK: the user's home /home/user is the
working directory, writable and the same files as /workspace; paths come back absolute;
symlinks are described by where they lead; removing what is not there succeeds; a watch sees
the file an SDK write wrote, never the service's temporary upload name."""

import time

import httpx
from e2b import FilesystemEventType, FileType

HOME = "/home/user"


def test_paths_come_back_absolute(sandbox):
    written = sandbox.files.write("test_write.txt", "hello")
    assert written.path == f"{HOME}/test_write.txt"
    assert sandbox.files.write("/tmp/./x/../abs.txt", "a").path == "/tmp/abs.txt"
    listed = {entry.name: entry.path for entry in sandbox.files.list(".")}
    assert listed["test_write.txt"] == f"{HOME}/test_write.txt"
    assert sandbox.files.get_info("test_write.txt").path == f"{HOME}/test_write.txt"
    assert sandbox.files.get_info("~/test_write.txt").path == f"{HOME}/test_write.txt"
    renamed = sandbox.files.rename("test_write.txt", "renamed.txt")
    assert renamed.path == f"{HOME}/renamed.txt"
    made = sandbox.files.get_info(sandbox.files.write("d/e/f.txt", "x").path)
    assert made.path == f"{HOME}/d/e/f.txt"


def test_home_is_the_writable_working_directory(sandbox):
    ran = sandbox.commands.run("pwd; echo $HOME; touch made-by-shell")
    assert ran.stdout.split() == [HOME, HOME]
    assert sandbox.files.read("made-by-shell") == ""
    sandbox.files.write(f"{HOME}/deep/er/file.txt", "in home")
    assert sandbox.commands.run("cat deep/er/file.txt").stdout == "in home"
    # One filesystem under two names: sandboxd's own working directory holds the same files,
    # under the same size cap (the suite's tmpfs_size is 32m).
    assert sandbox.commands.run("cat /workspace/deep/er/file.txt").stdout == "in home"
    cap = sandbox.commands.run(
        "df -k /home/user /workspace | awk 'NR > 1 {print $2}'"
    ).stdout.split()
    assert cap == ["32768", "32768"], cap
    info = sandbox.files.get_info(HOME)
    assert (info.type, info.owner) == (FileType.DIR, "user")


def test_a_symlink_is_described_by_where_it_leads(sandbox, e2b):
    sandbox.files.write("real/target.txt", "target")
    sandbox.commands.run("ln -s real/target.txt file-link && ln -s real dir-link && ln -s gone dangling")
    # The SDK shows a link as a link (envd marks it `isSymlink`) and where it leads, resolved.
    info = sandbox.files.get_info("file-link")
    assert (info.type, info.symlink_target, info.path) == (
        FileType.SYMLINK,
        f"{HOME}/real/target.txt",
        f"{HOME}/file-link",
    )
    assert info.permissions.startswith("L")
    assert sandbox.files.get_info("dir-link").symlink_target == f"{HOME}/real"
    # On the wire, `type` is what the link leads to, as envd answers (older SDKs show that).
    headers = {**sandbox.connection_config.sandbox_headers, "Content-Type": "application/json"}

    def wire(method, body):
        answer = httpx.post(f"{e2b.url}/filesystem.Filesystem/{method}", json=body, headers=headers, timeout=30)
        assert answer.status_code == 200, answer.text
        return answer.json()

    types = {name: wire("Stat", {"path": name})["entry"]["type"] for name in ["file-link", "dir-link"]}
    assert types == {"file-link": "FILE_TYPE_FILE", "dir-link": "FILE_TYPE_DIRECTORY"}
    dangling = wire("Stat", {"path": "dangling"})["entry"]
    assert dangling.get("type", "FILE_TYPE_UNSPECIFIED") == "FILE_TYPE_UNSPECIFIED"
    listed = {entry["name"]: entry for entry in wire("ListDir", {"path": ".", "depth": 1})["entries"]}
    assert listed["file-link"]["type"] == "FILE_TYPE_FILE"
    assert listed["dir-link"]["type"] == "FILE_TYPE_DIRECTORY"
    assert listed["file-link"]["isSymlink"] is True
    assert "symlinkTarget" not in listed["file-link"]


def test_removing_what_is_not_there_succeeds(sandbox):
    sandbox.files.remove("never/was/here")
    sandbox.files.write("tree/leaf.txt", "x")
    sandbox.files.remove("tree")
    sandbox.files.remove("tree")
    assert sandbox.files.exists("tree") is False


def test_a_watch_sees_the_written_file_not_the_upload_name(sandbox):
    sandbox.files.make_dir("watched")
    handle = sandbox.files.watch_dir("watched")
    try:
        sandbox.files.write("watched/data.txt", "content")
        sandbox.files.write("watched/data.txt", "content again")
        sandbox.files.write("watched/marker", "")
        events = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(e.name == "marker" for e in events):
            events.extend(handle.get_new_events())
            time.sleep(0.1)
        names = {event.name for event in events}
        assert not any(".sandboxd-upload" in name for name in names), events
        of_data = [event.type for event in events if event.name == "data.txt"]
        once = [FilesystemEventType.CREATE, FilesystemEventType.CHMOD, FilesystemEventType.WRITE]
        assert of_data == once + once, events
    finally:
        handle.stop()
