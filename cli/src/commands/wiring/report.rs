//! The wiring report: what a snapshot says of the installed bundle, each
//! line a verdict (ok, FAIL, NOT CHECKED, or a note), and the exit code
//! they add up to.
//!
//! What audit-scanner does with a policy is `models::audit_scanner`'s
//! answer over the snapshot: the policy as the cluster stores it, what the
//! cluster serves (the discovery documents of the capture), the
//! PolicyServer and its Service, the namespaces and audit-scanner's own
//! flags (its CronJob). Whether its account may list what it audits, and
//! the PolicyServer's read what the policies look up, is the API server's
//! own answer to a SubjectAccessReview each.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use capabilities::snapshot::{Coverage, ReadResult, Snapshot};
use models::audit_scanner::{self, Audit, Cluster, Endpoint, Errored, Gvr, Namespace, Outcome, Policy, Skip};
use serde::Serialize;
use serde_json::Value;

use crate::installation::SERVED_KIND;

/// How one line of the report ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Ok,
    /// Something the admin should know that is not wrong.
    Note,
    /// The snapshot could not tell: the run is INCOMPLETE.
    NotChecked,
    Fail,
}

impl Verdict {
    fn tag(self) -> &'static str {
        match self {
            Verdict::Ok => "[  ok  ]",
            Verdict::Note => "[ note ]",
            Verdict::NotChecked => "[NOT CHECKED]",
            Verdict::Fail => "[ FAIL ]",
        }
    }
}

/// One line: its verdict and what it says.
#[derive(Debug, Clone, Serialize)]
pub struct Line {
    pub verdict: Verdict,
    pub text: String,
}

fn line(verdict: Verdict, text: impl Into<String>) -> Line {
    Line {
        verdict,
        text: text.into(),
    }
}

/// One policy of the bundle as the cluster runs it.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyWiring {
    pub name: String,
    pub mode: String,
    pub lines: Vec<Line>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Wiring {
    pub context: String,
    pub captured_at: String,
    /// The Cozystack release the cluster records, whether the bundle knows
    /// it, and the platform's migration version.
    pub release: Line,
    /// The PolicyServer, its disruption budget, audit-scanner.
    pub cluster: Vec<Line>,
    pub policies: Vec<PolicyWiring>,
}

fn text<'v>(value: &'v Value, pointer: &str) -> &'v str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// What the snapshot can say of every object of a kind: `None` when it
/// read them, the line that says it could not otherwise.
fn unread(snapshot: &Snapshot, api_version: &str, kind: &str, what: &str) -> Option<Line> {
    match snapshot.coverage(api_version, kind) {
        Coverage::Read | Coverage::NotInstalled => None,
        Coverage::Unread(unread) => Some(line(
            Verdict::NotChecked,
            format!("{what}: {unread}"),
        )),
    }
}

/// What audit-scanner runs with: its namespace, the namespaces it leaves
/// out, its account, read from its CronJob's container.
struct Scanner {
    namespace: String,
    ignored: Vec<String>,
    account: String,
}

fn scanner(cronjob: &Value) -> Scanner {
    let spec = cronjob
        .pointer("/spec/jobTemplate/spec/template/spec")
        .cloned()
        .unwrap_or_default();
    let args: Vec<String> = spec
        .pointer("/containers/0/command")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(
            spec.pointer("/containers/0/args")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let mut namespace = text(cronjob, "/metadata/namespace").to_owned();
    let mut ignored = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value.to_owned())),
            None => (word.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| words.next().cloned());
        match flag {
            "--kubewarden-namespace" | "-k" => namespace = value().unwrap_or_default(),
            "--ignore-namespaces" | "-i" => ignored.extend(
                value()
                    .unwrap_or_default()
                    .split(',')
                    .map(str::to_owned),
            ),
            _ => {}
        }
    }
    Scanner {
        namespace,
        ignored,
        account: text(&spec, "/serviceAccountName").to_owned(),
    }
}

/// The discovery documents of the capture: what the cluster serves, and
/// the group versions whose discovery failed.
fn served(snapshot: &Snapshot) -> (BTreeMap<Gvr, bool>, BTreeMap<String, String>) {
    let mut served = BTreeMap::new();
    for document in snapshot.objects_of_kind(shared::apps::group_version(crate::installation::SERVED_API_VERSION).0, SERVED_KIND) {
        let (group, version) = shared::apps::group_version(text(&document, "/metadata/name"));
        for resource in document
            .pointer("/discovery/resources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = text(resource, "/name");
            if name.contains('/') {
                continue;
            }
            let namespaced = resource["namespaced"].as_bool().unwrap_or(false);
            served.insert(Gvr::new(group, version, name), namespaced);
        }
    }
    let mut failed = BTreeMap::new();
    for read in snapshot.capture().map(|c| c.reads.as_slice()).unwrap_or_default() {
        if read.kind == SERVED_KIND && !read.result.is_read() {
            failed.insert(
                read.name.clone().unwrap_or_default(),
                format!("{} ({})", read.result.as_str(), read.message),
            );
        }
    }
    (served, failed)
}

/// What a SubjectAccessReview asked: user, verb, group, resource, name
/// (empty for none).
type Asked = (String, String, String, String, String);

/// The SubjectAccessReviews of the capture: what each asked, and whether
/// the API server allowed it.
fn reviews(snapshot: &Snapshot) -> BTreeMap<Asked, bool> {
    snapshot
        .objects_of_kind("authorization.k8s.io", "SubjectAccessReview")
        .map(|r| {
            let r = &r;
            let attribute = |key: &str| text(r, &format!("/spec/resourceAttributes/{key}")).to_owned();
            (
                (
                    text(r, "/spec/user").to_owned(),
                    attribute("verb"),
                    attribute("group"),
                    attribute("resource"),
                    attribute("name"),
                ),
                r.pointer("/status/allowed").and_then(Value::as_bool).unwrap_or(false),
            )
        })
        .collect()
}

/// The verdicts of one policy's results in the reports, by verdict.
fn results(snapshot: &Snapshot, unique: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for (api_version, kind) in REPORTS {
        for report in snapshot.objects_of(api_version, kind) {
            for result in report.get("results").and_then(Value::as_array).into_iter().flatten() {
                if text(result, "/policy") == unique {
                    *counts.entry(text(result, "/result").to_owned()).or_default() += 1;
                }
            }
        }
    }
    counts
}

/// The kinds audit-scanner writes its reports as.
const REPORTS: [(&str, &str); 4] = [
    ("openreports.io/v1alpha1", "Report"),
    ("openreports.io/v1alpha1", "ClusterReport"),
    ("wgpolicyk8s.io/v1alpha2", "PolicyReport"),
    ("wgpolicyk8s.io/v1alpha2", "ClusterPolicyReport"),
];

/// The labels Kubewarden's controller gives the PolicyServer's pods
/// (`internal/controller/policyserver_controller_deployment.go:474-485`).
fn pod_labels(server: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app".to_owned(), format!("kubewarden-policy-server-{server}")),
        ("kubewarden/policy-server".to_owned(), server.to_owned()),
        ("app.kubernetes.io/instance".to_owned(), format!("policy-server-{server}")),
        ("app.kubernetes.io/component".to_owned(), "policy-server".to_owned()),
        ("app.kubernetes.io/part-of".to_owned(), "kubewarden".to_owned()),
        ("app.kubernetes.io/managed-by".to_owned(), "kubewarden-controller".to_owned()),
    ])
}

/// The PolicyServer's pods: ready, and no disruption budget that blocks a
/// drain while one crash-loops.
fn policy_server(snapshot: &Snapshot, server: &str, namespace: &str, out: &mut Vec<Line>) {
    let deployment = format!("policy-server-{server}");
    match snapshot
        .objects_of_kind("apps", "Deployment")
        .find(|d| text(d, "/metadata/name") == deployment)
    {
        Some(found) => {
            let wanted = found.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0);
            let ready = found.pointer("/status/readyReplicas").and_then(Value::as_i64).unwrap_or(0);
            let verdict = if ready >= wanted && wanted > 0 { Verdict::Ok } else { Verdict::Fail };
            out.push(line(
                verdict,
                format!(
                    "Deployment {namespace}/{deployment}: {ready} of {wanted} pods ready{}",
                    if verdict == Verdict::Fail {
                        format!(" (kubectl logs -n {namespace} -l app=kubewarden-policy-server-{server} --prefix)")
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        None => out.push(
            match snapshot.object_coverage("apps/v1", "Deployment", namespace, &deployment) {
                Coverage::Unread(unread) => line(Verdict::NotChecked, format!("Deployment {namespace}/{deployment}: {unread}")),
                _ => line(
                    Verdict::Fail,
                    format!("no Deployment {namespace}/{deployment}: Kubewarden's controller has not run the PolicyServer {server}"),
                ),
            },
        ),
    }
    if let Some(unread) = unread(snapshot, "policy/v1", "PodDisruptionBudget", "disruption budgets") {
        out.push(unread);
        return;
    }
    let labels = pod_labels(server);
    let budgets: Vec<Value> = snapshot
        .objects_of_kind("policy", "PodDisruptionBudget")
        .filter(|b| text(b, "/metadata/namespace") == namespace)
        .filter(|b| {
            b.get("spec")
                .and_then(|s| s.get("selector"))
                .and_then(|s| serde_json::from_value(s.clone()).ok())
                .is_some_and(|selector| {
                    models::label_selector::selects(&selector, &labels).unwrap_or(false)
                })
        })
        .collect();
    if budgets.is_empty() {
        out.push(line(
            Verdict::Note,
            "no disruption budget selects the policy-server pods: a drain may evict them all at once",
        ));
    }
    for budget in &budgets {
        let name = text(budget, "/metadata/name");
        if text(budget, "/spec/unhealthyPodEvictionPolicy") == "AlwaysAllow" {
            let allowed = budget.pointer("/status/disruptionsAllowed").and_then(Value::as_i64);
            out.push(line(
                Verdict::Ok,
                format!(
                    "disruption budget {name}: a pod that is not ready is always evictable{}",
                    allowed.map(|n| format!(", {n} disruption(s) allowed now")).unwrap_or_default()
                ),
            ));
        } else {
            out.push(line(
                Verdict::Fail,
                format!(
                    "disruption budget {name} selects the policy-server pods without unhealthyPodEvictionPolicy: \
                     AlwaysAllow: while a policy-server crash-loops it blocks every node drain (Kubewarden's \
                     controller makes one when the PolicyServer sets minAvailable or maxUnavailable: the chart \
                     sets neither and brings its own)"
                ),
            ));
        }
    }
}

/// audit-scanner's CronJob: there, not suspended, when it last ran.
fn audit_runs(snapshot: &Snapshot, namespace: &str, out: &mut Vec<Line>) -> Option<Value> {
    let found = snapshot
        .objects_of_kind("batch", "CronJob")
        .find(|c| text(c, "/metadata/name") == "audit-scanner" && text(c, "/metadata/namespace") == namespace);
    match &found {
        Some(cronjob) => {
            let suspended = cronjob.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
            let last = text(cronjob, "/status/lastScheduleTime");
            let success = text(cronjob, "/status/lastSuccessfulTime");
            let schedule = text(cronjob, "/spec/schedule");
            out.push(line(
                if suspended { Verdict::Fail } else { Verdict::Ok },
                format!(
                    "audit-scanner ({namespace}/audit-scanner, schedule {schedule:?}{}): last run {}, last success {}",
                    if suspended { ", SUSPENDED: nothing writes reports" } else { "" },
                    if last.is_empty() { "never" } else { last },
                    if success.is_empty() { "never" } else { success },
                ),
            ));
        }
        None => out.push(
            match snapshot.object_coverage("batch/v1", "CronJob", namespace, "audit-scanner") {
                Coverage::Unread(unread) => line(Verdict::NotChecked, format!("audit-scanner's CronJob: {unread}")),
                _ => line(
                    Verdict::Fail,
                    format!("no CronJob {namespace}/audit-scanner: nothing audits the stored objects or writes reports (Kubewarden's chart: auditScanner.enable)"),
                ),
            },
        ),
    }
    found
}

/// The model's cluster: what is served, and the PolicyServers audit-scanner
/// finds with their Service.
fn cluster(snapshot: &Snapshot, served: BTreeMap<Gvr, bool>, namespace: &str) -> Cluster {
    let mut cluster = Cluster {
        served,
        ..Cluster::default()
    };
    for server in snapshot.objects_of_kind("policies.kubewarden.io", "PolicyServer") {
        let name = text(&server, "/metadata/name");
        let instance = format!("policy-server-{name}");
        let service_ports = snapshot
            .objects_of_kind("", "Service")
            .filter(|s| {
                text(s, "/metadata/namespace") == namespace
                    && s.pointer("/metadata/labels/app.kubernetes.io~1instance").and_then(Value::as_str)
                        == Some(instance.as_str())
            })
            .map(|s| s.pointer("/spec/ports").and_then(Value::as_array).map_or(0, Vec::len))
            .collect();
        cluster.endpoints.insert(
            name.to_owned(),
            Endpoint {
                policy_server: true,
                service_ports,
            },
        );
    }
    cluster
}

/// The namespaces, each once (the capture may read one by name as well).
fn namespaces(snapshot: &Snapshot) -> Vec<Namespace> {
    let mut seen = BTreeSet::new();
    snapshot
        .objects_of_kind("", "Namespace")
        .filter(|ns| seen.insert(text(ns, "/metadata/name").to_owned()))
        .map(|ns| Namespace {
            name: text(&ns, "/metadata/name").to_owned(),
            labels: ns
                .pointer("/metadata/labels")
                .and_then(|l| serde_json::from_value(l.clone()).ok())
                .unwrap_or_default(),
        })
        .collect()
}

fn list(gvrs: &[&Gvr]) -> String {
    gvrs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// What the report needs besides the policy itself.
struct Context<'a> {
    snapshot: &'a Snapshot,
    cluster: &'a Cluster,
    namespaces: &'a [Namespace],
    scanner: Option<&'a Scanner>,
    discovery_failed: &'a BTreeMap<String, String>,
    reviews: &'a BTreeMap<Asked, bool>,
    /// The PolicyServers' accounts, by server.
    accounts: &'a BTreeMap<String, String>,
    release: &'a str,
}

impl Context<'_> {
    fn review(&self, account: &str, verb: &str, group: &str, resource: &str, name: &str) -> Option<bool> {
        self.reviews
            .get(&(account.to_owned(), verb.to_owned(), group.to_owned(), resource.to_owned(), name.to_owned()))
            .copied()
    }
}

/// The lines of one policy.
fn policy_lines(object: &Value, policy: &Policy, context: &Context<'_>) -> Vec<Line> {
    let mut out = Vec::new();
    let name = &policy.name;
    if policy.status == "active" {
        out.push(line(Verdict::Ok, "active"));
    } else {
        out.push(line(
            Verdict::Fail,
            format!(
                "status {:?}, not active: the PolicyServer has not loaded it (kubectl describe clusteradmissionpolicy {name}; the policy-server's log names the module it could not pull or verify)",
                policy.status
            ),
        ));
    }
    // The webhook Kubewarden made of it.
    let unique = policy.unique_name();
    match context
        .snapshot
        .objects_of_kind("admissionregistration.k8s.io", "ValidatingWebhookConfiguration")
        .find(|w| text(w, "/metadata/name") == unique)
    {
        Some(webhook) => {
            let mut resources = BTreeSet::new();
            let mut operations = BTreeSet::new();
            for hook in webhook.get("webhooks").and_then(Value::as_array).into_iter().flatten() {
                for rule in hook["rules"].as_array().into_iter().flatten() {
                    for r in rule["resources"].as_array().into_iter().flatten() {
                        resources.insert(r.as_str().unwrap_or_default().to_owned());
                    }
                    for o in rule["operations"].as_array().into_iter().flatten() {
                        operations.insert(o.as_str().unwrap_or_default().to_owned());
                    }
                }
            }
            out.push(line(
                Verdict::Ok,
                format!(
                    "webhook {unique}: {} resource(s), {}",
                    resources.len(),
                    operations.into_iter().collect::<Vec<_>>().join(" ")
                ),
            ));
        }
        None => out.push(
            match unread(context.snapshot, "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "its webhook") {
                Some(unread) => unread,
                None if policy.status == "active" => line(
                    Verdict::Fail,
                    format!("no ValidatingWebhookConfiguration {unique}: the API server does not call it"),
                ),
                None => line(Verdict::Note, format!("no webhook {unique} yet: Kubewarden registers it once the policy is active")),
            },
        ),
    }
    // What audit-scanner does with it.
    let Some(scanner) = context.scanner else {
        out.push(line(
            Verdict::NotChecked,
            "audit: audit-scanner's CronJob was not read, so neither its namespaces nor its account are known",
        ));
        return out;
    };
    let unknown: Vec<&String> = policy
        .rules
        .iter()
        .filter(|r| r.has_create() && !r.has_wildcard())
        .flat_map(|r| {
            r.api_groups.iter().flat_map(move |g| {
                r.api_versions.iter().map(move |v| if g.is_empty() { v.clone() } else { format!("{g}/{v}") })
            })
        })
        .collect::<BTreeSet<String>>()
        .into_iter()
        .filter_map(|gv| context.discovery_failed.get_key_value(&gv).map(|(k, _)| k))
        .collect();
    if !unknown.is_empty() {
        out.push(line(
            Verdict::NotChecked,
            format!(
                "audit: what the cluster serves of {} could not be read, so whether audit-scanner audits it is unknown",
                unknown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ),
        ));
        return out;
    }
    let run = audit_scanner::audit(policy, context.cluster, context.namespaces, &scanner.namespace, &scanner.ignored);
    audit_lines(policy, &run, context, &mut out);
    // What its reads need of the PolicyServer's account.
    let account = context.accounts.get(&policy.policy_server);
    for read in object.pointer("/spec/contextAwareResources").and_then(Value::as_array).into_iter().flatten() {
        let (group, _) = shared::apps::group_version(text(read, "/apiVersion"));
        let resource = shared::apps::plural(group, text(read, "/kind"));
        let Some(account) = account else {
            out.push(line(
                Verdict::NotChecked,
                format!("the PolicyServer {}'s account is unknown: its reads of {resource} were not reviewed", policy.policy_server),
            ));
            break;
        };
        let answers: Vec<bool> = context
            .reviews
            .iter()
            .filter(|((user, _, g, r, _), _)| user == account && g == group && *r == resource)
            .map(|(_, allowed)| *allowed)
            .collect();
        if answers.is_empty() {
            out.push(line(Verdict::NotChecked, format!("whether {account} may read {resource} was not reviewed")));
        } else if answers.iter().any(|allowed| !allowed) {
            out.push(line(
                Verdict::Fail,
                format!("{account} may not read {resource}, which the policy looks up: its checks that need them report NOT CHECKED (the chart's policyServer.serviceAccount)"),
            ));
        }
    }
    // Its reports.
    let counts = results(context.snapshot, &unique);
    let unread_reports: Vec<Line> = REPORTS
        .iter()
        .take(2)
        .filter_map(|(g, k)| unread(context.snapshot, g, k, "reports"))
        .collect();
    if !unread_reports.is_empty() && counts.is_empty() {
        out.extend(unread_reports);
    } else if counts.is_empty() {
        if !run.audited().is_empty() {
            out.push(line(
                Verdict::Note,
                format!(
                    "no report yet: the next audit run writes them (now: kubectl create job -n {} --from=cronjob/audit-scanner audit-scanner-now)",
                    scanner.namespace
                ),
            ));
        }
    } else {
        out.push(line(
            Verdict::Ok,
            format!(
                "reports: {}",
                counts.iter().map(|(r, n)| format!("{n} {r}")).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    out
}

fn audit_lines(policy: &Policy, run: &Audit, context: &Context<'_>, out: &mut Vec<Line>) {
    let late = audit_scanner::served_but_not_audited(policy, context.cluster);
    if !late.is_empty() {
        out.push(line(
            Verdict::Fail,
            format!(
                "served but not audited: {} (served since the chart was rendered: its webhook admits them, audit-scanner skips them). \
                 `helm upgrade {} <chart> --reuse-values` renders the policy's rules for what the cluster serves now",
                list(&late.iter().collect::<Vec<_>>()),
                context.release
            ),
        ));
    }
    for (namespace, error) in &run.refused {
        out.push(line(Verdict::Fail, format!("namespace {namespace}: audit-scanner cannot apply its namespaceSelector: {error}")));
    }
    let audited = run.audited();
    match run.not_audited() {
        None => {
            let namespaced = matches!(&run.namespaced, Outcome::Audited(_));
            out.push(line(
                Verdict::Ok,
                format!(
                    "audited on {} resource(s){}",
                    audited.len(),
                    if namespaced { format!(", in {} namespace(s)", run.namespaces.len()) } else { String::new() }
                ),
            ));
            let account = context.scanner.map_or("", |s| s.account.as_str());
            let user = context.scanner.map(|s| format!("system:serviceaccount:{}:{}", s.namespace, s.account)).unwrap_or_default();
            let mut denied = Vec::new();
            let mut unreviewed = Vec::new();
            for gvr in &audited {
                match context.review(&user, "list", &gvr.group, &gvr.resource, "") {
                    Some(true) => {}
                    Some(false) => denied.push(*gvr),
                    None => unreviewed.push(*gvr),
                }
            }
            if !denied.is_empty() {
                out.push(line(
                    Verdict::Fail,
                    format!(
                        "audit-scanner ({account}) may not list {}: no report of them (the chart's auditScanner.rbac, auditScanner.serviceAccount)",
                        list(&denied)
                    ),
                ));
            }
            if !unreviewed.is_empty() {
                out.push(line(
                    Verdict::NotChecked,
                    format!("whether audit-scanner ({account}) may list {} was not reviewed", list(&unreviewed)),
                ));
            }
        }
        Some(Outcome::Errored(Errored::UnknownResource(gvr))) => out.push(line(
            Verdict::Fail,
            format!(
                "audit-scanner errors it and audits nothing: its rules name {gvr}, which the cluster does not serve \
                 (its log: \"failed to obtain unknown GroupVersion resources\"). `helm upgrade {} <chart> --reuse-values` \
                 renders its rules for what the cluster serves",
                context.release
            ),
        )),
        Some(Outcome::Errored(Errored::PolicyServer(why))) => out.push(line(
            Verdict::Fail,
            format!("audit-scanner errors it and audits nothing: {why}"),
        )),
        Some(Outcome::Skipped(Skip::NoCreateRule | Skip::OnlyWildcardRules))
            if policy.rules.iter().any(|r| r.has_create() && r.has_wildcard()) =>
        {
            out.push(line(
                Verdict::Note,
                "not audited: the cluster serves none of the kinds it audits (its webhook admits them once served; `helm upgrade` then audits them)",
            ));
        }
        Some(Outcome::Skipped(Skip::NoCreateRule | Skip::OnlyWildcardRules)) => {
            out.push(line(Verdict::Note, "not audited: it judges changes (no rule with CREATE), which audit-scanner never replays"));
        }
        Some(Outcome::Skipped(Skip::BackgroundAuditOff)) => {
            out.push(line(Verdict::Note, "not audited: backgroundAudit is off"));
        }
        Some(Outcome::Skipped(Skip::NotActive(_))) => {
            out.push(line(Verdict::Fail, "not audited: audit-scanner skips a policy that is not active"));
        }
        Some(Outcome::Audited(_) | Outcome::OutOfScope) => {}
    }
}

impl Wiring {
    /// The report of `snapshot` on the bundle's `policies` (by name),
    /// installed as Helm release `release`.
    pub fn read(snapshot: &Snapshot, policies: &[&str], release: &str) -> Self {
        let capture = snapshot.capture();
        let mut cluster_lines = Vec::new();
        let migration = match snapshot
            .objects_of_kind("", "ConfigMap")
            .find(|c| text(c, "/metadata/name") == "cozystack-version" && text(c, "/metadata/namespace") == "cozy-system")
        {
            Some(found) => format!("its migration version is {}", text(&found, "/data/version")),
            None => "its migration version was not read (ConfigMap cozy-system/cozystack-version)".to_owned(),
        };
        let release_line = line(Verdict::Note, format!("{}; {migration}", snapshot.release_line()));
        let objects: Vec<Value> = snapshot
            .objects_of_kind("policies.kubewarden.io", "ClusterAdmissionPolicy")
            .filter(|p| {
                policies.contains(&text(p, "/metadata/name"))
                    || p.pointer("/metadata/labels/app.kubernetes.io~1part-of").and_then(Value::as_str)
                        == Some("cozystack-policies")
            })
            .collect();
        if let Some(unread) = unread(snapshot, "policies.kubewarden.io/v1", "ClusterAdmissionPolicy", "the policies") {
            cluster_lines.push(unread);
        } else if objects.is_empty() {
            cluster_lines.push(line(
                Verdict::Fail,
                "no ClusterAdmissionPolicy of the bundle is installed (helm install, README step 2)",
            ));
        }
        let servers: BTreeSet<String> = objects.iter().map(|p| text(p, "/spec/policyServer").to_owned()).collect();
        let mut accounts = BTreeMap::new();
        let mut namespace = String::new();
        if let Some(unread) = unread(snapshot, "policies.kubewarden.io/v1", "PolicyServer", "the PolicyServers") {
            cluster_lines.push(unread);
        }
        let scanner_cronjob = snapshot.objects_of_kind("batch", "CronJob").find(|c| text(c, "/metadata/name") == "audit-scanner");
        if let Some(cronjob) = &scanner_cronjob {
            namespace = scanner(cronjob).namespace;
        }
        if namespace.is_empty() {
            namespace = "kubewarden".to_owned();
        }
        for server in &servers {
            match snapshot.objects_of_kind("policies.kubewarden.io", "PolicyServer").find(|s| text(s, "/metadata/name") == server) {
                Some(found) => {
                    let account = text(&found, "/spec/serviceAccountName");
                    accounts.insert(server.clone(), format!("system:serviceaccount:{namespace}:{account}"));
                    cluster_lines.push(line(Verdict::Ok, format!("PolicyServer {server}: {}", text(&found, "/spec/image"))));
                }
                None if capture.is_some_and(|c| c.kind_read("policies.kubewarden.io", "PolicyServer").is_some_and(|r| r.result == ReadResult::Captured)) => {
                    cluster_lines.push(line(Verdict::Fail, format!("no PolicyServer {server}, which the policies run on")));
                }
                None => {}
            }
            policy_server(snapshot, server, &namespace, &mut cluster_lines);
        }
        let cronjob = audit_runs(snapshot, &namespace, &mut cluster_lines);
        let scanner = cronjob.as_ref().map(scanner);
        let (served, discovery_failed) = served(snapshot);
        for (gv, why) in &discovery_failed {
            cluster_lines.push(line(Verdict::NotChecked, format!("what the cluster serves in {gv} was not read: {why}")));
        }
        let cluster = cluster(snapshot, served, &namespace);
        let namespaces = namespaces(snapshot);
        let reviews = reviews(snapshot);
        let context = Context {
            snapshot,
            cluster: &cluster,
            namespaces: &namespaces,
            scanner: scanner.as_ref(),
            discovery_failed: &discovery_failed,
            reviews: &reviews,
            accounts: &accounts,
            release,
        };
        let policies = objects
            .iter()
            .map(|object| match Policy::from_object(object) {
                Ok(policy) => PolicyWiring {
                    name: policy.name.clone(),
                    mode: text(object, "/spec/mode").to_owned(),
                    lines: policy_lines(object, &policy, &context),
                },
                Err(error) => PolicyWiring {
                    name: text(object, "/metadata/name").to_owned(),
                    mode: String::new(),
                    lines: vec![line(Verdict::Fail, format!("{:#}", anyhow::Error::new(error)))],
                },
            })
            .collect();
        Wiring {
            context: capture.map(|c| c.context.clone()).unwrap_or_default(),
            captured_at: capture.map(|c| c.captured_at.clone()).unwrap_or_default(),
            release: release_line,
            cluster: cluster_lines,
            policies,
        }
    }

    fn lines(&self) -> impl Iterator<Item = &Line> {
        self.cluster.iter().chain(self.policies.iter().flat_map(|p| &p.lines))
    }

    /// 1 when a line fails, else 3 when one was not checked, else 0.
    pub fn exit_code(&self) -> u8 {
        let worst = self.lines().map(|l| l.verdict).max().unwrap_or(Verdict::Ok);
        match worst {
            Verdict::Fail => 1,
            Verdict::NotChecked => 3,
            Verdict::Ok | Verdict::Note => 0,
        }
    }

    /// The report for a terminal.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "The bundle on {}, captured {}",
            if self.context.is_empty() { "the cluster" } else { &self.context },
            if self.captured_at.is_empty() { "(no capture record)" } else { &self.captured_at }
        );
        let _ = writeln!(out, "{} {}", self.release.verdict.tag(), self.release.text);
        for l in &self.cluster {
            let _ = writeln!(out, "{} {}", l.verdict.tag(), l.text);
        }
        for policy in &self.policies {
            let _ = writeln!(out, "\n{} ({})", policy.name, if policy.mode.is_empty() { "protect" } else { &policy.mode });
            for l in &policy.lines {
                let _ = writeln!(out, "{} {}", l.verdict.tag(), l.text);
            }
        }
        let count = |v: Verdict| self.lines().filter(|l| l.verdict == v).count();
        let _ = writeln!(
            out,
            "\n{} FAIL, {} NOT CHECKED: {}",
            count(Verdict::Fail),
            count(Verdict::NotChecked),
            match self.exit_code() {
                1 => "the bundle is not wired as it should be (exit 1)",
                3 => "INCOMPLETE: the snapshot did not read everything the report needs (exit 3)",
                _ => "every policy is wired (exit 0)",
            }
        );
        out
    }
}
