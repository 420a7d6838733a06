//! Filter tests, with a small tokenizer and parser of the rendered `$filter` so that property tests can check
//! that what was built is exactly what the service will read.

use super::*;
use crate::edm::EdmBinary;
use proptest::prelude::*;

/// The structure of a filter: what the parser reads back, and what the generator builds from.
#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Cmp(String, ComparisonOperator, EdmValue),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
}

impl Expr {
    fn to_filter(&self) -> Filter {
        match self {
            Expr::Cmp(name, op, v) => {
                let p = Filter::property(name.clone());
                match op {
                    ComparisonOperator::Eq => p.eq(v.clone()),
                    ComparisonOperator::Ne => p.ne(v.clone()),
                    ComparisonOperator::Gt => p.gt(v.clone()),
                    ComparisonOperator::Ge => p.ge(v.clone()),
                    ComparisonOperator::Lt => p.lt(v.clone()),
                    ComparisonOperator::Le => p.le(v.clone()),
                }
            }
            Expr::And(items) => Filter::all(items.iter().map(Expr::to_filter)).unwrap(),
            Expr::Or(items) => Filter::any(items.iter().map(Expr::to_filter)).unwrap(),
            Expr::Not(inner) => !inner.to_filter(),
        }
    }

    /// The form the builder keeps: chains of one operator flattened, double negations cancelled.
    fn normalize(self) -> Expr {
        match self {
            Expr::And(items) | Expr::Or(items) if items.len() == 1 => items.into_iter().next().unwrap().normalize(),
            Expr::And(items) => Expr::And(flatten(items, true)),
            Expr::Or(items) => Expr::Or(flatten(items, false)),
            Expr::Not(inner) => match inner.normalize() {
                Expr::Not(x) => *x,
                x => Expr::Not(Box::new(x)),
            },
            cmp => cmp,
        }
    }

    fn comparisons(&self) -> usize {
        match self {
            Expr::Cmp(..) => 1,
            Expr::And(v) | Expr::Or(v) => v.iter().map(Expr::comparisons).sum(),
            Expr::Not(x) => x.comparisons(),
        }
    }
}

fn flatten(items: Vec<Expr>, and: bool) -> Vec<Expr> {
    let mut out = Vec::new();
    for item in items {
        match item.normalize() {
            Expr::And(v) if and => out.extend(v),
            Expr::Or(v) if !and => out.extend(v),
            x => out.push(x),
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Literal(EdmValue),
    Open,
    Close,
}

/// Splits a rendered filter into tokens; `Err` for anything the service's grammar would not read.
fn tokenize(s: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut rest = s;
    loop {
        rest = rest.strip_prefix(' ').unwrap_or(rest);
        let Some(c) = rest.chars().next() else { return Ok(tokens) };
        let (token, len) = match c {
            '(' => (Token::Open, 1),
            ')' => (Token::Close, 1),
            '\'' => {
                let (value, len) = quoted(rest)?;
                (Token::Literal(EdmValue::try_from(value).map_err(|e| e.to_string())?), len)
            }
            '-' | '0'..='9' => number(rest)?,
            _ => {
                let len = rest.find([' ', '(', ')', '\'']).unwrap_or(rest.len());
                let word = &rest[..len];
                match (word, rest[len..].starts_with('\'')) {
                    ("true", false) => (Token::Literal(EdmValue::Boolean(true)), len),
                    ("false", false) => (Token::Literal(EdmValue::Boolean(false)), len),
                    (prefix @ ("datetime" | "guid" | "X"), true) => {
                        let (body, qlen) = quoted(&rest[len..])?;
                        let value = match prefix {
                            "datetime" => EdmValue::DateTime(body.parse().map_err(|e: ValueError| e.to_string())?),
                            "guid" => EdmValue::Guid(Uuid::parse_str(&body).map_err(|e| e.to_string())?),
                            _ => EdmValue::Binary(EdmBinary::new(hex(&body)?).map_err(|e| e.to_string())?),
                        };
                        (Token::Literal(value), len + qlen)
                    }
                    (_, true) => return Err(format!("unknown literal prefix {word:?}")),
                    _ => (Token::Ident(word.to_owned()), len),
                }
            }
        };
        tokens.push(token);
        rest = &rest[len..];
    }
}

/// A `'...'` literal with `''` for a quote: its content and its length in bytes.
fn quoted(s: &str) -> Result<(String, usize), String> {
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' {
            if chars.peek().map(|&(_, c)| c) == Some('\'') {
                chars.next();
                out.push('\'');
            } else {
                return Ok((out, i + 1));
            }
        } else {
            out.push(c);
        }
    }
    Err(format!("unterminated string in {s:?}"))
}

fn hex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(format!("not lowercase hex: {s:?}"));
    }
    Ok((0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect())
}

/// `-?\d+` (Int32), `-?\d+L` (Int64) or `-?\d+\.\d+` (Double): Azurite's number grammar.
fn number(s: &str) -> Result<(Token, usize), String> {
    let sign = usize::from(s.starts_with('-'));
    let int = s[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if int == 0 {
        return Err(format!("bad number in {s:?}"));
    }
    let mut end = sign + int;
    let value = if s[end..].starts_with('L') {
        let v = EdmValue::Int64(s[..end].parse().map_err(|e| format!("{e}"))?);
        end += 1;
        v
    } else if s[end..].starts_with('.') {
        let frac = s[end + 1..].bytes().take_while(u8::is_ascii_digit).count();
        if frac == 0 {
            return Err(format!("bad double in {s:?}"));
        }
        end += 1 + frac;
        EdmValue::Double(s[..end].parse().map_err(|e| format!("{e}"))?)
    } else {
        EdmValue::Int32(s[..end].parse().map_err(|e| format!("{e}"))?)
    };
    if s[end..].chars().next().is_some_and(|c| c != ' ' && c != ')') {
        return Err(format!("junk after number in {s:?}"));
    }
    Ok((Token::Literal(value), end))
}

/// Parses tokens with OData precedence: `or` < `and` < `not` < comparison.
struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn parse(s: &str) -> Result<Expr, String> {
        let mut p = Parser { tokens: tokenize(s)?, at: 0 };
        let e = p.or()?;
        if p.at != p.tokens.len() {
            return Err(format!("trailing tokens at {}", p.at));
        }
        Ok(e)
    }

    fn keyword(&mut self, word: &str) -> bool {
        if matches!(self.tokens.get(self.at), Some(Token::Ident(w)) if w == word) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut items = vec![self.and()?];
        while self.keyword("or") {
            items.push(self.and()?);
        }
        Ok(if items.len() == 1 { items.pop().unwrap() } else { Expr::Or(items) })
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut items = vec![self.unary()?];
        while self.keyword("and") {
            items.push(self.unary()?);
        }
        Ok(if items.len() == 1 { items.pop().unwrap() } else { Expr::And(items) })
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.keyword("not") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.tokens.get(self.at) == Some(&Token::Open) {
            self.at += 1;
            let e = self.or()?;
            if self.tokens.get(self.at) != Some(&Token::Close) {
                return Err("missing )".into());
            }
            self.at += 1;
            return Ok(e);
        }
        let Some(Token::Ident(name)) = self.tokens.get(self.at).cloned() else {
            return Err(format!("expected a property at {}", self.at));
        };
        let op = match self.tokens.get(self.at + 1) {
            Some(Token::Ident(op)) => match op.as_str() {
                "eq" => ComparisonOperator::Eq,
                "ne" => ComparisonOperator::Ne,
                "gt" => ComparisonOperator::Gt,
                "ge" => ComparisonOperator::Ge,
                "lt" => ComparisonOperator::Lt,
                "le" => ComparisonOperator::Le,
                other => return Err(format!("unknown operator {other:?}")),
            },
            other => return Err(format!("expected an operator, found {other:?}")),
        };
        let Some(Token::Literal(value)) = self.tokens.get(self.at + 2).cloned() else {
            return Err(format!("expected a literal at {}", self.at + 2));
        };
        self.at += 3;
        Ok(Expr::Cmp(name, op, value))
    }
}

#[test]
fn parser_reads_what_it_should() {
    let e = Parser::parse("A eq 'x''y' and (B gt 5L or not (C le -1.5))").unwrap();
    assert_eq!(
        e,
        Expr::And(vec![
            Expr::Cmp("A".into(), ComparisonOperator::Eq, EdmValue::try_from("x'y").unwrap()),
            Expr::Or(vec![
                Expr::Cmp("B".into(), ComparisonOperator::Gt, EdmValue::Int64(5)),
                Expr::Not(Box::new(Expr::Cmp("C".into(), ComparisonOperator::Le, EdmValue::Double(-1.5)))),
            ]),
        ])
    );
    // An escaped literal that was not doubled would not parse back to one comparison.
    assert!(Parser::parse("A eq 'x'y'").is_err());
    assert!(Parser::parse("A eq 'x' or B eq 'y").is_err());
}

#[test]
fn precedence_and_parentheses() {
    let c = |n: &str| Filter::property(n.to_owned()).eq(1);
    assert_eq!((c("A") & c("B") | c("C")).render().unwrap(), "(A eq 1 and B eq 1) or C eq 1");
    assert_eq!((c("A") & (c("B") | c("C"))).render().unwrap(), "A eq 1 and (B eq 1 or C eq 1)");
    assert_eq!((!c("A")).render().unwrap(), "not (A eq 1)");
    assert_eq!((!!c("A")).render().unwrap(), "A eq 1");
    assert_eq!((!(c("A") | c("B")) & c("C")).render().unwrap(), "not (A eq 1 or B eq 1) and C eq 1");
    assert_eq!(((c("A") & c("B")) & (c("C") & c("D"))).render().unwrap(), "A eq 1 and B eq 1 and C eq 1 and D eq 1");
}

#[test]
fn comparison_limit_counts_every_comparison() {
    let at_limit = Filter::all((0..15).map(|i| Filter::property("N").ne(i))).unwrap();
    assert_eq!(at_limit.comparisons(), 15);
    assert!(at_limit.render().is_ok());
    let over = !(at_limit & Filter::property("M").eq(0));
    assert_eq!(over.render().unwrap_err().kind(), &FilterErrorKind::TooManyComparisons { count: 16 });
    // A prefix range is two comparisons.
    let ranges = Filter::all((0..8).map(|_| ROW_KEY.starts_with("a"))).unwrap();
    assert_eq!(ranges.render().unwrap_err().kind(), &FilterErrorKind::TooManyComparisons { count: 16 });
}

#[test]
fn property_names_are_checked() {
    for good in ["PartitionKey", "RowKey", "Timestamp", "Name", "_x", "Größe"] {
        assert!(Filter::property(good).eq(1).render().is_ok(), "{good}");
    }
    for bad in ["", "A B", "a-b", "x)", "x'", "Name eq 'a' or Name", "partitionkey", "1st"] {
        let err = Filter::property(bad).eq(1).render().unwrap_err();
        assert!(matches!(err.kind(), FilterErrorKind::InvalidProperty { name, .. } if name == bad), "{bad}");
    }
}

#[test]
fn value_errors_name_the_property() {
    let big = "x".repeat(crate::limits::STRING_MAX_UTF16 + 1);
    let err = Filter::property("Note").eq(big.as_str()).render().unwrap_err();
    assert!(err.to_string().starts_with("invalid filter: property `Note`: invalid Edm.String"), "{err}");
    let early = chrono::DateTime::parse_from_rfc3339("1500-01-01T00:00:00Z").unwrap().to_utc();
    let err = TIMESTAMP.lt(early).render().unwrap_err();
    assert!(matches!(err.kind(), FilterErrorKind::InvalidValue(_)));
    assert!(err.to_string().starts_with("invalid filter: property `Timestamp`: invalid Edm.DateTime"), "{err}");
}

#[test]
fn typed_operands_take_the_property_type() {
    let int64: Property<i64> = Property::__new("Big");
    let double: Property<f64> = Property::__new("Price");
    let opt: Property<Option<i32>> = Property::__new("Maybe");
    let bytes: Property<Vec<u8>> = Property::__new("Blob");
    let id: Property<Uuid> = Property::__new("Id");
    let flag: Property<bool> = Property::__new("Active");
    let name: Property<String> = Property::__new("Name");
    let small: Property<u8> = Property::__new("Small");
    let any: Property<EdmValue> = Property::__new("Any");
    assert_eq!(any.eq(5i64).render().unwrap(), "Any eq 5L");
    assert_eq!(any.eq("x").render().unwrap(), "Any eq 'x'");
    assert_eq!(int64.eq(5).render().unwrap(), "Big eq 5L");
    assert_eq!(int64.eq(5u32).render().unwrap(), "Big eq 5L");
    assert_eq!(double.eq(5).render().unwrap(), "Price eq 5.0");
    assert_eq!(double.lt(0.1f32).render().unwrap(), format!("Price lt {}", f64::from(0.1f32)));
    assert_eq!(opt.eq(7).render().unwrap(), "Maybe eq 7");
    assert_eq!(bytes.eq(b"\x01\xfe").render().unwrap(), "Blob eq X'01fe'");
    assert_eq!(bytes.eq(vec![1u8]).render().unwrap(), "Blob eq X'01'");
    assert_eq!(id.eq(Uuid::nil()).render().unwrap(), "Id eq guid'00000000-0000-0000-0000-000000000000'");
    assert_eq!(flag.ne(true).render().unwrap(), "Active ne true");
    assert_eq!(name.eq(String::from("a")).render().unwrap(), "Name eq 'a'");
    let key = PartitionKey::new("k").unwrap();
    assert_eq!(name.eq(&key).render().unwrap(), "Name eq 'k'");
    assert_eq!(name.eq(key).render().unwrap(), "Name eq 'k'");
    assert_eq!(small.ge(200).render().unwrap(), "Small ge 200");
    assert_eq!(ROW_KEY.eq("r").render().unwrap(), "RowKey eq 'r'");
    let t: DateTime = "2030-01-01T00:00:00Z".parse().unwrap();
    assert_eq!(TIMESTAMP.lt(t).render().unwrap(), "Timestamp lt datetime'2030-01-01T00:00:00.0000000Z'");
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("PartitionKey".to_owned()),
        Just("RowKey".to_owned()),
        Just("Timestamp".to_owned()),
        "[A-Za-z_][A-Za-z0-9_]{0,8}"
            .prop_filter("not reserved", |n| { table_model_rules::property_name::check(n).is_ok() }),
        Just("Größe".to_owned()),
    ]
}

/// Strings full of the characters that could end or break a literal.
fn hostile_string() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just('\''),
            Just('"'),
            Just(' '),
            Just('('),
            Just(')'),
            Just('%'),
            Just('+'),
            Just('&'),
            Just('\\'),
            Just('\u{0}'),
            Just('\u{FFFF}'),
            Just('😀'),
            any::<char>(),
        ],
        0..12,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn value() -> impl Strategy<Value = EdmValue> {
    prop_oneof![
        3 => hostile_string().prop_map(|s| EdmValue::try_from(s).unwrap()),
        1 => any::<i32>().prop_map(EdmValue::Int32),
        1 => any::<i64>().prop_map(EdmValue::Int64),
        1 => any::<f64>().prop_filter("finite", |v| v.is_finite()).prop_map(EdmValue::Double),
        1 => any::<bool>().prop_map(EdmValue::Boolean),
        1 => (crate::limits::DATETIME_MIN_TICKS..=crate::limits::DATETIME_MAX_TICKS)
            .prop_map(|t| EdmValue::DateTime(DateTime::from_ticks(t).unwrap())),
        1 => any::<u128>().prop_map(|v| EdmValue::Guid(Uuid::from_u128(v))),
        1 => prop::collection::vec(any::<u8>(), 0..8).prop_map(|v| EdmValue::try_from(v).unwrap()),
    ]
}

fn op() -> impl Strategy<Value = ComparisonOperator> {
    prop_oneof![
        Just(ComparisonOperator::Eq),
        Just(ComparisonOperator::Ne),
        Just(ComparisonOperator::Gt),
        Just(ComparisonOperator::Ge),
        Just(ComparisonOperator::Lt),
        Just(ComparisonOperator::Le),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = (name(), op(), value()).prop_map(|(n, o, v)| Expr::Cmp(n, o, v));
    leaf.prop_recursive(4, 15, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(Expr::And),
            prop::collection::vec(inner.clone(), 1..4).prop_map(Expr::Or),
            inner.prop_map(|e| Expr::Not(Box::new(e))),
        ]
    })
}

/// The structure a walk of [`Filter::expr`] finds.
fn walked(filter: &Filter) -> Result<Expr, FilterError> {
    let all = |filters: &[Filter]| filters.iter().map(walked).collect::<Result<Vec<_>, _>>();
    Ok(match filter.expr()? {
        FilterExpr::Compare { property, op, value } => Expr::Cmp(property.to_owned(), op, value.clone()),
        FilterExpr::And(filters) => Expr::And(all(filters)?),
        FilterExpr::Or(filters) => Expr::Or(all(filters)?),
        FilterExpr::Not(filter) => Expr::Not(Box::new(walked(filter)?)),
    })
}

#[test]
fn a_walk_reports_an_invalid_comparison_as_render_does() {
    let f = Filter::property("N").eq(1) & !Filter::property("A or B").eq(2);
    let FilterExpr::And([_, not]) = f.expr().unwrap() else { panic!("an `and` of two") };
    let FilterExpr::Not(bad) = not.expr().unwrap() else { panic!("a `not`") };
    assert_eq!(bad.expr().unwrap_err(), f.render().unwrap_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Whatever the values, the rendered filter parses back to exactly the structure that was built: no value
    /// can leave its literal, and the parentheses keep every operator where it was put.
    #[test]
    fn rendered_filter_parses_back_to_what_was_built(e in expr()) {
        let filter = e.to_filter();
        let expected = e.clone().normalize();
        prop_assert_eq!(filter.comparisons(), e.comparisons());
        match filter.render() {
            Ok(text) => {
                let parsed = Parser::parse(&text).map_err(|err| TestCaseError::fail(format!("{err}: {text}")))?;
                prop_assert_eq!(parsed.normalize(), expected, "{}", text);
            }
            Err(err) => {
                prop_assert!(e.comparisons() > FILTER_MAX_COMPARISONS, "{}", err);
                prop_assert_eq!(err.kind(), &FilterErrorKind::TooManyComparisons { count: e.comparisons() });
            }
        }
    }

    /// `Filter::parse` reads every filter that renders back to exactly that filter, and its text is canonical:
    /// rendering the parsed filter gives the same text.
    #[test]
    fn parse_reads_back_every_rendered_filter(e in expr()) {
        let filter = e.to_filter();
        if let Ok(text) = filter.render() {
            let parsed = Filter::parse(&text).map_err(|err| TestCaseError::fail(format!("{err}: {text}")))?;
            prop_assert_eq!(&parsed, &filter, "{}", text);
            prop_assert_eq!(parsed.render().unwrap(), text);
        }
    }

    /// A walk of [`Filter::expr`] finds the structure that was built, as the builder keeps it (chains
    /// flattened, double negations cancelled), whether or not it renders.
    #[test]
    fn a_walk_finds_what_was_built(e in expr()) {
        prop_assert_eq!(walked(&e.to_filter()).map_err(|err| TestCaseError::fail(err.to_string()))?, e.normalize());
    }

    /// Any text, and any text made of the filter's own tokens, parses or gets an error inside the text; what
    /// parses renders, and the rendered text parses back to the same filter.
    #[test]
    fn parse_never_panics_and_what_it_reads_renders(text in prop_oneof![
        ".{0,40}",
        prop::collection::vec(
            prop_oneof![
                Just("A"), Just("PartitionKey"), Just(" "), Just("eq"), Just("lt"), Just("and"), Just("or"),
                Just("not"), Just("("), Just(")"), Just("'"), Just("''"), Just("-"), Just("1"), Just("L"), Just("."),
                Just("e"), Just("true"), Just("X'"), Just("guid'"), Just("datetime'"), Just("2024-01-01T00:00:00Z"),
                Just("ab"), Just("é"),
            ],
            0..24,
        ).prop_map(|parts| parts.concat()),
    ]) {
        match Filter::parse(&text) {
            Ok(filter) => {
                let rendered = filter.render().map_err(|err| TestCaseError::fail(format!("{err}: {text}")))?;
                prop_assert_eq!(Filter::parse(&rendered).ok(), Some(filter), "{} -> {}", text, rendered);
            }
            Err(err) => {
                prop_assert!(err.position() <= text.len() && text.is_char_boundary(err.position()), "{}", text);
                prop_assert_eq!(err.column(), text[..err.position()].chars().count());
            }
        }
    }

    /// A hostile string compared with a typed property is one literal holding exactly that string.
    #[test]
    fn hostile_strings_stay_literals(s in hostile_string()) {
        let text = ROW_KEY.eq(s.as_str()).render().unwrap();
        let parsed = Parser::parse(&text).unwrap();
        prop_assert_eq!(parsed, Expr::Cmp("RowKey".into(), ComparisonOperator::Eq, EdmValue::try_from(s).unwrap()));
    }

    /// A prefix range parses back to `ge prefix and lt bound` on the same property.
    #[test]
    fn prefix_ranges_parse_back(s in hostile_string()) {
        let text = PARTITION_KEY.starts_with(&s).render().unwrap();
        let lower = Expr::Cmp("PartitionKey".into(), ComparisonOperator::Ge, EdmValue::try_from(s.clone()).unwrap());
        let expected = match prefix_upper_bound(&s) {
            Some(b) => Expr::And(vec![
                lower,
                Expr::Cmp("PartitionKey".into(), ComparisonOperator::Lt, EdmValue::try_from(b).unwrap()),
            ]),
            None => lower,
        };
        prop_assert_eq!(Parser::parse(&text).unwrap(), expected);
    }
}

#[test]
fn time_ranges_use_the_key_helpers() {
    let from: DateTime = "2024-01-01T00:00:00Z".parse().unwrap();
    let to: DateTime = "2024-01-02T00:00:00Z".parse().unwrap();
    let chrono: std::ops::Range<RowKey> = crate::key::chronological_range(from, to);
    assert_eq!(
        ROW_KEY.chronological_range(from, to).render().unwrap(),
        format!("RowKey ge '{}' and RowKey lt '{}'", chrono.start, chrono.end)
    );
    let reverse: std::ops::Range<RowKey> = crate::key::reverse_chronological_range(from, to);
    let rendered = Filter::property("RowKey").reverse_chronological_range(from, to).render().unwrap();
    assert_eq!(rendered, format!("RowKey ge '{}' and RowKey lt '{}'", reverse.start, reverse.end));
    // The newest instant of the range is its first key; `to` itself is out.
    let newest = DateTime::from_ticks(to.ticks() - 1).unwrap();
    assert_eq!(reverse.start, crate::key::reverse_chronological::<RowKey, _>(newest));
    assert_eq!(PARTITION_KEY.in_range("a".."b").comparisons(), 2);
}

#[test]
fn time_ranges_take_chrono_and_system_time_instants() {
    let from: DateTime = "2024-01-01T00:00:00Z".parse().unwrap();
    let to: DateTime = "2024-01-02T00:00:00Z".parse().unwrap();
    let (chrono_from, chrono_to) = (from.to_chrono(), to.to_chrono());
    let system_to = std::time::SystemTime::from(chrono_to);
    for (by_date_time, by_other) in [
        (ROW_KEY.chronological_range(from, to), ROW_KEY.chronological_range(chrono_from, chrono_to)),
        (ROW_KEY.reverse_chronological_range(from, to), ROW_KEY.reverse_chronological_range(chrono_from, system_to)),
        (
            Filter::property("RowKey").reverse_chronological_range(from, to),
            Filter::property("RowKey").reverse_chronological_range(from, chrono_to),
        ),
    ] {
        assert_eq!(by_other.render().unwrap(), by_date_time.render().unwrap());
    }
    // An instant the service cannot store: the filter keeps the error, with the same two comparisons, and
    // rendering it reports the instant.
    let after_9999 = chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 10000, 1, 1, 0, 0, 0).unwrap();
    for filter in [
        ROW_KEY.chronological_range(from, after_9999),
        ROW_KEY.reverse_chronological_range(after_9999, to),
        Filter::property("RowKey").chronological_range(after_9999, after_9999),
    ] {
        assert_eq!(filter.comparisons(), 2);
        let err = filter.render().unwrap_err();
        assert!(matches!(err.kind(), FilterErrorKind::InvalidValue(_)), "{err}");
        assert_eq!(
            err.to_string(),
            "invalid filter: property `RowKey`: invalid Edm.DateTime: must be from 1601-01-01T00:00:00Z to \
             9999-12-31T23:59:59.9999999Z, found +10000-01-01T00:00:00+00:00"
        );
    }
}

#[cfg(feature = "derive")]
#[test]
fn table_enums_compare_by_name() {
    #[derive(crate::TableEnum, Debug, PartialEq)]
    #[table(rename_all = "snake_case")]
    enum Status {
        InTransit,
    }
    let status: Property<Status> = Property::__new("Status");
    assert_eq!(status.eq(Status::InTransit).render().unwrap(), "Status eq 'in_transit'");
    let optional: Property<Option<Status>> = Property::__new("Status");
    assert_eq!(optional.ne(&Status::InTransit).render().unwrap(), "Status ne 'in_transit'");
}
