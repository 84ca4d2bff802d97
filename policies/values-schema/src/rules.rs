//! Every rule of `values-schema`, as its README's "Rules" table lists them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// A value the chart's schema rejects.
///
/// A value the chart's `values.schema.json` rejects, as Helm validates it (defaults coalesced,
/// nulls deleting keys, draft 2020-12).
///
/// Source: `packages/{apps,extra}/<chart>/values.schema.json` of the selected release; Helm
/// `pkg/chartutil/jsonschema.go`, `coalesce.go`.
pub const SCHEMA_VIOLATION: Rule = Rule {
    policy: POLICY,
    id: "schema-violation",
    level: Level::Deny,
};

/// A `null` the chart's templates fail on.
///
/// A `null` on a key the chart defaults, which Helm deletes with its default, where a template then
/// fails (found by rendering every chart with Helm).
///
/// Source: Helm v4.1.1 `pkg/chart/common/util/coalesce.go` (a null deletes the key); the templates
/// named in `schemas/<version>/nulls.json`.
pub const NULL_FAILS_RENDER: Rule = Rule {
    policy: POLICY,
    id: "null-fails-render",
    level: Level::Deny,
};

/// A count too large for Helm to render.
///
/// A count the chart renders one item per unit of (replicas) above 1000, where Helm runs out of
/// memory or time.
///
/// Source: the loops named in `src/bounds.rs`, found by rendering every integer field with Helm
/// (the oracle).
pub const RENDER_BOUND: Rule = Rule {
    policy: POLICY,
    id: "render-bound",
    level: Level::Deny,
};

/// A key an addon's chart refuses.
///
/// A key of a Kubernetes addon's `valuesOverride` that the addon's own chart (cert-manager) refuses
/// (`additionalProperties: false`), which fails the addon's release.
///
/// Source: `apps/kubernetes/templates/helmreleases/cert-manager.yaml`;
/// `system/cert-manager/charts/cert-manager/values.schema.json` of the selected release.
pub const ADDON_SCHEMA: Rule = Rule {
    policy: POLICY,
    id: "addon-schema",
    level: Level::Deny,
};

/// A key the chart does not declare.
///
/// A key the chart's schema does not declare, which Helm ignores.
///
/// Source: `packages/{apps,extra}/<chart>/values.schema.json` of the selected release.
pub const UNDECLARED_KEY: Rule = Rule {
    policy: POLICY,
    id: "undeclared-key",
    level: Level::Setting,
};

/// The spec could not be checked.
///
/// No schema is known for the kind (in the selected release, or in the cluster's
/// ApplicationDefinitions), so the spec was not checked.
///
/// Source: the ApplicationDefinitions of the selected release, or of the cluster.
pub const SPEC_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "spec-not-checked",
    level: Level::NotCheckedWarns,
};

/// The schema of the cluster's ApplicationDefinition was not used.
///
/// With `cozystackVersion: cluster`, the ApplicationDefinition that serves the kind could not be
/// read, or its schema uses a keyword the policy does not implement, so the spec was judged by the
/// built-in schema of the release instead.
///
/// Source: `spec.application.openAPISchema` of the cluster's ApplicationDefinitions
/// (`cozystack.io/v1alpha1`), which cozystack-api serves each kind from.
pub const CLUSTER_SCHEMA_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "cluster-schema-not-checked",
    level: Level::NotCheckedWarns,
};

/// The cluster's release is unknown or unread.
///
/// With `cozystackVersion: cluster`, the cluster runs a Cozystack release the bundle does not know,
/// so the nulls and counts its templates refuse were not checked (the spec is judged by the schema
/// of the cluster's ApplicationDefinition); or its release could not be read, so the default
/// release's charts judged it.
///
/// Source: Deployment `cozy-system/cozystack-operator`
/// (`packages/core/installer/templates/cozystack-operator.yaml`, `pkg/version/version.go`).
pub const RELEASE_NOT_CHECKED: Rule = Rule::release_not_checked(POLICY, Level::NotCheckedWarns);

/// The catalogue.
pub const RULES: Catalogue = Catalogue {
    policy: POLICY,
    own: &[
        SCHEMA_VIOLATION,
        NULL_FAILS_RENDER,
        RENDER_BOUND,
        ADDON_SCHEMA,
        UNDECLARED_KEY,
        SPEC_NOT_CHECKED,
        CLUSTER_SCHEMA_NOT_CHECKED,
        RELEASE_NOT_CHECKED,
    ],
};
