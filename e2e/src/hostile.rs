//! The hostile requests of every policy (`testkit::hostile`) for the suites
//! that hand them to Kubewarden's programs: policy-server takes the body
//! over HTTP, `kwctl run` takes it from a file, so each is written out as
//! the exact bytes under `target/hostile/<policy>/`.

use std::path::PathBuf;

use serde_json::Value;
use testkit::hostile::HostileCase;
use wasm_meta::Metadata;

/// Every hostile case of every policy.
pub fn cases() -> Result<Vec<HostileCase>, String> {
    let mut all = Vec::new();
    for policy in crate::policies()? {
        let dir = crate::root()
            .join("policies")
            .join(&policy)
            .join("tests/cases");
        all.extend(testkit::hostile::cases(&policy, &dir).map_err(|e| e.with_causes())?);
    }
    Ok(all)
}

/// The settings the case runs with (`{}` when it gives none), as the
/// policy ids of the suites are keyed.
pub fn settings(case: &HostileCase) -> Value {
    case.case.settings()
}

/// Writes the case's body, byte for byte, to
/// `target/hostile/<policy>/<name>.json` (a `wrong-type/<path>` name is a
/// folder and a file) and returns the path. The files are not committed:
/// the largest are megabytes.
pub fn write_request(case: &HostileCase) -> Result<PathBuf, String> {
    let path = crate::root()
        .join("target/hostile")
        .join(&case.policy)
        .join(format!("{}.json", case.name));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&path, &case.body).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Whether the policy's rules (its module's metadata) match the case's
/// request, as `testkit::case::judge` asks; a body that does not decode is
/// taken as matching, since only a refusal is right for it.
pub fn matches_rules(metadata: Option<&Metadata>, case: &HostileCase) -> bool {
    match (metadata, case.case.admission_request()) {
        (Some(metadata), Ok(request)) => metadata.matches(&request),
        _ => true,
    }
}
