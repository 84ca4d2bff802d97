//! The page's case list: every case file of every policy, turned into the
//! editors' texts, made on the host when the site is built.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use testkit::case::{Case, ExpectedResult, case_files};

/// One policy and its cases, in file order.
#[derive(Debug, Serialize)]
pub struct PolicyCases {
    pub name: String,
    pub cases: Vec<Example>,
}

/// A case as the page fills its editors with it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Example {
    /// The file stem, e.g. `delete-protected-configmap`.
    pub file: String,
    pub description: String,
    pub operation: String,
    pub object: String,
    pub old_object: String,
    pub settings: String,
    /// The request's other fields the policies read (user, kind, names).
    pub request: String,
    pub expect: ExpectedResult,
    /// The case replays recorded cluster answers, which the page has not:
    /// its verdict there is the static one.
    pub replays_cluster: bool,
}

/// Request fields a policy reads besides the objects and the operation.
const HEADER: &[&str] = &[
    "kind",
    "resource",
    "subResource",
    "name",
    "namespace",
    "userInfo",
    "dryRun",
];

/// Every policy under `root/policies`, each with its cases.
pub fn read(root: &Path) -> Result<Vec<PolicyCases>, String> {
    layout::policies(root)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|policy| {
            let dir = policy.cases_dir();
            let files = case_files(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let cases = files
                .iter()
                .map(|file| {
                    let case = Case::load(file).map_err(|e| e.with_causes())?;
                    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
                    example(stem.unwrap_or_default(), &case)
                        .map_err(|e| format!("{}: {e}", file.display()))
                })
                .collect::<Result<_, String>>()?;
            Ok(PolicyCases {
                name: policy.name,
                cases,
            })
        })
        .collect()
}

fn example(file: String, case: &Case) -> Result<Example, String> {
    // A case may hold a whole AdmissionReview; the page edits its request.
    let request = case.request.get("request").unwrap_or(&case.request);
    let text = |value: Option<&Value>| match value {
        None | Some(Value::Null) => Ok(String::new()),
        Some(value) => serde_saphyr::to_string(value).map_err(|e| e.to_string()),
    };
    let header: serde_json::Map<String, Value> = HEADER
        .iter()
        .filter_map(|key| Some(((*key).to_owned(), request.get(*key)?.clone())))
        .collect();
    let settings = match &case.settings {
        Value::Object(map) if map.is_empty() => None,
        settings => Some(settings),
    };
    Ok(Example {
        file,
        description: case.description.clone(),
        operation: request
            .get("operation")
            .and_then(Value::as_str)
            .unwrap_or("CREATE")
            .to_owned(),
        object: text(request.get("object"))?,
        old_object: text(request.get("oldObject"))?,
        settings: text(settings)?,
        request: text(Some(&Value::Object(header)))?,
        expect: case.expect.result,
        replays_cluster: !case.session.is_empty(),
    })
}
