#!/usr/bin/env bash
# Build the workspace binaries:
#   - sandboxd (the service), normal host build;
#   - sandboxd-agent (runs inside the sandboxes) as a STATIC binary
#     (-C target-feature=+crt-static, built with an explicit --target so the
#     flag does not reach build scripts / proc macros), copied next to the
#     sandboxd binary as target/<profile>/sandboxd-agent, where the service
#     looks for it.
#
# Usage: scripts/build.sh [--release] [extra cargo build args...]
# Prints the path of the copied static agent on stdout.
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PROFILE_FLAG=()
PROFILE_DIR=debug
EXTRA=()
for arg in "$@"; do
    case "$arg" in
        --release | -r)
            PROFILE_FLAG=(--release)
            PROFILE_DIR=release
            ;;
        -h | --help)
            sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
            exit 0
            ;;
        *) EXTRA+=("$arg") ;;
    esac
done

ensure_rust
cd "$SANDBOXD_ROOT"

TRIPLE="$(rust_host_triple)"
case "$TRIPLE" in
    *-linux-gnu) ;;
    *) die "unsupported host target $TRIPLE (the static agent build expects *-linux-gnu)" ;;
esac
TARGET_DIR="$(cargo_target_dir)"

CARGO_BUILD="cargo build${PROFILE_FLAG[*]:+ ${PROFILE_FLAG[*]}}"

start="$(now)"
log "$CARGO_BUILD -p sandboxd"
cargo build "${PROFILE_FLAG[@]}" "${EXTRA[@]}" -p sandboxd
log "built sandboxd in $(elapsed_since "$start")"

start="$(now)"
log "RUSTFLAGS=+crt-static $CARGO_BUILD -p sandboxd-agent --target $TRIPLE"
RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-feature=+crt-static" \
    cargo build "${PROFILE_FLAG[@]}" "${EXTRA[@]}" -p sandboxd-agent --target "$TRIPLE"
log "built sandboxd-agent in $(elapsed_since "$start")"

install_static_agent "$PROFILE_DIR"
[[ -x "$TARGET_DIR/$PROFILE_DIR/sandboxd" ]] || warn "$TARGET_DIR/$PROFILE_DIR/sandboxd not found next to the agent"
