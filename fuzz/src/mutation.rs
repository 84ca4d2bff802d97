//! What the `rule` and `wasm` targets make of an input: one of the
//! policy's cases, its request and settings mutated as the input says
//! ([`build`]).

use arbitrary::{Result as ArbResult, Unstructured};
use serde_json::{Map, Value, json};

use crate::target::Target;

/// What the structured input built: a case's request and settings, mutated.
#[derive(Debug)]
pub struct Built {
    pub(crate) seed: usize,
    pub(crate) request: Value,
    pub(crate) settings: Value,
}

/// Builds the mutated request and settings the input describes.
pub fn build(u: &mut Unstructured<'_>, t: &Target) -> ArbResult<Built> {
    let seed = u.choose_index(t.seeds.len())?;
    let case = &t.seeds[seed].case;
    let mut request = case.request.clone();
    let mut settings = match &case.settings {
        Value::Null => Value::Object(Map::new()),
        s => s.clone(),
    };
    let count = u.int_in_range(0..=4u8)?;
    for _ in 0..count {
        if u.ratio(1u8, 6)? {
            mutate(u, t, &mut settings)?;
        } else {
            mutate(u, t, &mut request)?;
        }
    }
    Ok(Built {
        seed,
        request,
        settings,
    })
}

#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// The nodes of `value` a mutation may touch: all but the request's `uid`
/// and `options`, which no rule reads.
fn nodes(value: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(path.clone());
    if out.len() > 4096 {
        return;
    }
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if path.is_empty() && matches!(k.as_str(), "uid" | "options") {
                    continue;
                }
                path.push(Step::Key(k.clone()));
                nodes(v, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(Step::Index(i));
                nodes(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'v>(value: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    let mut node = value;
    for step in path {
        node = match (step, node) {
            (Step::Key(k), Value::Object(map)) => map.get_mut(k)?,
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

fn pick_node(u: &mut Unstructured<'_>, value: &Value) -> ArbResult<Vec<Step>> {
    let mut all = Vec::new();
    nodes(value, &mut Vec::new(), &mut all);
    let i = u.choose_index(all.len())?;
    Ok(all.swap_remove(i))
}

fn mutate(u: &mut Unstructured<'_>, t: &Target, doc: &mut Value) -> ArbResult<()> {
    let path = pick_node(u, doc)?;
    let action = u.int_in_range(0..=9u8)?;
    if action == 1 {
        // Remove the node from its parent.
        if let Some((last, parent)) = path.split_last() {
            match (last, at(doc, parent)) {
                (Step::Key(k), Some(Value::Object(map))) => {
                    map.remove(k);
                }
                (Step::Index(i), Some(Value::Array(items))) if *i < items.len() => {
                    items.remove(*i);
                }
                _ => {}
            }
        }
        return Ok(());
    }
    let splice = if action == 7 {
        // A node of another case (the same path where it has one).
        let other = &t.seeds[u.choose_index(t.seeds.len())?].case.request;
        let mut other = other.clone();
        Some(match at(&mut other, &path) {
            Some(v) if u.arbitrary()? => v.take(),
            _ => {
                let p = pick_node(u, &other)?;
                at(&mut other, &p).map(Value::take).unwrap_or_default()
            }
        })
    } else {
        None
    };
    let Some(node) = at(doc, &path) else {
        return Ok(());
    };
    match action {
        0 => *node = value(u, t, 3)?,
        2 => {
            // A new member, from the keys the cases use.
            let key = key(u, t)?;
            let new = value(u, t, 2)?;
            match node {
                Value::Object(map) => {
                    map.insert(key, new);
                }
                Value::Array(items) => items.push(new),
                other => {
                    let mut map = Map::new();
                    map.insert(key, new);
                    *other = Value::Object(map);
                }
            }
        }
        3 => *node = Value::String(string(u, t)?),
        4 => {
            // Deep nesting, around the node or instead of it.
            let depth = if u.ratio(1u8, 4)? {
                u.int_in_range(1..=300u16)?
            } else {
                u.int_in_range(1..=8u16)?
            };
            let objects = u.arbitrary::<bool>()?;
            let mut inner = if u.arbitrary()? {
                node.take()
            } else {
                Value::Null
            };
            for _ in 0..depth {
                inner = if objects {
                    json!({ "a": inner })
                } else {
                    Value::Array(vec![inner])
                };
            }
            *node = inner;
        }
        5 => {
            // A huge array of copies of the node (bounded).
            let n = usize::from(if u.ratio(1u8, 8)? {
                u.int_in_range(0..=2000u16)?
            } else {
                u.int_in_range(0..=8u16)?
            });
            // At most about 200 KB of copies, however large the node is.
            let size = node.to_string().len().max(1);
            let n = n.min(200_000 / size);
            *node = Value::Array(vec![node.take(); n]);
        }
        6 => {
            // A long string.
            let unit = string(u, t)?;
            let unit = if unit.is_empty() {
                "x".to_owned()
            } else {
                unit
            };
            let n = usize::from(if u.ratio(1u8, 4)? {
                u.int_in_range(1..=20_000u16)?
            } else {
                u.int_in_range(1..=300u16)?
            });
            let mut long = String::new();
            while long.len() < n {
                long.push_str(&unit);
            }
            *node = Value::String(long);
        }
        7 => *node = splice.unwrap_or_default(),
        8 => {
            // The same value in another JSON type.
            *node = match node.take() {
                Value::String(s) => match serde_json::from_str::<Value>(&s) {
                    Ok(v) if !v.is_string() => v,
                    _ => Value::Array(vec![Value::String(s)]),
                },
                Value::Null => Value::String("null".to_owned()),
                Value::Array(mut items) if items.len() == 1 => items.pop().unwrap_or_default(),
                other => Value::String(other.to_string()),
            }
        }
        _ => *node = scalar(u, t)?,
    }
    Ok(())
}

fn key(u: &mut Unstructured<'_>, t: &Target) -> ArbResult<String> {
    if u.ratio(7u8, 8)? && !t.keys.is_empty() {
        Ok(t.keys[u.choose_index(t.keys.len())?].clone())
    } else {
        string(u, t)
    }
}

fn string(u: &mut Unstructured<'_>, t: &Target) -> ArbResult<String> {
    if u.ratio(3u8, 4)? {
        Ok(t.dict[u.choose_index(t.dict.len())?].clone())
    } else {
        let s: &str = u.arbitrary()?;
        Ok(s.chars().take(64).collect())
    }
}

fn scalar(u: &mut Unstructured<'_>, t: &Target) -> ArbResult<Value> {
    Ok(match u.int_in_range(0..=7u8)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => json!(
            [
                0i64,
                1,
                -1,
                2,
                3,
                255,
                65536,
                i64::from(i32::MAX),
                i64::MAX,
                i64::MIN
            ][u.choose_index(10)?]
        ),
        3 => json!(u.arbitrary::<i64>()?),
        4 => json!(u64::MAX),
        5 => {
            let f = [0.5f64, -0.0, 1e300, -1e-300, 1.0, 3.5][u.choose_index(6)?];
            json!(f)
        }
        6 => {
            let f: f64 = u.arbitrary()?;
            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
        }
        _ => Value::String(string(u, t)?),
    })
}

fn value(u: &mut Unstructured<'_>, t: &Target, depth: u8) -> ArbResult<Value> {
    if depth == 0 {
        return scalar(u, t);
    }
    Ok(match u.int_in_range(0..=3u8)? {
        0 => {
            let n = u.int_in_range(0..=4u8)?;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(value(u, t, depth - 1)?);
            }
            Value::Array(items)
        }
        1 => {
            let n = u.int_in_range(0..=4u8)?;
            let mut map = Map::new();
            for _ in 0..n {
                map.insert(key(u, t)?, value(u, t, depth - 1)?);
            }
            Value::Object(map)
        }
        _ => scalar(u, t)?,
    })
}
