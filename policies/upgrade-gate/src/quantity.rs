//! Kubernetes quantities (`500m`, `4Gi`, `1e3`), exactly, for quota
//! arithmetic.
//!
//! cozystack-api and cozystack-controller compare tenant quotas as
//! `resource.Quantity` values (k8s.io/apimachinery v0.35
//! `pkg/api/resource/quantity.go`, `suffix.go`). A policy module cannot
//! carry apimachinery, and the Rust crates that parse quantities depend on
//! k8s-openapi, which the bundle keeps out of modules; so this module reads
//! the grammar as `ParseQuantity` reads it (`parseQuantityString`, then the
//! suffixer), into whole nano-units, in an `i128`:
//!
//! - a value finer than the nano rounds away from zero (`0.1n` is `1n`:
//!   `amount.Round(amount, Nano.infScale(), inf.RoundUp)`);
//! - a binary-suffixed value is capped at 2^63-1 units (`maxAllowed`);
//! - a number without digits is zero (`.`, `-`, `Gi`: "if we stripped all
//!   numerator positions, always return 0"); only the empty text is refused;
//! - an exponent suffix is read as an `int64` and kept as an `int32`
//!   (`e4294967296` is `e0`).
//!
//! `ParseQuantity` keeps arbitrary precision (`inf.Dec`); this type holds
//! every value below about 1.7e29 units exactly and saturates beyond, where
//! two such values compare equal.

use std::fmt;

const NANO: i128 = 1_000_000_000;
/// `maxAllowed`: the cap of a binary-suffixed quantity, in nano-units.
const BINARY_CAP: i128 = 9_223_372_036_854_775_807 * NANO;

/// A quantity in nano-units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Quantity(i128);

/// The suffixes `ParseQuantity` takes, with their powers.
enum Scale {
    /// `Ki` … `Ei`: times 2^(10·n).
    Binary(u32),
    /// `n` … `E` and `e<n>`: times 10^n.
    Decimal(i32),
}

/// `quantitySuffixer.interpret`.
fn scale(suffix: &str) -> Option<Scale> {
    let binary = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if let Some(n) = binary.iter().position(|s| *s == suffix) {
        return u32::try_from(n + 1).ok().map(Scale::Binary);
    }
    let decimal = match suffix {
        "" => 0,
        "n" => -9,
        "u" => -6,
        "m" => -3,
        "k" => 3,
        "M" => 6,
        "G" => 9,
        "T" => 12,
        "P" => 15,
        "E" => 18,
        exponent => {
            // `strconv.ParseInt(suffix[1:], 10, 64)`, then `int32(parsed)`.
            let digits = exponent.strip_prefix(['e', 'E'])?;
            let unsigned = digits.strip_prefix(['+', '-']).unwrap_or(digits);
            if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let parsed: i64 = digits.parse().ok()?;
            let [a, b, c, d, ..] = parsed.to_le_bytes();
            i32::from_le_bytes([a, b, c, d])
        }
    };
    Some(Scale::Decimal(decimal))
}

/// `numerator / denominator`, rounded away from zero (quantities round up).
fn divide_up(numerator: i128, denominator: i128) -> i128 {
    let quotient = numerator / denominator;
    if quotient * denominator == numerator {
        quotient
    } else {
        quotient + numerator.signum()
    }
}

/// `digits × 10^exponent` in nano-units, exactly while it fits.
enum Magnitude {
    Exact(i128),
    TooLarge,
}

/// The value of a digit string times `10^shift` and `2^binary`, in
/// nano-units, rounded away from zero; `TooLarge` past `i128`.
fn magnitude(digits: &str, shift: i64, binary: u32) -> Magnitude {
    // Trailing zeros move into the exponent, exactly.
    let significant = digits.trim_end_matches('0');
    if significant.is_empty() {
        return Magnitude::Exact(0);
    }
    let zeros = i64::try_from(digits.len() - significant.len()).unwrap_or(i64::MAX);
    let shift = shift.saturating_add(zeros);
    let power = |n: u64| u32::try_from(n).ok().and_then(|n| 10_i128.checked_pow(n));
    if binary == 0 && shift < 0 {
        // The digits below the nano go, and, not being all zeros, round up.
        let dropped = usize::try_from(shift.unsigned_abs()).unwrap_or(usize::MAX);
        let Some(kept_len) = significant.len().checked_sub(dropped).filter(|n| *n > 0) else {
            return Magnitude::Exact(1);
        };
        let (kept, _) = significant.split_at(kept_len);
        return match kept.parse::<i128>() {
            Ok(value) => Magnitude::Exact(value + 1),
            Err(_) => Magnitude::TooLarge,
        };
    }
    let scaled = significant
        .parse::<i128>()
        .ok()
        .and_then(|value| value.checked_mul(1_i128.checked_shl(10 * binary)?));
    let Some(value) = scaled else {
        return Magnitude::TooLarge;
    };
    if shift >= 0 {
        match power(shift.unsigned_abs()).and_then(|p| value.checked_mul(p)) {
            Some(nano) => Magnitude::Exact(nano),
            None => Magnitude::TooLarge,
        }
    } else {
        // A binary value with more than nine fraction digits: the power of
        // two first, then the division, as `inf.Dec` does it exactly.
        Magnitude::Exact(match power(shift.unsigned_abs()) {
            Some(p) => divide_up(value, p),
            None => 1,
        })
    }
}

impl Quantity {
    /// Reads a quantity as `ParseQuantity` does; `None` when it refuses it.
    pub fn parse(text: &str) -> Option<Self> {
        if text.is_empty() {
            return None;
        }
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, text.get(1..)?),
            Some(b'+') => (false, text.get(1..)?),
            _ => (false, text),
        };
        let whole_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (whole, after) = rest.split_at(whole_end);
        let (fraction, suffix) = match after.strip_prefix('.') {
            Some(after) => after.split_at(
                after
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(after.len()),
            ),
            None => ("", after),
        };
        let fraction_digits = i64::try_from(fraction.len()).ok()?;
        let digits = format!("{whole}{fraction}");
        let nano = match scale(suffix)? {
            Scale::Binary(n) => match magnitude(&digits, 9 - fraction_digits, n) {
                Magnitude::Exact(nano) => nano.min(BINARY_CAP),
                Magnitude::TooLarge => BINARY_CAP,
            },
            Scale::Decimal(exponent) => {
                match magnitude(&digits, 9 + i64::from(exponent) - fraction_digits, 0) {
                    Magnitude::Exact(nano) => nano,
                    Magnitude::TooLarge => i128::MAX,
                }
            }
        };
        Some(Self(if negative { -nano } else { nano }))
    }

    /// A quota value as Helm values hold it: a string, or a bare number
    /// (`resource.Quantity` reads unquoted JSON numbers too).
    pub fn of_value(value: &shared::Value) -> Option<Self> {
        match value {
            shared::Value::String(text) => Self::parse(text),
            shared::Value::Number(number) => Self::parse(&number.to_string()),
            _ => None,
        }
    }

    pub fn zero() -> Self {
        Self(0)
    }

    pub fn is_negative(self) -> bool {
        self.0 < 0
    }

    pub fn plus(self, other: Self) -> Self {
        Self(self.0.saturating_add(other.0))
    }

    pub fn minus(self, other: Self) -> Self {
        Self(self.0.saturating_sub(other.0))
    }
}

impl fmt::Display for Quantity {
    /// The shortest exact spelling: a binary suffix when one divides the
    /// value, else a decimal one, else milli-, micro- or nano-units.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nano = self.0;
        if nano % NANO == 0 {
            let units = nano / NANO;
            for (suffix, power) in [
                ("Ei", 6),
                ("Pi", 5),
                ("Ti", 4),
                ("Gi", 3),
                ("Mi", 2),
                ("Ki", 1),
            ] {
                let factor = 1_i128 << (10 * power);
                if units != 0 && units % factor == 0 {
                    return write!(f, "{}{suffix}", units / factor);
                }
            }
            for (suffix, power) in [
                ("E", 18),
                ("P", 15),
                ("T", 12),
                ("G", 9),
                ("M", 6),
                ("k", 3),
            ] {
                let factor = 10_i128.pow(power);
                if units != 0 && units % factor == 0 {
                    return write!(f, "{}{suffix}", units / factor);
                }
            }
            return write!(f, "{units}");
        }
        for (suffix, factor) in [("m", 1_000_000), ("u", 1_000)] {
            if nano % factor == 0 {
                return write!(f, "{}{suffix}", nano / factor);
            }
        }
        write!(f, "{nano}n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Quantity {
        Quantity::parse(text).unwrap_or_else(|| panic!("{text} is a quantity"))
    }

    #[test]
    fn reads_every_suffix_exactly() {
        assert_eq!(q("2"), q("2000m"));
        assert_eq!(q("0.5"), q("500m"));
        assert_eq!(q("1Ki"), q("1024"));
        assert_eq!(q("1.5Gi"), q("1536Mi"));
        assert_eq!(q("1e3"), q("1k"));
        assert_eq!(q("1E-3"), q("1m"));
        assert_eq!(q(".5"), q("0.5"));
        assert_eq!(q("+4"), q("4"));
        assert_eq!(q("4."), q("4"));
        assert_eq!(q("1M"), q("1000k"));
        assert!(q("4Gi") > q("4G"));
        assert_eq!(q("-1").plus(q("1")), Quantity::zero());
        // Finer than nano rounds up.
        assert_eq!(q("0.1n"), q("1n"));
    }

    #[test]
    fn refuses_what_parse_quantity_refuses() {
        for bad in [
            "",
            "two",
            "1.2.3",
            "4gi",
            "1e",
            "1e1.5",
            "1 Gi",
            " 1",
            "--1",
            "1KiB",
            "1e-",
            "ee5",
            "1Mi3",
            "1e3e3",
            "1e99999999999999999999",
        ] {
            assert_eq!(Quantity::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn takes_what_parse_quantity_takes() {
        // No digits: zero, whatever the sign or suffix.
        for zero in [".", "-", "+", "Gi", "m", "-.e5", "0", "000", "-0"] {
            assert_eq!(Quantity::parse(zero), Some(Quantity::zero()), "{zero}");
        }
        // The exponent is an int64 kept as an int32.
        assert_eq!(q("1e4294967296"), q("1"));
        assert_eq!(q("1e+3"), q("1k"));
        assert_eq!(q("1e003"), q("1k"));
    }

    #[test]
    fn rounds_finer_than_the_nano_away_from_zero() {
        // `ParseQuantity` rounds `inf.RoundUp` at the nano: what the
        // chart's derived requests become (`0.0833333333333333` → 83333334n).
        assert_eq!(q("0.0833333333333333"), q("83333334n"));
        assert_eq!(q("0.3333333333333333"), q("333333334n"));
        assert_eq!(q("0.1666666666666667"), q("166666667n"));
        assert_eq!(q("0.33"), q("330m"));
        assert_eq!(q("0.000000000000000001"), q("1n"));
        assert_eq!(q("-0.1n"), q("-1n"));
        assert_eq!(q("1.5n"), q("2n"));
        assert_eq!(q("1e-10"), q("1n"));
        assert_eq!(q("1.0000000001Ki"), q("1024000000103n"));
        assert_eq!(q("0.000000001Ki"), q("1024n"));
        assert_eq!(q("12345678901234567890e-30"), q("1n"));
    }

    #[test]
    fn caps_binary_values_and_saturates_beyond_i128() {
        let cap = q("9223372036854775807");
        assert_eq!(q("8Ei"), cap);
        assert_eq!(q("100000Ei"), cap);
        assert_eq!(q("-8Ei"), Quantity::zero().minus(cap));
        assert!(q("7Ei") < cap);
        assert_eq!(q("1e99"), q("1e40"));
        assert!(q("1e99") > q("1e28"));
    }

    #[test]
    fn numbers_in_values_read_as_quantities() {
        assert_eq!(Quantity::of_value(&shared::Value::from(4)), Some(q("4")));
        assert_eq!(
            Quantity::of_value(&serde_json_number(1.5)),
            Some(q("1500m"))
        );
        assert_eq!(Quantity::of_value(&shared::Value::Bool(true)), None);
    }

    fn serde_json_number(n: f64) -> shared::Value {
        shared::Value::from(n)
    }

    #[test]
    fn prints_the_shortest_exact_spelling() {
        for (text, shown) in [
            ("6Gi", "6Gi"),
            ("1536Mi", "1536Mi"),
            ("4096Mi", "4Gi"),
            ("6", "6"),
            ("1500m", "1500m"),
            ("2000", "2k"),
            ("1u", "1u"),
            ("0", "0"),
        ] {
            assert_eq!(q(text).to_string(), shown, "{text}");
        }
    }
}
