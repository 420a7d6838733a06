//! Merges in key order, streaming: the keys deleted between two generations (a key set against the next), and
//! the table as of a generation (the newest version of each key over the generations up to it, less the keys
//! deleted by then). Every file of a generation is in the service's key order (PartitionKey, then RowKey, each
//! by UTF-16 code unit, `docs/rules.md` §2.3); each reader checks that it is, so memory holds one entity per
//! file, whatever the table's size.
//!
//! Layer: files (of the `backup` operations).

use crate::error::TransferError;
use crate::format::{self, EntityReader, Keys};
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::path::PathBuf;
use table_model::Entity;

/// The order of two entities' keys: the service's.
pub(crate) fn key_order(a: &Entity, b: &Entity) -> Ordering {
    a.partition_key().cmp(b.partition_key()).then_with(|| a.row_key().cmp(b.row_key()))
}

/// The entities of files read one after another, checked to be in strictly increasing key order, one read
/// ahead.
pub(crate) struct Sorted {
    files: VecDeque<PathBuf>,
    reader: Option<(PathBuf, Box<dyn EntityReader>)>,
    /// The next entity, read ahead.
    head: Option<Entity>,
}

impl Sorted {
    /// The entities of `files`, in order.
    pub(crate) fn open(files: Vec<PathBuf>) -> Result<Sorted, TransferError> {
        let mut sorted = Sorted { files: files.into(), reader: None, head: None };
        sorted.head = sorted.read()?;
        Ok(sorted)
    }

    /// The next entity, without taking it.
    pub(crate) fn peek(&self) -> Option<&Entity> {
        self.head.as_ref()
    }

    /// Takes the next entity.
    pub(crate) fn take(&mut self) -> Result<Option<Entity>, TransferError> {
        let next = self.read()?;
        if let (Some(before), Some(after)) = (&self.head, &next)
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

    fn read(&mut self) -> Result<Option<Entity>, TransferError> {
        loop {
            if self.reader.is_none() {
                let Some(path) = self.files.pop_front() else { return Ok(None) };
                let reader = format::open_reader(&path, None)?;
                self.reader = Some((path, reader));
            }
            let (path, reader) = self.reader.as_mut().expect("a file is open");
            match reader.next_record()? {
                Some(record) => {
                    return record.entity.map(Some).map_err(|rejected| {
                        TransferError::invalid(format!(
                            "`{}` line {} is not an entity: {}",
                            path.display(),
                            record.position.line,
                            rejected.rule
                        ))
                    });
                }
                None => self.reader = None,
            }
        }
    }
}

/// Writes into `deleted` the keys of `previous` (a generation's key set) that `current` (the next one's) does
/// not have; returns how many.
pub(crate) fn deleted_keys(
    mut previous: Sorted,
    mut current: Sorted,
    mut deleted: impl FnMut(Entity) -> Result<(), TransferError>,
) -> Result<u64, TransferError> {
    let mut count = 0;
    while let Some(old) = previous.take()? {
        while current.peek().is_some_and(|c| key_order(c, &old) == Ordering::Less) {
            current.take()?;
        }
        if current.peek().is_some_and(|c| key_order(c, &old) == Ordering::Equal) {
            continue;
        }
        deleted(keys_only(&old))?;
        count += 1;
    }
    Ok(count)
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
    /// Opens every file of `generations`.
    pub(crate) fn open(generations: Vec<GenerationFiles>) -> Result<State, TransferError> {
        let sources = generations
            .into_iter()
            .map(|g| Ok(Source { entities: Sorted::open(g.entities)?, deleted: Sorted::open(g.deleted)? }))
            .collect::<Result<_, TransferError>>()?;
        Ok(State { sources })
    }

    /// The next entity of the table, in key order.
    pub(crate) fn next_entity(&mut self) -> Result<Option<Entity>, TransferError> {
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
            let mut decided: Option<Option<Entity>> = None;
            for source in self.sources.iter_mut().rev() {
                let deleted = at(&source.deleted);
                if deleted {
                    source.deleted.take()?;
                }
                let version = if at(&source.entities) { source.entities.take()? } else { None };
                if decided.is_none() && (deleted || version.is_some()) {
                    decided = Some(if deleted { None } else { version });
                }
            }
            if let Some(Some(entity)) = decided {
                return Ok(Some(entity));
            }
        }
    }
}
