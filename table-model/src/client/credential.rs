//! How the client authorizes: Shared Key (signed on every try), a SAS, a Microsoft Entra ID token, or none.

use super::transport::find_header;
use crate::auth::{rfc1123, shared_key_authorization, SharedKeyScheme, SignedParts, X_MS_DATE};
use crate::connection::{AccountKey, Credential, SasToken};
use crate::limits::SIGNED_DATE_MAX_SKEW_SECONDS;
use async_trait::async_trait;
use azure_core::credentials::TokenCredential;
use azure_core::http::headers::HeaderName;
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::{Context, Request};
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

/// How a [`TableServiceClient`](super::TableServiceClient) authorizes its requests: every credential a Table
/// service user has.
///
/// - An account key, as Shared Key ([`TableCredential::SharedKey`]) or Shared Key Lite: each try of each
///   request is signed again with a fresh `x-ms-date`, over HTTPS or plain HTTP (Azurite).
/// - A shared access signature ([`TableCredential::Sas`]), appended to every request.
/// - Microsoft Entra ID ([`TableCredential::Entra`]): any `azure_core` [`TokenCredential`], such as
///   `azure_identity`'s, asked for a token of the scope the endpoint's [`ServiceKind`](crate::ServiceKind)
///   needs (Storage or Cosmos DB). `azure_core` sends bearer tokens over HTTPS only.
/// - [`TableCredential::Anonymous`], for a proxy that adds its own authorization.
///
/// Conversions make each of them a one-word argument:
///
/// ```
/// use std::sync::Arc;
/// use table_model::client::TableCredential;
/// use table_model::{AccountKey, SasToken};
/// let key: TableCredential = AccountKey::development().into();
/// let sas: TableCredential = SasToken::new("sv=2019-02-02&tn=audit&sp=r&sig=abc")?.into();
/// assert!(matches!(key, TableCredential::SharedKey(_)));
/// assert!(format!("{sas:?}").contains("hidden"));
/// # Ok::<(), table_model::ConnectionError>(())
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub enum TableCredential {
    /// Shared Key, from the account key.
    SharedKey(AccountKey),
    /// Shared Key Lite, from the account key (signs less of the request; Shared Key is preferred).
    SharedKeyLite(AccountKey),
    /// A shared access signature.
    Sas(SasToken),
    /// A Microsoft Entra ID credential.
    Entra(Arc<dyn TokenCredential>),
    /// No authorization.
    Anonymous,
}

impl fmt::Debug for TableCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableCredential::SharedKey(_) => f.write_str("SharedKey(<hidden>)"),
            TableCredential::SharedKeyLite(_) => f.write_str("SharedKeyLite(<hidden>)"),
            TableCredential::Sas(_) => f.write_str("Sas(<hidden>)"),
            TableCredential::Entra(c) => f.debug_tuple("Entra").field(c).finish(),
            TableCredential::Anonymous => f.write_str("Anonymous"),
        }
    }
}

impl From<Credential> for TableCredential {
    fn from(credential: Credential) -> Self {
        match credential {
            Credential::SharedKey(key) => TableCredential::SharedKey(key),
            Credential::SharedKeyLite(key) => TableCredential::SharedKeyLite(key),
            Credential::Sas(sas) => TableCredential::Sas(sas),
            Credential::Anonymous => TableCredential::Anonymous,
        }
    }
}

impl From<AccountKey> for TableCredential {
    /// Shared Key.
    fn from(key: AccountKey) -> Self {
        TableCredential::SharedKey(key)
    }
}

impl From<SasToken> for TableCredential {
    fn from(sas: SasToken) -> Self {
        TableCredential::Sas(sas)
    }
}

impl From<Arc<dyn TokenCredential>> for TableCredential {
    fn from(credential: Arc<dyn TokenCredential>) -> Self {
        TableCredential::Entra(credential)
    }
}

impl<T: TokenCredential + 'static> From<Arc<T>> for TableCredential {
    /// As `azure_identity`'s constructors return them (`Arc<DeveloperToolsCredential>`, ...).
    fn from(credential: Arc<T>) -> Self {
        TableCredential::Entra(credential)
    }
}

impl From<Option<Arc<dyn TokenCredential>>> for TableCredential {
    /// The official SDK's argument form: `None` is anonymous (for a URL that carries a SAS).
    fn from(credential: Option<Arc<dyn TokenCredential>>) -> Self {
        credential.map_or(TableCredential::Anonymous, TableCredential::Entra)
    }
}

/// Signs each try with Shared Key or Shared Key Lite: the service refuses an `x-ms-date` more than 15 minutes
/// old, and a retry may come long after the first try.
#[derive(Debug)]
pub(crate) struct SharedKeyPolicy {
    pub(crate) account: String,
    pub(crate) key: AccountKey,
    pub(crate) scheme: SharedKeyScheme,
}

#[async_trait]
impl Policy for SharedKeyPolicy {
    async fn send(&self, ctx: &Context, request: &mut Request, next: &[Arc<dyn Policy>]) -> PolicyResult {
        let date = rfc1123(SystemTime::now());
        let authorization = {
            let headers = request.headers();
            let header = |name: &HeaderName| find_header(headers, name).unwrap_or("");
            let parts = SignedParts {
                method: request.method().as_str(),
                content_md5: header(&const { HeaderName::from_static("content-md5") }),
                content_type: header(&const { HeaderName::from_static("content-type") }),
                date: &date,
                path: request.url().path(),
                query: request.url().query(),
            };
            shared_key_authorization(self.scheme, &self.account, &self.key, &parts)
        };
        // Constant names: `HeaderName::from(&str)` checks every character again.
        request.insert_header(const { HeaderName::from_static(X_MS_DATE) }, date);
        request.insert_header(const { HeaderName::from_static("authorization") }, authorization);
        next[0].send(ctx, request, &next[1..]).await
    }
}

/// What the client knows of a `403` to a Shared Key request: the account the key was given for, and how far
/// the request's `x-ms-date` was from the service's clock (its `Date`), when more than the service allows.
#[derive(Debug)]
pub(crate) struct AuthNote {
    account: String,
    /// The service's clock minus the request's date, in seconds, when more than
    /// [`SIGNED_DATE_MAX_SKEW_SECONDS`] either way.
    skew: Option<i64>,
}

impl AuthNote {
    /// From the request's `x-ms-date` and the answer's `Date` (RFC 1123), when both are there.
    pub(crate) fn new(account: &str, sent: Option<&str>, answered: Option<&str>) -> Self {
        let parse = |date: Option<&str>| date.and_then(|d| chrono::DateTime::parse_from_rfc2822(d).ok());
        let skew = match (parse(sent), parse(answered)) {
            (Some(sent), Some(answered)) => Some((answered - sent).num_seconds()),
            _ => None,
        };
        AuthNote { account: account.to_owned(), skew: skew.filter(|s| s.abs() > SIGNED_DATE_MAX_SKEW_SECONDS) }
    }
}

impl fmt::Display for AuthNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "signed with the Shared Key of account `{}`", self.account)?;
        match self.skew {
            None => f.write_str(": check that the key is this account's"),
            Some(skew) => {
                let side = if skew > 0 { "behind" } else { "ahead of" };
                write!(
                    f,
                    "; the request's x-ms-date is {} minutes {side} the service's clock, and the service refuses a \
                     date more than {} minutes off: set the client's clock right",
                    skew.abs() / 60,
                    SIGNED_DATE_MAX_SKEW_SECONDS / 60
                )
            }
        }
    }
}
