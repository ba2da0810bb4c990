{{/* The objects' name: RELEASE-sandboxd, or the release's name when it holds "sandboxd". */}}
{{- define "sandboxd.fullname" -}}
{{- if contains "sandboxd" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-sandboxd" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "sandboxd.labels" -}}
app.kubernetes.io/name: sandboxd
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "sandboxd.selectorLabels" -}}
app.kubernetes.io/name: sandboxd
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The namespace of the sessions' pods. */}}
{{- define "sandboxd.sandboxNamespace" -}}
{{- default .Release.Namespace .Values.sandboxes.namespace -}}
{{- end -}}

{{- define "sandboxd.tokenSecret" -}}
{{- default (include "sandboxd.fullname" .) .Values.token.existingSecret -}}
{{- end -}}

{{/* The [backend] table the chart writes after the operator's config. */}}
{{- define "sandboxd.backendToml" -}}
[backend]
kind = "kubernetes"
namespace = {{ include "sandboxd.sandboxNamespace" . | quote }}
agent_image = {{ .Values.agentImage | quote }}
volume_access_mode = {{ .Values.sandboxes.volumeAccessMode | quote }}
{{- with .Values.sandboxes.volumeStorageClass }}
volume_storage_class = {{ . | quote }}
{{- end }}
{{- with .Values.sandboxes.nodeSelector }}
[backend.node_selector]
{{- range $key, $value := . }}
{{ $key | quote }} = {{ $value | quote }}
{{- end }}
{{- end }}
{{- with .Values.sandboxes.runtimeClass }}
[backend.runtime_class]
{{- range $alias, $class := . }}
{{ $alias | quote }} = {{ $class | quote }}
{{- end }}
{{- end }}
{{- end -}}
