//! Every `fail` and `required` call of an application chart's templates:
//! where a chart refuses values, which a new release adds or removes.
//!
//! Templates are read as Go's `text/template` reads them: actions between
//! `{{` and `}}` (with their `-` trim markers), comments (`/* … */`) left
//! out, string literals (`"…"` with escapes, `` `…` `` raw) not searched.
//! A call is the word `fail` or `required` as a function (not a field or a
//! variable), and its message the first string literal after it: the
//! `fail` text, the `printf` format it fails with, the `required` message.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::tree::{read, sorted_dir};

/// One `fail` or `required` call.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Site {
    /// `apps/kubernetes`.
    pub chart: String,
    /// Below the chart: `templates/cluster.yaml`.
    pub file: String,
    /// `fail` or `required`.
    pub call: String,
    /// The first string literal after the call.
    pub message: String,
    /// Where the call is, from 1.
    pub line: usize,
}

impl Site {
    /// What identifies a site across releases, whose lines move: its chart,
    /// file, call and message.
    pub fn key(&self) -> (&str, &str, &str, &str) {
        (&self.chart, &self.file, &self.call, &self.message)
    }

    /// `apps/kubernetes/templates/cluster.yaml:525`.
    pub fn location(&self) -> String {
        format!("{}/{}:{}", self.chart, self.file, self.line)
    }
}

/// Every call in the templates of `chart` (`<group>/<chart>`, at `dir`),
/// one entry per distinct call and message in a file, at its first line.
pub fn of_chart(chart: &str, dir: &Path) -> Result<Vec<Site>, String> {
    let mut sites = Vec::new();
    let templates = dir.join("templates");
    if templates.is_dir() {
        walk(chart, dir, &templates, &mut sites)?;
    }
    sites.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    let mut seen = std::collections::BTreeSet::new();
    sites.retain(|site| seen.insert((site.file.clone(), site.call.clone(), site.message.clone())));
    Ok(sites)
}

fn walk(chart: &str, root: &Path, dir: &Path, out: &mut Vec<Site>) -> Result<(), String> {
    for entry in sorted_dir(dir)? {
        if entry.is_dir() {
            walk(chart, root, &entry, out)?;
            continue;
        }
        let file = entry
            .strip_prefix(root)
            .map_err(|e| e.to_string())?
            .to_string_lossy()
            .replace('\\', "/");
        for (line, call, message) in calls(&read(&entry)?) {
            out.push(Site {
                chart: chart.to_owned(),
                file: file.clone(),
                call,
                message,
                line,
            });
        }
    }
    Ok(())
}

/// The `fail` and `required` calls of one template: `(line, call,
/// message)`.
pub fn calls(source: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(found) = source.get(pos..).and_then(|rest| rest.find("{{")) {
        let start = pos + found;
        let mut body = start + 2;
        if source.get(body..).is_some_and(|rest| rest.starts_with('-')) {
            body += 1;
        }
        let inner = source.get(body..).unwrap_or_default();
        let trimmed = inner.trim_start();
        if trimmed.starts_with("/*") {
            let comment = body + (inner.len() - trimmed.len());
            pos = source
                .get(comment..)
                .and_then(|rest| rest.find("*/"))
                .and_then(|close| {
                    let after = comment + close + 2;
                    source
                        .get(after..)
                        .and_then(|rest| rest.find("}}"))
                        .map(|end| after + end + 2)
                })
                .unwrap_or(source.len());
            continue;
        }
        let end = action_end(source, body);
        let action = source.get(body..end).unwrap_or_default();
        for (offset, call) in functions(action) {
            let line = 1 + source
                .get(..body + offset)
                .unwrap_or_default()
                .matches('\n')
                .count();
            let message = first_literal(action.get(offset..).unwrap_or_default());
            out.push((line, call.to_owned(), message));
        }
        pos = end;
    }
    out
}

/// Where the action whose body starts at `body` ends (after its `}}`).
fn action_end(source: &str, body: usize) -> usize {
    let bytes = source.as_bytes();
    let mut i = body;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'"' => i = skip_quoted(bytes, i, b'"'),
            b'`' => i = skip_raw(bytes, i),
            b'\'' => i = skip_quoted(bytes, i, b'\''),
            b'}' if bytes.get(i + 1) == Some(&b'}') => return i + 2,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Past a literal opened by `quote` at `i`, with backslash escapes.
fn skip_quoted(bytes: &[u8], i: usize, quote: u8) -> usize {
    let mut j = i + 1;
    while let Some(&byte) = bytes.get(j) {
        match byte {
            b'\\' => j += 2,
            b if b == quote => return j + 1,
            b'\n' => return j,
            _ => j += 1,
        }
    }
    bytes.len()
}

/// Past a raw string opened at `i`.
fn skip_raw(bytes: &[u8], i: usize) -> usize {
    bytes
        .get(i + 1..)
        .and_then(|rest| rest.iter().position(|b| *b == b'`'))
        .map_or(bytes.len(), |close| i + close + 2)
}

/// The offsets of `fail` and `required` used as functions in `action`,
/// outside its string literals.
fn functions(action: &str) -> Vec<(usize, &'static str)> {
    let bytes = action.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'"' => i = skip_quoted(bytes, i, b'"'),
            b'`' => i = skip_raw(bytes, i),
            b'\'' => i = skip_quoted(bytes, i, b'\''),
            _ => {
                let before = i.checked_sub(1).and_then(|p| bytes.get(p));
                let boundary =
                    before.is_none_or(|b| !(b.is_ascii_alphanumeric() || b"_.$".contains(b)));
                let word = ["fail", "required"].into_iter().find(|word| {
                    action.get(i..).is_some_and(|rest| rest.starts_with(word))
                        && bytes
                            .get(i + word.len())
                            .is_some_and(|b| b.is_ascii_whitespace() || *b == b'(')
                });
                match word {
                    Some(word) if boundary => {
                        out.push((i, word));
                        i += word.len();
                    }
                    _ => i += 1,
                }
            }
        }
    }
    out
}

/// The first string literal of `text`, unquoted (`""` when there is none).
fn first_literal(text: &str) -> String {
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'"' => {
                let end = skip_quoted(bytes, i, b'"');
                let literal = text.get(i..end).unwrap_or_default();
                return serde_json::from_str(literal)
                    .unwrap_or_else(|_| literal.trim_matches('"').to_owned());
            }
            b'`' => {
                let end = skip_raw(bytes, i);
                return text
                    .get(i + 1..end.saturating_sub(1))
                    .unwrap_or_default()
                    .to_owned();
            }
            _ => {}
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_outside_comments_and_strings() {
        let source = r#"{{- /* fail "not this" }} */ -}}
{{- if .Values.x }}
{{-   fail (printf "nodeGroup %s: set both" $groupName) }}
{{- end }}
text {{ "fail \"no\"" }} {{ .Values.fail }} {{ $required := 1 }}
{{ required "cluster is required" .Values.cluster | quote }}
{{- fail `raw
message` -}}
{{ include "x" . | fail }}
"#;
        assert_eq!(
            calls(source),
            [
                (3, "fail".to_owned(), "nodeGroup %s: set both".to_owned()),
                (6, "required".to_owned(), "cluster is required".to_owned()),
                (7, "fail".to_owned(), "raw\nmessage".to_owned()),
                (9, "fail".to_owned(), String::new()),
            ]
        );
        assert_eq!(
            calls(r#"{{ fail "a \"quoted\" word" }}"#)[0].2,
            "a \"quoted\" word"
        );
    }

    #[test]
    fn the_kubernetes_chart_of_v1_5_4_checks_half_set_resources() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
        let chart = data.join("cozystack-v1.5.4/charts/apps/kubernetes");
        if !chart.is_dir() {
            println!("skipped: no reference data at {}", data.display());
            return;
        }
        let sites = of_chart("apps/kubernetes", &chart).unwrap();
        let half = sites
            .iter()
            .find(|s| s.message.contains("set both resources.cpu"))
            .unwrap();
        assert_eq!(
            half.location(),
            "apps/kubernetes/templates/cluster.yaml:260"
        );
        assert_eq!(half.call, "fail");
    }
}
