//! A service SAS for one table ([`TableSas`]), and the bounds of the key range it may grant ([`KeyBound`]).

use super::error::{SasError, SasErrorKind};
use super::policy::PolicyId;
use super::{check_account, Common, Query, SasIpRange, SasProtocol, TableSasPermissions, SAS_VERSION};
use crate::auth;
use crate::connection::{AccountKey, Endpoint, SasToken};
use crate::key::{service_order, PartitionKey, RowKey};
use crate::name::TableName;
use chrono::{DateTime, Utc};
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

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

    /// The string to sign for `account` (see the [module](super) docs).
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
