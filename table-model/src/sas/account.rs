//! An account SAS for the Table service ([`AccountSas`]): operations on the account's tables and entities.

use super::error::{SasError, SasErrorKind};
use super::{
    check_account, AccountSasPermissions, AccountSasResourceTypes, Common, Query, SasIpRange, SasProtocol, SAS_VERSION,
};
use crate::auth;
use crate::connection::{AccountKey, Endpoint, SasToken};
use chrono::{DateTime, Utc};

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

    /// The string to sign for `account` (see the [module](super) docs).
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
