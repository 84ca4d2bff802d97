//! Seeds, the dictionary and reproducers: what `FUZZ_SEEDS_TO`,
//! `FUZZ_DICT_TO` and `FUZZ_CASE_TO` write.

use std::path::{Path, PathBuf};

use admission::AdmissionRequest;
use arbitrary::{Result as ArbResult, Unstructured};
use capabilities::HostCapabilities;
use serde_json::{Value, json};
use testkit::case::{Case, Expectation, ExpectedResult, SettingsAnswer};

use crate::target::{Target, target};

/// Handles `FUZZ_SEEDS_TO` and `FUZZ_DICT_TO` for `kind` (`rule`, `payload`
/// or `settings`): writes and exits. Called from each target's `init`.
pub fn init(kind: &str) {
    let t = target();
    let mut exit = false;
    if let Some(dir) = std::env::var_os("FUZZ_SEEDS_TO") {
        let dir = PathBuf::from(dir);
        let written = write_seeds(t, kind, &dir).unwrap_or_else(|e| {
            eprintln!("cannot write seeds to {}: {e}", dir.display());
            std::process::exit(2)
        });
        eprintln!(
            "{kind}/{}: {written} seeds in {}",
            t.policy.name(),
            dir.display()
        );
        exit = true;
    }
    if let Some(file) = std::env::var_os("FUZZ_DICT_TO") {
        if let Err(e) = write_dict(t, Path::new(&file)) {
            eprintln!("cannot write the dictionary: {e}");
            std::process::exit(2)
        }
        exit = true;
    }
    if exit {
        std::process::exit(0);
    }
}

fn write_seeds(t: &Target, kind: &str, dir: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    match kind {
        "rule" => {
            // For each case, the shortest input that picks it unchanged.
            let n = t.seeds.len();
            inputs.extend(shortest_picks(n, |u| u.choose_index(n)));
        }
        "payload" => {
            for seed in &t.seeds {
                if let Ok(request) = seed.case.admission_request() {
                    let settings = match &seed.case.settings {
                        Value::Null => json!({}),
                        s => s.clone(),
                    };
                    let payload = json!({"request": request, "settings": settings});
                    inputs.push(serde_json::to_vec(&payload).unwrap_or_default());
                }
            }
        }
        _ => {
            inputs.push(b"{}".to_vec());
            for seed in &t.seeds {
                if !seed.case.settings.is_null() {
                    inputs.push(serde_json::to_vec(&seed.case.settings).unwrap_or_default());
                }
            }
        }
    }
    inputs.sort();
    inputs.dedup();
    for (i, input) in inputs.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{kind}-{i:04}")), input)?;
    }
    Ok(inputs.len())
}

/// For each `0..n`, the shortest input (up to three bytes) for which `pick`
/// returns it: the inputs that select each case with no mutation after.
pub(crate) fn shortest_picks(
    n: usize,
    pick: impl Fn(&mut Unstructured<'_>) -> ArbResult<usize>,
) -> Vec<Vec<u8>> {
    let mut found = vec![None; n];
    let candidates = (0..=u8::MAX)
        .map(|b| vec![b])
        .chain((0..=u16::MAX).map(|v| v.to_be_bytes().to_vec()))
        .chain((0..1u32 << 24).map(|v| v.to_be_bytes()[1..].to_vec()));
    for input in candidates {
        let mut u = Unstructured::new(&input);
        if let Ok(i) = pick(&mut u)
            && let Some(slot @ None) = found.get_mut(i)
        {
            *slot = Some(input);
        }
        if found.iter().all(Option::is_some) {
            break;
        }
    }
    found.into_iter().flatten().collect()
}

/// libFuzzer's dictionary: the cases' keys and strings, quoted as JSON.
fn write_dict(t: &Target, file: &Path) -> std::io::Result<()> {
    write_dict_strings(&t.dict, file)
}

/// A dictionary of these strings and JSON's tokens.
pub(crate) fn write_dict_strings(dict: &[String], file: &Path) -> std::io::Result<()> {
    let mut out = String::new();
    for s in dict {
        let quoted = Value::String(s.clone()).to_string();
        if quoted.len() > 64 || !quoted.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            continue;
        }
        let escaped = quoted.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("\"{escaped}\"\n"));
    }
    for token in [
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "null",
        "true",
        "false",
        "\"request\"",
        "\"settings\"",
        "\"object\"",
        "\"oldObject\"",
    ] {
        let escaped = token.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("\"{escaped}\"\n"));
    }
    std::fs::write(file, out)
}

/// Writes the input as a YAML case whose `expect` is today's answer: edit
/// `expect` to what the policy should answer, and the case fails until the
/// policy does.
pub(crate) fn write_case(t: &Target, to: &Path, request: Value, settings: Value, seed: usize) {
    let native = t.policy.native();
    let expect = match (
        native.validate_settings(&settings),
        AdmissionRequest::from_value(request.clone()),
    ) {
        (Ok(SettingsAnswer::Refused(message)), _) => Expectation {
            result: ExpectedResult::InvalidSettings,
            code: None,
            message: vec![first_line(&message)],
            warnings: vec![],
            ..Expectation::default()
        },
        (_, Ok(admission)) => {
            let session = t.seeds[seed].session.clone();
            let evaluation =
                native.evaluate(&admission, &settings, HostCapabilities::Replay(session));
            let response = evaluation.response;
            let warnings: Vec<String> = response.warnings().iter().map(|w| first_line(w)).collect();
            let result = match (response.allowed, warnings.is_empty()) {
                (false, _) => ExpectedResult::Fail,
                (true, true) if !native.matches(&admission) => ExpectedResult::Skip,
                (true, true) => ExpectedResult::Pass,
                (true, false) => ExpectedResult::Warn,
            };
            Expectation {
                result,
                code: response.code(),
                message: response.message().map(first_line).into_iter().collect(),
                warnings,
                ..Expectation::default()
            }
        }
        (_, Err(e)) => {
            eprintln!(
                "not an AdmissionRequest ({}): no case written",
                testkit::with_causes(&e)
            );
            return;
        }
    };
    let case = Case {
        description: format!(
            "found by fuzzing (from {}); expect is what the policy answered, correct it",
            t.seeds[seed]
                .file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
        settings,
        request,
        session: t.seeds[seed].case.session.clone(),
        expect,
        runners: Default::default(),
        benchmark: false,
    };
    match serde_saphyr::to_string(&case) {
        Ok(text) => match std::fs::write(to, text) {
            Ok(()) => eprintln!("wrote {}", to.display()),
            Err(e) => eprintln!("cannot write {}: {e}", to.display()),
        },
        Err(e) => eprintln!("cannot write the case as YAML: {e}"),
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(120).collect()
}
