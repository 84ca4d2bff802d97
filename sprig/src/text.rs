//! Sprig's functions of text: the names the charts build with
//! `kebabcase`, and what `toString` makes of a value (a float's
//! `toString` and `float64` are [`crate::float`]'s, a string's `int`
//! [`crate::int`]'s).

use serde_json::Value;

/// How `kebabcase` (huandu/xstrings `ToKebabCase`, which sprig calls) sees
/// a character; the string is cut into words of one type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

/// Go's `unicode.IsPunct` for ASCII: the P categories, which hold `-` and
/// `_` but not the symbols `$+<=>^`|~`.
fn is_go_punct(b: u8) -> bool {
    b"!\"#%&'()*,-./:;?@[\\]_{}".contains(&b)
}

/// xstrings' connectors: `-`, `_` and Go's `unicode.IsSpace`.
fn is_connector(b: u8) -> bool {
    matches!(b, b'-' | b'_' | b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The type and byte length of the word at the start of `text`
/// (xstrings `nextWord`, ASCII only).
fn next_word(text: &[u8]) -> (Word, usize) {
    let Some(&first) = text.first() else {
        return (Word::Other, 0);
    };
    let run = |from: usize, keep: &dyn Fn(u8) -> bool| {
        from + text
            .get(from..)
            .map_or(0, |rest| rest.iter().take_while(|&&b| keep(b)).count())
    };
    if is_connector(first) {
        (Word::Connector, run(1, &is_connector))
    } else if is_go_punct(first) {
        (Word::Punct, run(1, &is_go_punct))
    } else if first.is_ascii_uppercase() {
        match text.get(1) {
            Some(b) if b.is_ascii_uppercase() => {
                let end = run(1, &|b| b.is_ascii_uppercase());
                // "HTTPStatus": the last capital starts the next word.
                if text.get(end).is_some_and(u8::is_ascii_lowercase) {
                    (Word::Upper, end - 1)
                } else {
                    (Word::Upper, end)
                }
            }
            Some(b) if b.is_ascii_lowercase() => (Word::Upper, run(1, &|b| b.is_ascii_lowercase())),
            _ => (Word::Upper, 1),
        }
    } else if first.is_ascii_lowercase() {
        (Word::Alphabet, run(1, &|b| b.is_ascii_lowercase()))
    } else if first.is_ascii_digit() {
        (Word::Number, run(1, &|b| b.is_ascii_digit()))
    } else {
        (
            Word::Other,
            run(1, &|b| {
                !(is_connector(b) || b.is_ascii_alphanumeric() || is_go_punct(b))
            }),
        )
    }
}

/// The words of `text` in order.
fn words(text: &str) -> Vec<(Word, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (kind, len) = next_word(rest.as_bytes());
        out.push((kind, &rest[..len]));
        rest = &rest[len..];
    }
    out
}

/// xstrings `toLower`: capitals lowered and connectors made `-` in upper
/// and connector words, other words as they are.
fn lower(out: &mut String, kind: Word, word: &str) {
    if !matches!(kind, Word::Upper | Word::Connector) {
        out.push_str(word);
        return;
    }
    for b in word.bytes() {
        out.push(if is_connector(b) {
            '-'
        } else {
            char::from(b.to_ascii_lowercase())
        });
    }
}

/// Whether a `-` goes between a word and the next one of type `next`.
fn joins(next: Option<Word>) -> bool {
    next.is_some_and(|kind| !matches!(kind, Word::Connector | Word::Punct))
}

/// sprig's `kebabcase` of an ASCII string (`None` otherwise: no chart
/// name built from a non-ASCII key is valid, and the few Unicode rules
/// xstrings follows are not reproduced). It lowers capitals, makes
/// connectors (`_`, spaces) `-` except inside a punctuation run (`._`),
/// and puts `-` between words: `AppUser` → `app-user`, `abc123def` →
/// `abc-123def`, `HTTPServer` → `http-server`.
pub fn kebabcase(text: &str) -> Option<String> {
    if !text.is_ascii() {
        return None;
    }
    let mut words = words(text).into_iter().peekable();
    let mut out = String::with_capacity(text.len() + 8);
    // xstrings' loop: the current word, while another one follows.
    let mut current = words.next();
    while let Some((kind, word)) = current.filter(|_| words.peek().is_some()) {
        if kind != Word::Connector {
            lower(&mut out, kind, word);
        }
        current = words.next();
        match kind {
            Word::Number => {
                while let Some((k @ (Word::Alphabet | Word::Number), w)) = current {
                    lower(&mut out, k, w);
                    current = words.next();
                }
                if joins(current.map(|c| c.0)) {
                    out.push('-');
                }
            }
            Word::Connector => lower(&mut out, kind, word),
            Word::Punct => {}
            _ => {
                let Some((next, number)) = current else {
                    break;
                };
                if next != Word::Number {
                    if joins(Some(next)) {
                        out.push('-');
                    }
                    continue;
                }
                if words.peek().is_none() {
                    continue;
                }
                current = words.next();
                let after = current.map(|c| c.0);
                if after != Some(Word::Alphabet) {
                    // "Bld4Floor": the number belongs to the word before.
                    lower(&mut out, Word::Number, number);
                    if joins(after) {
                        out.push('-');
                    }
                    continue;
                }
                // "HTTP2xx": letters after the number start a new word.
                out.push('-');
                lower(&mut out, Word::Number, number);
                while let Some((k @ (Word::Alphabet | Word::Number), w)) = current {
                    lower(&mut out, k, w);
                    current = words.next();
                }
                if joins(current.map(|c| c.0)) {
                    out.push('-');
                }
            }
        }
    }
    if let Some((kind, word)) = current {
        lower(&mut out, kind, word);
    }
    Some(out)
}

/// sprig's `toString` of a value as a chart reads it from the values:
/// strings as they are, integers in decimal. `None` for what no rule reads
/// as a string here (other numbers, which the schemas refuse where a rule
/// reads them, lists, maps, booleans, null).
pub fn to_string(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => number
            .as_i64()
            .map(|int| int.to_string())
            .or_else(|| number.as_u64().map(|int| int.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pairs Helm's own `kebabcase` gave (helm-python-sdk 0.2.2, Helm
    /// v4.2.3's sprig), so the port is held to the real function.
    #[test]
    fn kebabcase_as_helm() {
        for (input, helm) in [
            ("App.User", "app.user"),
            ("AppUser", "app-user"),
            ("app_user", "app-user"),
            ("", ""),
            ("ABC", "abc"),
            ("ABCdef", "ab-cdef"),
            ("abc123", "abc123"),
            ("abc123def", "abc-123def"),
            ("123abc", "123abc"),
            ("a--b", "a--b"),
            ("-a", "-a"),
            ("a-", "a-"),
            ("a b", "a-b"),
            ("aB1", "a-b1"),
            ("HTTPServer", "http-server"),
            ("fooBar2Baz", "foo-bar2-baz"),
            ("a_-b", "a--b"),
            ("a/b", "a/b"),
            ("a:b", "a:b"),
            ("User1", "user1"),
            ("a1B", "a1-b"),
            ("_a", "-a"),
            ("a_", "a-"),
            ("a  b", "a--b"),
            ("A_B_C", "a-b-c"),
            ("camelCaseX", "camel-case-x"),
            ("xML", "x-ml"),
            ("a1b2", "a-1b2"),
            ("v1.2", "v1.2"),
            ("aB.Cd", "a-b.cd"),
            ("a\tb", "a-b"),
            ("a._b", "a._b"),
            ("a_.b", "a-.b"),
            ("aB-", "a-b-"),
            ("Ab_", "ab-"),
            ("1.A", "1.a"),
        ] {
            assert_eq!(kebabcase(input).as_deref(), Some(helm), "{input:?}");
        }
        assert_eq!(kebabcase("é"), None);
    }

    #[test]
    fn strings_as_go_prints_them() {
        assert_eq!(to_string(&Value::from("1Gi")).as_deref(), Some("1Gi"));
        assert_eq!(to_string(&Value::from(3)).as_deref(), Some("3"));
        assert_eq!(to_string(&Value::from(1.5)), None);
        assert_eq!(to_string(&Value::Bool(true)), None);
    }
}
