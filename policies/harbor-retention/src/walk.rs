//! A depth-first search for members of a JSON tree, by name.
//!
//! The search keeps its own stack instead of recursing, and stops at
//! [`MAX_DEPTH`] levels, far beyond chart values (a Harbor spec is four
//! levels deep), so hostile nesting is refused early. Members are visited
//! in the object's order (pre-order); list elements are walked through but
//! not visited themselves, as they have no name.

use shared::{Field, FieldPath};

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

/// The value at this path nests deeper than [`MAX_DEPTH`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooDeep(pub FieldPath);

/// The children of `field` (members with their names, elements without),
/// or none for a scalar.
fn children<'a>(field: &Field<'a>) -> Vec<(Option<&'a str>, Field<'a>)> {
    if let Ok(members) = field.entries() {
        return members
            .into_iter()
            .map(|(name, f)| (Some(name), f))
            .collect();
    }
    match field.items() {
        Ok(elements) => elements.map(|f| (None, f)).collect(),
        Err(_) => Vec::new(),
    }
}

/// The members under `root` that `visit(name, context)` reports, where
/// `context` is what the visit of the enclosing member returned
/// (`root_context` for the members of `root`).
pub fn find<'a, C: Copy>(
    root: &Field<'a>,
    root_context: C,
    mut visit: impl FnMut(&str, C) -> Step<C>,
) -> Result<Vec<Field<'a>>, TooDeep> {
    let mut found = Vec::new();
    // Each entry: the children still to visit (reversed, so `pop` takes
    // them in order) and their context.
    let mut stack = vec![(rev(children(root)), root_context)];
    while let Some((pending, context)) = stack.last_mut() {
        let context = *context;
        let Some((name, field)) = pending.pop() else {
            stack.pop();
            continue;
        };
        let step = match name {
            Some(name) => visit(name, context),
            None => Step::Descend(context),
        };
        match step {
            Step::Report => found.push(field),
            Step::Descend(inner) => {
                let below = children(&field);
                if below.is_empty() {
                    continue;
                }
                if stack.len() > MAX_DEPTH {
                    return Err(TooDeep(field.path()));
                }
                stack.push((rev(below), inner));
            }
        }
    }
    Ok(found)
}

fn rev<T>(mut items: Vec<T>) -> Vec<T> {
    items.reverse();
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn document(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    fn visited(text: &str, report: &str) -> Vec<String> {
        let value = document(text);
        let mut seen = Vec::new();
        find(&Field::root(Some(&value)), 0usize, |name, depth| {
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
    fn visits_members_in_order_through_lists() {
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
        let value =
            document(r#"{"x": [{"k": {"k": 1}}, 2, {"y": {"k": 3}}], "k": "v", "a b": {"k": 0}}"#);
        let found = find(&Field::root(Some(&value)), (), |name, ()| {
            if name == "k" {
                Step::Report
            } else {
                Step::Descend(())
            }
        })
        .unwrap();
        let found: Vec<String> = found.iter().map(|f| f.path().to_string()).collect();
        assert_eq!(found, ["[\"a b\"].k", "k", "x[0].k", "x[2].y.k"]);
    }

    fn nested(depth: usize) -> Value {
        (0..depth).fold(Value::from(1), |inner, _| serde_json::json!({ "k": inner }))
    }

    fn count(value: &Value) -> Result<usize, TooDeep> {
        let mut count = 0;
        find(&Field::root(Some(value)), (), |_, ()| {
            count += 1;
            Step::Descend(())
        })?;
        Ok(count)
    }

    #[test]
    fn depth_is_bounded() {
        assert_eq!(count(&nested(MAX_DEPTH + 1)), Ok(MAX_DEPTH + 1));
        let Err(TooDeep(path)) = count(&nested(MAX_DEPTH + 2)) else {
            panic!("not refused");
        };
        assert_eq!(path.segments().len(), MAX_DEPTH + 1);
        assert_eq!(count(&Value::from("text")), Ok(0));
    }
}
