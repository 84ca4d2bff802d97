//! Kubernetes quantities (`500m`, `4Gi`, `1e3`), exactly, for quota
//! arithmetic.
//!
//! cozystack-api and cozystack-controller compare tenant quotas as
//! `resource.Quantity` values (k8s.io/apimachinery
//! `pkg/api/resource/quantity.go`). A policy module cannot carry
//! apimachinery, and the Rust crates that parse quantities depend on
//! k8s-openapi, which the bundle keeps out of modules; so this module reads
//! the grammar itself, into whole nano-units (what `Quantity` keeps at most:
//! finer values round up, as `ParseQuantity` rounds them), in an `i128`
//! that no quota reaches.

use std::fmt;

const NANO: i128 = 1_000_000_000;

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
            let digits = exponent.strip_prefix(['e', 'E'])?;
            let unsigned = digits.strip_prefix(['+', '-']).unwrap_or(digits);
            if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            digits.parse().ok()?
        }
    };
    Some(Scale::Decimal(decimal))
}

/// `numerator / denominator`, rounded away from zero (quantities round up).
fn divide_up(numerator: i128, denominator: i128) -> Option<i128> {
    let quotient = numerator.checked_div(denominator)?;
    let exact = quotient.checked_mul(denominator)? == numerator;
    Some(if exact {
        quotient
    } else {
        quotient + numerator.signum()
    })
}

fn power_of_ten(exponent: u32) -> Option<i128> {
    10_i128.checked_pow(exponent)
}

impl Quantity {
    /// Reads a quantity as `ParseQuantity` does; `None` when it is not one
    /// (or is too large for any quota).
    pub fn parse(text: &str) -> Option<Self> {
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, text.get(1..)?),
            Some(b'+') => (false, text.get(1..)?),
            _ => (false, text),
        };
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(number_end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
            return None;
        }
        let digits = format!("{whole}{fraction}");
        let mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        let fraction_digits = u32::try_from(fraction.len()).ok()?;
        let nano = match scale(suffix)? {
            Scale::Binary(n) => {
                let factor = 1_i128.checked_shl(10 * n)?;
                let scaled = mantissa.checked_mul(factor)?.checked_mul(NANO)?;
                divide_up(scaled, power_of_ten(fraction_digits)?)?
            }
            Scale::Decimal(exponent) => {
                let shift = 9 + exponent - i32::try_from(fraction_digits).ok()?;
                if shift >= 0 {
                    mantissa.checked_mul(power_of_ten(shift.unsigned_abs())?)?
                } else {
                    divide_up(mantissa, power_of_ten(shift.unsigned_abs())?)?
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
            "", "two", "1.2.3", "4gi", "1e", "1e1.5", "Gi", ".", "1 Gi", "--1", "1KiB", "1e99",
        ] {
            assert_eq!(Quantity::parse(bad), None, "{bad}");
        }
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
