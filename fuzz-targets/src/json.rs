//! Entities and query pages, dynamic ([`decode_entity`], [`decode_query`]) and typed (`#[derive(TableEntity)]`
//! structs' `from_json` and `from_json_query`), each re-encoded and read again at every metadata level.
//!
//! Layer: targets.

use serde_json::{Map, Value};
use std::cmp::Reverse;
use std::collections::HashMap;
use std::fmt::Debug;
use table_model::json::{decode_entity, decode_query, encode_entity, TypeHints};
use table_model::{
    DateTime, DecodeError, ETag, EdmType, EdmValue, EncodeError, EncodeErrorKind, Entity, TableEntity, TableEnum,
    TableProperties,
};
use uuid::Uuid;

/// The server-set members a full-metadata body gets.
const TIMESTAMP: &str = "2013-08-22T00:20:16.3134645Z";
const ETAG: &str = "W/\"datetime'2013-08-22T00%3A20%3A16.3134645Z'\"";

/// Decodes the bytes as a single-entity response, without hints and with hints drawn from the names, and
/// checks the round trips of whatever decodes.
pub fn entity_json(data: &[u8]) {
    if let Ok(entity) = decode_entity(data, None) {
        entity_round_trip(&entity);
    }
    if let Ok(entity) = decode_entity(data, Some(&hints())) {
        entity_round_trip(&entity);
    }
}

/// Decodes the bytes as a query page, and checks each entity's round trips and the page's.
pub fn query_json(data: &[u8]) {
    for hints in [None, Some(&hints() as &dyn TypeHints)] {
        let Ok(entities) = decode_query(data, hints) else { continue };
        let mut bodies = Vec::new();
        for entity in &entities {
            if let Some(body) = entity_round_trip(entity) {
                bodies.push(body);
            }
        }
        if bodies.len() == entities.len() {
            // The page written again from the encoded entities reads back to the same entities.
            let page = format!(r#"{{"odata.metadata":"m","value":[{}]}}"#, bodies.join(","));
            let again =
                decode_query(page.as_bytes(), None).unwrap_or_else(|e| panic!("a page of encoded entities: {e}"));
            let expected: Vec<Entity> = entities.iter().map(without_server_metadata).collect();
            assert_eq!(again, expected, "a page of re-encoded entities");
        }
    }
}

/// Decodes the bytes into each of the derived structs below, and checks their round trips.
pub fn typed_entity_json(data: &[u8]) {
    typed_round_trip(Reading::from_json(data));
    typed_round_trip(Event::from_json(data));
    typed_round_trip(Keyed::from_json(data));
}

/// Decodes the bytes as a query page of each of the derived structs below, and checks their round trips.
pub fn typed_query_json(data: &[u8]) {
    for reading in Reading::from_json_query(data).into_iter().flatten() {
        typed_round_trip(Ok(reading));
    }
    for event in Event::from_json_query(data).into_iter().flatten() {
        typed_round_trip(Ok(event));
    }
    for keyed in Keyed::from_json_query(data).into_iter().flatten() {
        typed_round_trip(Ok(keyed));
    }
}

/// Hints for every name, drawn from the name itself, so that the fuzzer reaches the typing of unannotated
/// values by hints (how `nometadata` responses are read) for every type.
fn hints() -> impl Fn(&str) -> Option<EdmType> {
    |name: &str| {
        let pick = name.bytes().fold(name.len(), |acc, b| acc.wrapping_mul(31).wrapping_add(usize::from(b)));
        // Two names in ten get no hint.
        EdmType::ALL.get(pick % (EdmType::ALL.len() + 2)).copied()
    }
}

fn without_server_metadata(entity: &Entity) -> Entity {
    let mut entity = entity.clone();
    entity.set_server_metadata(None, None);
    entity
}

/// Whether an encoding error is one that a decoded value may rightly get: a response is read without the
/// request limits on the size of the JSON body (and, for a struct, of the entity).
fn is_size_limit(e: &EncodeError) -> bool {
    matches!(e.kind(), EncodeErrorKind::BodyTooLarge { .. } | EncodeErrorKind::EntityTooLarge { .. })
}

/// Re-encodes a decoded entity and reads it back at the three metadata levels; returns the body, or `None`
/// when the body is over the 1 MiB request limit.
fn entity_round_trip(entity: &Entity) -> Option<String> {
    let expected = without_server_metadata(entity);
    let body = match encode_entity(&expected) {
        Ok(body) => body.as_str().to_owned(),
        Err(e) if matches!(e.kind(), EncodeErrorKind::BodyTooLarge { .. }) => return None,
        Err(e) => panic!("a decoded entity does not encode: {e}\n{entity:?}"),
    };
    let read = |json: &[u8], hints: Option<&dyn TypeHints>| {
        decode_entity(json, hints).unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(json)))
    };
    assert_eq!(read(body.as_bytes(), None), expected, "minimal metadata: {body}");
    let types: HashMap<String, EdmType> = expected.iter().map(|(n, v)| (n.to_string(), v.edm_type())).collect();
    let none = relevel(body.as_bytes(), None);
    assert_eq!(values(&read(&none, Some(&types))), values(&expected), "no metadata, typed by hints");
    let full = relevel(body.as_bytes(), Some(&types));
    let mut with_server_metadata = expected.clone();
    with_server_metadata
        .set_server_metadata(Some(DateTime::parse(TIMESTAMP).expect("a timestamp")), Some(ETag::new(ETAG)));
    assert_eq!(values(&read(&full, None)), values(&with_server_metadata), "full metadata");
    Some(body)
}

/// An entity's keys, `Timestamp`, ETag and properties.
type Values = (String, String, Option<DateTime>, Option<ETag>, Vec<(String, EdmValue)>);

/// What an entity holds, properties in name order: the bodies [`relevel`] writes order members by name.
fn values(entity: &Entity) -> Values {
    let mut properties: Vec<(String, EdmValue)> = entity.iter().map(|(n, v)| (n.to_string(), v.clone())).collect();
    properties.sort_by(|a, b| a.0.cmp(&b.0));
    let (pk, rk) = (entity.partition_key().to_string(), entity.row_key().to_string());
    (pk, rk, entity.timestamp(), entity.etag().cloned(), properties)
}

/// A body written by the encoder (minimal metadata) at another level: without any annotation (`types` is
/// `None`), or with an annotation on every property and the members a full-metadata response adds.
fn relevel(body: &[u8], types: Option<&HashMap<String, EdmType>>) -> Vec<u8> {
    let members = match serde_json::from_slice(body) {
        Ok(Value::Object(members)) => members,
        other => panic!("an encoded body is a JSON object, found {other:?}"),
    };
    let mut out: Map<String, Value> = members.into_iter().filter(|(name, _)| !name.ends_with("@odata.type")).collect();
    if let Some(types) = types {
        for (name, edm_type) in types {
            out.insert(format!("{name}@odata.type"), Value::String(edm_type.to_string()));
        }
        let full = [
            ("odata.type", "account.Table"),
            ("odata.id", "https://account.table.core.windows.net/Table(PartitionKey='p',RowKey='r')"),
            ("odata.editLink", "Table(PartitionKey='p',RowKey='r')"),
            ("odata.etag", ETAG),
            ("Timestamp@odata.type", "Edm.DateTime"),
            ("Timestamp", TIMESTAMP),
        ];
        for (name, value) in full {
            out.insert(name.to_owned(), Value::String(value.to_owned()));
        }
    }
    serde_json::to_vec(&Value::Object(out)).expect("a JSON value serializes")
}

/// A derived struct's server-set fields, which are read but never written.
trait ServerFields: Sized {
    fn set_server_fields(&mut self, timestamp: Option<DateTime>, etag: Option<ETag>);
}

/// Re-encodes a decoded struct and reads it back at the three metadata levels. Values compare by their
/// `Debug` form, which tells `-0.0` from `0.0` and calls every NaN (the wire has only one) equal.
fn typed_round_trip<T: TableEntity + ServerFields + Debug + Clone>(decoded: Result<T, DecodeError>) {
    let Ok(mut value) = decoded else { return };
    value.set_server_fields(None, None);
    let expected = format!("{value:?}");
    let body = match value.to_json() {
        Ok(body) => body.as_str().to_owned(),
        Err(e) if is_size_limit(&e) => return,
        Err(e) => panic!("a decoded struct does not encode: {e}\n{expected}"),
    };
    let read = |json: &[u8]| {
        let value = T::from_json(json).unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(json)));
        format!("{value:?}")
    };
    assert_eq!(read(body.as_bytes()), expected, "minimal metadata: {body}");
    assert_eq!(read(&relevel(body.as_bytes(), None)), expected, "no metadata, typed by the schema");
    let dynamic = decode_entity(body.as_bytes(), Some(&T::SCHEMA)).unwrap_or_else(|e| panic!("{e}: {body}"));
    let types: HashMap<String, EdmType> = dynamic.iter().map(|(n, v)| (n.to_string(), v.edm_type())).collect();
    let mut with_server_fields = value.clone();
    with_server_fields.set_server_fields(Some(DateTime::parse(TIMESTAMP).expect("a timestamp")), Some(ETag::new(ETAG)));
    assert_eq!(read(&relevel(body.as_bytes(), Some(&types))), format!("{with_server_fields:?}"), "full metadata");
}

/// A stored enum.
#[derive(TableEnum, Debug, Clone, Copy, PartialEq)]
#[table(rename_all = "snake_case")]
enum Level {
    Low,
    High,
    #[table(rename = "crit")]
    Critical,
}

/// A flattened group of properties.
#[derive(TableProperties, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Place {
    city: String,
    zip: Option<String>,
    lat: f64,
}

/// Every EDM type, optional fields, an enum, a flattened group, a JSON property, a default, a widened field
/// and the server fields.
#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Reading {
    #[table(partition_key)]
    device: String,
    #[table(row_key)]
    seq: i64,
    value: f64,
    ratio: f32,
    count: i64,
    small: i8,
    port: u16,
    big: u32,
    ok: bool,
    id: Uuid,
    at: DateTime,
    when: Option<chrono::DateTime<chrono::Utc>>,
    blob: Option<Vec<u8>>,
    note: Option<String>,
    level: Option<Level>,
    #[table(flatten, prefix = "Site")]
    site: Place,
    #[table(json)]
    tags: Vec<String>,
    #[table(default)]
    added: i64,
    #[table(edm = "Int64")]
    widened: i32,
    #[table(timestamp)]
    ts: Option<DateTime>,
    #[table(etag)]
    etag: Option<ETag>,
}

/// Unique time keys: a reverse-chronological RowKey with a tie-breaker field.
#[derive(TableEntity, Debug, Clone, PartialEq)]
struct Event {
    #[table(tie_breaker)]
    seq: u32,
    #[table(partition_key)]
    source: String,
    #[table(row_key, reverse_chronological, unique)]
    at: DateTime,
    message: String,
    #[table(etag)]
    etag: Option<ETag>,
}

/// Sortable keys of other types, and no unknown property allowed.
#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(deny_unknown_properties)]
struct Keyed {
    #[table(partition_key)]
    shard: Reverse<u32>,
    #[table(row_key)]
    id: Uuid,
    weight: Option<f64>,
    #[table(timestamp)]
    ts: Option<chrono::DateTime<chrono::Utc>>,
}

impl ServerFields for Reading {
    fn set_server_fields(&mut self, timestamp: Option<DateTime>, etag: Option<ETag>) {
        (self.ts, self.etag) = (timestamp, etag);
    }
}

impl ServerFields for Event {
    fn set_server_fields(&mut self, _: Option<DateTime>, etag: Option<ETag>) {
        self.etag = etag;
    }
}

impl ServerFields for Keyed {
    fn set_server_fields(&mut self, timestamp: Option<DateTime>, _: Option<ETag>) {
        self.ts = timestamp.map(DateTime::to_chrono);
    }
}
