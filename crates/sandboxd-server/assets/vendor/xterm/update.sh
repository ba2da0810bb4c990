#!/usr/bin/env bash
# Re-vendors xterm.js for the dashboard: run it by hand when upgrading, then commit the result.
# Nothing here runs at build or test time. Usage: update.sh [xterm version] [addon-fit version]
#
# One change is made to xterm.mjs: its DOM renderer sets 24-bit colours through a style
# attribute (setAttribute("style", ...)), which the page's Content-Security-Policy refuses
# (style-src-attr 'none'); the patch sets the same property through the CSSOM instead, which
# a policy does not restrict. The build fails if the patched code is not found.
set -euo pipefail
XTERM_VERSION="${1:-6.0.0}"
FIT_VERSION="${2:-0.11.0}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
npm init -y >/dev/null
npm install --no-audit --no-fund "@xterm/xterm@$XTERM_VERSION" "@xterm/addon-fit@$FIT_VERSION" >/dev/null
X=node_modules/@xterm/xterm
F=node_modules/@xterm/addon-fit
original='_addStyle(t,e){t.setAttribute("style",`${t.getAttribute("style")||""}${e};`)}'
patched='_addStyle(t,e){let i=e.indexOf(":");t.style.setProperty(e.slice(0,i),e.slice(i+1))}'
grep -qF "$original" "$X/lib/xterm.mjs" || { echo "the code to patch is not in this xterm version" >&2; exit 1; }
python3 - "$X/lib/xterm.mjs" "$original" "$patched" <<'PY'
import sys
path, old, new = sys.argv[1:]
text = open(path, encoding="utf-8").read()
text = text.replace(old, new).replace("\n//# sourceMappingURL=xterm.mjs.map", "\n")
open(path, "w", encoding="utf-8").write(text)
PY
sed '/^\/\/# sourceMappingURL=/d' "$F/lib/addon-fit.mjs" >"$HERE/addon-fit.mjs"
cp "$X/lib/xterm.mjs" "$HERE/xterm.mjs"
cp "$X/css/xterm.css" "$HERE/xterm.css"
cp "$X/LICENSE" "$HERE/LICENSE.xterm"
cp "$F/LICENSE" "$HERE/LICENSE.addon-fit"
printf '@xterm/xterm %s\n@xterm/addon-fit %s\n' \
    "$(node -p "require('./$X/package.json').version")" \
    "$(node -p "require('./$F/package.json').version")" >"$HERE/VERSIONS"
echo "vendored: $(tr '\n' ' ' <"$HERE/VERSIONS")"
