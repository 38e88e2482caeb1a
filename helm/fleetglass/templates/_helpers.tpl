{{- define "fleetglass.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "fleetglass.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "fleetglass.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "fleetglass.labels" -}}
{{ include "fleetglass.selector" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "fleetglass.selector" -}}
app.kubernetes.io/name: {{ include "fleetglass.name" . }}
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

{{/*
The pods' ServiceAccount. With the fleetglass-reader subchart enabled its read-only RBAC binds
the name it computes (fleetglass-reader.serviceAccount.name, default the release name), so
that is the name; a different serviceAccount.name would leave the pods without the RBAC.
Without the subchart: serviceAccount.name, or the fullname when this chart creates it, or the
namespace's default.
*/}}
{{- define "fleetglass.serviceAccountName" -}}
{{- $reader := index .Values "fleetglass-reader" -}}
{{- if $reader.enabled -}}
{{- $bound := default .Release.Name $reader.serviceAccount.name | trunc 63 | trimSuffix "-" -}}
{{- if and .Values.serviceAccount.name (ne .Values.serviceAccount.name $bound) -}}
{{- fail (printf "serviceAccount.name %q differs from fleetglass-reader.serviceAccount.name (%q), which the read-only RBAC binds: set both" .Values.serviceAccount.name $bound) -}}
{{- end -}}
{{- $bound -}}
{{- else if .Values.serviceAccount.name -}}
{{- .Values.serviceAccount.name -}}
{{- else if .Values.serviceAccount.create -}}
{{- include "fleetglass.fullname" . -}}
{{- else -}}
default
{{- end -}}
{{- end -}}

{{/* Authentication in the config: tokens mode when the chart mounts a tokens file. */}}
{{- define "fleetglass.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- if .Values.apiTokens.existingSecret -}}
{{- $web := default dict $config.web -}}
{{- $auth := default dict $web.auth -}}
{{- if and $auth.mode (ne $auth.mode "tokens") (ne $auth.mode "proxy") (ne $auth.mode "oidc") -}}
{{- fail (printf "apiTokens.existingSecret is set but config.web.auth.mode is %q: tokens need mode tokens (or proxy, or oidc)" $auth.mode) -}}
{{- end -}}
{{- $_ := set $auth "mode" (default "tokens" $auth.mode) -}}
{{- $_ := set $web "auth" $auth -}}
{{- $_ := set $config "web" $web -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/* The pod spec shared by every role; pass (dict "root" $ "role" "web|collector|all"). */}}
{{- define "fleetglass.pod" -}}
{{- $root := .root -}}
{{- $role := .role -}}
{{- $values := $root.Values -}}
metadata:
  labels:
    {{- include "fleetglass.selector" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .role }}
    {{- with $values.commonLabels }}{{ toYaml . | nindent 4 }}{{ end }}
    {{- with $values.podLabels }}{{ toYaml . | nindent 4 }}{{ end }}
  annotations:
    checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
    {{- with $values.podAnnotations }}{{ toYaml . | nindent 4 }}{{ end }}
spec:
  serviceAccountName: {{ include "fleetglass.serviceAccountName" $root }}
  automountServiceAccountToken: {{ $values.serviceAccount.automountToken }}
  {{- with $values.imagePullSecrets }}
  imagePullSecrets: {{ toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  {{- with $values.podSecurityContext }}
  securityContext: {{ toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: fleetglass
      image: {{ include "fleetglass.image" $root }}
      imagePullPolicy: {{ $values.image.pullPolicy }}
      args:
        - serve
        - --config=/etc/fleetglass/config.yaml
        - --listen=0.0.0.0:8080
        {{- if ne .role "all" }}
        - --role={{ .role }}
        {{- end }}
        {{- if $values.logJson }}
        - --log-json
        {{- end }}
      env:
        - name: DATABASE_URL
          valueFrom:
            secretKeyRef:
              name: {{ $values.database.existingSecret }}
              key: {{ $values.database.key }}
        {{- if $values.slack.existingSecret }}
        - name: SLACK_WEBHOOK_URL
          valueFrom:
            secretKeyRef:
              name: {{ $values.slack.existingSecret }}
              key: {{ $values.slack.key }}
        {{- end }}
        {{- if $values.oidcClientSecret.existingSecret }}
        - name: FLEETGLASS_OIDC_CLIENT_SECRET
          valueFrom:
            secretKeyRef:
              name: {{ $values.oidcClientSecret.existingSecret }}
              key: {{ $values.oidcClientSecret.key }}
        {{- end }}
        {{- if $values.apiTokens.existingSecret }}
        - name: FLEETGLASS_API_TOKENS_FILE
          value: /etc/fleetglass/tokens/{{ $values.apiTokens.key }}
        {{- end }}
        {{- with $values.extraEnv }}{{ toYaml . | nindent 8 }}{{ end }}
      {{- with $values.extraEnvFrom }}
      envFrom: {{ toYaml . | nindent 8 }}
      {{- end }}
      ports:
        - name: http
          containerPort: 8080
          protocol: TCP
      # Migrations run before the server listens: the startup probe gives them time, and
      # liveness only starts once it succeeded.
      startupProbe:
        httpGet: {path: /healthz, port: http}
        periodSeconds: 5
        failureThreshold: {{ $values.startupProbe.failureThreshold }}
      livenessProbe:
        httpGet: {path: /healthz, port: http}
        periodSeconds: 10
        failureThreshold: 6
      readinessProbe:
        httpGet: {path: /readyz, port: http}
        periodSeconds: 5
        timeoutSeconds: 2
        failureThreshold: 3
      # A config error is the last line fleetglass prints: it becomes the crash message.
      terminationMessagePolicy: FallbackToLogsOnError
      resources: {{ toYaml $values.resources | nindent 8 }}
      {{- with $values.securityContext }}
      securityContext: {{ toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: config
          mountPath: /etc/fleetglass/config.yaml
          subPath: config.yaml
          readOnly: true
        - name: tmp
          mountPath: /tmp
        {{- if or $values.kubeconfigs.existingSecret $values.kubeconfigs.existingSecrets }}
        - name: kubeconfigs
          mountPath: {{ $values.kubeconfigs.mountPath }}
          readOnly: true
        {{- end }}
        {{- if $values.apiTokens.existingSecret }}
        - name: tokens
          mountPath: /etc/fleetglass/tokens
          readOnly: true
        {{- end }}
        {{- with $values.extraVolumeMounts }}{{ toYaml . | nindent 8 }}{{ end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "fleetglass.fullname" $root }}
    - name: tmp
      emptyDir: {}
    {{- if or $values.kubeconfigs.existingSecret $values.kubeconfigs.existingSecrets }}
    - name: kubeconfigs
      projected:
        sources:
          {{- with $values.kubeconfigs.existingSecret }}
          - secret: {name: {{ . }}}
          {{- end }}
          {{- range $values.kubeconfigs.existingSecrets }}
          - secret: {name: {{ . }}}
          {{- end }}
    {{- end }}
    {{- if $values.apiTokens.existingSecret }}
    - name: tokens
      secret:
        secretName: {{ $values.apiTokens.existingSecret }}
    {{- end }}
    {{- with $values.extraVolumes }}{{ toYaml . | nindent 4 }}{{ end }}
  {{- with $values.nodeSelector }}
  nodeSelector: {{ toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.tolerations }}
  tolerations: {{ toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.affinity }}
  affinity: {{ toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- range . }}
    {{- $constraint := deepCopy . }}
    {{- if not $constraint.labelSelector }}
    {{- $own := merge (fromYaml (include "fleetglass.selector" $root)) (dict "app.kubernetes.io/component" $role) }}
    {{- $_ := set $constraint "labelSelector" (dict "matchLabels" $own) }}
    {{- end }}
    - {{ toYaml $constraint | nindent 6 | trim }}
    {{- end }}
  {{- end }}
{{- end -}}

{{/* A duration written 90s, 10m or 2h, in seconds (for PromQL comparisons). */}}
{{- define "fleetglass.seconds" -}}
{{- $text := toString . -}}
{{- $number := regexFind "^[0-9]+" $text | int -}}
{{- $unit := trimPrefix (toString $number) $text -}}
{{- $factor := get (dict "s" 1 "m" 60 "h" 3600) $unit -}}
{{- if not $factor -}}{{- fail (printf "%q: write a duration like 90s, 10m or 2h" $text) -}}{{- end -}}
{{- mul $number $factor -}}
{{- end -}}
