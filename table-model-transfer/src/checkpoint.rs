//! Resuming `export`, `import` and `copy`: a checkpoint file says how far a run got, written atomically
//! (a temporary file synced, then renamed over the old one) after what it counts is durable: entities synced to
//! disk ([`EntityWriter::checkpoint`](crate::format::EntityWriter::checkpoint)) or acknowledged by the target.
//! Rerunning the same command finds it and goes on from there; a different command line against it is an
//! error ([`Invocation::check`]).
//!
//! Layer: files.

use crate::error::TransferError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use table_model::{EdmValue, Entity};

/// What a checkpoint was written for: the command and the options that decide what it writes, by flag name
/// (`table`, `--filter`, `--format`, ...). A run resumes a checkpoint only with the same ones.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invocation(pub BTreeMap<String, serde_json::Value>);

impl Invocation {
    /// A command named `name` (`export`, `import`, `copy`).
    pub fn new(name: &str) -> Invocation {
        Invocation(BTreeMap::from([("command".to_owned(), serde_json::Value::from(name))]))
    }

    /// Adds an option and its value (anything that serializes; `None` for an option not given).
    #[must_use]
    pub fn with(mut self, flag: &str, value: impl Serialize) -> Invocation {
        let value = serde_json::to_value(value).expect("command-line values are JSON");
        self.0.insert(flag.to_owned(), value);
        self
    }

    /// Checks that `self` (the run's) is the command `saved` in the checkpoint at `path`.
    ///
    /// ```
    /// use table_model_transfer::checkpoint::Invocation;
    /// let saved = Invocation::new("export").with("--filter", Some("Age ge 18"));
    /// let now = Invocation::new("export").with("--filter", None::<String>);
    /// let err = now.check(&saved, "backup/checkpoint.json".as_ref()).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "`backup/checkpoint.json` belongs to an unfinished run of another command line (--filter was \
    ///      \"Age ge 18\", is now null): rerun it as it was to resume, or give --force to start over"
    /// );
    /// ```
    ///
    /// # Errors
    /// [`TransferError`] ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)) naming each option that differs.
    pub fn check(&self, saved: &Invocation, path: &Path) -> Result<(), TransferError> {
        let null = serde_json::Value::Null;
        let mut flags: Vec<&String> = self.0.keys().chain(saved.0.keys()).collect();
        flags.sort();
        flags.dedup();
        let changed: Vec<String> = flags
            .into_iter()
            .filter_map(|flag| {
                let (was, now) = (saved.0.get(flag).unwrap_or(&null), self.0.get(flag).unwrap_or(&null));
                (was != now).then(|| format!("{flag} was {was}, is now {now}"))
            })
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        Err(TransferError::invalid(format!(
            "`{}` belongs to an unfinished run of another command line ({}): rerun it as it was to resume, or \
             give --force to start over",
            path.display(),
            changed.join("; ")
        )))
    }
}

/// Writes `value` as JSON into `path` atomically: into `path.tmp`, synced, then renamed over `path`, so a run
/// killed at any moment leaves the old checkpoint or the new one, never half of one.
///
/// # Errors
/// [`TransferError`] naming the file when it cannot be written.
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), TransferError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut json = serde_json::to_vec_pretty(value).expect("a checkpoint is always JSON");
    json.push(b'\n');
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&json)?;
        file.sync_data()
    };
    write().map_err(|e| TransferError::io("write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| TransferError::io("write", path, e))
}

/// Reads the checkpoint at `path`; `None` when there is none.
///
/// # Errors
/// [`TransferError`]: unreadable ([`Failed`](crate::error::ErrorKind::Failed)) or not a checkpoint of this kind
/// ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)).
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, TransferError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(TransferError::io("read", path, e)),
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        TransferError::invalid(format!("invalid checkpoint `{}`: {e}; remove it or give --force", path.display()))
    })
}

/// Reads the checkpoint an unfinished run left at `path`, if any, for a run of `command`: the checkpoint must be
/// of `format` (its `"format"` member) and have been written by the same command line (its `"command"` member,
/// [`Invocation::check`]).
///
/// # Errors
/// As [`read`]; a checkpoint of another format, or of a changed command line, naming each difference
/// ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)).
pub fn read_for<T: DeserializeOwned>(
    path: &Path,
    format: &str,
    command: &Invocation,
) -> Result<Option<T>, TransferError> {
    /// What every checkpoint starts with.
    #[derive(Deserialize)]
    struct Header {
        format: String,
        command: Invocation,
    }
    let Some(value) = read::<serde_json::Value>(path)? else { return Ok(None) };
    let header = Header::deserialize(&value).map_err(|e| {
        TransferError::invalid(format!("invalid checkpoint `{}`: {e}; remove it or give --force", path.display()))
    })?;
    if header.format != format {
        return Err(TransferError::invalid(format!(
            "invalid checkpoint `{}`: format `{}`, this tablectl reads `{format}`",
            path.display(),
            header.format
        )));
    }
    command.check(&header.command, path)?;
    serde_json::from_value(value).map(Some).map_err(|e| {
        TransferError::invalid(format!("invalid checkpoint `{}`: {e}; remove it or give --force", path.display()))
    })
}

/// Removes a checkpoint, if there is one.
///
/// # Errors
/// [`TransferError`] naming the file when it exists and cannot be removed.
pub fn remove(path: &Path) -> Result<(), TransferError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(TransferError::io("remove", path, e)),
        _ => Ok(()),
    }
}

/// Whether two entities hold the same keys and properties, whatever their order, their `Timestamp` and ETag
/// (set by the service), a Double compared by its bits: a resumed insert that meets `409` for an entity uses it
/// to tell the copy the stopped run wrote from a different entity that was there before.
///
/// ```
/// use table_model::{Entity, PartitionKey, RowKey};
/// use table_model_transfer::checkpoint::same_entity;
/// let a = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?).with("X".parse()?, f64::NAN)?.with("Y".parse()?, 1)?;
/// let b = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?).with("Y".parse()?, 1)?.with("X".parse()?, f64::NAN)?;
/// assert!(same_entity(&a, &b));
/// assert!(!same_entity(&a, &b.clone().with("Z".parse()?, "")?));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn same_entity(a: &Entity, b: &Entity) -> bool {
    fn values(e: &Entity) -> BTreeMap<String, String> {
        e.iter()
            .map(|(name, value)| {
                let shown = match value {
                    EdmValue::Double(d) => format!("Double({:#x})", d.to_bits()),
                    other => format!("{other:?}"),
                };
                (name.to_string(), shown)
            })
            .collect()
    }
    a.partition_key() == b.partition_key() && a.row_key() == b.row_key() && values(a) == values(b)
}
