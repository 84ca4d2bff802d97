//! Every rule of `oidc-config`, as its README's "Rules" table lists them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// `oidc-null`.
pub const OIDC_NULL: Rule = Rule {
    policy: POLICY,
    id: "oidc-null",
    level: Level::Deny,
    summary: "Kubernetes `spec.oidc: null`, which the templates dereference",
    source: "Kubernetes `templates/cluster.yaml`, `templates/oidc-authn-config.yaml`, `templates/oidc-keycloak.yaml`",
};

/// `mode-null`.
pub const MODE_NULL: Rule = Rule {
    policy: POLICY,
    id: "mode-null",
    level: Level::Deny,
    summary: "`spec.oidc.mode: null`, which removes the required key",
    source: "`values.schema.json` `oidc.required: [mode]` (both charts)",
};

/// `mode-unknown`.
pub const MODE_UNKNOWN: Rule = Rule {
    policy: POLICY,
    id: "mode-unknown",
    level: Level::Deny,
    summary: "`spec.oidc.mode` outside None, System, CustomConfig",
    source: "`values.schema.json` (both charts)",
};

/// `custom-config-type`.
pub const CUSTOM_CONFIG_TYPE: Rule = Rule {
    policy: POLICY,
    id: "custom-config-type",
    level: Level::Deny,
    summary: "`customConfig.config` of a type the chart cannot use",
    source: "Kubernetes `values.schema.json`; Monitoring `templates/grafana/grafana.yaml`",
};

/// `custom-config-exclusive`.
pub const CUSTOM_CONFIG_EXCLUSIVE: Rule = Rule {
    policy: POLICY,
    id: "custom-config-exclusive",
    level: Level::Deny,
    summary: "`customConfig.config` and `customConfig.secretRef.name` both set",
    source: "Kubernetes `templates/oidc-authn-config.yaml`; Monitoring `monitoring.oidc.assertCustomConfigXor` in `_helpers.tpl`",
};

/// `custom-config-missing`.
pub const CUSTOM_CONFIG_MISSING: Rule = Rule {
    policy: POLICY,
    id: "custom-config-missing",
    level: Level::Deny,
    summary: "mode CustomConfig with neither `customConfig.config` nor `customConfig.secretRef.name`",
    source: "Kubernetes `templates/oidc-authn-config.yaml`; Monitoring `monitoring.oidc.assertCustomConfigXor` in `_helpers.tpl`",
};

/// `custom-config-ignored`.
pub const CUSTOM_CONFIG_IGNORED: Rule = Rule {
    policy: POLICY,
    id: "custom-config-ignored",
    level: Level::Warn,
    summary: "`customConfig` set while mode is None or System",
    source: "Kubernetes `templates/oidc-authn-config.yaml`; Monitoring `templates/grafana/grafana.yaml`",
};

/// `grafana-forced-setting`.
pub const GRAFANA_FORCED_SETTING: Rule = Rule {
    policy: POLICY,
    id: "grafana-forced-setting",
    level: Level::Warn,
    summary: "Monitoring inline config with `users` setting a key the chart forces",
    source: "`templates/grafana/grafana.yaml`",
};

/// `system-without-platform-oidc`.
pub const SYSTEM_WITHOUT_PLATFORM_OIDC: Rule = Rule {
    policy: POLICY,
    id: "system-without-platform-oidc",
    level: Level::Deny,
    summary: "mode System while the platform runs without OIDC (only a warning when the stored mode is System already)",
    source: "Kubernetes `templates/oidc-keycloak.yaml`; Monitoring `monitoring.oidc.assertSystemEnabled` in `_helpers.tpl`",
};

/// `system-not-checked`.
pub const SYSTEM_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "system-not-checked",
    level: Level::NotCheckedWarns,
    summary: "mode System, and the platform's OIDC switch could not be read from the cluster",
    source: "`packages/core/platform/templates/bundles/system.yaml` (the Package it reads)",
};

/// `reserved-apiserver-flag`.
pub const RESERVED_APISERVER_FLAG: Rule = Rule {
    policy: POLICY,
    id: "reserved-apiserver-flag",
    level: Level::Deny,
    summary: "apiserver `extraArgs` starting with `--oidc-` or `--authentication-config` while mode is not None",
    source: "Kubernetes `templates/cluster.yaml`",
};

/// `reserved-apiserver-volume`.
pub const RESERVED_APISERVER_VOLUME: Rule = Rule {
    policy: POLICY,
    id: "reserved-apiserver-volume",
    level: Level::Deny,
    summary: "an apiserver `extraVolumes` entry named `authentication-config` while mode is not None",
    source: "Kubernetes `templates/cluster.yaml`",
};

/// `users-with-secret-ref`.
pub const USERS_WITH_SECRET_REF: Rule = Rule {
    policy: POLICY,
    id: "users-with-secret-ref",
    level: Level::Deny,
    summary: "Monitoring `customConfig.secretRef.name` together with `users`",
    source: "`monitoring.oidc.assertCustomSecretRefUsersEmpty` in `_helpers.tpl`",
};

/// `users-ignored`.
pub const USERS_IGNORED: Rule = Rule {
    policy: POLICY,
    id: "users-ignored",
    level: Level::Warn,
    summary: "`users` while mode is None: the chart binds no users",
    source: "Kubernetes `templates/oidc-rbac-job.yaml`; Monitoring `templates/grafana/oidc-users-job.yaml`",
};

/// `user-role`.
pub const USER_ROLE: Rule = Rule {
    policy: POLICY,
    id: "user-role",
    level: Level::Deny,
    summary: "a user's role missing or outside the chart's roles",
    source: "Kubernetes `values.schema.json`; Monitoring `monitoring.oidc.assertUsersRoleShape` in `_helpers.tpl`",
};

/// `user-email`.
pub const USER_EMAIL: Rule = Rule {
    policy: POLICY,
    id: "user-email",
    level: Level::Deny,
    summary: "a user's email missing, empty, or (Monitoring) not matching the chart's pattern",
    source: "Kubernetes `values.schema.json`, `templates/oidc-rbac-job.yaml`; Monitoring `monitoring.oidc.assertUsersEmailShape` in `_helpers.tpl`",
};

/// `user-email-not-address`.
pub const USER_EMAIL_NOT_ADDRESS: Rule = Rule {
    policy: POLICY,
    id: "user-email-not-address",
    level: Level::Warn,
    summary: "Kubernetes: a user's email without `@`, which the token's email claim never matches",
    source: "Kubernetes `templates/oidc-authn-config.yaml` (`claimMappings.username.claim: email`)",
};

/// `user-repeated`.
pub const USER_REPEATED: Rule = Rule {
    policy: POLICY,
    id: "user-repeated",
    level: Level::Warn,
    summary: "Kubernetes: the same email and role listed twice",
    source: "Kubernetes `templates/oidc-rbac-job.yaml`",
};

/// `duplicate-email`.
pub const DUPLICATE_EMAIL: Rule = Rule {
    policy: POLICY,
    id: "duplicate-email",
    level: Level::Deny,
    summary: "an email repeated with another role (Kubernetes), any repeated email or emails differing only in case (Monitoring)",
    source: "Kubernetes `templates/oidc-rbac-job.yaml`; Monitoring `templates/grafana/oidc-users-job.yaml`",
};

/// `bound-role-change`.
pub const BOUND_ROLE_CHANGE: Rule = Rule {
    policy: POLICY,
    id: "bound-role-change",
    level: Level::Deny,
    summary: "Kubernetes UPDATE that changes the role of an email the chart has already bound",
    source: "Kubernetes `templates/oidc-rbac-job.yaml`",
};

/// `role-change-from-none`.
pub const ROLE_CHANGE_FROM_NONE: Rule = Rule {
    policy: POLICY,
    id: "role-change-from-none",
    level: Level::Warn,
    summary: "Kubernetes UPDATE from mode None that changes a listed user's role",
    source: "Kubernetes `templates/oidc-rbac-job.yaml`",
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
