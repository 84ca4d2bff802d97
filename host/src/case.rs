//! Test cases as data: one YAML file per case.
//!
//! ```yaml
//! description: DELETE of a labelled ConfigMap is blocked
//! settings: {}                 # optional, the policy settings
//! request: {...}               # AdmissionRequest or AdmissionReview, as `kwctl run -r` takes it
//! session: []                  # optional, host-capability exchanges in kwctl's replay format
//! expect:
//!   result: fail               # pass | warn | fail | skip | invalid-settings
//!   code: 403                  # optional
//!   message: [Deletion blocked] # fragments the rejection (or settings) message must contain
//!   warnings: []               # fragments, each found in some warning
//!   hostCalls: 1               # optional, capability calls the policy must make
//! ```
//!
//! The results borrow the vocabulary of `kyverno test` and the `kwctl test`
//! proposal: `pass` (allowed, no warnings), `warn` (allowed with
//! warnings), `fail` (rejected), `skip` (the policy's rules do not match
//! the request, so a cluster never sends it; the policy must still allow
//! it, as `kwctl run` would call it anyway), and `invalid-settings`
//! (`validate_settings` refuses the settings).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::admission::{AdmissionRequest, AdmissionResponse};
use crate::capabilities::HostCapabilities;
use crate::policy::{HostError, PolicyModule};
use crate::replay::{Session, SessionEntry};

/// What a case expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    Warn,
    Fail,
    Skip,
    InvalidSettings,
}

/// The expectation block of a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expectation {
    pub result: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_calls: Option<usize>,
}

/// One case file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Case {
    pub description: String,
    #[serde(default)]
    pub settings: Value,
    pub request: Value,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session: Vec<SessionEntry>,
    pub expect: Expectation,
    /// Marks the request `cozystack-policies bench` times for this policy
    /// (one case per policy).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub benchmark: bool,
}

/// A case file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    #[error("cannot read {path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: {error}")]
    Yaml {
        path: PathBuf,
        error: serde_yaml::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl Case {
    /// Reads and checks a case file.
    pub fn load(path: &Path) -> Result<Self, CaseError> {
        let text = std::fs::read_to_string(path).map_err(|error| CaseError::Io {
            path: path.to_owned(),
            error,
        })?;
        let case: Case = serde_yaml::from_str(&text).map_err(|error| CaseError::Yaml {
            path: path.to_owned(),
            error,
        })?;
        case.check().map_err(|message| CaseError::Invalid {
            path: path.to_owned(),
            message,
        })?;
        Ok(case)
    }

    /// A case must assert something that can fail: rejections and refused
    /// settings name message fragments, warnings name warning fragments.
    fn check(&self) -> Result<(), String> {
        let expect = &self.expect;
        match expect.result {
            Outcome::Fail | Outcome::InvalidSettings if expect.message.is_empty() => {
                Err("a `fail` or `invalid-settings` case must list message fragments".to_owned())
            }
            Outcome::Warn if expect.warnings.is_empty() => {
                Err("a `warn` case must list warning fragments".to_owned())
            }
            Outcome::Pass | Outcome::Skip
                if !expect.warnings.is_empty() || !expect.message.is_empty() =>
            {
                Err("a `pass` or `skip` case has no message or warnings to match".to_owned())
            }
            _ => Ok(()),
        }
    }

    /// The request, as the host forwards it.
    pub fn admission_request(&self) -> Result<AdmissionRequest, String> {
        AdmissionRequest::from_value(self.request.clone()).map_err(|e| e.to_string())
    }

    /// Runs the case against a module; `Err` says what differed.
    pub fn run(&self, module: &PolicyModule) -> Result<(), String> {
        let policy = match module.configure(self.settings.clone()) {
            Ok(policy) => policy,
            Err(HostError::InvalidSettings { message }) => {
                return match self.expect.result {
                    Outcome::InvalidSettings => {
                        contains_all("settings message", &message, &self.expect.message)
                    }
                    _ => Err(format!("settings were refused: {message}")),
                };
            }
            Err(other) => return Err(other.to_string()),
        };
        if self.expect.result == Outcome::InvalidSettings {
            return Err(
                "settings were accepted, but the case expects them to be refused".to_owned(),
            );
        }
        let request = self.admission_request()?;
        let session = Session::from_entries(&self.session).map_err(|e| e.to_string())?;
        let evaluation = policy.evaluate(&request, HostCapabilities::Replay(session));
        if let Some(expected) = self.expect.host_calls
            && evaluation.host_calls.len() != expected
        {
            return Err(format!(
                "expected {expected} host call(s), the policy made {}: {:?}",
                evaluation.host_calls.len(),
                evaluation
                    .host_calls
                    .iter()
                    .map(|c| c.describe())
                    .collect::<Vec<_>>()
            ));
        }
        if evaluation.unused_exchanges > 0 {
            return Err(format!(
                "{} recorded exchange(s) were never asked for",
                evaluation.unused_exchanges
            ));
        }
        let matches_rules = module.metadata().is_none_or(|m| m.matches(&request));
        self.judge(&evaluation.response, matches_rules)
    }

    fn judge(&self, response: &AdmissionResponse, matches_rules: bool) -> Result<(), String> {
        let expect = &self.expect;
        let warnings = response.warnings();
        let message = response.message().unwrap_or_default();
        let describe = || {
            format!(
                "allowed={} code={:?} message={message:?} warnings={warnings:?}",
                response.allowed,
                response.code()
            )
        };
        match expect.result {
            Outcome::Pass | Outcome::Skip | Outcome::Warn if !response.allowed => {
                return Err(format!(
                    "expected the request to be allowed, got {}",
                    describe()
                ));
            }
            Outcome::Fail if response.allowed => {
                return Err(format!("expected a rejection, got {}", describe()));
            }
            Outcome::Pass | Outcome::Skip if !warnings.is_empty() => {
                return Err(format!("expected no warnings, got {}", describe()));
            }
            Outcome::Warn if warnings.is_empty() => {
                return Err(format!("expected warnings, got {}", describe()));
            }
            _ => {}
        }
        match (expect.result, matches_rules) {
            (Outcome::Skip, true) => {
                return Err("expected the policy's rules not to match this request".to_owned());
            }
            (Outcome::Pass | Outcome::Warn | Outcome::Fail, false) => {
                return Err(
                    "the policy's rules do not match this request: the case should expect `skip`"
                        .to_owned(),
                );
            }
            _ => {}
        }
        if let Some(code) = expect.code
            && response.code() != Some(code)
        {
            return Err(format!("expected code {code}, got {}", describe()));
        }
        contains_all("message", message, &expect.message)?;
        for fragment in &expect.warnings {
            if !warnings.iter().any(|w| w.contains(fragment.as_str())) {
                return Err(format!("no warning contains {fragment:?}: {}", describe()));
            }
        }
        Ok(())
    }
}

fn contains_all(what: &str, text: &str, fragments: &[String]) -> Result<(), String> {
    match fragments.iter().find(|f| !text.contains(f.as_str())) {
        Some(missing) => Err(format!("{what} does not contain {missing:?}: {text:?}")),
        None => Ok(()),
    }
}

/// Every case file under `dir`, sorted.
pub fn case_files(dir: &Path) -> Result<Vec<PathBuf>, std::io::Error> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    Ok(files)
}

/// The case in `dir` marked `benchmark: true`, with its file stem: the
/// request `cozystack-policies bench` times. Exactly one must be marked.
pub fn benchmark_case(dir: &Path) -> Result<(String, Case), CaseError> {
    let files = case_files(dir).map_err(|error| CaseError::Io {
        path: dir.to_path_buf(),
        error,
    })?;
    let mut marked = Vec::new();
    for file in files {
        let case = Case::load(&file)?;
        if case.benchmark {
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            marked.push((name, case));
        }
    }
    <[_; 1]>::try_from(marked)
        .map(|[only]| only)
        .map_err(|marked| CaseError::Invalid {
            path: dir.to_path_buf(),
            message: format!(
                "{} cases are marked `benchmark: true`; mark exactly one",
                marked.len()
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_case_is_the_benchmark() {
        let dir = std::env::temp_dir().join(format!("benchmark-case-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, marked: bool| {
            let mark = if marked { "benchmark: true\n" } else { "" };
            let text = format!(
                "description: {name}\nrequest: {{uid: u, operation: CREATE}}\nexpect: {{result: pass}}\n{mark}"
            );
            std::fs::write(dir.join(format!("{name}.yaml")), text).unwrap();
        };
        write("a", false);
        let none = benchmark_case(&dir).unwrap_err().to_string();
        assert!(
            none.ends_with("0 cases are marked `benchmark: true`; mark exactly one"),
            "{none}"
        );
        write("b", true);
        let (name, case) = benchmark_case(&dir).unwrap();
        assert_eq!((name.as_str(), case.description.as_str()), ("b", "b"));
        write("c", true);
        let two = benchmark_case(&dir).unwrap_err().to_string();
        assert!(two.contains("2 cases are marked"), "{two}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn case(result: &str, message: &[&str]) -> Case {
        serde_yaml::from_str(&format!(
            "description: x\nrequest: {{}}\nexpect:\n  result: {result}\n  message: {message:?}\n"
        ))
        .unwrap()
    }

    fn response(allowed: bool, message: Option<&str>, warnings: &[&str]) -> AdmissionResponse {
        AdmissionResponse {
            uid: "u".into(),
            allowed,
            status: message.map(|m| crate::admission::Status {
                message: Some(m.into()),
                code: Some(403),
            }),
            audit_annotations: None,
            warnings: (!warnings.is_empty())
                .then(|| warnings.iter().map(|w| (*w).to_owned()).collect()),
        }
    }

    #[test]
    fn cases_that_assert_nothing_are_refused() {
        assert!(case("fail", &[]).check().is_err());
        assert!(case("pass", &["x"]).check().is_err());
        assert!(case("fail", &["x"]).check().is_ok());
    }

    #[test]
    fn judges_each_outcome() {
        let fail = case("fail", &["blocked"]);
        assert!(
            fail.judge(&response(false, Some("Deletion blocked"), &[]), true)
                .is_ok()
        );
        assert!(
            fail.judge(&response(false, Some("other"), &[]), true)
                .is_err()
        );
        assert!(fail.judge(&response(true, None, &[]), true).is_err());
        let pass = case("pass", &[]);
        assert!(pass.judge(&response(true, None, &[]), true).is_ok());
        assert!(pass.judge(&response(true, None, &["w"]), true).is_err());
        assert!(pass.judge(&response(true, None, &[]), false).is_err());
        let skip = case("skip", &[]);
        assert!(skip.judge(&response(true, None, &[]), false).is_ok());
        assert!(skip.judge(&response(true, None, &[]), true).is_err());
    }
}
