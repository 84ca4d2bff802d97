//! Every rule of `storageclass-immutable`, as its README's "Rules" table
//! lists them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// A storage class set to null.
///
/// An UPDATE that sets a declared storage class field to null, which Helm drops with the chart
/// default.
///
/// Source: `helm.sh/helm/v3/pkg/chartutil/coalesce.go`; cozystack-api
/// `pkg/registry/apps/application/rest.go` passes nulls on.
pub const NULL_STORAGE_CLASS: Rule = Rule {
    policy: POLICY,
    id: "null-storage-class",
    level: Level::Deny,
};

/// The effective storage class changed.
///
/// An UPDATE that changes the effective storage class of a field the chart declares immutable.
///
/// Source: `packages/apps/<chart>/values.schema.json` (`x-kubernetes-validations` immutability) and
/// the templates in the table above.
pub const STORAGE_CLASS_CHANGED: Rule = Rule {
    policy: POLICY,
    id: "storage-class-changed",
    level: Level::Deny,
};

/// The catalogue.
pub const RULES: Catalogue = Catalogue {
    policy: POLICY,
    own: &[NULL_STORAGE_CLASS, STORAGE_CLASS_CHANGED],
};
