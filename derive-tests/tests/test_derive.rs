//! Round trips and read errors of derived entities, through `Entity`.

use table_model::{
    DateTime, ETag, EdmBinary, EdmString, EdmType, EdmValue, Entity, EntityErrorKind, KeyEncoding, KeySource,
    NamedTable, PartitionKey, Property, RowKey, TableEntity, TableEnum, TableName, TableProperties,
};
use uuid::Uuid;

#[derive(TableEnum, Debug, Clone, Copy, PartialEq)]
#[table(rename_all = "snake_case")]
enum Status {
    Pending,
    InTransit,
    #[table(rename = "done")]
    Delivered,
}

#[derive(TableProperties, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Geo {
    lat: f64,
    lon: f64,
}

#[derive(TableProperties, Debug, Clone, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Address {
    city: String,
    zip: Option<String>,
    #[table(flatten)] // nested group: prefix `Geo`
    geo: Geo,
}

fn seven() -> i64 {
    7
}

/// Every attribute and every EDM type.
#[derive(TableEntity, Debug, Clone, PartialEq)]
#[table(name = "Orders", rename_all = "PascalCase")]
struct Order {
    #[table(partition_key)]
    customer: String,
    #[table(row_key, reverse_chronological)]
    placed: chrono::DateTime<chrono::Utc>,
    total: f64,
    ratio: f32,
    #[table(rename = "Qty")]
    quantity: i32,
    small: i8,
    medium: i16,
    byte: u8,
    port: u16,
    count: u32,
    big: i64,
    paid: bool,
    id: Uuid,
    blob: Vec<u8>,
    edm_blob: EdmBinary,
    edm_text: EdmString,
    when: DateTime,
    dynamic: EdmValue,
    note: Option<String>,
    maybe_count: Option<i64>,
    status: Status,
    maybe_status: Option<Status>,
    #[table(flatten)]
    shipping: Address,
    #[table(flatten, prefix = "Bill")]
    billing: Address,
    #[table(json)]
    tags: Vec<String>,
    #[table(default)]
    added_later: i64,
    #[table(default = "seven")]
    lucky: i64,
    #[table(edm = "Int64")]
    widened: i32,
    #[table(edm = "Double")]
    as_double: Option<i16>,
    #[table(timestamp)]
    ts: Option<DateTime>,
    #[table(etag)]
    etag: Option<ETag>,
    #[table(skip)]
    cache: Vec<u8>,
}

fn instant(secs: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(secs, 123_456_700).unwrap()
}

fn order() -> Order {
    let address = |city: &str| Address { city: city.into(), zip: None, geo: Geo { lat: 59.9, lon: 10.7 } };
    Order {
        customer: "c42".into(),
        placed: instant(1_700_000_000),
        total: 99.5,
        ratio: 0.25,
        quantity: -3,
        small: i8::MIN,
        medium: i16::MAX,
        byte: 255,
        port: 65_535,
        count: u32::MAX,
        big: i64::MIN,
        paid: true,
        id: Uuid::from_u128(0x1234),
        blob: vec![0, 1, 255],
        edm_blob: EdmBinary::new(vec![9; 3]).unwrap(),
        edm_text: EdmString::new("édm").unwrap(),
        when: DateTime::MAX,
        dynamic: EdmValue::Guid(Uuid::max()),
        note: Some("leave at door".into()),
        maybe_count: None,
        status: Status::InTransit,
        maybe_status: Some(Status::Delivered),
        shipping: address("Oslo"),
        billing: Address { zip: Some("0150".into()), ..address("Bergen") },
        tags: vec!["gift".into(), "fragile".into()],
        added_later: 5,
        lucky: 8,
        widened: -7,
        as_double: Some(-2),
        ts: None,
        etag: None,
        cache: Vec::new(),
    }
}

#[test]
fn round_trip_through_entity() {
    let o = order();
    let e = o.to_entity().unwrap();
    assert_eq!(e.partition_key(), "c42");
    // Reverse-chronological: DateTime.MaxValue.Ticks - ticks, 19 digits.
    let ticks = DateTime::from_chrono(o.placed).unwrap().ticks();
    assert_eq!(e.row_key().as_str(), format!("{:019}", table_model::limits::DATETIME_MAX_TICKS - ticks));
    let expect = |name: &str, v: EdmValue| assert_eq!(e.value(name), Some(&v), "{name}");
    expect("Total", EdmValue::Double(99.5));
    expect("Ratio", EdmValue::Double(0.25));
    expect("Qty", EdmValue::Int32(-3));
    expect("Small", EdmValue::Int32(-128));
    expect("Byte", EdmValue::Int32(255));
    expect("Count", EdmValue::Int64(4_294_967_295));
    expect("Big", EdmValue::Int64(i64::MIN));
    expect("Paid", EdmValue::Boolean(true));
    expect("Id", EdmValue::Guid(Uuid::from_u128(0x1234)));
    expect("Blob", EdmValue::try_from(vec![0u8, 1, 255]).unwrap());
    expect("When", EdmValue::DateTime(DateTime::MAX));
    expect("Dynamic", EdmValue::Guid(Uuid::max()));
    expect("Status", EdmValue::try_from("in_transit").unwrap());
    expect("MaybeStatus", EdmValue::try_from("done").unwrap());
    expect("ShippingCity", EdmValue::try_from("Oslo").unwrap());
    expect("ShippingGeoLat", EdmValue::Double(59.9));
    expect("BillZip", EdmValue::try_from("0150").unwrap());
    expect("Tags", EdmValue::try_from(r#"["gift","fragile"]"#).unwrap());
    expect("Widened", EdmValue::Int64(-7));
    expect("AsDouble", EdmValue::Double(-2.0));
    // None, skip, timestamp and etag are not stored; the keys are not properties.
    for absent in ["MaybeCount", "ShippingZip", "Cache", "Ts", "Etag", "Timestamp", "Customer", "Placed"] {
        assert_eq!(e.value(absent), None, "{absent}");
    }
    assert_eq!(e.len(), 31);

    let back = Order::from_entity(e).unwrap();
    // chrono keeps nanoseconds; the row key keeps 100 ns ticks (here the value is whole ticks).
    assert_eq!(back, o);
}

#[test]
fn server_metadata_is_read_never_written() {
    let mut e = order().to_entity().unwrap();
    let ts: DateTime = "2024-01-02T03:04:05.1234567Z".parse().unwrap();
    e.set_server_metadata(Some(ts), Some(ETag::new("W/\"0x1\"")));
    let back = Order::from_entity(e).unwrap();
    assert_eq!(back.ts, Some(ts));
    assert_eq!(back.etag, Some(ETag::new("W/\"0x1\"")));
    let again = back.to_entity().unwrap();
    assert_eq!(again.timestamp(), None);
    assert_eq!(again.etag(), None);
}

#[test]
fn absent_properties() {
    let mut e = order().to_entity().unwrap();
    for name in ["AddedLater", "Lucky", "Note", "MaybeStatus", "AsDouble", "BillZip"] {
        e.remove(name).unwrap();
    }
    let back = Order::from_entity(e.clone()).unwrap();
    assert_eq!((back.added_later, back.lucky), (0, 7));
    assert_eq!((back.note, back.maybe_status, back.as_double, back.billing.zip), (None, None, None, None));

    for required in ["Total", "Tags", "BillGeoLon", "Status", "Widened"] {
        let mut missing = e.clone();
        missing.remove(required).unwrap();
        let err = Order::from_entity(missing).unwrap_err();
        assert_eq!(err.kind(), &EntityErrorKind::MissingProperty { property: required.to_owned() });
        assert_eq!(err.to_string(), format!("missing property `{required}`"));
    }
}

fn replaced(name: &str, value: impl Into<EdmValue>) -> Entity {
    let mut e = order().to_entity().unwrap();
    e.insert(name.parse().unwrap(), value.into()).unwrap();
    e
}

#[test]
fn type_mismatches_name_the_property() {
    let err = Order::from_entity(replaced("Total", true)).unwrap_err();
    assert_eq!(err.to_string(), "property `Total`: expected Edm.Double, found Edm.Boolean");
    assert_eq!(err.property(), Some("Total"));
    let err = Order::from_entity(replaced("Qty", 5i64)).unwrap_err();
    assert_eq!(err.to_string(), "property `Qty`: expected Edm.Int32, found Edm.Int64");
    let err = Order::from_entity(replaced("Byte", 256)).unwrap_err();
    assert_eq!(err.to_string(), "property `Byte`: value 256 does not fit in `u8`");
    let err = Order::from_entity(replaced("ShippingGeoLat", EdmValue::try_from("north").unwrap())).unwrap_err();
    assert_eq!(err.to_string(), "property `ShippingGeoLat`: expected Edm.Double, found Edm.String");
    let err = Order::from_entity(replaced("Widened", i64::from(i32::MAX) + 1)).unwrap_err();
    assert_eq!(err.to_string(), "property `Widened`: value 2147483648 does not fit in `Edm.Int32`");
    let err = Order::from_entity(replaced("Tags", EdmValue::try_from("[1,").unwrap())).unwrap_err();
    assert!(err.to_string().starts_with("property `Tags`: invalid JSON: "), "{err}");
}

#[test]
fn lossless_widenings_are_accepted() {
    // Int32 into i64 and f64 fields: the JavaScript SDK writes integral doubles as Int32.
    let mut e = replaced("Total", 100);
    e.insert("Big".parse().unwrap(), 3).unwrap();
    e.insert("Widened".parse().unwrap(), 4).unwrap();
    let back = Order::from_entity(e).unwrap();
    assert_eq!((back.total, back.big, back.widened), (100.0, 3, 4));
}

#[test]
fn unknown_enum_variant_names_property_and_value() {
    let err = Order::from_entity(replaced("Status", EdmValue::try_from("Lost").unwrap())).unwrap_err();
    assert_eq!(
        err.to_string(),
        "property `Status`: unknown variant `Lost` of `Status`; expected one of `pending`, `in_transit`, `done`"
    );
}

#[test]
fn unknown_properties_are_ignored_by_default() {
    let e = replaced("SomethingNew", 1);
    assert_eq!(Order::from_entity(e).unwrap(), order());
}

#[derive(TableEntity, Debug, PartialEq)]
#[table(partition_key = "config", deny_unknown_properties)]
struct Setting {
    #[table(row_key)]
    name: String,
    value: String,
}

#[test]
fn constant_keys_and_deny_unknown() {
    let s = Setting { name: "retries".into(), value: "3".into() };
    let mut e = s.to_entity().unwrap();
    assert_eq!((e.partition_key().as_str(), e.row_key().as_str()), ("config", "retries"));
    assert_eq!(Setting::from_entity(e.clone()).unwrap(), s);
    e.insert("extra".parse().unwrap(), 1).unwrap();
    let err = Setting::from_entity(e).unwrap_err();
    assert_eq!(err.kind(), &EntityErrorKind::UnknownProperty { property: "extra".into() });
    assert_eq!(err.property(), Some("extra"));
    assert_eq!(err.to_string(), "property `extra`: unknown property; the struct has #[table(deny_unknown_properties)]");
    let other = Entity::new(PartitionKey::new("other").unwrap(), RowKey::new("retries").unwrap())
        .with("value".parse().unwrap(), "3")
        .unwrap();
    let err = Setting::from_entity(other).unwrap_err();
    assert_eq!(err.to_string(), "property `PartitionKey`: expected the constant key `config`, found `other`");
}

#[derive(TableEntity, Debug, PartialEq)]
struct Keys<K> {
    #[table(partition_key)]
    tenant: Uuid,
    #[table(row_key)]
    seq: K,
}

#[test]
fn integer_uuid_and_generic_keys() {
    let k = Keys { tenant: Uuid::from_u128(7), seq: 42u32 };
    let e = k.to_entity().unwrap();
    assert_eq!(e.partition_key(), "00000000-0000-0000-0000-000000000007");
    assert_eq!(e.row_key(), "0000000042");
    assert_eq!(Keys::<u32>::from_entity(e).unwrap(), k);
    let neg = Keys { tenant: Uuid::nil(), seq: -1i16 };
    let e = neg.to_entity().unwrap();
    assert_eq!(e.row_key(), "32767");
    assert_eq!(Keys::<i16>::from_entity(e.clone()).unwrap(), neg);
    // The row key must parse back as the field type.
    let err = Keys::<u8>::from_entity(e).unwrap_err();
    assert_eq!(err.to_string(), "property `RowKey`: invalid u8 key `32767`: must be 3 digits, found 5");
    let by_status = Keys { tenant: Uuid::nil(), seq: Status::Pending };
    let e = by_status.to_entity().unwrap();
    assert_eq!(e.row_key(), "pending");
    assert_eq!(Keys::<Status>::from_entity(e).unwrap(), by_status);
    assert_eq!(
        Keys::<u32>::SCHEMA.row_key().source(),
        KeySource::Field { field: "seq", encoding: KeyEncoding::Integer { width: 10, signed: false } }
    );
}

#[derive(TableEntity, Debug, PartialEq)]
struct Generic<'a, T, const N: usize> {
    #[table(partition_key)]
    pk: String,
    #[table(row_key)]
    rk: String,
    value: T,
    maybe: Option<T>,
    #[table(json)]
    list: Vec<T>,
    #[table(skip)]
    unused: Option<&'a [u8; N]>,
}

#[test]
fn generic_structs() {
    let g: Generic<'_, i64, 4> =
        Generic { pk: "p".into(), rk: "r".into(), value: 5, maybe: Some(6), list: vec![1, 2], unused: None };
    let e = g.to_entity().unwrap();
    assert_eq!(e.value("value"), Some(&EdmValue::Int64(5)));
    assert_eq!(e.value("list"), Some(&EdmValue::try_from("[1,2]").unwrap()));
    assert_eq!(Generic::<i64, 4>::from_entity(e).unwrap(), g);
    let handle: Property<i64> = Generic::<i64, 4>::PROPERTIES.maybe;
    assert_eq!(handle.name(), "maybe");
}

#[derive(TableProperties, Debug, PartialEq)]
#[table(rename_all = "PascalCase")]
struct Measure<T> {
    value: T,
    unit: String,
}

// A flattened group whose type depends on the parameter: its joined names are checked for each instantiation
// (the derive's `__CHECK`), where the other checks run where the struct is defined.
#[derive(TableEntity, Debug, PartialEq)]
struct Sensor<T> {
    #[table(partition_key)]
    site: String,
    #[table(row_key)]
    id: u32,
    #[table(flatten, prefix = "Last")]
    last: Measure<T>,
    #[table(edm = "Int64")]
    count: T,
}

#[test]
fn generic_flattened_groups() {
    let s = Sensor { site: "s".into(), id: 1, last: Measure { value: 7i32, unit: "C".into() }, count: 3i32 };
    let e = s.to_entity().unwrap();
    assert_eq!(e.value("LastValue"), Some(&EdmValue::Int32(7)));
    assert_eq!(e.value("LastUnit"), Some(&EdmValue::try_from("C").unwrap()));
    assert_eq!(e.value("count"), Some(&EdmValue::Int64(3)));
    assert_eq!(Sensor::<i32>::from_entity(e).unwrap(), s);
    assert_eq!(Sensor::<i32>::from_json(s.to_json().unwrap().as_bytes()).unwrap(), s);
    let names: Vec<_> = Sensor::<i32>::SCHEMA.properties().map(|p| p.name().to_string()).collect();
    assert_eq!(names, ["LastValue", "LastUnit", "count"]);
}

#[test]
fn keys_must_be_valid_at_run_time() {
    let bad = Setting { name: "a/b".into(), value: String::new() };
    let err = bad.to_entity().unwrap_err();
    assert_eq!(err.to_string(), "property `RowKey`: invalid row key \"a/b\": character `/` at index 1 is not allowed");
    let mut long = order();
    long.note = Some("x".repeat(40_000));
    let err = long.to_entity().unwrap_err();
    assert_eq!(
        err.to_string(),
        "property `Note`: invalid Edm.String: must be at most 32768 UTF-16 code units, found 40000"
    );
}

#[test]
fn schema_describes_the_struct() {
    let s = Order::SCHEMA;
    assert_eq!(s.table_name().unwrap(), "Orders");
    assert_eq!(s.partition_key().source(), KeySource::Field { field: "customer", encoding: KeyEncoding::Text });
    assert_eq!(s.row_key().source(), KeySource::Field { field: "placed", encoding: KeyEncoding::ReverseChronological });
    let props: Vec<(String, Option<EdmType>, bool)> =
        s.properties().map(|p| (p.name().to_owned(), p.edm_type(), p.is_optional())).collect();
    assert_eq!(props.len(), 33);
    let find = |n: &str| props.iter().find(|p| p.0 == n).cloned().unwrap();
    assert_eq!(find("Qty"), ("Qty".into(), Some(EdmType::Int32), false));
    assert_eq!(find("Count"), ("Count".into(), Some(EdmType::Int64), false));
    assert_eq!(find("Note"), ("Note".into(), Some(EdmType::String), true));
    assert_eq!(find("Dynamic"), ("Dynamic".into(), None, false));
    assert_eq!(find("Status"), ("Status".into(), Some(EdmType::String), false));
    assert_eq!(find("BillGeoLon"), ("BillGeoLon".into(), Some(EdmType::Double), false));
    assert_eq!(find("ShippingZip"), ("ShippingZip".into(), Some(EdmType::String), true));
    assert_eq!(find("Widened"), ("Widened".into(), Some(EdmType::Int64), false));
    assert_eq!(find("Lucky"), ("Lucky".into(), Some(EdmType::Int64), true));
    assert_eq!(find("Tags"), ("Tags".into(), Some(EdmType::String), false));
    assert_eq!(s.edm_type_of("ShippingGeoLat"), Some(EdmType::Double));
    assert_eq!(s.edm_type_of("ShippingGeo"), None);
    assert_eq!(s.edm_type_of("Cache"), None);
    assert!(s.select().starts_with("PartitionKey,RowKey,Total,Ratio,Qty,"));
    assert!(!s.denies_unknown_properties());
    assert!(Setting::SCHEMA.denies_unknown_properties());
}

#[test]
fn schema_validates_dynamic_entities() {
    let s = Order::SCHEMA;
    let e = order().to_entity().unwrap();
    s.validate(&e).unwrap();
    s.validate(&replaced("Total", 5)).unwrap(); // Int32 widens into a Double field
    assert_eq!(
        s.validate(&replaced("Total", EdmValue::try_from("5").unwrap())).unwrap_err().to_string(),
        "property `Total`: expected Edm.Double, found Edm.String"
    );
    let mut missing = e.clone();
    missing.remove("ShippingCity");
    assert_eq!(s.validate(&missing).unwrap_err().to_string(), "missing property `ShippingCity`");
    s.validate(&replaced("Unknown", 1)).unwrap();
    let setting = Setting { name: "n".into(), value: "v".into() }.to_entity().unwrap();
    Setting::SCHEMA.validate(&setting).unwrap();
    let extra = setting.with("extra".parse().unwrap(), 1).unwrap();
    assert!(Setting::SCHEMA.validate(&extra).is_err());
}

#[test]
fn property_handles() {
    let p = Order::PROPERTIES;
    let total: Property<f64> = p.total;
    let quantity: Property<i32> = p.quantity;
    let note: Property<String> = p.note;
    let widened: Property<i64> = p.widened;
    let tags: Property<String> = p.tags;
    let ts: Property<DateTime> = p.ts;
    let status: Property<Status> = p.status;
    assert_eq!(
        [total.name(), quantity.name(), note.name(), widened.name(), tags.name(), ts.name(), status.name()],
        ["Total", "Qty", "Note", "Widened", "Tags", "Timestamp", "Status"]
    );
}

#[test]
fn enums_as_values() {
    assert_eq!(Status::VARIANTS, ["pending", "in_transit", "done"]);
    assert_eq!(Status::NAME, "Status");
    assert_eq!(Status::from_name("done"), Some(Status::Delivered));
    assert_eq!(Status::from_name("Delivered"), None);
}

// ---------------------------------------------------------------------------------------------------------
// JSON straight from and into the struct

use table_model::json::{decode_entity, encode_entity, MetadataLevel};
use table_model::DecodeErrorKind;

/// A response body for `entity` at a metadata level, built from the wire rules of `docs/rules.md` §5 with
/// `serde_json::Value`, independently of the crate's decoder: `none` drops every annotation; `full` annotates
/// every property and adds the full metadata members.
fn response(entity: &Entity, level: MetadataLevel) -> Vec<u8> {
    let body = encode_entity(entity).unwrap();
    let mut object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(body.as_bytes()).unwrap();
    match level {
        MetadataLevel::None => object.retain(|k, _| !k.ends_with("@odata.type")),
        MetadataLevel::Minimal => {
            object.insert("odata.metadata".into(), "https://a.table.core.windows.net/$metadata#Orders/@Element".into());
            object.insert("odata.etag".into(), r#"W/"datetime'2024-01-02T03%3A04%3A05.1234567Z'""#.into());
        }
        MetadataLevel::Full => {
            for (name, value) in entity.iter() {
                object.insert(format!("{name}@odata.type"), value.edm_type().as_str().into());
            }
            object.insert("odata.type".into(), "account.Orders".into());
            object.insert("odata.id".into(), "https://a.table.core.windows.net/Orders(PartitionKey='c42')".into());
            object.insert("odata.editLink".into(), "Orders(PartitionKey='c42')".into());
            object.insert("odata.etag".into(), r#"W/"0x8D1""#.into());
            object.insert("Timestamp@odata.type".into(), "Edm.DateTime".into());
            object.insert("Timestamp".into(), "2024-01-02T03:04:05.1234567Z".into());
        }
    }
    serde_json::to_vec(&object).unwrap()
}

#[test]
fn to_json_writes_what_encode_entity_writes() {
    let o = order();
    let direct = o.to_json().unwrap();
    let via_entity = encode_entity(&o.to_entity().unwrap()).unwrap();
    assert_eq!(direct.as_str(), via_entity.as_str());
    assert_eq!(direct.entity_size(), via_entity.entity_size());
    assert!(direct.as_str().contains(r#""Widened@odata.type":"Edm.Int64","Widened":"-7""#), "{}", direct.as_str());
    assert!(direct.as_str().contains(r#""Status":"in_transit""#));
    assert!(direct.as_str().contains(r#""Tags":"[\"gift\",\"fragile\"]""#));
}

#[test]
fn from_json_at_every_metadata_level() {
    let o = order();
    let entity = o.to_entity().unwrap();
    for level in [MetadataLevel::None, MetadataLevel::Minimal, MetadataLevel::Full] {
        let json = response(&entity, level);
        let direct = Order::from_json(&json).unwrap_or_else(|e| panic!("{level:?}: {e}"));
        // The same as decoding into an Entity typed by the schema, then converting.
        let via_entity = Order::from_entity(decode_entity(&json, Some(&Order::SCHEMA)).unwrap()).unwrap();
        assert_eq!(direct, via_entity, "{level:?}");
        // A dynamic `EdmValue` field has no type in the schema: without annotations its Guid is a string.
        let dynamic = if level == MetadataLevel::None {
            EdmValue::try_from("ffffffff-ffff-ffff-ffff-ffffffffffff").unwrap()
        } else {
            o.dynamic.clone()
        };
        let expected = Order {
            dynamic,
            ts: (level == MetadataLevel::Full).then(|| "2024-01-02T03:04:05.1234567Z".parse().unwrap()),
            etag: match level {
                MetadataLevel::None => None,
                MetadataLevel::Minimal => Some(ETag::new(r#"W/"datetime'2024-01-02T03%3A04%3A05.1234567Z'""#)),
                MetadataLevel::Full => Some(ETag::new(r#"W/"0x8D1""#)),
            },
            ..o.clone()
        };
        assert_eq!(direct, expected, "{level:?}");
    }
}

#[test]
fn from_json_nometadata_is_typed_by_the_schema() {
    // Without annotations, an Int64 beyond 2^53, a Guid, a DateTime and a Binary are plain strings.
    let json = br#"{"PartitionKey":"p","RowKey":"r","value":"9007199254740993","id":"00000000-0000-0000-0000-00000000002a","at":"2024-01-02T03:04:05Z","blob":"AQI="}"#;
    #[derive(TableEntity, Debug, PartialEq)]
    struct Typed {
        #[table(partition_key)]
        pk: String,
        #[table(row_key)]
        rk: String,
        value: i64,
        id: Uuid,
        at: DateTime,
        blob: Vec<u8>,
    }
    let t = Typed::from_json(json).unwrap();
    assert_eq!(t.value, 9_007_199_254_740_993);
    assert_eq!(t.id, Uuid::from_u128(42));
    assert_eq!(t.at.to_string(), "2024-01-02T03:04:05.0000000Z");
    assert_eq!(t.blob, [1, 2]);
}

#[test]
fn from_json_query_pages() {
    let a = Order { dynamic: EdmValue::Int32(1), ..order() };
    let b = Order { customer: "c43".into(), note: None, ..a.clone() };
    let page = format!(
        r#"{{"odata.metadata":"https://a.table.core.windows.net/$metadata#Orders","value":[{},{}]}}"#,
        String::from_utf8(response(&a.to_entity().unwrap(), MetadataLevel::None)).unwrap(),
        String::from_utf8(response(&b.to_entity().unwrap(), MetadataLevel::None)).unwrap(),
    );
    assert_eq!(Order::from_json_query(page.as_bytes()).unwrap(), [a, b]);
}

#[test]
fn from_json_errors_name_the_property() {
    let entity = order().to_entity().unwrap();
    let with = |name: &str, value: EdmValue| {
        let mut e = entity.clone();
        e.insert(name.parse().unwrap(), value).unwrap();
        response(&e, MetadataLevel::Minimal)
    };
    let err = Order::from_json(&with("Total", EdmValue::Boolean(true))).unwrap_err();
    assert_eq!(err.to_string(), "property `Total`: expected Edm.Double, found JSON true");
    let err = Order::from_json(&with("Status", EdmValue::try_from("Lost").unwrap())).unwrap_err();
    assert_eq!(
        err.to_string(),
        "property `Status`: unknown variant `Lost` of `Status`; expected one of `pending`, `in_transit`, `done`"
    );
    let err = Order::from_json(&with("ShippingGeoLat", EdmValue::try_from("north").unwrap())).unwrap_err();
    assert_eq!(err.property(), Some("ShippingGeoLat"));
    let mut missing = entity.clone();
    missing.remove("BillCity");
    let err = Order::from_json(&response(&missing, MetadataLevel::Minimal)).unwrap_err();
    assert_eq!(err.to_string(), "missing property `BillCity`");
    // Unknown properties: ignored, or refused under deny_unknown_properties.
    assert_eq!(Order::from_json(&with("Extra", EdmValue::Int32(1))).unwrap().total, 99.5);
    let setting = br#"{"PartitionKey":"config","RowKey":"n","value":"v","Extra":1}"#;
    let err = Setting::from_json(setting).unwrap_err();
    let unknown = EntityErrorKind::UnknownProperty { property: "Extra".into() };
    assert!(matches!(err.kind(), DecodeErrorKind::Entity(e) if e.kind() == &unknown), "{err:?}");
    assert_eq!(err.to_string(), "property `Extra`: unknown property; the struct has #[table(deny_unknown_properties)]");
    // The derive's own names skip the decoder's name check; any other name is still checked, whether or not
    // the struct would ignore it.
    assert!(Setting::from_json(br#"{"PartitionKey":"config","RowKey":"n","value":"v"}"#).is_ok());
    for (bad, annotation) in
        [(r#""bad name":1"#, false), (r#""value1-":1"#, false), (r#""value@odata.etag":"x""#, true)]
    {
        let json = format!(r#"{{"PartitionKey":"config","RowKey":"n","value":"v",{bad}}}"#);
        let err = Setting::from_json(json.as_bytes()).unwrap_err();
        if annotation {
            assert!(matches!(err.kind(), DecodeErrorKind::UnsupportedAnnotation { .. }), "{bad}: {err:?}");
        } else {
            assert!(matches!(err.kind(), DecodeErrorKind::InvalidPropertyName(_)), "{bad}: {err:?}");
        }
    }
    let err = Setting::from_json(br#"{"PartitionKey":"other","RowKey":"n","value":"v"}"#).unwrap_err();
    assert_eq!(err.to_string(), "property `PartitionKey`: expected the constant key `config`, found `other`");
    let err =
        Keys::<u8>::from_json(br#"{"PartitionKey":"00000000-0000-0000-0000-000000000000","RowKey":"7"}"#).unwrap_err();
    assert_eq!(err.to_string(), "property `RowKey`: invalid u8 key `7`: must be 3 digits, found 1");
}

#[test]
fn to_json_errors_name_the_property() {
    let mut long = order();
    long.note = Some("x".repeat(40_000));
    let err = long.to_json().unwrap_err();
    assert_eq!(err.property(), Some("Note"));
    let bad = Setting { name: "a/b".into(), value: String::new() };
    assert!(bad.to_json().is_err());
}

#[derive(TableEntity)]
#[table(name = "$MetricsCapacityBlob", partition_key = "p", row_key = "r")]
struct Metrics {
    #[table(rename = "Capacity")]
    capacity: Option<i64>,
}

#[test]
fn analytics_table_names() {
    let name = Metrics::SCHEMA.table_name().unwrap();
    assert!(name.is_analytics());
    assert_eq!(name.as_str(), "$MetricsCapacityBlob");
    assert_eq!(Metrics { capacity: None }.to_entity().unwrap().len(), 0);
}

/// The table named on a struct, as a constant the client opens (`TableServiceClient::table_for`): a table that
/// can be created, an analytics one, and that of a generic struct.
#[test]
fn named_tables() {
    fn table_of<T: NamedTable>() -> TableName {
        T::TABLE_NAME
    }

    #[derive(TableEntity)]
    #[table(name = "Readings")]
    struct Reading<T: table_model::EdmField> {
        #[table(partition_key)]
        sensor: String,
        #[table(row_key)]
        at: DateTime,
        value: T,
    }

    const ORDERS: TableName = Order::TABLE_NAME;
    assert_eq!(ORDERS, "Orders");
    assert!(!ORDERS.is_analytics());
    assert_eq!(table_of::<Metrics>(), "$MetricsCapacityBlob");
    assert!(table_of::<Metrics>().is_analytics());
    assert_eq!(table_of::<Reading<f64>>(), "Readings");
    assert_eq!(Some(table_of::<Reading<i32>>()), Reading::<i32>::SCHEMA.table_name());
}

#[derive(TableEntity, Debug, PartialEq)]
struct JsonFields {
    #[table(partition_key)]
    pk: String,
    #[table(row_key)]
    rk: String,
    #[table(json)]
    maybe: Option<Vec<u32>>,
    #[table(json)]
    always: Vec<u32>,
}

#[test]
fn json_none_is_not_stored_and_absent_reads_as_none() {
    let value = JsonFields { pk: "p".into(), rk: "r".into(), maybe: None, always: vec![1, 2] };
    // Through Entity: `None` writes no property (a null is not stored), and reads back as `None`.
    let entity = value.to_entity().unwrap();
    assert_eq!(entity.value("maybe"), None);
    assert_eq!(entity.get::<String>("always").unwrap(), "[1,2]");
    assert_eq!(JsonFields::from_entity(entity.clone()).unwrap(), value);
    // Through JSON: the body has no `maybe` member at all.
    let body = value.to_json().unwrap();
    assert_eq!(body.as_str(), r#"{"PartitionKey":"p","RowKey":"r","always":"[1,2]"}"#);
    assert_eq!(JsonFields::from_json(body.as_bytes()).unwrap(), value);
    // `Some` is stored as its JSON text.
    let some = JsonFields { maybe: Some(vec![3]), ..value };
    assert_eq!(some.to_entity().unwrap().get::<String>("maybe").unwrap(), "[3]");
    assert_eq!(JsonFields::from_json(some.to_json().unwrap().as_bytes()).unwrap(), some);
    // A non-Option JSON field that is absent is still a missing property, on both paths.
    let mut without = entity;
    without.remove("always");
    assert_eq!(JsonFields::from_entity(without).unwrap_err().to_string(), "missing property `always`");
    let err = JsonFields::from_json(br#"{"PartitionKey":"p","RowKey":"r"}"#).unwrap_err();
    assert!(err.to_string().contains("`always`"), "{err}");
}

// `#[table(service = "...")]`: the same names are fine under "storage" (and by default), and a "cosmos" or
// "portable" struct without reserved names builds and round-trips (the reserved ones: `tests/ui/service-*.rs`).
#[derive(TableEntity, Debug, PartialEq)]
#[table(service = "storage", rename_all = "PascalCase")]
struct OnStorage {
    #[table(partition_key)]
    site: String,
    #[table(row_key)]
    serial: String,
    id: u32,
    e_tag: String,
    #[table(rename = "rid")]
    r: String,
    resource_id: Option<String>,
}

#[derive(TableEntity, Debug, PartialEq)]
#[table(rename_all = "PascalCase")]
struct ByDefault {
    #[table(partition_key)]
    site: String,
    #[table(row_key)]
    serial: String,
    id: u32,
}

#[derive(TableProperties, Debug, PartialEq)]
struct CosmosPart {
    id: u32,
}

#[derive(TableEntity, Debug, PartialEq)]
#[table(service = "cosmos", rename_all = "PascalCase")]
struct OnCosmos {
    #[table(partition_key)]
    site: String,
    #[table(row_key)]
    serial: String,
    device_id: u32,
    ids: Vec<u8>,
    #[table(etag)]
    etag: Option<table_model::ETag>,
    #[table(flatten, prefix = "Part")]
    part: CosmosPart,
}

#[derive(TableEntity, Debug, PartialEq)]
#[table(service = "portable", partition_key = "p")]
struct Portable {
    #[table(row_key)]
    serial: String,
    identity: String,
}

#[test]
fn service_rule_sets() {
    use table_model::RuleSet;
    assert_eq!(OnStorage::SCHEMA.rules(), RuleSet::Storage);
    assert_eq!(ByDefault::SCHEMA.rules(), RuleSet::Storage);
    assert_eq!(OnCosmos::SCHEMA.rules(), RuleSet::CosmosDb);
    assert_eq!(Portable::SCHEMA.rules(), RuleSet::Portable);

    let s =
        OnStorage { site: "s".into(), serial: "1".into(), id: 7, e_tag: "x".into(), r: "y".into(), resource_id: None };
    let e = s.to_entity().unwrap();
    assert!(e.value("Id").is_some() && e.value("ETag").is_some() && e.value("rid").is_some());
    assert_eq!(OnStorage::from_entity(e).unwrap(), s);

    let c = OnCosmos {
        site: "s".into(),
        serial: "1".into(),
        device_id: 7,
        ids: vec![1, 2],
        etag: None,
        part: CosmosPart { id: 3 },
    };
    let json = c.to_json().unwrap();
    assert!(json.as_str().contains(r#""Partid":"3""#), "{}", json.as_str());
    assert_eq!(OnCosmos::from_json(json.as_bytes()).unwrap(), c);
    assert_eq!(OnCosmos::from_entity(c.to_entity().unwrap()).unwrap(), c);
    for name in OnCosmos::SCHEMA.properties() {
        assert!(RuleSet::CosmosDb.check_property_name(name.name()).is_ok(), "{}", name.name());
    }

    let p = Portable { serial: "1".into(), identity: "me".into() };
    assert_eq!(Portable::from_json(p.to_json().unwrap().as_bytes()).unwrap(), p);
}
