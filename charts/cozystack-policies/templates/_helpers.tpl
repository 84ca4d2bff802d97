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
A policy's values with their defaults: enabled (true), mode (the chart's),
settings ({}) and module ({}); (list $ "<policy>").
*/}}
{{- define "cozystack-policies.values" -}}
{{- $root := index . 0 -}}
{{- $values := index $root.Values.policies (index . 1) | default dict -}}
enabled: {{ ternary $values.enabled true (hasKey $values "enabled") }}
mode: {{ $values.mode | default $root.Values.mode }}
settings: {{ $values.settings | default dict | toJson }}
module: {{ $values.module | default dict | toJson }}
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
The metadata of a policy's ClusterAdmissionPolicy: name, labels, and the
severity and category audit-scanner copies into its reports.
*/}}
{{- define "cozystack-policies.policyMetadata" -}}
{{- $root := index . 0 -}}
{{- $name := index . 1 -}}
{{- $metadata := index (include "cozystack-policies.metadata" $root | fromYaml) $name -}}
name: {{ $name }}
labels:
  {{- include "cozystack-policies.labels" $root | nindent 2 }}
annotations:
  io.kubewarden.policy.severity: {{ $metadata.severity | quote }}
  io.kubewarden.policy.category: {{ $metadata.category | quote }}
{{- end }}

{{/*
What every ClusterAdmissionPolicy of the chart holds as its metadata.yml and
the values say: the PolicyServer, module, mode, settings, rules (the
operations may be narrowed with "operations"), mutating, backgroundAudit and
contextAwareResources. (dict "root" $ "name" "<policy>" ["operations" (list ...)]).
*/}}
{{- define "cozystack-policies.policySpec" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $metadata := index (include "cozystack-policies.metadata" $root | fromYaml) $name -}}
{{- $values := include "cozystack-policies.values" (list $root $name) | fromYaml -}}
policyServer: {{ $root.Values.policyServer.name }}
module: {{ include "cozystack-policies.module" (list $root $name) }}
mode: {{ $values.mode }}
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
{{- end }}

{{/*
The namespaces no policy but no-delete looks into: kube-system and
Kubewarden's own.
*/}}
{{- define "cozystack-policies.namespaceSelector" -}}
matchExpressions:
- key: kubernetes.io/metadata.name
  operator: NotIn
  values: [kube-system, {{ .Release.Namespace }}]
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
