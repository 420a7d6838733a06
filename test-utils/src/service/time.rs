//! The service's times: an entity's `Timestamp` in ticks (100 ns since 0001-01-01T00:00:00Z, the precision the
//! service keeps), written with 7 fractional digits as the service writes it, read back from a `datetime'...'`
//! literal, and the `Date` header in RFC 1123's form.
//!
//! Layer: base.

use chrono::{Datelike as _, NaiveDate};
use std::time::{SystemTime, UNIX_EPOCH};

/// Ticks in a second.
const PER_SECOND: i64 = 10_000_000;
/// Days from 0001-01-01 to 1970-01-01.
const UNIX_DAYS: i64 = 719_162;

/// The time now in ticks.
pub(crate) fn now() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    UNIX_DAYS * 86_400 * PER_SECOND + since.as_secs() as i64 * PER_SECOND + i64::from(since.subsec_nanos() / 100)
}

/// The date of a day since 0001-01-01 (chrono's proleptic Gregorian calendar counts that day as 1).
fn date(days: i64) -> NaiveDate {
    i32::try_from(days + 1).ok().and_then(NaiveDate::from_num_days_from_ce_opt).unwrap_or(NaiveDate::MAX)
}

/// `2024-05-06T07:08:10.7654321Z`: how the service writes a `Timestamp`.
pub(crate) fn format(ticks: i64) -> String {
    let (days, rest) = (ticks.div_euclid(86_400 * PER_SECOND), ticks.rem_euclid(86_400 * PER_SECOND));
    let date = date(days);
    let (year, month, day) = (date.year(), date.month(), date.day());
    let seconds = rest / PER_SECOND;
    let fraction = rest % PER_SECOND;
    let (hour, minute, second) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{fraction:07}Z")
}

/// The ticks of an ISO 8601 UTC time as a `datetime'...'` literal or an `Edm.DateTime` value writes it:
/// `YYYY-MM-DDTHH:MM[:SS[.fraction]]` and `Z` (or no zone), up to 7 fractional digits; `None` for anything
/// else (another offset, a date out of range).
pub(crate) fn parse(text: &str) -> Option<i64> {
    let text = text.strip_suffix('Z').unwrap_or(text);
    let (date, time) = text.split_once('T')?;
    let number =
        |s: &str, len: usize| (s.len() == len && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?;
    let mut date = date.split('-');
    let (year, month, day): (i64, i64, i64) =
        (number(date.next()?, 4)?, number(date.next()?, 2)?, number(date.next()?, 2)?);
    let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut clock = clock.split(':');
    let (hour, minute): (i64, i64) = (number(clock.next()?, 2)?, number(clock.next()?, 2)?);
    let second: i64 = clock.next().map_or(Some(0), |s| number(s, 2))?;
    let in_range = date.next().is_none()
        && clock.next().is_none()
        && (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && year >= 1
        && hour < 24
        && minute < 60
        && second < 60
        && fraction.len() <= 7
        && fraction.bytes().all(|b| b.is_ascii_digit());
    if !in_range {
        return None;
    }
    let ticks_fraction: i64 = if fraction.is_empty() { 0 } else { format!("{fraction:0<7}").parse().ok()? };
    // A day past the month's end (Feb 30) is refused: it would read as another date.
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month as u32, day as u32)?;
    let days = i64::from(date.num_days_from_ce()) - 1;
    Some((days * 86_400 + hour * 3600 + minute * 60 + second) * PER_SECOND + ticks_fraction)
}

/// The ETag the service gives an entity written at `ticks`: `W/"datetime'2024-05-06T07%3A08%3A10.7654321Z'"`.
pub(crate) fn etag(ticks: i64) -> String {
    format!("W/\"datetime'{}'\"", format(ticks).replace(':', "%3A"))
}

/// `Mon, 06 May 2024 07:08:10 GMT`: the `Date` header (RFC 1123) of a time in ticks.
pub(crate) fn http_date(ticks: i64) -> String {
    let days = ticks.div_euclid(86_400 * PER_SECOND);
    let seconds = ticks.rem_euclid(86_400 * PER_SECOND) / PER_SECOND;
    let (hour, minute, second) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    format!("{} {hour:02}:{minute:02}:{second:02} GMT", date(days).format("%a, %d %b %Y"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timestamp_is_written_with_seven_digits_and_read_back() {
        let text = "2024-05-06T07:08:10.7654321Z";
        let ticks = parse(text).unwrap();
        assert_eq!(format(ticks), text);
        assert_eq!(parse("2024-05-06T07:08:10.76543Z"), Some(ticks - 21));
        assert_eq!(parse("2024-05-06T07:08Z"), parse("2024-05-06T07:08:00.0000000Z"));
        assert_eq!(format(parse("0001-01-01T00:00:00Z").unwrap()), "0001-01-01T00:00:00.0000000Z");
        assert_eq!(format(parse("9999-12-31T23:59:59.9999999Z").unwrap()), "9999-12-31T23:59:59.9999999Z");
        assert_eq!(format(parse("2000-02-29T12:00:00Z").unwrap()), "2000-02-29T12:00:00.0000000Z");
        for bad in ["2023-02-29T00:00:00Z", "2024-13-01T00:00Z", "2024-05-06", "2024-05-06T07:08:10+01:00", "x"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_date_header_is_rfc_1123() {
        assert_eq!(http_date(parse("2024-05-06T07:08:10.9Z").unwrap()), "Mon, 06 May 2024 07:08:10 GMT");
        assert_eq!(http_date(parse("1994-11-06T08:49:37Z").unwrap()), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(etag(parse("2024-05-06T07:08:10.7654321Z").unwrap()), crate::entity::ETAG);
    }

    #[test]
    fn now_is_after_the_unix_epoch() {
        assert!(now() > parse("2020-01-01T00:00:00Z").unwrap());
    }
}
