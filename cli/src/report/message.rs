//! One line of a policy's message, taken apart: the `[policy/rule]` tag
//! (when the policy writes one), the field path, the text, and the fix the
//! text names.

/// A message line read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// `(policy, rule)` from a leading `[policy/rule]`.
    pub tag: Option<(String, String)>,
    /// The field path, empty when the line is about the whole object.
    pub field: String,
    pub text: String,
}

/// Reads `[policy/rule] field.path: text`; the tag and the path are both
/// optional, as in the messages of policies written before rule ids.
pub fn parse(line: &str) -> Line {
    let (tag, rest) = split_tag(line.trim());
    let finding = shared::Finding::parse_line(rest);
    Line {
        tag,
        field: finding.path.to_string(),
        text: finding.message,
    }
}

fn split_tag(line: &str) -> (Option<(String, String)>, &str) {
    let tagged = line
        .strip_prefix('[')
        .and_then(|inner| inner.split_once(']'))
        .and_then(|(inner, rest)| {
            let (policy, rule) = inner.split_once('/')?;
            (is_id(policy) && is_id(rule))
                .then(|| ((policy.to_owned(), rule.to_owned()), rest.trim_start()))
        });
    match tagged {
        Some((tag, rest)) => (Some(tag), rest),
        None => (None, line),
    }
}

fn is_id(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

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

    #[test]
    fn a_tagged_line_gives_policy_rule_field_and_text() {
        let line = parse("[oidc-config/custom-config-exclusive] spec.oidc.enabled: must be true");
        assert_eq!(
            line.tag,
            Some((
                "oidc-config".to_owned(),
                "custom-config-exclusive".to_owned()
            ))
        );
        assert_eq!(line.field, "spec.oidc.enabled");
        assert_eq!(line.text, "must be true");
    }

    #[test]
    fn a_tag_without_a_path_is_about_the_object() {
        let line = parse("[no-delete/protected] Deletion blocked: remove the label first");
        assert_eq!(line.field, "");
        assert_eq!(line.text, "Deletion blocked: remove the label first");
    }

    #[test]
    fn an_untagged_line_keeps_its_path() {
        let line = parse("spec.attachments[1]: duplicates spec.attachments[0]; remove one of them");
        assert_eq!(line.tag, None);
        assert_eq!(line.field, "spec.attachments[1]");
    }

    #[test]
    fn brackets_that_are_no_tag_stay_in_the_text() {
        let line = parse("[not a tag] something");
        assert_eq!(line.tag, None);
        assert_eq!(line.text, "[not a tag] something");
    }

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
        assert!(is_advice(&parse(
            "Set spec.addons.gpuOperator.enabled: true"
        )));
        assert!(!is_advice(&parse("spec.x: set it")));
        assert!(!is_advice(&parse("the chart fails: set it")));
    }
}
