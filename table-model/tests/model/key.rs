//! The public key API: validated keys, and the helpers that build keys which sort the way users mean
//! (`docs/rules.md` §2 and §6).

use chrono::{TimeZone, Utc};
use std::cmp::Reverse;
use std::collections::BTreeSet;
use table_model::key::{self, split_composite, CompositeKey, Key, SortableKey};
use table_model::{DateTime, KeyDecodeError, KeyDecodeErrorKind, KeyKind, PartitionKey, RowKey};
use uuid::Uuid;

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime {
    DateTime::try_from(Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()).unwrap()
}

#[test]
fn spec_section_6_values() {
    // `DateTime.MaxValue.Ticks`, the Unix epoch and 1601-01-01, as `docs/rules.md` §6.2 gives them.
    assert_eq!(key::chronological::<RowKey, _>(DateTime::MAX), "3155378975999999999");
    assert_eq!(key::chronological::<RowKey, _>(utc(1970, 1, 1, 0, 0, 0)), "0621355968000000000");
    assert_eq!(key::chronological::<RowKey, _>(utc(1601, 1, 1, 0, 0, 0)), "0504911232000000000");
    assert_eq!(key::reverse_chronological::<RowKey, _>(DateTime::MAX), "0000000000000000000");
    assert_eq!(key::reverse_chronological::<RowKey, _>(utc(1970, 1, 1, 0, 0, 0)), "2534023007999999999");
    assert_eq!(key::reverse_chronological::<RowKey, _>(utc(1601, 1, 1, 0, 0, 0)), "2650467743999999999");
}

#[test]
fn chrono_instants_round_trip_through_keys() {
    let when = Utc.with_ymd_and_hms(2024, 5, 6, 7, 8, 9).unwrap() + chrono::Duration::nanoseconds(123_456_700);
    let t = DateTime::try_from(when).unwrap();
    let row: RowKey = key::chronological(t);
    let partition: PartitionKey = key::reverse_chronological(t);
    assert_eq!(key::parse_chronological(&row).unwrap().to_chrono(), when);
    assert_eq!(key::parse_reverse_chronological(&partition).unwrap().to_chrono(), when);
    // Instants the service cannot store are refused before they become keys.
    assert!(DateTime::try_from(Utc.with_ymd_and_hms(1600, 12, 31, 23, 59, 59).unwrap()).is_err());
}

#[test]
fn a_log_tail_reads_newest_first() {
    let events = [utc(2024, 1, 1, 0, 0, 0), utc(2024, 3, 1, 0, 0, 0), utc(2023, 12, 31, 23, 59, 59)];
    let keys: BTreeSet<RowKey> = events.iter().map(|&t| key::reverse_chronological(t)).collect();
    let read: Vec<DateTime> = keys.iter().map(|k| key::parse_reverse_chronological(k).unwrap()).collect();
    let mut newest_first = events.to_vec();
    newest_first.sort_by(|a, b| b.cmp(a));
    assert_eq!(read, newest_first);
}

#[test]
fn events_in_one_tick_stay_unique_and_ordered() {
    let t = utc(2024, 1, 1, 0, 0, 0);
    let forward: Vec<RowKey> = (0..3).map(|n| key::chronological_unique(t, n)).collect();
    assert!(forward.windows(2).all(|w| w[0] < w[1]));
    let backward: Vec<RowKey> = (0..3).map(|n| key::reverse_chronological_unique(t, n)).collect();
    assert!(backward.windows(2).all(|w| w[0] > w[1]));
    assert_eq!(key::parse_chronological_unique(&forward[2]).unwrap(), (t, 2));
    assert_eq!(key::parse_reverse_chronological_unique(&backward[2]).unwrap(), (t, 2));
    // A unique key sorts with plain keys of other instants as its instant does.
    assert!(backward[0] < key::reverse_chronological::<RowKey, _>(utc(2023, 12, 31, 0, 0, 0)));
}

#[test]
fn time_ranges_select_the_month() {
    let (from, to) = (utc(2024, 2, 1, 0, 0, 0), utc(2024, 3, 1, 0, 0, 0));
    let inside = [from, utc(2024, 2, 29, 23, 59, 59), DateTime::from_ticks(to.ticks() - 1).unwrap()];
    let outside = [DateTime::from_ticks(from.ticks() - 1).unwrap(), to, DateTime::MIN, DateTime::MAX];
    let chrono_range = key::chronological_range::<RowKey, _>(from, to);
    let reverse_range = key::reverse_chronological_range::<PartitionKey, _>(from, to);
    for t in inside {
        assert!(chrono_range.contains(&key::chronological(t)), "{t}");
        assert!(chrono_range.contains(&key::chronological_unique(t, u32::MAX)), "{t}");
        assert!(reverse_range.contains(&key::reverse_chronological(t)), "{t}");
        assert!(reverse_range.contains(&key::reverse_chronological_unique(t, 0)), "{t}");
    }
    for t in outside {
        assert!(!chrono_range.contains(&key::chronological(t)), "{t}");
        assert!(!reverse_range.contains(&key::reverse_chronological(t)), "{t}");
    }
}

/// What `#[derive(TableEntity)]` does with a key field: write it with `to_key`, read it with `from_key`.
fn through_row_key<T: SortableKey + PartialEq + std::fmt::Debug>(value: T) -> String {
    let row: RowKey = value.to_key();
    assert_eq!(T::from_key(&row).unwrap(), value);
    assert_eq!(row.as_str(), value.to_key_string());
    row.into_string()
}

#[test]
fn sortable_key_for_every_type() {
    assert_eq!(through_row_key(200u8), "200");
    assert_eq!(through_row_key(65_535u16), "65535");
    assert_eq!(through_row_key(42u32), "0000000042");
    assert_eq!(through_row_key(42u64), "00000000000000000042");
    assert_eq!(through_row_key(42u128), format!("{:039}", 42));
    assert_eq!(through_row_key(-128i8), "000");
    assert_eq!(through_row_key(-1i16), "32767");
    assert_eq!(through_row_key(-1i32), "2147483647");
    assert_eq!(through_row_key(1i64), "09223372036854775809");
    assert_eq!(through_row_key(i128::MAX), u128::MAX.to_string());
    assert_eq!(through_row_key(Reverse(0u32)), "4294967295");
    assert_eq!(through_row_key(Reverse(i8::MAX)), "000");
    assert_eq!(through_row_key(DateTime::UNIX_EPOCH), "0621355968000000000");
    assert_eq!(through_row_key(Reverse(DateTime::UNIX_EPOCH)), "2534023007999999999");
    let id = Uuid::parse_str("67E55044-10B1-426F-9247-BB680E5FE0C8").unwrap();
    assert_eq!(through_row_key(id), "67e55044-10b1-426f-9247-bb680e5fe0c8");
    assert_eq!(through_row_key(Reverse(id)), "981aafbb-ef4e-bd90-6db8-4497f1a01f37");
}

#[test]
fn integer_keys_sort_numerically_as_row_keys() {
    let values = [i64::MIN, -1_000_000, -10, -2, -1, 0, 1, 2, 10, 11, 1_000_000, i64::MAX];
    let keys: BTreeSet<RowKey> = values.iter().map(SortableKey::to_key).collect();
    let read: Vec<i64> = keys.iter().map(|k| i64::from_key(k).unwrap()).collect();
    assert_eq!(read, values);
    // Naive keys sort as strings: the `1, 10, 11, 2` of `docs/rules.md` §2.3.
    let naive: BTreeSet<RowKey> = [1, 2, 10, 11].iter().map(|n| RowKey::new(n.to_string()).unwrap()).collect();
    assert_eq!(naive.iter().map(RowKey::as_str).collect::<Vec<_>>(), ["1", "10", "11", "2"]);
}

#[test]
fn decode_errors_name_the_format_the_key_and_the_rule() {
    let err = key::parse_chronological(&RowKey::new("123").unwrap()).unwrap_err();
    assert_eq!(err.to_string(), "invalid chronological row key `123`: must be 19 digits, found 3");
    assert_eq!(err.kind(), &KeyDecodeErrorKind::Length { expected: 19, found: 3 });
    assert_eq!((err.format(), err.key_kind(), err.key()), ("chronological", Some(KeyKind::Row), "123"));

    let err = key::parse_reverse_chronological(&PartitionKey::new("12345678901234567x9").unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid reverse-chronological partition key `12345678901234567x9`: character `x` at index 17 is not \
         allowed; expected a digit"
    );
    let err = key::parse_chronological(&RowKey::new("3155378976000000000").unwrap()).unwrap_err();
    assert_eq!(err.kind(), &KeyDecodeErrorKind::OutOfRange);
    let err = key::parse_chronological_unique(&RowKey::new("3155378975999999999-9999999999").unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid unique chronological row key `3155378975999999999-9999999999`: must encode an instant from \
         1601-01-01T00:00:00.0000000Z to 9999-12-31T23:59:59.9999999Z and a tie-breaker of at most 4294967295"
    );

    let err = u8::from_key_str("256").unwrap_err();
    assert_eq!(err.to_string(), "invalid u8 key `256`: must be at most 255");
    assert_eq!(err.key_kind(), None);
    assert_eq!(
        err.clone().in_key(KeyKind::Partition).to_string(),
        "invalid u8 partition key `256`: must be at most 255"
    );

    // Long input is cut in the message.
    let err = u64::from_key_str(&"9".repeat(100)).unwrap_err();
    assert_eq!(err.key(), format!("{}...", "9".repeat(64)));

    fn assert_error<E: std::error::Error + Send + Sync + Clone + PartialEq + 'static>() {}
    assert_error::<KeyDecodeError>();
}

#[test]
fn composite_keys_escape_and_split_back() {
    let parts = ["tenant 7", "user/7", "a~b", "#?\\", "tab\there", "", "日本😀", "\u{85}"];
    let row = CompositeKey::from_parts(parts).into_row_key().unwrap();
    assert_eq!(row, "tenant~207 user~2F7 a~7Eb ~23~3F~5C tab~09here  日本😀 ~85");
    assert_eq!(split_composite(&row).unwrap(), parts);

    let err = split_composite("tenant user/7").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid composite key `tenant user/7`: character `/` at index 11 is not allowed; expected it escaped as \
         `~` and two uppercase hexadecimal digits"
    );
    let err = split_composite("a~zz").unwrap_err();
    assert_eq!(err.kind(), &KeyDecodeErrorKind::InvalidEscape { index: 1 });
}

#[test]
fn composite_keys_sort_by_parts_and_have_prefix_ranges() {
    let tuples = [("a", "z"), ("ab", "c"), ("a", "b"), ("b", ""), ("a", "")];
    let keys: BTreeSet<RowKey> =
        tuples.iter().map(|(x, y)| CompositeKey::new().push(x).push(y).into_row_key().unwrap()).collect();
    let read: Vec<Vec<String>> = keys.iter().map(|k| split_composite(k).unwrap()).collect();
    let mut sorted: Vec<Vec<String>> = tuples.iter().map(|(x, y)| vec![x.to_string(), y.to_string()]).collect();
    sorted.sort();
    assert_eq!(read, sorted);

    let tenant = CompositeKey::new().push("a");
    let range = tenant.prefix_range::<RowKey>().unwrap();
    let in_range: Vec<&RowKey> = keys.iter().filter(|k| range.contains(k)).collect();
    assert_eq!(in_range.len(), 3); // ("a", ""), ("a", "b"), ("a", "z"); not ("ab", "c")
}

#[test]
fn composite_keys_respect_the_length_limit() {
    let ok = CompositeKey::new().push("x".repeat(255)).push("y".repeat(256));
    assert_eq!(ok.clone().into_row_key().unwrap().len(), 512);
    let err = ok.push("").into_partition_key().unwrap_err();
    // The message shows the key's first 64 characters; the error keeps it whole.
    assert_eq!(
        err.to_string(),
        format!("invalid partition key \"{}\"...: must be at most 512 UTF-16 code units, found 513", "x".repeat(64))
    );
    assert_eq!(err.value(), format!("{} {} ", "x".repeat(255), "y".repeat(256)));
    // Escapes count: 171 slashes are 513 characters once escaped.
    assert!(CompositeKey::new().push("/".repeat(171)).into_row_key().is_err());
}

#[test]
fn composite_parts_can_be_sortable_values() {
    let key: PartitionKey = CompositeKey::new()
        .push("invoices")
        .push_value(&2024u16)
        .push_value(&Reverse(utc(2024, 5, 6, 0, 0, 0)))
        .into_key()
        .unwrap();
    let parts = split_composite(&key).unwrap();
    assert_eq!(parts[0], "invoices");
    assert_eq!(u16::from_key_str(&parts[1]).unwrap(), 2024);
    assert_eq!(Reverse::<DateTime>::from_key_str(&parts[2]).unwrap().0, utc(2024, 5, 6, 0, 0, 0));
}

#[test]
fn helpers_are_generic_over_both_keys() {
    fn property<K: Key>(key: &K) -> (&'static str, &str) {
        (K::KIND.property_name(), key.as_ref())
    }
    let t = DateTime::UNIX_EPOCH;
    assert_eq!(property(&key::chronological::<PartitionKey, _>(t)), ("PartitionKey", "0621355968000000000"));
    assert_eq!(property(&key::chronological::<RowKey, _>(t)), ("RowKey", "0621355968000000000"));
    let err = key::parse_chronological(&PartitionKey::new("x").unwrap()).unwrap_err();
    assert_eq!(err.key_kind(), Some(KeyKind::Partition));
}
