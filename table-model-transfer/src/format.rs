//! The file formats of `export`, `import` and `validate`, behind one pair of traits: an [`EntityWriter`] writes
//! entities into a file and says what it wrote ([`WrittenFile`], for the manifest); an [`EntityReader`] reads
//! [`Record`]s, each an entity or the reason its line or row is not one, with its [`Position`]. The commands never
//! look inside a format: [`create_writer`] and [`open_reader`] pick the implementation from the
//! [`FileFormat`] and [`Compression`] (given, or told by the file name: [`FileFormat::of_path`]).
//!
//! `docs/tablectl.md`, "Formats", says what each format keeps and how.
//!
//! Layer: files.

pub mod compress;
pub mod csv;
pub mod jsonl;
pub mod parquet;

use crate::error::TransferError;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use table_model::json::EncodedEntity;
use table_model::Entity;

/// A file format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FileFormat {
    /// One entity per line in the service's own JSON: lossless
    #[default]
    Jsonl,
    /// Azure Storage Explorer's typed CSV: a `<Prop>@type` column after each property
    Csv,
    /// Apache Parquet: one typed column per property
    Parquet,
}

impl FileFormat {
    /// The file name extension: `jsonl`, `csv` or `parquet`.
    pub const fn extension(self) -> &'static str {
        match self {
            FileFormat::Jsonl => "jsonl",
            FileFormat::Csv => "csv",
            FileFormat::Parquet => "parquet",
        }
    }

    /// The format and compression a file name tells: `.jsonl` (or `.ndjson`, `.json`), `.csv`, `.parquet`, each
    /// but Parquet optionally followed by `.gz` or `.zst`; `None` for any other name.
    ///
    /// ```
    /// use std::path::Path;
    /// use table_model_transfer::format::{Compression, FileFormat};
    /// assert_eq!(FileFormat::of_path(Path::new("a/People.jsonl")), Some((FileFormat::Jsonl, Compression::None)));
    /// assert_eq!(FileFormat::of_path(Path::new("People.csv.zst")), Some((FileFormat::Csv, Compression::Zstd)));
    /// assert_eq!(FileFormat::of_path(Path::new("People.parquet")), Some((FileFormat::Parquet, Compression::None)));
    /// assert_eq!(FileFormat::of_path(Path::new("People.txt")), None);
    /// ```
    pub fn of_path(path: &Path) -> Option<(FileFormat, Compression)> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let (stem, compression) = match name.rsplit_once('.')? {
            (stem, "gz") => (stem, Compression::Gzip),
            (stem, "zst") => (stem, Compression::Zstd),
            _ => (name.as_str(), Compression::None),
        };
        let format = match stem.rsplit_once('.')?.1 {
            "jsonl" | "ndjson" | "json" => FileFormat::Jsonl,
            "csv" => FileFormat::Csv,
            "parquet" if compression == Compression::None => FileFormat::Parquet,
            _ => return None,
        };
        Some((format, compression))
    }

    /// A data file's name: `People.jsonl`, `People.csv.gz`, `People.parquet`; `part` numbers the files of a split
    /// export or of a key range (`People.00003.jsonl`).
    ///
    /// ```
    /// use table_model_transfer::format::{Compression, FileFormat};
    /// assert_eq!(FileFormat::Csv.file_name("People", None, Compression::Gzip), "People.csv.gz");
    /// assert_eq!(FileFormat::Jsonl.file_name("People", Some(3), Compression::None), "People.00003.jsonl");
    /// ```
    pub fn file_name(self, table: &str, part: Option<u32>, compression: Compression) -> String {
        let part = part.map(|n| format!(".{n:05}")).unwrap_or_default();
        format!("{table}{part}.{}{}", self.extension(), compression.suffix())
    }
}

/// How a `jsonl` or `csv` file is compressed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Not compressed
    #[default]
    None,
    /// gzip (`.gz`)
    Gzip,
    /// Zstandard (`.zst`)
    Zstd,
}

impl Compression {
    /// The file name suffix: `""`, `".gz"` or `".zst"`.
    pub const fn suffix(self) -> &'static str {
        match self {
            Compression::None => "",
            Compression::Gzip => ".gz",
            Compression::Zstd => ".zst",
        }
    }
}

/// The most bytes a reader takes of one line (`jsonl`) or record (`csv`): 8 MiB. An entity is at most 1 MiB as
/// the service counts it (`docs/rules.md` §4.2), which its JSON or CSV, escaped, never makes more than a few MiB;
/// a longer line is rejected (its first [`SHOWN_BYTES`] in the reject report) without being held in memory, and
/// reading goes on after it.
pub const MAX_RECORD_BYTES: usize = 8 * 1024 * 1024;

/// How much of a line over [`MAX_RECORD_BYTES`] its reject shows.
pub const SHOWN_BYTES: usize = 1024;

/// Reads one line, through its `\n` if it has one, into `buf` (cleared first), keeping at most `limit` bytes of
/// it: the bytes of the line read, and whether it was longer than `limit` (the rest was read and dropped, so
/// memory stays bounded whatever the input).
pub(crate) fn read_line_bounded(reader: &mut dyn BufRead, buf: &mut Vec<u8>, limit: usize) -> io::Result<(u64, bool)> {
    buf.clear();
    let (mut read, mut over) = (0_u64, false);
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((read, over));
        }
        let (taken, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = limit.saturating_sub(buf.len());
        if taken > room {
            over = true;
        }
        buf.extend_from_slice(&available[..taken.min(room)]);
        reader.consume(taken);
        read += taken as u64;
        if done {
            return Ok((read, over));
        }
    }
}

/// The share of an entity's keys in its size as the service counts it (`docs/rules.md` §4.2, as
/// [`Entity::size`] counts it). For the readers of pages that build no `Entity` and refuse what `Entity` refuses.
pub(crate) fn keys_size(partition_key: &str, row_key: &str) -> usize {
    table_model::limits::entity_keys_size(partition_key, row_key)
}

/// A property's share of its entity's size (as [`keys_size`]), with its value's
/// [`stored_size`](table_model::EdmValue::stored_size).
pub(crate) fn property_size(name: &str, value: &table_model::EdmValue) -> usize {
    table_model::limits::property_size(name, value.stored_size())
}

/// At least [`property_size`], without a pass over the name
/// ([`property_size_at_most`](table_model::limits::property_size_at_most)).
pub(crate) fn property_size_at_most(name: &str, value: &table_model::EdmValue) -> usize {
    table_model::limits::property_size_at_most(name, value.stored_size())
}

/// What a query page of so many bytes typically holds, for the readers of pages that build no `Entity`
/// ([`csv::CsvRows`], [`parquet::ValuesPage`]) to make room for it at once: growing by doubling as the page is read
/// would copy what they hold, a page's worth. The keys and names are part of the JSON, about an eighth of it; a
/// property takes tens of its bytes, an entity hundreds. A large reservation that is not filled is not touched,
/// nor resident.
pub(crate) struct PageRoom {
    /// Bytes of keys and property names.
    pub names: usize,
    /// Properties.
    pub properties: usize,
    /// Entities.
    pub entities: usize,
}

impl PageRoom {
    /// The room of a page of `len` bytes.
    pub fn of(len: usize) -> PageRoom {
        PageRoom { names: len / 8, properties: len / 48, entities: len / 512 }
    }
}

/// An entity's keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Keys {
    /// The PartitionKey.
    pub partition_key: String,
    /// The RowKey.
    pub row_key: String,
}

impl Keys {
    /// An entity's keys.
    ///
    /// ```
    /// use table_model::{Entity, PartitionKey, RowKey};
    /// use table_model_transfer::format::Keys;
    /// let entity = Entity::new(PartitionKey::new("eu")?, RowKey::new("ada")?);
    /// assert_eq!(Keys::of(&entity).to_string(), "PartitionKey `eu`, RowKey `ada`");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of(entity: &Entity) -> Keys {
        Keys { partition_key: entity.partition_key().to_string(), row_key: entity.row_key().to_string() }
    }
}

/// ``PartitionKey `p`, RowKey `r` ``, for messages.
impl std::fmt::Display for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PartitionKey `{}`, RowKey `{}`", self.partition_key, self.row_key)
    }
}

/// Where a record is in its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// The input: a path, or `-` for stdin.
    pub source: Arc<str>,
    /// Its line (jsonl, csv: the record's first line) or row (parquet), from 1.
    pub line: u64,
}

/// Why a line or row is not an entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// The PartitionKey as written, when it could be read.
    pub partition_key: Option<String>,
    /// The RowKey as written, when it could be read.
    pub row_key: Option<String>,
    /// The property at fault, when one is.
    pub property: Option<String>,
    /// What is wrong: the rule broken.
    pub rule: String,
    /// The line or row as text, to fix and import again.
    pub text: String,
}

/// One line or row of an input: an entity, or why it is not one. `E` is [`Entity`] as
/// [`next_record`](EntityReader::next_record) reads it, or [`ToWrite`] as
/// [`next_to_write`](EntityReader::next_to_write) does.
#[derive(Clone, Debug)]
pub struct Record<E = Entity> {
    /// Where it is.
    pub position: Position,
    /// The entity (with the server's `Timestamp` and ETag, if the file has them, in an [`Entity`]), or why there
    /// is none.
    pub entity: Result<E, Rejected>,
}

/// An entity read to be written ([`EntityReader::next_to_write`]), without the server's `Timestamp` and ETag,
/// which the service sets on write: decoded, or its keys and the body
/// [`encode_entity`](table_model::encode_entity) writes for it, copied from its line.
#[derive(Clone, Debug, PartialEq)]
pub enum ToWrite {
    /// Decoded.
    Decoded(Entity),
    /// Its keys and body, checked as the decoder checks them.
    Encoded(table_model::EncodedEntity),
}

impl ToWrite {
    /// A decoded entity to write, without the server's `Timestamp` and ETag: the service sets both on write.
    ///
    /// ```
    /// use table_model::{ETag, Entity, PartitionKey, RowKey};
    /// use table_model_transfer::format::ToWrite;
    /// let mut read = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?);
    /// read.set_server_metadata(Some("2024-05-06T07:08:10Z".parse()?), Some(ETag::new("W/\"1\"")));
    /// let ToWrite::Decoded(entity) = ToWrite::decoded(read) else { unreachable!() };
    /// assert_eq!((entity.timestamp(), entity.etag()), (None, None));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decoded(mut entity: Entity) -> Self {
        entity.set_server_metadata(None, None);
        ToWrite::Decoded(entity)
    }

    /// The `PartitionKey`.
    pub fn partition_key(&self) -> &str {
        match self {
            ToWrite::Decoded(entity) => entity.partition_key().as_str(),
            ToWrite::Encoded(encoded) => encoded.partition_key(),
        }
    }

    /// The `RowKey`.
    pub fn row_key(&self) -> &str {
        match self {
            ToWrite::Decoded(entity) => entity.row_key().as_str(),
            ToWrite::Encoded(encoded) => encoded.row_key(),
        }
    }

    /// The entity, decoded from its body where it was not.
    ///
    /// ```
    /// use table_model::{Entity, PartitionKey, RowKey, WriteEntity as _};
    /// use table_model_transfer::format::ToWrite;
    /// let mut entity = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?);
    /// entity.insert("N".parse()?, 7_i64)?;
    /// let encoded = ToWrite::Encoded(entity.encode()?);
    /// assert_eq!(encoded.to_entity()?.as_ref(), &entity);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`DecodeError`](table_model::DecodeError) if the body does not decode, which a body the encoder wrote
    /// always does.
    pub fn to_entity(&self) -> Result<std::borrow::Cow<'_, Entity>, table_model::DecodeError> {
        match self {
            ToWrite::Decoded(entity) => Ok(std::borrow::Cow::Borrowed(entity)),
            ToWrite::Encoded(encoded) => {
                table_model::decode_entity(encoded.body().as_bytes(), None).map(std::borrow::Cow::Owned)
            }
        }
    }
}

impl table_model::WriteEntity for ToWrite {
    fn encode(&self) -> Result<table_model::EncodedEntity, table_model::EncodeError> {
        match self {
            ToWrite::Decoded(entity) => entity.encode(),
            ToWrite::Encoded(encoded) => encoded.encode(),
        }
    }

    fn keys(&self) -> Result<(table_model::PartitionKey, table_model::RowKey), table_model::EntityError> {
        match self {
            ToWrite::Decoded(entity) => table_model::WriteEntity::keys(entity),
            ToWrite::Encoded(encoded) => encoded.keys(),
        }
    }

    fn etag(&self) -> Option<&table_model::ETag> {
        None
    }
}

/// Reads the records of one input, streaming: memory does not grow with the input.
pub trait EntityReader: Send {
    /// The next record, `None` at the end.
    ///
    /// # Errors
    /// [`TransferError`] when the input cannot be read on (an I/O error, a file whose structure is broken), naming it
    /// and the position; a record that is not an entity is not an error but a [`Record`] with [`Rejected`].
    fn next_record(&mut self) -> Result<Option<Record>, TransferError>;

    /// The next record, its entity to be written ([`ToWrite`]): decoded as [`next_record`](Self::next_record)
    /// reads it, without the server's `Timestamp` and ETag. A reader of the wire format's JSON (`jsonl`) gives
    /// an entity in the forms the service writes as its keys and body instead, checked as the decoder checks
    /// it, but neither decoded nor encoded again ([`EncodedPage::read_one`](table_model::json::EncodedPage)).
    ///
    /// # Errors
    /// As [`next_record`](Self::next_record).
    fn next_to_write(&mut self) -> Result<Option<Record<ToWrite>>, TransferError> {
        Ok(self
            .next_record()?
            .map(|record| Record { position: record.position, entity: record.entity.map(ToWrite::decoded) }))
    }

    /// Bytes of the input read so far (compressed bytes for a compressed file), for progress.
    fn bytes_read(&self) -> u64;

    /// The text of the record [`next_record`](Self::next_record) returned last, for a format whose records are
    /// lines of the wire format's JSON (`jsonl`): its line, with its line end. `None` for the other formats, and
    /// for a line over [`MAX_RECORD_BYTES`], of which only the first bytes were kept.
    fn line(&self) -> Option<&[u8]> {
        None
    }
}

/// Writes entities into one file (or stdout), streaming.
pub trait EntityWriter {
    /// Writes one entity.
    ///
    /// # Errors
    /// [`TransferError`] when the entity cannot be written (it is over a limit of the format) or the file cannot.
    fn write(&mut self, entity: &Entity) -> Result<(), TransferError>;

    /// Writes one entity given as the wire format's JSON ([`EncodedPage`](table_model::json::EncodedPage)), for
    /// the writer of `jsonl`, whose lines are that JSON: the file is what [`write`](Self::write) writes for the
    /// decoded entity, byte for byte. The other formats take decoded entities only.
    ///
    /// # Errors
    /// As [`write`](Self::write); a writer of another format ([`ErrorKind::Failed`](crate::error::ErrorKind)).
    fn write_encoded(&mut self, entity: &EncodedEntity<'_>) -> Result<(), TransferError> {
        let _ = entity;
        Err(TransferError::failed("this format's writer takes decoded entities only"))
    }

    /// Writes one entity given as the fields of its CSV row ([`csv::CsvRows`], read straight from a query
    /// page), for the writer of `csv`: the file is what [`write`](Self::write) writes for the decoded entity,
    /// byte for byte. The other formats take decoded entities only.
    ///
    /// # Errors
    /// As [`write`](Self::write); a writer of another format ([`ErrorKind::Failed`](crate::error::ErrorKind)).
    fn write_csv_row(&mut self, row: &csv::CsvRow<'_>) -> Result<(), TransferError> {
        let _ = row;
        Err(TransferError::failed("this format's writer takes decoded entities only"))
    }

    /// Writes one entity given as its keys, `Timestamp` and typed values ([`parquet::ValuesPage`], read straight
    /// from a query page), for the writer of `parquet`: the file is what [`write`](Self::write) writes for the
    /// decoded entity. The other formats take decoded entities only.
    ///
    /// # Errors
    /// As [`write`](Self::write); a writer of another format ([`ErrorKind::Failed`](crate::error::ErrorKind)).
    fn write_values(&mut self, entity: &parquet::EntityValues<'_>) -> Result<(), TransferError> {
        let _ = entity;
        Err(TransferError::failed("this format's writer takes decoded entities only"))
    }

    /// Bytes written into the file so far (after compression), for `--split-size` and progress.
    fn bytes(&self) -> u64;

    /// Makes everything written so far durable (flushed and synced). `Some(length)` when the file's first
    /// `length` bytes are then a complete file of the format that can be continued after them (a resumed run
    /// truncates it there); `None` when the format cannot be continued (a resumed run starts the file again).
    ///
    /// # Errors
    /// [`TransferError`] when the file cannot be written.
    fn checkpoint(&mut self) -> Result<Option<u64>, TransferError>;

    /// Ends the file (flushed and synced) and says what it holds.
    ///
    /// # Errors
    /// [`TransferError`] when the file cannot be written.
    fn finish(self: Box<Self>) -> Result<WrittenFile, TransferError>;
}

/// What a finished file holds: for the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenFile {
    /// Entities written.
    pub entities: u64,
    /// The file's size in bytes.
    pub bytes: u64,
    /// SHA-256 of the file's bytes, lowercase hexadecimal.
    pub sha256: String,
    /// The keys of the first entity written, if any.
    pub first: Option<Keys>,
    /// The keys of the last entity written, if any.
    pub last: Option<Keys>,
}

/// Counts entities and keeps the first and last keys, for a writer's [`WrittenFile`].
#[derive(Clone, Debug, Default)]
pub struct WrittenKeys {
    /// Entities written.
    pub entities: u64,
    /// The first entity's keys.
    pub first: Option<Keys>,
    /// The last entity's keys.
    pub last: Option<Keys>,
}

impl WrittenKeys {
    /// Counts one more entity.
    pub fn wrote(&mut self, entity: &Entity) {
        self.wrote_keys(entity.partition_key().as_str(), entity.row_key().as_str());
    }

    /// Counts one more entity, given its keys.
    pub fn wrote_keys(&mut self, partition_key: &str, row_key: &str) {
        if self.first.is_none() {
            self.first = Some(Keys { partition_key: partition_key.to_owned(), row_key: row_key.to_owned() });
        }
        // The last keys' strings are reused: no allocation per entity.
        let last = self.last.get_or_insert_with(|| Keys { partition_key: String::new(), row_key: String::new() });
        last.partition_key.clear();
        last.partition_key.push_str(partition_key);
        last.row_key.clear();
        last.row_key.push_str(row_key);
        self.entities += 1;
    }

    /// The file's summary, given its size and hash.
    pub fn into_file(self, bytes: u64, sha256: String) -> WrittenFile {
        WrittenFile { entities: self.entities, bytes, sha256, first: self.first, last: self.last }
    }
}

/// Where a writer's bytes go: a file it owns (synced at checkpoints) or a stream such as stdout.
pub enum Sink<'a> {
    /// A file.
    File {
        /// Its path, for messages.
        path: PathBuf,
        /// The file, buffered.
        file: BufWriter<File>,
    },
    /// A stream, named in messages.
    Stream {
        /// Its name (`stdout`).
        name: &'static str,
        /// The stream.
        out: Box<dyn Write + 'a>,
    },
}

impl std::fmt::Debug for Sink<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sink::File { path, .. } => f.debug_tuple("File").field(path).finish(),
            Sink::Stream { name, .. } => f.debug_tuple("Stream").field(name).finish(),
        }
    }
}

/// The buffer of a file sink.
pub(crate) const FILE_BUFFER: usize = 256 * 1024;

impl<'a> Sink<'a> {
    /// Creates the file at `path` (or replaces it when `replace`).
    ///
    /// # Errors
    /// [`TransferError`]: the file exists and `replace` is false ([`InvalidInput`](crate::error::ErrorKind::InvalidInput),
    /// naming `--force`), or it cannot be created.
    pub fn create(path: &Path, replace: bool) -> Result<Sink<'a>, TransferError> {
        let mut options = OpenOptions::new();
        options.write(true);
        if replace {
            options.create(true).truncate(true);
        } else {
            options.create_new(true);
        }
        let file = options.open(path).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => {
                TransferError::invalid(format!("`{}` already exists; give --force to replace it", path.display()))
            }
            _ => TransferError::io("create", path, e),
        })?;
        Ok(Sink::File { path: path.to_owned(), file: BufWriter::with_capacity(FILE_BUFFER, file) })
    }

    /// Opens the file at `path` to continue it after its first `length` bytes (what a checkpoint said was
    /// complete); the rest is cut off.
    ///
    /// # Errors
    /// [`TransferError`] when the file cannot be opened or is shorter than `length`.
    pub fn resume(path: &Path, length: u64) -> Result<Sink<'a>, TransferError> {
        use std::io::Seek as _;
        let mut file = OpenOptions::new().write(true).open(path).map_err(|e| TransferError::io("open", path, e))?;
        let size = file.metadata().map_err(|e| TransferError::io("read", path, e))?.len();
        if size < length {
            return Err(TransferError::invalid(format!(
                "`{}` has {size} bytes, fewer than the {length} its checkpoint says were written",
                path.display()
            )));
        }
        file.set_len(length).map_err(|e| TransferError::io("truncate", path, e))?;
        file.seek(io::SeekFrom::End(0)).map_err(|e| TransferError::io("seek", path, e))?;
        Ok(Sink::File { path: path.to_owned(), file: BufWriter::with_capacity(FILE_BUFFER, file) })
    }

    /// A stream, such as stdout.
    pub fn stream(name: &'static str, out: impl Write + 'a) -> Sink<'a> {
        Sink::Stream { name, out: Box::new(out) }
    }

    /// Flushes, and syncs a file's data to disk.
    ///
    /// # Errors
    /// The I/O error.
    pub fn sync(&mut self) -> io::Result<()> {
        match self {
            Sink::File { file, .. } => {
                file.flush()?;
                file.get_ref().sync_data()
            }
            Sink::Stream { out, .. } => out.flush(),
        }
    }

    /// An error writing into the sink, naming it (a closed stream is [`ErrorKind::OutputClosed`](crate::error::ErrorKind::OutputClosed)).
    pub fn error(&self, action: &str, error: io::Error) -> TransferError {
        match self {
            Sink::File { path, .. } => TransferError::io(action, path, error),
            Sink::Stream { name, .. } => TransferError::output_closed_or(name, error),
        }
    }

    /// The file's path, `None` for a stream.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Sink::File { path, .. } => Some(path),
            Sink::Stream { .. } => None,
        }
    }
}

impl Write for Sink<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::File { file, .. } => file.write(buf),
            Sink::Stream { out, .. } => out.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Sink::File { file, .. } => file.write_all(buf),
            Sink::Stream { out, .. } => out.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::File { file, .. } => file.flush(),
            Sink::Stream { out, .. } => out.flush(),
        }
    }
}

/// What a writer needs beyond its sink. Formats read the options that concern them.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// The file format.
    pub format: FileFormat,
    /// The compression (`jsonl` and `csv`).
    pub compression: Compression,
    /// The columns of `parquet` (`--schema`); inferred from the first entities when `None`.
    pub schema: Option<table_model_arrow::infer::Inference>,
}

/// A writer of `options.format` into `sink`.
///
/// # Errors
/// [`TransferError`] ([`InvalidInput`](crate::error::ErrorKind::InvalidInput)) for a format or compression this build
/// cannot write.
pub fn create_writer<'a>(sink: Sink<'a>, options: &WriteOptions) -> Result<Box<dyn EntityWriter + 'a>, TransferError> {
    match (options.format, options.compression) {
        (FileFormat::Parquet, Compression::None) => {
            Ok(Box::new(parquet::ParquetWriter::new(sink, options.schema.as_ref())?))
        }
        (FileFormat::Jsonl, compression) => Ok(Box::new(jsonl::JsonlWriter::with_compression(sink, compression))),
        (FileFormat::Csv, compression) => Ok(Box::new(csv::CsvWriter::new(sink, compression)?)),
        (format, compression) => Err(TransferError::invalid(format!(
            "writing {} with compression {compression:?} is not supported yet",
            format.extension()
        ))),
    }
}

/// The format and compression [`open_reader`] reads `path` in: `format` when given, else the one its name tells
/// ([`FileFormat::of_path`]), else the one its first bytes tell ([`sniff`]). Stdin (`-`) is told by its first
/// bytes when it is opened; here it is uncompressed `jsonl`.
///
/// ```
/// use std::path::Path;
/// use table_model_transfer::format::{format_of, Compression, FileFormat};
/// assert_eq!(format_of(Path::new("a.csv.gz"), None)?, (FileFormat::Csv, Compression::Gzip));
/// assert_eq!(format_of(Path::new("-"), None)?, (FileFormat::Jsonl, Compression::None));
/// assert_eq!(format_of(Path::new("a.txt"), Some((FileFormat::Csv, Compression::None)))?.0, FileFormat::Csv);
/// # Ok::<(), table_model_transfer::error::TransferError>(())
/// ```
///
/// # Errors
/// [`TransferError`]: a file whose name tells no format that cannot be read, or whose content is of no format
/// this engine reads ([`InvalidInput`](crate::error::ErrorKind::InvalidInput), naming the formats it reads).
pub fn format_of(
    path: &Path,
    format: Option<(FileFormat, Compression)>,
) -> Result<(FileFormat, Compression), TransferError> {
    if let Some(format) = format.or_else(|| FileFormat::of_path(path)) {
        return Ok(format);
    }
    if path.as_os_str() == "-" {
        return Ok(Default::default());
    }
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    File::open(path)
        .and_then(|file| io::Read::read_to_end(&mut io::Read::take(file, SNIFF_BYTES as u64), &mut head))
        .map_err(|e| TransferError::io("read", path, e))?;
    sniff(&head).ok_or_else(|| unknown_format(&path.display().to_string()))
}

/// How many bytes of an input [`sniff`] looks at.
const SNIFF_BYTES: usize = 8 * 1024;

/// The format and compression an input's first bytes tell: Parquet's magic `PAR1`; gzip's `1f 8b` or zstd's
/// `28 b5 2f fd`, then what the decompressed bytes tell; a JSON object (`{`) is `jsonl`, a first line with a
/// `PartitionKey` column is `csv`. An empty input is `jsonl` (it holds no record). `None` for anything else.
///
/// ```
/// use table_model_transfer::format::{sniff, Compression, FileFormat};
/// assert_eq!(sniff(b"{\"PartitionKey\":\"p\"}\n"), Some((FileFormat::Jsonl, Compression::None)));
/// assert_eq!(sniff(b"PartitionKey,RowKey,Age,Age@type\n"), Some((FileFormat::Csv, Compression::None)));
/// assert_eq!(sniff(b"PAR1\x15\x04"), Some((FileFormat::Parquet, Compression::None)));
/// assert_eq!(sniff(b"hello, world\n"), None);
/// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
/// std::io::Write::write_all(&mut gz, b"\"PartitionKey\",\"RowKey\"\n")?;
/// assert_eq!(sniff(&gz.finish()?), Some((FileFormat::Csv, Compression::Gzip)));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn sniff(head: &[u8]) -> Option<(FileFormat, Compression)> {
    if head.starts_with(b"PAR1") {
        return Some((FileFormat::Parquet, Compression::None));
    }
    let (compression, text) = if head.starts_with(&[0x1f, 0x8b]) {
        (Compression::Gzip, decompressed_head(flate2::read::MultiGzDecoder::new(head)))
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        (Compression::Zstd, decompressed_head(zstd::stream::read::Decoder::new(head).ok()?))
    } else {
        (Compression::None, head.to_vec())
    };
    let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&text);
    let start = text.iter().position(|b| !b.is_ascii_whitespace());
    let format = match start.map(|i| text[i]) {
        None | Some(b'{') => FileFormat::Jsonl,
        Some(_) => {
            let header = text.split(|&b| b == b'\n').next().unwrap_or_default();
            let partition_key = |field: &[u8]| {
                let field = field.trim_ascii();
                field == b"PartitionKey" || field == b"\"PartitionKey\""
            };
            if !header.split(|&b| b == b',').any(partition_key) {
                return None;
            }
            FileFormat::Csv
        }
    };
    Some((format, compression))
}

/// What a decompressor gives of a stream's first bytes (a cut stream ends in an error, after what it gave).
fn decompressed_head(mut reader: impl io::Read) -> Vec<u8> {
    let mut out = vec![0; SNIFF_BYTES];
    let mut filled = 0;
    while filled < out.len() {
        match reader.read(&mut out[filled..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    out.truncate(filled);
    out
}

/// The error of an input of no format the engine reads.
fn unknown_format(source: &str) -> TransferError {
    TransferError::invalid(format!(
        "cannot tell the format of `{source}`: its name ends in none of .jsonl, .csv, .parquet (optionally .gz or \
         .zst for the first two) and its content is none of JSON lines, CSV with a PartitionKey column, or Parquet, \
         compressed or not; give --format"
    ))
}

/// A reader of `path` (`-` for stdin), in `format` or, when `None`, the format [`format_of`] tells (for stdin,
/// its first bytes).
///
/// # Errors
/// [`TransferError`] when the file cannot be opened, or its format is not supported or cannot be told.
pub fn open_reader(
    path: &Path,
    format: Option<(FileFormat, Compression)>,
) -> Result<Box<dyn EntityReader>, TransferError> {
    open(path, format, false)
}

/// [`open_reader`] of a file whose records are read for their keys only: JSON lines skip every other member
/// ([`jsonl::read_keys_line`]); the other formats read whole entities. For merges of key sets in files this
/// crate wrote (a backup's, checked against its manifest's digests first).
pub(crate) fn open_keys_reader(path: &Path) -> Result<Box<dyn EntityReader>, TransferError> {
    open(path, None, true)
}

fn open(
    path: &Path,
    format: Option<(FileFormat, Compression)>,
    keys_only: bool,
) -> Result<Box<dyn EntityReader>, TransferError> {
    let stdin = path.as_os_str() == "-";
    let format_given = format;
    let (format, compression) = if stdin { format.unwrap_or_default() } else { format_of(path, format)? };
    if format == FileFormat::Parquet {
        // Read from its footer, at the end: a file, not a stream.
        if stdin {
            return Err(TransferError::invalid("Parquet is read from a file, not from stdin"));
        }
        return Ok(Box::new(parquet::ParquetReader::open(path)?));
    }
    let (source, mut input): (Arc<str>, Box<dyn io::BufRead + Send>) = if stdin {
        ("-".into(), Box::new(BufReader::with_capacity(FILE_BUFFER, io::stdin())))
    } else {
        let file = File::open(path).map_err(|e| TransferError::io("read", path, e))?;
        (path.display().to_string().into(), Box::new(BufReader::with_capacity(FILE_BUFFER, file)))
    };
    let given = format_given.or((!stdin).then_some((format, compression)));
    let (format, compression) = match told_or_sniffed(given, &mut input, &source)? {
        (FileFormat::Parquet, _) => return Err(TransferError::invalid("Parquet is read from a file, not from stdin")),
        told => told,
    };
    let (input, count) = compress::decompressed(input, compression)
        .map_err(|e| TransferError::failed(format!("cannot read `{source}`: {e}")))?;
    let reader: Box<dyn EntityReader> = match format {
        FileFormat::Jsonl if keys_only => Box::new(jsonl::JsonlReader::new(source, input).keys_only()),
        FileFormat::Jsonl => Box::new(jsonl::JsonlReader::new(source, input)),
        _ => Box::new(csv::CsvReader::new(source, input)),
    };
    Ok(match count {
        Some(count) => Box::new(CountedReader { inner: reader, count }),
        None => reader,
    })
}

/// The format of an input: as given (or told by a file's name or content), else (stdin without `--format`) told
/// by its first bytes, peeked.
fn told_or_sniffed(
    given: Option<(FileFormat, Compression)>,
    input: &mut Box<dyn io::BufRead + Send>,
    source: &str,
) -> Result<(FileFormat, Compression), TransferError> {
    if let Some(given) = given {
        return Ok(given);
    }
    let head = input.fill_buf().map_err(|e| TransferError::failed(format!("cannot read `{source}`: {e}")))?;
    sniff(head).ok_or_else(|| unknown_format(source))
}

/// A reader of a compressed input, whose progress is the compressed bytes read.
struct CountedReader {
    inner: Box<dyn EntityReader>,
    count: Arc<std::sync::atomic::AtomicU64>,
}

impl EntityReader for CountedReader {
    fn next_record(&mut self) -> Result<Option<Record>, TransferError> {
        self.inner.next_record()
    }

    fn bytes_read(&self) -> u64 {
        self.count.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn line(&self) -> Option<&[u8]> {
        self.inner.line()
    }
}
