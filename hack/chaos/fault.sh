#!/usr/bin/env bash
# Faults for the chaos matrix (hack/chaos/run.sh), on the local cluster of hack/cluster/up.sh
# only: its processes run on this machine, so a fault is a signal to one of them.
#
#   fault.sh stop COMPONENT            SIGTERM a cluster process (kube-apiserver, kubelet-2, ...),
#                                      remembering its command line and network namespace
#   fault.sh start COMPONENT           start it again as it was (after stop)
#   fault.sh restart COMPONENT         stop, then start
#   fault.sh kill-container NODE ID    SIGKILL a container's processes through its node's
#                                      containerd (NODE: fleetbench-node-2; ID: containerStatuses'
#                                      containerID without containerd://)
# Run as root, like hack/cluster/up.sh.
set -euo pipefail
source "$(dirname "$0")/../cluster/lib.sh"

saved() { echo "$DATA/pids/$1.chaos"; }

stop() {
  local name=$1 pid ns
  pid=$(cat "$DATA/pids/$name.pid" 2>/dev/null) || die "no pid recorded for $name (is the cluster up? names: kube-apiserver, kubelet, kubelet-2, ...)"
  running "$pid" || die "$name (pid $pid) is not running"
  ns=$(ip netns identify "$pid")
  [ -n "$ns" ] || die "$name (pid $pid) is in no named network namespace"
  # The command line, NUL-separated, after the namespace: start replays both.
  { printf '%s\0' "$ns"; cat "/proc/$pid/cmdline"; } >"$(saved "$name")"
  kill -TERM "$pid"
  local i
  for ((i = 0; i < 100; i++)); do
    running "$pid" || { log "$name stopped"; return 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  log "$name stopped (SIGKILL after 10 s)"
}

start() {
  local name=$1 file args
  file=$(saved "$name")
  [ -f "$file" ] || die "$name was not stopped by fault.sh (no $file)"
  mapfile -d '' args <"$file"
  # As up.sh starts it (start_in), its log appended to.
  setsid nsenter --net="/run/netns/${args[0]}" -- "${args[@]:1}" >>"$DATA/logs/$name.log" 2>&1 </dev/null 9>&- &
  echo $! >"$DATA/pids/$name.pid"
  rm -f "$file"
  log "$name started (pid $!)"
  # A kubelet started before its containerd listens exits at once ("validate CRI v1 runtime
  # API"): a containerd is started only once it answers.
  if [[ $name == containerd* ]]; then
    local i sock=
    for ((i = 1; i <= MAX_NODES; i++)); do
      node_set "$i"
      if [ "containerd$N_SFX" = "$name" ]; then sock=$N_SOCK; fi
    done
    [ -n "$sock" ] || die "no node has a containerd named $name"
    wait_for "$name socket" 30 timeout 5 ctr --address "$sock" version
  fi
}

kill_container() {
  local node=$1 id=$2 i sock=
  for ((i = 1; i <= MAX_NODES; i++)); do
    node_set "$i"
    if [ "$N_NAME" = "$node" ]; then sock=$N_SOCK; fi
  done
  [ -S "$sock" ] || die "node $node has no containerd socket"
  ctr --address "$sock" -n k8s.io task kill --all -s SIGKILL "$id"
  log "container ${id:0:12} on $node: SIGKILL"
}

case "${1:-}" in
  stop) stop "$2" ;;
  start) start "$2" ;;
  restart) stop "$2"; start "$2" ;;
  kill-container) kill_container "$2" "$3" ;;
  *) die "usage: $0 stop|start|restart COMPONENT | kill-container NODE CONTAINER_ID" ;;
esac
