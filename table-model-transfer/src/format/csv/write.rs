//! Writing typed CSV: [`CsvWriter`], which spools the rows and writes the header, the union of the columns, at
//! the end.

use super::cell::{cell, push_field};
use super::{KEY_COLUMNS, MAX_COLUMNS, TERMINATOR, TYPE_SUFFIX};
use crate::error::TransferError;
use crate::format::compress::Output;
use crate::format::{Compression, EntityWriter, Sink, WrittenFile, WrittenKeys};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read as _, Seek as _, Write};
use std::path::PathBuf;
use table_model::{EdmValue, Entity, PropertyName};

/// Writes entities as typed CSV into a [`Sink`], compressed or not, through a spool file (module docs).
///
/// ```
/// use table_model::{Entity, PartitionKey, RowKey};
/// use table_model_transfer::format::{csv::CsvWriter, Compression, EntityWriter as _, Sink};
/// let mut out = Vec::new();
/// let mut writer = CsvWriter::new(Sink::stream("test", &mut out), Compression::None)?;
/// let (p, r) = (PartitionKey::new("p")?, RowKey::new("1")?);
/// writer.write(&Entity::new(p.clone(), r).with("N".parse()?, 5_i64)?)?;
/// writer.write(&Entity::new(p, RowKey::new("2")?).with("Name".parse()?, "a, b")?)?;
/// assert_eq!(Box::new(writer).finish()?.entities, 2);
/// assert_eq!(
///     String::from_utf8(out)?,
///     "PartitionKey,RowKey,Timestamp,N,N@type,Name,Name@type\r\n\
///      p,1,,5,Edm.Int64,,\r\n\
///      p,2,,,,\"a, b\",Edm.String\r\n"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct CsvWriter<'a> {
    out: Output<'a>,
    spool: Spool,
    columns: Vec<PropertyName>,
    index: HashMap<PropertyName, usize>,
    keys: WrittenKeys,
    record: Vec<u8>,
    text: String,
}

impl std::fmt::Debug for CsvWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsvWriter").field("columns", &self.columns.len()).finish_non_exhaustive()
    }
}

/// The rows written so far, each as its length, its number of property columns then, and its bytes; removed
/// when dropped.
struct Spool {
    path: PathBuf,
    file: BufWriter<File>,
    bytes: u64,
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Spool {
    /// A new spool file beside `beside` (the output file), or in the temporary directory for a stream.
    fn create(beside: Option<&std::path::Path>) -> Result<Spool, TransferError> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(".tablectl-{}-{}.csv.spool", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let path = match beside.and_then(|p| p.parent()) {
            Some(dir) if !dir.as_os_str().is_empty() => dir.join(name),
            Some(_) => PathBuf::from(name),
            None => std::env::temp_dir().join(name),
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| TransferError::io("create", &path, e))?;
        Ok(Spool { path, file: BufWriter::with_capacity(256 * 1024, file), bytes: 0 })
    }
}

impl<'a> CsvWriter<'a> {
    /// A writer into `sink`, compressed with `compression`; its spool file is created now.
    ///
    /// # Errors
    /// [`TransferError`] when the spool file cannot be created.
    pub fn new(sink: Sink<'a>, compression: Compression) -> Result<Self, TransferError> {
        let spool = Spool::create(sink.path())?;
        Ok(CsvWriter {
            out: Output::new(sink, compression),
            spool,
            columns: Vec::new(),
            index: HashMap::new(),
            keys: WrittenKeys::default(),
            record: Vec::new(),
            text: String::new(),
        })
    }
}

/// Appends a field after the first of a record (which goes in with [`push_field`]).
fn push_next(record: &mut Vec<u8>, field: &str) {
    record.push(b',');
    push_field(record, field);
}

impl EntityWriter for CsvWriter<'_> {
    fn write(&mut self, entity: &Entity) -> Result<(), TransferError> {
        // Each property's column, new ones appended in the order first seen.
        let mut cells: Vec<Option<&EdmValue>> = vec![None; self.columns.len()];
        for (name, value) in entity.iter() {
            let column = match self.index.get(name) {
                Some(&column) => column,
                None => {
                    if KEY_COLUMNS.len() + 2 * (self.columns.len() + 1) > MAX_COLUMNS {
                        return Err(TransferError::invalid(format!(
                            "cannot write entity {} as csv: its property `{name}` would make {} columns, over the \
                             {MAX_COLUMNS} a csv file may have; export to jsonl",
                            crate::format::Keys::of(entity),
                            KEY_COLUMNS.len() + 2 * (self.columns.len() + 1)
                        )));
                    }
                    self.columns.push(name.clone());
                    self.index.insert(name.clone(), self.columns.len() - 1);
                    cells.push(None);
                    self.columns.len() - 1
                }
            };
            cells[column] = Some(value);
        }
        self.record.clear();
        push_field(&mut self.record, entity.partition_key().as_str());
        push_next(&mut self.record, entity.row_key().as_str());
        self.text.clear();
        if let Some(timestamp) = entity.timestamp() {
            timestamp.write_to(&mut self.text);
        }
        push_next(&mut self.record, &self.text);
        for value in &cells {
            match value {
                Some(value) => {
                    self.text.clear();
                    cell(value, &mut self.text);
                    push_next(&mut self.record, &self.text);
                    push_next(&mut self.record, value.edm_type().as_str());
                }
                None => self.record.extend_from_slice(b",,"),
            }
        }
        let spool = &mut self.spool;
        let header = [(self.record.len() as u64).to_le_bytes(), (cells.len() as u64).to_le_bytes()];
        spool
            .file
            .write_all(header.as_flattened())
            .and_then(|()| spool.file.write_all(&self.record))
            .map_err(|e| TransferError::io("write", &spool.path, e))?;
        spool.bytes += (self.record.len() + TERMINATOR.len()) as u64;
        self.keys.wrote(entity);
        Ok(())
    }

    fn bytes(&self) -> u64 {
        self.spool.bytes
    }

    fn checkpoint(&mut self) -> Result<Option<u64>, TransferError> {
        let spool = &mut self.spool;
        spool.file.flush().map_err(|e| TransferError::io("write", &spool.path, e))?;
        Ok(None)
    }

    fn finish(self: Box<Self>) -> Result<WrittenFile, TransferError> {
        let CsvWriter { mut out, mut spool, columns, keys, mut record, .. } = *self;
        // The spool's buffered rows go into its file, which is then read back from its start.
        spool.file.flush().map_err(|e| TransferError::io("write", &spool.path, e))?;
        let mut file = spool.file.get_ref().try_clone().map_err(|e| TransferError::io("read", &spool.path, e))?;
        file.seek(io::SeekFrom::Start(0)).map_err(|e| TransferError::io("read", &spool.path, e))?;

        record.clear();
        record.extend_from_slice(KEY_COLUMNS.join(",").as_bytes());
        for column in &columns {
            push_next(&mut record, column.as_str());
            push_next(&mut record, &format!("{column}{TYPE_SUFFIX}"));
        }
        record.extend_from_slice(TERMINATOR);
        out.write_all(&record).map_err(|e| out.error(e))?;

        let total = columns.len() as u64;
        let mut rows = BufReader::with_capacity(256 * 1024, file);
        let mut header = [0_u8; 16];
        loop {
            match rows.read_exact(&mut header) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(TransferError::io("read", &spool.path, e)),
            }
            let length = u64::from_le_bytes(header[..8].try_into().expect("8 bytes"));
            let known = u64::from_le_bytes(header[8..].try_into().expect("8 bytes"));
            record.clear();
            record.resize(usize::try_from(length).expect("a row spooled from memory"), 0);
            rows.read_exact(&mut record).map_err(|e| TransferError::io("read", &spool.path, e))?;
            // The columns first seen after this row: empty for it.
            for _ in known..total {
                record.extend_from_slice(b",,");
            }
            record.extend_from_slice(TERMINATOR);
            out.write_all(&record).map_err(|e| out.error(e))?;
        }
        drop(rows);
        drop(spool);
        let (bytes, sha256) = out.finish()?;
        Ok(keys.into_file(bytes, sha256))
    }
}
