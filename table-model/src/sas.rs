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
//! decoded account key, as for Shared Key ([`auth::signature`]). Times are signed in
//! whole seconds; key bounds are signed as they are and percent-encoded in the token.
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
//!      &sig=w7WZkDUkMGPhp1%2FOVdkga8ie0nz%2FlnRmIKVexr64FYw%3D" // as the Python SDK signs it
//! );
//!
//! // Everything in the account's tables, as a URL the client takes.
//! let endpoint = Endpoint::parse("https://acme.table.core.windows.net")?;
//! let url = AccountSas::new(AccountSasResourceTypes::all(), AccountSasPermissions::all(), expiry).url(&endpoint, &key)?;
//! assert!(url.starts_with("https://acme.table.core.windows.net?se=2026-11-23T00%3A00%3A00Z&sp=rwdlacu&sv=2019-02-02"));
//! # Ok(())
//! # }
//! ```

use crate::auth;
use crate::connection::{AccountKey, Endpoint, SasToken};
use crate::error::{SasError, SasErrorKind};
use crate::key::{service_order, PartitionKey, RowKey};
use crate::name::TableName;
use crate::request::encode_component;
use chrono::{DateTime, Datelike as _, Utc};
use std::cmp::Ordering;
use std::fmt;
use std::net::Ipv4Addr;

mod policy;

pub(crate) use policy::{decode_signed_identifiers, encode_signed_identifiers};
pub use policy::{AccessPolicy, PolicyId, SignedIdentifier};

/// The signed version (`sv`) of every SAS this module makes: the version the Python and JavaScript Table SDKs
/// sign with, and the one this crate's requests state ([`X_MS_VERSION`](crate::X_MS_VERSION)). The strings to
/// sign above are those of this version (an account SAS of 2020-12-06 or later has one more line).
pub const SAS_VERSION: &str = "2019-02-02";

/// Defines a set of SAS letters: constants, `|`, the letters in their canonical order, and parsing.
macro_rules! letters {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$flag_meta:meta])* $flag:ident = $letter:literal, )* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name(u8);

        impl $name {
            $( $(#[$flag_meta])* pub const $flag: $name = $name(1 << Self::position($letter)); )*

            /// The letters, in the service's canonical order.
            const LETTERS: &'static [u8] = &[$($letter),*];

            const fn position(letter: u8) -> u32 {
                let mut i = 0;
                while Self::LETTERS[i] != letter {
                    i += 1;
                }
                i as u32
            }

            /// None.
            pub const fn empty() -> Self {
                $name(0)
            }

            /// Every one.
            pub const fn all() -> Self {
                $name(((1u16 << Self::LETTERS.len()) - 1) as u8)
            }

            /// Whether there is none.
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }

            /// Whether every one of `other` is in `self`.
            pub const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }

            /// From the letters, in any order; `None` for a letter that is not one of these or given twice.
            pub fn parse(letters: &str) -> Option<Self> {
                let mut out = 0u8;
                for b in letters.bytes() {
                    let i = Self::LETTERS.iter().position(|&l| l == b)?;
                    if out & (1 << i) != 0 {
                        return None;
                    }
                    out |= 1 << i;
                }
                Some($name(out))
            }
        }

        impl std::ops::BitOr for $name {
            type Output = Self;
            fn bitor(self, other: Self) -> Self {
                $name(self.0 | other.0)
            }
        }

        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, other: Self) {
                self.0 |= other.0;
            }
        }

        impl fmt::Display for $name {
            /// The letters in the service's canonical order.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                for (i, &l) in Self::LETTERS.iter().enumerate() {
                    if self.0 & (1 << i) != 0 {
                        fmt::Write::write_char(f, char::from(l))?;
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
    /// What a table SAS or a stored access policy allows, written in the service's order `raud`.
    ///
    /// ```
    /// use table_model::sas::TableSasPermissions;
    /// let p = TableSasPermissions::DELETE | TableSasPermissions::READ;
    /// assert_eq!(p.to_string(), "rd");
    /// assert_eq!(TableSasPermissions::all().to_string(), "raud");
    /// assert_eq!(TableSasPermissions::parse("dr"), Some(p));
    /// assert_eq!(TableSasPermissions::parse("rw"), None);
    /// ```
    TableSasPermissions {
        /// `r`: get entities and query them.
        READ = b'r',
        /// `a`: insert entities, and insert-or-merge / insert-or-replace (with [`UPDATE`](Self::UPDATE)).
        ADD = b'a',
        /// `u`: update entities (merge, replace), and upserts (with [`ADD`](Self::ADD)).
        UPDATE = b'u',
        /// `d`: delete entities.
        DELETE = b'd',
    }
}

letters! {
    /// What an account SAS allows, written in the service's order `rwdlacu`.
    ///
    /// ```
    /// use table_model::sas::AccountSasPermissions;
    /// let p = AccountSasPermissions::LIST | AccountSasPermissions::READ | AccountSasPermissions::CREATE;
    /// assert_eq!(p.to_string(), "rlc");
    /// ```
    AccountSasPermissions {
        /// `r`: read entities and query them.
        READ = b'r',
        /// `w`: write (insert, update, upsert) entities.
        WRITE = b'w',
        /// `d`: delete tables and entities.
        DELETE = b'd',
        /// `l`: list tables.
        LIST = b'l',
        /// `a`: add entities.
        ADD = b'a',
        /// `c`: create tables.
        CREATE = b'c',
        /// `u`: update entities.
        UPDATE = b'u',
    }
}

letters! {
    /// Which resources an account SAS reaches, written in the service's order `sco`.
    ///
    /// ```
    /// use table_model::sas::AccountSasResourceTypes;
    /// let t = AccountSasResourceTypes::OBJECT | AccountSasResourceTypes::SERVICE;
    /// assert_eq!(t.to_string(), "so");
    /// ```
    AccountSasResourceTypes {
        /// `s`: service-level operations (properties, stats, listing tables).
        SERVICE = b's',
        /// `c`: tables (create, delete).
        CONTAINER = b'c',
        /// `o`: entities.
        OBJECT = b'o',
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

/// A time as a SAS or stored access policy signs it: UTC, whole seconds (a fraction is dropped),
/// `YYYY-MM-DDThh:mm:ssZ`.
pub(crate) fn sas_time(time: &DateTime<Utc>, field: &'static str) -> Result<String, SasError> {
    let year = time.year();
    if !(1..=9999).contains(&year) {
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

/// A query string being written: `name=value` pairs, values percent-encoded, empty ones left out.
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
        self.0.push_str(&encode_component(value));
    }

    fn into_token(self) -> SasToken {
        // Names are ASCII letters and every value is percent-encoded: only query characters.
        SasToken::new(&self.0).expect("a percent-encoded query is a valid SAS token")
    }
}

/// A service SAS for one table: which operations (`sp`), when (`st`, `se`), from where (`sip`, `spr`), under
/// which stored access policy (`si`), and on which keys (`spk`/`srk` to `epk`/`erk`, inclusive).
///
/// The table name is signed lowercased (`/table/<account>/<name>`) and given as it is in `tn`. Key bounds come
/// in pairs: a start RowKey needs a start PartitionKey, an end RowKey an end PartitionKey; with both
/// PartitionKeys equal and both RowKeys equal the SAS reaches one entity. The service enforces the key range
/// and `sip`; Azurite does not (`docs/rules.md` §9.3).
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
    start_partition_key: Option<PartitionKey>,
    start_row_key: Option<RowKey>,
    end_partition_key: Option<PartitionKey>,
    end_row_key: Option<RowKey>,
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

    /// The first PartitionKey it reaches, included (`spk`).
    #[must_use]
    pub fn start_partition_key(mut self, key: PartitionKey) -> Self {
        self.start_partition_key = Some(key);
        self
    }

    /// The first RowKey it reaches in the start PartitionKey, included (`srk`); needs
    /// [`start_partition_key`](Self::start_partition_key).
    #[must_use]
    pub fn start_row_key(mut self, key: RowKey) -> Self {
        self.start_row_key = Some(key);
        self
    }

    /// The last PartitionKey it reaches, included (`epk`).
    #[must_use]
    pub fn end_partition_key(mut self, key: PartitionKey) -> Self {
        self.end_partition_key = Some(key);
        self
    }

    /// The last RowKey it reaches in the end PartitionKey, included (`erk`); needs
    /// [`end_partition_key`](Self::end_partition_key).
    #[must_use]
    pub fn end_row_key(mut self, key: RowKey) -> Self {
        self.end_row_key = Some(key);
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
            self.start_partition_key.as_ref().map_or("", PartitionKey::as_str),
            self.start_row_key.as_ref().map_or("", RowKey::as_str),
            self.end_partition_key.as_ref().map_or("", PartitionKey::as_str),
            self.end_row_key.as_ref().map_or("", RowKey::as_str),
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
        let bound = |pk: &PartitionKey, rk: Option<&RowKey>, names: (&str, &str)| match rk {
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
            return Err(SasError::new(SasErrorKind::NoPermission));
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
        let c = self.fields()?;
        let (permissions, resource_types) = (self.permissions.to_string(), self.resource_types.to_string());
        Ok([account, &permissions, "t", &resource_types, &c.start, &c.expiry, &c.ip, c.protocol, SAS_VERSION, ""]
            .join("\n"))
    }

    /// The signed token, its parameters in the order `st se sp sip spr sv ss srt sig` (the Python SDK's).
    ///
    /// # Errors
    /// [`SasErrorKind::NoPermission`], [`SasErrorKind::NoResourceType`],
    /// [`SasErrorKind::ExpiryNotAfterStart`], [`SasErrorKind::TimeOutOfRange`].
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
