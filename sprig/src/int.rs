//! Sprig's `int` of a string, as Helm's templates compute it, for every
//! rule that predicts what a chart makes of a value (chart-render's
//! kubelet reservations, the migration hook's `cozystack-version`).
//!
//! Sprig v3 (`numeric.go`, `toInt`) calls spf13/cast's `ToInt`, which for a
//! string drops a trailing `.0…` (`trimZeroDecimal`), then calls Go's
//! `strconv.ParseInt(s, 0, 0)` and gives 0 where that fails. Base 0 is
//! Go's integer literal syntax: an optional sign, then `0x`/`0o`/`0b` or a
//! bare leading `0` (octal: `"046"` is 38, `"08"` fails), `_` between
//! digits or after a base prefix, and a 64-bit range.

/// Sprig's `int` of `text`: Go's `strconv.ParseInt(text, 0, 0)` after
/// cast's `trimZeroDecimal`, 0 where it fails.
pub fn int(text: &str) -> i64 {
    parse_int(trim_zero_decimal(text)).unwrap_or(0)
}

/// Whether Sprig's `int` reads `text` as a number at all, and which:
/// `None` where it fails (and `int` gives 0).
pub fn parse(text: &str) -> Option<i64> {
    parse_int(trim_zero_decimal(text))
}

/// spf13/cast's `trimZeroDecimal`: `"46.0"` and `"46.00"` are `"46"`; any
/// other text is kept.
fn trim_zero_decimal(text: &str) -> &str {
    let mut zero = false;
    for (at, byte) in text.bytes().enumerate().rev() {
        match byte {
            b'.' if zero => return text.get(..at).unwrap_or(text),
            b'.' => {}
            b'0' => zero = true,
            _ => return text,
        }
    }
    text
}

/// Go's `strconv.ParseInt(text, 0, 64)`.
fn parse_int(text: &str) -> Option<i64> {
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, text.get(1..)?),
        b'+' => (false, text.get(1..)?),
        _ => (false, text),
    };
    let magnitude = i128::from(parse_uint(unsigned)?);
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// Go's `strconv.ParseUint(text, 0, 64)`.
fn parse_uint(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let (radix, digits): (u32, &[u8]) = match bytes {
        [] => return None,
        [b'0', prefix, _, ..] if prefix.eq_ignore_ascii_case(&b'b') => (2, bytes.get(2..)?),
        [b'0', prefix, _, ..] if prefix.eq_ignore_ascii_case(&b'o') => (8, bytes.get(2..)?),
        [b'0', prefix, _, ..] if prefix.eq_ignore_ascii_case(&b'x') => (16, bytes.get(2..)?),
        [b'0', ..] => (8, bytes.get(1..)?),
        _ => (10, bytes),
    };
    let mut value: u64 = 0;
    let mut underscores = false;
    for &byte in digits {
        if byte == b'_' {
            underscores = true;
            continue;
        }
        let digit = char::from(byte).to_digit(36)?;
        if digit >= radix {
            return None;
        }
        value = value
            .checked_mul(u64::from(radix))?
            .checked_add(u64::from(digit))?;
    }
    if underscores && !underscores_ok(bytes) {
        return None;
    }
    Some(value)
}

/// Go's `underscoreOK`: an underscore only between digits, or between a
/// base prefix and a digit.
fn underscores_ok(text: &[u8]) -> bool {
    // What came last: the start, a digit (or a base prefix), an
    // underscore, anything else.
    #[derive(PartialEq)]
    enum Saw {
        Start,
        Digit,
        Underscore,
        Other,
    }
    let (mut saw, mut rest, mut hex) = (Saw::Start, text, false);
    if let [b'0', prefix, tail @ ..] = text
        && matches!(prefix.to_ascii_lowercase(), b'b' | b'o' | b'x')
    {
        saw = Saw::Digit;
        hex = prefix.eq_ignore_ascii_case(&b'x');
        rest = tail;
    }
    for &byte in rest {
        if byte.is_ascii_digit() || (hex && byte.is_ascii_hexdigit()) {
            saw = Saw::Digit;
        } else if byte == b'_' {
            if saw != Saw::Digit {
                return false;
            }
            saw = Saw::Underscore;
        } else if saw == Saw::Underscore {
            return false;
        } else {
            saw = Saw::Other;
        }
    }
    saw != Saw::Underscore
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pair is what Helm's own `int` gave (`{{ "<text>" | int }}`,
    /// helm-python-sdk 0.2.2, Helm v4.2.3's Sprig and spf13/cast).
    #[test]
    fn integers_as_helm_reads_them() {
        for (text, helm) in [
            ("46", 46),
            ("100", 100),
            ("0", 0),
            ("-1", -1),
            ("+7", 7),
            ("046", 38),
            ("056", 46),
            ("08", 0),
            ("0x2e", 46),
            ("0X2E", 46),
            ("0o56", 46),
            ("0b101110", 46),
            ("46.0", 46),
            ("46.00", 46),
            ("46.", 0),
            ("46.5", 0),
            ("2.00", 2),
            ("1.5", 0),
            ("1_000", 1000),
            ("0x1_0", 16),
            ("0_46", 38),
            ("1__0", 0),
            ("_1", 0),
            ("1_", 0),
            ("0x", 0),
            ("0x_1", 1),
            ("", 0),
            (" 46", 0),
            ("46 ", 0),
            ("v46", 0),
            ("-", 0),
            ("9223372036854775807", i64::MAX),
            ("9223372036854775808", 0),
            ("-9223372036854775808", i64::MIN),
        ] {
            assert_eq!(int(text), helm, "{text:?}");
        }
        assert_eq!(parse("0"), Some(0));
        assert_eq!(parse("v46"), None);
    }
}
