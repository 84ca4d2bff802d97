//! A finding: one rule's verdict on one field of one object, whichever way
//! it reached us: a module's answer to `check` or `preflight`, a
//! PolicyReport or OpenReport of a cluster, the JSON of `check`. Every
//! format that prints findings (`check`'s text, JSON, SARIF and JUnit, the
//! checklist, the report's table, Markdown, CSV, HTML and JSON) is a view
//! of this one type.
//!
//! A policy writes a finding as a line, `[<policy>/<rule>] <field>: <text>`
//! (`shared::Finding`); [`Finding::read_line`] reads it back with the one
//! parser of that tag, `shared::Finding::parse_line`.

use std::fmt;
use std::path::PathBuf;

use admission::Operation;
use serde::{Deserialize, Serialize};
use shared::Tag;

/// The project's home, where what no policy README documents is.
pub const HOME: &str = env!("CARGO_PKG_REPOSITORY");

/// The policy name of `check`'s own findings about its input (a placeholder
/// without a value).
pub const CHECK: &str = "check";

/// The id of a rule, as the `[<policy>/<rule>]` tag of a finding names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleId {
    /// The policy: ours by its tag, else the name it was deployed under.
    pub policy: String,
    /// The rule: [`RuleId::UNKNOWN`] for an untagged line of a policy of
    /// ours (a module built before rule ids); `None` for another tool's
    /// finding, which names no rule of ours.
    pub rule: Option<String>,
}

impl RuleId {
    /// The rule of a policy's line that carries no tag.
    pub const UNKNOWN: &str = "unknown";

    /// `policy`'s rule `rule`.
    pub fn new(policy: &str, rule: &str) -> Self {
        Self {
            policy: policy.to_owned(),
            rule: Some(rule.to_owned()),
        }
    }

    /// `policy`'s untagged line.
    pub fn unknown(policy: &str) -> Self {
        Self::new(policy, Self::UNKNOWN)
    }

    /// A finding of another tool's policy, known by its name alone.
    pub fn policy_only(policy: &str) -> Self {
        Self {
            policy: policy.to_owned(),
            rule: None,
        }
    }

    /// `<policy>/<rule>` as `check`'s JSON writes it, or a policy alone.
    pub fn parse(text: &str) -> Self {
        match text.split_once('/') {
            Some((policy, rule)) => Self::new(policy, rule),
            None => Self::policy_only(text),
        }
    }

    /// Whether the rule says it could not judge the object (a cluster read
    /// gave no answer), whichever way its policy answered.
    pub fn is_not_checked(&self) -> bool {
        self.rule.as_deref().is_some_and(shared::is_not_checked)
    }

    /// Whether the rule is known: tagged, not [`RuleId::UNKNOWN`].
    pub fn is_known(&self) -> bool {
        self.rule
            .as_deref()
            .is_some_and(|rule| rule != Self::UNKNOWN)
    }

    /// Where the rule is documented: its entry in its policy's README, which
    /// anchors each rule as `#rule-<rule>` (the README itself for an
    /// unknown rule), under `home`, the policy's home page (its metadata's
    /// `io.kubewarden.policy.url`); the project's README for a policy
    /// without one; the reference of `check` (docs/ci.md) for its own rules.
    pub fn url(&self, home: Option<&str>) -> String {
        if self.policy == CHECK {
            return format!("{HOME}/blob/main/docs/ci.md#checking-your-own-manifests");
        }
        let readme = match home {
            Some(home) => format!(
                "{}/blob/main/policies/{}/README.md",
                home.trim_end_matches('/'),
                self.policy
            ),
            // The project's README has no entry per rule.
            None => return format!("{HOME}/blob/main/README.md"),
        };
        match self.rule.as_deref() {
            Some(rule) if self.is_known() && !rule.is_empty() => format!("{readme}#rule-{rule}"),
            _ => readme,
        }
    }
}

impl From<Tag> for RuleId {
    fn from(tag: Tag) -> Self {
        Self {
            policy: tag.policy,
            rule: Some(tag.rule),
        }
    }
}

impl fmt::Display for RuleId {
    /// `<policy>/<rule>`, or the policy alone.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.rule {
            Some(rule) => write!(f, "{}/{rule}", self.policy),
            None => f.write_str(&self.policy),
        }
    }
}

/// How the policy's answer carried the finding: a line of a rejection's
/// message, a warning, or (a cluster's report only) an evaluation that
/// failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Answered {
    Violation,
    Warning,
    Error,
}

/// What a finding says of its object, as a report counts it: failed,
/// warned about, or failed to evaluate (audit-scanner's `fail`, `warn` and
/// `error`); or not checked, for a rule that says it could not judge the
/// object (its id ends in `-not-checked`), whichever way its policy
/// answered: a report-only policy rejects so that audit-scanner records it,
/// which is no verdict about the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Fail,
    NotChecked,
    Warn,
    Error,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Fail => "fail",
            Outcome::NotChecked => "not-checked",
            Outcome::Warn => "warn",
            Outcome::Error => "error",
        }
    }
}

/// Where a finding stands against an earlier report (`report --since`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Standing {
    New,
    Open,
    Resolved,
}

impl Standing {
    pub fn name(self) -> &'static str {
        match self {
            Standing::New => "new",
            Standing::Open => "open",
            Standing::Resolved => "resolved",
        }
    }
}

/// The object a finding is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Object {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl Object {
    /// `Kind namespace/name`, or `Kind name` for a cluster-scoped object.
    pub fn label(&self) -> String {
        shared::request::describe(&self.kind, &self.namespace, &self.name)
    }
}

/// Where in a manifest file a finding is: the field's line and column
/// (from 1), or the object's when the field is not written in the file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    pub file: PathBuf,
    pub line: u64,
    pub column: u64,
}

impl fmt::Display for Location {
    /// `file:line:column`, as compilers print a place.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// One finding of one policy on one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: RuleId,
    /// The name the policy ran under: its module's (`check`), or its
    /// policy's in the cluster (`clusterwide-…` unpacked).
    pub deployed_as: String,
    /// Whether the policy is one of this bundle's.
    pub ours: bool,
    pub answered: Answered,
    pub object: Object,
    /// The offending field, empty when the finding is about the object.
    pub field: String,
    pub message: String,
    /// How much the policy says a finding matters, as a report gives it
    /// (`info` in monitor mode) or our metadata declares it; empty from a
    /// module's answer.
    pub severity: String,
    /// What the policy protects, likewise.
    pub category: String,
    /// The advice in the message, or the line of advice after it.
    pub fix: String,
    /// Where in the manifests `check` read (none in a cluster's report).
    pub location: Option<Location>,
    /// The request's operation, as `check` made it.
    pub operation: Option<Operation>,
    /// The response code of a rejection, as `check` received it.
    pub code: Option<u16>,
    /// Against an earlier report, with `report --since`.
    pub standing: Option<Standing>,
}

/// A message line read back: its rule (its tag's, `None` without one), its
/// field and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub tag: Option<RuleId>,
    pub field: String,
    pub text: String,
}

impl Finding {
    /// Reads `[policy/rule] field.path: text`; the tag and the path are both
    /// optional, as in the messages of policies written before rule ids.
    pub fn read_line(line: &str) -> Line {
        let parsed = shared::Finding::parse_line(line);
        Line {
            tag: parsed.tag.map(RuleId::from),
            field: parsed.path.to_string(),
            text: parsed.message,
        }
    }

    /// Whether the rule says it could not judge the object.
    pub fn is_not_checked(&self) -> bool {
        self.rule.is_not_checked()
    }

    /// Whether a report-only policy says it could not judge the object: a
    /// not-checked rule its policy answers with a denial, so that
    /// audit-scanner records it (`shared::Level::NotCheckedFails`); other
    /// policies warn.
    pub fn is_report_only_not_checked(&self) -> bool {
        self.is_not_checked() && self.answered == Answered::Violation
    }

    /// What the finding says of its object.
    pub fn outcome(&self) -> Outcome {
        match self.answered {
            _ if self.is_not_checked() => Outcome::NotChecked,
            Answered::Violation => Outcome::Fail,
            Answered::Warning => Outcome::Warn,
            Answered::Error => Outcome::Error,
        }
    }

    /// The README entry of the rule; empty for a foreign policy.
    pub fn rule_url(&self) -> String {
        if self.ours {
            self.rule.url(Some(HOME))
        } else {
            String::new()
        }
    }

    /// The fix when it adds to the message: a message that is all advice
    /// needs no fix beside it.
    pub fn fix_beyond_message(&self) -> &str {
        if self.message.starts_with(&self.fix) {
            ""
        } else {
            &self.fix
        }
    }

    pub fn severity_label(&self) -> &str {
        label(&self.severity, "none")
    }

    pub fn category_label(&self) -> &str {
        label(&self.category, "none")
    }

    pub fn namespace_label(&self) -> &str {
        label(&self.object.namespace, "(cluster)")
    }

    /// `OPERATION Kind namespace/name`, the request `check` judged, or the
    /// object alone.
    pub fn subject(&self) -> String {
        match self.operation {
            Some(operation) => format!("{operation} {}", self.object.label()),
            None => self.object.label(),
        }
    }

    /// `field: message`, or the message alone, as printed after a label
    /// that says what the finding is (`not checked`): a message that starts
    /// by saying so again leaves that out, so no line reads `not checked:
    /// not checked: …`.
    pub fn text_after_label(&self) -> String {
        let message = match self.outcome() {
            Outcome::NotChecked => self
                .message
                .strip_prefix(NOT_CHECKED_LABEL)
                .and_then(|rest| rest.strip_prefix(": "))
                .unwrap_or(&self.message),
            _ => &self.message,
        };
        if self.field.is_empty() {
            message.to_owned()
        } else {
            format!("{}: {message}", self.field)
        }
    }
}

/// What every format calls a finding that says its rule could not judge
/// the object.
pub const NOT_CHECKED_LABEL: &str = "not checked";

fn label<'a>(value: &'a str, empty: &'a str) -> &'a str {
    if value.is_empty() { empty } else { value }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_lines_give_their_rule_and_path() {
        let line =
            Finding::read_line("[oidc-config/custom-config-exclusive] spec.oidc.enabled: set one");
        assert_eq!(
            line.tag,
            Some(RuleId::new("oidc-config", "custom-config-exclusive"))
        );
        assert_eq!(line.field, "spec.oidc.enabled");
        assert_eq!(line.text, "set one");
        let line = Finding::read_line("[no-delete/protected] Deletion blocked: remove the label");
        assert_eq!(line.field, "");
        assert_eq!(line.text, "Deletion blocked: remove the label");
    }

    #[test]
    fn untagged_lines_keep_their_path_and_brackets_that_are_no_tag() {
        let line = Finding::read_line("spec.attachments[1]: duplicates spec.attachments[0]");
        assert_eq!(line.tag, None);
        assert_eq!(line.field, "spec.attachments[1]");
        let line = Finding::read_line("[not a tag] spec.x: y");
        assert_eq!(line.tag, None);
        assert_eq!(line.text, "[not a tag] spec.x: y");
    }

    #[test]
    fn rule_links_point_at_the_readme_anchor() {
        let home = Some(HOME);
        assert!(
            RuleId::new("no-delete", "protected")
                .url(home)
                .ends_with("policies/no-delete/README.md#rule-protected")
        );
        assert!(
            RuleId::unknown("no-delete")
                .url(home)
                .ends_with("policies/no-delete/README.md")
        );
        assert!(
            RuleId::new("p", "r")
                .url(None)
                .ends_with("cozystack-policies/blob/main/README.md")
        );
        assert!(
            RuleId::new(CHECK, "unresolved-variable")
                .url(home)
                .ends_with("docs/ci.md#checking-your-own-manifests")
        );
    }

    #[test]
    fn a_not_checked_finding_says_so_once_after_its_label() {
        let finding = |rule: &str, message: &str| Finding {
            rule: RuleId::new("upgrade-gate", rule),
            deployed_as: "upgrade-gate".into(),
            ours: true,
            answered: Answered::Violation,
            object: Object::default(),
            field: "spec".into(),
            message: message.into(),
            severity: String::new(),
            category: String::new(),
            fix: String::new(),
            location: None,
            operation: None,
            code: None,
            standing: None,
        };
        let unread = finding("worker-disks-not-checked", "not checked: no cluster");
        assert_eq!(unread.text_after_label(), "spec: no cluster");
        assert!(unread.is_report_only_not_checked());
        let judged = finding("etcd-adoption-target", "not checked: kept as written");
        assert_eq!(
            judged.text_after_label(),
            "spec: not checked: kept as written"
        );
        assert!(!judged.is_report_only_not_checked());
    }

    #[test]
    fn rule_ids_read_and_print_alike() {
        for text in ["p/r", "p"] {
            assert_eq!(RuleId::parse(text).to_string(), text);
        }
        assert!(RuleId::new("p", "read-not-checked").is_not_checked());
        assert!(!RuleId::policy_only("x-not-checked").is_not_checked());
    }
}
