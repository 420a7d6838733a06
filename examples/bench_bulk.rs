//! One side of `scripts/bench-vs-python.sh`: inserts 10,000 entities with `bulk_write` and reads them all back
//! with one query, against the Table service in `TABLE_MODEL_AZURITE_ENDPOINT`, and prints one JSON line with
//! the time of each phase and the process's peak memory. Not an example to learn from: run it through the
//! script, which builds it in release mode and runs it against the Python SDK in the same run.
//!
//! ```text
//! bench_bulk --table NAME [--count 10000] [--partitions 10] [--concurrency 0] [--variant LABEL]
//! ```
//!
//! The entities are the ones `scripts/bench_python_tables.py` writes: 12 properties of every EDM type
//! (Binary, Boolean, DateTime, Double, Guid, Int32, Int64, String). What is read back is checked against what
//! was sent, value by value, after the timed phases; any difference ends the process with an error, so a broken
//! run cannot look fast.

use futures::TryStreamExt as _;
use std::time::Instant;
use table_model::client::{BulkOperation, BulkOptions, TableServiceClient};
use table_model::{AccountKey, DateTime, Query, TableEntity, TableName};
use uuid::Uuid;

/// The entity both sides write (the same names, types and values as `entity(i)` in the Python script).
#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Order {
    #[table(partition_key)]
    partition: String,
    #[table(row_key)]
    row: String,
    customer: String,
    city: String,
    note: String,
    quantity: i32,
    total_cents: i64,
    sequence: i64,
    price: f64,
    ratio: f64,
    shipped: bool,
    order_id: Uuid,
    created: DateTime,
    payload: Vec<u8>,
}

const CITIES: [&str; 7] = ["Zürich", "Lisbon", "Nairobi", "Osaka", "Quito", "Tromsø", "Perth"];

/// 2024-05-01T00:00:00Z in ticks (100 ns since 0001-01-01).
const START_TICKS: i64 = 638_501_184_000_000_000;

/// Entity `i` of `partitions` partitions (the same formulas as the Python script).
fn entity(i: u64, partitions: u64) -> Order {
    let n = i as i64;
    Order {
        partition: format!("p{:02}", i % partitions),
        row: format!("{i:08}"),
        customer: format!("customer {i}"),
        city: CITIES[(i % 7) as usize].to_owned(),
        note: format!("order {i}: \"fragile\"\tline 1\nline 2 \\ {}", i * 31),
        quantity: (i % 1000) as i32 - 500,
        total_cents: n * 1_000_000_007,
        sequence: -n * 3_000_000_019,
        price: n as f64 * 0.01 + 0.5,
        ratio: 1.0 / (n as f64 + 3.0),
        shipped: i.is_multiple_of(3),
        order_id: Uuid::from_u128(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834u128.wrapping_mul(u128::from(i) + 1)),
        // Whole microseconds, which Python's datetime can hold too.
        created: DateTime::from_ticks(START_TICKS + n * 10_000_000 + (n % 1_000_000) * 10).expect("in range"),
        payload: (0..32u64).map(|b| (i.wrapping_mul(131).wrapping_add(b * 7) % 256) as u8).collect(),
    }
}

/// The process's peak resident set size (`VmHWM`) in KiB, from `/proc/self/status`.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU seconds (user + system) a process has used so far, from `/proc/<pid>/stat`: this process (`self`), or
/// the server's when the script passes its process id in `BENCH_SERVER_PID`. `BENCH_CLK_TCK` is the clock tick
/// (`getconf CLK_TCK`, 100 on Linux).
fn cpu_s(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces): state is field 3, utime 14.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let per_s: f64 = std::env::var("BENCH_CLK_TCK").ok().and_then(|t| t.parse().ok()).unwrap_or(100.0);
    Some(ticks as f64 / per_s)
}

/// CPU seconds of this process and of the server (when known).
fn cpu_now() -> (Option<f64>, Option<f64>) {
    let server = std::env::var("BENCH_SERVER_PID").ok().and_then(|pid| cpu_s(&pid));
    (cpu_s("self"), server)
}

/// CPU seconds used between two readings, as JSON (`null` when unknown).
fn used(before: (Option<f64>, Option<f64>), after: (Option<f64>, Option<f64>)) -> (String, String) {
    let diff = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}", b - a),
        _ => "null".to_owned(),
    };
    (diff(before.0, after.0), diff(before.1, after.1))
}

struct Args {
    table: String,
    count: u64,
    partitions: u64,
    concurrency: usize,
    variant: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut args = Args { table: String::new(), count: 10_000, partitions: 10, concurrency: 0, variant: None };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || value.parse::<u64>().map_err(|e| format!("{flag} {value}: {e}"));
        match flag.as_str() {
            "--table" => args.table = value.clone(),
            "--count" => args.count = number()?,
            "--partitions" => args.partitions = number()?.max(1),
            "--concurrency" => args.concurrency = number()? as usize,
            "--variant" => args.variant = Some(value.clone()),
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if args.table.is_empty() {
        return Err("--table NAME is required".into());
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = args()?;
    let url = std::env::var("TABLE_MODEL_AZURITE_ENDPOINT").map_err(|_| "TABLE_MODEL_AZURITE_ENDPOINT is not set")?;
    let service = TableServiceClient::new(url, AccountKey::development(), None)?;
    let name = TableName::new(args.table.clone())?;
    service.delete_table_if_exists(&name, None).await?;
    let table = service.create_table_if_not_exists(&name, None).await?;
    let (count, partitions) = (args.count, args.partitions);

    // Insert: the entities are made as the bulk writer pulls them, in key order (partitions interleaved).
    let options = BulkOptions { concurrency: args.concurrency, ..Default::default() };
    let cpu_before = cpu_now();
    let started = Instant::now();
    let report =
        table.bulk_write(BulkOperation::Insert, (0..count).map(|i| entity(i, partitions)), Some(options)).await;
    let insert_s = started.elapsed().as_secs_f64();
    let cpu_inserted = cpu_now();
    if let Some(failure) = report.failures.first() {
        return Err(format!("{} entities not written; the first: {}", report.failures.len(), failure.error).into());
    }

    // Read: the whole table, one query following its continuations.
    let started = Instant::now();
    let read: Vec<Order> = table.query(&Query::new(), None)?.try_collect().await?;
    let read_s = started.elapsed().as_secs_f64();
    let cpu_read = cpu_now();
    let peak = peak_rss_kib();
    let (insert_cpu, insert_server_cpu) = used(cpu_before, cpu_inserted);
    let (read_cpu, read_server_cpu) = used(cpu_inserted, cpu_read);

    // Check, untimed: exactly the entities sent, each equal to what was sent.
    if read.len() as u64 != count {
        return Err(format!("read back {} entities, expected {count}", read.len()).into());
    }
    let mut seen = vec![false; count as usize];
    for order in &read {
        let i: u64 = order.row.parse().map_err(|_| format!("unexpected RowKey {:?}", order.row))?;
        if i >= count || std::mem::replace(&mut seen[i as usize], true) {
            return Err(format!("RowKey {:?} unexpected or read twice", order.row).into());
        }
        let sent = entity(i, partitions);
        if *order != sent {
            return Err(format!("entity {i} differs:\n sent {sent:?}\n read {order:?}").into());
        }
    }
    service.delete_table(&name, None).await?;

    let variant = args.variant.unwrap_or_else(|| match args.concurrency {
        0 => "bulk_write, default concurrency".to_owned(),
        c => format!("bulk_write, concurrency {c}"),
    });
    println!(
        "{{\"side\":\"rust\",\"variant\":\"{variant}\",\"count\":{count},\"insert_s\":{insert_s:.6},\"read_s\":{read_s:.6},\
         \"transactions\":{},\"peak_rss_kib\":{},\"insert_cpu_s\":{insert_cpu},\"read_cpu_s\":{read_cpu},\
         \"insert_server_cpu_s\":{insert_server_cpu},\"read_server_cpu_s\":{read_server_cpu}}}",
        report.transactions,
        peak.map_or("null".to_owned(), |k| k.to_string()),
    );
    Ok(())
}
