//! Reading typed CSV: [`CsvReader`], a header and then one record per entity, each a [`Record`] whether it is
//! an entity or the reason it is not.

use super::cell::{push_field, read_cell, shorten, type_of_cell};
use super::{MAX_COLUMNS, TYPE_SUFFIX};
use crate::error::TransferError;
use crate::format::{EntityReader, Position, Record, Rejected, MAX_RECORD_BYTES};
use std::collections::HashMap;
use std::io::{self, BufRead};
use std::sync::Arc;
use table_model::{DateTime, EdmBinary, EdmString, EdmType, EdmValue, Entity, PartitionKey, PropertyName, RowKey};

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
