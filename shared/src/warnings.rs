//! Warnings fitted to what the Kubernetes API server passes on.
//!
//! The API server turns each admission warning into one `Warning` response
//! header (`k8s.io/apiserver/pkg/endpoints/filters/warning.go`): the text
//! must be one line of header-safe characters, is cut to 256 characters once
//! a response's warnings pass 4 KiB, and warnings beyond that are dropped
//! without a word. Every webhook and policy on a request shares that budget,
//! so a policy keeps its own part small and says when it had more to say.
//! Host errors are multi-line (policy-server appends a stack backtrace to a
//! failed host call); only their first line means anything to a person.

/// A warning longer than this is cut, ending in `...`: the API server's
/// own limit.
pub const MAX_CHARS: usize = 256;

/// The most warnings one response carries, counting the one that says how
/// many more there were.
pub const MAX_WARNINGS: usize = 10;

/// The most characters the warnings of one response carry together: half
/// of the API server's 4 KiB, so that other policies on the same request
/// keep room for theirs.
pub const MAX_TOTAL_CHARS: usize = 2048;

/// The longest the closing "N more" warning can be.
const SUMMARY_CHARS: usize = 100;

/// `text` as a warning: its first line, in header-safe characters (printable
/// ASCII; typographic punctuation spelled in ASCII, other characters
/// escaped as `\u{..}`), cut to [`MAX_CHARS`].
pub fn one_line(text: &str) -> String {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    let mut line = String::with_capacity(first.map_or(0, str::len));
    for c in first.unwrap_or_default().chars() {
        match c {
            ' '..='~' => line.push(c),
            '\t' => line.push(' '),
            '\u{2018}' | '\u{2019}' => line.push('\''),
            '\u{201c}' | '\u{201d}' => line.push('"'),
            '\u{2013}' | '\u{2014}' => line.push('-'),
            '\u{2026}' => line.push_str("..."),
            c if c.is_control() => line.push(' '),
            c => line.extend(c.escape_unicode()),
        }
    }
    if line.chars().count() > MAX_CHARS {
        // Everything above is ASCII, so bytes are characters.
        line.truncate(MAX_CHARS - 3);
        line.push_str("...");
    }
    line
}

/// The warnings a response carries: each made [`one_line`], at most
/// [`MAX_WARNINGS`] of them and [`MAX_TOTAL_CHARS`] in all; when some do not
/// fit, the last one, starting with `summary_tag`, says how many were left
/// out.
pub fn fit(warnings: impl IntoIterator<Item = impl AsRef<str>>, summary_tag: &str) -> Vec<String> {
    let lines: Vec<String> = warnings
        .into_iter()
        .map(|w| one_line(w.as_ref()))
        .filter(|w| !w.is_empty())
        .collect();
    let mut kept = Vec::new();
    let mut used = 0;
    let count = lines.len();
    for (i, line) in lines.into_iter().enumerate() {
        let last = i + 1 == count;
        let (slots, reserve) = if last {
            (1, 0)
        } else {
            (2, SUMMARY_CHARS + summary_tag.len())
        };
        if kept.len() + slots > MAX_WARNINGS || used + line.len() + reserve > MAX_TOTAL_CHARS {
            break;
        }
        used += line.len();
        kept.push(line);
    }
    let left_out = count - kept.len();
    if left_out > 0 {
        kept.push(format!(
            "{summary_tag}{left_out} more warning{} not shown: the API server passes on only about 4 KB of warnings per request",
            if left_out == 1 { "" } else { "s" }
        ));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_errors_keep_their_first_line() {
        let kwctl = "Callback evaluation failure: kube::Client was not initialized properly\n\nStack backtrace:\n   0: <unknown>\n   1: <unknown>";
        assert_eq!(
            one_line(kwctl),
            "Callback evaluation failure: kube::Client was not initialized properly"
        );
        assert_eq!(one_line("\n\n  second  \nthird"), "second");
        assert_eq!(one_line("\n \n"), "");
    }

    #[test]
    fn lines_are_header_safe() {
        assert_eq!(
            one_line("a\tb \u{7f}c \u{85}d — “e” ‘f’ …"),
            "a b  c  d - \"e\" 'f' ..."
        );
        assert_eq!(one_line("Müller 日"), "M\\u{fc}ller \\u{65e5}");
        let long = one_line(&"é".repeat(300));
        assert_eq!(long.len(), MAX_CHARS);
        assert!(long.ends_with("..."));
        assert!(long.bytes().all(|b| (b' '..=b'~').contains(&b)));
    }

    #[test]
    fn a_response_carries_a_bounded_number_of_warnings() {
        let few = fit(["one", "two"], "");
        assert_eq!(few, vec!["one", "two"]);
        let many: Vec<String> = (0..25).map(|i| format!("warning {i}")).collect();
        let fitted = fit(&many, "");
        assert_eq!(fitted.len(), MAX_WARNINGS);
        assert_eq!(fitted[8], "warning 8");
        assert_eq!(
            fitted[9],
            "16 more warnings not shown: the API server passes on only about 4 KB of warnings per request"
        );
        assert!(fitted[9].len() <= SUMMARY_CHARS);
        // Exactly the limit: no summary needed.
        let ten: Vec<String> = (0..10).map(|i| format!("w{i}")).collect();
        assert_eq!(fit(&ten, ""), ten);
    }

    #[test]
    fn a_response_carries_a_bounded_number_of_characters() {
        let long: Vec<String> = (0..9).map(|i| format!("{i}{}", "x".repeat(400))).collect();
        let fitted = fit(&long, "");
        let total: usize = fitted.iter().map(String::len).sum();
        assert!(total <= MAX_TOTAL_CHARS, "{total}");
        assert_eq!(fitted.len(), 8, "seven warnings of 256 and the summary");
        assert!(fitted[6].starts_with('6'));
        assert!(fitted[7].starts_with("2 more warnings not shown"));
        assert_eq!(fit([""], ""), Vec::<String>::new());
    }
}
