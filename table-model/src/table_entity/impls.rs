//! [`EdmField`], [`KeyField`] and the metadata field traits for the types of SPEC.md sections 3 and 6.

use super::{ETagField, EdmField, KeyEncoding, KeyField, ReverseChronologicalKey, TimestampField};
use crate::datetime::DateTime;
use crate::edm::{EdmBinary, EdmString, EdmType, EdmValue, FromEdm, IntoEdm};
use crate::entity::ETag;
use crate::error::ValueError;
use crate::key::{PartitionKey, RowKey};
use crate::limits::DATETIME_MAX_TICKS;
use uuid::Uuid;

// Property values: each type stores as `EdmValue` through `IntoEdm` (a clone: an `Entity` owns its values) and
// reads through `FromEdm`, so the type mapping and the widenings are those of `edm.rs`.
macro_rules! edm_field {
    ($($ty:ty => $edm:ident),* $(,)?) => {$(
        impl EdmField for $ty {
            const EDM_TYPE: Option<EdmType> = Some(EdmType::$edm);
            fn to_edm(&self) -> Result<Option<EdmValue>, ValueError> {
                IntoEdm::into_edm(self.clone()).map(Some)
            }
            fn from_edm(value: EdmValue) -> Result<Self, ValueError> {
                <$ty as FromEdm>::from_edm(value)
            }
        }
    )*};
}

edm_field! {
    bool => Boolean,
    i8 => Int32, i16 => Int32, i32 => Int32, u8 => Int32, u16 => Int32,
    i64 => Int64, u32 => Int64,
    f32 => Double, f64 => Double,
    String => String, EdmString => String,
    Vec<u8> => Binary, EdmBinary => Binary,
    Uuid => Guid,
    DateTime => DateTime, chrono::DateTime<chrono::Utc> => DateTime,
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
}

fn bad_key(key: &str, expected: &str) -> ValueError {
    ValueError::custom(format_args!("invalid key `{key}`: expected {expected}"))
}

// Text keys: written as they are; `PartitionKey`/`RowKey` validate on read, `String` is checked when the
// derive builds the key.
impl KeyField for String {
    const ENCODING: KeyEncoding = KeyEncoding::Text;
    fn to_key(&self) -> Result<String, ValueError> {
        Ok(self.clone())
    }
    fn from_key(key: &str) -> Result<Self, ValueError> {
        Ok(key.to_owned())
    }
}

macro_rules! key_text {
    ($($ty:ident),*) => {$(
        impl KeyField for $ty {
            const ENCODING: KeyEncoding = KeyEncoding::Text;
            fn to_key(&self) -> Result<String, ValueError> {
                Ok(self.as_str().to_owned())
            }
            fn from_key(key: &str) -> Result<Self, ValueError> {
                $ty::new(key).map_err(ValueError::custom)
            }
        }
    )*};
}

key_text!(PartitionKey, RowKey);

/// Number of decimal digits of `n`.
const fn digits(mut n: u128) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Parses exactly `width` ASCII digits.
fn parse_fixed(key: &str, width: usize) -> Option<u128> {
    if key.len() != width || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse().ok()
}

// Integers: zero-padded to the width of the type's largest offset value. A signed value `v` is written as
// `v - MIN`, so that `MIN` is all zeros and the string order is the numeric order across the sign.
macro_rules! key_int {
    ($($ty:ty => $signed:expr),*) => {$(
        impl KeyField for $ty {
            const ENCODING: KeyEncoding =
                KeyEncoding::Integer { width: digits((<$ty>::MAX as i128 - <$ty>::MIN as i128) as u128), signed: $signed };
            fn to_key(&self) -> Result<String, ValueError> {
                let KeyEncoding::Integer { width, .. } = Self::ENCODING else { unreachable!() };
                let offset = (*self as i128 - <$ty>::MIN as i128) as u128;
                Ok(format!("{offset:0width$}"))
            }
            fn from_key(key: &str) -> Result<Self, ValueError> {
                let KeyEncoding::Integer { width, .. } = Self::ENCODING else { unreachable!() };
                parse_fixed(key, width)
                    .and_then(|offset| <$ty>::try_from(offset as i128 + <$ty>::MIN as i128).ok())
                    .ok_or_else(|| bad_key(key, &format!("{width} digits of a zero-padded `{}`", stringify!($ty))))
            }
        }
    )*};
}

key_int!(u8 => false, u16 => false, u32 => false, u64 => false, i8 => true, i16 => true, i32 => true, i64 => true);

impl KeyField for Uuid {
    const ENCODING: KeyEncoding = KeyEncoding::Uuid;
    fn to_key(&self) -> Result<String, ValueError> {
        Ok(self.hyphenated().to_string())
    }
    fn from_key(key: &str) -> Result<Self, ValueError> {
        Uuid::try_parse(key).map_err(|_| bad_key(key, "a hyphenated UUID"))
    }
}

fn ticks_key(ticks: i64) -> String {
    format!("{ticks:019}")
}

fn parse_ticks_key(key: &str) -> Result<i64, ValueError> {
    parse_fixed(key, 19).map(|t| t as i64).ok_or_else(|| bad_key(key, "19 digits of .NET ticks"))
}

impl KeyField for DateTime {
    const ENCODING: KeyEncoding = KeyEncoding::Chronological;
    fn to_key(&self) -> Result<String, ValueError> {
        Ok(ticks_key(self.ticks()))
    }
    fn from_key(key: &str) -> Result<Self, ValueError> {
        DateTime::from_ticks(parse_ticks_key(key)?)
    }
}

impl KeyField for chrono::DateTime<chrono::Utc> {
    const ENCODING: KeyEncoding = KeyEncoding::Chronological;
    fn to_key(&self) -> Result<String, ValueError> {
        DateTime::from_chrono(*self)?.to_key()
    }
    fn from_key(key: &str) -> Result<Self, ValueError> {
        DateTime::from_key(key).map(DateTime::to_chrono)
    }
}

impl ReverseChronologicalKey for DateTime {
    fn to_reverse_key(&self) -> Result<String, ValueError> {
        Ok(ticks_key(DATETIME_MAX_TICKS - self.ticks()))
    }
    fn from_reverse_key(key: &str) -> Result<Self, ValueError> {
        DateTime::from_ticks(DATETIME_MAX_TICKS - parse_ticks_key(key)?)
    }
}

impl ReverseChronologicalKey for chrono::DateTime<chrono::Utc> {
    fn to_reverse_key(&self) -> Result<String, ValueError> {
        DateTime::from_chrono(*self)?.to_reverse_key()
    }
    fn from_reverse_key(key: &str) -> Result<Self, ValueError> {
        DateTime::from_reverse_key(key).map(DateTime::to_chrono)
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: KeyField + PartialEq + std::fmt::Debug + Copy>(values: &[T]) {
        let keys: Vec<String> = values.iter().map(|v| v.to_key().unwrap()).collect();
        for (v, k) in values.iter().zip(&keys) {
            assert_eq!(T::from_key(k).unwrap(), *v, "{k}");
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
        assert_eq!(u64::MAX.to_key().unwrap(), "18446744073709551615");
        assert_eq!(i64::MIN.to_key().unwrap(), "00000000000000000000");
        assert_eq!(0i32.to_key().unwrap(), "2147483648");
    }

    #[test]
    fn integer_keys_reject_other_forms() {
        for bad in ["", "42", "00000000042", "-000000042", "00000000a2", "+000000042", "4294967296"] {
            assert!(u32::from_key(bad).is_err(), "{bad}");
        }
        assert_eq!(
            u8::from_key("7").unwrap_err().to_string(),
            "invalid key `7`: expected 3 digits of a zero-padded `u8`"
        );
        assert!(u8::from_key("256").is_err());
    }

    #[test]
    fn time_keys() {
        let times = [DateTime::MIN, DateTime::UNIX_EPOCH, DateTime::MAX];
        round_trip(&times);
        assert_eq!(DateTime::UNIX_EPOCH.to_key().unwrap(), "0621355968000000000");
        let reverse: Vec<String> = times.iter().map(|t| t.to_reverse_key().unwrap()).collect();
        assert!(reverse.windows(2).all(|w| w[0] > w[1]));
        for (t, k) in times.iter().zip(&reverse) {
            assert_eq!(DateTime::from_reverse_key(k).unwrap(), *t);
        }
        assert_eq!(DateTime::MAX.to_reverse_key().unwrap(), "0000000000000000000");
        assert!(DateTime::from_key("0000000000000000000").is_err()); // year 1, before 1601
        let chrono_now = chrono::DateTime::from_timestamp(1_700_000_000, 500).unwrap();
        let back = <chrono::DateTime<chrono::Utc>>::from_reverse_key(&chrono_now.to_reverse_key().unwrap()).unwrap();
        assert_eq!(back, chrono_now - chrono::Duration::nanoseconds(0)); // 500 ns is whole ticks
    }

    #[test]
    fn uuid_keys() {
        let ids = [Uuid::nil(), Uuid::from_u128(1), Uuid::from_u128(0xA0 << 120), Uuid::max()];
        round_trip(&ids);
        assert!(Uuid::from_key("not-a-uuid").is_err());
    }
}
