//! Reads from the secondary location of a read-access geo-redundant account: see [`LocationMode`].

use std::fmt;

/// Reads from the secondary location of a read-access geo-redundant account (RA-GRS, RA-GZRS): the same
/// account, answered at `<account>-secondary` ([`Endpoint::secondary`](crate::Endpoint::secondary)) from a copy
/// that lags the primary by up to the replication delay (the secondary's
/// [`get_service_stats`](super::TableServiceClient::get_service_stats) gives its `LastSyncTime`).
///
/// Reads ([`TableClient::get`](super::TableClient::get), [`query`](super::TableClient::query) and its pages,
/// [`TableServiceClient::list_tables`](super::TableServiceClient::list_tables)) go where their
/// [`LocationMode`] says: the client's ([`TableServiceClientOptions::location_mode`]), or a call's own
/// (`with_location_mode` on its options). Writes always go to the primary, whatever the mode: the secondary is
/// read-only, and a write there would be refused at best.
///
/// Under [`LocationMode::PrimaryThenSecondary`] a read the primary fails in a way a retry would retry (no
/// answer, or `408`, `429`, `500`, `502`, `503`, `504` once the retries ran out) is sent to the secondary; the
/// other failures (`404`, `403`, ...) are the answer. An error after both names both locations
/// ([`Error::location`](super::Error::location), [`Error::primary_error`](super::Error::primary_error)); a read
/// served by the secondary says so ([`TableClient::get_located`](super::TableClient::get_located), the pagers'
/// `location()`, and the call's span when tracing).
///
/// The fall-over waits for the primary's retries to run out: about 81 seconds under `azure_core`'s default
/// retry options when the primary does not answer or answers `503`, well under a second with 3 quick retries
/// (BENCHMARKS.md, "Reads from the secondary"). A client that reads this way should set fewer retries in its
/// `ClientOptions`.
///
/// [`TableServiceClientOptions::location_mode`]: super::TableServiceClientOptions::location_mode
///
/// ```
/// use table_model::client::{LocationMode, QueryOptions, RequestOptions};
/// let options = RequestOptions::default().with_location_mode(LocationMode::PrimaryThenSecondary);
/// assert_eq!(options.location_mode(), Some(LocationMode::PrimaryThenSecondary));
/// assert_eq!(QueryOptions::default().location_mode(), None); // the client's mode
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LocationMode {
    /// The primary only (the default).
    #[default]
    PrimaryOnly,
    /// The secondary only: reads that may be up to the replication delay old, off the primary's load.
    SecondaryOnly,
    /// The primary, and the secondary when the primary fails in a way a retry would retry.
    PrimaryThenSecondary,
}

/// A location of the account: which one served a read, or gave an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Location {
    /// The primary: reads see every write acknowledged.
    Primary,
    /// The secondary: reads may miss the writes of the last minutes (see the secondary's `LastSyncTime`).
    Secondary,
}

impl Location {
    /// `primary` or `secondary`.
    pub fn as_str(self) -> &'static str {
        match self {
            Location::Primary => "primary",
            Location::Secondary => "secondary",
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A call's own [`LocationMode`], in its context.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadLocation(pub(crate) LocationMode);
