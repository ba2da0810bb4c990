#!/usr/bin/env bash
# The whole test suite, from a fresh machine (quickstart command 2, and CI):
#   1. host setup (packages, dockerd)           scripts/host-setup.sh
#   2. local images (busybox + python)          scripts/build-images.sh all
#   3. debug build incl. the static agent       scripts/build.sh
#   4. cargo test --workspace                   (SANDBOXD_AGENT, SANDBOXD_TEST_*_IMAGE exported;
#                                                SANDBOXD_AGENT = target/<host triple>/debug/sandboxd-agent)
#   5. the dashboard in Chromium              tests/browser (npm ci, then node --test; the tests
#                                                start their own service on loopback)
#   6. the MCP server with the MCP Python SDK  tests/mcp (pytest in target/mcp-venv)
#   7. the API fuzzed by schemathesis          tests/fuzz (pytest in target/fuzz-venv); the
#                                                Python suites start their own service on loopback
#   8. cargo fmt --all -- --check
#   9. cargo clippy --workspace --all-targets -- -D warnings
#
# Steps 4-9 all run even when one fails; the script exits non-zero if any
# step failed and ends with a one-line summary. Containers (and networks,
# volumes) labelled org.sandboxd.test=true are removed before and after.
#
# Usage: scripts/test.sh [extra args for cargo test, e.g. -- --nocapture]
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$SANDBOXD_ROOT"

TEST_LABEL="org.sandboxd.test=true"
T0="$(now)"
RESULTS=()
FAILED=0

summary() {
    local rc=$?
    remove_labelled "$TEST_LABEL"
    remove_test_sandboxes
    [[ $FAILED -eq 0 && $rc -ne 0 ]] && FAILED=1
    local verdict=PASSED
    [[ $FAILED -eq 0 ]] || verdict=FAILED
    log "summary: $verdict in $(elapsed_since "$T0"): ${RESULTS[*]:-nothing ran}"
    [[ $FAILED -eq 0 ]] || exit 1
}
trap summary EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# step NAME CMD...: run a step, record NAME=ok|FAIL(rc) and its duration.
step() {
    local name=$1 s rc=0
    shift
    log "==== $name: $*"
    s="$(now)"
    "$@" || rc=$?
    if [[ $rc -eq 0 ]]; then
        RESULTS+=("$name=ok($(elapsed_since "$s"))")
    else
        RESULTS+=("$name=FAIL($(elapsed_since "$s"))")
        FAILED=1
        log "==== $name FAILED (exit $rc)"
    fi
    return "$rc"
}

# Setup steps: a failure here makes the rest pointless, stop at once.
step host-setup "$SANDBOXD_SCRIPTS/host-setup.sh" || exit 1
ensure_rust_components rustfmt clippy
remove_labelled "$TEST_LABEL"
remove_test_sandboxes
step images "$SANDBOXD_SCRIPTS/build-images.sh" all || exit 1
step build "$SANDBOXD_SCRIPTS/build.sh" >/dev/null || exit 1

# The static agent as built with --target: host builds never overwrite it.
SANDBOXD_AGENT="$(static_agent_path debug)"
is_static_binary "$SANDBOXD_AGENT" || die "$SANDBOXD_AGENT is missing or not static"
export SANDBOXD_AGENT
export SANDBOXD_TEST_BUSYBOX_IMAGE="$SANDBOXD_BUSYBOX_IMAGE"
export SANDBOXD_TEST_PYTHON_IMAGE="$SANDBOXD_PYTHON_IMAGE"
log "SANDBOXD_AGENT=$SANDBOXD_AGENT"
log "SANDBOXD_TEST_BUSYBOX_IMAGE=$SANDBOXD_TEST_BUSYBOX_IMAGE SANDBOXD_TEST_PYTHON_IMAGE=$SANDBOXD_TEST_PYTHON_IMAGE"

# Checks: run them all, collect the verdicts.
# Compiling the tests builds the agent crate for the host too, which replaces
# target/debug/sandboxd-agent (next to sandboxd) with a dynamic binary; put
# the static one back before running them (a fresh `cargo test` does not
# copy it again).
if step test-build cargo test --workspace --no-run; then
    install_static_agent debug >/dev/null
    step test cargo test --workspace --no-fail-fast "$@" || true
    # Restarting the engine stops every container, so this test runs alone, last.
    step engine-restart cargo test -p sandboxd --test engine_restart -- --ignored || true
fi
remove_labelled "$TEST_LABEL"
remove_test_sandboxes

# The dashboard in a real browser: Debian's Chromium driven by playwright-core (pinned in
# tests/browser/package-lock.json) against a real service on loopback and the real engine.
# The tests start the service themselves and stop it, with its sandboxes, when they end;
# anything a killed run left (listed in a pid file) is ended here. Screenshots of every tab
# land in test-output/screenshots/.
browser_tests() {
    local pidfile rc=0 pid dir
    if ! have node || ! have npm; then
        ensure_packages nodejs npm
    fi
    have chromium || ensure_packages chromium
    (cd "$SANDBOXD_ROOT/tests/browser" && npm ci --no-audit --no-fund --loglevel=error) || return 1
    pidfile="$(mktemp)"
    SANDBOXD_BIN="$(cargo_target_dir)/debug/sandboxd" SANDBOXD_BROWSER_PIDFILE="$pidfile" \
        node --test --test-concurrency=1 "$SANDBOXD_ROOT/tests/browser/" || rc=$?
    while read -r pid dir; do
        if [[ -n "$pid" && "$(cat "/proc/$pid/comm" 2>/dev/null)" == "sandboxd" ]]; then
            kill -9 "$pid" 2>/dev/null || true
        fi
        [[ "$dir" == /tmp/sbdb* ]] && rm -rf "$dir"
    done <"$pidfile"
    rm -f "$pidfile"
    remove_test_sandboxes
    return "$rc"
}
step browser browser_tests || true

# The MCP server driven by the official MCP Python SDK (tests/mcp) over streamable HTTP and
# stdio; the tests start their own service on loopback and remove its sandboxes. Collecting
# no test (pytest's exit code 5) fails this step like any other non-zero exit: the suite must run.
python_tests() {
    local suite=$1 python
    python="$(ensure_venv "$suite")" || return 1
    SANDBOXD_BIN="$(cargo_target_dir)/debug/sandboxd" PYTHONDONTWRITEBYTECODE=1 \
        "$python" -m pytest -q -s -p no:cacheprovider "$SANDBOXD_ROOT/tests/$suite"
}
step mcp python_tests mcp || true
remove_test_sandboxes
# The API fuzzed by schemathesis from the served OpenAPI document: no 5xx, no crash, no answer
# that violates the document, over a bounded number of cases.
step fuzz python_tests fuzz || true
remove_test_sandboxes

step fmt cargo fmt --all -- --check || true
step clippy cargo clippy --workspace --all-targets -- -D warnings || true
