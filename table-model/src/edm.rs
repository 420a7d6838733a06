//! EDM property values (`docs/rules.md` §3): [`EdmValue`], its bounded [`EdmString`] and [`EdmBinary`], and the
//! conversions from and to the Rust types users hold. The instants of `Edm.DateTime`, [`DateTime`], are in the
//! submodule `datetime`, and the errors of values in `error`.
//!
//! Layer: model.

pub(crate) mod datetime;
pub(crate) mod error;

use crate::limits::{BINARY_MAX_BYTES, STRING_MAX_UTF16};
use datetime::DateTime;
use error::{ValueError, ValueErrorKind};
use std::fmt;
use std::ops::Deref;
use uuid::Uuid;

pub use table_model_rules::EdmType;

/// An `Edm.String` value: a `String` of at most 32,768 UTF-16 code units (64 KiB as the service stores it).
///
/// ```
/// use table_model::EdmString;
/// let s = EdmString::new("héllo")?;
/// assert_eq!(s.as_str(), "héllo");
/// assert_eq!(s.utf16_len(), 5);
/// assert!(EdmString::new("😀".repeat(16_384)).is_ok()); // 32,768 UTF-16 units
/// assert!(EdmString::new("😀".repeat(16_385)).is_err());
/// # Ok::<(), table_model::ValueError>(())
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EdmString {
    value: String,
    utf16_len: usize,
}

impl EdmString {
    /// Checks the length limit.
    ///
    /// # Errors
    /// [`ValueErrorKind::StringTooLong`] over 32,768 UTF-16 code units.
    pub fn new(value: impl Into<String>) -> Result<Self, ValueError> {
        let value = value.into();
        let utf16_len = check_string_len(&value)?;
        Ok(EdmString { value, utf16_len })
    }

    /// The value.
    pub fn as_str(&self) -> &str {
        &self.value
    }

    /// Its length in UTF-16 code units, the unit of the service's limits and size formula.
    pub fn utf16_len(&self) -> usize {
        self.utf16_len
    }

    /// The owned `String`.
    pub fn into_string(self) -> String {
        self.value
    }
}

impl Deref for EdmString {
    type Target = str;
    fn deref(&self) -> &str {
        &self.value
    }
}

impl fmt::Debug for EdmString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value, f)
    }
}

impl TryFrom<String> for EdmString {
    type Error = ValueError;
    fn try_from(value: String) -> Result<Self, ValueError> {
        EdmString::new(value)
    }
}

impl TryFrom<&str> for EdmString {
    type Error = ValueError;
    fn try_from(value: &str) -> Result<Self, ValueError> {
        EdmString::new(value)
    }
}

/// An `Edm.Binary` value: at most 65,536 bytes.
///
/// ```
/// use table_model::EdmBinary;
/// assert!(EdmBinary::new(vec![0u8; 65_536]).is_ok());
/// assert_eq!(
///     EdmBinary::new(vec![0u8; 65_537]).unwrap_err().to_string(),
///     "invalid Edm.Binary: must be at most 65536 bytes, found 65537"
/// );
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EdmBinary(Vec<u8>);

impl EdmBinary {
    /// Checks the size limit.
    ///
    /// # Errors
    /// [`ValueErrorKind::BinaryTooLarge`] over 65,536 bytes.
    pub fn new(value: impl Into<Vec<u8>>) -> Result<Self, ValueError> {
        let value = value.into();
        check_binary_len(value.len())?;
        Ok(EdmBinary(value))
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The owned bytes.
    pub fn into_vec(self) -> Vec<u8> {
        self.0
    }
}

impl Deref for EdmBinary {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for EdmBinary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EdmBinary({} bytes)", self.0.len())
    }
}

impl TryFrom<Vec<u8>> for EdmBinary {
    type Error = ValueError;
    fn try_from(value: Vec<u8>) -> Result<Self, ValueError> {
        EdmBinary::new(value)
    }
}

/// A property value of one of the eight EDM types, within that type's limits.
///
/// Equality is exact: doubles compare by bit pattern, so `NaN == NaN` and `0.0 != -0.0`, which is what a
/// round trip must preserve. That makes `EdmValue` [`Eq`].
///
/// ```
/// use table_model::{EdmType, EdmValue};
/// let v = EdmValue::from(42i64);
/// assert_eq!(v.edm_type(), EdmType::Int64);
/// assert_eq!(EdmValue::from(f64::NAN), EdmValue::from(f64::NAN));
/// assert_ne!(EdmValue::from(0.0), EdmValue::from(-0.0));
/// let s = EdmValue::try_from("text")?;
/// assert_eq!(s.as_str(), Some("text"));
/// # Ok::<(), table_model::ValueError>(())
/// ```
#[derive(Clone, Debug)]
pub enum EdmValue {
    /// `Edm.Binary`.
    Binary(EdmBinary),
    /// `Edm.Boolean`.
    Boolean(bool),
    /// `Edm.DateTime`.
    DateTime(DateTime),
    /// `Edm.Double`: any `f64`, NaN, infinities and `-0.0` included.
    Double(f64),
    /// `Edm.Guid`.
    Guid(Uuid),
    /// `Edm.Int32`.
    Int32(i32),
    /// `Edm.Int64`.
    Int64(i64),
    /// `Edm.String`.
    String(EdmString),
}

impl EdmValue {
    /// The EDM type of the value.
    pub fn edm_type(&self) -> EdmType {
        match self {
            EdmValue::Binary(_) => EdmType::Binary,
            EdmValue::Boolean(_) => EdmType::Boolean,
            EdmValue::DateTime(_) => EdmType::DateTime,
            EdmValue::Double(_) => EdmType::Double,
            EdmValue::Guid(_) => EdmType::Guid,
            EdmValue::Int32(_) => EdmType::Int32,
            EdmValue::Int64(_) => EdmType::Int64,
            EdmValue::String(_) => EdmType::String,
        }
    }

    /// The string, when this is an `Edm.String`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            EdmValue::String(s) => Some(s.as_str()),
            _ => None,
        }
    }

    /// The value's share of the entity size formula (`docs/rules.md` §4.2): String `2 * utf16_len + 4`, Binary
    /// `len + 4`, Boolean 1, DateTime 8, Double 8, Guid 16, Int32 4, Int64 8.
    pub fn stored_size(&self) -> usize {
        match self {
            EdmValue::Binary(b) => binary_stored_size(b.len()),
            EdmValue::Boolean(_) => 1,
            EdmValue::DateTime(_) | EdmValue::Double(_) | EdmValue::Int64(_) => 8,
            EdmValue::Guid(_) => 16,
            EdmValue::Int32(_) => 4,
            EdmValue::String(s) => string_stored_size(s.utf16_len()),
        }
    }
}

/// Checks the `Edm.String` length limit; returns the length in UTF-16 code units.
pub(crate) fn check_string_len(value: &str) -> Result<usize, ValueError> {
    let utf16_len = table_model_rules::utf16_len(value.as_bytes());
    if utf16_len > STRING_MAX_UTF16 {
        return Err(ValueError::new(ValueErrorKind::StringTooLong { utf16_len }));
    }
    Ok(utf16_len)
}

/// Checks the `Edm.Binary` size limit.
pub(crate) fn check_binary_len(len: usize) -> Result<(), ValueError> {
    if len > BINARY_MAX_BYTES {
        return Err(ValueError::new(ValueErrorKind::BinaryTooLarge { len }));
    }
    Ok(())
}

/// [`EdmValue::stored_size`] of an `Edm.String` of this many UTF-16 code units.
pub(crate) const fn string_stored_size(utf16_len: usize) -> usize {
    2 * utf16_len + 4
}

/// [`EdmValue::stored_size`] of an `Edm.Binary` of this many bytes.
pub(crate) const fn binary_stored_size(len: usize) -> usize {
    len + 4
}

impl PartialEq for EdmValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (EdmValue::Binary(a), EdmValue::Binary(b)) => a == b,
            (EdmValue::Boolean(a), EdmValue::Boolean(b)) => a == b,
            (EdmValue::DateTime(a), EdmValue::DateTime(b)) => a == b,
            (EdmValue::Double(a), EdmValue::Double(b)) => a.to_bits() == b.to_bits(),
            (EdmValue::Guid(a), EdmValue::Guid(b)) => a == b,
            (EdmValue::Int32(a), EdmValue::Int32(b)) => a == b,
            (EdmValue::Int64(a), EdmValue::Int64(b)) => a == b,
            (EdmValue::String(a), EdmValue::String(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for EdmValue {}

/// Conversion of a Rust value into an [`EdmValue`], used by [`Entity::insert`](crate::Entity::insert) and the
/// derive. Infallible for the fixed-size types; `String` and `Vec<u8>` check their limits.
pub trait IntoEdm {
    /// Converts the value.
    ///
    /// # Errors
    /// When the value breaks its EDM type's limit.
    fn into_edm(self) -> Result<EdmValue, ValueError>;
}

/// Conversion of an [`EdmValue`] into a Rust value, used by typed reads and the derive.
///
/// A different EDM type is an error, except the lossless widenings other SDKs force on readers: an `Int32`
/// read as `i64` or `f64` (the JavaScript SDK writes integral doubles as Int32).
pub trait FromEdm: Sized {
    /// Converts the value.
    ///
    /// # Errors
    /// [`ValueErrorKind::TypeMismatch`] for another EDM type, [`ValueErrorKind::OutOfRange`] for a number that
    /// does not fit.
    fn from_edm(value: EdmValue) -> Result<Self, ValueError>;
}

fn mismatch(expected: EdmType, value: &EdmValue) -> ValueError {
    ValueError::new(ValueErrorKind::TypeMismatch { expected, found: value.edm_type() })
}

macro_rules! edm_scalar {
    ($rust:ty, $variant:ident, $edm:ident) => {
        impl From<$rust> for EdmValue {
            fn from(value: $rust) -> Self {
                EdmValue::$variant(value.into())
            }
        }

        impl IntoEdm for $rust {
            fn into_edm(self) -> Result<EdmValue, ValueError> {
                Ok(EdmValue::from(self))
            }
        }
    };
}

edm_scalar!(bool, Boolean, Boolean);
edm_scalar!(i8, Int32, Int32);
edm_scalar!(i16, Int32, Int32);
edm_scalar!(i32, Int32, Int32);
edm_scalar!(u8, Int32, Int32);
edm_scalar!(u16, Int32, Int32);
edm_scalar!(u32, Int64, Int64);
edm_scalar!(i64, Int64, Int64);
edm_scalar!(f32, Double, Double);
edm_scalar!(f64, Double, Double);
edm_scalar!(Uuid, Guid, Guid);
edm_scalar!(DateTime, DateTime, DateTime);
edm_scalar!(EdmString, String, String);
edm_scalar!(EdmBinary, Binary, Binary);

impl TryFrom<String> for EdmValue {
    type Error = ValueError;
    fn try_from(value: String) -> Result<Self, ValueError> {
        EdmString::new(value).map(EdmValue::String)
    }
}

impl TryFrom<&str> for EdmValue {
    type Error = ValueError;
    fn try_from(value: &str) -> Result<Self, ValueError> {
        EdmString::new(value).map(EdmValue::String)
    }
}

impl TryFrom<Vec<u8>> for EdmValue {
    type Error = ValueError;
    fn try_from(value: Vec<u8>) -> Result<Self, ValueError> {
        EdmBinary::new(value).map(EdmValue::Binary)
    }
}

impl TryFrom<&[u8]> for EdmValue {
    type Error = ValueError;
    fn try_from(value: &[u8]) -> Result<Self, ValueError> {
        EdmBinary::new(value).map(EdmValue::Binary)
    }
}

impl TryFrom<chrono::DateTime<chrono::Utc>> for EdmValue {
    type Error = ValueError;
    fn try_from(value: chrono::DateTime<chrono::Utc>) -> Result<Self, ValueError> {
        DateTime::from_chrono(value).map(EdmValue::DateTime)
    }
}

impl IntoEdm for EdmValue {
    fn into_edm(self) -> Result<EdmValue, ValueError> {
        Ok(self)
    }
}

impl IntoEdm for String {
    fn into_edm(self) -> Result<EdmValue, ValueError> {
        EdmValue::try_from(self)
    }
}

impl IntoEdm for &str {
    fn into_edm(self) -> Result<EdmValue, ValueError> {
        EdmValue::try_from(self)
    }
}

impl IntoEdm for Vec<u8> {
    fn into_edm(self) -> Result<EdmValue, ValueError> {
        EdmValue::try_from(self)
    }
}

impl IntoEdm for &[u8] {
    fn into_edm(self) -> Result<EdmValue, ValueError> {
        EdmValue::try_from(self)
    }
}

impl IntoEdm for chrono::DateTime<chrono::Utc> {
    fn into_edm(self) -> Result<EdmValue, ValueError> {
        EdmValue::try_from(self)
    }
}

macro_rules! from_edm_int {
    ($rust:ty, $edm:ident, [$($variant:ident),*]) => {
        impl FromEdm for $rust {
            fn from_edm(value: EdmValue) -> Result<Self, ValueError> {
                match value {
                    $(EdmValue::$variant(v) => <$rust>::try_from(v).map_err(|_| {
                        ValueError::new(ValueErrorKind::OutOfRange { value: v.to_string(), target: stringify!($rust) })
                    }),)*
                    other => Err(mismatch(EdmType::$edm, &other)),
                }
            }
        }

        impl TryFrom<EdmValue> for $rust {
            type Error = ValueError;
            fn try_from(value: EdmValue) -> Result<Self, ValueError> {
                <$rust as FromEdm>::from_edm(value)
            }
        }
    };
}

from_edm_int!(i8, Int32, [Int32]);
from_edm_int!(i16, Int32, [Int32]);
from_edm_int!(i32, Int32, [Int32]);
from_edm_int!(u8, Int32, [Int32]);
from_edm_int!(u16, Int32, [Int32]);
from_edm_int!(u32, Int64, [Int64, Int32]);
from_edm_int!(i64, Int64, [Int64, Int32]);

macro_rules! from_edm_exact {
    ($rust:ty, $edm:ident, |$v:ident| $convert:expr) => {
        impl FromEdm for $rust {
            fn from_edm(value: EdmValue) -> Result<Self, ValueError> {
                match value {
                    EdmValue::$edm($v) => Ok($convert),
                    other => Err(mismatch(EdmType::$edm, &other)),
                }
            }
        }

        impl TryFrom<EdmValue> for $rust {
            type Error = ValueError;
            fn try_from(value: EdmValue) -> Result<Self, ValueError> {
                <$rust as FromEdm>::from_edm(value)
            }
        }
    };
}

from_edm_exact!(bool, Boolean, |v| v);
from_edm_exact!(Uuid, Guid, |v| v);
from_edm_exact!(DateTime, DateTime, |v| v);
from_edm_exact!(chrono::DateTime<chrono::Utc>, DateTime, |v| v.to_chrono());
from_edm_exact!(EdmString, String, |v| v);
from_edm_exact!(String, String, |v| v.into_string());
from_edm_exact!(EdmBinary, Binary, |v| v);
from_edm_exact!(Vec<u8>, Binary, |v| v.into_vec());

impl FromEdm for f64 {
    fn from_edm(value: EdmValue) -> Result<Self, ValueError> {
        match value {
            EdmValue::Double(v) => Ok(v),
            EdmValue::Int32(v) => Ok(f64::from(v)),
            other => Err(mismatch(EdmType::Double, &other)),
        }
    }
}

impl TryFrom<EdmValue> for f64 {
    type Error = ValueError;
    fn try_from(value: EdmValue) -> Result<Self, ValueError> {
        <f64 as FromEdm>::from_edm(value)
    }
}

impl FromEdm for f32 {
    /// Accepts a Double only when it converts to `f32` exactly (NaN and infinities included).
    fn from_edm(value: EdmValue) -> Result<Self, ValueError> {
        let v = f64::from_edm(value)?;
        let narrowed = v as f32;
        if f64::from(narrowed).to_bits() == v.to_bits() || v.is_nan() {
            Ok(narrowed)
        } else {
            Err(ValueError::new(ValueErrorKind::OutOfRange { value: v.to_string(), target: "f32" }))
        }
    }
}

impl FromEdm for EdmValue {
    fn from_edm(value: EdmValue) -> Result<Self, ValueError> {
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_at_the_boundary() {
        assert!(EdmString::new("a".repeat(STRING_MAX_UTF16)).is_ok());
        assert_eq!(
            EdmString::new("a".repeat(STRING_MAX_UTF16 + 1)).unwrap_err().kind(),
            &ValueErrorKind::StringTooLong { utf16_len: STRING_MAX_UTF16 + 1 }
        );
        assert!(EdmString::new(format!("{}😀", "a".repeat(STRING_MAX_UTF16 - 2))).is_ok());
        assert!(EdmString::new(format!("{}😀", "a".repeat(STRING_MAX_UTF16 - 1))).is_err());
        assert!(EdmBinary::new(vec![1; BINARY_MAX_BYTES]).is_ok());
        assert!(EdmBinary::new(vec![1; BINARY_MAX_BYTES + 1]).is_err());
    }

    #[test]
    fn widening_only_where_lossless() {
        assert_eq!(i64::from_edm(EdmValue::Int32(-5)).unwrap(), -5);
        assert_eq!(f64::from_edm(EdmValue::Int32(7)).unwrap(), 7.0);
        assert_eq!(u32::from_edm(EdmValue::Int64(4_000_000_000)).unwrap(), 4_000_000_000);
        assert!(matches!(u32::from_edm(EdmValue::Int64(-1)).unwrap_err().kind(), ValueErrorKind::OutOfRange { .. }));
        assert!(matches!(i8::from_edm(EdmValue::Int32(300)).unwrap_err().kind(), ValueErrorKind::OutOfRange { .. }));
        assert_eq!(i32::from_edm(EdmValue::Int64(1)).unwrap_err().to_string(), "expected Edm.Int32, found Edm.Int64");
        assert!(i64::from_edm(EdmValue::Double(1.0)).is_err());
        assert!(String::from_edm(EdmValue::Int32(1)).is_err());
        assert_eq!(f32::from_edm(EdmValue::Double(0.5)).unwrap(), 0.5);
        assert!(f32::from_edm(EdmValue::Double(0.1)).is_err());
        assert!(f32::from_edm(EdmValue::Double(f64::NAN)).unwrap().is_nan());
    }

    #[test]
    fn small_integers_widen_on_write() {
        assert_eq!(EdmValue::from(200u8), EdmValue::Int32(200));
        assert_eq!(EdmValue::from(u16::MAX), EdmValue::Int32(65_535));
        assert_eq!(EdmValue::from(u32::MAX), EdmValue::Int64(4_294_967_295));
        assert_eq!(EdmValue::from(1.5f32), EdmValue::Double(1.5));
    }

    #[test]
    fn stored_sizes() {
        assert_eq!(EdmValue::try_from("ab😀").unwrap().stored_size(), 2 * 4 + 4);
        assert_eq!(EdmValue::try_from(vec![0u8; 10]).unwrap().stored_size(), 14);
        assert_eq!(EdmValue::from(true).stored_size(), 1);
        assert_eq!(EdmValue::from(Uuid::nil()).stored_size(), 16);
    }
}
