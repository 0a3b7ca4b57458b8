#!/usr/bin/env bash
# NetworkPolicy enforcement check for a cluster started with FLEETBENCH_NETPOL=1 hack/cluster/up.sh
# (kube-router's policy controller). nginx behind a Service in namespace fleetbench-netpol, a
# NetworkPolicy admitting only pods labelled role=runner; then, by the Service's DNS name:
#   1. a client Job with role=runner must get HTTP 200,
#   2. a client Job without the label must fail (REJECT: connection refused; or a timeout),
#   3. after the policy is deleted, the unlabelled client must get HTTP 200 (so the refusal in 2
#      came from the policy, and removing a policy is enforced too).
# Waits for kube-router's iptables state in the node namespace instead of sleeping, so it needs
# root and the local cluster of up.sh (like smoke.sh). Every wait is bounded.
#
# usage: hack/cluster/netpol-smoke.sh     (KEEP=1 keeps the namespace)
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

export KUBECONFIG="${KUBECONFIG:-$KUBECONFIG_OUT}"
ns=fleetbench-netpol
policy=runner-only
url="http://nginx.$ns.svc.cluster.local/"
t0=$(date +%s)
k() { "$(kubectl_bin)" "$@"; }

fail() {
  echo "netpol smoke FAILED: $*" >&2
  k -n "$ns" get all,networkpolicy -o wide >&2 || true
  k -n "$ns" describe pods >&2 || true
  in_node iptables-save -t filter 2>/dev/null | grep -E 'KUBE-ROUTER|KUBE-NWPLCY|KUBE-POD-FW' >&2 || true
  tail -30 "$DATA/logs/kube-router.log" >&2 || true
  exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (reads iptables in the node namespace)"
if ! kill -0 "$(cat "$DATA/pids/kube-router.pid" 2>/dev/null)" 2>/dev/null; then
  die "kube-router is not running: start the cluster with FLEETBENCH_NETPOL=1 hack/cluster/up.sh"
fi

# policy_synced yes|no : kube-router's pod chain for nginx does (not) jump to the policy's chain.
policy_synced() {
  local rules found=no
  rules=$(in_node iptables-save -t filter)
  if grep -q "run through nw policy $policy" <<<"$rules"; then found=yes; fi
  [ "$found" = "$1" ]
}

# client NAME LABELLED ATTEMPTS : a Job fetching $url, its pod labelled role=runner or not.
client() {
  local labels='{}'
  [ "$2" = yes ] && labels='{role: runner}'
  fbget_job "$ns" "$1" "$url" "$3" "$labels"
}

log "images"
"$root/hack/images/nginx.sh"
"$root/hack/images/fbget.sh"
"$root/hack/images/import.sh" "$root/bin/images/nginx.tar" "$root/bin/images/fbget.tar"

k delete namespace "$ns" --ignore-not-found --wait=true --timeout=60s >/dev/null
k create namespace "$ns" >/dev/null
k -n "$ns" apply -f "$root/hack/cluster/smoke-nginx.yaml" >/dev/null
k -n "$ns" apply -f - >/dev/null <<'EOF2'
# Ingress to nginx only from pods labelled role=runner in this namespace (add
# namespaceSelector: {} beside podSelector to admit runners from every namespace).
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: runner-only}
spec:
  podSelector: {matchLabels: {app: nginx}}
  policyTypes: [Ingress]
  ingress:
  - from:
    - podSelector: {matchLabels: {role: runner}}
    ports: [{protocol: TCP, port: 80}]
EOF2
# Readiness probes come from the node (source address LOCAL): kube-router admits those.
k -n "$ns" wait --for=condition=Available deployment/nginx --timeout=60s >/dev/null || fail "nginx not available"
wait_for "policy $policy in kube-router's chains" 30 policy_synced yes || fail "policy not synced"

client allowed yes 20
k -n "$ns" wait --for=condition=Complete job/allowed --timeout=90s >/dev/null || fail "role=runner client was not served"
log "role=runner client served after $(($(date +%s) - t0))s"

client denied no 3
k -n "$ns" wait --for=condition=Failed job/denied --timeout=90s >/dev/null || fail "unlabelled client was served despite the policy"
out=$(k -n "$ns" logs job/denied 2>&1 || true)
echo "$out" >&2
grep -qiE 'connection refused|timeout|deadline' <<<"$out" || fail "unlabelled client failed for another reason"
log "unlabelled client refused after $(($(date +%s) - t0))s"

k -n "$ns" delete networkpolicy "$policy" >/dev/null
wait_for "policy $policy gone from kube-router's chains" 30 policy_synced no || fail "policy removal not synced"
client denied-nopolicy no 20
k -n "$ns" wait --for=condition=Complete job/denied-nopolicy --timeout=90s >/dev/null || fail "unlabelled client not served after the policy was deleted"

if [ -z "${KEEP:-}" ]; then
  k delete namespace "$ns" --wait=false >/dev/null || true
fi
log "netpol smoke passed in $(($(date +%s) - t0))s"
