//! `check`: the whole bundle over manifests, as a cluster would admit them,
//! with findings at the file, line and column of the field they name.

mod baseline;
pub mod git;
mod junit;
pub mod output;
mod rule;
mod sarif;
mod text;
pub mod vars;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use admission::Operation;
use anyhow::{Context, Result};
use capabilities::snapshot::{Capture, Snapshot};
use host::{
    AdmissionRequest, AdmissionResponse, HostCapabilities, Policy, PolicyModule, WarmInstance,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::{FieldPath, Release, Severity};

use crate::manifests::{self, Change, Manifest, Reading};

/// One finding of one policy on one object.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocatedFinding {
    /// `<policy>/<rule>`.
    pub rule: String,
    pub policy: String,
    pub severity: Severity,
    pub operation: Operation,
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub file: PathBuf,
    /// Line and column (from 1) of the field, or of the object when the
    /// field is not written in the file.
    pub line: u64,
    pub column: u64,
    /// The offending field, empty when the finding is about the object.
    pub field: String,
    pub message: String,
    /// The response code of a rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

impl LocatedFinding {
    /// Whether the rule says it could not judge the object (a cluster read
    /// gave no answer), whichever way its policy answered.
    pub fn is_not_checked(&self) -> bool {
        shared::is_not_checked(&self.rule)
    }

    /// `Kind namespace/name`.
    pub fn object(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }

    fn at(
        change: &Change,
        rule: String,
        severity: Severity,
        field: &FieldPath,
        message: String,
    ) -> Self {
        let position = change.manifest.locate(field);
        Self {
            policy: rule.split('/').next().unwrap_or_default().to_owned(),
            rule,
            severity,
            operation: change.operation,
            api_version: change.key.api_version(),
            kind: change.key.kind.clone(),
            namespace: change.key.namespace.clone(),
            name: change.key.name.clone(),
            file: change.manifest.file.clone(),
            line: position.line,
            column: position.column,
            field: field.to_string(),
            message,
            code: None,
        }
    }
}

/// Loaded modules with their settings validated.
pub struct Bundle {
    modules: Vec<PolicyModule>,
    settings: BTreeMap<String, Value>,
}

/// The setting that selects the Cozystack release a policy judges for.
const VERSION_SETTING: &str = "cozystackVersion";

/// The project's home, for rules whose policy names none.
const HOME: &str = "https://github.com/cozystack/cozystack-policies";

impl Bundle {
    /// The bundle of compiled modules (see `bundle_source` for where they
    /// come from) with each policy's settings.
    pub fn new(modules: Vec<PolicyModule>, settings: BTreeMap<String, Value>) -> Self {
        Self { modules, settings }
    }

    /// The policies audit-scanner would run (`backgroundAudit: true`).
    pub fn audited(mut self) -> Self {
        self.modules
            .retain(|m| m.metadata().is_none_or(|m| m.background_audit));
        self
    }

    /// `policies` judge as on `release` where their settings take
    /// `cozystackVersion` and do not set it (a module that refuses the
    /// setting keeps its settings).
    pub fn at_release(mut self, policies: &[&str], release: Release) -> Self {
        for module in self.modules.iter().filter(|m| policies.contains(&m.name())) {
            let mut settings = match self.settings.get(module.name()) {
                Some(Value::Object(settings)) => settings.clone(),
                Some(_) => continue,
                None => serde_json::Map::new(),
            };
            if settings.contains_key(VERSION_SETTING) {
                continue;
            }
            settings.insert(VERSION_SETTING.into(), release.as_str().into());
            let settings = Value::Object(settings);
            if module.configure(settings.clone()).is_ok() {
                self.settings.insert(module.name().to_owned(), settings);
            }
        }
        self
    }

    fn policies(&self) -> Result<Vec<Policy<'_>>> {
        self.modules
            .iter()
            .map(|module| {
                let settings = self
                    .settings
                    .get(module.name())
                    .cloned()
                    .unwrap_or(Value::Null);
                module
                    .configure(settings)
                    .with_context(|| format!("policy {}", module.name()))
            })
            .collect()
    }

    /// The README documenting a policy's rules (the project's README for
    /// the check's own rules).
    pub fn readme(&self, policy: &str) -> String {
        let home = self
            .modules
            .iter()
            .find(|m| m.name() == policy)
            .and_then(|m| m.metadata())
            .and_then(|m| m.annotations.get("io.kubewarden.policy.url"))
            .map(|url| url.trim_end_matches('/').to_owned());
        match home {
            Some(home) => format!("{home}/blob/main/policies/{policy}/README.md"),
            None => format!("{HOME}/blob/main/README.md"),
        }
    }

    /// Evaluates every change with every policy whose rules match it,
    /// cluster reads answered as `capabilities` says.
    ///
    /// The evaluations run on every core, each in its own fresh instance;
    /// the findings are gathered in the order of the changes and policies
    /// (unresolved placeholders first, which `run`'s sort puts in place),
    /// so the output does not depend on the scheduling.
    pub fn evaluate(
        &self,
        changes: &[Change],
        capabilities: &HostCapabilities,
    ) -> Result<Evaluation> {
        let policies = self.policies()?;
        let mut evaluation = Evaluation::default();
        let mut jobs = Vec::new();
        for change in changes {
            if let Some(unresolved) = unresolved(change) {
                evaluation.reports.extend(unresolved);
                continue;
            }
            let before = jobs.len();
            jobs.extend(
                policies
                    .iter()
                    .enumerate()
                    .filter(|(_, policy)| {
                        policy
                            .module()
                            .metadata()
                            .is_none_or(|m| m.matches(&change.request))
                    })
                    .map(|(index, _)| (change, index)),
            );
            if jobs.len() == before {
                evaluation.unmatched += 1;
            }
        }
        // A change holds its positions behind `Rc`s, which stay on this
        // thread; the evaluations need only the requests.
        let requests: Vec<(&AdmissionRequest, usize)> = jobs
            .iter()
            .map(|(change, index)| (&change.request, *index))
            .collect();
        let responses: Vec<AdmissionResponse> = requests
            .par_iter()
            .map_init(
                || Instances::new(policies.len(), capabilities.clone()),
                |instances, (request, index)| instances.evaluate(&policies, *index, request),
            )
            .collect();
        for ((change, index), response) in jobs.iter().zip(&responses) {
            let module = policies.get(*index).map(Policy::module);
            if let Some(module) = module {
                evaluation
                    .reports
                    .extend(findings(change, module, response));
            }
        }
        Ok(evaluation)
    }
}

/// One thread's kept instances, one per policy, made on first use.
///
/// A fresh instance per evaluation, as policy-server makes, costs several
/// times the rule itself; the policies keep no state between calls, so a
/// kept instance answers the same (the host's case test proves it).
struct Instances {
    kept: Vec<Option<WarmInstance>>,
    capabilities: HostCapabilities,
}

impl Instances {
    fn new(policies: usize, capabilities: HostCapabilities) -> Self {
        Self {
            kept: std::iter::repeat_with(|| None).take(policies).collect(),
            capabilities,
        }
    }

    /// The answer of policy `index`: from the kept instance, else (none
    /// could be made, or its call failed and it may be broken) from a fresh
    /// one, which gives the answer policy-server would.
    fn evaluate(
        &mut self,
        policies: &[Policy<'_>],
        index: usize,
        request: &AdmissionRequest,
    ) -> AdmissionResponse {
        let Some(policy) = policies.get(index) else {
            return AdmissionResponse::internal_server_error(&request.uid, "no such policy");
        };
        if let Some(slot) = self.kept.get_mut(index) {
            if slot.is_none() {
                *slot = policy.warm_instance(self.capabilities.clone()).ok();
            }
            if let Some(instance) = slot {
                match policy.evaluate_warm(instance, request) {
                    Ok(response) => return response,
                    Err(_) => *slot = None,
                }
            }
        }
        policy.evaluate(request, self.capabilities.clone()).response
    }
}

/// The findings of one policy's response on one change.
fn findings(
    change: &Change,
    module: &PolicyModule,
    response: &AdmissionResponse,
) -> Vec<LocatedFinding> {
    let report = |severity, line: &str| {
        let (rule, finding) = rule::parse_line(module.name(), line);
        let mut report = LocatedFinding::at(change, rule, severity, &finding.path, finding.message);
        report.policy = module.name().to_owned();
        if severity == Severity::Violation {
            report.code = response.code();
        }
        report
    };
    let mut reports = Vec::new();
    if !response.allowed {
        reports.extend(
            response
                .message()
                .unwrap_or("rejected without a message")
                .lines()
                .map(|line| report(Severity::Violation, line)),
        );
    }
    reports.extend(
        response
            .warnings()
            .iter()
            .map(|warning| report(Severity::Warning, warning)),
    );
    reports
}

/// Findings for the fields of a written object that still hold a
/// placeholder: such an object is not judged, as its literal `${VAR}`
/// is not what Flux would apply.
fn unresolved(change: &Change) -> Option<Vec<LocatedFinding>> {
    let manifest: &Manifest = &change.manifest;
    if change.operation == Operation::Delete || manifest.unresolved.is_empty() {
        return None;
    }
    Some(
        manifest
            .unresolved
            .iter()
            .map(|(field, names)| {
                let names = names
                    .iter()
                    .map(|n| format!("${{{n}}}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                LocatedFinding::at(
                    change,
                    rule::UNRESOLVED_VARIABLE.to_owned(),
                    Severity::Warning,
                    field,
                    format!(
                        "{names} has no value, so the object was not judged: give it with --var or --vars-from, or a default (${{VAR:=default}})"
                    ),
                )
            })
            .collect(),
    )
}

/// Findings, and objects no policy looked at.
#[derive(Debug, Default)]
pub struct Evaluation {
    pub reports: Vec<LocatedFinding>,
    pub unmatched: usize,
}

/// What was checked, for the summary line and the JSON output.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub objects: usize,
    pub create: usize,
    pub update: usize,
    pub delete: usize,
    /// Objects no policy's rules match.
    pub unmatched: usize,
    /// Documents that are not Kubernetes objects.
    pub skipped: usize,
    pub violations: usize,
    pub warnings: usize,
    /// Findings that say a rule could not judge an object (not counted as
    /// violations or warnings).
    #[serde(default)]
    pub not_checked: usize,
    /// Findings left out because the baseline has them.
    pub baselined: usize,
}

impl Summary {
    fn line(&self) -> String {
        format!(
            "{} violation(s), {} warning(s), {} not checked in {} objects ({} CREATE, {} UPDATE, {} DELETE); {} matched no policy, {} document(s) skipped, {} finding(s) in the baseline",
            self.violations,
            self.warnings,
            self.not_checked,
            self.objects,
            self.create,
            self.update,
            self.delete,
            self.unmatched,
            self.skipped,
            self.baselined
        )
    }
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Sarif,
    Junit,
}

/// How a run ends, as its exit code says: a clean run from one that
/// found what fails it, and both from one that could not check everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Exit 0.
    Clean,
    /// Exit 1: a finding (`--fail-on`) or a failed check.
    Failed,
    /// Exit 3: nothing failed, but the snapshot did not answer every read
    /// a rule made (`--allow-incomplete` accepts it).
    Incomplete,
}

impl Exit {
    pub fn code(self) -> std::process::ExitCode {
        match self {
            Exit::Clean => std::process::ExitCode::SUCCESS,
            Exit::Failed => std::process::ExitCode::from(1),
            Exit::Incomplete => std::process::ExitCode::from(3),
        }
    }
}

/// Which findings fail the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Violation,
    Warning,
    Never,
}

/// Where the objects before the change come from.
#[derive(Debug, Clone)]
pub enum Old {
    Directory(PathBuf),
    Revision(String),
}

/// Everything `check` is asked.
#[derive(Debug)]
pub struct Options {
    pub paths: Vec<PathBuf>,
    pub old: Option<Old>,
    pub strict: bool,
    pub vars: vars::Vars,
    pub format: Format,
    pub fail_on: FailOn,
    pub baseline: Option<PathBuf>,
    pub write_baseline: Option<PathBuf>,
    /// The cluster the policies' reads are answered from; none offline.
    pub cluster: Option<Arc<Snapshot>>,
    /// Print the 1.6 upgrade checklist (text or JSON) instead of the
    /// findings alone; needs `cluster`.
    pub checklist: bool,
    /// Exit 0 rather than 3 when, with a cluster snapshot, a rule could not
    /// check (or a check was not checked) and nothing failed.
    pub allow_incomplete: bool,
}

/// `--old` as given: a directory, or else a git revision.
pub fn old(spec: &str, resolved: &Path, inputs: &[PathBuf]) -> Result<Old> {
    if resolved.is_dir() {
        return Ok(Old::Directory(resolved.to_owned()));
    }
    let near = inputs
        .iter()
        .find(|p| p.as_path() != Path::new("-"))
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    if git::is_revision(&near, spec) {
        Ok(Old::Revision(spec.to_owned()))
    } else {
        anyhow::bail!(
            "--old {spec}: neither a directory nor a git revision of the inputs' repository"
        )
    }
}

/// Runs the check and prints; returns how it ends.
pub fn run(options: &Options, bundle: &Bundle) -> Result<Exit> {
    let reading = Reading {
        strict: options.strict,
        vars: &options.vars,
    };
    let old_sources = match &options.old {
        Some(Old::Directory(dir)) => manifests::read(std::slice::from_ref(dir))?,
        Some(Old::Revision(revision)) => git::sources(revision, &options.paths)?,
        None => Vec::new(),
    };
    let old = manifests::load(old_sources, reading)?;
    let mut new = manifests::load(manifests::read(&options.paths)?, reading)?;
    // A snapshot's capture record describes the snapshot, not the cluster.
    new.manifests.retain(|m| !Capture::is_record(&m.object));
    for notice in &new.skipped {
        eprintln!("skipped {notice}");
    }
    let changes = manifests::changes(old.manifests, new.manifests)?;
    let capabilities = match &options.cluster {
        Some(snapshot) => HostCapabilities::Snapshot(Arc::clone(snapshot)),
        None => HostCapabilities::offline(),
    };
    let evaluation = bundle.evaluate(&changes, &capabilities)?;
    let mut reports = evaluation.reports;
    reports.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.rule).cmp(&(&b.file, b.line, b.column, &b.rule))
    });
    if let Some(path) = &options.write_baseline {
        baseline::write(path, &reports)?;
    }
    let known = options
        .baseline
        .as_deref()
        .map(baseline::read)
        .transpose()?
        .unwrap_or_default();
    let before = reports.len();
    reports.retain(|r| !known.contains(&baseline::Entry::of(r)));
    let count = |op| changes.iter().filter(|c| c.operation == op).count();
    let not_checked = reports.iter().filter(|r| r.is_not_checked()).count();
    let violations = reports
        .iter()
        .filter(|r| r.severity == Severity::Violation && !r.is_not_checked())
        .count();
    let summary = Summary {
        objects: changes.len(),
        create: count(Operation::Create),
        update: count(Operation::Update),
        delete: count(Operation::Delete),
        unmatched: evaluation.unmatched,
        skipped: new.skipped.len(),
        violations,
        warnings: reports.len() - violations - not_checked,
        not_checked,
        baselined: before - reports.len(),
    };
    if options.checklist {
        return checklist(options, reports, summary);
    }
    let failed = options.write_baseline.is_none()
        && match options.fail_on {
            FailOn::Violation => summary.violations > 0,
            FailOn::Warning => summary.violations + summary.warnings > 0,
            FailOn::Never => false,
        };
    // Offline, every cluster read fails by design; with a snapshot, a rule
    // that could not check means the snapshot lacks what it reads.
    let incomplete = options.cluster.is_some()
        && summary.not_checked > 0
        && options.write_baseline.is_none()
        && !options.allow_incomplete
        && options.fail_on != FailOn::Never;
    let exit = if failed {
        Exit::Failed
    } else if incomplete {
        Exit::Incomplete
    } else {
        Exit::Clean
    };
    let line = summary.line();
    match options.format {
        Format::Text => print!("{}", text::render(&reports, &summary, text::colour())),
        Format::Json => println!(
            "{}",
            output::Output {
                checklist: Vec::new(),
                findings: reports,
                summary,
            }
            .to_json()?
        ),
        Format::Sarif => println!(
            "{}",
            serde_json::to_string_pretty(&sarif::render(&reports, bundle))?
        ),
        Format::Junit => println!("{}", junit::render(&reports, &changes)?),
    }
    if options.format != Format::Text {
        eprintln!("{line}");
    }
    Ok(exit)
}

/// Prints the upgrade checklist of the snapshot's findings; fails as
/// `--fail-on` says (on a failed check, or on a warned one too), and is
/// incomplete when a check was not checked.
fn checklist(options: &Options, reports: Vec<LocatedFinding>, summary: Summary) -> Result<Exit> {
    let Some(snapshot) = &options.cluster else {
        anyhow::bail!("the checklist judges a cluster: give its snapshot with --cluster");
    };
    let outcomes = crate::preflight::judge(&reports, snapshot);
    use crate::preflight::{Conclusion, Status};
    let failed = match options.fail_on {
        FailOn::Violation => outcomes.iter().any(|o| o.status == Status::Fail),
        FailOn::Warning => outcomes
            .iter()
            .any(|o| matches!(o.status, Status::Fail | Status::Warn)),
        FailOn::Never => false,
    };
    let exit = if failed {
        Exit::Failed
    } else if Conclusion::of(&outcomes) == Conclusion::Incomplete
        && !options.allow_incomplete
        && options.fail_on != FailOn::Never
    {
        Exit::Incomplete
    } else {
        Exit::Clean
    };
    match options.format {
        Format::Text => print!("{}", crate::preflight::render(&outcomes, snapshot)),
        Format::Json => println!(
            "{}",
            output::Output {
                checklist: outcomes,
                findings: reports,
                summary,
            }
            .to_json()?
        ),
        Format::Sarif | Format::Junit => {
            anyhow::bail!("the checklist is printed as text or json")
        }
    }
    Ok(exit)
}
