#!/usr/bin/env bash
# A single-node Kubernetes cluster on this host, for the Kubernetes backend's tests and for trying
# the backend by hand. Idempotent: a second run finds it up and only prints where it is.
#
#   1. the binaries (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
#      kube-proxy, kubectl) are built once from
#      their Go modules (scripts/k8s/cluster/go.mod pins them; no registry ships them) into a
#      cache outside the clone, keyed by version: a second run starts in seconds
#   2. certificates: a cluster CA, the API server's serving certificate, client certificates for
#      the administrator, the controller manager, the scheduler and the kubelet, the
#      service-account signing key
#   3. etcd, a containerd of its own (own config, root, state and socket: Docker's is left alone),
#      the API server, the controller manager, the scheduler, the kubelet, kube-proxy and CoreDNS,
#      each a background process logging to $SANDBOXD_K8S_LOGS; pods get a network of their own
#      with Services and DNS (scripts/k8s/network.sh)
#   4. the pause image and the project's local images (busybox, python, the agent image
#      made from $SANDBOXD_AGENT, the static agent, or without it from the debug build's, which
#      scripts/build.sh makes when missing, the service's image sandboxd/sandboxd:local for the
#      chart in deploy/helm/sandboxd, made from the debug build's sandboxd and that agent on
#      the python image, and the images named in $SANDBOXD_K8S_IMAGES, e.g. a recipe's image a
#      Docker-backed service built) imported into that containerd from Docker
#   5. the StorageClass `sandboxd-test` and its provisioner (scripts/k8s/provisioner, built once
#      per version of its source: an ext4 image of the claim's size per PersistentVolume,
#      loop-mounted under the state directory and offered as a `local` volume, so a writer
#      past the size gets ENOSPC and the kubelet reports the volume's use; for tests only)
#   6. waits for the node to be Ready, then prints `KUBECONFIG=PATH`, `KUBECTL=PATH` and
#      `HELM=PATH` on stdout (helm built once from its Go module, scripts/k8s/helm/go.mod)
#
# Idempotent: on a machine where the cluster is up, a run starts only what is not running
# (e.g. the controller manager, on a cluster started before this script had it, building it
# first).
#
# Everything listens on 127.0.0.1, but the kubelet, on the node's own local address (below), the
# API server, also on that address for the pods (its port kept to them and the loopback), and
# CoreDNS, on the pods' gateway.
# `scripts/k8s-up.sh down` stops the cluster (its state
# stays, so the next start is quick); `scripts/k8s-up.sh purge` also removes the state and the
# data of the volumes provisioned for it.
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=k8s/network.sh
. "$(dirname "${BASH_SOURCE[0]}")/k8s/network.sh"

K8S_VERSION="v1.34.4"
K8S_CACHE="${SANDBOXD_K8S_CACHE:-/var/cache/sandboxd-k8s/$K8S_VERSION}"
K8S_BIN="$K8S_CACHE/bin"
K8S_STATE="${SANDBOXD_K8S_STATE:-/var/lib/sandboxd-k8s}"
SANDBOXD_K8S_LOGS="${SANDBOXD_K8S_LOGS:-/var/log/sandboxd-k8s}"
K8S_NODE="sandboxd-node"
# Ports of our own, so nothing of a cluster the host may also run is disturbed.
ETCD_PORT=23790
ETCD_PEER_PORT=23800
APISERVER_PORT=16443
KUBELET_PORT=20250
KUBELET_HEALTHZ_PORT=20248
SCHEDULER_PORT=20259
CONTROLLER_MANAGER_PORT=20257
CONTAINERD_SOCK="$K8S_STATE/containerd/containerd.sock"
# The node's address: the kubelet refuses a loopback one, and the API server's node proxy (the
# kubelet's summary API) refuses to dial one. So the node gets an address of a documentation
# range (198.51.100.0/24, never routed) on an interface of its own with no ports: local to
# this host; the pods reach it through their gateway (the API server's Service leads there).
NODE_LINK="sbxnode0"
NODE_IP="198.51.100.1"
PAUSE_IMAGE="sandboxd.local/pause:1"
# The image the backend's init container delivers the agent from (config: backend.agent_image).
AGENT_IMAGE="sandboxd/agent:local"
# The service's own image, which the chart runs.
SERVICE_IMAGE="sandboxd/sandboxd:local"
HELM_MODULE="$SANDBOXD_SCRIPTS/k8s/helm"
HELM_VERSION="$(awk '$1 == "require" && $2 == "helm.sh/helm/v4" { print $3 }' "$HELM_MODULE/go.mod")"
HELM="${SANDBOXD_K8S_CACHE:-/var/cache/sandboxd-k8s}/helm-$HELM_VERSION/helm"
PROVISIONER_MODULE="$SANDBOXD_SCRIPTS/k8s/provisioner"
PROVISIONER_NAME="sandboxd.test/loop-image"
# Where the provisioner keeps each volume's image and mount point (they go with a purge).
VOLUMES_ROOT="$K8S_STATE/volumes"
KUBECONFIG_ADMIN="$K8S_STATE/admin.kubeconfig"
K8S_PACKAGES="containerd runc containernetworking-plugins openssl gcc libc6-dev iproute2"
K8S_PROGRAMS="etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"
# The test StorageClass: PersistentVolumes of the provisioner above.
STORAGE_CLASS="sandboxd-test"

# ---- 1. binaries ----------------------------------------------------------------------------

build_binaries() {
    local missing=() p
    for p in $K8S_PROGRAMS; do [[ -x "$K8S_BIN/$p" ]] || missing+=("$p"); done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    have go || die "go is needed to build the cluster's programs (${missing[*]})"
    log "building ${missing[*]} $K8S_VERSION from the Go modules (once per machine; several minutes)"
    local packages=() t0
    t0="$(now)"
    for p in "${missing[@]}"; do
        case "$p" in
            etcd) packages+=(go.etcd.io/etcd/server/v3) ;;
            *) packages+=("k8s.io/kubernetes/cmd/$p") ;;
        esac
    done
    mkdir -p "$K8S_BIN.partial"
    (cd "$SANDBOXD_SCRIPTS/k8s/cluster" &&
        go build -trimpath -ldflags='-s -w' -o "$K8S_BIN.partial/" "${packages[@]}")
    # The etcd server's package (go.etcd.io/etcd/server/v3) builds a binary named `server`.
    if [[ -x "$K8S_BIN.partial/server" ]]; then mv "$K8S_BIN.partial/server" "$K8S_BIN.partial/etcd"; fi
    mkdir -p "$K8S_BIN"
    for p in "${missing[@]}"; do
        [[ -x "$K8S_BIN.partial/$p" ]] || die "the build made no $p"
        mv "$K8S_BIN.partial/$p" "$K8S_BIN/$p"
    done
    rmdir "$K8S_BIN.partial" 2>/dev/null || true
    log "built ${missing[*]} in $(elapsed_since "$t0")"
}

# build_go_tool WHAT MINUTES MODULE_DIR BINARY PACKAGE [LDFLAGS]: PACKAGE of the Go module in
# MODULE_DIR built to BINARY (static, stripped), unless it is there.
build_go_tool() {
    local what=$1 minutes=$2 module=$3 binary=$4 package=$5 ldflags="-s -w ${6:-}" t0
    [[ -x "$binary" ]] && return 0
    have go || die "go is needed to build $what"
    log "building $what from its Go module (once per machine; about $minutes minutes)"
    t0="$(now)"
    mkdir -p "$(dirname "$binary")"
    (cd "$module" && CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$binary.partial" "$package")
    mv "$binary.partial" "$binary"
    log "built $what in $(elapsed_since "$t0")"
}

build_helm() {
    build_go_tool "helm $HELM_VERSION" 3 "$HELM_MODULE" "$HELM" helm.sh/helm/v4/cmd/helm \
        "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"
}

# The provisioner of the test StorageClass, kept by a hash of its source: a changed source
# builds (and, through its path, starts) a new one.
provisioner_binary() {
    local sum
    sum="$(cat "$PROVISIONER_MODULE/go.mod" "$PROVISIONER_MODULE/go.sum" "$PROVISIONER_MODULE"/*.go |
        sha256sum | cut -c1-16)"
    echo "${SANDBOXD_K8S_CACHE:-/var/cache/sandboxd-k8s}/provisioner-$sum/sandboxd-test-provisioner"
}

build_provisioner() {
    build_go_tool "the test cluster's provisioner (scripts/k8s/provisioner, once per version)" 2 \
        "$PROVISIONER_MODULE" "$1" .
}

# ---- 2. certificates ------------------------------------------------------------------------

# cert NAME SUBJECT [SAN]: a key and a certificate signed by the cluster CA.
cert() {
    local name=$1 subject=$2 san=${3:-}
    local dir="$K8S_STATE/pki"
    [[ -s "$dir/$name.crt" ]] && return 0
    openssl genrsa -out "$dir/$name.key" 2048 2>/dev/null
    openssl req -new -key "$dir/$name.key" -subj "$subject" -out "$dir/$name.csr" 2>/dev/null
    local ext="$dir/$name.ext"
    {
        echo "basicConstraints=CA:FALSE"
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        if [[ -n "$san" ]]; then
            echo "extendedKeyUsage=serverAuth,clientAuth"
            echo "subjectAltName=$san"
        else
            echo "extendedKeyUsage=clientAuth"
        fi
    } >"$ext"
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
        -CAcreateserial -days 3650 -sha256 -extfile "$ext" -out "$dir/$name.crt" 2>/dev/null
    rm -f "$dir/$name.csr" "$ext"
}

make_certificates() {
    local dir="$K8S_STATE/pki"
    mkdir -p "$dir"
    chmod 0700 "$dir"
    if [[ ! -s "$dir/ca.crt" ]]; then
        openssl genrsa -out "$dir/ca.key" 2048 2>/dev/null
        openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=sandboxd-test-cluster-ca" \
            -days 3650 -sha256 -out "$dir/ca.crt" 2>/dev/null
    fi
    cert apiserver "/CN=kube-apiserver" \
        "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
    cert kubelet-serving "/CN=$K8S_NODE" "IP:$NODE_IP,IP:127.0.0.1,DNS:localhost,DNS:$K8S_NODE"
    cert admin "/O=system:masters/CN=admin"
    cert kubelet "/O=system:nodes/CN=system:node:$K8S_NODE"
    cert scheduler "/CN=system:kube-scheduler"
    cert controller-manager "/CN=system:kube-controller-manager"
    cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
    [[ -s "$dir/sa.key" ]] || openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
    [[ -s "$dir/sa.pub" ]] || openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
    kubeconfig "$KUBECONFIG_ADMIN" admin
    kubeconfig "$K8S_STATE/kubelet.kubeconfig" kubelet
    kubeconfig "$K8S_STATE/scheduler.kubeconfig" scheduler
    kubeconfig "$K8S_STATE/controller-manager.kubeconfig" controller-manager
}

# kubeconfig FILE CERT: a kubeconfig for the API server with the client certificate CERT.
kubeconfig() {
    local file=$1 name=$2 dir="$K8S_STATE/pki"
    cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: sandboxd-test
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $dir/ca.crt
users:
- name: $name
  user:
    client-certificate: $dir/$name.crt
    client-key: $dir/$name.key
contexts:
- name: $name@sandboxd-test
  context: {cluster: sandboxd-test, user: $name}
current-context: $name@sandboxd-test
EOF
    chmod 0600 "$file"
}

# ---- 3. the processes -----------------------------------------------------------------------

# running NAME: whether the component started by this script is alive.
running() {
    local pidfile="$K8S_STATE/run/$1.pid" pid
    [[ -f "$pidfile" ]] || return 1
    pid="$(cat "$pidfile")"
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}

# start NAME CMD...: starts CMD in the background (own session, no stdin) unless it runs.
start() {
    local name=$1
    shift
    running "$name" && return 0
    mkdir -p "$K8S_STATE/run" "$SANDBOXD_K8S_LOGS"
    printf '\n==== %s: started by sandboxd k8s-up ====\n' "$(date -Is)" >>"$SANDBOXD_K8S_LOGS/$name.log"
    setsid nohup "$@" >>"$SANDBOXD_K8S_LOGS/$name.log" 2>&1 </dev/null &
    echo $! >"$K8S_STATE/run/$name.pid"
    log "started $name (pid $!, log $SANDBOXD_K8S_LOGS/$name.log)"
}

# replace_if_changed NAME WHAT: stops the component NAME when it runs with another WHAT (its
# controllers, its configuration, its build) than this run gives it, so `start` starts it anew.
replace_if_changed() {
    local name=$1 what=$2 stamp="$K8S_STATE/run/$1.stamp" waited=0
    if running "$name" && [[ "$(cat "$stamp" 2>/dev/null)" != "$what" ]]; then
        kill "$(cat "$K8S_STATE/run/$name.pid")" 2>/dev/null || true
        while running "$name" && ((waited < 300)); do
            sleep 0.1
            waited=$((waited + 1))
        done
        running "$name" && kill -9 "$(cat "$K8S_STATE/run/$name.pid")" 2>/dev/null
        log "stopped $name to start it with what this run gives it"
    fi
    mkdir -p "$K8S_STATE/run"
    echo "$what" >"$stamp"
}

# wait_for WHAT SECONDS CMD...: until CMD succeeds; shows the component's log on failure.
wait_for() {
    local what=$1 seconds=$2 deadline
    shift 2
    deadline=$(($(date +%s) + seconds))
    until "$@" >/dev/null 2>&1; do
        if (($(date +%s) >= deadline)); then
            log "last lines of $SANDBOXD_K8S_LOGS/$what.log:"
            tail -n 40 "$SANDBOXD_K8S_LOGS/$what.log" >&2 || true
            die "$what did not come up within ${seconds}s"
        fi
        sleep 0.5
    done
}

kubectl_admin() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

start_containerd() {
    local dir="$K8S_STATE/containerd"
    mkdir -p "$dir/root" "$dir/state"
    write_pod_network
    # restrict_oom_score_adj: runc cannot lower oom_score_adj here (no CAP_SYS_RESOURCE).
    cat >"$dir/config.toml" <<EOF
version = 2
root = "$dir/root"
state = "$dir/state"
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[debug]
  address = "$dir/debug.sock"
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$K8S_STATE/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
EOF
    start containerd containerd --config "$dir/config.toml"
    wait_for containerd 30 ctr --address "$CONTAINERD_SOCK" version
}

ctr_k8s() { ctr --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"; }

# The pod sandbox's pause process: a static binary of a few lines, built here.
import_pause_image() {
    ctr_k8s images ls -q | grep -qx "$PAUSE_IMAGE" && return 0
    local work
    work="$(mktemp -d)"
    cat >"$work/pause.c" <<'EOF'
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void quit(int sig) { (void)sig; exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
    signal(SIGINT, quit);
    signal(SIGTERM, quit);
    signal(SIGCHLD, reap);
    for (;;) pause();
}
EOF
    mkdir -p "$work/rootfs"
    gcc -static -O2 -o "$work/rootfs/pause" "$work/pause.c"
    tar -C "$work/rootfs" -c . | docker import --change 'ENTRYPOINT ["/pause"]' - "$PAUSE_IMAGE" >/dev/null
    docker save "$PAUSE_IMAGE" | ctr_k8s images import - >/dev/null
    rm -rf "$work"
    log "imported $PAUSE_IMAGE"
}

# The agent image: the static agent alone, at /sandboxd-agent, made again when it changed.
make_agent_image() {
    if [[ -z "${SANDBOXD_AGENT:-}" ]]; then
        # Every session's pod starts from this image: without it each create is image_missing.
        SANDBOXD_AGENT="$(static_agent_path debug)"
        if ! is_static_binary "$SANDBOXD_AGENT" 2>/dev/null; then
            log "no SANDBOXD_AGENT: building the static agent (scripts/build.sh)"
            "$SANDBOXD_SCRIPTS/build.sh" >/dev/null
        fi
    fi
    is_static_binary "$SANDBOXD_AGENT" || die "SANDBOXD_AGENT=$SANDBOXD_AGENT is not a static binary"
    local sum work
    sum="$(sha256sum "$SANDBOXD_AGENT" | cut -c1-16)"
    [[ "$(docker image inspect --format '{{index .Config.Labels "org.sandboxd.agent"}}' "$AGENT_IMAGE" 2>/dev/null)" == "$sum" ]] && return 0
    work="$(mktemp -d)"
    install -m 0555 "$SANDBOXD_AGENT" "$work/sandboxd-agent"
    tar -C "$work" -c sandboxd-agent |
        docker import --change "LABEL org.sandboxd.agent=$sum" - "$AGENT_IMAGE" >/dev/null
    rm -rf "$work"
    log "made $AGENT_IMAGE from $SANDBOXD_AGENT"
}

# The service's image: the debug build's sandboxd with the static agent beside it, on the python
# image (Debian, for the C library sandboxd links), made again when either changed.
make_service_image() {
    local service agent sum container
    service="$(cargo_target_dir)/debug/sandboxd"
    agent="$SANDBOXD_AGENT"
    [[ -x "$service" ]] || "$SANDBOXD_SCRIPTS/build.sh" >/dev/null
    sum="$(cat "$service" "$agent" | sha256sum | cut -c1-16)"
    [[ "$(docker image inspect --format '{{index .Config.Labels "org.sandboxd.service"}}' "$SERVICE_IMAGE" 2>/dev/null)" == "$sum" ]] && return 0
    container="$(docker create --label org.sandboxd.scratch=true "$SANDBOXD_PYTHON_IMAGE")"
    docker cp "$service" "$container:/usr/local/bin/sandboxd" >/dev/null &&
        docker cp "$agent" "$container:/usr/local/bin/sandboxd-agent" >/dev/null &&
        docker commit --change 'ENTRYPOINT ["/usr/local/bin/sandboxd"]' --change 'CMD ["serve"]' \
            --change 'USER 10001' --change 'WORKDIR /' --change "LABEL org.sandboxd.service=$sum" \
            "$container" "$SERVICE_IMAGE" >/dev/null
    local rc=$?
    docker rm -f "$container" >/dev/null
    ((rc == 0)) || die "could not make $SERVICE_IMAGE"
    log "made $SERVICE_IMAGE from $service"
}

# containerd_has IMAGE: whether the cluster's containerd holds IMAGE (as Docker names it).
containerd_has() {
    local name=$1
    [[ "$name" == */* ]] || name="library/$name"
    ctr_k8s images ls -q | grep -qx "docker.io/$name"
}

# The project's local images, as Docker has them (scripts/build-images.sh makes them), and
# those named in $SANDBOXD_K8S_IMAGES (space-separated).
import_local_images() {
    local image extra=()
    read -r -a extra <<<"${SANDBOXD_K8S_IMAGES:-}"
    for image in "$SANDBOXD_BUSYBOX_IMAGE" "$SANDBOXD_PYTHON_IMAGE" "$AGENT_IMAGE" "$SERVICE_IMAGE" "${extra[@]}"; do
        docker image inspect "$image" >/dev/null 2>&1 || {
            warn "$image is not in Docker; run scripts/build-images.sh first"
            continue
        }
        local id
        id="$(docker image inspect --format '{{.Id}}' "$image")"
        # Import again when Docker's image changed (its id is recorded beside it) or the
        # cluster's containerd lost it (the kubelet removes images under disk pressure).
        local mark="$K8S_STATE/images/$(tr '/:' '__' <<<"$image")"
        if [[ -f "$mark" && "$(cat "$mark")" == "$id" ]] && containerd_has "$image"; then
            continue
        fi
        mkdir -p "$K8S_STATE/images"
        docker save "$image" | ctr_k8s images import - >/dev/null
        echo "$id" >"$mark"
        log "imported $image into the cluster's containerd"
    done
}

start_etcd() {
    start etcd "$K8S_BIN/etcd" --name sandboxd-test --data-dir "$K8S_STATE/etcd" \
        --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "sandboxd-test=http://127.0.0.1:$ETCD_PEER_PORT" \
        --listen-metrics-urls "" --log-level warn
    wait_for etcd 30 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
}

start_apiserver() {
    local pki="$K8S_STATE/pki" args
    node_address
    guard_api_port
    # The pods reach it through its Service, whose endpoint is the node's address.
    args=(--etcd-servers "http://127.0.0.1:$ETCD_PORT"
        --bind-address 0.0.0.0 --advertise-address "$NODE_IP" --secure-port "$APISERVER_PORT"
        --anonymous-auth=false
        --service-cluster-ip-range 10.96.0.0/24
        --client-ca-file "$pki/ca.crt"
        --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key"
        --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt"
        --kubelet-client-key "$pki/apiserver-kubelet-client.key"
        --kubelet-certificate-authority "$pki/ca.crt"
        --kubelet-preferred-address-types InternalIP
        --service-account-issuer https://kubernetes.default.svc
        --service-account-key-file "$pki/sa.pub"
        --service-account-signing-key-file "$pki/sa.key"
        --authorization-mode Node,RBAC
        --enable-priority-and-fairness=false
        --profiling=false)
    replace_if_changed kube-apiserver "${args[*]}"
    start kube-apiserver "$K8S_BIN/kube-apiserver" "${args[@]}"
    wait_for kube-apiserver 90 kubectl_admin get --raw /readyz
}

start_scheduler() {
    start kube-scheduler "$K8S_BIN/kube-scheduler" \
        --kubeconfig "$K8S_STATE/scheduler.kubeconfig" \
        --authentication-kubeconfig "$K8S_STATE/scheduler.kubeconfig" \
        --authorization-kubeconfig "$K8S_STATE/scheduler.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false
}

node_address() {
    ip link show "$NODE_LINK" >/dev/null 2>&1 || ip link add "$NODE_LINK" type bridge
    sysctl -qw "net.ipv6.conf.$NODE_LINK.disable_ipv6=1"
    ip addr show dev "$NODE_LINK" | grep -q "inet $NODE_IP/" || ip addr add "$NODE_IP/32" dev "$NODE_LINK"
    ip link set "$NODE_LINK" up
}

start_kubelet() {
    local pki="$K8S_STATE/pki"
    mkdir -p "$K8S_STATE/kubelet"
    # cgroup v1 without systemd: cgroupfs. Eviction and image garbage collection are kept out of
    # the way of a development machine's disk; pods' pids are capped per pod.
    cat >"$K8S_STATE/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
readOnlyPort: 0
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
failSwapOn: false
resolvConf: ""
clusterDNS: ["$POD_GATEWAY"]
clusterDomain: $CLUSTER_DOMAIN
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$pki/ca.crt"}
authorization:
  mode: AlwaysAllow
tlsCertFile: "$pki/kubelet-serving.crt"
tlsPrivateKeyFile: "$pki/kubelet-serving.key"
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
  nodefs.inodesFree: "1%"
evictionPressureTransitionPeriod: 30s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
podPidsLimit: 4096
maxPods: 500
serializeImagePulls: false
# Volumes' use in the summary API is measured this often (default 1m): the tests read it.
volumeStatsAggPeriod: 5s
EOF
    replace_if_changed kubelet "$(sha256sum <"$K8S_STATE/kubelet-config.yaml")"
    start kubelet "$K8S_BIN/kubelet" --config "$K8S_STATE/kubelet-config.yaml" \
        --kubeconfig "$K8S_STATE/kubelet.kubeconfig" --root-dir "$K8S_STATE/kubelet" \
        --cert-dir "$K8S_STATE/kubelet/pki" --hostname-override "$K8S_NODE" --node-ip "$NODE_IP"
    wait_for kubelet 90 sh -c "\"$K8S_BIN/kubectl\" --kubeconfig \"$KUBECONFIG_ADMIN\" get node $K8S_NODE \
        -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
    # What the node lifecycle controller would do (the controller manager runs without it, so
    # that a busy machine's late heartbeats evict nothing): lift the not-ready taint the kubelet
    # registers its node with.
    kubectl_admin taint nodes "$K8S_NODE" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
}

# The controllers a cluster needs beyond scheduling, for what the tests use: every namespace
# gets its `default` service account (without it the API server refuses pods there) and the
# cluster CA's config map; deleted namespaces are emptied; owned objects are collected; claims
# are bound to volumes (the provisioner below makes them), and neither is removed while in use;
# Deployments get their ReplicaSets and those their pods (the chart's service); Services get
# the EndpointSlices of their ready pods (kube-proxy and CoreDNS follow those).
# Each controller acts with its own service account's credentials, under its RBAC role.
CONTROLLERS="serviceaccount-controller,serviceaccount-token-controller,namespace-controller"
CONTROLLERS+=",garbage-collector-controller,root-ca-certificate-publisher-controller"
CONTROLLERS+=",persistentvolume-binder-controller,persistentvolumeclaim-protection-controller"
CONTROLLERS+=",persistentvolume-protection-controller,deployment-controller,replicaset-controller"
CONTROLLERS+=",endpointslice-controller"
start_controller_manager() {
    local pki="$K8S_STATE/pki" kubeconfig="$K8S_STATE/controller-manager.kubeconfig"
    mkdir -p "$K8S_STATE/controller-manager"
    # One started by an earlier version of this script with other controllers is replaced.
    replace_if_changed kube-controller-manager "$CONTROLLERS"
    start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
        --kubeconfig "$kubeconfig" \
        --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$CONTROLLER_MANAGER_PORT" \
        --cert-dir "$K8S_STATE/controller-manager" \
        --leader-elect=false \
        --use-service-account-credentials \
        --service-account-private-key-file "$pki/sa.key" \
        --root-ca-file "$pki/ca.crt" \
        --controllers "$CONTROLLERS" \
        --profiling=false
    wait_for kube-controller-manager 60 curl -fsSk "https://127.0.0.1:$CONTROLLER_MANAGER_PORT/healthz"
    # Its service-account controller has caught up once the API server's own namespace has
    # its account: from then on a new namespace gets one within a moment.
    wait_for kube-controller-manager 60 kubectl_admin -n default get serviceaccount default
}

# The provisioner of the test StorageClass: runs as root on the node's host (it makes and
# mounts the volumes' filesystems), with the administrator's credentials.
start_provisioner() {
    local binary
    binary="$(provisioner_binary)"
    build_provisioner "$binary"
    replace_if_changed sandboxd-test-provisioner "$binary"
    start sandboxd-test-provisioner "$binary" --kubeconfig "$KUBECONFIG_ADMIN" \
        --name "$PROVISIONER_NAME" --root "$VOLUMES_ROOT" --node "$K8S_NODE"
}

# The StorageClass tests make volumes of: bound at once (Immediate), removed with their claim.
# A class's provisioner cannot be changed: one of an earlier version of this script (the
# controller manager's host-path provisioner) is made again, its volumes left as they are.
make_storage_class() {
    local was
    was="$(kubectl_admin get storageclass "$STORAGE_CLASS" -o jsonpath='{.provisioner}' 2>/dev/null || true)"
    if [[ -n "$was" && "$was" != "$PROVISIONER_NAME" ]]; then
        kubectl_admin delete storageclass "$STORAGE_CLASS" >/dev/null
    fi
    kubectl_admin apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: $STORAGE_CLASS
provisioner: $PROVISIONER_NAME
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOF
}

stop_all() {
    local name
    for name in coredns kube-proxy sandboxd-test-provisioner kubelet kube-scheduler kube-controller-manager kube-apiserver etcd containerd; do
        if running "$name"; then
            kill "$(cat "$K8S_STATE/run/$name.pid")" 2>/dev/null || true
            log "stopped $name"
        fi
        rm -f "$K8S_STATE/run/$name.pid"
    done
}

case "${1:-up}" in
    down)
        stop_all
        exit 0
        ;;
    purge)
        stop_all
        sleep 2
        # Mounts the kubelet and containerd made for pods, and the volumes' filesystems, go first.
        grep -o " $K8S_STATE/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
        remove_pod_network
        rm -rf "$K8S_STATE"
        log "removed $K8S_STATE"
        exit 0
        ;;
    up) ;;
    *) die "usage: scripts/k8s-up.sh [up|down|purge]" ;;
esac

# shellcheck disable=SC2086 # the list is one word per package
ensure_packages $K8S_PACKAGES
require_docker
build_binaries
build_helm
mkdir -p "$K8S_STATE"
chmod 0700 "$K8S_STATE"
make_certificates
start_containerd
import_pause_image
make_agent_image
make_service_image
import_local_images
start_etcd
start_apiserver
start_controller_manager
start_provisioner
make_storage_class
start_scheduler
start_kubelet
start_kube_proxy
start_coredns
log "the cluster is up: node $K8S_NODE Ready"
echo "KUBECONFIG=$KUBECONFIG_ADMIN"
echo "KUBECTL=$K8S_BIN/kubectl"
echo "HELM=$HELM"
