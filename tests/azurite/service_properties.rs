//! Service properties (logging, metrics, CORS) and the statistics of the secondary, against Azurite
//! (`docs/rules.md` §9.5). The properties are the account's, shared by every test of the run: one test sets
//! and reads them, in order.

use crate::support::{azurite, Recorder};
use azure_core::http::ClientOptions;
use std::sync::Arc;
use table_model::client::{Error, ErrorKind, TableServiceClient, TableServiceClientOptions};
use table_model::service_properties::{
    AnalyticsLogging, CorsRule, GeoReplicationStatus, Metrics, RetentionPolicy, ServiceProperties,
};
use table_model::{AccountKey, RequestErrorKind, ServiceKind, TableName};

fn request_error(result: Result<impl std::fmt::Debug, Error>) -> RequestErrorKind {
    let err = result.expect_err("refused before sending");
    match err.kind() {
        ErrorKind::Request(e) => e.kind().clone(),
        _ => panic!("not a request error: {err}"),
    }
}

#[tokio::test]
async fn service_properties_are_set_read_back_and_updated_in_part() {
    let azurite = azurite!();
    let service = &azurite.service;

    let full = ServiceProperties::new()
        .with_logging(AnalyticsLogging::new(RetentionPolicy::Days(7)).with_read(true).with_delete(true))
        .with_hour_metrics(Metrics::enabled(true, RetentionPolicy::Days(30)))
        .with_minute_metrics(Metrics::disabled())
        .with_cors(vec![
            CorsRule::new(["https://app.example", "https://admin.example"], ["GET", "MERGE", "OPTIONS"])
                .with_allowed_headers(["x-ms-meta-*", "content-type"])
                .with_exposed_headers(["x-ms-request-id"])
                .with_max_age(600),
            CorsRule::new(["*"], ["GET"]).with_allowed_headers(["*"]).with_exposed_headers(["*"]),
        ]);
    service.set_service_properties(&full, None).await.unwrap();
    assert_eq!(service.get_service_properties(None).await.unwrap(), full);

    // Only the hour metrics are sent: the logging, the minute metrics and the CORS rules stay.
    let hourly = Metrics::enabled(false, RetentionPolicy::Days(1));
    service.set_service_properties(&ServiceProperties::new().with_hour_metrics(hourly.clone()), None).await.unwrap();
    let read = service.get_service_properties(None).await.unwrap();
    let mut expected = full.clone();
    expected.hour_metrics = Some(hourly.clone());
    assert_eq!(read, expected);

    // An empty CORS list removes every rule; the rest stays.
    service.set_service_properties(&ServiceProperties::new().with_cors(Vec::new()), None).await.unwrap();
    let read = service.get_service_properties(None).await.unwrap();
    assert_eq!(read.cors, Some(Vec::new()));
    assert_eq!((read.logging, read.hour_metrics), (full.logging.clone(), Some(hourly)));

    // Azurite (3.35) refuses a CORS rule without allowed or exposed headers (`400`, no code), which the service
    // takes (`docs/rules.md` §9.5): the crates send the rule as given.
    let bare = ServiceProperties::new().with_cors(vec![CorsRule::new(["*"], ["GET"])]);
    let err = service.set_service_properties(&bare, None).await.unwrap_err();
    assert_eq!(err.service().map(|e| (e.status(), e.code())), Some((400, None)), "{err}");

    // Properties that break a rule are refused before sending; what is stored does not change.
    let six_rules = ServiceProperties::new().with_cors(vec![CorsRule::new(["*"], ["GET"]); 6]);
    assert!(matches!(
        request_error(service.set_service_properties(&six_rules, None).await),
        RequestErrorKind::ServiceProperties(_)
    ));
    assert_eq!(service.get_service_properties(None).await.unwrap().cors, Some(Vec::new()));
}

/// Azurite serves the statistics on its `<account>-secondary` path only, always `live` with the time of the
/// request as the last sync; on the primary it answers `400 InvalidQueryParameterValue`.
#[tokio::test]
async fn service_stats_are_served_on_the_secondary() {
    let azurite = azurite!();
    let geo = azurite.service.get_service_stats(None).await.unwrap().geo_replication.expect("geo-replication");
    assert_eq!(geo.status, GeoReplicationStatus::Live);
    assert!(geo.last_sync_time.is_some());

    let primary = http::Request::builder()
        .uri(format!("{}/?restype=service&comp=stats", azurite.url))
        .header("x-ms-version", table_model::X_MS_VERSION)
        .header("accept", "application/xml")
        .body(Vec::new())
        .unwrap();
    let answer = azurite.raw().send(primary).await;
    assert_eq!(answer.status(), 400);
    assert_eq!(answer.headers()["x-ms-error-code"], "InvalidQueryParameterValue");
}

/// A client told it talks to the Cosmos DB Table API refuses what Cosmos DB does not serve, with the request
/// layer's typed error, and sends nothing.
#[tokio::test]
async fn a_cosmos_client_refuses_and_sends_nothing() {
    let azurite = azurite!();
    let recorder = Arc::new(Recorder::default());
    let options = TableServiceClientOptions {
        client_options: ClientOptions { per_try_policies: vec![recorder.clone()], ..Default::default() },
        service_kind: Some(ServiceKind::CosmosDb),
        ..Default::default()
    };
    let cosmos = TableServiceClient::new(&azurite.url, AccountKey::development(), Some(options)).unwrap();
    let table = cosmos.table_client(TableName::from_static("Audit"));
    let refused = [
        request_error(cosmos.get_service_properties(None).await),
        request_error(cosmos.set_service_properties(&ServiceProperties::new(), None).await),
        request_error(cosmos.get_service_stats(None).await),
        request_error(table.get_access_policy(None).await),
        request_error(table.set_access_policy(&[], None).await),
    ];
    for kind in refused {
        assert!(matches!(kind, RequestErrorKind::NotSupported { service: ServiceKind::CosmosDb, .. }), "{kind:?}");
    }
    assert!(recorder.sent().is_empty(), "{:?}", recorder.sent());
}
