//! The provider under faults: the scan (the range planner's probes, then each partition's pages) and `INSERT`
//! (the bulk writer) through the workspace's fault-injecting proxy (`table_model_test_utils::proxy`) in front of Azurite,
//! checked against what Azurite stores, read without the proxy. The first requests through each proxy meet one
//! fault of each kind (for the scan, those are the range planner's reads of keys); the rest draw 10% faults from
//! a seed.
//!
//! Skipped with a notice without `TABLE_MODEL_AZURITE_ENDPOINT`, unless `CI` is set, where that fails; run with
//! `bash scripts/azurite.sh run cargo test -p table-model-datafusion`. A failure names the seed, which
//! `TABLE_MODEL_FAULT_SEED` replays.

use super::writes::{entity, same, stored};
use super::{canonical, rows};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::TableProvider as _;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::collections::BTreeMap;
use std::sync::Arc;
use table_model::client::{BulkOperation, TableClient, TableServiceClient};
use table_model::{Entity, TableName};
use table_model_arrow::batch::EntitySchema;
use table_model_datafusion::AzureTable;
use table_model_test_utils::azurite::endpoint_or_skip;
use table_model_test_utils::faults::{client, socket_of, through, DELAY};
use table_model_test_utils::proxy::{Fault, Proxy};

/// More than one page (1,000), so the planner reads its keys in pages: 3 partitions of 800.
const ENTITIES: usize = 2_400;

async fn fresh_table(direct: &TableServiceClient, tag: &str) -> TableClient {
    let name = TableName::new(format!("Flt{tag}{}", std::process::id())).unwrap();
    direct.create_table_if_not_exists(&name, None).await.unwrap()
}

/// The entities of record batches of the table's whole schema, as [`canonical`] text, sorted.
fn canonical_rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut all = Vec::new();
    for batch in batches {
        let schema = EntitySchema::new(batch.schema()).unwrap();
        let entities = table_model_arrow::batch::entities(batch, &schema).unwrap();
        all.extend(entities.iter().map(canonical));
    }
    all.sort();
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_and_inserts_under_faults_read_and_write_every_entity_once() {
    let Some(url) =
        endpoint_or_skip("DataFusion fault tests", "bash scripts/azurite.sh run cargo test -p table-model-datafusion")
    else {
        return;
    };
    let seed = std::env::var("TABLE_MODEL_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5EED_00DF);
    let direct = client(&url);
    let source = fresh_table(&direct, "Src").await;
    let target = fresh_table(&direct, "Dst").await;
    let written = source.bulk_write(BulkOperation::Insert, (0..ENTITIES).map(entity), None).await;
    assert_eq!(written.into_result().unwrap(), ENTITIES as u64);
    let expected = stored(&source).await;
    assert_eq!(expected.len(), ENTITIES);

    // The schema from the whole table, read directly; the provider's client goes through the proxy.
    let schema = AzureTable::infer(source.clone(), ENTITIES).await.unwrap().schema();
    let script = vec![
        Fault::CloseAfterForwarding,
        Fault::ServerBusy,
        Fault::Delay,
        Fault::OperationTimedOut,
        Fault::CloseBeforeForwarding,
    ];
    // One proxy for each table: the scan's and the INSERT's first requests each meet every kind of fault.
    let proxy = Proxy::scripted(socket_of(&url), script.clone(), seed, 100, DELAY).await;
    let insert_proxy = Proxy::scripted(socket_of(&url), script.clone(), seed ^ 1, 100, DELAY).await;
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
    let provider = |proxy: &Proxy, table: &TableClient| {
        let table = through(proxy, &url).table_client(table.table().clone());
        Arc::new(AzureTable::new(table, schema.clone()).unwrap())
    };
    ctx.register_table("source", provider(&proxy, &source)).unwrap();
    ctx.register_table("target", provider(&insert_proxy, &target)).unwrap();

    // Every entity exactly once, though the planner's probes and the partitions' pages met faults.
    let frame = ctx.sql("SELECT * FROM source").await.unwrap();
    let batches = frame.collect().await.unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    same(&canonical_rows(&batches), &expected);
    let faults = |proxy: &Proxy| proxy.counts().iter().filter(|(f, _)| **f != Fault::None).map(|(_, n)| n).sum::<u64>();
    assert!(faults(&proxy) >= script.len() as u64, "seed {seed}: {:?}", proxy.counts());

    // An aggregate over the partitions, against the same computed from the stored entities.
    let all: Vec<Entity> = {
        use futures::TryStreamExt as _;
        source.query(&table_model::Query::new(), None).unwrap().try_collect().await.unwrap()
    };
    let mut by_partition: BTreeMap<String, (usize, i64)> = BTreeMap::new();
    for e in &all {
        let slot = by_partition.entry(e.partition_key().to_string()).or_default();
        slot.0 += 1;
        slot.1 += e.get_opt::<i32>("I32").unwrap().map_or(0, i64::from);
    }
    let computed: Vec<String> = by_partition.iter().map(|(pk, (n, sum))| format!("{pk}|{n}|{sum}")).collect();
    let sql = "SELECT \"PartitionKey\", count(*), sum(\"I32\") FROM source GROUP BY 1 ORDER BY 1";
    assert_eq!(rows(&ctx, sql).await, computed, "seed {seed}");

    // INSERT ... SELECT, both tables through their proxies: every entity stored once, as it was read, though
    // a transaction's reply was lost (its retry finds the entities there) and others were refused or delayed.
    assert_eq!(rows(&ctx, "INSERT INTO target SELECT * FROM source").await, [ENTITIES.to_string()], "seed {seed}");
    same(&stored(&target).await, &expected);
    assert!(faults(&insert_proxy) >= script.len() as u64, "seed {seed}: {:?}", insert_proxy.counts());
    eprintln!("faults (seed {seed}): scan {:?}, insert {:?}", proxy.counts(), insert_proxy.counts());
}
