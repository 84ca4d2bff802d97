//! `upgrade-gate`: the Cozystack 1.5 → 1.6 pre-upgrade checks that need
//! more than the object itself, as rules audit-scanner can evaluate.
//!
//! upgrade-readiness judges what one object shows (keep pins, the
//! migration version, Etcd backup values); this policy judges an object
//! against the cluster around it, through the host's context-aware reads,
//! and the objects whose meaning 1.6 changes:
//!
//! - [`migrations`]: the platform namespace without the ConfigMap that
//!   makes the 1.6 chart run migrations 45–53 at all;
//! - [`etcd`]: a legacy EtcdCluster while migration 50's snapshot target is
//!   missing (the migration exits 1 and halts the upgrade);
//! - [`seaweedfs`]: a SeaweedFS whose volumes make naming class S or MIXED,
//!   or whose name pin is lifted, which the 1.6 chart refuses to render, or
//!   whose filer database is already gone (migration 53 cannot help);
//! - [`quota`]: tenants whose quotas 1.6's hierarchical quotas refuse or
//!   clamp;
//! - [`storage_class`]: node-local LINSTOR classes 1.6 propagates into
//!   tenant clusters;
//! - [`workers`]: what the Talos worker rollover changes for a tenant
//!   cluster (remediation, md0, registry mirrors, worker disks).
//!
//! Findings that block the upgrade or lose data are violations (a `fail` in
//! PolicyReports; the policy runs in monitor mode), the rest warnings. A
//! cluster read that gives no answer is never a verdict about the object:
//! the rule says it did not check, as a denial (`*-not-checked`,
//! [`shared::Level::NotCheckedFails`]), so audit-scanner records the object
//! as `fail`, never as `pass`; monitor mode never rejects the write.

mod etcd;
mod migrations;
mod quantity;
mod quota;
pub mod rules;
mod seaweedfs;
mod settings;
mod storage_class;
mod workers;

use shared::apps::APPS_GROUP;
use shared::{
    FieldError, Findings, Operation, Refusal, Request, Review, RuleIds, Selection, Verdict,
};

pub use rules::RULES;
pub use settings::Settings;

/// What the rules read of each object: the application specs, a
/// StorageClass's provisioner, parameters and annotations, when a stored
/// object was created.
pub const READS: Selection = Selection::Paths(&[
    "spec",
    "provisioner",
    "parameters",
    "metadata.annotations",
    "metadata.creationTimestamp",
]);

shared::policy!(Settings, evaluate, READS);

/// Names for a message: at most three, then how many more.
fn some(names: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut text = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// The rule: pure over the request and settings; cluster reads go where
/// the request says ([`Request::cluster`]).
pub fn evaluate(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    if !matches!(request.operation, Operation::Create | Operation::Update)
        || settings.exemptions.exempts(&request.user)
    {
        return Ok(Verdict::allow());
    }
    let mut found = Findings::new();
    let mut stored = None;
    match (&*request.group, &*request.kind) {
        (etcd::LEGACY_GROUP, etcd::LEGACY_KIND) if request.operation == Operation::Create => {
            request.required_object()?;
            etcd::adoption_target(request, &mut found);
        }
        ("", "Namespace") if request.operation == Operation::Create => {
            migrations::version_recorded(request, &mut found);
        }
        (APPS_GROUP, seaweedfs::KIND) if request.operation == Operation::Create => {
            seaweedfs::judge(request, &request.required_object()?, &mut found)?;
        }
        (APPS_GROUP, quota::KIND) => {
            quota::hierarchy(request, &request.required_object()?, &mut found)?;
        }
        (storage_class::GROUP, storage_class::KIND) if request.operation == Operation::Create => {
            storage_class::propagation(&request.required_object()?, &mut found)?;
        }
        (APPS_GROUP, workers::KIND) => {
            let object = request.required_object()?;
            workers::judge(&object, &mut found)?;
            if request.operation == Operation::Create {
                workers::registry_mirrors(request, &mut found);
                workers::disks(request, &object, &mut found)?;
            } else {
                // What the stored object already earned is not this
                // change's; the mirrors and the classes are the cluster's,
                // not the object's, and audit-scanner's CREATE reads them.
                let mut old = Findings::new();
                workers::judge(&request.required_old_object()?, &mut old)?;
                stored = Some(old);
            }
        }
        _ => {}
    }
    let mut review = Review::new();
    // No rule of this policy can be silenced.
    found.record(
        stored.as_ref(),
        &settings.deny,
        &RuleIds::default(),
        &mut review,
    );
    Ok(review.verdict(Refusal::Invalid))
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_lists_are_summarised() {
        let names: Vec<String> = (0..5).map(|i| format!("n{i}")).collect();
        assert_eq!(super::some(&names), "n0, n1, n2 and 2 more");
        assert_eq!(super::some(&names[..1]), "n0");
    }
}
