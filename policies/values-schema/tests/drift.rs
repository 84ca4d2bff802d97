//! The committed `schemas/` are what the generator makes of the release
//! files (`make schemas`). Skipped, visibly, where the release files are not
//! next to the repository (`../shared/data`).

use reading::yaml::{self, Limit};
use std::path::Path;

#[test]
fn committed_schemas_match_the_release_files() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = crate_dir.join("../../../shared/data");
    if !data.is_dir() {
        println!(
            "skipped: {} not found, the committed schemas were not compared with the release files",
            data.display()
        );
        return;
    }
    let yaml = |text: &str| {
        yaml::document::<serde_json::Value>(text, Limit::Cases).map_err(|e| e.to_string())
    };
    let files =
        values_schema::generate::generate_from(&data, &crate_dir.join("schemas"), &yaml).unwrap();
    let mut stale = Vec::new();
    for (path, contents) in &files {
        match std::fs::read_to_string(crate_dir.join(path)) {
            Ok(committed) if committed == *contents => {}
            Ok(_) => stale.push(format!("{path} differs")),
            Err(error) => stale.push(format!("{path}: {error}")),
        }
    }
    // No schema file the generator would not write.
    for version in std::fs::read_dir(crate_dir.join("schemas"))
        .unwrap()
        .flatten()
    {
        if !version.path().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(version.path()).unwrap().flatten() {
            if file.file_name() == values_schema::generate::NULLS {
                continue;
            }
            let relative = format!(
                "schemas/{}/{}",
                version.file_name().to_string_lossy(),
                file.file_name().to_string_lossy()
            );
            if !files.iter().any(|(path, _)| *path == relative) {
                stale.push(format!("{relative} is not generated any more"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "schemas/ is out of date, run `make schemas`:\n{}",
        stale.join("\n")
    );
}
