//! Keys that sort the way you mean: time, numbers and several parts in one key (`docs/rules.md` §6).
//!
//! Run with `cargo run -p table-model --example keys`.

use std::cmp::Reverse;
use std::collections::BTreeSet;
use table_model::key::{self, split_composite, CompositeKey, SortableKey};
use table_model::{DateTime, PartitionKey, RowKey};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A log: the service returns rows in key order, so reverse-chronological keys give the newest first.
    let events: [DateTime; 3] =
        ["2024-05-06T07:08:09Z".parse()?, "2024-05-06T07:08:10Z".parse()?, "2023-01-01T00:00:00Z".parse()?];
    let log: BTreeSet<RowKey> = events.iter().map(|&t| key::reverse_chronological(t)).collect();
    println!("log tail, newest first:");
    for row in &log {
        println!("  {row}  {}", key::parse_reverse_chronological(row)?);
    }

    // Two events in the same tick: a tie-breaker keeps the keys unique and ordered.
    let t = DateTime::try_from(chrono::Utc::now())?;
    let first: RowKey = key::chronological_unique(t, 0);
    let second: RowKey = key::chronological_unique(t, 1);
    assert!(first < second);
    println!("same tick: {first} < {second}");

    // The key bounds of a time range, for `RowKey ge '...' and RowKey lt '...'`.
    let range = key::reverse_chronological_range::<RowKey, DateTime>(
        "2024-05-01T00:00:00Z".parse()?,
        "2024-06-01T00:00:00Z".parse()?,
    );
    println!("May 2024, newest first: RowKey ge '{}' and RowKey lt '{}'", range.start, range.end);
    let in_may = log.iter().filter(|row| range.contains(row)).count();
    println!("  {in_may} of {} log rows are in May 2024", log.len());

    // Numbers: fixed width, negative numbers included, and the way back.
    let mut balances: Vec<String> = [250i64, -40, 3, -1_000].iter().map(SortableKey::to_key_string).collect();
    balances.sort();
    let sorted: Vec<i64> = balances.iter().map(|k| i64::from_key_str(k)).collect::<Result<_, _>>()?;
    println!("i64 keys {balances:?} sort as {sorted:?}");
    let newest_order: PartitionKey = Reverse(1_000_000u32).to_key();
    println!("Reverse(1000000u32) as a partition key: {newest_order}");

    // Several parts in one key, whatever characters they hold.
    let row = CompositeKey::new().push("tenant 7").push("docs/2024#05").push_value(&42u16).into_row_key()?;
    println!("composite key: {row}");
    println!("  splits back into {:?}", split_composite(&row)?);

    // Bad keys are typed errors, never panics.
    let err = key::parse_chronological(&RowKey::new("2024-05-06")?).unwrap_err();
    println!("error: {err}");
    Ok(())
}
