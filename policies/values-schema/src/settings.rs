//! Settings of `values-schema`.

use serde::Deserialize;
use shared::{CozystackVersion, Exemptions, RuleIds, Validatable};

use crate::rules::{RULES, UNDECLARED_KEY};
use crate::schemas::{RELEASES, Release, release};

/// The rules the setting `ignore` may list.
pub const IGNORABLE: &[&str] = &[UNDECLARED_KEY.id];

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// The Cozystack release whose chart schemas apply: `v1.6.2` (the
    /// default) or `v1.5.4`, with or without the `v`.
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

impl Settings {
    /// The release the settings select; `None` only for a version that
    /// [`Validatable::validate`] refuses.
    pub fn release(&self) -> Option<&'static Release> {
        release(self.cozystack_version.release()?.as_str())
    }
}

/// `v1.6.2 or v1.5.4`.
pub fn versions() -> String {
    let names: Vec<&str> = RELEASES.iter().map(|r| r.version).collect();
    match names.as_slice() {
        [init @ .., last] if !init.is_empty() => format!("{} or {last}", init.join(", ")),
        _ => names.join(""),
    }
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
    fn versions_with_or_without_v() {
        assert_eq!(check("{}").unwrap().release().unwrap().version, "v1.6.2");
        for (given, selected) in [
            ("v1.5.4", "v1.5.4"),
            ("1.5.4", "v1.5.4"),
            ("1.6.2", "v1.6.2"),
        ] {
            let settings = check(&format!(r#"{{"cozystackVersion": "{given}"}}"#)).unwrap();
            assert_eq!(settings.release().unwrap().version, selected);
        }
        let refused = check(r#"{"cozystackVersion": "v1.6"}"#).unwrap_err();
        assert!(refused.contains("set v1.6.2 or v1.5.4"), "{refused}");
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
