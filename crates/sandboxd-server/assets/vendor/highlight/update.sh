#!/usr/bin/env bash
# Re-vendors the notebook's syntax highlighter: Highlight.js's core and the grammars of the
# languages the code-interpreter recipe has kernels for, as the ES modules of
# @highlightjs/cdn-assets. Run it by hand when upgrading, then commit the result; nothing here
# runs at build or test time. Usage: update.sh [@highlightjs/cdn-assets version]
#
# js/highlight.js builds the page's nodes from the token tree a highlight leaves
# (`result._emitter.root`), never from its HTML: the build fails if that tree is not found.
set -euo pipefail
VERSION="${1:-11.12.0}"
LANGUAGES=(python javascript typescript r bash java)
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
npm init -y >/dev/null
npm install --no-audit --no-fund "@highlightjs/cdn-assets@$VERSION" >/dev/null
H=node_modules/@highlightjs/cdn-assets
grep -q 'get root(){return this.rootNode}' "$H/es/core.min.js" \
    || { echo "the token tree (get root) is not in this Highlight.js version" >&2; exit 1; }
grep -q '_emitter:' "$H/es/core.min.js" \
    || { echo "a highlight's _emitter is not in this Highlight.js version" >&2; exit 1; }
rm -rf "$HERE/languages"
mkdir -p "$HERE/languages"
sed '/sourceMappingURL=/d' "$H/es/core.min.js" >"$HERE/core.min.js"
for language in "${LANGUAGES[@]}"; do
    sed '/sourceMappingURL=/d' "$H/es/languages/$language.min.js" >"$HERE/languages/$language.min.js"
done
cp "$H/LICENSE" "$HERE/LICENSE"
printf '@highlightjs/cdn-assets %s\n' "$(node -p "require('./$H/package.json').version")" >"$HERE/VERSIONS"
echo "vendored: $(cat "$HERE/VERSIONS") (${LANGUAGES[*]})"
