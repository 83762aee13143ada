{{/* Chart name, possibly overridden. */}}
{{- define "kvguard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Prefix of every resource name; DNS-1123 label length (63). */}}
{{- define "kvguard.fullname" -}}
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

{{/*
<fullname>-<suffix> cut to 63 characters with the suffix kept whole (the fullname is shortened and a trailing
"-" dropped), for names bounded at 63: a Service (DNS-1035 label), the cert-manager Certificate (its name
becomes a label value), the CRD-upgrade hook (its Job's name becomes the job-name label), and the pod-writes
policy (both were cut at 63 before, which could cut the suffix off and collide with the operator's ClusterRole).
A default release's names are unchanged. Argument: (list $ "suffix").
*/}}
{{- define "kvguard.suffixedName" -}}
{{- $root := index . 0 }}
{{- $suffix := index . 1 }}
{{- $prefix := include "kvguard.fullname" $root | trunc (int (sub 62 (len $suffix))) | trimSuffix "-" }}
{{- printf "%s-%s" $prefix $suffix }}
{{- end }}

{{/*
<fullname>-<suffix>, never shortened, for an object whose name may be a DNS-1123 subdomain (253 characters):
Secrets, ConfigMaps, RBAC objects, the MutatingWebhookConfiguration, an Issuer. Their names were always this;
shortening them for long releases would rename them on upgrade (a renamed verdict-key Secret makes every signed
verdict record count as absent). Argument: (list $ "suffix").
*/}}
{{- define "kvguard.objectName" -}}
{{- printf "%s-%s" (include "kvguard.fullname" (index . 0)) (index . 1) }}
{{- end }}

{{- define "kvguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kvguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{/* Labels of every object, without the component. */}}
{{- define "kvguard.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "kvguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kvguard
{{- end }}

{{/* Labels of the operator's objects. */}}
{{- define "kvguard.labels" -}}
{{ include "kvguard.commonLabels" . }}
app.kubernetes.io/component: operator
{{- end }}

{{/* Labels of the CRD upgrade hook's objects: not selected by the operator's Service, PDB or NetworkPolicy. */}}
{{- define "kvguard.hookLabels" -}}
{{ include "kvguard.commonLabels" . }}
app.kubernetes.io/component: crd-upgrade
{{- end }}

{{- define "kvguard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kvguard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository:tag, or repository@digest when a digest is given. Argument: an image values map and the chart. */}}
{{- define "kvguard.imageRef" -}}
{{- $image := index . 0 }}
{{- $chart := index . 1 }}
{{- if $image.digest }}
{{- printf "%s@%s" $image.repository $image.digest }}
{{- else }}
{{- printf "%s:%s" $image.repository (default $chart.AppVersion $image.tag) }}
{{- end }}
{{- end }}

{{/* The lease kvguard elects its leader with (KvguardConfig.LEASE_NAME). */}}
{{- define "kvguard.leaseName" -}}
kvguard-operator
{{- end }}

{{/* The Secret holding the key that signs kvguard's verdict records (the operator creates it). */}}
{{- define "kvguard.verdictKeySecret" -}}
{{ include "kvguard.objectName" (list . "verdict-key") }}
{{- end }}

{{/* The one CRD the chart ships. */}}
{{- define "kvguard.crdName" -}}
modeldeployments.kvguard.io
{{- end }}

{{/*
The rules kvguard needs in every namespace it watches (a ClusterRole, or a Role per namespace).
Every verb here is used, and nothing else is granted: RbacCoversOperatorRequestsIT records the operator's
requests, fails on a request these rules refuse and on a verb no request uses; ChartRbacTest pins the list.
*/}}
{{- define "kvguard.watchRules" -}}
# Pods: watched to find each role's pods; the verified label is written with a JSON patch; a conflicting
# write re-reads the pod (get).
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "patch"]
# The readiness-gate condition kvguard.io/pool-verified lives in pod status.
- apiGroups: [""]
  resources: ["pods/status"]
  verbs: ["patch"]
# Events on ModelDeployments when a verdict changes: one Event per ModelDeployment and reason, created once and
# then patched (count, lastTimestamp, message); get reads its count when it was created before this replica ran.
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "get", "patch"]
# ModelDeployments: watched; the finalizer that hands pods back (reason PolicyRemoved) is added and removed
# with a JSON patch, re-read (get) on a conflict. No update: nothing is ever written whole.
- apiGroups: ["kvguard.io"]
  resources: ["modeldeployments"]
  verbs: ["get", "list", "watch", "patch"]
- apiGroups: ["kvguard.io"]
  resources: ["modeldeployments/status"]
  verbs: ["patch"]
# The Service spec.rejectionProbe.router names, read (get) before each proof through it: an ExternalName Service or one
# without a selector is refused, since the prompts and the engines' token would go wherever it points.
- apiGroups: [""]
  resources: ["services"]
  verbs: ["get"]
{{- if .Values.probeCredentials.enabled }}
# Probe credentials: only the named Secrets; get to read a token, watch (by name) to drop it the moment
# its Secret changes or goes.
- apiGroups: [""]
  resources: ["secrets"]
  resourceNames: {{ toJson .Values.probeCredentials.secretNames }}
  verbs: ["get", "watch"]
{{- end }}
{{- if and .Values.probeTls.enabled .Values.probeTls.secretNames }}
# CA bundles of engines behind TLS (probe.tls.caSecretRef): only the named Secrets, only get.
- apiGroups: [""]
  resources: ["secrets"]
  resourceNames: {{ toJson .Values.probeTls.secretNames }}
  verbs: ["get"]
{{- end }}
{{- if and .Values.probeTls.enabled .Values.probeTls.configMapNames }}
# CA bundles of engines behind TLS (probe.tls.caConfigMapRef): only the named ConfigMaps, only get.
- apiGroups: [""]
  resources: ["configmaps"]
  resourceNames: {{ toJson .Values.probeTls.configMapNames }}
  verbs: ["get"]
{{- end }}
{{- end }}

{{/*
"true" when the cluster serves an API (group/version, or group/version/Kind), as Helm discovered it, or when
assumeApiVersions lists it (rendering without a cluster). Argument: (list $ "group/version").
*/}}
{{- define "kvguard.apiServed" -}}
{{- $root := index . 0 }}
{{- $api := index . 1 }}
{{- if or ($root.Capabilities.APIVersions.Has $api) (has $api $root.Values.assumeApiVersions) }}true{{- end }}
{{- end }}

{{/*
"true" when the cluster serves ValidatingAdmissionPolicy in admissionregistration.k8s.io/v1. A cluster lists each
served kind; `helm template` knows only group/versions, so the Kubernetes version decides there (v1 from 1.30).
*/}}
{{- define "kvguard.vapServed" -}}
{{- if or (include "kvguard.apiServed" (list . "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy")) (semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version) }}true{{- end }}
{{- end }}

{{/*
"true" when the policies confining kvguard's own writes are rendered: podWritePolicy.enabled means "where the
cluster serves ValidatingAdmissionPolicy", so the chart still installs on 1.27 to 1.29 (NOTES.txt says it skipped them).
*/}}
{{- define "kvguard.podWritePolicyOn" -}}
{{- if and .Values.podWritePolicy.enabled (include "kvguard.vapServed" .) }}true{{- end }}
{{- end }}

{{/* "true" when the operator issues the webhook's certificate itself and so patches its configuration's caBundle. */}}
{{- define "kvguard.selfManagedWebhookCertificate" -}}
{{- if and .Values.webhook.enabled (not .Values.webhook.certManager.enabled) }}true{{- end }}
{{- end }}

{{/* Settings that cannot be expressed in values.schema.json; rendering stops with the reason. */}}
{{- define "kvguard.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicaCount > 1 needs leaderElection.enabled=true: two active replicas would gate the same pods" }}
{{- end }}
{{- if and .Values.probeTls.enabled (empty .Values.probeTls.secretNames) (empty .Values.probeTls.configMapNames) }}
{{- fail "probeTls.enabled=true needs probeTls.secretNames or probeTls.configMapNames: the CA bundles kvguard may read" }}
{{- end }}
{{- if and .Values.probeCredentials.enabled (empty .Values.probeCredentials.secretNames) }}
{{- fail "probeCredentials.enabled=true needs probeCredentials.secretNames: the Secrets kvguard may read" }}
{{- end }}
{{- $monitoring := include "kvguard.apiServed" (list . "monitoring.coreos.com/v1") }}
{{- if and .Values.metrics.serviceMonitor.enabled (not $monitoring) }}
{{- fail "metrics.serviceMonitor.enabled=true, but this cluster serves no monitoring.coreos.com/v1: install the Prometheus Operator's CRDs first, or turn it off (helm template without a cluster: --api-versions monitoring.coreos.com/v1, or assumeApiVersions)" }}
{{- end }}
{{- if and .Values.metrics.prometheusRule.enabled (not $monitoring) }}
{{- fail "metrics.prometheusRule.enabled=true, but this cluster serves no monitoring.coreos.com/v1: install the Prometheus Operator's CRDs first, or turn it off (helm template without a cluster: --api-versions monitoring.coreos.com/v1, or assumeApiVersions)" }}
{{- end }}
{{- if and .Values.gateWritePolicy.enabled (not (include "kvguard.vapServed" .)) }}
{{- fail "gateWritePolicy.enabled=true needs ValidatingAdmissionPolicy in admissionregistration.k8s.io/v1 (Kubernetes 1.30 or later): without it nothing would stop tenants writing kvguard's gate; turn it off or upgrade the cluster" }}
{{- end }}
{{- if and .Values.webhook.enabled .Values.webhook.certManager.enabled (not (include "kvguard.apiServed" (list . "cert-manager.io/v1"))) }}
{{- fail "webhook.certManager.enabled=true, but this cluster serves no cert-manager.io/v1: install cert-manager first, or turn it off (the operator then issues the webhook's certificate itself); helm template without a cluster: --api-versions cert-manager.io/v1, or assumeApiVersions" }}
{{- end }}
{{- if and .Values.networkPolicy.enabled (empty .Values.networkPolicy.apiServer.cidrs) }}
{{- fail "networkPolicy.enabled=true needs networkPolicy.apiServer.cidrs (kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes)" }}
{{- end }}
{{- end }}

{{/* The webhook's objects: its Service, its MutatingWebhookConfiguration, the Secret with its key pair. */}}
{{- define "kvguard.webhookService" -}}
{{ include "kvguard.suffixedName" (list . "webhook") }}
{{- end }}
{{- define "kvguard.webhookConfiguration" -}}
{{ include "kvguard.objectName" (list . "readiness-gate") }}
{{- end }}
{{- define "kvguard.webhookSecret" -}}
{{ include "kvguard.objectName" (list . "webhook-tls") }}
{{- end }}
{{- define "kvguard.webhookCertificate" -}}
{{ include "kvguard.suffixedName" (list . "webhook") }}
{{- end }}
{{- define "kvguard.webhookIssuer" -}}
{{ include "kvguard.objectName" (list . "webhook-selfsigned") }}
{{- end }}
{{- define "kvguard.podWritePolicy" -}}
{{ include "kvguard.suffixedName" (list . "pod-writes") }}
{{- end }}
{{- define "kvguard.webhookCaWritePolicy" -}}
{{ include "kvguard.objectName" (list . "webhook-ca-writes") }}
{{- end }}
{{- define "kvguard.gateWritePolicy" -}}
{{ include "kvguard.objectName" (list . "gate-writes") }}
{{- end }}
{{/* The user kvguard's ServiceAccount authenticates as. */}}
{{- define "kvguard.serviceAccountUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "kvguard.serviceAccountName" . }}
{{- end }}
