//! Range helpers: key prefixes (`docs/rules.md` §7.5) and key ranges, among them the time ranges of
//! chronological and reverse-chronological keys (`docs/rules.md` §6.2, [`crate::key`]).

use super::{ComparisonOperator, Filter, FilterProperty, Name, StringLiteral};
use crate::edm::datetime::IntoDateTime;
use crate::edm::{EdmString, EdmValue};
use crate::key::{self, RowKey};
use crate::property::Property;
use std::borrow::Cow;
use std::ops::Range;

/// The least string above every string that starts with `prefix`, in the service's order (ordinal by UTF-16
/// code unit), so that `s.starts_with(prefix)` exactly when `prefix <= s < bound`. `None` when no string is
/// above them all: for the empty prefix and for a prefix of only U+FFFF characters.
///
/// Trailing U+FFFF characters are dropped and the last remaining character is replaced by the next one in
/// UTF-16 order. That is the next code point, except at the two places where UTF-16 order and code point
/// order part: after U+D7FF comes U+10000 (the first surrogate pair: no character has a lone surrogate as its
/// first unit), and after U+10FFFF comes U+E000 (every pair sorts below U+E000).
///
/// ```
/// use table_model::filter::prefix_upper_bound;
/// assert_eq!(prefix_upper_bound("2024-05").as_deref(), Some("2024-06"));
/// assert_eq!(prefix_upper_bound("a\u{FFFF}").as_deref(), Some("b"));
/// assert_eq!(prefix_upper_bound("x\u{D7FF}").as_deref(), Some("x\u{10000}"));
/// assert_eq!(prefix_upper_bound("x\u{10FFFF}").as_deref(), Some("x\u{E000}"));
/// assert_eq!(prefix_upper_bound("😀").as_deref(), Some("😁"));
/// assert_eq!(prefix_upper_bound(""), None);
/// assert_eq!(prefix_upper_bound("\u{FFFF}\u{FFFF}"), None);
/// ```
pub fn prefix_upper_bound(prefix: &str) -> Option<String> {
    let kept = prefix.trim_end_matches('\u{FFFF}');
    let last = kept.chars().next_back()?;
    let next = match last {
        '\u{D7FF}' => '\u{10000}',
        '\u{10FFFF}' => '\u{E000}',
        // Not U+FFFF (trimmed), and neither U+D7FF nor U+10FFFF: the next code point is a character.
        c => char::from_u32(c as u32 + 1).expect("the next code point is a scalar value"),
    };
    let mut bound = String::with_capacity(kept.len() + 1);
    bound.push_str(&kept[..kept.len() - last.len_utf8()]);
    bound.push(next);
    Some(bound)
}

/// `name ge 'prefix' and name lt 'bound'`, or only the `ge` when there is no bound.
pub(super) fn prefix_filter(name: &Name, prefix: &str) -> Filter {
    let string = |s: &str| EdmString::new(s).map(EdmValue::String);
    let lower = Filter::compare(name.clone(), ComparisonOperator::Ge, string(prefix));
    match prefix_upper_bound(prefix) {
        Some(bound) => lower.and(Filter::compare(name.clone(), ComparisonOperator::Lt, string(&bound))),
        None => lower,
    }
}

/// `name ge 'start' and name lt 'end'`.
fn range_filter(name: &Name, range: Range<&str>) -> Filter {
    let string = |s: &str| EdmString::new(s).map(EdmValue::String);
    Filter::compare(name.clone(), ComparisonOperator::Ge, string(range.start)).and(Filter::compare(
        name.clone(),
        ComparisonOperator::Lt,
        string(range.end),
    ))
}

fn as_str_range<K: AsRef<str>>(range: &Range<K>) -> Range<&str> {
    range.start.as_ref()..range.end.as_ref()
}

/// `name` within the keys of the instants in `[from, to)`: [`key::chronological_range`], or
/// [`key::reverse_chronological_range`] when `reverse`. An instant outside the service's range is kept as the
/// value of both comparisons, for [`Filter::render`] to report.
fn time_range_filter(name: &Name, from: impl IntoDateTime, to: impl IntoDateTime, reverse: bool) -> Filter {
    match (from.into_date_time(), to.into_date_time()) {
        (Ok(from), Ok(to)) => {
            let range: Range<RowKey> =
                if reverse { key::reverse_chronological_range(from, to) } else { key::chronological_range(from, to) };
            range_filter(name, as_str_range(&range))
        }
        (Err(error), _) | (_, Err(error)) => {
            let bound = |op, error| Filter::compare(name.clone(), op, Err(error));
            bound(ComparisonOperator::Ge, error.clone()).and(bound(ComparisonOperator::Lt, error))
        }
    }
}

impl FilterProperty {
    /// Values in `[start, end)`: `property ge 'start' and property lt 'end'`, for the `Range` of key bounds
    /// that the helpers of [`crate::key`] return.
    ///
    /// ```
    /// use table_model::filter::Filter;
    /// assert_eq!(Filter::property("Code").in_range("a".."c").render()?, "Code ge 'a' and Code lt 'c'");
    /// # Ok::<(), table_model::FilterError>(())
    /// ```
    pub fn in_range<K: AsRef<str>>(&self, range: Range<K>) -> Filter {
        range_filter(&self.name, as_str_range(&range))
    }

    /// Keys written by [`key::chronological`] or [`key::chronological_unique`] whose instant is in
    /// `[from, to)` (the bounds of [`key::chronological_range`]). The instants are any [`IntoDateTime`]; one
    /// outside the service's range is reported by [`Filter::render`].
    pub fn chronological_range(&self, from: impl IntoDateTime, to: impl IntoDateTime) -> Filter {
        time_range_filter(&self.name, from, to, false)
    }

    /// Keys written by [`key::reverse_chronological`] or [`key::reverse_chronological_unique`] whose instant is
    /// in `[from, to)`; the bounds flip, as [`key::reverse_chronological_range`] explains. The instants are any
    /// [`IntoDateTime`]; one outside the service's range is reported by [`Filter::render`].
    pub fn reverse_chronological_range(&self, from: impl IntoDateTime, to: impl IntoDateTime) -> Filter {
        time_range_filter(&self.name, from, to, true)
    }
}

impl<T: StringLiteral> Property<T> {
    /// Values in `[start, end)`, as [`FilterProperty::in_range`].
    pub fn in_range<K: AsRef<str>>(&self, range: Range<K>) -> Filter {
        range_filter(&Name(Ok(Cow::Borrowed(self.name()))), as_str_range(&range))
    }

    /// Keys written by [`key::chronological`] or [`key::chronological_unique`] whose instant is in
    /// `[from, to)`. The instants are any [`IntoDateTime`]: a [`DateTime`](crate::DateTime), a `chrono::DateTime` (the type of a
    /// derived struct's field, often) or a `SystemTime`; one outside the service's range is reported by
    /// [`Filter::render`].
    ///
    /// ```
    /// use table_model::{filter, DateTime};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let (from, to): (DateTime, DateTime) = ("2024-01-01T00:00:00Z".parse()?, "2024-02-01T00:00:00Z".parse()?);
    /// assert_eq!(
    ///     filter::ROW_KEY.chronological_range(from, to).render()?,
    ///     "RowKey ge '0638396640000000000' and RowKey lt '0638423424000000000'"
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub fn chronological_range(&self, from: impl IntoDateTime, to: impl IntoDateTime) -> Filter {
        time_range_filter(&Name(Ok(Cow::Borrowed(self.name()))), from, to, false)
    }

    /// Keys written by [`key::reverse_chronological`] or [`key::reverse_chronological_unique`] whose instant is
    /// in `[from, to)`: newest first, so the bounds flip. The instants are any [`IntoDateTime`], as for
    /// [`chronological_range`](Property::chronological_range).
    ///
    /// ```
    /// use table_model::{filter, DateTime};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let (from, to): (DateTime, DateTime) = ("2024-01-01T00:00:00Z".parse()?, "2024-02-01T00:00:00Z".parse()?);
    /// // 3155378975999999999 - ticks(to) + 1, then 3155378975999999999 - ticks(from) + 1.
    /// assert_eq!(
    ///     filter::ROW_KEY.reverse_chronological_range(from, to).render()?,
    ///     "RowKey ge '2516955552000000000' and RowKey lt '2516982336000000000'"
    /// );
    ///
    /// // The same range from chrono instants, as a derived struct's `chrono::DateTime<Utc>` fields hold them.
    /// let (from, to) = (from.to_chrono(), to.to_chrono());
    /// assert_eq!(
    ///     filter::ROW_KEY.reverse_chronological_range(from, to).render()?,
    ///     "RowKey ge '2516955552000000000' and RowKey lt '2516982336000000000'"
    /// );
    ///
    /// // An instant the service cannot store is an error when the filter is rendered (or the query sent).
    /// let before_1601 = chrono::DateTime::parse_from_rfc3339("1600-01-01T00:00:00Z")?;
    /// let err = filter::ROW_KEY.reverse_chronological_range(before_1601, to).render().unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid filter: property `RowKey`: invalid Edm.DateTime: must be from 1601-01-01T00:00:00Z to \
    ///      9999-12-31T23:59:59.9999999Z, found 1600-01-01T00:00:00+00:00"
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub fn reverse_chronological_range(&self, from: impl IntoDateTime, to: impl IntoDateTime) -> Filter {
        time_range_filter(&Name(Ok(Cow::Borrowed(self.name()))), from, to, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    fn utf16_cmp(a: &str, b: &str) -> Ordering {
        a.encode_utf16().cmp(b.encode_utf16())
    }

    /// Characters near every edge of UTF-16 order, plus ordinary ones.
    fn edge_char() -> impl Strategy<Value = char> {
        prop_oneof![
            Just('\u{0}'),
            Just('a'),
            Just('z'),
            Just('\''),
            Just('\u{D7FE}'),
            Just('\u{D7FF}'),
            Just('\u{E000}'),
            Just('\u{FFFE}'),
            Just('\u{FFFF}'),
            Just('\u{10000}'),
            Just('\u{1F600}'),
            Just('\u{103FF}'),
            Just('\u{10400}'),
            Just('\u{10FFFE}'),
            Just('\u{10FFFF}'),
            any::<char>(),
        ]
    }

    fn edge_string(max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(edge_char(), 0..max).prop_map(|v| v.into_iter().collect())
    }

    #[test]
    fn edges() {
        let b = |s: &str| prefix_upper_bound(s);
        assert_eq!(b("a").as_deref(), Some("b"));
        assert_eq!(b("\u{FFFE}").as_deref(), Some("\u{FFFF}"));
        assert_eq!(b("\u{D7FE}").as_deref(), Some("\u{D7FF}"));
        assert_eq!(b("\u{103FF}").as_deref(), Some("\u{10400}")); // low surrogate DFFF → next high surrogate
        assert_eq!(b("ab\u{FFFF}\u{FFFF}").as_deref(), Some("ac"));
        assert_eq!(b("\u{FFFF}"), None);
        assert_eq!(b("\u{10FFFF}\u{FFFF}").as_deref(), Some("\u{E000}"));
        assert_eq!(b("'").as_deref(), Some("("));
        assert_eq!(b("&").as_deref(), Some("'"));
    }

    #[test]
    fn filter_forms() {
        let name = Name(Ok("RowKey".into()));
        assert_eq!(prefix_filter(&name, "").render().unwrap(), "RowKey ge ''");
        assert_eq!(prefix_filter(&name, "&").render().unwrap(), "RowKey ge '&' and RowKey lt ''''");
        assert_eq!(prefix_filter(&name, "a").comparisons(), 2);
    }

    proptest! {
        /// `prefix <= s < bound` holds exactly for the strings that start with the prefix.
        #[test]
        fn bound_is_exact(prefix in edge_string(4), tail in edge_string(4), other in edge_string(6)) {
            let bound = prefix_upper_bound(&prefix);
            for s in [format!("{prefix}{tail}"), other.clone(), format!("{other}{prefix}")] {
                let in_range = utf16_cmp(&prefix, &s) != Ordering::Greater
                    && bound.as_deref().is_none_or(|b| utf16_cmp(&s, b) == Ordering::Less);
                prop_assert_eq!(in_range, s.starts_with(&prefix), "prefix {:?} s {:?} bound {:?}", prefix, s, bound);
            }
            if let Some(b) = &bound {
                // Least: nothing lies between the extensions and the bound. The greatest string below the
                // bound of at most the bound's length plus one character starts with the prefix: checked
                // by trying the bound with its last character lowered to each edge character.
                let stem = &b[..b.len() - b.chars().next_back().unwrap().len_utf8()];
                for c in ['\u{0}', '\u{D7FF}', '\u{E000}', '\u{FFFF}', '\u{10000}', '\u{10FFFF}'] {
                    let s = format!("{stem}{c}\u{10FFFF}\u{FFFF}");
                    if utf16_cmp(&s, b) == Ordering::Less && utf16_cmp(&prefix, &s) != Ordering::Greater {
                        prop_assert!(s.starts_with(&prefix), "{:?} is below {:?} but lacks {:?}", s, b, prefix);
                    }
                }
            }
        }
    }
}
