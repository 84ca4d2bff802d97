//! Settings of `harbor-retention`.

use serde::Deserialize;
use shared::apps::{APP_KINDS, PLATFORM_GROUPS};
use shared::validators::is_kind_name;
use shared::{Exemptions, User, Validatable};

fn yes() -> bool {
    true
}

fn harbor_only() -> Vec<String> {
    vec!["Harbor".to_owned()]
}

/// The confirmation gate on DELETE.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteGate {
    /// `false` turns the gate off; the Harbor value checks stay.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The `apps.cozystack.io` kinds whose deletion needs the confirmation:
    /// any kind name, the catalogue's or a custom ApplicationDefinition's.
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
            if let Err(why) = check_kind(kind) {
                return Err(format!("deleteGate.kinds[{i}]: {kind:?} {why}"));
            }
            if kinds.iter().take(i).any(|k| k == kind) {
                return Err(format!("deleteGate.kinds[{i}]: {kind:?} is listed twice"));
            }
        }
        Ok(())
    }
}

/// Why `kind` cannot name an application kind. Any kind name is accepted,
/// so a custom ApplicationDefinition can be gated too; only what cannot be
/// a kind, or is a catalogue kind misspelt in case (kinds are
/// case-sensitive, so it would never match), is refused.
fn check_kind(kind: &str) -> Result<(), String> {
    if !is_kind_name(kind) {
        return Err(
            "is not a kind name (a capital letter, then letters and digits, at most 63; \
                    for example MongoDB)"
                .to_owned(),
        );
    }
    match APP_KINDS
        .iter()
        .find(|app| app.kind != kind && app.kind.eq_ignore_ascii_case(kind))
    {
        Some(app) => Err(format!(
            "never matches: kinds are case-sensitive, and the application kind is {:?}",
            app.kind
        )),
        None => Ok(()),
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
    fn any_kind_name_is_accepted() {
        let any =
            check(r#"{"deleteGate": {"kinds": ["MongoDB", "Postgres", "Tenant", "Valkey2"]}}"#)
                .unwrap();
        for kind in ["MongoDB", "Postgres", "Tenant", "Valkey2"] {
            assert!(any.delete_gate.covers(kind), "{kind}");
        }
        assert!(!any.delete_gate.covers("Harbor"));
    }

    #[test]
    fn refuses_bad_kinds_keys_and_types() {
        for bad in ["mongodbs", "", "Mongo DB", "Kafka-Connect", "Émail"] {
            let json = format!(r#"{{"deleteGate": {{"kinds": ["Harbor", {bad:?}]}}}}"#);
            assert!(
                check(&json)
                    .unwrap_err()
                    .starts_with(&format!("deleteGate.kinds[1]: {bad:?} is not a kind name")),
                "{bad}"
            );
        }
        assert_eq!(
            check(r#"{"deleteGate": {"kinds": ["Mongodb"]}}"#).unwrap_err(),
            "deleteGate.kinds[0]: \"Mongodb\" never matches: kinds are case-sensitive, and the application \
             kind is \"MongoDB\""
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
