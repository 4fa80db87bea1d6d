{{/* The chart's name, and the release's object names (the release name when it contains the chart's). */}}
{{- define "clusterdesk.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "clusterdesk.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Selector labels: deploy/'s app.kubernetes.io/name, and the release (two releases in one namespace select apart). */}}
{{- define "clusterdesk.selectorLabels" -}}
app.kubernetes.io/name: {{ include "clusterdesk.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "clusterdesk.labels" -}}
{{ include "clusterdesk.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "clusterdesk.approverSelectorLabels" -}}
app.kubernetes.io/name: {{ include "clusterdesk.name" . }}-approver
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "clusterdesk.approverLabels" -}}
{{ include "clusterdesk.approverSelectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "clusterdesk.image" -}}
{{- printf "%s:%s" .Values.image.repository (toString .Values.image.tag) -}}
{{- end -}}

{{/* oauth2-proxy runs in the pod: the Service's http port goes to it. */}}
{{- define "clusterdesk.oauth2Proxy" -}}
{{- if and (eq .Values.auth.mode "proxy") .Values.auth.proxy.oauth2Proxy.enabled -}}true{{- end -}}
{{- end -}}

{{/*
The refusals the schema cannot word: each says why. Included by every
template that depends on them, so `helm template` and `helm install` fail alike.
*/}}
{{- define "clusterdesk.validate" -}}
{{- $replicas := int .Values.replicas -}}
{{- if and (gt $replicas 1) (eq .Values.ledger.type "sqlite") -}}
{{- fail (printf "replicas is %d but ledger.type is sqlite: the SQLite ledger is one file that one process writes, on a volume one pod mounts, so replicas would each keep their own history (or fail to mount it). Set ledger.type=postgres with ledger.postgres.existingSecret for replicas, or replicas=1." $replicas) -}}
{{- end -}}
{{- if and (gt $replicas 1) (not .Values.sessionKeys.existingSecret) -}}
{{- fail (printf "replicas is %d but sessionKeys.existingSecret is not set: each replica would seal sessions and sign forms with keys of its own, so a request reaching another replica would be signed out or refused. Create a Secret with the key \"keys\" and name it in sessionKeys.existingSecret." $replicas) -}}
{{- end -}}
{{- if and (eq .Values.auth.mode "proxy") .Values.auth.proxy.oauth2Proxy.enabled (not (or .Values.auth.proxy.oauth2Proxy.redirectURL .Values.publicURL)) -}}
{{- fail "auth.proxy.oauth2Proxy needs publicURL (or auth.proxy.oauth2Proxy.redirectURL): oauth2-proxy sends people back to <publicURL>/oauth2/callback after they sign in." -}}
{{- end -}}
{{- if and .Values.roles.csrApprover.groups (not .Values.roles.csrApprover.signers) -}}
{{- fail "roles.csrApprover.groups is set but roles.csrApprover.signers is empty: the role grants `approve` on the signers it names, and a rule naming none would grant every signer. Name the signers the groups may approve for (e.g. kubernetes.io/kubelet-serving, or example.com/* for a domain)." -}}
{{- end -}}
{{- if and .Values.auth.proxy.oauth2Proxy.enabled (ne .Values.auth.mode "proxy") -}}
{{- fail (printf "auth.proxy.oauth2Proxy.enabled needs auth.mode=proxy (it is %s): oauth2-proxy names the user to a console in proxy mode." .Values.auth.mode) -}}
{{- end -}}
{{- end -}}

{{/*
The viewer's reads (roles.yaml): the kinds the console shows
(internal/kube/kinds.go) and what its pages look up as the person
(internal/kube/lookup.go): a webhook's Service and EndpointSlices, namespaces
for namespaceSelector, a kubelet CSR's Node, a CSI driver's users.
*/}}
{{- define "clusterdesk.viewerRules" }}
  - apiGroups: ["certificates.k8s.io"]
    resources: ["certificatesigningrequests"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["flowcontrol.apiserver.k8s.io"]
    resources: ["flowschemas", "prioritylevelconfigurations"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["apiextensions.k8s.io"]
    resources: ["customresourcedefinitions"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["admissionregistration.k8s.io"]
    resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations",
                "validatingadmissionpolicies", "validatingadmissionpolicybindings"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["storage.k8s.io"]
    resources: ["csidrivers"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["scheduling.k8s.io"]
    resources: ["priorityclasses"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["clusterdesk.io"]
    resources: ["csrapprovalpolicies"]
    verbs: ["get", "list", "watch"]
  - apiGroups: [""]
    resources: ["services", "nodes"]
    verbs: ["get"]
  - apiGroups: [""]
    resources: ["namespaces"]
    verbs: ["get", "list"]
  - apiGroups: ["discovery.k8s.io"]
    resources: ["endpointslices"]
    verbs: ["list"]
  - apiGroups: [""]
    resources: ["persistentvolumes"]
    verbs: ["list"]
  - apiGroups: ["storage.k8s.io"]
    resources: ["storageclasses", "csinodes", "volumeattachments"]
    verbs: ["list"]
{{- end -}}
