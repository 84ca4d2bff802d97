//! `chart-render`: what the v1.6.2 charts' templates refuse (`fail`,
//! `required`) or render broken, checked at admission.
//!
//! cozystack-api stores any `spec`; the HelmRelease behind the application
//! then fails to render, minutes later. The charts' schemas are
//! values-schema's; this policy owns what only the templates say: a
//! Kubernetes version this release removed (and what it means for GitOps
//! sources that re-apply it), addons that need other addons, a newer
//! Kubernetes or workers, node-group and apiserver-volume checks, names the
//! platform fixes, exposure without TLS, and a few render checks of other
//! charts. OIDC is oidc-config's.
//!
//! Releases: every rule follows the templates of the release the setting
//! `cozystackVersion` names; what differs between releases (the Kubernetes
//! versions, the checks a patch added) is read from that release's charts
//! ([`release::Fact`]). With `cozystackVersion: cluster`, the
//! release the cluster records; on a release the bundle does not know, the
//! templates are not checked, and the policy says so.
//!
//! Verdicts: a template `fail` is denied; what renders but is probably a
//! mistake is a warning, which a setting may raise. On UPDATE, the same
//! rules run over the stored object, and a denial the stored object
//! already had is only a warning ([`shared::Findings::record`]).
//!
//! Types: values-schema reports a value of the wrong JSON type, so a rule
//! that finds one where it reads skips silently. Only a `spec` that is not
//! an object (nothing can be read) and a missing `object` are malformed
//! (400).

mod apps;
mod backups;
mod claims;
mod databases;
mod exposure;
mod instance_types;
mod keys;
mod kubelet;
mod kubernetes;
mod names;
mod resources;
pub mod rules;
mod seaweedfs;
mod settings;
mod values;

use release::Release;
use shared::apps::APPS_GROUP;
use shared::{
    Field, FieldError, FieldPath, Findings, Kind, Operation, Refusal, Request, Review, RuleIds,
    Selection, Verdict,
};

pub use rules::RULES;
pub use settings::Settings;

/// What the rule reads of each object: the values.
pub const READS: Selection = Selection::Paths(&["spec"]);

shared::policy!(Settings, evaluate, READS);

/// The kinds the rules judge (`metadata.yml` lists their plurals).
pub const KINDS: &[&str] = &[
    "BootBox",
    "Bucket",
    "ClickHouse",
    "ComputePlane",
    "Etcd",
    "ExternalDNS",
    "FoundationDB",
    "HTTPCache",
    "Harbor",
    "Ingress",
    "Kafka",
    "Kubernetes",
    "KubernetesNodes",
    "MariaDB",
    "MongoDB",
    "Monitoring",
    "NATS",
    "OpenBAO",
    "OpenSearch",
    "Postgres",
    "Qdrant",
    "RabbitMQ",
    "Redis",
    "SeaweedFS",
    "TCPBalancer",
    "Tenant",
    "VMDisk",
    "VMInstance",
    "VPN",
    "VirtualPrivateCloud",
];

/// Every rule of `kind` over one object's spec, as `release`'s charts
/// render it.
fn findings(
    kind: &str,
    name: &str,
    namespace: &str,
    spec: &Field<'_>,
    release: Release,
) -> Findings {
    let mut out = Findings::default();
    names::check(kind, name, namespace, release, &mut out);
    keys::check(kind, name, spec, &mut out);
    resources::check(kind, spec, &mut out);
    databases::check(kind, spec, &mut out);
    backups::check(kind, spec, &mut out);
    match kind {
        "Kubernetes" => kubernetes::check(spec, release, &mut out),
        "KubernetesNodes" => {
            skip_wrong_types(kubernetes::removed_version(
                spec,
                kubernetes::Matrix::of(release),
                &mut out,
            ));
            skip_wrong_types(names::kubernetes_nodes(spec, name, &mut out));
            names::nodes_md0(&names::pool_name(spec, name), &mut out);
            kubernetes::nodes_pool(spec, &names::pool_name(spec, name), release, &mut out);
        }
        "Kafka" | "NATS" | "Qdrant" => {
            skip_wrong_types(exposure::check(kind, spec, &mut out));
        }
        "SeaweedFS" => seaweedfs::check(spec, &mut out),
        "ComputePlane" => skip_wrong_types(kubernetes::compute_plane(spec, &mut out)),
        _ => apps::check(kind, namespace, spec, &mut out),
    }
    out
}

/// The spec of an object; a `spec` that is not an object cannot be read.
fn spec<'a>(object: &Field<'a>) -> Result<Field<'a>, FieldError> {
    let spec = object.field("spec")?;
    spec.expect(Kind::Object)?;
    Ok(spec)
}

/// Runs one rule whose `Err` only says that a field it reads has the wrong
/// JSON type: values-schema reports that, so the rule is skipped rather
/// than reporting it twice (the module's "Types").
fn skip_wrong_types(rule: Result<(), FieldError>) {
    rule.unwrap_or_default();
}

/// The rule: pure over the request and settings.
pub fn evaluate(request: &Request<'_>, settings: &Settings) -> Result<Verdict, FieldError> {
    if request.group != APPS_GROUP
        || !KINDS.contains(&request.kind.as_ref())
        || !matches!(request.operation, Operation::Create | Operation::Update)
        || settings.exemptions.exempts(&request.user)
    {
        return Ok(Verdict::allow());
    }
    let object = request.required_object()?;
    let new_spec = spec(&object)?;
    let mut review = Review::new();
    let resolved = settings.cozystack_version.resolve(request.cluster());
    if let Some(note) = resolved.note(env!("CARGO_PKG_NAME"), "the templates") {
        review.warning(rules::RELEASE_NOT_CHECKED, FieldPath::root(), note);
    }
    let Some(release) = resolved.release() else {
        return Ok(review.verdict(Refusal::Invalid));
    };
    let mut found = findings(
        &request.kind,
        &request.name,
        &request.namespace,
        &new_spec,
        release,
    );
    let mut before: Option<Findings> = None;
    let mut extra = Findings::default();
    if request.operation == Operation::Update {
        let old = request.old_object();
        // A stored object that cannot be read has no findings to forgive.
        if old.is_present()
            && let Ok(old_spec) = spec(&old)
        {
            let stored = findings(
                &request.kind,
                &request.name,
                &request.namespace,
                &old_spec,
                release,
            );
            match request.kind.as_ref() {
                "Kubernetes" => skip_wrong_types(kubernetes::downgrade(
                    &old_spec,
                    &new_spec,
                    kubernetes::Matrix::of(release),
                    &mut extra,
                )),
                "SeaweedFS" => {
                    skip_wrong_types(seaweedfs::topology_change(&old_spec, &new_spec, &mut extra))
                }
                // A stored VMDisk whose source rendered has its DataVolume,
                // which the chart copies instead of reading the values.
                "VMDisk" if !stored.iter().any(apps::is_vm_disk_source_finding) => {
                    found.retain(|f| !apps::is_vm_disk_source_finding(f));
                    skip_wrong_types(apps::vm_disk_kept(&old_spec, &new_spec, &mut extra));
                }
                _ => {}
            }
            skip_wrong_types(claims::changes(
                &request.kind,
                &old_spec,
                &new_spec,
                &mut extra,
            ));
            before = Some(stored);
        }
    }
    // No rule of this policy can be silenced.
    let ignore = RuleIds::default();
    found.record(before.as_ref(), &settings.deny, &ignore, &mut review);
    extra.record(None, &settings.deny, &ignore, &mut review);
    Ok(review.verdict(Refusal::Invalid))
}
