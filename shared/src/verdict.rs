//! What a rule concludes, and how that becomes the policy's answer.
//!
//! A rule collects [`Finding`]s in a [`Review`]: violations reject the
//! request, warnings travel with it either way. Each finding reads
//! `[<policy>/<rule>] <field path>: <problem and fix>`; several violations
//! are one message, one per line, so a person reads them in `kubectl`
//! output and a tool can split them again ([`Finding::parse_line`]). The
//! tag leads so that cutting a long warning never cuts it.

use std::fmt;

use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::wapc_guest::CallResult;
use serde::{Deserialize, Serialize};

use crate::field::{FieldError, FieldPath};
use crate::rule::Rule;

/// One problem at one place, found by one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: Rule,
    pub path: FieldPath,
    pub message: String,
}

/// What a finding is, as an answer carries its line: a violation, in the
/// message of a rejection, or a warning (which an allowed request carries
/// too). Not how much it matters: that is a policy's severity, which its
/// metadata declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingKind {
    Violation,
    Warning,
}

/// A line of a message (or a warning) read back: its tag (`None` for a line
/// without one), its field and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedLine {
    pub tag: Option<Tag>,
    pub path: FieldPath,
    pub message: String,
}

/// The `[<policy>/<rule>]` a finding's line starts with, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    pub policy: String,
    pub rule: String,
}

impl fmt::Display for Tag {
    /// `<policy>/<rule>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.policy, self.rule)
    }
}

impl Finding {
    /// A finding of `rule` at `path`.
    pub fn new(rule: Rule, path: FieldPath, message: impl Into<String>) -> Self {
        Self {
            rule,
            path,
            message: message.into(),
        }
    }

    /// The finding as one line of a response ([`fmt::Display`]), written
    /// into a string sized for it: growing one from empty costs an
    /// allocation per doubling, on every denial.
    pub fn line(&self) -> String {
        let mut line = String::with_capacity(self.message.len() + 96);
        // Writing to a `String` cannot fail.
        let _ = fmt::Write::write_fmt(&mut line, format_args!("{self}"));
        line
    }

    /// The `[<policy>/<rule>]` tag `line` starts with, and the text after
    /// it; `None` for a line without one.
    pub fn split_tag(line: &str) -> Option<(Tag, &str)> {
        split_tag(line)
    }

    /// Reads back one line of a message (or one warning): the tag, then
    /// the path before the first `": "` that reads as a path, otherwise a
    /// finding about the whole object. The one reader of the tag: every
    /// tool that reads findings back (the CLI's check and report, the
    /// playground, the test runners) reads them here.
    pub fn parse_line(line: &str) -> ParsedLine {
        let (tag, rest) = match split_tag(line) {
            Some((tag, rest)) => (Some(tag), rest),
            None => (None, line),
        };
        for (at, _) in rest.match_indices(": ") {
            let head = rest.get(..at).unwrap_or_default();
            if let Some(path) = FieldPath::parse_rendered(head) {
                let tail = rest.get(at + 2..).unwrap_or_default();
                return ParsedLine {
                    tag,
                    path,
                    message: tail.to_owned(),
                };
            }
        }
        ParsedLine {
            tag,
            path: FieldPath::root(),
            message: rest.to_owned(),
        }
    }
}

/// `[<policy>/<rule>] rest` split into its tag and `rest`; `None` when the
/// line does not start with such a tag (both ids kebab-case, one space
/// after the bracket, as [`Finding`]'s lines are written).
fn split_tag(line: &str) -> Option<(Tag, &str)> {
    let (tag, rest) = line.strip_prefix('[')?.split_once("] ")?;
    let (policy, rule) = tag.split_once('/')?;
    let kebab = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    (kebab(policy) && kebab(rule)).then(|| {
        let tag = Tag {
            policy: policy.to_owned(),
            rule: rule.to_owned(),
        };
        (tag, rest)
    })
}

/// Whether `text` may hold a control character. Cheaper than a scan by
/// characters: Unicode's controls are the bytes below 0x20 and 0x7f, and
/// U+0080–U+009F, which UTF-8 writes after a 0xc2 byte (as it does
/// U+00A0–U+00BF, which the caller then finds not to be controls).
fn may_hold_controls(text: &str) -> bool {
    text.bytes().any(|b| b < 0x20 || b == 0x7f || b == 0xc2)
}

impl fmt::Display for Finding {
    /// `[<policy>/<rule>] <path>: <message>` (without the path for the
    /// whole object), on one line: control characters become spaces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}/{}] ", self.rule.policy, self.rule.id)?;
        if !self.path.is_root() {
            write!(f, "{}: ", self.path)?;
        }
        if !may_hold_controls(&self.message) {
            return f.write_str(&self.message);
        }
        let mut pieces = self.message.split(char::is_control);
        if let Some(first) = pieces.next() {
            f.write_str(first)?;
        }
        for piece in pieces {
            f.write_str(" ")?;
            f.write_str(piece)?;
        }
        Ok(())
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

    /// Rejected as malformed: `finding` says what is wrong where.
    pub fn malformed(finding: Finding) -> Self {
        Verdict::Deny {
            refusal: Refusal::Malformed,
            violations: vec![finding],
            warnings: Vec::new(),
        }
    }

    /// Rejected because a field of `policy`'s subject has the wrong shape.
    pub fn malformed_field(policy: &'static str, error: &FieldError) -> Self {
        let rule = match error {
            FieldError::WrongType { .. } => Rule::wrong_type(policy),
            FieldError::Missing { .. } => Rule::missing_field(policy),
        };
        Self::malformed(if error.path().is_root() {
            Finding::new(rule, FieldPath::root(), error.to_string())
        } else {
            Finding::new(rule, error.path().clone(), error.problem())
        })
    }

    /// Whether the request is allowed.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Verdict::Allow { .. })
    }

    /// The rejection message: one finding per line.
    pub fn message(&self) -> Option<String> {
        match self {
            Verdict::Allow { .. } => None,
            Verdict::Deny { violations, .. } => Some(match violations.as_slice() {
                [one] => one.line(),
                many => many
                    .iter()
                    .map(Finding::line)
                    .collect::<Vec<_>>()
                    .join("\n"),
            }),
        }
    }

    /// Warnings as the API server passes them on ([`crate::warnings::fit`]).
    /// The closing "N more" warning carries the policy's `more-warnings`
    /// tag, like every other warning.
    pub fn warnings(&self) -> Vec<String> {
        let (Verdict::Allow { warnings } | Verdict::Deny { warnings, .. }) = self;
        let summary_tag = warnings.first().map_or_else(String::new, |first| {
            format!("[{}] ", Rule::more_warnings(first.rule.policy).tag())
        });
        crate::warnings::fit(warnings.iter().map(Finding::line), &summary_tag)
    }

    /// The SDK's response for this verdict.
    pub fn into_response(self) -> CallResult {
        let warnings = self.warnings();
        let message = self.message();
        // The fixed members take about 110 bytes; sized once, the answer is
        // written without regrowing.
        let capacity = 128
            + message.as_ref().map_or(0, |m| m.len() + m.len() / 8)
            + warnings.iter().map(|w| w.len() + 4).sum::<usize>();
        let response = ValidationResponse {
            accepted: self.is_allowed(),
            message,
            code: match &self {
                Verdict::Allow { .. } => None,
                Verdict::Deny { refusal, .. } => Some(refusal.code()),
            },
            mutated_object: None,
            audit_annotations: None,
            warnings: (!warnings.is_empty()).then_some(warnings),
        };
        let mut answer = Vec::with_capacity(capacity);
        serde_json::to_writer(&mut answer, &response)?;
        Ok(answer)
    }
}

/// How a warning about a violation the stored object already had begins.
pub const STORED: &str = "already stored, not introduced by this change: ";

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

    /// Records a violation of `rule` at `path`.
    pub fn violation(&mut self, rule: Rule, path: FieldPath, message: impl Into<String>) {
        self.violations.push(Finding::new(rule, path, message));
    }

    /// Records a warning of `rule` at `path`.
    pub fn warning(&mut self, rule: Rule, path: FieldPath, message: impl Into<String>) {
        self.warnings.push(Finding::new(rule, path, message));
    }

    /// Records a violation of `rule` at `path`, or only a warning when the
    /// stored object already had it: on UPDATE a policy judges what the
    /// change introduces, so an object with legacy content stays editable.
    /// [`crate::Findings`] decides which.
    pub(crate) fn violation_unless_stored(
        &mut self,
        stored: bool,
        rule: Rule,
        path: FieldPath,
        message: impl Into<String>,
    ) {
        if stored {
            self.warning(rule, path, format!("{STORED}{}", message.into()));
        } else {
            self.violation(rule, path, message);
        }
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
    use crate::rule::Level;

    const RULE: Rule = Rule {
        policy: "p",
        id: "some-rule",
        level: Level::Deny,
    };

    #[test]
    fn control_characters_become_spaces_and_other_text_stays() {
        let line = |message: &str| Finding::new(RULE, FieldPath::parse("spec.x"), message).line();
        assert_eq!(line("plain text"), "[p/some-rule] spec.x: plain text");
        // Tab, DEL and the C1 control NEL (U+0085, after a 0xc2 byte).
        assert_eq!(line("a\tb\u{7f}c\u{85}d"), "[p/some-rule] spec.x: a b c d");
        // U+00A9 also follows a 0xc2 byte, and is not a control.
        assert_eq!(line("\u{a9} 2026"), "[p/some-rule] spec.x: \u{a9} 2026");
    }

    fn decode(result: CallResult) -> ValidationResponse {
        serde_json::from_slice(&result.unwrap()).unwrap()
    }

    #[test]
    fn violations_become_one_line_each() {
        let mut review = Review::new();
        review.violation(RULE, FieldPath::parse("spec.a"), "first");
        review.violation(RULE, FieldPath::parse("spec.b"), "second\nline");
        review.warning(RULE, FieldPath::root(), "heads up");
        let response = decode(review.verdict(Refusal::Invalid).into_response());
        assert!(!response.accepted);
        assert_eq!(response.code, Some(422));
        assert_eq!(
            response.message.as_deref(),
            Some("[p/some-rule] spec.a: first\n[p/some-rule] spec.b: second line")
        );
        assert_eq!(
            response.warnings,
            Some(vec!["[p/some-rule] heads up".to_owned()])
        );
    }

    #[test]
    fn allow_carries_warnings_only_when_there_are_some() {
        let response = decode(Verdict::allow().into_response());
        assert!(response.accepted);
        assert!(
            response.warnings.is_none() && response.message.is_none() && response.code.is_none()
        );
    }

    #[test]
    fn long_warnings_are_cut_to_the_kubernetes_limit() {
        let mut review = Review::new();
        review.warning(RULE, FieldPath::root(), "é".repeat(400));
        let warnings = review.verdict(Refusal::Invalid).warnings();
        assert_eq!(warnings[0].chars().count(), 256);
        assert!(warnings[0].starts_with("[p/some-rule] "));
        assert!(warnings[0].ends_with("..."));
    }

    #[test]
    fn the_summary_of_left_out_warnings_is_tagged_too() {
        let mut review = Review::new();
        for i in 0..12 {
            review.warning(RULE, FieldPath::root(), format!("w{i}"));
        }
        let warnings = review.verdict(Refusal::Invalid).warnings();
        let last = warnings.last().map(String::as_str).unwrap_or_default();
        assert!(
            last.starts_with("[p/more-warnings] 3 more warnings"),
            "{last}"
        );
    }

    #[test]
    fn stored_violations_are_warnings() {
        let mut review = Review::new();
        review.violation_unless_stored(true, RULE, FieldPath::parse("spec.a"), "bad");
        assert!(!review.has_violations());
        let verdict = review.verdict(Refusal::Invalid);
        assert_eq!(
            verdict.warnings(),
            vec![format!("[p/some-rule] spec.a: {STORED}bad")]
        );
        let mut review = Review::new();
        review.violation_unless_stored(false, RULE, FieldPath::parse("spec.a"), "bad");
        assert_eq!(
            review.verdict(Refusal::Invalid).message().as_deref(),
            Some("[p/some-rule] spec.a: bad")
        );
    }

    #[test]
    fn findings_read_back_from_their_lines() {
        let paths = [
            FieldPath::parse("spec.storageClass"),
            FieldPath::parse("metadata.labels").key("platform.cozystack.io/no-delete"),
            FieldPath::parse("spec.users").index(12).key("role"),
            FieldPath::root().key("a b\\\"]: x"),
        ];
        for path in paths {
            let finding = Finding::new(RULE, path.clone(), "cannot change: really");
            let line = finding.to_string();
            assert!(line.starts_with("[p/some-rule] "), "{line}");
            assert_eq!(
                Finding::parse_line(&line),
                ParsedLine {
                    tag: Some(Tag {
                        policy: "p".to_owned(),
                        rule: "some-rule".to_owned(),
                    }),
                    path,
                    message: "cannot change: really".to_owned(),
                },
                "{finding}"
            );
        }
        let whole = Finding::new(RULE, FieldPath::root(), "Deletion blocked: it is protected");
        let parsed = Finding::parse_line(&whole.to_string());
        assert_eq!(
            parsed.tag.map(|tag| tag.to_string()).as_deref(),
            Some("p/some-rule")
        );
        assert!(parsed.path.is_root());
        assert_eq!(parsed.message, "Deletion blocked: it is protected");
    }

    #[test]
    fn lines_without_a_tag_read_back_without_a_rule() {
        for line in [
            "Deletion blocked: it is protected",
            "[not a tag] spec.a: x",
            "[P/Upper] spec.a: x",
            "[p/] spec.a: x",
            "[p/x]spec.a: x",
        ] {
            let parsed = Finding::parse_line(line);
            assert_eq!(parsed.tag, None, "{line}");
        }
        let parsed = Finding::parse_line("spec.a: x");
        assert_eq!(parsed.path, FieldPath::parse("spec.a"));
        assert_eq!(parsed.message, "x");
    }

    #[test]
    fn malformed_fields_are_400() {
        let error = FieldError::Missing {
            path: FieldPath::parse("spec.x"),
        };
        let verdict = Verdict::malformed_field("p", &error);
        assert_eq!(
            verdict.message().unwrap(),
            "[p/missing-field] spec.x: is required"
        );
        assert_eq!(decode(verdict.into_response()).code, Some(400));
    }
}
