//! Deadlines kept to a fraction of a millisecond, for a server's answers that must leave at their latency.
//!
//! tokio's timer ticks in whole milliseconds and fires on the first tick after a deadline, once a worker gets to
//! it: on the benchmarks' 2-core machine a 15 ms latency was answered after 16.2 ms on average (measured from the
//! request read whole to the answer's turn, 2,027 transactions), which added a millisecond to every round trip a
//! benchmark compares against the latency. Here one thread sleeps to the earliest deadline on a condition
//! variable (the kernel's high-resolution timers) and wakes the task waiting for it.
//!
//! Layer: base.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::Instant;
use tokio::sync::oneshot;

/// Waits until `deadline`, to within the kernel's timer slack rather than tokio's millisecond tick. A deadline
/// already past returns at once.
pub(crate) async fn sleep_until(deadline: Instant) {
    if deadline <= Instant::now() {
        return;
    }
    let (sender, receiver) = oneshot::channel();
    let alarm = alarm();
    {
        let mut pending = alarm.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let serial = pending.serial;
        pending.serial += 1;
        pending.heap.push(Reverse(Waiting { deadline, serial, sender }));
    }
    alarm.changed.notify_one();
    // The sender is dropped only once it has fired (or with the process).
    let _ = receiver.await;
}

/// The deadlines waited for, earliest first, and the thread that keeps them.
struct Alarm {
    pending: Mutex<Pending>,
    changed: Condvar,
}

#[derive(Default)]
struct Pending {
    heap: BinaryHeap<Reverse<Waiting>>,
    /// Orders deadlines that are equal (a heap needs a total order; senders have none).
    serial: u64,
}

struct Waiting {
    deadline: Instant,
    serial: u64,
    sender: oneshot::Sender<()>,
}

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        (self.deadline, self.serial) == (other.deadline, other.serial)
    }
}

impl Eq for Waiting {}

impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.deadline, self.serial).cmp(&(other.deadline, other.serial))
    }
}

/// The process's alarm, its thread started on first use.
fn alarm() -> &'static Alarm {
    static ALARM: OnceLock<&'static Alarm> = OnceLock::new();
    ALARM.get_or_init(|| {
        let alarm: &'static Alarm =
            Box::leak(Box::new(Alarm { pending: Mutex::new(Pending::default()), changed: Condvar::new() }));
        std::thread::Builder::new()
            .name("loopback-alarm".into())
            .spawn(move || alarm.run())
            .expect("the alarm's thread starts");
        alarm
    })
}

impl Alarm {
    fn run(&self) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let now = Instant::now();
            while pending.heap.peek().is_some_and(|Reverse(w)| w.deadline <= now) {
                if let Some(Reverse(waiting)) = pending.heap.pop() {
                    let _ = waiting.sender.send(());
                }
            }
            pending = match pending.heap.peek().map(|Reverse(w)| w.deadline - now) {
                Some(wait) => self.changed.wait_timeout(pending, wait).unwrap_or_else(PoisonError::into_inner).0,
                None => self.changed.wait(pending).unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_deadline_fires_none_before_its_time() {
        let start = Instant::now();
        // Deadlines out of order, two equal, one already past: the heap keeps them apart by their serials.
        let tasks: Vec<_> = [30u64, 10, 20, 10, 0]
            .into_iter()
            .map(|ms| {
                tokio::spawn(async move {
                    let deadline = start + Duration::from_millis(ms);
                    sleep_until(deadline).await;
                    assert!(Instant::now() >= deadline, "woken before its deadline ({ms} ms)");
                })
            })
            .collect();
        // A deadline that never fires fails here rather than hanging the suite.
        let all = async {
            for task in tasks {
                task.await.expect("no deadline fired early");
            }
        };
        tokio::time::timeout(Duration::from_secs(10), all).await.expect("every deadline fired within 10 s");
    }
}
