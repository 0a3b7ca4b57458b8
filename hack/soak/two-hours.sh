#!/usr/bin/env bash
# make soak-2h: issue 28's 2-hour run on the local cluster, outside CI. Seed 000's Stab-2-2
# shape (1,000 devices pushing every 200 s for 2 hours through Apache, the sample backend and
# MariaDB, 2 runners) on a Profile of half a C1 core, so that it fits beside other work; while it
# runs, runner 0's pod is deleted (at 1/6 of the load), runner 1's node is drained (5/12: kubectl
# drain of that runner's pod; spec.runnerLoss.drain Replace, the node uncordoned once its
# replacement is Ready), and runner 0's pod is deleted again (2/3). It then checks: Succeeded,
# three gaps each replaced, the requests plus the gaps' estimates within 3 % of the planned
# 36,000, Gapless False, and prints status (gaps, leak verdicts) into bin/soak/two-hours.json.
# env: SOAK2H_DURATION (2h; e.g. 6m for a smoke run, the faults at the same fractions),
#      SOAK2H_NS (soak-2h). Re-runnable: it first deletes what an earlier run left.
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source hack/versions.env
export GOTOOLCHAIN=local
duration=${SOAK2H_DURATION:-2h}
ns=${SOAK2H_NS:-soak-2h}
name=stab-2-2
devices=1000 period=200
kubectl=$root/bin/k8s/$KUBE_VERSION/kubectl
log() { echo ">> $(date +%T) $*" >&2; }
die() { log "FAILED: $*"; exit 1; }
seconds() { # a Go duration of h, m and s to seconds
  local d=$1 total=0 n
  while [[ $d =~ ^([0-9]+)([hms])(.*)$ ]]; do
    n=${BASH_REMATCH[1]}
    case ${BASH_REMATCH[2]} in h) n=$((n * 3600)) ;; m) n=$((n * 60)) ;; esac
    total=$((total + n)) d=${BASH_REMATCH[3]}
  done
  [ -z "$d" ] && [ "$total" -gt 0 ] || die "SOAK2H_DURATION=$duration is not a duration of h, m and s"
  echo "$total"
}
length=$(seconds "$duration")
planned=$((devices * length / period))

eval "$(hack/cluster/ensure.sh)"
export KUBECONFIG
[ -x "$kubectl" ] || kubectl=$(command -v kubectl)
k() { "$kubectl" --request-timeout=30s "$@"; }
if ! k get deployment -A -l app.kubernetes.io/name=fleetbench -o name 2>/dev/null | grep -q .; then
  hack/e2e/images.sh --demo
  hack/e2e/install.sh
fi

# What an earlier (crashed) run left: its namespace (the TestRun's finalizer deletes the target
# namespace with it), a cordoned node, the Profile.
for node in $(k get nodes -l fleetbench.dev/soak-2h-drained -o name); do
  k uncordon "${node#node/}" >/dev/null
  k label "$node" fleetbench.dev/soak-2h-drained- >/dev/null
done
k delete namespace "$ns" --ignore-not-found --wait=true --timeout=300s >/dev/null
k delete profile soak-c1-half --ignore-not-found >/dev/null

k create namespace "$ns" >/dev/null
k apply -f - >/dev/null <<EOF
apiVersion: fleetbench.dev/v1alpha1
kind: Profile
metadata:
  name: soak-c1-half
spec:
  cpu: 500m
  memory: 512Mi
  description: "Half of seed 000's C1 core, so that the 2-hour run fits beside other work on a 2-core machine"
EOF
k -n "$ns" apply -f examples/dwarfguard/device-push.yaml >/dev/null
# The Stab-2-2 example as it is, but for its name, Profile, length and runner-loss policy.
sed -e "s/^  name: stab-2-2-c1$/  name: $name/" -e 's/^  profile: C1$/  profile: soak-c1-half/' \
  -e "s/^    duration: 2h$/    duration: $duration/" -e 's/^  parallelism: 2$/  parallelism: 2\n  runnerLoss: {drain: Replace, maxReplacements: 6}/' \
  examples/dwarfguard/stab-2-2-c1.yaml | k -n "$ns" apply -f - >/dev/null
k -n "$ns" get testrun "$name" -o jsonpath='{.spec.profile} {.spec.load.duration} {.spec.runnerLoss}{"\n"}' | grep -q "soak-c1-half $duration" ||
  die "the TestRun was not made from the example as expected"
log "TestRun $ns/$name applied: $devices devices every ${period}s for $duration ($planned pushes planned)"

field() { k -n "$ns" get testrun "$name" -o jsonpath="$1" 2>/dev/null || true; }
# wait_until <seconds> <what> <command...>: every 5 s until the command succeeds or time is up.
wait_until() {
  local limit=$1 what=$2 deadline=$(($(date +%s) + $1))
  shift 2
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || die "$what: not within ${limit}s (phase $(field '{.status.phase}'): $(field '{.status.message}'))"
    sleep 5
  done
}
running() { [ "$(field '{.status.phase}')" = Running ]; }
ended() { case "$(field '{.status.phase}')" in Succeeded | Failed) return 0 ;; esac; return 1; }
wait_until 900 "Running" running
t0=$(date +%s)
log "Running"
# Two hours of refused pushes is a wasted afternoon: stop at once if the first minute failed.
sleep 60
errors=$(field '{.status.progress.errorPercent}')
awk -v e="${errors:-100}" 'BEGIN { exit !(e < 1) }' || die "after a minute ${errors:-?} % of the pushes failed: $(field '{.status.progress}')"

runner_pod() { # the live pod of runner $1
  k -n "$ns" get pods -l "fleetbench.dev/testrun=$name,fleetbench.dev/role=runner,fleetbench.dev/runner-index=$1" \
    -o jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.name}{" "}{.metadata.deletionTimestamp}{"\n"}{end}' |
    awk 'NF == 1 { print $1; exit }'
}
ready_replacement() { # runner $1 has a live pod other than $2
  local p
  p=$(runner_pod "$1")
  [ -n "$p" ] && [ "$p" != "$2" ]
}
at() { # sleep until $1 seconds into the load; end early if the run did
  local wait=$((t0 + $1 - $(date +%s)))
  while [ "$wait" -gt 0 ]; do
    ended && die "the run ended before the fault at ${1}s: $(field '{.status.phase}') $(field '{.status.message}')"
    sleep $((wait < 30 ? wait : 30))
    wait=$((t0 + $1 - $(date +%s)))
  done
}
delete_runner() {
  local pod
  pod=$(runner_pod "$1")
  [ -n "$pod" ] || die "no live pod of runner $1"
  k -n "$ns" delete pod "$pod" --wait=false >/dev/null
  log "fault: runner $1's pod $pod deleted"
  wait_until 300 "runner $1 replaced" ready_replacement "$1" "$pod"
  log "runner $1 runs again: $(runner_pod "$1")"
}
drain_runner() {
  local pod node
  pod=$(runner_pod "$1")
  [ -n "$pod" ] || die "no live pod of runner $1"
  node=$(k -n "$ns" get pod "$pod" -o jsonpath='{.spec.nodeName}')
  k label node "$node" fleetbench.dev/soak-2h-drained=true >/dev/null
  k drain "$node" --pod-selector="fleetbench.dev/testrun=$name,fleetbench.dev/runner-index=$1" \
    --ignore-daemonsets --delete-emptydir-data --timeout=300s >/dev/null
  log "fault: node $node drained of runner $1's pod $pod"
  wait_until 300 "runner $1 replaced" ready_replacement "$1" "$pod"
  k uncordon "$node" >/dev/null
  k label node "$node" fleetbench.dev/soak-2h-drained- >/dev/null
  log "runner $1 runs again: $(runner_pod "$1"); $node uncordoned"
}

at $((length / 6))
delete_runner 0
at $((length * 5 / 12))
drain_runner 1
at $((length * 2 / 3))
delete_runner 0
wait_until $((length + 1200)) "the run's end" ended
log "ended after $(($(date +%s) - t0))s of load"

mkdir -p bin/soak
k -n "$ns" get testrun "$name" -o json >bin/soak/two-hours.json
field '{.status.phase} {.status.verdict}: {.status.message}{"\n"}'
field '{range .status.gaps[*]}gap: runner {.runner} #{.replacement} {.cause} lost {.lostAt} observed until {.observedUntil} replaced {.replacedAt}, {.estimatedUnobserved} unobserved{"\n"}{end}'
field 'target memory trend: {.status.target.memory.trend.verdict} {.status.target.memory.trend.message}{"\n"}runners memory trend: {.status.runners.memory.trend.verdict} {.status.runners.memory.trend.message}{"\n"}'

phase=$(field '{.status.phase}')
total=$(field '{.status.results.requests.total}')
unobserved=$(field '{.status.gaps[*].estimatedUnobserved}' | tr ' ' '\n' | awk '{ s += $1 } END { print s + 0 }')
gaps=$(field '{range .status.gaps[*]}{.replacedAt}{"\n"}{end}' | grep -c . || true)
gapless=$(field '{.status.conditions[?(@.type=="Gapless")].status}')
off=$(awk -v t="${total:-0}" -v u="$unobserved" -v p="$planned" 'BEGIN { printf "%.2f", 100 * (t + u - p) / p }')
log "requests $total + unobserved $unobserved vs planned $planned: ${off} %; $gaps gaps replaced; Gapless $gapless"
[ "$phase" = Succeeded ] || die "phase $phase"
[ "$gaps" -ge 3 ] || die "$gaps gaps replaced, want 3"
[ "$gapless" = False ] || die "Gapless $gapless, want False"
awk -v o="$off" 'BEGIN { exit !(o <= 3 && o >= -3) }' || die "requests plus unobserved off the plan by ${off} %"
log "PASSED (status in bin/soak/two-hours.json)"
