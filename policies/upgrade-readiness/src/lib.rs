//! `upgrade-readiness`: the single-object pre-upgrade checks of the
//! Cozystack 1.5 → 1.6 release notes, as rules audit-scanner can evaluate.
//!
//! audit-scanner replays every stored object as a CREATE, so each rule
//! judges one object: the Helm keep pins the upgrade relies on
//! ([`keep`]: KubeadmConfigTemplates, the `cozy-system` Namespace, the
//! `cozystack-version` ConfigMap and its migration version), the etcd
//! adoption and backup settings ([`etcd`]: the Etcd `backup` block 1.6
//! removes, the platform Package's `etcdAdoptSkipBackup`) and tenant
//! clusters still on Kubernetes v1.30 ([`kubernetes`]). Checks that need
//! several objects or the cluster's state are the README's checklist.
//!
//! Each finding is a [`Check`]: one that makes the upgrade lose data or
//! fail is a violation (a `fail` in PolicyReports, the policy runs in
//! monitor mode), the rest are warnings. On UPDATE a violation is raised
//! only when the change introduces it; a finding the stored object already
//! had is a warning, so an object with legacy content stays editable.

mod etcd;
mod keep;
mod kubernetes;
pub mod rules;
mod settings;

use shared::catalogue::APPS_GROUP;
use shared::{Field, FieldError, FieldPath, Operation, Reading, Refusal, Request, Review, Verdict};

pub use rules::RULES;
pub use settings::Settings;

/// What the rules read of each object: the keep annotation and the Helm
/// label, the migration version, the Etcd backup block, the Kubernetes
/// version and the platform Package's migrations values.
pub const READS: Reading = Reading::Paths(&[
    "metadata.labels",
    "metadata.annotations",
    "data.version",
    "spec.backup",
    "spec.version",
    "spec.components.platform.values.migrations",
]);

shared::policy!(Settings, evaluate, READS);

/// One finding of a rule on one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The rule that found it.
    pub rule: shared::Rule,
    /// Where the problem is.
    pub path: FieldPath,
    /// What is wrong and what to do.
    pub message: String,
    /// Whether the upgrade would lose data or fail because of it (a
    /// violation), or only something is ignored or worth a look (a warning).
    pub blocks: bool,
}

impl Check {
    /// A finding that makes the upgrade lose data or fail.
    pub fn blocking(rule: shared::Rule, path: FieldPath, message: impl Into<String>) -> Self {
        Self {
            rule,
            path,
            message: message.into(),
            blocks: true,
        }
    }

    /// A finding worth a warning only.
    pub fn warning(rule: shared::Rule, path: FieldPath, message: impl Into<String>) -> Self {
        Self {
            rule,
            path,
            message: message.into(),
            blocks: false,
        }
    }
}

/// The rule family that judges objects of this request's kind, if any.
type Rule = fn(&Request<'_>, &Field<'_>, &Settings) -> Result<Vec<Check>, FieldError>;

fn rule_for(request: &Request<'_>) -> Option<Rule> {
    match (&*request.group, &*request.kind) {
        ("", "Namespace") => Some(keep::cozy_system_namespace),
        ("", "ConfigMap") => Some(keep::cozystack_version),
        (keep::BOOTSTRAP_GROUP, "KubeadmConfigTemplate") => Some(keep::kubeadm_config_template),
        (APPS_GROUP, "Etcd") => Some(etcd::backup_block),
        (etcd::PACKAGE_GROUP, "Package") => Some(etcd::adopt_skip_backup),
        (APPS_GROUP, "Kubernetes") => Some(kubernetes::removed_version),
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
    let checks = rule(request, &request.required_object()?, settings)?;
    if checks.is_empty() {
        return Ok(Verdict::allow());
    }
    let stored = if request.operation == Operation::Update {
        rule(request, &request.required_old_object()?, settings)?
    } else {
        Vec::new()
    };
    let mut review = Review::new();
    for check in checks {
        let already_stored = stored
            .iter()
            .any(|old| old.rule == check.rule && old.path == check.path);
        if check.blocks || already_stored {
            review.violation_unless_stored(already_stored, check.rule, check.path, check.message);
        } else {
            review.warning(check.rule, check.path, check.message);
        }
    }
    Ok(review.verdict(Refusal::Invalid))
}
