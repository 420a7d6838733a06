//! The client's default transport: `reqwest`, configured as `azure_core`'s own default (rustls, tokio, connect
//! timeout 20 s, read timeout 60 s, no redirects, gzip and deflate answers decompressed), with leaner
//! conversions between `azure_core`'s types and `reqwest`'s.
//!
//! TLS is rustls with the *ring* crypto provider and the platform's certificate verifier (the system's roots,
//! and `SSL_CERT_FILE` where set, loaded at the first handshake), given to `reqwest` ready made.
//! `azure_core`'s default features would build rustls on `aws-lc-rs`, whose C build was an eighth of the
//! workspace's build time (`docs/ci.md`); the protocols and cipher suites the service offers (TLS 1.2 and 1.3,
//! ECDHE with AES-GCM, RSA and ECDSA certificates) are *ring*'s too. Nothing process-wide is installed: an
//! application's own rustls default is left as it is.
//!
//! `azure_core`'s adapter for `reqwest` parses every request header again through `reqwest`'s builder, and
//! copies every response header into an owned, lowercased name (`HeaderName::from(String)` lowercases a copy)
//! and an owned value. The headers this protocol uses are known, already lowercase, and valid: here they are
//! constants both ways, and only unknown names are copied. The body is read whole here, inside the try (a body
//! that breaks off is an I/O error, which the retry policy retries), so the pipeline sees one chunk.
//!
//! A transport given in `ClientOptions::transport` is used instead, unchanged.

use crate::connection::redact_signature;
use async_trait::async_trait;
use azure_core::error::ErrorKind as CoreErrorKind;
use azure_core::http::headers::{HeaderName, HeaderValue, Headers};
use azure_core::http::request::Body;
use azure_core::http::{AsyncRawResponse, HttpClient, Method, Request};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// `azure_core`'s defaults for its `reqwest` client.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// A `reqwest::Client` as the pipeline's [`HttpClient`].
#[derive(Debug)]
pub(crate) struct ReqwestTransport {
    client: reqwest::Client,
}

impl ReqwestTransport {
    /// The client `azure_core` would build by default, with the TLS settings of [`tls_config`].
    pub(crate) fn new() -> azure_core::Result<Self> {
        let tls =
            tls_config().map_err(|e| azure_core::Error::with_error(CoreErrorKind::Other, e, "could not set up TLS"))?;
        let client = reqwest::ClientBuilder::new()
            .tls_backend_preconfigured(tls)
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .gzip(true)
            .deflate(true)
            .build()
            .map_err(|e| azure_core::Error::with_error(CoreErrorKind::Other, e, "could not build the HTTP client"))?;
        Ok(ReqwestTransport { client })
    }
}

/// The TLS settings of the client's default transport, for an application's other `reqwest` clients: rustls on
/// the *ring* provider, TLS 1.2 and 1.3, server certificates checked by the platform's verifier (the system's
/// roots, and `SSL_CERT_FILE` where set), no client certificate. Give it to `reqwest`'s
/// `ClientBuilder::tls_backend_preconfigured`.
///
/// The verifier is set up at the first handshake, not here: reading and parsing the system's roots (some 140
/// certificates, about 33 million instructions) would otherwise be paid by every client made, including those
/// that never speak TLS (Azurite, a loopback server, `http` endpoints), and by every command before its first
/// request. A platform whose roots cannot be loaded fails each handshake with the verifier's error (`No CA
/// certificates were loaded from the system`).
///
/// # Errors
/// When rustls refuses the provider's protocol versions (it does not for *ring*'s).
///
/// # Example
/// ```
/// let tls = table_model::client::tls_config()?;
/// assert!(!tls.client_auth_cert_resolver.has_certs());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn tls_config() -> Result<rustls::ClientConfig, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(PlatformVerifier::new(provider.clone()));
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// The platform's certificate verifier (`rustls_platform_verifier::Verifier`), set up when a handshake first
/// needs it ([`tls_config`]).
#[derive(Debug)]
struct PlatformVerifier {
    provider: Arc<rustls::crypto::CryptoProvider>,
    verifier: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl PlatformVerifier {
    fn new(provider: Arc<rustls::crypto::CryptoProvider>) -> Self {
        PlatformVerifier { provider, verifier: OnceLock::new() }
    }

    /// The platform's verifier, set up on the first call.
    fn get(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        let verifier = self.verifier.get_or_init(|| rustls_platform_verifier::Verifier::new(self.provider.clone()));
        verifier.as_ref().map_err(Clone::clone)
    }
}

impl ServerCertVerifier for PlatformVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.get()?.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls13_signature(message, cert, dss)
    }

    /// The provider's schemes, which are the platform verifier's, known without its roots: the first message of
    /// every handshake offers them.
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// The HTTP client a [`TableServiceClient`](super::TableServiceClient) sends with when its options give no
/// transport, for the other clients of the same application: `azure_identity`'s credentials, for one, whose
/// own default (`azure_core::http::new_http_client`) needs `azure_core`'s `reqwest` features, which this crate
/// leaves off.
///
/// # Errors
/// When TLS cannot be set up ([`tls_config`]).
///
/// # Example
/// ```
/// use table_model::client::azure_core::http::{ClientOptions, Transport};
///
/// let transport = Transport::new(table_model::client::default_http_client()?);
/// let options = ClientOptions { transport: Some(transport), ..Default::default() };
/// # assert!(options.transport.is_some());
/// # Ok::<(), table_model::client::azure_core::Error>(())
/// ```
pub fn default_http_client() -> azure_core::Result<Arc<dyn HttpClient>> {
    Ok(Arc::new(ReqwestTransport::new()?))
}

#[async_trait]
impl HttpClient for ReqwestTransport {
    async fn execute_request(&self, request: &Request) -> azure_core::Result<AsyncRawResponse> {
        let response = self.client.execute(to_reqwest(request)?).await.map_err(|mut e| {
            // A connection that could not be made carried nothing; anything later may have carried the request.
            let kind = if e.is_connect() { CoreErrorKind::Connection } else { CoreErrorKind::Io };
            redact(&mut e);
            azure_core::Error::with_error(kind, e, "the request could not be sent")
        })?;
        let status = response.status().as_u16().into();
        let headers = to_core_headers(response.headers());
        let body = response.bytes().await.map_err(|mut e| {
            redact(&mut e);
            azure_core::Error::with_error(CoreErrorKind::Io, e, "the answer broke off")
        })?;
        Ok(AsyncRawResponse::from_bytes(status, headers, body))
    }
}

/// The error with the signature of a SAS in its URL redacted: its `Display` and `Debug` show the URL.
fn redact(e: &mut reqwest::Error) {
    if let Some(url) = e.url_mut()
        && let Cow::Owned(redacted) = redact_signature(url.as_str())
        && let Ok(redacted) = reqwest::Url::parse(&redacted)
    {
        *url = redacted;
    }
}

/// The request in `reqwest`'s types.
fn to_reqwest(request: &Request) -> azure_core::Result<reqwest::Request> {
    let method = match request.method() {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Put => reqwest::Method::PUT,
        Method::Delete => reqwest::Method::DELETE,
        Method::Patch => reqwest::Method::PATCH,
        Method::Head => reqwest::Method::HEAD,
        other => {
            let message = format!("method {other} is not one this transport sends");
            return Err(azure_core::Error::with_message(CoreErrorKind::DataConversion, message));
        }
    };
    let mut out = reqwest::Request::new(method, request.url().clone());
    let map = out.headers_mut();
    for (name, value) in request.headers().iter() {
        let name = match known(name.as_str()) {
            Some(known) => known.http,
            None => http::HeaderName::from_bytes(name.as_str().as_bytes()).map_err(invalid_header)?,
        };
        let value = http::HeaderValue::from_str(value.as_str()).map_err(invalid_header)?;
        map.append(name, value);
    }
    *out.body_mut() = match request.body() {
        Body::Bytes(bytes) if bytes.is_empty() => None,
        Body::Bytes(bytes) => Some(reqwest::Body::from(bytes.clone())),
        Body::SeekableStream(stream) => Some(reqwest::Body::wrap_stream(stream.clone())),
    };
    Ok(out)
}

fn invalid_header(e: impl std::error::Error + Send + Sync + 'static) -> azure_core::Error {
    azure_core::Error::with_error(CoreErrorKind::DataConversion, e, "a header cannot be sent")
}

/// The response's headers in `azure_core`'s type: known names as constants, values copied once.
fn to_core_headers(map: &http::HeaderMap) -> Headers {
    let mut headers = HashMap::with_capacity(map.len());
    for (name, value) in map {
        // A value that is not visible ASCII is not one the protocol uses: leave it out, as azure_core does.
        let Ok(value) = value.to_str() else { continue };
        let name = match known(name.as_str()) {
            Some(known) => known.core,
            // `http` names are lowercase already; `From<String>` would lowercase a copy.
            None => HeaderName::from(name.as_str().to_owned()),
        };
        headers.insert(name, HeaderValue::from(value.to_owned()));
    }
    Headers::from(headers)
}

/// A header name the protocol uses, in both crates' types, each made at compile time: no validation, copy or
/// lowercasing when a request or an answer is converted.
pub(crate) struct Known {
    pub(crate) core: HeaderName,
    pub(crate) http: http::HeaderName,
}

macro_rules! known_names {
    ($($length:literal: $($name:literal)+;)+) => {
        /// The name in both types, when the protocol uses it (names arrive lowercase in both crates). Names are
        /// told apart by length first, then compared.
        pub(crate) fn known(name: &str) -> Option<Known> {
            $($(const { assert!($name.len() == $length) };)+)+
            let known = match name.len() {
                $($length => match name {
                    $($name => Known {
                        core: const { HeaderName::from_static($name) },
                        http: const { http::HeaderName::from_static($name) },
                    },)+
                    _ => return None,
                },)+
                _ => return None,
            };
            Some(known)
        }
    };
}

known_names! {
    4: "date" "etag";
    6: "accept" "prefer" "server";
    8: "if-match" "location";
    9: "x-ms-date";
    10: "connection" "keep-alive" "user-agent";
    11: "content-md5" "retry-after";
    12: "content-type" "x-ms-version";
    13: "authorization" "cache-control" "dataserviceid" "x-http-method";
    14: "content-length";
    15: "x-ms-error-code" "x-ms-request-id";
    17: "transfer-encoding";
    18: "dataserviceversion" "preference-applied";
    19: "x-ms-retry-after-ms";
    21: "maxdataserviceversion";
    22: "x-content-type-options" "x-ms-client-request-id";
    28: "x-ms-continuation-nextrowkey";
    31: "x-ms-continuation-nexttablename";
    34: "x-ms-continuation-nextpartitionkey";
}

/// A header's value. `Headers::get_optional_str` and `get_optional_with` build an `azure_core::Error` when the
/// header is absent (with a captured backtrace when `RUST_BACKTRACE` is set) and format one when it is present:
/// thousands of instructions for a lookup.
pub(crate) fn find_header<'a>(headers: &'a Headers, name: &HeaderName) -> Option<&'a str> {
    headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use azure_core::http::Url;
    use azure_core::Bytes;

    /// The service requires TLS 1.2 at least (Azure Storage refuses 1.0 and 1.1 since February 2026) and offers
    /// 1.3; its suites are ECDHE with AES-GCM, and its certificate chains are RSA (PKCS #1 and PSS, SHA-256 and
    /// SHA-384) or ECDSA (P-256, P-384). The *ring* settings offer every one of them.
    #[test]
    fn tls_offers_what_the_service_speaks() {
        use rustls::{CipherSuite as C, ProtocolVersion, SignatureScheme as S};
        let tls = tls_config().unwrap();
        // `tls_config` offers rustls' safe defaults: both versions, with the `tls12` feature on.
        let versions: Vec<ProtocolVersion> = rustls::DEFAULT_VERSIONS.iter().map(|v| v.version).collect();
        assert_eq!(versions, [ProtocolVersion::TLSv1_3, ProtocolVersion::TLSv1_2]);
        let provider = tls.crypto_provider();
        let suites: Vec<C> = provider.cipher_suites.iter().map(|suite| suite.suite()).collect();
        for suite in [
            C::TLS13_AES_128_GCM_SHA256,
            C::TLS13_AES_256_GCM_SHA384,
            C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        ] {
            assert!(suites.contains(&suite), "{suite:?} missing from {suites:?}");
        }
        let schemes = provider.signature_verification_algorithms.supported_schemes();
        for scheme in [
            S::RSA_PKCS1_SHA256,
            S::RSA_PKCS1_SHA384,
            S::RSA_PSS_SHA256,
            S::RSA_PSS_SHA384,
            S::ECDSA_NISTP256_SHA256,
            S::ECDSA_NISTP384_SHA384,
        ] {
            assert!(schemes.contains(&scheme), "{scheme:?} missing from {schemes:?}");
        }
        assert!(!tls.client_auth_cert_resolver.has_certs(), "no client certificate is offered");
    }

    /// The system's roots are read when a handshake first needs them, not when the settings are made; the schemes
    /// the first message offers need no roots.
    #[test]
    fn the_platform_verifier_is_set_up_at_the_first_certificate() {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = PlatformVerifier::new(provider.clone());
        assert_eq!(verifier.supported_verify_schemes(), provider.signature_verification_algorithms.supported_schemes());
        assert!(verifier.verifier.get().is_none(), "nothing is loaded before a certificate is checked");
        // Not a certificate: refused by the verifier, which is then set up (this machine has roots).
        let refused = verifier.verify_server_cert(
            &CertificateDer::from(vec![0x30, 0x00]),
            &[],
            &ServerName::try_from("example.com").unwrap(),
            &[],
            UnixTime::now(),
        );
        assert!(matches!(refused, Err(rustls::Error::InvalidCertificate(_))), "{refused:?}");
        assert!(matches!(verifier.verifier.get(), Some(Ok(_))));
    }

    #[test]
    fn requests_keep_method_url_headers_and_body() {
        let url =
            Url::parse("http://127.0.0.1:10002/devstoreaccount1/People(PartitionKey='a%20b',RowKey='c')?x=1").unwrap();
        let mut request = Request::new(url.clone(), Method::Patch);
        request.insert_header("x-ms-version", "2019-02-02");
        request.insert_header("if-match", "W/\"datetime'2026-11-23T00%3A00%3A00Z'\"");
        request.insert_header("x-custom-header", "kept");
        request.set_body(Bytes::from_static(b"{\"A\":1}"));
        let out = to_reqwest(&request).unwrap();
        assert_eq!(out.method(), reqwest::Method::PATCH);
        assert_eq!(out.url(), &url);
        assert_eq!(out.headers().len(), 3);
        assert_eq!(out.headers()["x-ms-version"], "2019-02-02");
        assert_eq!(out.headers()["if-match"], "W/\"datetime'2026-11-23T00%3A00%3A00Z'\"");
        assert_eq!(out.headers()["x-custom-header"], "kept");
        assert_eq!(out.body().and_then(reqwest::Body::as_bytes), Some(&b"{\"A\":1}"[..]));

        let empty = Request::new(url, Method::Get);
        assert!(to_reqwest(&empty).unwrap().body().is_none());
    }

    #[test]
    fn a_header_http_cannot_carry_is_an_error_not_a_panic() {
        let mut request = Request::new(Url::parse("http://127.0.0.1/").unwrap(), Method::Get);
        request.insert_header("x-ms-meta", "line\nbreak");
        let err = to_reqwest(&request).unwrap_err();
        assert_eq!(err.kind(), &CoreErrorKind::DataConversion);
    }

    #[test]
    fn response_headers_keep_every_visible_value() {
        let mut map = http::HeaderMap::new();
        map.insert("etag", "W/\"datetime'x'\"".parse().unwrap());
        map.insert("x-ms-continuation-nextpartitionkey", "1!8!cDE-".parse().unwrap());
        map.insert("x-unknown", "u".parse().unwrap());
        map.insert("x-binary", http::HeaderValue::from_bytes(b"\xff").unwrap());
        let headers = to_core_headers(&map);
        assert_eq!(headers.get_optional_str(&HeaderName::from_static("etag")), Some("W/\"datetime'x'\""));
        let next = HeaderName::from_static("x-ms-continuation-nextpartitionkey");
        assert_eq!(headers.get_optional_str(&next), Some("1!8!cDE-"));
        assert_eq!(headers.get_optional_str(&HeaderName::from_static("x-unknown")), Some("u"));
        assert_eq!(headers.iter().count(), 3, "a value that is not visible ASCII is left out");
    }

    #[test]
    fn known_names_are_themselves_in_both_types() {
        for name in ["etag", "x-ms-date", "user-agent", "x-ms-continuation-nexttablename"] {
            let known = known(name).unwrap();
            assert_eq!((known.core.as_str(), known.http.as_str()), (name, name));
        }
        assert!(known("x-ms-meta").is_none());
        assert!(known("ETag").is_none(), "names arrive lowercase");
    }
}
