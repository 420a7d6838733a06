//! The widest entity the derive accepts: 252 custom properties (`docs/rules.md`, the property limit), every
//! supported type among them, with sequential names (`p000` .. `p251`). It must build (in release too: see the
//! "Build time" section of `BENCHMARKS.md`, and why it once did not in `docs/benchmarks-history.md`, "What made
//! the wide struct slow") and every property must find its own field, through `Entity` and through the direct
//! JSON path.

use table_model::{DateTime, EdmBinary, EdmString, EdmValue, Entity, TableEntity, TableEnum};
use uuid::Uuid;

#[derive(TableEnum, Debug, Clone, Copy, PartialEq)]
enum Level {
    Low,
    High,
}

fn instant(i: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(1_700_000_000 + i, 100).unwrap()
}

/// Keys, then the 252 properties, the supported types in turn (a `TableEnum`, `#[table(json)]`,
/// `#[table(edm = "...")]` and `#[table(default)]` among them); every value is `Some`, so all are stored.
#[derive(TableEntity, Debug, Clone, PartialEq)]
struct Wide {
    #[table(partition_key)]
    partition: String,
    #[table(row_key)]
    row: String,
    p000: bool,
    p001: i8,
    p002: i16,
    p003: i32,
    p004: u8,
    p005: u16,
    p006: i64,
    p007: u32,
    p008: f32,
    p009: f64,
    p010: String,
    p011: EdmString,
    p012: Vec<u8>,
    p013: EdmBinary,
    p014: Uuid,
    p015: DateTime,
    p016: chrono::DateTime<chrono::Utc>,
    p017: EdmValue,
    p018: Option<i64>,
    p019: Option<String>,
    p020: Option<f64>,
    p021: Level,
    p022: Option<Level>,
    #[table(json)]
    p023: Vec<u32>,
    #[table(edm = "Int64")]
    p024: i32,
    #[table(edm = "Double")]
    p025: Option<i16>,
    #[table(default)]
    p026: i64,
    p027: bool,
    p028: i8,
    p029: i16,
    p030: i32,
    p031: u8,
    p032: u16,
    p033: i64,
    p034: u32,
    p035: f32,
    p036: f64,
    p037: String,
    p038: EdmString,
    p039: Vec<u8>,
    p040: EdmBinary,
    p041: Uuid,
    p042: DateTime,
    p043: chrono::DateTime<chrono::Utc>,
    p044: EdmValue,
    p045: Option<i64>,
    p046: Option<String>,
    p047: Option<f64>,
    p048: Level,
    p049: Option<Level>,
    #[table(json)]
    p050: Vec<u32>,
    #[table(edm = "Int64")]
    p051: i32,
    #[table(edm = "Double")]
    p052: Option<i16>,
    #[table(default)]
    p053: i64,
    p054: bool,
    p055: i8,
    p056: i16,
    p057: i32,
    p058: u8,
    p059: u16,
    p060: i64,
    p061: u32,
    p062: f32,
    p063: f64,
    p064: String,
    p065: EdmString,
    p066: Vec<u8>,
    p067: EdmBinary,
    p068: Uuid,
    p069: DateTime,
    p070: chrono::DateTime<chrono::Utc>,
    p071: EdmValue,
    p072: Option<i64>,
    p073: Option<String>,
    p074: Option<f64>,
    p075: Level,
    p076: Option<Level>,
    #[table(json)]
    p077: Vec<u32>,
    #[table(edm = "Int64")]
    p078: i32,
    #[table(edm = "Double")]
    p079: Option<i16>,
    #[table(default)]
    p080: i64,
    p081: bool,
    p082: i8,
    p083: i16,
    p084: i32,
    p085: u8,
    p086: u16,
    p087: i64,
    p088: u32,
    p089: f32,
    p090: f64,
    p091: String,
    p092: EdmString,
    p093: Vec<u8>,
    p094: EdmBinary,
    p095: Uuid,
    p096: DateTime,
    p097: chrono::DateTime<chrono::Utc>,
    p098: EdmValue,
    p099: Option<i64>,
    p100: Option<String>,
    p101: Option<f64>,
    p102: Level,
    p103: Option<Level>,
    #[table(json)]
    p104: Vec<u32>,
    #[table(edm = "Int64")]
    p105: i32,
    #[table(edm = "Double")]
    p106: Option<i16>,
    #[table(default)]
    p107: i64,
    p108: bool,
    p109: i8,
    p110: i16,
    p111: i32,
    p112: u8,
    p113: u16,
    p114: i64,
    p115: u32,
    p116: f32,
    p117: f64,
    p118: String,
    p119: EdmString,
    p120: Vec<u8>,
    p121: EdmBinary,
    p122: Uuid,
    p123: DateTime,
    p124: chrono::DateTime<chrono::Utc>,
    p125: EdmValue,
    p126: Option<i64>,
    p127: Option<String>,
    p128: Option<f64>,
    p129: Level,
    p130: Option<Level>,
    #[table(json)]
    p131: Vec<u32>,
    #[table(edm = "Int64")]
    p132: i32,
    #[table(edm = "Double")]
    p133: Option<i16>,
    #[table(default)]
    p134: i64,
    p135: bool,
    p136: i8,
    p137: i16,
    p138: i32,
    p139: u8,
    p140: u16,
    p141: i64,
    p142: u32,
    p143: f32,
    p144: f64,
    p145: String,
    p146: EdmString,
    p147: Vec<u8>,
    p148: EdmBinary,
    p149: Uuid,
    p150: DateTime,
    p151: chrono::DateTime<chrono::Utc>,
    p152: EdmValue,
    p153: Option<i64>,
    p154: Option<String>,
    p155: Option<f64>,
    p156: Level,
    p157: Option<Level>,
    #[table(json)]
    p158: Vec<u32>,
    #[table(edm = "Int64")]
    p159: i32,
    #[table(edm = "Double")]
    p160: Option<i16>,
    #[table(default)]
    p161: i64,
    p162: bool,
    p163: i8,
    p164: i16,
    p165: i32,
    p166: u8,
    p167: u16,
    p168: i64,
    p169: u32,
    p170: f32,
    p171: f64,
    p172: String,
    p173: EdmString,
    p174: Vec<u8>,
    p175: EdmBinary,
    p176: Uuid,
    p177: DateTime,
    p178: chrono::DateTime<chrono::Utc>,
    p179: EdmValue,
    p180: Option<i64>,
    p181: Option<String>,
    p182: Option<f64>,
    p183: Level,
    p184: Option<Level>,
    #[table(json)]
    p185: Vec<u32>,
    #[table(edm = "Int64")]
    p186: i32,
    #[table(edm = "Double")]
    p187: Option<i16>,
    #[table(default)]
    p188: i64,
    p189: bool,
    p190: i8,
    p191: i16,
    p192: i32,
    p193: u8,
    p194: u16,
    p195: i64,
    p196: u32,
    p197: f32,
    p198: f64,
    p199: String,
    p200: EdmString,
    p201: Vec<u8>,
    p202: EdmBinary,
    p203: Uuid,
    p204: DateTime,
    p205: chrono::DateTime<chrono::Utc>,
    p206: EdmValue,
    p207: Option<i64>,
    p208: Option<String>,
    p209: Option<f64>,
    p210: Level,
    p211: Option<Level>,
    #[table(json)]
    p212: Vec<u32>,
    #[table(edm = "Int64")]
    p213: i32,
    #[table(edm = "Double")]
    p214: Option<i16>,
    #[table(default)]
    p215: i64,
    p216: bool,
    p217: i8,
    p218: i16,
    p219: i32,
    p220: u8,
    p221: u16,
    p222: i64,
    p223: u32,
    p224: f32,
    p225: f64,
    p226: String,
    p227: EdmString,
    p228: Vec<u8>,
    p229: EdmBinary,
    p230: Uuid,
    p231: DateTime,
    p232: chrono::DateTime<chrono::Utc>,
    p233: EdmValue,
    p234: Option<i64>,
    p235: Option<String>,
    p236: Option<f64>,
    p237: Level,
    p238: Option<Level>,
    #[table(json)]
    p239: Vec<u32>,
    #[table(edm = "Int64")]
    p240: i32,
    #[table(edm = "Double")]
    p241: Option<i16>,
    #[table(default)]
    p242: i64,
    p243: bool,
    p244: i8,
    p245: i16,
    p246: i32,
    p247: u8,
    p248: u16,
    p249: i64,
    p250: u32,
    p251: f32,
}

/// A value of every field that depends on the field's position, so that a property read into another field
/// of the same type is seen.
fn wide() -> Wide {
    Wide {
        partition: "p".into(),
        row: "r".into(),
        p000: false,
        p001: -99,
        p002: -200,
        p003: 300000,
        p004: 4,
        p005: 1000,
        p006: 6_000_000_000_000,
        p007: 7_000_000,
        p008: 8.5,
        p009: -9.25,
        p010: "text 10".into(),
        p011: EdmString::new("édm 11").unwrap(),
        p012: vec![12, 0, 255],
        p013: EdmBinary::new(vec![13; 3]).unwrap(),
        p014: Uuid::from_u128(14),
        p015: DateTime::from_ticks(638_000_000_000_000_000 + 15).unwrap(),
        p016: instant(16),
        p017: EdmValue::Int64(17),
        p018: Some(18),
        p019: Some("maybe 19".into()),
        p020: Some(20.75),
        p021: Level::High,
        p022: Some(Level::High),
        p023: vec![23, 24],
        p024: -24,
        p025: Some(25),
        p026: 78,
        p027: true,
        p028: -72,
        p029: -2900,
        p030: 3000000,
        p031: 31,
        p032: 6400,
        p033: 33_000_000_000_000,
        p034: 34_000_000,
        p035: 35.5,
        p036: -36.25,
        p037: "text 37".into(),
        p038: EdmString::new("édm 38").unwrap(),
        p039: vec![39, 0, 255],
        p040: EdmBinary::new(vec![40; 3]).unwrap(),
        p041: Uuid::from_u128(41),
        p042: DateTime::from_ticks(638_000_000_000_000_000 + 42).unwrap(),
        p043: instant(43),
        p044: EdmValue::Int64(44),
        p045: Some(45),
        p046: Some("maybe 46".into()),
        p047: Some(47.75),
        p048: Level::Low,
        p049: Some(Level::High),
        p050: vec![50, 51],
        p051: -51,
        p052: Some(52),
        p053: 159,
        p054: false,
        p055: -45,
        p056: -5600,
        p057: 5700000,
        p058: 58,
        p059: 11800,
        p060: 60_000_000_000_000,
        p061: 61_000_000,
        p062: 62.5,
        p063: -63.25,
        p064: "text 64".into(),
        p065: EdmString::new("édm 65").unwrap(),
        p066: vec![66, 0, 255],
        p067: EdmBinary::new(vec![67; 3]).unwrap(),
        p068: Uuid::from_u128(68),
        p069: DateTime::from_ticks(638_000_000_000_000_000 + 69).unwrap(),
        p070: instant(70),
        p071: EdmValue::Int64(71),
        p072: Some(72),
        p073: Some("maybe 73".into()),
        p074: Some(74.75),
        p075: Level::High,
        p076: Some(Level::High),
        p077: vec![77, 78],
        p078: -78,
        p079: Some(79),
        p080: 240,
        p081: true,
        p082: -18,
        p083: -8300,
        p084: 8400000,
        p085: 85,
        p086: 17200,
        p087: 87_000_000_000_000,
        p088: 88_000_000,
        p089: 89.5,
        p090: -90.25,
        p091: "text 91".into(),
        p092: EdmString::new("édm 92").unwrap(),
        p093: vec![93, 0, 255],
        p094: EdmBinary::new(vec![94; 3]).unwrap(),
        p095: Uuid::from_u128(95),
        p096: DateTime::from_ticks(638_000_000_000_000_000 + 96).unwrap(),
        p097: instant(97),
        p098: EdmValue::Int64(98),
        p099: Some(99),
        p100: Some("maybe 100".into()),
        p101: Some(101.75),
        p102: Level::Low,
        p103: Some(Level::High),
        p104: vec![104, 105],
        p105: -105,
        p106: Some(106),
        p107: 321,
        p108: false,
        p109: 9,
        p110: -11000,
        p111: 11100000,
        p112: 112,
        p113: 22600,
        p114: 114_000_000_000_000,
        p115: 115_000_000,
        p116: 116.5,
        p117: -117.25,
        p118: "text 118".into(),
        p119: EdmString::new("édm 119").unwrap(),
        p120: vec![120, 0, 255],
        p121: EdmBinary::new(vec![121; 3]).unwrap(),
        p122: Uuid::from_u128(122),
        p123: DateTime::from_ticks(638_000_000_000_000_000 + 123).unwrap(),
        p124: instant(124),
        p125: EdmValue::Int64(125),
        p126: Some(126),
        p127: Some("maybe 127".into()),
        p128: Some(128.75),
        p129: Level::High,
        p130: Some(Level::High),
        p131: vec![131, 132],
        p132: -132,
        p133: Some(133),
        p134: 402,
        p135: true,
        p136: 36,
        p137: -13700,
        p138: 13800000,
        p139: 139,
        p140: 28000,
        p141: 141_000_000_000_000,
        p142: 142_000_000,
        p143: 143.5,
        p144: -144.25,
        p145: "text 145".into(),
        p146: EdmString::new("édm 146").unwrap(),
        p147: vec![147, 0, 255],
        p148: EdmBinary::new(vec![148; 3]).unwrap(),
        p149: Uuid::from_u128(149),
        p150: DateTime::from_ticks(638_000_000_000_000_000 + 150).unwrap(),
        p151: instant(151),
        p152: EdmValue::Int64(152),
        p153: Some(153),
        p154: Some("maybe 154".into()),
        p155: Some(155.75),
        p156: Level::Low,
        p157: Some(Level::High),
        p158: vec![158, 159],
        p159: -159,
        p160: Some(160),
        p161: 483,
        p162: false,
        p163: 63,
        p164: -16400,
        p165: 16500000,
        p166: 166,
        p167: 33400,
        p168: 168_000_000_000_000,
        p169: 169_000_000,
        p170: 170.5,
        p171: -171.25,
        p172: "text 172".into(),
        p173: EdmString::new("édm 173").unwrap(),
        p174: vec![174, 0, 255],
        p175: EdmBinary::new(vec![175; 3]).unwrap(),
        p176: Uuid::from_u128(176),
        p177: DateTime::from_ticks(638_000_000_000_000_000 + 177).unwrap(),
        p178: instant(178),
        p179: EdmValue::Int64(179),
        p180: Some(180),
        p181: Some("maybe 181".into()),
        p182: Some(182.75),
        p183: Level::High,
        p184: Some(Level::High),
        p185: vec![185, 186],
        p186: -186,
        p187: Some(187),
        p188: 564,
        p189: true,
        p190: 90,
        p191: -19100,
        p192: 19200000,
        p193: 193,
        p194: 38800,
        p195: 195_000_000_000_000,
        p196: 196_000_000,
        p197: 197.5,
        p198: -198.25,
        p199: "text 199".into(),
        p200: EdmString::new("édm 200").unwrap(),
        p201: vec![201, 0, 255],
        p202: EdmBinary::new(vec![202; 3]).unwrap(),
        p203: Uuid::from_u128(203),
        p204: DateTime::from_ticks(638_000_000_000_000_000 + 204).unwrap(),
        p205: instant(205),
        p206: EdmValue::Int64(206),
        p207: Some(207),
        p208: Some("maybe 208".into()),
        p209: Some(209.75),
        p210: Level::Low,
        p211: Some(Level::High),
        p212: vec![212, 213],
        p213: -213,
        p214: Some(214),
        p215: 645,
        p216: false,
        p217: -83,
        p218: -21800,
        p219: 21900000,
        p220: 220,
        p221: 44200,
        p222: 222_000_000_000_000,
        p223: 223_000_000,
        p224: 224.5,
        p225: -225.25,
        p226: "text 226".into(),
        p227: EdmString::new("édm 227").unwrap(),
        p228: vec![228, 0, 255],
        p229: EdmBinary::new(vec![229; 3]).unwrap(),
        p230: Uuid::from_u128(230),
        p231: DateTime::from_ticks(638_000_000_000_000_000 + 231).unwrap(),
        p232: instant(232),
        p233: EdmValue::Int64(233),
        p234: Some(234),
        p235: Some("maybe 235".into()),
        p236: Some(236.75),
        p237: Level::High,
        p238: Some(Level::High),
        p239: vec![239, 240],
        p240: -240,
        p241: Some(241),
        p242: 726,
        p243: true,
        p244: -56,
        p245: -24500,
        p246: 24600000,
        p247: 247,
        p248: 49600,
        p249: 249_000_000_000_000,
        p250: 250_000_000,
        p251: 251.5,
    }
}

/// The JSON of `wide()`, as a map of members.
fn members() -> serde_json::Map<String, serde_json::Value> {
    serde_json::from_slice(wide().to_json().unwrap().as_bytes()).unwrap()
}

fn json(members: &serde_json::Map<String, serde_json::Value>) -> Vec<u8> {
    serde_json::to_vec(members).unwrap()
}

#[test]
fn every_property_is_written_under_its_own_name() {
    let members = members();
    let properties: Vec<&String> =
        members.keys().filter(|k| !k.contains('@') && *k != "PartitionKey" && *k != "RowKey").collect();
    assert_eq!(properties.len(), 252);
    for i in 0..252 {
        assert!(members.contains_key(&format!("p{i:03}")), "p{i:03}");
    }
    assert_eq!(Wide::SCHEMA.fields().len(), 252);
    let entity: Entity = wide().to_entity().unwrap();
    assert_eq!(entity.len(), 252);
    assert_eq!(entity.value("p152"), Some(&EdmValue::Int64(152)));
    assert_eq!(entity.value("p137"), Some(&EdmValue::Int32(-13_700)));
}

#[test]
fn round_trip_through_json_and_entity() {
    let value = wide();
    assert_eq!(Wide::from_json(value.to_json().unwrap().as_bytes()).unwrap(), value);
    assert_eq!(Wide::from_entity(value.to_entity().unwrap()).unwrap(), value);
}

#[test]
fn each_property_reaches_its_own_field() {
    // Two properties of the same type (`i32`, 27 apart) swapped in the JSON: each field gets the other's value.
    let mut members = members();
    let (a, b) = (members["p003"].clone(), members["p030"].clone());
    members.insert("p003".into(), b);
    members.insert("p030".into(), a);
    let swapped = Wide::from_json(&json(&members)).unwrap();
    let expected = Wide { p003: wide().p030, p030: wide().p003, ..wide() };
    assert_ne!(expected, wide());
    assert_eq!(swapped, expected);
}

#[test]
fn missing_and_mistyped_properties_are_named() {
    let mut m = members();
    m.remove("p200");
    let err = Wide::from_json(&json(&m)).unwrap_err();
    assert_eq!(err.to_string(), "missing property `p200`");

    let mut m = members();
    m.insert("p251".into(), serde_json::Value::Bool(true));
    let err = Wide::from_json(&json(&m)).unwrap_err();
    assert_eq!(err.property(), Some("p251"));
}

#[test]
fn unknown_names_are_ignored_and_defaults_fill_in() {
    // The nine `#[table(default)]` fields (p026, p053, ... p242) absent, and as many names the struct does not
    // have, near its own (`p252`, `P000`, `p00`, ...), in their place: 252 properties still.
    let mut m = members();
    let defaults: Vec<String> = (0..252).filter(|i| i % 27 == 26).map(|i| format!("p{i:03}")).collect();
    assert_eq!(defaults.len(), 9);
    for name in &defaults {
        m.remove(name).unwrap();
        m.remove(&format!("{name}@odata.type")).unwrap(); // an Int64
    }
    for name in ["p252", "p999", "P000", "p00", "p0000", "p25", "q000", "p_01", "Wide"] {
        m.insert(name.into(), serde_json::Value::Bool(true));
    }
    let value = Wide::from_json(&json(&m)).unwrap();
    let expected = Wide { p026: 0, p053: 0, p080: 0, p107: 0, p134: 0, p161: 0, p188: 0, p215: 0, p242: 0, ..wide() };
    assert_ne!(expected, wide());
    assert_eq!(value, expected);
}
