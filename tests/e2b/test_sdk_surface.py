"""Every public method and property of the E2B SDKs' sandbox classes (the `e2b` package's
`Sandbox` with its `files`, `commands` and `pty`, its `Volume`, and `e2b-code-interpreter`'s `Sandbox`) is
named in the book's E2B page, which says for each what it does here or that it is not offered:
a method a new SDK release adds fails this test until the page says what becomes of it."""

import inspect
import re
from pathlib import Path

from e2b import Sandbox, Volume
from e2b.sandbox_sync.commands.command import Commands
from e2b.sandbox_sync.commands.pty import Pty
from e2b.sandbox_sync.filesystem.filesystem import Filesystem
from e2b_code_interpreter import Sandbox as CodeInterpreter

PAGE = Path(__file__).resolve().parents[2] / "docs/src/user/e2b.md"


def public_names(cls):
    return sorted(
        name
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    )


def test_the_book_says_what_becomes_of_every_sdk_method():
    page = PAGE.read_text()
    unnamed = {
        cls.__qualname__ if cls is not CodeInterpreter else "e2b_code_interpreter.Sandbox": [
            name for name in public_names(cls) if not re.search(rf"`[^`]*\b{re.escape(name)}\b[^`]*`", page)
        ]
        for cls in (Sandbox, Filesystem, Commands, Pty, Volume, CodeInterpreter)
    }
    assert all(not names for names in unnamed.values()), f"not named in {PAGE.name}: {unnamed}"
