//! The typing of values: a member's value as JSON gave it ([`Raw`]), typed by its annotation, the caller's
//! hint or its JSON form into an [`EdmValue`] (`docs/rules.md` §5.1), strictly: only the forms the service
//! writes; and the system members (keys, `Timestamp`, `odata.etag`) read from theirs.

use crate::edm::datetime::{eight_digits, DateTime};
use crate::edm::error::ValueErrorKind;
use crate::edm::{EdmBinary, EdmString, EdmType, EdmValue};
use crate::entity::ETag;
use crate::json::error::{DecodeError, DecodeErrorKind};
use crate::key::error::KeyError;
use base64::Engine as _;
use std::borrow::Cow;
use table_model_rules::KeyKind;
use uuid::Uuid;

/// A member value as JSON gave it, before typing. Strings borrow from the input unless they had escapes.
#[derive(Debug)]
pub(in crate::json) enum Raw<'de> {
    Null,
    Bool(bool),
    /// An integer literal that fits 64 bits (serde_json hands larger ones over as floats).
    Int(JsonInt),
    /// A number with `.` or an exponent.
    Float(f64),
    Str(Cow<'de, str>),
}

/// A JSON integer as serde_json reads it: negative ones as `i64`, the others as `u64`.
#[derive(Debug, Clone, Copy)]
pub(in crate::json) enum JsonInt {
    Negative(i64),
    Positive(u64),
}

impl JsonInt {
    fn to_i32(self) -> Option<i32> {
        match self {
            JsonInt::Negative(v) => i32::try_from(v).ok(),
            JsonInt::Positive(v) => i32::try_from(v).ok(),
        }
    }

    fn to_i64(self) -> Option<i64> {
        match self {
            JsonInt::Negative(v) => Some(v),
            JsonInt::Positive(v) => i64::try_from(v).ok(),
        }
    }

    /// Rounds to the nearest double, as parsing the same digits as a float would.
    fn to_f64(self) -> f64 {
        match self {
            JsonInt::Negative(v) => v as f64,
            JsonInt::Positive(v) => v as f64,
        }
    }
}

impl Raw<'_> {
    /// The value as an error message shows it: "JSON string `abc`".
    fn describe(&self) -> String {
        match self {
            Raw::Null => "JSON null".to_owned(),
            Raw::Bool(b) => format!("JSON {b}"),
            Raw::Int(JsonInt::Negative(i)) => format!("JSON number `{i}`"),
            Raw::Int(JsonInt::Positive(i)) => format!("JSON number `{i}`"),
            Raw::Float(f) => format!("JSON number `{f:?}`"),
            Raw::Str(s) => {
                const MAX_CHARS: usize = 40;
                match s.char_indices().nth(MAX_CHARS) {
                    Some((cut, _)) => format!("JSON string `{}…` ({} bytes)", &s[..cut], s.len()),
                    None => format!("JSON string `{s}`"),
                }
            }
        }
    }
}

/// A key value, validated; `None` for `null`.
pub(super) fn key<K>(raw: Raw<'_>, kind: KeyKind) -> Result<Option<K>, DecodeError>
where
    K: TryFrom<String, Error = KeyError>,
{
    match raw {
        Raw::Null => Ok(None),
        Raw::Str(s) => K::try_from(s.into_owned())
            .map(Some)
            .map_err(|e| DecodeError::new(DecodeErrorKind::InvalidKey(e)).in_property(kind.property_name())),
        other => Err(invalid(EdmType::String, &other).in_property(kind.property_name())),
    }
}

/// `Timestamp`, annotated or not, read as an `Edm.DateTime`; `None` for `null`.
pub(in crate::json) fn timestamp(raw: Raw<'_>) -> Result<Option<DateTime>, DecodeError> {
    let parsed = match &raw {
        Raw::Null => return Ok(None),
        Raw::Str(s) => parse_datetime(s),
        _ => Ok(None),
    };
    match parsed {
        Ok(Some(t)) => Ok(Some(t)),
        Ok(None) => Err(invalid(EdmType::DateTime, &raw).in_property("Timestamp")),
        Err(e) => Err(e.in_property("Timestamp")),
    }
}

/// Parses an `Edm.DateTime`; `Ok(None)` for text that is not ISO 8601 (the caller describes what it found),
/// an error for a valid date outside the service's range.
fn parse_datetime(s: &str) -> Result<Option<DateTime>, DecodeError> {
    match DateTime::parse(s) {
        Ok(t) => Ok(Some(t)),
        Err(e) if matches!(e.kind(), ValueErrorKind::DateTimeSyntax { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn etag(raw: Raw<'_>) -> Result<Option<ETag>, DecodeError> {
    match raw {
        Raw::Null => Ok(None),
        Raw::Str(s) => Ok(Some(ETag::new(s.into_owned()))),
        other => Err(invalid(EdmType::String, &other).in_property("odata.etag")),
    }
}

/// The EDM type an `@odata.type` value names.
#[inline]
pub(super) fn annotation_type(raw: Raw<'_>) -> Result<EdmType, DecodeError> {
    match raw {
        Raw::Str(s) => s.parse().map_err(|e| DecodeError::new(DecodeErrorKind::UnknownEdmType(e))),
        other => Err(DecodeError::new(DecodeErrorKind::InvalidAnnotation { found: other.describe() })),
    }
}

fn invalid(expected: EdmType, raw: &Raw<'_>) -> DecodeError {
    DecodeError::new(DecodeErrorKind::InvalidValue { expected, found: raw.describe() })
}

/// Types a non-null property value by its annotation, else the hint, else its JSON form (module docs).
#[inline(always)]
pub(in crate::json) fn typed_value(
    raw: Raw<'_>,
    annotation: Option<EdmType>,
    hint: Option<EdmType>,
) -> Result<EdmValue, DecodeError> {
    match (annotation, hint) {
        (Some(annotated), Some(expected)) if annotated != expected => {
            // An Int32 where the hints expect a wider number is widened, as at minimalmetadata, where Int32
            // carries no annotation and the hint types the bare integer.
            if annotated == EdmType::Int32
                && matches!(expected, EdmType::Int64 | EdmType::Double)
                && let EdmValue::Int32(v) = typed(EdmType::Int32, raw)?
            {
                return Ok(if expected == EdmType::Int64 {
                    EdmValue::Int64(i64::from(v))
                } else {
                    EdmValue::Double(f64::from(v))
                });
            }
            Err(DecodeError::new(DecodeErrorKind::HintMismatch { annotated, expected }))
        }
        (Some(t), _) | (None, Some(t)) => typed(t, raw),
        (None, None) => inferred(raw),
    }
}

/// The type the service infers for a value without an annotation (`docs/rules.md` §5.1).
fn inferred(raw: Raw<'_>) -> Result<EdmValue, DecodeError> {
    match raw {
        Raw::Bool(b) => Ok(EdmValue::Boolean(b)),
        Raw::Int(i) => i.to_i32().map(EdmValue::Int32).ok_or_else(|| {
            let value = match i {
                JsonInt::Negative(v) => v.to_string(),
                JsonInt::Positive(v) => v.to_string(),
            };
            DecodeError::new(DecodeErrorKind::IntegerOutOfRange { value })
        }),
        Raw::Float(f) => Ok(EdmValue::Double(f)),
        Raw::Str(s) => string(s),
        Raw::Null => Err(invalid(EdmType::String, &raw)),
    }
}

fn string(s: Cow<'_, str>) -> Result<EdmValue, DecodeError> {
    Ok(EdmValue::String(EdmString::new(s.into_owned())?))
}

/// Parses a value as the given type, strictly: only the JSON forms the service writes for it. Each form
/// returns its value as soon as it is recognised; anything else falls through to the one error.
#[inline(always)]
fn typed(t: EdmType, raw: Raw<'_>) -> Result<EdmValue, DecodeError> {
    let raw = match (t, raw) {
        (EdmType::String, Raw::Str(s)) => return string(s),
        (_, raw) => raw,
    };
    match (t, &raw) {
        (EdmType::Boolean, Raw::Bool(b)) => return Ok(EdmValue::Boolean(*b)),
        (EdmType::Int32, Raw::Int(i)) => {
            if let Some(v) = i.to_i32() {
                return Ok(EdmValue::Int32(v));
            }
        }
        (EdmType::Int64, Raw::Int(i)) => {
            if let Some(v) = i.to_i64() {
                return Ok(EdmValue::Int64(v));
            }
        }
        (EdmType::Int64, Raw::Str(s)) => {
            if let Some(v) = parse_i64(s) {
                return Ok(EdmValue::Int64(v));
            }
        }
        (EdmType::Double, Raw::Float(f)) => return Ok(EdmValue::Double(*f)),
        (EdmType::Double, Raw::Int(i)) => return Ok(EdmValue::Double(i.to_f64())),
        (EdmType::Double, Raw::Str(s)) => {
            if let Some(v) = special_double(s) {
                return Ok(EdmValue::Double(v));
            }
        }
        (EdmType::Guid, Raw::Str(s)) if s.len() == uuid::fmt::Hyphenated::LENGTH => {
            if let Ok(v) = Uuid::try_parse(s) {
                return Ok(EdmValue::Guid(v));
            }
        }
        (EdmType::DateTime, Raw::Str(s)) => {
            if let Some(v) = parse_datetime(s)? {
                return Ok(EdmValue::DateTime(v));
            }
        }
        (EdmType::Binary, Raw::Str(s)) => {
            if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(s.as_bytes()) {
                return Ok(EdmValue::Binary(EdmBinary::new(bytes)?));
            }
        }
        _ => {}
    }
    Err(invalid(t, &raw))
}

/// An Int64 as the service writes it: an optional `-` and decimal digits.
fn parse_i64(s: &str) -> Option<i64> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    // Up to 18 digits cannot overflow: no checked arithmetic, and eight digits at a time.
    if digits.len() <= 18 {
        let mut chunks = digits.as_bytes().chunks_exact(8);
        let mut value: i64 = 0;
        for chunk in &mut chunks {
            let chunk: [u8; 8] = chunk.try_into().ok()?;
            value = value * 100_000_000 + eight_digits(chunk)?;
        }
        for &b in chunks.remainder() {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                return None;
            }
            value = value * 10 + i64::from(digit);
        }
        return Some(if negative { -value } else { value });
    }
    // Accumulated as a negative number, so that `i64::MIN` fits; one pass, no UTF-8 or sign handling left
    // for `str::parse`.
    let mut value: i64 = 0;
    for b in digits.bytes() {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_sub(i64::from(digit))?;
    }
    if negative {
        Some(value)
    } else {
        value.checked_neg()
    }
}

/// The string forms of the special doubles: `NaN`, `Infinity`, `-Infinity`, and OData's `INF`, `-INF`.
fn special_double(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "Infinity" | "INF" => Some(f64::INFINITY),
        "-Infinity" | "-INF" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::parse_i64;

    /// The definition: an optional `-`, then only ASCII digits, then `str::parse`.
    fn reference(s: &str) -> Option<i64> {
        let digits = s.strip_prefix('-').unwrap_or(s);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    }

    #[test]
    fn parse_i64_matches_the_definition() {
        let mut cases: Vec<String> = [
            "",
            "-",
            "+1",
            "--1",
            "0",
            "-0",
            "00",
            "007",
            "1",
            "-1",
            "12a",
            "a12",
            " 1",
            "1 ",
            "1.0",
            "1e3",
            "٣",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "00000000000000000000009223372036854775807",
            "99999999999999999999",
            "-99999999999999999999",
            "9007199254740993",
            "999999999999999999",
            "-999999999999999999",
            "1000000000000000000",
            "-1000000000000000000",
            "99999999999999999x",
            "000000000000000000",
            "-000000000000000000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for v in [i64::MIN, i64::MIN + 1, -1_000_000_007, -10, 10, 1 << 53, i64::MAX - 1, i64::MAX] {
            cases.push(v.to_string());
            cases.push(format!("{v}0"));
            cases.push(format!("{v}/"));
            cases.push(format!("{v}:"));
        }
        // Every byte that is not a digit, at every position of a number read eight digits at a time.
        for bad in (0..=u8::MAX).filter(|b| !b.is_ascii_digit()) {
            for at in 0..18 {
                let mut bytes = b"123456789012345678".to_vec();
                bytes[at] = bad;
                if let Ok(s) = String::from_utf8(bytes) {
                    cases.push(s);
                }
            }
        }
        for at in 0..=16 {
            for ch in ["é", "٣", "\u{10ffff}"] {
                cases.push(format!("{}{ch}{}", &"1234567890123456"[..at], &"1234567890123456"[at..]));
            }
        }
        for s in &cases {
            assert_eq!(parse_i64(s), reference(s), "{s:?}");
        }
    }
}
