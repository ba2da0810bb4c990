"""The official E2B JavaScript SDK (tests/e2b/package-lock.json) against the same service:
node's test runner over sdk.test.mjs, with the environment `sandboxd e2b env` prints."""

import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_the_node_sdk_suite_passes(e2b):
    assert shutil.which("node"), "node is needed: scripts/test.sh installs it"
    assert (HERE / "node_modules/e2b").is_dir(), "run `npm ci` in tests/e2b first (scripts/test.sh does)"
    env = {**os.environ, "E2B_TENANT_A": e2b.tenant_a, "E2B_TENANT_B": e2b.tenant_b}
    run = subprocess.run(
        ["node", "--test", "--test-concurrency=1", "--test-reporter=tap", "sdk.test.mjs"],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "# fail 0" in run.stdout and "# pass 7" in run.stdout, run.stdout[-3000:]
