//! The manifest of an export to a directory, `manifest.json`: what was exported (table, filter, selection, tool
//! version, time) and each file with its entity count, size, SHA-256 and first and last keys. An import of the
//! directory checks every file against it before it sends anything.
//!
//! Layer: files.

use crate::digest::digest;
use crate::error::TransferError;
use crate::format::Keys;
use crate::format::{Compression, FileFormat};
use crate::shard::Shard;
use serde::{Deserialize, Serialize};
use std::path::Path;
use table_model::filter::KeyRange;

/// The manifest's file name in an export directory.
pub const FILE_NAME: &str = "manifest.json";

/// The value of [`Manifest::format`] this version writes and reads.
pub const FORMAT: &str = "tablectl-export/1";

/// An export's manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: String,
    /// The tool that wrote it: `tablectl 0.1.0`.
    pub tool: String,
    /// The table exported.
    pub table: String,
    /// The `--filter` as given, if any.
    pub filter: Option<String>,
    /// The `--select`ed properties, if any (the keys are always exported).
    pub select: Option<Vec<String>>,
    /// When the export started, RFC 3339 in UTC.
    pub started: String,
    /// The data files, in order.
    pub files: Vec<ManifestFile>,
    /// The key ranges of the whole scan, when it was cut into several (`--parallel`, `--shard`): every
    /// worker's manifest of one sharded export holds the same plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Vec<KeyRange>>,
    /// The ranges this export covers: the plan, or this worker's share of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranges: Option<Vec<KeyRange>>,
    /// The worker `K/N` of a sharded export (`--shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

/// One data file of an export.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Its name, in the manifest's directory (a plain file name: no separators, not `..`).
    pub path: String,
    /// Entities, one per line.
    pub entities: u64,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of its bytes, in lowercase hexadecimal.
    pub sha256: String,
    /// The keys of its first entity, if it has any.
    pub first: Option<Keys>,
    /// The keys of its last entity, if it has any.
    pub last: Option<Keys>,
}

impl Manifest {
    /// Reads `manifest.json` from a directory, checking its format and its file names.
    ///
    /// # Errors
    /// [`TransferError`]: unreadable ([`Failed`](crate::error::ErrorKind::Failed)), or not a manifest of this format
    /// ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)).
    pub fn read(dir: &Path) -> Result<Manifest, TransferError> {
        let path = dir.join(FILE_NAME);
        let bytes = std::fs::read(&path).map_err(|e| TransferError::io("read", &path, e))?;
        let manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| TransferError::invalid(format!("invalid manifest `{}`: {e}", path.display())))?;
        if manifest.format != FORMAT {
            return Err(TransferError::invalid(format!(
                "invalid manifest `{}`: format `{}`, this tablectl reads `{FORMAT}`",
                path.display(),
                manifest.format
            )));
        }
        for file in &manifest.files {
            let plain = Path::new(&file.path).file_name().is_some_and(|name| name == file.path.as_str());
            if !plain || file.path == ".." {
                return Err(TransferError::invalid(format!(
                    "invalid manifest `{}`: file `{}` is not a plain file name in the manifest's directory",
                    path.display(),
                    file.path
                )));
            }
        }
        Ok(manifest)
    }

    /// Checks each file of the manifest in `dir`: its size, SHA-256 and, for uncompressed JSON lines, its number of
    /// lines, reading it once.
    ///
    /// # Errors
    /// [`TransferError`] ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)) naming the first file that differs
    /// and how, or ([`Failed`](crate::error::ErrorKind::Failed)) one that cannot be read.
    pub fn verify(&self, dir: &Path) -> Result<(), TransferError> {
        for file in &self.files {
            let path = dir.join(&file.path);
            let hashing = digest(&path)?;
            let (bytes, lines, sha256) = (hashing.bytes, hashing.lines, hashing.hex());
            let differs = |what: &str, found: String, expected: String| {
                TransferError::invalid(format!(
                    "`{}` does not match the manifest: {what} {found}, the manifest says {expected}",
                    path.display()
                ))
            };
            if bytes != file.bytes {
                return Err(differs("size", bytes.to_string(), file.bytes.to_string()));
            }
            if sha256 != file.sha256 {
                return Err(differs("SHA-256", sha256, file.sha256.clone()));
            }
            // A line per entity is the shape of uncompressed JSON lines only (a Parquet file is binary); the
            // other formats are checked by their size and hash, and their entities counted as they are read.
            let one_line_each = FileFormat::of_path(&path) == Some((FileFormat::Jsonl, Compression::None));
            if one_line_each && lines != file.entities {
                return Err(differs("lines", lines.to_string(), file.entities.to_string()));
            }
        }
        Ok(())
    }

    /// Writes the manifest into `dir`, pretty-printed, atomically (a manifest says the export is finished).
    ///
    /// # Errors
    /// [`TransferError`] ([`Failed`](crate::error::ErrorKind::Failed)) when it cannot be written.
    pub fn write(&self, dir: &Path) -> Result<(), TransferError> {
        crate::checkpoint::write_atomic(&dir.join(FILE_NAME), self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Hashing;
    use std::io::Write as _;

    fn dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("tablectl-manifest-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn manifest_of(path: &str, content: &[u8]) -> Manifest {
        let mut hashing = Hashing::new(Vec::new());
        hashing.write_all(content).unwrap();
        Manifest {
            format: FORMAT.into(),
            tool: "tablectl test".into(),
            table: "T".into(),
            filter: None,
            select: None,
            started: "2024-01-01T00:00:00Z".into(),
            files: vec![ManifestFile {
                path: path.into(),
                entities: hashing.lines,
                bytes: hashing.bytes,
                sha256: hashing.hex(),
                first: None,
                last: None,
            }],
            plan: None,
            ranges: None,
            shard: None,
        }
    }

    #[test]
    fn a_changed_byte_is_found_before_anything_is_sent() {
        let dir = dir("changed");
        std::fs::write(dir.join("T.jsonl"), b"{\"a\":1}\n{\"a\":2}\n").unwrap();
        let manifest = manifest_of("T.jsonl", b"{\"a\":1}\n{\"a\":2}\n");
        manifest.write(&dir).unwrap();
        let read = Manifest::read(&dir).unwrap();
        assert_eq!(read, manifest);
        read.verify(&dir).unwrap();

        std::fs::write(dir.join("T.jsonl"), b"{\"a\":1}\n{\"a\":3}\n").unwrap();
        let err = read.verify(&dir).unwrap_err();
        assert!(err.to_string().contains("does not match the manifest: SHA-256 "), "{err}");
        std::fs::write(dir.join("T.jsonl"), b"{\"a\":1}\n").unwrap();
        let err = read.verify(&dir).unwrap_err();
        assert!(err.to_string().ends_with("does not match the manifest: size 8, the manifest says 16"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_outside_the_directory_is_refused() {
        let dir = dir("outside");
        manifest_of("../x.jsonl", b"").write(&dir).unwrap();
        let err = Manifest::read(&dir).unwrap_err();
        assert!(err.to_string().ends_with("file `../x.jsonl` is not a plain file name in the manifest's directory"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
