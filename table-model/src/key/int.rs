//! Integer keys (`docs/rules.md` §6.1): fixed-width decimal strings whose string order is numeric order, negative
//! numbers included.
//!
//! The width comes from the type's maximum: every `u32` key has 10 digits, every `u64` key 20. A signed value
//! is first mapped to its unsigned type by flipping the sign bit, that is `value - MIN`, so `i8::MIN` is `000`,
//! `-1` is `127`, `0` is `128` and `i8::MAX` is `255`. `Reverse(v)` writes `MAX - v` of that unsigned value.
//! See [`SortableKey`] for the whole table.

use super::error::{EncodedRange, KeyDecodeError, KeyFormat};
use super::sortable::{decimal_width, out_of_range, padded, parse_fixed, private, SortableKey};
use std::cmp::Reverse;

/// `n` as the unsigned type `U`, or `None` when it does not fit.
fn narrow<U: TryFrom<u128>>(n: u128) -> Option<U> {
    U::try_from(n).ok()
}

macro_rules! int_keys {
    ($($t:ident => $u:ident),* $(,)?) => {$(
        const _: () = {
            /// The largest key value: `MAX` of the unsigned type.
            const MAX: u128 = u128::MAX >> (u128::BITS - <$u>::BITS);
            const WIDTH: usize = decimal_width(MAX);
            const FORWARD: &KeyFormat =
                &KeyFormat { name: stringify!($t), unit: "digits", range: EncodedRange::AtMost(MAX) };
            const REVERSE: &KeyFormat = &KeyFormat { name: concat!("reverse ", stringify!($t)), ..*FORWARD };
            /// `MIN` read as the unsigned type: XOR with it flips the sign bit of a signed value, and changes
            /// nothing for an unsigned one.
            const SIGN: $u = <$u>::from_ne_bytes(<$t>::MIN.to_ne_bytes());

            /// The value as its unsigned type, in the same order.
            fn ordered(value: $t) -> $u {
                <$u>::from_ne_bytes(value.to_ne_bytes()) ^ SIGN
            }

            fn from_ordered(bits: $u) -> $t {
                <$t>::from_ne_bytes((bits ^ SIGN).to_ne_bytes())
            }

            fn parse(key: &str, format: &'static KeyFormat) -> Result<$u, KeyDecodeError> {
                narrow(parse_fixed(key, WIDTH, format)?).ok_or_else(|| out_of_range(format, key))
            }

            impl private::Sealed for $t {}
            impl private::Sealed for Reverse<$t> {}

            impl SortableKey for $t {
                fn to_key_string(&self) -> String {
                    padded(ordered(*self), WIDTH)
                }

                fn from_key_str(key: &str) -> Result<Self, KeyDecodeError> {
                    parse(key, FORWARD).map(from_ordered)
                }
            }

            impl SortableKey for Reverse<$t> {
                fn to_key_string(&self) -> String {
                    padded(<$u>::MAX - ordered(self.0), WIDTH)
                }

                fn from_key_str(key: &str) -> Result<Self, KeyDecodeError> {
                    parse(key, REVERSE).map(|bits| Reverse(from_ordered(<$u>::MAX - bits)))
                }
            }
        };
    )*};
}

int_keys! {
    u8 => u8, u16 => u16, u32 => u32, u64 => u64, u128 => u128,
    i8 => u8, i16 => u16, i32 => u32, i64 => u64, i128 => u128,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::error::KeyDecodeErrorKind;
    use crate::key::service_order;
    use crate::{KeyKind, PartitionKey, RowKey};
    use proptest::prelude::*;

    #[test]
    fn boundaries_and_widths() {
        assert_eq!(u8::MIN.to_key_string(), "000");
        assert_eq!(u8::MAX.to_key_string(), "255");
        assert_eq!(i8::MIN.to_key_string(), "000");
        assert_eq!((-1i8).to_key_string(), "127");
        assert_eq!(0i8.to_key_string(), "128");
        assert_eq!(i8::MAX.to_key_string(), "255");
        assert_eq!(0u32.to_key_string(), "0000000000");
        assert_eq!(u64::MAX.to_key_string(), u64::MAX.to_string());
        assert_eq!(i64::MIN.to_key_string(), "00000000000000000000");
        assert_eq!(0i64.to_key_string(), "09223372036854775808");
        assert_eq!(i64::MAX.to_key_string(), u64::MAX.to_string());
        assert_eq!(u128::MAX.to_key_string(), u128::MAX.to_string());
        assert_eq!(i128::MIN.to_key_string(), "0".repeat(39));
        assert_eq!(Reverse(u8::MAX).to_key_string(), "000");
        assert_eq!(Reverse(i8::MIN).to_key_string(), "255");
        assert_eq!(Reverse(0i16).to_key_string(), "32767");
        assert_eq!(Reverse(0u128).to_key_string(), u128::MAX.to_string());
    }

    #[test]
    fn decode_errors() -> Result<(), crate::KeyError> {
        let err = u8::from_key_str("256").unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::OutOfRange);
        assert_eq!(err.to_string(), "invalid u8 key `256`: must be at most 255");
        let err = Reverse::<i32>::from_key_str("4294967296").unwrap_err();
        assert_eq!(err.to_string(), "invalid reverse i32 key `4294967296`: must be at most 4294967295");
        let err = u128::from_key_str(&"9".repeat(39)).unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::OutOfRange);
        let err = i64::from_key_str("-1").unwrap_err();
        assert_eq!(err.to_string(), "invalid i64 key `-1`: must be 20 digits, found 2");
        let err = u16::from_key_str("0001 ").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid u16 key `0001 `: character U+0020 at index 4 is not allowed; expected a digit"
        );
        // Arabic-Indic digits are not ASCII digits; lengths count characters, indexes count bytes.
        let err = u16::from_key_str("١٢٣").unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::Length { expected: 5, found: 3 });
        let err = u16::from_key_str("1١٢").unwrap_err(); // 5 bytes
        assert_eq!(err.kind(), &KeyDecodeErrorKind::UnexpectedChar { ch: '١', index: 1, expected: "a digit" });
        let err = u32::from_key(&PartitionKey::new("x")?).unwrap_err();
        assert_eq!(err.key_kind(), Some(KeyKind::Partition));
        assert_eq!(err.to_string(), "invalid u32 partition key `x`: must be 10 digits, found 1");
        Ok(())
    }

    macro_rules! int_properties {
        ($($name:ident: $t:ty),* $(,)?) => {$(
            proptest! {
                #[test]
                fn $name(a: $t, b: $t) {
                    let (ka, kb) = (a.to_key_string(), b.to_key_string());
                    prop_assert_eq!(a.cmp(&b), ka.cmp(&kb));
                    prop_assert_eq!(a.cmp(&b), service_order(&ka, &kb));
                    prop_assert_eq!(ka.len(), <$t>::MAX.to_key_string().len());
                    prop_assert_eq!(<$t>::from_key_str(&ka).unwrap(), a);
                    let (ra, rb) = (Reverse(a).to_key_string(), Reverse(b).to_key_string());
                    prop_assert_eq!(a.cmp(&b), rb.cmp(&ra));
                    prop_assert_eq!(Reverse::<$t>::from_key_str(&ra).unwrap(), Reverse(a));
                    let row: RowKey = a.to_key();
                    prop_assert_eq!(<$t>::from_key(&row).unwrap(), a);
                }
            }
        )*};
    }

    int_properties! {
        u8_keys: u8, u16_keys: u16, u32_keys: u32, u64_keys: u64, u128_keys: u128,
        i8_keys: i8, i16_keys: i16, i32_keys: i32, i64_keys: i64, i128_keys: i128,
    }

    proptest! {
        #[test]
        fn decoding_never_panics_and_is_canonical(s in "[0-9]{1,40}|\\PC{0,24}") {
            if let Ok(v) = i64::from_key_str(&s) {
                prop_assert_eq!(v.to_key_string(), s.clone());
            }
            if let Ok(v) = u8::from_key_str(&s) {
                prop_assert_eq!(v.to_key_string(), s.clone());
            }
            if let Ok(v) = Reverse::<u128>::from_key_str(&s) {
                prop_assert_eq!(v.to_key_string(), s);
            }
        }

        #[test]
        fn every_width_digit_string_decodes_or_is_out_of_range(s in "[0-9]{3}") {
            match u8::from_key_str(&s) {
                Ok(v) => prop_assert_eq!(u32::from(v), s.parse::<u32>().unwrap()),
                Err(e) => {
                    prop_assert_eq!(e.kind(), &KeyDecodeErrorKind::OutOfRange);
                    prop_assert!(s.parse::<u32>().unwrap() > 255);
                }
            }
        }
    }
}
