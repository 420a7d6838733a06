//! PartitionKey and RowKey (`docs/rules.md` §2), and helpers that build keys which sort the way users mean
//! (`docs/rules.md` §6).
//!
//! Keys sort as strings, by UTF-16 code unit, never as numbers. The helpers below return keys that are
//! already valid and whose string order is the order of the values they encode; each has a decoder that reads
//! the key back, or returns a [`KeyDecodeError`](crate::KeyDecodeError) saying what was wrong.
//!
//! - **Time** (.NET ticks of a [`DateTime`](crate::DateTime), 19 digits):
//!
//!   | key | format | order | build / read |
//!   |---|---|---|---|
//!   | chronological | `{ticks:019}` | oldest first | [`chronological`] / [`parse_chronological`] |
//!   | reverse-chronological | `{3155378975999999999 - ticks:019}` | newest first | [`reverse_chronological`] / [`parse_reverse_chronological`] |
//!   | unique chronological | `{ticks:019}-{n:010}` | by instant, then `n` | [`chronological_unique`] / [`parse_chronological_unique`] |
//!   | unique reverse-chronological | `{3155378975999999999 - ticks:019}-{4294967295 - n:010}` | the exact reverse | [`reverse_chronological_unique`] / [`parse_reverse_chronological_unique`] |
//!
//!   `3155378975999999999` is `DateTime.MaxValue.Ticks`; `n` is a `u32` tie-breaker for events in the same
//!   tick ([`next_tie_breaker`] draws one that no other call in the process returns).
//!   [`chronological_range`] and [`reverse_chronological_range`] give the key bounds of a time range.
//!   Each takes any [`IntoDateTime`](crate::IntoDateTime) instant: a [`DateTime`](crate::DateTime) gives the
//!   key itself, a `chrono::DateTime` or a `SystemTime` gives a `Result` (it is checked against the range).
//! - **Numbers, instants and UUIDs** as key fields: [`SortableKey`], for the integer types, `DateTime`,
//!   `Uuid` and [`Reverse`](std::cmp::Reverse) of each. `#[derive(TableEntity)]` uses it for key fields.
//! - **Several parts** in one key: [`CompositeKey`] and [`split_composite`].
//!
//! Every helper is generic over [`Key`], so the same call builds a [`PartitionKey`] or a [`RowKey`].
//!
//! Layer: model.

use crate::validated::validated_string;
use error::KeyError;
use std::borrow::Cow;
use table_model_rules::{key, KeyKind};

mod compose;
pub(crate) mod error;
mod int;
mod sortable;
mod time;

pub use compose::{split_composite, CompositeKey, COMPOSITE_ESCAPE, COMPOSITE_SEPARATOR};
pub use sortable::SortableKey;
pub use time::{
    chronological, chronological_range, chronological_unique, next_tie_breaker, parse_chronological,
    parse_chronological_unique, parse_reverse_chronological, parse_reverse_chronological_unique, reverse_chronological,
    reverse_chronological_range, reverse_chronological_unique,
};
pub(crate) use time::{parse_unique_key_str, tie_breaker_digits, unique_key, TIE_BREAKER_OFFSET};

macro_rules! key_type {
    ($(#[$doc:meta])* $ty:ident, $kind:expr, $example:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash)]
        pub struct $ty(Cow<'static, str>);

        impl Ord for $ty {
            /// The service's order: ordinal by UTF-16 code unit (see [`service_order`]).
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                service_order(&self.0, &other.0)
            }
        }

        impl PartialOrd for $ty {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        impl $ty {
            /// Validates a key value.
            ///
            /// # Errors
            /// [`KeyError`] for a forbidden character (with its byte index) or a length over 512 UTF-16 units.
            pub fn new(value: impl Into<String>) -> Result<Self, KeyError> {
                value.into().try_into()
            }

            /// A key from a literal, checked at compile time when used in a `const`.
            ///
            /// # Panics
            /// When the literal is not a valid key (a compile error in `const` context).
            pub const fn from_static(value: &'static str) -> Self {
                match key::check($kind, value) {
                    Ok(()) => $ty(Cow::Borrowed(value)),
                    Err(e) => panic!("{}", e.rule()),
                }
            }

            /// The empty key, which the service accepts.
            pub const fn empty() -> Self {
                $ty(Cow::Borrowed(""))
            }

            fn validate(value: &str) -> Result<(), key::KeyError> {
                key::check($kind, value)
            }

            /// A key the caller has already checked with `key::check` (the body writer, which checks both keys
            /// of every body it writes).
            #[cfg(feature = "http")]
            pub(crate) fn from_checked(value: String) -> Self {
                debug_assert!(key::check($kind, &value).is_ok());
                $ty(Cow::Owned(value))
            }
        }

        impl Default for $ty {
            fn default() -> Self {
                $ty::empty()
            }
        }

        validated_string!($ty, KeyError, $example);
    };
}

key_type!(
    /// A validated `PartitionKey`: at most 512 UTF-16 code units, none of `/ \ # ?` or the control characters
    /// U+0000 to U+001F and U+007F to U+009F. The empty key is valid.
    ///
    /// ```
    /// use table_model::PartitionKey;
    /// const TENANT: PartitionKey = PartitionKey::from_static("tenant-7");
    /// assert_eq!(TENANT, "tenant-7");
    /// assert_eq!(
    ///     PartitionKey::new("a/b").unwrap_err().to_string(),
    ///     "invalid partition key \"a/b\": character `/` at index 1 is not allowed"
    /// );
    /// ```
    ///
    /// ```compile_fail
    /// const BAD: table_model::PartitionKey = table_model::PartitionKey::from_static("a#b");
    /// ```
    ///
    /// ```should_panic
    /// let _ = table_model::PartitionKey::from_static("tab\there");
    /// ```
    PartitionKey,
    KeyKind::Partition,
    "partition key"
);

key_type!(
    /// A validated `RowKey`: at most 512 UTF-16 code units, none of `/ \ # ?` or the control characters
    /// U+0000 to U+001F and U+007F to U+009F. The empty key is valid.
    ///
    /// ```
    /// use table_model::RowKey;
    /// let key = RowKey::new("O'Brien + 50%")?;
    /// assert_eq!(key.as_str(), "O'Brien + 50%");
    /// assert_eq!(
    ///     RowKey::new("x".repeat(513)).unwrap_err().to_string(),
    ///     format!("invalid row key \"{}\"...: must be at most 512 UTF-16 code units, found 513", "x".repeat(64))
    /// );
    /// # Ok::<(), table_model::KeyError>(())
    /// ```
    ///
    /// ```compile_fail
    /// const BAD: table_model::RowKey = table_model::RowKey::from_static("what?");
    /// ```
    ///
    /// ```should_panic
    /// let _ = table_model::RowKey::from_static("a\\b");
    /// ```
    RowKey,
    KeyKind::Row,
    "row key"
);

/// A `PartitionKey` or a `RowKey`: the key helpers are generic over it, so one function builds either.
///
/// The type to build is usually inferred from where the key goes. This trait is sealed: only
/// [`PartitionKey`] and [`RowKey`] implement it.
///
/// ```
/// use table_model::key::{self, Key};
/// use table_model::{DateTime, KeyKind, PartitionKey, RowKey};
///
/// fn describe<K: Key>(key: &K) -> String {
///     format!("{} = {}", K::KIND.property_name(), key.as_ref())
/// }
/// let row: RowKey = key::chronological(DateTime::UNIX_EPOCH);
/// let partition: PartitionKey = key::chronological(DateTime::UNIX_EPOCH);
/// assert_eq!(describe(&row), "RowKey = 0621355968000000000");
/// assert_eq!(describe(&partition), "PartitionKey = 0621355968000000000");
/// ```
pub trait Key: Sized + AsRef<str> + TryFrom<String, Error = KeyError> + sealed::Sealed {
    /// Which key this is, as error messages and the wire format name it.
    const KIND: KeyKind;
}

impl Key for PartitionKey {
    const KIND: KeyKind = KeyKind::Partition;
}

impl Key for RowKey {
    const KIND: KeyKind = KeyKind::Row;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::PartitionKey {}
    impl Sealed for super::RowKey {}
}

/// Compares two strings the way the service orders keys: ordinal by UTF-16 code unit.
///
/// This differs from `str`'s order (by UTF-8 byte, that is by scalar value) only between a character in
/// U+E000..U+FFFF and one above U+FFFF: UTF-16 puts the surrogate pair of the latter first. Because key
/// order follows the service, `PartitionKey` and `RowKey` do not implement `Borrow<str>`.
///
/// ```
/// use std::cmp::Ordering;
/// use table_model::key::service_order;
/// assert_eq!(service_order("a", "b"), Ordering::Less);
/// assert_eq!(service_order("\u{FF61}", "\u{1F600}"), Ordering::Greater); // UTF-8 order says Less
/// ```
pub fn service_order(a: &str, b: &str) -> std::cmp::Ordering {
    let prefix = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // Step back to a char boundary so both tails start with whole characters.
    let mut start = prefix;
    while !a.is_char_boundary(start) || !b.is_char_boundary(start) {
        start -= 1;
    }
    a[start..].encode_utf16().cmp(b[start..].encode_utf16())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_validate_and_name_the_key() {
        assert_eq!(PartitionKey::new("").unwrap(), "");
        assert_eq!(RowKey::default(), "");
        let err = RowKey::try_from("a?b").unwrap_err();
        assert_eq!(err.key(), KeyKind::Row);
        let err = PartitionKey::try_from(String::from("a?b")).unwrap_err();
        assert_eq!(err.key(), KeyKind::Partition);
        assert!("#".parse::<RowKey>().is_err());
    }

    #[test]
    fn keys_order_as_strings() {
        let mut keys: Vec<RowKey> = ["10", "2", "1", "11"].iter().map(|k| RowKey::new(*k).unwrap()).collect();
        keys.sort();
        let sorted: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
        assert_eq!(sorted, ["1", "10", "11", "2"]);
    }

    #[test]
    fn order_is_utf16_order() {
        let samples = ["", "a", "ab", "é", "\u{FFFF}", "\u{E000}", "😀", "a😀", "a\u{FF61}", "\u{10000}", "z"];
        for a in samples {
            for b in samples {
                let expected = a.encode_utf16().cmp(b.encode_utf16());
                assert_eq!(service_order(a, b), expected, "{a:?} {b:?}");
                assert_eq!(RowKey::new(a).unwrap().cmp(&RowKey::new(b).unwrap()), expected);
            }
        }
    }
}
