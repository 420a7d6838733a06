//! `$filter` literals: any string compared with a property renders as one OData string literal that reads
//! back as the string (`docs/rules.md` §7.2); and `$filter` text: whatever parses renders, and reads back
//! (`docs/rules.md` §7.1).
//!
//! Layer: targets.

use crate::text;
use table_model::filter::{prefix_upper_bound, Filter};

/// The bytes as a string value: `P eq '<literal>'` and the prefix range `P ge '<literal>' and P lt
/// '<bound>'` render, and each literal reads back (with [`read_string_literal`]) as exactly the string and
/// its bound; nothing follows the last literal.
pub fn filter_literal(data: &[u8]) {
    let value = text(data);
    let Ok(rendered) = Filter::property("P").eq(value.as_ref()).render() else { return };
    let rest = rendered.strip_prefix("P eq ").unwrap_or_else(|| panic!("{rendered}"));
    let (read, rest) = read_string_literal(rest).unwrap_or_else(|| panic!("not a literal: {rendered}"));
    assert_eq!((read.as_str(), rest), (value.as_ref(), ""), "{rendered}");

    let Ok(range) = Filter::property("P").starts_with(&value).render() else { return };
    let rest = range.strip_prefix("P ge ").unwrap_or_else(|| panic!("{range}"));
    let (low, rest) = read_string_literal(rest).unwrap_or_else(|| panic!("not a literal: {range}"));
    assert_eq!(low, value, "{range}");
    match prefix_upper_bound(&value) {
        Some(bound) => {
            let rest = rest.strip_prefix(" and P lt ").unwrap_or_else(|| panic!("{range}"));
            let (high, rest) = read_string_literal(rest).unwrap_or_else(|| panic!("not a literal: {range}"));
            assert_eq!((high, rest), (bound, ""), "{range}");
        }
        None => assert_eq!(rest, "", "{range}"),
    }
}

/// The bytes as `$filter` text for [`Filter::parse`]: an error points inside the text, and a filter that
/// parses renders (its rules were checked by the parser) to canonical text that parses back to the same
/// filter and renders to itself.
pub fn filter_parse(data: &[u8]) {
    let text = text(data);
    let filter = match Filter::parse(&text) {
        Ok(filter) => filter,
        Err(err) => {
            assert!(text.is_char_boundary(err.position()), "{err}: {text:?}");
            assert_eq!(err.column(), text[..err.position()].chars().count(), "{err}: {text:?}");
            return;
        }
    };
    let rendered = filter.render().unwrap_or_else(|err| panic!("{err}: {text:?}"));
    let again = Filter::parse(&rendered).unwrap_or_else(|err| panic!("{err}: {text:?} rendered {rendered:?}"));
    assert_eq!(again, filter, "{text:?} rendered {rendered:?}");
    assert_eq!(again.render().as_deref(), Ok(rendered.as_str()), "{text:?}");
}

/// Reads one OData string literal at the start of `text`: `'`, then characters where `''` stands for `'`,
/// then `'`. Returns the string and what follows the literal; `None` when `text` does not start with one.
///
/// ```
/// use table_model_fuzz_targets::read_string_literal;
/// assert_eq!(read_string_literal("'O''Brien' and x"), Some(("O'Brien".to_owned(), " and x")));
/// assert_eq!(read_string_literal("''"), Some((String::new(), "")));
/// assert_eq!(read_string_literal("'open"), None);
/// ```
pub fn read_string_literal(text: &str) -> Option<(String, &str)> {
    let mut rest = text.strip_prefix('\'')?;
    let mut value = String::new();
    loop {
        let quote = rest.find('\'')?;
        value.push_str(&rest[..quote]);
        rest = &rest[quote + 1..];
        match rest.strip_prefix('\'') {
            Some(after) => {
                value.push('\'');
                rest = after;
            }
            None => return Some((value, rest)),
        }
    }
}
