#!/usr/bin/env bash
# Proves the local cluster works end to end: an nginx pod (fleetbench/nginx:dev) behind a
# ClusterIP Service, and a Job whose client (fleetbench/fbget:dev) fetches from the Service by
# its DNS name, which needs scheduling, CNI, kube-proxy, CoreDNS and the kubelet. Then reads the
# Job's output with `kubectl logs`. Every wait is bounded. Exits non-zero on any failure.
#
# With more than one node (FLEETBENCH_NODES=N hack/cluster/up.sh) nginx is pinned to
# fleetbench-node-2 and the clients prove pod networking across nodes:
#   - on fleetbench-node (node 1): one Job fetches nginx's pod IP directly (pod to pod across
#     nodes), one fetches the Service by DNS name (kube-proxy + CoreDNS, backend on node 2);
#   - on every other node: one Job fetches the Service by DNS name (Services and DNS from
#     every node; on node 2 the backend is local).
#
# usage: hack/cluster/smoke.sh     (cluster from hack/cluster/up.sh; KEEP=1 keeps the namespace)
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

export KUBECONFIG="${KUBECONFIG:-$KUBECONFIG_OUT}"
ns=fleetbench-smoke
svc_url="http://nginx.$ns.svc.cluster.local/"
t0=$(date +%s)
k() { "$(kubectl_bin)" --request-timeout=30s "$@"; }
jobs=()

fail() {
  local j
  echo "smoke FAILED: $*" >&2
  k -n "$ns" get all -o wide >&2 || true
  k -n "$ns" describe pods >&2 || true
  for j in "${jobs[@]}"; do
    echo "--- logs of job/$j" >&2
    k -n "$ns" logs "job/$j" >&2 || true
  done
  exit 1
}

mapfile -t nodes < <(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort -V)
[ ${#nodes[@]} -gt 0 ] || die "no nodes"
log "${#nodes[@]} node(s): ${nodes[*]}"

log "images"
"$root/hack/images/nginx.sh"
"$root/hack/images/fbget.sh"
import_images "$root/bin/images/nginx.tar" "$root/bin/images/fbget.tar"
log "images imported into $(node_sockets | grep -c .) node(s) after $(($(date +%s) - t0))s"

# A namespace left by an interrupted run would make `apply` reuse a finished Job.
k delete namespace "$ns" --ignore-not-found --wait=true --timeout=60s >/dev/null
k create namespace "$ns" >/dev/null
selector='{}'
if [ ${#nodes[@]} -gt 1 ]; then selector="{kubernetes.io/hostname: $NODE_NAME-2}"; fi
sed "s|nodeSelector: {}|nodeSelector: $selector|" "$root/hack/cluster/smoke-nginx.yaml" | k -n "$ns" apply -f - >/dev/null
k -n "$ns" wait --for=condition=Available deployment/nginx --timeout=60s >/dev/null || fail "nginx not available"
read -r pod_ip pod_node < <(k -n "$ns" get pods -l app=nginx -o jsonpath='{.items[0].status.podIP} {.items[0].spec.nodeName}{"\n"}') ||
  fail "no nginx pod"
log "nginx available on $pod_node ($pod_ip) after $(($(date +%s) - t0))s"

if [ ${#nodes[@]} -eq 1 ]; then
  fbget_job "$ns" fbget "$svc_url" 20
  jobs+=(fbget)
else
  [ "$pod_node" = "$NODE_NAME-2" ] || fail "nginx runs on $pod_node, not $NODE_NAME-2"
  fbget_job "$ns" fbget-pod-ip "http://$pod_ip/" 20 '{}' "$NODE_NAME"
  jobs+=(fbget-pod-ip)
  for n in "${nodes[@]}"; do
    fbget_job "$ns" "fbget-svc-$n" "$svc_url" 20 '{}' "$n"
    jobs+=("fbget-svc-$n")
  done
fi
for j in "${jobs[@]}"; do
  k -n "$ns" wait --for=condition=Complete "job/$j" --timeout=90s >/dev/null || fail "Job $j did not complete"
  out=$(k -n "$ns" logs "job/$j") || fail "kubectl logs job/$j failed"
  grep -q "HTTP 200" <<<"$out" || fail "Job $j output lacks HTTP 200: $out"
  where=$(k -n "$ns" get pods -l "job-name=$j" -o jsonpath='{.items[0].spec.nodeName} {.items[0].status.podIP}')
  log "Job $j (pod on $where) complete after $(($(date +%s) - t0))s: $(grep -m1 HTTP <<<"$out")"
done
# The API server's service proxy reaches the pod too; nginx counts what it served.
status=$(k get --raw "/api/v1/namespaces/$ns/services/nginx:80/proxy/nginx_status") || fail "service proxy to nginx_status failed"
grep -q "^Active connections" <<<"$status" || fail "unexpected nginx_status: $status"
log "nginx_status via the API server: $(tr '\n' ' ' <<<"$status")"

if [ -z "${KEEP:-}" ]; then
  # Do not wait: namespace deletion takes ~10 s and the next run waits for it anyway.
  k delete namespace "$ns" --wait=false >/dev/null || true
fi
log "smoke passed in $(($(date +%s) - t0))s (${#nodes[@]} node(s))"
