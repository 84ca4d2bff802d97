//! The advice a message gives: the fix a report shows beside a finding,
//! and the lines that are only advice for the line before them.

use crate::finding::Line;

/// Verbs our messages start their advice with ("…: set it to one of …",
/// "…; remove one of them").
const FIX_VERBS: &[&str] = &[
    "add", "annotate", "change", "choose", "declare", "delete", "disable", "drop", "enable",
    "give", "keep", "label", "lift", "list", "lower", "move", "omit", "pick", "put", "raise",
    "remove", "rename", "replace", "restore", "run", "select", "set", "specify", "unset",
    "upgrade", "use", "wait", "write",
];

/// The advice in a message: the first clause (after `: `, `; `, ` — ` or a
/// sentence end) that starts with an imperative or is a `kubectl` command to
/// run, up to the end of its sentence, without the `(deny: <rule>)` note;
/// empty when there is none.
pub fn fix(text: &str) -> String {
    let starts = std::iter::once(0).chain(
        [": ", "; ", " — ", ". "]
            .iter()
            .flat_map(|sep| text.match_indices(sep).map(|(at, s)| at + s.len())),
    );
    let mut starts: Vec<usize> = starts.collect();
    starts.sort_unstable();
    for start in starts {
        let Some(clause) = text.get(start..) else {
            continue;
        };
        let word: String = clause
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect::<String>()
            .to_ascii_lowercase();
        if FIX_VERBS.contains(&word.as_str()) || word == "kubectl" {
            return tidy(clause);
        }
    }
    String::new()
}

fn tidy(clause: &str) -> String {
    let end = [". ", "; "]
        .iter()
        .filter_map(|sep| clause.find(sep))
        .min()
        .unwrap_or(clause.len());
    let clause = clause.get(..end).unwrap_or(clause);
    let clause = match clause.rfind(" (deny: ") {
        Some(at) if clause.ends_with(')') => clause.get(..at).unwrap_or(clause),
        _ => clause,
    };
    clause.trim_end_matches('.').trim().to_owned()
}

/// Whether a line is only advice for the line before it ("Set
/// spec.addons.gpuOperator.enabled: true").
pub fn is_advice(line: &Line) -> bool {
    line.field.is_empty() && fix(&line.text) == tidy(&line.text) && !line.text.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Finding;

    #[test]
    fn the_fix_is_the_imperative_clause() {
        assert_eq!(
            fix("provider is required: set it to one of cloudflare"),
            "set it to one of cloudflare"
        );
        assert_eq!(
            fix(
                "duplicates spec.attachments[0] (Postgres \"db\"); remove one of them (deny: duplicate-attachment)"
            ),
            "remove one of them"
        );
        assert_eq!(
            fix(
                "not checked: it fails; set platformOidcEnabled in the policy settings. Package x: denied"
            ),
            "set platformOidcEnabled in the policy settings"
        );
        assert_eq!(
            fix(
                "Deletion blocked. To delete it, first lift the protection: kubectl label pods debug platform.cozystack.io/no-delete-"
            ),
            "kubectl label pods debug platform.cozystack.io/no-delete-"
        );
        assert_eq!(fix("the name of the release MUST BE etcd"), "");
        assert_eq!(fix("settings are unset"), "");
    }

    #[test]
    fn a_lone_imperative_line_is_advice() {
        assert!(is_advice(&Finding::read_line(
            "Set spec.addons.gpuOperator.enabled: true"
        )));
        assert!(!is_advice(&Finding::read_line("spec.x: set it")));
        assert!(!is_advice(&Finding::read_line("the chart fails: set it")));
    }
}
