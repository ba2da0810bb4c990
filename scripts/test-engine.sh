#!/usr/bin/env bash
# A Docker engine of the tests' own, for a test that restarts its engine (engine_restart.rs):
# the same dockerd as the project's engine (scripts/host-setup.sh starts that one first), with
# its own data and exec roots, socket, pid file, containerd and log, the project engine's
# runtimes (gVisor's among them), a bridge of its own and no iptables rules, so stopping it
# ends no container of any other service on this host. (Not `--bridge=none`: a dockerd started
# so deletes the host's docker0, the project engine's bridge.)
#
#   scripts/test-engine.sh start [IMAGE...]  starts it (unless it runs) and copies the IMAGEs
#                                            into it from the project's engine
#   scripts/test-engine.sh stop              stops it (by the pid it wrote) and removes its data
#
# It prints its socket's path on stdout at start.
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TEST_ENGINE_RUN="/run/sandboxd-test-engine"
TEST_ENGINE_DATA="/var/lib/sandboxd-test-engine"
TEST_ENGINE_SOCK="$TEST_ENGINE_RUN/docker.sock"
TEST_ENGINE_PIDFILE="$TEST_ENGINE_RUN/docker.pid"
TEST_ENGINE_LOG="/var/log/sandboxd-test-engine.log"
TEST_ENGINE_WAIT_SECONDS=120
# Its bridge, made here (dockerd takes a bridge it is named as it finds it), with an address of
# a documentation range (RFC 5737) that nothing on the host routes.
TEST_ENGINE_BRIDGE="sbxtesteng0"
TEST_ENGINE_BRIDGE_ADDRESS="203.0.113.1/24"

test_engine_pid() {
    local pid
    pid="$(cat "$TEST_ENGINE_PIDFILE" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

test_engine_ping() { DOCKER_SOCK="$TEST_ENGINE_SOCK" docker_ping; }

start() {
    require_docker
    if ! test_engine_ping; then
        local main_pid dockerd
        main_pid="$(cat /var/run/docker.pid 2>/dev/null || true)"
        dockerd="$(readlink "/proc/$main_pid/exe" 2>/dev/null || true)"
        [[ -x "$dockerd" ]] || die "cannot find the project engine's dockerd (run scripts/host-setup.sh first)"
        mkdir -p "$TEST_ENGINE_RUN" "$TEST_ENGINE_DATA"
        ip link show "$TEST_ENGINE_BRIDGE" >/dev/null 2>&1 || ip link add "$TEST_ENGINE_BRIDGE" type bridge
        ip addr show dev "$TEST_ENGINE_BRIDGE" | grep -q "inet $TEST_ENGINE_BRIDGE_ADDRESS" ||
            ip addr add "$TEST_ENGINE_BRIDGE_ADDRESS" dev "$TEST_ENGINE_BRIDGE"
        ip link set "$TEST_ENGINE_BRIDGE" up
        # The project engine's runtimes (gVisor's, through its wrapper), its own bridge, and
        # no iptables rules.
        python3 - "${SANDBOXD_DAEMON_JSON:-/etc/docker/daemon.json}" "$TEST_ENGINE_DATA/daemon.json" "$TEST_ENGINE_BRIDGE" <<'PY'
import json, os, sys
main, mine, bridge = sys.argv[1], sys.argv[2], sys.argv[3]
runtimes = json.load(open(main)).get("runtimes", {}) if os.path.exists(main) and os.path.getsize(main) else {}
json.dump({"runtimes": runtimes, "bridge": bridge, "iptables": False, "ip6tables": False}, open(mine, "w"), indent=2)
PY
        log "starting the tests' own engine ($dockerd, socket $TEST_ENGINE_SOCK, log $TEST_ENGINE_LOG)"
        printf '\n==== %s: started by sandboxd test-engine ====\n' "$(date -Is)" >>"$TEST_ENGINE_LOG"
        PATH="$(dirname "$dockerd"):$PATH" setsid nohup "$dockerd" \
            --data-root "$TEST_ENGINE_DATA/root" --exec-root "$TEST_ENGINE_RUN/exec" \
            --pidfile "$TEST_ENGINE_PIDFILE" -H "unix://$TEST_ENGINE_SOCK" \
            --config-file "$TEST_ENGINE_DATA/daemon.json" >>"$TEST_ENGINE_LOG" 2>&1 </dev/null &
        local deadline=$((SECONDS + TEST_ENGINE_WAIT_SECONDS))
        until test_engine_ping; do
            if ((SECONDS >= deadline)); then
                tail -n 30 "$TEST_ENGINE_LOG" >&2 || true
                die "the tests' own engine did not answer within ${TEST_ENGINE_WAIT_SECONDS}s"
            fi
            sleep 0.5
        done
    fi
    local image
    for image in "$@"; do
        docker -H "unix://$TEST_ENGINE_SOCK" image inspect "$image" >/dev/null 2>&1 && continue
        docker save "$image" | docker -H "unix://$TEST_ENGINE_SOCK" load >/dev/null ||
            die "cannot copy $image into the tests' own engine"
    done
    echo "$TEST_ENGINE_SOCK"
}

stop() {
    local pid waited=0
    if pid="$(test_engine_pid)"; then
        kill "$pid"
        while kill -0 "$pid" 2>/dev/null && ((waited < 600)); do
            sleep 0.1
            waited=$((waited + 1))
        done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    fi
    # What its containers left mounted goes before its data.
    grep -o " $TEST_ENGINE_DATA/[^ ]*\| $TEST_ENGINE_RUN/[^ ]*" /proc/mounts | sort -r |
        xargs -r -n1 umount -l 2>/dev/null || true
    rm -rf "$TEST_ENGINE_DATA" "$TEST_ENGINE_RUN"
    ip link del "$TEST_ENGINE_BRIDGE" 2>/dev/null || true
}

case "${1:-}" in
    start)
        shift
        start "$@"
        ;;
    stop) stop ;;
    *) die "usage: scripts/test-engine.sh start [IMAGE...] | stop" ;;
esac
