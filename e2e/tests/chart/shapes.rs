//! The bundle on the clusters people run. For each cluster shape of the
//! matrix (`cozystack_oracle.shapes`: Cozystack's platform chart of v1.6.2
//! and v1.5.4 rendered with Helm for each bundle variant and optional
//! package, and what the cluster then serves), the chart is rendered as
//! `helm install` renders it there (Helm's capabilities are that cluster's
//! discovery), and audit-scanner's choice of what to audit is the
//! `models::audit_scanner` model's, written from its source:
//!
//! - `shapes/<shape>`: no policy errors; every resource a policy audits
//!   (backgroundAudit, a CREATE rule) that the cluster serves is audited,
//!   and audit-scanner's ClusterRole lets it list it; every resource of
//!   every rule still reaches the webhook, served or not;
//! - `shapes/offline-rendering-errors-where-kinds-are-missing`: the chart
//!   rendered without a cluster (`helm template`, `deploy/`) names every
//!   kind, and on a default v1.6.2 cluster the model errors values-schema
//!   and chart-render on `bootboxes`, upgrade-gate on `etcd.aenix.io`: what
//!   the shapes would show without the chart's split, so they can fail;
//! - `shapes/a-kind-enabled-later`: a package enabled after the install is
//!   admitted at once, reported as served but not audited
//!   (`served_but_not_audited`, what `wiring` says), and audited after the
//!   next `helm upgrade`;
//! - `shapes/discovery-failed`: a group version whose discovery failed
//!   (listed without kinds: an aggregated API not answering) stays audited;
//! - `shapes/matrix-in-the-docs`: the matrix below the marker in
//!   docs/install.md is this run's (`UPDATE_DOCS=1` rewrites it).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use e2e::helm::{Helm, Render, Rendered, Served, Shape};
use libtest_mimic::{Failed, Trial};
use models::audit_scanner::{
    self, Audit, Cluster, Endpoint, Errored, Gvr, Namespace, Outcome, Policy, Skip,
};
use serde_json::{Value, json};
use wasm_meta::Metadata;

/// The namespaces of the model's cluster: Kubewarden's (never scanned),
/// the platform's, and the root tenant's, where the README's first report
/// is.
const NAMESPACES: [&str; 4] = ["kubewarden", "kube-system", "cozy-system", "tenant-root"];

const MATRIX_BEGIN: &str = "<!-- shapes:begin (e2e/tests/chart/shapes.rs writes this table) -->";
const MATRIX_END: &str = "<!-- shapes:end -->";

/// What the matrix runs on: each shape with its rendering on that cluster.
struct Run {
    shape: Shape,
    documents: Result<Vec<Value>, String>,
}

/// The model's cluster for `served`: the bundle's PolicyServer with its
/// Service (one port), as Kubewarden's controller makes them.
fn cluster(served: &[Served]) -> Cluster {
    let mut cluster = Cluster::default();
    for s in served {
        cluster
            .served
            .insert(Gvr::new(&s.group, &s.version, &s.resource), s.namespaced);
    }
    cluster.endpoints.insert(
        "cozystack-policies".to_owned(),
        Endpoint {
            policy_server: true,
            service_ports: vec![1],
        },
    );
    cluster
}

fn namespaces() -> Vec<Namespace> {
    NAMESPACES
        .iter()
        .map(|name| Namespace {
            name: (*name).to_owned(),
            labels: BTreeMap::from([(
                "kubernetes.io/metadata.name".to_owned(),
                (*name).to_owned(),
            )]),
        })
        .collect()
}

/// The rendering's ClusterAdmissionPolicies as the model reads them,
/// active (the controller's status once the PolicyServer runs them).
fn policies(documents: &[Value]) -> Result<Vec<Policy>, String> {
    documents
        .iter()
        .filter(|d| d["kind"] == "ClusterAdmissionPolicy")
        .map(|d| {
            let mut policy = Policy::from_object(d).map_err(|e| e.to_string())?;
            policy.status = "active".to_owned();
            Ok(policy)
        })
        .collect()
}

/// What a run of audit-scanner does with each policy of `documents` on
/// `cluster`, by policy name.
fn audits(
    documents: &[Value],
    cluster: &Cluster,
) -> Result<BTreeMap<String, (Policy, Audit)>, String> {
    let namespaces = namespaces();
    Ok(policies(documents)?
        .into_iter()
        .map(|p| {
            let run = audit_scanner::audit(&p, cluster, &namespaces, "kubewarden", &[]);
            (p.name.clone(), (p, run))
        })
        .collect())
}

/// The resources audit-scanner's ClusterRole of the rendering lets it list.
fn audit_scanner_lists(documents: &[Value]) -> BTreeSet<(String, String)> {
    let mut grants = BTreeSet::new();
    for role in documents.iter().filter(|d| {
        d["kind"] == "ClusterRole" && d["metadata"]["name"] == "cozystack-policies-audit-scanner"
    }) {
        for rule in role["rules"].as_array().into_iter().flatten() {
            let lists = rule["verbs"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v == "list"));
            if !lists {
                continue;
            }
            for group in rule["apiGroups"].as_array().into_iter().flatten() {
                for resource in rule["resources"].as_array().into_iter().flatten() {
                    grants.insert((
                        group.as_str().unwrap_or_default().to_owned(),
                        resource.as_str().unwrap_or_default().to_owned(),
                    ));
                }
            }
        }
    }
    grants
}

/// The resources of `metadata`'s rules with CREATE: what the policy means
/// audit-scanner to audit.
fn audited_by_metadata(metadata: &Metadata) -> Vec<Gvr> {
    let mut all = Vec::new();
    for rule in &metadata.rules {
        let rule: audit_scanner::Rule =
            serde_json::from_value(serde_json::to_value(rule).unwrap_or_default())
                .unwrap_or_default();
        if rule.has_create() && !rule.has_wildcard() {
            all.extend(rule.gvrs());
        }
    }
    all
}

/// Whether the webhook rules of `policy` send it requests for `gvr` with
/// `operations`: admission, whatever audit-scanner does.
fn webhook_covers(policy: &Policy, gvr: &Gvr, operations: &[String]) -> bool {
    operations.iter().all(|operation| {
        policy.rules.iter().any(|rule| {
            let has = |list: &[String], item: &str| list.iter().any(|i| i == "*" || i == item);
            has(&rule.api_groups, &gvr.group)
                && has(&rule.api_versions, &gvr.version)
                && has(&rule.resources, &gvr.resource)
                && rule.operations.iter().any(|o| o == operation)
        })
    })
}

/// The checks of one shape; the matrix row.
fn check_shape(
    metadata: &BTreeMap<String, Metadata>,
    run: &Run,
) -> Result<BTreeMap<String, String>, String> {
    let documents = run.documents.as_ref().map_err(Clone::clone)?;
    let cluster = cluster(&run.shape.resources);
    let audits = audits(documents, &cluster)?;
    let lists = audit_scanner_lists(documents);
    let mut problems = Vec::new();
    let mut row = BTreeMap::new();
    for (name, metadata) in metadata {
        let Some((policy, audit)) = audits.get(name) else {
            problems.push(format!("{name}: not rendered"));
            continue;
        };
        let audited = audit.audited();
        for outcome in [&audit.cluster_wide, &audit.namespaced] {
            if let Outcome::Errored(error) = outcome {
                problems.push(format!("{name}: audit-scanner errors it: {error:?}"));
            }
        }
        // Admission: every resource of every metadata rule reaches the
        // webhook, in the rule's operations.
        for rule in &metadata.rules {
            let operations: Vec<String> = serde_json::to_value(&rule.operations)
                .ok()
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default();
            if name == "no-delete" {
                continue; // wildcards and values-dependent operations
            }
            for group in &rule.api_groups {
                for version in &rule.api_versions {
                    for resource in &rule.resources {
                        let gvr = Gvr::new(group, version, resource);
                        if !webhook_covers(policy, &gvr, &operations) {
                            problems.push(format!(
                                "{name}: the webhook no longer covers {gvr} {operations:?}"
                            ));
                        }
                    }
                }
            }
        }
        let meant = audited_by_metadata(metadata);
        let served: Vec<&Gvr> = meant
            .iter()
            .filter(|gvr| cluster.served.contains_key(*gvr))
            .collect();
        if metadata.background_audit {
            for gvr in &served {
                if !audited.contains(gvr) {
                    problems.push(format!(
                        "{name}: {gvr} is served but not audited ({:?} / {:?})",
                        audit.cluster_wide, audit.namespaced
                    ));
                }
                if !lists.contains(&(gvr.group.clone(), gvr.resource.clone())) {
                    problems.push(format!(
                        "{name}: audit-scanner's ClusterRole does not let it list {gvr}"
                    ));
                }
            }
        }
        let cell = match audit.not_audited() {
            None => format!("audited: {} of {}", audited.len(), meant.len()),
            Some(Outcome::Skipped(Skip::NoCreateRule | Skip::OnlyWildcardRules))
                if meant.is_empty() =>
            {
                "no CREATE rule".to_owned()
            }
            Some(Outcome::Skipped(Skip::NoCreateRule | Skip::OnlyWildcardRules)) => {
                format!("none of its {} served", meant.len())
            }
            Some(Outcome::Skipped(Skip::BackgroundAuditOff)) => "backgroundAudit off".to_owned(),
            Some(other) => format!("{other:?}"),
        };
        row.insert(name.clone(), cell);
    }
    if run.shape.name == "v1.6.2/isp-full" {
        readme_first_report(&audits, &lists, &mut problems);
    }
    if problems.is_empty() {
        Ok(row)
    } else {
        Err(problems.join("\n"))
    }
}

/// The README's step 3 on a default v1.6.2 cluster: a Postgres in
/// tenant-root is audited by values-schema, which audit-scanner may list.
fn readme_first_report(
    audits: &BTreeMap<String, (Policy, Audit)>,
    lists: &BTreeSet<(String, String)>,
    problems: &mut Vec<String>,
) {
    let postgres = Gvr::new("apps.cozystack.io", "v1alpha1", "postgreses");
    match audits.get("values-schema") {
        Some((_, audit))
            if audit.namespaces.iter().any(|n| n == "tenant-root")
                && matches!(&audit.namespaced, Outcome::Audited(gvrs) if gvrs.contains(&postgres))
                && lists.contains(&("apps.cozystack.io".to_owned(), "postgreses".to_owned())) => {}
        other => problems.push(format!(
            "the README's first report: values-schema does not audit Postgres in tenant-root: {:?}",
            other.map(|(_, a)| a)
        )),
    }
}

fn shape<'s>(shapes: &'s [Shape], name: &str) -> Result<&'s Shape, String> {
    shapes
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("no shape {name}"))
}

fn documents(helm: &Helm, render: Render) -> Result<Vec<Value>, String> {
    let mut rendered = helm.render(&[render])?;
    rendered
        .pop()
        .ok_or_else(|| "Helm rendered nothing".to_owned())?
        .documents()
}

/// The chart rendered offline names every kind: on a default v1.6.2
/// cluster audit-scanner would error the policies whose kinds it lacks.
fn offline_rendering_errors(helm: &Helm, shapes: &[Shape]) -> Result<(), Failed> {
    let documents = documents(helm, Render::with(json!({})))?;
    let on = shape(shapes, "v1.6.2/isp-full")?;
    let audits = audits(&documents, &cluster(&on.resources))?;
    let errored = |name: &str, resource: &str| {
        audits.get(name).is_some_and(|(_, a)| {
            matches!(&a.namespaced, Outcome::Errored(Errored::UnknownResource(g)) if g.resource == resource)
        })
    };
    if errored("values-schema", "bootboxes")
        && errored("chart-render", "bootboxes")
        && errored("upgrade-gate", "etcdclusters")
    {
        Ok(())
    } else {
        Err(format!(
            "the offline rendering on v1.6.2/isp-full: expected values-schema and chart-render errored on \
             bootboxes and upgrade-gate on etcdclusters, got {:?}",
            audits
                .iter()
                .map(|(n, (_, a))| (n, &a.namespaced))
                .collect::<Vec<_>>()
        )
        .into())
    }
}

/// A package enabled after the install: admitted at once, reported as
/// served and not audited, audited after the next `helm upgrade`.
fn kind_enabled_later(helm: &Helm, shapes: &[Shape]) -> Result<(), Failed> {
    let before = shape(shapes, "v1.6.2/isp-full")?;
    let after = shape(shapes, "v1.6.2/isp-full+bootbox")?;
    let bootboxes = Gvr::new("apps.cozystack.io", "v1alpha1", "bootboxes");
    let installed = documents(helm, Render::with(json!({})).serving(&before.resources))?;
    let now = cluster(&after.resources);
    let audits = audits(&installed, &now)?;
    let mut problems = Vec::new();
    for name in ["values-schema", "chart-render"] {
        let Some((policy, audit)) = audits.get(name) else {
            problems.push(format!("{name}: not rendered"));
            continue;
        };
        if audit.audited().contains(&&bootboxes) {
            problems.push(format!("{name}: audits bootboxes before the upgrade"));
        }
        if matches!(audit.namespaced, Outcome::Errored(_)) {
            problems.push(format!("{name}: errored once BootBox is served"));
        }
        if audit_scanner::served_but_not_audited(policy, &now) != [bootboxes.clone()] {
            problems.push(format!(
                "{name}: bootboxes is not reported as served and not audited"
            ));
        }
        if !webhook_covers(policy, &bootboxes, &["CREATE".to_owned()]) {
            problems.push(format!("{name}: BootBox writes do not reach the webhook"));
        }
    }
    let upgraded = documents(helm, Render::with(json!({})).serving(&after.resources))?;
    let audits = self::audits(&upgraded, &now)?;
    for name in ["values-schema", "chart-render"] {
        if !audits
            .get(name)
            .is_some_and(|(_, a)| a.audited().contains(&&bootboxes))
        {
            problems.push(format!(
                "{name}: does not audit bootboxes after the upgrade"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// A group version listed without any kind (its discovery failed: an
/// aggregated API not answering) stays audited: audit-scanner errors the
/// policy only while the API is away.
fn discovery_failed(helm: &Helm, shapes: &[Shape]) -> Result<(), Failed> {
    let on = shape(shapes, "v1.6.2/isp-full")?;
    let without_apps: Vec<Served> = on
        .resources
        .iter()
        .filter(|r| r.group != "apps.cozystack.io")
        .cloned()
        .collect();
    let mut render = Render::with(json!({})).serving(&without_apps);
    if let Some(versions) = render.api_versions.as_mut() {
        versions.push("apps.cozystack.io/v1alpha1".to_owned());
    }
    let documents = documents(helm, render)?;
    let policy = policies(&documents)?
        .into_iter()
        .find(|p| p.name == "values-schema")
        .ok_or("values-schema is not rendered")?;
    if policy.rules.iter().all(|r| !r.has_wildcard()) {
        Ok(())
    } else {
        Err(format!("values-schema's rules: {:?}", policy.rules).into())
    }
}

/// The matrix as docs/install.md shows it.
fn matrix(rows: &BTreeMap<String, BTreeMap<String, String>>, shapes: &[Shape]) -> String {
    let policies: Vec<&String> = rows
        .values()
        .flat_map(BTreeMap::keys)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut out = String::from("| shape |");
    for p in &policies {
        out.push_str(&format!(" {p} |"));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(policies.len()));
    out.push('\n');
    for shape in shapes {
        let Some(row) = rows.get(&shape.name) else {
            continue;
        };
        out.push_str(&format!("| {} |", shape.name));
        for p in &policies {
            out.push_str(&format!(" {} |", row.get(*p).map_or("", String::as_str)));
        }
        out.push('\n');
    }
    out
}

fn matrix_in_the_docs(
    rows: &BTreeMap<String, BTreeMap<String, String>>,
    shapes: &[Shape],
) -> Result<(), Failed> {
    let path = e2e::root().join("docs/install.md");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (Some(begin), Some(end)) = (text.find(MATRIX_BEGIN), text.find(MATRIX_END)) else {
        return Err(format!("docs/install.md has no {MATRIX_BEGIN} ... {MATRIX_END}").into());
    };
    let table = format!("{MATRIX_BEGIN}\n{}{MATRIX_END}", matrix(rows, shapes));
    let current = text.get(begin..end + MATRIX_END.len()).unwrap_or_default();
    if current == table {
        return Ok(());
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!(
            "{}{table}{}",
            text.get(..begin).unwrap_or_default(),
            text.get(end + MATRIX_END.len()..).unwrap_or_default()
        );
        std::fs::write(&path, updated).map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok(());
    }
    Err("docs/install.md's matrix is not this run's: run the chart suite with UPDATE_DOCS=1".into())
}

/// Every trial of the matrix: one Helm run renders every shape.
pub fn trials(
    helm: &Helm,
    metadata: Arc<BTreeMap<String, Metadata>>,
) -> Result<Vec<Trial>, String> {
    if !e2e::root()
        .join("../shared/data/cozystack-v1.6.2/charts/core/platform")
        .is_dir()
    {
        if std::env::var("CI").is_ok_and(|ci| ci == "true") {
            return Err("../shared/data is missing, and under CI that is a failure".to_owned());
        }
        println!("../shared/data is missing: the cluster shapes are SKIPPED");
        return Ok(vec![
            Trial::test("shapes/matrix-in-the-docs", || Ok(())).with_ignored_flag(true),
        ]);
    }
    let shapes = helm.shapes()?;
    let renders: Vec<Render> = shapes
        .iter()
        .map(|s| Render::with(json!({})).serving(&s.resources))
        .collect();
    let rendered: Vec<Rendered> = helm.render(&renders)?;
    let runs: Vec<Run> = shapes
        .iter()
        .cloned()
        .zip(rendered)
        .map(|(shape, rendered)| Run {
            shape,
            documents: rendered.documents(),
        })
        .collect();
    let mut rows = BTreeMap::new();
    let mut trials = Vec::new();
    for run in &runs {
        let result = check_shape(&metadata, run);
        if let Ok(row) = &result {
            rows.insert(run.shape.name.clone(), row.clone());
        }
        trials.push(Trial::test(
            format!("shapes/{}", run.shape.name),
            move || result.map(drop).map_err(Failed::from),
        ));
    }
    let shapes = Arc::new(shapes);
    let complete = rows.len() == runs.len();
    let (s, h) = (Arc::clone(&shapes), helm.clone());
    trials.push(Trial::test(
        "shapes/offline-rendering-errors-where-kinds-are-missing",
        move || offline_rendering_errors(&h, &s),
    ));
    let (s, h) = (Arc::clone(&shapes), helm.clone());
    trials.push(Trial::test("shapes/a-kind-enabled-later", move || {
        kind_enabled_later(&h, &s)
    }));
    let (s, h) = (Arc::clone(&shapes), helm.clone());
    trials.push(Trial::test("shapes/discovery-failed", move || {
        discovery_failed(&h, &s)
    }));
    trials.push(Trial::test("shapes/matrix-in-the-docs", move || {
        if !complete {
            return Err("a shape failed: the matrix is not written".into());
        }
        matrix_in_the_docs(&rows, &shapes)
    }));
    Ok(trials)
}
