"""Files through the official E2B Python SDK: written and read by sandboxd's agent inside the
sandbox (atomic, confined), listed, removed."""

import time

import pytest
from e2b import FileNotFoundException, FilesystemEventType, FileType, SandboxException
from e2b.sandbox.filesystem.filesystem import WriteEntry


def test_write_and_read_text_bytes_and_streams(sandbox):
    info = sandbox.files.write("notes/hello.txt", "hello, sandbox")
    assert (info.name, info.path, info.type) == ("hello.txt", "/home/user/notes/hello.txt", FileType.FILE)
    assert sandbox.files.read("notes/hello.txt") == "hello, sandbox"

    blob = bytes(range(256)) * 4096
    sandbox.files.write("/tmp/blob.bin", blob)
    assert bytes(sandbox.files.read("/tmp/blob.bin", format="bytes")) == blob
    streamed = b"".join(sandbox.files.read("/tmp/blob.bin", format="stream"))
    assert streamed == blob
    assert sandbox.commands.run("wc -c < /tmp/blob.bin").stdout.strip() == str(len(blob))


def test_write_many_files_at_once(sandbox):
    written = sandbox.files.write_files(
        [WriteEntry(path=f"many/f{i}.txt", data=f"file {i}") for i in range(5)]
    )
    assert [w.path for w in written] == [f"/home/user/many/f{i}.txt" for i in range(5)]
    assert sandbox.commands.run("cat many/f3.txt").stdout == "file 3"


def test_list_to_a_depth_and_remove(sandbox):
    sandbox.files.write("tree/a.txt", "a")
    sandbox.files.write("tree/sub/b.txt", "bb")
    top = sandbox.files.list("tree")
    assert sorted((e.name, e.type) for e in top) == [("a.txt", FileType.FILE), ("sub", FileType.DIR)]
    deep = sandbox.files.list("tree", depth=2)
    assert sorted(e.path for e in deep) == [f"/home/user/tree/{p}" for p in ["a.txt", "sub", "sub/b.txt"]]
    b = next(e for e in deep if e.name == "b.txt")
    assert (b.size, b.permissions) == (2, "-rw-r--r--")

    sandbox.files.remove("tree")
    with pytest.raises(FileNotFoundException):
        sandbox.files.read("tree/a.txt")


def test_a_missing_file_is_file_not_found(sandbox):
    with pytest.raises(FileNotFoundException):
        sandbox.files.read("no/such/file")


def test_exists_get_info_make_dir_and_rename(sandbox):
    assert sandbox.files.exists("made") is False
    assert sandbox.files.make_dir("made/deeper") is True
    assert sandbox.files.make_dir("made/deeper") is False
    assert sandbox.files.exists("made/deeper") is True
    info = sandbox.files.get_info("made/deeper")
    assert (info.name, info.type) == ("deeper", FileType.DIR)

    sandbox.files.write("made/old.txt", "content")
    moved = sandbox.files.rename("made/old.txt", "made/deeper/new.txt")
    assert (moved.name, moved.type, moved.size) == ("new.txt", FileType.FILE, 7)
    assert sandbox.files.exists("made/old.txt") is False
    assert sandbox.files.read("made/deeper/new.txt") == "content"

    sandbox.commands.run("ln -s /etc/hostname made/link")
    link = sandbox.files.get_info("made/link")
    assert link.type == FileType.SYMLINK
    assert link.symlink_target == "/etc/hostname"
    with pytest.raises(FileNotFoundException):
        sandbox.files.get_info("made/nothing")


def test_watch_dir_sees_changes(sandbox):
    sandbox.files.make_dir("watched/sub")
    handle = sandbox.files.watch_dir("watched", recursive=True)
    try:
        sandbox.files.write("watched/new.txt", "x")
        sandbox.commands.run("echo more >> watched/new.txt; touch watched/sub/inner; rm watched/new.txt")
        events = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            events += handle.get_new_events()
            if any(e.name == "new.txt" and e.type == FilesystemEventType.REMOVE for e in events):
                break
            time.sleep(0.3)
        kinds = {(e.name, e.type) for e in events}
        assert ("new.txt", FilesystemEventType.CREATE) in kinds
        assert ("new.txt", FilesystemEventType.WRITE) in kinds
        assert ("new.txt", FilesystemEventType.REMOVE) in kinds
        assert ("sub/inner", FilesystemEventType.CREATE) in kinds
    finally:
        handle.stop()
    with pytest.raises(SandboxException):
        sandbox.files.watch_dir("watched/nothing-here")
