//! What a rule concludes, and how that becomes the policy's answer.
//!
//! A rule collects [`Finding`]s in a [`Review`]: violations reject the
//! request, warnings travel with it either way. Each finding reads
//! `<field path>: <problem and fix>`; several violations are one message,
//! one per line, so a person reads them in `kubectl` output and a tool can
//! split them again ([`Finding::parse_line`]).

use std::fmt;

use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::wapc_guest::CallResult;

use crate::field::{FieldError, FieldPath};

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

    /// Reads back one line of a message (or one warning): the path before
    /// the first `": "` that reads as a path, otherwise a finding about the
    /// whole object.
    pub fn parse_line(line: &str) -> Finding {
        for (at, _) in line.match_indices(": ") {
            let head = line.get(..at).unwrap_or_default();
            if let Some(path) = FieldPath::parse_rendered(head) {
                let tail = line.get(at + 2..).unwrap_or_default();
                return Finding::new(path, tail);
            }
        }
        Finding::new(FieldPath::root(), line)
    }
}

impl fmt::Display for Finding {
    /// `<path>: <message>` (or the bare message for the whole object), on
    /// one line: control characters become spaces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_root() {
            write!(f, "{}: ", self.path)?;
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

    /// Rejected because a field has the wrong shape.
    pub fn malformed_field(error: &FieldError) -> Self {
        Self::malformed(if error.path().is_root() {
            Finding::new(FieldPath::root(), error.to_string())
        } else {
            Finding::new(error.path().clone(), error.problem())
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
            Verdict::Deny { violations, .. } => Some(
                violations
                    .iter()
                    .map(Finding::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        }
    }

    /// Warnings as the API server passes them on ([`crate::warnings::fit`]).
    pub fn warnings(&self) -> Vec<String> {
        let (Verdict::Allow { warnings } | Verdict::Deny { warnings, .. }) = self;
        crate::warnings::fit(warnings.iter().map(Finding::to_string))
    }

    /// The SDK's response for this verdict.
    pub fn into_response(self) -> CallResult {
        let warnings = self.warnings();
        let response = ValidationResponse {
            accepted: self.is_allowed(),
            message: self.message(),
            code: match &self {
                Verdict::Allow { .. } => None,
                Verdict::Deny { refusal, .. } => Some(refusal.code()),
            },
            mutated_object: None,
            audit_annotations: None,
            warnings: (!warnings.is_empty()).then_some(warnings),
        };
        Ok(serde_json::to_vec(&response)?)
    }
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
    pub fn violation(&mut self, path: FieldPath, message: impl Into<String>) {
        self.violations.push(Finding::new(path, message));
    }

    /// Records a warning at `path`.
    pub fn warning(&mut self, path: FieldPath, message: impl Into<String>) {
        self.warnings.push(Finding::new(path, message));
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

    fn decode(result: CallResult) -> ValidationResponse {
        serde_json::from_slice(&result.unwrap()).unwrap()
    }

    #[test]
    fn violations_become_one_line_each() {
        let mut review = Review::new();
        review.violation(FieldPath::parse("spec.a"), "first");
        review.violation(FieldPath::parse("spec.b"), "second\nline");
        review.warning(FieldPath::root(), "heads up");
        let response = decode(review.verdict(Refusal::Invalid).into_response());
        assert!(!response.accepted);
        assert_eq!(response.code, Some(422));
        assert_eq!(
            response.message.as_deref(),
            Some("spec.a: first\nspec.b: second line")
        );
        assert_eq!(response.warnings, Some(vec!["heads up".to_owned()]));
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
        review.warning(FieldPath::root(), "é".repeat(400));
        let warnings = review.verdict(Refusal::Invalid).warnings();
        assert_eq!(warnings[0].chars().count(), 256);
        assert!(warnings[0].ends_with("..."));
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
    fn malformed_fields_are_400() {
        let error = FieldError::Missing {
            path: FieldPath::parse("spec.x"),
        };
        let verdict = Verdict::malformed_field(&error);
        assert_eq!(verdict.message().unwrap(), "spec.x: is required");
        assert_eq!(decode(verdict.into_response()).code, Some(400));
    }
}
