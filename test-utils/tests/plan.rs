//! The planner side by side (`PlanOptions::side_by_side`, `docs/rules.md` §10.1) against the in-memory service:
//! how even its ranges are for the key shapes tables commonly have, and how many requests it sends.
//! `cargo test -p table-model-test-utils --features service --test plan`.

use futures::TryStreamExt as _;
use std::num::NonZeroUsize;
use table_model::client::{BulkOperation, PlanOptions, QueryOptions, TableClient, TableServiceClient};
use table_model::filter::KeyRange;
use table_model::{AccountKey, Entity, MetadataLevel, PartitionKey, Query, RowKey, TableName};
use table_model_test_utils::service::{Options, Running, Seed, Service};

fn client(server: &Running) -> TableServiceClient {
    TableServiceClient::new(server.endpoint(), AccountKey::development(), None).unwrap()
}

/// The entities of each range of `plan`, read keys only; the ranges must tile the table.
async fn sizes(table: &TableClient, plan: &[KeyRange]) -> Vec<usize> {
    assert_eq!(plan.first().unwrap().start(), None);
    assert_eq!(plan.last().unwrap().end(), None);
    for pair in plan.windows(2) {
        assert_eq!(pair[0].end(), pair[1].start(), "{plan:?}");
    }
    let options = || QueryOptions { metadata: Some(MetadataLevel::None), ..Default::default() };
    let mut sizes = Vec::new();
    for range in plan {
        let mut query = Query::new().select(["PartitionKey", "RowKey"]);
        if let Some(filter) = range.filter() {
            query = query.filter(filter);
        }
        let read: Vec<Entity> = table.query(&query, Some(options())).unwrap().try_collect().await.unwrap();
        sizes.push(read.len());
    }
    sizes
}

/// Plans `parts` ranges side by side; their sizes and the requests the plan sent.
async fn plan(server: &Running, table: &TableClient, parts: usize) -> (Vec<usize>, u64) {
    let n = NonZeroUsize::new(parts).unwrap();
    let before = server.stats().requests;
    let plan = table.plan_ranges(n, None, Some(PlanOptions::side_by_side(n))).await.unwrap();
    let requests = server.stats().requests - before;
    assert_eq!(plan.len(), parts, "{plan:?}");
    (sizes(table, &plan).await, requests)
}

/// Keys only, `per` in each partition, written with the bulk writer.
async fn fill(table: &TableClient, partitions: impl Iterator<Item = String>, per: usize) -> usize {
    let entities: Vec<Entity> = partitions
        .flat_map(|p| {
            (0..per).map(move |r| {
                Entity::new(PartitionKey::new(p.clone()).unwrap(), RowKey::new(format!("{r:04}")).unwrap())
            })
        })
        .collect();
    let report = table.bulk_write(BulkOperation::Insert, entities.clone(), None).await;
    assert_eq!(report.written as usize, entities.len());
    entities.len()
}

/// `tenant-000` to `tenant-399`, 250 entities each (the latency benchmark's table): the first two pages of
/// keys hold only `tenant-000` to `tenant-007`, whose digits stop at 7. The plan reads the keys of the rest as
/// made of any decimal digit, as of a fixed width, and cuts between the partitions it finds: 16 ranges of
/// 6.25% each but the first and last (the first holds what the dense pages read). Before, its points were made
/// of `0` to `3` and a range held up to 20%.
#[tokio::test]
async fn counters_padded_with_zeros_are_cut_evenly() {
    let seed = Seed { table: "Customers".into(), entities: 100_000, partitions: 400 };
    let server = Service::new(Options { seed: vec![seed], ..Default::default() }).start().await;
    let table = client(&server).table_client(TableName::from_static("Customers"));
    let (sizes, requests) = plan(&server, &table, 16).await;
    assert_eq!(sizes.iter().sum::<usize>(), 100_000);
    // Measured: 6,250 to 6,500 in each range but the last (3,000); the ideal is 6,250.
    assert!(sizes.iter().all(|&s| s <= 6_250 * 115 / 100), "{sizes:?}");
    // Pages of keys (at most 4), 8 probes of the ends, then two rounds of 16.
    assert!(requests <= 4 + 8 + 16 + 16, "{requests} requests");
}

/// Hexadecimal partition keys of a fixed width (hashes, GUIDs) are cut within a few percent of even too.
/// Counters without padding (`user1`, `user10`, `user100`, `user1000`, ...) are the estimate's weak case: the
/// keys after `user1` are ten times as dense in the readings as those after `user2`, and the first pages read
/// only the former. Measured: the largest of 16 ranges holds 30% (26% before the plan read keys of one length
/// as of a fixed width); it must stay under a third.
#[tokio::test]
async fn hex_and_unpadded_keys() {
    let server = Service::new(Options::default()).start().await;
    let service = client(&server);
    let hex = |p: u64| format!("{:016x}", (p + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    for (name, keys) in [
        ("Hex", (0..2_000).map(hex).collect::<Vec<_>>()),
        ("Unpadded", (0..2_000).map(|p| format!("user{p}")).collect()),
    ] {
        let table = service.create_table(TableName::new(name).unwrap(), None).await.unwrap();
        let total = fill(&table, keys.into_iter(), 10).await;
        let (sizes, _) = plan(&server, &table, 16).await;
        assert_eq!(sizes.iter().sum::<usize>(), total);
        let most = if name == "Hex" { total / 16 * 115 / 100 } else { total / 3 };
        assert!(sizes.iter().all(|&s| s <= most), "{name}: {sizes:?}");
    }
}
