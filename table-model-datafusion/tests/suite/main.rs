//! The provider's suites against Azurite (one through a fault-injecting proxy). They are compiled into the
//! library's own test binary (`src/lib.rs`), beside the unit tests: each binary that links DataFusion (and
//! Ballista) is over 250 MB in a debug build, so one binary instead of five keeps `target/` about a gigabyte
//! smaller, and the crate is compiled once for its tests. They use the crate by its name, as an integration test
//! does, and their helpers by `super::`.
//!
//! Each suite is skipped with a notice without `TABLE_MODEL_AZURITE_ENDPOINT`, unless `CI` is set, where that
//! fails; run with `bash scripts/azurite.sh run cargo test -p table-model-datafusion`.

mod azurite;
mod ballista;
mod dml;
mod faults;
mod hostile;
mod writes;

use async_trait::async_trait;
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::{Context, Request, Url};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use table_model::{EdmValue, Entity};

/// Every try a client sent, recorded by this policy in its pipeline (`per_try_policies`).
#[derive(Debug, Default)]
pub struct Recorder {
    sent: Mutex<Vec<Url>>,
    /// Tries sent and not yet answered, and the most there were at once since the last `take_most_in_flight`.
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

impl Recorder {
    /// The URLs sent since the last call.
    pub fn take_urls(&self) -> Vec<Url> {
        std::mem::take(&mut *self.sent.lock().unwrap())
    }

    /// The URLs sent to a path ending in `suffix` since the last call; the others stay.
    pub fn take_urls_to(&self, suffix: &str) -> Vec<Url> {
        let mut sent = self.sent.lock().unwrap();
        let (taken, kept) = sent.drain(..).partition(|url: &Url| url.path().ends_with(suffix));
        *sent = kept;
        taken
    }

    /// The most tries that were waiting for their answer at once since the last call.
    pub fn take_most_in_flight(&self) -> usize {
        self.most_in_flight.swap(0, Ordering::SeqCst)
    }

    /// How many tries are recorded.
    pub fn count(&self) -> usize {
        self.sent.lock().unwrap().len()
    }
}

#[async_trait]
impl Policy for Recorder {
    async fn send(&self, ctx: &Context, request: &mut Request, next: &[Arc<dyn Policy>]) -> PolicyResult {
        self.sent.lock().unwrap().push(request.url().clone());
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(now, Ordering::SeqCst);
        let answer = next[0].send(ctx, request, &next[1..]).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        answer
    }
}

/// The query parameter `name` of `url`, decoded.
pub fn param(url: &Url, name: &str) -> Option<String> {
    url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

/// The rows of a query, each as its cells' text joined by `|` (`NULL` for a null).
pub async fn rows(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let frame = ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let batches = frame.collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in &batches {
        let formatters: Vec<_> =
            batch.columns().iter().map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap()).collect();
        for row in 0..batch.num_rows() {
            rows.push(formatters.iter().map(|f| f.value(row).to_string()).collect::<Vec<_>>().join("|"));
        }
    }
    rows
}

/// An entity as text independent of its properties' order (the service keeps none), with the bits of its
/// doubles (not its Timestamp).
pub fn canonical(e: &Entity) -> String {
    let mut properties: Vec<String> = e
        .iter()
        .map(|(name, value)| match value {
            EdmValue::Double(d) => format!("{name}=Double({:#x})", d.to_bits()),
            other => format!("{name}={other:?}"),
        })
        .collect();
    properties.sort();
    format!("{}|{}|{}", e.partition_key(), e.row_key(), properties.join(","))
}
