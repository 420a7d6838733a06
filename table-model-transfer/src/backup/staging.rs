//! The file a restore imports: the table as of a generation ([`State::next_line`], merged on the entities'
//! keys alone), each entity checked against the target's rules and written as its line of JSON, on every core.
//!
//! One thread merges: it reads each line for its keys only and hands the newest version of each key on, as it
//! is, in blocks of lines. One thread per core checks each block: it reads each line whole and checks the
//! entity against the target's rules (with `--timestamp-as`, it adds the original `Timestamp` as a property and
//! writes the line again). The calling thread writes the blocks in the merge's order, so the file is the same
//! whatever the threads: each line as the backup has it (what `jsonl`'s writer writes for the entity, byte for
//! byte), or written again with the property added. Where every generation's manifest says its entities were
//! read with the target's rules when the backup wrote them ([`Target::checked`]), their files found unchanged,
//! a line goes on unread unless it is long enough for its body to reach 1 MiB. The first entity the target would
//! refuse, in key order, stops the staging with its keys, property and rule; the merge's own errors (a file out of
//! key order, a line that is not an entity) come in the same order.
//!
//! Memory is bounded: at most `2 × threads` blocks wait to be checked, and each holds about [`BLOCK_BYTES`].
//!
//! Layer: files (of the `backup` operations).

use super::merge::{Line, State};
use crate::check::{check_entity, Finding};
use crate::error::{ErrorKind, TransferError};
use crate::format::compress::Output;
use crate::format::{jsonl, Keys, Position};
use crate::progress::Control;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::{mpsc, Arc, Mutex};
use table_model::{PropertyName, RuleSet, TableName};

/// The lines handed to a checking thread at once.
const BLOCK_BYTES: usize = 256 * 1024;

/// The longest line of a checked generation ([`Target::checked`]) taken as it is: written again as a body, each
/// byte at most six (a `\u` escape), it stays under the 1 MiB every service takes (`docs/rules.md` §4.2), the one
/// rule of Storage's that reading a line does not check. A longer line is read and checked whole.
const CHECKED_LINE_BYTES: usize = 128 * 1024;

/// Whether a line of a checked generation, `len` bytes long with its `\n`, goes on unread
/// ([`CHECKED_LINE_BYTES`]).
pub(crate) fn goes_on_unread(len: u64) -> bool {
    len <= CHECKED_LINE_BYTES as u64
}

/// How to check each entity, and what the errors name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target<'a> {
    /// The target's rules.
    pub rules: RuleSet,
    /// The target table, named in errors.
    pub table: &'a TableName,
    /// The property that takes each entity's original `Timestamp`.
    pub timestamp_as: Option<&'a PropertyName>,
    /// Whether every line was read with `rules` when the backup wrote it
    /// ([`GenerationManifest::checked_with`](super::GenerationManifest::checked_with)), and is unchanged since
    /// (its file matches its manifest): such a line is passed on as it is, unless it is long enough for its body
    /// to reach 1 MiB or `timestamp_as` writes it again.
    pub checked: bool,
}

/// Lines of the merge, in its order.
struct Block {
    /// Its place among the blocks, from 0.
    seq: u64,
    /// The lines, each with its `\n`.
    text: Vec<u8>,
    /// Where each line is in the backup's files.
    positions: Vec<Position>,
    /// The length of its longest line, with its `\n`.
    longest: usize,
}

/// A block checked: the lines to write, or the first entity the target refuses.
struct Checked {
    seq: u64,
    lines: Result<(Vec<u8>, u64), TransferError>,
}

/// Writes into `out` the table that `state` merges, each entity checked against `target` (the first refused, in
/// key order, is the error); returns the entities written. Stops with [`ErrorKind::Cancelled`] when `control` is
/// cancelled.
///
/// # Errors
/// An entity the target refuses, a line of the backup that is not an entity or out of key order
/// ([`ErrorKind::InvalidInput`]); a file that cannot be read or written; a cancel.
pub(crate) fn stage(
    state: State,
    out: &mut Output<'_>,
    target: Target<'_>,
    control: &Control,
) -> Result<u64, TransferError> {
    let workers = std::thread::available_parallelism().map_or(2, usize::from);
    let (block_sender, block_receiver) = mpsc::sync_channel::<Block>(2 * workers);
    let (checked_sender, checked_receiver) = mpsc::channel::<Checked>();
    // Shared by the checking threads alone: when they have all ended, the merge's next send fails and it ends.
    let block_receiver = Arc::new(Mutex::new(block_receiver));
    std::thread::scope(|scope| {
        let merging = scope.spawn(move || merge(state, &block_sender, control));
        for _ in 0..workers {
            let (blocks, checked) = (block_receiver.clone(), checked_sender.clone());
            scope.spawn(move || check_blocks(&blocks, &checked, target));
        }
        drop((checked_sender, block_receiver));
        // Blocks come checked in any order; they are written in the merge's.
        let mut pending = BTreeMap::new();
        let (mut next, mut entities) = (0, 0);
        let mut failed = None;
        for checked in checked_receiver {
            pending.insert(checked.seq, checked.lines);
            while let Some(lines) = pending.remove(&next) {
                next += 1;
                let written = lines.and_then(|(text, count)| {
                    out.write_all(&text).map_err(|e| out.error(e))?;
                    Ok(count)
                });
                match written {
                    Ok(count) => entities += count,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if failed.is_some() {
                // Closing the checked blocks ends each checking thread at its next block, and then the merge.
                break;
            }
        }
        let merged =
            merging.join().unwrap_or_else(|_| Err(TransferError::failed("the thread merging the backup panicked")));
        match (failed, merged) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            // Every block merged was written, unless a checking thread ended without giving its block back.
            (None, Ok(blocks)) if blocks != next => Err(TransferError::failed("a thread checking the backup panicked")),
            (None, Ok(_)) => Ok(entities),
        }
    })
}

/// The merge: the lines of `state` in blocks into `blocks`; the number of blocks sent. Ends early, without an
/// error, when `blocks` is closed (a block was refused).
fn merge(mut state: State, blocks: &mpsc::SyncSender<Block>, control: &Control) -> Result<u64, TransferError> {
    let mut block = Block { seq: 0, text: Vec::new(), positions: Vec::new(), longest: 0 };
    loop {
        let line = state.next_line()?;
        let end = line.is_none();
        if let Some(Line { text, position, .. }) = line {
            block.text.extend_from_slice(&text);
            block.positions.push(position);
            block.longest = block.longest.max(text.len());
        }
        if (end && !block.positions.is_empty()) || block.text.len() >= BLOCK_BYTES {
            if control.is_cancelled() {
                return Err(TransferError::new(
                    ErrorKind::Cancelled,
                    "the restore was cancelled before it wrote anything",
                ));
            }
            let seq = block.seq;
            let next = Block { seq: seq + 1, text: Vec::new(), positions: Vec::new(), longest: 0 };
            let full = std::mem::replace(&mut block, next);
            if blocks.send(full).is_err() {
                return Ok(seq);
            }
        }
        if end {
            return Ok(block.seq);
        }
    }
}

/// Checks each block that comes, until `blocks` ends or `checked` is closed.
fn check_blocks(blocks: &Mutex<mpsc::Receiver<Block>>, checked: &mpsc::Sender<Checked>, target: Target<'_>) {
    let mut findings = Vec::new();
    loop {
        let block = match blocks.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok(block) = block else { return };
        let lines = check_block(&block, target, &mut findings);
        let text = lines.map(|text| (text.unwrap_or(block.text), block.positions.len() as u64));
        if checked.send(Checked { seq: block.seq, lines: text }).is_err() {
            return;
        }
    }
}

/// Checks a block's entities: the block's lines written again (with `timestamp_as`), `None` when they are written
/// as they are; the first entity the target refuses.
fn check_block(
    block: &Block,
    target: Target<'_>,
    findings: &mut Vec<Finding>,
) -> Result<Option<Vec<u8>>, TransferError> {
    let mut again = target.timestamp_as.map(|_| Vec::with_capacity(block.text.len() + block.text.len() / 8));
    let checked = target.checked && again.is_none();
    if checked && goes_on_unread(block.longest as u64) {
        // Every line goes on unread: none is looked at (a pass over 150 MB of lines was a sixth of a restore's
        // merging thread).
        return Ok(None);
    }
    for (line, position) in block.text.split_inclusive(|&b| b == b'\n').zip(&block.positions) {
        if checked && goes_on_unread(line.len() as u64) {
            continue;
        }
        let mut entity = match jsonl::read_line(line) {
            Some(Ok(entity)) => entity,
            Some(Err(rejected)) => {
                return Err(TransferError::invalid(format!(
                    "`{}` line {} is not an entity: {}",
                    position.source, position.line, rejected.rule
                )));
            }
            None => {
                return Err(TransferError::invalid(format!("`{}` line {} is blank", position.source, position.line)));
            }
        };
        if let (Some(name), Some(timestamp)) = (target.timestamp_as, entity.timestamp())
            && let Err(e) = entity.insert(name.clone(), timestamp)
        {
            return Err(refused(target, &Keys::of(&entity), Some(name.to_string()), e.to_string()));
        }
        findings.clear();
        check_entity(target.rules, &entity, findings);
        if let Some(finding) = findings.pop() {
            return Err(refused(target, &Keys::of(&entity), finding.property, finding.rule));
        }
        if let Some(again) = &mut again {
            jsonl::write_entity(&entity, again)
                .map_err(|e| refused(target, &Keys::of(&entity), None, e.to_string()))?;
        }
    }
    Ok(again)
}

/// The error of an entity the target refuses.
fn refused(target: Target<'_>, keys: &Keys, property: Option<String>, rule: String) -> TransferError {
    let at = property.map_or_else(String::new, |p| format!(", property `{p}`"));
    TransferError::invalid(format!(
        "the backup's entity {keys}{at} cannot be restored into `{}`: {rule}; nothing was written",
        target.table
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backup::merge::{key_order, GenerationFiles};
    use crate::format::{Compression, Sink};
    use crate::CancellationToken;
    use std::path::{Path, PathBuf};
    use table_model::{DateTime, Entity, PartitionKey, RowKey};

    fn temp(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("staging-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// An entity as a backup holds it: its keys, a `Timestamp`, a version and some text.
    fn entity(partition: u32, row: &str, version: i64) -> Entity {
        let mut entity = Entity::new(PartitionKey::new(format!("p{partition:03}")).unwrap(), RowKey::new(row).unwrap())
            .with("V".parse().unwrap(), version)
            .unwrap()
            .with("Text".parse().unwrap(), format!("{} {row}", "text of the entity".repeat(5)))
            .unwrap();
        let timestamp: DateTime = format!("2026-11-{:02}T10:00:00.1234567Z", 1 + version % 28).parse().unwrap();
        entity.set_server_metadata(Some(timestamp), None);
        entity
    }

    /// Writes entities as a JSON lines file, in the service's key order, with `extra` lines at its end.
    fn file(path: &Path, entities: impl IntoIterator<Item = Entity>, extra: &str) -> PathBuf {
        let mut sorted: Vec<Entity> = entities.into_iter().collect();
        sorted.sort_by(key_order);
        let mut text = Vec::new();
        for e in &sorted {
            jsonl::write_entity(e, &mut text).unwrap();
        }
        text.extend_from_slice(extra.as_bytes());
        std::fs::write(path, text).unwrap();
        path.to_owned()
    }

    /// Three generations of 3,000 entities in 30 partitions (about 700 KB: several blocks): the second changes
    /// 600 and deletes a partition, the third changes 300 again (10 of them in the deleted partition). `bad`
    /// entities go into the third.
    fn generations(dir: &Path, bad: &[Entity], extra: &str) -> Vec<GenerationFiles> {
        let full = (0..30).flat_map(|p| (0..100).map(move |r| entity(p, &format!("{r:04}"), 1)));
        let second = (0..30).flat_map(|p| (0..20).map(move |r| entity(p, &format!("{:04}", r * 5), 2)));
        let deleted =
            (0..100).map(|r| Entity::new(PartitionKey::new("p007").unwrap(), RowKey::new(format!("{r:04}")).unwrap()));
        let third = (0..30).flat_map(|p| (0..10).map(move |r| entity(p, &format!("{:04}", r * 7), 3)));
        vec![
            GenerationFiles { entities: vec![file(&dir.join("g1.jsonl"), full, "")], deleted: Vec::new() },
            GenerationFiles {
                entities: vec![file(&dir.join("g2.jsonl"), second, "")],
                deleted: vec![file(&dir.join("d2.jsonl"), deleted, "")],
            },
            GenerationFiles {
                entities: vec![file(&dir.join("g3.jsonl"), third.chain(bad.iter().cloned()), extra)],
                deleted: Vec::new(),
            },
        ]
    }

    fn again(files: &[GenerationFiles]) -> Vec<GenerationFiles> {
        files.iter().map(|g| GenerationFiles { entities: g.entities.clone(), deleted: g.deleted.clone() }).collect()
    }

    /// Stages `files` into bytes.
    fn staged(
        files: &[GenerationFiles],
        target: Target<'_>,
        control: &Control,
    ) -> Result<(Vec<u8>, u64), TransferError> {
        let mut bytes = Vec::new();
        let mut out = Output::new(Sink::stream("staged", &mut bytes), Compression::None);
        let entities = stage(State::open_lines(again(files))?, &mut out, target, control)?;
        out.finish()?;
        drop(out);
        Ok((bytes, entities))
    }

    /// The file is what decoding each entity of the merge, adding its `Timestamp` as a property when asked, and
    /// writing it again makes, byte for byte, over several blocks.
    #[test]
    fn the_staged_file_is_the_merged_entities_written_again() {
        let dir = temp("same");
        let files = generations(&dir, &[], "");
        let table = TableName::new("Target").unwrap();
        let stamp: PropertyName = "BackedUpAt".parse().unwrap();
        for timestamp_as in [None, Some(&stamp)] {
            let mut expected = Vec::new();
            let mut state = State::open(again(&files)).unwrap();
            let mut count = 0;
            while let Some(mut entity) = state.next_entity().unwrap() {
                if let (Some(name), Some(timestamp)) = (timestamp_as, entity.timestamp()) {
                    entity.insert(name.clone(), timestamp).unwrap();
                }
                jsonl::write_entity(&entity, &mut expected).unwrap();
                count += 1;
            }
            assert_eq!(count, 3_000 - 100 + 10, "the deleted partition holds the third generation's 10");
            assert!(expected.len() > 2 * BLOCK_BYTES, "several blocks: {}", expected.len());
            let target = Target { rules: RuleSet::Storage, table: &table, timestamp_as, checked: false };
            let (bytes, entities) = staged(&files, target, &Control::new()).unwrap();
            assert_eq!(entities, count);
            assert!(bytes == expected, "{timestamp_as:?}: the staged file differs");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The first entity in key order that the target refuses is the error, whichever block it is in and
    /// whichever thread checks it.
    #[test]
    fn the_first_entity_the_target_refuses_is_named() {
        let dir = temp("refused");
        let long = "r".repeat(300);
        let bad = [entity(25, &format!("0003{long}"), 3), entity(21, &format!("0002{long}"), 3)];
        let files = generations(&dir, &bad, "");
        let table = TableName::new("Target").unwrap();
        let target = Target { rules: RuleSet::CosmosDb, table: &table, timestamp_as: None, checked: false };
        for _ in 0..3 {
            let err = staged(&files, target, &Control::new()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
            let text = err.to_string();
            assert!(
                text.starts_with(&format!("the backup's entity PartitionKey `p021`, RowKey `0002{long}`, property `RowKey` cannot be restored into `Target`: ")),
                "{text}"
            );
            assert!(text.contains("at most 255") && text.ends_with("; nothing was written"), "{text}");
        }
        // The same entities are valid for Azure Table Storage.
        let storage = Target { rules: RuleSet::Storage, ..target };
        assert_eq!(staged(&files, storage, &Control::new()).unwrap().1, 3_000 - 100 + 10 + 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A checked generation's lines go on as they are, unread (even a line the reading would refuse: its file
    /// matched a manifest that says it was read), unless `timestamp_as` writes each again or a line is long
    /// enough for its body to reach 1 MiB: that one is read and checked.
    #[test]
    fn a_checked_generations_lines_go_on_unread_but_a_long_one_is_checked() {
        let dir = temp("checked");
        let broken = "{\"PartitionKey\":\"p029\",\"RowKey\":\"zzz\",\"N\":tru}\n";
        let files = generations(&dir, &[], broken);
        let table = TableName::new("Target").unwrap();
        let checked = Target { rules: RuleSet::Storage, table: &table, timestamp_as: None, checked: true };
        let (bytes, entities) = staged(&files, checked, &Control::new()).unwrap();
        assert_eq!(entities, 3_000 - 100 + 10 + 1);
        assert!(bytes.ends_with(broken.as_bytes()), "the line as it is");
        let stamp: PropertyName = "BackedUpAt".parse().unwrap();
        let again = Target { timestamp_as: Some(&stamp), ..checked };
        let err = staged(&files, again, &Control::new()).unwrap_err();
        assert!(err.to_string().contains("line 301 is not an entity: invalid JSON"), "{err}");
        // Seven strings of 30,000 control characters: 420 KB by the size formula, each character six bytes of
        // JSON, so a body of 1.26 MB (a line the backup's writer would not have written).
        let strings: Vec<String> = (0..7).map(|k| format!(",\"S{k}\":\"{}\"", "\\u0001".repeat(30_000))).collect();
        let long = format!("{{\"PartitionKey\":\"p029\",\"RowKey\":\"zzz\"{}}}\n", strings.concat());
        let files = generations(&dir, &[], &long);
        let err = staged(&files, checked, &Control::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert_eq!(
            err.to_string(),
            "the backup's entity PartitionKey `p029`, RowKey `zzz` cannot be restored into `Target`: invalid entity: \
             the JSON body must be at most 1048576 bytes, found 1260094; nothing was written"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A line whose keys read but whose rest is not an entity is named by file and line; a cancel stops the
    /// staging.
    #[test]
    fn a_line_that_is_not_an_entity_is_named_and_a_cancel_stops() {
        let dir = temp("line");
        let files = generations(&dir, &[], "{\"PartitionKey\":\"p029\",\"RowKey\":\"zzz\",\"N\":tru}\n");
        let table = TableName::new("Target").unwrap();
        let target = Target { rules: RuleSet::Storage, table: &table, timestamp_as: None, checked: false };
        let err = staged(&files, target, &Control::new()).unwrap_err();
        let path = dir.join("g3.jsonl");
        assert!(
            err.to_string().starts_with(&format!("`{}` line 301 is not an entity: invalid JSON", path.display())),
            "{err}"
        );
        let token = CancellationToken::new();
        token.cancel();
        let err = staged(&files, target, &Control::new().with_cancel(token)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Cancelled, "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
