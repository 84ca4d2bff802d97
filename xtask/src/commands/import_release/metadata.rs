//! values-schema's rules name every application kind of every release the
//! bundle knows, candidates included: its `metadata.yml` lists their
//! plurals (the webhook's resources) and kinds (Artifact Hub's), written
//! from the release files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The policy whose rules name every kind.
const METADATA: &str = "policies/values-schema/metadata.yml";

/// The line the kinds of Artifact Hub follow.
const ARTIFACTHUB: &str = "  io.artifacthub.resources: ";

/// Every kind of every release: `(kind, plural)`.
fn kinds(root: &Path) -> Result<BTreeSet<(String, String)>, String> {
    let entries = releases::read_all(root)?;
    let mut kinds = BTreeSet::new();
    for entry in &entries {
        for kind in &releases::charts_of(&entries, &entry.version)?.facts.kinds {
            kinds.insert((kind.kind.clone(), kind.plural.clone()));
        }
    }
    Ok(kinds)
}

/// `text` (values-schema's metadata.yml) with its first rule's resources
/// and Artifact Hub's kinds those of `kinds`.
fn render(text: &str, kinds: &BTreeSet<(String, String)>) -> Result<String, String> {
    let mut plurals: Vec<&str> = kinds.iter().map(|(_, p)| p.as_str()).collect();
    plurals.sort_unstable();
    let names: Vec<&str> = kinds.iter().map(|(k, _)| k.as_str()).collect();
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    let mut replaced = false;
    while let Some(line) = lines.next() {
        if line == "  resources:" && !replaced {
            out.push_str(line);
            out.push('\n');
            while lines.peek().is_some_and(|l| l.starts_with("  - ")) {
                lines.next();
            }
            for plural in &plurals {
                out.push_str(&format!("  - {plural}\n"));
            }
            replaced = true;
        } else if line.starts_with(ARTIFACTHUB) {
            out.push_str(&format!("{ARTIFACTHUB}{}\n", names.join(", ")));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !replaced {
        return Err(format!("{METADATA} has no `  resources:` list to write"));
    }
    Ok(out)
}

/// Writes values-schema's metadata.yml when its kinds are not the
/// releases'; the files written.
pub fn write(root: &Path) -> Result<Vec<PathBuf>, String> {
    let path = root.join(METADATA);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let rendered = render(&text, &kinds(root)?)?;
    if rendered == text {
        return Ok(Vec::new());
    }
    std::fs::write(&path, rendered).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(vec![path])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// values-schema's rules name every kind of every release file.
    #[test]
    fn values_schema_names_every_kind_of_every_release() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(root.join(METADATA)).unwrap();
        let kinds = kinds(&root).unwrap();
        assert!(kinds.iter().any(|(k, p)| k == "ComputePlane" && p == "computeplanes"));
        assert!(
            render(&text, &kinds).unwrap() == text,
            "{METADATA} does not name every kind of releases/: run `cargo xtask import-release --refresh`"
        );
    }

    #[test]
    fn the_lists_are_rewritten_in_place() {
        let text = "rules:\n- apiGroups: [\"apps.cozystack.io\"]\n  resources:\n  - old\n  operations: [\"CREATE\"]\n\
                    annotations:\n  io.artifacthub.resources: Old\n";
        let kinds = [("B", "bs"), ("A", "as")]
            .into_iter()
            .map(|(k, p)| (k.to_owned(), p.to_owned()))
            .collect();
        assert_eq!(
            render(text, &kinds).unwrap(),
            "rules:\n- apiGroups: [\"apps.cozystack.io\"]\n  resources:\n  - as\n  - bs\n  operations: [\"CREATE\"]\n\
             annotations:\n  io.artifacthub.resources: A, B\n"
        );
    }
}
