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
//! decoded account key, as for Shared Key ([`auth::signature`]). Times are signed in whole seconds; key bounds
//! ([`KeyBound`]) are signed as they are. In the token, every value is percent-encoded as the Python SDK's
//! `quote` encodes it: all but ASCII letters, digits, `-._~` and `/`, so that the token is the SDK's byte for
//! byte (a `/` of the signature stays as it is).
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

use crate::auth;
use crate::connection::{is_account_name, AccountKey, Endpoint, SasToken};
use crate::key::{service_order, PartitionKey, RowKey};
use crate::limits::{TIME_MAX_YEAR, TIME_MIN_YEAR};
use crate::name::TableName;
use crate::percent::COMPONENT;
use chrono::{DateTime, Datelike as _, Utc};
use error::{SasError, SasErrorKind};
use percent_encoding::{utf8_percent_encode, AsciiSet};
use std::cmp::Ordering;
use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

pub(crate) mod error;
mod policy;

pub(crate) use policy::{decode_signed_identifiers, encode_signed_identifiers};
pub use policy::{AccessPolicy, PolicyId, SignedIdentifier};

/// The signed version (`sv`) of every SAS this module makes: the version the Python and JavaScript Table SDKs
/// sign with, and the one this crate's requests state ([`X_MS_VERSION`](crate::X_MS_VERSION)). The strings to
/// sign above are those of this version (an account SAS of 2020-12-06 or later has one more line).
pub const SAS_VERSION: &str = "2019-02-02";

/// Defines a set of SAS letters: constants, `|`, the letters in the service's order or in a given one, and
/// parsing.
macro_rules! letters {
    (
        $(#[$meta:meta])*
        $name:ident in $field:literal { $( $(#[$flag_meta:meta])* $flag:ident = $letter:literal, )* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name {
            /// Bit `i` set: the letter at `LETTERS[i]` is given.
            bits: u8,
            /// The order the letters are written in when it is not the service's: each letter's position in
            /// `LETTERS` plus one, 4 bits a letter from the lowest bits; 0 for the service's order. Two values
            /// are therefore equal exactly when they are written alike.
            order: u32,
        }

        impl $name {
            $( $(#[$flag_meta])* pub const $flag: $name = $name { bits: 1 << Self::position($letter), order: 0 }; )*

            /// The letters, in the service's order.
            const LETTERS: &'static str = concat!($($letter),*);

            const fn position(letter: char) -> u32 {
                let mut i = 0;
                while Self::LETTERS.as_bytes()[i] != letter as u8 {
                    i += 1;
                }
                i as u32
            }

            /// None.
            pub const fn empty() -> Self {
                $name { bits: 0, order: 0 }
            }

            /// Every one, in the service's order.
            pub const fn all() -> Self {
                $name { bits: ((1u16 << Self::LETTERS.len()) - 1) as u8, order: 0 }
            }

            /// Whether there is none.
            pub const fn is_empty(self) -> bool {
                self.bits == 0
            }

            /// Whether every one of `other` is in `self`.
            pub const fn contains(self, other: Self) -> bool {
                self.bits & other.bits == other.bits
            }

            /// From the letters, in any order; they are written in the service's order. The same as
            /// [`str::parse`].
            ///
            /// # Errors
            /// [`SasErrorKind::UnknownLetter`] for a letter that is not one of these, and
            /// [`SasErrorKind::RepeatedLetter`] for one given twice, each with the letter and its byte index.
            pub fn parse(letters: &str) -> Result<Self, SasError> {
                Self::read(letters, false)
            }

            /// From the letters, written in the order given (some tools sign `dr` where the service's order is
            /// `rd`): the same letters as [`parse`](Self::parse) takes, each at most once. The order is kept
            /// until the value is combined with `|`, which writes the service's order.
            ///
            /// # Errors
            /// As [`parse`](Self::parse).
            pub fn in_order(letters: &str) -> Result<Self, SasError> {
                Self::read(letters, true)
            }

            fn read(letters: &str, keep_order: bool) -> Result<Self, SasError> {
                let (mut bits, mut order, mut shift, mut ascending) = (0u8, 0u32, 0, true);
                for (index, letter) in letters.char_indices() {
                    // The letters are ASCII: a byte index in `LETTERS` is a position.
                    let Some(i) = Self::LETTERS.find(letter) else {
                        let allowed = Self::LETTERS;
                        return Err(SasError::new(SasErrorKind::UnknownLetter { field: $field, letter, index, allowed }));
                    };
                    if bits & (1 << i) != 0 {
                        return Err(SasError::new(SasErrorKind::RepeatedLetter { field: $field, letter, index }));
                    }
                    ascending &= bits >> i == 0;
                    bits |= 1 << i;
                    order |= (i as u32 + 1) << shift;
                    shift += 4;
                }
                Ok($name { bits, order: if keep_order && !ascending { order } else { 0 } })
            }
        }

        impl std::str::FromStr for $name {
            type Err = SasError;
            /// As [`parse`](Self::parse).
            fn from_str(letters: &str) -> Result<Self, SasError> {
                Self::parse(letters)
            }
        }

        impl std::ops::BitOr for $name {
            type Output = Self;
            /// Both sets, written in the service's order.
            fn bitor(self, other: Self) -> Self {
                $name { bits: self.bits | other.bits, order: 0 }
            }
        }

        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, other: Self) {
                *self = *self | other;
            }
        }

        impl fmt::Display for $name {
            /// The letters, in the service's order or in the one given to [`in_order`](Self::in_order).
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let letters = Self::LETTERS.as_bytes();
                if self.order == 0 {
                    for (i, &l) in letters.iter().enumerate() {
                        if self.bits & (1 << i) != 0 {
                            fmt::Write::write_char(f, char::from(l))?;
                        }
                    }
                } else {
                    let mut order = self.order;
                    while order != 0 {
                        fmt::Write::write_char(f, char::from(letters[(order & 0xf) as usize - 1]))?;
                        order >>= 4;
                    }
                }
                Ok(())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}(\"{self}\")", stringify!($name))
            }
        }
    };
}

letters! {
    /// What a table SAS or a stored access policy allows, written in the service's order `raud` (or, from
    /// [`in_order`](Self::in_order), in the order given).
    ///
    /// ```
    /// use table_model::sas::TableSasPermissions;
    /// let p = TableSasPermissions::DELETE | TableSasPermissions::READ;
    /// assert_eq!(p.to_string(), "rd");
    /// assert_eq!(TableSasPermissions::all().to_string(), "raud");
    /// assert_eq!(TableSasPermissions::parse("dr")?, p);
    /// assert_eq!("dr".parse::<TableSasPermissions>()?, p);
    /// assert_eq!(
    ///     TableSasPermissions::parse("rw").unwrap_err().to_string(),
    ///     "invalid shared access signature: `sp` (permissions) has `w` at index 1, which is not one of `raud`"
    /// );
    ///
    /// // Signed as given, for a token another tool made with `sp=dr`.
    /// let as_given = TableSasPermissions::in_order("dr")?;
    /// assert_eq!(as_given.to_string(), "dr");
    /// assert_ne!(as_given, p);
    /// assert!(as_given.contains(TableSasPermissions::READ));
    /// # Ok::<(), table_model::SasError>(())
    /// ```
    TableSasPermissions in "sp" {
        /// `r`: get entities and query them.
        READ = 'r',
        /// `a`: insert entities, and insert-or-merge / insert-or-replace (with [`UPDATE`](Self::UPDATE)).
        ADD = 'a',
        /// `u`: update entities (merge, replace), and upserts (with [`ADD`](Self::ADD)).
        UPDATE = 'u',
        /// `d`: delete entities.
        DELETE = 'd',
    }
}

letters! {
    /// What an account SAS allows, written in the service's order `rwdlacup` (or, from
    /// [`in_order`](Self::in_order), in the order given). These are every letter the service defines for an
    /// account SAS of version [`SAS_VERSION`]; later versions add letters for the Blob service only
    /// (`docs/rules.md` §9.3).
    ///
    /// ```
    /// use table_model::sas::AccountSasPermissions;
    /// let p = AccountSasPermissions::LIST | AccountSasPermissions::READ | AccountSasPermissions::CREATE;
    /// assert_eq!(p.to_string(), "rlc");
    /// assert_eq!(AccountSasPermissions::all().to_string(), "rwdlacup");
    /// assert_eq!(AccountSasPermissions::in_order("lr")?.to_string(), "lr");
    /// # Ok::<(), table_model::SasError>(())
    /// ```
    AccountSasPermissions in "sp" {
        /// `r`: read entities and query them.
        READ = 'r',
        /// `w`: write (insert, update, upsert) entities.
        WRITE = 'w',
        /// `d`: delete tables and entities.
        DELETE = 'd',
        /// `l`: list tables.
        LIST = 'l',
        /// `a`: add entities.
        ADD = 'a',
        /// `c`: create tables.
        CREATE = 'c',
        /// `u`: update entities.
        UPDATE = 'u',
        /// `p`: process, which the service defines for queue messages: it grants nothing on tables, but the
        /// Python SDK signs it among all permissions (`rwdlacup`), and the service takes it.
        PROCESS = 'p',
    }
}

letters! {
    /// Which resources an account SAS reaches, written in the service's order `sco`.
    ///
    /// ```
    /// use table_model::sas::AccountSasResourceTypes;
    /// let t = AccountSasResourceTypes::OBJECT | AccountSasResourceTypes::SERVICE;
    /// assert_eq!(t.to_string(), "so");
    /// assert_eq!("os".parse::<AccountSasResourceTypes>()?, t);
    /// # Ok::<(), table_model::SasError>(())
    /// ```
    AccountSasResourceTypes in "srt" {
        /// `s`: service-level operations (properties, stats, listing tables).
        SERVICE = 's',
        /// `c`: tables (create, delete).
        CONTAINER = 'c',
        /// `o`: entities.
        OBJECT = 'o',
    }
}

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

/// A bound of a table SAS's key range (`spk`, `srk`, `epk`, `erk`): a string the service compares keys with,
/// not a key it stores. Every [`PartitionKey`] and [`RowKey`] is one (with [`From`]), and so is any text
/// without a control character, `/`, `\`, `#` and `?` included, which keys cannot hold but the service and the
/// official SDKs sign as bounds (`docs/rules.md` §9.3). A bound is signed as it is and percent-encoded in the
/// token, as the Python SDK encodes it.
///
/// Control characters are refused: no key holds one (§2.1), and a line feed in a bound would make two
/// different ranges sign the same string, whose fields are lines.
///
/// ```
/// use table_model::sas::KeyBound;
/// use table_model::PartitionKey;
/// let bound = KeyBound::new("logs/2026?#1")?;
/// assert_eq!(bound.as_str(), "logs/2026?#1");
/// assert_eq!(KeyBound::from(PartitionKey::new("tenant 1")?).as_str(), "tenant 1");
/// assert_eq!(
///     KeyBound::new("a\nb").unwrap_err().to_string(),
///     "invalid shared access signature key bound: character U+000A at index 1 is not allowed (a control \
///      character, which no key holds)"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct KeyBound(String);

impl KeyBound {
    /// Checks a bound.
    ///
    /// # Errors
    /// [`SasErrorKind::KeyBoundCharacter`] for a control character (U+0000 to U+001F, U+007F to U+009F), with
    /// its byte index.
    pub fn new(bound: impl Into<String>) -> Result<Self, SasError> {
        let bound = bound.into();
        if let Some((index, ch)) = bound.char_indices().find(|(_, c)| c.is_control()) {
            return Err(SasError::new(SasErrorKind::KeyBoundCharacter { ch, index }));
        }
        Ok(KeyBound(bound))
    }

    /// The bound, as signed.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<PartitionKey> for KeyBound {
    fn from(key: PartitionKey) -> Self {
        KeyBound(key.into_string())
    }
}

impl From<RowKey> for KeyBound {
    fn from(key: RowKey) -> Self {
        KeyBound(key.into_string())
    }
}

impl From<&PartitionKey> for KeyBound {
    fn from(key: &PartitionKey) -> Self {
        KeyBound(key.as_str().to_owned())
    }
}

impl From<&RowKey> for KeyBound {
    fn from(key: &RowKey) -> Self {
        KeyBound(key.as_str().to_owned())
    }
}

impl FromStr for KeyBound {
    type Err = SasError;
    fn from_str(bound: &str) -> Result<Self, SasError> {
        KeyBound::new(bound)
    }
}

impl AsRef<str> for KeyBound {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for KeyBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for KeyBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
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

/// A service SAS for one table: which operations (`sp`), when (`st`, `se`), from where (`sip`, `spr`), under
/// which stored access policy (`si`), and on which keys (`spk`/`srk` to `epk`/`erk`, inclusive).
///
/// The table name is signed lowercased (`/table/<account>/<name>`) and given as it is in `tn`. Key bounds are
/// [`KeyBound`]s (any key, or text a key cannot hold, such as `logs/2026`) and come in pairs: a start RowKey
/// needs a start PartitionKey, an end RowKey an end PartitionKey; with both PartitionKeys equal and both
/// RowKeys equal the SAS reaches one entity. The service enforces the key range and `sip`; Azurite does not
/// (`docs/rules.md` §9.3).
///
/// ```
/// use table_model::sas::{SasProtocol, TableSas, TableSasPermissions};
/// use table_model::AccountKey;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let start = chrono::DateTime::parse_from_rfc3339("2026-11-22T00:00:00.75Z")?.to_utc();
/// let sas = TableSas::new("AuditLog".parse()?)
///     .permissions(TableSasPermissions::ADD | TableSasPermissions::UPDATE)
///     .start(start)
///     .expiry(start + chrono::Duration::hours(1))
///     .protocol(SasProtocol::Https);
/// assert_eq!(
///     sas.string_to_sign("devstoreaccount1")?,
///     "au\n2026-11-22T00:00:00Z\n2026-11-22T01:00:00Z\n/table/devstoreaccount1/auditlog\n\n\nhttps\n2019-02-02\n\n\n\n"
/// );
/// let token = sas.sign("devstoreaccount1", &AccountKey::development())?;
/// assert!(token.as_str().starts_with("st=2026-11-22T00%3A00%3A00Z&se=2026-11-22T01%3A00%3A00Z&sp=au&spr=https"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct TableSas {
    table: TableName,
    permissions: TableSasPermissions,
    start: Option<DateTime<Utc>>,
    expiry: Option<DateTime<Utc>>,
    ip: Option<SasIpRange>,
    protocol: Option<SasProtocol>,
    policy: Option<PolicyId>,
    start_partition_key: Option<KeyBound>,
    start_row_key: Option<KeyBound>,
    end_partition_key: Option<KeyBound>,
    end_row_key: Option<KeyBound>,
}

impl TableSas {
    /// A SAS for this table, with nothing granted yet.
    pub fn new(table: TableName) -> Self {
        TableSas {
            table,
            permissions: TableSasPermissions::empty(),
            start: None,
            expiry: None,
            ip: None,
            protocol: None,
            policy: None,
            start_partition_key: None,
            start_row_key: None,
            end_partition_key: None,
            end_row_key: None,
        }
    }

    /// What it allows (`sp`). Required, unless a stored access policy named with [`policy`](Self::policy)
    /// holds the permissions.
    #[must_use]
    pub fn permissions(mut self, permissions: TableSasPermissions) -> Self {
        self.permissions = permissions;
        self
    }

    /// When it becomes valid (`st`), in whole seconds; by default when the service receives each request.
    /// A `chrono::DateTime<Utc>` or a [`table_model::DateTime`](crate::DateTime).
    #[must_use]
    pub fn start(mut self, start: impl Into<DateTime<Utc>>) -> Self {
        self.start = Some(start.into());
        self
    }

    /// When it stops being valid (`se`), in whole seconds. Required, unless the stored access policy holds it.
    /// A `chrono::DateTime<Utc>` or a [`table_model::DateTime`](crate::DateTime).
    #[must_use]
    pub fn expiry(mut self, expiry: impl Into<DateTime<Utc>>) -> Self {
        self.expiry = Some(expiry.into());
        self
    }

    /// The client addresses it is accepted from (`sip`).
    #[must_use]
    pub fn ip(mut self, range: SasIpRange) -> Self {
        self.ip = Some(range);
        self
    }

    /// The protocols it may be used over (`spr`); by default both.
    #[must_use]
    pub fn protocol(mut self, protocol: SasProtocol) -> Self {
        self.protocol = Some(protocol);
        self
    }

    /// The stored access policy of the table whose start, expiry and permissions apply (`si`): removing or
    /// changing the policy revokes or changes every SAS that names it.
    #[must_use]
    pub fn policy(mut self, id: PolicyId) -> Self {
        self.policy = Some(id);
        self
    }

    /// The first PartitionKey it reaches, included (`spk`): a [`PartitionKey`] or any [`KeyBound`].
    #[must_use]
    pub fn start_partition_key(mut self, bound: impl Into<KeyBound>) -> Self {
        self.start_partition_key = Some(bound.into());
        self
    }

    /// The first RowKey it reaches in the start PartitionKey, included (`srk`): a [`RowKey`] or any
    /// [`KeyBound`]; needs [`start_partition_key`](Self::start_partition_key).
    #[must_use]
    pub fn start_row_key(mut self, bound: impl Into<KeyBound>) -> Self {
        self.start_row_key = Some(bound.into());
        self
    }

    /// The last PartitionKey it reaches, included (`epk`): a [`PartitionKey`] or any [`KeyBound`].
    #[must_use]
    pub fn end_partition_key(mut self, bound: impl Into<KeyBound>) -> Self {
        self.end_partition_key = Some(bound.into());
        self
    }

    /// The last RowKey it reaches in the end PartitionKey, included (`erk`): a [`RowKey`] or any
    /// [`KeyBound`]; needs [`end_partition_key`](Self::end_partition_key).
    #[must_use]
    pub fn end_row_key(mut self, bound: impl Into<KeyBound>) -> Self {
        self.end_row_key = Some(bound.into());
        self
    }

    /// The fields as signed, after checking how they combine.
    fn fields(&self) -> Result<(Common, [&str; 5]), SasError> {
        if self.policy.is_none() {
            if self.permissions.is_empty() {
                return Err(SasError::new(SasErrorKind::NoPermission));
            }
            if self.expiry.is_none() {
                return Err(SasError::new(SasErrorKind::NoExpiry));
            }
        }
        if self.start_row_key.is_some() && self.start_partition_key.is_none() {
            return Err(SasError::new(SasErrorKind::RowKeyWithoutPartitionKey { row: "srk", partition: "spk" }));
        }
        if self.end_row_key.is_some() && self.end_partition_key.is_none() {
            return Err(SasError::new(SasErrorKind::RowKeyWithoutPartitionKey { row: "erk", partition: "epk" }));
        }
        self.check_key_range()?;
        let common = Common::new(self.start.as_ref(), self.expiry.as_ref(), self.ip, self.protocol)?;
        let keys = [
            self.policy.as_ref().map_or("", PolicyId::as_str),
            self.start_partition_key.as_ref().map_or("", KeyBound::as_str),
            self.start_row_key.as_ref().map_or("", KeyBound::as_str),
            self.end_partition_key.as_ref().map_or("", KeyBound::as_str),
            self.end_row_key.as_ref().map_or("", KeyBound::as_str),
        ];
        Ok((common, keys))
    }

    /// Refuses a key range that reaches no entity: a start PartitionKey after the end one, or equal ones with a
    /// start RowKey after the end one (`docs/rules.md` §9.3). A missing RowKey bound leaves its side open.
    fn check_key_range(&self) -> Result<(), SasError> {
        let (Some(spk), Some(epk)) = (&self.start_partition_key, &self.end_partition_key) else {
            return Ok(());
        };
        let empty = match service_order(spk.as_str(), epk.as_str()) {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => match (&self.start_row_key, &self.end_row_key) {
                (Some(srk), Some(erk)) => service_order(srk.as_str(), erk.as_str()) == Ordering::Greater,
                _ => false,
            },
        };
        if !empty {
            return Ok(());
        }
        let bound = |pk: &KeyBound, rk: Option<&KeyBound>, names: (&str, &str)| match rk {
            Some(rk) => format!("`{}` {:?} / `{}` {:?}", names.0, pk.as_str(), names.1, rk.as_str()),
            None => format!("`{}` {:?}", names.0, pk.as_str()),
        };
        Err(SasError::new(SasErrorKind::EmptyKeyRange {
            start: bound(spk, self.start_row_key.as_ref(), ("spk", "srk")),
            end: bound(epk, self.end_row_key.as_ref(), ("epk", "erk")),
        }))
    }

    /// The string to sign for `account` (see the [module](self) docs).
    ///
    /// # Errors
    /// As [`sign`](Self::sign).
    pub fn string_to_sign(&self, account: &str) -> Result<String, SasError> {
        check_account(account)?;
        let (c, [si, spk, srk, epk, erk]) = self.fields()?;
        let permissions = self.permissions.to_string();
        let table = self.table.as_str().to_ascii_lowercase();
        Ok([
            permissions.as_str(),
            &c.start,
            &c.expiry,
            &format!("/table/{account}/{table}"),
            si,
            &c.ip,
            c.protocol,
            SAS_VERSION,
            spk,
            srk,
            epk,
            erk,
        ]
        .join("\n"))
    }

    /// The signed token, its parameters in the order `st se sp sip spr sv si tn spk srk epk erk sig` (the
    /// Python SDK's), values percent-encoded (a space as `%20`).
    ///
    /// # Errors
    /// [`SasErrorKind::InvalidAccountName`];
    /// [`SasErrorKind::NoPermission`] or [`SasErrorKind::NoExpiry`] without a stored policy to hold them;
    /// [`SasErrorKind::ExpiryNotAfterStart`]; [`SasErrorKind::TimeOutOfRange`];
    /// [`SasErrorKind::RowKeyWithoutPartitionKey`]; [`SasErrorKind::EmptyKeyRange`].
    pub fn sign(&self, account: &str, key: &AccountKey) -> Result<SasToken, SasError> {
        let signature = auth::signature(key, &self.string_to_sign(account)?);
        let (c, [si, spk, srk, epk, erk]) = self.fields()?;
        let mut q = Query::default();
        q.push("st", &c.start);
        q.push("se", &c.expiry);
        q.push("sp", &self.permissions.to_string());
        q.push("sip", &c.ip);
        q.push("spr", c.protocol);
        q.push("sv", SAS_VERSION);
        q.push("si", si);
        q.push("tn", self.table.as_str());
        q.push("spk", spk);
        q.push("srk", srk);
        q.push("epk", epk);
        q.push("erk", erk);
        q.push("sig", &signature);
        Ok(q.into_token())
    }

    /// A URL to share: the endpoint with the signed token as its query, signed for the endpoint's account.
    /// [`TableServiceClient::new`](crate::client::TableServiceClient::new) takes it as it is; its
    /// `table_client` then reaches the table.
    ///
    /// # Errors
    /// As [`sign`](Self::sign).
    pub fn url(&self, endpoint: &Endpoint, key: &AccountKey) -> Result<String, SasError> {
        Ok(format!("{}?{}", endpoint.url(), self.sign(endpoint.account(), key)?.as_str()))
    }
}

/// An account SAS for the Table service (`ss=t`): which resource types (`srt`), which operations (`sp`),
/// when (`st`, `se`) and from where (`sip`, `spr`).
///
/// ```
/// use table_model::sas::{AccountSas, AccountSasPermissions as P, AccountSasResourceTypes as R};
/// use table_model::AccountKey;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let expiry = chrono::DateTime::parse_from_rfc3339("2026-11-23T00:00:00Z")?.to_utc();
/// let sas = AccountSas::new(R::SERVICE | R::OBJECT, P::READ | P::LIST, expiry);
/// assert_eq!(
///     sas.string_to_sign("devstoreaccount1")?,
///     "devstoreaccount1\nrl\nt\nso\n\n2026-11-23T00:00:00Z\n\n\n2019-02-02\n"
/// );
/// let token = sas.sign("devstoreaccount1", &AccountKey::development())?;
/// assert!(token.as_str().starts_with("se=2026-11-23T00%3A00%3A00Z&sp=rl&sv=2019-02-02&ss=t&srt=so&sig="));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct AccountSas {
    resource_types: AccountSasResourceTypes,
    permissions: AccountSasPermissions,
    start: Option<DateTime<Utc>>,
    expiry: DateTime<Utc>,
    ip: Option<SasIpRange>,
    protocol: Option<SasProtocol>,
}

impl AccountSas {
    /// An account SAS for these resource types and permissions, valid until `expiry` (in whole seconds; a
    /// `chrono::DateTime<Utc>` or a [`table_model::DateTime`](crate::DateTime)).
    pub fn new(
        resource_types: AccountSasResourceTypes,
        permissions: AccountSasPermissions,
        expiry: impl Into<DateTime<Utc>>,
    ) -> Self {
        AccountSas { resource_types, permissions, start: None, expiry: expiry.into(), ip: None, protocol: None }
    }

    /// When it becomes valid (`st`), in whole seconds; by default when the service receives each request.
    /// A `chrono::DateTime<Utc>` or a [`table_model::DateTime`](crate::DateTime).
    #[must_use]
    pub fn start(mut self, start: impl Into<DateTime<Utc>>) -> Self {
        self.start = Some(start.into());
        self
    }

    /// The client addresses it is accepted from (`sip`).
    #[must_use]
    pub fn ip(mut self, range: SasIpRange) -> Self {
        self.ip = Some(range);
        self
    }

    /// The protocols it may be used over (`spr`); by default both.
    #[must_use]
    pub fn protocol(mut self, protocol: SasProtocol) -> Self {
        self.protocol = Some(protocol);
        self
    }

    fn fields(&self) -> Result<Common, SasError> {
        if self.permissions.is_empty() {
            return Err(SasError::new(SasErrorKind::NoAccountPermission));
        }
        if self.resource_types.is_empty() {
            return Err(SasError::new(SasErrorKind::NoResourceType));
        }
        Common::new(self.start.as_ref(), Some(&self.expiry), self.ip, self.protocol)
    }

    /// The string to sign for `account` (see the [module](self) docs).
    ///
    /// # Errors
    /// As [`sign`](Self::sign).
    pub fn string_to_sign(&self, account: &str) -> Result<String, SasError> {
        check_account(account)?;
        let c = self.fields()?;
        let (permissions, resource_types) = (self.permissions.to_string(), self.resource_types.to_string());
        Ok([account, &permissions, "t", &resource_types, &c.start, &c.expiry, &c.ip, c.protocol, SAS_VERSION, ""]
            .join("\n"))
    }

    /// The signed token, its parameters in the order `st se sp sip spr sv ss srt sig` (the Python SDK's).
    ///
    /// # Errors
    /// [`SasErrorKind::InvalidAccountName`], [`SasErrorKind::NoAccountPermission`],
    /// [`SasErrorKind::NoResourceType`], [`SasErrorKind::ExpiryNotAfterStart`],
    /// [`SasErrorKind::TimeOutOfRange`].
    pub fn sign(&self, account: &str, key: &AccountKey) -> Result<SasToken, SasError> {
        let signature = auth::signature(key, &self.string_to_sign(account)?);
        let c = self.fields()?;
        let mut q = Query::default();
        q.push("st", &c.start);
        q.push("se", &c.expiry);
        q.push("sp", &self.permissions.to_string());
        q.push("sip", &c.ip);
        q.push("spr", c.protocol);
        q.push("sv", SAS_VERSION);
        q.push("ss", "t");
        q.push("srt", &self.resource_types.to_string());
        q.push("sig", &signature);
        Ok(q.into_token())
    }

    /// A URL to share: the endpoint with the signed token as its query, signed for the endpoint's account;
    /// [`TableServiceClient::new`](crate::client::TableServiceClient::new) takes it as it is.
    ///
    /// # Errors
    /// As [`sign`](Self::sign).
    pub fn url(&self, endpoint: &Endpoint, key: &AccountKey) -> Result<String, SasError> {
        Ok(format!("{}?{}", endpoint.url(), self.sign(endpoint.account(), key)?.as_str()))
    }
}

#[cfg(test)]
mod tests;
