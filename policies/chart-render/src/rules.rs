//! Every rule of `chart-render`, as its README's "Rules" table lists them.
//! Paths are under `packages/` of Cozystack v1.6.2.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// `removed-version`.
///
/// Kubernetes or KubernetesNodes `spec.version` this or an earlier release removed (below v1.31).
///
/// Source: `apps/kubernetes/templates/_versions.tpl`,
/// `apps/kubernetes-nodes/templates/_versions.tpl`.
pub const REMOVED_VERSION: Rule = Rule {
    policy: POLICY,
    id: "removed-version",
    level: Level::Deny,
};

/// `version-downgrade`.
///
/// UPDATE of Kubernetes `spec.version` to a lower minor.
///
/// Source: Kubernetes version skew policy; goes further than the chart.
pub const VERSION_DOWNGRADE: Rule = Rule {
    policy: POLICY,
    id: "version-downgrade",
    level: Level::Warn,
};

/// `addon-requires-addon`.
///
/// An addon enabled without the addon it requires (hami without gpuOperator, ouroboros without
/// ingressNginx).
///
/// Source: `apps/kubernetes/templates/helmreleases/hami.yaml`, `helmreleases/ouroboros.yaml`.
pub const ADDON_REQUIRES_ADDON: Rule = Rule {
    policy: POLICY,
    id: "addon-requires-addon",
    level: Level::Deny,
};

/// `ouroboros-gateway-api`.
///
/// Ouroboros' `gatewayApi.enabled` truthy while `addons.gatewayAPI.enabled` is not.
///
/// Source: `apps/kubernetes/templates/helmreleases/ouroboros.yaml`.
pub const OUROBOROS_GATEWAY_API: Rule = Rule {
    policy: POLICY,
    id: "ouroboros-gateway-api",
    level: Level::Deny,
};

/// `flux-minimum-version`.
///
/// The Flux addon on Kubernetes below v1.33.
///
/// Source: release notes v1.5.0 and v1.6 (Flux v2.8, helm-controller v1.5).
pub const FLUX_MINIMUM_VERSION: Rule = Rule {
    policy: POLICY,
    id: "flux-minimum-version",
    level: Level::Setting,
};

/// `addons-without-workers`.
///
/// Addons with workloads while every node group has `maxReplicas: 0`.
///
/// Source: `apps/kubernetes/templates/cluster.yaml`, release notes v1.6.
pub const ADDONS_WITHOUT_WORKERS: Rule = Rule {
    policy: POLICY,
    id: "addons-without-workers",
    level: Level::Setting,
};

/// `ingress-without-role`.
///
/// Ingress-nginx enabled while no node group with `maxReplicas >= 1` has its role.
///
/// Source: `apps/kubernetes/templates/helmreleases/ingress-nginx.yaml` (`nodeSelector`).
pub const INGRESS_WITHOUT_ROLE: Rule = Rule {
    policy: POLICY,
    id: "ingress-without-role",
    level: Level::Setting,
};

/// `ingress-without-initial-workers`.
///
/// Ingress-nginx enabled and every group with its role has `minReplicas: 0`.
///
/// Source: `apps/kubernetes/templates/_helpers.tpl` (`kubernetes.nodeGroups`, implicit md0).
pub const INGRESS_WITHOUT_INITIAL_WORKERS: Rule = Rule {
    policy: POLICY,
    id: "ingress-without-initial-workers",
    level: Level::Warn,
};

/// `ephemeral-storage`.
///
/// A node group with `ephemeralStorage`.
///
/// Source: `apps/kubernetes/templates/cluster.yaml`.
pub const EPHEMERAL_STORAGE: Rule = Rule {
    policy: POLICY,
    id: "ephemeral-storage",
    level: Level::Deny,
};

/// `node-group-resources`.
///
/// A node group with one of `resources.cpu`, `resources.memory`.
///
/// Source: `apps/kubernetes/templates/cluster.yaml`.
pub const NODE_GROUP_RESOURCES: Rule = Rule {
    policy: POLICY,
    id: "node-group-resources",
    level: Level::Deny,
};

/// `max-unhealthy`.
///
/// `maxUnhealthy` that is not a bare integer or integer percentage.
///
/// Source: `apps/kubernetes/templates/cluster.yaml`.
pub const MAX_UNHEALTHY: Rule = Rule {
    policy: POLICY,
    id: "max-unhealthy",
    level: Level::Deny,
};

/// `duration-format`.
///
/// `maxNodeProvisionTime`, `readyUnknownTimeout` or `readyFalseTimeout` that is not a whole number
/// of s, m or h (v1.7.0-rc.3c780acd).
///
/// Source: `apps/kubernetes/templates/_helpers.tpl` (`kubernetes.positiveDuration`), its callers in
/// `apps/kubernetes/templates/cluster.yaml` and `apps/kubernetes-nodes/templates/nodegroup.yaml`.
pub const DURATION_FORMAT: Rule = Rule {
    policy: POLICY,
    id: "duration-format",
    level: Level::Deny,
};

/// `computeplane-without-ingress`.
///
/// A ComputePlane with node groups, none of which has role ingress-nginx and `maxReplicas >= 1`
/// (v1.7.0-rc.3c780acd).
///
/// Source: `extra/computeplane/templates/cluster.yaml`.
pub const COMPUTEPLANE_WITHOUT_INGRESS: Rule = Rule {
    policy: POLICY,
    id: "computeplane-without-ingress",
    level: Level::Deny,
};

/// `pod-cpu`.
///
/// A node group's `podCpuLimit` or `podCpuRequest` on a group its instance type sizes, negative, a
/// zero limit without a request, a zero request beside a non-zero limit, or a request above the
/// limit (v1.7.0-rc.3c780acd).
///
/// Source: `apps/kubernetes/templates/cluster.yaml`, `apps/kubernetes-nodes/templates/nodegroup.yaml`.
pub const POD_CPU: Rule = Rule {
    policy: POLICY,
    id: "pod-cpu",
    level: Level::Deny,
};

/// `extra-volumes`.
///
/// Apiserver `extraVolumes`: empty, reserved or duplicate names, not exactly one source, a source
/// other than configMap/secret.
///
/// Source: `apps/kubernetes/templates/cluster.yaml`.
pub const EXTRA_VOLUMES: Rule = Rule {
    policy: POLICY,
    id: "extra-volumes",
    level: Level::Deny,
};

/// `extra-volume-mounts`.
///
/// Apiserver `extraVolumeMounts` with an empty name or naming no volume.
///
/// Source: `apps/kubernetes/templates/cluster.yaml`.
pub const EXTRA_VOLUME_MOUNTS: Rule = Rule {
    policy: POLICY,
    id: "extra-volume-mounts",
    level: Level::Deny,
};

/// `nodes-cluster`.
///
/// KubernetesNodes without `spec.cluster`.
///
/// Source: `apps/kubernetes-nodes/templates/_helpers.tpl`.
pub const NODES_CLUSTER: Rule = Rule {
    policy: POLICY,
    id: "nodes-cluster",
    level: Level::Deny,
};

/// `nodes-name`.
///
/// KubernetesNodes whose name is not `<cluster>-<pool>`.
///
/// Source: `apps/kubernetes-nodes/templates/_helpers.tpl`.
pub const NODES_NAME: Rule = Rule {
    policy: POLICY,
    id: "nodes-name",
    level: Level::Deny,
};

/// `fixed-name`.
///
/// Etcd, Monitoring, Ingress or BootBox under another name than the chart fixes.
///
/// Source: `extra/{etcd,monitoring,ingress,bootbox}/templates/check-release-name.yaml`.
pub const FIXED_NAME: Rule = Rule {
    policy: POLICY,
    id: "fixed-name",
    level: Level::Deny,
};

/// `fixed-namespace`.
///
/// BootBox outside `tenant-root`.
///
/// Source: `extra/bootbox/templates/check-release-name.yaml`.
pub const FIXED_NAMESPACE: Rule = Rule {
    policy: POLICY,
    id: "fixed-namespace",
    level: Level::Deny,
};

/// `tenant-namespace`.
///
/// A Tenant in a namespace that does not start with `tenant-`.
///
/// Source: `apps/tenant/templates/_helpers.tpl`.
pub const TENANT_NAMESPACE: Rule = Rule {
    policy: POLICY,
    id: "tenant-namespace",
    level: Level::Deny,
};

/// `clickhouse-path-override`.
///
/// ClickHouse `backup.s3PathOverride` with `backup.useSystemBucket`.
///
/// Source: `apps/clickhouse/templates/clickhouse.yaml`.
pub const CLICKHOUSE_PATH_OVERRIDE: Rule = Rule {
    policy: POLICY,
    id: "clickhouse-path-override",
    level: Level::Deny,
};

/// `postgres-user`.
///
/// Postgres `users.postgres`.
///
/// Source: `apps/postgres/templates/init-script.yaml`.
pub const POSTGRES_USER: Rule = Rule {
    policy: POLICY,
    id: "postgres-user",
    level: Level::Deny,
};

/// `postgres-parameter`.
///
/// A blocked Postgres parameter (`archive_command`, `shared_preload_libraries`...).
///
/// Source: `apps/postgres/templates/db.yaml`.
pub const POSTGRES_PARAMETER: Rule = Rule {
    policy: POLICY,
    id: "postgres-parameter",
    level: Level::Deny,
};

/// `postgres-bootstrap`.
///
/// Postgres `bootstrap.enabled` with the system bucket or without S3 credentials.
///
/// Source: `apps/postgres/templates/db.yaml`.
pub const POSTGRES_BOOTSTRAP: Rule = Rule {
    policy: POLICY,
    id: "postgres-bootstrap",
    level: Level::Deny,
};

/// `opensearch-roles`.
///
/// OpenSearch with every node role off.
///
/// Source: `apps/opensearch/templates/opensearch.yaml`.
pub const OPENSEARCH_ROLES: Rule = Rule {
    policy: POLICY,
    id: "opensearch-roles",
    level: Level::Deny,
};

/// `vm-disk-source`.
///
/// VMDisk with more than one source.
///
/// Source: `apps/vm-disk/templates/dv.yaml`.
pub const VM_DISK_SOURCE: Rule = Rule {
    policy: POLICY,
    id: "vm-disk-source",
    level: Level::Deny,
};

/// `ingress-proxy-protocol`.
///
/// Ingress `proxyProtocol` with `cloudflareProxy`.
///
/// Source: `extra/ingress/templates/nginx-ingress.yaml`.
pub const INGRESS_PROXY_PROTOCOL: Rule = Rule {
    policy: POLICY,
    id: "ingress-proxy-protocol",
    level: Level::Deny,
};

/// `external-dns-provider`.
///
/// ExternalDNS without `provider`.
///
/// Source: `extra/external-dns/templates/external-dns.yaml`.
pub const EXTERNAL_DNS_PROVIDER: Rule = Rule {
    policy: POLICY,
    id: "external-dns-provider",
    level: Level::Deny,
};

/// `external-without-tls`.
///
/// Kafka, NATS or Qdrant exposed (`external: true`) with `tls.enabled: false`.
///
/// Source: `apps/kafka/templates/_tls.tpl`, `apps/nats/templates/_tls.tpl`,
/// `apps/qdrant/templates/_helpers.tpl`.
pub const EXTERNAL_WITHOUT_TLS: Rule = Rule {
    policy: POLICY,
    id: "external-without-tls",
    level: Level::Setting,
};

/// `object-name`.
///
/// A map key the chart names an object after (users, databases, vhosts, node groups, zones) that
/// makes an invalid object name.
///
/// Source: `apps/bucket/templates/bucketclaim.yaml`, `apps/opensearch/templates/users.yaml`,
/// `apps/mongodb/templates/user-secrets.yaml`, `apps/rabbitmq/templates/rabbitmq.yaml`,
/// `apps/mariadb/templates/user.yaml`, `apps/mariadb/templates/db.yaml`,
/// `apps/kubernetes/templates/cluster.yaml`, `extra/seaweedfs/templates/seaweedfs.yaml`;
/// kube-apiserver's `ValidateObjectMeta`.
pub const OBJECT_NAME: Rule = Rule {
    policy: POLICY,
    id: "object-name",
    level: Level::Deny,
};

/// `label-value`.
///
/// Tenant `host` or `schedulingClass`, VirtualPrivateCloud subnet `name`, that is not a valid label
/// value.
///
/// Source: `apps/tenant/templates/namespace.yaml`, `apps/vpc/templates/vpc.yaml`; kube-apiserver's
/// `ValidateObjectMeta`.
pub const LABEL_VALUE: Rule = Rule {
    policy: POLICY,
    id: "label-value",
    level: Level::Deny,
};

/// `flat-resources`.
///
/// A `resources` map with nested `requests` or `limits`, which cozy-lib refuses.
///
/// Source: `library/cozy-lib/templates/_resources.tpl` (`resources.sanitize`), as each chart
/// vendors it.
pub const FLAT_RESOURCES: Rule = Rule {
    policy: POLICY,
    id: "flat-resources",
    level: Level::Deny,
};

/// `database-roles`.
///
/// A MariaDB, Postgres or MongoDB database without `roles`.
///
/// Source: `apps/mariadb/templates/db.yaml`, `apps/postgres/templates/init-script.yaml`,
/// `apps/mongodb/templates/mongodb.yaml`.
pub const DATABASE_ROLES: Rule = Rule {
    policy: POLICY,
    id: "database-roles",
    level: Level::Deny,
};

/// `mongodb-user-role`.
///
/// A MongoDB user no database grants a role.
///
/// Source: `apps/mongodb/templates/mongodb.yaml`.
pub const MONGODB_USER_ROLE: Rule = Rule {
    policy: POLICY,
    id: "mongodb-user-role",
    level: Level::Deny,
};

/// `backup-credentials`.
///
/// An emptied S3 setting of a ClickHouse, MariaDB or MongoDB backup the chart renders.
///
/// Source: `apps/clickhouse/templates/backup-secret.yaml`, `backup-strategy-secret.yaml`,
/// `backup-cronjob.yaml`, `apps/mariadb/templates/backup-secret.yaml`, `backup-cronjob.yaml`,
/// `apps/mongodb/templates/backup-secret.yaml`.
pub const BACKUP_CREDENTIALS: Rule = Rule {
    policy: POLICY,
    id: "backup-credentials",
    level: Level::Deny,
};

/// `mongodb-bootstrap`.
///
/// MongoDB `bootstrap.enabled` without `backupName`, `backup.destinationPath` or
/// `backup.endpointURL`.
///
/// Source: `apps/mongodb/templates/restore.yaml`.
pub const MONGODB_BOOTSTRAP: Rule = Rule {
    policy: POLICY,
    id: "mongodb-bootstrap",
    level: Level::Deny,
};

/// `kubelet-reservations`.
///
/// Node-group kubelet reservations the template refuses: formats, signs, eviction thresholds, more
/// reserved than the node has.
///
/// Source: `apps/kubernetes/templates/cluster.yaml`,
/// `apps/kubernetes-nodes/templates/nodegroup.yaml`.
pub const KUBELET_RESERVATIONS: Rule = Rule {
    policy: POLICY,
    id: "kubelet-reservations",
    level: Level::Deny,
};

/// `seaweedfs-topology`.
///
/// SeaweedFS topology needs: Client without `filer.grpcHost`, MultiZone without enough zones,
/// `replicationFactor` below 1, pools outside Simple.
///
/// Source: `extra/seaweedfs/templates/seaweedfs.yaml`.
pub const SEAWEEDFS_TOPOLOGY: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-topology",
    level: Level::Deny,
};

/// `seaweedfs-pool`.
///
/// SeaweedFS storage pools and disk types: names, reserved suffixes, disk types, collisions.
///
/// Source: `extra/seaweedfs/templates/seaweedfs.yaml`.
pub const SEAWEEDFS_POOL: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-pool",
    level: Level::Deny,
};

/// `vm-disk-source-entry`.
///
/// VMDisk source with an empty `image.name`, `http.url` or `disk.name`.
///
/// Source: `apps/vm-disk/templates/dv.yaml`.
pub const VM_DISK_SOURCE_ENTRY: Rule = Rule {
    policy: POLICY,
    id: "vm-disk-source-entry",
    level: Level::Deny,
};

/// `vm-instance-size`.
///
/// VMInstance with an empty `instanceType` and not all of `resources.cpu`, `sockets`, `memory`.
///
/// Source: `apps/vm-instance/templates/vm.yaml`.
pub const VM_INSTANCE_SIZE: Rule = Rule {
    policy: POLICY,
    id: "vm-instance-size",
    level: Level::Deny,
};

/// `etcd-size`.
///
/// Etcd `size` written as a number.
///
/// Source: `extra/etcd/templates/etcd-cluster.yaml`.
pub const ETCD_SIZE: Rule = Rule {
    policy: POLICY,
    id: "etcd-size",
    level: Level::Deny,
};

/// `openbao-size`.
///
/// OpenBAO `size` without a unit, which the `system` release's chart refuses.
///
/// Source: `apps/openbao/templates/openbao.yaml`.
pub const OPENBAO_SIZE: Rule = Rule {
    policy: POLICY,
    id: "openbao-size",
    level: Level::Deny,
};

/// `instance-type-not-shipped`.
///
/// An `instanceType` or `instanceProfile` the platform does not install, which the chart looks up
/// in the cluster.
///
/// Source: `apps/vm-instance/templates/vm.yaml`, `apps/kubernetes/templates/cluster.yaml`,
/// `apps/kubernetes-nodes/templates/nodegroup.yaml`.
pub const INSTANCE_TYPE_NOT_SHIPPED: Rule = Rule {
    policy: POLICY,
    id: "instance-type-not-shipped",
    level: Level::Warn,
};

/// `vm-disk-reference`.
///
/// A VMInstance disk whose `name` no VMDisk can have, so the chart's lookup always fails.
///
/// Source: `apps/vm-instance/templates/vm.yaml`.
pub const VM_DISK_REFERENCE: Rule = Rule {
    policy: POLICY,
    id: "vm-disk-reference",
    level: Level::Deny,
};

/// `instance-type-name`.
///
/// An `instanceType` or `instanceProfile` no cluster object can be named, so the chart's lookup
/// always fails.
///
/// Source: `apps/vm-instance/templates/vm.yaml`, `apps/kubernetes/templates/cluster.yaml`,
/// `apps/kubernetes-nodes/templates/nodegroup.yaml`; kube-apiserver's `ValidateObjectMeta`.
pub const INSTANCE_TYPE_NAME: Rule = Rule {
    policy: POLICY,
    id: "instance-type-name",
    level: Level::Deny,
};

/// `vm-disk-unverified`.
///
/// A VMInstance disk the chart looks up in the cluster, which this policy does not read.
///
/// Source: `apps/vm-instance/templates/vm.yaml`.
pub const VM_DISK_UNVERIFIED: Rule = Rule {
    policy: POLICY,
    id: "vm-disk-unverified",
    level: Level::Warn,
};

/// `external-needs-host`.
///
/// NATS `external` with TLS, which fails in a tenant without a host (a tenant value this policy
/// does not read).
///
/// Source: `apps/nats/templates/certmanager.yaml`.
pub const EXTERNAL_NEEDS_HOST: Rule = Rule {
    policy: POLICY,
    id: "external-needs-host",
    level: Level::Warn,
};

/// `nodes-md0`.
///
/// A KubernetesNodes pool `md0`, which collides with the implicit md0 of a parent without node
/// groups.
///
/// Source: `apps/kubernetes-nodes/templates/_helpers.tpl` (`assertNoForeignPool`),
/// `apps/kubernetes/templates/_helpers.tpl` (implicit md0).
pub const NODES_MD0: Rule = Rule {
    policy: POLICY,
    id: "nodes-md0",
    level: Level::Warn,
};

/// `host-ingress-proxy-protocol`.
///
/// Per-app `proxyProtocol` on the Ingress of `tenant-root`, the platform's default host ingress.
///
/// Source: `extra/ingress/templates/nginx-ingress.yaml`; `core/platform/values.yaml`
/// (`publishing.ingressName`).
pub const HOST_INGRESS_PROXY_PROTOCOL: Rule = Rule {
    policy: POLICY,
    id: "host-ingress-proxy-protocol",
    level: Level::Warn,
};

/// `seaweedfs-topology-change`.
///
/// UPDATE of SeaweedFS `spec.topology`, which the chart refuses after the first deployment.
///
/// Source: `extra/seaweedfs/templates/seaweedfs.yaml` (79–93), `templates/cm.yaml`.
pub const SEAWEEDFS_TOPOLOGY_CHANGE: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-topology-change",
    level: Level::Deny,
};

/// `vm-disk-kept`.
///
/// UPDATE of a VMDisk's `source` or `storage`, which the chart keeps from the existing DataVolume.
///
/// Source: `apps/vm-disk/templates/dv.yaml` (1, 14–15).
pub const VM_DISK_KEPT: Rule = Rule {
    policy: POLICY,
    id: "vm-disk-kept",
    level: Level::Warn,
};

/// `volume-claim-template`.
///
/// UPDATE of a size or storage class the chart writes into a StatefulSet's volumeClaimTemplates,
/// which the upgrade cannot change.
///
/// Source: `system/{harbor,nats,openbao,qdrant}` StatefulSets,
/// `extra/seaweedfs/templates/seaweedfs.yaml` (246–310); kube-apiserver
/// `ValidateStatefulSetUpdate`.
pub const VOLUME_CLAIM_TEMPLATE: Rule = Rule {
    policy: POLICY,
    id: "volume-claim-template",
    level: Level::Deny,
};

/// The cluster's release is unknown or unread.
///
/// With `cozystackVersion: cluster`, the cluster runs a Cozystack release the bundle does not know,
/// so no template of it was checked; or its release could not be read, so the default release's
/// templates judged the object.
///
/// Source: Deployment `cozy-system/cozystack-operator`
/// (`packages/core/installer/templates/cozystack-operator.yaml`, `pkg/version/version.go`).
pub const RELEASE_NOT_CHECKED: Rule = Rule::release_not_checked(POLICY, Level::NotCheckedWarns);

/// The catalogue.
pub const RULES: Catalogue = Catalogue {
    policy: POLICY,
    own: &[
        REMOVED_VERSION,
        VERSION_DOWNGRADE,
        ADDON_REQUIRES_ADDON,
        OUROBOROS_GATEWAY_API,
        FLUX_MINIMUM_VERSION,
        ADDONS_WITHOUT_WORKERS,
        INGRESS_WITHOUT_ROLE,
        INGRESS_WITHOUT_INITIAL_WORKERS,
        EPHEMERAL_STORAGE,
        NODE_GROUP_RESOURCES,
        MAX_UNHEALTHY,
        DURATION_FORMAT,
        POD_CPU,
        COMPUTEPLANE_WITHOUT_INGRESS,
        EXTRA_VOLUMES,
        EXTRA_VOLUME_MOUNTS,
        NODES_CLUSTER,
        NODES_NAME,
        FIXED_NAME,
        FIXED_NAMESPACE,
        TENANT_NAMESPACE,
        CLICKHOUSE_PATH_OVERRIDE,
        POSTGRES_USER,
        POSTGRES_PARAMETER,
        POSTGRES_BOOTSTRAP,
        OPENSEARCH_ROLES,
        VM_DISK_SOURCE,
        INGRESS_PROXY_PROTOCOL,
        EXTERNAL_DNS_PROVIDER,
        EXTERNAL_WITHOUT_TLS,
        OBJECT_NAME,
        LABEL_VALUE,
        FLAT_RESOURCES,
        DATABASE_ROLES,
        MONGODB_USER_ROLE,
        BACKUP_CREDENTIALS,
        MONGODB_BOOTSTRAP,
        KUBELET_RESERVATIONS,
        SEAWEEDFS_TOPOLOGY,
        SEAWEEDFS_POOL,
        VM_DISK_SOURCE_ENTRY,
        VM_INSTANCE_SIZE,
        ETCD_SIZE,
        OPENBAO_SIZE,
        INSTANCE_TYPE_NOT_SHIPPED,
        VM_DISK_REFERENCE,
        INSTANCE_TYPE_NAME,
        VM_DISK_UNVERIFIED,
        EXTERNAL_NEEDS_HOST,
        NODES_MD0,
        HOST_INGRESS_PROXY_PROTOCOL,
        SEAWEEDFS_TOPOLOGY_CHANGE,
        VM_DISK_KEPT,
        VOLUME_CLAIM_TEMPLATE,
        RELEASE_NOT_CHECKED,
    ],
};
