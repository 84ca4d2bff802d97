//! Loading a policy module and evaluating requests the way policy-server
//! does.
//!
//! - one wasmtime engine with function references and epoch interruption,
//!   ticked once a second, and a 2-tick deadline for `wapc_init` and each
//!   call (policy-server's default `--policy-timeout` of 2 s);
//! - settings are validated once, when a [`Policy`] is configured, and an
//!   invalid configuration cannot be evaluated;
//! - every evaluation rehydrates a fresh instance (new store, new
//!   `wapc_init`), so no state survives between requests;
//! - a trap or a guest error becomes `allowed: false`, code 500,
//!   `internal server error: ...`;
//! - compiled modules may be kept on disk ([`cache_compiled_modules`]);
//!   that changes when a module is compiled, never how it is evaluated.
//!
//! [`Policy::evaluate_metered`] is the same evaluation under a fuel budget
//! instead of the deadline ([`crate::fuel`]), for the hostile cases' bounds.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use crate::Cause;
use crate::fuel::{Metered, MeteredModule};
use admission::{AdmissionRequest, AdmissionResponse};
use capabilities::{Evaluation, HostCalls, HostCapabilities};
use kubewarden_policy_sdk::response::ValidationResponse;
use serde::Serialize;
use serde_json::Value;
use wasm_meta::metadata::{Metadata, MetadataError};
use wasmtime_provider::{EpochDeadlines, WasmtimeEngineProviderBuilder, WasmtimeEngineProviderPre};

/// Epoch ticks (seconds) a policy may run, as policy-server's default.
const DEADLINE_TICKS: u64 = 2;
const TICK: Duration = Duration::from_secs(1);

/// Errors of loading or configuring a policy. Each keeps what caused it as
/// its `source`, and its message leaves the cause to it, so `{:#}`
/// (anyhow) prints the whole chain once and a caller can still inspect the
/// cause.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The module file could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// wasmtime refused the engine's configuration, or its epoch thread
    /// could not start. Built once per process, so every later load shares
    /// the cause.
    #[error("cannot create the wasmtime engine")]
    Engine(#[source] Arc<Cause>),
    /// The compilation cache could not be set up in `dir`.
    #[error("cannot keep compiled modules in {}", dir.display())]
    Cache {
        dir: PathBuf,
        #[source]
        source: Cause,
    },
    /// The fuel-metering engine could not be built, or could not compile
    /// or pre-instantiate the module; built once per module, so every
    /// metered evaluation shares the cause.
    #[error("cannot load module {name} for metering")]
    Metering {
        name: String,
        #[source]
        source: Arc<Cause>,
    },
    /// The `validate` payload could not be written (settings or a request
    /// serde_json cannot serialise).
    #[error("{name}: cannot write the validate payload")]
    Payload {
        name: String,
        #[source]
        source: serde_json::Error,
    },
    /// wasmtime could not compile or pre-instantiate the module.
    #[error("cannot load module {name}")]
    Load {
        name: String,
        #[source]
        source: Cause,
    },
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// Settings are a map or null, as policy-server requires.
    #[error("{name}: settings must be a map or null")]
    SettingsShape { name: String },
    /// `validate_settings` answered `valid: false`; policy-server refuses to
    /// start with such a policy.
    #[error("Provided settings are not valid: {message}")]
    InvalidSettings { message: String },
    /// A waPC call into the guest failed, or its answer was unreadable.
    #[error("{name}: {operation} failed")]
    Call {
        name: String,
        operation: &'static str,
        #[source]
        source: Cause,
    },
}

/// The process's one engine, built on first use (with the compilation
/// cache, when [`cache_compiled_modules`] chose one before).
static ENGINE: OnceLock<Result<wasmtime::Engine, Arc<Cause>>> = OnceLock::new();

/// Where compiled modules are kept across processes, if anywhere.
static COMPILE_CACHE: OnceLock<wasmtime::Cache> = OnceLock::new();

/// Keeps every module this process compiles in wasmtime's on-disk cache
/// under `dir`, keyed by the module's bytes and the compiler's version and
/// settings, so a later process loads it instead of compiling it again.
/// Evaluation is unchanged. Only takes effect before the first module is
/// loaded, which is when the engine is built.
pub fn cache_compiled_modules(dir: &Path) -> Result<(), HostError> {
    let refused = |source: Cause| HostError::Cache {
        dir: dir.to_owned(),
        source,
    };
    if ENGINE.get().is_some() {
        return Err(refused(
            "the engine is already built: choose the cache before loading a module".into(),
        ));
    }
    let mut config = wasmtime::CacheConfig::new();
    config.with_directory(dir);
    let cache = wasmtime::Cache::new(config).map_err(|e| refused(e.into()))?;
    COMPILE_CACHE
        .set(cache)
        .map_err(|_| refused("a compilation cache is already chosen".into()))
}

fn build_engine() -> Result<wasmtime::Engine, Arc<Cause>> {
    let mut config = wasmtime::Config::new();
    config.wasm_function_references(true);
    config.epoch_interruption(true);
    config.cache(COMPILE_CACHE.get().cloned());
    let engine = wasmtime::Engine::new(&config).map_err(|e| Arc::new(e.into()))?;
    let ticker = engine.weak();
    std::thread::Builder::new()
        .name("epoch-ticker".to_owned())
        .spawn(move || {
            while let Some(engine) = ticker.upgrade() {
                std::thread::sleep(TICK);
                engine.increment_epoch();
            }
        })
        .map_err(|e| Arc::new(e.into()))?;
    Ok(engine)
}

fn engine() -> Result<wasmtime::Engine, HostError> {
    ENGINE
        .get_or_init(build_engine)
        .as_ref()
        .cloned()
        .map_err(|e| HostError::Engine(Arc::clone(e)))
}

const DEADLINES: EpochDeadlines = EpochDeadlines {
    wapc_init: DEADLINE_TICKS,
    wapc_func: DEADLINE_TICKS,
};

/// A compiled policy module and its embedded metadata.
pub struct PolicyModule {
    name: String,
    metadata: Option<Metadata>,
    pre: WasmtimeEngineProviderPre,
    size: usize,
    /// The module's bytes, compiled for metered evaluation on first use
    /// only: the normal path never pays for a second compilation.
    bytes: Vec<u8>,
    metered: OnceLock<Result<MeteredModule, Arc<Cause>>>,
}

impl std::fmt::Debug for PolicyModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyModule")
            .field("name", &self.name)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct ValidatePayload<'a> {
    request: &'a AdmissionRequest,
    settings: &'a Value,
}

impl PolicyModule {
    /// Loads and compiles a module file; the name is the file stem.
    pub fn from_file(path: &Path) -> Result<Self, HostError> {
        let bytes = std::fs::read(path).map_err(|source| HostError::Io {
            path: path.to_owned(),
            source,
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self::from_bytes(name, &bytes)
    }

    /// Compiles a module held in memory.
    pub fn from_bytes(name: String, bytes: &[u8]) -> Result<Self, HostError> {
        let metadata = Metadata::from_wasm(bytes)?;
        let load_error = |source: Cause| HostError::Load {
            name: name.clone(),
            source,
        };
        let module = wasmtime::Module::new(&engine()?, bytes).map_err(|e| load_error(e.into()))?;
        let pre = WasmtimeEngineProviderBuilder::new()
            .engine(engine()?)
            .module(module)
            .enable_epoch_interruptions(DEADLINES)
            .build_pre()
            .map_err(|e| load_error(e.into()))?;
        Ok(Self {
            name,
            metadata,
            pre,
            size: bytes.len(),
            bytes: bytes.to_vec(),
            metered: OnceLock::new(),
        })
    }

    /// The module's name (file stem).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Embedded metadata, `None` for a module that was never annotated.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.metadata.as_ref()
    }

    /// Size of the module file in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    fn metered(&self) -> Result<&MeteredModule, HostError> {
        self.metered
            .get_or_init(|| MeteredModule::new(&self.bytes))
            .as_ref()
            .map_err(|source| HostError::Metering {
                name: self.name.clone(),
                source: Arc::clone(source),
            })
    }

    fn instantiate(&self, record: Arc<Mutex<HostCalls>>) -> Result<wapc::WapcHost, Cause> {
        let provider = self.pre.rehydrate(Some(DEADLINES))?;
        Ok(wapc::WapcHost::new(
            Box::new(provider),
            Some(host_callback(record)),
        )?)
    }

    fn call(&self, operation: &'static str, payload: &[u8]) -> Result<Vec<u8>, HostError> {
        let record = Arc::new(Mutex::new(HostCalls::new(
            vec![],
            HostCapabilities::offline(),
        )));
        let call_error = |source: Cause| HostError::Call {
            name: self.name.clone(),
            operation,
            source,
        };
        let host = self.instantiate(record).map_err(call_error)?;
        host.call(operation, payload)
            .map_err(|e| call_error(e.into()))
    }

    /// Asks the guest for its protocol version, as `kwctl annotate` does.
    pub fn protocol_version(&self) -> Result<String, HostError> {
        let answer = self.call("protocol_version", b"")?;
        serde_json::from_slice(&answer).map_err(|e| HostError::Call {
            name: self.name.clone(),
            operation: "protocol_version",
            source: e.into(),
        })
    }

    /// Validates `settings` with the guest and returns a policy ready to
    /// evaluate, or the guest's refusal.
    pub fn configure(&self, settings: Value) -> Result<Policy<'_>, HostError> {
        let settings = match settings {
            Value::Null => Value::Object(Default::default()),
            map @ Value::Object(_) => map,
            _ => {
                return Err(HostError::SettingsShape {
                    name: self.name.clone(),
                });
            }
        };
        let payload = serde_json::to_vec(&settings).map_err(|e| HostError::Call {
            name: self.name.clone(),
            operation: "validate_settings",
            source: e.into(),
        })?;
        let verdict = match self.call("validate_settings", &payload) {
            Ok(answer) => serde_json::from_slice::<SettingsVerdict>(&answer).unwrap_or_else(|e| {
                SettingsVerdict {
                    valid: false,
                    message: Some(format!("error: {e}")),
                }
            }),
            Err(e) => SettingsVerdict {
                valid: false,
                message: Some(format!("Error invoking settings validation callback: {e}")),
            },
        };
        if verdict.valid {
            Ok(Policy {
                module: self,
                settings,
            })
        } else {
            Err(HostError::InvalidSettings {
                message: verdict.message.unwrap_or_default(),
            })
        }
    }
}

#[derive(serde::Deserialize)]
struct SettingsVerdict {
    valid: bool,
    #[serde(default)]
    message: Option<String>,
}

/// A module with validated settings.
#[derive(Debug)]
pub struct Policy<'m> {
    module: &'m PolicyModule,
    settings: Value,
}

impl Policy<'_> {
    /// The module this policy runs.
    pub fn module(&self) -> &PolicyModule {
        self.module
    }

    /// Evaluates one request in a fresh instance.
    pub fn evaluate(
        &self,
        request: &AdmissionRequest,
        capabilities: HostCapabilities,
    ) -> Evaluation {
        let record = Arc::new(Mutex::new(HostCalls::new(
            self.context_aware_resources(),
            capabilities,
        )));
        let response = match self.payload(request) {
            Ok(payload) => self.call_validate(&request.uid, &payload, Arc::clone(&record)),
            Err(e) => AdmissionResponse::internal_server_error(&request.uid, &e.to_string()),
        };
        evaluation(response, &record)
    }

    /// Evaluates one request as [`Policy::evaluate`] does, in a fresh
    /// instance of the fuel-metered engine: the evaluation ends, a 500, when
    /// it burns [`crate::fuel::FUEL_BUDGET`], whatever the clock says.
    pub fn evaluate_metered(
        &self,
        request: &AdmissionRequest,
        capabilities: HostCapabilities,
    ) -> Metered {
        let record = Arc::new(Mutex::new(HostCalls::new(
            self.context_aware_resources(),
            capabilities,
        )));
        let used = Rc::new(Cell::new(0));
        let host = self
            .module
            .metered()
            .map_err(Cause::from)
            .and_then(|module| module.host(host_callback(Arc::clone(&record)), Rc::clone(&used)));
        let response = match self.payload(request) {
            Ok(payload) => validate(&request.uid, &payload, host),
            Err(e) => AdmissionResponse::internal_server_error(&request.uid, &e.to_string()),
        };
        Metered {
            evaluation: evaluation(response, &record),
            fuel: used.get(),
        }
    }

    /// The resources the metadata lets the policy look up.
    fn context_aware_resources(&self) -> Vec<wasm_meta::metadata::ContextAwareResource> {
        self.module
            .metadata()
            .map(|m| m.context_aware_resources.clone())
            .unwrap_or_default()
    }

    /// Evaluates one request with the payload already serialised; the
    /// benchmark uses this to measure only what policy-server does per
    /// request.
    pub fn evaluate_payload(&self, uid: &str, payload: &[u8]) -> AdmissionResponse {
        let record = Arc::new(Mutex::new(HostCalls::new(
            vec![],
            HostCapabilities::offline(),
        )));
        self.call_validate(uid, payload, record)
    }

    /// An instance kept for repeated evaluations, answering host calls as
    /// `capabilities` says. policy-server never reuses one; the benchmark
    /// does, to tell a rule's own cost (a warm call) from what a fresh
    /// instance adds (cold code, instantiation, teardown), and `check` does,
    /// to judge thousands of objects ([`Policy::evaluate_warm`]).
    pub fn warm_instance(&self, capabilities: HostCapabilities) -> Result<WarmInstance, HostError> {
        let record = Arc::new(Mutex::new(HostCalls::new(
            self.context_aware_resources(),
            capabilities,
        )));
        self.module
            .instantiate(record)
            .map(WarmInstance)
            .map_err(|source| HostError::Call {
                name: self.module.name.clone(),
                operation: "wapc_init",
                source,
            })
    }

    /// Evaluates one request in `instance`, a kept instance of this
    /// policy's module, host calls answered as it was made to. The policies keep no state between calls,
    /// so the answer is a fresh instance's (the host's case test checks it
    /// for every case). `Err` when the guest call failed: the instance may be
    /// broken, and the caller should ask a fresh one ([`Policy::evaluate`]).
    pub fn evaluate_warm(
        &self,
        instance: &WarmInstance,
        request: &AdmissionRequest,
    ) -> Result<AdmissionResponse, HostError> {
        let name = || self.module.name.clone();
        let payload = self.payload(request).map_err(|source| HostError::Payload {
            name: name(),
            source,
        })?;
        let answer = instance
            .0
            .call("validate", &payload)
            .map_err(|e| HostError::Call {
                name: name(),
                operation: "validate",
                source: e.into(),
            })?;
        Ok(shape(&request.uid, &answer))
    }

    /// The `validate` payload for a request under these settings.
    pub fn payload(&self, request: &AdmissionRequest) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(&ValidatePayload {
            request,
            settings: &self.settings,
        })
    }

    fn call_validate(
        &self,
        uid: &str,
        payload: &[u8],
        record: Arc<Mutex<HostCalls>>,
    ) -> AdmissionResponse {
        validate(uid, payload, self.module.instantiate(record))
    }
}

/// Calls `validate` on a fresh waPC host and shapes the answer as
/// policy-server does, whichever engine runs the guest.
fn validate(uid: &str, payload: &[u8], host: Result<wapc::WapcHost, Cause>) -> AdmissionResponse {
    let host = match host {
        Ok(host) => host,
        Err(e) => return AdmissionResponse::internal_server_error(uid, &e.to_string()),
    };
    match host.call("validate", payload) {
        Ok(answer) => shape(uid, &answer),
        Err(e) => AdmissionResponse::internal_server_error(uid, &e.to_string()),
    }
}

/// The AdmissionResponse of a `validate` answer, as policy-server shapes it.
fn shape(uid: &str, answer: &[u8]) -> AdmissionResponse {
    match serde_json::from_slice::<ValidationResponse>(answer) {
        Ok(response) => AdmissionResponse::from_validation(uid, response),
        Err(e) => AdmissionResponse::internal_server_error(
            uid,
            &format!("cannot deserialize policy validation response: {e}"),
        ),
    }
}

/// The answer with what the guest logged and asked the host.
fn evaluation(response: AdmissionResponse, record: &Mutex<HostCalls>) -> Evaluation {
    record
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .evaluation(response)
}

/// One instance evaluating payloads again and again (see
/// [`Policy::warm_instance`]).
pub struct WarmInstance(wapc::WapcHost);

impl WarmInstance {
    /// Calls `validate` with an already serialised payload; `false` when the
    /// guest failed.
    pub fn validate(&self, payload: &[u8]) -> bool {
        self.0.call("validate", payload).is_ok()
    }
}

/// Builds the waPC host callback around a shared record of the calls.
fn host_callback(record: Arc<Mutex<HostCalls>>) -> Box<wapc::HostCallback> {
    Box::new(move |_id, binding, namespace, operation, payload| {
        let mut record = record.lock().unwrap_or_else(PoisonError::into_inner);
        record
            .answer(binding, namespace, operation, payload)
            .map_err(|message| message.into())
    })
}
