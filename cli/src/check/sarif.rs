//! SARIF 2.1.0, the format GitHub code scanning and other review tools
//! read: one run, every rule in `tool.driver.rules` with its README anchor,
//! every finding a result with `ruleId`, `level` and the region of its
//! field. Plain serde structs for the few properties used.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::{Bundle, LocatedFinding};
use shared::Severity;

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
    results: Vec<SarifResult>,
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
    level: &'static str,
    message: Text,
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

/// The anchor a policy README gives a rule: `#rule-<rule>`.
fn help_uri(bundle: &Bundle, rule: &str) -> String {
    let (policy, name) = rule.split_once('/').unwrap_or((rule, ""));
    if policy == "check" {
        return format!(
            "{}/blob/main/README.md#checking-your-own-manifests",
            super::HOME
        );
    }
    let readme = bundle.readme(policy);
    if name.is_empty() || name == "unknown" {
        readme
    } else {
        format!("{readme}#rule-{name}")
    }
}

/// The SARIF log of `reports`.
pub fn render(reports: &[LocatedFinding], bundle: &Bundle) -> Log {
    let mut ids: Vec<&str> = reports.iter().map(|r| r.rule.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let rules = ids
        .iter()
        .map(|id| ReportingDescriptor {
            id: (*id).to_owned(),
            short_description: Text {
                text: format!("Cozystack policy rule {id}"),
            },
            help_uri: help_uri(bundle, id),
        })
        .collect();
    let results = reports
        .iter()
        .map(|report| {
            let field = if report.field.is_empty() {
                String::new()
            } else {
                format!("{}: ", report.field)
            };
            SarifResult {
                rule_index: ids.binary_search(&report.rule.as_str()).unwrap_or_default(),
                rule_id: report.rule.clone(),
                // SARIF's "note": a rule that could not judge the object.
                level: match report.severity {
                    _ if report.is_not_checked() => "note",
                    Severity::Violation => "error",
                    Severity::Warning => "warning",
                },
                message: Text {
                    text: format!(
                        "{field}{} ({} {})",
                        report.message,
                        report.operation,
                        report.object()
                    ),
                },
                locations: vec![Location {
                    physical_location: PhysicalLocation {
                        artifact_location: ArtifactLocation {
                            uri: uri(&report.file),
                        },
                        region: Region {
                            start_line: report.line.max(1),
                            start_column: report.column.max(1),
                        },
                    },
                    logical_locations: vec![LogicalLocation {
                        fully_qualified_name: format!("{}/{}", report.object(), report.field)
                            .trim_end_matches('/')
                            .to_owned(),
                        kind: "object",
                    }],
                }],
                // What a baseline entry keys on: stable when lines move.
                partial_fingerprints: BTreeMap::from([(
                    "cozystackFinding/v1",
                    format!(
                        "{}|{}|{}|{}|{}",
                        report.rule, report.kind, report.namespace, report.name, report.field
                    ),
                )]),
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
                    information_uri: super::HOME,
                    rules,
                },
            },
            results,
        }],
    }
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
