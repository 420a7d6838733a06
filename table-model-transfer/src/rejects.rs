//! The reject report of `import`, `copy` and `validate`: one JSON object per line for each entity not written (or,
//! for `validate`, that the service would refuse), with its source and line, keys, property and rule, and the line
//! itself to fix and import again. The file is created when the first entity is rejected, so a clean run leaves
//! none.
//!
//! Layer: files.

use crate::error::TransferError;
use crate::format::{Position, Rejected};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// One entity not imported, as a line of the reject file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reject {
    /// The input (`-` for stdin; `table:NAME` for a table read by `copy`).
    pub source: String,
    /// Its line or row number, from 1.
    pub line: u64,
    /// The PartitionKey as written, when there is one.
    pub partition_key: Option<String>,
    /// The RowKey as written, when there is one.
    pub row_key: Option<String>,
    /// The property (or key) at fault, when one is.
    pub property: Option<String>,
    /// What was wrong: the rule broken, or the service's refusal.
    pub rule: String,
    /// The line, to fix and import again.
    pub text: String,
}

impl Reject {
    /// The reject of a record that is not an entity.
    ///
    /// ```
    /// use table_model_transfer::format::{Position, Rejected};
    /// use table_model_transfer::rejects::Reject;
    /// let position = Position { source: "in.jsonl".into(), line: 7 };
    /// let rejected = Rejected {
    ///     partition_key: Some("p".into()),
    ///     row_key: None,
    ///     property: Some("RowKey".into()),
    ///     rule: "the RowKey is missing".into(),
    ///     text: "{\"PartitionKey\":\"p\"}".into(),
    /// };
    /// let reject = Reject::of(&position, rejected);
    /// assert_eq!((reject.source.as_str(), reject.line, reject.property.as_deref()), ("in.jsonl", 7, Some("RowKey")));
    /// ```
    pub fn of(position: &Position, rejected: Rejected) -> Reject {
        Reject {
            source: position.source.to_string(),
            line: position.line,
            partition_key: rejected.partition_key,
            row_key: rejected.row_key,
            property: rejected.property,
            rule: rejected.rule,
            text: rejected.text,
        }
    }
}

/// The reject file, created when the first entity is rejected.
#[derive(Debug)]
pub struct RejectFile {
    path: PathBuf,
    file: Option<BufWriter<File>>,
    count: u64,
    /// Bytes written into the file, with those of the run it resumes.
    bytes: u64,
}

impl RejectFile {
    /// A reject file at `path`, not created yet.
    pub fn new(path: PathBuf) -> Self {
        RejectFile { path, file: None, count: 0, bytes: 0 }
    }

    /// The reject file of a resumed run: its first `bytes` (`count` rejects) are kept, anything after them (the
    /// rejects of a chunk the stopped run did not finish) cut off.
    ///
    /// # Errors
    /// [`TransferError`] naming the file when it cannot be opened, or is shorter than its checkpoint says.
    pub fn resume(path: PathBuf, bytes: u64, count: u64) -> Result<Self, TransferError> {
        if bytes == 0 {
            return Ok(RejectFile { path, file: None, count: 0, bytes: 0 });
        }
        let sink = crate::format::Sink::resume(&path, bytes)?;
        let file = match sink {
            crate::format::Sink::File { file, .. } => file,
            crate::format::Sink::Stream { name, .. } => {
                return Err(TransferError::failed(format!("cannot resume the reject file `{name}`: not a file")))
            }
        };
        Ok(RejectFile { path, file: Some(file), count, bytes })
    }

    /// Flushes and syncs the file, if there is one, and says how many bytes it holds: for a checkpoint.
    ///
    /// # Errors
    /// [`TransferError`] naming the file when it cannot be written.
    pub fn sync(&mut self) -> Result<u64, TransferError> {
        if let Some(file) = &mut self.file {
            file.flush().map_err(|e| TransferError::io("write", &self.path, e))?;
            file.get_ref().sync_data().map_err(|e| TransferError::io("write", &self.path, e))?;
        }
        Ok(self.bytes)
    }

    /// Writes one reject, creating the file first if needed.
    ///
    /// # Errors
    /// [`TransferError`] naming the file when it cannot be created or written.
    pub fn write(&mut self, reject: &Reject) -> Result<(), TransferError> {
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let file = File::create(&self.path).map_err(|e| TransferError::io("create", &self.path, e))?;
                self.file.insert(BufWriter::new(file))
            }
        };
        let mut json = serde_json::to_vec(reject).expect("a reject is always JSON");
        json.push(b'\n');
        file.write_all(&json).map_err(|e| TransferError::io("write", &self.path, e))?;
        self.count += 1;
        self.bytes += json.len() as u64;
        Ok(())
    }

    /// Flushes the file, if there is one.
    ///
    /// # Errors
    /// [`TransferError`] naming the file when it cannot be written.
    pub fn finish(&mut self) -> Result<(), TransferError> {
        match &mut self.file {
            Some(file) => file.flush().map_err(|e| TransferError::io("write", &self.path, e)),
            None => Ok(()),
        }
    }

    /// Rejects written.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
