//! Cozystack's library chart as the application charts include it:
//! `cozy-lib.resources.toFloat` (`packages/library/cozy-lib/templates/
//! _resources.tpl`), the float of a quantity, which the kubernetes chart's
//! kubelet checks and the tenant chart's quotas both compute with:
//! `mulf (float64 $number) $unit | toString`, read back with `float64`.

use crate::decimal::{Decimal, mulf};
use crate::float::cast_float;

/// The suffixes `toFloat` multiplies out (`$base2` and `$base10`, merged),
/// each unit as `NewFromFloat` reads its float. `Pi` and `Ei` have 16
/// digits.
const UNITS: [(&str, Decimal); 13] = [
    ("E", Decimal::exact(1, 18)),
    ("Ei", Decimal::exact(1_152_921_504_606_847, 3)),
    ("G", Decimal::exact(1, 9)),
    ("Gi", Decimal::exact(1_073_741_824, 0)),
    ("Ki", Decimal::exact(1024, 0)),
    ("M", Decimal::exact(1, 6)),
    ("Mi", Decimal::exact(1_048_576, 0)),
    ("P", Decimal::exact(1, 15)),
    ("Pi", Decimal::exact(1_125_899_906_842_624, 0)),
    ("T", Decimal::exact(1, 12)),
    ("Ti", Decimal::exact(1_099_511_627_776, 0)),
    ("k", Decimal::exact(1, 3)),
    ("m", Decimal::exact(1, -3)),
];

/// The number before the suffix, and the suffix's unit: `range` walks the
/// merged dict in key order and the last suffix that matches wins (at most
/// one can); no suffix is a unit of 1.
fn split(text: &str) -> (&str, Decimal) {
    let mut found = (text, Decimal::int(1));
    for (suffix, unit) in UNITS {
        if let Some(number) = text.strip_suffix(suffix) {
            found = (number, unit);
        }
    }
    found
}

/// `include "cozy-lib.resources.toFloat" text | float64`: the number (read
/// by `float64`, 0 where it is none) times the unit (`mulf`), through
/// `toString` and back, which gives the same float. `None` where `mulf`
/// panics (the number is infinite or NaN): the template fails.
pub fn to_float(text: &str) -> Option<f64> {
    let (number, unit) = split(text);
    mulf(cast_float(number), unit.to_float())
}

/// [`to_float`] as a decimal, exactly, where no float rounds it: the
/// number and the product of at most 15 significant digits
/// ([`Decimal::float_exact`]), `None` otherwise (a non-zero number in `Pi`
/// or `Ei`, whose units have 16).
pub fn to_decimal(text: &str) -> Option<Decimal> {
    let (number, unit) = split(text);
    Decimal::parse(number)?
        .float_exact()?
        .times(unit)?
        .float_exact()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_as_the_templates_read_them() {
        assert_eq!(to_float("1Gi"), Some(1_073_741_824.0));
        assert_eq!(to_float("1.5Mi"), Some(1_572_864.0));
        assert_eq!(to_float("1e3k"), Some(1_000_000.0));
        assert_eq!(to_float("500m"), Some(0.5));
        assert_eq!(to_float("1n"), Some(0.0));
        assert_eq!(to_float("-1Gi"), Some(-1_073_741_824.0));
        assert_eq!(to_float("1.5Ei"), Some(1.5 * 2_f64.powi(60)));
        assert_eq!(to_float("1e400Gi"), Some(0.0));
        assert_eq!(to_float("infGi"), None);
    }

    #[test]
    fn exactly_where_no_float_rounds() {
        let decimal = |text| Decimal::parse(text).unwrap();
        assert_eq!(to_decimal("1Gi"), Some(decimal("1073741824")));
        assert_eq!(to_decimal("1.5Mi"), Some(decimal("1572864")));
        assert_eq!(to_decimal("500m"), Some(decimal("0.5")));
        assert_eq!(to_decimal("1n"), Some(Decimal::ZERO));
        assert_eq!(to_decimal("1Ei"), None);
        assert_eq!(to_decimal("1234567890123456"), None);
        for text in ["1Gi", "1.5Mi", "500m", "7", "3.3", "2.5T"] {
            assert_eq!(
                to_decimal(text).map(Decimal::to_float),
                to_float(text),
                "{text}"
            );
        }
    }
}
