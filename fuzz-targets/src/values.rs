//! Text a caller keeps or receives and reads back: [`DateTime::parse`], the key decoders of
//! [`table_model::key`], and continuation tokens.
//!
//! Layer: targets.

use crate::text;
use std::cmp::Reverse;
use std::fmt::Debug;
use table_model::key::{self, split_composite, CompositeKey, SortableKey};
use table_model::response::{Continuation, TableContinuation};
use table_model::{DateTime, PartitionKey, RowKey};
use uuid::Uuid;

/// A `DateTime` that parses displays (seven fractional digits, `Z`) and re-parses to the same ticks, and
/// converts to chrono and back unchanged.
pub fn datetime(data: &[u8]) {
    let text = text(data);
    let Ok(instant) = DateTime::parse(&text) else { return };
    let shown = instant.to_string();
    assert_eq!(shown.len(), 28, "{shown}");
    assert_eq!(DateTime::parse(&shown).map(DateTime::ticks), Ok(instant.ticks()), "{text:?} shown as {shown}");
    assert_eq!(DateTime::from_ticks(instant.ticks()), Ok(instant));
    assert_eq!(DateTime::from_chrono(instant.to_chrono()), Ok(instant));
    assert!((DateTime::MIN..=DateTime::MAX).contains(&instant));
}

/// Every time key decoder (chronological, reverse-chronological, and both unique forms, as a RowKey and a
/// PartitionKey): a key that decodes re-encodes to the same key.
pub fn time_key(data: &[u8]) {
    let text = text(data);
    let (Ok(row), Ok(partition)) = (RowKey::new(text.as_ref()), PartitionKey::new(text.as_ref())) else { return };
    if let Ok(instant) = key::parse_chronological(&row) {
        assert_eq!(key::chronological::<RowKey, _>(instant), row);
        assert_eq!(key::parse_chronological(&partition), Ok(instant));
    }
    if let Ok(instant) = key::parse_reverse_chronological(&row) {
        assert_eq!(key::reverse_chronological::<RowKey, _>(instant), row);
        assert_eq!(key::parse_reverse_chronological(&partition), Ok(instant));
    }
    if let Ok((instant, tie_breaker)) = key::parse_chronological_unique(&row) {
        assert_eq!(key::chronological_unique::<RowKey, _>(instant, tie_breaker), row);
        assert_eq!(key::parse_chronological_unique(&partition), Ok((instant, tie_breaker)));
    }
    if let Ok((instant, tie_breaker)) = key::parse_reverse_chronological_unique(&row) {
        assert_eq!(key::reverse_chronological_unique::<RowKey, _>(instant, tie_breaker), row);
        assert_eq!(key::parse_reverse_chronological_unique(&partition), Ok((instant, tie_breaker)));
    }
    sortable::<DateTime>(&text);
    sortable::<Reverse<DateTime>>(&text);
}

/// Every [`SortableKey`] decoder of integers (each width, signed and unsigned, each direction) and UUIDs: a
/// key that decodes re-encodes to the same key, and as a `RowKey` decodes the same.
pub fn integer_key(data: &[u8]) {
    let text = text(data);
    sortable::<u8>(&text);
    sortable::<u16>(&text);
    sortable::<u32>(&text);
    sortable::<u64>(&text);
    sortable::<u128>(&text);
    sortable::<i8>(&text);
    sortable::<i16>(&text);
    sortable::<i32>(&text);
    sortable::<i64>(&text);
    sortable::<i128>(&text);
    sortable::<Reverse<u8>>(&text);
    sortable::<Reverse<u64>>(&text);
    sortable::<Reverse<u128>>(&text);
    sortable::<Reverse<i8>>(&text);
    sortable::<Reverse<i64>>(&text);
    sortable::<Reverse<i128>>(&text);
    sortable::<Uuid>(&text);
    sortable::<Reverse<Uuid>>(&text);
}

fn sortable<T: SortableKey + PartialEq + Debug>(text: &str) {
    let Ok(value) = T::from_key_str(text) else { return };
    assert_eq!(value.to_key_string(), text, "{value:?}");
    let row: RowKey = value.to_key();
    assert_eq!(row.as_str(), text);
    assert_eq!(T::from_key(&row).ok().as_ref(), Some(&value));
}

/// A composite key that splits re-joins to the same key; a key built from parts splits into those parts.
pub fn composite_key(data: &[u8]) {
    let text = text(data);
    if let Ok(parts) = split_composite(&text) {
        assert!(!parts.is_empty());
        let again = CompositeKey::from_parts(&parts);
        assert_eq!(again.as_str(), text, "{parts:?}");
        assert_eq!(again.part_count(), parts.len());
    }
    // The bytes as parts (split at NUL): the key built from them splits back into them, and lies in the
    // prefix range of every leading group of parts.
    let parts: Vec<&str> = text.split('\0').collect();
    let built = CompositeKey::from_parts(&parts);
    let split = split_composite(built.as_str()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(split, parts, "{:?}", built.as_str());
    if let Ok(row) = built.clone().into_row_key() {
        for n in 1..parts.len() {
            if let Ok(range) = CompositeKey::from_parts(&parts[..n]).prefix_range::<RowKey>() {
                assert!(range.contains(&row), "{:?} within the parts {:?}", row.as_str(), &parts[..n]);
            }
        }
    }
}

/// A continuation token that parses re-displays to a token that parses to the same value; a continuation
/// made of any header values (the bytes split at NUL) displays to a token that parses back to it, and never
/// to the other kind of listing.
pub fn continuation(data: &[u8]) {
    let text = text(data);
    if let Ok(next) = text.parse::<Continuation>() {
        assert_eq!(next.to_string().parse::<Continuation>().as_ref(), Ok(&next));
    }
    if let Ok(next) = text.parse::<TableContinuation>() {
        assert_eq!(next.to_string().parse::<TableContinuation>().as_ref(), Ok(&next));
    }
    let mut values = text.splitn(3, '\0');
    let first = values.next().unwrap_or_default();
    let second = values.next().map(str::to_owned);
    let next = Continuation::new(first, second);
    let token = next.to_string();
    assert_eq!(token.parse::<Continuation>().as_ref(), Ok(&next), "{token}");
    assert!(token.parse::<TableContinuation>().is_err(), "{token}");
    let tables = TableContinuation::new(first);
    assert_eq!(tables.to_string().parse::<TableContinuation>().as_ref(), Ok(&tables));
}
