//! apimachinery's label selectors, as Kubernetes components apply a
//! `LabelSelector` (`matchLabels` and `matchExpressions`) to an object's
//! labels: kubernetes/apimachinery at eed236ce (2026-07-23),
//! `pkg/apis/meta/v1/helpers.go` (`LabelSelectorAsSelector`) and
//! `pkg/labels/selector.go` (`NewRequirement`, `Requirement.Matches`).
//!
//! The syntax of keys and values (`validateLabelKey`, `validateLabelValue`,
//! selector.go:188, 219-223) is not modelled: a selector the API server
//! stored has passed it.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// Why apimachinery refuses a selector: the component that applies it
/// fails instead of matching (audit-scanner skips the namespace, RBAC
/// aggregation skips the role).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// An operator other than In, NotIn, Exists and DoesNotExist
    /// (helpers.go:53-64).
    #[error("{0:?} is not a valid label selector operator")]
    Operator(String),
    /// In or NotIn with no value (selector.go:194-197).
    #[error("key {0:?}: for 'in', 'notin' operators, values set can't be empty")]
    NoValues(String),
    /// Exists or DoesNotExist with values (selector.go:202-205).
    #[error("key {0:?}: values set must be empty for exists and does not exist")]
    Values(String),
}

/// One requirement of a selector, as selector.go keeps it.
enum Requirement<'s> {
    /// `matchLabels` (helpers.go:44-50, an Equals requirement) and `In`.
    In(&'s str, &'s [String]),
    NotIn(&'s str, &'s [String]),
    Exists(&'s str),
    DoesNotExist(&'s str),
}

impl Requirement<'_> {
    /// selector.go:247-264: In and Equals need the key with one of the
    /// values; NotIn holds for a missing key or another value; Exists and
    /// DoesNotExist look at the key alone.
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        match self {
            Requirement::In(key, values) => labels
                .get(*key)
                .is_some_and(|value| values.iter().any(|v| v == value)),
            Requirement::NotIn(key, values) => labels
                .get(*key)
                .is_none_or(|value| !values.iter().any(|v| v == value)),
            Requirement::Exists(key) => labels.contains_key(*key),
            Requirement::DoesNotExist(key) => !labels.contains_key(*key),
        }
    }
}

/// The requirements of `selector`, or why apimachinery refuses it
/// (helpers.go:43-70): every term is built before any is matched, so a
/// refused term refuses the whole selector.
fn requirements(selector: &LabelSelector) -> Result<Vec<Requirement<'_>>, SelectorError> {
    let mut requirements = Vec::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        requirements.push(Requirement::In(key, std::slice::from_ref(value)));
    }
    for expression in selector.match_expressions.iter().flatten() {
        let key = expression.key.as_str();
        let values = expression.values.as_deref().unwrap_or_default();
        let requirement = match expression.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => {
                return Err(SelectorError::NoValues(key.to_owned()));
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                return Err(SelectorError::Values(key.to_owned()));
            }
            "In" => Requirement::In(key, values),
            "NotIn" => Requirement::NotIn(key, values),
            "Exists" => Requirement::Exists(key),
            "DoesNotExist" => Requirement::DoesNotExist(key),
            other => return Err(SelectorError::Operator(other.to_owned())),
        };
        requirements.push(requirement);
    }
    Ok(requirements)
}

/// Whether `selector` selects an object with `labels`: every requirement
/// holds (an empty selector selects everything, helpers.go:40-42), or the
/// reason apimachinery refuses the selector.
pub fn selects(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
) -> Result<bool, SelectorError> {
    Ok(requirements(selector)?
        .iter()
        .all(|requirement| requirement.matches(labels)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn selector(value: serde_json::Value) -> LabelSelector {
        serde_json::from_value(value).unwrap_or_default()
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn an_empty_selector_selects_everything() {
        assert_eq!(selects(&selector(json!({})), &labels(&[])), Ok(true));
    }

    #[test]
    fn match_labels_need_the_key_with_the_value() {
        let s = selector(json!({"matchLabels": {"a": "1"}}));
        assert_eq!(selects(&s, &labels(&[("a", "1")])), Ok(true));
        assert_eq!(selects(&s, &labels(&[("a", "2")])), Ok(false));
        assert_eq!(selects(&s, &labels(&[])), Ok(false));
    }

    #[test]
    fn in_and_not_in() {
        let within = selector(json!({"matchExpressions": [
            {"key": "a", "operator": "In", "values": ["1", "2"]}]}));
        assert_eq!(selects(&within, &labels(&[("a", "2")])), Ok(true));
        assert_eq!(selects(&within, &labels(&[])), Ok(false));
        let outside = selector(json!({"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}]}));
        assert_eq!(selects(&outside, &labels(&[])), Ok(true));
        assert_eq!(
            selects(
                &outside,
                &labels(&[("kubernetes.io/metadata.name", "kube-system")])
            ),
            Ok(false)
        );
        assert_eq!(
            selects(
                &outside,
                &labels(&[("kubernetes.io/metadata.name", "tenant-root")])
            ),
            Ok(true)
        );
    }

    #[test]
    fn exists_and_does_not_exist() {
        let exists = selector(json!({"matchExpressions": [{"key": "a", "operator": "Exists"}]}));
        assert_eq!(selects(&exists, &labels(&[("a", "")])), Ok(true));
        assert_eq!(selects(&exists, &labels(&[])), Ok(false));
        let absent =
            selector(json!({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}));
        assert_eq!(selects(&absent, &labels(&[])), Ok(true));
        assert_eq!(selects(&absent, &labels(&[("a", "x")])), Ok(false));
    }

    #[test]
    fn every_requirement_must_hold() {
        let s = selector(json!({"matchLabels": {"a": "1"}, "matchExpressions": [
            {"key": "b", "operator": "Exists"}]}));
        assert_eq!(selects(&s, &labels(&[("a", "1")])), Ok(false));
        assert_eq!(selects(&s, &labels(&[("a", "1"), ("b", "")])), Ok(true));
    }

    #[test]
    fn malformed_selectors_are_refused_not_matched() {
        let unknown = selector(
            json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}),
        );
        assert_eq!(
            selects(&unknown, &labels(&[])),
            Err(SelectorError::Operator("Gt".into()))
        );
        let empty =
            selector(json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}));
        assert_eq!(
            selects(&empty, &labels(&[])),
            Err(SelectorError::NoValues("a".into()))
        );
        let valued = selector(
            json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
        );
        assert_eq!(
            selects(&valued, &labels(&[])),
            Err(SelectorError::Values("a".into()))
        );
    }
}
