//! `--auth entra` end to end: the built binary gets a Microsoft Entra ID token from `azure_identity`'s developer
//! tools, the identity `--auth entra` falls back to when the environment describes no other (and `--auth
//! developer` names), and sends it to a loopback HTTPS server this test starts. The other identities are tested
//! in `tests/identities.rs`.
//!
//! The chain's first link runs `az account get-access-token -o json --scope <scope>` through `/bin/sh`; here `az`
//! is a script on `PATH` that records its arguments and prints a token as the Azure CLI does. The server's
//! certificate is made here, and the binary trusts it through `SSL_CERT_FILE` (its TLS verifier reads the
//! trusted roots from there when it is set, as OpenSSL does), so nothing but the certificate differs from a
//! real run. The server checks each request's `Authorization: Bearer <token>` and answers the table list.

#![cfg(unix)]

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio_rustls::rustls;
use tokio_rustls::TlsAcceptor;

const TOKEN: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.tablectl-test";

/// A loopback HTTPS server that answers `GET /Tables` for the right bearer token and `403` otherwise, and records
/// each request's `Authorization` header. Dropping it stops it.
struct Server {
    port: u16,
    /// The certificate, PEM, for the client to trust.
    certificate_pem: String,
    authorizations: Arc<Mutex<Vec<Option<String>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    async fn start() -> Server {
        let rcgen::CertifiedKey { cert, signing_key } =
            rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(signing_key.serialize_der().into());
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .unwrap();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let authorizations = Arc::new(Mutex::new(Vec::new()));
        let seen = authorizations.clone();
        let task = tokio::spawn(async move {
            // A bounded number of connections, each with a time limit: a stuck client cannot hang the test.
            for _ in 0..16 {
                let Ok((stream, _)) = listener.accept().await else { return };
                let (acceptor, seen) = (acceptor.clone(), seen.clone());
                tokio::spawn(async move {
                    let serve = async {
                        let Ok(tls) = acceptor.accept(stream).await else { return };
                        let service = service_fn(move |request| answer(request, seen.clone()));
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(tls), service)
                            .await;
                    };
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(20), serve).await;
                });
            }
        });
        Server { port, certificate_pem: pem(cert.der()), authorizations, task }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}/acct", self.port)
    }

    fn authorizations(&self) -> Vec<Option<String>> {
        self.authorizations.lock().unwrap().clone()
    }
}

/// A DER certificate as PEM, the form `SSL_CERT_FILE` holds.
fn pem(der: &[u8]) -> String {
    use base64::Engine as _;
    let base64 = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = base64.as_bytes().chunks(64).map(|l| std::str::from_utf8(l).unwrap()).collect();
    format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", lines.join("\n"))
}

async fn answer(
    request: hyper::Request<Incoming>,
    seen: Arc<Mutex<Vec<Option<String>>>>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    let _ = body.collect().await;
    let authorization = parts.headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    seen.lock().unwrap().push(authorization.clone());
    let response = hyper::Response::builder()
        .header("x-ms-version", "2019-02-02")
        .header("x-ms-request-id", "00000000-0000-0000-0000-000000000001")
        .header("content-type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
    let (status, code, body) = if authorization.as_deref() != Some(&format!("Bearer {TOKEN}")) {
        (
            403,
            "AuthorizationFailure",
            r#"{"odata.error":{"code":"AuthorizationFailure","message":{"lang":"en-US","value":"This request is not authorized to perform this operation."}}}"#,
        )
    } else if parts.method == "GET" && parts.uri.path() == "/acct/Tables" {
        (200, "", r#"{"value":[{"TableName":"People"}]}"#)
    } else {
        (404, "ResourceNotFound", "")
    };
    let response = if code.is_empty() { response } else { response.header("x-ms-error-code", code) };
    Ok(response.status(status).body(Full::new(Bytes::from(body))).unwrap())
}

/// A directory of the test's own with a fake `az` in it, which appends its arguments to `az.log` and answers as
/// the Azure CLI does: with `token`, or, when `token` is `None`, with the error of a CLI that is not logged in
/// (and then a fake `azd` that is not logged in either).
fn fake_az(tag: &str, token: Option<&str>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tablectl-entra-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("az.log");
    let answer = match token {
        Some(token) => format!(
            "printf '{{\"accessToken\":\"{token}\",\"expiresOn\":\"2099-01-01 00:00:00.000000\",\
             \"expires_on\":4070908800,\"tokenType\":\"Bearer\"}}\\n'"
        ),
        None => "echo \"ERROR: Please run 'az login' to setup account.\" >&2; exit 1".to_owned(),
    };
    let script = format!("#!/bin/sh\necho \"$*\" >> '{}'\n{answer}\n", log.display());
    let mut tools = vec![("az", script)];
    if token.is_none() {
        // Whatever `azd` the machine has, the chain's second link fails too.
        tools.push((
            "azd",
            "#!/bin/sh\necho 'ERROR: not logged in, run `azd auth login` to login' >&2\nexit 1\n".into(),
        ));
    }
    for (name, script) in tools {
        let path = dir.join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// The binary with `dir` first on `PATH` and `certificate` as its trusted roots
/// (`None`: a certificate of no server).
async fn tablectl(dir: &Path, certificate: Option<&Path>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tablectl"));
    command
        .args(args)
        .env("PATH", format!("{}:/usr/bin:/bin", dir.display()))
        .env_remove("AZURE_STORAGE_CONNECTION_STRING")
        .env_remove("SSL_CERT_DIR")
        .stdin(Stdio::null());
    match certificate {
        Some(path) => command.env("SSL_CERT_FILE", path),
        // Another certificate: the server's is not trusted.
        None => {
            let other = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
            let path = dir.join("other.pem");
            std::fs::write(&path, pem(other.cert.der())).unwrap();
            command.env("SSL_CERT_FILE", path)
        }
    };
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn a_token_from_az_is_sent_for_the_scope_of_the_service_kind() {
    let server = Server::start().await;
    let dir = fake_az("token", Some(TOKEN));
    let certificate = dir.join("server.pem");
    std::fs::write(&certificate, &server.certificate_pem).unwrap();
    let url = server.url();

    let out = tablectl(&dir, Some(&certificate), &["--url", &url, "--auth", "entra", "--json", "tables"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "{\"table\":\"People\"}\n");
    assert_eq!(server.authorizations(), [Some(format!("Bearer {TOKEN}"))]);

    // The same server played as Cosmos DB: the token is asked for Cosmos DB's scope.
    let args = ["--url", &url, "--auth", "entra", "--service-kind", "cosmos", "tables"];
    let out = tablectl(&dir, Some(&certificate), &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(dir.join("az.log")).unwrap();
    assert_eq!(
        log,
        "account get-access-token -o json --scope https://storage.azure.com/.default\n\
         account get-access-token -o json --scope https://cosmos.azure.com/.default\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn no_token_or_no_trust_exits_3_and_says_why() {
    let server = Server::start().await;
    let url = server.url();

    // Neither `az` nor `azd` is logged in: nothing is sent.
    let dir = fake_az("nologin", None);
    let certificate = dir.join("server.pem");
    std::fs::write(&certificate, &server.certificate_pem).unwrap();
    let out = tablectl(&dir, Some(&certificate), &["--url", &url, "--auth", "entra", "tables"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("az login"), "{stderr}");
    assert_eq!(server.authorizations(), Vec::<Option<String>>::new());

    // A token, but a server whose certificate is not trusted: the handshake fails, nothing is answered.
    let dir = fake_az("untrusted", Some(TOKEN));
    let out = tablectl(&dir, None, &["--url", &url, "--auth", "entra", "tables"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("TLS handshake"), "{}", text(&out.stderr));
    assert_eq!(server.authorizations(), Vec::<Option<String>>::new());

    // `--auth entra` is for `--url`.
    let out = tablectl(&dir, None, &["--auth", "entra", "tables"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "tablectl: --auth entra needs --url: the service's URL, such as https://acme.table.core.windows.net\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
