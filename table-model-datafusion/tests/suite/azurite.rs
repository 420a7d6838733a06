//! SQL over a table in Azurite: each query's answer through the provider against the same answer computed in
//! plain Rust from the client's own query results, and the pushdown checked at the wire (the `$filter`,
//! `$select` and `$top` each request carried, recorded by a policy in the client's pipeline).
//!
//! Skipped with a notice without `TABLE_MODEL_AZURITE_ENDPOINT`, unless `CI` is set, where that fails; run with
//! `bash scripts/azurite.sh run cargo test -p table-model-datafusion`.

use azure_core::http::ClientOptions;
use datafusion::arrow::datatypes::Schema;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::TryStreamExt as _;
use std::collections::BTreeMap;
use std::sync::Arc;
use table_model::client::{BulkOperation, TableClient, TableServiceClient, TableServiceClientOptions};
use table_model::{AccountKey, DateTime, EdmBinary, EdmValue, Entity, PartitionKey, Query, RowKey, TableName};
use table_model_arrow::infer::overflow_field;
use table_model_arrow::mapping::ColumnKind;
use table_model_datafusion::AzureTable;

use super::{canonical, param, rows, Recorder};
use table_model_test_utils::azurite::endpoint_or_skip;
const ENTITIES: usize = 3000;

/// The queries a [`Recorder`] saw.
trait Queries {
    /// The queries sent since the last call: each request's `$filter`, `$select` and `$top` (`None` when absent).
    fn take(&self) -> Vec<Sent>;
}

impl Queries for Recorder {
    fn take(&self) -> Vec<Sent> {
        self.take_urls()
            .iter()
            .map(|url| Sent { filter: param(url, "$filter"), select: param(url, "$select"), top: param(url, "$top") })
            .collect()
    }
}

#[derive(Debug)]
struct Sent {
    filter: Option<String>,
    select: Option<String>,
    top: Option<String>,
}

fn endpoint() -> Option<String> {
    endpoint_or_skip("DataFusion Azurite tests", "bash scripts/azurite.sh run cargo test -p table-model-datafusion")
}

/// Entity `i` of the test table: every EDM type, each property absent on some entities, boundary values,
/// quotes and non-ASCII in keys and strings, and one property (`Mixed`) of two types.
fn entity(i: usize) -> Entity {
    let pk = match i % 6 {
        0 => "p0".to_owned(),
        1 => "p1".to_owned(),
        2 => "o'k".to_owned(),
        3 => "é-part".to_owned(),
        4 => "p\u{FF61}".to_owned(),
        _ => "p\u{1F600}".to_owned(),
    };
    let rk = format!("r{i:05}");
    let mut e = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap());
    let mut set = |name: &str, value: EdmValue| {
        e.insert(name.parse().unwrap(), value).unwrap();
    };
    if !i.is_multiple_of(7) {
        let v = match i {
            1 => i32::MIN,
            2 => i32::MAX,
            _ => i as i32 - 1500,
        };
        set("I32", EdmValue::Int32(v));
    }
    if !i.is_multiple_of(11) {
        let v = match i {
            1 => i64::MIN,
            2 => i64::MAX,
            _ => (i as i64) * 1_000_000_007,
        };
        set("I64", EdmValue::Int64(v));
    }
    if !i.is_multiple_of(5) {
        let v = match i % 97 {
            3 => f64::NAN,
            4 => -0.0,
            5 => f64::INFINITY,
            _ => i as f64 / 8.0 - 100.0,
        };
        set("Dbl", EdmValue::Double(v));
    }
    if !i.is_multiple_of(3) {
        set("Flag", EdmValue::Boolean(i.is_multiple_of(2)));
    }
    if !i.is_multiple_of(13) {
        let s = match i % 4 {
            0 => format!("s{:03}", i % 200),
            1 => format!("t{:03}'q", i % 200),
            2 => format!("é{:03}", i % 200),
            _ => format!("\u{1F600}{:03}", i % 200),
        };
        set("Str", EdmValue::String(s.try_into().unwrap()));
    }
    if i.is_multiple_of(4) {
        set("Bin", EdmValue::Binary(EdmBinary::new(vec![(i % 256) as u8, 0, 0xff]).unwrap()));
    }
    if i.is_multiple_of(2) {
        set("Gid", EdmValue::Guid(uuid::Uuid::from_u128(i as u128 * 0x9E37_79B9_7F4A_7C15)));
    }
    if !i.is_multiple_of(9) {
        let ticks = 638_400_000_000_000_000 + i as i64 * 600_000_000; // 2024 + i minutes
        set("When", EdmValue::DateTime(DateTime::from_ticks(ticks).unwrap()));
    }
    // Mostly Int32; every 50th an Int64: the column is Int64, and each value keeps its type in @overflow.
    if i % 50 == 1 {
        set("Mixed", EdmValue::Int64(i as i64));
    } else {
        set("Mixed", EdmValue::Int32(i as i32));
    }
    e
}

struct Fixture {
    ctx: SessionContext,
    provider: Arc<AzureTable>,
    recorder: Arc<Recorder>,
    /// Every entity, as the client's own query read it.
    all: Vec<Entity>,
}

async fn fixture(tag: &str, partitions: usize) -> Option<Fixture> {
    let url = endpoint()?;
    let recorder = Arc::new(Recorder::default());
    let options = TableServiceClientOptions {
        client_options: ClientOptions { per_try_policies: vec![recorder.clone()], ..Default::default() },
        ..Default::default()
    };
    let service = TableServiceClient::new(&url, AccountKey::development(), Some(options)).unwrap();
    let name = TableName::new(format!("Sql{tag}{}", std::process::id())).unwrap();
    let table: TableClient = service.create_table_if_not_exists(&name, None).await.unwrap();
    let report = table.bulk_write(BulkOperation::Insert, (0..ENTITIES).map(entity), None).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures.first().map(|f| f.error.to_string()));
    let all: Vec<Entity> = table.query::<Entity>(&Query::new(), None).unwrap().try_collect().await.unwrap();
    assert_eq!(all.len(), ENTITIES);
    let provider = Arc::new(AzureTable::infer(table, ENTITIES).await.unwrap());
    let config = SessionConfig::new().with_target_partitions(partitions);
    let ctx = SessionContext::new_with_config(config);
    ctx.register_table("t", provider.clone()).unwrap();
    recorder.take();
    Some(Fixture { ctx, provider, recorder, all })
}

impl Fixture {
    /// The rows of a query, each as its cells' text joined by `|`.
    async fn rows(&self, sql: &str) -> Vec<String> {
        rows(&self.ctx, sql).await
    }

    /// The keys (`pk/rk`) of the rows `sql` returns, sorted, against those of the entities `keep` selects.
    async fn check_keys(&self, sql: &str, keep: impl Fn(&Entity) -> bool) -> Vec<Sent> {
        let mut got = self.rows(sql).await;
        got.sort();
        let mut expected: Vec<String> =
            self.all.iter().filter(|e| keep(e)).map(|e| format!("{}|{}", e.partition_key(), e.row_key())).collect();
        expected.sort();
        assert_eq!(got.len(), expected.len(), "{sql}");
        assert_eq!(got, expected, "{sql}");
        self.recorder.take()
    }
}

fn int32(e: &Entity, name: &str) -> Option<i32> {
    match e.value(name) {
        Some(EdmValue::Int32(v)) => Some(*v),
        _ => None,
    }
}

fn int64(e: &Entity, name: &str) -> Option<i64> {
    match e.value(name) {
        Some(EdmValue::Int64(v)) => Some(*v),
        _ => None,
    }
}

fn double(e: &Entity, name: &str) -> Option<f64> {
    match e.value(name) {
        Some(EdmValue::Double(v)) => Some(*v),
        _ => None,
    }
}

fn string<'a>(e: &'a Entity, name: &str) -> Option<&'a str> {
    match e.value(name) {
        Some(EdmValue::String(v)) => Some(v.as_str()),
        _ => None,
    }
}

/// Every filter of the requests of a scan carries `part`.
fn filters_carry(sent: &[Sent], part: &str) {
    assert!(!sent.is_empty());
    for s in sent {
        let filter = s.filter.as_deref().unwrap_or("");
        assert!(filter.contains(part), "the $filter `{filter}` does not carry `{part}`");
    }
}

#[tokio::test]
async fn key_filters_are_pushed_and_exact() {
    let Some(f) = fixture("Keys", 4).await else { return };
    let pk = |e: &Entity| e.partition_key().as_str().to_owned();
    let rk = |e: &Entity| e.row_key().as_str().to_owned();
    let q = |w: &str| format!("SELECT \"PartitionKey\", \"RowKey\" FROM t WHERE {w}");

    // A point query reads one entity: one request, the keys in its $filter.
    let sent = f
        .check_keys(&q("\"PartitionKey\" = 'p1' AND \"RowKey\" = 'r00007'"), |e| pk(e) == "p1" && rk(e) == "r00007")
        .await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    filters_carry(&sent, "PartitionKey eq 'p1' and RowKey eq 'r00007'");

    let sent = f.check_keys(&q("\"PartitionKey\" = 'o''k'"), |e| pk(e) == "o'k").await;
    filters_carry(&sent, "PartitionKey eq 'o''k'");
    let sent = f
        .check_keys(&q("\"PartitionKey\" = 'é-part' AND \"RowKey\" >= 'r02000'"), |e| {
            pk(e) == "é-part" && rk(e).as_str() >= "r02000"
        })
        .await;
    filters_carry(&sent, "RowKey ge 'r02000'");
    f.check_keys(&q("\"RowKey\" < 'r00100'"), |e| rk(e).as_str() < "r00100").await;
    f.check_keys(&q("\"RowKey\" > 'r02900'"), |e| rk(e).as_str() > "r02900").await;
    f.check_keys(&q("\"RowKey\" <= 'r00010'"), |e| rk(e).as_str() <= "r00010").await;
    f.check_keys(&q("\"RowKey\" <> 'r00010' AND \"PartitionKey\" = 'p0'"), |e| rk(e) != "r00010" && pk(e) == "p0")
        .await;
    let sent = f
        .check_keys(&q("\"RowKey\" BETWEEN 'r00100' AND 'r00200'"), |e| ("r00100".."r00201").contains(&rk(e).as_str()))
        .await;
    filters_carry(&sent, "RowKey ge 'r00100' and RowKey le 'r00200'");
    let sent = f.check_keys(&q("\"PartitionKey\" IN ('p0', 'o''k')"), |e| pk(e) == "p0" || pk(e) == "o'k").await;
    filters_carry(&sent, "PartitionKey eq 'p0' or PartitionKey eq 'o''k'");
    let sent = f.check_keys(&q("\"RowKey\" LIKE 'r001%'"), |e| rk(e).starts_with("r001")).await;
    filters_carry(&sent, "RowKey ge 'r001' and RowKey lt 'r002'");
    // A prefix ending in a character above U+FFFF: the UTF-16 range is exact all the same.
    f.check_keys(&q("\"PartitionKey\" LIKE 'p\u{1F600}%'"), |e| pk(e).starts_with("p\u{1F600}")).await;

    // Ordering against a literal at or above U+D800 is not pushed: UTF-16 order (the service's) is not UTF-8's
    // (Arrow's), and DataFusion's own comparison decides.
    let sent = f.check_keys(&q("\"PartitionKey\" > 'p\u{FF61}'"), |e| pk(e).as_str() > "p\u{FF61}").await;
    // The plan's first probe carries the pushed filter, here none (the later requests carry the ranges).
    assert_eq!(sent[0].filter, None, "{sent:?}");

    // An IN list past what a filter holds is left to DataFusion: right answer, no oversized $filter.
    let list: Vec<String> = (0..40).map(|i| format!("'r{:05}'", i * 3)).collect();
    let sent = f
        .check_keys(&q(&format!("\"RowKey\" IN ({})", list.join(", "))), |e| {
            rk(e)[1..].parse::<usize>().unwrap() % 3 == 0 && rk(e)[1..].parse::<usize>().unwrap() < 120
        })
        .await;
    assert_eq!(sent[0].filter, None, "{sent:?}");
    assert!(sent.iter().all(|s| !s.filter.as_deref().unwrap_or("").contains("RowKey eq")), "{sent:?}");
}

#[tokio::test]
async fn property_filters_projection_and_limit() {
    let Some(f) = fixture("Props", 3).await else { return };
    let q = |w: &str| format!("SELECT \"PartitionKey\", \"RowKey\" FROM t WHERE {w}");

    let sent = f.check_keys(&q("\"I32\" > 100"), |e| int32(e, "I32").is_some_and(|v| v > 100)).await;
    filters_carry(&sent, "I32 gt 100");
    for s in &sent {
        // The projection is the keys and the filter's column (the filter is Inexact: DataFusion checks it).
        assert_eq!(s.select.as_deref().map(|s| s.starts_with("PartitionKey,RowKey")), Some(true), "{s:?}");
    }
    let sent = f.check_keys(&q("\"I64\" = 7000000049"), |e| int64(e, "I64") == Some(7_000_000_049)).await;
    filters_carry(&sent, "I64 eq 7000000049L");
    f.check_keys(&q("\"I64\" < -5"), |e| int64(e, "I64").is_some_and(|v| v < -5)).await;
    // Doubles: `<` against a non-zero literal is pushed; `>` is not (NaN); NaN, -0.0 and infinity are in the data.
    let sent = f.check_keys(&q("\"Dbl\" < 1.5"), |e| double(e, "Dbl").is_some_and(|v| v < 1.5)).await;
    filters_carry(&sent, "Dbl lt 1.5");
    let sent = f.check_keys(&q("\"Dbl\" > 200.0"), |e| double(e, "Dbl").is_some_and(|v| v.is_nan() || v > 200.0)).await;
    assert!(sent.iter().all(|s| s.filter.is_none() || !s.filter.as_deref().unwrap().contains("Dbl")), "{sent:?}");
    f.check_keys(&q("\"Flag\" = true"), |e| e.value("Flag") == Some(&EdmValue::Boolean(true))).await;
    let sent = f.check_keys(&q("\"Str\" = 't007''q'"), |e| string(e, "Str") == Some("t007'q")).await;
    filters_carry(&sent, "Str eq 't007''q'");
    f.check_keys(&q("\"Str\" LIKE 'é1%'"), |e| string(e, "Str").is_some_and(|s| s.starts_with("é1"))).await;
    f.check_keys(&q("\"Str\" < 't'"), |e| string(e, "Str").is_some_and(|s| s < "t")).await;
    // 2024-01-06T00:00:00Z is tick 638,400,960,000,000,000.
    let sent = f
        .check_keys(&q("\"When\" >= TIMESTAMP '2024-01-05T00:00:00Z' + INTERVAL '1 day'"), |e| match e.value("When") {
            Some(EdmValue::DateTime(d)) => d.ticks() >= 638_400_960_000_000_000,
            _ => false,
        })
        .await;
    filters_carry(&sent, "When ge datetime'2024-01-06T00:00:00.0000000Z'");
    // IS NULL: absent properties (not pushed: no $filter says "absent").
    let sent = f.check_keys(&q("\"Bin\" IS NULL"), |e| e.value("Bin").is_none()).await;
    assert_eq!(sent[0].filter, None, "{sent:?}");
    assert!(sent.iter().all(|s| !s.filter.as_deref().unwrap_or("").contains("Bin")), "{sent:?}");
    f.check_keys(&q("\"I32\" IS NOT NULL AND \"Str\" IS NULL"), |e| {
        int32(e, "I32").is_some() && e.value("Str").is_none()
    })
    .await;
    // A property of two types is never NULL for one of them: `Mixed` (Int32, and Int64 in every 50th) is an
    // Int64 column, and every value compares (`docs/rules.md` §3.4); the filter is not sent.
    let sent = f
        .check_keys(&q("\"Mixed\" < 100"), |e| match e.value("Mixed") {
            Some(EdmValue::Int32(v)) => *v < 100,
            Some(EdmValue::Int64(v)) => *v < 100,
            _ => false,
        })
        .await;
    assert!(sent.iter().all(|s| !s.filter.as_deref().unwrap_or("").contains("Mixed")), "{sent:?}");

    // LIMIT: `$top` and an early stop (one range, fewer entities than the table).
    let rows = f.rows("SELECT \"RowKey\" FROM t WHERE \"PartitionKey\" = 'p1' LIMIT 5").await;
    assert_eq!(rows.len(), 5);
    let sent = f.recorder.take();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].top.as_deref(), Some("5"));
    assert_eq!(sent[0].select.as_deref(), Some("PartitionKey,RowKey"));

    // Projection: `$select` names only the projected columns.
    let rows = f.rows("SELECT \"Str\" FROM t WHERE \"PartitionKey\" = 'p0' AND \"RowKey\" = 'r00006'").await;
    assert_eq!(rows, ["é006"]);
    let sent = f.recorder.take();
    assert!(sent.iter().all(|s| s.select.as_deref() == Some("PartitionKey,RowKey,Str")), "{sent:?}");
}

#[tokio::test]
async fn aggregates_group_by_and_order_by() {
    let Some(f) = fixture("Agg", 4).await else { return };

    // count(*) over everything, then over one partition: the partition's keys only, in $select and $filter.
    assert_eq!(f.rows("SELECT count(*) FROM t").await, [ENTITIES.to_string()]);
    f.recorder.take();
    let p1 = f.all.iter().filter(|e| e.partition_key().as_str() == "p1").count();
    assert_eq!(f.rows("SELECT count(*) FROM t WHERE \"PartitionKey\" = 'p1'").await, [p1.to_string()]);
    let sent = f.recorder.take();
    filters_carry(&sent, "PartitionKey eq 'p1'");
    assert!(sent.iter().all(|s| s.select.as_deref() == Some("PartitionKey,RowKey")), "{sent:?}");

    // GROUP BY with sums, counts of present values, min and max.
    /// Rows, present `I32`s, their sum, min and max.
    type Group = (usize, usize, i64, Option<i32>, Option<i32>);
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for e in &f.all {
        let g = groups.entry(e.partition_key().as_str().to_owned()).or_default();
        g.0 += 1;
        if let Some(v) = int32(e, "I32") {
            g.1 += 1;
            g.2 += i64::from(v);
            g.3 = Some(g.3.map_or(v, |m| m.min(v)));
            g.4 = Some(g.4.map_or(v, |m| m.max(v)));
        }
    }
    let expected: Vec<String> = groups
        .iter()
        .map(|(k, (n, c, s, lo, hi))| format!("{k}|{n}|{c}|{s}|{}|{}", lo.unwrap(), hi.unwrap()))
        .collect();
    let got = f
        .rows(
            "SELECT \"PartitionKey\", count(*), count(\"I32\"), sum(CAST(\"I32\" AS BIGINT)), min(\"I32\"), \
             max(\"I32\") FROM t GROUP BY \"PartitionKey\" ORDER BY \"PartitionKey\"",
        )
        .await;
    // SQL orders strings by UTF-8 bytes, which is BTreeMap's order of `String`s.
    assert_eq!(got, expected);

    // ORDER BY ... DESC LIMIT within a partition.
    let mut keys: Vec<&str> =
        f.all.iter().filter(|e| e.partition_key().as_str() == "o'k").map(|e| e.row_key().as_str()).collect();
    keys.sort_unstable_by(|a, b| b.cmp(a));
    let got = f.rows("SELECT \"RowKey\" FROM t WHERE \"PartitionKey\" = 'o''k' ORDER BY \"RowKey\" DESC LIMIT 3").await;
    assert_eq!(got, keys[..3]);

    // An aggregate over a filtered property.
    let false_count = f.all.iter().filter(|e| e.value("Flag") == Some(&EdmValue::Boolean(false))).count();
    assert_eq!(f.rows("SELECT count(*) FROM t WHERE \"Flag\" = false").await, [false_count.to_string()]);

    // Scanned with 4 partitions, each its own range: the requests of a full scan carry key ranges.
    f.recorder.take();
    assert_eq!(f.rows("SELECT count(\"Gid\") FROM t").await.len(), 1);
    let sent = f.recorder.take();
    let ranged = sent.iter().filter(|s| s.filter.as_deref().is_some_and(|f| f.contains("PartitionKey"))).count();
    assert!(ranged >= 2, "{sent:?}");
}

/// [`canonical`] with the entity's Timestamp.
fn canonical_with_timestamp(e: &Entity) -> String {
    format!("{}|{:?}", canonical(e), e.timestamp())
}

#[tokio::test]
async fn select_star_reads_every_entity_bit_exact_and_a_declared_schema_types_the_filter() {
    let Some(f) = fixture("Star", 4).await else { return };

    // Every entity through the provider's record batches and back: the same entities, bit for bit (the
    // overflow column brings back the Int64s of the Int32 column `Mixed`).
    let batches = f.ctx.sql("SELECT * FROM t").await.unwrap().collect().await.unwrap();
    let mut got: Vec<String> = Vec::new();
    for batch in &batches {
        let entities = table_model_arrow::batch::entities(batch, f.provider.entity_schema()).unwrap();
        got.extend(entities.iter().map(canonical_with_timestamp));
    }
    got.sort();
    let mut expected: Vec<String> = f.all.iter().map(canonical_with_timestamp).collect();
    expected.sort();
    assert_eq!(got.len(), ENTITIES);
    assert_eq!(got, expected);
    let sent = f.recorder.take();
    // A full scan selects no properties (the overflow column is projected) and reads its ranges.
    assert!(sent.iter().skip_while(|s| s.select.is_some()).all(|s| s.select.is_none()), "{sent:?}");

    // More filters on each type, each against the client's answer.
    let q = |w: &str| format!("SELECT \"PartitionKey\", \"RowKey\" FROM t WHERE {w}");
    let sent = f
        .check_keys(&q("\"Bin\" = X'0c00ff'"), |e| {
            e.value("Bin") == Some(&EdmValue::Binary(EdmBinary::new(vec![12, 0, 255]).unwrap()))
        })
        .await;
    filters_carry(&sent, "Bin eq X'0c00ff'");
    let sent = f
        .check_keys(&q("\"I64\" BETWEEN -1 AND 10000000070"), |e| {
            int64(e, "I64").is_some_and(|v| (-1..=10_000_000_070).contains(&v))
        })
        .await;
    filters_carry(&sent, "I64 ge -1L and I64 le 10000000070L");
    let sent =
        f.check_keys(&q("\"I32\" IN (-1499, -1000, 7)"), |e| matches!(int32(e, "I32"), Some(-1499 | -1000 | 7))).await;
    filters_carry(&sent, "I32 eq -1499 or I32 eq -1000 or I32 eq 7");
    let guid = uuid::Uuid::from_u128(8 * 0x9E37_79B9_7F4A_7C15);
    let hex: String = guid.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let sent = f
        .check_keys(&q(&format!("\"Gid\" = arrow_cast(X'{hex}', 'FixedSizeBinary(16)')")), |e| {
            e.value("Gid") == Some(&EdmValue::Guid(guid))
        })
        .await;
    filters_carry(&sent, &format!("Gid eq guid'{guid}'"));
    f.check_keys(&q("\"Flag\" = false AND \"Dbl\" < 10.0 AND \"PartitionKey\" LIKE 'p%'"), |e| {
        e.value("Flag") == Some(&EdmValue::Boolean(false))
            && double(e, "Dbl").is_some_and(|v| v < 10.0)
            && e.partition_key().as_str().starts_with('p')
    })
    .await;

    // A LIMIT without a filter: one range, one request of `$top`, no plan.
    assert_eq!(f.rows("SELECT \"RowKey\" FROM t LIMIT 10").await.len(), 10);
    let sent = f.recorder.take();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].top.as_deref(), Some("10"));
    // Past a page: no `$top` (at most 1,000), and the scan stops in the second page of 1,000.
    assert_eq!(f.rows("SELECT \"RowKey\" FROM t LIMIT 1500").await.len(), 1500);
    let sent = f.recorder.take();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent.iter().all(|s| s.top.is_none() && s.filter.is_none()), "{sent:?}");

    // A schema declared by hand, of two properties: every other property goes to the overflow column, and
    // the filter is typed as the declared column says. (Not an Int64 column over Int32 values: Azurite answers
    // `500` to an Int64 literal compared with an Int32 property.)
    let schema = Schema::new(vec![
        ColumnKind::String.field("PartitionKey", false),
        ColumnKind::String.field("RowKey", false),
        ColumnKind::Int64.field("I64", true),
        ColumnKind::String.field("Str", true),
        overflow_field(),
    ]);
    let declared = AzureTable::new(f.provider.client().clone(), Arc::new(schema)).unwrap();
    f.ctx.register_table("d", Arc::new(declared)).unwrap();
    let expected = f.all.iter().filter(|e| int64(e, "I64").is_some_and(|v| v > 1_000_000_007_000)).count();
    assert!(expected > 0);
    let got = f.rows("SELECT count(*) FROM d WHERE \"I64\" > 1000000007000").await;
    assert_eq!(got, [expected.to_string()]);
    let sent = f.recorder.take();
    filters_carry(&sent, "I64 gt 1000000007000L");
    // The plan's probes read keys; the ranges read the keys and the one column DataFusion checks again.
    let scans: Vec<&Sent> = sent.iter().filter(|s| s.top.is_none()).collect();
    assert!(!scans.is_empty() && scans.iter().all(|s| s.select.as_deref() == Some("PartitionKey,RowKey,I64")));
    let with_str = f.all.iter().filter(|e| string(e, "Str").is_some()).count();
    assert_eq!(f.rows("SELECT count(\"Str\") FROM d").await, [with_str.to_string()]);

    // The schema of a derived struct: its exact types.
    #[derive(table_model::TableEntity)]
    #[allow(dead_code)]
    struct Row {
        #[table(partition_key)]
        pk: String,
        #[table(row_key)]
        rk: String,
        #[table(rename = "I32")]
        i32: Option<i32>,
        #[table(rename = "When")]
        when: Option<table_model::DateTime>,
    }
    let typed = AzureTable::for_entity::<Row>(f.provider.client().clone()).unwrap();
    f.ctx.register_table("typed", Arc::new(typed)).unwrap();
    let expected: i64 = f.all.iter().filter_map(|e| int32(e, "I32")).map(i64::from).sum();
    let with_when = f.all.iter().filter(|e| e.value("When").is_some()).count();
    let got = f.rows("SELECT sum(CAST(\"I32\" AS BIGINT)), count(\"When\"), count(\"Timestamp\") FROM typed").await;
    assert_eq!(got, [format!("{expected}|{with_when}|{ENTITIES}")]);
}
