//! This bundle's policies as a report sees them: which names are ours, the
//! severity and category their metadata declares (for `check` output, which
//! carries neither), and where each rule is documented.

/// One policy of the bundle, with the annotations of its `metadata.yml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundlePolicy {
    pub name: &'static str,
    pub severity: &'static str,
    pub category: &'static str,
}

/// Every policy of the bundle; a test keeps this in step with `policies/`,
/// so a report works without the repository beside it.
pub const POLICIES: &[BundlePolicy] = &[
    policy("chart-render", "medium", "Resource validation"),
    policy("harbor-retention", "high", "Data protection"),
    policy("no-delete", "high", "Data protection"),
    policy("oidc-config", "medium", "Authentication"),
    policy("securitygroup-validity", "medium", "Network security"),
    policy("storageclass-immutable", "high", "Data protection"),
    policy("upgrade-gate", "high", "Platform upgrade"),
    policy("upgrade-readiness", "high", "Platform upgrade"),
    policy("values-schema", "medium", "Resource validation"),
];

const fn policy(
    name: &'static str,
    severity: &'static str,
    category: &'static str,
) -> BundlePolicy {
    BundlePolicy {
        name,
        severity,
        category,
    }
}

/// The rule id of a finding whose message carries no `[policy/rule]` tag.
pub const UNKNOWN_RULE: &str = "unknown";

/// The bundle policy called `name`.
pub fn find(name: &str) -> Option<&'static BundlePolicy> {
    POLICIES.iter().find(|p| p.name == name)
}

/// The policy README's entry for a rule (its "Rules" section anchors each
/// rule as `#rule-<rule>`), or the README itself for an unknown rule.
pub fn rule_url(policy: &str, rule: &str) -> String {
    let readme = format!(
        "{}/blob/main/policies/{policy}/README.md",
        env!("CARGO_PKG_REPOSITORY")
    );
    if rule.is_empty() || rule == UNKNOWN_RULE {
        readme
    } else {
        format!("{readme}#rule-{rule}")
    }
}

/// Whose finding this is: a `[policy/rule]` tag naming one of our policies
/// decides, whatever name the bundle was deployed under; without a tag, the
/// deployed policy name must be one of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub policy: String,
    pub rule: String,
    pub ours: bool,
}

pub fn identify(deployed: &str, tag: Option<&(String, String)>) -> Identity {
    if let Some((policy, rule)) = tag
        && find(policy).is_some()
    {
        return Identity {
            policy: policy.clone(),
            rule: rule.clone(),
            ours: true,
        };
    }
    match find(deployed) {
        Some(ours) => Identity {
            policy: ours.name.to_owned(),
            rule: UNKNOWN_RULE.to_owned(),
            ours: true,
        },
        None => Identity {
            policy: deployed.to_owned(),
            rule: String::new(),
            ours: false,
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::workspace::{self, PolicyCrate};

    #[test]
    fn the_table_matches_every_policy_metadata() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap();
        let dirs = workspace::policies(root).unwrap();
        let names: Vec<&str> = dirs.iter().map(|p| p.name.as_str()).collect();
        let table: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
        assert_eq!(names, table, "POLICIES must list policies/ in order");
        for dir in &dirs {
            let annotations = dir.metadata().unwrap().annotations;
            let entry = find(&dir.name).unwrap();
            assert_eq!(
                annotations
                    .get("io.kubewarden.policy.severity")
                    .map(String::as_str),
                Some(entry.severity),
                "{}",
                dir.name
            );
            assert_eq!(
                annotations
                    .get("io.kubewarden.policy.category")
                    .map(String::as_str),
                Some(entry.category),
                "{}",
                dir.name
            );
        }
    }

    #[test]
    fn a_tag_decides_over_the_deployed_name() {
        let tag = ("oidc-config".to_owned(), "mode".to_owned());
        let who = identify("clusterwide-renamed", Some(&tag));
        assert_eq!(
            (who.policy.as_str(), who.rule.as_str(), who.ours),
            ("oidc-config", "mode", true)
        );
        let untagged = identify("no-delete", None);
        assert_eq!(
            (untagged.rule.as_str(), untagged.ours),
            (UNKNOWN_RULE, true)
        );
        let foreign_tag = ("kyverno".to_owned(), "x".to_owned());
        assert!(!identify("pod-privileged", Some(&foreign_tag)).ours);
    }

    #[test]
    fn rule_links_point_at_the_readme_anchor() {
        assert!(
            rule_url("no-delete", "protected")
                .ends_with("policies/no-delete/README.md#rule-protected")
        );
        assert!(rule_url("no-delete", UNKNOWN_RULE).ends_with("policies/no-delete/README.md"));
    }
}
