//! Microsoft Entra ID identities for `--auth`: which of `azure_identity`'s credentials a run gets its tokens
//! from, chosen explicitly or by the environment the run is in (`docs/tablectl.md`, "Microsoft Entra ID").
//!
//! Every credential is `azure_identity`'s own; this module only chooses them, gives those that talk HTTP short
//! time limits, and, when several are tried, tries them in order and names each one with why it failed.
//!
//! - `--auth developer`: the Azure CLI (`az login`), then the Azure Developer CLI (`azd auth login`).
//! - `--auth managed-identity`: the managed identity of the Azure resource the run is on: App Service, Functions
//!   and Container Apps (`IDENTITY_ENDPOINT`, `IDENTITY_HEADER`), else a VM's (IMDS); system-assigned, or a
//!   user-assigned one by client ID, object ID or resource ID.
//! - `--auth workload-identity`: Microsoft Entra Workload ID on Kubernetes (`AZURE_FEDERATED_TOKEN_FILE`,
//!   `AZURE_CLIENT_ID`, `AZURE_TENANT_ID`).
//! - `--auth service-principal`: an application with a secret (`AZURE_CLIENT_SECRET`) or a certificate.
//! - `--auth entra`: the service principal, workload identity or managed identity the environment's variables
//!   describe, then the developer tools, then a VM's managed identity (IMDS, given a short while to answer).

use crate::endpoint::{Auth, EndpointArgs};
use crate::error::{CliError, Outcome};
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use table_model::client::azure_core;
use table_model::client::azure_core::credentials::{AccessToken, Secret, TokenCredential, TokenRequestOptions};
use table_model::client::azure_core::error::{Error as CoreError, ErrorKind as CoreErrorKind};
use table_model::client::azure_core::http::{
    AsyncRawResponse, ClientOptions, FixedRetryOptions, HttpClient, Request, RetryOptions, Transport,
};

/// How long a credential that talks HTTP (a service principal, a workload identity, a managed identity chosen
/// explicitly) may take to get a token, all its tries included.
pub const TOKEN_LIMIT: Duration = Duration::from_secs(10);

/// How long `--auth entra` waits for a VM's managed identity (IMDS), which no variable announces: off Azure, its
/// address does not answer at all.
pub const IMDS_PROBE_LIMIT: Duration = Duration::from_secs(2);

/// How long one HTTP request of a credential may take (then it is retried, within [`TOKEN_LIMIT`]).
pub const REQUEST_LIMIT: Duration = Duration::from_secs(5);

/// The client (application) ID of a service principal or workload identity, or of a user-assigned managed
/// identity: the variable the Azure SDKs read.
pub const AZURE_CLIENT_ID: &str = "AZURE_CLIENT_ID";
/// The tenant (directory) ID of a service principal or workload identity.
pub const AZURE_TENANT_ID: &str = "AZURE_TENANT_ID";
/// A service principal's client secret. Only read from the environment: a secret on the command line shows in
/// the process list.
pub const AZURE_CLIENT_SECRET: &str = "AZURE_CLIENT_SECRET";
/// A service principal's certificate: a PKCS #12 file (`.pfx`) with an RSA key.
pub const AZURE_CLIENT_CERTIFICATE_PATH: &str = "AZURE_CLIENT_CERTIFICATE_PATH";
/// The password of [`AZURE_CLIENT_CERTIFICATE_PATH`], if it has one.
pub const AZURE_CLIENT_CERTIFICATE_PASSWORD: &str = "AZURE_CLIENT_CERTIFICATE_PASSWORD";
/// The Kubernetes service account token a workload identity exchanges for an Entra ID token (set by AKS).
pub const AZURE_FEDERATED_TOKEN_FILE: &str = "AZURE_FEDERATED_TOKEN_FILE";
/// The managed identity endpoint of App Service, Functions and Container Apps (with `IDENTITY_HEADER`).
pub const IDENTITY_ENDPOINT: &str = "IDENTITY_ENDPOINT";
/// Set (without `IDENTITY_ENDPOINT`) where only a managed identity `azure_identity` does not support is offered
/// (Cloud Shell, Azure ML).
const MSI_ENDPOINT: &str = "MSI_ENDPOINT";

/// A user-assigned managed identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserAssigned {
    /// By its client ID (`--client-id`, or `AZURE_CLIENT_ID`).
    ClientId(String),
    /// By its object (principal) ID (`--object-id`).
    ObjectId(String),
    /// By its Azure resource ID (`--resource-id`; not on App Service).
    ResourceId(String),
}

impl fmt::Display for UserAssigned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UserAssigned::ClientId(id) => write!(f, "user-assigned, client ID {id}"),
            UserAssigned::ObjectId(id) => write!(f, "user-assigned, object ID {id}"),
            UserAssigned::ResourceId(id) => write!(f, "user-assigned, resource ID {id}"),
        }
    }
}

/// Where a managed identity's tokens come from, as `azure_identity` tells it from the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ManagedEndpoint {
    /// App Service, Functions, Container Apps: `IDENTITY_ENDPOINT` (the URL's value).
    AppService(String),
    /// A VM (or scale set): the Instance Metadata Service at `169.254.169.254`.
    Imds,
}

/// One identity to get a token from: which `azure_identity` credential, and what it is given.
#[derive(Clone, PartialEq, Eq)]
pub enum Source {
    /// `ClientSecretCredential`.
    ClientSecret {
        /// The tenant (directory) ID.
        tenant_id: String,
        /// The application's client ID.
        client_id: String,
        /// The client secret.
        secret: Secret,
    },
    /// `ClientCertificateCredential` (the `client-certificate` feature).
    ClientCertificate {
        /// The tenant (directory) ID.
        tenant_id: String,
        /// The application's client ID.
        client_id: String,
        /// A PKCS #12 file with the certificate and its RSA key.
        path: PathBuf,
        /// The file's password.
        password: Option<Secret>,
    },
    /// `WorkloadIdentityCredential`.
    WorkloadIdentity {
        /// The tenant (directory) ID.
        tenant_id: String,
        /// The client ID of the identity the service account is federated with.
        client_id: String,
        /// The service account token.
        token_file: PathBuf,
    },
    /// `ManagedIdentityCredential`.
    ManagedIdentity {
        /// Where it gets tokens.
        endpoint: ManagedEndpoint,
        /// A user-assigned identity, or `None` for the system-assigned one.
        id: Option<UserAssigned>,
    },
    /// `AzureCliCredential`: `az account get-access-token`.
    AzureCli,
    /// `AzureDeveloperCliCredential`: `azd auth token`.
    AzureDeveloperCli,
    /// A credential that the environment describes but that cannot be set up, and why (`--auth entra` names it
    /// among those tried).
    Unusable {
        /// The credential's name and what described it.
        name: String,
        /// Why it cannot be used.
        reason: String,
    },
}

impl fmt::Debug for Source {
    /// The name and what the credential is given, never a secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl Source {
    /// The credential's name (`azure_identity`'s type) and what it is given, as error messages name it.
    ///
    /// ```
    /// use table_model_cli::endpoint::identity::{ManagedEndpoint, Source, UserAssigned};
    /// let vm = Source::ManagedIdentity { endpoint: ManagedEndpoint::Imds, id: Some(UserAssigned::ClientId("c1".into())) };
    /// assert_eq!(vm.name(), "ManagedIdentityCredential (IMDS, user-assigned, client ID c1)");
    /// ```
    pub fn name(&self) -> String {
        match self {
            Source::ClientSecret { tenant_id, client_id, .. } => {
                format!("ClientSecretCredential (client ID {client_id}, tenant {tenant_id}, secret from {AZURE_CLIENT_SECRET})")
            }
            Source::ClientCertificate { tenant_id, client_id, path, .. } => format!(
                "ClientCertificateCredential (client ID {client_id}, tenant {tenant_id}, certificate `{}`)",
                path.display()
            ),
            Source::WorkloadIdentity { tenant_id, client_id, token_file } => format!(
                "WorkloadIdentityCredential (client ID {client_id}, tenant {tenant_id}, token file `{}`)",
                token_file.display()
            ),
            Source::ManagedIdentity { endpoint, id } => {
                let at = match endpoint {
                    ManagedEndpoint::AppService(url) => format!("{IDENTITY_ENDPOINT} {url}"),
                    ManagedEndpoint::Imds => "IMDS".to_owned(),
                };
                match id {
                    Some(id) => format!("ManagedIdentityCredential ({at}, {id})"),
                    None => format!("ManagedIdentityCredential ({at}, system-assigned)"),
                }
            }
            Source::AzureCli => "AzureCliCredential (az)".to_owned(),
            Source::AzureDeveloperCli => "AzureDeveloperCliCredential (azd)".to_owned(),
            Source::Unusable { name, .. } => name.clone(),
        }
    }
}

/// The identities a run tries, in order, and how long each may take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The `--auth` value, for messages.
    auth: Auth,
    /// Each source with its time limit (`None`: the developer tools, which run a program and wait for it).
    sources: Vec<(Source, Option<Duration>)>,
}

/// The environment's variables, as a function of their name (an empty value counts as unset).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

impl Identity {
    /// The identity `--auth` and the Entra ID options choose, reading the environment through `env`. A
    /// credential the environment does not provide for an explicit `--auth` (`workload-identity` without
    /// `AZURE_FEDERATED_TOKEN_FILE`, say) is an error here, status 3: nothing is sent.
    ///
    /// ```
    /// use table_model_cli::endpoint::{Auth, EndpointArgs};
    /// use table_model_cli::endpoint::identity::{Identity, Source};
    /// let env = |name: &str| (name == "AZURE_CLIENT_ID").then(|| "c1".to_owned());
    /// let identity = Identity::choose(Auth::Developer, &EndpointArgs::default(), &env)?;
    /// assert_eq!(identity.sources().collect::<Vec<_>>(), [&Source::AzureCli, &Source::AzureDeveloperCli]);
    /// # Ok::<(), table_model_cli::error::CliError>(())
    /// ```
    ///
    /// # Errors
    /// [`CliError`]: [`InvalidInput`](Outcome::InvalidInput) for options that do not go together (two IDs of
    /// one user-assigned identity, `--object-id` with a service principal); [`Unreachable`](Outcome::Unreachable)
    /// for an explicit credential the environment does not provide, naming what is missing.
    pub fn choose(auth: Auth, args: &EndpointArgs, env: Env<'_>) -> Result<Identity, CliError> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let client_id = args.client_id.clone().or_else(|| var(AZURE_CLIENT_ID));
        let tenant_id = args.tenant_id.clone().or_else(|| var(AZURE_TENANT_ID));
        let by_flag =
            [("--client-id", &args.client_id), ("--object-id", &args.object_id), ("--resource-id", &args.resource_id)];
        let given: Vec<&str> = by_flag.iter().filter(|(_, v)| v.is_some()).map(|(flag, _)| *flag).collect();
        if given.len() > 1 {
            return Err(CliError::invalid(format!(
                "{} name one user-assigned managed identity each: give one of them",
                given.join(" and ")
            )));
        }
        let user_assigned = match (&args.object_id, &args.resource_id, &client_id) {
            (Some(id), _, _) => Some(UserAssigned::ObjectId(id.clone())),
            (_, Some(id), _) => Some(UserAssigned::ResourceId(id.clone())),
            (_, _, Some(id)) => Some(UserAssigned::ClientId(id.clone())),
            _ => None,
        };
        let managed = |endpoint| Source::ManagedIdentity { endpoint, id: user_assigned.clone() };
        let app_service = var(IDENTITY_ENDPOINT);
        let imds_only = app_service.is_none() && var(MSI_ENDPOINT).is_none();
        let no_identity = |what: &str| {
            CliError::new(Outcome::Unreachable, format!("--auth {} found no identity to use: {what}", auth.name()))
        };
        let sources = match auth {
            Auth::Sas => Vec::new(),
            Auth::Developer => {
                application_flags(args, "the developer tools")?;
                user_assigned_flags(args, "developer")?;
                if args.client_id.is_some() {
                    return Err(CliError::invalid(
                        "--client-id is not for --auth developer: the identity is the one `az` or `azd` is logged in as",
                    ));
                }
                vec![(Source::AzureCli, None), (Source::AzureDeveloperCli, None)]
            }
            Auth::ManagedIdentity => {
                application_flags(args, "a managed identity")?;
                let endpoint = match app_service {
                    Some(url) => ManagedEndpoint::AppService(url),
                    None => ManagedEndpoint::Imds,
                };
                vec![(managed(endpoint), Some(TOKEN_LIMIT))]
            }
            Auth::WorkloadIdentity => {
                user_assigned_flags(args, "workload-identity")?;
                let source = workload_identity(client_id.clone(), tenant_id.clone(), var(AZURE_FEDERATED_TOKEN_FILE))
                    .map_err(|missing| no_identity(&missing))?;
                vec![(source, Some(TOKEN_LIMIT))]
            }
            Auth::ServicePrincipal => {
                user_assigned_flags(args, "service-principal")?;
                let source = service_principal(args, client_id.clone(), tenant_id.clone(), &var)
                    .unwrap_or_else(|| {
                        Err(format!(
                            "a service principal needs a secret ({AZURE_CLIENT_SECRET}) or a certificate \
                             (--certificate or {AZURE_CLIENT_CERTIFICATE_PATH}), and neither is set"
                        ))
                    })
                    .map_err(|missing| no_identity(&missing))?;
                vec![(source, Some(TOKEN_LIMIT))]
            }
            Auth::Entra => {
                let mut sources = Vec::new();
                let unusable = |name: &str, reason: String| Source::Unusable { name: name.to_owned(), reason };
                if let Some(source) = service_principal(args, client_id.clone(), tenant_id.clone(), &var) {
                    let name = match var(AZURE_CLIENT_SECRET) {
                        Some(_) => "ClientSecretCredential",
                        None => "ClientCertificateCredential",
                    };
                    let source = source.unwrap_or_else(|reason| unusable(name, reason));
                    sources.push((source, Some(TOKEN_LIMIT)));
                }
                if let Some(file) = var(AZURE_FEDERATED_TOKEN_FILE) {
                    let source = workload_identity(client_id.clone(), tenant_id.clone(), Some(file))
                        .unwrap_or_else(|reason| unusable("WorkloadIdentityCredential", reason));
                    sources.push((source, Some(TOKEN_LIMIT)));
                }
                if let Some(url) = app_service {
                    sources.push((managed(ManagedEndpoint::AppService(url)), Some(TOKEN_LIMIT)));
                }
                sources.push((Source::AzureCli, None));
                sources.push((Source::AzureDeveloperCli, None));
                if imds_only {
                    sources.push((managed(ManagedEndpoint::Imds), Some(IMDS_PROBE_LIMIT)));
                }
                sources
            }
        };
        Ok(Identity { auth, sources })
    }

    /// The sources tried, in order.
    pub fn sources(&self) -> impl Iterator<Item = &Source> {
        self.sources.iter().map(|(source, _)| source)
    }

    /// The credential the client gets its tokens from: each source's `azure_identity` credential, tried in order
    /// until one gives a token, which is then the only one asked again in the run.
    ///
    /// # Errors
    /// [`CliError`] ([`Unreachable`](Outcome::Unreachable)) when an explicit `--auth`'s credential cannot be set
    /// up (a certificate that cannot be read, say), naming it and why; nothing is sent.
    pub fn credential(&self) -> Result<Arc<dyn TokenCredential>, CliError> {
        let mut links = Vec::new();
        for (source, limit) in &self.sources {
            let trace = Arc::new(Mutex::new(None));
            let credential = match limit.map(|limit| client_options(limit, trace.clone())).transpose() {
                Ok(client_options) => build(source, client_options.unwrap_or_default()),
                Err(e) => Err(reason(&e)),
            };
            if let (Err(reason), false) = (&credential, self.auth == Auth::Entra) {
                return Err(CliError::new(Outcome::Unreachable, format!("{}: {reason}", source.name())));
            }
            links.push(Link { name: source.name(), credential, limit: *limit, trace });
        }
        Ok(Arc::new(Chain { auth: self.auth, links, chosen: AtomicUsize::new(usize::MAX) }))
    }
}

/// `--object-id` and `--resource-id` are for a managed identity only.
fn user_assigned_flags(args: &EndpointArgs, auth: &str) -> Result<(), CliError> {
    for (flag, value) in [("--object-id", &args.object_id), ("--resource-id", &args.resource_id)] {
        if value.is_some() {
            return Err(CliError::invalid(format!(
                "{flag} names a user-assigned managed identity, not the identity of --auth {auth}"
            )));
        }
    }
    Ok(())
}

/// `--tenant-id` and `--certificate` are for an application (a service principal, a workload identity).
fn application_flags(args: &EndpointArgs, what: &str) -> Result<(), CliError> {
    for (flag, given) in [("--tenant-id", args.tenant_id.is_some()), ("--certificate", args.certificate.is_some())] {
        if given {
            return Err(CliError::invalid(format!(
                "{flag} is for a service principal or workload identity, not {what}"
            )));
        }
    }
    Ok(())
}

/// The workload identity the variables describe, or what is missing.
fn workload_identity(
    client_id: Option<String>,
    tenant_id: Option<String>,
    token_file: Option<String>,
) -> Result<Source, String> {
    match (client_id, tenant_id, token_file) {
        (Some(client_id), Some(tenant_id), Some(file)) => {
            Ok(Source::WorkloadIdentity { tenant_id, client_id, token_file: file.into() })
        }
        (client_id, tenant_id, file) => Err(missing(
            "a workload identity",
            [
                (client_id.is_none(), "--client-id or AZURE_CLIENT_ID"),
                (tenant_id.is_none(), "--tenant-id or AZURE_TENANT_ID"),
                (file.is_none(), AZURE_FEDERATED_TOKEN_FILE),
            ],
        )),
    }
}

/// The service principal the options and variables describe (a secret first, as the Azure SDKs' environment
/// credential), `Err` with what is missing, or `None` when neither a secret nor a certificate is given.
fn service_principal(
    args: &EndpointArgs,
    client_id: Option<String>,
    tenant_id: Option<String>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Option<Result<Source, String>> {
    let secret = var(AZURE_CLIENT_SECRET);
    let certificate = args.certificate.clone().or_else(|| var(AZURE_CLIENT_CERTIFICATE_PATH).map(PathBuf::from));
    if secret.is_none() && certificate.is_none() {
        return None;
    }
    let (Some(client_id), Some(tenant_id)) = (client_id.clone(), tenant_id.clone()) else {
        return Some(Err(missing(
            "a service principal",
            [
                (client_id.is_none(), "--client-id or AZURE_CLIENT_ID"),
                (tenant_id.is_none(), "--tenant-id or AZURE_TENANT_ID"),
            ],
        )));
    };
    Some(Ok(match (certificate, secret) {
        // A certificate given on the command line wins over a secret in the environment.
        (Some(path), _) if args.certificate.is_some() => Source::ClientCertificate {
            tenant_id,
            client_id,
            path,
            password: var(AZURE_CLIENT_CERTIFICATE_PASSWORD).map(Secret::new),
        },
        (_, Some(secret)) => Source::ClientSecret { tenant_id, client_id, secret: Secret::new(secret) },
        (Some(path), None) => Source::ClientCertificate {
            tenant_id,
            client_id,
            path,
            password: var(AZURE_CLIENT_CERTIFICATE_PASSWORD).map(Secret::new),
        },
        (None, None) => unreachable!("one of them is given"),
    }))
}

/// `"<what> needs <a>, <b>"`: the names whose flag is set.
fn missing<const N: usize>(what: &str, names: [(bool, &str); N]) -> String {
    let names: Vec<&str> = names.iter().filter(|(missing, _)| *missing).map(|(_, name)| *name).collect();
    let verb = if names.len() == 1 { "is" } else { "are" };
    format!("{what} needs {}, which {verb} not set", names.join(" and "))
}

/// Options for a credential's HTTP pipeline: few retries, each request bounded by [`REQUEST_LIMIT`] (and `limit`),
/// what went wrong last kept in `trace`; sent by the table client's own transport (TLS included).
fn client_options(limit: Duration, trace: Arc<Mutex<Option<String>>>) -> Result<ClientOptions, CoreError> {
    let inner = table_model::client::default_http_client()?;
    let transport = Traced { inner, limit: limit.min(REQUEST_LIMIT), trace };
    Ok(ClientOptions {
        transport: Some(Transport::new(Arc::new(transport))),
        retry: RetryOptions::fixed(FixedRetryOptions {
            delay: azure_core::time::Duration::milliseconds(500),
            max_retries: 3,
            max_total_elapsed: azure_core::time::Duration::try_from(limit).unwrap_or(azure_core::time::Duration::MAX),
        }),
        ..Default::default()
    })
}

/// The `azure_identity` credential of a source.
fn build(source: &Source, client_options: ClientOptions) -> Result<Arc<dyn TokenCredential>, String> {
    use azure_identity as id;
    let why = |e: CoreError| reason(&e);
    let credential: Arc<dyn TokenCredential> = match source {
        Source::ClientSecret { tenant_id, client_id, secret } => id::ClientSecretCredential::new(
            tenant_id,
            client_id.clone(),
            secret.clone(),
            Some(id::ClientSecretCredentialOptions { client_options }),
        )
        .map_err(why)?,
        #[cfg(feature = "client-certificate")]
        Source::ClientCertificate { tenant_id, client_id, path, password } => {
            let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
            id::ClientCertificateCredential::new(
                tenant_id.clone(),
                client_id.clone(),
                azure_core::credentials::SecretBytes::new(bytes),
                Some(id::ClientCertificateCredentialOptions { client_options, password: password.clone() }),
            )
            .map_err(why)?
        }
        #[cfg(not(feature = "client-certificate"))]
        Source::ClientCertificate { .. } => {
            return Err("this tablectl is built without client certificates (the `client-certificate` feature, \
                        which builds OpenSSL); use a client secret or a workload identity, or build with \
                        `--features client-certificate`"
                .to_owned())
        }
        Source::WorkloadIdentity { tenant_id, client_id, token_file } => {
            id::WorkloadIdentityCredential::new(Some(id::WorkloadIdentityCredentialOptions {
                credential_options: id::ClientAssertionCredentialOptions { client_options },
                client_id: Some(client_id.clone()),
                tenant_id: Some(tenant_id.clone()),
                token_file_path: Some(token_file.clone()),
            }))
            .map_err(why)?
        }
        Source::ManagedIdentity { id, .. } => {
            let user_assigned_id = id.clone().map(|id| match id {
                UserAssigned::ClientId(id) => id::UserAssignedId::ClientId(id),
                UserAssigned::ObjectId(id) => id::UserAssignedId::ObjectId(id),
                UserAssigned::ResourceId(id) => id::UserAssignedId::ResourceId(id),
            });
            id::ManagedIdentityCredential::new(Some(id::ManagedIdentityCredentialOptions {
                user_assigned_id,
                client_options,
            }))
            .map_err(why)?
        }
        Source::AzureCli => id::AzureCliCredential::new(None).map_err(why)?,
        Source::AzureDeveloperCli => id::AzureDeveloperCliCredential::new(None).map_err(why)?,
        Source::Unusable { reason, .. } => return Err(reason.clone()),
    };
    Ok(credential)
}

/// An `azure_identity` error as a reason: without the credential's name (the message names it) and on one line.
fn reason(error: &CoreError) -> String {
    let text = error.to_string();
    let text = match text.split_once(" authentication failed.") {
        Some((name, rest)) if !name.contains(' ') => rest.trim_start(),
        _ => text.as_str(),
    };
    let lines: Vec<&str> = text.lines().map(|l| l.trim().trim_end_matches('.')).filter(|l| !l.is_empty()).collect();
    let text = lines.join("; ");
    let text = text.trim_end_matches('.');
    // The tool's style: a lowercase first word, unless it is an acronym or a name (`AADSTS7000215`, `CloudShell`,
    // `Azure Arc`: a capital inside the word or starting the next one).
    let mut words = text.split(' ');
    let first = words.next().unwrap_or("");
    let next_is_a_name = words.next().is_some_and(|w| w.starts_with(char::is_uppercase));
    let mut chars = first.chars();
    match chars.next() {
        Some(initial) if initial.is_uppercase() && !chars.any(char::is_uppercase) && !next_is_a_name => {
            initial.to_lowercase().chain(text[initial.len_utf8()..].chars()).collect()
        }
        _ => text.to_owned(),
    }
}

/// A time limit as messages say it: `10 s`, `0.5 s`.
fn seconds(limit: Duration) -> String {
    match limit.subsec_millis() {
        0 => format!("{} s", limit.as_secs()),
        _ => format!("{:.1} s", limit.as_secs_f64()),
    }
}

/// One credential to try: its name, the credential (or why it cannot be set up), its time limit, and what its
/// transport saw go wrong last.
struct Link {
    name: String,
    credential: Result<Arc<dyn TokenCredential>, String>,
    limit: Option<Duration>,
    trace: Arc<Mutex<Option<String>>>,
}

impl Link {
    /// A token, or why there is none.
    async fn token(&self, scopes: &[&str], options: Option<TokenRequestOptions<'_>>) -> Result<AccessToken, String> {
        let credential = self.credential.as_ref().map_err(Clone::clone)?;
        let Some(limit) = self.limit else {
            return credential.get_token(scopes, options).await.map_err(|e| reason(&e));
        };
        match tokio::time::timeout(limit, credential.get_token(scopes, options)).await {
            Ok(token) => token.map_err(|e| reason(&e)),
            Err(_) => {
                let last = self.trace.lock().map(|t| t.clone()).unwrap_or_default();
                Err(match last {
                    Some(last) => format!("no token within {}; the last request: {last}", seconds(limit)),
                    None => format!("no token within {}", seconds(limit)),
                })
            }
        }
    }
}

/// The credential of a run: its links tried in order until one gives a token; that one alone is asked after.
struct Chain {
    auth: Auth,
    links: Vec<Link>,
    /// The index of the link that gave a token, `usize::MAX` before one did.
    chosen: AtomicUsize,
}

impl fmt::Debug for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.links.iter().map(|link| &link.name)).finish()
    }
}

#[async_trait::async_trait]
impl TokenCredential for Chain {
    async fn get_token(
        &self,
        scopes: &[&str],
        options: Option<TokenRequestOptions<'_>>,
    ) -> azure_core::Result<AccessToken> {
        let failed = |message: String| Err(CoreError::with_message(CoreErrorKind::Credential, message));
        if let Some(link) = self.links.get(self.chosen.load(Ordering::Relaxed)) {
            return link.token(scopes, options).await.or_else(|why| failed(format!("{}: {why}", link.name)));
        }
        let mut tried = Vec::new();
        for (index, link) in self.links.iter().enumerate() {
            match link.token(scopes, options.clone()).await {
                Ok(token) => {
                    self.chosen.store(index, Ordering::Relaxed);
                    return Ok(token);
                }
                Err(why) => tried.push(format!("{}: {why}", link.name)),
            }
        }
        let scope = scopes.join(" ");
        match tried.as_slice() {
            [one] if self.auth != Auth::Entra => failed(format!("no Microsoft Entra ID token for {scope} from {one}")),
            _ => failed(format!(
                "no Microsoft Entra ID token for {scope}; --auth {} tried:\n  {}\n",
                self.auth.name(),
                tried.join("\n  ")
            )),
        }
    }
}

/// `azure_core`'s HTTP client, each request bounded in time, keeping what went wrong last (the method, the URL
/// without its query, the innermost error) for the message of a credential that ran out of time.
#[derive(Debug)]
struct Traced {
    inner: Arc<dyn HttpClient>,
    limit: Duration,
    trace: Arc<Mutex<Option<String>>>,
}

#[async_trait::async_trait]
impl HttpClient for Traced {
    async fn execute_request(&self, request: &Request) -> azure_core::Result<AsyncRawResponse> {
        let result = match tokio::time::timeout(self.limit, self.inner.execute_request(request)).await {
            Ok(result) => result,
            Err(_) => {
                Err(CoreError::with_message(CoreErrorKind::Io, format!("no answer within {}", seconds(self.limit))))
            }
        };
        let what = match &result {
            Ok(response) if !response.status().is_success() => Some(format!("status {}", u16::from(response.status()))),
            Ok(_) => None,
            Err(error) => {
                let mut innermost: &(dyn std::error::Error + 'static) = error;
                while let Some(source) = innermost.source() {
                    innermost = source;
                }
                Some(innermost.to_string())
            }
        };
        if let (Some(what), Ok(mut trace)) = (what, self.trace.lock()) {
            let mut url = request.url().clone();
            url.set_query(None);
            *trace = Some(format!("{} {url}: {what}", request.method()));
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    }

    fn names(identity: &Identity) -> Vec<String> {
        identity.sources().map(Source::name).collect()
    }

    #[test]
    fn entra_tries_what_the_environment_describes_then_the_developer_tools() {
        let args = EndpointArgs::default();
        let bare = Identity::choose(Auth::Entra, &args, &env(&[])).unwrap();
        assert_eq!(
            names(&bare),
            [
                "AzureCliCredential (az)",
                "AzureDeveloperCliCredential (azd)",
                "ManagedIdentityCredential (IMDS, system-assigned)"
            ]
        );
        let aks = env(&[
            ("AZURE_CLIENT_ID", "c1"),
            ("AZURE_TENANT_ID", "t1"),
            ("AZURE_FEDERATED_TOKEN_FILE", "/var/run/token"),
        ]);
        let pod = Identity::choose(Auth::Entra, &args, &aks).unwrap();
        assert_eq!(
            names(&pod)[..2],
            [
                "WorkloadIdentityCredential (client ID c1, tenant t1, token file `/var/run/token`)",
                "AzureCliCredential (az)"
            ]
        );
        let app = env(&[("IDENTITY_ENDPOINT", "http://localhost:8081/msi/token"), ("IDENTITY_HEADER", "h")]);
        let app = Identity::choose(Auth::Entra, &args, &app).unwrap();
        assert_eq!(
            names(&app),
            [
                "ManagedIdentityCredential (IDENTITY_ENDPOINT http://localhost:8081/msi/token, system-assigned)",
                "AzureCliCredential (az)",
                "AzureDeveloperCliCredential (azd)",
            ]
        );
        // A secret without its tenant is named among those tried, with what is missing.
        let half = Identity::choose(Auth::Entra, &args, &env(&[("AZURE_CLIENT_SECRET", "s")])).unwrap();
        assert_eq!(
            half.sources().next(),
            Some(&Source::Unusable {
                name: "ClientSecretCredential".into(),
                reason: "a service principal needs --client-id or AZURE_CLIENT_ID and --tenant-id or AZURE_TENANT_ID, \
                         which are not set"
                    .into()
            })
        );
    }

    #[test]
    fn an_explicit_identity_the_environment_lacks_is_status_3_naming_what_is_missing() {
        let args = EndpointArgs::default();
        let err = Identity::choose(Auth::WorkloadIdentity, &args, &env(&[("AZURE_CLIENT_ID", "c1")])).unwrap_err();
        assert_eq!(err.outcome(), Outcome::Unreachable);
        assert_eq!(
            err.to_string(),
            "--auth workload-identity found no identity to use: a workload identity needs --tenant-id or \
             AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE, which are not set"
        );
        let err = Identity::choose(Auth::ServicePrincipal, &args, &env(&[("AZURE_TENANT_ID", "t")])).unwrap_err();
        assert_eq!(err.outcome(), Outcome::Unreachable);
        assert!(err.to_string().contains("needs a secret (AZURE_CLIENT_SECRET) or a certificate"), "{err}");
    }

    #[test]
    fn a_managed_identity_is_system_assigned_or_named_by_one_id() {
        let vars = env(&[("AZURE_CLIENT_ID", "from-env")]);
        let by = |args: EndpointArgs| Identity::choose(Auth::ManagedIdentity, &args, &vars).map(|i| names(&i));
        assert_eq!(
            by(EndpointArgs::default()).unwrap(),
            ["ManagedIdentityCredential (IMDS, user-assigned, client ID from-env)"]
        );
        let object = EndpointArgs { object_id: Some("o1".into()), ..Default::default() };
        assert_eq!(by(object).unwrap(), ["ManagedIdentityCredential (IMDS, user-assigned, object ID o1)"]);
        let none = Identity::choose(Auth::ManagedIdentity, &EndpointArgs::default(), &env(&[])).unwrap();
        assert_eq!(names(&none), ["ManagedIdentityCredential (IMDS, system-assigned)"]);
        let two = EndpointArgs { client_id: Some("c".into()), resource_id: Some("/r".into()), ..Default::default() };
        let err = by(two).unwrap_err();
        assert_eq!(err.outcome(), Outcome::InvalidInput);
        assert_eq!(
            err.to_string(),
            "--client-id and --resource-id name one user-assigned managed identity each: give one of them"
        );
        let tenant = EndpointArgs { tenant_id: Some("t".into()), ..Default::default() };
        assert_eq!(by(tenant).unwrap_err().outcome(), Outcome::InvalidInput);
        let err = Identity::choose(
            Auth::ServicePrincipal,
            &EndpointArgs { object_id: Some("o".into()), ..Default::default() },
            &vars,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--object-id names a user-assigned managed identity, not the identity of --auth service-principal"
        );
    }

    #[test]
    fn a_service_principal_takes_a_secret_or_a_certificate_and_debug_hides_the_secret() {
        let vars = env(&[("AZURE_CLIENT_ID", "c1"), ("AZURE_TENANT_ID", "t1"), ("AZURE_CLIENT_SECRET", "hunter2")]);
        let secret = Identity::choose(Auth::ServicePrincipal, &EndpointArgs::default(), &vars).unwrap();
        assert_eq!(
            names(&secret),
            ["ClientSecretCredential (client ID c1, tenant t1, secret from AZURE_CLIENT_SECRET)"]
        );
        assert!(!format!("{secret:?}").contains("hunter2"));
        let args = EndpointArgs { certificate: Some("sp.pfx".into()), ..Default::default() };
        let certificate = Identity::choose(Auth::ServicePrincipal, &args, &vars).unwrap();
        assert_eq!(
            names(&certificate),
            ["ClientCertificateCredential (client ID c1, tenant t1, certificate `sp.pfx`)"]
        );
    }

    /// A credential that counts its calls and answers with a token, an error, or never.
    #[derive(Debug)]
    struct Fake {
        answer: Option<Result<&'static str, &'static str>>,
        calls: AtomicUsize,
    }

    #[async_trait::async_trait]
    impl TokenCredential for Fake {
        async fn get_token(&self, _: &[&str], _: Option<TokenRequestOptions<'_>>) -> azure_core::Result<AccessToken> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            match self.answer {
                Some(Ok(token)) => Ok(AccessToken::new(token, azure_core::time::OffsetDateTime::now_utc())),
                Some(Err(message)) => Err(CoreError::with_message(CoreErrorKind::Credential, message)),
                None => std::future::pending().await,
            }
        }
    }

    fn chain(auth: Auth, fakes: &[(&str, Arc<Fake>, Option<Duration>)]) -> Chain {
        let links = fakes.iter().map(|(name, fake, limit)| Link {
            name: (*name).to_owned(),
            credential: Ok(fake.clone() as Arc<dyn TokenCredential>),
            limit: *limit,
            trace: Arc::default(),
        });
        Chain { auth, links: links.collect(), chosen: AtomicUsize::new(usize::MAX) }
    }

    fn fake(answer: Option<Result<&'static str, &'static str>>) -> Arc<Fake> {
        Arc::new(Fake { answer, calls: AtomicUsize::new(0) })
    }

    #[tokio::test(start_paused = true)]
    async fn a_chain_keeps_the_first_link_that_gave_a_token_and_names_each_that_failed() {
        let (refused, silent, works) =
            (fake(Some(Err("AADSTS7000215: Invalid client secret provided."))), fake(None), fake(Some(Ok("t"))));
        let limit = Some(Duration::from_millis(500));
        let links = [("A", refused.clone(), limit), ("B", silent.clone(), limit), ("C", works.clone(), None)];
        let chain = chain(Auth::Entra, &links);
        for _ in 0..3 {
            let token = chain.get_token(&["https://storage.azure.com/.default"], None).await.unwrap();
            assert_eq!(token.token.secret(), "t");
        }
        let calls = [&refused, &silent, &works].map(|f| f.calls.load(Ordering::Relaxed));
        assert_eq!(calls, [1, 1, 3]);

        let chain = self::chain(Auth::Entra, &links[..2]);
        let err = chain.get_token(&["https://cosmos.azure.com/.default"], None).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "no Microsoft Entra ID token for https://cosmos.azure.com/.default; --auth entra tried:\n  \
             A: AADSTS7000215: Invalid client secret provided\n  B: no token within 0.5 s\n"
        );
        // One explicit identity: named in one line.
        let chain = self::chain(Auth::ManagedIdentity, &links[1..2]);
        let err = chain.get_token(&["https://storage.azure.com/.default"], None).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "no Microsoft Entra ID token for https://storage.azure.com/.default from B: no token within 0.5 s"
        );
    }

    #[test]
    fn reasons_read_as_the_tools_messages() {
        let error = CoreError::with_message(
            CoreErrorKind::Credential,
            "ManagedIdentityCredential authentication failed. The request failed: is a teapot\nTo troubleshoot, visit \
             https://aka.ms/azsdk/rust/identity/troubleshoot#managed-id",
        );
        assert_eq!(
            reason(&error),
            "the request failed: is a teapot; To troubleshoot, visit https://aka.ms/azsdk/rust/identity/troubleshoot#managed-id"
        );
        let az = CoreError::with_message(
            CoreErrorKind::Credential,
            "AzureCliCredential authentication failed. ERROR: Please run 'az login' to setup account.\nTo troubleshoot, visit \
             https://aka.ms/azsdk/rust/identity/troubleshoot#azure-cli",
        );
        for (message, expected) in [
            ("Azure Arc managed identity isn't supported", "Azure Arc managed identity isn't supported"),
            ("CloudShell managed identity isn't supported", "CloudShell managed identity isn't supported"),
            (
                "User-assigned resource IDs aren't supported for App Service.",
                "user-assigned resource IDs aren't supported for App Service",
            ),
        ] {
            assert_eq!(reason(&CoreError::with_message(CoreErrorKind::Credential, message)), expected);
        }
        assert_eq!(
            reason(&az),
            "ERROR: Please run 'az login' to setup account; To troubleshoot, visit \
             https://aka.ms/azsdk/rust/identity/troubleshoot#azure-cli"
        );
    }
}
