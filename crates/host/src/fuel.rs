//! Evaluation under a fuel budget: a waPC engine provider of our own on a
//! wasmtime engine that counts the instructions a guest runs.
//!
//! The epoch deadline of [`crate::policy`] stops a policy after two seconds
//! of wall time, which a loaded machine reaches sooner than an idle one;
//! fuel counts work instead, so a case that stays within [`FUEL_BUDGET`]
//! does so on any machine. `wasmtime-provider` builds its store privately and
//! cannot be given fuel, hence this provider: a fresh store per evaluation
//! holding the whole budget for `wapc_init` and the call together, the waPC
//! imports over [`wapc::ModuleState`], WASI preview 1 through `wasi-common`
//! as `wasmtime-provider` links it.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::{Arc, LazyLock};

use wapc::{ModuleState, WebAssemblyEngineProvider, wapc_functions};

use crate::Cause;
use wasi_common::WasiCtx;
use wasmtime::error::format_err;
use wasmtime::{Caller, Engine, InstancePre, Linker, Memory, Store, Trap, TypedFunc};

/// Fuel (about one unit per WebAssembly instruction) an evaluation may burn,
/// `wapc_init` included: the most expensive hostile case times a safety
/// margin, and far below what two seconds of policy code burn
/// (docs/performance.md, "Hostile cases and the fuel budget").
pub const FUEL_BUDGET: u64 = 4_000_000_000;

/// What each store holds: the guest's WASI context and its waPC exchange.
struct Guest {
    wasi: WasiCtx,
    state: Arc<ModuleState>,
}

/// The metering engine and a linker with every import a policy may use,
/// built once: both are independent of the module.
struct Runtime {
    engine: Engine,
    linker: Linker<Guest>,
}

/// Built once per process, so every module that needs it shares the cause
/// of a failure.
static RUNTIME: LazyLock<Result<Runtime, Arc<Cause>>> = LazyLock::new(|| {
    let runtime = || -> Result<Runtime, Cause> {
        let mut config = wasmtime::Config::new();
        config.wasm_function_references(true);
        config.consume_fuel(true);
        let engine = Engine::new(&config)?;
        let mut linker = Linker::new(&engine);
        wasi_common::sync::add_to_linker(&mut linker, |guest: &mut Guest| &mut guest.wasi)?;
        link_wapc(&mut linker)?;
        Ok(Runtime { engine, linker })
    };
    runtime().map_err(Arc::new)
});

/// A policy module compiled for metered evaluation.
pub(crate) struct MeteredModule {
    pre: InstancePre<Guest>,
}

impl MeteredModule {
    /// Compiles `bytes` with the metering engine and resolves its imports.
    pub(crate) fn new(bytes: &[u8]) -> Result<Self, Arc<Cause>> {
        let runtime = RUNTIME.as_ref().map_err(Arc::clone)?;
        let compiled = || -> Result<Self, Cause> {
            let module = wasmtime::Module::new(&runtime.engine, bytes)?;
            let pre = runtime.linker.instantiate_pre(&module)?;
            Ok(Self { pre })
        };
        compiled().map_err(Arc::new)
    }

    /// A waPC host over a fresh instance with the whole budget; `used`
    /// follows the fuel it has burnt so far.
    pub(crate) fn host(
        &self,
        callback: Box<wapc::HostCallback>,
        used: Rc<Cell<u64>>,
    ) -> Result<wapc::WapcHost, Cause> {
        let provider = FuelProvider {
            pre: self.pre.clone(),
            running: None,
            used,
        };
        Ok(wapc::WapcHost::new(Box::new(provider), Some(callback))?)
    }
}

/// A fuel-metered evaluation: the host's answer and what it burnt.
#[derive(Debug)]
pub struct Metered {
    pub evaluation: capabilities::Evaluation,
    /// Fuel burnt by `wapc_init` and `validate` together.
    pub fuel: u64,
}

struct FuelProvider {
    pre: InstancePre<Guest>,
    running: Option<Running>,
    used: Rc<Cell<u64>>,
}

struct Running {
    store: Store<Guest>,
    guest_call: TypedFunc<(i32, i32), i32>,
}

/// Fuel the store has burnt of its budget.
fn burnt(store: &Store<Guest>) -> u64 {
    // `get_fuel` fails only on an engine that does not meter, never ours.
    FUEL_BUDGET.saturating_sub(store.get_fuel().unwrap_or(0))
}

/// The text a guest failure becomes; running out of fuel says so plainly.
fn failure(error: &wasmtime::Error) -> String {
    if matches!(error.downcast_ref::<Trap>(), Some(Trap::OutOfFuel)) {
        format!(
            "guest code interrupted, fuel budget exhausted: the evaluation burnt all \
             {FUEL_BUDGET} units of fuel; the request is too costly to judge, make it smaller"
        )
    } else {
        // With its causes: the guest's own fault, not only "error while executing".
        format!("{error:#}")
    }
}

impl WebAssemblyEngineProvider for FuelProvider {
    fn init(&mut self, state: Arc<ModuleState>) -> Result<(), Cause> {
        let wasi = wasi_common::sync::WasiCtxBuilder::new()
            .inherit_stdio()
            .build();
        let mut store = Store::new(self.pre.module().engine(), Guest { wasi, state });
        store.set_fuel(FUEL_BUDGET).map_err(|e| e.to_string())?;
        let instance = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| e.to_string())?;
        let guest_call = instance
            .get_typed_func(&mut store, wapc_functions::GUEST_CALL)
            .map_err(|e| e.to_string())?;
        for start in wapc_functions::REQUIRED_STARTS {
            if instance.get_export(&mut store, start).is_none() {
                continue;
            }
            let function = instance
                .get_typed_func::<(), ()>(&mut store, start)
                .map_err(|e| e.to_string())?;
            let outcome = function.call(&mut store, ());
            self.used.set(burnt(&store));
            match outcome {
                Ok(()) => {}
                // WASI's `proc_exit(0)` from `_start` is a normal end.
                Err(e)
                    if e.downcast_ref::<wasi_common::I32Exit>()
                        .is_some_and(|x| x.0 == 0) => {}
                Err(e) => return Err(format!("{start} failed: {}", failure(&e)).into()),
            }
        }
        self.running = Some(Running { store, guest_call });
        Ok(())
    }

    fn call(&mut self, op_length: i32, msg_length: i32) -> Result<i32, Cause> {
        let Some(running) = self.running.as_mut() else {
            return Err("the guest was never initialised".into());
        };
        let outcome = running
            .guest_call
            .call(&mut running.store, (op_length, msg_length));
        self.used.set(burnt(&running.store));
        match outcome {
            Ok(code) => Ok(code),
            Err(e) => {
                running.store.data().state.set_guest_error(failure(&e));
                Ok(0)
            }
        }
    }

    fn replace(&mut self, _bytes: &[u8]) -> Result<(), Cause> {
        Err("the fuel provider runs one module per instance; it does not replace it".into())
    }
}

/// Links the waPC protocol's host functions (`wapc` namespace), each over
/// the store's [`ModuleState`].
fn link_wapc(linker: &mut Linker<Guest>) -> wasmtime::Result<()> {
    let ns = wapc::HOST_NAMESPACE;
    linker.func_wrap(
        ns,
        wapc_functions::GUEST_REQUEST_FN,
        |mut caller: Caller<'_, Guest>, op_ptr: i32, ptr: i32| {
            let memory = memory(&mut caller)?;
            if let Some(invocation) = caller.data().state.get_guest_request() {
                write(&mut caller, memory, ptr, &invocation.msg)?;
                write(&mut caller, memory, op_ptr, invocation.operation.as_bytes())?;
            }
            Ok(())
        },
    )?;
    linker.func_wrap(
        ns,
        wapc_functions::HOST_CONSOLE_LOG,
        |mut caller: Caller<'_, Guest>, ptr: i32, len: i32| {
            let memory = memory(&mut caller)?;
            let message = text(&read(&caller, memory, ptr, len)?)?;
            caller.data().state.do_console_log(&message);
            Ok(())
        },
    )?;
    linker.func_wrap(ns, wapc_functions::HOST_CALL, host_call)?;
    linker.func_wrap(
        ns,
        wapc_functions::HOST_RESPONSE_FN,
        |mut caller: Caller<'_, Guest>, ptr: i32| {
            let memory = memory(&mut caller)?;
            let state = Arc::clone(&caller.data().state);
            state
                .with_host_response(|bytes| write(&mut caller, memory, ptr, bytes))
                .unwrap_or(Ok(()))
        },
    )?;
    linker.func_wrap(
        ns,
        wapc_functions::HOST_RESPONSE_LEN_FN,
        |caller: Caller<'_, Guest>| length(caller.data().state.host_response_len()),
    )?;
    linker.func_wrap(
        ns,
        wapc_functions::GUEST_RESPONSE_FN,
        |mut caller: Caller<'_, Guest>, ptr: i32, len: i32| {
            let memory = memory(&mut caller)?;
            let response = read(&caller, memory, ptr, len)?.to_vec();
            caller.data().state.set_guest_response(response);
            Ok(())
        },
    )?;
    linker.func_wrap(
        ns,
        wapc_functions::GUEST_ERROR_FN,
        |mut caller: Caller<'_, Guest>, ptr: i32, len: i32| {
            let memory = memory(&mut caller)?;
            let message = text(&read(&caller, memory, ptr, len)?)?;
            caller.data().state.set_guest_error(message);
            Ok(())
        },
    )?;
    linker.func_wrap(
        ns,
        wapc_functions::HOST_ERROR_FN,
        |mut caller: Caller<'_, Guest>, ptr: i32| {
            let memory = memory(&mut caller)?;
            match caller.data().state.get_host_error() {
                Some(error) => write(&mut caller, memory, ptr, error.as_bytes()),
                None => Ok(()),
            }
        },
    )?;
    linker.func_wrap(
        ns,
        wapc_functions::HOST_ERROR_LEN_FN,
        |caller: Caller<'_, Guest>| {
            length(caller.data().state.get_host_error().map_or(0, |e| e.len()))
        },
    )?;
    Ok(())
}

/// `__host_call`: the guest asks the host's callback, which answers 1 with
/// a response or 0 with an error for the guest to fetch. The arguments are
/// (pointer, length) pairs of binding, namespace, operation and payload.
#[allow(clippy::too_many_arguments)] // The waPC import's signature.
fn host_call(
    mut caller: Caller<'_, Guest>,
    binding_ptr: i32,
    binding_len: i32,
    namespace_ptr: i32,
    namespace_len: i32,
    operation_ptr: i32,
    operation_len: i32,
    payload_ptr: i32,
    payload_len: i32,
) -> wasmtime::Result<i32> {
    let memory = memory(&mut caller)?;
    let binding = text(&read(&caller, memory, binding_ptr, binding_len)?)?;
    let namespace = text(&read(&caller, memory, namespace_ptr, namespace_len)?)?;
    let operation = text(&read(&caller, memory, operation_ptr, operation_len)?)?;
    let payload = read(&caller, memory, payload_ptr, payload_len)?;
    Ok(caller
        .data()
        .state
        .do_host_call(&binding, &namespace, &operation, &payload)
        .unwrap_or(0))
}

fn memory(caller: &mut Caller<'_, Guest>) -> wasmtime::Result<Memory> {
    caller
        .get_export("memory")
        .and_then(|export| export.into_memory())
        .ok_or_else(|| format_err!("the guest exports no `memory`"))
}

/// A copy of the guest's bytes at `ptr..ptr + len`; a range outside its
/// memory is a trap, never a host panic.
fn read(
    caller: &Caller<'_, Guest>,
    memory: Memory,
    ptr: i32,
    len: i32,
) -> wasmtime::Result<Vec<u8>> {
    let start = usize::try_from(ptr).ok();
    let end = start
        .zip(usize::try_from(len).ok())
        .and_then(|(s, l)| s.checked_add(l));
    start
        .zip(end)
        .and_then(|(start, end)| memory.data(caller).get(start..end))
        .map(<[u8]>::to_vec)
        .ok_or_else(|| format_err!("the guest passed bytes {ptr}+{len}, outside its memory"))
}

fn write(
    caller: &mut Caller<'_, Guest>,
    memory: Memory,
    ptr: i32,
    bytes: &[u8],
) -> wasmtime::Result<()> {
    let offset = usize::try_from(ptr)
        .map_err(|_| format_err!("the guest passed a negative pointer {ptr}"))?;
    memory
        .write(caller, offset, bytes)
        .map_err(|e| format_err!("cannot write {} bytes at {ptr}: {e}", bytes.len()))
}

fn text(bytes: &[u8]) -> wasmtime::Result<String> {
    String::from_utf8(bytes.to_vec())
        .map_err(|e| format_err!("the guest passed text that is not UTF-8: {e}"))
}

fn length(len: usize) -> wasmtime::Result<i32> {
    i32::try_from(len).map_err(|_| format_err!("{len} bytes do not fit waPC's i32 length"))
}
