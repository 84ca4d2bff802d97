//! `upgrade-readiness`: the single-object pre-upgrade checks of the
//! Cozystack 1.5 → 1.6 release notes, as rules audit-scanner can evaluate.
//!
//! audit-scanner replays every stored object as a CREATE, so each rule
//! judges one object: the Helm keep pins the upgrade relies on
//! ([`keep`]: KubeadmConfigTemplates, the `cozy-system` Namespace, the
//! `cozystack-version` ConfigMap and its migration version), the etcd
//! adoption and backup settings ([`etcd`]: the Etcd `backup` block 1.6
//! removes, the platform Package's `etcdAdoptSkipBackup`) and tenant
//! clusters still on Kubernetes v1.30 ([`kubernetes`]), the legacy etcd
//! backup resources migration 50 leaves behind, management nodes below
//! Kubernetes 1.33 ([`node`]), and cozystack-api not Available, which
//! migrations 46 and 47 mistake for a cluster without applications
//! ([`api`]). Checks that need
//! several objects or the cluster's state are the README's checklist.
//!
//! A finding that makes the upgrade lose data or fail is a violation (a
//! `fail` in PolicyReports, the policy runs in monitor mode), the rest are
//! warnings, as each rule's catalogue level says. On UPDATE a finding is
//! raised only when the change introduces it ([`shared::Findings`]): a
//! violation the stored object already had is a warning, so an object with
//! legacy content stays editable, and a warning it had is not repeated.

mod api;
mod etcd;
mod keep;
mod kubernetes;
mod node;
pub mod rules;
mod settings;

use shared::apps::APPS_GROUP;
use shared::{
    Field, FieldError, Finding, Findings, Operation, Refusal, Request, Review, RuleIds, Selection,
    Verdict,
};

pub use rules::RULES;
pub use settings::Settings;

/// What the rules read of each object: the keep annotation and the Helm
/// label, the migration version, the Etcd backup block, the Kubernetes
/// version, the platform Package's migrations values, a Node's kubelet
/// version and an APIService's conditions.
pub const READS: Selection = Selection::Paths(&[
    "metadata.labels",
    "metadata.annotations",
    "data.version",
    "spec.backup",
    "spec.version",
    "spec.components.platform.values.migrations",
    "status.nodeInfo.kubeletVersion",
    "status.conditions",
]);

shared::policy!(Settings, evaluate, READS);

/// The rule family that judges objects of this request's kind, if any.
type Judge = fn(&Request<'_>, &Field<'_>, &Settings) -> Result<Vec<Finding>, FieldError>;

fn rule_for(request: &Request<'_>) -> Option<Judge> {
    match (&*request.group, &*request.kind) {
        ("", "Namespace") => Some(keep::cozy_system_namespace),
        ("", "ConfigMap") => Some(keep::cozystack_version),
        (keep::BOOTSTRAP_GROUP, "KubeadmConfigTemplate") => Some(keep::kubeadm_config_template),
        (APPS_GROUP, "Etcd") => Some(etcd::backup_block),
        (etcd::PACKAGE_GROUP, "Package") => Some(etcd::adopt_skip_backup),
        (APPS_GROUP, "Kubernetes") => Some(kubernetes::removed_version),
        ("", "Node") => Some(node::kubelet_version),
        (etcd::LEGACY_GROUP, "EtcdBackupSchedule" | "EtcdBackup") => Some(etcd::orphaned_backup),
        (api::GROUP, "APIService") => Some(api::cozystack_api),
        _ => None,
    }
}

/// The rule: pure over the request and settings.
pub fn evaluate(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    if !matches!(request.operation, Operation::Create | Operation::Update)
        || settings.exemptions.exempts(&request.user)
    {
        return Ok(Verdict::allow());
    }
    let Some(rule) = rule_for(request) else {
        return Ok(Verdict::allow());
    };
    let found: Findings = rule(request, &request.required_object()?, settings)?
        .into_iter()
        .collect();
    if found.is_empty() {
        return Ok(Verdict::allow());
    }
    let stored: Option<Findings> = if request.operation == Operation::Update {
        let old = rule(request, &request.required_old_object()?, settings)?;
        Some(old.into_iter().collect())
    } else {
        None
    };
    let mut review = Review::new();
    // No setting of this policy raises or silences a rule.
    let none = RuleIds::default();
    found.record(stored.as_ref(), &none, &none, &mut review);
    Ok(review.verdict(Refusal::Invalid))
}
