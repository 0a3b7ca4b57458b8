#!/usr/bin/env bash
# Tears the local cluster of hack/cluster/up.sh down completely, whatever state a crashed run
# left: processes (recorded pids, then command-line patterns), pod processes (by cgroup),
# containerd shims, mounts under the data dirs, network namespaces and veths, cgroups, CNI
# cache files, the data dirs, and kubelet's rewrites of global sysctls.
# Safe to run when nothing is up. up.sh runs it first. Works for any node count
# (FLEETBENCH_NODES): it discovers every node's pid files, namespaces, mounts and cgroups rather
# than trusting the current setting, so a crashed run with more nodes is cleared too.
#
# usage: hack/cluster/down.sh [--quiet]   (--quiet: skip the final "nothing left" report)
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

quiet=
if [ "${1:-}" = --quiet ]; then quiet=1; fi

stop_kueue() {
  # hack/cluster/kueue.sh runs Kueue's manager as a host process against this cluster: with the
  # cluster gone it could only retry, so it goes too (kueue.sh down removes its objects first
  # when the cluster is to stay).
  local pid
  pid=$(cat "$OUT/kueue/pid" 2>/dev/null) || return 0
  if running "$pid" && grep -q kueue "/proc/$pid/cmdline" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  rm -f "$OUT/kueue/pid"
  if [ -f "$OUT/kueue/made-etc-kueue" ]; then rm -rf /etc/kueue "$OUT/kueue/made-etc-kueue"; fi
}

restore_sysctls() {
  # kubelet sets kernel.panic=10, kernel.panic_on_oops=1, vm.overcommit_memory=1 machine-wide.
  [ -f "$DATA/sysctl.orig" ] || return 0
  while read -r key value; do
    sysctl -qw "$key=$value" || true
  done <"$DATA/sysctl.orig"
  rm -f "$DATA/sysctl.orig"
}

cgroup_dirs() {
  # Our cgroup subtree in every hierarchy (v1 controllers, the named systemd one, unified).
  local d
  for d in /sys/fs/cgroup/*/"$CGROUP_ROOT"; do [ -d "$d" ] && echo "$d"; done
  return 0
}

kill_pod_processes() {
  # Every pod process (pause and containers) is in a cgroup below kubelet's cgroupRoot;
  # killing them there works even when containerd or its shims are already gone.
  local d pids round
  for ((round = 0; round < 20; round++)); do
    pids=$(cgroup_dirs | while read -r d; do find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null || true; done | sort -u)
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.2
  done
  log "warning: pod processes survive SIGKILL: $pids"
}

kill_shims() {
  # Shims of our containerd carry its socket path on their command line.
  local pids
  pids=$(pgrep -f "containerd-shim.* -address $RUNDIR/" || true)
  [ -n "$pids" ] || return 0
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

unmount_all() {
  # Overlay rootfs, kubelet's tmpfs volumes, shm, pod netns bind mounts. Deepest first;
  # lazy unmount as the fallback for anything still busy.
  local m round
  for ((round = 0; round < 5; round++)); do
    local mounts
    mounts=$(awk '{print $5}' /proc/self/mountinfo | grep -E "^($DATA|$RUNDIR)(/|$)" | sort -r -u || true)
    [ -n "$mounts" ] || return 0
    for m in $mounts; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
  done
  log "warning: mounts left: $mounts"
}

# our_namespaces : every node namespace (fb-node, fb-node-2, ...) that exists now, and the sink
# (cluster 1 owns it; cluster 2's nodes only join it).
our_namespaces() {
  local sink=$SINK_NS
  [ "$CLUSTER" = 1 ] || sink=$NODE_NS
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^($NODE_NS(-[0-9]+)?|$sink)$" || true
}

remove_network() {
  local n
  for n in $(our_namespaces); do
    ip netns delete "$n" 2>/dev/null || true
  done
  # Deleting node 1's namespace destroys its veth ends and so their host peers; be explicit
  # anyway in case the namespace vanished while the host end stayed.
  ip link delete "$HOST_VETH" 2>/dev/null || true
  # `ip netns add` turns /run/netns into a mount point of its own; drop it once it is empty.
  if [ -d /run/netns ] && [ -z "$(ls -A /run/netns)" ] && mountpoint -q /run/netns; then
    umount /run/netns 2>/dev/null || true
  fi
  # kube-proxy and the CNI bridge/portmap plugins only ever ran inside the node namespace,
  # so their rules went with it. Anything named like theirs in the host namespace would come
  # from a run outside the namespace: report and remove it.
  local ipt chain
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for table in filter nat mangle; do
      for chain in $("$ipt" -t "$table" -S 2>/dev/null | awk '$1=="-N" && $2 ~ /^(KUBE-|CNI-)/ {print $2}'); do
        log "removing host $ipt $table chain $chain"
        "$ipt" -t "$table" -S 2>/dev/null | awk -v c="$chain" '$1=="-A" && $0 ~ ("-j " c "( |$)") {sub(/^-A/, "-D"); print}' |
          while read -r rule; do eval "$ipt -t $table $rule" 2>/dev/null || true; done
        "$ipt" -t "$table" -F "$chain" 2>/dev/null || true
        "$ipt" -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
  # kube-router's network policy ipsets (FLEETBENCH_NETPOL=1) died with the node namespace too;
  # any in the host namespace come from a run outside it. After the chains: a set still
  # referenced by a rule cannot be destroyed.
  if command -v ipset >/dev/null; then
    local set
    for set in $(ipset list -n 2>/dev/null | grep -E '^(inet6:)?KUBE-(SRC|DST)-' || true); do
      log "removing host ipset $set"
      ipset destroy "$set" 2>/dev/null || true
    done
  fi
}

remove_cgroups() {
  local d
  for d in $(cgroup_dirs); do
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    if [ -d "$d" ]; then log "warning: cgroup left: $d"; fi
  done
  return 0
}

report() {
  local bad=0 listeners mounts
  listeners=$(ss -Htln 2>/dev/null | awk '{print $4}' | grep -E ":($(IFS='|'; echo "${PORTS[*]}"))$" || true)
  [ -z "$listeners" ] || { echo "still listening: $listeners" >&2; bad=1; }
  [ -z "$(our_namespaces)" ] || { echo "netns left: $(our_namespaces | tr '\n' ' ')" >&2; bad=1; }
  mounts=$(awk '{print $5}' /proc/self/mountinfo | grep -E "^($DATA|$RUNDIR)(/|$)" || true)
  [ -z "$mounts" ] || { echo "mounts left: $mounts" >&2; bad=1; }
  for c in "${COMPONENTS[@]}"; do
    [ -z "$(pids_of "$c")" ] || { echo "$c still running" >&2; bad=1; }
  done
  [ -z "$(pgrep -f "containerd-shim.* -address $RUNDIR/" || true)" ] || { echo "shims left" >&2; bad=1; }
  [ -z "$(cgroup_dirs)" ] || { echo "cgroups left" >&2; bad=1; }
  if [ -e "$DATA" ] || [ -e "$RUNDIR" ]; then echo "data dirs left" >&2; bad=1; fi
  if [ $bad = 0 ]; then
    log "down: no processes, listeners, namespaces, mounts, cgroups or data left"
  fi
  return $bad
}

lock_cluster
start=$(date +%s)
# Cluster 1 owns the segment the other local clusters joined: they go first, if any is there.
if [ "$CLUSTER" = 1 ]; then
  for ((c = 2; c <= MAX_CLUSTERS; c++)); do
    if [ -e "/var/lib/fleetbench-cluster-$c" ] || [ -e "/run/fleetbench-cluster-$c" ] ||
      ip netns list 2>/dev/null | grep -q "^fb$c-node" || compgen -G "/sys/fs/cgroup/*/fleetbench-$c" >/dev/null; then
      FLEETBENCH_CLUSTER_INDEX=$c "$0" ${quiet:+--quiet}
    fi
  done
fi
stop_kueue
restore_sysctls
# Node agents first so nothing restarts the containers we are about to kill.
stop_component kube-router
stop_component kube-proxy
stop_component kubelet
kill_pod_processes
stop_component containerd
kill_shims
for c in kube-scheduler kube-controller-manager kube-apiserver etcd; do
  stop_component "$c"
done
unmount_all
remove_network
remove_cgroups
# libcni caches results under /var/lib/cni whatever containerd's dirs are: ours are the
# "fleetbench" network and containerd's own loopback network.
# Cluster 2's are "fleetbench-2-<id>"; cluster 1 clears both (it tore cluster 2 down first).
if [ "$CLUSTER" = 1 ]; then
  rm -f /var/lib/cni/results/fleetbench-* /var/lib/cni/results/cni-loopback-* 2>/dev/null || true
else
  rm -f /var/lib/cni/results/fleetbench$CSFX-* 2>/dev/null || true
fi
# containerd 1.6 shims keep their sockets in the fixed /run/containerd/s; with no other
# containerd on the machine the directory is ours alone.
other_containerd=
for p in $(pgrep -x containerd || true); do if running "$p"; then other_containerd=1; fi; done
if [ -z "$other_containerd" ] && [ ! -e /run/containerd/containerd.sock ]; then
  rm -rf /run/containerd
fi
rm -rf --one-file-system "$DATA" "$RUNDIR"
rm -f "$KUBECONFIG_OUT"
log "down in $(($(date +%s) - start))s"
[ -n "$quiet" ] || report
