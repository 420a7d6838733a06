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
//!   (`docs/rules.md` §3), so it is never lost.
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
//! - **`IS NULL`, `NOT`, functions, casts** have no `$filter`: not pushed.
//! - **15 comparisons** (`docs/rules.md` §7.1). A scan's range takes up to 6 ([`KeyRange::filter`]), so the
//!   pushed filters take at most [`PUSHED_MAX_COMPARISONS`], in the order DataFusion gives them; one that does
//!   not fit (an `IN` list of more than 9 values, say) is not pushed and DataFusion applies it.
//!
//! [`KeyRange::filter`]: table_model::filter::KeyRange::filter

use datafusion::arrow::datatypes::Schema;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::{Between, InList, Like};
use datafusion::logical_expr::{BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use table_model::filter::Filter;
use table_model::limits::FILTER_MAX_COMPARISONS;
use table_model::{EdmBinary, EdmString, EdmValue};
use table_model_arrow::mapping::{self, ColumnKind, PARTITION_KEY, ROW_KEY};

/// The comparisons a range of a scan may add to the pushed filters ([`table_model::filter::KeyRange::filter`]).
const RANGE_MAX_COMPARISONS: usize = 6;

/// The most comparisons the pushed filters take together: the service's 15 less a range's 6.
pub const PUSHED_MAX_COMPARISONS: usize = FILTER_MAX_COMPARISONS - RANGE_MAX_COMPARISONS;

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
    let decisions = filters
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
    Pushdown { filter: Filter::all(pushed), decisions, point: partition && row }
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
        (ColumnKind::DateTime, ScalarValue::TimestampNanosecond(Some(v), _)) => {
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

/// The kind of a property's column; `None` for a name that is not one (the overflow column, an unknown name).
fn column(schema: &Schema, name: &str) -> Option<ColumnKind> {
    let field = schema.field_with_name(name).ok()?;
    if field.metadata().contains_key(mapping::OVERFLOW_KEY) || name == mapping::OVERFLOW_COLUMN {
        return None;
    }
    ColumnKind::of_field(field).ok()
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
