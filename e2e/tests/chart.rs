//! The Helm chart (`charts/cozystack-policies`) through Helm itself, and
//! `deploy/`, which is its rendering with the defaults.
//!
//! - `deploy/…`: the committed `deploy/bundle/` (read without Helm): every
//!   object typed, each ClusterAdmissionPolicy held to its policy's
//!   metadata.yml and its settings accepted by the module, the PolicyServer,
//!   RBAC and network policy able to serve the bundle.
//! - `helm/lint`, `helm/deploy-is-the-chart`: `helm lint --strict`, and
//!   `deploy/bundle/` equal to the chart's rendering (run `make chart`).
//! - `<rendering>/…`: the same checks for the chart rendered with its
//!   defaults, with every value changed (`every-value`, in another
//!   namespace, and `every-value/values-reach-the-manifests`: each value
//!   shows in the manifests; every leaf of values.yaml is changed by one of
//!   the renderings), with everything optional off (`disabled`), with
//!   no-delete's guard on (`label-removal`), with `mode: protect`
//!   (`protect`) and with two policies off (`fewer-policies`). Each is typed, also against Kubewarden's CRDs; each
//!   policy's mode and failurePolicy follow the values (`policies`); the
//!   PolicyServer's and audit-scanner's accounts get exactly what the
//!   enabled policies read and audit (`policy-server`, `audit-scanner`).
//! - `rbac/…`: from the default rendering beside the audit-scanner RBAC of
//!   Kubewarden's chart and Kubernetes' `view` role (tests/data/rbac/),
//!   evaluated with Kubernetes' RBAC rules and aggregation
//!   (`e2e::rbac`): audit-scanner can list every resource a policy audits
//!   and do the rest of its job, and could not without the chart.
//! - `monitor/…`: monitor mode never rejects, not even when the
//!   policy-server does not answer (failurePolicy Ignore), and the
//!   chart-wide `mode: protect` protects every policy but the report-only
//!   ones.
//! - `guards/…`: the render refuses a namespace other than Kubewarden's,
//!   and an upgrade that renames the PolicyServer of installed policies
//!   (rendered over a loopback API server, as `helm upgrade` asks the
//!   cluster).
//! - `schema/…`: values.schema.json accepts the settings of every case a
//!   policy accepts, refuses mistakes with the key named, and refuses the
//!   invalid-settings cases it can express (the rest are refused by
//!   policy-server at start-up: `start-up/*` of the policy_server suite).
//! - `install/…`: the Flux HelmRelease and the Cozystack PackageSource and
//!   Package of `charts/install/`, typed, pointing at the published chart,
//!   their values rendered by Helm, and shown verbatim in docs/install.md.
//! - `policy-server/every-value`: policy-server started with exactly the
//!   `every-value` rendering's policies: each policy in the mode the values
//!   gave it, with the settings they gave it.
//!
//! Helm comes from target/helm-venv (`make chart` runs tools/helm-venv);
//! without it the Helm trials say they are skipped (a failure under CI).

// serde_json's `value["key"]` is Null for a missing key: reading manifests
// that way cannot panic, and the values built here are objects.
#![allow(clippy::indexing_slicing)]

use reading::yaml::{self, Limit};
use std::collections::BTreeMap;
use std::sync::Arc;

use e2e::helm::Helm;
use e2e::manifests::{ClusterAdmissionPolicy, Object};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};
use wasm_meta::Metadata;

const CHART: &str = "charts/cozystack-policies";

/// The policies that only report (their templates and READMEs say why):
/// the chart-wide `mode` never protects them.
const REPORT_ONLY: [&str; 2] = ["upgrade-gate", "upgrade-readiness"];

#[path = "chart/crds.rs"]
mod crds;
#[path = "chart/guards.rs"]
mod guards;
#[path = "chart/install.rs"]
mod install;
#[path = "chart/monitor.rs"]
mod monitor;
#[path = "chart/policies.rs"]
mod policies;
#[path = "chart/policy_server.rs"]
mod policy_server;
#[path = "chart/rbac.rs"]
mod rbac;
#[path = "chart/renderings.rs"]
mod renderings;
#[path = "chart/schema.rs"]
mod schema;
#[path = "chart/shapes.rs"]
mod shapes;

use crds::typed_against_the_crds;
use guards::{kubewarden_namespace_guard, policy_server_rename_guard, protect_to_monitor_guard};
use install::install;
use monitor::{monitor_never_rejects, protect_spares_the_report_only_policies};
use policies::policies_follow_metadata;
use policy_server::{policy_server_serves, policy_server_serves_the_bundle};
use rbac::{audit_scanner_reads_exactly_the_audited, audit_scanner_reads_what_the_policies_audit};
use renderings::{
    every_value_is_changed, label_removal_guard, nothing_optional, protect_overlay, renderings,
    values_reach_the_manifests,
};
use schema::{accepts_every_accepted_case, refuses_invalid_settings, refuses_mistakes};

fn main() {
    let args = Arguments::from_args();
    let trials = trials()
        .unwrap_or_else(|error| vec![Trial::test("chart/set-up", move || Err(error.into()))]);
    libtest_mimic::run(&args, trials).exit();
}

/// What every check needs to know about the workspace.
struct Bundle {
    metadata: BTreeMap<String, Metadata>,
    /// files/policies.yaml: what the templates read.
    chart_policies: Value,
    /// values.yaml, the chart's defaults.
    defaults: Value,
    /// Chart.yaml.
    chart: Value,
    /// Kubewarden 1.35's CRDs (`None` where the fact base is missing, off CI).
    crds: Option<crds::Crds>,
    /// Kubewarden 1.37.2's.
    newest_crds: crds::Crds,
}

/// One rendering of the chart: the values given and what came out.
struct Rendering {
    name: &'static str,
    /// The release's namespace.
    namespace: String,
    /// The values as Helm merges them: values.yaml under the given ones.
    values: Value,
    documents: Result<Vec<Value>, String>,
}

fn read(path: &str) -> Result<String, String> {
    let full = e2e::root().join(path);
    std::fs::read_to_string(&full).map_err(|e| format!("{}: {e}", full.display()))
}

fn yaml(path: &str) -> Result<Value, String> {
    yaml::document(&read(path)?, Limit::Cases).map_err(|e| format!("{path}: {e}"))
}

fn load() -> Result<Bundle, String> {
    let mut metadata = BTreeMap::new();
    for policy in e2e::policies()? {
        let path = e2e::root()
            .join("policies")
            .join(&policy)
            .join("metadata.yml");
        let read = Metadata::from_yaml_file(&path).map_err(|e| e.to_string())?;
        metadata.insert(policy, read);
    }
    Ok(Bundle {
        metadata,
        chart_policies: yaml(&format!("{CHART}/files/policies.yaml"))?,
        defaults: yaml(&format!("{CHART}/values.yaml"))?,
        chart: yaml(&format!("{CHART}/Chart.yaml"))?,
        crds: crds::Crds::find()?,
        newest_crds: crds::Crds::newest()?,
    })
}

/// `over` merged onto `under`, maps key by key, as Helm merges values.
fn merged(under: &Value, over: &Value) -> Value {
    match (under, over) {
        (Value::Object(under), Value::Object(over)) => {
            let mut out = under.clone();
            for (key, value) in over {
                let merged = match out.get(key) {
                    Some(below) if !value.is_null() => merged(below, value),
                    _ => value.clone(),
                };
                out.insert(key.clone(), merged);
            }
            Value::Object(out)
        }
        _ => over.clone(),
    }
}

/// The committed deploy/bundle/, as `kubectl apply -k deploy/` applies it.
fn deploy_documents() -> Result<Vec<Value>, String> {
    let top = yaml("deploy/kustomization.yaml")?;
    if top["resources"] != json!(["bundle"]) {
        return Err("deploy/kustomization.yaml must apply exactly bundle/".into());
    }
    let kustomization = yaml("deploy/bundle/kustomization.yaml")?;
    let mut documents = Vec::new();
    for file in kustomization["resources"].as_array().into_iter().flatten() {
        let file = file.as_str().unwrap_or_default();
        documents.extend(e2e::manifests::documents(&read(&format!(
            "deploy/bundle/{file}"
        ))?)?);
    }
    Ok(documents)
}

fn trials() -> Result<Vec<Trial>, String> {
    let bundle = Arc::new(load()?);
    let mut trials = Vec::new();
    let deploy = Arc::new(Rendering {
        name: "deploy",
        namespace: "kubewarden".to_owned(),
        values: bundle.defaults.clone(),
        documents: deploy_documents(),
    });
    trials.extend(checks(&bundle, &deploy));
    trials.push(Trial::test("deploy/protect-overlay", protect_overlay));
    let mut helm_trials: Vec<String> = ["helm/lint", "helm/deploy-is-the-chart"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    for name in [
        "defaults",
        "every-value",
        "disabled",
        "label-removal",
        "protect",
        "fewer-policies",
        "kubewarden-elsewhere",
    ] {
        for check in CHECKS {
            helm_trials.push(format!("{name}/{check}"));
        }
    }
    helm_trials.extend(
        [
            "every-value/values-reach-the-manifests",
            "every-value/every-value-is-changed",
            "label-removal/guard",
            "disabled/nothing-optional",
            "rbac/audit-scanner-reads-what-the-policies-audit",
            "monitor/never-rejects",
            "monitor/protect-spares-the-report-only-policies",
            "guards/kubewarden-namespace",
            "guards/policy-server-rename",
            "guards/protect-to-monitor",
            "schema/accepts-every-accepted-case",
            "schema/refuses-invalid-settings",
            "schema/refuses-mistakes",
            "install/flux",
            "install/cozystack",
            "policy-server/every-value",
            "shapes/matrix-in-the-docs",
        ]
        .into_iter()
        .map(str::to_owned),
    );
    let Some(helm) = Helm::find()? else {
        println!(
            "target/helm-venv is missing: the Helm trials below are SKIPPED (tools/helm-venv installs Helm's SDK)"
        );
        trials.extend(
            helm_trials
                .into_iter()
                .map(|name| Trial::test(name, || Ok(())).with_ignored_flag(true)),
        );
        return Ok(trials);
    };
    let helm = Arc::new(helm);
    {
        let helm = Arc::clone(&helm);
        trials.push(Trial::test("helm/lint", move || Ok(helm.lint()?)));
    }
    {
        let helm = Arc::clone(&helm);
        trials.push(Trial::test("helm/deploy-is-the-chart", move || {
            Ok(helm.deploy_is_rendered()?)
        }));
    }
    let renderings: BTreeMap<&'static str, Arc<Rendering>> = renderings(&bundle, &helm)?
        .into_iter()
        .map(|r| (r.name, Arc::new(r)))
        .collect();
    for rendering in renderings.values() {
        trials.extend(checks(&bundle, rendering));
    }
    let get = |name: &str| {
        renderings
            .get(name)
            .cloned()
            .ok_or_else(|| format!("no rendering {name}"))
    };
    let every = get("every-value")?;
    {
        let every = Arc::clone(&every);
        trials.push(Trial::test(
            "every-value/values-reach-the-manifests",
            move || values_reach_the_manifests(&every),
        ));
    }
    {
        let bundle = Arc::clone(&bundle);
        let every = Arc::clone(&every);
        trials.push(Trial::test(
            "every-value/every-value-is-changed",
            move || every_value_is_changed(&bundle, &every),
        ));
    }
    {
        let rendering = get("label-removal")?;
        trials.push(Trial::test("label-removal/guard", move || {
            label_removal_guard(&rendering)
        }));
    }
    {
        let rendering = get("disabled")?;
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test("disabled/nothing-optional", move || {
            nothing_optional(&bundle, &rendering)
        }));
    }
    {
        let rendering = get("defaults")?;
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test(
            "rbac/audit-scanner-reads-what-the-policies-audit",
            move || audit_scanner_reads_what_the_policies_audit(&bundle, &rendering),
        ));
    }
    {
        let rendering = get("defaults")?;
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test("monitor/never-rejects", move || {
            monitor_never_rejects(&bundle, &rendering)
        }));
    }
    {
        let rendering = get("protect")?;
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test(
            "monitor/protect-spares-the-report-only-policies",
            move || protect_spares_the_report_only_policies(&bundle, &rendering),
        ));
    }
    {
        let helm = Arc::clone(&helm);
        trials.push(Trial::test("guards/kubewarden-namespace", move || {
            kubewarden_namespace_guard(&helm)
        }));
    }
    {
        let helm = Arc::clone(&helm);
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test("guards/policy-server-rename", move || {
            policy_server_rename_guard(&helm, &bundle)
        }));
    }
    {
        let helm = Arc::clone(&helm);
        let bundle = Arc::clone(&bundle);
        trials.push(Trial::test("guards/protect-to-monitor", move || {
            protect_to_monitor_guard(&helm, &bundle)
        }));
    }
    let schema_checks: [(&str, Check); 3] = [
        (
            "schema/accepts-every-accepted-case",
            accepts_every_accepted_case,
        ),
        ("schema/refuses-invalid-settings", refuses_invalid_settings),
        ("schema/refuses-mistakes", refuses_mistakes),
    ];
    for (name, run) in schema_checks {
        let helm = Arc::clone(&helm);
        trials.push(Trial::test(name, move || run(&helm)));
    }
    for (name, file) in [("install/flux", "flux"), ("install/cozystack", "cozystack")] {
        let (helm, bundle) = (Arc::clone(&helm), Arc::clone(&bundle));
        trials.push(Trial::test(name, move || install(&helm, &bundle, file)));
    }
    {
        let every = Arc::clone(&every);
        trials.push(Trial::test("policy-server/every-value", move || {
            policy_server_serves(&every)
        }));
    }
    trials.extend(shapes::trials(&helm, Arc::new(bundle.metadata.clone()))?);
    Ok(trials)
}

/// A trial that asks Helm.
type Check = fn(&Helm) -> Result<(), Failed>;

const CHECKS: [&str; 4] = ["typed", "policies", "policy-server", "audit-scanner"];

/// The checks every rendering gets.
fn checks(bundle: &Arc<Bundle>, rendering: &Arc<Rendering>) -> Vec<Trial> {
    CHECKS
        .iter()
        .map(|check| {
            let (bundle, rendering) = (Arc::clone(bundle), Arc::clone(rendering));
            Trial::test(format!("{}/{check}", rendering.name), move || {
                let objects = objects(&rendering)?;
                match *check {
                    "typed" => typed_against_the_crds(&bundle, &rendering),
                    "policies" => policies_follow_metadata(&bundle, &rendering, &objects),
                    "policy-server" => {
                        policy_server_serves_the_bundle(&bundle, &rendering, &objects)
                    }
                    _ => audit_scanner_reads_exactly_the_audited(&bundle, &rendering, &objects),
                }
            })
        })
        .collect()
}

/// Every object of a rendering as its type.
fn objects(rendering: &Rendering) -> Result<Vec<Object>, Failed> {
    let documents = rendering.documents.as_ref().map_err(Clone::clone)?;
    let mut objects = Vec::new();
    let mut problems = Vec::new();
    for document in documents {
        match Object::from_value(document) {
            Ok(object) => objects.push(object),
            Err(error) => problems.push(error),
        }
    }
    if problems.is_empty() {
        Ok(objects)
    } else {
        Err(problems.join("\n").into())
    }
}

fn policies_in(objects: &[Object]) -> Vec<&ClusterAdmissionPolicy> {
    objects
        .iter()
        .filter_map(|object| match object {
            Object::ClusterAdmissionPolicy(policy) => Some(&**policy),
            _ => None,
        })
        .collect()
}

fn text<'v>(value: &'v Value, pointer: &str) -> &'v str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn enabled(values: &Value, policy: &str) -> bool {
    values["policies"][policy]["enabled"]
        .as_bool()
        .unwrap_or(true)
}

/// A field of a Flux or Cozystack object docs/install.md's manifests use.
fn field<'v>(value: &'v Value, pointer: &str) -> Result<&'v Value, String> {
    value
        .pointer(pointer)
        .ok_or_else(|| format!("{} has no {pointer}", text(value, "/kind")))
}
