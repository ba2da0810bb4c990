#!/usr/bin/env bash
# Re-vendors the API reference's renderer (/docs/api): Swagger UI's browser bundle and its
# stylesheet from swagger-ui-dist, and DOMPurify, which the page's Trusted Types policy runs
# every HTML string through. Run it by hand when upgrading, then commit the result; nothing here
# runs at build or test time. Usage: update.sh [swagger-ui-dist version] [dompurify version]
set -euo pipefail
SWAGGER_VERSION="${1:-5.36.0}"
PURIFY_VERSION="${2:-3.5.0}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
npm init -y >/dev/null
npm install --no-audit --no-fund "swagger-ui-dist@$SWAGGER_VERSION" "dompurify@$PURIFY_VERSION" >/dev/null
S=node_modules/swagger-ui-dist
P=node_modules/dompurify
sed '/^\/\/# sourceMappingURL=/d' "$S/swagger-ui-bundle.js" >"$HERE/swagger-ui-bundle.js"
sed '/sourceMappingURL=/d' "$S/swagger-ui.css" >"$HERE/swagger-ui.css"
sed '/^\/\/# sourceMappingURL=/d' "$P/dist/purify.min.js" >"$HERE/purify.min.js"
cp "$S/LICENSE" "$HERE/LICENSE.swagger-ui"
cp "$P/LICENSE" "$HERE/LICENSE.dompurify"
printf 'swagger-ui-dist %s\ndompurify %s\n' \
    "$(node -p "require('./$S/package.json').version")" \
    "$(node -p "require('./$P/package.json').version")" >"$HERE/VERSIONS"
echo "vendored: $(tr '\n' ' ' <"$HERE/VERSIONS")"
