#!/usr/bin/env bash
# The benchmark: sandboxd against the raw Docker Engine API, in one run on this engine.
#   1. host setup, images, release build incl. the static agent
#   2. target/release/sandboxd-bench (starts its own service; cleans up after itself), with
#      the E2B SDK row (the python image and the tests' pinned e2b venv)
#
#   3. with --kubernetes: the single-node cluster (scripts/k8s-up.sh) and the same create, exec
#      and close with the sandboxes as pods, beside the Docker figures
#
#   3b. with --gvisor: the same create (cold and warm), exec and close with every runtime on
#      gVisor (host setup then builds and registers runsc), beside the runc figures
#
#   4. with --scale N: the scale run, N sessions open at once (opened by --scale-clients
#      clients, 20 by default; --scale-only for that run alone); see crates/sandboxd-bench/src/scale.rs
#
# Usage: scripts/bench.sh [--kubernetes] [--gvisor] [--iterations N] [--scale N [--scale-only]]
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$SANDBOXD_ROOT"

# The gVisor rows need runsc on the engine, which host setup builds and registers on request.
if [[ " $* " == *" --gvisor "* ]]; then
    export SANDBOXD_GVISOR=1
fi
"$SANDBOXD_SCRIPTS/host-setup.sh"
"$SANDBOXD_SCRIPTS/build-images.sh" busybox python
ensure_rust
agent="$("$SANDBOXD_SCRIPTS/build.sh" --release | tail -n 1)"
cargo build --release -p sandboxd-bench
e2b_python="$(ensure_venv e2b)"
extra=()
if [[ "${1:-}" == "--kubernetes" ]]; then
    shift
    kubeconfig="$(SANDBOXD_AGENT="$agent" "$SANDBOXD_SCRIPTS/k8s-up.sh" | sed -n 's/^KUBECONFIG=//p')"
    extra=(--kubeconfig "$kubeconfig")
fi
exec "$(cargo_target_dir)/release/sandboxd-bench" \
    --sandboxd "$(cargo_target_dir)/release/sandboxd" --agent "$agent" --e2b-python "$e2b_python" \
    "${extra[@]}" "$@"
