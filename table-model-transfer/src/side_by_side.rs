//! Chunks written side by side, for `import` and `copy`: where each transaction's round trip sets the pace, a
//! chunk written alone ends with its places in flight emptying, its last transactions answered one round trip
//! after another while the next chunk waits. [`SideBySide`] writes the next chunk beside it: from when what the
//! chunk before has left takes as many rounds of the places in flight as the next chunk's longest partition (whose
//! transactions go one after the other), the two sharing the places ([`BulkSlots`], so that the operation's
//! transactions in flight stay at most what it was given). The next chunk's entities of a partition the chunk
//! before also has wait for that chunk to end, so that each partition's writes keep their order. Each chunk comes
//! back written, in order, for its operation to settle and checkpoint; a stopped run may then have written part of
//! [`SIDE_BY_SIDE`] chunks past its checkpoint, which the run that resumes it settles before writing them
//! ([`ChunkWriter::resumed`]).
//!
//! Layer: service.

use crate::error::TransferError;
use crate::progress::Control;
use crate::write::{write_chunk, ChunkWriter, Line, Settled, Tally, WriteMode};
use futures::future::Either;
use std::collections::HashMap;
use std::num::{NonZeroU32, NonZeroUsize};
use table_model::client::{BulkSlots, TableClient, DEFAULT_CONCURRENCY};
use table_model::limits::BATCH_MAX_OPERATIONS;
use tokio_util::sync::CancellationToken;

/// Chunks written at once at most. A stopped run may have written part of as many chunks past its checkpoint.
pub const SIDE_BY_SIDE: usize = 2;

/// Chunks of one operation written side by side (the module's documentation), each handed back written with what
/// came with it (`M`: what its operation needs to settle it).
pub(crate) struct SideBySide<M> {
    table: TableClient,
    control: Control,
    mode: WriteMode,
    partition_rate: Option<NonZeroU32>,
    in_flight: Option<NonZeroUsize>,
    slots: BulkSlots,
    tally: Tally,
    pending: Option<Pending<M>>,
    /// The [`Tally`] once every chunk given so far is settled.
    ends_at: u64,
}

/// A chunk written on a task of its own.
struct Pending<M> {
    task: tokio::task::JoinHandle<Result<Settled, TransferError>>,
    /// Cancelled once its task ends (or is stopped): the next chunk's entities in its partitions go then.
    written: CancellationToken,
    /// How many of its entities each PartitionKey has.
    partitions: HashMap<String, usize>,
    /// The [`Tally`] once it is settled, and every chunk before it.
    ends_at: u64,
    with: M,
}

impl<M: Send + 'static> SideBySide<M> {
    /// Chunks into `table`, written in `mode` with the bulk writer's pace per partition and `in_flight`
    /// transactions at most between them (`None`: the bulk writer's 8); progress goes to `control`.
    pub(crate) fn new(
        table: &TableClient,
        control: &Control,
        mode: WriteMode,
        partition_rate: Option<NonZeroU32>,
        in_flight: Option<NonZeroUsize>,
    ) -> Self {
        SideBySide {
            table: table.clone(),
            control: control.clone(),
            mode,
            partition_rate,
            in_flight,
            slots: BulkSlots::new(in_flight.unwrap_or(DEFAULT_CONCURRENCY)),
            tally: Tally::default(),
            pending: None,
            ends_at: 0,
        }
    }

    /// What the operation's chunks have settled: written and found written as they are, the rest as the
    /// operation adds it when it settles a chunk.
    pub(crate) fn tally(&self) -> &Tally {
        &self.tally
    }

    /// Starts writing `lines` beside the chunk being written (once that one nears its end); `others` of the
    /// chunk's records are settled without being written (records that do not read), and `resumed` says whether
    /// a stopped run may have written some. Hands back the chunk before it, written, with what came with it, for
    /// the operation to settle before the next call; an error stops the chunks under way.
    pub(crate) async fn push(
        &mut self,
        lines: Vec<Line>,
        others: u64,
        resumed: bool,
        with: M,
    ) -> Result<Option<(Settled, M)>, TransferError> {
        let partitions = partitions_of(&lines);
        self.ends_at += lines.len() as u64 + others;
        let mut before = None;
        if let Some(pending) = &mut self.pending {
            let round = (self.slots.places() * BATCH_MAX_OPERATIONS) as u64;
            let left = round * longest_chain(&partitions);
            let tally = self.tally.clone();
            let near_its_end = std::pin::pin!(tally.reaches(pending.ends_at.saturating_sub(left)));
            if let Either::Left((settled, _)) = futures::future::select(&mut pending.task, near_its_end).await
                && let Some(pending) = self.pending.take()
            {
                // It ended first: this chunk goes alone.
                before = Some((joined(settled)?, pending.with));
            }
        }
        // An export's file read by ranges side by side has a few partitions cut between pages far apart.
        let (held, free): (Vec<Line>, Vec<Line>) = match &self.pending {
            Some(pending) if partitions.keys().any(|p| pending.partitions.contains_key(p)) => {
                lines.into_iter().partition(|line| pending.partitions.contains_key(line.entity.partition_key()))
            }
            _ => (Vec::new(), lines),
        };
        let after = self.pending.as_ref().map(|pending| pending.written.clone());
        let written = CancellationToken::new();
        let ended = written.clone().drop_guard();
        let (table, control, tally) = (self.table.clone(), self.control.clone(), self.tally.clone());
        let (mode, partition_rate, in_flight, slots) =
            (self.mode, self.partition_rate, self.in_flight, Some(self.slots.clone()));
        let task = tokio::spawn(async move {
            let _ended = ended;
            let writer = ChunkWriter {
                table: &table,
                mode,
                resumed,
                control: &control,
                tally,
                partition_rate,
                in_flight,
                slots,
            };
            let held = async {
                if held.is_empty() {
                    return Ok(Settled::default());
                }
                if let Some(after) = after {
                    after.cancelled().await;
                }
                write_chunk(&writer, held).await
            };
            let (free, held) = tokio::join!(write_chunk(&writer, free), held);
            let mut settled = free?;
            settled.add(held?);
            Ok(settled)
        });
        let ends_at = self.ends_at;
        if let Some(pending) = self.pending.replace(Pending { task, written, partitions, ends_at, with }) {
            match joined(pending.task.await) {
                Ok(settled) => before = Some((settled, pending.with)),
                Err(e) => {
                    self.abort().await;
                    return Err(e);
                }
            }
        }
        Ok(before)
    }

    /// Waits for the chunk being written, if any, and hands it back written.
    pub(crate) async fn finish(&mut self) -> Result<Option<(Settled, M)>, TransferError> {
        let Some(pending) = self.pending.take() else { return Ok(None) };
        Ok(Some((joined(pending.task.await)?, pending.with)))
    }

    /// Stops the chunk being written, if any (the one before it failed): what it wrote is settled by the run that
    /// resumes, within the chunks it reads first.
    pub(crate) async fn abort(&mut self) {
        if let Some(pending) = self.pending.take() {
            pending.task.abort();
            let _ = pending.task.await;
        }
    }
}

/// What a chunk's task ended with: its result, or a failure when it panicked or was stopped.
fn joined(end: Result<Result<Settled, TransferError>, tokio::task::JoinError>) -> Result<Settled, TransferError> {
    end.map_err(|e| TransferError::failed(format!("writing a chunk stopped: {e}")))?
}

/// How many entities of `lines` each PartitionKey has (an export's file, in key order, holds few a chunk).
fn partitions_of(lines: &[Line]) -> HashMap<String, usize> {
    let mut partitions: HashMap<String, usize> = HashMap::new();
    let mut run: Option<(&str, usize)> = None;
    for line in lines {
        let partition = line.entity.partition_key();
        match &mut run {
            Some((current, n)) if *current == partition => *n += 1,
            _ => {
                if let Some((current, n)) = run.replace((partition, 1)) {
                    *partitions.entry(current.to_owned()).or_default() += n;
                }
            }
        }
    }
    if let Some((current, n)) = run {
        *partitions.entry(current.to_owned()).or_default() += n;
    }
    partitions
}

/// The most transactions one of `partitions` takes (at least one): a partition's go one after the other, so a
/// chunk takes at least as many round trips.
fn longest_chain(partitions: &HashMap<String, usize>) -> u64 {
    partitions.values().map(|n| n.div_ceil(BATCH_MAX_OPERATIONS)).max().unwrap_or(1).max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::ToWrite;
    use std::sync::Arc;
    use table_model::{Entity, PartitionKey, RowKey};

    fn lines(partitions: &str) -> Vec<Line> {
        let source: Arc<str> = "in.jsonl".into();
        let line = |(i, c): (usize, char)| {
            let keys = (PartitionKey::new(c.to_string()).unwrap(), RowKey::new(format!("{i:05}")).unwrap());
            Line {
                file: 0,
                source: source.clone(),
                number: i as u64,
                entity: ToWrite::Decoded(Entity::new(keys.0, keys.1)),
            }
        };
        partitions.chars().enumerate().map(line).collect()
    }

    #[test]
    fn a_chunks_partitions_are_counted_and_its_longest_chain_is_its_largest_partitions_transactions() {
        let counted = partitions_of(&lines("aaabba"));
        assert_eq!((counted["a"], counted["b"], counted.len()), (4, 2, 2));
        assert_eq!(longest_chain(&counted), 1);
        assert_eq!(longest_chain(&partitions_of(&lines(&"c".repeat(250)))), 3, "250 entities: 3 transactions");
        assert_eq!(longest_chain(&HashMap::new()), 1);
    }
}
