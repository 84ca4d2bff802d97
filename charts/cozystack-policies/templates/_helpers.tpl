{{/*
What each policy's metadata.yml declares (files/policies.yaml, written by
`make chart`), by policy name.
*/}}
{{- define "cozystack-policies.metadata" -}}
{{- .Files.Get "files/policies.yaml" -}}
{{- end }}

{{/*
The labels every object of the chart carries.
*/}}
{{- define "cozystack-policies.labels" -}}
app.kubernetes.io/part-of: cozystack-policies
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
A policy's values with their defaults: enabled (true), settings ({}) and
module ({}); (list $ "<policy>"). Its mode and failure policy come from
"cozystack-policies.mode" and "cozystack-policies.failurePolicy".
*/}}
{{- define "cozystack-policies.values" -}}
{{- $root := index . 0 -}}
{{- $values := index $root.Values.policies (index . 1) | default dict -}}
enabled: {{ ternary $values.enabled true (hasKey $values "enabled") }}
settings: {{ $values.settings | default dict | toJson }}
module: {{ $values.module | default dict | toJson }}
{{- end }}

{{/*
"true" for the policies that only report: upgrade-gate and upgrade-readiness
judge an object against the cluster around it (the snapshot target of
migration 50, the tenant quota tree, the platform's migration version), so
rejecting the object's write fixes nothing; their findings are for
audit-scanner's reports and the preflight. The chart-wide `mode` never
switches them: each stays in monitor unless its own `mode` says protect.
(list $ "<policy>").
*/}}
{{- define "cozystack-policies.reportOnly" -}}
{{- if has (index . 1) (list "upgrade-gate" "upgrade-readiness") }}true{{ end -}}
{{- end }}

{{/*
A policy's mode: its own `mode`, else monitor for a report-only policy and
the chart's `mode` for the others. (list $ "<policy>").
*/}}
{{- define "cozystack-policies.mode" -}}
{{- $root := index . 0 -}}
{{- $values := index $root.Values.policies (index . 1) | default dict -}}
{{- $default := ternary "monitor" $root.Values.mode (eq (include "cozystack-policies.reportOnly" .) "true") -}}
{{- $values.mode | default $default -}}
{{- end }}

{{/*
A policy's failurePolicy, what the API server does when the policy-server
does not answer (down, too slow, a request it cannot read): its own
`failurePolicy`, else Ignore in monitor, since a policy that rejects nothing
must not reject writes while its server is away, and Fail in protect, since
a protection that fails open protects nothing (Kubewarden's own charts do
the same: policy_failure_policy in kubewarden-defaults). (list $ "<policy>").
*/}}
{{- define "cozystack-policies.failurePolicy" -}}
{{- $root := index . 0 -}}
{{- $values := index $root.Values.policies (index . 1) | default dict -}}
{{- $values.failurePolicy | default (ternary "Fail" "Ignore" (eq (include "cozystack-policies.mode" .) "protect")) -}}
{{- end }}

{{/*
"true" when a policy is enabled: (list $ "<policy>").
*/}}
{{- define "cozystack-policies.enabled" -}}
{{- $values := include "cozystack-policies.values" . | fromYaml -}}
{{- if $values.enabled }}true{{ end -}}
{{- end }}

{{/*
The module a policy's ClusterAdmissionPolicy loads:
registry://<registry>/<policy>:<tag>[@<digest>].
*/}}
{{- define "cozystack-policies.module" -}}
{{- $root := index . 0 -}}
{{- $name := index . 1 -}}
{{- $metadata := index (include "cozystack-policies.metadata" $root | fromYaml) $name -}}
{{- $module := (include "cozystack-policies.values" . | fromYaml).module -}}
{{- $registry := $module.registry | default $root.Values.modules.registry | trimSuffix "/" -}}
{{- $tag := $module.tag | default (printf "v%s" $metadata.version) -}}
registry://{{ $registry }}/{{ $name }}:{{ $tag }}{{ with $module.digest }}@{{ . }}{{ end }}
{{- end }}

{{/*
The metadata of a policy's ClusterAdmissionPolicy: name, labels (a
report-only policy is labelled policies.cozystack.io/report-only, which
deploy/protect leaves as it is), and the severity and category audit-scanner
copies into its reports.
*/}}
{{- define "cozystack-policies.policyMetadata" -}}
{{- $root := index . 0 -}}
{{- $name := index . 1 -}}
{{- $metadata := index (include "cozystack-policies.metadata" $root | fromYaml) $name -}}
name: {{ $name }}
labels:
  {{- include "cozystack-policies.labels" $root | nindent 2 }}
  {{- if include "cozystack-policies.reportOnly" . }}
  policies.cozystack.io/report-only: "true"
  {{- end }}
annotations:
  io.kubewarden.policy.severity: {{ $metadata.severity | quote }}
  io.kubewarden.policy.category: {{ $metadata.category | quote }}
{{- end }}

{{/*
What every ClusterAdmissionPolicy of the chart holds as its metadata.yml and
the values say: the PolicyServer, module, mode, settings, rules (the
operations may be narrowed with "operations"), mutating, backgroundAudit,
contextAwareResources, and the webhook's namespaceSelector, timeouts and
failurePolicy. The template gives the policy's timeout ("timeoutSeconds"),
and "everyNamespace" true for a policy that looks into every namespace
(no-delete, which selects objects by label). (dict "root" $ "name"
"<policy>" "timeoutSeconds" <n> ["operations" (list ...)]
["everyNamespace" true]).
*/}}
{{- define "cozystack-policies.policySpec" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $metadata := index (include "cozystack-policies.metadata" $root | fromYaml) $name -}}
{{- $values := include "cozystack-policies.values" (list $root $name) | fromYaml -}}
{{- $own := index $root.Values.policies $name | default dict -}}
policyServer: {{ $root.Values.policyServer.name }}
module: {{ include "cozystack-policies.module" (list $root $name) }}
mode: {{ include "cozystack-policies.mode" (list $root $name) }}
{{- $settings := deepCopy ($values.settings | default dict) }}
{{- if and $metadata.releaseSetting (not (hasKey $settings "cozystackVersion")) }}
{{- $_ := set $settings "cozystackVersion" $root.Values.cozystackVersion }}
{{- end }}
{{- if $settings }}
settings:
  {{- toYaml $settings | nindent 2 }}
{{- else }}
settings: {}
{{- end }}
rules:
{{- range $metadata.rules }}
- apiGroups: {{ toJson .apiGroups }}
  apiVersions: {{ toJson .apiVersions }}
  resources: {{ toJson .resources }}
  operations: {{ toJson ($.operations | default .operations) }}
{{- end }}
mutating: {{ $metadata.mutating }}
backgroundAudit: {{ $metadata.backgroundAudit }}
contextAwareResources:
{{- if $metadata.contextAwareResources }}
  {{- toYaml $metadata.contextAwareResources | nindent 0 }}
{{- else }} []
{{- end }}
{{- include "cozystack-policies.namespaceSelector" (dict "root" $root "own" $own "everyNamespace" .everyNamespace) }}
timeoutSeconds: {{ $own.timeoutSeconds | default .timeoutSeconds }}
{{- with $own.timeoutEvalSeconds }}
timeoutEvalSeconds: {{ . }}
{{- end }}
failurePolicy: {{ include "cozystack-policies.failurePolicy" (list $root $name) }}
{{- end }}

{{/*
A policy's namespaceSelector: its own `namespaceSelector` as given, else the
namespaces it leaves out: the chart's `skipNamespaces` (kube-system) and
Kubewarden's namespace, unless the policy looks into every namespace, and
its own `skipNamespaces`; nothing to leave out, no selector. (Kubewarden's
controller keeps its own namespace off every webhook in any case.)
(dict "root" $ "own" <the policy's values> "everyNamespace" <bool>).
*/}}
{{- define "cozystack-policies.namespaceSelector" -}}
{{- $root := .root -}}
{{- if hasKey .own "namespaceSelector" }}
namespaceSelector:
  {{- toYaml .own.namespaceSelector | nindent 2 }}
{{- else }}
{{- $skipped := list }}
{{- if not .everyNamespace }}
{{- $skipped = concat $root.Values.skipNamespaces (list $root.Values.kubewardenNamespace) }}
{{- end }}
{{- $skipped = concat $skipped (.own.skipNamespaces | default list) | uniq }}
{{- with $skipped }}
namespaceSelector:
  matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: {{ toJson . }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The CEL condition that keeps the platform's upgrade identities off a
webhook: the service accounts of cozy-system (cozystack-api, the migration
hook, the tenant cleanup Jobs) and cozy-fluxcd (Flux).
*/}}
{{- define "cozystack-policies.notAPlatformUpgrade" -}}
name: not-a-platform-upgrade
expression: "!request.userInfo.groups.exists(g, g in ['system:serviceaccounts:cozy-system', 'system:serviceaccounts:cozy-fluxcd'])"
{{- end }}
