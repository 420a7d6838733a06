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
use std::cell::RefCell;
use std::io::Write;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};
use table_model::json::{decode_query_with, EntityVisitor, SystemProperties};
use table_model::limits::ENTITY_MAX_BYTES;
use table_model::{DateTime, DecodeError, EdmValue, Entity, KeyKind};
use table_model_arrow::batch::Properties;
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

    fn write_values(&mut self, entity: &EntityValues<'_>) -> Result<(), TransferError> {
        let writer = self.writer.as_mut().expect("finish consumes the writer");
        if let Err(e) = writer.write_properties(entity.partition_key, entity.row_key, entity.timestamp, entity) {
            return Err(self.failed(e));
        }
        self.keys.wrote_keys(entity.partition_key, entity.row_key);
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

/// A query page's entities decoded into their keys, `Timestamp` and typed values, without an [`Entity`] each:
/// what [`ParquetWriter`] puts into its columns as they are ([`EntityWriter::write_values`]). The buffers are kept
/// from page to page.
///
/// ```
/// use table_model_transfer::format::parquet::ValuesPage;
/// let page = br#"{"value":[{"PartitionKey":"p","RowKey":"1","N@odata.type":"Edm.Int64","N":"5"}]}"#;
/// let mut values = ValuesPage::new();
/// values.read_page(page)?;
/// let entity = values.iter().next().unwrap();
/// assert_eq!((entity.partition_key, entity.row_key), ("p", "1"));
/// assert_eq!(entity.properties().collect::<Vec<_>>(), [("N", &table_model::EdmValue::Int64(5))]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct ValuesPage {
    /// The keys and the property names, as they are.
    names: String,
    /// Each property: where its name is in `names`, and its value.
    values: Vec<(Range<usize>, EdmValue)>,
    entities: Vec<ValuesSpans>,
    /// The size of the entity being read as the service counts it, or more (see [`ValuesPage::exact_size`]).
    size: usize,
}

#[derive(Debug, Clone)]
struct ValuesSpans {
    partition_key: Range<usize>,
    row_key: Range<usize>,
    timestamp: Option<DateTime>,
    properties: Range<usize>,
}

/// One entity of a [`ValuesPage`].
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct EntityValues<'a> {
    /// The `PartitionKey`.
    pub partition_key: &'a str,
    /// The `RowKey`.
    pub row_key: &'a str,
    /// The `Timestamp`, when the page has it.
    pub timestamp: Option<DateTime>,
    names: &'a str,
    values: &'a [(Range<usize>, EdmValue)],
}

impl<'a> EntityValues<'a> {
    /// The properties, in the page's order (each name valid and once).
    pub fn properties(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a EdmValue)> + 'a {
        let names = self.names;
        self.values.iter().map(move |(name, value)| (&names[name.clone()], value))
    }
}

/// The properties by position, for the writer's columns, without a list of them built for each entity.
impl Properties for EntityValues<'_> {
    fn len(&self) -> usize {
        self.values.len()
    }

    fn property(&self, index: usize) -> (&str, &EdmValue) {
        let (name, value) = &self.values[index];
        (&self.names[name.clone()], value)
    }

    fn value(&self, index: usize) -> &EdmValue {
        &self.values[index].1
    }
}

impl ValuesPage {
    /// No entities.
    pub fn new() -> Self {
        ValuesPage::default()
    }

    /// The number of entities.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether there is no entity.
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// The entity at `index`.
    pub fn get(&self, index: usize) -> Option<EntityValues<'_>> {
        self.entities.get(index).map(|spans| self.entity(spans))
    }

    /// Keeps the first `len` entities (all of them, when there are fewer): a page cut where a range of keys
    /// ends.
    ///
    /// ```
    /// use table_model_transfer::format::parquet::ValuesPage;
    /// let mut values = ValuesPage::new();
    /// values.read_page(br#"{"value":[{"PartitionKey":"p","RowKey":"1"},{"PartitionKey":"p","RowKey":"2"}]}"#)?;
    /// values.truncate(1);
    /// assert_eq!(values.iter().map(|e| e.row_key).collect::<Vec<_>>(), ["1"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn truncate(&mut self, len: usize) {
        self.entities.truncate(len);
    }

    /// The entities, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = EntityValues<'_>> + '_ {
        self.entities.iter().map(|spans| self.entity(spans))
    }

    fn entity(&self, spans: &ValuesSpans) -> EntityValues<'_> {
        EntityValues {
            partition_key: &self.names[spans.partition_key.clone()],
            row_key: &self.names[spans.row_key.clone()],
            timestamp: spans.timestamp,
            names: &self.names,
            values: &self.values[spans.properties.clone()],
        }
    }

    /// The size of the entity being read, as the service counts it, with a property `name` of `value` more: what
    /// `size` bounds from above.
    fn exact_size(&self, name: &str, value: &EdmValue) -> usize {
        let Some(entity) = self.entities.last() else { return 0 };
        let keys = super::keys_size(&self.names[entity.partition_key.clone()], &self.names[entity.row_key.clone()]);
        let read = self.values[entity.properties.start..].iter();
        let properties: usize = read.map(|(name, value)| super::property_size(&self.names[name.clone()], value)).sum();
        keys + properties + super::property_size(name, value)
    }

    /// Reads a query page (`{"value": [...]}`, the service's JSON at any metadata level), replacing the previous
    /// entities: the entities [`decode_query`](table_model::decode_query) (without hints) reads from it, with no
    /// [`Entity`] built.
    ///
    /// # Errors
    /// A page `decode_query` refuses, or an entity over the size the service stores (which `decode_query` refuses
    /// when it builds the [`Entity`]): decode the page with `decode_query` for its error. The entities are then
    /// unspecified.
    pub fn read_page(&mut self, page: &[u8]) -> Result<(), DecodeError> {
        self.names.clear();
        self.values.clear();
        self.entities.clear();
        // Room for what the page holds at once.
        let room = super::PageRoom::of(page.len());
        self.names.reserve(room.names);
        self.values.reserve(room.properties);
        self.entities.reserve(room.entities);
        let values = RefCell::new(self);
        decode_query_with(page, || PageEntity { values: &values }).map(drop)
    }
}

/// One entity of [`ValuesPage::read_page`]: the decoder makes one per entity (never two at a time).
struct PageEntity<'a, 'b> {
    values: &'a RefCell<&'b mut ValuesPage>,
}

impl EntityVisitor for PageEntity<'_, '_> {
    type Value = ();

    fn begin(&mut self, system: SystemProperties) -> Result<(), DecodeError> {
        // The keys are checked as the decoder's `Entity` checks them: both there.
        let partition_key = system.partition_key.ok_or_else(|| DecodeError::missing_key(KeyKind::Partition))?;
        let row_key = system.row_key.ok_or_else(|| DecodeError::missing_key(KeyKind::Row))?;
        let page = &mut **self.values.borrow_mut();
        page.size = super::keys_size(partition_key.as_str(), row_key.as_str());
        let spans = ValuesSpans {
            partition_key: push(&mut page.names, partition_key.as_str()),
            row_key: push(&mut page.names, row_key.as_str()),
            timestamp: system.timestamp,
            properties: page.values.len()..page.values.len(),
        };
        page.entities.push(spans);
        Ok(())
    }

    fn property(&mut self, name: &str, value: EdmValue) -> Result<(), DecodeError> {
        let page = &mut **self.values.borrow_mut();
        // At least the property's share of the size, without a pass over the name; the exact size only when that
        // bound is over the limit.
        page.size += super::property_size_at_most(name, &value);
        if page.size > ENTITY_MAX_BYTES && page.exact_size(name, &value) > ENTITY_MAX_BYTES {
            return Err(DecodeError::custom(format!(
                "the entity is over the {ENTITY_MAX_BYTES} bytes the service stores"
            )));
        }
        let name = push(&mut page.names, name);
        page.values.push((name, value));
        Ok(())
    }

    fn end(self) -> Result<(), DecodeError> {
        let page = &mut **self.values.borrow_mut();
        let end = page.values.len();
        page.entities.last_mut().expect("an entity was begun").properties.end = end;
        Ok(())
    }
}

/// Appends `s` to `text`; where it is.
fn push(text: &mut String, s: &str) -> Range<usize> {
    let start = text.len();
    text.push_str(s);
    start..text.len()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::csv::tests::generated::{entity, page};
    use proptest::prelude::*;

    /// The file and summary of a page written entity by entity: decoded (`write`) or as its values
    /// (`write_values`), with the columns given or inferred from the entities (the writer's sample).
    fn write(page: &[u8], schema: Option<&Inference>, values: bool) -> (Vec<u8>, WrittenFile) {
        let mut out = Vec::new();
        let mut writer = ParquetWriter::new(Sink::stream("test", &mut out), schema).unwrap();
        if values {
            let mut read = ValuesPage::new();
            read.read_page(page).unwrap();
            for entity in read.iter() {
                writer.write_values(&entity).unwrap();
            }
        } else {
            for entity in table_model::decode_query(page, None).unwrap() {
                writer.write(&entity).unwrap();
            }
        }
        let written = Box::new(writer).finish().unwrap();
        (out, written)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// A page read into values ([`ValuesPage`]) writes the file its decoded entities write, byte for byte,
        /// while the writer samples and with the columns given.
        #[test]
        fn values_make_the_file_of_the_decoded_entities(entities in proptest::collection::vec(entity(), 1..8)) {
            let page = page(&entities);
            let decoded = table_model::decode_query(&page, None).unwrap();
            let mut inference = Inference::new();
            decoded.iter().take(decoded.len() / 2 + 1).for_each(|e| inference.observe(e));
            for schema in [None, Some(&inference)] {
                let (fast, fast_file) = write(&page, schema, true);
                let (slow, slow_file) = write(&page, schema, false);
                prop_assert_eq!(fast_file, slow_file);
                prop_assert!(fast == slow, "the files differ");
            }
        }
    }

    #[test]
    fn a_page_the_decoder_refuses_is_refused() {
        use crate::format::csv::tests::{page_of_32k_strings, REFUSED_PAGES};
        let mut values = ValuesPage::new();
        for page in REFUSED_PAGES {
            let expected = table_model::decode_query(page, None).unwrap_err();
            assert_eq!(values.read_page(page).unwrap_err(), expected);
        }
        let over = page_of_32k_strings(17);
        assert!(table_model::decode_query(over.as_bytes(), None).is_err());
        assert!(values.read_page(over.as_bytes()).is_err());
        values.read_page(page_of_32k_strings(15).as_bytes()).unwrap();
        assert_eq!(values.get(0).unwrap().properties().len(), 15);
    }

    /// An entity at the size limit is read and one a character over it is refused, as the decoder does, with
    /// names of two-byte characters: their UTF-16 units are half their bytes, so near the limit the size the
    /// page bounds cheaply is over the exact one, which decides.
    #[test]
    fn an_entity_at_the_size_limit_is_read_and_one_over_it_refused() {
        let page = |last: usize| {
            let big = "x".repeat(32 * 1024);
            let mut properties: Vec<String> = (0..15).map(|i| format!(r#""Ñññññññññññ{i}":"{big}""#)).collect();
            properties.push(format!(r#""Ññññññññññññlast":"{}""#, "x".repeat(last)));
            format!(r#"{{"value":[{{"PartitionKey":"p","RowKey":"1",{}}}]}}"#, properties.join(","))
        };
        let fits = |last: usize| table_model::decode_query(page(last).as_bytes(), None).is_ok();
        // The longest last string the decoder takes: `lo` fits, `hi` does not.
        let (mut lo, mut hi) = (0, 32 * 1024);
        assert!(fits(lo) && !fits(hi));
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let mut values = ValuesPage::new();
        values.read_page(page(lo).as_bytes()).unwrap();
        assert_eq!(values.get(0).unwrap().properties().len(), 16);
        let refused = values.read_page(page(hi).as_bytes()).unwrap_err();
        assert!(refused.to_string().contains("over the 1048576 bytes"), "{refused}");
    }
}
