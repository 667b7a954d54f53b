{{/* Names, labels and the component list. Templates only include these. */}}

{{- define "feedback.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* <release>-feedback, or the release name when it already contains the chart name. */}}
{{- define "feedback.fullname" -}}
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

{{- define "feedback.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* A resource name for one component: <fullname>-<component>. Args: (list $ "component"). */}}
{{- define "feedback.componentName" -}}
{{- $root := index . 0 }}
{{- printf "%s-%s" (include "feedback.fullname" $root) (index . 1) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "feedback.selectorLabels" -}}
app.kubernetes.io/name: {{ include "feedback.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "feedback.labels" -}}
helm.sh/chart: {{ include "feedback.chart" . }}
{{ include "feedback.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "feedback.name" . }}
{{- end }}

{{/* Labels of one component's resources. Args: (list $ "component"). */}}
{{- define "feedback.componentLabels" -}}
{{ include "feedback.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{/* Selector of one component's pods. Args: (list $ "component"). */}}
{{- define "feedback.componentSelectorLabels" -}}
{{ include "feedback.selectorLabels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "feedback.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "feedback.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "feedback.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The port every service API listens on; SERVICE_URL_<NAME> points at it. */}}
{{- define "feedback.apiPort" -}}8000{{- end }}
{{- define "feedback.gatewayPort" -}}8080{{- end }}

{{/*
Every Deployment the release runs, as YAML {items: [...]}: the gateway, then for each
enabled service its API and each enabled worker. Each item carries its name, role
(gateway/api/worker), the container command and args, its port (0 for workers), its
values merged over `defaults` and the keys of the chart's Secret it gets. Templates range over this list, so adding a service or a
worker is a values change.
*/}}
{{- define "feedback.components" -}}
{{- $items := list }}
{{- $items = append $items (dict "name" "gateway" "role" "gateway" "service" "" "worker" ""
    "command" (list "feedback-gateway") "args" (list "--bind" (printf "0.0.0.0:%s" (include "feedback.gatewayPort" .)))
    "port" (include "feedback.gatewayPort" . | int) "values" (omit .Values.gateway "service" "pdb")
    "pdb" .Values.gateway.pdb "env" (include "feedback.gatewayEnv" . | fromYaml)
    "secrets" (list "FEEDBACK_ADMIN_TOKEN" "INTERNAL_SECRET" "GATEWAY_SECRET")) }}
{{- range $service, $spec := .Values.services }}
{{- if ne (toString (default (dict) $spec).enabled) "false" }}
{{- /* Every service component signs or verifies internal calls; the rest as the service lists. */}}
{{- $secrets := concat (list "INTERNAL_SECRET") (default (list) $spec.secrets) | uniq }}
{{- $api := mergeOverwrite (deepCopy $.Values.defaults.api) (deepCopy (default (dict) $spec.api)) }}
{{- if ne (toString $api.enabled) "false" }}
{{- $items = append $items (dict "name" $service "role" "api" "service" $service "worker" ""
    "command" (list "feedback") "args" (list "serve" $service "--bind" (printf "0.0.0.0:%s" (include "feedback.apiPort" $)))
    "port" (include "feedback.apiPort" $ | int) "values" (omit $api "pdb") "pdb" (default (dict) $api.pdb)
    "env" (default (dict) $spec.env) "secrets" $secrets) }}
{{- end }}
{{- range $worker, $w := (default (dict) $spec.workers) }}
{{- $wv := mergeOverwrite (deepCopy $.Values.defaults.worker) (deepCopy (default (dict) $w)) }}
{{- if ne (toString $wv.enabled) "false" }}
{{- $items = append $items (dict "name" (printf "%s-%s" $service $worker) "role" "worker" "service" $service "worker" $worker
    "command" (list "feedback") "args" (list "worker" $service $worker)
    "port" 0 "values" (omit $wv "pdb") "pdb" (default (dict) $wv.pdb) "env" (default (dict) $spec.env) "secrets" $secrets) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml (dict "items" $items) }}
{{- end }}

{{/*
The gateway's own settings: trusted proxies, and each rate limit as the release-wide quota
(every gateway process counts in one shared store, RATE_LIMIT_STORAGE).
*/}}
{{- define "feedback.gatewayEnv" -}}
{{- $g := .Values.gateway }}
TRUSTED_PROXIES: {{ $g.trustedProxies | quote }}
{{- range $key, $name := dict "writes" "RATE_LIMIT_WRITES" "writesPerAddress" "RATE_LIMIT_WRITES_PER_ADDRESS" "searches" "RATE_LIMIT_SEARCHES" "searchesPerAddress" "RATE_LIMIT_SEARCHES_PER_ADDRESS" "reads" "RATE_LIMIT_READS" "readsPerAddress" "RATE_LIMIT_READS_PER_ADDRESS" "readsPerWorkspace" "RATE_LIMIT_READS_PER_WORKSPACE" "apiKeys" "RATE_LIMIT_API_KEYS" "authFailures" "RATE_LIMIT_AUTH_FAILURES" "authFailuresPerAddress" "RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS" }}
{{ $name }}: {{ index $g.rateLimits $key | quote }}
{{- end }}
{{- with $g.rateLimits.storage }}
RATE_LIMIT_STORAGE: {{ . | quote }}
{{- end }}
{{- end }}

{{/* Enabled services with an API: {name: url} for SERVICE_URL_<NAME>. */}}
{{- define "feedback.serviceUrls" -}}
{{- $urls := dict }}
{{- range $service, $spec := .Values.services }}
{{- if and (ne (toString (default (dict) $spec).enabled) "false") (ne (toString (default (dict) $spec.api).enabled) "false") }}
{{- $_ := set $urls $service (printf "http://%s:%s" (include "feedback.componentName" (list $ $service)) (include "feedback.apiPort" $)) }}
{{- end }}
{{- end }}
{{- toYaml $urls }}
{{- end }}

{{- define "feedback.publicBaseUrl" -}}
{{- if .Values.config.publicBaseUrl }}
{{- .Values.config.publicBaseUrl | trimSuffix "/" }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- printf "https://%s" (first .Values.ingress.hosts) }}
{{- else }}
{{- printf "http://%s" (include "feedback.componentName" (list . "gateway")) }}
{{- end }}
{{- end }}

{{/* Non-secret settings of every process (ConfigMap data). */}}
{{- define "feedback.configData" -}}
MONGODB_DB_PREFIX: {{ .Values.config.mongodbDbPrefix | quote }}
KAFKA_PARTITIONS: {{ .Values.config.kafkaPartitions | quote }}
PUBLIC_BASE_URL: {{ include "feedback.publicBaseUrl" . | quote }}
{{- /* The board site calls the API through the gateway's Service, not back through the Ingress. */}}
{{- $gatewayService := printf "http://%s:%v" (include "feedback.componentName" (list . "gateway")) .Values.gateway.service.port }}
WEB_API_URL: {{ $gatewayService | quote }}
{{- /* So does the MCP server, whose tools are calls of the public API. */}}
MCP_API_URL: {{ $gatewayService | quote }}
{{- /* And the widget, whose panel's requests are calls of the public API. */}}
WIDGET_API_URL: {{ $gatewayService | quote }}
MAX_BODY_BYTES: {{ .Values.config.maxBodyBytes | int64 | quote }}
PROXY_CONNECT_TIMEOUT: {{ .Values.config.proxyConnectTimeout | quote }}
PROXY_READ_TIMEOUT: {{ .Values.config.proxyReadTimeout | quote }}
AUTH_CACHE_SECONDS: {{ .Values.config.authCacheSeconds | quote }}
LOG_LEVEL: {{ .Values.config.logLevel | quote }}
{{- range $name, $url := include "feedback.serviceUrls" . | fromYaml }}
SERVICE_URL_{{ upper $name }}: {{ $url | quote }}
{{- end }}
{{- range $name, $value := .Values.config.extraEnv }}
{{ $name }}: {{ $value | quote }}
{{- end }}
{{- end }}

{{/*
The chart's secrets, computed once per render. An empty value is taken from the Secret of a
previous release (lookup; empty offline) or generated: random text, or for SECRETS_KEYS one
Fernet key (32 random bytes, url-safe base64). The result is memoised in .Values so every
template (and the hook copy) gets the same values.
*/}}
{{- define "feedback.secretValues" -}}
{{- if not .Values.secrets._resolved }}
{{- $existing := (lookup "v1" "Secret" .Release.Namespace (include "feedback.fullname" .)).data | default (dict) }}
{{- $fernetKey := randBytes 32 | replace "+" "-" | replace "/" "_" }}
{{- $resolved := dict }}
{{- range $key, $spec := dict
    "FEEDBACK_ADMIN_TOKEN" (list .Values.secrets.adminToken (randAlphaNum 40))
    "INTERNAL_SECRET" (list .Values.secrets.internalSecret (randAlphaNum 40))
    "GATEWAY_SECRET" (list .Values.secrets.gatewaySecret (randAlphaNum 40))
    "WEB_COOKIE_SECRET" (list .Values.secrets.webCookieSecret (randAlphaNum 40))
    "SECRETS_KEYS" (list .Values.secrets.secretsKeys $fernetKey)
    "SMTP_URL" (list .Values.secrets.smtpUrl "") }}
{{- $_ := set $resolved $key (index $spec 0 | default (get $existing $key | b64dec) | default (index $spec 1)) }}
{{- end }}
{{- $_ := set .Values.secrets "_resolved" $resolved }}
{{- if not .Values.mongodb.enabled }}
{{- $_ := set .Values.secrets._resolved "MONGODB_URI" (required "secrets.mongodbUri is required (a MongoDB replica set URI), or set mongodb.enabled=true or secrets.existingSecret" .Values.secrets.mongodbUri) }}
{{- end }}
{{- if not .Values.kafka.enabled }}
{{- $_ := set .Values.secrets._resolved "KAFKA_BOOTSTRAP_SERVERS" (required "secrets.kafkaBootstrapServers is required, or set kafka.enabled=true or secrets.existingSecret" .Values.secrets.kafkaBootstrapServers) }}
{{- end }}
{{- end }}
{{- toYaml .Values.secrets._resolved }}
{{- end }}

{{/* The keys of the Secret that `feedback init` needs: where MongoDB and Kafka are (or none). */}}
{{- define "feedback.initSecretKeys" -}}
{{- $keys := list }}
{{- if not .Values.mongodb.enabled }}{{ $keys = append $keys "MONGODB_URI" }}{{ end -}}
{{- if not .Values.kafka.enabled }}{{ $keys = append $keys "KAFKA_BOOTSTRAP_SERVERS" }}{{ end -}}
{{- toYaml (dict "keys" $keys) }}
{{- end }}

{{- define "feedback.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "feedback.fullname" .) }}
{{- end }}

{{/*
Environment of every container besides the ConfigMap: the secrets it uses by key (a missing
key stops the pod from starting, so an incomplete existingSecret cannot fall back to dev
defaults), MongoDB/Kafka of the bundled charts when enabled, then the given extra variables
(a string or {valueFrom: ...}). Args: (list $ secretName extraEnvDict secretKeys).
*/}}
{{- define "feedback.env" -}}
{{- $root := index . 0 }}
{{- $secret := index . 1 }}
{{- $keys := index . 3 }}
{{- if not $root.Values.mongodb.enabled }}{{ $keys = append $keys "MONGODB_URI" }}{{ end -}}
{{- if not $root.Values.kafka.enabled }}{{ $keys = append $keys "KAFKA_BOOTSTRAP_SERVERS" }}{{ end -}}
{{- range $keys }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ . }}
{{- end }}
{{- if $root.Values.mongodb.enabled }}
{{- $mongo := printf "%s-mongodb" $root.Release.Name }}
- name: MONGODB_ROOT_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $mongo }}
      key: mongodb-root-password
{{- $hosts := list }}
{{- range $i := until (int $root.Values.mongodb.replicaCount) }}
{{- $hosts = append $hosts (printf "%s-%d.%s-headless.%s.svc:27017" $mongo $i $mongo $root.Release.Namespace) }}
{{- end }}
- name: MONGODB_URI
  value: {{ printf "mongodb://root:$(MONGODB_ROOT_PASSWORD)@%s/?replicaSet=%s&authSource=admin" (join "," $hosts) $root.Values.mongodb.replicaSetName | quote }}
{{- end }}
{{- if $root.Values.kafka.enabled }}
- name: KAFKA_BOOTSTRAP_SERVERS
  value: {{ printf "%s-kafka:%d" $root.Release.Name (int $root.Values.kafka.service.ports.client) | quote }}
{{- end }}
{{- range $name, $value := index . 2 }}
- name: {{ $name }}
{{- if kindIs "map" $value }}
  {{- toYaml $value | nindent 2 }}
{{- else }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* The read-only root filesystem leaves /tmp (gunicorn's heartbeat files) to an emptyDir. */}}
{{- define "feedback.tmpVolume" -}}
- name: tmp
  emptyDir:
    medium: Memory
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- end }}

{{/* Hook phases of the init Job: after install when MongoDB/Kafka come with the release. */}}
{{- define "feedback.initHook" -}}
{{- if or .Values.mongodb.enabled .Values.kafka.enabled -}}
post-install,pre-upgrade
{{- else -}}
pre-install,pre-upgrade
{{- end }}
{{- end }}

{{/* Fail early on values that render but cannot work. Included by configmap.yaml. */}}
{{- define "feedback.validate" -}}
{{- range $dep := list "mongodb" "kafka" }}
{{- if and (index $.Values $dep).enabled (not (hasKey $.Subcharts $dep)) }}
{{- fail (printf "%s.enabled=true needs the %s chart: run `helm dependency build charts/feedback` first" $dep $dep) }}
{{- end }}
{{- end }}
{{- if and .Values.mongodb.enabled (ne .Values.mongodb.architecture "replicaset") }}
{{- fail "mongodb.architecture must be replicaset: the platform uses MongoDB transactions" }}
{{- end }}
{{- /* The processes would refuse them anyway (common.config.MIN_SECRET_LENGTH): say so at install. */}}
{{- range $field, $name := dict "adminToken" "FEEDBACK_ADMIN_TOKEN" "internalSecret" "INTERNAL_SECRET" "gatewaySecret" "GATEWAY_SECRET" "webCookieSecret" "WEB_COOKIE_SECRET" }}
{{- $given := index $.Values.secrets $field }}
{{- if and $given (lt (len $given) 32) }}
{{- fail (printf "secrets.%s [%s] must be at least 32 characters (or empty: generated)" $field $name) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The egress rules of one component (a NetworkPolicyEgressRule list): DNS; this release's pods
(service APIs and the gateway); MongoDB and Kafka (the bundled pods when they come with the
release, else the given peers, else any address on their ports); the outside for the components
listed in networkPolicy.egress.internet; then the operator's extra rules for this component or
`all`. Args: (list $ "component").
*/}}
{{- define "feedback.egressRules" -}}
{{- $root := index . 0 }}
{{- $name := index . 1 }}
{{- $e := $root.Values.networkPolicy.egress }}
- ports:
    - {port: 53, protocol: UDP}
    - {port: 53, protocol: TCP}
  {{- with $e.dnsTo }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
- to:
    - podSelector:
        matchLabels:
          {{- include "feedback.selectorLabels" $root | nindent 10 }}
  ports:
    - {port: {{ include "feedback.apiPort" $root }}, protocol: TCP}
    - {port: {{ include "feedback.gatewayPort" $root }}, protocol: TCP}
{{- range $store := list "mongodb" "kafka" }}
{{- $peers := index $e (printf "%sTo" $store) }}
{{- if and (not $peers) (index $root.Values $store).enabled }}
{{- $peers = list (dict "podSelector" (dict "matchLabels" (dict "app.kubernetes.io/instance" $root.Release.Name "app.kubernetes.io/name" $store))) }}
{{- end }}
- ports:
    {{- range (index $e (printf "%sPorts" $store)) }}
    - {port: {{ . }}, protocol: TCP}
    {{- end }}
  {{- with $peers }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- if has $name $e.internet }}
- to:
    {{- toYaml $e.internetTo | nindent 4 }}
{{- end }}
{{- range $key, $rules := $e.extra }}
{{- if or (eq $key "all") (eq $key $name) }}
{{- toYaml $rules | nindent 0 }}
{{- end }}
{{- end }}
{{- end }}
