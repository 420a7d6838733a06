//! Loopback HTTP servers, on 127.0.0.1 only, HTTP/1.1 with keep-alive (hyper), each answering every request with
//! a handler, a plain function of the [`Request`] as received:
//!
//! - [`Server`]: a test's server, on the test's own runtime. It records every request, serves a bounded number of
//!   connections each within a time limit (a stuck client cannot hang the test) and stops when dropped. With the
//!   `tls` feature, [`Server::https`] serves HTTPS with a certificate made for the run, which the test's client
//!   trusts ([`Server::certificate`]): what a bearer token needs, since `azure_core` sends tokens over TLS only.
//! - [`serve_child`] and [`ChildServer`]: a benchmark's server, the benchmark's own binary started again as a
//!   child process, so that the server's work is not counted in the benchmark's instructions under callgrind. It
//!   records nothing, has no limits, and exits when the benchmark closes its standard input. With the `bare`
//!   feature, [`Bare`] is the benchmarks' baseline client of it: a bare `reqwest` call.
//!
//! Layer: base.

use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

pub use hyper::body::Bytes;

mod alarm;

/// A test's server stops accepting after this many connections (a client keeps one or a few alive).
pub const MAX_CONNECTIONS: usize = 64;
/// A connection of a test's server that takes longer than this (handshake and every request on it) is dropped.
pub const CONNECTION_LIMIT: Duration = Duration::from_secs(30);
/// A benchmark's child server exits after this long, if its parent has not closed its standard input before.
pub const CHILD_LIMIT: Duration = Duration::from_secs(60 * 60);

/// A request as the server received it: the head and the whole body.
#[derive(Clone, Debug)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: http::Method,
    /// The request target as sent: a path and query (`/acct/Tables?$top=1`), or for a proxy the whole URL.
    pub target: String,
    /// The headers as sent.
    pub headers: http::HeaderMap,
    /// The body, whole.
    pub body: Bytes,
}

impl Request {
    /// The value of the header `name`, when it is there and visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The target's path: what is before the `?`.
    pub fn path(&self) -> &str {
        self.target.split_once('?').map_or(&self.target, |(path, _)| path)
    }

    /// The target's query: what is after the `?`, still percent-encoded; empty without one.
    pub fn query(&self) -> &str {
        self.target.split_once('?').map_or("", |(_, query)| query)
    }

    /// The body as text, any invalid UTF-8 replaced.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A server's answer to one request.
pub type Response = http::Response<Bytes>;

/// How a server answers: a function of the request, its response and how long to wait before sending it.
type Handler = Arc<dyn Fn(&Request) -> (Response, Duration) + Send + Sync>;

/// What a handler returns: a [`Response`], sent at once, or a response and how long after its request was
/// read to send it (`(Response, Duration)`): the time a service takes to answer, its handling included, spent
/// without holding up other connections.
pub trait Answer {
    /// The response and its delay.
    fn into_answer(self) -> (Response, Duration);
}

impl Answer for Response {
    fn into_answer(self) -> (Response, Duration) {
        (self, Duration::ZERO)
    }
}

impl Answer for (Response, Duration) {
    fn into_answer(self) -> (Response, Duration) {
        self
    }
}

/// A handler returning any [`Answer`], as the servers keep it.
fn handler<A: Answer>(handler: impl Fn(&Request) -> A + Send + Sync + 'static) -> Handler {
    Arc::new(move |request| handler(request).into_answer())
}

/// A response with the headers every Table service response carries (`x-ms-version`, `x-ms-request-id`), then
/// `headers`, and the body.
///
/// # Panics
/// When a header name or value is not valid HTTP.
pub fn reply(status: u16, headers: &[(&str, &str)], body: impl Into<Bytes>) -> Response {
    let mut response = http::Response::builder()
        .status(status)
        .header("x-ms-version", "2019-02-02")
        .header("x-ms-request-id", "00000000-0000-0000-0000-000000000001");
    for (name, value) in headers {
        response = response.header(*name, *value);
    }
    response.body(body.into()).expect("valid headers")
}

// ------------------------------------------------------------------------------------------------------------
// A test's server

/// A loopback server on the test's runtime that answers with its handler and records every request. Dropping it
/// stops it and every connection.
#[derive(Debug)]
pub struct Server {
    port: u16,
    #[cfg(feature = "tls")]
    certificate: Option<Certificate>,
    seen: Arc<Mutex<Vec<Request>>>,
    connections: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        // The accept loop owns the connections' JoinSet: aborting it aborts them all.
        self.task.abort();
    }
}

/// How a test's server accepts a connection.
#[derive(Clone)]
enum Acceptor {
    Plain,
    #[cfg(feature = "tls")]
    Tls(tokio_rustls::TlsAcceptor),
}

impl Server {
    /// A plain HTTP server answering with `handler`.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn http<A: Answer>(handler: impl Fn(&Request) -> A + Send + Sync + 'static) -> Server {
        Server::start(Acceptor::Plain, self::handler(handler)).await
    }

    /// An HTTPS server answering with `handler`, with a self-signed certificate for `127.0.0.1` and `localhost`
    /// made for it ([`Server::certificate`]).
    ///
    /// # Panics
    /// When no certificate can be made or no loopback port bound.
    #[cfg(feature = "tls")]
    pub async fn https<A: Answer>(handler: impl Fn(&Request) -> A + Send + Sync + 'static) -> Server {
        let (certificate, acceptor) = Certificate::self_signed();
        let mut server = Server::start(Acceptor::Tls(acceptor), self::handler(handler)).await;
        server.certificate = Some(certificate);
        server
    }

    async fn start(acceptor: Acceptor, handler: Handler) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let port = listener.local_addr().expect("bound").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let task = tokio::spawn(accept_loop(listener, acceptor, handler, seen.clone(), connections.clone()));
        Server {
            port,
            #[cfg(feature = "tls")]
            certificate: None,
            seen,
            connections,
            task,
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>`, or `https://` for an HTTPS server.
    pub fn origin(&self) -> String {
        #[cfg(feature = "tls")]
        let scheme = if self.certificate.is_some() { "https" } else { "http" };
        #[cfg(not(feature = "tls"))]
        let scheme = "http";
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// Every request so far, in the order they were answered.
    pub fn seen(&self) -> Vec<Request> {
        self.seen.lock().expect("not poisoned").clone()
    }

    /// How many connections were accepted so far (a TLS handshake that failed counts).
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// The certificate of an HTTPS server, for the client to trust; `None` for a plain one.
    #[cfg(feature = "tls")]
    pub fn certificate(&self) -> Option<&Certificate> {
        self.certificate.as_ref()
    }
}

impl std::fmt::Debug for Acceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Acceptor::Plain => f.write_str("Plain"),
            #[cfg(feature = "tls")]
            Acceptor::Tls(_) => f.write_str("Tls"),
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: Acceptor,
    handler: Handler,
    seen: Arc<Mutex<Vec<Request>>>,
    connections: Arc<AtomicUsize>,
) {
    let mut tasks = JoinSet::new();
    while connections.load(Ordering::SeqCst) < MAX_CONNECTIONS {
        // An accept error (out of file descriptors) ends the server rather than spinning.
        let Ok((stream, _)) = listener.accept().await else { break };
        connections.fetch_add(1, Ordering::SeqCst);
        let (acceptor, handler, seen) = (acceptor.clone(), handler.clone(), seen.clone());
        tasks.spawn(async move {
            let serve = accept(stream, acceptor, handler, Some(seen));
            let _ = tokio::time::timeout(CONNECTION_LIMIT, serve).await;
        });
        // Reap finished connections so the set stays small.
        while tasks.try_join_next().is_some() {}
    }
    // Serve the connections still open, then stop.
    while tasks.join_next().await.is_some() {}
}

async fn accept(stream: TcpStream, acceptor: Acceptor, handler: Handler, seen: Option<Arc<Mutex<Vec<Request>>>>) {
    match acceptor {
        Acceptor::Plain => serve_connection(stream, handler, seen).await,
        #[cfg(feature = "tls")]
        Acceptor::Tls(acceptor) => {
            // A failed handshake (a client that does not trust the certificate) just ends the connection.
            if let Ok(tls) = acceptor.accept(stream).await {
                serve_connection(tls, handler, seen).await;
            }
        }
    }
}

/// Serves one connection: each request read whole, answered by `handler` the delay it asks for after it was
/// read (its handling included), and recorded in `seen` if given.
async fn serve_connection<S>(io: S, handler: Handler, seen: Option<Arc<Mutex<Vec<Request>>>>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request: hyper::Request<Incoming>| {
        let (handler, seen) = (handler.clone(), seen.clone());
        async move {
            let (parts, body) = request.into_parts();
            let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            let received = std::time::Instant::now();
            let request = Request { method: parts.method, target: parts.uri.to_string(), headers: parts.headers, body };
            let (response, delay) = handler(&request);
            if let Some(seen) = seen {
                seen.lock().expect("not poisoned").push(request);
            }
            // The delay runs from the request read whole, its handling included, as a service's latency
            // includes its own work: the server's CPU on the client's machine is not added to the pace. The
            // answer leaves at its time to a fraction of a millisecond ([`alarm`]), not at tokio's next tick.
            if !delay.is_zero() {
                alarm::sleep_until(received + delay).await;
            }
            Ok::<_, Infallible>(response.map(Full::new))
        }
    });
    let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(io), service).await;
}

// ------------------------------------------------------------------------------------------------------------
// Certificates

/// A self-signed certificate made for one server.
#[cfg(feature = "tls")]
#[derive(Clone, Debug)]
pub struct Certificate {
    der: Vec<u8>,
}

#[cfg(feature = "tls")]
impl Certificate {
    /// A certificate for `127.0.0.1` and `localhost` and the TLS acceptor that serves it (on *ring*, the
    /// provider of the client's own TLS).
    fn self_signed() -> (Certificate, tokio_rustls::TlsAcceptor) {
        use tokio_rustls::rustls;
        let names = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
        let rcgen::CertifiedKey { cert, signing_key } =
            rcgen::generate_simple_self_signed(names).expect("a self-signed certificate");
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(signing_key.serialize_der().into());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("the provider's default protocol versions")
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .expect("the certificate and its key");
        (Certificate { der: cert.der().to_vec() }, tokio_rustls::TlsAcceptor::from(Arc::new(config)))
    }

    /// Another certificate, of no server: what a client that trusts only it refuses a server with.
    pub fn unrelated() -> Certificate {
        Certificate::self_signed().0
    }

    /// The certificate, DER.
    pub fn der(&self) -> &[u8] {
        &self.der
    }

    /// The certificate as PEM, the form `SSL_CERT_FILE` holds.
    pub fn pem(&self) -> String {
        pem("CERTIFICATE", &self.der)
    }
}

/// DER as PEM under `label` (`CERTIFICATE`, `PRIVATE KEY`): base64 in lines of 64 between the two markers.
#[cfg(feature = "tls")]
pub fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let base64 = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> =
        base64.as_bytes().chunks(64).map(|l| std::str::from_utf8(l).expect("base64 is ASCII")).collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

// ------------------------------------------------------------------------------------------------------------
// A benchmark's server, in a child process

/// Serves on a loopback port with the handler `make` returns for that port, in this process, until its standard
/// input closes (its parent, a [`ChildServer`], ended, however it ended) or [`CHILD_LIMIT`] passes; then exits
/// the process. Prints the port on standard output first, for the parent to read.
///
/// # Panics
/// When no runtime can be built or no loopback port bound.
pub fn serve_child<H, A>(make: impl FnOnce(u16) -> H) -> !
where
    H: Fn(&Request) -> A + Send + Sync + 'static,
    A: Answer,
{
    // A thread per core, as a service answers connections side by side: an answer that takes CPU (a page
    // built, a transaction parsed) does not hold up the others.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let port = listener.local_addr().expect("bound").port();
        let handler = make(port);
        println!("{port}");
        std::io::stdout().flush().expect("stdout");
        let parent_gone = tokio::task::spawn_blocking(|| {
            let mut buf = [0u8; 64];
            while std::io::stdin().read(&mut buf).is_ok_and(|n| n > 0) {}
        });
        tokio::select! {
            () = serve(listener, handler) => {}
            _ = parent_gone => {}
            () = tokio::time::sleep(CHILD_LIMIT) => {}
        }
    });
    std::process::exit(0)
}

/// Serves every connection `listener` accepts with `handler`, plain HTTP, with no limits and recording nothing,
/// until the future is dropped (or an accept fails: out of file descriptors). Each connection is a task of the
/// runtime, so a handler's delay holds up only its own connection. What [`serve_child`] runs, and a test's
/// long-lived server (the in-memory Table service) when spawned on the test's runtime.
pub async fn serve<A: Answer>(listener: TcpListener, handler: impl Fn(&Request) -> A + Send + Sync + 'static) {
    let handler = self::handler(handler);
    let mut tasks = JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else { return };
        tasks.spawn(accept(stream, Acceptor::Plain, handler.clone(), None));
        // Reap finished connections so the set stays small; dropping the set (this future) aborts the rest.
        while tasks.try_join_next().is_some() {}
    }
}

/// A benchmark's server: this binary started again with a variable that makes it call [`serve_child`]. Killed
/// and reaped when dropped.
#[derive(Debug)]
pub struct ChildServer {
    child: Child,
    port: u16,
}

impl ChildServer {
    /// Starts this binary again with `var` set to `value` and the variables of `clear` removed (the benchmark's
    /// other modes), and reads the port it prints.
    ///
    /// # Panics
    /// When the binary cannot be started or prints no port.
    pub fn start(var: &str, value: &str, clear: &[&str]) -> ChildServer {
        let mut command = Command::new(std::env::current_exe().expect("this binary"));
        command.env(var, value).stdin(Stdio::piped()).stdout(Stdio::piped());
        for name in clear {
            command.env_remove(name);
        }
        let mut child = command.spawn().expect("the server child");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line).expect("the server's port");
        let port = line.trim().parse().unwrap_or_else(|_| panic!("the server said {line:?}"));
        ChildServer { child, port }
    }

    /// The port the child listens on.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------------------------------------------------------
// The benchmarks' baseline

/// The benchmarks' baseline: a bare `reqwest::Client` set up as `azure_core`'s default transport (20 s connect
/// and 60 s read timeouts, no redirects), sending a request already built and signed, so that a benchmark of the
/// client measures what the client adds to the same request.
#[cfg(feature = "bare")]
#[derive(Clone, Debug)]
pub struct Bare {
    client: reqwest::Client,
}

#[cfg(feature = "bare")]
impl Default for Bare {
    fn default() -> Bare {
        Bare::new()
    }
}

#[cfg(feature = "bare")]
impl Bare {
    /// The client, set up as `azure_core`'s `new_reqwest_client` sets up its own.
    ///
    /// # Panics
    /// When reqwest cannot build a client (no TLS backend).
    pub fn new() -> Bare {
        // reqwest without a provider of its own (the workspace turns aws-lc-rs off): *ring*, as an application
        // would install it; one the process installed before is kept.
        let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .read_timeout(Duration::from_secs(60))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a reqwest client");
        Bare { client }
    }

    /// Sends `request` and collects the answer's body.
    ///
    /// # Panics
    /// When the request is not one reqwest can send, or the server does not answer.
    pub async fn send(&self, request: http::Request<Vec<u8>>) -> http::Response<Bytes> {
        let request = reqwest::Request::try_from(request).expect("a request reqwest can send");
        let mut response = self.client.execute(request).await.expect("an answer");
        let status = response.status();
        let headers = std::mem::take(response.headers_mut());
        let mut reply = http::Response::new(response.bytes().await.expect("the body"));
        *reply.status_mut() = status;
        *reply.headers_mut() = headers;
        reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    fn request(target: &str) -> Request {
        let (method, headers, body) = (http::Method::GET, http::HeaderMap::new(), Bytes::new());
        Request { method, target: target.to_owned(), headers, body }
    }

    #[test]
    fn a_target_splits_into_path_and_query() {
        assert_eq!(request("/acct/Tables?$top=1&x=%20").path(), "/acct/Tables");
        assert_eq!(request("/acct/Tables?$top=1&x=%20").query(), "$top=1&x=%20");
        assert_eq!(request("/acct/Tables").query(), "");
        assert_eq!(request("http://169.254.169.254/metadata?a=b").path(), "http://169.254.169.254/metadata");
    }

    #[tokio::test]
    async fn a_server_answers_with_its_handler_and_records_each_request() {
        let server = Server::http(|r: &Request| reply(201, &[("x-seen", r.path())], r.body.clone())).await;
        let mut stream = TcpStream::connect(("127.0.0.1", server.port())).await.unwrap();
        let sent = "POST /acct/People?a=1 HTTP/1.1\r\nhost: t\r\nx-test: yes\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello";
        stream.write_all(sent.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();

        assert!(answer.starts_with("HTTP/1.1 201 Created\r\n"), "{answer}");
        assert!(answer.contains("x-seen: /acct/People\r\n"), "{answer}");
        assert!(answer.contains("x-ms-version: 2019-02-02\r\n"), "{answer}");
        assert!(answer.ends_with("\r\n\r\nhello"), "{answer}");
        let seen = server.seen();
        assert_eq!(seen.len(), 1);
        assert_eq!((seen[0].method.as_str(), seen[0].target.as_str()), ("POST", "/acct/People?a=1"));
        assert_eq!(seen[0].header("x-test"), Some("yes"));
        assert_eq!(seen[0].text(), "hello");
        assert_eq!(server.connections(), 1);
        assert_eq!(server.origin(), format!("http://127.0.0.1:{}", server.port()));
    }

    #[cfg(feature = "tls")]
    #[test]
    fn pem_is_base64_in_lines_of_64_between_its_markers() {
        let der: Vec<u8> = (0..=255).collect();
        let pem = pem("CERTIFICATE", &der);
        let lines: Vec<&str> = pem.lines().collect();
        assert_eq!(lines.first(), Some(&"-----BEGIN CERTIFICATE-----"));
        assert_eq!(lines.last(), Some(&"-----END CERTIFICATE-----"));
        let body = &lines[1..lines.len() - 1];
        assert!(body[..body.len() - 1].iter().all(|l| l.len() == 64), "{body:?}");
        use base64::Engine as _;
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(body.concat()).unwrap(), der);
    }
}
