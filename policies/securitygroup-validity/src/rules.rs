//! Every rule of `securitygroup-validity`, as its README's "Rules" table lists them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// `invalid-name`.
///
/// `metadata.name` that is not a qualified name or cannot name the backing CiliumNetworkPolicy.
///
/// Source: cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validateSecurityGroup`),
/// `k8s.io/apimachinery/pkg/api/validation`.
pub const INVALID_NAME: Rule = Rule {
    policy: POLICY,
    id: "invalid-name",
    level: Level::Deny,
};

/// `legacy-target-ref`.
///
/// The pre-release `spec.targetRef`, which cozystack-api drops so the group attaches to nothing.
///
/// Source: cozystack-api `pkg/registry/sdn/securitygroup/validate.go`.
pub const LEGACY_TARGET_REF: Rule = Rule {
    policy: POLICY,
    id: "legacy-target-ref",
    level: Level::Deny,
};

/// `invalid-app-reference`.
///
/// An attachment or `fromApp`/`toApp` reference cozystack-api refuses.
///
/// Source: cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validateAppRef`).
pub const INVALID_APP_REFERENCE: Rule = Rule {
    policy: POLICY,
    id: "invalid-app-reference",
    level: Level::Deny,
};

/// `invalid-group-peer`.
///
/// A `fromSG`/`toSG` name cozystack-api refuses.
///
/// Source: cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validateSGNames`).
pub const INVALID_GROUP_PEER: Rule = Rule {
    policy: POLICY,
    id: "invalid-group-peer",
    level: Level::Deny,
};

/// `invalid-cidr`.
///
/// A `fromCIDR`/`toCIDR` that is not a CIDR or IP address.
///
/// Source: cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validateCIDRs`).
pub const INVALID_CIDR: Rule = Rule {
    policy: POLICY,
    id: "invalid-cidr",
    level: Level::Deny,
};

/// `invalid-port`.
///
/// A port or protocol cozystack-api refuses.
///
/// Source: cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validatePortRules`).
pub const INVALID_PORT: Rule = Rule {
    policy: POLICY,
    id: "invalid-port",
    level: Level::Deny,
};

/// `invalid-fqdn`.
///
/// A `toFQDNs` selector without `matchName` or `matchPattern`.
///
/// Source: cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validateFQDNs`).
pub const INVALID_FQDN: Rule = Rule {
    policy: POLICY,
    id: "invalid-fqdn",
    level: Level::Deny,
};

/// `no-rules`.
///
/// A group with no ingress or egress rules: members are labelled but not isolated.
///
/// Source: Cozystack 1.6 SecurityGroup controller (no default deny).
pub const NO_RULES: Rule = Rule {
    policy: POLICY,
    id: "no-rules",
    level: Level::Warn,
};

/// `duplicate-attachment`.
///
/// The same application attached twice.
///
/// Source: this policy's; cozystack-api accepts it.
pub const DUPLICATE_ATTACHMENT: Rule = Rule {
    policy: POLICY,
    id: "duplicate-attachment",
    level: Level::Setting,
};

/// `foreign-api-group`.
///
/// An `apiGroup` other than `apps.cozystack.io`, which selects nothing.
///
/// Source: `pkg/registry/sdn/securitygroup` label selection.
pub const FOREIGN_API_GROUP: Rule = Rule {
    policy: POLICY,
    id: "foreign-api-group",
    level: Level::Setting,
};

/// `impossible-group-name`.
///
/// A `fromSG`/`toSG` name no SecurityGroup can have.
///
/// Source: `k8s.io/apimachinery` object name rules.
pub const IMPOSSIBLE_GROUP_NAME: Rule = Rule {
    policy: POLICY,
    id: "impossible-group-name",
    level: Level::Setting,
};

/// `unknown-kind`.
///
/// A kind no ApplicationDefinition serves.
///
/// Source: ApplicationDefinitions of the cluster.
pub const UNKNOWN_KIND: Rule = Rule {
    policy: POLICY,
    id: "unknown-kind",
    level: Level::Setting,
};

/// `missing-target`.
///
/// An attachment or peer that does not exist.
///
/// Source: cluster lookups.
pub const MISSING_TARGET: Rule = Rule {
    policy: POLICY,
    id: "missing-target",
    level: Level::Setting,
};

/// `existence-not-checked`.
///
/// A cluster lookup failed, so kinds or targets were not checked.
///
/// Source: cluster lookups.
pub const EXISTENCE_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "existence-not-checked",
    level: Level::NotCheckedWarns,
};

/// The catalogue.
pub const RULES: Catalogue = Catalogue {
    policy: POLICY,
    own: &[
        INVALID_NAME,
        LEGACY_TARGET_REF,
        INVALID_APP_REFERENCE,
        INVALID_GROUP_PEER,
        INVALID_CIDR,
        INVALID_PORT,
        INVALID_FQDN,
        NO_RULES,
        DUPLICATE_ATTACHMENT,
        FOREIGN_API_GROUP,
        IMPOSSIBLE_GROUP_NAME,
        UNKNOWN_KIND,
        MISSING_TARGET,
        EXISTENCE_NOT_CHECKED,
    ],
};
