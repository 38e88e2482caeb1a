{{- define "fleetglass-reader.name" -}}
{{- default .Release.Name .Values.serviceAccount.name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "fleetglass-reader.labels" -}}
app.kubernetes.io/name: fleetglass-reader
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: fleetglass
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
