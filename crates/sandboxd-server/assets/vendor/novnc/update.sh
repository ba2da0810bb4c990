#!/usr/bin/env bash
# Re-vendors noVNC's client library for the dashboard's live view of a desktop session: run it
# by hand when upgrading, then commit the result. Nothing here runs at build or test time.
# Usage: update.sh [@novnc/novnc version] [esbuild version]
#
# noVNC ships as some forty ES modules (core/ and its vendored pako); esbuild joins them into
# one module, rfb.mjs, whose default export is the RFB class, so the service compiles in one
# file. Nothing else changes: noVNC styles its elements through the CSSOM (which the page's
# policy allows) and puts nothing through an HTML parser.
set -euo pipefail
NOVNC_VERSION="${1:-1.7.0}"
ESBUILD_VERSION="${2:-0.28.2}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
npm init -y >/dev/null
npm install --no-audit --no-fund "@novnc/novnc@$NOVNC_VERSION" "esbuild@$ESBUILD_VERSION" >/dev/null
N=node_modules/@novnc/novnc
# ES2022: noVNC probes the browser's H.264 decoder with a top-level await.
npx esbuild "$N/core/rfb.js" --bundle --format=esm --target=es2022 --legal-comments=inline \
    --log-level=warning --outfile="$HERE/rfb.mjs"
cp "$N/LICENSE.txt" "$HERE/LICENSE.novnc"
cp "$N/docs/LICENSE.MPL-2.0" "$HERE/LICENSE.MPL-2.0"
cp "$N/vendor/pako/LICENSE" "$HERE/LICENSE.pako"
printf '@novnc/novnc %s\nesbuild %s (bundler)\n' \
    "$(node -p "require('./$N/package.json').version")" \
    "$(node -p "require('./node_modules/esbuild/package.json').version")" >"$HERE/VERSIONS"
echo "vendored: $(tr '\n' ' ' <"$HERE/VERSIONS")"
