//! Hostile but well-formed requests, built in code from each policy's own
//! cases so that no megabyte case is ever committed, and so that every
//! runner (our host, `kwctl run`, policy-server) consumes the same bytes.
//!
//! Each policy's *base* is its richest allowed case that needs no recorded
//! session and no runner of its own; every hostile case is that request
//! changed one way, sent as the exact AdmissionReview body in
//! [`HostileCase::body`] (raw text, so that escapes a serializer never
//! writes, `\/` or a lone surrogate, reach the runners as written):
//!
//! - `large`: padded to [`LARGE_BYTES`] where no rule reads
//!   (`metadata.managedFields`): the base's verdict;
//! - `over-limit`: an UPDATE whose object and old object are both
//!   [`OVER_LIMIT_OBJECT_BYTES`]: refused with 413 by policy-server;
//! - `wide-labels`, `wide-list`: [`WIDE_ENTRIES`] labels, and the
//!   subject's largest list grown as far (or as far as fits the body limit);
//! - `escapes-metadata`, `escapes-strings`: every JSON escape in a label's
//!   and an annotation's key and value, and appended to every string the
//!   subject's `spec` holds;
//! - `wrong-type/<path>`: each string of the subject in turn replaced by a
//!   number, a bool, null, an object or an array;
//! - `deep-read`, `deep-unread`: nesting of [`DEEPEST_ACCEPTED`] levels in
//!   `spec` (or the labels) and in `metadata.managedFields`;
//! - `too-deep`, `lone-surrogate`: refused with 400 by policy-server before
//!   any policy runs.
//!
//! A case whose verdict is not the point expects `any`: allowed, or
//! rejected with a message and a code other than 500.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::case::{
    Case, CaseError, Expectation, ExpectedResult, Runner, RunnerExpectation, case_files,
};

/// The size of the largest request: policy-server took 1.4 MB in the
/// measurement issue 13 records, below axum's 2 MB default body limit.
pub const LARGE_BYTES: usize = 1_400_000;
/// Each object of the over-limit UPDATE: 1.4 MiB, two of them above 2 MB.
pub const OVER_LIMIT_OBJECT_BYTES: usize = 1_468_006;
/// Entries of the `wide` list.
pub const WIDE_ENTRIES: usize = 100_000;
/// The deepest nesting policy-server parses, as [`depth_of`] counts it from
/// the AdmissionReview: its JSON extractor is serde_json, whose recursion
/// limit refuses the next level whether it reads a typed review or a
/// `Value` (measured against policy-server with curl).
pub const DEEPEST_ACCEPTED: usize = 127;
/// The bytes of policy-server's body limit (axum's default).
pub const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// Every escape JSON has, as raw JSON text (the inside of a string):
/// `\" \\ \/ \b \f \n \r \t`, a `\u` escape of a control character, of a
/// letter, and a surrogate pair.
pub const ESCAPES: &str = r#"\"\\\/\b\f\n\r\t\u0001\u00e9\ud83d\ude00"#;
/// A placeholder the body's text carries until the raw escapes replace it.
const ESCAPES_MARK: &str = "HOSTILE-ESCAPES-MARK";
/// A lone leading surrogate, as raw JSON text.
const LONE_SURROGATE: &str = r"\ud800";

/// One hostile request and what each runner must answer.
#[derive(Debug, Clone)]
pub struct HostileCase {
    pub policy: String,
    pub name: String,
    /// Settings, expectation and per-runner answers; `request` holds what
    /// the body decodes to (null when it does not decode).
    pub case: Case,
    /// The AdmissionReview as sent, byte for byte.
    pub body: String,
}

impl HostileCase {
    /// `policy/name`, as test names use it.
    pub fn id(&self) -> String {
        format!("{}/{}", self.policy, self.name)
    }

    /// Whether the body is large enough to cost a runner noticeably.
    pub fn is_large(&self) -> bool {
        self.body.len() > 100_000
    }
}

/// Why a hostile case cannot be built from a policy's base case.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The base case's request lacks a part a hostile change alters (the
    /// message names it).
    #[error("{0}")]
    Shape(String),
    /// The base case's request is already past the size or depth a case
    /// must reach.
    #[error("the base request is larger than the padded size")]
    TooLarge,
    #[error("the base request is {0} levels deep already")]
    TooDeep(usize),
    /// Growing the nest overshot the depth asked for.
    #[error("built {built} levels, not {depth}")]
    Depth { built: usize, depth: usize },
    /// A review could not be written as JSON.
    #[error("cannot write the review as JSON")]
    Json(#[from] serde_json::Error),
}

/// Why a policy's hostile cases cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum HostileError {
    /// Its cases cannot be read, or none of them is a base to build from.
    #[error(transparent)]
    Cases(#[from] CaseError),
    /// The hostile cases cannot be built from its base case.
    #[error("{}: cannot build the hostile cases", dir.display())]
    Build {
        dir: std::path::PathBuf,
        #[source]
        source: BuildError,
    },
}

impl HostileError {
    /// The error and each of its causes on one line ([`crate::with_causes`]).
    pub fn with_causes(&self) -> String {
        crate::with_causes(self)
    }
}

/// The hostile cases of the policy whose cases are in `cases_dir`.
pub fn cases(policy: &str, cases_dir: &Path) -> Result<Vec<HostileCase>, HostileError> {
    let base = base_case(cases_dir)?;
    let builder = Builder {
        policy,
        base: &base,
    };
    builder.all().map_err(|source| HostileError::Build {
        dir: cases_dir.to_path_buf(),
        source,
    })
}

/// The richest allowed case that every runner can run as it is.
fn base_case(cases_dir: &Path) -> Result<Case, CaseError> {
    let files = case_files(cases_dir).map_err(|source| CaseError::Io {
        path: cases_dir.to_path_buf(),
        source,
    })?;
    let mut best: Option<(usize, Case)> = None;
    for file in files {
        let case = Case::load(&file)?;
        let usable = matches!(
            case.expect.result,
            ExpectedResult::Pass | ExpectedResult::Warn
        ) && case.session.is_empty()
            && case.runners.is_empty()
            && case
                .admission_request()
                .is_ok_and(|r| r.subject().is_some_and(Value::is_object));
        let size = case.request.to_string().len();
        if usable && best.as_ref().is_none_or(|(largest, _)| size > *largest) {
            best = Some((size, case));
        }
    }
    best.map(|(_, case)| case)
        .ok_or_else(|| CaseError::Invalid {
            path: cases_dir.to_path_buf(),
            message: "no allowed case without a session to build hostile cases from".to_owned(),
        })
}

struct Builder<'a> {
    policy: &'a str,
    base: &'a Case,
}

/// Which object of the request a change applies to.
#[derive(Clone, Copy)]
enum Subject {
    /// `object`, or `oldObject` when there is none (DELETE).
    Judged,
    Both,
}

impl Builder<'_> {
    fn all(&self) -> Result<Vec<HostileCase>, BuildError> {
        let mut cases = vec![
            self.large()?,
            self.over_limit()?,
            self.wide_labels()?,
            self.escapes_metadata()?,
            self.escapes_strings()?,
            self.deep("deep-read", DEEPEST_ACCEPTED, true)?,
            self.deep("deep-unread", DEEPEST_ACCEPTED, false)?,
            self.deep("too-deep", DEEPEST_ACCEPTED + 1, false)?,
            self.lone_surrogate()?,
        ];
        cases.extend(self.wide_list()?);
        cases.extend(self.wrong_types()?);
        Ok(cases)
    }

    /// The base request as an AdmissionReview.
    fn review(&self) -> Value {
        let request = match self.base.request.get("request") {
            Some(request)
                if self.base.request.get("kind").and_then(Value::as_str)
                    == Some("AdmissionReview") =>
            {
                request.clone()
            }
            _ => self.base.request.clone(),
        };
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    }

    /// Applies `change` to the subject(s) of a copy of the base review.
    fn changed(&self, which: Subject, change: &mut Change<'_>) -> Result<Value, BuildError> {
        let mut review = self.review();
        let request = review
            .get_mut("request")
            .and_then(Value::as_object_mut)
            .ok_or_else(|| BuildError::Shape("the base request is not an object".to_owned()))?;
        let has_object = request.get("object").is_some_and(Value::is_object);
        let keys: &[&str] = match (which, has_object) {
            (Subject::Both, _) => &["object", "oldObject"],
            (Subject::Judged, true) => &["object"],
            (Subject::Judged, false) => &["oldObject"],
        };
        for key in keys {
            let subject = request
                .get_mut(*key)
                .and_then(Value::as_object_mut)
                .ok_or_else(|| BuildError::Shape(format!("the base request has no {key}")))?;
            change(subject)?;
        }
        Ok(review)
    }

    fn case(
        &self,
        name: &str,
        expect: Expectation,
        review: &Value,
    ) -> Result<HostileCase, BuildError> {
        let body = serde_json::to_string(review)?;
        self.raw_case(name, expect, body)
    }

    fn raw_case(
        &self,
        name: &str,
        expect: Expectation,
        body: String,
    ) -> Result<HostileCase, BuildError> {
        let request = serde_json::from_str(&body).unwrap_or(Value::Null);
        let case = Case {
            description: format!("hostile: {name}"),
            settings: self.base.settings.clone(),
            request,
            session: Vec::new(),
            expect,
            runners: Default::default(),
            benchmark: false,
        };
        Ok(HostileCase {
            policy: self.policy.to_owned(),
            name: name.to_owned(),
            case,
            body,
        })
    }

    /// The base's verdict: the change is where no rule reads.
    fn same(&self) -> Expectation {
        self.base.expect.clone()
    }

    fn large(&self) -> Result<HostileCase, BuildError> {
        let review = self.padded(Subject::Judged, LARGE_BYTES)?;
        self.case("large", self.same(), &review)
    }

    /// The base review with the subject(s) padded so that the body (one
    /// subject) or each subject (both) reaches `bytes`.
    fn padded(&self, which: Subject, bytes: usize) -> Result<Value, BuildError> {
        let measure = |review: &Value, which: Subject| -> Result<usize, BuildError> {
            Ok(match which {
                Subject::Judged => serde_json::to_string(review)?.len(),
                Subject::Both => serde_json::to_string(&review.pointer("/request/object"))?.len(),
            })
        };
        let with = |pad: usize| {
            self.changed(which, &mut |subject| {
                managed_fields(subject)?.push(json!({"manager": "x".repeat(pad)}));
                Ok(())
            })
        };
        let empty = with(0)?;
        let short = bytes
            .checked_sub(measure(&empty, which)?)
            .ok_or(BuildError::TooLarge)?;
        with(short)
    }

    fn over_limit(&self) -> Result<HostileCase, BuildError> {
        let mut review = self.review();
        if let Some(request) = review.get_mut("request").and_then(Value::as_object_mut) {
            let subject = request
                .get("object")
                .filter(|o| o.is_object())
                .or_else(|| request.get("oldObject"))
                .cloned()
                .unwrap_or(Value::Null);
            request.insert("operation".into(), json!("UPDATE"));
            request.insert("object".into(), subject.clone());
            request.insert("oldObject".into(), subject);
        }
        let builder = Builder {
            policy: self.policy,
            base: &Case {
                request: review,
                ..self.base.clone()
            },
        };
        let review = builder.padded(Subject::Both, OVER_LIMIT_OBJECT_BYTES)?;
        let mut case = self.case("over-limit", refused(413, "length limit exceeded"), &review)?;
        case.case.runners.insert(
            Runner::Kwctl,
            RunnerExpectation {
                because: "kwctl reads the request from a file and has no body limit".into(),
                expect: any(None),
            },
        );
        Ok(case)
    }

    /// The subject's largest list outside `metadata` grown to
    /// [`WIDE_ENTRIES`], or to as many as fit in [`LARGE_BYTES`] when its
    /// entries are too large for that many to pass policy-server's limit.
    fn wide_list(&self) -> Result<Option<HostileCase>, BuildError> {
        let grown = |entries: usize| -> Grown {
            let mut field = None;
            let review = self.changed(Subject::Judged, &mut |subject| {
                if let Some((path, list)) = largest_list(subject, "") {
                    let items = list.clone();
                    list.clear();
                    list.extend(items.iter().cycle().take(entries).cloned());
                    field = Some(path);
                }
                Ok(())
            })?;
            Ok(field.map(|field| (field, review)))
        };
        let Some((field, review)) = grown(WIDE_ENTRIES)? else {
            return Ok(None);
        };
        let size = |review: &Value| serde_json::to_string(review).map_or(0, |s| s.len());
        let (full, one) = (size(&review), grown(1)?.map_or(0, |(_, r)| size(&r)));
        let review = if full <= BODY_LIMIT {
            review
        } else {
            let per_entry = (full.saturating_sub(one) / WIDE_ENTRIES).max(1);
            let fit = LARGE_BYTES.saturating_sub(one) / per_entry;
            grown(fit.max(1))?.map(|(_, r)| r).unwrap_or(review)
        };
        self.case("wide-list", any(Some(field)), &review).map(Some)
    }

    fn wide_labels(&self) -> Result<HostileCase, BuildError> {
        let review = self.changed(Subject::Judged, &mut |subject| {
            let labels = labels(subject, "labels")?;
            labels.extend((0..WIDE_ENTRIES).map(|i| (format!("l{i}"), json!(""))));
            Ok(())
        })?;
        self.case("wide-labels", any(Some("metadata.labels".into())), &review)
    }

    fn escapes_metadata(&self) -> Result<HostileCase, BuildError> {
        let review = self.changed(Subject::Judged, &mut |subject| {
            for key in ["labels", "annotations"] {
                labels(subject, key)?.insert(
                    format!("example.org/{ESCAPES_MARK}"),
                    json!(format!("v{ESCAPES_MARK}")),
                );
            }
            Ok(())
        })?;
        let body = serde_json::to_string(&review)?;
        self.raw_case(
            "escapes-metadata",
            any(Some("metadata".into())),
            body.replace(ESCAPES_MARK, ESCAPES),
        )
    }

    fn escapes_strings(&self) -> Result<HostileCase, BuildError> {
        let review = self.changed(Subject::Judged, &mut |subject| {
            if let Some(spec) = subject.get_mut("spec") {
                for_each_string(spec, &mut |s| s.push_str(ESCAPES_MARK));
            }
            Ok(())
        })?;
        let body = serde_json::to_string(&review)?;
        self.raw_case(
            "escapes-strings",
            any(None),
            body.replace(ESCAPES_MARK, ESCAPES),
        )
    }

    fn deep(&self, name: &str, depth: usize, where_read: bool) -> Result<HostileCase, BuildError> {
        let with = |levels: usize| {
            self.changed(Subject::Judged, &mut |subject| {
                let nest = nested(levels);
                if where_read && subject.get("spec").is_some_and(Value::is_object) {
                    if let Some(spec) = subject.get_mut("spec").and_then(Value::as_object_mut) {
                        spec.insert("hostileNest".into(), nest);
                    }
                } else if where_read {
                    labels(subject, "labels")?.insert("hostile-nest".into(), nest);
                } else {
                    managed_fields(subject)?.push(json!({"fieldsV1": nest}));
                }
                Ok(())
            })
        };
        // The nest's own depth plus where it sits; other parts of the request
        // may be deeper than a one-level nest, so grow until it is the deepest.
        let mut levels = 1;
        let review = loop {
            let review = with(levels)?;
            match depth_of(&review) {
                built if built == depth => break review,
                built if built > depth && levels == 1 => return Err(BuildError::TooDeep(built)),
                built if built > depth => return Err(BuildError::Depth { built, depth }),
                built => levels += (depth - built).max(1),
            }
        };
        let expect = match (depth > DEEPEST_ACCEPTED, where_read) {
            (true, _) => refused(400, "Failed to parse the request body as JSON"),
            (false, true) => any(None),
            (false, false) => self.same(),
        };
        let mut case = self.case(name, expect, &review)?;
        if depth > DEEPEST_ACCEPTED {
            case.case.runners.insert(
                Runner::Kwctl,
                kwctl_cannot_parse("recursion limit exceeded"),
            );
        }
        Ok(case)
    }

    fn lone_surrogate(&self) -> Result<HostileCase, BuildError> {
        let review = self.changed(Subject::Judged, &mut |subject| {
            labels(subject, "labels")?.insert("example.org/lone".into(), json!(ESCAPES_MARK));
            Ok(())
        })?;
        let body = serde_json::to_string(&review)?;
        let mut case = self.raw_case(
            "lone-surrogate",
            refused(400, "Failed to parse the request body as JSON"),
            body.replace(ESCAPES_MARK, LONE_SURROGATE),
        )?;
        case.case
            .runners
            .insert(Runner::Kwctl, kwctl_cannot_parse("hex escape"));
        Ok(case)
    }

    /// One case per string of the subject, each replaced by the next of
    /// a number, a bool, null, an object and an array in turn.
    fn wrong_types(&self) -> Result<Vec<HostileCase>, BuildError> {
        let mut paths = Vec::new();
        let subject = self
            .review()
            .get("request")
            .and_then(|r| {
                r.get("object")
                    .filter(|o| o.is_object())
                    .or_else(|| r.get("oldObject"))
            })
            .cloned()
            .unwrap_or(Value::Null);
        string_paths(&subject, &mut Vec::new(), &mut paths);
        let wrong = [json!(42), json!(true), Value::Null, json!({}), json!([])];
        let mut cases = Vec::new();
        for (i, path) in paths.iter().enumerate() {
            let value = wrong.get(i % wrong.len()).cloned().unwrap_or(Value::Null);
            let review = self.changed(Subject::Judged, &mut |subject| {
                if let Some(slot) = pointer_mut(subject, path) {
                    *slot = value.clone();
                }
                Ok(())
            })?;
            let dotted = dotted(path);
            cases.push(self.case(&format!("wrong-type/{dotted}"), any(None), &review)?);
        }
        Ok(cases)
    }
}

/// A change made to a subject of the request.
type Change<'c> = dyn FnMut(&mut Map<String, Value>) -> Result<(), BuildError> + 'c;

/// The path of a grown list and the review holding it, if there is a list.
type Grown = Result<Option<(String, Value)>, BuildError>;

fn any(field: Option<String>) -> Expectation {
    Expectation {
        result: ExpectedResult::Any,
        field,
        ..Expectation::default()
    }
}

fn refused(http: u16, body: &str) -> Expectation {
    Expectation {
        result: ExpectedResult::Refused,
        http: Some(http),
        body: vec![body.to_owned()],
        ..Expectation::default()
    }
}

/// kwctl has no HTTP door: a request file it cannot parse stops it with
/// exit status 1 and serde_json's `reason` on standard error.
fn kwctl_cannot_parse(reason: &str) -> RunnerExpectation {
    RunnerExpectation {
        because: "kwctl cannot parse the request file and stops with an error".into(),
        expect: Expectation {
            result: ExpectedResult::Refused,
            exit: Some(1),
            body: vec![reason.to_owned()],
            ..Expectation::default()
        },
    }
}

/// `metadata` of an object, created when absent.
fn metadata(subject: &mut Map<String, Value>) -> Result<&mut Map<String, Value>, BuildError> {
    subject
        .entry("metadata")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| BuildError::Shape("metadata is not a map".to_owned()))
}

/// `metadata.managedFields` of an object, created when absent.
fn managed_fields(subject: &mut Map<String, Value>) -> Result<&mut Vec<Value>, BuildError> {
    metadata(subject)?
        .entry("managedFields")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| BuildError::Shape("metadata.managedFields is not a list".to_owned()))
}

/// `metadata.<key>` (labels, annotations) of an object, created when absent.
fn labels<'a>(
    subject: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Map<String, Value>, BuildError> {
    metadata(subject)?
        .entry(key)
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| BuildError::Shape(format!("metadata.{key} is not a map")))
}

/// The longest non-empty list in `value` (outside `metadata`), with its path.
fn largest_list<'v>(
    value: &'v mut Map<String, Value>,
    prefix: &str,
) -> Option<(String, &'v mut Vec<Value>)> {
    let mut best: Option<(String, usize)> = None;
    find_largest(value, prefix, &mut best);
    let (path, _) = best?;
    let mut at: &mut Value = value.get_mut(path.split('.').next()?)?;
    for key in path.split('.').skip(1) {
        at = at.get_mut(key)?;
    }
    let list = at.as_array_mut()?;
    Some((path, list))
}

fn find_largest(map: &Map<String, Value>, prefix: &str, best: &mut Option<(String, usize)>) {
    for (key, value) in map {
        if prefix.is_empty() && key == "metadata" {
            continue;
        }
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Array(list)
                if !list.is_empty() && best.as_ref().is_none_or(|(_, n)| list.len() > *n) =>
            {
                *best = Some((path, list.len()));
            }
            Value::Object(inner) => find_largest(inner, &path, best),
            _ => {}
        }
    }
}

fn for_each_string(value: &mut Value, visit: &mut dyn FnMut(&mut String)) {
    match value {
        Value::String(s) => visit(s),
        Value::Array(items) => items.iter_mut().for_each(|v| for_each_string(v, visit)),
        Value::Object(map) => map.values_mut().for_each(|v| for_each_string(v, visit)),
        _ => {}
    }
}

/// One step of a path into a JSON document.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn string_paths(value: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        Value::String(_) => out.push(at.clone()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(Step::Index(i));
                string_paths(item, at, out);
                at.pop();
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                at.push(Step::Key(key.clone()));
                string_paths(item, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn pointer_mut<'v>(subject: &'v mut Map<String, Value>, path: &[Step]) -> Option<&'v mut Value> {
    let (first, rest) = path.split_first()?;
    let Step::Key(key) = first else { return None };
    let mut at = subject.get_mut(key)?;
    for step in rest {
        at = match step {
            Step::Key(key) => at.get_mut(key.as_str())?,
            Step::Index(i) => at.get_mut(*i)?,
        };
    }
    Some(at)
}

/// `spec.users[0].name`, as the policies write field paths.
fn dotted(path: &[Step]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            Step::Key(key) if text.is_empty() => text.push_str(key),
            Step::Key(key) => {
                text.push('.');
                text.push_str(key);
            }
            Step::Index(i) => text.push_str(&format!("[{i}]")),
        }
    }
    text
}

/// Nesting of `levels` containers: arrays around an empty array.
fn nested(levels: usize) -> Value {
    (1..levels).fold(json!([]), |inner, _| json!([inner]))
}

/// The depth of containers in a document, as a JSON parser counts it.
pub fn depth_of(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth_of).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_delete() -> Vec<HostileCase> {
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/no-delete/tests/cases");
        cases("no-delete", &dir).unwrap()
    }

    #[test]
    fn every_kind_of_hostile_request_is_built() {
        let cases = no_delete();
        let find = |name: &str| cases.iter().find(|c| c.name == name).unwrap();
        let large = find("large");
        assert_eq!(large.body.len(), LARGE_BYTES);
        let over = find("over-limit");
        assert!(over.body.len() > BODY_LIMIT, "{}", over.body.len());
        assert_eq!(over.case.expect.http, Some(413));
        assert_eq!(
            over.case.expectation(Runner::Kwctl).result,
            ExpectedResult::Any
        );
        let wide = find("wide-labels");
        let labels = &wide.case.request["request"]["object"]["metadata"]["labels"];
        assert!(labels.as_object().unwrap().len() >= WIDE_ENTRIES);
        assert!(wide.body.len() < BODY_LIMIT, "{}", wide.body.len());
        assert_eq!(depth_of(&find("deep-read").case.request), DEEPEST_ACCEPTED);
        assert_eq!(
            depth_of(&find("deep-unread").case.request),
            DEEPEST_ACCEPTED
        );
        // One level more does not decode: serde_json stops it, as it does
        // in policy-server.
        let too_deep = find("too-deep");
        assert!(too_deep.case.request.is_null());
        let error = serde_json::from_str::<Value>(&too_deep.body).unwrap_err();
        assert!(error.to_string().contains("recursion limit"), "{error}");
        assert!(find("lone-surrogate").case.request.is_null());
        let escapes = find("escapes-metadata");
        assert!(escapes.body.contains(ESCAPES));
        assert!(escapes.case.request.to_string().contains("\u{1F600}"));
        assert!(cases.iter().any(|c| c.name == "wrong-type/metadata.name"));
        let lone = find("lone-surrogate").case.expectation(Runner::Kwctl);
        assert_eq!((lone.result, lone.exit), (ExpectedResult::Refused, Some(1)));
        let deep = find("too-deep").case.expectation(Runner::Kwctl);
        assert_eq!(deep.body, ["recursion limit exceeded"]);
    }
}
