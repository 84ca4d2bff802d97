//! Kubewarden's audit-scanner choosing what to audit, from its source:
//! kubewarden/kubewarden-controller (the monorepo, renamed adm-controller
//! with 1.36) at 3460bb71 (2026-05-21), `internal/audit-scanner/`; every
//! branch below cites its file there (`policies/client.go:249`).
//!
//! A run (`cmd/audit-scanner/root.go:204-218`) scans the cluster-wide
//! resources, then each namespace but Kubewarden's own and those of
//! `--ignore-namespaces` (`k8s/client.go:34-44, 77-90`). For each pass it
//! groups the policies by the resources they audit
//! (`policies/client.go:239-327`, [`outcome`]), in this order:
//!
//! 1. a rule with `*` in its groups, versions or resources is dropped; a
//!    policy left without rules is skipped ([`Skip::OnlyWildcardRules`]);
//! 2. a rule without `CREATE` is dropped; a policy left without rules is
//!    skipped ([`Skip::NoCreateRule`]);
//! 3. every group × version × resource of the remaining rules is looked up
//!    in the cluster's REST mapper (discovery); **one the cluster does not
//!    serve errors the whole policy**, on every resource of every pass
//!    ([`Errored::UnknownResource`]): this comes before the checks below,
//!    so a policy with `backgroundAudit: false` errors too;
//! 4. a policy with no resource of the pass's scope is left out of the pass
//!    ([`Outcome::OutOfScope`]), neither skipped nor errored;
//! 5. `backgroundAudit: false` skips it ([`Skip::BackgroundAuditOff`]);
//! 6. a policy whose status is not `active` is skipped ([`Skip::NotActive`]);
//! 7. a policy whose PolicyServer or its Service cannot be found errors
//!    ([`Errored::PolicyServer`]);
//! 8. otherwise it is audited on those resources ([`Outcome::Audited`]).
//!
//! Then, for each resource, audit-scanner lists the objects as its own
//! service account; a list that fails (forbidden, say) is logged and that
//! resource alone goes unaudited (`scanner/scanner.go:185-194, 295-303`).
//! Each object is sent to the policies whose `objectSelector` selects it
//! (`scanner/scanner.go:348-355, 437-444, 498-514`) as a CREATE; the
//! webhook's `matchConditions` are not evaluated, so a policy that narrows
//! its traffic with them is asked about every object of its resources.
//! Skipped and errored policies are counted in every report's summary
//! (`scanner/scanner.go:400-402, 430-432`).

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::label_selector::{self, SelectorError};

/// A resource as a webhook rule names it and audit-scanner lists it:
/// group (`""` for the core group), version and plural.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Gvr {
    pub group: String,
    pub version: String,
    pub resource: String,
}

impl Gvr {
    pub fn new(group: &str, version: &str, resource: &str) -> Self {
        Self {
            group: group.to_owned(),
            version: version.to_owned(),
            resource: resource.to_owned(),
        }
    }
}

impl fmt::Display for Gvr {
    /// `apps.cozystack.io/v1alpha1/postgreses`, `v1/namespaces`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}/{}", self.version, self.resource)
        } else {
            write!(f, "{}/{}/{}", self.group, self.version, self.resource)
        }
    }
}

/// One webhook rule (`admissionregistration/v1` `RuleWithOperations`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    #[serde(default)]
    pub api_groups: Vec<String>,
    #[serde(default)]
    pub api_versions: Vec<String>,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default)]
    pub operations: Vec<String>,
}

impl Rule {
    /// `policies/client.go:451-464` (`filterWildcardRules`): `*` in the
    /// groups, versions or resources.
    pub fn has_wildcard(&self) -> bool {
        [&self.api_groups, &self.api_versions, &self.resources]
            .iter()
            .any(|list| list.iter().any(|item| item == "*"))
    }

    /// `policies/client.go:466-476` (`filterNonCreateOperations`).
    pub fn has_create(&self) -> bool {
        self.operations
            .iter()
            .any(|operation| operation == "CREATE")
    }

    /// `policies/client.go:338-352` (`getRuleGVRs`): every resource ×
    /// version × group, in that order.
    pub fn gvrs(&self) -> Vec<Gvr> {
        let mut gvrs = Vec::new();
        for resource in &self.resources {
            for version in &self.api_versions {
                for group in &self.api_groups {
                    gvrs.push(Gvr::new(group, version, resource));
                }
            }
        }
        gvrs
    }
}

/// What audit-scanner reads of a ClusterAdmissionPolicy.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `metadata.name`.
    pub name: String,
    /// `spec.policyServer`.
    pub policy_server: String,
    /// `spec.rules`.
    pub rules: Vec<Rule>,
    /// `spec.backgroundAudit`; the CRD defaults it to true
    /// (`api/policies/v1/policy_types.go:86-89`).
    pub background_audit: bool,
    /// `status.policyStatus` (`api/policies/v1/policy.go:14-27`:
    /// unscheduled, scheduled, pending, active); empty before the
    /// controller set it.
    pub status: String,
    /// `spec.namespaceSelector`.
    pub namespace_selector: Option<LabelSelector>,
    /// `spec.objectSelector`.
    pub object_selector: Option<LabelSelector>,
}

/// Why an object is not a ClusterAdmissionPolicy audit-scanner could read.
#[derive(Debug, thiserror::Error)]
#[error("not a ClusterAdmissionPolicy audit-scanner can read")]
pub struct PolicyError(#[source] serde_json::Error);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Object {
    metadata: Metadata,
    spec: Spec,
    #[serde(default)]
    status: Status,
}

#[derive(Deserialize)]
struct Metadata {
    name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    #[serde(default)]
    policy_server: String,
    #[serde(default)]
    rules: Vec<Rule>,
    background_audit: Option<bool>,
    namespace_selector: Option<LabelSelector>,
    object_selector: Option<LabelSelector>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Status {
    #[serde(default)]
    policy_status: String,
}

impl Policy {
    /// The policy a ClusterAdmissionPolicy object (as the cluster stores
    /// it, or as a chart renders it) describes.
    pub fn from_object(object: &Value) -> Result<Self, PolicyError> {
        let object: Object = Object::deserialize(object).map_err(PolicyError)?;
        Ok(Self {
            name: object.metadata.name,
            policy_server: object.spec.policy_server,
            rules: object.spec.rules,
            background_audit: object.spec.background_audit.unwrap_or(true),
            status: object.status.policy_status,
            namespace_selector: object.spec.namespace_selector,
            object_selector: object.spec.object_selector,
        })
    }

    /// The name audit-scanner sends reviews to (`/audit/<name>`) and
    /// records in its reports: `clusterwide-<name>`
    /// (`api/policies/v1/clusteradmissionpolicy_types.go:214-216`).
    pub fn unique_name(&self) -> String {
        format!("clusterwide-{}", self.name)
    }
}

/// A pass of a run: the cluster-wide resources, or one namespace's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    ClusterWide,
    Namespaced,
}

/// What audit-scanner finds of the PolicyServer a policy runs on
/// (`policies/client.go:397-449`): the PolicyServer, then the Services of
/// Kubewarden's namespace labelled `app.kubernetes.io/instance:
/// policy-server-<name>`, with how many ports each has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoint {
    pub policy_server: bool,
    pub service_ports: Vec<usize>,
}

/// The cluster as audit-scanner sees it.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    /// What the REST mapper maps (discovery): each served resource and
    /// whether it is namespaced.
    pub served: BTreeMap<Gvr, bool>,
    /// By PolicyServer name.
    pub endpoints: BTreeMap<String, Endpoint>,
}

/// Why a policy is skipped: counted in the reports' `skip`, never audited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "reason", content = "detail")]
pub enum Skip {
    /// Every rule has a wildcard (`policies/client.go:249-255`).
    OnlyWildcardRules,
    /// No rule without a wildcard has CREATE (`policies/client.go:257-263`).
    NoCreateRule,
    /// `backgroundAudit: false` (`policies/client.go:282-288`).
    BackgroundAuditOff,
    /// The status is not `active`; the status it has
    /// (`policies/client.go:290-295`).
    NotActive(String),
}

/// Why a policy errors: counted in the reports' `error`, never audited;
/// audit-scanner logs it at error level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "reason", content = "detail")]
pub enum Errored {
    /// A resource of a rule the REST mapper does not know
    /// (`policies/client.go:265-272, 382-395`).
    UnknownResource(Gvr),
    /// No PolicyServer, or not exactly one Service for it, or a Service
    /// without a port (`policies/client.go:297-304, 397-449`).
    PolicyServer(String),
}

/// What one pass does with one policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome", content = "detail")]
pub enum Outcome {
    /// It asks the policy about every object of these resources
    /// (`policies/client.go:310-318`).
    Audited(Vec<Gvr>),
    /// No resource of the pass's scope: neither audited nor counted
    /// (`policies/client.go:274-280`).
    OutOfScope,
    Skipped(Skip),
    Errored(Errored),
}

/// `policies/client.go:382-395` (`isNamespacedResource`): whether the
/// REST mapper maps `gvr` to a namespaced kind, or that it does not know it.
fn namespaced(cluster: &Cluster, gvr: &Gvr) -> Result<bool, Errored> {
    let key = Gvr::new(&gvr.group, &gvr.version, &gvr.resource.to_lowercase());
    cluster
        .served
        .get(&key)
        .copied()
        .ok_or_else(|| Errored::UnknownResource(gvr.clone()))
}

/// `policies/client.go:397-449` (`getPolicyServerURLRunningPolicy`).
fn endpoint(cluster: &Cluster, server: &str) -> Result<(), Errored> {
    let found = cluster.endpoints.get(server).cloned().unwrap_or_default();
    if !found.policy_server {
        return Err(Errored::PolicyServer(format!(
            "failed to get PolicyServer {server:?}"
        )));
    }
    match found.service_ports.as_slice() {
        [ports] if *ports >= 1 => Ok(()),
        [_] => Err(Errored::PolicyServer(
            "policy server service does not have a port".to_owned(),
        )),
        _ => Err(Errored::PolicyServer(
            "could not find a single service for the given policy server instance label".to_owned(),
        )),
    }
}

/// What one pass of `scope` does with `policy` (`policies/client.go:239-327`,
/// `groupPoliciesByGVR`).
pub fn outcome(policy: &Policy, cluster: &Cluster, scope: Scope) -> Outcome {
    let rules: Vec<&Rule> = policy.rules.iter().filter(|r| !r.has_wildcard()).collect();
    if rules.is_empty() {
        return Outcome::Skipped(Skip::OnlyWildcardRules);
    }
    let rules: Vec<&Rule> = rules.into_iter().filter(|r| r.has_create()).collect();
    if rules.is_empty() {
        return Outcome::Skipped(Skip::NoCreateRule);
    }
    // policies/client.go:354-380 (getGroupVersionResources): the first
    // unknown resource ends the lookup with an error.
    let mut in_scope = Vec::new();
    for gvr in rules.iter().flat_map(|rule| rule.gvrs()) {
        let namespaced = match namespaced(cluster, &gvr) {
            Ok(namespaced) => namespaced,
            Err(errored) => return Outcome::Errored(errored),
        };
        if namespaced == (scope == Scope::Namespaced) {
            in_scope.push(gvr);
        }
    }
    if in_scope.is_empty() {
        return Outcome::OutOfScope;
    }
    if !policy.background_audit {
        return Outcome::Skipped(Skip::BackgroundAuditOff);
    }
    if policy.status != "active" {
        return Outcome::Skipped(Skip::NotActive(policy.status.clone()));
    }
    if let Err(errored) = endpoint(cluster, &policy.policy_server) {
        return Outcome::Errored(errored);
    }
    Outcome::Audited(in_scope)
}

/// The resources of `policy`'s CREATE rules that the cluster serves but
/// audit-scanner never looks up, because their rule has a wildcard
/// (`policies/client.go:249, 451-464`): the webhook sends the policy their
/// requests, and no report covers their objects. A rule with `*` in its
/// versions names a resource audited in whichever version the cluster
/// serves; one with `*` in its groups or resources names nothing this
/// can tell apart.
pub fn served_but_not_audited(policy: &Policy, cluster: &Cluster) -> Vec<Gvr> {
    let mut found: Vec<Gvr> = Vec::new();
    for rule in policy
        .rules
        .iter()
        .filter(|r| r.has_create() && r.has_wildcard())
    {
        if rule
            .api_groups
            .iter()
            .chain(&rule.resources)
            .any(|i| i == "*")
        {
            continue;
        }
        for group in &rule.api_groups {
            for resource in &rule.resources {
                let served = cluster.served.keys().filter(|gvr| {
                    gvr.group == *group
                        && gvr.resource == *resource
                        && (rule
                            .api_versions
                            .iter()
                            .any(|v| v == "*" || *v == gvr.version))
                });
                found.extend(served.cloned());
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// A namespace, as audit-scanner reads it: its name and labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Namespace {
    pub name: String,
    pub labels: BTreeMap<String, String>,
}

/// Which namespaces a run scans: every one but Kubewarden's and those of
/// `--ignore-namespaces` (`k8s/client.go:34-44, 77-90`, a field selector
/// on `metadata.name`).
pub fn scanned<'n>(
    namespaces: &'n [Namespace],
    kubewarden_namespace: &str,
    ignored: &[String],
) -> Vec<&'n Namespace> {
    namespaces
        .iter()
        .filter(|ns| ns.name != kubewarden_namespace && !ignored.contains(&ns.name))
        .collect()
}

/// Whether the pass over `namespace` considers `policy`
/// (`policies/client.go:132-153, 225-237`, `policyMatchesNamespace`): no
/// `namespaceSelector`, or one that selects the namespace's labels. A
/// selector apimachinery refuses fails that namespace's whole pass
/// (`policies/client.go:142-145`, `scanner/scanner.go:146-149`).
pub fn considers(policy: &Policy, namespace: &Namespace) -> Result<bool, SelectorError> {
    match &policy.namespace_selector {
        None => Ok(true),
        Some(selector) => label_selector::selects(selector, &namespace.labels),
    }
}

/// Whether an object with `labels` of an audited resource is sent to
/// `policy` (`scanner/scanner.go:498-514`, `policyMatches`): its
/// `objectSelector`, and nothing of its `matchConditions`. A selector
/// apimachinery refuses sends nothing (the error is logged).
pub fn reviews(policy: &Policy, labels: &BTreeMap<String, String>) -> bool {
    policy
        .object_selector
        .as_ref()
        .is_none_or(|selector| label_selector::selects(selector, labels).unwrap_or(false))
}

/// What a whole run does with one policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Audit {
    /// The cluster-wide pass.
    pub cluster_wide: Outcome,
    /// Each namespace pass that considers the policy (all alike: the
    /// outcome does not depend on the namespace).
    pub namespaced: Outcome,
    /// The scanned namespaces whose pass considers the policy.
    pub namespaces: Vec<String>,
    /// Scanned namespaces whose pass fails on the policy's selector.
    pub refused: Vec<(String, String)>,
}

impl Audit {
    /// Every resource some pass audits the policy on.
    pub fn audited(&self) -> Vec<&Gvr> {
        let mut all: Vec<&Gvr> = Vec::new();
        if let Outcome::Audited(gvrs) = &self.cluster_wide {
            all.extend(gvrs);
        }
        if let Outcome::Audited(gvrs) = &self.namespaced
            && !self.namespaces.is_empty()
        {
            all.extend(gvrs);
        }
        all.sort();
        all.dedup();
        all
    }

    /// Why no pass audits the policy on anything, if none does: the
    /// skip or the error of the passes (an error first).
    pub fn not_audited(&self) -> Option<&Outcome> {
        if !self.audited().is_empty() {
            return None;
        }
        let passes = [&self.cluster_wide, &self.namespaced];
        passes
            .iter()
            .find(|o| matches!(o, Outcome::Errored(_)))
            .or_else(|| passes.iter().find(|o| matches!(o, Outcome::Skipped(_))))
            .copied()
    }
}

/// What a run (`cmd/audit-scanner/root.go:204-218`: the cluster-wide pass,
/// then every scanned namespace) does with `policy`.
pub fn audit(
    policy: &Policy,
    cluster: &Cluster,
    namespaces: &[Namespace],
    kubewarden_namespace: &str,
    ignored: &[String],
) -> Audit {
    let mut considered = Vec::new();
    let mut refused = Vec::new();
    for namespace in scanned(namespaces, kubewarden_namespace, ignored) {
        match considers(policy, namespace) {
            Ok(true) => considered.push(namespace.name.clone()),
            Ok(false) => {}
            Err(error) => refused.push((namespace.name.clone(), error.to_string())),
        }
    }
    Audit {
        cluster_wide: outcome(policy, cluster, Scope::ClusterWide),
        namespaced: outcome(policy, cluster, Scope::Namespaced),
        namespaces: considered,
        refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(groups: &[&str], versions: &[&str], resources: &[&str], operations: &[&str]) -> Rule {
        let own = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
        Rule {
            api_groups: own(groups),
            api_versions: own(versions),
            resources: own(resources),
            operations: own(operations),
        }
    }

    fn policy(rules: Vec<Rule>) -> Policy {
        Policy {
            name: "values-schema".into(),
            policy_server: "cozystack-policies".into(),
            rules,
            background_audit: true,
            status: "active".into(),
            namespace_selector: None,
            object_selector: None,
        }
    }

    fn postgres() -> Rule {
        rule(
            &["apps.cozystack.io"],
            &["v1alpha1"],
            &["postgreses"],
            &["CREATE", "UPDATE"],
        )
    }

    /// A cluster serving Postgres (namespaced) and StorageClasses
    /// (cluster-wide), with the bundle's PolicyServer and its Service.
    fn cluster() -> Cluster {
        let mut served = BTreeMap::new();
        served.insert(
            Gvr::new("apps.cozystack.io", "v1alpha1", "postgreses"),
            true,
        );
        served.insert(Gvr::new("storage.k8s.io", "v1", "storageclasses"), false);
        let mut endpoints = BTreeMap::new();
        endpoints.insert(
            "cozystack-policies".to_owned(),
            Endpoint {
                policy_server: true,
                service_ports: vec![1],
            },
        );
        Cluster { served, endpoints }
    }

    #[test]
    fn a_rule_names_every_resource_version_and_group() {
        let r = rule(&["a", "b"], &["v1"], &["xs", "ys"], &["CREATE"]);
        assert_eq!(
            r.gvrs(),
            vec![
                Gvr::new("a", "v1", "xs"),
                Gvr::new("b", "v1", "xs"),
                Gvr::new("a", "v1", "ys"),
                Gvr::new("b", "v1", "ys"),
            ]
        );
    }

    #[test]
    fn only_wildcard_rules_are_skipped() {
        let p = policy(vec![rule(&["*"], &["*"], &["*"], &["DELETE"])]);
        assert_eq!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::Skipped(Skip::OnlyWildcardRules)
        );
        // A wildcard in the versions alone drops the rule too.
        let p = policy(vec![rule(
            &["apps.cozystack.io"],
            &["*"],
            &["bootboxes"],
            &["CREATE"],
        )]);
        assert_eq!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::Skipped(Skip::OnlyWildcardRules)
        );
    }

    #[test]
    fn a_wildcard_rule_is_dropped_before_any_lookup() {
        // bootboxes is not served: behind a version wildcard it is never
        // looked up, and the policy is audited on what the other rule names.
        let p = policy(vec![
            postgres(),
            rule(&["apps.cozystack.io"], &["*"], &["bootboxes"], &["CREATE"]),
        ]);
        assert_eq!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::Audited(vec![Gvr::new(
                "apps.cozystack.io",
                "v1alpha1",
                "postgreses"
            )])
        );
    }

    #[test]
    fn rules_without_create_are_skipped() {
        let p = policy(vec![rule(
            &["apps.cozystack.io"],
            &["v1alpha1"],
            &["postgreses"],
            &["UPDATE", "DELETE"],
        )]);
        assert_eq!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::Skipped(Skip::NoCreateRule)
        );
    }

    #[test]
    fn a_rule_without_create_is_never_looked_up() {
        let p = policy(vec![
            postgres(),
            rule(
                &["apps.cozystack.io"],
                &["v1alpha1"],
                &["harbors"],
                &["DELETE"],
            ),
        ]);
        assert_eq!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::Audited(vec![Gvr::new(
                "apps.cozystack.io",
                "v1alpha1",
                "postgreses"
            )])
        );
    }

    #[test]
    fn one_unserved_resource_errors_the_whole_policy_in_every_pass() {
        let p = policy(vec![rule(
            &["apps.cozystack.io"],
            &["v1alpha1"],
            &["postgreses", "bootboxes"],
            &["CREATE"],
        )]);
        let unknown = Outcome::Errored(Errored::UnknownResource(Gvr::new(
            "apps.cozystack.io",
            "v1alpha1",
            "bootboxes",
        )));
        assert_eq!(outcome(&p, &cluster(), Scope::Namespaced), unknown);
        assert_eq!(outcome(&p, &cluster(), Scope::ClusterWide), unknown);
    }

    #[test]
    fn an_unserved_version_is_unknown() {
        let p = policy(vec![rule(
            &["apps.cozystack.io"],
            &["v1beta1"],
            &["postgreses"],
            &["CREATE"],
        )]);
        assert!(matches!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::Errored(Errored::UnknownResource(_))
        ));
    }

    #[test]
    fn the_lookup_comes_before_background_audit_and_status() {
        let mut p = policy(vec![rule(
            &["etcd.aenix.io"],
            &["v1alpha1"],
            &["etcdclusters"],
            &["CREATE"],
        )]);
        p.background_audit = false;
        p.status = "pending".into();
        assert!(matches!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::Errored(Errored::UnknownResource(_))
        ));
    }

    #[test]
    fn resources_of_the_other_scope_leave_the_policy_out_of_the_pass() {
        let p = policy(vec![postgres()]);
        assert_eq!(
            outcome(&p, &cluster(), Scope::ClusterWide),
            Outcome::OutOfScope
        );
        let p = policy(vec![rule(
            &["storage.k8s.io"],
            &["v1"],
            &["storageclasses"],
            &["CREATE"],
        )]);
        assert_eq!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::OutOfScope
        );
        assert_eq!(
            outcome(&p, &cluster(), Scope::ClusterWide),
            Outcome::Audited(vec![Gvr::new("storage.k8s.io", "v1", "storageclasses")])
        );
    }

    #[test]
    fn out_of_scope_comes_before_background_audit() {
        let mut p = policy(vec![postgres()]);
        p.background_audit = false;
        assert_eq!(
            outcome(&p, &cluster(), Scope::ClusterWide),
            Outcome::OutOfScope
        );
        assert_eq!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::Skipped(Skip::BackgroundAuditOff)
        );
    }

    #[test]
    fn a_policy_that_is_not_active_is_skipped() {
        let mut p = policy(vec![postgres()]);
        p.status = "pending".into();
        assert_eq!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::Skipped(Skip::NotActive("pending".into()))
        );
        p.status = String::new();
        assert_eq!(
            outcome(&p, &cluster(), Scope::Namespaced),
            Outcome::Skipped(Skip::NotActive(String::new()))
        );
    }

    #[test]
    fn a_policy_server_audit_scanner_cannot_reach_errors_the_policy() {
        let p = policy(vec![postgres()]);
        let mut c = cluster();
        c.endpoints.clear();
        assert!(matches!(
            outcome(&p, &c, Scope::Namespaced),
            Outcome::Errored(Errored::PolicyServer(m)) if m.contains("failed to get PolicyServer")
        ));
        for (ports, message) in [
            (vec![], "single service"),
            (vec![1, 1], "single service"),
            (vec![0], "does not have a port"),
        ] {
            c.endpoints.insert(
                "cozystack-policies".into(),
                Endpoint {
                    policy_server: true,
                    service_ports: ports,
                },
            );
            assert!(matches!(
                outcome(&p, &c, Scope::Namespaced),
                Outcome::Errored(Errored::PolicyServer(m)) if m.contains(message)
            ));
        }
    }

    #[test]
    fn a_policy_reads_from_its_object_with_the_crd_defaults() {
        let p = Policy::from_object(&json!({
            "apiVersion": "policies.kubewarden.io/v1",
            "kind": "ClusterAdmissionPolicy",
            "metadata": {"name": "values-schema"},
            "spec": {"policyServer": "cozystack-policies", "module": "registry://x",
                "rules": [{"apiGroups": ["apps.cozystack.io"], "apiVersions": ["v1alpha1"],
                    "resources": ["postgreses"], "operations": ["CREATE"]}]},
        }))
        .unwrap();
        assert!(p.background_audit);
        assert_eq!(p.status, "");
        assert_eq!(p.unique_name(), "clusterwide-values-schema");
        let p = Policy::from_object(&json!({
            "metadata": {"name": "no-delete"},
            "spec": {"backgroundAudit": false, "rules": []},
            "status": {"policyStatus": "active"},
        }))
        .unwrap();
        assert!(!p.background_audit);
        assert_eq!(p.status, "active");
        assert!(Policy::from_object(&json!({"spec": {}})).is_err());
    }

    fn namespace(name: &str) -> Namespace {
        let mut labels = BTreeMap::new();
        labels.insert("kubernetes.io/metadata.name".to_owned(), name.to_owned());
        Namespace {
            name: name.to_owned(),
            labels,
        }
    }

    #[test]
    fn a_run_scans_every_namespace_but_kubewarden_s_and_the_ignored() {
        let namespaces = [
            namespace("kubewarden"),
            namespace("kube-system"),
            namespace("tenant-root"),
        ];
        let names: Vec<&str> = scanned(&namespaces, "kubewarden", &["kube-system".to_owned()])
            .iter()
            .map(|ns| ns.name.as_str())
            .collect();
        assert_eq!(names, ["tenant-root"]);
    }

    #[test]
    fn a_namespace_pass_considers_the_policies_whose_selector_selects_it() {
        let mut p = policy(vec![postgres()]);
        assert_eq!(considers(&p, &namespace("tenant-root")), Ok(true));
        p.namespace_selector = serde_json::from_value(json!({"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}]}))
        .unwrap();
        assert_eq!(considers(&p, &namespace("tenant-root")), Ok(true));
        assert_eq!(considers(&p, &namespace("kube-system")), Ok(false));
        p.namespace_selector = serde_json::from_value(json!({"matchExpressions": [
            {"key": "a", "operator": "Bogus"}]}))
        .unwrap();
        assert!(considers(&p, &namespace("tenant-root")).is_err());
    }

    #[test]
    fn objects_are_sent_by_object_selector_alone() {
        let mut p = policy(vec![postgres()]);
        let mut labels = BTreeMap::new();
        assert!(reviews(&p, &labels));
        p.object_selector = serde_json::from_value(
            json!({"matchLabels": {"platform.cozystack.io/no-delete": "true"}}),
        )
        .unwrap();
        assert!(!reviews(&p, &labels));
        labels.insert("platform.cozystack.io/no-delete".into(), "true".into());
        assert!(reviews(&p, &labels));
    }

    #[test]
    fn a_run_audits_what_either_pass_audits() {
        let p = policy(vec![
            postgres(),
            rule(
                &["storage.k8s.io"],
                &["v1"],
                &["storageclasses"],
                &["CREATE"],
            ),
        ]);
        let run = audit(
            &p,
            &cluster(),
            &[namespace("tenant-root"), namespace("kubewarden")],
            "kubewarden",
            &[],
        );
        assert_eq!(run.namespaces, ["tenant-root"]);
        assert_eq!(
            run.audited(),
            [
                &Gvr::new("apps.cozystack.io", "v1alpha1", "postgreses"),
                &Gvr::new("storage.k8s.io", "v1", "storageclasses"),
            ]
        );
        assert_eq!(run.not_audited(), None);
        // No namespace left to scan: the namespaced resources go unaudited.
        let run = audit(
            &p,
            &cluster(),
            &[namespace("kubewarden")],
            "kubewarden",
            &[],
        );
        assert_eq!(
            run.audited(),
            [&Gvr::new("storage.k8s.io", "v1", "storageclasses")]
        );
    }

    #[test]
    fn served_resources_behind_a_wildcard_are_not_audited() {
        let p = policy(vec![
            postgres(),
            rule(
                &["apps.cozystack.io"],
                &["*"],
                &["bootboxes", "harbors"],
                &["CREATE", "UPDATE"],
            ),
        ]);
        let mut c = cluster();
        assert_eq!(served_but_not_audited(&p, &c), Vec::<Gvr>::new());
        c.served
            .insert(Gvr::new("apps.cozystack.io", "v1alpha1", "bootboxes"), true);
        assert_eq!(
            served_but_not_audited(&p, &c),
            [Gvr::new("apps.cozystack.io", "v1alpha1", "bootboxes")]
        );
        assert_eq!(
            outcome(&p, &c, Scope::Namespaced),
            Outcome::Audited(vec![Gvr::new(
                "apps.cozystack.io",
                "v1alpha1",
                "postgreses"
            )])
        );
    }

    #[test]
    fn a_run_says_why_it_audits_nothing() {
        let mut p = policy(vec![postgres()]);
        p.background_audit = false;
        let run = audit(
            &p,
            &cluster(),
            &[namespace("tenant-root")],
            "kubewarden",
            &[],
        );
        assert_eq!(
            run.not_audited(),
            Some(&Outcome::Skipped(Skip::BackgroundAuditOff))
        );
    }
}
