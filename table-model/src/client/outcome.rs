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

use async_trait::async_trait;
use azure_core::error::ErrorKind as CoreErrorKind;
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::{Context, Request};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the tries of one call saw, shared through the call's `Context` with [`TryPolicy`].
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
        let log = ctx.value::<Arc<TryLog>>();
        if let Some(log) = log {
            log.tries.fetch_add(1, Ordering::Relaxed);
        }
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
        if let (true, Some(log)) = (unknown, log) {
            log.unknown.store(true, Ordering::Relaxed);
        }
        result
    }
}
