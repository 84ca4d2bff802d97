//! Hierarchical tenant quotas: what Cozystack 1.6 enforces, checked on a
//! 1.5 cluster before it does.
//!
//! Source: the v1.6 release notes ("Hierarchical tenant resource quotas":
//! "A tenant's declared quota is now the budget for its whole sub-tree ...
//! Findings sub-tenant quotas before upgrading. A parent quota lowered below
//! the sum of its children emits a QuotaOvercommitted event"), and at
//! v1.6.2:
//!
//! - `pkg/registry/apps/application/quota.go`, the declaration-time gate in
//!   cozystack-api: a sub-tenant's declared quota may not exceed, per key
//!   the parent bounds, the parent's quota minus its siblings' declared
//!   quotas minus the parent pool's usage (`ResourceQuota.status.used` of
//!   the parent's namespace and its unbounded descendants, the per-key
//!   maximum per namespace, in the rendered key space of
//!   `renderedLimitKey`). A sub-tenant without a quota is allowed; so is
//!   any key the parent does not bound. The root tenant is its own parent
//!   there; it is judged by [`TENANT_QUOTA_OVERCOMMITTED`] instead.
//! - cozystack-controller `internal/controller/tenantquota/pool.go`: every
//!   bounded tenant is a pool; each bounded tenant is carved out of the
//!   pool of its parent's nearest bounded ancestor; a pool whose carve-outs
//!   exceed its budget is `Overcommitted` (the `QuotaOvercommitted` event,
//!   `reconciler.go`), and its members are clamped to `max(budget -
//!   carve-outs, 0)`; an unbounded tenant is a member of its nearest
//!   bounded ancestor's pool.
//!
//! The controller compares the chart-rendered `tenant-quota` (declared
//! values through `cozy-lib.resources.flatten`); the rule compares the
//! declared values, which the flattening scales alike for every tenant.
//!
//! The tenant tree is one cluster-wide list of the Tenant HelmReleases
//! (cozystack-api stores each Tenant as one, `spec.values` its spec), read
//! from kube-apiserver; the pool usage one list of ResourceQuotas, read
//! only when a sub-tenant's remaining budget is in question.

use std::collections::{BTreeMap, BTreeSet};

use shared::lookup::{ListAll, LookupError, list_items, text};
use shared::{Field, FieldError, FieldPath, Findings, Operation, Request, Value};

use crate::quantity::Quantity;
use crate::rules::{
    TENANT_QUOTA_EXCEEDS_PARENT, TENANT_QUOTA_NOT_CHECKED, TENANT_QUOTA_OVERCOMMITTED,
    TENANT_QUOTA_UNBOUNDED,
};
use crate::some;

pub const KIND: &str = "Tenant";
pub const RELEASE_API_VERSION: &str = "helm.toolkit.fluxcd.io/v2";
pub const RELEASE_KIND: &str = "HelmRelease";
/// cozystack-api's lineage labels of a Tenant's HelmRelease.
pub const TENANT_SELECTOR: &str = "apps.cozystack.io/application.kind=Tenant,apps.cozystack.io/application.group=apps.cozystack.io";
const RELEASE_MASKS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.values.resourceQuotas",
];
pub const QUOTA_API_VERSION: &str = "v1";
pub const QUOTA_KIND: &str = "ResourceQuota";
const QUOTA_MASKS: &[&str] = &["metadata.namespace", "status.used"];

const ROOT_NAMESPACE: &str = "tenant-root";
const PREFIX: &str = "tenant-";

/// Declared quotas by key (the keys as written: `cpu`, `memory`, ...).
type Quotas = BTreeMap<String, Quantity>;

/// The namespace a tenant `app` created in `namespace` owns
/// (`computeTenantNamespace`, `ownedNamespace`).
fn owned_namespace(namespace: &str, app: &str) -> String {
    match (namespace, app) {
        (ROOT_NAMESPACE, "root") => ROOT_NAMESPACE.to_owned(),
        (ROOT_NAMESPACE, _) => format!("{PREFIX}{app}"),
        _ => format!("{namespace}-{app}"),
    }
}

/// The namespace owned by the parent of the tenant owning `namespace`
/// (`parentNamespace`), `None` for the root and non-tenant namespaces.
fn parent_namespace(namespace: &str) -> Option<String> {
    if namespace == ROOT_NAMESPACE || !namespace.starts_with(PREFIX) {
        return None;
    }
    let segments: Vec<&str> = namespace.split('-').collect();
    Some(if segments.len() == 2 {
        ROOT_NAMESPACE.to_owned()
    } else {
        segments
            .get(..segments.len().saturating_sub(1))
            .unwrap_or_default()
            .join("-")
    })
}

/// `renderedLimitKey`: the rendered ResourceQuota key that carries a
/// declared key's budget.
fn rendered_key(key: &str) -> String {
    const RAW: &[&str] = &[
        "pods",
        "services",
        "services.loadbalancers",
        "services.nodeports",
        "services.clusterip",
        "configmaps",
        "secrets",
        "persistentvolumeclaims",
        "replicationcontrollers",
        "resourcequotas",
    ];
    match key {
        "storage" => "requests.storage".to_owned(),
        raw if RAW.contains(&raw) => raw.to_owned(),
        other => format!("limits.{other}"),
    }
}

/// Quotas from a `resourceQuotas` map; keys whose value is not a quantity
/// are left out (cozystack-api refuses them when they are written, and
/// skips a sibling that carries them).
fn quotas(map: Option<&Value>) -> Quotas {
    map.and_then(Value::as_object)
        .map(|entries| {
            entries
                .iter()
                .filter_map(|(key, value)| Some((key.clone(), Quantity::of_value(value)?)))
                .collect()
        })
        .unwrap_or_default()
}

fn add(sum: &mut Quotas, more: &Quotas) {
    for (key, value) in more {
        let entry = sum.entry(key.clone()).or_insert_with(Quantity::zero);
        *entry = entry.plus(*value);
    }
}

/// One tenant of the tree.
#[derive(Debug, Clone)]
struct Tenant {
    /// Where its HelmRelease is (its parent's namespace).
    namespace: String,
    /// The application's name (`tenant-<name>` is the release).
    name: String,
    owned: String,
    declared: Quotas,
}

impl Tenant {
    fn bounded(&self) -> bool {
        !self.declared.is_empty()
    }

    fn describe(&self) -> String {
        format!("Tenant {}/{}", self.namespace, self.name)
    }
}

/// The tree: the judged tenant and every other one.
struct Tree {
    judged: Tenant,
    others: Vec<Tenant>,
}

impl Tree {
    fn all(&self) -> impl Iterator<Item = &Tenant> {
        std::iter::once(&self.judged).chain(&self.others)
    }

    fn by_owned(&self, namespace: &str) -> Option<&Tenant> {
        self.all().find(|t| t.owned == namespace)
    }

    /// The nearest bounded tenant at or above `namespace` (`poolRootOf`).
    fn pool_root(&self, namespace: Option<String>) -> Option<&Tenant> {
        let mut current = namespace;
        while let Some(namespace) = current {
            if let Some(tenant) = self.by_owned(&namespace).filter(|t| t.bounded()) {
                return Some(tenant);
            }
            current = parent_namespace(&namespace);
        }
        None
    }

    /// The bounded tenants carved out of `root`'s pool (`ComputePools`).
    fn carved_out_of(&self, root: &Tenant) -> Vec<&Tenant> {
        self.all()
            .filter(|t| t.bounded() && t.owned != root.owned)
            .filter(|t| {
                self.pool_root(parent_namespace(&t.owned))
                    .is_some_and(|pool| pool.owned == root.owned)
            })
            .collect()
    }
}

fn tenants(request: &Request<'_>) -> Result<Vec<Tenant>, LookupError> {
    let answer = request.cluster().list_all(&ListAll {
        api_version: RELEASE_API_VERSION,
        kind: RELEASE_KIND,
        label_selector: Some(TENANT_SELECTOR),
        field_selector: None,
        field_masks: Some(RELEASE_MASKS),
    })?;
    let mut found = Vec::new();
    for release in list_items(&answer)? {
        let (Some(name), Some(namespace)) = (
            text(&release, "metadata.name")?,
            text(&release, "metadata.namespace")?,
        ) else {
            continue;
        };
        let Some(app) = name.strip_prefix(PREFIX) else {
            continue;
        };
        found.push(Tenant {
            namespace: namespace.to_owned(),
            name: app.to_owned(),
            owned: owned_namespace(namespace, app),
            declared: quotas(FieldPath::parse("spec.values.resourceQuotas").resolve(&release)),
        });
    }
    Ok(found)
}

/// The usage of every namespace in `members`: per namespace the per-key
/// maximum over its ResourceQuotas, summed (`parentPoolUsage`).
fn pool_usage(request: &Request<'_>, members: &BTreeSet<String>) -> Result<Quotas, LookupError> {
    let answer = request.cluster().list_all(&ListAll {
        api_version: QUOTA_API_VERSION,
        kind: QUOTA_KIND,
        label_selector: None,
        field_selector: None,
        field_masks: Some(QUOTA_MASKS),
    })?;
    let mut by_namespace: BTreeMap<String, Quotas> = BTreeMap::new();
    for quota in list_items(&answer)? {
        let Some(namespace) = text(&quota, "metadata.namespace")? else {
            continue;
        };
        if !members.contains(namespace) {
            continue;
        }
        let used = quotas(FieldPath::parse("status.used").resolve(&quota));
        let max = by_namespace.entry(namespace.to_owned()).or_default();
        for (key, value) in used {
            let entry = max.entry(key).or_insert(value);
            *entry = (*entry).max(value);
        }
    }
    let mut total = Quotas::new();
    for used in by_namespace.values() {
        add(&mut total, used);
    }
    Ok(total)
}

/// What the stored object declared at `key`, on UPDATE: a finding there is
/// not introduced by this change when it is the same.
struct Stored(Option<Value>);

impl Stored {
    fn read(request: &Request<'_>) -> Result<Self, FieldError> {
        Ok(Self(match request.operation {
            Operation::Update => request
                .required_old_object()?
                .at("spec.resourceQuotas")?
                .json()
                .cloned()
                .or(Some(Value::Null)),
            _ => None,
        }))
    }

    fn same(&self, key: &str, now: Option<&Value>) -> bool {
        self.0.as_ref().is_some_and(|old| old.get(key) == now)
    }

    fn was_bounded(&self) -> Option<bool> {
        self.0
            .as_ref()
            .map(|old| old.as_object().is_some_and(|o| !o.is_empty()))
    }
}

/// A Tenant: its quota against its sub-tenants' and its parent's.
pub fn hierarchy(
    request: &Request<'_>,
    object: &Field<'_>,
    out: &mut Findings,
) -> Result<(), FieldError> {
    if !request.namespace.starts_with(PREFIX) {
        return Ok(());
    }
    let field = object.at("spec.resourceQuotas")?;
    field.entries()?;
    let written = field.json();
    let stored = Stored::read(request)?;
    let judged = Tenant {
        namespace: request.namespace.to_string(),
        name: request.name.to_string(),
        owned: owned_namespace(&request.namespace, &request.name),
        declared: quotas(written),
    };
    let others = match tenants(request) {
        Ok(found) => found
            .into_iter()
            .filter(|t| !(t.namespace == judged.namespace && t.name == judged.name))
            .collect(),
        Err(error) => {
            not_checked(out, &field, &error);
            return Ok(());
        }
    };
    let tree = Tree { judged, others };
    let judged = &tree.judged;
    let value_at = |key: &str| written.and_then(|w| w.get(key));
    if !judged.bounded() {
        unbounded(&tree, &stored, &field, out);
        return Ok(());
    }
    // The pool this tenant roots: what its bounded sub-tenants take.
    let carved = tree.carved_out_of(judged);
    let mut carved_sum = Quotas::new();
    for tenant in &carved {
        add(&mut carved_sum, &tenant.declared);
    }
    for (key, budget) in &judged.declared {
        let Some(sum) = carved_sum.get(key).filter(|sum| *sum > budget) else {
            continue;
        };
        out.add_known(
            stored.same(key, value_at(key)),
            TENANT_QUOTA_OVERCOMMITTED,
            field.path().key(key),
            format!(
                "{budget} is below the {sum} its sub-tenants declare ({}): Cozystack 1.6's tenant-quota \
                 controller reports QuotaOvercommitted and leaves this tenant's own pool none of {key:?}, so \
                 {} and its sub-tenants without a quota cannot start workloads that need it. Lower a sub-tenant's \
                 quota or raise this one before upgrading",
                some(
                    &carved
                        .iter()
                        .filter(|t| t.declared.contains_key(key))
                        .map(|t| t.describe())
                        .collect::<Vec<_>>()
                ),
                judged.owned
            ),
        );
    }
    if judged.owned == ROOT_NAMESPACE {
        return Ok(());
    }
    exceeds_parent(request, &tree, &stored, &field, out);
    Ok(())
}

/// A bounded sub-tenant against its parent's remaining budget.
fn exceeds_parent(
    request: &Request<'_>,
    tree: &Tree,
    stored: &Stored,
    field: &Field<'_>,
    out: &mut Findings,
) {
    let judged = &tree.judged;
    let Some(parent) = tree.by_owned(&judged.namespace).filter(|p| p.bounded()) else {
        return;
    };
    let mut siblings = Quotas::new();
    for sibling in tree
        .others
        .iter()
        .filter(|t| t.namespace == judged.namespace)
    {
        add(&mut siblings, &sibling.declared);
    }
    let mut members: BTreeSet<String> = tree
        .all()
        .filter(|t| {
            tree.pool_root(Some(t.owned.clone()))
                .is_some_and(|pool| pool.owned == parent.owned)
        })
        .map(|t| t.owned.clone())
        .collect();
    members.insert(parent.owned.clone());
    members.remove(&judged.owned);
    let used = match pool_usage(request, &members) {
        Ok(used) => used,
        Err(error) => {
            not_checked(out, field, &error);
            return;
        }
    };
    let written = field.json();
    for (key, wanted) in &judged.declared {
        let Some(allowed) = parent.declared.get(key) else {
            continue;
        };
        let allocated = siblings.get(key).copied().unwrap_or_default();
        let in_use = used.get(&rendered_key(key)).copied().unwrap_or_default();
        let remaining = allowed.minus(allocated).minus(in_use);
        if *wanted <= remaining {
            continue;
        }
        out.add_known(
            stored.same(key, written.and_then(|w| w.get(key))),
            TENANT_QUOTA_EXCEEDS_PARENT,
            field.path().key(key),
            format!(
                "requested {wanted} exceeds the parent tenant's remaining {key:?} quota of {remaining} \
                 ({} allows {allowed}, {allocated} already allocated to sibling tenants, {in_use} currently \
                 in use by the parent pool): Cozystack 1.6 refuses this tenant at its next write and carves \
                 the whole {wanted} out of the parent's budget. Lower it, or raise the parent's, before upgrading",
                parent.describe()
            ),
        );
    }
}

/// A sub-tenant without a quota under a bounded ancestor.
fn unbounded(tree: &Tree, stored: &Stored, field: &Field<'_>, out: &mut Findings) {
    let judged = &tree.judged;
    let Some(pool) = tree.pool_root(parent_namespace(&judged.owned)) else {
        return;
    };
    let message = format!(
        "is empty under the budget of {}: 1.5 bounds this tenant by nothing, 1.6 makes it share that budget \
         (tenant-quota-allocated); declare its own quotas or accept sharing",
        pool.describe()
    );
    out.add_known(
        stored.was_bounded() == Some(false),
        TENANT_QUOTA_UNBOUNDED,
        field.path(),
        message,
    );
}

fn not_checked(out: &mut Findings, field: &Field<'_>, error: &LookupError) {
    out.add(
        TENANT_QUOTA_NOT_CHECKED,
        field.path(),
        format!("the tenant quotas were not checked: {error}"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_follow_the_platform() {
        assert_eq!(owned_namespace("tenant-root", "root"), "tenant-root");
        assert_eq!(owned_namespace("tenant-root", "foo"), "tenant-foo");
        assert_eq!(owned_namespace("tenant-foo", "bar"), "tenant-foo-bar");
        assert_eq!(parent_namespace("tenant-root"), None);
        assert_eq!(
            parent_namespace("tenant-foo").as_deref(),
            Some("tenant-root")
        );
        assert_eq!(
            parent_namespace("tenant-foo-bar").as_deref(),
            Some("tenant-foo")
        );
        assert_eq!(parent_namespace("cozy-system"), None);
        assert_eq!(rendered_key("cpu"), "limits.cpu");
        assert_eq!(rendered_key("storage"), "requests.storage");
        assert_eq!(
            rendered_key("services.loadbalancers"),
            "services.loadbalancers"
        );
    }
}
