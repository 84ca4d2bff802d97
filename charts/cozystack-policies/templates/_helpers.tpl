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
the values say: the PolicyServer, module, mode, settings, rules
("cozystack-policies.rules"; the operations may be narrowed with
"operations"), mutating, backgroundAudit, contextAwareResources, and the
webhook's namespaceSelector, timeouts and failurePolicy. "everyNamespace"
true is for a policy that looks into every namespace (no-delete, which
selects objects by label). (dict "root" $ "name" "<policy>" ["operations"
(list ...)] ["everyNamespace" true]).
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
{{- range include "cozystack-policies.rules" . | fromYamlArray }}
- apiGroups: {{ toJson .apiGroups }}
  apiVersions: {{ toJson .apiVersions }}
  resources: {{ toJson .resources }}
  operations: {{ toJson .operations }}
{{- end }}
mutating: {{ $metadata.mutating }}
backgroundAudit: {{ $metadata.backgroundAudit }}
{{- $reads := include "cozystack-policies.contextAwareResources" (list $root $name) | fromYamlArray }}
contextAwareResources:
{{- if $reads }}
  {{- toYaml $reads | nindent 0 }}
{{- else }} []
{{- end }}
{{- include "cozystack-policies.namespaceSelector" (dict "root" $root "own" $own "everyNamespace" .everyNamespace) }}
{{- $timeout := $own.timeoutSeconds | default $metadata.timeoutSeconds | int }}
timeoutSeconds: {{ $timeout }}
timeoutEvalSeconds: {{ $own.timeoutEvalSeconds | default (max 2 (sub $timeout 1)) }}
failurePolicy: {{ include "cozystack-policies.failurePolicy" (list $root $name) }}
{{- end }}

{{/*
A policy's webhook rules, from its metadata.yml (files/policies.yaml), kept
auditable on the cluster at hand. audit-scanner errors a policy, on every
resource, when one resource of its CREATE rules is not served
(kubewarden-controller internal/audit-scanner/policies/client.go:265-272,
before it looks at backgroundAudit); a Cozystack cluster serves only the
kinds of the packages it installed. So where Helm's capabilities list
Kubewarden's API (an install or an upgrade against a cluster; offline, as
in `helm template`, every rule stays as it is), each CREATE rule keeps the
resources the cluster serves and moves the others into a rule of their own
with apiVersions ["*"]: audit-scanner drops a rule with a wildcard before it
looks anything up (client.go:249, 451-464), while the API server still
sends the policy every request for those resources once they are served.
A package enabled later is admitted at once and audited from the next
`helm upgrade`; `cozystack-policies wiring` says which kinds wait for it.
A resource counts as served when its kind is listed, or when its group
version is listed without any kind the bundle knows of it: that is
discovery of the version failing (an aggregated API not answering), and
the resource stays audited. (dict "root" $ "name" "<policy>"
["operations" (list ...)]) -> a YAML list of rules.
*/}}
{{- define "cozystack-policies.rules" -}}
{{- $root := .root -}}
{{- $all := include "cozystack-policies.metadata" $root | fromYaml -}}
{{- $metadata := index $all .name -}}
{{- $capabilities := $root.Capabilities.APIVersions -}}
{{- $online := $capabilities.Has "policies.kubewarden.io/v1" -}}
{{- $rules := list -}}
{{- range $rule := $metadata.rules -}}
{{- $operations := $.operations | default $rule.operations -}}
{{- $wildcard := or (has "*" $rule.apiGroups) (has "*" $rule.apiVersions) (has "*" $rule.resources) -}}
{{- if or (not $online) $wildcard (not (has "CREATE" $operations)) -}}
{{- $rules = append $rules (dict "apiGroups" $rule.apiGroups "apiVersions" $rule.apiVersions "resources" $rule.resources "operations" $operations) -}}
{{- else -}}
{{- $group := first $rule.apiGroups -}}
{{- $groupVersion := ternary (first $rule.apiVersions) (printf "%s/%s" $group (first $rule.apiVersions)) (eq $group "") -}}
{{- $listed := false -}}
{{- range $other := $all -}}
{{- range $kind := values (index ($other.kinds | default dict) $group | default dict) -}}
{{- if $capabilities.Has (printf "%s/%s" $groupVersion $kind) }}{{ $listed = true }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $discoveryFailed := and ($capabilities.Has $groupVersion) (not $listed) -}}
{{- $served := list -}}
{{- $absent := list -}}
{{- range $resource := $rule.resources -}}
{{- $kind := index $metadata.kinds $group $resource -}}
{{- if or $discoveryFailed ($capabilities.Has (printf "%s/%s" $groupVersion $kind)) -}}
{{- $served = append $served $resource -}}
{{- else -}}
{{- $absent = append $absent $resource -}}
{{- end -}}
{{- end -}}
{{- with $served -}}
{{- $rules = append $rules (dict "apiGroups" $rule.apiGroups "apiVersions" $rule.apiVersions "resources" . "operations" $operations) -}}
{{- end -}}
{{- with $absent -}}
{{- $rules = append $rules (dict "apiGroups" $rule.apiGroups "apiVersions" (list "*") "resources" . "operations" $operations) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $rules -}}
{{- end }}

{{/*
The kinds a policy reads through the PolicyServer (its metadata.yml's
contextAwareResources), without HelmReleases when
policyServer.serviceAccount.readHelmReleases is false: their values hold
the tenants' application credentials. policy-server then refuses the
policy's HelmRelease reads, and the rules that need them report NOT
CHECKED. (list $ "<policy>") -> a YAML list.
*/}}
{{- define "cozystack-policies.contextAwareResources" -}}
{{- $root := index . 0 -}}
{{- $metadata := index (include "cozystack-policies.metadata" $root | fromYaml) (index . 1) -}}
{{- $reads := list -}}
{{- range $metadata.contextAwareResources -}}
{{- if or $root.Values.policyServer.serviceAccount.readHelmReleases (ne .apiVersion "helm.toolkit.fluxcd.io/v2") -}}
{{- $reads = append $reads . -}}
{{- end -}}
{{- end -}}
{{- toYaml $reads -}}
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
