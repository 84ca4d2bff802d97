//! A single self-contained HTML file: totals, bar charts of the findings
//! by policy and by namespace (inline SVG), and the findings as a table
//! that sorts and filters in the page (inline CSS and script, nothing
//! fetched). The markup is also well-formed XML, so a test can parse it
//! strictly.

use std::collections::BTreeMap;

use crate::finding::Finding;
use super::super::output::Report;
use super::{field_label, rows};

const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\" xmlns=\"http://www.w3.org/1999/xhtml\">\n<head>\n",
    );
    out.push_str(
        "<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width\"/>\n",
    );
    out.push_str("<title>Policy report</title>\n");
    out.push_str(&format!("<style>\n{STYLE}</style>\n</head>\n<body>\n"));
    out.push_str("<h1>Policy report</h1>\n");
    if !report.checklist.is_empty() {
        checklist(&mut out, report);
    }
    out.push_str(&format!(
        "<p class=\"total\">Findings: <span id=\"total-findings\">{}</span></p>\n",
        report.totals.findings
    ));
    if report.compared() {
        let counts: Vec<String> = [
            ("new", "new"),
            ("resolved", "resolved"),
            ("open", "still open"),
        ]
        .iter()
        .map(|(status, label)| {
            let n = report
                .totals
                .since
                .get(*status)
                .copied()
                .unwrap_or_default();
            format!("<span id=\"since-{status}\">{n}</span> {label}")
        })
        .collect();
        out.push_str(&format!(
            "<p class=\"total\">Since the previous report: {}",
            counts.join(", ")
        ));
        out.push_str("</p>\n");
    }
    out.push_str("<div class=\"charts\">\n");
    chart(&mut out, "policy", &report.totals.by_policy);
    chart(&mut out, "namespace", &report.totals.by_namespace);
    out.push_str("</div>\n<div class=\"totals\">\n");
    for (name, counts) in report.totals.groups() {
        totals_table(&mut out, name, counts);
    }
    out.push_str("</div>\n<h2>Findings</h2>\n");
    out.push_str(
        "<p><input id=\"filter\" type=\"search\" placeholder=\"Filter: any text in a row\" aria-label=\"Filter\"/> \
         <span id=\"shown\">0</span> of <span id=\"rows\">0</span> shown</p>\n",
    );
    findings_table(&mut out, report);
    out.push_str(&format!(
        "<script>//<![CDATA[\n{SCRIPT}//]]></script>\n</body>\n</html>\n"
    ));
    out
}

/// A horizontal bar per key, longest first.
fn chart(out: &mut String, name: &str, counts: &BTreeMap<String, usize>) {
    let mut bars: Vec<(&String, &usize)> = counts.iter().collect();
    bars.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let max = bars.first().map_or(1, |(_, n)| (**n).max(1));
    let (row, label, width) = (22, 190, 300);
    let height = row * bars.len().max(1) + 4;
    out.push_str(&format!("<figure><figcaption>Findings by {name}</figcaption>\n\
         <svg id=\"chart-{name}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" role=\"img\" aria-label=\"Findings by {name}\">\n",
        label + width + 50
    ));
    for (index, (key, n)) in bars.iter().enumerate() {
        let y = index * row + 2;
        let bar = (width * **n / max).max(1);
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label}\" y=\"{y}\" width=\"{bar}\" height=\"{}\" data-key=\"{}\"/>\
             <text x=\"{}\" y=\"{}\">{n}</text>\n",
            label - 6,
            y + 15,
            escape(&truncate(key, 28)),
            row - 6,
            escape(key),
            label + bar + 6,
            y + 15,
        ));
    }
    out.push_str("</svg></figure>\n");
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        text.chars().take(max - 1).collect::<String>() + "…"
    }
}

fn totals_table(out: &mut String, name: &str, counts: &BTreeMap<String, usize>) {
    out.push_str(&format!("<table class=\"by\" id=\"by-{name}\"><thead><tr><th>{name}</th><th>findings</th></tr></thead><tbody>\n"
    ));
    for (key, n) in counts {
        out.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{n}</td></tr>\n",
            escape(key)
        ));
    }
    out.push_str("</tbody></table>\n");
}

/// The upgrade checklist: one row per check of the release notes.
fn checklist(out: &mut String, report: &Report) {
    out.push_str(&format!(
        "<h2>Upgrade checklist</h2>\n<p class=\"total\" id=\"checklist-counts\">{}</p>\n\
         <table id=\"checklist\"><thead><tr><th>Status</th><th>Check</th><th>Source</th>\
         <th>Objects</th><th>Fix</th></tr></thead>\n<tbody>\n",
        escape(&crate::checklist::counts(&report.checklist))
    ));
    for check in &report.checklist {
        let objects: String = check
            .objects
            .iter()
            .map(|i| {
                format!(
                    "<li>{}: <code>{}</code> {}</li>",
                    escape(&i.object()),
                    escape(&i.rule),
                    escape(&i.text())
                )
            })
            .collect();
        let objects = if objects.is_empty() {
            String::new()
        } else {
            format!("<ul>{objects}</ul>")
        };
        let status = serde_json::to_value(check.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        out.push_str(&format!(
            "<tr class=\"{status}\" id=\"check-{}\"><td>{}</td><td>{}</td><td>{}</td><td>{objects}</td><td>{}</td></tr>\n",
            escape(&check.id),
            check.status.label(),
            escape(&check.title),
            escape(&check.source),
            escape(&check.fix),
        ));
    }
    out.push_str("</tbody></table>\n");
}

const COLUMNS: &[&str] = &[
    "Change", "Result", "Severity", "Category", "Rule", "Object", "Field", "Message", "Fix",
];

fn findings_table(out: &mut String, report: &Report) {
    out.push_str("<table id=\"findings\"><thead><tr>");
    for (index, column) in COLUMNS.iter().enumerate() {
        out.push_str(&format!(
            "<th data-column=\"{index}\" title=\"Sort by {column}\">{column}</th>"
        ));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for finding in rows(report) {
        row(out, finding);
    }
    out.push_str("</tbody></table>\n");
}

fn row(out: &mut String, f: &Finding) {
    let url = f.rule_url();
    let rule = if url.is_empty() {
        escape(&f.rule.to_string())
    } else {
        format!("<a href=\"{}\">{}</a>", escape(&url), escape(&f.rule.to_string()))
    };
    let status = f.standing.map(|s| s.name()).unwrap_or_default();
    out.push_str(&format!(
        "<tr class=\"{}\"><td>{status}</td><td>{}</td><td>{}</td><td>{}</td><td>{rule}</td>\
         <td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
        f.outcome().name(),
        f.outcome().name(),
        escape(f.severity_label()),
        escape(f.category_label()),
        escape(&f.object.label()),
        escape(field_label(f)),
        escape(&f.message),
        escape(f.fix_beyond_message()),
    ));
}

/// Text and attribute values, for HTML and XML alike.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
