//! Settings of `securitygroup-validity`.

use serde::Deserialize;
use shared::apps::app_kind;
use shared::validators::is_kind_name;
use shared::{Exemptions, RuleIds, Validatable};

use crate::rules::{MISSING_TARGET, RULES};

/// The rules the setting `ignore` may list.
pub const IGNORABLE: &[&str] = &[MISSING_TARGET.id];

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
    /// Application kinds accepted in references besides the platform's
    /// catalogue (kinds of ApplicationDefinitions a cluster adds).
    #[serde(default)]
    pub extra_kinds: Vec<String>,
    /// Rules whose warnings are denials instead, by id: those of verdict
    /// "warn (deny by setting)" in the README's Rules table.
    #[serde(default)]
    pub deny: RuleIds,
    /// Warnings left out, by id: only `missing-target`, which then looks
    /// nothing up in the cluster (no context-aware call at all).
    #[serde(default)]
    pub ignore: RuleIds,
}

impl Settings {
    /// Whether `kind` names an application kind this cluster serves.
    pub fn knows_kind(&self, kind: &str) -> bool {
        app_kind(kind).is_some() || self.extra_kinds.iter().any(|k| k == kind)
    }

    /// Whether the policy may read the cluster: not when `ignore` lists
    /// `missing-target`.
    pub fn looks_up(&self) -> bool {
        !self.ignore.contains(&MISSING_TARGET)
    }
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        self.exemptions.validate()?;
        self.deny.validate("deny", &RULES.raisable())?;
        self.ignore.validate("ignore", IGNORABLE)?;
        // A kind that is already in the catalogue is accepted, not refused:
        // a later version of this policy may learn it, and refusing the
        // setting then would stop the policy-server at start-up.
        for (i, kind) in self.extra_kinds.iter().enumerate() {
            if !is_kind_name(kind) {
                return Err(format!(
                    "extraKinds[{i}]: {kind:?} is not a kind name (a capital letter, then letters and digits, at most 63; for example ComputePlane)"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> Result<Settings, String> {
        shared::settings::check::<Settings>(json.as_bytes())
    }

    #[test]
    fn defaults_warn_look_up_and_know_the_catalogue() {
        let settings = check("{}").unwrap();
        assert!(settings.looks_up());
        assert!(settings.knows_kind("Postgres"));
        assert!(!settings.knows_kind("ComputePlane"));
        assert!(!settings.knows_kind("postgres"));
    }

    #[test]
    fn extra_kinds_deny_and_ignore() {
        let settings = check(
            r#"{"extraKinds": ["ComputePlane", "Postgres"], "deny": ["missing-target"],
                "ignore": ["missing-target"]}"#,
        )
        .unwrap();
        assert!(settings.knows_kind("ComputePlane"));
        assert!(settings.deny.contains(&MISSING_TARGET));
        assert!(!settings.looks_up());
        assert_eq!(
            RULES.raisable(),
            [
                "duplicate-attachment",
                "foreign-api-group",
                "impossible-group-name",
                "unknown-kind",
                "missing-target"
            ]
        );
        let all = r#"{"deny": ["duplicate-attachment", "foreign-api-group", "impossible-group-name",
            "unknown-kind", "missing-target"]}"#;
        assert!(check(all).is_ok());
    }

    #[test]
    fn refuses_bad_settings_by_name() {
        assert!(
            check(r#"{"extraKinds": ["computeplane"]}"#)
                .unwrap_err()
                .starts_with("extraKinds[0]")
        );
        assert!(check(r#"{"extraKinds": [""]}"#).is_err());
        assert!(check(&format!(r#"{{"extraKinds": ["A{}"]}}"#, "b".repeat(63))).is_err());
        assert!(check(r#"{"extraKinds": "ComputePlane"}"#).is_err());
        assert!(
            check(r#"{"missingTargets": "deny"}"#)
                .unwrap_err()
                .contains("unknown field `missingTargets`")
        );
        assert_eq!(
            check(r#"{"deny": ["unknownKind"]}"#).unwrap_err(),
            "deny[0]: \"unknownKind\" is not a rule deny can list here; use one of \
             duplicate-attachment, foreign-api-group, impossible-group-name, unknown-kind, missing-target"
        );
        assert_eq!(
            check(r#"{"ignore": ["unknown-kind"]}"#).unwrap_err(),
            "ignore[0]: \"unknown-kind\" is not a rule ignore can list here; use one of missing-target"
        );
        assert!(check(r#"{"deny": "unknown-kind"}"#).is_err());
    }
}
