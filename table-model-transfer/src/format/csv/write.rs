//! Writing typed CSV: [`CsvWriter`], which spools the rows and writes the header, the union of the columns, at
//! the end.

use super::cell::push_field;
use super::rows::{CsvRow, CsvRows};
use super::{KEY_COLUMNS, MAX_COLUMNS, TERMINATOR, TYPE_SUFFIX};
use crate::error::TransferError;
use crate::format::compress::Output;
use crate::format::{Compression, EntityWriter, Keys, Sink, WrittenFile, WrittenKeys};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read as _, Seek as _, Write};
use std::path::PathBuf;
use table_model::limits::MAX_CUSTOM_PROPERTIES;
use table_model::Entity;

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
    /// The property columns, in the order first seen, and where each is.
    columns: Vec<String>,
    index: HashMap<String, usize>,
    /// Per position in an entity, the column of the property there last time: the guess tried before `index`.
    guesses: Vec<usize>,
    /// Per column, the position of the row's property in it ([`NONE`] for none).
    slots: Vec<usize>,
    keys: WrittenKeys,
    record: Vec<u8>,
    /// The row of an entity given decoded.
    one: CsvRows,
}

/// No column, no property.
const NONE: usize = usize::MAX;

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
            guesses: Vec::new(),
            slots: Vec::new(),
            keys: WrittenKeys::default(),
            record: Vec::new(),
            one: CsvRows::new(),
        })
    }

    /// The column of `name`, the property at `position` in its entity: the column the same position had last
    /// time when the name is its, else a hash lookup (which becomes the guess), else a new column.
    fn column(&mut self, position: usize, name: &str, row: &CsvRow<'_>) -> Result<usize, TransferError> {
        if let Some(&guess) = self.guesses.get(position)
            && guess != NONE
            && self.columns[guess] == name
        {
            return Ok(guess);
        }
        let column = match self.index.get(name) {
            Some(&column) => column,
            None => {
                let count = KEY_COLUMNS.len() + 2 * (self.columns.len() + 1);
                if count > MAX_COLUMNS {
                    let keys =
                        Keys { partition_key: row.partition_key().to_owned(), row_key: row.row_key().to_owned() };
                    return Err(TransferError::invalid(format!(
                        "cannot write entity {keys} as csv: its property `{name}` would make {count} columns, over \
                         the {MAX_COLUMNS} a csv file may have; export to jsonl",
                    )));
                }
                self.columns.push(name.to_owned());
                self.index.insert(name.to_owned(), self.columns.len() - 1);
                self.columns.len() - 1
            }
        };
        // An entity has at most so many properties: the guesses stay bounded.
        if position < MAX_CUSTOM_PROPERTIES {
            if self.guesses.len() <= position {
                self.guesses.resize(position + 1, NONE);
            }
            self.guesses[position] = column;
        }
        Ok(column)
    }
}

/// Appends a field after the first of a record (which goes in with [`push_field`]).
fn push_next(record: &mut Vec<u8>, field: &str) {
    record.push(b',');
    push_field(record, field);
}

impl EntityWriter for CsvWriter<'_> {
    fn write(&mut self, entity: &Entity) -> Result<(), TransferError> {
        let mut one = std::mem::take(&mut self.one);
        one.clear();
        one.push_entity(entity);
        let written = self.write_csv_row(&one.get(0).expect("the entity's row"));
        self.one = one;
        written
    }

    fn write_csv_row(&mut self, row: &CsvRow<'_>) -> Result<(), TransferError> {
        // Each property's column, new ones appended in the order first seen.
        self.slots.clear();
        self.slots.resize(self.columns.len(), NONE);
        let mut in_order = true;
        for (position, (name, _)) in row.properties().enumerate() {
            let column = self.column(position, name, row)?;
            if column == self.slots.len() {
                self.slots.push(NONE);
            }
            self.slots[column] = position;
            in_order &= column == position;
        }
        // The row's fields are the record when each property is in the column of its position and no column is
        // left empty (the entity has the properties of the first, in their order); else they are put in order.
        let record = if in_order && row.property_count() == self.columns.len() {
            row.fields()
        } else {
            self.record.clear();
            self.record.extend_from_slice(row.key_fields());
            for &position in &self.slots {
                match position {
                    NONE => self.record.extend_from_slice(b",,"),
                    position => self.record.extend_from_slice(row.property_fields(position)),
                }
            }
            &self.record
        };
        let spool = &mut self.spool;
        let header = [(record.len() as u64).to_le_bytes(), (self.columns.len() as u64).to_le_bytes()];
        spool
            .file
            .write_all(header.as_flattened())
            .and_then(|()| spool.file.write_all(record))
            .map_err(|e| TransferError::io("write", &spool.path, e))?;
        spool.bytes += (record.len() + TERMINATOR.len()) as u64;
        self.keys.wrote_keys(row.partition_key(), row.row_key());
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
            push_next(&mut record, column);
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
