//! The `parquet` format: one typed column per property, by `table_model_arrow` (its module docs say the mapping;
//! `docs/tablectl.md`, "Formats", says it for users). The columns are given by a schema file (`export --schema`,
//! the JSON `tablectl schema --json` prints) or inferred from the first 1,000 entities; a value that does not fit
//! its column goes to the `@overflow` column as the service's JSON, so nothing is lost, and import reads every
//! entity back bit for bit. Row groups are bounded in memory (8,192 rows or 16 MiB), so memory does not grow with
//! the table.
//!
//! A Parquet file is written whole: it ends with its footer, so a checkpoint cannot continue it (a resumed export
//! writes it again), and it is read from a file, not a stream (its footer comes first).

use super::{EntityReader, EntityWriter, Position, Record, Rejected, Sink, WrittenFile, WrittenKeys};
use crate::digest::Hashing;
use crate::error::TransferError;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use table_model::Entity;
use table_model_arrow::infer::Inference;
use table_model_arrow::parquet::{ParquetEntityReader, ParquetEntityWriter, ReaderOptions, WriterOptions};

/// Reads a schema file: the JSON of `tablectl schema --json` (properties with their EDM types, and optionally
/// their `column`).
///
/// # Errors
/// [`TransferError`] ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)): the file cannot be read, is not that JSON,
/// or describes columns that cannot be (a key that is not a string, a name that is not a property name).
pub fn read_schema(path: &Path) -> Result<Inference, TransferError> {
    let bytes = std::fs::read(path).map_err(|e| TransferError::io("read", path, e))?;
    let inference: Inference = serde_json::from_slice(&bytes)
        .map_err(|e| TransferError::invalid(format!("invalid schema file `{}`: {e}", path.display())))?;
    inference
        .to_schema()
        .map_err(|e| TransferError::invalid(format!("invalid schema file `{}`: {e}", path.display())))?;
    Ok(inference)
}

/// What the Parquet writer writes into: the bytes of each finished row group, moved into the [`Sink`] (which
/// need not be `Send`, as the Parquet writer's output must be) after each call.
#[derive(Clone, Debug, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("never poisoned: nothing panics holding it").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes entities as a Parquet file into a [`Sink`], counting and hashing what it writes.
///
/// ```
/// use table_model::{Entity, PartitionKey, RowKey};
/// use table_model_transfer::format::{parquet::ParquetWriter, EntityWriter as _, Sink};
/// let mut out = Vec::new();
/// let mut writer = ParquetWriter::new(Sink::stream("test", &mut out), None)?;
/// writer.write(&Entity::new(PartitionKey::new("p")?, RowKey::new("r")?).with("N".parse()?, 5_i64)?)?;
/// let written = Box::new(writer).finish()?;
/// assert_eq!((written.entities, written.bytes), (1, out.len() as u64));
/// assert_eq!((&out[..4], &out[out.len() - 4..]), (&b"PAR1"[..], &b"PAR1"[..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ParquetWriter<'a> {
    writer: Option<ParquetEntityWriter<Shared>>,
    buffer: Shared,
    out: Hashing<Sink<'a>>,
    keys: WrittenKeys,
}

impl std::fmt::Debug for ParquetWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetWriter").field("sink", self.out.get_ref()).field("keys", &self.keys).finish()
    }
}

impl<'a> ParquetWriter<'a> {
    /// A writer into `sink`, with the columns of `schema`, or inferred from the first entities.
    ///
    /// # Errors
    /// [`TransferError`] ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)) for a schema that describes no
    /// entities.
    pub fn new(sink: Sink<'a>, schema: Option<&Inference>) -> Result<Self, TransferError> {
        let schema = schema
            .map(|s| s.to_schema().map(Arc::new))
            .transpose()
            .map_err(|e| TransferError::invalid(format!("invalid schema: {e}")))?;
        let buffer = Shared::default();
        let writer = ParquetEntityWriter::new(buffer.clone(), schema, WriterOptions::default())
            .map_err(|e| TransferError::invalid(format!("invalid schema: {e}")))?;
        Ok(ParquetWriter { writer: Some(writer), buffer, out: Hashing::new(sink), keys: WrittenKeys::default() })
    }

    /// Moves what the Parquet writer wrote into the sink.
    fn drain(&mut self) -> Result<(), TransferError> {
        let bytes = std::mem::take(&mut *self.buffer.0.lock().expect("never poisoned: nothing panics holding it"));
        let out = &mut self.out;
        out.write_all(&bytes).map_err(|e| out.get_ref().error("write", e))
    }

    fn failed(&self, e: table_model_arrow::Error) -> TransferError {
        let target = self.out.get_ref().path().map_or_else(|| "stdout".to_owned(), |p| format!("`{}`", p.display()));
        TransferError::failed(format!("cannot write parquet to {target}: {e}"))
    }
}

impl EntityWriter for ParquetWriter<'_> {
    fn write(&mut self, entity: &Entity) -> Result<(), TransferError> {
        let writer = self.writer.as_mut().expect("finish consumes the writer");
        if let Err(e) = writer.write_ref(entity) {
            return Err(self.failed(e));
        }
        self.keys.wrote(entity);
        self.drain()
    }

    fn bytes(&self) -> u64 {
        self.out.bytes
    }

    fn checkpoint(&mut self) -> Result<Option<u64>, TransferError> {
        self.drain()?;
        let sink = self.out.get_mut();
        sink.sync().map_err(|e| sink.error("write", e))?;
        // A Parquet file ends with its footer: the bytes so far cannot be continued.
        Ok(None)
    }

    fn finish(mut self: Box<Self>) -> Result<WrittenFile, TransferError> {
        let writer = self.writer.take().expect("finish is called once");
        if let Err(e) = writer.finish() {
            return Err(self.failed(e));
        }
        self.drain()?;
        let mut out = self.out;
        let sink = out.get_mut();
        sink.sync().map_err(|e| sink.error("write", e))?;
        Ok(self.keys.into_file(out.bytes, out.hex()))
    }
}

/// Reads a Parquet file's rows into records, numbered from 1; a row that is not an entity is a [`Rejected`]
/// record, and reading goes on.
#[derive(Debug)]
pub struct ParquetReader {
    source: Arc<str>,
    reader: ParquetEntityReader,
    row: u64,
    bytes: u64,
}

impl ParquetReader {
    /// Opens a Parquet file (its footer and schema are read now).
    ///
    /// # Errors
    /// [`TransferError`]: stdin (a Parquet file is read from its end), a file that cannot be opened, is not Parquet,
    /// or has columns that hold no EDM type ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)).
    pub fn open(path: &Path) -> Result<Self, TransferError> {
        if path.as_os_str() == "-" {
            return Err(TransferError::invalid(
                "parquet cannot be read from stdin (its footer is at its end): give a file",
            ));
        }
        let file = std::fs::File::open(path).map_err(|e| TransferError::io("read", path, e))?;
        let bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
        let reader = ParquetEntityReader::new(file, ReaderOptions::default())
            .map_err(|e| TransferError::invalid(format!("cannot read `{}`: {e}", path.display())))?;
        Ok(ParquetReader { source: path.display().to_string().into(), reader, row: 0, bytes })
    }
}

impl EntityReader for ParquetReader {
    fn next_record(&mut self) -> Result<Option<Record>, TransferError> {
        let Some(next) = self.reader.next() else {
            return Ok(None);
        };
        self.row += 1;
        let position = Position { source: self.source.clone(), line: self.row };
        let entity = match next {
            Ok(entity) => Ok(entity),
            // A row that is not an entity: rejected, and reading goes on.
            Err(e) if matches!(e.kind(), table_model_arrow::ErrorKind::Row(_)) => {
                let (partition_key, row_key) = match e.keys() {
                    Some((p, r)) => (Some(p.to_owned()), Some(r.to_owned())),
                    None => (None, None),
                };
                let text = serde_json::json!({"PartitionKey": partition_key, "RowKey": row_key}).to_string();
                Err(Rejected {
                    partition_key,
                    row_key,
                    property: e.property().map(str::to_owned),
                    rule: strip_row(&e.to_string()).to_owned(),
                    text,
                })
            }
            // A page that cannot be read: nothing after it can.
            Err(e) => {
                return Err(TransferError::failed(format!(
                    "cannot read `{}` at row {}: {}",
                    self.source,
                    self.row,
                    strip_row(&e.to_string())
                )))
            }
        };
        Ok(Some(Record { position, entity }))
    }

    fn bytes_read(&self) -> u64 {
        // Parquet is read by column chunks, not in order: the share of rows read, of the file's size.
        let rows = self.reader.rows().max(1);
        self.bytes.saturating_mul(self.row.min(rows)) / rows
    }
}

/// The message without its `row N: ` (the record's position says it).
fn strip_row(message: &str) -> &str {
    match message.split_once(": ") {
        Some((row, rest)) if row.starts_with("row ") && row[4..].bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => message,
    }
}
