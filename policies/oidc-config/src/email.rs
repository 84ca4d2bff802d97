//! The Monitoring chart's email check, without a regex engine.
//!
//! `packages/system/monitoring/templates/_helpers.tpl` fails the render
//! unless every `spec.oidc.users[].email` matches
//! `^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$` (Go RE2: `$` is the
//! end of the text). The local part cannot contain `@`, so the address
//! splits at its only `@`; the top-level part holds letters only, so it can
//! only be what follows the domain's last dot. Matching reduces to those
//! two splits and byte-class checks.

/// The pattern, as messages quote it.
pub const PATTERN: &str = r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$";

fn is_local_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'%' | b'+' | b'-')
}

fn is_domain_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-')
}

/// Whether `email` matches [`PATTERN`] exactly as Go's `regexMatch` does.
pub fn matches_pattern(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    let Some((host, top)) = domain.rsplit_once('.') else {
        return false;
    };
    !local.is_empty()
        && local.bytes().all(is_local_byte)
        && !host.is_empty()
        && host.bytes().all(is_domain_byte)
        && top.len() >= 2
        && top.bytes().all(|b| b.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_the_chart_accepts() {
        for email in [
            "alice@example.org",
            "a.b_c%d+e-f@sub.example.co",
            "x@a.io",
            "x@1.2.3.example",
            "x@-.io",
            "x@a..io",
            "UPPER@EXAMPLE.ORG",
        ] {
            assert!(matches_pattern(email), "{email}");
        }
    }

    #[test]
    fn refuses_what_the_chart_refuses() {
        for email in [
            "",
            "alice at example",
            "alice@example",
            "alice@example.o",
            "alice@example.o2",
            "@example.org",
            "alice@.org",
            "alice@@example.org",
            "a@b@example.org",
            "alice@example.org ",
            " alice@example.org",
            "alice@example.org\n",
            "\"alice\"@example.org",
            "alicé@example.org",
            "alice@exämple.org",
            "alice@example.org.",
            "alice@[10.0.0.1]",
        ] {
            assert!(!matches_pattern(email), "{email:?}");
        }
    }
}
