//! [`SortableKey`]: values whose key string sorts the way the values do, and the fixed-width decimal and
//! hexadecimal encodings the integer, time and UUID keys share.

use super::error::{EncodedRange, KeyDecodeError, KeyDecodeErrorKind, KeyFormat};
use super::Key;
use std::cmp::Reverse;
use uuid::Uuid;

/// A value that is written as a key whose string order is the value's order, and read back exactly.
///
/// Keys sort as strings, never as numbers (`docs/rules.md` §2.3 and §6), so every implementation writes a
/// fixed-width string of ASCII digits, lowercase hexadecimal digits and `-`: string order, the service's
/// UTF-16 order ([`service_order`](crate::key::service_order)) and value order agree, and the key is always
/// valid. [`std::cmp::Reverse`] of a value writes a key that sorts the other way, newest or largest first.
///
/// | type | key | width |
/// |---|---|---|
/// | `u8`, `u16`, `u32`, `u64`, `u128` | the value, zero-padded | digits of `MAX`: 3, 5, 10, 20, 39 |
/// | `i8`, `i16`, `i32`, `i64`, `i128` | `value - MIN` (the sign bit flipped), zero-padded | as the unsigned type |
/// | [`DateTime`](crate::DateTime) | .NET ticks, chronological | 19 |
/// | [`Uuid`] | lowercase hyphenated, in byte order | 36 |
/// | `Reverse<T>` for each of those | the complement, so the order is reversed | as `T` |
///
/// `Reverse<DateTime>` is the reverse-chronological key of `docs/rules.md` §6.2,
/// `3155378975999999999 - ticks`. For an unsigned type `Reverse(v)` writes `MAX - v`; for a signed type,
/// `MAX - (v - MIN)` of the unsigned type of the same size; for a UUID, its bitwise complement.
/// `usize` and `isize` are left out on purpose: their width, and so their keys, would depend on the platform.
///
/// `#[derive(TableEntity)]` uses this trait for `#[table(partition_key)]` and `#[table(row_key)]` fields of
/// these types: [`to_key`](SortableKey::to_key) to write the key and [`from_key`](SortableKey::from_key) to
/// read it back. The trait is sealed, which is what lets [`to_key`](SortableKey::to_key) promise a valid key.
///
/// ```
/// use std::cmp::Reverse;
/// use table_model::key::SortableKey;
/// use table_model::{DateTime, RowKey};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert_eq!(7u32.to_key_string(), "0000000007");
/// assert_eq!((-1i8).to_key_string(), "127");
/// assert_eq!(Reverse(7u8).to_key_string(), "248");
///
/// let row: RowKey = 42u64.to_key();
/// assert_eq!(row, "00000000000000000042");
/// assert_eq!(u64::from_key(&row)?, 42);
///
/// // Negative numbers sort before positive ones, as numbers do:
/// let mut keys: Vec<String> = [10i32, -2, 1, -30].iter().map(SortableKey::to_key_string).collect();
/// keys.sort();
/// let values: Vec<i32> = keys.iter().map(|k| i32::from_key_str(k)).collect::<Result<_, _>>()?;
/// assert_eq!(values, [-30, -2, 1, 10]);
///
/// let newest_first: RowKey = Reverse(DateTime::MAX).to_key();
/// assert_eq!(newest_first, "0000000000000000000");
/// # Ok(())
/// # }
/// ```
pub trait SortableKey: Sized + private::Sealed {
    /// The key string: fixed width, ASCII, always a valid `PartitionKey` and `RowKey`.
    ///
    /// ```
    /// use table_model::key::SortableKey;
    /// assert_eq!(u16::MAX.to_key_string(), "65535");
    /// assert_eq!(0u16.to_key_string(), "00000");
    /// ```
    fn to_key_string(&self) -> String;

    /// Reads a key string back. Only the exact form [`to_key_string`](SortableKey::to_key_string) writes is
    /// accepted (no sign, no spaces, no uppercase hexadecimal), so a key maps to one value and back to the
    /// same key.
    ///
    /// ```
    /// use table_model::key::SortableKey;
    /// assert_eq!(i16::from_key_str("32768")?, 0);
    /// assert_eq!(
    ///     i16::from_key_str("+1").unwrap_err().to_string(),
    ///     "invalid i16 key `+1`: must be 5 digits, found 2"
    /// );
    /// # Ok::<(), table_model::KeyDecodeError>(())
    /// ```
    ///
    /// # Errors
    /// [`KeyDecodeError`] for a wrong length, an unexpected character (with its byte index) or a value out of
    /// the type's range.
    fn from_key_str(key: &str) -> Result<Self, KeyDecodeError>;

    /// The value as a `PartitionKey` or a `RowKey`, whichever is asked for.
    ///
    /// ```
    /// use table_model::key::SortableKey;
    /// use table_model::PartitionKey;
    /// let partition: PartitionKey = 2024u16.to_key();
    /// assert_eq!(partition, "02024");
    /// ```
    fn to_key<K: Key>(&self) -> K {
        valid_key(self.to_key_string())
    }

    /// Reads a `PartitionKey` or a `RowKey` back; the error names which key it was.
    ///
    /// ```
    /// use table_model::key::SortableKey;
    /// use table_model::RowKey;
    /// let err = u32::from_key(&RowKey::new("12a")?).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid u32 row key `12a`: must be 10 digits, found 3");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_key_str`](SortableKey::from_key_str).
    fn from_key<K: Key>(key: &K) -> Result<Self, KeyDecodeError> {
        Self::from_key_str(key.as_ref()).map_err(|e| e.in_key(K::KIND))
    }
}

pub(super) mod private {
    /// Seals [`SortableKey`](super::SortableKey): only this crate's encodings promise valid, ordered keys.
    pub trait Sealed {}
}

/// A key the helpers wrote: ASCII digits, lowercase hexadecimal digits, `-` only, at most 39 characters. It
/// still goes through the key's validation, which the unit tests of every helper exercise.
pub(super) fn valid_key<K: Key>(key: String) -> K {
    match K::try_from(key) {
        Ok(key) => key,
        Err(e) => unreachable!("a key helper wrote an invalid key: {e}"),
    }
}

/// The number of decimal digits of `max`: the width every value up to `max` is padded to.
pub(super) const fn decimal_width(max: u128) -> usize {
    let mut width = 1;
    let mut rest = max / 10;
    while rest > 0 {
        width += 1;
        rest /= 10;
    }
    width
}

/// `"00"`, `"01"`, ... `"99"`, back to back: two digits per division.
const DIGIT_PAIRS: [u8; 200] = {
    let mut pairs = [0u8; 200];
    let mut n = 0;
    while n < 100 {
        pairs[2 * n] = b'0' + (n / 10) as u8;
        pairs[2 * n + 1] = b'0' + (n % 10) as u8;
        n += 1;
    }
    pairs
};

/// Appends `value` as exactly `width` decimal digits, zero-padded on the left. The caller guarantees that the
/// value has at most `width` digits.
pub(super) fn push_padded(out: &mut String, value: impl Into<u128>, width: usize) {
    const MAX_WIDTH: usize = decimal_width(u128::MAX);
    let mut buf = [b'0'; MAX_WIDTH];
    let mut end = MAX_WIDTH;
    let mut wide: u128 = value.into();
    // u128 division is a library call: divide in u64 as soon as the value fits.
    while wide > u128::from(u64::MAX) {
        end -= 1;
        buf[end] = b'0' + (wide % 10) as u8;
        wide /= 10;
    }
    let mut narrow = wide as u64;
    while narrow >= 10 {
        let pair = (narrow % 100) as usize * 2;
        narrow /= 100;
        end -= 2;
        buf[end..end + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if narrow > 0 {
        end -= 1;
        buf[end] = b'0' + narrow as u8;
    }
    debug_assert!(MAX_WIDTH - end <= width, "value wider than {width} digits");
    out.push_str(std::str::from_utf8(&buf[MAX_WIDTH - width..]).expect("ASCII digits"));
}

/// `value` as exactly `width` decimal digits.
pub(super) fn padded(value: impl Into<u128>, width: usize) -> String {
    let mut out = String::with_capacity(width);
    push_padded(&mut out, value, width);
    out
}

/// The error for a key whose length is not `expected` bytes; it reports the length in characters.
pub(super) fn length_error(format: &'static KeyFormat, key: &str, expected: usize) -> KeyDecodeError {
    KeyDecodeError::new(format, key, KeyDecodeErrorKind::Length { expected, found: key.chars().count() })
}

/// The error for the character at byte `index` (a char boundary) of `key`.
pub(super) fn unexpected_char(
    format: &'static KeyFormat,
    key: &str,
    index: usize,
    expected: &'static str,
) -> KeyDecodeError {
    let ch = key[index..].chars().next().unwrap_or(char::REPLACEMENT_CHARACTER);
    KeyDecodeError::new(format, key, KeyDecodeErrorKind::UnexpectedChar { ch, index, expected })
}

/// The error for a well-formed key that encodes no value of the format.
pub(super) fn out_of_range(format: &'static KeyFormat, key: &str) -> KeyDecodeError {
    KeyDecodeError::new(format, key, KeyDecodeErrorKind::OutOfRange)
}

/// Reads the `width` bytes of `key` from byte `at` as decimal digits. The caller checked that `key` is long
/// enough and that `at` is a char boundary (every byte before it is ASCII).
///
/// A character that is not a digit is reported before a number too large for `u128`.
pub(super) fn parse_digits(
    key: &str,
    at: usize,
    width: usize,
    format: &'static KeyFormat,
) -> Result<u128, KeyDecodeError> {
    /// Any number of this many digits fits in a `u64`.
    const U64_DIGITS: usize = decimal_width(u64::MAX as u128) - 1;
    let digits = &key.as_bytes()[at..at + width];
    if let Some(offset) = digits.iter().position(|b| !b.is_ascii_digit()) {
        return Err(unexpected_char(format, key, at + offset, "a digit"));
    }
    if width <= U64_DIGITS {
        return Ok(u128::from(digits.iter().fold(0u64, |n, &b| n * 10 + u64::from(b - b'0'))));
    }
    digits
        .iter()
        .try_fold(0u128, |n, &b| n.checked_mul(10)?.checked_add(u128::from(b - b'0')))
        .ok_or_else(|| out_of_range(format, key))
}

/// Reads a key of exactly `width` decimal digits.
pub(super) fn parse_fixed(key: &str, width: usize, format: &'static KeyFormat) -> Result<u128, KeyDecodeError> {
    if key.len() != width {
        return Err(length_error(format, key, width));
    }
    parse_digits(key, 0, width, format)
}

const UUID: &KeyFormat = &KeyFormat { name: "uuid", unit: "characters", range: EncodedRange::Any };
const REVERSE_UUID: &KeyFormat = &KeyFormat { name: "reverse uuid", ..*UUID };

/// Reads the lowercase hyphenated form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` as the UUID's 128 bits.
fn parse_uuid(key: &str, format: &'static KeyFormat) -> Result<u128, KeyDecodeError> {
    let bytes = key.as_bytes();
    if bytes.len() != uuid::fmt::Hyphenated::LENGTH {
        return Err(length_error(format, key, uuid::fmt::Hyphenated::LENGTH));
    }
    let mut value = 0u128;
    for (index, &b) in bytes.iter().enumerate() {
        let nibble = match (index, b) {
            (8 | 13 | 18 | 23, b'-') => continue,
            (8 | 13 | 18 | 23, _) => return Err(unexpected_char(format, key, index, "`-`")),
            (_, b'0'..=b'9') => b - b'0',
            (_, b'a'..=b'f') => b - b'a' + 10,
            _ => return Err(unexpected_char(format, key, index, "a lowercase hexadecimal digit")),
        };
        value = (value << 4) | u128::from(nibble);
    }
    Ok(value)
}

impl private::Sealed for Uuid {}
impl private::Sealed for Reverse<Uuid> {}

/// The lowercase hyphenated form, which sorts as the UUID's bytes do (as `Uuid`'s `Ord`).
///
/// ```
/// use table_model::key::SortableKey;
/// use uuid::Uuid;
/// let id = Uuid::from_u128(0x67e5_5044_10b1_426f_9247_bb68_0e5f_e0c8);
/// assert_eq!(id.to_key_string(), "67e55044-10b1-426f-9247-bb680e5fe0c8");
/// assert_eq!(Uuid::from_key_str("67e55044-10b1-426f-9247-bb680e5fe0c8")?, id);
/// assert!(Uuid::from_key_str("67E55044-10B1-426F-9247-BB680E5FE0C8").is_err()); // another key
/// # Ok::<(), table_model::KeyDecodeError>(())
/// ```
impl SortableKey for Uuid {
    fn to_key_string(&self) -> String {
        self.hyphenated().to_string()
    }

    fn from_key_str(key: &str) -> Result<Self, KeyDecodeError> {
        parse_uuid(key, UUID).map(Uuid::from_u128)
    }
}

/// The lowercase hyphenated form of the bitwise complement: time-ordered UUIDs (version 7) come newest first.
///
/// ```
/// use std::cmp::Reverse;
/// use table_model::key::SortableKey;
/// use uuid::Uuid;
/// assert_eq!(Reverse(Uuid::nil()).to_key_string(), "ffffffff-ffff-ffff-ffff-ffffffffffff");
/// assert_eq!(Reverse::<Uuid>::from_key_str("ffffffff-ffff-ffff-ffff-fffffffffffe")?.0, Uuid::from_u128(1));
/// # Ok::<(), table_model::KeyDecodeError>(())
/// ```
impl SortableKey for Reverse<Uuid> {
    fn to_key_string(&self) -> String {
        Uuid::from_u128(!self.0.as_u128()).hyphenated().to_string()
    }

    fn from_key_str(key: &str) -> Result<Self, KeyDecodeError> {
        parse_uuid(key, REVERSE_UUID).map(|bits| Reverse(Uuid::from_u128(!bits)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RowKey;
    use proptest::prelude::*;

    #[test]
    fn widths() {
        assert_eq!(decimal_width(0), 1);
        assert_eq!(decimal_width(9), 1);
        assert_eq!(decimal_width(10), 2);
        assert_eq!(decimal_width(u128::from(u64::MAX)), u64::MAX.to_string().len());
        assert_eq!(decimal_width(u128::MAX), u128::MAX.to_string().len());
    }

    #[test]
    fn padding_matches_std_formatting() {
        for (value, width) in [(0u128, 1), (0, 19), (7, 3), (u128::from(u64::MAX), 20), (u128::MAX, 39)] {
            assert_eq!(padded(value, width), format!("{value:0width$}"));
        }
        assert_eq!(padded(u128::from(u64::MAX) + 1, 39), format!("{:039}", u128::from(u64::MAX) + 1));
        for power in 0..39 {
            let p = 10u128.pow(power);
            for value in [p - 1, p, p + 1, 2 * p - 1] {
                assert_eq!(padded(value, 39), format!("{value:039}"));
            }
        }
    }

    #[test]
    fn digits_errors() {
        let f = UUID;
        assert_eq!(parse_fixed("0123", 4, f).unwrap(), 123);
        assert_eq!(parse_fixed("012", 4, f).unwrap_err().kind(), &KeyDecodeErrorKind::Length { expected: 4, found: 3 });
        // A character is reported before an overflow that comes earlier in the key.
        let big = format!("{}x", "9".repeat(40));
        let err = parse_fixed(&big, 41, f).unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::UnexpectedChar { ch: 'x', index: 40, expected: "a digit" });
        let err = parse_fixed(&"9".repeat(40), 40, f).unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::OutOfRange);
        // Multi-byte characters: the length is counted in characters, the index in bytes.
        let err = parse_fixed("1é3", 4, f).unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::UnexpectedChar { ch: 'é', index: 1, expected: "a digit" });
        let err = parse_fixed("ééé", 4, f).unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::Length { expected: 4, found: 3 });
    }

    #[test]
    fn uuid_keys_are_strict() {
        let id = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let key = id.to_key_string();
        assert_eq!(key, "01234567-89ab-cdef-0123-456789abcdef");
        assert_eq!(Uuid::from_key_str(&key).unwrap(), id);
        let err = Uuid::from_key_str("0123456789abcdef0123456789abcdef").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid uuid key `0123456789abcdef0123456789abcdef`: must be 36 characters, found 32"
        );
        let err = Uuid::from_key_str("01234567_89ab-cdef-0123-456789abcdef").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid uuid key `01234567_89ab-cdef-0123-456789abcdef`: character `_` at index 8 is not allowed; expected `-`"
        );
        let err = Uuid::from_key_str("01234567-89AB-cdef-0123-456789abcdef").unwrap_err();
        assert_eq!(
            err.kind(),
            &KeyDecodeErrorKind::UnexpectedChar { ch: 'A', index: 11, expected: "a lowercase hexadecimal digit" }
        );
        let err = Reverse::<Uuid>::from_key_str("{01234567-89ab-cdef-0123-456789abcd}").unwrap_err();
        assert_eq!(err.format(), "reverse uuid");
    }

    fn uuid() -> impl Strategy<Value = Uuid> {
        any::<u128>().prop_map(Uuid::from_u128)
    }

    proptest! {
        #[test]
        fn uuid_keys_sort_as_uuids(a in uuid(), b in uuid()) {
            prop_assert_eq!(a.cmp(&b), a.to_key_string().cmp(&b.to_key_string()));
            prop_assert_eq!(a.cmp(&b), Reverse(b).to_key_string().cmp(&Reverse(a).to_key_string()));
            prop_assert_eq!(Uuid::from_key_str(&a.to_key_string()).unwrap(), a);
            prop_assert_eq!(Reverse::<Uuid>::from_key_str(&Reverse(a).to_key_string()).unwrap(), Reverse(a));
            prop_assert!(RowKey::new(a.to_key_string()).is_ok());
        }

        #[test]
        fn uuid_decoding_never_panics_and_is_canonical(s in "[0-9a-fA-F-]{30,40}|\\PC{0,40}") {
            if let Ok(id) = Uuid::from_key_str(&s) {
                prop_assert_eq!(id.to_key_string(), s);
            }
        }
    }
}
