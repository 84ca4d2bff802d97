//! Settings of `upgrade-readiness`.

use release::CozystackVersion;
use serde::Deserialize;
use shared::{Exemptions, Validatable, migration};

/// The migration version v1.5.4 stamps ([`migration::V1_5_4_TARGET`]): the
/// 1.6 notes say to come from the 1.5 line through v1.5.4.
pub const DEFAULT_MINIMUM_VERSION: u32 = migration::V1_5_4_TARGET;

/// The migration version v1.6.x stamps ([`migration::V1_6_TARGET`]): no
/// cluster can have reached more before its 1.6 upgrade.
pub const V1_6_TARGET_VERSION: u32 = migration::V1_6_TARGET;

fn default_minimum_version() -> u32 {
    DEFAULT_MINIMUM_VERSION
}

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Users, groups and service accounts the policy does not apply to.
    #[serde(default)]
    pub exemptions: Exemptions,
    /// The migration version (`data.version` of `cozy-system/cozystack-version`)
    /// the cluster should show before the 1.6 upgrade; `0` turns the check off.
    #[serde(default = "default_minimum_version")]
    pub minimum_version: u32,
    /// The Cozystack release the cluster runs: a release the bundle knows
    /// (`v1.6.2`, the default, …, `v1.5.0`), or `cluster`, the release the
    /// cluster records. The Kubernetes v1.30 warning is a check to run
    /// before the upgrade, so only under a v1.5 release, where v1.30 still
    /// renders; on v1.6 chart-render denies v1.30 (`removed-version`), one
    /// finding per cause.
    #[serde(default)]
    pub cozystack_version: CozystackVersion,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            exemptions: Exemptions::default(),
            minimum_version: DEFAULT_MINIMUM_VERSION,
            cozystack_version: CozystackVersion::default(),
        }
    }
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        self.exemptions.validate()?;
        self.cozystack_version.validate()?;
        if self.minimum_version > V1_6_TARGET_VERSION {
            return Err(format!(
                "minimumVersion {} is above {V1_6_TARGET_VERSION}, the migration version of v1.6.x: \
                 no cluster reaches it before its 1.6 upgrade; use {DEFAULT_MINIMUM_VERSION} (v1.5.4), \
                 or 0 to turn the check off",
                self.minimum_version
            ));
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
    fn defaults_and_limits() {
        assert_eq!(check("{}").unwrap(), Settings::default());
        assert_eq!(check("{}").unwrap().minimum_version, 46);
        assert_eq!(
            check(r#"{"minimumVersion": 0}"#).unwrap().minimum_version,
            0
        );
        assert!(check(r#"{"minimumVersion": 54}"#).is_ok());
        assert!(
            check(r#"{"minimumVersion": 55}"#)
                .unwrap_err()
                .starts_with("minimumVersion 55 is above 54")
        );
        assert!(
            check(r#"{"minimumVersion": "46"}"#)
                .unwrap_err()
                .contains("invalid type: string \"46\", expected u32")
        );
        assert!(
            check(r#"{"minimumVersion": -1}"#)
                .unwrap_err()
                .contains("expected u32")
        );
        for version in ["v1.5.0", "1.5.2", "v1.6.1", "cluster"] {
            assert!(check(&format!(r#"{{"cozystackVersion": "{version}"}}"#)).is_ok());
        }
        assert!(
            check(r#"{"cozystackVersion": "v1.5"}"#)
                .unwrap_err()
                .starts_with("cozystackVersion \"v1.5\" is not a release this policy knows")
        );
        assert!(
            check(r#"{"targetVersion": 46}"#)
                .unwrap_err()
                .contains("unknown field `targetVersion`")
        );
    }
}
