//! Literals of `$filter` (`docs/rules.md` §7.2), one form per EDM type.

use crate::edm::EdmValue;
use std::fmt::Write;

/// Appends the filter literal of a value:
///
/// | type | literal |
/// |---|---|
/// | String | `'O''Brien'`: quoted, every `'` doubled |
/// | Int32 | `42` |
/// | Int64 | `42L` (without `L` a large value is read as an invalid Int32) |
/// | Double | `4.5`, `5.0`: always a decimal point, never an exponent (Azurite's lexer reads `-?\d+(\.\d+)?`) |
/// | Boolean | `true`, `false` |
/// | DateTime | `datetime'2024-01-02T03:04:05.0000000Z'`: 7 fractional digits |
/// | Guid | `guid'0f8fad5b-d9cb-469f-a165-70867728950e'`: lowercase |
/// | Binary | `X'0aff'`: lowercase hex (base64 is rejected by the service) |
///
/// # Errors
/// A NaN or infinite Double, which has no literal that the service and the emulator both read: the error is
/// its name (`NaN`, `Infinity`, `-Infinity`). Nothing is appended then.
pub(crate) fn write_literal(out: &mut String, value: &EdmValue) -> Result<(), String> {
    match value {
        EdmValue::String(s) => write_string(out, s),
        EdmValue::Int32(v) => {
            let _ = write!(out, "{v}");
        }
        EdmValue::Int64(v) => {
            let _ = write!(out, "{v}L");
        }
        EdmValue::Double(v) => write_double(out, *v)?,
        EdmValue::Boolean(v) => out.push_str(if *v { "true" } else { "false" }),
        EdmValue::DateTime(v) => {
            out.push_str("datetime'");
            v.write_to(out);
            out.push('\'');
        }
        EdmValue::Guid(v) => {
            let _ = write!(out, "guid'{}'", v.hyphenated());
        }
        EdmValue::Binary(v) => {
            out.reserve(3 + 2 * v.len());
            out.push_str("X'");
            for b in v.iter() {
                let _ = write!(out, "{b:02x}");
            }
            out.push('\'');
        }
    }
    Ok(())
}

/// `'...'` with every `'` doubled: the only character that can end an OData string literal.
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('\'');
    for (i, part) in s.split('\'').enumerate() {
        if i > 0 {
            out.push_str("''");
        }
        out.push_str(part);
    }
    out.push('\'');
}

/// A finite double in plain decimal with at least one fractional digit: Rust's `Display` for `f64` writes the
/// shortest digits that read back to the same value and never an exponent, so only `.0` may be missing.
fn write_double(out: &mut String, v: f64) -> Result<(), String> {
    if v.is_nan() {
        return Err("NaN".to_owned());
    }
    if v.is_infinite() {
        return Err(if v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned());
    }
    let start = out.len();
    let _ = write!(out, "{v}");
    if !out[start..].contains('.') {
        out.push_str(".0");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edm::EdmBinary;
    use crate::DateTime;
    use proptest::prelude::*;

    fn lit(v: EdmValue) -> String {
        let mut s = String::new();
        write_literal(&mut s, &v).unwrap();
        s
    }

    #[test]
    fn every_form_of_spec_section_7() {
        assert_eq!(lit(EdmValue::try_from("O'Brien").unwrap()), "'O''Brien'");
        assert_eq!(lit(EdmValue::try_from("").unwrap()), "''");
        assert_eq!(lit(EdmValue::try_from("''").unwrap()), "''''''");
        assert_eq!(lit(EdmValue::Int32(42)), "42");
        assert_eq!(lit(EdmValue::Int32(i32::MIN)), "-2147483648");
        assert_eq!(lit(EdmValue::Int64(42)), "42L");
        assert_eq!(lit(EdmValue::Int64(i64::MIN)), "-9223372036854775808L");
        assert_eq!(lit(EdmValue::Double(4.5)), "4.5");
        assert_eq!(lit(EdmValue::Double(5.0)), "5.0");
        assert_eq!(lit(EdmValue::Double(-0.0)), "-0.0");
        assert_eq!(lit(EdmValue::Double(1e21)), "1000000000000000000000.0");
        assert_eq!(lit(EdmValue::Double(1.5e-7)), "0.00000015");
        assert_eq!(lit(EdmValue::Boolean(true)), "true");
        assert_eq!(lit(EdmValue::Boolean(false)), "false");
        let t: DateTime = "2024-01-02T03:04:05Z".parse().unwrap();
        assert_eq!(lit(EdmValue::DateTime(t)), "datetime'2024-01-02T03:04:05.0000000Z'");
        let g = uuid::Uuid::parse_str("0F8FAD5B-D9CB-469F-A165-70867728950E").unwrap();
        assert_eq!(lit(EdmValue::Guid(g)), "guid'0f8fad5b-d9cb-469f-a165-70867728950e'");
        assert_eq!(lit(EdmValue::Binary(EdmBinary::new(vec![0x0a, 0xff, 0]).unwrap())), "X'0aff00'");
        assert_eq!(lit(EdmValue::Binary(EdmBinary::default())), "X''");
    }

    #[test]
    fn non_finite_doubles_are_refused() {
        for (v, name) in [(f64::NAN, "NaN"), (f64::INFINITY, "Infinity"), (f64::NEG_INFINITY, "-Infinity")] {
            let mut s = String::from("X eq ");
            assert_eq!(write_literal(&mut s, &EdmValue::Double(v)), Err(name.to_owned()));
            assert_eq!(s, "X eq ");
        }
    }

    proptest! {
        /// Every finite double is written in the grammar Azurite's lexer accepts and reads back exactly.
        #[test]
        fn doubles_read_back_exactly(bits in any::<u64>()) {
            let v = f64::from_bits(bits);
            prop_assume!(v.is_finite());
            let s = lit(EdmValue::Double(v));
            let digits = s.strip_prefix('-').unwrap_or(&s);
            let (int, frac) = digits.split_once('.').expect("a decimal point");
            prop_assert!(!int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()), "{}", s);
            prop_assert!(!frac.is_empty() && frac.bytes().all(|b| b.is_ascii_digit()), "{}", s);
            prop_assert_eq!(s.parse::<f64>().unwrap().to_bits(), v.to_bits());
        }

        /// A string literal is one quoted token whose undoubled content is the input.
        #[test]
        fn strings_cannot_escape(s in ".*") {
            let mut out = String::new();
            write_string(&mut out, &s);
            let inner = out.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')).expect("quoted");
            // Inside, quotes only come in pairs.
            prop_assert!(inner.split("''").all(|part| !part.contains('\'')));
            prop_assert_eq!(inner.replace("''", "'"), s);
        }
    }
}
