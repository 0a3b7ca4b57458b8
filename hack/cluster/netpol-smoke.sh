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
# With more than one node (FLEETBENCH_NODES=N) nginx runs on fleetbench-node-2 and every client
# on fleetbench-node: the policy is enforced by node 2's kube-router on traffic from another
# node (which keeps its pod source address: the bridge CNI does not masquerade).
#
# usage: hack/cluster/netpol-smoke.sh     (KEEP=1 keeps the namespace)
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

export KUBECONFIG="${KUBECONFIG:-$KUBECONFIG_OUT}"
ns=fleetbench-netpol
policy=runner-only
url="http://nginx.$ns.svc.cluster.local/"
t0=$(date +%s)
k() { "$(kubectl_bin)" --request-timeout=30s "$@"; }

mapfile -t nodes < <(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort -V)
[ ${#nodes[@]} -gt 0 ] || die "no nodes"
server_node= client_node=
if [ ${#nodes[@]} -gt 1 ]; then server_node=$NODE_NAME-2 client_node=$NODE_NAME; fi
# kube-router on nginx's node holds the policy's chains.
server_ns=$(node_ns_of "${server_node:-$NODE_NAME}")
server_sfx=${server_ns#"$NODE_NS"}

fail() {
  echo "netpol smoke FAILED: $*" >&2
  k -n "$ns" get all,networkpolicy -o wide >&2 || true
  k -n "$ns" describe pods >&2 || true
  in_ns "$server_ns" iptables-save -t filter 2>/dev/null | grep -E 'KUBE-ROUTER|KUBE-NWPLCY|KUBE-POD-FW' >&2 || true
  tail -30 "$DATA/logs/kube-router$server_sfx.log" >&2 || true
  exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (reads iptables in the node namespace)"
for n in "${nodes[@]}"; do
  if ! kill -0 "$(cat "$DATA/pids/kube-router${n#"$NODE_NAME"}.pid" 2>/dev/null)" 2>/dev/null; then
    die "kube-router is not running on $n: start the cluster with FLEETBENCH_NETPOL=1 hack/cluster/up.sh"
  fi
done

# policy_synced yes|no : kube-router's pod chain for nginx does (not) jump to the policy's chain.
policy_synced() {
  local rules found=no
  rules=$(in_ns "$server_ns" iptables-save -t filter)
  if grep -q "run through nw policy $policy" <<<"$rules"; then found=yes; fi
  [ "$found" = "$1" ]
}

# client NAME LABELLED ATTEMPTS : a Job fetching $url, its pod labelled role=runner or not.
client() {
  local labels='{}'
  [ "$2" = yes ] && labels='{role: runner}'
  fbget_job "$ns" "$1" "$url" "$3" "$labels" "$client_node"
}

# on_client_node JOB : the Job's pod ran on the client node (multi-node) and not beside nginx.
on_client_node() {
  [ -n "$client_node" ] || return 0
  local where
  where=$(k -n "$ns" get pods -l "job-name=$1" -o jsonpath='{.items[0].spec.nodeName}')
  [ "$where" = "$client_node" ] || fail "Job $1 ran on $where, not $client_node"
  log "Job $1 ran on $where, nginx on $server_node"
}

log "images"
"$root/hack/images/nginx.sh"
"$root/hack/images/fbget.sh"
import_images "$root/bin/images/nginx.tar" "$root/bin/images/fbget.tar"

k delete namespace "$ns" --ignore-not-found --wait=true --timeout=60s >/dev/null
k create namespace "$ns" >/dev/null
selector='{}'
[ -z "$server_node" ] || selector="{kubernetes.io/hostname: $server_node}"
sed "s|nodeSelector: {}|nodeSelector: $selector|" "$root/hack/cluster/smoke-nginx.yaml" | k -n "$ns" apply -f - >/dev/null
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
on_client_node allowed
log "role=runner client served after $(($(date +%s) - t0))s"

client denied no 3
k -n "$ns" wait --for=condition=Failed job/denied --timeout=90s >/dev/null || fail "unlabelled client was served despite the policy"
out=$(k -n "$ns" logs job/denied 2>&1 || true)
echo "$out" >&2
grep -qiE 'connection refused|timeout|deadline' <<<"$out" || fail "unlabelled client failed for another reason"
on_client_node denied
log "unlabelled client refused after $(($(date +%s) - t0))s"
# The control plane reaches nginx through the policy: the API server is local on one node, and
# up.sh admits node 1's address on the other nodes the same way (e2e tests read nginx_status
# through the service proxy).
k get --request-timeout=10s --raw "/api/v1/namespaces/$ns/services/nginx:80/proxy/nginx_status" >/dev/null ||
  fail "the API server's service proxy did not reach nginx (on ${server_node:-$NODE_NAME}) through the policy"
log "the API server's service proxy reached nginx (on ${server_node:-$NODE_NAME}) through the policy"

k -n "$ns" delete networkpolicy "$policy" >/dev/null
wait_for "policy $policy gone from kube-router's chains" 30 policy_synced no || fail "policy removal not synced"
client denied-nopolicy no 20
k -n "$ns" wait --for=condition=Complete job/denied-nopolicy --timeout=90s >/dev/null || fail "unlabelled client not served after the policy was deleted"
on_client_node denied-nopolicy

if [ -z "${KEEP:-}" ]; then
  k delete namespace "$ns" --wait=false >/dev/null || true
fi
log "netpol smoke passed in $(($(date +%s) - t0))s (${#nodes[@]} node(s))"
