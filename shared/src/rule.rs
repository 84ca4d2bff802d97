//! Stable rule ids: every finding names the rule that made it.
//!
//! The id travels in the finding's text (`[<policy>/<rule>] ...`, see
//! [`crate::Finding`]) because PolicyReports keep only a policy's message:
//! a report reader recognises our findings by the tag even when the bundle
//! is deployed under other policy names. Each policy declares its rules in
//! one [`Catalogue`], which its README's "Rules" table mirrors.

/// What a rule does with what it finds, when the change introduced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The request is rejected.
    Deny,
    /// The request is allowed with a warning.
    Warn,
    /// A warning that a setting may raise to a denial.
    Setting,
    /// A denial only when a setting turns the rule on.
    OptIn,
}

impl Level {
    /// How a README's "Rules" table names the level.
    pub fn describe(self) -> &'static str {
        match self {
            Level::Deny => "deny",
            Level::Warn => "warn",
            Level::Setting => "warn (deny by setting)",
            Level::OptIn => "deny (off unless set)",
        }
    }
}

/// One rule of one policy: its stable id, what it does and the source it
/// follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The policy crate's name.
    pub policy: &'static str,
    /// Kebab-case, stable across releases.
    pub id: &'static str,
    pub level: Level,
    /// What the rule checks, in one line.
    pub summary: &'static str,
    /// The chart template or Go file the rule follows.
    pub source: &'static str,
}

impl Rule {
    /// The rule for a request that is not an admission request the policy
    /// can read.
    pub const fn malformed_request(policy: &'static str) -> Rule {
        Rule {
            policy,
            id: "malformed-request",
            level: Level::Deny,
            summary: "the payload is not an admission request with the objects the operation needs",
            source: "Kubernetes `admission.k8s.io/v1` AdmissionReview",
        }
    }

    /// The rule for a field of the wrong type.
    pub const fn wrong_type(policy: &'static str) -> Rule {
        Rule {
            policy,
            id: "wrong-type",
            level: Level::Deny,
            summary: "a field the policy reads has a type the charts cannot use",
            source: "the field's type in the chart's values or the Kubernetes API",
        }
    }

    /// The rule for a required field that is absent.
    pub const fn missing_field(policy: &'static str) -> Rule {
        Rule {
            policy,
            id: "missing-field",
            level: Level::Deny,
            summary: "a field the policy needs is absent",
            source: "the Kubernetes API",
        }
    }

    /// The rule of the warning that says how many warnings did not fit.
    pub const fn more_warnings(policy: &'static str) -> Rule {
        Rule {
            policy,
            id: "more-warnings",
            level: Level::Warn,
            summary: "more warnings than the API server passes on; says how many were left out",
            source: "`k8s.io/apiserver/pkg/endpoints/filters/warning.go`",
        }
    }

    /// `<policy>/<id>`, as the tag of a finding shows it.
    pub fn tag(&self) -> String {
        format!("{}/{}", self.policy, self.id)
    }
}

/// Every rule of a policy, declared in one place.
#[derive(Debug, Clone, Copy)]
pub struct Catalogue {
    pub policy: &'static str,
    /// The policy's own rules; [`Catalogue::rules`] adds the shared ones.
    pub own: &'static [Rule],
}

impl Catalogue {
    /// The policy's rules, then the rules every policy shares (malformed
    /// requests and fields, warnings that did not fit).
    pub fn rules(&self) -> Vec<Rule> {
        let mut rules = self.own.to_vec();
        rules.extend([
            Rule::malformed_request(self.policy),
            Rule::wrong_type(self.policy),
            Rule::missing_field(self.policy),
            Rule::more_warnings(self.policy),
        ]);
        rules
    }

    /// The ids of the rules of level [`Level::Setting`], in catalogue
    /// order: the rules the setting `deny` may raise to denials.
    pub fn raisable(&self) -> Vec<&'static str> {
        self.rules()
            .into_iter()
            .filter(|rule| rule.level == Level::Setting)
            .map(|rule| rule.id)
            .collect()
    }

    /// The rule with `id`, if the policy has one.
    pub fn find(&self, id: &str) -> Option<Rule> {
        self.rules().into_iter().find(|rule| rule.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: Rule = Rule {
        policy: "p",
        id: "own",
        level: Level::Setting,
        summary: "s",
        source: "x",
    };

    #[test]
    fn a_catalogue_holds_its_own_rules_and_the_shared_ones() {
        let catalogue = Catalogue {
            policy: "p",
            own: &[OWN],
        };
        let ids: Vec<&str> = catalogue.rules().iter().map(|r| r.id).collect();
        assert_eq!(
            ids,
            [
                "own",
                "malformed-request",
                "wrong-type",
                "missing-field",
                "more-warnings"
            ]
        );
        assert_eq!(catalogue.find("own"), Some(OWN));
        assert_eq!(
            catalogue.find("wrong-type").map(|r| r.tag()).as_deref(),
            Some("p/wrong-type")
        );
        assert_eq!(catalogue.find("nope"), None);
        assert_eq!(catalogue.raisable(), ["own"]);
        assert_eq!(OWN.level.describe(), "warn (deny by setting)");
    }
}
