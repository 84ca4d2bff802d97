//! Kubernetes RBAC as the API server decides it, over ClusterRoles and
//! ClusterRoleBindings read from manifests: what a service account may do,
//! proved from the chart's rendering beside Kubewarden's and Kubernetes' own
//! roles rather than assumed.
//!
//! The rules follow kubernetes/kubernetes `pkg/apis/rbac/v1/evaluation_helpers.go`
//! (`VerbMatches`, `APIGroupMatches`, `ResourceMatches` with `*/subresource`,
//! `ResourceNameMatches`) and `plugin/pkg/auth/authorizer/rbac/rbac.go`
//! (`appliesToUser`: a ServiceAccount subject, or a Group subject naming one
//! of the account's groups). A ClusterRole with an `aggregationRule` holds
//! the rules of every other ClusterRole its selectors match, as
//! kube-controller-manager's `clusterrole-aggregation` controller fills it
//! (nested aggregation resolved to a fixed point). Roles and RoleBindings
//! are not modelled: the chart renders none.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Subject};

/// A service account, as RBAC sees it: its user name and its groups.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Account {
    pub namespace: String,
    pub name: String,
}

impl Account {
    pub fn new(namespace: &str, name: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// The groups the API server gives every service account token.
    fn groups(&self) -> [String; 3] {
        [
            "system:serviceaccounts".to_owned(),
            format!("system:serviceaccounts:{}", self.namespace),
            "system:authenticated".to_owned(),
        ]
    }

    fn is(&self, subject: &Subject) -> bool {
        match subject.kind.as_str() {
            "ServiceAccount" => {
                subject.name == self.name && subject.namespace.as_deref() == Some(&self.namespace)
            }
            "Group" => self.groups().contains(&subject.name),
            _ => false,
        }
    }
}

impl std::fmt::Display for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A resource request: `verb` on `resource` (`plural` or
/// `plural/subresource`) of `group`, by name or not.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Request {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub name: Option<String>,
}

impl Request {
    pub fn new(verb: &str, group: &str, resource: &str) -> Self {
        Self {
            verb: verb.to_owned(),
            group: group.to_owned(),
            resource: resource.to_owned(),
            name: None,
        }
    }

    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let group = if self.group.is_empty() {
            "core"
        } else {
            &self.group
        };
        write!(f, "{} {group}/{}", self.verb, self.resource)?;
        if let Some(name) = &self.name {
            write!(f, " {name}")?;
        }
        Ok(())
    }
}

/// What one rule grants when it names everything literally: (group,
/// resource, verb, name), name `None` for every object.
pub type Grant = (String, String, String, Option<String>);

/// ClusterRoles, aggregated, and the bindings that hand them out.
#[derive(Debug, Clone, Default)]
pub struct Rbac {
    roles: BTreeMap<String, ClusterRole>,
    bindings: Vec<ClusterRoleBinding>,
}

impl Rbac {
    /// The roles and bindings, with every aggregated role filled in.
    pub fn new(roles: Vec<ClusterRole>, bindings: Vec<ClusterRoleBinding>) -> Self {
        let mut roles: BTreeMap<String, ClusterRole> = roles
            .into_iter()
            .map(|role| (role.metadata.name.clone().unwrap_or_default(), role))
            .collect();
        aggregate(&mut roles);
        Self { roles, bindings }
    }

    /// The rules bound to `account` by every binding that names it (a
    /// binding to a missing role grants nothing, as in the API server).
    pub fn rules_of(&self, account: &Account) -> Vec<&PolicyRule> {
        self.bindings
            .iter()
            .filter(|b| b.role_ref.kind == "ClusterRole")
            .filter(|b| b.subjects.iter().flatten().any(|s| account.is(s)))
            .filter_map(|b| self.roles.get(&b.role_ref.name))
            .flat_map(|role| role.rules.iter().flatten())
            .collect()
    }

    /// Whether `account` may make `request`, cluster-wide.
    pub fn allows(&self, account: &Account, request: &Request) -> bool {
        self.rules_of(account)
            .into_iter()
            .any(|rule| rule_allows(rule, request))
    }

    /// Every grant the bindings of `account` make, when each of its rules
    /// names its groups, resources and verbs literally; the rule that uses a
    /// wildcard or a non-resource URL otherwise (it grants more than a
    /// list can say).
    pub fn grants_of(&self, account: &Account) -> Result<BTreeSet<Grant>, String> {
        let mut grants = BTreeSet::new();
        for rule in self.rules_of(account) {
            let groups = rule.api_groups.clone().unwrap_or_default();
            let resources = rule.resources.clone().unwrap_or_default();
            let wildcard = |items: &[String]| items.iter().any(|i| i.contains('*'));
            if wildcard(&groups)
                || wildcard(&resources)
                || wildcard(&rule.verbs)
                || rule
                    .non_resource_urls
                    .as_ref()
                    .is_some_and(|u| !u.is_empty())
            {
                return Err(format!(
                    "{account} is granted {rule:?}, more than a list of resources"
                ));
            }
            let names: Vec<Option<String>> = match &rule.resource_names {
                Some(names) if !names.is_empty() => names.iter().cloned().map(Some).collect(),
                _ => vec![None],
            };
            for group in &groups {
                for resource in &resources {
                    for verb in &rule.verbs {
                        for name in &names {
                            grants.insert((
                                group.clone(),
                                resource.clone(),
                                verb.clone(),
                                name.clone(),
                            ));
                        }
                    }
                }
            }
        }
        Ok(grants)
    }
}

/// `RuleAllows` for a resource request.
fn rule_allows(rule: &PolicyRule, request: &Request) -> bool {
    let verb = rule.verbs.iter().any(|v| v == "*" || *v == request.verb);
    let group = rule
        .api_groups
        .iter()
        .flatten()
        .any(|g| g == "*" || *g == request.group);
    let subresource = request.resource.split_once('/').map(|(_, sub)| sub);
    let resource = rule.resources.iter().flatten().any(|r| {
        r == "*"
            || *r == request.resource
            || subresource.is_some_and(|sub| r.strip_prefix("*/") == Some(sub))
    });
    let name = match rule.resource_names.as_deref() {
        None | Some([]) => true,
        Some(names) => request
            .name
            .as_ref()
            .is_some_and(|wanted| names.contains(wanted)),
    };
    verb && group && resource && name
}

/// Fills every role with an aggregationRule with the rules of the other
/// roles its selectors match, until nothing changes.
fn aggregate(roles: &mut BTreeMap<String, ClusterRole>) {
    loop {
        let mut changed = false;
        let names: Vec<String> = roles.keys().cloned().collect();
        for name in &names {
            let Some(selectors) = roles
                .get(name)
                .and_then(|r| r.aggregation_rule.as_ref())
                .and_then(|a| a.cluster_role_selectors.clone())
            else {
                continue;
            };
            let mut rules: Vec<PolicyRule> = Vec::new();
            for (other, role) in roles.iter() {
                if other == name {
                    continue;
                }
                let labels = role.metadata.labels.clone().unwrap_or_default();
                // kube-controller-manager skips a selector apimachinery
                // refuses: it aggregates nothing.
                if selectors
                    .iter()
                    .any(|s| models::label_selector::selects(s, &labels).unwrap_or(false))
                {
                    for rule in role.rules.iter().flatten() {
                        if !rules.contains(rule) {
                            rules.push(rule.clone());
                        }
                    }
                }
            }
            if let Some(role) = roles.get_mut(name)
                && role.rules.as_ref() != Some(&rules)
            {
                role.rules = Some(rules);
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn role(value: serde_json::Value) -> ClusterRole {
        serde_json::from_value(value).unwrap()
    }

    fn binding(role: &str, subject: serde_json::Value) -> ClusterRoleBinding {
        serde_json::from_value(json!({
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [subject],
        }))
        .unwrap()
    }

    fn rbac() -> Rbac {
        Rbac::new(
            vec![
                role(json!({
                    "metadata": {"name": "view"},
                    "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"aggregate-to-view": "true"}}]},
                })),
                role(json!({
                    "metadata": {"name": "pods", "labels": {"aggregate-to-view": "true"}},
                    "rules": [{"apiGroups": [""], "resources": ["pods", "*/status"], "verbs": ["get", "list"]}],
                })),
                role(json!({
                    "metadata": {"name": "unlabelled"},
                    "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
                })),
                role(json!({
                    "metadata": {"name": "named"},
                    "rules": [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["one"], "verbs": ["get"]}],
                })),
            ],
            vec![
                binding(
                    "view",
                    json!({"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}),
                ),
                binding(
                    "named",
                    json!({"kind": "Group", "name": "system:serviceaccounts:ns"}),
                ),
            ],
        )
    }

    #[test]
    fn aggregation_and_matching_follow_kubernetes() {
        let rbac = rbac();
        let sa = Account::new("ns", "sa");
        assert!(rbac.allows(&sa, &Request::new("list", "", "pods")));
        assert!(rbac.allows(&sa, &Request::new("get", "", "pods/status")));
        assert!(!rbac.allows(&sa, &Request::new("watch", "", "pods")));
        assert!(!rbac.allows(&sa, &Request::new("list", "apps", "pods")));
        // The unlabelled role is not aggregated, nor bound.
        assert!(!rbac.allows(&sa, &Request::new("list", "", "configmaps")));
        // By name only, through the namespace's group.
        assert!(rbac.allows(&sa, &Request::new("get", "", "secrets").named("one")));
        assert!(!rbac.allows(&sa, &Request::new("get", "", "secrets").named("two")));
        assert!(!rbac.allows(&sa, &Request::new("list", "", "secrets")));
        // Another account of another namespace gets nothing.
        let other = Account::new("other", "sa");
        assert!(!rbac.allows(&other, &Request::new("list", "", "pods")));
    }

    #[test]
    fn grants_are_listed_and_wildcards_refused() {
        let rbac = rbac();
        let grants = rbac.grants_of(&Account::new("ns", "sa"));
        // `*/status` is a wildcard: the list cannot say what it covers.
        assert!(grants.is_err(), "{grants:?}");
        let only_named = Rbac::new(rbac.roles.values().cloned().collect(), {
            let mut bindings = rbac.bindings.clone();
            bindings.retain(|b| b.role_ref.name == "named");
            bindings
        });
        assert_eq!(
            only_named.grants_of(&Account::new("ns", "sa")).unwrap(),
            BTreeSet::from([(
                String::new(),
                "secrets".to_owned(),
                "get".to_owned(),
                Some("one".to_owned())
            )])
        );
    }
}
