//! Names and namespaces the charts fix (v1.6.2):
//!
//! - `packages/extra/{etcd,monitoring,ingress,bootbox}/templates/
//!   check-release-name.yaml`: `The name of the release MUST BE <chart>`
//!   (these tenant modules have no release prefix, so the application's
//!   name is the release name); the release's table names the kinds whose
//!   chart has this check ([`release::Release::fixed_name`]). BootBox also
//!   `The namespace of the release MUST BE tenant-root`.
//! - `packages/apps/tenant/templates/_helpers.tpl`: `The release namespace
//!   should start with "tenant-"`. (The release-name check, no dashes, is
//!   cozystack-api's own name validation, which refuses such names first.)
//! - `packages/apps/kubernetes-nodes/templates/_helpers.tpl`: `cluster` is
//!   required, and the application must be named `<cluster>-<pool>`.

use release::Release;
use shared::{Field, FieldError, FieldPath};

use shared::Findings;

/// Fixed names and namespaces.
pub fn check(kind: &str, name: &str, namespace: &str, release: Release, out: &mut Findings) {
    if let Some(fixed) = release.fixed_name(kind)
        && name != fixed
    {
        out.add(
            crate::rules::FIXED_NAME,
            FieldPath::parse("metadata.name"),
            format!(
                "The name of the release MUST BE {fixed} (the {kind} chart fails to render under any other name, \
                 found {name:?}). Name it {fixed}: one per tenant."
            ),
        );
    }
    if kind == "BootBox" && namespace != "tenant-root" {
        out.add(
            crate::rules::FIXED_NAMESPACE,
            FieldPath::parse("metadata.namespace"),
            format!(
                "The namespace of the release MUST BE tenant-root (the BootBox chart fails to render in {namespace:?}). \
                 Create it in tenant-root."
            ),
        );
    }
    if kind == "Tenant" && !namespace.starts_with("tenant-") {
        out.add(
            crate::rules::TENANT_NAMESPACE,
            FieldPath::parse("metadata.namespace"),
            format!(
                "The release namespace should start with \"tenant-\": {namespace} (the Tenant chart fails to render). \
                 Create the Tenant in tenant-root or in another tenant's namespace."
            ),
        );
    }
}

/// `KubernetesNodes`: the parent cluster and the `<cluster>-<pool>` name.
pub fn kubernetes_nodes(
    spec: &Field<'_>,
    name: &str,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let cluster = spec.field("cluster")?;
    let Some(parent) = cluster.string()?.filter(|c| !c.is_empty()) else {
        out.add(
            crate::rules::NODES_CLUSTER,
            cluster.path(),
            "kubernetes-nodes: .Values.cluster is required — set it to the parent Kubernetes CR name so the pool \
             attaches to cluster kubernetes-<cluster> (the chart fails to render).",
        );
        return Ok(());
    };
    let pool = name
        .strip_prefix(parent)
        .and_then(|rest| rest.strip_prefix('-'));
    if pool.is_none_or(str::is_empty) {
        out.add(
            crate::rules::NODES_NAME,
            FieldPath::parse("metadata.name"),
            format!(
                "kubernetes-nodes: release name \"kubernetes-nodes-{name}\" must start with \
                 \"kubernetes-nodes-{parent}-\" — name the KubernetesNodes CR <cluster>-<pool> (cluster={parent:?}), \
                 for example {parent}-workers (the chart fails to render)."
            ),
        );
    }
    Ok(())
}

/// A pool named `md0`: a parent Kubernetes without `nodeGroups` renders the
/// implicit group md0 (`apps/kubernetes/templates/_helpers.tpl`,
/// `kubernetes.nodeGroups`), whose MachineDeployment `kubernetes-<cluster>-
/// md0` its own release owns, and this chart then fails
/// (`_helpers.tpl`, `assertNoForeignPool`). Whether the parent has node
/// groups is cluster state.
pub fn nodes_md0(pool: &str, out: &mut Findings) {
    if pool == "md0" {
        out.add(
            crate::rules::NODES_MD0,
            FieldPath::parse("metadata.name"),
            "the pool md0 collides with the implicit node group md0 of a parent Kubernetes that has no nodeGroups \
             (its MachineDeployment is already managed by the parent's release, and this chart fails to render); \
             this policy does not read the parent. Give the parent its own nodeGroups, or name the pool otherwise.",
        );
    }
}

/// The pool a KubernetesNodes application names (`<cluster>-<pool>`), as
/// `_helpers.tpl`'s `kubernetes-nodes.groupName` makes it; the whole name
/// when it does not read so (`nodes-name` denies that).
pub fn pool_name(spec: &Field<'_>, name: &str) -> String {
    let cluster = spec
        .field("cluster")
        .ok()
        .and_then(|c| c.string().ok().flatten());
    cluster
        .and_then(|parent| name.strip_prefix(parent))
        .and_then(|rest| rest.strip_prefix('-'))
        .filter(|pool| !pool.is_empty())
        .unwrap_or(name)
        .to_owned()
}
