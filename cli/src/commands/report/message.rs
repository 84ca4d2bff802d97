//! The findings of one policy message as a report reads it: one per line,
//! a line that is only advice becoming the fix of the line before it.

use super::fix;
use super::identify::Ours;
use crate::finding::{Answered, Finding, Object};

/// What every input knows about the result a message belongs to.
#[derive(Debug, Clone)]
pub struct Context {
    pub deployed_as: String,
    pub answered: Answered,
    /// As the input gives them; our metadata's when it gives none.
    pub severity: String,
    pub category: String,
    pub object: Object,
}

impl Context {
    /// The finding of one line, ours or not, before its fix is known.
    fn finding(&self, ours: Ours, tag: Option<&crate::finding::RuleId>) -> Finding {
        let (rule, is_ours) = ours.identify(&self.deployed_as, tag);
        let declared = ours.find(&rule.policy).filter(|_| is_ours);
        let or_declared = |given: &str, pick: fn(&registry::Declared) -> &str| match declared {
            Some(entry) if given.is_empty() => pick(entry).to_owned(),
            _ => given.to_owned(),
        };
        Finding {
            severity: or_declared(&self.severity, |p| &p.severity),
            category: or_declared(&self.category, |p| &p.category),
            rule,
            ours: is_ours,
            deployed_as: self.deployed_as.clone(),
            answered: self.answered,
            object: self.object.clone(),
            field: String::new(),
            message: String::new(),
            fix: String::new(),
            location: None,
            operation: None,
            code: None,
            standing: None,
        }
    }
}

/// The findings of one message: one per line, a line that is only advice
/// becoming the fix of the line before it. Our metadata fills in the
/// severity and category an input leaves empty.
pub fn findings(context: &Context, message: &str, ours: Ours, out: &mut Vec<Finding>) {
    let first = out.len();
    for text in message.lines().filter(|l| !l.trim().is_empty()) {
        let line = Finding::read_line(text.trim());
        if out.len() > first && fix::is_advice(&line) {
            if let Some(previous) = out.last_mut() {
                previous.fix = line.text;
            }
            continue;
        }
        let mut finding = context.finding(ours, line.tag.as_ref());
        finding.fix = fix::fix(&line.text);
        finding.field = line.field;
        finding.message = line.text;
        out.push(finding);
    }
    if out.len() == first {
        // A result without a message (an `error` with an empty one) is
        // still a finding about the object, with what the input gives.
        let (rule, is_ours) = ours.identify(&context.deployed_as, None);
        out.push(Finding {
            rule,
            ours: is_ours,
            severity: context.severity.clone(),
            category: context.category.clone(),
            message: "(no message)".to_owned(),
            ..context.finding(ours, None)
        });
    }
}

/// A finding read from `check`'s JSON, as a report holds it: whose it is
/// (the tag `check` split off decides, as in a message), our metadata's
/// severity and category, and its fix.
pub fn from_check(mut finding: Finding, ours: Ours) -> Finding {
    let context = Context {
        deployed_as: finding.deployed_as.clone(),
        answered: finding.answered,
        severity: String::new(),
        category: String::new(),
        object: finding.object.clone(),
    };
    let tagged = context.finding(ours, Some(&finding.rule));
    finding.fix = fix::fix(&finding.message);
    Finding {
        rule: tagged.rule,
        ours: tagged.ours,
        severity: tagged.severity,
        category: tagged.category,
        ..finding
    }
}
