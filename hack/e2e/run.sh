#!/usr/bin/env bash
# make e2e: the end-to-end tests on a real cluster.
#   1. cluster   hack/cluster/ensure.sh: a reachable cluster, or boot the local one with
#                metrics-server and NetworkPolicy enforcement (remembered)
#   2. images    hack/e2e/images.sh: build (cached) and import manager, runner, nginx
#   3. install   hack/e2e/install.sh: helm upgrade --install, manager Available
#   4. test      go test -tags e2e ./test/e2e/ -count=1 -v -timeout 90m (E2E_TAGS, E2E_TIMEOUT)
#   5. cleanup   e2e namespaces, helm uninstall (and the CRDs) when this script installed
#                fleetbench, cluster down when this script booted it. Runs on failure and on
#                Ctrl-C too. A crashed earlier run's leftovers are cleared on the next run.
# Prints how long each step took. Exit status is the tests'.
# env: E2E_KEEP=1 keeps everything (cluster, release, test namespaces) for a look afterwards;
#      E2E_RUN=regexp passes -run to go test, E2E_SKIP=regexp -skip; E2E_TAGS (e2e) and
#      E2E_TIMEOUT (90m) are go test's -tags and -timeout (make chaos: "e2e chaos").
#      E2E_KUEUE=1 brings Kueue up on the local cluster (hack/cluster/kueue.sh, built from its
#      Go module once) before the install, for the queue tests, and takes it down afterwards.
#      E2E_JAEGER=1 builds and imports Jaeger (hack/images/jaeger.sh) for the trace test.
#      E2E_CLUSTERS=2 (make e2e, make e2e-multicluster): the two local clusters joined by Kueue's
#      MultiKueue (FLEETBENCH_CLUSTERS=2, hack/cluster/kueue.sh multikueue), images and
#      fleetbench in both; the tests reach cluster 2 by FLEETBENCH_E2E_CLUSTER2_KUBECONFIG.
#      FLEETBENCH_ARTIFACTS=dir keeps the reports' PNG screenshots (default bin/artifacts).
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source hack/versions.env
export GOTOOLCHAIN=local
kubectl=$root/bin/k8s/$KUBE_VERSION/kubectl
ns=fleetbench-system
release=fleetbench

log() { echo ">> $(date +%T) $*" >&2; }
T0=$(date +%s)
timings=()
step_start=
begin() { step_start=$(date +%s); log "== $1"; }
end() { local d=$(($(date +%s) - step_start)); timings+=("$(printf '%-10s %4ss  %s' "$1" "$d" "${2:-}")"); log "== $1 done in ${d}s"; }

booted= installed= crds_before= kueue_up= status=1
summary() {
  echo "---- make e2e timings ----" >&2
  local t
  for t in "${timings[@]}"; do echo "  $t" >&2; done
  echo "  total      $(($(date +%s) - T0))s" >&2
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ "$status" = 0 ] || [ "$rc" = 0 ] || status=$rc
  if [ -n "${E2E_KEEP:-}" ]; then
    log "E2E_KEEP set: leaving the cluster, the release and the test namespaces (KUBECONFIG=${KUBECONFIG:-})"
    summary
    exit "$status"
  fi
  begin cleanup
  if [ -n "${KUBECONFIG:-}" ] && [ -z "$booted" ]; then
    k() { "$kubectl" --request-timeout=30s "$@"; }
    # Test namespaces go while the manager still runs: their TestRuns carry its finalizer.
    k delete namespace -l fleetbench.dev/e2e=true --wait=true --timeout=120s >/dev/null 2>&1 || true
    if [ -n "$installed" ]; then
      bin/helm uninstall "$release" -n "$ns" --wait --timeout 120s >/dev/null 2>&1 || true
      if [ -z "$crds_before" ]; then
        # Kept on uninstall by the chart (crds.keep); this script installed them, so it removes them.
        k delete crd testruns.fleetbench.dev capacityplans.fleetbench.dev profiles.fleetbench.dev --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
      fi
      k delete namespace "$ns" --ignore-not-found --wait=true --timeout=120s >/dev/null 2>&1 || true
    fi
  fi
  if [ "${clusters:-1}" = 2 ] && [ -z "$booted" ] && [ -n "$installed" ]; then
    "$kubectl" --kubeconfig "$kc2" delete namespace -l fleetbench.dev/e2e=true --wait=true --timeout=120s >/dev/null 2>&1 || true
    bin/helm --kubeconfig "$kc2" uninstall "$release" -n "$ns" --wait --timeout 120s >/dev/null 2>&1 || true
  fi
  if [ -n "$kueue_up" ]; then
    hack/cluster/kueue.sh down >&2 || status=1  # its manager is a host process: never left behind
  fi
  if [ -n "$booted" ]; then
    hack/cluster/down.sh || status=1
  fi
  rm -f "$state"
  end cleanup "$(if [ -n "$booted" ]; then echo "cluster down"; elif [ -n "$installed" ]; then echo "test namespaces, release and CRDs removed"; else echo "test namespaces removed; the existing release kept"; fi)"
  summary
  if [ "$status" = 0 ]; then log "make e2e PASSED"; else log "make e2e FAILED"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# State of a run that crashed before its cleanup: what it installed is ours to remove.
state=$root/bin/e2e.state
prev_installed= prev_crds_before= prev_booted=
save_state() { printf 'prev_booted=%s\nprev_installed=%s\nprev_crds_before=%s\n' "$booted" "$installed" "$crds_before" >"$state"; }
if [ -f "$state" ]; then
  source "$state"
  log "an earlier run did not clean up ($(tr '\n' ' ' <"$state")); its leftovers are removed at the end"
fi

begin cluster
# With metrics-server (the metrics.k8s.io source's test) and kube-router's policy controller
# (the NetworkPolicy test); `make demo` needs neither.
export FLEETBENCH_METRICS_SERVER=${FLEETBENCH_METRICS_SERVER:-1} FLEETBENCH_NETPOL=${FLEETBENCH_NETPOL:-1}
# Two nodes: every cross-node path (pod to pod, Services, DNS, NetworkPolicy) and the placement
# tests (test/e2e/placement_test.go) for about 40 s more than one (hack/cluster/NOTES.md).
export FLEETBENCH_NODES=${FLEETBENCH_NODES:-2}
# Small container log rotation: results must not depend on the log the kubelet still serves
# (test/e2e/logrotation_test.go).
export FLEETBENCH_CONTAINER_LOG_MAX_SIZE=${FLEETBENCH_CONTAINER_LOG_MAX_SIZE:-1Mi}
# Tells the tests how many nodes were booted: fewer Ready is then a failure, not a skip.
export FLEETBENCH_E2E_NODES=$FLEETBENCH_NODES
clusters=${E2E_CLUSTERS:-1}
kc2=$root/bin/cluster-2/kubeconfig
if [ "$clusters" = 2 ]; then export FLEETBENCH_CLUSTERS=2; fi
ensure_log=$(mktemp)
if ! env_line=$(hack/cluster/ensure.sh 2> >(tee "$ensure_log" >&2)); then
  grep -q "cluster up in" "$ensure_log" && booted=1
  rm -f "$ensure_log"
  log "no cluster"; exit 1
fi
sleep 0.2  # let tee flush
grep -q "cluster up in" "$ensure_log" && booted=1
rm -f "$ensure_log"
eval "$env_line"
export KUBECONFIG
if [ -n "$prev_booted" ] && [ "$KUBECONFIG" = "$root/bin/cluster/kubeconfig" ]; then
  booted=1  # booted by a crashed run of this script: ours to tear down
fi
save_state
if [ "$clusters" = 2 ]; then
  "$kubectl" --kubeconfig "$kc2" --request-timeout=10s get --raw /readyz >/dev/null 2>&1 ||
    { log "E2E_CLUSTERS=2 needs the second local cluster: make cluster-down, then run this again (it boots both)"; exit 1; }
  export FLEETBENCH_E2E_CLUSTER2_KUBECONFIG=$kc2
fi
end cluster "$([ -n "$booted" ] && echo "booted (will be torn down)" || echo "existing: $KUBECONFIG")"

begin images
if [ "$KUBECONFIG" = "$root/bin/cluster/kubeconfig" ]; then
  hack/e2e/images.sh
else
  hack/e2e/images.sh --no-import
  log "warning: $KUBECONFIG is not the local cluster of hack/cluster/up.sh: make fleetbench/{manager,runner,nginx}:dev available to its nodes yourself"
fi
end images

if [ "${E2E_KUEUE:-}" = 1 ] || [ "$clusters" = 2 ]; then
  # Before the install: the manager looks for Kueue's Workload API once, when it starts.
  begin kueue
  kueue_up=1
  if [ "$clusters" = 2 ]; then hack/cluster/kueue.sh multikueue >&2; else hack/cluster/kueue.sh up >&2; fi
  end kueue "Kueue $(source hack/versions.env && echo "$KUEUE_VERSION") on the host (will be taken down)"
fi

begin install
[ -x bin/helm ] || hack/tools.sh helm
if status_out=$(bin/helm status "$release" -n "$ns" 2>/dev/null); then
  if grep -qE '^STATUS: (pending-|failed)' <<<"$status_out"; then
    # A crashed earlier run left the release half-way: start over.
    log "release $release is $(grep '^STATUS' <<<"$status_out"); uninstalling it first"
    bin/helm uninstall "$release" -n "$ns" --wait --timeout 120s >&2 || true
    installed=1
  fi
else
  installed=1
fi
if [ -z "$installed" ] && [ -n "$prev_installed" ]; then
  installed=1 crds_before=$prev_crds_before  # a crashed run of this script installed it
elif [ -n "$installed" ] && "$kubectl" get crd testruns.fleetbench.dev >/dev/null 2>&1; then
  crds_before=${prev_crds_before-1}
fi
# What this run must undo, for the next run should this one crash.
save_state
hack/e2e/install.sh
if [ "$clusters" = 2 ]; then
  # The worker's fleetbench: the CRDs are already there (kueue.sh multikueue put them there).
  KUBECONFIG=$kc2 INSTALL_CRDS=false hack/e2e/install.sh
fi
end install "$([ -n "$installed" ] && echo "installed (will be uninstalled)" || echo "upgraded an existing release (kept)")"

begin test
export FLEETBENCH_ARTIFACTS=${FLEETBENCH_ARTIFACTS:-$root/bin/artifacts} && mkdir -p "$FLEETBENCH_ARTIFACTS"  # report screenshots
args=(-tags "${E2E_TAGS:-e2e}" ./test/e2e/ -count=1 -v -timeout "${E2E_TIMEOUT:-90m}")
[ -z "${E2E_RUN:-}" ] || args+=(-run "$E2E_RUN")
[ -z "${E2E_SKIP:-}" ] || args+=(-skip "$E2E_SKIP")
test_log=$(mktemp)
set +e
go test "${args[@]}" 2>&1 | tee "$test_log"
status=${PIPESTATUS[0]}
set -e
per_test=$(grep -E '^--- (PASS|FAIL|SKIP)' "$test_log" | sed -E 's/^--- (\w+): (\S+) \((.*)\)/\2 \1 \3/' | tr '\n' ';' || true)
rm -f "$test_log"
end test "${per_test%;}"
