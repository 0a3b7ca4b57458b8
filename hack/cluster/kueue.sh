#!/usr/bin/env bash
# Kueue on the local cluster, for the queue e2e (test/e2e/kueue_test.go).
#   hack/cluster/kueue.sh up     build Kueue's manager ($KUEUE_VERSION) from its Go module into
#                                bin/kueue-$KUEUE_VERSION, install its CRDs (from the same module),
#                                run the manager on this host against the cluster, and make the
#                                ResourceFlavor "default", ClusterQueue "fleetbench" and LocalQueue
#                                "fleetbench" in namespace default (quota: KUEUE_CPU, KUEUE_MEMORY)
#   hack/cluster/kueue.sh down   stop the manager and remove all of the above, CRDs included
#   hack/cluster/kueue.sh multikueue
#                                the two local clusters (FLEETBENCH_CLUSTERS=2 hack/cluster/up.sh)
#                                joined by MultiKueue: Kueue in both, cluster 2 registered in
#                                cluster 1 as the MultiKueueCluster "cluster-2" (a kubeconfig
#                                Secret for a client that holds only hack/cluster/multikueue-rbac.yaml's
#                                rights there), and the queue "zone-cluster-2" that dispatches to it:
#                                ClusterQueue + MultiKueue AdmissionCheck in cluster 1, the same
#                                LocalQueue name in cluster 2 (MultiKueue's rule). `down` takes
#                                cluster 2's Kueue down too.
# KUEUE_CLUSTER=2 runs up/down against cluster 2 (its own data dir and ports).
# The manager runs as a host process, not a pod: no image to build, and its webhooks stay
# unregistered (the API server never calls them; Kueue's controllers and scheduler do the
# admission). Its configuration registers TestRun as an external framework, as Kueue's docs ask
# of an integration outside Kueue: Kueue then leaves the runner Jobs a TestRun owns to it.
# Nothing is downloaded but Go modules through GOPROXY; no registry.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=hack/versions.env
source "$root/hack/versions.env"
export GOTOOLCHAIN=local
cluster=${KUEUE_CLUSTER:-1}
case $cluster in
1) csfx= KUBECONFIG=${KUBECONFIG:-$root/bin/cluster/kubeconfig} ;;
2) csfx=-2 KUBECONFIG=$root/bin/cluster-2/kubeconfig ;;
*) echo "KUEUE_CLUSTER must be 1 or 2" >&2; exit 2 ;;
esac
export KUBECONFIG
data="$root/bin/cluster$csfx/kueue"
bin="$root/bin/kueue-$KUEUE_VERSION"
# Each cluster's manager is a host process of its own: its own probe and webhook ports.
health_port=$((18080 + cluster)) webhook_port=$((19442 + cluster))
# The MultiKueue link: the worker (cluster 2) as the manager (cluster 1) knows it.
worker=cluster-2 zone_queue=zone-cluster-2
worker_kubeconfig=/var/lib/fleetbench-cluster-2/multikueue.kubeconfig
# TestRun, the custom job MultiKueue's generic adapter dispatches (MultiKueueAdaptersForCustomJobs).
testrun_gvk=TestRun.v1alpha1.fleetbench.dev
# ZoneStart, the start of a load zone, dispatched to the zone's cluster the same way.
zonestart_gvk=ZoneStart.v1alpha1.fleetbench.dev
log() { echo ">> $(date +%T) $*" >&2; }

build() {
  [ -x "$bin" ] && return 0
  local work="$root/bin/.build/kueue-$KUEUE_VERSION"
  log "building Kueue $KUEUE_VERSION (several minutes cold)"
  rm -rf "$work" && mkdir -p "$work"
  printf 'module fleetbench.dev/hack/kueue\n\ngo 1.26\n\nrequire sigs.k8s.io/kueue %s\n' "$KUEUE_VERSION" >"$work/go.mod"
  printf 'package tools\n\nimport _ "sigs.k8s.io/kueue/cmd/kueue"\n' >"$work/tools.go"
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy >/dev/null &&
    CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 10 go build -trimpath -ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION" \
      -o "$bin.tmp" sigs.k8s.io/kueue/cmd/kueue)
  mv "$bin.tmp" "$bin"
}

# crds: Kueue's CRDs as its module ships them (the version above, never a copy of ours).
crds() {
  local dir
  dir=$(cd "$root/bin/.build/kueue-$KUEUE_VERSION" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
  echo "$dir/config/components/crd/bases"
}

# cluster_queue NAME [ADMISSION_CHECK] : the YAML of ClusterQueue NAME for every namespace, quota
# KUEUE_CPU and KUEUE_MEMORY on the flavor "default", with the admission check when named.
cluster_queue() {
  cat <<EOY
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $1}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: "${KUEUE_CPU:-4}"}
      - {name: memory, nominalQuota: "${KUEUE_MEMORY:-8Gi}"}
EOY
  [ -z "${2:-}" ] || printf '  admissionChecksStrategy:\n    admissionChecks:\n    - name: %s\n' "$2"
}

up() {
  build
  mkdir -p "$data/certs"
  kubectl apply --server-side -f "$(crds)" >/dev/null
  kubectl wait --for=condition=Established crd --all --timeout=60s >/dev/null
  # The webhook server must start; nothing calls it (no webhook configuration is installed).
  [ -s "$data/certs/tls.crt" ] || openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=kueue-local \
    -keyout "$data/certs/tls.key" -out "$data/certs/tls.crt" 2>/dev/null
  # Without internal cert management Kueue reads its metrics certificate from a fixed path
  # (cmd/kueue/main.go): point it at the same throwaway one. Removed by down.
  # A link left dangling (its cluster's data removed by a crashed run) is made again.
  if [ ! -e /etc/kueue/metrics/certs ]; then
    rm -f /etc/kueue/metrics/certs
    mkdir -p /etc/kueue/metrics && ln -s "$data/certs" /etc/kueue/metrics/certs && touch "$data/made-etc-kueue"
  fi
  cat >"$data/config.yaml" <<EOC
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:$health_port
metrics:
  bindAddress: "0"
webhook:
  port: $webhook_port
  host: 127.0.0.1
  certDir: $data/certs
internalCertManagement:
  enable: false
leaderElection:
  leaderElect: false
integrations:
  frameworks: ["batch/job"]
  externalFrameworks: ["$testrun_gvk", "$zonestart_gvk"]
EOC
  # The manager of two joined clusters dispatches TestRuns and ZoneStarts too (Kueue's generic adapter).
  if [ -n "${KUEUE_MULTIKUEUE:-}" ]; then
    printf 'multiKueue:\n  gcInterval: 30s\n  externalFrameworks:\n  - name: %s\n  - name: %s\n' "$testrun_gvk" "$zonestart_gvk" >>"$data/config.yaml"
  fi
  kubectl create namespace kueue-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  if [ -f "$data/pid" ] && kill -0 "$(cat "$data/pid")" 2>/dev/null && cmp -s "$data/config.yaml" "$data/config.running"; then
    log "Kueue manager already running (pid $(cat "$data/pid"))"
  else
    # Not running, or running with another configuration: (re)start it.
    if [ -f "$data/pid" ]; then kill "$(cat "$data/pid")" 2>/dev/null || true; sleep 1; fi
    cp "$data/config.yaml" "$data/config.running"
    # The visibility API server needs certificates of its own and an APIService; the e2e does not use it.
    nohup "$bin" --config "$data/config.yaml" --feature-gates=VisibilityOnDemand=false --zap-log-level=2 >"$data/manager.log" 2>&1 &
    echo $! >"$data/pid"
    log "Kueue manager pid $(cat "$data/pid"), log $data/manager.log"
  fi
  for _ in $(seq 60); do curl -sf "http://127.0.0.1:$health_port/readyz" >/dev/null && break; sleep 1; done
  curl -sf "http://127.0.0.1:$health_port/readyz" >/dev/null || { tail -30 "$data/manager.log" >&2; exit 1; }
  kubectl apply -f - >/dev/null <<EOY
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
$(cluster_queue fleetbench)
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: fleetbench, namespace: default}
spec: {clusterQueue: fleetbench}
EOY
  log "Kueue $KUEUE_VERSION is up in cluster $cluster: ClusterQueue fleetbench, LocalQueue default/fleetbench. The fleetbench manager must be (re)started to see it."
}

# multikueue: Kueue in both local clusters, cluster 2 registered in cluster 1 as a MultiKueue
# worker, and the queue zone-cluster-2 in namespace default of both (see the header).
multikueue() {
  [ -s "$worker_kubeconfig" ] || { echo "error: no second cluster (FLEETBENCH_CLUSTERS=2 hack/cluster/up.sh)" >&2; exit 1; }
  KUEUE_CLUSTER=2 "$0" up
  # MultiKueue watches the kinds it dispatches in the worker: TestRun's CRD must be there (the
  # chart's own; a fleetbench installed there later takes crds.install=false).
  kubectl --kubeconfig "$root/bin/cluster-2/kubeconfig" apply --server-side -f "$root/config/crd/bases" >/dev/null
  kubectl --kubeconfig "$root/bin/cluster-2/kubeconfig" wait --for=condition=Established crd --all --timeout=60s >/dev/null
  # What MultiKueue does in the worker, and nothing more: the client of worker_kubeconfig.
  kubectl --kubeconfig "$root/bin/cluster-2/kubeconfig" apply -f "$root/hack/cluster/multikueue-rbac.yaml" >/dev/null
  kubectl --kubeconfig "$root/bin/cluster-2/kubeconfig" apply -f - >/dev/null <<EOY
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: $zone_queue, namespace: default}
spec: {clusterQueue: fleetbench}
EOY
  KUEUE_MULTIKUEUE=1 "$0" up
  kubectl -n kueue-system create secret generic "$worker" --from-file=kubeconfig="$worker_kubeconfig" \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -f - >/dev/null <<EOY
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: $worker}
spec:
  clusterSource:
    kubeConfig: {locationType: Secret, location: $worker}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: $worker}
spec:
  clusters: [$worker]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: $worker}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: $worker}
---
$(cluster_queue "$zone_queue" "$worker")
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: $zone_queue, namespace: default}
spec: {clusterQueue: $zone_queue}
EOY
  kubectl wait --for=condition=Active "multikueuecluster/$worker" --timeout=60s >/dev/null ||
    { kubectl get multikueuecluster "$worker" -o yaml >&2; exit 1; }
  kubectl wait --for=condition=Active "admissioncheck/$worker" --timeout=60s >/dev/null
  log "MultiKueue: cluster 1 dispatches LocalQueue default/$zone_queue to MultiKueueCluster $worker (cluster 2)"
}

down() {
  # Kueue's objects first, while its manager still runs to drop their finalizers: a CRD whose
  # objects keep a finalizer would hold its own deletion.
  kubectl delete workloads.kueue.x-k8s.io,localqueues.kueue.x-k8s.io --all -A --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  kubectl delete clusterqueues.kueue.x-k8s.io,resourceflavors.kueue.x-k8s.io --all --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  # MultiKueue's (kueue.sh multikueue): also held by finalizers its manager drops.
  kubectl delete admissionchecks.kueue.x-k8s.io,multikueueconfigs.kueue.x-k8s.io,multikueueclusters.kueue.x-k8s.io --all \
    --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  if [ -f "$data/pid" ]; then
    kill "$(cat "$data/pid")" 2>/dev/null || true
    rm -f "$data/pid"
  fi
  [ -f "$data/made-etc-kueue" ] && rm -rf /etc/kueue "$data/made-etc-kueue"
  # What still holds a finalizer (Kueue's manager was not running to drop it) is let go here:
  # otherwise the CRDs' deletion below waits on it for ever.
  local kinds=workloads.kueue.x-k8s.io,localqueues.kueue.x-k8s.io,clusterqueues.kueue.x-k8s.io,resourceflavors.kueue.x-k8s.io
  kinds+=,admissionchecks.kueue.x-k8s.io,multikueueconfigs.kueue.x-k8s.io,multikueueclusters.kueue.x-k8s.io
  kubectl get "$kinds" -A --ignore-not-found -o jsonpath='{range .items[*]}{.kind} {.metadata.name} {.metadata.namespace}{"\n"}{end}' 2>/dev/null |
    while read -r kind name ns; do
      [ -n "$name" ] || continue
      kubectl patch "${kind,,}.kueue.x-k8s.io" "$name" ${ns:+-n "$ns"} --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
    done
  if [ -d "$root/bin/.build/kueue-$KUEUE_VERSION" ]; then kubectl delete -f "$(crds)" --ignore-not-found --timeout=120s >/dev/null || true; fi
  kubectl delete namespace kueue-system --ignore-not-found --wait=false >/dev/null
  # The worker got fleetbench's CRDs from `multikueue`: they go with it.
  if [ "$cluster" = 2 ]; then kubectl delete -f "$root/config/crd/bases" --ignore-not-found --timeout=60s >/dev/null || true; fi
  log "Kueue removed"
}

case "${1:-}" in
  up) up ;;
  down)
    down
    # The second cluster's manager too, whenever it runs (cluster 2 may already be gone).
    if [ "$cluster" = 1 ] && [ -f "$root/bin/cluster-2/kueue/pid" ]; then KUEUE_CLUSTER=2 "$0" down; fi
    ;;
  multikueue) multikueue ;;
  build) build ;;
  *) echo "usage: $0 up|down|build|multikueue" >&2; exit 2 ;;
esac
