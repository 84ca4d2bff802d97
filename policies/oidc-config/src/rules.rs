//! Every rule of `oidc-config`, as its README's "Rules" table lists them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// `oidc-null`.
///
/// Kubernetes `spec.oidc: null`, which the templates dereference.
///
/// Source: Kubernetes `templates/cluster.yaml`, `templates/oidc-authn-config.yaml`,
/// `templates/oidc-keycloak.yaml`.
pub const OIDC_NULL: Rule = Rule {
    policy: POLICY,
    id: "oidc-null",
    level: Level::Deny,
};

/// `mode-null`.
///
/// `spec.oidc.mode: null`, which removes the required key.
///
/// Source: `values.schema.json` `oidc.required: [mode]` (both charts).
pub const MODE_NULL: Rule = Rule {
    policy: POLICY,
    id: "mode-null",
    level: Level::Deny,
};

/// `mode-unknown`.
///
/// `spec.oidc.mode` outside None, System, CustomConfig.
///
/// Source: `values.schema.json` (both charts).
pub const MODE_UNKNOWN: Rule = Rule {
    policy: POLICY,
    id: "mode-unknown",
    level: Level::Deny,
};

/// `custom-config-type`.
///
/// `customConfig.config` of a type the chart cannot use.
///
/// Source: Kubernetes `values.schema.json`; Monitoring `templates/grafana/grafana.yaml`.
pub const CUSTOM_CONFIG_TYPE: Rule = Rule {
    policy: POLICY,
    id: "custom-config-type",
    level: Level::Deny,
};

/// `custom-config-exclusive`.
///
/// `customConfig.config` and `customConfig.secretRef.name` both set.
///
/// Source: Kubernetes `templates/oidc-authn-config.yaml`; Monitoring
/// `monitoring.oidc.assertCustomConfigXor` in `_helpers.tpl`.
pub const CUSTOM_CONFIG_EXCLUSIVE: Rule = Rule {
    policy: POLICY,
    id: "custom-config-exclusive",
    level: Level::Deny,
};

/// `custom-config-missing`.
///
/// Mode CustomConfig with neither `customConfig.config` nor `customConfig.secretRef.name`.
///
/// Source: Kubernetes `templates/oidc-authn-config.yaml`; Monitoring
/// `monitoring.oidc.assertCustomConfigXor` in `_helpers.tpl`.
pub const CUSTOM_CONFIG_MISSING: Rule = Rule {
    policy: POLICY,
    id: "custom-config-missing",
    level: Level::Deny,
};

/// `custom-config-ignored`.
///
/// `customConfig` set while mode is None or System.
///
/// Source: Kubernetes `templates/oidc-authn-config.yaml`; Monitoring
/// `templates/grafana/grafana.yaml`.
pub const CUSTOM_CONFIG_IGNORED: Rule = Rule {
    policy: POLICY,
    id: "custom-config-ignored",
    level: Level::Warn,
};

/// `grafana-forced-setting`.
///
/// Monitoring inline config with `users` setting a key the chart forces.
///
/// Source: `templates/grafana/grafana.yaml`.
pub const GRAFANA_FORCED_SETTING: Rule = Rule {
    policy: POLICY,
    id: "grafana-forced-setting",
    level: Level::Warn,
};

/// `system-without-platform-oidc`.
///
/// Mode System while the platform runs without OIDC (only a warning when the stored mode is System
/// already).
///
/// Source: Kubernetes `templates/oidc-keycloak.yaml`; Monitoring
/// `monitoring.oidc.assertSystemEnabled` in `_helpers.tpl`.
pub const SYSTEM_WITHOUT_PLATFORM_OIDC: Rule = Rule {
    policy: POLICY,
    id: "system-without-platform-oidc",
    level: Level::Deny,
};

/// `release-not-checked`.
///
/// With `cozystackVersion: cluster`, the cluster runs a Cozystack release the bundle does not know,
/// so its OIDC templates were not checked; or its release could not be read, so v1.6.2's judged the
/// object.
///
/// Source: Deployment `cozy-system/cozystack-operator`
/// (`packages/core/installer/templates/cozystack-operator.yaml`, `pkg/version/version.go`).
pub const RELEASE_NOT_CHECKED: Rule = Rule::release_not_checked(POLICY, Level::NotCheckedWarns);

/// `system-not-checked`.
///
/// Mode System, and the platform's OIDC switch could not be read from the cluster.
///
/// Source: `packages/core/platform/templates/bundles/system.yaml` (the Package it reads).
pub const SYSTEM_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "system-not-checked",
    level: Level::NotCheckedWarns,
};

/// `reserved-apiserver-flag`.
///
/// Apiserver `extraArgs` starting with `--oidc-` or `--authentication-config` while mode is not
/// None.
///
/// Source: Kubernetes `templates/cluster.yaml`.
pub const RESERVED_APISERVER_FLAG: Rule = Rule {
    policy: POLICY,
    id: "reserved-apiserver-flag",
    level: Level::Deny,
};

/// `reserved-apiserver-volume`.
///
/// An apiserver `extraVolumes` entry named `authentication-config` while mode is not None.
///
/// Source: Kubernetes `templates/cluster.yaml`.
pub const RESERVED_APISERVER_VOLUME: Rule = Rule {
    policy: POLICY,
    id: "reserved-apiserver-volume",
    level: Level::Deny,
};

/// `users-with-secret-ref`.
///
/// Monitoring `customConfig.secretRef.name` together with `users`.
///
/// Source: `monitoring.oidc.assertCustomSecretRefUsersEmpty` in `_helpers.tpl`.
pub const USERS_WITH_SECRET_REF: Rule = Rule {
    policy: POLICY,
    id: "users-with-secret-ref",
    level: Level::Deny,
};

/// `users-ignored`.
///
/// `users` while mode is None: the chart binds no users.
///
/// Source: Kubernetes `templates/oidc-rbac-job.yaml`; Monitoring
/// `templates/grafana/oidc-users-job.yaml`.
pub const USERS_IGNORED: Rule = Rule {
    policy: POLICY,
    id: "users-ignored",
    level: Level::Warn,
};

/// `user-role`.
///
/// A user's role missing or outside the chart's roles.
///
/// Source: Kubernetes `values.schema.json`; Monitoring `monitoring.oidc.assertUsersRoleShape` in
/// `_helpers.tpl`.
pub const USER_ROLE: Rule = Rule {
    policy: POLICY,
    id: "user-role",
    level: Level::Deny,
};

/// `user-email`.
///
/// A user's email missing, empty, or (Monitoring) not matching the chart's pattern.
///
/// Source: Kubernetes `values.schema.json`, `templates/oidc-rbac-job.yaml`; Monitoring
/// `monitoring.oidc.assertUsersEmailShape` in `_helpers.tpl`.
pub const USER_EMAIL: Rule = Rule {
    policy: POLICY,
    id: "user-email",
    level: Level::Deny,
};

/// `user-email-not-address`.
///
/// Kubernetes: a user's email without `@`, which the token's email claim never matches.
///
/// Source: Kubernetes `templates/oidc-authn-config.yaml` (`claimMappings.username.claim: email`).
pub const USER_EMAIL_NOT_ADDRESS: Rule = Rule {
    policy: POLICY,
    id: "user-email-not-address",
    level: Level::Warn,
};

/// `user-repeated`.
///
/// Kubernetes: the same email and role listed twice.
///
/// Source: Kubernetes `templates/oidc-rbac-job.yaml`.
pub const USER_REPEATED: Rule = Rule {
    policy: POLICY,
    id: "user-repeated",
    level: Level::Warn,
};

/// `duplicate-email`.
///
/// An email repeated with another role (Kubernetes), any repeated email or emails differing only in
/// case (Monitoring).
///
/// Source: Kubernetes `templates/oidc-rbac-job.yaml`; Monitoring
/// `templates/grafana/oidc-users-job.yaml`.
pub const DUPLICATE_EMAIL: Rule = Rule {
    policy: POLICY,
    id: "duplicate-email",
    level: Level::Deny,
};

/// `bound-role-change`.
///
/// Kubernetes UPDATE that changes the role of an email the chart has already bound.
///
/// Source: Kubernetes `templates/oidc-rbac-job.yaml`.
pub const BOUND_ROLE_CHANGE: Rule = Rule {
    policy: POLICY,
    id: "bound-role-change",
    level: Level::Deny,
};

/// `role-change-from-none`.
///
/// Kubernetes UPDATE from mode None that changes a listed user's role.
///
/// Source: Kubernetes `templates/oidc-rbac-job.yaml`.
pub const ROLE_CHANGE_FROM_NONE: Rule = Rule {
    policy: POLICY,
    id: "role-change-from-none",
    level: Level::Warn,
};

/// The catalogue.
pub const RULES: Catalogue = Catalogue {
    policy: POLICY,
    own: &[
        OIDC_NULL,
        MODE_NULL,
        MODE_UNKNOWN,
        CUSTOM_CONFIG_TYPE,
        CUSTOM_CONFIG_EXCLUSIVE,
        CUSTOM_CONFIG_MISSING,
        CUSTOM_CONFIG_IGNORED,
        GRAFANA_FORCED_SETTING,
        SYSTEM_WITHOUT_PLATFORM_OIDC,
        SYSTEM_NOT_CHECKED,
        RELEASE_NOT_CHECKED,
        RESERVED_APISERVER_FLAG,
        RESERVED_APISERVER_VOLUME,
        USERS_WITH_SECRET_REF,
        USERS_IGNORED,
        USER_ROLE,
        USER_EMAIL,
        USER_EMAIL_NOT_ADDRESS,
        USER_REPEATED,
        DUPLICATE_EMAIL,
        BOUND_ROLE_CHANGE,
        ROLE_CHANGE_FROM_NONE,
    ],
};
