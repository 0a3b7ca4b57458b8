#!/usr/bin/env bash
# Proves the local cluster works end to end: an nginx pod (fleetbench/nginx:dev) behind a
# ClusterIP Service, and a Job whose client (fleetbench/fbget:dev) fetches from the Service by
# its DNS name, which needs scheduling, CNI, kube-proxy, CoreDNS and the kubelet. Then reads the
# Job's output with `kubectl logs`. Every wait is bounded. Exits non-zero on any failure.
#
# usage: hack/cluster/smoke.sh     (cluster from hack/cluster/up.sh; KEEP=1 keeps the namespace)
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

export KUBECONFIG="${KUBECONFIG:-$KUBECONFIG_OUT}"
ns=fleetbench-smoke
t0=$(date +%s)
k() { "$(kubectl_bin)" "$@"; }

fail() {
  echo "smoke FAILED: $*" >&2
  k -n "$ns" get all -o wide >&2 || true
  k -n "$ns" describe pods >&2 || true
  k -n "$ns" logs job/fbget >&2 || true
  exit 1
}

log "images"
"$root/hack/images/nginx.sh"
"$root/hack/images/fbget.sh"
"$root/hack/images/import.sh" "$root/bin/images/nginx.tar" "$root/bin/images/fbget.tar"
log "images imported after $(($(date +%s) - t0))s"

# A namespace left by an interrupted run would make `apply` reuse a finished Job.
k delete namespace "$ns" --ignore-not-found --wait=true --timeout=60s >/dev/null
k create namespace "$ns" >/dev/null
k -n "$ns" apply -f "$root/hack/cluster/smoke-nginx.yaml" >/dev/null
k -n "$ns" wait --for=condition=Available deployment/nginx --timeout=60s >/dev/null || fail "nginx not available"
log "nginx available after $(($(date +%s) - t0))s"

fbget_job "$ns" fbget "http://nginx.$ns.svc.cluster.local/" 20
k -n "$ns" wait --for=condition=Complete job/fbget --timeout=90s >/dev/null || fail "Job fbget did not complete"
log "Job fbget complete after $(($(date +%s) - t0))s"
out=$(k -n "$ns" logs job/fbget) || fail "kubectl logs failed"
echo "$out"
grep -q "HTTP 200" <<<"$out" || fail "Job output lacks HTTP 200"
# The API server's service proxy reaches the pod too; nginx counts what it served.
status=$(k get --raw "/api/v1/namespaces/$ns/services/nginx:80/proxy/nginx_status") || fail "service proxy to nginx_status failed"
grep -q "^Active connections" <<<"$status" || fail "unexpected nginx_status: $status"
log "nginx_status via the API server: $(tr '\n' ' ' <<<"$status")"

if [ -z "${KEEP:-}" ]; then
  # Do not wait: namespace deletion takes ~10 s and the next run waits for it anyway.
  k delete namespace "$ns" --wait=false >/dev/null || true
fi
log "smoke passed in $(($(date +%s) - t0))s"
