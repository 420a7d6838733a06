//! Which service a run talks to: `--connection-string`, `--url` (with a SAS in its query, none for public access,
//! or a Microsoft Entra ID token with `--auth entra` and the other identities of [`Auth`]), or the
//! `AZURE_STORAGE_CONNECTION_STRING` environment variable, in that order. A connection string may be
//! `UseDevelopmentStorage=true` for Azurite on its default port. `--service-kind` says which implementation the
//! endpoint is when its URL does not tell.
//!
//! Entra ID tokens come from `azure_identity`'s credentials, chosen by [`identity`]: each asked
//! for a token of the service kind's scope (`docs/rules.md` §13.2).
//!
//! Layer: parts.

use crate::error::CliError;
pub mod identity;

use self::identity::Identity;
use clap::ValueEnum;
use std::path::PathBuf;
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
    /// How to authorize with --url: the SAS in its query, or a Microsoft Entra ID token of an identity, named or
    /// (`entra`) the one the environment describes [default: sas]
    #[arg(long, global = true, value_enum, value_name = "AUTH")]
    pub auth: Option<Auth>,
    /// The client (application) ID of the service principal or workload identity, or of a user-assigned managed
    /// identity [default: $AZURE_CLIENT_ID]
    #[arg(long, global = true, value_name = "ID", help_heading = "Microsoft Entra ID")]
    pub client_id: Option<String>,
    /// The tenant (directory) ID of the service principal or workload identity [default: $AZURE_TENANT_ID]
    #[arg(long, global = true, value_name = "ID", help_heading = "Microsoft Entra ID")]
    pub tenant_id: Option<String>,
    /// A user-assigned managed identity, by its object (principal) ID
    #[arg(long, global = true, value_name = "ID", help_heading = "Microsoft Entra ID")]
    pub object_id: Option<String>,
    /// A user-assigned managed identity, by its Azure resource ID (not on App Service)
    #[arg(long, global = true, value_name = "ID", help_heading = "Microsoft Entra ID")]
    pub resource_id: Option<String>,
    /// The service principal's certificate: a PKCS #12 file (.pfx) with an RSA key; its password, if any, in
    /// $AZURE_CLIENT_CERTIFICATE_PASSWORD (a secret is only read from $AZURE_CLIENT_SECRET) [default:
    /// $AZURE_CLIENT_CERTIFICATE_PATH]
    #[arg(long, global = true, value_name = "FILE", help_heading = "Microsoft Entra ID")]
    pub certificate: Option<PathBuf>,
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
    /// A Microsoft Entra ID token from the identity the environment describes (a service principal, a workload
    /// identity, an App Service managed identity), else the developer tools, else a VM's managed identity
    Entra,
    /// A Microsoft Entra ID token of the Azure resource's managed identity (App Service, Functions, Container
    /// Apps, VMs)
    ManagedIdentity,
    /// A Microsoft Entra ID token of a Kubernetes workload identity (AKS)
    WorkloadIdentity,
    /// A Microsoft Entra ID token of an application, with a client secret or a certificate
    ServicePrincipal,
    /// A Microsoft Entra ID token from the developer tools: the Azure CLI, then the Azure Developer CLI
    Developer,
}

impl Auth {
    /// The value as `--auth` takes it.
    ///
    /// ```
    /// assert_eq!(table_model_cli::endpoint::Auth::ManagedIdentity.name(), "managed-identity");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Auth::Sas => "sas",
            Auth::Entra => "entra",
            Auth::ManagedIdentity => "managed-identity",
            Auth::WorkloadIdentity => "workload-identity",
            Auth::ServicePrincipal => "service-principal",
            Auth::Developer => "developer",
        }
    }
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
    /// A URL whose requests carry a Microsoft Entra ID token of the identity (`--auth` other than `sas`).
    Entra {
        /// The service's URL.
        url: String,
        /// Where tokens come from.
        identity: Identity,
    },
}

impl std::fmt::Debug for EndpointSource {
    /// Never shows a key or a signature.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EndpointSource::ConnectionString { from_env, .. } => {
                f.debug_struct("ConnectionString").field("from_env", from_env).finish_non_exhaustive()
            }
            EndpointSource::Url(_) => f.write_str("Url(<hidden>)"),
            EndpointSource::Entra { url, identity } => {
                f.debug_struct("Entra").field("url", url).field("identity", identity).finish()
            }
        }
    }
}

/// Picks the endpoint: `--url` (with Entra ID when `--auth` is not `sas`), else `--connection-string`, else the
/// environment's connection string (an empty variable counts as unset). `env` is the value of
/// [`CONNECTION_STRING_VAR`]; an Entra ID identity reads the process's environment ([`identity`]).
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
/// [`CliError`] ([`InvalidInput`](crate::error::Outcome::InvalidInput)) when no endpoint is given, an Entra ID
/// `--auth` or option without `--url`, or Entra ID options that do not go together; as
/// [`Identity::choose`] for an identity the environment does not provide.
pub fn resolve(args: &EndpointArgs, env: Option<String>) -> Result<EndpointSource, CliError> {
    resolve_in(args, env, &|name| std::env::var(name).ok())
}

/// As [`resolve`], with the environment's variables read through `vars`.
///
/// ```
/// use table_model_cli::endpoint::{resolve_in, Auth, EndpointArgs, EndpointSource};
/// let args = EndpointArgs { url: Some("https://a.table.core.windows.net".into()), auth: Some(Auth::ManagedIdentity), ..Default::default() };
/// let EndpointSource::Entra { identity, .. } = resolve_in(&args, None, &|_| None)? else { unreachable!() };
/// assert_eq!(identity.sources().next().unwrap().name(), "ManagedIdentityCredential (IMDS, system-assigned)");
/// # Ok::<(), table_model_cli::error::CliError>(())
/// ```
///
/// # Errors
/// As [`resolve`].
pub fn resolve_in(
    args: &EndpointArgs,
    env: Option<String>,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<EndpointSource, CliError> {
    let auth = args.auth.unwrap_or(Auth::Sas);
    if auth == Auth::Sas {
        let entra_options = [
            ("--client-id", args.client_id.is_some()),
            ("--tenant-id", args.tenant_id.is_some()),
            ("--object-id", args.object_id.is_some()),
            ("--resource-id", args.resource_id.is_some()),
            ("--certificate", args.certificate.is_some()),
        ];
        if let Some((flag, _)) = entra_options.iter().find(|(_, given)| *given) {
            return Err(CliError::invalid(format!(
                "{flag} is for a Microsoft Entra ID identity: give --auth entra, managed-identity, \
                 workload-identity or service-principal"
            )));
        }
    }
    if let Some(url) = &args.url {
        return Ok(match auth {
            Auth::Sas => EndpointSource::Url(url.clone()),
            auth => EndpointSource::Entra { url: url.clone(), identity: Identity::choose(auth, args, vars)? },
        });
    }
    if auth != Auth::Sas {
        return Err(CliError::invalid(format!(
            "--auth {} needs --url: the service's URL, such as https://acme.table.core.windows.net",
            auth.name()
        )));
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
/// and the Entra ID scope. For an Entra ID `--auth`, the identity's credentials are set up here; they get a
/// token at the first request.
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
/// As [`connect`], and an Entra ID credential that cannot be set up ([`Identity::credential`]).
pub fn connect_as(source: &EndpointSource, kind: Option<ServiceKind>) -> Result<TableServiceClient, CliError> {
    connect_with(source, TableServiceClientOptions { service_kind: kind, ..Default::default() })
}

/// As [`connect_as`], with the client's options (its kind, its tracer provider, its per-try timeout).
///
/// # Errors
/// As [`connect_as`].
pub fn connect_with(
    source: &EndpointSource,
    options: TableServiceClientOptions,
) -> Result<TableServiceClient, CliError> {
    let options = Some(options);
    let (client, origin) = match source {
        EndpointSource::ConnectionString { value, from_env } => (
            TableServiceClient::from_connection_string(value, options),
            if *from_env { CONNECTION_STRING_VAR } else { "--connection-string" },
        ),
        EndpointSource::Url(url) => (TableServiceClient::new(url, TableCredential::Anonymous, options), "--url"),
        EndpointSource::Entra { url, identity } => {
            (TableServiceClient::new(url, TableCredential::Entra(identity.credential()?), options), "--url")
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
        let source = resolve_in(&entra, None, &|_| None).unwrap();
        assert!(matches!(&source, EndpointSource::Entra { url, .. } if url == "https://a.table.core.windows.net"));
        let sas = EndpointArgs { auth: Some(Auth::Sas), ..args(None, Some("https://a.table.core.windows.net/?sig=x")) };
        assert_eq!(resolve(&sas, None).unwrap(), EndpointSource::Url("https://a.table.core.windows.net/?sig=x".into()));
        let alone = EndpointArgs { auth: Some(Auth::Entra), ..args(None, None) };
        let err = resolve(&alone, Some("UseDevelopmentStorage=true".into())).unwrap_err();
        assert_eq!(err.outcome(), Outcome::InvalidInput);
        assert!(err.to_string().starts_with("--auth entra needs --url"), "{err}");
        // The credentials are set up without running anything; the client is of the URL's kind.
        let cosmos = EndpointArgs { url: Some("https://a.table.cosmos.azure.com".into()), ..entra };
        let client = connect(&resolve_in(&cosmos, None, &|_| None).unwrap()).unwrap();
        assert_eq!(client.kind(), ServiceKind::CosmosDb);
        // An Entra ID option without an Entra ID `--auth` is a usage error, as an Entra ID `--auth` without `--url`.
        let sas = EndpointArgs { client_id: Some("c".into()), ..args(None, Some("https://a.table.core.windows.net")) };
        let err = resolve_in(&sas, None, &|_| None).unwrap_err();
        assert_eq!(err.outcome(), Outcome::InvalidInput);
        assert_eq!(
            err.to_string(),
            "--client-id is for a Microsoft Entra ID identity: give --auth entra, managed-identity, workload-identity \
             or service-principal"
        );
        let alone = EndpointArgs { auth: Some(Auth::ManagedIdentity), ..args(None, None) };
        let err = resolve_in(&alone, None, &|_| None).unwrap_err();
        assert!(err.to_string().starts_with("--auth managed-identity needs --url"), "{err}");
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
