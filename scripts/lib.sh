# shellcheck shell=bash disable=SC2034 # variables are used by the scripts sourcing this
# Shared helpers for the sandboxd scripts. Source it, do not execute it:
#
#   # shellcheck source=scripts/lib.sh
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# Every helper logs to stderr with a "[sandboxd]" prefix so that stdout stays
# free for whatever a script wants to print for machines.

if [[ -n "${SANDBOXD_LIB_SOURCED:-}" ]]; then
    return 0
fi
SANDBOXD_LIB_SOURCED=1

# Repository root (the parent of scripts/), whatever the caller's cwd is.
SANDBOXD_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
SANDBOXD_SCRIPTS="$SANDBOXD_ROOT/scripts"
export SANDBOXD_ROOT

# Debian packages the project needs on the host. Later additions (chromium,
# python test deps, ...) are one edit here.
#   docker.io       the client, containerd and runc (the engine is built: host-setup.sh)
#   busybox-static  source of /bin/busybox for sandboxd/busybox:local
#   debootstrap     builds the rootfs of sandboxd/python:3.11-bookworm
#   curl            talks to the engine socket (_ping) and fetches rustup
#   ca-certificates HTTPS to the apt mirror / crates.io through the proxy
#   file            verifies that the agent binary is static
#   iptables        the host firewall of bridge and egress sandboxes (egress needs it)
#   e2fsprogs mount the volumes' filesystems: mkfs.ext4 images, mounted with mount -o loop
#   iproute2        the egress tests' own network namespaces and veth pairs (`ip netns`)
#   gcc libc6-dev   linker and libc.a for the static (crt-static) agent
#   chromium        the browser the dashboard's tests drive (tests/browser, playwright-core)
# Node.js and npm for those tests are usually on the machine already (NodeSource's nodejs,
# which bundles npm and conflicts with Debian's npm package): scripts/test.sh installs
# Debian's nodejs and npm only when `node` or `npm` is missing.
# What running the service needs (scripts/up.sh), installed without recommended packages.
SANDBOXD_HOST_PACKAGES="docker.io cgroupfs-mount busybox-static debootstrap curl ca-certificates file iptables procps e2fsprogs mount"
# What only the tests need besides: gcc for the adversarial probes, Chromium for the dashboard.
SANDBOXD_TEST_PACKAGES="gcc libc6-dev chromium fonts-liberation tmux iproute2"

# Local images. Names are ours (sandboxd/...), never an official image name.
SANDBOXD_BUSYBOX_IMAGE="sandboxd/busybox:local"
SANDBOXD_PYTHON_IMAGE="sandboxd/python:3.11-bookworm"
SANDBOXD_SANDBOX_UID=61000
SANDBOXD_SANDBOX_GID=61000

DOCKER_SOCK="${DOCKER_SOCK:-/var/run/docker.sock}"
SANDBOXD_DOCKERD_LOG="${SANDBOXD_DOCKERD_LOG:-/var/log/sandboxd-dockerd.log}"

export DEBIAN_FRONTEND=noninteractive

log() { printf '[sandboxd] %s\n' "$*" >&2; }
warn() { printf '[sandboxd] WARNING: %s\n' "$*" >&2; }
die() {
    printf '[sandboxd] ERROR: %s\n' "$*" >&2
    exit 1
}

have() { command -v "$1" >/dev/null 2>&1; }

# Run a command as root (directly when we are root, otherwise through sudo).
as_root() {
    if [[ "$(id -u)" -eq 0 ]]; then
        "$@"
    elif have sudo; then
        sudo -n "$@" || die "needs root: '$*' (run as root or configure passwordless sudo)"
    else
        die "needs root: '$*' (run as root)"
    fi
}

# Seconds since the epoch with sub-second precision, and a formatter for
# durations measured with it.
now() { date +%s.%N; }
# free_gib PATH: the GiB free on the filesystem that holds PATH, rounded down.
free_gib() { df -P -BG "$1" | awk 'NR == 2 { sub(/G$/, "", $4); print $4 }'; }
elapsed_since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1fs", e - s }'; }

# --- Debian packages ---------------------------------------------------------

pkg_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# ensure_packages PKG...: apt-get install whatever is missing; `apt-get update`
# only when something is missing.
ensure_packages() {
    local missing=() p
    for p in "$@"; do
        pkg_installed "$p" || missing+=("$p")
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        log "packages present: $*"
        return 0
    fi
    have apt-get || die "missing packages (${missing[*]}) and no apt-get: this needs a Debian/Ubuntu host"
    log "installing packages: ${missing[*]}"
    # Wait for (rather than fail on) a dpkg lock held by e.g. unattended-upgrades.
    as_root apt-get update -q -o DPkg::Lock::Timeout=300
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        "${missing[@]}" </dev/null
}

# --- Docker engine -----------------------------------------------------------

docker_ping() {
    [[ -S "$DOCKER_SOCK" ]] || return 1
    [[ "$(curl -s --max-time 5 --unix-socket "$DOCKER_SOCK" http://localhost/_ping 2>/dev/null)" == "OK" ]]
}

require_docker() {
    have docker || die "docker client not found: run scripts/host-setup.sh first"
    docker_ping || die "Docker engine does not answer on $DOCKER_SOCK: run scripts/host-setup.sh first"
    docker version >/dev/null 2>&1 || die "cannot use the Docker engine as $(id -un) (root or the docker group needed)"
}

# remove_labelled LABEL: force-remove containers (then networks, volumes and
# images) carrying LABEL (e.g. org.sandboxd.test=true). Never fails.
remove_labelled() {
    local label=$1 ids
    docker_ping || return 0
    ids="$(docker ps -aq --filter "label=$label" 2>/dev/null || true)"
    if [[ -n "$ids" ]]; then
        log "removing $(wc -w <<<"$ids") leftover container(s) labelled $label"
        # shellcheck disable=SC2086 # one id per word
        docker rm -f -v $ids >/dev/null 2>&1 || warn "could not remove some containers labelled $label"
    fi
    ids="$(docker network ls -q --filter "label=$label" 2>/dev/null || true)"
    if [[ -n "$ids" ]]; then
        # shellcheck disable=SC2086
        docker network rm $ids >/dev/null 2>&1 || warn "could not remove some networks labelled $label"
    fi
    ids="$(docker volume ls -q --filter "label=$label" 2>/dev/null || true)"
    if [[ -n "$ids" ]]; then
        # shellcheck disable=SC2086
        docker volume rm -f $ids >/dev/null 2>&1 || warn "could not remove some volumes labelled $label"
    fi
    # Images too: tests build recipe images with the label.
    ids="$(docker images -q --filter "label=$label" 2>/dev/null | sort -u || true)"
    if [[ -n "$ids" ]]; then
        # shellcheck disable=SC2086
        docker rmi -f $ids >/dev/null 2>&1 || warn "could not remove some images labelled $label"
    fi
    return 0
}

# remove_test_sandboxes: force-remove sandboxes made by test services, whose
# instance label starts with "test-" (the harness sets it), and their egress networks and
# chains. Never fails.
remove_test_sandboxes() {
    local ids
    docker_ping || return 0
    ids="$(docker ps -a --filter "label=org.sandboxd.instance" \
        --format '{{.ID}} {{.Label "org.sandboxd.instance"}}' 2>/dev/null |
        awk '$2 ~ /^test-/ {print $1}' || true)"
    if [[ -n "$ids" ]]; then
        log "removing $(wc -w <<<"$ids") leftover test sandbox(es)"
        # shellcheck disable=SC2086 # one id per word
        docker rm -f -v $ids >/dev/null 2>&1 || warn "could not remove some test sandboxes"
    fi
    # Their working directories' volumes, which outlive a container removed this way.
    ids="$(docker volume ls --filter "label=org.sandboxd.instance" \
        --format '{{.Name}} {{.Label "org.sandboxd.instance"}}' 2>/dev/null |
        awk '$2 ~ /^test-/ {print $1}' || true)"
    if [[ -n "$ids" ]]; then
        # shellcheck disable=SC2086 # one name per word
        docker volume rm -f $ids >/dev/null 2>&1 || warn "could not remove some test sandboxes' volumes"
    fi
    # A killed test service leaves its egress network and firewall chains behind; the
    # service's own removal takes them (tests/remove-egress.sh runs it).
    local instance
    local -x SANDBOXD_BIN="${SANDBOXD_BIN:-$(cargo_target_dir)/debug/sandboxd}"
    for instance in $(docker network ls --filter "label=org.sandboxd.egress" \
        --format '{{.Label "org.sandboxd.egress"}}' 2>/dev/null | grep '^test-' || true); do
        log "removing the egress network and chains of test instance $instance"
        "$SANDBOXD_ROOT/tests/remove-egress.sh" "$instance" || warn "could not remove the egress network of $instance"
    done
    return 0
}

# --- Rust toolchain ----------------------------------------------------------

# ensure_rust: put ~/.cargo/bin on PATH and install a toolchain with rustup
# if there is none at all.
ensure_rust() {
    local cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
    case ":$PATH:" in
        *":$cargo_bin:"*) ;;
        *) [[ -d "$cargo_bin" ]] && PATH="$cargo_bin:$PATH" ;;
    esac
    export PATH

    if ! have cargo; then
        log "no Rust toolchain found: installing one with rustup"
        have curl || ensure_packages curl ca-certificates
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
            sh -s -- -y --profile minimal --no-modify-path ||
            die "could not install Rust with rustup; install it (https://rustup.rs) and re-run"
        PATH="$cargo_bin:$PATH"
        export PATH
        have cargo || die "cargo still not found after installing rustup"
    fi
}

# ensure_rust_components COMPONENT...: ensure_rust, then add the given rustup
# components (rustfmt, clippy) when they are missing.
ensure_rust_components() {
    ensure_rust
    local comp
    for comp in "$@"; do
        case "$comp" in
            rustfmt) have rustfmt && rustfmt --version >/dev/null 2>&1 && continue ;;
            clippy) have cargo-clippy && cargo clippy --version >/dev/null 2>&1 && continue ;;
        esac
        have rustup || die "rust component '$comp' is missing and rustup is not available to add it"
        log "adding rust component $comp"
        rustup component add "$comp" || die "rustup component add $comp failed"
    done
}

# Host target triple of the active toolchain (e.g. x86_64-unknown-linux-gnu).
rust_host_triple() {
    rustc -vV | sed -n 's/^host: //p'
}

# Cargo's target directory for this workspace (honours CARGO_TARGET_DIR and
# cargo config; falls back to <root>/target).
cargo_target_dir() {
    local dir=""
    dir="$(cd "$SANDBOXD_ROOT" && cargo metadata --no-deps --format-version 1 2>/dev/null |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')" || true
    if [[ -z "$dir" ]]; then
        dir="${CARGO_TARGET_DIR:-$SANDBOXD_ROOT/target}"
    fi
    printf '%s\n' "$dir"
}

# is_static_binary FILE: true when FILE is a statically linked ELF (static or
# static-pie: no program interpreter, no shared-library dependencies).
is_static_binary() {
    local f=$1 out
    [[ -f "$f" ]] || return 1
    if have file; then
        out="$(file -bL "$f")"
        [[ "$out" == *"statically linked"* || "$out" == *"static-pie linked"* ]]
        return
    fi
    out="$(ldd "$f" 2>&1 || true)"
    [[ "$out" == *"not a dynamic executable"* || "$out" == *"statically linked"* ]]
}

# static_agent_path PROFILE_DIR: where `cargo build --target <host triple>`
# leaves the static agent (debug|release). Host builds (cargo build/test
# without --target) never write there.
static_agent_path() {
    printf '%s/%s/%s/sandboxd-agent\n' "$(cargo_target_dir)" "$(rust_host_triple)" "$1"
}

# install_static_agent PROFILE_DIR: verify the static agent and copy it next to
# the sandboxd binary (target/<profile>/sandboxd-agent), where the service
# looks for it. Prints the destination path on stdout.
#
# Re-run it after `cargo test`/`cargo build --workspace`: those build the
# agent crate for the host (dynamically linked) and overwrite that copy.
install_static_agent() {
    local src dest_dir dest
    src="$(static_agent_path "$1")"
    dest_dir="$(cargo_target_dir)/$1"
    dest="$dest_dir/sandboxd-agent"
    [[ -f "$src" ]] || die "static agent $src does not exist (run scripts/build.sh)"
    if ! is_static_binary "$src"; then
        log "file: $(file -b "$src" 2>/dev/null || echo n/a)"
        log "ldd:  $(ldd "$src" 2>&1 | tr '\n' ' ' || true)"
        die "$src is NOT statically linked; it would not run in images without a matching libc"
    fi
    # Atomic replace, so a running service never sees a half-written agent.
    mkdir -p "$dest_dir"
    cp -f "$src" "$dest.tmp.$$"
    chmod 0755 "$dest.tmp.$$"
    mv -f "$dest.tmp.$$" "$dest"
    log "static agent: $dest ($(file -b "$dest" 2>/dev/null | grep -o "static[-a-z]* linked" || echo static))"
    printf '%s\n' "$dest"
}

# --- Python (the MCP tests) --------------------------------------------------

# ensure_venv SUITE: a virtualenv at target/SUITE-venv holding tests/SUITE/requirements.txt
# (pinned), made again when the requirements change. Prints the venv's python on stdout.
ensure_venv() {
    local suite=$1 venv requirements stamp
    venv="$(cargo_target_dir)/$suite-venv"
    requirements="$SANDBOXD_ROOT/tests/$suite/requirements.txt"
    stamp="$venv/requirements.sha256"
    if [[ -x "$venv/bin/python" ]] && sha256sum --check --status "$stamp" 2>/dev/null; then
        printf '%s\n' "$venv/bin/python"
        return 0
    fi
    have python3 || ensure_packages python3
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        # Debian's python3 makes venvs only with python3-venv installed.
        rm -rf "$venv"
        ensure_packages python3-venv
        python3 -m venv "$venv" || die "cannot create a Python venv at $venv"
    fi
    log "installing the $suite tests' Python packages into $venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2 ||
        die "cannot install $requirements"
    sha256sum "$requirements" >"$stamp"
    printf '%s\n' "$venv/bin/python"
}
