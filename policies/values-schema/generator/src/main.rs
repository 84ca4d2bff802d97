//! `make schemas`: writes values-schema's `schemas/` (the chart schemas and
//! `index.json`) from the releases of `releases/` and their files.
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
    let root = crate_dir.join("../../..");
    let data = std::env::args_os()
        .nth(1)
        .map_or_else(|| root.join(releases::DATA_DIR), PathBuf::from);
    let schemas = crate_dir.join("../schemas");
    match values_schema_generator::write(&root, &data, &schemas) {
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
