//! Encoding: [`BodyWriter`] writes an entity request body straight into one buffer; [`encode_entity`] drives
//! it from an [`Entity`].

use super::error::{EncodeError, EncodeErrorKind};
use super::{NameFilter, NameHashes};
use crate::edm::datetime::DateTime;
use crate::edm::{binary_stored_size, check_binary_len, check_string_len, string_stored_size, EdmValue, IntoEdm};
use crate::entity::Entity;
use crate::key::error::KeyError;
use crate::key::{PartitionKey, RowKey};
use crate::limits;
use crate::limits::{ENTITY_MAX_BYTES, MAX_CUSTOM_PROPERTIES};
use crate::name::error::PropertyNameError;
use crate::name::PropertyName;
use base64::Engine as _;
use std::fmt;
use std::ops::Range;
use table_model_rules::{key, property_name, EdmType, KeyKind};
use uuid::Uuid;

/// Writes the JSON request body of an insert or update (`docs/rules.md` §5), property by property, straight
/// into one buffer: the streaming core of [`encode_entity`], for encoding a struct without building an
/// [`Entity`] (what `#[derive(TableEntity)]` generates).
///
/// The keys come first, then each property in the order written, with the `"<Name>@odata.type"` annotation
/// before the value exactly for Binary, DateTime, Guid, Int64 and Double. Every rule is checked as it is
/// written: the keys, each property name (a `&str` name is checked, a [`PropertyName`] is valid already: see
/// [`AsPropertyName`]), each value's limit, no property twice, at most 252 properties, and 1 MiB both by the
/// size formula and as encoded JSON. The first broken rule is kept and returned by
/// [`finish`](BodyWriter::finish); later writes are then skipped. The methods return `&mut Self` so calls chain.
///
/// Nothing is allocated but the body: names are tracked inline (up to 24, then in one `Vec`), and values
/// are formatted straight into the buffer (`serde_json` escapes strings and formats numbers).
///
/// ```
/// use table_model::json::BodyWriter;
/// use table_model::DateTime;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut w = BodyWriter::new("tenant-7", "0001");
/// w.property_str("Name", "Ada").property_f64("Score", 5.0).property_i64("Visits", 12);
/// w.property_datetime("Since", DateTime::UNIX_EPOCH);
/// let body = w.finish()?;
/// assert_eq!(
///     body.as_str(),
///     concat!(
///         r#"{"PartitionKey":"tenant-7","RowKey":"0001","Name":"Ada","#,
///         r#""Score@odata.type":"Edm.Double","Score":5.0,"#,
///         r#""Visits@odata.type":"Edm.Int64","Visits":"12","#,
///         r#""Since@odata.type":"Edm.DateTime","Since":"1970-01-01T00:00:00.0000000Z"}"#,
///     )
/// );
/// assert_eq!(body.len(), body.as_str().len());
/// # Ok(())
/// # }
/// ```
pub struct BodyWriter {
    buf: Vec<u8>,
    /// The entity's size by the formula of `docs/rules.md` §4.2.
    size: usize,
    /// The number of custom properties written.
    count: usize,
    /// The names written, to tell a new name from a possible repeat without any comparison.
    seen: NameFilter,
    /// Where the first names sit in `buf` (offset, length), kept inline: most entities have few properties.
    names: [(u32, u32); INLINE_NAMES],
    /// Where the others sit, for entities with more properties.
    more_names: Vec<(u32, u32)>,
    /// All the names once there are more than [`INLINE_NAMES`], hashed, for the same purpose as `seen`.
    hashes: Option<Box<NameHashes>>,
    /// The names are distinct by construction (see [`BodyWriter::names_are_distinct`]): no repeat to look for.
    distinct: bool,
    error: Option<EncodeError>,
}

/// How many property names [`BodyWriter`] tracks without allocating.
const INLINE_NAMES: usize = 24;

impl BodyWriter {
    /// Starts a body with its keys, which every insert and update carries, in a buffer of 1000 bytes (the
    /// largest that glibc serves from its per-thread cache; it holds a dozen typical properties).
    ///
    /// A key that breaks the key rules is reported by [`finish`](BodyWriter::finish).
    pub fn new(partition_key: &str, row_key: &str) -> Self {
        BodyWriter::with_capacity(1000, partition_key, row_key)
    }

    /// As [`new`](BodyWriter::new), with room for a body of `capacity` bytes before the buffer grows.
    pub fn with_capacity(capacity: usize, partition_key: &str, row_key: &str) -> Self {
        BodyWriter::checked(Vec::with_capacity(capacity), partition_key, row_key)
    }

    /// A body in `buf` (empty), its keys checked.
    fn checked(buf: Vec<u8>, partition_key: &str, row_key: &str) -> Self {
        let mut w = BodyWriter::start(buf, partition_key, row_key);
        let checked = key::check(KeyKind::Partition, partition_key)
            .map_err(|e| KeyError::new(e, partition_key))
            .and_then(|()| key::check(KeyKind::Row, row_key).map_err(|e| KeyError::new(e, row_key)));
        if let Err(e) = checked {
            w.error = Some(EncodeError::new(EncodeErrorKind::InvalidKey(e), None));
        }
        w
    }

    /// As [`new`](BodyWriter::new), writing into `buf` (cleared first): a writer of many bodies reuses one
    /// buffer ([`EntityBody::into_bytes`] gives it back) instead of allocating one for each.
    ///
    /// ```
    /// use table_model::json::BodyWriter;
    /// let mut buf = Vec::with_capacity(256);
    /// for row in ["1", "2"] {
    ///     let mut w = BodyWriter::with_buffer(buf, "p", row);
    ///     w.property_i64("N", 7);
    ///     let body = w.finish()?;
    ///     assert!(body.as_str().starts_with(&format!(r#"{{"PartitionKey":"p","RowKey":"{row}""#)));
    ///     buf = body.into_bytes();
    /// }
    /// assert!(buf.capacity() >= 256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_buffer(mut buf: Vec<u8>, partition_key: &str, row_key: &str) -> Self {
        buf.clear();
        BodyWriter::checked(buf, partition_key, row_key)
    }

    /// Writes an `Edm.String` property given as the JSON string `json` (with its quotes) that
    /// [`property_str`](BodyWriter::property_str) writes for a value of `utf16_len` UTF-16 code units: the caller
    /// has checked that `json` is that text, escaped exactly as `serde_json` escapes (see `json::encoded`).
    pub(crate) fn property_str_json(&mut self, name: &str, json: &[u8], utf16_len: usize) -> &mut Self {
        if self.error.is_none() {
            if utf16_len > crate::limits::STRING_MAX_UTF16 {
                let e =
                    crate::edm::error::ValueError::new(crate::edm::error::ValueErrorKind::StringTooLong { utf16_len });
                self.fail(EncodeError::from(e.in_property(name)));
            } else if self.begin(&name, string_stored_size(utf16_len), EdmType::String) {
                self.buf.extend_from_slice(json);
            }
        }
        self
    }

    /// A body for keys that are valid by their types.
    fn with_keys(capacity: usize, partition_key: &PartitionKey, row_key: &RowKey) -> Self {
        BodyWriter::start(Vec::with_capacity(capacity), partition_key, row_key)
    }

    fn start(buf: Vec<u8>, partition_key: &str, row_key: &str) -> Self {
        let mut w = BodyWriter {
            buf,
            size: limits::entity_keys_size(partition_key, row_key),
            count: 0,
            seen: NameFilter::default(),
            names: [(0, 0); INLINE_NAMES],
            more_names: Vec::new(),
            hashes: None,
            distinct: false,
            error: None,
        };
        w.buf.extend_from_slice(b"{\"PartitionKey\":");
        write_json_str(&mut w.buf, partition_key);
        w.buf.extend_from_slice(b",\"RowKey\":");
        write_json_str(&mut w.buf, row_key);
        w
    }

    /// Writes an `Edm.String` property.
    pub fn property_str(&mut self, name: impl AsPropertyName, value: &str) -> &mut Self {
        if self.error.is_none() {
            match check_string_len(value) {
                Ok(utf16_len) => self.write_str(&name, value, utf16_len),
                Err(e) => self.fail(EncodeError::from(e.in_property(name.as_name()))),
            }
        }
        self
    }

    /// Writes an `Edm.Int32` property: a JSON number.
    pub fn property_i32(&mut self, name: impl AsPropertyName, value: i32) -> &mut Self {
        if self.begin(&name, EdmValue::Int32(value).stored_size(), EdmType::Int32) {
            write_i32(&mut self.buf, value);
        }
        self
    }

    /// Writes an `Edm.Int64` property: annotated, as a JSON string of digits.
    pub fn property_i64(&mut self, name: impl AsPropertyName, value: i64) -> &mut Self {
        if self.begin(&name, EdmValue::Int64(value).stored_size(), EdmType::Int64) {
            write_i64(&mut self.buf, value);
        }
        self
    }

    /// Writes an `Edm.Double` property: always annotated, always with a decimal point or an exponent
    /// (`5.0`, `1e+300`), the shortest form that reads back to the same bits. NaN and the infinities are the
    /// strings `"NaN"`, `"Infinity"` and `"-Infinity"`; `-0.0` stays `-0.0`.
    pub fn property_f64(&mut self, name: impl AsPropertyName, value: f64) -> &mut Self {
        if self.begin(&name, EdmValue::Double(value).stored_size(), EdmType::Double) {
            write_f64(&mut self.buf, value);
        }
        self
    }

    /// Writes an `Edm.Boolean` property: `true` or `false`.
    pub fn property_bool(&mut self, name: impl AsPropertyName, value: bool) -> &mut Self {
        if self.begin(&name, EdmValue::Boolean(value).stored_size(), EdmType::Boolean) {
            write_bool(&mut self.buf, value);
        }
        self
    }

    /// Writes an `Edm.Guid` property: annotated, lowercase and hyphenated.
    pub fn property_uuid(&mut self, name: impl AsPropertyName, value: Uuid) -> &mut Self {
        if self.begin(&name, EdmValue::Guid(value).stored_size(), EdmType::Guid) {
            write_uuid(&mut self.buf, value);
        }
        self
    }

    /// Writes an `Edm.DateTime` property: annotated, with 7 fractional digits and `Z`.
    pub fn property_datetime(&mut self, name: impl AsPropertyName, value: DateTime) -> &mut Self {
        if self.begin(&name, EdmValue::DateTime(value).stored_size(), EdmType::DateTime) {
            write_datetime(&mut self.buf, value);
        }
        self
    }

    /// Writes an `Edm.Binary` property: annotated, as standard padded base64.
    pub fn property_bytes(&mut self, name: impl AsPropertyName, value: &[u8]) -> &mut Self {
        if self.error.is_none() {
            match check_binary_len(value.len()) {
                Ok(()) => self.write_bytes(&name, value),
                Err(e) => self.fail(EncodeError::from(e.in_property(name.as_name()))),
            }
        }
        self
    }

    /// Writes a property of whatever EDM type the value has.
    pub fn property(&mut self, name: impl AsPropertyName, value: &EdmValue) -> &mut Self {
        match value {
            // The limits of `EdmString` and `EdmBinary` hold by construction.
            EdmValue::String(s) => {
                if self.error.is_none() {
                    self.write_str(&name, s, s.utf16_len());
                }
                self
            }
            EdmValue::Binary(b) => {
                if self.error.is_none() {
                    self.write_bytes(&name, b);
                }
                self
            }
            EdmValue::Boolean(v) => self.property_bool(name, *v),
            EdmValue::DateTime(v) => self.property_datetime(name, *v),
            EdmValue::Double(v) => self.property_f64(name, *v),
            EdmValue::Guid(v) => self.property_uuid(name, *v),
            EdmValue::Int32(v) => self.property_i32(name, *v),
            EdmValue::Int64(v) => self.property_i64(name, *v),
        }
    }

    /// Converts a Rust value with [`IntoEdm`] and writes it; a conversion that fails is the error
    /// [`finish`](BodyWriter::finish) returns, naming the property.
    pub fn property_value(&mut self, name: impl AsPropertyName, value: impl IntoEdm) -> &mut Self {
        if self.error.is_none() {
            match value.into_edm() {
                Ok(v) => return self.property(name, &v),
                Err(e) => self.fail(EncodeError::from(e.in_property(name.as_name()))),
            }
        }
        self
    }

    /// The entity's size so far by the formula of `docs/rules.md` §4.2, in bytes.
    pub fn entity_size(&self) -> usize {
        self.size
    }

    /// Closes the body.
    ///
    /// # Errors
    /// The first rule a write broke ([`EncodeErrorKind`] says which), or
    /// [`EncodeErrorKind::BodyTooLarge`] for a body over 1 MiB.
    pub fn finish(mut self) -> Result<EntityBody, EncodeError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.buf.push(b'}');
        if self.buf.len() > ENTITY_MAX_BYTES {
            return Err(EncodeError::new(EncodeErrorKind::BodyTooLarge { size: self.buf.len() }, None));
        }
        Ok(EntityBody { bytes: self.buf, entity_size: self.size })
    }

    fn fail(&mut self, error: EncodeError) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    fn write_str(&mut self, name: &impl AsPropertyName, value: &str, utf16_len: usize) {
        if self.begin(name, string_stored_size(utf16_len), EdmType::String) {
            write_json_str(&mut self.buf, value);
        }
    }

    fn write_bytes(&mut self, name: &impl AsPropertyName, value: &[u8]) {
        if self.begin(name, binary_stored_size(value.len()), EdmType::Binary) {
            write_base64(&mut self.buf, value);
        }
    }

    /// Checks a property against every rule but its value's own limit and writes `,"Name":`, with the type
    /// annotation before it when the type needs one. Returns whether the value should be written.
    fn begin(&mut self, name: &impl AsPropertyName, value_size: usize, edm_type: EdmType) -> bool {
        if self.error.is_some() {
            return false;
        }
        let checked = name.is_checked();
        let name = name.as_name();
        if !checked && let Err(e) = property_name::check(name) {
            let e = PropertyNameError::new(e, name);
            self.fail(EncodeError::new(EncodeErrorKind::InvalidPropertyName(e), Some(name)));
            return false;
        }
        let count = self.count + 1;
        if count > MAX_CUSTOM_PROPERTIES {
            self.fail(EncodeError::new(EncodeErrorKind::TooManyProperties { count }, Some(name)));
            return false;
        }
        if !self.distinct && self.is_repeat(name) {
            self.fail(EncodeError::new(EncodeErrorKind::DuplicateProperty, Some(name)));
            return false;
        }
        let size = self.size + limits::property_size(name, value_size);
        if size > ENTITY_MAX_BYTES {
            self.fail(EncodeError::new(EncodeErrorKind::EntityTooLarge { size }, Some(name)));
            return false;
        }
        self.size = size;
        self.count = count;
        self.buf.push(b',');
        // The size formula bounds the body to a few MiB, so offsets fit in `u32`.
        let at = (write_name(&mut self.buf, name, edm_type) as u32, name.len() as u32);
        match self.names.get_mut(count - 1) {
            Some(slot) => *slot = at,
            None => self.more_names.push(at),
        }
        true
    }

    /// The writer of a struct whose property names are distinct by construction: `#[derive(TableEntity)]` checks
    /// them when the struct is compiled, so the writer does not look for repeats at all.
    pub(crate) fn names_are_distinct(mut self) -> Self {
        self.distinct = true;
        self
    }

    /// Whether a property of this name was written already. Most names are new, and the filter (for the first
    /// [`INLINE_NAMES`]) or the keyed hashes (beyond) say so without a comparison, so that the check costs the
    /// same per name at 252 properties as at 12.
    #[inline]
    fn is_repeat(&mut self, name: &str) -> bool {
        if self.count >= INLINE_NAMES {
            return self.is_repeat_in_large_entity(name);
        }
        self.seen.insert(name) && self.names[..self.count].iter().any(|&(at, len)| self.is_name_at(at, len, name))
    }

    /// [`is_repeat`](BodyWriter::is_repeat) past [`INLINE_NAMES`] names: the keyed hashes of every name answer
    /// first. Out of line, so that small entities do not carry the hashing.
    #[inline(never)]
    fn is_repeat_in_large_entity(&mut self, name: &str) -> bool {
        let hashes = self.hashes.get_or_insert_with(|| {
            let mut hashes = Box::<NameHashes>::default();
            // Room for every name the writer may take (it refuses more): the table never grows.
            hashes.reserve(MAX_CUSTOM_PROPERTIES);
            for &(at, len) in &self.names {
                let (at, len) = (at as usize, len as usize);
                hashes.insert(&self.buf[at..at + len]);
            }
            hashes
        });
        hashes.insert(name.as_bytes())
            && self.names.iter().chain(&self.more_names).any(|&(at, len)| self.is_name_at(at, len, name))
    }

    /// Whether the name written at `at` (`len` bytes) is `name`.
    fn is_name_at(&self, at: u32, len: u32, name: &str) -> bool {
        let (at, len) = (at as usize, len as usize);
        self.buf.get(at..at + len) == Some(name.as_bytes())
    }
}

impl fmt::Debug for BodyWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyWriter")
            .field("body", &String::from_utf8_lossy(&self.buf))
            .field("entity_size", &self.size)
            .field("error", &self.error)
            .finish()
    }
}

/// A property name as [`BodyWriter`] takes it: a `&str` or `&String`, checked as it is written, or a
/// [`&PropertyName`](PropertyName), valid by construction and not checked again (a `const` one costs nothing).
///
/// ```
/// use table_model::json::BodyWriter;
/// use table_model::PropertyName;
/// const PRICE: PropertyName = PropertyName::from_static("Price");
/// let mut w = BodyWriter::new("p", "r");
/// w.property_f64(&PRICE, 9.5).property_i32("Quantity", 2).property_bool(&String::from("Paid"), true);
/// assert!(w.finish().is_ok());
/// ```
pub trait AsPropertyName: sealed::Sealed {
    /// The name.
    fn as_name(&self) -> &str;
    /// Whether the name is known to be valid.
    fn is_checked(&self) -> bool;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for &str {}
    impl Sealed for &String {}
    impl Sealed for &crate::name::PropertyName {}
}

impl AsPropertyName for &str {
    fn as_name(&self) -> &str {
        self
    }
    fn is_checked(&self) -> bool {
        false
    }
}

impl AsPropertyName for &String {
    fn as_name(&self) -> &str {
        self
    }
    fn is_checked(&self) -> bool {
        false
    }
}

impl AsPropertyName for &PropertyName {
    fn as_name(&self) -> &str {
        self.as_str()
    }
    fn is_checked(&self) -> bool {
        true
    }
}

/// Writes one property as [`BodyWriter`] writes it into a body (`"Name":value`, after the `"Name@odata.type"`
/// annotation where the type needs one) at the end of `out`, without braces, keys or a comma before it: for JSON
/// that holds some properties of an entity checked as a whole before, such as the overflow column of
/// `table-model-arrow`. The name is checked as [`BodyWriter`] checks it (a [`PropertyName`] is valid already);
/// the value's limits hold by its type. Nothing else is checked: repeats, counts and sizes are the caller's.
///
/// ```
/// use table_model::json::write_property;
/// use table_model::{DateTime, EdmValue};
/// let mut out = Vec::new();
/// write_property(&mut out, "Visits", &EdmValue::Int64(12))?;
/// out.push(b',');
/// write_property(&mut out, "Since", &EdmValue::DateTime(DateTime::UNIX_EPOCH))?;
/// assert_eq!(
///     String::from_utf8(out)?,
///     concat!(
///         r#""Visits@odata.type":"Edm.Int64","Visits":"12","#,
///         r#""Since@odata.type":"Edm.DateTime","Since":"1970-01-01T00:00:00.0000000Z""#,
///     )
/// );
/// assert!(write_property(&mut Vec::new(), "Not a name", &EdmValue::Int32(1)).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`EncodeErrorKind::InvalidPropertyName`] for a `&str` name that breaks the rules; `out` is then unchanged.
pub fn write_property(out: &mut Vec<u8>, name: impl AsPropertyName, value: &EdmValue) -> Result<(), EncodeError> {
    let checked = name.is_checked();
    let name = name.as_name();
    if !checked && let Err(e) = property_name::check(name) {
        let e = PropertyNameError::new(e, name);
        return Err(EncodeError::new(EncodeErrorKind::InvalidPropertyName(e), Some(name)));
    }
    write_name(out, name, value.edm_type());
    match value {
        EdmValue::String(s) => write_json_str(out, s),
        EdmValue::Binary(b) => write_base64(out, b),
        EdmValue::Boolean(v) => write_bool(out, *v),
        EdmValue::DateTime(v) => write_datetime(out, *v),
        EdmValue::Double(v) => write_f64(out, *v),
        EdmValue::Guid(v) => write_uuid(out, *v),
        EdmValue::Int32(v) => write_i32(out, *v),
        EdmValue::Int64(v) => write_i64(out, *v),
    }
    Ok(())
}

/// Writes a property's name for a value of `edm_type`: `"Name@odata.type":"Edm.Int64",` where the type needs
/// the annotation, then `"Name":`. Returns where the name's bytes start in the second part, to find it again.
fn write_name(buf: &mut Vec<u8>, name: &str, edm_type: EdmType) -> usize {
    // A valid property name never needs JSON escaping: C# identifier characters include no `"`, `\` or
    // control character. It is therefore written as is, and found again as is.
    if edm_type.needs_annotation() {
        buf.push(b'"');
        buf.extend_from_slice(name.as_bytes());
        buf.extend_from_slice(b"@odata.type\":\"");
        buf.extend_from_slice(edm_type.as_str().as_bytes());
        buf.extend_from_slice(b"\",");
    }
    buf.push(b'"');
    let at = buf.len();
    buf.extend_from_slice(name.as_bytes());
    buf.extend_from_slice(b"\":");
    at
}

/// An `Edm.Int32` value: a JSON number.
fn write_i32(buf: &mut Vec<u8>, value: i32) {
    serialize(buf, |s| serde::Serializer::serialize_i32(s, value));
}

/// An `Edm.Int64` value: a JSON string of digits.
fn write_i64(buf: &mut Vec<u8>, value: i64) {
    buf.push(b'"');
    serialize(buf, |s| serde::Serializer::serialize_i64(s, value));
    buf.push(b'"');
}

/// An `Edm.Double` value ([`BodyWriter::property_f64`]).
fn write_f64(buf: &mut Vec<u8>, value: f64) {
    if value.is_finite() {
        serialize(buf, |s| serde::Serializer::serialize_f64(s, value));
    } else if value.is_nan() {
        buf.extend_from_slice(b"\"NaN\"");
    } else if value > 0.0 {
        buf.extend_from_slice(b"\"Infinity\"");
    } else {
        buf.extend_from_slice(b"\"-Infinity\"");
    }
}

/// An `Edm.Boolean` value: `true` or `false`.
fn write_bool(buf: &mut Vec<u8>, value: bool) {
    buf.extend_from_slice(if value { b"true" } else { b"false" });
}

/// An `Edm.Guid` value: lowercase and hyphenated, quoted.
fn write_uuid(buf: &mut Vec<u8>, value: Uuid) {
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    buf.push(b'"');
    buf.extend_from_slice(value.hyphenated().encode_lower(&mut text).as_bytes());
    buf.push(b'"');
}

/// An `Edm.DateTime` value: 7 fractional digits and `Z`, quoted.
fn write_datetime(buf: &mut Vec<u8>, value: DateTime) {
    let mut text = [0u8; 28];
    value.encode(&mut text);
    buf.push(b'"');
    buf.extend_from_slice(&text);
    buf.push(b'"');
}

/// An `Edm.Binary` value: standard padded base64, quoted.
fn write_base64(buf: &mut Vec<u8>, value: &[u8]) {
    let engine = &base64::engine::general_purpose::STANDARD;
    buf.push(b'"');
    let start = buf.len();
    // At most 64 KiB of input: the encoded length cannot overflow.
    let encoded = base64::encoded_len(value.len(), true).unwrap_or(0);
    buf.resize(start + encoded, 0);
    let written = engine.encode_slice(value, &mut buf[start..]).unwrap_or(0);
    debug_assert_eq!(written, encoded);
    buf.push(b'"');
}

/// Runs one `serde_json` serializer call that writes into `buf`.
fn serialize(
    buf: &mut Vec<u8>,
    write: impl FnOnce(&mut serde_json::Serializer<&mut Vec<u8>>) -> Result<(), serde_json::Error>,
) {
    let mut serializer = serde_json::Serializer::new(buf);
    // serde_json fails only when its writer does, and a `Vec<u8>` accepts every write.
    let written = write(&mut serializer);
    debug_assert!(written.is_ok());
}

/// Writes a JSON string, escaped by `serde_json`.
fn write_json_str(buf: &mut Vec<u8>, value: &str) {
    serialize(buf, |s| serde::Serializer::serialize_str(s, value));
}

/// An encoded entity request body: UTF-8 JSON of at most 1 MiB, with its size by the entity size formula.
///
/// ```
/// use table_model::json::encode_entity;
/// use table_model::{Entity, PartitionKey, RowKey};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let body = encode_entity(&Entity::new(PartitionKey::new("p")?, RowKey::new("r")?))?;
/// assert_eq!(body.as_str(), r#"{"PartitionKey":"p","RowKey":"r"}"#);
/// assert_eq!(body.len(), 33);
/// assert_eq!(body.entity_size(), 4 + 2 + 2);
/// let bytes: Vec<u8> = body.into_bytes();
/// # Ok(())
/// # }
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct EntityBody {
    bytes: Vec<u8>,
    entity_size: usize,
}

impl EntityBody {
    /// A body the encoder wrote, kept elsewhere ([`EncodedPage`](super::EncodedPage)), with its entity's size:
    /// for the request layer's `EncodedEntity`.
    #[cfg(feature = "http")]
    pub(crate) fn from_encoded(bytes: Vec<u8>, entity_size: usize) -> Self {
        EntityBody { bytes, entity_size }
    }

    /// The size of the body in bytes, the figure checked against 1 MiB and sent as `Content-Length`.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Always `false`: a body holds at least the keys.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The entity's size by the formula of `docs/rules.md` §4.2, in bytes.
    pub fn entity_size(&self) -> usize {
        self.entity_size
    }

    /// The JSON bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The JSON text. Checks the UTF-8 (always valid), so it costs a pass over the body.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes).expect("the writer writes UTF-8 only")
    }

    /// The JSON bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The same JSON in ASCII: every other character written as a `\u` escape (`é` as `\u00e9`, `😀` as the
    /// UTF-16 surrogate pair `\ud83d\ude00`, lowercase hex as for the control characters), which decodes to
    /// exactly the same entity. What the request builders send to Azurite, which garbles a character split
    /// between two network chunks of a body ([`ServiceKind::ascii_json`](crate::ServiceKind::ascii_json),
    /// `docs/rules.md` §5.6). A body in ASCII already is returned as is, without copying.
    ///
    /// ```
    /// use table_model::json::{decode_entity, BodyWriter};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut w = BodyWriter::new("p", "r");
    /// w.property_str("Name", "Zoë 😀");
    /// let body = w.finish()?;
    /// let ascii = body.clone().into_ascii()?;
    /// assert_eq!(ascii.as_str(), r#"{"PartitionKey":"p","RowKey":"r","Name":"Zo\u00eb \ud83d\ude00"}"#);
    /// assert_eq!(decode_entity(ascii.as_bytes(), None)?, decode_entity(body.as_bytes(), None)?);
    /// assert_eq!(ascii.entity_size(), body.entity_size());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`EncodeErrorKind::BodyTooLarge`] when the escaped JSON is over 1 MiB: an escape takes 6 bytes (12 for a
    /// surrogate pair) where UTF-8 takes 2 to 4, and Azurite holds the body as sent to the limit.
    pub fn into_ascii(self) -> Result<EntityBody, EncodeError> {
        if self.bytes.is_ascii() {
            return Ok(self);
        }
        let bytes = ascii_json(&self.bytes);
        if bytes.len() > ENTITY_MAX_BYTES {
            return Err(EncodeError::new(EncodeErrorKind::BodyTooLarge { size: bytes.len() }, None));
        }
        Ok(EntityBody { bytes, entity_size: self.entity_size })
    }

    /// The JSON bytes, for rewriting digits in place (`#[table(unique)]` keys); the caller keeps the JSON valid
    /// and the length unchanged.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }
}

/// JSON text in ASCII: each character outside ASCII as `\uxxxx`, a character beyond U+FFFF as its UTF-16
/// surrogate pair, everything else copied. Exact for JSON, whose structure is ASCII: any other character is
/// inside a string (a value or a member name), where the escape means the same character. The text is valid
/// UTF-8 (an [`EntityBody`], a batch part's body), so the characters are decoded without checks that can fail.
pub(crate) fn ascii_json(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ascii_json_len(json));
    let mut rest = json;
    while let Some(at) = rest.iter().position(|b| !b.is_ascii()) {
        out.extend_from_slice(&rest[..at]);
        let (c, len) = char_at(&rest[at..]);
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            push_unicode_escape(&mut out, *unit);
        }
        rest = &rest[at + len..];
    }
    out.extend_from_slice(rest);
    out
}

/// The length of [`ascii_json`]'s output, without writing it.
pub(crate) fn ascii_json_len(json: &[u8]) -> usize {
    // A UTF-8 lead byte of 2 or 3 bytes becomes one escape; of 4 bytes, a surrogate pair. ASCII and
    // continuation bytes (0b10xx_xxxx, 0x80 to 0xbf) add nothing. Most bodies are ASCII: told a word at a time.
    if json.is_ascii() {
        return json.len();
    }
    json.len()
        + json
            .iter()
            .map(|&b| match b {
                0x00..=0xbf => 0,
                0xc0..=0xdf => 6 - 2,
                0xe0..=0xef => 6 - 3,
                _ => 12 - 4,
            })
            .sum::<usize>()
}

/// The character that starts `bytes` (valid UTF-8) and its length in bytes.
fn char_at(bytes: &[u8]) -> (char, usize) {
    let len = match bytes[0] {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    let c = std::str::from_utf8(&bytes[..len.min(bytes.len())])
        .ok()
        .and_then(|s| s.chars().next())
        .unwrap_or(char::REPLACEMENT_CHARACTER);
    (c, len)
}

/// Writes `\u` and the four lowercase hex digits of a UTF-16 code unit.
fn push_unicode_escape(out: &mut Vec<u8>, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(&[
        b'\\',
        b'u',
        HEX[usize::from(unit >> 12)],
        HEX[usize::from((unit >> 8) & 0xf)],
        HEX[usize::from((unit >> 4) & 0xf)],
        HEX[usize::from(unit & 0xf)],
    ]);
}

/// Where the two key strings of a body sit, without their quotes: the body starts
/// `{"PartitionKey":"..","RowKey":".."`, as [`BodyWriter`] writes it.
pub(crate) fn key_ranges(bytes: &[u8]) -> Option<(Range<usize>, Range<usize>)> {
    const PARTITION: &[u8] = b"{\"PartitionKey\":";
    const ROW: &[u8] = b",\"RowKey\":";
    let partition = json_string_at(bytes, PARTITION.len())?;
    let row_start = partition.end + 1;
    if bytes.get(row_start..row_start + ROW.len())? != ROW {
        return None;
    }
    let row = json_string_at(bytes, row_start + ROW.len())?;
    bytes.starts_with(PARTITION).then_some((partition, row))
}

/// The contents of the JSON string that opens at `start` (the quote), as a range of `bytes`.
fn json_string_at(bytes: &[u8], start: usize) -> Option<Range<usize>> {
    if bytes.get(start) != Some(&b'"') {
        return None;
    }
    let mut i = start + 1;
    loop {
        match *bytes.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(start + 1..i),
            _ => i += 1,
        }
    }
}

/// The properties of an entity as [`encode_entity`] writes them after the keys (`,"Name":"Ada",...`), without
/// the closing brace and without the body's checks (the entity's own limits hold already).
pub(crate) fn properties_json(entity: &Entity) -> Vec<u8> {
    let capacity = 64 + entity.size() + 32 * entity.len();
    let mut writer = BodyWriter::with_keys(capacity, &PartitionKey::empty(), &RowKey::empty());
    let keys = writer.buf.len();
    for (name, value) in entity {
        writer.property(name, value);
    }
    writer.buf.drain(..keys);
    writer.buf
}

impl AsRef<[u8]> for EntityBody {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl From<EntityBody> for Vec<u8> {
    fn from(body: EntityBody) -> Vec<u8> {
        body.bytes
    }
}

impl fmt::Debug for EntityBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EntityBody")
            .field("json", &String::from_utf8_lossy(&self.bytes))
            .field("entity_size", &self.entity_size)
            .finish()
    }
}

/// Encodes an entity as the JSON body of an insert or update request (`docs/rules.md` §5).
///
/// `PartitionKey` and `RowKey` come first, then the properties in the entity's order. `Timestamp` and the
/// ETag are never written: the service sets them. See [`BodyWriter`] for the form of each type.
///
/// ```
/// use table_model::json::encode_entity;
/// use table_model::{Entity, PartitionKey, RowKey};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let e = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?)
///     .with("Blob".parse()?, vec![1u8, 2, 3, 4])?
///     .with("Ratio".parse()?, f64::NEG_INFINITY)?;
/// assert_eq!(
///     encode_entity(&e)?.as_str(),
///     r#"{"PartitionKey":"p","RowKey":"r","Blob@odata.type":"Edm.Binary","Blob":"AQIDBA==","Ratio@odata.type":"Edm.Double","Ratio":"-Infinity"}"#
/// );
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// [`EncodeErrorKind::BodyTooLarge`] when the JSON is over 1 MiB, which an entity within the size formula can
/// still be (base64 makes binary a third larger).
pub fn encode_entity(entity: &Entity) -> Result<EntityBody, EncodeError> {
    // The size formula counts strings twice (UTF-16) and binary once; JSON writes ASCII strings once and binary
    // a third larger, plus names, quotes and annotations. This estimate avoids most regrowth.
    let capacity = 64 + entity.size() + 32 * entity.len();
    let mut writer = BodyWriter::with_keys(capacity, entity.partition_key(), entity.row_key());
    for (name, value) in entity {
        writer.property(name, value);
    }
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edm::{EdmBinary, EdmString};
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = EdmValue> {
        let ticks = DateTime::MIN.ticks()..=DateTime::MAX.ticks();
        prop_oneof![
            "\\PC{0,40}".prop_map(|s| EdmValue::String(EdmString::new(s).unwrap())),
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(|b| EdmValue::Binary(EdmBinary::new(b).unwrap())),
            any::<bool>().prop_map(EdmValue::Boolean),
            ticks.prop_map(|t| EdmValue::DateTime(DateTime::from_ticks(t).unwrap())),
            prop_oneof![any::<f64>(), Just(f64::NAN), Just(f64::INFINITY), Just(-0.0)].prop_map(EdmValue::Double),
            any::<u128>().prop_map(|g| EdmValue::Guid(Uuid::from_u128(g))),
            any::<i32>().prop_map(EdmValue::Int32),
            any::<i64>().prop_map(EdmValue::Int64),
        ]
    }

    proptest! {
        /// A property written alone ([`write_property`]) is, byte for byte, what a body writes for it: one
        /// writer of each value's JSON for both.
        #[test]
        fn a_property_written_alone_is_the_member_of_a_body(name in "[A-Za-z_\\p{L}][A-Za-z0-9_\\p{L}]{0,12}", value in value()) {
            prop_assume!(property_name::check(&name).is_ok());
            let mut body = BodyWriter::new("p", "r");
            body.property(name.as_str(), &value);
            let body = body.finish().unwrap();
            let mut alone = b"prefix".to_vec();
            write_property(&mut alone, name.as_str(), &value).unwrap();
            let alone = String::from_utf8(alone).unwrap();
            prop_assert_eq!(body.as_str(), format!(r#"{{"PartitionKey":"p","RowKey":"r",{}}}"#, &alone["prefix".len()..]));
        }
    }

    #[test]
    fn a_property_with_an_invalid_name_is_not_written() {
        let mut out = b"kept".to_vec();
        let refused = write_property(&mut out, "Partition Key", &EdmValue::Int32(1)).unwrap_err();
        assert!(matches!(refused.kind(), EncodeErrorKind::InvalidPropertyName(_)), "{refused}");
        assert!(write_property(&mut out, "RowKey", &EdmValue::Int32(1)).is_err());
        assert_eq!(out, b"kept");
        let valid = PropertyName::new("Total").unwrap();
        write_property(&mut out, &valid, &EdmValue::Int64(-5)).unwrap();
        assert_eq!(out, br#"kept"Total@odata.type":"Edm.Int64","Total":"-5""#);
    }

    fn ascii(text: &str) -> String {
        let out = ascii_json(text.as_bytes());
        assert_eq!(out.len(), ascii_json_len(text.as_bytes()), "{text}");
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn non_ascii_characters_become_escapes() {
        // Two, three and four bytes of UTF-8; the last as a surrogate pair.
        assert_eq!(ascii("é"), r"\u00e9");
        assert_eq!(ascii("€"), r"\u20ac");
        assert_eq!(ascii("\u{ffff}"), r"\uffff");
        assert_eq!(ascii("😀"), r"\ud83d\ude00");
        assert_eq!(ascii("\u{10000}"), r"\ud800\udc00");
        assert_eq!(ascii("\u{10ffff}"), r"\udbff\udfff");
        assert_eq!(ascii("\u{80}"), r"\u0080");
        // ASCII around them is copied, byte for byte, escapes included.
        assert_eq!(ascii(r#"{"A":"x\"é\\y😀z\n"}"#), r#"{"A":"x\"\u00e9\\y\ud83d\ude00z\n"}"#);
        assert_eq!(ascii("plain ASCII"), "plain ASCII");
        assert_eq!(ascii(""), "");
    }

    #[test]
    fn bodies_in_ascii_decode_to_the_same_entity() {
        let mut w = BodyWriter::new("pé", "r😀");
        // Control characters are escaped by serde_json as before; the non-ASCII ones after.
        w.property_str("Text", "a\u{1}\u{1f}\"\\é中😀\u{2028}").property_i32("Név", 7).property_f64("名前", 1.5);
        let body = w.finish().unwrap();
        assert!(body.as_str().contains(r#""a\u0001\u001f\"\\é中😀"#), "{}", body.as_str());
        let ascii = body.clone().into_ascii().unwrap();
        assert!(ascii.as_bytes().is_ascii());
        assert_eq!(
            ascii.as_str(),
            concat!(
                r#"{"PartitionKey":"p\u00e9","RowKey":"r\ud83d\ude00","#,
                r#""Text":"a\u0001\u001f\"\\\u00e9\u4e2d\ud83d\ude00\u2028","N\u00e9v":7,"#,
                r#""\u540d\u524d@odata.type":"Edm.Double","\u540d\u524d":1.5}"#,
            )
        );
        assert_eq!(ascii.entity_size(), body.entity_size());
        let a: serde_json::Value = serde_json::from_slice(ascii.as_bytes()).unwrap();
        let b: serde_json::Value = serde_json::from_slice(body.as_bytes()).unwrap();
        assert_eq!(a, b);
        let decoded = crate::json::decode_entity(ascii.as_bytes(), None).unwrap();
        assert_eq!(decoded, crate::json::decode_entity(body.as_bytes(), None).unwrap());
        assert_eq!((decoded.partition_key().as_str(), decoded.row_key().as_str()), ("pé", "r😀"));
    }

    #[test]
    fn an_ascii_body_is_kept_and_an_escaped_one_is_held_to_1_mib() {
        let mut w = BodyWriter::new("p", "r");
        w.property_str("A", "only ASCII");
        let body = w.finish().unwrap();
        assert_eq!(body.clone().into_ascii().unwrap(), body);

        // Ten strings of 32,768 three-byte characters: 960 KiB of UTF-8, under 1 MiB; their escapes take twice that.
        let text = "中".repeat(STRING_MAX);
        let mut w = BodyWriter::new("p", "r");
        for i in 0..10 {
            w.property_str(format!("P{i}").as_str(), &text);
        }
        let body = w.finish().unwrap();
        assert!(body.len() < ENTITY_MAX_BYTES);
        let err = body.into_ascii().unwrap_err();
        assert!(matches!(err.kind(), EncodeErrorKind::BodyTooLarge { size } if *size > 2 * 960 * 1024), "{err}");
    }

    const STRING_MAX: usize = crate::limits::STRING_MAX_UTF16;
}
