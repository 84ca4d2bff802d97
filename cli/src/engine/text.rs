//! Text output: one line per finding, `file:line:col: rule: label:
//! message`, as compilers print them (editors and terminals jump to such
//! lines), files apart by a blank line, then a line per folded rule and the
//! summary, coloured on a terminal unless `NO_COLOR` is set.

use std::fmt::Write as _;
use std::io::IsTerminal;

use anstyle::{AnsiColor, Style};

use crate::check_json::Summary;
use crate::finding::{Finding, NOT_CHECKED_LABEL, Outcome};

/// Whether standard output takes colour: a terminal, and no `NO_COLOR`
/// (<https://no-color.org>: any non-empty value).
pub fn colour() -> bool {
    wants_colour(
        std::io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    )
}

fn wants_colour(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

fn paint(colour: bool, style: Style, text: &str) -> String {
    if colour {
        format!("{style}{text}{style:#}")
    } else {
        text.to_owned()
    }
}

/// The findings (sorted by file and position), the folded rules and the
/// summary line.
pub fn render(findings: &[Finding], summary: &Summary, colour: bool) -> String {
    let bold = Style::new().bold();
    let mut out = String::new();
    let mut file = None;
    for finding in findings {
        let here = finding.location.as_ref().map(|at| &at.file);
        if file.is_some_and(|f| f != here) {
            out.push('\n');
        }
        file = Some(here);
        let (label, style) = label(finding.outcome());
        if let Some(at) = &finding.location {
            let _ = write!(out, "{}: ", paint(colour, bold, &at.to_string()));
        }
        let _ = writeln!(
            out,
            "{}: {}: {} ({})",
            paint(colour, style, &finding.rule.to_string()),
            paint(colour, style, label),
            finding.text_after_label(),
            finding.subject()
        );
    }
    if !findings.is_empty() {
        out.push('\n');
    }
    let (_, style) = label(Outcome::NotChecked);
    for folded in &summary.folded {
        let line = folded.line();
        let (rule, rest) = line.split_once(": ").unwrap_or((&line, ""));
        let _ = writeln!(out, "{}: {rest}", paint(colour, style, rule));
    }
    out.push_str(&summary.line());
    out.push('\n');
    out
}

/// What a line calls a finding, and its colour.
fn label(outcome: Outcome) -> (&'static str, Style) {
    match outcome {
        Outcome::Fail => ("error", AnsiColor::Red.on_default().bold()),
        Outcome::Warn => ("warning", AnsiColor::Yellow.on_default().bold()),
        Outcome::NotChecked => (NOT_CHECKED_LABEL, AnsiColor::Cyan.on_default().bold()),
        Outcome::Error => ("failed", AnsiColor::Red.on_default().bold()),
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::path::PathBuf;

    use admission::Operation;

    use super::*;
    use crate::check_json::Folded;
    use crate::finding::{Answered, Location, Object, RuleId};

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(wants_colour(true, None));
        assert!(wants_colour(true, Some(OsStr::new(""))));
        assert!(!wants_colour(true, Some(OsStr::new("1"))));
        assert!(!wants_colour(false, None));
    }

    #[test]
    fn lines_read_file_line_column_rule_message() {
        let report = Finding {
            rule: RuleId::new("p", "r"),
            deployed_as: "p".into(),
            ours: false,
            answered: Answered::Warning,
            object: Object {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: "ns".into(),
                name: "c".into(),
            },
            field: "data.x".into(),
            message: "fix it".into(),
            severity: String::new(),
            category: String::new(),
            fix: String::new(),
            location: Some(Location {
                file: PathBuf::from("a.yaml"),
                line: 3,
                column: 5,
            }),
            operation: Some(Operation::Create),
            code: None,
            standing: None,
        };
        let summary = Summary::default();
        let plain = render(std::slice::from_ref(&report), &summary, false);
        assert!(
            plain.starts_with("a.yaml:3:5: p/r: warning: data.x: fix it (CREATE ConfigMap ns/c)\n"),
            "{plain}"
        );
        let coloured = render(std::slice::from_ref(&report), &summary, true);
        assert!(
            coloured.contains("\u{1b}[33m"),
            "yellow for warnings: {coloured:?}"
        );

        let unread = Finding {
            rule: RuleId::new("upgrade-gate", "worker-disks-not-checked"),
            answered: Answered::Violation,
            message: "not checked: the StorageClasses could not be read".into(),
            ..report
        };
        let summary = Summary {
            not_checked: 3,
            folded: vec![Folded {
                rule: "upgrade-gate/registry-mirrors-not-checked".into(),
                findings: 2,
            }],
            ..Summary::default()
        };
        let plain = render(&[unread], &summary, false);
        assert!(
            plain.starts_with(
                "a.yaml:3:5: upgrade-gate/worker-disks-not-checked: not checked: data.x: the \
                 StorageClasses could not be read (CREATE ConfigMap ns/c)\n\n\
                 upgrade-gate/registry-mirrors-not-checked: not checked for 2 object(s): "
            ),
            "{plain}"
        );
        assert!(plain.ends_with(", 3 not checked in 0 objects (0 CREATE, 0 UPDATE, 0 DELETE); 0 matched no policy, 0 document(s) skipped, 0 finding(s) in the baseline\n"), "{plain}");
    }
}
