#!/usr/bin/env bash
# Builds the Debian package of sandboxd with `cargo deb` (installed once per machine), from the
# release build of scripts/build.sh: /usr/bin/sandboxd, the static agent as
# /usr/lib/sandboxd/sandboxd-agent, the systemd unit (crates/sandboxd/debian/) and
# /etc/sandboxd/config.toml, the embedded default, as a conffile. Prints the package's path.
#
#   scripts/package.sh          build target/debian/sandboxd_<version>-1_<arch>.deb
#   scripts/package.sh --debug  the same from the debug build (what scripts/test.sh builds
#                               anyway; stripped, fast compression): for testing the package,
#                               not for shipping
#   scripts/package.sh [--debug] --test
#                               and test its install in a clean Debian: the local
#                               sandboxd/python:3.11-bookworm image (a debootstrapped bookworm,
#                               scripts/build-images.sh) gets it with dpkg -i; the files must be
#                               where the unit says, the installed config must pass `config
#                               check`, and the unit's command, run against this host's Docker
#                               engine (its socket mounted in), must answer /healthz.
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CARGO_DEB_VERSION=3.6.2

test_install=false
build_flags=(--release)
deb_flags=()
for arg in "$@"; do
    case "$arg" in
        --test) test_install=true ;;
        --debug)
            build_flags=()
            # cargo deb reads the assets' target/release/ paths from the profile's directory.
            deb_flags=(--profile dev --fast)
            ;;
        *)
            sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
            exit 2
            ;;
    esac
done

ensure_rust
cd "$SANDBOXD_ROOT"

if ! cargo install --list | grep -qx "cargo-deb v$CARGO_DEB_VERSION:"; then
    log "installing cargo-deb $CARGO_DEB_VERSION (cargo install, once)"
    cargo install cargo-deb --locked --version "$CARGO_DEB_VERSION"
fi

start="$(now)"
"$SANDBOXD_SCRIPTS/build.sh" "${build_flags[@]}" >/dev/null
log "build in $(elapsed_since "$start")"

start="$(now)"
# --no-build: the build above made both binaries (cargo deb would build the service only, and
# not the agent static).
deb="$(cargo deb -p sandboxd --no-build "${deb_flags[@]}" | tail -n 1)"
[[ -f "$deb" ]] || die "cargo deb did not print the package it made (got: $deb)"
log "packaged $deb in $(elapsed_since "$start")"

if $test_install; then
    require_docker
    start="$(now)"
    # The test container is labelled as the tests' are, so a run that dies leaves nothing that
    # scripts/test.sh does not remove.
    docker run --rm --label org.sandboxd.test=true \
        -v "$deb:/tmp/sandboxd.deb:ro" -v "$DOCKER_SOCK:/var/run/docker.sock" \
        "$SANDBOXD_PYTHON_IMAGE" sh -euc '
            dpkg -i /tmp/sandboxd.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; exit 1; }
            grep -q "/var/lib/sandboxd/token" /tmp/dpkg.log || { echo "postinst does not say where the token is"; exit 1; }
            unit=$(dpkg -L sandboxd | grep "/systemd/system/sandboxd.service$")
            command=$(sed -n "s/^ExecStart=//p" "$unit")
            grep -qx "After=docker.service.*" "$unit"
            for path in /usr/bin/sandboxd /usr/lib/sandboxd/sandboxd-agent /etc/sandboxd/config.toml; do
                case " $command " in *" $path "*) ;; *) echo "the unit does not name $path: $command"; exit 1 ;; esac
                [ -f "$path" ] || { echo "$path is not installed"; exit 1; }
            done
            dpkg-query -W -f="\${Conffiles}" sandboxd | grep -q "/etc/sandboxd/config.toml"
            sandboxd --version
            sandboxd config check /etc/sandboxd/config.toml
            # What systemd would do (StateDirectory=), then the unit command on a free port.
            mkdir -m 0700 /var/lib/sandboxd
            $command --listen 127.0.0.1:7717 >/tmp/serve.log 2>&1 &
            service=$!
            for _ in $(seq 1 60); do
                if python3 -c "import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:7717/healthz\", timeout=2)" 2>/dev/null; then
                    echo "/healthz answered"
                    [ -s /var/lib/sandboxd/token ] || { echo "no token in /var/lib/sandboxd"; exit 1; }
                    kill "$service"
                    wait "$service" || true
                    exit 0
                fi
                kill -0 "$service" 2>/dev/null || break
                sleep 0.5
            done
            echo "the installed service did not answer /healthz:"
            cat /tmp/serve.log
            exit 1
        ' >&2 || die "the package's install test failed"
    log "install test passed in $(elapsed_since "$start")"
fi
echo "$deb"
