//! Every table operation of `TableServiceClient` and `TableClient`: create, create if not exists, delete,
//! delete if exists, and listings with a filter.

use crate::support::{all_entities, azurite, unique_name};
use futures::TryStreamExt as _;
use table_model::filter::Filter;
use table_model::{Entity, ErrorCode, PartitionKey, Query, RowKey, TableName};

async fn listed(service: &table_model::client::TableServiceClient, filter: Filter) -> Vec<TableName> {
    service.list_tables(&Query::new().filter(filter), None).unwrap().try_collect().await.unwrap()
}

#[tokio::test]
async fn every_table_operation_of_the_service_client() {
    let azurite = azurite!();
    let service = &azurite.service;
    let name = unique_name("Tables");
    let by_name = || Filter::property("TableName").eq(name.as_str());
    assert!(listed(service, by_name()).await.is_empty());

    let table = service.create_table(&name, None).await.unwrap();
    let _guard = azurite.guard(table.clone());
    assert_eq!(table.table(), &name);
    assert_eq!(listed(service, by_name()).await, std::slice::from_ref(&name));

    // A second create is refused; create-if-not-exists, twice, gives the client of the same table.
    let err = service.create_table(&name, None).await.unwrap_err();
    assert_eq!((err.status(), err.error_code()), (Some(409), Some(ErrorCode::TableAlreadyExists)), "{err}");
    assert!(err.is_conflict());
    table.insert(&Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("kept").unwrap()), None).await.unwrap();
    for _ in 0..2 {
        let again = service.create_table_if_not_exists(&name, None).await.unwrap();
        assert_eq!(all_entities(&again).await.len(), 1, "the existing table, untouched");
    }

    // Delete; a second delete is refused; delete-if-exists says whether there was one, twice.
    service.delete_table(&name, None).await.unwrap();
    assert!(listed(service, by_name()).await.is_empty());
    let err = service.delete_table(&name, None).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    // Azurite 3.35.0 answers a delete of a missing table with 404 ResourceNotFound.
    assert_eq!(err.error_code(), Some(ErrorCode::ResourceNotFound), "{err}");
    assert!(!service.delete_table_if_exists(&name, None).await.unwrap());

    // Create-if-not-exists creates it when it does not exist.
    let created = service.create_table_if_not_exists(&name, None).await.unwrap();
    assert!(all_entities(&created).await.is_empty(), "a new table");
    assert!(service.delete_table_if_exists(&name, None).await.unwrap());
    assert!(!service.delete_table_if_exists(&name, None).await.unwrap());
}

#[tokio::test]
async fn every_table_operation_of_the_table_client() {
    let azurite = azurite!();
    let name = unique_name("TableOps");
    let table = azurite.service.table_client(name.clone());
    let _guard = azurite.guard(table.clone());
    assert!(!table.delete_table_if_exists(None).await.unwrap());
    table.create_table(None).await.unwrap();
    let err = table.create_table(None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::TableAlreadyExists), "{err}");
    assert!(!table.create_table_if_not_exists(None).await.unwrap());
    assert!(!table.create_table_if_not_exists(None).await.unwrap());
    table.delete_table(None).await.unwrap();
    assert!(table.delete_table(None).await.unwrap_err().is_not_found());
    assert!(table.create_table_if_not_exists(None).await.unwrap());
    assert!(table.delete_table_if_exists(None).await.unwrap());
    assert!(!table.delete_table_if_exists(None).await.unwrap());
}

#[tokio::test]
async fn list_tables_with_a_filter() {
    let azurite = azurite!();
    let mut tables = Vec::new();
    for _ in 0..3 {
        tables.push(azurite.table("Filtered").await);
    }
    let other = azurite.table("Unfiltered").await;
    let prefix = tables[0].table().as_str().rsplit_once('x').unwrap().0.to_owned();
    let mut expected: Vec<TableName> = tables.iter().map(|t| t.table().clone()).collect();
    expected.sort();

    // A prefix range: this run's three tables, in name order.
    let found = listed(&azurite.service, Filter::property("TableName").starts_with(prefix.as_str())).await;
    assert_eq!(found, expected);
    // Equality, and a range that excludes the rest.
    let found = listed(&azurite.service, Filter::property("TableName").eq(tables[1].table().as_str())).await;
    assert_eq!(found, [tables[1].table().clone()]);
    let found = listed(&azurite.service, Filter::property("TableName").ge(other.table().as_str())).await;
    assert!(found.contains(other.table()));
    assert!(found.iter().all(|t| t.as_str() >= other.table().as_str()));
    // Unfiltered, all of them are there (with every other test's).
    let all: Vec<TableName> = azurite.service.list_tables(&Query::new(), None).unwrap().try_collect().await.unwrap();
    assert!(expected.iter().chain([other.table()]).all(|t| all.contains(t)));
}
