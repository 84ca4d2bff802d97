//! Each policy of the registry with its code: its settings type, its rule
//! catalogue, what it reads of an object and its rule, as the policy's
//! crate exports them and its module's entry points call them.
//!
//! The tools that run or describe the rules natively walk the bundle here:
//! the playground judges with [`visit`], fuzzing and the chart's settings
//! schema with [`visit_all`]. A settings type differs from policy to policy,
//! so a tool is a [`Visitor`], called once per policy with the policy's own
//! type. The list is the registry's (`crates/layout`'s folders); the users'
//! CLI, which runs the modules and links no policy, reads the registry
//! itself, never this crate.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use shared::{Catalogue, Evaluate, Selection, Validatable};

/// What every policy's settings type is: decoded and validated as its
/// module decodes and validates them, and described as a JSON schema for
/// the chart's `values.schema.json`.
pub trait Settings: DeserializeOwned + Default + Validatable + JsonSchema + 'static {}

impl<S: DeserializeOwned + Default + Validatable + JsonSchema + 'static> Settings for S {}

/// One policy's code.
#[derive(Debug)]
pub struct Linked<S> {
    /// The folder, crate and module name.
    pub name: &'static str,
    /// Every rule the policy's findings may name.
    pub rules: Catalogue,
    /// What the rule reads of each object (`READS`).
    pub reads: Selection,
    /// The rule: a verdict from the request and the settings.
    pub evaluate: Evaluate<S>,
}

/// Something done with each policy, whatever its settings type.
pub trait Visitor {
    type Output;
    fn visit<S: Settings>(&mut self, policy: Linked<S>) -> Self::Output;
}

include!(concat!(env!("OUT_DIR"), "/linked.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    struct Names;

    impl Visitor for Names {
        type Output = &'static str;
        fn visit<S: Settings>(&mut self, policy: Linked<S>) -> &'static str {
            assert_eq!(policy.rules.policy, policy.name);
            policy.name
        }
    }

    struct Reads;

    impl Visitor for Reads {
        type Output = (&'static str, Vec<&'static str>);
        fn visit<S: Settings>(&mut self, policy: Linked<S>) -> Self::Output {
            let (Selection::Paths(paths) | Selection::OnDemand(paths)) = policy.reads;
            (policy.name, paths.to_vec())
        }
    }

    /// What each policy declares its rules read (its metadata's
    /// `io.cozystack-policies.reads`, which the snapshot command captures)
    /// is its `READS`.
    #[test]
    fn each_policy_declares_what_it_reads() {
        let declared = registry::policies().unwrap();
        for (name, reads) in visit_all(&mut Reads) {
            let policy = declared.iter().find(|p| p.name == name).unwrap();
            assert_eq!(
                policy.metadata.reads(),
                reads,
                "policies/{name}/metadata.yml"
            );
        }
    }

    /// Every policy of the registry is linked, under its own name, with the
    /// catalogue that names it.
    #[test]
    fn the_registry_and_the_linked_policies_are_one_list() {
        assert_eq!(visit_all(&mut Names), registry::names().collect::<Vec<_>>());
        assert_eq!(visit("no-delete", &mut Names), Some("no-delete"));
        assert_eq!(visit("nope", &mut Names), None);
    }
}
