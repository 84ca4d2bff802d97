//! What a policy's rules find over one object, before the verdict.
//!
//! On UPDATE a policy judges what the change introduces: it runs the same
//! rules over the stored object (`oldObject`) and forgives what that
//! already had. [`Findings`] is the one place that decides what "already
//! had" means and what becomes of it, so every policy answers alike:
//!
//! - the stored object had a finding when it had one of the same rule, at
//!   the same field, with the same text (a changed value that is still
//!   wrong is the change's);
//! - a denial it had becomes a warning that says so ([`crate::verdict::STORED`]),
//!   so an object with legacy content stays editable;
//! - a warning it had is dropped: repeated on every edit it is noise, and
//!   audit-scanner, which replays objects as CREATE, still reports it.
//!
//! Whether a finding denies comes from its rule's catalogue [`Level`], and,
//! for a rule a setting may raise, from the policy's settings.

use std::collections::BTreeSet;

use crate::field::FieldPath;
use crate::rule::{Level, Rule};
use crate::settings::RuleIds;
use crate::verdict::{Finding, Review};

/// The findings of a policy's rules over one object, in the order found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings(Vec<Found>);

/// One finding, and whether its rule already knows that the stored object
/// had it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    finding: Finding,
    stored: bool,
}

impl Findings {
    /// No findings yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a finding of `rule` at `path`; the rule's level decides
    /// what it does.
    pub fn add(&mut self, rule: Rule, path: FieldPath, message: impl Into<String>) {
        self.add_known(false, rule, path, message);
    }

    /// Records a finding whose rule knows from the objects themselves
    /// whether the stored one `already_stored` it: a rule that reads the
    /// cluster does not run again over the stored object, and tells instead
    /// that it holds the same reference, or the same value, there.
    pub fn add_known(
        &mut self,
        already_stored: bool,
        rule: Rule,
        path: FieldPath,
        message: impl Into<String>,
    ) {
        self.0.push(Found {
            finding: Finding::new(rule, path, message),
            stored: already_stored,
        });
    }

    /// Keeps only the findings `keep` accepts (a finding another policy
    /// reports, say).
    pub fn retain(&mut self, mut keep: impl FnMut(&Finding) -> bool) {
        self.0.retain(|found| keep(&found.finding));
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The findings, in the order found.
    pub fn iter(&self) -> impl Iterator<Item = &Finding> {
        self.0.iter().map(|found| &found.finding)
    }

    /// Records the findings in `review`. A rule of level [`Level::Deny`]
    /// or [`Level::NotCheckedFails`] denies, as does one of
    /// [`Level::Setting`] or [`Level::OptIn`] that the setting `deny`
    /// lists, and its message then ends by naming it (`(deny: <rule>)`);
    /// [`Level::Warn`], [`Level::NotCheckedWarns`] and unlisted settings
    /// warn, unless the setting `ignore` lists them, and an unlisted opt-in
    /// says nothing. `stored` holds the stored object's findings on UPDATE
    /// (`None` on CREATE, or when the stored object cannot be read and so
    /// forgives nothing).
    pub fn record(
        self,
        stored: Option<&Findings>,
        deny: &RuleIds,
        ignore: &RuleIds,
        review: &mut Review,
    ) {
        // Compared by their lines, which hold rule, field and text: sorted
        // once, so a long list of findings is not compared pairwise.
        let lines: BTreeSet<String> = stored
            .map(|old| old.iter().map(Finding::line).collect())
            .unwrap_or_default();
        for Found { finding, stored } in self.0 {
            let had = stored || (!lines.is_empty() && lines.contains(&finding.line()));
            let Finding {
                rule,
                path,
                message,
            } = finding;
            let raised =
                matches!(rule.level, Level::Setting | Level::OptIn) && deny.contains(&rule);
            if matches!(rule.level, Level::Deny | Level::NotCheckedFails) {
                review.violation_unless_stored(had, rule, path, message);
            } else if raised {
                let message = format!("{message} (deny: {})", rule.id);
                review.violation_unless_stored(had, rule, path, message);
            } else if rule.level != Level::OptIn && !had && !ignore.contains(&rule) {
                review.warning(rule, path, message);
            }
        }
    }
}

/// Findings collected elsewhere, in their order (a rule that sorts and
/// deduplicates its own first).
impl FromIterator<Finding> for Findings {
    fn from_iter<I: IntoIterator<Item = Finding>>(findings: I) -> Self {
        Self(
            findings
                .into_iter()
                .map(|finding| Found {
                    finding,
                    stored: false,
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{Refusal, STORED};

    const fn rule(id: &'static str, level: Level) -> Rule {
        Rule {
            policy: "p",
            id,
            level,
        }
    }
    const DENY: Rule = rule("deny", Level::Deny);
    const WARN: Rule = rule("warn", Level::Warn);
    const SETTING: Rule = rule("setting", Level::Setting);
    const OPT_IN: Rule = rule("opt-in", Level::OptIn);

    fn at(path: &str) -> FieldPath {
        FieldPath::parse(path)
    }

    fn ids(ids: &[&str]) -> RuleIds {
        serde_json::from_value(serde_json::json!(ids)).unwrap()
    }

    /// The message and warnings of `found` recorded against `stored`,
    /// with the settings `deny` and `ignore`.
    fn answer(
        found: Findings,
        stored: Option<&Findings>,
        deny: &[&str],
        ignore: &[&str],
    ) -> (Option<String>, Vec<String>) {
        let mut review = Review::new();
        found.record(stored, &ids(deny), &ids(ignore), &mut review);
        let verdict = review.verdict(Refusal::Invalid);
        (verdict.message(), verdict.warnings())
    }

    fn some(lines: &[&str]) -> Option<String> {
        Some(lines.join("\n"))
    }

    #[test]
    fn levels_decide_and_settings_raise_or_silence() {
        let mut found = Findings::new();
        found.add(DENY, at("spec.a"), "bad");
        found.add(WARN, at("spec.b"), "odd");
        found.add(SETTING, at("spec.c"), "risky");
        found.add(OPT_IN, at("spec.d"), "guarded");
        assert_eq!(
            answer(found.clone(), None, &[], &[]),
            (
                some(&["[p/deny] spec.a: bad"]),
                vec![
                    "[p/warn] spec.b: odd".to_owned(),
                    "[p/setting] spec.c: risky".to_owned()
                ]
            )
        );
        assert_eq!(
            answer(found.clone(), None, &["setting", "opt-in"], &[]),
            (
                some(&[
                    "[p/deny] spec.a: bad",
                    "[p/setting] spec.c: risky (deny: setting)",
                    "[p/opt-in] spec.d: guarded (deny: opt-in)"
                ]),
                vec!["[p/warn] spec.b: odd".to_owned()]
            )
        );
        // `deny` cannot raise a warning rule; `ignore` cannot silence a denial.
        assert_eq!(
            answer(found, None, &["warn"], &["warn", "setting", "deny"]),
            (some(&["[p/deny] spec.a: bad"]), vec![])
        );
    }

    #[test]
    fn what_the_stored_object_had_is_forgiven_and_what_changed_is_not() {
        let mut stored = Findings::new();
        stored.add(DENY, at("spec.a"), "bad");
        stored.add(DENY, at("spec.b"), "bad: 1");
        stored.add(WARN, at("spec.c"), "odd");
        stored.add(SETTING, at("spec.d"), "risky");
        let mut found = Findings::new();
        found.add(DENY, at("spec.a"), "bad");
        // The same rule at the same field, with another value.
        found.add(DENY, at("spec.b"), "bad: 2");
        found.add(WARN, at("spec.c"), "odd");
        found.add(WARN, at("spec.e"), "odd");
        found.add(SETTING, at("spec.d"), "risky");
        let (message, warnings) = answer(found, Some(&stored), &["setting"], &[]);
        assert_eq!(message, some(&["[p/deny] spec.b: bad: 2"]));
        assert_eq!(
            warnings,
            [
                format!("[p/deny] spec.a: {STORED}bad"),
                "[p/warn] spec.e: odd".to_owned(),
                format!("[p/setting] spec.d: {STORED}risky (deny: setting)"),
            ]
        );
    }

    #[test]
    fn a_rule_may_know_what_the_stored_object_had() {
        let mut found = Findings::new();
        found.add_known(true, DENY, at("spec.a"), "bad");
        found.add_known(true, WARN, at("spec.b"), "odd");
        found.add_known(false, DENY, at("spec.c"), "bad");
        let (message, warnings) = answer(found, None, &[], &[]);
        assert_eq!(message, some(&["[p/deny] spec.c: bad"]));
        assert_eq!(warnings, [format!("[p/deny] spec.a: {STORED}bad")]);
    }

    #[test]
    fn an_empty_stored_object_forgives_nothing() {
        let mut found = Findings::new();
        found.add(DENY, at("spec.a"), "bad");
        found.retain(|finding| finding.path == at("spec.a"));
        assert!(!found.is_empty());
        let (message, _) = answer(found, Some(&Findings::new()), &[], &[]);
        assert_eq!(message, some(&["[p/deny] spec.a: bad"]));
    }
}
