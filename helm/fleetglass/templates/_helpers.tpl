{{- define "fleetglass.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "fleetglass.labels" -}}
app.kubernetes.io/name: fleetglass
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{- define "fleetglass.selector" -}}
app.kubernetes.io/name: fleetglass
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* repository:tag, or repository:tag@digest when a digest is pinned; never "latest". */}}
{{- define "fleetglass.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if eq $tag "latest" -}}{{- fail "image.tag must be a pinned version, not latest" -}}{{- end -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "fleetglass.serviceAccountName" -}}
{{- $reader := index .Values "fleetglass-reader" -}}
{{- default .Release.Name $reader.serviceAccount.name -}}
{{- end -}}

{{/* The pod spec shared by every role; pass (dict "root" $ "role" "web|collector|all"). */}}
{{- define "fleetglass.pod" -}}
{{- $root := .root -}}
metadata:
  labels:
    {{- include "fleetglass.selector" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .role }}
    {{- with $root.Values.podLabels }}{{ toYaml . | nindent 4 }}{{ end }}
  annotations:
    checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
    {{- with $root.Values.podAnnotations }}{{ toYaml . | nindent 4 }}{{ end }}
spec:
  serviceAccountName: {{ include "fleetglass.serviceAccountName" $root }}
  automountServiceAccountToken: {{ index $root.Values "fleetglass-reader" "enabled" }}
  {{- with $root.Values.imagePullSecrets }}
  imagePullSecrets: {{ toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    fsGroup: 65532
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: fleetglass
      image: {{ include "fleetglass.image" $root }}
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      args:
        - serve
        - --config=/etc/fleetglass/config.yaml
        - --listen=0.0.0.0:8080
        {{- if ne .role "all" }}
        - --role={{ .role }}
        {{- end }}
        {{- if $root.Values.logJson }}
        - --log-json
        {{- end }}
      env:
        - name: DATABASE_URL
          valueFrom:
            secretKeyRef:
              name: {{ $root.Values.database.existingSecret }}
              key: {{ $root.Values.database.key }}
        {{- if $root.Values.slack.existingSecret }}
        - name: SLACK_WEBHOOK_URL
          valueFrom:
            secretKeyRef:
              name: {{ $root.Values.slack.existingSecret }}
              key: {{ $root.Values.slack.key }}
        {{- end }}
        {{- if $root.Values.apiTokens.existingSecret }}
        - name: FLEETGLASS_API_TOKENS_FILE
          value: /etc/fleetglass/tokens/{{ $root.Values.apiTokens.key }}
        {{- end }}
      ports:
        - name: http
          containerPort: 8080
          protocol: TCP
      livenessProbe:
        httpGet: {path: /healthz, port: http}
        periodSeconds: 10
        failureThreshold: 6
      readinessProbe:
        httpGet: {path: /readyz, port: http}
        periodSeconds: 5
        timeoutSeconds: 2
        failureThreshold: 3
      resources: {{ toYaml $root.Values.resources | nindent 8 }}
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        privileged: false
        capabilities:
          drop: ["ALL"]
      volumeMounts:
        - name: config
          mountPath: /etc/fleetglass/config.yaml
          subPath: config.yaml
          readOnly: true
        - name: tmp
          mountPath: /tmp
        {{- if $root.Values.kubeconfigs.existingSecret }}
        - name: kubeconfigs
          mountPath: {{ $root.Values.kubeconfigs.mountPath }}
          readOnly: true
        {{- end }}
        {{- if $root.Values.apiTokens.existingSecret }}
        - name: tokens
          mountPath: /etc/fleetglass/tokens
          readOnly: true
        {{- end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "fleetglass.fullname" $root }}
    - name: tmp
      emptyDir: {}
    {{- if $root.Values.kubeconfigs.existingSecret }}
    - name: kubeconfigs
      secret:
        secretName: {{ $root.Values.kubeconfigs.existingSecret }}
    {{- end }}
    {{- if $root.Values.apiTokens.existingSecret }}
    - name: tokens
      secret:
        secretName: {{ $root.Values.apiTokens.existingSecret }}
    {{- end }}
  {{- with $root.Values.nodeSelector }}
  nodeSelector: {{ toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.tolerations }}
  tolerations: {{ toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.affinity }}
  affinity: {{ toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
