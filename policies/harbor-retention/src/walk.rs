//! A depth-first search for members of a JSON tree, by name.
//!
//! The search reads the raw members and reports [`Field`]s, whose paths
//! are rendered only when a message needs them, so a clean spec costs one
//! scan and no allocation per member. It keeps its own stack instead of
//! recursing, and stops at [`MAX_DEPTH`] levels, far beyond chart values
//! (a Harbor spec is four levels deep), so hostile nesting is refused
//! early. Members are visited in document order (pre-order); list elements
//! are walked through but not visited themselves, as they have no name.

use shared::json::{Elements, Json, Kind, Members, member_name};
use shared::{Field, FieldError, FieldPath};

/// Levels of objects and lists the search enters below its root.
pub const MAX_DEPTH: usize = 64;

/// What to do with a visited member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<C> {
    /// Walk into the member's value (if it is an object or a list), in
    /// context `C`.
    Descend(C),
    /// Report the member; its value is not searched further.
    Report,
}

/// Why a search stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkError {
    /// A value is not the JSON it claims to be.
    Field(FieldError),
    /// The value at this path nests deeper than [`MAX_DEPTH`].
    TooDeep(FieldPath),
}

impl From<FieldError> for WalkError {
    fn from(error: FieldError) -> Self {
        WalkError::Field(error)
    }
}

/// The items of one container being walked.
enum Items<'a> {
    Members(Members<'a>),
    Elements(Elements<'a>),
}

struct Frame<'a, C> {
    items: Items<'a>,
    container: Json<'a>,
    context: C,
}

fn frame<C>(json: Json<'_>, context: C) -> Option<Frame<'_, C>> {
    let items = match json.kind() {
        Kind::Object => Items::Members(json.members()),
        Kind::Array => Items::Elements(json.elements()),
        _ => return None,
    };
    Some(Frame {
        items,
        container: json,
        context,
    })
}

/// The members under `root` that `visit(name, context)` reports, where
/// `context` is what the visit of the enclosing member returned
/// (`root_context` for the members of `root`).
pub fn find<'a, C: Copy>(
    root: &Field<'a>,
    root_context: C,
    mut visit: impl FnMut(&str, C) -> Step<C>,
) -> Result<Vec<Field<'a>>, WalkError> {
    let malformed = |container: Json<'a>, error| {
        WalkError::Field(FieldError::Malformed {
            path: root.inner(container).path(),
            error,
        })
    };
    let mut found = Vec::new();
    let mut stack = Vec::new();
    if let Some(top) = root.json().and_then(|json| frame(json, root_context)) {
        stack.push(top);
    }
    while let Some(top) = stack.last_mut() {
        let container = top.container;
        let (value, step) = match &mut top.items {
            Items::Members(members) => match members.next() {
                None => {
                    stack.pop();
                    continue;
                }
                Some(Err(error)) => return Err(malformed(container, error)),
                Some(Ok((raw, value))) => {
                    let name = member_name(raw).map_err(|e| malformed(container, e))?;
                    (value, visit(&name, top.context))
                }
            },
            Items::Elements(elements) => match elements.next() {
                None => {
                    stack.pop();
                    continue;
                }
                Some(Err(error)) => return Err(malformed(container, error)),
                Some(Ok(value)) => (value, Step::Descend(top.context)),
            },
        };
        match step {
            Step::Report => found.push(root.inner(value)),
            Step::Descend(context) => {
                let Some(inner) = frame(value, context) else {
                    continue;
                };
                if stack.len() > MAX_DEPTH {
                    return Err(WalkError::TooDeep(root.inner(value).path()));
                }
                stack.push(inner);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Field<'_> {
        Field::document(text.as_bytes()).unwrap()
    }

    fn visited(text: &str, report: &str) -> Vec<String> {
        let mut seen = Vec::new();
        find(&root(text), 0usize, |name, depth| {
            seen.push(format!("{name}@{depth}"));
            if name == report {
                Step::Report
            } else {
                Step::Descend(depth + 1)
            }
        })
        .unwrap();
        seen
    }

    #[test]
    fn visits_members_in_document_order_through_lists() {
        assert_eq!(
            visited(r#"{"a": {"b": [1, {"c": 2}], "d": 3}, "e": {"f": {}}}"#, ""),
            ["a@0", "b@1", "c@2", "d@1", "e@0", "f@1"]
        );
    }

    #[test]
    fn reported_members_are_not_entered() {
        assert_eq!(
            visited(r#"{"a": {"b": 1}, "c": {"a": {}}}"#, "a"),
            ["a@0", "c@0", "a@1"]
        );
    }

    #[test]
    fn reports_paths_and_stops_there() {
        let found = find(
            &root(r#"{"x": [{"k": {"k": 1}}, 2, {"y": {"k": 3}}], "k": "v", "a b": {"k": 0}}"#),
            (),
            |name, ()| {
                if name == "k" {
                    Step::Report
                } else {
                    Step::Descend(())
                }
            },
        )
        .unwrap();
        let found: Vec<String> = found.iter().map(|f| f.path().as_str().to_owned()).collect();
        assert_eq!(found, ["x[0].k", "x[2].y.k", "k", "[\"a b\"].k"]);
    }

    fn nested(depth: usize) -> String {
        format!("{}1{}", "{\"k\":".repeat(depth), "}".repeat(depth))
    }

    fn count(text: &str) -> Result<usize, WalkError> {
        let mut count = 0;
        find(&root(text), (), |_, ()| {
            count += 1;
            Step::Descend(())
        })?;
        Ok(count)
    }

    #[test]
    fn depth_is_bounded() {
        assert_eq!(count(&nested(MAX_DEPTH + 1)), Ok(MAX_DEPTH + 1));
        let Err(WalkError::TooDeep(path)) = count(&nested(MAX_DEPTH + 2)) else {
            panic!("not refused");
        };
        assert_eq!(path.as_str().matches('k').count(), MAX_DEPTH + 1);
        assert!(matches!(
            count(&nested(200_000)),
            Err(WalkError::TooDeep(_))
        ));
    }

    #[test]
    fn scalars_and_malformed_members() {
        assert_eq!(count("\"text\""), Ok(0));
        let broken = Json::parse_lazy(br#"{"a": {"b": @}}"#).unwrap();
        let root = Field::under("spec", Some(broken));
        let Err(WalkError::Field(error)) = find(&root, (), |_, ()| Step::Descend(())) else {
            panic!("not refused");
        };
        assert_eq!(error.path().as_str(), "spec.a");
    }
}
