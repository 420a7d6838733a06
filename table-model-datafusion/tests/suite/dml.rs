//! `DELETE` and `UPDATE` through the provider, against Azurite: exactly the rows SQL's `WHERE` selects are
//! deleted or updated (key filters pushed, the others applied to each page), every other entity is left bit for
//! bit (its 100 ns digits and its values of another type included), the count is the rows written, and a
//! statement that breaks a rule or sets a key is refused.
//!
//! Skipped with a notice without `TABLE_MODEL_AZURITE_ENDPOINT`, unless `CI` is set, where that fails; run with
//! `bash scripts/azurite.sh run cargo test -p table-model-datafusion`.

use datafusion::arrow::array::{Array as _, UInt64Array};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::sync::Arc;
use table_model::client::{BulkOperation, TableClient, TableServiceClient};
use table_model::{AccountKey, DateTime, EdmValue, Entity, PartitionKey, RowKey, TableName};
use table_model_datafusion::AzureTable;

use super::writes::{same, stored};
use table_model_test_utils::azurite::endpoint_or_skip;

const N: usize = 240;

async fn table(tag: &str) -> Option<TableClient> {
    let url = endpoint_or_skip(
        "DataFusion Azurite tests",
        "bash scripts/azurite.sh run cargo test -p table-model-datafusion",
    )?;
    let service = TableServiceClient::new(&url, AccountKey::development(), None).unwrap();
    let name = TableName::new(format!("Dml{tag}{}", std::process::id())).unwrap();
    Some(service.create_table_if_not_exists(&name, None).await.unwrap())
}

/// Entity `i`: in one of 3 partitions; `N` (Int32) `i`; `Kind` `a` or `b`; `When` at an odd tick (a 100 ns
/// digit only `@overflow` keeps) in 1601 for some; `Priority` an Int32, or a String for every 7th.
fn entity(i: usize) -> Entity {
    let mut e = Entity::new(PartitionKey::new(format!("p{}", i % 3)).unwrap(), RowKey::new(format!("{i:04}")).unwrap());
    let p = |s: &str| s.parse().unwrap();
    e.insert(p("N"), i as i32).unwrap();
    e.insert(p("Kind"), if i.is_multiple_of(4) { "a" } else { "b" }).unwrap();
    let base = if i.is_multiple_of(10) { 504_911_232_000_000_000 } else { 638_400_000_000_000_000 };
    e.insert(p("When"), DateTime::from_ticks(base + 1 + i as i64 * 10_000_001).unwrap()).unwrap();
    if i.is_multiple_of(7) {
        e.insert(p("Priority"), "High").unwrap();
    } else {
        e.insert(p("Priority"), (i % 3) as i32).unwrap();
    }
    e
}

fn count(batches: &[datafusion::arrow::record_batch::RecordBatch]) -> u64 {
    assert_eq!(batches.len(), 1);
    let counts = batches[0].column(0).as_any().downcast_ref::<UInt64Array>().unwrap();
    assert_eq!(counts.len(), 1);
    counts.value(0)
}

async fn run(ctx: &SessionContext, sql: &str) -> u64 {
    count(&ctx.sql(sql).await.unwrap().collect().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_and_update_write_exactly_the_rows_the_where_clause_selects() {
    let Some(table) = table("Rows").await else { return };
    let mut expected: Vec<Entity> = (0..N).map(entity).collect();
    assert!(table.bulk_write(BulkOperation::Insert, &expected, None).await.is_complete());
    let provider = AzureTable::infer(table.clone(), 1_000).await.unwrap();
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(3));
    ctx.register_table("t", Arc::new(provider)).unwrap();

    // A key filter (pushed, exact) and a property filter (applied to each page).
    let n = run(&ctx, r#"DELETE FROM t WHERE "PartitionKey" = 'p1' AND "N" % 2 = 0"#).await;
    let doomed = |e: &Entity| e.partition_key().as_str() == "p1" && e.get::<i32>("N").unwrap() % 2 == 0;
    let before = expected.len();
    expected.retain(|e| !doomed(e));
    assert_eq!(n as usize, before - expected.len());
    assert!(n > 0);
    same(&stored(&table).await, &expected.iter().map(super::canonical).collect::<Vec<_>>().tap_sort());

    // A date comparison over a column with 1601 values, and a mixed column: the String values show as text.
    let n =
        run(&ctx, r#"UPDATE t SET "Kind" = 'z', "N" = "N" + 1000 WHERE "When" < '1700-01-01' OR "Priority" = 'High'"#)
            .await;
    let mut updated = 0;
    for e in &mut expected {
        let old = e.get::<DateTime>("When").unwrap() < "1700-01-01T00:00:00Z".parse().unwrap();
        let high = e.value("Priority") == Some(&EdmValue::String("High".try_into().unwrap()));
        if old || high {
            let value = e.get::<i32>("N").unwrap() + 1000;
            e.insert("Kind".parse().unwrap(), "z").unwrap();
            e.insert("N".parse().unwrap(), value).unwrap();
            updated += 1;
        }
    }
    assert_eq!(n, updated);
    // Every other property as it was: `When` to the 100 ns, `Priority` with its own type.
    same(&stored(&table).await, &expected.iter().map(super::canonical).collect::<Vec<_>>().tap_sort());

    // Setting a column to NULL removes the property.
    let n = run(&ctx, r#"UPDATE t SET "Priority" = NULL WHERE "PartitionKey" = 'p2' AND "RowKey" < '0050'"#).await;
    let mut removed = 0;
    for e in &mut expected {
        if e.partition_key().as_str() == "p2" && e.row_key().as_str() < "0050" {
            e.remove("Priority");
            removed += 1;
        }
    }
    assert_eq!(n, removed);
    same(&stored(&table).await, &expected.iter().map(super::canonical).collect::<Vec<_>>().tap_sort());

    // The keys cannot be set; a value that breaks a rule writes nothing of its page.
    let err = ctx.sql(r#"UPDATE t SET "RowKey" = 'x'"#).await.map(|_| ()).err();
    let err = match err {
        Some(e) => e.to_string(),
        None => ctx.sql(r#"UPDATE t SET "RowKey" = 'x'"#).await.unwrap().collect().await.unwrap_err().to_string(),
    };
    assert!(err.contains("`RowKey` cannot be set"), "{err}");
    let err = ctx
        .sql(r#"UPDATE t SET "Kind" = repeat('x', 40000) WHERE "PartitionKey" = 'p0'"#)
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("0 written"), "{err}");
    same(&stored(&table).await, &expected.iter().map(super::canonical).collect::<Vec<_>>().tap_sort());

    // Without WHERE: every entity, through the keys-only delete.
    let n = run(&ctx, "DELETE FROM t").await;
    assert_eq!(n as usize, expected.len());
    assert!(stored(&table).await.is_empty());
    table.delete_table(None).await.unwrap();
}

/// `sort`, returning the vector.
trait TapSort {
    fn tap_sort(self) -> Self;
}

impl TapSort for Vec<String> {
    fn tap_sort(mut self) -> Self {
        self.sort();
        self
    }
}
