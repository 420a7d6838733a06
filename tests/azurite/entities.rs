//! Entities written and read back: every EDM type at every metadata level, hostile keys, ETags.

use crate::support::{all_entities, azurite, Azurite};
use futures::TryStreamExt as _;
use table_model::client::{TableClient, TableServiceClient, TableServiceClientOptions, UpdateOptions};
use table_model::filter::{self, Filter};
use table_model::{
    AccountKey, DateTime, ETag, EdmType, Entity, ErrorCode, IfMatch, MetadataLevel, PartitionKey, Query, RowKey,
    TableEntity, UpdateMode,
};
use uuid::Uuid;

/// A struct with a field of every EDM type, and the values that are hardest to carry.
#[derive(TableEntity, Debug, Clone)]
#[table(rename_all = "PascalCase")]
struct EveryType {
    #[table(partition_key)]
    partition: String,
    #[table(row_key)]
    row: String,
    text: String,
    empty_text: String,
    flag: bool,
    int32: i32,
    int64: i64,
    big_int64: i64,
    double: f64,
    integral_double: f64,
    not_a_number: f64,
    infinity: f64,
    negative_infinity: f64,
    tiny_double: f64,
    guid: Uuid,
    when: DateTime,
    earliest: DateTime,
    latest: DateTime,
    when_chrono: chrono::DateTime<chrono::Utc>,
    bytes: Vec<u8>,
    empty_bytes: Vec<u8>,
    small: u8,
    medium: i16,
    unsigned: u32,
    single: f32,
    absent: Option<String>,
    present: Option<i64>,
    #[table(timestamp)]
    timestamp: Option<DateTime>,
    #[table(etag)]
    etag: Option<ETag>,
}

fn every_type(row: &str) -> EveryType {
    EveryType {
        partition: "types".into(),
        row: row.into(),
        text: "héllo 'quoted' \"double\" \\ / 😀 \u{FFFF}".into(),
        empty_text: String::new(),
        flag: true,
        int32: i32::MIN,
        int64: i64::MAX,
        big_int64: -(1 << 53) - 1,
        double: 0.1 + 0.2,
        integral_double: 5.0,
        not_a_number: f64::NAN,
        infinity: f64::INFINITY,
        negative_infinity: f64::NEG_INFINITY,
        tiny_double: f64::MIN_POSITIVE / 3.0,
        guid: Uuid::from_u128(0x0f8f_ad5b_d9cb_469f_a165_7086_7728_950e),
        when: "2024-02-29T23:59:59.1234567Z".parse().unwrap(),
        earliest: DateTime::MIN,
        latest: DateTime::MAX,
        when_chrono: chrono::DateTime::from_timestamp(1_700_000_000, 123_456_700).unwrap(),
        bytes: (0..=255).collect(),
        empty_bytes: Vec::new(),
        small: u8::MAX,
        medium: i16::MIN,
        unsigned: u32::MAX,
        single: 1.5,
        absent: None,
        present: Some(-7),
        timestamp: None,
        etag: None,
    }
}

const LEVELS: [MetadataLevel; 3] = [MetadataLevel::None, MetadataLevel::Minimal, MetadataLevel::Full];

/// The client of a table that asks for responses at this metadata level.
fn at_level(azurite: &Azurite, table: &TableClient, level: MetadataLevel) -> TableClient {
    let options = TableServiceClientOptions { metadata: level, ..Default::default() };
    let service = TableServiceClient::new(&azurite.url, AccountKey::development(), Some(options)).unwrap();
    service.table_client(table.table().clone())
}

#[tokio::test]
async fn every_edm_type_round_trips_at_every_metadata_level() {
    let azurite = azurite!();
    let table = azurite.table("EveryType").await;
    let written = every_type("one");
    // The derived struct is encoded straight from its fields.
    let etag = table.insert(&written, None).await.unwrap();
    let expected = written.to_entity().unwrap();
    let (pk, rk) = (PartitionKey::new("types").unwrap(), RowKey::new("one").unwrap());

    for level in LEVELS {
        let client = at_level(&azurite, &table, level);

        // Get by key into the struct: the same values, bit for bit (an Entity compares doubles by bits), and
        // the ETag of the insert, at every level (under nometadata it comes from the header alone; the
        // struct's schema types the values nothing annotates).
        let read: EveryType = client.get(&pk, &rk, None).await.unwrap_or_else(|e| panic!("{level:?}: {e}"));
        assert_same(&read.to_entity().unwrap(), &expected, &format!("{level:?}"));
        assert_eq!(read.etag.as_ref(), Some(&etag), "{level:?}");
        assert!(read.timestamp.is_some(), "{level:?}: Timestamp");
        assert!(read.not_a_number.is_nan() && read.infinity == f64::INFINITY, "{level:?}");

        // The same through a dynamic Entity: exact where the types are annotated; under nometadata the client
        // has no hints, and the types JSON cannot show arrive as their wire strings, as documented.
        let entity: Entity = client.get(&pk, &rk, None).await.unwrap_or_else(|e| panic!("{level:?}: {e}"));
        assert_eq!(entity.etag(), Some(&etag), "{level:?}");
        if level == MetadataLevel::None {
            assert_eq!(entity.get::<String>("Int64").unwrap(), i64::MAX.to_string());
            assert_eq!(entity.get::<String>("Guid").unwrap(), "0f8fad5b-d9cb-469f-a165-70867728950e");
            assert_eq!(entity.get::<String>("Text").unwrap(), written.text);
            assert_eq!(EveryType::SCHEMA.edm_type_of("Int64"), Some(EdmType::Int64));
        } else {
            assert_same(&entity, &expected, &format!("{level:?} dynamic"));
        }

        // A query returns the same entity.
        let query = Query::new().filter(filter::ROW_KEY.eq("one"));
        let page: Vec<EveryType> = client.query(&query, None).unwrap().try_collect().await.unwrap();
        assert_eq!(page.len(), 1);
        assert_same(&page[0].to_entity().unwrap(), &expected, &format!("{level:?} query"));
    }
}

/// An emulator difference, not an SDK one: the SDK writes `-0.0` (with its `Edm.Double` annotation), and
/// Azurite, whose numbers are JavaScript numbers, returns `0.0`. The test records it so that a change in
/// Azurite is noticed; the service itself keeps IEEE doubles.
#[tokio::test]
async fn azurite_loses_the_sign_of_negative_zero() {
    let azurite = azurite!();
    let table = azurite.table("NegZero").await;
    let e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap())
        .with("Z".parse().unwrap(), -0.0)
        .unwrap();
    let request = azurite.requests().insert(table.table(), &e).unwrap();
    assert!(std::str::from_utf8(request.body()).unwrap().contains(r#""Z@odata.type":"Edm.Double","Z":-0.0"#));
    table.insert(&e, None).await.unwrap();
    let read: Entity = table.get(e.partition_key(), e.row_key(), None).await.unwrap();
    let z = read.get::<f64>("Z").unwrap();
    assert_eq!(z.to_bits(), 0.0f64.to_bits(), "Azurite now keeps -0.0: move it back into EveryType");
}

#[tokio::test]
async fn dynamic_entities_keep_their_types_with_annotations() {
    let azurite = azurite!();
    let table = azurite.table("Dynamic").await;
    let written = every_type("dyn").to_entity().unwrap();
    table.insert(&written, None).await.unwrap();
    // Minimal and full metadata annotate every type JSON cannot show: a dynamic entity needs no hints.
    for level in [MetadataLevel::Minimal, MetadataLevel::Full] {
        let client = at_level(&azurite, &table, level);
        let read: Entity = client.get(written.partition_key(), written.row_key(), None).await.unwrap();
        assert_same(&read, &written, &format!("{level:?}"));
    }
}

/// Every printable ASCII character a key may hold (all but `/ \ # ?`), and the strings that break escaping.
fn hostile_keys() -> Vec<String> {
    let punctuation: String = (b' '..=b'~').map(char::from).filter(|c| !c.is_ascii_alphanumeric()).collect();
    let mut keys: Vec<String> = punctuation.chars().filter(|c| !"/\\#?".contains(*c)).map(String::from).collect();
    keys.extend(
        [
            "",
            "'",
            "''",
            "O'Brien",
            "%",
            "%25",
            "%27",
            "50% off",
            "a+b",
            "a b",
            "+",
            "&$filter=x",
            "(PartitionKey='x')",
            "é",
            "日本語",
            "😀",
            "\u{FFFF}",
            "\u{10FFFF}",
            "tab-less\u{A0}nbsp",
        ]
        .map(String::from),
    );
    keys.push(punctuation.chars().filter(|c| !"/\\#?".contains(*c)).collect());
    let mut seen = std::collections::HashSet::new();
    keys.retain(|k| seen.insert(k.clone()));
    keys
}

/// Asserts two entities are equal, naming the first property that differs.
#[track_caller]
fn assert_same(read: &Entity, written: &Entity, context: &str) {
    assert_eq!((read.partition_key(), read.row_key()), (written.partition_key(), written.row_key()), "{context}");
    for (name, value) in written {
        assert_eq!(read.value(name), Some(value), "{context}: property {name}");
    }
    let extra: Vec<_> = read.iter().filter(|(n, _)| written.value(n).is_none()).collect();
    assert!(extra.is_empty(), "{context}: unexpected {extra:?}");
}

#[tokio::test]
async fn hostile_keys_reach_exactly_their_entity() {
    let azurite = azurite!();
    let table = azurite.table("Hostile").await;
    let keys = hostile_keys();
    for (i, key) in keys.iter().enumerate() {
        // The same hostile string as PartitionKey and RowKey; the index says which entity it is.
        let e = Entity::new(PartitionKey::new(key.clone()).unwrap(), RowKey::new(key.clone()).unwrap())
            .with("Index".parse().unwrap(), i as i32)
            .unwrap();
        table.insert(&e, None).await.unwrap_or_else(|err| panic!("insert {key:?}: {err}"));
    }
    for (i, key) in keys.iter().enumerate() {
        let (pk, rk) = (PartitionKey::new(key.clone()).unwrap(), RowKey::new(key.clone()).unwrap());
        let e: Entity = table.get(&pk, &rk, None).await.unwrap_or_else(|err| panic!("get {key:?}: {err}"));
        assert_eq!((e.partition_key().as_str(), e.row_key().as_str()), (key.as_str(), key.as_str()));
        assert_eq!(e.get::<i32>("Index").unwrap(), i as i32, "{key:?}");

        // The same string in a filter literal finds that entity and no other.
        let query = Query::new().filter(filter::PARTITION_KEY.eq(key.as_str()) & filter::ROW_KEY.eq(key.as_str()));
        let found: Vec<Entity> =
            table.query(&query, None).unwrap().try_collect().await.unwrap_or_else(|err| panic!("query {key:?}: {err}"));
        let found: Vec<i32> = found.iter().map(|e| e.get::<i32>("Index").unwrap()).collect();
        assert_eq!(found, [i as i32], "{key:?}");

        // Update and delete address it exactly too.
        let updated = Entity::new(pk.clone(), rk.clone()).with("Index".parse().unwrap(), -(i as i32)).unwrap();
        table.update(&updated, UpdateMode::Merge, None).await.unwrap_or_else(|err| panic!("update {key:?}: {err}"));
        table.delete_by_keys(&pk, &rk, None).await.unwrap_or_else(|err| panic!("delete {key:?}: {err}"));
        // Every other entity is still there, untouched.
        let left = all_entities(&table).await;
        assert_eq!(left.len(), keys.len() - i - 1, "after deleting {key:?}");
        assert!(left.iter().all(|e| e.get::<i32>("Index").unwrap() > i as i32));
    }
}

#[tokio::test]
async fn hostile_strings_in_filters_match_exactly() {
    let azurite = azurite!();
    let table = azurite.table("Filters").await;
    let values = hostile_keys();
    for (i, v) in values.iter().enumerate() {
        let e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(format!("{i:03}")).unwrap())
            .with("Name".parse().unwrap(), v.as_str())
            .unwrap();
        table.insert(&e, None).await.unwrap();
    }
    for (i, v) in values.iter().enumerate() {
        let query = Query::new().filter(Filter::property("Name").eq(v.as_str()));
        let page: Vec<Entity> =
            table.query(&query, None).unwrap().try_collect().await.unwrap_or_else(|err| panic!("{v:?}: {err}"));
        let rows: Vec<&str> = page.iter().map(|e| e.row_key().as_str()).collect();
        assert_eq!(rows, [format!("{i:03}")], "{v:?}");
        // `ne` is the exact complement.
        let query = Query::new().filter(Filter::property("Name").ne(v.as_str()));
        let rest: Vec<Entity> = table.query(&query, None).unwrap().try_collect().await.unwrap();
        assert_eq!(rest.len(), values.len() - 1, "{v:?}");
    }
}

fn if_match(if_match: impl Into<IfMatch>) -> Option<UpdateOptions<'static>> {
    Some(UpdateOptions { if_match: Some(if_match.into()), ..Default::default() })
}

#[tokio::test]
async fn a_stale_etag_is_refused_and_a_fresh_one_accepted() {
    let azurite = azurite!();
    let table = azurite.table("ETags").await;
    let e =
        Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap()).with("N".parse().unwrap(), 1).unwrap();
    let first = table.insert(&e, None).await.unwrap();

    let e2 = e.clone().with("N".parse().unwrap(), 2).unwrap();
    let second = table.update(&e2, UpdateMode::Replace, if_match(&first)).await.unwrap();
    assert_ne!(first, second);

    // The first ETag is stale now: update and delete are refused with 412, and nothing changes.
    let e3 = e.clone().with("N".parse().unwrap(), 3).unwrap();
    for mode in [UpdateMode::Merge, UpdateMode::Replace] {
        let err = table.update(&e3, mode, if_match(&first)).await.unwrap_err();
        let service = err.service().unwrap();
        assert_eq!((service.status(), service.code()), (412, Some("UpdateConditionNotSatisfied")), "{err}");
        assert_eq!(err.error_code(), Some(ErrorCode::UpdateConditionNotSatisfied));
    }
    let err = table.delete(&e, if_match(&first)).await.unwrap_err();
    assert!(err.is_precondition_failed(), "{err}");
    let stored: Entity = table.get(e.partition_key(), e.row_key(), None).await.unwrap();
    assert_eq!((stored.get::<i32>("N").unwrap(), stored.etag()), (2, Some(&second)));

    // The fresh ETag is accepted.
    let third = table.update(&e3, UpdateMode::Merge, if_match(second)).await.unwrap();
    table.delete(&e, if_match(third)).await.unwrap();
}

#[tokio::test]
async fn an_update_never_becomes_an_upsert() {
    let azurite = azurite!();
    let table = azurite.table("Upserts").await;
    let e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("missing").unwrap());
    for mode in [UpdateMode::Merge, UpdateMode::Replace] {
        let err = table.update(&e, mode, None).await.unwrap_err();
        assert!(err.is_not_found(), "{mode:?}: {err}");
    }
    let err = table.get::<Entity>(e.partition_key(), e.row_key(), None).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    // An upsert is the operation that creates.
    for mode in [UpdateMode::Merge, UpdateMode::Replace] {
        table.upsert(&e, mode, None).await.unwrap();
    }
    // An insert of an existing entity conflicts.
    let err = table.insert(&e, None).await.unwrap_err();
    let service = err.service().unwrap();
    assert_eq!((service.status(), service.code()), (409, Some("EntityAlreadyExists")));
}

#[tokio::test]
async fn merge_keeps_and_replace_drops_other_properties() {
    let azurite = azurite!();
    let table = azurite.table("Modes").await;
    let pk = PartitionKey::new("p").unwrap();
    let full = Entity::new(pk.clone(), RowKey::new("r").unwrap())
        .with("A".parse().unwrap(), 1)
        .unwrap()
        .with("B".parse().unwrap(), 2)
        .unwrap();
    table.insert(&full, None).await.unwrap();
    let only_a = Entity::new(pk.clone(), RowKey::new("r").unwrap()).with("A".parse().unwrap(), 10).unwrap();
    table.update(&only_a, UpdateMode::Merge, None).await.unwrap();
    let merged: Entity = table.reload(&full, None).await.unwrap();
    assert_eq!((merged.get::<i32>("A").unwrap(), merged.get::<i32>("B").unwrap()), (10, 2));
    table.update(&only_a, UpdateMode::Replace, None).await.unwrap();
    let replaced: Entity = table.reload(&full, None).await.unwrap();
    assert_eq!((replaced.get::<i32>("A").unwrap(), replaced.value("B")), (10, None));
}

/// `docs/rules.md` §9.4: a quote in a key must be doubled, then percent-encoded. Percent-encoding alone is read as
/// the end of the key literal (Azurite 3.35.0 answers 404, the service 400); the SDK's address reaches the
/// entity.
#[tokio::test]
async fn percent_encoding_alone_does_not_address_a_quoted_key() {
    let azurite = azurite!();
    let table = azurite.table("Quotes").await;
    let e = Entity::new(PartitionKey::new("O'Brien").unwrap(), RowKey::new("x").unwrap());
    table.insert(&e, None).await.unwrap();

    let sdk = azurite.requests().get(table.table(), e.partition_key(), e.row_key()).unwrap();
    assert!(sdk.uri().path().ends_with("(PartitionKey='O%27%27Brien',RowKey='x')"));
    let found: Entity = table.get(e.partition_key(), e.row_key(), None).await.unwrap();
    assert_eq!(found.partition_key().as_str(), "O'Brien");

    // The same request with the quote percent-encoded but not doubled, sent through the client's pipeline.
    let mut naive = sdk;
    let uri = naive.uri().to_string().replace("O%27%27Brien", "O%27Brien");
    *naive.uri_mut() = uri.parse().unwrap();
    let status = azurite.raw().send(naive).await.status().as_u16();
    assert!((400..500).contains(&status) && status != 403, "percent-encoding alone gave {status}");
}
