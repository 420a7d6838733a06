//! Property tests of the JSON wire format: every EDM type round-trips exactly (doubles bit for bit), at the
//! limits, through every metadata level; and no input makes the decoders panic.

use proptest::collection::vec;
use proptest::prelude::*;
use std::collections::BTreeMap;
use table_model::json::{decode_entity, decode_query, encode_entity, BodyWriter};
use table_model::limits::{BINARY_MAX_BYTES, DATETIME_MAX_TICKS, DATETIME_MIN_TICKS, STRING_MAX_UTF16};
use table_model::{
    DateTime, DecodeErrorKind, EdmType, EdmValue, EncodeErrorKind, Entity, PartitionKey, PropertyName, RowKey,
    ValueErrorKind,
};
use uuid::Uuid;

// ---------------------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------------------

/// Every kind of double: random bit patterns (NaN payloads included), subnormals of both signs, the special
/// values, the extremes, and integral values (which must keep a decimal point).
fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        (0u64..1 << 52).prop_map(f64::from_bits),
        (0u64..1 << 52).prop_map(|bits| -f64::from_bits(bits)),
        Just(f64::NAN),
        Just(-f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        Just(f64::MAX),
        Just(f64::MIN),
        Just(f64::MIN_POSITIVE),
        Just(f64::from_bits(1)),
        any::<i32>().prop_map(f64::from),
        any::<i64>().prop_map(|i| i as f64),
    ]
}

fn any_i64() -> impl Strategy<Value = i64> {
    prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX), Just(0), Just(-1), Just(i64::from(i32::MAX) + 1)]
}

fn any_datetime() -> impl Strategy<Value = DateTime> {
    prop_oneof![
        (DATETIME_MIN_TICKS..=DATETIME_MAX_TICKS).prop_map(|t| DateTime::from_ticks(t).unwrap()),
        Just(DateTime::MIN),
        Just(DateTime::MAX),
        // Whole seconds: the service trims trailing zeros, so these arrive with no fraction at all.
        (DATETIME_MIN_TICKS / 10_000_000..=DATETIME_MAX_TICKS / 10_000_000)
            .prop_map(|s| DateTime::from_ticks(s * 10_000_000).unwrap()),
    ]
}

fn any_value() -> impl Strategy<Value = EdmValue> {
    prop_oneof![
        vec(any::<u8>(), 0..48).prop_map(|b| EdmValue::try_from(b).unwrap()),
        any::<bool>().prop_map(EdmValue::Boolean),
        any_datetime().prop_map(EdmValue::DateTime),
        any_f64().prop_map(EdmValue::Double),
        any::<u128>().prop_map(|u| EdmValue::Guid(Uuid::from_u128(u))),
        any::<i32>().prop_map(EdmValue::Int32),
        any_i64().prop_map(EdmValue::Int64),
        any::<String>().prop_map(|s| EdmValue::try_from(s).unwrap()),
    ]
}

/// Valid property names, ASCII and not.
fn any_name() -> impl Strategy<Value = PropertyName> {
    prop_oneof!["[A-Za-z_][A-Za-z0-9_]{0,24}", r"[\p{Lu}\p{Ll}\p{Lo}_][\p{L}\p{Nd}\p{Mn}_]{0,8}", "[A-Za-z_]{250,255}",]
        .prop_filter_map("valid property name", |s| PropertyName::new(s).ok())
}

/// Valid keys: anything but `/ \ # ?` and the control characters, up to the 512-unit limit.
fn any_key() -> impl Strategy<Value = String> {
    prop_oneof![r"[^/\\#?\x00-\x1F\x7F-\x9F]{0,40}", "a{512}", "😀{256}", "[é😀]{0,300}", Just(String::new())]
        .prop_filter("valid key", |s| PartitionKey::new(s.as_str()).is_ok())
}

fn any_entity() -> impl Strategy<Value = Entity> {
    (any_key(), any_key(), vec((any_name(), any_value()), 0..24)).prop_map(|(pk, rk, properties)| {
        let mut e = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap());
        for (name, value) in properties {
            e.insert(name, value).unwrap();
        }
        e
    })
}

// ---------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------

/// The entity a round trip must give: every NaN becomes the canonical NaN (the wire form `"NaN"` has no sign
/// or payload), and the server metadata is dropped (never written).
fn expected_after_round_trip(e: &Entity) -> Entity {
    let mut out = Entity::new(e.partition_key().clone(), e.row_key().clone());
    for (name, value) in e {
        let value = match value {
            EdmValue::Double(d) if d.is_nan() => EdmValue::Double(f64::NAN),
            other => other.clone(),
        };
        out.insert(name.clone(), value).unwrap();
    }
    out
}

/// Keys and properties, ignoring the order of the properties.
fn by_name(e: &Entity) -> (String, String, BTreeMap<String, EdmValue>) {
    let props = e.iter().map(|(n, v)| (n.to_string(), v.clone())).collect();
    (e.partition_key().to_string(), e.row_key().to_string(), props)
}

fn hints_of(e: &Entity) -> BTreeMap<String, EdmType> {
    e.iter().map(|(n, v)| (n.to_string(), v.edm_type())).collect()
}

/// Whatever a decoder accepted is a valid entity: it encodes, and the body decodes to the same entity.
fn check_accepted(e: &Entity) -> Result<(), TestCaseError> {
    let body = encode_entity(e).map_err(|err| TestCaseError::fail(format!("re-encoding failed: {err}")))?;
    let again = decode_entity(body.as_bytes(), None).map_err(|err| TestCaseError::fail(format!("{err}")))?;
    prop_assert_eq!(again, expected_after_round_trip(e));
    Ok(())
}

fn round_trip(e: &Entity) -> Result<(), TestCaseError> {
    let body = encode_entity(e).map_err(|err| TestCaseError::fail(format!("{err}")))?;
    prop_assert_eq!(body.entity_size(), e.size());
    let decoded = decode_entity(body.as_bytes(), None).map_err(|err| TestCaseError::fail(format!("{err}")))?;
    prop_assert_eq!(decoded, expected_after_round_trip(e));
    Ok(())
}

fn single(name: &str, value: impl Into<EdmValue>) -> Entity {
    Entity::new(PartitionKey::empty(), RowKey::empty()).with(PropertyName::new(name).unwrap(), value.into()).unwrap()
}

// ---------------------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn entities_round_trip(e in any_entity()) {
        round_trip(&e)?;
    }

    /// The body in ASCII (what Azurite is sent, `docs/rules.md` §5.6) is pure ASCII and means exactly what the
    /// UTF-8 body means, to serde_json and to the crate's decoder.
    #[test]
    fn ascii_bodies_decode_the_same(e in any_entity()) {
        let body = encode_entity(&e).unwrap();
        let ascii = match body.clone().into_ascii() {
            Ok(ascii) => ascii,
            // Escapes take more room: a body near 1 MiB may not fit in ASCII.
            Err(err) => {
                let too_large = matches!(err.kind(), EncodeErrorKind::BodyTooLarge { size } if *size > 1024 * 1024);
                prop_assert!(too_large, "{}", err);
                return Ok(());
            }
        };
        prop_assert!(ascii.as_bytes().is_ascii());
        prop_assert_eq!(ascii.entity_size(), body.entity_size());
        if body.as_bytes().is_ascii() {
            prop_assert_eq!(&ascii, &body);
        }
        let a: serde_json::Value = serde_json::from_slice(ascii.as_bytes()).unwrap();
        let b: serde_json::Value = serde_json::from_slice(body.as_bytes()).unwrap();
        prop_assert_eq!(a, b);
        let decoded = decode_entity(ascii.as_bytes(), None).map_err(|err| TestCaseError::fail(format!("{err}")))?;
        prop_assert_eq!(decoded, decode_entity(body.as_bytes(), None).unwrap());
    }

    /// The same body with its annotations after the values (the order a sorted JSON map gives) decodes the same.
    #[test]
    fn annotations_after_values_decode_the_same(e in any_entity()) {
        let body = encode_entity(&e).unwrap();
        let sorted: serde_json::Value = serde_json::from_slice(body.as_bytes()).unwrap();
        let sorted = serde_json::to_vec(&sorted).unwrap();
        let decoded = decode_entity(&sorted, None).map_err(|err| TestCaseError::fail(format!("{err}")))?;
        prop_assert_eq!(by_name(&decoded), by_name(&expected_after_round_trip(&e)));
    }

    /// nometadata: the same body without any annotation, decoded with the entity's types as hints.
    #[test]
    fn nometadata_round_trips_with_hints(e in any_entity()) {
        let body = encode_entity(&e).unwrap();
        let mut json: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(body.as_bytes()).unwrap();
        json.retain(|k, _| !k.ends_with("@odata.type"));
        let page = serde_json::to_vec(&serde_json::json!({ "value": [json] })).unwrap();
        let hints = hints_of(&e);
        let decoded = decode_query(&page, Some(&hints)).map_err(|err| TestCaseError::fail(format!("{err}")))?;
        prop_assert_eq!(decoded.len(), 1);
        prop_assert_eq!(by_name(&decoded[0]), by_name(&expected_after_round_trip(&e)));
    }

    /// Doubles: finite values keep their bits exactly and are written with `.` or an exponent; NaN, the
    /// infinities and -0.0 keep their meaning.
    #[test]
    fn doubles_round_trip_bit_exactly(v in any_f64()) {
        let mut w = BodyWriter::new("", "");
        w.property_f64("D", v);
        let body = w.finish().unwrap();
        let text = body.as_str();
        let value_text = &text[text.rfind(r#""D":"#).unwrap() + 4..text.len() - 1];
        if v.is_finite() {
            prop_assert!(value_text.contains('.') || value_text.contains('e'), "{}", value_text);
            prop_assert_eq!(value_text.parse::<f64>().unwrap().to_bits(), v.to_bits());
        }
        let decoded = decode_entity(body.as_bytes(), None).unwrap().get::<f64>("D").unwrap();
        if v.is_nan() {
            prop_assert!(decoded.is_nan());
        } else {
            prop_assert_eq!(decoded.to_bits(), v.to_bits());
        }
    }

    #[test]
    fn int64_round_trips(v in any_i64()) {
        round_trip(&single("N", v))?;
        let body = encode_entity(&single("N", v)).unwrap();
        let expected_tail = format!(r#""N@odata.type":"Edm.Int64","N":"{v}"}}"#);
        prop_assert!(body.as_str().ends_with(&expected_tail), "{}", body.as_str());
    }

    #[test]
    fn datetimes_round_trip(t in any_datetime()) {
        round_trip(&single("T", t))?;
        // The service trims trailing zeros; every trimmed form reads back the same.
        let full = t.to_string();
        let trimmed = full.trim_end_matches('Z').trim_end_matches('0').trim_end_matches('.');
        let json = format!(r#"{{"PartitionKey":"","RowKey":"","T@odata.type":"Edm.DateTime","T":"{trimmed}Z"}}"#);
        prop_assert_eq!(decode_entity(json.as_bytes(), None).unwrap().get::<DateTime>("T").unwrap(), t);
    }

    #[test]
    fn guids_round_trip_in_any_case(u in any::<u128>()) {
        let id = Uuid::from_u128(u);
        round_trip(&single("G", id))?;
        let upper = id.hyphenated().to_string().to_uppercase();
        let json = format!(r#"{{"PartitionKey":"","RowKey":"","G@odata.type":"Edm.Guid","G":"{upper}"}}"#);
        prop_assert_eq!(decode_entity(json.as_bytes(), None).unwrap().get::<Uuid>("G").unwrap(), id);
    }

    #[test]
    fn random_strings_round_trip(s in any::<String>()) {
        round_trip(&single("S", EdmValue::try_from(s).unwrap()))?;
    }

    #[test]
    fn names_and_keys_round_trip(pk in any_key(), rk in any_key(), name in any_name()) {
        let e = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap()).with(name, 1).unwrap();
        round_trip(&e)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn binary_at_exactly_64_kib_round_trips(bytes in vec(any::<u8>(), BINARY_MAX_BYTES)) {
        let e = single("B", EdmValue::try_from(bytes.clone()).unwrap());
        round_trip(&e)?;
        let mut over = bytes;
        over.push(0);
        let mut w = BodyWriter::new("", "");
        w.property_bytes("B", &over);
        let err = w.finish().unwrap_err();
        let too_large = matches!(
            err.kind(),
            EncodeErrorKind::Value(v) if v.kind() == &ValueErrorKind::BinaryTooLarge { len: BINARY_MAX_BYTES + 1 }
        );
        prop_assert!(too_large, "{}", err);
    }

    /// Random characters (surrogate pairs included) padded to exactly 32,768 UTF-16 code units.
    #[test]
    fn string_at_exactly_32768_utf16_units_round_trips(chars in vec(any::<char>(), 0..6000), odd in any::<bool>()) {
        let mut s = String::new();
        let mut units = 0;
        for c in chars {
            if units + c.len_utf16() > STRING_MAX_UTF16 - 1 {
                break;
            }
            units += c.len_utf16();
            s.push(c);
        }
        while units + 2 <= STRING_MAX_UTF16 - usize::from(odd) {
            s.push('😀');
            units += 2;
        }
        while units < STRING_MAX_UTF16 {
            s.push('é');
            units += 1;
        }
        prop_assert_eq!(s.encode_utf16().count(), STRING_MAX_UTF16);
        round_trip(&single("S", EdmValue::try_from(s.as_str()).unwrap()))?;

        let mut w = BodyWriter::new("", "");
        w.property_str("S", &format!("{s}a"));
        let err = w.finish().unwrap_err();
        let too_long = matches!(
            err.kind(),
            EncodeErrorKind::Value(v) if v.kind() == &ValueErrorKind::StringTooLong { utf16_len: STRING_MAX_UTF16 + 1 }
        );
        prop_assert!(too_long, "{}", err);
        let json = format!(r#"{{"PartitionKey":"","RowKey":"","S":{}}}"#, serde_json::to_string(&format!("{s}😀")).unwrap());
        prop_assert!(decode_entity(json.as_bytes(), None).is_err());
    }
}

// ---------------------------------------------------------------------------------------------------------
// No input makes a decoder panic
// ---------------------------------------------------------------------------------------------------------

/// Pieces of JSON and of the wire format that mutations splice in.
const TOKENS: &[&str] = &[
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "null",
    "true",
    "1",
    "-0",
    "1e999",
    "2147483648",
    "1.5",
    "\"NaN\"",
    "\"INF\"",
    "\"x\"",
    "\"@odata.type\"",
    "\"Edm.Int64\"",
    "\"Edm.Double\"",
    "\"Edm.Decimal\"",
    "\"odata.etag\"",
    "\"PartitionKey\"",
    "\"RowKey\"",
    "\"Timestamp\"",
    "\"value\"",
    "\\u0000",
    "\\ud800",
    "\u{FFFF}",
    "😀",
    "\u{0}",
];

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, byte: u8 },
    Insert { at: usize, token: usize },
    Delete { at: usize, len: usize },
    Truncate { at: usize },
}

fn any_mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Flip { at, byte }),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(at, token)| Mutation::Insert { at, token }),
        (any::<usize>(), 1usize..8).prop_map(|(at, len)| Mutation::Delete { at, len }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let n = bytes.len() + 1;
        match *m {
            Mutation::Flip { at, byte } => {
                if !bytes.is_empty() {
                    let i = at % bytes.len();
                    bytes[i] = byte;
                }
            }
            Mutation::Insert { at, token } => {
                let i = at % n;
                bytes.splice(i..i, TOKENS[token].bytes());
            }
            Mutation::Delete { at, len } => {
                let i = at % n;
                let end = (i + len).min(bytes.len());
                bytes.drain(i.min(end)..end);
            }
            Mutation::Truncate { at } => bytes.truncate(at % n),
        }
    }
    bytes
}

/// Feeds input to both decoders, with and without hints; every accepted entity must re-encode and decode equal.
fn decode_everything(input: &[u8]) -> Result<(), TestCaseError> {
    let hints = |name: &str| match name.len() % 4 {
        0 => Some(EdmType::Int64),
        1 => Some(EdmType::Double),
        2 => Some(EdmType::Guid),
        _ => None,
    };
    // Errors are fine; only what was accepted is checked further.
    for e in [decode_entity(input, None), decode_entity(input, Some(&hints))].into_iter().flatten() {
        check_accepted(&e)?;
    }
    for page in [decode_query(input, None), decode_query(input, Some(&hints))].into_iter().flatten() {
        for e in &page {
            check_accepted(e)?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn arbitrary_bytes_never_panic(input in vec(any::<u8>(), 0..256)) {
        decode_everything(&input)?;
    }

    #[test]
    fn arbitrary_text_never_panics(input in r#"[{}\[\]":,@.a-zA-Z0-9 \\-]{0,200}"#) {
        decode_everything(input.as_bytes())?;
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mutated_bodies_never_panic(e in any_entity(), mutations in vec(any_mutation(), 1..6)) {
        let body = encode_entity(&e).unwrap().into_bytes();
        let page = [br#"{"odata.metadata":"m","value":["#.as_slice(), &body, b",", &body, b"]}"].concat();
        decode_everything(&mutate(body, &mutations))?;
        decode_everything(&mutate(page, &mutations))?;
    }
}

#[test]
fn mutated_documented_payloads_never_panic() {
    let page = br#"{"odata.metadata":"https://a.table.core.windows.net/$metadata#T","value":[
        {"odata.type":"a.T","odata.id":"i","odata.etag":"W/\"0x5B168C7B6E589D2\"","odata.editLink":"e",
         "PartitionKey":"Customer","RowKey":"Name","Timestamp@odata.type":"Edm.DateTime",
         "Timestamp":"2013-08-22T00:20:16.3134645Z","Age":23,"AmountDue":200.23,
         "CustomerCode@odata.type":"Edm.Guid","CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833",
         "NumberOfOrders@odata.type":"Edm.Int64","NumberOfOrders":"255","Photo@odata.type":"Edm.Binary",
         "Photo":"AQIDBA==","R@odata.type":"Edm.Double","R":"NaN"}]}"#;
    assert_eq!(decode_query(page, None).unwrap().len(), 1);
    // Every single-byte deletion and every token at every position.
    for i in 0..page.len() {
        let mut deleted = page.to_vec();
        deleted.remove(i);
        decode_everything(&deleted).unwrap();
        for token in TOKENS {
            let mut inserted = page.to_vec();
            inserted.splice(i..i, token.bytes());
            decode_everything(&inserted).unwrap();
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Large objects: duplicates, the property limit and far annotations against a model
// ---------------------------------------------------------------------------------------------------------

/// One member of a generated entity object: a property from a pool of names that often repeat, with a value or
/// `null`, and maybe its `Edm.Int64` annotation just before it or at the end of the object.
#[derive(Debug, Clone)]
struct Generated {
    name: usize,
    null: bool,
    annotation: Option<bool>,
}

/// Up to `max` members, each named after its position or, rarely, repeating an earlier member's name, so that
/// objects both reach the limit and hold duplicates.
fn any_members(max: usize) -> impl Strategy<Value = Vec<Generated>> {
    let member = (
        any::<u16>(),
        prop::bool::weighted(0.003),
        prop::bool::weighted(0.3),
        prop::option::weighted(0.2, any::<bool>()),
    );
    vec(member, 0..max).prop_map(|members| {
        let name = |i: usize, earlier: u16, repeat: bool| if repeat && i > 0 { usize::from(earlier) % i } else { i };
        members
            .into_iter()
            .enumerate()
            .map(|(i, (earlier, repeat, null, annotation))| Generated {
                name: name(i, earlier, repeat),
                null,
                annotation,
            })
            .collect()
    })
}

/// What the decoder must answer, from the rules alone (`docs/rules.md` §4.1 and §5.5): reading in order, the
/// first property name read twice is a duplicate, and the 253rd non-null value is too many, both found as they
/// are read; otherwise the entity has the non-null properties. (Each property has at most one annotation, so
/// once no name repeats, no annotation does, and each far annotation finds its property.)
fn expected(members: &[Generated]) -> Result<usize, DecodeErrorKind> {
    let mut names = std::collections::HashSet::new();
    let mut count = 0;
    for m in members {
        if !names.insert(m.name) {
            return Err(DecodeErrorKind::DuplicateMember { name: format!("P{}", m.name) });
        }
        if !m.null {
            count += 1;
            if count > 252 {
                return Err(DecodeErrorKind::TooManyProperties { count });
            }
        }
    }
    Ok(count)
}

fn object(members: &[Generated]) -> String {
    let mut json = String::from(r#"{"PartitionKey":"p","RowKey":"r""#);
    for m in members {
        if m.annotation == Some(true) {
            json += &format!(r#","P{}@odata.type":"Edm.Int64""#, m.name);
        }
        json += &if m.null { format!(r#","P{}":null"#, m.name) } else { format!(r#","P{}":"{}""#, m.name, m.name) };
    }
    for m in members.iter().filter(|m| m.annotation == Some(false)) {
        json += &format!(r#","P{}@odata.type":"Edm.Int64""#, m.name);
    }
    json + "}"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Objects of up to 600 members (bounded, so no case takes long): the duplicate check, the limit checked
    /// while reading and the pairing of far annotations agree with the model, whatever the size.
    #[test]
    fn large_objects_follow_the_rules(members in any_members(600)) {
        let json = object(&members);
        let got = decode_entity(json.as_bytes(), None);
        match expected(&members) {
            Ok(count) => prop_assert_eq!(got.map(|e| e.len()), Ok(count)),
            Err(kind) => prop_assert_eq!(got.map_err(|e| e.kind().clone()), Err(kind)),
        }
    }
}
