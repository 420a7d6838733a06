//! Every entity operation of `TableClient`, with a `#[derive(TableEntity)]` struct and with the dynamic
//! `Entity`: insert, upsert (merge and replace), update (merge and replace, under the entity's own ETag and
//! under `UpdateOptions::if_match`), delete and delete by keys, get, try get, reload, query, query first, and
//! transactions.

use crate::support::{all_entities, azurite, unique_name};
use futures::TryStreamExt as _;
use table_model::client::{QueryOptions, TableClient, UpdateOptions};
use table_model::{filter, ETag, Entity, ErrorCode, IfMatch, PartitionKey, Query, RowKey, TableEntity, UpdateMode};

#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key)]
    id: String,
    total: i64,
    note: Option<String>,
    #[table(etag)]
    etag: Option<ETag>,
}

fn order(id: &str, total: i64, note: Option<&str>) -> Order {
    Order { customer: "acme".into(), id: id.into(), total, note: note.map(str::to_owned), etag: None }
}

fn if_match(if_match: impl Into<IfMatch>) -> Option<UpdateOptions<'static>> {
    Some(UpdateOptions { if_match: Some(if_match.into()), ..Default::default() })
}

fn keys(id: &str) -> (PartitionKey, RowKey) {
    (PartitionKey::new("acme").unwrap(), RowKey::new(id).unwrap())
}

#[tokio::test]
async fn every_entity_operation_with_a_derived_struct() {
    let azurite = azurite!();
    let table = azurite.table("Typed").await;
    let (pk, rk) = keys("o1");

    // insert, get, try_get, reload.
    let first = table.insert(&order("o1", 10, Some("first")), None).await.unwrap();
    let read: Order = table.get(&pk, &rk, None).await.unwrap();
    assert_eq!(read, Order { etag: Some(first.clone()), ..order("o1", 10, Some("first")) });
    assert_eq!(table.try_get::<Order>(&pk, &rk, None).await.unwrap().as_ref(), Some(&read));
    assert_eq!(table.try_get::<Order>(&pk, &RowKey::new("none").unwrap(), None).await.unwrap(), None);
    assert_eq!(table.reload(&order("o1", 0, None), None).await.unwrap(), read);
    let err = table.insert(&order("o1", 11, None), None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::EntityAlreadyExists), "{err}");

    // update, replace, under the entity's own ETag: accepted once, then that ETag is stale.
    let mut changed = read.clone();
    changed.total = 20;
    changed.note = None;
    let second = table.update(&changed, UpdateMode::Replace, None).await.unwrap();
    assert_ne!(first, second);
    let err = table.update(&changed, UpdateMode::Replace, None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::UpdateConditionNotSatisfied), "{err}");
    let stored: Order = table.reload(&changed, None).await.unwrap();
    assert_eq!((stored.total, stored.note.as_deref(), stored.etag.as_ref()), (20, None, Some(&second)));

    // update, merge, with `if_match` instead of the entity's stale ETag: merge keeps what the struct omits.
    table.upsert(&order("o1", 20, Some("noted")), UpdateMode::Merge, None).await.unwrap();
    let noted: Order = table.reload(&changed, None).await.unwrap();
    changed.total = 30;
    let err = table.update(&changed, UpdateMode::Merge, if_match(&second)).await.unwrap_err();
    assert!(err.is_precondition_failed(), "{err}");
    table.update(&changed, UpdateMode::Merge, if_match(noted.etag.clone().unwrap())).await.unwrap();
    let merged: Order = table.get(&pk, &rk, None).await.unwrap();
    assert_eq!((merged.total, merged.note.as_deref()), (30, Some("noted")));
    // `IfMatch::Any` overrides a stale ETag too.
    table.update(&order("o1", 31, None), UpdateMode::Merge, if_match(IfMatch::Any)).await.unwrap();

    // upsert: creates, merges, replaces.
    table.upsert(&order("o2", 1, Some("new")), UpdateMode::Merge, None).await.unwrap();
    table.upsert(&order("o2", 2, None), UpdateMode::Merge, None).await.unwrap();
    let o2: Order = table.get(&keys("o2").0, &keys("o2").1, None).await.unwrap();
    assert_eq!((o2.total, o2.note.as_deref()), (2, Some("new")));
    let o2_before = o2.clone();
    table.upsert(&order("o2", 3, None), UpdateMode::Replace, None).await.unwrap();
    table.upsert(&order("o3", 3, None), UpdateMode::Replace, None).await.unwrap();
    let o2: Order = table.reload(&o2_before, None).await.unwrap();
    assert_eq!((o2.total, o2.note.as_deref()), (3, None));

    // query and query_first, typed.
    let query = Query::new().filter(filter::PARTITION_KEY.eq("acme") & Order::PROPERTIES.total.ge(3i64));
    let big: Vec<Order> = table.query(&query, None).unwrap().try_collect().await.unwrap();
    let ids: Vec<&str> = big.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["o1", "o2", "o3"]);
    assert!(big.iter().all(|o| o.etag.is_some()), "queried entities carry their ETags");
    let first_two: Vec<Order> = table.query_first(&query, 2, None).await.unwrap();
    assert_eq!(first_two, big[..2]);

    // delete under the entity's own ETag: a stale one is refused, the current one accepted.
    let mut stale = o2.clone();
    stale.etag = o2_before.etag.clone();
    let err = table.delete(&stale, None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::UpdateConditionNotSatisfied), "{err}");
    table.delete(&o2, None).await.unwrap();
    assert!(table.try_get::<Order>(&keys("o2").0, &keys("o2").1, None).await.unwrap().is_none(), "o2 was deleted");
    let o3: Order = table.get(&keys("o3").0, &keys("o3").1, None).await.unwrap();
    table.delete(&o3, if_match(IfMatch::Any)).await.unwrap();

    // delete_by_keys: with a stale ETag, without, and of a missing entity.
    let err = table.delete_by_keys(&pk, &rk, if_match(&second)).await.unwrap_err();
    assert!(err.is_precondition_failed(), "{err}");
    table.delete_by_keys(&pk, &rk, None).await.unwrap();
    let err = table.delete_by_keys(&pk, &rk, None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::ResourceNotFound), "{err}");
    let err = table.get::<Order>(&pk, &rk, None).await.unwrap_err();
    assert_eq!((err.status(), err.error_code()), (Some(404), Some(ErrorCode::ResourceNotFound)), "{err}");
    assert!(all_entities(&table).await.is_empty());
}

#[tokio::test]
async fn transactions_of_derived_structs() {
    let azurite = azurite!();
    let table = azurite.table("TypedBatch").await;
    let etag = table.insert(&order("a", 1, Some("a")), None).await.unwrap();
    let mut batch = table.batch(PartitionKey::new("acme").unwrap());
    batch.insert(&order("b", 2, None)).unwrap();
    batch.update(&order("a", 10, None), UpdateMode::Merge, IfMatch::ETag(etag.clone())).unwrap();
    batch.upsert(&order("c", 3, None), UpdateMode::Replace).unwrap();
    let outcome = table.submit_transaction(&batch, None).await.unwrap();
    let orders: Vec<Order> = table.query(&Query::new(), None).unwrap().try_collect().await.unwrap();
    let got: Vec<(&str, i64, Option<&str>)> =
        orders.iter().map(|o| (o.id.as_str(), o.total, o.note.as_deref())).collect();
    assert_eq!(got, [("a", 10, Some("a")), ("b", 2, None), ("c", 3, None)]);
    // Each operation's ETag, in the batch's order (b, a, c), is the one its entity now has.
    let etags: Vec<Option<&ETag>> = [1, 0, 2].map(|i| orders[i].etag.as_ref()).into();
    assert_eq!(etags, outcome.etags.iter().map(Option::as_ref).collect::<Vec<_>>());

    // The failing operation's index: operation 2 updates `a` with the ETag it had before the batch.
    let mut batch = table.batch(PartitionKey::new("acme").unwrap());
    batch.insert(&order("d", 4, None)).unwrap();
    batch.delete(&RowKey::new("b").unwrap(), IfMatch::Any).unwrap();
    batch.update(&order("a", 0, None), UpdateMode::Replace, IfMatch::ETag(etag)).unwrap();
    let err = table.submit_transaction(&batch, None).await.unwrap_err();
    let service = err.service().unwrap_or_else(|| panic!("{err}"));
    assert_eq!(service.operation_index(), Some(2), "{err}");
    assert_eq!(err.error_code(), Some(ErrorCode::UpdateConditionNotSatisfied), "{err}");
    assert_eq!(table.query_first::<Order>(&Query::new(), 10, None).await.unwrap().len(), 3, "nothing was applied");
}

fn dynamic(rk: &str, n: i32) -> Entity {
    Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(rk).unwrap()).with("N".parse().unwrap(), n).unwrap()
}

#[tokio::test]
async fn every_entity_operation_with_a_dynamic_entity() {
    let azurite = azurite!();
    let table = azurite.table("Dynamic").await;
    let e = dynamic("r", 1).with("Note".parse().unwrap(), "first").unwrap();

    let first = table.insert(&e, None).await.unwrap();
    let read: Entity = table.get(e.partition_key(), e.row_key(), None).await.unwrap();
    assert_eq!((read.get::<i32>("N").unwrap(), read.etag()), (1, Some(&first)));
    assert_eq!(
        table.try_get::<Entity>(e.partition_key(), e.row_key(), None).await.unwrap().unwrap().etag(),
        Some(&first)
    );
    assert!(table.try_get::<Entity>(e.partition_key(), &RowKey::new("none").unwrap(), None).await.unwrap().is_none());
    assert_eq!(table.reload(&e, None).await.unwrap().etag(), Some(&first));
    assert_eq!(table.insert(&e, None).await.unwrap_err().error_code(), Some(ErrorCode::EntityAlreadyExists));

    // An entity read carries its ETag: the update's precondition by default. Replace drops `Note`.
    let changed = read.clone().with("N".parse().unwrap(), 2).unwrap();
    let mut replaced = changed.clone();
    replaced.remove("Note");
    let second = table.update(&replaced, UpdateMode::Replace, None).await.unwrap();
    let err = table.update(&changed, UpdateMode::Merge, None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::UpdateConditionNotSatisfied), "{err}");
    // A new entity carries none: any version. Merge keeps what it omits.
    table
        .upsert(&dynamic("r", 2).with("Note".parse().unwrap(), "again").unwrap(), UpdateMode::Merge, None)
        .await
        .unwrap();
    let third = table.update(&dynamic("r", 3), UpdateMode::Merge, None).await.unwrap();
    let now: Entity = table.reload(&e, None).await.unwrap();
    assert_eq!((now.get::<i32>("N").unwrap(), now.get::<String>("Note").unwrap().as_str()), (3, "again"));
    assert_eq!(now.etag(), Some(&third));
    // `if_match` wins over the entity's own ETag, either way.
    let err = table.update(&now, UpdateMode::Merge, if_match(&second)).await.unwrap_err();
    assert!(err.is_precondition_failed(), "{err}");
    let mut stale = now.clone();
    stale.set_server_metadata(None, Some(second.clone()));
    table.update(&stale, UpdateMode::Replace, if_match(&third)).await.unwrap();

    // upsert replace creates and replaces; query and query_first.
    table.upsert(&dynamic("s", 4), UpdateMode::Replace, None).await.unwrap();
    table.upsert(&dynamic("t", 5), UpdateMode::Merge, None).await.unwrap();
    let q = Query::new().filter(table_model::filter::Filter::property("N").ge(3));
    let found: Vec<Entity> = table.query(&q, Some(QueryOptions::default())).unwrap().try_collect().await.unwrap();
    let rows: Vec<&str> = found.iter().map(|e| e.row_key().as_str()).collect();
    assert_eq!(rows, ["r", "s", "t"]);
    let first_one: Vec<Entity> = table.query_first(&q, 1, None).await.unwrap();
    assert_eq!(first_one.len(), 1);
    assert_eq!(first_one[0].row_key().as_str(), "r");

    // delete: under its ETag, stale then current; by keys.
    let err = table.delete(&stale, None).await.unwrap_err();
    assert!(err.is_precondition_failed(), "{err}");
    let current: Entity = table.reload(&stale, None).await.unwrap();
    table.delete(&current, None).await.unwrap();
    table.delete_by_keys(&PartitionKey::new("p").unwrap(), &RowKey::new("s").unwrap(), None).await.unwrap();
    let err = table.delete(&dynamic("s", 0), None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::ResourceNotFound), "{err}");
    let left: Vec<String> = all_entities(&table).await.iter().map(|e| e.row_key().to_string()).collect();
    assert_eq!(left, ["t"]);

    // A transaction of dynamic entities, and its failing operation's index.
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    batch.insert(&dynamic("u", 6)).unwrap().upsert(&dynamic("t", 7), UpdateMode::Merge).unwrap();
    assert_eq!(table.submit_transaction(&batch, None).await.unwrap().etags.len(), 2);
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    batch.insert(&dynamic("v", 8)).unwrap().insert(&dynamic("u", 9)).unwrap();
    let err = table.submit_transaction(&batch, None).await.unwrap_err();
    assert_eq!(
        (err.error_code(), err.service().and_then(|s| s.operation_index())),
        (Some(ErrorCode::EntityAlreadyExists), Some(1))
    );
    assert_eq!(all_entities(&table).await.len(), 2);
}

#[tokio::test]
async fn try_get_of_a_missing_table_is_an_error() {
    let azurite = azurite!();
    let missing: TableClient = azurite.service.table_client(unique_name("Missing"));
    let err = missing.try_get::<Order>(&keys("o1").0, &keys("o1").1, None).await.unwrap_err();
    // Azurite 3.35.0: 404 TableNotFound for a point read in a table that does not exist.
    assert_eq!((err.status(), err.error_code()), (Some(404), Some(ErrorCode::TableNotFound)), "{err}");
    let err = missing.try_get::<Entity>(&keys("o1").0, &keys("o1").1, None).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}
