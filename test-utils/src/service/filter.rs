//! The `$filter` the in-memory service evaluates: comparisons ([`ComparisonOperator`]) of a property with a
//! string literal (`RowKey ge 'a'`) or a `datetime'...'` literal in any form [`DateTime::parse`] reads
//! (`Timestamp ge datetime'2024-05-06T07:08:10Z'`, `docs/rules.md` §7.1), joined by `and`, `or` and `not` with
//! parentheses. What the SDK, tablectl and the DataFusion provider send for key ranges, probes, pushed key and
//! string filters and incremental exports. Anything else (numbers, booleans, GUIDs, arithmetic) is refused with
//! the position of what could not be read, so that a query is answered right or not at all.
//!
//! Strings compare by UTF-16 code unit, as the service compares keys (`docs/rules.md` §2.3); a comparison with a
//! property the entity does not have, or of another type than the literal's, is false (and `not` of it true).
//!
//! Layer: base.

use std::borrow::Cow;
use std::cmp::Ordering;
use table_model::filter::ComparisonOperator;
use table_model::DateTime;

/// Every comparison operator, to read one by its name ([`ComparisonOperator::as_str`]).
const OPERATORS: [ComparisonOperator; 6] = [
    ComparisonOperator::Eq,
    ComparisonOperator::Ne,
    ComparisonOperator::Gt,
    ComparisonOperator::Ge,
    ComparisonOperator::Lt,
    ComparisonOperator::Le,
];

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

/// A value a filter compares: a literal, or a property's value.
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

/// A parsed `$filter`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Filter {
    Compare { property: String, op: ComparisonOperator, literal: Value<'static> },
    And(Box<Filter>, Box<Filter>),
    Or(Box<Filter>, Box<Filter>),
    Not(Box<Filter>),
}

/// UTF-16 code-unit order, the service's order of strings.
pub(crate) fn utf16_cmp(a: &str, b: &str) -> Ordering {
    // Equal prefixes of UTF-8 are equal prefixes of UTF-16: compare from the first byte that differs.
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let start = (0..=common).rev().find(|&i| a.is_char_boundary(i) && b.is_char_boundary(i)).unwrap_or(0);
    a[start..].encode_utf16().cmp(b[start..].encode_utf16())
}

impl Filter {
    /// Reads `text`.
    ///
    /// # Errors
    /// What could not be read, and where (a character position in the filter).
    pub(crate) fn parse(text: &str) -> Result<Filter, String> {
        let mut tokens = Tokens { text, at: 0, last: 0 };
        let filter = tokens.or()?;
        match tokens.next()? {
            None => Ok(filter),
            Some(t) => Err(format!("unexpected `{t}` at {}", tokens.last)),
        }
    }

    /// Whether `record` matches.
    pub(crate) fn matches(&self, record: &impl Record) -> bool {
        match self {
            Filter::Compare { property, op, literal } => {
                let order = match (record.value(property), literal) {
                    (Some(Value::String(value)), Value::String(literal)) => utf16_cmp(&value, literal),
                    (Some(Value::DateTime(value)), Value::DateTime(literal)) => value.cmp(literal),
                    _ => return false,
                };
                holds(*op, order)
            }
            Filter::And(a, b) => a.matches(record) && b.matches(record),
            Filter::Or(a, b) => a.matches(record) || b.matches(record),
            Filter::Not(f) => !f.matches(record),
        }
    }

    /// The least PartitionKey the filter can select (a bound, not exact), so that a query starts where the
    /// filter does rather than at the table's first entity.
    pub(crate) fn lowest(&self) -> Option<&str> {
        match self {
            Filter::Compare {
                property,
                op: ComparisonOperator::Eq | ComparisonOperator::Gt | ComparisonOperator::Ge,
                literal: Value::String(value),
            } if property == "PartitionKey" => Some(value),
            Filter::And(a, b) => match (a.lowest(), b.lowest()) {
                (Some(a), Some(b)) => Some(if utf16_cmp(a, b).is_ge() { a } else { b }),
                (a, b) => a.or(b),
            },
            Filter::Or(a, b) => {
                let (a, b) = (a.lowest()?, b.lowest()?);
                Some(if utf16_cmp(a, b).is_le() { a } else { b })
            }
            _ => None,
        }
    }

    /// The greatest PartitionKey the filter can select (a bound, not exact), and whether the bound itself can
    /// be (`le`, `eq`) or not (`lt`): a query stops there rather than answering a continuation to a partition
    /// past the range.
    pub(crate) fn highest(&self) -> Option<(&str, bool)> {
        match self {
            Filter::Compare {
                property,
                op: op @ (ComparisonOperator::Eq | ComparisonOperator::Lt | ComparisonOperator::Le),
                literal: Value::String(value),
            } if property == "PartitionKey" => Some((value, *op != ComparisonOperator::Lt)),
            Filter::And(a, b) => match (a.highest(), b.highest()) {
                (Some(a), Some(b)) => Some(match utf16_cmp(a.0, b.0) {
                    Ordering::Less => a,
                    Ordering::Greater => b,
                    Ordering::Equal => (a.0, a.1 && b.1),
                }),
                (a, b) => a.or(b),
            },
            Filter::Or(a, b) => {
                let (a, b) = (a.highest()?, b.highest()?);
                Some(match utf16_cmp(a.0, b.0) {
                    Ordering::Less => b,
                    Ordering::Greater => a,
                    Ordering::Equal => (a.0, a.1 || b.1),
                })
            }
            _ => None,
        }
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

/// What the evaluator reads, for the errors.
const GRAMMAR: &str = "the loopback service evaluates comparisons (eq, ne, gt, ge, lt, le) of a property with a \
                       string or datetime literal, joined by and, or, not and parentheses";

struct Tokens<'a> {
    text: &'a str,
    /// Where the next token is looked for.
    at: usize,
    /// Where the last token read starts.
    last: usize,
}

impl<'a> Tokens<'a> {
    /// The next token: `(`, `)`, a word, a string literal with its quotes (`''` inside) or a `datetime'...'`.
    fn next(&mut self) -> Result<Option<&'a str>, String> {
        let rest = &self.text[self.at..];
        let trimmed = rest.trim_start_matches(' ');
        self.at += rest.len() - trimmed.len();
        self.last = self.at;
        let quoted = |from: usize| -> Result<usize, String> {
            let mut i = from + 1;
            loop {
                match trimmed[i..].find('\'') {
                    None => return Err(format!("unclosed string at {}", self.at + from)),
                    Some(j) if trimmed[i + j + 1..].starts_with('\'') => i += j + 2,
                    Some(j) => return Ok(i + j + 1),
                }
            }
        };
        let len = match trimmed.as_bytes().first() {
            None => return Ok(None),
            Some(b'(' | b')') => 1,
            Some(b'\'') => quoted(0)?,
            Some(_) if trimmed.starts_with("datetime'") => quoted("datetime".len())?,
            Some(_) => {
                let end = trimmed.find([' ', '(', ')', '\'']).unwrap_or(trimmed.len());
                if end == 0 {
                    return Err(format!("unexpected character at {}; {GRAMMAR}", self.at));
                }
                end
            }
        };
        self.at += len;
        Ok(Some(&trimmed[..len]))
    }

    fn peek(&mut self) -> Result<Option<&'a str>, String> {
        let (at, last) = (self.at, self.last);
        let token = self.next();
        (self.at, self.last) = (at, last);
        token
    }

    fn or(&mut self) -> Result<Filter, String> {
        let mut filter = self.and()?;
        while self.peek()? == Some("or") {
            self.next()?;
            filter = Filter::Or(Box::new(filter), Box::new(self.and()?));
        }
        Ok(filter)
    }

    fn and(&mut self) -> Result<Filter, String> {
        let mut filter = self.factor()?;
        while self.peek()? == Some("and") {
            self.next()?;
            filter = Filter::And(Box::new(filter), Box::new(self.factor()?));
        }
        Ok(filter)
    }

    fn factor(&mut self) -> Result<Filter, String> {
        let token = self.next()?;
        let at = self.last;
        match token {
            Some("not") => Ok(Filter::Not(Box::new(self.factor()?))),
            Some("(") => {
                let inner = self.or()?;
                match self.next()? {
                    Some(")") => Ok(inner),
                    other => Err(format!("expected `)` at {}, found {}", self.last, shown(other))),
                }
            }
            Some(name) if is_property(name) => {
                let op = self.next()?;
                let op_at = self.last;
                let Some(op) = OPERATORS.into_iter().find(|o| Some(o.as_str()) == op) else {
                    return Err(format!(
                        "expected a comparison after `{name}` at {op_at}, found {}; {GRAMMAR}",
                        shown(op)
                    ));
                };
                let literal = self.next()?;
                let literal_at = self.last;
                let literal = match literal {
                    Some(l) if l.starts_with('\'') => Value::String(unquote(l).into()),
                    Some(l) if l.starts_with("datetime'") => {
                        let text = unquote(&l["datetime".len()..]);
                        Value::DateTime(DateTime::parse(&text).map_err(|e| format!("`{l}` at {literal_at}: {e}"))?)
                    }
                    other => {
                        return Err(format!("unsupported literal {} at {literal_at}; {GRAMMAR}", shown(other)));
                    }
                };
                Ok(Filter::Compare { property: name.to_owned(), op, literal })
            }
            other => Err(format!("unexpected {} at {at}; {GRAMMAR}", shown(other))),
        }
    }
}

/// A token as an error names it.
fn shown(token: Option<&str>) -> String {
    token.map_or_else(|| "the end".to_owned(), |t| format!("`{t}`"))
}

/// A property name: a letter or `_`, then letters, digits and `_` (not a keyword).
fn is_property(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(word, "and" | "or" | "not" | "true" | "false" | "null")
}

/// The text of a quoted literal, `''` read as `'`.
fn unquote(literal: &str) -> String {
    literal[1..literal.len() - 1].replace("''", "'")
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
    fn what_it_cannot_evaluate_is_refused_with_its_position() {
        for (text, expected) in [
            ("Age gt 30", "unsupported literal `30` at 7"),
            ("Active eq true", "unsupported literal `true` at 10"),
            ("PartitionKey eq 'a", "unclosed string at 16"),
            ("PartitionKey eq 'a' xor", "unexpected `xor` at 20"),
            ("substringof('a', Name)", "expected a comparison after `substringof` at 11"),
            (
                "Timestamp ge datetime'yesterday'",
                "`datetime'yesterday'` at 13: invalid Edm.DateTime: expected ISO 8601",
            ),
            (
                "Timestamp ge datetime'1600-12-31T23:59:59Z'",
                "`datetime'1600-12-31T23:59:59Z'` at 13: invalid Edm.DateTime: must be",
            ),
            ("(RowKey eq 'a'", "expected `)` at 14, found the end"),
            ("", "unexpected the end at 0"),
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
        let op = prop::sample::select(OPERATORS.to_vec());
        let leaf = (any::<bool>(), op, key()).prop_map(|(row, op, v)| Model::Compare(row, op, v));
        leaf.prop_recursive(4, 16, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Model::And(Box::new(a), Box::new(b))),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Model::Or(Box::new(a), Box::new(b))),
                inner.prop_map(|a| Model::Not(Box::new(a))),
            ]
        })
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
