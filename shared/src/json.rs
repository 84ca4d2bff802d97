//! A lazy view over JSON bytes.
//!
//! policy-server hands a policy the whole admission request, often 2–5 KB
//! with two copies of the object, while a rule needs a handful of fields.
//! Building a `serde_json::Value` of all of it costs more than the rest of
//! the evaluation together (measured: +75 % over an accept-all module), and
//! even a validating skip of every byte costs more than a rule's budget. So
//! this view reads as little as it can:
//!
//! - a [`Json`] knows where its value *starts*; where it ends is found only
//!   when needed, so reaching `request.object` does not read the rest of the
//!   request;
//! - a lookup stops at the first member with the key (Kubernetes never sends
//!   duplicate keys);
//! - the last member of a document can be found from its end
//!   ([`last_member`]), which is how the settings after a large request are
//!   reached without reading the request.
//!
//! Skipping an object or array classifies 64 bytes at a time
//! ([`containers`]) and counts the brackets outside strings; nothing is
//! allocated and nothing recurses, so hostile nesting cannot exhaust the
//! stack. The bytes come from the host, which always sends well-formed
//! JSON; regions that are skipped are not re-validated, but malformed input
//! never panics or loops: anything the view cannot follow is a
//! [`JsonError`].

mod containers;

use std::borrow::Cow;

use containers::container_end;

/// The type of a JSON value, from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    /// How messages name the type: "a string", "an object", ...
    pub fn described(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "a list",
            Kind::Object => "an object",
        }
    }
}

/// Bytes that are not the JSON they claim to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonError(&'static str);

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed JSON: {}", self.0)
    }
}

impl std::error::Error for JsonError {}

impl JsonError {
    /// An error with a fixed reason.
    pub(crate) const fn from_reason(reason: &'static str) -> Self {
        Self(reason)
    }
}

const UNEXPECTED_END: JsonError = JsonError("unexpected end of input");

/// One JSON value, borrowed from the document it was found in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Json<'a> {
    /// Starts at the value's first byte and runs to the end of the
    /// document: the value's own end is found only when it is needed.
    rest: &'a [u8],
}

impl std::fmt::Debug for Json<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Json({})", String::from_utf8_lossy(self.raw()))
    }
}

fn is_ws(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| is_ws(*b)) {
        at += 1;
    }
    at
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Marks (high bit) the bytes of `word` equal to `byte`. Only the lowest
/// mark is exact, which is all the searches below use.
pub(crate) fn marks(word: u64, byte: u8) -> u64 {
    let probe = word ^ (ONES * u64::from(byte));
    probe.wrapping_sub(ONES) & !probe & HIGHS
}

/// Marks the bytes of `word` below `limit` (at most 0x80); lowest exact.
pub(crate) fn marks_below(word: u64, limit: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS
}

/// Offset of the first byte of `bytes` that `word_marks` marks in its
/// eight-byte word (and `is_wanted` confirms in the tail): SWAR, because
/// wasm has no SIMD by default and every policy scans strings.
pub(crate) fn find_first(
    bytes: &[u8],
    word_marks: impl Fn(u64) -> u64,
    is_wanted: impl Fn(u8) -> bool,
) -> Option<usize> {
    let mut words = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in words.by_ref() {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or_default());
        let found = word_marks(word);
        if found != 0 {
            return Some(offset + usize::try_from(found.trailing_zeros() / 8).unwrap_or_default());
        }
        offset += 8;
    }
    words
        .remainder()
        .iter()
        .position(|b| is_wanted(*b))
        .map(|p| offset + p)
}

/// Offset of the first `"` or `\\` in `bytes`.
fn find_quote_or_escape(bytes: &[u8]) -> Option<usize> {
    find_first(
        bytes,
        |w| marks(w, b'"') | marks(w, b'\\'),
        |b| b == b'"' || b == b'\\',
    )
}

/// Length of the string body that starts `rest` (just after the opening
/// quote), closing quote included.
fn string_body_len(rest: &[u8]) -> Result<usize, JsonError> {
    let mut i = 0;
    loop {
        let tail = rest.get(i..).ok_or(UNEXPECTED_END)?;
        i += find_quote_or_escape(tail).ok_or(UNEXPECTED_END)?;
        if rest.get(i) == Some(&b'"') {
            return Ok(i + 1);
        }
        // An escape: the next byte is part of it, whatever it is.
        i += 2;
    }
}

/// Index just past the string that starts at `at` (which holds `"`).
fn string_end(bytes: &[u8], at: usize) -> Result<usize, JsonError> {
    let rest = bytes.get(at + 1..).ok_or(UNEXPECTED_END)?;
    Ok(at + 1 + string_body_len(rest)?)
}

/// Index just past the value that starts at `at`.
fn value_end(bytes: &[u8], at: usize) -> Result<usize, JsonError> {
    match bytes.get(at) {
        Some(b'"') => string_end(bytes, at),
        Some(b'{' | b'[') => container_end(bytes, at),
        Some(b't') => literal_end(bytes, at, b"true"),
        Some(b'f') => literal_end(bytes, at, b"false"),
        Some(b'n') => literal_end(bytes, at, b"null"),
        Some(b'-' | b'0'..=b'9') => {
            let rest = bytes.get(at + 1..).unwrap_or_default();
            let len = rest
                .iter()
                .position(|b| !matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'))
                .unwrap_or(rest.len());
            Ok(at + 1 + len)
        }
        Some(_) => Err(JsonError("unexpected character")),
        None => Err(UNEXPECTED_END),
    }
}

fn literal_end(bytes: &[u8], at: usize, literal: &[u8]) -> Result<usize, JsonError> {
    let end = at + literal.len();
    if bytes.get(at..end) == Some(literal) {
        Ok(end)
    } else {
        Err(JsonError("invalid literal"))
    }
}

/// Decodes a JSON string token (quotes included), borrowing when it has no
/// escapes.
fn decode_string(raw: &[u8]) -> Result<Cow<'_, str>, JsonError> {
    let inner = raw
        .get(1..raw.len().saturating_sub(1))
        .ok_or(JsonError("not a string"))?;
    if !inner.contains(&b'\\') {
        return std::str::from_utf8(inner)
            .map(Cow::Borrowed)
            .map_err(|_| JsonError("string is not UTF-8"));
    }
    serde_json::from_slice::<String>(raw)
        .map(Cow::Owned)
        .map_err(|_| JsonError("invalid string escape"))
}

/// Whether a string token equals `key`. Escapes only make a token longer
/// than its text, so bytes and lengths decide almost every comparison
/// without decoding (and without searching for backslashes, which in wasm
/// costs a call per member).
pub(crate) fn key_equals(raw: &[u8], key: &str) -> bool {
    let Some(inner) = raw.get(1..raw.len().saturating_sub(1)) else {
        return false;
    };
    let wanted = key.as_bytes();
    if inner == wanted {
        // The same bytes are the same text unless they hold an escape,
        // which a backslash in the wanted text would be.
        return !wanted.contains(&b'\\');
    }
    // Different bytes are the same text only through escapes, which make
    // the token longer; its first byte rules out almost every other key.
    inner.len() > wanted.len()
        && (inner.first() == wanted.first() || inner.first() == Some(&b'\\'))
        && inner.contains(&b'\\')
        && decode_string(raw).is_ok_and(|decoded| decoded == key)
}

fn trimmed(bytes: &[u8]) -> &[u8] {
    let start = skip_ws(bytes, 0);
    let end = bytes
        .iter()
        .rposition(|b| !is_ws(*b))
        .map_or(start, |last| last + 1);
    bytes.get(start..end).unwrap_or_default()
}

impl<'a> Json<'a> {
    /// The single value in `bytes` (surrounding whitespace allowed), checked
    /// to the end.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, JsonError> {
        let start = skip_ws(bytes, 0);
        let end = value_end(bytes, start)?;
        if skip_ws(bytes, end) != bytes.len() {
            return Err(JsonError("trailing characters after the value"));
        }
        bytes
            .get(start..end)
            .map(|rest| Json { rest })
            .ok_or(UNEXPECTED_END)
    }

    /// The object or array spanning all of `bytes`, checked only at its
    /// ends: what is read of it is checked as it is read, what is never read
    /// is never scanned. Other values fall back to [`Json::parse`].
    pub fn parse_lazy(bytes: &'a [u8]) -> Result<Self, JsonError> {
        let rest = trimmed(bytes);
        match (rest.first(), rest.last()) {
            (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']')) if rest.len() >= 2 => {
                Ok(Json { rest })
            }
            _ => Self::parse(bytes),
        }
    }

    /// Where `inner` starts within this value's bytes, when `inner` was read
    /// from this document at or after this value's start (both views run to
    /// the document's end, so the offset is the difference of their
    /// lengths; the pointers confirm it).
    pub(crate) fn offset_of(&self, inner: &Json<'_>) -> Option<usize> {
        let offset = self.rest.len().checked_sub(inner.rest.len())?;
        let tail = self.rest.get(offset..)?;
        std::ptr::eq(tail.as_ptr(), inner.rest.as_ptr()).then_some(offset)
    }

    /// The value's type.
    pub fn kind(&self) -> Kind {
        match self.rest.first() {
            Some(b'"') => Kind::String,
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'n') | None => Kind::Null,
            Some(_) => Kind::Number,
        }
    }

    /// Exactly the value's bytes (scans to its end; empty if it has none).
    pub fn raw(&self) -> &'a [u8] {
        let end = value_end(self.rest, 0).unwrap_or(self.rest.len());
        self.rest.get(..end).unwrap_or_default()
    }

    /// The string, decoded; `None` for other types.
    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        if self.kind() != Kind::String {
            return None;
        }
        // One search finds the closing quote of a string without escapes,
        // the usual case; only an escape sends the string through serde.
        let body = self.rest.get(1..)?;
        let at = find_quote_or_escape(body)?;
        if body.get(at) == Some(&b'"') {
            return body
                .get(..at)
                .and_then(|b| std::str::from_utf8(b).ok())
                .map(Cow::Borrowed);
        }
        decode_string(self.raw()).ok()
    }

    /// The boolean; `None` for other types.
    pub fn as_bool(&self) -> Option<bool> {
        match self.raw() {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        }
    }

    /// The number as an integer, if it is one that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self.kind() {
            Kind::Number => std::str::from_utf8(self.raw()).ok()?.parse().ok(),
            _ => None,
        }
    }

    /// The members of an object in document order; empty for other types.
    pub fn members(&self) -> Members<'a> {
        Members(Cursor::new(self.rest, b'{', b'}'))
    }

    /// The elements of an array in order; empty for other types.
    pub fn elements(&self) -> Elements<'a> {
        Elements(Cursor::new(self.rest, b'[', b']'))
    }

    /// The value of the first member `key` of an object (`None` when absent
    /// or when this is not an object). Stops reading at that member.
    pub fn get(&self, key: &str) -> Result<Option<Json<'a>>, JsonError> {
        let [value] = self.get_all([key])?;
        Ok(value)
    }

    /// The values of the first members named `keys`, read in one walk that
    /// stops when all are found; `None` for absent ones, and for all of
    /// them when this is not an object.
    pub fn get_all<const N: usize>(
        &self,
        keys: [&str; N],
    ) -> Result<[Option<Json<'a>>; N], JsonError> {
        let mut found: [Option<Json<'a>>; N] = [None; N];
        let mut missing = N;
        for member in self.members() {
            let (name, value) = member?;
            let slot = keys
                .iter()
                .position(|key| key_equals(name, key))
                .and_then(|i| found.get_mut(i))
                .filter(|slot| slot.is_none());
            if let Some(slot) = slot {
                *slot = Some(value);
                missing -= 1;
                if missing == 0 {
                    break;
                }
            }
        }
        Ok(found)
    }

    /// Decodes the value with serde; meant for small subtrees.
    pub fn deserialize<T: serde::Deserialize<'a>>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(self.raw())
    }
}

/// Where a walk over a container's items stands.
#[derive(Debug, Clone, Copy)]
enum Position {
    /// Just inside the opening bracket.
    Start,
    /// An item whose value starts here was handed out; where it ends is
    /// found only when the walk moves on, so handing out `request` does not
    /// read the request.
    After(usize),
    Done,
}

/// Walks the items of one object or array.
#[derive(Debug)]
struct Cursor<'a> {
    bytes: &'a [u8],
    position: Position,
    close: u8,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8], open: u8, close: u8) -> Self {
        let position = if bytes.first() == Some(&open) {
            Position::Start
        } else {
            Position::Done
        };
        Self {
            bytes,
            position,
            close,
        }
    }

    /// Index where the next item starts, `None` at the closing bracket.
    fn next_start(&mut self) -> Result<Option<usize>, JsonError> {
        let (at, first) = match self.position {
            Position::Done => return Ok(None),
            Position::Start => (1, true),
            Position::After(start) => (value_end(self.bytes, start)?, false),
        };
        let mut i = skip_ws(self.bytes, at);
        match self.bytes.get(i) {
            Some(b) if *b == self.close => return Ok(None),
            Some(b',') if !first => i = skip_ws(self.bytes, i + 1),
            Some(_) if first => {}
            Some(_) => return Err(JsonError("expected ',' between items")),
            None => return Err(UNEXPECTED_END),
        }
        Ok(Some(i))
    }

    /// Runs one step, recording where the handed-out value starts, and ends
    /// the walk at the close or on the first error.
    fn step<T>(
        &mut self,
        item: impl FnOnce(&Self, usize) -> Result<(T, usize), JsonError>,
    ) -> Option<Result<T, JsonError>> {
        let outcome = self.next_start().and_then(|start| match start {
            Some(start) => item(self, start).map(Some),
            None => Ok(None),
        });
        match outcome {
            Ok(Some((value, value_start))) => {
                self.position = Position::After(value_start);
                Some(Ok(value))
            }
            Ok(None) => {
                self.position = Position::Done;
                None
            }
            Err(e) => {
                self.position = Position::Done;
                Some(Err(e))
            }
        }
    }

    fn value_at(&self, start: usize) -> Result<Json<'a>, JsonError> {
        match self.bytes.get(start..) {
            Some(
                rest @ [
                    b'"' | b'{' | b'[' | b't' | b'f' | b'n' | b'-' | b'0'..=b'9',
                    ..,
                ],
            ) => Ok(Json { rest }),
            Some([_, ..]) => Err(JsonError("unexpected character")),
            _ => Err(UNEXPECTED_END),
        }
    }
}

/// Iterator over object members: raw key token and value.
#[derive(Debug)]
pub struct Members<'a>(Cursor<'a>);

impl<'a> Iterator for Members<'a> {
    type Item = Result<(&'a [u8], Json<'a>), JsonError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.step(|cursor, key_start| {
            let bytes = cursor.bytes;
            if bytes.get(key_start) != Some(&b'"') {
                return Err(JsonError("expected a member name"));
            }
            let key_end = string_end(bytes, key_start)?;
            let colon = skip_ws(bytes, key_end);
            if bytes.get(colon) != Some(&b':') {
                return Err(JsonError("expected ':' after a member name"));
            }
            let value_start = skip_ws(bytes, colon + 1);
            let key = bytes.get(key_start..key_end).ok_or(UNEXPECTED_END)?;
            Ok(((key, cursor.value_at(value_start)?), value_start))
        })
    }
}

/// Iterator over array elements.
#[derive(Debug)]
pub struct Elements<'a>(Cursor<'a>);

impl<'a> Iterator for Elements<'a> {
    type Item = Result<Json<'a>, JsonError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0
            .step(|cursor, start| Ok((cursor.value_at(start)?, start)))
    }
}

/// Index of the opening quote of the string whose closing quote is at
/// `close`: the nearest earlier quote not escaped by an odd run of
/// backslashes.
fn string_start_backward(bytes: &[u8], close: usize) -> Option<usize> {
    let mut end = close;
    loop {
        let quote = bytes.get(..end)?.iter().rposition(|b| *b == b'"')?;
        let backslashes = bytes
            .get(..quote)?
            .iter()
            .rev()
            .take_while(|b| **b == b'\\')
            .count();
        if backslashes % 2 == 0 {
            return Some(quote);
        }
        end = quote;
    }
}

/// Start of the value whose last byte is at `last`, found scanning
/// backwards (the mirror of [`value_end`]).
fn value_start_backward(bytes: &[u8], last: usize) -> Option<usize> {
    match bytes.get(last)? {
        b'"' => string_start_backward(bytes, last),
        b'}' | b']' => {
            let mut depth: usize = 0;
            let mut i = last;
            loop {
                match bytes.get(i)? {
                    b'"' => i = string_start_backward(bytes, i)?,
                    b'}' | b']' => depth += 1,
                    b'{' | b'[' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i);
                        }
                    }
                    _ => {}
                }
                i = i.checked_sub(1)?;
            }
        }
        _ => {
            let head = bytes.get(..=last)?;
            let len = head
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
                .count();
            last.checked_sub(len.checked_sub(1)?)
        }
    }
}

/// Index of the last non-whitespace byte before `end`.
fn last_non_ws_before(bytes: &[u8], end: usize) -> Option<usize> {
    bytes.get(..end)?.iter().rposition(|b| !is_ws(*b))
}

/// The last member of the object that makes up all of `document`, found
/// from its end without reading the rest: policy-server puts `settings`
/// after a request of several kilobytes. `None` when the document does not
/// end like an object member (callers then look forwards).
pub fn last_member(document: &[u8]) -> Option<(&[u8], Json<'_>)> {
    let close = last_non_ws_before(document, document.len())?;
    if document.get(close) != Some(&b'}') {
        return None;
    }
    let value_last = last_non_ws_before(document, close)?;
    let value_start = value_start_backward(document, value_last)?;
    let colon = last_non_ws_before(document, value_start)?;
    if document.get(colon) != Some(&b':') {
        return None;
    }
    let key_last = last_non_ws_before(document, colon)?;
    let key_start = string_start_backward(document, key_last)
        .filter(|_| document.get(key_last) == Some(&b'"'))?;
    let before_key = last_non_ws_before(document, key_start)?;
    if !matches!(document.get(before_key), Some(b',' | b'{')) {
        return None;
    }
    let key = document.get(key_start..=key_last)?;
    let value = document.get(value_start..=value_last)?;
    Some((key, Json { rest: value }))
}

/// Decodes a raw member name as returned by [`Json::members`].
pub fn member_name(raw: &[u8]) -> Result<Cow<'_, str>, JsonError> {
    decode_string(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn parse(text: &str) -> Json<'_> {
        Json::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn several_members_are_found_in_one_walk_that_stops_early() {
        let object = Json::parse_lazy(br#"{"a": 1, "x": {}, "a": 2, "b": [3] "c" @}"#).unwrap();
        // The first `a` wins, and the walk ends at `b`: the broken tail is
        // never read.
        let [b, a] = object.get_all(["b", "a"]).unwrap();
        assert_eq!(a.and_then(|a| a.as_i64()), Some(1));
        assert_eq!(b.map(|b| b.raw()), Some(&b"[3]"[..]));
        // A key that is not there sends the walk to the end.
        assert!(object.get_all(["b", "z"]).is_err());
        let list = Json::parse(b"[1]").unwrap();
        assert_eq!(list.get_all(["a"]).unwrap(), [None]);
    }

    #[test]
    fn finds_members_and_ignores_brackets_in_strings() {
        let doc = parse(r#" {"a": "x}]\"{", "b": [1, {"c": null}], "d": -1.5e3, "e": true} "#);
        assert_eq!(doc.get("a").unwrap().unwrap().as_str().unwrap(), "x}]\"{");
        let b = doc.get("b").unwrap().unwrap();
        assert_eq!(b.kind(), Kind::Array);
        assert_eq!(b.elements().count(), 2);
        assert_eq!(doc.get("d").unwrap().unwrap().kind(), Kind::Number);
        assert_eq!(doc.get("e").unwrap().unwrap().as_bool(), Some(true));
        assert_eq!(doc.get("z").unwrap(), None);
    }

    #[test]
    fn word_search_finds_the_first_quote_or_escape() {
        for text in [
            "\"",
            "abc\"",
            "abcdefgh\"x",
            "abcdefg\\\"",
            "abcdefghijklmnop\\",
            "\\\"\"\"\"\"\"\"\"",
        ] {
            let expected = text.bytes().position(|b| b == b'"' || b == b'\\');
            assert_eq!(find_quote_or_escape(text.as_bytes()), expected, "{text:?}");
        }
        assert_eq!(find_quote_or_escape(b"no quotes at all here"), None);
        for byte in 0..=255u8 {
            let word = [b'a', b'a', b'a', byte, b'"', b'a', b'a', b'a'];
            let below = word.iter().position(|b| *b < 0x20);
            assert_eq!(
                find_first(&word, |w| marks_below(w, 0x20), |b| b < 0x20),
                below,
                "byte {byte:#x}"
            );
        }
        assert_eq!(string_body_len(br#"a\"b\\"c"#).unwrap(), 7);
    }

    #[test]
    fn keys_compare_as_decoded_text() {
        let cases: [(&[u8], &str, bool); 9] = [
            (br#""spec""#, "spec", true),
            (br#""spec""#, "spex", false),
            (br#""specs""#, "spec", false),
            (br#""a\u002fb""#, "a/b", true),
            (br#""\u0061b""#, "ab", true),
            (br#""a\\b""#, "a\\b", true),
            (br#""a\\b""#, "a\\\\b", false),
            (br#""a\nb""#, "a\\nb", false),
            (b"\"\"", "", true),
        ];
        for (raw, key, equal) in cases {
            let shown = String::from_utf8_lossy(raw);
            assert_eq!(key_equals(raw, key), equal, "{shown} vs {key:?}");
        }
    }

    #[test]
    fn escaped_keys_and_the_first_of_duplicates() {
        let doc = parse(r#"{"a\u002fb": 1, "k": 1, "k": 2}"#);
        assert_eq!(doc.get("a/b").unwrap().unwrap().as_i64(), Some(1));
        assert_eq!(doc.get("k").unwrap().unwrap().as_i64(), Some(1));
    }

    #[test]
    fn lookups_do_not_read_past_the_member() {
        // Everything after "a" is garbage; a lookup of "a" never sees it.
        let doc = Json::parse_lazy(b"{\"a\": {\"b\": [1, 2]}, \"c\": @@@@ }").unwrap();
        let a = doc.get("a").unwrap().unwrap();
        assert_eq!(a.raw(), b"{\"b\": [1, 2]}");
        assert_eq!(a.get("b").unwrap().unwrap().elements().count(), 2);
        assert!(doc.get("c").is_err());
    }

    #[test]
    fn last_member_is_found_from_the_end() {
        let doc = br#" {"request": {"x": "}\"{", "y": [1]}, "settings": {"k": ["v\\"]} } "#;
        let (key, value) = last_member(doc).unwrap();
        assert_eq!(key, br#""settings""#);
        assert_eq!(value.raw(), br#"{"k": ["v\\"]}"#);
        for (text, last) in [
            (r#"{"a":1,"b":-2.5e3}"#, "-2.5e3"),
            (r#"{"a":true}"#, "true"),
            (r#"{"a":"q\"x"}"#, r#""q\"x""#),
        ] {
            assert_eq!(
                last_member(text.as_bytes()).unwrap().1.raw(),
                last.as_bytes(),
                "{text}"
            );
        }
        for no in ["{}", "[1]", "{\"a\" 1}", "\"x\"", ""] {
            assert!(last_member(no.as_bytes()).is_none(), "{no}");
        }
    }

    #[test]
    fn non_containers_have_no_members() {
        assert_eq!(parse("\"s\"").members().count(), 0);
        assert_eq!(parse("3").elements().count(), 0);
        assert_eq!(parse("null").get("a").unwrap(), None);
        assert_eq!(parse("{}").members().count(), 0);
        assert_eq!(parse("[]").elements().count(), 0);
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        for bad in [
            "",
            "{",
            "[",
            "\"abc",
            "{\"a\" 1}",
            "{\"a\":}",
            "{1:2}",
            "tru",
            "{\"a\":1,,}",
            "]",
            "{}}",
            "[1 2]",
            "\"\\",
            "{\"a\":1",
            "nul",
            "@",
        ] {
            let parsed = Json::parse(bad.as_bytes());
            if let Ok(json) = parsed {
                let members: Result<Vec<_>, _> = json.members().collect();
                let elements: Result<Vec<_>, _> = json.elements().collect();
                assert!(members.is_err() || elements.is_err(), "accepted {bad:?}");
            }
        }
    }

    #[test]
    fn lazy_parsing_checks_contents_when_read() {
        let doc = Json::parse_lazy(b" {\"a\": [1, 2], \"b\": {} } ").unwrap();
        assert_eq!(doc.get("a").unwrap().unwrap().elements().count(), 2);
        let broken = Json::parse_lazy(b"{\"a\": 1 \"b\": 2}").unwrap();
        assert!(broken.get("b").is_err());
        assert_eq!(Json::parse_lazy(b" \"x\" ").unwrap().as_str().unwrap(), "x");
        assert!(Json::parse_lazy(b"{").is_err());
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let doc = Json::parse(deep.as_bytes()).unwrap();
        assert_eq!(doc.get("a").unwrap().unwrap().kind(), Kind::Array);
    }

    /// A small deterministic generator of JSON documents.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, bound: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % bound
        }
        fn string(&mut self) -> String {
            let alphabet = [
                "a", "b", "\"", "\\", "{", "]", "é", "\n", "/", " ", ":", ",",
            ];
            let len = u64::try_from(alphabet.len()).unwrap();
            (0..self.next(6))
                .map(|_| alphabet[usize::try_from(self.next(len)).unwrap()])
                .collect()
        }
        fn value(&mut self, depth: u32) -> Value {
            match if depth > 3 {
                self.next(4)
            } else {
                self.next(6)
            } {
                0 => Value::Null,
                1 => json!(self.next(2) == 1),
                2 => json!(i64::try_from(self.next(1000)).unwrap() - 500),
                3 => json!(self.string()),
                4 => Value::Array((0..self.next(4)).map(|_| self.value(depth + 1)).collect()),
                _ => Value::Object(
                    (0..self.next(4))
                        .map(|_| (self.string(), self.value(depth + 1)))
                        .collect(),
                ),
            }
        }
    }

    fn agrees(json: Json<'_>, value: &Value) {
        match value {
            Value::Object(map) => {
                assert_eq!(json.kind(), Kind::Object);
                assert_eq!(json.members().count(), map.len());
                for (key, expected) in map {
                    agrees(json.get(key).unwrap().unwrap(), expected);
                }
            }
            Value::Array(items) => {
                let elements: Vec<_> = json.elements().map(Result::unwrap).collect();
                assert_eq!(elements.len(), items.len());
                for (element, expected) in elements.into_iter().zip(items) {
                    agrees(element, expected);
                }
            }
            Value::String(s) => assert_eq!(json.as_str().unwrap(), *s),
            Value::Bool(b) => assert_eq!(json.as_bool(), Some(*b)),
            Value::Null => assert_eq!(json.kind(), Kind::Null),
            Value::Number(n) => assert_eq!(json.as_i64(), n.as_i64()),
        }
        assert_eq!(&serde_json::from_slice::<Value>(json.raw()).unwrap(), value);
    }

    #[test]
    fn agrees_with_serde_json_on_generated_documents() {
        let mut rng = Lcg(7);
        for _ in 0..2_000 {
            let value = rng.value(0);
            for text in [
                serde_json::to_string(&value).unwrap(),
                serde_json::to_string_pretty(&value).unwrap(),
            ] {
                agrees(Json::parse(text.as_bytes()).unwrap(), &value);
                agrees(Json::parse_lazy(text.as_bytes()).unwrap(), &value);
                if let Value::Object(map) = &value
                    && let Some((last_key, last_value)) = map.iter().next_back()
                {
                    let (key, found) = last_member(text.as_bytes()).unwrap();
                    assert_eq!(member_name(key).unwrap(), *last_key);
                    agrees(found, last_value);
                }
            }
        }
    }

    #[test]
    fn truncations_of_valid_documents_never_panic() {
        let mut rng = Lcg(11);
        for _ in 0..300 {
            let text = serde_json::to_string(&rng.value(0)).unwrap();
            for cut in 0..text.len() {
                if let Ok(json) = Json::parse(&text.as_bytes()[..cut]) {
                    let _ = json.members().count();
                    let _ = json.elements().count();
                }
            }
        }
    }
}
