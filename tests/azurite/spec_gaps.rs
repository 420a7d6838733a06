//! Where Azurite accepts what `docs/rules.md` forbids, the SDK still refuses it before sending.
//!
//! Each test sends the forbidden request by hand (raw JSON, signed with `table_model::auth`) and shows that
//! Azurite 3.35.0 takes it, then shows that the SDK refuses to build it, with an error that names the rule.
//! The real service answers these with `400 Bad Request`; code tested only against the emulator would
//! learn that in production.

use crate::support::{azurite, Azurite, Table};
use table_model::filter::Filter;
use table_model::json::BodyWriter;
use table_model::{
    auth, response, AccountKey, Batch, BatchErrorKind, Credential, DateTime, Entity, EntityErrorKind, PartitionKey,
    PropertyName, Query, RowKey,
};

/// Sends a request built by hand, signed as the SDK signs; returns the status.
fn raw(azurite: &Azurite, method: &str, path_and_query: &str, content_type: &str, body: Vec<u8>) -> u16 {
    let url = format!("{}{path_and_query}", azurite.service.endpoint().url());
    let mut builder = http::Request::builder()
        .method(method)
        .uri(url)
        .header("x-ms-version", table_model::X_MS_VERSION)
        .header("DataServiceVersion", "3.0")
        .header("MaxDataServiceVersion", "3.0;NetFx")
        .header("Accept", "application/json;odata=minimalmetadata");
    if !body.is_empty() {
        builder = builder.header("Content-Type", content_type);
    }
    let mut request = builder.body(body).unwrap();
    let credential = Credential::SharedKey(AccountKey::development());
    auth::authorize(&mut request, azurite.service.endpoint().account(), &credential, std::time::SystemTime::now());
    azurite.send(request).status().as_u16()
}

/// Inserts a raw JSON entity; returns the status.
fn raw_insert(azurite: &Azurite, table: &Table<'_>, json: &serde_json::Value) -> u16 {
    let body = serde_json::to_vec(json).unwrap();
    raw(azurite, "POST", &format!("/{}", table.name), "application/json", body)
}

#[track_caller]
fn assert_accepted(status: u16, case: &str) {
    assert!((200..300).contains(&status), "Azurite now refuses {case} (status {status}): the gap is closed");
}

#[test]
fn property_name_with_a_hyphen() {
    let azurite = azurite!();
    let table = azurite.table("GapHyphen");
    let json = serde_json::json!({"PartitionKey": "p", "RowKey": "r", "Unit-Price": 5});
    assert_accepted(raw_insert(&azurite, &table, &json), "a property named `Unit-Price`");

    let err = PropertyName::new("Unit-Price").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid property name \"Unit-Price\": character `-` at index 4 is not allowed; names follow C# identifier rules (letters, digits, `_`)"
    );
    let mut w = BodyWriter::new("p", "r");
    w.property_i32("Unit-Price", 5);
    assert!(w.finish().is_err());
}

/// Inserts one entity per name with raw JSON (Azurite accepts each), then shows the SDK refuses each name.
fn names_azurite_accepts_and_the_sdk_refuses(table_prefix: &str, names: &[&str]) {
    let azurite = azurite!();
    let table = azurite.table(table_prefix);
    for (i, name) in names.iter().enumerate() {
        let json = serde_json::json!({"PartitionKey": "p", "RowKey": i.to_string(), *name: 1});
        assert_accepted(raw_insert(&azurite, &table, &json), &format!("a property named {name:?}"));
        assert!(PropertyName::new(*name).is_err(), "{name:?}");
        let mut w = BodyWriter::new("p", "r");
        w.property_i32(*name, 1);
        assert!(w.finish().is_err(), "{name:?}");
    }
}

#[test]
fn property_names_outside_the_identifier_rules() {
    names_azurite_accepts_and_the_sdk_refuses("GapIdent", &["Unit Price", "1st", "a.b", "a@b"]);
}

#[test]
fn property_names_that_are_not_xml_names() {
    // U+200B is a C# identifier character (Cf) but not an XML NameChar.
    names_azurite_accepts_and_the_sdk_refuses("GapXml", &["Zero\u{200B}Width"]);
}

#[test]
fn system_property_names_in_another_case() {
    names_azurite_accepts_and_the_sdk_refuses("GapSystem", &["partitionkey", "ROWKEY", "timestamp"]);
}

#[test]
fn property_names_over_255_characters() {
    names_azurite_accepts_and_the_sdk_refuses("GapLong", &[&"N".repeat(256)]);
}

#[test]
fn more_than_252_custom_properties() {
    let azurite = azurite!();
    let table = azurite.table("GapCount");
    let mut json = serde_json::json!({"PartitionKey": "p", "RowKey": "r"});
    for i in 0..253 {
        json[format!("P{i}")] = 1.into();
    }
    assert_accepted(raw_insert(&azurite, &table, &json), "253 custom properties");

    let mut e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    for i in 0..252 {
        e.insert(format!("P{i}").parse().unwrap(), 1).unwrap();
    }
    let err = e.insert("P252".parse().unwrap(), 1).unwrap_err();
    assert_eq!(err.kind(), &EntityErrorKind::TooManyProperties { count: 253 });
}

#[test]
fn a_date_before_1601() {
    let azurite = azurite!();
    let table = azurite.table("GapDate");
    let json = serde_json::json!({
        "PartitionKey": "p", "RowKey": "r",
        "When@odata.type": "Edm.DateTime", "When": "1600-12-31T23:59:59.0000000Z",
    });
    assert_accepted(raw_insert(&azurite, &table, &json), "Edm.DateTime 1600-12-31");

    let err = "1600-12-31T23:59:59Z".parse::<DateTime>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid Edm.DateTime: must be from 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, found 1600-12-31T23:59:59Z"
    );
    let chrono_min = chrono::DateTime::<chrono::Utc>::MIN_UTC;
    assert!(DateTime::try_from(chrono_min).is_err());
}

#[test]
fn an_entity_over_1_mib_by_the_size_formula() {
    let azurite = azurite!();
    let table = azurite.table("GapSize");
    // 16 strings of 32,768 ASCII characters: 512 KiB of JSON, which Azurite measures, but 1,048,864 bytes by
    // the service's formula, which counts UTF-16 (`docs/rules.md` §4.2).
    let text = "x".repeat(32 * 1024);
    let mut json = serde_json::json!({"PartitionKey": "p", "RowKey": "r"});
    for i in 0..16 {
        json[format!("S{i:02}")] = text.clone().into();
    }
    assert_accepted(raw_insert(&azurite, &table, &json), "an entity of 1,048,864 bytes by the formula");

    let mut e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    let err = (0..16).find_map(|i| e.insert(format!("S{i:02}").parse().unwrap(), text.as_str()).err()).unwrap();
    assert!(matches!(err.kind(), EntityErrorKind::TooLarge { .. }), "{err}");
    assert_eq!(err.property(), Some("S15"));
}

#[test]
fn a_filter_of_16_comparisons() {
    let azurite = azurite!();
    let table = azurite.table("GapFilter");
    let sixteen = (0..16).map(|i| format!("N%20eq%20{i}")).collect::<Vec<_>>().join("%20or%20");
    let status = raw(&azurite, "GET", &format!("/{}()?$filter={sixteen}", table.name), "", Vec::new());
    assert_accepted(status, "a filter of 16 comparisons");

    let f = Filter::any((0..16).map(|i| Filter::property("N").eq(i))).unwrap();
    let err = azurite.service.query(&table.name, &Query::new().filter(f), None).unwrap_err();
    assert_eq!(err.to_string(), "invalid filter: at most 15 comparisons are allowed, found 16");
}

/// A batch body by hand: one changeset of `parts` (method, path, body).
fn raw_batch(azurite: &Azurite, parts: &[(&str, String, Option<serde_json::Value>)]) -> (u16, Vec<u8>) {
    let base = azurite.service.endpoint().url();
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
    let url = format!("{base}/$batch");
    let mut request = http::Request::post(url)
        .header("x-ms-version", table_model::X_MS_VERSION)
        .header("DataServiceVersion", "3.0")
        .header("MaxDataServiceVersion", "3.0;NetFx")
        .header("Content-Type", "multipart/mixed; boundary=batch_b")
        .body(body.into_bytes())
        .unwrap();
    let credential = Credential::SharedKey(AccountKey::development());
    auth::authorize(&mut request, azurite.service.endpoint().account(), &credential, std::time::SystemTime::now());
    let reply = azurite.send(request);
    let ok = response::batch(&reply, parts.len()).is_ok();
    (if ok { 202 } else { 400 }, reply.into_body())
}

#[test]
fn a_batch_over_two_partitions() {
    let azurite = azurite!();
    let table = azurite.table("GapTwoPk");
    let e = |pk: &str| Some(serde_json::json!({"PartitionKey": pk, "RowKey": "r"}));
    let (status, body) = raw_batch(
        &azurite,
        &[("POST", format!("/{}", table.name), e("p1")), ("POST", format!("/{}", table.name), e("p2"))],
    );
    assert_accepted(status, &format!("a batch over two partitions: {}", String::from_utf8_lossy(&body)));

    let mut batch = Batch::new(table.name.clone(), PartitionKey::new("p1").unwrap());
    batch.insert(&Entity::new(PartitionKey::new("p1").unwrap(), RowKey::new("r").unwrap())).unwrap();
    let err = batch.insert(&Entity::new(PartitionKey::new("p2").unwrap(), RowKey::new("r").unwrap())).unwrap_err();
    assert_eq!(err.index(), 1);
    assert!(matches!(err.kind(), BatchErrorKind::PartitionKeyMismatch { .. }));
}
