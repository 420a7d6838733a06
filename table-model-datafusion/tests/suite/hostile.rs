//! Hostile SQL over hostile data in Azurite, and a second table joined with the first: keys and literals with
//! quotes, `%`, `_` and non-ASCII (where UTF-16 order is not UTF-8's), `LIKE` with escapes, `IN` lists of 20,
//! 200 and 2,000 keys (split into point queries up to `IN_SPLIT_MAX`, left to DataFusion past it), each answer
//! against the same answer computed in plain Rust from the client's own query results.
//!
//! Skipped with a notice without `TABLE_MODEL_AZURITE_ENDPOINT`, unless `CI` is set, where that fails; run with
//! `bash scripts/azurite.sh run cargo test -p table-model-datafusion`.

use azure_core::http::ClientOptions;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::TryStreamExt as _;
use std::collections::BTreeMap;
use std::sync::Arc;
use table_model::client::{BulkOperation, TableClient, TableServiceClient, TableServiceClientOptions};
use table_model::{AccountKey, DateTime, EdmBinary, EdmValue, Entity, PartitionKey, Query, RowKey, TableName};
use table_model_datafusion::pushdown::IN_SPLIT_MAX;
use table_model_datafusion::AzureTable;

use super::{param, rows, Recorder};
use table_model_test_utils::azurite::endpoint_or_skip;

/// The filters a [`Recorder`] saw.
trait Filters {
    /// The `$filter` of every try sent since the last call (`""` when none).
    fn take(&self) -> Vec<String>;
}

impl Filters for Recorder {
    fn take(&self) -> Vec<String> {
        self.take_urls().iter().map(|url| param(url, "$filter").unwrap_or_default()).collect()
    }
}

/// Prefixes of hostile PartitionKeys: quotes, `%`, `_`, non-ASCII in and out of the BMP.
const PREFIXES: [&str; 8] = ["it's", "say \"hi\"", "100%", "a_b", "é", "日本", "p\u{FF61}", "p\u{1F600}"];
const A_ENTITIES: usize = 1200;
const B_ENTITIES: usize = 600;

fn partition(i: usize) -> String {
    format!("{}{:03}", PREFIXES[i % 8], i % 300)
}

/// Entity `i` of table `a`: 600 partitions of two entities, hostile RowKeys and strings.
fn a_entity(i: usize) -> Entity {
    let rk = format!("r{i:04}'\"%_é\u{1F600}");
    let mut e = Entity::new(PartitionKey::new(partition(i)).unwrap(), RowKey::new(rk).unwrap());
    e.insert("N".parse().unwrap(), EdmValue::Int32(i as i32)).unwrap();
    if !i.is_multiple_of(3) {
        let s = ["it's", "say \"hi\"", "100%", "a_b", "aXb", "\u{FF61}", "\u{1F600}", "é"][i % 8];
        e.insert("Str".parse().unwrap(), EdmValue::String(format!("{s}{}", i % 5).try_into().unwrap())).unwrap();
    }
    e
}

/// Entity `i` of table `b`: the partitions of `a` (every other one), every EDM type, each absent on some.
fn b_entity(i: usize) -> Entity {
    let mut e = Entity::new(PartitionKey::new(partition(i * 2)).unwrap(), RowKey::new(format!("b{i:04}")).unwrap());
    let mut set = |name: &str, value: EdmValue| {
        e.insert(name.parse().unwrap(), value).unwrap();
    };
    if !i.is_multiple_of(5) {
        set("I64", EdmValue::Int64(i as i64 * 1_000_000_007 - 300_000_000_000));
    }
    if !i.is_multiple_of(4) {
        set("Dbl", EdmValue::Double([f64::NAN, -0.5, f64::INFINITY, i as f64][i % 4]));
    }
    if i.is_multiple_of(2) {
        set("Flag", EdmValue::Boolean(i.is_multiple_of(3)));
    }
    if i.is_multiple_of(3) {
        set("Bin", EdmValue::Binary(EdmBinary::new(vec![i as u8, 0, 0xff]).unwrap()));
    }
    if !i.is_multiple_of(6) {
        set("Gid", EdmValue::Guid(uuid::Uuid::from_u128(i as u128 * 0x9E37_79B9_7F4A_7C15)));
    }
    if !i.is_multiple_of(7) {
        set("When", EdmValue::DateTime(DateTime::from_ticks(638_400_000_000_000_001 + i as i64 * 7).unwrap()));
    }
    if !i.is_multiple_of(9) {
        set("Note", EdmValue::String(format!("b'{i}\"").try_into().unwrap()));
    }
    e
}

struct Fixture {
    ctx: SessionContext,
    recorder: Arc<Recorder>,
    a: Vec<Entity>,
    b: Vec<Entity>,
}

async fn load(service: &TableServiceClient, tag: &str, entities: impl Iterator<Item = Entity>) -> TableClient {
    let name = TableName::new(format!("Hos{tag}{}", std::process::id())).unwrap();
    let table = service.create_table_if_not_exists(&name, None).await.unwrap();
    let report = table.bulk_write(BulkOperation::Insert, entities, None).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures.first().map(|f| f.error.to_string()));
    table
}

async fn fixture(tag: &str) -> Option<Fixture> {
    let url = endpoint_or_skip(
        "DataFusion Azurite tests",
        "bash scripts/azurite.sh run cargo test -p table-model-datafusion",
    )?;
    let recorder = Arc::new(Recorder::default());
    let options = TableServiceClientOptions {
        client_options: ClientOptions { per_try_policies: vec![recorder.clone()], ..Default::default() },
        ..Default::default()
    };
    let service = TableServiceClient::new(&url, AccountKey::development(), Some(options)).unwrap();
    let a = load(&service, &format!("{tag}A"), (0..A_ENTITIES).map(a_entity)).await;
    let b = load(&service, &format!("{tag}B"), (0..B_ENTITIES).map(b_entity)).await;
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
    let mut all = Vec::new();
    for (name, table) in [("a", a), ("b", b)] {
        let entities: Vec<Entity> = table.query::<Entity>(&Query::new(), None).unwrap().try_collect().await.unwrap();
        all.push(entities);
        ctx.register_table(name, Arc::new(AzureTable::infer(table, 1000).await.unwrap())).unwrap();
    }
    let b = all.pop().unwrap();
    let a = all.pop().unwrap();
    assert_eq!((a.len(), b.len()), (A_ENTITIES, B_ENTITIES));
    recorder.take();
    Some(Fixture { ctx, recorder, a, b })
}

impl Fixture {
    async fn rows(&self, sql: &str) -> Vec<String> {
        rows(&self.ctx, sql).await
    }

    /// The keys of the rows of `a` that `where_` keeps, against those `keep` keeps; the filters sent.
    async fn check(&self, where_: &str, keep: impl Fn(&Entity) -> bool) -> Vec<String> {
        let sql = format!("SELECT \"PartitionKey\", \"RowKey\" FROM a WHERE {where_}");
        let mut got = self.rows(&sql).await;
        got.sort();
        let mut expected: Vec<String> =
            self.a.iter().filter(|e| keep(e)).map(|e| format!("{}|{}", e.partition_key(), e.row_key())).collect();
        expected.sort();
        assert_eq!(got, expected, "{sql}");
        self.recorder.take()
    }
}

/// A SQL string literal.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// SQL's `LIKE` with `\` as its escape, in plain Rust.
fn like(s: &str, pattern: &str) -> bool {
    fn go(s: &[char], p: &[char]) -> bool {
        match p {
            [] => s.is_empty(),
            ['%', rest @ ..] => (0..=s.len()).any(|i| go(&s[i..], rest)),
            ['_', rest @ ..] => !s.is_empty() && go(&s[1..], rest),
            ['\\', c, rest @ ..] | [c, rest @ ..] => s.first() == Some(c) && go(&s[1..], rest),
        }
    }
    go(&s.chars().collect::<Vec<_>>(), &pattern.chars().collect::<Vec<_>>())
}

fn string<'a>(e: &'a Entity, name: &str) -> Option<&'a str> {
    match e.value(name) {
        Some(EdmValue::String(v)) => Some(v.as_str()),
        _ => None,
    }
}

#[tokio::test]
async fn hostile_keys_literals_and_in_lists() {
    let Some(f) = fixture("H").await else { return };
    let pk = |e: &Entity| e.partition_key().as_str().to_owned();
    let rk = |e: &Entity| e.row_key().as_str().to_owned();

    // Quotes, `%`, `_` and non-ASCII in key equalities: pushed, escaped, exact.
    for key in ["it's008", "say \"hi\"001", "100%002", "a_b003", "é004", "日本005", "p\u{FF61}006", "p\u{1F600}007"]
    {
        let sent = f.check(&format!("\"PartitionKey\" = {}", quote(key)), |e| pk(e) == key).await;
        assert!(sent.iter().all(|s| s.contains("PartitionKey eq ")), "{sent:?}");
    }
    let key = rk(&f.a[17]);
    f.check(&format!("\"RowKey\" = {}", quote(&key)), |e| rk(e) == key).await;
    // A key no entity can have ('/' is not allowed in keys): no row, no error.
    f.check("\"PartitionKey\" = 'a/b'", |_| false).await;

    // LIKE: plain prefixes are pushed; `%` and `_` inside, escaped or not, are DataFusion's.
    for pattern in ["it''s%", "100\\%%", "a\\_b%", "a_b%", "%\u{1F600}%", "p\u{1F600}0%", "say \"hi\"%"] {
        let plain = pattern.replace("''", "'");
        f.check(&format!("\"PartitionKey\" LIKE '{pattern}'"), |e| like(&pk(e), &plain)).await;
    }
    for pattern in ["100\\%%", "a_b%", "%\"%", "it''s_"] {
        let plain = pattern.replace("''", "'");
        f.check(&format!("\"Str\" LIKE '{pattern}'"), |e| string(e, "Str").is_some_and(|s| like(s, &plain))).await;
    }
    // Ordering across the planes: SQL's order (UTF-8) whatever the service's (UTF-16).
    f.check("\"PartitionKey\" > 'p\u{FF61}'", |e| pk(e).as_str() > "p\u{FF61}").await;
    f.check("\"PartitionKey\" < 'p\u{1F600}' AND \"PartitionKey\" >= 'p'", |e| {
        (pk(e).as_str() < "p\u{1F600}") && pk(e).as_str() >= "p"
    })
    .await;
    f.check("\"Str\" = 'say \"hi\"1'", |e| string(e, "Str") == Some("say \"hi\"1")).await;

    // IN lists on PartitionKey: 20 and 200 values are point queries, one request each (absent keys among them);
    // 2,000 is past IN_SPLIT_MAX, one scan with DataFusion's filter.
    const { assert!(IN_SPLIT_MAX < 2000) };
    for n in [20, 200, 2000] {
        // Distinct keys (the limit counts distinct values), every tenth and all past 600 in no entity.
        let key = |i: usize| if i % 10 == 9 || i >= 600 { format!("none{i}") } else { partition(i * 7 % 600) };
        let keys: Vec<String> = (0..n).map(key).collect();
        let list = keys.iter().map(|k| quote(k)).collect::<Vec<_>>().join(", ");
        let sent = f.check(&format!("\"PartitionKey\" IN ({list})"), |e| keys.contains(&pk(e))).await;
        let distinct = keys.iter().collect::<std::collections::BTreeSet<_>>().len();
        if n <= IN_SPLIT_MAX {
            assert_eq!(sent.len(), distinct, "{n}: {sent:?}");
            assert!(sent.iter().all(|s| s.starts_with("PartitionKey eq ") && !s.contains(" or ")), "{sent:?}");
        } else {
            // The plan's probes and its ranges, none a key's query.
            assert!(sent.len() < 20 && sent.iter().all(|s| !s.starts_with("PartitionKey eq")), "{n}: {sent:?}");
        }
    }
    // In one partition, the point queries are read several at a time, not one after the other.
    let single = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
    single.register_table("a", f.ctx.table_provider("a").await.unwrap()).unwrap();
    let list = (0..40).map(|i| quote(&partition(i))).collect::<Vec<_>>().join(", ");
    f.recorder.take_most_in_flight();
    let counted = rows(&single, &format!("SELECT count(*) FROM a WHERE \"PartitionKey\" IN ({list})")).await;
    let expected = f.a.iter().filter(|e| (0..40).any(|i| pk(e) == partition(i))).count();
    assert_eq!(counted, [expected.to_string()]);
    let most = f.recorder.take_most_in_flight();
    assert!(most > 1, "the 40 point queries of one partition were read one at a time");
    f.recorder.take();
    // A LIMIT over a split list: each query stops at it, and DataFusion keeps the limit.
    let list = (0..20).map(|i| quote(&partition(i))).collect::<Vec<_>>().join(", ");
    let rows = f.rows(&format!("SELECT \"RowKey\" FROM a WHERE \"PartitionKey\" IN ({list}) LIMIT 3")).await;
    assert_eq!(rows.len(), 3);
    f.recorder.take();
    // On RowKey within one partition: point reads; with another pushed filter, joined to each.
    let p = partition(8);
    let keys: Vec<String> = f.a.iter().filter(|e| pk(e) == p).map(rk).chain((0..18).map(|i| format!("x{i}"))).collect();
    let list = keys.iter().map(|k| quote(k)).collect::<Vec<_>>().join(", ");
    let sent = f
        .check(&format!("\"PartitionKey\" = {} AND \"RowKey\" IN ({list}) AND \"N\" > 0", quote(&p)), |e| {
            pk(e) == p && keys.contains(&rk(e))
        })
        .await;
    assert_eq!(sent.len(), keys.len(), "{sent:?}");
    assert!(sent.iter().all(|s| s.contains("RowKey eq ") && s.contains("N gt 0")), "{sent:?}");
    // On RowKey alone: one scan, DataFusion's filter (a query per key would scan the table each time).
    let keys: Vec<String> = f.a.iter().step_by(6).map(rk).collect();
    assert_eq!(keys.len(), 200);
    let list = keys.iter().map(|k| quote(k)).collect::<Vec<_>>().join(", ");
    let sent = f.check(&format!("\"RowKey\" IN ({list})"), |e| keys.contains(&rk(e))).await;
    assert!(sent.iter().all(|s| !s.contains("RowKey eq")), "{sent:?}");
    // NOT IN is never split, and its answer is right.
    f.check(&format!("\"RowKey\" NOT IN ({list}) AND \"N\" < 100"), |e| {
        !keys.contains(&rk(e)) && e.value("N").is_some_and(|n| matches!(n, EdmValue::Int32(v) if *v < 100))
    })
    .await;
}

#[tokio::test]
async fn joins_of_two_tables() {
    let Some(f) = fixture("J").await else { return };

    // Inner join on PartitionKey, against a nested loop in plain Rust.
    let mut expected: Vec<String> = Vec::new();
    for x in &f.a {
        for y in f.b.iter().filter(|y| y.partition_key() == x.partition_key()) {
            expected.push(format!("{}|{}|{}", x.partition_key(), x.row_key(), y.row_key()));
        }
    }
    expected.sort();
    assert!(!expected.is_empty());
    let mut got = f
        .rows("SELECT a.\"PartitionKey\", a.\"RowKey\", b.\"RowKey\" FROM a JOIN b ON a.\"PartitionKey\" = b.\"PartitionKey\"")
        .await;
    got.sort();
    assert_eq!(got, expected);

    // A join with an aggregate: per partition of `b`, rows of `a`, the sum of `b.I64` over the pairs, the present
    // Binary and Guid values, in SQL's order of strings (UTF-8, BTreeMap's).
    type Group = (usize, i64, usize, usize);
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for x in &f.a {
        for y in f.b.iter().filter(|y| y.partition_key() == x.partition_key()) {
            let g = groups.entry(y.partition_key().as_str().to_owned()).or_default();
            g.0 += 1;
            if let Some(EdmValue::Int64(v)) = y.value("I64") {
                g.1 += v;
            }
            g.2 += usize::from(y.value("Bin").is_some());
            g.3 += usize::from(y.value("Gid").is_some());
        }
    }
    let expected: Vec<String> = groups
        .iter()
        .map(|(k, (n, s, bin, gid))| {
            let sum = if f.b.iter().any(|y| y.partition_key().as_str() == k && y.value("I64").is_some()) {
                s.to_string()
            } else {
                "NULL".to_owned()
            };
            format!("{k}|{n}|{sum}|{bin}|{gid}")
        })
        .collect();
    let got = f
        .rows(
            "SELECT b.\"PartitionKey\", count(*), sum(b.\"I64\"), count(b.\"Bin\"), count(b.\"Gid\") \
             FROM a JOIN b ON a.\"PartitionKey\" = b.\"PartitionKey\" GROUP BY b.\"PartitionKey\" \
             ORDER BY b.\"PartitionKey\"",
        )
        .await;
    assert_eq!(got, expected);

    // A join filtered on both sides, with a hostile literal and a key IN list of `b` past the budget.
    let keys: Vec<String> = (0..30).map(|i| partition(i * 2)).collect();
    let list = keys.iter().map(|k| quote(k)).collect::<Vec<_>>().join(", ");
    let mut expected: Vec<String> = Vec::new();
    for x in f.a.iter().filter(|x| string(x, "Str").is_some_and(|s| s.starts_with("it's"))) {
        for y in f
            .b
            .iter()
            .filter(|y| y.partition_key() == x.partition_key() && keys.contains(&y.partition_key().as_str().to_owned()))
        {
            expected.push(format!("{}|{}", x.row_key(), y.row_key()));
        }
    }
    expected.sort();
    assert!(!expected.is_empty());
    let mut got = f
        .rows(&format!(
            "SELECT a.\"RowKey\", b.\"RowKey\" FROM a JOIN b ON a.\"PartitionKey\" = b.\"PartitionKey\" \
             WHERE a.\"Str\" LIKE 'it''s%' AND b.\"PartitionKey\" IN ({list})"
        ))
        .await;
    got.sort();
    assert_eq!(got, expected);
}
