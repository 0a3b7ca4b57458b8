#!/usr/bin/env bash
# Renders the chart with its toggles on and off and checks what each must contain.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
helm="$root/bin/helm"
chart="$root/charts/fleetbench"

count() { grep -c "^kind: $1\$" || true; }

all=$("$helm" template fb "$chart" --namespace fleetbench-system)
[ "$(count CustomResourceDefinition <<<"$all")" = 3 ] || { echo "chart: want 3 CRDs by default"; exit 1; }
[ "$(count Profile <<<"$all")" = 8 ] || { echo "chart: want the 8 built-in Profiles by default"; exit 1; }
for kind in Deployment ClusterRole ClusterRoleBinding ServiceAccount Service; do
  [ "$(count "$kind" <<<"$all")" -ge 1 ] || { echo "chart: no $kind rendered"; exit 1; }
done
grep -q 'helm.sh/resource-policy: keep' <<<"$all" || { echo "chart: CRDs should be kept on uninstall by default"; exit 1; }

bare=$("$helm" template fb "$chart" --set crds.install=false --set builtinProfiles.install=false)
[ "$(count CustomResourceDefinition <<<"$bare")" = 0 ] || { echo "chart: crds.install=false still renders CRDs"; exit 1; }
[ "$(count Profile <<<"$bare")" = 0 ] || { echo "chart: builtinProfiles.install=false still renders Profiles"; exit 1; }

monitored=$("$helm" template fb "$chart" --set metrics.serviceMonitor.enabled=true)
[ "$(count ServiceMonitor <<<"$monitored")" = 1 ] || { echo "chart: serviceMonitor.enabled renders no ServiceMonitor"; exit 1; }

# The chart's CRDs are config/'s CRDs: same schema, byte for byte after the template lines.
for crd in "$root"/config/crd/bases/*.yaml; do
  diff <(grep -v '^---$' "$crd") <(grep -vE '^(#|\{\{)|helm.sh/resource-policy' "$chart/templates/crds/$(basename "$crd")") >/dev/null \
    || { echo "chart: templates/crds/$(basename "$crd") differs from config/: run make manifests"; exit 1; }
done
echo "chart: 3 toggles and the CRD copies check out"
