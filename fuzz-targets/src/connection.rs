//! Where the service is and how to authorize: [`ConnectionString::parse`], [`Endpoint::parse`],
//! [`SasToken::new`]; and the requests built on what they accept.
//!
//! Layer: targets.

use crate::text;
use table_model::response::{Continuation, TableContinuation};
use table_model::{
    ConnectionString, Credential, Endpoint, IfMatch, PartitionKey, Query, RowKey, SasToken, TableName, TableService,
};

/// A connection string that parses gives an endpoint that re-parses to itself, a SAS token that re-parses to
/// itself, and a service whose requests build and sign.
pub fn connection_string(data: &[u8]) {
    let Ok(parsed) = ConnectionString::parse(&text(data)) else { return };
    endpoint_round_trip(parsed.endpoint());
    if let Credential::Sas(sas) = parsed.credential() {
        assert_eq!(SasToken::new(sas.as_str()).as_ref(), Ok(sas), "SAS token {}", sas.as_str());
    }
    requests(TableService::new(parsed.endpoint().clone(), parsed.credential().clone()));
}

/// An endpoint that parses re-parses to itself (from its URL alone, and with its account), and its
/// requests build and sign; the same for the URL taken with an explicit account.
pub fn endpoint(data: &[u8]) {
    let url = text(data);
    if let Ok(endpoint) = Endpoint::parse(&url) {
        assert_eq!(Endpoint::parse(endpoint.url()).as_ref(), Ok(&endpoint), "{url:?} gave {}", endpoint.url());
        endpoint_round_trip(&endpoint);
        requests(TableService::new(endpoint, Credential::Anonymous));
    }
    if let Ok(endpoint) = Endpoint::with_account(&url, "acct") {
        endpoint_round_trip(&endpoint);
        requests(TableService::from_connection_string("UseDevelopmentStorage=true").map_or_else(
            |e| panic!("the development connection string: {e}"),
            |dev| TableService::new(endpoint, dev.credential().clone()),
        ));
    }
}

/// A SAS token that is accepted re-parses to itself, and every request signed with it is a valid URI.
pub fn sas_token(data: &[u8]) {
    let Ok(sas) = SasToken::new(&text(data)) else { return };
    assert_eq!(SasToken::new(sas.as_str()).as_ref(), Ok(&sas), "SAS token {}", sas.as_str());
    assert!(!sas.as_str().starts_with('?') && !sas.as_str().is_empty());
    requests(TableService::new(Endpoint::development(), Credential::Sas(sas)));
}

/// The endpoint with its URL and account re-parses to itself, and its display is its URL.
fn endpoint_round_trip(endpoint: &Endpoint) {
    let again = Endpoint::with_account(endpoint.url(), endpoint.account());
    assert_eq!(again.as_ref(), Ok(endpoint), "{}", endpoint.url());
    assert_eq!(endpoint.to_string(), endpoint.url());
    assert!(endpoint.url().ends_with(endpoint.path()));
    assert!(!endpoint.url().ends_with('/'), "{}", endpoint.url());
    let _ = endpoint.kind();
}

/// Requests of every shape build on the service (building panics on a URI the endpoint should have refused).
fn requests(service: TableService) {
    let table = TableName::new("Fuzz").expect("a valid table name");
    let (pk, rk) = (PartitionKey::new("p'k").expect("a valid key"), RowKey::new("r k").expect("a valid key"));
    let results = [
        service.create_table(&table).map(drop),
        service.list_tables(&Query::new(), Some(&TableContinuation::new("1!8!VGFibGU-"))).map(drop),
        service.get(&table, &pk, &rk).map(drop),
        service.delete(&table, &pk, &rk, IfMatch::Any).map(drop),
        service
            .query(&table, &Query::new().top(5), Some(&Continuation::new("1!4!cA--", Some("1!4!cg--".to_owned()))))
            .map(drop),
    ];
    for result in results {
        result.unwrap_or_else(|e| panic!("a request on {}: {e}", service.endpoint().url()));
    }
}
