//! Key validation against the `regex` crate, and the key helpers against the code users write by hand.
//!
//! Run with `cargo bench -p table-model --bench keys`. Each group measures the baseline in the same run, so
//! the ratios hold on a noisy machine; see `BENCHMARKS.md` for the results.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use regex::Regex;
use std::time::Duration;
use table_model::key::{self, CompositeKey};
use table_model::limits::{DATETIME_MAX_TICKS, KEY_MAX_UTF16};
use table_model::{DateTime, KeyKind, RowKey};

/// An ASCII key of `len` bytes that passes every rule, so every validator reads it to the end.
fn ascii_key(len: usize) -> String {
    "tenant-0042_user.7+orders@2024-05-06T07:08:09Z".chars().cycle().take(len).collect()
}

fn validation(c: &mut Criterion) {
    // The rule of `docs/rules.md` §2.1 as a regex over the whole string, plus the UTF-16 length check (which only
    // needs counting when the UTF-8 length is over the limit, the same shortcut the validator takes).
    let re = Regex::new(r"^[^/\\#?\x00-\x1F\x7F-\x9F]*$").unwrap();
    let regex_check =
        |s: &str| re.is_match(s) && (s.len() <= KEY_MAX_UTF16 || s.encode_utf16().count() <= KEY_MAX_UTF16);
    let mut group = c.benchmark_group("key_validation");
    for len in [16, 64, 512] {
        let key = ascii_key(len);
        assert!(table_model_rules::key::check(KeyKind::Row, &key).is_ok() && regex_check(&key));
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_with_input(BenchmarkId::new("table_model_rules::key::check", len), &key, |b, key| {
            b.iter(|| table_model_rules::key::check(KeyKind::Row, black_box(key)))
        });
        group.bench_with_input(BenchmarkId::new("regex", len), &key, |b, key| b.iter(|| regex_check(black_box(key))));
    }
    group.finish();
}

fn time_keys(c: &mut Criterion) {
    let t: DateTime = "2024-05-06T07:08:09.1234567Z".parse().unwrap();
    let mut group = c.benchmark_group("reverse_chronological_key");
    group.bench_function("key::reverse_chronological", |b| {
        b.iter(|| key::reverse_chronological::<RowKey, _>(black_box(t)))
    });
    // What users write today: format the inverted ticks and validate the result.
    group.bench_function("format! + RowKey::new", |b| {
        b.iter(|| RowKey::new(format!("{:019}", DATETIME_MAX_TICKS - black_box(t).ticks())).unwrap())
    });
    let row: RowKey = key::reverse_chronological(t);
    group.bench_function("key::parse_reverse_chronological", |b| {
        b.iter(|| key::parse_reverse_chronological(black_box(&row)).unwrap())
    });
    group.bench_function("str::parse::<i64> (no checks)", |b| {
        b.iter(|| DATETIME_MAX_TICKS - black_box(row.as_str()).parse::<i64>().unwrap())
    });
    group.finish();
}

fn composite_keys(c: &mut Criterion) {
    let plain = ["tenant-0042", "user-7", "2024-05-06"];
    let escaped = ["tenant-0042", "user/7", "2024-05-06"];
    let mut group = c.benchmark_group("composite_key");
    group.bench_function("CompositeKey::from_parts + into_row_key", |b| {
        b.iter(|| CompositeKey::from_parts(black_box(plain)).into_row_key().unwrap())
    });
    group.bench_function("CompositeKey::from_parts + into_row_key (one escape)", |b| {
        b.iter(|| CompositeKey::from_parts(black_box(escaped)).into_row_key().unwrap())
    });
    // The floor: join and validate, with no escaping (wrong for `user/7`, which it cannot represent).
    group.bench_function("join + RowKey::new (no escaping)", |b| {
        b.iter(|| RowKey::new(black_box(plain).join(" ")).unwrap())
    });
    let joined = CompositeKey::from_parts(plain).into_row_key().unwrap();
    group.bench_function("split_composite", |b| b.iter(|| key::split_composite(black_box(&joined)).unwrap()));
    group.bench_function("str::split + collect (no escaping)", |b| {
        b.iter(|| black_box(joined.as_str()).split(' ').map(String::from).collect::<Vec<_>>())
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = validation, time_keys, composite_keys
}
criterion_main!(benches);
