//! What a rule concludes, and how that becomes the policy's answer.
//!
//! A rule collects [`Finding`]s in a [`Review`]: violations reject the
//! request, warnings travel with it either way. Each finding reads
//! `<field path>: <problem and fix>`; several violations are one message,
//! one per line, so a person reads them in `kubectl` output and a tool can
//! split them again (values quoted from the request are escaped, so a
//! finding never spans lines).

use std::fmt;

use kubewarden_policy_sdk::wapc_guest::CallResult;

use crate::field::{FieldError, FieldPath};
use crate::json::{find_first, marks, marks_below};

/// Kubernetes limits a warning to 256 characters and truncates beyond.
const MAX_WARNING_CHARS: usize = 256;

/// One problem at one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub path: FieldPath,
    pub message: String,
}

impl Finding {
    /// A finding at `path`.
    pub fn new(path: FieldPath, message: impl Into<String>) -> Self {
        Self {
            path,
            message: message.into(),
        }
    }
}

/// Whether `text` is a path as [`FieldPath`] renders it: plain keys joined
/// by `.`, `[index]`, and `["quoted key"]`.
fn is_rendered_path(text: &str) -> bool {
    let mut rest = text;
    let mut first = true;
    while !rest.is_empty() {
        if let Some(bracketed) = rest.strip_prefix('[') {
            let close = if bracketed.starts_with('"') {
                // A JSON string, then `]`: find the closing unescaped quote.
                let mut escaped = false;
                bracketed
                    .char_indices()
                    .skip(1)
                    .find(|(_, c)| {
                        let end = *c == '"' && !escaped;
                        escaped = *c == '\\' && !escaped;
                        end
                    })
                    .map(|(i, _)| i + 1)
                    .filter(|i| bracketed.get(*i..).is_some_and(|r| r.starts_with(']')))
            } else {
                bracketed.find(']').filter(|i| {
                    *i > 0
                        && bracketed
                            .get(..*i)
                            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
                })
            };
            let Some(close) = close else {
                return false;
            };
            rest = bracketed.get(close + 1..).unwrap_or_default();
        } else {
            let key = if first {
                rest
            } else if let Some(after_dot) = rest.strip_prefix('.') {
                after_dot
            } else {
                return false;
            };
            let len = key.find(['.', '[']).unwrap_or(key.len());
            let name = key.get(..len).unwrap_or_default();
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                return false;
            }
            rest = key.get(len..).unwrap_or_default();
        }
        first = false;
    }
    !first
}

impl Finding {
    /// Reads back one line of a message written by [`Verdict::message`] (or
    /// one warning): the path before the first `": "` when it reads as a
    /// path, otherwise a finding about the whole object.
    pub fn parse_line(line: &str) -> Finding {
        for (at, _) in line.match_indices(": ") {
            let (head, tail) = (
                line.get(..at).unwrap_or_default(),
                line.get(at + 2..).unwrap_or_default(),
            );
            if is_rendered_path(head) {
                return Finding::new(FieldPath::from_rendered(head), tail);
            }
        }
        Finding::new(FieldPath::root(), line)
    }
}

impl Finding {
    /// Appends `<path>: <message>` (or the bare message for the whole
    /// object) on one line: control characters become spaces.
    fn write_line(&self, out: &mut String) {
        if !self.path.is_root() {
            out.push_str(self.path.as_str());
            out.push_str(": ");
        }
        push_single_line(out, &self.message);
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        self.write_line(&mut line);
        f.write_str(&line)
    }
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The request or the object is not shaped as the rule's subject must be.
    Malformed,
    /// The operation is not permitted on this object (deletion guards).
    Forbidden,
    /// The object is invalid for the platform (a chart would fail or
    /// silently ignore it, an immutable field changed).
    Invalid,
}

impl Refusal {
    /// The response code: 400, 403 or 422.
    pub fn code(self) -> u16 {
        match self {
            Refusal::Malformed => 400,
            Refusal::Forbidden => 403,
            Refusal::Invalid => 422,
        }
    }
}

/// The outcome of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow {
        warnings: Vec<Finding>,
    },
    Deny {
        refusal: Refusal,
        violations: Vec<Finding>,
        warnings: Vec<Finding>,
    },
}

impl Verdict {
    /// Allowed, nothing to say.
    pub fn allow() -> Self {
        Verdict::Allow {
            warnings: Vec::new(),
        }
    }

    /// Rejected because a field has the wrong shape.
    pub fn malformed(error: &FieldError) -> Self {
        Verdict::Deny {
            refusal: Refusal::Malformed,
            violations: vec![if error.path().is_root() {
                Finding::new(FieldPath::root(), error.to_string())
            } else {
                Finding::new(error.path().clone(), error.problem())
            }],
            warnings: Vec::new(),
        }
    }

    /// Whether the request is allowed.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Verdict::Allow { .. })
    }

    /// The rejection message: one finding per line.
    pub fn message(&self) -> Option<String> {
        match self {
            Verdict::Allow { .. } => None,
            Verdict::Deny { violations, .. } => {
                let mut message =
                    String::with_capacity(violations.iter().map(|v| v.message.len() + 64).sum());
                for (i, violation) in violations.iter().enumerate() {
                    if i > 0 {
                        message.push('\n');
                    }
                    violation.write_line(&mut message);
                }
                Some(message)
            }
        }
    }

    /// Warnings as the apiserver passes them on: one line each, header-safe,
    /// at most 256 characters.
    pub fn warnings(&self) -> Vec<String> {
        let (Verdict::Allow { warnings } | Verdict::Deny { warnings, .. }) = self;
        warnings
            .iter()
            .map(|w| {
                let mut line = String::new();
                w.write_line(&mut line);
                truncated(line)
            })
            .collect()
    }

    /// The SDK response for this verdict: the JSON of
    /// `kubewarden_policy_sdk::response::ValidationResponse`, written
    /// directly. Going through serde costs more than the rest of a typical
    /// rejection; a test checks that the SDK type reads it back unchanged.
    pub fn into_response(self) -> CallResult {
        let message = self.message();
        let warnings = self.warnings();
        let capacity = 128
            + message.as_ref().map_or(0, String::len)
            + warnings.iter().map(|w| w.len() + 4).sum::<usize>();
        let mut out = Vec::with_capacity(capacity);
        out.extend_from_slice(b"{\"accepted\":");
        out.extend_from_slice(if self.is_allowed() { b"true" } else { b"false" });
        out.extend_from_slice(b",\"message\":");
        match &message {
            Some(text) => push_json_string(&mut out, text),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"code\":");
        match self {
            Verdict::Deny { refusal, .. } => {
                out.extend_from_slice(refusal.code().to_string().as_bytes())
            }
            Verdict::Allow { .. } => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"mutated_object\":null,\"audit_annotations\":null,\"warnings\":");
        if warnings.is_empty() {
            out.extend_from_slice(b"null");
        } else {
            out.push(b'[');
            for (i, warning) in warnings.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_json_string(&mut out, warning);
            }
            out.push(b']');
        }
        out.push(b'}');
        Ok(out)
    }
}

/// Appends `text` as a JSON string literal. Findings are single lines
/// already; the newlines between them are escaped, other control
/// characters become spaces.
fn push_json_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let mut rest = text.as_bytes();
    while let Some(at) = find_first(
        rest,
        |w| marks(w, b'"') | marks(w, b'\\') | marks_below(w, 0x20),
        |b| b == b'"' || b == b'\\' || b < 0x20,
    ) {
        out.extend_from_slice(rest.get(..at).unwrap_or_default());
        out.extend_from_slice(match rest.get(at) {
            Some(b'"') => b"\\\"",
            Some(b'\\') => b"\\\\",
            Some(b'\n') => b"\\n",
            _ => b" ",
        });
        rest = rest.get(at + 1..).unwrap_or_default();
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// Appends `text` with control characters (newlines above all) replaced by
/// spaces. Messages quote request values with `{:?}`, which escapes them
/// already, so the common case is a plain copy.
fn push_single_line(out: &mut String, text: &str) {
    // C0 controls and DEL are single bytes; C1 controls start with 0xC2.
    let is_control_start = |b: u8| b < 0x20 || b == 0x7f || b == 0xc2;
    let words = |w| marks_below(w, 0x20) | marks(w, 0x7f) | marks(w, 0xc2);
    if find_first(text.as_bytes(), words, is_control_start).is_some() {
        out.extend(text.chars().map(|c| if c.is_control() { ' ' } else { c }));
    } else {
        out.push_str(text);
    }
}

/// Cuts a warning to the Kubernetes limit.
fn truncated(line: String) -> String {
    if line.len() <= MAX_WARNING_CHARS || line.chars().count() <= MAX_WARNING_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(MAX_WARNING_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Collects findings while a rule runs.
#[derive(Debug, Default)]
pub struct Review {
    violations: Vec<Finding>,
    warnings: Vec<Finding>,
}

impl Review {
    /// An empty review.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a violation at `path`.
    pub fn violation(&mut self, path: &FieldPath, message: impl Into<String>) {
        self.violations.push(Finding::new(path.clone(), message));
    }

    /// Records a warning at `path`.
    pub fn warning(&mut self, path: &FieldPath, message: impl Into<String>) {
        self.warnings.push(Finding::new(path.clone(), message));
    }

    /// Whether any violation was recorded.
    pub fn has_violations(&self) -> bool {
        !self.violations.is_empty()
    }

    /// Allow with the warnings when nothing was violated, otherwise deny
    /// for `refusal`.
    pub fn verdict(self, refusal: Refusal) -> Verdict {
        if self.violations.is_empty() {
            Verdict::Allow {
                warnings: self.warnings,
            }
        } else {
            Verdict::Deny {
                refusal,
                violations: self.violations,
                warnings: self.warnings,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(result: CallResult) -> serde_json::Value {
        serde_json::from_slice(&result.unwrap()).unwrap()
    }

    #[test]
    fn violations_become_one_line_each() {
        let mut review = Review::new();
        review.violation(&FieldPath::parse("spec.a"), "first");
        review.violation(&FieldPath::parse("spec.b"), "second\nline");
        review.warning(&FieldPath::root(), "heads up");
        let response = decode(review.verdict(Refusal::Invalid).into_response());
        assert_eq!(response["accepted"], false);
        assert_eq!(response["code"], 422);
        assert_eq!(response["message"], "spec.a: first\nspec.b: second line");
        assert_eq!(response["warnings"], serde_json::json!(["heads up"]));
    }

    #[test]
    fn allow_carries_warnings_only_when_there_are_some() {
        let response = decode(Verdict::allow().into_response());
        assert_eq!(response["accepted"], true);
        assert!(response["warnings"].is_null());
        assert!(response["message"].is_null());
    }

    #[test]
    fn long_warnings_are_cut_to_the_kubernetes_limit() {
        let mut review = Review::new();
        review.warning(&FieldPath::root(), "é".repeat(400));
        let warnings = review.verdict(Refusal::Invalid).warnings();
        assert_eq!(warnings[0].chars().count(), 256);
        assert!(warnings[0].ends_with('…'));
    }

    #[test]
    fn findings_read_back_from_their_lines() {
        let paths = [
            FieldPath::parse("spec.storageClass"),
            FieldPath::root()
                .key("metadata")
                .key("labels")
                .key("platform.cozystack.io/no-delete"),
            FieldPath::root()
                .key("spec")
                .key("users")
                .index(12)
                .key("role"),
            FieldPath::root().key("a b\\\"]: x"),
        ];
        for path in paths {
            let finding = Finding::new(path.clone(), "cannot change: really");
            assert_eq!(
                Finding::parse_line(&finding.to_string()),
                finding,
                "{finding}"
            );
        }
        let whole = Finding::parse_line("Deletion blocked: it is protected");
        assert!(whole.path.is_root());
        assert_eq!(whole.message, "Deletion blocked: it is protected");
    }

    #[test]
    fn responses_read_back_as_the_sdk_type() {
        use kubewarden_policy_sdk::response::ValidationResponse;
        let mut review = Review::new();
        review.violation(&FieldPath::parse("spec.a"), "quote \" backslash \\ tab\t é");
        review.violation(&FieldPath::root(), "second");
        review.warning(&FieldPath::parse("spec.b"), "careful");
        let json = review.verdict(Refusal::Forbidden).into_response().unwrap();
        let sdk: ValidationResponse = serde_json::from_slice(&json).unwrap();
        assert!(!sdk.accepted);
        assert_eq!(sdk.code, Some(403));
        assert_eq!(
            sdk.message.as_deref(),
            Some("spec.a: quote \" backslash \\ tab  é\nsecond")
        );
        assert_eq!(sdk.warnings, Some(vec!["spec.b: careful".to_owned()]));
        assert!(sdk.mutated_object.is_none() && sdk.audit_annotations.is_none());
        let allow: ValidationResponse =
            serde_json::from_slice(&Verdict::allow().into_response().unwrap()).unwrap();
        assert!(
            allow.accepted
                && allow.message.is_none()
                && allow.code.is_none()
                && allow.warnings.is_none()
        );
    }

    #[test]
    fn malformed_fields_are_400() {
        let error = FieldError::Missing {
            path: FieldPath::parse("spec.x"),
        };
        let verdict = Verdict::malformed(&error);
        assert_eq!(verdict.message().unwrap(), "spec.x: is required");
        assert_eq!(decode(verdict.into_response())["code"], 400);
    }
}
