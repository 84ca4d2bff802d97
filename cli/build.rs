//! Embeds the annotated modules of a release into the CLI, the second stage
//! of the two-stage build (CONTRIBUTING.md: "Building the CLI").
//!
//! The first stage (`make dist`) builds the CLI without modules and lets it
//! annotate cargo's wasm artifacts into `dist/`; annotating needs the CLI's
//! own wasm host, which is why the modules cannot be made by this script.
//! With `COZYSTACK_POLICIES_DIST` naming such a directory, this script
//! includes every policy's module from it, so the binary checks manifests
//! anywhere with no other files. Without it the binary embeds nothing and
//! looks for `dist/` in a clone, as before.

use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const DIST_VAR: &str = "COZYSTACK_POLICIES_DIST";

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo::rerun-if-env-changed={DIST_VAR}");
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let workspace = manifest_dir.parent().ok_or("cli/ has no parent")?;
    let modules = match std::env::var_os(DIST_VAR).filter(|v| !v.is_empty()) {
        Some(dist) => embedded_modules(&workspace.join(dist), &policy_names(workspace)?)?,
        None => Vec::new(),
    };
    let mut source = String::from(
        "/// The annotated modules embedded at build time, by policy name.\n\
         pub static MODULES: &[(&str, &[u8])] = &[\n",
    );
    for (name, path) in &modules {
        println!("cargo::rerun-if-changed={}", path.display());
        writeln!(
            source,
            "    ({name:?}, include_bytes!({:?})),",
            path.display()
        )?;
    }
    source.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("embedded_modules.rs");
    std::fs::write(&out, source)?;
    Ok(())
}

/// The policies of the workspace, sorted, so a dist/ missing one fails the
/// build.
fn policy_names(workspace: &Path) -> Result<Vec<String>, Box<dyn Error>> {
    println!(
        "cargo::rerun-if-changed={}",
        workspace.join(layout::POLICIES).display()
    );
    Ok(layout::policy_names(workspace)?)
}

/// The module of each policy in `dist`, absolute for `include_bytes!`.
fn embedded_modules(
    dist: &Path,
    policies: &[String],
) -> Result<Vec<(String, PathBuf)>, Box<dyn Error>> {
    let dist = dist
        .canonicalize()
        .map_err(|e| format!("{DIST_VAR}={}: {e}", dist.display()))?;
    policies
        .iter()
        .map(|name| {
            let path = dist.join(format!("{name}.wasm"));
            if path.is_file() {
                Ok((name.clone(), path))
            } else {
                Err(format!(
                    "{DIST_VAR}: {} is missing; run `make dist` first",
                    path.display()
                )
                .into())
            }
        })
        .collect()
}
