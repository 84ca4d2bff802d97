//! Writes the chart schemas' static trees into `OUT_DIR` from the committed
//! `schemas/` (`index.json` and the charts' JSON, which `make schemas`
//! writes from the release files), for `src/schemas.rs` to include: the
//! module embeds trees, so a request parses no schema.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    println!("cargo::rerun-if-changed=schemas");
    let Some(out) = std::env::var_os("OUT_DIR") else {
        eprintln!("values-schema build: OUT_DIR is not set");
        return ExitCode::FAILURE;
    };
    let out = Path::new(&out);
    let files = match tree::write::trees(Path::new("schemas")) {
        Ok(files) => files,
        Err(error) => {
            eprintln!("values-schema build: {error}");
            return ExitCode::FAILURE;
        }
    };
    for (path, contents) in files {
        let target = out.join(&path);
        let written = target
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&target, contents));
        if let Err(error) = written {
            eprintln!(
                "values-schema build: cannot write {}: {error}",
                target.display()
            );
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
