//! Entity group transactions: one that succeeds, and ones that fail atomically, naming the operation.

use crate::support::{azurite, Azurite, Table};
use table_model::filter;
use table_model::response;
use table_model::{Batch, Entity, IfMatch, PartitionKey, Query, RowKey, UpdateMode};

fn entity(rk: &str, n: i32) -> Entity {
    Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(rk).unwrap()).with("N".parse().unwrap(), n).unwrap()
}

/// RowKey and N of every entity in the table, in key order.
fn contents(azurite: &Azurite, table: &Table<'_>) -> Vec<(String, i32)> {
    let reply = azurite.send(azurite.service.query(&table.name, &Query::new(), None).unwrap());
    let page = response::query(&reply, None).unwrap();
    assert!(page.continuation.is_none());
    page.entities.iter().map(|e| (e.row_key().to_string(), e.get("N").unwrap())).collect()
}

fn seed(azurite: &Azurite, table: &Table<'_>) -> table_model::ETag {
    for (rk, n) in [("keep", 1), ("old", 2)] {
        response::written(&azurite.send(azurite.service.insert(&table.name, &entity(rk, n)).unwrap())).unwrap();
    }
    let reply = azurite.send(
        azurite.service.get(&table.name, &PartitionKey::new("p").unwrap(), &RowKey::new("keep").unwrap()).unwrap(),
    );
    response::entity(&reply, None).unwrap().etag().unwrap().clone()
}

#[test]
fn a_batch_applies_every_operation() {
    let azurite = azurite!();
    let table = azurite.table("BatchOk");
    let etag = seed(&azurite, &table);
    let mut batch = Batch::new(table.name.clone(), PartitionKey::new("p").unwrap());
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
    let reply = azurite.send(azurite.service.batch(&batch).unwrap());
    let outcome = response::batch(&reply, batch.len()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome.etags.len(), 5);
    assert!(outcome.etags[0].is_some() && outcome.etags[1].is_some() && outcome.etags[2].is_some());
    assert!(outcome.etags[3].is_none(), "a delete has no ETag");
    assert_eq!(
        contents(&azurite, &table),
        [("O'Brien 50%".to_string(), 5), ("keep".into(), 10), ("new".into(), 3), ("up".into(), 4)]
    );
    // The ETag the batch returned is the entity's.
    let reply = azurite.send(
        azurite.service.get(&table.name, &PartitionKey::new("p").unwrap(), &RowKey::new("new").unwrap()).unwrap(),
    );
    assert_eq!(response::entity(&reply, None).unwrap().etag(), outcome.etags[0].as_ref());
}

#[test]
fn a_failing_operation_fails_the_whole_batch_and_is_named() {
    let azurite = azurite!();
    let table = azurite.table("BatchFail");
    seed(&azurite, &table);
    let before = contents(&azurite, &table);

    // Operation 2 inserts an entity that exists.
    let mut batch = Batch::new(table.name.clone(), PartitionKey::new("p").unwrap());
    batch.insert(&entity("a", 1)).unwrap().delete(&RowKey::new("old").unwrap(), IfMatch::Any).unwrap();
    batch.insert(&entity("keep", 3)).unwrap().insert(&entity("b", 4)).unwrap();
    let reply = azurite.send(azurite.service.batch(&batch).unwrap());
    let err = response::batch(&reply, batch.len()).unwrap_err();
    let e = err.service().unwrap_or_else(|| panic!("{err}"));
    assert_eq!((e.status(), e.code(), e.operation_index()), (409, Some("EntityAlreadyExists"), Some(2)), "{err}");
    assert_eq!(contents(&azurite, &table), before, "nothing was applied");

    // Operation 1 updates with a stale ETag.
    let mut batch = Batch::new(table.name.clone(), PartitionKey::new("p").unwrap());
    let stale = table_model::ETag::new("W/\"datetime'2000-01-01T00%3A00%3A00.0000000Z'\"");
    batch.insert(&entity("c", 1)).unwrap().update(&entity("keep", 9), UpdateMode::Replace, stale.into()).unwrap();
    let reply = azurite.send(azurite.service.batch(&batch).unwrap());
    let err = response::batch(&reply, batch.len()).unwrap_err();
    let e = err.service().unwrap();
    assert_eq!((e.status(), e.operation_index()), (412, Some(1)), "{err}");
    assert_eq!(contents(&azurite, &table), before, "nothing was applied");

    // Operation 0 deletes what is not there.
    let mut batch = Batch::new(table.name.clone(), PartitionKey::new("p").unwrap());
    batch.delete(&RowKey::new("ghost").unwrap(), IfMatch::Any).unwrap().insert(&entity("d", 1)).unwrap();
    let reply = azurite.send(azurite.service.batch(&batch).unwrap());
    let err = response::batch(&reply, batch.len()).unwrap_err();
    let e = err.service().unwrap();
    assert_eq!((e.status(), e.operation_index()), (404, Some(0)), "{err}");
    assert_eq!(contents(&azurite, &table), before, "nothing was applied");
}

#[test]
fn a_full_batch_of_100_operations() {
    let azurite = azurite!();
    let table = azurite.table("Batch100");
    let mut batch = Batch::new(table.name.clone(), PartitionKey::new("p").unwrap());
    for i in 0..100 {
        batch.insert(&entity(&format!("{i:03}"), i)).unwrap();
    }
    assert!(batch.insert(&entity("100", 100)).is_err());
    let reply = azurite.send(azurite.service.batch(&batch).unwrap());
    assert_eq!(response::batch(&reply, 100).unwrap().etags.len(), 100);
    let q = Query::new().filter(filter::ROW_KEY.starts_with("09"));
    let reply = azurite.send(azurite.service.query(&table.name, &q, None).unwrap());
    assert_eq!(response::query(&reply, None).unwrap().entities.len(), 10);
}
