#!/usr/bin/env bash
# remove-egress.sh INSTANCE_ID: removes the egress network a test service of that instance
# made and the firewall chains named after it, with their jumps, through the service's own
# removal (`sandboxd serve --remove-network-state`). The service leaves both in place when it
# is killed; its sandboxes must be removed first. The sandboxd program is $SANDBOXD_BIN, else
# the debug build.
set -euo pipefail
instance=${1:?usage: remove-egress.sh INSTANCE_ID}
bin=${SANDBOXD_BIN:-$(dirname "${BASH_SOURCE[0]}")/../target/debug/sandboxd}
[[ -x "$bin" ]] || { echo "remove-egress.sh: no sandboxd program at $bin (build it first)" >&2; exit 1; }
# The test service's state directory is gone: a scratch one holding its id stands in.
state_dir="$(mktemp -d)"
trap 'rm -rf "$state_dir"' EXIT
printf '%s\n' "$instance" >"$state_dir/instance-id"
"$bin" serve --state-dir "$state_dir" --remove-network-state >/dev/null
