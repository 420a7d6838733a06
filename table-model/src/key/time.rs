//! Time keys (`docs/rules.md` §6.2): .NET ticks as 19 digits, oldest first or newest first, with an optional
//! tie-breaker for events in the same tick, and the key bounds of a time range. The formats are listed in the
//! docs of the `key` module.
//!
//! `ticks` are the 100 ns units since 0001-01-01T00:00:00Z of a [`DateTime`], which keeps instants to the
//! service's range, 1601-01-01 to 9999-12-31. Every key of one format has the same length, so string order
//! is value order.

use super::error::{EncodedRange, KeyDecodeError, KeyFormat};
use super::sortable::{
    decimal_width, length_error, out_of_range, padded, parse_digits, parse_fixed, private, push_padded,
    unexpected_char, valid_key, SortableKey,
};
use super::Key;
use crate::limits::DATETIME_MAX_TICKS;
use crate::{DateTime, IntoDateTime};
use std::cmp::Reverse;
use std::ops::Range;

/// Digits of a tick count: those of `DateTime.MaxValue.Ticks`, 19.
const TICKS_WIDTH: usize = decimal_width(DATETIME_MAX_TICKS as u128);
/// Digits of a tie-breaker: those of `u32::MAX`, 10.
const TIE_BREAKER_WIDTH: usize = decimal_width(u32::MAX as u128);
/// Between the ticks and the tie-breaker of a unique key.
const TIE_BREAKER_SEPARATOR: char = '-';
const UNIQUE_LEN: usize = TICKS_WIDTH + 1 + TIE_BREAKER_WIDTH;

const CHRONOLOGICAL: &KeyFormat = &KeyFormat { name: "chronological", unit: "digits", range: EncodedRange::Instant };
const REVERSE_CHRONOLOGICAL: &KeyFormat = &KeyFormat { name: "reverse-chronological", ..*CHRONOLOGICAL };
const UNIQUE: &KeyFormat =
    &KeyFormat { name: "unique chronological", unit: "characters", range: EncodedRange::InstantAndTieBreaker };
const REVERSE_UNIQUE: &KeyFormat = &KeyFormat { name: "unique reverse-chronological", ..*UNIQUE };

/// The number a key holds for `instant`: its ticks, or `DateTime.MaxValue.Ticks - ticks` for newest first.
fn encode_ticks(instant: DateTime, reverse: bool) -> u64 {
    let ticks = if reverse { DATETIME_MAX_TICKS - instant.ticks() } else { instant.ticks() };
    // Both are in 0..=DATETIME_MAX_TICKS: a DateTime is never before 1601.
    ticks.unsigned_abs()
}

/// The instant of a number read from a key, if it is one.
fn decode_ticks(number: u128, reverse: bool) -> Option<DateTime> {
    let number = i64::try_from(number).ok()?;
    let ticks = if reverse { DATETIME_MAX_TICKS.checked_sub(number)? } else { number };
    DateTime::from_ticks(ticks).ok()
}

fn parse_instant(key: &str, format: &'static KeyFormat, reverse: bool) -> Result<DateTime, KeyDecodeError> {
    let number = parse_fixed(key, TICKS_WIDTH, format)?;
    decode_ticks(number, reverse).ok_or_else(|| out_of_range(format, key))
}

impl private::Sealed for DateTime {}
impl private::Sealed for Reverse<DateTime> {}

/// The chronological key, `{ticks:019}`: oldest first.
///
/// ```
/// use table_model::key::SortableKey;
/// use table_model::DateTime;
/// assert_eq!(DateTime::UNIX_EPOCH.to_key_string(), "0621355968000000000");
/// assert_eq!(DateTime::from_key_str("0621355968000000000")?, DateTime::UNIX_EPOCH);
/// # Ok::<(), table_model::KeyDecodeError>(())
/// ```
impl SortableKey for DateTime {
    fn to_key_string(&self) -> String {
        padded(encode_ticks(*self, false), TICKS_WIDTH)
    }

    fn from_key_str(key: &str) -> Result<Self, KeyDecodeError> {
        parse_instant(key, CHRONOLOGICAL, false)
    }
}

/// The reverse-chronological key, `{3155378975999999999 - ticks:019}`: newest first.
///
/// ```
/// use std::cmp::Reverse;
/// use table_model::key::SortableKey;
/// use table_model::DateTime;
/// assert_eq!(Reverse(DateTime::UNIX_EPOCH).to_key_string(), "2534023007999999999");
/// assert_eq!(Reverse::<DateTime>::from_key_str("2534023007999999999")?.0, DateTime::UNIX_EPOCH);
/// # Ok::<(), table_model::KeyDecodeError>(())
/// ```
impl SortableKey for Reverse<DateTime> {
    fn to_key_string(&self) -> String {
        padded(encode_ticks(self.0, true), TICKS_WIDTH)
    }

    fn from_key_str(key: &str) -> Result<Self, KeyDecodeError> {
        parse_instant(key, REVERSE_CHRONOLOGICAL, true).map(Reverse)
    }
}

/// The chronological key of an instant: its .NET ticks as 19 digits, so that keys sort oldest first.
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, RowKey};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let t: DateTime = "2024-01-02T03:04:05.1234567Z".parse()?;
/// let row: RowKey = key::chronological(t);
/// assert_eq!(row, "0638397614451234567");
/// assert!(row < key::chronological(DateTime::MAX));
/// # Ok(())
/// # }
/// ```
pub fn chronological<K: Key, T: IntoDateTime>(instant: T) -> T::Checked<K> {
    instant.__map(|instant| instant.to_key())
}

/// The reverse-chronological key of an instant: `3155378975999999999 - ticks` as 19 digits, so that keys sort
/// newest first (the "log tail" pattern: the latest rows come back first).
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, PartitionKey};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let older: PartitionKey = key::reverse_chronological("2024-01-01T00:00:00Z".parse::<DateTime>()?);
/// let newer: PartitionKey = key::reverse_chronological("2024-06-01T00:00:00Z".parse::<DateTime>()?);
/// assert!(newer < older);
/// assert_eq!(key::reverse_chronological::<PartitionKey, _>(DateTime::MAX), "0000000000000000000");
/// # Ok(())
/// # }
/// ```
pub fn reverse_chronological<K: Key, T: IntoDateTime>(instant: T) -> T::Checked<K> {
    instant.__map(|instant| Reverse(instant).to_key())
}

/// Reads a [`chronological`] key back as its instant.
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, RowKey};
/// assert_eq!(key::parse_chronological(&RowKey::new("0504911232000000000")?)?, DateTime::MIN);
/// let err = key::parse_chronological(&RowKey::new("0000000000000000000")?).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "invalid chronological row key `0000000000000000000`: must encode an instant from \
///      1601-01-01T00:00:00.0000000Z to 9999-12-31T23:59:59.9999999Z"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`KeyDecodeError`] when the key is not 19 digits or its instant is outside 1601-01-01 to 9999-12-31.
pub fn parse_chronological<K: Key>(key: &K) -> Result<DateTime, KeyDecodeError> {
    DateTime::from_key(key)
}

/// Reads a [`reverse_chronological`] key back as its instant.
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, RowKey};
/// let row: RowKey = key::reverse_chronological(DateTime::UNIX_EPOCH);
/// assert_eq!(key::parse_reverse_chronological(&row)?, DateTime::UNIX_EPOCH);
/// # Ok::<(), table_model::KeyDecodeError>(())
/// ```
///
/// # Errors
/// [`KeyDecodeError`] when the key is not 19 digits or its instant is outside 1601-01-01 to 9999-12-31.
pub fn parse_reverse_chronological<K: Key>(key: &K) -> Result<DateTime, KeyDecodeError> {
    Reverse::<DateTime>::from_key(key).map(|instant| instant.0)
}

pub(crate) fn unique_key<K: Key>(instant: DateTime, tie_breaker: u32, reverse: bool) -> K {
    let tie_breaker = if reverse { u32::MAX - tie_breaker } else { tie_breaker };
    let mut key = String::with_capacity(UNIQUE_LEN);
    push_padded(&mut key, encode_ticks(instant, reverse), TICKS_WIDTH);
    key.push(TIE_BREAKER_SEPARATOR);
    push_padded(&mut key, tie_breaker, TIE_BREAKER_WIDTH);
    valid_key(key)
}

fn parse_unique<K: Key>(key: &K, reverse: bool) -> Result<(DateTime, u32), KeyDecodeError> {
    let format = if reverse { REVERSE_UNIQUE } else { UNIQUE };
    parse_unique_str(key.as_ref(), format, reverse).map_err(|e| e.in_key(K::KIND))
}

/// Reads a unique key (either direction) from a string that need not be a validated key, for the derive.
pub(crate) fn parse_unique_key_str(key: &str, reverse: bool) -> Result<(DateTime, u32), KeyDecodeError> {
    parse_unique_str(key, if reverse { REVERSE_UNIQUE } else { UNIQUE }, reverse)
}

/// Where the tie-breaker's digits start in a unique key: after the ticks and the separator.
pub(crate) const TIE_BREAKER_OFFSET: usize = TICKS_WIDTH + 1;

/// The ten digits a unique key holds for `tie_breaker`: the number itself, or `4294967295 - n` for newest
/// first.
pub(crate) fn tie_breaker_digits(tie_breaker: u32, reverse: bool) -> [u8; TIE_BREAKER_WIDTH] {
    let mut n = if reverse { u32::MAX - tie_breaker } else { tie_breaker };
    let mut digits = [b'0'; TIE_BREAKER_WIDTH];
    for d in digits.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    digits
}

fn parse_unique_str(key: &str, format: &'static KeyFormat, reverse: bool) -> Result<(DateTime, u32), KeyDecodeError> {
    if key.len() != UNIQUE_LEN {
        return Err(length_error(format, key, UNIQUE_LEN));
    }
    let ticks = parse_digits(key, 0, TICKS_WIDTH, format)?;
    if !key[TICKS_WIDTH..].starts_with(TIE_BREAKER_SEPARATOR) {
        return Err(unexpected_char(format, key, TICKS_WIDTH, "`-`"));
    }
    let tie_breaker = parse_digits(key, TICKS_WIDTH + 1, TIE_BREAKER_WIDTH, format)?;
    let instant = decode_ticks(ticks, reverse).ok_or_else(|| out_of_range(format, key))?;
    let tie_breaker = u32::try_from(tie_breaker).map_err(|_| out_of_range(format, key))?;
    Ok((instant, if reverse { u32::MAX - tie_breaker } else { tie_breaker }))
}

/// A chronological key that stays unique for events in the same tick: `{ticks:019}-{tie_breaker:010}`,
/// 30 characters. Keys sort by instant, then by tie-breaker.
///
/// The tie-breaker is yours to choose: a per-process sequence number gives a defined order among events of
/// one tick; a random `u32` makes collisions between writers unlikely.
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, RowKey};
/// let first: RowKey = key::chronological_unique(DateTime::UNIX_EPOCH, 0);
/// let second: RowKey = key::chronological_unique(DateTime::UNIX_EPOCH, 1);
/// assert_eq!(first, "0621355968000000000-0000000000");
/// assert!(first < second);
/// ```
pub fn chronological_unique<K: Key, T: IntoDateTime>(instant: T, tie_breaker: u32) -> T::Checked<K> {
    instant.__map(|instant| unique_key(instant, tie_breaker, false))
}

/// A reverse-chronological key that stays unique for events in the same tick:
/// `{3155378975999999999 - ticks:019}-{4294967295 - tie_breaker:010}`, 30 characters.
///
/// Keys sort in the exact reverse of [`chronological_unique`]: newest first, and within one tick the
/// largest tie-breaker first, so with a sequence number the last event written comes first.
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, RowKey};
/// let first: RowKey = key::reverse_chronological_unique(DateTime::UNIX_EPOCH, 0);
/// let second: RowKey = key::reverse_chronological_unique(DateTime::UNIX_EPOCH, 1);
/// assert_eq!(first, "2534023007999999999-4294967295");
/// assert!(second < first);
/// ```
pub fn reverse_chronological_unique<K: Key, T: IntoDateTime>(instant: T, tie_breaker: u32) -> T::Checked<K> {
    instant.__map(|instant| unique_key(instant, tie_breaker, true))
}

/// A tie-breaker for [`chronological_unique`] and [`reverse_chronological_unique`] keys that no other call in
/// this process returns: for a `#[table(tie_breaker)]` field, or any unique key built by hand.
///
/// A process-wide atomic counter, started at a random point when the process first calls it. The counter,
/// rather than a fresh random number per call, gives the guarantee that matters within a process: the values
/// repeat only after 2<sup>32</sup> calls, so keys built in one process for the same tick never collide. The
/// random start (seeded by the OS through `std`'s `RandomState`, with no extra dependency) keeps processes
/// apart: `a` calls in one process and `b` in another overlap with probability about `(a + b) / 2^32`, and
/// only keys of the same tick in the same partition can collide at all. Successive values increase (modulo
/// 2<sup>32</sup>), so events of one tick keep the order they were written in, except across the wrap.
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, RowKey};
/// let (a, b) = (key::next_tie_breaker(), key::next_tie_breaker());
/// assert_ne!(a, b);
/// let first: RowKey = key::reverse_chronological_unique(DateTime::UNIX_EPOCH, a);
/// let second: RowKey = key::reverse_chronological_unique(DateTime::UNIX_EPOCH, b);
/// assert_ne!(first, second);
/// ```
pub fn next_tie_breaker() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::OnceLock;
    static START: OnceLock<u32> = OnceLock::new();
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let start = *START.get_or_init(|| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        let hash = hasher.finish();
        (hash >> 32) as u32 ^ hash as u32
    });
    start.wrapping_add(COUNT.fetch_add(1, Ordering::Relaxed))
}

/// Reads a [`chronological_unique`] key back as its instant and tie-breaker.
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, RowKey};
/// let row: RowKey = key::chronological_unique(DateTime::MAX, 7);
/// assert_eq!(key::parse_chronological_unique(&row)?, (DateTime::MAX, 7));
/// let err = key::parse_chronological_unique(&RowKey::new("0621355968000000000_0000000007")?).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "invalid unique chronological row key `0621355968000000000_0000000007`: character `_` at index 19 \
///      is not allowed; expected `-`"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`KeyDecodeError`] for a wrong length, a character out of place, an instant outside 1601-01-01 to
/// 9999-12-31 or a tie-breaker above `u32::MAX`.
pub fn parse_chronological_unique<K: Key>(key: &K) -> Result<(DateTime, u32), KeyDecodeError> {
    parse_unique(key, false)
}

/// Reads a [`reverse_chronological_unique`] key back as its instant and tie-breaker.
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, PartitionKey};
/// let partition: PartitionKey = key::reverse_chronological_unique(DateTime::MIN, 42);
/// assert_eq!(key::parse_reverse_chronological_unique(&partition)?, (DateTime::MIN, 42));
/// # Ok::<(), table_model::KeyDecodeError>(())
/// ```
///
/// # Errors
/// As [`parse_chronological_unique`].
pub fn parse_reverse_chronological_unique<K: Key>(key: &K) -> Result<(DateTime, u32), KeyDecodeError> {
    parse_unique(key, true)
}

fn ticks_key<K: Key>(number: u64) -> K {
    valid_key(padded(number, TICKS_WIDTH))
}

/// The key bounds of the instants in `[from, to)` for [`chronological`] and [`chronological_unique`] keys:
/// a key is in the returned range, `start` included and `end` excluded, exactly when its instant is in
/// `[from, to)`.
///
/// Use it for a range query, `RowKey ge start and RowKey lt end`. When `from >= to` the range is empty.
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, RowKey};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let (from, to): (DateTime, DateTime) = ("2024-01-01T00:00:00Z".parse()?, "2024-02-01T00:00:00Z".parse()?);
/// let range = key::chronological_range::<RowKey, _>(from, to);
/// assert!(range.contains(&key::chronological(from)));
/// assert!(range.contains(&key::chronological_unique("2024-01-31T23:59:59.9999999Z".parse::<DateTime>()?, u32::MAX)));
/// assert!(!range.contains(&key::chronological(to)));
/// # Ok(())
/// # }
/// ```
pub fn chronological_range<K: Key, T: IntoDateTime>(from: T, to: T) -> T::Checked<Range<K>> {
    from.__map2(to, |from, to| from.to_key()..to.to_key())
}

/// The key bounds of the instants in `[from, to)` for [`reverse_chronological`] and
/// [`reverse_chronological_unique`] keys: a key is in the returned range, `start` included and `end`
/// excluded, exactly when its instant is in `[from, to)`.
///
/// The bounds flip: `start` comes from `to` and `end` from `from`. As the keys hold
/// `3155378975999999999 - ticks`, an instant `t` with `from <= t < to` has a number `n` with
/// `MAX - to + 1 <= n < MAX - from + 1`. When `from >= to` the range is empty.
///
/// ```
/// use table_model::key;
/// use table_model::{DateTime, RowKey};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let (from, to): (DateTime, DateTime) = ("2024-01-01T00:00:00Z".parse()?, "2024-02-01T00:00:00Z".parse()?);
/// let range = key::reverse_chronological_range::<RowKey, _>(from, to);
/// assert!(range.contains(&key::reverse_chronological(from)));
/// assert!(range.contains(&key::reverse_chronological_unique(from, u32::MAX)));
/// assert!(!range.contains(&key::reverse_chronological(to)));
/// assert_eq!(range.start, key::reverse_chronological::<RowKey, _>(DateTime::from_ticks(to.ticks() - 1)?));
/// # Ok(())
/// # }
/// ```
pub fn reverse_chronological_range<K: Key, T: IntoDateTime>(from: T, to: T) -> T::Checked<Range<K>> {
    from.__map2(to, |from, to| ticks_key(encode_ticks(to, true) + 1)..ticks_key(encode_ticks(from, true) + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::error::KeyDecodeErrorKind;
    use crate::key::service_order;
    use crate::limits::{DATETIME_MIN_TICKS, UNIX_EPOCH_TICKS};
    use crate::{KeyKind, PartitionKey, RowKey};
    use proptest::prelude::*;

    fn at(ticks: i64) -> DateTime {
        DateTime::from_ticks(ticks).unwrap()
    }

    fn row(s: &str) -> RowKey {
        RowKey::new(s).unwrap()
    }

    #[test]
    fn spec_values() {
        // `docs/rules.md` §6.2: DateTime.MaxValue.Ticks, the Unix epoch and 1601-01-01.
        assert_eq!(chronological::<RowKey, _>(DateTime::MAX), "3155378975999999999");
        assert_eq!(chronological::<RowKey, _>(DateTime::UNIX_EPOCH), "0621355968000000000");
        assert_eq!(chronological::<RowKey, _>(DateTime::MIN), "0504911232000000000");
        assert_eq!(reverse_chronological::<RowKey, _>(DateTime::MAX), "0000000000000000000");
        assert_eq!(
            reverse_chronological::<RowKey, _>(DateTime::MIN).as_str(),
            format!("{:019}", 3155378975999999999i64 - 504911232000000000)
        );
        assert_eq!(reverse_chronological::<RowKey, _>(DateTime::UNIX_EPOCH), "2534023007999999999");
        for t in [DateTime::MIN, DateTime::UNIX_EPOCH, DateTime::MAX] {
            let c: PartitionKey = chronological(t);
            let r: PartitionKey = reverse_chronological(t);
            assert_eq!((c.len(), r.len()), (19, 19));
            assert_eq!(parse_chronological(&c).unwrap(), t);
            assert_eq!(parse_reverse_chronological(&r).unwrap(), t);
        }
        assert_eq!(TICKS_WIDTH, 19);
        assert_eq!(UNIQUE_LEN, 30);
    }

    #[test]
    fn out_of_range_instants() {
        // Tick 0 (0001-01-01) and the tick before 1601 are well-formed but not instants the service stores.
        for key in ["0000000000000000000", "0504911231999999999", "3155378976000000000", "9999999999999999999"] {
            let err = parse_chronological(&row(key)).unwrap_err();
            assert_eq!(err.kind(), &KeyDecodeErrorKind::OutOfRange, "{key}");
        }
        assert!(parse_chronological(&row("0504911232000000000")).is_ok());
        // Reverse: 0 is DateTime::MAX; MAX - MIN is DateTime::MIN; one more is before 1601.
        assert_eq!(parse_reverse_chronological(&row("0000000000000000000")).unwrap(), DateTime::MAX);
        let last = format!("{:019}", DATETIME_MAX_TICKS - DATETIME_MIN_TICKS);
        assert_eq!(parse_reverse_chronological(&row(&last)).unwrap(), DateTime::MIN);
        let past = format!("{:019}", DATETIME_MAX_TICKS - DATETIME_MIN_TICKS + 1);
        let err = parse_reverse_chronological(&row(&past)).unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::OutOfRange);
        assert_eq!(err.format(), "reverse-chronological");
        assert!(parse_reverse_chronological(&row("9999999999999999999")).is_err());
    }

    #[test]
    fn malformed_keys() {
        let err = parse_chronological(&row("123")).unwrap_err();
        assert_eq!(err.to_string(), "invalid chronological row key `123`: must be 19 digits, found 3");
        assert_eq!(err.key_kind(), Some(KeyKind::Row));
        let err = parse_chronological(&row("06213559680000000000")).unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::Length { expected: 19, found: 20 });
        let err = parse_reverse_chronological(&PartitionKey::new("-621355968000000000").unwrap()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid reverse-chronological partition key `-621355968000000000`: character `-` at index 0 is not \
             allowed; expected a digit"
        );
        assert!(DateTime::from_key_str(" 621355968000000000").is_err());
        assert!(DateTime::from_key_str("").is_err());
    }

    #[test]
    fn unique_keys() {
        let t = DateTime::UNIX_EPOCH;
        assert_eq!(chronological_unique::<RowKey, _>(t, 0), "0621355968000000000-0000000000");
        assert_eq!(chronological_unique::<RowKey, _>(t, u32::MAX), "0621355968000000000-4294967295");
        assert_eq!(reverse_chronological_unique::<RowKey, _>(t, u32::MAX), "2534023007999999999-0000000000");
        assert_eq!(reverse_chronological_unique::<RowKey, _>(DateTime::MAX, 0), "0000000000000000000-4294967295");
        for (t, n) in [(DateTime::MIN, 0), (DateTime::MAX, u32::MAX), (t, 12345)] {
            let c: RowKey = chronological_unique(t, n);
            let r: RowKey = reverse_chronological_unique(t, n);
            assert_eq!(parse_chronological_unique(&c).unwrap(), (t, n));
            assert_eq!(parse_reverse_chronological_unique(&r).unwrap(), (t, n));
        }
        let err = parse_chronological_unique(&row("0621355968000000000-4294967296")).unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::OutOfRange);
        let err = parse_chronological_unique(&row("0621355968000000000")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid unique chronological row key `0621355968000000000`: must be 30 characters, found 19"
        );
        let err = parse_reverse_chronological_unique(&row("0621355968000000000-00000000x0")).unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::UnexpectedChar { ch: 'x', index: 28, expected: "a digit" });
        let err = parse_chronological_unique(&row("0000000000000000000-0000000000")).unwrap_err();
        assert_eq!(err.kind(), &KeyDecodeErrorKind::OutOfRange);
        // A plain chronological key is not a unique one, and the other way round.
        assert!(parse_chronological(&chronological_unique::<RowKey, _>(t, 1)).is_err());
    }

    #[test]
    fn ranges_at_the_limits() {
        let r = chronological_range::<RowKey, _>(DateTime::MIN, DateTime::MAX);
        assert_eq!((r.start.as_str(), r.end.as_str()), ("0504911232000000000", "3155378975999999999"));
        let r = reverse_chronological_range::<RowKey, _>(DateTime::MIN, DateTime::MAX);
        assert_eq!(r.start, "0000000000000000001");
        assert_eq!(r.end.as_str(), format!("{:019}", DATETIME_MAX_TICKS - DATETIME_MIN_TICKS + 1));
        assert!(r.contains(&reverse_chronological(DateTime::MIN)));
        assert!(!r.contains(&reverse_chronological(DateTime::MAX)));
        let empty = reverse_chronological_range::<RowKey, _>(at(UNIX_EPOCH_TICKS), at(UNIX_EPOCH_TICKS));
        assert!(empty.is_empty());
    }

    #[test]
    fn chrono_and_system_time_instants_are_checked() {
        use std::time::SystemTime;
        let t = at(638_397_614_451_234_567);
        let (c, system) = (t.to_chrono(), SystemTime::from(t.to_chrono()));
        // The same keys from every instant type; a DateTime gives the key, the others a Result.
        assert_eq!(chronological::<RowKey, _>(c).unwrap(), chronological::<RowKey, _>(t));
        assert_eq!(reverse_chronological::<RowKey, _>(system).unwrap(), reverse_chronological::<RowKey, _>(t));
        assert_eq!(chronological_unique::<RowKey, _>(c, 7).unwrap(), chronological_unique::<RowKey, _>(t, 7));
        assert_eq!(
            reverse_chronological_unique::<PartitionKey, _>(c, 7).unwrap(),
            reverse_chronological_unique::<PartitionKey, _>(t, 7)
        );
        let later = at(t.ticks() + 1).to_chrono();
        assert_eq!(chronological_range::<RowKey, _>(c, later).unwrap(), chronological_range(t, at(t.ticks() + 1)));
        assert_eq!(
            reverse_chronological_range::<RowKey, _>(c, later).unwrap(),
            reverse_chronological_range(t, at(t.ticks() + 1))
        );
        // Outside the service's range: the typed error, for either end of a range.
        let early = chrono::DateTime::parse_from_rfc3339("1600-12-31T23:59:59Z").unwrap().to_utc();
        let err = chronological::<RowKey, _>(early).unwrap_err();
        assert!(matches!(err.kind(), crate::ValueErrorKind::DateTimeOutOfRange { .. }), "{err}");
        assert!(reverse_chronological_unique::<RowKey, _>(early, 0).is_err());
        assert!(chronological_range::<RowKey, _>(c, early).is_err());
        assert!(reverse_chronological_range::<RowKey, _>(early, c).is_err());
    }

    fn instant() -> impl Strategy<Value = DateTime> {
        // Mostly anywhere in the range, sometimes next to a boundary.
        prop_oneof![
            8 => DATETIME_MIN_TICKS..=DATETIME_MAX_TICKS,
            1 => DATETIME_MIN_TICKS..DATETIME_MIN_TICKS + 3,
            1 => DATETIME_MAX_TICKS - 3..=DATETIME_MAX_TICKS,
        ]
        .prop_map(at)
    }

    proptest! {
        #[test]
        fn keys_sort_as_instants(a in instant(), b in instant()) {
            let (ca, cb): (RowKey, RowKey) = (chronological(a), chronological(b));
            prop_assert_eq!(a.cmp(&b), ca.cmp(&cb));
            prop_assert_eq!(a.cmp(&b), service_order(&ca, &cb));
            let (ra, rb): (RowKey, RowKey) = (reverse_chronological(a), reverse_chronological(b));
            prop_assert_eq!(a.cmp(&b), rb.cmp(&ra));
            prop_assert_eq!(parse_chronological(&ca).unwrap(), a);
            prop_assert_eq!(parse_reverse_chronological(&ra).unwrap(), a);
            prop_assert_eq!(ca.len(), 19);
            prop_assert_eq!(ra.len(), 19);
        }

        #[test]
        fn unique_keys_sort_by_instant_then_tie_breaker(a in instant(), b in instant(), x: u32, y: u32) {
            let b = if x % 3 == 0 { a } else { b }; // often the same tick
            let (ca, cb): (RowKey, RowKey) = (chronological_unique(a, x), chronological_unique(b, y));
            prop_assert_eq!((a, x).cmp(&(b, y)), ca.cmp(&cb));
            let (ra, rb): (RowKey, RowKey) = (reverse_chronological_unique(a, x), reverse_chronological_unique(b, y));
            prop_assert_eq!((a, x).cmp(&(b, y)), rb.cmp(&ra));
            prop_assert_eq!(parse_chronological_unique(&ca).unwrap(), (a, x));
            prop_assert_eq!(parse_reverse_chronological_unique(&ra).unwrap(), (a, x));
        }

        #[test]
        fn ranges_hold_exactly_the_instants_in_range(from in instant(), to in instant(), t in instant(), n: u32) {
            let inside = from <= t && t < to;
            let c = chronological_range::<RowKey, _>(from, to);
            prop_assert_eq!(c.contains(&chronological(t)), inside);
            prop_assert_eq!(c.contains(&chronological_unique(t, n)), inside);
            let r = reverse_chronological_range::<RowKey, _>(from, to);
            prop_assert_eq!(r.contains(&reverse_chronological(t)), inside);
            prop_assert_eq!(r.contains(&reverse_chronological_unique(t, n)), inside);
        }

        #[test]
        fn decoding_never_panics_and_is_canonical(s in "[0-9]{19}|[0-9]{19}-[0-9]{10}|\\PC{0,32}") {
            let key = RowKey::new(s.clone());
            if let Ok(key) = key {
                if let Ok(t) = parse_chronological(&key) {
                    prop_assert_eq!(chronological::<RowKey, _>(t), key.clone());
                }
                if let Ok(t) = parse_reverse_chronological(&key) {
                    prop_assert_eq!(reverse_chronological::<RowKey, _>(t), key.clone());
                }
                if let Ok((t, n)) = parse_chronological_unique(&key) {
                    prop_assert_eq!(chronological_unique::<RowKey, _>(t, n), key.clone());
                }
                if let Ok((t, n)) = parse_reverse_chronological_unique(&key) {
                    prop_assert_eq!(reverse_chronological_unique::<RowKey, _>(t, n), key);
                }
            }
            let _ = DateTime::from_key_str(&s);
        }
    }
}
