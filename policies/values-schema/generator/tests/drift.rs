//! The committed `schemas/` of values-schema are what `make schemas` makes
//! of the release files. Skipped, visibly, where the release files are not
//! next to the repository (`../shared/data`): the policy's own build and
//! tests need only what is committed.

use std::path::Path;

#[test]
fn committed_schemas_match_the_release_files() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir.join("../../..");
    let data = root.join(releases::DATA_DIR);
    if !data.is_dir() {
        println!(
            "skipped: {} not found, the committed schemas were not compared with the release files",
            data.display()
        );
        return;
    }
    let schemas = crate_dir.join("../schemas");
    let files = values_schema_generator::generate_from(&root, &data).unwrap();
    let mut stale: Vec<String> = Vec::new();
    for (path, contents) in &files {
        match std::fs::read_to_string(schemas.join(path)) {
            Ok(committed) if committed == *contents => {}
            Ok(_) => stale.push(format!("{path} differs")),
            Err(error) => stale.push(format!("{path}: {error}")),
        }
    }
    for path in values_schema_generator::stale(&schemas, &files) {
        stale.push(format!("{path} is not generated any more"));
    }
    assert!(
        stale.is_empty(),
        "values-schema's schemas/ is out of date, run `make schemas`:\n{}",
        stale.join("\n")
    );
}

/// Review tools fold what `make schemas` writes: the repository's
/// `.gitattributes` marks the folder generated.
#[test]
fn the_schemas_are_marked_generated() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let attributes = std::fs::read_to_string(root.join(".gitattributes")).unwrap();
    assert!(
        attributes
            .lines()
            .any(|line| line == "policies/values-schema/schemas/** linguist-generated=true"),
        "{attributes}"
    );
}
