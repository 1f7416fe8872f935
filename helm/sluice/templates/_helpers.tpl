{{/* Names and labels. */}}
{{- define "sluice.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "sluice.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "sluice.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sluice.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "sluice.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "sluice.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "sluice.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "sluice.settingsName" -}}{{ include "sluice.fullname" . }}-settings{{- end }}
{{- define "sluice.quotasName" -}}{{ default (printf "%s-quotas" (include "sluice.fullname" .)) .Values.quotas.existingConfigMap }}{{- end }}

{{/*
The environment variable of every settings key (src/config/schema.ts). A test keeps this list
equal to the schema; a key in .Values.config that is not here stops the render.
*/}}
{{- define "sluice.envNames" -}}
{{- $names := dict }}
{{- $_ := set $names "kafka.brokers" "SLUICE_KAFKA_BROKERS" }}
{{- $_ := set $names "kafka.clientId" "SLUICE_KAFKA_CLIENT_ID" }}
{{- $_ := set $names "kafka.ssl" "SLUICE_KAFKA_SSL" }}
{{- $_ := set $names "kafka.sslCa" "SLUICE_KAFKA_SSL_CA" }}
{{- $_ := set $names "kafka.sslCert" "SLUICE_KAFKA_SSL_CERT" }}
{{- $_ := set $names "kafka.sslKey" "SLUICE_KAFKA_SSL_KEY" }}
{{- $_ := set $names "kafka.sasl.mechanism" "SLUICE_KAFKA_SASL_MECHANISM" }}
{{- $_ := set $names "kafka.sasl.username" "SLUICE_KAFKA_SASL_USERNAME" }}
{{- $_ := set $names "kafka.sasl.password" "SLUICE_KAFKA_SASL_PASSWORD" }}
{{- $_ := set $names "kafka.connectionTimeoutMs" "SLUICE_KAFKA_CONNECTION_TIMEOUT_MS" }}
{{- $_ := set $names "kafka.stuckAfterMs" "SLUICE_KAFKA_STUCK_AFTER_MS" }}
{{- $_ := set $names "topics.ingress" "SLUICE_INGRESS_TOPIC" }}
{{- $_ := set $names "topics.downstream" "SLUICE_DOWNSTREAM_TOPIC" }}
{{- $_ := set $names "topics.retry" "SLUICE_RETRY_TOPIC" }}
{{- $_ := set $names "topics.deadLetter" "SLUICE_DEAD_LETTER_TOPIC" }}
{{- $_ := set $names "topics.create" "SLUICE_TOPICS_CREATE" }}
{{- $_ := set $names "group" "SLUICE_GROUP_ID" }}
{{- $_ := set $names "retry.group" "SLUICE_RETRY_GROUP_ID" }}
{{- $_ := set $names "retry.tiers" "SLUICE_RETRY_TIERS" }}
{{- $_ := set $names "retry.maxAttempts" "SLUICE_RETRY_MAX_ATTEMPTS" }}
{{- $_ := set $names "retry.maxAge" "SLUICE_RETRY_MAX_AGE" }}
{{- $_ := set $names "hold.maxMs" "SLUICE_HOLD_MAX_MS" }}
{{- $_ := set $names "hold.maxMessages" "SLUICE_HOLD_MAX_MESSAGES" }}
{{- $_ := set $names "hold.maxBytes" "SLUICE_HOLD_MAX_BYTES" }}
{{- $_ := set $names "commit.intervalMs" "SLUICE_COMMIT_INTERVAL_MS" }}
{{- $_ := set $names "identity.source" "SLUICE_IDENTITY_SOURCE" }}
{{- $_ := set $names "identity.header" "SLUICE_IDENTITY_HEADER" }}
{{- $_ := set $names "identity.fallback" "SLUICE_IDENTITY_FALLBACK" }}
{{- $_ := set $names "redis.url" "SLUICE_REDIS_URL" }}
{{- $_ := set $names "redis.clusterNodes" "SLUICE_REDIS_CLUSTER_NODES" }}
{{- $_ := set $names "redis.password" "SLUICE_REDIS_PASSWORD" }}
{{- $_ := set $names "redis.tls" "SLUICE_REDIS_TLS" }}
{{- $_ := set $names "redis.keyPrefix" "SLUICE_REDIS_KEY_PREFIX" }}
{{- $_ := set $names "redis.timeoutMs" "SLUICE_REDIS_TIMEOUT_MS" }}
{{- $_ := set $names "quotas.file" "SLUICE_QUOTAS_FILE" }}
{{- $_ := set $names "limiter.onStoreError" "SLUICE_ON_STORE_ERROR" }}
{{- $_ := set $names "mode" "SLUICE_MODE" }}
{{- $_ := set $names "http.host" "SLUICE_HTTP_HOST" }}
{{- $_ := set $names "http.port" "SLUICE_HTTP_PORT" }}
{{- $_ := set $names "http.adminHost" "SLUICE_HTTP_ADMIN_HOST" }}
{{- $_ := set $names "http.adminPort" "SLUICE_HTTP_ADMIN_PORT" }}
{{- $_ := set $names "http.adminToken" "SLUICE_HTTP_ADMIN_TOKEN" }}
{{- $_ := set $names "usage.resolutions" "SLUICE_USAGE_RESOLUTIONS" }}
{{- $_ := set $names "log.level" "SLUICE_LOG_LEVEL" }}
{{- toYaml $names }}
{{- end }}

{{/* Flattens .node (nested settings) into .out as "dotted.key" => value; secret references stay whole. */}}
{{- define "sluice.flatten" -}}
{{- $prefix := .prefix }}
{{- $out := .out }}
{{- range $k, $v := .node }}
{{- $key := ternary $k (printf "%s.%s" $prefix $k) (eq $prefix "") }}
{{- if and (kindIs "map" $v) (not (hasKey $v "secretName")) }}
{{- include "sluice.flatten" (dict "prefix" $key "node" $v "out" $out) }}
{{- else }}
{{- $_ := set $out $key $v }}
{{- end }}
{{- end }}
{{- end }}

{{/* The settings as a dict: dotted key => value. */}}
{{- define "sluice.flatConfig" -}}
{{- $flat := dict }}
{{- include "sluice.flatten" (dict "prefix" "" "node" .Values.config "out" $flat) }}
{{- toYaml $flat }}
{{- end }}

{{/* ConfigMap data: SLUICE_* => value, for every plain, non-empty setting. */}}
{{- define "sluice.settingsData" -}}
{{- $names := include "sluice.envNames" . | fromYaml }}
{{- $flat := include "sluice.flatConfig" . | fromYaml }}
{{- range $key := keys $flat | sortAlpha }}
{{- $value := get $flat $key }}
{{- $env := get $names $key }}
{{- if not $env }}
{{- fail (printf "config.%s is not a sluice setting" $key) }}
{{- end }}
{{- $text := toString $value }}
{{- if and (kindIs "float64" $value) (eq $value (float64 (int64 $value))) }}
{{- $text = toString (int64 $value) }}
{{- end }}
{{- if and (not (kindIs "map" $value)) (ne $text "") }}
{{ $env }}: {{ $text | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* env entries of the secret settings that name a Secret. */}}
{{- define "sluice.secretEnv" -}}
{{- $names := include "sluice.envNames" . | fromYaml }}
{{- $flat := include "sluice.flatConfig" . | fromYaml }}
{{- range $key := keys $flat | sortAlpha }}
{{- $value := get $flat $key }}
{{- if and (kindIs "map" $value) $value.secretName }}
- name: {{ get $names $key }}
  valueFrom:
    secretKeyRef:
      name: {{ $value.secretName }}
      key: {{ $value.secretKey }}
{{- end }}
{{- end }}
{{- end }}

{{/* The quotas directory mount path (the directory of config.quotas.file). */}}
{{- define "sluice.quotasDir" -}}{{ dir .Values.config.quotas.file }}{{- end }}

{{/* The sluice container (standalone Deployment; sidecar snippets follow the same shape). */}}
{{- define "sluice.container" -}}
name: sluice
image: {{ include "sluice.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
args: ["run"]
envFrom:
  - configMapRef:
      name: {{ include "sluice.settingsName" . }}
{{- $env := include "sluice.secretEnv" . | trim }}
{{- if or $env .Values.extraEnv }}
env:
{{- if $env }}
{{ $env | indent 2 }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . | indent 2 }}
{{- end }}
{{- end }}
ports:
  - name: http
    containerPort: {{ .Values.config.http.port }}
    protocol: TCP
livenessProbe:
  httpGet:
    path: {{ .Values.probes.liveness.path }}
    port: http
  periodSeconds: {{ .Values.probes.liveness.periodSeconds }}
  timeoutSeconds: {{ .Values.probes.liveness.timeoutSeconds }}
  failureThreshold: {{ .Values.probes.liveness.failureThreshold }}
readinessProbe:
  httpGet:
    path: {{ .Values.probes.readiness.path }}
    port: http
  periodSeconds: {{ .Values.probes.readiness.periodSeconds }}
  timeoutSeconds: {{ .Values.probes.readiness.timeoutSeconds }}
  failureThreshold: {{ .Values.probes.readiness.failureThreshold }}
resources:
{{ toYaml .Values.resources | indent 2 }}
securityContext:
{{ toYaml .Values.securityContext | indent 2 }}
volumeMounts:
  - name: quotas
    mountPath: {{ include "sluice.quotasDir" . }}
    readOnly: true
  - name: tmp
    mountPath: /tmp
{{- with .Values.extraVolumeMounts }}
{{ toYaml . | indent 2 }}
{{- end }}
{{- end }}

{{/* Pod volumes for the container above. */}}
{{- define "sluice.volumes" -}}
- name: quotas
  configMap:
    name: {{ include "sluice.quotasName" . }}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}
