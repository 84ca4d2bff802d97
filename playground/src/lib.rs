//! The browser playground's engine: the bundle's policies, built for
//! `wasm32-unknown-unknown`, judging what a person types.
//!
//! The page sends the editors' texts ([`Input`]); [`evaluate`] reads them as
//! YAML, builds the admission request policy-server would send, runs the
//! policy through its own code ([`policies`]) and answers with the verdict,
//! each message, and where the field each message names is in the YAML
//! ([`reading::positions`]). Natively it is a plain library, tested like any other;
//! the wasm-bindgen entry points are in [`web`], on wasm32 only, and the
//! case list the page offers is made on the host ([`cases`]).

#[cfg(not(target_arch = "wasm32"))]
pub mod cases;
pub mod policies;
mod request;
#[cfg(target_arch = "wasm32")]
mod web;

use reading::positions::{Located, Tree};
use reading::yaml::{self, Limit};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::{Finding, FindingKind};

pub use crate::policies::Answer;

/// What the page sends: the policy, the operation, and each editor's text.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Input {
    pub policy: String,
    pub operation: String,
    pub object: String,
    pub old_object: String,
    pub settings: String,
    /// The rest of the AdmissionRequest (user, kind, names); what it leaves
    /// out is taken from the object.
    pub request: String,
}

/// What the page shows.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Input that could not be read (YAML errors), each with its editor.
    pub problems: Vec<Problem>,
    /// `validate_settings`' refusal, when it refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings_refused: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Judgement>,
}

/// An editor whose text cannot be used, and where.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub editor: Editor,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
}

/// The page's editors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Editor {
    Object,
    OldObject,
    Settings,
    Request,
}

/// The policy's answer, as the page renders it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Judgement {
    pub allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    pub findings: Vec<Shown>,
}

/// One line of the rejection message, or one warning, with its field.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shown {
    /// A violation or a warning (`severity` to the page).
    #[serde(rename = "severity")]
    pub kind: FindingKind,
    /// The field path the line names; empty for the whole object.
    pub path: String,
    pub message: String,
    /// The editor holding that field, and where.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<Editor>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<Located>,
}

/// The page's input, as JSON, to the page's output, as JSON.
pub fn evaluate_json(input: &str) -> String {
    let output = match serde_json::from_str::<Input>(input) {
        Ok(input) => evaluate(&input),
        Err(error) => Output::problem(Editor::Request, format!("unreadable input: {error}")),
    };
    serde_json::to_string(&output)
        .unwrap_or_else(|e| format!(r#"{{"problems":[{{"editor":"request","message":"{e}"}}]}}"#))
}

/// Judges the editors' texts with the named policy.
pub fn evaluate(input: &Input) -> Output {
    match answer(input) {
        Err(output) => output,
        Ok(Answer::SettingsRefused(message)) => Output {
            settings_refused: Some(message),
            ..Output::default()
        },
        Ok(Answer::Validated(response)) => {
            let trees = Trees::read(input);
            let lines = |text: Option<String>| {
                text.map(|t| t.lines().map(str::to_owned).collect::<Vec<_>>())
                    .unwrap_or_default()
            };
            let violations = lines(response.message)
                .into_iter()
                .map(|line| trees.show(FindingKind::Violation, &line));
            let warnings = response
                .warnings
                .unwrap_or_default()
                .into_iter()
                .map(|line| trees.show(FindingKind::Warning, &line));
            Output {
                verdict: Some(Judgement {
                    allowed: response.accepted,
                    code: response.code,
                    findings: violations.chain(warnings).collect(),
                }),
                ..Output::default()
            }
        }
    }
}

/// The named policy's own answer to the editors' texts, before the page
/// renders it; `Err` is what the page shows instead (text it cannot read,
/// a request it cannot build, an unknown policy, a host fault).
pub fn answer(input: &Input) -> Result<Answer, Output> {
    let mut problems = Vec::new();
    let mut read = |editor, text: &str| match yaml(text) {
        Ok(value) => value,
        Err(problem) => {
            problems.push(Problem { editor, ..problem });
            None
        }
    };
    let object = read(Editor::Object, &input.object);
    let old_object = read(Editor::OldObject, &input.old_object);
    let settings = read(Editor::Settings, &input.settings);
    let header = read(Editor::Request, &input.request);
    if !problems.is_empty() {
        return Err(Output {
            problems,
            ..Output::default()
        });
    }
    let request = request::build(&input.operation, header, object, old_object)
        .map_err(|message| Output::problem(Editor::Request, message))?;
    let settings = settings.unwrap_or_else(|| Value::Object(Default::default()));
    let payload = serde_json::json!({"request": request, "settings": settings});
    let (Ok(settings), Ok(payload)) = (serde_json::to_vec(&settings), serde_json::to_vec(&payload))
    else {
        return Err(Output::problem(
            Editor::Request,
            "cannot encode the request".to_owned(),
        ));
    };
    match policies::run(&input.policy, &settings, &payload) {
        None => Err(Output::problem(
            Editor::Request,
            format!(
                "unknown policy {:?}: one of {}",
                input.policy,
                policies::NAMES.join(", ")
            ),
        )),
        Some(Err(fault)) => Err(Output::problem(Editor::Request, fault.0)),
        Some(Ok(answer)) => Ok(answer),
    }
}

impl Output {
    fn problem(editor: Editor, message: String) -> Self {
        Output {
            problems: vec![Problem {
                editor,
                message,
                line: None,
                column: None,
            }],
            ..Output::default()
        }
    }
}

/// An editor's text as a value: `None` when it is blank.
fn yaml(text: &str) -> Result<Option<Value>, Problem> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    yaml::document::<Value>(text, Limit::Manifests)
        .map(Some)
        .map_err(|error| {
            let location = error.location().filter(|l| l.line() > 0);
            Problem {
                editor: Editor::Request,
                // The first line: the rest is a snippet of the text, which the
                // editor already shows.
                message: error
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
                line: location.map(|l| l.line()),
                column: location.map(|l| l.column()),
            }
        })
}

/// The objects' texts, read for positions.
struct Trees {
    object: Option<Tree>,
    old_object: Option<Tree>,
}

impl Trees {
    fn read(input: &Input) -> Self {
        Self {
            object: Tree::document(&input.object, Limit::Manifests).ok(),
            old_object: Tree::document(&input.old_object, Limit::Manifests).ok(),
        }
    }

    /// A message line with the field it names located: in the new object
    /// when it has that field, otherwise in the old one (a DELETE's only
    /// object, or a field the change removed); a parent when neither has
    /// the field itself.
    fn show(&self, kind: FindingKind, line: &str) -> Shown {
        let finding = Finding::parse_line(line);
        let candidates = [
            (Editor::Object, &self.object),
            (Editor::OldObject, &self.old_object),
        ];
        let located: Vec<(Editor, Located)> = candidates
            .iter()
            .filter_map(|(editor, tree)| {
                tree.as_ref()
                    .and_then(|t| t.locate(finding.path.segments()))
                    .map(|at| (*editor, at))
            })
            .collect();
        let best = located
            .iter()
            .find(|(_, at)| at.exact)
            .or_else(|| located.first());
        Shown {
            kind,
            path: finding.path.to_string(),
            message: finding.message,
            editor: best.map(|(editor, _)| *editor),
            at: best.map(|(_, at)| *at),
        }
    }
}
