//! Test cases as data, and how every runner's answer to them is judged:
//!
//! - [`case`]: one YAML file per case, judged the same way whichever
//!   runner evaluated it (native, our host, kwctl, policy-server);
//! - [`hostile`]: hostile requests built from each policy's cases, the
//!   same bytes for every runner, and [`front_door`]: what policy-server
//!   refuses of them before any policy runs;
//! - [`native`]: every case of a policy against its rule function, without
//!   wasm;
//! - [`rules`]: the rule ids a policy's findings may carry;
//! - [`settings_audit`]: every setting of a policy has a case that names it.
//!
//! The formats the cases use live in their own crates: admission requests
//! and responses in `admission`, recorded sessions and host calls in
//! `capabilities`, policy metadata in `wasm_meta`.

pub mod case;
pub mod front_door;
pub mod hostile;
pub mod native;
pub mod rules;
pub mod settings_audit;

/// An error and each of its causes on one line, `: `-separated, as
/// anyhow's `{:#}` prints them: for callers that keep errors as text.
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(error) = cause {
        text.push_str(": ");
        text.push_str(&error.to_string());
        cause = error.source();
    }
    text
}

/// A compiled module in wasmtime's on-disk cache: its path, bytes and
/// modification time. Printed as its path.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
pub struct Compiled(
    pub std::path::PathBuf,
    pub Vec<u8>,
    pub std::time::SystemTime,
);

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.display())
    }
}

/// The compiled modules a cache directory holds, in path order, for the
/// tests that tell a cache hit (nothing rewritten) from a compilation.
/// wasmtime's bookkeeping is left out: the `.stats` use counts its cache
/// worker writes in the background after a hit (through
/// `<name>.wip-atomic-write-stats`), and dot files such as the `.cleanup`
/// lock.
pub fn compiled_modules(cache: &std::path::Path) -> std::io::Result<Vec<Compiled>> {
    let mut found = Vec::new();
    let mut pending = vec![cache.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_none_or(|e| e != "stats")
                && !name.contains(".wip-")
                && !name.starts_with('.')
            {
                let modified = path.metadata()?.modified()?;
                let bytes = std::fs::read(&path)?;
                found.push(Compiled(path, bytes, modified));
            }
        }
    }
    found.sort();
    Ok(found)
}
