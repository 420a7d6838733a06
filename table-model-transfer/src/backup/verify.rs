//! `backup verify`: a backup checked offline, every generation's files against its manifest and the chain's
//! links, nothing sent.
//!
//! Layer: operations (offline).

use super::chain::{generation_number, Chain, GENERATION_FILE};
use crate::error::TransferError;
use std::path::{Path, PathBuf};

/// What a verified backup holds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifySummary {
    /// The table's backup directory.
    pub dir: PathBuf,
    /// The table.
    pub table: String,
    /// The generations of the chain, in order.
    pub generations: Vec<u32>,
    /// Files checked.
    pub files: u64,
    /// Bytes read.
    pub bytes: u64,
    /// An unfinished generation after them (a backup stopped midway), not checked.
    pub unfinished: Option<u32>,
}

/// Checks the backup of one table in `dir`: the chain ([`Chain::open`]) and every file of every generation
/// ([`Chain::verify_files`]).
///
/// ```
/// use table_model_transfer::backup::verify::verify;
/// let empty = std::env::temp_dir().join(format!("verify-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&empty)?;
/// let err = verify(&empty).unwrap_err();
/// assert!(err.to_string().ends_with("holds no finished backup generation"), "{err}");
/// # std::fs::remove_dir(&empty)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`ErrorKind::InvalidInput`](crate::error::ErrorKind::InvalidInput): a directory without a finished
/// generation, a broken chain, a file missing, truncated or altered, each named.
pub fn verify(dir: &Path) -> Result<VerifySummary, TransferError> {
    let chain = Chain::open(dir)?;
    let Some(first) = chain.generations.first() else {
        return Err(TransferError::invalid(format!("`{}` holds no finished backup generation", dir.display())));
    };
    let table = first.manifest.table.clone();
    let bytes = Chain::verify_files(&chain.generations)?.bytes;
    Ok(VerifySummary {
        dir: dir.to_owned(),
        table,
        generations: chain.generations.iter().map(|g| g.link.number).collect(),
        files: chain.generations.iter().map(|g| g.manifest.files.len() as u64).sum(),
        bytes,
        unfinished: chain.unfinished,
    })
}

/// The tables' backup directories under `root`: `root` itself when it holds generations, else each of its
/// subdirectories that does (a backup of several tables), in name order.
///
/// # Errors
/// A directory that cannot be read.
pub fn table_dirs(root: &Path) -> Result<Vec<PathBuf>, TransferError> {
    let holds_generations = |dir: &Path| -> Result<bool, TransferError> {
        let entries = std::fs::read_dir(dir).map_err(|e| TransferError::io("read", dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| TransferError::io("read", dir, e))?;
            let name = entry.file_name();
            if name.to_str().and_then(generation_number).is_some() && entry.path().join(GENERATION_FILE).exists() {
                return Ok(true);
            }
        }
        Ok(false)
    };
    if holds_generations(root)? {
        return Ok(vec![root.to_owned()]);
    }
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(root).map_err(|e| TransferError::io("read", root, e))? {
        let path = entry.map_err(|e| TransferError::io("read", root, e))?.path();
        if path.is_dir() && holds_generations(&path)? {
            dirs.push(path);
        }
    }
    dirs.sort();
    Ok(dirs)
}
