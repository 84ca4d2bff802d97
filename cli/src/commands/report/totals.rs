//! Counts of the findings by policy, severity, category, namespace and
//! result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, Standing};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub findings: usize,
    pub by_result: BTreeMap<String, usize>,
    pub by_policy: BTreeMap<String, usize>,
    pub by_severity: BTreeMap<String, usize>,
    pub by_category: BTreeMap<String, usize>,
    pub by_namespace: BTreeMap<String, usize>,
    /// Against `--since`: `new`, `open` (still open) and `resolved`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub since: BTreeMap<String, usize>,
}

impl Totals {
    pub fn count(
        findings: &[Finding],
        resolved: &[Finding],
        compared: bool,
    ) -> Self {
        let mut totals = Totals {
            findings: findings.len(),
            ..Totals::default()
        };
        for finding in findings {
            *totals
                .by_result
                .entry(finding.outcome().name().to_owned())
                .or_default() += 1;
            *totals
                .by_policy
                .entry(finding.rule.policy.clone())
                .or_default() += 1;
            *totals
                .by_severity
                .entry(finding.severity_label().to_owned())
                .or_default() += 1;
            *totals
                .by_category
                .entry(finding.category_label().to_owned())
                .or_default() += 1;
            *totals
                .by_namespace
                .entry(finding.namespace_label().to_owned())
                .or_default() += 1;
        }
        if compared {
            for standing in [Standing::New, Standing::Open] {
                let n = findings
                    .iter()
                    .filter(|f| f.standing == Some(standing))
                    .count();
                totals.since.insert(standing.name().to_owned(), n);
            }
            totals
                .since
                .insert(Standing::Resolved.name().to_owned(), resolved.len());
        }
        totals
    }

    /// The groupings in the order every format shows them.
    pub fn groups(&self) -> [(&'static str, &BTreeMap<String, usize>); 5] {
        [
            ("result", &self.by_result),
            ("policy", &self.by_policy),
            ("severity", &self.by_severity),
            ("category", &self.by_category),
            ("namespace", &self.by_namespace),
        ]
    }
}
