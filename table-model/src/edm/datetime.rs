//! `Edm.DateTime`: a UTC instant from 1601-01-01 to 9999-12-31 at 100 ns resolution, stored as .NET ticks
//! (`docs/rules.md` §3.3 and §6.2).

use super::error::{ValueError, ValueErrorKind};
use crate::limits::{DATETIME_MAX_TICKS, DATETIME_MIN_TICKS, TICKS_PER_SECOND, UNIX_EPOCH_TICKS};
use std::fmt;
use std::str::FromStr;
use std::time::SystemTime;

const TICKS_PER_DAY: i64 = 86_400 * TICKS_PER_SECOND;
/// Days from 0001-01-01 to 1970-01-01 in the proleptic Gregorian calendar.
const DAYS_0001_TO_1970: i64 = 719_162;

/// A UTC instant in the range the service stores, 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, kept
/// as .NET ticks (100 ns units since 0001-01-01T00:00:00Z).
///
/// Values outside the range are an error, never clamped: the service rejects them with 400. Finer input,
/// such as chrono's nanoseconds, is truncated toward the past to the tick, as the service itself stores
/// 7 fractional digits.
///
/// ```
/// use table_model::DateTime;
/// # fn main() -> Result<(), table_model::ValueError> {
/// let t: DateTime = "2024-01-02T03:04:05.1234567Z".parse()?;
/// assert_eq!(t.ticks(), 638_397_614_451_234_567);
/// assert_eq!(t.to_string(), "2024-01-02T03:04:05.1234567Z");
///
/// let chrono_time = chrono::DateTime::parse_from_rfc3339("2024-01-02T03:04:05.123456789Z").unwrap().to_utc();
/// assert_eq!(DateTime::try_from(chrono_time)?, t); // 89 ns truncated
///
/// assert!("1600-12-31T23:59:59Z".parse::<DateTime>().is_err());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    ticks: i64,
}

impl DateTime {
    /// The earliest value the service stores: 1601-01-01T00:00:00Z.
    pub const MIN: DateTime = DateTime { ticks: DATETIME_MIN_TICKS };
    /// The latest value: 9999-12-31T23:59:59.9999999Z (`DateTime.MaxValue` in .NET).
    pub const MAX: DateTime = DateTime { ticks: DATETIME_MAX_TICKS };
    /// The Unix epoch, 1970-01-01T00:00:00Z.
    pub const UNIX_EPOCH: DateTime = DateTime { ticks: UNIX_EPOCH_TICKS };

    /// A value from .NET ticks (100 ns since 0001-01-01T00:00:00Z).
    ///
    /// # Errors
    /// [`ValueErrorKind::DateTimeOutOfRange`] outside 1601-01-01 to 9999-12-31.
    pub fn from_ticks(ticks: i64) -> Result<Self, ValueError> {
        if (DATETIME_MIN_TICKS..=DATETIME_MAX_TICKS).contains(&ticks) {
            Ok(DateTime { ticks })
        } else {
            Err(out_of_range(describe_ticks(ticks)))
        }
    }

    /// The .NET ticks of this instant.
    pub const fn ticks(self) -> i64 {
        self.ticks
    }

    /// A value from a `chrono` instant, truncated to the 100 ns tick.
    ///
    /// # Errors
    /// [`ValueErrorKind::DateTimeOutOfRange`] outside 1601-01-01 to 9999-12-31.
    pub fn from_chrono(value: chrono::DateTime<chrono::Utc>) -> Result<Self, ValueError> {
        let secs = value.timestamp();
        let nanos = i64::from(value.timestamp_subsec_nanos());
        let ticks = secs
            .checked_mul(TICKS_PER_SECOND)
            .and_then(|t| t.checked_add(UNIX_EPOCH_TICKS))
            .and_then(|t| t.checked_add(nanos / 100));
        match ticks {
            Some(t) => DateTime::from_ticks(t).map_err(|_| out_of_range(value.to_rfc3339())),
            None => Err(out_of_range(value.to_rfc3339())),
        }
    }

    /// The same instant as a `chrono` value (always representable).
    pub fn to_chrono(self) -> chrono::DateTime<chrono::Utc> {
        let since_epoch = self.ticks - UNIX_EPOCH_TICKS;
        let secs = since_epoch.div_euclid(TICKS_PER_SECOND);
        let nanos = (since_epoch.rem_euclid(TICKS_PER_SECOND) * 100) as u32;
        chrono::DateTime::from_timestamp(secs, nanos).expect("every DateTime is within chrono's range")
    }

    /// Parses ISO 8601 as the service and the SDKs write it: `YYYY-MM-DDTHH:MM:SS`, then an optional fraction
    /// of any number of digits (kept to 7, the rest truncated), then `Z`, an offset `+hh:mm`/`-hh:mm`, or nothing
    /// (read as UTC, as the service does).
    ///
    /// # Errors
    /// [`ValueErrorKind::DateTimeSyntax`] for malformed text, [`ValueErrorKind::DateTimeOutOfRange`] for a valid
    /// date outside the service's range.
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let ticks = parse_ticks(text.as_bytes())
            .ok_or_else(|| ValueError::new(ValueErrorKind::DateTimeSyntax { value: truncate_for_message(text) }))?;
        DateTime::from_ticks(ticks).map_err(|_| out_of_range(text.to_owned()))
    }

    /// Appends the wire form, always with 7 fractional digits and `Z`: `2024-01-02T03:04:05.1234567Z`.
    pub fn write_to(self, out: &mut String) {
        let mut buf = [0u8; 28];
        self.encode(&mut buf);
        // The buffer holds ASCII digits and punctuation only.
        out.push_str(std::str::from_utf8(&buf).expect("ASCII"));
    }

    /// Writes the wire form of [`write_to`](DateTime::write_to) into a fixed buffer (for the JSON writer).
    ///
    /// Unsigned arithmetic and two digits at a time: a `DateTime` is never before 0001-01-01, so every step is a
    /// plain division (an encode is on the path of every DateTime written to the service or a file).
    pub(crate) fn encode(self, buf: &mut [u8; 28]) {
        let ticks = self.ticks as u64; // never negative: `DATETIME_MIN_TICKS` is past 0001-01-01
        let (days, in_day) = (ticks / TICKS_PER_DAY as u64, ticks % TICKS_PER_DAY as u64);
        let (y, m, d) = civil_from_days_unsigned(days);
        let secs = (in_day / TICKS_PER_SECOND as u64) as u32;
        let frac = (in_day % TICKS_PER_SECOND as u64) as u32;
        let mut pair = |at: usize, v: u32| buf[at..at + 2].copy_from_slice(&PAIRS[v as usize * 2..v as usize * 2 + 2]);
        pair(0, y / 100);
        pair(2, y % 100);
        pair(5, m);
        pair(8, d);
        pair(11, secs / 3600);
        pair(14, secs / 60 % 60);
        pair(17, secs % 60);
        pair(20, frac / 100_000);
        pair(22, frac / 1_000 % 100);
        pair(24, frac / 10 % 100);
        buf[26] = b'0' + (frac % 10) as u8;
        buf[4] = b'-';
        buf[7] = b'-';
        buf[10] = b'T';
        buf[13] = b':';
        buf[16] = b':';
        buf[19] = b'.';
        buf[27] = b'Z';
    }
}

/// `00` to `99`, for writing two digits at once.
const PAIRS: &[u8; 200] =
    b"0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// The proleptic Gregorian year, month and day of a count of days since 0001-01-01 (never before it): Howard
/// Hinnant's `civil_from_days`, in unsigned arithmetic.
fn civil_from_days_unsigned(days: u64) -> (u32, u32, u32) {
    // Days since 0000-03-01, the start of the proleptic Gregorian era the algorithm counts from.
    let z = days + 306;
    let era = z / 146_097;
    let doe = (z - era * 146_097) as u32;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era as u32 * 400 + u32::from(m <= 2);
    (y, m, d)
}

fn out_of_range(value: String) -> ValueError {
    ValueError::new(ValueErrorKind::DateTimeOutOfRange { value })
}

fn truncate_for_message(text: &str) -> String {
    text.chars().take(64).collect()
}

fn describe_ticks(ticks: i64) -> String {
    if (0..=DATETIME_MAX_TICKS).contains(&ticks) {
        DateTime { ticks }.to_string()
    } else {
        format!("{ticks} ticks")
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn digits(bytes: &[u8], at: usize, width: usize) -> Option<i64> {
    let slice = bytes.get(at..at + width)?;
    let mut value = 0;
    for &b in slice {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value * 10 + i64::from(digit);
    }
    Some(value)
}

/// Eight ASCII digits as a number, `None` if any byte is not a digit: all eight bytes in one `u64` at once
/// (also the JSON reader's Int64 digits).
#[inline]
pub(crate) fn eight_digits(chunk: [u8; 8]) -> Option<i64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let v = u64::from_le_bytes(chunk);
    // A byte is a digit when subtracting `0` leaves it below 0x80 and adding 0x46 (0x7f - `9`) too. A borrow or
    // carry across bytes starts at a byte that already fails one of the two.
    let d = v.wrapping_sub(ONES * u64::from(b'0'));
    if (d | v.wrapping_add(ONES * 0x46)) & (ONES * 0x80) != 0 {
        return None;
    }
    // The first digit is the lowest byte: pairs, then fours, then all eight.
    let d = (d.wrapping_mul(10) + (d >> 8)) & 0x00ff_00ff_00ff_00ff;
    let d = (d.wrapping_mul(100) + (d >> 16)) & 0x0000_ffff_0000_ffff;
    let d = (d.wrapping_mul(10_000) + (d >> 32)) & 0xffff_ffff;
    // At most 99,999,999.
    Some(d as i64)
}

/// Parses the accepted ISO 8601 forms into ticks; `None` for malformed text.
fn parse_ticks(b: &[u8]) -> Option<i64> {
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    let (h, mi, s) = (digits(b, 11, 2)?, digits(b, 14, 2)?, digits(b, 17, 2)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let mut i = 19;
    let mut frac = 0i64;
    // The service's form, seven digits and `Z`, at once: the seven digits and a `0` make eight.
    let seven = match &b[19..] {
        [b'.', f @ .., b'Z' | b'z'] if f.len() == 7 => eight_digits([f[0], f[1], f[2], f[3], f[4], f[5], f[6], b'0']),
        _ => None,
    };
    if let Some(v) = seven {
        frac = v / 10;
        i = 27;
    } else if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 7 {
                frac = frac * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        let n = i - start;
        if n == 0 {
            return None;
        }
        for _ in n..7 {
            frac *= 10;
        }
    }
    let offset_secs = match &b[i..] {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] if rest.len() == 5 && rest[2] == b':' => {
            let (oh, om) = (digits(rest, 0, 2)?, digits(rest, 3, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let off = oh * 3600 + om * 60;
            if *sign == b'+' {
                off
            } else {
                -off
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d) + DAYS_0001_TO_1970;
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset_secs;
    Some(secs * TICKS_PER_SECOND + frac)
}

impl fmt::Display for DateTime {
    /// The wire form with 7 fractional digits: `2024-01-02T03:04:05.1234567Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 28];
        self.encode(&mut buf);
        f.write_str(std::str::from_utf8(&buf).expect("ASCII"))
    }
}

impl fmt::Debug for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DateTime({self})")
    }
}

impl FromStr for DateTime {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Self, ValueError> {
        DateTime::parse(s)
    }
}

impl TryFrom<chrono::DateTime<chrono::Utc>> for DateTime {
    type Error = ValueError;
    fn try_from(value: chrono::DateTime<chrono::Utc>) -> Result<Self, ValueError> {
        DateTime::from_chrono(value)
    }
}

impl From<DateTime> for chrono::DateTime<chrono::Utc> {
    fn from(value: DateTime) -> Self {
        value.to_chrono()
    }
}

/// A `SystemTime`, truncated toward the past to the 100 ns tick.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use table_model::DateTime;
/// let t = SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789);
/// assert_eq!(DateTime::try_from(t)?.to_string(), "2023-11-14T22:13:20.1234567Z");
/// let too_early = SystemTime::UNIX_EPOCH - Duration::from_secs(400 * 366 * 86_400);
/// assert!(DateTime::try_from(too_early).is_err());
/// # Ok::<(), table_model::ValueError>(())
/// ```
impl TryFrom<SystemTime> for DateTime {
    type Error = ValueError;
    fn try_from(value: SystemTime) -> Result<Self, ValueError> {
        // Whole seconds toward the past and the nanoseconds after them, as chrono counts.
        let (secs, nanos, describe) = match value.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(after) => {
                let secs = i64::try_from(after.as_secs()).ok();
                (secs, after.subsec_nanos(), format!("{} s after 1970-01-01T00:00:00Z", after.as_secs()))
            }
            Err(before) => {
                let before = before.duration();
                let secs = i64::try_from(before.as_secs()).ok().map(|s| -s);
                let (secs, nanos) = match before.subsec_nanos() {
                    0 => (secs, 0),
                    n => (secs.and_then(|s| s.checked_sub(1)), 1_000_000_000 - n),
                };
                (secs, nanos, format!("{} s before 1970-01-01T00:00:00Z", before.as_secs()))
            }
        };
        match secs.and_then(|secs| chrono::DateTime::from_timestamp(secs, nanos)) {
            Some(time) => DateTime::from_chrono(time),
            None => Err(out_of_range(describe)),
        }
    }
}

/// An instant that converts to a [`DateTime`]: a `DateTime`, a `chrono::DateTime` in any time zone, or a
/// `std::time::SystemTime`. What takes an instant takes any of them: the key helpers of [`key`](crate::key)
/// and the time ranges of [`filter`](crate::filter).
///
/// A `DateTime` is in the service's range, 1601-01-01 to 9999-12-31, by construction; the others are checked,
/// and an instant outside it is a [`ValueErrorKind::DateTimeOutOfRange`] error, never clamped. A helper that
/// returns a value returns [`Checked<T>`](IntoDateTime::Checked): the value itself for a `DateTime`, and
/// `Result<T, ValueError>` for the others (a filter keeps the error and reports it when it is rendered).
///
/// ```
/// use table_model::{key, DateTime, IntoDateTime, RowKey};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let at = chrono::DateTime::parse_from_rfc3339("2024-01-02T03:04:05+02:00")?; // any time zone
/// assert_eq!(at.into_date_time()?, "2024-01-02T01:04:05Z".parse::<DateTime>()?);
///
/// let from_chrono: RowKey = key::chronological(at)?; // checked: a `Result`
/// let from_date_time: RowKey = key::chronological(at.into_date_time()?); // a `DateTime`: the key itself
/// assert_eq!(from_chrono, from_date_time);
///
/// let before_1601 = chrono::DateTime::parse_from_rfc3339("1600-12-31T23:59:59Z")?;
/// assert!(key::chronological::<RowKey, _>(before_1601).is_err());
/// # Ok(())
/// # }
/// ```
pub trait IntoDateTime: private::Sealed + Sized {
    /// What a helper gives for a value of type `T` made from this instant: `T` for a [`DateTime`], which is
    /// always in range, and `Result<T, ValueError>` for an instant that is checked.
    type Checked<T>;

    /// The instant as a [`DateTime`], truncated toward the past to the 100 ns tick.
    ///
    /// # Errors
    /// [`ValueErrorKind::DateTimeOutOfRange`] outside 1601-01-01 to 9999-12-31.
    fn into_date_time(self) -> Result<DateTime, ValueError>;

    /// `f` of the instant, [`Checked`](IntoDateTime::Checked).
    #[doc(hidden)]
    fn __map<T>(self, f: impl FnOnce(DateTime) -> T) -> Self::Checked<T>;

    /// `f` of two instants, [`Checked`](IntoDateTime::Checked).
    #[doc(hidden)]
    fn __map2<T>(self, other: Self, f: impl FnOnce(DateTime, DateTime) -> T) -> Self::Checked<T>;
}

mod private {
    pub trait Sealed {}
}

impl private::Sealed for DateTime {}

impl IntoDateTime for DateTime {
    type Checked<T> = T;

    fn into_date_time(self) -> Result<DateTime, ValueError> {
        Ok(self)
    }

    fn __map<T>(self, f: impl FnOnce(DateTime) -> T) -> T {
        f(self)
    }

    fn __map2<T>(self, other: Self, f: impl FnOnce(DateTime, DateTime) -> T) -> T {
        f(self, other)
    }
}

/// The `IntoDateTime` of a type converted with a check.
macro_rules! checked_into_date_time {
    ($(#[$doc:meta])* impl $(<$param:ident: $bound:path>)? for $ty:ty => |$value:ident| $convert:expr) => {
        impl$(<$param: $bound>)? private::Sealed for $ty {}

        $(#[$doc])*
        impl$(<$param: $bound>)? IntoDateTime for $ty {
            type Checked<T> = Result<T, ValueError>;

            fn into_date_time(self) -> Result<DateTime, ValueError> {
                let $value = self;
                $convert
            }

            fn __map<T>(self, f: impl FnOnce(DateTime) -> T) -> Result<T, ValueError> {
                self.into_date_time().map(f)
            }

            fn __map2<T>(self, other: Self, f: impl FnOnce(DateTime, DateTime) -> T) -> Result<T, ValueError> {
                Ok(f(self.into_date_time()?, other.into_date_time()?))
            }
        }
    };
}

checked_into_date_time! {
    /// The same instant in UTC, checked against the service's range.
    impl<Tz: chrono::TimeZone> for chrono::DateTime<Tz> => |value| DateTime::from_chrono(value.to_utc())
}

checked_into_date_time! {
    /// Checked against the service's range, as [`DateTime::try_from`] does.
    impl for SystemTime => |value| DateTime::try_from(value)
}

#[cfg(feature = "serde")]
impl serde::Serialize for DateTime {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for DateTime {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        DateTime::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    #[test]
    fn spec_constants() {
        assert_eq!(DateTime::MIN.to_string(), "1601-01-01T00:00:00.0000000Z");
        assert_eq!(DateTime::MAX.to_string(), "9999-12-31T23:59:59.9999999Z");
        assert_eq!(DateTime::UNIX_EPOCH.to_string(), "1970-01-01T00:00:00.0000000Z");
        assert_eq!(DateTime::MIN.to_chrono(), Utc.with_ymd_and_hms(1601, 1, 1, 0, 0, 0).unwrap());
        assert_eq!(DateTime::UNIX_EPOCH.to_chrono(), chrono::DateTime::<Utc>::UNIX_EPOCH);
    }

    #[test]
    fn range_boundaries() {
        assert!(DateTime::from_ticks(DATETIME_MIN_TICKS - 1).is_err());
        assert!(DateTime::from_ticks(DATETIME_MIN_TICKS).is_ok());
        assert!(DateTime::from_ticks(DATETIME_MAX_TICKS).is_ok());
        assert!(DateTime::from_ticks(DATETIME_MAX_TICKS + 1).is_err());
        assert!(DateTime::from_ticks(i64::MIN).is_err());
        assert!(DateTime::from_ticks(i64::MAX).is_err());
        let err = DateTime::parse("1600-12-31T23:59:59.9999999Z").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid Edm.DateTime: must be from 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, found 1600-12-31T23:59:59.9999999Z"
        );
        let before = Utc.with_ymd_and_hms(1600, 12, 31, 23, 59, 59).unwrap();
        assert!(DateTime::from_chrono(before).is_err());
        let after = Utc.with_ymd_and_hms(10000, 1, 1, 0, 0, 0).unwrap();
        assert!(DateTime::from_chrono(after).is_err());
    }

    #[test]
    fn parse_forms() {
        let t = |s: &str| DateTime::parse(s).map(|d| d.to_string());
        assert_eq!(t("2024-01-02T03:04:05Z").unwrap(), "2024-01-02T03:04:05.0000000Z");
        assert_eq!(t("2024-01-02T03:04:05").unwrap(), "2024-01-02T03:04:05.0000000Z");
        assert_eq!(t("2024-01-02T03:04:05.1Z").unwrap(), "2024-01-02T03:04:05.1000000Z");
        assert_eq!(t("2024-01-02T03:04:05.838661Z").unwrap(), "2024-01-02T03:04:05.8386610Z");
        assert_eq!(t("2024-01-02T03:04:05.123456789Z").unwrap(), "2024-01-02T03:04:05.1234567Z");
        assert_eq!(t("2024-01-02T03:04:05+02:00").unwrap(), "2024-01-02T01:04:05.0000000Z");
        assert_eq!(t("2024-01-02T23:04:05-02:30").unwrap(), "2024-01-03T01:34:05.0000000Z");
        assert_eq!(t("2024-02-29T00:00:00Z").unwrap(), "2024-02-29T00:00:00.0000000Z");
        // The service's form, read seven digits at once.
        assert_eq!(t("2024-01-02T03:04:05.1234567Z").unwrap(), "2024-01-02T03:04:05.1234567Z");
        assert_eq!(t("2024-01-02T03:04:05.0000001z").unwrap(), "2024-01-02T03:04:05.0000001Z");
        assert_eq!(t("9999-12-31T23:59:59.9999999Z").unwrap(), "9999-12-31T23:59:59.9999999Z");
        for at in 20..27 {
            for bad in [b'/', b':', b'a', b' ', b'.'] {
                let mut s = *b"2024-01-02T03:04:05.1234567Z";
                s[at] = bad;
                let s = std::str::from_utf8(&s).unwrap();
                assert!(matches!(DateTime::parse(s).unwrap_err().kind(), ValueErrorKind::DateTimeSyntax { .. }), "{s}");
            }
        }
        for bad in [
            "",
            "2024-01-02",
            "2024-01-02 03:04:05Z",
            "2024-13-02T03:04:05Z",
            "2023-02-29T00:00:00Z",
            "2024-01-32T00:00:00Z",
            "2024-01-02T24:00:00Z",
            "2024-01-02T03:04:05.Z",
            "2024-01-02T03:04:05ZZ",
            "2024-01-02T03:04:05+0200",
            "２024-01-02T03:04:05Z",
            "+2024-01-02T03:04:05Z",
        ] {
            assert!(matches!(DateTime::parse(bad).unwrap_err().kind(), ValueErrorKind::DateTimeSyntax { .. }), "{bad}");
        }
    }

    #[test]
    fn chrono_round_trip_and_truncation() {
        let c = Utc.with_ymd_and_hms(2024, 5, 6, 7, 8, 9).unwrap() + chrono::Duration::nanoseconds(123_456_789);
        let d = DateTime::from_chrono(c).unwrap();
        assert_eq!(
            d.to_chrono(),
            Utc.with_ymd_and_hms(2024, 5, 6, 7, 8, 9).unwrap() + chrono::Duration::nanoseconds(123_456_700)
        );
        assert_eq!(DateTime::from_chrono(d.to_chrono()).unwrap(), d);
        // Before the Unix epoch, truncation still goes to the earlier tick boundary of the sub-second part.
        let c = Utc.with_ymd_and_hms(1700, 1, 1, 0, 0, 0).unwrap() + chrono::Duration::nanoseconds(150);
        assert_eq!(DateTime::from_chrono(c).unwrap().ticks() % 10, 1);
    }

    #[test]
    fn system_time_is_truncated_toward_the_past_and_checked() {
        use std::time::{Duration, SystemTime};
        let epoch = SystemTime::UNIX_EPOCH;
        assert_eq!(DateTime::try_from(epoch).unwrap(), DateTime::UNIX_EPOCH);
        assert_eq!(DateTime::try_from(epoch + Duration::from_nanos(199)).unwrap().ticks(), UNIX_EPOCH_TICKS + 1);
        // Before the epoch, toward the past too: 150 ns before is 2 ticks before.
        assert_eq!(DateTime::try_from(epoch - Duration::from_nanos(150)).unwrap().ticks(), UNIX_EPOCH_TICKS - 2);
        assert_eq!(DateTime::try_from(epoch - Duration::from_secs(1)).unwrap().ticks(), UNIX_EPOCH_TICKS - 10_000_000);
        // The range's ends, as `from_chrono` has them.
        let first = epoch - Duration::from_secs(11_644_473_600);
        assert_eq!(DateTime::try_from(first).unwrap(), DateTime::MIN);
        let err = DateTime::try_from(first - Duration::from_nanos(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid Edm.DateTime: must be from 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, found \
             1600-12-31T23:59:59.999999999+00:00"
        );
        let last = epoch + Duration::from_secs(253_402_300_799) + Duration::from_nanos(999_999_999);
        assert_eq!(DateTime::try_from(last).unwrap(), DateTime::MAX);
        assert!(DateTime::try_from(last + Duration::from_nanos(1)).is_err());
        // Beyond what chrono holds: still a typed error, never a panic.
        if let Some(far) = epoch.checked_add(Duration::from_secs(i64::MAX as u64)) {
            let err = DateTime::try_from(far).unwrap_err();
            assert!(matches!(err.kind(), ValueErrorKind::DateTimeOutOfRange { .. }));
            assert!(err.to_string().ends_with("found 9223372036854775807 s after 1970-01-01T00:00:00Z"), "{err}");
        }
        if let Some(far) = epoch.checked_sub(Duration::new(i64::MAX as u64, 1)) {
            assert!(matches!(DateTime::try_from(far).unwrap_err().kind(), ValueErrorKind::DateTimeOutOfRange { .. }));
        }
    }

    #[test]
    fn into_date_time_takes_every_instant_type() {
        use std::time::{Duration, SystemTime};
        let t = DateTime::parse("2024-05-06T07:08:09.1234567Z").unwrap();
        assert_eq!(t.into_date_time().unwrap(), t);
        assert_eq!(t.to_chrono().into_date_time().unwrap(), t);
        // Any time zone: the same instant.
        let paris = chrono::DateTime::parse_from_rfc3339("2024-05-06T09:08:09.1234567+02:00").unwrap();
        assert_eq!(paris.into_date_time().unwrap(), t);
        let system = SystemTime::UNIX_EPOCH + Duration::from_nanos(1_714_979_289_123_456_700);
        assert_eq!(system.into_date_time().unwrap(), t);
        // A DateTime gives the value itself, the others a Result.
        let ticks: i64 = t.__map(DateTime::ticks);
        let checked: Result<i64, ValueError> = paris.__map(DateTime::ticks);
        assert_eq!(checked.unwrap(), ticks);
        let early = Utc.with_ymd_and_hms(1600, 1, 1, 0, 0, 0).unwrap();
        assert!(early.__map2(t.to_chrono(), |a, b| (a, b)).is_err());
        assert!(t.to_chrono().__map2(early, |a, b| (a, b)).is_err());
        assert_eq!(t.__map2(DateTime::MAX, |a, b| (a, b)), (t, DateTime::MAX));
    }

    #[test]
    fn encode_matches_chrono_across_the_range() {
        // A linear congruential walk over the whole range, and both ends.
        let span = (DATETIME_MAX_TICKS - DATETIME_MIN_TICKS) as u64 + 1;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let walk = (0..20_000).map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            DATETIME_MIN_TICKS + ((x >> 1) % span) as i64
        });
        for ticks in walk.chain([DATETIME_MIN_TICKS, DATETIME_MAX_TICKS, UNIX_EPOCH_TICKS, UNIX_EPOCH_TICKS - 1]) {
            let t = DateTime::from_ticks(ticks).unwrap();
            let nanos = t.to_chrono().format("%Y-%m-%dT%H:%M:%S%.9f").to_string();
            assert_eq!(t.to_string(), format!("{}Z", &nanos[..nanos.len() - 2]), "{ticks}");
            assert_eq!(DateTime::parse(&t.to_string()).unwrap(), t);
        }
    }

    #[test]
    fn days_round_trip() {
        for days in (-719_162..2_932_896).step_by(997) {
            let (y, m, d) = civil_from_days_unsigned((days + DAYS_0001_TO_1970) as u64);
            assert_eq!(days_from_civil(i64::from(y), i64::from(m), i64::from(d)), days);
        }
    }
}
