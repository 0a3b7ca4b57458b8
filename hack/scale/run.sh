#!/usr/bin/env bash
# Scale benchmark: the real fleetbench manager against a real control plane with 500 kwok nodes.
#
#   ONE STAND-IN: kwok runs no containers, so hack/scale/standin answers k6's REST API (and
#   fleetbench's live port) as a paused runner would, on every simulated pod IP. Everything else
#   is real: etcd, kube-apiserver (audit log on), kube-controller-manager (the Job controller
#   creates the runner pods), kube-scheduler (places them), kwok (makes them Running and Ready,
#   and the script pre-flight pod Succeeded with exit code 0) and the fleetbench manager built
#   from this tree, with --runner-access=direct and the production ClusterRole.
#
# All of it runs in the network namespace fbscale with only a loopback device; pod IPs are in
# 127.128.0.0/9 (node i has 127.<128+i/256>.<i%256>.0/24), which is local to that loopback, so no
# packet leaves the machine. Everything
# runs at nice 19 (the machine is shared), so times are upper bounds on a busy 2-core machine.
#
# usage: hack/scale/run.sh            N = 10, 100, 1000, 5000, then 20 TestRuns x 50 runners
#        SCALE_SIZES="1000 5000" SCALE_MULTI=0 hack/scale/run.sh
# env:   SCALE_SIZES (10 100 1000 5000), SCALE_MULTI (20x50; 0 skips), SCALE_NODES (500),
#        SCALE_TIMEOUT (300s, every wait), SCALE_HOLD (5s Running before the delete),
#        SCALE_KCM_QPS / SCALE_SCHED_QPS (200: client QPS of kube-controller-manager and
#        kube-scheduler; their defaults, 20 and 50, alone cap pod creation and binding at 20/s
#        and 50/s, which is the cluster's limit, not the operator's), SCALE_KEEP=1 leaves the
#        cluster up after the runs (Ctrl-C stops it), SCALE_MANAGER_BIN runs that manager binary
#        instead of building ./cmd/manager (e.g. one built from a patched copy of the tree),
#        SCALE_JOB_SYNCS (5, Kubernetes' default: kube-controller-manager's --concurrent-job-syncs,
#        how many Jobs its Job controller syncs at once; each runner is a Job of one pod),
#        SCALE_MANAGER_ARGS adds flags to the manager (e.g. --kube-api-qps 600 --kube-api-burst 1200:
#        its default 200 QPS alone makes 5,000 Job creates last 23 s), SCALE_SHAPES=1 also times the Job controller alone for N pods in three shapes (N Jobs,
#        one Indexed Job, N bare pods; measure shapes), SCALE_KCM_ARGS adds flags to
#        kube-controller-manager, SCALE_MANAGER_ENV adds environment variables (NAME=value ...) to
#        the manager. The manager runs as a plain process, in no container with a memory limit, so
#        it sets no soft memory limit of its own (pkg/memlimit); what it would set in the chart's
#        512Mi container is SCALE_MANAGER_ENV=GOMEMLIMIT=429496720 (80 %).
# Each TestRun is held SCALE_HOLD Running, then the stand-in ends every runner at once (final
# envelopes answered, k6 status ended) and the time to the TestRun's terminal phase is measured.
# kwok's nodes renew Leases; kube-controller-manager's node-monitor-grace-period is 5m (default
# 50s) because on a starved machine kwok's renewals can lag, and the node lifecycle controller
# would then mark every runner pod NotReady (seen at 1,000 runners under a CI build's load).
# Re-runnable: it first clears what an earlier (crashed) run left: its processes, its network
# namespace and its data directory bin/scale/run.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=hack/versions.env
source "$root/hack/versions.env"
source "$root/hack/lib/processes.sh"
NETNS=fbscale
dir="$root/bin/scale/run"
k8s="$root/bin/k8s/$KUBE_VERSION"
sizes=${SCALE_SIZES:-10 100 1000 5000}
multi=${SCALE_MULTI:-20x50}
nodes=${SCALE_NODES:-500}
timeout=${SCALE_TIMEOUT:-300}
hold=${SCALE_HOLD:-5}
kcm_qps=${SCALE_KCM_QPS:-200}
sched_qps=${SCALE_SCHED_QPS:-200}
job_syncs=${SCALE_JOB_SYNCS:-5}
# kwok renews each node's Lease every quarter of its duration: 40 s for 100 nodes is 10 writes/s;
# longer for more nodes, so 500 nodes' renewals (14/s at 140 s) do not crowd the runs' writes.
lease=$((40 + nodes / 5)); [ "$lease" -le 240 ] || lease=240
shapes=${SCALE_SHAPES:-0}
read -r -a kcm_args <<<"${SCALE_KCM_ARGS:-}"
read -r -a manager_args <<<"${SCALE_MANAGER_ARGS:-}"
read -r -a manager_env <<<"${SCALE_MANAGER_ENV:-}"
results="$root/bin/scale/results.jsonl"
NICE=(nice -n 19)

say() { echo ">> $*" >&2; }
in_ns() { ip netns exec "$NETNS" "$@"; }

[ "$(id -u)" = 0 ] || { echo "hack/scale/run.sh needs root (network namespace)" >&2; exit 1; }
[ "$nodes" -ge 1 ] && [ "$nodes" -le 1024 ] || { echo "SCALE_NODES must be 1..1024 (one 127.<128+i/256>.<i%256>.0/24 pod CIDR each)" >&2; exit 2; }

# stop_all ends what this script started (pids recorded in $dir/pids, and anything left in its
# own network namespace), then removes the namespace.
stop_all() {
  local pid pids=()
  if [ -f "$dir/pids" ]; then
    while read -r pid; do
      # only our binaries: a recycled pid belongs to someone else
      if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$root/bin/"; then pids+=("$pid"); fi
    done <"$dir/pids"
  fi
  if ip netns list 2>/dev/null | grep -qw "^$NETNS"; then
    while read -r pid; do [ -n "$pid" ] && pids+=("$pid"); done < <(ip netns pids "$NETNS" 2>/dev/null)
  fi
  if [ ${#pids[@]} -gt 0 ]; then
    end_processes "${pids[@]}"
  fi
  rm -f "$dir/pids"
  ip netns del "$NETNS" 2>/dev/null || true
}

finish() {
  local rc=$?
  trap - EXIT INT TERM
  if [ "$rc" != 0 ]; then
    say "failed (exit $rc); logs in ${dir#"$root"/}/logs"
    for f in "$dir"/logs/*.log; do [ -f "$f" ] && { echo "--- tail $f" >&2; tail -n 5 "$f" >&2; }; done
  fi
  say "stopping everything the benchmark started"
  stop_all
  exit "$rc"
}

# wait_for DESCRIPTION SECONDS COMMAND...: polls COMMAND until it succeeds, bounded.
wait_for() {
  local what=$1 secs=$2
  shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $end ]; then
      say "timed out after ${secs}s waiting for $what"
      return 1
    fi
    sleep 0.5
  done
}

# start NAME COMMAND...: runs COMMAND in the namespace at nice 19, logs to logs/NAME.log.
start() {
  local name=$1
  shift
  ip netns exec "$NETNS" "${NICE[@]}" "$@" >"$dir/logs/$name.log" 2>&1 &
  echo $! >>"$dir/pids"
  eval "pid_${name//-/_}=$!"
}

# ---- clear an earlier run
stop_all
rm -rf "$dir"
mkdir -p "$dir/logs" "$dir/pki" "$dir/etcd"
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- build (one at a time, nice)
say "building (Kubernetes components and kwok are cached in bin/)"
"${NICE[@]}" "$root/hack/build-kube.sh" etcd kube-apiserver kube-controller-manager kube-scheduler kubectl
"${NICE[@]}" "$root/hack/scale/build-kwok.sh"
manager_bin=${SCALE_MANAGER_BIN:-$root/bin/scale/manager}
if [ -z "${SCALE_MANAGER_BIN:-}" ]; then
  (cd "$root" && CGO_ENABLED=0 "${NICE[@]}" go build -o bin/scale/manager ./cmd/manager)
fi
(cd "$root" && CGO_ENABLED=0 "${NICE[@]}" go build -o bin/scale/standin ./hack/scale/standin)
(cd "$root" && CGO_ENABLED=0 "${NICE[@]}" go build -o bin/scale/measure ./hack/scale/measure)

# ---- network namespace: loopback only
ip netns add "$NETNS"
in_ns ip link set lo up

# ---- credentials and configuration
openssl genrsa -out "$dir/pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$dir/pki/sa.key" -pubout -out "$dir/pki/sa.pub" 2>/dev/null
tok() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
admin_token=$(tok) manager_token=$(tok) kcm_token=$(tok) sched_token=$(tok) kwok_token=$(tok)
cat >"$dir/pki/tokens.csv" <<EOF
$admin_token,scale-admin,scale-admin,"system:masters"
$manager_token,fleetbench-manager,fleetbench-manager
$kcm_token,system:kube-controller-manager,system:kube-controller-manager,"system:masters"
$sched_token,system:kube-scheduler,system:kube-scheduler,"system:masters"
$kwok_token,kwok-controller,kwok-controller,"system:masters"
EOF
kubeconfig() {
  cat >"$dir/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: scale
  cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}
users:
- name: $1
  user: {token: "$2"}
contexts:
- name: scale
  context: {cluster: scale, user: $1}
current-context: scale
EOF
}
kubeconfig admin "$admin_token"
kubeconfig manager "$manager_token"
kubeconfig kcm "$kcm_token"
kubeconfig scheduler "$sched_token"
kubeconfig kwok "$kwok_token"
kc() { in_ns "$k8s/kubectl" --kubeconfig "$dir/admin.kubeconfig" "$@"; }

# Every write (create, update, patch, delete, deletecollection) at Metadata level, once per
# request (when the response is complete); nothing else.
cat >"$dir/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
EOF

# ---- control plane
say "starting etcd, kube-apiserver (audit log on) in network namespace $NETNS"
# The data directory is thrown away after the run: no fsync, so the shared disk adds no noise.
start etcd "$k8s/etcd" --name scale --data-dir "$dir/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster scale=http://127.0.0.1:2380 --unsafe-no-fsync --log-level warn
start kube-apiserver "$k8s/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port 6443 --cert-dir "$dir/pki" \
  --token-auth-file "$dir/pki/tokens.csv" --authorization-mode RBAC \
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$dir/pki/sa.pub" \
  --service-account-signing-key-file "$dir/pki/sa.key" --service-cluster-ip-range 10.96.0.0/16 \
  --endpoint-reconciler-type none \
  --audit-policy-file "$dir/audit-policy.yaml" --audit-log-path "$dir/audit.log" --audit-log-format json
wait_for "kube-apiserver /readyz" 120 kc get --raw /readyz

say "applying the fleetbench CRDs and the manager's ClusterRole (production RBAC)"
kc apply --server-side -f "$root/config/crd/bases" >/dev/null
crds_established() {
  [ "$(kc get crd testruns.fleetbench.dev profiles.fleetbench.dev capacityplans.fleetbench.dev \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Established")].status}{"\n"}{end}' | grep -c True)" = 3 ]
}
wait_for "the CRDs established" 60 crds_established
kc apply --server-side -f "$root/config/rbac/role.yaml" >/dev/null
kc create clusterrolebinding fleetbench-manager --clusterrole manager-role --user fleetbench-manager >/dev/null
# No kubelet-stats identity: the benchmark's target is external, so no kubelet is ever read.

say "starting kube-controller-manager (client QPS $kcm_qps, $job_syncs concurrent Job syncs), kube-scheduler (client QPS $sched_qps), kwok"
start kube-controller-manager "$k8s/kube-controller-manager" --kubeconfig "$dir/kcm.kubeconfig" \
  --authentication-kubeconfig "$dir/kcm.kubeconfig" --authorization-kubeconfig "$dir/kcm.kubeconfig" \
  --leader-elect=false --secure-port 0 --controllers '*' --use-service-account-credentials=false \
  --service-account-private-key-file "$dir/pki/sa.key" \
  --kube-api-qps "$kcm_qps" --kube-api-burst $((kcm_qps * 2)) --concurrent-job-syncs "$job_syncs" \
  --node-monitor-grace-period 5m "${kcm_args[@]}"
start kube-scheduler "$k8s/kube-scheduler" --kubeconfig "$dir/scheduler.kubeconfig" \
  --authentication-kubeconfig "$dir/scheduler.kubeconfig" --authorization-kubeconfig "$dir/scheduler.kubeconfig" \
  --leader-elect=false --secure-port 0 --kube-api-qps "$sched_qps" --kube-api-burst $((sched_qps * 2))
start kwok "$root/bin/kwok" --kubeconfig "$dir/kwok.kubeconfig" \
  --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
  --config "$root/hack/scale/kwok-stages.yaml" --cidr 127.128.0.1/16 --node-ip 127.0.0.1 \
  --server-address 127.0.0.1:10247 --node-lease-duration-seconds "$lease" -v WARN

say "creating $nodes kwok nodes (pod CIDRs 127.<128+i/256>.<i%256>.0/24)"
{
  for i in $(seq 0 $((nodes - 1))); do
    cidr="127.$((128 + i / 256)).$((i % 256)).0/24"
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
spec:
  podCIDR: $cidr
  podCIDRs: [$cidr]
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "250"}
  capacity: {cpu: "32", memory: 256Gi, pods: "250"}
EOF
  done
} >"$dir/nodes.yaml"
kc apply -f "$dir/nodes.yaml" >/dev/null
nodes_ready() { [ "$(kc get nodes -l type=kwok -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True)" = "$nodes" ]; }
wait_for "$nodes kwok nodes Ready" 120 nodes_ready
wait_for "the default ServiceAccount" 60 kc get serviceaccount default

say "starting the stand-in (paused k6 runners on every pod IP) and the fleetbench manager"
start standin "$root/bin/scale/standin" --control 127.0.0.1:6599
start manager env KUBECONFIG="$dir/manager.kubeconfig" "${manager_env[@]}" "$manager_bin" \
  --runner-access=direct --leader-elect=false \
  --metrics-bind-address 127.0.0.1:8080 --metrics-secure=false --health-probe-bind-address 127.0.0.1:8081 "${manager_args[@]}"
# `ip netns exec`, nice and env all exec: $! is the manager's own pid.
manager_pid=$pid_manager
wait_for "the manager's /readyz" 60 in_ns curl -sf http://127.0.0.1:8081/readyz
wait_for "the stand-in" 30 in_ns curl -sf http://127.0.0.1:6599/standin/stats
wait_for "the manager's metrics" 30 in_ns curl -sf http://127.0.0.1:8080/metrics
grep -q "$manager_bin" <(tr '\0' ' ' <"/proc/$manager_pid/cmdline") || { say "pid $manager_pid is not the manager"; exit 1; }

# In the background and waited for, so Ctrl-C and TERM reach the trap at once.
measure() {
  in_ns "${NICE[@]}" "$root/bin/scale/measure" "$@" --kubeconfig "$dir/admin.kubeconfig" \
    --manager-pid "$manager_pid" --audit-log "$dir/audit.log" --timeout "${timeout}s" --hold "${hold}s" --out "$results" &
  wait $!
}
: >"$results"
started_at=$(date -u +%FT%TZ)
status=0
for n in $sizes; do
  say "TestRun with $n runners (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  measure single --runners "$n" >/dev/null || status=1
  if [ "$shapes" = 1 ]; then
    say "the control plane alone: $n pods as N Jobs, one Indexed Job, N pods"
    measure shapes --runners "$n" >/dev/null || status=1
  fi
done
if [ "$multi" != 0 ]; then
  say "${multi%x*} TestRuns of ${multi#*x} runners at once"
  measure multi --runs "${multi%x*}" --runners "${multi#*x}" >/dev/null || status=1
fi

echo
echo "Scale benchmark, $started_at to $(date -u +%FT%TZ), $nodes kwok nodes; load average now $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; everything at nice 19"
echo "kube-controller-manager: --kube-api-qps $kcm_qps --kube-api-burst $((kcm_qps * 2)) --concurrent-job-syncs $job_syncs ${kcm_args[*]}; kube-scheduler: --kube-api-qps $sched_qps --kube-api-burst $((sched_qps * 2))"
echo "manager: ${manager_args[*]:-its default flags (--kube-api-qps 200 --kube-api-burst 400)}${manager_env[*]:+; environment ${manager_env[*]}}"
grep -m1 -o '"msg":"[^"]*soft memory limit[^"]*"' "$dir/logs/manager.log" || true
echo "STAND-IN: hack/scale/standin answered k6's REST API for every simulated runner pod (kwok runs no containers); all else is real."
echo "Goals at 5,000 runners: Jobs created <= 10 s; pods Ready <= 30 s; start skew <= 100 ms; <= 1.5 API writes per runner; manager peak RSS <= 400 MiB; end->done <= 2 s."
echo
"$root/bin/scale/measure" table "$results"
echo
echo "raw results: ${results#"$root"/}"
if [ "${SCALE_KEEP:-0}" = 1 ]; then
  say "SCALE_KEEP=1: the cluster stays up (kubeconfig ${dir#"$root"/}/admin.kubeconfig, in 'ip netns exec $NETNS'); Ctrl-C stops it"
  while sleep 3600; do :; done
fi
exit $status
