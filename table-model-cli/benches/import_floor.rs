//! The floor under `tablectl import` against a server with the service's latency: the same transactions, built
//! and signed before the clock starts, sent by a bare `reqwest` client as the import sends them, and nothing else
//! done. `scripts/bench_latency.py` runs it beside `tablectl import` of the same file in each round; the ratio of
//! the two is what the import's own work (reading, checking, encoding, the client's pipeline, checkpoints) adds
//! to the wire on this machine.
//!
//! ```sh
//! cargo bench -p table-model-cli --bench import_floor -- ENDPOINT TABLE FILE [IN_FLIGHT]
//! ```
//!
//! `ENDPOINT` is the account's table endpoint (`http://127.0.0.1:PORT/devstoreaccount1` of `table-server`, which
//! checks no signature), `TABLE` a table to create, `FILE` JSON lines as `tablectl export` writes them. As the
//! bulk writer groups them: a partition's entities in transactions of at most 100 in file order, a partition's
//! transactions one after the other, `IN_FLIGHT` at once (`client::DEFAULT_CONCURRENCY`, 8, by default;
//! `tablectl import --in-flight`), the partition with the most waiting first; and, as the import's chunks go two
//! at a time (`table_model_transfer::import`), the whole file as one plan, the places in flight never emptied
//! between chunks: the best the import's transactions can do. Prints the seconds from the first transaction sent
//! to the last answered, and the count of transactions.

use futures::stream::{FuturesUnordered, StreamExt as _};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;
use table_model::{AccountKey, Batch, Credential, Endpoint, PartitionKey, TableName, TableService};
use table_model_test_utils::loopback::Bare;
use table_model_transfer::format::jsonl;

/// The transactions, per partition in file order, partitions in order of first appearance.
type Plan = Vec<(String, VecDeque<http::Request<Vec<u8>>>)>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let (endpoint, table, file, in_flight) = match args.as_slice() {
        // Without `IN_FLIGHT`, the bulk writer's default.
        [endpoint, table, file] => (endpoint, table, file, table_model::client::DEFAULT_CONCURRENCY.get()),
        [endpoint, table, file, n] if n.parse::<usize>().is_ok_and(|n| n > 0) => {
            (endpoint, table, file, n.parse().expect("checked"))
        }
        _ => {
            eprintln!("usage: import_floor ENDPOINT TABLE FILE [IN_FLIGHT]");
            std::process::exit(2);
        }
    };
    let service = TableService::new(
        Endpoint::parse(endpoint).expect("an endpoint URL"),
        Credential::SharedKey(AccountKey::development()),
    );
    let table = TableName::new(table.clone()).expect("a table name");
    let text = std::fs::read(file).expect("the file");
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    let plan = plan(&service, &table, &lines);
    let transactions: usize = plan.iter().map(|(_, t)| t.len()).sum();

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let http = Bare::new();
    runtime.block_on(async {
        let create = service.create_table(&table).expect("a create request");
        let status = http.send(create).await.status();
        assert!(status.is_success(), "the table was not created: {status}");
        let started = Instant::now();
        send_all(&http, plan, in_flight).await;
        println!("{:.3} {transactions}", started.elapsed().as_secs_f64());
    });
}

/// The lines' transactions, as the bulk writer groups them.
fn plan(service: &TableService, table: &TableName, lines: &[&[u8]]) -> Plan {
    let mut plan: Plan = Vec::new();
    let mut open: HashMap<String, (usize, Batch)> = HashMap::new();
    let seal = |plan: &mut Plan, index: usize, batch: &Batch| {
        plan[index].1.push_back(service.batch(batch).expect("a transaction request"));
    };
    for line in lines {
        let entity = jsonl::read_entity(line).expect("an entity");
        let partition = entity.partition_key().as_str().to_owned();
        let (index, batch) = open.entry(partition.clone()).or_insert_with(|| {
            plan.push((partition.clone(), VecDeque::new()));
            (plan.len() - 1, Batch::new(table.clone(), PartitionKey::new(partition.clone()).expect("a key")))
        });
        if batch.insert(&entity).is_err() {
            // Full (100 operations, or the body's limit): sealed, and the entity starts the next.
            seal(&mut plan, *index, batch);
            *batch = Batch::new(table.clone(), PartitionKey::new(partition).expect("a key"));
            batch.insert(&entity).expect("an entity a transaction takes");
        }
    }
    for (index, batch) in open.values() {
        if !batch.is_empty() {
            seal(&mut plan, *index, batch);
        }
    }
    plan
}

/// Sends the transactions: a partition's one after the other, `most` at a time, the partition with the
/// most waiting first (the earliest on a tie).
async fn send_all(http: &Bare, mut plan: Plan, most: usize) {
    let mut busy = vec![false; plan.len()];
    let mut in_flight = FuturesUnordered::new();
    loop {
        while in_flight.len() < most {
            let next =
                (0..plan.len()).filter(|&p| !busy[p] && !plan[p].1.is_empty()).fold(None, |best: Option<usize>, p| {
                    match best {
                        Some(b) if plan[b].1.len() >= plan[p].1.len() => Some(b),
                        _ => Some(p),
                    }
                });
            let Some(p) = next else { break };
            busy[p] = true;
            let request = plan[p].1.pop_front().expect("one waits");
            in_flight.push(async move { (p, http.send(request).await.status()) });
        }
        let Some((p, status)) = in_flight.next().await else { break };
        assert_eq!(status.as_u16(), 202, "a transaction of {} was refused", plan[p].0);
        busy[p] = false;
    }
}
