//! Key ranges: half-open intervals of the key space in the service's order (`docs/rules.md` §2.3), which tile
//! a table into parts to scan side by side, and the shard rule that shares them among workers
//! (`docs/rules.md` §10.1).

use super::{Filter, PARTITION_KEY, ROW_KEY};
use crate::key::{service_order, PartitionKey, RowKey};
use std::cmp::Ordering;
use std::fmt;

/// A position in the key space: the place of the key `(partition_key, row_key)` in the service's order
/// (PartitionKey, then RowKey, each by UTF-16 code unit; `docs/rules.md` §2.3), whether or not an entity has
/// that key. A position with the empty RowKey is the start of its partition, since `""` is the least RowKey.
///
/// ```
/// use table_model::filter::KeyPosition;
/// use table_model::{PartitionKey, RowKey};
/// # fn main() -> Result<(), table_model::KeyError> {
/// let start_of_eu = KeyPosition::partition(PartitionKey::new("eu")?);
/// assert_eq!(start_of_eu.row_key, "");
/// let inside_eu = KeyPosition::new(PartitionKey::new("eu")?, RowKey::new("m")?);
/// assert!(start_of_eu < inside_eu);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KeyPosition {
    /// The PartitionKey of the position.
    pub partition_key: PartitionKey,
    /// The RowKey of the position; `""` for the start of the partition.
    pub row_key: RowKey,
}

impl KeyPosition {
    /// The position of the key `(partition_key, row_key)`.
    ///
    /// ```
    /// use table_model::filter::KeyPosition;
    /// use table_model::{PartitionKey, RowKey};
    /// let position = KeyPosition::new(PartitionKey::from_static("eu"), RowKey::from_static("42"));
    /// assert_eq!(position.to_string(), "'eu'/'42'");
    /// ```
    pub fn new(partition_key: PartitionKey, row_key: RowKey) -> Self {
        KeyPosition { partition_key, row_key }
    }

    /// The start of a partition: its key with the empty RowKey, below every entity of the partition.
    ///
    /// ```
    /// use table_model::filter::KeyPosition;
    /// use table_model::PartitionKey;
    /// assert_eq!(KeyPosition::partition(PartitionKey::from_static("eu")).to_string(), "'eu'/''");
    /// ```
    pub fn partition(partition_key: PartitionKey) -> Self {
        KeyPosition { partition_key, row_key: RowKey::default() }
    }

    /// Where the key `(pk, rk)` stands against this position, in the service's order.
    fn cmp_key(&self, pk: &str, rk: &str) -> Ordering {
        service_order(pk, self.partition_key.as_str()).then_with(|| service_order(rk, self.row_key.as_str()))
    }
}

impl fmt::Display for KeyPosition {
    /// `'pk'/'rk'`, each key escaped as Rust's `escape_debug` does (a key never holds `/`, `docs/rules.md`
    /// §2.1).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}'/'{}'", self.partition_key.as_str().escape_debug(), self.row_key.as_str().escape_debug())
    }
}

/// A half-open interval of the key space, `[start, end)` in the service's order (`docs/rules.md` §2.3): every
/// key at or after `start` and before `end`; a missing bound leaves its side open. It is never empty: `start`
/// is below `end`.
///
/// Ranges are the unit of a parallel scan: [`KeyRange::split`] cuts a range at boundaries into ranges that
/// tile it exactly (every key in exactly one), [`KeyRange::filter_with`] gives each one's `$filter`, and
/// [`shard`] shares a plan among workers. With the `serde` feature a range serializes (as
/// `{"start":{"partition_key":..,"row_key":..},"end":null}`), for checkpoints and plans kept in a file;
/// reading one back checks its keys and that it is not empty.
///
/// ```
/// use table_model::filter::{KeyPosition, KeyRange};
/// use table_model::PartitionKey;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let at = |pk: &str| KeyPosition::partition(PartitionKey::new(pk).unwrap());
/// let parts = KeyRange::all().split([at("m"), at("f")]);
/// assert_eq!(parts.iter().map(|r| r.to_string()).collect::<Vec<_>>(), [
///     "[.., 'f'/'')",
///     "['f'/'', 'm'/'')",
///     "['m'/'', ..)",
/// ]);
/// assert!(parts[1].contains("fig", "1") && !parts[1].contains("m", ""));
/// assert_eq!(parts[1].filter().unwrap().render()?, "PartitionKey ge 'f' and PartitionKey lt 'm'");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "RawKeyRange"))]
pub struct KeyRange {
    start: Option<KeyPosition>,
    end: Option<KeyPosition>,
}

/// A range as it is read, before it is checked.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
struct RawKeyRange {
    start: Option<KeyPosition>,
    end: Option<KeyPosition>,
}

#[cfg(feature = "serde")]
impl TryFrom<RawKeyRange> for KeyRange {
    type Error = KeyRangeError;

    fn try_from(raw: RawKeyRange) -> Result<Self, KeyRangeError> {
        KeyRange::new(raw.start, raw.end)
    }
}

impl KeyRange {
    /// The most comparisons [`KeyRange::filter`] holds: 6, for a range with a RowKey in both bounds. A filter
    /// joined to a range's ([`KeyRange::filter_with`]) fits the service's 15 (`docs/rules.md` §7.1) when it
    /// holds at most `FILTER_MAX_COMPARISONS - KeyRange::MAX_COMPARISONS`.
    ///
    /// ```
    /// use table_model::filter::KeyRange;
    /// use table_model::limits::FILTER_MAX_COMPARISONS;
    /// assert_eq!(FILTER_MAX_COMPARISONS - KeyRange::MAX_COMPARISONS, 9);
    /// ```
    pub const MAX_COMPARISONS: usize = 6;

    /// The whole key space: no bound on either side.
    ///
    /// ```
    /// use table_model::filter::KeyRange;
    /// assert!(KeyRange::all().contains("", ""));
    /// assert_eq!(KeyRange::all().filter(), None);
    /// ```
    pub const fn all() -> Self {
        KeyRange { start: None, end: None }
    }

    /// The keys at or after `start` and before `end`; `None` leaves a side open.
    ///
    /// # Errors
    /// [`KeyRangeErrorKind::Empty`] when `start` is not below `end`: such a range holds no key.
    ///
    /// ```
    /// use table_model::filter::{KeyPosition, KeyRange};
    /// use table_model::PartitionKey;
    /// let at = |pk: &'static str| Some(KeyPosition::partition(PartitionKey::from_static(pk)));
    /// assert!(KeyRange::new(at("a"), at("b")).is_ok());
    /// assert_eq!(
    ///     KeyRange::new(at("b"), at("a")).unwrap_err().to_string(),
    ///     "invalid key range ['b'/'', 'a'/''): the start must be below the end"
    /// );
    /// ```
    pub fn new(start: Option<KeyPosition>, end: Option<KeyPosition>) -> Result<Self, KeyRangeError> {
        if let (Some(s), Some(e)) = (&start, &end)
            && s >= e
        {
            return Err(KeyRangeError(KeyRangeErrorKind::Empty { start: s.clone(), end: e.clone() }));
        }
        Ok(KeyRange { start, end })
    }

    /// The inclusive lower bound; `None` when the range starts at the first key.
    pub fn start(&self) -> Option<&KeyPosition> {
        self.start.as_ref()
    }

    /// The exclusive upper bound; `None` when the range runs to the last key.
    pub fn end(&self) -> Option<&KeyPosition> {
        self.end.as_ref()
    }

    /// Whether the key `(pk, rk)` is in the range, in the service's order.
    ///
    /// ```
    /// use table_model::filter::{KeyPosition, KeyRange};
    /// use table_model::{PartitionKey, RowKey};
    /// let hot = PartitionKey::from_static("hot");
    /// let range = KeyRange::new(
    ///     Some(KeyPosition::new(hot.clone(), RowKey::from_static("b"))),
    ///     Some(KeyPosition::new(hot, RowKey::from_static("d"))),
    /// ).unwrap();
    /// assert!(range.contains("hot", "b") && range.contains("hot", "cz"));
    /// assert!(!range.contains("hot", "a") && !range.contains("hot", "d") && !range.contains("hou", "c"));
    /// // By UTF-16 code unit: U+FF61 sorts above the surrogate pair of U+1F600.
    /// let open = KeyRange::new(Some(KeyPosition::partition(PartitionKey::from_static("\u{1F600}"))), None).unwrap();
    /// assert!(open.contains("\u{FF61}", ""));
    /// ```
    pub fn contains(&self, pk: &str, rk: &str) -> bool {
        self.start.as_ref().is_none_or(|s| s.cmp_key(pk, rk) != Ordering::Less)
            && self.end.as_ref().is_none_or(|e| e.cmp_key(pk, rk) == Ordering::Less)
    }

    /// The range as a `$filter`; `None` for [`KeyRange::all`]. It holds at most
    /// [`MAX_COMPARISONS`](KeyRange::MAX_COMPARISONS): a bound with
    /// the empty RowKey is one (`PartitionKey ge 'a'`), another is three (`PartitionKey gt 'a' or
    /// (PartitionKey eq 'a' and RowKey ge 'k')`), and a range within one partition is
    /// `PartitionKey eq 'p' and RowKey ge 'b' and RowKey lt 'd'`.
    ///
    /// ```
    /// use table_model::filter::{KeyPosition, KeyRange};
    /// use table_model::{PartitionKey, RowKey};
    /// let bound = |pk: &'static str, rk: &'static str| {
    ///     Some(KeyPosition::new(PartitionKey::from_static(pk), RowKey::from_static(rk)))
    /// };
    /// let range = KeyRange::new(bound("a", "k"), bound("c", "")).unwrap();
    /// assert_eq!(
    ///     range.filter().unwrap().render()?,
    ///     "(PartitionKey gt 'a' or (PartitionKey eq 'a' and RowKey ge 'k')) and PartitionKey lt 'c'"
    /// );
    /// let within = KeyRange::new(bound("p", "b"), bound("p", "d")).unwrap();
    /// assert_eq!(
    ///     within.filter().unwrap().render()?,
    ///     "PartitionKey eq 'p' and RowKey ge 'b' and RowKey lt 'd'"
    /// );
    /// # Ok::<(), table_model::FilterError>(())
    /// ```
    pub fn filter(&self) -> Option<Filter> {
        if let (Some(s), Some(e)) = (&self.start, &self.end)
            && s.partition_key == e.partition_key
        {
            // One partition: the end's RowKey is above the start's, so it is not empty.
            let pk = PARTITION_KEY.eq(s.partition_key.as_str());
            let lower = (!s.row_key.is_empty()).then(|| ROW_KEY.ge(s.row_key.as_str()));
            return Filter::all([Some(pk), lower, Some(ROW_KEY.lt(e.row_key.as_str()))].into_iter().flatten());
        }
        let lower = self.start.as_ref().map(|s| {
            let pk = s.partition_key.as_str();
            if s.row_key.is_empty() {
                PARTITION_KEY.ge(pk)
            } else {
                PARTITION_KEY.gt(pk) | (PARTITION_KEY.eq(pk) & ROW_KEY.ge(s.row_key.as_str()))
            }
        });
        let upper = self.end.as_ref().map(|e| {
            let pk = e.partition_key.as_str();
            if e.row_key.is_empty() {
                PARTITION_KEY.lt(pk)
            } else {
                PARTITION_KEY.lt(pk) | (PARTITION_KEY.eq(pk) & ROW_KEY.lt(e.row_key.as_str()))
            }
        });
        Filter::all(lower.into_iter().chain(upper))
    }

    /// A user's filter restricted to the range: `(range) and (filter)`, either alone when the other is
    /// missing. The range takes at most [`KeyRange::MAX_COMPARISONS`] of the 15 comparisons a filter may hold
    /// (`docs/rules.md` §7.1).
    ///
    /// ```
    /// use table_model::filter::{Filter, KeyPosition, KeyRange};
    /// use table_model::PartitionKey;
    /// let range = KeyRange::new(Some(KeyPosition::partition(PartitionKey::from_static("m"))), None).unwrap();
    /// let f = range.filter_with(Some(Filter::property("Age").ge(18))).unwrap();
    /// assert_eq!(f.render()?, "PartitionKey ge 'm' and Age ge 18");
    /// assert_eq!(KeyRange::all().filter_with(None), None);
    /// # Ok::<(), table_model::FilterError>(())
    /// ```
    pub fn filter_with(&self, filter: Option<Filter>) -> Option<Filter> {
        Filter::all(self.filter().into_iter().chain(filter))
    }

    /// Cuts the range at `boundaries` into ranges that tile it exactly, in key order: each key of the range
    /// is in exactly one of them, and no key outside it is in any. Boundaries may come in any order;
    /// duplicates and those that are not strictly inside the range are dropped, so no part is empty.
    ///
    /// ```
    /// use table_model::filter::{KeyPosition, KeyRange};
    /// use table_model::{PartitionKey, RowKey};
    /// let hot = |rk: &'static str| KeyPosition::new(PartitionKey::from_static("hot"), RowKey::from_static(rk));
    /// let partition = KeyRange::new(Some(hot("")), Some(KeyPosition::partition(PartitionKey::from_static("hou"))))
    ///     .unwrap();
    /// let parts = partition.split([hot("m"), hot("c"), hot("m"), hot("")]);
    /// assert_eq!(parts.iter().map(|r| r.to_string()).collect::<Vec<_>>(), [
    ///     "['hot'/'', 'hot'/'c')",
    ///     "['hot'/'c', 'hot'/'m')",
    ///     "['hot'/'m', 'hou'/'')",
    /// ]);
    /// ```
    pub fn split(&self, boundaries: impl IntoIterator<Item = KeyPosition>) -> Vec<KeyRange> {
        let mut cuts: Vec<KeyPosition> = boundaries
            .into_iter()
            .filter(|b| self.start.as_ref().is_none_or(|s| s < b) && self.end.as_ref().is_none_or(|e| b < e))
            .collect();
        cuts.sort();
        cuts.dedup();
        let starts: Vec<Option<KeyPosition>> =
            std::iter::once(self.start.clone()).chain(cuts.iter().cloned().map(Some)).collect();
        let ends = cuts.into_iter().map(Some).chain(std::iter::once(self.end.clone()));
        starts.into_iter().zip(ends).map(|(start, end)| KeyRange { start, end }).collect()
    }
}

impl fmt::Display for KeyRange {
    /// `[start, end)` with each bound as [`KeyPosition`]'s `Display`, and `..` for an open side:
    /// `['a'/'', ..)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        match &self.start {
            Some(s) => write!(f, "{s}")?,
            None => f.write_str("..")?,
        }
        f.write_str(", ")?;
        match &self.end {
            Some(e) => write!(f, "{e}")?,
            None => f.write_str("..")?,
        }
        f.write_str(")")
    }
}

/// Worker `k`'s share (counting from 0) of a plan shared by `n` workers: the ranges whose index `i` in the
/// plan has `i % n == k`, in plan order. Round robin spreads neighbouring ranges, such as the parts of one
/// hot partition, over the workers.
///
/// The share is a pure function of the plan, so workers agree only if they read the same plan: a plan's
/// boundaries come from the data, and two workers planning at different times may cut differently and skip
/// or repeat keys. Make the plan once and give every worker the same copy (it serializes); see
/// `docs/rules.md` §10.1. The plan must be ranges that follow each other without gap or overlap (each range
/// starts where the one before ends), as [`KeyRange::split`] returns them; the shares of the `n` workers then
/// tile what the plan covers.
///
/// # Errors
/// [`KeyRangeErrorKind::Shard`] when `n` is 0 or `k` is not below `n`; [`KeyRangeErrorKind::NotContiguous`]
/// when a range does not start where the one before it ends.
///
/// ```
/// use table_model::filter::{shard, KeyPosition, KeyRange};
/// use table_model::PartitionKey;
/// # fn main() -> Result<(), table_model::filter::KeyRangeError> {
/// let at = |pk: &'static str| KeyPosition::partition(PartitionKey::from_static(pk));
/// let plan = KeyRange::all().split([at("b"), at("c"), at("d")]);
/// assert_eq!(shard(&plan, 0, 2)?, [plan[0].clone(), plan[2].clone()]);
/// assert_eq!(shard(&plan, 1, 2)?, [plan[1].clone(), plan[3].clone()]);
/// assert_eq!(shard(&plan, 2, 2).unwrap_err().to_string(), "invalid shard 2 of 2: the shard must be from 0 to 1");
/// # Ok(())
/// # }
/// ```
pub fn shard(plan: &[KeyRange], k: usize, n: usize) -> Result<Vec<KeyRange>, KeyRangeError> {
    if k >= n {
        return Err(KeyRangeError(KeyRangeErrorKind::Shard { k, n }));
    }
    if let Some(index) = plan.windows(2).position(|w| w[0].end.is_none() || w[0].end != w[1].start) {
        return Err(KeyRangeError(KeyRangeErrorKind::NotContiguous { index: index + 1 }));
    }
    Ok(plan.iter().skip(k).step_by(n).cloned().collect())
}

/// Why a key range or a share of ranges was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyRangeErrorKind {
    /// The start is not below the end: the range would hold no key.
    Empty {
        /// The start given.
        start: KeyPosition,
        /// The end given.
        end: KeyPosition,
    },
    /// A share `k` of `n` workers with `k` not below `n` (or `n` = 0).
    Shard {
        /// The worker asked for, from 0.
        k: usize,
        /// The number of workers.
        n: usize,
    },
    /// A plan whose range at `index` does not start where the range before it ends.
    NotContiguous {
        /// The index of the range in the plan.
        index: usize,
    },
}

/// The error of [`KeyRange::new`] (and of reading a range back) and of [`shard`].
///
/// ```
/// use table_model::filter::{shard, KeyRange, KeyRangeErrorKind};
/// let err = shard(&[KeyRange::all()], 0, 0).unwrap_err();
/// assert_eq!(err.kind(), &KeyRangeErrorKind::Shard { k: 0, n: 0 });
/// assert_eq!(err.to_string(), "invalid shard 0 of 0: there must be at least one worker");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRangeError(KeyRangeErrorKind);

impl KeyRangeError {
    /// What was wrong.
    pub fn kind(&self) -> &KeyRangeErrorKind {
        &self.0
    }
}

impl fmt::Display for KeyRangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            KeyRangeErrorKind::Empty { start, end } => {
                write!(f, "invalid key range [{start}, {end}): the start must be below the end")
            }
            KeyRangeErrorKind::Shard { k, n: 0 } => {
                write!(f, "invalid shard {k} of 0: there must be at least one worker")
            }
            KeyRangeErrorKind::Shard { k, n } => {
                write!(f, "invalid shard {k} of {n}: the shard must be from 0 to {}", n - 1)
            }
            KeyRangeErrorKind::NotContiguous { index } => write!(
                f,
                "invalid plan: range {index} does not start where range {} ends; a plan's ranges must follow \
                 each other without gap or overlap",
                index - 1
            ),
        }
    }
}

impl std::error::Error for KeyRangeError {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bound(pk: &str, rk: &str) -> KeyPosition {
        KeyPosition::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap())
    }

    /// Characters near the edges of UTF-16 order that keys may hold (`docs/rules.md` §2.1), plus any other.
    fn key_char() -> impl Strategy<Value = char> {
        prop_oneof![
            Just('a'),
            Just('b'),
            Just(' '),
            Just('\''),
            Just('\u{D7FF}'),
            Just('\u{E000}'),
            Just('\u{FF61}'),
            Just('\u{FFFF}'),
            Just('\u{10000}'),
            Just('\u{1F600}'),
            Just('\u{10FFFF}'),
            any::<char>(),
        ]
        .prop_filter("a key character", |c| RowKey::new(c.to_string()).is_ok())
    }

    fn key() -> impl Strategy<Value = String> {
        prop::collection::vec(key_char(), 0..3).prop_map(|v| v.into_iter().collect())
    }

    fn key_pair() -> impl Strategy<Value = (String, String)> {
        (key(), key())
    }

    fn utf16_cmp(a: &(String, String), b: &(String, String)) -> Ordering {
        a.0.encode_utf16().cmp(b.0.encode_utf16()).then_with(|| a.1.encode_utf16().cmp(b.1.encode_utf16()))
    }

    proptest! {
        /// Splitting the whole key space, or one range of it, tiles it: every key is in exactly one part, the
        /// parts are in key order, and a key outside the range is in none.
        #[test]
        fn split_tiles_the_range(
            cuts in prop::collection::vec(key_pair(), 0..8),
            outer in prop::option::of((key_pair(), key_pair())),
            keys in prop::collection::vec(key_pair(), 1..24),
        ) {
            let to_bound = |(pk, rk): &(String, String)| bound(pk, rk);
            let range = match &outer {
                None => KeyRange::all(),
                Some((a, b)) => match utf16_cmp(a, b) {
                    Ordering::Less => KeyRange::new(Some(to_bound(a)), Some(to_bound(b))).unwrap(),
                    Ordering::Greater => KeyRange::new(Some(to_bound(b)), Some(to_bound(a))).unwrap(),
                    Ordering::Equal => KeyRange::new(Some(to_bound(a)), None).unwrap(),
                },
            };
            let parts = range.split(cuts.iter().map(to_bound));
            prop_assert!(!parts.is_empty());
            prop_assert_eq!(parts.first().unwrap().start(), range.start());
            prop_assert_eq!(parts.last().unwrap().end(), range.end());
            for pair in parts.windows(2) {
                prop_assert_eq!(pair[0].end(), pair[1].start());
                prop_assert!(pair[0].start().is_none_or(|s| Some(s) < pair[0].end()), "empty part {}", pair[0]);
            }
            // The part a key falls in never goes down as keys go up, in UTF-16 order.
            let mut keys = keys;
            keys.extend(cuts.iter().cloned());
            keys.sort_by(utf16_cmp);
            let mut last = 0;
            for (pk, rk) in &keys {
                let holders: Vec<usize> = (0..parts.len()).filter(|&i| parts[i].contains(pk, rk)).collect();
                if range.contains(pk, rk) {
                    prop_assert_eq!(holders.len(), 1, "{:?}/{:?} in parts {:?} of {:?}", pk, rk, holders, parts);
                    prop_assert!(holders[0] >= last);
                    last = holders[0];
                } else {
                    prop_assert!(holders.is_empty());
                }
            }
            // The shares of any number of workers tile the plan too.
            for n in 1..4 {
                let mut all: Vec<KeyRange> = (0..n).flat_map(|k| shard(&parts, k, n).unwrap()).collect();
                all.sort_by(|a, b| a.start().cmp(&b.start()));
                prop_assert_eq!(&all, &parts);
            }
        }

        /// `contains` is the service's order on bounds: a key is in `[b, ..)` exactly when it is not below `b`.
        #[test]
        fn contains_follows_utf16_order(a in key_pair(), b in key_pair()) {
            let range = KeyRange::new(Some(bound(&b.0, &b.1)), None).unwrap();
            prop_assert_eq!(range.contains(&a.0, &a.1), utf16_cmp(&a, &b) != Ordering::Less);
        }
    }

    #[test]
    fn filter_forms() {
        let render = |r: &KeyRange| r.filter().map(|f| f.render().unwrap());
        let range = |s: Option<KeyPosition>, e: Option<KeyPosition>| KeyRange::new(s, e).unwrap();
        assert_eq!(render(&range(Some(bound("a", "")), None)).unwrap(), "PartitionKey ge 'a'");
        assert_eq!(render(&range(None, Some(bound("a", "")))).unwrap(), "PartitionKey lt 'a'");
        assert_eq!(
            render(&range(None, Some(bound("a", "k")))).unwrap(),
            "PartitionKey lt 'a' or (PartitionKey eq 'a' and RowKey lt 'k')"
        );
        assert_eq!(
            render(&range(Some(bound("p", "")), Some(bound("p", "d")))).unwrap(),
            "PartitionKey eq 'p' and RowKey lt 'd'"
        );
        let widest = range(Some(bound("a", "k")), Some(bound("o'B", "k'")));
        assert_eq!(
            render(&widest).unwrap(),
            "(PartitionKey gt 'a' or (PartitionKey eq 'a' and RowKey ge 'k')) and (PartitionKey lt 'o''B' or \
             (PartitionKey eq 'o''B' and RowKey lt 'k'''))"
        );
        assert_eq!(widest.filter().unwrap().comparisons(), KeyRange::MAX_COMPARISONS);
        // With a user's filter of the rest of the 15, the widest range still fits.
        let rest = crate::limits::FILTER_MAX_COMPARISONS - KeyRange::MAX_COMPARISONS;
        let user = Filter::all((0..rest as i32).map(|i| Filter::property("N").ne(i))).unwrap();
        assert!(widest.filter_with(Some(user)).unwrap().render().is_ok());
    }

    #[test]
    fn shard_checks_its_input() {
        let plan = KeyRange::all().split([bound("b", ""), bound("d", "")]);
        assert_eq!(shard(&plan, 0, 5).unwrap(), [plan[0].clone()]);
        assert!(shard(&plan, 4, 5).unwrap().is_empty());
        assert!(shard(&[], 0, 1).unwrap().is_empty());
        let gap = [plan[0].clone(), plan[2].clone()];
        assert_eq!(
            shard(&gap, 0, 1).unwrap_err().to_string(),
            "invalid plan: range 1 does not start where range 0 ends; a plan's ranges must follow each other \
             without gap or overlap"
        );
        let overlap = [plan[1].clone(), plan[0].clone()];
        assert_eq!(shard(&overlap, 0, 2).unwrap_err().kind(), &KeyRangeErrorKind::NotContiguous { index: 1 });
        // An open end is last: nothing can follow it.
        let open = [KeyRange::all(), KeyRange::all()];
        assert_eq!(shard(&open, 0, 1).unwrap_err().kind(), &KeyRangeErrorKind::NotContiguous { index: 1 });
    }

    #[test]
    fn display_escapes_keys() {
        let range = KeyRange::new(Some(bound("a'b", "\u{FFFF}")), None).unwrap();
        assert_eq!(range.to_string(), "['a\\'b'/'\\u{ffff}', ..)");
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_round_trip_and_checks() {
        let range = KeyRange::new(Some(bound("a", "😀")), Some(bound("b", ""))).unwrap();
        let json = serde_json::to_string(&range).unwrap();
        assert_eq!(json, r#"{"start":{"partition_key":"a","row_key":"😀"},"end":{"partition_key":"b","row_key":""}}"#);
        assert_eq!(serde_json::from_str::<KeyRange>(&json).unwrap(), range);
        let all = serde_json::to_string(&KeyRange::all()).unwrap();
        assert_eq!(all, r#"{"start":null,"end":null}"#);
        assert_eq!(serde_json::from_str::<KeyRange>(&all).unwrap(), KeyRange::all());
        let backwards = r#"{"start":{"partition_key":"b","row_key":""},"end":{"partition_key":"a","row_key":""}}"#;
        assert_eq!(
            serde_json::from_str::<KeyRange>(backwards).unwrap_err().to_string(),
            "invalid key range ['b'/'', 'a'/''): the start must be below the end"
        );
        let bad_key = r#"{"start":{"partition_key":"a/b","row_key":""},"end":null}"#;
        assert!(serde_json::from_str::<KeyRange>(bad_key).is_err());
    }
}
