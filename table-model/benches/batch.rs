//! Entity group transactions against serde_json, in the same run (issue 8): 100 derived structs written by
//! `serde_json::to_vec` (the baseline) against the same 100 structs added to a [`Batch`] (`Batch::insert`) and
//! written as a signed `multipart/mixed` request (`TableService::batch`).
//!
//! The two sides do not write the same bytes: a batch body holds each entity in the service's wire format
//! (annotations, Int64 as a string, every rule of `docs/rules.md` checked) inside a sub-request with its own
//! headers, between random boundaries that no body may contain, and the request is signed.
//!
//! The batch response reader is measured at growing sizes: a response of 100 sub-responses as the service
//! writes it, and one sub-response of 1, 4 and 16 MiB of `-` under a 70-character boundary of `-` (the longest
//! the reader accepts), where comparing the boundary at every byte is slowest. The multipart splitter itself
//! (`table-model/src/batch/multipart.rs`, compiled into this benchmark as it is) is measured with an 8 KiB
//! boundary over 1 to 16 MiB, against comparing the boundary at every byte (what the reader did before).
//!
//! Run: `cargo bench -p table-model --bench batch`. On a busy machine: `BATCH_BENCH_COMPARE=<rounds>` prints
//! interleaved minima and their ratios, and `scripts/bench-batch-instructions.sh` counts instructions with
//! callgrind (`BATCH_BENCH_LOOP=<operation>:<count>`).

mod support;

#[allow(dead_code)]
#[path = "../src/batch/multipart.rs"]
mod multipart;

use criterion::{black_box, criterion_group, Criterion};
use serde::Serialize;
use std::cell::OnceCell;
use std::time::{Duration, UNIX_EPOCH};
use table_model::{response, Batch, PartitionKey, TableEntity, TableName, TableService};

#[derive(TableEntity, Serialize, Debug, Clone, PartialEq)]
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

/// The `i`th of the 100 orders: the derive benchmark's values, one RowKey each.
fn order(i: u32) -> Order {
    Order {
        customer: "customer-000042".into(),
        order_id: format!("2024-05-17-{i:06}"),
        total: 1234.5 + f64::from(i),
        quantity: 17,
        lines: 9_007_199_254_740_993,
        paid: true,
        note: "leave at the back door, ring twice".into(),
        id: uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef + u128::from(i)),
        placed: chrono::DateTime::from_timestamp(1_715_950_000, 123_456_700).unwrap(),
        discount: Some(0.15),
        status: "shipped".into(),
        region: "eu-west".into(),
    }
}

/// The boundary of the large responses: 70 characters (the longest the reader accepts), all `-` but the last,
/// over a body of `-`: every byte starts 71 matching bytes of the delimiter.
fn hostile_boundary(len: usize) -> String {
    format!("{}x", "-".repeat(len - 1))
}

/// A `202` batch response of one sub-response whose body is `size` bytes of `-`.
fn large_response(size: usize) -> http::Response<Vec<u8>> {
    let boundary = hostile_boundary(70);
    let mut body =
        format!("--{boundary}\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n").into_bytes();
    body.resize(body.len() + size, b'-');
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    http::Response::builder()
        .status(202)
        .header("content-type", format!("multipart/mixed; boundary={boundary}"))
        .body(body)
        .unwrap()
}

/// The service's answer to a batch of `n` inserts: one changeset of `n` `204 No Content` sub-responses.
fn response_of(n: usize) -> http::Response<Vec<u8>> {
    let mut body =
        "--batchresponse_7ab1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_f2e3\r\n\r\n".to_owned();
    for i in 0..n {
        body.push_str(&format!(
            "--changesetresponse_f2e3\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n\
             Preference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\n\
             ETag: W/\"datetime'2024-05-17T10%3A00%3A00.{i:07}Z'\"\r\n\r\n\r\n"
        ));
    }
    body.push_str("--changesetresponse_f2e3--\r\n--batchresponse_7ab1--\r\n");
    http::Response::builder()
        .status(202)
        .header("content-type", "multipart/mixed; boundary=batchresponse_7ab1")
        .body(body.into_bytes())
        .unwrap()
}

/// The parts of a multipart body with the boundary compared at every byte: the reader's search before.
fn split_naive<'a>(body: &'a [u8], boundary: &[u8]) -> Vec<&'a [u8]> {
    let find = |haystack: &[u8], needle: &[u8]| haystack.windows(needle.len()).position(|w| w == needle);
    let delimiter = [b"--", boundary].concat();
    let mut parts = Vec::new();
    let Some(first) = find(body, &delimiter) else { return parts };
    let mut rest = &body[first + delimiter.len()..];
    while !rest.starts_with(b"--") {
        let Some(next) = find(rest, &delimiter) else { break };
        parts.push(&rest[..next]);
        rest = &rest[next + delimiter.len()..];
    }
    parts
}

/// A multipart body and its boundary.
type Multipart = (Vec<u8>, Vec<u8>);

/// `size` bytes of `-` between two delimiters of an 8 KiB boundary of `-`.
fn multipart_8k(size: usize) -> Multipart {
    let boundary = hostile_boundary(8 * 1024).into_bytes();
    let mut body = [b"--", &boundary[..], b"\r\n"].concat();
    body.resize(body.len() + size, b'-');
    body.extend_from_slice(&[b"\r\n--", &boundary[..], b"--\r\n"].concat());
    (body, boundary)
}

const MIB: usize = 1024 * 1024;

/// The inputs, checked once.
struct Fixture {
    service: TableService,
    table: TableName,
    partition_key: PartitionKey,
    orders: Vec<Order>,
    batch: Batch,
    response_100: http::Response<Vec<u8>>,
    /// Built on first use: a loop of one operation under callgrind builds only what it reads.
    large: OnceCell<Vec<(usize, http::Response<Vec<u8>>)>>,
    multipart: OnceCell<Vec<(usize, Multipart)>>,
}

impl Fixture {
    fn new() -> Self {
        let service = TableService::from_connection_string("UseDevelopmentStorage=true")
            .unwrap()
            .at_time(UNIX_EPOCH + Duration::from_secs(1_795_306_922));
        let table = TableName::new("Orders").unwrap();
        let partition_key = PartitionKey::new("customer-000042").unwrap();
        let orders: Vec<Order> = (0..100).map(order).collect();
        let mut batch = Batch::new(table.clone(), partition_key.clone());
        for o in &orders {
            batch.insert(o).unwrap();
        }
        let request = service.batch(&batch).unwrap();
        // Every entity's body is in the request, as to_json writes it.
        let body = request.body();
        for o in &orders {
            let json = o.to_json().unwrap();
            assert!(body.windows(json.as_bytes().len()).any(|w| w == json.as_bytes()));
        }
        let response_100 = response_of(100);
        assert_eq!(response::batch(&response_100, 100).unwrap().etags.len(), 100);
        let (body, boundary) = multipart_8k(1024);
        assert_eq!((multipart::split(&body, &boundary).len(), split_naive(&body, &boundary).len()), (1, 1));
        let (large, multipart) = (OnceCell::new(), OnceCell::new());
        Fixture { service, table, partition_key, orders, batch, response_100, large, multipart }
    }

    fn insert_100(&self) -> Batch {
        let mut batch = Batch::new(self.table.clone(), self.partition_key.clone());
        for o in &self.orders {
            batch.insert(black_box(o)).unwrap();
        }
        batch
    }

    fn large(&self, mib: usize) -> &http::Response<Vec<u8>> {
        let large = self.large.get_or_init(|| {
            let large: Vec<_> = [MIB, 4 * MIB, 16 * MIB].into_iter().map(|n| (n, large_response(n))).collect();
            for (_, r) in &large {
                assert_eq!(response::batch(r, 1).unwrap().etags, vec![None]);
            }
            large
        });
        &large.iter().find(|(n, _)| *n == mib * MIB).unwrap().1
    }

    fn multipart(&self, kib: usize) -> (&[u8], &[u8]) {
        let multipart = self
            .multipart
            .get_or_init(|| [MIB / 4, MIB, 4 * MIB, 16 * MIB].into_iter().map(|n| (n, multipart_8k(n))).collect());
        let (body, boundary) = &multipart.iter().find(|(n, _)| *n == kib * 1024).unwrap().1;
        (body, boundary)
    }

    /// Runs one named operation once.
    fn run(&self, op: &str) {
        match op {
            "serde_json_to_vec_100 (baseline)" => {
                for o in &self.orders {
                    black_box(serde_json::to_vec(black_box(o)).unwrap());
                }
            }
            "to_json_100" => {
                for o in &self.orders {
                    black_box(black_box(o).to_json().unwrap());
                }
            }
            "Batch::insert_100" => drop(black_box(self.insert_100())),
            "TableService::batch_100" => drop(black_box(self.service.batch(black_box(&self.batch)).unwrap())),
            "insert_100+TableService::batch" => {
                let batch = self.insert_100();
                drop(black_box(self.service.batch(&batch).unwrap()));
            }
            "response::batch_100" => drop(black_box(response::batch(black_box(&self.response_100), 100).unwrap())),
            "response::batch_1MiB" => drop(black_box(response::batch(self.large(1), 1).unwrap())),
            "response::batch_4MiB" => drop(black_box(response::batch(self.large(4), 1).unwrap())),
            "response::batch_16MiB" => drop(black_box(response::batch(self.large(16), 1).unwrap())),
            _ => {
                // `split/<memmem|naive>_<KiB>KiB`: the splitter with an 8 KiB boundary.
                let (kind, kib) = op
                    .strip_prefix("split8k/")
                    .and_then(|rest| rest.strip_suffix("KiB"))
                    .and_then(|rest| rest.split_once('_'))
                    .unwrap_or_else(|| panic!("unknown operation `{op}`"));
                let (body, boundary) = self.multipart(kib.parse().unwrap());
                let parts = match kind {
                    "memmem" => multipart::split(black_box(body), boundary).len(),
                    "naive" => split_naive(black_box(body), boundary).len(),
                    _ => panic!("unknown operation `{op}`"),
                };
                assert_eq!(parts, 1);
            }
        }
    }
}

/// The operations criterion runs, and their repetitions per timed round in [`compare`].
const OPERATIONS: [(&str, u32); 9] = [
    ("serde_json_to_vec_100 (baseline)", 5),
    ("to_json_100", 5),
    ("Batch::insert_100", 5),
    ("TableService::batch_100", 5),
    ("insert_100+TableService::batch", 5),
    ("response::batch_100", 5),
    ("response::batch_1MiB", 2),
    ("response::batch_4MiB", 1),
    ("response::batch_16MiB", 1),
];

/// The splitter's operations, timed only in [`compare`] (the naive one takes seconds at 16 MiB).
const SPLITS: [(&str, u32); 8] = [
    ("split8k/memmem_256KiB", 5),
    ("split8k/memmem_1024KiB", 2),
    ("split8k/memmem_4096KiB", 1),
    ("split8k/memmem_16384KiB", 1),
    ("split8k/naive_256KiB", 1),
    ("split8k/naive_1024KiB", 1),
    ("split8k/naive_4096KiB", 1),
    ("split8k/naive_16384KiB", 1),
];

fn bench(c: &mut Criterion) {
    let fixture = Fixture::new();
    let names: Vec<&'static str> = OPERATIONS.iter().map(|(op, _)| *op).collect();
    support::bench_operations(c, &names, |op| fixture.run(op));
}

criterion_group!(benches, bench);

/// Interleaves the operations and keeps each one's fastest round: on a machine busy with other work, the
/// minimum over many interleaved rounds is far steadier than criterion's sequential means. Ratios are to the
/// serde_json baseline; the large inputs run in the first rounds only.
fn compare(rounds: usize) {
    let fixture = Fixture::new();
    let all: Vec<(&str, u32)> = OPERATIONS.iter().chain(&SPLITS).copied().collect();
    let mut best = vec![f64::INFINITY; all.len()];
    for round in 0..rounds {
        for ((op, reps), best) in all.iter().zip(&mut best) {
            // The large inputs take milliseconds to seconds (the naive splitter at 16 MiB): the first three
            // rounds only, the naive splitter the first only.
            let large = op.starts_with("split8k") || op.contains("MiB");
            if (large && round >= 3) || (op.starts_with("split8k/naive") && round >= 1) {
                continue;
            }
            let start = std::time::Instant::now();
            for _ in 0..*reps {
                fixture.run(op);
            }
            *best = best.min(start.elapsed().as_secs_f64() * 1e6 / f64::from(*reps));
        }
    }
    let serde = best[0];
    println!("{:<36} {:>14}  {:>12}", "operation", "µs (min)", "ratio");
    for ((op, _), us) in all.iter().zip(&best) {
        let ratio = if op.starts_with("split8k") || op.contains("MiB") {
            String::new()
        } else {
            format!("{:.2}x serde", us / serde)
        };
        println!("{op:<36} {us:>14.1}  {ratio:>12}");
    }
}

/// `BATCH_BENCH_LOOP=<operation>:<count>` runs one operation `count` times and exits instead of the criterion
/// run, for counting instructions under `valgrind --tool=callgrind`, which a busy machine does not disturb: the
/// difference between two counts divided by the difference of iterations is the cost of one.
/// `BATCH_BENCH_COMPARE=<rounds>` prints interleaved minimum times and ratios (see [`compare`]).
fn main() {
    if let Ok(rounds) = std::env::var("BATCH_BENCH_COMPARE") {
        compare(rounds.parse().expect("a number of rounds"));
        return;
    }
    let fixture = Fixture::new();
    if support::loop_mode("BATCH_BENCH_LOOP", |op| fixture.run(op)) {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
