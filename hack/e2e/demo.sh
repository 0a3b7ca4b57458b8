#!/usr/bin/env bash
# make demo: the main job, end to end. On a fresh machine it
#   1. uses the configured cluster, or boots the local one (hack/cluster/ensure.sh),
#   2. builds and imports the images (hack/e2e/images.sh), helm-installs fleetbench,
#   3. applies examples/quickstart/testrun.yaml (deleting an earlier one first), waits for it
#      to finish, and prints its results as a table.
# The cluster stays up so you can look around; the last lines say how to tear it down.
# env: DEMO_TIMEOUT seconds to wait for the TestRun (default 300).
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source hack/versions.env
export GOTOOLCHAIN=local
kubectl=$root/bin/k8s/$KUBE_VERSION/kubectl
example=examples/quickstart/testrun.yaml
name=quickstart
timeout=${DEMO_TIMEOUT:-300}

log() { echo ">> $(date +%T) $*" >&2; }
T0=$(date +%s)
since() { echo "$(($(date +%s) - T0))s"; }

eval "$(hack/cluster/ensure.sh)"
export KUBECONFIG
[ -x "$kubectl" ] || kubectl=$(command -v kubectl)
k() { "$kubectl" --request-timeout=30s "$@"; }
log "cluster ready ($(since)): KUBECONFIG=$KUBECONFIG"

if [ "$KUBECONFIG" = "$root/bin/cluster/kubeconfig" ]; then
  hack/e2e/images.sh --demo
else
  hack/e2e/images.sh --demo --no-import
  log "note: $KUBECONFIG is not the local cluster: its nodes need fleetbench/{manager,runner,nginx}:dev"
fi
log "images ready ($(since))"
hack/e2e/install.sh
log "fleetbench installed ($(since))"

ns=$(k config view --minify -o jsonpath='{..namespace}' 2>/dev/null || true)
ns=${ns:-default}
if k -n "$ns" get testrun "$name" >/dev/null 2>&1; then
  log "deleting the previous TestRun $ns/$name"
  k -n "$ns" delete testrun "$name" --wait=true --timeout=120s >/dev/null
fi
k -n "$ns" apply -f "$example" >/dev/null
log "applied $example; waiting up to ${timeout}s for it to finish (kubectl get testrun $name -w shows progress)"

start=$(date +%s) last=
while :; do
  line=$(k -n "$ns" get testrun "$name" -o go-template='{{.status.phase}} {{.status.reason}}: {{.status.message}}' 2>/dev/null || true)
  if [ "$line" != "$last" ]; then
    log "  $(($(date +%s) - start))s ${line//<no value>/}"
    last=$line
  fi
  case "$line" in Succeeded*|Failed*) break ;; esac
  if (($(date +%s) - start >= timeout)); then
    echo "error: TestRun $name did not finish within ${timeout}s" >&2
    k -n "$ns" get testrun "$name" -o yaml >&2 || true
    k -n fleetbench-system logs deploy/fleetbench-manager --tail=40 >&2 || true
    exit 1
  fi
  sleep 2
done

# The results table, from the TestRun's status (kubectl's Go templates: no jq needed).
tpl='{{with .status}}phase|{{.phase}}  ({{.reason}})
verdict|{{.verdict}}
{{with .results}}{{with .requests}}requests total|{{.total}}
requests accepted|{{.accepted}}
requests dropped|{{.dropped}} ({{.droppedPercent}} %)
{{end}}{{with .iterations}}iterations|{{.total}} (dropped {{.dropped}})
{{end}}{{with .throughput}}throughput|{{.requestsPerSecond}} req/s
{{end}}{{with .latency}}latency min|{{.min}}
latency avg|{{.avg}}
latency p50|{{.p50}}
latency p90|{{.p90}}
latency p95|{{.p95}}
latency p99|{{.p99}}
latency max|{{.max}}
{{end}}{{end}}{{with .runners}}runners|{{.desired}} desired, {{or .succeeded 0}} succeeded, {{or .failed 0}} failed
start skew|{{.startSkew}}
{{end}}{{with .results}}{{range .thresholds}}threshold|{{.metric}} {{.expression}}: {{if .passed}}passed{{else}}FAILED{{end}} (value {{.value}})
{{end}}{{end}}target namespace|{{.targetNamespace}}
message|{{.message}}
{{end}}'
table=$(k -n "$ns" get testrun "$name" -o go-template="$tpl")
echo
echo "TestRun $ns/$name ($example)"
printf '%s\n' "──────────────────────────────────────────────────────────────"
while IFS='|' read -r key value; do
  [ -n "$key" ] || continue
  value=${value//<no value>/-}
  printf '  %-19s %s\n' "$key" "$value"
done <<<"$table"
printf '%s\n' "──────────────────────────────────────────────────────────────"
echo "done in $(since). The cluster stays up: KUBECONFIG=$KUBECONFIG"
echo "  look:      $kubectl get testruns; $kubectl get testrun $name -o yaml"
if [ "$KUBECONFIG" = "$root/bin/cluster/kubeconfig" ]; then
  echo "  tear down: make cluster-down   (hack/cluster/down.sh)"
else
  echo "  uninstall: bin/helm uninstall fleetbench -n fleetbench-system"
fi
phase=$(k -n "$ns" get testrun "$name" -o jsonpath='{.status.phase}')
[ "$phase" = Succeeded ]
