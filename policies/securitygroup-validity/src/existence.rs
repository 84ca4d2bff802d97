//! Whether the applications and SecurityGroups a group names exist in its
//! namespace: at most one context-aware call per kind, and only for kinds
//! the object refers to.
//!
//! - Applications are HelmReleases: cozystack-api stores each as one, with
//!   the lineage labels `apps.cozystack.io/application.kind` and
//!   `.name`. One list of the namespace's HelmReleases that carry the kind
//!   label, masked to their labels, answers every reference. The selector
//!   is the same for every request, so policy-server keeps one watch per
//!   namespace and its cache serves the next request too.
//! - SecurityGroups are CiliumNetworkPolicies with the marker label
//!   `sdn.cozystack.io/securitygroup: "true"`: cozystack-api serves the
//!   group API from them. Reading the CNPs from kube-apiserver (names only)
//!   avoids a call back into cozystack-api, which is the apiserver waiting
//!   on this very admission request.
//!
//! A lookup that fails is reported as a warning and the static verdict
//! stands: a host error says nothing about the object.

use shared::lookup::{Cluster, ListByNamespace, LookupError, label, list_items, text};
use shared::{FieldPath, Findings};

use crate::spec::{AppTarget, GroupTarget};

pub const HELM_RELEASE_API_VERSION: &str = "helm.toolkit.fluxcd.io/v2";
pub const HELM_RELEASE_KIND: &str = "HelmRelease";
pub const KIND_LABEL: &str = "apps.cozystack.io/application.kind";
pub const NAME_LABEL: &str = "apps.cozystack.io/application.name";
const HELM_RELEASE_MASKS: &[&str] = &["metadata.labels"];

pub const NETWORK_POLICY_API_VERSION: &str = "cilium.io/v2";
pub const NETWORK_POLICY_KIND: &str = "CiliumNetworkPolicy";
pub const SECURITY_GROUP_SELECTOR: &str = "sdn.cozystack.io/securitygroup=true";
const NETWORK_POLICY_MASKS: &[&str] = &["metadata.name"];

/// The applications of `namespace` as `(kind, name)`.
fn applications(
    cluster: &dyn Cluster,
    namespace: &str,
) -> Result<Vec<(String, String)>, LookupError> {
    let answer = cluster.list_by_namespace(&ListByNamespace {
        api_version: HELM_RELEASE_API_VERSION,
        kind: HELM_RELEASE_KIND,
        namespace,
        label_selector: Some(KIND_LABEL),
        field_selector: None,
        field_masks: Some(HELM_RELEASE_MASKS),
    })?;
    let mut found = Vec::new();
    for release in list_items(&answer)? {
        if let (Some(kind), Some(name)) =
            (label(&release, KIND_LABEL)?, label(&release, NAME_LABEL)?)
        {
            found.push((kind.to_owned(), name.to_owned()));
        }
    }
    Ok(found)
}

/// The SecurityGroups of `namespace`, by name.
fn security_groups(cluster: &dyn Cluster, namespace: &str) -> Result<Vec<String>, LookupError> {
    let answer = cluster.list_by_namespace(&ListByNamespace {
        api_version: NETWORK_POLICY_API_VERSION,
        kind: NETWORK_POLICY_KIND,
        namespace,
        label_selector: Some(SECURITY_GROUP_SELECTOR),
        field_selector: None,
        field_masks: Some(NETWORK_POLICY_MASKS),
    })?;
    let mut found = Vec::new();
    for policy in list_items(&answer)? {
        if let Some(name) = text(&policy, "metadata.name")? {
            found.push(name.to_owned());
        }
    }
    Ok(found)
}

/// Records a reference that names nothing.
fn missing(out: &mut Findings, path: FieldPath, what: String) {
    out.add(crate::rules::MISSING_TARGET, path, what);
}

/// Checks `apps` and `groups` against the cluster. `namespace` is empty
/// when the request has none (then nothing can be looked up).
pub fn check(
    cluster: &dyn Cluster,
    namespace: &str,
    apps: &[&AppTarget<'_>],
    groups: &[&GroupTarget<'_>],
    out: &mut Findings,
) {
    if let Some(first) = apps.first() {
        let found = if namespace.is_empty() {
            Err(LookupError("the request has no namespace".to_owned()))
        } else {
            applications(cluster, namespace)
        };
        match found {
            Ok(found) => {
                for app in apps {
                    if !found.iter().any(|(k, n)| *k == app.kind && *n == app.name) {
                        let effect = if app.attachment {
                            "the attachment selects no pods until it does"
                        } else {
                            "this peer matches no pods until it does"
                        };
                        missing(
                            out,
                            app.reference.path(),
                            format!(
                                "{} {:?} does not exist in {namespace}: {effect}",
                                app.kind, app.name
                            ),
                        );
                    }
                }
            }
            Err(error) => not_checked(out, first.list.path(), "applications", namespace, &error),
        }
    }
    if let Some(first) = groups.first() {
        let found = if namespace.is_empty() {
            Err(LookupError("the request has no namespace".to_owned()))
        } else {
            security_groups(cluster, namespace)
        };
        match found {
            Ok(found) => {
                for group in groups {
                    if !found.iter().any(|n| *n == group.name) {
                        missing(
                            out,
                            group.reference.path(),
                            format!(
                                "SecurityGroup {:?} does not exist in {namespace}: \
                                 this peer matches no pods until it does",
                                group.name
                            ),
                        );
                    }
                }
            }
            Err(error) => not_checked(out, first.list.path(), "SecurityGroups", namespace, &error),
        }
    }
}

/// Records that the `what` of `namespace` could not be listed: the static
/// verdict stands, and the warning says why, in the host's own words.
fn not_checked(
    out: &mut Findings,
    path: FieldPath,
    what: &str,
    namespace: &str,
    error: &LookupError,
) {
    let reason = if namespace.is_empty() {
        error.to_string()
    } else {
        format!("cannot list the {what} of {namespace}: {error}")
    };
    out.add(
        crate::rules::EXISTENCE_NOT_CHECKED,
        path,
        format!("existence not checked: {reason}"),
    );
}
