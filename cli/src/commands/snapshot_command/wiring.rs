//! What `snapshot-command --wiring` adds to the capture: how the installed
//! bundle is wired on the cluster, for `wiring` to read.
//!
//! Through the script's `capture` function, whole: the
//! ClusterAdmissionPolicies and their status, the validating webhook
//! configurations Kubewarden made of them, the PodDisruptionBudgets,
//! audit-scanner's CronJob, the Namespaces (name and labels); by name, the
//! PolicyServer's Service; and trimmed to what `wiring` reads, the
//! PolicyServers (no `env`, which may hold anything), their Deployment's
//! status, and the reports (each result's policy and verdict, without the
//! message or the object). Through two functions of its own:
//!
//! - `discover`: the discovery document of each group version the
//!   bundle's rules name (`kubectl get --raw /apis/<group>/<version>`),
//!   what audit-scanner's REST mapper maps, as a [`SERVED_KIND`] document;
//! - `review`: a SubjectAccessReview per read audit-scanner and the
//!   PolicyServer's account need (the API server's own answer, every
//!   authorizer included), the accounts read from audit-scanner's CronJob
//!   and the PolicyServer.
//!
//! Each read is recorded as the capture records its own, so `wiring` tells
//! a kind the cluster lacks from one the credentials could not read.

use std::collections::BTreeSet;

use host::PolicyModule;

use crate::installation::{SERVED_API_VERSION, SERVED_KIND};

/// Where the bundle runs: Kubewarden's namespace, the PolicyServer's name.
#[derive(Debug, Clone, clap::Args)]
pub struct Where {
    /// Also capture how the installed bundle is wired (its policies and
    /// their webhooks, the PolicyServer, what the cluster serves, what
    /// audit-scanner's and the PolicyServer's accounts may read, the last
    /// audit run, the reports), for `cozystack-policies wiring`.
    #[arg(long)]
    pub wiring: bool,
    /// The namespace Kubewarden runs in (the chart's kubewardenNamespace).
    #[arg(long, default_value = "kubewarden", value_name = "NAMESPACE")]
    pub kubewarden_namespace: String,
    /// The PolicyServer the bundle runs on (the chart's policyServer.name).
    #[arg(long, default_value = "cozystack-policies", value_name = "NAME")]
    pub policy_server: String,
}

/// A `kubectl get` of the wiring capture: its words for `capture`.
pub struct WiringGet {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub resource: &'static str,
    /// `(namespace, name)` for one object.
    pub only: Option<(String, String)>,
    pub template: Option<String>,
}

/// A go-template that writes each object of a list as a document: its
/// `apiVersion`, `kind` and name, then `body` (go-template text over the
/// object, lines of YAML indented by two).
fn trimmed(api_version: &str, kind: &str, body: &str) -> String {
    format!(
        "{{{{range .items}}}}---\napiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: \
         {{{{.metadata.name}}}}\n{{{{with .metadata.namespace}}}}  namespace: {{{{.}}}}\n{{{{end}}}}{body}{{{{end}}}}"
    )
}

/// What a report keeps: its scope and, per result, the policy and the
/// verdict (the message names the tenant's object and values: left out).
fn report_template(api_version: &str, kind: &str) -> String {
    trimmed(
        api_version,
        kind,
        "{{with .scope}}scope: {kind: '{{.kind}}', name: '{{.name}}'}\n{{end}}results:\n\
         {{range .results}}- {policy: '{{.policy}}', result: '{{.result}}'}\n{{end}}",
    )
}

/// The reads of the wiring capture, in order.
pub fn gets(place: &Where) -> Vec<WiringGet> {
    let ns = &place.kubewarden_namespace;
    let server = &place.policy_server;
    let whole = |api_version, kind, resource| WiringGet {
        api_version,
        kind,
        resource,
        only: None,
        template: None,
    };
    vec![
        whole(
            "policies.kubewarden.io/v1",
            "ClusterAdmissionPolicy",
            "clusteradmissionpolicies.policies.kubewarden.io",
        ),
        WiringGet {
            template: Some(trimmed(
                "policies.kubewarden.io/v1",
                "PolicyServer",
                "spec:\n  image: '{{.spec.image}}'\n  replicas: {{.spec.replicas}}\n\
                 {{with .spec.serviceAccountName}}  serviceAccountName: '{{.}}'\n{{end}}\
                 {{with .spec.minAvailable}}  minAvailable: '{{.}}'\n{{end}}\
                 {{with .spec.maxUnavailable}}  maxUnavailable: '{{.}}'\n{{end}}",
            )),
            ..whole(
                "policies.kubewarden.io/v1",
                "PolicyServer",
                "policyservers.policies.kubewarden.io",
            )
        },
        whole(
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations.admissionregistration.k8s.io",
        ),
        WiringGet {
            only: Some((ns.clone(), format!("policy-server-{server}"))),
            template: Some(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{.metadata.name}}\n  \
                 namespace: {{.metadata.namespace}}\nspec:\n  replicas: {{.spec.replicas}}\nstatus:\n  \
                 replicas: {{or .status.replicas 0}}\n  readyReplicas: {{or .status.readyReplicas 0}}\n  \
                 updatedReplicas: {{or .status.updatedReplicas 0}}\n"
                    .to_owned(),
            ),
            ..whole("apps/v1", "Deployment", "deployments.apps")
        },
        WiringGet {
            only: Some((ns.clone(), format!("policy-server-{server}"))),
            ..whole("v1", "Service", "services")
        },
        whole(
            "policy/v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets.policy",
        ),
        WiringGet {
            only: Some((ns.clone(), "audit-scanner".to_owned())),
            ..whole("batch/v1", "CronJob", "cronjobs.batch")
        },
        WiringGet {
            template: Some(trimmed(
                "v1",
                "Namespace",
                "{{with .metadata.labels}}  labels:\n{{range $k, $v := .}}    '{{$k}}': '{{$v}}'\n{{end}}{{end}}",
            )),
            ..whole("v1", "Namespace", "namespaces")
        },
        WiringGet {
            template: Some(report_template("openreports.io/v1alpha1", "Report")),
            ..whole("openreports.io/v1alpha1", "Report", "reports.openreports.io")
        },
        WiringGet {
            template: Some(report_template("openreports.io/v1alpha1", "ClusterReport")),
            ..whole(
                "openreports.io/v1alpha1",
                "ClusterReport",
                "clusterreports.openreports.io",
            )
        },
        WiringGet {
            template: Some(report_template("wgpolicyk8s.io/v1alpha2", "PolicyReport")),
            ..whole("wgpolicyk8s.io/v1alpha2", "PolicyReport", "policyreports.wgpolicyk8s.io")
        },
        WiringGet {
            template: Some(report_template(
                "wgpolicyk8s.io/v1alpha2",
                "ClusterPolicyReport",
            )),
            ..whole(
                "wgpolicyk8s.io/v1alpha2",
                "ClusterPolicyReport",
                "clusterpolicyreports.wgpolicyk8s.io",
            )
        },
    ]
}

/// The functions the wiring reads need besides `capture`.
const FUNCTIONS: &str = r#"classify() { # how the kubectl call that wrote $tmp/error ended
  case $(cat "$tmp/error") in
    *NotFound*|*"could not find the requested resource"*) echo not-installed ;;
    *"(Forbidden)"*|*" is forbidden: "*) echo forbidden ;;
    *[Tt]imeout*|*"deadline exceeded"*) echo timeout ;;
    *) echo failed ;;
  esac
}
record() { # API_VERSION KIND RESOURCE NAME RESULT: a read of the wiring capture
  { echo "- apiVersion: $1"; echo "  kind: $2"; echo "  resource: $3"; echo "  name: '$4'"; echo "  result: $5"
    if [ "$5" != captured ] && [ "$5" != not-installed ]; then
      failed=$((failed + 1)); echo "kubectl $3 $4: $5: $(head -n 1 "$tmp/error")" >&2
      printf "  message: '%s'\n" "$(head -n 1 "$tmp/error" | sed "s/'/''/g")"
    fi; } >>"$tmp/reads"
}
discover() { # GROUP-VERSION: its discovery document, as audit-scanner's REST mapper reads it
  local gv=$1 path result=captured
  case $gv in */*) path=/apis/$gv ;; *) path=/api/$gv ;; esac
  if kubectl --request-timeout=60s get --raw "$path" >"$tmp/objects" 2>"$tmp/error"; then
    { echo ---; echo "apiVersion: @SERVED_API_VERSION@"; echo "kind: @SERVED_KIND@"
      echo "metadata: {name: '$gv'}"; echo "discovery:"; sed 's/^/  /' "$tmp/objects"; echo; } >>"$out"
  else
    result=$(classify)
  fi
  record "$gv" @SERVED_KIND@ discovery "$gv" "$result"
}
review() { # NAMESPACE ACCOUNT VERB GROUP RESOURCE [NAME]: a SubjectAccessReview for the batch
  printf -- '---\napiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  user: "system:serviceaccount:%s:%s"\n  groups: [system:serviceaccounts, "system:serviceaccounts:%s", system:authenticated]\n  resourceAttributes: {verb: %s, group: "%s", resource: %s%s}\n' \
    "$1" "$2" "$1" "$3" "$4" "$5" "${6:+, name: $6}" >>"$tmp/reviews"
}"#;

/// The go-template a SubjectAccessReview's answer is kept with: the
/// review's own object has no name (the API refuses one), a snapshot's
/// objects need one.
const REVIEW_TEMPLATE: &str = "---\napiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\n\
metadata:\n  name: '{{.spec.user}} {{.spec.resourceAttributes.verb}} {{.spec.resourceAttributes.resource}}\
{{with .spec.resourceAttributes.group}}.{{.}}{{end}}{{with .spec.resourceAttributes.name}} {{.}}{{end}}'\n\
spec:\n  user: '{{.spec.user}}'\n  resourceAttributes: {verb: '{{.spec.resourceAttributes.verb}}', \
group: '{{.spec.resourceAttributes.group}}', resource: '{{.spec.resourceAttributes.resource}}'\
{{with .spec.resourceAttributes.name}}, name: '{{.}}'{{end}}}\nstatus:\n  allowed: {{.status.allowed}}\n";

/// One read the PolicyServer's account needs: verb, group, resource and,
/// for a read by name, the name (empty otherwise).
type Review = (String, String, String, String);

/// The access reviews: audit-scanner's `list` of every resource a rule
/// with CREATE names (what it would audit), as (group, resource), and the
/// PolicyServer's reads of the kinds the policies look up (`get` of the
/// objects they read by name, `list` of the others).
fn reviews(modules: &[PolicyModule]) -> (BTreeSet<(String, String)>, BTreeSet<Review>) {
    let mut listed = BTreeSet::new();
    let mut read = BTreeSet::new();
    for metadata in modules.iter().filter_map(PolicyModule::metadata) {
        for rule in &metadata.rules {
            let creates = serde_json::to_value(&rule.operations)
                .ok()
                .is_some_and(|ops| ops.as_array().is_some_and(|o| o.iter().any(|o| o == "CREATE")));
            if !creates {
                continue;
            }
            for group in rule.api_groups.iter().filter(|g| *g != "*") {
                for resource in rule.resources.iter().filter(|r| *r != "*") {
                    listed.insert((group.clone(), resource.clone()));
                }
            }
        }
        let named: Vec<(String, String, String)> = metadata
            .reads_by_name()
            .unwrap_or_default()
            .into_iter()
            .map(|n| (n.api_version, n.kind, n.name))
            .chain(
                metadata
                    .secrets()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(_, name)| ("v1".to_owned(), "Secret".to_owned(), name)),
            )
            .collect();
        for kind in &metadata.context_aware_resources {
            let (group, _) = shared::apps::group_version(&kind.api_version);
            let resource = shared::apps::plural(group, &kind.kind);
            let names: Vec<&String> = named
                .iter()
                .filter(|(v, k, _)| *v == kind.api_version && *k == kind.kind)
                .map(|(_, _, n)| n)
                .collect();
            if names.is_empty() {
                read.insert(("list".into(), group.to_owned(), resource.clone(), String::new()));
            }
            for name in names {
                read.insert(("get".into(), group.to_owned(), resource.clone(), name.clone()));
            }
        }
    }
    (listed, read)
}

/// The group versions the bundle's rules name, for `discover`.
fn group_versions(modules: &[PolicyModule]) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for metadata in modules.iter().filter_map(PolicyModule::metadata) {
        for rule in &metadata.rules {
            for group in rule.api_groups.iter().filter(|g| *g != "*") {
                for version in rule.api_versions.iter().filter(|v| *v != "*") {
                    all.insert(if group.is_empty() {
                        version.clone()
                    } else {
                        format!("{group}/{version}")
                    });
                }
            }
        }
    }
    all
}

/// The shell lines of the wiring capture that `capture` cannot make: the
/// functions, the discovery of every group version, the access reviews.
pub fn script(modules: &[PolicyModule], place: &Where, quoted: fn(&str) -> String) -> String {
    let mut out = FUNCTIONS
        .replace("@SERVED_API_VERSION@", SERVED_API_VERSION)
        .replace("@SERVED_KIND@", SERVED_KIND);
    out.push('\n');
    for gv in group_versions(modules) {
        out.push_str(&format!("discover {}\n", quoted(&gv)));
    }
    let ns = quoted(&place.kubewarden_namespace);
    let server = quoted(&place.policy_server);
    out.push_str(&format!(
        ": >\"$tmp/reviews\"\n\
         scanner=$(kubectl get cronjobs.batch -n {ns} audit-scanner \
         -o 'jsonpath={{.spec.jobTemplate.spec.template.spec.serviceAccountName}}' 2>\"$tmp/error\") || scanner=\n\
         server_account=$(kubectl get policyservers.policies.kubewarden.io {server} \
         -o 'jsonpath={{.spec.serviceAccountName}}' 2>\"$tmp/error\") || server_account=\n"
    ));
    let (listed, read) = reviews(modules);
    out.push_str("if [ -n \"$scanner\" ]; then\n");
    for (group, resource) in &listed {
        out.push_str(&format!(
            "  review {ns} \"$scanner\" list {} {}\n",
            quoted(group),
            quoted(resource)
        ));
    }
    out.push_str("fi\nif [ -n \"$server_account\" ]; then\n");
    for (verb, group, resource, name) in &read {
        let name = if name.is_empty() {
            String::new()
        } else {
            format!(" {}", quoted(name))
        };
        out.push_str(&format!(
            "  review {ns} \"$server_account\" {verb} {} {}{name}\n",
            quoted(group),
            quoted(resource)
        ));
    }
    out.push_str(&format!(
        "fi\n\
         if [ -s \"$tmp/reviews\" ]; then\n  \
         if kubectl --request-timeout=60s create -f \"$tmp/reviews\" -o {} >\"$tmp/objects\" 2>\"$tmp/error\"; then\n    \
         cat \"$tmp/objects\" >>\"$out\"; result=captured\n  \
         else\n    result=$(classify)\n  fi\n  \
         record authorization.k8s.io/v1 SubjectAccessReview subjectaccessreviews \"$scanner $server_account\" \"$result\"\n\
         fi\n",
        quoted(&format!("go-template={REVIEW_TEMPLATE}"))
    ));
    out
}
