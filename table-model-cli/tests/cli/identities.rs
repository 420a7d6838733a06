//! The Microsoft Entra ID identities of `--auth` end to end: the built binary gets a token from each of
//! `azure_identity`'s workload credentials, for the scope of the service kind, and sends it to the table endpoint;
//! a missing or refused identity ends the run with status 3, naming the credential tried and why it failed.
//!
//! Everything is on loopback. One HTTPS server (its certificate made here and trusted through `SSL_CERT_FILE`, as
//! in `tests/entra.rs`) plays both Microsoft Entra ID (`AZURE_AUTHORITY_HOST`: `POST /{tenant}/oauth2/v2.0/token`)
//! and the table service (`GET /acct/Tables`). One plain HTTP server plays the managed identity endpoints: App
//! Service's (`IDENTITY_ENDPOINT`), and a VM's Instance Metadata Service, whose address is fixed
//! (`169.254.169.254`): the binary reaches it through `HTTP_PROXY`, which the server also plays. Each token the
//! servers issue says which credential asked for it and for which scope (`tok.<kind>.<scope>`), so the table
//! request's `Authorization` header tells both. The binary runs with an empty environment but for what each test
//! sets, so no identity of the machine's leaks in.

#![cfg(unix)]

use crate::support::TempDir;
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Output, Stdio};
use table_model::client::azure_core::http::Url;
use table_model_test_utils::loopback::{self, reply, Request as Seen};
use tokio::net::TcpListener;

const TENANT: &str = "tenant-1";
const CLIENT: &str = "client-1";
const SECRET: &str = "s3cret";
/// The Kubernetes service account token of the workload identity tests (the file AKS mounts).
const SERVICE_ACCOUNT_TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.k8s-service-account.sig";
/// The `IDENTITY_HEADER` of the App Service tests.
const IDENTITY_HEADER: &str = "app-service-header";
const STORAGE: &str = "https://storage.azure.com/.default";
const COSMOS: &str = "https://cosmos.azure.com/.default";

/// What the servers' handlers read of a request: its URL, query and form.
trait Parts {
    /// The target as a URL: a proxy's whole URL, or a path and query on `http://loopback`.
    fn url(&self) -> Url;
    /// The query's parameters, decoded.
    fn params(&self) -> HashMap<String, String>;
    /// The `application/x-www-form-urlencoded` body's fields.
    fn form(&self) -> HashMap<String, String>;
}

impl Parts for Seen {
    fn url(&self) -> Url {
        Url::parse(&self.target).or_else(|_| Url::parse(&format!("http://loopback{}", self.target))).unwrap()
    }

    fn params(&self) -> HashMap<String, String> {
        self.url().query_pairs().into_owned().collect()
    }

    fn form(&self) -> HashMap<String, String> {
        Url::parse(&format!("http://form/?{}", self.text())).unwrap().query_pairs().into_owned().collect()
    }
}

type Handler = fn(&Seen) -> (u16, String);

/// A loopback server ([`loopback::Server`]) answering with `handler` in JSON and recording each request. Dropping
/// it stops it.
struct Server {
    server: loopback::Server,
    /// The certificate, PEM, of an HTTPS server.
    certificate_pem: Option<String>,
}

impl Server {
    async fn start(tls: bool, handler: Handler) -> Server {
        let answer = move |request: &Seen| {
            let (status, body) = handler(request);
            let mut headers = vec![("content-type", "application/json")];
            if status == 403 {
                headers.push(("x-ms-error-code", "AuthorizationFailure"));
            }
            reply(status, &headers, body)
        };
        let server = if tls { loopback::Server::https(answer).await } else { loopback::Server::http(answer).await };
        let certificate_pem = server.certificate().map(loopback::Certificate::pem);
        Server { server, certificate_pem }
    }

    fn origin(&self) -> String {
        self.server.origin()
    }

    fn seen(&self) -> Vec<Seen> {
        self.server.seen()
    }

    /// The `Authorization` headers of the table requests.
    fn table_authorizations(&self) -> Vec<Option<String>> {
        let seen = self.seen();
        let tables = seen.iter().filter(|s| s.target.starts_with("/acct/"));
        tables.map(|s| s.header("authorization").map(str::to_owned)).collect()
    }

    /// The token requests.
    fn token_requests(&self) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| !s.target.starts_with("/acct/")).collect()
    }
}

/// Microsoft Entra ID's token endpoint and the table service, on one HTTPS server.
fn entra_and_tables(request: &Seen) -> (u16, String) {
    let url = request.url();
    if request.method == "GET" && url.path() == "/acct/Tables" {
        return match request.header("authorization") {
            Some(token) if token.starts_with("Bearer tok.") => (200, r#"{"value":[{"TableName":"People"}]}"#.into()),
            _ => (
                403,
                r#"{"odata.error":{"code":"AuthorizationFailure","message":{"lang":"en-US","value":"This request is not authorized to perform this operation."}}}"#.into(),
            ),
        };
    }
    let error = |status: u16, code: u32, description: &str| {
        let body = serde_json::json!({
            "error": "invalid_client", "error_description": format!("AADSTS{code}: {description}"), "error_codes": [code]
        });
        (status, body.to_string())
    };
    if request.method != "POST" || url.path() != format!("/{TENANT}/oauth2/v2.0/token") {
        return error(
            400,
            900023,
            "specified tenant identifier is neither a valid DNS name nor a valid external domain",
        );
    }
    let form = request.form();
    let field = |name: &str| form.get(name).map(String::as_str);
    if field("grant_type") != Some("client_credentials") || field("client_id") != Some(CLIENT) {
        return error(400, 700016, "application with identifier was not found in the directory");
    }
    let kind = match (field("client_secret"), field("client_assertion")) {
        (Some(SECRET), None) => "secret",
        (Some(_), None) => return error(401, 7000215, "invalid client secret provided"),
        (None, Some(SERVICE_ACCOUNT_TOKEN)) => "workload",
        (None, Some(assertion)) if certificate_assertion_is_valid(assertion) => "certificate",
        _ => return error(401, 700027, "client assertion failed signature validation"),
    };
    let token = format!("tok.{kind}.{}", field("scope").unwrap_or(""));
    let body =
        serde_json::json!({"token_type": "Bearer", "expires_in": 3600, "ext_expires_in": 3600, "access_token": token});
    (200, body.to_string())
}

/// A managed identity endpoint: App Service's (`/msi/token`, with its header) and IMDS's (a proxied
/// `http://169.254.169.254/metadata/identity/oauth2/token`, with `Metadata: true`). An identity named `unknown`
/// is not assigned: `400`, as the real ones answer.
fn managed_identities(request: &Seen) -> (u16, String) {
    let url = request.url();
    let kind = match (url.host_str(), url.path()) {
        (Some("169.254.169.254"), "/metadata/identity/oauth2/token") if request.header("metadata") == Some("true") => {
            "imds"
        }
        (Some("loopback"), "/msi/token") if request.header("x-identity-header") == Some(IDENTITY_HEADER) => {
            "appservice"
        }
        _ => return (404, String::new()),
    };
    let query = request.params();
    let id = ["client_id", "object_id", "msi_res_id", "mi_res_id"]
        .iter()
        .find_map(|name| query.get(*name).map(|v| format!("{name}={v}")))
        .unwrap_or_else(|| "system".to_owned());
    if id.ends_with("=unknown") || query.get("api-version").map(String::as_str) != Some("2019-08-01") {
        return (400, r#"{"error":"invalid_request","error_description":"Identity not found"}"#.into());
    }
    let resource = query.get("resource").cloned().unwrap_or_default();
    let expires_on = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 3600;
    let body = serde_json::json!({
        "access_token": format!("tok.{kind}-{id}.{resource}"), "expires_on": expires_on.to_string(),
        "resource": resource, "token_type": "Bearer"
    });
    (200, body.to_string())
}

/// Whether a client assertion is a JWT signed with the test's certificate key (checked by the
/// `client-certificate` test; any other build refuses it).
fn certificate_assertion_is_valid(assertion: &str) -> bool {
    #[cfg(feature = "client-certificate")]
    {
        certificate::verify(assertion)
    }
    #[cfg(not(feature = "client-certificate"))]
    {
        let _ = assertion;
        false
    }
}

/// The two servers, a directory of the test's own with the HTTPS server's certificate in it, and fake `az` and
/// `azd` that are not logged in (`--auth entra` falls back to them).
struct World {
    https: Server,
    http: Server,
    dir: TempDir,
}

impl World {
    async fn new(tag: &str) -> World {
        let https = Server::start(true, entra_and_tables).await;
        let http = Server::start(false, managed_identities).await;
        let dir = TempDir::new(&format!("tablectl-identities-{tag}"));
        std::fs::write(dir.join("server.pem"), https.certificate_pem.as_deref().unwrap()).unwrap();
        for (tool, message) in
            [("az", "ERROR: Please run 'az login' to setup account."), ("azd", "ERROR: not logged in")]
        {
            let path = dir.join(tool);
            std::fs::write(&path, format!("#!/bin/sh\necho \"{message}\" >&2\nexit 1\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        World { https, http, dir }
    }

    fn url(&self) -> String {
        format!("{}/acct", self.https.origin())
    }

    /// The variables of a service principal with a secret.
    fn service_principal(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AZURE_CLIENT_ID", CLIENT.into()),
            ("AZURE_TENANT_ID", TENANT.into()),
            ("AZURE_CLIENT_SECRET", SECRET.into()),
            ("AZURE_AUTHORITY_HOST", self.https.origin()),
        ]
    }

    /// The variables AKS sets for a workload identity.
    fn workload_identity(&self) -> Vec<(&'static str, String)> {
        let file = self.dir.join("service-account-token");
        std::fs::write(&file, SERVICE_ACCOUNT_TOKEN).unwrap();
        vec![
            ("AZURE_CLIENT_ID", CLIENT.into()),
            ("AZURE_TENANT_ID", TENANT.into()),
            ("AZURE_FEDERATED_TOKEN_FILE", file.display().to_string()),
            ("AZURE_AUTHORITY_HOST", self.https.origin()),
        ]
    }

    /// The variables App Service (Functions, Container Apps) sets.
    fn app_service(&self) -> Vec<(&'static str, String)> {
        vec![
            ("IDENTITY_ENDPOINT", format!("{}/msi/token", self.http.origin())),
            ("IDENTITY_HEADER", IDENTITY_HEADER.into()),
        ]
    }

    /// A VM: IMDS's address reached through the HTTP server as a proxy.
    fn vm(&self) -> Vec<(&'static str, String)> {
        vec![("HTTP_PROXY", self.http.origin())]
    }

    /// The binary with only `vars`, `PATH` (the fake `az` first) and the HTTPS server's certificate trusted.
    async fn tablectl(&self, vars: &[(&str, String)], args: &[&str]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tablectl"));
        command
            .args(args)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", self.dir.display()))
            .env("SSL_CERT_FILE", self.dir.join("server.pem"))
            .envs(vars.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
    }

    /// `tablectl --url <server> <auth...> --json tables`, expected to succeed; the `Authorization` it sent.
    async fn tables(&self, vars: &[(&str, String)], auth: &[&str]) -> String {
        let url = self.url();
        let args: Vec<&str> =
            ["--url", url.as_str()].into_iter().chain(auth.iter().copied()).chain(["--json", "tables"]).collect();
        let before = self.https.table_authorizations().len();
        let out = self.tablectl(vars, &args).await;
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "{\"table\":\"People\"}\n");
        let sent = self.https.table_authorizations();
        assert_eq!(sent.len(), before + 1, "{args:?}");
        sent[before].clone().expect("an Authorization header")
    }

    /// `tablectl --url <server> <auth...> tables`, expected to fail with status 3 having sent nothing to the table
    /// endpoint; its stderr.
    async fn refused(&self, vars: &[(&str, String)], auth: &[&str]) -> String {
        let url = self.url();
        let args: Vec<&str> =
            ["--url", url.as_str()].into_iter().chain(auth.iter().copied()).chain(["tables"]).collect();
        let before = self.https.table_authorizations().len();
        let out = self.tablectl(vars, &args).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert_eq!(self.https.table_authorizations().len(), before, "{args:?}: nothing is sent to the table service");
        stderr
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn a_service_principal_with_a_secret_gets_a_token_for_the_scope_of_the_service_kind() {
    let world = World::new("secret").await;
    let vars = world.service_principal();
    let sent = world.tables(&vars, &["--auth", "service-principal"]).await;
    assert_eq!(sent, format!("Bearer tok.secret.{STORAGE}"));
    let sent = world.tables(&vars, &["--auth", "service-principal", "--service-kind", "cosmos"]).await;
    assert_eq!(sent, format!("Bearer tok.secret.{COSMOS}"));
    // The environment describes it: `--auth entra` chooses it, and neither `az` nor IMDS is asked.
    let sent = world.tables(&vars, &["--auth", "entra"]).await;
    assert_eq!(sent, format!("Bearer tok.secret.{STORAGE}"));
    assert_eq!(world.http.seen().len(), 0);
    // The IDs on the command line win over the variables.
    let mut wrong = vars.clone();
    wrong[0].1 = "someone-else".into();
    wrong[1].1 = "elsewhere".into();
    let sent =
        world.tables(&wrong, &["--auth", "service-principal", "--client-id", CLIENT, "--tenant-id", TENANT]).await;
    assert_eq!(sent, format!("Bearer tok.secret.{STORAGE}"));
    let tokens = world.https.token_requests();
    assert_eq!(tokens.len(), 4);
    assert!(tokens.iter().all(|t| t.form().get("client_secret").map(String::as_str) == Some(SECRET)));
}

#[tokio::test]
async fn a_workload_identity_exchanges_the_service_account_token() {
    let world = World::new("workload").await;
    let vars = world.workload_identity();
    let sent = world.tables(&vars, &["--auth", "workload-identity"]).await;
    assert_eq!(sent, format!("Bearer tok.workload.{STORAGE}"));
    let sent = world.tables(&vars, &["--auth", "entra", "--service-kind", "cosmos"]).await;
    assert_eq!(sent, format!("Bearer tok.workload.{COSMOS}"));
    let tokens = world.https.token_requests();
    assert_eq!(tokens.len(), 2);
    let form = tokens[0].form();
    assert_eq!(
        form.get("client_assertion_type").map(String::as_str),
        Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    );
    assert_eq!(form.get("scope").map(String::as_str), Some(STORAGE));
}

#[tokio::test]
async fn an_app_service_managed_identity_is_system_or_user_assigned() {
    let world = World::new("appservice").await;
    let vars = world.app_service();
    let resource = STORAGE.trim_end_matches("/.default");
    let sent = world.tables(&vars, &["--auth", "managed-identity"]).await;
    assert_eq!(sent, format!("Bearer tok.appservice-system.{resource}"));
    let sent = world.tables(&vars, &["--auth", "managed-identity", "--client-id", "ua-1"]).await;
    assert_eq!(sent, format!("Bearer tok.appservice-client_id=ua-1.{resource}"));
    let sent = world.tables(&vars, &["--auth", "managed-identity", "--object-id", "oid-1"]).await;
    assert_eq!(sent, format!("Bearer tok.appservice-object_id=oid-1.{resource}"));
    // Chosen by the environment, for Cosmos DB's scope.
    let sent = world.tables(&vars, &["--auth", "entra", "--service-kind", "cosmos"]).await;
    assert_eq!(sent, format!("Bearer tok.appservice-system.{}", COSMOS.trim_end_matches("/.default")));
    assert_eq!(world.https.token_requests().len(), 0);
}

#[tokio::test]
async fn a_vm_managed_identity_comes_from_imds() {
    let world = World::new("imds").await;
    let vars = world.vm();
    let resource = STORAGE.trim_end_matches("/.default");
    let sent = world.tables(&vars, &["--auth", "managed-identity"]).await;
    assert_eq!(sent, format!("Bearer tok.imds-system.{resource}"));
    let id = "/subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/userAssignedIdentities/jobs";
    let sent = world.tables(&vars, &["--auth", "managed-identity", "--resource-id", id]).await;
    assert_eq!(sent, format!("Bearer tok.imds-msi_res_id={id}.{resource}"));
    let sent = world.tables(&vars, &["--auth", "managed-identity", "--service-kind", "cosmos"]).await;
    assert_eq!(sent, format!("Bearer tok.imds-system.{}", COSMOS.trim_end_matches("/.default")));
    // `--auth entra` on a VM with no developer tools logged in: `az` and `azd` fail, then IMDS answers.
    let sent = world.tables(&vars, &["--auth", "entra"]).await;
    assert_eq!(sent, format!("Bearer tok.imds-system.{resource}"));
}

#[tokio::test]
async fn a_refused_identity_is_status_3_naming_the_credential_and_the_reason() {
    let world = World::new("refused").await;
    let mut vars = world.service_principal();
    vars[2].1 = "wrong".into();
    let stderr = world.refused(&vars, &["--auth", "service-principal"]).await;
    assert!(
        stderr.contains(
            "ClientSecretCredential (client ID client-1, tenant tenant-1, secret from AZURE_CLIENT_SECRET): \
             AADSTS7000215: invalid client secret provided"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("wrong"), "the secret is never shown: {stderr}");

    let stderr = world.refused(&world.vm(), &["--auth", "managed-identity", "--client-id", "unknown"]).await;
    assert!(
        stderr.contains(
            "ManagedIdentityCredential (IMDS, user-assigned, client ID unknown): the requested identity has not been \
             assigned to this resource"
        ),
        "{stderr}"
    );
    // App Service takes no resource ID (azure_identity's own refusal, before any request).
    let id = "/subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/userAssignedIdentities/jobs";
    let asked = world.http.seen().len();
    let stderr = world.refused(&world.app_service(), &["--auth", "managed-identity", "--resource-id", id]).await;
    assert!(stderr.contains(&format!("/msi/token, user-assigned, resource ID {id}): ")), "{stderr}");
    assert!(stderr.contains("resource IDs aren't supported for App Service"), "{stderr}");
    assert_eq!(world.http.seen().len(), asked);
    let stderr = world.refused(&world.app_service(), &["--auth", "managed-identity", "--object-id", "unknown"]).await;
    assert!(stderr.contains("ManagedIdentityCredential (IDENTITY_ENDPOINT http://127.0.0.1:"), "{stderr}");
    assert!(stderr.contains("/msi/token, user-assigned, object ID unknown): the requested identity"), "{stderr}");

    // A workload identity whose token file holds another token: the exchange is refused; `--auth entra` then
    // tries the developer tools and IMDS (not there: the proxy refuses; asked for the user-assigned identity of
    // AZURE_CLIENT_ID, as the Azure SDKs' default chains do), and names each.
    let mut vars = world.workload_identity();
    std::fs::write(&vars[2].1, "another-token").unwrap();
    vars.push(("HTTP_PROXY", closed_port_url().await));
    let stderr = world.refused(&vars, &["--auth", "entra"]).await;
    let tried: Vec<&str> = stderr.lines().filter(|l| l.starts_with("  ")).collect();
    assert_eq!(tried.len(), 4, "{stderr}");
    assert!(
        tried[0].starts_with("  WorkloadIdentityCredential (client ID client-1, tenant tenant-1, token file `"),
        "{stderr}"
    );
    assert!(tried[0].contains("AADSTS700027"), "{stderr}");
    assert!(tried[1].starts_with("  AzureCliCredential (az): "), "{stderr}");
    assert!(tried[1].contains("az login"), "{stderr}");
    assert!(tried[2].starts_with("  AzureDeveloperCliCredential (azd): "), "{stderr}");
    assert!(
        tried[3]
            .starts_with("  ManagedIdentityCredential (IMDS, user-assigned, client ID client-1): no token within 2 s"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("no Microsoft Entra ID token for {STORAGE}; --auth entra tried:")), "{stderr}");
}

#[tokio::test]
async fn a_missing_identity_is_status_3_naming_what_is_missing() {
    let world = World::new("missing").await;
    let vars = vec![("AZURE_CLIENT_ID", CLIENT.to_owned())];
    let stderr = world.refused(&vars, &["--auth", "workload-identity"]).await;
    assert_eq!(
        stderr,
        "tablectl: --auth workload-identity found no identity to use: a workload identity needs --tenant-id or \
         AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE, which are not set\n"
    );
    let stderr = world.refused(&vars, &["--auth", "service-principal", "--tenant-id", TENANT]).await;
    assert!(stderr.contains("a service principal needs a secret (AZURE_CLIENT_SECRET) or a certificate"), "{stderr}");

    // No managed identity: IMDS does not answer (the proxy's port refuses), and its retries are cut short.
    let vars = vec![("HTTP_PROXY", closed_port_url().await)];
    let stderr = world.refused(&vars, &["--auth", "managed-identity"]).await;
    assert!(stderr.contains("ManagedIdentityCredential (IMDS, system-assigned): no token within 10 s"), "{stderr}");
    assert!(
        stderr.contains("the last request: GET http://169.254.169.254/metadata/identity/oauth2/token: "),
        "{stderr}"
    );

    // A certificate file that is not there.
    let mut vars = world.service_principal();
    vars.remove(2);
    let stderr = world.refused(&vars, &["--auth", "service-principal", "--certificate", "/nonexistent/sp.pfx"]).await;
    assert!(
        stderr.contains(
            "ClientCertificateCredential (client ID client-1, tenant tenant-1, certificate `/nonexistent/sp.pfx`): "
        ),
        "{stderr}"
    );
    // Without the `client-certificate` feature a certificate is refused as such; with it, the file is read.
    let why = if cfg!(feature = "client-certificate") {
        "cannot read `/nonexistent/sp.pfx`"
    } else {
        "built without client certificates"
    };
    assert!(stderr.contains(why), "{stderr}");
    assert_eq!(world.https.token_requests().len(), 0);
}

#[tokio::test]
async fn entra_options_are_usage_errors_out_of_place() {
    let world = World::new("usage").await;
    let url = world.url();
    for (args, message) in [
        (
            vec!["--url", url.as_str(), "--client-id", "c", "tables"],
            "--client-id is for a Microsoft Entra ID identity: give --auth entra, managed-identity, workload-identity \
             or service-principal",
        ),
        (
            vec!["--url", url.as_str(), "--auth", "managed-identity", "--client-id", "c", "--object-id", "o", "tables"],
            "--client-id and --object-id name one user-assigned managed identity each: give one of them",
        ),
        (
            vec!["--auth", "workload-identity", "tables"],
            "--auth workload-identity needs --url: the service's URL, such as https://acme.table.core.windows.net",
        ),
    ] {
        let out = world.tablectl(&[], &args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stderr), format!("tablectl: {message}\n"));
    }
}

/// `http://127.0.0.1:<port>` where nothing listens.
async fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// A service principal's certificate: an RSA key and certificate made here, in a PKCS #12 file made with the
/// `openssl` command (the feature builds OpenSSL; its command is assumed with it).
#[cfg(feature = "client-certificate")]
mod certificate {
    use super::*;
    use std::path::Path;
    use std::sync::OnceLock;
    use tokio_rustls::rustls;

    /// The key pair's public key (PKCS #1 `RSAPublicKey`, DER), for the server to verify assertions with.
    static PUBLIC_KEY: OnceLock<Vec<u8>> = OnceLock::new();

    /// Whether `assertion` is an RS256 JWT signed by the key of [`make`].
    pub(super) fn verify(assertion: &str) -> bool {
        use base64::Engine as _;
        let Some(public_key) = PUBLIC_KEY.get() else { return false };
        let Some((message, signature)) = assertion.rsplit_once('.') else { return false };
        let Ok(signature) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(signature) else { return false };
        let algorithm = rustls::crypto::ring::default_provider()
            .signature_verification_algorithms
            .mapping
            .iter()
            .find(|(scheme, _)| *scheme == rustls::SignatureScheme::RSA_PKCS1_SHA256)
            .map(|(_, algorithms)| algorithms[0])
            .unwrap();
        algorithm.verify_signature(public_key, message.as_bytes(), &signature).is_ok()
    }

    /// A PKCS #12 file with the key and its certificate, under `password`, in `dir`.
    pub(super) fn make(dir: &Path, password: &str) -> PathBuf {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_RSA_SHA256).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["tablectl-test".to_owned()]).unwrap().self_signed(&key).unwrap();
        PUBLIC_KEY.set(rcgen::PublicKeyData::der_bytes(&key).to_vec()).unwrap();
        std::fs::write(dir.join("sp.key"), loopback::pem("PRIVATE KEY", &key.serialize_der())).unwrap();
        std::fs::write(dir.join("sp.crt"), loopback::pem("CERTIFICATE", cert.der())).unwrap();
        let pfx = dir.join("sp.pfx");
        let status = Command::new("openssl")
            .args(["pkcs12", "-export", "-inkey", "sp.key", "-in", "sp.crt", "-out", "sp.pfx"])
            .arg("-passout")
            .arg(format!("pass:{password}"))
            .current_dir(dir)
            .status()
            .expect("the openssl command");
        assert!(status.success());
        pfx
    }

    #[tokio::test]
    async fn a_service_principal_with_a_certificate_signs_its_assertion() {
        let world = World::new("certificate").await;
        let pfx = make(&world.dir, "pfx-password");
        let mut vars = world.service_principal();
        vars.remove(2);
        vars.push(("AZURE_CLIENT_CERTIFICATE_PASSWORD", "pfx-password".into()));
        let path = pfx.display().to_string();
        let sent = world.tables(&vars, &["--auth", "service-principal", "--certificate", &path]).await;
        assert_eq!(sent, format!("Bearer tok.certificate.{STORAGE}"));
        vars.push(("AZURE_CLIENT_CERTIFICATE_PATH", path));
        let sent = world.tables(&vars, &["--auth", "entra", "--service-kind", "cosmos"]).await;
        assert_eq!(sent, format!("Bearer tok.certificate.{COSMOS}"));
        // The wrong password: the file cannot be read, nothing is sent.
        vars[3].1 = "wrong".into();
        let stderr = world.refused(&vars, &["--auth", "service-principal"]).await;
        assert!(
            stderr.contains("ClientCertificateCredential (client ID client-1, tenant tenant-1, certificate `"),
            "{stderr}"
        );
        assert!(stderr.contains("PKCS12"), "{stderr}");
    }
}
