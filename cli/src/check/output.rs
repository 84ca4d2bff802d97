//! What `check --format json` prints and `report` reads back: the one
//! writer and the one reader of that format, so the two cannot drift.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{LocatedFinding, Summary};
use crate::preflight;

/// The JSON of one `check` run.
#[derive(Debug, Serialize, Deserialize)]
pub struct Output {
    /// The upgrade checklist, with `--checklist` (and `preflight`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checklist: Vec<preflight::Outcome>,
    pub findings: Vec<LocatedFinding>,
    pub summary: Summary,
}

impl Output {
    /// Pretty JSON, keys sorted at every level as `check` has always
    /// printed them (a `serde_json::Value`'s map is ordered).
    pub fn to_json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(&serde_json::to_value(self)?)?)
    }

    /// Whether a JSON object is `check`'s output: it has no `kind`, and its
    /// findings and summary are there.
    pub fn is_output(map: &serde_json::Map<String, serde_json::Value>) -> bool {
        !map.contains_key("kind")
            && map.get("findings").is_some_and(serde_json::Value::is_array)
            && map.get("summary").is_some_and(serde_json::Value::is_object)
    }
}
