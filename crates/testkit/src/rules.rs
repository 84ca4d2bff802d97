//! The rule ids a policy's findings may carry, and the check that every
//! answer carries them.
//!
//! Native runs know a policy's [`Catalogue`]; runners that only have the
//! built module (our host, kwctl, policy-server) read the ids from the
//! policy README's "Rules" table, which each policy's native test holds
//! equal to its catalogue ([`documented`]).

use std::collections::BTreeSet;
use std::path::Path;

use shared::{Catalogue, Finding};

use admission::AdmissionResponse;

/// The ids (`<rule>`, without the policy) one policy's findings may carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownRules {
    pub policy: String,
    pub ids: BTreeSet<String>,
}

/// How a README's "Rules" table marks a row, so `README.md#rule-<id>`
/// links to it.
const ANCHOR: &str = "<a id=\"rule-";

impl KnownRules {
    /// The rules of `catalogue`.
    pub fn from_catalogue(catalogue: &Catalogue) -> Self {
        Self {
            policy: catalogue.policy.to_owned(),
            ids: catalogue.rules().iter().map(|r| r.id.to_owned()).collect(),
        }
    }

    /// The rules the README of `policy` anchors (`<a id="rule-<id>"></a>`).
    pub fn from_readme(policy: &str, readme: &str) -> Self {
        let ids = readme
            .match_indices(ANCHOR)
            .filter_map(|(at, _)| readme.get(at + ANCHOR.len()..))
            .filter_map(|rest| rest.split_once('"'))
            .map(|(id, _)| id.to_owned())
            .collect();
        Self {
            policy: policy.to_owned(),
            ids,
        }
    }

    /// The rules documented in `<policy_dir>/README.md`.
    pub fn load(policy_dir: &Path) -> Result<Self, String> {
        let policy = policy_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = policy_dir.join("README.md");
        let readme = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(Self::from_readme(&policy, &readme))
    }

    /// Whether every line of `response`'s message and every warning starts
    /// with the tag of one of these rules.
    pub fn check(&self, response: &AdmissionResponse) -> Result<(), String> {
        let message = if response.allowed {
            ""
        } else {
            response.message().unwrap_or_default()
        };
        let lines = message
            .lines()
            .map(|l| ("message line", l))
            .chain(response.warnings().iter().map(|w| ("warning", w.as_str())));
        for (what, line) in lines {
            let known = Finding::parse_line(line)
                .tag
                .is_some_and(|tag| tag.policy == self.policy && self.ids.contains(&tag.rule));
            if !known {
                return Err(format!(
                    "{what} {line:?} does not start with the tag of a rule of {} ([{}/<rule>] with <rule> one of {:?})",
                    self.policy, self.policy, self.ids
                ));
            }
        }
        Ok(())
    }
}

/// Whether the README of the policy at `policy_dir` lists exactly the rules
/// of `catalogue`; `Err` names the ids only one of them has.
pub fn documented(catalogue: &Catalogue, policy_dir: &Path) -> Result<(), String> {
    let code = KnownRules::from_catalogue(catalogue);
    let readme = KnownRules::load(policy_dir)?;
    let undocumented: Vec<&String> = code.ids.difference(&readme.ids).collect();
    let unknown: Vec<&String> = readme.ids.difference(&code.ids).collect();
    if undocumented.is_empty() && unknown.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "README.md's Rules table and the catalogue differ: not in the README {undocumented:?}, \
             not in the catalogue {unknown:?} (one row `<a id=\"rule-<id>\"></a>` per rule)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use admission::Status;
    use shared::{Level, Rule};

    const OWN: Rule = Rule {
        policy: "p",
        id: "own-rule",
        level: Level::Deny,
    };
    const CATALOGUE: Catalogue = Catalogue {
        policy: "p",
        own: &[OWN],
    };

    fn response(allowed: bool, message: &str, warnings: &[&str]) -> AdmissionResponse {
        AdmissionResponse {
            uid: "u".into(),
            allowed,
            status: (!allowed).then(|| Status {
                message: Some(message.into()),
                code: Some(422),
            }),
            audit_annotations: None,
            warnings: (!warnings.is_empty())
                .then(|| warnings.iter().map(|w| (*w).to_owned()).collect()),
        }
    }

    #[test]
    fn readme_anchors_are_the_ids() {
        let readme = "| <a id=\"rule-own-rule\"></a>`own-rule` | deny |\n| <a id=\"rule-wrong-type\"></a>x |";
        let known = KnownRules::from_readme("p", readme);
        assert_eq!(
            known.ids.iter().map(String::as_str).collect::<Vec<_>>(),
            ["own-rule", "wrong-type"]
        );
    }

    #[test]
    fn every_line_and_warning_must_carry_a_known_tag() {
        let known = KnownRules::from_catalogue(&CATALOGUE);
        let good = response(
            false,
            "[p/own-rule] spec.a: x\n[p/wrong-type] spec.b: must be a string",
            &["[p/own-rule] w"],
        );
        assert_eq!(known.check(&good), Ok(()));
        for bad in [
            response(false, "[p/own-rule] spec.a: x\nspec.b: untagged", &[]),
            response(false, "[q/own-rule] spec.a: x", &[]),
            response(false, "[p/other] spec.a: x", &[]),
            response(true, "", &["untagged warning"]),
        ] {
            let error = known.check(&bad).unwrap_err();
            assert!(error.contains("does not start with the tag"), "{error}");
        }
    }
}
