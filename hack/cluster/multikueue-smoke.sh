#!/usr/bin/env bash
# Proves the two local clusters are joined (FLEETBENCH_CLUSTERS=2 make cluster-up): a Job
# submitted in cluster 1 to LocalQueue zone-cluster-2 with spec.managedBy
# kueue.x-k8s.io/multikueue is dispatched by MultiKueue to cluster 2, runs there, and its status
# comes home. Its pod, in cluster 2, fetches nginx of cluster 1 through cluster 1's node IP and
# a NodePort, the path a load zone's runners take to a target provisioned in the home cluster.
# Asserts: the home Job completes with no pod in cluster 1; its Workload names cluster-2; the
# remote Job's pod ran on cluster 2's node and got HTTP 200. Every wait is bounded.
# usage: hack/cluster/multikueue-smoke.sh   (KEEP=1 keeps the objects)
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

kc1=$root/bin/cluster/kubeconfig kc2=$root/bin/cluster-2/kubeconfig
[ -s "$kc2" ] || die "no second cluster: FLEETBENCH_CLUSTERS=2 make cluster-up"
k1() { "$(kubectl_bin)" --kubeconfig "$kc1" --request-timeout=30s "$@"; }
k2() { "$(kubectl_bin)" --kubeconfig "$kc2" --request-timeout=30s "$@"; }
name=mk-smoke queue=zone-cluster-2 worker=cluster-2
t0=$(date +%s)

fail() {
  echo "multikueue smoke FAILED: $*" >&2
  k1 get job,workload,pods -o wide >&2 || true
  k2 get job,workload,pods -o wide >&2 || true
  k2 logs "job/$name" >&2 || true
  exit 1
}

cleanup() {
  k1 delete job "$name" --ignore-not-found --wait=true --timeout=60s >/dev/null 2>&1 || true
  k1 delete deployment,service "$name-nginx" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  k2 delete job "$name" --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
}
# Whatever an interrupted run left first.
cleanup

log "images"
"$root/hack/images/nginx.sh"
"$root/hack/images/fbget.sh"
import_images_under /run/fleetbench-cluster "$root/bin/images/nginx.tar"
import_images_under /run/fleetbench-cluster-2 "$root/bin/images/fbget.tar"

sed -e "s/name: nginx}/name: $name-nginx}/" -e "s/app: nginx/app: $name-nginx/g" \
  "$root/hack/cluster/smoke-nginx.yaml" | k1 apply -f - >/dev/null
k1 patch service "$name-nginx" --type merge -p '{"spec":{"type":"NodePort"}}' >/dev/null
k1 wait --for=condition=Available "deployment/$name-nginx" --timeout=60s >/dev/null || fail "nginx not available"
port=$(k1 get service "$name-nginx" -o jsonpath='{.spec.ports[0].nodePort}')
url="http://$NODE_IP:$port/"
log "nginx of cluster 1 at $url (its node IP and a NodePort)"

k1 apply -f - >/dev/null <<EOY
apiVersion: batch/v1
kind: Job
metadata:
  name: $name
  labels: {kueue.x-k8s.io/queue-name: $queue}
spec:
  managedBy: kueue.x-k8s.io/multikueue
  suspend: true
  backoffLimit: 0
  activeDeadlineSeconds: 90
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: fbget
        image: fleetbench/fbget:dev
        imagePullPolicy: Never
        args: [-url, "$url", -expect, "fleetbench nginx ok", -attempts, "20"]
        resources: {requests: {cpu: 10m, memory: 16Mi}}
EOY
k1 wait --for=condition=Complete "job/$name" --timeout=120s >/dev/null || fail "the home Job did not complete"
[ -z "$(k1 get pods -l "job-name=$name" -o name)" ] || fail "the Job ran pods in cluster 1"
wl_cluster=$(k1 get workloads -o jsonpath="{range .items[?(@.metadata.ownerReferences[0].name=='$name')]}{.status.clusterName}{end}")
[ "$wl_cluster" = "$worker" ] || fail "the home Workload names cluster '$wl_cluster', not $worker"
read -r node phase < <(k2 get pods -l "job-name=$name" -o jsonpath='{.items[0].spec.nodeName} {.items[0].status.phase}{"\n"}') ||
  fail "no pod of the Job in cluster 2"
[ "$phase" = Succeeded ] && [[ $node == fleetbench-c2-node* ]] || fail "the remote pod is $phase on '$node'"
out=$(k2 logs "job/$name") || fail "kubectl logs in cluster 2 failed"
grep -q "HTTP 200" <<<"$out" || fail "the remote Job's output lacks HTTP 200: $out"
log "Job $name: dispatched to $wl_cluster, ran on $node, $(grep -m1 HTTP <<<"$out"), complete at home after $(($(date +%s) - t0))s"

[ -n "${KEEP:-}" ] || cleanup
log "multikueue smoke passed in $(($(date +%s) - t0))s"
