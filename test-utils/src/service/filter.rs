//! The `$filter` the in-memory service evaluates: read by table_model's [`Filter::parse`](TextFilter::parse), as
//! the SDK reads it (`docs/rules.md` §7.1), and evaluated by walking its tree ([`TextFilter::expr`]) when every
//! comparison ([`ComparisonOperator`]) is of a property with a string literal (`RowKey ge 'a'`) or a
//! `datetime'...'` literal (`Timestamp ge datetime'2024-05-06T07:08:10Z'`), joined by `and`, `or` and `not`.
//! What the SDK, tablectl and the DataFusion provider send for key ranges, probes, pushed key and string
//! filters and incremental exports. Anything else is refused: text that does not parse with the position of
//! the mistake, and a literal of another type (numbers, booleans, GUIDs, binary) with its property, so that a
//! query is answered right or not at all.
//!
//! Strings compare by UTF-16 code unit, as the service compares keys (`docs/rules.md` §2.3); a comparison with a
//! property the entity does not have, or of another type than the literal's, is false (and `not` of it true).
//!
//! Layer: base.

use std::borrow::Cow;
use std::cmp::Ordering;
use table_model::filter::{ComparisonOperator, Filter as TextFilter, FilterExpr};
use table_model::{DateTime, EdmValue};

/// Whether `op` holds between two values in the `order` they compare in.
fn holds(op: ComparisonOperator, order: Ordering) -> bool {
    match op {
        ComparisonOperator::Eq => order.is_eq(),
        ComparisonOperator::Ne => order.is_ne(),
        ComparisonOperator::Gt => order.is_gt(),
        ComparisonOperator::Ge => order.is_ge(),
        ComparisonOperator::Lt => order.is_lt(),
        ComparisonOperator::Le => order.is_le(),
    }
}

/// A property's value as a filter compares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value<'a> {
    /// An `Edm.String`.
    String(Cow<'a, str>),
    /// An `Edm.DateTime`.
    DateTime(DateTime),
    /// Any other type: never equal to a literal the filter can hold.
    Other,
}

/// What a filter reads a property of: an entity, or a table of the table list.
pub(crate) trait Record {
    /// The value of `property`, `None` when absent.
    fn value(&self, property: &str) -> Option<Value<'_>>;
}

/// A `$filter` the service evaluates: read by [`TextFilter::parse`], every literal a string or a time.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Filter(TextFilter);

/// UTF-16 code-unit order, the service's order of strings.
pub(crate) fn utf16_cmp(a: &str, b: &str) -> Ordering {
    // Equal prefixes of UTF-8 are equal prefixes of UTF-16: compare from the first byte that differs. Where
    // either string ends there, or either byte is ASCII, the bytes order as the code units do.
    let Some(common) = a.bytes().zip(b.bytes()).position(|(x, y)| x != y) else { return a.len().cmp(&b.len()) };
    if a.as_bytes()[common].is_ascii() || b.as_bytes()[common].is_ascii() {
        return a.as_bytes()[common].cmp(&b.as_bytes()[common]);
    }
    let start = (0..=common).rev().find(|&i| a.is_char_boundary(i) && b.is_char_boundary(i)).unwrap_or(0);
    a[start..].encode_utf16().cmp(b[start..].encode_utf16())
}

/// What the evaluator reads, for the errors.
const GRAMMAR: &str = "the loopback service evaluates comparisons (eq, ne, gt, ge, lt, le) of a property with a \
                       string or datetime literal, joined by and, or, not and parentheses";

impl Filter {
    /// Reads `text`.
    ///
    /// # Errors
    /// What could not be read, and where: [`TextFilter::parse`]'s error with its position in the filter, or the
    /// property compared with a literal of a type the service does not evaluate.
    pub(crate) fn parse(text: &str) -> Result<Filter, String> {
        let filter = TextFilter::parse(text).map_err(|e| e.to_string())?;
        evaluable(&filter)?;
        Ok(Filter(filter))
    }

    /// Whether `record` matches.
    pub(crate) fn matches(&self, record: &impl Record) -> bool {
        matches(&self.0, record)
    }

    /// The least PartitionKey the filter can select (a bound, not exact), so that a query starts where the
    /// filter does rather than at the table's first entity.
    pub(crate) fn lowest(&self) -> Option<&str> {
        lowest(&self.0)
    }

    /// The greatest PartitionKey the filter can select (a bound, not exact), and whether the bound itself can
    /// be (`le`, `eq`) or not (`lt`): a query stops there rather than answering a continuation to a partition
    /// past the range.
    pub(crate) fn highest(&self) -> Option<(&str, bool)> {
        highest(&self.0)
    }

    /// Whether `partition` is within [`highest`](Self::highest)'s bound.
    pub(crate) fn below_highest(&self, partition: &str) -> bool {
        self.highest().is_none_or(|(bound, inclusive)| match utf16_cmp(partition, bound) {
            Ordering::Less => true,
            Ordering::Equal => inclusive,
            Ordering::Greater => false,
        })
    }
}

/// Checks that every comparison of `filter` is with a string or a time, the literals [`matches()`] evaluates.
fn evaluable(filter: &TextFilter) -> Result<(), String> {
    match filter.expr().map_err(|e| e.to_string())? {
        FilterExpr::Compare { value: EdmValue::String(_) | EdmValue::DateTime(_), .. } => Ok(()),
        FilterExpr::Compare { property, op, value } => Err(format!(
            "unsupported literal of type {} in the comparison `{property} {op}`; {GRAMMAR}",
            value.edm_type()
        )),
        FilterExpr::And(filters) | FilterExpr::Or(filters) => filters.iter().try_for_each(evaluable),
        FilterExpr::Not(filter) => evaluable(filter),
        _ => Err(format!("unsupported expression; {GRAMMAR}")),
    }
}

/// Whether `record` matches `filter`, checked by [`evaluable`].
fn matches(filter: &TextFilter, record: &impl Record) -> bool {
    match filter.expr() {
        Ok(FilterExpr::Compare { property, op, value }) => {
            let order = match (record.value(property), value) {
                (Some(Value::String(value)), EdmValue::String(literal)) => utf16_cmp(&value, literal.as_str()),
                (Some(Value::DateTime(value)), EdmValue::DateTime(literal)) => value.cmp(literal),
                _ => return false,
            };
            holds(op, order)
        }
        Ok(FilterExpr::And(filters)) => filters.iter().all(|f| matches(f, record)),
        Ok(FilterExpr::Or(filters)) => filters.iter().any(|f| matches(f, record)),
        Ok(FilterExpr::Not(filter)) => !matches(filter, record),
        // Refused by `evaluable`.
        _ => false,
    }
}

/// [`Filter::lowest`]: the greatest of an `and`'s bounds, the least of an `or`'s when each has one.
fn lowest(filter: &TextFilter) -> Option<&str> {
    match filter.expr().ok()? {
        FilterExpr::Compare {
            property: "PartitionKey",
            op: ComparisonOperator::Eq | ComparisonOperator::Gt | ComparisonOperator::Ge,
            value: EdmValue::String(value),
        } => Some(value.as_str()),
        FilterExpr::And(filters) => {
            filters.iter().filter_map(lowest).reduce(|a, b| if utf16_cmp(a, b).is_ge() { a } else { b })
        }
        FilterExpr::Or(filters) => every(filters, lowest, |a, b| if utf16_cmp(a, b).is_le() { a } else { b }),
        _ => None,
    }
}

/// [`Filter::highest`]: the least of an `and`'s bounds, the greatest of an `or`'s when each has one.
fn highest(filter: &TextFilter) -> Option<(&str, bool)> {
    match filter.expr().ok()? {
        FilterExpr::Compare {
            property: "PartitionKey",
            op: op @ (ComparisonOperator::Eq | ComparisonOperator::Lt | ComparisonOperator::Le),
            value: EdmValue::String(value),
        } => Some((value.as_str(), op != ComparisonOperator::Lt)),
        FilterExpr::And(filters) => filters.iter().filter_map(highest).reduce(|a, b| match utf16_cmp(a.0, b.0) {
            Ordering::Less => a,
            Ordering::Greater => b,
            Ordering::Equal => (a.0, a.1 && b.1),
        }),
        FilterExpr::Or(filters) => every(filters, highest, |a, b| match utf16_cmp(a.0, b.0) {
            Ordering::Less => b,
            Ordering::Greater => a,
            Ordering::Equal => (a.0, a.1 || b.1),
        }),
        _ => None,
    }
}

/// The bounds of all `filters` combined by `merge`; `None` when one of them has none.
fn every<'a, T>(
    filters: &'a [TextFilter],
    bound: impl Fn(&'a TextFilter) -> Option<T>,
    merge: impl Fn(T, T) -> T,
) -> Option<T> {
    let mut bounds = filters.iter().map(bound);
    let first = bounds.next()??;
    bounds.try_fold(first, |merged, b| Some(merge(merged, b?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    impl Record for HashMap<&str, Value<'static>> {
        fn value(&self, property: &str) -> Option<Value<'_>> {
            self.get(property).cloned()
        }
    }

    fn keys(pk: &'static str, rk: &'static str) -> HashMap<&'static str, Value<'static>> {
        HashMap::from([("PartitionKey", Value::String(pk.into())), ("RowKey", Value::String(rk.into()))])
    }

    #[test]
    fn key_ranges_and_their_bounds() {
        let f = Filter::parse("PartitionKey ge 'b' and PartitionKey lt 'd' and not (RowKey eq 'x')").unwrap();
        assert!(f.matches(&keys("b", "a")));
        assert!(f.matches(&keys("c\u{ffff}", "y")));
        assert!(!f.matches(&keys("c", "x")));
        assert!(!f.matches(&keys("d", "a")));
        assert_eq!((f.lowest(), f.highest()), (Some("b"), Some(("d", false))));
        assert!(f.below_highest("c\u{ffff}") && !f.below_highest("d"));
        let f = Filter::parse("PartitionKey le 'd' and PartitionKey lt 'd' or PartitionKey eq 'c'").unwrap();
        assert_eq!(f.highest(), Some(("d", false)));
        let f = Filter::parse("(PartitionKey eq 'a' or PartitionKey eq 'c') or RowKey eq 'x'").unwrap();
        assert_eq!((f.lowest(), f.highest()), (None, None));
        let f = Filter::parse("PartitionKey eq 'O''Brien'").unwrap();
        assert!(f.matches(&keys("O'Brien", "")));
    }

    #[test]
    fn strings_compare_by_utf16_code_unit() {
        // U+FF5E is above U+1F600 in UTF-16 (0xFF5E > 0xD83D) and below it in UTF-8.
        assert_eq!(utf16_cmp("\u{ff5e}", "\u{1f600}"), Ordering::Greater);
        assert_eq!("\u{ff5e}".cmp("\u{1f600}"), Ordering::Less);
        let f = Filter::parse("RowKey gt '\u{1f600}'").unwrap();
        assert!(f.matches(&keys("p", "\u{ff5e}")));
    }

    #[test]
    fn timestamps_and_other_properties() {
        let at = DateTime::parse("2024-05-06T07:08:10.5Z").unwrap();
        let entity = HashMap::from([
            ("Timestamp", Value::DateTime(at)),
            ("Name", Value::String("Ada".into())),
            ("Age", Value::Other),
        ]);
        let holds = |text: &str| Filter::parse(text).unwrap().matches(&entity);
        assert!(holds("Timestamp ge datetime'2024-05-06T07:08:10.5Z'"));
        assert!(!holds("Timestamp gt datetime'2024-05-06T07:08:10.5Z'"));
        assert!(holds("Timestamp lt datetime'2024-05-06T07:08:11Z' and Name eq 'Ada'"));
        // Another type, or an absent property, never compares; `not` of it holds.
        assert!(!holds("Age eq 'x'") && !holds("Age ne 'x'") && !holds("Missing ne 'x'"));
        assert!(holds("not (Missing eq 'x')"));
        assert!(!holds("Name eq datetime'2024-05-06T07:08:10Z'"));
    }

    #[test]
    fn what_it_cannot_read_or_evaluate_is_refused_with_where() {
        for (text, expected) in [
            ("Age gt 30", "unsupported literal of type Edm.Int32 in the comparison `Age gt`"),
            ("Active eq true", "unsupported literal of type Edm.Boolean in the comparison `Active eq`"),
            ("Name eq 'x' or not (B eq X'00')", "unsupported literal of type Edm.Binary in the comparison `B eq`"),
            ("PartitionKey eq 'a", "invalid filter at position 16: the literal has no closing quote"),
            ("PartitionKey eq 'a' xor", "invalid filter at position 20: expected \"and\", \"or\" or the end"),
            ("substringof('a', Name)", "invalid filter at position 11: expected a comparison operator"),
            ("Timestamp ge datetime'yesterday'", "invalid filter at position 13: invalid Edm.DateTime literal"),
            (
                "Timestamp ge datetime'1600-12-31T23:59:59Z'",
                "invalid filter at position 13: invalid Edm.DateTime: must be",
            ),
            ("(RowKey eq 'a'", "invalid filter at position 14: expected \"and\", \"or\" or \")\""),
            ("", "invalid filter at position 0: the filter is empty"),
        ] {
            let err = Filter::parse(text).unwrap_err();
            assert!(err.starts_with(expected), "{text}: {err}");
        }
    }

    // A property test: random filters over a few keys, written as text, read back and evaluated, against the
    // same filter evaluated directly on the keys by a model of its own (comparisons of the keys' UTF-16 code
    // units by `encode_utf16`, each operator spelled out).

    fn key() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop::sample::select(vec!['a', 'b', '\'', ' ', 'é', '\u{ff5e}', '\u{1f600}']), 0..4)
            .prop_map(|c| c.into_iter().collect())
    }

    #[derive(Clone, Debug)]
    enum Model {
        Compare(bool, ComparisonOperator, String),
        And(Box<Model>, Box<Model>),
        Or(Box<Model>, Box<Model>),
        Not(Box<Model>),
    }

    impl Model {
        fn text(&self) -> String {
            match self {
                Model::Compare(row, op, v) => {
                    let name = if *row { "RowKey" } else { "PartitionKey" };
                    format!("{name} {} '{}'", op.as_str(), v.replace('\'', "''"))
                }
                Model::And(a, b) => format!("({}) and ({})", a.text(), b.text()),
                Model::Or(a, b) => format!("{} or {}", a.text(), b.text()),
                Model::Not(a) => format!("not ({})", a.text()),
            }
        }

        fn comparisons(&self) -> usize {
            match self {
                Model::Compare(..) => 1,
                Model::And(a, b) | Model::Or(a, b) => a.comparisons() + b.comparisons(),
                Model::Not(a) => a.comparisons(),
            }
        }

        fn holds(&self, pk: &str, rk: &str) -> bool {
            match self {
                Model::Compare(row, op, v) => {
                    let key: Vec<u16> = if *row { rk } else { pk }.encode_utf16().collect();
                    let v: Vec<u16> = v.encode_utf16().collect();
                    match op {
                        ComparisonOperator::Eq => key == v,
                        ComparisonOperator::Ne => key != v,
                        ComparisonOperator::Gt => key > v,
                        ComparisonOperator::Ge => key >= v,
                        ComparisonOperator::Lt => key < v,
                        ComparisonOperator::Le => key <= v,
                    }
                }
                Model::And(a, b) => a.holds(pk, rk) && b.holds(pk, rk),
                Model::Or(a, b) => a.holds(pk, rk) || b.holds(pk, rk),
                Model::Not(a) => !a.holds(pk, rk),
            }
        }
    }

    fn model() -> impl Strategy<Value = Model> {
        use ComparisonOperator::{Eq, Ge, Gt, Le, Lt, Ne};
        let op = prop::sample::select(vec![Eq, Ne, Gt, Ge, Lt, Le]);
        let leaf = (any::<bool>(), op, key()).prop_map(|(row, op, v)| Model::Compare(row, op, v));
        leaf.prop_recursive(4, 16, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Model::And(Box::new(a), Box::new(b))),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Model::Or(Box::new(a), Box::new(b))),
                inner.prop_map(|a| Model::Not(Box::new(a))),
            ]
        })
        // The service's limit (`docs/rules.md` §7.1), which `Filter::parse` checks.
        .prop_filter("at most 15 comparisons", |m| m.comparisons() <= 15)
    }

    proptest! {
        #[test]
        fn the_evaluator_agrees_with_the_filter_it_reads(model in model(), pk in key(), rk in key()) {
            let filter = Filter::parse(&model.text()).unwrap();
            let record = HashMap::from([
                ("PartitionKey", Value::String(pk.clone().into())),
                ("RowKey", Value::String(rk.clone().into())),
            ]);
            prop_assert_eq!(filter.matches(&record), model.holds(&pk, &rk));
            // The bounds hold: whatever matches lies between them.
            if filter.matches(&record) {
                if let Some(low) = filter.lowest() {
                    prop_assert!(utf16_cmp(&pk, low).is_ge());
                }
                prop_assert!(filter.below_highest(&pk));
            }
        }
    }
}
