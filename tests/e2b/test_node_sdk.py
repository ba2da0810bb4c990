"""The official E2B JavaScript SDK (tests/e2b/package-lock.json) against the same service:
node's test runner over sdk.test.mjs, with the environment `sandboxd e2b env` prints, once for
each of the newest two npm releases of `e2b` (the older under an npm alias in package.json).

The 1.x line (newest 1.13.2) is not in the matrix: see docs/src/user/e2b.md for why."""

import os

import pytest

from conftest import run_node_suite

# package.json's dependency, and the release package-lock.json pins under it.
RELEASES = [("e2b", "2.51.0"), ("e2b-2.50", "2.50.0")]


@pytest.mark.parametrize(("package", "version"), RELEASES, ids=[version for _, version in RELEASES])
def test_the_node_sdk_suite_passes(e2b, package, version):
    env = {**os.environ, "E2B_TENANT_A": e2b.tenant_a, "E2B_TENANT_B": e2b.tenant_b}
    run = run_node_suite("sdk.test.mjs", package, version, env, timeout=300)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "# fail 0" in run.stdout and "# pass 8" in run.stdout, run.stdout[-3000:]
