//! The cells of typed CSV: a field quoted as RFC 4180 says, a value as the text of its cell and back, and the
//! type a type cell names.

use base64::Engine as _;
use table_model::{DateTime, EdmBinary, EdmString, EdmType, EdmValue};

/// Appends a field to a record, quoted when it holds a comma, a quote, CR or LF (its quotes doubled).
///
/// ```
/// let mut record = Vec::new();
/// table_model_transfer::format::csv::push_field(&mut record, "a,\"b\"\r\n");
/// assert_eq!(record, b"\"a,\"\"b\"\"\r\n\"");
/// ```
pub fn push_field(record: &mut Vec<u8>, field: &str) {
    let field = field.as_bytes();
    // Found with SIMD: most fields need no quotes, and a long one is scanned 16 or 32 bytes at a time.
    if memchr::memchr3(b',', b'"', b'\n', field).is_none() && memchr::memchr(b'\r', field).is_none() {
        record.extend_from_slice(field);
        return;
    }
    record.push(b'"');
    let mut rest = field;
    while let Some(quote) = memchr::memchr(b'"', rest) {
        record.extend_from_slice(&rest[..=quote]);
        record.push(b'"');
        rest = &rest[quote + 1..];
    }
    record.extend_from_slice(rest);
    record.push(b'"');
}

/// Appends the field of a value to a record: its [`cell`], quoted as [`push_field`] quotes it. Only a String's
/// cell can hold what needs quotes (a Binary's base64 and the other types' texts never do): it is not copied
/// first, and the others are not scanned. `text` is a buffer for the cell.
///
/// ```
/// use table_model::{EdmString, EdmValue};
/// use table_model_transfer::format::csv::push_value;
/// let mut record = Vec::new();
/// push_value(&mut record, &EdmValue::String(EdmString::new("a, \"b\"")?), &mut String::new());
/// record.push(b',');
/// push_value(&mut record, &EdmValue::Double(-0.0), &mut String::new());
/// assert_eq!(record, b"\"a, \"\"b\"\"\",-0.0");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn push_value(record: &mut Vec<u8>, value: &EdmValue, text: &mut String) {
    match value {
        EdmValue::String(s) => push_field(record, s.as_str()),
        _ => {
            text.clear();
            cell(value, text);
            record.extend_from_slice(text.as_bytes());
        }
    }
}

/// The text of a value in its cell: Binary in base64, Boolean `true`/`false`, DateTime with 7 fraction digits,
/// Double as the shortest text that reads back to the same bits (`NaN`, `Infinity`, `-Infinity`, `-0.0`), Guid
/// hyphenated, integers in decimal, String as it is.
///
/// ```
/// use table_model::EdmValue;
/// use table_model_transfer::format::csv::{cell, read_cell};
/// let mut text = String::new();
/// for value in [EdmValue::Double(-0.0), EdmValue::Double(0.1), EdmValue::Double(f64::NEG_INFINITY), EdmValue::Int64(i64::MIN)] {
///     text.clear();
///     cell(&value, &mut text);
///     assert_eq!(read_cell(value.edm_type(), &text).unwrap(), value);
/// }
/// assert_eq!(text, "-9223372036854775808");
/// ```
pub fn cell(value: &EdmValue, out: &mut String) {
    use std::fmt::Write as _;
    match value {
        EdmValue::Binary(b) => base64::engine::general_purpose::STANDARD.encode_string(b.as_bytes(), out),
        EdmValue::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        EdmValue::DateTime(d) => d.write_to(out),
        EdmValue::Double(d) if d.is_nan() => out.push_str("NaN"),
        EdmValue::Double(d) if d.is_infinite() => out.push_str(if *d > 0.0 { "Infinity" } else { "-Infinity" }),
        // Debug is the shortest text that parses back to the same bits (with `.0` on integral values, so that no
        // reader takes them for integers, and an exponent for very large or small ones).
        EdmValue::Double(d) => write!(out, "{d:?}").expect("writing to a String cannot fail"),
        // Lowercase, as the Guid's `Display` writes it.
        EdmValue::Guid(g) => out.push_str(g.hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer())),
        EdmValue::Int32(i) => out.push_str(itoa::Buffer::new().format(*i)),
        EdmValue::Int64(i) => out.push_str(itoa::Buffer::new().format(*i)),
        EdmValue::String(s) => out.push_str(s.as_str()),
    }
}

/// The type a type cell names: `Edm.Int64` or `Int64`, in any case (Storage Explorer wrote both spellings).
///
/// ```
/// use table_model::EdmType;
/// use table_model_transfer::format::csv::type_of_cell;
/// assert_eq!(type_of_cell("Edm.Int64"), Some(EdmType::Int64));
/// assert_eq!(type_of_cell("int64"), Some(EdmType::Int64));
/// assert_eq!(type_of_cell("Edm.GeographyPoint"), None);
/// ```
pub fn type_of_cell(text: &str) -> Option<EdmType> {
    let short = match text.get(..4) {
        Some(prefix) if prefix.eq_ignore_ascii_case("Edm.") => &text[4..],
        _ => text,
    };
    EdmType::ALL.into_iter().find(|t| t.short_name().eq_ignore_ascii_case(short))
}

/// Reads a non-empty cell as a value of type `t`, exactly: every text [`cell`] writes reads back to the same
/// value; Doubles also in any text Rust reads as one (`1e+300`, `INF`), Booleans in any case.
///
/// # Errors
/// What the text is not, in words.
pub fn read_cell(t: EdmType, text: &str) -> Result<EdmValue, String> {
    let invalid = || format!("`{}` is not an {}", shorten(text), t.as_str());
    Ok(match t {
        EdmType::Binary => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| format!("`{}` is not base64 (an Edm.Binary): {e}", shorten(text)))?;
            EdmValue::Binary(EdmBinary::new(bytes).map_err(|e| e.to_string())?)
        }
        EdmType::Boolean if text.eq_ignore_ascii_case("true") => EdmValue::Boolean(true),
        EdmType::Boolean if text.eq_ignore_ascii_case("false") => EdmValue::Boolean(false),
        EdmType::Boolean => return Err(invalid()),
        EdmType::DateTime => EdmValue::DateTime(DateTime::parse(text).map_err(|e| e.to_string())?),
        EdmType::Double => EdmValue::Double(match text {
            "NaN" => f64::NAN,
            "Infinity" | "INF" => f64::INFINITY,
            "-Infinity" | "-INF" => f64::NEG_INFINITY,
            _ => text.parse().map_err(|_| invalid())?,
        }),
        EdmType::Guid => EdmValue::Guid(uuid::Uuid::try_parse(text).map_err(|_| invalid())?),
        EdmType::Int32 => EdmValue::Int32(text.parse().map_err(|_| invalid())?),
        EdmType::Int64 => EdmValue::Int64(text.parse().map_err(|_| invalid())?),
        EdmType::String => EdmValue::String(EdmString::new(text).map_err(|e| e.to_string())?),
    })
}

/// At most 40 characters of a text, for a message.
pub(super) fn shorten(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}
