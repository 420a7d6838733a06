//! Validation allocates nothing: a counting global allocator around the validators and the key decoders.
//!
//! This file is its own test binary so that the allocator counts only what it is asked to. The count is kept
//! per thread, as the test harness runs tests (and allocates) on several threads at once.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::cmp::Reverse;
use table_model::key::{self, SortableKey};
use table_model::{DateTime, KeyKind, PartitionKey, PropertyName, RowKey, TableName};
use table_model_rules::{key as key_rule, property_name, table_name};
use uuid::Uuid;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: the allocator may run while the thread's locals are being torn down.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every method forwards to `System` unchanged; counting touches only a thread-local `Cell<usize>`,
// which has a `const` initializer and no destructor, so it never allocates itself.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns its result with the number of allocations it made on this thread.
fn allocations<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = f();
    (result, ALLOCATIONS.with(Cell::get) - before)
}

#[test]
fn the_counter_counts() {
    let (v, n) = allocations(|| vec![1u8; 16]);
    assert_eq!((v.len(), n), (16, 1));
}

#[test]
fn key_validation_allocates_nothing() {
    let keys: Vec<String> = [0, 1, 7, 8, 15, 16, 17, 64, 100, 511, 512, 513, 600]
        .iter()
        .map(|&len| "tenant-0042_user.7+orders@2024".chars().cycle().take(len).collect())
        .chain(["a#b".into(), "tab\there".into(), "é\u{85}".into(), "日本語のキー😀".into(), "😀".repeat(300)])
        .collect();
    for key in &keys {
        let (result, n) = allocations(|| key_rule::check(KeyKind::Row, key));
        assert_eq!(n, 0, "key of {} bytes ({result:?})", key.len());
        // Building the error message allocates; the error itself does not.
        let (_, n) = allocations(|| result.err().map(|e| e.kind()));
        assert_eq!(n, 0);
    }
    // An owned String is validated in place and moved into the key.
    for key in keys.iter().filter(|k| key_rule::check(KeyKind::Row, k).is_ok()) {
        let owned = key.clone();
        let (row, n) = allocations(|| RowKey::try_from(owned));
        assert!(row.is_ok());
        assert_eq!(n, 0, "{key:?}");
    }
}

#[test]
fn name_validation_allocates_nothing() {
    for name in ["Orders", "abc", "A12", "tables", "ab", "my-table", "x".repeat(63).as_str(), "x".repeat(64).as_str()] {
        let (_, n) = allocations(|| table_name::check(name));
        assert_eq!(n, 0, "{name}");
    }
    for name in ["Price", "_private", "Unit_Price2", "RowKey", "unit-price", "", "x".repeat(255).as_str()] {
        let (_, n) = allocations(|| (property_name::check(name), property_name::check_const(name)));
        assert_eq!(n, 0, "{name}");
    }
    let owned = String::from("Orders");
    let (table, n) = allocations(|| TableName::new(owned));
    assert!(table.is_ok());
    assert_eq!(n, 0);
    let owned = String::from("UnitPrice");
    let (property, n) = allocations(|| PropertyName::new(owned));
    assert!(property.is_ok());
    assert_eq!(n, 0);
}

#[test]
fn decoding_a_valid_key_allocates_nothing() {
    let t: DateTime = "2024-05-06T07:08:09.1234567Z".parse().unwrap();
    let chrono_key: RowKey = key::chronological(t);
    let reverse_key: PartitionKey = key::reverse_chronological(t);
    let unique_key: RowKey = key::reverse_chronological_unique(t, 7);
    let id = Uuid::from_u128(0x67e5_5044_10b1_426f_9247_bb68_0e5f_e0c8);
    let (id_key, int_key, wide_key) =
        (id.to_key_string(), (-42i64).to_key_string(), Reverse(u128::MAX).to_key_string());
    let (decoded, n) = allocations(|| {
        (
            key::parse_chronological(&chrono_key).unwrap(),
            key::parse_reverse_chronological(&reverse_key).unwrap(),
            key::parse_reverse_chronological_unique(&unique_key).unwrap(),
            Uuid::from_key_str(&id_key).unwrap(),
            i64::from_key_str(&int_key).unwrap(),
            Reverse::<u128>::from_key_str(&wide_key).unwrap(),
        )
    });
    assert_eq!(decoded, (t, t, (t, 7), id, -42, Reverse(u128::MAX)));
    assert_eq!(n, 0);
}

#[test]
fn a_refused_value_moves_into_its_error() {
    // The error keeps the value for its message: an owned `String` moves in (nothing allocated), a `&str` is
    // copied once. The allocation happens on the error path only.
    let owned = String::from("a#b");
    let (err, n) = allocations(|| RowKey::try_from(owned).unwrap_err());
    assert_eq!(n, 0);
    assert_eq!(err.value(), "a#b");
    let (err, n) = allocations(|| "tab\there".parse::<PartitionKey>().unwrap_err());
    assert_eq!(n, 1);
    assert_eq!(err.to_string(), "invalid partition key \"tab\\there\": character U+0009 at index 3 is not allowed");

    let owned = String::from("audit-log");
    let (err, n) = allocations(|| TableName::new(owned).unwrap_err());
    assert_eq!(n, 0);
    assert!(err.to_string().starts_with("invalid table name \"audit-log\": character `-` at index 5"), "{err}");
    let owned = "x".repeat(600);
    let (err, n) = allocations(|| PropertyName::new(owned).unwrap_err());
    assert_eq!(n, 0);
    assert_eq!(err.value().len(), 600);
    let (_, n) = allocations(|| "unit price".parse::<PropertyName>().unwrap_err());
    assert_eq!(n, 1);
}
