//! `make schemas`: writes values-schema's `schemas/` (the chart schemas and
//! `index.json`) from Cozystack's release files.
//!
//! ```sh
//! cargo run --release -p values-schema-generator [DATA_DIR]
//! ```
//!
//! `DATA_DIR` defaults to `../shared/data` next to the repository. Files
//! it no longer makes are removed; `tests/drift.rs` checks the result, and
//! the policy's build script turns it into the embedded trees.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = std::env::args_os()
        .nth(1)
        .map_or_else(|| crate_dir.join("../../../../shared/data"), PathBuf::from);
    let schemas = crate_dir.join("../schemas");
    match write(&data, &schemas) {
        Ok(bytes) => {
            println!(
                "generate-schemas: wrote {bytes} bytes from {}",
                data.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("generate-schemas: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Writes the files, removes the stale ones; the bytes written.
fn write(data: &Path, schemas: &Path) -> Result<usize, String> {
    let files = values_schema_generator::generate_from(data)?;
    for stale in values_schema_generator::stale(schemas, &files) {
        std::fs::remove_file(schemas.join(&stale))
            .map_err(|e| format!("cannot remove {stale}: {e}"))?;
    }
    let mut bytes = 0;
    for (path, contents) in &files {
        let target = schemas.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&target, contents).map_err(|e| format!("cannot write {path}: {e}"))?;
        bytes += contents.len();
    }
    Ok(bytes)
}
