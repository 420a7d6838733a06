//! The two scans of an incremental generation side by side (the entities changed since the watermark, and every
//! key): one progress for the caller, and one failure stopping the other at its next checkpoint.
//!
//! Each scan is an export with its own directory and checkpoint, so each resumes on its own. Side by side, the
//! generation takes the time of the longer scan (the keys', as many pages as the table's) rather than of both:
//! against a service that sets the pace by round trips, the changes' scan costs nothing more.
//!
//! Layer: operations (a part of [`super`]).

use crate::error::{ErrorKind, TransferError};
use crate::progress::{Control, Event, Progress};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Runs `first` and `second` side by side, each given a [`Control`] of its own: their events reach `control`'s
/// progress as one operation's (the entities and bytes of both added up, `Started` once, `Finished` once both
/// have), and `control`'s token stops both. When one fails, the other is stopped at its next checkpoint; the
/// error returned is the one that did not come of that stop.
pub(super) async fn side_by_side<A, B>(
    control: &Control,
    first: impl FnOnce(Control) -> A,
    second: impl FnOnce(Control) -> B,
) -> Result<(), TransferError>
where
    A: Future<Output = Result<(), TransferError>>,
    B: Future<Output = Result<(), TransferError>>,
{
    let token = control.token().child_token();
    let shared = Arc::new(Shared::new(control.progress().clone()));
    let side = |index| {
        Control::new().with_progress(Arc::new(Side { shared: shared.clone(), index })).with_cancel(token.clone())
    };
    let stop_on_failure = |result: Result<(), TransferError>| {
        if result.is_err() {
            token.cancel();
        }
        result
    };
    let (a, b) = futures::join!(async { stop_on_failure(first(side(0)).await) }, async {
        stop_on_failure(second(side(1)).await)
    });
    match (a, b) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        // Both failed: one may have been stopped because the other failed, unless the caller stopped both.
        (Err(a), Err(b)) if a.kind() == ErrorKind::Cancelled && !control.is_cancelled() => Err(b),
        (Err(a), Err(_)) => Err(a),
    }
}

/// What both sides have reported.
struct Shared {
    progress: Arc<dyn Progress>,
    entities: [AtomicU64; 2],
    bytes: [AtomicU64; 2],
    started: AtomicBool,
    finished: AtomicUsize,
}

impl Shared {
    fn new(progress: Arc<dyn Progress>) -> Self {
        Shared {
            progress,
            entities: Default::default(),
            bytes: Default::default(),
            started: AtomicBool::new(false),
            finished: AtomicUsize::new(0),
        }
    }
}

/// The progress of one side.
struct Side {
    shared: Arc<Shared>,
    index: usize,
}

impl Progress for Side {
    fn event(&self, event: Event<'_>) {
        let shared = &*self.shared;
        let total = |counts: &[AtomicU64; 2], n: u64| {
            counts[self.index].store(n, Ordering::Relaxed);
            counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
        };
        match event {
            Event::Started { .. } if shared.started.swap(true, Ordering::Relaxed) => {}
            Event::Entities(n) => shared.progress.event(Event::Entities(total(&shared.entities, n))),
            Event::Bytes(n) => shared.progress.event(Event::Bytes(total(&shared.bytes, n))),
            Event::Finished if shared.finished.fetch_add(1, Ordering::Relaxed) == 0 => {}
            event => shared.progress.event(event),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Every event, as text.
    #[derive(Default)]
    struct Recorded(Mutex<Vec<String>>);

    impl Progress for Recorded {
        fn event(&self, event: Event<'_>) {
            self.0.lock().unwrap().push(format!("{event:?}"));
        }
    }

    /// A scan of `entities` entities, reporting each, stopping when its token fires; failing at its end with
    /// `fails`.
    async fn scan(control: Control, entities: u64, fails: Option<ErrorKind>) -> Result<(), TransferError> {
        control.report(Event::Started { operation: crate::progress::Operation::Export, total_bytes: None });
        for n in 1..=entities {
            tokio::task::yield_now().await;
            if control.is_cancelled() {
                control.report(Event::Finished);
                return Err(TransferError::new(ErrorKind::Cancelled, "stopped"));
            }
            control.report(Event::Entities(n));
        }
        control.report(Event::Finished);
        match fails {
            Some(kind) => Err(TransferError::new(kind, "the scan failed")),
            None => Ok(()),
        }
    }

    #[tokio::test]
    async fn two_scans_report_as_one() {
        let recorded = Arc::new(Recorded::default());
        let control = Control::new().with_progress(recorded.clone());
        side_by_side(&control, |c| scan(c, 3, None), |c| scan(c, 2, None)).await.unwrap();
        let events = recorded.0.lock().unwrap().clone();
        let count = |prefix: &str| events.iter().filter(|e| e.starts_with(prefix)).count();
        assert_eq!((count("Started"), count("Finished")), (1, 1), "{events:?}");
        assert_eq!(events.first().map(String::as_str), Some("Started { operation: Export, total_bytes: None }"));
        assert_eq!(events.last().map(String::as_str), Some("Finished"));
        let entities: Vec<&String> = events.iter().filter(|e| e.starts_with("Entities")).collect();
        assert_eq!(entities.last().map(|e| e.as_str()), Some("Entities(5)"), "the sum of both: {events:?}");
        assert!(entities.windows(2).all(|w| w[0] < w[1]), "never backwards: {events:?}");
    }

    #[tokio::test]
    async fn a_failed_scan_stops_the_other_and_its_error_is_returned() {
        for failing_first in [true, false] {
            let recorded = Arc::new(Recorded::default());
            let control = Control::new().with_progress(recorded.clone());
            // The failing scan fails at once; the other would read a million entities.
            let (fails, long) = (|c| scan(c, 0, Some(ErrorKind::Failed)), |c| scan(c, 1_000_000, None));
            let result = if failing_first {
                side_by_side(&control, fails, long).await
            } else {
                side_by_side(&control, long, fails).await
            };
            let e = result.unwrap_err();
            assert_eq!((e.kind(), e.to_string()), (ErrorKind::Failed, "the scan failed".to_owned()), "{failing_first}");
            assert!(!control.is_cancelled(), "the caller's token is left alone");
            let events = recorded.0.lock().unwrap().clone();
            let read: u64 = events
                .iter()
                .rev()
                .find_map(|e| e.strip_prefix("Entities(")?.strip_suffix(')')?.parse().ok())
                .unwrap_or(0);
            assert!(read < 1000, "the other scan stopped early, not after {read} entities");
        }
    }

    #[tokio::test]
    async fn the_callers_token_stops_both() {
        let control = Control::new();
        control.token().cancel();
        let e = side_by_side(&control, |c| scan(c, 10, None), |c| scan(c, 10, None)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Cancelled);
    }
}
