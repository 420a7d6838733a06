//! Authorization against Azurite's checks: Shared Key, Shared Key Lite for every kind of operation, connection
//! strings, a wrong key, and an account SAS given as a URL.

use crate::support::{azurite, unique_name, Azurite};
use futures::TryStreamExt as _;
use table_model::client::{TableCredential, TableServiceClient, UpdateOptions};
use table_model::filter::Filter;
use table_model::{
    AccountKey, Batch, ConnectionString, Entity, ErrorCode, IfMatch, PartitionKey, Query, RowKey, UpdateMode,
};

fn entity(pk: &str, rk: &str, n: i32) -> Entity {
    Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap()).with("N".parse().unwrap(), n).unwrap()
}

/// Every operation the client has, through a client of this credential: table creation and listing, every
/// entity operation, a paged query, a transaction, and the deletions.
async fn every_kind_of_operation(azurite: &Azurite, service: &TableServiceClient, prefix: &str) {
    let name = unique_name(prefix);
    let table = service.create_table(&name, None).await.unwrap_or_else(|e| panic!("create: {e}"));
    let _guard = azurite.guard(table.clone());
    service.create_table_if_not_exists(&name, None).await.unwrap();
    let listed: Vec<_> = service
        .list_tables(&Query::new().filter(Filter::property("TableName").eq(name.as_str())), None)
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(listed, std::slice::from_ref(&name));

    // Keys that need escaping in the address the signature covers.
    let e = entity("O'Brien", "50% + 1", 1);
    let first = table.insert(&e, None).await.unwrap();
    let read: Entity = table.get(e.partition_key(), e.row_key(), None).await.unwrap();
    assert_eq!((read.row_key().as_str(), read.etag()), ("50% + 1", Some(&first)));
    table.upsert(&entity("O'Brien", "50% + 1", 2), UpdateMode::Merge, None).await.unwrap();
    table.upsert(&entity("O'Brien", "upserted", 3), UpdateMode::Replace, None).await.unwrap();
    let current = table.reload(&read, None).await.unwrap();
    assert_eq!(current.get::<i32>("N").unwrap(), 2);
    table.update(&current.clone().with("N".parse().unwrap(), 4).unwrap(), UpdateMode::Replace, None).await.unwrap();
    table.update(&entity("O'Brien", "50% + 1", 5), UpdateMode::Merge, None).await.unwrap();

    let mut batch = Batch::new(name.clone(), PartitionKey::new("O'Brien").unwrap());
    for i in 0..5 {
        batch.insert(&entity("O'Brien", &format!("b{i}"), i)).unwrap();
    }
    assert_eq!(table.submit_transaction(&batch, None).await.unwrap().etags.len(), 5);

    // Pages of 2: the continuation parameters are not signed, but they reach Azurite with the signature.
    let all: Vec<Entity> = table.query(&Query::new().top(2), None).unwrap().try_collect().await.unwrap();
    let rows: Vec<&str> = all.iter().map(|e| e.row_key().as_str()).collect();
    assert_eq!(rows, ["50% + 1", "b0", "b1", "b2", "b3", "b4", "upserted"]);
    assert_eq!(table.query_first::<Entity>(&Query::new(), 3, None).await.unwrap().len(), 3);

    table.delete(&all[0], Some(UpdateOptions { if_match: Some(IfMatch::Any), ..Default::default() })).await.unwrap();
    table.delete_by_keys(all[1].partition_key(), all[1].row_key(), None).await.unwrap();
    assert!(table.try_get::<Entity>(all[1].partition_key(), all[1].row_key(), None).await.unwrap().is_none());
    assert!(service.delete_table_if_exists(&name, None).await.unwrap());
    assert!(!service.delete_table_if_exists(&name, None).await.unwrap());
}

#[tokio::test]
async fn shared_key_lite_for_every_kind_of_operation() {
    let azurite = azurite!();
    let (lite, recorder) = azurite.client_with(TableCredential::SharedKeyLite(AccountKey::development()));
    every_kind_of_operation(&azurite, &lite, "Lite").await;
    let sent = recorder.sent();
    let methods: std::collections::BTreeSet<&str> = sent.iter().map(|s| s.method.as_str()).collect();
    assert_eq!(methods, ["DELETE", "GET", "PATCH", "POST", "PUT"].into(), "every verb the client sends");
    for s in &sent {
        let authorization = s.authorization.as_deref().unwrap_or("");
        assert!(
            authorization.starts_with("SharedKeyLite devstoreaccount1:"),
            "{} {}: {authorization}",
            s.method,
            s.url
        );
    }
}

#[tokio::test]
async fn shared_key_for_every_kind_of_operation() {
    let azurite = azurite!();
    let (full, recorder) = azurite.client_with(AccountKey::development());
    every_kind_of_operation(&azurite, &full, "Full").await;
    assert!(recorder.sent().iter().all(|s| s
        .authorization
        .as_deref()
        .unwrap_or("")
        .starts_with("SharedKey devstoreaccount1:")));
}

#[tokio::test]
async fn a_connection_string_with_the_emulator_endpoint() {
    let azurite = azurite!();
    let table = azurite.table("ConnStr").await;
    let text = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={};TableEndpoint={};",
        table_model::DEVELOPMENT_ACCOUNT_KEY,
        azurite.url
    );
    let (endpoint, _) = ConnectionString::parse(&text).unwrap().into_parts();
    assert!(endpoint.is_path_style());
    let service = TableServiceClient::from_connection_string(&text, None).unwrap();
    let client = service.table_client(table.table().clone());
    client.insert(&entity("p", "r", 1), None).await.unwrap();
    let all: Vec<Entity> = client.query(&Query::new(), None).unwrap().try_collect().await.unwrap();
    assert_eq!(all.len(), 1);
}

#[tokio::test]
async fn a_wrong_key_is_refused() {
    let azurite = azurite!();
    let table = azurite.table("WrongKey").await;
    for credential in [
        TableCredential::SharedKey(AccountKey::from_base64("d3Jvbmcga2V5").unwrap()),
        TableCredential::SharedKeyLite(AccountKey::from_base64("d3Jvbmcga2V5").unwrap()),
    ] {
        let (service, _) = azurite.client_with(credential);
        let err = service
            .table_client(table.table().clone())
            .query_first::<Entity>(&Query::new(), 1, None)
            .await
            .unwrap_err();
        // Azurite 3.35.0: 403 AuthorizationFailure (the service says AuthenticationFailed).
        assert_eq!((err.status(), err.error_code()), (Some(403), Some(ErrorCode::AuthorizationFailure)), "{err}");
        // The message names the account the key was given for; the clocks agree, so it names no skew.
        assert!(
            err.to_string().ends_with(
                "(signed with the Shared Key of account `devstoreaccount1`: check that the key is this account's)"
            ),
            "{err}"
        );
    }
}

/// An account SAS for the Table service, signed by hand with the development key (`docs/rules.md` §9.3: the
/// crates pass a SAS through; they do not issue one). Version 2019-02-02's string to sign: account,
/// permissions, services, resource types, start, expiry, IP range, protocol, version, and a final newline.
pub fn account_sas(permissions: &str, services: &str, resource_types: &str, expiry: &str) -> String {
    let version = "2019-02-02";
    let to_sign = format!("devstoreaccount1\n{permissions}\n{services}\n{resource_types}\n\n{expiry}\n\n\n{version}\n");
    let signature = table_model::auth::signature(&AccountKey::development(), &to_sign);
    let signature: String = signature
        .chars()
        .map(|c| match c {
            '+' => "%2B".to_owned(),
            '/' => "%2F".to_owned(),
            '=' => "%3D".to_owned(),
            c => c.to_string(),
        })
        .collect();
    format!("sv={version}&ss={services}&srt={resource_types}&sp={permissions}&se={expiry}&sig={signature}")
}

#[tokio::test]
async fn an_account_sas_given_as_a_url() {
    let azurite = azurite!();
    let sas = account_sas("rwdlacu", "t", "sco", "2099-12-31T00:00:00Z");
    let url = format!("{}?{sas}", azurite.url);
    let (service, recorder) = Azurite::client_at(&url, TableCredential::Anonymous);
    every_kind_of_operation(&azurite, &service, "Sas").await;
    for s in recorder.sent() {
        assert_eq!(s.authorization, None, "a SAS request carries no Authorization");
        assert!(s.url.query().unwrap_or("").contains("&sig="), "{}", s.url);
    }

    // A SAS and another credential at once is refused before anything is sent.
    let err = TableServiceClient::new(&url, AccountKey::development(), None).unwrap_err();
    assert!(err.to_string().contains("SharedAccessSignature"), "{err}");
}
