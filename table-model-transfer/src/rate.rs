//! `--max-rate`: at most so many entities per second, read (`export`, `count`) or written (`import`, `copy`).
//!
//! Without `--max-rate`, a run against Azure Table Storage stays under the account's documented target of 20,000
//! entities per second ([`STORAGE_ACCOUNT_TARGET`]); against Cosmos DB (throughput is what the account
//! provisions, and a `429` says when it is spent) and Azurite there is no default limit. Whatever the limit, the
//! client backs off on `503`, `500 OperationTimedOut` and `429` (honouring `x-ms-retry-after-ms` and
//! `Retry-After`, `docs/rules.md` §12), and against Storage the bulk writer paces each partition under its own
//! target of 2,000 entities per second ([`partition_limit_for`]).
//!
//! Layer: service.

use std::num::NonZeroU32;
use std::time::Duration;
use table_model::client::PARTITION_TARGET;
use table_model::ServiceKind;
use tokio::time::Instant;

/// The documented target of one Storage account: 20,000 entities (of 1 KiB) per second.
pub const STORAGE_ACCOUNT_TARGET: u64 = 20_000;

/// How far ahead of its schedule a run may get before it waits: small bursts cost nothing.
const SLACK: Duration = Duration::from_millis(50);

/// How far behind its schedule a run may fall and catch up in a burst; past it the schedule restarts.
const CATCH_UP: Duration = Duration::from_secs(1);

/// The limit of a run against `kind`: `--max-rate` if given (`0`: none), else [`STORAGE_ACCOUNT_TARGET`] for
/// Storage and none for the others.
///
/// ```
/// use table_model::ServiceKind;
/// use table_model_transfer::rate::limit_for;
/// assert_eq!(limit_for(None, ServiceKind::Storage), Some(20_000));
/// assert_eq!(limit_for(None, ServiceKind::Azurite), None);
/// assert_eq!(limit_for(Some(500), ServiceKind::CosmosDb), Some(500));
/// assert_eq!(limit_for(Some(0), ServiceKind::Storage), None);
/// ```
pub fn limit_for(max_rate: Option<u64>, kind: ServiceKind) -> Option<u64> {
    match max_rate {
        Some(0) => None,
        Some(rate) => Some(rate),
        None => (kind == ServiceKind::Storage).then_some(STORAGE_ACCOUNT_TARGET),
    }
}

/// The pace of each partition written (`import`, `copy`), for the bulk writer's `partition_rate`: Azure Table
/// Storage's documented target of 2,000 entities per second per partition ([`PARTITION_TARGET`]) against
/// Storage, unless `--max-rate 0` lifts every bound; none against Cosmos DB and Azurite.
///
/// ```
/// use table_model::client::PARTITION_TARGET;
/// use table_model::ServiceKind;
/// use table_model_transfer::rate::partition_limit_for;
/// assert_eq!(partition_limit_for(None, ServiceKind::Storage), Some(PARTITION_TARGET));
/// assert_eq!(partition_limit_for(Some(500), ServiceKind::Storage), Some(PARTITION_TARGET));
/// assert_eq!(partition_limit_for(Some(0), ServiceKind::Storage), None);
/// assert_eq!(partition_limit_for(None, ServiceKind::Azurite), None);
/// ```
pub fn partition_limit_for(max_rate: Option<u64>, kind: ServiceKind) -> Option<NonZeroU32> {
    (kind == ServiceKind::Storage && max_rate != Some(0)).then_some(PARTITION_TARGET)
}

/// Paces a run to at most `per_second` entities per second, on average over any second.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use table_model_transfer::rate::Pace;
/// let mut pace = Pace::new(None);
/// pace.take(1_000_000).await; // no limit: never waits
/// # }
/// ```
#[derive(Debug)]
pub struct Pace {
    per_second: Option<u64>,
    start: Instant,
    taken: u64,
}

impl Pace {
    /// A pace of at most `per_second` entities per second; `None` never waits.
    pub fn new(per_second: Option<u64>) -> Pace {
        Pace { per_second: per_second.filter(|&r| r > 0), start: Instant::now(), taken: 0 }
    }

    /// Counts `n` more entities, waiting first if the run is ahead of its schedule.
    pub async fn take(&mut self, n: u64) {
        let Some(rate) = self.per_second else { return };
        self.taken += n;
        let due = self.start + Duration::from_secs_f64(self.taken as f64 / rate as f64);
        let now = Instant::now();
        if due > now + SLACK {
            tokio::time::sleep_until(due).await;
        } else if due + CATCH_UP < now {
            // Long idle (a slow source): do not let the saved-up allowance become a burst.
            self.start = now;
            self.taken = n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With the clock paused, the time a pace waits is exact: 2,500 entities at 1,000/s end 2.5 s after the
    /// start (less the slack), and nothing waits below the limit.
    #[tokio::test(start_paused = true)]
    async fn a_pace_waits_as_long_as_its_rate_says() {
        let start = Instant::now();
        let mut pace = Pace::new(Some(1_000));
        for _ in 0..25 {
            pace.take(100).await;
        }
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(2_450) && waited <= Duration::from_millis(2_500), "{waited:?}");

        let start = Instant::now();
        let mut none = Pace::new(None);
        none.take(u64::MAX / 2).await;
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
}
