//! The `wasm` target: requests built from the cases of every policy, as the
//! `rule` target builds them, evaluated by the built module (`dist/*.wasm`)
//! in our wasmtime host, the way policy-server runs it. It catches what only
//! shows in wasm: a trap, an allocation failure or a stack overflow is a 500
//! rejection that `failurePolicy` cannot rescue.
//!
//! The input's first choice picks the policy, so one binary and one corpus
//! serve every module. Each request also goes through the native rule in the
//! same process: its coverage, which libFuzzer sees (the guest's it cannot),
//! guides the mutations, and the two answers must agree.
//!
//! Properties, beyond those of [`crate::check_response`]: `validate_settings`
//! never fails in wasm, and refuses what the native rule refuses; a request
//! gets the same answer and host calls twice, and the native rule's.
//!
//! Environment: `FUZZ_WASM_DIR` (the modules, `dist/` by default),
//! `FUZZ_SEEDS_TO`, `FUZZ_DICT_TO` and `FUZZ_CASE_TO` as for the other
//! targets (a case is written under the picked policy's name).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use admission::AdmissionRequest;
use arbitrary::Unstructured;
use capabilities::HostCapabilities;
use host::{HostError, PolicyModule};
use serde_json::{Map, Value};
use testkit::case::SettingsAnswer;

use crate::corpus::{shortest_picks, write_case, write_dict_strings};
use crate::mutation::{Built, build};
use crate::properties::{check_scope, evaluate_twice, fail};
use crate::target::{Target, load_policy, registry};

/// A policy's cases and its built module.
struct Loaded {
    target: Target,
    module: PolicyModule,
}

static LOADED: OnceLock<Vec<Loaded>> = OnceLock::new();

fn loaded() -> &'static [Loaded] {
    LOADED.get_or_init(load)
}

/// Every policy of the registry with its module; exits when one is missing,
/// as a run over part of the modules would report a smaller scope silently.
fn load() -> Vec<Loaded> {
    let dir = std::env::var_os("FUZZ_WASM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist"));
    registry()
        .into_iter()
        .map(|policy| {
            let file = dir.join(format!("{}.wasm", policy.name()));
            let module = PolicyModule::from_file(&file).unwrap_or_else(|e| {
                eprintln!(
                    "{}\nbuild the modules first: make dist",
                    testkit::with_causes(&e)
                );
                std::process::exit(2)
            });
            Loaded {
                target: load_policy(policy),
                module,
            }
        })
        .collect()
}

/// Picks the policy, then builds its request as the `rule` target does.
fn pick<'a>(u: &mut Unstructured<'_>, all: &'a [Loaded]) -> Option<(&'a Loaded, Built)> {
    let one = all.get(u.choose_index(all.len()).ok()?)?;
    let built = build(u, &one.target).ok()?;
    Some((one, built))
}

/// The `wasm` target: one structured input.
pub fn wasm(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Some((one, built)) = pick(&mut u, loaded()) else {
        return;
    };
    let t = &one.target;
    if let Some(to) = &t.case_to {
        return write_case(t, to, built.request, built.settings, built.seed);
    }
    if let Err(problem) = run(one, &built) {
        let detail = format!(
            "seed: {}\nsettings: {}\nrequest: {}",
            t.seeds[built.seed].file.display(),
            built.settings,
            built.request
        );
        fail("wasm", t.policy.name(), &problem, &detail);
    }
}

fn run(one: &Loaded, built: &Built) -> Result<(), String> {
    let t = &one.target;
    let Ok(request) = AdmissionRequest::from_value(built.request.clone()) else {
        // Not an AdmissionRequest: the host refuses it before any policy.
        return Ok(());
    };
    // As policy-server reads its configuration: no settings are an empty
    // map, and settings that are not a map never reach a policy.
    let settings = match &built.settings {
        Value::Null => Value::Object(Map::new()),
        map @ Value::Object(_) => map.clone(),
        _ => return Ok(()),
    };
    let native = t.policy.native();
    let native_settings = native.validate_settings(&settings)?;
    let policy = match one.module.configure(settings.clone()) {
        Err(HostError::InvalidSettings { message }) => {
            if native_settings == SettingsAnswer::Accepted {
                return Err(format!(
                    "the module refuses settings the native rule accepts: {message}"
                ));
            }
            return if message.trim().is_empty() {
                Err("settings refused without a message".to_owned())
            } else {
                Ok(())
            };
        }
        Err(other) => return Err(format!("validate_settings failed in wasm: {other}")),
        Ok(policy) => policy,
    };
    if let SettingsAnswer::Refused(message) = native_settings {
        return Err(format!(
            "the module accepts settings the native rule refuses: {message}"
        ));
    }
    let session = &t.seeds[built.seed].session;
    let first =
        evaluate_twice(|| policy.evaluate(&request, HostCapabilities::Replay(session.clone())))?;
    let reference = native.evaluate(
        &request,
        &settings,
        HostCapabilities::Replay(session.clone()),
    );
    if first.response != reference.response {
        return Err(format!(
            "the module and the native rule answer differently:\nwasm:   {:?}\nnative: {:?}",
            first.response, reference.response
        ));
    }
    if first.host_calls != reference.host_calls {
        return Err("the module and the native rule made different host calls".to_owned());
    }
    check_scope(t, built, &request, &first.response)
}

/// Handles `FUZZ_SEEDS_TO` (one input per case of every policy, each
/// picking its case unchanged) and `FUZZ_DICT_TO` (every policy's strings):
/// writes and exits. The target's `init`.
pub fn init() {
    let all = loaded();
    let mut exit = false;
    if let Some(dir) = std::env::var_os("FUZZ_SEEDS_TO") {
        let dir = PathBuf::from(dir);
        match write_seeds(all, &dir) {
            Ok(n) => eprintln!("wasm: {n} seeds in {}", dir.display()),
            Err(e) => {
                eprintln!("cannot write seeds to {}: {e}", dir.display());
                std::process::exit(2)
            }
        }
        exit = true;
    }
    if let Some(file) = std::env::var_os("FUZZ_DICT_TO") {
        let strings: BTreeSet<&String> = all.iter().flat_map(|one| &one.target.dict).collect();
        let strings: Vec<String> = strings.into_iter().cloned().collect();
        if let Err(e) = write_dict_strings(&strings, Path::new(&file)) {
            eprintln!("cannot write the dictionary: {e}");
            std::process::exit(2)
        }
        exit = true;
    }
    if exit {
        std::process::exit(0);
    }
}

fn write_seeds(all: &[Loaded], dir: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    // Case `j` of policy `i` is number `offsets[i] + j`.
    let counts: Vec<usize> = all.iter().map(|one| one.target.seeds.len()).collect();
    let offsets: Vec<usize> = counts
        .iter()
        .scan(0, |sum, n| {
            let start = *sum;
            *sum += n;
            Some(start)
        })
        .collect();
    let total: usize = counts.iter().sum();
    let inputs = shortest_picks(total, |u| {
        let i = u.choose_index(all.len())?;
        let j = u.choose_index(counts.get(i).copied().unwrap_or(1))?;
        Ok(offsets.get(i).copied().unwrap_or(0) + j)
    });
    for (k, input) in inputs.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-wasm-{k:04}")), input)?;
    }
    Ok(inputs.len())
}
