//! Where a field path sits in the YAML a person typed.
//!
//! Messages name fields by path (`spec.users[1].role`); the page highlights
//! that field in the editor. serde-saphyr reports the source position of
//! any value read as [`Spanned`], so the document is read once more into a
//! tree of spanned nodes that keeps, for each map entry, where its key is.

use reading::yaml::{self, Limit};
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Location, Spanned};
use shared::FieldPath;
use shared::field::Segment;

/// Where a field is in the text: 1-based line and column, in characters,
/// and how many characters to mark from there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Place {
    pub line: u64,
    pub column: u64,
    pub length: u64,
}

impl Place {
    /// The place of `location`, if the parser knew it.
    fn of(location: Location) -> Option<Self> {
        (location.line() > 0).then(|| Self {
            line: location.line(),
            column: location.column(),
            length: location.span().len().max(1),
        })
    }
}

/// A YAML document with the position of every key and item.
#[derive(Debug)]
pub struct Tree(Node);

/// One node: a scalar, a list of spanned items, or a map of spanned keys.
#[derive(Debug)]
enum Node {
    Scalar,
    List(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<Key>, Spanned<Node>)>),
}

/// A map key as text (YAML allows numbers and booleans as keys too).
#[derive(Debug)]
struct Key(String);

/// How far [`Tree::locate`] got along a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Located {
    pub place: Place,
    /// Whether the whole path was found, or only a parent of it (the field
    /// is missing, and the message is about its absence).
    pub exact: bool,
}

impl Tree {
    /// Reads `text` for positions; `None` when it is not YAML (the page
    /// shows the parse error from the value reading instead).
    pub fn read(text: &str) -> Option<Self> {
        yaml::document::<Node>(text, Limit::Manifests)
            .ok()
            .map(Tree)
    }

    /// Where `path` is: its key, its list item, or the deepest parent that
    /// is there. The root (a message about the whole object) has no place.
    pub fn locate(&self, path: &FieldPath) -> Option<Located> {
        let mut node = &self.0;
        let mut found = None;
        for segment in path.segments() {
            let next = match (node, segment) {
                (Node::Map(entries), Segment::Key(key)) => entries
                    .iter()
                    .find(|(k, _)| k.value.0 == *key)
                    .map(|(k, v)| (Place::of(k.referenced), &v.value)),
                (Node::List(items), Segment::Index(index)) => items
                    .get(*index)
                    .map(|item| (Place::of(item.referenced), &item.value)),
                _ => None,
            };
            match next {
                Some((place, child)) => {
                    found = place.or(found);
                    node = child;
                }
                None => {
                    return found.map(|place| Located {
                        place,
                        exact: false,
                    });
                }
            }
        }
        found.map(|place| Located { place, exact: true })
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key()? {
            entries.push((key, map.next_value()?));
        }
        Ok(Node::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
        Ok(Key(key.to_owned()))
    }

    fn visit_bool<E: de::Error>(self, key: bool) -> Result<Key, E> {
        Ok(Key(key.to_string()))
    }

    fn visit_i64<E: de::Error>(self, key: i64) -> Result<Key, E> {
        Ok(Key(key.to_string()))
    }

    fn visit_u64<E: de::Error>(self, key: u64) -> Result<Key, E> {
        Ok(Key(key.to_string()))
    }

    fn visit_f64<E: de::Error>(self, key: f64) -> Result<Key, E> {
        Ok(Key(key.to_string()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
        Ok(Key("null".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata:
  labels:
    platform.cozystack.io/no-delete: 'true'
spec:
  users:
  - name: a
  - name: b
    role: admin
";

    fn place(path: FieldPath) -> Option<(u64, u64, u64, bool)> {
        let tree = Tree::read(TEXT).unwrap();
        tree.locate(&path)
            .map(|l| (l.place.line, l.place.column, l.place.length, l.exact))
    }

    #[test]
    fn keys_are_found_where_they_are_written() {
        assert_eq!(place(FieldPath::parse("kind")), Some((2, 1, 4, true)));
        let label = FieldPath::parse("metadata.labels").key("platform.cozystack.io/no-delete");
        assert_eq!(place(label), Some((5, 5, 31, true)));
        let role = FieldPath::parse("spec.users").index(1).key("role");
        assert_eq!(place(role), Some((10, 5, 4, true)));
    }

    #[test]
    fn a_missing_field_points_at_its_deepest_parent() {
        assert_eq!(
            place(FieldPath::parse("spec.storageClass")),
            Some((6, 1, 4, false))
        );
        let item = FieldPath::parse("spec.users").index(1);
        assert_eq!(place(item.clone()).map(|p| (p.0, p.3)), Some((9, true)));
        assert_eq!(place(FieldPath::parse("nowhere")), None);
        assert_eq!(place(FieldPath::root()), None);
    }

    #[test]
    fn text_that_is_not_yaml_has_no_tree() {
        assert!(Tree::read("a: [").is_none());
    }
}
