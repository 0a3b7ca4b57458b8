#!/usr/bin/env bash
# Renders the chart with its toggles on and off and checks what each must contain.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
helm="$root/bin/helm"
chart="$root/charts/fleetbench"

count() { grep -c "^kind: $1\$" || true; }

all=$("$helm" template fb "$chart" --namespace fleetbench-system)
[ "$(count CustomResourceDefinition <<<"$all")" = 4 ] || { echo "chart: want 4 CRDs by default (Profile, TestRun, CapacityPlan, ZoneStart)"; exit 1; }
[ "$(count Profile <<<"$all")" = 8 ] || { echo "chart: want the 8 built-in Profiles by default"; exit 1; }
for kind in Deployment ClusterRole ClusterRoleBinding ServiceAccount Service; do
  [ "$(count "$kind" <<<"$all")" -ge 1 ] || { echo "chart: no $kind rendered"; exit 1; }
done
grep -q 'helm.sh/resource-policy: keep' <<<"$all" || { echo "chart: CRDs should be kept on uninstall by default"; exit 1; }

for role in fleetbench-edit fleetbench-view; do
  grep -q "^  name: $role\$" <<<"$all" || { echo "chart: no aggregated user role $role by default"; exit 1; }
done
if grep -nE "^ *- ['\"]?\*['\"]?\$" <<<"$all"; then echo "chart: a rendered rule holds a wildcard; name each verb and resource"; exit 1; fi
! grep -q "fleetbench-edit" <<<"$("$helm" template fb "$chart" --set rbac.userRoles=false)" || { echo "chart: rbac.userRoles=false still renders the user roles"; exit 1; }

# The record key: a Secret of the chart's by default, mounted; a named one is mounted instead.
grep -q '^  name: fb-fleetbench-record-key$' <<<"$all" || { echo "chart: no record key Secret by default"; exit 1; }
grep -q 'secretName: fb-fleetbench-record-key' <<<"$all" || { echo "chart: the record key is not mounted"; exit 1; }
own=$("$helm" template fb "$chart" --set recordKey.existingSecret=my-key)
! grep -q 'name: fb-fleetbench-record-key$' <<<"$own" || { echo "chart: recordKey.existingSecret still renders the chart's Secret"; exit 1; }
grep -q 'secretName: my-key' <<<"$own" || { echo "chart: recordKey.existingSecret is not mounted"; exit 1; }

bare=$("$helm" template fb "$chart" --set crds.install=false --set builtinProfiles.install=false)
[ "$(count CustomResourceDefinition <<<"$bare")" = 0 ] || { echo "chart: crds.install=false still renders CRDs"; exit 1; }
[ "$(count Profile <<<"$bare")" = 0 ] || { echo "chart: builtinProfiles.install=false still renders Profiles"; exit 1; }

# facts prints what a rendering holds, one "#: " line each, parsed by Helm itself (fromYaml,
# fromJson) in a throwaway chart: kinds and names, labels and annotations, each JSON file of a
# ConfigMap (failing when it does not parse), each alert with whether its expression is set.
inspector=$(mktemp -d)
trap 'rm -rf "$inspector"' EXIT
mkdir -p "$inspector/templates"
printf 'apiVersion: v2\nname: inspect\nversion: 0.0.0\n' >"$inspector/Chart.yaml"
cat >"$inspector/templates/facts.yaml" <<'TPL'
{{- range $doc := regexSplit "(?m)^---[ \t]*$" (.Files.Get "input.yaml") -1 }}
{{- $o := fromYaml $doc }}
{{- if hasKey $o "Error" }}{{ fail (printf "rendered output does not parse as YAML: %s" $o.Error) }}{{ end }}
{{- if $o.kind }}
#: kind {{ $o.kind }} {{ $o.metadata.name }} {{ $o.metadata.namespace }}
{{- range $k, $v := $o.metadata.labels }}
#: label {{ $o.kind }} {{ $k }}={{ $v }}
{{- end }}
{{- range $k, $v := $o.metadata.annotations }}
#: annotation {{ $o.kind }} {{ $k }}={{ $v }}
{{- end }}
{{- if has $o.kind (list "Role" "ClusterRole") }}{{ range $o.rules }}
#: rule {{ $o.kind }} {{ $o.metadata.name }} {{ $o.metadata.namespace }} resources={{ join "," (default list .resources) }}{{ with .nonResourceURLs }} urls={{ join "," . }}{{ end }}{{ with .resourceNames }} names={{ join "," . }}{{ end }} verbs={{ join "," .verbs }}
{{- end }}{{ end }}
{{- if has $o.kind (list "RoleBinding" "ClusterRoleBinding") }}
#: binding {{ $o.kind }} {{ $o.metadata.name }} {{ $o.metadata.namespace }} role={{ $o.roleRef.kind }}/{{ $o.roleRef.name }}
{{- range $o.subjects }}
#: subject {{ $o.kind }} {{ $o.metadata.name }} {{ .kind }}/{{ .name }}
{{- end }}
{{- end }}
{{- if eq $o.kind "ValidatingAdmissionPolicy" }}{{ range $o.spec.matchConditions }}
#: match {{ $o.metadata.name }} {{ .expression }}
{{- end }}{{ range $o.spec.variables }}
#: variable {{ $o.metadata.name }} {{ .name }}={{ .expression }}
{{- end }}{{ end }}
{{- if eq $o.kind "ConfigMap" }}{{ range $k, $v := $o.data }}{{ if hasSuffix ".json" $k }}
{{- $j := fromJson $v }}
{{- if hasKey $j "Error" }}{{ fail (printf "ConfigMap %s: %s is not JSON: %s" $o.metadata.name $k $j.Error) }}{{ end }}
#: json {{ $k }} uid={{ $j.uid }} panels={{ len $j.panels }} variables={{ range $j.templating.list }}{{ .name }},{{ end }}
{{- range $j.panels }}{{ range .targets }}
#: panel-expr {{ if .expr }}set{{ else }}empty{{ end }}
{{- end }}{{ end }}
{{- end }}{{ end }}{{ end }}
{{- if eq $o.kind "PrometheusRule" }}{{ range $o.spec.groups }}{{ range .rules }}
#: alert {{ .alert }} expr={{ if .expr }}set{{ else }}empty{{ end }} severity={{ .labels.severity }}{{ range $k, $v := .labels }} {{ $k }}={{ $v }}{{ end }}{{ range $k, $v := .annotations }} annotation:{{ $k }}{{ end }}
{{- end }}{{ end }}{{ end }}
{{- if has $o.kind (list "ServiceMonitor" "PodMonitor") }}
#: monitor {{ $o.kind }} selector={{ range $k, $v := $o.spec.selector.matchLabels }}{{ $k }}={{ $v }},{{ end }} namespaces={{ join "," $o.spec.namespaceSelector.matchNames }}
{{- range (default $o.spec.podMetricsEndpoints $o.spec.endpoints) }}
#: endpoint port={{ .port }} scheme={{ .scheme }} token={{ if .bearerTokenFile }}file{{ else if .authorization }}authorization{{ end }} insecure={{ (default dict .tlsConfig).insecureSkipVerify }} honorLabels={{ .honorLabels }} scrapeTimeout={{ .scrapeTimeout }} relabelings={{ len (default list .relabelings) }} metricRelabelings={{ len (default list .metricRelabelings) }}
{{- end }}{{ end }}
{{- end }}
{{- end }}
TPL
facts() {
  cat >"$inspector/input.yaml"
  "$helm" template inspect "$inspector" | sed -n 's/^#: //p'
}
want() { # want <what> <facts> <fixed string>
  grep -qF -- "$3" <<<"$2" || { echo "chart: $1: no \"$3\" in:"; echo "$2"; exit 1; }
}

# Defaults render none of the monitoring extras.
defaults=$(facts <<<"$all")
for kind in ServiceMonitor PodMonitor PrometheusRule; do
  ! grep -q "^kind $kind " <<<"$defaults" || { echo "chart: $kind rendered by default"; exit 1; }
done
! grep -q '^kind ConfigMap .*-dashboards ' <<<"$defaults" || { echo "chart: dashboard ConfigMap rendered by default"; exit 1; }
# The metrics Service carries the labels the ServiceMonitor selects.
want "metrics Service" "$defaults" "label Service app.kubernetes.io/component=metrics"

monitored=$("$helm" template fb "$chart" --namespace fleetbench-system --set metrics.serviceMonitor.enabled=true)
[ "$(count ServiceMonitor <<<"$monitored")" = 1 ] || { echo "chart: serviceMonitor.enabled renders no ServiceMonitor"; exit 1; }
f=$(facts <<<"$monitored")
want serviceMonitor "$f" "kind ServiceMonitor fb-fleetbench-manager fleetbench-system"
want serviceMonitor "$f" "selector=app.kubernetes.io/component=metrics,app.kubernetes.io/instance=fb,app.kubernetes.io/name=fleetbench, namespaces=fleetbench-system"
want serviceMonitor "$f" "endpoint port=metrics scheme=https token=file insecure=true honorLabels=true scrapeTimeout= relabelings=0 metricRelabelings=0"
# Every label the ServiceMonitor selects is on the Service.
for l in $(sed -n 's/^monitor ServiceMonitor selector=\([^ ]*\) .*/\1/p' <<<"$f" | tr ',' ' '); do
  want "serviceMonitor selects the Service" "$f" "label Service $l"
done

f=$("$helm" template fb "$chart" --namespace fleetbench-system \
  --set metrics.serviceMonitor.enabled=true --set metrics.serviceMonitor.namespace=monitoring \
  --set metrics.serviceMonitor.labels.release=kps --set metrics.serviceMonitor.scrapeTimeout=10s \
  --set-json 'metrics.serviceMonitor.relabelings=[{"action":"replace","targetLabel":"cluster","replacement":"lab"}]' \
  --set-json 'metrics.serviceMonitor.metricRelabelings=[{"action":"drop","sourceLabels":["__name__"],"regex":"go_.*"}]' \
  --set metrics.podMonitor.enabled=true --set metrics.podMonitor.labels.release=kps --set metrics.podMonitor.honorLabels=false \
  --set metrics.podMonitor.authorization.credentials.name=prom-token --set metrics.podMonitor.authorization.credentials.key=token | facts)
want "serviceMonitor options" "$f" "kind ServiceMonitor fb-fleetbench-manager monitoring"
want "serviceMonitor options" "$f" "label ServiceMonitor release=kps"
want "serviceMonitor options" "$f" "namespaces=fleetbench-system"
want "serviceMonitor options" "$f" "endpoint port=metrics scheme=https token=file insecure=true honorLabels=true scrapeTimeout=10s relabelings=1 metricRelabelings=1"
want podMonitor "$f" "kind PodMonitor fb-fleetbench-manager fleetbench-system"
want podMonitor "$f" "label PodMonitor release=kps"
want podMonitor "$f" "monitor PodMonitor selector=app.kubernetes.io/component=manager,app.kubernetes.io/instance=fb,app.kubernetes.io/name=fleetbench, namespaces=fleetbench-system"
want podMonitor "$f" "endpoint port=metrics scheme=https token=authorization insecure=true honorLabels=false scrapeTimeout= relabelings=0 metricRelabelings=0"
# A PodMonitor cannot read Prometheus' token file: with secure metrics it must name a token.
! "$helm" template fb "$chart" --set metrics.podMonitor.enabled=true >/dev/null 2>&1 || { echo "chart: a secure PodMonitor without authorization must fail"; exit 1; }

# Metrics behind authn/authz by default: HTTPS, a reader role for scrapers; plain HTTP only when asked.
want "secure metrics" "$defaults" "rule ClusterRole fb-fleetbench-metrics-reader  resources= urls=/metrics verbs=get"
grep -q -- '- --metrics-secure=true$' <<<"$all" || { echo "chart: metrics not secure by default"; exit 1; }
f=$("$helm" template fb "$chart" --namespace fleetbench-system --set metrics.secure=false --set metrics.serviceMonitor.enabled=true)
grep -q -- '- --metrics-secure=false$' <<<"$f" || { echo "chart: metrics.secure=false not passed on"; exit 1; }
f=$(facts <<<"$f")
want "plain metrics" "$f" "endpoint port=metrics scheme= token= insecure= honorLabels=true"
! grep -q 'metrics-reader' <<<"$f" || { echo "chart: metrics.secure=false still renders the metrics reader role"; exit 1; }

f=$("$helm" template fb "$chart" --namespace fleetbench-system --set metrics.grafanaDashboard.enabled=true \
  --set metrics.grafanaDashboard.namespace=grafana --set metrics.grafanaDashboard.labels.team=perf \
  --set metrics.grafanaDashboard.annotations.grafana_folder=Load | facts)
want grafanaDashboard "$f" "kind ConfigMap fb-fleetbench-dashboards grafana"
want grafanaDashboard "$f" "label ConfigMap grafana_dashboard=1"
want grafanaDashboard "$f" "label ConfigMap team=perf"
want grafanaDashboard "$f" "annotation ConfigMap grafana_folder=Load"
want grafanaDashboard "$f" "json fleetbench.json uid=fleetbench-testruns"
want grafanaDashboard "$f" "variables=datasource,namespace,name,testid,"
! grep -q '^panel-expr empty' <<<"$f" || { echo "chart: a dashboard panel has an empty query"; exit 1; }
# Every metric the manager exports per run has a panel, and the target row reads cAdvisor
# through the target namespaces' labels.
dashboard="$chart/dashboards/fleetbench.json"
for m in fleetbench_testrun_status_phase fleetbench_testrun_verdict fleetbench_testrun_requests fleetbench_testrun_failed_requests \
  fleetbench_testrun_requests_per_second fleetbench_testrun_latency_seconds fleetbench_testrun_target_memory_bytes \
  fleetbench_testrun_target_cpu_cores_per_core fleetbench_testrun_runners fleetbench_testrun_start_skew_seconds_bucket \
  fleetbench_testrun_collection_seconds_bucket container_memory_working_set_bytes container_cpu_usage_seconds_total \
  label_fleetbench_dev_role; do
  grep -q "$m" "$dashboard" || { echo "chart: the dashboard has no panel on $m"; exit 1; }
done
f=$("$helm" template fb "$chart" --set metrics.grafanaDashboard.enabled=true --set metrics.grafanaDashboard.sidecarLabel=dash \
  --set metrics.grafanaDashboard.sidecarLabelValue=yes | facts)
want "grafanaDashboard sidecar label" "$f" "label ConfigMap dash=yes"

f=$("$helm" template fb "$chart" --namespace fleetbench-system --set metrics.prometheusRule.enabled=true \
  --set metrics.prometheusRule.labels.release=kps --set metrics.prometheusRule.alertLabels.team=perf \
  --set metrics.prometheusRule.alertAnnotations.runbook_url=https://runbooks.example/fleetbench \
  --set metrics.prometheusRule.severity.runnerLost=critical | facts)
want prometheusRule "$f" "kind PrometheusRule fb-fleetbench fleetbench-system"
want prometheusRule "$f" "label PrometheusRule release=kps"
for alert in FleetbenchTestRunFailed FleetbenchRunnerLost FleetbenchTestRunStuck; do
  want prometheusRule "$f" "alert $alert expr=set"
done
! grep -q '^alert .* expr=empty' <<<"$f" || { echo "chart: an alert has an empty expression"; exit 1; }
[ "$(grep -c '^alert .* team=perf .*annotation:runbook_url' <<<"$f")" = 4 ] || { echo "chart: alertLabels/alertAnnotations not on every alert:"; echo "$f"; exit 1; }
want prometheusRule "$f" "alert FleetbenchRunnerLost expr=set severity=critical"

# The manager's RBAC by mode: leases only in the release's namespace, the kubelet summary
# (nodes/stats get, for the kubelet-stats ServiceAccount only, whose tokens alone the manager may
# request) unless targetMetrics is metrics-api, never nodes/proxy, the runners' pod proxy only
# with runnerAccess proxy (cluster-wide, or in the watched namespaces of a namespaced install).
f=$defaults
grep -q -- '- --runner-access=direct$' <<<"$all" || { echo "chart: runnerAccess direct by default"; exit 1; }
if grep -E '^rule ClusterRole .*resources=([^ ]*,)?(leases|pods/proxy|statefulsets)(,[^ ]*)? ' <<<"$f"; then
  echo "chart: the ClusterRoles grant leases, pods/proxy or statefulsets"; exit 1
fi
# Pods are created and deleted only as a target's charge (never scheduled, owned by its run); never updated.
if grep -E '^rule .*resources=([^ ]*,)?pods(,[^ ]*)? verbs=.*(update|patch)' <<<"$f"; then echo "chart: the manager may update pods"; exit 1; fi
want "leader election" "$f" "rule Role fb-fleetbench-leader-election fleetbench-system resources=leases verbs=create,get,update"
want "leader election" "$f" "binding RoleBinding fb-fleetbench-leader-election fleetbench-system role=Role/fb-fleetbench-leader-election"
want "kubelet summary" "$f" "kind ServiceAccount fb-fleetbench-kubelet-stats fleetbench-system"
want "kubelet summary" "$f" "rule ClusterRole fb-fleetbench-kubelet-stats  resources=nodes/stats verbs=get"
want "kubelet summary" "$f" "binding ClusterRoleBinding fb-fleetbench-kubelet-stats  role=ClusterRole/fb-fleetbench-kubelet-stats"
want "kubelet summary" "$f" "subject ClusterRoleBinding fb-fleetbench-kubelet-stats ServiceAccount/fb-fleetbench-kubelet-stats"
want "kubelet token" "$f" "rule Role fb-fleetbench-manager-kubelet-token fleetbench-system resources=serviceaccounts/token names=fb-fleetbench-kubelet-stats verbs=create"
want "kubelet token" "$f" "subject RoleBinding fb-fleetbench-manager-kubelet-token ServiceAccount/fb-fleetbench"
grep -q -- '- --kubelet-stats-identity=fleetbench-system/fb-fleetbench-kubelet-stats$' <<<"$all" || { echo "chart: no --kubelet-stats-identity"; exit 1; }
! grep -q 'nodes/proxy' <<<"$f" || { echo "chart: nodes/proxy granted (it opens the kubelet's exec)"; exit 1; }
[ "$(grep -c 'nodes/stats' <<<"$f")" = 1 ] || { echo "chart: nodes/stats granted more than once:"; grep nodes/stats <<<"$f"; exit 1; }
! grep -E '^subject .* ServiceAccount/fb-fleetbench-kubelet-stats$' <<<"$f" | grep -qv '^subject ClusterRoleBinding fb-fleetbench-kubelet-stats ' || { echo "chart: the kubelet-stats ServiceAccount is bound to more than its ClusterRole"; exit 1; }
f=$("$helm" template fb "$chart" --namespace fleetbench-system --set kubeletCA.configMap=kubelet-ca)
grep -q -- '- --kubelet-ca-file=/etc/fleetbench/kubelet-ca/ca.crt$' <<<"$f" && grep -q 'configMap: {name: kubelet-ca}' <<<"$f" || { echo "chart: kubeletCA.configMap mounts no CA"; exit 1; }
! "$helm" template fb "$chart" --set targetMetrics=nodes-proxy >/dev/null 2>&1 || { echo "chart: an unknown targetMetrics must fail"; exit 1; }
# The manager's Secret writes are confined by a ValidatingAdmissionPolicy naming its ServiceAccount.
f=$defaults
want "secrets policy" "$f" "kind ValidatingAdmissionPolicy fb-fleetbench-manager-secrets "
want "secrets policy" "$f" "kind ValidatingAdmissionPolicyBinding fb-fleetbench-manager-secrets "
want "secrets policy" "$f" "match fb-fleetbench-manager-secrets request.userInfo.username == 'system:serviceaccount:fleetbench-system:fb-fleetbench'"
want "secrets policy" "$f" "variable fb-fleetbench-manager-secrets sharedTarget=''"
f=$("$helm" template fb "$chart" --namespace fleetbench-system --set targetNamespace=fb-targets | facts)
want "secrets policy" "$f" "variable fb-fleetbench-manager-secrets sharedTarget='fb-targets'"
# The chart's policy is config/'s but for the names it substitutes.
diff <(grep -v '^#' "$root/config/rbac/secrets_policy.yaml" | sed -e 's/fleetbench-system:fleetbench-manager/NS:SA/' -e 's/^  \(policyN\|n\)ame: fleetbench-manager-secrets$/  \1ame: NAME/') \
  <(grep -vE '^#|^    \{\{- include "fleetbench.labels"|^  labels:$' "$chart/templates/secrets-policy.yaml" \
    | sed -e 's/{{ .Release.Namespace }}:{{ include "fleetbench.serviceAccountName" . }}/NS:SA/' -e 's/{{ .Values.targetNamespace }}//' \
      -e 's/^  \(policyN\|n\)ame: {{ include "fleetbench.fullname" . }}-manager-secrets$/  \1ame: NAME/') >/dev/null \
  || { echo "chart: templates/secrets-policy.yaml differs from config/rbac/secrets_policy.yaml: run make manifests"; exit 1; }
! grep -q 'kind Role fb-fleetbench-leader-election' <<<"$(facts < <("$helm" template fb "$chart" --set leaderElect=false))" || { echo "chart: leaderElect=false still renders leader election's Role"; exit 1; }
for ns_flags in "" "--set watchNamespaces={team-a} --set targetNamespace=fb-targets"; do
  # shellcheck disable=SC2086
  f=$("$helm" template fb "$chart" --namespace fleetbench-system --set targetMetrics=metrics-api $ns_flags | facts)
  ! grep -qE 'nodes/(proxy|stats)|serviceaccounts/token|kubelet-stats' <<<"$f" || { echo "chart: targetMetrics=metrics-api ($ns_flags) still grants node stats"; exit 1; }
done
f=$("$helm" template fb "$chart" --namespace fleetbench-system --set runnerAccess=proxy)
grep -q -- '- --runner-access=proxy$' <<<"$f" || { echo "chart: no --runner-access=proxy"; exit 1; }
f=$(facts <<<"$f")
want "runner proxy" "$f" "rule ClusterRole fb-fleetbench-manager-runner-proxy  resources=pods/proxy verbs=create,get,patch,update"
want "runner proxy" "$f" "binding ClusterRoleBinding fb-fleetbench-manager-runner-proxy  role=ClusterRole/fb-fleetbench-manager-runner-proxy"
f=$("$helm" template fb "$chart" --namespace fleetbench-system --set runnerAccess=proxy --set 'watchNamespaces={team-a,team-b}' --set targetNamespace=fb-targets | facts)
for ns in team-a team-b; do
  want "namespaced runner proxy" "$f" "binding RoleBinding fb-fleetbench-manager-runner-proxy $ns role=ClusterRole/fb-fleetbench-manager-runner-proxy"
done
! grep -q '^binding ClusterRoleBinding fb-fleetbench-manager-runner-proxy' <<<"$f" || { echo "chart: a namespaced install grants pods/proxy cluster-wide"; exit 1; }
! grep -q '^binding RoleBinding fb-fleetbench-manager-runner-proxy fb-targets' <<<"$f" || { echo "chart: pods/proxy in the target namespace (no runner there)"; exit 1; }

# A namespaced install: Roles in each watched namespace and the target namespace (and leader
# election in the release's), a ClusterRole that only reads, and never a namespace written.
f=$defaults
! grep '^kind Role ' <<<"$f" | grep -qvE '^kind Role fb-fleetbench-(leader-election|manager-kubelet-token) fleetbench-system$' || { echo "chart: Roles but leader election's and kubelet tokens' rendered without watchNamespaces"; exit 1; }
grep -qE '^rule ClusterRole fb-fleetbench-manager  resources=([^ ]*,)?namespaces(,[^ ]*)? verbs=.*create' <<<"$f" \
  || { echo "chart: by default the manager creates a namespace per TestRun"; exit 1; }
namespaced=$("$helm" template fb "$chart" --namespace fleetbench-system --set 'watchNamespaces={team-a,team-b,fb-targets}' --set targetNamespace=fb-targets)
if grep -nE "^ *- ['\"]?\*['\"]?\$" <<<"$namespaced"; then echo "chart: a namespaced rule holds a wildcard"; exit 1; fi
grep -q -- '- --watch-namespaces=team-a,team-b,fb-targets$' <<<"$namespaced" || { echo "chart: no --watch-namespaces flag"; exit 1; }
grep -q -- '- --target-namespace=fb-targets$' <<<"$namespaced" || { echo "chart: no --target-namespace flag"; exit 1; }
f=$(facts <<<"$namespaced")
for ns in team-a team-b fb-targets; do
  want "namespaced Role" "$f" "kind Role fb-fleetbench-manager $ns"
  want "namespaced RoleBinding" "$f" "kind RoleBinding fb-fleetbench-manager $ns"
done
want "leader election Role" "$f" "kind Role fb-fleetbench-leader-election fleetbench-system"
[ "$(grep -c '^kind Role ' <<<"$f")" = 5 ] || { echo "chart: want 5 Roles (3 namespaces, leader election, kubelet tokens):"; grep '^kind Role' <<<"$f"; exit 1; }
want "namespaced Role" "$f" "rule Role fb-fleetbench-manager fb-targets resources=deployments verbs=create,delete,get,list,patch,watch"
want "namespaced ClusterRole" "$f" "rule ClusterRole fb-fleetbench-manager  resources=profiles verbs=list,watch"
if grep -E '^rule .* resources=([^ ]*,)?namespaces(,[^ ]*)? verbs=.*(create|delete|update|patch)' <<<"$f"; then
  echo "chart: a namespaced install may not write namespaces"; exit 1
fi
# Reviews of scrapers' tokens (metrics behind authn/authz) create nothing that stays.
if grep -E '^rule ClusterRole fb-fleetbench-manager .* verbs=.*(create|delete|update|patch|deletecollection)' <<<"$f" | grep -vE 'resources=(tokenreviews|subjectaccessreviews) verbs=create$'; then
  echo "chart: a namespaced install's ClusterRole may only read"; exit 1
fi
! "$helm" template fb "$chart" --set 'watchNamespaces={team-a}' >/dev/null 2>&1 || { echo "chart: watchNamespaces without targetNamespace must fail"; exit 1; }
f=$("$helm" template fb "$chart" --namespace fleetbench-system --set targetNamespace=fb-targets)
grep -q -- '- --target-namespace=fb-targets$' <<<"$f" && ! grep -q -- '--watch-namespaces' <<<"$f" || { echo "chart: targetNamespace alone"; exit 1; }
# The admin's caps per namespace: safe, non-zero defaults; 0 is rendered too (no cap).
grep -q -- '- --max-targets-per-namespace=8$' <<<"$all" && grep -q -- '- --max-runners-per-namespace=1000$' <<<"$all" \
  || { echo "chart: the default caps on targets and runners per namespace are not rendered"; exit 1; }
f=$("$helm" template fb "$chart" --namespace fleetbench-system --set maxTargetsPerNamespace=3 --set maxRunnersPerNamespace=0)
grep -q -- '- --max-targets-per-namespace=3$' <<<"$f" && grep -q -- '- --max-runners-per-namespace=0$' <<<"$f" \
  || { echo "chart: --max-targets-per-namespace or --max-runners-per-namespace not as set"; exit 1; }
# Mandatory queueing: a flag only when set.
! grep -q -- '--require-queue' <<<"$all" || { echo "chart: --require-queue rendered by default"; exit 1; }
f=$("$helm" template fb "$chart" --namespace fleetbench-system --set requireQueue=true)
grep -q -- '- --require-queue$' <<<"$f" || { echo "chart: no --require-queue flag"; exit 1; }

# What a tenant's target may have: its namespace's labels only as named; egress and the kept
# time given alike to the manager and to the admission policy's ConfigMap, which the policy's
# binding names; built-in Profiles offered as offeredTo says, and refused without an answer.
grep -q -- '- --egress-allow-list=$' <<<"$all" || { echo "chart: by default no egress is allowed"; exit 1; }
grep -q -- '- --max-kept-target=24h$' <<<"$all" || { echo "chart: a kept target is kept 24h at most by default"; exit 1; }
! grep -q -- '--propagate-namespace-labels' <<<"$all" || { echo "chart: --propagate-namespace-labels rendered by default"; exit 1; }
for kind in ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding ConfigMap; do
  want "admission policy" "$defaults" "kind $kind fb-fleetbench-targets "
done
grep -A3 '^  paramRef:$' <<<"$all" | grep -q 'namespace: fleetbench-system' || { echo "chart: the policy binding's paramRef is not in the release's namespace"; exit 1; }
grep -q '^  egressAllowList: ""$' <<<"$all" && grep -q '^  maxKeptTarget: "24h"$' <<<"$all" || { echo "chart: the policy's parameters by default"; exit 1; }
f=$("$helm" template fb "$chart" --namespace fleetbench-system --set 'egressAllowList={10.20.0.0/16,192.168.1.0/24}' \
  --set maxKeptTarget=2h --set 'propagateNamespaceLabels={team,cost-center}')
for line in '- --egress-allow-list=10.20.0.0/16,192.168.1.0/24' '- --max-kept-target=2h' '- --propagate-namespace-labels=team,cost-center' \
  'egressAllowList: "10.20.0.0/16,192.168.1.0/24"' 'maxKeptTarget: "2h"'; do
  grep -qF -- "$line" <<<"$f" || { echo "chart: no \"$line\""; exit 1; }
done
! grep -q 'matchResources:' <<<"$all" || { echo "chart: the policy binding is scoped without watchNamespaces"; exit 1; }
grep -qF -- '- {key: kubernetes.io/metadata.name, operator: In, values: ["team-a","team-b","fb-targets"]}' <<<"$namespaced" \
  || { echo "chart: a namespaced install's policy binding does not check only its watched namespaces"; exit 1; }
f=$("$helm" template fb "$chart" --namespace fleetbench-system --set admissionPolicy.install=false)
! grep -qE 'name: fb-fleetbench-targets' <<<"$f" || { echo "chart: admissionPolicy.install=false still renders the targets policy"; exit 1; }
[ "$(grep -c '^      fleetbench.dev/large-profiles: "true"$' <<<"$all")" = 6 ] && [ "$(grep -A1 '^  namespaceSelector:$' <<<"$all" | grep -c '^    {}$')" = 2 ] \
  || { echo "chart: by default c1 and c2 are offered everywhere, the other six to labelled namespaces"; exit 1; }
! "$helm" template fb "$chart" --set 'builtinProfiles.offeredTo.*=null' >/dev/null 2>&1 || { echo "chart: a built-in Profile offeredTo says nothing of must fail"; exit 1; }

# The chart's CRDs are config/'s CRDs: same schema, byte for byte after the template lines.
for crd in "$root"/config/crd/bases/*.yaml; do
  diff <(grep -v '^---$' "$crd") <(grep -vE '^(#|\{\{)|helm.sh/resource-policy' "$chart/templates/crds/$(basename "$crd")") >/dev/null \
    || { echo "chart: templates/crds/$(basename "$crd") differs from config/: run make manifests"; exit 1; }
done
echo "chart: the toggles, the namespaced install, the monitoring extras and the CRD copies check out"
