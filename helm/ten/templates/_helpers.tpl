{{/* Names and labels. */}}
{{- define "ten.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ten.fullname" -}}
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

{{/* The server's pods; the migration Job's pod has component: migration, so that neither the
Service, the PodDisruptionBudget nor the topology spread counts it. */}}
{{- define "ten.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ten.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end }}

{{- define "ten.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "ten.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "ten.labels" -}}
{{ include "ten.commonLabels" . }}
app.kubernetes.io/component: server
{{- end }}

{{- define "ten.migrationLabels" -}}
{{ include "ten.commonLabels" . }}
app.kubernetes.io/component: migration
{{- end }}

{{/* The queues' workers' pods (jobWorkers.enabled): component jobs, apart from the server's. */}}
{{- define "ten.jobsSelectorLabels" -}}
app.kubernetes.io/name: {{ include "ten.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: jobs
{{- end }}

{{- define "ten.jobsLabels" -}}
{{ include "ten.commonLabels" . }}
app.kubernetes.io/component: jobs
{{- end }}

{{- define "ten.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ten.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ten.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* What is configured. */}}
{{- define "ten.hasRedis" -}}
{{- if or .Values.redis.url .Values.redis.existingSecret .Values.redis.sentinels }}true{{ end }}
{{- end }}

{{- define "ten.hasDatabase" -}}
{{- if or .Values.database.url .Values.database.existingSecret .Values.database.host }}true{{ end }}
{{- end }}

{{/* The chart's Secret holds what is given in values, not in an existing secret. */}}
{{- define "ten.secretData" -}}
{{- if and .Values.redis.url (not .Values.redis.existingSecret) }}
redis-url: {{ .Values.redis.url | b64enc | quote }}
{{- end }}
{{- include "ten.databaseSecretData" . }}
{{- include "ten.authSecretData" . }}
{{- end }}

{{/* The identity credentials given as values (auth.*), unless auth.existingSecret holds them. */}}
{{- define "ten.authSecretData" -}}
{{- $auth := .Values.auth }}
{{- if not $auth.existingSecret }}
{{- with $auth.apiKeys }}
api-keys: {{ join "," . | b64enc | quote }}
{{- end }}
{{- with $auth.jwtSecret }}
jwt-secret: {{ . | b64enc | quote }}
{{- end }}
{{- with $auth.jwtPublicKey }}
jwt-public-key: {{ . | b64enc | quote }}
{{- end }}
{{- with $auth.privacyKey }}
privacy-key: {{ . | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Env entries of the identity credentials: each from the chart's Secret or from yours. */}}
{{- define "ten.authEnv" -}}
{{- $auth := .Values.auth }}
{{- $vars := dict "TEN_API_KEYS" "apiKeys" "TEN_JWT_SECRET" "jwtSecret" "TEN_JWT_PUBLIC_KEY" "jwtPublicKey" "TEN_PRIVACY_KEY" "privacyKey" }}
{{- $chartKeys := dict "apiKeys" "api-keys" "jwtSecret" "jwt-secret" "jwtPublicKey" "jwt-public-key" "privacyKey" "privacy-key" }}
{{- range $var := list "TEN_API_KEYS" "TEN_JWT_SECRET" "TEN_JWT_PUBLIC_KEY" "TEN_PRIVACY_KEY" }}
{{- $value := get $vars $var }}
{{- if $auth.existingSecret }}
{{- with get $auth.existingSecretKeys $value }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef: {name: {{ $auth.existingSecret | quote }}, key: {{ . | quote }}}
{{- end }}
{{- else if get $auth $value }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef: {name: {{ include "ten.fullname" $ | quote }}, key: {{ get $chartKeys $value | quote }}}
{{- end }}
{{- end }}
{{- end }}

{{/* Whether a JWT key reaches the pods (then the issuer and audience are required). */}}
{{- define "ten.hasJwtKey" -}}
{{- $auth := .Values.auth }}
{{- if $auth.existingSecret }}
{{- if or $auth.jwksUrl $auth.existingSecretKeys.jwtSecret $auth.existingSecretKeys.jwtPublicKey }}true{{ end }}
{{- else if or $auth.jwksUrl $auth.jwtSecret $auth.jwtPublicKey }}true{{ end }}
{{- end }}

{{- define "ten.databaseSecretData" -}}
{{- if not .Values.database.existingSecret }}
{{- if .Values.database.url }}
database-url: {{ .Values.database.url | b64enc | quote }}
{{- else if and .Values.database.host .Values.database.password (not .Values.database.passwordSecret.name) }}
database-password: {{ .Values.database.password | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Env entries for the database URL; $secret is the chart Secret holding values-given data. */}}
{{- define "ten.databaseEnv" -}}
{{- $ctx := index . 0 }}{{- $secret := index . 1 }}
{{- $db := $ctx.Values.database }}
{{- if $db.existingSecret }}
- name: TEN_DATABASE_URL
  valueFrom:
    secretKeyRef: {name: {{ $db.existingSecret | quote }}, key: {{ $db.existingSecretKey | quote }}}
{{- else if $db.url }}
- name: TEN_DATABASE_URL
  valueFrom:
    secretKeyRef: {name: {{ $secret | quote }}, key: database-url}
{{- else if $db.host }}
{{- $auth := $db.user }}
{{- if or $db.password $db.passwordSecret.name }}
- name: TEN_DATABASE_PASSWORD
  valueFrom:
    {{- if $db.passwordSecret.name }}
    secretKeyRef: {name: {{ $db.passwordSecret.name | quote }}, key: {{ $db.passwordSecret.key | quote }}}
    {{- else }}
    secretKeyRef: {name: {{ $secret | quote }}, key: database-password}
    {{- end }}
{{- $auth = printf "%s:$(TEN_DATABASE_PASSWORD)" $db.user }}
{{- end }}
- name: TEN_DATABASE_URL
  value: {{ printf "postgresql+asyncpg://%s@%s:%v/%s%s" $auth $db.host $db.port $db.name (ternary (printf "?%s" $db.query) "" (ne $db.query "")) | quote }}
{{- end }}
{{- end }}

{{- define "ten.redisEnv" -}}
{{- if .Values.redis.existingSecret }}
- name: TEN_REDIS_URL
  valueFrom:
    secretKeyRef: {name: {{ .Values.redis.existingSecret | quote }}, key: {{ .Values.redis.existingSecretKey | quote }}}
{{- else if .Values.redis.url }}
- name: TEN_REDIS_URL
  valueFrom:
    secretKeyRef: {name: {{ include "ten.fullname" . | quote }}, key: redis-url}
{{- end }}
{{- end }}

{{- define "ten.workers" -}}
{{- if kindIs "invalid" .Values.workers }}{{ ternary 2 1 (eq (include "ten.hasRedis" .) "true") }}{{ else }}{{ .Values.workers }}{{ end }}
{{- end }}

{{/* The pod and container security context, shared by the service and the migration Job. */}}
{{- define "ten.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "ten.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
privileged: false
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* Refuse values that would lose games. */}}
{{- define "ten.validate" -}}
{{- $redis := eq (include "ten.hasRedis" .) "true" }}
{{- if and (not $redis) (or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled) }}
{{- fail "ten: replicaCount > 1 or autoscaling.enabled needs Redis (set redis.url or redis.existingSecret): the embedded store keeps games in one process, so other replicas would not see them" }}
{{- end }}
{{- if and (not $redis) (gt (int (include "ten.workers" .)) 1) }}
{{- fail "ten: workers > 1 needs Redis (set redis.url or redis.existingSecret): the embedded store keeps games in one process" }}
{{- end }}
{{- if and (not $redis) .Values.jobWorkers.enabled }}
{{- fail "ten: jobWorkers.enabled needs Redis (set redis.url or redis.existingSecret): the embedded store's queues live in the serving process" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{- fail "ten: autoscaling.minReplicas must not exceed autoscaling.maxReplicas" }}
{{- end }}
{{- $pdb := .Values.podDisruptionBudget }}
{{- if and $pdb.enabled (kindIs "invalid" $pdb.minAvailable) (kindIs "invalid" $pdb.maxUnavailable) }}
{{- fail "ten: podDisruptionBudget.enabled needs minAvailable or maxUnavailable" }}
{{- end }}
{{- $auth := .Values.auth }}
{{- $keys := $auth.existingSecretKeys }}
{{- $jwtKeys := ternary (compact (list $auth.jwksUrl $keys.jwtSecret $keys.jwtPublicKey)) (compact (list $auth.jwksUrl $auth.jwtSecret $auth.jwtPublicKey)) (ne $auth.existingSecret "") }}
{{- if gt (len $jwtKeys) 1 }}
{{- fail "ten: give one JWT key: auth.jwtSecret, auth.jwtPublicKey or auth.jwksUrl (or one of auth.existingSecretKeys.jwtSecret / .jwtPublicKey)" }}
{{- end }}
{{- if and (eq (include "ten.hasJwtKey" .) "true") (not (and $auth.issuer $auth.audience)) }}
{{- fail "ten: a JWT key needs auth.issuer and auth.audience: a player JWT is accepted only from its issuer and for this service" }}
{{- end }}
{{- if and .Values.redis.sentinels .Values.redis.cluster }}
{{- fail "ten: set redis.sentinels or redis.cluster, not both" }}
{{- end }}
{{- if and (gt (int .Values.redis.waitReplicas) 0) (or .Values.redis.cluster (not $redis)) }}
{{- fail "ten: redis.waitReplicas needs Redis, standalone or through sentinels (not a Cluster)" }}
{{- end }}
{{- if and .Values.database.host (not .Values.database.url) (not .Values.database.existingSecret) (not .Values.database.password) (not .Values.database.passwordSecret.name) }}
{{- fail "ten: database.host is set but no password: set database.password or database.passwordSecret.name" }}
{{- end }}
{{- end }}
