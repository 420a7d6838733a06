//! Authorizing requests for the Table service: Shared Key and Shared Key Lite signatures, and shared access
//! signatures passed through.
//!
//! [`TableService`](crate::TableService) signs every request it builds; these functions are public for
//! requests built by hand or re-signed after a retry.
//!
//! The Table service's Shared Key string to sign (version 2009-09-19 and later) is
//!
//! ```text
//! VERB \n Content-MD5 \n Content-Type \n Date \n CanonicalizedResource
//! ```
//!
//! and Shared Key Lite's is `Date \n CanonicalizedResource`. Date is the `x-ms-date` header (RFC 1123);
//! CanonicalizedResource is `/<account>` followed by the request's path exactly as sent (percent-encoded), then
//! `?comp=<value>` when the query has a `comp` parameter; no other parameter is signed. The signature is the
//! base64 HMAC-SHA256 of the string to sign, keyed with the decoded account key.
//!
//! Layer: requests.

use crate::connection::{AccountKey, Credential};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use http::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use http::{Request, Uri};
use sha2::Sha256;
use std::time::SystemTime;

/// The `x-ms-date` header.
pub const X_MS_DATE: &str = "x-ms-date";

/// Formats an instant as RFC 1123 in GMT, the form of `x-ms-date`: `Sun, 22 Nov 2026 00:22:02 GMT`.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// let t = UNIX_EPOCH + Duration::from_secs(1_795_306_922);
/// assert_eq!(table_model::auth::rfc1123(t), "Sun, 22 Nov 2026 00:22:02 GMT");
/// ```
pub fn rfc1123(time: SystemTime) -> String {
    use chrono::{Datelike, Timelike};
    const DAYS: [&[u8; 3]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];
    const MONTHS: [&[u8; 3]; 12] =
        [b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec"];
    let t = chrono::DateTime::<chrono::Utc>::from(time);
    // `Sun, 22 Nov 2026 00:22:02 GMT`: 29 bytes, written in place (this runs for every request signed).
    let mut buf = *b"Ddd, 00 Mmm 0000 00:00:00 GMT";
    let mut put = |at: usize, width: usize, mut v: u32| {
        for i in (0..width).rev() {
            buf[at + i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(5, 2, t.day());
    // Years past 9999 do not fit HTTP dates; they are shown modulo 10000, as no request is signed that late.
    put(12, 4, t.year().rem_euclid(10_000) as u32);
    put(17, 2, t.hour());
    put(20, 2, t.minute());
    put(23, 2, t.second());
    buf[..3].copy_from_slice(DAYS[t.weekday().num_days_from_monday() as usize]);
    buf[8..11].copy_from_slice(MONTHS[t.month0() as usize]);
    String::from_utf8(buf.to_vec()).expect("ASCII")
}

/// The canonicalized resource of a request URI: `/<account><path>`, plus `?comp=<value>` when the query has
/// a `comp` parameter (matched without regard to case).
///
/// ```
/// use table_model::auth::canonicalized_resource;
/// let uri = "http://127.0.0.1:10002/devstoreaccount1/Tables?$top=5".parse()?;
/// assert_eq!(canonicalized_resource("devstoreaccount1", &uri), "/devstoreaccount1/devstoreaccount1/Tables");
/// let uri = "https://acme.table.core.windows.net/?restype=service&comp=properties".parse()?;
/// assert_eq!(canonicalized_resource("acme", &uri), "/acme/?comp=properties");
/// # Ok::<(), http::uri::InvalidUri>(())
/// ```
pub fn canonicalized_resource(account: &str, uri: &Uri) -> String {
    canonicalized_resource_of(account, uri.path(), uri.query())
}

/// [`canonicalized_resource`] from the request's path (as sent, percent-encoded) and query.
pub(crate) fn canonicalized_resource_of(account: &str, path: &str, query: Option<&str>) -> String {
    let mut out = format!("/{account}{path}");
    let comp = query.and_then(|q| {
        q.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            k.eq_ignore_ascii_case("comp").then_some(v)
        })
    });
    if let Some(comp) = comp {
        out.push_str("?comp=");
        out.push_str(comp);
    }
    out
}

/// What Shared Key and Shared Key Lite sign of a request, whichever HTTP types carry it: the request
/// layer signs `http::Request`s with it, and the client's pipeline signs each try of its requests.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SignedParts<'a> {
    pub method: &'a str,
    pub content_md5: &'a str,
    pub content_type: &'a str,
    /// The `x-ms-date` header.
    pub date: &'a str,
    /// The path as sent (percent-encoded).
    pub path: &'a str,
    pub query: Option<&'a str>,
}

/// Which Shared Key scheme signs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SharedKeyScheme {
    Full,
    Lite,
}

/// The `Authorization` header value of a request signed with an account key.
pub(crate) fn shared_key_authorization(
    scheme: SharedKeyScheme,
    account: &str,
    key: &AccountKey,
    parts: &SignedParts<'_>,
) -> String {
    let resource = canonicalized_resource_of(account, parts.path, parts.query);
    let (name, to_sign) = match scheme {
        SharedKeyScheme::Full => (
            "SharedKey",
            format!("{}\n{}\n{}\n{}\n{resource}", parts.method, parts.content_md5, parts.content_type, parts.date),
        ),
        SharedKeyScheme::Lite => ("SharedKeyLite", format!("{}\n{resource}", parts.date)),
    };
    format!("{name} {account}:{}", signature(key, &to_sign))
}

fn parts_of<B>(request: &Request<B>) -> SignedParts<'_> {
    let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("");
    SignedParts {
        method: request.method().as_str(),
        content_md5: header("content-md5"),
        content_type: header(CONTENT_TYPE.as_str()),
        date: header(X_MS_DATE),
        path: request.uri().path(),
        query: request.uri().query(),
    }
}

/// The Shared Key string to sign of a request whose `x-ms-date` is set.
pub fn string_to_sign<B>(request: &Request<B>, account: &str) -> String {
    let p = parts_of(request);
    let resource = canonicalized_resource_of(account, p.path, p.query);
    format!("{}\n{}\n{}\n{}\n{resource}", p.method, p.content_md5, p.content_type, p.date)
}

/// The Shared Key Lite string to sign of a request whose `x-ms-date` is set.
pub fn string_to_sign_lite<B>(request: &Request<B>, account: &str) -> String {
    let p = parts_of(request);
    format!("{}\n{}", p.date, canonicalized_resource_of(account, p.path, p.query))
}

/// Base64 of HMAC-SHA256 of `string_to_sign`, keyed with the account key.
pub fn signature(key: &AccountKey, string_to_sign: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(string_to_sign.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// Authorizes a request: sets `x-ms-date` to `now`, then the `Authorization` header for Shared Key and
/// Shared Key Lite, or appends the SAS token to the query for a shared access signature. Anonymous
/// requests only get the date.
///
/// Sign last: the signature covers the method, `Content-Type`, `Content-MD5`, the date and the path.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use table_model::{auth, AccountKey, Credential};
/// let mut request = http::Request::get("http://127.0.0.1:10002/devstoreaccount1/Tables").body(())?;
/// let now = UNIX_EPOCH + Duration::from_secs(1_795_306_922);
/// auth::authorize(&mut request, "devstoreaccount1", &Credential::SharedKey(AccountKey::development()), now);
/// assert_eq!(request.headers()["x-ms-date"], "Sun, 22 Nov 2026 00:22:02 GMT");
/// assert_eq!(
///     request.headers()["authorization"],
///     "SharedKey devstoreaccount1:9EOK+a/IvZ209HKXW1bUfnO8mDLBOHyGOGZx5XC4Oms="
/// );
/// # Ok::<(), http::Error>(())
/// ```
pub fn authorize<B>(request: &mut Request<B>, account: &str, credential: &Credential, now: SystemTime) {
    let date = HeaderValue::from_str(&rfc1123(now)).expect("an RFC 1123 date is a valid header value");
    request.headers_mut().insert(X_MS_DATE, date);
    let (scheme, key) = match credential {
        Credential::SharedKey(key) => (SharedKeyScheme::Full, key),
        Credential::SharedKeyLite(key) => (SharedKeyScheme::Lite, key),
        Credential::Sas(sas) => {
            let uri = request.uri().to_string();
            let separator = if request.uri().query().is_some() { '&' } else { '?' };
            // `SasToken::new` admits only characters a URI query carries, and the URI was valid: so is their
            // concatenation (property-tested in connection.rs).
            *request.uri_mut() = format!("{uri}{separator}{}", sas.as_str()).parse().expect("a valid URI");
            return;
        }
        Credential::Anonymous => return,
    };
    let value = shared_key_authorization(scheme, account, key, &parts_of(request));
    request.headers_mut().insert(AUTHORIZATION, HeaderValue::from_str(&value).expect("base64 is a valid header"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::SasToken;
    use std::time::{Duration, UNIX_EPOCH};

    // The expected signatures below were computed independently of this crate, with Python's standard library:
    //
    //   import hmac, hashlib, base64
    //   key = base64.b64decode("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
    //   sign = lambda s: base64.b64encode(hmac.new(key, s.encode(), hashlib.sha256).digest()).decode()
    //   date = "Sun, 22 Nov 2026 00:22:02 GMT"
    //   sign("GET\n\n\n" + date + "\n/devstoreaccount1/devstoreaccount1/Tables")
    //   sign("POST\n\napplication/json\n" + date + "\n/devstoreaccount1/devstoreaccount1/People")
    //   sign(date + "\n/devstoreaccount1/devstoreaccount1/People(PartitionKey='p',RowKey='O%27%27Brien%25')")
    //   sign("GET\n\n\n" + date + "\n/myaccount/?comp=properties")
    const GET_TABLES: &str = "9EOK+a/IvZ209HKXW1bUfnO8mDLBOHyGOGZx5XC4Oms=";
    const POST_PEOPLE: &str = "qfFm4Kqz/HzdFs1uc3U2RJtGeW2P42OPg6r1W/a3IO4=";
    const LITE_ENTITY: &str = "zu8W0R9y/Gy+5VYPPTswhuEguaQV0xVSQFcvXuek50g=";
    const COMP: &str = "xrYBQwj8jva8gxEGDdGPNuhaNxz7URxImGSL20uQtlc=";

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_795_306_922)
    }

    fn dev_key() -> Credential {
        Credential::SharedKey(AccountKey::development())
    }

    #[test]
    fn shared_key_known_vectors() {
        let mut r = Request::get("http://127.0.0.1:10002/devstoreaccount1/Tables?$filter=x").body(()).unwrap();
        authorize(&mut r, "devstoreaccount1", &dev_key(), now());
        assert_eq!(r.headers()[AUTHORIZATION], format!("SharedKey devstoreaccount1:{GET_TABLES}"));

        let mut r = Request::post("http://127.0.0.1:10002/devstoreaccount1/People")
            .header("content-type", "application/json")
            .body(b"{}".to_vec())
            .unwrap();
        assert_eq!(
            {
                r.headers_mut().insert(X_MS_DATE, HeaderValue::from_static("Sun, 22 Nov 2026 00:22:02 GMT"));
                string_to_sign(&r, "devstoreaccount1")
            },
            "POST\n\napplication/json\nSun, 22 Nov 2026 00:22:02 GMT\n/devstoreaccount1/devstoreaccount1/People"
        );
        authorize(&mut r, "devstoreaccount1", &dev_key(), now());
        assert_eq!(r.headers()[AUTHORIZATION], format!("SharedKey devstoreaccount1:{POST_PEOPLE}"));

        let mut r =
            Request::get("https://myaccount.table.core.windows.net/?restype=service&COMP=properties").body(()).unwrap();
        authorize(&mut r, "myaccount", &Credential::SharedKey(AccountKey::development()), now());
        assert_eq!(r.headers()[AUTHORIZATION], format!("SharedKey myaccount:{COMP}"));
    }

    #[test]
    fn shared_key_lite_known_vector() {
        let uri = "http://127.0.0.1:10002/devstoreaccount1/People(PartitionKey='p',RowKey='O%27%27Brien%25')";
        let mut r = Request::delete(uri).body(()).unwrap();
        authorize(&mut r, "devstoreaccount1", &Credential::SharedKeyLite(AccountKey::development()), now());
        assert_eq!(r.headers()[AUTHORIZATION], format!("SharedKeyLite devstoreaccount1:{LITE_ENTITY}"));
    }

    #[test]
    fn sas_is_appended_verbatim() {
        let sas = Credential::Sas(SasToken::new("?sv=2019-02-02&sig=a%2Bb%3D").unwrap());
        let mut r = Request::get("https://a.table.core.windows.net/T()?$top=1").body(()).unwrap();
        authorize(&mut r, "a", &sas, now());
        assert_eq!(r.uri(), "https://a.table.core.windows.net/T()?$top=1&sv=2019-02-02&sig=a%2Bb%3D");
        assert!(r.headers().get(AUTHORIZATION).is_none());
        let mut r = Request::get("https://a.table.core.windows.net/Tables").body(()).unwrap();
        authorize(&mut r, "a", &sas, now());
        assert_eq!(r.uri(), "https://a.table.core.windows.net/Tables?sv=2019-02-02&sig=a%2Bb%3D");
        assert_eq!(r.headers()[X_MS_DATE], "Sun, 22 Nov 2026 00:22:02 GMT");
    }

    #[test]
    fn only_comp_is_canonicalized() {
        let uri: Uri = "https://a.table.core.windows.net/T?compx=1&$filter=comp%20eq%201".parse().unwrap();
        assert_eq!(canonicalized_resource("a", &uri), "/a/T");
        let uri: Uri = "https://a.table.core.windows.net/T?comp=acl".parse().unwrap();
        assert_eq!(canonicalized_resource("a", &uri), "/a/T?comp=acl");
    }

    #[test]
    fn dates() {
        assert_eq!(rfc1123(UNIX_EPOCH), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(rfc1123(UNIX_EPOCH + Duration::from_millis(951_782_400_999)), "Tue, 29 Feb 2000 00:00:00 GMT");
    }
}
