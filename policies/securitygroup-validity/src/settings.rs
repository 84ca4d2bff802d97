//! Settings of `securitygroup-validity`.

use serde::Deserialize;
use shared::catalogue::app_kind;
use shared::validators::is_kind_name;
use shared::{Exemptions, Validatable};

/// What a reference to an application or SecurityGroup that does not exist
/// in the namespace leads to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum MissingTargets {
    /// Allow with a warning: GitOps tools may apply a group before the
    /// applications it names.
    #[default]
    Warn,
    /// Reject: every reference must exist when the group is written.
    Deny,
    /// Do not look: no context-aware call at all.
    Ignore,
}

/// What cozystack-api accepts but what is redundant or selects nothing:
/// each is a warning unless the setting `deny` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Finding {
    /// The same application attached twice (an empty `apiGroup` is
    /// `apps.cozystack.io`).
    DuplicateAttachment,
    /// An `apiGroup` other than `apps.cozystack.io`.
    ForeignApiGroup,
    /// A `fromSG`/`toSG` name no SecurityGroup can have (not a lowercase
    /// RFC 1123 subdomain).
    ImpossibleGroupName,
    /// A kind neither built in, nor in `extraKinds`, nor served by an
    /// ApplicationDefinition of the cluster.
    UnknownKind,
}

impl Finding {
    /// The name the setting `deny` takes.
    pub fn name(self) -> &'static str {
        match self {
            Finding::DuplicateAttachment => "duplicateAttachment",
            Finding::ForeignApiGroup => "foreignApiGroup",
            Finding::ImpossibleGroupName => "impossibleGroupName",
            Finding::UnknownKind => "unknownKind",
        }
    }

    /// The rule whose tag the finding carries.
    pub fn rule(self) -> shared::Rule {
        match self {
            Finding::DuplicateAttachment => crate::rules::DUPLICATE_ATTACHMENT,
            Finding::ForeignApiGroup => crate::rules::FOREIGN_API_GROUP,
            Finding::ImpossibleGroupName => crate::rules::IMPOSSIBLE_GROUP_NAME,
            Finding::UnknownKind => crate::rules::UNKNOWN_KIND,
        }
    }
}

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
    /// `warn` (default), `deny` or `ignore`.
    #[serde(default)]
    pub missing_targets: MissingTargets,
    /// Findings rejected rather than warned about.
    #[serde(default)]
    pub deny: Vec<Finding>,
}

impl Settings {
    /// Whether `kind` names an application kind this cluster serves.
    pub fn knows_kind(&self, kind: &str) -> bool {
        app_kind(kind).is_some() || self.extra_kinds.iter().any(|k| k == kind)
    }

    /// Whether `finding` is a rejection rather than a warning.
    pub fn denies(&self, finding: Finding) -> bool {
        self.deny.contains(&finding)
    }

    /// Whether the settings raise `rule`, a warning by default, to a
    /// denial: a finding `deny` lists, or a missing target under
    /// `missingTargets: deny`.
    pub fn raises(&self, rule: &shared::Rule) -> bool {
        self.deny.iter().any(|finding| finding.rule() == *rule)
            || (*rule == crate::rules::MISSING_TARGET
                && self.missing_targets == MissingTargets::Deny)
    }
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        self.exemptions.validate()?;
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
    fn defaults_warn_and_know_the_catalogue() {
        let settings = check("{}").unwrap();
        assert_eq!(settings.missing_targets, MissingTargets::Warn);
        assert!(settings.knows_kind("Postgres"));
        assert!(!settings.knows_kind("ComputePlane"));
        assert!(!settings.knows_kind("postgres"));
    }

    #[test]
    fn extra_kinds_and_modes() {
        let settings =
            check(r#"{"extraKinds": ["ComputePlane", "Postgres"], "missingTargets": "deny"}"#)
                .unwrap();
        assert!(settings.knows_kind("ComputePlane"));
        assert_eq!(settings.missing_targets, MissingTargets::Deny);
        assert_eq!(
            check(r#"{"missingTargets": "ignore"}"#)
                .unwrap()
                .missing_targets,
            MissingTargets::Ignore
        );
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
        assert!(
            check(r#"{"missingTargets": "block"}"#)
                .unwrap_err()
                .contains("unknown variant `block`, expected one of `warn`, `deny`, `ignore`")
        );
        assert!(
            check(r#"{"missingTarget": "warn"}"#)
                .unwrap_err()
                .contains("unknown field `missingTarget`")
        );
        assert!(check(r#"{"extraKinds": "ComputePlane"}"#).is_err());
        assert!(
            check(r#"{"deny": ["unknownKinds"]}"#)
                .unwrap_err()
                .contains("unknown variant `unknownKinds`, expected one of `duplicateAttachment`, `foreignApiGroup`, `impossibleGroupName`, `unknownKind`")
        );
        assert!(check(r#"{"deny": "unknownKind"}"#).is_err());
        assert!(check(r#"{"deny": ["UnknownKind"]}"#).is_err());
    }

    #[test]
    fn the_settings_raise_exactly_the_raisable_rules() {
        let all = check(
            r#"{"deny": ["duplicateAttachment", "foreignApiGroup", "impossibleGroupName", "unknownKind"],
                "missingTargets": "deny"}"#,
        )
        .unwrap();
        let raised = |settings: &Settings| crate::RULES.ids_where(|rule| settings.raises(rule));
        assert_eq!(raised(&all), crate::RULES.raisable());
        assert!(raised(&Settings::default()).is_empty());
    }

    #[test]
    fn findings_warn_unless_denied() {
        assert!(check("{}").unwrap().deny.is_empty());
        let settings = check(
            r#"{"deny": ["duplicateAttachment", "foreignApiGroup", "impossibleGroupName", "unknownKind"]}"#,
        )
        .unwrap();
        for finding in [
            Finding::DuplicateAttachment,
            Finding::ForeignApiGroup,
            Finding::ImpossibleGroupName,
            Finding::UnknownKind,
        ] {
            assert!(settings.denies(finding));
            let json = format!(r#"{{"deny": ["{}"]}}"#, finding.name());
            assert_eq!(check(&json).unwrap().deny, vec![finding]);
        }
        assert!(
            !check(r#"{"deny": []}"#)
                .unwrap()
                .denies(Finding::UnknownKind)
        );
    }
}
