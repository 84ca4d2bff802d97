//! Build-time pre-initialisation of policy modules with Wizer.
//!
//! policy-server evaluates every request in a fresh instance, so whatever a
//! policy prepares lazily (values-schema's compiled schemas) would be
//! prepared again for each request. A module that exports
//! `wizer-initialize` (`shared::policy!` with `init = …`) is instead run
//! once here, and the memory and globals it leaves become the data of a new
//! module: every instance starts prepared.
//!
//! The initialisation runs in our own wasmtime engine, so the build needs no
//! second copy of wasmtime. It gets no WASI beyond `random_get`, which
//! answers fixed bytes: the snapshot (hash keys included) is the same on
//! every build, as reproducible builds need. Any other import traps, and the
//! trap names it.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use wasmtime::{Caller, Engine, Extern, Instance, Linker, Module, Store, Val};
use wasmtime_wizer::{InstanceState, SnapshotVal, ValType, Wizer};

/// The export Wizer runs and then removes (its default name).
pub const INIT_EXPORT: &str = "wizer-initialize";

/// Why a module could not be pre-initialised. wasmtime's errors are shown
/// with their whole chain: the cause of a trap (which import) is at its end.
#[derive(Debug, thiserror::Error)]
pub enum PreinitError {
    #[error(transparent)]
    Parse(#[from] bundle::wasm_sections::SectionError),
    #[error("instrumenting the module for Wizer: {0:#}")]
    Instrument(wasmtime::Error),
    #[error("running `{INIT_EXPORT}`: {0:#}")]
    Initialise(wasmtime::Error),
    #[error("snapshotting the initialised module: {0:#}")]
    Snapshot(wasmtime::Error),
    /// The snapshot waited on something; ours never does.
    #[error("the snapshot did not complete synchronously")]
    Pending,
}

/// Whether `wasm` exports Wizer's initialisation function.
pub fn wants_preinit(wasm: &[u8]) -> Result<bool, PreinitError> {
    Ok(bundle::wasm_sections::exports(wasm, INIT_EXPORT)?)
}

/// Runs the module's `wizer-initialize` once and returns the module with
/// the state it left, without that export.
pub fn preinitialize(wasm: &[u8]) -> Result<Vec<u8>, PreinitError> {
    let mut wizer = Wizer::new();
    wizer.init_func(INIT_EXPORT);
    let (context, instrumented) = wizer.instrument(wasm).map_err(PreinitError::Instrument)?;
    let engine = Engine::default();
    let module = Module::new(&engine, &instrumented).map_err(PreinitError::Initialise)?;
    let mut store = Store::new(&engine, ());
    let instance = instantiate(&mut store, &module).map_err(PreinitError::Initialise)?;
    // A WASI reactor runs its constructors in `_initialize` first.
    for export in ["_initialize", INIT_EXPORT] {
        if let Ok(init) = instance.get_typed_func::<(), ()>(&mut store, export) {
            init.call(&mut store, ())
                .map_err(PreinitError::Initialise)?;
        }
    }
    let mut state = Initialised {
        store: &mut store,
        instance,
    };
    let snapshot = wizer.snapshot(context, &mut state);
    match pin!(snapshot).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => result.map_err(PreinitError::Snapshot),
        Poll::Pending => Err(PreinitError::Pending),
    }
}

/// The instance with a deterministic `random_get` and every other import a
/// trap.
fn instantiate(store: &mut Store<()>, module: &Module) -> wasmtime::Result<Instance> {
    let mut linker = Linker::new(store.engine());
    linker.func_wrap(
        "wasi_snapshot_preview1",
        "random_get",
        |mut caller: Caller<'_, ()>, buffer: i32, length: i32| -> i32 {
            fill_fixed(&mut caller, buffer, length)
        },
    )?;
    linker.define_unknown_imports_as_traps(module)?;
    linker.instantiate(store, module)
}

/// WASI errno values `random_get` answers with.
const ERRNO_SUCCESS: i32 = 0;
const ERRNO_FAULT: i32 = 21;

/// Fills the guest's buffer with a fixed sequence.
fn fill_fixed(caller: &mut Caller<'_, ()>, buffer: i32, length: i32) -> i32 {
    let Some(Extern::Memory(memory)) = caller.get_export("memory") else {
        return ERRNO_FAULT;
    };
    // wasm32 addresses are unsigned 32-bit values carried in an i32.
    let (Ok(start), Ok(length)) = (
        usize::try_from(buffer.cast_unsigned()),
        usize::try_from(length.cast_unsigned()),
    ) else {
        return ERRNO_FAULT;
    };
    let Some(bytes) = memory
        .data_mut(caller)
        .get_mut(start..start.saturating_add(length))
    else {
        return ERRNO_FAULT;
    };
    for (byte, step) in bytes.iter_mut().zip((0..=u8::MAX).cycle()) {
        *byte = step.wrapping_mul(151).wrapping_add(17);
    }
    ERRNO_SUCCESS
}

/// What Wizer reads back from the initialised instance.
struct Initialised<'a> {
    store: &'a mut Store<()>,
    instance: Instance,
}

// Wizer's trait has no way to report an error: it asks only for what its
// own instrumentation exported, so a miss is a bug in Wizer, as in its own
// implementation.
#[allow(clippy::panic)]
impl InstanceState for Initialised<'_> {
    async fn global_get(&mut self, name: &str, _: ValType) -> SnapshotVal {
        // Wizer asks only for the globals its instrumentation exported, with
        // the value types it declared: anything else is a bug in Wizer.
        let global = self
            .instance
            .get_global(&mut *self.store, name)
            .unwrap_or_else(|| panic!("Wizer asked for a global `{name}` the module lacks"));
        match global.get(&mut *self.store) {
            Val::I32(x) => SnapshotVal::I32(x),
            Val::I64(x) => SnapshotVal::I64(x),
            Val::F32(x) => SnapshotVal::F32(x),
            Val::F64(x) => SnapshotVal::F64(x),
            Val::V128(x) => SnapshotVal::V128(x.as_u128()),
            other => panic!("Wizer cannot snapshot the global `{name}` ({other:?})"),
        }
    }

    async fn memory_contents(&mut self, name: &str, contents: impl FnOnce(&[u8]) + Send) {
        let memory = self
            .instance
            .get_memory(&mut *self.store, name)
            .unwrap_or_else(|| panic!("Wizer asked for a memory `{name}` the module lacks"));
        contents(memory.data(&*self.store));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A guest whose initialisation draws random bytes into memory and
    /// counts in a global: both must be in the snapshot.
    const GUEST: &str = r#"
        (module
          (import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))
          (import "wapc" "__host_call" (func $host (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (global $calls (export "calls") (mut i32) (i32.const 0))
          (func (export "wizer-initialize")
            (drop (call $random (i32.const 16) (i32.const 4)))
            (global.set $calls (i32.add (global.get $calls) (i32.const 1))))
          (func (export "reach_host") (result i32)
            (call $host (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0)
                        (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0))))
    "#;

    fn initialised() -> Vec<u8> {
        let wasm = wat::parse_str(GUEST).expect("the test guest is valid WAT");
        assert!(wants_preinit(&wasm).expect("a module"));
        preinitialize(&wasm).expect("pre-initialised")
    }

    #[test]
    fn snapshot_keeps_state_and_drops_the_init_export() {
        let wasm = initialised();
        assert!(!wants_preinit(&wasm).expect("a module"));
        let engine = Engine::default();
        let module = Module::new(&engine, &wasm).expect("a valid module");
        let mut store = Store::new(&engine, ());
        let mut linker = Linker::new(&engine);
        linker
            .define_unknown_imports_as_traps(&module)
            .expect("imports");
        let instance = linker.instantiate(&mut store, &module).expect("instance");
        let calls = instance.get_global(&mut store, "calls").expect("global");
        assert_eq!(calls.get(&mut store).i32(), Some(1));
        let memory = instance.get_memory(&mut store, "memory").expect("memory");
        assert_eq!(&memory.data(&store)[16..20], &[17, 168, 63, 214]);
    }

    #[test]
    fn snapshots_are_reproducible() {
        assert_eq!(initialised(), initialised());
    }

    #[test]
    fn other_imports_trap_with_their_name() {
        let guest = GUEST.replace(
            "(global.set $calls",
            "(drop (call $reach_host)) (global.set $calls",
        );
        let guest = guest.replace(
            "(func (export \"reach_host\")",
            "(func $reach_host (export \"reach_host\")",
        );
        let wasm = wat::parse_str(&guest).expect("valid WAT");
        let error = preinitialize(&wasm).expect_err("the host call traps");
        assert!(format!("{error:#}").contains("__host_call"), "{error:#}");
    }
}
