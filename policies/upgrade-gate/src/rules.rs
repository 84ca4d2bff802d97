//! Every rule of `upgrade-gate`, as its README's "Rules" table lists them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// The platform namespace without the ConfigMap the migration hook needs.
///
/// Namespace `cozy-system` without ConfigMap `cozystack-version`, so the 1.6 chart skips migrations
/// 45-53.
///
/// Source: `packages/core/platform/templates/migration-hook.yaml` (`lookup` of the ConfigMap),
/// `templates/cozystack-version.yaml`.
pub const MIGRATION_VERSION_MISSING: Rule = Rule {
    policy: POLICY,
    id: "migration-version-missing",
    level: Level::Deny,
};

/// The ConfigMap could not be read.
///
/// A cluster read failed, so whether the migrations run was not checked.
///
/// Source: cluster lookups.
pub const MIGRATION_VERSION_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "migration-version-not-checked",
    level: Level::NotCheckedFails,
};

/// A legacy EtcdCluster while migration 50's snapshot target is missing.
///
/// A legacy `etcdclusters.etcd.aenix.io` while the snapshot target migration 50 needs is missing.
///
/// Source: 1.6 release notes, pre-upgrade check 1;
/// `packages/core/platform/images/migrations/migrations/50` (`resolve_platform_backup_args`).
pub const ETCD_ADOPTION_TARGET: Rule = Rule {
    policy: POLICY,
    id: "etcd-adoption-target",
    level: Level::Deny,
};

/// A legacy EtcdCluster's Certificate migration 50 waits in vain to see re-issued.
///
/// A legacy `etcdclusters.etcd.aenix.io` whose `<name>-server` or `<name>-peer` Certificate lacks the
/// new operator's SAN and is not Ready: migration 50 waits two minutes for cert-manager to re-issue
/// it, then exits 1.
///
/// Source: `packages/core/platform/images/migrations/migrations/50:211-251`
/// (`ensure_wildcard_sans`).
pub const ETCD_ADOPTION_CERTIFICATE: Rule = Rule {
    policy: POLICY,
    id: "etcd-adoption-certificate",
    level: Level::Deny,
};

/// The etcd-operator Deployment migration 50 scales is missing.
///
/// A legacy `etcdclusters.etcd.aenix.io` while Deployment
/// `cozy-etcd-operator/etcd-operator-controller-manager` is missing: migration 50's `kubectl scale`
/// fails under `set -e`.
///
/// Source: `packages/core/platform/images/migrations/migrations/50:20,80-81,727`.
pub const ETCD_ADOPTION_OPERATOR: Rule = Rule {
    policy: POLICY,
    id: "etcd-adoption-operator",
    level: Level::Deny,
};

/// The etcd adoption lookups gave no answer.
///
/// A cluster read failed, so what migration 50 needs (the snapshot target, the Certificates, the
/// etcd-operator Deployment) was not checked.
///
/// Source: cluster lookups.
pub const ETCD_ADOPTION_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "etcd-adoption-not-checked",
    level: Level::NotCheckedFails,
};

/// A SeaweedFS whose volumes make class S or class MIXED.
///
/// A SeaweedFS with release-named volumes (class S) or both naming generations (class MIXED), which
/// the 1.6 chart refuses to render.
///
/// Source: 1.6 release notes, pre-upgrade check 2;
/// `packages/extra/seaweedfs/templates/seaweedfs.yaml`,
/// `packages/system/seaweedfs/templates/naming-guard.yaml`, `_naming.tpl`.
pub const SEAWEEDFS_NAMING: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-naming",
    level: Level::Deny,
};

/// A SeaweedFS whose `<name>-system` release lifts the name pin.
///
/// A SeaweedFS whose `<name>-system` HelmRelease sets `seaweedfs.fullnameOverride` other than
/// `seaweedfs`, which the 1.6 chart refuses to render.
///
/// Source: `packages/system/seaweedfs/templates/naming-guard.yaml` (the pin check), `values.yaml`.
pub const SEAWEEDFS_FULLNAME_OVERRIDE: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-fullname-override",
    level: Level::Deny,
};

/// A stored SeaweedFS whose filer database is gone.
///
/// A stored SeaweedFS (not `Client`) without `Cluster/seaweedfs-db` in its namespace: its filer
/// metadata is lost, and migration 53 cannot recover it.
///
/// Source: `packages/core/platform/images/migrations/migrations/53`, `lib/seaweedfs-db-adopt.sh`.
pub const SEAWEEDFS_DB_DELETED: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-db-deleted",
    level: Level::Deny,
};

/// The SeaweedFS lookups gave no answer.
///
/// A cluster read failed, so the SeaweedFS checks (naming class, name pin, filer database) were not
/// made.
///
/// Source: cluster lookups.
pub const SEAWEEDFS_NAMING_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-naming-not-checked",
    level: Level::NotCheckedFails,
};

/// A tenant whose rendered budget is below what its bounded sub-tenants render.
///
/// A tenant whose rendered `tenant-quota` is below, on any key, the sum its bounded sub-tenants
/// render (`QuotaOvercommitted`), with the chart's ratios and decimal arithmetic.
///
/// Source: 1.6 release notes, hierarchical quotas; cozystack-controller
/// `internal/controller/tenantquota/pool.go` (`Overcommitted`), `reconciler.go` (`snapshot`);
/// `packages/apps/tenant/templates/quota.yaml`, cozy-lib `_resources.tpl`.
pub const TENANT_QUOTA_OVERCOMMITTED: Rule = Rule {
    policy: POLICY,
    id: "tenant-quota-overcommitted",
    level: Level::Deny,
};

/// A tenant declaring more than its parent has left.
///
/// A tenant whose `resourceQuotas` exceed its parent's remaining budget (the root being its own
/// parent), which 1.6's declaration-time gate refuses.
///
/// Source: `pkg/registry/apps/application/quota.go` (`validateTenantResourceQuotas`,
/// `parentPoolUsage`).
pub const TENANT_QUOTA_EXCEEDS_PARENT: Rule = Rule {
    policy: POLICY,
    id: "tenant-quota-exceeds-parent",
    level: Level::Deny,
};

/// A sub-tenant that renders no quota under a bounded ancestor.
///
/// A sub-tenant that renders no `tenant-quota` (no `resourceQuotas`, or only `null`s) under a
/// tenant with a budget, which 1.6 clamps to that budget.
///
/// Source: 1.6 release notes, hierarchical quotas; `internal/controller/tenantquota/pool.go`
/// (`ComputePools`).
pub const TENANT_QUOTA_UNBOUNDED: Rule = Rule {
    policy: POLICY,
    id: "tenant-quota-unbounded",
    level: Level::Setting,
};

/// A tenant whose quotas, or whose parent's, cozystack-api cannot decode.
///
/// A tenant whose `resourceQuotas`, or whose parent's, cozystack-api cannot decode as a map of
/// quantities, so 1.6 refuses every write of it.
///
/// Source: `pkg/registry/apps/application/quota.go` (`parseDeclaredQuotas`,
/// `parentTenantDeclaredQuotas`); k8s.io/apimachinery `Quantity.UnmarshalJSON`.
pub const TENANT_QUOTA_UNDECODABLE: Rule = Rule {
    policy: POLICY,
    id: "tenant-quota-undecodable",
    level: Level::Deny,
};

/// The tenant tree could not be read.
///
/// A cluster read failed, so the tenant quotas were not checked.
///
/// Source: cluster lookups.
pub const TENANT_QUOTA_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "tenant-quota-not-checked",
    level: Level::NotCheckedFails,
};

/// A node-local LINSTOR class that 1.6 propagates into tenant clusters.
///
/// A LINSTOR StorageClass without `drbd` in its `layerList` whose `parameters` lack
/// `allowRemoteVolumeAccess: "false"`.
///
/// Source: 1.6 release notes, pre-upgrade check 4;
/// `packages/apps/kubernetes/templates/helmreleases/csi.yaml`.
pub const LINSTOR_NODE_LOCAL_PROPAGATED: Rule = Rule {
    policy: POLICY,
    id: "linstor-node-local-propagated",
    level: Level::Warn,
};

/// `allowRemoteVolumeAccess` written as an annotation.
///
/// `linstor.csi.linbit.com/allowRemoteVolumeAccess` as an annotation, which 1.6 ignores.
///
/// Source: `packages/apps/kubernetes/templates/helmreleases/csi.yaml` (reads `.parameters`).
pub const LINSTOR_ANNOTATION_IGNORED: Rule = Rule {
    policy: POLICY,
    id: "linstor-annotation-ignored",
    level: Level::Warn,
};

/// Worker remediation turning on at the 1.6 default.
///
/// A Kubernetes cluster without `nodeHealthCheck.maxUnhealthy`, whose workers 1.6 remediates at
/// `50%`.
///
/// Source: 1.6 release notes, Talos workers; `packages/apps/kubernetes/values.schema.json` at
/// v1.5.4 and v1.6.2, v1.5.4 `templates/cluster.yaml`.
pub const WORKER_REMEDIATION: Rule = Rule {
    policy: POLICY,
    id: "worker-remediation",
    level: Level::Warn,
};

/// Node groups without md0, which 1.5 merged in and 1.6 does not.
///
/// A Kubernetes cluster with node groups but no `md0`, which 1.5 merges in and migration 47 pins.
///
/// Source: 1.6 release notes, Talos workers;
/// `packages/core/platform/images/migrations/migrations/47`.
pub const IMPLICIT_MD0: Rule = Rule {
    policy: POLICY,
    id: "implicit-md0",
    level: Level::Warn,
};

/// Worker disks on a class that cannot give them ReadWriteMany.
///
/// A Kubernetes cluster whose worker disks 1.6 puts on a missing StorageClass or a LINSTOR class
/// without DRBD, which stalls the Talos rollover.
///
/// Source: 1.6 release notes, Talos workers; v1.6.2
/// `packages/apps/kubernetes/templates/cluster.yaml` (worker DataVolume `storageClassName`).
pub const WORKER_DISK_CLASS_REFUSED: Rule = Rule {
    policy: POLICY,
    id: "worker-disk-class-refused",
    level: Level::Deny,
};

/// Worker disks on a class the bundle cannot vouch for.
///
/// A Kubernetes cluster whose worker disks 1.6 puts on a class that is not LINSTOR's, whose
/// ReadWriteMany comes from its CDI StorageProfile.
///
/// Source: v1.6.2 `packages/apps/kubernetes/templates/cluster.yaml`.
pub const WORKER_DISK_CLASS_UNVERIFIED: Rule = Rule {
    policy: POLICY,
    id: "worker-disk-class-unverified",
    level: Level::Warn,
};

/// The StorageClasses could not be read.
///
/// A cluster read failed, so the worker disks' StorageClass was not checked.
///
/// Source: cluster lookups.
pub const WORKER_DISK_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "worker-disk-not-checked",
    level: Level::NotCheckedFails,
};

/// Registry mirrors that 1.6's Talos workers no longer receive.
///
/// A Kubernetes cluster while `cozy-system/patch-containerd` exists: 1.6's Talos workers get no
/// registry mirrors.
///
/// Source: 1.6 release notes, Talos workers; v1.5.4
/// `packages/apps/kubernetes/templates/copy-patch-containerd.yaml`.
pub const REGISTRY_MIRRORS: Rule = Rule {
    policy: POLICY,
    id: "registry-mirrors",
    level: Level::Warn,
};

/// The mirrors Secret could not be read.
///
/// A cluster read failed, so the registry mirrors were not checked.
///
/// Source: cluster lookups.
pub const REGISTRY_MIRRORS_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "registry-mirrors-not-checked",
    level: Level::NotCheckedFails,
};

/// The catalogue.
pub const RULES: Catalogue = Catalogue {
    policy: POLICY,
    own: &[
        MIGRATION_VERSION_MISSING,
        MIGRATION_VERSION_NOT_CHECKED,
        ETCD_ADOPTION_TARGET,
        ETCD_ADOPTION_CERTIFICATE,
        ETCD_ADOPTION_OPERATOR,
        ETCD_ADOPTION_NOT_CHECKED,
        SEAWEEDFS_NAMING,
        SEAWEEDFS_FULLNAME_OVERRIDE,
        SEAWEEDFS_DB_DELETED,
        SEAWEEDFS_NAMING_NOT_CHECKED,
        TENANT_QUOTA_OVERCOMMITTED,
        TENANT_QUOTA_EXCEEDS_PARENT,
        TENANT_QUOTA_UNBOUNDED,
        TENANT_QUOTA_UNDECODABLE,
        TENANT_QUOTA_NOT_CHECKED,
        LINSTOR_NODE_LOCAL_PROPAGATED,
        LINSTOR_ANNOTATION_IGNORED,
        WORKER_REMEDIATION,
        IMPLICIT_MD0,
        WORKER_DISK_CLASS_REFUSED,
        WORKER_DISK_CLASS_UNVERIFIED,
        WORKER_DISK_NOT_CHECKED,
        REGISTRY_MIRRORS,
        REGISTRY_MIRRORS_NOT_CHECKED,
    ],
};
