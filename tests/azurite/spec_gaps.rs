//! Where Azurite accepts what `docs/rules.md` forbids, the SDK still refuses it before sending.
//!
//! Each test sends the forbidden request by hand and shows that Azurite 3.35.0 takes it, then shows that the
//! SDK refuses to build it, with an error that names the rule, and that nothing reached Azurite. The real
//! service answers these with `400 Bad Request`; code tested only against the emulator would learn that in
//! production.
//!
//! The client cannot send what the SDK refuses to build, so the hand-built request goes through the client's
//! own pipeline by a per-call policy that swaps it in (`support::Raw`): the client's Shared Key signing,
//! retry and transport send it.

use crate::support::{azurite, Azurite, Table};
use futures::TryStreamExt as _;
use table_model::client::ErrorKind;
use table_model::filter::Filter;
use table_model::json::BodyWriter;
use table_model::{
    response, Batch, BatchErrorKind, DateTime, Entity, EntityErrorKind, PartitionKey, PropertyName, Query,
    RequestErrorKind, RowKey,
};

/// Inserts a raw JSON entity through the client's pipeline: the SDK's insert request with the body swapped;
/// returns the status.
async fn raw_insert(azurite: &Azurite, table: &Table, json: &serde_json::Value) -> u16 {
    let placeholder = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("placeholder").unwrap());
    let mut request = azurite.requests().insert(table.table(), &placeholder).unwrap();
    *request.body_mut() = serde_json::to_vec(json).unwrap();
    azurite.raw().send(request).await.status().as_u16()
}

#[track_caller]
fn assert_accepted(status: u16, case: &str) {
    assert!((200..300).contains(&status), "Azurite now refuses {case} (status {status}): the gap is closed");
}

/// Only the entities inserted by hand are in the table: the SDK sent nothing. (Their keys only: the SDK
/// refuses to read a property name that breaks the rules, see `property_name_with_a_hyphen`.)
async fn assert_only_raw_entities(table: &Table, count: usize) {
    let keys = Query::new().select(["RowKey"]);
    let all: Vec<Entity> = table.query(&keys, None).unwrap().try_collect().await.unwrap();
    assert_eq!(all.len(), count, "the SDK sent nothing");
}

#[tokio::test]
async fn property_name_with_a_hyphen() {
    let azurite = azurite!();
    let table = azurite.table("GapHyphen").await;
    let json = serde_json::json!({"PartitionKey": "p", "RowKey": "r", "Unit-Price": 5});
    assert_accepted(raw_insert(&azurite, &table, &json).await, "a property named `Unit-Price`");

    let err = PropertyName::new("Unit-Price").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid property name \"Unit-Price\": character `-` at index 4 is not allowed; names follow C# identifier rules (letters, digits, `_`)"
    );
    let mut w = BodyWriter::new("p", "r");
    w.property_i32("Unit-Price", 5);
    assert!(w.finish().is_err());
    assert_only_raw_entities(&table, 1).await;

    // Nor does the SDK read such an entity back: the page is refused, naming the property.
    let err = table.query_first::<Entity>(&Query::new(), 1, None).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Response(_)), "{err:?}");
    assert!(err.to_string().contains("property `Unit-Price`: invalid property name"), "{err}");
}

/// Inserts one entity per name with raw JSON (Azurite accepts each), then shows the SDK refuses each name.
async fn names_azurite_accepts_and_the_sdk_refuses(table_prefix: &str, names: &[&str]) {
    let azurite = azurite!();
    let table = azurite.table(table_prefix).await;
    for (i, name) in names.iter().enumerate() {
        let json = serde_json::json!({"PartitionKey": "p", "RowKey": i.to_string(), *name: 1});
        assert_accepted(raw_insert(&azurite, &table, &json).await, &format!("a property named {name:?}"));
        assert!(PropertyName::new(*name).is_err(), "{name:?}");
        let mut w = BodyWriter::new("p", "r");
        w.property_i32(*name, 1);
        assert!(w.finish().is_err(), "{name:?}");
    }
    assert_only_raw_entities(&table, names.len()).await;
}

#[tokio::test]
async fn property_names_outside_the_identifier_rules() {
    names_azurite_accepts_and_the_sdk_refuses("GapIdent", &["Unit Price", "1st", "a.b", "a@b"]).await;
}

#[tokio::test]
async fn property_names_that_are_not_xml_names() {
    // U+200B is a C# identifier character (Cf) but not an XML NameChar.
    names_azurite_accepts_and_the_sdk_refuses("GapXml", &["Zero\u{200B}Width"]).await;
}

#[tokio::test]
async fn system_property_names_in_another_case() {
    names_azurite_accepts_and_the_sdk_refuses("GapSystem", &["partitionkey", "ROWKEY", "timestamp"]).await;
}

#[tokio::test]
async fn property_names_over_255_characters() {
    names_azurite_accepts_and_the_sdk_refuses("GapLong", &[&"N".repeat(256)]).await;
}

#[tokio::test]
async fn more_than_252_custom_properties() {
    let azurite = azurite!();
    let table = azurite.table("GapCount").await;
    let mut json = serde_json::json!({"PartitionKey": "p", "RowKey": "r"});
    for i in 0..253 {
        json[format!("P{i}")] = 1.into();
    }
    assert_accepted(raw_insert(&azurite, &table, &json).await, "253 custom properties");

    let mut e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    for i in 0..252 {
        e.insert(format!("P{i}").parse().unwrap(), 1).unwrap();
    }
    let err = e.insert("P252".parse().unwrap(), 1).unwrap_err();
    assert_eq!(err.kind(), &EntityErrorKind::TooManyProperties { count: 253 });
}

#[tokio::test]
async fn a_date_before_1601() {
    let azurite = azurite!();
    let table = azurite.table("GapDate").await;
    let json = serde_json::json!({
        "PartitionKey": "p", "RowKey": "r",
        "When@odata.type": "Edm.DateTime", "When": "1600-12-31T23:59:59.0000000Z",
    });
    assert_accepted(raw_insert(&azurite, &table, &json).await, "Edm.DateTime 1600-12-31");

    let err = "1600-12-31T23:59:59Z".parse::<DateTime>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid Edm.DateTime: must be from 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, found 1600-12-31T23:59:59Z"
    );
    let chrono_min = chrono::DateTime::<chrono::Utc>::MIN_UTC;
    assert!(DateTime::try_from(chrono_min).is_err());
}

#[tokio::test]
async fn an_entity_over_1_mib_by_the_size_formula() {
    let azurite = azurite!();
    let table = azurite.table("GapSize").await;
    // 16 strings of 32,768 ASCII characters: 512 KiB of JSON, which Azurite measures, but 1,048,864 bytes by
    // the service's formula, which counts UTF-16 (`docs/rules.md` §4.2).
    let text = "x".repeat(32 * 1024);
    let mut json = serde_json::json!({"PartitionKey": "p", "RowKey": "r"});
    for i in 0..16 {
        json[format!("S{i:02}")] = text.clone().into();
    }
    assert_accepted(raw_insert(&azurite, &table, &json).await, "an entity of 1,048,864 bytes by the formula");

    let mut e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    let err = (0..16).find_map(|i| e.insert(format!("S{i:02}").parse().unwrap(), text.as_str()).err()).unwrap();
    assert!(matches!(err.kind(), EntityErrorKind::TooLarge { .. }), "{err}");
    assert_eq!(err.property(), Some("S15"));
}

#[tokio::test]
async fn a_filter_of_16_comparisons() {
    let azurite = azurite!();
    let table = azurite.table("GapFilter").await;
    let sixteen = (0..16).map(|i| format!("N%20eq%20{i}")).collect::<Vec<_>>().join("%20or%20");
    let mut request = azurite.requests().query(table.table(), &Query::new(), None).unwrap();
    *request.uri_mut() = format!("{}/{}()?$filter={sixteen}", azurite.url, table.table()).parse().unwrap();
    assert_accepted(azurite.raw().send(request).await.status().as_u16(), "a filter of 16 comparisons");

    // The client refuses the query before anything is sent.
    let f = Filter::any((0..16).map(|i| Filter::property("N").eq(i))).unwrap();
    let err = table.query::<Entity>(&Query::new().filter(f), None).unwrap_err();
    let expected = format!("table `{}`: invalid filter: at most 15 comparisons are allowed, found 16", table.table());
    assert_eq!(err.to_string(), expected);
    assert!(matches!(err.kind(), ErrorKind::Request(e) if matches!(e.kind(), RequestErrorKind::Query(_))));
}

/// A batch body by hand: one changeset of `parts` (method, path, body), sent through the client's pipeline
/// with the headers of the SDK's own batch request.
async fn raw_batch(
    azurite: &Azurite,
    table: &Table,
    parts: &[(&str, String, Option<serde_json::Value>)],
) -> http::Response<Vec<u8>> {
    let base = &azurite.url;
    let mut body = String::from("--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n");
    for (method, path, json) in parts {
        body.push_str("--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n");
        body.push_str(&format!("{method} {base}{path} HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n"));
        body.push_str("DataServiceVersion: 3.0\r\n");
        match json {
            Some(j) => body.push_str(&format!("Content-Type: application/json\r\n\r\n{j}\r\n")),
            None => body.push_str("If-Match: *\r\n\r\n\r\n"),
        }
    }
    body.push_str("--changeset_c--\r\n--batch_b--\r\n");
    let mut carrier = Batch::new(table.table().clone(), PartitionKey::new("p").unwrap());
    carrier.insert(&Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("carrier").unwrap())).unwrap();
    let mut request = azurite.requests().batch(&carrier).unwrap();
    request.headers_mut().insert("content-type", "multipart/mixed; boundary=batch_b".parse().unwrap());
    *request.body_mut() = body.into_bytes();
    azurite.raw().send(request).await
}

#[tokio::test]
async fn a_batch_over_two_partitions() {
    let azurite = azurite!();
    let table = azurite.table("GapTwoPk").await;
    let e = |pk: &str| Some(serde_json::json!({"PartitionKey": pk, "RowKey": "r"}));
    let path = format!("/{}", table.table());
    let reply = raw_batch(&azurite, &table, &[("POST", path.clone(), e("p1")), ("POST", path, e("p2"))]).await;
    let outcome = response::batch(&reply, 2);
    let body = String::from_utf8_lossy(reply.body());
    assert!(outcome.is_ok(), "Azurite now refuses a batch over two partitions (the gap is closed): {body}");

    let mut batch = table.batch(PartitionKey::new("p1").unwrap());
    batch.insert(&Entity::new(PartitionKey::new("p1").unwrap(), RowKey::new("r").unwrap())).unwrap();
    let err = batch.insert(&Entity::new(PartitionKey::new("p2").unwrap(), RowKey::new("r").unwrap())).unwrap_err();
    assert_eq!(err.index(), 1);
    assert!(matches!(err.kind(), BatchErrorKind::PartitionKeyMismatch { .. }));
}
