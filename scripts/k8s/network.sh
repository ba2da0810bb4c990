# The test cluster's pod network, sourced by scripts/k8s-up.sh (its variables and helpers):
#
#   - pods: the standard CNI plugins of Debian's containernetworking-plugins (bridge on
#     $POD_BRIDGE with host-local addresses of $POD_CIDR, portmap, firewall: the last accepts
#     the pods' traffic in FORWARD, whose policy the Docker engine sets to DROP)
#   - Services: kube-proxy (built with the other programs), iptables mode; the API server's
#     Service (10.96.0.1) leads to the node's address, where the API server also listens
#   - DNS: CoreDNS, built from its Go module (scripts/k8s/coredns/go.mod), on the node's host
#     at the pods' gateway; the kubelet gives pods that address as their nameserver and
#     `cluster.local` as their search domain
#   - NetworkPolicy: not enforced here, and said so. The enforcers that build from Go modules
#     do not run on this kernel or are refused: kube-network-policies queues packets through
#     nftables (CONFIG_NFT_QUEUE is not set), kube-router's only version served has reported
#     security flaws, Calico's and Cilium's modules are not served. Sandboxes of `none` runtimes
#     are held without one: their pod's interfaces are taken down before the sandbox starts
#     (crates/sandboxd-kubernetes/src/pod.rs).

POD_CIDR="10.244.0.0/24"
POD_BRIDGE="sbxpods0"
POD_GATEWAY="10.244.0.1"
CLUSTER_DOMAIN="cluster.local"
KUBE_PROXY_HEALTHZ_PORT=20256
KUBE_PROXY_METRICS_PORT=20249
COREDNS_READY_PORT=20181
COREDNS_MODULE="$SANDBOXD_SCRIPTS/k8s/coredns"
COREDNS_VERSION="$(awk '$1 == "require" && $2 == "github.com/coredns/coredns" { print $3 }' "$COREDNS_MODULE/go.mod")"
COREDNS="${SANDBOXD_K8S_CACHE:-/var/cache/sandboxd-k8s}/coredns-$COREDNS_VERSION/coredns"
# The API server's port is open to the host's loopback and the pods' bridge only.
API_GUARD_CHAIN="SANDBOXD-K8S-API"

# The pods' network configuration for the cluster's containerd (it reads the directory).
write_pod_network() {
    local dir="$K8S_STATE/cni/net.d"
    mkdir -p "$dir"
    # Earlier versions of this script gave pods no network (a macvlan over a portless bridge).
    rm -f "$dir/10-sandboxd-none.conflist"
    ip link del sbxnone0 2>/dev/null || true
    # The bridge exists with its address before the first pod, for CoreDNS to listen on.
    ip link show "$POD_BRIDGE" >/dev/null 2>&1 || ip link add "$POD_BRIDGE" type bridge
    sysctl -qw "net.ipv6.conf.$POD_BRIDGE.disable_ipv6=1"
    ip addr show dev "$POD_BRIDGE" | grep -q "inet $POD_GATEWAY/" ||
        ip addr add "$POD_GATEWAY/${POD_CIDR#*/}" dev "$POD_BRIDGE"
    ip link set "$POD_BRIDGE" up
    # Services' addresses are translated by iptables for bridged frames too.
    sysctl -qw net.bridge.bridge-nf-call-iptables=1 net.ipv4.ip_forward=1
    cat >"$dir/10-sandboxd-pods.conflist" <<CONF
{"cniVersion": "0.4.0", "name": "sandboxd-pods", "plugins": [
 {"type": "bridge", "bridge": "$POD_BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
  "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY"}]],
           "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$K8S_STATE/cni/ipam"}},
 {"type": "portmap", "capabilities": {"portMappings": true}},
 {"type": "firewall", "backend": "iptables"}]}
CONF
}

# The API server listens on every address (the pods reach it at the node's); this chain keeps
# its port to the host's loopback and the pods' bridge.
guard_api_port() {
    iptables -N "$API_GUARD_CHAIN" 2>/dev/null || iptables -F "$API_GUARD_CHAIN"
    iptables -A "$API_GUARD_CHAIN" -i lo -j RETURN
    iptables -A "$API_GUARD_CHAIN" -i "$POD_BRIDGE" -j RETURN
    iptables -A "$API_GUARD_CHAIN" -j DROP
    iptables -C INPUT -p tcp --dport "$APISERVER_PORT" -j "$API_GUARD_CHAIN" 2>/dev/null ||
        iptables -I INPUT -p tcp --dport "$APISERVER_PORT" -j "$API_GUARD_CHAIN"
}

# What write_pod_network, guard_api_port and kube-proxy made on the host (a purge).
remove_pod_network() {
    if [[ -x "$K8S_BIN/kube-proxy" ]]; then "$K8S_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true; fi
    ip link del "$POD_BRIDGE" 2>/dev/null || true
    iptables -D INPUT -p tcp --dport "$APISERVER_PORT" -j "$API_GUARD_CHAIN" 2>/dev/null || true
    iptables -F "$API_GUARD_CHAIN" 2>/dev/null || true
    iptables -X "$API_GUARD_CHAIN" 2>/dev/null || true
}

# write_if_changed FILE: standard input to FILE, unless FILE holds it already.
write_if_changed() {
    local file=$1 new
    new="$(cat)"
    [[ -f "$file" && "$(cat "$file")" == "$new" ]] && return 0
    printf '%s\n' "$new" >"$file.partial"
    mv "$file.partial" "$file"
}

start_kube_proxy() {
    cert kube-proxy "/CN=system:kube-proxy"
    kubeconfig "$K8S_STATE/kube-proxy.kubeconfig" kube-proxy
    # kube-proxy watches its file and exits when it is written: only a change is written.
    write_if_changed "$K8S_STATE/kube-proxy-config.yaml" <<CONF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$K8S_STATE/kube-proxy.kubeconfig"}
hostnameOverride: $K8S_NODE
mode: iptables
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$KUBE_PROXY_METRICS_PORT
nodePortAddresses: ["$NODE_IP/32"]
# The host's conntrack settings and loopback routing are left as they are.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
CONF
    replace_if_changed kube-proxy "$(sha256sum <"$K8S_STATE/kube-proxy-config.yaml")"
    start kube-proxy "$K8S_BIN/kube-proxy" --config "$K8S_STATE/kube-proxy-config.yaml"
    wait_for kube-proxy 60 curl -fsS "http://127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT/healthz"
}

start_coredns() {
    build_go_tool "CoreDNS $COREDNS_VERSION" 2 "$COREDNS_MODULE" "$COREDNS" github.com/coredns/coredns
    mkdir -p "$K8S_STATE/coredns"
    cat >"$K8S_STATE/coredns/Corefile" <<CONF
.:53 {
    bind $POD_GATEWAY
    errors
    kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
        kubeconfig $KUBECONFIG_ADMIN admin@sandboxd-test
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    ready 127.0.0.1:$COREDNS_READY_PORT
}
CONF
    replace_if_changed coredns "$COREDNS $(sha256sum <"$K8S_STATE/coredns/Corefile")"
    start coredns "$COREDNS" -conf "$K8S_STATE/coredns/Corefile"
    # Ready once its kubernetes plugin has read the Services.
    wait_for coredns 60 curl -fsS "http://127.0.0.1:$COREDNS_READY_PORT/ready"
}
