{{/*
One Deployment of the operator image. Both Deployments (api; engine +
remediation + detection) share everything but the components, ports, ServiceAccount and
the api's policy and webhook mounts. Argument: dict with
  root            the top-level context
  component       api | engine (app.kubernetes.io/component, name suffix)
  components      MASAKARI_COMPONENTS
  values          the component's values block (.Values.api or .Values.engine)
  serviceAccount  ServiceAccount name
*/}}
{{- define "masakari-operator.deployment" -}}
{{- $root := .root }}
{{- $v := .values }}
{{- $isApi := eq .component "api" }}
{{- $policy := and $isApi (include "masakari-operator.hasPolicy" $root) }}
{{- $webhook := and $isApi $root.Values.webhook.enabled }}
{{- $apiTls := and $isApi $root.Values.api.tls.enabled }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "masakari-operator.fullname" $root }}-{{ .component }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "masakari-operator.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  replicas: {{ $v.replicas }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "masakari-operator.selectorLabels" $root | nindent 6 }}
      app.kubernetes.io/component: {{ .component }}
  template:
    metadata:
      labels:
        {{- include "masakari-operator.selectorLabels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # roll the pods when the configuration they read at start changes
        checksum/config: {{ list $root.Values.config $root.Values.configSecret | toJson | sha256sum }}
        {{- if $policy }}
        checksum/policy: {{ $root.Values.policy | toJson | sha256sum }}
        {{- end }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ .serviceAccount }}
      automountServiceAccountToken: {{ $root.Values.serviceAccount.automount }}
      terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      containers:
        - name: {{ .component }}
          image: {{ include "masakari-operator.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: {{ include "masakari-operator.args" $root }}
          ports:
            {{- if $isApi }}
            - name: http
              containerPort: 15868
              protocol: TCP
            {{- end }}
            - name: ops
              containerPort: 8081
              protocol: TCP
            - name: metrics
              containerPort: {{ $root.Values.metrics.containerPort }}
              protocol: TCP
            {{- if $webhook }}
            - name: webhook
              containerPort: {{ $root.Values.webhook.port }}
              protocol: TCP
            {{- end }}
          env:
            {{- include "masakari-operator.env" (dict "root" $root "components" .components) | nindent 12 }}
            {{- if $policy }}
            - name: MASAKARI_POLICY_FILE
              value: /etc/masakari/policy/policy.yaml
            {{- end }}
            {{- if $webhook }}
            # read by the webhook server of the api component
            - name: MASAKARI_WEBHOOK_LISTEN
              value: "0.0.0.0:{{ $root.Values.webhook.port }}"
            - name: MASAKARI_WEBHOOK_CERT_DIR
              value: /etc/masakari/webhook-tls
            {{- end }}
            {{- if $apiTls }}
            # [DEFAULT] use_ssl, [wsgi] ssl_cert_file/ssl_key_file: TLS on the API port, re-read on renewal
            - name: MASAKARI__DEFAULT__USE_SSL
              value: "true"
            - name: MASAKARI__WSGI__SSL_CERT_FILE
              value: /etc/masakari/api-tls/tls.crt
            - name: MASAKARI__WSGI__SSL_KEY_FILE
              value: /etc/masakari/api-tls/tls.key
            {{- end }}
            {{- $userNodeOptions := false }}
            {{- range $root.Values.extraEnv }}
            {{- if eq .name "NODE_OPTIONS" }}{{ $userNodeOptions = true }}{{ end }}
            {{- end }}
            {{- if not $userNodeOptions }}
            # V8 heap sized for this container ({{ .component }}.nodeOptions; NODE_OPTIONS in extraEnv wins)
            - name: NODE_OPTIONS
              value: {{ include "masakari-operator.nodeOptions" (dict "values" $v "component" .component) | quote }}
            {{- end }}
          {{- $envFrom := include "masakari-operator.envFrom" $root | trim }}
          {{- if $envFrom }}
          envFrom:
            {{- $envFrom | trim | nindent 12 }}
          {{- end }}
          {{- include "masakari-operator.probes" $root | nindent 10 }}
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            {{- include "masakari-operator.volumeMounts" $root | nindent 12 }}
            {{- if $policy }}
            - name: policy
              mountPath: /etc/masakari/policy
              readOnly: true
            {{- end }}
            {{- if $webhook }}
            - name: webhook-tls
              mountPath: /etc/masakari/webhook-tls
              readOnly: true
            {{- end }}
            {{- if $apiTls }}
            - name: api-tls
              mountPath: /etc/masakari/api-tls
              readOnly: true
            {{- end }}
      volumes:
        {{- include "masakari-operator.volumes" $root | nindent 8 }}
        {{- if $policy }}
        - name: policy
          configMap:
            name: {{ include "masakari-operator.policyConfigMapName" $root }}
        {{- end }}
        {{- if $webhook }}
        - name: webhook-tls
          secret:
            secretName: {{ include "masakari-operator.webhookCertSecretName" $root }}
        {{- end }}
        {{- if $apiTls }}
        - name: api-tls
          secret:
            secretName: {{ include "masakari-operator.apiCertSecretName" $root }}
        {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      affinity:
        {{- if $v.affinity }}
        {{- toYaml $v.affinity | nindent 8 }}
        {{- else }}
        {{- include "masakari-operator.defaultAffinity" (dict "root" $root "component" .component) | nindent 8 }}
        {{- end }}
      {{- with $v.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{/*
NODE_OPTIONS of one component. Argument: dict with values (the component's
values block) and component (its name, for messages). values.nodeOptions, when
set, is used as is. Otherwise the V8 heap is sized for the container rather
than for whatever memory V8 sees (the node's, or the limit's):
  --max-semi-space-size=8   caps the young generation. Left to itself V8 sizes
                            it from the memory it sees, up to 64 MiB per
                            semi-space: ~140 MiB more resident garbage under
                            API load for a few per cent less time in GC; 8
                            rather than 16 keeps the api under 300 MiB with
                            100,000 notifications for ~3% of storm throughput
                            (docs/operations.md, "Memory").
  --max-old-space-size      resources.limits.memory less 128 MiB (Node, code,
                            young generation), at least half the limit, so the
                            heap stops with an out-of-memory error that names
                            the heap before the kernel OOM-kills the container.
                            No memory limit: left to V8.
*/}}
{{- define "masakari-operator.nodeOptions" -}}
{{- $v := .values -}}
{{- if $v.nodeOptions -}}
{{ $v.nodeOptions }}
{{- else -}}
{{- $flags := list "--max-semi-space-size=8" -}}
{{- $limit := toString (dig "limits" "memory" "" ($v.resources | default dict)) -}}
{{- if $limit -}}
{{- $quantity := "^([0-9]+(?:\\.[0-9]+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$" -}}
{{- if not (regexMatch $quantity $limit) -}}
{{- fail (printf "%s.resources.limits.memory %q: write it as a number with an optional Ki, Mi, Gi, Ti, k, M, G or T suffix, or set %s.nodeOptions" .component $limit .component) -}}
{{- end -}}
{{- $mibPerUnit := dict "" 0.00000095367431640625 "Ki" 0.0009765625 "Mi" 1.0 "Gi" 1024.0 "Ti" 1048576.0 "k" 0.00095367431640625 "M" 0.95367431640625 "G" 953.67431640625 "T" 953674.31640625 -}}
{{- $mib := mulf (regexReplaceAll $quantity $limit "${1}" | float64) (get $mibPerUnit (regexReplaceAll $quantity $limit "${2}")) -}}
{{- $oldSpace := maxf (subf $mib 128) (divf $mib 2) | floor | int -}}
{{- $flags = append $flags (printf "--max-old-space-size=%d" $oldSpace) -}}
{{- end -}}
{{- join " " $flags -}}
{{- end -}}
{{- end }}
