//! Findings from the JSON `cozystack-policies check --format json` prints,
//! read through the type that writes it (`check::output::Output`).

use anyhow::{Context as _, Result};
use serde::Deserialize;
use serde_json::Value;

use super::finding::{self, Context, Object, Outcome, ReportedFinding};
use super::message;
use crate::check::LocatedFinding;
use crate::check::output::Output;
use crate::preflight;
use shared::Severity;

/// The findings and the checklist of one `check` output.
pub fn read(value: &Value) -> Result<(Vec<ReportedFinding>, Vec<preflight::Outcome>)> {
    let output = Output::deserialize(value).context("reading the JSON of `check`")?;
    let mut findings = Vec::new();
    for report in output.findings {
        add(report, &mut findings);
    }
    Ok((findings, output.checklist))
}

fn add(report: LocatedFinding, out: &mut Vec<ReportedFinding>) {
    let context = Context {
        deployed_as: report.policy.clone(),
        result: match report.severity {
            Severity::Violation => Outcome::Fail,
            Severity::Warning => Outcome::Warn,
        },
        severity: String::new(),
        category: String::new(),
        object: Object {
            api_version: report.api_version,
            kind: report.kind,
            namespace: report.namespace,
            name: report.name,
        },
    };
    // `check` splits the rule and the path off the message; the line is
    // rebuilt as the policy wrote it, so it is read as a report's is.
    let line = if message::parse(&report.message).tag.is_some() {
        report.message
    } else {
        let tag = if report.rule.contains('/') {
            format!("[{}] ", report.rule)
        } else {
            String::new()
        };
        let field = if report.field.is_empty() {
            String::new()
        } else {
            format!("{}: ", report.field)
        };
        format!("{tag}{field}{}", report.message)
    };
    finding::from_message(&context, &line, out);
}
