//! `resources` maps that reach cozy-lib's `resources.sanitize` (through
//! `defaultingSanitize`), which fails on nested `requests:` or `limits:`
//! (`packages/library/cozy-lib/templates/_resources.tpl`, vendored into
//! every chart as `charts/cozy-lib`). The schemas declare only `cpu` and
//! `memory` there but allow other keys, so values-schema only warns.

use shared::{Field, FieldError};

use shared::Findings;

use crate::skip_wrong_types;
use crate::values::truthy;

/// When a chart renders a component's resources.
#[derive(Clone, Copy)]
enum When {
    Always,
    /// The flag at this path is truthy (`default` when absent).
    Enabled(&'static str, bool),
    /// SeaweedFS: the topology (default Simple) is not Client.
    NotClient,
}

/// The `resources` paths of each kind that the templates sanitize, and
/// the template that does (v1.6.2, under `packages/`).
const SANITIZED: &[(&str, &str, When, &str)] = &[
    (
        "ClickHouse",
        "resources",
        When::Always,
        "apps/clickhouse/templates/clickhouse.yaml",
    ),
    (
        "Etcd",
        "resources",
        When::Always,
        "extra/etcd/templates/etcd-cluster.yaml",
    ),
    (
        "ExternalDNS",
        "resources",
        When::Always,
        "extra/external-dns/templates/external-dns.yaml",
    ),
    (
        "FoundationDB",
        "resources",
        When::Always,
        "apps/foundationdb/templates/cluster.yaml",
    ),
    (
        "HTTPCache",
        "haproxy.resources",
        When::Always,
        "apps/http-cache/templates/haproxy/deployment.yaml",
    ),
    (
        "HTTPCache",
        "nginx.resources",
        When::Always,
        "apps/http-cache/templates/nginx/deployment.yaml",
    ),
    (
        "Harbor",
        "core.resources",
        When::Always,
        "apps/harbor/templates/harbor.yaml",
    ),
    (
        "Harbor",
        "registry.resources",
        When::Always,
        "apps/harbor/templates/harbor.yaml",
    ),
    (
        "Harbor",
        "jobservice.resources",
        When::Always,
        "apps/harbor/templates/harbor.yaml",
    ),
    (
        "Harbor",
        "trivy.resources",
        When::Enabled("trivy.enabled", true),
        "apps/harbor/templates/harbor.yaml",
    ),
    (
        "Ingress",
        "resources",
        When::Always,
        "extra/ingress/templates/nginx-ingress.yaml",
    ),
    (
        "Kafka",
        "kafka.resources",
        When::Always,
        "apps/kafka/templates/kafka.yaml",
    ),
    (
        "Kafka",
        "zookeeper.resources",
        When::Always,
        "apps/kafka/templates/kafka.yaml",
    ),
    (
        "Kubernetes",
        "controlPlane.apiServer.resources",
        When::Always,
        "apps/kubernetes/templates/cluster.yaml",
    ),
    (
        "Kubernetes",
        "controlPlane.controllerManager.resources",
        When::Always,
        "apps/kubernetes/templates/cluster.yaml",
    ),
    (
        "Kubernetes",
        "controlPlane.scheduler.resources",
        When::Always,
        "apps/kubernetes/templates/cluster.yaml",
    ),
    (
        "Kubernetes",
        "controlPlane.konnectivity.server.resources",
        When::Always,
        "apps/kubernetes/templates/cluster.yaml",
    ),
    (
        "MariaDB",
        "resources",
        When::Always,
        "apps/mariadb/templates/mariadb.yaml",
    ),
    (
        "MongoDB",
        "resources",
        When::Always,
        "apps/mongodb/templates/mongodb.yaml",
    ),
    (
        "NATS",
        "resources",
        When::Always,
        "apps/nats/templates/nats.yaml",
    ),
    (
        "OpenBAO",
        "resources",
        When::Always,
        "apps/openbao/templates/openbao.yaml",
    ),
    (
        "OpenSearch",
        "resources",
        When::Always,
        "apps/opensearch/templates/opensearch.yaml",
    ),
    (
        "OpenSearch",
        "dashboards.resources",
        When::Enabled("dashboards.enabled", false),
        "apps/opensearch/templates/opensearch.yaml",
    ),
    (
        "Postgres",
        "resources",
        When::Always,
        "apps/postgres/templates/db.yaml",
    ),
    (
        "Qdrant",
        "resources",
        When::Always,
        "apps/qdrant/templates/qdrant.yaml",
    ),
    (
        "RabbitMQ",
        "resources",
        When::Always,
        "apps/rabbitmq/templates/rabbitmq.yaml",
    ),
    (
        "Redis",
        "resources",
        When::Always,
        "apps/redis/templates/redisfailover.yaml",
    ),
    (
        "SeaweedFS",
        "db.resources",
        When::NotClient,
        "extra/seaweedfs/templates/seaweedfs-db.yaml",
    ),
    (
        "SeaweedFS",
        "master.resources",
        When::NotClient,
        "extra/seaweedfs/templates/seaweedfs.yaml",
    ),
    (
        "SeaweedFS",
        "filer.resources",
        When::NotClient,
        "extra/seaweedfs/templates/seaweedfs.yaml",
    ),
    (
        "SeaweedFS",
        "volume.resources",
        When::NotClient,
        "extra/seaweedfs/templates/seaweedfs.yaml",
    ),
    (
        "SeaweedFS",
        "s3.resources",
        When::NotClient,
        "extra/seaweedfs/templates/seaweedfs.yaml",
    ),
    (
        "TCPBalancer",
        "resources",
        When::Always,
        "apps/tcp-balancer/templates/deployment.yaml",
    ),
    (
        "VPN",
        "resources",
        When::Always,
        "apps/vpn/templates/deployment.yaml",
    ),
];

/// The rule over every sanitized `resources` of `kind`.
pub fn check(kind: &str, spec: &Field<'_>, out: &mut Findings) {
    for &(_, path, when, template) in SANITIZED.iter().filter(|(k, ..)| *k == kind) {
        skip_wrong_types(component(spec, path, when, template, out));
    }
    if kind == "SeaweedFS" {
        skip_wrong_types(seaweedfs_pools(spec, out));
    }
}

fn rendered(spec: &Field<'_>, when: When) -> Result<bool, FieldError> {
    Ok(match when {
        When::Always => true,
        When::Enabled(flag, default) => {
            let flag = spec.at(flag)?;
            if flag.is_present() {
                truthy(flag.json())
            } else {
                default
            }
        }
        When::NotClient => spec.field("topology")?.string_or("Simple")? != "Client",
    })
}

fn component(
    spec: &Field<'_>,
    path: &str,
    when: When,
    template: &str,
    out: &mut Findings,
) -> Result<(), FieldError> {
    if rendered(spec, when)? {
        nested(&spec.at(path)?, template, out)?;
    }
    Ok(())
}

/// Denies `requests` and `limits` in one `resources` map (a `null` one is
/// dropped when Helm merges the values).
fn nested(resources: &Field<'_>, template: &str, out: &mut Findings) -> Result<(), FieldError> {
    let [requests, limits] = resources.members(["requests", "limits"])?;
    let Some(section) = [requests, limits].into_iter().find(Field::is_present) else {
        return Ok(());
    };
    out.add(
        crate::rules::FLAT_RESOURCES,
        section.path(),
        format!(
            "ERROR: A flat map of resources expected, not nested `requests:` or `limits:` sections ({template} \
             through cozy-lib's resources.sanitize; the chart fails to render). Write cpu and memory directly under \
             resources: they are the limits, and the requests follow from the platform's allocation ratios."
        ),
    );
    Ok(())
}

/// SeaweedFS storage pools' own `resources`: `volume.pools.<p>` (Simple)
/// and `volume.zones.<z>.pools.<p>` (MultiZone), in `seaweedfs.yaml`.
fn seaweedfs_pools(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    const TEMPLATE: &str = "extra/seaweedfs/templates/seaweedfs.yaml";
    let [topology, volume] = spec.members(["topology", "volume"])?;
    match topology.string_or("Simple")? {
        "Simple" => {
            for (_, pool) in volume.field("pools")?.entries()? {
                nested(&pool.field("resources")?, TEMPLATE, out)?;
            }
        }
        "MultiZone" => {
            for (_, zone) in volume.field("zones")?.entries()? {
                for (_, pool) in zone.field("pools")?.entries()? {
                    nested(&pool.field("resources")?, TEMPLATE, out)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}
