//! What the rules find, before the verdict: each finding knows its rule,
//! its field and how severe it is, so an UPDATE can tell what the change
//! introduces from what the stored object already had.

use shared::{FieldError, FieldPath, Review, Rule};

use crate::Settings;

/// A warning that a setting may raise to a denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// `denyExternalWithoutTls`.
    ExternalWithoutTls,
    /// `denyAddonsBelowMinimumVersion`.
    AddonBelowMinimumVersion,
    /// `denyAddonsWithoutWorkers`.
    AddonWithoutWorkers,
}

impl Switch {
    fn denies(self, settings: &Settings) -> bool {
        match self {
            Switch::ExternalWithoutTls => settings.deny_external_without_tls,
            Switch::AddonBelowMinimumVersion => settings.deny_addons_below_minimum_version,
            Switch::AddonWithoutWorkers => settings.deny_addons_without_workers,
        }
    }
}

/// How severe a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The chart fails to render (or the platform refuses the object).
    Deny,
    /// It renders, but is probably a mistake.
    Warn,
    /// A warning unless the setting says deny.
    Switch(Switch),
}

/// One finding of one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule, to match findings of the old and new object.
    pub rule: Rule,
    pub path: FieldPath,
    pub level: Level,
    pub message: String,
}

/// The findings of the rules over one object.
#[derive(Debug, Default)]
pub struct Findings(pub Vec<Finding>);

impl Findings {
    fn push(&mut self, rule: Rule, path: FieldPath, level: Level, message: String) {
        self.0.push(Finding {
            rule,
            path,
            level,
            message,
        });
    }

    /// The chart fails to render.
    pub fn deny(&mut self, rule: Rule, path: FieldPath, message: impl Into<String>) {
        self.push(rule, path, Level::Deny, message.into());
    }

    /// Renders, probably a mistake.
    pub fn warn(&mut self, rule: Rule, path: FieldPath, message: impl Into<String>) {
        self.push(rule, path, Level::Warn, message.into());
    }

    /// A warning `switch` may raise to a denial.
    pub fn switch(
        &mut self,
        rule: Rule,
        switch: Switch,
        path: FieldPath,
        message: impl Into<String>,
    ) {
        self.push(rule, path, Level::Switch(switch), message.into());
    }

    /// Whether the same rule already held at the same field.
    fn holds(&self, finding: &Finding) -> bool {
        self.0
            .iter()
            .any(|old| old.rule == finding.rule && old.path == finding.path)
    }

    /// Records the findings in `review`: denials (and switches the settings
    /// raise) as violations, unless `before` (the stored object, on UPDATE)
    /// had the same finding, which then is only a warning.
    pub fn record(self, before: Option<&Findings>, settings: &Settings, review: &mut Review) {
        for finding in self.0 {
            let denies = match finding.level {
                Level::Deny => true,
                Level::Warn => false,
                Level::Switch(switch) => switch.denies(settings),
            };
            if denies {
                let stored = before.is_some_and(|old| old.holds(&finding));
                review.violation_unless_stored(stored, finding.rule, finding.path, finding.message);
            } else {
                review.warning(finding.rule, finding.path, finding.message);
            }
        }
    }
}

/// Runs one rule whose `Err` only says that a field it reads has the wrong
/// JSON type: values-schema reports that, so the rule is skipped rather
/// than reporting it twice (the README's "Types").
pub fn skip_wrong_types(rule: Result<(), FieldError>) {
    rule.unwrap_or_default();
}
