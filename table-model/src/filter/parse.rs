//! `$filter` text read into a [`Filter`] (`docs/rules.md` §7.1 and §7.2): the grammar the service reads,
//! checked as the builder and [`Filter::render`] check it, so that a mistake is an error with its position
//! before any request is sent.
//!
//! The grammar, with `not` binding tighter than `and`, and `and` tighter than `or`:
//!
//! ```text
//! filter     = or
//! or         = and *("or" and)
//! and        = unary *("and" unary)
//! unary      = "not" unary / "(" or ")" / comparison
//! comparison = property ("eq" / "ne" / "gt" / "ge" / "lt" / "le") literal
//! ```
//!
//! Tokens are separated by spaces or tabs; parentheses need none. The parser is recursive descent with its
//! depth bounded by [`FILTER_MAX_NESTING`], and reads every byte of the text a bounded number of times.

use super::error::{Expected, FilterParseError, FilterParseErrorKind};
use super::{check_name, ComparisonOperator, Filter, Name};
use crate::edm::datetime::DateTime;
use crate::edm::error::ValueErrorKind;
use crate::edm::{EdmType, EdmValue};
use crate::limits::{FILTER_MAX_COMPARISONS, FILTER_MAX_NESTING};
use std::borrow::Cow;
use uuid::Uuid;

/// At most this many characters of the text are quoted in an error.
const QUOTED_MAX_CHARS: usize = 32;

pub(super) fn parse(text: &str) -> Result<Filter, FilterParseError> {
    let mut parser = Parser { text, at: 0, depth: 0, comparisons: 0 };
    parser.skip_spaces();
    if parser.at == text.len() {
        return Err(parser.error(FilterParseErrorKind::Empty, parser.at));
    }
    let filter = parser.or()?;
    if parser.at != text.len() {
        return Err(parser.expected(Expected::AndOrEnd));
    }
    Ok(filter)
}

struct Parser<'a> {
    text: &'a str,
    /// The byte offset of the next character to read.
    at: usize,
    /// The number of open parentheses and `not` operators around the current position.
    depth: usize,
    comparisons: usize,
}

/// A character of a word: a keyword, a property name or a literal prefix. Every character a property name may
/// hold is one (the name rules then decide), and so is any other non-ASCII character but whitespace, so that
/// an error quotes the whole name.
fn is_word_char(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric() || (!c.is_ascii() && !c.is_whitespace())
}

fn word_len(s: &str) -> usize {
    s.find(|c: char| !is_word_char(c)).unwrap_or(s.len())
}

fn comparison_operator(word: &str) -> Option<ComparisonOperator> {
    Some(match word {
        "eq" => ComparisonOperator::Eq,
        "ne" => ComparisonOperator::Ne,
        "gt" => ComparisonOperator::Gt,
        "ge" => ComparisonOperator::Ge,
        "lt" => ComparisonOperator::Lt,
        "le" => ComparisonOperator::Le,
        _ => return None,
    })
}

/// At most [`QUOTED_MAX_CHARS`] characters of `s`, for a message.
fn quoted(s: &str) -> String {
    match s.char_indices().nth(QUOTED_MAX_CHARS) {
        Some((end, _)) => format!("{}...", &s[..end]),
        None => s.to_owned(),
    }
}

/// What separates tokens: spaces and tabs, and line breaks, so that a filter written over several lines (in a
/// script, or pasted into `tablectl --filter`) reads as it does on one.
const SPACE: [char; 4] = [' ', '\t', '\r', '\n'];

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn skip_spaces(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start_matches(SPACE).len();
    }

    fn error(&self, kind: FilterParseErrorKind, position: usize) -> FilterParseError {
        FilterParseError::new(kind, self.text, position)
    }

    /// The error for something other than `expected` at the current position, quoting what is there: a word,
    /// a parenthesis, or the run of characters up to the next space or parenthesis.
    fn expected(&self, expected: Expected) -> FilterParseError {
        let rest = self.rest();
        let found = rest.chars().next().map(|first| {
            let len = match first {
                '(' | ')' => 1,
                c if is_word_char(c) => word_len(rest),
                _ => rest.find(|c| SPACE.contains(&c) || c == '(' || c == ')').unwrap_or(rest.len()),
            };
            quoted(&rest[..len])
        });
        self.error(FilterParseErrorKind::Expected { expected, found }, self.at)
    }

    /// The word at the current position (empty when there is none), without reading it.
    fn peek_word(&self) -> &'a str {
        let rest = self.rest();
        &rest[..word_len(rest)]
    }

    /// Reads `keyword` when it is the next word, and the spaces after it.
    fn keyword(&mut self, keyword: &str) -> bool {
        if self.peek_word() == keyword {
            self.at += keyword.len();
            self.skip_spaces();
            true
        } else {
            false
        }
    }

    /// Enters a parenthesis or a `not` that starts at `start`.
    fn enter(&mut self, start: usize) -> Result<(), FilterParseError> {
        if self.depth == FILTER_MAX_NESTING {
            return Err(self.error(FilterParseErrorKind::TooDeep, start));
        }
        self.depth += 1;
        Ok(())
    }

    fn or(&mut self) -> Result<Filter, FilterParseError> {
        let mut filter = self.and()?;
        while self.keyword("or") {
            filter = filter.or(self.and()?);
        }
        Ok(filter)
    }

    fn and(&mut self) -> Result<Filter, FilterParseError> {
        let mut filter = self.unary()?;
        while self.keyword("and") {
            filter = filter.and(self.unary()?);
        }
        Ok(filter)
    }

    fn unary(&mut self) -> Result<Filter, FilterParseError> {
        let start = self.at;
        if self.rest().starts_with('(') {
            self.enter(start)?;
            self.at += 1;
            self.skip_spaces();
            let filter = self.or()?;
            if !self.rest().starts_with(')') {
                return Err(self.expected(Expected::AndOrClose));
            }
            self.at += 1;
            self.skip_spaces();
            self.depth -= 1;
            return Ok(filter);
        }
        if self.peek_word() == "not" && !self.not_is_a_property() {
            self.enter(start)?;
            self.keyword("not");
            let filter = !self.unary()?;
            self.depth -= 1;
            return Ok(filter);
        }
        self.comparison()
    }

    /// Whether the word `not` here is the name of the property of a comparison, `not eq 5`, rather than the
    /// operator, `not eq eq 5`: it is when a comparison operator follows that no second one follows.
    fn not_is_a_property(&self) -> bool {
        let mut ahead = Parser { at: self.at + "not".len(), ..*self };
        ahead.skip_spaces();
        let first = ahead.peek_word();
        if comparison_operator(first).is_none() {
            return false;
        }
        ahead.at += first.len();
        ahead.skip_spaces();
        comparison_operator(ahead.peek_word()).is_none()
    }

    fn comparison(&mut self) -> Result<Filter, FilterParseError> {
        let start = self.at;
        let name = self.peek_word();
        // A literal where the property belongs (`5 eq A`, `'a' eq A`): the service compares a property with a
        // literal only in this order.
        if name.is_empty()
            || name.starts_with(|c: char| c.is_ascii_digit())
            || self.text[start + name.len()..].starts_with('\'')
        {
            return Err(self.expected(Expected::Comparison));
        }
        if self.comparisons == FILTER_MAX_COMPARISONS {
            return Err(self.error(FilterParseErrorKind::TooManyComparisons, start));
        }
        if let Err(error) = check_name(name) {
            return Err(self.error(FilterParseErrorKind::InvalidProperty { name: name.to_owned(), error }, start));
        }
        self.at += name.len();
        self.skip_spaces();
        let Some(op) = comparison_operator(self.peek_word()) else {
            return Err(self.expected(Expected::ComparisonOperator));
        };
        self.at += 2;
        self.skip_spaces();
        let value = self.literal()?;
        self.skip_spaces();
        self.comparisons += 1;
        Ok(Filter::compare(Name(Ok(Cow::Owned(name.to_owned()))), op, Ok(value)))
    }

    fn literal(&mut self) -> Result<EdmValue, FilterParseError> {
        let start = self.at;
        let rest = self.rest();
        match rest.chars().next() {
            Some('\'') => {
                let value = self.quoted_body(start)?;
                EdmValue::try_from(value).map_err(|e| self.error(FilterParseErrorKind::InvalidValue(e), start))
            }
            Some('-' | '0'..='9') => self.number(),
            Some(c) if is_word_char(c) => {
                let word = self.peek_word();
                if !rest[word.len()..].starts_with('\'') {
                    let value = match word {
                        "true" => EdmValue::Boolean(true),
                        "false" => EdmValue::Boolean(false),
                        _ => return Err(self.expected(Expected::Literal)),
                    };
                    self.at += word.len();
                    return Ok(value);
                }
                let edm_type = match word {
                    "datetime" => EdmType::DateTime,
                    "guid" => EdmType::Guid,
                    "X" | "binary" => EdmType::Binary,
                    _ => return Err(self.expected(Expected::Literal)),
                };
                self.at += word.len();
                let body = self.quoted_body(start)?;
                let malformed = || {
                    let text = quoted(&self.text[start..self.at]);
                    self.error(FilterParseErrorKind::MalformedLiteral { edm_type, text }, start)
                };
                match edm_type {
                    EdmType::DateTime => match DateTime::parse(&body) {
                        Ok(t) => Ok(EdmValue::DateTime(t)),
                        Err(e) if matches!(e.kind(), ValueErrorKind::DateTimeSyntax { .. }) => Err(malformed()),
                        Err(e) => Err(self.error(FilterParseErrorKind::InvalidValue(e), start)),
                    },
                    // Only the hyphenated form is 36 characters long.
                    EdmType::Guid => match Uuid::try_parse(&body) {
                        Ok(g) if body.len() == 36 => Ok(EdmValue::Guid(g)),
                        _ => Err(malformed()),
                    },
                    _ => {
                        let bytes = hex(&body).ok_or_else(malformed)?;
                        EdmValue::try_from(bytes).map_err(|e| self.error(FilterParseErrorKind::InvalidValue(e), start))
                    }
                }
            }
            _ => Err(self.expected(Expected::Literal)),
        }
    }

    /// Reads `'...'` at the current position, where `''` stands for `'`, and returns what is between the quotes;
    /// an unterminated literal is reported at `start`, where the literal (with its prefix) starts.
    fn quoted_body(&mut self, start: usize) -> Result<String, FilterParseError> {
        let mut rest = &self.rest()[1..];
        let mut value = String::new();
        loop {
            let Some(quote) = rest.find('\'') else {
                return Err(self.error(FilterParseErrorKind::UnterminatedLiteral, start));
            };
            value.push_str(&rest[..quote]);
            rest = &rest[quote + 1..];
            match rest.strip_prefix('\'') {
                Some(after) => {
                    value.push('\'');
                    rest = after;
                }
                None => {
                    self.at = self.text.len() - rest.len();
                    return Ok(value);
                }
            }
        }
    }

    /// `-?digits` (Int32), `-?digitsL` (Int64), or `-?digits` with `.digits`, an exponent `e[+-]digits`, or
    /// both (Double).
    fn number(&mut self) -> Result<EdmValue, FilterParseError> {
        let start = self.at;
        let bytes = self.text.as_bytes();
        let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
        let mut end = start + usize::from(bytes[start] == b'-');
        let int = digits(end);
        if int == 0 {
            return Err(self.expected(Expected::Literal));
        }
        end += int;
        let mut edm_type = EdmType::Int32;
        let mut well_formed = true;
        if bytes.get(end) == Some(&b'L') {
            edm_type = EdmType::Int64;
            end += 1;
        } else {
            if bytes.get(end) == Some(&b'.') {
                edm_type = EdmType::Double;
                let fraction = digits(end + 1);
                well_formed &= fraction > 0;
                end += 1 + fraction;
            }
            if matches!(bytes.get(end), Some(b'e' | b'E')) {
                edm_type = EdmType::Double;
                end += 1;
                if matches!(bytes.get(end), Some(b'+' | b'-')) {
                    end += 1;
                }
                let exponent = digits(end);
                well_formed &= exponent > 0;
                end += exponent;
            }
        }
        // A literal ends at a space, a parenthesis or the end: `5x`, `1.5.2` and `7L'` are one malformed literal.
        let after = &self.text[end..];
        let junk = after.find(|c| SPACE.contains(&c) || c == '(' || c == ')').unwrap_or(after.len());
        let malformed = |edm_type| {
            let text = quoted(&self.text[start..end + junk]);
            self.error(FilterParseErrorKind::MalformedLiteral { edm_type, text }, start)
        };
        if junk > 0 || !well_formed {
            return Err(malformed(edm_type));
        }
        let text = &self.text[start..end];
        let value = match edm_type {
            EdmType::Int64 => EdmValue::Int64(text[..text.len() - 1].parse().map_err(|_| malformed(edm_type))?),
            EdmType::Double => match text.parse::<f64>() {
                Ok(v) if v.is_finite() => EdmValue::Double(v),
                _ => return Err(malformed(edm_type)),
            },
            _ => EdmValue::Int32(
                text.parse()
                    .map_err(|_| self.error(FilterParseErrorKind::Int32OutOfRange { text: quoted(text) }, start))?,
            ),
        };
        self.at = end;
        Ok(value)
    }
}

/// An even number of hexadecimal digits, in either case, as bytes.
fn hex(s: &str) -> Option<Vec<u8>> {
    let digit = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    bytes.chunks_exact(2).map(|pair| Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edm::EdmBinary;
    use crate::filter::error::FilterParseErrorKind as K;

    fn p(text: &str) -> Filter {
        Filter::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    /// The error of `text`: its position and message.
    fn err(text: &str) -> (usize, String) {
        let e = Filter::parse(text).expect_err(text);
        (e.position(), e.to_string())
    }

    fn cmp(name: &str, value: impl crate::edm::IntoEdm) -> Filter {
        Filter::property(name.to_owned()).eq(value)
    }

    #[test]
    fn literals_keep_their_exact_type() {
        let dt: DateTime = "2024-01-02T03:04:05.1234567Z".parse().unwrap();
        let g = Uuid::parse_str("0f8fad5b-d9cb-469f-a165-70867728950e").unwrap();
        for (text, expected) in [
            ("A eq 42", cmp("A", 42)),
            ("A eq -2147483648", cmp("A", i32::MIN)),
            ("A eq 007", cmp("A", 7)),
            ("A eq 42L", cmp("A", 42i64)),
            ("A eq -9223372036854775808L", cmp("A", i64::MIN)),
            ("A eq 4.5", cmp("A", 4.5)),
            ("A eq 5.0", cmp("A", 5.0)),
            ("A eq 1e3", cmp("A", 1000.0)),
            ("A eq -1.5E-3", cmp("A", -0.0015)),
            ("A eq 2.5e+2", cmp("A", 250.0)),
            ("A eq true", cmp("A", true)),
            ("A eq false", cmp("A", false)),
            ("A eq 'O''Brien'", cmp("A", "O'Brien")),
            ("A eq ''''", cmp("A", "'")),
            ("A eq ''", cmp("A", "")),
            ("A eq 'Größe 😀 (and) or not'", cmp("A", "Größe 😀 (and) or not")),
            ("A eq datetime'2024-01-02T03:04:05.1234567Z'", cmp("A", dt)),
            ("A eq guid'0F8FAD5B-D9CB-469F-A165-70867728950E'", cmp("A", g)),
            ("A eq X'0aFF'", cmp("A", EdmBinary::new(vec![0x0a, 0xff]).unwrap())),
            ("A eq binary''", cmp("A", EdmBinary::default())),
        ] {
            assert_eq!(p(text), expected, "{text}");
        }
        // The literal of an Int32 and an Int64 of the same value differ, and so do the filters.
        assert_ne!(p("A eq 5"), p("A eq 5L"));
        assert_ne!(p("A eq 5"), p("A eq 5.0"));
        assert_eq!(
            p("Timestamp ge datetime'1601-01-01T00:00:00Z'").render().unwrap(),
            "Timestamp ge datetime'1601-01-01T00:00:00.0000000Z'"
        );
    }

    #[test]
    fn operators_precedence_and_canonical_form() {
        for (text, canonical) in [
            ("A eq 1", "A eq 1"),
            ("  A\teq  1  ", "A eq 1"),
            (
                "PartitionKey eq 'eu'\r\n  and (Price gt 10.0\n    or Tag eq 'x')\n",
                "PartitionKey eq 'eu' and (Price gt 10.0 or Tag eq 'x')",
            ),
            ("A ne 1 and B gt 2 or C ge 3", "(A ne 1 and B gt 2) or C ge 3"),
            ("A lt 1 or B le 2 and C eq 3", "A lt 1 or (B le 2 and C eq 3)"),
            ("(A eq 1 or B eq 2) and C eq 3", "(A eq 1 or B eq 2) and C eq 3"),
            ("((A eq 1) and (B eq 2)) and C eq 3", "A eq 1 and B eq 2 and C eq 3"),
            ("(A eq 1)and(B eq 2)", "A eq 1 and B eq 2"),
            ("not A eq 1 and B eq 2", "not (A eq 1) and B eq 2"),
            ("not(A eq 1 or B eq 2)", "not (A eq 1 or B eq 2)"),
            ("not not A eq 1", "A eq 1"),
            ("A eq 'x'and B eq 'y'", "A eq 'x' and B eq 'y'"),
            // Words are keywords only where the grammar has one: these are property names.
            ("and eq 1 and or eq 2 or eq eq 3", "(and eq 1 and or eq 2) or eq eq 3"),
            ("not eq 5", "not eq 5"),
            ("not eq eq 5", "not (eq eq 5)"),
            ("true eq false", "true eq false"),
        ] {
            assert_eq!(p(text).render().unwrap(), canonical, "{text}");
            assert_eq!(p(canonical), p(text), "{text}");
        }
        // A property may be named like a keyword; what render writes for it parses back.
        for word in ["and", "or", "not", "eq", "le", "true", "false", "null", "datetime", "guid", "X", "binary"] {
            let f = Filter::property(word).eq(1) & !(Filter::property(word).ne("x") | Filter::property(word).lt(true));
            assert_eq!(p(&f.render().unwrap()), f, "{word}");
        }
        let f: Filter = "RowKey lt 'm'".parse().unwrap();
        assert_eq!(f, crate::filter::ROW_KEY.lt("m"));
    }

    #[test]
    fn grammar_errors_name_the_position_and_what_was_expected() {
        let op = "expected a comparison operator (eq, ne, gt, ge, lt, le)";
        let lit =
            "expected a literal (a string, a number, true, false, datetime'...', guid'...', X'...' or binary'...')";
        let start = "expected a property name, \"not\" or \"(\"";
        for (text, position, message) in [
            ("", 0, "the filter is empty; it needs at least one comparison".to_owned()),
            ("  \t ", 4, "the filter is empty; it needs at least one comparison".to_owned()),
            ("PartitionKey eq 'a' and Price == 100", 30, format!("{op}, found \"==\"")),
            ("A==5", 1, format!("{op}, found \"==5\"")),
            ("A EQ 5", 2, format!("{op}, found \"EQ\"")),
            ("A eq", 4, format!("{lit}, found the end of the filter")),
            ("A eq B", 5, format!("{lit}, found \"B\"")),
            ("A eq null", 5, format!("{lit}, found \"null\"")),
            ("A eq True", 5, format!("{lit}, found \"True\"")),
            ("A eq date'2024'", 5, format!("{lit}, found \"date\"")),
            ("A eq -", 5, format!("{lit}, found \"-\"")),
            ("A eq 1 B eq 2", 7, "expected \"and\", \"or\" or the end of the filter, found \"B\"".to_owned()),
            ("A eq 1)", 6, "expected \"and\", \"or\" or the end of the filter, found \")\"".to_owned()),
            ("A eq 1 && B eq 2", 7, "expected \"and\", \"or\" or the end of the filter, found \"&&\"".to_owned()),
            ("(A eq 1", 7, "expected \"and\", \"or\" or \")\", found the end of the filter".to_owned()),
            ("(A eq 1 or", 10, format!("{start}, found the end of the filter")),
            ("A eq 1 and 5 eq A", 11, format!("{start}, found \"5\"")),
            ("1st eq A", 0, format!("{start}, found \"1st\"")),
            ("()", 1, format!("{start}, found \")\"")),
            ("'a' eq A", 0, format!("{start}, found \"'a'\"")),
            ("guid'x' eq A", 0, format!("{start}, found \"guid\"")),
            ("A eq 'x", 5, "the literal has no closing quote (a quote inside a string is written '')".to_owned()),
            ("A eq 'x''", 5, "the literal has no closing quote (a quote inside a string is written '')".to_owned()),
            ("A eq X'00", 5, "the literal has no closing quote (a quote inside a string is written '')".to_owned()),
        ] {
            assert_eq!(err(text), (position, format!("invalid filter at position {position}: {message}")), "{text}");
        }
        let e = Filter::parse("A eq 1 or").unwrap_err();
        assert_eq!(e.kind(), &K::Expected { expected: Expected::Comparison, found: None });
        // A non-ASCII symbol is read as part of a word, so the message quotes all of it.
        let e = Filter::parse("A ≠ 1").unwrap_err();
        assert_eq!(e.kind(), &K::Expected { expected: Expected::ComparisonOperator, found: Some("≠".into()) });
        let e = Filter::parse("A≠1").unwrap_err();
        assert_eq!(e.kind(), &K::InvalidProperty { name: "A≠1".into(), error: check_name("A≠1").unwrap_err() });
    }

    #[test]
    fn positions_past_non_ascii_text_name_the_character_too() {
        let e = Filter::parse("Größe eq 'é' and Größe le").unwrap_err();
        assert_eq!((e.position(), e.column()), (30, 25));
        assert!(e.to_string().starts_with("invalid filter at position 30 (character 25): expected a literal"), "{e}");
        let long = format!("A eq 1 and B eq {}", "x".repeat(100));
        let e = Filter::parse(&long).unwrap_err();
        assert_eq!(
            e.kind(),
            &K::Expected { expected: Expected::Literal, found: Some(format!("{}...", "x".repeat(32))) }
        );
    }

    #[test]
    fn property_names_follow_the_rules() {
        for (text, position, message) in [
            (
                "partitionkey eq 'a'",
                0,
                "invalid property name \"partitionkey\": `PartitionKey` is a system property; a custom property \
                 cannot take that name in any case",
            ),
            (
                "A eq 1 and x\u{200B} eq 2",
                11,
                "invalid property name \"x\\u{200b}\": character U+200B at index 1 is not allowed; names must also \
                 be valid XML names",
            ),
        ] {
            assert_eq!(err(text), (position, format!("invalid filter at position {position}: {message}")), "{text}");
        }
        assert!(
            matches!(Filter::parse("A\u{200B} eq 1").unwrap_err().kind(), K::InvalidProperty { name, .. } if name == "A\u{200B}")
        );
        for good in ["PartitionKey", "RowKey", "Timestamp", "_x", "Größe", "x1"] {
            assert_eq!(p(&format!("{good} eq 1")), cmp(good, 1));
        }
    }

    #[test]
    fn malformed_literals_say_the_form_of_their_type() {
        for (text, position, message) in [
            (
                "A eq 2147483648",
                5,
                "2147483648 is outside the Edm.Int32 range (-2147483648 to 2147483647); write 2147483648L for an \
                 Edm.Int64",
            ),
            (
                "A eq -2147483649",
                5,
                "-2147483649 is outside the Edm.Int32 range (-2147483648 to 2147483647); write -2147483649L for an \
                 Edm.Int64",
            ),
            (
                "A eq 9223372036854775808L",
                5,
                "invalid Edm.Int64 literal \"9223372036854775808L\": an Edm.Int64 is written as decimal digits with \
                 an optional leading - and the suffix L, from -9223372036854775808L to 9223372036854775807L",
            ),
            ("A eq 5x", 5, "invalid Edm.Int32 literal \"5x\": an Edm.Int32 is written as decimal digits with an optional leading -"),
            ("A eq 5l", 5, "invalid Edm.Int32 literal \"5l\": an Edm.Int32 is written as decimal digits with an optional leading -"),
            (
                "A eq 1.5.2",
                5,
                "invalid Edm.Double literal \"1.5.2\": an Edm.Double is written as decimal digits with a fraction \
                 (4.5) or an exponent (1e10), and must be finite",
            ),
            (
                "A eq 5.",
                5,
                "invalid Edm.Double literal \"5.\": an Edm.Double is written as decimal digits with a fraction (4.5) \
                 or an exponent (1e10), and must be finite",
            ),
            (
                "A eq 1e",
                5,
                "invalid Edm.Double literal \"1e\": an Edm.Double is written as decimal digits with a fraction (4.5) \
                 or an exponent (1e10), and must be finite",
            ),
            (
                "A eq 1e999",
                5,
                "invalid Edm.Double literal \"1e999\": an Edm.Double is written as decimal digits with a fraction \
                 (4.5) or an exponent (1e10), and must be finite",
            ),
            (
                "A eq 1.5L",
                5,
                "invalid Edm.Double literal \"1.5L\": an Edm.Double is written as decimal digits with a fraction \
                 (4.5) or an exponent (1e10), and must be finite",
            ),
            (
                "A eq guid'0f8fad5b'",
                5,
                "invalid Edm.Guid literal \"guid'0f8fad5b'\": an Edm.Guid is written as guid'' and 32 hexadecimal \
                 digits in groups of 8-4-4-4-12",
            ),
            (
                "A eq guid'0f8fad5bd9cb469fa16570867728950e'",
                5,
                "invalid Edm.Guid literal \"guid'0f8fad5bd9cb469fa1657086772...\": an Edm.Guid is written as guid'' and \
                 32 hexadecimal digits in groups of 8-4-4-4-12",
            ),
            (
                "A eq X'abc'",
                5,
                "invalid Edm.Binary literal \"X'abc'\": an Edm.Binary is written as X'' or binary'' around an even \
                 number of hexadecimal digits",
            ),
            (
                "A eq X'zz'",
                5,
                "invalid Edm.Binary literal \"X'zz'\": an Edm.Binary is written as X'' or binary'' around an even \
                 number of hexadecimal digits",
            ),
            (
                "A eq datetime'2024-13-01T00:00:00Z'",
                5,
                "invalid Edm.DateTime literal \"datetime'2024-13-01T00:00:00Z'\": an Edm.DateTime is written as \
                 datetime'2024-01-02T03:04:05.0000000Z'",
            ),
        ] {
            assert_eq!(err(text), (position, format!("invalid filter at position {position}: {message}")), "{text}");
        }
        let e = Filter::parse("A eq 3000000000").unwrap_err();
        assert_eq!(e.kind(), &K::Int32OutOfRange { text: "3000000000".into() });
        assert_eq!(p("A eq 3000000000L"), cmp("A", 3_000_000_000i64));
    }

    #[test]
    fn values_beyond_their_type_limit_are_refused() {
        let (position, message) = err("A eq 1 or Timestamp lt datetime'1600-12-31T23:59:59Z'");
        assert_eq!(position, 23);
        assert!(
            message
                .starts_with("invalid filter at position 23: invalid Edm.DateTime: must be from 1601-01-01T00:00:00Z"),
            "{message}"
        );
        let e = Filter::parse("A eq datetime'9999-12-31T23:59:59.9999999Z' or A eq datetime'10000-01-01T00:00:00Z'");
        assert!(matches!(e.unwrap_err().kind(), K::MalformedLiteral { edm_type: EdmType::DateTime, .. }));
        let long = format!("A eq '{}'", "x".repeat(crate::limits::STRING_MAX_UTF16 + 1));
        let e = Filter::parse(&long).unwrap_err();
        assert_eq!(e.position(), 5);
        assert!(matches!(e.kind(), K::InvalidValue(v) if matches!(v.kind(), ValueErrorKind::StringTooLong { .. })));
        let big = format!("A eq X'{}'", "00".repeat(crate::limits::BINARY_MAX_BYTES + 1));
        let e = Filter::parse(&big).unwrap_err();
        assert!(matches!(e.kind(), K::InvalidValue(v) if matches!(v.kind(), ValueErrorKind::BinaryTooLarge { .. })));
        let longest = format!("A eq '{}'", "x".repeat(crate::limits::STRING_MAX_UTF16));
        assert!(Filter::parse(&longest).is_ok());
    }

    #[test]
    fn at_most_15_comparisons() {
        let fifteen = vec!["N eq 1"; 15].join(" or ");
        assert_eq!(p(&fifteen).comparisons(), 15);
        let sixteen = format!("{fifteen} or M eq 2");
        let e = Filter::parse(&sixteen).unwrap_err();
        assert_eq!(e.kind(), &K::TooManyComparisons);
        assert_eq!(e.position(), fifteen.len() + 4);
        assert_eq!(
            e.to_string(),
            format!(
                "invalid filter at position {}: at most 15 comparisons are allowed, this is one more",
                fifteen.len() + 4
            )
        );
    }

    #[test]
    fn nesting_is_bounded_without_overflowing_the_stack() {
        let deepest = format!("{}A eq 1{}", "(".repeat(FILTER_MAX_NESTING), ")".repeat(FILTER_MAX_NESTING));
        assert_eq!(p(&deepest), cmp("A", 1));
        let nots = format!("{}A eq 1", "not ".repeat(FILTER_MAX_NESTING));
        assert_eq!(p(&nots), cmp("A", 1));
        for text in [
            "(".repeat(100_000),
            format!("{}A eq 1{}", "(".repeat(FILTER_MAX_NESTING + 1), ")".repeat(FILTER_MAX_NESTING + 1)),
            "not ".repeat(100_000),
            "not (".repeat(100_000),
        ] {
            let e = Filter::parse(&text).unwrap_err();
            assert_eq!(e.kind(), &K::TooDeep);
            assert_eq!(
                e.to_string(),
                format!(
                    "invalid filter at position {}: more than 64 nested parentheses and not operators",
                    e.position()
                )
            );
        }
        let e = Filter::parse(&"(".repeat(100_000)).unwrap_err();
        assert_eq!(e.position(), FILTER_MAX_NESTING);
        let e = Filter::parse(&"not ".repeat(100_000)).unwrap_err();
        assert_eq!(e.position(), 4 * FILTER_MAX_NESTING);
    }

    #[test]
    fn long_input_is_read_in_linear_time() {
        // A megabyte of spaces and a long unterminated string are each read once, well within the test timeout.
        let spaces = format!("A{}eq 1", " ".repeat(1 << 20));
        assert_eq!(p(&spaces), cmp("A", 1));
        let open = format!("A eq '{}", "''".repeat(1 << 19));
        assert_eq!(Filter::parse(&open).unwrap_err().kind(), &K::UnterminatedLiteral);
    }
}
