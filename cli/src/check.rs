//! `check`: the whole bundle over manifests, as a cluster would admit them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use bundle::Operation;
use host::{HostCapabilities, Policy, PolicyModule};
use serde::Serialize;
use serde_json::Value;
use shared::Finding;

use crate::manifests::{self, Change};

/// Whether a finding rejects the object or only warns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Violation,
    Warning,
}

/// One finding of one policy on one object.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub policy: String,
    pub severity: Severity,
    pub operation: Operation,
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub file: PathBuf,
    /// The offending field, empty when the finding is about the object.
    pub field: String,
    pub message: String,
    /// The response code of a rejection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

/// Loaded modules with their settings validated.
pub struct Bundle {
    modules: Vec<PolicyModule>,
    settings: BTreeMap<String, Value>,
}

impl Bundle {
    /// The bundle of compiled modules (see `bundle_source` for where they
    /// come from) with each policy's settings.
    pub fn new(modules: Vec<PolicyModule>, settings: BTreeMap<String, Value>) -> Self {
        Self { modules, settings }
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

    /// Evaluates every change with every policy whose rules match it.
    pub fn evaluate(&self, changes: &[Change]) -> Result<Vec<Report>> {
        let policies = self.policies()?;
        let mut reports = Vec::new();
        for change in changes {
            for policy in &policies {
                let module = policy.module();
                if module
                    .metadata()
                    .is_some_and(|m| !m.matches(&change.request))
                {
                    continue;
                }
                let evaluation = policy.evaluate(&change.request, HostCapabilities::offline());
                let response = evaluation.response;
                let report = |severity, finding: Finding| Report {
                    policy: module.name().to_owned(),
                    severity,
                    operation: change.operation,
                    api_version: change.key.api_version(),
                    kind: change.key.kind.clone(),
                    namespace: change.key.namespace.clone(),
                    name: change.key.name.clone(),
                    file: change.file.clone(),
                    field: finding.path.to_string(),
                    message: finding.message,
                    code: (severity == Severity::Violation)
                        .then_some(response.code())
                        .flatten(),
                };
                if !response.allowed {
                    for line in response
                        .message()
                        .unwrap_or("rejected without a message")
                        .lines()
                    {
                        reports.push(report(Severity::Violation, Finding::parse_line(line)));
                    }
                }
                for warning in response.warnings() {
                    reports.push(report(Severity::Warning, Finding::parse_line(warning)));
                }
            }
        }
        Ok(reports)
    }
}

/// How many requests of each operation a change caused.
pub fn tally(changes: &[Change]) -> String {
    let count = |op| changes.iter().filter(|c| c.operation == op).count();
    format!(
        "{} objects ({} CREATE, {} UPDATE, {} DELETE)",
        changes.len(),
        count(Operation::Create),
        count(Operation::Update),
        count(Operation::Delete)
    )
}

/// Human-readable output: findings grouped by object.
pub fn render_text(reports: &[Report], changes: &[Change]) -> String {
    let mut out = String::new();
    let mut current: Option<(PathBuf, String, String, String)> = None;
    for report in reports {
        let object = (
            report.file.clone(),
            report.kind.clone(),
            report.namespace.clone(),
            report.name.clone(),
        );
        if current.as_ref() != Some(&object) {
            let who = if report.namespace.is_empty() {
                format!("{} {}", report.kind, report.name)
            } else {
                format!("{} {}/{}", report.kind, report.namespace, report.name)
            };
            out.push_str(&format!(
                "{}: {} {who}\n",
                report.file.display(),
                report.operation
            ));
            current = Some(object);
        }
        let mark = match report.severity {
            Severity::Violation => "✗",
            Severity::Warning => "!",
        };
        let field = if report.field.is_empty() {
            "(object)"
        } else {
            report.field.as_str()
        };
        out.push_str(&format!(
            "  {mark} {} {field}\n      {}\n",
            report.policy, report.message
        ));
    }
    let violations = reports
        .iter()
        .filter(|r| r.severity == Severity::Violation)
        .count();
    let warnings = reports.len() - violations;
    out.push_str(&format!(
        "{violations} violation(s), {warnings} warning(s) in {}\n",
        tally(changes)
    ));
    out
}

/// Runs the check and prints; returns whether any violation was found.
pub fn run(old: Option<&Path>, new: &[PathBuf], bundle: &Bundle, json: bool) -> Result<bool> {
    let old_manifests = match old {
        Some(old) => manifests::load(&[old.to_owned()])?,
        None => Vec::new(),
    };
    let changes = manifests::changes(old_manifests, manifests::load(new)?)?;
    let reports = bundle.evaluate(&changes)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        print!("{}", render_text(&reports, &changes));
    }
    Ok(reports.iter().any(|r| r.severity == Severity::Violation))
}
