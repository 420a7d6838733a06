//! `#[derive(TableEntity)]`'s direct JSON encode and decode against serde_json's own derive on the same
//! 12-field struct, in the same run. Targets (issue 3): encode within 1.2x, decode within 1.4x.
//!
//! The two sides do not write the same bytes: the Table service's wire format annotates Int64, Double,
//! DateTime and Guid (`"Total@odata.type":"Edm.Double"`), writes Int64 as a string, and is checked against
//! every rule of SPEC.md as it is written or read (names, keys, limits, 1 MiB). The ratio is the price of
//! the real format and the checks, against the fastest generic JSON a Rust user would otherwise write.
//!
//! Run: `cargo bench -p table-model --bench derive`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use serde::{Deserialize, Serialize};
use table_model::json::{decode_entity_with, EntityVisitor, SystemProperties};
use table_model::{DecodeError, EdmType, EdmValue, TableEntity};

#[derive(TableEntity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
#[serde(rename_all = "PascalCase")]
struct Order {
    #[table(partition_key)]
    #[serde(rename = "PartitionKey")]
    customer: String,
    #[table(row_key)]
    #[serde(rename = "RowKey")]
    order_id: String,
    total: f64,
    quantity: i32,
    lines: i64,
    paid: bool,
    note: String,
    id: uuid::Uuid,
    placed: chrono::DateTime<chrono::Utc>,
    discount: Option<f64>,
    status: String,
    region: String,
}

/// A visitor that keeps nothing: what the JSON decoder core costs by itself, whatever the target type.
#[derive(Default)]
struct Discard;

impl EntityVisitor for Discard {
    type Value = ();
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        Order::SCHEMA.edm_type_of(property)
    }
    fn begin(&mut self, _: SystemProperties) -> Result<(), DecodeError> {
        Ok(())
    }
    fn property(&mut self, _: &str, value: EdmValue) -> Result<(), DecodeError> {
        black_box(value);
        Ok(())
    }
    fn end(self) -> Result<(), DecodeError> {
        Ok(())
    }
}

fn order() -> Order {
    Order {
        customer: "customer-000042".into(),
        order_id: "2024-05-17-000123".into(),
        total: 1234.5,
        quantity: 17,
        lines: 9_007_199_254_740_993,
        paid: true,
        note: "leave at the back door, ring twice".into(),
        id: uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef),
        placed: chrono::DateTime::from_timestamp(1_715_950_000, 123_456_700).unwrap(),
        discount: Some(0.15),
        status: "shipped".into(),
        region: "eu-west".into(),
    }
}

fn bench(c: &mut Criterion) {
    let o = order();
    let ours = o.to_json().unwrap();
    let theirs = serde_json::to_vec(&o).unwrap();
    // Both sides decode to the same struct.
    assert_eq!(Order::from_json(ours.as_bytes()).unwrap(), o);
    assert_eq!(serde_json::from_slice::<Order>(&theirs).unwrap(), o);
    // A nometadata response: no annotations, typed from the schema.
    let mut plain: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(ours.as_bytes()).unwrap();
    plain.retain(|k, _| !k.ends_with("@odata.type"));
    let nometadata = serde_json::to_vec(&plain).unwrap();
    assert_eq!(Order::from_json(&nometadata).unwrap(), o);

    let mut g = c.benchmark_group("encode");
    g.throughput(Throughput::Elements(1));
    g.bench_function("serde_json derive", |b| b.iter(|| serde_json::to_vec(black_box(&o)).unwrap()));
    g.bench_function("TableEntity::to_json", |b| b.iter(|| black_box(&o).to_json().unwrap()));
    g.bench_function("to_entity + encode_entity", |b| {
        b.iter(|| table_model::encode_entity(&black_box(&o).to_entity().unwrap()).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(1));
    g.bench_function("serde_json derive", |b| b.iter(|| serde_json::from_slice::<Order>(black_box(&theirs)).unwrap()));
    g.bench_function("TableEntity::from_json minimalmetadata", |b| {
        b.iter(|| Order::from_json(black_box(ours.as_bytes())).unwrap())
    });
    g.bench_function("TableEntity::from_json nometadata", |b| {
        b.iter(|| Order::from_json(black_box(&nometadata)).unwrap())
    });
    g.bench_function("decoder core, discarding visitor (minimalmetadata)", |b| {
        b.iter(|| decode_entity_with(black_box(ours.as_bytes()), Discard).unwrap())
    });
    g.bench_function("decode_entity + from_entity", |b| {
        b.iter(|| Order::from_entity(table_model::decode_entity(black_box(ours.as_bytes()), None).unwrap()).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
