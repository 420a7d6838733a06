//! SQL over two Azurite tables on a Ballista cluster started in this process (a scheduler and two executors,
//! each built with its own [`AzureCodec`] and its own client of the account), against the same SQL run by a
//! local DataFusion `SessionContext`; and the requests the executors sent, each recorded by its own client.
//!
//! Skipped with a notice without `TABLE_MODEL_AZURITE_ENDPOINT`, unless `CI` is set, where that fails; run with
//! `bash scripts/azurite.sh run cargo test -p table-model-datafusion`.

use azure_core::http::ClientOptions;
use ballista::extension::SessionContextExt as _;
use ballista_core::extension::SessionConfigExt as _;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::catalog::TableProvider as _;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::sync::Arc;
use std::time::Duration;
use table_model::client::{BulkOperation, TableServiceClient, TableServiceClientOptions};
use table_model::{AccountKey, DateTime, EdmBinary, EdmValue, Entity, PartitionKey, RowKey, TableName};
use table_model_datafusion::codec::AzureCodec;
use table_model_datafusion::AzureTable;

use super::{param, rows, Recorder};
use table_model_test_utils::azurite::endpoint_or_skip;

const ORDERS: usize = 3000;
const CUSTOMERS: usize = 400;

/// The first pages a [`Recorder`] saw.
trait FirstPages {
    /// The `$filter` (`""` for none) of each query sent to `table` for the first page of a range (no
    /// continuation) since the last call; the requests of other tables stay.
    fn take_first_pages(&self, table: &str) -> Vec<String>;
}

impl FirstPages for Recorder {
    fn take_first_pages(&self, table: &str) -> Vec<String> {
        self.take_urls_to(&format!("/{table}()"))
            .iter()
            .filter(|url| param(url, "NextPartitionKey").is_none())
            .map(|url| param(url, "$filter").unwrap_or_default())
            .collect()
    }
}

/// A client of the account whose every request `recorder` sees: each process of the cluster has its own.
fn service(url: &str, recorder: &Arc<Recorder>) -> TableServiceClient {
    let options = TableServiceClientOptions {
        client_options: ClientOptions { per_try_policies: vec![recorder.clone()], ..Default::default() },
        ..Default::default()
    };
    TableServiceClient::new(url, AccountKey::development(), Some(options)).unwrap()
}

/// Order `i`: every EDM type, each property absent on some orders, boundary values; six partitions.
fn order(i: usize) -> Entity {
    let pk = ["east", "west", "north", "south", "o'k", "é"][i % 6];
    let mut e = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(format!("o{i:05}")).unwrap());
    let mut set = |name: &str, value: EdmValue| {
        e.insert(name.parse().unwrap(), value).unwrap();
    };
    set("Customer", EdmValue::String(format!("c{:03}", i % (CUSTOMERS + 50)).try_into().unwrap()));
    if !i.is_multiple_of(7) {
        set(
            "Qty",
            EdmValue::Int32(match i {
                1 => i32::MIN,
                2 => i32::MAX,
                _ => (i % 97) as i32 - 10,
            }),
        );
    }
    if !i.is_multiple_of(11) {
        set(
            "Total",
            EdmValue::Int64(match i {
                3 => i64::MIN / 4,
                4 => i64::MAX / 4,
                _ => i as i64 * 1_000_000_007,
            }),
        );
    }
    if !i.is_multiple_of(5) {
        set("Price", EdmValue::Double(i as f64 / 8.0 - 100.0));
    }
    if !i.is_multiple_of(3) {
        set("Paid", EdmValue::Boolean(i.is_multiple_of(2)));
    }
    if i.is_multiple_of(4) {
        set("Tag", EdmValue::Binary(EdmBinary::new(vec![(i % 256) as u8, 0, 0xff]).unwrap()));
    }
    if i.is_multiple_of(2) {
        set("Ref", EdmValue::Guid(uuid::Uuid::from_u128(i as u128 * 0x9E37_79B9_7F4A_7C15)));
    }
    if !i.is_multiple_of(9) {
        let ticks = 638_400_000_000_000_000 + i as i64 * 600_000_000;
        set("At", EdmValue::DateTime(DateTime::from_ticks(ticks).unwrap()));
    }
    e
}

/// Customer `i`, in four partitions; orders name 50 customers that do not exist.
fn customer(i: usize) -> Entity {
    let pk = format!("region{}", i % 4);
    let mut e = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(format!("c{i:03}")).unwrap());
    e.insert("Name".parse().unwrap(), EdmValue::String(format!("Customer ü{i}").try_into().unwrap())).unwrap();
    if !i.is_multiple_of(3) {
        e.insert("Vip".parse().unwrap(), EdmValue::Boolean(i.is_multiple_of(2))).unwrap();
    }
    e
}

/// The name a query gives `table`: `orders` or `customers`.
fn table_alias<'a>(table: &TableName, orders: &TableName) -> &'a str {
    if table == orders {
        "orders"
    } else {
        "customers"
    }
}

/// A session state whose Ballista codecs reach the account through `service` (this process's own client).
fn state(service: TableServiceClient, target_partitions: usize) -> SessionState {
    let codec = Arc::new(AzureCodec::new(service).with_fallback(
        Arc::new(BallistaLogicalExtensionCodec::default()),
        Arc::new(BallistaPhysicalExtensionCodec::default()),
    ));
    let config = SessionConfig::new_with_ballista()
        .with_target_partitions(target_partitions)
        .with_ballista_logical_extension_codec(codec.clone())
        .with_ballista_physical_extension_codec(codec);
    SessionStateBuilder::new().with_default_features().with_config(config).build()
}

const QUERIES: &[&str] = &[
    // An aggregate by partition, over every type.
    "SELECT \"PartitionKey\", count(*), count(\"Qty\"), sum(\"Qty\"), min(\"Total\"), max(\"Total\"), \
     sum(\"Price\"), min(\"At\"), max(\"At\"), count(\"Tag\"), count(\"Ref\"), \
     sum(CASE WHEN \"Paid\" THEN 1 ELSE 0 END) \
     FROM orders GROUP BY \"PartitionKey\" ORDER BY \"PartitionKey\"",
    // An aggregate by a property, with a filter pushed to the service.
    "SELECT \"Customer\", count(*), sum(\"Total\"), min(\"Price\"), max(\"Qty\") FROM orders \
     WHERE \"Qty\" > 0 GROUP BY \"Customer\" ORDER BY \"Customer\"",
    // The join of the two tables, and an aggregate over it.
    "SELECT o.\"RowKey\", c.\"Name\", c.\"Vip\", o.\"Total\", o.\"Ref\", o.\"Tag\" FROM orders o \
     JOIN customers c ON o.\"Customer\" = c.\"RowKey\" ORDER BY o.\"RowKey\"",
    "SELECT c.\"PartitionKey\", count(*), sum(o.\"Qty\"), min(o.\"At\"), max(o.\"Price\") FROM orders o \
     JOIN customers c ON o.\"Customer\" = c.\"RowKey\" GROUP BY c.\"PartitionKey\" ORDER BY c.\"PartitionKey\"",
    // A key `IN` list too long for one `$filter`: a query per value (`AzureKeysExec`), shared between executors.
    "SELECT \"PartitionKey\", count(*), sum(\"Qty\") FROM orders WHERE \"PartitionKey\" IN ('east', 'o''k', 'é', \
     'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q') \
     GROUP BY \"PartitionKey\" ORDER BY \"PartitionKey\"",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_ballista_cluster_answers_as_datafusion_does_with_the_reads_split_between_executors() {
    let Some(url) = endpoint_or_skip(
        "DataFusion Ballista tests",
        "bash scripts/azurite.sh run cargo test -p table-model-datafusion",
    ) else {
        return;
    };
    let writer = TableServiceClient::new(&url, AccountKey::development(), None).unwrap();
    let pid = std::process::id();
    let (orders, customers) = (
        TableName::new(format!("BallistaOrders{pid}")).unwrap(),
        TableName::new(format!("BallistaCust{pid}")).unwrap(),
    );
    for (name, entities) in [
        (&orders, (0..ORDERS).map(order).collect::<Vec<_>>()),
        (&customers, (0..CUSTOMERS).map(customer).collect::<Vec<_>>()),
    ] {
        let table = writer.create_table_if_not_exists(name, None).await.unwrap();
        let report = table.bulk_write(BulkOperation::Insert, entities, None).await;
        assert!(report.failures.is_empty(), "{:?}", report.failures.first().map(|f| f.error.to_string()));
    }

    // The answers of a local DataFusion run.
    let local = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
    let orders_table = Arc::new(AzureTable::infer(writer.table_client(&orders), ORDERS).await.unwrap());
    let customers_table = Arc::new(AzureTable::infer(writer.table_client(&customers), CUSTOMERS).await.unwrap());
    local.register_table("orders", orders_table.clone()).unwrap();
    local.register_table("customers", customers_table.clone()).unwrap();
    let mut expected = Vec::new();
    for sql in QUERIES {
        expected.push(rows(&local, sql).await);
    }

    // The cluster: a scheduler (which plans the key ranges with its own client) and two executors, each with
    // its own client of the account, recording what it sends.
    let recorders: [Arc<Recorder>; 4] = Default::default();
    let [client_rec, scheduler_rec, executor_a, executor_b] = &recorders;
    let scheduler =
        ballista_scheduler::standalone::new_standalone_scheduler_from_state(&state(service(&url, scheduler_rec), 4))
            .await
            .unwrap();
    let scheduler_url = format!("http://localhost:{}", scheduler.port());
    for recorder in [executor_a, executor_b] {
        let grpc = loop {
            match SchedulerGrpcClient::connect(scheduler_url.clone()).await {
                Ok(grpc) => break grpc,
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        // One task at a time each: the scan's partitions go to both.
        ballista_executor::new_standalone_executor_from_state(grpc, 1, &state(service(&url, recorder), 4))
            .await
            .unwrap();
    }

    // The client: its tables are registered with its own client, and travel to the scheduler as endpoint, name
    // and schema (no key).
    let client_state = state(service(&url, client_rec), 4);
    let cluster =
        SessionContext::remote_with_state(&format!("df://localhost:{}", scheduler.port()), client_state).await.unwrap();
    let client_writer = service(&url, client_rec);
    let client_orders = AzureTable::new(client_writer.table_client(&orders), orders_table.schema()).unwrap();
    let client_customers = AzureTable::new(client_writer.table_client(&customers), customers_table.schema()).unwrap();
    cluster.register_table("orders", Arc::new(client_orders)).unwrap();
    cluster.register_table("customers", Arc::new(client_customers)).unwrap();

    let (mut read_by_a, mut read_by_b) = (0, 0);
    for (sql, expected) in QUERIES.iter().zip(&expected) {
        let got = tokio::time::timeout(Duration::from_secs(120), rows(&cluster, sql)).await.expect(sql);
        assert!(!expected.is_empty(), "{sql}");
        assert_eq!(&got, expected, "{sql}");
        // Each of the scan's key ranges was read once, by one executor or the other; none was read twice.
        for table in [&orders, &customers] {
            let (a, b) = (executor_a.take_first_pages(table.as_str()), executor_b.take_first_pages(table.as_str()));
            (read_by_a, read_by_b) = (read_by_a + a.len(), read_by_b + b.len());
            let mut ranges: Vec<&String> = a.iter().chain(&b).collect();
            ranges.sort();
            let sent = ranges.len();
            ranges.dedup();
            assert_eq!(ranges.len(), sent, "{sql}: a range of {table} read twice: {a:?} and {b:?}");
            if sql.contains(table_alias(table, &orders)) {
                assert!(sent > 1, "{sql}: the scan of {table} was not split into key ranges: {ranges:?}");
            }
        }
    }

    // Both executors read, each with its own client; the client sent nothing (its plan carried no credential),
    // and the scheduler planned the key ranges with its own client's probes.
    assert!(read_by_a > 0 && read_by_b > 0, "ranges read by executor a: {read_by_a}, by executor b: {read_by_b}");
    assert_eq!(client_rec.count(), 0, "the client sent requests: {:?}", client_rec.take_urls());
    assert!(scheduler_rec.count() > 0);

    for name in [&orders, &customers] {
        writer.delete_table(name, None).await.unwrap();
    }
}
