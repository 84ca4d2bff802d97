//! Runs every case of every policy through our host against the built
//! module in `dist/`, one test per case (`cargo test -p
//! cozystack-policies-e2e --test host_cases -- no-delete/` filters by
//! policy).
//!
//! The modules are what `make dist` produced; a module older than its
//! sources fails here rather than silently testing stale code
//! ([`e2e::load_module`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use admission::AdmissionRequest;

use host::{Evaluation, HostCapabilities, HostError, PolicyModule};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use testkit::case::{Case, Evaluator, Runner, SettingsAnswer, case_files};
use testkit::rules::KnownRules;

fn main() {
    let args = Arguments::from_args();
    let root = e2e::root();
    let mut trials = Vec::new();
    let mut policies: BTreeMap<String, (PathBuf, Vec<PathBuf>)> = BTreeMap::new();
    match layout::policies(&root) {
        Ok(found) if !found.is_empty() => {
            for policy in found {
                let files = case_files(&policy.cases_dir()).unwrap_or_default();
                policies.insert(policy.name, (policy.dir, files));
            }
        }
        found => {
            let error = found.map_or_else(|e| e.to_string(), |_| "no policies".to_owned());
            trials.push(Trial::test("policies", move || Err(error.into())));
        }
    }
    for (policy, (dir, files)) in policies {
        let module = Arc::new(e2e::load_module(&policy).map(Wasm));
        // The README's Rules table: the policy's native test holds it equal
        // to the catalogue in code.
        let known = Arc::new(KnownRules::load(&dir));
        if files.is_empty() {
            trials.push(Trial::test(format!("{policy}/has-cases"), || {
                Err("no cases".into())
            }));
        }
        let (warm_module, warm_files) = (Arc::clone(&module), files.clone());
        trials.push(Trial::test(format!("{policy}/warm-instance"), move || {
            let module = warm_module
                .as_ref()
                .as_ref()
                .map_err(|e| Failed::from(e.as_str()))?;
            warm_answers_fresh(&module.0, &warm_files).map_err(Failed::from)
        }));
        for file in files {
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let module = Arc::clone(&module);
            let known = Arc::clone(&known);
            trials.push(Trial::test(format!("{policy}/{stem}"), move || {
                let module = module
                    .as_ref()
                    .as_ref()
                    .map_err(|e| Failed::from(e.as_str()))?;
                let known = known
                    .as_ref()
                    .as_ref()
                    .map_err(|e| Failed::from(e.as_str()))?;
                let case = Case::load(&file).map_err(|e| Failed::from(e.with_causes()))?;
                case.run(Runner::Host, module, known)
                    .map_err(|e| Failed::from(format!("{}: {e}", case.description)))
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// One kept instance evaluates every case's request in turn, offline, and
/// answers each as a fresh instance does: the policy keeps no state between
/// calls, which `check` relies on when it reuses instances.
fn warm_answers_fresh(module: &PolicyModule, files: &[PathBuf]) -> Result<(), String> {
    let mut instance = None;
    for file in files {
        let case = Case::load(file).map_err(|e| e.with_causes())?;
        let (Ok(request), Ok(policy)) = (
            case.admission_request(),
            module.configure(case.settings.clone()),
        ) else {
            continue;
        };
        if instance.is_none() {
            instance = Some(
                policy
                    .warm_instance(HostCapabilities::offline())
                    .map_err(|e| e.to_string())?,
            );
        }
        let Some(warm) = &instance else { continue };
        let fresh = policy
            .evaluate(&request, HostCapabilities::offline())
            .response;
        let kept = policy
            .evaluate_warm(warm, &request)
            .map_err(|e| testkit::with_causes(&e))?;
        if kept != fresh {
            return Err(format!(
                "{}: a kept instance answers {kept:?}, a fresh one {fresh:?}",
                file.display()
            ));
        }
    }
    Ok(())
}

/// A built module as a case runner: our host, as policy-server runs it.
struct Wasm(PolicyModule);

impl Evaluator for Wasm {
    fn validate_settings(&self, settings: &Value) -> Result<SettingsAnswer, String> {
        match self.0.configure(settings.clone()) {
            Ok(_) => Ok(SettingsAnswer::Accepted),
            Err(HostError::InvalidSettings { message }) => Ok(SettingsAnswer::Refused(message)),
            Err(other) => Err(testkit::with_causes(&other)),
        }
    }

    fn evaluate(
        &self,
        request: &AdmissionRequest,
        settings: &Value,
        capabilities: HostCapabilities,
    ) -> Evaluation {
        match self.0.configure(settings.clone()) {
            Ok(policy) => policy.evaluate(request, capabilities),
            // The case's settings were accepted a moment ago
            // (`Case::run` asks first); a module that changes its mind
            // answers as policy-server would to a broken policy.
            Err(e) => Evaluation {
                response: admission::AdmissionResponse::internal_server_error(
                    &request.uid,
                    &testkit::with_causes(&e),
                ),
                logs: Vec::new(),
                host_calls: Vec::new(),
                unused_exchanges: 0,
            },
        }
    }

    fn matches(&self, request: &AdmissionRequest) -> bool {
        self.0.metadata().is_none_or(|m| m.matches(request))
    }
}
