//! The fuzz targets' common part: the policies under fuzz, the properties
//! every answer must have, and the inputs each target builds.
//!
//! Every target works on one policy, named by `FUZZ_POLICY` (`tools/fuzz`
//! sets it; `FUZZ_POLICY=oidc-config cargo fuzz run rule` by hand), so three
//! binaries serve every policy and each policy keeps its own corpus.
//!
//! - `rule`: a case of the policy's `tests/cases/` (the seed corpus), picked
//!   and mutated as the input says, through the native case runner
//!   (`testkit::native`): the same settings check, payload and
//!   `shared::validate` as `cargo test`.
//! - `payload`: the input as the raw `validate` payload, into
//!   `shared::validate`, as the module's `validate` entry point calls it.
//! - `settings`: the input as the raw `validate_settings` payload; settings
//!   it accepts must then also work for `validate`.
//!
//! The properties ([`check_response`]): the answer is a `ValidationResponse`;
//! a rejection has a non-empty message, one finding per line, and a code of
//! 400, 403 or 422 (never 500: the rule must not fail on any request);
//! warnings stay within `shared::warnings`'s limits; a refusal of settings
//! names the policy and the problem; the same input gives the same answer
//! twice; a request the policy's rules do not match is allowed.
//!
//! Environment, read once: `FUZZ_POLICY` (required), `FUZZ_SEEDS_TO=<dir>`
//! (write the target's seed corpus from the cases and exit),
//! `FUZZ_DICT_TO=<file>` (write a libFuzzer dictionary of the cases' keys
//! and strings and exit), `FUZZ_CASE_TO=<file>` (run each input once and
//! write it as a YAML case instead of checking it: a failing input becomes a
//! regression case).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use admission::{AdmissionRequest, AdmissionResponse};
use arbitrary::{Result as ArbResult, Unstructured};
use capabilities::HostCapabilities;
use capabilities::replay::Session;
use serde_json::{Map, Value, json};
use shared::lookup::{Cluster, Offline};
use shared::sdk::response::ValidationResponse;
use shared::sdk::settings::SettingsValidationResponse;
use shared::sdk::wapc_guest::CallResult;
use linked::{Linked, Visitor};
use testkit::case::{
    Case, Evaluation, Evaluator, Expectation, ExpectedResult, SettingsAnswer, case_files,
};
use testkit::native::Native;
use wasm_meta::metadata::Metadata;

#[cfg(feature = "wasm")]
pub mod wasm;

/// A policy under fuzz, whatever its settings type.
pub trait Fuzzed: Send + Sync {
    /// The directory name, `oidc-config`.
    fn name(&self) -> &str;
    /// The crate's directory (its `metadata.yml` and `tests/cases/`).
    fn dir(&self) -> &Path;
    /// The native case runner over this policy.
    fn native(&self) -> &dyn Evaluator;
    /// What the module's `validate` answers to `payload`.
    fn validate(&self, payload: &[u8], cluster: &dyn Cluster) -> CallResult;
    /// What the module's `validate_settings` answers to `payload`.
    fn validate_settings(&self, payload: &[u8]) -> CallResult;
}

/// Every policy of the bundle, from the registry ([`linked`]): a policy
/// added to it is fuzzed with no edit here.
pub fn registry() -> Vec<Box<dyn Fuzzed>> {
    linked::visit_all(&mut Entries)
}

/// Makes each policy's entry.
struct Entries;

impl Visitor for Entries {
    type Output = Box<dyn Fuzzed>;

    fn visit<S: linked::Settings>(&mut self, policy: Linked<S>) -> Box<dyn Fuzzed> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(layout::POLICIES)
            .join(policy.name);
        let dir = dir.canonicalize().unwrap_or(dir);
        let native = Native::new(&dir, policy.rules, policy.reads, policy.evaluate)
            .unwrap_or_else(|e| panic!("{}: cannot read its metadata: {e}", policy.name));
        Box::new(Entry {
            dir,
            native,
            policy,
        })
    }
}

struct Entry<S> {
    policy: Linked<S>,
    dir: PathBuf,
    native: Native<S>,
}

impl<S: linked::Settings> Fuzzed for Entry<S> {
    fn name(&self) -> &str {
        self.policy.name
    }
    fn dir(&self) -> &Path {
        &self.dir
    }
    fn native(&self) -> &dyn Evaluator {
        &self.native
    }
    fn validate(&self, payload: &[u8], cluster: &dyn Cluster) -> CallResult {
        shared::validate::<S, _>(
            self.policy.rules.policy,
            payload,
            self.policy.reads,
            cluster,
            self.policy.evaluate,
        )
    }
    fn validate_settings(&self, payload: &[u8]) -> CallResult {
        shared::settings::validate_settings::<S>(self.policy.name, payload)
    }
}

/// One seed case, ready to mutate.
struct Seed {
    file: PathBuf,
    case: Case,
    session: Session,
}

/// The policy a target runs, its cases and the strings they contain.
pub struct Target {
    policy: Box<dyn Fuzzed>,
    seeds: Vec<Seed>,
    /// Keys and string values of every case, plus troublesome strings.
    dict: Vec<String>,
    /// Object keys of every case.
    keys: Vec<String>,
    /// The policy's `metadata.yml`: its webhook rules.
    metadata: Metadata,
    /// `FUZZ_CASE_TO`: write inputs as cases instead of checking them.
    case_to: Option<PathBuf>,
}

static TARGET: OnceLock<Target> = OnceLock::new();

/// The target's state, read on first use.
pub fn target() -> &'static Target {
    TARGET.get_or_init(load)
}

fn load() -> Target {
    let names: Vec<String> = registry().iter().map(|p| p.name().to_owned()).collect();
    let wanted = std::env::var("FUZZ_POLICY").unwrap_or_default();
    let policy = registry()
        .into_iter()
        .find(|p| p.name() == wanted)
        .unwrap_or_else(|| {
            eprintln!(
                "FUZZ_POLICY={wanted:?}: set it to one of {}",
                names.join(", ")
            );
            std::process::exit(2)
        });
    load_policy(policy)
}

/// One policy's cases, strings and metadata, ready to mutate; the `wasm`
/// target loads every policy this way.
fn load_policy(policy: Box<dyn Fuzzed>) -> Target {
    let files = case_files(&policy.dir().join("tests/cases")).unwrap_or_default();
    let mut seeds = Vec::new();
    for file in files {
        let case = match Case::load(&file) {
            Ok(case) => case,
            Err(e) => {
                eprintln!("skipping {}: {}", file.display(), e.with_causes());
                continue;
            }
        };
        let session = Session::from_entries(&case.session).unwrap_or_default();
        seeds.push(Seed {
            file,
            case,
            session,
        });
    }
    if seeds.is_empty() {
        eprintln!("{}: no cases in tests/cases", policy.name());
        std::process::exit(2);
    }
    let mut strings = BTreeSet::new();
    let mut keys = BTreeSet::new();
    for seed in &seeds {
        collect_strings(&seed.case.request, &mut strings, &mut keys);
        collect_strings(&seed.case.settings, &mut strings, &mut keys);
    }
    for extra in TROUBLE {
        strings.insert((*extra).to_owned());
    }
    strings.extend(keys.iter().cloned());
    let metadata = Metadata::from_yaml_file(&policy.dir().join("metadata.yml"))
        .unwrap_or_else(|e| panic!("{}: {e}", policy.name()));
    Target {
        metadata,
        policy,
        seeds,
        dict: strings.into_iter().collect(),
        keys: keys.into_iter().collect(),
        case_to: std::env::var_os("FUZZ_CASE_TO").map(PathBuf::from),
    }
}

/// Strings that break naive handling: empty, blank, case and type
/// confusions, control and non-ASCII characters, templates, paths.
const TROUBLE: &[&str] = &[
    "",
    " ",
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1e999",
    "NaN",
    "CREATE",
    "UPDATE",
    "DELETE",
    "CONNECT",
    "None",
    "System",
    "CustomConfig",
    "a\nb",
    "\t",
    "\u{0}",
    "\u{7f}",
    "\u{85}",
    "\u{2028}",
    "é",
    "日本語",
    "\u{1F600}",
    "\u{FEFF}",
    "{{ .Values }}",
    "../../etc",
    "a/b",
    "a.b",
    "a:b",
    "system:serviceaccount:cozy-system:cozystack",
    "system:masters",
    "apps.cozystack.io",
    "v1alpha1",
    "\"",
    "\\",
    "[]",
    "{}",
    "-",
    "--",
    "=",
    "@",
    "a@b",
];

fn collect_strings(value: &Value, strings: &mut BTreeSet<String>, keys: &mut BTreeSet<String>) {
    match value {
        Value::String(s) if s.len() <= 200 => {
            strings.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, strings, keys)),
        Value::Object(map) => {
            for (k, v) in map {
                keys.insert(k.clone());
                collect_strings(v, strings, keys);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// Properties.

/// The properties every `validate` answer has; `Err` says which failed.
pub fn check_response(response: &AdmissionResponse) -> Result<(), String> {
    let message = response.message();
    let code = response.code();
    if response.allowed {
        if message.is_some() || code.is_some() {
            return Err(format!(
                "allowed with a message or code: {message:?} {code:?}"
            ));
        }
    } else {
        let Some(message) = message else {
            return Err(format!("rejected without a message (code {code:?})"));
        };
        if message.trim().is_empty() {
            return Err(format!("rejected with an empty message (code {code:?})"));
        }
        if let Some(line) = message.lines().find(|l| l.trim().is_empty()) {
            return Err(format!(
                "rejection message has an empty line {line:?}: {message:?}"
            ));
        }
        match code {
            Some(400 | 403 | 422) => {}
            Some(500) => return Err(format!("the policy failed (500): {message}")),
            other => {
                return Err(format!(
                    "rejected with code {other:?}, not 400, 403 or 422: {message}"
                ));
            }
        }
    }
    testkit::case::check_warning_limits(response.warnings())
}

/// The properties of a `validate_settings` answer, parsed.
fn check_settings_answer(policy: &str, answer: &CallResult) -> Result<SettingsAnswer, String> {
    let bytes = match answer {
        Ok(bytes) => bytes,
        Err(e) => return Err(format!("validate_settings failed: {e}")),
    };
    let response: SettingsValidationResponse = serde_json::from_slice(bytes).map_err(|e| {
        format!(
            "validate_settings answered no SettingsValidationResponse ({e}): {}",
            String::from_utf8_lossy(bytes)
        )
    })?;
    if response.valid {
        return Ok(SettingsAnswer::Accepted);
    }
    let message = response.message.unwrap_or_default();
    let prefix = format!("{policy} settings: ");
    match message.strip_prefix(&prefix) {
        Some(problem) if !problem.trim().is_empty() => Ok(SettingsAnswer::Refused(message)),
        _ => Err(format!(
            "a settings refusal must read `{prefix}<problem>`: {message:?}"
        )),
    }
}

/// A `validate` answer as policy-server maps it, its properties checked.
fn check_validate_answer(answer: &CallResult) -> Result<AdmissionResponse, String> {
    let bytes = answer
        .as_ref()
        .map_err(|e| format!("validate failed (500): {e}"))?;
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("validate answered no JSON ({e})"))?;
    if !value.get("accepted").is_some_and(Value::is_boolean) {
        return Err(format!("validate answered without `accepted`: {value}"));
    }
    let response: ValidationResponse = serde_json::from_value(value)
        .map_err(|e| format!("validate answered no ValidationResponse ({e})"))?;
    let response = AdmissionResponse::from_validation("fuzz", response);
    check_response(&response)?;
    Ok(response)
}

fn same_answer(first: &CallResult, second: &CallResult) -> bool {
    match (first, second) {
        (Ok(a), Ok(b)) => a == b,
        (Err(a), Err(b)) => a.to_string() == b.to_string(),
        _ => false,
    }
}

/// Stops the run on a property failure: libFuzzer keeps the input as a
/// crash artifact (`tools/fuzz case` turns it into a YAML case).
fn fail(target: &str, policy: &str, problem: &str, detail: &str) -> ! {
    eprintln!("\n=== {target}/{policy}: property failed: {problem}\n{detail}\n");
    panic!("{target}/{policy}: {problem}");
}

// ---------------------------------------------------------------------------
// `rule`: structured requests built from the cases.

/// What the structured input built: a case's request and settings, mutated.
#[derive(Debug)]
pub struct Built {
    seed: usize,
    request: Value,
    settings: Value,
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

/// The `rule` target: one structured input.
pub fn rule(data: &[u8]) {
    let t = target();
    let mut u = Unstructured::new(data);
    let Ok(built) = build(&mut u, t) else {
        return;
    };
    if let Some(to) = &t.case_to {
        return write_case(t, to, built.request, built.settings, built.seed);
    }
    let name = t.policy.name();
    if let Err(problem) = run_rule(t, &built) {
        let detail = format!(
            "seed: {}\nsettings: {}\nrequest: {}",
            t.seeds[built.seed].file.display(),
            built.settings,
            built.request
        );
        fail("rule", name, &problem, &detail);
    }
}

fn run_rule(t: &Target, built: &Built) -> Result<(), String> {
    let Ok(request) = AdmissionRequest::from_value(built.request.clone()) else {
        // Not an AdmissionRequest: the host refuses it before any policy.
        return Ok(());
    };
    let native = t.policy.native();
    match native.validate_settings(&built.settings)? {
        SettingsAnswer::Refused(message) => {
            // Refused: policy-server would not start. Check the refusal.
            let payload = serde_json::to_vec(&built.settings).map_err(|e| e.to_string())?;
            let answer = t.policy.validate_settings(&payload);
            if check_settings_answer(t.policy.name(), &answer)? == SettingsAnswer::Accepted {
                return Err(
                    "the native runner says refused, validate_settings says valid".to_owned(),
                );
            }
            return if message.is_empty() {
                Err("settings refused without a message".to_owned())
            } else {
                Ok(())
            };
        }
        SettingsAnswer::Accepted => {}
    }
    let session = &t.seeds[built.seed].session;
    let first = evaluate_twice(|| {
        native.evaluate(
            &request,
            &built.settings,
            HostCapabilities::Replay(session.clone()),
        )
    })?;
    check_scope(t, built, &request, &first.response)
}

/// Evaluates a request twice through one runner: the answer must be
/// well-formed and the same both times, host calls included, as a
/// policy-server that rehydrates a fresh instance per request would see.
pub(crate) fn evaluate_twice(evaluate: impl Fn() -> Evaluation) -> Result<Evaluation, String> {
    let first = evaluate();
    check_response(&first.response)?;
    let second = evaluate();
    if first.response != second.response {
        return Err(format!(
            "two evaluations differ:\n{:?}\n{:?}",
            first.response, second.response
        ));
    }
    if first.host_calls != second.host_calls {
        return Err("two evaluations made different host calls".to_owned());
    }
    Ok(first)
}

/// A rejection of a request that no rule of the policy matches is a
/// finding: a webhook never sends it, kwctl does. policy-server itself
/// refuses JSON nested deeper than 128 levels, so such a request never
/// reaches a policy, in scope or not.
pub(crate) fn check_scope(
    t: &Target,
    built: &Built,
    request: &AdmissionRequest,
    response: &AdmissionResponse,
) -> Result<(), String> {
    if !response.allowed && depth(&built.request) < 128 && out_of_scope(&t.metadata, request) {
        return Err(format!(
            "rejected a request whose group and operation no rule of the policy matches (a webhook never sends it, kwctl does): {:?}",
            response.message()
        ));
    }
    Ok(())
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Whether no rule of the policy matches the request's group and
/// operation, whatever its resource and version are called (audit-scanner
/// sends the kind as the resource, and rules judge kinds, not versions).
/// Only for a request whose `kind.group` is its `resource.group`, as the
/// API server sends them.
fn out_of_scope(metadata: &Metadata, request: &AdmissionRequest) -> bool {
    if request.kind.group != request.resource.group {
        return false;
    }
    !metadata.rules.iter().any(|rule| {
        let mut probe = request.clone();
        probe.sub_resource = None;
        rule.api_versions.iter().any(|version| {
            probe.resource.version = version.clone();
            rule.resources.iter().any(|resource| {
                probe.resource.resource = resource.clone();
                rule.matches(&probe)
            })
        })
    })
}

// ---------------------------------------------------------------------------
// `payload`: raw bytes into `shared::validate`.

/// The `payload` target: `data` as the `validate` payload.
pub fn payload(data: &[u8]) {
    let t = target();
    if let Some(to) = &t.case_to {
        if let Ok(Value::Object(mut doc)) = serde_json::from_slice::<Value>(data) {
            let request = doc.remove("request").unwrap_or_default();
            let settings = doc.remove("settings").unwrap_or_default();
            write_case(t, to, request, settings, 0);
        } else {
            eprintln!("not a JSON payload: no case written");
        }
        return;
    }
    if let Err(problem) = run_payload(t, data) {
        let detail = format!("payload: {}", String::from_utf8_lossy(data));
        fail("payload", t.policy.name(), &problem, &detail);
    }
}

fn run_payload(t: &Target, data: &[u8]) -> Result<(), String> {
    let first = t.policy.validate(data, &Offline);
    let second = t.policy.validate(data, &Offline);
    if !same_answer(&first, &second) {
        return Err("two evaluations differ".to_owned());
    }
    if let Err(error) = &first {
        // policy-server validated the settings at start; settings it would
        // have refused may fail here (500), others must not.
        let settings = serde_json::from_slice::<Value>(data)
            .ok()
            .and_then(|mut v| v.get_mut("settings").map(Value::take));
        if let Some(settings) = settings {
            let bytes = serde_json::to_vec(&settings).map_err(|e| e.to_string())?;
            let answer = t.policy.validate_settings(&bytes);
            if check_settings_answer(t.policy.name(), &answer)? == SettingsAnswer::Accepted {
                return Err(format!(
                    "validate_settings accepts the settings, validate fails with them: {error}"
                ));
            }
        }
        return Ok(());
    }
    check_validate_answer(&first).map(|_| ())
}

// ---------------------------------------------------------------------------
// `settings`: raw settings documents into `validate_settings`.

/// The `settings` target: `data` as the `validate_settings` payload.
pub fn settings(data: &[u8]) {
    let t = target();
    if let Some(to) = &t.case_to {
        let settings = serde_json::from_slice::<Value>(data).unwrap_or_default();
        let seed = data.len() % t.seeds.len();
        let request = t.seeds[seed].case.request.clone();
        return write_case(t, to, request, settings, seed);
    }
    if let Err(problem) = run_settings(t, data) {
        let detail = format!("settings: {}", String::from_utf8_lossy(data));
        fail("settings", t.policy.name(), &problem, &detail);
    }
}

fn run_settings(t: &Target, data: &[u8]) -> Result<(), String> {
    let first = t.policy.validate_settings(data);
    let second = t.policy.validate_settings(data);
    if !same_answer(&first, &second) {
        return Err("two answers differ".to_owned());
    }
    if check_settings_answer(t.policy.name(), &first)? != SettingsAnswer::Accepted {
        return Ok(());
    }
    // Accepted settings must work for `validate`, spliced in as sent.
    let text =
        std::str::from_utf8(data).map_err(|e| format!("accepted non-UTF-8 settings: {e}"))?;
    let seed = data.len() % t.seeds.len();
    let Ok(request) = AdmissionRequest::from_value(t.seeds[seed].case.request.clone()) else {
        return Ok(());
    };
    let request = serde_json::to_string(&request).map_err(|e| e.to_string())?;
    let payload = format!("{{\"request\":{request},\"settings\":{text}}}");
    let answer = t.policy.validate(payload.as_bytes(), &Offline);
    check_validate_answer(&answer).map(|_| ())
}

// ---------------------------------------------------------------------------
// Seeds, dictionary and reproducers.

/// Handles `FUZZ_SEEDS_TO` and `FUZZ_DICT_TO` for `kind` (`rule`, `payload`
/// or `settings`): writes and exits. Called from each target's `init`.
pub fn init(kind: &str) {
    let t = target();
    let mut exit = false;
    if let Some(dir) = std::env::var_os("FUZZ_SEEDS_TO") {
        let dir = PathBuf::from(dir);
        let written = write_seeds(t, kind, &dir).unwrap_or_else(|e| {
            eprintln!("cannot write seeds to {}: {e}", dir.display());
            std::process::exit(2)
        });
        eprintln!(
            "{kind}/{}: {written} seeds in {}",
            t.policy.name(),
            dir.display()
        );
        exit = true;
    }
    if let Some(file) = std::env::var_os("FUZZ_DICT_TO") {
        if let Err(e) = write_dict(t, Path::new(&file)) {
            eprintln!("cannot write the dictionary: {e}");
            std::process::exit(2)
        }
        exit = true;
    }
    if exit {
        std::process::exit(0);
    }
}

fn write_seeds(t: &Target, kind: &str, dir: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    match kind {
        "rule" => {
            // For each case, the shortest input that picks it unchanged.
            let n = t.seeds.len();
            inputs.extend(shortest_picks(n, |u| u.choose_index(n)));
        }
        "payload" => {
            for seed in &t.seeds {
                if let Ok(request) = seed.case.admission_request() {
                    let settings = match &seed.case.settings {
                        Value::Null => json!({}),
                        s => s.clone(),
                    };
                    let payload = json!({"request": request, "settings": settings});
                    inputs.push(serde_json::to_vec(&payload).unwrap_or_default());
                }
            }
        }
        _ => {
            inputs.push(b"{}".to_vec());
            for seed in &t.seeds {
                if !seed.case.settings.is_null() {
                    inputs.push(serde_json::to_vec(&seed.case.settings).unwrap_or_default());
                }
            }
        }
    }
    inputs.sort();
    inputs.dedup();
    for (i, input) in inputs.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{kind}-{i:04}")), input)?;
    }
    Ok(inputs.len())
}

/// For each `0..n`, the shortest input (up to three bytes) for which `pick`
/// returns it: the inputs that select each case with no mutation after.
fn shortest_picks(
    n: usize,
    pick: impl Fn(&mut Unstructured<'_>) -> ArbResult<usize>,
) -> Vec<Vec<u8>> {
    let mut found = vec![None; n];
    let candidates = (0..=u8::MAX)
        .map(|b| vec![b])
        .chain((0..=u16::MAX).map(|v| v.to_be_bytes().to_vec()))
        .chain((0..1u32 << 24).map(|v| v.to_be_bytes()[1..].to_vec()));
    for input in candidates {
        let mut u = Unstructured::new(&input);
        if let Ok(i) = pick(&mut u)
            && let Some(slot @ None) = found.get_mut(i)
        {
            *slot = Some(input);
        }
        if found.iter().all(Option::is_some) {
            break;
        }
    }
    found.into_iter().flatten().collect()
}

/// libFuzzer's dictionary: the cases' keys and strings, quoted as JSON.
fn write_dict(t: &Target, file: &Path) -> std::io::Result<()> {
    write_dict_strings(&t.dict, file)
}

/// A dictionary of these strings and JSON's tokens.
fn write_dict_strings(dict: &[String], file: &Path) -> std::io::Result<()> {
    let mut out = String::new();
    for s in dict {
        let quoted = Value::String(s.clone()).to_string();
        if quoted.len() > 64 || !quoted.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            continue;
        }
        let escaped = quoted.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("\"{escaped}\"\n"));
    }
    for token in [
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "null",
        "true",
        "false",
        "\"request\"",
        "\"settings\"",
        "\"object\"",
        "\"oldObject\"",
    ] {
        let escaped = token.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("\"{escaped}\"\n"));
    }
    std::fs::write(file, out)
}

/// Writes the input as a YAML case whose `expect` is today's answer: edit
/// `expect` to what the policy should answer, and the case fails until the
/// policy does.
fn write_case(t: &Target, to: &Path, request: Value, settings: Value, seed: usize) {
    let native = t.policy.native();
    let expect = match (
        native.validate_settings(&settings),
        AdmissionRequest::from_value(request.clone()),
    ) {
        (Ok(SettingsAnswer::Refused(message)), _) => Expectation {
            result: ExpectedResult::InvalidSettings,
            code: None,
            message: vec![first_line(&message)],
            warnings: vec![],
            ..Expectation::default()
        },
        (_, Ok(admission)) => {
            let session = t.seeds[seed].session.clone();
            let evaluation =
                native.evaluate(&admission, &settings, HostCapabilities::Replay(session));
            let response = evaluation.response;
            let warnings: Vec<String> = response.warnings().iter().map(|w| first_line(w)).collect();
            let result = match (response.allowed, warnings.is_empty()) {
                (false, _) => ExpectedResult::Fail,
                (true, true) if !native.matches(&admission) => ExpectedResult::Skip,
                (true, true) => ExpectedResult::Pass,
                (true, false) => ExpectedResult::Warn,
            };
            Expectation {
                result,
                code: response.code(),
                message: response.message().map(first_line).into_iter().collect(),
                warnings,
                ..Expectation::default()
            }
        }
        (_, Err(e)) => {
            eprintln!("not an AdmissionRequest ({e}): no case written");
            return;
        }
    };
    let case = Case {
        description: format!(
            "found by fuzzing (from {}); expect is what the policy answered, correct it",
            t.seeds[seed]
                .file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
        settings,
        request,
        session: t.seeds[seed].case.session.clone(),
        expect,
        runners: Default::default(),
        benchmark: false,
    };
    match serde_saphyr::to_string(&case) {
        Ok(text) => match std::fs::write(to, text) {
            Ok(()) => eprintln!("wrote {}", to.display()),
            Err(e) => eprintln!("cannot write {}: {e}", to.display()),
        },
        Err(e) => eprintln!("cannot write the case as YAML: {e}"),
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(120).collect()
}
