//! Reading only the parts of an object a rule reads.
//!
//! A request carries one or two whole objects, often several kilobytes of
//! which a rule reads a few fields (`metadata.labels`, `spec.oidc`). Each
//! policy names the subtrees it reads; [`Reads`] keeps exactly those while
//! serde_json parses the request, and skips everything else without
//! building it ([`serde::de::IgnoredAny`]). A subtree that is not the object
//! the rule expects (a string where `spec` should be) is kept whole, so the
//! rule can say what is wrong with it.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What a rule reads of each object (dotted paths such as
/// `metadata.labels`), and when, as its policy declares it.
///
/// Reading an object up front costs one pass over it; reading it on demand
/// costs a quick pass to find it, and the reading pass only if the rule
/// asks for it. A rule that always reads both objects of an UPDATE reads
/// them up front; one that often needs only one reads on demand. Either
/// way a rule can read more than its policy declared
/// ([`crate::Request::object_reading`]), as settings that name more fields
/// need: up front, that reads the payload again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// These subtrees, read while the request is parsed.
    Paths(&'static [&'static str]),
    /// These subtrees, read from an object when the rule first asks for it.
    OnDemand(&'static [&'static str]),
}

/// The subtrees of an object a rule reads, as dotted paths
/// (`["metadata.labels", "spec"]`): each path keeps its whole value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reads<'p>(Node<'p>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node<'p> {
    /// Keep the whole value.
    Whole,
    /// Keep only these members of an object, each as its node says.
    Members(Vec<(&'p str, Node<'p>)>),
}

impl<'p> Node<'p> {
    /// Keeps the subtree at the dotted `path` below this node.
    fn add(&mut self, path: &'p str) {
        let Node::Members(members) = self else {
            return; // Already kept whole.
        };
        let (first, rest) = match path.split_once('.') {
            Some((first, rest)) => (first, Some(rest)),
            None => (path, None),
        };
        let at = match members.iter().position(|(key, _)| *key == first) {
            Some(at) => at,
            None => {
                members.push((first, Node::Members(Vec::new())));
                members.len() - 1
            }
        };
        if let Some((_, child)) = members.get_mut(at) {
            match rest {
                Some(rest) => child.add(rest),
                None => *child = Node::Whole,
            }
        }
    }
}

impl<'p> Reads<'p> {
    /// The subtrees at `paths`. `metadata.name` and `metadata.namespace`
    /// are always read: requests name their object by them.
    pub fn new(paths: &[&'p str]) -> Self {
        let mut root = Node::Members(Vec::new());
        for path in paths
            .iter()
            .copied()
            .chain(["metadata.name", "metadata.namespace"])
        {
            root.add(path);
        }
        Self(root)
    }

    /// These reads of the object at `member` of `request`, applied to a
    /// whole `validate` payload.
    pub(crate) fn under_request(self, member: &'p str) -> Self {
        Self(Node::Members(vec![(
            "request",
            Node::Members(vec![(member, self.0)]),
        )]))
    }

    /// The whole object.
    pub fn everything() -> Self {
        Self(Node::Whole)
    }

    /// A seed that deserialises an object keeping only these subtrees.
    pub fn seed(&self) -> impl for<'de> DeserializeSeed<'de, Value = Value> + '_ {
        Select(&self.0)
    }
}

struct Select<'n>(&'n Node<'n>);

impl<'de> DeserializeSeed<'de> for Select<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self.0 {
            Node::Whole => serde::Deserialize::deserialize(deserializer),
            Node::Members(members) => deserializer.deserialize_any(SelectVisitor(members)),
        }
    }
}

struct SelectVisitor<'n>(&'n [(&'n str, Node<'n>)]);

impl<'de> Visitor<'de> for SelectVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut kept = Map::new();
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            match self.0.iter().find(|(wanted, _)| *wanted == &*key) {
                Some((_, node)) => {
                    let value = map.next_value_seed(Select(node))?;
                    kept.insert(key.into_owned(), value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(kept))
    }

    // Anything but an object is kept whole: the rule reports its type.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut elements = Vec::new();
        while let Some(element) = seq.next_element::<Value>()? {
            elements.push(element);
        }
        Ok(Value::Array(elements))
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// A JSON string, borrowed from the input unless it holds escapes: member
/// names (most members are skipped, and their names need no copy) and the
/// request's header. serde's own `Cow<str>` borrows only as a bare
/// `#[serde(borrow)]` field; inside an `Option` or a `Vec` it copies.
pub(crate) struct Text<'de>(pub(crate) Cow<'de, str>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Borrowed(text)))
    }

    fn visit_str<E>(self, text: &str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(text.to_owned())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(reads: &Reads, text: &str) -> Value {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        reads.seed().deserialize(&mut deserializer).unwrap()
    }

    const OBJECT: &str = r#"{"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "n", "namespace": "ns", "labels": {"a": "b"}, "annotations": {"x": "y"},
                     "managedFields": [{"manager": "kubectl"}]},
        "data": {"big": "..."}, "spec": {"oidc": {"mode": "None"}, "other": [1, 2]}}"#;

    #[test]
    fn keeps_only_what_the_rule_reads() {
        let reads = Reads::new(&["metadata.labels", "spec.oidc"]);
        assert_eq!(
            read(&reads, OBJECT),
            json!({"metadata": {"name": "n", "namespace": "ns", "labels": {"a": "b"}},
                   "spec": {"oidc": {"mode": "None"}}})
        );
    }

    #[test]
    fn a_path_and_its_parent_keep_the_parent_whole() {
        for paths in [["spec.oidc", "spec"], ["spec", "spec.oidc"]] {
            assert_eq!(
                read(&Reads::new(&paths), OBJECT)["spec"],
                json!({"oidc": {"mode": "None"}, "other": [1, 2]}),
                "{paths:?}"
            );
        }
        assert_eq!(
            read(&Reads::everything(), OBJECT),
            serde_json::from_str::<Value>(OBJECT).unwrap()
        );
    }

    #[test]
    fn values_of_the_wrong_shape_are_kept_for_the_rule_to_report() {
        let reads = Reads::new(&["spec.oidc"]);
        assert_eq!(read(&reads, r#"{"spec": "oops"}"#), json!({"spec": "oops"}));
        assert_eq!(
            read(&reads, r#"{"spec": [1, {"a": 2}]}"#),
            json!({"spec": [1, {"a": 2}]})
        );
        assert_eq!(
            read(&reads, r#"{"spec": {"oidc": null}}"#),
            json!({"spec": {"oidc": null}})
        );
        assert_eq!(read(&reads, "7"), json!(7));
    }

    #[test]
    fn skipped_parts_must_still_be_json() {
        let reads = Reads::new(&["metadata.labels"]);
        let mut deserializer = serde_json::Deserializer::from_str(r#"{"data": {"a": @}}"#);
        assert!(reads.seed().deserialize(&mut deserializer).is_err());
    }
}
