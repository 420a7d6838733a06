//! What every Azurite test needs: the endpoint from the environment, a blocking client that sends the SDK's
//! `http::Request`s, and a table of its own that is deleted afterwards.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use table_model::{response, AccountKey, Credential, Endpoint, TableName, TableService};

/// The variable `scripts/azurite.sh start` exports.
pub const ENDPOINT_VAR: &str = "TABLE_MODEL_AZURITE_ENDPOINT";

/// A running Azurite and the service that talks to it.
pub struct Azurite {
    pub service: TableService,
    agent: ureq::Agent,
}

/// The Azurite of `TABLE_MODEL_AZURITE_ENDPOINT`, or `None` (with a notice) when it is not set. When `CI` is
/// set, a missing endpoint fails the test instead: in CI these tests must run.
pub fn connect() -> Option<Azurite> {
    let Ok(url) = std::env::var(ENDPOINT_VAR) else {
        if std::env::var_os("CI").is_some() {
            panic!("{ENDPOINT_VAR} is not set but CI is: start Azurite with `scripts/azurite.sh start`");
        }
        // Written to the process's stderr, past the test harness's capture, once per run.
        static NOTICE: std::sync::Once = std::sync::Once::new();
        NOTICE.call_once(|| {
            let _ = writeln!(
                std::io::stderr(),
                "note: the Azurite tests are skipped: {ENDPOINT_VAR} is not set; \
                 run them with `scripts/azurite.sh run cargo test --workspace`"
            );
        });
        return None;
    };
    let endpoint = Endpoint::parse(&url).unwrap_or_else(|e| panic!("{ENDPOINT_VAR}={url}: {e}"));
    let service = TableService::new(endpoint, Credential::SharedKey(AccountKey::development()));
    let agent = ureq::AgentBuilder::new().timeout(std::time::Duration::from_secs(30)).build();
    Some(Azurite { service, agent })
}

/// Starts a test: the Azurite, or returns from the test when it is skipped.
macro_rules! azurite {
    () => {
        match crate::support::connect() {
            Some(a) => a,
            None => return,
        }
    };
}
pub(crate) use azurite;

impl Azurite {
    /// Sends a request and returns the response, whatever its status.
    pub fn send(&self, request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
        let mut call = self.agent.request(request.method().as_str(), &request.uri().to_string());
        for (name, value) in request.headers() {
            call = call.set(name.as_str(), value.to_str().expect("the SDK writes ASCII headers"));
        }
        let result = if request.body().is_empty() { call.call() } else { call.send_bytes(request.body()) };
        let reply = match result {
            Ok(reply) | Err(ureq::Error::Status(_, reply)) => reply,
            Err(e) => panic!("cannot reach Azurite at {}: {e}", request.uri()),
        };
        let mut builder = http::Response::builder().status(reply.status());
        for name in reply.headers_names() {
            for value in reply.all(&name) {
                builder = builder.header(name.as_str(), value);
            }
        }
        let mut body = Vec::new();
        reply.into_reader().read_to_end(&mut body).expect("a readable body");
        builder.body(body).expect("a valid response")
    }

    /// A new table with a unique name, deleted when the guard is dropped.
    pub fn table(&self, prefix: &str) -> Table<'_> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("{prefix}{}x{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let name = TableName::new(name).expect("a valid table name");
        let reply = self.send(self.service.create_table(&name).expect("a create request"));
        response::empty(&reply).unwrap_or_else(|e| panic!("create table {name}: {e}"));
        Table { azurite: self, name }
    }
}

/// A table that exists for the duration of a test.
pub struct Table<'a> {
    azurite: &'a Azurite,
    pub name: TableName,
}

impl Drop for Table<'_> {
    fn drop(&mut self) {
        if let Ok(request) = self.azurite.service.delete_table(&self.name) {
            let _ = self.azurite.send(request);
        }
    }
}
