{{/*
Names and labels shared by every template.
*/}}

{{- define "masakari-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name prefix: <release>-<chart>, or <release> when it already contains the
chart name. Kept to 50 characters so suffixes such as -controller still fit a
63-character name.
*/}}
{{- define "masakari-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Prefix of cluster-scoped object names (ClusterRoles and their bindings, the
ValidatingAdmissionPolicy and its binding, the webhook configuration):
<release namespace>-<fullname>, so two releases of one name in two namespaces
never share one. At most 63 + 1 + 50 characters plus a suffix: well inside
the 253 these names allow.
*/}}
{{- define "masakari-operator.clusterName" -}}
{{- printf "%s-%s" .Release.Namespace (include "masakari-operator.fullname" .) }}
{{- end }}

{{- define "masakari-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "masakari-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: masakari-operator
{{- end }}

{{- define "masakari-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "masakari-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Namespace of the custom resources (MASAKARI_NAMESPACE). */}}
{{- define "masakari-operator.crNamespace" -}}
{{- default .Release.Namespace .Values.crNamespace }}
{{- end }}

{{- define "masakari-operator.apiServiceAccount" -}}
{{- if .Values.serviceAccount.create }}
{{- printf "%s-api" (include "masakari-operator.fullname" .) }}
{{- else }}
{{- required "serviceAccount.apiName is required when serviceAccount.create is false" .Values.serviceAccount.apiName }}
{{- end }}
{{- end }}

{{- define "masakari-operator.controllerServiceAccount" -}}
{{- if .Values.serviceAccount.create }}
{{- printf "%s-controller" (include "masakari-operator.fullname" .) }}
{{- else }}
{{- required "serviceAccount.controllerName is required when serviceAccount.create is false" .Values.serviceAccount.controllerName }}
{{- end }}
{{- end }}

{{- define "masakari-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "masakari-operator.configMapName" -}}
{{- printf "%s-config" (include "masakari-operator.fullname" .) }}
{{- end }}

{{/* The key of the config ConfigMap: masakari.conf for an INI string, config.yaml for a map. */}}
{{- define "masakari-operator.configFileName" -}}
{{- if kindIs "string" .Values.config }}masakari.conf{{ else }}config.yaml{{ end }}
{{- end }}

{{/* run's arguments: the masakari.conf of configSecret, read after `config` (MASAKARI_CONFIG). */}}
{{- define "masakari-operator.args" -}}
{{- if .Values.configSecret.name -}}
[run, --config-file, {{ printf "/etc/masakari/site/%s" .Values.configSecret.key | quote }}]
{{- else -}}
[run]
{{- end }}
{{- end }}

{{- define "masakari-operator.policyConfigMapName" -}}
{{- default (printf "%s-policy" (include "masakari-operator.fullname" .)) .Values.policy.existingConfigMap }}
{{- end }}

{{- define "masakari-operator.hasPolicy" -}}
{{- if or .Values.policy.existingConfigMap .Values.policy.rules }}true{{- end }}
{{- end }}

{{- define "masakari-operator.webhookServiceName" -}}
{{- printf "%s-webhook" (include "masakari-operator.fullname" .) }}
{{- end }}

{{/*
"true" when the chart makes the webhook's CA and serving certificate itself:
no cert-manager, certSecret, caBundle or cert-manager Certificate was given.
*/}}
{{- define "masakari-operator.webhookGeneratesCert" -}}
{{- if not (or .Values.webhook.certManager.enabled .Values.webhook.certSecret .Values.webhook.caBundle .Values.webhook.certManagerCertificate) }}true{{- end }}
{{- end }}

{{/*
Secret of the API's serving certificate (api.tls): the one cert-manager
writes, or api.tls.certSecret.
*/}}
{{- define "masakari-operator.apiCertSecretName" -}}
{{- if .Values.api.tls.certManager.enabled }}
{{- printf "%s-api-tls" (include "masakari-operator.fullname" .) }}
{{- else }}
{{- required "api.tls.enabled needs api.tls.certManager.enabled or api.tls.certSecret (a kubernetes.io/tls Secret)" .Values.api.tls.certSecret }}
{{- end }}
{{- end }}

{{- define "masakari-operator.webhookCertSecretName" -}}
{{- if or .Values.webhook.certManager.enabled (include "masakari-operator.webhookGeneratesCert" .) }}
{{- printf "%s-webhook-tls" (include "masakari-operator.fullname" .) }}
{{- else }}
{{- required "webhook.certSecret is required with webhook.caBundle or webhook.certManagerCertificate" .Values.webhook.certSecret }}
{{- end }}
{{- end }}

{{/*
Environment common to both Deployments. Argument: dict with "root" (the
top-level context) and "components" (MASAKARI_COMPONENTS).
*/}}
{{- define "masakari-operator.env" -}}
{{- $root := .root -}}
- name: MASAKARI_COMPONENTS
  value: {{ .components | quote }}
- name: MASAKARI_NAMESPACE
  value: {{ include "masakari-operator.crNamespace" $root | quote }}
- name: MASAKARI_ADMISSION_KEY_NAMESPACE
  value: {{ $root.Release.Namespace | quote }}
{{- if $root.Values.rbac.safetyOverridesPolicy }}
- name: MASAKARI_SAFETY_OVERRIDES_POLICY
  value: {{ printf "%s-safety-overrides" (include "masakari-operator.clusterName" $root) | quote }}
{{- end }}
- name: MASAKARI_AUTH_STRATEGY
  value: {{ $root.Values.auth.strategy | quote }}
- name: MASAKARI_LISTEN
  value: "0.0.0.0:15868"
- name: MASAKARI_METRICS_LISTEN
  value: "0.0.0.0:8081"
# /metrics on its own port, which networkPolicy.metricsClients can restrict
- name: MASAKARI_PROMETHEUS_LISTEN
  value: "0.0.0.0:{{ $root.Values.metrics.containerPort }}"
- name: MASAKARI_MEDIK8S_LEASE_NAMESPACE
  value: {{ $root.Values.remediation.leaseNamespace | quote }}
{{- with $root.Values.logLevel }}
- name: MASAKARI_LOG_LEVEL
  value: {{ . | quote }}
{{- end }}
{{- if $root.Values.config }}
- name: MASAKARI_CONFIG
  value: /etc/masakari/config/{{ include "masakari-operator.configFileName" $root }}
{{- end }}
{{- if $root.Values.openstack.cloudsSecret }}
- name: OS_CLIENT_CONFIG_FILE
  value: /etc/openstack/clouds.yaml
- name: OS_CLOUD
  value: {{ required "openstack.cloud is required with openstack.cloudsSecret" $root.Values.openstack.cloud | quote }}
{{- end }}
# identity in leader-election Leases and Events
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- with $root.Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* envFrom common to both Deployments. */}}
{{- define "masakari-operator.envFrom" -}}
{{- with .Values.openstack.envSecret }}
- secretRef:
    name: {{ . }}
{{- end }}
{{- with .Values.extraEnvFrom }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Volume mounts common to both Deployments. */}}
{{- define "masakari-operator.volumeMounts" -}}
# readOnlyRootFilesystem: Node and libraries may still write temporary files
- name: tmp
  mountPath: /tmp
{{- if .Values.config }}
- name: config
  mountPath: /etc/masakari/config
  readOnly: true
{{- end }}
{{- if .Values.configSecret.name }}
- name: site-config
  mountPath: /etc/masakari/site
  readOnly: true
{{- end }}
{{- if .Values.openstack.cloudsSecret }}
- name: openstack
  mountPath: /etc/openstack
  readOnly: true
{{- end }}
{{- end }}

{{- define "masakari-operator.volumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- if .Values.config }}
- name: config
  configMap:
    name: {{ include "masakari-operator.configMapName" . }}
{{- end }}
{{- with .Values.configSecret.name }}
- name: site-config
  secret:
    secretName: {{ . }}
{{- end }}
{{- if .Values.openstack.cloudsSecret }}
- name: openstack
  secret:
    secretName: {{ .Values.openstack.cloudsSecret }}
{{- end }}
{{- end }}

{{/* Probes on the ops port. */}}
{{- define "masakari-operator.probes" -}}
readinessProbe:
  httpGet:
    path: /readyz
    port: ops
  {{- toYaml .Values.probes.readiness | nindent 2 }}
livenessProbe:
  httpGet:
    path: /healthz
    port: ops
  {{- toYaml .Values.probes.liveness | nindent 2 }}
{{- end }}

{{/*
Soft anti-affinity spreading a component's replicas over nodes, used when the
component's affinity value is empty. Argument: dict with "root" and "component".
*/}}
{{- define "masakari-operator.defaultAffinity" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "masakari-operator.selectorLabels" .root | nindent 12 }}
            app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
PodDisruptionBudget body for a component. Argument: dict with "pdb" (the
values block).
*/}}
{{- define "masakari-operator.pdbLimits" -}}
{{- if and (not (kindIs "invalid" .pdb.minAvailable)) (not (kindIs "invalid" .pdb.maxUnavailable)) }}
{{- fail "podDisruptionBudget: set only one of minAvailable and maxUnavailable (set the other to null)" }}
{{- end }}
{{- if not (kindIs "invalid" .pdb.maxUnavailable) }}
maxUnavailable: {{ .pdb.maxUnavailable }}
{{- else }}
minAvailable: {{ .pdb.minAvailable | default 1 }}
{{- end }}
{{- end }}

{{/*
"true" when the chart grants the controller read access to the Medik8s lease
namespace (rbac.yaml). readMedik8sLeases auto: when the namespace exists
(lookup; empty under `helm template`, so GitOps renders set true) or the chart
creates it.
*/}}
{{- define "masakari-operator.leaseRole" -}}
{{- $read := toString .Values.remediation.readMedik8sLeases }}
{{- if eq $read "true" }}true
{{- else if and (eq $read "auto") (or .Values.remediation.createLeaseNamespace (lookup "v1" "Namespace" "" .Values.remediation.leaseNamespace)) }}true
{{- end }}
{{- end }}

{{/*
Stops the render under keystone auth when no OpenStack credentials are given:
the API validates tokens with them, and without any the pods would start and
crash-loop. Credentials are openstack.cloudsSecret, openstack.envSecret,
extraEnvFrom, an OS_*, MASAKARI__DEFAULT__OS_PRIVILEGED_USER_* or
MASAKARI__KEYSTONE_AUTHTOKEN__* variable in extraEnv (the MASAKARI__ names
match case-insensitively, as src/config/load.ts reads them), config.DEFAULT.os_privileged_user_name, config.keystone_authtoken's
username or auth_type, a masakari.conf string in config, or configSecret (a
site's masakari.conf, read by src/config/openstack-auth.ts like the others).
*/}}
{{- define "masakari-operator.requireKeystoneCredentials" -}}
{{- if eq .Values.auth.strategy "keystone" }}
{{- $found := or .Values.openstack.cloudsSecret .Values.openstack.envSecret .Values.extraEnvFrom (dig "name" "" (.Values.configSecret | default dict)) }}
{{- range .Values.extraEnv }}
{{- if or (hasPrefix "OS_" .name) (hasPrefix "MASAKARI__DEFAULT__OS_PRIVILEGED_USER_" (upper .name)) (hasPrefix "MASAKARI__KEYSTONE_AUTHTOKEN__" (upper .name)) }}{{ $found = true }}{{ end }}
{{- end }}
{{- if not (kindIs "map" .Values.config) }}{{ $found = true }}
{{- else if (dig "DEFAULT" "os_privileged_user_name" "" .Values.config) }}{{ $found = true }}
{{- else if or (dig "keystone_authtoken" "username" "" .Values.config) (dig "keystone_authtoken" "auth_type" "" .Values.config) }}{{ $found = true }}
{{- end }}
{{- if not $found }}
{{- fail "auth.strategy is keystone but no OpenStack credentials are given, so the API cannot validate tokens and its pods would crash-loop: set openstack.cloudsSecret (with openstack.cloud), openstack.envSecret (a Secret of OS_* variables), config.DEFAULT.os_privileged_user_*, configSecret or config.keystone_authtoken (a site's masakari.conf; docs/install.md), or auth.strategy=noauth2 for a trial" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Labels of one alert: metrics.prometheusRule.alertLabels, then its severity:
metrics.prometheusRule.severities.<alert> when set, else the chart's
(argument "severity"). Argument: dict with "r" (the prometheusRule values),
"alert" and "severity".
*/}}
{{- define "masakari-operator.alertLabels" -}}
{{- $severity := get (.r.severities | default dict) .alert | default .severity }}
{{- toYaml (merge (dict "severity" $severity) (omit (.r.alertLabels | default dict) "severity")) }}
{{- end }}

{{/* runbook_url of one alert: its heading in docs/operations.md. Argument: dict with "r" and "alert". */}}
{{- define "masakari-operator.runbookUrl" -}}
{{- printf "%s#%s" (required "metrics.prometheusRule.runbookBaseUrl is required" .r.runbookBaseUrl) (lower .alert) | quote }}
{{- end }}
