//! The report's output formats.

mod csv;
mod html;
mod markdown;
mod table;

use anyhow::Result;

use super::Format;
use crate::finding::Finding;
use super::output::Report;

pub fn render(report: &Report, format: Format) -> Result<String> {
    Ok(match format {
        Format::Table => table::render(report),
        Format::Markdown => markdown::render(report),
        Format::Csv => csv::render(report),
        Format::Json => serde_json::to_string_pretty(report)? + "\n",
        Format::Html => html::render(report),
    })
}

/// The findings a format lists: the current ones, then the resolved ones.
fn rows(report: &Report) -> impl Iterator<Item = &Finding> {
    report.findings.iter().chain(&report.resolved)
}

/// `field`, or `(object)` when the finding is about the whole object.
fn field_label(finding: &Finding) -> &str {
    if finding.field.is_empty() {
        "(object)"
    } else {
        &finding.field
    }
}

/// The one-line summary every format starts with.
fn headline(report: &Report) -> String {
    let totals = &report.totals;
    let results: Vec<String> = totals
        .by_result
        .iter()
        .map(|(result, n)| format!("{n} {result}"))
        .collect();
    let mut line = format!("{} findings", totals.findings);
    if !results.is_empty() {
        line.push_str(&format!(" ({})", results.join(", ")));
    }
    if report.compared() {
        let count = |key: &str| totals.since.get(key).copied().unwrap_or_default();
        line.push_str(&format!(
            "; since the previous report: {} new, {} resolved, {} still open",
            count("new"),
            count("resolved"),
            count("open")
        ));
    }
    line
}
