//! The report as data: its findings, what `--since` resolved, the totals;
//! and its JSON form, which `--since` reads back.

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::finding::ReportedFinding;
use super::totals::Totals;
use crate::preflight::Outcome;

/// The `kind` of the report's JSON output.
pub const KIND: &str = "CozystackPoliciesReport";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub kind: String,
    pub totals: Totals,
    pub findings: Vec<ReportedFinding>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolved: Vec<ReportedFinding>,
    /// The upgrade checklist, when an input is `preflight --format json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checklist: Vec<Outcome>,
}

impl Report {
    pub fn new(
        findings: Vec<ReportedFinding>,
        resolved: Vec<ReportedFinding>,
        compared: bool,
    ) -> Self {
        Report {
            kind: KIND.to_owned(),
            totals: Totals::count(&findings, &resolved, compared),
            findings,
            resolved,
            checklist: Vec::new(),
        }
    }

    /// Whether the findings were compared with a previous report.
    pub fn compared(&self) -> bool {
        !self.totals.since.is_empty()
    }
}

/// The current findings of a report's JSON output (not what it resolved),
/// and its checklist.
pub fn read_back(value: &Value) -> Result<(Vec<ReportedFinding>, Vec<Outcome>)> {
    let report = Report::deserialize(value).context("reading the report's JSON output")?;
    let findings = report
        .findings
        .into_iter()
        .map(|f| ReportedFinding { status: None, ..f })
        .collect();
    Ok((findings, report.checklist))
}
