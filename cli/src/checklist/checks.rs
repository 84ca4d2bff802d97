//! The checks of the Cozystack 1.6 release notes, in their order, each with
//! the rules that judge it or why the management cluster cannot show it.
//!
//! Source: `cozystack-1.6-release-notes.en.txt` ("Read this before
//! upgrading", "Pre-upgrade checks", "Talos Linux for tenant Kubernetes
//! workers", "Hierarchical tenant resource quotas", "Application deletion
//! now reclaims storage", "Also in v1.6.0", "Upgrading"), and the halts of
//! the migrations the notes do not spell out (cozystack-api down for
//! migrations 46 and 47, migration 50's certificates and operator). A test
//! holds every rule named here to the rules the policies' READMEs document.

/// Objects of a kind a check judges; with a name, that object alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// The API version the snapshot reads it at (`v1`, `apps.cozystack.io/v1alpha1`).
    pub api_version: &'static str,
    pub kind: &'static str,
    /// `(namespace, name)` when the check judges one object (`""` for a
    /// cluster-scoped one).
    pub only: Option<(&'static str, &'static str)>,
    /// What the check needs of each object beyond the rule's reads: a
    /// field the API server sets on every stored object, without which a
    /// rule skips the object ([`Need`]).
    pub needs: Option<Need>,
}

/// A field every stored object has, which a check needs to judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    /// Dotted (`metadata.creationTimestamp`).
    pub field: &'static str,
    /// What the check learns from it.
    pub why: &'static str,
}

/// When an object was stored: the API server sets it on every object, and
/// a rule that judges stored objects only skips one without it (a GitOps
/// copy, a hand-edited snapshot).
const AGE: Need = Need {
    field: "metadata.creationTimestamp",
    why: "whether it is a stored object (its age)",
};

const fn kind(api_version: &'static str, kind: &'static str) -> Target {
    Target {
        api_version,
        kind,
        only: None,
        needs: None,
    }
}

/// The objects of `target` need `need`.
const fn needing(target: Target, need: Need) -> Target {
    Target {
        needs: Some(need),
        ..target
    }
}

const fn named(
    api_version: &'static str,
    kind: &'static str,
    namespace: &'static str,
    name: &'static str,
) -> Target {
    Target {
        api_version,
        kind,
        only: Some((namespace, name)),
        needs: None,
    }
}

/// How a check is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    /// By these rules (`<policy>/<rule>`) over these objects.
    Rules {
        rules: &'static [&'static str],
        targets: &'static [Target],
    },
    /// By hand: why the snapshot cannot show it, and what to do.
    ByHand(&'static str),
    /// By the cluster's migration version, read as the 1.6 platform chart
    /// reads it: a cluster at or past 1.6's has nothing to upgrade to.
    Release,
    /// Every finding of the bundle no other check claims: render and schema
    /// failures, undecodable quotas, specs the rules cannot read.
    Others,
}

/// One check of the release notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// Stable, kebab-case.
    pub id: &'static str,
    pub title: &'static str,
    /// Where the notes say it.
    pub source: &'static str,
    pub judged: Judged,
    /// What to do when it fails.
    pub fix: &'static str,
}

/// A finding the migrations make moot: the object as the snapshot holds it
/// fails a rule that judges it by the v1.6.2 charts, but a migration
/// changes it before those charts render it. The check `check` claims such
/// a finding as a warning, saying why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrated {
    pub check: &'static str,
    /// `<policy>/<rule>`.
    pub rule: &'static str,
    /// The field the migration changes (dotted), and the value it changes.
    pub field: &'static str,
    pub value: &'static str,
    pub why: &'static str,
}

/// Every finding the migrations make moot.
pub const MIGRATED: &[Migrated] = &[Migrated {
    check: "kubernetes-v1-30",
    rule: "chart-render/removed-version",
    field: "spec.version",
    value: "v1.30",
    why: "migration 46 (migrations/46:33-34, 54-55) bumps the live object to v1.31 before the 1.6 chart \
          renders it; bump it in Git too, or the next reconcile brings v1.30 back",
}];

const APPS: &str = "apps.cozystack.io/v1alpha1";
const KUBERNETES: Target = kind(APPS, "Kubernetes");

const COZY_SYSTEM: Target = named("v1", "Namespace", "", "cozy-system");
const VERSION: Target = named("v1", "ConfigMap", "cozy-system", "cozystack-version");

/// Every check, in the notes' order: first whether the cluster is still
/// before the upgrade, last every other finding.
pub const CHECKS: &[Check] = &[
    Check {
        id: "not-yet-upgraded",
        title: "The cluster has not run the 1.6 migrations yet",
        source: "migration-hook.yaml:21-22; values.yaml:17 (targetVersion: 54)",
        judged: Judged::Release,
        fix: "this checklist is for upgrading a 1.5 cluster: a cluster at migration 54 or past it already \
              runs 1.6 (or later); check that you captured the cluster you mean",
    },
    Check {
        id: "target-release",
        title: "Upgrade to v1.6.2, not v1.6.0",
        source: "Read this before upgrading",
        judged: Judged::ByHand(
            "the release you are about to install is not in the cluster: install cozy-installer 1.6.2 \
             (v1.6.0's SeaweedFS audit fails open, its Velero CRDs stay frozen, its backup Strategy \
             objects can be skipped for good)",
        ),
        fix: "",
    },
    Check {
        id: "through-v1-5-4",
        title: "Come from the 1.5 line through v1.5.4 (the KubeadmConfigTemplate keep pin)",
        source: "Read this before upgrading",
        judged: Judged::Rules {
            rules: &[
                "upgrade-readiness/kubeadm-keep-pin",
                "upgrade-readiness/migration-version-below-minimum",
            ],
            targets: &[
                needing(
                    kind(
                        "bootstrap.cluster.x-k8s.io/v1beta1",
                        "KubeadmConfigTemplate",
                    ),
                    Need {
                        field: "metadata.creationTimestamp",
                        why: "whether Helm manages it (its owner): a copy may lack the labels the stored \
                              object has",
                    },
                ),
                VERSION,
            ],
        },
        fix: "upgrade to v1.5.4 first (its migration 45 pins every Helm-managed template), or annotate \
              each template helm.sh/resource-policy=keep",
    },
    Check {
        id: "migrations-run",
        title: "The cozystack-version ConfigMap exists and reads as a migration to run from, so migrations 45-53 run",
        source: "Read this before upgrading; migration-hook.yaml:19-25; run-migrations.sh:39-43",
        judged: Judged::Rules {
            rules: &[
                "upgrade-gate/migration-version-missing",
                "upgrade-gate/migration-version-not-checked",
                "upgrade-readiness/migration-version",
                "upgrade-readiness/migration-version-octal",
                "upgrade-readiness/migration-version-beyond-target",
            ],
            targets: &[COZY_SYSTEM, VERSION],
        },
        fix: "set ConfigMap cozy-system/cozystack-version's data.version to the version the cluster reached (46 \
              on v1.5.4), in decimal without a leading 0, labelled platform.cozystack.io/no-delete=true and \
              annotated helm.sh/resource-policy=keep",
    },
    Check {
        id: "cozystack-api-available",
        title: "cozystack-api is Available, or migrations 46 and 47 take every application for absent",
        source: "migrations 46:67-80, 47:43-56 (\"the server doesn't have a resource type\")",
        judged: Judged::Rules {
            rules: &["upgrade-readiness/cozystack-api-unavailable"],
            // Every APIService: the snapshot judges each group's reads by
            // its own (capabilities::snapshot), the rule cozystack-api's.
            targets: &[kind("apiregistration.k8s.io/v1", "APIService")],
        },
        fix: "bring cozystack-api back (kubectl --namespace cozy-system get pods) until APIService \
              v1alpha1.apps.cozystack.io is Available, then upgrade",
    },
    Check {
        id: "etcd-adoption",
        title: "etcd adoption needs a reachable backup target, Certificates cert-manager re-issues, the etcd-operator",
        source: "Pre-upgrade check 1; migration 50 (resolve_platform_backup_args, ensure_wildcard_sans, :727)",
        judged: Judged::Rules {
            rules: &[
                "upgrade-gate/etcd-adoption-target",
                "upgrade-gate/etcd-adoption-certificate",
                "upgrade-gate/etcd-adoption-operator",
                "upgrade-gate/etcd-adoption-not-checked",
                "upgrade-readiness/etcd-adopt-skip-backup",
            ],
            targets: &[
                kind("etcd.aenix.io/v1alpha1", "EtcdCluster"),
                kind("cert-manager.io/v1", "Certificate"),
                named(
                    "apps/v1",
                    "Deployment",
                    "cozy-etcd-operator",
                    "etcd-operator-controller-manager",
                ),
            ],
        },
        fix: "make the backup storage healthy (Secret cozy-velero/cozy-backups-creds with both AWS keys, \
              its bucket claimed by a live BucketClaim, or the Strategy cozy-default-etcd for external S3), \
              make cert-manager issue each legacy cluster's server and peer Certificates, and keep the \
              etcd-operator Deployment, before upgrading",
    },
    Check {
        id: "etcd-snapshot-upload",
        title: "Migration 50 uploads each adopted cluster's snapshot before adopting it",
        source: "Pre-upgrade check 1; migration 50 (etcd-migrate --apply, :734-739)",
        judged: Judged::ByHand(
            "the snapshot shows the backup target, not whether it accepts writes: with each legacy \
             EtcdCluster, upload a test object to the cozy-backups bucket with the cozy-backups-creds \
             credentials (aws s3 cp --endpoint-url ...); a failed upload exits 1 under set -e",
        ),
        fix: "",
    },
    Check {
        id: "etcd-certificate-reissue",
        title: "cert-manager re-issues each legacy etcd cluster's certificates within two minutes",
        source: "migration 50 (ensure_wildcard_sans, :240-248)",
        judged: Judged::ByHand(
            "a Ready Certificate says cert-manager issues it, not how fast: migration 50 waits 30 x 4 s for \
             the re-issued Secret and exits 1 after; check that cert-manager's pods run and keep up \
             (kubectl --namespace cozy-cert-manager get pods)",
        ),
        fix: "",
    },
    Check {
        id: "etcd-backup-schedules",
        title: "Legacy etcd backup schedules stop at the adoption",
        source: "Pre-upgrade check 1; migration 50 (warn_orphaned_backup_schedules)",
        judged: Judged::Rules {
            rules: &["upgrade-readiness/etcd-backup-orphaned"],
            targets: &[
                kind("etcd.aenix.io/v1alpha1", "EtcdBackupSchedule"),
                kind("etcd.aenix.io/v1alpha1", "EtcdBackup"),
            ],
        },
        fix: "reconfigure each as a backups.cozystack.io BackupClass and Plan (examples/backups/etcd)",
    },
    Check {
        id: "seaweedfs-naming",
        title: "SeaweedFS naming audit: no class S or MIXED",
        source: "Pre-upgrade check 2",
        judged: Judged::Rules {
            rules: &[
                "upgrade-gate/seaweedfs-naming",
                "upgrade-gate/seaweedfs-fullname-override",
                "upgrade-gate/seaweedfs-naming-not-checked",
            ],
            targets: &[kind(APPS, "SeaweedFS")],
        },
        fix: "recover each class S or MIXED tenant first (runbook seaweedfs-431-rename-recovery); remove a \
              seaweedfs.fullnameOverride from the <name>-system HelmRelease",
    },
    Check {
        id: "seaweedfs-db",
        title: "SeaweedFS filer databases migration 53 cannot recover",
        source: "Pre-upgrade check 2; migration 53",
        judged: Judged::Rules {
            rules: &[
                "upgrade-gate/seaweedfs-db-deleted",
                "upgrade-gate/seaweedfs-naming-not-checked",
            ],
            targets: &[needing(kind(APPS, "SeaweedFS"), AGE)],
        },
        fix: "restore the filer metadata of each such tenant from a backup before upgrading \
              (docs/operations/seaweedfs-431-rename-recovery.md)",
    },
    Check {
        id: "kubernetes-v1-30",
        title: "Tenant clusters still on Kubernetes v1.30",
        source: "Pre-upgrade check 3",
        judged: Judged::Rules {
            rules: &["upgrade-readiness/kubernetes-v1-30"],
            targets: &[KUBERNETES],
        },
        fix: "bump spec.version in Git too: migration 46 bumps the live object only",
    },
    Check {
        id: "linstor-remote-access",
        title: "LINSTOR classes that must stay node-local say so in their parameters",
        source: "Pre-upgrade check 4",
        judged: Judged::Rules {
            rules: &[
                "upgrade-gate/linstor-node-local-propagated",
                "upgrade-gate/linstor-annotation-ignored",
            ],
            targets: &[kind("storage.k8s.io/v1", "StorageClass")],
        },
        fix: "recreate each node-local class with parameters \
              linstor.csi.linbit.com/allowRemoteVolumeAccess: \"false\"",
    },
    Check {
        id: "tenant-storage-classes",
        title: "Hand-made tenant StorageClasses that collide with the propagated ones",
        source: "Pre-upgrade check 4",
        judged: Judged::ByHand(
            "they live inside the tenant clusters, which a snapshot of the management cluster does not \
             hold: in each tenant cluster, delete any StorageClass named like a propagated one \
             (typically replicated) that is not Helm-managed",
        ),
        fix: "",
    },
    Check {
        id: "etcd-backup-values",
        title: "Deprecated etcd module backup values",
        source: "Pre-upgrade check 5",
        judged: Judged::Rules {
            rules: &[
                "upgrade-readiness/etcd-backup-enabled",
                "upgrade-readiness/etcd-backup-key-removed",
            ],
            targets: &[kind(APPS, "Etcd")],
        },
        fix: "move to a BackupClass bound to the Etcd strategy, then remove spec.backup",
    },
    Check {
        id: "kubernetes-1-33",
        title: "Coming from v1.4.x: Kubernetes 1.33 or newer on the management cluster and tenant clusters with Flux",
        source: "Pre-upgrade check 6",
        judged: Judged::Rules {
            rules: &[
                "upgrade-readiness/management-kubernetes-version",
                "chart-render/flux-minimum-version",
            ],
            targets: &[kind("v1", "Node"), KUBERNETES],
        },
        fix: "upgrade the management cluster's Kubernetes to 1.33 or newer first, and raise spec.version of \
              each tenant cluster with the Flux addon to v1.33 or newer (or disable the addon)",
    },
    Check {
        id: "worker-remediation",
        title: "Worker MachineHealthCheck remediation turns on at 50%",
        source: "Talos Linux for tenant Kubernetes workers",
        judged: Judged::Rules {
            rules: &["upgrade-gate/worker-remediation"],
            targets: &[KUBERNETES],
        },
        fix: "set spec.nodeHealthCheck.maxUnhealthy: \"0%\" where workers must not be replaced yet",
    },
    Check {
        id: "implicit-md0",
        title: "The default md0 node group is no longer merged in",
        source: "Talos Linux for tenant Kubernetes workers",
        judged: Judged::Rules {
            rules: &["upgrade-gate/implicit-md0"],
            targets: &[KUBERNETES],
        },
        fix: "add md0 to the Git source of each such cluster (migration 47 adds it to the live object)",
    },
    Check {
        id: "zero-workers",
        title: "Fresh clusters with nodeGroups: {} come up with zero workers",
        source: "Talos Linux for tenant Kubernetes workers",
        judged: Judged::Rules {
            rules: &["chart-render/ingress-without-initial-workers"],
            targets: &[KUBERNETES],
        },
        fix: "give a node group with roles [ingress-nginx] minReplicas: 1 or more",
    },
    Check {
        id: "worker-disks",
        title: "Worker disks move to the application's StorageClass, which must give ReadWriteMany",
        source: "Talos Linux for tenant Kubernetes workers",
        judged: Judged::Rules {
            rules: &[
                "upgrade-gate/worker-disk-class-refused",
                "upgrade-gate/worker-disk-class-unverified",
                "upgrade-gate/worker-disk-not-checked",
            ],
            targets: &[KUBERNETES],
        },
        fix: "give each node group (or the application) a replicated, DRBD-backed storageClass",
    },
    Check {
        id: "registry-mirrors",
        title: "Air-gapped installations lose the registries.mirrors passthrough",
        source: "Talos Linux for tenant Kubernetes workers",
        judged: Judged::Rules {
            rules: &[
                "upgrade-gate/registry-mirrors",
                "upgrade-gate/registry-mirrors-not-checked",
            ],
            targets: &[KUBERNETES],
        },
        fix: "point talos.imageFactoryURL and talos.installerRepository at your mirror",
    },
    Check {
        id: "tenant-quotas",
        title: "Review sub-tenant quotas",
        source: "Hierarchical tenant resource quotas",
        judged: Judged::Rules {
            rules: &[
                "upgrade-gate/tenant-quota-overcommitted",
                "upgrade-gate/tenant-quota-exceeds-parent",
                "upgrade-gate/tenant-quota-unbounded",
                "upgrade-gate/tenant-quota-not-checked",
            ],
            targets: &[kind(APPS, "Tenant")],
        },
        fix: "lower sub-tenant quotas or raise their parents'; give unbounded sub-tenants their own",
    },
    Check {
        id: "deletion-reclaims-storage",
        title: "Deleting an application now reclaims its storage",
        source: "Application deletion now reclaims storage",
        judged: Judged::ByHand(
            "a change of what deleting does, not a state of the cluster: back up before deleting, and \
             tell your tenants (harbor-retention asks for a confirmation before a Harbor is deleted)",
        ),
        fix: "",
    },
    Check {
        id: "installer-pins",
        title: "The installer pins on cozy-system and cozystack-version",
        source: "Upgrading",
        judged: Judged::Rules {
            rules: &["upgrade-readiness/installer-keep-pin"],
            targets: &[COZY_SYSTEM, VERSION],
        },
        fix: "kubectl annotate namespace cozy-system helm.sh/resource-policy=keep --overwrite, and the \
              same for configmap -n cozy-system cozystack-version",
    },
    Check {
        id: "metrics-port-10250",
        title: "After upgrading: re-check metrics scrape targets on port 10250",
        source: "Also in v1.6.0",
        judged: Judged::ByHand(
            "it is about the upgraded cluster: cert-manager's webhook, external-secrets' webhook and \
             metrics-server moved off port 10250",
        ),
        fix: "",
    },
    Check {
        id: "other-findings",
        title: "Every other finding of the bundle in the snapshot",
        source: "the bundle's rules",
        judged: Judged::Others,
        fix: "each finding says what to change; a render or schema failure blocks that application's \
              upgrade, an undecodable quota every write of its tenant",
    },
];
