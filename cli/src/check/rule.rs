//! Rule ids on message lines: `[<policy>/<rule>] <field path>: <text>`.
//! Lines of modules built before every rule carried its tag read as the
//! policy's `unknown` rule, so older bundles still check.

use shared::{Finding, ParsedLine};

/// The id of a check's own findings about its input.
pub const UNRESOLVED_VARIABLE: &str = "check/unresolved-variable";

/// A message line split into its rule id and finding (the tag read by
/// [`Finding::parse_line`], the policy's `unknown` rule without one).
pub fn parse_line(policy: &str, line: &str) -> (String, ParsedLine) {
    let parsed = Finding::parse_line(line);
    let rule = parsed
        .rule
        .clone()
        .unwrap_or_else(|| format!("{policy}/unknown"));
    (rule, parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_lines_give_their_rule_and_path() {
        let (rule, finding) = parse_line(
            "oidc-config",
            "[oidc-config/custom-config-exclusive] spec.oidc.enabled: set one of them",
        );
        assert_eq!(rule, "oidc-config/custom-config-exclusive");
        assert_eq!(finding.path.to_string(), "spec.oidc.enabled");
        assert_eq!(finding.message, "set one of them");
        let (rule, finding) = parse_line("no-delete", "[no-delete/protected] deleting is refused");
        assert_eq!(rule, "no-delete/protected");
        assert!(finding.path.is_root());
    }

    #[test]
    fn untagged_lines_fall_back_to_unknown() {
        let (rule, finding) = parse_line("storageclass-immutable", "spec.storageClass: immutable");
        assert_eq!(rule, "storageclass-immutable/unknown");
        assert_eq!(finding.path.to_string(), "spec.storageClass");
        let (rule, finding) = parse_line("p", "[not a tag] spec.x: y");
        assert_eq!(rule, "p/unknown");
        assert_eq!(finding.message, "[not a tag] spec.x: y");
    }
}
