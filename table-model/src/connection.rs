//! Where the Table service is and how to authorize with it: [`Endpoint`]s (Azure-style and the emulator's
//! path-style), [`Credential`]s, and [`ConnectionString`]s.
//!
//! Layer: requests.

pub(crate) mod error;

use crate::RuleSet;
use base64::Engine as _;
use error::{ConnectionError, ConnectionErrorKind, Given};
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// The emulator's account name (Azurite and the legacy Storage Emulator).
pub const DEVELOPMENT_ACCOUNT: &str = "devstoreaccount1";
/// The emulator's account key, published in Microsoft's documentation for local development (not a secret).
pub const DEVELOPMENT_ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
/// The emulator's default Table endpoint, path-style: the account is the first path segment.
pub const DEVELOPMENT_TABLE_ENDPOINT: &str = "http://127.0.0.1:10002/devstoreaccount1";
/// The Azure Cosmos DB emulator's well-known account key, published in Microsoft's documentation for local
/// development (not a secret): a connection string with this key is for the Cosmos DB emulator's Table API
/// (`docs/rules.md` §13.2), whatever its endpoint.
pub const COSMOS_EMULATOR_ACCOUNT_KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/// The address of a Table service: a base URL and the storage account it serves.
///
/// Two shapes exist. Azure-style endpoints name the account in the host
/// (`https://myaccount.table.core.windows.net`); the emulator's path-style endpoints name it in the first
/// path segment (`http://127.0.0.1:10002/devstoreaccount1`). Requests go to the base URL plus the resource
/// path, and Shared Key signs `/<account>` plus the whole request path, so on a path-style endpoint the
/// account appears twice in the string to sign, as the service expects.
///
/// ```
/// use table_model::Endpoint;
/// let azure = Endpoint::parse("https://myaccount.table.core.windows.net/")?;
/// assert_eq!((azure.url(), azure.account(), azure.is_path_style()),
///            ("https://myaccount.table.core.windows.net", "myaccount", false));
/// let local = Endpoint::parse("http://127.0.0.1:10002/devstoreaccount1")?;
/// assert_eq!((local.account(), local.is_path_style()), ("devstoreaccount1", true));
/// assert_eq!(Endpoint::azure("myaccount")?, azure);
/// # Ok::<(), table_model::ConnectionError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// `scheme://authority[/path]`, without a trailing `/`.
    url: String,
    account: String,
    /// Byte index in `url` where the path starts (`url.len()` when there is none).
    path_start: usize,
}

impl Endpoint {
    /// An endpoint from its URL, with the account taken from the first path segment when there is a path
    /// (path-style), else from the first label of the host (Azure-style).
    ///
    /// # Errors
    /// A URL that is not `http` or `https`, has a query or fragment, or names no account.
    pub fn parse(url: &str) -> Result<Self, ConnectionError> {
        let given = || Given::Endpoint(url.to_owned());
        let (base, path_start) = split_url(url).map_err(|e| e.given_as(given()))?;
        let path = &base[path_start..];
        let account = if path.is_empty() {
            let host = base[..path_start].split_once("://").map_or("", |(_, a)| a);
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            let label = host.split(['.', ':']).next().unwrap_or("");
            if host.starts_with('[') || label.bytes().all(|b| b.is_ascii_digit()) || label == "localhost" {
                return Err(ConnectionError::given(ConnectionErrorKind::NoAccount { url: url.to_owned() }, given()));
            }
            label
        } else {
            path[1..].split('/').next().unwrap_or("")
        };
        let account = check_account(account).map_err(|e| e.given_as(given()))?.to_owned();
        Ok(Endpoint { url: base, account, path_start })
    }

    /// An endpoint from its URL and an explicit account name (for custom domains and proxies).
    ///
    /// # Errors
    /// A URL that is not `http` or `https` or has a query or fragment; an account name that is not ASCII
    /// letters, digits and `-`.
    pub fn with_account(url: &str, account: &str) -> Result<Self, ConnectionError> {
        let (base, path_start) = split_url(url).map_err(|e| e.given_as(Given::Endpoint(url.to_owned())))?;
        let account = check_account(account).map_err(|e| e.given_as(Given::AccountName))?.to_owned();
        Ok(Endpoint { url: base, account, path_start })
    }

    /// The Azure Storage endpoint of an account: `https://<account>.table.core.windows.net`.
    ///
    /// # Errors
    /// An account name that is not ASCII letters, digits and `-`.
    pub fn azure(account: &str) -> Result<Self, ConnectionError> {
        let account = check_account(account).map_err(|e| e.given_as(Given::AccountName))?;
        Endpoint::with_account(&format!("https://{account}.table.core.windows.net"), account)
    }

    /// The emulator's default endpoint, [`DEVELOPMENT_TABLE_ENDPOINT`].
    pub fn development() -> Self {
        Endpoint::parse(DEVELOPMENT_TABLE_ENDPOINT).expect("the development endpoint is valid")
    }

    /// The base URL, without a trailing `/`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The storage account name.
    pub fn account(&self) -> &str {
        &self.account
    }

    /// Whether the URL has a path (the emulator's `http://host:port/<account>` form).
    pub fn is_path_style(&self) -> bool {
        self.path_start < self.url.len()
    }

    /// The path of the base URL: `""` for Azure-style, `/devstoreaccount1` for path-style.
    pub fn path(&self) -> &str {
        &self.url[self.path_start..]
    }

    /// The endpoint of the account's secondary location (read-access geo-redundant replication), where
    /// `Get Table Service Stats` is served: the account name in the URL with `-secondary` appended, in the host
    /// (`https://acme-secondary.table.core.windows.net`) or, path-style, in the first path segment
    /// (`http://127.0.0.1:10002/devstoreaccount1-secondary`, which Azurite serves). The account stays the
    /// primary's: the service authorizes requests to the secondary with the primary's name (`docs/rules.md` §9.5).
    ///
    /// `None` when the URL does not name the account (a custom domain or a proxy: make the secondary's endpoint
    /// with [`Endpoint::with_account`]), or already names a secondary.
    ///
    /// ```
    /// use table_model::Endpoint;
    /// let azure = Endpoint::parse("https://acme.table.core.windows.net")?.secondary().unwrap();
    /// assert_eq!((azure.url(), azure.account()), ("https://acme-secondary.table.core.windows.net", "acme"));
    /// let local = Endpoint::parse("http://127.0.0.1:10002/devstoreaccount1")?.secondary().unwrap();
    /// assert_eq!(local.url(), "http://127.0.0.1:10002/devstoreaccount1-secondary");
    /// assert_eq!(Endpoint::with_account("https://tables.contoso.com", "acme")?.secondary(), None);
    /// # Ok::<(), table_model::ConnectionError>(())
    /// ```
    pub fn secondary(&self) -> Option<Endpoint> {
        const SUFFIX: &str = "-secondary";
        if self.account.ends_with(SUFFIX) {
            return None;
        }
        let insert_at = if self.is_path_style() {
            let first = self.path()[1..].split('/').next().unwrap_or("");
            if first != self.account {
                return None;
            }
            self.path_start + 1 + first.len()
        } else {
            let authority_start = self.url.find("://")? + 3;
            let authority = &self.url[authority_start..self.path_start];
            let label_end = authority.find(['.', ':']).unwrap_or(authority.len());
            if !authority[..label_end].eq_ignore_ascii_case(&self.account) || !authority[label_end..].starts_with('.') {
                return None;
            }
            authority_start + label_end
        };
        let url = format!("{}{SUFFIX}{}", &self.url[..insert_at], &self.url[insert_at..]);
        let path_start = if self.is_path_style() { self.path_start } else { self.path_start + SUFFIX.len() };
        Some(Endpoint { url, account: self.account.clone(), path_start })
    }

    /// The host, without port.
    fn host(&self) -> &str {
        let authority = self.url[..self.path_start].split_once("://").map_or("", |(_, a)| a);
        match authority.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(""),
            None => authority.split(':').next().unwrap_or(""),
        }
    }

    /// The port the URL names, if it names one.
    fn port(&self) -> Option<u16> {
        let authority = self.url[..self.path_start].split_once("://").map_or("", |(_, a)| a);
        let after_host = match authority.strip_prefix('[') {
            Some(v6) => v6.split_once(']').map_or("", |(_, rest)| rest),
            None => authority,
        };
        after_host.rsplit_once(':').and_then(|(_, port)| port.parse().ok())
    }

    /// Which implementation of the Table service this endpoint reaches, told from the URL
    /// (`docs/rules.md` §13.2), in this order: a host with a `.table.cosmos.` or `.table.cosmosdb.` label pair
    /// is the Cosmos DB Table API; a path-style URL (the account in the path) is the Azurite emulator; the
    /// host `localhost` on any port but Azurite's 10002 is the Cosmos DB emulator (as the Python SDK decides;
    /// its Table endpoint is `http://localhost:8902/`); anything else is Azure Table Storage. The client's
    /// options can override it (for a proxy or a custom domain).
    ///
    /// ```
    /// use table_model::{Endpoint, ServiceKind};
    /// assert_eq!(Endpoint::parse("https://acme.table.core.windows.net")?.kind(), ServiceKind::Storage);
    /// assert_eq!(Endpoint::parse("https://acme.table.cosmos.azure.com:443/")?.kind(), ServiceKind::CosmosDb);
    /// assert_eq!(Endpoint::parse("http://127.0.0.1:10002/devstoreaccount1")?.kind(), ServiceKind::Azurite);
    /// assert_eq!(Endpoint::parse("http://localhost:11002/devstoreaccount1")?.kind(), ServiceKind::Azurite);
    /// assert_eq!(Endpoint::with_account("http://localhost:8902/", "localhost")?.kind(), ServiceKind::CosmosDb);
    /// # Ok::<(), table_model::ConnectionError>(())
    /// ```
    pub fn kind(&self) -> ServiceKind {
        let host = self.host().to_ascii_lowercase();
        if host.contains(".table.cosmos.") || host.contains(".table.cosmosdb.") {
            ServiceKind::CosmosDb
        } else if self.is_path_style() {
            ServiceKind::Azurite
        } else if host == "localhost" && self.port() != Some(10002) {
            ServiceKind::CosmosDb
        } else {
            ServiceKind::Storage
        }
    }
}

/// The implementations of the Table service: one data model, with differences in limits, authentication and
/// wire details (`docs/rules.md` §13.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServiceKind {
    /// Azure Table Storage (`https://<account>.table.core.windows.net`).
    Storage,
    /// The Azure Cosmos DB for Table API (`https://<account>.table.cosmos.azure.com`).
    CosmosDb,
    /// The Azurite emulator (`http://127.0.0.1:10002/devstoreaccount1`), which speaks as Storage does.
    Azurite,
}

impl ServiceKind {
    /// The Microsoft Entra ID scope a token for this service must be issued for: the Cosmos DB Table API
    /// refuses a Storage token (`docs/rules.md` §13.2).
    ///
    /// ```
    /// use table_model::ServiceKind;
    /// assert_eq!(ServiceKind::Storage.entra_scope(), "https://storage.azure.com/.default");
    /// assert_eq!(ServiceKind::CosmosDb.entra_scope(), "https://cosmos.azure.com/.default");
    /// ```
    pub fn entra_scope(self) -> &'static str {
        match self {
            ServiceKind::Storage | ServiceKind::Azurite => "https://storage.azure.com/.default",
            ServiceKind::CosmosDb => "https://cosmos.azure.com/.default",
        }
    }

    /// The rules entities, keys and batches are checked against before they are sent there
    /// (`docs/rules.md` §13.1): Azurite is held to Azure Table Storage's, not to its own laxer checks.
    ///
    /// ```
    /// use table_model::{RuleSet, ServiceKind};
    /// assert_eq!(ServiceKind::Azurite.rules(), RuleSet::Storage);
    /// assert_eq!(ServiceKind::CosmosDb.rules(), RuleSet::CosmosDb);
    /// ```
    pub fn rules(self) -> RuleSet {
        match self {
            ServiceKind::Storage | ServiceKind::Azurite => RuleSet::Storage,
            ServiceKind::CosmosDb => RuleSet::CosmosDb,
        }
    }

    /// Whether entity and batch bodies sent there are written in ASCII, every other character as a `\u`
    /// escape ([`EntityBody::into_ascii`](crate::json::EntityBody::into_ascii), `docs/rules.md` §5.6): on
    /// Azurite, which decodes each network chunk of a body separately and so garbles a character split
    /// between two. Storage and Cosmos DB get raw UTF-8, the shorter form.
    ///
    /// ```
    /// use table_model::ServiceKind;
    /// assert!(ServiceKind::Azurite.ascii_json());
    /// assert!(!ServiceKind::Storage.ascii_json() && !ServiceKind::CosmosDb.ascii_json());
    /// ```
    pub fn ascii_json(self) -> bool {
        matches!(self, ServiceKind::Azurite)
    }
}

impl FromStr for Endpoint {
    type Err = ConnectionError;
    fn from_str(s: &str) -> Result<Self, ConnectionError> {
        Endpoint::parse(s)
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

/// Checks an `http(s)://authority[/path]` URL; returns it without a trailing `/` and where its path starts.
fn split_url(url: &str) -> Result<(String, usize), ConnectionError> {
    let invalid = || ConnectionError::new(ConnectionErrorKind::InvalidUrl { url: url.to_owned() });
    let uri: http::Uri = url.parse().map_err(|_| invalid())?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err(invalid()),
    }
    let authority = uri.authority().ok_or_else(invalid)?;
    if uri.query().is_some() || url.contains('#') || authority.as_str().contains('@') {
        return Err(invalid());
    }
    let path = uri.path().trim_end_matches('/');
    let base = format!("{}://{}", uri.scheme_str().unwrap_or("https"), authority.as_str());
    let path_start = base.len();
    Ok((base + path, path_start))
}

/// Whether `account` is an account name: one or more ASCII letters, digits and `-`. This takes every real
/// name (Storage's 3 to 24 lowercase letters and digits, the emulator's `devstoreaccount1`, Cosmos DB's with
/// hyphens) and refuses what would change a URL or a string to sign: whitespace, controls, `/`, `.`, `:`, `@`
/// and the like (`docs/rules.md` §9.3).
pub(crate) fn is_account_name(account: &str) -> bool {
    !account.is_empty() && account.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn check_account(account: &str) -> Result<&str, ConnectionError> {
    if !is_account_name(account) {
        return Err(ConnectionError::new(ConnectionErrorKind::InvalidAccountName { account: account.to_owned() }));
    }
    Ok(account)
}

/// A storage account key: the bytes of the base64 key shown in the portal. Its `Debug` output hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct AccountKey(Vec<u8>);

impl AccountKey {
    /// Decodes a key from its base64 form.
    ///
    /// ```
    /// use table_model::AccountKey;
    /// assert!(AccountKey::from_base64("a2V5").is_ok());
    /// let err = AccountKey::from_base64("not base64!").unwrap_err();
    /// assert_eq!(err.to_string(), "invalid account key: not valid base64 (it is the base64 text the portal shows)");
    /// assert_eq!(AccountKey::from_base64(" ").unwrap_err().to_string(), "invalid account key: empty");
    /// ```
    ///
    /// # Errors
    /// Text that is not standard padded base64 ([`ConnectionErrorKind::InvalidAccountKey`]), or an empty key
    /// ([`ConnectionErrorKind::EmptyAccountKey`]).
    pub fn from_base64(key: &str) -> Result<Self, ConnectionError> {
        let refuse = |kind| Err(ConnectionError::given(kind, Given::AccountKey));
        match base64::engine::general_purpose::STANDARD.decode(key.trim()) {
            Ok(bytes) if !bytes.is_empty() => Ok(AccountKey(bytes)),
            Ok(_) => refuse(ConnectionErrorKind::EmptyAccountKey),
            Err(_) => refuse(ConnectionErrorKind::InvalidAccountKey),
        }
    }

    /// The emulator's well-known key, [`DEVELOPMENT_ACCOUNT_KEY`].
    pub fn development() -> Self {
        AccountKey::from_base64(DEVELOPMENT_ACCOUNT_KEY).expect("the development key is valid base64")
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for AccountKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccountKey(<hidden>)")
    }
}

/// A shared access signature: the query string the account owner issued (`sv=...&sig=...`), appended to
/// every request as is. Its `Debug` output hides the signature.
#[derive(Clone, PartialEq, Eq)]
pub struct SasToken(String);

impl SasToken {
    /// Takes a SAS token, with or without its leading `?`.
    ///
    /// The token must be a URL query string that can be appended to a request as it is: RFC 3986 query
    /// characters only (letters, digits, `-._~!$&'()*+,;=:@/`, and `%` followed by two hex digits).
    ///
    /// ```
    /// use table_model::SasToken;
    /// let sas = SasToken::new("?sv=2019-02-02&tn=orders&sp=r&sig=a%2Bb%3D")?;
    /// assert_eq!(sas.as_str(), "sv=2019-02-02&tn=orders&sp=r&sig=a%2Bb%3D");
    /// let err = SasToken::new("sv=2019-02-02&sig=<script>").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid shared access signature: must be a URL query string \
    ///      (character `<` at index 18 cannot be in a URL)"
    /// );
    /// # Ok::<(), table_model::ConnectionError>(())
    /// ```
    ///
    /// # Errors
    /// An empty token, or one with a character a URL query cannot carry: whitespace, controls, `#`, `?`, `"`,
    /// `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`, `}`, non-ASCII, or a `%` not followed by two hex digits.
    pub fn new(token: &str) -> Result<Self, ConnectionError> {
        let token = token.trim();
        let token = token.strip_prefix('?').unwrap_or(token);
        let refuse = |invalid| Err(ConnectionError::given(ConnectionErrorKind::InvalidSas { invalid }, Given::Sas));
        if token.is_empty() {
            return refuse(None);
        }
        if let Some((index, ch)) = first_non_query_char(token) {
            return refuse(Some((ch, index)));
        }
        Ok(SasToken(token.to_owned()))
    }

    /// The token, without a leading `?`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A URL with the value of its `sig` query parameter (the signature of a SAS, a secret) replaced by `REDACTED`,
/// for error messages: a [`SasToken`]'s `Debug` hides it whole, a message keeps the other parameters.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn redact_signature(url: &str) -> Cow<'_, str> {
    const REDACTED: &str = "REDACTED";
    let Some((base, query)) = url.split_once('?') else { return Cow::Borrowed(url) };
    let is_sig = |parameter: &str| parameter.split('=').next().is_some_and(|name| name.eq_ignore_ascii_case("sig"));
    if !query.split('&').any(is_sig) {
        return Cow::Borrowed(url);
    }
    let mut out = String::with_capacity(url.len());
    out.push_str(base);
    for (i, parameter) in query.split('&').enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        match parameter.split_once('=') {
            Some((name, _)) if is_sig(parameter) => {
                out.push_str(name);
                out.push('=');
                out.push_str(REDACTED);
            }
            _ => out.push_str(parameter),
        }
    }
    Cow::Owned(out)
}

/// The first character of `token` (with its byte index) that an RFC 3986 query cannot carry.
fn first_non_query_char(token: &str) -> Option<(usize, char)> {
    let bytes = token.as_bytes();
    let hex = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_hexdigit);
    token.char_indices().find(|&(i, c)| match c {
        'A'..='Z' | 'a'..='z' | '0'..='9' => false,
        '-' | '.' | '_' | '~' | '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '=' | ':' | '@' | '/' => {
            false
        }
        '%' => !(hex(i + 1) && hex(i + 2)),
        _ => true,
    })
}

impl fmt::Debug for SasToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SasToken(<hidden>)")
    }
}

/// How requests are authorized.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Credential {
    /// `Authorization: SharedKey <account>:<signature>` over verb, Content-MD5, Content-Type, date and
    /// canonicalized resource.
    SharedKey(AccountKey),
    /// `Authorization: SharedKeyLite <account>:<signature>` over date and canonicalized resource.
    SharedKeyLite(AccountKey),
    /// A shared access signature appended to the query string.
    Sas(SasToken),
    /// No authorization (only for servers that need none).
    Anonymous,
}

/// A parsed storage connection string: an [`Endpoint`] and a [`Credential`].
///
/// Keys are matched without regard to case; `Key=Value` segments are separated by `;`; values may contain `=`
/// (base64 keys end with it). Recognised keys: `UseDevelopmentStorage`, `DefaultEndpointsProtocol`,
/// `AccountName`, `AccountKey`, `EndpointSuffix`, `TableEndpoint`, `SharedAccessSignature`. Others (such as
/// `BlobEndpoint`) are for other services and are ignored.
///
/// ```
/// use table_model::{ConnectionString, Credential};
/// let cs: ConnectionString = "UseDevelopmentStorage=true".parse()?;
/// assert_eq!(cs.endpoint().url(), "http://127.0.0.1:10002/devstoreaccount1");
/// assert!(matches!(cs.credential(), Credential::SharedKey(_)));
///
/// let cs: ConnectionString =
///     "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=a2V5;EndpointSuffix=core.chinacloudapi.cn"
///         .parse()?;
/// assert_eq!(cs.endpoint().url(), "https://acme.table.core.chinacloudapi.cn");
///
/// let cs: ConnectionString = "TableEndpoint=https://acme.table.cosmos.azure.com:443/;SharedAccessSignature=sv=2019-02-02&sig=abc".parse()?;
/// assert_eq!(cs.endpoint().account(), "acme");
/// assert!(matches!(cs.credential(), Credential::Sas(s) if s.as_str() == "sv=2019-02-02&sig=abc"));
/// # Ok::<(), table_model::ConnectionError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionString {
    endpoint: Endpoint,
    credential: Credential,
    kind: ServiceKind,
}

impl ConnectionString {
    /// Parses a connection string.
    ///
    /// # Errors
    /// A segment without `=`, a key given twice, `UseDevelopmentStorage` with a value other than `true` or
    /// combined with account settings, a missing `AccountName` (when there is no `TableEndpoint`), both
    /// `AccountKey` and `SharedAccessSignature`, or an invalid value.
    pub fn parse(text: &str) -> Result<Self, ConnectionError> {
        let err = |kind| Err(ConnectionError::new(kind));
        let mut settings: Vec<(&'static str, &str)> = Vec::new();
        for segment in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((key, value)) = segment.split_once('=') else {
                return err(ConnectionErrorKind::Syntax { segment: redact(segment) });
            };
            let Some(known) = KNOWN_KEYS.iter().find(|k| k.eq_ignore_ascii_case(key.trim())) else {
                continue;
            };
            if settings.iter().any(|(k, _)| k == known) {
                return err(ConnectionErrorKind::Duplicate { key: known });
            }
            settings.push((known, value.trim()));
        }
        let get = |key: &str| settings.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);

        if let Some(value) = get("UseDevelopmentStorage") {
            if !value.eq_ignore_ascii_case("true") {
                return err(ConnectionErrorKind::InvalidValue { key: "UseDevelopmentStorage", expected: "`true`" });
            }
            if let Some((other, _)) = settings.iter().find(|(k, _)| *k != "UseDevelopmentStorage") {
                return err(ConnectionErrorKind::Conflict { key: "UseDevelopmentStorage", other });
            }
            return Ok(ConnectionString {
                endpoint: Endpoint::development(),
                credential: Credential::SharedKey(AccountKey::development()),
                kind: ServiceKind::Azurite,
            });
        }

        let account = get("AccountName");
        let endpoint = match (get("TableEndpoint"), account) {
            (Some(url), Some(account)) => Endpoint::with_account(url, account).map_err(in_connection_string)?,
            (Some(url), None) => Endpoint::parse(url).map_err(in_connection_string)?,
            (None, Some(account)) => {
                let protocol = get("DefaultEndpointsProtocol").unwrap_or("https");
                if !matches!(protocol, "http" | "https") {
                    return err(ConnectionErrorKind::InvalidValue {
                        key: "DefaultEndpointsProtocol",
                        expected: "`http` or `https`",
                    });
                }
                let suffix = get("EndpointSuffix").unwrap_or("core.windows.net");
                let account = check_account(account)?;
                Endpoint::with_account(&format!("{protocol}://{account}.table.{suffix}"), account)
                    .map_err(in_connection_string)?
            }
            (None, None) => return err(ConnectionErrorKind::Missing { key: "AccountName" }),
        };
        let credential = match (get("AccountKey"), get("SharedAccessSignature")) {
            (Some(_), Some(_)) => {
                return err(ConnectionErrorKind::Conflict { key: "AccountKey", other: "SharedAccessSignature" })
            }
            (Some(key), None) => Credential::SharedKey(AccountKey::from_base64(key).map_err(in_connection_string)?),
            (None, Some(sas)) => Credential::Sas(SasToken::new(sas).map_err(in_connection_string)?),
            (None, None) => Credential::Anonymous,
        };
        let kind = match get("AccountKey") {
            Some(key) if key == COSMOS_EMULATOR_ACCOUNT_KEY => ServiceKind::CosmosDb,
            _ => endpoint.kind(),
        };
        Ok(ConnectionString { endpoint, credential, kind })
    }

    /// Which implementation of the Table service the connection string is for (`docs/rules.md` §13.2): the
    /// Cosmos DB emulator when its account key is the emulator's well-known [`COSMOS_EMULATOR_ACCOUNT_KEY`],
    /// Azurite for `UseDevelopmentStorage=true`, else what the endpoint says ([`Endpoint::kind`]).
    /// [`TableService::from_connection_string`](crate::TableService::from_connection_string) and the client's
    /// take it.
    ///
    /// ```
    /// use table_model::{ConnectionString, ServiceKind, COSMOS_EMULATOR_ACCOUNT_KEY};
    /// let kind = |cs: &str| cs.parse::<ConnectionString>().map(|cs| cs.kind());
    /// assert_eq!(kind("UseDevelopmentStorage=true")?, ServiceKind::Azurite);
    /// let emulator = format!(
    ///     "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey={COSMOS_EMULATOR_ACCOUNT_KEY};\
    ///      TableEndpoint=http://localhost:8902/;"
    /// );
    /// assert_eq!(kind(&emulator)?, ServiceKind::CosmosDb);
    /// assert_eq!(kind("AccountName=acme;AccountKey=a2V5")?, ServiceKind::Storage);
    /// # Ok::<(), table_model::ConnectionError>(())
    /// ```
    pub fn kind(&self) -> ServiceKind {
        self.kind
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The credential.
    pub fn credential(&self) -> &Credential {
        &self.credential
    }

    /// The endpoint and the credential.
    pub fn into_parts(self) -> (Endpoint, Credential) {
        (self.endpoint, self.credential)
    }
}

impl FromStr for ConnectionString {
    type Err = ConnectionError;
    fn from_str(s: &str) -> Result<Self, ConnectionError> {
        ConnectionString::parse(s)
    }
}

const KNOWN_KEYS: [&str; 7] = [
    "UseDevelopmentStorage",
    "DefaultEndpointsProtocol",
    "AccountName",
    "AccountKey",
    "EndpointSuffix",
    "TableEndpoint",
    "SharedAccessSignature",
];

/// The error of a value of a connection string, named as the connection string's.
fn in_connection_string(e: ConnectionError) -> ConnectionError {
    e.given_as(Given::ConnectionString)
}

/// A segment for an error message, cut short so that a malformed secret is never echoed whole.
fn redact(segment: &str) -> String {
    let mut shown: String = segment.chars().take(12).collect();
    if shown.len() < segment.len() {
        shown.push_str("...");
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<ConnectionString, ConnectionError> {
        s.parse()
    }

    #[test]
    fn development_storage() {
        for s in ["UseDevelopmentStorage=true", "usedevelopmentstorage=TRUE;", " UseDevelopmentStorage = true ; "] {
            let cs = parse(s).unwrap();
            assert_eq!(cs.endpoint().url(), DEVELOPMENT_TABLE_ENDPOINT);
            assert_eq!(cs.endpoint().account(), DEVELOPMENT_ACCOUNT);
            assert_eq!(cs.endpoint().path(), "/devstoreaccount1");
            assert_eq!(cs.credential(), &Credential::SharedKey(AccountKey::development()));
        }
        assert_eq!(
            parse("UseDevelopmentStorage=false").unwrap_err().to_string(),
            "invalid connection string: `UseDevelopmentStorage` must be `true`"
        );
        assert_eq!(
            parse("UseDevelopmentStorage=true;AccountName=x").unwrap_err().to_string(),
            "invalid connection string: `UseDevelopmentStorage` cannot be combined with `AccountName`"
        );
        // The well-known key decodes to 64 bytes.
        assert_eq!(AccountKey::development().as_bytes().len(), 64);
    }

    #[test]
    fn account_forms() {
        let cs = parse("AccountName=acme;AccountKey=a2V5").unwrap();
        assert_eq!(cs.endpoint().url(), "https://acme.table.core.windows.net");
        assert_eq!(cs.endpoint().path(), "");
        assert!(!cs.endpoint().is_path_style());
        assert_eq!(cs.credential(), &Credential::SharedKey(AccountKey(b"key".to_vec())));
        let cs = parse("DefaultEndpointsProtocol=http;AccountName=acme;AccountKey=a2V5==;BlobEndpoint=x").unwrap_err();
        assert_eq!(cs.to_string(), "invalid connection string: `AccountKey` is not valid base64");
        let cs =
            parse("DefaultEndpointsProtocol=http;AccountName=acme;AccountKey=a2V5;BlobEndpoint=https://x").unwrap();
        assert_eq!(cs.endpoint().url(), "http://acme.table.core.windows.net");
        let cs = parse(
            "AccountName=devstoreaccount1;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;",
        )
        .unwrap();
        assert_eq!(cs.endpoint().account(), "devstoreaccount1");
        assert!(cs.endpoint().is_path_style());
        let cs = parse("AccountName=acme").unwrap();
        assert_eq!(cs.credential(), &Credential::Anonymous);
    }

    #[test]
    fn errors() {
        let e = |s: &str| parse(s).unwrap_err().to_string();
        assert_eq!(e(""), "invalid connection string: `AccountName` is missing");
        assert_eq!(e("AccountKey=a2V5"), "invalid connection string: `AccountName` is missing");
        assert_eq!(e("AccountName=a;accountname=b"), "invalid connection string: `AccountName` is given twice");
        assert_eq!(
            e("AccountName=a;SecretKeyWithoutEquals"),
            "invalid connection string: segment `SecretKeyWit...` is not `Key=Value`"
        );
        assert_eq!(
            e("AccountName=a;AccountKey=a2V5;SharedAccessSignature=sig=x"),
            "invalid connection string: `AccountKey` cannot be combined with `SharedAccessSignature`"
        );
        assert_eq!(
            e("AccountName=a b"),
            "invalid connection string: account name `a b` must be ASCII letters, digits and `-`"
        );
        assert_eq!(
            e("DefaultEndpointsProtocol=ftp;AccountName=a"),
            "invalid connection string: `DefaultEndpointsProtocol` must be `http` or `https`"
        );
        assert_eq!(
            e("TableEndpoint=ftp://x/y"),
            "invalid connection string: endpoint `ftp://x/y` must be an http or https URL without query or fragment"
        );
        assert_eq!(e("TableEndpoint=http://127.0.0.1:10002"), "invalid connection string: cannot tell the account name from endpoint `http://127.0.0.1:10002`; set `AccountName`");
        assert_eq!(
            e("AccountName=a;SharedAccessSignature=a b"),
            "invalid connection string: `SharedAccessSignature` must be a URL query string (character U+0020 at \
             index 1 cannot be in a URL)"
        );
        assert_eq!(
            e("AccountName=a;SharedAccessSignature=?"),
            "invalid connection string: `SharedAccessSignature` must be a URL query string (it is empty)"
        );
    }

    #[test]
    fn endpoints() {
        let e = Endpoint::parse("http://localhost:10002/devstoreaccount1/").unwrap();
        assert_eq!(e.url(), "http://localhost:10002/devstoreaccount1");
        assert_eq!(e.account(), "devstoreaccount1");
        assert!(Endpoint::parse("http://localhost:10002").is_err());
        assert!(Endpoint::parse("https://[::1]:10002").is_err());
        assert!(Endpoint::parse("https://acct.table.core.windows.net?x=1").is_err());
        assert!(Endpoint::parse("https://acct.table.core.windows.net#frag").is_err());
        assert!(Endpoint::parse("https://user@acct.table.core.windows.net").is_err());
        assert!(Endpoint::parse("acct.table.core.windows.net").is_err());
        let e = Endpoint::with_account("https://tables.example.com", "acct").unwrap();
        assert_eq!((e.url(), e.account(), e.path()), ("https://tables.example.com", "acct", ""));
        assert_eq!(Endpoint::development().to_string(), DEVELOPMENT_TABLE_ENDPOINT);
    }

    #[test]
    fn values_given_alone_are_named_as_themselves() {
        let e = |r: Result<Endpoint, ConnectionError>| r.unwrap_err().to_string();
        assert_eq!(
            e(Endpoint::parse("http://localhost:10002/")),
            "invalid endpoint URL \"http://localhost:10002/\": cannot tell the account name from it; name the \
             account in the path (`http://localhost:10002/<account>`) or give it with `Endpoint::with_account`"
        );
        assert_eq!(
            e(Endpoint::parse("ftp://x/y")),
            "invalid endpoint URL \"ftp://x/y\": must be an http or https URL without query, fragment or user name"
        );
        assert_eq!(
            e(Endpoint::parse("http://127.0.0.1:10002/dev_store")),
            "invalid endpoint URL \"http://127.0.0.1:10002/dev_store\": account name \"dev_store\" must be ASCII \
             letters, digits and `-`"
        );
        assert_eq!(
            e(Endpoint::with_account("https://tables.example.com", "a b")),
            "invalid account name \"a b\": must be ASCII letters, digits and `-`"
        );
        assert_eq!(e(Endpoint::azure("")), "invalid account name \"\": must be ASCII letters, digits and `-`");
        let key = |text: &str| AccountKey::from_base64(text).unwrap_err();
        assert_eq!(key("").kind(), &ConnectionErrorKind::EmptyAccountKey);
        assert_eq!(key(" \t").to_string(), "invalid account key: empty");
        assert_eq!(key("a2V5=").kind(), &ConnectionErrorKind::InvalidAccountKey);
        assert_eq!(
            key("a2V5=").to_string(),
            "invalid account key: not valid base64 (it is the base64 text the portal shows)"
        );
        assert_eq!(
            SasToken::new("?").unwrap_err().to_string(),
            "invalid shared access signature: must be a URL query string (it is empty)"
        );
        // In a connection string, the same values are named as its keys.
        assert_eq!(
            parse("AccountName=a;AccountKey=").unwrap_err().to_string(),
            "invalid connection string: `AccountKey` is empty"
        );
        assert_eq!(
            parse("AccountName=a;TableEndpoint=http://x/;AccountKey=a2V5=").unwrap_err().to_string(),
            "invalid connection string: `AccountKey` is not valid base64"
        );
    }

    #[test]
    fn signatures_are_redacted() {
        let r = |url: &str| redact_signature(url).into_owned();
        assert_eq!(r("https://a.table.core.windows.net/T()"), "https://a.table.core.windows.net/T()");
        assert_eq!(r("https://a/T?$top=1&sv=2019-02-02"), "https://a/T?$top=1&sv=2019-02-02");
        assert_eq!(r("https://a/T?sv=2019-02-02&sig=a%2Bb%3D&tn=T"), "https://a/T?sv=2019-02-02&sig=REDACTED&tn=T");
        assert_eq!(r("https://a/T?SIG=x"), "https://a/T?SIG=REDACTED");
        assert_eq!(r("https://a/T?signature=x&sig"), "https://a/T?signature=x&sig");
        assert!(matches!(redact_signature("https://a/T?sv=1"), Cow::Borrowed(_)));
    }

    #[test]
    fn sas_tokens_refuse_what_a_uri_cannot_carry() {
        for bad in
            ["sig=\"x\"", "sig=<x>", "a=b#c", "a=b?c", "a=%zz", "a=%2", "a=\u{e9}", "a=b\\c", "a={}", "a=`", "a=|"]
        {
            let err = SasToken::new(bad).unwrap_err();
            assert!(matches!(err.kind(), ConnectionErrorKind::InvalidSas { invalid: Some(_) }), "{bad}: {err}");
        }
        for good in ["sv=2019-02-02&sig=a%2Bb%3D", "se=2026-01-01T00:00:00Z&sp=raud&tn=T", "a='(x)'!*$,;:@/~"] {
            assert_eq!(SasToken::new(good).unwrap().as_str(), good);
        }
    }

    proptest::proptest! {
        /// Whatever `SasToken::new` accepts, appended to a request URI, still makes a valid URI: requests built
        /// with it cannot panic.
        #[test]
        fn accepted_sas_tokens_make_valid_uris(token in "\\PC{0,40}") {
            if let Ok(sas) = SasToken::new(&token) {
                let uri = format!("https://a.table.core.windows.net/T()?$top=1&{}", sas.as_str());
                proptest::prop_assert!(uri.parse::<http::Uri>().is_ok(), "{uri}");
                let mut request = http::Request::get("https://a.table.core.windows.net/T").body(()).unwrap();
                crate::auth::authorize(&mut request, "a", &Credential::Sas(sas), std::time::SystemTime::now());
            }
        }

        /// The same with only URI-ish bytes, so that acceptance is exercised often.
        #[test]
        fn accepted_uri_ish_tokens_make_valid_uris(token in "[a-z0-9%&=+/:;@!$'()*,~._\\-]{1,40}") {
            if let Ok(sas) = SasToken::new(&token) {
                let uri = format!("https://a.table.core.windows.net/T?{}", sas.as_str());
                proptest::prop_assert!(uri.parse::<http::Uri>().is_ok(), "{uri}");
            }
        }
    }

    #[test]
    fn service_kinds() {
        let kind = |url: &str| Endpoint::parse(url).unwrap().kind();
        assert_eq!(kind("https://acme.table.core.windows.net"), ServiceKind::Storage);
        assert_eq!(kind("https://acme.table.core.chinacloudapi.cn"), ServiceKind::Storage);
        assert_eq!(kind("https://ACME.TABLE.COSMOS.AZURE.COM"), ServiceKind::CosmosDb);
        assert_eq!(kind("https://acme.table.cosmosdb.azure.com:443"), ServiceKind::CosmosDb);
        assert_eq!(kind("http://localhost:10002/devstoreaccount1"), ServiceKind::Azurite);
        assert_eq!(Endpoint::with_account("https://tables.example.com", "a").unwrap().kind(), ServiceKind::Storage);
        assert_eq!(
            ConnectionString::parse("UseDevelopmentStorage=true").unwrap().endpoint().kind(),
            ServiceKind::Azurite
        );
    }

    /// The Cosmos DB emulator: `localhost` on a port other than Azurite's, or its well-known key; Azurite's
    /// endpoints and connection strings stay Azurite (`docs/rules.md` §13.2).
    #[test]
    fn emulator_kinds() {
        let kind = |url: &str| Endpoint::with_account(url, "localhost").unwrap().kind();
        assert_eq!(kind("http://localhost:8902/"), ServiceKind::CosmosDb);
        assert_eq!(kind("https://LOCALHOST:8081"), ServiceKind::CosmosDb);
        assert_eq!(kind("http://localhost"), ServiceKind::CosmosDb);
        assert_eq!(kind("http://localhost:10002"), ServiceKind::Storage);
        assert_eq!(kind("http://127.0.0.1:8902"), ServiceKind::Storage);
        assert_eq!(kind("http://[::1]:8902"), ServiceKind::Storage);
        assert_eq!(kind("http://localhost:8902/devstoreaccount1"), ServiceKind::Azurite);
        let endpoint = |url: &str| Endpoint::parse(url).unwrap().kind();
        assert_eq!(endpoint("http://127.0.0.1:10002/devstoreaccount1"), ServiceKind::Azurite);
        assert_eq!(endpoint("http://localhost:10002/devstoreaccount1"), ServiceKind::Azurite);

        let cs = |text: &str| ConnectionString::parse(text).unwrap();
        let emulator = format!(
            "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey={COSMOS_EMULATOR_ACCOUNT_KEY};\
             TableEndpoint=http://localhost:8902/;"
        );
        let parsed = cs(&emulator);
        assert_eq!(
            (parsed.kind(), parsed.endpoint().url(), parsed.endpoint().account()),
            (ServiceKind::CosmosDb, "http://localhost:8902", "localhost")
        );
        // The key decides even behind another endpoint; another key on the same endpoint is told by its host.
        let proxied =
            format!("AccountName=dev;AccountKey={COSMOS_EMULATOR_ACCOUNT_KEY};TableEndpoint=http://10.0.0.5:8902");
        assert_eq!(cs(&proxied).kind(), ServiceKind::CosmosDb);
        assert_eq!(
            cs("AccountName=localhost;AccountKey=a2V5;TableEndpoint=http://localhost:8902/").kind(),
            ServiceKind::CosmosDb
        );
        assert_eq!(cs("UseDevelopmentStorage=true").kind(), ServiceKind::Azurite);
        let azurite = format!(
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEVELOPMENT_ACCOUNT_KEY};\
             TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"
        );
        assert_eq!(cs(&azurite).kind(), ServiceKind::Azurite);
        assert_eq!(cs("AccountName=acme;AccountKey=a2V5").kind(), ServiceKind::Storage);
        assert_eq!(
            cs("TableEndpoint=https://acme.table.cosmos.azure.com:443/;AccountKey=a2V5").kind(),
            ServiceKind::CosmosDb
        );
    }

    #[test]
    fn secrets_stay_hidden() {
        let cs = parse("AccountName=a;AccountKey=c2VjcmV0").unwrap();
        assert!(!format!("{cs:?}").contains("c2VjcmV0"));
        let sas = SasToken::new("?sv=1&sig=secret").unwrap();
        assert_eq!(sas.as_str(), "sv=1&sig=secret");
        assert!(!format!("{sas:?}").contains("secret"));
    }
}
