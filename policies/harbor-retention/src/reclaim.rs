//! What deleting an application destroys, for the kinds this policy knows,
//! as Cozystack v1.6.2 does it.
//!
//! Sources (v1.6.2): the post-delete hooks
//! `packages/apps/harbor/templates/hooks/cleanup.yaml`,
//! `packages/apps/{clickhouse,qdrant,mariadb}/templates/hooks/cleanup-pvc.yaml`,
//! `packages/apps/bucket/templates/hooks/cleanup-acme.yaml` and
//! `packages/extra/{monitoring,seaweedfs,etcd}/templates/hooks/cleanup.yaml`;
//! the charts `packages/apps/harbor/templates/{bucket,harbor}.yaml` (the
//! BucketClaim, and the nested HelmRelease `<release>-system` whose chart
//! `packages/system/harbor` renders the CNPG Cluster `<release>-db`),
//! `packages/apps/bucket/templates/bucketclaim.yaml`,
//! `packages/apps/openbao/templates/openbao.yaml` (PVC retention
//! `whenDeleted: Delete`), `packages/apps/kafka/templates/kafka.yaml`
//! (`deleteClaim: true`), `packages/apps/mongodb/templates/mongodb.yaml`
//! (finalizer `percona.com/delete-psmdb-pvc`),
//! `packages/system/monitoring/templates/{grafana/db,alerta/alerta-db}.yaml`;
//! and the BucketClasses of `packages/extra/seaweedfs` (`deletionPolicy:
//! Delete`, `Retain` only for the `-lock` classes).
//!
//! A hook that only prints a warning when a deletion fails is "deleted by",
//! never "force-deleted"; a hook that fails its Job says so. CNPG databases
//! go with the release that renders their Cluster: the PVCs carry owner
//! references to it (as the SeaweedFS hook's own comment says), none of
//! these Clusters is kept by `helm.sh/resource-policy` **[inferred]**.
//! `{release}` is the HelmRelease name.

/// A kind whose deletion the policy can describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reclaimed {
    pub kind: &'static str,
    /// What is deleted with the application.
    pub destroys: &'static str,
}

const fn reclaimed(kind: &'static str, destroys: &'static str) -> Reclaimed {
    Reclaimed { kind, destroys }
}

/// How a best-effort hook deletes.
macro_rules! best_effort {
    ($job:literal) => {
        concat!(
            "deleted by the post-delete hook ",
            $job,
            ", which only warns if it cannot"
        )
    };
}

/// The kinds the policy knows, Harbor first.
pub const RECLAIMED: &[Reclaimed] = &[
    reclaimed(
        "Harbor",
        concat!(
            "its jobservice and trivy PVCs despite persistence.resourcePolicy=keep (",
            best_effort!("{release}-cleanup"),
            "), the registry bucket of BucketClaim {release}-registry \
             with every image in it (its BucketClass has deletionPolicy: Delete), the CNPG database {release}-db \
             with its volumes (uninstalled with the nested HelmRelease {release}-system), and the certificate \
             {release}-ingress-tls"
        ),
    ),
    reclaimed(
        "ClickHouse",
        "its keeper, data and log PVCs (label app.kubernetes.io/instance={release}; deleted by the post-delete \
         hook {release}-cleanup, whose Job fails if it cannot)",
    ),
    reclaimed(
        "Qdrant",
        concat!(
            "its data PVCs qdrant-storage-{release}-<ordinal> (",
            best_effort!("{release}-qdrant-cleanup"),
            ")"
        ),
    ),
    reclaimed(
        "OpenBAO",
        "its data PVCs with every secret stored in them (its StatefulSet's PVC retention policy is whenDeleted: \
         Delete)",
    ),
    reclaimed(
        "Monitoring",
        concat!(
            "the tenant's VictoriaMetrics and VictoriaLogs storage PVCs with every stored metric and log, and the \
             Secrets alerta-tls and grafana-ingress-tls (",
            best_effort!("{release}-cleanup"),
            "), and the Grafana and Alerta CNPG databases grafana-db and alerta-db (uninstalled with the nested \
             HelmRelease {release}-system)"
        ),
    ),
    reclaimed(
        "SeaweedFS",
        concat!(
            "the tenant's SeaweedFS volume PVCs with every object stored in the tenant's buckets, and SeaweedFS's \
             certificate and database Secrets (",
            best_effort!("{release}-cleanup"),
            "), and the filer-metadata CNPG database seaweedfs-db when this release owns it (that hook's Job \
             fails if it cannot delete it)"
        ),
    ),
    reclaimed(
        "Etcd",
        concat!(
            "the tenant's data-etcd-<ordinal> PVCs, the datastore of the tenant's Kubernetes clusters, and its TLS \
             Secrets (",
            best_effort!("{release}-cleanup"),
            ")"
        ),
    ),
    reclaimed(
        "MariaDB",
        "its PVCs (label app.kubernetes.io/instance={release}) and the Secrets {release}-metrics-password and \
         {release}-repl-password (deleted by the post-delete hook {release}-cleanup, whose Job fails if it cannot)",
    ),
    reclaimed(
        "Bucket",
        concat!(
            "the bucket of BucketClaim {release} with every object in it (its BucketClass has deletionPolicy: \
             Delete, unless the Bucket uses locking, whose -lock class retains it), and its certificate \
             {release}-ui-tls with its ACME challenges (",
            best_effort!("{release}-cleanup-acme"),
            ")"
        ),
    ),
    reclaimed(
        "Kafka",
        "its Kafka and ZooKeeper PVCs with every message in its topics (the Strimzi Kafka {release} sets \
         deleteClaim: true, so Strimzi deletes them)",
    ),
    reclaimed(
        "MongoDB",
        "its PVCs with every database in them (the PerconaServerMongoDB {release} carries the finalizer \
         percona.com/delete-psmdb-pvc, so the operator deletes them)",
    ),
];

/// The entry of `kind`, if the policy knows what deleting it destroys.
pub fn reclaimed_kind(kind: &str) -> Option<&'static Reclaimed> {
    RECLAIMED.iter().find(|r| r.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::apps::app_kind;

    #[test]
    fn every_kind_is_an_application() {
        assert_eq!(RECLAIMED.len(), 11);
        for (i, entry) in RECLAIMED.iter().enumerate() {
            assert!(app_kind(entry.kind).is_some(), "{}", entry.kind);
            assert!(
                RECLAIMED[..i].iter().all(|r| r.kind != entry.kind),
                "{} twice",
                entry.kind
            );
        }
        assert_eq!(reclaimed_kind("Harbor").map(|r| r.kind), Some("Harbor"));
        assert!(reclaimed_kind("Postgres").is_none());
    }

    #[test]
    fn best_effort_hooks_are_not_said_to_force() {
        for entry in RECLAIMED {
            assert!(!entry.destroys.contains("force"), "{}", entry.kind);
        }
        assert!(reclaimed_kind("Harbor").unwrap().destroys.contains(
            "deleted by the post-delete hook {release}-cleanup, which only warns if it cannot"
        ));
    }
}
