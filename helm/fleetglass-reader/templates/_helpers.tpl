{{/* The ServiceAccount's name (and the RBAC subject): serviceAccount.name, else the release name. */}}
{{- define "fleetglass-reader.name" -}}
{{- default .Release.Name .Values.serviceAccount.name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{/* ClusterRoles are cluster-wide: the namespace in the name keeps two releases apart. */}}
{{- define "fleetglass-reader.clusterRoleName" -}}
{{- printf "fleetglass-reader:%s:%s" .Release.Namespace (include "fleetglass-reader.name" .) -}}
{{- end -}}
{{- define "fleetglass-reader.labels" -}}
app.kubernetes.io/name: fleetglass-reader
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: fleetglass
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
