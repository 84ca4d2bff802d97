//! Where each field of a YAML document is written, so a finding can name the
//! line and column of the field its path names (`check`) and the page can
//! mark it in the editor (the playground).
//!
//! Values are read without positions, so the same text is read a second
//! time into a tree of [`Spanned`] nodes that keeps, for each mapping entry,
//! where its key is, and for each sequence item, where the item starts. Both
//! reads go through serde-saphyr with the same [`Limit`], so they skip the
//! same empty and null documents and [`Tree::documents`] lines up with
//! [`yaml::documents`] one for one.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Location, Spanned};
use shared::field::Segment;

use crate::yaml::{self, Error, Limit};

/// Where a field is in the text: 1-based line and column, in characters,
/// and how many characters to mark from there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Place {
    pub line: u64,
    pub column: u64,
    pub length: u64,
}

impl Place {
    /// The top of a file: where a document that has no tree is reported.
    pub const TOP: Place = Place {
        line: 1,
        column: 1,
        length: 1,
    };

    /// The place of `location`, if the parser knew it.
    fn of(location: Location) -> Option<Self> {
        (location.line() > 0).then(|| Self {
            line: location.line(),
            column: location.column(),
            length: location.span().len().max(1),
        })
    }
}

/// How far [`Tree::locate`] got along a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Located {
    pub place: Place,
    /// Whether the whole path was found, or only a parent of it (the field
    /// is missing, and the message is about its absence).
    pub exact: bool,
}

/// A YAML document with the position of every key and item.
#[derive(Debug)]
pub struct Tree(Spanned<Node>);

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

impl Tree {
    /// The tree of a text of one document.
    pub fn document(text: &str, limit: Limit) -> Result<Self, Error> {
        yaml::document::<Spanned<Node>>(text, limit).map(Tree)
    }

    /// The tree of every document [`yaml::documents`] returns for `text`,
    /// in the same order.
    pub fn documents(text: &str, limit: Limit) -> Result<Vec<Self>, Error> {
        yaml::documents::<Spanned<Node>>(text, limit)
            .map(|nodes| nodes.into_iter().map(Tree).collect())
    }

    /// Where the document's root node starts.
    pub fn root(&self) -> Place {
        Place::of(self.0.referenced).unwrap_or(Place::TOP)
    }

    /// Where `path` is: its key, its list item, or the deepest parent that
    /// is written. `None` when not even the first step is written (the
    /// root path among them: a message about the whole object).
    pub fn locate<'a>(&self, path: impl IntoIterator<Item = &'a Segment>) -> Option<Located> {
        let mut node = &self.0.value;
        let mut found = None;
        for segment in path {
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
            let Some((place, child)) = next else {
                return found.map(|place| Located {
                    place,
                    exact: false,
                });
            };
            found = place.or(found);
            node = child;
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

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Node, E> {
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
    use shared::FieldPath;

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

    fn place(tree: &Tree, path: &FieldPath) -> Option<(u64, u64, u64, bool)> {
        tree.locate(path.segments())
            .map(|l| (l.place.line, l.place.column, l.place.length, l.exact))
    }

    fn one(text: &str) -> Tree {
        Tree::document(text, Limit::Manifests).unwrap()
    }

    #[test]
    fn keys_are_found_where_they_are_written() {
        let tree = one(TEXT);
        assert_eq!(
            place(&tree, &FieldPath::parse("kind")),
            Some((2, 1, 4, true))
        );
        let label = FieldPath::parse("metadata.labels").key("platform.cozystack.io/no-delete");
        assert_eq!(place(&tree, &label), Some((5, 5, 31, true)));
        let role = FieldPath::parse("spec.users").index(1).key("role");
        assert_eq!(place(&tree, &role), Some((10, 5, 4, true)));
    }

    #[test]
    fn a_missing_field_points_at_its_deepest_parent() {
        let tree = one(TEXT);
        let missing = FieldPath::parse("spec.storageClass");
        assert_eq!(place(&tree, &missing), Some((6, 1, 4, false)));
        let item = FieldPath::parse("spec.users").index(1);
        assert_eq!(place(&tree, &item).map(|p| (p.0, p.3)), Some((9, true)));
        let below = item.key("missing");
        assert_eq!(place(&tree, &below).map(|p| (p.0, p.3)), Some((9, false)));
        assert_eq!(place(&tree, &FieldPath::parse("nowhere")), None);
        assert_eq!(place(&tree, &FieldPath::root()), None);
    }

    #[test]
    fn documents_line_up_with_the_values_read() {
        let text = "---\n# a comment\n---\napiVersion: v1\nkind: A\nspec:\n  users:\n    - name: a\n    - name: b\n      role: admin\n---\n~\n---\nkind: B\nmetadata: {labels: {\"x/y\": z}}\n";
        let values: Vec<serde_json::Value> = yaml::documents(text, Limit::Manifests).unwrap();
        let trees = Tree::documents(text, Limit::Manifests).unwrap();
        assert_eq!(values.len(), 2, "the empty and null documents are left out");
        assert_eq!(trees.len(), values.len());
        let first = &trees[0];
        assert_eq!((first.root().line, first.root().column), (4, 1));
        let role = FieldPath::parse("spec.users").index(1).key("role");
        assert_eq!(place(first, &role).map(|p| (p.0, p.1)), Some((10, 7)));
        let label = FieldPath::parse("metadata.labels").key("x/y");
        assert_eq!(place(&trees[1], &label).map(|p| (p.0, p.1)), Some((15, 21)));
    }

    #[test]
    fn json_is_read_as_yaml() {
        let tree = one("{\n  \"kind\": \"A\",\n  \"spec\": {\"a\": [1, 2]}\n}\n");
        let item = FieldPath::parse("spec.a").index(1);
        assert_eq!(place(&tree, &item).map(|p| (p.0, p.1)), Some((3, 21)));
    }

    #[test]
    fn text_that_is_not_yaml_has_no_tree() {
        assert!(Tree::document("a: [", Limit::Manifests).is_err());
    }
}
