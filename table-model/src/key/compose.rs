//! Composite keys: several parts joined into one key, escaped so that any text can be a part, and split back
//! exactly. The format and its order guarantees are documented on [`CompositeKey`].

use super::error::{EncodedRange, KeyDecodeError, KeyDecodeErrorKind, KeyError, KeyFormat};
use super::sortable::{unexpected_char, SortableKey};
use super::Key;
use crate::{PartitionKey, RowKey};
use std::ops::Range;
use table_model_rules::{key, KeyKind};

/// Joins the parts of a composite key: a space, which sorts before every other character a key may hold.
///
/// ```
/// use table_model::key::{CompositeKey, COMPOSITE_SEPARATOR};
/// let key = CompositeKey::new().push("a").push("b");
/// assert_eq!(key.as_str(), format!("a{COMPOSITE_SEPARATOR}b"));
/// ```
pub const COMPOSITE_SEPARATOR: char = ' ';

/// Starts an escape in a part of a composite key: `~` followed by the two uppercase hexadecimal digits of the
/// character.
///
/// ```
/// use table_model::key::{split_composite, CompositeKey, COMPOSITE_ESCAPE};
/// let key = CompositeKey::new().push("100%~done");
/// assert_eq!(key.as_str(), format!("100%{COMPOSITE_ESCAPE}7Edone"));
/// assert_eq!(split_composite(key.as_str())?, ["100%~done"]);
/// # Ok::<(), table_model::KeyDecodeError>(())
/// ```
pub const COMPOSITE_ESCAPE: char = '~';

/// The character after the separator: an exclusive upper bound for "the separator and anything after it".
const AFTER_SEPARATOR: char = '!';

const COMPOSITE: &KeyFormat = &KeyFormat { name: "composite", unit: "characters", range: EncodedRange::Any };

/// Whether `ch` may not appear in a key (the rule lives in `table_model_rules::key`).
fn is_forbidden(ch: char) -> bool {
    let mut buf = [0u8; 4];
    key::check(KeyKind::Row, ch.encode_utf8(&mut buf)).is_err()
}

/// `ESCAPED_ASCII[b]`: whether the ASCII character `b` is escaped in a part, computed from the key rule.
const ESCAPED_ASCII: [bool; 128] = {
    let mut table = [false; 128];
    let mut b = 0;
    while b < 128 {
        let byte = [b as u8];
        let forbidden = match core::str::from_utf8(&byte) {
            Ok(s) => key::check(KeyKind::Row, s).is_err(),
            Err(_) => true,
        };
        table[b] = forbidden || b == COMPOSITE_SEPARATOR as usize || b == COMPOSITE_ESCAPE as usize;
        b += 1;
    }
    table
};

fn needs_escape(ch: char) -> bool {
    match ESCAPED_ASCII.get(ch as usize) {
        Some(&escaped) => escaped,
        None => is_forbidden(ch),
    }
}

fn push_escaped(out: &mut String, part: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.reserve(part.len());
    let mut plain_from = 0;
    for (index, ch) in part.char_indices().filter(|&(_, ch)| needs_escape(ch)) {
        out.push_str(&part[plain_from..index]);
        // Every character that needs escaping is below U+0100 (checked by the unit tests).
        let code = ch as usize;
        out.push(COMPOSITE_ESCAPE);
        out.push(char::from(HEX[(code >> 4) & 0xF]));
        out.push(char::from(HEX[code & 0xF]));
        plain_from = index + ch.len_utf8();
    }
    out.push_str(&part[plain_from..]);
}

/// A key built from several parts, each escaped so that any text can be a part and the key stays valid;
/// [`split_composite`] takes it apart again.
///
/// # Format
/// Parts are joined with [`COMPOSITE_SEPARATOR`], a space. Inside a part, the space, [`COMPOSITE_ESCAPE`]
/// (`~`) and every character a key may not hold (`/ \ # ?`, U+0000 to U+001F, U+007F to U+009F; `docs/rules.md`
/// §2.1) are written as `~` and the two uppercase hexadecimal digits of the character: `/` is `~2F`, a
/// space `~20`, `~` itself `~7E`, a tab `~09`. Every character to escape is below U+0100, so two digits always
/// suffice. Every other character is kept as it is, so the key stays readable: `["tenant-7", "user/7"]` is
/// `tenant-7 user~2F7`.
///
/// Splitting accepts exactly what joining writes (uppercase digits, only characters that need escaping), so
/// a key splits into one list of parts and that list joins back into the same key.
///
/// # Order
/// - The parts of a key sort first by the first part, then by the second, and so on, as a tuple would,
///   *when no part contains a character that is escaped* (a space, `~` or a forbidden character). The space
///   sorts before every other character a key may hold, so a part that is a prefix of another sorts first:
///   `["a", "z"]` before `["ab", "c"]`, as `"a" < "ab"`. A list of parts sorts before every longer list that
///   starts with it.
/// - With escaped characters the order is still fixed, but an escaped character sorts as `~` does.
/// - Always, whatever the parts: every key that starts with the same parts and has more lies in one range of
///   keys, [`prefix_range`](CompositeKey::prefix_range), usable in a range query.
///
/// A key with no parts and a key of one empty part are both the empty string; it splits into one empty part.
///
/// ```
/// use table_model::key::{split_composite, CompositeKey};
/// use table_model::RowKey;
///
/// let key: RowKey = CompositeKey::new().push("tenant-7").push("user/7").into_row_key()?;
/// assert_eq!(key, "tenant-7 user~2F7");
/// assert_eq!(split_composite(&key)?, ["tenant-7", "user/7"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct CompositeKey {
    key: String,
    parts: usize,
}

impl CompositeKey {
    /// A key with no parts yet.
    ///
    /// ```
    /// use table_model::key::CompositeKey;
    /// assert_eq!(CompositeKey::new().as_str(), "");
    /// ```
    pub fn new() -> Self {
        CompositeKey::default()
    }

    /// A key of these parts, in order.
    ///
    /// ```
    /// use table_model::key::CompositeKey;
    /// let key = CompositeKey::from_parts(["a b", "c"]);
    /// assert_eq!(key.as_str(), "a~20b c");
    /// ```
    pub fn from_parts<I>(parts: I) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        parts.into_iter().fold(CompositeKey::new(), CompositeKey::push)
    }

    /// Appends a part, escaping the characters that need it.
    ///
    /// ```
    /// use table_model::key::CompositeKey;
    /// let key = CompositeKey::new().push("orders").push("2024#05");
    /// assert_eq!(key.as_str(), "orders 2024~2305");
    /// ```
    #[must_use]
    pub fn push(mut self, part: impl AsRef<str>) -> Self {
        if self.parts > 0 {
            self.key.push(COMPOSITE_SEPARATOR);
        }
        push_escaped(&mut self.key, part.as_ref());
        self.parts += 1;
        self
    }

    /// Appends the [`SortableKey`] string of a value as a part: fixed-width numbers, instants and UUIDs keep
    /// their order inside the composite key.
    ///
    /// ```
    /// use table_model::key::CompositeKey;
    /// let key = CompositeKey::new().push("invoice").push_value(&42u32);
    /// assert_eq!(key.as_str(), "invoice 0000000042");
    /// ```
    #[must_use]
    pub fn push_value<T: SortableKey>(self, value: &T) -> Self {
        self.push(value.to_key_string())
    }

    /// The number of parts pushed so far.
    ///
    /// ```
    /// use table_model::key::CompositeKey;
    /// assert_eq!(CompositeKey::from_parts(["a", "", "c"]).part_count(), 3);
    /// ```
    pub fn part_count(&self) -> usize {
        self.parts
    }

    /// The key as built so far.
    ///
    /// ```
    /// use table_model::key::CompositeKey;
    /// assert_eq!(CompositeKey::from_parts(["a", "b"]).as_str(), "a b");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.key
    }

    /// The key as a `PartitionKey` or `RowKey`, whichever is asked for.
    ///
    /// ```
    /// use table_model::key::CompositeKey;
    /// use table_model::PartitionKey;
    /// let key: PartitionKey = CompositeKey::from_parts(["eu", "west"]).into_key()?;
    /// assert_eq!(key, "eu west");
    /// # Ok::<(), table_model::KeyError>(())
    /// ```
    ///
    /// # Errors
    /// [`KeyError`] when the key is longer than 512 UTF-16 code units; escaping makes every character valid.
    pub fn into_key<K: Key>(self) -> Result<K, KeyError> {
        K::try_from(self.key)
    }

    /// The key as a `RowKey`.
    ///
    /// ```
    /// use table_model::key::CompositeKey;
    /// let err = CompositeKey::new().push("x".repeat(300)).push("y".repeat(300)).into_row_key().unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     format!("invalid row key \"{}\"...: must be at most 512 UTF-16 code units, found 601", "x".repeat(64))
    /// );
    /// ```
    ///
    /// # Errors
    /// [`KeyError`] when the key is longer than 512 UTF-16 code units.
    pub fn into_row_key(self) -> Result<RowKey, KeyError> {
        self.into_key()
    }

    /// The key as a `PartitionKey`.
    ///
    /// ```
    /// use table_model::key::CompositeKey;
    /// let key = CompositeKey::from_parts(["tenant", "7"]).into_partition_key()?;
    /// assert_eq!(key, "tenant 7");
    /// # Ok::<(), table_model::KeyError>(())
    /// ```
    ///
    /// # Errors
    /// [`KeyError`] when the key is longer than 512 UTF-16 code units.
    pub fn into_partition_key(self) -> Result<PartitionKey, KeyError> {
        self.into_key()
    }

    /// The range of keys, `start` included and `end` excluded, that holds exactly the composite keys starting
    /// with these parts and having at least one more, whatever the parts contain: a key `k` is in it when it
    /// starts with this key and a separator.
    ///
    /// ```
    /// use table_model::key::CompositeKey;
    /// use table_model::RowKey;
    /// let tenant = CompositeKey::new().push("tenant/7");
    /// let range = tenant.prefix_range::<RowKey>()?;
    /// assert_eq!((range.start.as_str(), range.end.as_str()), ("tenant~2F7 ", "tenant~2F7!"));
    /// assert!(range.contains(&tenant.clone().push("").into_row_key()?));
    /// assert!(range.contains(&tenant.clone().push("user 9").push("x").into_row_key()?));
    /// assert!(!range.contains(&CompositeKey::new().push("tenant/70").into_row_key()?));
    /// # Ok::<(), table_model::KeyError>(())
    /// ```
    ///
    /// # Errors
    /// [`KeyError`] when a bound is longer than 512 UTF-16 code units.
    pub fn prefix_range<K: Key>(&self) -> Result<Range<K>, KeyError> {
        let bound = |last: char| {
            let mut key = String::with_capacity(self.key.len() + 1);
            key.push_str(&self.key);
            key.push(last);
            K::try_from(key)
        };
        Ok(bound(COMPOSITE_SEPARATOR)?..bound(AFTER_SEPARATOR)?)
    }
}

/// Splits a composite key into its parts, undoing the escapes (see the [format](CompositeKey#format)).
///
/// ```
/// use table_model::key::split_composite;
/// use table_model::KeyDecodeErrorKind;
/// assert_eq!(split_composite("tenant-7 user~2F7")?, ["tenant-7", "user/7"]);
/// assert_eq!(split_composite("")?, [""]);
/// assert_eq!(split_composite("a  b")?, ["a", "", "b"]);
///
/// let err = split_composite("a~2fb").unwrap_err();
/// assert_eq!(err.kind(), &KeyDecodeErrorKind::InvalidEscape { index: 1 });
/// assert_eq!(
///     err.to_string(),
///     "invalid composite key `a~2fb`: escape at index 1 must be `~` and the two uppercase hexadecimal digits \
///      of a character that needs escaping"
/// );
/// # Ok::<(), table_model::KeyDecodeError>(())
/// ```
///
/// # Errors
/// [`KeyDecodeError`] for an escape that is not `~` and the two uppercase hexadecimal digits of a character
/// that needs escaping, or a character that should have been escaped, such as `/`.
pub fn split_composite(key: &str) -> Result<Vec<String>, KeyDecodeError> {
    let bytes = key.as_bytes();
    let mut parts = Vec::new();
    let mut part = String::new();
    // Characters from `plain_from` up to the one being read are copied to the part as they are.
    let mut plain_from = 0;
    let mut chars = key.char_indices();
    while let Some((index, ch)) = chars.next() {
        if !needs_escape(ch) {
            continue;
        }
        part.push_str(&key[plain_from..index]);
        if ch == COMPOSITE_SEPARATOR {
            parts.push(std::mem::take(&mut part));
            plain_from = index + 1;
        } else if ch == COMPOSITE_ESCAPE {
            let escaped = match (bytes.get(index + 1), bytes.get(index + 2)) {
                (Some(&hi), Some(&lo)) => hex_digit(hi).zip(hex_digit(lo)).map(|(hi, lo)| char::from((hi << 4) | lo)),
                _ => None,
            };
            match escaped {
                Some(escaped) if needs_escape(escaped) => part.push(escaped),
                _ => return Err(KeyDecodeError::new(COMPOSITE, key, KeyDecodeErrorKind::InvalidEscape { index })),
            }
            // The two digits are ASCII: skip them.
            chars.next();
            chars.next();
            plain_from = index + 3;
        } else {
            return Err(unexpected_char(
                COMPOSITE,
                key,
                index,
                "it escaped as `~` and two uppercase hexadecimal digits",
            ));
        }
    }
    part.push_str(&key[plain_from..]);
    parts.push(part);
    Ok(parts)
}

/// The value of an uppercase hexadecimal digit.
fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::service_order;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    #[test]
    fn escaped_characters() {
        // Everything that needs escaping fits in two hexadecimal digits: check every character there is.
        let escaped: Vec<char> = (0..=0x10FFFF).filter_map(char::from_u32).filter(|&c| needs_escape(c)).collect();
        assert!(escaped.iter().all(|&c| (c as u32) < 0x100));
        let expected: Vec<char> =
            ('\u{0}'..='\u{20}').chain(['#', '/', '?', '\\', '~']).chain('\u{7F}'..='\u{9F}').collect();
        let mut sorted = escaped.clone();
        sorted.sort_unstable();
        let mut expected_sorted = expected;
        expected_sorted.sort_unstable();
        assert_eq!(sorted, expected_sorted);
        for c in escaped {
            let key = CompositeKey::new().push(c.to_string());
            assert_eq!(key.as_str(), format!("~{:02X}", c as u32));
            assert!(RowKey::new(key.as_str()).is_ok());
            assert_eq!(split_composite(key.as_str()).unwrap(), [c.to_string()]);
        }
    }

    #[test]
    fn separator_sorts_first() {
        assert!(
            !is_forbidden(COMPOSITE_SEPARATOR) && !is_forbidden(AFTER_SEPARATOR) && !is_forbidden(COMPOSITE_ESCAPE)
        );
        assert_eq!(AFTER_SEPARATOR as u32, COMPOSITE_SEPARATOR as u32 + 1);
        // Every character below the separator is forbidden, so an unescaped part never holds one.
        assert!(('\u{0}'..COMPOSITE_SEPARATOR).all(is_forbidden));
    }

    #[test]
    fn split_is_strict() {
        let kind = |s: &str| split_composite(s).unwrap_err().kind().clone();
        assert_eq!(kind("~"), KeyDecodeErrorKind::InvalidEscape { index: 0 });
        assert_eq!(kind("ab~2"), KeyDecodeErrorKind::InvalidEscape { index: 2 });
        assert_eq!(kind("~7e"), KeyDecodeErrorKind::InvalidEscape { index: 0 });
        assert_eq!(kind("x~41"), KeyDecodeErrorKind::InvalidEscape { index: 1 }); // `A` needs no escape
        assert_eq!(kind("é~é"), KeyDecodeErrorKind::InvalidEscape { index: 2 });
        assert_eq!(
            kind("a/b"),
            KeyDecodeErrorKind::UnexpectedChar {
                ch: '/',
                index: 1,
                expected: "it escaped as `~` and two uppercase hexadecimal digits"
            }
        );
        assert_eq!(
            split_composite("a\tb").unwrap_err().to_string(),
            "invalid composite key `a\tb`: character U+0009 at index 1 is not allowed; expected it escaped as `~` \
             and two uppercase hexadecimal digits"
        );
        assert_eq!(split_composite("~20~7E~2F").unwrap(), [" ~/"]);
        assert_eq!(split_composite(" ").unwrap(), ["", ""]);
    }

    #[test]
    fn length_is_checked_on_the_escaped_key() {
        // 170 slashes are 510 characters escaped: fine; one more part of one character makes 512; then 513.
        let base = CompositeKey::new().push("/".repeat(170));
        assert_eq!(base.as_str().len(), 510);
        assert!(base.clone().push("").into_row_key().is_ok()); // 511
        assert!(base.clone().push("x").into_row_key().is_ok()); // 512
        let err = base.push("xy").into_partition_key().unwrap_err();
        assert_eq!(err.kind(), table_model_rules::KeyErrorKind::TooLong { utf16_len: 513 });
        assert_eq!(err.key(), KeyKind::Partition);
    }

    fn any_part() -> impl Strategy<Value = String> {
        // Any Unicode, with the characters that need escaping made common.
        proptest::collection::vec(
            prop_oneof![any::<char>(), "[ ~/\\\\#?\t\u{7F}\u{85}\u{9F}a]".prop_map(|s| s.chars().next().unwrap())],
            0..12,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    fn plain_part() -> impl Strategy<Value = String> {
        // No character that is escaped: the order guarantee applies.
        "[!-~&&[^#/?\\\\~]]{0,4}|[!a\u{E9}\u{FF61}\u{1F600}]{0,3}"
    }

    proptest! {
        #[test]
        fn round_trip_any_parts(parts in proptest::collection::vec(any_part(), 1..5)) {
            let key = CompositeKey::from_parts(&parts);
            prop_assert_eq!(key.part_count(), parts.len());
            prop_assert_eq!(split_composite(key.as_str()).unwrap(), parts);
            match RowKey::new(key.as_str()) {
                Ok(row) => prop_assert_eq!(row, key.as_str()),
                Err(e) => prop_assert_eq!(
                    e.kind(),
                    table_model_rules::KeyErrorKind::TooLong { utf16_len: key.as_str().encode_utf16().count() }
                ),
            }
        }

        #[test]
        fn split_is_canonical(s in "[a ~0-9A-F/é]{0,16}|\\PC{0,16}") {
            if let Ok(parts) = split_composite(&s) {
                let joined = CompositeKey::from_parts(&parts);
                prop_assert_eq!(joined.as_str(), s.as_str());
            }
        }

        #[test]
        fn plain_parts_sort_as_tuples(
            a in proptest::collection::vec(plain_part(), 1..4),
            b in proptest::collection::vec(plain_part(), 1..4),
        ) {
            let (ka, kb) = (CompositeKey::from_parts(&a), CompositeKey::from_parts(&b));
            let tuple_order = a.iter().map(|p| p.encode_utf16().collect::<Vec<_>>())
                .cmp(b.iter().map(|p| p.encode_utf16().collect::<Vec<_>>()));
            prop_assert_eq!(service_order(ka.as_str(), kb.as_str()), tuple_order);
        }

        #[test]
        fn prefix_range_holds_exactly_the_extensions(
            prefix in proptest::collection::vec(any_part(), 1..3),
            other in proptest::collection::vec(any_part(), 1..4),
        ) {
            let range = CompositeKey::from_parts(&prefix).prefix_range::<RowKey>().unwrap();
            let key = CompositeKey::from_parts(&other);
            let extends = other.len() > prefix.len() && other[..prefix.len()] == prefix[..];
            let row = RowKey::new(key.as_str()).unwrap();
            prop_assert_eq!(range.contains(&row), extends);
            prop_assert_ne!(service_order(range.start.as_str(), range.end.as_str()), Ordering::Greater);
        }
    }
}
