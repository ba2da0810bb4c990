"""Older releases of the official E2B Python SDK, each in a venv of its own (made under target/
on first use, the release pinned), against a service on the embedded default config with a
generated-style token (hex, not E2B's `e2b_<hex>`), set up as `sandboxd e2b env` prints it.
Releases up to 2.50 send `allow_internet_access: true` on every create, releases before 2.60
`allowPublicTraffic: true` with any network option, and 2.40-2.45 check the key's form."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import e2b_env

REPO = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
EMBEDDED_DEFAULT = REPO / "crates/sandboxd-config/src/default.toml"
RELEASES = ["2.40.0", "2.45.1", "2.50.0", "2.59.0"]

# Run by each release's Python: open (the default template), run, write, read, open with a
# network option, kill; what it saw as JSON on stdout.
SCRIPT = """
import json
from e2b import Sandbox
box = Sandbox.create()
try:
    ran = box.commands.run("echo $((6 * 7)) from $(basename $0)").stdout
    box.files.write("release.txt", "written by an old SDK")
    read = box.files.read("release.txt")
    template = box.get_info().template_id
finally:
    killed = box.kill()
closed = Sandbox.create(network={"deny_out": ["0.0.0.0/0"]})
closed.kill()
print(json.dumps({"ran": ran, "read": read, "template": template, "killed": killed}))
"""


def release_python(version: str) -> Path:
    """The Python of a venv holding e2b==VERSION, made when missing."""
    venv = TARGET / f"e2b-sdk-{version}-venv"
    python = venv / "bin/python"
    if not (venv / f".e2b-{version}").is_file():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"e2b=={version}"],
            check=True,
        )
        (venv / f".e2b-{version}").write_text(version)
    return python


@pytest.fixture(scope="module")
def embedded_default(start_service):
    """The service on the embedded default config; the SDK environment `sandboxd e2b env` prints."""
    token = secrets.token_hex(32)
    config = f'token = "{token}"\n' + EMBEDDED_DEFAULT.read_text()
    with start_service(config, token, "e2b-releases") as running:
        exports = e2b_env(running.url, token)
        assert exports["E2B_VALIDATE_API_KEY"] == "false", "the token is not in e2b_<hex> form"
        yield exports


@pytest.mark.parametrize("version", RELEASES)
def test_a_release_opens_runs_writes_reads_and_kills(embedded_default, version):
    python = release_python(version)
    env = {**os.environ, **embedded_default}
    done = subprocess.run([str(python), "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"ran": "42 from bash\n", "read": "written by an old SDK", "template": "python", "killed": True}
