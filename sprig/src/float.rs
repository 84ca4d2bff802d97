//! Go's float64 as Helm's templates read and print it: spf13/cast's
//! `ToFloat64` of a string (Sprig's `float64`: `strconv.ParseFloat`, 0
//! where it fails, [`cast_float`]), `fmt.Sprintf("%v")` (Sprig's
//! `toString`, [`format_v`]) and the conversion to int (Sprig's `int`,
//! [`format_int`]); and the two halves of float64 arithmetic the decimals
//! of [`crate::decimal`] stand on: the shortest digits of a float
//! ([`shortest`]) and the float nearest a decimal ([`nearest_float`]).

use serde_json::Value;

/// The shortest digits that read back as `value` (positive, finite), and
/// where the point goes: `value = 0.digits × 10^point`. They are
/// serde_json's (zmij, Schubfach: the shortest, and of those the closest),
/// as strconv's shortest digits (and so `NewFromFloat`'s) are; the module
/// carries that formatter already.
pub(crate) fn shortest(value: f64) -> (String, i64) {
    let text = Value::from(value).to_string();
    let (mantissa, exponent) = text.split_once(['e', 'E']).unwrap_or((&text, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{whole}{fraction}");
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0').to_owned();
    let point = i64::try_from(whole.len()).unwrap_or(0) - i64::try_from(leading).unwrap_or(0);
    (digits, point + exponent)
}

/// Go's `fmt.Sprintf("%v", value)` of a float64 (Sprig's `toString`):
/// `strconv.FormatFloat(value, 'g', -1, 64)`. The shortest round-trip
/// digits, in exponent form when the exponent is below -4 or at least 6
/// (strconv `ftoa.go`: "if precision was the shortest possible, use
/// precision 6 for this decision"; Helm renders `1e+06` for a 10000000
/// cpu's request), with a signed exponent of at least two digits.
pub fn format_v(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    let sign = if value.is_sign_negative() { "-" } else { "" };
    if value == 0.0 {
        return format!("{sign}0");
    }
    let (digits, point) = shortest(value.abs());
    let exponent = point - 1;
    let (first, rest) = digits.split_at(1.min(digits.len()));
    // `exp < -4 || exp >= eprec`, eprec being 6.
    if !(-4..6).contains(&exponent) {
        let dot = if rest.is_empty() { "" } else { "." };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        return format!(
            "{sign}{first}{dot}{rest}e{exponent_sign}{:02}",
            exponent.unsigned_abs()
        );
    }
    if point <= 0 {
        let zeros = "0".repeat(usize::try_from(-point).unwrap_or(0));
        return format!("{sign}0.{zeros}{digits}");
    }
    let point = usize::try_from(point).unwrap_or(0);
    if digits.len() <= point {
        let zeros = "0".repeat(point - digits.len());
        format!("{sign}{digits}{zeros}")
    } else {
        let (whole, fraction) = digits.split_at(point);
        format!("{sign}{whole}.{fraction}")
    }
}

/// Sprig's `int` of a float64 then `toString` ([`to_int`]).
pub fn format_int(value: f64) -> String {
    to_int(value).to_string()
}

/// Sprig's `int` of a float64: Go's conversion, which truncates toward
/// zero; out of range (and NaN) it gives the most negative int64, as
/// amd64's `CVTTSD2SI` does.
pub fn to_int(value: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let truncated = value.trunc();
    if truncated.is_nan() || !(-LIMIT..LIMIT).contains(&truncated) {
        return i64::MIN;
    }
    // An integral float below 2^63: its mantissa shifted by its exponent.
    let bits = truncated.to_bits();
    let exponent = i64::try_from((bits >> 52) & 0x7ff).unwrap_or(0) - 1075;
    let mantissa = i64::try_from((bits & ((1 << 52) - 1)) | (1 << 52)).unwrap_or(0);
    let magnitude = if truncated == 0.0 {
        0
    } else if exponent >= 0 {
        mantissa << exponent
    } else {
        mantissa >> exponent.unsigned_abs()
    };
    if truncated < 0.0 {
        magnitude.wrapping_neg()
    } else {
        magnitude
    }
}

/// Sprig's `float64` of an int: Go's conversion, the nearest float (as
/// `ParseFloat` reads the integer's digits).
pub fn float_of_int(value: i64) -> f64 {
    cast_float(&value.to_string())
}

/// spf13/cast's `ToFloat64` of a string (Sprig's `float64`):
/// `strconv.ParseFloat(s, 64)`, and 0 where it errs, out of range
/// included. Not read as Go reads them, as no chart value is written so:
/// hexadecimal floats (`0x1p4`, 0 here) and values below the normal range
/// (`5e-324`, 0 here).
pub fn cast_float(text: &str) -> f64 {
    match literal(text) {
        Literal::Number {
            negative,
            whole,
            fraction,
            exponent,
        } => {
            let digits: String = whole
                .chars()
                .chain(fraction.chars())
                .filter(char::is_ascii_digit)
                .collect();
            let decimals = fraction.bytes().filter(u8::is_ascii_digit).count();
            let exponent = exponent - i64::try_from(decimals).unwrap_or(0);
            let value = nearest_float(negative, digits.trim_start_matches('0'), exponent);
            if value.is_finite() { value } else { 0.0 }
        }
        Literal::Special(value) => value,
        Literal::Refused => 0.0,
    }
}

/// A string as `strconv.ParseFloat` reads it, before any rounding.
pub(crate) enum Literal<'a> {
    /// `±whole.fraction × 10^exponent`, each part ASCII digits, with `_`
    /// between two of them (either part may be empty, not both).
    Number {
        negative: bool,
        whole: &'a str,
        fraction: &'a str,
        exponent: i64,
    },
    /// strconv's `special`: a signed `inf` or `infinity`, an unsigned
    /// `nan`, in any case.
    Special(f64),
    /// Not a number ParseFloat reads.
    Refused,
}

/// How `strconv.ParseFloat` reads `text` (decimal digits with an optional
/// point, sign and exponent, or [`Literal::Special`]).
pub(crate) fn literal(text: &str) -> Literal<'_> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if ["inf", "infinity"]
        .iter()
        .any(|name| unsigned.eq_ignore_ascii_case(name))
    {
        return Literal::Special(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if text.eq_ignore_ascii_case("nan") {
        return Literal::Special(f64::NAN);
    }
    // strconv's `underscoreOK`: an underscore only between two digits.
    let bytes = unsigned.as_bytes();
    let digit_at = |at: Option<usize>| {
        at.and_then(|at| bytes.get(at))
            .is_some_and(u8::is_ascii_digit)
    };
    if (0..bytes.len()).any(|at| {
        bytes.get(at) == Some(&b'_') && !(digit_at(at.checked_sub(1)) && digit_at(Some(at + 1)))
    }) {
        return Literal::Refused;
    }
    let syntax = |part: &str| part.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => {
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if digits.is_empty() || !syntax(digits) {
                return Literal::Refused;
            }
            // Past any float's range either way: ParseFloat says so, or reads 0.
            let value = digits
                .bytes()
                .filter(u8::is_ascii_digit)
                .fold(0_i64, |value, digit| {
                    (value * 10 + i64::from(digit - b'0')).min(100_000)
                });
            (
                mantissa,
                if exponent.starts_with('-') {
                    -value
                } else {
                    value
                },
            )
        }
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (whole.is_empty() && fraction.is_empty()) || !syntax(whole) || !syntax(fraction) {
        return Literal::Refused;
    }
    Literal::Number {
        negative,
        whole,
        fraction,
        exponent,
    }
}

/// A natural number, little-endian in base 2^32, for [`nearest_float`].
struct Big(Vec<u32>);

impl Big {
    fn of_digits(digits: &str) -> Self {
        let mut big = Big(Vec::new());
        for digit in digits.bytes() {
            big.mul_add(10, u32::from(digit.wrapping_sub(b'0')));
        }
        big
    }

    fn mul_add(&mut self, factor: u32, mut carry: u32) {
        for limb in &mut self.0 {
            let product = u64::from(*limb) * u64::from(factor) + u64::from(carry);
            *limb = u32::try_from(product & 0xffff_ffff).unwrap_or(0);
            carry = u32::try_from(product >> 32).unwrap_or(0);
        }
        if carry != 0 {
            self.0.push(carry);
        }
    }

    /// Divides in place; whether a remainder was left.
    fn div(&mut self, divisor: u32) -> bool {
        let mut remainder: u64 = 0;
        for limb in self.0.iter_mut().rev() {
            let current = (remainder << 32) | u64::from(*limb);
            *limb = u32::try_from(current / u64::from(divisor)).unwrap_or(0);
            remainder = current % u64::from(divisor);
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        remainder != 0
    }

    fn shift_left(&mut self, bits: u64) {
        for _ in 0..bits / 32 {
            self.0.insert(0, 0);
        }
        for _ in 0..bits % 32 {
            self.mul_add(2, 0);
        }
    }

    fn bits(&self) -> u64 {
        let top = self
            .0
            .last()
            .map_or(0, |l| 32 - u64::from(l.leading_zeros()));
        top + 32 * u64::try_from(self.0.len().saturating_sub(1)).unwrap_or(0)
    }

    fn bit(&self, at: u64) -> bool {
        let limb = usize::try_from(at / 32).ok().and_then(|i| self.0.get(i));
        limb.is_some_and(|l| (l >> (at % 32)) & 1 == 1)
    }

    fn any_below(&self, at: u64) -> bool {
        (0..at).any(|i| self.bit(i))
    }
}

/// The float nearest `±digits × 10^exponent`, ties to even (what
/// `big.Rat.Float64` and `strconv.ParseFloat` give): exact integer
/// arithmetic, then one rounding. Past the range it is infinite; below
/// the normal range (2.2e-308) it reads as 0.
pub(crate) fn nearest_float(negative: bool, digits: &str, exponent: i64) -> f64 {
    let sign = if negative { 1 << 63 } else { 0 };
    // Where the leading digit falls decides the extremes without arithmetic.
    let magnitude = exponent.saturating_add(i64::try_from(digits.len()).unwrap_or(0));
    if digits.is_empty() || magnitude < -330 {
        return f64::from_bits(sign);
    }
    if magnitude > 310 {
        return f64::from_bits(sign | 0x7ff0_0000_0000_0000);
    }
    let mut big = Big::of_digits(digits);
    let mut binary: i64 = 0;
    let mut inexact = false;
    if exponent >= 0 {
        for _ in 0..exponent {
            big.mul_add(10, 0);
        }
    } else {
        // Enough bits that the quotient keeps 55 (log2 10 < 10/3).
        let decimals = exponent.unsigned_abs();
        let shift = (55 + decimals * 10 / 3 + 1).saturating_sub(big.bits());
        big.shift_left(shift);
        binary = -i64::try_from(shift).unwrap_or(0);
        for _ in 0..decimals {
            inexact |= big.div(10);
        }
    }
    let bits = big.bits();
    if bits == 0 {
        return f64::from_bits(sign);
    }
    // 53 bits of mantissa, rounded half to even on the rest.
    let drop = bits.saturating_sub(53);
    let mut mantissa: u64 = (drop..bits)
        .rev()
        .fold(0, |m, i| (m << 1) | u64::from(big.bit(i)));
    if drop > 0 {
        let half = big.bit(drop - 1);
        let rest = inexact || big.any_below(drop - 1);
        if half && (rest || mantissa & 1 == 1) {
            mantissa += 1;
        }
    }
    let mut scale = binary + i64::try_from(drop).unwrap_or(0);
    if mantissa == 1 << 53 {
        mantissa >>= 1;
        scale += 1;
    }
    // mantissa × 2^scale, with mantissa normalised to 53 bits.
    let width = 64 - i64::from(mantissa.leading_zeros());
    let biased = scale + width - 1 + 1023;
    if biased >= 2047 {
        return f64::from_bits(sign | 0x7ff0_0000_0000_0000);
    }
    let Ok(biased) = u64::try_from(biased) else {
        return f64::from_bits(sign);
    };
    if biased == 0 {
        return f64::from_bits(sign);
    }
    let normal = mantissa << (53 - width);
    f64::from_bits(sign | (biased << 52) | (normal & ((1 << 52) - 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_go_percent_v() {
        for (value, go) in [
            (0.33, "0.33"),
            (3.3 / 10.0, "0.32999999999999996"),
            (0.11, "0.11"),
            (100000.0, "100000"),
            (999999.5, "999999.5"),
            (1e6, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (1.1e17, "1.1e+17"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e-6, "1e-06"),
            (1.5e-7, "1.5e-07"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (-0.1, "-0.1"),
            (-0.0, "-0"),
            (0.0, "0"),
            (3.0, "3"),
            (123.456, "123.456"),
            (608_863_452_348.114_9, "6.088634523481149e+11"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(format_v(value), go, "{value:e}");
        }
    }

    #[test]
    fn truncates_as_go_int() {
        assert_eq!(format_int(-2.7), "-2");
        assert_eq!(format_int(-0.5), "0");
        assert_eq!(format_int(9_007_199_254_740_993.0), "9007199254740992");
        assert_eq!(format_int(1e19), "-9223372036854775808");
        assert_eq!(format_int(f64::NAN), "-9223372036854775808");
    }

    #[test]
    fn reads_decimals_as_the_nearest_float() {
        // The same answers as a correctly rounded reader (Rust's, here).
        let mut texts: Vec<String> = [
            "0.33",
            "0.1",
            "0.0833333333333333",
            "3.3333333333333333",
            "9007199254740993",
            "9007199254740995",
            "27021597764222985",
            "18014398509481990",
            "1152921504606847000",
            "2.2250738585072014e-308",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "4.9406564584124654e-324",
            "123456789012345678901234567890e-20",
            "1e23",
            "8.5e-1",
            "0.1428571428571429",
            "715827882.6666666666666667",
        ]
        .iter()
        .map(|t| (*t).to_owned())
        .collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..3000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let digits = seed % 100_000_000_000_000_000;
            let exponent = i64::try_from(seed >> 58).unwrap_or(0) - 40;
            texts.push(format!("{digits}e{exponent}"));
            texts.push(format!("{}", f64::from_bits(seed >> 2)));
        }
        for text in texts {
            let Ok(expected) = text.parse::<f64>() else {
                continue;
            };
            if expected != 0.0 && expected.abs() < f64::MIN_POSITIVE {
                continue;
            }
            let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
            let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            let digits = format!("{whole}{fraction}");
            let exponent: i64 = exponent.parse().unwrap_or(0);
            let exponent = exponent - i64::try_from(fraction.len()).unwrap_or(0);
            let got = nearest_float(false, digits.trim_start_matches('0'), exponent);
            assert_eq!(got.to_bits(), expected.to_bits(), "{text}");
        }
    }

    #[test]
    fn shortest_digits_are_strconvs() {
        for value in [
            0.33,
            1e21,
            1.5e-7,
            100000.0,
            5e-324,
            f64::MAX,
            0.0001,
            2_f64.powi(60),
            123.456,
        ] {
            let (digits, point) = shortest(value);
            let text = format!("{value:e}");
            let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
            let expected: String = mantissa.chars().filter(char::is_ascii_digit).collect();
            assert_eq!(digits, expected, "{value:e}");
            assert_eq!(point, exponent.parse::<i64>().unwrap_or(0) + 1, "{value:e}");
        }
    }

    #[test]
    fn casts_as_spf13_cast() {
        assert_eq!(cast_float("3.3"), 3.3);
        assert_eq!(cast_float("+3"), 3.0);
        assert_eq!(cast_float(".5"), 0.5);
        assert_eq!(cast_float("5."), 5.0);
        assert_eq!(cast_float("1e3"), 1000.0);
        assert_eq!(cast_float("100u"), 0.0);
        assert_eq!(cast_float("1e400"), 0.0);
        assert_eq!(cast_float(" 2"), 0.0);
        assert_eq!(cast_float(""), 0.0);
        assert_eq!(cast_float("-Infinity"), f64::NEG_INFINITY);
        assert_eq!(cast_float("+inf"), f64::INFINITY);
        assert!(cast_float("NaN").is_nan());
        assert_eq!(cast_float("+nan"), 0.0);
        assert_eq!(cast_float("infinit"), 0.0);
        assert_eq!(cast_float("1_000.5"), 1000.5);
        assert_eq!(cast_float("1e1_0"), 1e10);
        for refused in ["_1", "1_", "1__0", "1_.5", "1._5", "1_e3", "1e_3"] {
            assert_eq!(cast_float(refused), 0.0, "{refused}");
        }
        assert_eq!(float_of_int(9_007_199_254_740_993), 9_007_199_254_740_992.0);
    }
}
