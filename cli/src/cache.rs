//! The user's cache directory for this program: modules pulled from a
//! registry ([`crate::oci::pull`]) and compiled modules
//! ([`crate::bundle::compile_cache`]).

use std::path::PathBuf;

use anyhow::{Context, Result};

/// `$XDG_CACHE_HOME/cozystack-policies`, else
/// `~/.cache/cozystack-policies`.
pub fn dir() -> Result<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(
            std::env::var_os("HOME").context("neither XDG_CACHE_HOME nor HOME is set")?,
        )
        .join(".cache"),
    };
    Ok(base.join("cozystack-policies"))
}
