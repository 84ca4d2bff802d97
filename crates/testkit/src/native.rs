//! Every case of a policy against its rule function, natively.
//!
//! A policy crate is also a plain Rust library (its waPC entry points are
//! behind its `wapc` feature), so `cargo test` runs each YAML case through
//! `shared::validate`, exactly as the module does inside wasm, without
//! building wasm: settings through the same `validate_settings`, the same
//! JSON payload, cluster reads answered from the case's recorded session
//! through [`HostCalls`], as our host answers them; a read that asks for
//! more than the policy's metadata declares it reads fails the case. Each
//! policy's
//! `tests/cases.rs` is one line:
//!
//! ```ignore
//! fn main() {
//!     testkit::native::main::<no_delete::Settings>(env!("CARGO_MANIFEST_DIR"), no_delete::RULES, no_delete::READS, no_delete::evaluate);
//! }
//! ```

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::settings::SettingsValidationResponse;
use libtest_mimic::{Arguments, Failed, Trial};
use serde::de::DeserializeOwned;
use serde_json::Value;
use shared::lookup::{Cluster, LookupError};
use shared::{Catalogue, Evaluate, Selection, Validatable};

use crate::case::{Case, Evaluator, Runner, SettingsAnswer, case_files};
use crate::rules::{KnownRules, documented};
use admission::{AdmissionRequest, AdmissionResponse};
use capabilities::snapshot::Reads;
use capabilities::{Evaluation, HostCalls, HostCapabilities};
use wasm_meta::metadata::Metadata;

/// A policy crate's rule, settings and metadata, evaluated natively.
pub struct Native<S> {
    name: String,
    catalogue: Catalogue,
    reading: Selection,
    rule: Evaluate<S>,
    metadata: Metadata,
}

impl<S> Native<S> {
    /// The policy in the crate at `dir` (its `metadata.yml` is read there),
    /// its rules declared in `catalogue`.
    pub fn new(
        dir: &Path,
        catalogue: Catalogue,
        reading: Selection,
        rule: Evaluate<S>,
    ) -> Result<Self, String> {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let metadata = Metadata::from_yaml_file(&dir.join("metadata.yml"))
            .map_err(|e| crate::with_causes(&e))?;
        Ok(Self {
            name,
            catalogue,
            reading,
            rule,
            metadata,
        })
    }
}

/// Cluster reads answered as our host answers them: through [`HostCalls`],
/// from the host-call payload the rule's request serialises to.
struct Replay<'c>(&'c RefCell<HostCalls>);

impl Cluster for Replay<'_> {
    fn call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, LookupError> {
        self.0
            .borrow_mut()
            .answer("kubewarden", "kubernetes", operation, request)
            .map_err(|message| LookupError::from_host(&message))
    }
}

impl<S: DeserializeOwned + Default + Validatable> Evaluator for Native<S> {
    fn validate_settings(&self, settings: &Value) -> Result<SettingsAnswer, String> {
        let payload = serde_json::to_vec(settings).map_err(|e| e.to_string())?;
        let answer = shared::settings::validate_settings::<S>(&self.name, &payload)
            .map_err(|e| e.to_string())?;
        let answer: SettingsValidationResponse =
            serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
        Ok(if answer.valid {
            SettingsAnswer::Accepted
        } else {
            SettingsAnswer::Refused(answer.message.unwrap_or_default())
        })
    }

    fn evaluate(
        &self,
        request: &AdmissionRequest,
        settings: &Value,
        capabilities: HostCapabilities,
    ) -> Evaluation {
        let calls = RefCell::new(HostCalls::new(
            self.metadata.context_aware_resources.clone(),
            capabilities,
        ));
        let payload = serde_json::json!({"request": request, "settings": settings});
        let response = match serde_json::to_vec(&payload) {
            Ok(payload) => {
                let answer = shared::validate::<S, _>(
                    self.catalogue.policy,
                    &payload,
                    self.reading,
                    &Replay(&calls),
                    self.rule,
                );
                admission_response(&request.uid, answer)
            }
            Err(e) => AdmissionResponse::internal_server_error(&request.uid, &e.to_string()),
        };
        let calls = calls.into_inner();
        // A read beyond what metadata.yml declares would escape the
        // snapshot command, which captures exactly the declared fields.
        let response = match calls
            .calls
            .iter()
            .find_map(|call| Reads::undeclared(&self.metadata, call))
        {
            Some(undeclared) => AdmissionResponse::internal_server_error(&request.uid, &undeclared),
            None => response,
        };
        calls.evaluation(response)
    }

    fn matches(&self, request: &AdmissionRequest) -> bool {
        self.metadata.matches(request)
    }
}

/// The AdmissionResponse policy-server makes of a `validate` answer.
fn admission_response(
    uid: &str,
    answer: kubewarden_policy_sdk::wapc_guest::CallResult,
) -> AdmissionResponse {
    match answer.map(|bytes| serde_json::from_slice::<ValidationResponse>(&bytes)) {
        Ok(Ok(response)) => AdmissionResponse::from_validation(uid, response),
        Ok(Err(e)) => AdmissionResponse::internal_server_error(
            uid,
            &format!("cannot deserialize policy validation response: {e}"),
        ),
        Err(e) => AdmissionResponse::internal_server_error(uid, &e.to_string()),
    }
}

/// The test binary of a policy crate: one named test per case file under
/// `<manifest_dir>/tests/cases`, judged as under our host (every finding
/// tagged with a rule of `catalogue`), and `rules-documented`: the
/// catalogue's not-checked rules are named as such, and the README's
/// "Rules" table lists exactly the catalogue.
pub fn main<S>(manifest_dir: &str, catalogue: Catalogue, reading: Selection, rule: Evaluate<S>)
where
    S: DeserializeOwned + Default + Validatable + 'static,
{
    let args = Arguments::from_args();
    let dir = Path::new(manifest_dir);
    let trials = match (
        Native::new(dir, catalogue, reading, rule),
        case_files(&dir.join("tests/cases")),
    ) {
        (Ok(policy), Ok(files)) => {
            let policy = Arc::new(policy);
            let known = Arc::new(KnownRules::from_catalogue(&catalogue));
            let readme_dir = dir.to_path_buf();
            let audit = settings_audit::<S>(files.clone());
            let mut trials = vec![Trial::test("rules-documented", move || {
                catalogue.check().map_err(Failed::from)?;
                documented(&catalogue, &readme_dir).map_err(Failed::from)
            })];
            trials.extend(files.into_iter().map(|file| {
                let policy = Arc::clone(&policy);
                let known = Arc::clone(&known);
                let name = file
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                Trial::test(name, move || {
                    let case = Case::load(&file).map_err(|e| Failed::from(e.with_causes()))?;
                    case.run(Runner::Host, policy.as_ref(), &known)
                        .map_err(|e| Failed::from(format!("{}: {e}", case.description)))
                })
            }));
            trials.push(audit);
            trials
        }
        (Err(error), _) => vec![Trial::test("metadata", move || Err(error.into()))],
        (_, Err(error)) => {
            let error = error.to_string();
            vec![Trial::test("cases", move || Err(error.into()))]
        }
    };
    libtest_mimic::run(&args, trials).exit();
}

/// The trial that fails when a setting of `S` has no `invalid-settings`
/// case naming it (`crate::settings_audit`).
fn settings_audit<S: DeserializeOwned>(files: Vec<std::path::PathBuf>) -> Trial {
    Trial::test("settings-audit", move || {
        let settings = crate::settings_audit::settings_of::<S>()?;
        let cases = files
            .iter()
            .map(|file| Case::load(file).map_err(|e| e.with_causes()))
            .collect::<Result<Vec<_>, _>>()?;
        let unnamed = crate::settings_audit::unnamed(&settings, &cases);
        if unnamed.is_empty() {
            return Ok(());
        }
        Err(format!(
            "no invalid-settings case names {}: add one whose expected message names the setting",
            unnamed.join(", ")
        )
        .into())
    })
}
