//! Every rule of `upgrade-gate`, as its README's "Rules" table lists them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// A legacy EtcdCluster while migration 50's snapshot target is missing.
pub const ETCD_ADOPTION_TARGET: Rule = Rule {
    policy: POLICY,
    id: "etcd-adoption-target",
    level: Level::Deny,
    summary: "a legacy `etcdclusters.etcd.aenix.io` while the snapshot target migration 50 needs is missing",
    source: "1.6 release notes, pre-upgrade check 1; `packages/core/platform/images/migrations/migrations/50` (`resolve_platform_backup_args`)",
};

/// The etcd adoption lookups gave no answer.
pub const ETCD_ADOPTION_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "etcd-adoption-not-checked",
    level: Level::Warn,
    summary: "a cluster read failed, so the snapshot target was not checked",
    source: "cluster lookups",
};

/// A SeaweedFS whose volumes make class S or class MIXED.
pub const SEAWEEDFS_NAMING: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-naming",
    level: Level::Deny,
    summary: "a SeaweedFS with release-named volumes (class S) or both naming generations (class MIXED), which the 1.6 chart refuses to render",
    source: "1.6 release notes, pre-upgrade check 2; `packages/extra/seaweedfs/templates/seaweedfs.yaml`, `packages/system/seaweedfs/templates/naming-guard.yaml`, `_naming.tpl`",
};

/// The SeaweedFS lookups gave no answer.
pub const SEAWEEDFS_NAMING_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-naming-not-checked",
    level: Level::Warn,
    summary: "a cluster read failed, so the SeaweedFS naming class was not checked",
    source: "cluster lookups",
};

/// A tenant whose budget is below what its bounded sub-tenants declare.
pub const TENANT_QUOTA_OVERCOMMITTED: Rule = Rule {
    policy: POLICY,
    id: "tenant-quota-overcommitted",
    level: Level::Deny,
    summary: "a tenant whose `resourceQuotas` are below the sum of its bounded sub-tenants' (`QuotaOvercommitted`)",
    source: "1.6 release notes, hierarchical quotas; cozystack-controller `internal/controller/tenantquota/pool.go` (`Overcommitted`)",
};

/// A sub-tenant declaring more than its parent has left.
pub const TENANT_QUOTA_EXCEEDS_PARENT: Rule = Rule {
    policy: POLICY,
    id: "tenant-quota-exceeds-parent",
    level: Level::Deny,
    summary: "a sub-tenant whose `resourceQuotas` exceed its parent's remaining budget, which 1.6's declaration-time gate refuses",
    source: "`pkg/registry/apps/application/quota.go` (`validateTenantResourceQuotas`)",
};

/// A sub-tenant without a quota under a bounded ancestor.
pub const TENANT_QUOTA_UNBOUNDED: Rule = Rule {
    policy: POLICY,
    id: "tenant-quota-unbounded",
    level: Level::Setting,
    summary: "a sub-tenant without `resourceQuotas` under a tenant with a budget, which 1.6 clamps to that budget",
    source: "1.6 release notes, hierarchical quotas; `internal/controller/tenantquota/pool.go` (`ComputePools`)",
};

/// The tenant tree could not be read.
pub const TENANT_QUOTA_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "tenant-quota-not-checked",
    level: Level::Warn,
    summary: "a cluster read failed, so the tenant quotas were not checked",
    source: "cluster lookups",
};

/// A node-local LINSTOR class that 1.6 propagates into tenant clusters.
pub const LINSTOR_NODE_LOCAL_PROPAGATED: Rule = Rule {
    policy: POLICY,
    id: "linstor-node-local-propagated",
    level: Level::Warn,
    summary: "a LINSTOR StorageClass without `drbd` in its `layerList` whose `parameters` lack `allowRemoteVolumeAccess: \"false\"`",
    source: "1.6 release notes, pre-upgrade check 4; `packages/apps/kubernetes/templates/helmreleases/csi.yaml`",
};

/// `allowRemoteVolumeAccess` written as an annotation.
pub const LINSTOR_ANNOTATION_IGNORED: Rule = Rule {
    policy: POLICY,
    id: "linstor-annotation-ignored",
    level: Level::Warn,
    summary: "`linstor.csi.linbit.com/allowRemoteVolumeAccess` as an annotation, which 1.6 ignores",
    source: "`packages/apps/kubernetes/templates/helmreleases/csi.yaml` (reads `.parameters`)",
};

/// Worker remediation turning on at the 1.6 default.
pub const WORKER_REMEDIATION: Rule = Rule {
    policy: POLICY,
    id: "worker-remediation",
    level: Level::Warn,
    summary: "a Kubernetes cluster without `nodeHealthCheck.maxUnhealthy`, whose workers 1.6 remediates at `50%`",
    source: "1.6 release notes, Talos workers; `packages/apps/kubernetes/values.schema.json` at v1.5.4 and v1.6.2, v1.5.4 `templates/cluster.yaml`",
};

/// Node groups without md0, which 1.5 merged in and 1.6 does not.
pub const IMPLICIT_MD0: Rule = Rule {
    policy: POLICY,
    id: "implicit-md0",
    level: Level::Warn,
    summary: "a Kubernetes cluster with node groups but no `md0`, which 1.5 merges in and migration 47 pins",
    source: "1.6 release notes, Talos workers; `packages/core/platform/images/migrations/migrations/47`",
};

/// Registry mirrors that 1.6's Talos workers no longer receive.
pub const REGISTRY_MIRRORS: Rule = Rule {
    policy: POLICY,
    id: "registry-mirrors",
    level: Level::Warn,
    summary: "a Kubernetes cluster while `cozy-system/patch-containerd` exists: 1.6's Talos workers get no registry mirrors",
    source: "1.6 release notes, Talos workers; v1.5.4 `packages/apps/kubernetes/templates/copy-patch-containerd.yaml`",
};

/// The mirrors Secret could not be read.
pub const REGISTRY_MIRRORS_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "registry-mirrors-not-checked",
    level: Level::Warn,
    summary: "a cluster read failed, so the registry mirrors were not checked",
    source: "cluster lookups",
};

/// The catalogue.
pub const RULES: Catalogue = Catalogue {
    policy: POLICY,
    own: &[
        ETCD_ADOPTION_TARGET,
        ETCD_ADOPTION_NOT_CHECKED,
        SEAWEEDFS_NAMING,
        SEAWEEDFS_NAMING_NOT_CHECKED,
        TENANT_QUOTA_OVERCOMMITTED,
        TENANT_QUOTA_EXCEEDS_PARENT,
        TENANT_QUOTA_UNBOUNDED,
        TENANT_QUOTA_NOT_CHECKED,
        LINSTOR_NODE_LOCAL_PROPAGATED,
        LINSTOR_ANNOTATION_IGNORED,
        WORKER_REMEDIATION,
        IMPLICIT_MD0,
        REGISTRY_MIRRORS,
        REGISTRY_MIRRORS_NOT_CHECKED,
    ],
};
