//! The Cozystack releases the bundle knows, one file each under
//! `releases/` (`releases/v1.6.2.json`), and how a new one is read from a
//! Cozystack tree.
//!
//! A release's file says where its charts are (a folder of the reference
//! data, `../shared/data/cozystack-<release>/`, in the layout of
//! [`tree`]) and what those charts say that a rule depends on ([`Facts`]):
//! the kinds its ApplicationDefinitions serve, the Kubernetes versions the
//! tenant chart renders, the names some charts require, the behaviours of
//! [`release::Fact`], and every `fail` and `required` call of its
//! application templates. A release whose charts are those of another (a
//! patch release that changed no chart) names it instead
//! (`sameChartsAs`), so its data is held once.
//!
//! `cargo xtask import-release` ([`import`]) writes a file from a tree,
//! and from all of them shared's table of releases ([`table`]) and
//! values-schema's schemas; [`diff`] says what changed between two
//! releases. Not for the policies' modules: they embed the table.

pub mod diff;
pub mod facts;
pub mod import;
pub mod rules;
pub mod sites;
pub mod table;
pub mod tree;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use facts::{Facts, Kind};

/// The folder of the release files, under the repository root.
pub const RELEASES_DIR: &str = "releases";

/// Where the reference data lives, from the repository root, unless told
/// otherwise: the team's reference folder beside the repository.
pub const DATA_DIR: &str = "../shared/data";

/// One release's file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entry {
    /// `v1.6.2`.
    pub version: String,
    /// A release candidate: accepted by the policies' setting, never their
    /// default, not in the chart's list of releases, not in `make oracle`'s
    /// default set.
    #[serde(default)]
    pub candidate: bool,
    /// Where the charts came from (`cozystack/cozystack tag v1.6.2`).
    pub source: String,
    /// The release whose charts these are, for a release that changed
    /// none; the rest is then that release's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_charts_as: Option<String>,
    /// The charts, when they are the release's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charts: Option<Charts>,
}

/// Where a release's charts are, and what they say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Charts {
    /// The folder of the reference data holding them
    /// (`cozystack-v1.6.2`), in the layout of [`tree`].
    pub data: String,
    /// The folder whose `charts/system/` renders the nested releases when
    /// `data` has none (the reference data keeps the system charts of the
    /// newest patch of each line only).
    pub system_charts: String,
    #[serde(flatten)]
    pub facts: Facts,
}

impl Entry {
    /// The file of release `version` under `root`.
    pub fn path(root: &Path, version: &str) -> PathBuf {
        root.join(RELEASES_DIR).join(format!("{version}.json"))
    }

    /// The file's text, as the importer writes it.
    pub fn to_text(&self) -> Result<String, String> {
        serde_json::to_string_pretty(self)
            .map(|text| text + "\n")
            .map_err(|e| e.to_string())
    }
}

/// Every release file under `root`, newest first: released ones, then
/// candidates.
pub fn read_all(root: &Path) -> Result<Vec<Entry>, String> {
    let dir = root.join(RELEASES_DIR);
    let mut entries = Vec::new();
    let listing =
        std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for file in listing.flatten() {
        let path = file.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let entry: Entry =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let named = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        if named.as_deref() != Some(entry.version.as_str()) {
            return Err(format!(
                "{} holds release {}: the file must be named after it",
                path.display(),
                entry.version
            ));
        }
        entries.push(entry);
    }
    sort(&mut entries);
    for entry in &entries {
        charts_of(&entries, &entry.version)?;
    }
    Ok(entries)
}

/// Newest first, released before candidates.
pub fn sort(entries: &mut [Entry]) {
    entries.sort_by(|a, b| {
        a.candidate
            .cmp(&b.candidate)
            .then_with(|| version_key(&b.version).cmp(&version_key(&a.version)))
    });
}

/// A version as numbers to sort by: `v1.6.2` is `[1, 6, 2]`; a suffix
/// (`-rc.1`) sorts before the release it leads to.
pub fn version_key(version: &str) -> (Vec<u64>, bool, String) {
    let version = version.strip_prefix('v').unwrap_or(version);
    let (numbers, suffix) = version.split_once('-').unwrap_or((version, ""));
    let numbers = numbers
        .split('.')
        .map(|n| n.parse().unwrap_or_default())
        .collect();
    (numbers, suffix.is_empty(), suffix.to_owned())
}

/// The charts of release `version`: its own, or those of the release it
/// names in `sameChartsAs`.
pub fn charts_of<'e>(entries: &'e [Entry], version: &str) -> Result<&'e Charts, String> {
    let mut current = version;
    for _ in 0..entries.len() + 1 {
        let entry = entries
            .iter()
            .find(|e| e.version == current)
            .ok_or_else(|| format!("no release {current} under {RELEASES_DIR}/"))?;
        match (&entry.charts, &entry.same_charts_as) {
            (Some(charts), None) => return Ok(charts),
            (None, Some(other)) => current = other,
            _ => {
                return Err(format!(
                    "release {}: a release file holds either its charts or sameChartsAs",
                    entry.version
                ));
            }
        }
    }
    Err(format!(
        "release {version}: sameChartsAs goes round in a circle"
    ))
}

/// The reference data folder of `charts` under `data`.
pub fn data_dir(data: &Path, charts: &Charts) -> PathBuf {
    data.join(&charts.data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_newest_first_and_candidates_last() {
        let entry = |version: &str, candidate| Entry {
            version: version.to_owned(),
            candidate,
            source: String::new(),
            same_charts_as: Some("v1.6.2".to_owned()),
            charts: None,
        };
        let mut entries = vec![
            entry("v1.5.4", false),
            entry("v1.7.0-rc.1", true),
            entry("v1.6.10", false),
            entry("v1.6.2", false),
        ];
        sort(&mut entries);
        let order: Vec<&str> = entries.iter().map(|e| e.version.as_str()).collect();
        assert_eq!(order, ["v1.6.10", "v1.6.2", "v1.5.4", "v1.7.0-rc.1"]);
        assert!(version_key("v1.7.0-rc.1") < version_key("v1.7.0"));
        assert!(version_key("v1.6.2") < version_key("v1.7.0-rc.1"));
    }

    #[test]
    fn the_committed_releases_read_and_share_charts() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let entries = read_all(&root).unwrap();
        let versions: Vec<&str> = entries.iter().map(|e| e.version.as_str()).collect();
        assert_eq!(
            versions,
            [
                "v1.6.2",
                "v1.6.1",
                "v1.6.0",
                "v1.5.4",
                "v1.5.3",
                "v1.5.2",
                "v1.5.1",
                "v1.5.0",
                "v1.7.0-rc.3c780acd"
            ]
        );
        assert_eq!(
            charts_of(&entries, "v1.5.0").unwrap().data,
            "cozystack-v1.5.1"
        );
        assert!(entries.iter().filter(|e| e.candidate).count() == 1);
    }
}
