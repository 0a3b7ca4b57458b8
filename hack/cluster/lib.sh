# shellcheck shell=bash disable=SC2034
# Shared settings and helpers for hack/cluster/*.sh (sourced, not executed).
#
# Layout of a running cluster (everything one teardown has to find):
#   /var/lib/fleetbench-cluster/   certificates, configs, etcd, containerd root, kubelet root,
#                                  pod logs, CNI IPAM state, component logs (logs/) and pids (pids/)
#   /var/lib/fleetbench-cluster/node-I/   node I's (I >= 2) containerd root, kubelet root, configs,
#                                  pod logs, CNI IPAM state (node 1 uses the top level, as ever)
#   /run/fleetbench-cluster/       containerd state, its socket, pod network namespaces
#                                  (node I >= 2: containerd-I/, runc-I/)
#   /run/netns/fb-node, fb-sink    node 1's network namespace and the dead-end next hop that
#                                  holds the nodes' shared L2 segment (bridge fb-br0)
#   /run/netns/fb-node-I           node I's network namespace (FLEETBENCH_NODES=N, I = 2..N)
#   /sys/fs/cgroup/*/fleetbench    kubelet's cgroupRoot: every pod process lives below it
#                                  (node I >= 2: fleetbench/node-I)
#   bin/cluster/kubeconfig         admin kubeconfig for the host (server https://10.200.1.2:6443)
set -euo pipefail
shopt -s inherit_errexit  # errexit inside $(...) too

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=hack/versions.env
source "$root/hack/versions.env"

KBIN="$root/bin/k8s/$KUBE_VERSION"

# FLEETBENCH_CLUSTER_INDEX=C (set by up.sh/down.sh for FLEETBENCH_CLUSTERS=2, not by hand)
# selects the second local cluster: every name, path, address range and cgroup below gets its
# own copy, and its nodes join cluster 1's L2 segment (10.200.0.20, ...) so the clusters' pods
# reach each other's node IPs. Cluster 1 keeps the names it always had.
MAX_CLUSTERS=2
CLUSTER=${FLEETBENCH_CLUSTER_INDEX:-1}
[[ "$CLUSTER" =~ ^[1-9]$ ]] && [ "$CLUSTER" -le "$MAX_CLUSTERS" ] ||
  { echo "error: FLEETBENCH_CLUSTER_INDEX must be 1..$MAX_CLUSTERS (got '$CLUSTER')" >&2; exit 1; }
if [ "$CLUSTER" = 1 ]; then CSFX= CPFX=fb; else CSFX=-$CLUSTER CPFX=fb$CLUSTER; fi

DATA=/var/lib/fleetbench-cluster$CSFX
RUNDIR=/run/fleetbench-cluster$CSFX
OUT="$root/bin/cluster$CSFX"
KUBECONFIG_OUT="$OUT/kubeconfig"
CONTAINERD_SOCK="$RUNDIR/containerd/containerd.sock"
CGROUP_ROOT=fleetbench$CSFX

# Network: node 1's namespace owns 10.200.0.10 on a veth whose peer is a port of bridge fb-br0
# (10.200.0.1) in a namespace that forwards nothing, so the node's default route is a dead end
# and no packet leaves the machine. Node I (FLEETBENCH_NODES=N) owns 10.200.0.(9+I) on the same
# bridge and pod CIDR 10.244.(I-1).0/24; every node routes the other nodes' pod CIDRs via their
# node IPs on that segment. A second veth pair (host 10.200.1.1 <-> node 1 10.200.1.2) lets the
# host reach the API server, and, through host routes via node 1, ClusterIPs, pod IPs and node IPs.
# Cluster 2: nodes 10.200.0.(19+I), pods 10.245.(I-1).0/24, Services 10.97.0.0/16, host link
# 10.200.2.1 <-> 10.200.2.2; both clusters' nodes route each other's pod CIDRs on the segment.
NODE_NS=$CPFX-node
SINK_NS=fb-sink
NODE_IP=10.200.0.$((10 * CLUSTER))
SINK_IP=10.200.0.1
SEG_BRIDGE=fb-br0
HOST_VETH=$CPFX-host0
SINK_VETH=$CPFX-sink
HOST_LINK_IP=10.200.$CLUSTER.1
NODE_LINK_IP=10.200.$CLUSTER.2
HOST_LINK_NET=10.200.$CLUSTER.0/30
if [ "$CLUSTER" = 1 ]; then NODE_NAME=fleetbench-node; else NODE_NAME=fleetbench-c$CLUSTER-node; fi
POD_NET=10.$((243 + CLUSTER))
POD_CIDR=$POD_NET.0.0/24
CLUSTER_CIDR=$POD_NET.0.0/16
SERVICE_CIDR=10.$((95 + CLUSTER)).0.0/16
KUBE_SVC_IP=10.$((95 + CLUSTER)).0.1
DNS_IP=10.$((95 + CLUSTER)).0.10

# FLEETBENCH_NODES bounds: every node is a kubelet, containerd, kube-proxy (and kube-router)
# on the same 2 cores.
MAX_NODES=4

# node_set I : describe node I (1-based) in N_* variables. Node 1 keeps the single-node names
# and paths; node I >= 2 adds the suffix -I.
node_set() {
  local i=$1
  if [ "$i" = 1 ]; then
    N_SFX= N_DIR=$DATA N_CGROUP=$CGROUP_ROOT
  else
    N_SFX=-$i N_DIR=$DATA/node-$i N_CGROUP=$CGROUP_ROOT/node-$i
  fi
  N_NAME=$NODE_NAME$N_SFX
  N_NS=$NODE_NS$N_SFX
  N_IP=10.200.0.$((10 * CLUSTER + i - 1))
  N_POD_CIDR=$POD_NET.$((i - 1)).0/24
  N_STATE=$RUNDIR/containerd$N_SFX
  N_SOCK=$N_STATE/containerd.sock
  N_RUNC=$RUNDIR/runc$N_SFX
}

# other_cluster_nodes : "POD_CIDR NODE_IP NS" of every running node of the other local clusters,
# from their network namespaces (node I of cluster C: fbC-node-I, 10.200.0.(10C+I-1)).
other_cluster_nodes() {
  local n c i pfx
  for n in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    [[ $n =~ ^fb([0-9]*)-node(-([0-9]+))?$ ]] || continue
    c=${BASH_REMATCH[1]:-1} i=${BASH_REMATCH[3]:-1}
    [ "$c" != "$CLUSTER" ] || continue
    echo "10.$((243 + c)).$((i - 1)).0/24 10.200.0.$((10 * c + i - 1)) $n"
  done
}

# node_ns_of NODENAME : the network namespace of a node (fleetbench-node-2 -> fb-node-2).
node_ns_of() { echo "$NODE_NS${1#"$NODE_NAME"}"; }

# node_sockets [RUNDIR] : the containerd sockets of a cluster's running nodes (this one's by
# default), node 1 first.
node_sockets() {
  local s dir=${1:-$RUNDIR}
  for s in "$dir"/containerd/containerd.sock "$dir"/containerd-[0-9]*/containerd.sock; do
    if [ -S "$s" ]; then echo "$s"; fi
  done
}

# import_images TAR... : import image tarballs into every node's containerd, nodes in parallel.
import_images() { import_images_under "$RUNDIR" "$@"; }

# import_images_under RUNDIR TAR... : the same for the cluster whose run dir is RUNDIR.
import_images_under() {
  local socks s pids=() p rc=0 dir=$1
  shift
  socks=$(node_sockets "$dir")
  [ -n "$socks" ] || die "no containerd socket under $dir (is the cluster up?)"
  for s in $socks; do
    CONTAINERD_ADDRESS=$s "$root/hack/images/import.sh" "$@" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  return $rc
}

# Processes we start, in start order (down.sh stops them in reverse).
COMPONENTS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kube-router)
# Ports the components listen on inside the node namespace (checked after teardown).
# 20244: kube-router's /healthz (FLEETBENCH_NETPOL=1 only).
PORTS=(2379 2380 6443 10248 10249 10250 10256 10257 10259 20244)
# Global (not per-namespace) sysctls kubelet rewrites at start; we put them back.
KUBELET_SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory)

log() { echo ">> $(date +%T) $*" >&2; }
die() { echo "error: $*" >&2; exit 1; }

# in_node CMD... : run CMD inside the node's network namespace. nsenter, not `ip netns exec`:
# the latter remounts /sys and hides the cgroup mounts from kubelet and containerd.
in_node() { nsenter --net="/run/netns/$NODE_NS" -- "$@"; }
# in_ns NS CMD... : the same for any of our namespaces (fb-node-2, ...).
in_ns() { local ns=$1; shift; nsenter --net="/run/netns/$ns" -- "$@"; }

# kubectl: the 1.34 build if hack/build-kube.sh made one, else the one on PATH.
kubectl_bin() {
  if [ -x "$KBIN/kubectl" ]; then echo "$KBIN/kubectl"; else command -v kubectl; fi
}
kc() { "$(kubectl_bin)" --kubeconfig "$DATA/admin.kubeconfig" --request-timeout=15s "$@"; }

# wait_for DESC SECONDS CMD... : poll CMD once a second until it succeeds or time runs out.
wait_for() {
  local desc=$1 timeout=$2 i
  shift 2
  for ((i = 0; i < timeout; i++)); do
    if "$@" >/dev/null 2>&1; then
      log "$desc: ok after ${i}s"
      return 0
    fi
    sleep 1
  done
  echo "error: timed out after ${timeout}s waiting for: $desc" >&2
  return 1
}

# pids_of NAME : pids of our NAME processes, found by their command line naming our data dirs
# (the same binaries may run elsewhere on the machine, e.g. envtest's kube-apiserver and etcd).
pids_of() {
  pgrep -f "^[^ ]*$1 .*($DATA|$RUNDIR)(/| |$)" || true
}

# lock_cluster : one up.sh/down.sh at a time (a second waits up to 5 min). up.sh runs
# down.sh itself and passes the lock down through FLEETBENCH_CLUSTER_LOCKED; cluster 1's lock
# covers cluster 2 too (cluster 1 owns the segment cluster 2 joins).
lock_cluster() {
  [ -z "${FLEETBENCH_CLUSTER_LOCKED:-}" ] || return 0
  mkdir -p /run/lock
  exec 9>/run/lock/fleetbench-cluster.lock
  flock -w 300 9 || die "another hack/cluster up/down is still running"
  export FLEETBENCH_CLUSTER_LOCKED=1
}

# running PID : the process exists and is not a zombie. Our daemons are reparented to this
# machine's init, which reaps slowly (about 2 s), so /proc/PID alone says "alive" too long.
running() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ "$state" != Z ]
}

# stop_component NAME : SIGTERM the recorded pids (every node's: NAME.pid, NAME-I.pid) and any
# pattern match, SIGKILL after 3 s (state is thrown away anyway).
stop_component() {
  local name=$1 pids i
  pids="$(cat "$DATA/pids/$name.pid" "$DATA/pids/$name"-[0-9]*.pid 2>/dev/null || true) $(pids_of "$name")"
  pids=$(for p in $pids; do if running "$p"; then echo "$p"; fi; done | sort -u | tr '\n' ' ')
  [ -n "${pids// /}" ] || return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for ((i = 0; i < 30; i++)); do
    local alive=
    for p in $pids; do if running "$p"; then alive=1; fi; done
    [ -z "$alive" ] && return 0
    sleep 0.1
  done
  log "$name did not exit on SIGTERM within 3s: SIGKILL $pids"
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

# fbget_job NAMESPACE NAME URL ATTEMPTS [LABELS] [NODE] : a Job whose one pod (labelled LABELS, a
# YAML map, default none; on node NODE when given) fetches URL with fleetbench/fbget, expecting
# nginx's page; the smoke tests' client.
fbget_job() {
  local labels=${5:-'{}'} selector='{}'
  [ -z "${6:-}" ] || selector="{kubernetes.io/hostname: $6}"
  "$(kubectl_bin)" -n "$1" apply -f - >/dev/null <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: $2}
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 60
  template:
    metadata: {labels: $labels}
    spec:
      restartPolicy: Never
      nodeSelector: $selector
      containers:
      - name: fbget
        image: fleetbench/fbget:dev
        imagePullPolicy: Never
        args: [-url, "$3", -expect, "fleetbench nginx ok", -attempts, "$4"]
EOF
}
