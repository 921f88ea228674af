{{/* Names, labels and the pieces several templates share. */}}

{{- define "gpuadmit.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpuadmit.fullname" -}}
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

{{- define "gpuadmit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gpuadmit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gpuadmit.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "gpuadmit.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "gpuadmit.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gpuadmit.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The policy text: values.policy, or the chart's copy of the embedded default. */}}
{{- define "gpuadmit.policyText" -}}
{{- if .Values.policy -}}
{{- .Values.policy -}}
{{- else -}}
{{- .Files.Get "files/default-policy.yaml" -}}
{{- end -}}
{{- end -}}

{{- define "gpuadmit.policyConfigMap" -}}
{{- default (printf "%s-policy" (include "gpuadmit.fullname" .)) .Values.existingPolicyConfigMap -}}
{{- end -}}

{{- /* The registrar writes the webhook configurations (register --register-webhooks). */ -}}
{{- define "gpuadmit.registersWebhooks" -}}
{{- and .Values.webhook.enabled (eq .Values.webhook.registration "gpuadmit") -}}
{{- end -}}

{{- /* The chart renders the webhook configurations. */ -}}
{{- define "gpuadmit.rendersWebhooks" -}}
{{- and .Values.webhook.enabled (eq .Values.webhook.registration "chart") -}}
{{- end -}}

{{- /* The server reads the Kubernetes API (a service-account token is mounted): true/false. It
never writes to it: registration is the registrar's (templates/registrar.yaml). */ -}}
{{- define "gpuadmit.usesApi" -}}
{{- or .Values.priorityClasses.fromCluster .Values.nodeWatch.enabled .Values.dra.lookup.enabled -}}
{{- end -}}

{{- /* The registrar runs (`gpuadmit register --watch`): it has something to register. */ -}}
{{- define "gpuadmit.registrar" -}}
{{- or (include "gpuadmit.registersWebhooks" . | eq "true") .Values.native.enabled -}}
{{- end -}}

{{- define "gpuadmit.registrarName" -}}
{{- printf "%s-registrar" (include "gpuadmit.fullname" . | trunc 53 | trimSuffix "-") -}}
{{- end -}}

{{- /* The registrar's Pods: another app.kubernetes.io/name, so that neither the server's Service
nor its Deployment, PodDisruptionBudget or NetworkPolicy (which select the server's labels)
selects them. */ -}}
{{- define "gpuadmit.registrarSelectorLabels" -}}
app.kubernetes.io/name: {{ include "gpuadmit.name" . | trunc 53 | trimSuffix "-" }}-registrar
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: registrar
{{- end -}}

{{- define "gpuadmit.tlsSecretName" -}}
{{- if eq .Values.certificates.mode "existingSecret" -}}
{{- .Values.certificates.existingSecret.name -}}
{{- else -}}
{{- printf "%s-tls" (include "gpuadmit.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/*
The namespaces both webhooks skip, as a JSON list, sorted: kube-system and kube-node-lease
(always), the release namespace, the policy's exempt namespaces that are literal names (a DNS
label matches only itself as an RE2 pattern) and webhook.excludeNamespaces.
render/webhook_configuration.cc excluded_namespaces() does the same.
*/}}
{{- define "gpuadmit.excludedNamespaces" -}}
{{- $names := list .Release.Namespace "kube-system" "kube-node-lease" -}}
{{- if not .Values.existingPolicyConfigMap -}}
{{- $policy := include "gpuadmit.policyText" . | fromYaml -}}
{{- $spec := default dict $policy.spec -}}
{{- $enforcement := default dict $spec.enforcement -}}
{{- $exempt := default dict $enforcement.exempt -}}
{{- range $exempt.namespaces -}}
{{- if and (kindIs "string" .) (regexMatch "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$" .) -}}
{{- $names = append $names . -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $names = concat $names .Values.webhook.excludeNamespaces -}}
{{- $names | uniq | sortAlpha | toJson -}}
{{- end -}}

{{/* A policy workload kind's resource name, as render/webhook_configuration.cc
plural_resource() (the built-in kinds' come with files/webhook-rules.yaml). */}}
{{- define "gpuadmit.plural" -}}
{{- $k := lower . -}}
{{- if or (hasSuffix "s" $k) (hasSuffix "x" $k) (hasSuffix "z" $k) (hasSuffix "ch" $k) (hasSuffix "sh" $k) -}}
{{- printf "%ses" $k -}}
{{- else if regexMatch "[^aeiou]y$" $k -}}
{{- printf "%sies" (trimSuffix "y" $k) -}}
{{- else -}}
{{- printf "%ss" $k -}}
{{- end -}}
{{- end -}}

{{/*
The webhook rules, as a JSON list: files/webhook-rules.yaml (what `gpuadmit render` makes for
the engine's built-in and DRA kinds; tests/k8s/chart_test.mjs keeps it so), then the policy's
`workloads` (CREATE and UPDATE, in the version they name), merged into the rule of their group
and version as render does.
*/}}
{{- define "gpuadmit.webhookRules" -}}
{{- $rules := .Files.Get "files/webhook-rules.yaml" | fromYamlArray -}}
{{- if not .Values.existingPolicyConfigMap -}}
{{- $policy := include "gpuadmit.policyText" . | fromYaml -}}
{{- $spec := default dict $policy.spec -}}
{{- range $w := default list $spec.workloads -}}
{{- if $w.podSpecs -}}
{{- $group := "" -}}{{- $version := $w.apiVersion -}}
{{- if contains "/" $w.apiVersion -}}
{{- $group = first (splitList "/" $w.apiVersion) -}}{{- $version = last (splitList "/" $w.apiVersion) -}}
{{- end -}}
{{- $resource := include "gpuadmit.plural" $w.kind -}}
{{- $known := false -}}
{{- range $rules -}}
{{- if and (eq (index .apiGroups 0) $group) (has (index .apiVersions 0) (list "*" $version)) (has $resource .resources) -}}{{- $known = true -}}{{- end -}}
{{- end -}}
{{- if not $known -}}
{{- $target := dict -}}
{{- range $rules -}}
{{- if and (eq (index .apiGroups 0) $group) (eq (index .apiVersions 0) $version) (eq (toJson .operations) "[\"CREATE\",\"UPDATE\"]") (not $target.apiGroups) -}}{{- $target = . -}}{{- end -}}
{{- end -}}
{{- if $target.apiGroups -}}
{{- $_ := set $target "resources" (append $target.resources $resource) -}}
{{- else -}}
{{- $rules = append $rules (dict "apiGroups" (list $group) "apiVersions" (list $version) "operations" (list "CREATE" "UPDATE") "resources" (list $resource) "scope" "Namespaced") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $rules | toJson -}}
{{- end -}}

{{/*
The validating webhook's rules, as a JSON list: gpuadmit.webhookRules and every Pod UPDATE, which
its matchConditions narrow to those that change placement or CDI devices (gpuadmit render's
pod_update_rule; docs/decisions.md, "Pod UPDATE").
*/}}
{{- define "gpuadmit.validatingWebhookRules" -}}
{{- $rules := include "gpuadmit.webhookRules" . | fromJsonArray -}}
{{- $rules = append $rules (dict "apiGroups" (list "") "apiVersions" (list "*") "operations" (list "UPDATE") "resources" (list "pods") "scope" "Namespaced") -}}
{{- $rules | toJson -}}
{{- end -}}

{{/*
The validating webhook's matchCondition for Pod UPDATE: every request but a Pod UPDATE that
changes none of spec.tolerations, spec.nodeSelector, spec.affinity, spec.schedulingGates and the
cdi.k8s.io/ annotations and the kueue.x-k8s.io/queue-name and kueue.x-k8s.io/priority-class
labels, and keeps its controller ownerReference — gpuadmit render's pod_update_condition,
character for character
(render/webhook_configuration.cc; tests/k8s/chart_test.mjs compares them).
*/}}
{{- define "gpuadmit.podUpdateCondition" -}}
request.operation != 'UPDATE' || request.resource.group != '' || request.resource.resource != 'pods' || (has(request.subResource) && request.subResource != '') || [((type(object) == map && 'spec' in object && type(object['spec']) == map) ? object['spec'] : {})].map(s, [((type(oldObject) == map && 'spec' in oldObject && type(oldObject['spec']) == map) ? oldObject['spec'] : {})].map(o, [[((type(object) == map && 'metadata' in object && type(object['metadata']) == map) ? object['metadata'] : {})].map(mv, ((type(mv) == map && 'annotations' in mv && type(mv['annotations']) == map) ? mv['annotations'] : {}))[0]].map(a, [[((type(oldObject) == map && 'metadata' in oldObject && type(oldObject['metadata']) == map) ? oldObject['metadata'] : {})].map(mv, ((type(mv) == map && 'annotations' in mv && type(mv['annotations']) == map) ? mv['annotations'] : {}))[0]].map(b, ['tolerations', 'nodeSelector', 'affinity', 'schedulingGates'].exists(f, (f in s) != (f in o) || (f in s && s[f] != o[f])) || a.exists(k, k.startsWith('cdi.k8s.io/') && (!(k in b) || a[k] != b[k])) || b.exists(k, k.startsWith('cdi.k8s.io/') && !(k in a)))[0])[0])[0])[0] || [[((type(object) == map && 'metadata' in object && type(object['metadata']) == map) ? object['metadata'] : {})].map(mv, ((type(mv) == map && 'labels' in mv && type(mv['labels']) == map) ? mv['labels'] : {}))[0]].map(l, [[((type(oldObject) == map && 'metadata' in oldObject && type(oldObject['metadata']) == map) ? oldObject['metadata'] : {})].map(mv, ((type(mv) == map && 'labels' in mv && type(mv['labels']) == map) ? mv['labels'] : {}))[0]].map(m, ['kueue.x-k8s.io/queue-name', 'kueue.x-k8s.io/priority-class'].exists(k, (k in l) != (k in m) || (k in l && l[k] != m[k])))[0])[0] || [[((type(object) == map && 'metadata' in object && type(object['metadata']) == map) ? object['metadata'] : {})].map(mv, ((type(mv) == map && 'ownerReferences' in mv && type(mv['ownerReferences']) == list) ? mv['ownerReferences'] : []))[0].filter(o, type(o) == map && 'controller' in o && o.controller == true)].map(cn, [[((type(oldObject) == map && 'metadata' in oldObject && type(oldObject['metadata']) == map) ? oldObject['metadata'] : {})].map(mv, ((type(mv) == map && 'ownerReferences' in mv && type(mv['ownerReferences']) == list) ? mv['ownerReferences'] : []))[0].filter(o, type(o) == map && 'controller' in o && o.controller == true)].map(co, size(co) > 0 && (size(cn) == 0 || (('apiVersion' in cn[0] && type(cn[0]['apiVersion']) == string) ? cn[0]['apiVersion'] : '') != (('apiVersion' in co[0] && type(co[0]['apiVersion']) == string) ? co[0]['apiVersion'] : '') || (('kind' in cn[0] && type(cn[0]['kind']) == string) ? cn[0]['kind'] : '') != (('kind' in co[0] && type(co[0]['kind']) == string) ? co[0]['kind'] : '') || (('name' in cn[0] && type(cn[0]['name']) == string) ? cn[0]['name'] : '') != (('name' in co[0] && type(co[0]['name']) == string) ? co[0]['name'] : '') || (('uid' in cn[0] && type(cn[0]['uid']) == string) ? cn[0]['uid'] : '') != (('uid' in co[0] && type(co[0]['uid']) == string) ? co[0]['uid'] : '')))[0])[0]
{{- end -}}

{{/*
The mutating webhook's rules, as a JSON list: gpuadmit.webhookRules, without the workload
templates (the rules with CREATE and UPDATE) when webhook.templates is validate, as `gpuadmit
render --templates validate` makes them: templates then go to the validating webhook alone.
*/}}
{{- define "gpuadmit.mutatingWebhookRules" -}}
{{- $rules := include "gpuadmit.webhookRules" . | fromJsonArray -}}
{{- if eq .Values.webhook.templates "validate" -}}
{{- $pods := list -}}
{{- range $rules -}}
{{- if ne (toJson .operations) "[\"CREATE\",\"UPDATE\"]" -}}{{- $pods = append $pods . -}}{{- end -}}
{{- end -}}
{{- $rules = $pods -}}
{{- end -}}
{{- $rules | toJson -}}
{{- end -}}
