//! Retries that cannot change the outcome (`docs/rules.md` §12).
//!
//! `azure_core`'s retry policy is the one retry layer: it retries 408, 429, 500, 502, 503 and 504 answers
//! and connection errors, with exponential back-off and jitter, honouring `Retry-After` and
//! `x-ms-retry-after-ms`. It does not know which operations a retry can change, so this module watches every
//! try (a per-try policy) and records when a try's outcome is unknown: no answer (a connection lost after
//! the request may have been sent, or no answer within the per-try timeout) or a `500`/`502`/`504` answer, after which the request may
//! or may not have been applied. The client then reads the answer of the last try in that light:
//!
//! | operation | a retry after an unknown outcome answers | the client reports |
//! |---|---|---|
//! | get, query, upsert, delete or update with `IfMatch::Any`, create table if not exists | anything | the answer: these are idempotent |
//! | insert (`POST`) | `409 EntityAlreadyExists` | reads the entity back: equal to what was sent, success; else [`ErrorKind::OutcomeUnknown`](super::ErrorKind::OutcomeUnknown) |
//! | update under an ETag | `412 UpdateConditionNotSatisfied` | reads it back: holding what was sent, success; else `OutcomeUnknown` |
//! | delete (any precondition) | `404` | success: the entity is gone |
//! | delete under an ETag | `412` | `OutcomeUnknown` (the entity was written again since) |
//! | create table | `409 TableAlreadyExists` | success: the table exists, as asked |
//! | delete table | `404` | success: the table is gone |
//! | transaction | an error naming an operation | reads its entities back, in as few queries as the keys allow (one for consecutive keys): all as the transaction leaves them, success; else `OutcomeUnknown` |
//!
//! A conflict is never reported as a success without the read-back proving it, and never as a plain
//! conflict when the first try may have been the writer.
//!
//! The per-try policy also ends a call whose tries cannot reach the service: a connection refused, a host
//! name that does not resolve, or a failed TLS handshake gets [`UNREACHABLE_TRIES`] tries, not the retry
//! options' full count (eight retries over about 80 seconds by default), so that a client pointed at a port
//! where nothing listens fails within seconds.

use super::error::Failure;
use async_trait::async_trait;
use azure_core::error::ErrorKind as CoreErrorKind;
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::{Context, Request};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How many tries a call gets when no connection can be made (refused, a host name that does not resolve, a
/// failed TLS handshake; `docs/rules.md` §12): enough to ride out a service that is restarting, one to two
/// seconds under the default back-off, and no more, for nothing listening there is the usual cause.
pub const UNREACHABLE_TRIES: u32 = 3;

tokio::task_local! {
    /// What the tries of the call under way saw: the client sets it around each call (`Core::call`), and
    /// [`TryPolicy`], which runs in the same task, records each try in it. A task-local costs no allocation,
    /// where a value in the call's `Context` cost a map and two boxes on every call.
    pub(crate) static TRY_LOG: TryLog;
}

/// What the tries of one call saw, shared through [`TRY_LOG`] with [`TryPolicy`].
#[derive(Debug, Default)]
pub(crate) struct TryLog {
    tries: AtomicU32,
    unknown: AtomicBool,
}

impl TryLog {
    /// Whether some try ended with its outcome unknown (so a later try may see the first one's effect).
    pub(crate) fn outcome_was_unknown(&self) -> bool {
        self.unknown.load(Ordering::Relaxed)
    }

    /// How many tries were sent.
    pub(crate) fn tries(&self) -> u32 {
        self.tries.load(Ordering::Relaxed)
    }
}

/// The per-try policy: ends a try that gets no answer within the per-try timeout (as a transport error, which
/// the retry policy retries), and records in the call's [`TryLog`] which tries ended with their outcome unknown.
#[derive(Debug)]
pub(crate) struct TryPolicy {
    pub(crate) try_timeout: Option<Duration>,
}

#[async_trait]
impl Policy for TryPolicy {
    async fn send(&self, ctx: &Context, request: &mut Request, next: &[Arc<dyn Policy>]) -> PolicyResult {
        // Outside a call's scope (a pipeline used directly), nothing is recorded.
        let _ = TRY_LOG.try_with(|log| log.tries.fetch_add(1, Ordering::Relaxed));
        let result = match self.try_timeout {
            None => next[0].send(ctx, request, &next[1..]).await,
            Some(limit) => match tokio::time::timeout(limit, next[0].send(ctx, request, &next[1..])).await {
                Ok(result) => result,
                Err(_) => Err(azure_core::Error::with_message(
                    CoreErrorKind::Io,
                    format!("no answer within the per-try timeout of {limit:?}"),
                )),
            },
        };
        // A connection that could not be made carried nothing (`Connection`); any other transport error may
        // have come after the request was sent (`Io`, which the per-try timeout also gives).
        let unknown = match &result {
            Err(e) => matches!(e.kind(), CoreErrorKind::Io),
            Ok(response) => matches!(u16::from(response.status()), 500 | 502 | 504),
        };
        if unknown {
            let _ = TRY_LOG.try_with(|log| log.unknown.store(true, Ordering::Relaxed));
        }
        match result {
            // A connection that could not be made, for a cause a retry soon will not change. The retry policy
            // retries `Io` and `Connection` errors only: handed over as `Other`, the error ends the call, and
            // the client takes it out again (`Unreachable::take`).
            Err(e)
                if matches!(e.kind(), CoreErrorKind::Connection)
                    && TRY_LOG.try_with(|log| log.tries() >= UNREACHABLE_TRIES).unwrap_or(false)
                    && Failure::of(&e).is_unreachable() =>
            {
                Err(azure_core::Error::new(CoreErrorKind::Other, Unreachable(e)))
            }
            result => result,
        }
    }
}

/// The error of a try that could not reach the service, after which the call ends.
#[derive(Debug)]
pub(crate) struct Unreachable(azure_core::Error);

impl Unreachable {
    /// The try's error, as the transport gave it, from the error the pipeline returned (the retry policy wraps
    /// the one it will not retry); any other error as it is.
    pub(crate) fn take(e: azure_core::Error) -> azure_core::Error {
        let wrapped = e.downcast_ref::<azure_core::Error>().is_some_and(|inner| inner.downcast_ref::<Self>().is_some());
        let e = if wrapped { e.into_downcast::<azure_core::Error>().unwrap_or_else(|e| e) } else { e };
        match e.into_downcast::<Self>() {
            Ok(Unreachable(e)) => e.with_context(format!(
                "no connection could be made in {UNREACHABLE_TRIES} tries, after which the client gives up"
            )),
            Err(e) => e,
        }
    }
}

impl fmt::Display for Unreachable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Unreachable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}
