//! `backup prune --keep N`: the oldest generations folded into a base, offline, so that the chain holds its `N`
//! newest generations and no more.
//!
//! The generation that becomes the base is the oldest of the `N` kept: the table as of it is merged
//! (the module `merge`) into `gen-NNNNNN.fold/`, with a manifest of kind
//! [`Base`](super::GenerationKind::Base) that names the manifest it replaces (the next generation's link names
//! that one). The fold is then checked: its files against its manifest, and its entities, one by one, against
//! the merge made again. Only then is it put in the generation's place and the generations before it removed.
//! A prune stopped midway is finished by the next one (or left as it was: the chain reads the same).
//!
//! Layer: operations (offline).

use super::chain::{generation_dir_name, time_text, Chain, GenerationFile, GenerationKind, GenerationManifest, Part};
use super::merge::{GenerationFiles, Sorted, State};
use crate::checkpoint::same_entity;
use crate::error::TransferError;
use crate::format::{self, Compression, FileFormat, Keys, Sink, WriteOptions};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

/// What a prune did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PruneSummary {
    /// The generation that is now the chain's base (`None`: nothing to fold).
    pub base: Option<u32>,
    /// The generations removed (folded into the base).
    pub removed: Vec<u32>,
    /// Entities in the base.
    pub entities: u64,
}

/// Folds the generations of the backup in `dir` (one table's) older than its `keep` newest into a base.
///
/// ```no_run
/// use std::num::NonZeroU32;
/// use table_model_transfer::backup::prune::prune;
/// let summary = prune("backups/Orders".as_ref(), NonZeroU32::new(7).unwrap())?;
/// println!("removed generations {:?}", summary.removed);
/// # Ok::<(), table_model_transfer::error::TransferError>(())
/// ```
///
/// # Errors
/// [`TransferError`]: a broken chain or a file that does not match its manifest
/// ([`ErrorKind::InvalidInput`](crate::error::ErrorKind::InvalidInput), nothing changed); a fold that does not
/// check (nothing removed); a file that cannot be written or removed.
pub fn prune(dir: &Path, keep: NonZeroU32) -> Result<PruneSummary, TransferError> {
    finish_interrupted(dir)?;
    let chain = Chain::open(dir)?;
    let mut removed = remove_generations(dir, &chain.folded)?;
    let count = chain.generations.len();
    let keep = keep.get() as usize;
    if count <= keep {
        return Ok(PruneSummary { base: None, removed, entities: 0 });
    }
    let kept = &chain.generations[count - keep];
    let number = kept.link.number;
    let generations = chain.up_to(number)?;
    Chain::verify_files(generations)?;
    let fold_dir = dir.join(format!("{}.fold", generation_dir_name(number)));
    if fold_dir.exists() {
        std::fs::remove_dir_all(&fold_dir).map_err(|e| TransferError::io("remove", &fold_dir, e))?;
    }
    let entities_dir = fold_dir.join(Part::Entities.dir());
    std::fs::create_dir_all(&entities_dir).map_err(|e| TransferError::io("create", &entities_dir, e))?;
    // The base's files are in the format (and compression) of the generation it replaces.
    let first_file = kept.manifest.files_of(Part::Entities).next().map(|f| kept.dir.join(&f.path));
    let (format, compression) =
        first_file.and_then(|p| FileFormat::of_path(&p)).unwrap_or((FileFormat::Jsonl, Compression::None));
    let name = format.file_name(&kept.manifest.table, None, compression);
    let path = entities_dir.join(&name);
    let options = WriteOptions { format, compression, schema: None };
    let mut writer = format::create_writer(Sink::create(&path, true)?, &options)?;
    let mut state = State::open(files_of(generations))?;
    while let Some(entity) = state.next_entity()? {
        writer.write(&entity)?;
    }
    let written = writer.finish()?;
    let m = &kept.manifest;
    let mut base = GenerationManifest {
        format: super::chain::FORMAT.to_owned(),
        tool: crate::TOOL.to_owned(),
        table: m.table.clone(),
        number,
        kind: GenerationKind::Base,
        watermark: m.watermark.clone(),
        since: None,
        started: time_text(chrono::Utc::now()),
        ended: m.ended.clone(),
        previous: None,
        replaces: Some(kept.link.clone()),
        plan: m.plan.clone(),
        shard: m.shard,
        files: vec![GenerationFile {
            part: Part::Entities,
            path: format!("{}/{name}", Part::Entities.dir()),
            entities: written.entities,
            bytes: written.bytes,
            sha256: written.sha256,
        }],
        entities: written.entities,
        deleted: 0,
        keys: written.entities,
        // The merge reads every entity whole, with Storage's rules.
        checked: (format == FileFormat::Jsonl).then(|| super::chain::CHECKED_STORAGE.to_owned()),
        digest: String::new(),
    };
    base.write(&fold_dir)?;
    check_fold(&fold_dir, generations.iter().map(|g| g.link.number).collect(), &files_of(generations), &path)?;
    // The fold takes the generation's place; then the generations before it go.
    let old = dir.join(format!("{}.old", generation_dir_name(number)));
    std::fs::rename(&kept.dir, &old).map_err(|e| TransferError::io("rename", &kept.dir, e))?;
    std::fs::rename(&fold_dir, &kept.dir).map_err(|e| TransferError::io("rename", &fold_dir, e))?;
    std::fs::remove_dir_all(&old).map_err(|e| TransferError::io("remove", &old, e))?;
    let before: Vec<u32> = chain.generations.iter().map(|g| g.link.number).filter(|&n| n < number).collect();
    removed.extend(remove_generations(dir, &before)?);
    // What is left reads as a chain.
    Chain::open(dir)?;
    Ok(PruneSummary { base: Some(number), removed, entities: written.entities })
}

/// The files of each generation, for a merge.
fn files_of(generations: &[super::Generation]) -> Vec<GenerationFiles> {
    generations
        .iter()
        .map(|g| GenerationFiles { entities: g.paths(Part::Entities), deleted: g.paths(Part::Deleted) })
        .collect()
}

/// Checks a fold before anything is removed: its manifest reads and its files match it, and its entities are
/// those of the merge, made again, one by one.
fn check_fold(fold_dir: &Path, numbers: Vec<u32>, files: &[GenerationFiles], path: &Path) -> Result<(), TransferError> {
    let failed = |what: String| {
        TransferError::failed(format!(
            "the fold of generations {numbers:?} in `{}` does not check ({what}); nothing was removed",
            fold_dir.display()
        ))
    };
    let manifest_dir = fold_dir.to_owned();
    let fold = super::Generation {
        link: super::Link { number: 0, sha256: String::new() },
        manifest: read_manifest(&manifest_dir).map_err(|e| failed(e.to_string()))?,
        dir: manifest_dir,
    };
    Chain::verify_files(std::slice::from_ref(&fold)).map_err(|e| failed(e.to_string()))?;
    let again = files.iter().map(|g| GenerationFiles { entities: g.entities.clone(), deleted: g.deleted.clone() });
    let mut state = State::open(again.collect())?;
    let mut written = Sorted::open(vec![path.to_owned()])?;
    loop {
        match (state.next_entity()?, written.take()?) {
            (None, None) => return Ok(()),
            (Some(a), Some(b)) if same_entity(&a, &b) && a.timestamp() == b.timestamp() => {}
            (a, b) => {
                let keys = |e: Option<table_model::Entity>| {
                    e.map_or_else(|| "nothing".to_owned(), |e| Keys::of(&e).to_string())
                };
                return Err(failed(format!("the merge has {}, the fold {}", keys(a), keys(b))));
            }
        }
    }
}

/// A generation's manifest, read and checked.
fn read_manifest(dir: &Path) -> Result<GenerationManifest, TransferError> {
    GenerationManifest::read(&dir.join(super::chain::GENERATION_FILE)).map(|(manifest, _)| manifest)
}

/// Removes generations' directories; returns their numbers.
fn remove_generations(dir: &Path, numbers: &[u32]) -> Result<Vec<u32>, TransferError> {
    for &number in numbers {
        let path = dir.join(generation_dir_name(number));
        std::fs::remove_dir_all(&path).map_err(|e| TransferError::io("remove", &path, e))?;
    }
    Ok(numbers.to_vec())
}

/// Finishes what a stopped prune left: a fold whose generation was moved aside is put in its place; a fold
/// not yet in place is removed (the chain is as it was); a generation moved aside after its fold took its
/// place is removed.
fn finish_interrupted(dir: &Path) -> Result<(), TransferError> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    let names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    for path in names {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        if let Some(generation) = name.strip_suffix(".fold") {
            let place = dir.join(generation);
            if !place.exists() && path.join(super::chain::GENERATION_FILE).exists() {
                std::fs::rename(&path, &place).map_err(|e| TransferError::io("rename", &path, e))?;
            } else {
                std::fs::remove_dir_all(&path).map_err(|e| TransferError::io("remove", &path, e))?;
            }
        }
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if let Some(generation) = name.strip_suffix(".old")
            && dir.join(generation).exists()
        {
            std::fs::remove_dir_all(&path).map_err(|e| TransferError::io("remove", &path, e))?;
        }
    }
    Ok(())
}
