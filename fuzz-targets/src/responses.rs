//! Whole HTTP responses: a batch's answer ([`response::batch`]), an error ([`response::error`]) and a table
//! listing ([`response::tables`]), built from the fuzzer's bytes.
//!
//! Layer: targets.

use http::header::{HeaderValue, CONTENT_TYPE};
use http::Response;
use table_model::response;
use table_model::{ResponseErrorKind, TableName};

/// The statuses the targets answer with, one picked by a byte: the batch's `202`, successes the operation
/// does not answer with, and errors.
const STATUSES: [u16; 8] = [202, 202, 202, 200, 204, 400, 409, 500];

/// The bytes split into a head line and a body: everything up to the first line feed, and the rest.
fn split_line(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == b'\n') {
        Some(end) => (&data[..end], &data[end + 1..]),
        None => (data, &[]),
    }
}

/// The first byte picks the number of operations (1 to 100) and the status; then a line is the
/// `Content-Type` (left out when it is no header value), and the rest is the body.
///
/// Whatever the response, reading it does not panic; a success has one ETag per operation; a service error's
/// operation index is inside the batch; an index outside it is refused as
/// [`ResponseErrorKind::OperationIndexOutOfRange`], with the number and the batch's size.
pub fn batch_response(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let operations = usize::from(first % 100) + 1;
    let status = STATUSES[usize::from(first >> 5)];
    let (content_type, body) = split_line(rest);
    let mut builder = Response::builder().status(status);
    if let Ok(value) = HeaderValue::from_bytes(content_type) {
        builder = builder.header(CONTENT_TYPE, value);
    }
    let reply = builder.body(body.to_vec()).expect("a valid status and header");
    match response::batch(&reply, operations) {
        Ok(outcome) => {
            assert_eq!(status, 202, "only 202 is a batch's success");
            assert_eq!(outcome.etags.len(), operations, "one ETag per operation");
        }
        Err(e) => match e.kind() {
            ResponseErrorKind::Service(service) => {
                if let Some(index) = service.operation_index() {
                    assert!(index < operations, "operation {index} of a batch of {operations}: {e}");
                }
            }
            ResponseErrorKind::OperationIndexOutOfRange { index, operations: n, error } => {
                assert_eq!(*n, operations);
                assert_eq!(error.operation_index(), None);
                assert!(!index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()), "{index:?}");
                assert!(index.parse::<usize>().map_or(true, |i| i >= operations), "{index} is inside {operations}");
                assert!(error.message().starts_with(&format!("{index}:")), "{e}");
            }
            _ => {}
        },
    }
    // The display of any error is one line of text, whatever the body held.
    if let Err(e) = response::batch(&reply, operations) {
        let _ = e.to_string();
    }
}

/// Two bytes pick the status (300 to 599); then a line is the `x-ms-error-code` header (left out when it
/// is no header value), and the rest is the body, JSON or XML or anything.
///
/// The error is always read; its code is the header's when there is one; an operation index is below 100.
pub fn error_response(data: &[u8]) {
    let [a, b, rest @ ..] = data else { return };
    let status = 300 + u16::from_be_bytes([*a, *b]) % 300;
    let (code, body) = split_line(rest);
    let mut builder = Response::builder().status(status);
    let header = HeaderValue::from_bytes(code).ok();
    if let Some(value) = &header {
        builder = builder.header("x-ms-error-code", value.clone());
    }
    let reply = builder.body(body.to_vec()).expect("a valid status and header");
    let error = response::error(&reply).expect("a status of 300 or more is an error");
    assert_eq!(error.status(), status);
    if let Some(text) = header.as_ref().and_then(|v| v.to_str().ok()) {
        assert_eq!(error.code(), Some(text), "the header's code wins");
    }
    if let Some(index) = error.operation_index() {
        assert!(index < 100, "no batch has operation {index}");
    }
    let _ = (error.to_string(), error.error_code(), error.message());
    // Every reader of a response sees the error first.
    let err = response::empty(&reply).expect_err("an error status");
    assert_eq!(err.service(), Some(&error));
}

/// The bytes as the body of a `200 OK` table listing: every table name read is a valid one that re-parses
/// to itself.
pub fn table_listing(data: &[u8]) {
    let reply = Response::builder()
        .status(200)
        .header("x-ms-continuation-NextTableName", "1!8!VGFibGU-")
        .body(data.to_vec())
        .expect("a valid response");
    let Ok(page) = response::tables(&reply) else { return };
    for table in &page.tables {
        let again =
            if table.is_analytics() { TableName::analytics(table.as_str()) } else { TableName::new(table.as_str()) };
        assert_eq!(again.ok().map(TableName::into_string).as_deref(), Some(table.as_str()), "table name {table}");
    }
    assert!(page.continuation.is_some());
}

/// The bytes are the body of a `200` answer to `Get Table ACL` ([`response::access_policies`]).
///
/// Whatever the body, reading it does not panic. Policies read are written back by
/// [`TableService::set_access_policy`](table_model::TableService::set_access_policy) and read again to the
/// same list, or refused there for a rule the list breaks: more than 5, or an identifier twice. A time read is
/// always one the service's form writes (its year 1 to 9999).
pub fn access_policies(data: &[u8]) {
    use table_model::{RequestErrorKind, SasErrorKind, TableService};
    let reply = Response::builder().status(200).body(data.to_vec()).expect("a valid response");
    let Ok(policies) = response::access_policies(&reply) else { return };
    let service = TableService::from_connection_string("UseDevelopmentStorage=true").expect("the development storage");
    let table = TableName::from_static("Fuzz");
    match service.set_access_policy(&table, &policies) {
        Ok(request) => {
            let again = Response::builder().status(200).body(request.into_body()).expect("a valid response");
            assert_eq!(
                response::access_policies(&again).as_ref(),
                Ok(&policies),
                "{:?}",
                String::from_utf8_lossy(data)
            );
        }
        Err(e) => {
            let RequestErrorKind::AccessPolicy(e) = e.kind() else { panic!("not a policy rule: {e}") };
            let holds = match e.kind() {
                SasErrorKind::TooManyPolicies { found } => *found == policies.len() && *found > 5,
                SasErrorKind::DuplicatePolicyId { id } => policies.iter().filter(|p| p.id.as_str() == id).count() > 1,
                _ => false,
            };
            assert!(holds, "{e}");
        }
    }
}

/// The bytes are the body of a `200` answer to `Get Table Service Properties`
/// ([`response::service_properties`]).
///
/// Whatever the body, reading it does not panic. Properties read are written back by
/// [`TableService::set_service_properties`](table_model::TableService::set_service_properties) and read again
/// to the same value, or refused there with exactly the error
/// [`ServiceProperties::check`](table_model::service_properties::ServiceProperties::check) gives (an answer
/// may break a documented limit: 400 days of retention, 6 CORS rules).
pub fn service_properties(data: &[u8]) {
    use table_model::{RequestErrorKind, TableService};
    let reply = Response::builder().status(200).body(data.to_vec()).expect("a valid response");
    let Ok(properties) = response::service_properties(&reply) else { return };
    let service = TableService::from_connection_string("UseDevelopmentStorage=true").expect("the development storage");
    match service.set_service_properties(&properties) {
        Ok(request) => {
            let again = Response::builder().status(200).body(request.into_body()).expect("a valid response");
            assert_eq!(
                response::service_properties(&again).as_ref(),
                Ok(&properties),
                "{:?}",
                String::from_utf8_lossy(data)
            );
        }
        Err(e) => {
            let RequestErrorKind::ServiceProperties(e) = e.kind() else { panic!("not a properties rule: {e}") };
            assert_eq!(properties.check().as_ref(), Err(e));
        }
    }
}

/// The bytes are the body of a `200` answer to `Get Table Service Stats` ([`response::service_stats`]).
///
/// Whatever the body, reading it does not panic. A status kept as another status is none of the three the
/// service documents, and a last sync time read is written as RFC 1123 and read again to the same instant.
pub fn service_stats(data: &[u8]) {
    use table_model::service_properties::GeoReplicationStatus;
    let reply = Response::builder().status(200).body(data.to_vec()).expect("a valid response");
    let Ok(stats) = response::service_stats(&reply) else { return };
    let Some(geo) = stats.geo_replication else { return };
    if let GeoReplicationStatus::Other(other) = &geo.status {
        assert!(!["live", "bootstrap", "unavailable"].contains(&other.as_str()), "{other}");
    }
    assert_eq!(GeoReplicationStatus::from(geo.status.as_str()), geo.status);
    if let Some(time) = geo.last_sync_time {
        let body = format!(
            "<StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>{}</LastSyncTime>\
             </GeoReplication></StorageServiceStats>",
            time.to_rfc2822()
        );
        let again = response::service_stats(&Response::builder().status(200).body(body).expect("a valid response"));
        assert_eq!(again.expect("a time written is read").geo_replication.and_then(|g| g.last_sync_time), Some(time));
    }
}
