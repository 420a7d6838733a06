//! The `csv` format: Azure Storage Explorer's typed CSV, both ways (`docs/tablectl.md`, "Formats", "csv").
//!
//! The header is `PartitionKey,RowKey,Timestamp`, then for each property its column and, right after it, a
//! `<Prop>@type` column; each row types each of its own values there (`Edm.Int64`, ...), so a column may hold
//! different types in different rows and nothing is ever typed by guessing. The columns are the union of the
//! properties of every entity written, in the order they were first seen.
//!
//! Reading takes the type cells with or without the `Edm.` prefix, in any case; an empty value with an empty
//! type is an absent property; an empty value typed `String` is the empty string (and typed `Binary`, no bytes);
//! an empty value of another type is an absent property (Storage Explorer writes a type for a property an entity
//! lacks); a value in a column without a `@type` column is a String. A UTF-8 byte order mark is skipped; records
//! end with `\r\n`, `\n` or `\r`; fields are quoted as RFC 4180 says (commas, quotes, CR and LF inside quotes).
//!
//! The writer cannot know the union of the columns before the last entity, and does not hold the entities in
//! memory: it spools each row into a temporary file beside the output, then writes the header and the rows at
//! [`EntityWriter::finish`]. So its [`EntityWriter::checkpoint`] returns `None` (a resumed export writes the file
//! again), and its [`EntityWriter::bytes`] are the bytes spooled until then.

use super::compress::Output;
use super::{
    Compression, EntityReader, EntityWriter, Position, Record, Rejected, Sink, WrittenFile, WrittenKeys,
    MAX_RECORD_BYTES,
};
use crate::error::TransferError;
use base64::Engine as _;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read as _, Seek as _, Write};
use std::path::PathBuf;
use std::sync::Arc;
use table_model::{DateTime, EdmBinary, EdmString, EdmType, EdmValue, Entity, PartitionKey, PropertyName, RowKey};

/// The most columns a header may have: 16,384, Excel's own limit (an entity has at most 252 properties; a file
/// holds the union of its entities'). A longer header is refused before anything is allocated per column.
pub const MAX_COLUMNS: usize = 16_384;

/// The columns before the properties'.
const KEY_COLUMNS: [&str; 3] = ["PartitionKey", "RowKey", "Timestamp"];

/// The suffix of a type column's name.
const TYPE_SUFFIX: &str = "@type";

/// The record terminator written (RFC 4180's).
const TERMINATOR: &[u8] = b"\r\n";

// ---------------------------------------------------------------------------------------------------------------
// Cells

/// Appends a field to a record, quoted when it holds a comma, a quote, CR or LF (its quotes doubled).
///
/// ```
/// let mut record = Vec::new();
/// table_model_transfer::format::csv::push_field(&mut record, "a,\"b\"\r\n");
/// assert_eq!(record, b"\"a,\"\"b\"\"\r\n\"");
/// ```
pub fn push_field(record: &mut Vec<u8>, field: &str) {
    if field.bytes().any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n')) {
        record.push(b'"');
        for b in field.bytes() {
            if b == b'"' {
                record.push(b'"');
            }
            record.push(b);
        }
        record.push(b'"');
    } else {
        record.extend_from_slice(field.as_bytes());
    }
}

/// The text of a value in its cell: Binary in base64, Boolean `true`/`false`, DateTime with 7 fraction digits,
/// Double as the shortest text that reads back to the same bits (`NaN`, `Infinity`, `-Infinity`, `-0.0`), Guid
/// hyphenated, integers in decimal, String as it is.
///
/// ```
/// use table_model::EdmValue;
/// use table_model_transfer::format::csv::{cell, read_cell};
/// let mut text = String::new();
/// for value in [EdmValue::Double(-0.0), EdmValue::Double(0.1), EdmValue::Double(f64::NEG_INFINITY), EdmValue::Int64(i64::MIN)] {
///     text.clear();
///     cell(&value, &mut text);
///     assert_eq!(read_cell(value.edm_type(), &text).unwrap(), value);
/// }
/// assert_eq!(text, "-9223372036854775808");
/// ```
pub fn cell(value: &EdmValue, out: &mut String) {
    use std::fmt::Write as _;
    match value {
        EdmValue::Binary(b) => base64::engine::general_purpose::STANDARD.encode_string(b.as_bytes(), out),
        EdmValue::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        EdmValue::DateTime(d) => d.write_to(out),
        EdmValue::Double(d) if d.is_nan() => out.push_str("NaN"),
        EdmValue::Double(d) if d.is_infinite() => out.push_str(if *d > 0.0 { "Infinity" } else { "-Infinity" }),
        // Debug is the shortest text that parses back to the same bits (with `.0` on integral values, so that no
        // reader takes them for integers, and an exponent for very large or small ones).
        EdmValue::Double(d) => write!(out, "{d:?}").expect("writing to a String cannot fail"),
        EdmValue::Guid(g) => write!(out, "{}", g.hyphenated()).expect("writing to a String cannot fail"),
        EdmValue::Int32(i) => write!(out, "{i}").expect("writing to a String cannot fail"),
        EdmValue::Int64(i) => write!(out, "{i}").expect("writing to a String cannot fail"),
        EdmValue::String(s) => out.push_str(s.as_str()),
    }
}

/// The type a type cell names: `Edm.Int64` or `Int64`, in any case (Storage Explorer wrote both spellings).
///
/// ```
/// use table_model::EdmType;
/// use table_model_transfer::format::csv::type_of_cell;
/// assert_eq!(type_of_cell("Edm.Int64"), Some(EdmType::Int64));
/// assert_eq!(type_of_cell("int64"), Some(EdmType::Int64));
/// assert_eq!(type_of_cell("Edm.GeographyPoint"), None);
/// ```
pub fn type_of_cell(text: &str) -> Option<EdmType> {
    let short = match text.get(..4) {
        Some(prefix) if prefix.eq_ignore_ascii_case("Edm.") => &text[4..],
        _ => text,
    };
    EdmType::ALL.into_iter().find(|t| t.short_name().eq_ignore_ascii_case(short))
}

/// Reads a non-empty cell as a value of type `t`, exactly: every text [`cell`] writes reads back to the same
/// value; Doubles also in any text Rust reads as one (`1e+300`, `INF`), Booleans in any case.
///
/// # Errors
/// What the text is not, in words.
pub fn read_cell(t: EdmType, text: &str) -> Result<EdmValue, String> {
    let invalid = || format!("`{}` is not an {}", shorten(text), t.as_str());
    Ok(match t {
        EdmType::Binary => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| format!("`{}` is not base64 (an Edm.Binary): {e}", shorten(text)))?;
            EdmValue::Binary(EdmBinary::new(bytes).map_err(|e| e.to_string())?)
        }
        EdmType::Boolean if text.eq_ignore_ascii_case("true") => EdmValue::Boolean(true),
        EdmType::Boolean if text.eq_ignore_ascii_case("false") => EdmValue::Boolean(false),
        EdmType::Boolean => return Err(invalid()),
        EdmType::DateTime => EdmValue::DateTime(DateTime::parse(text).map_err(|e| e.to_string())?),
        EdmType::Double => EdmValue::Double(match text {
            "NaN" => f64::NAN,
            "Infinity" | "INF" => f64::INFINITY,
            "-Infinity" | "-INF" => f64::NEG_INFINITY,
            _ => text.parse().map_err(|_| invalid())?,
        }),
        EdmType::Guid => EdmValue::Guid(uuid::Uuid::try_parse(text).map_err(|_| invalid())?),
        EdmType::Int32 => EdmValue::Int32(text.parse().map_err(|_| invalid())?),
        EdmType::Int64 => EdmValue::Int64(text.parse().map_err(|_| invalid())?),
        EdmType::String => EdmValue::String(EdmString::new(text).map_err(|e| e.to_string())?),
    })
}

/// At most 40 characters of a text, for a message.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Writing

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

// ---------------------------------------------------------------------------------------------------------------
// Reading

/// What a header column holds.
#[derive(Clone, Debug)]
enum Column {
    PartitionKey,
    RowKey,
    Timestamp,
    /// A property's values, and the index of its type column if it has one.
    Property(PropertyName, Option<usize>),
    /// A type column (read with its property), or the type of a key (`PartitionKey@type`: always a String).
    Type,
}

/// The header, read from the first record.
#[derive(Debug)]
struct Header {
    columns: Vec<Column>,
    partition_key: usize,
    row_key: usize,
    timestamp: Option<usize>,
}

impl Header {
    fn parse(fields: &[&str]) -> Result<Header, String> {
        let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(fields.len());
        for (i, name) in fields.iter().enumerate() {
            if by_name.insert(name, i).is_some() {
                return Err(format!("the column `{}` is there twice", shorten(name)));
            }
        }
        let mut columns = Vec::with_capacity(fields.len());
        for name in fields {
            let column = match *name {
                "PartitionKey" => Column::PartitionKey,
                "RowKey" => Column::RowKey,
                "Timestamp" => Column::Timestamp,
                name => match name.strip_suffix(TYPE_SUFFIX) {
                    Some(base) if by_name.contains_key(base) => Column::Type,
                    Some(base) => {
                        return Err(format!("the type column `{}` has no column `{}`", shorten(name), shorten(base)))
                    }
                    None => {
                        let property =
                            PropertyName::new(name).map_err(|e| format!("column `{}`: {e}", shorten(name)))?;
                        Column::Property(property, by_name.get(&*format!("{name}{TYPE_SUFFIX}")).copied())
                    }
                },
            };
            columns.push(column);
        }
        let find = |key: &str| by_name.get(key).copied();
        let missing = |key: &str| format!("the header has no `{key}` column");
        Ok(Header {
            partition_key: find("PartitionKey").ok_or_else(|| missing("PartitionKey"))?,
            row_key: find("RowKey").ok_or_else(|| missing("RowKey"))?,
            timestamp: find("Timestamp"),
            columns,
        })
    }
}

/// One record's fields, as the parser left them.
struct Fields<'r> {
    data: &'r [u8],
    ends: &'r [usize],
}

impl<'r> Fields<'r> {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn bytes(&self, i: usize) -> &'r [u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }

    /// The record as CSV text again, for its reject.
    fn text(&self) -> String {
        let mut record = Vec::new();
        for i in 0..self.len() {
            if i > 0 {
                record.push(b',');
            }
            push_field(&mut record, &String::from_utf8_lossy(self.bytes(i)));
        }
        String::from_utf8(record).expect("built from strings")
    }
}

/// What was wrong with a record, and where: the property at fault, if one is.
type Fault = (Option<String>, String);

/// Reads typed CSV into records, one per record, numbered by the line it starts on; a record that is not an
/// entity (a field not in UTF-8, a count of fields other than the header's, an unknown type, a value that does
/// not read as its type, a broken rule, a record over [`MAX_RECORD_BYTES`], a last record cut inside its quotes)
/// is a [`Rejected`] record, and reading goes on. A header that cannot be read is an error: nothing can be read
/// without it.
pub struct CsvReader {
    source: Arc<str>,
    input: Box<dyn BufRead + Send>,
    parser: csv_core::Reader,
    data: Vec<u8>,
    ends: Vec<usize>,
    /// `\n`s read so far.
    lines: u64,
    bytes: u64,
    header: Option<Header>,
}

impl std::fmt::Debug for CsvReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsvReader").field("source", &self.source).field("lines", &self.lines).finish_non_exhaustive()
    }
}

/// A record as read: its fields in `data` and `ends`, or why not.
enum RawRecord {
    Fields { line: u64 },
    TooLong { line: u64, bytes: u64 },
    TooWide { line: u64 },
    Unclosed { line: u64 },
}

impl CsvReader {
    /// A reader of `input`, named `source` in positions and errors.
    ///
    /// ```
    /// use table_model_transfer::format::{csv::CsvReader, EntityReader as _};
    /// let input: &[u8] = b"\xEF\xBB\xBFPartitionKey,RowKey,N,N@type\r\np,1,5,Int64\r\np,2,x,Edm.Int32\r\n";
    /// let mut reader = CsvReader::new("in.csv", Box::new(input));
    /// let first = reader.next_record()?.unwrap();
    /// assert_eq!((first.position.line, first.entity.unwrap().get::<i64>("N")?), (2, 5));
    /// let second = reader.next_record()?.unwrap();
    /// assert_eq!(second.position.line, 3);
    /// assert_eq!(second.entity.unwrap_err().rule, "`x` is not an Edm.Int32");
    /// assert!(reader.next_record()?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(source: impl Into<Arc<str>>, input: Box<dyn BufRead + Send>) -> Self {
        CsvReader {
            source: source.into(),
            input,
            parser: csv_core::Reader::new(),
            data: Vec::new(),
            ends: Vec::new(),
            lines: 0,
            bytes: 0,
            header: None,
        }
    }

    /// Reads the next record into `data` and `ends`, within the bounds; `None` at the end.
    fn read_raw(&mut self) -> Result<Option<RawRecord>, TransferError> {
        // Blank lines before the record are skipped here, so that its first line is known.
        loop {
            let available = self.input.fill_buf().map_err(|e| read_error(&self.source, self.lines, e))?;
            if available.is_empty() {
                return Ok(None);
            }
            let blank = available.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
            self.lines += available[..blank].iter().filter(|&&b| b == b'\n').count() as u64;
            self.bytes += blank as u64;
            let done = blank < available.len();
            self.input.consume(blank);
            if done {
                break;
            }
        }
        let line = self.lines + 1;
        self.ends.clear();
        self.ends.resize(64.min(MAX_COLUMNS + 1), 0);
        if self.data.is_empty() {
            self.data.resize(64 * 1024, 0);
        }
        let (mut nout, mut nend, mut read, mut quotes) = (0_usize, 0_usize, 0_u64, 0_u64);
        let mut scratch: Option<(Vec<u8>, Vec<usize>)> = None;
        let mut too_wide = false;
        loop {
            let available = self.input.fill_buf().map_err(|e| read_error(&self.source, self.lines, e))?;
            let (result, nin, n_out, n_end) = match &mut scratch {
                // Over a bound: the rest of the record is parsed into scratch buffers and dropped.
                Some((data, ends)) => {
                    let (result, nin, _, _) = self.parser.read_record(available, data, ends);
                    (result, nin, 0, 0)
                }
                None => self.parser.read_record(available, &mut self.data[nout..], &mut self.ends[nend..]),
            };
            let consumed = &available[..nin];
            self.lines += consumed.iter().filter(|&&b| b == b'\n').count() as u64;
            quotes += consumed.iter().filter(|&&b| b == b'"').count() as u64;
            read += nin as u64;
            self.input.consume(nin);
            nout += n_out;
            nend += n_end;
            match result {
                csv_core::ReadRecordResult::InputEmpty => {}
                csv_core::ReadRecordResult::OutputFull if scratch.is_none() => {
                    if self.data.len() >= MAX_RECORD_BYTES {
                        scratch = Some((vec![0; 64 * 1024], vec![0; 1024]));
                    } else {
                        let grown = (self.data.len() * 2).min(MAX_RECORD_BYTES);
                        self.data.resize(grown, 0);
                    }
                }
                csv_core::ReadRecordResult::OutputEndsFull if scratch.is_none() => {
                    if self.ends.len() > MAX_COLUMNS {
                        too_wide = true;
                        scratch = Some((vec![0; 64 * 1024], vec![0; 1024]));
                    } else {
                        let grown = (self.ends.len() * 2).min(MAX_COLUMNS + 1);
                        self.ends.resize(grown, 0);
                    }
                }
                // The scratch buffers are full: parsing goes on into them from their start.
                csv_core::ReadRecordResult::OutputFull | csv_core::ReadRecordResult::OutputEndsFull => {}
                csv_core::ReadRecordResult::Record => break,
                csv_core::ReadRecordResult::End => return Ok(None),
            }
        }
        self.bytes += read;
        self.ends.truncate(nend);
        Ok(Some(if too_wide {
            RawRecord::TooWide { line }
        } else if scratch.is_some() {
            RawRecord::TooLong { line, bytes: read }
        } else if quotes % 2 == 1 && self.input_ended() {
            RawRecord::Unclosed { line }
        } else {
            RawRecord::Fields { line }
        }))
    }

    /// Whether the input has nothing more (after a record: it was the last).
    fn input_ended(&mut self) -> bool {
        self.input.fill_buf().map(|b| b.is_empty()).unwrap_or(false)
    }

    fn fields(&self) -> Fields<'_> {
        Fields { data: &self.data, ends: &self.ends }
    }

    fn header_error(&self, line: u64, what: impl std::fmt::Display) -> TransferError {
        TransferError::invalid(format!("invalid csv header in `{}` line {line}: {what}", self.source))
    }

    /// Reads the header, the first record.
    fn read_header(&mut self) -> Result<bool, TransferError> {
        let line = match self.read_raw()? {
            None => return Ok(false),
            Some(RawRecord::Fields { line }) => line,
            Some(RawRecord::TooWide { line }) => {
                return Err(self.header_error(
                    line,
                    format_args!("over {MAX_COLUMNS} columns (an entity has at most 252 properties)"),
                ))
            }
            Some(RawRecord::TooLong { line, bytes }) => {
                return Err(self
                    .header_error(line, format_args!("{bytes} bytes, over the {MAX_RECORD_BYTES} a record may have")))
            }
            Some(RawRecord::Unclosed { line }) => {
                return Err(self.header_error(line, "the file ends inside a quoted field"))
            }
        };
        let fields = self.fields();
        let mut names = Vec::with_capacity(fields.len());
        for i in 0..fields.len() {
            match std::str::from_utf8(fields.bytes(i)) {
                Ok(name) => names.push(name),
                Err(e) => return Err(self.header_error(line, format_args!("column {} is not UTF-8: {e}", i + 1))),
            }
        }
        let header = Header::parse(&names).map_err(|e| self.header_error(line, e))?;
        self.header = Some(header);
        Ok(true)
    }

    /// The entity of the record in `data` and `ends`.
    fn entity(&self) -> Result<Entity, Fault> {
        let header = self.header.as_ref().expect("read after the header");
        let fields = self.fields();
        if fields.len() != header.columns.len() {
            return Err((
                None,
                format!("the record has {} fields, the header {} columns", fields.len(), header.columns.len()),
            ));
        }
        let text = |i: usize| -> Result<&str, Fault> {
            std::str::from_utf8(fields.bytes(i)).map_err(|e| {
                (Some(column_name(&header.columns[i]).to_owned()), format!("column {} is not UTF-8: {e}", i + 1))
            })
        };
        let partition_key = PartitionKey::new(text(header.partition_key)?)
            .map_err(|e| (Some("PartitionKey".to_owned()), e.to_string()))?;
        let row_key = RowKey::new(text(header.row_key)?).map_err(|e| (Some("RowKey".to_owned()), e.to_string()))?;
        let mut entity = Entity::new(partition_key, row_key);
        if let Some(i) = header.timestamp {
            let value = text(i)?;
            if !value.is_empty() {
                let at = DateTime::parse(value).map_err(|e| (Some("Timestamp".to_owned()), e.to_string()))?;
                entity.set_server_metadata(Some(at), None);
            }
        }
        for (i, column) in header.columns.iter().enumerate() {
            let Column::Property(name, type_column) = column else { continue };
            let fault = |rule: String| (Some(name.to_string()), rule);
            let value = text(i)?;
            let type_text = match type_column {
                Some(t) => text(*t)?,
                None => "",
            };
            let value = match (type_text.is_empty(), value.is_empty()) {
                (true, true) => continue,
                (true, false) => EdmValue::String(EdmString::new(value).map_err(|e| fault(e.to_string()))?),
                (false, _) => {
                    let t = type_of_cell(type_text).ok_or_else(|| {
                        fault(format!(
                            "unknown type `{}` in column `{name}{TYPE_SUFFIX}` (the types are Binary, Boolean, \
                             DateTime, Double, Guid, Int32, Int64 and String, with or without `Edm.`)",
                            shorten(type_text)
                        ))
                    })?;
                    match (t, value.is_empty()) {
                        (EdmType::String, true) => EdmValue::String(EdmString::default()),
                        (EdmType::Binary, true) => EdmValue::Binary(EdmBinary::default()),
                        (_, true) => continue,
                        (t, false) => read_cell(t, value).map_err(fault)?,
                    }
                }
            };
            entity.insert(name.clone(), value).map_err(|e| fault(e.to_string()))?;
        }
        Ok(entity)
    }
}

/// An input that cannot be read on, after `lines` lines.
fn read_error(source: &str, lines: u64, e: io::Error) -> TransferError {
    TransferError::failed(format!("cannot read `{source}` after line {lines}: {e}"))
}

/// A column's name, for a reject.
fn column_name(column: &Column) -> &str {
    match column {
        Column::PartitionKey => "PartitionKey",
        Column::RowKey => "RowKey",
        Column::Timestamp => "Timestamp",
        Column::Property(name, _) => name.as_str(),
        Column::Type => "@type",
    }
}

impl EntityReader for CsvReader {
    fn next_record(&mut self) -> Result<Option<Record>, TransferError> {
        if self.header.is_none() && !self.read_header()? {
            return Ok(None);
        }
        let Some(raw) = self.read_raw()? else { return Ok(None) };
        let rejected = |line: u64, rule: String| Record {
            position: Position { source: self.source.clone(), line },
            entity: Err(Rejected { partition_key: None, row_key: None, property: None, rule, text: String::new() }),
        };
        let line = match raw {
            RawRecord::Fields { line } => line,
            RawRecord::TooLong { line, bytes } => {
                return Ok(Some(rejected(
                    line,
                    format!(
                        "the record has {bytes} bytes, over the {MAX_RECORD_BYTES} a record may have (an entity is \
                         at most 1 MiB)"
                    ),
                )))
            }
            RawRecord::TooWide { line } => {
                return Ok(Some(rejected(line, format!("the record has over {MAX_COLUMNS} fields"))));
            }
            RawRecord::Unclosed { line } => {
                return Ok(Some(rejected(
                    line,
                    "the file ends inside a quoted field of this record (the file may be cut short)".to_owned(),
                )));
            }
        };
        let position = Position { source: self.source.clone(), line };
        let entity = self.entity().map_err(|(property, rule)| {
            let header = self.header.as_ref().expect("read after the header");
            let fields = self.fields();
            let key = |i: usize| {
                (fields.len() == header.columns.len())
                    .then(|| std::str::from_utf8(fields.bytes(i)).ok().map(str::to_owned))
                    .flatten()
            };
            Rejected {
                partition_key: key(header.partition_key),
                row_key: key(header.row_key),
                property,
                rule,
                text: fields.text(),
            }
        });
        Ok(Some(Record { position, entity }))
    }

    fn bytes_read(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use table_model::ETag;

    fn read(input: &[u8]) -> Result<Vec<Record>, TransferError> {
        let mut reader = CsvReader::new("t.csv", Box::new(io::Cursor::new(input.to_vec())));
        let mut records = Vec::new();
        while let Some(record) = reader.next_record()? {
            records.push(record);
        }
        Ok(records)
    }

    fn write(entities: &[Entity]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut writer = CsvWriter::new(Sink::stream("test", &mut out), Compression::None).unwrap();
        for entity in entities {
            writer.write(entity).unwrap();
        }
        Box::new(writer).finish().unwrap();
        out
    }

    fn entity(p: &str, r: &str) -> Entity {
        Entity::new(PartitionKey::new(p).unwrap(), RowKey::new(r).unwrap())
    }

    #[test]
    fn every_edm_value_round_trips_bit_for_bit() {
        let values = [
            EdmValue::Double(-0.0),
            EdmValue::Double(0.0),
            EdmValue::Double(f64::NAN),
            EdmValue::Double(f64::INFINITY),
            EdmValue::Double(f64::NEG_INFINITY),
            EdmValue::Double(f64::from_bits(1)),
            EdmValue::Double(f64::MAX),
            EdmValue::Double(f64::MIN_POSITIVE),
            EdmValue::Double(0.1),
            EdmValue::Double(1.0),
            EdmValue::Double(1e300),
            EdmValue::Int64(i64::MIN),
            EdmValue::Int64(i64::MAX),
            EdmValue::Int32(i32::MIN),
            EdmValue::Int32(i32::MAX),
            EdmValue::DateTime("1601-01-01T00:00:00.0000000Z".parse().unwrap()),
            EdmValue::DateTime("9999-12-31T23:59:59.9999999Z".parse().unwrap()),
            EdmValue::Binary(EdmBinary::new((0..65_536).map(|i| (i % 251) as u8).collect::<Vec<_>>()).unwrap()),
            EdmValue::Binary(EdmBinary::default()),
            EdmValue::Guid("5b5e3a84-3c4c-4f6e-9b8a-0c1d2e3f4a5b".parse().unwrap()),
            EdmValue::Boolean(false),
            EdmValue::Boolean(true),
            EdmValue::String(EdmString::new("").unwrap()),
            EdmValue::String(EdmString::new(" é 世界 🎉 \"q\", \r\n\r\n\n\r\u{7f}\u{0} ").unwrap()),
            EdmValue::String(EdmString::new("日".repeat(32_768)).unwrap()),
        ];
        let mut first = entity("ünï, \"p\"", "日本, \"r\"");
        for (i, value) in values.iter().enumerate() {
            first.insert(format!("P{i}").parse().unwrap(), value.clone()).unwrap();
        }
        let at: DateTime = "2024-01-02T03:04:05.1234567Z".parse().unwrap();
        // The ETag has no column (Storage Explorer's shape has none); an import never sends it anyway.
        first.set_server_metadata(Some(at), Some(ETag::new("W/\"x\"")));
        // A second entity: other types in the same columns, a property absent, a new one.
        let second = entity("", "")
            .with("P0".parse().unwrap(), "text in a Double column")
            .unwrap()
            .with("P3".parse().unwrap(), 7_i32)
            .unwrap()
            .with("Later".parse().unwrap(), "")
            .unwrap();
        let file = write(&[first.clone(), second.clone()]);
        let records = read(&file).unwrap();
        assert_eq!(records.len(), 2);
        let back: Vec<Entity> = records.into_iter().map(|r| r.entity.unwrap()).collect();
        assert_eq!(back[0].etag(), None);
        first.set_server_metadata(Some(at), None);
        // Not assert_eq: a failure would print 64 KiB strings.
        assert!(back[0] == first, "the first entity differs");
        assert_eq!(back[0].timestamp(), Some(at));
        assert!(back[0].get::<f64>("P0").unwrap().is_sign_negative());
        assert!(back[1] == second, "{:?}", back[1]);
        assert_eq!(back[1].len(), 3, "absent properties stay absent");
        assert_eq!(back[1].value("Later").and_then(EdmValue::as_str), Some(""), "an empty string survives");
    }

    #[test]
    fn storage_explorer_shapes_read() {
        // Both spellings of the types, a BOM, CRLF, a quoted newline, and a type written for an empty cell.
        let input = "\u{feff}PartitionKey,RowKey,Timestamp,Age,Age@type,Big,Big@type,Name,Name@type,Note\r\n\
                     p,1,2024-01-02T03:04:05.1234567Z,42,Int32,9223372036854775807,Edm.Int64,\"a\r\nb, \"\"c\"\"\",String,n\r\n\
                     \r\n\
                     p,2,,,Int32,,,,,\r\n\
                     p,3,,1.0,edm.double,-1,int64,,String,\r\n";
        let records = read(input.as_bytes()).unwrap();
        let lines: Vec<u64> = records.iter().map(|r| r.position.line).collect();
        assert_eq!(lines, [2, 5, 6], "a record's first line, blank lines counted");
        let e: Vec<Entity> = records.into_iter().map(|r| r.entity.unwrap()).collect();
        assert_eq!(e[0].get::<i32>("Age").unwrap(), 42);
        assert_eq!(e[0].value("Big"), Some(&EdmValue::Int64(i64::MAX)));
        assert_eq!(e[0].get::<String>("Name").unwrap(), "a\r\nb, \"c\"");
        assert_eq!(e[0].get::<String>("Note").unwrap(), "n", "a column without a type is a String");
        assert_eq!(e[1].len(), 0, "an empty Int32 cell is an absent property");
        assert_eq!(e[2].value("Age"), Some(&EdmValue::Double(1.0)), "typed by its cell, never guessed");
        assert_eq!(e[2].value("Big"), Some(&EdmValue::Int64(-1)));
        assert_eq!(e[2].get::<String>("Name").unwrap(), "", "an empty String typed String");
        assert_eq!(e[2].len(), 3);
    }

    #[test]
    fn bad_records_are_rejected_with_their_line_and_reading_goes_on() {
        let mut input = b"PartitionKey,RowKey,N,N@type\n".to_vec();
        input.extend_from_slice(b"p,1,x,Int64\n"); // 2: not an Int64
        input.extend_from_slice(b"p,2,1\n"); // 3: too few fields
        input.extend_from_slice(b"p,3,\xff,String\n"); // 4: not UTF-8
        input.extend_from_slice(b"p,4,1,Edm.Geography\n"); // 5: unknown type
        input.extend_from_slice(b"a#b,5,,\n"); // 6: a broken key rule
        input.extend_from_slice(b"p,6,\"");
        input.extend_from_slice(&vec![b'x'; MAX_RECORD_BYTES + 10]);
        input.extend_from_slice(b"\",String\n"); // 7: over the record bound
        input.extend_from_slice(b"p,8,8,Int32\n"); // 8: fine
        input.extend_from_slice(b"p,9,\"cut"); // 9: the file ends inside quotes
        let records = read(&input).unwrap();
        let summary: Vec<(u64, Option<&str>, Option<&str>)> = records
            .iter()
            .map(|r| match &r.entity {
                Ok(_) => (r.position.line, None, None),
                Err(e) => (r.position.line, e.property.as_deref(), Some(e.rule.as_str())),
            })
            .collect();
        assert_eq!(summary[0], (2, Some("N"), Some("`x` is not an Edm.Int64")));
        assert_eq!(summary[1], (3, None, Some("the record has 3 fields, the header 4 columns")));
        assert_eq!((summary[2].0, summary[2].1), (4, Some("N")));
        assert!(summary[2].2.unwrap().starts_with("column 3 is not UTF-8"), "{:?}", summary[2]);
        assert!(summary[3].2.unwrap().starts_with("unknown type `Edm.Geography` in column `N@type`"));
        assert_eq!((summary[4].0, summary[4].1), (6, Some("PartitionKey")));
        assert_eq!(summary[5].0, 7);
        assert!(summary[5].2.unwrap().contains("over the 8388608 a record may have"), "{:?}", summary[5]);
        assert_eq!(summary[6], (8, None, None));
        assert_eq!(summary[7].0, 9);
        assert!(summary[7].2.unwrap().starts_with("the file ends inside a quoted field"), "{:?}", summary[7]);
        assert_eq!(records.len(), 8);
        let Err(rejected) = &records[0].entity else { panic!() };
        assert_eq!((rejected.partition_key.as_deref(), rejected.row_key.as_deref()), (Some("p"), Some("1")));
        assert_eq!(rejected.text, "p,1,x,Int64");
    }

    #[test]
    fn a_header_of_millions_of_columns_is_refused_with_its_line() {
        let mut input = b"\n".to_vec();
        input.extend_from_slice(&b"a,".repeat(10_000_000));
        input.extend_from_slice(b"\n");
        let err = read(&input).unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::InvalidInput);
        assert_eq!(
            err.to_string(),
            "invalid csv header in `t.csv` line 2: over 16384 columns (an entity has at most 252 properties)"
        );
        for (header, message) in [
            ("PartitionKey,Name", "the header has no `RowKey` column"),
            ("PartitionKey,RowKey,A,A", "the column `A` is there twice"),
            ("PartitionKey,RowKey,B@type", "the type column `B@type` has no column `B`"),
        ] {
            let err = read(format!("{header}\n").as_bytes()).unwrap_err();
            assert_eq!(err.to_string(), format!("invalid csv header in `t.csv` line 1: {message}"));
        }
        assert!(read(b"PartitionKey,RowKey,has space\n").unwrap_err().to_string().contains("column `has space`: "));
        assert!(read(b"").unwrap().is_empty(), "an empty file has no records");
    }

    #[test]
    fn a_header_written_and_padded_for_columns_seen_later() {
        let a = entity("p", "1").with("A".parse().unwrap(), 1_i32).unwrap();
        let b = entity("p", "2").with("B".parse().unwrap(), true).unwrap();
        let file = String::from_utf8(write(&[a, b])).unwrap();
        assert_eq!(
            file,
            "PartitionKey,RowKey,Timestamp,A,A@type,B,B@type\r\np,1,,1,Edm.Int32,,\r\np,2,,,,true,Edm.Boolean\r\n"
        );
    }

    #[test]
    fn the_spool_file_is_removed() {
        let dir = std::env::temp_dir().join(format!("tablectl-csv-spool-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let mut writer = CsvWriter::new(Sink::create(&path, false).unwrap(), Compression::Gzip).unwrap();
        writer.write(&entity("p", "1")).unwrap();
        assert_eq!(writer.checkpoint().unwrap(), None);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "the file and its spool");
        Box::new(writer).finish().unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let writer = CsvWriter::new(Sink::create(&dir.join("u.csv"), false).unwrap(), Compression::None).unwrap();
        drop(writer);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "a dropped writer leaves its file, not its spool");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Any bytes give records or an error, never a panic: random inputs over the bytes that matter to the
    /// parser and the types.
    #[test]
    fn arbitrary_bytes_never_panic() {
        const BYTES: &[u8] = b",\"\r\n@aN1-.:TZ\xff\xef\xbb\xbf";
        const HEADERS: [&[u8]; 3] =
            [b"PartitionKey,RowKey,A,A@type,B\n", b"PartitionKey,RowKey,Timestamp,A,A@type\r\n", b""];
        let mut state = 0x1234_5678_u64;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let z = (state ^ (state >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb) as usize
        };
        for case in 0..3_000 {
            let mut input = HEADERS[case % 3].to_vec();
            for _ in 0..next() % 200 {
                input.push(BYTES[next() % BYTES.len()]);
                if next() % 10 == 0 {
                    input.extend_from_slice([&b"Edm.Int64"[..], b"Double", b"String", b"NaN", b"-0.0"][next() % 5]);
                }
            }
            let _ = read(&input);
        }
    }
}
