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
    /// The rule could not judge the object (a cluster read gave no answer,
    /// or nothing is known to judge it by): a warning, so a flaky API never
    /// blocks a write. The rule's id ends in [`NOT_CHECKED_SUFFIX`].
    NotCheckedWarns,
    /// The same in a report-only policy: a denial, so audit-scanner, which
    /// records an allowed object as `pass` whatever its warnings, records
    /// an unchecked one as `fail`. Such a policy runs in monitor mode, which
    /// never rejects a write.
    NotCheckedFails,
}

/// How the id of every rule that says "not checked" ends. The id is what
/// travels in a finding's tag, so whoever reads findings back (the CLI's
/// checklist, a report) tells an unchecked object from a judged one by it.
pub const NOT_CHECKED_SUFFIX: &str = "-not-checked";

/// Whether the rule id `id` (`<rule>` or `<policy>/<rule>`) says that the
/// object was not checked, rather than judged.
pub fn is_not_checked(id: &str) -> bool {
    id.ends_with(NOT_CHECKED_SUFFIX)
}

impl Level {
    /// How a README's "Rules" table names the level.
    pub fn describe(self) -> &'static str {
        match self {
            Level::Deny => "deny",
            Level::Warn => "warn",
            Level::Setting => "warn (deny by setting)",
            Level::OptIn => "deny (off unless set)",
            Level::NotCheckedWarns => "warn (not checked)",
            Level::NotCheckedFails => "deny (not checked)",
        }
    }

    /// Whether the level says "not checked" rather than judging.
    pub fn is_not_checked(self) -> bool {
        matches!(self, Level::NotCheckedWarns | Level::NotCheckedFails)
    }
}

/// One rule of one policy: its stable id and what a finding of it does.
///
/// What the rule checks and the chart template or Go file it follows are
/// the doc comment of the constant that declares it, and a row of its
/// policy's README: a policy module carries every field of every rule it
/// can report, so it holds no text it never shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The policy crate's name.
    pub policy: &'static str,
    /// Kebab-case, stable across releases.
    pub id: &'static str,
    pub level: Level,
}

impl Rule {
    /// The rule for a request that is not an admission request the policy
    /// can read.
    ///
    /// The payload is not an admission request with the objects the operation needs.
    ///
    /// Source: Kubernetes `admission.k8s.io/v1` AdmissionReview.
    pub const fn malformed_request(policy: &'static str) -> Rule {
        Rule {
            policy,
            id: "malformed-request",
            level: Level::Deny,
        }
    }

    /// The rule for a field of the wrong type.
    ///
    /// A field the policy reads has a type the charts cannot use.
    ///
    /// Source: the field's type in the chart's values or the Kubernetes API.
    pub const fn wrong_type(policy: &'static str) -> Rule {
        Rule {
            policy,
            id: "wrong-type",
            level: Level::Deny,
        }
    }

    /// The rule for a required field that is absent.
    ///
    /// A field the policy needs is absent.
    ///
    /// Source: the Kubernetes API.
    pub const fn missing_field(policy: &'static str) -> Rule {
        Rule {
            policy,
            id: "missing-field",
            level: Level::Deny,
        }
    }

    /// The rule of the warning that says how many warnings did not fit.
    ///
    /// More warnings than the API server passes on; says how many were left out.
    ///
    /// Source: `k8s.io/apiserver/pkg/endpoints/filters/warning.go`.
    pub const fn more_warnings(policy: &'static str) -> Rule {
        Rule {
            policy,
            id: "more-warnings",
            level: Level::Warn,
        }
    }

    /// The rule of a policy whose rules follow a release's charts, when the
    /// release to judge by is not simply known.
    ///
    /// The cluster runs a Cozystack release the bundle does not know, so the rules that follow a
    /// release's charts did not check the object; or the cluster's release could not be read, so
    /// they judged it by the default release's charts.
    ///
    /// Source: the setting `cozystackVersion: cluster`; the release the cluster records in Deployment
    /// `cozy-system/cozystack-operator` (`packages/core/installer/templates/cozystack-operator.yaml`,
    /// `pkg/version/version.go`).
    /// `level` is [`Level::NotCheckedWarns`], or [`Level::NotCheckedFails`]
    /// in a report-only policy.
    pub const fn release_not_checked(policy: &'static str, level: Level) -> Rule {
        Rule {
            policy,
            id: "release-not-checked",
            level,
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

    /// Refuses a catalogue whose "not checked" rules and ids disagree: a
    /// rule of a not-checked level must end in [`NOT_CHECKED_SUFFIX`], and
    /// only such a rule may, or a reader of its findings would count an
    /// unchecked object as judged (or the reverse).
    pub fn check(&self) -> Result<(), String> {
        for rule in self.own {
            if rule.level.is_not_checked() != is_not_checked(rule.id) {
                return Err(format!(
                    "rule {}: its level is {:?}, so its id {} end in {NOT_CHECKED_SUFFIX:?}",
                    rule.tag(),
                    rule.level,
                    if rule.level.is_not_checked() {
                        "must"
                    } else {
                        "must not"
                    }
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: Rule = Rule {
        policy: "p",
        id: "own",
        level: Level::Setting,
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

    #[test]
    fn not_checked_levels_and_ids_agree() {
        let unread = |id, level| Catalogue {
            policy: "p",
            own: Box::leak(Box::new([Rule { id, level, ..OWN }])),
        };
        assert_eq!(
            unread("read-not-checked", Level::NotCheckedFails).check(),
            Ok(())
        );
        assert_eq!(
            unread("read-not-checked", Level::NotCheckedWarns).check(),
            Ok(())
        );
        assert_eq!(unread("read", Level::Warn).check(), Ok(()));
        let error = unread("read", Level::NotCheckedWarns).check().unwrap_err();
        assert!(error.contains("must end in \"-not-checked\""), "{error}");
        let error = unread("read-not-checked", Level::Warn).check().unwrap_err();
        assert!(error.contains("must not end"), "{error}");
        assert!(is_not_checked("upgrade-gate/etcd-adoption-not-checked"));
        assert!(!is_not_checked("upgrade-gate/etcd-adoption-target"));
    }
}
