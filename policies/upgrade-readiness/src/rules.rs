//! Every rule of `upgrade-readiness`, as its README's "Rules" table lists
//! them.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// A Helm-managed KubeadmConfigTemplate without the keep pin.
///
/// A Helm-managed KubeadmConfigTemplate without `helm.sh/resource-policy: keep`.
///
/// Source: 1.6 release notes; v1.5.4 `packages/apps/kubernetes/templates/cluster.yaml`, migration
/// 45.
pub const KUBEADM_KEEP_PIN: Rule = Rule {
    policy: POLICY,
    id: "kubeadm-keep-pin",
    level: Level::Deny,
};

/// The installer's namespace or version ConfigMap without the keep pin.
///
/// Namespace `cozy-system` or ConfigMap `cozystack-version` without `helm.sh/resource-policy:
/// keep`.
///
/// Source: 1.6 release notes; `packages/core/platform/templates/cozystack-version.yaml`.
pub const INSTALLER_KEEP_PIN: Rule = Rule {
    policy: POLICY,
    id: "installer-keep-pin",
    level: Level::Deny,
};

/// `cozystack-version` with a migration version the 1.6 upgrade halts on.
///
/// `cozystack-version` whose `data.version` is missing, not a number to Sprig's `int`, or below 1:
/// the migration hook reads it as a migration the image lacks, and the upgrade halts.
///
/// Source: `packages/core/platform/templates/migration-hook.yaml:21`,
/// `images/migrations/run-migrations.sh:39-43`.
pub const MIGRATION_VERSION: Rule = Rule {
    policy: POLICY,
    id: "migration-version",
    level: Level::Deny,
};

/// A migration version with a leading 0, which the platform reads as octal.
///
/// `cozystack-version` whose `data.version` starts with 0: Sprig's `int` reads it as octal (`"046"`
/// is 38), and the upgrade runs migrations the cluster already ran.
///
/// Source: `packages/core/platform/templates/migration-hook.yaml:21` (`| int`: spf13/cast,
/// `strconv.ParseInt(s, 0, 0)`).
pub const MIGRATION_VERSION_OCTAL: Rule = Rule {
    policy: POLICY,
    id: "migration-version-octal",
    level: Level::Deny,
};

/// A migration version past the newest any release stamps.
///
/// `cozystack-version` whose `data.version` reads past 54: no release wrote it, and the 1.6 chart
/// renders no migration hook.
///
/// Source: `packages/core/platform/templates/migration-hook.yaml:22` (`lt $currentVersion
/// $targetVersion`), `values.yaml:17` (`targetVersion: 54`).
pub const MIGRATION_VERSION_BEYOND_TARGET: Rule = Rule {
    policy: POLICY,
    id: "migration-version-beyond-target",
    level: Level::Deny,
};

/// A migration version below the one the 1.6 upgrade starts from.
///
/// `cozystack-version` whose `data.version` is below `minimumVersion`.
///
/// Source: 1.6 release notes; `migrations.targetVersion` in `packages/core/platform/values.yaml`.
pub const MIGRATION_VERSION_BELOW_MINIMUM: Rule = Rule {
    policy: POLICY,
    id: "migration-version-below-minimum",
    level: Level::Warn,
};

/// Etcd backups turned on, which 1.6 removes.
///
/// An Etcd with `spec.backup.enabled: true`.
///
/// Source: `packages/extra/etcd/values.schema.json` at v1.5.4 and v1.6.2.
pub const ETCD_BACKUP_ENABLED: Rule = Rule {
    policy: POLICY,
    id: "etcd-backup-enabled",
    level: Level::Deny,
};

/// Another Etcd backup key off its default.
///
/// An Etcd `spec.backup` key off its v1.5.4 default, which 1.6 ignores.
///
/// Source: `packages/extra/etcd/values.schema.json` at v1.5.4 and v1.6.2.
pub const ETCD_BACKUP_KEY_REMOVED: Rule = Rule {
    policy: POLICY,
    id: "etcd-backup-key-removed",
    level: Level::Warn,
};

/// The migration escape hatch that adopts etcd without a snapshot.
///
/// Package `cozystack.cozystack-platform` with `migrations.etcdAdoptSkipBackup` set.
///
/// Source: `packages/core/platform/templates/migration-hook.yaml`, migration 50.
pub const ETCD_ADOPT_SKIP_BACKUP: Rule = Rule {
    policy: POLICY,
    id: "etcd-adopt-skip-backup",
    level: Level::Deny,
};

/// Legacy etcd backup resources migration 50 does not migrate.
///
/// An `etcdbackupschedules.etcd.aenix.io` or `etcdbackups.etcd.aenix.io`, whose backups stop after
/// the 1.6 etcd adoption.
///
/// Source: `packages/core/platform/images/migrations/migrations/50`
/// (`warn_orphaned_backup_schedules`).
pub const ETCD_BACKUP_ORPHANED: Rule = Rule {
    policy: POLICY,
    id: "etcd-backup-orphaned",
    level: Level::Warn,
};

/// A management node below Kubernetes 1.33.
///
/// A Node whose kubelet is below Kubernetes 1.33, which Cozystack needs on the management cluster
/// since 1.5.0.
///
/// Source: 1.6 release notes, pre-upgrade check 6.
pub const MANAGEMENT_KUBERNETES_VERSION: Rule = Rule {
    policy: POLICY,
    id: "management-kubernetes-version",
    level: Level::Deny,
};

/// Kubernetes v1.30, which 1.6 removes.
///
/// A Kubernetes application at `spec.version: v1.30`, under a v1.5 release (`cozystackVersion`).
///
/// Source: `packages/apps/kubernetes/values.schema.json`, migration 46.
pub const KUBERNETES_V1_30: Rule = Rule {
    policy: POLICY,
    id: "kubernetes-v1-30",
    level: Level::Warn,
};

/// cozystack-api not Available, which migrations 46 and 47 take for absent applications.
///
/// APIService `v1alpha1.apps.cozystack.io` without `Available: True`: kubectl then says "the server
/// doesn't have a resource type", which migrations 46 and 47 take for a cluster without Kubernetes
/// applications, so md0 is not pinned and Helm prunes it.
///
/// Source: `packages/core/platform/images/migrations/migrations/46:67-80`, `47:43-56`;
/// `packages/system/cozystack-api/templates/apiservice.yaml`.
pub const COZYSTACK_API_UNAVAILABLE: Rule = Rule {
    policy: POLICY,
    id: "cozystack-api-unavailable",
    level: Level::Deny,
};

/// The cluster's release is unknown or unread.
///
/// With `cozystackVersion: cluster`, the release the cluster runs could not be read, or the bundle
/// does not know it, so whether v1.30 is before the 1.6 upgrade was not checked (a denial, as
/// audit-scanner records it: the policy runs in monitor mode).
///
/// Source: Deployment `cozy-system/cozystack-operator`
/// (`packages/core/installer/templates/cozystack-operator.yaml`, `pkg/version/version.go`).
pub const RELEASE_NOT_CHECKED: Rule = Rule::release_not_checked(POLICY, Level::NotCheckedFails);

/// The catalogue.
pub const RULES: Catalogue = Catalogue {
    policy: POLICY,
    own: &[
        KUBEADM_KEEP_PIN,
        INSTALLER_KEEP_PIN,
        MIGRATION_VERSION,
        MIGRATION_VERSION_OCTAL,
        MIGRATION_VERSION_BEYOND_TARGET,
        MIGRATION_VERSION_BELOW_MINIMUM,
        ETCD_BACKUP_ENABLED,
        ETCD_BACKUP_KEY_REMOVED,
        ETCD_ADOPT_SKIP_BACKUP,
        ETCD_BACKUP_ORPHANED,
        KUBERNETES_V1_30,
        MANAGEMENT_KUBERNETES_VERSION,
        COZYSTACK_API_UNAVAILABLE,
        RELEASE_NOT_CHECKED,
    ],
};
