//! This bundle's policies as a report sees them: which findings are ours
//! and which rule they name, and the severity and category our metadata
//! declares for what an input leaves empty (`check` output carries
//! neither). The policies are the registry's, built into this program, so
//! a report needs no repository beside it.

use anyhow::Result;
use registry::Declared;

use crate::finding::RuleId;

/// The bundle's policies.
#[derive(Debug, Clone, Copy)]
pub struct Ours(&'static [Declared]);

impl Ours {
    /// The registry's policies.
    pub fn load() -> Result<Self> {
        Ok(Self(registry::policies()?))
    }

    /// The policy of ours called `name`.
    pub fn find(self, name: &str) -> Option<&'static Declared> {
        self.0.iter().find(|p| p.name == name)
    }

    /// The policies of ours.
    pub fn all(self) -> &'static [Declared] {
        self.0
    }

    /// Whose finding this is, and its rule: a `[policy/rule]` tag naming
    /// one of our policies decides, whatever name the bundle was deployed
    /// under; without one, a deployed policy of one of our names is ours
    /// with its rule unknown; the rest is another tool's, known by its
    /// deployed name alone.
    pub fn identify(self, deployed: &str, tag: Option<&RuleId>) -> (RuleId, bool) {
        if let Some(tag) = tag
            && self.find(&tag.policy).is_some()
        {
            return (tag.clone(), true);
        }
        match self.find(deployed) {
            Some(ours) => (RuleId::unknown(ours.name), true),
            None => (RuleId::policy_only(deployed), false),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_tag_decides_over_the_deployed_name() {
        let ours = Ours::load().unwrap();
        let tag = RuleId::new("oidc-config", "mode");
        assert_eq!(ours.identify("clusterwide-renamed", Some(&tag)), (tag, true));
        assert_eq!(
            ours.identify("no-delete", None),
            (RuleId::unknown("no-delete"), true)
        );
        let foreign_tag = RuleId::new("kyverno", "x");
        assert_eq!(
            ours.identify("pod-privileged", Some(&foreign_tag)),
            (RuleId::policy_only("pod-privileged"), false)
        );
    }
}
