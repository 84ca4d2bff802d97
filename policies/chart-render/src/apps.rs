//! Render checks of the other applications that read only the values
//! (v1.6.2 templates; each rule names its file).

use shared::{Field, FieldError, Value};

use shared::Findings;

use crate::skip_wrong_types;
use crate::values::truthy;

/// PostgreSQL parameters `templates/db.yaml` blocks (compared lowercased).
const BLOCKED_PARAMETERS: &[&str] = &[
    "archive_command",
    "restore_command",
    "ssl_passphrase_command",
    "archive_cleanup_command",
    "recovery_end_command",
    "dynamic_library_path",
    "local_preload_libraries",
    "session_preload_libraries",
    "shared_preload_libraries",
];

/// The rules of `kind`; a rule whose field has the wrong type is skipped.
pub fn check(kind: &str, namespace: &str, spec: &Field<'_>, out: &mut Findings) {
    skip_wrong_types(match kind {
        "ClickHouse" => clickhouse(spec, out),
        "Postgres" => {
            skip_wrong_types(postgres_users(spec, out));
            skip_wrong_types(postgres_parameters(spec, out));
            postgres_bootstrap(spec, out)
        }
        "OpenSearch" => opensearch(spec, out),
        "VMDisk" => {
            skip_wrong_types(vm_disk(spec, out));
            vm_disk_source_entry(spec, out)
        }
        "VMInstance" => {
            skip_wrong_types(crate::instance_types::vm_instance(spec, out));
            skip_wrong_types(vm_instance_disks(spec, out));
            vm_instance(spec, out)
        }
        "Etcd" => etcd_size(spec, out),
        "OpenBAO" => openbao_size(spec, out),
        "Ingress" => ingress(namespace, spec, out),
        "ExternalDNS" => external_dns(spec, out),
        _ => Ok(()),
    });
}

/// `packages/apps/clickhouse/templates/clickhouse.yaml`.
fn clickhouse(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let backup = spec.field("backup")?;
    let [system, path] = backup.members(["useSystemBucket", "s3PathOverride"])?;
    if truthy(system.json()) && truthy(path.json()) {
        out.add(
            crate::rules::CLICKHOUSE_PATH_OVERRIDE,
            path.path(),
            "clickhouse: backup.s3PathOverride is incompatible with backup.useSystemBucket=true. The platform flow \
             scopes the S3 path to <namespace>/<release> automatically; clear s3PathOverride or disable \
             useSystemBucket (the chart fails to render).",
        );
    }
    Ok(())
}

/// `packages/apps/postgres/templates/init-script.yaml`.
fn postgres_users(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let users = spec.field("users")?;
    if let Some((_, user)) = users
        .entries()?
        .into_iter()
        .find(|(name, _)| *name == "postgres")
    {
        out.add(
            crate::rules::POSTGRES_USER,
            user.path(),
            "`users.postgres` is forbidden by policy. Use a different username (the chart fails to render; the \
             superuser is managed by the operator).",
        );
    }
    Ok(())
}

/// `packages/apps/postgres/templates/db.yaml`: parameters that can run code.
fn postgres_parameters(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    for (key, field) in spec.at("postgresql.parameters")?.entries()? {
        // ASCII case folding matches the template's `lower` here: no
        // non-ASCII letter lowercases to a letter of these names.
        if BLOCKED_PARAMETERS.contains(&key.to_ascii_lowercase().as_str()) {
            out.add(
                crate::rules::POSTGRES_PARAMETER,
                field.path(),
                format!(
                    "SECURITY: Parameter '{key}' is blocked. This parameter can enable arbitrary code execution and \
                     must not be set by tenants (the chart fails to render). Remove it."
                ),
            );
        }
    }
    Ok(())
}

/// `packages/apps/postgres/templates/db.yaml`: bootstrap (restore) needs
/// credentials and is not the system-bucket flow.
fn postgres_bootstrap(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let bootstrap = spec.at("bootstrap.enabled")?;
    if !truthy(bootstrap.json()) {
        return Ok(());
    }
    let backup = spec.field("backup")?;
    let [system, access, secret, credentials] = backup.members([
        "useSystemBucket",
        "s3AccessKey",
        "s3SecretKey",
        "s3CredentialsSecret",
    ])?;
    if truthy(system.json()) {
        out.add(
            crate::rules::POSTGRES_BOOTSTRAP,
            bootstrap.path(),
            "postgres: bootstrap.enabled=true is incompatible with backup.useSystemBucket=true. Use a \
             backups.cozystack.io/RestoreJob against the cozy-default BackupClass to restore from the system bucket \
             (the chart fails to render).",
        );
    } else {
        let inline = truthy(access.json()) && truthy(secret.json());
        let from_secret = truthy(credentials.field("name")?.json());
        if inline || from_secret {
            return Ok(());
        }
        out.add(
            crate::rules::POSTGRES_BOOTSTRAP,
            bootstrap.path(),
            "postgres: bootstrap.enabled=true requires S3 credentials: set backup.s3AccessKey+backup.s3SecretKey, \
             backup.s3CredentialsSecret.name, or backup.useSystemBucket=true (with a backups.cozystack.io/RestoreJob) \
             (the chart fails to render).",
        );
    }
    Ok(())
}

/// `packages/apps/opensearch/templates/opensearch.yaml`: at least one role;
/// absent roles take the chart defaults (master, data, ingest on).
fn opensearch(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let roles = spec.field("nodeRoles")?;
    let mut any = false;
    for (role, default) in [
        ("master", true),
        ("data", true),
        ("ingest", true),
        ("ml", false),
    ] {
        any |= roles.field(role)?.bool()?.unwrap_or(default);
    }
    if !any {
        out.add(
            crate::rules::OPENSEARCH_ROLES,
            roles.path(),
            "At least one node role must be enabled (master, data, ingest, or ml) (the chart fails to render).",
        );
    }
    Ok(())
}

/// `packages/apps/vm-disk/templates/dv.yaml`.
fn vm_disk(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let source = spec.field("source")?;
    let kinds: Vec<&str> = source
        .entries()?
        .into_iter()
        .filter(|(_, field)| field.is_present())
        .map(|(kind, _)| kind)
        .collect();
    if kinds.len() > 1 {
        out.add(
            crate::rules::VM_DISK_SOURCE,
            source.path(),
            format!(
                "Exactly one type of source is expected! Found {} ({}): keep one (the chart fails to render).",
                kinds.len(),
                kinds.join(", ")
            ),
        );
    }
    Ok(())
}

/// `packages/apps/vm-disk/templates/dv.yaml` (25, 29, 34): the one source's
/// `required` entry. Absent, it is values-schema's (the schema requires it);
/// an empty string passes the schema and fails the template.
fn vm_disk_source_entry(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let source = spec.field("source")?;
    let present: Vec<(&str, Field<'_>)> = source
        .entries()?
        .into_iter()
        .filter(|(_, field)| field.is_present())
        .collect();
    let [(kind, entry)] = present.as_slice() else {
        return Ok(());
    };
    let key = match *kind {
        "image" | "disk" => "name",
        "http" => "url",
        _ => return Ok(()),
    };
    let value = entry.field(key)?;
    if value.string()? == Some("") {
        out.add(
            crate::rules::VM_DISK_SOURCE_ENTRY,
            value.path(),
            format!(
                "A valid .Values.source.{kind}.{key} entry required! (the chart fails to render). Set \
                 source.{kind}.{key}."
            ),
        );
    }
    Ok(())
}

/// The longest VMDisk name: cozystack-api allows `53 - len("vm-disk-")`.
const VM_DISK_NAME_MAX: usize = 45;

/// `packages/apps/vm-instance/templates/vm.yaml` (68, 80): each disk is the
/// Whether `finding` is one of the source checks `dv.yaml` makes only when
/// no DataVolume of the release exists yet (`vm-disk-source`,
/// `vm-disk-source-entry`).
pub fn is_vm_disk_source_finding(finding: &shared::Finding) -> bool {
    [
        crate::rules::VM_DISK_SOURCE.id,
        crate::rules::VM_DISK_SOURCE_ENTRY.id,
    ]
    .contains(&finding.rule.id)
}

/// `packages/apps/vm-disk/templates/dv.yaml` (1, 14–15): once the
/// DataVolume exists, every upgrade copies its `spec`, so a changed
/// `source` or `storage` renders and never takes effect. (A changed
/// `storageClass` is storageclass-immutable's.)
pub fn vm_disk_kept(
    old: &Field<'_>,
    new: &Field<'_>,
    out: &mut Findings,
) -> Result<(), FieldError> {
    for (key, what) in [("source", "its source"), ("storage", "its size")] {
        let (before, after) = (old.field(key)?, new.field(key)?);
        if before.json() != after.json() {
            out.add(
                crate::rules::VM_DISK_KEPT,
                after.path(),
                format!(
                    "changed, but the chart copies the existing DataVolume's spec on every upgrade, so the disk \
                     keeps {what} and this change never takes effect. Create a new VMDisk (or resize its \
                     PersistentVolumeClaim) instead."
                ),
            );
        }
    }
    Ok(())
}

/// DataVolume `vm-disk-<name>` of a VMDisk, looked up in the namespace, and
/// the chart fails when there is none. A name no VMDisk can have
/// (cozystack-api: a DNS-1035 label of at most 45 characters) fails
/// whatever the cluster holds; whether a VMDisk of another name exists is
/// cluster state, which this policy does not read, so it says so.
fn vm_instance_disks(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    for disk in spec.field("disks")?.items()? {
        let name = disk.field("name")?;
        let Some(text) = name.string()? else {
            continue;
        };
        if !is_vm_disk_name(text) {
            out.add(
                crate::rules::VM_DISK_REFERENCE,
                name.path(),
                format!(
                    "{text:?} cannot be the name of a VMDisk (a lowercase DNS-1035 label of at most \
                     {VM_DISK_NAME_MAX} characters), so the chart finds no DataVolume vm-disk-{text} and fails to \
                     render (Specified disk not exists in cluster). Name a VMDisk of this namespace."
                ),
            );
        } else {
            out.add(
                crate::rules::VM_DISK_UNVERIFIED,
                name.path(),
                format!(
                    "the chart looks up the VMDisk {text:?} (DataVolume vm-disk-{text} of this namespace) and fails \
                     to render when there is none (Specified disk not exists in cluster); this policy does not read \
                     the cluster. Create the VMDisk first."
                ),
            );
        }
    }
    Ok(())
}

/// A DNS-1035 label cozystack-api accepts as a VMDisk's name.
fn is_vm_disk_name(name: &str) -> bool {
    name.len() <= VM_DISK_NAME_MAX
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// `packages/apps/vm-instance/templates/vm.yaml` (8): without an instance
/// type, `resources.cpu`, `sockets` and `memory` are all needed. (Whether a
/// named instance type or profile exists is a cluster read.)
fn vm_instance(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let [instance_type, resources] = spec.members(["instanceType", "resources"])?;
    // Absent, the chart default u1.medium applies.
    if !instance_type.is_present() || truthy(instance_type.json()) {
        return Ok(());
    }
    let [cpu, sockets, memory] = resources.members(["cpu", "sockets", "memory"])?;
    let missing: Vec<&str> = [("cpu", &cpu), ("sockets", &sockets), ("memory", &memory)]
        .into_iter()
        .filter(|(_, field)| !truthy(field.json()))
        .map(|(key, _)| key)
        .collect();
    if !missing.is_empty() {
        out.add(
            crate::rules::VM_INSTANCE_SIZE,
            instance_type.path(),
            format!(
                "Either instanceType or resources (cpu, sockets, memory) must be specified (the chart fails to \
                 render; instanceType is empty and resources lacks {}). Name an instance type, or set \
                 resources.cpu, resources.sockets and resources.memory.",
                missing.join(", ")
            ),
        );
    }
    Ok(())
}

/// `packages/extra/etcd/templates/etcd-cluster.yaml` (25): the quota is
/// computed from `size` with `regexFind`, which needs a string; the schema
/// also allows an integer.
fn etcd_size(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let size = spec.field("size")?;
    if let Some(number @ Value::Number(_)) = size.json() {
        out.add(
            crate::rules::ETCD_SIZE,
            size.path(),
            format!(
                "{number} is a number, and the chart computes quotaBackendBytes from size with regexFind, which \
                 needs a string (the chart fails to render). Write the size as a quantity string with its unit, \
                 such as \"4Gi\"."
            ),
        );
    }
    Ok(())
}

/// `packages/apps/openbao/templates/openbao.yaml` (41) writes `size`
/// unquoted into the values of the `system` release, whose chart (the
/// upstream openbao chart's schema) wants `server.dataStorage.size` to be a
/// string: a number, or a string YAML reads back as one, fails that
/// release. The application's own schema allows both.
fn openbao_size(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let size = spec.field("size")?;
    let shown = match size.json() {
        Some(number @ Value::Number(_)) => format!("{number} is a number"),
        Some(Value::String(text)) if crate::values::reads_as_number(text) => {
            format!("\"{text}\" has no unit, so it is written into the OpenBAO release as a number")
        }
        _ => return Ok(()),
    };
    out.add(
        crate::rules::OPENBAO_SIZE,
        size.path(),
        format!(
            "{shown}, and the openbao chart of the OpenBAO release requires server.dataStorage.size to be a string \
             (the release fails to install). Write the size with its unit, such as \"10Gi\"."
        ),
    );
    Ok(())
}

/// The namespace of the platform's host (external-facing) ingress unless
/// the operator changes it: `publishing.ingressName` of `core/platform`'s
/// `values.yaml`, which `_cluster.expose-ingress` carries.
const HOST_INGRESS: &str = "tenant-root";

/// `packages/extra/ingress/templates/nginx-ingress.yaml`: the per-app
/// switches. On the host ingress the per-app `proxyProtocol` fails (line
/// 16); which ingress is the host's is a platform value this policy does
/// not read, so the default one is warned about. (There the platform's
/// `proxy-protocol` also counts against `cloudflareProxy`; not checked.)
fn ingress(namespace: &str, spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let [cloudflare, proxy] = spec.members(["cloudflareProxy", "proxyProtocol"])?;
    if namespace == HOST_INGRESS && proxy.bool()? == Some(true) {
        out.add(
            crate::rules::HOST_INGRESS_PROXY_PROTOCOL,
            proxy.path(),
            "tenant-root's Ingress is the platform's host ingress unless publishing.ingressName names another \
             tenant, and there the chart fails to render: On the host (external-facing) ingress, enable \
             PROXY-protocol via publishing.proxyProtocol, not the per-app proxyProtocol value. Remove it and set \
             publishing.proxyProtocol on the platform.",
        );
    }
    if cloudflare.bool()? == Some(true) && proxy.bool()? == Some(true) {
        out.add(
            crate::rules::INGRESS_PROXY_PROTOCOL,
            proxy.path(),
            "cloudflareProxy and proxyProtocol are mutually exclusive: Cloudflare's HTTP proxy does not send \
             PROXY-protocol frames, and the cloudflareProxy server-snippet overrides real-ip-header proxy_protocol \
             (the chart fails to render). Turn one off.",
        );
    }
    Ok(())
}

/// `packages/extra/external-dns/templates/external-dns.yaml`: the schema
/// has the enum but no default and does not require the key.
fn external_dns(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let provider = spec.field("provider")?;
    if provider.string()?.is_none_or(str::is_empty) {
        out.add(
            crate::rules::EXTERNAL_DNS_PROVIDER,
            provider.path(),
            "provider is required: set it to one of cloudflare, aws, azure, google, digitalocean, linode, ovh, \
             exoscale, godaddy, inmemory (the chart fails to render).",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_disk_names_as_cozystack_api_allows_them() {
        for ok in ["x", "ubuntu-2404", "a1", &"a".repeat(45)] {
            assert!(is_vm_disk_name(ok), "{ok:?}");
        }
        for bad in ["", "1disk", "UPPER case", "disk-", "a_b", &"a".repeat(46)] {
            assert!(!is_vm_disk_name(bad), "{bad:?}");
        }
    }
}
