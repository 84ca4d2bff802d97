//! Which rules follow which chart file: the files each rule's doc comment
//! names as its source (`Source: \`apps/kubernetes/templates/cluster.yaml\``
//! in `policies/<policy>/src/rules.rs`), so a release's new or removed
//! template calls can name the rules they touch.

use std::path::Path;

use crate::tree::{read, sorted_dir};

/// How a chart file's path starts: `apps/kubernetes/templates/cluster.yaml`.
/// A path relative to a chart the doc names in words (`templates/x.yaml`)
/// is ambiguous and not used.
const GROUPS: &[&str] = &["apps/", "extra/", "system/", "library/", "core/"];

/// One rule and the chart files its source names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced {
    /// `chart-render/node-group-resources`.
    pub tag: String,
    /// `apps/kubernetes/templates/cluster.yaml`, without `packages/`.
    pub files: Vec<String>,
}

/// Every rule of every policy under `root/policies` whose source names a
/// chart file.
pub fn read_all(root: &Path) -> Result<Vec<Sourced>, String> {
    let mut out = Vec::new();
    for policy in sorted_dir(&root.join("policies"))? {
        let file = policy.join("src").join("rules.rs");
        if !file.is_file() {
            continue;
        }
        let name = policy
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.extend(parse(&name, &read(&file)?));
    }
    Ok(out)
}

/// The rules of one `rules.rs`.
pub fn parse(policy: &str, source: &str) -> Vec<Sourced> {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = Vec::new();
    let mut doc: Vec<&str> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim();
        if let Some(text) = line.strip_prefix("///") {
            doc.push(text);
            continue;
        }
        if line.starts_with("pub const ") && line.contains(": Rule") {
            let id = lines
                .iter()
                .skip(i)
                .take(6)
                .find_map(|l| l.trim().strip_prefix("id: \""))
                .and_then(|rest| rest.split('"').next());
            let source_text = doc
                .iter()
                .skip_while(|l| !l.contains("Source:"))
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            let files: Vec<String> = backquoted(&source_text)
                .iter()
                .flat_map(|span| expand(span))
                .map(|path| path.strip_prefix("packages/").unwrap_or(&path).to_owned())
                .filter(|path| GROUPS.iter().any(|group| path.starts_with(group)))
                .collect();
            if let Some(id) = id
                && !files.is_empty()
            {
                out.push(Sourced {
                    tag: format!("{policy}/{id}"),
                    files,
                });
            }
        }
        doc.clear();
    }
    out
}

/// The spans between backquotes.
fn backquoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// `extra/{etcd,ingress}/x.yaml` as `extra/etcd/x.yaml`, `extra/ingress/x.yaml`
/// (one brace group).
fn expand(span: &str) -> Vec<String> {
    let span = span.split_whitespace().next().unwrap_or_default();
    match (span.find('{'), span.find('}')) {
        (Some(open), Some(close)) if open < close => {
            let (head, tail) = (&span[..open], &span[close + 1..]);
            span[open + 1..close]
                .split(',')
                .map(|choice| format!("{head}{}{tail}", choice.trim()))
                .collect()
        }
        _ => vec![span.to_owned()],
    }
}

/// The rules whose source names the file `path` (`apps/kubernetes/templates/cluster.yaml`).
pub fn touching<'r>(rules: &'r [Sourced], path: &str) -> Vec<&'r str> {
    rules
        .iter()
        .filter(|rule| rule.files.iter().any(|file| path.ends_with(file.as_str())))
        .map(|rule| rule.tag.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_read_from_doc_comments() {
        let source = r#"
/// A name the chart fixes.
///
/// Source: `extra/{etcd,monitoring}/templates/check-release-name.yaml`.
pub const FIXED_NAME: Rule = Rule {
    policy: POLICY,
    id: "fixed-name",
    level: Level::Deny,
};

/// Half-set resources.
///
/// Source: `packages/apps/kubernetes/templates/cluster.yaml` (525), release notes.
pub const NODE_GROUP_RESOURCES: Rule = Rule {
    policy: POLICY,
    id: "node-group-resources",
    level: Level::Deny,
};

/// Nothing from a chart.
///
/// Source: Kubernetes version skew policy.
pub const VERSION_DOWNGRADE: Rule = Rule {
    policy: POLICY,
    id: "version-downgrade",
    level: Level::Warn,
};
"#;
        let rules = parse("chart-render", source);
        assert_eq!(
            rules,
            [
                Sourced {
                    tag: "chart-render/fixed-name".to_owned(),
                    files: vec![
                        "extra/etcd/templates/check-release-name.yaml".to_owned(),
                        "extra/monitoring/templates/check-release-name.yaml".to_owned()
                    ],
                },
                Sourced {
                    tag: "chart-render/node-group-resources".to_owned(),
                    files: vec!["apps/kubernetes/templates/cluster.yaml".to_owned()],
                },
            ]
        );
        assert_eq!(
            touching(&rules, "apps/kubernetes/templates/cluster.yaml"),
            ["chart-render/node-group-resources"]
        );
        assert!(touching(&rules, "apps/postgres/templates/db.yaml").is_empty());
    }
}
