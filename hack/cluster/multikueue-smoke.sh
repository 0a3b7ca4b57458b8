#!/usr/bin/env bash
# Proves the two local clusters are joined (FLEETBENCH_CLUSTERS=2 make cluster-up): a Job
# submitted in cluster 1 to LocalQueue zone-cluster-2 with spec.managedBy
# kueue.x-k8s.io/multikueue is dispatched by MultiKueue to cluster 2, runs there, and its status
# comes home. Its pod, in cluster 2, fetches nginx of cluster 1 through cluster 1's node IP and
# a NodePort, the path a load zone's runners take to a target provisioned in the home cluster.
# Asserts: the home Job completes with no pod in cluster 1; its Workload names cluster-2;
# cluster 2's events show the pod scheduled on its node and the Job completed (fbget exits 0
# only on HTTP 200 with nginx's page). Every wait is bounded.
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
  # Its events too: the checks below read cluster 2's events, and must not read an earlier run's.
  k2 get events -o jsonpath='{range .items[*]}{.metadata.name} {.involvedObject.name}{"\n"}{end}' 2>/dev/null |
    awk -v n="$name" '$2 == n || index($2, n "-") == 1 {print $1}' | xargs -r "$(kubectl_bin)" --kubeconfig "$kc2" delete event >/dev/null 2>&1 || true
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
# MultiKueue deletes the remote Job once the home copy finished, so cluster 2's events tell
# where its pod ran; fbget exits 0 only on HTTP 200 with nginx's page (backoffLimit 0).
sched=$(k2 get events --field-selector reason=Scheduled,involvedObject.kind=Pod \
  -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep "default/$name-" | tail -1) || true
[[ $sched == *" to fleetbench-c2-node"* ]] || fail "no pod of the Job was scheduled in cluster 2 (events: '$sched')"
done_event=$(k2 get events --field-selector "reason=Completed,involvedObject.kind=Job,involvedObject.name=$name" -o name)
[ -n "$done_event" ] || fail "cluster 2 recorded no completion of Job $name"
log "Job $name: dispatched to $wl_cluster (${sched#Successfully assigned }), fetched cluster 1's nginx, complete at home after $(($(date +%s) - t0))s"

[ -n "${KEEP:-}" ] || cleanup
log "multikueue smoke passed in $(($(date +%s) - t0))s"
