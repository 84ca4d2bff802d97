//! `--since`: which findings are new, which are still open, which were
//! resolved since a previous report.

use std::collections::BTreeSet;

use crate::finding::{Finding, Standing};

/// What identifies a finding across two reports: the rule, the object and
/// the field; the message too when the rule is unknown, as several
/// untagged findings may share a field.
fn key(finding: &Finding) -> (String, String, String, String, String, String) {
    let message = if finding.ours && finding.rule.is_known() {
        String::new()
    } else {
        finding.message.clone()
    };
    (
        finding.rule.to_string(),
        finding.object.kind.clone(),
        finding.object.namespace.clone(),
        finding.object.name.clone(),
        finding.field.clone(),
        message,
    )
}

/// Marks each current finding new or open and returns the previous ones no
/// longer found, marked resolved.
pub fn compare(
    current: &mut [Finding],
    previous: &[Finding],
) -> Vec<Finding> {
    let before: BTreeSet<_> = previous.iter().map(key).collect();
    let now: BTreeSet<_> = current.iter().map(key).collect();
    for finding in current.iter_mut() {
        finding.standing = Some(if before.contains(&key(finding)) {
            Standing::Open
        } else {
            Standing::New
        });
    }
    let mut seen = BTreeSet::new();
    previous
        .iter()
        .filter(|f| !now.contains(&key(f)) && seen.insert(key(f)))
        .map(|f| Finding {
            standing: Some(Standing::Resolved),
            ..f.clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::commands::report::input;

    const NOW: &str = include_str!("../../../tests/data/report/policyreports.json");
    const BEFORE: &str = include_str!("../../../tests/data/report/policyreports-previous.json");

    #[test]
    fn new_open_and_resolved_against_a_previous_input() {
        let mut now = input::read(NOW, "now").unwrap();
        let before = input::read(BEFORE, "before").unwrap();
        let resolved = compare(&mut now, &before);
        let new: Vec<_> = now
            .iter()
            .filter(|f| f.standing == Some(Standing::New))
            .map(|f| f.field.as_str())
            .collect();
        assert_eq!(new, ["spec.oidc.users[0].role"]);
        assert_eq!(
            now.iter()
                .filter(|f| f.standing == Some(Standing::Open))
                .count(),
            now.len() - 1
        );
        let gone: Vec<_> = resolved
            .iter()
            .map(|f| (f.rule.to_string(), f.object.label(), f.standing))
            .collect();
        assert_eq!(
            gone,
            [(
                "securitygroup-validity/duplicate-attachment".to_owned(),
                "SecurityGroup tenant-dev/web".to_owned(),
                Some(Standing::Resolved)
            )]
        );
    }

    #[test]
    fn a_known_rule_stays_open_when_its_wording_changes() {
        let mut now = input::read(NOW, "now").unwrap();
        now.retain(|f| f.ours);
        for finding in &mut now {
            finding.rule.rule = Some("r".to_owned());
        }
        let mut before = now.clone();
        for finding in &mut before {
            finding.message.push_str(" (older wording)");
        }
        assert!(compare(&mut now, &before).is_empty());
        assert!(now.iter().all(|f| f.standing == Some(Standing::Open)));
    }
}
