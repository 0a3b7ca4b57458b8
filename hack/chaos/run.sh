#!/usr/bin/env bash
# make chaos: the full chaos matrix of issue 16 (test/e2e/chaos_matrix_test.go) on the local
# 3-node cluster of hack/cluster/up.sh, whose processes hack/chaos/fault.sh signals; root, like
# that cluster. About 20 minutes (12 of tests); not part of CI (make e2e runs the reduced matrix,
# test/e2e/chaos_test.go). Boots the cluster when it is not up and tears down what it booted;
# images, install and cleanup are hack/e2e/run.sh's. The table is printed and written to
# bin/chaos/results.md; hack/chaos/RESULTS.md keeps the last one measured.
# env: CHAOS_REPEAT=N (3) runs of each manager fault; CHAOS_FAULTS=regexp picks faults by name;
#      E2E_KEEP=1 as for make e2e.
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# shellcheck source=hack/cluster/lib.sh
source hack/cluster/lib.sh
[ "$(id -u)" = 0 ] || die "make chaos signals the local cluster's processes: run it as root"

nodes=3
booted=
cleanup() {
  local rc=$?
  if [ -n "$booted" ] && [ -z "${E2E_KEEP:-}" ]; then hack/cluster/down.sh || rc=1; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The local cluster only: a fault is a signal to one of its processes.
export KUBECONFIG=$KUBECONFIG_OUT
if KUBECONFIG=$KUBECONFIG_OUT "$(kubectl_bin)" --request-timeout=5s get --raw /readyz >/dev/null 2>&1; then
  have=$("$(kubectl_bin)" --request-timeout=5s get nodes -o name | grep -c .)
  [ "$have" -ge "$nodes" ] || die "the local cluster has $have node(s); the matrix needs $nodes: make cluster-down first"
  log "using the local cluster that is up ($have nodes)"
else
  FLEETBENCH_NODES=$nodes FLEETBENCH_CONTAINER_LOG_MAX_SIZE=${FLEETBENCH_CONTAINER_LOG_MAX_SIZE:-1Mi} hack/cluster/up.sh >/dev/null
  booted=1
fi

mkdir -p bin/chaos
rm -f bin/chaos/results.md
E2E_TAGS="e2e chaos" E2E_RUN='^TestChaosMatrix$' E2E_TIMEOUT=100m FLEETBENCH_NODES=$nodes \
  CHAOS_RESULTS=$root/bin/chaos/results.md hack/e2e/run.sh
echo "---- chaos matrix (bin/chaos/results.md) ----"
cat bin/chaos/results.md
