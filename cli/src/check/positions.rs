//! Where each field of a YAML document is written, so a finding can name the
//! line and column of the field its path names.
//!
//! serde-saphyr gives values without positions, so the same text is read a
//! second time with its event parser (granit-parser), recording the start of
//! every mapping key and sequence item under its field path.

use std::collections::HashMap;

use granit_parser::{Event, Parser, ScalarStyle, Span};
use shared::field::Segment;

/// A place in a file: line and column, both counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    fn of(span: &Span) -> Self {
        Self {
            line: span.start.line(),
            column: span.start.col().saturating_add(1),
        }
    }
}

/// Positions of one document: its root node and every field below it.
#[derive(Debug, Clone, Default)]
pub struct Document {
    pub root: Position,
    fields: HashMap<Vec<Segment>, Position>,
}

impl Document {
    /// A document known only by where it starts.
    pub fn at(root: Position) -> Self {
        Self {
            root,
            fields: HashMap::new(),
        }
    }

    /// The position of the deepest field of `path` that is written in the
    /// document (a key's position for mapping entries); the root when none is.
    pub fn locate(&self, path: &[Segment]) -> Position {
        (1..=path.len())
            .rev()
            .find_map(|end| path.get(..end).and_then(|p| self.fields.get(p)))
            .copied()
            .unwrap_or(self.root)
    }
}

/// What the parser is inside of.
enum Frame {
    Map {
        path: Vec<Segment>,
        key: Option<String>,
    },
    Seq {
        path: Vec<Segment>,
        next: usize,
    },
    /// A mapping or sequence used as a key, which no field path can name.
    Skip {
        depth: usize,
    },
}

/// A document being read.
struct Builder {
    document: Document,
    stack: Vec<Frame>,
    /// Whether the root node was a null scalar, which serde-saphyr skips.
    null: bool,
    has_root: bool,
}

fn null_like(value: &str, style: ScalarStyle) -> bool {
    style == ScalarStyle::Plain && matches!(value, "" | "~" | "null" | "Null" | "NULL")
}

impl Builder {
    fn new() -> Self {
        Self {
            document: Document::default(),
            stack: Vec::new(),
            null: false,
            has_root: false,
        }
    }

    /// Records a node starting at `span`; returns the path a collection
    /// opened there lives at (None inside a skipped key).
    fn node(&mut self, span: &Span, key_text: Option<&str>) -> Option<Vec<Segment>> {
        let at = Position::of(span);
        match self.stack.last_mut() {
            None => {
                self.document.root = at;
                self.has_root = true;
                Some(Vec::new())
            }
            Some(Frame::Skip { .. }) => None,
            Some(Frame::Seq { path, next }) => {
                let mut child = path.clone();
                child.push(Segment::Index(*next));
                *next = next.saturating_add(1);
                self.document.fields.insert(child.clone(), at);
                Some(child)
            }
            Some(Frame::Map { path, key }) => match key.take() {
                Some(name) => {
                    let mut child = path.clone();
                    child.push(Segment::Key(name));
                    Some(child)
                }
                None => {
                    // This node is a key: remember its name and position.
                    let name = key_text.map(str::to_owned);
                    if let Some(name) = &name {
                        let mut child = path.clone();
                        child.push(Segment::Key(name.clone()));
                        self.document.fields.entry(child).or_insert(at);
                    }
                    *key = Some(name.unwrap_or_default());
                    None
                }
            },
        }
    }

    fn open(&mut self, span: &Span, map: bool) {
        if let Some(Frame::Skip { depth }) = self.stack.last_mut() {
            *depth = depth.saturating_add(1);
            return;
        }
        let is_key = matches!(self.stack.last(), Some(Frame::Map { key: None, .. }));
        let path = self.node(span, None);
        match path {
            Some(path) if !is_key => self.stack.push(if map {
                Frame::Map { path, key: None }
            } else {
                Frame::Seq { path, next: 0 }
            }),
            _ => self.stack.push(Frame::Skip { depth: 1 }),
        }
    }

    fn close(&mut self) {
        match self.stack.last_mut() {
            Some(Frame::Skip { depth }) if *depth > 1 => *depth -= 1,
            _ => {
                self.stack.pop();
            }
        }
    }
}

/// The positions of every document in `text` that serde-saphyr's
/// `from_multiple` returns (empty and null documents left out), in order.
/// Text the event parser refuses yields what was read before the error.
pub fn index(text: &str) -> Vec<Document> {
    let mut documents = Vec::new();
    let mut builder = Builder::new();
    for next in Parser::new_from_str(text) {
        let Ok((event, span)) = next else { break };
        match event {
            Event::DocumentStart(..) => builder = Builder::new(),
            Event::DocumentEnd => {
                let done = std::mem::replace(&mut builder, Builder::new());
                if done.has_root && !done.null {
                    documents.push(done.document);
                }
            }
            Event::Scalar(value, style, _, tag) => {
                let root = builder.stack.is_empty();
                builder.node(&span, Some(&value));
                if root && tag.is_none() && null_like(&value, style) {
                    builder.null = true;
                }
            }
            Event::Alias(_) => {
                builder.node(&span, None);
            }
            Event::MappingStart(..) => builder.open(&span, true),
            Event::SequenceStart(..) => builder.open(&span, false),
            Event::MappingEnd | Event::SequenceEnd => builder.close(),
            _ => {}
        }
    }
    documents
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::FieldPath;

    fn at(document: &Document, path: &str) -> (usize, usize) {
        let path = FieldPath::parse_rendered(path).unwrap_or_else(FieldPath::root);
        let segments: Vec<Segment> = path.segments().into_iter().cloned().collect();
        let p = document.locate(&segments);
        (p.line, p.column)
    }

    #[test]
    fn keys_and_items_are_found_in_each_document() {
        let text = "---\n# a comment\n---\napiVersion: v1\nkind: A\nspec:\n  users:\n    - name: a\n    - name: b\n      role: admin\n---\nkind: B\nmetadata: {labels: {\"x/y\": z}}\n";
        let documents = index(text);
        assert_eq!(documents.len(), 2, "the empty document is left out");
        let first = &documents[0];
        assert_eq!((first.root.line, first.root.column), (4, 1));
        assert_eq!(at(first, "spec.users[1].role"), (10, 7));
        assert_eq!(at(first, "spec.users[1]"), (9, 7));
        assert_eq!(at(first, "spec.users[0].name"), (8, 7));
        // A field that is not written falls back to its closest parent.
        assert_eq!(at(first, "spec.users[1].missing"), (9, 7));
        assert_eq!(at(first, "status.phase"), (4, 1));
        let second = &documents[1];
        assert_eq!(at(second, "metadata.labels[\"x/y\"]"), (13, 21));
    }

    #[test]
    fn json_is_read_as_yaml() {
        let documents = index("{\n  \"kind\": \"A\",\n  \"spec\": {\"a\": [1, 2]}\n}\n");
        assert_eq!(documents.len(), 1);
        assert_eq!(at(&documents[0], "spec.a[1]"), (3, 21));
    }
}
