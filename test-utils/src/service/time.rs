//! The service's times: an entity's `Timestamp` (a [`DateTime`], 100 ns ticks as the service keeps them, written
//! with 7 fractional digits by its `Display`), the ETag made of it, and the `Date` header in RFC 1123's form.
//!
//! Layer: base.

use std::time::SystemTime;
use table_model::DateTime;

/// The time now, to the tick; a clock outside the service's range (1601 to 9999) reads as the Unix epoch.
pub(crate) fn now() -> DateTime {
    DateTime::try_from(SystemTime::now()).unwrap_or(DateTime::UNIX_EPOCH)
}

/// The ETag the service gives an entity written at `at`: `W/"datetime'2024-05-06T07%3A08%3A10.7654321Z'"`.
pub(crate) fn etag(at: DateTime) -> String {
    format!("W/\"datetime'{}'\"", at.to_string().replace(':', "%3A"))
}

/// `Mon, 06 May 2024 07:08:10 GMT`: the `Date` header (RFC 1123) of `at`, by chrono's calendar.
pub(crate) fn http_date(at: DateTime) -> String {
    at.to_chrono().format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime {
        DateTime::parse(text).unwrap()
    }

    #[test]
    fn the_date_header_is_rfc_1123() {
        assert_eq!(http_date(at("2024-05-06T07:08:10.9Z")), "Mon, 06 May 2024 07:08:10 GMT");
        assert_eq!(http_date(at("1994-11-06T08:49:37Z")), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(http_date(at("1601-01-01T00:00:00Z")), "Mon, 01 Jan 1601 00:00:00 GMT");
    }

    #[test]
    fn the_etag_is_the_timestamp_with_its_colons_encoded() {
        assert_eq!(etag(at("2024-05-06T07:08:10.7654321Z")), crate::entity::ETAG);
        assert_eq!(etag(at("2024-05-06T07:08:10Z")), "W/\"datetime'2024-05-06T07%3A08%3A10.0000000Z'\"");
    }

    #[test]
    fn now_is_after_the_unix_epoch() {
        assert!(now() > at("2020-01-01T00:00:00Z"));
    }
}
