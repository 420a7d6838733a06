//! Merges in key order, streaming: the keys deleted between two generations (a key set against the next), and
//! the table as of a generation (the newest version of each key over the generations up to it, less the keys
//! deleted by then). Every file of a generation is in the service's key order (PartitionKey, then RowKey, each
//! by UTF-16 code unit, `docs/rules.md` §2.3); each reader checks that it is, so memory holds one entity per
//! file, whatever the table's size.
//!
//! Layer: files (of the `backup` operations).

use crate::error::TransferError;
use crate::format::{self, jsonl, EntityReader, Keys, Position};
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::path::PathBuf;
use table_model::Entity;

/// The order of two entities' keys: the service's.
pub(crate) fn key_order(a: &Entity, b: &Entity) -> Ordering {
    a.partition_key().cmp(b.partition_key()).then_with(|| a.row_key().cmp(b.row_key()))
}

/// What [`Sorted`] reads of each record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reading {
    /// Whole entities.
    Entities,
    /// The keys alone (`format::open_keys_reader`).
    Keys,
    /// The keys, and each record's line of JSON: the file's own line (`jsonl`), or the line written for the
    /// record's entity (the other formats, whose records are read whole).
    Lines,
}

/// A record of a [`Sorted`] read for its line ([`Sorted::take_line`]).
#[derive(Debug)]
pub(crate) struct Line {
    /// The entity's line of JSON, with its `\n`.
    pub text: Vec<u8>,
    /// Where it is.
    pub position: Position,
}

/// A record read ahead by [`Sorted`]: its entity (its keys alone, unless the files are read for whole entities),
/// and with [`Reading::Lines`] its line.
struct Head {
    entity: Entity,
    line: Option<Line>,
}

/// The entities of files read one after another, checked to be in strictly increasing key order, one read
/// ahead.
pub(crate) struct Sorted {
    files: VecDeque<PathBuf>,
    reader: Option<(PathBuf, Box<dyn EntityReader>)>,
    /// The next record, read ahead.
    head: Option<Head>,
    reading: Reading,
}

impl Sorted {
    /// The entities of `files`, in order.
    pub(crate) fn open(files: Vec<PathBuf>) -> Result<Sorted, TransferError> {
        Sorted::start(files, Reading::Entities)
    }

    /// The keys of the entities of `files`, in order, as entities of their keys alone (`format::open_keys_reader`):
    /// for merges of key sets.
    pub(crate) fn open_keys(files: Vec<PathBuf>) -> Result<Sorted, TransferError> {
        Sorted::start(files, Reading::Keys)
    }

    /// The keys of the entities of `files`, in order, each with its line of JSON ([`Sorted::take_line`]): for a
    /// merge that passes lines on without decoding them.
    pub(crate) fn open_lines(files: Vec<PathBuf>) -> Result<Sorted, TransferError> {
        Sorted::start(files, Reading::Lines)
    }

    fn start(files: Vec<PathBuf>, reading: Reading) -> Result<Sorted, TransferError> {
        let mut sorted = Sorted { files: files.into(), reader: None, head: None, reading };
        sorted.head = sorted.read()?;
        Ok(sorted)
    }

    /// The next entity, without taking it.
    pub(crate) fn peek(&self) -> Option<&Entity> {
        self.head.as_ref().map(|head| &head.entity)
    }

    /// Takes the next entity.
    pub(crate) fn take(&mut self) -> Result<Option<Entity>, TransferError> {
        Ok(self.advance()?.map(|head| head.entity))
    }

    /// Takes the next record with its line; `None` at the end, and for files not opened with
    /// [`open_lines`](Sorted::open_lines).
    pub(crate) fn take_line(&mut self) -> Result<Option<Line>, TransferError> {
        Ok(self.advance()?.and_then(|head| head.line))
    }

    fn advance(&mut self) -> Result<Option<Head>, TransferError> {
        let next = self.read()?;
        if let (Some(Head { entity: before, .. }), Some(Head { entity: after, .. })) = (&self.head, &next)
            && key_order(before, after) != Ordering::Less
        {
            let path = self.reader.as_ref().map_or_else(String::new, |(p, _)| p.display().to_string());
            return Err(TransferError::invalid(format!(
                "`{path}` is not in key order: {} comes after {}; a backup's files are in the service's key order",
                Keys::of(after),
                Keys::of(before)
            )));
        }
        Ok(std::mem::replace(&mut self.head, next))
    }

    fn read(&mut self) -> Result<Option<Head>, TransferError> {
        loop {
            if self.reader.is_none() {
                let Some(path) = self.files.pop_front() else { return Ok(None) };
                let reader = match self.reading {
                    Reading::Entities => format::open_reader(&path, None)?,
                    // A line of JSON is read for its keys; a record of another format whole, to write its line.
                    Reading::Keys | Reading::Lines => format::open_keys_reader(&path)?,
                };
                self.reader = Some((path, reader));
            }
            let (path, reader) = self.reader.as_mut().expect("a file is open");
            let Some(record) = reader.next_record()? else {
                self.reader = None;
                continue;
            };
            let entity = record.entity.map_err(|rejected| {
                TransferError::invalid(format!(
                    "`{}` line {} is not an entity: {}",
                    path.display(),
                    record.position.line,
                    rejected.rule
                ))
            })?;
            if self.reading != Reading::Lines {
                return Ok(Some(Head { entity, line: None }));
            }
            // A jsonl record is its keys already; a record read whole is written as its line, then cut to its keys.
            let (keys, text) = match reader.line() {
                Some(line) => (entity, line.to_vec()),
                None => {
                    let mut text = Vec::new();
                    jsonl::write_entity(&entity, &mut text).map_err(|e| {
                        TransferError::invalid(format!(
                            "`{}` line {} cannot be read as a line of JSON: {e}",
                            path.display(),
                            record.position.line
                        ))
                    })?;
                    (keys_only(&entity), text)
                }
            };
            let line = Line { text, position: record.position };
            return Ok(Some(Head { entity: keys, line: Some(line) }));
        }
    }
}

/// Writes into `deleted` the keys a generation deletes: those of `previous` (the previous generation's key set)
/// and of `changed` (this generation's entities) that `current` (this generation's key set) does not have;
/// returns how many. An entity this generation's scan of changes read and that was deleted before its scan of
/// keys came by is one of them: else a restore would bring it back, in this generation and every later one.
pub(crate) fn deleted_keys(
    mut previous: Sorted,
    mut changed: Sorted,
    mut current: Sorted,
    mut deleted: impl FnMut(Entity) -> Result<(), TransferError>,
) -> Result<u64, TransferError> {
    let mut count = 0;
    loop {
        // The least key of `previous` and `changed`, taken from both.
        let old = match (previous.peek(), changed.peek()) {
            (None, None) => return Ok(count),
            (Some(p), Some(c)) => match key_order(p, c) {
                Ordering::Less => previous.take()?,
                Ordering::Greater => changed.take()?,
                Ordering::Equal => {
                    changed.take()?;
                    previous.take()?
                }
            },
            (Some(_), None) => previous.take()?,
            (None, Some(_)) => changed.take()?,
        };
        let old = old.expect("a key was peeked");
        while current.peek().is_some_and(|c| key_order(c, &old) == Ordering::Less) {
            current.take()?;
        }
        if current.peek().is_some_and(|c| key_order(c, &old) == Ordering::Equal) {
            continue;
        }
        deleted(keys_only(&old))?;
        count += 1;
    }
}

/// An entity of the same keys and nothing else.
pub(crate) fn keys_only(entity: &Entity) -> Entity {
    Entity::new(entity.partition_key().clone(), entity.row_key().clone())
}

/// One generation's files for [`State`]: its entities and the keys it deleted.
pub(crate) struct GenerationFiles {
    /// Its entities, in key order.
    pub entities: Vec<PathBuf>,
    /// Its deleted keys, in key order.
    pub deleted: Vec<PathBuf>,
}

struct Source {
    entities: Sorted,
    deleted: Sorted,
}

/// The table as of the last of a run of generations (oldest first, from a full generation or a base): for each
/// key, the newest generation that has it decides; its version, or nothing when that generation deleted it (a
/// key both deleted and changed in one generation was deleted after its scan saw it). A version seen by two
/// generations (the margin for clock skew) comes once.
pub(crate) struct State {
    sources: Vec<Source>,
}

impl State {
    /// Opens every file of `generations`, for [`next_entity`](State::next_entity).
    pub(crate) fn open(generations: Vec<GenerationFiles>) -> Result<State, TransferError> {
        State::open_with(generations, Sorted::open)
    }

    /// Opens every file of `generations`, for [`next_line`](State::next_line).
    pub(crate) fn open_lines(generations: Vec<GenerationFiles>) -> Result<State, TransferError> {
        State::open_with(generations, Sorted::open_lines)
    }

    fn open_with(
        generations: Vec<GenerationFiles>,
        entities: fn(Vec<PathBuf>) -> Result<Sorted, TransferError>,
    ) -> Result<State, TransferError> {
        let sources = generations
            .into_iter()
            .map(|g| Ok(Source { entities: entities(g.entities)?, deleted: Sorted::open_keys(g.deleted)? }))
            .collect::<Result<_, TransferError>>()?;
        Ok(State { sources })
    }

    /// The next entity of the table, in key order.
    pub(crate) fn next_entity(&mut self) -> Result<Option<Entity>, TransferError> {
        self.next(Sorted::take)
    }

    /// The next entity of the table, in key order, as its keys and line of JSON (a state opened with
    /// [`open_lines`](State::open_lines)).
    pub(crate) fn next_line(&mut self) -> Result<Option<Line>, TransferError> {
        self.next(Sorted::take_line)
    }

    /// The next entity of the table, as `take` takes it from the head of its newest generation.
    fn next<T>(
        &mut self,
        take: fn(&mut Sorted) -> Result<Option<T>, TransferError>,
    ) -> Result<Option<T>, TransferError> {
        loop {
            // The least key at the head of any file.
            let mut least: Option<Entity> = None;
            for source in &self.sources {
                for head in [source.entities.peek(), source.deleted.peek()].into_iter().flatten() {
                    if least.as_ref().is_none_or(|l| key_order(head, l) == Ordering::Less) {
                        least = Some(keys_only(head));
                    }
                }
            }
            let Some(key) = least else { return Ok(None) };
            let at = |s: &Sorted| s.peek().is_some_and(|h| key_order(h, &key) == Ordering::Equal);
            // The newest generation with the key decides; every head with the key is taken.
            let mut decided: Option<Option<T>> = None;
            for source in self.sources.iter_mut().rev() {
                let deleted = at(&source.deleted);
                if deleted {
                    source.deleted.take()?;
                }
                let version = if at(&source.entities) { take(&mut source.entities)? } else { None };
                if decided.is_none() && (deleted || version.is_some()) {
                    decided = Some(if deleted { None } else { version });
                }
            }
            if let Some(Some(version)) = decided {
                return Ok(Some(version));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::jsonl::write_entity;
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use table_model::{PartitionKey, RowKey};

    /// Keys of characters whose UTF-8 and UTF-16 orders differ (U+FF61 sorts after U+1F600 in the service's
    /// order), so that a merge in any other order fails.
    const CHARS: [&str; 4] = ["a", "\u{FF61}", "\u{1F600}", "b"];

    fn key(k: (usize, usize)) -> (String, String) {
        (CHARS[k.0].to_owned(), format!("{}{}", CHARS[k.1 % 4], CHARS[k.1 / 4]))
    }

    fn entity((pk, rk): &(String, String), version: Option<i64>) -> Entity {
        let entity = Entity::new(PartitionKey::new(pk.as_str()).unwrap(), RowKey::new(rk.as_str()).unwrap());
        match version {
            Some(v) => entity.with("V".parse().unwrap(), v).unwrap(),
            None => entity,
        }
    }

    /// Writes entities (in the service's key order) as a JSON lines file.
    fn file(dir: &std::path::Path, name: &str, entities: impl IntoIterator<Item = Entity>) -> PathBuf {
        let mut sorted: Vec<Entity> = entities.into_iter().collect();
        sorted.sort_by(key_order);
        let mut text = Vec::new();
        for e in &sorted {
            write_entity(e, &mut text).unwrap();
            text.push(b'\n');
        }
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn temp(tag: &str) -> PathBuf {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("merge-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A change of a generation: a key (of 4 × 16) and what happens to it.
    #[derive(Clone, Debug)]
    enum Change {
        Write(usize, usize),
        Delete(usize, usize),
        /// Changed, then deleted after the generation's scan of changes read it: in both of its files.
        WrittenThenDeleted(usize, usize),
    }

    fn change() -> impl Strategy<Value = Change> {
        let k = (0..4usize, 0..16usize);
        prop_oneof![
            3 => k.clone().prop_map(|(p, r)| Change::Write(p, r)),
            2 => k.clone().prop_map(|(p, r)| Change::Delete(p, r)),
            1 => k.prop_map(|(p, r)| Change::WrittenThenDeleted(p, r)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// The table as of each generation, merged from the files of the generations up to it, is the table a
        /// model of the same changes holds, entity by entity; a version that the margin made two generations
        /// hold comes once.
        #[test]
        fn the_state_of_each_generation_is_the_model_s(
            first in prop::collection::btree_set((0..4usize, 0..16usize), 0..40),
            generations in prop::collection::vec(prop::collection::vec(change(), 0..12), 1..5),
            repeats in prop::collection::vec(any::<bool>(), 64),
        ) {
            let dir = temp("state");
            let mut version = 0_i64;
            let mut model: BTreeMap<(String, String), i64> = BTreeMap::new();
            for k in &first {
                version += 1;
                model.insert(key(*k), version);
            }
            let full = model.iter().map(|(k, v)| entity(k, Some(*v)));
            let mut files = vec![GenerationFiles { entities: vec![file(&dir, "g1.jsonl", full)], deleted: Vec::new() }];
            for (g, changes) in generations.iter().enumerate() {
                let before = model.clone();
                let mut written: BTreeMap<(String, String), i64> = BTreeMap::new();
                for change in changes {
                    match change {
                        Change::Write(p, r) => {
                            version += 1;
                            model.insert(key((*p, *r)), version);
                            written.insert(key((*p, *r)), version);
                        }
                        Change::Delete(p, r) => {
                            model.remove(&key((*p, *r)));
                            written.remove(&key((*p, *r)));
                        }
                        Change::WrittenThenDeleted(p, r) => {
                            version += 1;
                            written.insert(key((*p, *r)), version);
                            model.remove(&key((*p, *r)));
                        }
                    }
                }
                // The margin: some unchanged versions of the previous generation read again.
                for (i, (k, v)) in before.iter().enumerate() {
                    if repeats[i % repeats.len()] && model.get(k) == Some(v) {
                        written.entry(k.clone()).or_insert(*v);
                    }
                }
                // The generation's files: its changes, and the deleted keys `deleted_keys` finds from the key sets
                // of the scans of keys (the previous one's and this one's).
                let g = g + 2;
                let changed = file(&dir, &format!("g{g}.jsonl"), written.iter().map(|(k, v)| entity(k, Some(*v))));
                let keys_before = file(&dir, &format!("k{}.jsonl", g - 1), before.keys().map(|k| entity(k, None)));
                let keys_now = file(&dir, &format!("k{g}.jsonl"), model.keys().map(|k| entity(k, None)));
                let sorted = |path: &PathBuf| Sorted::open(vec![path.clone()]).unwrap();
                let mut gone = Vec::new();
                deleted_keys(sorted(&keys_before), sorted(&changed), sorted(&keys_now), |e| {
                    gone.push(e);
                    Ok(())
                })
                .unwrap();
                files.push(GenerationFiles {
                    entities: vec![changed],
                    deleted: vec![file(&dir, &format!("d{g}.jsonl"), gone)],
                });
                let again = files.iter().map(|f| GenerationFiles { entities: f.entities.clone(), deleted: f.deleted.clone() });
                let mut state = State::open(again.collect()).unwrap();
                let mut merged = Vec::new();
                while let Some(e) = state.next_entity().unwrap() {
                    merged.push(e);
                }
                let expected: Vec<Entity> = {
                    let mut all: Vec<Entity> = model.iter().map(|(k, v)| entity(k, Some(*v))).collect();
                    all.sort_by(key_order);
                    all
                };
                prop_assert_eq!(merged.len(), expected.len(), "generation {}", g);
                for (m, e) in merged.iter().zip(&expected) {
                    prop_assert!(crate::checkpoint::same_entity(m, e), "{:?} against {:?}", m, e);
                }
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }

        /// The deleted keys are the previous key set and the changes' keys less the next key set, in key order.
        #[test]
        fn the_deleted_keys_are_the_difference_of_the_key_sets(
            before in prop::collection::btree_set((0..4usize, 0..16usize), 0..40),
            changed in prop::collection::btree_set((0..4usize, 0..16usize), 0..10),
            after in prop::collection::btree_set((0..4usize, 0..16usize), 0..40),
        ) {
            let dir = temp("deleted");
            let b = file(&dir, "b.jsonl", before.iter().map(|k| entity(&key(*k), None)));
            let c = file(&dir, "c.jsonl", changed.iter().map(|k| entity(&key(*k), Some(1))));
            let a = file(&dir, "a.jsonl", after.iter().map(|k| entity(&key(*k), None)));
            let mut found = Vec::new();
            let (b, c, a) = (Sorted::open(vec![b]).unwrap(), Sorted::open(vec![c]).unwrap(), Sorted::open(vec![a]).unwrap());
            let count = deleted_keys(b, c, a, |e| {
                found.push(e);
                Ok(())
            })
            .unwrap();
            let held: std::collections::BTreeSet<_> = before.union(&changed).copied().collect();
            let mut expected: Vec<Entity> = held.difference(&after).map(|k| entity(&key(*k), None)).collect();
            expected.sort_by(key_order);
            prop_assert_eq!(count as usize, expected.len());
            prop_assert_eq!(found, expected);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn a_file_out_of_key_order_is_refused_with_its_name_and_keys() {
        let dir = temp("order");
        let path = dir.join("x.jsonl");
        let mut text = Vec::new();
        for rk in ["b", "a"] {
            write_entity(&entity(&("p".to_owned(), rk.to_owned()), None), &mut text).unwrap();
            text.push(b'\n');
        }
        std::fs::write(&path, text).unwrap();
        let mut sorted = Sorted::open(vec![path.clone()]).unwrap();
        let err = sorted.take().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "`{}` is not in key order: PartitionKey `p`, RowKey `a` comes after PartitionKey `p`, RowKey `b`; \
                 a backup's files are in the service's key order",
                path.display()
            )
        );
        std::fs::write(&path, b"{not an entity\n").unwrap();
        let err = Sorted::open(vec![path.clone()]).err().unwrap();
        assert!(err.to_string().starts_with(&format!("`{}` line 1 is not an entity: ", path.display())), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
