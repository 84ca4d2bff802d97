//! Which fields are immutable, per kind, with the chart default that applies
//! when the field is absent.
//!
//! Source: the `## @immutable` markers of the v1.5.0–v1.6.2 charts, rendered
//! as `x-kubernetes-validations: [{rule: "self == oldSelf", message:
//! "storageClass is immutable"}]` in each `values.schema.json`: exactly these
//! 16 kinds. Kubernetes node groups (`spec.nodeGroups.*.storageClass`),
//! Etcd and KubernetesNodes are deliberately absent: their classes may change.
//!
//! `required` follows the same schemas: FoundationDB's `storage` and Kafka's
//! `kafka` and `zookeeper` list `storageClass` under `required`, and their
//! templates read those objects unguarded (`.Values.storage.size`,
//! `.Values.kafka.replicas`, `.Values.zookeeper.replicas`).

/// One immutable field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImmutableField<'s> {
    /// Dotted path from the object root, e.g. `spec.kafka.storageClass`.
    pub path: &'s str,
    /// The chart default, which an absent field (or absent parent) takes.
    pub default: &'s str,
    /// Whether the chart cannot render without the field: Helm deletes an
    /// explicit `null` (on the field or on a parent under `spec`), and the
    /// schema then misses a required key or a template dereferences the
    /// missing parent.
    pub required: bool,
}

const fn field(path: &'static str, default: &'static str) -> ImmutableField<'static> {
    ImmutableField {
        path,
        default,
        required: false,
    }
}

/// A field the chart's schema requires in its parent object.
const fn required(path: &'static str, default: &'static str) -> ImmutableField<'static> {
    ImmutableField {
        path,
        default,
        required: true,
    }
}

const STORAGE_CLASS: &[ImmutableField<'static>] = &[field("spec.storageClass", "")];
const STORAGE_CLASS_REPLICATED: &[ImmutableField<'static>] =
    &[field("spec.storageClass", "replicated")];

/// The platform's immutable storage classes, by kind.
pub const PLATFORM: &[(&str, &[ImmutableField<'static>])] = &[
    ("ClickHouse", STORAGE_CLASS),
    ("FoundationDB", &[required("spec.storage.storageClass", "")]),
    ("HTTPCache", STORAGE_CLASS),
    ("Harbor", STORAGE_CLASS),
    (
        "Kafka",
        &[
            required("spec.kafka.storageClass", ""),
            required("spec.zookeeper.storageClass", ""),
        ],
    ),
    ("Kubernetes", STORAGE_CLASS_REPLICATED),
    ("MariaDB", STORAGE_CLASS),
    ("MongoDB", STORAGE_CLASS),
    ("NATS", STORAGE_CLASS),
    ("OpenBAO", STORAGE_CLASS),
    ("OpenSearch", STORAGE_CLASS),
    ("Postgres", STORAGE_CLASS),
    ("Qdrant", STORAGE_CLASS),
    ("RabbitMQ", STORAGE_CLASS),
    ("Redis", STORAGE_CLASS),
    ("VMDisk", STORAGE_CLASS_REPLICATED),
];

/// Every path of [`PLATFORM`], which the policy reads up front.
pub const PLATFORM_PATHS: &[&str] = &[
    "spec.storageClass",
    "spec.storage.storageClass",
    "spec.kafka.storageClass",
    "spec.zookeeper.storageClass",
];

/// The immutable fields of `kind` on the platform.
pub fn platform_fields(kind: &str) -> &'static [ImmutableField<'static>] {
    PLATFORM
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[], |(_, fields)| fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_kinds_all_in_the_catalogue() {
        assert_eq!(PLATFORM.len(), 16);
        for (kind, fields) in PLATFORM {
            assert!(shared::apps::app_kind(kind).is_some(), "{kind}");
            assert!(!fields.is_empty());
        }
    }

    #[test]
    fn every_platform_path_is_read_up_front() {
        for (kind, fields) in PLATFORM {
            for field in *fields {
                assert!(
                    PLATFORM_PATHS.contains(&field.path),
                    "{kind}: {}",
                    field.path
                );
            }
        }
    }

    #[test]
    fn defaults_follow_the_charts() {
        assert_eq!(platform_fields("Kubernetes")[0].default, "replicated");
        assert_eq!(platform_fields("VMDisk")[0].default, "replicated");
        assert_eq!(platform_fields("Postgres")[0].default, "");
        assert_eq!(platform_fields("Kafka").len(), 2);
        assert!(platform_fields("Etcd").is_empty());
        assert!(platform_fields("KubernetesNodes").is_empty());
    }

    #[test]
    fn required_where_the_schemas_require_it() {
        let required: Vec<&str> = PLATFORM
            .iter()
            .flat_map(|(_, fields)| fields.iter())
            .filter(|field| field.required)
            .map(|field| field.path)
            .collect();
        assert_eq!(
            required,
            [
                "spec.storage.storageClass",
                "spec.kafka.storageClass",
                "spec.zookeeper.storageClass"
            ]
        );
    }
}
