//! Message text built without `core::fmt`.
//!
//! In a fresh wasm instance the first `format!` costs more than the field
//! lookup its message is about (measured: about 1 µs of
//! storageclass-immutable's rejection): the formatter reaches every
//! argument through function pointers that wasmtime resolves lazily in each
//! new instance. Messages on a benchmarked path are therefore concatenated,
//! with [`quoted`] where `{:?}` would quote a value.

/// `text` exactly as `format!("{text:?}")` renders it, without the
/// formatter for the usual case of printable ASCII.
pub fn quoted(text: &str) -> String {
    if text
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\')
    {
        ["\"", text, "\""].concat()
    } else {
        format!("{text:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_debug_formatting() {
        for text in [
            "",
            "local",
            "replicated",
            "with space ~",
            "quote \" inside",
            "back\\slash",
            "tab\tnew\nline",
            "é and 日本",
            "\u{7f}\u{0}",
        ] {
            assert_eq!(quoted(text), format!("{text:?}"), "{text:?}");
        }
    }
}
