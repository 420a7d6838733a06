//! `#[derive(TableEntity)]`'s direct JSON encode and decode against serde_json's own derive on the same
//! 12-field struct, in the same run. Targets (issue 3): encode within 1.2x, decode within 1.4x.
//!
//! The two sides do not write the same bytes: the Table service's wire format annotates Int64, Double,
//! DateTime and Guid (`"Total@odata.type":"Edm.Double"`), writes Int64 as a string, and is checked against
//! every rule of `docs/rules.md` as it is written or read (names, keys, limits, 1 MiB). The ratio is the price of
//! the real format and the checks, against the fastest generic JSON a Rust user would otherwise write.
//!
//! Run: `cargo bench -p table-model --bench derive`. On a busy machine, count instructions instead (see
//! `main`): `scripts/bench-derive-instructions.sh`.

mod support;

use criterion::{black_box, criterion_group, Criterion};
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

/// One long string: a 32,768-unit non-ASCII value (`é`, two UTF-8 bytes each), the most an `Edm.String` holds.
#[derive(TableEntity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
#[serde(rename_all = "PascalCase")]
struct Note {
    #[table(partition_key)]
    #[serde(rename = "PartitionKey")]
    topic: String,
    #[table(row_key)]
    #[serde(rename = "RowKey")]
    id: String,
    text: String,
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

/// The inputs, checked once: both sides encode the same struct, and every decoder reads it back.
struct Fixture {
    order: Order,
    ours: Vec<u8>,
    nometadata: Vec<u8>,
    theirs: Vec<u8>,
    note: Note,
    /// A query page of 1,000 orders as `to_json` writes them, and as a `200 OK` response.
    page: Vec<u8>,
    page_response: http::Response<Vec<u8>>,
}

impl Fixture {
    fn new() -> Self {
        let order = order();
        let ours = order.to_json().unwrap().into_bytes();
        let theirs = serde_json::to_vec(&order).unwrap();
        assert_eq!(Order::from_json(&ours).unwrap(), order);
        assert_eq!(serde_json::from_slice::<Order>(&theirs).unwrap(), order);
        // A nometadata response: no annotations, typed from the schema.
        let mut plain: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&ours).unwrap();
        plain.retain(|k, _| !k.ends_with("@odata.type"));
        let nometadata = serde_json::to_vec(&plain).unwrap();
        assert_eq!(Order::from_json(&nometadata).unwrap(), order);
        let note = Note { topic: "t".into(), id: "1".into(), text: "é".repeat(32 * 1024) };
        assert_eq!(Note::from_json(note.to_json().unwrap().as_bytes()).unwrap(), note);
        let entities = vec![std::str::from_utf8(&ours).unwrap(); 1000].join(",");
        let page = format!(r#"{{"odata.metadata":"m","value":[{entities}]}}"#).into_bytes();
        let page_response = http::Response::builder().status(200).body(page.clone()).unwrap();
        assert_eq!(Order::from_json_query(&page).unwrap().len(), 1000);
        assert_eq!(table_model::response::query_as::<Order, _>(&page_response).unwrap().entities.len(), 1000);
        Fixture { order, ours, nometadata, theirs, note, page, page_response }
    }

    /// Runs one named operation once.
    fn run(&self, op: &str) {
        let o = black_box(&self.order);
        match op {
            "encode/serde_json_derive" => drop(black_box(serde_json::to_vec(o).unwrap())),
            "encode/to_json" => drop(black_box(o.to_json().unwrap())),
            "encode/to_entity+encode_entity" => {
                drop(black_box(table_model::encode_entity(&o.to_entity().unwrap()).unwrap()))
            }
            "decode/serde_json_derive" => {
                drop(black_box(serde_json::from_slice::<Order>(black_box(&self.theirs)).unwrap()))
            }
            "decode/from_json_minimalmetadata" => drop(black_box(Order::from_json(black_box(&self.ours)).unwrap())),
            "decode/from_json_nometadata" => drop(black_box(Order::from_json(black_box(&self.nometadata)).unwrap())),
            "decode/decoder_core_discarding_minimalmetadata" => {
                decode_entity_with(black_box(&self.ours), Discard).unwrap();
            }
            "decode/decode_entity+from_entity" => drop(black_box(
                Order::from_entity(table_model::decode_entity(black_box(&self.ours), None).unwrap()).unwrap(),
            )),
            "string32k/serde_json_derive" => {
                let json = serde_json::to_vec(black_box(&self.note)).unwrap();
                drop(black_box(serde_json::from_slice::<Note>(&json).unwrap()));
            }
            "string32k/to_json+from_json" => {
                let body = black_box(&self.note).to_json().unwrap();
                drop(black_box(Note::from_json(body.as_bytes()).unwrap()));
            }
            "page/from_json_query" => drop(black_box(Order::from_json_query(black_box(&self.page)).unwrap())),
            "page/response_query_as" => {
                drop(black_box(table_model::response::query_as::<Order, _>(black_box(&self.page_response)).unwrap()))
            }
            _ => panic!("unknown operation `{op}`"),
        }
    }
}

const OPERATIONS: [&str; 8] = [
    "encode/serde_json_derive",
    "encode/to_json",
    "encode/to_entity+encode_entity",
    "decode/serde_json_derive",
    "decode/from_json_minimalmetadata",
    "decode/from_json_nometadata",
    "decode/decoder_core_discarding_minimalmetadata",
    "decode/decode_entity+from_entity",
];

fn bench(c: &mut Criterion) {
    let fixture = Fixture::new();
    support::bench_operations(c, &OPERATIONS, |op| fixture.run(op));
}

criterion_group!(benches, bench);

/// `DERIVE_BENCH_LOOP=<operation>:<count>` runs one operation `count` times and exits instead of the criterion
/// run, for counting instructions under `valgrind --tool=callgrind`, which a busy machine does not disturb:
/// the difference between two counts divided by the difference of iterations is the cost of one.
fn main() {
    let fixture = Fixture::new();
    if support::loop_mode("DERIVE_BENCH_LOOP", |op| fixture.run(op)) {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
