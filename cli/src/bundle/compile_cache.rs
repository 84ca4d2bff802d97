//! Compiled modules kept between runs (`check --no-compile-cache` opts
//! out): compiling the bundle is most of a small check's time, and the same
//! modules are compiled again on every run otherwise. wasmtime's own cache
//! does the keeping, keyed by the module's bytes and the compiler's version
//! and settings.

use std::path::PathBuf;

use anyhow::Result;

use crate::cache;

/// Where compiled modules are kept: `compiled/` of the user's cache
/// directory for this program.
pub fn dir() -> Result<PathBuf> {
    Ok(cache::dir()?.join("compiled"))
}

/// Turns the cache on for this process. A cache that cannot be used (no
/// home, a read-only directory) costs only time, so it is a warning and the
/// check goes on compiling afresh.
pub fn enable() {
    let enabled = dir().and_then(|dir| Ok(host::cache_compiled_modules(&dir)?));
    if let Err(e) = enabled {
        eprintln!(
            "warning: compiled modules are not cached ({e:#}); set XDG_CACHE_HOME to a writable directory, or pass --no-compile-cache"
        );
    }
}
