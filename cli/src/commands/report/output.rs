//! The report as data: its findings, what `--since` resolved, the totals;
//! and its JSON form, which `--since` reads back.

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::totals::Totals;
use crate::checklist::CheckOutcome;
use crate::finding::{Answered, Finding, Object, Outcome, RuleId, Standing};

/// The `kind` of the report's JSON output.
pub const KIND: &str = "CozystackPoliciesReport";

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub kind: String,
    pub totals: Totals,
    #[serde(serialize_with = "written")]
    pub findings: Vec<Finding>,
    #[serde(serialize_with = "written", skip_serializing_if = "Vec::is_empty")]
    pub resolved: Vec<Finding>,
    /// The upgrade checklist, when an input is `preflight --format json`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checklist: Vec<CheckOutcome>,
}

impl Report {
    pub fn new(findings: Vec<Finding>, resolved: Vec<Finding>, compared: bool) -> Self {
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

/// The report's JSON as written (its kind and totals read only to refuse
/// what is not one).
#[derive(Deserialize)]
struct Written {
    #[serde(rename = "kind")]
    _kind: String,
    #[serde(rename = "totals")]
    _totals: Totals,
    findings: Vec<WrittenFinding>,
    #[serde(default)]
    checklist: Vec<CheckOutcome>,
}

/// A finding as the report's JSON writes it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WrittenFinding {
    /// Our policy's name, or the deployed name of a foreign policy.
    policy: String,
    /// The rule id, `unknown` for our untagged messages, empty for others.
    rule: String,
    deployed_as: String,
    ours: bool,
    result: Outcome,
    severity: String,
    category: String,
    object: Object,
    field: String,
    message: String,
    fix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<Standing>,
}

impl WrittenFinding {
    fn of(finding: &Finding) -> Self {
        Self {
            policy: finding.rule.policy.clone(),
            rule: finding.rule.rule.clone().unwrap_or_default(),
            deployed_as: finding.deployed_as.clone(),
            ours: finding.ours,
            result: finding.outcome(),
            severity: finding.severity.clone(),
            category: finding.category.clone(),
            object: finding.object.clone(),
            field: finding.field.clone(),
            message: finding.message.clone(),
            fix: finding.fix.clone(),
            status: finding.standing,
        }
    }

    /// The finding, as current: its standing against an older report is
    /// this report's to decide again. A report says `not-checked` and not
    /// how the policy answered; it reads back as a violation, as
    /// audit-scanner records a report-only policy's.
    fn finding(self) -> Finding {
        Finding {
            rule: RuleId {
                policy: self.policy,
                rule: Some(self.rule).filter(|rule| !rule.is_empty()),
            },
            deployed_as: self.deployed_as,
            ours: self.ours,
            answered: match self.result {
                Outcome::Fail | Outcome::NotChecked => Answered::Violation,
                Outcome::Warn => Answered::Warning,
                Outcome::Error => Answered::Error,
            },
            object: self.object,
            field: self.field,
            message: self.message,
            severity: self.severity,
            category: self.category,
            fix: self.fix,
            location: None,
            operation: None,
            code: None,
            standing: None,
        }
    }
}

fn written<S: Serializer>(findings: &[Finding], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(findings.iter().map(WrittenFinding::of))
}

/// The current findings of a report's JSON output (not what it resolved),
/// and its checklist.
pub fn read_back(value: &Value) -> Result<(Vec<Finding>, Vec<CheckOutcome>)> {
    let report = Written::deserialize(value).context("reading the report's JSON output")?;
    let findings = report
        .findings
        .into_iter()
        .map(WrittenFinding::finding)
        .collect();
    Ok((findings, report.checklist))
}
