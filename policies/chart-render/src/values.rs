//! Reading chart values as the templates read them.

use shared::{Field, FieldError, Kind, Value};

/// Go template truthiness (`if .Values.x`): absent, null, `false`, `0`,
/// `""` and empty lists and maps are false.
pub fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => *flag,
        Some(Value::Number(number)) => number.as_f64().is_some_and(|n| n != 0.0),
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Array(items)) => !items.is_empty(),
        Some(Value::Object(members)) => !members.is_empty(),
    }
}

/// `x | default "" | toString`: what Go template truthiness calls empty
/// (`false`, `0`, `""`, empty lists and maps, null, absent) is `""`, a
/// string is itself, anything else its JSON text (`true`, `7`).
pub fn default_empty_to_string(value: Option<&Value>) -> String {
    match value {
        _ if !truthy(value) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// `<parent>.<addon>.enabled`, `false` when absent (every addon's chart
/// default); an error when it is not a boolean.
pub fn enabled(parent: &Field<'_>, addon: &str) -> Result<bool, FieldError> {
    Ok(parent.field(addon)?.field("enabled")?.bool()? == Some(true))
}

/// An integer, or `default` when absent.
pub fn int_or(field: &Field<'_>, default: i64) -> Result<i64, FieldError> {
    match field.json() {
        None => Ok(default),
        Some(Value::Number(number)) if number.as_i64().is_some() => {
            Ok(number.as_i64().unwrap_or(default))
        }
        Some(other) => Err(FieldError::WrongType {
            path: field.path(),
            expected: "an integer",
            found: Kind::of(other),
        }),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An object of `members`, without naming serde_json's map type.
    fn object(members: Vec<(&str, Value)>) -> Value {
        let mut value = Value::Object(Default::default());
        if let Some(map) = value.as_object_mut() {
            for (key, member) in members {
                map.insert(key.to_owned(), member);
            }
        }
        value
    }

    #[test]
    fn go_truthiness() {
        let truthy_values = [
            Value::from(true),
            Value::from(1),
            Value::from("x"),
            Value::from(vec![0]),
            object(vec![("a", Value::from(1))]),
        ];
        for value in truthy_values {
            assert!(truthy(Some(&value)), "{value}");
        }
        let falsy = [
            Value::from(false),
            Value::from(0),
            Value::from(""),
            Value::Array(Vec::new()),
            object(Vec::new()),
            Value::Null,
        ];
        for value in falsy {
            assert!(!truthy(Some(&value)), "{value}");
        }
        assert!(!truthy(None));
    }

    #[test]
    fn default_empty_then_to_string() {
        for (value, text) in [
            (Value::from(false), ""),
            (Value::from(0), ""),
            (Value::from(0.0), ""),
            (Value::Array(Vec::new()), ""),
            (Value::Null, ""),
            (Value::from("x"), "x"),
            (Value::from(true), "true"),
            (Value::from(7), "7"),
        ] {
            assert_eq!(default_empty_to_string(Some(&value)), text, "{value}");
        }
        assert_eq!(default_empty_to_string(None), "");
    }

    #[test]
    fn integers_and_flags() {
        let spec = object(vec![
            ("a", object(vec![("enabled", Value::from(true))])),
            ("b", object(vec![("enabled", Value::from("yes"))])),
            ("n", Value::from(3)),
            ("f", Value::from(1.5)),
        ]);
        let root = Field::root(Some(&spec));
        assert!(enabled(&root, "a").unwrap());
        assert!(!enabled(&root, "absent").unwrap());
        assert!(enabled(&root, "b").is_err());
        assert_eq!(int_or(&root.field("n").unwrap(), 0).unwrap(), 3);
        assert_eq!(int_or(&root.field("x").unwrap(), 7).unwrap(), 7);
        assert!(int_or(&root.field("f").unwrap(), 0).is_err());
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
}
