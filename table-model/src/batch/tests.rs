use super::*;
use crate::connection::Endpoint;
use crate::entity::ETag;
use crate::entity::Entity;
use crate::limits::BATCH_MAX_BODY_BYTES;
use crate::request::error::BatchErrorKind;
use crate::request::error::RequestErrorKind;
use crate::response::batch as read_batch;
use crate::response::batch_response::MAX_BOUNDARY;
use crate::response::errors::ResponseErrorKind;
use http::Response;
use std::time::{Duration, UNIX_EPOCH};

fn service() -> TableService {
    TableService::from_connection_string("UseDevelopmentStorage=true")
        .unwrap()
        .at_time(UNIX_EPOCH + Duration::from_secs(1_795_306_922))
}

fn pk() -> PartitionKey {
    PartitionKey::new("eu").unwrap()
}

fn entity(rk: &str) -> Entity {
    Entity::new(pk(), RowKey::new(rk).unwrap()).with("N".parse().unwrap(), 1).unwrap()
}

fn batch() -> Batch {
    Batch::new(TableName::new("People").unwrap(), pk())
}

fn build(b: &Batch) -> Request<Vec<u8>> {
    match service().batch(b) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    }
}

/// The body with its random boundaries replaced by fixed names.
fn normalized(r: &Request<Vec<u8>>) -> String {
    let body = String::from_utf8(r.body().clone()).unwrap();
    let batch = r.headers()[CONTENT_TYPE].to_str().unwrap().strip_prefix("multipart/mixed; boundary=").unwrap();
    let changeset_at = body.find("boundary=changeset_").unwrap() + "boundary=".len();
    let changeset = &body[changeset_at..changeset_at + CHANGESET_PREFIX.len() + BOUNDARY_HEX];
    assert_eq!(batch.len(), BATCH_PREFIX.len() + BOUNDARY_HEX);
    body.replace(batch, "BATCH").replace(changeset, "CHANGESET")
}

#[test]
fn body_format() {
    let mut b = batch();
    b.insert(&entity("a")).unwrap();
    b.update(&entity("b'c"), UpdateMode::Merge, IfMatch::ETag(ETag::new("W/\"1\""))).unwrap();
    b.delete(&RowKey::new("d").unwrap(), IfMatch::Any).unwrap();
    let r = build(&b);
    assert_eq!(r.method(), "POST");
    assert_eq!(r.uri(), "http://127.0.0.1:10002/devstoreaccount1/$batch");
    assert_eq!(r.headers()["x-ms-version"], "2019-02-02");
    assert_eq!(r.headers()["dataserviceversion"], "3.0");
    assert!(r.headers()["authorization"].to_str().unwrap().starts_with("SharedKey devstoreaccount1:"));
    let expected = "--BATCH\r\n\
Content-Type: multipart/mixed; boundary=CHANGESET\r\n\
\r\n\
--CHANGESET\r\n\
Content-Type: application/http\r\n\
Content-Transfer-Encoding: binary\r\n\
\r\n\
POST http://127.0.0.1:10002/devstoreaccount1/People HTTP/1.1\r\n\
Content-Type: application/json\r\n\
Accept: application/json;odata=minimalmetadata\r\n\
Prefer: return-no-content\r\n\
DataServiceVersion: 3.0\r\n\
\r\n\
{\"PartitionKey\":\"eu\",\"RowKey\":\"a\",\"N\":1}\r\n\
--CHANGESET\r\n\
Content-Type: application/http\r\n\
Content-Transfer-Encoding: binary\r\n\
\r\n\
MERGE http://127.0.0.1:10002/devstoreaccount1/People(PartitionKey='eu',RowKey='b%27%27c') HTTP/1.1\r\n\
Content-Type: application/json\r\n\
Accept: application/json;odata=minimalmetadata\r\n\
DataServiceVersion: 3.0\r\n\
If-Match: W/\"1\"\r\n\
\r\n\
{\"PartitionKey\":\"eu\",\"RowKey\":\"b'c\",\"N\":1}\r\n\
--CHANGESET\r\n\
Content-Type: application/http\r\n\
Content-Transfer-Encoding: binary\r\n\
\r\n\
DELETE http://127.0.0.1:10002/devstoreaccount1/People(PartitionKey='eu',RowKey='d') HTTP/1.1\r\n\
Accept: application/json;odata=minimalmetadata\r\n\
DataServiceVersion: 3.0\r\n\
If-Match: *\r\n\
\r\n\
\r\n\
--CHANGESET--\r\n\
--BATCH--\r\n";
    assert_eq!(normalized(&r), expected);
}

#[test]
fn boundaries_are_random() {
    let mut b = batch();
    b.insert(&entity("a")).unwrap();
    assert_ne!(build(&b).headers()[CONTENT_TYPE], build(&b).headers()[CONTENT_TYPE]);
}

#[test]
fn one_partition_key_each_row_key_once() {
    let mut b = batch();
    b.insert(&entity("a")).unwrap().upsert(&entity("b"), UpdateMode::Replace).unwrap();
    let other = Entity::new(PartitionKey::new("us").unwrap(), RowKey::new("c").unwrap());
    let err = b.insert(&other).unwrap_err();
    assert_eq!(
        (err.index(), err.kind()),
        (2, &BatchErrorKind::PartitionKeyMismatch { expected: "eu".into(), found: "us".into() })
    );
    let err = b.delete(&RowKey::new("b").unwrap(), IfMatch::Any).unwrap_err();
    assert_eq!((err.index(), err.kind()), (2, &BatchErrorKind::DuplicateRowKey { row_key: "b".into(), first: 1 }));
    let err = b.update(&entity("a"), UpdateMode::Merge, IfMatch::Any).unwrap_err();
    assert_eq!(err.kind(), &BatchErrorKind::DuplicateRowKey { row_key: "a".into(), first: 0 });
    assert_eq!(b.len(), 2);
    // RowKeys compare exactly: case and Unicode form matter.
    b.insert(&entity("A")).unwrap();
}

#[test]
fn at_most_100_operations() {
    let mut b = batch();
    for i in 0..BATCH_MAX_OPERATIONS {
        b.delete(&RowKey::new(format!("{i:03}")).unwrap(), IfMatch::Any).unwrap();
    }
    let err = b.insert(&entity("x")).unwrap_err();
    assert_eq!((err.index(), err.kind()), (100, &BatchErrorKind::TooManyOperations));
    assert_eq!(err.to_string(), "invalid batch operation 100: a batch holds at most 100 operations");
    assert_eq!(b.len(), 100);
    build(&b);
}

#[test]
fn empty_batches_are_refused() {
    let err = service().batch(&batch()).unwrap_err();
    assert!(matches!(err.kind(), RequestErrorKind::Batch(e) if e.kind() == &BatchErrorKind::Empty));
    assert_eq!(err.to_string(), "invalid batch: a batch needs at least one operation");
}

/// An entity of about `kib` KiB of JSON (strings of ASCII, so JSON bytes are about the string bytes).
fn big(rk: &str, kib: usize) -> Entity {
    let mut e = Entity::new(pk(), RowKey::new(rk).unwrap());
    for i in 0..kib / 32 {
        e.insert(format!("S{i}").parse().unwrap(), "x".repeat(32 * 1024 - 8)).unwrap();
    }
    e
}

#[test]
fn body_stays_under_4_mib() {
    let mut b = batch();
    let mut index = 0;
    let err = loop {
        match b.upsert(&big(&format!("{index:02}"), 480), UpdateMode::Replace) {
            Ok(_) => index += 1,
            Err(e) => break e,
        }
    };
    let BatchErrorKind::BodyTooLarge { size, .. } = *err.kind() else { panic!("{err}") };
    assert_eq!(err.index(), index);
    assert!(size >= BATCH_MAX_BODY_BYTES);
    assert!(index >= 8, "{index}");
    // What was accepted builds, and the add-time size is exact: the built body adds only the endpoint URL and
    // the `Accept` value to each sub-request.
    let r = build(&b);
    assert!(r.body().len() < BATCH_MAX_BODY_BYTES);
    let per_operation = service().endpoint().url().len() + "application/json;odata=minimalmetadata".len();
    assert_eq!(r.body().len(), b.size + b.len() * per_operation);
}

#[test]
fn a_long_endpoint_can_push_a_batch_over_at_build_time() {
    let mut b = batch();
    let mut i = 0;
    while b.upsert(&big(&format!("{i:02}"), 480), UpdateMode::Replace).is_ok() {
        i += 1;
    }
    let room = BATCH_MAX_BODY_BYTES - b.size;
    // An endpoint URL long enough that the sub-requests' URLs no longer fit.
    let host = format!("https://{}.example", "a".repeat(room / b.len() + 1));
    let long =
        TableService::new(Endpoint::with_account(&host, "acct").unwrap(), crate::connection::Credential::Anonymous);
    let Err(err) = long.batch(&b) else { panic!("accepted") };
    let RequestErrorKind::Batch(e) = err.kind() else { panic!("{err}") };
    assert!(matches!(e.kind(), BatchErrorKind::BodyTooLarge { .. }));
    assert!(e.index() < b.len());
}

fn reply(status: u16, content_type: &str, body: &str) -> Response<Vec<u8>> {
    Response::builder().status(status).header("content-type", content_type).body(body.as_bytes().to_vec()).unwrap()
}

#[test]
fn successful_response() {
    // The shape of the service's answer (Microsoft's "Performing entity group transactions", JSON variant).
    let body = "--batchresponse_7ab1\r\n\
Content-Type: multipart/mixed; boundary=changesetresponse_f2e3\r\n\
\r\n\
--changesetresponse_f2e3\r\n\
Content-Type: application/http\r\n\
Content-Transfer-Encoding: binary\r\n\
\r\n\
HTTP/1.1 204 No Content\r\n\
X-Content-Type-Options: nosniff\r\n\
Cache-Control: no-cache\r\n\
Preference-Applied: return-no-content\r\n\
DataServiceVersion: 3.0;\r\n\
ETag: W/\"0x5B168C7B6E589D2\"\r\n\
\r\n\
\r\n\
--changesetresponse_f2e3\r\n\
Content-Type: application/http\r\n\
Content-Transfer-Encoding: binary\r\n\
\r\n\
HTTP/1.1 204 No Content\r\n\
X-Content-Type-Options: nosniff\r\n\
DataServiceVersion: 1.0;\r\n\
\r\n\
\r\n\
--changesetresponse_f2e3--\r\n\
--batchresponse_7ab1--\r\n";
    let r = reply(202, "multipart/mixed; boundary=batchresponse_7ab1", body);
    let out = read_batch(&r, 2).unwrap();
    assert_eq!(out.etags, vec![Some(ETag::new("W/\"0x5B168C7B6E589D2\"")), None]);
    assert!(matches!(read_batch(&r, 3).unwrap_err().kind(), ResponseErrorKind::Malformed { .. }));
}

#[test]
fn failed_operation_is_named() {
    let body = "--batchresponse_7ab1\r\n\
Content-Type: multipart/mixed; boundary=changesetresponse_f2e3\r\n\
\r\n\
--changesetresponse_f2e3\r\n\
Content-Type: application/http\r\n\
Content-Transfer-Encoding: binary\r\n\
\r\n\
HTTP/1.1 409 Conflict\r\n\
Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\
\r\n\
{\"odata.error\":{\"code\":\"EntityAlreadyExists\",\"message\":{\"lang\":\"en-US\",\"value\":\"2:The specified entity already exists.\\nRequestId:x\"}}}\r\n\
--changesetresponse_f2e3--\r\n\
--batchresponse_7ab1--\r\n";
    let r = reply(202, "multipart/mixed; boundary=batchresponse_7ab1", body);
    let err = read_batch(&r, 5).unwrap_err();
    let e = err.service().unwrap();
    assert_eq!((e.status(), e.code(), e.operation_index()), (409, Some("EntityAlreadyExists"), Some(2)));
    // LF line ends are read too.
    let r = reply(202, "multipart/mixed; boundary=batchresponse_7ab1", &body.replace("\r\n", "\n"));
    assert_eq!(read_batch(&r, 5).unwrap_err().service().unwrap().operation_index(), Some(2));
}

/// The answer to a batch whose failed operation's message is `message`.
fn failed_with(message: &str) -> Response<Vec<u8>> {
    let error = serde_json::json!({"odata.error": {"code": "EntityAlreadyExists", "message": {"lang": "en-US", "value": message}}});
    let body = format!(
        "--batchresponse_7ab1\r\n\
Content-Type: multipart/mixed; boundary=changesetresponse_f2e3\r\n\
\r\n\
--changesetresponse_f2e3\r\n\
Content-Type: application/http\r\n\
Content-Transfer-Encoding: binary\r\n\
\r\n\
HTTP/1.1 409 Conflict\r\n\
Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\
\r\n\
{error}\r\n\
--changesetresponse_f2e3--\r\n\
--batchresponse_7ab1--\r\n"
    );
    reply(202, "multipart/mixed; boundary=batchresponse_7ab1", &body)
}

#[test]
fn the_failed_operation_is_inside_the_batch() {
    let index = |message: &str, operations: usize| read_batch(&failed_with(message), operations).unwrap_err();
    let inside = |message: &str, operations: usize| {
        let err = index(message, operations);
        let service = err.service().unwrap_or_else(|| panic!("{message:?}: {err}"));
        assert_eq!((service.status(), service.code()), (409, Some("EntityAlreadyExists")));
        service.operation_index()
    };
    assert_eq!(inside("1:The specified entity already exists.", 2), Some(1));
    assert_eq!(inside("0:The specified entity already exists.", 2), Some(0));
    assert_eq!(inside("01:The specified entity already exists.", 2), Some(1));
    assert_eq!(inside("99:x", 100), Some(99));
    // No prefix: no index, except in a batch of one.
    assert_eq!(inside("The specified entity already exists.", 2), None);
    assert_eq!(inside("The specified entity already exists.", 1), Some(0));
    assert_eq!(inside(":x", 2), None);

    let outside = |message: &str, operations: usize| {
        let err = index(message, operations);
        let ResponseErrorKind::OperationIndexOutOfRange { index, operations: n, error } = err.kind() else {
            panic!("{message:?} in a batch of {operations}: {err}")
        };
        assert_eq!(*n, operations);
        assert_eq!((error.status(), error.code(), error.operation_index()), (409, Some("EntityAlreadyExists"), None));
        assert!(err.service().is_none(), "an index outside the batch is not the service's error");
        (index.clone(), err.to_string())
    };
    assert_eq!(
        outside("999:The specified entity already exists.", 2),
        (
            "999".to_owned(),
            "invalid batch response: the error names operation 999, but the batch has 2 operations (the service \
             refused the request: 409 EntityAlreadyExists: 999:The specified entity already exists.)"
                .to_owned()
        )
    );
    assert_eq!(outside("2:x", 2).0, "2");
    assert_eq!(outside("1:x", 1).1, "invalid batch response: the error names operation 1, but the batch has 1 operation (the service refused the request: 409 EntityAlreadyExists: 1:x)");
    // Leading zeros do not hide a number outside the batch.
    assert_eq!(outside("0002:x", 2).0, "0002");
    // A number beyond every integer type.
    let huge = "9".repeat(40);
    assert_eq!(outside(&format!("{huge}:x"), 2).0, huge);
    assert_eq!(outside("18446744073709551616:x", 100).0, "18446744073709551616");
    assert_eq!(outside("100:x", 100).0, "100");
    // The error of the whole request is checked too, but names no operation by default.
    let whole = |message: &str| {
        let body = serde_json::json!({"odata.error": {"code": "InvalidInput", "message": {"value": message}}});
        read_batch(&reply(400, "application/json", &body.to_string()), 1).unwrap_err()
    };
    assert_eq!(whole("0:Bad Request").service().unwrap().operation_index(), Some(0));
    assert_eq!(whole("Bad Request").service().unwrap().operation_index(), None);
    assert!(matches!(whole("5:Bad Request").kind(), ResponseErrorKind::OperationIndexOutOfRange { .. }));
}

#[test]
fn boundaries_are_1_to_70_characters() {
    let part = "--changesetresponse_f2e3\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n\r\n";
    let body = |boundary: &str| {
        format!(
            "--{boundary}\r\nContent-Type: multipart/mixed; boundary=changesetresponse_f2e3\r\n\r\n{part}\
             --changesetresponse_f2e3--\r\n--{boundary}--\r\n"
        )
    };
    let longest = "b".repeat(MAX_BOUNDARY);
    let r = reply(202, &format!("multipart/mixed; boundary=\"{longest}\""), &body(&longest));
    assert_eq!(read_batch(&r, 1).unwrap().etags, vec![None]);
    // Longer is refused before the body is searched: a hostile boundary of a megabyte against a body of
    // another would otherwise cost a comparison of the whole boundary at every byte.
    let hostile = format!("{}b", "a".repeat(1 << 20));
    for boundary in ["", &hostile[..=MAX_BOUNDARY], &hostile] {
        let r = reply(202, &format!("multipart/mixed; boundary={boundary}"), &"a".repeat(1 << 20));
        let err = read_batch(&r, 1).unwrap_err();
        assert_eq!(err.to_string(), "invalid response body: no multipart boundary", "{}", boundary.len());
    }
}

#[test]
fn whole_request_errors() {
    let r = reply(403, "application/xml", "<Error><Code>AuthenticationFailed</Code><Message>no</Message></Error>");
    assert_eq!(read_batch(&r, 1).unwrap_err().service().unwrap().code(), Some("AuthenticationFailed"));
    let r = reply(202, "text/plain", "");
    assert!(matches!(read_batch(&r, 1).unwrap_err().kind(), ResponseErrorKind::Malformed { .. }));
}

/// The multipart reader against a naive reference (the boundary compared at every byte), on random bodies
/// made of few distinct bytes and many delimiters, so that partial and overlapping matches abound.
mod multipart_reference {
    use super::super::multipart;
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn naive_find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
        haystack.windows(needle.len()).position(|w| w == needle)
    }

    /// The splitter as it was written before the linear search.
    fn naive_split<'a>(body: &'a [u8], boundary: &[u8]) -> Vec<&'a [u8]> {
        let delimiter = [b"--", boundary].concat();
        let mut parts = Vec::new();
        let Some(first) = naive_find(body, &delimiter) else { return parts };
        let mut rest = &body[first + delimiter.len()..];
        while !rest.starts_with(b"--") {
            let Some(next) = naive_find(rest, &delimiter) else { break };
            let part = &rest[..next];
            let part = part.strip_prefix(b"\r\n").or_else(|| part.strip_prefix(b"\n")).unwrap_or(part);
            parts.push(part.strip_suffix(b"\r\n").or_else(|| part.strip_suffix(b"\n")).unwrap_or(part));
            rest = &rest[next + delimiter.len()..];
        }
        parts
    }

    /// Random bytes of `-ab` and line ends, with the delimiter (`--boundary`, sometimes closing) inserted at
    /// random places.
    fn body_with(boundary: &str, filler: &[u8], cuts: &[(usize, bool)]) -> Vec<u8> {
        let mut body = filler.to_vec();
        for &(at, closing) in cuts {
            let at = at.min(body.len());
            let delimiter = format!("\r\n--{boundary}{}\r\n", if closing { "--" } else { "" });
            body.splice(at..at, delimiter.into_bytes());
        }
        body
    }

    /// Up to 300 of `-`, `a`, `b`, CR and LF, each as likely. One `select` a byte, where a `prop_oneof!` of five
    /// `Just`s drew through a union of strategies: the same bytes, each test 9 s to 0.5 s in a debug build.
    fn filler() -> impl Strategy<Value = Vec<u8>> {
        vec(proptest::sample::select(&b"-ab\r\n"[..]), 0..300)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn split_agrees(
            boundary in "[-ab]{1,8}",
            filler in filler(),
            cuts in vec((0..300usize, any::<bool>()), 0..6),
        ) {
            let body = body_with(&boundary, &filler, &cuts);
            prop_assert_eq!(multipart::split(&body, boundary.as_bytes()), naive_split(&body, boundary.as_bytes()));
        }

        /// The whole reader on random responses: it never panics, and what it accepts has one ETag per operation.
        #[test]
        fn reader_never_panics(
            boundary in "[-ab]{1,8}",
            changeset in "[-ab]{1,8}",
            pieces in vec(prop_oneof![
                Just("HTTP/1.1 204 No Content\r\n".to_owned()),
                Just("HTTP/1.1 409 Conflict\r\n".to_owned()),
                Just("ETag: W/\"1\"\r\n".to_owned()),
                Just("Content-Type: application/http\r\n".to_owned()),
                Just("\r\n".to_owned()),
                Just("\n".to_owned()),
                Just("{\"odata.error\":{\"code\":\"X\",\"message\":{\"value\":\"1:x\"}}}".to_owned()),
                "[-ab:\r\n ]{0,12}",
            ], 0..40),
            cuts in vec((0..40usize, 0..4u8), 0..8),
            operations in 1..4usize,
        ) {
            let mut pieces = pieces;
            for (at, kind) in cuts {
                let delimiter = match kind {
                    0 => format!("--{boundary}\r\n"),
                    1 => format!("--{boundary}\r\nContent-Type: multipart/mixed; boundary={changeset}\r\n\r\n"),
                    2 => format!("--{changeset}\r\n"),
                    _ => format!("--{changeset}--\r\n--{boundary}--\r\n"),
                };
                pieces.insert(at.min(pieces.len()), delimiter);
            }
            let r = reply(202, &format!("multipart/mixed; boundary={boundary}"), &pieces.concat());
            if let Ok(outcome) = read_batch(&r, operations) {
                prop_assert_eq!(outcome.etags.len(), operations);
            }
        }
    }
}

/// Cosmos DB for Table's rules (`docs/rules.md` §13.1) on batches: checked when the request is built for a
/// Cosmos service, or as operations are added to a batch made [`Batch::with_rules`].
mod cosmos_rules {
    use super::*;
    use crate::connection::ServiceKind;
    use crate::{KeyKind, RuleSet, RuleSetErrorKind};

    fn cosmos() -> TableService {
        service().with_service_kind(ServiceKind::CosmosDb)
    }

    /// The rule a batch error carries, with the operation it names.
    fn refusal(err: &BatchError) -> (usize, RuleSetErrorKind, String) {
        let BatchErrorKind::Request(e) = err.kind() else { panic!("{err}") };
        let RequestErrorKind::ServiceRule { error, value } = e.kind() else { panic!("{err}") };
        (err.index(), error.kind(), value.clone())
    }

    fn built_refusal(service: &TableService, b: &Batch) -> (usize, RuleSetErrorKind, String) {
        let err = service.batch(b).unwrap_err();
        let RequestErrorKind::Batch(e) = err.kind() else { panic!("{err}") };
        refusal(e)
    }

    #[test]
    fn keys_and_names_are_checked_when_built_for_cosmos() {
        let long_rk = "r".repeat(256);
        let mut b = batch();
        b.insert(&entity("a")).unwrap();
        b.delete(&RowKey::new(&long_rk).unwrap(), IfMatch::Any).unwrap();
        assert!(String::from_utf8_lossy(build(&b).body()).contains(&format!("RowKey='{long_rk}'")));
        let row = RuleSetErrorKind::KeyTooLong { key: KeyKind::Row, utf8_len: 256, max: 255 };
        assert_eq!(built_refusal(&cosmos(), &b), (1, row, long_rk.clone()));

        let mut b = batch();
        b.upsert(&entity("a"), UpdateMode::Merge).unwrap();
        b.update(&entity("b").with("rid".parse().unwrap(), 1).unwrap(), UpdateMode::Replace, IfMatch::Any).unwrap();
        build(&b);
        assert_eq!(
            built_refusal(&cosmos(), &b),
            (1, RuleSetErrorKind::ReservedPropertyName { reserved: "rid" }, "rid".into())
        );

        let long_pk = PartitionKey::new(format!("{}é", "€".repeat(341))).unwrap();
        let mut b = Batch::new(TableName::new("People").unwrap(), long_pk.clone());
        b.delete(&RowKey::new("a").unwrap(), IfMatch::Any).unwrap();
        build(&b);
        let partition = RuleSetErrorKind::KeyTooLong { key: KeyKind::Partition, utf8_len: 1025, max: 1024 };
        assert_eq!(built_refusal(&cosmos(), &b), (0, partition, long_pk.to_string()));
    }

    #[test]
    fn a_batch_with_rules_refuses_as_operations_are_added() {
        let mut b = batch().with_rules(RuleSet::CosmosDb);
        b.insert(&entity("a")).unwrap();
        let err = b.insert(&entity("b").with("Id".parse().unwrap(), 1).unwrap()).unwrap_err();
        assert_eq!(refusal(&err), (1, RuleSetErrorKind::ReservedPropertyName { reserved: "ID" }, "Id".into()));
        let err = b.delete(&RowKey::new("€".repeat(86)).unwrap(), IfMatch::Any).unwrap_err();
        assert_eq!(refusal(&err).1, RuleSetErrorKind::KeyTooLong { key: KeyKind::Row, utf8_len: 258, max: 255 });
        let err = b.upsert(&entity(&"r".repeat(256)), UpdateMode::Replace).unwrap_err();
        assert_eq!(refusal(&err).2, "r".repeat(256));
        // Nothing refused was added; what is there builds for Cosmos.
        assert_eq!(b.len(), 1);
        assert!(cosmos().batch(&b).is_ok());
        let long_pk = PartitionKey::new(format!("{}é", "€".repeat(341))).unwrap();
        let mut b = Batch::new(TableName::new("People").unwrap(), long_pk).with_rules(RuleSet::Portable);
        assert!(b.delete(&RowKey::new("a").unwrap(), IfMatch::Any).is_err());
    }

    #[test]
    fn body_over_2_mb_is_refused_for_cosmos_only() {
        let mut b = batch();
        for i in 0..5 {
            b.upsert(&big(&format!("{i:02}"), 480), UpdateMode::Replace).unwrap();
        }
        let storage = build(&b);
        assert!(storage.body().len() > 2_000_000 && storage.body().len() < BATCH_MAX_BODY_BYTES);
        let err = cosmos().batch(&b).unwrap_err();
        let RequestErrorKind::Batch(e) = err.kind() else { panic!("{err}") };
        let BatchErrorKind::BodyTooLarge { size, max, rules } = *e.kind() else { panic!("{err}") };
        assert_eq!((max, rules), (2_000_000, RuleSet::CosmosDb));
        assert!(size > 2_000_000);
        assert_eq!(
            err.to_string(),
            format!(
                "invalid batch operation {}: the request body would be {size} bytes; Cosmos DB for Table takes at \
                 most 2000000 bytes in a batch",
                e.index()
            )
        );
        // Added under Cosmos's rules, the operation that does not fit is refused as it is added.
        let mut c = batch().with_rules(RuleSet::CosmosDb);
        let mut added = 0;
        let err = loop {
            match c.upsert(&big(&format!("{added:02}"), 480), UpdateMode::Replace) {
                Ok(_) => added += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(err.index(), added);
        assert!(matches!(err.kind(), BatchErrorKind::BodyTooLarge { max: 2_000_000, .. }), "{err}");
        assert!(cosmos().batch(&c).unwrap().body().len() <= 2_000_000);
    }
}
