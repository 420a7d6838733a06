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

use crate::support::TempDir;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use table_model_test_utils::loopback::{self, reply, Certificate, Request, Response};

const TOKEN: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.tablectl-test";

/// A loopback HTTPS server ([`loopback::Server`]) that answers `GET /Tables` for the right bearer token and `403`
/// otherwise. Dropping it stops it.
struct Server {
    server: loopback::Server,
    /// The certificate, PEM, for the client to trust.
    certificate_pem: String,
}

impl Server {
    async fn start() -> Server {
        let server = loopback::Server::https(answer).await;
        let certificate_pem = server.certificate().expect("an HTTPS server").pem();
        Server { server, certificate_pem }
    }

    fn url(&self) -> String {
        format!("{}/acct", self.server.origin())
    }

    /// Each request's `Authorization` header.
    fn authorizations(&self) -> Vec<Option<String>> {
        self.server.seen().iter().map(|r| r.header("authorization").map(str::to_owned)).collect()
    }
}

fn answer(request: &Request) -> Response {
    let json = ("content-type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
    if request.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        let body = r#"{"odata.error":{"code":"AuthorizationFailure","message":{"lang":"en-US","value":"This request is not authorized to perform this operation."}}}"#;
        reply(403, &[json, ("x-ms-error-code", "AuthorizationFailure")], body)
    } else if request.method == "GET" && request.path() == "/acct/Tables" {
        reply(200, &[json], r#"{"value":[{"TableName":"People"}]}"#)
    } else {
        reply(404, &[json, ("x-ms-error-code", "ResourceNotFound")], "")
    }
}

/// A directory of the test's own with a fake `az` in it, which appends its arguments to `az.log` and answers as
/// the Azure CLI does: with `token`, or, when `token` is `None`, with the error of a CLI that is not logged in
/// (and then a fake `azd` that is not logged in either).
fn fake_az(tag: &str, token: Option<&str>) -> TempDir {
    let dir = TempDir::new(&format!("tablectl-entra-{tag}"));
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
            let path = dir.join("other.pem");
            std::fs::write(&path, Certificate::unrelated().pem()).unwrap();
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
}
