//! Shared access signatures the account owner hands out: a table SAS ([`TableSas`]) grants some operations
//! on one table, optionally within a range of keys; an account SAS ([`AccountSas`]) grants operations on the
//! account's Table service. Both are signed with the account key and give a [`SasToken`], which the client
//! takes as a credential, and a URL to share.
//!
//! Signing follows `docs/rules.md` §9.3, with the signed version [`SAS_VERSION`]. A table SAS's string to sign
//! is, one field a line and without a final line feed:
//!
//! ```text
//! sp \n st \n se \n /table/<account>/<table name lowercased> \n si \n sip \n spr \n sv \n spk \n srk \n epk \n erk
//! ```
//!
//! and an account SAS's, ending with a line feed:
//!
//! ```text
//! <account> \n sp \n ss \n srt \n st \n se \n sip \n spr \n sv \n
//! ```
//!
//! Fields not given are empty lines. The signature is the base64 HMAC-SHA256 of the string, keyed with the
//! decoded account key, as for Shared Key ([`auth::signature`](crate::auth::signature)). Times are signed in
//! whole seconds; key bounds ([`KeyBound`]) are signed as they are. In the token, every value is
//! percent-encoded as the Python SDK's `quote` encodes it: all but ASCII letters, digits, `-._~` and `/`, so
//! that the token is the SDK's byte for byte (a `/` of the signature stays as it is).
//!
//! ```
//! use table_model::sas::{AccountSas, AccountSasPermissions, AccountSasResourceTypes, TableSas, TableSasPermissions};
//! use table_model::{AccountKey, Endpoint, PartitionKey};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let key = AccountKey::development();
//! let expiry = chrono::DateTime::parse_from_rfc3339("2026-11-23T00:00:00Z")?.to_utc();
//!
//! // Read-only access to one tenant's entities of one table.
//! let tenant = PartitionKey::new("tenant 1")?;
//! let sas = TableSas::new("AuditLog".parse()?)
//!     .permissions(TableSasPermissions::READ)
//!     .expiry(expiry)
//!     .start_partition_key(tenant.clone())
//!     .end_partition_key(tenant);
//! let token = sas.sign("devstoreaccount1", &key)?;
//! assert_eq!(
//!     token.as_str(),
//!     "se=2026-11-23T00%3A00%3A00Z&sp=r&sv=2019-02-02&tn=AuditLog&spk=tenant%201&epk=tenant%201\
//!      &sig=w7WZkDUkMGPhp1/OVdkga8ie0nz/lnRmIKVexr64FYw%3D" // as the Python SDK signs it
//! );
//!
//! // Everything in the account's tables, as a URL the client takes.
//! let endpoint = Endpoint::parse("https://acme.table.core.windows.net")?;
//! let url = AccountSas::new(AccountSasResourceTypes::all(), AccountSasPermissions::all(), expiry).url(&endpoint, &key)?;
//! assert!(url.starts_with("https://acme.table.core.windows.net?se=2026-11-23T00%3A00%3A00Z&sp=rwdlacup&sv=2019-02-02"));
//! # Ok(())
//! # }
//! ```
//!
//! Layer: requests.

use crate::connection::{is_account_name, SasToken};
use crate::limits::{TIME_MAX_YEAR, TIME_MIN_YEAR};
use crate::percent::COMPONENT;
use chrono::{DateTime, Datelike as _, Utc};
use error::{SasError, SasErrorKind};
use percent_encoding::{utf8_percent_encode, AsciiSet};
use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

// The permission sets, the table SAS and the account SAS each have a file; what both kinds of SAS sign alike
// (times, addresses, protocols, the account name) and how a token is written stay here.
mod account;
pub(crate) mod error;
mod permissions;
mod policy;
mod table;

pub use account::AccountSas;
pub use permissions::{AccountSasPermissions, AccountSasResourceTypes, TableSasPermissions};
pub use table::{KeyBound, TableSas};

pub(crate) use policy::{decode_signed_identifiers, encode_signed_identifiers};
pub use policy::{AccessPolicy, PolicyId, SignedIdentifier};

/// The signed version (`sv`) of every SAS this module makes: the version the Python and JavaScript Table SDKs
/// sign with, and the one this crate's requests state ([`X_MS_VERSION`](crate::X_MS_VERSION)). The strings to
/// sign above are those of this version (an account SAS of 2020-12-06 or later has one more line).
pub const SAS_VERSION: &str = "2019-02-02";

/// Which protocols a SAS may be used over (`spr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SasProtocol {
    /// `https`: HTTPS only.
    Https,
    /// `https,http`: both (Azurite serves plain HTTP).
    HttpsAndHttp,
}

impl SasProtocol {
    /// The value of `spr`.
    pub fn as_str(self) -> &'static str {
        match self {
            SasProtocol::Https => "https",
            SasProtocol::HttpsAndHttp => "https,http",
        }
    }
}

/// The client addresses a SAS is accepted from (`sip`): one IPv4 address or an inclusive range.
///
/// ```
/// use std::net::Ipv4Addr;
/// use table_model::sas::SasIpRange;
/// let range = SasIpRange::range(Ipv4Addr::new(168, 1, 5, 60), Ipv4Addr::new(168, 1, 5, 70))?;
/// assert_eq!(range.to_string(), "168.1.5.60-168.1.5.70");
/// assert_eq!(SasIpRange::single(Ipv4Addr::new(10, 0, 0, 1)).to_string(), "10.0.0.1");
/// let err = SasIpRange::range(Ipv4Addr::new(10, 0, 0, 9), Ipv4Addr::new(10, 0, 0, 1)).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "invalid shared access signature: `sip` (IP range) must not start after its end, found 10.0.0.9-10.0.0.1"
/// );
/// # Ok::<(), table_model::SasError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SasIpRange {
    start: Ipv4Addr,
    end: Ipv4Addr,
}

impl SasIpRange {
    /// One address.
    pub fn single(address: Ipv4Addr) -> Self {
        SasIpRange { start: address, end: address }
    }

    /// The addresses from `start` to `end`, both included.
    ///
    /// # Errors
    /// [`SasErrorKind::InvalidIpRange`] when `start` comes after `end`.
    pub fn range(start: Ipv4Addr, end: Ipv4Addr) -> Result<Self, SasError> {
        if start > end {
            return Err(SasError::new(SasErrorKind::InvalidIpRange { start, end }));
        }
        Ok(SasIpRange { start, end })
    }
}

impl fmt::Display for SasIpRange {
    /// The value of `sip`: `a.b.c.d` or `a.b.c.d-e.f.g.h`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

impl FromStr for SasIpRange {
    type Err = SasError;

    /// Reads the value of `sip`: one IPv4 address, or two joined by `-` (`168.1.5.60-168.1.5.70`), without
    /// spaces; each address is four decimal numbers from 0 to 255 without leading zeros.
    ///
    /// ```
    /// use std::net::Ipv4Addr;
    /// use table_model::sas::SasIpRange;
    /// let range: SasIpRange = "168.1.5.60-168.1.5.70".parse()?;
    /// assert_eq!(range, SasIpRange::range(Ipv4Addr::new(168, 1, 5, 60), Ipv4Addr::new(168, 1, 5, 70))?);
    /// assert_eq!("10.0.0.1".parse::<SasIpRange>()?, SasIpRange::single(Ipv4Addr::new(10, 0, 0, 1)));
    /// assert_eq!(
    ///     "10.0.0.1/24".parse::<SasIpRange>().unwrap_err().to_string(),
    ///     "invalid shared access signature: `sip` (IP range) must be an IPv4 address or two joined by `-`, \
    ///      found \"10.0.0.1/24\""
    /// );
    /// # Ok::<(), table_model::SasError>(())
    /// ```
    ///
    /// # Errors
    /// [`SasErrorKind::IpRangeSyntax`] for anything else; [`SasErrorKind::InvalidIpRange`] for a range that
    /// starts after its end.
    fn from_str(value: &str) -> Result<Self, SasError> {
        let address = |text: &str| {
            text.parse::<Ipv4Addr>().map_err(|_| SasError::new(SasErrorKind::IpRangeSyntax { value: value.to_owned() }))
        };
        match value.split_once('-') {
            None => Ok(SasIpRange::single(address(value)?)),
            Some((start, end)) => SasIpRange::range(address(start)?, address(end)?),
        }
    }
}

/// Checks the account name a SAS is signed for, which goes into the string to sign as it is: one or more ASCII
/// letters, digits and `-`, the rule an endpoint's account name follows (`docs/rules.md` §9.3).
fn check_account(account: &str) -> Result<(), SasError> {
    if !is_account_name(account) {
        return Err(SasError::new(SasErrorKind::InvalidAccountName { account: account.to_owned() }));
    }
    Ok(())
}

/// A time as a SAS or stored access policy signs it: UTC, whole seconds (a fraction is dropped),
/// `YYYY-MM-DDThh:mm:ssZ`.
pub(crate) fn sas_time(time: &DateTime<Utc>, field: &'static str) -> Result<String, SasError> {
    let year = time.year();
    if !(TIME_MIN_YEAR..=TIME_MAX_YEAR).contains(&year) {
        return Err(SasError::new(SasErrorKind::TimeOutOfRange { field, year }));
    }
    Ok(time.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// The fields both kinds of SAS share, formatted as signed.
struct Common {
    start: String,
    expiry: String,
    ip: String,
    protocol: &'static str,
}

impl Common {
    fn new(
        start: Option<&DateTime<Utc>>,
        expiry: Option<&DateTime<Utc>>,
        ip: Option<SasIpRange>,
        protocol: Option<SasProtocol>,
    ) -> Result<Self, SasError> {
        let start_text = start.map(|t| sas_time(t, "st")).transpose()?.unwrap_or_default();
        let expiry_text = expiry.map(|t| sas_time(t, "se")).transpose()?.unwrap_or_default();
        if let (Some(s), Some(e)) = (start, expiry) {
            // Compared as signed, in whole seconds.
            if s.timestamp() >= e.timestamp() {
                return Err(SasError::new(SasErrorKind::ExpiryNotAfterStart {
                    start: start_text,
                    expiry: expiry_text,
                }));
            }
        }
        Ok(Common {
            start: start_text,
            expiry: expiry_text,
            ip: ip.map(|ip| ip.to_string()).unwrap_or_default(),
            protocol: protocol.map_or("", SasProtocol::as_str),
        })
    }
}

/// What a token's values keep as they are: RFC 3986's unreserved characters (as every query value, §7.4) and
/// `/`, which the Python SDK's `quote` leaves too, so that tokens are the SDK's byte for byte. Everything else is
/// percent-encoded, `?`, `#`, `&`, `=`, `+`, `%`, spaces and non-ASCII included.
const TOKEN_VALUE: &AsciiSet = &COMPONENT.remove(b'/');

/// A query string being written: `name=value` pairs, values percent-encoded ([`TOKEN_VALUE`]), empty ones left
/// out.
#[derive(Default)]
struct Query(String);

impl Query {
    fn push(&mut self, name: &str, value: &str) {
        if value.is_empty() {
            return;
        }
        if !self.0.is_empty() {
            self.0.push('&');
        }
        self.0.push_str(name);
        self.0.push('=');
        self.0.extend(utf8_percent_encode(value, TOKEN_VALUE));
    }

    fn into_token(self) -> SasToken {
        // Names are ASCII letters and every value is percent-encoded but for `/`: only query characters.
        SasToken::new(&self.0).expect("a percent-encoded query is a valid SAS token")
    }
}

#[cfg(test)]
mod tests;
