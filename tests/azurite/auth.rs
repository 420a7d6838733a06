//! Authorization against Azurite's checks: Shared Key, Shared Key Lite, connection strings, a wrong key.

use crate::support::azurite;
use table_model::{response, AccountKey, ConnectionString, Credential, Entity, PartitionKey, RowKey, TableService};

#[test]
fn shared_key_lite_is_accepted() {
    let azurite = azurite!();
    let table = azurite.table("Lite");
    let lite =
        TableService::new(azurite.service.endpoint().clone(), Credential::SharedKeyLite(AccountKey::development()));
    let e = Entity::new(PartitionKey::new("O'Brien").unwrap(), RowKey::new("50% + 1").unwrap());
    let request = lite.insert(&table.name, &e).unwrap();
    assert!(request.headers()["authorization"].to_str().unwrap().starts_with("SharedKeyLite devstoreaccount1:"));
    response::written(&azurite.send(request)).unwrap();
    let reply = azurite.send(lite.get(&table.name, e.partition_key(), e.row_key()).unwrap());
    assert_eq!(response::entity(&reply, None).unwrap().row_key(), "50% + 1");
}

#[test]
fn a_connection_string_with_the_emulator_endpoint() {
    let azurite = azurite!();
    let table = azurite.table("ConnStr");
    let text = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={};TableEndpoint={};",
        table_model::DEVELOPMENT_ACCOUNT_KEY,
        azurite.service.endpoint()
    );
    let (endpoint, credential) = ConnectionString::parse(&text).unwrap().into_parts();
    assert!(endpoint.is_path_style());
    let service = TableService::new(endpoint, credential);
    let reply = azurite.send(service.query(&table.name, &table_model::Query::new(), None).unwrap());
    assert!(response::query(&reply, None).unwrap().entities.is_empty());
}

#[test]
fn a_wrong_key_is_refused() {
    let azurite = azurite!();
    let table = azurite.table("WrongKey");
    for credential in [
        Credential::SharedKey(AccountKey::from_base64("d3Jvbmcga2V5").unwrap()),
        Credential::SharedKeyLite(AccountKey::from_base64("d3Jvbmcga2V5").unwrap()),
    ] {
        let service = TableService::new(azurite.service.endpoint().clone(), credential);
        let reply = azurite.send(service.query(&table.name, &table_model::Query::new(), None).unwrap());
        let err = response::query(&reply, None).unwrap_err();
        let e = err.service().unwrap();
        assert_eq!((e.status(), e.code()), (403, Some("AuthorizationFailure")), "{err}");
    }
}
