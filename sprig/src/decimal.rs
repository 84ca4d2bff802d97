//! Sprig's float arithmetic (`mulf`, `addf`, `divf`: Masterminds/sprig
//! v3 `execDecimalOp`), which computes in shopspring/decimal: each operand
//! is the shortest decimal of its float64, the operation is exact (a
//! quotient is rounded to 16 digits after the point), and the result is
//! rounded back to a float64. So `divf 3.3 10.0` is `0.33`, not a float's
//! `0.32999999999999996` (Helm renders the tenant chart's `requests.cpu`
//! of `cpu: "3.3"` as `"0.33"`).
//!
//! - [`Decimal::of_float`] is `decimal.NewFromFloat`: the shortest decimal
//!   that reads back as the float (strconv's shortest digits);
//! - [`Decimal::times`] is `Mul` and [`Decimal::plus`] `Add`, exact;
//! - [`Decimal::divided_by`] is `Div`: `DivRound(d2, DivisionPrecision)`,
//!   16 digits after the point, the last rounded half away from zero;
//! - [`Decimal::to_float`] is `Float64`: the nearest float (`big.Rat`).
//!
//! shopspring's decimals have no bound. A [`Decimal`] holds 18 significant
//! digits (an `i64`: a float's shortest digits are at most 17), and an
//! operation whose exact result would not fit gives `None`; [`mulf`],
//! [`addf`] and [`divf`] keep their exact results in 38 digits (an `i128`)
//! on the way to a float, which two floats' products and sums always fit,
//! and quotients below about 10^22.
//!
//! A chain of operations on decimals of at most 15 significant digits whose
//! every result has at most 15 ([`Decimal::float_exact`]) is what the
//! template computes without any float in between: such a decimal is the
//! shortest decimal of its nearest float, so `Float64` then `NewFromFloat`
//! (or `toString` then `float64`) gives it back.

use std::cmp::Ordering;

use crate::float::{Literal, literal, nearest_float, shortest};

/// `mantissa × 10^exponent`, exactly, the mantissa without trailing zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    mantissa: i64,
    exponent: i32,
}

/// `DivisionPrecision`: the digits after the point a quotient keeps.
const DIVISION_PRECISION: i32 = 16;

/// The bound of the mantissas (10^15, at most 15 digits), and of the
/// exponents, of the decimals a float holds as its shortest digits
/// ([`Decimal::float_exact`]).
const FLOAT_MANTISSAS: u64 = 1_000_000_000_000_000;
const FLOAT_EXPONENTS: i32 = 300;

/// `10^n`, if an `i128` holds it.
fn power_of_ten(n: i32) -> Option<i128> {
    10_i128.checked_pow(u32::try_from(n).ok()?)
}

impl Decimal {
    pub const ZERO: Self = Self {
        mantissa: 0,
        exponent: 0,
    };

    /// `mantissa × 10^exponent`, trailing zeros moved into the exponent;
    /// `None` past 18 digits.
    fn new(mut mantissa: i128, mut exponent: i32) -> Option<Self> {
        if mantissa == 0 {
            return Some(Self::ZERO);
        }
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent = exponent.checked_add(1)?;
        }
        Some(Self {
            mantissa: i64::try_from(mantissa).ok()?,
            exponent,
        })
    }

    /// `mantissa × 10^exponent`, a mantissa without trailing zeros, for
    /// constants.
    pub(crate) const fn exact(mantissa: i64, exponent: i32) -> Self {
        Self { mantissa, exponent }
    }

    /// An integer.
    pub fn int(value: i64) -> Self {
        Self::new(i128::from(value), 0).unwrap_or(Self::ZERO)
    }

    /// `±digits × 10^exponent` (ASCII digits); `None` past 38 significant
    /// digits.
    fn of_digits(negative: bool, digits: impl Iterator<Item = u8>, exponent: i64) -> Option<Self> {
        // Zeros wait until a digit follows them: trailing ones go to the
        // exponent instead of the mantissa.
        let (mut mantissa, mut zeros): (i128, u32) = (0, 0);
        for digit in digits {
            if digit == b'0' {
                zeros += 1;
                continue;
            }
            mantissa = mantissa
                .checked_mul(10_i128.checked_pow(zeros + 1)?)?
                .checked_add(i128::from(digit - b'0'))?;
            zeros = 0;
        }
        let exponent = exponent.checked_add(i64::from(zeros))?;
        Self::new(
            if negative { -mantissa } else { mantissa },
            i32::try_from(exponent).ok()?,
        )
    }

    /// A string's decimal as `strconv.ParseFloat` reads its digits, before
    /// any rounding to a float: 0 where cast reads 0 (ParseFloat refuses
    /// it), `None` for infinity and NaN, and past 38 digits.
    pub fn parse(text: &str) -> Option<Self> {
        match literal(text) {
            Literal::Number {
                negative,
                whole,
                fraction,
                exponent,
            } => Self::of_digits(
                negative,
                whole
                    .bytes()
                    .chain(fraction.bytes())
                    .filter(u8::is_ascii_digit),
                exponent.checked_sub(
                    i64::try_from(fraction.bytes().filter(u8::is_ascii_digit).count()).ok()?,
                )?,
            ),
            Literal::Special(_) => None,
            Literal::Refused => Some(Self::ZERO),
        }
    }

    /// `decimal.NewFromFloat`; `None` for NaN and the infinities (Sprig
    /// panics).
    pub fn of_float(value: f64) -> Option<Self> {
        if !value.is_finite() {
            return None;
        }
        if value == 0.0 {
            return Some(Self::ZERO);
        }
        let (digits, point) = shortest(value.abs());
        let exponent = point - i64::try_from(digits.len()).ok()?;
        Self::of_digits(value < 0.0, digits.bytes(), exponent)
    }

    /// The decimal itself when it has at most 15 significant digits, within
    /// a float's range: then it is the shortest decimal of its float, and
    /// a round trip through a float gives it back.
    pub fn float_exact(self) -> Option<Self> {
        (self.mantissa.unsigned_abs() < FLOAT_MANTISSAS
            && (-FLOAT_EXPONENTS..=FLOAT_EXPONENTS).contains(&self.exponent))
        .then_some(self)
    }

    /// Both mantissas at the lower exponent.
    fn aligned(self, other: Self) -> Option<(i128, i128, i32)> {
        let exponent = self.exponent.min(other.exponent);
        let scale =
            |d: Self| i128::from(d.mantissa).checked_mul(power_of_ten(d.exponent - exponent)?);
        Some((scale(self)?, scale(other)?, exponent))
    }

    /// `d.Mul(d2)`, exact.
    pub fn times(self, other: Self) -> Option<Self> {
        Self::new(
            i128::from(self.mantissa).checked_mul(i128::from(other.mantissa))?,
            self.exponent.checked_add(other.exponent)?,
        )
    }

    /// `d.Add(d2)`, exact.
    pub fn plus(self, other: Self) -> Option<Self> {
        let (a, b, exponent) = self.aligned(other)?;
        Self::new(a.checked_add(b)?, exponent)
    }

    /// `d.Div(d2)`: the quotient to 16 digits after the point, the last
    /// rounded half away from zero (`DivRound`: `QuoRem`, then the
    /// remainder against half the divisor); `None` for a divisor of zero
    /// (Sprig panics).
    pub fn divided_by(self, other: Self) -> Option<Self> {
        let (negative, units) = quotient(self, other)?;
        let magnitude = i128::try_from(units).ok()?;
        Self::new(
            if negative { -magnitude } else { magnitude },
            -DIVISION_PRECISION,
        )
    }

    /// How the template's `le`, `ge` and `gt` order two values.
    pub fn compare(self, other: Self) -> Option<Ordering> {
        let (a, b, _) = self.aligned(other)?;
        Some(a.cmp(&b))
    }

    /// Whether the value is above zero (`gt x 0.0`).
    pub fn is_positive(self) -> bool {
        self.mantissa > 0
    }

    /// The integer part, truncated toward zero, if an `i64` holds it.
    pub fn truncated(self) -> Option<i64> {
        let whole = if self.exponent >= 0 {
            i128::from(self.mantissa).checked_mul(power_of_ten(self.exponent)?)?
        } else {
            power_of_ten(-self.exponent).map_or(0, |p| i128::from(self.mantissa) / p)
        };
        i64::try_from(whole).ok()
    }

    /// `d.Float64()`: the nearest float, ties to even, infinite past the
    /// range (`big.Rat.Float64`).
    pub fn to_float(self) -> f64 {
        float(i128::from(self.mantissa), self.exponent)
    }

    /// Sprig's `int` of `divf self other`: the quotient rounded at the
    /// 16th digit after the point, truncated toward zero, if an `i64`
    /// holds it (the float in between rounds only what has more digits
    /// than a float's 17).
    pub fn truncated_quotient(self, other: Self) -> Option<i64> {
        let (negative, units) = quotient(self, other)?;
        let whole = i128::try_from(units / 10_u128.pow(16)).ok()?;
        i64::try_from(if negative { -whole } else { whole }).ok()
    }
}

/// `mantissa × 10^exponent` as the nearest float.
fn float(mantissa: i128, exponent: i32) -> f64 {
    let mut digits = Vec::new();
    let mut rest = mantissa.unsigned_abs();
    while rest > 0 {
        digits.push(b'0' + u8::try_from(rest % 10).unwrap_or(0));
        rest /= 10;
    }
    digits.reverse();
    let digits = String::from_utf8(digits).unwrap_or_default();
    nearest_float(mantissa < 0, &digits, i64::from(exponent))
}

/// `|a / b| × 10^16`, rounded half away from zero (`DivRound` at
/// `DivisionPrecision`: `QuoRem`, then the remainder against half the
/// divisor), and whether the quotient is negative; `None` for a divisor
/// of zero (Sprig panics) and past an `i128`.
fn quotient(a: Decimal, b: Decimal) -> Option<(bool, u128)> {
    if b.mantissa == 0 {
        return None;
    }
    // |a / b| × 10^16 = |a's mantissa| × 10^shift / |b's mantissa|.
    let shift = a
        .exponent
        .checked_sub(b.exponent)?
        .checked_add(DIVISION_PRECISION)?;
    let (mut numerator, mut denominator) = (
        u128::from(a.mantissa.unsigned_abs()),
        u128::from(b.mantissa.unsigned_abs()),
    );
    if shift >= 0 {
        numerator = numerator.checked_mul(power_of_ten(shift)?.unsigned_abs())?;
    } else {
        match power_of_ten(-shift).and_then(|p| denominator.checked_mul(p.unsigned_abs())) {
            Some(scaled) => denominator = scaled,
            // A divisor past 10^38 against a mantissa below 10^19: less
            // than half of 10^-16.
            None => return Some((false, 0)),
        }
    }
    let remainder = numerator % denominator;
    let rounded = numerator / denominator + u128::from(remainder >= denominator - remainder);
    i128::try_from(rounded).ok()?;
    Some(((a.mantissa < 0) != (b.mantissa < 0), rounded))
}

/// Sprig's `mulf a b`; `None` where Sprig panics (a non-finite operand).
pub fn mulf(a: f64, b: f64) -> Option<f64> {
    let (a, b) = (Decimal::of_float(a)?, Decimal::of_float(b)?);
    let product = i128::from(a.mantissa).checked_mul(i128::from(b.mantissa))?;
    Some(float(product, a.exponent.checked_add(b.exponent)?))
}

/// Sprig's `addf a b`.
pub fn addf(a: f64, b: f64) -> Option<f64> {
    let (a, b, exponent) = Decimal::of_float(a)?.aligned(Decimal::of_float(b)?)?;
    Some(float(a.checked_add(b)?, exponent))
}

/// Sprig's `divf a b`; `None` for a divisor of zero, and past about 10^22.
pub fn divf(a: f64, b: f64) -> Option<f64> {
    let (negative, units) = quotient(Decimal::of_float(a)?, Decimal::of_float(b)?)?;
    let magnitude = i128::try_from(units).ok()?;
    Some(float(
        if negative { -magnitude } else { magnitude },
        -DIVISION_PRECISION,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::float::{format_int, format_v};

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).unwrap_or_else(|| panic!("{text}"))
    }

    fn quotient(a: f64, b: f64) -> f64 {
        divf(a, b).unwrap_or_else(|| panic!("{a}/{b}"))
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
            (-2.0, 3.0, "-0.6666666666666667"),
            (1.1e18, 10.0, "1.1e+17"),
        ] {
            assert_eq!(format_v(quotient(a, b)), rendered, "{a}/{b}");
        }
        // A quotient below half of 10^-16 is zero.
        assert_eq!(quotient(1e-20, 1.0), 0.0);
        assert_eq!(quotient(5e-17, 1.0), 1e-16);
        assert_eq!(quotient(1.0, 1e30), 0.0);
        assert_eq!(divf(1.0, 0.0), None);
        assert_eq!(Decimal::of_float(f64::INFINITY), None);
        // Past the bound: no answer rather than a wrong one.
        assert_eq!(divf(1e30, 3.0), None);
    }

    #[test]
    fn truncates_as_go_int() {
        // Rendered by Helm: memory `1Gi` over a ratio of 3, `1.5` over 1.
        assert_eq!(format_int(quotient(1_073_741_824.0, 3.0)), "357913941");
        assert_eq!(format_int(quotient(1.5, 1.0)), "1");
        assert_eq!(format_int(quotient(0.1, 1.0)), "0");
        assert_eq!(d("1536").truncated_quotient(d("1024")), Some(1));
        assert_eq!(d("1000000007").truncated_quotient(d("1048576")), Some(953));
        assert_eq!(d("1000000007").divided_by(d("1048576")), None);
        assert_eq!(d("7").divided_by(d("100")), Some(d("0.07")));
        assert_eq!(d("-2.5").truncated(), Some(-2));
        assert_eq!(d("1e30").truncated(), None);
    }

    #[test]
    fn multiplies_and_adds_exactly() {
        // `toFloat` of `1.5Ei`: NewFromFloat(2^60) is 1152921504606847e3,
        // and the nearest float of the product is still 1.5 × 2^60.
        assert_eq!(
            Decimal::of_float(2_f64.powi(60)),
            Some(d("1152921504606847e3"))
        );
        assert_eq!(mulf(1.5, 2_f64.powi(60)), Some(1.5 * 2_f64.powi(60)));
        assert_eq!(mulf(250.0, 1e-3), Some(0.25));
        assert_eq!(mulf(f64::NAN, 1.0), None);
        assert_eq!(addf(0.1, 0.2), Some(0.3));
        assert_eq!(addf(1.0, -1.5), Some(-0.5));
        assert_eq!(addf(-0.25, 0.25), Some(0.0));
        assert_eq!(addf(99.99, 0.01), Some(100.0));
        assert_eq!(addf(1e20, 1e-5), Some(1e20));
        assert_eq!(d("1000").times(d("0.07")), Some(d("70")));
        assert_eq!(d("1e3").compare(d("999.9")), Some(Ordering::Greater));
    }

    #[test]
    fn strings_as_cast_reads_them() {
        assert_eq!(Decimal::parse("1.50"), Some(d("15e-1")));
        assert_eq!(Decimal::parse(".5"), Some(d("0.5")));
        assert_eq!(Decimal::parse("1."), Some(d("1")));
        assert_eq!(Decimal::parse("-0"), Some(Decimal::ZERO));
        assert_eq!(Decimal::parse("1_0"), Some(d("10")));
        for zero in ["abc", "", "1e", "0x10", "_1", " 1", "."] {
            assert_eq!(Decimal::parse(zero), Some(Decimal::ZERO), "{zero:?}");
        }
        assert_eq!(Decimal::parse("inf"), None);
        assert_eq!(
            Decimal::parse("1234567890123456"),
            Some(d("1234567890123456"))
        );
        assert_eq!(d("1234567890123456").float_exact(), None);
        assert_eq!(
            d("123456789012345").float_exact(),
            Some(d("123456789012345"))
        );
        assert_eq!(d("1e400").float_exact(), None);
    }
}
