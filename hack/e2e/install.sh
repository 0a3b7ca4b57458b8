#!/usr/bin/env bash
# Installs (or upgrades) fleetbench with Helm into fleetbench-system, using the images that
# hack/e2e/images.sh imported (never pulled), and waits for the manager to be Available.
# On failure prints the manager's pods, events and logs. Re-runnable.
# usage: KUBECONFIG=... hack/e2e/install.sh      env: INSTALL_TIMEOUT (default 180s),
#        INSTALL_CRDS=false (the CRDs are installed otherwise: a MultiKueue worker's)
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source hack/versions.env
ns=fleetbench-system
release=fleetbench
timeout=${INSTALL_TIMEOUT:-180s}
kubectl=$root/bin/k8s/$KUBE_VERSION/kubectl
[ -x "$kubectl" ] || kubectl=$(command -v kubectl)
k() { "$kubectl" --request-timeout=30s "$@"; }
log() { echo ">> $(date +%T) $*" >&2; }
t0=$(date +%s)

[ -x bin/helm ] || hack/tools.sh helm

diagnose() {
  echo "---- fleetbench install FAILED; manager diagnostics ----" >&2
  k -n "$ns" get deploy,rs,pods -o wide >&2 || true
  k -n "$ns" describe pods -l "app.kubernetes.io/instance=$release" 2>/dev/null | tail -40 >&2 || true
  k -n "$ns" get events --sort-by=.lastTimestamp 2>/dev/null | tail -20 >&2 || true
  k -n "$ns" logs "deploy/$release-manager" --all-containers --tail=100 >&2 || true
  k -n "$ns" logs "deploy/$release-manager" --all-containers --tail=50 --previous >&2 2>/dev/null || true
}

log "helm upgrade --install $release charts/fleetbench -n $ns"
# pullPolicy Never: the images exist only in the node's containerd (hack/e2e/images.sh).
# The manager is rolled on every install so a rebuilt :dev image is really used.
if ! bin/helm upgrade --install "$release" charts/fleetbench -n "$ns" --create-namespace \
  --set image.pullPolicy=Never --set "crds.install=${INSTALL_CRDS:-true}" --set-string "podAnnotations.fleetbench\.dev/image-digest=$(sha256sum bin/images/manager.tar | cut -c1-16)" \
  --wait --timeout "$timeout" >&2; then
  diagnose
  exit 1
fi
if ! k -n "$ns" wait --for=condition=Available "deploy/$release-manager" --timeout="$timeout" >/dev/null; then
  diagnose
  exit 1
fi
log "fleetbench installed and the manager is Available in $(($(date +%s) - t0))s"
