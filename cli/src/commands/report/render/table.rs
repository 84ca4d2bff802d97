//! The terminal table: totals, then one row per finding with its fix
//! underneath.

use super::super::output::Report;
use super::{field_label, headline, rows};

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    if !report.checklist.is_empty() {
        out.push_str("Upgrade checklist\n\n");
        out.push_str(&crate::checklist::render_checks(&report.checklist));
        out.push('\n');
    }
    out.push_str(&format!("{}\n\n", headline(report)));
    for (name, counts) in report.totals.groups() {
        let line: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
        out.push_str(&format!("by {name:<10} {}\n", line.join(" · ")));
    }
    let compared = report.compared();
    let mut table: Vec<Vec<String>> = vec![
        ["CHANGE", "RESULT", "SEVERITY", "RULE", "OBJECT", "FIELD"]
            .iter()
            .map(|h| (*h).to_owned())
            .collect(),
    ];
    let mut tails = vec![("MESSAGE".to_owned(), String::new())];
    for finding in rows(report) {
        table.push(vec![
            finding
                .standing
                .map(|s| s.name())
                .unwrap_or_default()
                .to_owned(),
            finding.outcome().name().to_owned(),
            finding.severity_label().to_owned(),
            finding.rule.to_string(),
            finding.object.label(),
            field_label(finding).to_owned(),
        ]);
        tails.push((
            finding.message.clone(),
            finding.fix_beyond_message().to_owned(),
        ));
    }
    let skip = usize::from(!compared);
    let widths: Vec<usize> = (0..6)
        .map(|column| {
            table
                .iter()
                .filter_map(|row| row.get(column))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or_default()
        })
        .collect();
    out.push('\n');
    for (row, (message, fix)) in table.iter().zip(&tails) {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(&widths).skip(skip) {
            line.push_str(&format!("{cell:<width$}  "));
        }
        out.push_str(&format!("{line}{message}\n"));
        if !fix.is_empty() {
            let indent = widths.iter().skip(skip).map(|w| w + 2).sum::<usize>();
            out.push_str(&format!("{:indent$}fix: {fix}\n", ""));
        }
    }
    out
}
