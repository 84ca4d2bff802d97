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
//! runners:                     # optional, where one runner answers otherwise
//!   policy-server:
//!     because: it has no cluster and cannot replay the session
//!     result: warn
//!     warnings: [existence not checked]
//! ```
//!
//! Two results serve the hostile cases ([`crate::hostile`]), which are built
//! in code rather than written as files:
//!
//! ```yaml
//! expect:
//!   result: any                # allowed, or rejected with a code other than 500
//!   field: spec.users          # optional: a rejection's message names it
//! runners:
//!   policy-server:
//!     because: the body is above its 2 MB limit
//!     result: refused          # the runner refuses the request before any policy
//!     http: 413                # the HTTP status it answers
//!     body: [length limit exceeded] # fragments of the answer's body
//!   kwctl:
//!     because: it cannot parse the request file
//!     result: refused
//!     exit: 1                  # a runner without HTTP: its exit status
//!     body: [hex escape]       # fragments of its standard error
//! ```
//!
//! The results borrow the vocabulary of `kyverno test` and the `kwctl test`
//! proposal: `pass` (allowed, no warnings), `warn` (allowed with
//! warnings), `fail` (rejected), `skip` (the policy's rules do not match
//! the request, so a cluster's webhook never sends it; the policy must still
//! allow it, as `kwctl run` and audit-scanner call it anyway, with exactly
//! the warnings listed, if any), and `invalid-settings`
//! (`validate_settings` refuses the settings). `any` holds a hostile
//! request to what every answer owes (no 500, warnings within limits)
//! where its verdict is not the point; `refused` is a request a runner
//! turns away at its door (policy-server's body limit and JSON parser).

use reading::yaml::{self, Limit};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rules::KnownRules;
use admission::{AdmissionRequest, AdmissionResponse};
use capabilities::replay::{Session, SessionEntry};
use capabilities::{Evaluation, HostCapabilities};

/// What a case expects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExpectedResult {
    #[default]
    Pass,
    Warn,
    Fail,
    Skip,
    InvalidSettings,
    Any,
    Refused,
}

/// What evaluates a case: our host, Kubewarden's `kwctl run`, or
/// Kubewarden's policy-server over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Runner {
    Host,
    Kwctl,
    PolicyServer,
}

impl Runner {
    /// The name cases and suites use (`policy-server`).
    pub fn name(self) -> &'static str {
        match self {
            Runner::Host => "host",
            Runner::Kwctl => "kwctl",
            Runner::PolicyServer => "policy-server",
        }
    }
}

impl std::str::FromStr for Runner {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        [Runner::Host, Runner::Kwctl, Runner::PolicyServer]
            .into_iter()
            .find(|runner| runner.name() == name)
            .ok_or_else(|| format!("unknown runner {name:?}: host, kwctl or policy-server"))
    }
}

/// What one runner answers instead of the case's `expect`, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunnerExpectation {
    /// Why this runner differs (it has no cluster, it refuses the body...).
    pub because: String,
    #[serde(flatten)]
    pub expect: Expectation,
}

/// The expectation block of a case.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expectation {
    pub result: ExpectedResult,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_calls: Option<usize>,
    /// `any`: the field path a rejection's message must name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// `refused`: the HTTP status of the refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<u16>,
    /// `refused` by a runner that reads the request from a file (kwctl),
    /// which has no HTTP status to answer with: its exit status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    /// `refused`: fragments the refusal's body (HTTP) or standard error
    /// (`exit`) must contain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub body: Vec<String>,
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
    /// Runners that answer otherwise than `expect` says.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub runners: BTreeMap<Runner, RunnerExpectation>,
    /// Marks the request `cargo xtask bench` times for this policy
    /// (one case per policy).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub benchmark: bool,
}

/// A case file, or a policy's folder of cases, that cannot be used.
/// [`CaseError::with_causes`] reads it with its causes.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// The file (or the folder, or a file written for `kwctl run`) could
    /// not be read or written.
    #[error("cannot read {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not YAML in the shape of a case (the YAML error, its
    /// cause, says where).
    #[error("{}", path.display())]
    Yaml {
        path: PathBuf,
        #[source]
        source: Box<serde_saphyr::Error>,
    },
    /// The case asserts nothing that can fail, is not one the files of
    /// `kwctl run` can hold, or is not the one benchmark case a policy
    /// marks; the message says which.
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

impl CaseError {
    /// The error and each of its causes on one line ([`crate::with_causes`]).
    pub fn with_causes(&self) -> String {
        crate::with_causes(self)
    }
}

impl Case {
    /// Reads and checks a case file.
    pub fn load(path: &Path) -> Result<Self, CaseError> {
        let text = std::fs::read_to_string(path).map_err(|source| CaseError::Io {
            path: path.to_owned(),
            source,
        })?;
        let case: Case = yaml::document(&text, Limit::Cases).map_err(|source| CaseError::Yaml {
            path: path.to_owned(),
            source,
        })?;
        case.check().map_err(|message| CaseError::Invalid {
            path: path.to_owned(),
            message,
        })?;
        Ok(case)
    }

    /// A case must assert something that can fail: rejections and refused
    /// settings name message fragments, warnings name warning fragments;
    /// the same holds for every runner's own expectation.
    fn check(&self) -> Result<(), String> {
        check_expectation(&self.expect)?;
        for (runner, own) in &self.runners {
            check_expectation(&own.expect)
                .map_err(|e| format!("runners.{}: {e}", runner.name()))?;
            if own.because.trim().is_empty() {
                return Err(format!("runners.{}: say `because`", runner.name()));
            }
        }
        Ok(())
    }

    /// What `runner` must answer: its own expectation, or the case's.
    pub fn expectation(&self, runner: Runner) -> &Expectation {
        self.runners
            .get(&runner)
            .map_or(&self.expect, |own| &own.expect)
    }

    /// The settings the case runs with: `{}` when it gives none.
    pub fn settings(&self) -> Value {
        match &self.settings {
            Value::Null => Value::Object(Default::default()),
            settings => settings.clone(),
        }
    }

    /// Writes the files `kwctl run` takes into `out`: `request.json`,
    /// `settings.json`, `session.yml` (when the case replays a session)
    /// and `expect.json` (what `runner` must answer).
    pub fn write_files(&self, out: &Path, runner: Runner) -> Result<CaseFiles, CaseError> {
        let write = |name: &str, contents: Result<String, String>| {
            let path = out.join(name);
            let contents = contents.map_err(|message| CaseError::Invalid {
                path: path.clone(),
                message,
            })?;
            std::fs::write(&path, contents).map_err(|source| CaseError::Io {
                path: path.clone(),
                source,
            })?;
            Ok(path)
        };
        std::fs::create_dir_all(out).map_err(|source| CaseError::Io {
            path: out.to_owned(),
            source,
        })?;
        let request = write("request.json", pretty(&self.request))?;
        let settings = write("settings.json", pretty(&self.settings()))?;
        let session = match self.session.is_empty() {
            true => None,
            false => Some(write(
                "session.yml",
                serde_saphyr::to_string(&self.session).map_err(|e| e.to_string()),
            )?),
        };
        write("expect.json", pretty(self.expectation(runner)))?;
        Ok(CaseFiles {
            request,
            settings,
            session,
        })
    }

    /// The request, as the host forwards it.
    pub fn admission_request(&self) -> Result<AdmissionRequest, String> {
        AdmissionRequest::from_value(self.request.clone()).map_err(|e| crate::with_causes(&e))
    }

    /// Runs the case through `policy` as `runner` would, its findings
    /// tagged with `rules`; `Err` says what differed.
    pub fn run(
        &self,
        runner: Runner,
        policy: &dyn Evaluator,
        rules: &KnownRules,
    ) -> Result<(), String> {
        let expect = self.expectation(runner);
        let settings = self.settings();
        let answer = policy.validate_settings(&settings)?;
        if judge_settings(expect, &answer)? == SettingsJudged::RefusedAsExpected {
            return Ok(());
        }
        let request = self.admission_request()?;
        let session = Session::from_entries(&self.session).map_err(|e| e.to_string())?;
        let evaluation = policy.evaluate(&request, &settings, HostCapabilities::Replay(session));
        if let Some(expected) = expect.host_calls
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
        judge(
            expect,
            &evaluation.response,
            policy.matches(&request),
            rules,
        )
    }
}

/// The files of one case as `kwctl run` takes them ([`Case::write_files`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseFiles {
    pub request: PathBuf,
    pub settings: PathBuf,
    /// The host-capability exchanges to replay, when the case has any.
    pub session: Option<PathBuf>,
}

fn pretty<T: Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string_pretty(value).map_err(|e| e.to_string())
}

/// What a policy's `validate_settings` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsAnswer {
    Accepted,
    /// Refused, with the message the policy gave (policy-server's reason
    /// for not starting).
    Refused(String),
}

/// What `validate_settings` answered, judged against the case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsJudged {
    /// The case expects the settings refused, and they were, as it says:
    /// there is no verdict to judge.
    RefusedAsExpected,
    /// The settings were accepted: the request's verdict is judged next.
    Accepted,
}

/// Whether a runner's answer to the case's settings is what `expect` says.
pub fn judge_settings(
    expect: &Expectation,
    answer: &SettingsAnswer,
) -> Result<SettingsJudged, String> {
    match (answer, expect.result) {
        (SettingsAnswer::Refused(message), ExpectedResult::InvalidSettings) => {
            contains_all("settings message", message, &expect.message)
                .map(|()| SettingsJudged::RefusedAsExpected)
        }
        (SettingsAnswer::Refused(message), _) => Err(format!("settings were refused: {message}")),
        (SettingsAnswer::Accepted, ExpectedResult::InvalidSettings) => {
            Err("settings were accepted, but the case expects them refused".to_owned())
        }
        (SettingsAnswer::Accepted, _) => Ok(SettingsJudged::Accepted),
    }
}

/// Something that evaluates a policy as policy-server would: our wasm
/// host, or the rule function itself (the native runner).
pub trait Evaluator {
    /// `validate_settings`: the policy's answer, `Err` when it could not be
    /// asked (the module would not run, the answer was unreadable).
    fn validate_settings(&self, settings: &Value) -> Result<SettingsAnswer, String>;

    /// One `validate` call in a fresh instance, host calls answered as
    /// `capabilities` says.
    fn evaluate(
        &self,
        request: &AdmissionRequest,
        settings: &Value,
        capabilities: HostCapabilities,
    ) -> Evaluation;

    /// Whether the policy's rules match `request` (webhooks receive only
    /// those).
    fn matches(&self, request: &AdmissionRequest) -> bool;
}

/// Whether `response` is what `expect` says; `matches_rules` tells whether
/// the policy's rules match the request (a `skip` case must not). Every
/// response's warnings must also fit what the API server passes on, and
/// every message line and warning must carry the tag of one of `rules`.
pub fn judge(
    expect: &Expectation,
    response: &AdmissionResponse,
    matches_rules: bool,
    rules: &KnownRules,
) -> Result<(), String> {
    let warnings = response.warnings();
    check_warning_limits(warnings)?;
    rules.check(response)?;
    let message = response.message().unwrap_or_default();
    let describe = || {
        format!(
            "allowed={} code={:?} message={message:?} warnings={warnings:?}",
            response.allowed,
            response.code()
        )
    };
    match expect.result {
        ExpectedResult::Refused => {
            let refusal = match (expect.http, expect.exit) {
                (Some(http), _) => format!("HTTP {http}"),
                (None, Some(exit)) => format!("exit status {exit}"),
                (None, None) => "a refusal".to_owned(),
            };
            return Err(format!(
                "expected {refusal} before any policy, got a verdict: {}",
                describe()
            ));
        }
        ExpectedResult::Any if response.allowed => return Ok(()),
        ExpectedResult::Any => {
            if response.code() == Some(500) || message.trim().is_empty() {
                return Err(format!(
                    "a rejection must have a message and a code other than 500, got {}",
                    describe()
                ));
            }
            if let Some(field) = &expect.field
                && !message.contains(field.as_str())
            {
                return Err(format!(
                    "the rejection does not name {field:?}: {}",
                    describe()
                ));
            }
            return contains_all("message", message, &expect.message);
        }
        ExpectedResult::Pass | ExpectedResult::Skip | ExpectedResult::Warn if !response.allowed => {
            return Err(format!(
                "expected the request to be allowed, got {}",
                describe()
            ));
        }
        ExpectedResult::Fail if response.allowed => {
            return Err(format!("expected a rejection, got {}", describe()));
        }
        ExpectedResult::Pass | ExpectedResult::Skip
            if expect.warnings.is_empty() && !warnings.is_empty() =>
        {
            return Err(format!("expected no warnings, got {}", describe()));
        }
        ExpectedResult::Warn if warnings.is_empty() => {
            return Err(format!("expected warnings, got {}", describe()));
        }
        _ => {}
    }
    match (expect.result, matches_rules) {
        (ExpectedResult::Skip, true) => {
            return Err("expected the policy's rules not to match this request".to_owned());
        }
        (ExpectedResult::Pass | ExpectedResult::Warn | ExpectedResult::Fail, false) => {
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

/// Whether a runner's refusal of the request itself (`status` and `body`
/// of its HTTP answer) is what `expect` says.
pub fn judge_refusal(expect: &Expectation, status: u16, body: &str) -> Result<(), String> {
    judge_refused(expect, ("HTTP", expect.http, status), ("refusal", body))
}

/// Whether a runner's refusal to run a request file at all (its exit
/// status and standard error, kwctl's answer to a file it cannot parse)
/// is what `expect` says.
pub fn judge_exit(expect: &Expectation, status: i32, stderr: &str) -> Result<(), String> {
    judge_refused(
        expect,
        ("exit status", expect.exit, status),
        ("standard error", stderr),
    )
}

/// A refusal before any policy ran, however the runner reports it: its
/// status (named, expected, got) and the text that came with it (named,
/// text), which must hold every fragment `expect` lists.
fn judge_refused<T: PartialEq + fmt::Display>(
    expect: &Expectation,
    (status_name, expected, got): (&str, Option<T>, T),
    (text_name, text): (&str, &str),
) -> Result<(), String> {
    if expect.result != ExpectedResult::Refused {
        return Err(format!(
            "expected a verdict ({:?}), the runner refused the request: {status_name} {got}: {text}",
            expect.result
        ));
    }
    if expected.as_ref() != Some(&got) {
        let wanted = expected.map_or_else(|| "none".to_owned(), |status| status.to_string());
        return Err(format!(
            "expected {status_name} {wanted}, got {status_name} {got}: {text}"
        ));
    }
    contains_all(text_name, text, &expect.body)
}

/// Whether a response's warnings are what the API server passes on
/// unchanged (`shared::warnings`): few enough, one non-empty header-safe
/// line each. The fuzz targets hold every answer to it too.
pub fn check_warning_limits(warnings: &[String]) -> Result<(), String> {
    use shared::warnings::{MAX_CHARS, MAX_TOTAL_CHARS, MAX_WARNINGS};
    if warnings.len() > MAX_WARNINGS {
        return Err(format!(
            "{} warnings, more than {MAX_WARNINGS}",
            warnings.len()
        ));
    }
    let total: usize = warnings.iter().map(|w| w.chars().count()).sum();
    if total > MAX_TOTAL_CHARS {
        return Err(format!(
            "{total} characters of warnings, more than {MAX_TOTAL_CHARS}"
        ));
    }
    if warnings.iter().any(|w| w.trim().is_empty()) {
        return Err("an empty warning".to_owned());
    }
    match warnings
        .iter()
        .find(|w| w.chars().count() > MAX_CHARS || !w.bytes().all(|b| (b' '..=b'~').contains(&b)))
    {
        Some(bad) => Err(format!(
            "warning is longer than {MAX_CHARS} characters or not header-safe: {bad:?}"
        )),
        None => Ok(()),
    }
}

/// A case must assert something that can fail: rejections and refused
/// settings name message fragments, warnings name warning fragments.
fn check_expectation(expect: &Expectation) -> Result<(), String> {
    match expect.result {
        ExpectedResult::Fail | ExpectedResult::InvalidSettings if expect.message.is_empty() => {
            Err("a `fail` or `invalid-settings` case must list message fragments".to_owned())
        }
        ExpectedResult::Warn if expect.warnings.is_empty() => {
            Err("a `warn` case must list warning fragments".to_owned())
        }
        ExpectedResult::Pass if !expect.warnings.is_empty() || !expect.message.is_empty() => {
            Err("a `pass` case has no message or warnings to match".to_owned())
        }
        ExpectedResult::Skip if !expect.message.is_empty() => {
            Err("a `skip` case has no message to match".to_owned())
        }
        ExpectedResult::Refused if expect.http.is_some() == expect.exit.is_some() => {
            Err("a `refused` case must give either `http` or `exit`".to_owned())
        }
        ExpectedResult::Refused if expect.body.is_empty() => {
            Err("a `refused` case must give `body` fragments".to_owned())
        }
        _ if expect.result != ExpectedResult::Refused
            && (expect.http.is_some() || expect.exit.is_some() || !expect.body.is_empty()) =>
        {
            Err("only a `refused` case has `http`, `exit` and `body`".to_owned())
        }
        _ if expect.result != ExpectedResult::Any && expect.field.is_some() => {
            Err("only an `any` case names a `field`".to_owned())
        }
        _ => Ok(()),
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
/// request `cargo xtask bench` times. Exactly one must be marked.
pub fn benchmark_case(dir: &Path) -> Result<(String, Case), CaseError> {
    let files = case_files(dir).map_err(|source| CaseError::Io {
        path: dir.to_path_buf(),
        source,
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
        serde_saphyr::from_str(&format!(
            "description: x\nrequest: {{}}\nexpect:\n  result: {result}\n  message: {message:?}\n"
        ))
        .unwrap()
    }

    fn rules() -> KnownRules {
        KnownRules {
            policy: "p".to_owned(),
            ids: ["r".to_owned()].into(),
        }
    }

    fn response(allowed: bool, message: Option<&str>, warnings: &[&str]) -> AdmissionResponse {
        AdmissionResponse {
            uid: "u".into(),
            allowed,
            status: message.map(|m| admission::Status {
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
        assert!(case("skip", &["x"]).check().is_err());
        assert!(case("fail", &["x"]).check().is_ok());
    }

    #[test]
    fn runners_may_answer_otherwise_and_must_say_why() {
        let text = "description: x\nrequest: {}\nexpect: {result: pass}\nruners: {}\n";
        assert!(
            serde_saphyr::from_str::<Case>(text).is_err(),
            "typos are refused"
        );
        let text = "description: x\nrequest: {}\nexpect: {result: pass}\nrunners:\n  policy-server:\n    because: no cluster\n    result: warn\n    warnings: [not checked]\n";
        let case: Case = serde_saphyr::from_str(text).unwrap();
        assert!(case.check().is_ok());
        assert_eq!(case.expectation(Runner::Host).result, ExpectedResult::Pass);
        assert_eq!(case.expectation(Runner::Kwctl).result, ExpectedResult::Pass);
        assert_eq!(
            case.expectation(Runner::PolicyServer).result,
            ExpectedResult::Warn
        );
        let silent = text.replace("    warnings: [not checked]\n", "");
        let case: Case = serde_saphyr::from_str(&silent).unwrap();
        assert!(
            case.check()
                .unwrap_err()
                .starts_with("runners.policy-server: a `warn` case")
        );
        let unexplained = text.replace("no cluster", "' '");
        let case: Case = serde_saphyr::from_str(&unexplained).unwrap();
        assert_eq!(
            case.check().unwrap_err(),
            "runners.policy-server: say `because`"
        );
        assert_eq!("policy-server".parse::<Runner>(), Ok(Runner::PolicyServer));
        assert!("kubectl".parse::<Runner>().is_err());
    }

    #[test]
    fn warnings_must_fit_what_the_api_server_passes_on() {
        let warn = case("warn", &[]);
        let mut expect = warn.expect.clone();
        expect.warnings = vec!["w".to_owned()];
        assert!(judge(&expect, &response(true, None, &["[p/r] w"]), true, &rules()).is_ok());
        let long = "w".repeat(257);
        assert!(judge(&expect, &response(true, None, &[&long]), true, &rules()).is_err());
        assert!(
            judge(
                &expect,
                &response(true, None, &["w\nStack backtrace"]),
                true,
                &rules()
            )
            .is_err()
        );
        let many = ["w"; 11];
        assert!(judge(&expect, &response(true, None, &many), true, &rules()).is_err());
    }

    #[test]
    fn refusals_are_judged_by_status_or_exit_and_fragments() {
        let http = "description: x\nrequest: {}\nexpect: {result: refused, http: 413, body: [length limit]}\n";
        let case: Case = serde_saphyr::from_str(http).unwrap();
        assert!(case.check().is_ok());
        assert!(judge_refusal(&case.expect, 413, "length limit exceeded").is_ok());
        assert_eq!(
            judge_refusal(&case.expect, 400, "length limit exceeded"),
            Err("expected HTTP 413, got HTTP 400: length limit exceeded".to_owned())
        );
        assert!(judge_refusal(&case.expect, 413, "other").is_err());
        let verdict = judge(&case.expect, &response(true, None, &[]), true, &rules());
        assert!(
            verdict
                .unwrap_err()
                .starts_with("expected HTTP 413 before any policy")
        );
        let exit = http.replace("http: 413", "exit: 1");
        let case: Case = serde_saphyr::from_str(&exit).unwrap();
        assert!(case.check().is_ok());
        assert!(judge_exit(&case.expect, 1, "Error: length limit").is_ok());
        assert_eq!(
            judge_exit(&case.expect, 2, "Error: length limit"),
            Err("expected exit status 1, got exit status 2: Error: length limit".to_owned())
        );
        assert!(judge_exit(&case.expect, 1, "Error: other").is_err());
        let pass: Case =
            serde_saphyr::from_str("description: x\nrequest: {}\nexpect: {result: pass}\n")
                .unwrap();
        assert!(
            judge_exit(&pass.expect, 1, "Error")
                .unwrap_err()
                .starts_with("expected a verdict")
        );
        let both = http.replace("http: 413", "http: 413, exit: 1");
        let case: Case = serde_saphyr::from_str(&both).unwrap();
        assert_eq!(
            case.check().unwrap_err(),
            "a `refused` case must give either `http` or `exit`"
        );
    }

    #[test]
    fn judges_each_outcome() {
        let fail = case("fail", &["blocked"]);
        assert!(
            judge(
                &fail.expect,
                &response(false, Some("[p/r] Deletion blocked"), &[]),
                true,
                &rules()
            )
            .is_ok()
        );
        assert!(
            judge(
                &fail.expect,
                &response(false, Some("other"), &[]),
                true,
                &rules()
            )
            .is_err()
        );
        assert!(judge(&fail.expect, &response(true, None, &[]), true, &rules()).is_err());
        let pass = case("pass", &[]);
        assert!(judge(&pass.expect, &response(true, None, &[]), true, &rules()).is_ok());
        assert!(
            judge(
                &pass.expect,
                &response(true, None, &["[p/r] w"]),
                true,
                &rules()
            )
            .is_err()
        );
        assert!(judge(&pass.expect, &response(true, None, &[]), false, &rules()).is_err());
        let skip = case("skip", &[]);
        assert!(judge(&skip.expect, &response(true, None, &[]), false, &rules()).is_ok());
        assert!(judge(&skip.expect, &response(true, None, &[]), true, &rules()).is_err());
    }
}
