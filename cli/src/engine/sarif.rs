//! SARIF 2.1.0, the format GitHub code scanning and other review tools
//! read: one run, every rule in `tool.driver.rules` with its README anchor,
//! every finding a result with `ruleId`, `kind`, `level` and the region of
//! its field, and each folded rule a notification of the run's invocation.
//! Plain serde structs for the few properties used.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::bundle::Bundle;
use crate::check_json::Folded;
use crate::finding::{Finding, HOME, Outcome, RuleId};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
struct Run {
    tool: Tool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    invocations: Vec<Invocation>,
    results: Vec<SarifResult>,
}

/// The run itself, for what it says besides results: the rules whose
/// not-checked findings it folded.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    tool_execution_notifications: Vec<Notification>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Notification {
    level: &'static str,
    message: Text,
    associated_rule: RuleReference,
}

#[derive(Serialize)]
struct RuleReference {
    id: String,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    information_uri: &'static str,
    rules: Vec<ReportingDescriptor>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
/// A rule as SARIF describes it (its `reportingDescriptor`).
struct ReportingDescriptor {
    id: String,
    short_description: Text,
    help_uri: String,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    /// `fail` for a verdict, `open` for a rule that could not judge ("the
    /// tool was unable to determine whether the result is a pass or a
    /// fail", SARIF 2.1.0 §3.27.9).
    kind: &'static str,
    level: &'static str,
    message: Text,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
    logical_locations: Vec<LogicalLocation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u64,
    start_column: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation {
    fully_qualified_name: String,
    kind: &'static str,
}

/// A file as a URI reference: relative paths stay relative (to the
/// repository, as code scanning expects), with `/` separators.
fn uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let text = text.strip_prefix("./").unwrap_or(&text).to_owned();
    let encoded: String = text
        .chars()
        .map(|c| match c {
            ' ' => "%20".to_owned(),
            '%' => "%25".to_owned(),
            '#' => "%23".to_owned(),
            '?' => "%3F".to_owned(),
            '<' => "%3C".to_owned(),
            '>' => "%3E".to_owned(),
            other => other.to_string(),
        })
        .collect();
    if path.is_absolute() {
        format!("file://{encoded}")
    } else {
        encoded
    }
}

/// The SARIF log of `findings`, each rule linked to its README entry
/// (the home of the module that made it, [`crate::finding::RuleId::url`]),
/// and of the `folded` rules.
pub fn render(findings: &[Finding], folded: &[Folded], bundle: &Bundle) -> Log {
    let mut ids: Vec<String> = findings.iter().map(|f| f.rule.to_string()).collect();
    ids.sort_unstable();
    ids.dedup();
    let rules = ids
        .iter()
        .map(|id| {
            let rule = RuleId::parse(id);
            ReportingDescriptor {
                id: id.clone(),
                short_description: Text {
                    text: format!("Cozystack policy rule {id}"),
                },
                help_uri: rule.url(bundle.home(&rule.policy)),
            }
        })
        .collect();
    let results = findings
        .iter()
        .map(|finding| {
            let id = finding.rule.to_string();
            let field = if finding.field.is_empty() {
                String::new()
            } else {
                format!("{}: ", finding.field)
            };
            let object = finding.object.label();
            let (kind, level) = match finding.outcome() {
                Outcome::Fail | Outcome::Error => ("fail", "error"),
                Outcome::Warn => ("fail", "warning"),
                // A kind other than `fail` has the level `none` (§3.27.10).
                Outcome::NotChecked => ("open", "none"),
            };
            SarifResult {
                rule_index: ids.binary_search(&id).unwrap_or_default(),
                kind,
                level,
                message: Text {
                    text: format!("{field}{} ({})", finding.message, finding.subject()),
                },
                locations: finding
                    .location
                    .iter()
                    .map(|at| Location {
                        physical_location: PhysicalLocation {
                            artifact_location: ArtifactLocation { uri: uri(&at.file) },
                            region: Region {
                                start_line: at.line.max(1),
                                start_column: at.column.max(1),
                            },
                        },
                        logical_locations: vec![LogicalLocation {
                            fully_qualified_name: format!("{object}/{}", finding.field)
                                .trim_end_matches('/')
                                .to_owned(),
                            kind: "object",
                        }],
                    })
                    .collect(),
                // What a baseline entry keys on: stable when lines move.
                partial_fingerprints: BTreeMap::from([(
                    "cozystackFinding/v1",
                    format!(
                        "{id}|{}|{}|{}|{}",
                        finding.object.kind,
                        finding.object.namespace,
                        finding.object.name,
                        finding.field
                    ),
                )]),
                rule_id: id,
            }
        })
        .collect();
    Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "cozystack-policies",
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: HOME,
                    rules,
                },
            },
            invocations: notifications(folded),
            results,
        }],
    }
}

/// The invocation that names each folded rule, if any was folded.
fn notifications(folded: &[Folded]) -> Vec<Invocation> {
    if folded.is_empty() {
        return Vec::new();
    }
    vec![Invocation {
        execution_successful: true,
        tool_execution_notifications: folded
            .iter()
            .map(|folded| Notification {
                level: "note",
                message: Text {
                    text: folded.line(),
                },
                associated_rule: RuleReference {
                    id: folded.rule.clone(),
                },
            })
            .collect(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_become_uri_references() {
        assert_eq!(uri(Path::new("./apps/a b.yaml")), "apps/a%20b.yaml");
        assert_eq!(uri(Path::new("<stdin>")), "%3Cstdin%3E");
        assert_eq!(uri(Path::new("/srv/x#1.yaml")), "file:///srv/x%231.yaml");
    }
}
