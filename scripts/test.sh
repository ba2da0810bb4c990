#!/usr/bin/env bash
# The whole test suite, from a fresh machine (quickstart command 2, and CI):
#   1. host setup (packages, dockerd)           scripts/host-setup.sh
#   2. local images (busybox + python)          scripts/build-images.sh all
#   3. debug build incl. the static agent       scripts/build.sh
#   4. cargo test --workspace                   (SANDBOXD_AGENT, SANDBOXD_TEST_*_IMAGE exported;
#                                                SANDBOXD_AGENT = target/<host triple>/debug/sandboxd-agent)
#   4b. the Kubernetes backend                  scripts/k8s-up.sh (a single-node cluster of this host,
#                                                built from Go modules once and cached), then the
#                                                kubernetes, kubernetes_volumes and kubernetes_chart
#                                                (the Helm chart installed in it) suites and the
#                                                shared backend suites on it
#   4c. the shared backend suites on gVisor    SANDBOXD_TEST_ISOLATION=gvisor (runsc, built by host-setup)
#   5. the dashboard in Chromium              tests/browser (npm ci, then node --test; the tests
#                                                start their own service on loopback)
#   6. the MCP server with the MCP Python SDK  tests/mcp (npm ci for the MCP Inspector's CLI and
#                                                its Node 22, then pytest in target/mcp-venv)
#   7. the API fuzzed by schemathesis          tests/fuzz (pytest in target/fuzz-venv); the
#                                                Python suites start their own service on loopback
#   7b. the E2B-compatible API with the E2B SDKs tests/e2b (npm ci, then pytest in target/e2b-venv:
#                                                the e2b Python package, and the npm one under node)
#   7b'. MCP and E2B on gVisor                  a few files of tests/mcp and tests/e2b again with
#                                                SANDBOXD_TEST_ISOLATION=gvisor
#   7c. MCP and E2B on Kubernetes              tests/mcp and tests/e2b again on the cluster of 4b
#                                                (what a pod cannot do left out by name); and
#                                                their core files against the service the Helm
#                                                chart installs in that cluster (in-cluster-*)
#   7d. the book                                scripts/book.sh (mdBook, then docs/check.py against
#                                                a service it starts)
#   7e. the Debian package                      scripts/package.sh --debug --test (installed with
#                                                dpkg in a clean bookworm container; /healthz)
#   8. cargo fmt --all -- --check
#   9. cargo clippy --workspace --all-targets -- -D warnings
#
# Steps 4-9 all run even when one fails; the script exits non-zero if any
# step failed and ends with the failed tests, each by name with its first error
# line (at most 30; the steps' full output is in target/test-logs/), then a
# one-line summary. Containers (and networks,
# volumes) labelled org.sandboxd.test=true are removed before and after.
#
# Each step that runs tests says how many ran and how many were skipped (cargo's ignored ones,
# and those that printed `SKIPPED:` because something they need is missing: in CI, which this
# script declares by setting CI=true unless it is set, those fail instead), and how many of
# those that ran left out a check that is not for the backend they run on (`NOT HERE:`, e.g.
# a Docker container's log driver on Kubernetes); a step that ran no test fails.
#
# Usage: scripts/test.sh [extra args for cargo test, e.g. -- --nocapture]
set -euo pipefail

# The tests fail, rather than skip, when something they need is missing (tests/common skip.rs).
export CI="${CI:-true}"
# npm, also the installs that packages' own scripts start (the node package fetches Node 22):
# a registry request that gets no answer is given up after 60 s and tried again (npm's own
# 5 minutes, 2 tries, once held the MCP step for longer than the run had), and what the
# machine's npm cache holds is taken without asking the registry again.
export npm_config_fetch_timeout=60000 npm_config_fetch_retries=4 npm_config_prefer_offline=true

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$SANDBOXD_ROOT"

TEST_LABEL="org.sandboxd.test=true"
T0="$(now)"
RESULTS=()
FAILED=0
# Each test step's output kind (as for failed_tests), set by logged: its counts are read at the end.
declare -A STEP_KIND=()
# The failed tests of every step, one "step: test: first error line" a line, listed last.
FAILURE_LIST="$(mktemp)"
# Where the test steps' output is kept (set once cargo is there to say where target/ is).
LOG_DIR=""
# At most this many failed tests are listed, each line cut to this many characters.
MAX_FAILURES_LISTED=30
MAX_FAILURE_LINE=200
# A whole run (the build, the images, the cluster's images, the browsers and the venvs) takes
# about this much of the disk that holds the work tree (measured on a fresh machine); less
# free than this at the start is said at once, since a full disk fails every later step.
RUN_NEEDS_GIB=30
DISK_AT_START=""

summary() {
    local rc=$?
    remove_labelled "$TEST_LABEL"
    remove_test_sandboxes
    [[ $FAILED -eq 0 && $rc -ne 0 ]] && FAILED=1
    local verdict=PASSED
    [[ $FAILED -eq 0 ]] || verdict=FAILED
    print_failures
    rm -f "$FAILURE_LIST"
    log "disk: $DISK_AT_START GiB free at the start, $(free_gib "$SANDBOXD_ROOT") GiB at the end"
    log "summary: $verdict in $(elapsed_since "$T0"): ${RESULTS[*]:-nothing ran}"
    [[ $FAILED -eq 0 ]] || exit 1
}

# failed_tests KIND LOG: the failed tests in a test run's output, one "name<TAB>first error
# line" a line. KIND says whose output it is:
#   cargo   cargo test: each `---- NAME stdout ----` block's panic message (the line after
#           `panicked at FILE:LINE:COL:`, or what follows `panicked at` in the older
#           one-line form), a `thread 'NAME' panicked at` outside a block (--nocapture),
#           names in the `failures:` list without a block, test binaries killed by a
#           signal; without any of those, the first `error` line (a compile error, say)
#   node    node --test --test-reporter=tap: each `not ok N - NAME` and its `error:` (a
#           parent that failed only because a subtest did is left out)
#   pytest  pytest -rfE: each `FAILED|ERROR path::name - message` line
#   fmt     cargo fmt --check: the first few `Diff in FILE:LINE:` lines
#   other   the first `error` line, else the last line
failed_tests() {
    local kind=$1 file=$2
    [[ -f "$file" ]] || return 0
    case "$kind" in
        cargo)
            awk '
                function flush() {
                    if (name != "" && !(name in seen)) { seen[name] = 1; order[++n] = name; msg[name] = text }
                    name = ""; text = ""; want = 0; inblock = 0
                }
                function binary_of(line,    s) {
                    s = line
                    if (index(s, "(") > 0) { s = substr(s, index(s, "(") + 1); sub(/\).*/, "", s) }
                    sub(/.*\//, "", s); sub(/-[0-9a-f]+$/, "", s)
                    return s
                }
                function named(test) { return (bin == "" ? test : bin "::" test) }
                /^ *Running / { flush(); inlist = 0; bin = binary_of($0); next }
                /^ *Doc-tests / { flush(); inlist = 0; bin = "doc-tests of " $2; next }
                /^---- .* stdout ----$/ {
                    flush(); inlist = 0; inblock = 1
                    name = $0; sub(/^---- /, "", name); sub(/ stdout ----$/, "", name)
                    name = named(name); next
                }
                /^failures:$/ { flush(); inlist = 1; next }
                inlist && /^    [^ ]/ {
                    t = $0; sub(/^ +/, "", t); t = named(t)
                    if (!(t in seen)) { seen[t] = 1; order[++n] = t; msg[t] = "" }
                    next
                }
                /^test result:/ { flush(); inlist = 0; next }
                want && NF { text = $0; want = 0; if (!inblock) flush(); next }
                /panicked at / {
                    if (!inblock) {
                        # --nocapture: no block; the thread says which test it was.
                        flush()
                        t = $0
                        if (t ~ /^thread \047[^\047]*\047/) { t = substr(t, 9); t = substr(t, 1, index(t, "\047") - 1) } else t = "?"
                        name = named(t)
                    }
                    if (text == "") {
                        if ($0 ~ /panicked at [^ ]*:[0-9]+:[0-9]+:$/) want = 1
                        else { text = $0; sub(/.*panicked at /, "", text) }
                    }
                    if (!inblock && !want) flush()
                    next
                }
                /process didn.t exit successfully: .*signal: / {
                    flush(); t = named("(the test binary)")
                    order[++n] = t; seen[t] = 1; m = $0; sub(/.*\(signal: /, "killed by signal ", m); sub(/\)$/, "", m); msg[t] = m
                    next
                }
                !firsterror && /^error(\[E[0-9]+\])?: / { firsterror = $0 }
                END {
                    flush()
                    for (i = 1; i <= n; i++) {
                        t = order[i]; m = msg[t]
                        if (m == "") m = "(no panic message: see the log)"
                        gsub(/\t/, " ", m); sub(/^ +/, "", m)
                        print t "\t" m
                    }
                    if (n == 0 && firsterror != "") print "(no test)\t" firsterror
                }
            ' "$file"
            ;;
        node)
            awk '
                function flush() {
                    if (name != "" && text !~ /^[0-9]+ subtests? failed$/) print name "\t" (text == "" ? "(no error line: see the log)" : text)
                    name = ""; text = ""; want = 0
                }
                /^ *not ok [0-9]+ - / {
                    flush(); name = $0; sub(/^ *not ok [0-9]+ - /, "", name); sub(/ # .*$/, "", name); next
                }
                /^ *ok [0-9]+ - / { flush(); next }
                name != "" && want { t = $0; sub(/^ +/, "", t); if (t != "") { text = t; want = 0 }; next }
                name != "" && text == "" && /^ +error: / {
                    t = $0; sub(/^ +error: /, "", t)
                    if (t ~ /^[|>][-+]?$/) want = 1
                    else {
                        if (t ~ /^\047.*\047$/) { t = substr(t, 2, length(t) - 2); gsub(/\047\047/, "\047", t) }
                        else if (t ~ /^".*"$/) t = substr(t, 2, length(t) - 2)
                        text = t
                    }
                    next
                }
                name != "" && /^ *\.\.\.$/ { flush(); next }
                END { flush() }
            ' "$file"
            ;;
        pytest)
            awk '
                /^(FAILED|ERROR) [^ ]+/ {
                    t = $2; m = $0; sub(/^(FAILED|ERROR) [^ ]+( - )?/, "", m)
                    if (m == "") m = "(no message: see the log)"
                    if ($1 == "ERROR") m = "error: " m
                    print t "\t" m
                }
            ' "$file"
            ;;
        fmt)
            awk '/^Diff in / { t = $0; sub(/^Diff in /, "", t); sub(/:$/, "", t); print "(formatting)\t" t " differs from cargo fmt" }' "$file" | head -n 5
            ;;
        *)
            awk '!first && /^error/ { first = $0 } { last = $0 } END { if (first != "") print "(no test)\t" first; else if (last != "") print "(no test)\t" last }' "$file"
            ;;
    esac
}

# note_failures STEP KIND LOG: add the failed tests in LOG to the list printed at the end.
note_failures() {
    local step=$1 kind=$2 file=$3 found
    found="$(failed_tests "$kind" "$file")"
    [[ -n "$found" ]] || found="$(failed_tests other "$file")"
    [[ -n "$found" ]] || found="$(printf '(no test)\tno output: see above')"
    awk -F '\t' -v step="$step" '{ print step ": " $1 ": " $2 }' <<<"$found" >>"$FAILURE_LIST"
}

# print_failures: the failed tests noted so far, bounded, just before the summary line.
print_failures() {
    local count
    [[ -s "$FAILURE_LIST" ]] || return 0
    count="$(wc -l <"$FAILURE_LIST")"
    log "failed tests ($count)${LOG_DIR:+, full output in $LOG_DIR/}:"
    head -n "$MAX_FAILURES_LISTED" "$FAILURE_LIST" | while IFS= read -r line; do
        if [[ ${#line} -gt $MAX_FAILURE_LINE ]]; then
            line="${line:0:$((MAX_FAILURE_LINE - 3))}..."
        fi
        log "  $line"
    done
    if [[ $count -gt $MAX_FAILURES_LISTED ]]; then
        log "  ... and $((count - MAX_FAILURES_LISTED)) more"
    fi
}

# logged STEP KIND CMD...: run CMD with its output (stdout and stderr) both on the console
# and in $LOG_DIR/STEP.log; when it fails, note its failed tests (KIND as for failed_tests).
# Returns CMD's exit status. The output goes to tee through a descriptor rather than a pipe
# so that a process CMD leaves behind holding its output (a test's child after an abort)
# cannot keep the step waiting for tee: tee gets a few seconds to finish the file.
logged() {
    local step=$1 kind=$2 file out tee_pid rc=0 i
    shift 2
    file="${LOG_DIR:-/tmp}/$step.log"
    STEP_KIND[$step]=$kind
    exec {out}> >(tee "$file")
    tee_pid=$!
    "$@" >&"$out" 2>&1 || rc=$?
    exec {out}>&-
    for ((i = 0; i < 50; i++)); do
        kill -0 "$tee_pid" 2>/dev/null || break
        sleep 0.1
    done
    [[ $rc -eq 0 ]] || note_failures "$step" "$kind" "$file"
    return "$rc"
}

trap summary EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# test_counts KIND LOG: "RAN SKIPPED APART IGNORED" of a test run's output. RAN leaves out the
# tests that printed `SKIPPED: NAME: WHY` (tests/common skip.rs), which count as SKIPPED; APART
# is how many of those that ran printed `NOT HERE: NAME: WHY` (each test once):
#   cargo   the `test result:` lines' passed + failed, and ignored
#   pytest  the last summary line's passed + failed + errors, and skipped
#   node    TAP's `# pass`, `# fail`, and `# skipped` + `# todo`
test_counts() {
    local kind=$1 file=$2
    awk -v kind="$kind" '
        function count(word,    m) { return match($0, "[0-9]+ " word) ? substr($0, RSTART, RLENGTH) + 0 : 0 }
        /^SKIPPED: / { skipped++; next }
        /^NOT HERE: / { split($0, part, ": "); if (!(part[2] in seen)) { seen[part[2]] = 1; apart++ }; next }
        kind == "cargo" && /^test result: / { ran += count("passed") + count("failed"); ignored += count("ignored") }
        kind == "pytest" && /[0-9]+ (passed|failed|skipped|errors?)[ ,].*in [0-9.]+s/ {
            pran = count("passed") + count("failed") + count("error"); pskipped = count("skipped")
        }
        kind == "node" && /^# (pass|fail) [0-9]+$/ { ran += $3 }
        kind == "node" && /^# (skipped|todo) [0-9]+$/ { ignored += $3 }
        END {
            ran += pran; ignored += pskipped
            ran -= skipped
            printf "%d %d %d %d\n", (ran < 0 ? 0 : ran), skipped, apart, ignored
        }
    ' "$file"
}

# step NAME CMD...: run a step, record NAME=ok|FAIL and its duration, and for a step that ran
# tests (through logged) how many ran and were skipped; a step that ran none fails.
step() {
    local name=$1 s rc=0 counts="" ran skipped apart ignored leaving=""
    shift
    log "==== $name: $*"
    s="$(now)"
    "$@" || rc=$?
    if [[ -n "${STEP_KIND[$name]:-}" && "${STEP_KIND[$name]}" =~ ^(cargo|pytest|node)$ && $name != test-build && $name != clippy ]]; then
        read -r ran skipped apart ignored < <(test_counts "${STEP_KIND[$name]}" "$LOG_DIR/$name.log")
        ((apart == 0)) || leaving=" ($apart of them leaving out a check not for this backend)"
        counts="; ran $ran$leaving, skipped $skipped, ignored $ignored"
        log "==== $name: ran $ran tests$leaving, skipped $skipped (missing what they need), ignored $ignored"
        if [[ $ran -eq 0 && $rc -eq 0 ]]; then
            log "==== $name ran no test"
            echo "$name: (no test): the step ran no test" >>"$FAILURE_LIST"
            rc=1
        fi
    fi
    if [[ $rc -eq 0 ]]; then
        RESULTS+=("$name=ok($(elapsed_since "$s")$counts)")
    else
        RESULTS+=("$name=FAIL($(elapsed_since "$s")$counts)")
        FAILED=1
        log "==== $name FAILED (exit $rc)"
    fi
    return "$rc"
}

DISK_AT_START="$(free_gib "$SANDBOXD_ROOT")"
log "disk: $DISK_AT_START GiB free where the work tree is"
if [[ $DISK_AT_START -lt $RUN_NEEDS_GIB ]]; then
    warn "a whole run needs about $RUN_NEEDS_GIB GiB of free disk and $DISK_AT_START GiB is free: steps will fail with \"No space left on device\"; the largest directories of this machine:"
    timeout 120 du -xh --max-depth=2 / 2>/dev/null | sort -rh | sed -n '2,11p' >&2 || true
fi

# Setup steps: a failure here makes the rest pointless, stop at once.
# The suites run sandboxes on gVisor too.
export SANDBOXD_GVISOR=1
step host-setup "$SANDBOXD_SCRIPTS/host-setup.sh" || exit 1
# shellcheck disable=SC2086 # the list is one word per package
ensure_packages $SANDBOXD_TEST_PACKAGES
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
LOG_DIR="$(cargo_target_dir)/test-logs"
mkdir -p "$LOG_DIR"

# The Kubernetes backend on a single-node cluster of this host (scripts/k8s-up.sh: built from
# Go modules once per machine, then started in seconds): its own suite, and the suites shared
# with Docker that matter for a backend, with every service's sandboxes as pods. The kubernetes
# suite's tests are ignored without a cluster (the test step), so they are included here; the
# shared suites have no ignored test.
KUBERNETES_SUITES="kubernetes kubernetes_volumes kubernetes_chart volumes files files_meta archive processes ports cli_ports kernel pool api state adversarial snapshots webhooks cli_stream"
kubernetes_tests() {
    local up kubeconfig kubectl helm interpreter suites=() suite
    # The Kubernetes backend builds no recipe: the code-context suite runs on the interpreter
    # recipe's image the test step's Docker-backed services built (the newest, by its label).
    interpreter="$(docker images --filter label=org.sandboxd.recipe=python-interpreter \
        --format '{{.Repository}}:{{.Tag}}' | head -n 1)"
    up="$(SANDBOXD_AGENT="$SANDBOXD_AGENT" SANDBOXD_K8S_IMAGES="$interpreter" \
        "$SANDBOXD_SCRIPTS/k8s-up.sh")" || return 1
    kubeconfig="$(sed -n 's/^KUBECONFIG=//p' <<<"$up")"
    kubectl="$(sed -n 's/^KUBECTL=//p' <<<"$up")"
    helm="$(sed -n 's/^HELM=//p' <<<"$up")"
    if [[ -z "$kubeconfig" || -z "$kubectl" || -z "$helm" ]]; then
        warn "scripts/k8s-up.sh printed no KUBECONFIG"
        return 1
    fi
    # What a killed run's chart tests left: their namespaces (with the releases in them) and
    # the releases' cluster-wide roles, by label.
    "$kubectl" --kubeconfig "$kubeconfig" delete namespace -l org.sandboxd.test=chart --wait=false >/dev/null 2>&1 || true
    "$kubectl" --kubeconfig "$kubeconfig" delete clusterrole,clusterrolebinding \
        -l app.kubernetes.io/name=sandboxd >/dev/null 2>&1 || true
    for suite in $KUBERNETES_SUITES; do suites+=(--test "$suite"); done
    logged kubernetes cargo env SANDBOXD_TEST_KUBECONFIG="$kubeconfig" SANDBOXD_TEST_KUBECTL="$kubectl" \
        SANDBOXD_TEST_HELM="$helm" SANDBOXD_TEST_INTERPRETER_IMAGE="$interpreter" \
        cargo test -p sandboxd "${suites[@]}" --no-fail-fast -- --include-ignored
}

# The shared backend suites again with every runtime of their configs on gVisor (runsc,
# registered by host-setup): what works on runc works on a kernel of the sandbox's own. (The
# memory suite, pause to disk, names gVisor in its own runtimes: it runs in the test step.)
GVISOR_SUITES="files processes pool api state snapshots adversarial volumes kernel cli_stream egress egress_secrets"
gvisor_tests() {
    local suites=() suite
    for suite in $GVISOR_SUITES; do suites+=(--test "$suite"); done
    logged gvisor cargo env SANDBOXD_TEST_ISOLATION=gvisor \
        cargo test -p sandboxd "${suites[@]}" --no-fail-fast
}

# Checks: run them all, collect the verdicts.
# Compiling the tests builds the agent crate for the host too, which replaces
# target/debug/sandboxd-agent (next to sandboxd) with a dynamic binary; put
# the static one back before running them (a fresh `cargo test` does not
# copy it again).
# Each step's output is also kept in $LOG_DIR, and its failed tests are listed at the end.
if step test-build logged test-build cargo cargo test --workspace --no-run; then
    install_static_agent debug >/dev/null
    step test logged test cargo cargo test --workspace --no-fail-fast "$@" || true
    # Restarting an engine stops its containers: this test restarts an engine of its own
    # (scripts/test-engine.sh), and runs alone, after the others, so its load is theirs to miss.
    step engine-restart logged engine-restart cargo \
        cargo test -p sandboxd --test engine_restart -- --ignored || true
    step kubernetes kubernetes_tests || true
    step gvisor gvisor_tests || true
fi
remove_labelled "$TEST_LABEL"
remove_test_sandboxes

# The dashboard in a real browser: Debian's Chromium driven by playwright-core (pinned in
# tests/browser/package-lock.json) against a real service on loopback and the real engine.
# The tests start the service themselves and stop it, with its sandboxes, when they end;
# anything a killed run left (listed in a pid file) is ended here. Screenshots of every tab
# land in test-output/screenshots/. The desktop's live view (desktop.test.js) builds the
# catalogue's desktop recipe when the machine has not yet (about 4 minutes, then shared with
# the MCP and e2b steps, which come later).
browser_tests() {
    local pidfile rc=0 pid dir
    if ! have node || ! have npm; then
        ensure_packages nodejs npm
    fi
    have chromium || ensure_packages chromium
    (cd "$SANDBOXD_ROOT/tests/browser" && npm ci --no-audit --no-fund --loglevel=error) || return 1
    pidfile="$(mktemp)"
    # TAP (what node prints when not on a terminal anyway), which the failure list reads.
    logged browser node env SANDBOXD_BIN="$(cargo_target_dir)/debug/sandboxd" \
        SANDBOXD_BROWSER_PIDFILE="$pidfile" node --test --test-concurrency=1 --test-reporter=tap \
        "$SANDBOXD_ROOT/tests/browser/" || rc=$?
    while read -r pid dir; do
        if [[ -n "$pid" && "$(cat "/proc/$pid/comm" 2>/dev/null)" == "sandboxd" ]]; then
            kill -9 "$pid" 2>/dev/null || true
        fi
        [[ "$dir" == /tmp/sbdb* ]] && rm -rf "$dir"
    done <"$pidfile"
    rm -f "$pidfile"
    remove_test_sandboxes
    # The images a killed run's build tests left (real-use.test.js and manage.test.js remove their own
    # when they end).
    docker images -q --filter 'reference=sandboxd/recipe-t21-*' --filter 'reference=sandboxd/recipe-t55-*' | sort -u | xargs -r docker rmi -f >/dev/null 2>&1 || true
    return "$rc"
}
step browser browser_tests || true

# The MCP server driven by the official MCP Python SDK (tests/mcp) over streamable HTTP and
# stdio; the tests start their own service on loopback and remove its sandboxes. Collecting
# no test (pytest's exit code 5) fails this step like any other non-zero exit: the suite must run.
python_tests() {
    local suite=$1 python
    python="$(ensure_venv "$suite")" || return 1
    # -rfE: a "FAILED|ERROR test - message" line per failure at the end, which the list reads.
    logged "$suite" pytest env SANDBOXD_BIN="$(cargo_target_dir)/debug/sandboxd" PYTHONDONTWRITEBYTECODE=1 \
        "$python" -m pytest -q -s -rfE -p no:cacheprovider "$SANDBOXD_ROOT/tests/$suite"
}
# The MCP suite, with the official Python SDK as the client; and the MCP Inspector's CLI
# (tests/mcp/package-lock.json, with the Node 22 it needs from npm) checking every tool's schema.
mcp_tests() {
    if ! have node || ! have npm; then
        ensure_packages nodejs npm
    fi
    (cd "$SANDBOXD_ROOT/tests/mcp" && npm ci --no-audit --no-fund --loglevel=error) || return 1
    python_tests mcp
}
step mcp mcp_tests || true
remove_test_sandboxes
# The API fuzzed by schemathesis from the served OpenAPI document: no 5xx, no crash, no answer
# that violates the document, over a bounded number of cases.
step fuzz python_tests fuzz || true
remove_test_sandboxes
# The E2B-compatible API driven by the official E2B SDKs, unchanged (tests/e2b): the e2b
# Python package with pytest, which also runs the e2b npm package's suite with node's runner;
# E2B's Desktop SDKs (e2b-desktop, @e2b/desktop) on the embedded default's desktop runtime,
# whose recipe is built once per machine (about 4 minutes; the browser step's live view, the
# MCP step's computer test and this one share the image).
e2b_tests() {
    if ! have node || ! have npm; then
        ensure_packages nodejs npm
    fi
    (cd "$SANDBOXD_ROOT/tests/e2b" && npm ci --no-audit --no-fund --loglevel=error) || return 1
    python_tests e2b
}
step e2b e2b_tests || true
remove_test_sandboxes

# suite_again STEP SUITE [NAME=VALUE...] -- [PYTEST ARGS...]: a Python suite once more as step
# STEP, with the environment given (a tier, a backend); paths relative to the clone.
suite_again() {
    local step=$1 suite=$2 python env=()
    shift 2
    while [[ $# -gt 0 && $1 != -- ]]; do
        env+=("$1")
        shift
    done
    shift
    python="$(ensure_venv "$suite")" || return 1
    logged "$step" pytest env SANDBOXD_BIN="$(cargo_target_dir)/debug/sandboxd" PYTHONDONTWRITEBYTECODE=1 \
        "${env[@]}" "$python" -m pytest -q -s -rfE -p no:cacheprovider "$@"
}

# The MCP and E2B faces again with every runtime on gVisor, a few files of each (what their
# clients see must not change with the tier; the whole suites on runc above); E2B's pause
# there goes to disk, and its connect restores the processes; snapshots and forks carry the
# processes; E2B's Desktop SDKs drive the embedded default's desktop on gVisor (the image is
# the runc step's).
gvisor_face_tests() {
    local suite=$1
    shift
    suite_again "gvisor-$suite" "$suite" SANDBOXD_TEST_ISOLATION=gvisor -- "${@/#/tests/$suite/}"
}
step gvisor-mcp gvisor_face_tests mcp test_mcp.py || true
step gvisor-e2b gvisor_face_tests e2b test_commands.py test_files.py test_sandbox.py test_volumes.py test_pause.py test_desktop.py || true
remove_test_sandboxes

# The MCP and E2B faces again with the services' sandboxes as pods, on the cluster the
# kubernetes step started (k8s-up.sh finds it up). Left out by name, what the Kubernetes backend
# does not offer and the Docker runs cover: pause (no freezer for a pod; the MCP schema test
# pauses too), egress runtimes (and secrets, which need one), recipe builds (code interpreter,
# desktop), E2B's volumes (its SDK reaches a volume's files without a sandbox, which the
# Kubernetes backend does not serve; tests/kubernetes_volumes.rs covers volumes there), and
# the npm suite, which pauses, uses egress and volumes in one file.
E2B_NOT_ON_KUBERNETES=(
    --ignore=tests/e2b/test_network.py --ignore=tests/e2b/test_code_interpreter.py
    --ignore=tests/e2b/test_node_sdk.py --ignore=tests/e2b/test_desktop.py
    --ignore=tests/e2b/test_volumes.py --ignore=tests/e2b/test_secrets.py
    --deselect tests/e2b/test_pause.py::test_pause_then_connect_keeps_files_and_a_background_process
    --deselect tests/e2b/test_pause.py::test_a_paused_sandbox_resumes_when_used
    --deselect tests/e2b/test_pause.py::test_auto_pause_pauses_at_the_timeout_instead_of_ending
    --deselect tests/e2b/test_pause.py::test_a_pause_that_would_drop_memory_is_refused
)
MCP_NOT_ON_KUBERNETES=(
    --ignore=tests/mcp/test_mcp_network.py --ignore=tests/mcp/test_mcp_code.py
    --ignore=tests/mcp/test_mcp_computer.py --ignore=tests/mcp/test_mcp_secrets.py
    -k "not pause_snapshot_open_and_fork and not every_schema_matches"
)
# cluster_face_tests STEP SUITE [NAME=VALUE ...] -- [PYTEST ARGS ...]: a Python suite again as
# STEP, pointed at the cluster (k8s-up.sh finds it up) with the environment given.
cluster_face_tests() {
    local step=$1 suite=$2 up
    shift 2
    up="$(SANDBOXD_AGENT="$SANDBOXD_AGENT" "$SANDBOXD_SCRIPTS/k8s-up.sh")" || return 1
    suite_again "$step" "$suite" \
        SANDBOXD_TEST_KUBECONFIG="$(sed -n 's/^KUBECONFIG=//p' <<<"$up")" \
        SANDBOXD_TEST_KUBECTL="$(sed -n 's/^KUBECTL=//p' <<<"$up")" \
        SANDBOXD_TEST_HELM="$(sed -n 's/^HELM=//p' <<<"$up")" "$@"
}
step kubernetes-mcp cluster_face_tests kubernetes-mcp mcp -- tests/mcp "${MCP_NOT_ON_KUBERNETES[@]}" || true
step kubernetes-e2b cluster_face_tests kubernetes-e2b e2b -- tests/e2b "${E2B_NOT_ON_KUBERNETES[@]}" || true
# The MCP client's and the E2B SDK's core files once more, against the service itself running
# in the cluster: installed by the chart (deploy/helm/sandboxd) in a namespace of its own, its
# sessions pods beside it (tests/conftest.py's service_in_cluster).
step in-cluster-mcp cluster_face_tests in-cluster-mcp mcp SANDBOXD_TEST_IN_CLUSTER=1 -- \
    tests/mcp/test_mcp.py -k "not pause_snapshot_open_and_fork and not every_schema_matches" || true
step in-cluster-e2b cluster_face_tests in-cluster-e2b e2b SANDBOXD_TEST_IN_CLUSTER=1 -- \
    tests/e2b/test_commands.py tests/e2b/test_files.py tests/e2b/test_sandbox.py || true
remove_test_sandboxes

# The book (docs/): built with mdBook (installed by cargo once per machine), its links checked
# and its config keys, routes, MCP tools, metrics and CLI flags compared with the code's both
# ways (scripts/book.sh, docs/check.py).
step book logged book other "$SANDBOXD_SCRIPTS/book.sh" || true
remove_test_sandboxes

# The Debian package installed in a clean Debian container, its service answering /healthz
# (scripts/package.sh --test), made from the debug build the other steps use (cargo-deb is
# installed once per machine, about a minute). With SANDBOXD_TEST_PACKAGE=release, from the
# release build the package ships as, which no other step makes (about 17 CPU-minutes).
package_flags=(--debug)
[[ "${SANDBOXD_TEST_PACKAGE:-}" == release ]] && package_flags=()
step package logged package other "$SANDBOXD_SCRIPTS/package.sh" "${package_flags[@]}" --test || true

step fmt logged fmt fmt cargo fmt --all -- --check || true
step clippy logged clippy cargo cargo clippy --workspace --all-targets -- -D warnings || true

# leftovers_in LEDGER: what the tests noted in LEDGER (SANDBOXD_TEST_LEDGER: `KIND NAME TEST`
# lines) that is still there, one "KIND NAME (made by TEST)" a line. Only this run's own
# things are looked at: another service's network state on the host is none of the tests'.
leftovers_in() {
    local ledger=$1 kind name test chains namespaces there
    [[ -s "$ledger" ]] || return 0
    chains="$(iptables-save 2>/dev/null | sed -n 's/^:\([^ ]*\) .*/\1/p')"
    namespaces="$(ip netns list 2>/dev/null | awk '{ print $1 }')"
    sort -u "$ledger" | while read -r kind name test; do
        case "$kind" in
            instance) there="$(docker ps -aq --filter "label=org.sandboxd.instance=$name" 2>/dev/null)" ;;
            network) there="$(docker network ls -q --filter "name=^$name\$" 2>/dev/null)" ;;
            # The network's chains are NAME, NAME-IN, NAME-FWD and NAME-OUT.
            chain) there="$(grep -E "^$name(-|\$)" <<<"$chains" || true)" ;;
            netns) there="$(grep -Fx "$name" <<<"$namespaces" || true)" ;;
            *) there="" ;;
        esac
        [[ -z "$there" ]] || echo "$kind $name (made by $test)"
    done
}

# The egress suites (crates/sandboxd-egress/tests/proxy.rs, crates/sandboxd/tests/egress*.rs)
# ran in the test step; again on their own they take seconds and say plainly whether egress
# works, then nothing they made may be left: no sandbox, namespace, firewall chain or network.
egress_tests() {
    local ledger left
    ledger="$LOG_DIR/egress-made.txt"
    : >"$ledger"
    local -x SANDBOXD_TEST_LEDGER="$ledger"
    cargo test -p sandboxd-egress --test proxy || return 1
    cargo test -p sandboxd --test egress || return 1
    cargo test -p sandboxd --test egress_secrets || return 1
    left="$(leftovers_in "$ledger")"
    if [[ -n "$left" ]]; then
        sed 's/^/error: the egress tests left /' <<<"$left" >&2
        return 1
    fi
    echo "the egress tests noted $(wc -l <"$ledger") things they made; none is left"
}
step egress logged egress cargo egress_tests || true
