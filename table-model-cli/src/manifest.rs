//! The manifest of an export to a directory, `manifest.json`: what was exported (table, filter, selection, tool
//! version, time) and each file with its entity count, size, SHA-256 and first and last keys. An import of the
//! directory checks every file against it before it sends anything.

use crate::error::CliError;
use crate::format::{Compression, FileFormat};
use crate::scan::Shard;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{self, Read, Write};
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

/// An entity's keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Keys {
    /// The PartitionKey.
    pub partition_key: String,
    /// The RowKey.
    pub row_key: String,
}

impl Manifest {
    /// Reads `manifest.json` from a directory, checking its format and its file names.
    ///
    /// # Errors
    /// [`CliError`]: unreadable ([`Failed`](crate::error::Outcome::Failed)), or not a manifest of this format
    /// ([`InvalidInput`](crate::error::Outcome::InvalidInput)).
    pub fn read(dir: &Path) -> Result<Manifest, CliError> {
        let path = dir.join(FILE_NAME);
        let bytes = std::fs::read(&path).map_err(|e| CliError::io("read", &path, e))?;
        let manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| CliError::invalid(format!("invalid manifest `{}`: {e}", path.display())))?;
        if manifest.format != FORMAT {
            return Err(CliError::invalid(format!(
                "invalid manifest `{}`: format `{}`, this tablectl reads `{FORMAT}`",
                path.display(),
                manifest.format
            )));
        }
        for file in &manifest.files {
            let plain = Path::new(&file.path).file_name().is_some_and(|name| name == file.path.as_str());
            if !plain || file.path == ".." {
                return Err(CliError::invalid(format!(
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
    /// [`CliError`] ([`InvalidInput`](crate::error::Outcome::InvalidInput)) naming the first file that differs
    /// and how, or ([`Failed`](crate::error::Outcome::Failed)) one that cannot be read.
    pub fn verify(&self, dir: &Path) -> Result<(), CliError> {
        for file in &self.files {
            let path = dir.join(&file.path);
            let hashing = digest(&path)?;
            let (bytes, lines, sha256) = (hashing.bytes, hashing.lines, hashing.hex());
            let differs = |what: &str, found: String, expected: String| {
                CliError::invalid(format!(
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
    /// [`CliError`] ([`Failed`](crate::error::Outcome::Failed)) when it cannot be written.
    pub fn write(&self, dir: &Path) -> Result<(), CliError> {
        crate::checkpoint::write_atomic(&dir.join(FILE_NAME), self)
    }
}

/// Reads the file at `path` once through a [`Hashing`]: its size, lines and SHA-256.
///
/// # Errors
/// [`CliError`] naming the file when it cannot be read.
pub fn digest(path: &Path) -> Result<Hashing<io::Sink>, CliError> {
    let reader = std::fs::File::open(path).map_err(|e| CliError::io("read", path, e))?;
    let mut hashing = Hashing::new(io::sink());
    let mut buf = vec![0; 64 * 1024];
    let mut reader = io::BufReader::new(reader);
    loop {
        let n = reader.read(&mut buf).map_err(|e| CliError::io("read", path, e))?;
        if n == 0 {
            return Ok(hashing);
        }
        hashing.write_all(&buf[..n]).expect("a sink takes everything");
    }
}

/// A writer that counts the bytes and lines written through it and hashes them with SHA-256.
///
/// ```
/// use std::io::Write as _;
/// let mut out = table_model_cli::manifest::Hashing::new(Vec::new());
/// out.write_all(b"abc")?;
/// assert_eq!((out.bytes, out.lines), (3, 0));
/// assert_eq!(out.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Hashing<W> {
    inner: W,
    hasher: Sha256,
    /// Bytes written.
    pub bytes: u64,
    /// `\n`s written.
    pub lines: u64,
}

impl<W: Write> Hashing<W> {
    /// Wraps a writer.
    pub fn new(inner: W) -> Self {
        Hashing { inner, hasher: Sha256::new(), bytes: 0, lines: 0 }
    }

    /// The SHA-256 of what was written so far, in lowercase hexadecimal.
    pub fn hex(&self) -> String {
        self.hasher.clone().finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The wrapped writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The wrapped writer, to write around the count and hash (a compressor's own frame ends, say, go through
    /// [`Write`] instead).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// The wrapped writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        self.lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
