//! Tenant Kubernetes workers across the Talos rollover.
//!
//! Source: the v1.6 release notes, "Talos Linux for tenant Kubernetes
//! workers", and at v1.5.4 and v1.6.2 `packages/apps/kubernetes`:
//!
//! - "Worker MachineHealthCheck remediation is now ON by default.
//!   maxUnhealthy moved from a hard-coded 0 to nodeHealthCheck.maxUnhealthy,
//!   defaulting to \"50%\" ... Set nodeHealthCheck.maxUnhealthy: \"0%\" to
//!   keep the old behaviour": v1.5.4 `templates/cluster.yaml` renders every
//!   MachineHealthCheck with `maxUnhealthy: 0` and its schema has no
//!   `nodeHealthCheck`; v1.6.2's schema defaults it to `50%`, a node group's
//!   own `maxUnhealthy` winning. A stored 1.5 object without it is
//!   remediated at 50% from the upgrade on ([`remediation`]).
//! - "The default md0 node group is no longer merged into every cluster ...
//!   Migration 47 pins md0 explicitly on existing CRs": v1.5.4's
//!   `values.yaml` has `nodeGroups.md0`, which Helm merges into every
//!   cluster's groups; v1.6.2 applies md0 only when `nodeGroups` is empty,
//!   and `migrations/47` adds md0 to live objects whose `nodeGroups` lacks it
//!   so Helm does not prune the md0 MachineDeployment. The source a GitOps
//!   repository applies the object from still lacks it ([`implicit_md0`]).
//! - "Air-gapped installations lose the registries.mirrors passthrough to
//!   tenant workers": v1.5.4's `templates/copy-patch-containerd.yaml` copies
//!   `cozy-system/patch-containerd` (rendered by the platform chart from
//!   `registries.mirrors`) to each cluster and `cluster.yaml` writes it into
//!   the kubeadm workers; v1.6.2 has neither, and Talos workers get no
//!   mirrors ([`registry_mirrors`], one `get` of that Secret, by name,
//!   masked to its name).
//!
//! - "Worker node disks now default to the application-level replicated
//!   StorageClass ... because linstor-csi v1.11.2 rejects ReadWriteMany
//!   volumes on a non-DRBD class and worker VMs need RWX to live-migrate":
//!   v1.6.2 `templates/cluster.yaml` writes each worker DataVolume's
//!   `storageClassName` as `.group.storageClass | default
//!   $.Values.storageClass` (omitted, so the cluster's default class, when
//!   both are empty), and takes ReadWriteMany from that class's CDI
//!   StorageProfile ([`disks`], one list of the StorageClasses).
//!
//! Fresh clusters coming up with zero workers (`nodeGroups: {}`) are
//! chart-render's `ingress-without-initial-workers`.
//!
//! Remediation, md0 and the mirrors are warnings: the upgrade goes through,
//! and what changes is how the workers behave afterwards. A worker disk
//! that cannot be provisioned (no such class, a LINSTOR class without DRBD)
//! stalls the rollover: a violation.

use crate::some;
use shared::lookup::{GetResource, ListAll, LookupError, get_optional, list_items, text};
use shared::{Field, FieldError, FieldPath, Findings, Request, Value};

use crate::rules::{
    IMPLICIT_MD0, REGISTRY_MIRRORS, REGISTRY_MIRRORS_NOT_CHECKED, WORKER_DISK_CLASS_REFUSED,
    WORKER_DISK_CLASS_UNVERIFIED, WORKER_DISK_NOT_CHECKED, WORKER_REMEDIATION,
};

pub const KIND: &str = "Kubernetes";
pub const MIRRORS_NAMESPACE: &str = "cozy-system";
pub const MIRRORS_SECRET: &str = "patch-containerd";
const NAME_MASK: &[&str] = &["metadata.name"];
const MD0: &str = "md0";
pub const CLASS_API_VERSION: &str = "storage.k8s.io/v1";
pub const CLASS_KIND: &str = "StorageClass";
const CLASS_MASKS: &[&str] = &[
    "metadata.name",
    "metadata.annotations",
    "provisioner",
    "parameters",
];
const DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
/// `storageClass` of `packages/apps/kubernetes/values.yaml` at v1.6.2.
const APPLICATION_CLASS: &str = "replicated";
const LINSTOR: &str = "linstor.csi.linbit.com";
const LAYER_LIST: &str = "linstor.csi.linbit.com/layerList";

/// The node groups the 1.6 chart renders: the written ones, or md0 alone.
fn groups<'f>(object: &Field<'f>) -> Result<Vec<(String, Field<'f>)>, FieldError> {
    let written = object.at("spec.nodeGroups")?.entries()?;
    Ok(if written.is_empty() {
        vec![(MD0.to_owned(), Field::new(FieldPath::root(), None))]
    } else {
        written
            .into_iter()
            .map(|(name, group)| (name.to_owned(), group))
            .collect()
    })
}

/// What the object itself shows: remediation and md0.
pub fn judge(object: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    remediation(object, out)?;
    implicit_md0(object, out)
}

/// Worker remediation that 1.6's default turns on.
fn remediation(object: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let check = object.at("spec.nodeHealthCheck")?;
    if check.field("maxUnhealthy")?.is_present() {
        return Ok(());
    }
    let mut remediated = Vec::new();
    for (name, group) in groups(object)? {
        if !group.field("maxUnhealthy")?.is_present() {
            remediated.push(name);
        }
    }
    if remediated.is_empty() {
        return Ok(());
    }
    out.add(
        WORKER_REMEDIATION,
        check.path().key("maxUnhealthy"),
        format!(
            "is not set: 1.6 remediates workers at \"50%\" (1.5 never does), so CAPI replaces unhealthy \
             workers of {}; set \"0%\" to keep 1.5's behaviour",
            some(&remediated)
        ),
    );
    Ok(())
}

/// Node groups without md0, which 1.5 merges in.
fn implicit_md0(object: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let groups = object.at("spec.nodeGroups")?;
    let written = groups.entries()?;
    if written.is_empty() || written.iter().any(|(name, _)| *name == MD0) {
        return Ok(());
    }
    out.add(
        IMPLICIT_MD0,
        groups.path(),
        "has no md0, which 1.5 merges in and 1.6 does not: migration 47 adds it to this object; add it to \
         the object's Git source too, or the next apply drops it and Helm deletes the md0 workers",
    );
    Ok(())
}

/// Registry mirrors that 1.6's Talos workers lose.
pub fn registry_mirrors(request: &Request<'_>, out: &mut Findings) {
    let secret = get_optional(
        request.cluster(),
        &GetResource {
            api_version: "v1",
            kind: "Secret",
            name: MIRRORS_SECRET,
            namespace: Some(MIRRORS_NAMESPACE),
            disable_cache: false,
            field_masks: Some(NAME_MASK),
        },
    );
    match secret {
        Ok(None) => {}
        Ok(Some(_)) => out.add(
            REGISTRY_MIRRORS,
            FieldPath::root(),
            format!(
                "{MIRRORS_NAMESPACE}/{MIRRORS_SECRET} holds registry mirrors, which 1.6's Talos workers no \
                 longer get: workers without access to public registries stall the rollover; set \
                 talos.imageFactoryURL and talos.installerRepository"
            ),
        ),
        Err(error) => out.add(
            REGISTRY_MIRRORS_NOT_CHECKED,
            FieldPath::root(),
            format!("the registry mirrors were not checked: {error}"),
        ),
    }
}

/// A StorageClass as the rule reads it.
struct Class {
    name: String,
    default: bool,
    provisioner: String,
    /// `layerList` without `drbd`: LINSTOR's default includes it.
    without_drbd: bool,
}

fn classes(request: &Request<'_>) -> Result<Vec<Class>, LookupError> {
    let answer = request.cluster().list_all(&ListAll {
        api_version: CLASS_API_VERSION,
        kind: CLASS_KIND,
        label_selector: None,
        field_selector: None,
        field_masks: Some(CLASS_MASKS),
    })?;
    let mut found = Vec::new();
    for item in list_items(&answer)? {
        let annotation = item
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(DEFAULT_CLASS))
            .and_then(Value::as_str);
        let layers = item
            .pointer("/parameters")
            .and_then(|p| p.get(LAYER_LIST))
            .and_then(Value::as_str);
        found.push(Class {
            name: text(&item, "metadata.name")?.unwrap_or_default().to_owned(),
            default: annotation == Some("true"),
            provisioner: text(&item, "provisioner")?.unwrap_or_default().to_owned(),
            without_drbd: layers.is_some_and(|list| {
                !list
                    .split_whitespace()
                    .any(|layer| layer.eq_ignore_ascii_case("drbd"))
            }),
        });
    }
    Ok(found)
}

/// The class each worker disk gets, where it is chosen, and its groups.
fn chosen<'f>(object: &Field<'f>) -> Result<Vec<(String, FieldPath, Vec<String>)>, FieldError> {
    let application = object.at("spec.storageClass")?;
    let fallback = match application.string()? {
        Some(name) => name.to_owned(),
        None if application.is_present() => String::new(),
        None => APPLICATION_CLASS.to_owned(),
    };
    let mut by_class: Vec<(String, FieldPath, Vec<String>)> = Vec::new();
    for (group, field) in groups(object)? {
        let own = field.field("storageClass")?;
        let (class, path) = match own.string()? {
            Some(name) if !name.is_empty() => (name.to_owned(), own.path()),
            _ => (fallback.clone(), application.path()),
        };
        match by_class
            .iter_mut()
            .find(|(c, p, _)| *c == class && *p == path)
        {
            Some((_, _, groups)) => groups.push(group),
            None => by_class.push((class, path, vec![group])),
        }
    }
    Ok(by_class)
}

/// Worker disks on the class 1.6 gives them.
pub fn disks(
    request: &Request<'_>,
    object: &Field<'_>,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let chosen = chosen(object)?;
    let classes = match classes(request) {
        Ok(classes) => classes,
        Err(error) => {
            out.add(
                WORKER_DISK_NOT_CHECKED,
                FieldPath::root(),
                format!(
                    "not checked: the StorageClasses of the worker disks could not be read: {error}"
                ),
            );
            return Ok(());
        }
    };
    for (name, path, groups) in chosen {
        let class = if name.is_empty() {
            classes.iter().find(|c| c.default)
        } else {
            classes.iter().find(|c| c.name == name)
        };
        let disks = format!("the worker disks of {}", some(&groups));
        match class {
            None if name.is_empty() => out.add(
                WORKER_DISK_CLASS_REFUSED,
                path,
                format!(
                    "is empty and the cluster has no default StorageClass: {disks} stay Pending and the Talos \
                     rollover stalls; name a replicated (DRBD) class"
                ),
            ),
            None => out.add(
                WORKER_DISK_CLASS_REFUSED,
                path,
                format!(
                    "StorageClass {name:?} does not exist: {disks} stay Pending and the Talos rollover stalls; \
                     name a replicated (DRBD) class"
                ),
            ),
            Some(class) if class.provisioner == LINSTOR && class.without_drbd => out.add(
                WORKER_DISK_CLASS_REFUSED,
                path,
                format!(
                    "StorageClass {:?} is a LINSTOR class without DRBD: linstor-csi refuses the ReadWriteMany \
                     volumes worker VMs need to live-migrate, so {disks} are never provisioned and the Talos \
                     rollover stalls; name a replicated (DRBD) class",
                    class.name
                ),
            ),
            Some(class) if class.provisioner != LINSTOR => out.add(
                WORKER_DISK_CLASS_UNVERIFIED,
                path,
                format!(
                    "StorageClass {:?} ({}) is not a LINSTOR class: {disks} get ReadWriteMany only if its CDI \
                     StorageProfile gives it, and without it the worker VMs cannot live-migrate; check \
                     `kubectl get storageprofile {}`",
                    class.name, class.provisioner, class.name
                ),
            ),
            Some(_) => {}
        }
    }
    Ok(())
}
