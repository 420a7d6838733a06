//! What the `tablectl` end-to-end tests share: the Azurite of `TABLE_MODEL_AZURITE_ENDPOINT` (skipped with a
//! notice when it is not set, unless `CI` is set, where that fails), unique tables and directories, running the
//! built binary, and entities with every EDM type at its boundaries.
#![allow(dead_code)]

use futures::TryStreamExt as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use table_model::client::{TableClient, TableServiceClient};
use table_model::{
    AccountKey, DateTime, EdmBinary, Entity, PartitionKey, Query, RowKey, TableName, DEVELOPMENT_ACCOUNT_KEY,
};

const ENDPOINT_VAR: &str = "TABLE_MODEL_AZURITE_ENDPOINT";

/// The Azurite of `TABLE_MODEL_AZURITE_ENDPOINT`: its connection string and a client.
pub struct Azurite {
    pub connection_string: String,
    pub service: TableServiceClient,
}

pub fn azurite() -> Option<Azurite> {
    let Ok(url) = std::env::var(ENDPOINT_VAR) else {
        if std::env::var_os("CI").is_some() {
            panic!("{ENDPOINT_VAR} is not set but CI is: start Azurite with `scripts/azurite.sh start`");
        }
        static NOTICE: std::sync::Once = std::sync::Once::new();
        NOTICE.call_once(|| {
            let _ = writeln!(
                std::io::stderr(),
                "note: the tablectl Azurite tests are skipped: {ENDPOINT_VAR} is not set; \
                 run them with `scripts/azurite.sh run cargo test -p table-model-cli`"
            );
        });
        return None;
    };
    let connection_string = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};\
         TableEndpoint={url};"
    );
    let service = TableServiceClient::new(&url, AccountKey::development(), None).expect("the Azurite endpoint");
    Some(Azurite { connection_string, service })
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

/// An empty directory of the test's own.
pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tablectl-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
