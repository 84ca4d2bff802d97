//! `securitygroup-validity`: Cozystack SecurityGroups that work as written.
//!
//! cozystack-api validates a SecurityGroup before admission, so in a
//! cluster its refusals never reach this policy; GitOps repositories and CI
//! check manifests offline, where cozystack-api is not in the loop. So the
//! policy repeats every static check of `validateSecurityGroup`, with its
//! paths, messages and Go edge semantics ([`spec`]), and goes further where
//! cozystack-api accepts a group that selects nothing or repeats itself: a
//! foreign `apiGroup`, a kind no application has (unless an
//! ApplicationDefinition serves it, [`kinds`]), a duplicate attachment, a
//! peer name no group can have. Those are warnings unless the setting
//! `deny` lists them. Then, for a group that passed, it looks up the
//! applications and groups it names ([`existence`]): one context-aware call
//! per kind at most, and a warning, never a rejection, when the host cannot
//! answer.

mod existence;
mod kinds;
pub mod rules;
mod settings;
mod spec;

use shared::{FieldError, Findings, Operation, Refusal, Request, Review, Selection, Verdict};

pub use rules::RULES;
pub use settings::{IGNORABLE, Settings};
use spec::{AppTarget, GroupTarget, Known, Walk};

/// What the rule reads of each object (and the implicit `metadata.name`
/// and `metadata.namespace`).
pub const READS: Selection = Selection::Paths(&["spec"]);

shared::policy!(Settings, evaluate, READS);

/// API group of SecurityGroups.
const SDN_GROUP: &str = "sdn.cozystack.io";
const KIND: &str = "SecurityGroup";

/// The rule: pure over the request and settings; cluster reads go where
/// the request says ([`Request::cluster`]).
pub fn evaluate(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    let writes = matches!(request.operation, Operation::Create | Operation::Update);
    if !writes
        || request.group != SDN_GROUP
        || request.kind != KIND
        || settings.exemptions.exempts(&request.user)
    {
        return Ok(Verdict::allow());
    }
    let object = request.required_object()?;
    let [metadata, spec] = object.members(["metadata", "spec"])?;
    let [name, namespace] = metadata.members(["name", "namespace"])?;
    // What the stored object already refers to: on UPDATE a finding about
    // such a reference is at most a warning, and it is not looked up again.
    let old_object = request.old_object();
    let known = match request.operation {
        Operation::Update => Known::read(&old_object),
        _ => Known::default(),
    };
    let mut found = Findings::new();
    let mut walk = Walk::new(&mut found, settings, request.cluster(), &known);
    walk.name(&name)?;
    walk.spec(&spec)?;
    let targets = walk.targets;
    // What the stored object had, the walk knew from `known`.
    let mut review = Review::new();
    found.record(None, &settings.deny, &settings.ignore, &mut review);
    // A group that is rejected anyway costs no existence lookup.
    if !settings.looks_up() || review.has_violations() {
        return Ok(review.verdict(Refusal::Invalid));
    }
    // On UPDATE only references the update adds are looked up: the others
    // were checked when they were written, and a target deleted since must
    // not block unrelated edits (audit-scanner re-checks live groups).
    let own_name = name.string()?.unwrap_or_default();
    let apps: Vec<&AppTarget<'_>> = targets
        .apps
        .iter()
        .filter(|app| !known.has_app(app.kind, app.name))
        .collect();
    // A group may admit its own members (`fromSG: [itself]`); on CREATE it
    // does not exist yet.
    let groups: Vec<&GroupTarget<'_>> = targets
        .groups
        .iter()
        .filter(|group| group.name != own_name && !known.has_group(group.name))
        .collect();
    let namespace = if request.namespace.is_empty() {
        namespace.string()?.unwrap_or_default()
    } else {
        &request.namespace
    };
    let mut missing = Findings::new();
    existence::check(request.cluster(), namespace, &apps, &groups, &mut missing);
    missing.record(None, &settings.deny, &settings.ignore, &mut review);
    Ok(review.verdict(Refusal::Invalid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::lookup::{Cluster, LIST_ALL, LIST_BY_NAMESPACE, LookupError};
    use std::cell::RefCell;

    /// Answers HelmRelease and CiliumNetworkPolicy lists from fixed JSON
    /// (or an error) and records what was asked.
    struct FakeCluster {
        releases: Result<&'static str, &'static str>,
        policies: Result<&'static str, &'static str>,
        calls: RefCell<Vec<String>>,
    }

    impl FakeCluster {
        fn new() -> Self {
            Self {
                releases: Ok(RELEASES),
                policies: Ok(POLICIES),
                calls: RefCell::new(Vec::new()),
            }
        }
    }

    impl Cluster for FakeCluster {
        fn call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, LookupError> {
            self.calls
                .borrow_mut()
                .push(String::from_utf8(request.to_vec()).unwrap());
            let request: shared::Value = serde_json::from_slice(request).unwrap();
            let answer = match (operation, request["kind"].as_str()) {
                (LIST_BY_NAMESPACE, Some("HelmRelease")) => self.releases,
                (LIST_BY_NAMESPACE, Some("CiliumNetworkPolicy")) => self.policies,
                (LIST_ALL, Some("ApplicationDefinition")) => Ok(DEFINITIONS),
                other => panic!("unexpected {other:?}"),
            };
            answer
                .map(|a| a.as_bytes().to_vec())
                .map_err(|e| LookupError(e.to_owned()))
        }
    }

    const RELEASES: &str = r#"{"items": [
        {"metadata": {"labels": {"apps.cozystack.io/application.kind": "Postgres", "apps.cozystack.io/application.name": "db"}}},
        {"metadata": {"labels": {"apps.cozystack.io/application.kind": "Kubernetes", "apps.cozystack.io/application.name": "web"}}},
        {"metadata": {"labels": {"apps.cozystack.io/application.kind": "ComputePlane", "apps.cozystack.io/application.name": "edge"}}}
    ]}"#;
    const POLICIES: &str = r#"{"items": [{"metadata": {"name": "frontend"}}]}"#;
    const DEFINITIONS: &str = r#"{"items": [{"spec": {"application": {"kind": "ComputePlane"}}}]}"#;

    const V1_SPEC: &str = r#"{"attachments": [{"kind": "Postgres", "name": "db"}],
        "ingress": [{"fromApp": [{"kind": "Kubernetes", "name": "web"}], "fromSG": ["frontend"],
                     "toPorts": [{"ports": [{"port": "5432", "protocol": "TCP"}]}]}]}"#;

    fn payload(operation: &str, name: &str, spec: &str, old_spec: Option<&str>) -> String {
        let object = format!(
            r#"{{"apiVersion": "sdn.cozystack.io/v1alpha1", "kind": "SecurityGroup",
                "metadata": {{"name": "{name}", "namespace": "tenant-foo"}}, "spec": {spec}}}"#
        );
        let old = old_spec.map_or(String::new(), |old| {
            format!(r#", "oldObject": {{"metadata": {{"name": "{name}"}}, "spec": {old}}}"#)
        });
        format!(
            r#"{{"request": {{"uid": "u",
                "kind": {{"group": "sdn.cozystack.io", "version": "v1alpha1", "kind": "SecurityGroup"}},
                "resource": {{"group": "sdn.cozystack.io", "version": "v1alpha1", "resource": "securitygroups"}},
                "name": "{name}", "namespace": "tenant-foo", "operation": "{operation}",
                "userInfo": {{"username": "alice"}}, "object": {object}{old}}}, "settings": {{}}}}"#
        )
    }

    /// `lines` without their `[securitygroup-validity/<rule>] ` tags, each
    /// checked to be there.
    pub(crate) fn untagged(lines: Vec<String>) -> Vec<String> {
        lines
            .into_iter()
            .map(|line| match shared::Finding::split_tag(&line) {
                Some((tag, text)) if tag.policy == "securitygroup-validity" => text.to_owned(),
                _ => panic!("not tagged: {line}"),
            })
            .collect()
    }

    fn run(text: &str, settings: &Settings, cluster: &FakeCluster) -> Verdict {
        let payload = shared::request::read(text.as_bytes(), READS, cluster).unwrap();
        evaluate(&payload.request, settings).unwrap()
    }

    fn settings(json: &str) -> Settings {
        shared::settings::check::<Settings>(json.as_bytes()).unwrap()
    }

    #[test]
    fn a_valid_group_with_existing_targets_makes_one_call_per_kind() {
        let cluster = FakeCluster::new();
        let verdict = run(
            &payload("CREATE", "db", V1_SPEC, None),
            &Settings::default(),
            &cluster,
        );
        assert_eq!(verdict, Verdict::allow());
        let calls = cluster.calls.borrow();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            calls[0],
            r#"{"api_version":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","namespace":"tenant-foo","label_selector":"apps.cozystack.io/application.kind","field_selector":null,"field_masks":["metadata.labels"]}"#
        );
        assert_eq!(
            calls[1],
            r#"{"api_version":"cilium.io/v2","kind":"CiliumNetworkPolicy","namespace":"tenant-foo","label_selector":"sdn.cozystack.io/securitygroup=true","field_selector":null,"field_masks":["metadata.name"]}"#
        );
    }

    #[test]
    fn missing_targets_warn_deny_or_are_not_looked_up() {
        let spec = r#"{"attachments": [{"kind": "Postgres", "name": "other"}],
            "egress": [{"toSG": ["backend"]}]}"#;
        let text = payload("CREATE", "g", spec, None);
        let warned = run(&text, &Settings::default(), &FakeCluster::new());
        assert!(warned.is_allowed());
        assert_eq!(
            untagged(warned.warnings()),
            vec![
                "spec.attachments[0]: Postgres \"other\" does not exist in tenant-foo: the attachment selects no pods until it does",
                "spec.egress[0].toSG[0]: SecurityGroup \"backend\" does not exist in tenant-foo: this peer matches no pods until it does",
            ]
        );
        let denied = run(
            &text,
            &settings(r#"{"deny": ["missing-target"]}"#),
            &FakeCluster::new(),
        );
        assert!(!denied.is_allowed());
        assert!(denied.message().unwrap().contains("(deny: missing-target)"));
        let cluster = FakeCluster::new();
        let ignored = run(
            &text,
            &settings(r#"{"ignore": ["missing-target"]}"#),
            &cluster,
        );
        assert_eq!(ignored, Verdict::allow());
        assert!(cluster.calls.borrow().is_empty());
    }

    #[test]
    fn lookup_errors_warn_and_never_reject() {
        let cluster = FakeCluster {
            releases: Err("Policy has not been granted access"),
            policies: Err("no cluster"),
            calls: RefCell::new(Vec::new()),
        };
        let verdict = run(
            &payload("CREATE", "db", V1_SPEC, None),
            &settings(r#"{"deny": ["missing-target"]}"#),
            &cluster,
        );
        assert!(verdict.is_allowed());
        assert_eq!(
            untagged(verdict.warnings()),
            vec![
                "spec.attachments: existence not checked: cannot list the applications of tenant-foo: Policy has not been granted access",
                "spec.ingress[0].fromSG: existence not checked: cannot list the SecurityGroups of tenant-foo: no cluster",
            ]
        );
        let unreadable = FakeCluster {
            releases: Ok("[]"),
            ..FakeCluster::new()
        };
        let verdict = run(
            &payload("CREATE", "db", V1_SPEC, None),
            &Settings::default(),
            &unreadable,
        );
        assert!(verdict.warnings()[0].contains("unreadable list answer"));
    }

    #[test]
    fn only_new_references_are_looked_up_and_never_the_group_itself() {
        let cluster = FakeCluster::new();
        let unchanged = run(
            &payload("UPDATE", "db", V1_SPEC, Some(V1_SPEC)),
            &Settings::default(),
            &cluster,
        );
        assert_eq!(unchanged, Verdict::allow());
        assert!(cluster.calls.borrow().is_empty());
        let own = r#"{"attachments": [{"kind": "Postgres", "name": "db"}],
            "ingress": [{"fromSG": ["self-talk"]}]}"#;
        let cluster = FakeCluster::new();
        run(
            &payload("CREATE", "self-talk", own, None),
            &Settings::default(),
            &cluster,
        );
        assert_eq!(cluster.calls.borrow().len(), 1, "no SecurityGroup lookup");
    }

    #[test]
    fn static_violations_cost_no_lookup() {
        let cluster = FakeCluster::new();
        let verdict = run(
            &payload(
                "CREATE",
                "db",
                r#"{"attachments": [{"kind": "Postgres", "name": "db"}],
                    "ingress": [{"fromCIDR": ["10.0.0.0/33"]}]}"#,
                None,
            ),
            &Settings::default(),
            &cluster,
        );
        assert!(
            verdict
                .message()
                .unwrap()
                .contains("must be a valid CIDR or IP address")
        );
        assert!(cluster.calls.borrow().is_empty());
    }

    #[test]
    fn unknown_kinds_cost_one_cluster_wide_list_then_the_usual_lookups() {
        let cluster = FakeCluster::new();
        let verdict = run(
            &payload(
                "CREATE",
                "db",
                r#"{"attachments": [{"kind": "Postgress", "name": "db"}, {"kind": "ComputePlane", "name": "edge"}],
                    "ingress": [{"fromApp": [{"kind": "ComputePlane", "name": "web"}]}]}"#,
                None,
            ),
            &Settings::default(),
            &cluster,
        );
        assert!(verdict.is_allowed());
        assert_eq!(
            untagged(verdict.warnings()),
            vec![
                "spec.attachments[0].kind: \"Postgress\" is not a Cozystack application kind, so the reference selects no pods; did you mean \"Postgres\"? no ApplicationDefinition serves it either; kinds are case-sensitive",
                "spec.ingress[0].fromApp[0]: ComputePlane \"web\" does not exist in tenant-foo: this peer matches no pods until it does",
            ]
        );
        let calls = cluster.calls.borrow();
        assert_eq!(calls.len(), 2);
        assert!(
            calls[0].contains("\"ApplicationDefinition\""),
            "{}",
            calls[0]
        );
        assert!(calls[1].contains("\"HelmRelease\""), "{}", calls[1]);
    }

    #[test]
    fn an_update_keeping_its_findings_is_allowed_with_warnings() {
        let spec = r#"{"attachments": [{"kind": "Postgres", "name": "db"}, {"kind": "Postgres", "name": "db"}],
            "ingress": [{"fromSG": ["Frontend"]}]}"#;
        let settings: Settings =
            serde_json::from_str(r#"{"deny": ["duplicate-attachment", "impossible-group-name"]}"#)
                .unwrap();
        let cluster = FakeCluster::new();
        let verdict = run(
            &payload("UPDATE", "db", spec, Some(spec)),
            &settings,
            &cluster,
        );
        assert!(verdict.is_allowed());
        assert_eq!(verdict.warnings().len(), 2);
        assert!(cluster.calls.borrow().is_empty());
        let created = run(&payload("CREATE", "db", spec, None), &settings, &cluster);
        assert!(!created.is_allowed());
    }

    #[test]
    fn other_kinds_and_operations_are_allowed_untouched() {
        let cluster = FakeCluster::new();
        let text = payload("DELETE", "db", "\"not a spec\"", None);
        assert_eq!(run(&text, &Settings::default(), &cluster), Verdict::allow());
        let text = payload("CREATE", "db", "\"not a spec\"", None)
            .replace("\"kind\": \"SecurityGroup\"}", "\"kind\": \"Postgres\"}");
        assert_eq!(run(&text, &Settings::default(), &cluster), Verdict::allow());
    }
}
