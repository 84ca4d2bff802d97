//! `preflight`: the Cozystack 1.6 upgrade checklist of a cluster, from a
//! snapshot of it.
//!
//! The snapshot (`kubectl get … -o yaml` output, [`snapshot_command`]
//! prints the command) is both what is judged and what the policies' cluster
//! reads are answered from: every object of it is a CREATE, as
//! audit-scanner replays stored objects, through every policy with
//! background audit. The findings are then sorted into the checks of the
//! release notes ([`checks::CHECKS`]): each is failed, not checked (a
//! cluster read gave no answer), warned about, passed, not applicable (the
//! snapshot holds nothing it judges), or to be done by hand, with the
//! objects and the fix.

pub mod checks;

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Result;
use capabilities::snapshot::Snapshot;
use host::PolicyModule;
use serde::{Deserialize, Serialize};

use crate::check::LocatedFinding;
use crate::manifests::{self, Reading};
use checks::{CHECKS, Check, Judged, Target};
use shared::Severity;

/// The policies whose checks are about the cluster before its upgrade:
/// `preflight` has them judge as on v1.5.4 (`cozystackVersion`, unless
/// `--settings` sets it). The others judge by the v1.6.2 charts the
/// snapshot's objects meet after the upgrade, their default.
pub const BEFORE_THE_UPGRADE: &[&str] = &["upgrade-readiness"];

/// The objects of the files or directories of `kubectl get` output at
/// `paths`, as a snapshot (Lists unpacked, documents that are not objects
/// skipped).
pub fn load_snapshot(paths: &[PathBuf]) -> Result<Snapshot> {
    let vars = crate::check::vars::Vars::load(&[], &[])?;
    let loaded = manifests::load(
        manifests::read(paths)?,
        Reading {
            strict: false,
            vars: &vars,
        },
    )?;
    Ok(Snapshot::new(
        loaded.manifests.into_iter().map(|m| m.object).collect(),
    ))
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A violation: the upgrade blocks, wedges or loses data.
    Fail,
    /// A cluster read gave no answer, so the check could not be made.
    NotChecked,
    /// Warnings only: the upgrade goes through, behaviour changes.
    Warn,
    Pass,
    /// The snapshot holds nothing the check judges.
    NotApplicable,
    /// The management cluster cannot show it.
    ByHand,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Fail => "FAIL",
            Status::NotChecked => "NOT CHECKED",
            Status::Warn => "WARN",
            Status::Pass => "PASS",
            Status::NotApplicable => "N/A",
            Status::ByHand => "BY HAND",
        }
    }

    fn counted(self) -> &'static str {
        match self {
            Status::Fail => "fail",
            Status::NotChecked => "not checked",
            Status::Warn => "warn",
            Status::Pass => "pass",
            Status::NotApplicable => "not applicable",
            Status::ByHand => "by hand",
        }
    }
}

/// One finding behind a check's status.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub rule: String,
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

    /// `field: message`, or the message alone.
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
pub struct Outcome {
    pub id: String,
    pub title: String,
    pub source: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<Item>,
    /// What to do: the fix of a failed or warned check, the instructions
    /// of one done by hand.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fix: String,
}

fn applies(targets: &[Target], snapshot: &Snapshot) -> bool {
    targets
        .iter()
        .any(|t| snapshot.holds(t.group, t.kind, t.only))
}

fn judge_one(check: &Check, reports: &[LocatedFinding], snapshot: &Snapshot) -> Outcome {
    let (rules, targets, by_hand) = match check.judged {
        Judged::Rules { rules, targets } => (rules, targets, None),
        Judged::ByHand(what) => (&[][..], &[][..], Some(what)),
    };
    let mut objects: Vec<Item> = reports
        .iter()
        .filter(|r| rules.contains(&r.rule.as_str()))
        .map(|r| Item {
            kind: r.kind.clone(),
            namespace: r.namespace.clone(),
            name: r.name.clone(),
            rule: r.rule.clone(),
            severity: match r.severity {
                Severity::Violation => "violation".to_owned(),
                Severity::Warning => "warning".to_owned(),
            },
            field: r.field.clone(),
            message: r.message.clone(),
        })
        .collect();
    objects.sort();
    objects.dedup();
    let status = if by_hand.is_some() {
        Status::ByHand
    } else if objects.iter().any(|i| i.severity == "violation") {
        Status::Fail
    } else if objects.iter().any(|i| i.rule.ends_with("-not-checked")) {
        Status::NotChecked
    } else if !objects.is_empty() {
        Status::Warn
    } else if applies(targets, snapshot) {
        Status::Pass
    } else {
        Status::NotApplicable
    };
    let fix = match (status, by_hand) {
        (_, Some(what)) => what.to_owned(),
        (Status::Fail | Status::Warn | Status::NotChecked, None) => check.fix.to_owned(),
        _ => String::new(),
    };
    Outcome {
        id: check.id.to_owned(),
        title: check.title.to_owned(),
        source: check.source.to_owned(),
        status,
        rules: rules.iter().map(|r| (*r).to_owned()).collect(),
        objects,
        fix,
    }
}

/// Every check of the notes over the findings of the snapshot's objects.
pub fn judge(reports: &[LocatedFinding], snapshot: &Snapshot) -> Vec<Outcome> {
    CHECKS
        .iter()
        .map(|check| judge_one(check, reports, snapshot))
        .collect()
}

/// `3 fail, 2 warn, ...`, in the order of [`Status`].
pub fn counts(outcomes: &[Outcome]) -> String {
    let statuses: BTreeSet<Status> = outcomes.iter().map(|o| o.status).collect();
    statuses
        .iter()
        .map(|status| {
            let n = outcomes.iter().filter(|o| o.status == *status).count();
            format!("{n} {}", status.counted())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The checklist for a terminal or a log.
pub fn render(outcomes: &[Outcome], objects: usize) -> String {
    format!(
        "Cozystack 1.6 upgrade checklist ({objects} objects in the snapshot)\n\n{}",
        render_checks(outcomes)
    )
}

/// Each check on its line, its objects and fix below, then the counts.
pub fn render_checks(outcomes: &[Outcome]) -> String {
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
        if !outcome.fix.is_empty() {
            let label = if outcome.status == Status::ByHand {
                "by hand"
            } else {
                "fix"
            };
            out.push_str(&format!("{:WIDTH$}  {label}: {}\n", "", outcome.fix));
        }
    }
    out.push_str(&format!("\n{}\n", counts(outcomes)));
    out
}

/// A resource as kubectl names it unambiguously: `configmaps`,
/// `etcdclusters.etcd.aenix.io`.
fn resource(group: &str, kind: &str) -> String {
    let plural = shared::catalogue::plural(group, kind);
    if group.is_empty() {
        plural
    } else {
        format!("{plural}.{group}")
    }
}

/// A Secret as the snapshot keeps it: its name, never its data.
const SECRET_TEMPLATE: &str = r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"{{.metadata.name}}","namespace":"{{.metadata.namespace}}"}}{{"\n"}}"#;

/// The one `kubectl get` that captures what the bundle's policies read
/// (their `contextAwareResources`, Secrets by name only, without their
/// data) and what the checklist judges, as a shell block writing
/// `snapshot.yaml`.
pub fn snapshot_command(modules: &[PolicyModule]) -> Result<String> {
    let mut listed: BTreeSet<String> = BTreeSet::new();
    let mut secrets: BTreeSet<(String, String)> = BTreeSet::new();
    for module in modules {
        let Some(metadata) = module.metadata() else {
            continue;
        };
        for read in &metadata.context_aware_resources {
            if (read.api_version.as_str(), read.kind.as_str()) == ("v1", "Secret") {
                continue;
            }
            let (group, _) = shared::catalogue::group_version(&read.api_version);
            listed.insert(resource(group, &read.kind));
        }
        secrets.extend(metadata.secrets().map_err(anyhow::Error::msg)?);
    }
    let mut named: BTreeSet<(String, String, String)> = BTreeSet::new();
    for check in CHECKS {
        if let Judged::Rules { targets, .. } = check.judged {
            for target in targets {
                let name = resource(target.group, target.kind);
                match target.only {
                    None => {
                        listed.insert(name);
                    }
                    Some((namespace, object)) => {
                        named.insert((name, namespace.to_owned(), object.to_owned()));
                    }
                }
            }
        }
    }
    named.retain(|(name, _, _)| !listed.contains(name));
    let mut out = String::from(
        "# What the bundle's policies read and the 1.6 upgrade checklist judges, from the management\n\
         # cluster (Secrets by name, without their data); then: cozystack-policies preflight snapshot.yaml\n{\n",
    );
    out.push_str(&format!(
        "  kubectl get {} --all-namespaces -o yaml\n",
        listed.into_iter().collect::<Vec<_>>().join(",")
    ));
    for (name, namespace, object) in named {
        let namespace = if namespace.is_empty() {
            String::new()
        } else {
            format!(" --namespace {namespace}")
        };
        out.push_str(&format!(
            "  echo ---\n  kubectl get {name}{namespace} {object} -o yaml\n"
        ));
    }
    if !secrets.is_empty() {
        let list: Vec<String> = secrets.iter().map(|(ns, n)| format!("{ns}/{n}")).collect();
        out.push_str(&format!("  for secret in {}; do\n", list.join(" ")));
        out.push_str("    echo ---\n");
        out.push_str(
            "    kubectl get secret --namespace \"${secret%/*}\" \"${secret#*/}\" --ignore-not-found \\\n",
        );
        out.push_str(&format!(
            "      -o go-template='{SECRET_TEMPLATE}'\n  done\n"
        ));
    }
    out.push_str("} > snapshot.yaml\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace;

    fn root() -> PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_path_buf()
    }

    /// Every rule a check names is one a policy README documents, and every
    /// check is in the bundle README's checklist section.
    #[test]
    fn checks_name_documented_rules_and_the_readme_lists_them() {
        let mut known = BTreeSet::new();
        for policy in workspace::policies(&root()).unwrap() {
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

    #[test]
    fn statuses_follow_the_worst_finding() {
        let snapshot = Snapshot::new(vec![
            serde_json::json!({"apiVersion": "apps.cozystack.io/v1alpha1",
            "kind": "Tenant", "metadata": {"name": "foo", "namespace": "tenant-root"}}),
        ]);
        let quotas = CHECKS.iter().find(|c| c.id == "tenant-quotas").unwrap();
        let seaweed = CHECKS.iter().find(|c| c.id == "seaweedfs-naming").unwrap();
        assert_eq!(judge_one(quotas, &[], &snapshot).status, Status::Pass);
        assert_eq!(
            judge_one(seaweed, &[], &snapshot).status,
            Status::NotApplicable
        );
        let report = |rule: &str, severity| LocatedFinding {
            rule: rule.to_owned(),
            policy: "upgrade-gate".to_owned(),
            severity,
            operation: admission::Operation::Create,
            api_version: "apps.cozystack.io/v1alpha1".to_owned(),
            kind: "Tenant".to_owned(),
            namespace: "tenant-root".to_owned(),
            name: "foo".to_owned(),
            file: PathBuf::from("s.yaml"),
            line: 1,
            column: 1,
            field: "spec.resourceQuotas".to_owned(),
            message: "m".to_owned(),
            code: None,
        };
        let warned = [report(
            "upgrade-gate/tenant-quota-unbounded",
            Severity::Warning,
        )];
        assert_eq!(judge_one(quotas, &warned, &snapshot).status, Status::Warn);
        let unknown = [
            report("upgrade-gate/tenant-quota-not-checked", Severity::Warning),
            warned[0].clone(),
        ];
        assert_eq!(
            judge_one(quotas, &unknown, &snapshot).status,
            Status::NotChecked
        );
        let failed = [
            unknown[0].clone(),
            report(
                "upgrade-gate/tenant-quota-overcommitted",
                Severity::Violation,
            ),
        ];
        let outcome = judge_one(quotas, &failed, &snapshot);
        assert_eq!(outcome.status, Status::Fail);
        assert_eq!(outcome.objects.len(), 2);
        assert!(outcome.fix.starts_with("lower sub-tenant quotas"));
    }
}
