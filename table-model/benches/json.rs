//! JSON wire format against plain `serde_json`, in the same run: `cargo bench -p table-model --bench json`.
//!
//! The baseline is a `#[derive(Serialize, Deserialize)]` struct holding the same values, with the Guid,
//! DateTime and Binary values as ready-made strings (serde_json has no such types), so it does strictly less
//! work: no annotations, no formatting of those three, no validation. Each group measures:
//! - `entity`: [`encode_entity`] / [`decode_entity`] with the dynamic [`Entity`];
//! - `struct_streaming`: a typed struct through [`BodyWriter`] / an [`EntityVisitor`], what the derive generates;
//! - `serde_json_struct`: the baseline.

mod support;

use criterion::{black_box, criterion_group, Criterion};
use serde::{Deserialize, Serialize};
use table_model::json::{
    decode_entity, decode_entity_with, encode_entity, BodyWriter, EntityVisitor, SystemProperties,
};
use table_model::{DateTime, DecodeError, EdmType, EdmValue, Entity, FromEdm, PartitionKey, PropertyName, RowKey};
use uuid::Uuid;

/// The entity's values as typed Rust fields: what a derived struct holds.
#[derive(Debug, Clone, PartialEq)]
struct Customer {
    partition_key: String,
    row_key: String,
    name: String,
    email: String,
    age: i32,
    visits: i64,
    score: f64,
    balance: f64,
    active: bool,
    id: Uuid,
    created: DateTime,
    avatar: Vec<u8>,
    notes: String,
    rating: i32,
}

/// The baseline: the same values in a plain serde struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Plain {
    partition_key: String,
    row_key: String,
    name: String,
    email: String,
    age: i32,
    visits: i64,
    score: f64,
    balance: f64,
    active: bool,
    id: String,
    created: String,
    avatar: String,
    notes: String,
    rating: i32,
}

/// A second baseline for decoding: the same minimalmetadata response as the entity decoders read, into a
/// plain struct with a `String` for every member (metadata, annotations, and the values JSON cannot type).
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct PlainResponse {
    #[serde(rename = "odata.metadata")]
    metadata: String,
    #[serde(rename = "odata.etag")]
    etag: String,
    #[serde(rename = "PartitionKey")]
    partition_key: String,
    #[serde(rename = "RowKey")]
    row_key: String,
    #[serde(rename = "Timestamp")]
    timestamp: String,
    #[serde(rename = "Name")]
    name: String,
    #[serde(rename = "Email")]
    email: String,
    #[serde(rename = "Age")]
    age: i32,
    #[serde(rename = "Visits@odata.type")]
    visits_type: String,
    #[serde(rename = "Visits")]
    visits: String,
    #[serde(rename = "Score")]
    score: f64,
    #[serde(rename = "Balance")]
    balance: f64,
    #[serde(rename = "Active")]
    active: bool,
    #[serde(rename = "Id@odata.type")]
    id_type: String,
    #[serde(rename = "Id")]
    id: String,
    #[serde(rename = "Created@odata.type")]
    created_type: String,
    #[serde(rename = "Created")]
    created: String,
    #[serde(rename = "Avatar@odata.type")]
    avatar_type: String,
    #[serde(rename = "Avatar")]
    avatar: String,
    #[serde(rename = "Notes")]
    notes: String,
    #[serde(rename = "Rating")]
    rating: i32,
}

fn customer() -> Customer {
    Customer {
        partition_key: "tenant-0042".into(),
        row_key: "2518977465384567432-000123".into(),
        name: "Ada Lovelace".into(),
        email: "ada@example.com".into(),
        age: 36,
        visits: 1_234_567_890_123,
        score: 98.6,
        balance: -1234.5,
        active: true,
        id: Uuid::from_u128(0xc9da6455_213d_42c9_9a79_3e9149a57833),
        created: DateTime::parse("2024-05-06T07:08:09.1234567Z").unwrap(),
        avatar: (0u8..32).collect(),
        notes: "Prefers \"analytical engine\" over difference engine; follow up in Q3 about the notes on Bernoulli numbers."
            .into(),
        rating: 5,
    }
}

fn plain(c: &Customer) -> Plain {
    use base64::Engine as _;
    Plain {
        partition_key: c.partition_key.clone(),
        row_key: c.row_key.clone(),
        name: c.name.clone(),
        email: c.email.clone(),
        age: c.age,
        visits: c.visits,
        score: c.score,
        balance: c.balance,
        active: c.active,
        id: c.id.hyphenated().to_string(),
        created: c.created.to_string(),
        avatar: base64::engine::general_purpose::STANDARD.encode(&c.avatar),
        notes: c.notes.clone(),
        rating: c.rating,
    }
}

fn entity(c: &Customer) -> Entity {
    let n = |s: &str| PropertyName::new(s).unwrap();
    Entity::new(PartitionKey::new(c.partition_key.as_str()).unwrap(), RowKey::new(c.row_key.as_str()).unwrap())
        .with(n("Name"), c.name.as_str())
        .and_then(|e| e.with(n("Email"), c.email.as_str()))
        .and_then(|e| e.with(n("Age"), c.age))
        .and_then(|e| e.with(n("Visits"), c.visits))
        .and_then(|e| e.with(n("Score"), c.score))
        .and_then(|e| e.with(n("Balance"), c.balance))
        .and_then(|e| e.with(n("Active"), c.active))
        .and_then(|e| e.with(n("Id"), c.id))
        .and_then(|e| e.with(n("Created"), c.created))
        .and_then(|e| e.with(n("Avatar"), c.avatar.clone()))
        .and_then(|e| e.with(n("Notes"), c.notes.as_str()))
        .and_then(|e| e.with(n("Rating"), c.rating))
        .unwrap()
}

/// What `#[derive(TableEntity)]` can generate for encoding: one writer call per field, with the names as
/// `const` [`PropertyName`]s checked at compile time (so the writer does not check them again).
fn encode_struct(c: &Customer) -> Vec<u8> {
    const NAME: PropertyName = PropertyName::from_static("Name");
    const EMAIL: PropertyName = PropertyName::from_static("Email");
    const AGE: PropertyName = PropertyName::from_static("Age");
    const VISITS: PropertyName = PropertyName::from_static("Visits");
    const SCORE: PropertyName = PropertyName::from_static("Score");
    const BALANCE: PropertyName = PropertyName::from_static("Balance");
    const ACTIVE: PropertyName = PropertyName::from_static("Active");
    const ID: PropertyName = PropertyName::from_static("Id");
    const CREATED: PropertyName = PropertyName::from_static("Created");
    const AVATAR: PropertyName = PropertyName::from_static("Avatar");
    const NOTES: PropertyName = PropertyName::from_static("Notes");
    const RATING: PropertyName = PropertyName::from_static("Rating");
    let mut w = BodyWriter::new(&c.partition_key, &c.row_key);
    w.property_str(&NAME, &c.name)
        .property_str(&EMAIL, &c.email)
        .property_i32(&AGE, c.age)
        .property_i64(&VISITS, c.visits)
        .property_f64(&SCORE, c.score)
        .property_f64(&BALANCE, c.balance)
        .property_bool(&ACTIVE, c.active)
        .property_uuid(&ID, c.id)
        .property_datetime(&CREATED, c.created)
        .property_bytes(&AVATAR, &c.avatar)
        .property_str(&NOTES, &c.notes)
        .property_i32(&RATING, c.rating);
    w.finish().unwrap().into_bytes()
}

/// What `#[derive(TableEntity)]` generates for decoding: a visitor with one slot per field.
#[derive(Default)]
struct CustomerVisitor {
    partition_key: Option<String>,
    row_key: Option<String>,
    name: Option<String>,
    email: Option<String>,
    age: Option<i32>,
    visits: Option<i64>,
    score: Option<f64>,
    balance: Option<f64>,
    active: Option<bool>,
    id: Option<Uuid>,
    created: Option<DateTime>,
    avatar: Option<Vec<u8>>,
    notes: Option<String>,
    rating: Option<i32>,
}

fn required<T>(slot: Option<T>, name: &str) -> Result<T, DecodeError> {
    slot.ok_or_else(|| DecodeError::missing_property(name))
}

impl EntityVisitor for CustomerVisitor {
    type Value = Customer;

    fn edm_type(&self, property: &str) -> Option<EdmType> {
        Some(match property {
            "Name" | "Email" | "Notes" => EdmType::String,
            "Age" | "Rating" => EdmType::Int32,
            "Visits" => EdmType::Int64,
            "Score" | "Balance" => EdmType::Double,
            "Active" => EdmType::Boolean,
            "Id" => EdmType::Guid,
            "Created" => EdmType::DateTime,
            "Avatar" => EdmType::Binary,
            _ => return None,
        })
    }

    fn begin(&mut self, system: SystemProperties) -> Result<(), DecodeError> {
        self.partition_key = system.partition_key.map(PartitionKey::into_string);
        self.row_key = system.row_key.map(RowKey::into_string);
        Ok(())
    }

    fn property(&mut self, name: &str, value: EdmValue) -> Result<(), DecodeError> {
        match name {
            "Name" => self.name = Some(FromEdm::from_edm(value)?),
            "Email" => self.email = Some(FromEdm::from_edm(value)?),
            "Age" => self.age = Some(FromEdm::from_edm(value)?),
            "Visits" => self.visits = Some(FromEdm::from_edm(value)?),
            "Score" => self.score = Some(FromEdm::from_edm(value)?),
            "Balance" => self.balance = Some(FromEdm::from_edm(value)?),
            "Active" => self.active = Some(FromEdm::from_edm(value)?),
            "Id" => self.id = Some(FromEdm::from_edm(value)?),
            "Created" => self.created = Some(FromEdm::from_edm(value)?),
            "Avatar" => self.avatar = Some(FromEdm::from_edm(value)?),
            "Notes" => self.notes = Some(FromEdm::from_edm(value)?),
            "Rating" => self.rating = Some(FromEdm::from_edm(value)?),
            _ => {}
        }
        Ok(())
    }

    fn end(self) -> Result<Customer, DecodeError> {
        Ok(Customer {
            partition_key: required(self.partition_key, "PartitionKey")?,
            row_key: required(self.row_key, "RowKey")?,
            name: required(self.name, "Name")?,
            email: required(self.email, "Email")?,
            age: required(self.age, "Age")?,
            visits: required(self.visits, "Visits")?,
            score: required(self.score, "Score")?,
            balance: required(self.balance, "Balance")?,
            active: required(self.active, "Active")?,
            id: required(self.id, "Id")?,
            created: required(self.created, "Created")?,
            avatar: required(self.avatar, "Avatar")?,
            notes: required(self.notes, "Notes")?,
            rating: required(self.rating, "Rating")?,
        })
    }
}

/// The entity as a minimalmetadata response carries it: `odata.etag`, an unannotated `Timestamp`, and
/// annotations for Int64, Guid, DateTime and Binary only (doubles with a decimal point need none).
fn minimal_metadata_response(c: &Customer) -> Vec<u8> {
    let p = plain(c);
    format!(
        concat!(
            r#"{{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Customers/@Element","#,
            r#""odata.etag":"W/\"datetime'2024-05-06T07%3A08%3A10.7654321Z'\"","#,
            r#""PartitionKey":"{}","RowKey":"{}","Timestamp":"2024-05-06T07:08:10.7654321Z","#,
            r#""Name":"{}","Email":"{}","Age":{},"Visits@odata.type":"Edm.Int64","Visits":"{}","#,
            r#""Score":{:?},"Balance":{:?},"Active":{},"Id@odata.type":"Edm.Guid","Id":"{}","#,
            r#""Created@odata.type":"Edm.DateTime","Created":"{}","Avatar@odata.type":"Edm.Binary","Avatar":"{}","#,
            r#""Notes":{},"Rating":{}}}"#
        ),
        p.partition_key,
        p.row_key,
        p.name,
        p.email,
        p.age,
        p.visits,
        p.score,
        p.balance,
        p.active,
        p.id,
        p.created,
        p.avatar,
        serde_json::to_string(&p.notes).unwrap(),
        p.rating
    )
    .into_bytes()
}

/// The inputs, built once and checked against each other.
struct Fixture {
    customer: Customer,
    plain: Plain,
    entity: Entity,
    /// The minimalmetadata response the entity decoders read.
    response: Vec<u8>,
    /// The baseline's own JSON, without metadata or annotations.
    plain_json: Vec<u8>,
}

impl Fixture {
    fn new() -> Self {
        let customer = customer();
        let plain = plain(&customer);
        let entity = entity(&customer);
        let response = minimal_metadata_response(&customer);
        let plain_json = serde_json::to_vec(&plain).unwrap();
        // Both encoders write the same values; every decoder reads them back.
        assert_eq!(encode_entity(&entity).unwrap().into_bytes(), encode_struct(&customer));
        assert_eq!(decode_entity(&response, None).unwrap().iter().count(), entity.len());
        assert_eq!(decode_entity_with(&response, CustomerVisitor::default()).unwrap(), customer);
        assert_eq!(serde_json::from_slice::<Plain>(&plain_json).unwrap(), plain);
        assert_eq!(serde_json::from_slice::<PlainResponse>(&response).unwrap().notes, plain.notes);
        Fixture { customer, plain, entity, response, plain_json }
    }

    /// Runs one named operation once.
    fn run(&self, op: &str) {
        match op {
            "encode/entity" => drop(black_box(encode_entity(black_box(&self.entity)).unwrap())),
            "encode/struct_streaming" => drop(black_box(encode_struct(black_box(&self.customer)))),
            "encode/serde_json_struct" => drop(black_box(serde_json::to_vec(black_box(&self.plain)).unwrap())),
            "decode/entity" => drop(black_box(decode_entity(black_box(&self.response), None).unwrap())),
            "decode/struct_streaming" => {
                drop(black_box(decode_entity_with(black_box(&self.response), CustomerVisitor::default()).unwrap()))
            }
            "decode/serde_json_struct" => {
                drop(black_box(serde_json::from_slice::<Plain>(black_box(&self.plain_json)).unwrap()))
            }
            "decode/serde_json_struct_same_response" => {
                drop(black_box(serde_json::from_slice::<PlainResponse>(black_box(&self.response)).unwrap()))
            }
            _ => panic!("unknown operation `{op}`"),
        }
    }
}

const OPERATIONS: [&str; 7] = [
    "encode/entity",
    "encode/struct_streaming",
    "encode/serde_json_struct",
    "decode/entity",
    "decode/struct_streaming",
    "decode/serde_json_struct",
    "decode/serde_json_struct_same_response",
];

fn bench(c: &mut Criterion) {
    let fixture = Fixture::new();
    support::bench_operations(c, &OPERATIONS, |op| fixture.run(op));
}

criterion_group!(benches, bench);

/// Interleaves the operations in short batches and keeps each one's fastest batch: on a machine busy with other
/// work, the minimum over many interleaved rounds is far steadier than criterion's sequential means.
fn compare(rounds: usize) {
    const BATCH: u32 = 1000;
    let fixture = Fixture::new();
    let mut best = [f64::INFINITY; OPERATIONS.len()];
    for _ in 0..rounds {
        for (op, best) in OPERATIONS.iter().zip(&mut best) {
            let start = std::time::Instant::now();
            for _ in 0..BATCH {
                fixture.run(op);
            }
            *best = best.min(start.elapsed().as_secs_f64() * 1e9 / f64::from(BATCH));
        }
    }
    let by_name = |name: &str| best[OPERATIONS.iter().position(|op| *op == name).unwrap()];
    println!("{:<40} {:>10}  {:>22}  {:>10}", "operation", "ns (min)", "vs serde_json_struct", "vs same_response");
    for (op, ns) in OPERATIONS.iter().zip(best) {
        let group = op.split('/').next().unwrap();
        let baseline = by_name(&format!("{group}/serde_json_struct"));
        let same = if group == "decode" {
            format!("{:.2}x", ns / by_name("decode/serde_json_struct_same_response"))
        } else {
            "-".to_owned()
        };
        println!("{op:<40} {ns:>10.0}  {:>21.2}x  {same:>10}", ns / baseline);
    }
}

/// The operations over inputs of a chosen size, built once before the loop: `props/<n>` encodes and decodes an
/// `Entity` of `n` properties named `P000`, `P001`, ... (the names that fill the name filter soonest);
/// `members/values/<n>`, `members/nulls/<n>` and `members/annotations_apart/<n>` decode a body of `n`
/// properties with values (refused at the 253rd), `n` null properties (absent values: no limit), and `n` null
/// properties followed by `n` type annotations for them, far from their values.
fn sized(op: &str) -> Option<Box<dyn Fn()>> {
    let (kind, n) = op.rsplit_once('/')?;
    let n: usize = n.parse().ok()?;
    let members = |member: &dyn Fn(usize) -> String| (0..n).map(member).collect::<String>();
    let body = |members: String| format!(r#"{{"PartitionKey":"p","RowKey":"r"{members}}}"#).into_bytes();
    match kind {
        "props" => {
            let mut e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
            for i in 0..n {
                let name = PropertyName::new(format!("P{i:03}")).unwrap();
                match i % 4 {
                    0 => e.insert(name, format!("value {i}")),
                    1 => e.insert(name, i as i32),
                    2 => e.insert(name, i as i64),
                    _ => e.insert(name, i as f64 + 0.5),
                }
                .unwrap();
            }
            assert_eq!(decode_entity(encode_entity(&e).unwrap().as_bytes(), None).unwrap(), e);
            Some(Box::new(move || {
                let body = encode_entity(black_box(&e)).unwrap();
                drop(black_box(decode_entity(body.as_bytes(), None).unwrap()));
            }))
        }
        "members/values" | "members/nulls" | "members/annotations_apart" => {
            let json = match kind {
                "members/values" => body(members(&|i| format!(r#","P{i}":{i}"#))),
                "members/nulls" => body(members(&|i| format!(r#","P{i}":null"#))),
                _ => body(
                    members(&|i| format!(r#","P{i}":null"#))
                        + &members(&|i| format!(r#","P{i}@odata.type":"Edm.Int64""#)),
                ),
            };
            let refused = kind == "members/values" && n > 252;
            assert_eq!(decode_entity(&json, None).is_err(), refused);
            Some(Box::new(move || drop(black_box(decode_entity(black_box(&json), None)))))
        }
        _ => None,
    }
}

/// `JSON_BENCH_LOOP=<operation>:<count>` runs one operation `count` times and exits, instead of the
/// criterion run: for counting instructions under `valgrind --tool=callgrind`, which a busy machine does not
/// disturb. The difference between two counts divided by the difference of iterations is the cost of one. The
/// operations of [`sized`] run only this way.
/// `JSON_BENCH_COMPARE=<rounds>` prints interleaved minimum times and ratios (see [`compare`]).
fn main() {
    if let Ok(rounds) = std::env::var("JSON_BENCH_COMPARE") {
        compare(rounds.parse().expect("a number of rounds"));
        return;
    }
    if let Some(run) = std::env::var("JSON_BENCH_LOOP").ok().and_then(|spec| sized(spec.split_once(':')?.0)) {
        support::loop_mode("JSON_BENCH_LOOP", |_| run());
        return;
    }
    let fixture = Fixture::new();
    if support::loop_mode("JSON_BENCH_LOOP", |op| fixture.run(op)) {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
