//! The clients of the fault tests: fast retries and a short per-try timeout, so that faults cost little time,
//! direct or through a [`Proxy`]. Shared by the workspace's fault and tracing tests and the DataFusion provider's.
//!
//! Layer: harness.

use crate::proxy::Proxy;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use table_model::client::azure_core;
use table_model::client::azure_core::http::{ClientOptions, ExponentialRetryOptions, RetryOptions};
use table_model::client::{TableServiceClient, TableServiceClientOptions};
use table_model::{AccountKey, TableName};

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

/// A table name of the test's own: `name`, this process's id and a number unique in the process, so that tests
/// running at once (and runs of other crates' suites) never share one.
///
/// # Panics
/// When `name` makes no valid table name.
pub fn unique_table_name(name: &str) -> TableName {
    static TABLES: AtomicU64 = AtomicU64::new(0);
    let n = TABLES.fetch_add(1, Ordering::Relaxed);
    TableName::new(format!("{name}{}x{n}", std::process::id())).expect("a valid name")
}

/// A table of the test's own ([`unique_table_name`]), created through `direct`.
///
/// # Panics
/// When `name` makes no valid table name, or the table cannot be created.
pub async fn fresh_table(direct: &TableServiceClient, name: &str) -> TableName {
    let table = unique_table_name(name);
    direct.create_table(&table, None).await.expect("create the table");
    table
}
