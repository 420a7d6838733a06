//! The protocol layer against its baselines, each measured in the same run so the ratios hold on a noisy
//! machine:
//!
//! - a signed insert request (`TableService::insert`: JSON body, headers, HMAC-SHA256) against encoding the
//!   body alone (`encode_entity`): what a request costs beyond its payload;
//! - an entity address (`TableService::get`, signed) against `format!` of the unescaped address, the code
//!   that gets quotes wrong;
//! - a `$filter` of 15 comparisons rendered by `Filter::render` against `format!` of the same text.
//!
//! Run with `cargo bench -p table-model --bench protocol`. On a busy machine, count instructions instead:
//! `PROTOCOL_BENCH_LOOP=<operation>:<count>` (see `main`) under `valgrind --tool=callgrind`.

use criterion::{black_box, criterion_group, Criterion};
use std::time::{Duration, UNIX_EPOCH};
use table_model::filter::Filter;
use table_model::json::encode_entity;
use table_model::{Entity, PartitionKey, RowKey, TableName, TableService};

fn service() -> TableService {
    TableService::from_connection_string("UseDevelopmentStorage=true")
        .unwrap()
        .at_time(UNIX_EPOCH + Duration::from_secs(1_795_306_922))
}

fn entity() -> Entity {
    let mut e = Entity::new(PartitionKey::new("customer-42").unwrap(), RowKey::new("O'Brien 2024-05").unwrap());
    for i in 0..20 {
        e.insert(format!("Text{i}").parse().unwrap(), "a short string value").unwrap();
        e.insert(format!("Number{i}").parse().unwrap(), i64::from(i) * 1_000_003).unwrap();
    }
    e
}

fn insert(c: &mut Criterion) {
    let (service, table, e) = (service(), TableName::new("Orders").unwrap(), entity());
    let mut group = c.benchmark_group("insert_request");
    group.bench_function("encode_entity (baseline)", |b| b.iter(|| encode_entity(black_box(&e)).unwrap()));
    group.bench_function("TableService::insert", |b| b.iter(|| service.insert(&table, black_box(&e)).unwrap()));
    group.finish();
}

fn address(c: &mut Criterion) {
    let (service, table) = (service(), TableName::new("Orders").unwrap());
    let (pk, rk) = (PartitionKey::new("customer-42").unwrap(), RowKey::new("O'Brien 50%").unwrap());
    let mut group = c.benchmark_group("get_request");
    group.bench_function("format! unescaped (baseline)", |b| {
        b.iter(|| format!("{}/{}(PartitionKey='{}',RowKey='{}')", service.endpoint().url(), table, black_box(&pk), rk))
    });
    group.bench_function("TableService::get", |b| b.iter(|| service.get(&table, black_box(&pk), &rk).unwrap()));
    group.finish();
}

fn filter(c: &mut Criterion) {
    let names: Vec<String> = (0..15).map(|i| format!("Prop{i}")).collect();
    let mut group = c.benchmark_group("filter_15_comparisons");
    group.bench_function("format! (baseline)", |b| {
        b.iter(|| {
            let parts: Vec<String> = names.iter().map(|n| format!("{n} eq 'value'")).collect();
            black_box(parts.join(" and "))
        })
    });
    group.bench_function("Filter build + render", |b| {
        b.iter(|| {
            let f = Filter::all(names.iter().map(|n| Filter::property(n.clone()).eq("value"))).unwrap();
            black_box(f.render().unwrap())
        })
    });
    group.finish();
}

/// One operation of each group, by name, for the loop mode.
fn run(op: &str, service: &TableService, table: &TableName, e: &Entity) {
    let (pk, rk) = (PartitionKey::new("customer-42").unwrap(), RowKey::new("O'Brien 50%").unwrap());
    match op {
        "insert_request/encode_entity" => drop(black_box(encode_entity(black_box(e)).unwrap())),
        "insert_request/TableService::insert" => drop(black_box(service.insert(table, black_box(e)).unwrap())),
        "get_request/format" => drop(black_box(format!(
            "{}/{}(PartitionKey='{}',RowKey='{}')",
            service.endpoint().url(),
            table,
            black_box(&pk),
            rk
        ))),
        "get_request/TableService::get" => drop(black_box(service.get(table, black_box(&pk), &rk).unwrap())),
        _ => panic!("unknown operation `{op}`"),
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = insert, address, filter
}
/// `PROTOCOL_BENCH_LOOP=<operation>:<count>` runs one operation of [`run`] `count` times and exits instead of
/// the criterion run: for counting instructions under `valgrind --tool=callgrind`, which a busy machine does not
/// disturb. The two keys of the get request are built in every run, on both sides.
fn main() {
    if let Ok(spec) = std::env::var("PROTOCOL_BENCH_LOOP") {
        let (service, table, e) = (service(), TableName::new("Orders").unwrap(), entity());
        let (op, count) = spec.rsplit_once(':').expect("PROTOCOL_BENCH_LOOP=<operation>:<count>");
        for _ in 0..count.parse::<usize>().expect("a count") {
            run(op, &service, &table, &e);
        }
        return;
    }
    benches();
    criterion::Criterion::default().configure_from_args().final_summary();
}
