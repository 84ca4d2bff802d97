//! Every rule of `no-delete`, as its README's "Rules" table lists them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// DELETE of a protected object.
///
/// DELETE of an object whose stored labels carry the protecting label with the value `"true"`.
///
/// Source: ValidatingAdmissionPolicy `cozystack-no-delete-guardrail`,
/// `packages/core/platform/templates/deletion-protection.yaml`.
pub const PROTECTED_DELETE: Rule = Rule {
    policy: POLICY,
    id: "protected-delete",
    level: Level::Deny,
};

/// Lifting the protection outside the allowed groups.
///
/// UPDATE that removes the protecting label or changes its value, by a user outside
/// `labelRemoval.allowedGroups` who is not a platform writer.
///
/// Source: `packages/core/installer/templates/cozy-system-labels.yaml` (the platform's own writer);
/// the rest is this policy's.
pub const PROTECTION_LIFTED: Rule = Rule {
    policy: POLICY,
    id: "protection-lifted",
    level: Level::OptIn,
};

/// The catalogue.
pub const RULES: Catalogue = Catalogue {
    policy: POLICY,
    own: &[PROTECTED_DELETE, PROTECTION_LIFTED],
};
