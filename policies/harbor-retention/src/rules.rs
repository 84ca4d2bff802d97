//! Every rule of `harbor-retention`, as its README's "Rules" table lists
//! them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// A retention key in a Harbor spec.
///
/// A Harbor spec key that tries to keep data (`persistence`, `resourcePolicy`), which the chart
/// ignores.
///
/// Source: `packages/apps/harbor/values.yaml` and `templates/harbor.yaml` (no such values;
/// `persistence.resourcePolicy=keep` hard-coded).
pub const IGNORED_RETENTION_KEY: Rule = Rule {
    policy: POLICY,
    id: "ignored-retention-key",
    level: Level::Deny,
};

/// The keep annotation on a Harbor.
///
/// `helm.sh/resource-policy` on a Harbor, which Helm honours only on rendered resources.
///
/// Source: `helm.sh/helm/v3/pkg/action/resource_policy.go`.
pub const IGNORED_KEEP_ANNOTATION: Rule = Rule {
    policy: POLICY,
    id: "ignored-keep-annotation",
    level: Level::Deny,
};

/// A Harbor spec nested deeper than the walk enters.
///
/// A Harbor spec nested deeper than any Harbor value (malformed).
///
/// Source: `packages/apps/harbor/values.schema.json`.
pub const SPEC_TOO_DEEP: Rule = Rule {
    policy: POLICY,
    id: "spec-too-deep",
    level: Level::Deny,
};

/// DELETE without the confirmation annotation.
///
/// DELETE of a gated kind without `policies.cozystack.io/confirm-delete=<name>`.
///
/// Source: the cleanup hooks and templates in the table above.
pub const UNCONFIRMED_DELETE: Rule = Rule {
    policy: POLICY,
    id: "unconfirmed-delete",
    level: Level::Deny,
};

/// The catalogue.
pub const RULES: Catalogue = Catalogue {
    policy: POLICY,
    own: &[
        IGNORED_RETENTION_KEY,
        IGNORED_KEEP_ANNOTATION,
        SPEC_TOO_DEEP,
        UNCONFIRMED_DELETE,
    ],
};
