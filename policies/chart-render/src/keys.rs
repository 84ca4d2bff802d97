//! Objects the charts name after keys of the spec, and labels they copy
//! from it (v1.6.2). Helm renders them whatever the key; kube-apiserver
//! refuses an invalid name or label value when Flux applies the release
//! (`ValidateObjectMeta`), so the HelmRelease fails all the same.
//!
//! | Kind | Key | Object and name |
//! |---|---|---|
//! | Bucket | `users.<u>` | BucketAccess `<release>-<u>` (`apps/bucket/templates/bucketclaim.yaml`) |
//! | OpenSearch | `users.<u>` | Secret `<release>-user-<u>` (`apps/opensearch/templates/users.yaml`) |
//! | MongoDB | `users.<u>` | Secret `<release>-user-<u>` (`apps/mongodb/templates/user-secrets.yaml`) |
//! | RabbitMQ | `users.<u>`, `vhosts.<v>`, `vhosts.<v>.roles.*[i]` | User `<release>-<kebabcase u>`, its Secret `…-credentials`, Vhost `<release>-<kebabcase v>`, Permission `<release>-<v>-<u>` (`apps/rabbitmq/templates/rabbitmq.yaml`) |
//! | MariaDB | `users.<u>` (not `root`), `databases.<d>`, `databases.<d>.roles.*[i]` | User `<release>-<u>`, Database `<release>-<d>`, Grant `<release>-<d>-<u>`, `_` made `-` (`apps/mariadb/templates/user.yaml`, `db.yaml`) |
//! | Kubernetes | `nodeGroups.<g>` | MachineDeployment `<release>-<g>`, KubevirtMachineTemplate `<release>-<g>-<hash>` (`apps/kubernetes/templates/cluster.yaml`) |
//! | SeaweedFS | `volume.zones.<z>` (MultiZone) | WorkloadMonitor `<release>-volume-<z>`, `…-<z>-<pool>` (`extra/seaweedfs/templates/seaweedfs.yaml`) |
//! | Tenant | `host`, `schedulingClass` | label values of the tenant's Namespace (`apps/tenant/templates/namespace.yaml`) |
//! | VirtualPrivateCloud | `subnets[i].name` | label value of the subnet's NetworkAttachmentDefinition and Subnet (`apps/vpc/templates/vpc.yaml`) |
//! | Monitoring | `metricsStorages[i].name`, `logsStorages[i].name` | WorkloadMonitors `<name>-vmstorage`, `-vmselect`, `-vminsert`, `vmalert-<name>`, `<name>-vlstorage`, `-vlselect`, `-vlinsert` (`extra/monitoring/templates/workloadmonitors.yaml`) |

use shared::apps::app_kind;
use shared::validators::{check_label_value, is_dns1123_subdomain};
use shared::{Field, FieldError};

use shared::Findings;

use crate::skip_wrong_types;
use crate::values::truthy;

/// Characters of the hash `cluster.yaml` appends to a machine template's
/// name (`-` and six hexadecimal digits).
const TEMPLATE_HASH: &str = "-000000";

/// The rules of `kind` over the spec of the application `name`.
pub fn check(kind: &str, name: &str, spec: &Field<'_>, out: &mut Findings) {
    let Some(app) = app_kind(kind) else {
        return;
    };
    let release = format!("{}{name}", app.release_prefix);
    let release = release.as_str();
    skip_wrong_types(match kind {
        "Bucket" => users(spec, out, |user| {
            vec![("BucketAccess", format!("{release}-{user}"))]
        }),
        "OpenSearch" | "MongoDB" => users(spec, out, |user| {
            vec![("Secret", format!("{release}-user-{user}"))]
        }),
        "RabbitMQ" => rabbitmq(release, spec, out),
        "MariaDB" => mariadb(release, spec, out),
        "Kubernetes" => node_groups(release, spec, out),
        "SeaweedFS" => seaweedfs_zones(release, spec, out),
        "Tenant" => tenant_labels(spec, out),
        "VirtualPrivateCloud" => subnet_labels(spec, out),
        "Monitoring" => monitoring_storages(spec, out),
        _ => Ok(()),
    });
}

/// `extra/monitoring/templates/workloadmonitors.yaml`: a WorkloadMonitor
/// per component of each storage, named after its `name`. (The name is
/// also a value of their `spec.selector`, which the WorkloadMonitor CRD
/// does not validate as a label: a long one applies.)
fn monitoring_storages(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    for (list, components) in [
        ("metricsStorages", ["vmstorage", "vmselect", "vminsert"]),
        ("logsStorages", ["vlstorage", "vlselect", "vlinsert"]),
    ] {
        for storage in spec.field(list)?.items()? {
            let field = storage.field("name")?;
            let Some(name) = field.string()? else {
                continue;
            };
            let mut objects: Vec<(&str, String)> = components
                .iter()
                .map(|c| ("WorkloadMonitor", format!("{name}-{c}")))
                .collect();
            if list == "metricsStorages" {
                objects.push(("WorkloadMonitor", format!("vmalert-{name}")));
            }
            names(&field, &objects, out);
        }
    }
    Ok(())
}

/// Denies the first object of `objects` (kind, name) whose name is not a
/// DNS-1123 subdomain, at `field`.
fn names(field: &Field<'_>, objects: &[(&str, String)], out: &mut Findings) {
    let Some((object, name)) = objects.iter().find(|(_, name)| !is_dns1123_subdomain(name)) else {
        return;
    };
    let why = if name.len() > 253 {
        "longer than 253 characters"
    } else {
        "not a lowercase RFC 1123 subdomain (lowercase letters, digits, '-' and '.', a letter or digit at both ends)"
    };
    out.add(
        crate::rules::OBJECT_NAME,
        field.path(),
        format!(
            "the chart names a {object} {name:?} after this key, which is {why}: kube-apiserver refuses it, so the \
             release fails to apply. Use a key of lowercase letters, digits and '-'."
        ),
    );
}

/// `users.<u>`, each naming the objects `objects(u)` returns.
fn users(
    spec: &Field<'_>,
    out: &mut Findings,
    objects: impl Fn(&str) -> Vec<(&'static str, String)>,
) -> Result<(), FieldError> {
    for (user, field) in spec.field("users")?.entries()? {
        names(&field, &objects(user), out);
    }
    Ok(())
}

/// What `kebabcase` makes of a key, for a name: `None` where it cannot be
/// told (a key whose non-ASCII characters are all spaces, or the two
/// capitals Go lowers to ASCII), else the key itself when non-ASCII (a
/// non-ASCII character survives `kebabcase`, and no name may hold one).
fn kebab(key: &str) -> Option<String> {
    if let Some(kebab) = sprig::kebabcase(key) {
        return Some(kebab);
    }
    let hopeless = key
        .chars()
        .any(|c| !c.is_ascii() && !c.is_whitespace() && c != '\u{212a}' && c != '\u{130}');
    hopeless.then(|| key.to_owned())
}

/// `apps/rabbitmq/templates/rabbitmq.yaml`: users, vhosts, permissions.
fn rabbitmq(release: &str, spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let [users, vhosts] = spec.members(["users", "vhosts"])?;
    for (user, field) in users.entries()? {
        if let Some(user) = kebab(user) {
            let objects = [
                ("User", format!("{release}-{user}")),
                ("Secret", format!("{release}-{user}-credentials")),
            ];
            names(&field, &objects, out);
        }
    }
    for (host, field) in vhosts.entries()? {
        let Some(host) = kebab(host) else {
            continue;
        };
        let vhost = format!("{release}-{host}");
        if !is_dns1123_subdomain(&vhost) {
            names(&field, &[("Vhost", vhost)], out);
            continue;
        }
        let roles = field.field("roles")?;
        for role in ["admin", "readonly"] {
            for item in roles.field(role)?.items()? {
                if let Some(user) = item.string()?.and_then(kebab) {
                    names(
                        &item,
                        &[("Permission", format!("{release}-{host}-{user}"))],
                        out,
                    );
                }
            }
        }
    }
    Ok(())
}

/// `apps/mariadb/templates/user.yaml` and `db.yaml`: `_` becomes `-`.
fn mariadb(release: &str, spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let dns = |key: &str| key.replace('_', "-");
    let [users, databases] = spec.members(["users", "databases"])?;
    for (user, field) in users.entries()? {
        if user != "root" {
            names(&field, &[("User", format!("{release}-{}", dns(user)))], out);
        }
    }
    for (database, field) in databases.entries()? {
        let object = format!("{release}-{}", dns(database));
        if !is_dns1123_subdomain(&object) {
            names(&field, &[("Database", object)], out);
            continue;
        }
        // A database without roles is databases.rs' (the template fails first).
        let Ok(roles) = field.field("roles") else {
            continue;
        };
        for role in ["admin", "readonly"] {
            for item in roles.field(role)?.items()? {
                if let Some(user) = item.string()? {
                    names(&item, &[("Grant", format!("{object}-{}", dns(user)))], out);
                }
            }
        }
    }
    Ok(())
}

/// `apps/kubernetes/templates/cluster.yaml`: each node group's machine
/// template and deployment.
fn node_groups(release: &str, spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    for (group, field) in spec.field("nodeGroups")?.entries()? {
        let objects = [
            ("MachineDeployment", format!("{release}-{group}")),
            (
                "KubevirtMachineTemplate",
                format!("{release}-{group}{TEMPLATE_HASH}"),
            ),
        ];
        names(&field, &objects, out);
    }
    Ok(())
}

/// `extra/seaweedfs/templates/seaweedfs.yaml`: the volume monitors of a
/// MultiZone cluster, per zone and per zone pool (pool names are
/// seaweedfs.rs', which the template checks first).
fn seaweedfs_zones(release: &str, spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    if spec.field("topology")?.string_or("Simple")? != "MultiZone" {
        return Ok(());
    }
    for (zone, field) in spec.at("volume.zones")?.entries()? {
        let monitor = format!("{release}-volume-{zone}");
        if !is_dns1123_subdomain(&monitor) {
            names(&field, &[("WorkloadMonitor", monitor)], out);
            continue;
        }
        for (pool, pool_field) in field.field("pools")?.entries()? {
            if shared::validators::is_dns1123_label(pool) {
                names(
                    &pool_field,
                    &[("WorkloadMonitor", format!("{monitor}-{pool}"))],
                    out,
                );
            }
        }
    }
    Ok(())
}

/// Denies `value` at `field` unless it is a label value.
fn label(field: &Field<'_>, value: &str, label: &str, object: &str, out: &mut Findings) {
    if let Err(why) = check_label_value(value) {
        out.add(
            crate::rules::LABEL_VALUE,
            field.path(),
            format!(
                "{value:?} becomes the label {label} of the {object}, which is not a valid label value ({why}): \
                 kube-apiserver refuses it, so the release fails to apply. Use at most 63 letters, digits, '-', '_' \
                 or '.', a letter or digit at both ends."
            ),
        );
    }
}

/// What YAML reads from `value` written unquoted after `key: `, when that
/// is the text itself with its surrounding spaces trimmed; `None` where
/// YAML would read something else (a number, a quoted or flow value, a
/// comment), which is not judged.
fn plain_scalar(value: &str) -> Option<&str> {
    let text = value.trim_matches(' ');
    let first = text.chars().next()?;
    let indicator = "'\"[]{}!&*|>%@`#?,".contains(first);
    let numeric = (first.is_ascii_digit() || "+-.".contains(first))
        && text
            .chars()
            .all(|c| c.is_ascii_hexdigit() || "+-._xXoO".contains(c));
    let breaks = text.contains(": ")
        || text.contains(" #")
        || text.ends_with(':')
        || text.contains(['\t', '\n', '\r']);
    (!indicator && !numeric && !breaks).then_some(text)
}

/// `apps/vpc/templates/vpc.yaml`: each subnet's name is written unquoted
/// as the label `cozystack.io/subnetName` of its NetworkAttachmentDefinition
/// and Subnet.
fn subnet_labels(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    for subnet in spec.field("subnets")?.items()? {
        let name = subnet.field("name")?;
        if let Some(value) = name.string()?.and_then(plain_scalar) {
            label(
                &name,
                value,
                "cozystack.io/subnetName",
                "subnet's NetworkAttachmentDefinition",
                out,
            );
        }
    }
    Ok(())
}

/// `apps/tenant/templates/namespace.yaml`: `host` and `schedulingClass`
/// become label values of the tenant's Namespace. (The scheduling class
/// is used only when the parent tenant has none; a value that cannot be a
/// label names no SchedulingClass either.)
fn tenant_labels(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let [host, class] = spec.members(["host", "schedulingClass"])?;
    for (field, label_key) in [
        (host, "namespace.cozystack.io/host"),
        (class, "scheduler.cozystack.io/scheduling-class"),
    ] {
        let Some(value) = field.string()?.filter(|_| truthy(field.json())) else {
            continue;
        };
        label(&field, value, label_key, "tenant's Namespace", out);
    }
    Ok(())
}
