#!/usr/bin/env bash
# Boots a real Kubernetes cluster on this machine (one node by default, FLEETBENCH_NODES=N for
# N nodes), from binaries built out of the Go module proxy (hack/build-kube.sh) plus Debian's
# containerd, runc and CNI plugins: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy (iptables) and CoreDNS (a Deployment in kube-system, from
# a locally built image).
#
# Each node lives in its own network namespace (10.200.0.10, .11, ...) whose default route leads
# into a namespace that forwards nothing: no packet leaves the machine. The nodes share one L2
# segment (a bridge in that dead-end namespace) and route each other's pod CIDRs. The control
# plane runs in node 1's namespace. See lib.sh for the layout.
#
# Re-runnable: it first runs down.sh, which clears whatever a crashed run left behind.
# usage: hack/cluster/up.sh            then: export KUBECONFIG=bin/cluster/kubeconfig
# env:   FLEETBENCH_NODES=N             N nodes (1..4, default 1): fleetbench-node, fleetbench-node-2,
#                                       ...; each its own containerd, kubelet, kube-proxy (and
#                                       kube-router) in its own network namespace, labelled
#                                       fleetbench.dev/node-index=I
#        FLEETBENCH_CLUSTERS=2          a second cluster beside the first (bin/cluster-2/kubeconfig):
#                                       nodes 10.200.0.20.. on the same segment, pods 10.245/16,
#                                       Services 10.97/16, FLEETBENCH_CLUSTER2_NODES node(s) (1);
#                                       hack/cluster/kueue.sh multikueue joins them with MultiKueue
#        FLEETBENCH_NO_DNS=1            skip CoreDNS (saves its ~3 min first build)
#        FLEETBENCH_METRICS_SERVER=1    also run metrics-server (metrics.k8s.io, kubectl top);
#                                       off by default (its first build takes a few minutes)
#        FLEETBENCH_NETPOL=1            enforce NetworkPolicy: kube-router's policy controller alone
#                                       (iptables + ipset) in every node namespace; the bridge CNI
#                                       enforces none. Off by default (first build about 3 min)
#        FLEETBENCH_CONTAINER_LOG_MAX_SIZE  the kubelets' containerLogMaxSize (default 10Mi)
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

t0=$(date +%s)

CLUSTERS=${FLEETBENCH_CLUSTERS:-1}
[[ "$CLUSTERS" =~ ^[1-9]$ ]] && [ "$CLUSTERS" -le "$MAX_CLUSTERS" ] ||
  die "FLEETBENCH_CLUSTERS must be a number from 1 to $MAX_CLUSTERS (got '$CLUSTERS')"
NODES=${FLEETBENCH_NODES:-1}
[[ "$NODES" =~ ^[1-9][0-9]*$ ]] && [ "$NODES" -le "$MAX_NODES" ] ||
  die "FLEETBENCH_NODES must be a number from 1 to $MAX_NODES (got '$NODES')"

metrics_server_enabled() { [ "${FLEETBENCH_METRICS_SERVER:-}" = 1 ]; }
netpol_enabled() { [ "${FLEETBENCH_NETPOL:-}" = 1 ]; }

ensure_packages() {
  # Debian's containerd 1.6, runc, CNI plugins; iptables and conntrack for kube-proxy.
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v conntrack >/dev/null || missing+=(conntrack)
  command -v openssl >/dev/null || missing+=(openssl)
  if netpol_enabled; then command -v ipset >/dev/null || missing+=(ipset); fi
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_binaries() {
  "$root/hack/build-kube.sh" etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
  "$root/hack/images/pause.sh"
  [ -n "${FLEETBENCH_NO_DNS:-}" ] || "$root/hack/images/coredns.sh"
  if metrics_server_enabled; then "$root/hack/images/metrics-server.sh"; fi
  if netpol_enabled; then "$root/hack/cluster/kube-router.sh"; fi
}

setup_network() {
  log "network: cluster $CLUSTER, $NODES node(s) on $SEG_BRIDGE in the dead-end $SINK_NS ($SINK_IP), host link $HOST_LINK_IP<->$NODE_LINK_IP (node 1)"
  if [ "$CLUSTER" = 1 ]; then
    # The sink: a bridge (the nodes' shared L2 segment) with the dead-end next hop's address, no
    # routes beyond its /24 and forwarding off, so anything not for the cluster dies there.
    # Bridging needs no forwarding; the sink's iptables must not see bridged frames.
    ip netns add "$SINK_NS"
    ip -n "$SINK_NS" link set lo up
    ip -n "$SINK_NS" link add "$SEG_BRIDGE" type bridge
    ip -n "$SINK_NS" addr add "$SINK_IP/24" dev "$SEG_BRIDGE"
    ip -n "$SINK_NS" link set "$SEG_BRIDGE" up
    nsenter --net="/run/netns/$SINK_NS" sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0
    nsenter --net="/run/netns/$SINK_NS" sysctl -qw net.bridge.bridge-nf-call-iptables=0 net.bridge.bridge-nf-call-ip6tables=0 2>/dev/null || true
  else
    # A second cluster joins cluster 1's segment (its sink and bridge).
    [ -e "/run/netns/$SINK_NS" ] || die "cluster $CLUSTER joins cluster 1's segment: boot cluster 1 first (FLEETBENCH_CLUSTERS=2 hack/cluster/up.sh)"
  fi
  local i j
  for ((i = 1; i <= NODES; i++)); do
    node_set "$i"
    ip netns add "$N_NS"
    # Node <-> segment: the node's default route (into the sink) and its path to the other nodes.
    ip link add fb-node0 netns "$N_NS" type veth peer name "$SINK_VETH$((i - 1))" netns "$SINK_NS"
    ip -n "$SINK_NS" link set "$SINK_VETH$((i - 1))" master "$SEG_BRIDGE"
    ip -n "$SINK_NS" link set "$SINK_VETH$((i - 1))" up
    ip -n "$N_NS" link set lo up
    ip -n "$N_NS" addr add "$N_IP/24" dev fb-node0
    ip -n "$N_NS" link set fb-node0 up
    ip -n "$N_NS" route add default via "$SINK_IP"
    # The other nodes' pod CIDRs via their node IPs on the segment (static per-node ranges).
    local ns=$N_NS
    for ((j = 1; j <= NODES; j++)); do
      if [ "$j" = "$i" ]; then continue; fi
      node_set "$j"
      ip -n "$ns" route add "$N_POD_CIDR" via "$N_IP"
    done
    node_set "$i"
    # Node I >= 2 answers the host (10.200.C.1) through node 1; nothing else goes that way.
    if [ "$i" != 1 ]; then ip -n "$N_NS" route add "$HOST_LINK_NET" via "$NODE_IP"; fi
    # The node routes between pods, services and its links; bridged pod traffic must pass
    # iptables for ClusterIP replies to be un-NATed (these sysctls are per namespace).
    in_ns "$N_NS" sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1
  done
  # Between clusters: each side's nodes route the other's pod CIDRs via its node IPs, so a pod
  # of one reaches the other's node IPs (NodePorts, the API server) and the reply finds it.
  # `replace`: a route left from the other cluster's earlier boot is simply renewed.
  local cidr ip other
  while read -r cidr ip other; do
    [ -n "$cidr" ] || continue
    for ((i = 1; i <= NODES; i++)); do
      node_set "$i"
      ip -n "$N_NS" route replace "$cidr" via "$ip"
      ip -n "$other" route replace "$N_POD_CIDR" via "$N_IP"
    done
  done <<<"$(other_cluster_nodes)"
  # Host <-> node 1: a point-to-point link only. Node 1 has no route through it beyond the
  # /30, so it can answer the host but never send anything onward via the host.
  ip link add "$HOST_VETH" type veth peer name fb-link0 netns "$NODE_NS"
  ip addr add "$HOST_LINK_IP/30" dev "$HOST_VETH"
  ip link set "$HOST_VETH" up
  ip -n "$NODE_NS" addr add "$NODE_LINK_IP/30" dev fb-link0
  ip -n "$NODE_NS" link set fb-link0 up
  ip route add "$CLUSTER_CIDR" via "$NODE_LINK_IP" dev "$HOST_VETH"
  ip route add "$SERVICE_CIDR" via "$NODE_LINK_IP" dev "$HOST_VETH"
  for ((i = 1; i <= NODES; i++)); do
    node_set "$i"
    ip route add "$N_IP/32" via "$NODE_LINK_IP" dev "$HOST_VETH"
  done
}

# cert NAME CN O EKU [SANS] : key + certificate signed by our CA.
cert() {
  local name=$1 cn=$2 o=$3 eku=$4 sans=${5:-} pki="$DATA/pki"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/$name.key" \
    -subj "/CN=$cn${o:+/O=$o}" -out "$pki/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [ -z "$sans" ] || echo "subjectAltName=$sans"
  } >"$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 365 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

# kubeconfig FILE SERVER CERTNAME
kubeconfig() {
  local pki="$DATA/pki"
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: fleetbench$CSFX
  cluster:
    server: $2
    certificate-authority-data: $(base64 -w0 "$pki/ca.crt")
users:
- name: $3
  user:
    client-certificate-data: $(base64 -w0 "$pki/$3.crt")
    client-key-data: $(base64 -w0 "$pki/$3.key")
contexts:
- name: fleetbench$CSFX
  context:
    cluster: fleetbench$CSFX
    user: $3
current-context: fleetbench$CSFX
EOF
  chmod 600 "$1"
}

make_pki() {
  log "certificates and kubeconfigs"
  local pki="$DATA/pki"
  mkdir -p "$pki"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" -subj "/CN=fleetbench$CSFX-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
  cert apiserver kube-apiserver "" serverAuth \
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$NODE_IP,IP:$NODE_LINK_IP,IP:$KUBE_SVC_IP"
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters clientAuth
  cert admin fleetbench-admin system:masters clientAuth
  cert controller-manager system:kube-controller-manager "" clientAuth
  cert scheduler system:kube-scheduler "" clientAuth
  cert kube-proxy system:kube-proxy "" clientAuth
  # Aggregation layer (front proxy): lets API extensions such as metrics-server authenticate
  # the API server, and keeps controller-manager from complaining about a missing CA bundle.
  cert front-proxy-client front-proxy-client "" clientAuth
  # One identity per node: the Node authorizer and NodeRestriction tie kubelet I to its Node.
  local i
  for ((i = 1; i <= NODES; i++)); do
    node_set "$i"
    mkdir -p "$N_DIR"
    cert "kubelet$N_SFX" "system:node:$N_NAME" system:nodes clientAuth
    cert "kubelet-serving$N_SFX" "system:node:$N_NAME" system:nodes serverAuth "DNS:$N_NAME,IP:$N_IP"
    kubeconfig "$N_DIR/kubelet.kubeconfig" "https://$NODE_IP:6443" "kubelet$N_SFX"
  done
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  # Control plane talks to the API server over node 1's loopback; node agents over node 1's IP
  # (across the segment from the other nodes); the host over the host link.
  kubeconfig "$DATA/controller-manager.kubeconfig" https://127.0.0.1:6443 controller-manager
  kubeconfig "$DATA/scheduler.kubeconfig" https://127.0.0.1:6443 scheduler
  kubeconfig "$DATA/kube-proxy.kubeconfig" "https://$NODE_IP:6443" kube-proxy
  kubeconfig "$DATA/admin.kubeconfig" "https://$NODE_LINK_IP:6443" admin
  # A second cluster is a MultiKueue worker: the identity cluster 1's Kueue (a host process, so
  # over the host link) acts as there, with hack/cluster/multikueue-rbac.yaml's rights only.
  if [ "$CLUSTER" != 1 ]; then
    cert multikueue fleetbench-multikueue "" clientAuth
    kubeconfig "$DATA/multikueue.kubeconfig" "https://$NODE_LINK_IP:6443" multikueue
  fi
}

# write_configs I : node I's containerd, CNI, kubelet and kube-proxy configs under its N_DIR.
write_configs() {
  node_set "$1"
  mkdir -p "$N_DIR/cni/net.d" "$N_DIR/cni/ipam" "$N_DIR/opt" "$N_DIR/pod-logs" "$N_STATE"
  cat >"$N_DIR/containerd.toml" <<EOF
# containerd for fleetbench node $N_NAME: its own root, state and socket, so it cannot collide
# with another containerd on the machine (or another node's) and teardown knows every file it wrote.
version = 2
root = "$N_DIR/containerd"
state = "$N_STATE"
[grpc]
  address = "$N_SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$N_DIR/opt"
[plugins."io.containerd.grpc.v1.cri"]
  # No registry is reachable: the sandbox image is built locally (hack/images/pause.sh).
  sandbox_image = "$PAUSE_IMAGE"
  # runc cannot write the negative oom_score_adj kubelet asks for here (root lacks
  # CAP_SYS_RESOURCE): clamp it, or every sandbox fails with "can't get final child's PID".
  restrict_oom_score_adj = true
  # Pod network namespaces under our state dir instead of /run/netns.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        # runc's state (default /run/containerd/runc) under our state dir too.
        Root = "$N_RUNC"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$N_DIR/cni/net.d"
EOF
  # Pods on a bridge in the node namespace; IPAM state under the node's data dir. No ipMasq:
  # pods keep their source address across nodes (NetworkPolicy matches it; there is no
  # outside to masquerade for), and kube-proxy masquerades what needs it for Services.
  cat >"$N_DIR/cni/net.d/10-fleetbench.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "fleetbench$CSFX",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$N_DIR/cni/ipam",
        "ranges": [[{"subnet": "$N_POD_CIDR"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  cat >"$N_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$N_SOCK
# Debian's containerd runs without systemd here: cgroupfs on the v1 hierarchies.
cgroupDriver: cgroupfs
# Our own subtree (/sys/fs/cgroup/*/$CGROUP_ROOT, node I >= 2 below it in node-I) so teardown
# finds every pod process; one per node, or each kubelet would reap the others' pod cgroups.
cgroupRoot: /$N_CGROUP
failSwapOn: false
failCgroupV1: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $DATA/pki/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $DATA/pki/kubelet-serving$N_SFX.crt
tlsPrivateKeyFile: $DATA/pki/kubelet-serving$N_SFX.key
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
# Pods with dnsPolicy Default (CoreDNS) get no upstream: nothing may resolve outside.
resolvConf: ""
podLogsDir: $N_DIR/pod-logs
# Rotation as a node configures it (make e2e: 1Mi, so runs outlive rotated logs).
containerLogMaxSize: ${FLEETBENCH_CONTAINER_LOG_MAX_SIZE:-10Mi}
# Imported images cannot be pulled again: never garbage-collect them, and evict late.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2%}
serializeImagePulls: false
EOF
  cat >"$N_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: $N_NAME
clusterCIDR: $CLUSTER_CIDR
clientConnection: {kubeconfig: $DATA/kube-proxy.kubeconfig}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
# NodePorts on the node IP only (also silences a startup warning).
nodePortAddresses: [primary]
# nf_conntrack_max and timeouts are not writable from a non-initial network namespace:
# 0 leaves them alone (otherwise kube-proxy exits).
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
}

# start_in NS NAME CMD... : run CMD detached inside network namespace NS, log and pid under $DATA.
start_in() {
  local ns=$1 name=$2
  shift 2
  # 9>&-: the daemons must not inherit (and so hold) the up/down lock.
  setsid nsenter --net="/run/netns/$ns" -- "$@" >"$DATA/logs/$name.log" 2>&1 </dev/null 9>&- &
  echo $! >"$DATA/pids/$name.pid"
}
# start NAME CMD... : the same in node 1's namespace (the control plane).
start() { start_in "$NODE_NS" "$@"; }

alive() { kill -0 "$(cat "$DATA/pids/$1.pid")" 2>/dev/null || { tail -20 "$DATA/logs/$1.log" >&2; die "$1 exited"; }; }

make_cgroups() {
  # kubelet requires its cgroupRoot to exist in every hierarchy. A new v1 cpuset starts with
  # no cpus/mems (clone_children is 0): copy the parent's, level by level.
  local d i cs=/sys/fs/cgroup/cpuset
  for ((i = 1; i <= NODES; i++)); do
    node_set "$i"
    for d in /sys/fs/cgroup/*/; do
      mkdir -p "$d$N_CGROUP"
    done
  done
  cat "$cs/cpuset.cpus" >"$cs/$CGROUP_ROOT/cpuset.cpus"
  cat "$cs/cpuset.mems" >"$cs/$CGROUP_ROOT/cpuset.mems"
  for ((i = 2; i <= NODES; i++)); do
    node_set "$i"
    cat "$cs/$CGROUP_ROOT/cpuset.cpus" >"$cs/$N_CGROUP/cpuset.cpus"
    cat "$cs/$CGROUP_ROOT/cpuset.mems" >"$cs/$N_CGROUP/cpuset.mems"
  done
}

start_containerd() {
  log "containerd ($NODES node(s))"
  local i t
  for ((i = 1; i <= NODES; i++)); do
    node_set "$i"
    start_in "$N_NS" "containerd$N_SFX" containerd --config "$N_DIR/containerd.toml"
  done
  for ((i = 1; i <= NODES; i++)); do
    node_set "$i"
    wait_for "containerd socket of $N_NAME" 30 timeout 5 ctr --address "$N_SOCK" version
    alive "containerd$N_SFX"
  done
  local images=("$root/bin/images/pause.tar")
  [ -n "${FLEETBENCH_NO_DNS:-}" ] || images+=("$root/bin/images/coredns.tar")
  if metrics_server_enabled; then images+=("$root/bin/images/metrics-server.tar"); fi
  t=$(date +%s)
  import_images "${images[@]}"
  log "images imported into $NODES containerd(s) in $(($(date +%s) - t))s"
}

start_control_plane() {
  log "etcd, kube-apiserver, kube-controller-manager, kube-scheduler"
  start etcd "$KBIN/etcd" --name fleetbench --data-dir "$DATA/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster fleetbench=http://127.0.0.1:2380 --unsafe-no-fsync --log-level warn
  local pki="$DATA/pki"
  start kube-apiserver "$KBIN/kube-apiserver" \
    --etcd-servers http://127.0.0.1:2379 \
    --advertise-address "$NODE_IP" --bind-address 0.0.0.0 --secure-port 6443 \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$pki/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --requestheader-client-ca-file "$pki/ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$pki/front-proxy-client.crt" --proxy-client-key-file "$pki/front-proxy-client.key" \
    --allow-privileged=true --profiling=false --v=1
  wait_for "kube-apiserver /readyz" 90 kc get --raw /readyz
  alive etcd
  start kube-controller-manager "$KBIN/kube-controller-manager" \
    --kubeconfig "$DATA/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$DATA/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$DATA/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
    --service-cluster-ip-range "$SERVICE_CIDR" --allocate-node-cidrs=false \
    --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
    --root-ca-file "$pki/ca.crt" --service-account-private-key-file "$pki/sa.key" --v=1
  start kube-scheduler "$KBIN/kube-scheduler" \
    --kubeconfig "$DATA/scheduler.kubeconfig" \
    --authentication-kubeconfig "$DATA/scheduler.kubeconfig" \
    --authorization-kubeconfig "$DATA/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --v=1
}

DEVICE_PLUGIN_SOCK=/var/lib/kubelet/device-plugins/kubelet.sock
# device_plugin_listening NS : a kubelet listens on the device plugin socket in namespace NS.
device_plugin_listening() { in_ns "$1" ss -xlH | grep -q " $DEVICE_PLUGIN_SOCK "; }

start_node() {
  log "kubelet, kube-proxy ($NODES node(s))"
  # kubelet rewrites these machine-wide sysctls at start: remember them for down.sh.
  local k v i
  for k in "${KUBELET_SYSCTLS[@]}"; do echo "$k $(sysctl -n "$k")"; done >"$DATA/sysctl.orig"
  for ((i = 1; i <= NODES; i++)); do
    node_set "$i"
    # fleetbench.dev/node-index lets tests place pods (kubernetes.io/hostname works too).
    start_in "$N_NS" "kubelet$N_SFX" "$KBIN/kubelet" --config "$N_DIR/kubelet.yaml" \
      --kubeconfig "$N_DIR/kubelet.kubeconfig" --root-dir "$N_DIR/kubelet" \
      --hostname-override "$N_NAME" --node-ip "$N_IP" --node-labels "fleetbench.dev/node-index=$i" --v=1
    start_in "$N_NS" "kube-proxy$N_SFX" "$KBIN/kube-proxy" --config "$N_DIR/kube-proxy.yaml" --v=1
    # Every kubelet clears and binds the same hard-coded device plugin socket: two at once can
    # meet "address already in use" and stop. One at a time, each until it listens there.
    wait_for "kubelet of $N_NAME listening on $DEVICE_PLUGIN_SOCK" 60 device_plugin_listening "$N_NS"
  done
  for ((i = 1; i <= NODES; i++)); do
    node_set "$i"
    wait_for "node $N_NAME Ready" 90 kc wait --for=condition=Ready "node/$N_NAME" --timeout=1s
    alive "kube-proxy$N_SFX"
    alive "kubelet$N_SFX"
    # Record the static range in the Node (informational: the bridge CNI config holds it).
    kc patch node "$N_NAME" --type merge -p "{\"spec\":{\"podCIDR\":\"$N_POD_CIDR\",\"podCIDRs\":[\"$N_POD_CIDR\"]}}" >/dev/null
  done
  # Put back what kubelet changed (it only writes them once, at start).
  while read -r k v; do sysctl -qw "$k=$v"; done <"$DATA/sysctl.orig"
  # Pods created before the default ServiceAccount exists are rejected.
  wait_for "default ServiceAccount" 60 kc -n default get serviceaccount default
  alive kube-controller-manager
  alive kube-scheduler
}

# kube-router v2.1.0 with only its network policy controller, a host process in the node
# namespace like kube-proxy. It needs the Node object (--hostname-override) and its InternalIP
# (local pods are those whose status.hostIP equals it), the ipset and iptables(-save/-restore)
# binaries, and net.bridge.bridge-nf-call-iptables=1 in the node namespace (setup_network) so
# pod-to-pod traffic on cni0 crosses the FORWARD chain; not the node's pod CIDR. Its chains
# (KUBE-ROUTER-*, KUBE-NWPLCY-*, KUBE-POD-FW-*) and ipsets (KUBE-SRC-*, KUBE-DST-*) live in the
# node namespace, so deleting it (down.sh) removes them; kube-router leaves them on SIGTERM.
start_netpol() {
  netpol_enabled || return 0
  log "kube-router (network policy controller only, $NODES node(s))"
  cert kube-router system:kube-router "" clientAuth
  kubeconfig "$DATA/kube-router.kubeconfig" "https://$NODE_IP:6443" kube-router
  kc apply -f "$root/hack/cluster/kube-router-rbac.yaml" >/dev/null
  local i
  for ((i = 1; i <= NODES; i++)); do
    node_set "$i"
    # Started through the bin/kube-router link: pids_of matches "kube-router " on the command line.
    start_in "$N_NS" "kube-router$N_SFX" "$root/bin/kube-router" --kubeconfig "$DATA/kube-router.kubeconfig" \
      --hostname-override "$N_NAME" \
      --run-firewall=true --run-router=false --run-service-proxy=false --run-loadbalancer=false \
      --enable-ipv4=true --enable-ipv6=false --service-cluster-ip-range "$SERVICE_CIDR" \
      --health-port 20244 --metrics-port 0 --v=1
  done
  # The default policy chain is created once the informers synced, after the jumps from
  # INPUT/FORWARD/OUTPUT; the first full sync follows within milliseconds.
  for ((i = 1; i <= NODES; i++)); do
    node_set "$i"
    wait_for "kube-router policy chains on $N_NAME" 60 in_ns "$N_NS" iptables -t filter -S KUBE-NWPLCY-DEFAULT
    alive "kube-router$N_SFX"
  done
  # kube-router admits traffic to a pod from the pod's own node (--src-type LOCAL). On one node
  # that covers the control plane (API server service/pod proxy, the aggregator) and host
  # traffic kube-proxy masquerades to the node address; on node I >= 2 all of it would come
  # from 10.200.0.10, a remote host, and a policy admitting only pods would refuse it. Keep the
  # single-node semantics: premark node 1's packets to node I's pods with the bit kube-router
  # sets for "a policy admitted it" (0x10000; v2.1.0's pod chains REJECT only packets without
  # it and never clear it before). Pod-to-pod traffic keeps its pod source and is unaffected.
  for ((i = 2; i <= NODES; i++)); do
    node_set "$i"
    in_ns "$N_NS" iptables -t mangle -A PREROUTING -s "$NODE_IP/32" -d "$N_POD_CIDR" \
      -m comment --comment "fleetbench: admit the control plane (node 1) as if local" \
      -j MARK --set-xmark 0x10000/0x10000
  done
}

start_dns() {
  [ -z "${FLEETBENCH_NO_DNS:-}" ] || return 0
  log "CoreDNS"
  # Two replicas from 3 nodes, so the chaos matrix's lost node never takes the cluster's DNS
  # with it (a replacement runner must still resolve its target); one on smaller clusters,
  # where make e2e's placement counts on the room.
  local replicas=1
  [ "$NODES" -lt 3 ] || replicas=2
  sed -e "s|@DNS_IP@|$DNS_IP|g" -e "s|@DNS_REPLICAS@|$replicas|g" "$root/hack/cluster/coredns.yaml" | kc apply -f - >/dev/null
  wait_for "CoreDNS available" 90 kc -n kube-system wait --for=condition=Available deployment/coredns --timeout=1s
}

# metrics_served POD : metrics.k8s.io answers through the aggregator, `kubectl top` lists a
# kube-system pod whose name starts with POD (so CPU and memory were scraped for it) and every
# node (so metrics-server reached every kubelet, across the nodes' segment).
metrics_served() {
  local top nodes
  kc get --raw /apis/metrics.k8s.io/v1beta1/pods >/dev/null &&
    top=$(kc top pod -n kube-system --no-headers) && grep -q "^$1" <<<"$top" &&
    nodes=$(kc top node --no-headers) && [ "$(grep -c . <<<"$nodes")" -ge "$NODES" ]
}

start_metrics_server() {
  metrics_server_enabled || return 0
  log "metrics-server"
  local t pod=coredns
  [ -z "${FLEETBENCH_NO_DNS:-}" ] || pod=metrics-server
  t=$(date +%s)
  kc apply -f "$root/hack/cluster/metrics-server.yaml" >/dev/null
  if ! wait_for "metrics.k8s.io serving $pod" 90 metrics_served "$pod"; then
    kc -n kube-system get pods,endpoints -o wide >&2 || true
    kc get apiservice v1beta1.metrics.k8s.io -o wide >&2 || true
    kc -n kube-system logs deployment/metrics-server --tail=30 >&2 || true
    die "metrics-server did not serve metrics within 90s"
  fi
  log "metrics.k8s.io ready $(($(date +%s) - t))s after apply; kubectl top pod -A:"
  kc top pod -A >&2
}

command -v nsenter >/dev/null || die "nsenter (util-linux) is required"
[ "$(id -u)" = 0 ] || die "run as root"
lock_cluster
ensure_packages
ensure_binaries
"$root/hack/cluster/down.sh" --quiet
mkdir -p "$DATA/logs" "$DATA/pids" "$OUT"
setup_network
make_pki
for ((i = 1; i <= NODES; i++)); do write_configs "$i"; done
make_cgroups
start_containerd
start_control_plane
start_node
start_netpol
start_dns
start_metrics_server
cp "$DATA/admin.kubeconfig" "$KUBECONFIG_OUT"
log "cluster up in $(($(date +%s) - t0))s: cluster $CLUSTER, $NODES node(s) (logs: $DATA/logs)"
if [ "$CLUSTER" = 1 ] && [ "$CLUSTERS" -ge 2 ]; then
  # The second cluster: its own control plane and nodes on this cluster's segment.
  FLEETBENCH_CLUSTER_INDEX=2 FLEETBENCH_CLUSTERS=1 FLEETBENCH_NODES=${FLEETBENCH_CLUSTER2_NODES:-1} "$0"
fi
[ "$CLUSTER" != 1 ] || echo "export KUBECONFIG=$KUBECONFIG_OUT"
