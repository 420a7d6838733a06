//! [`EdmField`], [`KeyField`] and the metadata field traits for the types of `docs/rules.md` §3 and §6.

use super::{ETagField, EdmField, KeyEncoding, KeyField, ReverseChronologicalKey, TimestampField, UniqueTimeKey};
use crate::edm::datetime::DateTime;
use crate::edm::error::ValueError;
use crate::edm::{EdmBinary, EdmString, EdmType, EdmValue, FromEdm, IntoEdm};
use crate::entity::ETag;
use crate::json::error::EncodeError;
use crate::json::BodyWriter;
use crate::key::SortableKey;
use crate::key::{PartitionKey, RowKey};
use std::borrow::Cow;
use std::cmp::Reverse;
use uuid::Uuid;

// Property values: each type stores as `EdmValue` through `IntoEdm` (a clone: an `Entity` owns its values) and
// reads through `FromEdm`, so the type mapping and the widenings are those of `edm.rs`.
// `write_json` goes straight to the writer's typed methods: no `EdmValue`, no clone.
macro_rules! edm_field {
    ($($ty:ty => $edm:ident, |$w:ident, $name:ident, $v:ident| $write:expr;)*) => {$(
        impl EdmField for $ty {
            const EDM_TYPE: Option<EdmType> = Some(EdmType::$edm);
            fn to_edm(&self) -> Result<Option<EdmValue>, ValueError> {
                IntoEdm::into_edm(self.clone()).map(Some)
            }
            fn from_edm(value: EdmValue) -> Result<Self, ValueError> {
                <$ty as FromEdm>::from_edm(value)
            }
            #[inline]
            fn write_json(&self, $w: &mut BodyWriter, $name: &str) -> Result<(), EncodeError> {
                let $v = self;
                $write;
                Ok(())
            }
        }
    )*};
}

edm_field! {
    bool => Boolean, |w, name, v| w.property_bool(name, *v);
    i8 => Int32, |w, name, v| w.property_i32(name, i32::from(*v));
    i16 => Int32, |w, name, v| w.property_i32(name, i32::from(*v));
    i32 => Int32, |w, name, v| w.property_i32(name, *v);
    u8 => Int32, |w, name, v| w.property_i32(name, i32::from(*v));
    u16 => Int32, |w, name, v| w.property_i32(name, i32::from(*v));
    i64 => Int64, |w, name, v| w.property_i64(name, *v);
    u32 => Int64, |w, name, v| w.property_i64(name, i64::from(*v));
    f32 => Double, |w, name, v| w.property_f64(name, f64::from(*v));
    f64 => Double, |w, name, v| w.property_f64(name, *v);
    String => String, |w, name, v| w.property_str(name, v);
    EdmString => String, |w, name, v| w.property_str(name, v);
    Vec<u8> => Binary, |w, name, v| w.property_bytes(name, v);
    EdmBinary => Binary, |w, name, v| w.property_bytes(name, v);
    Uuid => Guid, |w, name, v| w.property_uuid(name, *v);
    DateTime => DateTime, |w, name, v| w.property_datetime(name, *v);
    chrono::DateTime<chrono::Utc> => DateTime,
        |w, name, v| w.property_datetime(name, DateTime::from_chrono(*v).map_err(|e| e.in_property(name))?);
}

impl EdmField for EdmValue {
    const EDM_TYPE: Option<EdmType> = None;
    fn to_edm(&self) -> Result<Option<EdmValue>, ValueError> {
        Ok(Some(self.clone()))
    }
    fn from_edm(value: EdmValue) -> Result<Self, ValueError> {
        Ok(value)
    }
}

impl<T: EdmField> EdmField for Option<T> {
    const EDM_TYPE: Option<EdmType> = T::EDM_TYPE;
    const OPTIONAL: bool = true;
    fn to_edm(&self) -> Result<Option<EdmValue>, ValueError> {
        match self {
            Some(v) => v.to_edm(),
            None => Ok(None),
        }
    }
    fn from_edm(value: EdmValue) -> Result<Self, ValueError> {
        T::from_edm(value).map(Some)
    }
    fn absent() -> Option<Self> {
        Some(None)
    }
    #[inline]
    fn write_json(&self, writer: &mut BodyWriter, name: &str) -> Result<(), EncodeError> {
        match self {
            Some(v) => v.write_json(writer, name),
            None => Ok(()),
        }
    }
}

// Text keys: written as they are; `PartitionKey`/`RowKey` validate on read, `String` is checked when the
// derive builds the key.
impl KeyField for String {
    const ENCODING: KeyEncoding = KeyEncoding::Text;
    fn encode_key(&self) -> Result<Cow<'_, str>, ValueError> {
        Ok(Cow::Borrowed(self))
    }
    fn decode_key(key: &str) -> Result<Self, ValueError> {
        Ok(key.to_owned())
    }
    fn decode_key_string(key: String) -> Result<Self, ValueError> {
        Ok(key)
    }
}

macro_rules! key_text {
    ($($ty:ident),*) => {$(
        impl KeyField for $ty {
            const ENCODING: KeyEncoding = KeyEncoding::Text;
            fn encode_key(&self) -> Result<Cow<'_, str>, ValueError> {
                Ok(Cow::Borrowed(self.as_str()))
            }
            fn decode_key(key: &str) -> Result<Self, ValueError> {
                $ty::new(key).map_err(ValueError::custom)
            }
        }
    )*};
}

key_text!(PartitionKey, RowKey);

/// Number of decimal digits of `n`, for the schema's [`KeyEncoding::Integer`] width.
const fn digits(mut n: u128) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

// The sortable encodings are those of `key::SortableKey` (`docs/rules.md` §6); this only adapts them to the
// open `KeyField` trait the derive calls, which user types can implement too.
macro_rules! key_sortable {
    ($($ty:ty => $encoding:expr),* $(,)?) => {$(
        impl KeyField for $ty {
            const ENCODING: KeyEncoding = $encoding;
            fn encode_key(&self) -> Result<Cow<'_, str>, ValueError> {
                Ok(Cow::Owned(SortableKey::to_key_string(self)))
            }
            fn decode_key(key: &str) -> Result<Self, ValueError> {
                <$ty as SortableKey>::from_key_str(key).map_err(ValueError::custom)
            }
        }
    )*};
}

macro_rules! key_int {
    ($($ty:ty => $signed:expr),*) => {
        key_sortable! {$(
            $ty => KeyEncoding::Integer {
                width: digits((<$ty>::MAX as i128).abs_diff(<$ty>::MIN as i128)),
                signed: $signed,
            },
            Reverse<$ty> => KeyEncoding::Reverse(&<$ty as KeyField>::ENCODING),
        )*}
    };
}

key_int!(u8 => false, u16 => false, u32 => false, u64 => false, i8 => true, i16 => true, i32 => true, i64 => true);

key_sortable! {
    u128 => KeyEncoding::Integer { width: digits(u128::MAX), signed: false },
    i128 => KeyEncoding::Integer { width: digits(u128::MAX), signed: true },
    Reverse<u128> => KeyEncoding::Reverse(&<u128 as KeyField>::ENCODING),
    Reverse<i128> => KeyEncoding::Reverse(&<i128 as KeyField>::ENCODING),
    Uuid => KeyEncoding::Uuid,
    Reverse<Uuid> => KeyEncoding::Reverse(&KeyEncoding::Uuid),
    DateTime => KeyEncoding::Chronological,
    Reverse<DateTime> => KeyEncoding::ReverseChronological,
}

impl KeyField for chrono::DateTime<chrono::Utc> {
    const ENCODING: KeyEncoding = KeyEncoding::Chronological;
    fn encode_key(&self) -> Result<Cow<'_, str>, ValueError> {
        Ok(Cow::Owned(DateTime::from_chrono(*self)?.encode_key()?.into_owned()))
    }
    fn decode_key(key: &str) -> Result<Self, ValueError> {
        DateTime::decode_key(key).map(DateTime::to_chrono)
    }
}

impl ReverseChronologicalKey for DateTime {
    fn encode_reverse_key(&self) -> Result<String, ValueError> {
        Reverse(*self).encode_key().map(Cow::into_owned)
    }
    fn decode_reverse_key(key: &str) -> Result<Self, ValueError> {
        <Reverse<DateTime> as KeyField>::decode_key(key).map(|r| r.0)
    }
}

impl ReverseChronologicalKey for chrono::DateTime<chrono::Utc> {
    fn encode_reverse_key(&self) -> Result<String, ValueError> {
        DateTime::from_chrono(*self)?.encode_reverse_key()
    }
    fn decode_reverse_key(key: &str) -> Result<Self, ValueError> {
        DateTime::decode_reverse_key(key).map(DateTime::to_chrono)
    }
}

impl UniqueTimeKey for DateTime {
    fn to_instant(&self) -> Result<DateTime, ValueError> {
        Ok(*self)
    }
    fn from_instant(instant: DateTime) -> Self {
        instant
    }
}

impl UniqueTimeKey for chrono::DateTime<chrono::Utc> {
    fn to_instant(&self) -> Result<DateTime, ValueError> {
        DateTime::from_chrono(*self)
    }
    fn from_instant(instant: DateTime) -> Self {
        instant.to_chrono()
    }
}

impl TimestampField for Option<DateTime> {
    fn from_timestamp(timestamp: Option<DateTime>) -> Self {
        timestamp
    }
}

impl TimestampField for Option<chrono::DateTime<chrono::Utc>> {
    fn from_timestamp(timestamp: Option<DateTime>) -> Self {
        timestamp.map(DateTime::to_chrono)
    }
}

impl ETagField for Option<ETag> {
    fn from_etag(etag: Option<&ETag>) -> Self {
        etag.cloned()
    }

    fn etag(&self) -> Option<&ETag> {
        self.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: KeyField + PartialEq + std::fmt::Debug + Copy>(values: &[T]) {
        let keys: Vec<String> = values.iter().map(|v| v.encode_key().unwrap().into_owned()).collect();
        for (v, k) in values.iter().zip(&keys) {
            assert_eq!(T::decode_key(k).unwrap(), *v, "{k}");
        }
        // Values are given in increasing order: the keys must sort the same way, and have one width.
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
        assert!(keys.iter().all(|k| k.len() == keys[0].len()));
    }

    #[test]
    fn integer_keys_sort_numerically() {
        round_trip(&[0u8, 1, 9, 10, 200, 255]);
        round_trip(&[0u32, 2, 10, 11, u32::MAX]);
        round_trip(&[0u64, 1, u64::MAX]);
        round_trip(&[i8::MIN, -100, -1, 0, 1, 99, i8::MAX]);
        round_trip(&[i64::MIN, -10, -2, 0, 2, 10, i64::MAX]);
        assert_eq!(u64::MAX.encode_key().unwrap(), "18446744073709551615");
        assert_eq!(i64::MIN.encode_key().unwrap(), "00000000000000000000");
        assert_eq!(0i32.encode_key().unwrap(), "2147483648");
    }

    #[test]
    fn integer_keys_reject_other_forms() {
        for bad in ["", "42", "00000000042", "-000000042", "00000000a2", "+000000042", "4294967296"] {
            assert!(u32::decode_key(bad).is_err(), "{bad}");
        }
        assert_eq!(u8::decode_key("7").unwrap_err().to_string(), "invalid u8 key `7`: must be 3 digits, found 1");
        assert!(u8::decode_key("256").is_err());
    }

    #[test]
    fn time_keys() {
        let times = [DateTime::MIN, DateTime::UNIX_EPOCH, DateTime::MAX];
        round_trip(&times);
        assert_eq!(DateTime::UNIX_EPOCH.encode_key().unwrap(), "0621355968000000000");
        let reverse: Vec<String> = times.iter().map(|t| t.encode_reverse_key().unwrap()).collect();
        assert!(reverse.windows(2).all(|w| w[0] > w[1]));
        for (t, k) in times.iter().zip(&reverse) {
            assert_eq!(DateTime::decode_reverse_key(k).unwrap(), *t);
        }
        assert_eq!(DateTime::MAX.encode_reverse_key().unwrap(), "0000000000000000000");
        assert!(DateTime::decode_key("0000000000000000000").is_err()); // year 1, before 1601
        round_trip(&[Reverse(u32::MAX), Reverse(7), Reverse(0)]);
        assert_eq!(
            <Reverse<u8> as KeyField>::ENCODING,
            KeyEncoding::Reverse(&KeyEncoding::Integer { width: 3, signed: false })
        );
        let chrono_now = chrono::DateTime::from_timestamp(1_700_000_000, 500).unwrap();
        let back =
            <chrono::DateTime<chrono::Utc>>::decode_reverse_key(&chrono_now.encode_reverse_key().unwrap()).unwrap();
        assert_eq!(back, chrono_now - chrono::Duration::nanoseconds(0)); // 500 ns is whole ticks
    }

    #[test]
    fn uuid_keys() {
        let ids = [Uuid::nil(), Uuid::from_u128(1), Uuid::from_u128(0xA0 << 120), Uuid::max()];
        round_trip(&ids);
        assert!(Uuid::decode_key("not-a-uuid").is_err());
    }
}
