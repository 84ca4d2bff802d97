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
    /// object), escaped for the inside of a JSON string, on one line.
    fn write_json(&self, out: &mut Vec<u8>) {
        if !self.path.is_root() {
            push_json_escaped(out, self.path.as_str());
            out.extend_from_slice(b": ");
        }
        push_json_escaped(out, &self.message);
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&decode_json_string(&json_string([self])))
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

    fn code_text(self) -> &'static [u8] {
        match self {
            Refusal::Malformed => b"400",
            Refusal::Forbidden => b"403",
            Refusal::Invalid => b"422",
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
            Verdict::Deny { violations, .. } => Some(decode_json_string(&json_string(violations))),
        }
    }

    /// Warnings as the API server passes them on ([`crate::warnings::fit`]):
    /// one header-safe line each, a bounded number of them.
    pub fn warnings(&self) -> Vec<String> {
        crate::warnings::fit(self.warning_findings().iter().map(Finding::to_string))
    }

    fn warning_findings(&self) -> &[Finding] {
        let (Verdict::Allow { warnings } | Verdict::Deny { warnings, .. }) = self;
        warnings
    }

    /// The SDK response for this verdict: the JSON of
    /// `kubewarden_policy_sdk::response::ValidationResponse`, written
    /// directly, each finding escaped straight into the buffer. serde and
    /// intermediate strings cost more than the rest of a rejection, and in
    /// a fresh instance every heap page a response spills into is a page
    /// fault (measured: about 8 µs each on the benchmark machine); a test
    /// checks that the SDK type reads the result back unchanged.
    pub fn into_response(self) -> CallResult {
        let (violations, code): (&[Finding], &[u8]) = match &self {
            Verdict::Allow { .. } => (&[], b"null"),
            Verdict::Deny {
                refusal,
                violations,
                ..
            } => (violations, refusal.code_text()),
        };
        let warnings = self.warnings();
        let text_len: usize = violations
            .iter()
            .map(|f| f.message.len() + 64)
            .chain(warnings.iter().map(|w| w.len() + 4))
            .sum();
        let mut out = Vec::with_capacity(128 + text_len);
        out.extend_from_slice(b"{\"accepted\":");
        out.extend_from_slice(if self.is_allowed() { b"true" } else { b"false" });
        out.extend_from_slice(b",\"message\":");
        if self.is_allowed() {
            out.extend_from_slice(b"null");
        } else {
            push_json_string(&mut out, violations);
        }
        out.extend_from_slice(b",\"code\":");
        out.extend_from_slice(code);
        out.extend_from_slice(b",\"mutated_object\":null,\"audit_annotations\":null,\"warnings\":");
        if warnings.is_empty() {
            out.extend_from_slice(b"null");
        } else {
            out.push(b'[');
            for (i, warning) in warnings.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.push(b'"');
                push_json_escaped(&mut out, warning);
                out.push(b'"');
            }
            out.push(b']');
        }
        out.push(b'}');
        Ok(out)
    }
}

/// `findings` as one JSON string literal, one per line.
fn json_string<'f>(findings: impl IntoIterator<Item = &'f Finding>) -> Vec<u8> {
    let findings: Vec<&Finding> = findings.into_iter().collect();
    let mut out = Vec::new();
    push_json_string(&mut out, findings.iter().copied());
    out
}

/// The text of a JSON string literal this module wrote.
fn decode_json_string(json: &[u8]) -> String {
    serde_json::from_slice(json).unwrap_or_default()
}

/// Appends `findings` as one JSON string literal, separated by `\n`.
fn push_json_string<'f>(out: &mut Vec<u8>, findings: impl IntoIterator<Item = &'f Finding>) {
    out.push(b'"');
    for (i, finding) in findings.into_iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\\n");
        }
        finding.write_json(out);
    }
    out.push(b'"');
}

/// Appends `text` escaped for the inside of a JSON string, on one line:
/// `"` and `\\` are escaped, control characters (C0, DEL, C1) become
/// spaces. Messages quote request values with `{:?}`, which escapes them
/// already, so the common case is a plain copy found word by word.
fn push_json_escaped(out: &mut Vec<u8>, text: &str) {
    let mut rest = text.as_bytes();
    let special = |w| {
        marks(w, b'"') | marks(w, b'\\') | marks_below(w, 0x20) | marks(w, 0x7f) | marks(w, 0xc2)
    };
    let is_special = |b: u8| b == b'"' || b == b'\\' || b < 0x20 || b == 0x7f || b == 0xc2;
    while let Some(at) = find_first(rest, special, is_special) {
        out.extend_from_slice(rest.get(..at).unwrap_or_default());
        let mut skip = 1;
        match rest.get(at) {
            Some(b'"') => out.extend_from_slice(b"\\\""),
            Some(b'\\') => out.extend_from_slice(b"\\\\"),
            // 0xC2 0x80..=0x9F encodes a C1 control; other 0xC2 sequences
            // are ordinary characters.
            Some(0xc2) => match rest.get(at + 1) {
                Some(0x80..=0x9f) => {
                    out.push(b' ');
                    skip = 2;
                }
                _ => out.push(0xc2),
            },
            _ => out.push(b' '),
        }
        rest = rest.get(at + skip..).unwrap_or_default();
    }
    out.extend_from_slice(rest);
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

    /// Records a violation at `path` (a [`FieldPath`] or a reference to
    /// one, as `field.path()` and stored paths come).
    pub fn violation(&mut self, path: impl Into<FieldPath>, message: impl Into<String>) {
        self.violations.push(Finding::new(path.into(), message));
    }

    /// Records a warning at `path`.
    pub fn warning(&mut self, path: impl Into<FieldPath>, message: impl Into<String>) {
        self.warnings.push(Finding::new(path.into(), message));
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
        review.violation(FieldPath::parse("spec.a"), "first");
        review.violation(FieldPath::parse("spec.b"), "second\nline");
        review.warning(FieldPath::root(), "heads up");
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
        review.warning(FieldPath::root(), "é".repeat(400));
        let warnings = review.verdict(Refusal::Invalid).warnings();
        assert_eq!(warnings[0].chars().count(), 256);
        assert!(warnings[0].ends_with("..."));
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
        review.violation(FieldPath::parse("spec.a"), "quote \" backslash \\ tab\t é");
        review.violation(FieldPath::root(), "second");
        review.warning(FieldPath::parse("spec.b"), "careful");
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
