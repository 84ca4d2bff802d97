//! The `apps.cozystack.io` kinds a Cozystack v1.5/v1.6 cluster can serve.
//!
//! Kinds and plurals come from the ApplicationDefinitions of the released
//! releases the bundle knows (`spec.application.{kind,plural}`,
//! hand-written there, not computed: `kuberneteses`, `kubernetesnodeses`,
//! `externaldns`); the release prefix is `spec.release.prefix`, which names
//! the HelmRelease behind each app. [`APP_KINDS`] is written with the table
//! of releases ([`crate::release`]); a release candidate's new kinds
//! (`ComputePlane`) are only its own ([`crate::Release::serves`]).

/// API group of Cozystack applications.
pub const APPS_GROUP: &str = "apps.cozystack.io";

/// Service-account groups of the platform's own writers, which upgrades
/// and teardown run as: `cozy-system` (cozystack-api, cozystack-operator,
/// the migration hook `cozystack-migration-hook`, the Tenant chart's
/// cleanup Jobs) and `cozy-fluxcd` (Flux, the flux-shard-operator).
pub const PLATFORM_GROUPS: &[&str] = &[
    "system:serviceaccounts:cozy-system",
    "system:serviceaccounts:cozy-fluxcd",
];

/// One application kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppKind {
    pub kind: &'static str,
    pub plural: &'static str,
    /// Prefix of the HelmRelease name (`postgres-` + app name).
    pub release_prefix: &'static str,
}

// Written by `cargo xtask import-release`, as it writes it.
#[rustfmt::skip]
mod kinds;

pub use kinds::APP_KINDS;

/// The application kind called `kind` (exact, case-sensitive, as the API).
pub fn app_kind(kind: &str) -> Option<&'static AppKind> {
    APP_KINDS.iter().find(|a| a.kind == kind)
}

/// The application kind served under `plural`.
pub fn app_kind_by_plural(plural: &str) -> Option<&'static AppKind> {
    APP_KINDS.iter().find(|a| a.plural == plural)
}

/// An `apiVersion` as its group and version: `apps.cozystack.io/v1alpha1`
/// is (`apps.cozystack.io`, `v1alpha1`), the core group's `v1` is (``, `v1`).
pub fn group_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// The resource name the API server serves `kind` of `group` under, which
/// it sends in an admission request's `resource`: an application's plural
/// from its ApplicationDefinition (`externaldns`, `kuberneteses`), else the
/// lower-cased kind in English plural, as Kubernetes' generators derive it
/// for the built-in kinds (`ingresses`, `policies`). Used where a request is
/// built from a manifest (`check`, the playground).
pub fn plural(group: &str, kind: &str) -> String {
    if group == APPS_GROUP
        && let Some(app) = app_kind(kind)
    {
        return app.plural.to_owned();
    }
    let lower = kind.to_lowercase();
    if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        format!("{lower}es")
    } else if let Some(stem) = lower
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u']))
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_split_into_group_and_version() {
        assert_eq!(
            group_version("apps.cozystack.io/v1alpha1"),
            ("apps.cozystack.io", "v1alpha1")
        );
        assert_eq!(group_version("v1"), ("", "v1"));
        assert_eq!(group_version(""), ("", ""));
    }

    #[test]
    fn plurals_follow_the_platform_and_english() {
        assert_eq!(plural(APPS_GROUP, "Kubernetes"), "kuberneteses");
        assert_eq!(plural(APPS_GROUP, "ExternalDNS"), "externaldns");
        assert_eq!(plural("", "ConfigMap"), "configmaps");
        assert_eq!(plural("networking.k8s.io", "Ingress"), "ingresses");
        assert_eq!(plural("", "Policy"), "policies");
        assert_eq!(plural("", "Gateway"), "gateways");
        assert_eq!(
            plural("sdn.cozystack.io", "SecurityGroup"),
            "securitygroups"
        );
    }

    #[test]
    fn thirty_kinds_with_unique_names_and_plurals() {
        assert_eq!(APP_KINDS.len(), 30);
        for (i, a) in APP_KINDS.iter().enumerate() {
            for b in &APP_KINDS[i + 1..] {
                assert_ne!(a.kind, b.kind);
                assert_ne!(a.plural, b.plural);
            }
        }
    }

    #[test]
    fn irregular_plurals_are_the_platform_s() {
        assert_eq!(app_kind("Kubernetes").unwrap().plural, "kuberneteses");
        assert_eq!(app_kind("ExternalDNS").unwrap().plural, "externaldns");
        assert_eq!(app_kind_by_plural("postgreses").unwrap().kind, "Postgres");
        assert_eq!(app_kind("postgres"), None);
    }
}
