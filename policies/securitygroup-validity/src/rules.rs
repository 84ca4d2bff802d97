//! Every rule of `securitygroup-validity`, as its README's "Rules" table lists them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// `invalid-name`.
pub const INVALID_NAME: Rule = Rule {
    policy: POLICY,
    id: "invalid-name",
    level: Level::Deny,
    summary: "`metadata.name` that is not a qualified name or cannot name the backing CiliumNetworkPolicy",
    source: "cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validateSecurityGroup`), `k8s.io/apimachinery/pkg/api/validation`",
};

/// `legacy-target-ref`.
pub const LEGACY_TARGET_REF: Rule = Rule {
    policy: POLICY,
    id: "legacy-target-ref",
    level: Level::Deny,
    summary: "the pre-release `spec.targetRef`, which cozystack-api drops so the group attaches to nothing",
    source: "cozystack-api `pkg/registry/sdn/securitygroup/validate.go`",
};

/// `invalid-app-reference`.
pub const INVALID_APP_REFERENCE: Rule = Rule {
    policy: POLICY,
    id: "invalid-app-reference",
    level: Level::Deny,
    summary: "an attachment or `fromApp`/`toApp` reference cozystack-api refuses",
    source: "cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validateAppRef`)",
};

/// `invalid-group-peer`.
pub const INVALID_GROUP_PEER: Rule = Rule {
    policy: POLICY,
    id: "invalid-group-peer",
    level: Level::Deny,
    summary: "a `fromSG`/`toSG` name cozystack-api refuses",
    source: "cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validateSGNames`)",
};

/// `invalid-cidr`.
pub const INVALID_CIDR: Rule = Rule {
    policy: POLICY,
    id: "invalid-cidr",
    level: Level::Deny,
    summary: "a `fromCIDR`/`toCIDR` that is not a CIDR or IP address",
    source: "cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validateCIDRs`)",
};

/// `invalid-port`.
pub const INVALID_PORT: Rule = Rule {
    policy: POLICY,
    id: "invalid-port",
    level: Level::Deny,
    summary: "a port or protocol cozystack-api refuses",
    source: "cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validatePortRules`)",
};

/// `invalid-fqdn`.
pub const INVALID_FQDN: Rule = Rule {
    policy: POLICY,
    id: "invalid-fqdn",
    level: Level::Deny,
    summary: "a `toFQDNs` selector without `matchName` or `matchPattern`",
    source: "cozystack-api `pkg/registry/sdn/securitygroup/validate.go` (`validateFQDNs`)",
};

/// `no-rules`.
pub const NO_RULES: Rule = Rule {
    policy: POLICY,
    id: "no-rules",
    level: Level::Warn,
    summary: "a group with no ingress or egress rules: members are labelled but not isolated",
    source: "Cozystack 1.6 SecurityGroup controller (no default deny)",
};

/// `duplicate-attachment`.
pub const DUPLICATE_ATTACHMENT: Rule = Rule {
    policy: POLICY,
    id: "duplicate-attachment",
    level: Level::Setting,
    summary: "the same application attached twice",
    source: "this policy's; cozystack-api accepts it",
};

/// `foreign-api-group`.
pub const FOREIGN_API_GROUP: Rule = Rule {
    policy: POLICY,
    id: "foreign-api-group",
    level: Level::Setting,
    summary: "an `apiGroup` other than `apps.cozystack.io`, which selects nothing",
    source: "`pkg/registry/sdn/securitygroup` label selection",
};

/// `impossible-group-name`.
pub const IMPOSSIBLE_GROUP_NAME: Rule = Rule {
    policy: POLICY,
    id: "impossible-group-name",
    level: Level::Setting,
    summary: "a `fromSG`/`toSG` name no SecurityGroup can have",
    source: "`k8s.io/apimachinery` object name rules",
};

/// `unknown-kind`.
pub const UNKNOWN_KIND: Rule = Rule {
    policy: POLICY,
    id: "unknown-kind",
    level: Level::Setting,
    summary: "a kind no ApplicationDefinition serves",
    source: "ApplicationDefinitions of the cluster",
};

/// `missing-target`.
pub const MISSING_TARGET: Rule = Rule {
    policy: POLICY,
    id: "missing-target",
    level: Level::Setting,
    summary: "an attachment or peer that does not exist",
    source: "cluster lookups",
};

/// `existence-not-checked`.
pub const EXISTENCE_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "existence-not-checked",
    level: Level::NotCheckedWarns,
    summary: "a cluster lookup failed, so kinds or targets were not checked",
    source: "cluster lookups",
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
