//! What deleting an application destroys, per kind, since Cozystack v1.6.
//!
//! Sources: the v1.6 release notes ("Application deletion now reclaims
//! storage") and the v1.6.2 post-delete hooks and charts they describe:
//! `packages/apps/harbor/templates/{hooks/cleanup,bucket}.yaml`,
//! `packages/apps/{clickhouse,qdrant,mariadb}/templates/hooks/cleanup-pvc.yaml`,
//! `packages/apps/bucket/templates/{bucketclaim,hooks/cleanup-acme}.yaml`,
//! `packages/extra/{etcd,monitoring,seaweedfs}/templates/hooks/cleanup.yaml`,
//! and the BucketClasses of `packages/extra/seaweedfs` (`deletionPolicy:
//! Delete`, `Retain` only for the `-lock` classes). Each text says only
//! what those sources show; `{release}` is the HelmRelease name.

/// A kind whose deletion reclaims storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reclaimed {
    pub kind: &'static str,
    /// What is deleted with the application.
    pub destroys: &'static str,
}

const fn reclaimed(kind: &'static str, destroys: &'static str) -> Reclaimed {
    Reclaimed { kind, destroys }
}

/// The kinds the delete gate can cover, Harbor first.
pub const RECLAIMED: &[Reclaimed] = &[
    reclaimed(
        "Harbor",
        "its jobservice and trivy PVCs (force-deleted by the post-delete hook, overriding persistence.resourcePolicy=keep), \
         the registry bucket {release}-registry with every image in it, and the certificate {release}-ingress-tls",
    ),
    reclaimed("ClickHouse", "its keeper, data and log PVCs"),
    reclaimed("Qdrant", "its data PVC"),
    reclaimed("OpenBAO", "its data PVC with every secret stored in it"),
    reclaimed(
        "Monitoring",
        "the tenant's VictoriaMetrics and VictoriaLogs storage (every stored metric and log) and their TLS Secrets",
    ),
    reclaimed(
        "SeaweedFS",
        "the tenant's SeaweedFS volume PVCs, with every object stored in the tenant's buckets",
    ),
    reclaimed(
        "Etcd",
        "the tenant's data-etcd-* PVCs, the datastore of the tenant's Kubernetes clusters",
    ),
    reclaimed(
        "MariaDB",
        "its PVCs (label app.kubernetes.io/instance={release}) and the Secrets {release}-metrics-password and {release}-repl-password",
    ),
    reclaimed(
        "Bucket",
        "the bucket {release} with every object in it (its BucketClass deletes it, unless the Bucket uses locking) \
         and its ACME certificate resources",
    ),
];

/// The entry of `kind`, if its deletion reclaims storage.
pub fn reclaimed_kind(kind: &str) -> Option<&'static Reclaimed> {
    RECLAIMED.iter().find(|r| r.kind == kind)
}

/// The kinds, as settings messages list them.
pub fn kind_names() -> String {
    RECLAIMED
        .iter()
        .map(|r| r.kind)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::catalogue::app_kind;

    #[test]
    fn every_kind_is_an_application() {
        assert_eq!(RECLAIMED.len(), 9);
        for entry in RECLAIMED {
            assert!(app_kind(entry.kind).is_some(), "{}", entry.kind);
        }
        assert_eq!(reclaimed_kind("Harbor").map(|r| r.kind), Some("Harbor"));
        assert!(reclaimed_kind("Postgres").is_none());
        assert!(kind_names().starts_with("Harbor, ClickHouse"));
    }
}
