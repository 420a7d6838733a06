//! The JSON wire format (`docs/rules.md` §5): golden bodies and responses built from the documented payloads,
//! and every refusal with its typed error and message.
//!
//! The response payloads follow the shapes of the service documentation ("Payload format for Table service
//! operations"), the REST API spec examples (`TableInsertEntity.json`, `TableQueryEntities.json`,
//! `TableQueryEntityWithPartitionAndRowKey.json`) and recorded real-service traffic (reference/wire-format.md).

use std::collections::{BTreeMap, HashMap};
use table_model::json::{
    decode_entity, decode_entity_with, decode_query, decode_query_with, encode_entity, BodyWriter, EntityVisitor,
    MetadataLevel, SystemProperties, TypeHints,
};
use table_model::{
    DateTime, DecodeError, DecodeErrorKind, ETag, EdmType, EdmValue, EncodeErrorKind, Entity, EntityErrorKind, FromEdm,
    KeyKind, PartitionKey, PropertyName, PropertyNameErrorKind, RowKey, ValueErrorKind,
};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn entity(pk: &str, rk: &str) -> Entity {
    Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap())
}

fn name(s: &str) -> PropertyName {
    PropertyName::new(s).unwrap()
}

fn decode_err(json: &str) -> DecodeError {
    decode_entity(json.as_bytes(), None).unwrap_err()
}

// ---------------------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------------------

/// One entity with every EDM type and the edge values of each, against a body written by hand from `docs/rules.md`
/// §5: keys first; annotations exactly for Binary, DateTime, Guid, Int64 and always Double; Double with
/// a decimal point and its special values as strings; Int64 as a string; Guid lowercase; DateTime with 7
/// fractional digits and `Z`; Binary as padded base64; no Timestamp or ETag.
#[test]
fn encodes_every_edm_type_exactly() -> TestResult {
    let mut e = entity("mypartitionkey", "myrowkey")
        .with(name("Address"), "Mountain View")?
        .with(name("Age"), 23)?
        .with(name("AmountDue"), 200.23)?
        .with(name("CustomerCode"), Uuid::parse_str("C9DA6455-213D-42C9-9A79-3E9149A57833")?)?
        .with(name("CustomerSince"), DateTime::parse("2008-07-10T00:00:00Z")?)?
        .with(name("IsActive"), true)?
        .with(name("NumberOfOrders"), 255i64)?
        .with(name("Photo"), vec![1u8, 2, 3, 4])?
        .with(name("Whole"), 5.0)?
        .with(name("NegZero"), -0.0)?
        .with(name("NotANumber"), f64::NAN)?
        .with(name("Up"), f64::INFINITY)?
        .with(name("Down"), f64::NEG_INFINITY)?
        .with(name("Min64"), i64::MIN)?
        .with(name("Max64"), i64::MAX)?
        .with(name("Min32"), i32::MIN)?
        .with(name("Text"), "quote \" backslash \\ line\nfeed tab\t ctrl\u{1} é 😀")?
        .with(name("Empty"), "")?
        .with(name("NoBytes"), Vec::<u8>::new())?
        .with(name("Latest"), DateTime::MAX)?
        .with(name("Flag"), false)?;
    e.set_server_metadata(Some(DateTime::UNIX_EPOCH), Some(ETag::new("W/\"0x1\"")));

    let expected = concat!(
        r#"{"PartitionKey":"mypartitionkey","RowKey":"myrowkey","#,
        r#""Address":"Mountain View","#,
        r#""Age":23,"#,
        r#""AmountDue@odata.type":"Edm.Double","AmountDue":200.23,"#,
        r#""CustomerCode@odata.type":"Edm.Guid","CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833","#,
        r#""CustomerSince@odata.type":"Edm.DateTime","CustomerSince":"2008-07-10T00:00:00.0000000Z","#,
        r#""IsActive":true,"#,
        r#""NumberOfOrders@odata.type":"Edm.Int64","NumberOfOrders":"255","#,
        r#""Photo@odata.type":"Edm.Binary","Photo":"AQIDBA==","#,
        r#""Whole@odata.type":"Edm.Double","Whole":5.0,"#,
        r#""NegZero@odata.type":"Edm.Double","NegZero":-0.0,"#,
        r#""NotANumber@odata.type":"Edm.Double","NotANumber":"NaN","#,
        r#""Up@odata.type":"Edm.Double","Up":"Infinity","#,
        r#""Down@odata.type":"Edm.Double","Down":"-Infinity","#,
        r#""Min64@odata.type":"Edm.Int64","Min64":"-9223372036854775808","#,
        r#""Max64@odata.type":"Edm.Int64","Max64":"9223372036854775807","#,
        r#""Min32":-2147483648,"#,
        r#""Text":"quote \" backslash \\ line\nfeed tab\t ctrl\u0001 é 😀","#,
        r#""Empty":"","#,
        r#""NoBytes@odata.type":"Edm.Binary","NoBytes":"","#,
        r#""Latest@odata.type":"Edm.DateTime","Latest":"9999-12-31T23:59:59.9999999Z","#,
        r#""Flag":false}"#,
    );
    let body = encode_entity(&e)?;
    assert_eq!(body.as_str(), expected);
    assert_eq!(body.len(), expected.len());
    assert_eq!(body.entity_size(), e.size());
    assert_eq!(body.as_bytes(), expected.as_bytes());
    // The body reads back as the same entity (the server metadata was never written).
    let mut without_metadata = e.clone();
    without_metadata.set_server_metadata(None, None);
    assert_eq!(decode_entity(body.as_bytes(), None)?, without_metadata);
    Ok(())
}

#[test]
fn keys_are_escaped_and_an_empty_entity_is_just_its_keys() -> TestResult {
    let e = entity(r#"say "hi" & O'Brien"#, "");
    assert_eq!(encode_entity(&e)?.as_str(), r#"{"PartitionKey":"say \"hi\" & O'Brien","RowKey":""}"#);
    Ok(())
}

/// The documented insert request body (REST API spec `TableInsertEntity.json`), written by the typed writer.
#[test]
fn body_writer_writes_the_documented_insert() -> TestResult {
    let mut w = BodyWriter::new("mypartitionkey", "myrowkey");
    w.property_str("Address", "Mountain View")
        .property_i32("Age", 23)
        .property_f64("AmountDue", 200.23)
        .property_uuid("CustomerCode", Uuid::parse_str("c9da6455-213d-42c9-9a79-3e9149a57833")?)
        .property_datetime("CustomerSince", DateTime::parse("2008-07-10T00:00:00")?)
        .property_bool("IsActive", true)
        .property_i64("NumberOfOrders", 255)
        .property_bytes("Photo", &[1, 2, 3, 4])
        .property("Score", &EdmValue::Int32(7))
        .property_value("Small", 200u8);
    let body = w.finish()?;
    assert_eq!(
        body.as_str(),
        concat!(
            r#"{"PartitionKey":"mypartitionkey","RowKey":"myrowkey","Address":"Mountain View","Age":23,"#,
            r#""AmountDue@odata.type":"Edm.Double","AmountDue":200.23,"#,
            r#""CustomerCode@odata.type":"Edm.Guid","CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833","#,
            r#""CustomerSince@odata.type":"Edm.DateTime","CustomerSince":"2008-07-10T00:00:00.0000000Z","#,
            r#""IsActive":true,"NumberOfOrders@odata.type":"Edm.Int64","NumberOfOrders":"255","#,
            r#""Photo@odata.type":"Edm.Binary","Photo":"AQIDBA==","Score":7,"Small":200}"#,
        )
    );
    // The size formula of `docs/rules.md` §4.2, by hand: 4 + 2*14 + 2*8, then 8 + 2*len(name) + size(value) each.
    let expected_size = (4 + 28 + 16)
        + (8 + 14 + (2 * 13 + 4))
        + (8 + 6 + 4)
        + (8 + 18 + 8)
        + (8 + 24 + 16)
        + (8 + 26 + 8)
        + (8 + 16 + 1)
        + (8 + 28 + 8)
        + (8 + 10 + (4 + 4))
        + (8 + 10 + 4)
        + (8 + 10 + 4);
    assert_eq!(body.entity_size(), expected_size);
    Ok(())
}

#[test]
fn body_writer_refuses_bad_input_with_the_first_error() {
    let err = BodyWriter::new("a/b", "r").finish().unwrap_err();
    assert!(matches!(err.kind(), EncodeErrorKind::InvalidKey(k) if k.key() == KeyKind::Partition));
    assert_eq!(err.to_string(), "invalid partition key \"a/b\": character `/` at index 1 is not allowed");

    let err = BodyWriter::new("p", "what?").finish().unwrap_err();
    assert_eq!(err.to_string(), "invalid row key \"what?\": character `?` at index 4 is not allowed");

    let mut w = BodyWriter::new("p", "r");
    w.property_i32("Unit Price", 1).property_str("Good", "later writes are skipped");
    let err = w.finish().unwrap_err();
    assert_eq!(err.property(), Some("Unit Price"));
    assert!(matches!(err.kind(), EncodeErrorKind::InvalidPropertyName(_)));

    for reserved in ["Timestamp", "partitionkey", "ROWKEY"] {
        let mut w = BodyWriter::new("p", "r");
        w.property_bool(reserved, true);
        let err = w.finish().unwrap_err();
        assert!(
            matches!(err.kind(), EncodeErrorKind::InvalidPropertyName(e) if matches!(e.kind(), PropertyNameErrorKind::Reserved { .. })),
            "{reserved}"
        );
    }

    let mut w = BodyWriter::new("p", "r");
    w.property_i32("A", 1).property_str("B", "x").property_f64("A", 2.0);
    let err = w.finish().unwrap_err();
    assert_eq!(err.kind(), &EncodeErrorKind::DuplicateProperty);
    assert_eq!(err.to_string(), "property `A`: written twice; each property may appear once");

    let mut w = BodyWriter::new("p", "r");
    w.property_str("Long", &"😀".repeat(16_385));
    let err = w.finish().unwrap_err();
    assert_eq!(
        err.kind(),
        &EncodeErrorKind::Value(
            table_model::ValueError::new(ValueErrorKind::StringTooLong { utf16_len: 32_770 }).in_property("Long")
        )
    );
    assert_eq!(
        err.to_string(),
        "property `Long`: invalid Edm.String: must be at most 32768 UTF-16 code units, found 32770"
    );

    let mut w = BodyWriter::new("p", "r");
    w.property_bytes("Blob", &vec![0; 65_537]);
    let err = w.finish().unwrap_err();
    assert_eq!(err.to_string(), "property `Blob`: invalid Edm.Binary: must be at most 65536 bytes, found 65537");

    let mut w = BodyWriter::new("p", "r");
    w.property_value("Early", chrono::DateTime::<chrono::Utc>::MIN_UTC);
    let err = w.finish().unwrap_err();
    assert_eq!(err.property(), Some("Early"));
    assert!(
        matches!(err.kind(), EncodeErrorKind::Value(v) if matches!(v.kind(), ValueErrorKind::DateTimeOutOfRange { .. }))
    );
}

#[test]
fn body_writer_counts_properties() -> TestResult {
    let mut w = BodyWriter::new("p", "r");
    for i in 0..252 {
        w.property_bool(&format!("P{i}"), true);
    }
    assert!(w.entity_size() > 0);
    let full = {
        let mut w = BodyWriter::new("p", "r");
        for i in 0..252 {
            w.property_bool(&format!("P{i}"), true);
        }
        w.finish()?
    };
    assert!(full.as_str().ends_with(r#""P251":true}"#));
    w.property_bool("P252", true);
    let err = w.finish().unwrap_err();
    assert_eq!(err.kind(), &EncodeErrorKind::TooManyProperties { count: 253 });
    assert_eq!(
        err.to_string(),
        "property `P252`: invalid entity: at most 252 custom properties are allowed, found 253"
    );
    Ok(())
}

/// Many names hash to the same Bloom bit; the writer must still tell them apart exactly.
#[test]
fn body_writer_duplicate_check_is_exact() {
    let mut w = BodyWriter::new("p", "r");
    for i in 0..200 {
        w.property_i32(&format!("N{i}"), i);
    }
    assert!(w.finish().is_ok());
    let mut w = BodyWriter::new("p", "r");
    for i in 0..200 {
        w.property_i32(&format!("N{i}"), i);
    }
    w.property_i32("N137", 0);
    assert_eq!(w.finish().unwrap_err().property(), Some("N137"));
}

/// `docs/rules.md` §4.2: both the size formula and the encoded body are held to 1 MiB.
#[test]
fn both_one_mib_limits_are_enforced() -> TestResult {
    // Formula: 4 + 2 + 2 for the keys, then 8 + 2*3 + 65,540 per binary: 15 fit (983,318), the 16th does not.
    let blob = vec![7u8; 65_536];
    let mut w = BodyWriter::new("p", "r");
    for i in 0..17 {
        w.property_bytes(&format!("B{i:02}"), &blob);
    }
    let err = w.finish().unwrap_err();
    assert_eq!(err.kind(), &EncodeErrorKind::EntityTooLarge { size: 8 + 16 * (8 + 6 + 65_540) });
    assert_eq!(err.property(), Some("B15"));
    assert_eq!(
        err.to_string(),
        "property `B15`: invalid entity: must be at most 1048576 bytes by the size formula, found 1048872"
    );

    // 12 binaries are 786,656 bytes by the formula, but base64 makes each 87,384 characters: over 1 MiB of JSON.
    let mut e = entity("p", "r");
    for i in 0..12 {
        e.insert(name(&format!("B{i:02}")), blob.clone())?;
    }
    assert!(e.size() < 1024 * 1024);
    let per_property = r#","B00@odata.type":"Edm.Binary","B00":""#.len() + 87_384 + 1;
    let expected = r#"{"PartitionKey":"p","RowKey":"r"}"#.len() + 12 * per_property;
    let err = encode_entity(&e).unwrap_err();
    assert_eq!(err.kind(), &EncodeErrorKind::BodyTooLarge { size: expected });
    assert_eq!(
        err.to_string(),
        format!("invalid entity: the JSON body must be at most 1048576 bytes, found {expected}")
    );

    // 11 of them fit both limits.
    e.remove("B11");
    let body = encode_entity(&e)?;
    assert_eq!(body.len(), expected - per_property);
    Ok(())
}

#[test]
fn metadata_levels_have_their_accept_headers() {
    assert_eq!(MetadataLevel::None.accept_header(), "application/json;odata=nometadata");
    assert_eq!(MetadataLevel::Minimal.accept_header(), "application/json;odata=minimalmetadata");
    assert_eq!(MetadataLevel::Full.accept_header(), "application/json;odata=fullmetadata");
}

// ---------------------------------------------------------------------------------------------------------
// Decoding: documented payloads
// ---------------------------------------------------------------------------------------------------------

/// `TableQueryEntityWithPartitionAndRowKey.json`: a single entity in full metadata.
#[test]
fn decodes_a_full_metadata_entity() -> TestResult {
    let json = r#"{
        "odata.metadata": "https://myaccount.table.core.windows.net/metadata#Customers",
        "odata.type": "myaccount.Customers",
        "odata.id": "https://myaccount.table.core.windows.net/Customers(PartitionKey='Customer',RowKey='Name')",
        "odata.etag": "W/\"0x5B168C7B6E589D2\"",
        "odata.editLink": "Customers(PartitionKey='Customer',RowKey='Name')",
        "PartitionKey": "Customer",
        "RowKey": "Name",
        "Timestamp@odata.type": "Edm.DateTime",
        "Timestamp": "2013-08-22T00:20:16.3134645Z",
        "CustomerSince@odata.type": "Edm.DateTime",
        "CustomerSince": "2008-10-01T15:25:05.2852025Z"
    }"#;
    let e = decode_entity(json.as_bytes(), None)?;
    assert_eq!(e.partition_key(), "Customer");
    assert_eq!(e.row_key(), "Name");
    assert_eq!(e.etag(), Some(&ETag::new(r#"W/"0x5B168C7B6E589D2""#)));
    // 2013-08-22T00:20:16.3134645Z in .NET ticks: 635127276163134645.
    assert_eq!(e.timestamp().map(DateTime::ticks), Some(635_127_276_163_134_645));
    assert_eq!(e.len(), 1);
    assert_eq!(e.value("CustomerSince"), Some(&EdmValue::DateTime(DateTime::parse("2008-10-01T15:25:05.2852025Z")?)));
    Ok(())
}

/// `TableQueryEntities.json`: a query page in full metadata, keys before the `odata.*` members.
#[test]
fn decodes_a_full_metadata_query() -> TestResult {
    let json = r#"{
        "odata.metadata": " https://myaccount.table.core.windows.net/metadata#Customers",
        "value": [
          {
            "PartitionKey": "Customer",
            "RowKey": "Name",
            "odata.type": "myaccount.Customers",
            "odata.id": "https://myaccount.table.core.windows.net/Customers(PartitionKey=Customer',RowKey='Name')",
            "odata.etag": "W/\"0x5B168C7B6E589D2\"",
            "odata.editLink": "Customers(PartitionKey=Customer',RowKey='Name')",
            "Timestamp@odata.type": "Edm.DateTime",
            "Timestamp": "2013-08-22T00:20:16.3134645Z",
            "CustomerSince@odata.type": "Edm.DateTime",
            "CustomerSince": "2008-10-01T15:25:05.2852025Z"
          }
        ]
    }"#;
    let page = decode_query(json.as_bytes(), None)?;
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].row_key(), "Name");
    assert_eq!(page[0].etag().map(ETag::as_str), Some(r#"W/"0x5B168C7B6E589D2""#));
    assert_eq!(page[0].get::<DateTime>("CustomerSince")?.to_string(), "2008-10-01T15:25:05.2852025Z");
    Ok(())
}

/// `TableInsertEntity.json`: the response to an insert, with every inferable and annotated type, and a
/// zone-less DateTime (read as UTC).
#[test]
fn decodes_the_documented_insert_response() -> TestResult {
    let json = r#"{
        "odata.metadata": "https://myaccount.table.core.windows.net/Customer/$metadata#Customers/@Element",
        "odata.type": "myaccount.Customers",
        "odata.id": " https://myaccount.table.core.windows.net/Customers(PartitionKey='mypartitionkey',RowKey='myrowkey')",
        "odata.etag": "W/\"0x5B168C7B6E589D2\"",
        "odata.editLink": "Customers(PartitionKey='mypartitionkey',RowKey='myrowkey')",
        "PartitionKey": "mypartitionkey",
        "RowKey": "myrowkey",
        "Timestamp@odata.type": "Edm.DateTime",
        "Timestamp": "2013-08-22T01:12:06.2608595Z",
        "Address": "Mountain View",
        "Age": 23,
        "AmountDue": 200.23,
        "CustomerCode@odata.type": "Edm.Guid",
        "CustomerCode": "c9da6455-213d-42c9-9a79-3e9149a57833",
        "CustomerSince@odata.type": "Edm.DateTime",
        "CustomerSince": "2008-07-10T00:00:00",
        "IsActive": true,
        "NumberOfOrders@odata.type": "Edm.Int64",
        "NumberOfOrders": "255"
    }"#;
    let e = decode_entity(json.as_bytes(), None)?;
    let expected: Vec<(&str, EdmValue)> = vec![
        ("Address", EdmValue::try_from("Mountain View")?),
        ("Age", EdmValue::Int32(23)),
        ("AmountDue", EdmValue::Double(200.23)),
        ("CustomerCode", EdmValue::Guid(Uuid::from_u128(0xc9da6455_213d_42c9_9a79_3e9149a57833))),
        ("CustomerSince", EdmValue::DateTime(DateTime::from_ticks(633_512_448_000_000_000)?)),
        ("IsActive", EdmValue::Boolean(true)),
        ("NumberOfOrders", EdmValue::Int64(255)),
    ];
    let found: Vec<(&str, EdmValue)> = e.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
    assert_eq!(found, expected);
    assert_eq!(e.timestamp().unwrap().to_string(), "2013-08-22T01:12:06.2608595Z");
    Ok(())
}

/// Minimal metadata as recorded from the real service: a per-entity `odata.etag` in the
/// `W/"datetime'...'"` form, an unannotated `Timestamp` with 7 or 6 fractional digits (trailing zeros
/// trimmed), annotations only where JSON cannot tell the type, and the special doubles as strings.
#[test]
fn decodes_a_minimal_metadata_query() -> TestResult {
    let json = r#"{"odata.metadata":"https://account.table.core.windows.net/$metadata#tableName","value":[
        {"odata.etag":"W/\"datetime'2021-06-04T21%3A59%3A51.3069134Z'\"","PartitionKey":"p1","RowKey":"r1",
         "Timestamp":"2021-06-04T21:59:51.3069134Z",
         "binary@odata.type":"Edm.Binary","binary":"AQIDBA==",
         "big@odata.type":"Edm.Int64","big":"-9223372036854775808",
         "ratio":0.5,"whole":20.0,"count":7,"flag":false,"text":"héllo"},
        {"odata.etag":"W/\"datetime'2021-06-19T00%3A55%3A33.838661Z'\"","PartitionKey":"p1","RowKey":"r2",
         "Timestamp":"2021-06-19T00:55:33.838661Z",
         "nan@odata.type":"Edm.Double","nan":"NaN",
         "inf@odata.type":"Edm.Double","inf":"Infinity",
         "ninf@odata.type":"Edm.Double","ninf":"-Infinity",
         "odatainf@odata.type":"Edm.Double","odatainf":"INF",
         "odataninf@odata.type":"Edm.Double","odataninf":"-INF",
         "id@odata.type":"Edm.Guid","id":"C9DA6455-213D-42C9-9A79-3E9149A57833"}
    ]}"#;
    let page = decode_query(json.as_bytes(), None)?;
    assert_eq!(page.len(), 2);
    let (a, b) = (&page[0], &page[1]);
    assert_eq!(a.etag().unwrap().as_str(), r#"W/"datetime'2021-06-04T21%3A59%3A51.3069134Z'""#);
    assert_eq!(a.timestamp().unwrap().to_string(), "2021-06-04T21:59:51.3069134Z");
    assert_eq!(b.timestamp().unwrap().to_string(), "2021-06-19T00:55:33.8386610Z");
    assert_eq!(a.get::<Vec<u8>>("binary")?, [1, 2, 3, 4]);
    assert_eq!(a.value("big"), Some(&EdmValue::Int64(i64::MIN)));
    assert_eq!(a.value("ratio"), Some(&EdmValue::Double(0.5)));
    assert_eq!(a.value("whole"), Some(&EdmValue::Double(20.0)));
    assert_eq!(a.value("count"), Some(&EdmValue::Int32(7)));
    assert_eq!(a.value("flag"), Some(&EdmValue::Boolean(false)));
    assert_eq!(a.get::<String>("text")?, "héllo");
    assert!(b.get::<f64>("nan")?.is_nan());
    assert_eq!(b.get::<f64>("inf")?, f64::INFINITY);
    assert_eq!(b.get::<f64>("ninf")?, f64::NEG_INFINITY);
    assert_eq!(b.get::<f64>("odatainf")?, f64::INFINITY);
    assert_eq!(b.get::<f64>("odataninf")?, f64::NEG_INFINITY);
    assert_eq!(b.get::<Uuid>("id")?, Uuid::from_u128(0xc9da6455_213d_42c9_9a79_3e9149a57833));
    Ok(())
}

/// DateTimes as Cosmos DB for Table answers them (`docs/rules.md` §13.2): a decimal point with fewer than 7
/// fraction digits (`.12Z`, `.1Z`), as well as 7, in the `Timestamp`, in annotated properties and, with a
/// DateTime hint, under nometadata. Each is read exactly, as the 7-digit form with trailing zeros.
#[test]
fn decodes_cosmos_datetimes_with_short_fractions() -> TestResult {
    let json = r#"{"odata.etag":"W/\"datetime'2026-11-23T03%3A04%3A05.12Z'\"","PartitionKey":"p","RowKey":"r",
        "Timestamp":"2026-11-23T03:04:05.12Z",
        "Two@odata.type":"Edm.DateTime","Two":"2026-11-23T03:04:05.12Z",
        "Seven@odata.type":"Edm.DateTime","Seven":"2026-11-23T03:04:05.1234567Z",
        "One@odata.type":"Edm.DateTime","One":"2026-11-23T03:04:05.1Z"}"#;
    let e = decode_entity(json.as_bytes(), None)?;
    assert_eq!(e.timestamp().unwrap().to_string(), "2026-11-23T03:04:05.1200000Z");
    assert_eq!(e.value("Two"), Some(&EdmValue::DateTime(DateTime::parse("2026-11-23T03:04:05.1200000Z")?)));
    assert_eq!(e.get::<DateTime>("Seven")?.to_string(), "2026-11-23T03:04:05.1234567Z");
    assert_eq!(e.get::<DateTime>("One")?.to_string(), "2026-11-23T03:04:05.1000000Z");
    // The same instants, apart by exactly their fractions: .1 and .12 are 1,000,000 and 1,200,000 ticks.
    let ticks = |d: DateTime| d.to_chrono().timestamp_subsec_nanos() / 100;
    assert_eq!((ticks(e.get("One")?), ticks(e.get("Two")?), ticks(e.get("Seven")?)), (1_000_000, 1_200_000, 1_234_567));
    // Without metadata, a DateTime hint reads the short forms alike.
    let bare = r#"{"PartitionKey":"p","RowKey":"r","When":"2026-11-23T03:04:05.12Z"}"#;
    let hints: HashMap<String, EdmType> = [("When".to_owned(), EdmType::DateTime)].into_iter().collect();
    let e = decode_entity(bare.as_bytes(), Some(&hints))?;
    assert_eq!(e.get::<DateTime>("When")?.to_string(), "2026-11-23T03:04:05.1200000Z");
    Ok(())
}

const NOMETADATA: &str = r#"{"value":[{"PartitionKey":"p","RowKey":"r","Timestamp":"2021-06-04T21:59:51.3069134Z",
    "Count":"255","Id":"c9da6455-213d-42c9-9a79-3e9149a57833","When":"2008-07-10T00:00:00Z",
    "Blob":"AQIDBA==","Ratio":"NaN","Name":"x","Age":23,"Price":200.23,"Widened":5}]}"#;

fn nometadata_expected() -> Result<Entity, Box<dyn std::error::Error>> {
    let mut e = entity("p", "r")
        .with(name("Count"), 255i64)?
        .with(name("Id"), Uuid::from_u128(0xc9da6455_213d_42c9_9a79_3e9149a57833))?
        .with(name("When"), DateTime::parse("2008-07-10T00:00:00Z")?)?
        .with(name("Blob"), vec![1u8, 2, 3, 4])?
        .with(name("Ratio"), f64::NAN)?
        .with(name("Name"), "x")?
        .with(name("Age"), 23)?
        .with(name("Price"), 200.23)?
        .with(name("Widened"), 5.0)?;
    e.set_server_metadata(Some(DateTime::parse("2021-06-04T21:59:51.3069134Z")?), None);
    Ok(e)
}

/// nometadata: no annotations, so the hints type the strings; every kind of hints gives the same entity.
#[test]
fn decodes_nometadata_with_hints() -> TestResult {
    let pairs = [
        ("Count", EdmType::Int64),
        ("Id", EdmType::Guid),
        ("When", EdmType::DateTime),
        ("Blob", EdmType::Binary),
        ("Ratio", EdmType::Double),
        ("Name", EdmType::String),
        ("Widened", EdmType::Double),
    ];
    let expected = nometadata_expected()?;
    let hash: HashMap<String, EdmType> = pairs.iter().map(|&(n, t)| (n.to_owned(), t)).collect();
    let btree: BTreeMap<String, EdmType> = pairs.iter().map(|&(n, t)| (n.to_owned(), t)).collect();
    let closure = |p: &str| pairs.iter().find(|(n, _)| *n == p).map(|&(_, t)| t);
    let slice: &[(&str, EdmType)] = &pairs;
    let all: [&dyn TypeHints; 5] = [&hash, &btree, &pairs, &slice, &closure];
    for hints in all {
        let page = decode_query(NOMETADATA.as_bytes(), Some(hints))?;
        assert_eq!(page, std::slice::from_ref(&expected));
    }

    // Without hints everything that is a string stays a string, and `Widened` is the Int32 it looks like.
    let plain = decode_query(NOMETADATA.as_bytes(), None)?;
    assert_eq!(plain[0].value("Count"), Some(&EdmValue::try_from("255")?));
    assert_eq!(plain[0].value("Blob"), Some(&EdmValue::try_from("AQIDBA==")?));
    assert_eq!(plain[0].value("Ratio"), Some(&EdmValue::try_from("NaN")?));
    assert_eq!(plain[0].value("Widened"), Some(&EdmValue::Int32(5)));
    Ok(())
}

/// The same entity at the three metadata levels decodes to the same `Entity` (with hints for nometadata).
#[test]
fn every_metadata_level_gives_the_same_entity() -> TestResult {
    let full = r#"{"odata.metadata":"m","value":[{"odata.type":"a.T","odata.id":"i","odata.etag":"W/\"1\"",
        "odata.editLink":"T(PartitionKey='p',RowKey='r')","PartitionKey":"p","RowKey":"r",
        "Timestamp@odata.type":"Edm.DateTime","Timestamp":"2021-06-04T21:59:51.3069134Z",
        "Count@odata.type":"Edm.Int64","Count":"255","Id@odata.type":"Edm.Guid","Id":"c9da6455-213d-42c9-9a79-3e9149a57833",
        "When@odata.type":"Edm.DateTime","When":"2008-07-10T00:00:00Z","Blob@odata.type":"Edm.Binary","Blob":"AQIDBA==",
        "Ratio@odata.type":"Edm.Double","Ratio":"NaN","Name@odata.type":"Edm.String","Name":"x",
        "Age@odata.type":"Edm.Int32","Age":23,"Price@odata.type":"Edm.Double","Price":200.23,
        "Widened@odata.type":"Edm.Int32","Widened":5}]}"#;
    let minimal = r#"{"odata.metadata":"m","value":[{"odata.etag":"W/\"1\"","PartitionKey":"p","RowKey":"r",
        "Timestamp":"2021-06-04T21:59:51.3069134Z","Count@odata.type":"Edm.Int64","Count":"255",
        "Id@odata.type":"Edm.Guid","Id":"c9da6455-213d-42c9-9a79-3e9149a57833",
        "When@odata.type":"Edm.DateTime","When":"2008-07-10T00:00:00Z","Blob@odata.type":"Edm.Binary","Blob":"AQIDBA==",
        "Ratio@odata.type":"Edm.Double","Ratio":"NaN","Name":"x","Age":23,"Price":200.23,"Widened":5}]}"#;
    let hints = [
        ("Count", EdmType::Int64),
        ("Id", EdmType::Guid),
        ("When", EdmType::DateTime),
        ("Blob", EdmType::Binary),
        ("Ratio", EdmType::Double),
        ("Widened", EdmType::Double),
    ];
    let mut expected = nometadata_expected()?;
    let from_none = decode_query(NOMETADATA.as_bytes(), Some(&hints))?;
    assert_eq!(from_none, std::slice::from_ref(&expected));
    expected.set_server_metadata(expected.timestamp(), Some(ETag::new("W/\"1\"")));
    assert_eq!(decode_query(minimal.as_bytes(), Some(&hints))?, std::slice::from_ref(&expected));
    // Full metadata annotates `Widened` as the Int32 it is stored as; the Double hint widens it.
    assert_eq!(decode_query(full.as_bytes(), Some(&hints))?, [expected]);
    Ok(())
}

#[test]
fn annotations_may_follow_their_values_and_names_may_be_escaped() -> TestResult {
    let json = r#"{"Count":"5","RowKey":"r","Count@odata.type":"Edm.Int64","PartitionKey":"p",
        "N\u0061me":"x","W\u0068en":"2024-01-02T03:04:05Z","Wh\u0065n@odata.type":"Edm.DateTime"}"#;
    let e = decode_entity(json.as_bytes(), None)?;
    assert_eq!(e.value("Count"), Some(&EdmValue::Int64(5)));
    assert_eq!(e.get::<String>("Name")?, "x");
    assert_eq!(e.get::<DateTime>("When")?.to_string(), "2024-01-02T03:04:05.0000000Z");
    let names: Vec<&str> = e.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Count", "Name", "When"]);
    Ok(())
}

/// Documented limits of reading through serde_json: `-0` and integers past 64 bits arrive as floats.
#[test]
fn integers_serde_json_reads_as_floats_are_doubles() -> TestResult {
    let e = decode_entity(br#"{"PartitionKey":"p","RowKey":"r","Z":-0,"Big":18446744073709551616}"#, None)?;
    assert_eq!(e.value("Z"), Some(&EdmValue::Double(-0.0)));
    assert_eq!(e.value("Big"), Some(&EdmValue::Double(18_446_744_073_709_551_616.0)));
    // The largest integers serde_json reads as integers are still refused without an annotation.
    let err = decode_err(r#"{"PartitionKey":"p","RowKey":"r","Big":18446744073709551615}"#);
    assert_eq!(err.kind(), &DecodeErrorKind::IntegerOutOfRange { value: "18446744073709551615".into() });
    let err = decode_err(r#"{"PartitionKey":"p","RowKey":"r","Small":-9223372036854775808}"#);
    assert_eq!(err.kind(), &DecodeErrorKind::IntegerOutOfRange { value: "-9223372036854775808".into() });
    Ok(())
}

#[test]
fn nulls_are_absent_properties() -> TestResult {
    let json = r#"{"PartitionKey":"p","RowKey":"r","Gone":null,"Typed@odata.type":"Edm.Int64","Typed":null,
        "Timestamp":null,"odata.etag":null,"Kept":1}"#;
    let e = decode_entity(json.as_bytes(), None)?;
    assert_eq!(e.len(), 1);
    assert_eq!(e.timestamp(), None);
    assert_eq!(e.etag(), None);
    assert_eq!(e.value("Kept"), Some(&EdmValue::Int32(1)));
    Ok(())
}

#[test]
fn annotated_values_accept_exactly_their_documented_forms() -> TestResult {
    let ok = |annotation: &str, value: &str| -> Result<EdmValue, DecodeError> {
        let json = format!(r#"{{"PartitionKey":"p","RowKey":"r","V@odata.type":"{annotation}","V":{value}}}"#);
        decode_entity(json.as_bytes(), None).map(|e| e.value("V").unwrap().clone())
    };
    assert_eq!(ok("Edm.Int64", r#""-42""#)?, EdmValue::Int64(-42));
    assert_eq!(ok("Edm.Int64", "42")?, EdmValue::Int64(42));
    assert_eq!(ok("Edm.Int64", "-9223372036854775808")?, EdmValue::Int64(i64::MIN));
    assert_eq!(ok("Edm.Int32", "-2147483648")?, EdmValue::Int32(i32::MIN));
    assert_eq!(ok("Edm.Double", "5")?, EdmValue::Double(5.0));
    assert_eq!(ok("Edm.Double", "-0.0")?, EdmValue::Double(-0.0));
    assert_eq!(ok("Edm.Double", "1e-320")?, EdmValue::Double(1e-320));
    assert_eq!(ok("Edm.Boolean", "true")?, EdmValue::Boolean(true));
    assert_eq!(ok("Edm.String", r#""5""#)?, EdmValue::try_from("5")?);
    assert_eq!(ok("Edm.DateTime", r#""2024-01-02T03:04:05Z""#)?.edm_type(), EdmType::DateTime);
    assert_eq!(ok("Edm.DateTime", r#""2024-01-02T03:04:05.1234567Z""#)?.edm_type(), EdmType::DateTime);
    assert_eq!(ok("Edm.Binary", r#""""#)?, EdmValue::try_from(Vec::new())?);

    let refused = [
        ("Edm.Int64", r#""12a""#, "JSON string `12a`"),
        ("Edm.Int64", r#""+5""#, "JSON string `+5`"),
        ("Edm.Int64", r#"" 5""#, "JSON string ` 5`"),
        ("Edm.Int64", r#""""#, "JSON string ``"),
        ("Edm.Int64", r#""9223372036854775808""#, "JSON string `9223372036854775808`"),
        ("Edm.Int64", "9223372036854775808", "JSON number `9223372036854775808`"),
        ("Edm.Int64", "5.0", "JSON number `5.0`"),
        ("Edm.Int32", "2147483648", "JSON number `2147483648`"),
        ("Edm.Int32", r#""5""#, "JSON string `5`"),
        ("Edm.Double", r#""abc""#, "JSON string `abc`"),
        ("Edm.Double", r#""5.5""#, "JSON string `5.5`"),
        ("Edm.Double", r#""nan""#, "JSON string `nan`"),
        ("Edm.Double", "true", "JSON true"),
        ("Edm.Boolean", r#""true""#, "JSON string `true`"),
        ("Edm.Boolean", "1", "JSON number `1`"),
        ("Edm.String", "5", "JSON number `5`"),
        (
            "Edm.Guid",
            r#""{c9da6455-213d-42c9-9a79-3e9149a57833}""#,
            "JSON string `{c9da6455-213d-42c9-9a79-3e9149a57833}`",
        ),
        ("Edm.Guid", r#""c9da6455213d42c99a793e9149a57833""#, "JSON string `c9da6455213d42c99a793e9149a57833`"),
        ("Edm.Guid", r#""c9da6455-213d-42c9-9a79-3e9149a5783g""#, "JSON string `c9da6455-213d-42c9-9a79-3e9149a5783g`"),
        ("Edm.DateTime", r#""2024-01-02""#, "JSON string `2024-01-02`"),
        ("Edm.DateTime", "638397614451234567", "JSON number `638397614451234567`"),
        ("Edm.Binary", r#""AQIDBA=""#, "JSON string `AQIDBA=`"),
        ("Edm.Binary", r#""AQIDBA""#, "JSON string `AQIDBA`"),
        ("Edm.Binary", r#""-_8=""#, "JSON string `-_8=`"),
        ("Edm.Binary", r#""AQIDBB==""#, "JSON string `AQIDBB==`"),
    ];
    for (annotation, value, found) in refused {
        let err = ok(annotation, value).unwrap_err();
        let expected: EdmType = annotation.parse()?;
        assert_eq!(
            err.kind(),
            &DecodeErrorKind::InvalidValue { expected, found: found.to_owned() },
            "{annotation} {value}"
        );
        assert_eq!(err.to_string(), format!("property `V`: expected {annotation}, found {found}"));
    }

    let err = ok("Edm.DateTime", r#""1600-12-31T23:59:59Z""#).unwrap_err();
    assert!(
        matches!(err.kind(), DecodeErrorKind::Value(v) if matches!(v.kind(), ValueErrorKind::DateTimeOutOfRange { .. }))
    );
    assert_eq!(
        err.to_string(),
        "property `V`: invalid Edm.DateTime: must be from 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, found 1600-12-31T23:59:59Z"
    );
    Ok(())
}

#[test]
fn values_over_their_limits_are_refused() {
    let long = format!(r#"{{"PartitionKey":"p","RowKey":"r","S":"{}"}}"#, "😀".repeat(16_385));
    let err = decode_err(&long);
    assert_eq!(
        err.to_string(),
        "property `S`: invalid Edm.String: must be at most 32768 UTF-16 code units, found 32770"
    );
    let exact = format!(r#"{{"PartitionKey":"p","RowKey":"r","S":"{}"}}"#, "😀".repeat(16_384));
    assert!(decode_entity(exact.as_bytes(), None).is_ok());

    use base64::Engine as _;
    let blob = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 65_537]);
    let json = format!(r#"{{"PartitionKey":"p","RowKey":"r","B@odata.type":"Edm.Binary","B":"{blob}"}}"#);
    let err = decode_err(&json);
    assert_eq!(err.to_string(), "property `B`: invalid Edm.Binary: must be at most 65536 bytes, found 65537");

    // 16 binaries of 64 KiB are each valid, but the entity is over 1 MiB by the size formula.
    let blob = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 65_536]);
    let members: String =
        (0..16).map(|i| format!(r#","B{i:02}@odata.type":"Edm.Binary","B{i:02}":"{blob}""#)).collect();
    let err = decode_err(&format!(r#"{{"PartitionKey":"p","RowKey":"r"{members}}}"#));
    assert!(matches!(err.kind(), DecodeErrorKind::Entity(e) if matches!(e.kind(), EntityErrorKind::TooLarge { .. })));
    assert_eq!(err.property(), Some("B15"));
}

#[test]
fn hints_that_disagree_with_an_annotation_are_refused() -> TestResult {
    let json = br#"{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.String","N":"5"}"#;
    let hints = [("N", EdmType::Int64)];
    let err = decode_entity(json, Some(&hints)).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::HintMismatch { annotated: EdmType::String, expected: EdmType::Int64 });
    assert_eq!(err.to_string(), "property `N`: annotated Edm.String, but the type hints expect Edm.Int64");

    // Widening an Int32 is the one exception, so every metadata level reads the same.
    let json = br#"{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Int32","N":5}"#;
    assert_eq!(decode_entity(json, Some(&hints))?.value("N"), Some(&EdmValue::Int64(5)));
    let as_double = [("N", EdmType::Double)];
    assert_eq!(decode_entity(json, Some(&as_double))?.value("N"), Some(&EdmValue::Double(5.0)));
    let as_bool = [("N", EdmType::Boolean)];
    assert!(matches!(decode_entity(json, Some(&as_bool)).unwrap_err().kind(), DecodeErrorKind::HintMismatch { .. }));

    // A plain string the hints call a Guid must be one.
    let json = br#"{"PartitionKey":"p","RowKey":"r","Id":"abc"}"#;
    let err = decode_entity(json, Some(&[("Id", EdmType::Guid)])).unwrap_err();
    assert_eq!(err.to_string(), "property `Id`: expected Edm.Guid, found JSON string `abc`");
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// Decoding: refusals
// ---------------------------------------------------------------------------------------------------------

#[test]
fn invalid_json_names_line_and_column() {
    let err = decode_err("{\n\"PartitionKey\": \"p\",\n\"RowKey\": tru }");
    match err.kind() {
        DecodeErrorKind::InvalidJson { line, message, .. } => {
            assert_eq!(*line, 3);
            assert_eq!(message, "expected ident");
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().starts_with("invalid JSON at line 3 column "), "{err}");

    for bad in [
        "",
        "   ",
        "{",
        r#"{"PartitionKey":"p","RowKey":"r"}}"#,
        r#"{"PartitionKey":"p",}"#,
        "[]",
        "5",
        "\"x\"",
        "null",
        "{\"a\"}",
    ] {
        assert!(matches!(decode_err(bad).kind(), DecodeErrorKind::InvalidJson { .. }), "{bad:?}");
    }
    let err = decode_err("[1]");
    assert_eq!(
        err.to_string(),
        "invalid JSON at line 1 column 0: invalid type: sequence, expected a JSON object (an entity)"
    );
    let err = decode_err(r#"{"PartitionKey":"p","RowKey":"r"} x"#);
    assert_eq!(err.to_string(), "invalid JSON at line 1 column 35: trailing characters");
}

#[test]
fn member_errors_are_typed_and_name_the_property() {
    let cases: Vec<(&str, DecodeErrorKind, Option<&str>, &str)> = vec![
        (
            r#"{"PartitionKey":"p","RowKey":"r","A":1,"A":2}"#,
            DecodeErrorKind::DuplicateMember { name: "A".into() },
            None,
            "duplicate member `A`; each member may appear once",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","PartitionKey":"q"}"#,
            DecodeErrorKind::DuplicateMember { name: "PartitionKey".into() },
            None,
            "duplicate member `PartitionKey`; each member may appear once",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int64","A":"1","A@odata.type":"Edm.Int64"}"#,
            DecodeErrorKind::DuplicateMember { name: "A@odata.type".into() },
            None,
            "duplicate member `A@odata.type`; each member may appear once",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Decimal","A":"1"}"#,
            DecodeErrorKind::UnknownEdmType("Edm.Decimal".parse::<EdmType>().unwrap_err()),
            Some("A"),
            "property `A`: unknown EDM type `Edm.Decimal`: expected one of Edm.Binary, Edm.Boolean, Edm.DateTime, Edm.Double, Edm.Guid, Edm.Int32, Edm.Int64, Edm.String",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","A@odata.type":5,"A":"1"}"#,
            DecodeErrorKind::InvalidAnnotation { found: "JSON number `5`".into() },
            Some("A"),
            "property `A`: invalid type annotation: expected a JSON string such as `Edm.Int64`, found JSON number `5`",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","Ghost@odata.type":"Edm.Int64","A":1}"#,
            DecodeErrorKind::OrphanAnnotation,
            Some("Ghost"),
            "property `Ghost`: type annotation without its property; an annotation must sit next to a value",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","A@odata.mediaEditLink":"x","A":1}"#,
            DecodeErrorKind::UnsupportedAnnotation { name: "A@odata.mediaEditLink".into() },
            None,
            "unsupported annotation `A@odata.mediaEditLink`; only `@odata.type` annotations are understood",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","A":{"b":1}}"#,
            DecodeErrorKind::NestedValue { found: "object" },
            Some("A"),
            "property `A`: a JSON object is not a property value; values are strings, numbers, booleans or null",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","A":[1]}"#,
            DecodeErrorKind::NestedValue { found: "array" },
            Some("A"),
            "property `A`: a JSON array is not a property value; values are strings, numbers, booleans or null",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","Count":3000000000}"#,
            DecodeErrorKind::IntegerOutOfRange { value: "3000000000".into() },
            Some("Count"),
            "property `Count`: JSON integer `3000000000` without a type annotation must fit Edm.Int32; an Int64 is sent as a string annotated `Edm.Int64`",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","Timestamp@odata.type":"Edm.String","Timestamp":"x"}"#,
            DecodeErrorKind::SystemAnnotation { found: EdmType::String },
            Some("Timestamp"),
            "property `Timestamp`: invalid system property annotation: found Edm.String",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","Timestamp":"yesterday"}"#,
            DecodeErrorKind::InvalidValue { expected: EdmType::DateTime, found: "JSON string `yesterday`".into() },
            Some("Timestamp"),
            "property `Timestamp`: expected Edm.DateTime, found JSON string `yesterday`",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r","odata.etag":5}"#,
            DecodeErrorKind::InvalidValue { expected: EdmType::String, found: "JSON number `5`".into() },
            Some("odata.etag"),
            "property `odata.etag`: expected Edm.String, found JSON number `5`",
        ),
        (
            r#"{"PartitionKey":5,"RowKey":"r"}"#,
            DecodeErrorKind::InvalidValue { expected: EdmType::String, found: "JSON number `5`".into() },
            Some("PartitionKey"),
            "property `PartitionKey`: expected Edm.String, found JSON number `5`",
        ),
        (
            r#"{"PartitionKey":"p","RowKey":"r"}"#.trim_end_matches(r#","RowKey":"r"}"#),
            DecodeErrorKind::InvalidJson { line: 1, column: 19, message: "EOF while parsing an object".into() },
            None,
            "invalid JSON at line 1 column 19: EOF while parsing an object",
        ),
        (
            r#"{"PartitionKey":"p"}"#,
            DecodeErrorKind::MissingKey(KeyKind::Row),
            None,
            "missing `RowKey`; every entity has both keys",
        ),
        (
            r#"{"RowKey":"r","A":1}"#,
            DecodeErrorKind::MissingKey(KeyKind::Partition),
            None,
            "missing `PartitionKey`; every entity has both keys",
        ),
    ];
    for (json, kind, property, message) in cases {
        let err = decode_err(json);
        assert_eq!(err.kind(), &kind, "{json}");
        assert_eq!(err.property(), property, "{json}");
        assert_eq!(err.to_string(), message, "{json}");
        assert_eq!(err.entity_index(), None);
    }
}

#[test]
fn invalid_names_and_keys_are_refused() {
    let err = decode_err(r#"{"PartitionKey":"p","RowKey":"r","Unit Price":1}"#);
    assert!(
        matches!(err.kind(), DecodeErrorKind::InvalidPropertyName(e) if matches!(e.kind(), PropertyNameErrorKind::InvalidChar { ch: ' ', index: 4 }))
    );
    assert_eq!(
        err.to_string(),
        "property `Unit Price`: invalid property name: character U+0020 at index 4 is not allowed; names follow C# identifier rules (letters, digits, `_`)"
    );
    for reserved in ["timestamp", "PARTITIONKEY", "rowKey"] {
        let err = decode_err(&format!(r#"{{"PartitionKey":"p","RowKey":"r","{reserved}":1}}"#));
        assert!(
            matches!(err.kind(), DecodeErrorKind::InvalidPropertyName(e) if matches!(e.kind(), PropertyNameErrorKind::Reserved { .. })),
            "{reserved}"
        );
    }
    for bad in ["", "1abc", "a-b", "a.b", &"x".repeat(256)] {
        let err = decode_err(&format!(r#"{{"PartitionKey":"p","RowKey":"r","{bad}":1}}"#));
        assert!(matches!(err.kind(), DecodeErrorKind::InvalidPropertyName(_)), "{bad:?}");
        assert_eq!(err.property(), Some(bad));
    }
    let err = decode_err(r#"{"PartitionKey":"a/b","RowKey":"r"}"#);
    assert!(matches!(err.kind(), DecodeErrorKind::InvalidKey(k) if k.key() == KeyKind::Partition));
    assert_eq!(
        err.to_string(),
        "property `PartitionKey`: invalid partition key \"a/b\": character `/` at index 1 is not allowed"
    );
    let err = decode_err(&format!(r#"{{"PartitionKey":"p","RowKey":"{}"}}"#, "x".repeat(513)));
    assert!(matches!(err.kind(), DecodeErrorKind::InvalidKey(k) if k.key() == KeyKind::Row));
    let err = decode_err(r#"{"PartitionKey":"p","RowKey":"tab\there"}"#);
    assert!(matches!(err.kind(), DecodeErrorKind::InvalidKey(_)));
}

#[test]
fn more_than_252_properties_are_refused() {
    let members = |n: usize| -> String { (0..n).map(|i| format!(r#","P{i}":{i}"#)).collect() };
    let ok = format!(r#"{{"PartitionKey":"p","RowKey":"r"{},"Gone":null}}"#, members(252));
    assert_eq!(decode_entity(ok.as_bytes(), None).unwrap().len(), 252);
    let err = decode_err(&format!(r#"{{"PartitionKey":"p","RowKey":"r"{}}}"#, members(253)));
    assert_eq!(err.kind(), &DecodeErrorKind::TooManyProperties { count: 253 });
    assert_eq!(err.to_string(), "invalid entity: at most 252 custom properties are allowed, found 253");
    // Many names share a Bloom bit: the duplicate check stays exact.
    let err = decode_err(&format!(r#"{{"PartitionKey":"p","RowKey":"r"{},"P200":1}}"#, members(240)));
    assert_eq!(err.kind(), &DecodeErrorKind::DuplicateMember { name: "P200".into() });
}

/// The limit is checked as each value is read: the 253rd property is refused before anything after it is read,
/// so a body with far more members is refused at the same point (here the rest is not even valid JSON).
#[test]
fn the_property_limit_is_checked_while_reading() {
    let members = |n: usize| -> String { (0..n).map(|i| format!(r#","P{i}":{i}"#)).collect() };
    let err = decode_err(&format!(r#"{{"PartitionKey":"p","RowKey":"r"{},"P253":[{{"#, members(253)));
    assert_eq!(err.kind(), &DecodeErrorKind::TooManyProperties { count: 253 });
    assert_eq!(err.to_string(), "invalid entity: at most 252 custom properties are allowed, found 253");
    let err = decode_err(&format!(r#"{{"PartitionKey":"p","RowKey":"r"{}"#, members(75_000)));
    assert_eq!(err.kind(), &DecodeErrorKind::TooManyProperties { count: 253 });
    // In a page, the entity is named; nulls do not count.
    let nulls: String = (0..1000).map(|i| format!(r#","N{i}":null"#)).collect();
    let page = format!(
        r#"{{"value":[{{"PartitionKey":"p","RowKey":"1"{nulls}{}}},{{"PartitionKey":"p","RowKey":"2"{}}}]}}"#,
        members(252),
        members(300)
    );
    let err = decode_query(page.as_bytes(), None).unwrap_err();
    assert_eq!((err.kind(), err.entity_index()), (&DecodeErrorKind::TooManyProperties { count: 253 }, Some(1)));
}

/// `docs/rules.md` §5.5: a member given twice is refused, `odata.*` members included, in entities and in the
/// query page around them.
#[test]
fn duplicate_odata_members_are_refused() {
    let duplicate = |name: &str| DecodeErrorKind::DuplicateMember { name: name.into() };
    for json in [
        r#"{"odata.metadata":"m","odata.metadata":"m","PartitionKey":"p","RowKey":"r"}"#,
        r#"{"odata.metadata":"m","PartitionKey":"p","RowKey":"r","odata.metadata":{"other":[1]}}"#,
        r#"{"PartitionKey":"p","odata.type":"a.T","RowKey":"r","odata.type":"a.T"}"#,
        r#"{"PartitionKey":"p","RowKey":"r","odata.etag":"W/\"1\"","odata.etag":"W/\"2\""}"#,
    ] {
        let name = if json.contains("odata.metadata") {
            "odata.metadata"
        } else if json.contains("odata.type") {
            "odata.type"
        } else {
            "odata.etag"
        };
        let err = decode_err(json);
        assert_eq!(err.kind(), &duplicate(name), "{json}");
        assert_eq!(err.to_string(), format!("duplicate member `{name}`; each member may appear once"));
    }
    // Distinct `odata.*` names are each skipped once.
    let e = decode_entity(br#"{"odata.metadata":"m","odata.type":"a.T","odata.id":"i","odata.editLink":"l","PartitionKey":"p","RowKey":"r"}"#, None).unwrap();
    assert_eq!((e.partition_key().as_str(), e.row_key().as_str(), e.len()), ("p", "r", 0));

    let err = decode_query(br#"{"odata.metadata":"m","value":[],"odata.metadata":"m"}"#, None).unwrap_err();
    assert_eq!((err.kind(), err.entity_index()), (&duplicate("odata.metadata"), None));
    let err = decode_query(br#"{"value":[{"PartitionKey":"p","RowKey":"1"},{"odata.id":"a","PartitionKey":"p","RowKey":"2","odata.id":"b"}]}"#, None)
        .unwrap_err();
    assert_eq!((err.kind(), err.entity_index()), (&duplicate("odata.id"), Some(1)));
    // The same name in two entities of a page is no duplicate.
    let page = br#"{"odata.metadata":"m","value":[{"odata.etag":"1","odata.id":"a","PartitionKey":"p","RowKey":"1"},{"odata.etag":"2","odata.id":"b","PartitionKey":"p","RowKey":"2"}]}"#;
    assert_eq!(decode_query(page, None).unwrap().len(), 2);
}

/// 1,000,000 duplicate `odata.etag` members are refused at the second, in an entity and around a page, without
/// reading the rest (the outcome is asserted, not the time).
#[test]
fn a_million_duplicate_etags_are_refused_at_the_second() {
    let etags = r#""odata.etag":"W/\"1\"","#.repeat(1_000_000);
    let duplicate = DecodeErrorKind::DuplicateMember { name: "odata.etag".into() };
    let err = decode_err(&format!(r#"{{{etags}"PartitionKey":"p","RowKey":"r"}}"#));
    assert_eq!(err.kind(), &duplicate);
    assert_eq!(err.to_string(), "duplicate member `odata.etag`; each member may appear once");
    let err = decode_query(format!(r#"{{{etags}"value":[]}}"#).as_bytes(), None).unwrap_err();
    assert_eq!(err.kind(), &duplicate);
    let err = decode_query(format!(r#"{{"value":[{{{etags}"PartitionKey":"p","RowKey":"r"}}]}}"#).as_bytes(), None)
        .unwrap_err();
    assert_eq!((err.kind(), err.entity_index()), (&duplicate, Some(0)));
}

/// Many distinct members decode in time linear in the body: the duplicate check and the pairing of
/// annotations with their values switch to hash lookups once an object is large. Before, 40,000 null
/// properties took 22 s (quadratic) in a debug build; 200,000 would take minutes, so this test finishing is
/// the check, and the outcome is what is asserted.
#[test]
fn many_distinct_members_decode_in_linear_time() {
    const N: usize = 200_000;
    let distinct = |member: &dyn Fn(usize) -> String| (0..N).map(member).collect::<String>();
    let duplicate = |name: &str| DecodeErrorKind::DuplicateMember { name: name.into() };

    // Distinct `odata.*` members: all skipped; the last one repeating the first is found.
    let odata = distinct(&|i| format!(r#""odata.x{i}":{i},"#));
    let e = decode_entity(format!(r#"{{{odata}"PartitionKey":"p","RowKey":"r"}}"#).as_bytes(), None).unwrap();
    assert_eq!((e.row_key().as_str(), e.len()), ("r", 0));
    assert_eq!(decode_query(format!(r#"{{{odata}"value":[]}}"#).as_bytes(), None).unwrap(), []);
    let err = decode_err(&format!(r#"{{{odata}"PartitionKey":"p","RowKey":"r","odata.x0":0}}"#));
    assert_eq!(err.kind(), &duplicate("odata.x0"));

    // Distinct null properties (absent, so under the 252 limit), then one repeated.
    let nulls = distinct(&|i| format!(r#""P{i}":null,"#));
    let e = decode_entity(format!(r#"{{{nulls}"PartitionKey":"p","RowKey":"r"}}"#).as_bytes(), None).unwrap();
    assert_eq!(e.len(), 0);
    let last = format!("P{}", N - 1);
    let err = decode_err(&format!(r#"{{{nulls}"PartitionKey":"p","RowKey":"r","{last}":null}}"#));
    assert_eq!(err.kind(), &duplicate(&last));
    // Distinct properties with values: refused at the 253rd, as it is read (the rest is not read).
    let values = distinct(&|i| format!(r#""P{i}":{i},"#));
    let err = decode_err(&format!(r#"{{{values}"PartitionKey":"p","RowKey":"r"}}"#));
    assert_eq!(err.kind(), &DecodeErrorKind::TooManyProperties { count: 253 });
    // Annotations far from their values: each finds its property, and one given twice is found.
    let annotations = distinct(&|i| format!(r#""P{i}@odata.type":"Edm.Int64","#));
    let json = format!(r#"{{{nulls}{annotations}"PartitionKey":"p","RowKey":"r"}}"#);
    assert_eq!(decode_entity(json.as_bytes(), None).unwrap().len(), 0);
    let err =
        decode_err(&format!(r#"{{{nulls}{annotations}"P0@odata.type":"Edm.Int64","PartitionKey":"p","RowKey":"r"}}"#));
    assert_eq!(err.kind(), &duplicate("P0@odata.type"));
}

#[test]
fn query_errors_name_the_entity() {
    let json = r#"{"value":[{"PartitionKey":"p","RowKey":"1"},{"PartitionKey":"p","RowKey":"2","Price@odata.type":"Edm.Double","Price":"abc"}]}"#;
    let err = decode_query(json.as_bytes(), None).unwrap_err();
    assert_eq!(err.entity_index(), Some(1));
    assert_eq!(err.to_string(), "entity 1: property `Price`: expected Edm.Double, found JSON string `abc`");

    let json = r#"{"value":[{"PartitionKey":"p","RowKey":"1","A":[]}]}"#;
    let err = decode_query(json.as_bytes(), None).unwrap_err();
    assert_eq!(err.entity_index(), Some(0));
    assert_eq!(err.kind(), &DecodeErrorKind::NestedValue { found: "array" });

    let err = decode_query(br#"{"odata.metadata":"m"}"#, None).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::MissingValueArray);
    assert_eq!(err.to_string(), "invalid query response: missing the `value` array");
    let err = decode_query(br#"{"value":[],"next":1}"#, None).unwrap_err();
    assert_eq!(err.to_string(), "invalid query response: unknown member `next`; expected `value` or `odata.*`");
    let err = decode_query(br#"{"value":[],"value":[]}"#, None).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::DuplicateMember { name: "value".into() });
    let err = decode_query(br#"{"value":{}}"#, None).unwrap_err();
    assert!(matches!(err.kind(), DecodeErrorKind::InvalidJson { .. }));
    let err = decode_query(br#"{"value":[1]}"#, None).unwrap_err();
    assert!(err.to_string().ends_with("invalid type: integer `1`, expected a JSON object (an entity)"), "{err}");

    assert_eq!(decode_query(br#"{"value":[]}"#, None).unwrap(), []);
    let page = decode_query(br#"{"odata.nextLink":{"x":[1,2]},"value":[{"PartitionKey":"","RowKey":""}]}"#, None);
    assert_eq!(page.unwrap().len(), 1);
}

/// A visitor's `end` runs once its object has been read, before what follows is looked at: its error is the
/// one reported, ahead of trailing input after an entity and of a broken entity later in a page, and a
/// visitor that ends well still has its input checked to the end.
#[test]
fn a_visitor_error_at_the_end_comes_before_what_follows_the_entity() {
    struct EndsWith(Option<&'static str>);
    impl EntityVisitor for EndsWith {
        type Value = ();
        fn begin(&mut self, _: SystemProperties) -> Result<(), DecodeError> {
            Ok(())
        }
        fn property(&mut self, _: &str, _: EdmValue) -> Result<(), DecodeError> {
            Ok(())
        }
        fn end(self) -> Result<(), DecodeError> {
            self.0.map_or(Ok(()), |message| Err(DecodeError::custom(message)))
        }
    }
    let entity = r#"{"PartitionKey":"p","RowKey":"r","N":1}"#;
    let trailing = format!("{entity} x");
    let err = decode_entity_with(trailing.as_bytes(), EndsWith(Some("missing"))).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::Custom { message: "missing".into() });
    let err = decode_entity_with(trailing.as_bytes(), EndsWith(None)).unwrap_err();
    assert!(matches!(err.kind(), DecodeErrorKind::InvalidJson { .. }), "{err}");
    assert!(decode_entity_with(entity.as_bytes(), EndsWith(None)).is_ok());

    let page = format!(r#"{{"value":[{entity},{{"PartitionKey":"p","RowKey":"s","A":[]}}]}}"#);
    let err = decode_query_with(page.as_bytes(), || EndsWith(Some("missing"))).unwrap_err();
    assert_eq!((err.entity_index(), err.kind()), (Some(0), &DecodeErrorKind::Custom { message: "missing".into() }));
    let err = decode_query_with(page.as_bytes(), || EndsWith(None)).unwrap_err();
    assert_eq!((err.entity_index(), err.kind()), (Some(1), &DecodeErrorKind::NestedValue { found: "array" }));
    let err = decode_query_with(format!(r#"{{"value":[{entity}]}} x"#).as_bytes(), || EndsWith(None)).unwrap_err();
    assert!(matches!(err.kind(), DecodeErrorKind::InvalidJson { .. }), "{err}");
}

/// Nothing recurses on the input: values are refused before their nesting is entered, and skipped `odata.*`
/// values are skipped by serde_json's iterative skipper. Deep input is an error or a success, never a crash.
#[test]
fn deep_nesting_is_never_a_crash() -> TestResult {
    let deep = |open: &str, n: usize| open.repeat(n);
    let inputs = [
        deep("[", 100_000),
        deep("{\"a\":", 100_000),
        format!(r#"{{"PartitionKey":"p","RowKey":"r","A":{}"#, deep("[", 100_000)),
        format!(r#"{{"odata.metadata":{}"#, deep("[", 100_000)),
        format!(r#"{{"value":{}"#, deep("[", 100_000)),
        format!(r#"{{"value":[{}"#, deep("{\"a\":", 100_000)),
    ];
    for input in &inputs {
        assert!(decode_entity(input.as_bytes(), None).is_err());
        assert!(decode_query(input.as_bytes(), None).is_err());
    }
    let err = decode_entity(inputs[2].as_bytes(), None).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::NestedValue { found: "array" });

    let skipped =
        format!(r#"{{"odata.metadata":{}1{},"PartitionKey":"p","RowKey":"r"}}"#, deep("[", 10_000), deep("]", 10_000));
    assert_eq!(decode_entity(skipped.as_bytes(), None)?, entity("p", "r"));
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// The streaming visitor
// ---------------------------------------------------------------------------------------------------------

/// A visitor shaped like what the derive generates: typed fields, hints from a static schema, missing
/// required properties reported by name.
#[derive(Debug, Default, PartialEq)]
struct Order {
    partition_key: String,
    row_key: String,
    etag: Option<ETag>,
    quantity: i64,
    price: Option<f64>,
}

const ORDER_SCHEMA: [(&str, EdmType); 2] = [("Quantity", EdmType::Int64), ("Price", EdmType::Double)];

#[derive(Default)]
struct OrderVisitor {
    order: Order,
    quantity: Option<i64>,
    calls: Vec<String>,
}

impl EntityVisitor for OrderVisitor {
    type Value = (Order, Vec<String>);

    fn edm_type(&self, property: &str) -> Option<EdmType> {
        ORDER_SCHEMA.edm_type(property)
    }

    fn begin(&mut self, system: SystemProperties) -> Result<(), DecodeError> {
        self.calls.push("begin".into());
        self.order.partition_key = system.partition_key.ok_or(DecodeError::missing_key(KeyKind::Partition))?.into();
        self.order.row_key = system.row_key.ok_or(DecodeError::missing_key(KeyKind::Row))?.into();
        self.order.etag = system.etag;
        Ok(())
    }

    fn property(&mut self, name: &str, value: EdmValue) -> Result<(), DecodeError> {
        self.calls.push(name.to_owned());
        match name {
            "Quantity" => self.quantity = Some(i64::from_edm(value)?),
            "Price" => self.order.price = Some(f64::from_edm(value)?),
            _ => {}
        }
        Ok(())
    }

    fn end(mut self) -> Result<Self::Value, DecodeError> {
        self.order.quantity = self.quantity.ok_or_else(|| DecodeError::missing_property("Quantity"))?;
        Ok((self.order, self.calls))
    }
}

#[test]
fn visitor_receives_system_first_then_properties_in_order() -> TestResult {
    let json = br#"{"Quantity":"3","Extra":true,"odata.etag":"W/\"1\"","RowKey":"r","PartitionKey":"p","Price":2.5}"#;
    let (order, calls) = decode_entity_with(json, OrderVisitor::default())?;
    assert_eq!(
        order,
        Order {
            partition_key: "p".into(),
            row_key: "r".into(),
            etag: Some(ETag::new("W/\"1\"")),
            quantity: 3,
            price: Some(2.5)
        }
    );
    assert_eq!(calls, ["begin", "Quantity", "Extra", "Price"]);

    let err = decode_entity_with(br#"{"PartitionKey":"p","RowKey":"r"}"#, OrderVisitor::default()).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::MissingProperty);
    assert_eq!(err.to_string(), "missing property `Quantity`");

    // A conversion the visitor refuses is reported with the property's name.
    let err = decode_entity_with(br#"{"PartitionKey":"p","RowKey":"r","Quantity":true}"#, OrderVisitor::default())
        .unwrap_err();
    assert_eq!(err.to_string(), "property `Quantity`: expected Edm.Int64, found JSON true");
    let json = br#"{"PartitionKey":"p","RowKey":"r","Quantity@odata.type":"Edm.Boolean","Quantity":true}"#;
    let err = decode_entity_with(json, OrderVisitor::default()).unwrap_err();
    assert_eq!(err.to_string(), "property `Quantity`: annotated Edm.Boolean, but the type hints expect Edm.Int64");

    let page = decode_query_with(
        br#"{"value":[{"PartitionKey":"p","RowKey":"1","Quantity":"1"},{"PartitionKey":"p","RowKey":"2","Quantity":"2"}]}"#,
        OrderVisitor::default,
    )?;
    let quantities: Vec<i64> = page.iter().map(|(o, _)| o.quantity).collect();
    assert_eq!(quantities, [1, 2]);
    let err =
        decode_query_with(br#"{"value":[{"PartitionKey":"p","RowKey":"1"}]}"#, OrderVisitor::default).unwrap_err();
    assert_eq!(err.to_string(), "entity 0: missing property `Quantity`");
    Ok(())
}
