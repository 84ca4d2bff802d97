//! Kubernetes name and label validators, with apimachinery's semantics.

/// RFC 1123 label: at most 63 lowercase alphanumerics or `-`, starting and
/// ending with an alphanumeric (namespaces, most object names).
pub fn is_dns1123_label(value: &str) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// RFC 1123 subdomain: dot-separated labels, at most 253 characters.
pub fn is_dns1123_subdomain(value: &str) -> bool {
    value.len() <= 253 && value.split('.').all(is_dns1123_label)
}

fn is_name_part(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// apimachinery `IsQualifiedName`: an optional DNS subdomain prefix and `/`,
/// then a name of at most 63 characters, alphanumeric at both ends, with
/// `-`, `_` and `.` inside. Label keys and annotation keys have this shape.
/// The error says what is wrong, in apimachinery's words.
pub fn check_qualified_name(value: &str) -> Result<(), String> {
    let (prefix, name) = match value.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, value),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Err("prefix part must be non-empty".to_owned());
        }
        if !is_dns1123_subdomain(prefix) {
            return Err("prefix part must be a lowercase RFC 1123 subdomain".to_owned());
        }
    }
    if name.is_empty() {
        return Err("name part must be non-empty".to_owned());
    }
    if name.len() > 63 {
        return Err("name part must be no more than 63 characters".to_owned());
    }
    if name.contains('/') || !is_name_part(name) {
        return Err(
            "name part must consist of alphanumeric characters, '-', '_' or '.', \
             and must start and end with an alphanumeric character"
                .to_owned(),
        );
    }
    Ok(())
}

/// apimachinery `IsValidLabelValue`: empty, or at most 63 characters,
/// alphanumeric at both ends, with `-`, `_` and `.` inside.
pub fn check_label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    if value.len() > 63 {
        return Err("must be no more than 63 characters".to_owned());
    }
    if !is_name_part(value) {
        return Err(
            "a valid label must be an empty string or consist of alphanumeric characters, \
             '-', '_' or '.', and must start and end with an alphanumeric character"
                .to_owned(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns1123_labels() {
        for ok in ["a", "tenant-foo", "0abc", &"a".repeat(63)] {
            assert!(is_dns1123_label(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", &"a".repeat(64)] {
            assert!(!is_dns1123_label(bad), "{bad}");
        }
    }

    #[test]
    fn qualified_names() {
        for ok in [
            "no-delete",
            "platform.cozystack.io/no-delete",
            "a_b.c",
            "x/Y",
        ] {
            assert_eq!(check_qualified_name(ok), Ok(()), "{ok}");
        }
        assert_eq!(
            check_qualified_name(&"a".repeat(64)).unwrap_err(),
            "name part must be no more than 63 characters"
        );
        assert_eq!(
            check_qualified_name("/a").unwrap_err(),
            "prefix part must be non-empty"
        );
        assert!(
            check_qualified_name("Upper.io/a")
                .unwrap_err()
                .starts_with("prefix part")
        );
        for bad in ["", "a/", "-a", "a b", "a/b/c", "a."] {
            assert!(check_qualified_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn label_values() {
        for ok in ["", "true", "a-b_c.d", &"a".repeat(63)] {
            assert_eq!(check_label_value(ok), Ok(()), "{ok}");
        }
        for bad in ["-a", "a b", "é", &"a".repeat(64)] {
            assert!(check_label_value(bad).is_err(), "{bad}");
        }
    }
}
