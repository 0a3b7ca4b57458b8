#!/usr/bin/env bash
# make soak: "long runs stay cheap" (issue 28, item 5) at the sample volume of seed 000's
# Stab-4-672 (3,000 devices on C2 for 40,320 minutes: 80,640 target samples at 30 s, 241,920
# progress refreshes and runner windows at 10 s), in compressed time: the real reconciler
# against a real kube-apiserver and etcd (envtest, no cluster), its clock stepped 30 s per
# target sample (internal/controller/testrun/soak_test.go says what is played and measured).
# Prints, and writes to bin/soak/results.md, one row per scale: 1x, 10x, 100x of SOAK_BASE
# samples (806 by default, so 100x is Stab-4-672's volume; about 1 s per 20 samples).
#
# usage: hack/soak/run.sh          env: SOAK_BASE (806), SOAK_SCALES ("1 10 100"),
#                                       SOAK_TIMEOUT (go test -timeout, 150m)
# Re-runnable: a crashed earlier run's test binary and its envtest etcd and kube-apiserver
# (one process group, recorded in bin/soak/pgid) are ended first. Everything runs at nice 10.
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source hack/versions.env
source hack/lib/processes.sh
export GOTOOLCHAIN=local
dir=$root/bin/soak
mkdir -p "$dir"
say() { echo ">> $(date +%T) $*" >&2; }

# stop_group ends the process group recorded by an earlier run, if it is still ours: only a
# group whose processes run the soak's test binary or envtest's binaries from bin/k8s.
stop_group() {
  [ -f "$dir/pgid" ] || return 0
  local pgid pids=() pid
  pgid=$(cat "$dir/pgid")
  while read -r pid; do
    [ -n "$pid" ] || continue
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qE "testrun\.test|$root/bin/k8s/|go test -tags soak"; then pids+=("$pid"); fi
  done < <(ps -eo pid=,pgid= | awk -v g="$pgid" '$2 == g {print $1}')
  if [ ${#pids[@]} -gt 0 ]; then
    say "ending ${#pids[@]} processes a crashed earlier soak left (process group $pgid)"
    end_processes "${pids[@]}"
  fi
  rm -f "$dir/pgid"
}
stop_group

export KUBEBUILDER_ASSETS=$root/bin/k8s/$KUBE_VERSION
if [ ! -x "$KUBEBUILDER_ASSETS/kube-apiserver" ] || [ ! -x "$KUBEBUILDER_ASSETS/etcd" ]; then
  nice -n 10 hack/build-kube.sh etcd kube-apiserver
fi
export SOAK_BASE=${SOAK_BASE:-806} SOAK_SCALES=${SOAK_SCALES:-1 10 100}
log=$dir/soak.log
say "soak: scales ($SOAK_SCALES) x $SOAK_BASE target samples; log $log; load: $(cut -d' ' -f1-3 /proc/loadavg)"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
trap 'stop_group; exit 130' INT TERM
set +e
# Its own process group, so a later run (or the trap) can end it and envtest's children.
setsid nice -n 10 go test -tags soak ./internal/controller/testrun/ -run 'TestSoak$' -count=1 -v -timeout "${SOAK_TIMEOUT:-150m}" >"$log" 2>&1 &
pid=$!
echo "$pid" >"$dir/pgid"  # setsid: the group id is the leader's pid
wait "$pid"
status=$?
set -e
rm -f "$dir/pgid"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The SOAK lines, as a table.
{
  echo "| scale | samples | simulated | wall | manager heap MiB | manager RSS MiB | TestRun bytes (running / ended) | results ConfigMap bytes (running / ended) | target points kept | s per point | runner windows × width | live envelope bytes | API writes per simulated hour | verdict |"
  echo "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|"
  grep -o 'SOAK .*' "$log" | sed -E 's/^SOAK //' | while read -r line; do
    declare -A f=()
    for kv in $line; do f[${kv%%=*}]=${kv#*=}; done
    echo "| ${f[scale]}x | ${f[steps]} | ${f[simulated]} | ${f[wall]} | ${f[heapMiB]} | ${f[rssMiB]} | ${f[statusBytes]} / ${f[endStatusBytes]} | ${f[cmBytes]} / ${f[endCMBytes]} | ${f[points]} | ${f[secondsPerPoint]} | ${f[windows]} × ${f[windowSeconds]} s | ${f[envelopeBytes]} | ${f[writesPerHour]} | ${f[verdict]} |"
  done
  echo
  echo "hack/soak/run.sh, SOAK_BASE=$SOAK_BASE SOAK_SCALES=\"$SOAK_SCALES\", $(($(date +%s) - t0)) s, load average $load_before at the start, $load_after at the end, $(nproc) cores"
} >"$dir/results.md"
cat "$dir/results.md"
[ "$status" = 0 ] || { say "soak FAILED (exit $status); see $log"; grep -E '^\s+soak_test.go|--- FAIL' "$log" | tail -20 >&2; }
exit "$status"
