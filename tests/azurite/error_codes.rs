//! Every `ErrorCode` Azurite produces for what a client can send, matched through `client::Error::error_code`.
//!
//! What Azurite 3.35.0 answers (each recorded by an assertion below):
//!
//! | case | status | code |
//! |---|---|---|
//! | insert of an existing entity | 409 | `EntityAlreadyExists` |
//! | get, update, delete of a missing entity | 404 | `ResourceNotFound` (not `EntityNotFound`) |
//! | update or delete under a stale ETag | 412 | `UpdateConditionNotSatisfied` |
//! | create of an existing table | 409 | `TableAlreadyExists` |
//! | insert, get or query in a missing table | 404 | `TableNotFound` |
//! | delete of a missing table | 404 | `ResourceNotFound` |
//! | an update whose ETag is not a weak one (`"x"`) | 400 | `InvalidInput` |
//! | a batch operation that fails | its operation's code, with its index |
//! | a batch update whose ETag is not a weak one | 400 | `InvalidOperation` (Azurite's own: `ErrorCode::Other`) |
//! | a batch of the same RowKey twice (built by hand) | 400 | `InvalidDuplicateRow` |
//! | a key with `#` (built by hand) | 400 | `InvalidInput` |
//! | an entity without a RowKey (built by hand) | 400 | `PropertiesNeedValue` |
//! | a String over 32,768 characters (built by hand) | 400 | `PropertyValueTooLarge` |
//! | a wrong account key, Shared Key or Lite | 403 | `AuthorizationFailure` |
//! | a SAS without the permission | 403 | `AuthorizationPermissionMismatch` |
//! | a SAS of another service | 403 | `AuthorizationServiceMismatch` |
//! | a SAS of another resource type | 403 | `AuthorizationResourceTypeMismatch` |
//! | an expired SAS | 403 | `AuthorizationFailure` |
//!
//! The service answers some of these differently (`AuthenticationFailed` for a bad signature, `EntityNotFound`
//! in newer versions); the client keeps whatever code comes, and unknown ones as `ErrorCode::Other`.

use crate::auth::account_sas;
use crate::support::{azurite, unique_name, Azurite};
use table_model::client::{ErrorKind, TableCredential, UpdateOptions};
use table_model::{
    response, AccountKey, Batch, ETag, Entity, ErrorCode, IfMatch, PartitionKey, Query, RowKey, UpdateMode,
};

fn entity(rk: &str) -> Entity {
    Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(rk).unwrap()).with("N".parse().unwrap(), 1).unwrap()
}

/// The status and code of a client error, after checking it is a service error with a code.
#[track_caller]
fn code(result: Result<impl std::fmt::Debug, table_model::client::Error>) -> (u16, ErrorCode) {
    let err = result.expect_err("refused");
    assert!(matches!(err.kind(), ErrorKind::Service(_)), "{err}");
    (err.status().unwrap(), err.error_code().unwrap_or_else(|| panic!("no code: {err}")))
}

#[tokio::test]
async fn entity_and_table_codes() {
    let azurite = azurite!();
    let table = azurite.table("Codes").await;
    let (pk, rk) = (PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    let first = table.insert(&entity("r"), None).await.unwrap();
    table.update(&entity("r"), UpdateMode::Merge, None).await.unwrap();

    assert_eq!(code(table.insert(&entity("r"), None).await), (409, ErrorCode::EntityAlreadyExists));
    let missing = RowKey::new("missing").unwrap();
    assert_eq!(code(table.get::<Entity>(&pk, &missing, None).await), (404, ErrorCode::ResourceNotFound));
    assert_eq!(
        code(table.update(&entity("missing"), UpdateMode::Replace, None).await),
        (404, ErrorCode::ResourceNotFound)
    );
    assert_eq!(code(table.delete_by_keys(&pk, &missing, None).await), (404, ErrorCode::ResourceNotFound));

    let stale = Some(UpdateOptions { if_match: Some(IfMatch::ETag(first)), ..Default::default() });
    let precondition = (412, ErrorCode::UpdateConditionNotSatisfied);
    assert_eq!(code(table.update(&entity("r"), UpdateMode::Merge, stale.clone()).await), precondition);
    assert_eq!(code(table.delete_by_keys(&pk, &rk, stale).await), precondition);
    // A strong ETag: Azurite takes only weak ones (`W/"..."`), as the service writes them.
    let strong = Some(UpdateOptions { if_match: Some(IfMatch::ETag(ETag::new("\"strong\""))), ..Default::default() });
    assert_eq!(code(table.update(&entity("r"), UpdateMode::Replace, strong).await), (400, ErrorCode::InvalidInput));

    let name = table.table().clone();
    assert_eq!(code(azurite.service.create_table(&name, None).await), (409, ErrorCode::TableAlreadyExists));
    let gone = azurite.service.table_client(unique_name("Gone"));
    let table_not_found = (404, ErrorCode::TableNotFound);
    assert_eq!(code(gone.insert(&entity("r"), None).await), table_not_found);
    assert_eq!(code(gone.get::<Entity>(&pk, &rk, None).await), table_not_found);
    assert_eq!(code(gone.query_first::<Entity>(&Query::new(), 1, None).await), table_not_found);
    assert_eq!(code(gone.delete_table(None).await), (404, ErrorCode::ResourceNotFound));
}

/// A missing table's error names it, and a missing entity's its keys: the client knows them, the service's
/// message does not say.
#[tokio::test]
async fn errors_name_the_table_and_the_entity() {
    let azurite = azurite!();
    let table = azurite.table("Named").await;
    let name = table.table().clone();
    let (pk, missing) = (PartitionKey::new("p").unwrap(), RowKey::new("missing").unwrap());
    let err = table.get::<Entity>(&pk, &missing, None).await.unwrap_err();
    assert_eq!((err.table(), err.keys()), (Some(&name), Some((&pk, &missing))));
    assert!(
        err.to_string().starts_with(&format!(
            "table `{name}`, PartitionKey \"p\", RowKey \"missing\": the service refused the request: 404 \
             ResourceNotFound"
        )),
        "{err}"
    );
    let err = table.delete_by_keys(&pk, &missing, None).await.unwrap_err();
    assert_eq!(err.keys(), Some((&pk, &missing)), "{err}");

    let gone = azurite.service.table_client(unique_name("Gone"));
    let err = gone.query_first::<Entity>(&Query::new(), 1, None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::TableNotFound));
    let expected = format!("table `{}`: the service refused the request: 404 TableNotFound: ", gone.table());
    assert!(err.to_string().starts_with(&expected), "{err}");
}

/// Adds the operation that fails to a batch.
type AddOperation<'a> = &'a dyn Fn(&mut Batch);

#[tokio::test]
async fn batch_codes_name_the_operation() {
    let azurite = azurite!();
    let table = azurite.table("BatchCodes").await;
    let first = table.insert(&entity("a"), None).await.unwrap();
    table.update(&entity("a"), UpdateMode::Merge, None).await.unwrap();
    let cases: [(AddOperation<'_>, usize, (u16, ErrorCode)); 4] = [
        (
            &|b| {
                b.insert(&entity("a")).unwrap();
            },
            1,
            (409, ErrorCode::EntityAlreadyExists),
        ),
        (
            &|b| {
                b.delete(&RowKey::new("ghost").unwrap(), IfMatch::Any).unwrap();
            },
            1,
            (404, ErrorCode::ResourceNotFound),
        ),
        (
            &|b| {
                b.update(&entity("a"), UpdateMode::Replace, IfMatch::ETag(first.clone())).unwrap();
            },
            1,
            (412, ErrorCode::UpdateConditionNotSatisfied),
        ),
        (
            &|b| {
                b.update(&entity("a"), UpdateMode::Merge, IfMatch::ETag(ETag::new("\"strong\""))).unwrap();
            },
            1,
            // Azurite's own code, which the service does not document: the client keeps it as text.
            (400, ErrorCode::Other("InvalidOperation".into())),
        ),
    ];
    for (add, index, expected) in cases {
        let mut batch = table.batch(PartitionKey::new("p").unwrap());
        batch.insert(&entity("new")).unwrap();
        add(&mut batch);
        let err = table.submit_transaction(&batch, None).await.unwrap_err();
        assert_eq!(err.service().and_then(|s| s.operation_index()), Some(index), "{err}");
        assert_eq!(code(Err::<(), _>(err)), expected);
    }
    assert_eq!(crate::support::all_entities(&table).await.len(), 1, "no batch applied anything");
}

/// Codes only a request the SDK refuses to build can get: sent by hand through the client's pipeline (see
/// `support::Raw`), read by the client as it reads any refusal.
#[tokio::test]
async fn codes_of_requests_the_sdk_does_not_build() {
    let azurite = azurite!();
    let table = azurite.table("RawCodes").await;
    let raw = azurite.raw();
    let insert = |json: serde_json::Value| {
        let mut request = azurite.requests().insert(table.table(), &entity("placeholder")).unwrap();
        *request.body_mut() = serde_json::to_vec(&json).unwrap();
        request
    };
    let e = raw.refused(insert(serde_json::json!({"PartitionKey": "p", "RowKey": "a#b"}))).await;
    assert_eq!(code(Err::<(), _>(e)), (400, ErrorCode::InvalidInput));
    let e = raw.refused(insert(serde_json::json!({"PartitionKey": "p", "N": 1}))).await;
    assert_eq!(code(Err::<(), _>(e)), (400, ErrorCode::PropertiesNeedValue));
    let e = raw
        .refused(insert(serde_json::json!({"PartitionKey": "p", "RowKey": "r", "S": "x".repeat(32 * 1024 + 1)})))
        .await;
    assert_eq!(code(Err::<(), _>(e)), (400, ErrorCode::PropertyValueTooLarge));

    // A batch with one RowKey twice: the SDK's batch refuses it, so the body is the SDK's with the second
    // RowKey renamed.
    let mut batch = table.batch(PartitionKey::new("p").unwrap());
    batch.insert(&entity("dup")).unwrap().insert(&entity("dup2")).unwrap();
    assert!(batch.insert(&entity("dup")).is_err(), "the SDK refuses the same RowKey twice");
    let request = azurite.requests().batch(&batch).unwrap();
    let (parts, body) = request.into_parts();
    let body = String::from_utf8(body).unwrap().replace("\"dup2\"", "\"dup\"");
    let reply = raw.send(http::Request::from_parts(parts, body.into_bytes())).await;
    let err = table_model::client::Error::from(response::batch(&reply, 2).unwrap_err());
    assert_eq!(code(Err::<(), _>(err)), (400, ErrorCode::InvalidDuplicateRow));
    assert!(crate::support::all_entities(&table).await.is_empty());
}

#[tokio::test]
async fn authorization_codes() {
    let azurite = azurite!();
    let table = azurite.table("AuthCodes").await;
    let wrong = AccountKey::from_base64("d3Jvbmcga2V5").unwrap();
    for credential in [TableCredential::SharedKey(wrong.clone()), TableCredential::SharedKeyLite(wrong)] {
        let (service, _) = azurite.client_with(credential);
        let client = service.table_client(table.table().clone());
        assert_eq!(code(client.insert(&entity("r"), None).await), (403, ErrorCode::AuthorizationFailure));
    }
    let with_sas = |sas: String| {
        let (service, _) = Azurite::client_at(&format!("{}?{sas}", azurite.url), TableCredential::Anonymous);
        service.table_client(table.table().clone())
    };
    let future = "2099-12-31T00:00:00Z";
    let read_only = with_sas(account_sas("rl", "t", "sco", future));
    assert!(read_only.query_first::<Entity>(&Query::new(), 1, None).await.unwrap().is_empty());
    assert_eq!(code(read_only.insert(&entity("r"), None).await), (403, ErrorCode::AuthorizationPermissionMismatch));
    let blob = with_sas(account_sas("rwdlacu", "b", "sco", future));
    assert_eq!(code(blob.insert(&entity("r"), None).await), (403, ErrorCode::AuthorizationServiceMismatch));
    let service_only = with_sas(account_sas("rwdlacu", "t", "s", future));
    assert_eq!(
        code(service_only.insert(&entity("r"), None).await),
        (403, ErrorCode::AuthorizationResourceTypeMismatch)
    );
    let expired = with_sas(account_sas("rwdlacu", "t", "sco", "2000-01-01T00:00:00Z"));
    assert_eq!(code(expired.insert(&entity("r"), None).await), (403, ErrorCode::AuthorizationFailure));
    assert!(crate::support::all_entities(&table).await.is_empty(), "nothing was written");
}
