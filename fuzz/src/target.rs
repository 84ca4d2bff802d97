//! The policies under fuzz ([`registry`]), and the one a target runs
//! ([`target`]): its cases, the strings they hold, and its metadata.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use capabilities::replay::Session;
use linked::{Linked, Visitor};
use serde_json::Value;
use shared::lookup::Cluster;
use shared::sdk::wapc_guest::CallResult;
use testkit::case::{Case, Evaluator, case_files};
use testkit::native::Native;
use wasm_meta::metadata::Metadata;

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
pub(crate) struct Seed {
    pub(crate) file: PathBuf,
    pub(crate) case: Case,
    pub(crate) session: Session,
}

/// The policy a target runs, its cases and the strings they contain.
pub struct Target {
    pub(crate) policy: Box<dyn Fuzzed>,
    pub(crate) seeds: Vec<Seed>,
    /// Keys and string values of every case, plus troublesome strings.
    pub(crate) dict: Vec<String>,
    /// Object keys of every case.
    pub(crate) keys: Vec<String>,
    /// The policy's `metadata.yml`: its webhook rules.
    pub(crate) metadata: Metadata,
    /// `FUZZ_CASE_TO`: write inputs as cases instead of checking them.
    pub(crate) case_to: Option<PathBuf>,
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
pub(crate) fn load_policy(policy: Box<dyn Fuzzed>) -> Target {
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
