//! DataFusion's filter expressions as the service's typed `$filter` ([`Filter`]), and whether the service's
//! answer is exactly SQL's.
//!
//! A filter is pushed only when the entities the service returns for it are a superset of the rows SQL keeps
//! (never fewer: DataFusion cannot bring back a row the service dropped). It is reported
//! [`Exact`](TableProviderFilterPushDown::Exact) when they are the same rows, so DataFusion does not check it
//! again; [`Inexact`](TableProviderFilterPushDown::Inexact) when the service may return more; and
//! [`Unsupported`](TableProviderFilterPushDown::Unsupported) (DataFusion applies it alone) otherwise. The
//! decisions:
//!
//! - **Keys.** `PartitionKey` and `RowKey` are on every entity and always strings, so their comparisons
//!   (`=`, `<>`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN`, `LIKE 'prefix%'`) are `Exact`, with one exception below.
//! - **Other properties are `Inexact`.** A value of another EDM type than its column's sits in the overflow
//!   column and is `NULL` to SQL, but the service may still compare it (an `Edm.Int64` against an Int32 literal,
//!   a DateTime of 1601 outside a timestamp column's range): the service's answer is a superset, never the same
//!   rows for certain. An absent property is `NULL` to SQL and matches no comparison of the service's
//!   (`docs/rules.md` §3), so it is never lost. (Seen in the tests: Azurite answers `500` to an Int64 literal
//!   compared with a property that holds an Int32 on some entity; an Int32 literal against an Int64 works.
//!   Such a table, read with an Int64 column, fails on Azurite with that error rather than answering wrong.)
//! - **String order.** The service compares strings by UTF-16 code unit; Arrow compares UTF-8 bytes, which is
//!   code point order. The two differ only between a character at or above U+E000 and one above U+FFFF, so an
//!   ordering comparison (`<`, `<=`, `>`, `>=`, `BETWEEN`) is pushed only when its literal holds no character at
//!   or above U+D800: against such a literal both orders agree. Equality and `LIKE 'prefix%'` (a UTF-16 range
//!   that holds exactly the strings starting with the prefix) are pushed for every literal.
//! - **Doubles.** Arrow orders `NaN` above every number and `-0.0` below `0.0`; the service follows IEEE 754
//!   (`NaN` compares false, `-0.0` equals `0.0`). So `>` and `>=` are never pushed (the service drops the `NaN`s
//!   SQL keeps), `<`, `<=` and `<>` only against a non-zero literal, and `=` always (the service's `= 0.0` also
//!   returns `-0.0`, a superset).
//! - **Binary, Guid, Boolean:** `=` and `<>` only (the service's order of Guids is not Arrow's bytes).
//! - **DateTime.** A DateTime column shows each value truncated to the microsecond (its 100 ns digit is in the
//!   overflow column, see [`table_model_arrow::mapping`]), so SQL's `x = t` holds for every value in the
//!   microsecond from `t`, and `x <= t` for every value before its end: those are sent as `x ge t and x lt t+1µs`
//!   and `x lt t+1µs`; `<`, `>`, `>=` and `<>` mean the same on both sides of the truncation.
//! - **Columns of several types** (the text of each, or a wide numeric column) are never pushed: the service
//!   compares each value within its own type, so `Priority eq '1'` would drop the Int32 `1` SQL shows as `"1"`.
//! - **`IS NULL`, `NOT`, functions, casts** have no `$filter`: not pushed.
//! - **15 comparisons** (`docs/rules.md` §7.1). A scan's range takes up to 6 ([`KeyRange::MAX_COMPARISONS`]),
//!   so the pushed filters take at most [`PUSHED_MAX_COMPARISONS`], in the order DataFusion gives them; one that does
//!   not fit (an `IN` list of more than 9 values, say) is not pushed and DataFusion applies it, with one
//!   exception:
//! - **Long `IN` lists on a key are split into point queries.** The first key `IN` list that does not fit, of at
//!   most [`IN_SPLIT_MAX`] distinct values, is read as one query per value (`PartitionKey eq 'v'` joined to the
//!   pushed filter), the queries shared among the scan's partitions: 200 partitions read by key instead of
//!   the table scanned once. It is `Exact`. A `RowKey` list is split only when `PartitionKey = '…'` is pushed
//!   too (each query then reads at most one entity): alone, each `RowKey eq 'v'` would scan the table. A longer
//!   list, or one that cannot be split, is left to DataFusion over one scan.
//!
//! Layer: parts.

use datafusion::arrow::datatypes::Schema;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::{Between, InList, Like};
use datafusion::logical_expr::{BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use table_model::filter::{Filter, KeyRange};
use table_model::limits::FILTER_MAX_COMPARISONS;
use table_model::{EdmBinary, EdmString, EdmValue};
use table_model_arrow::mapping::{self, ColumnKind, PARTITION_KEY, ROW_KEY};

/// The most comparisons the pushed filters take together: the service's 15 less the most a scan's range adds
/// ([`KeyRange::MAX_COMPARISONS`]).
pub const PUSHED_MAX_COMPARISONS: usize = FILTER_MAX_COMPARISONS - KeyRange::MAX_COMPARISONS;

/// The most distinct values of a key `IN` list split into point queries; a longer list is left to DataFusion
/// (one scan of what the other filters select, rather than more queries than the list is worth).
pub const IN_SPLIT_MAX: usize = 1_000;

/// A key `IN` list read as one query per value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyList {
    /// `PartitionKey` or `RowKey`.
    pub key: &'static str,
    /// The distinct values, in the service's key order.
    pub values: Vec<String>,
}

impl KeyList {
    /// The `$filter` of one value: `key eq 'value'`.
    pub fn filter(&self, value: &str) -> Filter {
        Filter::property(self.key).eq(EdmValue::String(EdmString::new(value).expect("checked by `key_list`")))
    }
}

/// The filters of a scan, pushed or not.
#[derive(Debug)]
pub(crate) struct Pushdown {
    /// The conjunction of the pushed filters; `None` when none is.
    pub filter: Option<Filter>,
    /// For each filter given, in order, whether and how it was pushed.
    pub decisions: Vec<TableProviderFilterPushDown>,
    /// Whether the pushed filters hold `PartitionKey = '…'` and `RowKey = '…'`: at most one entity, which
    /// needs no plan of ranges.
    pub point: bool,
    /// A key `IN` list read as a query per value (its filter is not in `filter`).
    pub split: Option<KeyList>,
}

/// Decides, in order, which of `filters` are pushed, within [`PUSHED_MAX_COMPARISONS`]. The same filters in the
/// same order always give the same decisions, so the scan, which gets those DataFusion did not keep for
/// itself, pushes exactly those [`TableProvider::supports_filters_pushdown`] accepted.
///
/// [`TableProvider::supports_filters_pushdown`]: datafusion::catalog::TableProvider::supports_filters_pushdown
pub(crate) fn push(schema: &Schema, filters: &[&Expr]) -> Pushdown {
    let mut budget = PUSHED_MAX_COMPARISONS;
    let mut pushed = Vec::new();
    let (mut partition, mut row) = (false, false);
    let mut decisions: Vec<TableProviderFilterPushDown> = filters
        .iter()
        .map(|expr| match translate(schema, expr) {
            Some((filter, exact)) if filter.comparisons() <= budget && filter.render().is_ok() => {
                budget -= filter.comparisons();
                partition |= key_equality(expr, PARTITION_KEY);
                row |= key_equality(expr, ROW_KEY);
                pushed.push(filter);
                if exact {
                    TableProviderFilterPushDown::Exact
                } else {
                    TableProviderFilterPushDown::Inexact
                }
            }
            _ => TableProviderFilterPushDown::Unsupported,
        })
        .collect();
    // The first key list left over that is worth splitting: on `PartitionKey`, or on `RowKey` within a pushed
    // `PartitionKey = '…'`.
    let split = filters.iter().enumerate().find_map(|(i, expr)| {
        let list = key_list(expr).filter(|_| decisions[i] == TableProviderFilterPushDown::Unsupported)?;
        (list.key == PARTITION_KEY || partition).then_some((i, list))
    });
    let split = split.map(|(i, list)| {
        decisions[i] = TableProviderFilterPushDown::Exact;
        list
    });
    Pushdown { filter: Filter::all(pushed), decisions, point: partition && row, split }
}

/// `key IN ('v', ...)` of at most [`IN_SPLIT_MAX`] distinct values, each a literal a `$filter` holds.
fn key_list(expr: &Expr) -> Option<KeyList> {
    let Expr::InList(InList { expr, list, negated: false }) = expr else { return None };
    let Expr::Column(c) = &**expr else { return None };
    let key = [PARTITION_KEY, ROW_KEY].into_iter().find(|k| *k == c.name)?;
    let mut values = list
        .iter()
        .map(|item| match item {
            Expr::Literal(v, _) => string(v).map(str::to_owned),
            _ => None,
        })
        .collect::<Option<Vec<String>>>()?;
    values.sort_by(|a, b| table_model::key::service_order(a, b));
    values.dedup();
    let list = KeyList { key, values };
    let fits = (1..=IN_SPLIT_MAX).contains(&list.values.len());
    let renders = |v: &String| EdmString::new(v.as_str()).is_ok() && list.filter(v).render().is_ok();
    (fits && list.values.iter().all(renders)).then_some(list)
}

/// Whether `expr` is `key = 'literal'` (either way round).
fn key_equality(expr: &Expr, key: &str) -> bool {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op: Operator::Eq, right }) => match (&**left, &**right) {
            (Expr::Column(c), Expr::Literal(..)) | (Expr::Literal(..), Expr::Column(c)) => c.name == key,
            _ => false,
        },
        _ => false,
    }
}

/// The `$filter` of an expression and whether it is exact; `None` when it cannot be pushed.
fn translate(schema: &Schema, expr: &Expr) -> Option<(Filter, bool)> {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op: Operator::And, right }) => {
            let ((l, l_exact), (r, r_exact)) = (translate(schema, left)?, translate(schema, right)?);
            Some((l & r, l_exact && r_exact))
        }
        Expr::BinaryExpr(BinaryExpr { left, op: Operator::Or, right }) => {
            let ((l, l_exact), (r, r_exact)) = (translate(schema, left)?, translate(schema, right)?);
            Some((l | r, l_exact && r_exact))
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match (&**left, &**right) {
            (Expr::Column(c), Expr::Literal(v, _)) => compare(schema, &c.name, *op, v),
            (Expr::Literal(v, _), Expr::Column(c)) => compare(schema, &c.name, op.swap()?, v),
            _ => None,
        },
        Expr::Between(Between { expr, negated: false, low, high }) => {
            let (Expr::Column(c), Expr::Literal(low, _), Expr::Literal(high, _)) = (&**expr, &**low, &**high) else {
                return None;
            };
            let (l, l_exact) = compare(schema, &c.name, Operator::GtEq, low)?;
            let (h, h_exact) = compare(schema, &c.name, Operator::LtEq, high)?;
            Some((l & h, l_exact && h_exact))
        }
        Expr::InList(InList { expr, list, negated: false }) => {
            let Expr::Column(c) = &**expr else { return None };
            let mut exact = true;
            let mut any = Vec::with_capacity(list.len());
            for item in list {
                let Expr::Literal(v, _) = item else { return None };
                let (f, e) = compare(schema, &c.name, Operator::Eq, v)?;
                exact &= e;
                any.push(f);
            }
            // `x IN ()` selects nothing, which no `$filter` says: not pushed.
            Some((Filter::any(any)?, exact))
        }
        Expr::Like(Like { negated: false, expr, pattern, escape_char: None, case_insensitive: false }) => {
            let (Expr::Column(c), Expr::Literal(pattern, _)) = (&**expr, &**pattern) else { return None };
            let prefix = string(pattern)?.strip_suffix('%')?;
            // A wildcard or an escape (DataFusion reads `\` as one) before the final `%` is no prefix.
            if prefix.contains(['%', '_', '\\']) {
                return None;
            }
            let kind = column(schema, &c.name)?;
            (kind == ColumnKind::String)
                .then(|| (Filter::property(c.name.clone()).starts_with(prefix), is_key(&c.name)))
        }
        _ => None,
    }
}

/// `name op value` when the column and the value allow it (see the module's decisions).
fn compare(schema: &Schema, name: &str, op: Operator, value: &ScalarValue) -> Option<(Filter, bool)> {
    let kind = column(schema, name)?;
    let ordering = matches!(op, Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq);
    if let (ColumnKind::DateTime, ScalarValue::TimestampMicrosecond(Some(micros), _)) = (kind, value) {
        return compare_micros(name, op, *micros);
    }
    let value = match (kind, value) {
        (ColumnKind::String, v) => {
            let s = string(v)?;
            if ordering && s.chars().any(|c| u32::from(c) >= 0xD800) {
                return None;
            }
            EdmValue::String(EdmString::new(s).ok()?)
        }
        (ColumnKind::Int32, ScalarValue::Int32(Some(v))) => EdmValue::Int32(*v),
        (ColumnKind::Int64, ScalarValue::Int64(Some(v))) => EdmValue::Int64(*v),
        (ColumnKind::Double, ScalarValue::Float64(Some(v))) => {
            let pushed = match op {
                Operator::Eq => true,
                Operator::Lt | Operator::LtEq | Operator::NotEq => *v != 0.0,
                _ => false,
            };
            if !pushed || !v.is_finite() {
                return None;
            }
            EdmValue::Double(*v)
        }
        (ColumnKind::Boolean, ScalarValue::Boolean(Some(v))) if !ordering => EdmValue::Boolean(*v),
        (ColumnKind::Binary, ScalarValue::Binary(Some(v))) if !ordering => {
            EdmValue::Binary(EdmBinary::new(v.clone()).ok()?)
        }
        (ColumnKind::Guid, ScalarValue::FixedSizeBinary(16, Some(v))) if !ordering => {
            EdmValue::Guid(uuid::Uuid::from_slice(v).ok()?)
        }
        (ColumnKind::DateTimeNanos, ScalarValue::TimestampNanosecond(Some(v), _)) => {
            EdmValue::DateTime(mapping::datetime_from_nanos(*v).ok()?)
        }
        (ColumnKind::DateTimeTicks, ScalarValue::Int64(Some(v))) => {
            EdmValue::DateTime(mapping::datetime_from_ticks(*v).ok()?)
        }
        _ => return None,
    };
    let property = Filter::property(name.to_owned());
    let filter = match op {
        Operator::Eq => property.eq(value),
        Operator::NotEq => property.ne(value),
        Operator::Lt => property.lt(value),
        Operator::LtEq => property.le(value),
        Operator::Gt => property.gt(value),
        Operator::GtEq => property.ge(value),
        _ => return None,
    };
    Some((filter, is_key(name)))
}

/// `name op t` for a microsecond DateTime column, whose values are truncated to the microsecond (see the
/// module's decisions); `None` when `t` or the end of its microsecond is no DateTime.
fn compare_micros(name: &str, op: Operator, micros: i64) -> Option<(Filter, bool)> {
    let at = || mapping::datetime_from_micros(micros).ok().map(EdmValue::DateTime);
    let next = || mapping::datetime_from_micros(micros.checked_add(1)?).ok().map(EdmValue::DateTime);
    let property = || Filter::property(name.to_owned());
    let filter = match op {
        Operator::Eq => property().ge(at()?) & property().lt(next()?),
        Operator::NotEq => property().ne(at()?),
        Operator::Lt => property().lt(at()?),
        Operator::LtEq => property().lt(next()?),
        Operator::Gt => property().gt(at()?),
        Operator::GtEq => property().ge(at()?),
        _ => return None,
    };
    Some((filter, is_key(name)))
}

/// The kind of a property's column; `None` for a name that is not one (the overflow column, an unknown name)
/// and for a column of several types (never pushed).
fn column(schema: &Schema, name: &str) -> Option<ColumnKind> {
    let field = schema.field_with_name(name).ok()?;
    if field.metadata().contains_key(mapping::OVERFLOW_KEY) || name == mapping::OVERFLOW_COLUMN {
        return None;
    }
    ColumnKind::of_field(field).ok().filter(|kind| !kind.is_mixed())
}

fn is_key(name: &str) -> bool {
    name == PARTITION_KEY || name == ROW_KEY
}

fn string(value: &ScalarValue) -> Option<&str> {
    match value {
        ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) | ScalarValue::Utf8View(Some(s)) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::{ident, lit};
    use table_model::EdmType;
    use table_model_arrow::infer::overflow_field;
    use TableProviderFilterPushDown::{Exact, Inexact, Unsupported};

    fn schema() -> Schema {
        let mut fields = vec![ColumnKind::String.field(PARTITION_KEY, false), ColumnKind::String.field(ROW_KEY, false)];
        for (name, edm) in [
            ("S", EdmType::String),
            ("I", EdmType::Int32),
            ("L", EdmType::Int64),
            ("D", EdmType::Double),
            ("B", EdmType::Boolean),
            ("When", EdmType::DateTime),
        ] {
            fields.push(ColumnKind::for_edm(edm).field(name, true));
        }
        fields.push(ColumnKind::DateTimeTicks.field("Old", true));
        fields.push(ColumnKind::DateTimeNanos.field("Nanos", true));
        fields.push(ColumnKind::Text.mixed_field("Priority", &[EdmType::Int32, EdmType::String]));
        fields.push(ColumnKind::WideInt64.mixed_field("Wide", &[EdmType::Int32, EdmType::Int64]));
        fields.push(overflow_field());
        Schema::new(fields)
    }

    /// The decision and the `$filter` of one expression alone.
    fn one(expr: Expr) -> (TableProviderFilterPushDown, Option<String>) {
        let pushed = push(&schema(), &[&expr]);
        (pushed.decisions[0].clone(), pushed.filter.map(|f| f.render().unwrap()))
    }

    /// A column by its exact name (`col` would read `PartitionKey` as SQL does, as `partitionkey`).
    fn pk() -> Expr {
        ident(PARTITION_KEY)
    }

    #[test]
    fn key_comparisons_are_exact() {
        assert_eq!(one(pk().eq(lit("o'k"))), (Exact, Some("PartitionKey eq 'o''k'".into())));
        assert_eq!(one(lit("m").lt(ident(ROW_KEY))), (Exact, Some("RowKey gt 'm'".into())));
        assert_eq!(one(pk().not_eq(lit("a"))), (Exact, Some("PartitionKey ne 'a'".into())));
        assert_eq!(
            one(ident(ROW_KEY).between(lit("a"), lit("c"))),
            (Exact, Some("RowKey ge 'a' and RowKey le 'c'".into()))
        );
        assert_eq!(
            one(pk().in_list(vec![lit("a"), lit("b")], false)),
            (Exact, Some("PartitionKey eq 'a' or PartitionKey eq 'b'".into()))
        );
        assert_eq!(one(pk().like(lit("ab%"))), (Exact, Some("PartitionKey ge 'ab' and PartitionKey lt 'ac'".into())));
        assert_eq!(one(pk().eq(lit("a")).or(pk().eq(lit("b")))).0, Exact);
    }

    #[test]
    fn string_order_is_pushed_only_where_utf16_and_utf8_agree() {
        // U+D7FF and below: both orders agree.
        assert_eq!(one(pk().gt(lit("p\u{D7FF}"))).0, Exact);
        // U+FF61 sorts above U+1F600 in UTF-16 units, below it in UTF-8: not pushed.
        assert_eq!(one(pk().gt(lit("p\u{FF61}"))), (Unsupported, None));
        assert_eq!(one(ident("S").lt_eq(lit("\u{1F600}"))), (Unsupported, None));
        // Equality and prefixes mean the same in both orders.
        assert_eq!(one(pk().eq(lit("p\u{FF61}"))).0, Exact);
        assert_eq!(one(pk().like(lit("p\u{1F600}%"))).0, Exact);
    }

    #[test]
    fn like_is_pushed_only_as_a_plain_prefix() {
        for pattern in ["a_b%", "a%b%", "a\\%%", "ab", "%ab"] {
            assert_eq!(one(pk().like(lit(pattern))), (Unsupported, None), "{pattern}");
        }
        assert_eq!(one(pk().not_like(lit("ab%"))), (Unsupported, None));
        assert_eq!(one(pk().ilike(lit("ab%"))), (Unsupported, None));
        assert_eq!(one(ident("S").like(lit("ab%"))), (Inexact, Some("S ge 'ab' and S lt 'ac'".into())));
        assert_eq!(one(ident("I").like(lit("1%"))), (Unsupported, None));
    }

    #[test]
    fn properties_are_inexact_and_typed_by_the_schema() {
        assert_eq!(one(ident("I").gt(lit(5i32))), (Inexact, Some("I gt 5".into())));
        assert_eq!(one(ident("L").eq(lit(5i64))), (Inexact, Some("L eq 5L".into())));
        assert_eq!(one(ident("B").eq(lit(true))), (Inexact, Some("B eq true".into())));
        assert_eq!(one(ident("B").lt(lit(true))), (Unsupported, None));
        assert_eq!(one(ident("S").eq(lit("x"))), (Inexact, Some("S eq 'x'".into())));
        // A literal of another type than the column's (no coercion happened) is not pushed.
        assert_eq!(one(ident("I").gt(lit(5i64))), (Unsupported, None));
        let nanos = ScalarValue::TimestampNanosecond(Some(1_700_000_000_000_000_000), Some("UTC".into()));
        assert_eq!(
            one(ident("Nanos").gt_eq(lit(nanos))),
            (Inexact, Some("Nanos ge datetime'2023-11-14T22:13:20.0000000Z'".into()))
        );
        // A ticks column compares with its Int64 ticks: tick 0 is 0001-01-01, outside the service's range.
        assert_eq!(one(ident("Old").lt(lit(0i64))), (Unsupported, None));
        assert_eq!(
            one(ident("Old").lt(lit(504_911_232_000_000_000i64))),
            (Inexact, Some("Old lt datetime'1601-01-01T00:00:00.0000000Z'".into()))
        );
    }

    #[test]
    fn a_microsecond_column_sends_the_whole_microsecond_of_its_literal() {
        let t = || lit(ScalarValue::TimestampMicrosecond(Some(1_700_000_000_000_000), Some("UTC".into())));
        let (at, next) = ("datetime'2023-11-14T22:13:20.0000000Z'", "datetime'2023-11-14T22:13:20.0000010Z'");
        // SQL sees 22:13:20.0000005 as 22:13:20.000000: `=` and `<=` must reach the end of the microsecond.
        assert_eq!(one(ident("When").eq(t())), (Inexact, Some(format!("When ge {at} and When lt {next}"))));
        assert_eq!(one(ident("When").lt_eq(t())), (Inexact, Some(format!("When lt {next}"))));
        assert_eq!(one(ident("When").lt(t())), (Inexact, Some(format!("When lt {at}"))));
        assert_eq!(one(ident("When").gt(t())), (Inexact, Some(format!("When gt {at}"))));
        assert_eq!(one(ident("When").gt_eq(t())), (Inexact, Some(format!("When ge {at}"))));
        assert_eq!(one(ident("When").not_eq(t())), (Inexact, Some(format!("When ne {at}"))));
        // 1601-01-01 is a microsecond timestamp too; before it, nothing is sent.
        let first = ScalarValue::TimestampMicrosecond(Some(-11_644_473_600_000_000), Some("UTC".into()));
        assert_eq!(
            one(ident("When").lt_eq(lit(first.clone()))),
            (Inexact, Some("When lt datetime'1601-01-01T00:00:00.0000010Z'".into()))
        );
        let before = ScalarValue::TimestampMicrosecond(Some(-11_644_473_600_000_001), Some("UTC".into()));
        assert_eq!(one(ident("When").gt(lit(before))), (Unsupported, None));
    }

    #[test]
    fn a_column_of_several_types_is_never_pushed() {
        assert_eq!(one(ident("Priority").eq(lit("1"))), (Unsupported, None));
        assert_eq!(one(ident("Priority").like(lit("Hi%"))), (Unsupported, None));
        assert_eq!(one(ident("Wide").gt(lit(5i64))), (Unsupported, None));
    }

    #[test]
    fn doubles_are_pushed_where_nan_and_negative_zero_cannot_be_lost() {
        assert_eq!(one(ident("D").eq(lit(0.0f64))), (Inexact, Some("D eq 0.0".into())));
        assert_eq!(one(ident("D").lt(lit(1.5f64))), (Inexact, Some("D lt 1.5".into())));
        assert_eq!(one(ident("D").lt(lit(0.0f64))), (Unsupported, None));
        assert_eq!(one(ident("D").not_eq(lit(-0.0f64))), (Unsupported, None));
        assert_eq!(one(ident("D").gt(lit(1.5f64))), (Unsupported, None));
        assert_eq!(one(ident("D").gt_eq(lit(1.5f64))), (Unsupported, None));
        assert_eq!(one(ident("D").eq(lit(f64::NAN))), (Unsupported, None));
        assert_eq!(one(ident("D").lt(lit(f64::INFINITY))), (Unsupported, None));
    }

    #[test]
    fn what_has_no_filter_is_not_pushed() {
        assert_eq!(one(ident("I").is_null()), (Unsupported, None));
        assert_eq!(one(ident("I").is_not_null()), (Unsupported, None));
        assert_eq!(one(!ident("I").eq(lit(1i32))), (Unsupported, None));
        assert_eq!(one(ident(mapping::OVERFLOW_COLUMN).eq(lit("{}"))), (Unsupported, None));
        assert_eq!(one(ident("Nope").eq(lit(1i32))), (Unsupported, None));
        assert_eq!(one(ident("I").eq(ident("L"))), (Unsupported, None));
        assert_eq!(one(ident("I").eq(lit(ScalarValue::Int32(None)))), (Unsupported, None));
        assert_eq!(one(pk().in_list(vec![lit("a")], true)), (Unsupported, None));
        // An `or` with one side that cannot be pushed cannot be pushed.
        assert_eq!(one(pk().eq(lit("a")).or(ident("I").is_null())), (Unsupported, None));
        // `and` of exact and inexact is inexact.
        assert_eq!(one(pk().eq(lit("a")).and(ident("I").eq(lit(1i32)))).0, Inexact);
    }

    #[test]
    fn pushed_filters_leave_a_range_its_comparisons() {
        assert_eq!(PUSHED_MAX_COMPARISONS, 9);
        let list = |n: usize| pk().in_list((0..n).map(|i| lit(format!("k{i}"))).collect(), false);
        assert_eq!(one(list(9)).0, Exact);
        // Past what a filter holds with a range's six: a property's list is left to DataFusion.
        let ints = |n: i32| ident("I").in_list((0..n).map(lit).collect(), false);
        assert_eq!(one(ints(10)), (Unsupported, None));
        // In order: the first takes 5, the second (5) does not fit, the third (4) does.
        let (a, b, c) = (ints(5), ints(5), ints(4));
        let pushed = push(&schema(), &[&a, &b, &c]);
        assert_eq!(pushed.decisions, [Inexact, Unsupported, Inexact]);
        assert_eq!(pushed.filter.unwrap().comparisons(), 9);
    }

    #[test]
    fn long_key_lists_are_split_into_point_queries() {
        let values = |n: usize| (0..n).map(|i| lit(format!("k{i}"))).collect::<Vec<_>>();
        let split = |filters: &[&Expr]| {
            let pushed = push(&schema(), filters);
            (pushed.decisions, pushed.filter.map(|f| f.render().unwrap()), pushed.split)
        };
        // Past the budget, a PartitionKey list is split: exact, no $filter of its own, distinct values in the
        // service's order (U+FF61 after U+1F600 in UTF-16).
        let mut list = values(10);
        list.extend([lit("k3"), lit("\u{FF61}"), lit("\u{1F600}")]);
        let (decisions, filter, keys) = split(&[&pk().in_list(list, false)]);
        assert_eq!((decisions, filter), (vec![Exact], None));
        let keys = keys.unwrap();
        assert_eq!(keys.key, PARTITION_KEY);
        assert_eq!(keys.values.len(), 12);
        assert_eq!(keys.values[10..], ["\u{1F600}", "\u{FF61}"]);
        assert_eq!(keys.filter("o'k").render().unwrap(), "PartitionKey eq 'o''k'");
        // Up to IN_SPLIT_MAX distinct values; past it, DataFusion applies the list.
        assert!(split(&[&pk().in_list(values(IN_SPLIT_MAX), false)]).2.is_some());
        assert_eq!(split(&[&pk().in_list(values(IN_SPLIT_MAX + 1), false)]).0, [Unsupported]);
        // A RowKey list only within one pushed partition (alone, each query would scan the table).
        let rk_list = ident(ROW_KEY).in_list(values(20), false);
        assert_eq!(split(&[&rk_list]).0, [Unsupported]);
        let p = pk().eq(lit("a"));
        let (decisions, filter, keys) = split(&[&rk_list, &p]);
        assert_eq!((decisions, filter), (vec![Exact, Exact], Some("PartitionKey eq 'a'".to_owned())));
        assert_eq!(keys.unwrap().key, ROW_KEY);
        // Only the first list is split; the second is left to DataFusion.
        let (a, b) = (pk().in_list(values(10), false), pk().in_list(values(11), false));
        assert_eq!(split(&[&a, &b]).0, [Exact, Unsupported]);
        // A list with a non-literal, or NOT IN, is not split.
        let mut mixed = values(10);
        mixed.push(ident(ROW_KEY));
        assert_eq!(split(&[&pk().in_list(mixed, false)]).0, [Unsupported]);
        assert_eq!(split(&[&pk().in_list(values(10), true)]).0, [Unsupported]);
    }

    #[test]
    fn a_point_is_both_keys_by_equality() {
        let (p, r) = (pk().eq(lit("a")), lit("1").eq(ident(ROW_KEY)));
        assert!(push(&schema(), &[&p, &r]).point);
        assert!(!push(&schema(), &[&p]).point);
        let range = ident(ROW_KEY).gt(lit("1"));
        assert!(!push(&schema(), &[&p, &range]).point);
    }
}
