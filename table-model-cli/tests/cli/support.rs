//! What the `tablectl` end-to-end tests share: the Azurite of `TABLE_MODEL_AZURITE_ENDPOINT` (skipped with a
//! notice when it is not set, unless `CI` is set, where that fails), unique tables and directories, running the
//! built binary, and entities with every EDM type at its boundaries.
#![allow(dead_code)]

use futures::TryStreamExt as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use table_model::client::{TableClient, TableServiceClient};
use table_model::{
    AccountKey, DateTime, EdmBinary, EdmString, EdmValue, Entity, PartitionKey, Query, RowKey, TableName,
    DEVELOPMENT_ACCOUNT_KEY,
};

/// The Azurite of `TABLE_MODEL_AZURITE_ENDPOINT`: its URL, its connection string and a client.
pub struct Azurite {
    /// `http://127.0.0.1:<port>/devstoreaccount1`.
    pub url: String,
    pub connection_string: String,
    pub service: TableServiceClient,
}

pub fn azurite() -> Option<Azurite> {
    let url = table_model_test_utils::azurite::endpoint_or_skip(
        "tablectl Azurite tests",
        "scripts/azurite.sh run cargo test -p table-model-cli",
    )?;
    let connection_string = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};\
         TableEndpoint={url};"
    );
    let service = TableServiceClient::new(&url, AccountKey::development(), None).expect("the Azurite endpoint");
    Some(Azurite { url, connection_string, service })
}

#[macro_export]
macro_rules! azurite {
    () => {
        match $crate::support::azurite() {
            Some(a) => a,
            None => return,
        }
    };
}

/// A table name no other test (or run) uses.
pub fn unique_table(tag: &str) -> TableName {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    TableName::new(format!("Ctl{tag}{}x{n}", std::process::id())).unwrap()
}

pub use table_model_test_utils::temp_dir::TempDir;

/// An empty directory of the test's own ([`TempDir`]: removed when the test ends).
pub fn temp_dir(tag: &str) -> TempDir {
    TempDir::new(&format!("tablectl-test-{tag}"))
}

/// The binary started with the connection string in its environment (none: without one), in `dir`, its stdin,
/// stdout and stderr piped.
pub fn spawn_piped(connection_string: Option<&str>, dir: &Path, args: &[&str]) -> std::process::Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tablectl"));
    match connection_string {
        Some(connection_string) => command.env("AZURE_STORAGE_CONNECTION_STRING", connection_string),
        None => command.env_remove("AZURE_STORAGE_CONNECTION_STRING"),
    };
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tablectl starts")
}

/// The binary with the connection string in its environment, in `dir`, stdin closed.
pub fn tablectl(connection_string: &str, dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tablectl"))
        .args(args)
        .env("AZURE_STORAGE_CONNECTION_STRING", connection_string)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("tablectl runs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

pub fn keys(p: &str, r: &str) -> (PartitionKey, RowKey) {
    (PartitionKey::new(p).unwrap(), RowKey::new(r).unwrap())
}

/// Every entity of a table, in key order.
pub async fn all(table: &TableClient) -> Vec<Entity> {
    table.query::<Entity>(&Query::new(), None).unwrap().try_collect().await.unwrap()
}

/// Entities with every EDM type at its boundaries, and enough of them for several transactions.
pub fn boundary_entities() -> Vec<Entity> {
    let (p, r) = keys("edge", "values");
    let edge = Entity::new(p, r)
        .with("NaN".parse().unwrap(), f64::NAN)
        .unwrap()
        .with("NegZero".parse().unwrap(), -0.0_f64)
        .unwrap()
        .with("Inf".parse().unwrap(), f64::INFINITY)
        .unwrap()
        .with("NegInf".parse().unwrap(), f64::NEG_INFINITY)
        .unwrap()
        .with("Subnormal".parse().unwrap(), f64::from_bits(1))
        .unwrap()
        .with("Tenth".parse().unwrap(), 0.1_f64)
        .unwrap()
        .with("Int64Min".parse().unwrap(), i64::MIN)
        .unwrap()
        .with("Int64Max".parse().unwrap(), i64::MAX)
        .unwrap()
        .with("Int32Min".parse().unwrap(), i32::MIN)
        .unwrap()
        .with("Int32Max".parse().unwrap(), i32::MAX)
        .unwrap()
        .with("First".parse().unwrap(), "1601-01-01T00:00:00.0000000Z".parse::<DateTime>().unwrap())
        .unwrap()
        .with("Last".parse().unwrap(), "9999-12-31T23:59:59.9999999Z".parse::<DateTime>().unwrap())
        .unwrap()
        .with(
            "Binary".parse().unwrap(),
            EdmBinary::new((0..65_536).map(|i| (i % 251) as u8).collect::<Vec<_>>()).unwrap(),
        )
        .unwrap()
        .with("EmptyBinary".parse().unwrap(), EdmBinary::new(Vec::new()).unwrap())
        .unwrap()
        .with("Guid".parse().unwrap(), uuid_value())
        .unwrap()
        .with("Yes".parse().unwrap(), true)
        .unwrap()
        .with("Text".parse().unwrap(), "héllo 世界 🎉 \"quoted\"\n\ttab")
        .unwrap()
        .with("Empty".parse().unwrap(), "")
        .unwrap();
    let (p, r) = keys("ünïcode 日本", "ключ 🎉");
    let unicode = Entity::new(p, r).with("Only".parse().unwrap(), "").unwrap();
    let mut entities = vec![edge, unicode];
    for i in 0..250 {
        let (p, r) = keys(&format!("bulk-{}", i % 3), &format!("{i:04}"));
        entities.push(Entity::new(p, r).with("N".parse().unwrap(), i64::from(i)).unwrap());
    }
    entities
}

pub fn uuid_value() -> table_model::EdmValue {
    table_model::EdmValue::Guid("5b5e3a84-3c4c-4f6e-9b8a-0c1d2e3f4a5b".parse().unwrap())
}

/// Two tables hold the same entities, property by property (Doubles compared by their bits).
pub fn assert_same(expected: &[Entity], got: &[Entity]) {
    assert_eq!(expected.len(), got.len(), "entity count");
    for (e, g) in expected.iter().zip(got) {
        assert_eq!((e.partition_key(), e.row_key()), (g.partition_key(), g.row_key()));
        let e_props: Vec<_> = e.iter().collect();
        let mut g_props: Vec<_> = g.iter().collect();
        assert_eq!(e_props.len(), g_props.len(), "properties of {}/{}", e.partition_key(), e.row_key());
        for (name, value) in e_props {
            let i = g_props.iter().position(|(n, _)| *n == name).unwrap_or_else(|| panic!("{name} lost"));
            let (_, got) = g_props.remove(i);
            assert_eq!(value, got, "{name} of {}/{}", e.partition_key(), e.row_key());
        }
    }
}

/// A small seeded generator (SplitMix64): the same seed gives the same entities on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A short string that CSV must quote now and then (commas, quotes, CR, LF), with non-ASCII text.
    pub fn text(&mut self) -> String {
        const PIECES: [&str; 12] = ["a", "Zebra", " ", ",", "\"", "\r\n", "\n", "é", "世界", "🎉", "ключ", "\u{7f}"];
        (0..self.below(12)).map(|_| PIECES[self.below(PIECES.len() as u64) as usize]).collect()
    }

    /// Any double, from random bits (NaN as the one NaN JSON writes).
    pub fn double(&mut self) -> f64 {
        let d = f64::from_bits(self.next_u64());
        if d.is_nan() {
            f64::NAN
        } else {
            d
        }
    }

    /// Any instant the service stores, to the tick.
    pub fn datetime(&mut self) -> DateTime {
        let (min, max) = (DateTime::MIN.ticks() as u64, DateTime::MAX.ticks() as u64);
        DateTime::from_ticks((min + self.below(max - min + 1)) as i64).unwrap()
    }

    /// A random value of a random EDM type.
    pub fn value(&mut self) -> EdmValue {
        match self.below(8) {
            0 => EdmValue::Binary(
                EdmBinary::new((0..self.below(48)).map(|_| self.next_u64() as u8).collect::<Vec<_>>()).unwrap(),
            ),
            1 => EdmValue::Boolean(self.below(2) == 1),
            2 => EdmValue::DateTime(self.datetime()),
            3 => EdmValue::Double(self.double()),
            4 => EdmValue::Guid(uuid::Uuid::from_u64_pair(self.next_u64(), self.next_u64())),
            5 => EdmValue::Int32(self.next_u64() as i32),
            6 => EdmValue::Int64(self.next_u64() as i64),
            _ => EdmValue::String(EdmString::new(self.text()).unwrap()),
        }
    }
}

/// The boundary values of every EDM type: one of them goes into the `Edge` property of every 50th entity of
/// [`mixed_entities`] (so `Edge` changes type from entity to entity).
pub fn boundary_values() -> Vec<EdmValue> {
    vec![
        EdmValue::Double(f64::NAN),
        EdmValue::Double(-0.0),
        EdmValue::Double(f64::INFINITY),
        EdmValue::Double(f64::NEG_INFINITY),
        EdmValue::Double(f64::from_bits(1)),
        EdmValue::Double(f64::MAX),
        EdmValue::Double(f64::MIN),
        EdmValue::Double(0.1),
        EdmValue::Double(1.0),
        EdmValue::Int64(i64::MIN),
        EdmValue::Int64(i64::MAX),
        EdmValue::Int32(i32::MIN),
        EdmValue::Int32(i32::MAX),
        EdmValue::DateTime(DateTime::MIN),
        EdmValue::DateTime(DateTime::MAX),
        EdmValue::DateTime("1601-01-01T00:00:00.0000001Z".parse().unwrap()),
        EdmValue::Binary(EdmBinary::new((0..65_536).map(|i| (i * 7 % 256) as u8).collect::<Vec<_>>()).unwrap()),
        EdmValue::Binary(EdmBinary::new(Vec::new()).unwrap()),
        // 32,768 UTF-16 units, the most a String holds, none of them ASCII (a surrogate pair is two).
        EdmValue::String(EdmString::new("日本🎉".repeat(8_192)).unwrap()),
        EdmValue::String(EdmString::new("").unwrap()),
        EdmValue::String(EdmString::new(" ,\"\r\n\n\r\"\" ").unwrap()),
        EdmValue::Guid(uuid::Uuid::nil()),
        EdmValue::Guid(uuid::Uuid::max()),
        EdmValue::Boolean(false),
    ]
}

/// `n` entities across 173 partitions with mixed schemas: the same name with different types in different
/// entities, keys-only entities, entities with 30 properties, random values of every EDM type (any double from
/// its bits, any DateTime to the tick, text CSV must quote), and every [`boundary_values`] value many times.
pub fn mixed_entities(seed: u64, n: usize) -> Vec<Entity> {
    let mut rng = Rng::new(seed);
    let boundaries = boundary_values();
    (0..n)
        .map(|i| {
            let partition = format!("p{:03}{}", i % 173, if i % 173 == 7 { " ünï,\"code\"" } else { "" });
            let (p, r) = keys(&partition, &format!("{i:06}-{}", rng.text().replace(['\r', '\n', '\u{7f}'], "_")));
            let mut entity = Entity::new(p, r);
            let mut put = |name: &str, value: EdmValue| {
                entity.insert(name.parse().unwrap(), value).unwrap();
            };
            match i % 5 {
                0 => {
                    put("Name", EdmValue::String(EdmString::new(rng.text()).unwrap()));
                    put("Age", EdmValue::Int32(rng.below(120) as i32));
                    put("Score", EdmValue::Double(rng.double()));
                }
                1 => {
                    put("Big", EdmValue::Int64(rng.next_u64() as i64));
                    put("When", EdmValue::DateTime(rng.datetime()));
                    put("Id", EdmValue::Guid(uuid::Uuid::from_u64_pair(rng.next_u64(), rng.next_u64())));
                }
                2 => {
                    // `Name` again, another type.
                    put("Name", EdmValue::Int32(rng.next_u64() as i32));
                    put("Flag", EdmValue::Boolean(rng.below(2) == 0));
                }
                3 => {}
                _ => {
                    for k in 0..30 {
                        put(&format!("P{k}"), rng.value());
                    }
                }
            }
            if i % 50 == 0 {
                put("Edge", boundaries[(i / 50) % boundaries.len()].clone());
            }
            entity
        })
        .collect()
}
