"""The E2B suites' service: the python runtime by default (the SDKs run commands with bash),
two tenants, and the SDKs pointed at it the way `sandboxd e2b env` does."""

import hashlib
import json
import os
import secrets
import shlex
import shutil
import subprocess
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

BUSYBOX_IMAGE = os.environ.get("SANDBOXD_TEST_BUSYBOX_IMAGE", "sandboxd/busybox:local")
# scripts/test.sh's gvisor-faces step runs these suites with every runtime on gVisor.
ISOLATION = os.environ.get("SANDBOXD_TEST_ISOLATION", "runc")
PYTHON_IMAGE = os.environ.get("SANDBOXD_TEST_PYTHON_IMAGE", "sandboxd/python:3.11-bookworm")
IDLE_TIMEOUT_SECS = 900
# The egress runtime `net`'s allow-list.
EGRESS = ["allowed.test", "files.allowed.test", "*.pkg.test", "api.allowed.test:8443"]
SANDBOXD = Path(os.environ.get("SANDBOXD_BIN", Path(__file__).resolve().parents[2] / "target/debug/sandboxd"))


@dataclass
class E2b:
    url: str
    token: str
    tenant_a: str
    tenant_b: str
    instance_id: str

    def activity(self, sandbox_id: str) -> list:
        """The session's activity log, through our own API."""
        return self.ours(f"/v1/sessions/{sandbox_id}/activity")["entries"]

    def network(self, sandbox_id: str) -> list:
        """The session's egress allow-list, through our own API."""
        return self.ours(f"/v1/sessions/{sandbox_id}/network")["egress"]

    def ours(self, path: str):
        request = urllib.request.Request(
            f"{self.url}{path}",
            headers={"Authorization": f"Bearer {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)


def e2b_env(url: str, token: str) -> dict:
    """What `sandboxd e2b env` tells a shell to export."""
    printed = subprocess.run(
        [str(SANDBOXD), "e2b", "env", "--url", url, "--token", token],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    exports = {}
    for line in printed.splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        exports[name] = shlex.split(value)[0]
    return exports


@contextmanager
def sdk_env(url: str, token: str):
    """The SDKs pointed at the service at `url` the way `sandboxd e2b env` tells a shell, for
    the block; what the environment held before is put back after."""
    exports = e2b_env(url, token)
    saved = {name: os.environ.get(name) for name in exports}
    os.environ.update(exports)
    try:
        yield exports
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_node_suite(suite: str, package: str, version: str, env: dict, timeout: int) -> subprocess.CompletedProcess:
    """Node's test runner over SUITE (a .mjs file here) with the npm release PACKAGE (package.json's
    dependency: the newest under its own name, an older one under an alias), first checked to be
    VERSION as package-lock.json pins it; what it printed (TAP)."""
    here = Path(__file__).resolve().parent
    assert shutil.which("node"), "node is needed: scripts/test.sh installs it"
    installed = here / "node_modules" / package / "package.json"
    assert installed.is_file(), "run `npm ci` in tests/e2b first (scripts/test.sh does)"
    assert json.loads(installed.read_text())["version"] == version, f"{package} is not {version}: run `npm ci`"
    return subprocess.run(
        ["node", "--test", "--test-concurrency=1", "--test-reporter=tap", suite],
        cwd=here,
        env={**env, "E2B_JS_PACKAGE": package},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def egress_runtime() -> str:
    """The egress runtime `net`, which the Kubernetes backend does not offer (its suites run
    without it there: scripts/test.sh's kubernetes-faces step leaves its tests out)."""
    if os.environ.get("SANDBOXD_TEST_KUBECONFIG"):
        return ""
    return f"""
# Egress through the service's proxy; the names resolve nowhere (a name server on loopback
# where none listens), so nothing leaves the machine: refusals need no answer from outside.
[runtimes.net]
image = "{PYTHON_IMAGE}"
interpreter = ["python3"]
network_mode = "egress"
egress = {json.dumps(EGRESS)}

[egress]
upstream_dns = ["127.0.0.1:9"]
"""


def config(token: str, tenant_a: str, tenant_b: str, egress: str | None = None) -> str:
    """The suite's config; `egress` in place of the egress runtime `net` and its table."""
    egress = egress_runtime() if egress is None else egress
    return f"""
token = "{token}"
default_runtime = "python"
max_sessions = 8
mem_limit = "256m"
cpus = 0.5
pids_limit = 128
tmpfs_size = "32m"
isolation = "{ISOLATION}"

[runtimes.python]
image = "{PYTHON_IMAGE}"
interpreter = ["python3"]

[runtimes.sh]
image = "{BUSYBOX_IMAGE}"

{egress}
[tenants.team-a]
token_sha256 = "{sha256(tenant_a)}"

[tenants.team-b]
token_sha256 = "{sha256(tenant_b)}"

[policy]
default_timeout_secs = 20
max_timeout_secs = 120
max_upload_bytes = "4m"
idle_timeout_secs = {IDLE_TIMEOUT_SECS}

[e2b]
# What `Volume.create(name)` makes (E2B asks for no size): small, so each is made quickly.
volume_size = "64m"
"""


@pytest.fixture(scope="session")
def e2b(start_service):
    """The service, with the SDK's environment set as `sandboxd e2b env` prints it."""
    keys = ["e2b_" + secrets.token_hex(20) for _ in range(3)]
    with start_service(config(*keys), keys[0], "e2b") as running:
        with sdk_env(running.url, keys[0]) as exports:
            assert exports == {
                "E2B_API_URL": running.url,
                "E2B_SANDBOX_URL": running.url,
                "E2B_VOLUME_API_URL": running.url,
                "E2B_API_KEY": keys[0],
            }
            yield E2b(running.url, keys[0], keys[1], keys[2], running.instance_id)


@pytest.fixture
def sandbox(e2b):
    from e2b import Sandbox

    box = Sandbox.create()
    try:
        yield box
    finally:
        box.kill()
