"""Files through the official E2B Python SDK: written and read by sandboxd's agent inside the
sandbox (atomic, confined), listed, removed."""

import pytest
from e2b import FileNotFoundException, FileType
from e2b.sandbox.filesystem.filesystem import WriteEntry


def test_write_and_read_text_bytes_and_streams(sandbox):
    info = sandbox.files.write("notes/hello.txt", "hello, sandbox")
    assert (info.name, info.path, info.type) == ("hello.txt", "notes/hello.txt", FileType.FILE)
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
    assert [w.path for w in written] == [f"many/f{i}.txt" for i in range(5)]
    assert sandbox.commands.run("cat many/f3.txt").stdout == "file 3"


def test_list_to_a_depth_and_remove(sandbox):
    sandbox.files.write("tree/a.txt", "a")
    sandbox.files.write("tree/sub/b.txt", "bb")
    top = sandbox.files.list("tree")
    assert sorted((e.name, e.type) for e in top) == [("a.txt", FileType.FILE), ("sub", FileType.DIR)]
    deep = sandbox.files.list("tree", depth=2)
    assert sorted(e.path for e in deep) == ["tree/a.txt", "tree/sub", "tree/sub/b.txt"]
    b = next(e for e in deep if e.name == "b.txt")
    assert (b.size, b.permissions) == (2, "-rw-r--r--")

    sandbox.files.remove("tree")
    with pytest.raises(FileNotFoundException):
        sandbox.files.read("tree/a.txt")


def test_a_missing_file_is_file_not_found(sandbox):
    with pytest.raises(FileNotFoundException):
        sandbox.files.read("no/such/file")
