//! Writes the playground's case list (every case of every policy, as the
//! page's editors show it) to the JSON file named by the only argument.
//! Run from the root of the checkout (`make playground` does).

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: export-cases OUT.json");
        return ExitCode::from(2);
    };
    let written = cozystack_playground::cases::read(std::path::Path::new("."))
        .and_then(|policies| serde_json::to_string(&policies).map_err(|e| e.to_string()))
        .and_then(|json| std::fs::write(&out, json).map_err(|e| format!("{out}: {e}")));
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("export-cases: {error}");
            ExitCode::FAILURE
        }
    }
}
