{{- define "fleetbench.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "fleetbench.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "fleetbench.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{- define "fleetbench.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "fleetbench.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The namespaces a namespaced install grants the manager's Role in: the watched ones and the
target namespace, comma-separated. */}}
{{- define "fleetbench.roleNamespaces" -}}
{{- if not .Values.targetNamespace -}}
{{- fail "watchNamespaces needs targetNamespace: a namespaced install may not create a namespace per TestRun, so name the one (made by an admin) every target goes into" -}}
{{- end -}}
{{- concat .Values.watchNamespaces (list .Values.targetNamespace) | uniq | join "," -}}
{{- end -}}

{{/* The Secret holding the record key (recordKey). */}}
{{- define "fleetbench.recordKeySecret" -}}
{{- .Values.recordKey.existingSecret | default (printf "%s-record-key" (include "fleetbench.fullname" .)) -}}
{{- end -}}
