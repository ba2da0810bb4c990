#!/usr/bin/env bash
# Prepare the host: install the Debian packages the project needs and make
# sure a Docker engine answers on /var/run/docker.sock. Idempotent: installs
# only what is missing, starts dockerd only when the socket does not answer.
#
# The engine is dockerd built from its Go module at the version scripts/engine/go.mod
# pins (once per machine, about 2 minutes), not Debian's 20.10: 20.10 speaks API 1.41,
# which has no container annotations, so sandboxes cannot share the engine's per-container
# shim (about 4 MB of host memory each, against under 1 MB sharing), and it wedges here at
# 2,000-3,000 containers. Debian's docker.io still brings the client, containerd and runc;
# without Go its dockerd is started instead, with a warning.
#
# dockerd is started as a plain background process (no systemd needed), its
# log goes to /var/log/sandboxd-dockerd.log, and it keeps running after this
# script exits.
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DOCKERD_WAIT_SECONDS="${DOCKERD_WAIT_SECONDS:-600}"

# shellcheck disable=SC2086 # the list is one word per package
ensure_packages $SANDBOXD_HOST_PACKAGES

SANDBOXD_ENGINE_MODULE="$SANDBOXD_SCRIPTS/engine"
SANDBOXD_ENGINE_VERSION="$(awk '$1 == "require" && $2 == "github.com/docker/docker" { print $3 }' "$SANDBOXD_ENGINE_MODULE/go.mod")"
SANDBOXD_ENGINE_VERSION="${SANDBOXD_ENGINE_VERSION%+incompatible}"
SANDBOXD_ENGINE_BIN="${SANDBOXD_ENGINE_CACHE:-/var/cache/sandboxd-engine/$SANDBOXD_ENGINE_VERSION}/bin"

# build_engine: dockerd and docker-proxy from the engine's Go module, unless built already.
# Static (no cgo), so running needs no compiler; the version flags make `docker version` tell.
build_engine() {
    [[ -x "$SANDBOXD_ENGINE_BIN/dockerd" && -x "$SANDBOXD_ENGINE_BIN/docker-proxy" ]] && return 0
    have go || return 1
    local version=${SANDBOXD_ENGINE_VERSION#v} t0
    log "building the Docker engine $version from its Go module (once per machine; a few minutes)"
    t0="$(now)"
    mkdir -p "$SANDBOXD_ENGINE_BIN.partial"
    (cd "$SANDBOXD_ENGINE_MODULE" &&
        CGO_ENABLED=0 go build -trimpath -o "$SANDBOXD_ENGINE_BIN.partial/" \
            -ldflags="-s -w -X github.com/docker/docker/dockerversion.Version=$version -X github.com/docker/docker/dockerversion.GitCommit=go-module -X 'github.com/docker/docker/dockerversion.PlatformName=Docker Engine (built by sandboxd)'" \
            github.com/docker/docker/cmd/dockerd github.com/docker/docker/cmd/docker-proxy) ||
        die "building the Docker engine failed (see above)"
    rm -rf "$SANDBOXD_ENGINE_BIN"
    mv "$SANDBOXD_ENGINE_BIN.partial" "$SANDBOXD_ENGINE_BIN"
    log "built the Docker engine in $(elapsed_since "$t0")"
}

# The dockerd to start: the one built here, or Debian's when Go is missing.
engine_binary() {
    if build_engine; then
        echo "$SANDBOXD_ENGINE_BIN/dockerd"
        return 0
    fi
    have dockerd || die "no Go to build the Docker engine with, and no dockerd from docker.io either"
    warn "no Go to build the Docker engine with: starting Debian's $(dockerd --version 2>/dev/null || echo dockerd); each sandbox then costs the engine a shim of its own"
    command -v dockerd
}

# gVisor's runsc, for runtimes with `isolation = "gvisor"`: built from its Go module at the
# version scripts/gvisor/go.mod pins (once per machine, about 2 minutes; Debian's runsc is from
# 2022 and fails under this engine), and registered with the engine as the runtime "runsc".
# Only with SANDBOXD_GVISOR=1 (the test suite sets it): the embedded default needs no gVisor.
SANDBOXD_GVISOR_MODULE="$SANDBOXD_SCRIPTS/gvisor"
SANDBOXD_GVISOR_VERSION="$(awk '$1 == "require" && $2 == "gvisor.dev/gvisor" { print $3 }' "$SANDBOXD_GVISOR_MODULE/go.mod")"
SANDBOXD_RUNSC="${SANDBOXD_GVISOR_CACHE:-/var/cache/sandboxd-gvisor/$SANDBOXD_GVISOR_VERSION}/runsc"
# What the engine runs as "runsc": scripts/runsc-sandboxd beside runsc, which restores a
# sandbox paused to disk at its start (see crates/sandboxd-docker/src/checkpoint.rs).
SANDBOXD_RUNSC_RUNTIME="$(dirname "$SANDBOXD_RUNSC")/runsc-sandboxd"
SANDBOXD_DAEMON_JSON="${SANDBOXD_DAEMON_JSON:-/etc/docker/daemon.json}"

build_runsc() {
    [[ -x "$SANDBOXD_RUNSC" ]] && return 0
    have go || return 1
    local t0
    log "building gVisor's runsc $SANDBOXD_GVISOR_VERSION from its Go module (once per machine; about 2 minutes)"
    t0="$(now)"
    mkdir -p "$(dirname "$SANDBOXD_RUNSC")"
    (cd "$SANDBOXD_GVISOR_MODULE" &&
        CGO_ENABLED=0 go build -trimpath -o "$SANDBOXD_RUNSC.partial" \
            -ldflags="-s -w -X gvisor.dev/gvisor/runsc/version.version=$SANDBOXD_GVISOR_VERSION" \
            gvisor.dev/gvisor/runsc) ||
        die "building gVisor's runsc failed (see above)"
    mv "$SANDBOXD_RUNSC.partial" "$SANDBOXD_RUNSC"
    log "built runsc in $(elapsed_since "$t0")"
}

# install_runsc_runtime: puts scripts/runsc-sandboxd beside runsc; prints "changed" when it
# had to.
install_runsc_runtime() {
    cmp -s "$SANDBOXD_SCRIPTS/runsc-sandboxd" "$SANDBOXD_RUNSC_RUNTIME" && return 0
    as_root install -m 0755 "$SANDBOXD_SCRIPTS/runsc-sandboxd" "$SANDBOXD_RUNSC_RUNTIME.partial"
    as_root mv "$SANDBOXD_RUNSC_RUNTIME.partial" "$SANDBOXD_RUNSC_RUNTIME"
    echo changed
}

# register_runsc: names runsc (through its wrapper) in the engine's daemon.json (other
# settings kept); prints "changed" when the file had to change. `--host-uds=open` lets the
# agent dial the service's socket, bind-mounted into the sandbox.
register_runsc() {
    have python3 || ensure_packages python3
    as_root mkdir -p "$(dirname "$SANDBOXD_DAEMON_JSON")"
    as_root python3 - "$SANDBOXD_DAEMON_JSON" "$SANDBOXD_RUNSC_RUNTIME" <<'PY'
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
config = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
wanted = {"path": runsc, "runtimeArgs": ["--host-uds=open"]}
if config.setdefault("runtimes", {}).get("runsc") != wanted:
    config["runtimes"]["runsc"] = wanted
    with open(path + ".partial", "w") as f:
        json.dump(config, f, indent=2)
    os.replace(path + ".partial", path)
    print("changed")
PY
}

engine_has_runsc() {
    docker info --format '{{range $name, $_ := .Runtimes}}{{$name}} {{end}}' 2>/dev/null | grep -qw runsc
}

# The engine this script starts writes its pid to the default pid file; that pid, not a
# process name, says which engine is meant (another engine on the host is not ours to signal).
ENGINE_PIDFILE=/var/run/docker.pid

engine_pid() {
    local pid
    pid="$(cat "$ENGINE_PIDFILE" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

start_dockerd() {
    local dockerd
    dockerd="$(engine_binary)"

    # Without systemd nobody may have mounted the cgroup hierarchies.
    if ! mountpoint -q /sys/fs/cgroup 2>/dev/null; then
        if have cgroupfs-mount; then
            log "mounting cgroup hierarchies (cgroupfs-mount)"
            as_root cgroupfs-mount || warn "cgroupfs-mount failed"
        else
            warn "/sys/fs/cgroup is not mounted; dockerd may fail to start"
        fi
    fi

    # A stale pid file from a dead dockerd makes a new one refuse to start.
    local pidfile="$ENGINE_PIDFILE" pid
    if [[ -f "$pidfile" ]]; then
        pid="$(cat "$pidfile" 2>/dev/null || true)"
        if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
            log "dockerd is running (pid $pid) but does not answer yet; waiting for it"
            return 0
        fi
        log "removing stale $pidfile"
        as_root rm -f "$pidfile"
    fi

    log "starting $dockerd in the background (log: $SANDBOXD_DOCKERD_LOG)"
    as_root mkdir -p "$(dirname "$SANDBOXD_DOCKERD_LOG")"
    # setsid + nohup + no stdin: the daemon outlives this script and its
    # process group / session (CI runners kill those at the end of a step).
    # shellcheck disable=SC2016 # expanded by the inner shell
    as_root sh -c 'printf "\n==== %s: started by sandboxd host-setup ====\n" "$(date -Is)" >>"$1"
                   PATH="$(dirname "$2"):$PATH" setsid nohup "$2" >>"$1" 2>&1 </dev/null &' sh "$SANDBOXD_DOCKERD_LOG" "$dockerd"
}

# An idle sandbox with a shim of its own holds about 20 tasks (the shim's threads and its
# agent's), so the kernel's default of 32768 process ids runs out near 1,600 such sandboxes:
# runc then fails with "can't get final child's PID from pipe".
SANDBOXD_PID_MAX=4194304
if (( $(cat /proc/sys/kernel/pid_max 2>/dev/null || echo "$SANDBOXD_PID_MAX") < SANDBOXD_PID_MAX )); then
    log "raising kernel.pid_max to $SANDBOXD_PID_MAX (room for thousands of sandboxes)"
    as_root sh -c "echo $SANDBOXD_PID_MAX > /proc/sys/kernel/pid_max" ||
        warn "cannot raise kernel.pid_max: about 1,600 sandboxes at once is this host's limit"
fi

dockerd_alive() {
    [[ -n "$(engine_pid)" ]]
}

dead_shims_cleaned() {
    awk '/started by sandboxd host-setup/ {n = 0} /cleaning up dead shim/ {n++} END {print n + 0}' \
        "$SANDBOXD_DOCKERD_LOG" 2>/dev/null || echo 0
}

# After a crash with many containers, dockerd's containerd spends its first seconds cleaning up
# after their dead shims (tens of milliseconds each); dockerd gives up on it after about 15 s and
# exits, but each attempt gets further through the list. So an engine that exits while we wait
# is started again, up to the deadline.
wait_for_engine() {
    local deadline=$((SECONDS + DOCKERD_WAIT_SECONDS)) attempt=1
    while ((SECONDS < deadline)); do
        docker_ping && return 0
        # A second first: a dockerd just started may not have written its pid file yet.
        sleep 1
        if ! dockerd_alive && ((SECONDS < deadline - 5)); then
            attempt=$((attempt + 1))
            log "dockerd exited before answering (its containerd was still cleaning up after dead shims: $(dead_shims_cleaned) so far); starting it again (attempt $attempt)"
            start_dockerd
        fi
    done
    docker_ping
}

gvisor_registered=""
if [[ "${SANDBOXD_GVISOR:-0}" != 1 ]]; then
    [[ -x "$SANDBOXD_RUNSC" ]] || log "gVisor not built (SANDBOXD_GVISOR=1 builds it, for runtimes with isolation = \"gvisor\")"
elif build_runsc; then
    install_runsc_runtime >/dev/null
    [[ "$(register_runsc)" == changed ]] && gvisor_registered=changed
    log "gVisor: $SANDBOXD_RUNSC registered as the engine's runtime \"runsc\" through $SANDBOXD_RUNSC_RUNTIME ($SANDBOXD_DAEMON_JSON)"
else
    warn "no Go to build gVisor with: runtimes with isolation = \"gvisor\" cannot start on this engine"
fi

if docker_ping; then
    log "Docker engine answers on $DOCKER_SOCK"
    if [[ -n "$gvisor_registered" ]] || { [[ -x "$SANDBOXD_RUNSC" ]] && ! engine_has_runsc; }; then
        # The engine reads its runtimes again on SIGHUP: no restart, its containers keep running.
        log "asking the running engine to read $SANDBOXD_DAEMON_JSON again (SIGHUP)"
        pid="$(engine_pid)" && as_root kill -HUP "$pid" ||
            warn "cannot signal the engine (no live pid in $ENGINE_PIDFILE): restart it to add gVisor"
        for _ in $(seq 1 50); do engine_has_runsc && break; sleep 0.2; done
        engine_has_runsc || warn "the engine does not list runsc: restart it to add gVisor"
    fi
else
    start_dockerd
    log "waiting up to ${DOCKERD_WAIT_SECONDS}s for the Docker engine"
    if ! wait_for_engine; then
        if [[ -f "$SANDBOXD_DOCKERD_LOG" ]]; then
            log "last lines of $SANDBOXD_DOCKERD_LOG:"
            tail -n 30 "$SANDBOXD_DOCKERD_LOG" >&2 || true
        fi
        die "the Docker engine did not answer on $DOCKER_SOCK within ${DOCKERD_WAIT_SECONDS}s (see $SANDBOXD_DOCKERD_LOG)"
    fi
    log "Docker engine is up"
fi

read -r engine_version api < <(docker version --format '{{.Server.Version}} {{.Server.APIVersion}}' 2>/dev/null || echo unknown unknown)
log "engine: Docker $engine_version (API $api)"
# Annotations came with API 1.43; older engines give every sandbox a shim of its own.
if [[ "$api" =~ ^1\.([0-9]+)$ ]] && ((BASH_REMATCH[1] < 43)); then
    warn "this engine (API $api) cannot let sandboxes share a shim: each costs about 4 MB more; stop it and run this script again to start the engine built from scripts/engine ($SANDBOXD_ENGINE_BIN/dockerd)"
fi
