//! One finding of the report: a policy's verdict on one field of one
//! object, whichever input it came from.

use serde::{Deserialize, Serialize};

use super::bundle::{self, Identity};
use super::message;

/// What the policy answered: rejected, allowed with a warning, or failed
/// to evaluate (audit-scanner's `fail`, `warn` and `error`); and, for a
/// rule of ours that says it could not judge the object (its id ends in
/// `-not-checked`), not checked, whichever way its policy answered: a
/// report-only policy rejects so that audit-scanner records it, which is no
/// verdict about the object.
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

/// Where a finding stands against the `--since` report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    New,
    Open,
    Resolved,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Open => "open",
            Status::Resolved => "resolved",
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
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// One finding as a report holds it, whichever policy made it: read from
/// a PolicyReport, an OpenReport or `check`'s JSON ([`shared::Finding`]
/// is the one a rule makes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportedFinding {
    /// Our policy's name, or the deployed name of a foreign policy.
    pub policy: String,
    /// The rule id, `unknown` for our untagged messages, empty for others.
    pub rule: String,
    /// The policy's name in the cluster (`clusterwide-…`), or the module.
    pub deployed_as: String,
    pub ours: bool,
    pub result: Outcome,
    /// As the report gives it (`info` in monitor mode), or our metadata's.
    pub severity: String,
    pub category: String,
    pub object: Object,
    pub field: String,
    pub message: String,
    pub fix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

impl ReportedFinding {
    pub fn rule_id(&self) -> String {
        if self.rule.is_empty() {
            self.policy.clone()
        } else {
            format!("{}/{}", self.policy, self.rule)
        }
    }

    /// The README entry of the rule; empty for a foreign policy.
    pub fn rule_url(&self) -> String {
        if self.ours {
            bundle::rule_url(&self.policy, &self.rule)
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
}

fn label<'a>(value: &'a str, empty: &'a str) -> &'a str {
    if value.is_empty() { empty } else { value }
}

/// What every input knows about the result a message belongs to.
#[derive(Debug, Clone)]
pub struct Context {
    pub deployed_as: String,
    pub result: Outcome,
    pub severity: String,
    pub category: String,
    pub object: Object,
}

/// The findings of one message: one per line, a line that is only advice
/// becoming the fix of the line before it. Our metadata fills in the
/// severity and category an input leaves empty.
pub fn from_message(context: &Context, message: &str, out: &mut Vec<ReportedFinding>) {
    let first = out.len();
    for text in message.lines().filter(|l| !l.trim().is_empty()) {
        let line = message::parse(text);
        if out.len() > first && message::is_advice(&line) {
            if let Some(previous) = out.last_mut() {
                previous.fix = line.text;
            }
            continue;
        }
        let Identity { policy, rule, ours } =
            bundle::identify(&context.deployed_as, line.tag.as_ref());
        let declared = bundle::find(&policy).filter(|_| ours);
        let or_declared =
            |given: &str, pick: fn(&bundle::BundlePolicy) -> &'static str| match declared {
                Some(entry) if given.is_empty() => pick(entry).to_owned(),
                _ => given.to_owned(),
            };
        let result = if ours && shared::is_not_checked(&rule) {
            Outcome::NotChecked
        } else {
            context.result
        };
        out.push(ReportedFinding {
            severity: or_declared(&context.severity, |p| p.severity),
            category: or_declared(&context.category, |p| p.category),
            policy,
            rule,
            ours,
            deployed_as: context.deployed_as.clone(),
            result,
            object: context.object.clone(),
            fix: message::fix(&line.text),
            field: line.field,
            message: line.text,
            status: None,
        });
    }
    if out.len() == first {
        // A result without a message (an `error` with an empty one) is
        // still a finding about the object.
        let Identity { policy, rule, ours } = bundle::identify(&context.deployed_as, None);
        out.push(ReportedFinding {
            policy,
            rule,
            ours,
            deployed_as: context.deployed_as.clone(),
            result: context.result,
            severity: context.severity.clone(),
            category: context.category.clone(),
            object: context.object.clone(),
            field: String::new(),
            message: "(no message)".to_owned(),
            fix: String::new(),
            status: None,
        });
    }
}
