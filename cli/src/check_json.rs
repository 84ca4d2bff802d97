//! What `check --format json` (and `preflight --format json`) prints and
//! `report` reads back: the one writer and the one reader of that format,
//! so the two cannot drift. Each finding is written as the flat object the
//! format has always had (`rule`, `policy`, `severity`, `file`, `line`...).

use std::path::PathBuf;

use admission::Operation;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::checklist::CheckOutcome;
use crate::finding::{Answered, Finding, Location, NOT_CHECKED_LABEL, Object, Outcome, RuleId};

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
    /// violations or warnings), the folded ones included.
    #[serde(default)]
    pub not_checked: usize,
    /// Findings left out because the baseline has them.
    pub baselined: usize,
    /// Offline, a report-only policy's not-checked findings, one entry per
    /// rule instead of one finding per object (`--verbose` lists them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folded: Vec<Folded>,
}

/// The not-checked findings of one rule of a report-only policy, counted
/// rather than listed: offline, the cluster that rule reads is not there
/// for any object, and no manifest's author can change that.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Folded {
    /// `<policy>/<rule>`.
    pub rule: String,
    pub findings: usize,
}

impl Folded {
    /// The line that stands for the findings.
    pub fn line(&self) -> String {
        format!(
            "{}: {NOT_CHECKED_LABEL} for {} object(s): the rule reads the cluster, which an offline \
             check does not have (give a snapshot with --cluster; --verbose lists them)",
            self.rule, self.findings
        )
    }
}

impl Summary {
    /// The line `check` ends with.
    pub fn line(&self) -> String {
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

/// The JSON of one `check` run.
#[derive(Debug)]
pub struct CheckJson {
    /// The upgrade checklist, with `--checklist` (and `preflight`).
    pub checklist: Vec<CheckOutcome>,
    pub findings: Vec<Finding>,
    pub summary: Summary,
}

/// The format as written.
#[derive(Serialize, Deserialize)]
struct Written {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    checklist: Vec<CheckOutcome>,
    findings: Vec<WrittenFinding>,
    summary: Summary,
}

/// A finding as the format writes it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WrittenFinding {
    /// `<policy>/<rule>`.
    rule: String,
    /// The module's name.
    policy: String,
    severity: JsonSeverity,
    operation: Operation,
    api_version: String,
    kind: String,
    namespace: String,
    name: String,
    file: PathBuf,
    line: u64,
    column: u64,
    field: String,
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<u16>,
}

/// A finding's `severity` as the format writes it: what it says of its
/// object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum JsonSeverity {
    /// The object breaks the rule, and the policy rejects it.
    Violation,
    /// The policy allows the object with a warning.
    Warning,
    /// The rule could not judge the object (a cluster read gave no
    /// answer), whichever way its policy answered: no verdict.
    NotChecked,
}

impl WrittenFinding {
    /// A finding `check` made: located, from a request, answered by a
    /// module.
    fn of(finding: &Finding) -> Result<Self> {
        let (Some(location), Some(operation)) = (&finding.location, finding.operation) else {
            bail!("{} has no place in a manifest", finding.rule);
        };
        let severity = match finding.outcome() {
            Outcome::Fail => JsonSeverity::Violation,
            Outcome::Warn => JsonSeverity::Warning,
            Outcome::NotChecked => JsonSeverity::NotChecked,
            Outcome::Error => bail!(
                "{}: an evaluation error is no finding of check",
                finding.rule
            ),
        };
        Ok(Self {
            rule: finding.rule.to_string(),
            policy: finding.deployed_as.clone(),
            severity,
            operation,
            api_version: finding.object.api_version.clone(),
            kind: finding.object.kind.clone(),
            namespace: finding.object.namespace.clone(),
            name: finding.object.name.clone(),
            file: location.file.clone(),
            line: location.line,
            column: location.column,
            field: finding.field.clone(),
            message: finding.message.clone(),
            code: finding.code,
        })
    }

    /// The finding, as read back: whose it is and what its severity and
    /// category are, the reader decides.
    fn finding(self) -> Finding {
        Finding {
            rule: RuleId::parse(&self.rule),
            deployed_as: self.policy,
            ours: false,
            // A not-checked finding's outcome is its rule's; how its policy
            // carried it is not written.
            answered: match self.severity {
                JsonSeverity::Violation => Answered::Violation,
                JsonSeverity::Warning | JsonSeverity::NotChecked => Answered::Warning,
            },
            object: Object {
                api_version: self.api_version,
                kind: self.kind,
                namespace: self.namespace,
                name: self.name,
            },
            field: self.field,
            message: self.message,
            severity: String::new(),
            category: String::new(),
            fix: String::new(),
            location: Some(Location {
                file: self.file,
                line: self.line,
                column: self.column,
            }),
            operation: Some(self.operation),
            code: self.code,
            standing: None,
        }
    }
}

impl CheckJson {
    /// Pretty JSON, keys sorted at every level as `check` has always
    /// printed them (a `serde_json::Value`'s map is ordered).
    pub fn to_json(&self) -> Result<String> {
        let written = Written {
            checklist: self.checklist.clone(),
            findings: self
                .findings
                .iter()
                .map(WrittenFinding::of)
                .collect::<Result<_>>()?,
            summary: self.summary.clone(),
        };
        Ok(serde_json::to_string_pretty(&serde_json::to_value(
            &written,
        )?)?)
    }

    /// Reads the format back.
    pub fn read(value: &Value) -> Result<Self> {
        let written = Written::deserialize(value).context("reading the JSON of `check`")?;
        Ok(Self {
            checklist: written.checklist,
            findings: written
                .findings
                .into_iter()
                .map(WrittenFinding::finding)
                .collect(),
            summary: written.summary,
        })
    }

    /// Whether a JSON object is `check`'s output: it has no `kind`, and its
    /// findings and summary are there.
    pub fn is_check_json(map: &serde_json::Map<String, Value>) -> bool {
        !map.contains_key("kind")
            && map.get("findings").is_some_and(Value::is_array)
            && map.get("summary").is_some_and(Value::is_object)
    }
}
