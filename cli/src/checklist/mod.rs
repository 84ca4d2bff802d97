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

use crate::finding::{Answered, Finding};
use checks::{CHECKS, Check, Judged, Target};

/// The policies whose checks are about the cluster before its upgrade:
/// `preflight` has them judge as on v1.5.4 (`cozystackVersion`, unless
/// `--settings` sets it). The others judge by the v1.6.2 charts the
/// snapshot's objects meet after the upgrade, their default.
pub const BEFORE_THE_UPGRADE: &[&str] = &["upgrade-readiness"];

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
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
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

/// What the snapshot did not read of what `targets` name, and whether it
/// holds any object of them.
fn coverage(targets: &[Target], snapshot: &Snapshot) -> (Vec<Unread>, bool) {
    let mut unread = Vec::new();
    let mut held = false;
    for target in targets {
        let group = target.group();
        let coverage = match target.only {
            Some((namespace, name)) => {
                snapshot.object_coverage(group, target.kind, namespace, name)
            }
            None => snapshot.coverage(group, target.kind),
        };
        match coverage {
            Coverage::Unread(what) => unread.push(what),
            Coverage::Read => held |= snapshot.holds(group, target.kind, target.only),
            Coverage::NotInstalled => {}
        }
    }
    (unread, held)
}

fn judge_one(check: &Check, findings: &[Finding], snapshot: &Snapshot) -> CheckOutcome {
    let (rules, targets, by_hand) = match check.judged {
        Judged::Rules { rules, targets } => (rules, targets, None),
        Judged::ByHand(what) => (&[][..], &[][..], Some(what)),
    };
    let mut objects: Vec<Item> = findings
        .iter()
        .map(|f| (f, f.rule.to_string()))
        .filter(|(_, rule)| rules.contains(&rule.as_str()))
        .map(|(f, rule)| Item {
            kind: f.object.kind.clone(),
            namespace: f.object.namespace.clone(),
            name: f.object.name.clone(),
            rule,
            severity: match f.answered {
                _ if f.is_not_checked() => NOT_CHECKED.to_owned(),
                Answered::Violation => VIOLATION.to_owned(),
                Answered::Warning => "warning".to_owned(),
                Answered::Error => "error".to_owned(),
            },
            field: f.field.clone(),
            message: f.message.clone(),
        })
        .collect();
    objects.sort();
    objects.dedup();
    let (mut unread, held) = coverage(targets, snapshot);
    unread.sort();
    unread.dedup();
    let status = if by_hand.is_some() {
        CheckStatus::ByHand
    } else if objects.iter().any(|i| i.severity == VIOLATION) {
        CheckStatus::Fail
    } else if !unread.is_empty() || objects.iter().any(|i| i.severity == NOT_CHECKED) {
        CheckStatus::NotChecked
    } else if !objects.is_empty() {
        CheckStatus::Warn
    } else if held {
        CheckStatus::Pass
    } else {
        CheckStatus::NotApplicable
    };
    let fix = match (status, by_hand) {
        (_, Some(what)) => what.to_owned(),
        (CheckStatus::Fail | CheckStatus::Warn, None) => check.fix.to_owned(),
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

/// Every check of the notes over the findings of the snapshot's objects.
pub fn judge(findings: &[Finding], snapshot: &Snapshot) -> Vec<CheckOutcome> {
    CHECKS
        .iter()
        .map(|check| judge_one(check, findings, snapshot))
        .collect()
}

/// What a whole checklist says, worst first: its exit code alone tells a
/// cluster ready to upgrade from one that is not, or was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Conclusion {
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
        if outcomes.iter().any(|o| o.status == CheckStatus::Fail) {
            Conclusion::Failed
        } else if outcomes.iter().any(|o| o.status == CheckStatus::NotChecked) {
            Conclusion::Incomplete
        } else {
            Conclusion::Clean
        }
    }

    /// How the last line of the checklist says it.
    pub fn label(self) -> &'static str {
        match self {
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
    format!(
        "Cozystack 1.6 upgrade checklist ({} objects in the snapshot, {from})\n\n{}",
        snapshot.len(),
        render_checks(outcomes)
    )
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
    /// check is in the bundle README's checklist section.
    #[test]
    fn checks_name_documented_rules_and_the_readme_lists_them() {
        let mut known = BTreeSet::new();
        for policy in layout::policies(&root()).unwrap() {
            let rules = testkit::rules::KnownRules::load(&policy.dir).unwrap();
            known.extend(rules.ids.iter().map(|id| format!("{}/{id}", policy.name)));
        }
        let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
        let mut ids = BTreeSet::new();
        for check in CHECKS {
            assert!(ids.insert(check.id), "{} twice", check.id);
            assert!(
                readme.contains(&format!("`{}`", check.id)),
                "README.md does not list the check {}",
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
