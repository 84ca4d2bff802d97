//! The float arithmetic the tenant chart's templates do, as Helm's Go
//! functions do it: what `cozy-lib.resources.sanitize` turns a declared
//! `cpu`, `memory` or `ephemeral-storage` into.
//!
//! Read at v1.6.2 `packages/library/cozy-lib/templates/_resources.tpl` and
//! checked by rendering the tenant chart with Helm (v4.2.3's SDK, the
//! `oracle/` environment): `requests.cpu` of `cpu: "3.3"` renders
//! `"0.33"`, not a float's `0.32999999999999996`, because Sprig's `mulf`
//! and `divf` (Masterminds/sprig v3 `execDecimalOp`) compute in
//! shopspring/decimal:
//!
//! - [`Decimal::of_float`] is `decimal.NewFromFloat`: the shortest decimal
//!   that reads back as the float (strconv's shortest digits);
//! - [`Decimal::times`] is `Mul`, exact;
//! - [`Decimal::divided_by`] is `Div`: `DivRound(d2, DivisionPrecision)`,
//!   16 digits after the point, the last rounded half away from zero;
//! - [`Decimal::to_float`] is `Float64`: the nearest float (`big.Rat`).
//!
//! Their results reach the manifest through Sprig's `toString`, Go's
//! `fmt.Sprintf("%v")` of a float64 ([`format_v`]), through `int`
//! ([`format_int`]), and back through `float64` (spf13/cast's
//! `ToFloat64`, [`cast_float`]).

use shared::Value;

/// A decimal `±digits × 10^exponent`, as shopspring/decimal holds one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decimal {
    negative: bool,
    /// ASCII digits without leading zeros; empty for zero.
    digits: String,
    exponent: i64,
}

/// Why Sprig's decimal arithmetic panics (the template then fails).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unrepresentable {
    /// `NewFromFloat` of NaN or an infinity.
    NotFinite,
    /// `Div` by zero.
    DivisionByZero,
}

/// `DivisionPrecision`: the digits after the point a quotient keeps.
const DIVISION_PRECISION: i64 = 16;

impl Decimal {
    /// `decimal.NewFromFloat`.
    pub fn of_float(value: f64) -> Result<Self, Unrepresentable> {
        if !value.is_finite() {
            return Err(Unrepresentable::NotFinite);
        }
        if value == 0.0 {
            return Ok(Self::zero());
        }
        let (digits, point) = shortest(value.abs());
        let exponent = point - i64::try_from(digits.len()).unwrap_or(0);
        Ok(Self {
            negative: value < 0.0,
            digits,
            exponent,
        }
        .normal())
    }

    fn zero() -> Self {
        Self {
            negative: false,
            digits: String::new(),
            exponent: 0,
        }
    }

    fn normal(mut self) -> Self {
        let trimmed = self.digits.trim_start_matches('0').len();
        self.digits.drain(..self.digits.len() - trimmed);
        if self.digits.is_empty() {
            return Self::zero();
        }
        self
    }

    /// The mantissa as an integer, when it fits (a float's has at most 17
    /// digits).
    fn mantissa(&self) -> Option<u128> {
        if self.digits.is_empty() {
            Some(0)
        } else {
            self.digits.parse().ok()
        }
    }

    /// `d.Mul(d2)`, exact. `None` past 38 digits, which two floats'
    /// decimals never reach.
    pub fn times(&self, other: &Self) -> Option<Self> {
        let product = self.mantissa()?.checked_mul(other.mantissa()?)?;
        Some(
            Self {
                negative: self.negative != other.negative,
                digits: product.to_string(),
                exponent: self.exponent.checked_add(other.exponent)?,
            }
            .normal(),
        )
    }

    /// `d.Div(d2)`: the quotient to 16 digits after the point, the last
    /// rounded half away from zero (`DivRound`: `QuoRem`, then the
    /// remainder against half the divisor).
    pub fn divided_by(&self, other: &Self) -> Result<Self, Unrepresentable> {
        let divisor = other.mantissa().unwrap_or(0);
        if divisor == 0 {
            return Err(Unrepresentable::DivisionByZero);
        }
        if self.digits.is_empty() {
            return Ok(Self::zero());
        }
        // self / other × 10^16 = mantissa × 10^shift / divisor.
        let shift = self.exponent - other.exponent + DIVISION_PRECISION;
        let (quotient, round_up) = if shift >= 0 {
            let zeros = usize::try_from(shift).unwrap_or(usize::MAX);
            long_division(&self.digits, zeros, divisor)
        } else {
            let scaled = u32::try_from(shift.unsigned_abs())
                .ok()
                .and_then(|n| 10_u128.checked_pow(n))
                .and_then(|p| divisor.checked_mul(p));
            match (scaled, self.mantissa()) {
                (Some(scaled), Some(mantissa)) => {
                    let remainder = mantissa % scaled;
                    (
                        (mantissa / scaled).to_string(),
                        remainder.saturating_mul(2) >= scaled,
                    )
                }
                // The divisor exceeds any float's mantissa twice over.
                _ => (String::from("0"), false),
            }
        };
        let digits = if round_up {
            increment(&quotient)
        } else {
            quotient
        };
        Ok(Self {
            negative: self.negative != other.negative,
            digits,
            exponent: -DIVISION_PRECISION,
        }
        .normal())
    }

    /// `d.Float64()`: the nearest float, ties to even, infinite past the
    /// range (`big.Rat.Float64`).
    pub fn to_float(&self) -> f64 {
        nearest_float(self.negative, &self.digits, self.exponent)
    }
}

/// The shortest digits that read back as `value` (positive, finite), and
/// where the point goes: `value = 0.digits × 10^point`. They are
/// serde_json's (zmij, Schubfach: the shortest, and of those the closest),
/// as strconv's shortest digits (and so `NewFromFloat`'s) are; the module
/// carries that formatter already.
fn shortest(value: f64) -> (String, i64) {
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

/// `digits` followed by `zeros` zeros, divided by `divisor`: the quotient's
/// digits and whether the remainder is at least half the divisor.
fn long_division(digits: &str, zeros: usize, divisor: u128) -> (String, bool) {
    let mut quotient = String::new();
    let mut remainder: u128 = 0;
    let stream = digits
        .bytes()
        .map(|b| u128::from(b - b'0'))
        .chain(std::iter::repeat_n(0, zeros));
    for digit in stream {
        // remainder < divisor < 10^17, so this stays far below u128::MAX.
        let current = remainder * 10 + digit;
        let next = current / divisor;
        remainder = current % divisor;
        if !(quotient.is_empty() && next == 0) {
            quotient.push(char::from_digit(u32::try_from(next).unwrap_or(0), 10).unwrap_or('0'));
        }
    }
    if quotient.is_empty() {
        quotient.push('0');
    }
    (quotient, remainder * 2 >= divisor)
}

/// A digit string plus one.
fn increment(digits: &str) -> String {
    let mut out: Vec<u8> = digits.bytes().collect();
    for byte in out.iter_mut().rev() {
        if *byte == b'9' {
            *byte = b'0';
        } else {
            *byte += 1;
            return String::from_utf8(out).unwrap_or_default();
        }
    }
    let mut text = String::from("1");
    text.push_str(&String::from_utf8(out).unwrap_or_default());
    text
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

/// Sprig's `int` of a float64 then `toString`: Go's conversion, which
/// truncates toward zero; out of range (and NaN) it gives the most
/// negative int64, as amd64's `CVTTSD2SI` does.
pub fn format_int(value: f64) -> String {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let truncated = value.trunc();
    if truncated.is_nan() || !(-LIMIT..LIMIT).contains(&truncated) {
        return i64::MIN.to_string();
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
    let value = if truncated < 0.0 {
        magnitude.wrapping_neg()
    } else {
        magnitude
    };
    value.to_string()
}

/// spf13/cast's `ToFloat64` of a string (Sprig's `float64`):
/// `strconv.ParseFloat(s, 64)`, and 0 where it errs, out of range
/// included.
pub fn cast_float(text: &str) -> f64 {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => {
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return 0.0;
            }
            // Past any float's range either way: ParseFloat says so, or reads 0.
            (
                mantissa,
                exponent
                    .parse::<i64>()
                    .unwrap_or(0)
                    .clamp(-100_000, 100_000),
            )
        }
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let syntax = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !syntax(whole) || !syntax(fraction) {
        return 0.0;
    }
    let digits = format!("{whole}{fraction}");
    let value = nearest_float(
        negative,
        digits.trim_start_matches('0'),
        exponent - i64::try_from(fraction.len()).unwrap_or(0),
    );
    if value.is_finite() { value } else { 0.0 }
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
fn nearest_float(negative: bool, digits: &str, exponent: i64) -> f64 {
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

    fn d(value: f64) -> Decimal {
        Decimal::of_float(value).unwrap_or_else(|e| panic!("{value}: {e:?}"))
    }

    fn divf(a: f64, b: f64) -> f64 {
        d(a).divided_by(&d(b))
            .unwrap_or_else(|e| panic!("{a}/{b}: {e:?}"))
            .to_float()
    }

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
    fn divides_as_sprig_divf() {
        // Rendered by Helm (the oracle's SDK) from the tenant chart: the
        // quotient is decimal, not a float's.
        for (a, b, rendered) in [
            (3.3, 10.0, "0.33"),
            (1.1, 10.0, "0.11"),
            (2.2, 10.0, "0.22"),
            (1.0, 3.0, "0.3333333333333333"),
            (0.25, 3.0, "0.0833333333333333"),
            (0.5, 3.0, "0.1666666666666667"),
            (2.0, 3.0, "0.6666666666666667"),
            (1.0, 7.0, "0.1428571428571429"),
            (1.0, 2.5, "0.4"),
            (3.3, 0.1, "33"),
            (1e7, 10.0, "1e+06"),
            (1e-5, 10.0, "1e-06"),
            (-1.0, 10.0, "-0.1"),
            (1.1e18, 10.0, "1.1e+17"),
        ] {
            assert_eq!(format_v(divf(a, b)), rendered, "{a}/{b}");
        }
        // A quotient below half of 10^-16 is zero.
        assert_eq!(divf(1e-20, 1.0), 0.0);
        assert_eq!(divf(5e-17, 1.0), 1e-16);
        assert_eq!(
            d(1.0).divided_by(&d(0.0)),
            Err(Unrepresentable::DivisionByZero)
        );
        assert_eq!(
            Decimal::of_float(f64::INFINITY),
            Err(Unrepresentable::NotFinite)
        );
    }

    #[test]
    fn truncates_as_go_int() {
        // Rendered by Helm: memory `1Gi` over a ratio of 3, `1.5` over 1.
        assert_eq!(format_int(divf(1_073_741_824.0, 3.0)), "357913941");
        assert_eq!(format_int(divf(1.5, 1.0)), "1");
        assert_eq!(format_int(divf(0.1, 1.0)), "0");
        assert_eq!(format_int(-2.7), "-2");
        assert_eq!(format_int(-0.5), "0");
        assert_eq!(format_int(9_007_199_254_740_993.0), "9007199254740992");
        assert_eq!(format_int(1e19), "-9223372036854775808");
        assert_eq!(format_int(f64::NAN), "-9223372036854775808");
    }

    #[test]
    fn multiplies_exactly() {
        // `toFloat` of `1.5Ei`: NewFromFloat(2^60) is 1152921504606847e3,
        // and the nearest float of the product is still 1.5 × 2^60.
        let unit = d(2_f64.powi(60));
        assert_eq!(unit.digits, "1152921504606847");
        let product = d(1.5).times(&unit).map(|p| p.to_float());
        assert_eq!(product, Some(1.5 * 2_f64.powi(60)));
        assert_eq!(d(250.0).times(&d(1e-3)).map(|p| p.to_float()), Some(0.25));
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
    }
}
