//! boon, Helm's validator's Rust port, as the oracle of `src/validate.rs`:
//! on every shipped schema of every release, for the effective values of
//! every case in `tests/cases/` of that kind and for deterministic
//! mutations of each chart's defaults (other types, enum misses, bad
//! quantities, nulls, removed keys, new map entries), both must give the
//! same verdict and the same leaf failures: the same instance locations,
//! keywords and details (types wanted, keys missing or refused).

// Test code: a failed assumption should stop the test where it is.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::as_conversions,
    clippy::collapsible_match
)]

use reading::yaml::{self, Limit};
use std::path::Path;

use boon::{Compiler, Draft, ErrorKind, InstanceToken, Schemas, ValidationError};
use serde_json::{Map, Value, json};
use values_schema::helm;
use values_schema::schemas::{self, RELEASES};
use values_schema::validate::{self, Failure, Kind, Token};

/// One leaf failure: `/path/0/key keyword detail`.
type Leaf = String;

fn boon_leaves(error: &ValidationError<'_, '_>, out: &mut Vec<Leaf>) {
    let location: String = error
        .instance_location
        .tokens
        .iter()
        .map(|t| match t {
            InstanceToken::Prop(name) => format!("/{name}"),
            InstanceToken::Item(i) => format!("/{i}"),
        })
        .collect();
    let detail = match &error.kind {
        ErrorKind::Group | ErrorKind::Schema { .. } | ErrorKind::AnyOf => {
            for cause in &error.causes {
                boon_leaves(cause, out);
            }
            return;
        }
        ErrorKind::Type { want, .. } => {
            format!("type {:?}", want.iter().collect::<Vec<_>>())
        }
        ErrorKind::Enum { want } => format!("enum {}", want.len()),
        ErrorKind::Required { want } => format!("required {want:?}"),
        ErrorKind::AdditionalProperties { got } => format!("additionalProperties {got:?}"),
        ErrorKind::FalseSchema => "false".to_owned(),
        ErrorKind::Pattern { .. } => "pattern".to_owned(),
        other => panic!("boon reported a keyword the interpreter does not know: {other}"),
    };
    out.push(format!("{location} {detail}"));
}

fn our_leaves(failures: &[Failure<'_, '_>], out: &mut Vec<Leaf>) {
    for failure in failures {
        let location: String = failure
            .location
            .iter()
            .map(|t| match t {
                Token::Prop(name) => format!("/{name}"),
                Token::Item(i) => format!("/{i}"),
            })
            .collect();
        let detail = match &failure.kind {
            Kind::AnyOf { alternatives } => {
                for alternative in alternatives {
                    our_leaves(alternative, out);
                }
                continue;
            }
            Kind::Type { want } => format!("type {want:?}"),
            Kind::Enum { want } => format!("enum {}", want.len()),
            Kind::Required { missing } => format!("required {missing:?}"),
            Kind::AdditionalProperties { got } => format!("additionalProperties {got:?}"),
            Kind::FalseSchema => "false".to_owned(),
            Kind::Quantity { .. } => "pattern".to_owned(),
        };
        out.push(format!("{location} {detail}"));
    }
}

/// One schema, both ways.
struct Oracle {
    /// The chart's JSON, as the generator wrote it for boon.
    schema: Value,
    /// The static tree the module walks.
    app: &'static schemas::App<'static>,
    schemas: Schemas,
    index: boon::SchemaIndex,
    compared: usize,
    invalid: usize,
}

impl Oracle {
    fn new(file: &str, app: &'static schemas::App<'static>) -> Self {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("schemas")
            .join(file);
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let mut schemas = Schemas::new();
        let mut compiler = Compiler::new();
        compiler.set_default_draft(Draft::V2020_12);
        compiler
            .add_resource("file:///values.schema.json", schema.clone())
            .unwrap();
        let index = compiler
            .compile("file:///values.schema.json", &mut schemas)
            .unwrap();
        Self {
            schema,
            app,
            schemas,
            index,
            compared: 0,
            invalid: 0,
        }
    }

    fn compare(&mut self, what: &str, value: &Value) {
        let mut theirs = Vec::new();
        let boon_valid = match self.schemas.validate(value, self.index) {
            Ok(()) => true,
            Err(error) => {
                boon_leaves(&error, &mut theirs);
                false
            }
        };
        let failures = validate::validate(self.app.schema, value);
        let mut ours = Vec::new();
        our_leaves(&failures, &mut ours);
        assert_eq!(
            boon_valid,
            failures.is_empty(),
            "{what}: verdicts differ on {value}\nboon: {theirs:#?}\nours: {ours:#?}"
        );
        theirs.sort();
        ours.sort();
        assert_eq!(theirs, ours, "{what}: leaf failures differ on {value}");
        self.compared += 1;
        self.invalid += usize::from(!boon_valid);
    }
}

/// splitmix64: deterministic, no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n.max(1) as u64)).unwrap_or(0)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Item(usize),
}

/// Every path the schema declares (properties, list items, map entries),
/// with its schema, to a bounded depth.
fn declared(schema: &Value, path: &mut Vec<Step>, out: &mut Vec<(Vec<Step>, Value)>) {
    if path.len() > 7 {
        return;
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, sub) in properties {
            path.push(Step::Key(name.clone()));
            out.push((path.clone(), sub.clone()));
            declared(sub, path, out);
            path.pop();
        }
    }
    if let Some(sub @ Value::Object(_)) = schema.get("additionalProperties") {
        path.push(Step::Key("entry".to_owned()));
        out.push((path.clone(), sub.clone()));
        declared(sub, path, out);
        path.pop();
    }
    if let Some(sub @ Value::Object(_)) = schema.get("items") {
        path.push(Step::Item(0));
        out.push((path.clone(), sub.clone()));
        declared(sub, path, out);
        path.pop();
    }
    if let Some(Value::Array(alternatives)) = schema.get("anyOf") {
        for sub in alternatives {
            declared(sub, path, out);
        }
    }
}

/// Sets (or, with `None`, removes) the value at `path`, making the parents
/// it needs.
fn set(root: &mut Value, path: &[Step], new: Option<Value>) {
    let Some((last, parents)) = path.split_last() else {
        if let Some(new) = new {
            *root = new;
        }
        return;
    };
    let mut here = root;
    for step in parents {
        here = match step {
            Step::Key(key) => {
                if !here.is_object() {
                    *here = json!({});
                }
                let Value::Object(map) = here else {
                    unreachable!()
                };
                map.entry(key.clone()).or_insert(Value::Null)
            }
            Step::Item(i) => {
                if !here.is_array() {
                    *here = json!([]);
                }
                let Value::Array(items) = here else {
                    unreachable!()
                };
                while items.len() <= *i {
                    items.push(Value::Null);
                }
                &mut items[*i]
            }
        };
    }
    match (last, here, new) {
        (Step::Key(key), Value::Object(map), None) => {
            map.remove(key);
        }
        (Step::Key(key), here, Some(new)) => {
            if !here.is_object() {
                *here = json!({});
            }
            if let Value::Object(map) = here {
                map.insert(key.clone(), new);
            }
        }
        (Step::Item(i), Value::Array(items), None) => {
            if *i < items.len() {
                items.remove(*i);
            }
        }
        (Step::Item(i), here, Some(new)) => {
            if !here.is_array() {
                *here = json!([]);
            }
            if let Value::Array(items) = here {
                while items.len() <= *i {
                    items.push(Value::Null);
                }
                items[*i] = new;
            }
        }
        _ => {}
    }
}

/// A value to put where `schema` applies.
fn candidate(rng: &mut Rng, schema: &Value) -> Value {
    let fixed = [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(1.0),
        json!(1.5),
        json!(-3),
        json!(u64::MAX),
        json!("x"),
        json!(""),
        json!("10Gi"),
        json!("500m"),
        json!("10 GB"),
        json!("1e3"),
        json!(".5"),
        json!("1."),
        json!("+"),
        json!("1Ki "),
        json!([]),
        json!(["x"]),
        json!([1, null]),
        json!({}),
        json!({"a": 1}),
    ];
    match rng.below(4) {
        0 => {
            if let Some(Value::Array(allowed)) = schema.get("enum")
                && !allowed.is_empty()
            {
                let chosen = rng.pick(allowed).clone();
                return match (rng.below(2), &chosen) {
                    (0, Value::String(text)) => Value::String(format!("{text}x")),
                    _ => chosen,
                };
            }
            rng.pick(&fixed).clone()
        }
        1 => tree::defaults(schema).unwrap_or(Value::Null),
        _ => rng.pick(&fixed).clone(),
    }
}

fn mutations(oracle: &mut Oracle, what: &str, seed: u64, count: usize) {
    let mut paths = Vec::new();
    declared(&oracle.schema, &mut Vec::new(), &mut paths);
    let base = helm::effective(None, oracle.app.defaults);
    let mut rng = Rng(seed);
    if paths.is_empty() {
        return;
    }
    for n in 0..count {
        let mut value = base.clone();
        for _ in 0..=rng.below(3) {
            let (path, schema) = rng.pick(&paths).clone();
            let new = if rng.below(6) == 0 {
                None
            } else {
                Some(candidate(&mut rng, &schema))
            };
            set(&mut value, &path, new);
        }
        oracle.compare(&format!("{what} mutation {n}"), &value);
    }
}

/// The spec of `object` in a case, as the rule reads it.
fn spec_of(object: Option<&Value>) -> Option<Option<Map<String, Value>>> {
    match object?.get("spec") {
        None | Some(Value::Null) => Some(None),
        Some(Value::Object(members)) => Some(Some(members.clone())),
        Some(_) => None,
    }
}

#[test]
fn the_interpreter_agrees_with_boon() {
    let cases_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(&cases_dir).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let case: Value = yaml::document(&text, Limit::Cases).unwrap();
        cases.push((entry.file_name().to_string_lossy().into_owned(), case));
    }
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    let schemas_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let index: tree::write::Index =
        serde_json::from_str(&std::fs::read_to_string(schemas_dir.join("index.json")).unwrap())
            .unwrap();
    // Each schema file is compared with boon once, however many releases
    // ship it; each release's cases against the schema that release uses.
    let mut seen = std::collections::BTreeSet::new();
    let (mut schemas_seen, mut compared, mut invalid, mut from_cases) = (0, 0, 0, 0);
    for (r, release) in RELEASES.iter().enumerate() {
        let mut own = index
            .releases
            .iter()
            .find(|i| i.version == release.version)
            .unwrap();
        while let Some(other) = &own.same_as {
            own = index.releases.iter().find(|i| i.version == *other).unwrap();
        }
        for (a, app) in release.apps.iter().enumerate() {
            let file = &own.apps.iter().find(|i| i.kind == app.kind).unwrap().schema;
            let first = seen.insert(file.clone());
            let mut oracle = Oracle::new(file, app);
            let what = format!("{} {}", release.version, app.kind);
            if first {
                oracle.compare(
                    &format!("{what} defaults"),
                    &helm::effective(None, oracle.app.defaults),
                );
            }
            for (name, case) in &cases {
                let version = case
                    .pointer("/settings/cozystackVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("v1.6.2");
                let version = format!("v{}", version.trim_start_matches('v'));
                if version != release.version
                    || case.pointer("/request/kind/kind").and_then(Value::as_str) != Some(app.kind)
                {
                    continue;
                }
                for object in ["object", "oldObject"] {
                    if let Some(spec) = spec_of(case.pointer(&format!("/request/{object}"))) {
                        let effective = helm::effective(spec.as_ref(), oracle.app.defaults);
                        oracle.compare(&format!("{what} {name} {object}"), &effective);
                        from_cases += 1;
                    }
                }
            }
            if first {
                mutations(&mut oracle, &what, ((r as u64) << 32) | a as u64, 300);
                schemas_seen += 1;
            }
            compared += oracle.compared;
            invalid += oracle.invalid;
        }
    }
    println!(
        "{schemas_seen} schemas, {compared} values compared ({from_cases} from the cases, {invalid} invalid)"
    );
    let files: std::collections::BTreeSet<&String> = index
        .releases
        .iter()
        .flat_map(|r| r.apps.iter().map(|a| &a.schema))
        .collect();
    assert_eq!(schemas_seen, files.len(), "every schema file compared once");
    assert!(from_cases >= 39, "{from_cases}");
}

#[test]
fn the_quantity_matcher_agrees_with_the_regex() {
    let regex = regex::Regex::new(values_schema::messages::QUANTITY_PATTERN).unwrap();
    let alphabet: Vec<char> = "0123456789.+-eEKMGTPEinumkx \n".chars().collect();
    let mut rng = Rng(42);
    let mut matched = 0;
    for n in 0..20_000 {
        let len = rng.below(9);
        let text: String = (0..len).map(|_| *rng.pick(&alphabet)).collect();
        // Some quantity-shaped strings, so matches are not rare.
        let text = if n % 3 == 0 {
            let suffix = rng.pick(&["", "Gi", "m", "E", "e3", "E-2", "e+.5", "Ki", "ki", "e"]);
            format!("{}{}", rng.below(1000), suffix)
        } else {
            text
        };
        let want = regex.is_match(&text);
        assert_eq!(validate::is_quantity(&text), want, "{text:?}");
        matched += usize::from(want);
    }
    println!("20000 strings, {matched} quantities");
    assert!(matched > 2000, "{matched}");
}
