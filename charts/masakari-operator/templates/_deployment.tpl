{{/*
One Deployment of the operator image. Both Deployments (api; engine +
remediation) share everything but the components, ports, ServiceAccount and
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
        checksum/config: {{ $root.Values.config | toJson | sha256sum }}
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
          args: [run]
          ports:
            {{- if $isApi }}
            - name: http
              containerPort: 15868
              protocol: TCP
            {{- end }}
            - name: ops
              containerPort: 8081
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
            secretName: {{ required "webhook.certSecret is required when webhook.enabled is true" $root.Values.webhook.certSecret }}
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
