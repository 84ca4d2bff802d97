//! Every rule of `chart-render`, as its README's "Rules" table lists them.
//! Paths are under `packages/` of Cozystack v1.6.2.

use shared::{Catalogue, Level, Rule};

const POLICY: &str = env!("CARGO_PKG_NAME");

/// `removed-version`.
pub const REMOVED_VERSION: Rule = Rule {
    policy: POLICY,
    id: "removed-version",
    level: Level::Deny,
    summary: "Kubernetes or KubernetesNodes `spec.version` this or an earlier release removed (below v1.31)",
    source: "`apps/kubernetes/templates/_versions.tpl`, `apps/kubernetes-nodes/templates/_versions.tpl`",
};

/// `version-downgrade`.
pub const VERSION_DOWNGRADE: Rule = Rule {
    policy: POLICY,
    id: "version-downgrade",
    level: Level::Warn,
    summary: "UPDATE of Kubernetes `spec.version` to a lower minor",
    source: "Kubernetes version skew policy; goes further than the chart",
};

/// `addon-requires-addon`.
pub const ADDON_REQUIRES_ADDON: Rule = Rule {
    policy: POLICY,
    id: "addon-requires-addon",
    level: Level::Deny,
    summary: "an addon enabled without the addon it requires (hami without gpuOperator, ouroboros without ingressNginx)",
    source: "`apps/kubernetes/templates/helmreleases/hami.yaml`, `helmreleases/ouroboros.yaml`",
};

/// `ouroboros-gateway-api`.
pub const OUROBOROS_GATEWAY_API: Rule = Rule {
    policy: POLICY,
    id: "ouroboros-gateway-api",
    level: Level::Deny,
    summary: "ouroboros' `gatewayApi.enabled` truthy while `addons.gatewayAPI.enabled` is not",
    source: "`apps/kubernetes/templates/helmreleases/ouroboros.yaml`",
};

/// `flux-minimum-version`.
pub const FLUX_MINIMUM_VERSION: Rule = Rule {
    policy: POLICY,
    id: "flux-minimum-version",
    level: Level::Setting,
    summary: "the Flux addon on Kubernetes below v1.33",
    source: "release notes v1.5.0 and v1.6 (Flux v2.8, helm-controller v1.5)",
};

/// `addons-without-workers`.
pub const ADDONS_WITHOUT_WORKERS: Rule = Rule {
    policy: POLICY,
    id: "addons-without-workers",
    level: Level::Setting,
    summary: "addons with workloads while every node group has `maxReplicas: 0`",
    source: "`apps/kubernetes/templates/cluster.yaml`, release notes v1.6",
};

/// `ingress-without-role`.
pub const INGRESS_WITHOUT_ROLE: Rule = Rule {
    policy: POLICY,
    id: "ingress-without-role",
    level: Level::Setting,
    summary: "ingress-nginx enabled while no node group with `maxReplicas >= 1` has its role",
    source: "`apps/kubernetes/templates/helmreleases/ingress-nginx.yaml` (`nodeSelector`)",
};

/// `ingress-without-initial-workers`.
pub const INGRESS_WITHOUT_INITIAL_WORKERS: Rule = Rule {
    policy: POLICY,
    id: "ingress-without-initial-workers",
    level: Level::Warn,
    summary: "ingress-nginx enabled and every group with its role has `minReplicas: 0`",
    source: "`apps/kubernetes/templates/_helpers.tpl` (`kubernetes.nodeGroups`, implicit md0)",
};

/// `ephemeral-storage`.
pub const EPHEMERAL_STORAGE: Rule = Rule {
    policy: POLICY,
    id: "ephemeral-storage",
    level: Level::Deny,
    summary: "a node group with `ephemeralStorage`",
    source: "`apps/kubernetes/templates/cluster.yaml`",
};

/// `node-group-resources`.
pub const NODE_GROUP_RESOURCES: Rule = Rule {
    policy: POLICY,
    id: "node-group-resources",
    level: Level::Deny,
    summary: "a node group with one of `resources.cpu`, `resources.memory`",
    source: "`apps/kubernetes/templates/cluster.yaml`",
};

/// `max-unhealthy`.
pub const MAX_UNHEALTHY: Rule = Rule {
    policy: POLICY,
    id: "max-unhealthy",
    level: Level::Deny,
    summary: "`maxUnhealthy` that is not a bare integer or integer percentage",
    source: "`apps/kubernetes/templates/cluster.yaml`",
};

/// `extra-volumes`.
pub const EXTRA_VOLUMES: Rule = Rule {
    policy: POLICY,
    id: "extra-volumes",
    level: Level::Deny,
    summary: "apiserver `extraVolumes`: empty, reserved or duplicate names, not exactly one source, a source other than configMap/secret",
    source: "`apps/kubernetes/templates/cluster.yaml`",
};

/// `extra-volume-mounts`.
pub const EXTRA_VOLUME_MOUNTS: Rule = Rule {
    policy: POLICY,
    id: "extra-volume-mounts",
    level: Level::Deny,
    summary: "apiserver `extraVolumeMounts` with an empty name or naming no volume",
    source: "`apps/kubernetes/templates/cluster.yaml`",
};

/// `nodes-cluster`.
pub const NODES_CLUSTER: Rule = Rule {
    policy: POLICY,
    id: "nodes-cluster",
    level: Level::Deny,
    summary: "KubernetesNodes without `spec.cluster`",
    source: "`apps/kubernetes-nodes/templates/_helpers.tpl`",
};

/// `nodes-name`.
pub const NODES_NAME: Rule = Rule {
    policy: POLICY,
    id: "nodes-name",
    level: Level::Deny,
    summary: "KubernetesNodes whose name is not `<cluster>-<pool>`",
    source: "`apps/kubernetes-nodes/templates/_helpers.tpl`",
};

/// `fixed-name`.
pub const FIXED_NAME: Rule = Rule {
    policy: POLICY,
    id: "fixed-name",
    level: Level::Deny,
    summary: "Etcd, Monitoring, Ingress or BootBox under another name than the chart fixes",
    source: "`extra/{etcd,monitoring,ingress,bootbox}/templates/check-release-name.yaml`",
};

/// `fixed-namespace`.
pub const FIXED_NAMESPACE: Rule = Rule {
    policy: POLICY,
    id: "fixed-namespace",
    level: Level::Deny,
    summary: "BootBox outside `tenant-root`",
    source: "`extra/bootbox/templates/check-release-name.yaml`",
};

/// `tenant-namespace`.
pub const TENANT_NAMESPACE: Rule = Rule {
    policy: POLICY,
    id: "tenant-namespace",
    level: Level::Deny,
    summary: "a Tenant in a namespace that does not start with `tenant-`",
    source: "`apps/tenant/templates/_helpers.tpl`",
};

/// `clickhouse-path-override`.
pub const CLICKHOUSE_PATH_OVERRIDE: Rule = Rule {
    policy: POLICY,
    id: "clickhouse-path-override",
    level: Level::Deny,
    summary: "ClickHouse `backup.s3PathOverride` with `backup.useSystemBucket`",
    source: "`apps/clickhouse/templates/clickhouse.yaml`",
};

/// `postgres-user`.
pub const POSTGRES_USER: Rule = Rule {
    policy: POLICY,
    id: "postgres-user",
    level: Level::Deny,
    summary: "Postgres `users.postgres`",
    source: "`apps/postgres/templates/init-script.yaml`",
};

/// `postgres-parameter`.
pub const POSTGRES_PARAMETER: Rule = Rule {
    policy: POLICY,
    id: "postgres-parameter",
    level: Level::Deny,
    summary: "a blocked Postgres parameter (`archive_command`, `shared_preload_libraries`...)",
    source: "`apps/postgres/templates/db.yaml`",
};

/// `postgres-bootstrap`.
pub const POSTGRES_BOOTSTRAP: Rule = Rule {
    policy: POLICY,
    id: "postgres-bootstrap",
    level: Level::Deny,
    summary: "Postgres `bootstrap.enabled` with the system bucket or without S3 credentials",
    source: "`apps/postgres/templates/db.yaml`",
};

/// `opensearch-roles`.
pub const OPENSEARCH_ROLES: Rule = Rule {
    policy: POLICY,
    id: "opensearch-roles",
    level: Level::Deny,
    summary: "OpenSearch with every node role off",
    source: "`apps/opensearch/templates/opensearch.yaml`",
};

/// `vm-disk-source`.
pub const VM_DISK_SOURCE: Rule = Rule {
    policy: POLICY,
    id: "vm-disk-source",
    level: Level::Deny,
    summary: "VMDisk with more than one source",
    source: "`apps/vm-disk/templates/dv.yaml`",
};

/// `ingress-proxy-protocol`.
pub const INGRESS_PROXY_PROTOCOL: Rule = Rule {
    policy: POLICY,
    id: "ingress-proxy-protocol",
    level: Level::Deny,
    summary: "Ingress `proxyProtocol` with `cloudflareProxy`",
    source: "`extra/ingress/templates/nginx-ingress.yaml`",
};

/// `external-dns-provider`.
pub const EXTERNAL_DNS_PROVIDER: Rule = Rule {
    policy: POLICY,
    id: "external-dns-provider",
    level: Level::Deny,
    summary: "ExternalDNS without `provider`",
    source: "`extra/external-dns/templates/external-dns.yaml`",
};

/// `external-without-tls`.
pub const EXTERNAL_WITHOUT_TLS: Rule = Rule {
    policy: POLICY,
    id: "external-without-tls",
    level: Level::Setting,
    summary: "Kafka, NATS or Qdrant exposed (`external: true`) with `tls.enabled: false`",
    source: "`apps/kafka/templates/_tls.tpl`, `apps/nats/templates/_tls.tpl`, `apps/qdrant/templates/_helpers.tpl`",
};

/// `object-name`.
pub const OBJECT_NAME: Rule = Rule {
    policy: POLICY,
    id: "object-name",
    level: Level::Deny,
    summary: "a map key the chart names an object after (users, databases, vhosts, node groups, zones) that makes an invalid object name",
    source: "`apps/bucket/templates/bucketclaim.yaml`, `apps/opensearch/templates/users.yaml`, `apps/mongodb/templates/user-secrets.yaml`, `apps/rabbitmq/templates/rabbitmq.yaml`, `apps/mariadb/templates/user.yaml`, `apps/mariadb/templates/db.yaml`, `apps/kubernetes/templates/cluster.yaml`, `extra/seaweedfs/templates/seaweedfs.yaml`",
};

/// `label-value`.
pub const LABEL_VALUE: Rule = Rule {
    policy: POLICY,
    id: "label-value",
    level: Level::Deny,
    summary: "Tenant `host` or `schedulingClass`, VirtualPrivateCloud subnet `name`, that is not a valid label value",
    source: "`apps/tenant/templates/namespace.yaml`, `apps/vpc/templates/vpc.yaml`",
};

/// `flat-resources`.
pub const FLAT_RESOURCES: Rule = Rule {
    policy: POLICY,
    id: "flat-resources",
    level: Level::Deny,
    summary: "a `resources` map with nested `requests` or `limits`, which cozy-lib refuses",
    source: "`library/cozy-lib/templates/_resources.tpl` (`resources.sanitize`), as each chart vendors it",
};

/// `database-roles`.
pub const DATABASE_ROLES: Rule = Rule {
    policy: POLICY,
    id: "database-roles",
    level: Level::Deny,
    summary: "a MariaDB, Postgres or MongoDB database without `roles`",
    source: "`apps/mariadb/templates/db.yaml`, `apps/postgres/templates/init-script.yaml`, `apps/mongodb/templates/mongodb.yaml`",
};

/// `mongodb-user-role`.
pub const MONGODB_USER_ROLE: Rule = Rule {
    policy: POLICY,
    id: "mongodb-user-role",
    level: Level::Deny,
    summary: "a MongoDB user no database grants a role",
    source: "`apps/mongodb/templates/mongodb.yaml`",
};

/// `backup-credentials`.
pub const BACKUP_CREDENTIALS: Rule = Rule {
    policy: POLICY,
    id: "backup-credentials",
    level: Level::Deny,
    summary: "an emptied S3 setting of a ClickHouse, MariaDB or MongoDB backup the chart renders",
    source: "`apps/clickhouse/templates/backup-secret.yaml`, `backup-strategy-secret.yaml`, `backup-cronjob.yaml`, `apps/mariadb/templates/backup-secret.yaml`, `backup-cronjob.yaml`, `apps/mongodb/templates/backup-secret.yaml`",
};

/// `mongodb-bootstrap`.
pub const MONGODB_BOOTSTRAP: Rule = Rule {
    policy: POLICY,
    id: "mongodb-bootstrap",
    level: Level::Deny,
    summary: "MongoDB `bootstrap.enabled` without `backupName`, `backup.destinationPath` or `backup.endpointURL`",
    source: "`apps/mongodb/templates/restore.yaml`",
};

/// `kubelet-reservations`.
pub const KUBELET_RESERVATIONS: Rule = Rule {
    policy: POLICY,
    id: "kubelet-reservations",
    level: Level::Deny,
    summary: "node-group kubelet reservations the template refuses: formats, signs, eviction thresholds, more reserved than the node has",
    source: "`apps/kubernetes/templates/cluster.yaml`, `apps/kubernetes-nodes/templates/nodegroup.yaml`",
};

/// `seaweedfs-topology`.
pub const SEAWEEDFS_TOPOLOGY: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-topology",
    level: Level::Deny,
    summary: "SeaweedFS topology needs: Client without `filer.grpcHost`, MultiZone without enough zones, `replicationFactor` below 1, pools outside Simple",
    source: "`extra/seaweedfs/templates/seaweedfs.yaml`",
};

/// `seaweedfs-pool`.
pub const SEAWEEDFS_POOL: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-pool",
    level: Level::Deny,
    summary: "SeaweedFS storage pools and disk types: names, reserved suffixes, disk types, collisions",
    source: "`extra/seaweedfs/templates/seaweedfs.yaml`",
};

/// `vm-disk-source-entry`.
pub const VM_DISK_SOURCE_ENTRY: Rule = Rule {
    policy: POLICY,
    id: "vm-disk-source-entry",
    level: Level::Deny,
    summary: "VMDisk source with an empty `image.name`, `http.url` or `disk.name`",
    source: "`apps/vm-disk/templates/dv.yaml`",
};

/// `vm-instance-size`.
pub const VM_INSTANCE_SIZE: Rule = Rule {
    policy: POLICY,
    id: "vm-instance-size",
    level: Level::Deny,
    summary: "VMInstance with an empty `instanceType` and not all of `resources.cpu`, `sockets`, `memory`",
    source: "`apps/vm-instance/templates/vm.yaml`",
};

/// `etcd-size`.
pub const ETCD_SIZE: Rule = Rule {
    policy: POLICY,
    id: "etcd-size",
    level: Level::Deny,
    summary: "Etcd `size` written as a number",
    source: "`extra/etcd/templates/etcd-cluster.yaml`",
};

/// `openbao-size`.
pub const OPENBAO_SIZE: Rule = Rule {
    policy: POLICY,
    id: "openbao-size",
    level: Level::Deny,
    summary: "OpenBAO `size` without a unit, which the `system` release's chart refuses",
    source: "`apps/openbao/templates/openbao.yaml`",
};

/// `instance-type-not-shipped`.
pub const INSTANCE_TYPE_NOT_SHIPPED: Rule = Rule {
    policy: POLICY,
    id: "instance-type-not-shipped",
    level: Level::Warn,
    summary: "an `instanceType` or `instanceProfile` the platform does not install, which the chart looks up in the cluster",
    source: "`apps/vm-instance/templates/vm.yaml`, `apps/kubernetes/templates/cluster.yaml`, `apps/kubernetes-nodes/templates/nodegroup.yaml`",
};

/// `vm-disk-reference`.
pub const VM_DISK_REFERENCE: Rule = Rule {
    policy: POLICY,
    id: "vm-disk-reference",
    level: Level::Deny,
    summary: "a VMInstance disk whose `name` no VMDisk can have, so the chart's lookup always fails",
    source: "`apps/vm-instance/templates/vm.yaml`",
};

/// `instance-type-name`.
pub const INSTANCE_TYPE_NAME: Rule = Rule {
    policy: POLICY,
    id: "instance-type-name",
    level: Level::Deny,
    summary: "an `instanceType` or `instanceProfile` no cluster object can be named, so the chart's lookup always fails",
    source: "`apps/vm-instance/templates/vm.yaml`, `apps/kubernetes/templates/cluster.yaml`, `apps/kubernetes-nodes/templates/nodegroup.yaml`; kube-apiserver's `ValidateObjectMeta`",
};

/// `vm-disk-not-checked`.
pub const VM_DISK_NOT_CHECKED: Rule = Rule {
    policy: POLICY,
    id: "vm-disk-not-checked",
    level: Level::Warn,
    summary: "a VMInstance disk the chart looks up in the cluster, which this policy does not read",
    source: "`apps/vm-instance/templates/vm.yaml`",
};

/// `external-needs-host`.
pub const EXTERNAL_NEEDS_HOST: Rule = Rule {
    policy: POLICY,
    id: "external-needs-host",
    level: Level::Warn,
    summary: "NATS `external` with TLS, which fails in a tenant without a host (a tenant value this policy does not read)",
    source: "`apps/nats/templates/certmanager.yaml`",
};

/// `nodes-md0`.
pub const NODES_MD0: Rule = Rule {
    policy: POLICY,
    id: "nodes-md0",
    level: Level::Warn,
    summary: "a KubernetesNodes pool `md0`, which collides with the implicit md0 of a parent without node groups",
    source: "`apps/kubernetes-nodes/templates/_helpers.tpl` (`assertNoForeignPool`), `apps/kubernetes/templates/_helpers.tpl` (implicit md0)",
};

/// `host-ingress-proxy-protocol`.
pub const HOST_INGRESS_PROXY_PROTOCOL: Rule = Rule {
    policy: POLICY,
    id: "host-ingress-proxy-protocol",
    level: Level::Warn,
    summary: "per-app `proxyProtocol` on the Ingress of `tenant-root`, the platform's default host ingress",
    source: "`extra/ingress/templates/nginx-ingress.yaml`; `core/platform/values.yaml` (`publishing.ingressName`)",
};

/// `seaweedfs-topology-change`.
pub const SEAWEEDFS_TOPOLOGY_CHANGE: Rule = Rule {
    policy: POLICY,
    id: "seaweedfs-topology-change",
    level: Level::Deny,
    summary: "UPDATE of SeaweedFS `spec.topology`, which the chart refuses after the first deployment",
    source: "`extra/seaweedfs/templates/seaweedfs.yaml` (79–93), `templates/cm.yaml`",
};

/// `vm-disk-kept`.
pub const VM_DISK_KEPT: Rule = Rule {
    policy: POLICY,
    id: "vm-disk-kept",
    level: Level::Warn,
    summary: "UPDATE of a VMDisk's `source` or `storage`, which the chart keeps from the existing DataVolume",
    source: "`apps/vm-disk/templates/dv.yaml` (1, 14–15)",
};

/// `volume-claim-template`.
pub const VOLUME_CLAIM_TEMPLATE: Rule = Rule {
    policy: POLICY,
    id: "volume-claim-template",
    level: Level::Deny,
    summary: "UPDATE of a size or storage class the chart writes into a StatefulSet's volumeClaimTemplates, which the upgrade cannot change",
    source: "`system/{harbor,nats,openbao,qdrant}` StatefulSets, `extra/seaweedfs/templates/seaweedfs.yaml` (246–310); kube-apiserver `ValidateStatefulSetUpdate`",
};

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
        VM_DISK_NOT_CHECKED,
        EXTERNAL_NEEDS_HOST,
        NODES_MD0,
        HOST_INGRESS_PROXY_PROTOCOL,
        SEAWEEDFS_TOPOLOGY_CHANGE,
        VM_DISK_KEPT,
        VOLUME_CLAIM_TEMPLATE,
    ],
};
