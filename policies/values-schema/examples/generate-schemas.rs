//! `make schemas`: writes `schemas/` from Cozystack's release files.
//!
//! ```sh
//! cargo run --release -p values-schema --example generate-schemas [DATA_DIR]
//! ```
//!
//! `DATA_DIR` defaults to `../shared/data` next to the repository
//! (`cozystack-<version>/apps/*/values.schema.json` and
//! `cozystack-<version>/application-definitions/*.yaml`). Files the generator
//! no longer makes are removed; `tests/drift.rs` checks the result.

use reading::yaml::{self, Limit};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = std::env::args_os()
        .nth(1)
        .map_or_else(|| crate_dir.join("../../../shared/data"), PathBuf::from);
    let yaml = |text: &str| {
        yaml::document::<serde_json::Value>(text, Limit::Cases).map_err(|e| e.to_string())
    };
    let schemas = crate_dir.join("schemas");
    let files = match values_schema::generate::generate_from(&data, &schemas, &yaml) {
        Ok(files) => files,
        Err(error) => {
            eprintln!("generate-schemas: {error}");
            return ExitCode::FAILURE;
        }
    };
    // Stale schema files of a release or chart no longer shipped.
    if let Ok(versions) = std::fs::read_dir(&schemas) {
        for version in versions.flatten().filter(|e| e.path().is_dir()) {
            for file in std::fs::read_dir(version.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let relative = format!(
                    "schemas/{}/{}",
                    version.file_name().to_string_lossy(),
                    file.file_name().to_string_lossy()
                );
                if file.file_name() != values_schema::generate::NULLS
                    && !files.iter().any(|(path, _)| *path == relative)
                    && let Err(error) = std::fs::remove_file(file.path())
                {
                    eprintln!("generate-schemas: cannot remove {relative}: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    let mut bytes = 0;
    for (path, contents) in &files {
        let target = crate_dir.join(path);
        if let Some(parent) = target.parent()
            && let Err(error) = std::fs::create_dir_all(parent)
        {
            eprintln!(
                "generate-schemas: cannot create {}: {error}",
                parent.display()
            );
            return ExitCode::FAILURE;
        }
        if let Err(error) = std::fs::write(&target, contents) {
            eprintln!("generate-schemas: cannot write {path}: {error}");
            return ExitCode::FAILURE;
        }
        bytes += contents.len();
    }
    println!(
        "generate-schemas: wrote {} files ({bytes} bytes) from {}",
        files.len(),
        data.display()
    );
    ExitCode::SUCCESS
}
