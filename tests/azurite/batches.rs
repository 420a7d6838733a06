//! Entity group transactions: one that succeeds, and ones that fail atomically, naming the operation; the
//! request ids of calls and of a bulk write's transactions.

use crate::support::{all_entities, azurite, unique_name};
use futures::TryStreamExt as _;
use table_model::client::{BulkOperation, BulkOptions, ErrorKind, RequestOptions, TableClient};
use table_model::{
    filter, AccountKey, Entity, ErrorCode, IfMatch, PartitionKey, Query, RequestErrorKind, RowKey, UpdateMode,
};

fn entity(rk: &str, n: i32) -> Entity {
    Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(rk).unwrap()).with("N".parse().unwrap(), n).unwrap()
}

/// RowKey and N of every entity in the table, in key order.
async fn contents(table: &TableClient) -> Vec<(String, i32)> {
    all_entities(table).await.iter().map(|e| (e.row_key().to_string(), e.get("N").unwrap())).collect()
}

async fn seed(table: &TableClient) -> table_model::ETag {
    for (rk, n) in [("keep", 1), ("old", 2)] {
        table.insert(&entity(rk, n), None).await.unwrap();
    }
    let keep: Entity = table.get(&PartitionKey::new("p").unwrap(), &RowKey::new("keep").unwrap(), None).await.unwrap();
    keep.etag().unwrap().clone()
}

#[tokio::test]
async fn a_batch_applies_every_operation() {
    let azurite = azurite!();
    let table = azurite.table("BatchOk").await;
    let etag = seed(&table).await;
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    batch
        .insert(&entity("new", 3))
        .unwrap()
        .update(&entity("keep", 10), UpdateMode::Merge, etag.into())
        .unwrap()
        .upsert(&entity("up", 4), UpdateMode::Replace)
        .unwrap()
        .delete(&RowKey::new("old").unwrap(), IfMatch::Any)
        .unwrap()
        .insert(&entity("O'Brien 50%", 5))
        .unwrap();
    let outcome = table.submit_transaction(&batch, None).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome.etags.len(), 5);
    assert!(outcome.etags[0].is_some() && outcome.etags[1].is_some() && outcome.etags[2].is_some());
    assert!(outcome.etags[3].is_none(), "a delete has no ETag");
    assert_eq!(
        contents(&table).await,
        [("O'Brien 50%".to_string(), 5), ("keep".into(), 10), ("new".into(), 3), ("up".into(), 4)]
    );
    // The ETag the batch returned is the entity's.
    let new: Entity = table.get(&PartitionKey::new("p").unwrap(), &RowKey::new("new").unwrap(), None).await.unwrap();
    assert_eq!(new.etag(), outcome.etags[0].as_ref());
}

#[tokio::test]
async fn a_failing_operation_fails_the_whole_batch_and_is_named() {
    let azurite = azurite!();
    let table = azurite.table("BatchFail").await;
    seed(&table).await;
    let before = contents(&table).await;

    // Operation 2 inserts an entity that exists.
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    batch.insert(&entity("a", 1)).unwrap().delete(&RowKey::new("old").unwrap(), IfMatch::Any).unwrap();
    batch.insert(&entity("keep", 3)).unwrap().insert(&entity("b", 4)).unwrap();
    let err = table.submit_transaction(&batch, None).await.unwrap_err();
    let e = err.service().unwrap_or_else(|| panic!("{err}"));
    assert_eq!((e.status(), e.code(), e.operation_index()), (409, Some("EntityAlreadyExists"), Some(2)), "{err}");
    assert_eq!(err.error_code(), Some(ErrorCode::EntityAlreadyExists));
    assert_eq!(contents(&table).await, before, "nothing was applied");

    // Operation 1 updates with a stale ETag.
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    let stale = table_model::ETag::new("W/\"datetime'2000-01-01T00%3A00%3A00.0000000Z'\"");
    batch.insert(&entity("c", 1)).unwrap().update(&entity("keep", 9), UpdateMode::Replace, stale.into()).unwrap();
    let err = table.submit_transaction(&batch, None).await.unwrap_err();
    let e = err.service().unwrap();
    assert_eq!((e.status(), e.operation_index()), (412, Some(1)), "{err}");
    assert_eq!(err.error_code(), Some(ErrorCode::UpdateConditionNotSatisfied), "{err}");
    assert_eq!(contents(&table).await, before, "nothing was applied");

    // Operation 0 deletes what is not there.
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    batch.delete(&RowKey::new("ghost").unwrap(), IfMatch::Any).unwrap().insert(&entity("d", 1)).unwrap();
    let err = table.submit_transaction(&batch, None).await.unwrap_err();
    let e = err.service().unwrap();
    assert_eq!((e.status(), e.operation_index()), (404, Some(0)), "{err}");
    assert_eq!(err.error_code(), Some(ErrorCode::ResourceNotFound), "{err}");
    assert_eq!(contents(&table).await, before, "nothing was applied");
}

#[tokio::test]
async fn a_full_batch_of_100_operations() {
    let azurite = azurite!();
    let table = azurite.table("Batch100").await;
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    for i in 0..100 {
        batch.insert(&entity(&format!("{i:03}"), i)).unwrap();
    }
    assert!(batch.insert(&entity("100", 100)).is_err());
    assert_eq!(table.submit_transaction(&batch, None).await.unwrap().etags.len(), 100);
    let q = Query::new().filter(filter::ROW_KEY.starts_with("09"));
    let nineties: Vec<Entity> = table.query(&q, None).unwrap().try_collect().await.unwrap();
    assert_eq!(nineties.len(), 10);
}

#[tokio::test]
async fn a_batch_of_another_table_is_not_sent() {
    let azurite = azurite!();
    let table = azurite.table("BatchMine").await;
    let other = azurite.service.table_client(table_model::TableName::from_static("SomeOtherTable"));
    let mut batch = other.batch(PartitionKey::new("p").unwrap());
    batch.insert(&entity("a", 1)).unwrap();
    let err = table.submit_transaction(&batch, None).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Request(e) if matches!(e.kind(), RequestErrorKind::TableMismatch { .. })));
    assert!(contents(&table).await.is_empty(), "nothing was sent");
}

#[tokio::test]
async fn a_call_sends_its_request_id_and_each_transaction_of_a_bulk_write_its_own() {
    let azurite = azurite!();
    let (service, recorder) = azurite.client_with(AccountKey::development());
    let table = azurite.guard(service.create_table(&unique_name("RequestIds"), None).await.unwrap());
    let options = RequestOptions::default().with_client_request_id("call-1");
    table.insert(&entity("single", 1), Some(options)).await.unwrap();
    // 250 entities in 3 partitions: 3 transactions or more, each with an id of its own.
    let entities: Vec<Entity> = (0..250)
        .map(|i| {
            let pk = PartitionKey::new(format!("p{}", i % 3)).unwrap();
            Entity::new(pk, RowKey::new(format!("{i:04}")).unwrap())
        })
        .collect();
    let options = BulkOptions::default().with_client_request_id("import-7");
    let report = table.bulk_write(BulkOperation::Insert, &entities, Some(options)).await;
    let transactions = report.transactions;
    assert_eq!(report.into_result().unwrap(), 250);

    let sent = recorder.sent();
    let insert = sent.iter().find(|s| s.method == "POST" && s.url.path().ends_with(table.table().as_str())).unwrap();
    assert_eq!(insert.client_request_id.as_deref(), Some("call-1"));
    let batches: Vec<_> = sent.iter().filter(|s| s.url.path().ends_with("$batch")).collect();
    let mut ids: Vec<&str> = batches.iter().map(|s| s.client_request_id.as_deref().unwrap()).collect();
    ids.sort_by_key(|id| id.rsplit('-').next().unwrap().parse::<u64>().unwrap());
    let expected: Vec<String> = (0..transactions).map(|n| format!("import-7-{n}")).collect();
    assert!(transactions >= 3);
    assert_eq!(ids, expected);
    // Azurite echoes the id in its answer, as the service does (but not in the answer to a `$batch`).
    assert_eq!(insert.echoed_request_id.as_deref(), Some("call-1"));
}
