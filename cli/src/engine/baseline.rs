//! `--baseline`: findings a repository already had when it adopted the
//! bundle, so only new ones fail. An entry names a finding by what stays
//! when unrelated lines move: rule, object and field, never a line number.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::finding::Finding;

/// The format's version, so a later layout can be told apart.
const VERSION: u32 = 1;

/// One known finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Entry {
    pub rule: String,
    pub kind: String,
    #[serde(default)]
    pub namespace: String,
    pub name: String,
    #[serde(default)]
    pub field: String,
}

impl Entry {
    pub fn of(finding: &Finding) -> Self {
        Self {
            rule: finding.rule.to_string(),
            kind: finding.object.kind.clone(),
            namespace: finding.object.namespace.clone(),
            name: finding.object.name.clone(),
            field: finding.field.clone(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    findings: BTreeSet<Entry>,
}

/// The entries of a baseline file.
pub fn read(path: &Path) -> Result<BTreeSet<Entry>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the baseline {}", path.display()))?;
    let file: File = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a baseline written by --write-baseline",
            path.display()
        )
    })?;
    if file.version != VERSION {
        bail!(
            "{}: baseline version {} is not {VERSION}: write it again with --write-baseline",
            path.display(),
            file.version
        );
    }
    Ok(file.findings)
}

/// Writes every finding of `findings` as the baseline, sorted, so the file
/// changes only when findings do.
pub fn write(path: &Path, findings: &[Finding]) -> Result<()> {
    let file = File {
        version: VERSION,
        findings: findings.iter().map(Entry::of).collect(),
    };
    let text = serde_json::to_string_pretty(&file)? + "\n";
    std::fs::write(path, text).with_context(|| format!("writing the baseline {}", path.display()))
}
