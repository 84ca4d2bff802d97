//! Quantity arithmetic as the Kubernetes charts' templates do it
//! (`cozy-lib.resources.toFloat`, `kubernetes.cpuToMillicores`, sprig's
//! `float64`, `mulf`, `addf`, `divf`), so a comparison the template makes
//! comes out the same here.
//!
//! sprig's float functions run on shopspring/decimal: each operand is the
//! shortest decimal of its float64, the operation is exact, and the result
//! is rounded back to a float64. A decimal of at most 15 significant digits
//! survives those round trips unchanged, so [`Decimal`] computes exactly
//! with at most 15 digits, and gives `None` beyond: the rule that asked
//! does not judge that value (petabytes, 16-digit fractions).

use std::cmp::Ordering;

/// The most significant digits a value may have and still be what the
/// template computes, and the bound of such a mantissa (10^15).
const DIGITS: usize = 15;
const BOUND: u128 = 1_000_000_000_000_000;

/// `mantissa × 10^exponent`, exactly, the mantissa without trailing zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    mantissa: i64,
    exponent: i32,
}

impl Decimal {
    pub const ZERO: Self = Self {
        mantissa: 0,
        exponent: 0,
    };

    /// `mantissa × 10^exponent`, if it has at most [`DIGITS`] digits.
    fn new(mut mantissa: i128, mut exponent: i32) -> Option<Self> {
        if mantissa == 0 {
            return Some(Self::ZERO);
        }
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent = exponent.checked_add(1)?;
        }
        if mantissa.unsigned_abs() >= BOUND || exponent.abs() > 300 {
            return None;
        }
        Some(Self {
            mantissa: i64::try_from(mantissa).ok()?,
            exponent,
        })
    }

    /// An integer.
    pub fn int(value: i64) -> Option<Self> {
        Self::new(i128::from(value), 0)
    }

    /// Both mantissas at the lower exponent.
    fn aligned(self, other: Self) -> Option<(i128, i128, i32)> {
        let exponent = self.exponent.min(other.exponent);
        let scale = |d: Self| {
            let shift = u32::try_from(d.exponent - exponent).ok()?;
            i128::from(d.mantissa).checked_mul(10i128.checked_pow(shift)?)
        };
        Some((scale(self)?, scale(other)?, exponent))
    }

    /// sprig's `mulf`.
    pub fn mul(self, other: Self) -> Option<Self> {
        let mantissa = i128::from(self.mantissa) * i128::from(other.mantissa);
        Self::new(mantissa, self.exponent.checked_add(other.exponent)?)
    }

    /// sprig's `addf`.
    pub fn add(self, other: Self) -> Option<Self> {
        let (a, b, exponent) = self.aligned(other)?;
        Self::new(a.checked_add(b)?, exponent)
    }

    /// `divf x 100`, exact.
    pub fn percent(self) -> Option<Self> {
        Self::new(i128::from(self.mantissa), self.exponent.checked_sub(2)?)
    }

    /// How the template's `le`/`ge`/`gt` compare two values.
    pub fn compare(self, other: Self) -> Option<Ordering> {
        let (a, b, _) = self.aligned(other)?;
        Some(a.cmp(&b))
    }

    /// Whether the value is at most zero (`le x 0.0`).
    pub fn is_positive(self) -> bool {
        self.mantissa > 0
    }

    /// sprig's `int` of the quotient `self / divisor`: truncated toward
    /// zero.
    pub fn truncated_div(self, divisor: i64) -> Option<i64> {
        let (numerator, denominator) = if self.exponent >= 0 {
            let scale = 10i128.checked_pow(u32::try_from(self.exponent).ok()?)?;
            (
                i128::from(self.mantissa).checked_mul(scale)?,
                i128::from(divisor),
            )
        } else {
            let scale = 10i128.checked_pow(self.exponent.unsigned_abs())?;
            (
                i128::from(self.mantissa),
                i128::from(divisor).checked_mul(scale)?,
            )
        };
        i64::try_from(numerator / denominator).ok()
    }
}

/// Whether `text` is all ASCII digits (at least one).
pub fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// Whether a plain YAML scalar `text` reads back as a number, as the
/// YAML that Helm parses a rendered template with reads it: an optional
/// sign, digits with an optional fraction (or a fraction alone), an
/// optional exponent (`10`, `+10`, `10.5`, `.5`, `1e3`).
pub fn reads_as_number(text: &str) -> bool {
    let bare = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (number, exponent) = match bare.find(['e', 'E']) {
        Some(at) => (&bare[..at], Some(&bare[at + 1..])),
        None => (bare, None),
    };
    let (whole, fraction) = match number.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (number, None),
    };
    let mantissa = match fraction {
        None => is_digits(whole),
        Some(fraction) if whole.is_empty() => is_digits(fraction),
        Some(fraction) => is_digits(whole) && (fraction.is_empty() || is_digits(fraction)),
    };
    mantissa && exponent.is_none_or(|e| is_digits(e.strip_prefix(['+', '-']).unwrap_or(e)))
}

/// sprig's `float64` of a string (spf13/cast `ToFloat64`: Go's
/// `strconv.ParseFloat`, 0 where it fails): `None` for what it reads but
/// [`Decimal`] cannot hold (infinity, NaN, more than 15 digits).
pub fn float64(text: &str) -> Option<Decimal> {
    let (negative, bare) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = bare.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return None;
    }
    let (number, exponent) = match bare.find(['e', 'E']) {
        Some(at) => (&bare[..at], Some(&bare[at + 1..])),
        None => (bare, None),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let well_formed = (whole.is_empty() || is_digits(whole))
        && (fraction.is_empty() || is_digits(fraction))
        && !(whole.is_empty() && fraction.is_empty())
        && exponent.is_none_or(|e| is_digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    if !well_formed {
        return Some(Decimal::ZERO);
    }
    let exponent: i32 = match exponent {
        // Beyond ±9999 the value is infinite or zero: not judged.
        Some(e) if e.trim_start_matches(['+', '-']).len() > 4 => return None,
        Some(e) => e.parse().ok()?,
        None => 0,
    };
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    let significant = digits.trim_end_matches('0');
    if significant.is_empty() {
        return Some(Decimal::ZERO);
    }
    if significant.len() > DIGITS {
        return None;
    }
    let mantissa: i128 = significant.parse().ok()?;
    let zeros = i32::try_from(digits.len() - significant.len()).ok()?;
    let fraction_len = i32::try_from(fraction.len()).ok()?;
    Decimal::new(
        if negative { -mantissa } else { mantissa },
        exponent.checked_add(zeros)?.checked_sub(fraction_len)?,
    )
}

/// The unit suffixes `toFloat` strips, with the shortest decimal of each
/// unit's float64 (only one suffix can match a string). `Pi` and `Ei`
/// have 16 digits: values in them are not judged.
const UNITS: &[(&str, i64, i32)] = &[
    ("Ki", 1024, 0),
    ("Mi", 1_048_576, 0),
    ("Gi", 1_073_741_824, 0),
    ("Ti", 1_099_511_627_776, 0),
    ("Pi", 1_125_899_906_842_624, 0),
    ("Ei", 1_152_921_504_606_847, 3),
    ("k", 1, 3),
    ("M", 1, 6),
    ("G", 1, 9),
    ("T", 1, 12),
    ("P", 1, 15),
    ("E", 1, 18),
    ("m", 1, -3),
];

/// `cozy-lib.resources.toFloat` of a string: the number before a known
/// suffix (`float64`) times the suffix's unit.
pub fn to_float(text: &str) -> Option<Decimal> {
    for &(suffix, mantissa, exponent) in UNITS {
        if let Some(number) = text.strip_suffix(suffix) {
            let unit = Decimal::new(i128::from(mantissa), exponent)?;
            return float64(number)?.mul(unit);
        }
    }
    float64(text)
}

/// `kubernetes.cpuToMillicores`: `100m` → `100`; anything else times 1000,
/// truncated (`1.5` → `1500`, `abc` → `0`). The template returns a string,
/// which the callers read with `float64` or `int`.
pub fn cpu_to_millicores(text: &str) -> Option<String> {
    if let Some(millis) = text.strip_suffix('m') {
        return Some(millis.to_owned());
    }
    let cores = float64(text)?;
    Some(
        cores
            .mul(Decimal::int(1000)?)?
            .truncated_div(1)?
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        float64(text).unwrap()
    }

    #[test]
    fn decimal_arithmetic_as_sprig() {
        // 0.07 and 1000 multiply to exactly 70, as decimals do.
        assert_eq!(d("1000").mul(d("0.07")), Some(d("70")));
        assert_eq!(d("0.1").add(d("0.2")), Some(d("0.3")));
        assert_eq!(d("7").percent(), Some(d("0.07")));
        assert_eq!(d("1e3").compare(d("999.9")), Some(Ordering::Greater));
        assert_eq!(d("1536").truncated_div(1024), Some(1));
        assert_eq!(d("-2.5").truncated_div(1), Some(-2));
        assert_eq!(float64("1234567890123456"), None);
        assert_eq!(float64("inf"), None);
    }

    #[test]
    fn strings_as_cast_reads_them() {
        assert_eq!(float64("1.50"), Some(d("15e-1")));
        assert_eq!(float64(".5"), Some(d("0.5")));
        assert_eq!(float64("1."), Some(d("1")));
        assert_eq!(float64("-0"), Some(Decimal::ZERO));
        for zero in ["abc", "", "1e", "0x10", "1_0", " 1", "."] {
            assert_eq!(float64(zero), Some(Decimal::ZERO), "{zero:?}");
        }
    }

    #[test]
    fn plain_scalars_yaml_reads_as_numbers() {
        for number in [
            "10", "+10", "-1", "10.5", "1.", ".5", "1e3", "1E+3", "2.5e-1",
        ] {
            assert!(reads_as_number(number), "{number:?}");
        }
        for text in [
            "10Gi", "1e3k", "", ".", "e3", "1e", "1.2.3", "0x10", "1_0", " 1", "+",
        ] {
            assert!(!reads_as_number(text), "{text:?}");
        }
    }

    #[test]
    fn quantities_as_the_templates_read_them() {
        assert_eq!(to_float("1Gi"), Decimal::int(1_073_741_824));
        assert_eq!(to_float("1.5Mi"), Decimal::int(1_572_864));
        assert_eq!(to_float("1e3k"), Decimal::int(1_000_000));
        assert_eq!(to_float("500m"), Some(d("0.5")));
        assert_eq!(to_float("1n"), Some(Decimal::ZERO));
        assert_eq!(to_float("-1Gi"), Decimal::int(-1_073_741_824));
        assert_eq!(to_float("1Ei"), None);
        assert_eq!(cpu_to_millicores("250m").as_deref(), Some("250"));
        assert_eq!(cpu_to_millicores("1.5").as_deref(), Some("1500"));
        assert_eq!(cpu_to_millicores("0.0004").as_deref(), Some("0"));
        assert_eq!(cpu_to_millicores("2k").as_deref(), Some("0"));
    }
}
