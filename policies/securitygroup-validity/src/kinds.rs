//! The application kinds a cluster serves beyond the built-in catalogue.
//!
//! cozystack-api serves one `apps.cozystack.io` kind per
//! ApplicationDefinition (`cozystack.io/v1alpha1`, cluster-scoped), named
//! by its `spec.application.kind`; the lineage webhook labels the pods of
//! a custom application like those of a built-in one, so a SecurityGroup
//! can select them. One list of the ApplicationDefinitions, masked to that
//! field, answers every kind of a request; it is made only when a reference
//! names a kind outside the catalogue and `extraKinds`. The request is the
//! same every time, so policy-server serves it from one watch.

use shared::lookup::{Cluster, ListAll, LookupError, list_items, text};

pub const API_VERSION: &str = "cozystack.io/v1alpha1";
pub const KIND: &str = "ApplicationDefinition";
const KIND_FIELD: &str = "spec.application.kind";
const MASKS: &[&str] = &[KIND_FIELD];

/// The `spec.application.kind` of every ApplicationDefinition.
pub fn served(cluster: &dyn Cluster) -> Result<Vec<String>, LookupError> {
    let answer = cluster.list_all(&ListAll {
        api_version: API_VERSION,
        kind: KIND,
        label_selector: None,
        field_selector: None,
        field_masks: Some(MASKS),
    })?;
    let mut kinds = Vec::new();
    for definition in list_items(&answer)? {
        if let Some(kind) = text(&definition, KIND_FIELD)? {
            kinds.push(kind.to_owned());
        }
    }
    Ok(kinds)
}
