//! Points of the key space for a plan's probes: strings spread evenly between two keys, and the numeric
//! reading of a key that spreads them (`docs/rules.md` §10.1).
//!
//! A string is read as a number from the UTF-16 code units after a common prefix, each a digit: `0` for "no
//! more units", then `1 + i` for the `i`-th of the units points are made of ([`Digits`]). Points are built
//! back from such numbers. Keys that all have the same length (counters padded with zeros, hex, GUIDs) have
//! no "no more units" digit: the `i`-th unit is `i`, and a missing unit reads as the least; otherwise
//! `x099` and `x100` would read 13 steps apart where `x098` and `x099` read one.
//! Both directions keep the service's order (by UTF-16 code unit, `docs/rules.md` §2.3), though not strictly:
//! a longer string can read as a shorter one, and a unit a point may not hold reads as the next one it may.

use crate::key::{service_order, PartitionKey};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::OnceLock;

/// How many code units after the common prefix are read: 7 digits of a base of at most 63,403 stay below
/// 2^112, so a reading times a count of points fits in a `u128`.
const DIGITS: usize = 7;

/// The code units a point is made of, in order (`docs/rules.md` §10.1): the digits of the readings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Digits {
    /// The BMP's units are made once and borrowed; the units of a plan's keys are its own.
    units: Cow<'static, [u16]>,
    /// Whether the keys seen all had the same length: no digit then stands for "no more units".
    fixed: bool,
}

impl Digits {
    /// Every BMP character a key takes (`docs/rules.md` §2.1), with neither surrogates (a point's units are
    /// then its characters, and the service's order of points is the order of their code points) nor
    /// noncharacters (U+FDD0 to U+FDEF, U+FFFE and U+FFFF), which a point has no need of.
    pub(super) fn bmp() -> Self {
        static UNITS: OnceLock<Vec<u16>> = OnceLock::new();
        let units = UNITS.get_or_init(|| (0..=0xFFFF_u16).filter(|&u| Self::takes(u)).collect());
        Digits { units: Cow::Borrowed(units), fixed: false }
    }

    /// The characters of `keys` that [`Digits::bmp`] holds, when there are at least two, with the rest of
    /// each ASCII class they draw on ([`complete`]): keys built from few characters (digits, hex, a prefix)
    /// get points made of them, spread over what the keys use rather than over the whole BMP. Otherwise
    /// [`Digits::bmp`]. Keys all of the same length are read as of a fixed width (the module's doc).
    pub(super) fn seen<'k>(keys: impl IntoIterator<Item = &'k str>) -> Self {
        // Which units occur, one bit each (8 KiB, whatever the keys): each distinct unit is then checked once.
        let mut present = [0_u64; 0x10000 / 64];
        // The keys' one length in units, while they have one (`Some(None)` before any key).
        let mut length: Option<Option<usize>> = Some(None);
        for key in keys {
            let mut units = 0;
            for u in key.encode_utf16() {
                present[usize::from(u) / 64] |= 1 << (u % 64);
                units += 1;
            }
            length = length.filter(|l| l.is_none_or(|l| l == units)).map(|_| Some(units));
        }
        let seen = |present: &[u64; 0x10000 / 64]| -> Vec<u16> {
            (0..=0xFFFF_u16)
                .filter(|&u| present[usize::from(u) / 64] & (1 << (u % 64)) != 0 && Self::takes(u))
                .collect()
        };
        if seen(&present).len() < 2 {
            return Self::bmp();
        }
        complete(&mut present);
        Digits { units: Cow::Owned(seen(&present)), fixed: length.flatten().is_some_and(|l| l > 0) }
    }

    /// Whether a point may hold the code unit `u`.
    fn takes(u: u16) -> bool {
        !(0xFDD0..=0xFDEF).contains(&u)
            && u < 0xFFFE
            && char::from_u32(u.into()).is_some_and(|c| PartitionKey::new(c.to_string()).is_ok())
    }

    /// A string above every string of these digits of at most `len` characters: the greatest digit,
    /// `len + 1` times.
    pub(super) fn top(&self, len: usize) -> String {
        let top = *self.units.last().expect("at least two digits");
        String::from_utf16_lossy(&vec![top; len + 1])
    }

    /// The digit of the first unit: `0` for "no more units" unless the width is fixed.
    fn first(&self) -> usize {
        usize::from(!self.fixed)
    }

    /// The base of a reading: one digit per unit, and one for "no more units" unless the width is fixed.
    fn base(&self) -> u128 {
        (self.units.len() + self.first()) as u128
    }

    /// `s` read as a number from its code units after the first `skip`; non-decreasing in the service's
    /// order among strings that share those `skip` units. A unit that is not a digit reads as the next digit
    /// above it, or as the greatest; a missing unit as `0`.
    fn reading(&self, s: &[u16], skip: usize) -> u128 {
        let greatest = self.units.len() - 1 + self.first();
        (0..DIGITS).fold(0, |value, i| {
            let digit = s
                .get(skip + i)
                .map_or(0, |u| (self.units.partition_point(|a| a < u) + self.first()).min(greatest) as u128);
            value * self.base() + digit
        })
    }

    /// The point of the reading `value` after `prefix`: one unit per digit, up to the first `0` (every digit
    /// when the width is fixed).
    fn point(&self, prefix: &[u16], value: u128) -> String {
        let mut digits = [0_u128; DIGITS];
        let mut rest = value;
        for d in digits.iter_mut().rev() {
            *d = rest % self.base();
            rest /= self.base();
        }
        let tail = digits.iter().take_while(|&&d| self.fixed || d != 0).map(|&d| self.units[d as usize - self.first()]);
        // The prefix ends on a whole character and the digits are BMP characters: this is valid UTF-16.
        String::from_utf16_lossy(&prefix.iter().copied().chain(tail).collect::<Vec<_>>())
    }

    /// Up to `count` points strictly between `lo` and `hi` in the service's order, in increasing order,
    /// spread evenly over the readings of the two after their common prefix: the `k`-th is read as
    /// `lo + (hi - lo) * k / (count + 1)`. Fewer come back when points collide or fall on an end (the
    /// reading of a longer string, or of a unit that is not a digit, is not exact); none when `lo` is not
    /// below `hi`.
    pub(super) fn between(&self, lo: &str, hi: &str, count: usize) -> Vec<String> {
        if service_order(lo, hi) != Ordering::Less {
            return Vec::new();
        }
        let Readings { prefix, lo: a, hi: b } = self.readings(lo, hi);
        let span = b.saturating_sub(a);
        let parts = count as u128 + 1;
        let mut points: Vec<String> = Vec::new();
        for k in 1..parts {
            let value = a + span / parts * k + span % parts * k / parts;
            let p = self.point(&prefix, value);
            if strictly_between(points.last().map_or(lo, String::as_str), &p, hi) {
                points.push(p);
            }
        }
        points
    }

    /// The point at the fraction `f` (from 0 to 1) of the readings from `lo` to `hi` after their common
    /// prefix, when it lies strictly between the two in the service's order.
    pub(super) fn at(&self, lo: &str, hi: &str, f: f64) -> Option<String> {
        if service_order(lo, hi) != Ordering::Less || !(0.0..=1.0).contains(&f) {
            return None;
        }
        let Readings { prefix, lo: a, hi: b } = self.readings(lo, hi);
        // A reading holds at most 112 bits: the fraction of the span in f64 is close enough for a cut.
        let value = a + (b.saturating_sub(a) as f64 * f) as u128;
        let point = self.point(&prefix, value);
        strictly_between(lo, &point, hi).then_some(point)
    }

    /// Where `s` stands between `lo` and `hi`, as a fraction of the span of their readings after their
    /// common prefix: 0 at `lo` (or below), 1 at `hi` (or above); `None` when the two read the same.
    pub(super) fn fraction(&self, lo: &str, s: &str, hi: &str) -> Option<f64> {
        let Readings { prefix, lo: a, hi: b } = self.readings(lo, hi);
        let s16: Vec<u16> = s.encode_utf16().collect();
        let x = self.reading(&s16, prefix.len()).clamp(a.min(b), b.max(a));
        (b > a).then(|| (x - a) as f64 / (b - a) as f64)
    }

    /// `lo` and `hi` read after the code units they share.
    fn readings(&self, lo: &str, hi: &str) -> Readings {
        let (lo16, mut hi16): (Vec<u16>, Vec<u16>) = (lo.encode_utf16().collect(), hi.encode_utf16().collect());
        let skip = common_prefix(&lo16, &hi16);
        let (lo, hi) = (self.reading(&lo16, skip), self.reading(&hi16, skip));
        hi16.truncate(skip);
        Readings { prefix: hi16, lo, hi }
    }
}

/// Two strings read as numbers after their common prefix ([`Digits::readings`]).
struct Readings {
    /// The code units the two share, which the points between them start with.
    prefix: Vec<u16>,
    lo: u128,
    hi: u128,
}

/// Whether `p` is strictly between `lo` and `hi` in the service's order.
fn strictly_between(lo: &str, p: &str, hi: &str) -> bool {
    service_order(lo, p) == Ordering::Less && service_order(p, hi) == Ordering::Less
}

/// Adds to the units `present` holds (one bit each) the rest of each ASCII class they draw on: a key made of
/// some decimal digits is taken to be made of any, and so with letters (`docs/rules.md` §10.1). The first
/// pages of a table tell a plan which characters its keys begin with (`tenant-000` to `tenant-003`), not
/// which the rest of the table holds (`tenant-399`); points made of the digits seen only would never land
/// where the others sort, and the estimate would squeeze the keys that hold them into a gap. Letters seen
/// only from `a` to `f` (or `A` to `F`) complete to hexadecimal digits, any other to the whole alphabet.
fn complete(present: &mut [u64; 0x10000 / 64]) {
    let has = |present: &[u64; 0x10000 / 64], u: u8| present[usize::from(u) / 64] & (1 << (u % 64)) != 0;
    let any = |present: &[u64; 0x10000 / 64], lo: u8, hi: u8| (lo..=hi).any(|u| has(present, u));
    let digits = any(present, b'0', b'9').then_some((b'0', b'9'));
    let letters = [b'a', b'A'].map(|a| {
        let (f, z) = (a + 5, a + 25);
        any(present, a, z).then(|| (a, if any(present, f + 1, z) { z } else { f }))
    });
    for (lo, hi) in [digits].into_iter().chain(letters).flatten() {
        for u in lo..=hi {
            present[usize::from(u) / 64] |= 1 << (u % 64);
        }
    }
}

/// The digits of keys in order, from `least` to `greatest` (`keys` holds them and those between), and a
/// string above them all. The digits are the characters the keys hold after the prefix that `least` and
/// `greatest` share (every key between shares it); the string is that prefix followed by the greatest digit,
/// once more than the longest of the keys' rests after the prefix.
pub(super) fn frame<'k>(least: &str, greatest: &str, keys: impl Iterator<Item = &'k str> + Clone) -> (Digits, String) {
    let shared = least.char_indices().zip(greatest.chars()).find(|((_, a), b)| a != b);
    let shared = shared.map_or(least.len().min(greatest.len()), |((i, _), _)| i);
    let rests = keys.map(|k| k.get(shared..).unwrap_or_default());
    let digits = Digits::seen(rests.clone());
    let longest = rests.map(|r| r.chars().count()).max().unwrap_or(0);
    let above = format!("{}{}", &greatest[..shared], digits.top(longest));
    (digits, above)
}

/// The frames of keys in order, from `least` to `greatest`, as [`frame`] gives them, for each prefix the two
/// share cut shorter one character at a time, from the whole shared prefix down to none: their strings above
/// the keys grow, from the nearest end the keys suggest to the farthest. At most `most` of them (at least one):
/// the nearest ones, and the one without a prefix last (when `most` is more than one).
pub(super) fn frames<'k>(
    least: &str,
    greatest: &str,
    keys: impl Iterator<Item = &'k str> + Clone,
    most: usize,
) -> Vec<(Digits, String)> {
    let shared = least.char_indices().zip(greatest.chars()).find(|((_, a), b)| a != b);
    let shared = shared.map_or(least.len().min(greatest.len()), |((i, _), _)| i);
    let mut cuts: Vec<usize> = least[..shared].char_indices().map(|(i, _)| i).chain([shared]).rev().collect();
    let most = most.max(1);
    if cuts.len() > most {
        let widest = cuts[cuts.len() - 1];
        cuts.truncate(most.max(2) - 1);
        if most > 1 {
            cuts.push(widest);
        }
    }
    cuts.into_iter()
        .map(|cut| {
            let rests = keys.clone().map(move |k| k.get(cut..).unwrap_or_default());
            let digits = Digits::seen(rests.clone());
            let longest = rests.map(|r| r.chars().count()).max().unwrap_or(0);
            let above = format!("{}{}", &greatest[..cut], digits.top(longest));
            (digits, above)
        })
        .collect()
}

/// The number of code units `a` and `b` share at their start, never ending inside a surrogate pair.
fn common_prefix(a: &[u16], b: &[u16]) -> usize {
    let mut len = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if len > 0 && (0xD800..0xDC00).contains(&a[len - 1]) {
        len -= 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(lo: &str, hi: &str, count: usize) -> Vec<String> {
        check_with(&Digits::bmp(), lo, hi, count)
    }

    fn check_with(digits: &Digits, lo: &str, hi: &str, count: usize) -> Vec<String> {
        let points = digits.between(lo, hi, count);
        assert!(points.len() <= count);
        let shared = lo.chars().zip(hi.chars()).take_while(|(a, b)| a == b).count();
        let mut above = lo;
        for p in &points {
            assert_eq!(service_order(above, p), Ordering::Less, "{lo:?} {hi:?}: {points:?}");
            // The common prefix, then BMP characters only.
            assert!(p.chars().skip(shared).all(|c| c <= '\u{FFFF}'), "{p:?}");
            assert!(PartitionKey::new(p.as_str()).is_ok(), "{p:?}");
            above = p;
        }
        assert_eq!(service_order(above, hi), if points.is_empty() { service_order(lo, hi) } else { Ordering::Less });
        points
    }

    #[test]
    fn points_spread_over_decimal_and_hex_keys() {
        let points = check("p0015", "p0999", 3);
        assert_eq!(points.len(), 3);
        // Evenly over the readings: the first digit after "p0" moves by about a quarter of '0'..'9' each time.
        let firsts: Vec<char> = points.iter().map(|p| p.chars().nth(2).unwrap()).collect();
        assert_eq!(firsts, ['2', '4', '6']);
        assert!(points.iter().all(|p| p.starts_with("p0")));
        let hex = check("0a3f", "ffe1", 15);
        assert_eq!(hex.len(), 15);
        // Over code points: ':' to '`' lie between the digits and the letters, and take their share of points.
        assert!(hex[0].starts_with('3') && hex[7].starts_with('K') && hex[14].starts_with('b'), "{hex:?}");
        // One point is the middle.
        assert!(check("a", "c", 1)[0].starts_with('b'));
    }

    #[test]
    fn ends_of_different_lengths_and_tight_ends() {
        // A prefix is below its extensions: points between "ab" and "abc" start with "ab" and sort below "abc".
        let points = check("ab", "abc", 4);
        assert!(!points.is_empty() && points.iter().all(|p| p.starts_with("ab") && p.as_str() < "abc"), "{points:?}");
        // Nothing lies between a string and the same string with the least unit a key takes after it, as a point.
        assert!(check("a", "a ", 5).is_empty());
        assert!(check("b", "a", 3).is_empty() && check("a", "a", 3).is_empty());
        assert!(check("", "\u{A0}", 3).len() == 3);
    }

    #[test]
    fn points_hold_no_forbidden_surrogate_or_astral_unit() {
        // Around the surrogates, the controls and the forbidden ASCII: every point is a key of BMP characters.
        for (lo, hi) in [("\u{D7F0}", "\u{E010}"), ("\u{7E}", "\u{A1}"), ("\"", "$"), (".", "0"), ("[", "]")] {
            let points = check(lo, hi, 20);
            for p in &points {
                assert!(!p.contains(['#', '/', '?', '\\']) && !p.chars().any(char::is_control), "{p:?}");
            }
        }
        // Astral characters in the ends sort as surrogates, below U+E000.
        let points = check("x\u{1F600}", "x\u{FF61}", 5);
        assert!(points.iter().all(|p| service_order(p, "x\u{1F600}") == Ordering::Greater), "{points:?}");
        check("\u{1F600}a", "\u{1F600}b", 5);
        check("\u{1F600}", "\u{1F601}", 5);
    }

    #[test]
    fn digits_seen_in_keys_make_the_points() {
        let digits = Digits::seen(["p0000", "p0417", "p0079"]);
        // `p` is a letter past `f`: the whole lowercase alphabet.
        assert_eq!(digits.top(5), "zzzzzz");
        // Between the last key read and the top of what the digits make: points of `a` to `z` and `0` to `9`.
        let points = check_with(&digits, "p0079", &digits.top(5), 10);
        assert_eq!(points.len(), 10);
        assert!(points.iter().all(|p| p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())), "{points:?}");
        // Hex keys: evenly over the 16 digits, with no point in the gap between '9' and 'a'.
        let hex = Digits::seen(["0123456789", "abcdef"]);
        let points = check_with(&hex, "0", "g", 15);
        let firsts: String = points.iter().map(|p| p.chars().next().unwrap()).collect();
        assert_eq!(firsts, "0123456789abcde");
        // Some digits seen are any digit; letters up to `f` are hex digits, past it the whole alphabet.
        let units = |d: &Digits| String::from_utf16(&d.units).unwrap();
        assert_eq!(units(&Digits::seen(["tenant-000", "tenant-003"])), "-0123456789abcdefghijklmnopqrstuvwxyz");
        assert_eq!(units(&Digits::seen(["0", "3"])), "0123456789");
        assert_eq!(units(&Digits::seen(["0a", "3e"])), "0123456789abcdef");
        assert_eq!(units(&Digits::seen(["B", "g"])), "ABCDEFabcdefghijklmnopqrstuvwxyz");
        // Too few characters to count in: the whole BMP.
        assert_eq!(Digits::seen(["aaa", ""]), Digits::bmp());
        // A unit that is not a digit reads as the next digit, or the greatest: points still fall between.
        check_with(&digits, "a", "z", 5);
        check_with(&digits, "p0\u{1F600}", "q", 5);
    }

    #[test]
    fn keys_of_one_length_read_evenly_across_a_carry() {
        // The digits of the keys after the prefix they share (`x`), as a plan takes them.
        let fixed = Digits::seen(["000", "003"]);
        assert!(fixed.fixed);
        // `x100` is half way from `x000` to `x200`, as `x099` is one step below it.
        assert_eq!(fixed.fraction("x000", "x100", "x200"), Some(0.5));
        let step = |a, b| fixed.fraction("x000", b, "x200").unwrap() - fixed.fraction("x000", a, "x200").unwrap();
        assert!((step("x098", "x099") - step("x099", "x100")).abs() < 1e-9);
        // Keys of different lengths keep the "no more units" digit, and `x1` sorts below `x10`.
        let varied = Digits::seen(["x1", "x10"]);
        assert!(!varied.fixed);
        assert!(varied.fraction("x0", "x1", "x9").unwrap() < varied.fraction("x0", "x10", "x9").unwrap());
        // A point at a fraction lies strictly between its ends.
        let middle = fixed.at("x000", "x400", 0.5).unwrap();
        assert!(middle.starts_with("x2") && middle.as_str() > "x199" && middle.as_str() < "x201", "{middle}");
        // Between neighbours of the same length, a longer point.
        assert_eq!(fixed.at("x000", "x001", 0.5).as_deref(), Some("x000500000"));
        assert_eq!(fixed.at("x000", "x000", 0.5), None);
        assert_eq!(fixed.at("x001", "x000", 0.5), None);
        assert_eq!(fixed.at("x000", "x400", 1.5), None);
    }

    #[test]
    fn frames_widen_from_the_shared_prefix_to_none() {
        let keys = ["p0000", "p0019"];
        let ends: Vec<String> = frames("p0000", "p0019", keys.into_iter(), 8).into_iter().map(|(_, hi)| hi).collect();
        assert_eq!(ends, ["p00999", "p09999", "p99999", "zzzzzz"]);
        // At most 3: the two nearest and the widest.
        let ends: Vec<String> = frames("p0000", "p0019", keys.into_iter(), 3).into_iter().map(|(_, hi)| hi).collect();
        assert_eq!(ends, ["p00999", "p09999", "zzzzzz"]);
        // The nearest is `frame`'s.
        let nearest = |most| frames("ab", "ab", ["ab"].into_iter(), most)[0].1.clone();
        assert_eq!((nearest(1), nearest(2)), (frame("ab", "ab", ["ab"].into_iter()).1.clone(), nearest(8)));
    }

    #[test]
    fn fraction_reads_the_place_between_the_ends() {
        assert_eq!(Digits::bmp().fraction("p000", "p000", "p999"), Some(0.0));
        assert_eq!(Digits::bmp().fraction("p000", "p999", "p999"), Some(1.0));
        let half = Digits::bmp().fraction("a0", "a5", "a9").unwrap();
        assert!((0.5..0.6).contains(&half), "{half}");
        assert_eq!(Digits::bmp().fraction("a", "a", "a"), None);
    }

    /// Keys of up to 6 characters from anywhere in Unicode: the ends of a plan's points are keys.
    fn key() -> impl Strategy<Value = String> {
        "\\PC{0,6}".prop_filter("a key", |s| PartitionKey::new(s.as_str()).is_ok())
    }

    proptest! {
        #[test]
        fn points_are_strictly_between_and_increasing(
            lo in key(),
            hi in key(),
            count in 0_usize..40,
        ) {
            let (lo, hi) = if service_order(&lo, &hi) == Ordering::Greater { (hi, lo) } else { (lo, hi) };
            check(&lo, &hi, count);
            check_with(&Digits::seen([lo.as_str(), hi.as_str(), "0a"]), &lo, &hi, count);
        }

        #[test]
        fn keys_with_a_shared_prefix_get_points_with_it(prefix in "[a-z0-9]{0,20}", a in "[0-9]{1,5}", b in "[0-9]{1,5}") {
            let (lo, hi) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
            let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
            for p in check(&lo, &hi, 8) {
                prop_assert!(p.starts_with(&prefix));
            }
        }
    }
}
