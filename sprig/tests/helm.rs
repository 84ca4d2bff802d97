//! Every function of the crate against Helm itself, on the same inputs:
//! one go-template, executed by Go's text/template with Sprig through
//! Helm's SDK (v4.2.3, `tools/helm-venv`), prints a line per input, and the
//! crate must print the same line. Skipped, visibly, where the SDK is not
//! installed, except under CI.
//!
//! The inputs reach the template as strings and are read there with
//! `float64` (and here with [`sprig::cast_float`]), so both sides start from
//! the same float; every float is printed with `toString`
//! ([`sprig::format_v`]).

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use sprig::{addf, cast_float, cozy_lib, divf, format_v, int, kebabcase, mulf, to_int};

/// Strings Sprig's `float64` reads.
const CASTS: &[&str] = &[
    "3.3",
    "+3",
    ".5",
    "5.",
    "1e3",
    "100u",
    "1e400",
    " 2",
    "",
    "0.1",
    "1e21",
    "1.5e-7",
    "123456789012345678",
    "-0",
    "1_000",
    "1_000.5",
    "1e1_0",
    "_1",
    "1_.5",
    "0x10",
    "inf",
    "-Infinity",
    "NaN",
    "+nan",
    "007",
    "1e-400",
    "9007199254740993",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "0.33",
    "100000",
    "999999.5",
    "1e6",
    "1234567",
    "1.1e17",
    "1e100",
    "0.0001",
    "0.00001",
    "-0.1",
    "608863452348.1149",
    "2.2250738585072014e-308",
];

/// Pairs for `mulf`.
const PRODUCTS: &[(&str, &str)] = &[
    ("1.5", "1152921504606846976"),
    ("250", "0.001"),
    ("0.07", "1000"),
    ("3.3", "1000"),
    ("1e308", "10"),
    ("-0.5", "3"),
    ("0.1", "0.2"),
    ("123456.789", "0.05"),
    ("1024", "0.05"),
    ("1073741824", "0.07"),
];

/// Pairs for `addf`.
const SUMS: &[(&str, &str)] = &[
    ("0.1", "0.2"),
    ("1", "-1.5"),
    ("-0.25", "0.25"),
    ("99.99", "0.01"),
    ("1e20", "1e-5"),
    ("268435456", "268435456"),
    ("536870912", "75161927.68"),
    ("1.7976931348623157e308", "1.7976931348623157e308"),
];

/// Pairs for `divf` (no divisor of zero: Sprig panics, and the whole
/// template with it; no quotient past [`sprig::Decimal`]'s bound).
const QUOTIENTS: &[(&str, &str)] = &[
    ("3.3", "10"),
    ("1.1", "10"),
    ("1", "3"),
    ("0.25", "3"),
    ("0.5", "3"),
    ("2", "3"),
    ("1", "7"),
    ("1", "2.5"),
    ("3.3", "0.1"),
    ("1e7", "10"),
    ("1e-5", "10"),
    ("-1", "10"),
    ("1.1e18", "10"),
    ("1e-20", "1"),
    ("5e-17", "1"),
    ("1073741824", "3"),
    ("7", "100"),
    ("7.123456789012345", "100"),
    ("17179869184", "1048576"),
];

/// Floats for `int`.
const INTS: &[&str] = &[
    "1.5",
    "-2.7",
    "-0.5",
    "9007199254740993",
    "1e19",
    "357913941.3333333",
    "0",
    "-1e19",
];

/// Strings for `int` (spf13/cast's `ToInt`).
const INT_TEXTS: &[&str] = &[
    "100",
    "2.00",
    "1.5",
    "010",
    "0x1f",
    "-7",
    "1_000",
    "0x1_0",
    "0_10",
    "_1",
    "1__0",
    "0b101",
    "0o17",
    "",
    "abc",
    "046",
    "08",
    "0X2E",
    "46.0",
    "46.",
    " 46",
    "9223372036854775808",
    "-9223372036854775808",
];

/// Strings for `kebabcase`.
const NAMES: &[&str] = &[
    "App.User",
    "AppUser",
    "app_user",
    "",
    "ABC",
    "ABCdef",
    "abc123",
    "abc123def",
    "123abc",
    "a--b",
    "-a",
    "a-",
    "a b",
    "aB1",
    "HTTPServer",
    "fooBar2Baz",
    "a_-b",
    "a/b",
    "a:b",
    "User1",
    "a1B",
    "_a",
    "a_",
    "a  b",
    "A_B_C",
    "camelCaseX",
    "xML",
    "a1b2",
    "v1.2",
    "aB.Cd",
    "a\tb",
    "a._b",
    "a_.b",
    "aB-",
    "Ab_",
    "1.A",
];

/// Quantities for cozy-lib's `toFloat`.
const QUANTITIES: &[&str] = &[
    "1Gi", "1.5Mi", "1e3k", "500m", "1n", "-1Gi", "1.5Ei", "1e400Gi", "7", "128Mi", "0.5Gi", "1Pi",
    "3.3", "1e9", "500e6", "2.5T", "100Ki",
];

/// The template: a line per input, `<function> <answer>`. The `toFloat`
/// block is `cozy-lib.resources.toFloat` of Cozystack v1.6.2
/// (`packages/library/cozy-lib/templates/_resources.tpl`) with `$text` for
/// the helper's argument, read back with `float64` as its callers do.
const TEMPLATE: &str = r#"
{{- range .casts }}float64 {{ . | float64 | toString }}
{{ end }}
{{- range .products }}mulf {{ mulf (index . 0 | float64) (index . 1 | float64) | toString }}
{{ end }}
{{- range .sums }}addf {{ addf (index . 0 | float64) (index . 1 | float64) | toString }}
{{ end }}
{{- range .quotients }}divf {{ divf (index . 0 | float64) (index . 1 | float64) | toString }}
{{ end }}
{{- range .ints }}int {{ . | float64 | int }}
{{ end }}
{{- range .intTexts }}int {{ . | int }}
{{ end }}
{{- range .names }}kebabcase [{{ . | kebabcase }}]
{{ end }}
{{- range $text := .quantities }}
{{- $value := $text }}{{ $unit := 1.0 }}
{{- $base2 := dict "Ki" 0x1p10 "Mi" 0x1p20 "Gi" 0x1p30 "Ti" 0x1p40 "Pi" 0x1p50 "Ei" 0x1p60 }}
{{- $base10 := dict "m" 1e-3 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 }}
{{- range $k, $v := merge $base2 $base10 }}
{{- if hasSuffix $k $text }}{{ $value = trimSuffix $k $text }}{{ $unit = $v }}{{ end }}
{{- end }}toFloat {{ mulf (float64 $value) $unit | toString | float64 | toString }}
{{ end }}"#;

/// What the crate answers, line for line as the template prints.
fn ours() -> Vec<String> {
    let pair = |(a, b): &(&str, &str)| (cast_float(a), cast_float(b));
    let float = |value: Option<f64>| value.map_or_else(|| "<panics>".to_owned(), format_v);
    let mut lines = Vec::new();
    lines.extend(
        CASTS
            .iter()
            .map(|t| format!("float64 {}", format_v(cast_float(t)))),
    );
    lines.extend(
        PRODUCTS
            .iter()
            .map(pair)
            .map(|(a, b)| format!("mulf {}", float(mulf(a, b)))),
    );
    lines.extend(
        SUMS.iter()
            .map(pair)
            .map(|(a, b)| format!("addf {}", float(addf(a, b)))),
    );
    lines.extend(
        QUOTIENTS
            .iter()
            .map(pair)
            .map(|(a, b)| format!("divf {}", float(divf(a, b)))),
    );
    lines.extend(
        INTS.iter()
            .map(|t| format!("int {}", to_int(cast_float(t)))),
    );
    lines.extend(INT_TEXTS.iter().map(|t| format!("int {}", int(t))));
    lines.extend(
        NAMES
            .iter()
            .map(|t| format!("kebabcase [{}]", kebabcase(t).expect("ASCII"))),
    );
    lines.extend(
        QUANTITIES
            .iter()
            .map(|t| format!("toFloat {}", float(cozy_lib::to_float(t)))),
    );
    lines
}

#[test]
fn every_function_answers_as_helm() {
    let Some(helm) = e2e::helm::Helm::find().unwrap() else {
        println!("skipped: Helm's SDK is not installed (tools/helm-venv)");
        return;
    };
    let object = json!({
        "casts": CASTS,
        "products": PRODUCTS.iter().map(|(a, b)| [a, b]).collect::<Vec<_>>(),
        "sums": SUMS.iter().map(|(a, b)| [a, b]).collect::<Vec<_>>(),
        "quotients": QUOTIENTS.iter().map(|(a, b)| [a, b]).collect::<Vec<_>>(),
        "ints": INTS,
        "intTexts": INT_TEXTS,
        "names": NAMES,
        "quantities": QUANTITIES,
    });
    let rendered = helm.go_template(TEMPLATE, &object).unwrap();
    let helm: Vec<&str> = rendered.lines().collect();
    let ours = ours();
    assert_eq!(
        helm.len(),
        ours.len(),
        "Helm printed {} lines for {} inputs:\n{rendered}",
        helm.len(),
        ours.len()
    );
    let differ: Vec<String> = helm
        .iter()
        .zip(&ours)
        .filter(|(helm, ours)| **helm != ours.as_str())
        .map(|(helm, ours)| format!("Helm: {helm:?}, sprig: {ours:?}"))
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {} answers differ from Helm's:\n{}",
        differ.len(),
        ours.len(),
        differ.join("\n")
    );
    // The exact path chart-render takes: where it answers, Helm agrees.
    let floats = &helm[helm.len() - QUANTITIES.len()..];
    let mut exact = 0;
    for (text, line) in QUANTITIES.iter().zip(floats) {
        if let Some(decimal) = cozy_lib::to_decimal(text) {
            assert_eq!(
                format!("toFloat {}", format_v(decimal.to_float())),
                *line,
                "{text}"
            );
            exact += 1;
        }
    }
    assert!(exact > QUANTITIES.len() / 2, "{exact} exact");
    println!("{} answers, each Helm's", ours.len());
}
