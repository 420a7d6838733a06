//! The clients of the fault tests: fast retries and a short per-try timeout, so that faults cost little time,
//! direct or through a [`Proxy`]. Shared by the workspace's fault tests and the DataFusion provider's.

use super::proxy::Proxy;
use std::net::SocketAddr;
use std::time::Duration;
use table_model::client::azure_core;
use table_model::client::azure_core::http::{ClientOptions, ExponentialRetryOptions, RetryOptions};
use table_model::client::{TableServiceClient, TableServiceClientOptions};
use table_model::AccountKey;

/// A try that gets no answer within this long is lost.
pub const TRY_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the proxy's `Delay` holds an answer: past [`TRY_TIMEOUT`].
pub const DELAY: Duration = Duration::from_millis(2_600);

/// `127.0.0.1:port` of a path-style endpoint `http://127.0.0.1:port/account`: what a proxy forwards to.
pub fn socket_of(url: &str) -> SocketAddr {
    let authority = url.trim_start_matches("http://").split('/').next().expect("an authority");
    authority.parse().expect("Azurite listens on an IP address")
}

/// A client of the account at `url`.
pub fn client(url: &str) -> TableServiceClient {
    let retry = ExponentialRetryOptions {
        initial_delay: azure_core::time::Duration::milliseconds(20),
        max_retries: 12,
        max_total_elapsed: azure_core::time::Duration::seconds(120),
        max_delay: azure_core::time::Duration::seconds(1),
    };
    let options = TableServiceClientOptions {
        client_options: ClientOptions { retry: RetryOptions::exponential(retry), ..Default::default() },
        try_timeout: Some(TRY_TIMEOUT),
        ..Default::default()
    };
    TableServiceClient::new(url, AccountKey::development(), Some(options)).expect("a valid endpoint")
}

/// A client of the same account through a proxy.
pub fn through(proxy: &Proxy, url: &str) -> TableServiceClient {
    let account = url.rsplit('/').next().expect("an account");
    client(&format!("http://{}/{account}", proxy.addr))
}
