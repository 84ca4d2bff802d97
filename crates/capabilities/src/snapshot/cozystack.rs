//! What every Cozystack management cluster serves and holds, so that a
//! capture that says otherwise is a failed read, never an empty cluster.
//!
//! Source, at v1.5.4 and v1.6.2: the installer (`packages/core/installer`)
//! brings Flux and the cozystack-operator (Packages, ApplicationDefinitions)
//! into the `cozy-system` namespace; the platform's `system` bundle, which
//! every variant (`isp-full`, `isp-full-generic`, `isp-hosted`) renders
//! (`packages/core/platform/templates/bundles/system.yaml`), installs
//! cert-manager, the postgres-operator (CNPG), the legacy etcd-operator,
//! cozystack-api (`packages/system/cozystack-api/templates/apiservice.yaml`:
//! the aggregated groups `apps.cozystack.io` and `core.cozystack.io`), and
//! the tenant, SeaweedFS and Etcd applications; the root tenant is
//! `tenant-root`. The Kubernetes application, CAPI and the LINSTOR classes
//! are the `iaas` bundle's and `isp-full`'s only, so they may be absent.

/// Kinds every Cozystack management cluster serves, as `(group, kind)`: a
/// capture that records one of them as not installed failed to read it (an
/// aggregated API that does not answer, a discovery that timed out).
pub const SERVED: &[(&str, &str)] = &[
    ("", "Namespace"),
    ("", "Node"),
    ("", "ConfigMap"),
    ("", "Secret"),
    ("", "PersistentVolumeClaim"),
    ("", "ResourceQuota"),
    ("apps", "StatefulSet"),
    ("apps", "Deployment"),
    ("storage.k8s.io", "StorageClass"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("helm.toolkit.fluxcd.io", "HelmRelease"),
    ("cozystack.io", "Package"),
    ("cozystack.io", "ApplicationDefinition"),
    ("apps.cozystack.io", "Tenant"),
    ("apps.cozystack.io", "SeaweedFS"),
    ("apps.cozystack.io", "Etcd"),
    ("cert-manager.io", "Certificate"),
    ("postgresql.cnpg.io", "Cluster"),
];

/// `(group, kind, (namespace, name))`: one object, or any object of the
/// kind when the name is `None`.
pub type Held = (
    &'static str,
    &'static str,
    Option<(&'static str, &'static str)>,
);

/// Objects every Cozystack management cluster holds. A capture that read
/// them and found none is no capture of one.
pub const HELD: &[Held] = &[
    ("", "Namespace", Some(("", "cozy-system"))),
    ("", "Node", None),
    ("apps.cozystack.io", "Tenant", None),
];

/// Groups served through the aggregation layer by cozystack-api: while
/// their APIService is not Available, kubectl says "the server doesn't
/// have a resource type" for every kind of them.
pub const AGGREGATED: &[&str] = &["apps.cozystack.io", "core.cozystack.io"];

/// Whether every Cozystack management cluster serves `group`/`kind`.
pub fn served(group: &str, kind: &str) -> bool {
    SERVED.contains(&(group, kind))
}
