//! Harbor values that ask to keep data, which the chart never reads.
//!
//! The Harbor chart's values are `host`, `storageClass`, `core`,
//! `registry`, `jobservice`, `trivy`, `database` and `redis` (v1.6.2
//! `values.schema.json`, without `additionalProperties: false`); the
//! wrapper template forwards only those, and hard-codes
//! `harbor.persistence.resourcePolicy: "keep"` in the nested release. Keys
//! such as `spec.persistence.resourcePolicy` or
//! `spec.harbor.persistence.resourcePolicy` are accepted by cozystack-api
//! and Helm and silently dropped, while the post-delete hook deletes the
//! volumes anyway. Whoever writes them believes the data is kept; it is
//! not.

use shared::{Field, FieldError, Kind};

use crate::walk::{Step, TooDeep, find};

/// The Helm annotation that would keep a rendered resource.
pub const HELM_RESOURCE_POLICY: &str = "helm.sh/resource-policy";

/// Where a member sits, which decides whether `persistence` is suspect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A member of `spec` itself.
    Spec,
    /// Anywhere under `spec.harbor` (the upstream subchart's values, which
    /// the wrapper does not forward).
    Harbor,
    /// Anywhere else under `spec`.
    Other,
}

fn is_retention_key(name: &str) -> bool {
    name.eq_ignore_ascii_case("resourcePolicy") || name.eq_ignore_ascii_case(HELM_RESOURCE_POLICY)
}

/// The members under `spec` that try to override retention: any
/// `resourcePolicy` (or `helm.sh/resource-policy`), `spec.persistence`, and
/// any `persistence` under `spec.harbor`. A reported key's value is not
/// searched further. Names are compared ignoring ASCII case.
pub fn find_in_spec<'a>(spec: &Field<'a>) -> Result<Vec<Field<'a>>, TooDeep> {
    if spec.kind() != Some(Kind::Object) {
        return Ok(Vec::new());
    }
    find(spec, Place::Spec, |name, place| {
        let persistence = name.eq_ignore_ascii_case("persistence")
            && matches!(place, Place::Spec | Place::Harbor);
        if persistence || is_retention_key(name) {
            return Step::Report;
        }
        match place {
            Place::Spec if name.eq_ignore_ascii_case("harbor") => Step::Descend(Place::Harbor),
            Place::Harbor => Step::Descend(Place::Harbor),
            Place::Spec | Place::Other => Step::Descend(Place::Other),
        }
    })
}

/// `metadata.annotations["helm.sh/resource-policy"]` of the application,
/// which keeps nothing: Helm honours it on the resources a chart renders,
/// and the application is not one.
pub fn annotation<'a>(object: &Field<'a>) -> Result<Option<Field<'a>>, FieldError> {
    let annotation = object
        .at("metadata.annotations")?
        .field(HELM_RESOURCE_POLICY)?;
    Ok(annotation.is_present().then_some(annotation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::FieldPath;

    fn found(spec: &str) -> Vec<String> {
        let value: serde_json::Value = serde_json::from_str(spec).unwrap();
        let spec = Field::new(FieldPath::parse("spec"), Some(&value));
        find_in_spec(&spec)
            .unwrap()
            .iter()
            .map(|field| field.path().to_string())
            .collect()
    }

    #[test]
    fn finds_the_keys_the_chart_ignores() {
        assert_eq!(
            found(
                r#"{"persistence": {"resourcePolicy": "keep"},
                    "harbor": {"persistence": {"resourcePolicy": "keep"}, "jobservice": {"persistence": {}}},
                    "trivy": {"enabled": true, "resourcePolicy": "keep"},
                    "database": {"persistence": {"size": "5Gi"}},
                    "redis": [{"ResourcePolicy": "keep"}],
                    "core": {"annotations": {"helm.sh/resource-policy": "keep"}}}"#
            ),
            [
                "spec.core.annotations[\"helm.sh/resource-policy\"]",
                "spec.harbor.jobservice.persistence",
                "spec.harbor.persistence",
                "spec.persistence",
                "spec.redis[0].ResourcePolicy",
                "spec.trivy.resourcePolicy",
            ]
        );
    }

    #[test]
    fn real_values_are_clean() {
        assert!(
            found(
                r#"{"host": "", "storageClass": "replicated", "trivy": {"enabled": true, "size": "5Gi"},
                    "database": {"size": "5Gi", "replicas": 2}, "redis": {"size": "1Gi", "replicas": 2},
                    "core": {"resources": {}, "resourcesPreset": "small"}}"#
            )
            .is_empty()
        );
        assert!(found("{}").is_empty());
    }
}
