//! A backup's chain of generations on disk: each generation's manifest (`generation.json`), read, written and
//! checked, and the chain they make ([`Chain::open`]: numbered without gaps, each linked to the one before by
//! the digest of its manifest, each manifest checked against its own digest), and the offline check of every
//! file against its generation's manifest ([`Chain::verify_files`]).
//!
//! Layer: files (of the `backup` operations).

use crate::digest::{digest, sha256_hex, Hashing};
use crate::error::TransferError;
use crate::format::{Compression, FileFormat};
use crate::shard::Shard;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};
use table_model::filter::KeyRange;
use table_model::RuleSet;

/// The manifest of a generation, in its directory.
pub const GENERATION_FILE: &str = "generation.json";

/// The value of [`GenerationManifest::format`].
pub const FORMAT: &str = "tablectl-backup/1";

/// The value of [`GenerationManifest::checked`] for entities read with Azure Table Storage's rules.
pub const CHECKED_STORAGE: &str = "storage";

/// The directory of generation `number` in a table's backup directory: `gen-000001`, ...
///
/// ```
/// assert_eq!(table_model_transfer::backup::generation_dir_name(42), "gen-000042");
/// ```
pub fn generation_dir_name(number: u32) -> String {
    format!("gen-{number:06}")
}

/// The number of a generation's directory name, if it is one.
pub(crate) fn generation_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("gen-")?;
    (digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok()).flatten()
}

/// What a generation holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GenerationKind {
    /// Every entity of the table (the first generation, or one asked for with `--full`).
    Full,
    /// The entities changed since the previous generation, and the keys deleted since.
    Incremental,
    /// The table as of a generation, folded from the generations up to it by `prune`.
    Base,
}

/// What a file of a generation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    /// Entities (in `entities/`), in the service's key order.
    Entities,
    /// The keys of every entity of the table when the generation was taken (in `keys/`), in key order.
    Keys,
    /// The keys deleted since the previous generation (`deleted.jsonl`), in key order.
    Deleted,
}

impl Part {
    /// The directory of the part's files in a generation's directory (`""` for the generation's own).
    pub fn dir(self) -> &'static str {
        match self {
            Part::Entities => "entities",
            Part::Keys => "keys",
            Part::Deleted => "",
        }
    }
}

/// A link of the chain: a generation's number and the SHA-256 of its manifest's bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// The generation.
    pub number: u32,
    /// The SHA-256 of its `generation.json`, lowercase hexadecimal.
    pub sha256: String,
}

/// A file of a generation, as its manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerationFile {
    /// What it holds.
    pub part: Part,
    /// Its path in the generation's directory: `entities/NAME`, `keys/NAME` or `deleted.jsonl`.
    pub path: String,
    /// Entities (or keys) in it.
    pub entities: u64,
    /// Its size.
    pub bytes: u64,
    /// Its SHA-256, lowercase hexadecimal.
    pub sha256: String,
}

/// A generation's manifest, `generation.json`: written last, once every file of the generation is; a
/// generation's directory without one is unfinished.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GenerationManifest {
    /// [`FORMAT`].
    pub format: String,
    /// The program that wrote it ([`crate::TOOL`]).
    pub tool: String,
    /// The table.
    pub table: String,
    /// The generation's number, from 1.
    pub number: u32,
    /// What it holds.
    pub kind: GenerationKind,
    /// The service's clock before the generation's first scan (RFC 3339): every change after it is in a later
    /// generation.
    pub watermark: String,
    /// For an incremental generation, the `Timestamp` its entities were selected from: the previous
    /// watermark less the margin for clock skew.
    pub since: Option<String>,
    /// The local clock when the generation started (RFC 3339).
    pub started: String,
    /// The service's clock when its last scan ended (RFC 3339): the table as of this generation is the table
    /// as of this time, and `restore --at` compares with it.
    pub ended: String,
    /// The previous generation.
    pub previous: Option<Link>,
    /// For a base, the generation it stands for, as the manifest of that generation was: the next generation's
    /// link names it.
    pub replaces: Option<Link>,
    /// The key ranges of every scan of the chain (its first generation's plan).
    pub plan: Vec<KeyRange>,
    /// The worker's share of the plan, when the backup is sharded.
    pub shard: Option<Shard>,
    /// Its files.
    pub files: Vec<GenerationFile>,
    /// Entities in its `entities` files.
    pub entities: u64,
    /// Keys deleted since the previous generation.
    pub deleted: u64,
    /// Keys in the table when it was taken (the `keys` files, or the entities of a full generation or base).
    pub keys: u64,
    /// The rules every entity of its `entities` files was read with on its way into them, each written as a line
    /// of JSON: [`CHECKED_STORAGE`], Azure Table Storage's (`docs/rules.md` §1 to §8), for a generation in JSON
    /// lines; absent for another format, and in a manifest written before `tablectl` recorded it. A restore into
    /// a target of those rules takes such a line as checked once its file matches the manifest
    /// ([`GenerationManifest::checked_with`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<String>,
    /// The SHA-256 of this manifest written with `digest` empty: an edit that does not recompute it is found.
    pub digest: String,
}

impl GenerationManifest {
    /// The watermark as a time.
    ///
    /// # Errors
    /// A manifest whose watermark is not RFC 3339.
    pub fn watermark(&self) -> Result<DateTime<Utc>, TransferError> {
        parse_time(&self.watermark, "watermark")
    }

    /// The end of its last scan as a time.
    ///
    /// # Errors
    /// A manifest whose `ended` is not RFC 3339.
    pub fn ended(&self) -> Result<DateTime<Utc>, TransferError> {
        parse_time(&self.ended, "ended")
    }

    /// Its files of one part, in order.
    pub fn files_of(&self, part: Part) -> impl Iterator<Item = &GenerationFile> {
        self.files.iter().filter(move |f| f.part == part)
    }

    /// Whether every entity of its `entities` files was read with `rules` when it was written
    /// ([`checked`](Self::checked)).
    ///
    /// ```
    /// # fn manifest(checked: Option<&str>) -> table_model_transfer::backup::GenerationManifest {
    /// #     let json = serde_json::json!({
    /// #         "format": "tablectl-backup/1", "tool": "tablectl", "table": "Orders", "number": 1, "kind": "full",
    /// #         "watermark": "2026-12-07T10:00:00Z", "since": null, "started": "2026-12-07T10:00:00Z",
    /// #         "ended": "2026-12-07T10:01:00Z", "previous": null, "replaces": null, "plan": [], "shard": null,
    /// #         "files": [], "entities": 0, "deleted": 0, "keys": 0, "checked": checked, "digest": "",
    /// #     });
    /// #     serde_json::from_value(json).unwrap()
    /// # }
    /// use table_model::RuleSet;
    /// assert!(manifest(Some("storage")).checked_with(RuleSet::Storage));
    /// // Cosmos DB's own rules (key sizes in bytes, reserved names) were not those read with.
    /// assert!(!manifest(Some("storage")).checked_with(RuleSet::CosmosDb));
    /// assert!(!manifest(None).checked_with(RuleSet::Storage));
    /// ```
    pub fn checked_with(&self, rules: RuleSet) -> bool {
        self.checked.as_deref() == Some(CHECKED_STORAGE) && rules == RuleSet::Storage
    }

    /// The part whose files hold the table's keys as of this generation: its `keys`, or its entities for a full
    /// generation or a base.
    pub fn key_part(&self) -> Part {
        match self.kind {
            GenerationKind::Incremental => Part::Keys,
            GenerationKind::Full | GenerationKind::Base => Part::Entities,
        }
    }

    /// The manifest's bytes with `digest` set: the digest of the same manifest with `digest` empty.
    fn sealed(&mut self) -> Vec<u8> {
        self.digest.clear();
        let unsealed = serde_json::to_vec_pretty(&*self).expect("a manifest serializes");
        self.digest = sha256_hex(&unsealed);
        let mut bytes = serde_json::to_vec_pretty(&*self).expect("a manifest serializes");
        bytes.push(b'\n');
        bytes
    }

    /// Writes the manifest into a generation's directory (atomically), its digest computed; returns the link
    /// to it (the SHA-256 of the bytes written).
    ///
    /// # Errors
    /// A file that cannot be written.
    pub fn write(&mut self, dir: &Path) -> Result<Link, TransferError> {
        let bytes = self.sealed();
        let path = dir.join(GENERATION_FILE);
        let partial = dir.join(format!(".{GENERATION_FILE}.partial"));
        std::fs::write(&partial, &bytes).map_err(|e| TransferError::io("write", &partial, e))?;
        std::fs::File::open(&partial)
            .and_then(|f| f.sync_all())
            .map_err(|e| TransferError::io("write", &partial, e))?;
        std::fs::rename(&partial, &path).map_err(|e| TransferError::io("write", &path, e))?;
        Ok(Link { number: self.number, sha256: sha256_hex(&bytes) })
    }

    /// Reads a generation's manifest and checks it: its format, its own digest, and its files' paths.
    pub(crate) fn read(path: &Path) -> Result<(GenerationManifest, String), TransferError> {
        let bytes = std::fs::read(path).map_err(|e| TransferError::io("read", path, e))?;
        let invalid =
            |what: String| TransferError::invalid(format!("invalid backup manifest `{}`: {what}", path.display()));
        let mut manifest: GenerationManifest = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
        if manifest.format != FORMAT {
            return Err(invalid(format!("format `{}`, this tablectl reads `{FORMAT}`", manifest.format)));
        }
        let found = manifest.digest.clone();
        manifest.sealed();
        if manifest.digest != found {
            return Err(invalid(format!(
                "it was edited after it was written (its digest is {}, its content's {})",
                short(&found),
                short(&manifest.digest)
            )));
        }
        for file in &manifest.files {
            let name = match file.part {
                Part::Deleted => Some(file.path.as_str()),
                part => file.path.strip_prefix(part.dir()).and_then(|rest| rest.strip_prefix('/')),
            };
            let plain = name.is_some_and(|n| !n.is_empty() && n != ".." && n != "." && !n.contains(['/', '\\']));
            if !plain {
                return Err(invalid(format!("file `{}` is not a plain file name in its part's directory", file.path)));
            }
        }
        manifest.watermark()?;
        manifest.ended()?;
        Ok((manifest, sha256_hex(&bytes)))
    }
}

fn parse_time(text: &str, what: &str) -> Result<DateTime<Utc>, TransferError> {
    DateTime::parse_from_rfc3339(text).map(|t| t.with_timezone(&Utc)).map_err(|e| {
        TransferError::invalid(format!("invalid backup manifest: {what} `{text}` is not an RFC 3339 time: {e}"))
    })
}

/// A time as the manifests write it: RFC 3339, UTC, in whole seconds or finer as given.
pub fn time_text(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// The first 12 digits of a digest, for messages.
fn short(digest: &str) -> &str {
    digest.get(..12).unwrap_or(digest)
}

/// A finished generation: its directory, its manifest and the link to it.
#[derive(Clone, Debug)]
pub struct Generation {
    /// Its directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: GenerationManifest,
    /// The link a next generation names it by.
    pub link: Link,
}

impl Generation {
    /// The paths of its files of one part, in order.
    pub fn paths(&self, part: Part) -> Vec<PathBuf> {
        self.manifest.files_of(part).map(|f| self.dir.join(&f.path)).collect()
    }
}

/// The generations of a table's backup directory, checked as a chain.
#[derive(Clone, Debug)]
pub struct Chain {
    /// The table's backup directory.
    pub dir: PathBuf,
    /// The finished generations from the chain's start (its first full generation or base), in order.
    pub generations: Vec<Generation>,
    /// The number of an unfinished generation after them, if any (a backup stopped midway: run again, it goes
    /// on).
    pub unfinished: Option<u32>,
    /// Generations before the chain's base, which an interrupted `prune` left (prune removes them when run
    /// again).
    pub folded: Vec<u32>,
}

impl Chain {
    /// Reads and checks the chain in a table's backup directory (none yet: an empty chain): each manifest
    /// against its own digest, the numbers without gaps from the chain's start, each generation's link to the
    /// one before. Files are not read ([`verify_files`](Self::verify_files) does).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidInput`](crate::error::ErrorKind::InvalidInput) naming the generation and what is
    /// wrong: a manifest that does not read or was edited, a generation missing, a chain out of order, an
    /// unfinished generation before finished ones; a directory that cannot be read.
    pub fn open(dir: &Path) -> Result<Chain, TransferError> {
        let mut numbers = Vec::new();
        if dir.exists() {
            for entry in std::fs::read_dir(dir).map_err(|e| TransferError::io("read", dir, e))? {
                let entry = entry.map_err(|e| TransferError::io("read", dir, e))?;
                if let Some(number) = entry.file_name().to_str().and_then(generation_number)
                    && entry.path().is_dir()
                {
                    numbers.push(number);
                }
            }
        }
        numbers.sort_unstable();
        let mut finished = Vec::new();
        let mut unfinished = None;
        for &number in &numbers {
            let gen_dir = dir.join(generation_dir_name(number));
            let path = gen_dir.join(GENERATION_FILE);
            if !path.exists() {
                if let Some(before) = unfinished {
                    return Err(broken(dir, format!("generations {before} and {number} are both unfinished")));
                }
                unfinished = Some(number);
                continue;
            }
            if let Some(before) = unfinished {
                return Err(broken(
                    dir,
                    format!("generation {before} is unfinished (no {GENERATION_FILE}) but generation {number} after it is finished"),
                ));
            }
            let (manifest, sha256) = GenerationManifest::read(&path)?;
            if manifest.number != number {
                return Err(broken(
                    dir,
                    format!("`{}` holds generation {}: the chain is out of order", gen_dir.display(), manifest.number),
                ));
            }
            finished.push(Generation { dir: gen_dir, link: Link { number, sha256 }, manifest });
        }
        // The chain starts at its newest base (generations before it are what a prune did not remove yet), else
        // at generation 1, which must be full.
        let start = finished.iter().rposition(|g| g.manifest.kind == GenerationKind::Base).unwrap_or(0);
        let folded: Vec<u32> = finished[..start].iter().map(|g| g.link.number).collect();
        let generations: Vec<Generation> = finished.split_off(start);
        if let Some(first) = generations.first() {
            let m = &first.manifest;
            if m.kind == GenerationKind::Incremental {
                return Err(broken(
                    dir,
                    format!(
                        "generation {} is incremental but no generation before it is left: generation {} is missing",
                        m.number,
                        m.number - 1
                    ),
                ));
            }
            if m.kind == GenerationKind::Full && m.number != 1 {
                return Err(broken(
                    dir,
                    format!("the chain starts at generation {}: generation 1 is missing", m.number),
                ));
            }
        }
        for pair in generations.windows(2) {
            let (before, after) = (&pair[0], &pair[1]);
            let (b, a) = (&before.manifest, &after.manifest);
            if a.number != b.number + 1 {
                return Err(broken(
                    dir,
                    format!("generation {} is missing (between {} and {})", b.number + 1, b.number, a.number),
                ));
            }
            if a.table != b.table {
                return Err(broken(
                    dir,
                    format!(
                        "generation {} is of table `{}`, generation {} of `{}`",
                        a.number, a.table, b.number, b.table
                    ),
                ));
            }
            if a.kind == GenerationKind::Base {
                return Err(broken(dir, format!("generation {} is a base after generation {}", a.number, b.number)));
            }
            let expected = match b.kind {
                GenerationKind::Base => b.replaces.as_ref(),
                _ => Some(&before.link),
            };
            let Some(previous) = &a.previous else {
                return Err(broken(dir, format!("generation {} names no previous generation", a.number)));
            };
            if Some(previous) != expected {
                return Err(broken(
                    dir,
                    format!(
                        "generation {} does not follow generation {}: it names generation {} of manifest digest {}, \
                         generation {}'s is {} (a manifest edited or replaced, or generations out of order)",
                        a.number,
                        b.number,
                        previous.number,
                        short(&previous.sha256),
                        b.number,
                        expected.map_or("none", |l| short(&l.sha256))
                    ),
                ));
            }
        }
        if let (Some(last), Some(number)) = (generations.last(), unfinished)
            && number != last.link.number + 1
        {
            return Err(broken(
                dir,
                format!("generation {number} is unfinished but generation {} is missing", last.link.number + 1),
            ));
        }
        Ok(Chain { dir: dir.to_owned(), generations, unfinished, folded })
    }

    /// The last finished generation.
    pub fn last(&self) -> Option<&Generation> {
        self.generations.last()
    }

    /// The generations that make the table as of generation `number`: from the newest full generation or base
    /// at or before it, up to it.
    ///
    /// # Errors
    /// A generation the chain does not have (folded into its base by `prune`, or not written yet).
    pub fn up_to(&self, number: u32) -> Result<&[Generation], TransferError> {
        let end = self.generations.iter().position(|g| g.link.number == number).ok_or_else(|| {
            let have = match (self.generations.first(), self.generations.last()) {
                (Some(first), Some(last)) => format!("generations {} to {}", first.link.number, last.link.number),
                _ => "no finished generation".to_owned(),
            };
            let folded = if self.generations.first().is_some_and(|g| number < g.link.number) {
                " (older generations were folded into the base by prune)"
            } else {
                ""
            };
            TransferError::invalid(format!(
                "`{}` has no generation {number}: it has {have}{folded}",
                self.dir.display()
            ))
        })?;
        let start = self.generations[..=end]
            .iter()
            .rposition(|g| g.manifest.kind != GenerationKind::Incremental)
            .expect("a chain starts with a full generation or a base");
        Ok(&self.generations[start..=end])
    }

    /// The newest generation whose last scan ended at or before `time` (the service's clock).
    ///
    /// # Errors
    /// No generation ended by then.
    pub fn at(&self, time: DateTime<Utc>) -> Result<u32, TransferError> {
        let mut found = None;
        for generation in &self.generations {
            if generation.manifest.ended()? <= time {
                found = Some(generation.link.number);
            }
        }
        found.ok_or_else(|| {
            let first = self
                .generations
                .first()
                .map_or_else(String::new, |g| format!("; the first ended at {}", g.manifest.ended));
            TransferError::invalid(format!(
                "no generation of `{}` ended at or before {}{first}",
                self.dir.display(),
                time_text(time)
            ))
        })
    }

    /// Checks every file of `generations` against its manifest (size and SHA-256), a thread per core hashing
    /// files side by side. The error is the first file's in the chain's order, whichever thread found it.
    ///
    /// # Errors
    /// A file missing, truncated or altered, named with what differs
    /// ([`ErrorKind::InvalidInput`](crate::error::ErrorKind::InvalidInput)).
    pub fn verify_files(generations: &[Generation]) -> Result<FilesVerified, TransferError> {
        let files: Vec<(&Generation, &GenerationFile)> =
            generations.iter().flat_map(|g| g.manifest.files.iter().map(move |file| (g, file))).collect();
        let threads = std::thread::available_parallelism().map_or(2, usize::from).min(files.len()).max(1);
        // Thread `k` hashes files `k`, `k + threads`, ...; the results are read back in the files' order.
        let mut hashed: Vec<Vec<Result<Hashing<io::Sink>, TransferError>>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|k| {
                    let mine = files.iter().skip(k).step_by(threads);
                    scope.spawn(move || mine.map(|(g, file)| verify_file(g, file)).collect::<Vec<_>>())
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        });
        let mut verified = FilesVerified { bytes: 0, longest_entity_line: Some(0) };
        let mut results: Vec<_> = hashed.iter_mut().map(|results| results.drain(..)).collect();
        for (index, (_, file)) in files.iter().enumerate() {
            let hashing = results[index % threads].next().expect("a result for every file")?;
            verified.bytes += hashing.bytes;
            if file.part == Part::Entities {
                let plain = FileFormat::of_path(Path::new(&file.path)) == Some((FileFormat::Jsonl, Compression::None));
                verified.longest_entity_line =
                    verified.longest_entity_line.filter(|_| plain).map(|longest| longest.max(hashing.longest_line()));
            }
        }
        Ok(verified)
    }
}

/// What [`Chain::verify_files`] found: every file as its manifest has it, and how long its entities' lines are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FilesVerified {
    /// The bytes read.
    pub bytes: u64,
    /// The longest line of the `entities` files, with its `\n`, where every one is uncompressed JSON lines
    /// (whose bytes are its lines); `None` where one is not.
    pub longest_entity_line: Option<u64>,
}

/// Checks one file of `generation` against its manifest's entry: its bytes, read through a [`Hashing`].
fn verify_file(generation: &Generation, file: &GenerationFile) -> Result<Hashing<io::Sink>, TransferError> {
    let path = generation.dir.join(&file.path);
    if !path.exists() {
        return Err(TransferError::invalid(format!(
            "`{}` of generation {} is missing",
            path.display(),
            generation.link.number
        )));
    }
    let hashing = digest(&path)?;
    let differs = |what: &str, found: String, expected: String| {
        TransferError::invalid(format!(
            "`{}` does not match generation {}'s manifest: {what} {found}, the manifest says {expected}",
            path.display(),
            generation.link.number
        ))
    };
    if hashing.bytes != file.bytes {
        return Err(differs("size", hashing.bytes.to_string(), file.bytes.to_string()));
    }
    let sha256 = hashing.hex();
    if sha256 != file.sha256 {
        return Err(differs("SHA-256", sha256, file.sha256.clone()));
    }
    Ok(hashing)
}

/// The error of a chain that does not hold together.
fn broken(dir: &Path, what: String) -> TransferError {
    TransferError::invalid(format!("the backup in `{}` is broken: {what}", dir.display()))
}
