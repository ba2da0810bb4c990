#!/usr/bin/env bash
# Quickstart command 1: from a fresh machine to a running service.
#   1. host setup (packages, dockerd)         scripts/host-setup.sh
#   2. local images (python + busybox)        scripts/build-images.sh python busybox
#   3. release build incl. the static agent   scripts/build.sh --release
#   4. exec target/release/sandboxd serve "$@"
#      (the service prints where it listens and where its token is)
#
# Runnable from any directory; every step is idempotent, so re-running it
# only rebuilds what changed.
#
# Usage: scripts/up.sh [args for `sandboxd serve`...]
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$SANDBOXD_ROOT"

"$SANDBOXD_SCRIPTS/host-setup.sh"
"$SANDBOXD_SCRIPTS/build-images.sh" python busybox
ensure_rust
"$SANDBOXD_SCRIPTS/build.sh" --release >/dev/null

SANDBOXD_BIN="$(cargo_target_dir)/release/sandboxd"
[[ -x "$SANDBOXD_BIN" ]] || die "$SANDBOXD_BIN was not built"
log "starting: $SANDBOXD_BIN serve $*"
exec "$SANDBOXD_BIN" serve "$@"
