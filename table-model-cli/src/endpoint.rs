//! Which service a run talks to: `--connection-string`, `--url` (with a SAS in its query, none for public access,
//! or a Microsoft Entra ID token with `--auth entra`), or the `AZURE_STORAGE_CONNECTION_STRING` environment
//! variable, in that order. A connection string may be `UseDevelopmentStorage=true` for Azurite on its default
//! port. `--service-kind` says which implementation the endpoint is when its URL does not tell.
//!
//! Entra ID tokens come from `azure_identity`'s developer credential chain (`DeveloperToolsCredential`): the
//! Azure CLI (`az login`), then the Azure Developer CLI (`azd auth login`), each run for a token of the service
//! kind's scope (`docs/rules.md` §13.2).
//!
//! Layer: parts.

use crate::error::CliError;
use clap::ValueEnum;
use table_model::client::{TableCredential, TableServiceClient, TableServiceClientOptions};
use table_model::ServiceKind;

/// The environment variable read when neither `--connection-string` nor `--url` is given: the one Azure's own
/// tools read (and `scripts/azurite.sh` exports).
pub const CONNECTION_STRING_VAR: &str = "AZURE_STORAGE_CONNECTION_STRING";

/// The endpoint options every command takes.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct EndpointArgs {
    /// A connection string (`AccountName=...;AccountKey=...`, `...;SharedAccessSignature=...`, or
    /// `UseDevelopmentStorage=true`) [default: $AZURE_STORAGE_CONNECTION_STRING]
    #[arg(long, global = true, value_name = "STRING")]
    pub connection_string: Option<String>,
    /// The service's URL, with a SAS token as its query (`https://acme.table.core.windows.net/?sv=...&sig=...`)
    #[arg(long, global = true, conflicts_with = "connection_string")]
    pub url: Option<String>,
    /// How to authorize with --url: `sas` (the SAS in its query, or none for public access), or `entra` (a
    /// Microsoft Entra ID token from `az login` or `azd auth login`) [default: sas]
    #[arg(long, global = true, value_enum, value_name = "AUTH")]
    pub auth: Option<Auth>,
    /// Which service the endpoint is, when its URL does not tell (a proxy, a custom domain, a local server):
    /// it chooses the rules checked before sending, and the Entra ID scope [default: told from the URL]
    #[arg(long, global = true, value_enum, value_name = "KIND")]
    pub service_kind: Option<Kind>,
}

/// How `--url` is authorized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Auth {
    /// The SAS in the URL's query, or none for public access
    Sas,
    /// A Microsoft Entra ID token from the developer tools: the Azure CLI, then the Azure Developer CLI
    Entra,
}

/// The service kinds `--service-kind` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Azure Table Storage
    Storage,
    /// Cosmos DB for Table: its stricter rules are checked before sending, and its Entra ID scope asked for
    Cosmos,
    /// The Azurite emulator (Storage's rules)
    Azurite,
}

impl Kind {
    /// The library's service kind.
    ///
    /// ```
    /// assert_eq!(table_model_cli::endpoint::Kind::Cosmos.service_kind(), table_model::ServiceKind::CosmosDb);
    /// ```
    pub fn service_kind(self) -> ServiceKind {
        match self {
            Kind::Storage => ServiceKind::Storage,
            Kind::Cosmos => ServiceKind::CosmosDb,
            Kind::Azurite => ServiceKind::Azurite,
        }
    }
}

/// Where the endpoint came from.
#[derive(Clone, PartialEq, Eq)]
pub enum EndpointSource {
    /// A connection string: from `--connection-string`, or from [`CONNECTION_STRING_VAR`] (`from_env`).
    ConnectionString {
        /// The connection string.
        value: String,
        /// Whether it came from the environment.
        from_env: bool,
    },
    /// A URL, with its SAS if it has one.
    Url(String),
    /// A URL whose requests carry a Microsoft Entra ID token (`--auth entra`).
    Entra(String),
}

impl std::fmt::Debug for EndpointSource {
    /// Never shows a key or a signature.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EndpointSource::ConnectionString { from_env, .. } => {
                f.debug_struct("ConnectionString").field("from_env", from_env).finish_non_exhaustive()
            }
            EndpointSource::Url(_) => f.write_str("Url(<hidden>)"),
            EndpointSource::Entra(url) => f.debug_tuple("Entra").field(url).finish(),
        }
    }
}

/// Picks the endpoint: `--url` (with Entra ID when `--auth entra` is given), else `--connection-string`, else the
/// environment's connection string (an empty variable counts as unset). `env` is the value of
/// [`CONNECTION_STRING_VAR`].
///
/// ```
/// use table_model_cli::endpoint::{resolve, EndpointArgs, EndpointSource};
/// let from_env = resolve(&EndpointArgs::default(), Some("UseDevelopmentStorage=true".into()))?;
/// assert_eq!(from_env, EndpointSource::ConnectionString { value: "UseDevelopmentStorage=true".into(), from_env: true });
/// assert!(resolve(&EndpointArgs::default(), None).is_err());
/// # Ok::<(), table_model_cli::error::CliError>(())
/// ```
///
/// # Errors
/// [`CliError`] ([`InvalidInput`](crate::error::Outcome::InvalidInput)) when no endpoint is given, or
/// `--auth entra` without `--url`.
pub fn resolve(args: &EndpointArgs, env: Option<String>) -> Result<EndpointSource, CliError> {
    if let Some(url) = &args.url {
        return Ok(match args.auth {
            Some(Auth::Entra) => EndpointSource::Entra(url.clone()),
            Some(Auth::Sas) | None => EndpointSource::Url(url.clone()),
        });
    }
    if args.auth == Some(Auth::Entra) {
        return Err(CliError::invalid(
            "--auth entra needs --url: the service's URL, such as https://acme.table.core.windows.net",
        ));
    }
    if let Some(value) = &args.connection_string {
        return Ok(EndpointSource::ConnectionString { value: value.clone(), from_env: false });
    }
    match env.filter(|v| !v.trim().is_empty()) {
        Some(value) => Ok(EndpointSource::ConnectionString { value, from_env: true }),
        None => Err(CliError::invalid(format!(
            "no endpoint: give --connection-string or --url, or set {CONNECTION_STRING_VAR} \
             (`UseDevelopmentStorage=true` for Azurite)"
        ))),
    }
}

/// A client for the endpoint, of the kind its URL or connection string tells. Nothing is sent: a connection
/// string or URL that is not valid is an error here, one that cannot be reached an error of the first request.
///
/// # Errors
/// [`CliError`] ([`InvalidInput`](crate::error::Outcome::InvalidInput)) naming where the invalid endpoint came
/// from.
pub fn connect(source: &EndpointSource) -> Result<TableServiceClient, CliError> {
    connect_as(source, None)
}

/// A client for the endpoint, of the given kind (`--service-kind`) or else the kind its URL or connection string
/// tells: the kind chooses the rules every entity is checked against before it is sent (`docs/rules.md` §13.1)
/// and the Entra ID scope. For `--auth entra`, the developer credential chain is set up here; it runs `az` (or
/// `azd`) at the first request.
///
/// ```
/// use table_model_cli::endpoint::{connect_as, EndpointSource};
/// let azurite = EndpointSource::ConnectionString { value: "UseDevelopmentStorage=true".into(), from_env: false };
/// let client = connect_as(&azurite, Some(table_model::ServiceKind::CosmosDb))?;
/// assert_eq!(client.kind(), table_model::ServiceKind::CosmosDb);
/// # Ok::<(), table_model_cli::error::CliError>(())
/// ```
///
/// # Errors
/// As [`connect`], and an Entra ID credential chain that cannot be set up.
pub fn connect_as(source: &EndpointSource, kind: Option<ServiceKind>) -> Result<TableServiceClient, CliError> {
    let options = Some(TableServiceClientOptions { service_kind: kind, ..Default::default() });
    let (client, origin) = match source {
        EndpointSource::ConnectionString { value, from_env } => (
            TableServiceClient::from_connection_string(value, options),
            if *from_env { CONNECTION_STRING_VAR } else { "--connection-string" },
        ),
        EndpointSource::Url(url) => (TableServiceClient::new(url, TableCredential::Anonymous, options), "--url"),
        EndpointSource::Entra(url) => {
            let credential = azure_identity::DeveloperToolsCredential::new(None)
                .map_err(|e| CliError::failed(format!("cannot set up the Entra ID credential chain: {e}")))?;
            (TableServiceClient::new(url, TableCredential::Entra(credential), options), "--url")
        }
    };
    client.map_err(|e| CliError::invalid(format!("invalid {origin}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Outcome;

    fn args(connection_string: Option<&str>, url: Option<&str>) -> EndpointArgs {
        EndpointArgs {
            connection_string: connection_string.map(Into::into),
            url: url.map(Into::into),
            ..Default::default()
        }
    }

    #[test]
    fn a_flag_wins_over_the_environment() {
        let env = Some("UseDevelopmentStorage=true".to_owned());
        let given = resolve(&args(Some("AccountName=a;AccountKey=a2V5"), None), env.clone()).unwrap();
        assert_eq!(
            given,
            EndpointSource::ConnectionString { value: "AccountName=a;AccountKey=a2V5".into(), from_env: false }
        );
        let url = resolve(&args(None, Some("https://a.table.core.windows.net/?sig=x")), env).unwrap();
        assert_eq!(url, EndpointSource::Url("https://a.table.core.windows.net/?sig=x".into()));
    }

    #[test]
    fn an_empty_variable_is_no_endpoint() {
        let err = resolve(&args(None, None), Some("  ".into())).unwrap_err();
        assert_eq!(err.outcome(), Outcome::InvalidInput);
        assert_eq!(
            err.to_string(),
            "no endpoint: give --connection-string or --url, or set AZURE_STORAGE_CONNECTION_STRING \
             (`UseDevelopmentStorage=true` for Azurite)"
        );
    }

    #[test]
    fn development_storage_is_azurite() {
        let source = EndpointSource::ConnectionString { value: "UseDevelopmentStorage=true".into(), from_env: true };
        let client = connect(&source).unwrap();
        assert_eq!(client.endpoint().url(), "http://127.0.0.1:10002/devstoreaccount1");
        assert_eq!(client.kind(), table_model::ServiceKind::Azurite);
    }

    #[test]
    fn a_sas_url_is_read_and_a_bad_one_names_its_origin() {
        let sas = "https://acme.table.core.windows.net/?sv=2019-02-02&ss=t&srt=sco&sp=rl&sig=abc%3D";
        let client = connect(&EndpointSource::Url(sas.into())).unwrap();
        assert_eq!(client.endpoint().url(), "https://acme.table.core.windows.net");

        let err = connect(&EndpointSource::Url("ftp://acme".into())).unwrap_err();
        assert_eq!(err.outcome(), Outcome::InvalidInput);
        assert!(err.to_string().starts_with("invalid --url: "), "{err}");
        let source = EndpointSource::ConnectionString { value: "AccountName=a;AccountKey=%%%".into(), from_env: true };
        let err = connect(&source).unwrap_err();
        assert!(err.to_string().starts_with("invalid AZURE_STORAGE_CONNECTION_STRING: "), "{err}");
    }

    #[test]
    fn entra_is_for_a_url() {
        let entra = EndpointArgs { auth: Some(Auth::Entra), ..args(None, Some("https://a.table.core.windows.net")) };
        assert_eq!(resolve(&entra, None).unwrap(), EndpointSource::Entra("https://a.table.core.windows.net".into()));
        let sas = EndpointArgs { auth: Some(Auth::Sas), ..args(None, Some("https://a.table.core.windows.net/?sig=x")) };
        assert_eq!(resolve(&sas, None).unwrap(), EndpointSource::Url("https://a.table.core.windows.net/?sig=x".into()));
        let alone = EndpointArgs { auth: Some(Auth::Entra), ..args(None, None) };
        let err = resolve(&alone, Some("UseDevelopmentStorage=true".into())).unwrap_err();
        assert_eq!(err.outcome(), Outcome::InvalidInput);
        assert!(err.to_string().starts_with("--auth entra needs --url"), "{err}");
        // The credential chain is set up without running anything; the client is of the URL's kind.
        let client = connect(&EndpointSource::Entra("https://a.table.cosmos.azure.com".into())).unwrap();
        assert_eq!(client.kind(), ServiceKind::CosmosDb);
    }

    #[test]
    fn the_service_kind_overrides_what_the_url_tells() {
        let url = EndpointSource::Url("https://acme.table.core.windows.net/?sig=x".into());
        assert_eq!(connect(&url).unwrap().kind(), ServiceKind::Storage);
        for kind in [Kind::Storage, Kind::Cosmos, Kind::Azurite] {
            let client = connect_as(&url, Some(kind.service_kind())).unwrap();
            assert_eq!(client.kind(), kind.service_kind());
        }
    }

    #[test]
    fn debug_hides_secrets() {
        let source = EndpointSource::ConnectionString { value: "AccountKey=c2VjcmV0".into(), from_env: false };
        assert!(!format!("{source:?}").contains("c2VjcmV0"));
        assert_eq!(format!("{:?}", EndpointSource::Url("https://a/?sig=s".into())), "Url(<hidden>)");
    }
}
