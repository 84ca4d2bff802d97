//! Settings of `harbor-retention`.

use serde::Deserialize;
use shared::catalogue::PLATFORM_GROUPS;
use shared::{Exemptions, User, Validatable};

use crate::reclaim::{kind_names, reclaimed_kind};

fn yes() -> bool {
    true
}

fn harbor_only() -> Vec<String> {
    vec!["Harbor".to_owned()]
}

/// The confirmation gate on DELETE.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteGate {
    /// `false` turns the gate off; the Harbor value checks stay.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The kinds whose deletion needs the confirmation.
    #[serde(default = "harbor_only")]
    pub kinds: Vec<String>,
    /// Let the platform's own identities delete without confirmation (see
    /// [`PLATFORM_GROUPS`] and [`PLATFORM_USERS`]).
    #[serde(default = "yes")]
    pub exempt_platform: bool,
}

impl Default for DeleteGate {
    fn default() -> Self {
        Self {
            enabled: true,
            kinds: harbor_only(),
            exempt_platform: true,
        }
    }
}

/// kube-controller-manager's namespace controller, which deletes what is
/// left in a namespace being deleted, one object at a time (with and
/// without `--use-service-account-credentials`).
pub const PLATFORM_USERS: &[&str] = &[
    "system:serviceaccount:kube-system:namespace-controller",
    "system:kube-controller-manager",
];

impl DeleteGate {
    /// Whether `user` is one of the platform identities.
    pub fn is_platform(user: &User<'_>) -> bool {
        PLATFORM_USERS.iter().any(|u| *u == user.username)
            || user
                .groups
                .iter()
                .any(|g| PLATFORM_GROUPS.contains(&g.as_ref()))
    }

    /// Whether a DELETE of `kind` needs the confirmation.
    pub fn covers(&self, kind: &str) -> bool {
        self.enabled && self.kinds.iter().any(|k| k == kind)
    }
}

/// Settings of the policy; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Users, groups and service accounts neither rule applies to.
    #[serde(default)]
    pub exemptions: Exemptions,
    /// The confirmation gate on DELETE.
    #[serde(default)]
    pub delete_gate: DeleteGate,
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        self.exemptions.validate()?;
        let kinds = &self.delete_gate.kinds;
        if self.delete_gate.enabled && kinds.is_empty() {
            return Err(
                "deleteGate.kinds is empty; to turn the gate off, set deleteGate.enabled: false"
                    .to_owned(),
            );
        }
        for (i, kind) in kinds.iter().enumerate() {
            if reclaimed_kind(kind).is_none() {
                return Err(format!(
                    "deleteGate.kinds[{i}]: {kind:?} is not a kind whose deletion reclaims storage in Cozystack v1.6; \
                     use one of {}",
                    kind_names()
                ));
            }
            if kinds.iter().take(i).any(|k| k == kind) {
                return Err(format!("deleteGate.kinds[{i}]: {kind:?} is listed twice"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn check(json: &str) -> Result<Settings, String> {
        shared::settings::check::<Settings>(json.as_bytes())
    }

    #[test]
    fn the_gate_covers_harbor_by_default() {
        let settings = check("{}").unwrap();
        assert_eq!(settings, Settings::default());
        assert!(settings.delete_gate.covers("Harbor"));
        assert!(!settings.delete_gate.covers("ClickHouse"));
        let off = check(r#"{"deleteGate": {"enabled": false}}"#).unwrap();
        assert!(!off.delete_gate.covers("Harbor"));
        let more = check(r#"{"deleteGate": {"kinds": ["Harbor", "Etcd"]}}"#).unwrap();
        assert!(more.delete_gate.covers("Etcd"));
        assert!(more.delete_gate.exempt_platform);
    }

    #[test]
    fn refuses_unknown_kinds_keys_and_types() {
        assert!(
            check(r#"{"deleteGate": {"kinds": ["Postgres"]}}"#)
                .unwrap_err()
                .starts_with("deleteGate.kinds[0]: \"Postgres\" is not a kind")
        );
        assert!(
            check(r#"{"deleteGate": {"kinds": ["Harbor", "Harbor"]}}"#)
                .unwrap_err()
                .contains("listed twice")
        );
        assert!(
            check(r#"{"deleteGate": {"kinds": []}}"#)
                .unwrap_err()
                .contains("deleteGate.enabled: false")
        );
        assert!(check(r#"{"deleteGate": {"enabled": false, "kinds": []}}"#).is_ok());
        assert!(
            check(r#"{"deleteGate": {"enable": false}}"#)
                .unwrap_err()
                .contains("unknown field `enable`")
        );
        assert!(
            check(r#"{"deleteGate": {"enabled": "no"}}"#)
                .unwrap_err()
                .contains("expected a boolean")
        );
    }

    #[test]
    fn platform_identities() {
        let user = |name: &'static str, groups: &[&'static str]| User {
            username: Cow::Borrowed(name),
            groups: groups.iter().map(|g| Cow::Borrowed(*g)).collect(),
        };
        assert!(DeleteGate::is_platform(&user(
            "system:serviceaccount:cozy-system:tenant-foo-cleanup",
            &[
                "system:serviceaccounts",
                "system:serviceaccounts:cozy-system"
            ]
        )));
        assert!(DeleteGate::is_platform(&user(
            "system:serviceaccount:kube-system:namespace-controller",
            &[]
        )));
        assert!(!DeleteGate::is_platform(&user(
            "alice@example.org",
            &["tenant-foo-admin"]
        )));
    }
}
