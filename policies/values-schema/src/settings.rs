//! Settings of `values-schema`.

use release::CozystackVersion;
use serde::Deserialize;
use shared::{Exemptions, RuleIds, Validatable};

use crate::rules::{RULES, UNDECLARED_KEY};

/// The rules the setting `ignore` may list.
pub const IGNORABLE: &[&str] = &[UNDECLARED_KEY.id];

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// The Cozystack release whose chart schemas apply: a release the
    /// bundle knows (`v1.6.2`, the default, `v1.6.1`, `v1.6.0`, `v1.5.4`,
    /// `v1.5.3`, `v1.5.2`, `v1.5.1`, `v1.5.0`, with or without the `v`), or
    /// `cluster`: the schema of the cluster's ApplicationDefinition of each
    /// kind, and the release the cluster records for the nulls and counts
    /// its templates refuse; when a read fails, the built-in schema of the
    /// cluster's release (or of the default), saying so.
    #[serde(default)]
    pub cozystack_version: CozystackVersion,
    /// Rules whose warnings are denials instead, by id: those of verdict
    /// "warn (deny by setting)" in the README's Rules table.
    #[serde(default)]
    pub deny: RuleIds,
    /// Warnings left out, by id: only `undeclared-key`.
    #[serde(default)]
    pub ignore: RuleIds,
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        self.exemptions.validate()?;
        self.deny.validate("deny", &RULES.raisable())?;
        self.ignore.validate("ignore", IGNORABLE)?;
        self.cozystack_version.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> Result<Settings, String> {
        shared::settings::check::<Settings>(json.as_bytes())
    }

    #[test]
    fn every_release_with_or_without_v_and_the_cluster_s() {
        let release = |settings: Settings| settings.cozystack_version.release().unwrap().as_str();
        assert_eq!(release(check("{}").unwrap()), "v1.6.2");
        for known in release::Release::all() {
            let settings = check(&format!(
                r#"{{"cozystackVersion": "{}"}}"#,
                &known.as_str()[1..]
            ))
            .unwrap();
            assert_eq!(release(settings), known.as_str());
            assert!(crate::schemas::release(known.as_str()).is_some(), "{known}");
        }
        assert!(
            check(r#"{"cozystackVersion": "cluster"}"#)
                .unwrap()
                .cozystack_version
                .reads_cluster()
        );
        let refused = check(r#"{"cozystackVersion": "v1.6"}"#).unwrap_err();
        assert!(
            refused.contains("set v1.6.2, v1.6.1, v1.6.0, v1.5.4, v1.5.3, v1.5.2, v1.5.1, v1.5.0"),
            "{refused}"
        );
    }

    #[test]
    fn undeclared_keys_and_typos() {
        let settings =
            check(r#"{"deny": ["undeclared-key"], "ignore": ["undeclared-key"]}"#).unwrap();
        assert!(settings.deny.contains(&UNDECLARED_KEY));
        assert!(settings.ignore.contains(&UNDECLARED_KEY));
        assert_eq!(RULES.raisable(), ["undeclared-key"]);
        assert_eq!(
            check(r#"{"deny": ["schema-violation"]}"#).unwrap_err(),
            "deny[0]: \"schema-violation\" is not a rule deny can list here; use one of undeclared-key"
        );
        assert!(
            check(r#"{"undeclaredKeys": "deny"}"#)
                .unwrap_err()
                .contains("unknown field `undeclaredKeys`")
        );
        assert!(
            check(r#"{"cozystack_version": "v1.6.2"}"#)
                .unwrap_err()
                .contains("unknown field `cozystack_version`")
        );
    }
}
