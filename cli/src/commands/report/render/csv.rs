//! CSV (RFC 4180), one row per finding, for a spreadsheet.

use super::super::output::Report;
use super::rows;

const HEADER: &[&str] = &[
    "change",
    "result",
    "severity",
    "category",
    "policy",
    "rule",
    "deployed_as",
    "namespace",
    "api_version",
    "kind",
    "name",
    "field",
    "message",
    "fix",
    "rule_url",
];

pub fn render(report: &Report) -> String {
    let mut out = line(HEADER.iter().copied());
    for f in rows(report) {
        let url = f.rule_url();
        out.push_str(&line([
            f.standing.map(|s| s.name()).unwrap_or_default(),
            f.outcome().name(),
            &f.severity,
            &f.category,
            &f.rule.policy,
            f.rule.rule.as_deref().unwrap_or_default(),
            &f.deployed_as,
            &f.object.namespace,
            &f.object.api_version,
            &f.object.kind,
            &f.object.name,
            &f.field,
            &f.message,
            &f.fix,
            &url,
        ]));
    }
    out
}

fn line<'a>(cells: impl IntoIterator<Item = &'a str>) -> String {
    let cells: Vec<String> = cells.into_iter().map(quote).collect();
    cells.join(",") + "\r\n"
}

/// Quoted when it holds a comma, quote or line break; a leading `=`, `+`,
/// `-` or `@` is prefixed with `'` so a spreadsheet does not run it.
fn quote(cell: &str) -> String {
    let cell = if cell.starts_with(['=', '+', '-', '@']) {
        format!("'{cell}")
    } else {
        cell.to_owned()
    };
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell
    }
}
