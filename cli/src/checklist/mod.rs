//! The Cozystack 1.6 upgrade checklist of a cluster, from a snapshot of it
//! (`preflight`, `check --checklist`; `report` prints it again).
//!
//! The snapshot (`kubectl get … -o yaml` output, `snapshot-command` prints
//! the command) is both what is judged and what the policies' cluster reads
//! are answered from: every object of it is a CREATE, as audit-scanner
//! replays stored objects, through every policy with background audit. The
//! findings are then sorted into the checks of the release notes
//! ([`checks::CHECKS`]): each is failed, not checked (a cluster read gave
//! no answer), warned about, passed, not applicable (the snapshot holds
//! nothing it judges), or to be done by hand, with the objects and the fix.

pub mod checks;

use std::collections::BTreeSet;

use capabilities::snapshot::{Coverage, Snapshot, Unread};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::migration;

use crate::finding::{Answered, Finding};
use checks::{CHECKS, Check, Judged, Target};

/// The policies whose checks are about the cluster before its upgrade:
/// `preflight` has them judge as on v1.5.4 (`cozystackVersion`, unless
/// `--settings` sets it). The others judge by the v1.6.2 charts the
/// snapshot's objects meet after the upgrade, their default.
pub const BEFORE_THE_UPGRADE: &[&str] = &["upgrade-readiness"];

/// Warnings the notes make requirements: chart-render's
/// `flux-minimum-version` (pre-upgrade check 6, "Kubernetes 1.33 or newer
/// ... on any tenant cluster enabling the Flux addon") denies in the
/// checklist, unless `--settings` sets chart-render's `deny`.
const REQUIREMENTS: (&str, &[&str]) = ("chart-render", &["flux-minimum-version"]);

/// The bundle as the checklist runs it: [`BEFORE_THE_UPGRADE`] on v1.5.4,
/// [`REQUIREMENTS`] raised to denials.
pub fn configure(bundle: crate::bundle::Bundle) -> crate::bundle::Bundle {
    let (policy, rules) = REQUIREMENTS;
    bundle
        .at_release(BEFORE_THE_UPGRADE, release::Release::V1_5_4)
        .raising(policy, rules)
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    /// A violation: the upgrade blocks, wedges or loses data.
    Fail,
    /// The snapshot did not read what the check needs, or a cluster read
    /// gave no answer: the check could not be made.
    NotChecked,
    /// Warnings only: the upgrade goes through, behaviour changes.
    Warn,
    Pass,
    /// The snapshot read the kinds the check judges and holds none of them.
    NotApplicable,
    /// The management cluster cannot show it.
    ByHand,
}

impl CheckStatus {
    pub fn label(self) -> &'static str {
        match self {
            CheckStatus::Fail => "FAIL",
            CheckStatus::NotChecked => "NOT CHECKED",
            CheckStatus::Warn => "WARN",
            CheckStatus::Pass => "PASS",
            CheckStatus::NotApplicable => "N/A",
            CheckStatus::ByHand => "BY HAND",
        }
    }

    fn counted(self) -> &'static str {
        match self {
            CheckStatus::Fail => "fail",
            CheckStatus::NotChecked => "not checked",
            CheckStatus::Warn => "warn",
            CheckStatus::Pass => "pass",
            CheckStatus::NotApplicable => "not applicable",
            CheckStatus::ByHand => "by hand",
        }
    }
}

/// One finding behind a check's status, as the checklist lists it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub rule: String,
    /// `violation`, `warning`, or `not-checked` (the rule says it could
    /// not judge, whichever way its policy answered).
    pub severity: String,
    pub field: String,
    pub message: String,
}

impl Item {
    /// `Kind namespace/name`.
    pub fn object(&self) -> String {
        shared::request::describe(&self.kind, &self.namespace, &self.name)
    }

    /// `field: message`, or the message alone (as [`Finding::text`]).
    pub fn text(&self) -> String {
        if self.field.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.field, self.message)
        }
    }
}

/// One check of the release notes, judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckOutcome {
    pub id: String,
    pub title: String,
    pub source: String,
    pub status: CheckStatus,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<Item>,
    /// What the check judges that the snapshot did not read, and how to
    /// capture it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<Unread>,
    /// What to do: the fix of a failed or warned check, the instructions
    /// of one done by hand.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fix: String,
}

const VIOLATION: &str = "violation";
const NOT_CHECKED: &str = "not-checked";

/// The check that says whether the cluster is still before the upgrade.
pub const RELEASE_CHECK: &str = "not-yet-upgraded";

/// The rules every policy has for an object it cannot read (a field of the
/// wrong type, a missing one, a request without its object): a finding of
/// one on an object a check judges is that check's, never a pass.
const CANNOT_READ: [&str; 3] = [
    shared::Rule::wrong_type("").id,
    shared::Rule::missing_field("").id,
    shared::Rule::malformed_request("").id,
];

/// What the snapshot did not read of what `targets` name, and whether it
/// holds any object of them.
fn coverage(targets: &[Target], snapshot: &Snapshot) -> (Vec<Unread>, bool) {
    let mut unread = Vec::new();
    let mut held = false;
    for target in targets {
        let coverage = match target.only {
            Some((namespace, name)) => {
                snapshot.object_coverage(target.api_version, target.kind, namespace, name)
            }
            None => snapshot.coverage(target.api_version, target.kind),
        };
        match coverage {
            Coverage::Unread(what) => unread.push(what),
            Coverage::Read => {
                held |= snapshot.holds(target.api_version, target.kind, target.only);
                unread.extend(lacking(target, snapshot));
            }
            Coverage::NotInstalled => {}
        }
    }
    (unread, held)
}

/// The objects of `target` without the field the check needs of them
/// ([`checks::Need`]): a copy, not what the API server stores.
fn lacking(target: &Target, snapshot: &Snapshot) -> Vec<Unread> {
    let Some(need) = target.needs else {
        return Vec::new();
    };
    let pointer = format!("/{}", need.field.replace('.', "/"));
    snapshot
        .objects_of(target.api_version, target.kind)
        .filter(|object| object.pointer(&pointer).is_none_or(Value::is_null))
        .map(|object| {
            let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or_default();
            let (namespace, name) = (text("/metadata/namespace"), text("/metadata/name"));
            Unread {
                what: if namespace.is_empty() {
                    format!("{} {name}", target.kind)
                } else {
                    format!("{} {namespace}/{name}", target.kind)
                },
                why: format!(
                    "it has no {}, which the API server sets on every object it stores: a copy, from which \
                     the check cannot tell {}",
                    need.field, need.why
                ),
                detail: String::new(),
                command: "the block `cozystack-policies snapshot-command` prints".to_owned(),
            }
        })
        .collect()
}

/// A finding as a check lists it.
fn item(finding: &Finding) -> Item {
    Item {
        kind: finding.object.kind.clone(),
        namespace: finding.object.namespace.clone(),
        name: finding.object.name.clone(),
        rule: finding.rule.to_string(),
        severity: match finding.answered {
            _ if finding.is_not_checked() => NOT_CHECKED.to_owned(),
            Answered::Violation => VIOLATION.to_owned(),
            Answered::Warning => "warning".to_owned(),
            Answered::Error => "error".to_owned(),
        },
        field: finding.field.clone(),
        message: finding.message.clone(),
    }
}

/// Whether `finding` is one of the check's: of one of its rules, or a
/// policy of its rules saying it cannot read an object the check judges.
fn claims(rules: &[&str], targets: &[Target], finding: &Finding) -> bool {
    let rule = finding.rule.to_string();
    if rules.contains(&rule.as_str()) {
        return true;
    }
    let cannot_read = finding
        .rule
        .rule
        .as_deref()
        .is_some_and(|id| CANNOT_READ.contains(&id));
    let policy_of_check = rules.iter().any(|r| {
        r.split_once('/')
            .is_some_and(|(policy, _)| policy == finding.rule.policy)
    });
    cannot_read
        && policy_of_check
        && targets.iter().any(|target| {
            target.api_version == finding.object.api_version
                && target.kind == finding.object.kind
                && target.only.is_none_or(|(namespace, name)| {
                    (namespace, name)
                        == (
                            finding.object.namespace.as_str(),
                            finding.object.name.as_str(),
                        )
                })
        })
}

/// `finding` as `check` claims it when a migration makes it moot
/// ([`checks::MIGRATED`]): a warning saying why.
fn migrated(check: &Check, finding: &Finding, snapshot: &Snapshot) -> Option<Item> {
    let pointer = |field: &str| format!("/{}", field.replace('.', "/"));
    let moot = checks::MIGRATED.iter().find(|m| {
        m.check == check.id
            && finding.rule.to_string() == m.rule
            && snapshot
                .objects_of(&finding.object.api_version, &finding.object.kind)
                .find(|o| {
                    o.pointer("/metadata/namespace")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        == finding.object.namespace
                        && o.pointer("/metadata/name").and_then(Value::as_str)
                            == Some(finding.object.name.as_str())
                })
                .and_then(|o| {
                    o.pointer(&pointer(m.field))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .as_deref()
                == Some(m.value)
    })?;
    let mut item = item(finding);
    item.severity = "warning".to_owned();
    item.message = format!("{} (not a failure here: {})", item.message, moot.why);
    Some(item)
}

/// How a check whose objects and unread kinds are these comes out.
fn status_of(objects: &[Item], unread: &[Unread], held: bool) -> CheckStatus {
    if objects.iter().any(|i| i.severity == VIOLATION) {
        CheckStatus::Fail
    } else if !unread.is_empty() || objects.iter().any(|i| i.severity == NOT_CHECKED) {
        CheckStatus::NotChecked
    } else if !objects.is_empty() {
        CheckStatus::Warn
    } else if held {
        CheckStatus::Pass
    } else {
        CheckStatus::NotApplicable
    }
}

/// The outcome of `check`, its status `status`.
fn outcome(
    check: &Check,
    status: CheckStatus,
    rules: &[&str],
    mut objects: Vec<Item>,
    mut unread: Vec<Unread>,
) -> CheckOutcome {
    objects.sort();
    objects.dedup();
    unread.sort();
    unread.dedup();
    let fix = match (status, check.judged) {
        (_, Judged::ByHand(what)) => what.to_owned(),
        (CheckStatus::Fail | CheckStatus::Warn, _) => check.fix.to_owned(),
        _ => String::new(),
    };
    CheckOutcome {
        id: check.id.to_owned(),
        title: check.title.to_owned(),
        source: check.source.to_owned(),
        status,
        rules: rules.iter().map(|r| (*r).to_owned()).collect(),
        objects,
        unread,
        fix,
    }
}

/// The check of whether the cluster is still before the upgrade: the
/// migration version as the 1.6 platform chart reads it
/// ([`shared::migration`]); at or past 54 the cluster runs 1.6 already.
fn judge_release(check: &Check, snapshot: &Snapshot) -> CheckOutcome {
    let (namespace, name) = ("cozy-system", "cozystack-version");
    let target = [Target {
        api_version: "v1",
        kind: "ConfigMap",
        only: Some((namespace, name)),
        needs: None,
    }];
    let (unread, held) = coverage(&target, snapshot);
    let version = snapshot
        .objects_of("v1", "ConfigMap")
        .find(|o| {
            o.pointer("/metadata/namespace").and_then(Value::as_str) == Some(namespace)
                && o.pointer("/metadata/name").and_then(Value::as_str) == Some(name)
        })
        .map(|o| {
            o.pointer("/data/version")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    let mut objects = Vec::new();
    if let Some(version) = &version {
        let read = migration::hook_reads(version.as_deref());
        if read >= i64::from(migration::V1_6_TARGET) {
            objects.push(Item {
                kind: "ConfigMap".to_owned(),
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                rule: "checklist/release".to_owned(),
                severity: VIOLATION.to_owned(),
                field: "data.version".to_owned(),
                message: format!(
                    "reads as migration {read}, at or past {}, the version 1.6 stamps: the cluster has run \
                     the 1.6 migrations already",
                    migration::V1_6_TARGET
                ),
            });
        }
    }
    let status = if unread.is_empty() && version.is_none() {
        // No ConfigMap: migrations-run fails; nothing to say here.
        CheckStatus::NotApplicable
    } else {
        status_of(&objects, &unread, held)
    };
    outcome(check, status, &[], objects, unread)
}

/// One check over the findings, marking those it claims.
fn judge_check(
    check: &Check,
    findings: &[Finding],
    claimed: &mut [bool],
    snapshot: &Snapshot,
) -> CheckOutcome {
    match check.judged {
        Judged::Rules { rules, targets } => {
            let mut objects = Vec::new();
            for (finding, claimed) in findings.iter().zip(claimed.iter_mut()) {
                if claims(rules, targets, finding) {
                    *claimed = true;
                    objects.push(item(finding));
                } else if let Some(moot) = migrated(check, finding, snapshot) {
                    *claimed = true;
                    objects.push(moot);
                }
            }
            let (unread, held) = coverage(targets, snapshot);
            let status = status_of(&objects, &unread, held);
            outcome(check, status, rules, objects, unread)
        }
        Judged::ByHand(_) => outcome(check, CheckStatus::ByHand, &[], Vec::new(), Vec::new()),
        Judged::Release => judge_release(check, snapshot),
        Judged::Others => {
            let others: Vec<Item> = findings
                .iter()
                .zip(claimed.iter())
                .filter(|(_, claimed)| !**claimed)
                .map(|(finding, _)| item(finding))
                .collect();
            let status = status_of(&others, &[], true);
            outcome(check, status, &[], others, Vec::new())
        }
    }
}

/// Every check of the notes over the findings of the snapshot's objects;
/// the findings no check claims make the last one's.
pub fn judge(findings: &[Finding], snapshot: &Snapshot) -> Vec<CheckOutcome> {
    let mut claimed = vec![false; findings.len()];
    CHECKS
        .iter()
        .map(|check| judge_check(check, findings, &mut claimed, snapshot))
        .collect()
}

/// What a whole checklist says, worst first: its exit code alone tells a
/// cluster ready to upgrade from one that is not, or was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Conclusion {
    /// The cluster has run the 1.6 migrations already: the checklist does
    /// not apply to it.
    AlreadyUpgraded,
    /// A check failed: the upgrade blocks, wedges or loses data.
    Failed,
    /// No check failed, but at least one was not checked.
    Incomplete,
    /// Every check was made and none failed.
    Clean,
}

impl Conclusion {
    /// The conclusion of these outcomes.
    pub fn of(outcomes: &[CheckOutcome]) -> Self {
        if outcomes
            .iter()
            .any(|o| o.id == RELEASE_CHECK && o.status == CheckStatus::Fail)
        {
            Conclusion::AlreadyUpgraded
        } else if outcomes.iter().any(|o| o.status == CheckStatus::Fail) {
            Conclusion::Failed
        } else if outcomes.iter().any(|o| o.status == CheckStatus::NotChecked) {
            Conclusion::Incomplete
        } else {
            Conclusion::Clean
        }
    }

    /// How the checklist says it.
    pub fn label(self) -> &'static str {
        match self {
            Conclusion::AlreadyUpgraded => "ALREADY UPGRADED",
            Conclusion::Failed => "FAIL",
            Conclusion::Incomplete => "INCOMPLETE",
            Conclusion::Clean => "COMPLETE",
        }
    }
}

/// `FAIL: 3 fail, 2 warn, ...`, the counts in the order of [`CheckStatus`]; a
/// run with a check not checked says INCOMPLETE, even when one failed.
pub fn counts(outcomes: &[CheckOutcome]) -> String {
    let statuses: BTreeSet<CheckStatus> = outcomes.iter().map(|o| o.status).collect();
    let counts = statuses
        .iter()
        .map(|status| {
            let n = outcomes.iter().filter(|o| o.status == *status).count();
            format!("{n} {}", status.counted())
        })
        .collect::<Vec<_>>()
        .join(", ");
    let conclusion = Conclusion::of(outcomes);
    let incomplete = statuses.contains(&CheckStatus::NotChecked);
    match conclusion {
        Conclusion::Failed if incomplete => format!("FAIL, INCOMPLETE: {counts}"),
        _ => format!("{}: {counts}", conclusion.label()),
    }
}

/// The first line of a checklist: how it ended, its exit code, and the
/// checks that decided it, so the reason is on the first screen.
pub fn headline(outcomes: &[CheckOutcome]) -> String {
    let ids = |status: CheckStatus| -> Vec<&str> {
        outcomes
            .iter()
            .filter(|o| o.status == status)
            .map(|o| o.id.as_str())
            .collect()
    };
    let (failed, unread) = (ids(CheckStatus::Fail), ids(CheckStatus::NotChecked));
    let not_checked = if unread.is_empty() {
        String::new()
    } else {
        format!("; not checked: {}", unread.join(", "))
    };
    let conclusion = Conclusion::of(outcomes);
    let label = conclusion.label();
    match conclusion {
        Conclusion::AlreadyUpgraded => {
            let why = outcomes
                .iter()
                .find(|o| o.id == RELEASE_CHECK)
                .and_then(|o| o.objects.first())
                .map(|i| format!("{} {}", i.object(), i.text()))
                .unwrap_or_default();
            format!(
                "{label} (exit 4): {why}; this checklist is for upgrading a 1.5 cluster to 1.6, and its \
                 checks below do not apply"
            )
        }
        Conclusion::Failed => format!(
            "{label} (exit 1): failed: {}{not_checked}",
            failed.join(", ")
        ),
        Conclusion::Incomplete => format!(
            "{label} (exit 3, unless --allow-incomplete): not checked: {}: capture what they name and \
             run again",
            unread.join(", ")
        ),
        Conclusion::Clean => format!(
            "{label} (exit 0): every check was made and none failed; do the BY HAND checks yourself"
        ),
    }
}

/// What the first screen says of credentials the snapshot file carried,
/// if it carried any: the preflight kept none of them, but the file holds
/// them.
pub fn credential_warning(snapshot: &Snapshot) -> Option<String> {
    const SHOWN: usize = 5;
    let found = snapshot.credentials();
    if found.is_empty() {
        return None;
    }
    let more = found.len().saturating_sub(SHOWN);
    Some(format!(
        "WARNING: the snapshot file carries {} credential(s), which the preflight did not keep: {}{}. \
         Delete the file and capture again with the block `cozystack-policies snapshot-command` prints, \
         which copies none",
        found.len(),
        found
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join("; "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// The checklist for a terminal or a log.
pub fn render(outcomes: &[CheckOutcome], snapshot: &Snapshot) -> String {
    let from = match snapshot.capture() {
        Some(capture) => format!(
            "captured from {} at {}",
            if capture.context.is_empty() {
                "an unnamed context"
            } else {
                &capture.context
            },
            if capture.captured_at.is_empty() {
                "an unknown time"
            } else {
                &capture.captured_at
            }
        ),
        None => "no capture record: only the kinds it holds objects of count as read".to_owned(),
    };
    // The head of the checklist, one line each: how it ended, what it
    // judged, then what the reader must know before the checks.
    let mut head = vec![
        headline(outcomes),
        format!(
            "Cozystack 1.6 upgrade checklist ({} objects in the snapshot, {from})",
            snapshot.len()
        ),
        snapshot.release_line(),
    ];
    head.extend(credential_warning(snapshot));
    format!("{}\n\n{}", head.join("\n"), render_checks(outcomes))
}

/// Each check on its line, its objects, what it did not read and its fix
/// below, then the counts and what they mean.
pub fn render_checks(outcomes: &[CheckOutcome]) -> String {
    const WIDTH: usize = 11;
    let mut out = String::new();
    for outcome in outcomes {
        out.push_str(&format!(
            "{:<WIDTH$}  {}: {} ({})\n",
            outcome.status.label(),
            outcome.id,
            outcome.title,
            outcome.source
        ));
        for item in &outcome.objects {
            out.push_str(&format!(
                "{:WIDTH$}  - {}: [{}] {}\n",
                "",
                item.object(),
                item.rule,
                item.text()
            ));
        }
        for unread in &outcome.unread {
            let detail = if unread.detail.is_empty() {
                String::new()
            } else {
                format!(": {}", unread.detail)
            };
            out.push_str(&format!(
                "{:WIDTH$}  - not read: {} ({}{detail}); capture it with {}\n",
                "", unread.what, unread.why, unread.command
            ));
        }
        if !outcome.fix.is_empty() {
            let label = if outcome.status == CheckStatus::ByHand {
                "by hand"
            } else {
                "fix"
            };
            out.push_str(&format!("{:WIDTH$}  {label}: {}\n", "", outcome.fix));
        }
    }
    out.push_str(&format!("\n{}\n", counts(outcomes)));
    const UNREAD: &str = "NOT CHECKED means the snapshot did not read what the check needs, so it \
                          is no evidence of a clean cluster: capture what it names and run again";
    out.push_str(&match Conclusion::of(outcomes) {
        Conclusion::AlreadyUpgraded => {
            "The cluster has run the 1.6 migrations already: there is no 1.6 \
                                        upgrade to check (exit 4).\n"
                .to_owned()
        }
        Conclusion::Failed if outcomes.iter().any(|o| o.status == CheckStatus::NotChecked) => {
            format!("A check failed: fix it before upgrading (exit 1). {UNREAD}.\n")
        }
        Conclusion::Failed => "A check failed: fix it before upgrading (exit 1).\n".to_owned(),
        Conclusion::Incomplete => {
            format!("{UNREAD} (exit 3, unless --allow-incomplete accepts it).\n")
        }
        Conclusion::Clean => {
            "Every check was made and none failed (exit 0); do the BY HAND checks yourself.\n"
                .to_owned()
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::finding::{Location, Object, RuleId};

    use layout::checkout as root;

    /// Every rule a check names is one a policy README documents, and every
    /// check is in the upgrade page's table (docs/upgrade.md).
    #[test]
    fn checks_name_documented_rules_and_the_readme_lists_them() {
        let mut known = BTreeSet::new();
        for policy in layout::policies(&root()).unwrap() {
            let rules = testkit::rules::KnownRules::load(&policy.dir).unwrap();
            known.extend(rules.ids.iter().map(|id| format!("{}/{id}", policy.name)));
        }
        let readme = std::fs::read_to_string(root().join("docs/upgrade.md")).unwrap();
        let mut ids = BTreeSet::new();
        for check in CHECKS {
            assert!(ids.insert(check.id), "{} twice", check.id);
            assert!(
                readme.contains(&format!("`{}`", check.id)),
                "docs/upgrade.md does not list the check {}",
                check.id
            );
            if let Judged::Rules { rules, targets } = check.judged {
                assert!(!rules.is_empty() && !targets.is_empty(), "{}", check.id);
                assert!(!check.fix.is_empty(), "{} has no fix", check.id);
                for rule in rules {
                    assert!(known.contains(*rule), "{}: no rule {rule}", check.id);
                }
            }
        }
    }

    fn judge_one(check: &Check, findings: &[Finding], snapshot: &Snapshot) -> CheckOutcome {
        judge_check(check, findings, &mut vec![false; findings.len()], snapshot)
    }

    fn tenant() -> serde_json::Value {
        serde_json::json!({"apiVersion": "apps.cozystack.io/v1alpha1",
            "kind": "Tenant", "metadata": {"name": "foo", "namespace": "tenant-root"}})
    }

    fn captured(kinds: &[&str]) -> serde_json::Value {
        let reads: Vec<serde_json::Value> = kinds
            .iter()
            .map(|kind| {
                serde_json::json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": kind,
                    "resource": kind.to_lowercase(), "result": "captured"})
            })
            .collect();
        serde_json::json!({"apiVersion": "cozystack-policies.io/v1alpha1", "kind": "SnapshotCapture",
            "metadata": {"name": "snapshot"}, "reads": reads})
    }

    /// N/A only for what the snapshot read and found none of; a kind it
    /// did not read leaves its check NOT CHECKED.
    #[test]
    fn a_check_of_a_kind_not_read_is_not_checked() {
        let seaweed = CHECKS.iter().find(|c| c.id == "seaweedfs-naming").unwrap();
        let bare = Snapshot::new(vec![tenant()]).unwrap();
        let outcome = judge_one(seaweed, &[], &bare);
        assert_eq!(outcome.status, CheckStatus::NotChecked);
        assert_eq!(outcome.unread[0].what, "seaweedfses.apps.cozystack.io");
        assert_eq!(
            outcome.fix, "",
            "what to capture is the fix of a check not checked"
        );
        let read = Snapshot::new(vec![tenant(), captured(&["Tenant", "SeaweedFS"])]).unwrap();
        assert_eq!(
            judge_one(seaweed, &[], &read).status,
            CheckStatus::NotApplicable
        );
        let forgot = Snapshot::new(vec![tenant(), captured(&["Tenant"])]).unwrap();
        let outcome = judge_one(seaweed, &[], &forgot);
        assert_eq!(outcome.status, CheckStatus::NotChecked);
        assert!(
            outcome.unread[0]
                .why
                .contains("its capture did not read it")
        );
        let outcomes = [outcome];
        assert_eq!(Conclusion::of(&outcomes), Conclusion::Incomplete);
        assert_eq!(counts(&outcomes), "INCOMPLETE: 1 not checked");
    }

    /// chart-render refuses v1.30 by the v1.6.2 charts, but migration 46
    /// bumps it first: a warning of the v1.30 check, not a failure; v1.29
    /// no migration bumps.
    #[test]
    fn findings_a_migration_makes_moot_are_warnings() {
        let cluster = |version: &str| {
            serde_json::json!({"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Kubernetes",
                "metadata": {"name": "dev", "namespace": "tenant-foo"}, "spec": {"version": version}})
        };
        let check = CHECKS.iter().find(|c| c.id == "kubernetes-v1-30").unwrap();
        let finding = Finding {
            rule: RuleId::parse("chart-render/removed-version"),
            deployed_as: "chart-render".to_owned(),
            ours: true,
            answered: Answered::Violation,
            object: Object {
                api_version: "apps.cozystack.io/v1alpha1".to_owned(),
                kind: "Kubernetes".to_owned(),
                namespace: "tenant-foo".to_owned(),
                name: "dev".to_owned(),
            },
            field: "spec.version".to_owned(),
            message: "removed".to_owned(),
            severity: String::new(),
            category: String::new(),
            fix: String::new(),
            location: None,
            operation: None,
            code: None,
            standing: None,
        };
        let findings = [finding];
        let v130 = Snapshot::new(vec![cluster("v1.30")]).unwrap();
        let outcome = judge_one(check, &findings, &v130);
        assert_eq!(outcome.status, CheckStatus::Warn);
        assert!(
            outcome.objects[0].message.contains("migration 46"),
            "{:?}",
            outcome.objects
        );
        let v129 = Snapshot::new(vec![cluster("v1.29")]).unwrap();
        let outcomes = judge(&findings, &v129);
        let others = outcomes.iter().find(|o| o.id == "other-findings").unwrap();
        assert_eq!(others.status, CheckStatus::Fail);
    }

    #[test]
    fn statuses_follow_the_worst_finding() {
        let snapshot = Snapshot::new(vec![tenant(), captured(&["Tenant", "SeaweedFS"])]).unwrap();
        let quotas = CHECKS.iter().find(|c| c.id == "tenant-quotas").unwrap();
        let seaweed = CHECKS.iter().find(|c| c.id == "seaweedfs-naming").unwrap();
        assert_eq!(judge_one(quotas, &[], &snapshot).status, CheckStatus::Pass);
        assert_eq!(
            judge_one(seaweed, &[], &snapshot).status,
            CheckStatus::NotApplicable
        );
        let report = |rule: &str, answered| Finding {
            rule: RuleId::parse(rule),
            deployed_as: "upgrade-gate".to_owned(),
            ours: true,
            answered,
            object: Object {
                api_version: "apps.cozystack.io/v1alpha1".to_owned(),
                kind: "Tenant".to_owned(),
                namespace: "tenant-root".to_owned(),
                name: "foo".to_owned(),
            },
            field: "spec.resourceQuotas".to_owned(),
            message: "m".to_owned(),
            severity: String::new(),
            category: String::new(),
            fix: String::new(),
            location: Some(Location {
                file: PathBuf::from("s.yaml"),
                line: 1,
                column: 1,
            }),
            operation: Some(admission::Operation::Create),
            code: None,
            standing: None,
        };
        let warned = [report(
            "upgrade-gate/tenant-quota-unbounded",
            Answered::Warning,
        )];
        assert_eq!(
            judge_one(quotas, &warned, &snapshot).status,
            CheckStatus::Warn
        );
        // A not-checked finding is not checked, whichever way its policy
        // answered (upgrade-gate denies, so audit-scanner records `fail`).
        let unknown = [
            report("upgrade-gate/tenant-quota-not-checked", Answered::Violation),
            warned[0].clone(),
        ];
        assert_eq!(
            judge_one(quotas, &unknown, &snapshot).status,
            CheckStatus::NotChecked
        );
        let failed = [
            unknown[0].clone(),
            report(
                "upgrade-gate/tenant-quota-overcommitted",
                Answered::Violation,
            ),
        ];
        let outcome = judge_one(quotas, &failed, &snapshot);
        assert_eq!(outcome.status, CheckStatus::Fail);
        assert_eq!(outcome.objects.len(), 2);
        assert!(outcome.fix.starts_with("lower sub-tenant quotas"));
    }
}
