//! Hierarchical tenant quotas: what Cozystack 1.6 enforces, checked on a
//! 1.5 cluster before it does.
//!
//! Source: the v1.6 release notes ("Hierarchical tenant resource quotas":
//! "A tenant's declared quota is now the budget for its whole sub-tree ...
//! A parent quota lowered below the sum of its children emits a
//! QuotaOvercommitted event"), and at v1.6.2 two components that read the
//! same tenants differently, each followed as it is:
//!
//! - cozystack-api's declaration-time gate,
//!   `pkg/registry/apps/application/quota.go`, on the DECLARED values as it
//!   decodes them ([`decode`]): a tenant whose `resourceQuotas` do not
//!   decode is refused ([`TENANT_QUOTA_UNDECODABLE`]); a bounded tenant may
//!   not exceed, per key its parent declares, the parent's quota minus its
//!   siblings' (an undecodable sibling skipped whole) minus the parent
//!   pool's usage ([`TENANT_QUOTA_EXCEEDS_PARENT`]; `parentPoolUsage`: the
//!   parent's namespace and the descendants whose nearest bounded ancestor
//!   it is, bounded meaning a decodable non-empty map, `null`s included,
//!   usage as `ResourceQuota.status.used`, the per-key maximum in each
//!   namespace, under `renderedLimitKey`). The parent is the tenant owning
//!   the namespace the tenant is written in, so the root tenant is its own
//!   parent, its siblings every tenant under it; a parent whose quotas do
//!   not decode refuses the write with an internal error.
//! - cozystack-controller's `internal/controller/tenantquota/`
//!   (`reconciler.go` `snapshot`, `pool.go` `ComputePools`,
//!   `Overcommitted`), on the chart-RENDERED `tenant-quota` ([`chart`]): a
//!   tenant is bounded when that ResourceQuota's `.spec.hard` is not
//!   empty; each bounded tenant is carved out of the pool of its parent's
//!   nearest bounded ancestor; a pool whose carve-outs exceed its budget
//!   on a rendered key is `Overcommitted` ([`TENANT_QUOTA_OVERCOMMITTED`])
//!   and its members clamped to `max(budget - carve-outs, 0)`; an
//!   unbounded tenant is a member of its nearest bounded ancestor's pool
//!   ([`TENANT_QUOTA_UNBOUNDED`]).
//!
//! The tenant tree is one cluster-wide list of the Tenant HelmReleases
//! (cozystack-api stores each Tenant as one, `spec.values` its spec), read
//! from kube-apiserver; the ratios the chart divides by, the platform
//! Package, read only when a tenant has sub-tenants to carve out; the pool
//! usage one list of ResourceQuotas, read only when a sub-tenant's
//! remaining budget is in question.

mod chart;
mod decode;

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};

use shared::lookup::{GetResource, ListAll, LookupError, get_optional, list_items, text};
use shared::{Field, FieldError, FieldPath, Findings, Operation, Request, Value};

use self::chart::{HardList, Plan, Ratios};
use self::decode::{Quotas, Undecodable};
use crate::quantity::Quantity;
use crate::rules::{
    TENANT_QUOTA_EXCEEDS_PARENT, TENANT_QUOTA_NOT_CHECKED, TENANT_QUOTA_OVERCOMMITTED,
    TENANT_QUOTA_UNBOUNDED, TENANT_QUOTA_UNDECODABLE,
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
const PACKAGE_MASKS: &[&str] = &[chart::RESOURCES];

const ROOT_NAMESPACE: &str = "tenant-root";
const PREFIX: &str = "tenant-";

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

fn add(sum: &mut BTreeMap<String, Quantity>, key: &str, value: Quantity) {
    let entry = sum.entry(key.to_owned()).or_insert_with(Quantity::zero);
    *entry = entry.plus(value);
}

/// One tenant, as both components read it. Its quotas are decoded and
/// rendered when a rule first asks: a judgement needs them of its subtree,
/// its parent and its siblings, never of every tenant listed.
#[derive(Debug, Clone)]
struct Tenant {
    /// Where its HelmRelease is (its parent's namespace).
    namespace: String,
    /// The application's name (`tenant-<name>` is the release).
    name: String,
    owned: String,
    quotas: Option<Value>,
    /// `resourceQuotas` as cozystack-api decodes them.
    declared: OnceCell<Result<Quotas, Vec<Undecodable>>>,
    /// What the chart renders of them, which the controller counts.
    plan: OnceCell<Plan>,
}

impl Tenant {
    fn new(namespace: &str, name: &str, quotas: Option<&Value>) -> Self {
        Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            owned: owned_namespace(namespace, name),
            quotas: quotas.cloned(),
            declared: OnceCell::new(),
            plan: OnceCell::new(),
        }
    }

    /// `resourceQuotas` as cozystack-api decodes them.
    fn declared(&self) -> &Result<Quotas, Vec<Undecodable>> {
        self.declared
            .get_or_init(|| decode::quotas(self.quotas.as_ref()))
    }

    /// What the chart renders of them.
    fn plan(&self) -> &Plan {
        self.plan.get_or_init(|| Plan::of(self.quotas.as_ref()))
    }

    /// Whether the tenant owning `namespace` is this one's descendant.
    fn owns_above(&self, namespace: &str) -> bool {
        namespace != self.owned
            && (self.owned == ROOT_NAMESPACE
                || namespace
                    .strip_prefix(self.owned.as_str())
                    .is_some_and(|rest| rest.starts_with('-')))
    }

    /// Bounded as cozystack-api counts it: a decodable, non-empty map.
    fn declares(&self) -> bool {
        self.declared().as_ref().is_ok_and(|q| !q.is_empty())
    }

    fn describe(&self) -> String {
        format!("Tenant {}/{}", self.namespace, self.name)
    }

    fn is(&self, other: &Tenant) -> bool {
        self.namespace == other.namespace && self.name == other.name
    }
}

/// Tenants by the namespace each owns, in the order given: where
/// `poolRootOf` looks a namespace up, once per level, without a scan of
/// every tenant (a cluster holds hundreds, and every one is judged).
struct Owners<'t>(BTreeMap<&'t str, Vec<&'t Tenant>>);

impl<'t> Owners<'t> {
    fn of(tenants: impl IntoIterator<Item = &'t Tenant>) -> Self {
        let mut owners: BTreeMap<&'t str, Vec<&'t Tenant>> = BTreeMap::new();
        for tenant in tenants {
            owners
                .entry(tenant.owned.as_str())
                .or_default()
                .push(tenant);
        }
        Self(owners)
    }

    /// The nearest tenant at or above `namespace` that `bounded` counts
    /// (`poolRootOf`): the first, in the order given, that owns it.
    fn pool_root(
        &self,
        namespace: Option<String>,
        bounded: &dyn Fn(&Tenant) -> bool,
    ) -> Option<&'t Tenant> {
        let mut current = namespace;
        while let Some(namespace) = current {
            let owner = self
                .0
                .get(namespace.as_str())
                .and_then(|owners| owners.iter().copied().find(|t| bounded(t)));
            if owner.is_some() {
                return owner;
            }
            current = parent_namespace(&namespace);
        }
        None
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
        let quotas = FieldPath::parse("spec.values.resourceQuotas").resolve(&release);
        found.push(Tenant::new(namespace, app, quotas));
    }
    Ok(found)
}

/// The usage of every namespace in `members`: per namespace the per-key
/// maximum over its ResourceQuotas, summed (`parentPoolUsage`).
fn pool_usage(
    request: &Request<'_>,
    members: &BTreeSet<String>,
) -> Result<BTreeMap<String, Quantity>, LookupError> {
    let answer = request.cluster().list_all(&ListAll {
        api_version: QUOTA_API_VERSION,
        kind: QUOTA_KIND,
        label_selector: None,
        field_selector: None,
        field_masks: Some(QUOTA_MASKS),
    })?;
    let mut by_namespace: BTreeMap<String, BTreeMap<String, Quantity>> = BTreeMap::new();
    for quota in list_items(&answer)? {
        let Some(namespace) = text(&quota, "metadata.namespace")? else {
            continue;
        };
        if !members.contains(namespace) {
            continue;
        }
        let used = FieldPath::parse("status.used").resolve(&quota);
        let max = by_namespace.entry(namespace.to_owned()).or_default();
        for (key, value) in used.and_then(Value::as_object).into_iter().flatten() {
            let Some(value) = Quantity::of_value(value) else {
                continue;
            };
            let entry = max.entry(key.clone()).or_insert(value);
            *entry = (*entry).max(value);
        }
    }
    let mut total = BTreeMap::new();
    for used in by_namespace.values() {
        for (key, value) in used {
            add(&mut total, key, *value);
        }
    }
    Ok(total)
}

/// The ratios the chart divides by: the platform Package's.
fn ratios(request: &Request<'_>) -> Result<Ratios, LookupError> {
    let package = get_optional(
        request.cluster(),
        &GetResource {
            api_version: chart::PACKAGE_API_VERSION,
            kind: chart::PACKAGE_KIND,
            name: chart::PLATFORM_PACKAGE,
            namespace: None,
            disable_cache: false,
            field_masks: Some(PACKAGE_MASKS),
        },
    )?;
    Ok(Ratios::of_package(package.as_ref()))
}

/// What the stored object declared, on UPDATE: a finding there is not
/// introduced by this change when it is the same.
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

    fn same_map(&self, now: Option<&Value>) -> bool {
        self.0
            .as_ref()
            .is_some_and(|old| Some(old) == now || (old.is_null() && now.is_none()))
    }

    /// Whether the stored object rendered no quota either.
    fn was_unbounded(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|old| !Plan::of(Some(old)).bounded())
    }
}

/// The judged Tenant and where its findings go.
struct Judged<'a> {
    request: &'a Request<'a>,
    tenant: Tenant,
    field: &'a Field<'a>,
    stored: Stored,
}

impl Judged<'_> {
    fn written(&self, key: &str) -> Option<&Value> {
        self.field.json().and_then(|w| w.get(key))
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
    let judged = Judged {
        request,
        tenant: Tenant::new(&request.namespace, &request.name, field.json()),
        field: &field,
        stored: Stored::read(request)?,
    };
    // cozystack-api decodes the tenant first, and refuses it on the spot.
    if let Err(bad) = judged.tenant.declared() {
        undecodable(&judged, bad, out);
        return Ok(());
    }
    let listed = match tenants(request) {
        Ok(found) => found,
        Err(error) => {
            not_checked(out, field.path(), &error.to_string());
            return Ok(());
        }
    };
    controller(&judged, &listed, out);
    if judged.tenant.declares() {
        exceeds_parent(&judged, &listed, out);
    }
    Ok(())
}

/// The judged tenant's own values that cozystack-api cannot decode.
fn undecodable(judged: &Judged<'_>, bad: &[Undecodable], out: &mut Findings) {
    for value in bad {
        let (path, already) = if value.key.is_empty() {
            (
                judged.field.path(),
                judged.stored.same_map(judged.field.json()),
            )
        } else {
            (
                judged.field.path().key(&value.key),
                judged.stored.same(&value.key, judged.written(&value.key)),
            )
        };
        out.add_known(
            already,
            TENANT_QUOTA_UNDECODABLE,
            path,
            format!(
                "{} is {}: Cozystack 1.6's cozystack-api decodes resourceQuotas as one map of quantities, \
                 so it refuses every write of this tenant (\"decode tenant values\"), and skips the whole map \
                 where it sums sibling quotas. Write a quantity (\"2\", \"500m\", \"4Gi\") before upgrading",
                value.value, value.why
            ),
        );
    }
}

/// The controller's view: the judged tenant's rendered `tenant-quota`
/// against its sub-tenants', or its pool.
fn controller(judged: &Judged<'_>, listed: &[Tenant], out: &mut Findings) {
    let me = &judged.tenant;
    // The tree as the controller will see it once this write applies.
    let tree: Vec<&Tenant> = std::iter::once(me)
        .chain(listed.iter().filter(|t| !t.is(me)))
        .collect();
    let owners = Owners::of(tree.iter().copied());
    let ancestor = owners.pool_root(parent_namespace(&me.owned), &|t| t.plan().bounded());
    // The bounded tenants the judged one would carve, were it bounded.
    let carved: Vec<&Tenant> = tree
        .iter()
        .copied()
        // Only a tenant below the judged one can have it as its pool root.
        .filter(|t| me.owns_above(&t.owned) && !t.is(me) && t.plan().bounded())
        .filter(|t| {
            owners
                .pool_root(parent_namespace(&t.owned), &|u| {
                    u.is(me) || u.plan().bounded()
                })
                .is_some_and(|root| root.is(me))
        })
        .collect();
    match me.plan() {
        Plan::Refused { key, why } if ancestor.is_some() || !carved.is_empty() => {
            let at = if key.is_empty() {
                "spec.resourceQuotas".to_owned()
            } else {
                format!("spec.resourceQuotas.{key}")
            };
            not_checked(
                out,
                judged.field.path(),
                &format!(
                    "Helm refuses to render {at} ({why}), so the tenant-quota Cozystack 1.6's controller \
                     counts for this tenant (whatever an earlier release left, or none) cannot be told"
                ),
            );
        }
        Plan::Refused { .. } => {}
        Plan::NoQuota { nulls } => {
            if let Some(pool) = ancestor {
                unbounded(judged, pool, nulls, out);
            }
        }
        Plan::Quota(_) if carved.is_empty() => {}
        Plan::Quota(_) => overcommitted(judged, &carved, out),
    }
}

/// The judged tenant's pool against its bounded sub-tenants' carve-outs,
/// per rendered key (`Overcommitted`).
fn overcommitted(judged: &Judged<'_>, carved: &[&Tenant], out: &mut Findings) {
    let me = &judged.tenant;
    let ratios = match ratios(judged.request) {
        Ok(ratios) => ratios,
        Err(error) => {
            not_checked(out, judged.field.path(), &error.to_string());
            return;
        }
    };
    let mut rendered: Vec<(&Tenant, HardList)> = Vec::new();
    let mut budget = None;
    for tenant in std::iter::once(me).chain(carved.iter().copied()) {
        match tenant.plan().hard(&ratios) {
            Ok(hard) if tenant.is(me) => budget = Some(hard),
            Ok(hard) => rendered.push((tenant, hard)),
            Err(ratio) => {
                not_checked(
                    out,
                    judged.field.path(),
                    &ratio.problem().unwrap_or_default(),
                );
                return;
            }
        }
    }
    let budget = budget.unwrap_or_default();
    let mut sums: BTreeMap<String, Quantity> = BTreeMap::new();
    for (_, hard) in &rendered {
        for (key, value) in hard {
            add(&mut sums, key, value.value);
        }
    }
    // Per declared key: its copied key first, then what the chart derives.
    let mut reported = BTreeSet::new();
    for (key, hard) in budget
        .iter()
        .filter(|(_, h)| !h.derived)
        .chain(budget.iter().filter(|(_, h)| h.derived))
    {
        let Some(sum) = sums.get(key).filter(|sum| **sum > hard.value) else {
            continue;
        };
        if !reported.insert(hard.declared.clone()) {
            continue;
        }
        let names = some(
            &rendered
                .iter()
                .filter(|(_, h)| h.iter().any(|(k, _)| k == key))
                .map(|(t, _)| t.describe())
                .collect::<Vec<_>>(),
        );
        let declared = &hard.declared;
        let message = if hard.derived {
            let ratio = match declared.as_str() {
                "cpu" => ratios.cpu.describe(),
                "memory" => format!("{}, then whole bytes", ratios.memory.describe()),
                _ => format!("{}, then whole bytes", ratios.ephemeral_storage.describe()),
            };
            format!(
                "renders {key} {} in its tenant-quota, below the {sum} its sub-tenants' tenant-quotas render \
                 ({names}): the chart derives {key} from {declared:?} (divided by {ratio}, with Sprig's decimal \
                 divf) and Kubernetes rounds each value up to the nano, so Cozystack 1.6's tenant-quota controller \
                 reports QuotaOvercommitted and leaves this tenant's own pool none of {key}, so {} and its \
                 sub-tenants without a quota cannot start workloads that request it. Raise this quota or lower a \
                 sub-tenant's before upgrading",
                hard.value, me.owned
            )
        } else {
            format!(
                "{} is below the {sum} its sub-tenants declare ({names}): Cozystack 1.6's tenant-quota \
                 controller reports QuotaOvercommitted and leaves this tenant's own pool none of {declared:?}, so \
                 {} and its sub-tenants without a quota cannot start workloads that need it. Lower a sub-tenant's \
                 quota or raise this one before upgrading",
                hard.value, me.owned
            )
        };
        out.add_known(
            judged.stored.same(declared, judged.written(declared)),
            TENANT_QUOTA_OVERCOMMITTED,
            judged.field.path().key(declared),
            message,
        );
    }
}

/// A tenant that renders no quota under a bounded ancestor.
fn unbounded(judged: &Judged<'_>, pool: &Tenant, nulls: &[String], out: &mut Findings) {
    let message = if nulls.is_empty() {
        format!(
            "is empty under the budget of {}: 1.5 bounds this tenant by nothing, 1.6 makes it share that budget \
             (tenant-quota-allocated); declare its own quotas or accept sharing",
            pool.describe()
        )
    } else {
        format!(
            "sets only null ({}), which the platform's Helm drops, so the chart renders no tenant-quota and Cozystack \
             1.6's controller counts this tenant as unbounded under the budget of {} (cozystack-api counts it as \
             bounded, at 0): it shares that budget (tenant-quota-allocated); declare its quotas as quantities or \
             accept sharing",
            nulls.join(", "),
            pool.describe()
        )
    };
    out.add_known(
        judged.stored.was_unbounded(),
        TENANT_QUOTA_UNBOUNDED,
        judged.field.path(),
        message,
    );
}

/// cozystack-api's gate (`validateTenantResourceQuotas`), on the stored
/// HelmReleases as it reads them.
fn exceeds_parent(judged: &Judged<'_>, listed: &[Tenant], out: &mut Findings) {
    let me = &judged.tenant;
    let Ok(wanted) = me.declared() else {
        return;
    };
    // `parentTenantHelmReleaseRef`: the tenant owning the namespace this
    // one is written in (for the root, the root itself).
    let Some(parent) = listed.iter().find(|t| t.owned == me.namespace) else {
        return;
    };
    let allowed = match parent.declared() {
        Ok(allowed) if allowed.is_empty() => return,
        Ok(allowed) => allowed,
        Err(bad) => {
            let first = bad.first().map(|b| b.key.as_str()).unwrap_or_default();
            out.add_known(
                judged.stored.same_map(judged.field.json()),
                TENANT_QUOTA_UNDECODABLE,
                judged.field.path(),
                format!(
                    "the quotas of its parent {} do not decode (spec.resourceQuotas.{first}: {}): Cozystack 1.6's \
                     cozystack-api reads them to judge this tenant's quotas, and refuses every write of this tenant \
                     with an internal error until they do. Fix the parent's quotas before upgrading",
                    parent.describe(),
                    bad.first().map(|b| b.why).unwrap_or_default()
                ),
            );
            return;
        }
    };
    let mut siblings = BTreeMap::new();
    for sibling in listed
        .iter()
        .filter(|t| t.namespace == me.namespace && t.name != me.name)
    {
        // "A malformed sibling must not block an unrelated tenant write".
        for (key, value) in sibling.declared().iter().flatten() {
            add(&mut siblings, key, *value);
        }
    }
    let owners = Owners::of(listed);
    let mut members: BTreeSet<String> = listed
        .iter()
        .filter(|t| t.owned != me.owned)
        // Only the parent, or a tenant below it, has it as its pool root.
        .filter(|t| t.owned == parent.owned || parent.owns_above(&t.owned))
        .filter(|t| {
            owners
                .pool_root(Some(t.owned.clone()), &Tenant::declares)
                .is_some_and(|root| root.owned == me.namespace)
        })
        .map(|t| t.owned.clone())
        .collect();
    members.insert(me.namespace.clone());
    members.remove(&me.owned);
    let used = match pool_usage(judged.request, &members) {
        Ok(used) => used,
        Err(error) => {
            not_checked(out, judged.field.path(), &error.to_string());
            return;
        }
    };
    for (key, allowed) in allowed {
        let Some(wanted) = wanted.get(key) else {
            continue;
        };
        let allocated = siblings.get(key).copied().unwrap_or_default();
        let in_use = used
            .get(&chart::limit_key(key))
            .copied()
            .unwrap_or_default();
        let remaining = allowed.minus(allocated).minus(in_use);
        if *wanted <= remaining {
            continue;
        }
        let root = if me.owned == ROOT_NAMESPACE {
            " (cozystack-api takes the root tenant as its own parent, and every other tenant of tenant-root \
             as its sibling)"
        } else {
            ""
        };
        out.add_known(
            judged.stored.same(key, judged.written(key)),
            TENANT_QUOTA_EXCEEDS_PARENT,
            judged.field.path().key(key),
            format!(
                "requested {wanted} exceeds the parent tenant's remaining {key:?} quota of {remaining} \
                 ({} allows {allowed}, {allocated} already allocated to sibling tenants, {in_use} currently \
                 in use by the parent pool){root}: Cozystack 1.6 refuses this tenant at its next write and carves \
                 the whole {wanted} out of the parent's budget. Lower it, or raise the parent's, before upgrading",
                parent.describe()
            ),
        );
    }
}

fn not_checked(out: &mut Findings, path: FieldPath, reason: &str) {
    out.add(
        TENANT_QUOTA_NOT_CHECKED,
        path,
        format!("the tenant quotas were not checked: {reason}"),
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
        assert_eq!(chart::limit_key("cpu"), "limits.cpu");
        assert_eq!(chart::limit_key("storage"), "requests.storage");
        assert_eq!(
            chart::limit_key("services.loadbalancers"),
            "services.loadbalancers"
        );
    }
}
