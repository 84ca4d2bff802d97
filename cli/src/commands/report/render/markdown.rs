//! Markdown for a ticket or a pull-request comment: totals as short tables,
//! then the findings with their rule linked to the policy README.

use std::collections::BTreeMap;

use crate::finding::Finding;
use super::super::output::Report;
use super::{field_label, headline, rows};

pub fn render(report: &Report) -> String {
    let mut out = String::from("## Policy report\n\n");
    if !report.checklist.is_empty() {
        out.push_str(&format!(
            "### Upgrade checklist\n\n{}\n\n| Status | Check | Source | Objects | Fix |\n|---|---|---|---|---|\n",
            crate::checklist::counts(&report.checklist)
        ));
        for check in &report.checklist {
            let objects: Vec<String> = check
                .objects
                .iter()
                .map(|i| format!("{}: [{}] {}", i.object(), i.rule, i.text()))
                .collect();
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                check.status.label(),
                cell(&format!("{}: {}", check.id, check.title)),
                cell(&check.source),
                cell(&objects.join("; ")),
                cell(&check.fix),
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!("{}\n\n", headline(report)));
    for (name, counts) in report.totals.groups() {
        out.push_str(&totals_table(name, counts));
    }
    let compared = report.compared();
    out.push_str("### Findings\n\n");
    if compared {
        out.push_str("| Change ");
    }
    out.push_str("| Result | Severity | Rule | Object | Field | Message | Fix |\n");
    if compared {
        out.push_str("|---");
    }
    out.push_str("|---|---|---|---|---|---|---|\n");
    for finding in rows(report) {
        if compared {
            let status = finding.standing.map(|s| s.name()).unwrap_or_default();
            out.push_str(&format!("| {status} "));
        }
        let url = finding.rule_url();
        let rule = if url.is_empty() {
            cell(&finding.rule.to_string())
        } else {
            format!("[{}]({url})", cell(&finding.rule.to_string()))
        };
        out.push_str(&format!(
            "| {} | {} | {rule} | {} | {} | {} | {} |\n",
            finding.outcome().name(),
            cell(finding.severity_label()),
            cell(&finding.object.label()),
            field_cell(finding),
            cell(&finding.message),
            cell(finding.fix_beyond_message()),
        ));
    }
    out
}

/// The field as code, or `(object)` as text.
fn field_cell(finding: &Finding) -> String {
    if finding.field.is_empty() {
        field_label(finding).to_owned()
    } else {
        format!("`{}`", finding.field.replace('`', "'").replace('|', "\\|"))
    }
}

fn totals_table(name: &str, counts: &BTreeMap<String, usize>) -> String {
    let mut out = format!("| {name} | findings |\n|---|---:|\n");
    for (key, n) in counts {
        out.push_str(&format!("| {} | {n} |\n", cell(key)));
    }
    out.push('\n');
    out
}

/// Text safe in a table cell: pipes escaped, no line breaks, no HTML.
fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace(['\n', '\r'], " ")
}
