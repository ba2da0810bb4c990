#!/usr/bin/env bash
# Builds the book (docs/) into target/book and checks the pages against the code: every
# relative link and anchor resolves, and every config key, route, MCP tool, metric and CLI flag
# the code has is documented, and nothing documented is missing from the code (docs/check.py).
#
# The routes, tools and metrics are read from a service started here for the purpose (on a free
# loopback port, its own state directory, no sessions), so it needs the Docker engine that
# scripts/host-setup.sh starts; the config keys from the config crate's types; the flags from
# the binary's --help.
#
#   scripts/book.sh            build and check
#   scripts/book.sh --serve    also serve the book on http://127.0.0.1:3000 while you edit
set -euo pipefail
cd "$(dirname "$0")/.."

MDBOOK_VERSION=0.5.4

if [ "$(mdbook --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]; then
    echo "book: installing mdbook $MDBOOK_VERSION (cargo install, once)"
    cargo install mdbook --locked --version "$MDBOOK_VERSION" --no-default-features --features search
fi

mdbook build docs
echo "book: built into target/book (open target/book/index.html)"

# The service copies its agent at start even though the check opens no session: the static
# agent scripts/build.sh makes (a build of both), or the one SANDBOXD_AGENT names.
agent=${SANDBOXD_AGENT:-target/x86_64-unknown-linux-gnu/debug/sandboxd-agent}
if [ -x "$agent" ]; then
    cargo build --quiet -p sandboxd --bin sandboxd
else
    bash scripts/build.sh >/dev/null
fi
binary=target/debug/sandboxd

state=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$binary" serve --listen "127.0.0.1:$port" --state-dir "$state" --agent "$agent" >"$state/log" 2>&1 &
service=$!
stop_service() {
    kill "$service" 2>/dev/null && wait "$service" 2>/dev/null
    rm -rf "$state"
}
trap stop_service EXIT

for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
    if ! kill -0 "$service" 2>/dev/null; then
        echo "book: the service for the docs check did not start (is the Docker engine up? scripts/host-setup.sh):" >&2
        cat "$state/log" >&2
        exit 1
    fi
    sleep 0.5
done

python3 docs/check.py --binary "$binary" --url "http://127.0.0.1:$port" --token-file "$state/token"

if [ "${1:-}" = "--serve" ]; then
    mdbook serve docs --hostname 127.0.0.1
fi
