//! Entities as the fields of their CSV rows: [`CsvRows`], what the writer writes. An entity's cells are
//! rendered here, from a decoded [`Entity`] ([`CsvRows::push_entity`]) or straight from a query page's JSON
//! ([`CsvRows::read_page`], no `Entity` built); the writer only puts each property's fields in its column.

use super::cell::{push_field, push_value};
use std::cell::RefCell;
use std::ops::Range;
use table_model::json::{decode_query_with, EntityVisitor, SystemProperties};
use table_model::limits::ENTITY_MAX_BYTES;
use table_model::{DateTime, DecodeError, EdmValue, Entity, KeyKind};

/// Entities as the fields of their typed CSV rows, in order: for each, its keys and `Timestamp` (the first three
/// fields), then for each property its name and its two fields (the value's cell and its type), quoted as
/// RFC 4180 says. The csv writer's [`write_csv_row`](crate::format::EntityWriter::write_csv_row) puts each
/// property's fields in its column. The buffers are kept from page to page.
///
/// ```
/// use table_model_transfer::format::csv::{CsvRows, CsvWriter};
/// use table_model_transfer::format::{Compression, EntityWriter as _, Sink};
/// let page = br#"{"value":[{"PartitionKey":"p","RowKey":"1","N@odata.type":"Edm.Int64","N":"5","Name":"a, b"}]}"#;
/// let mut rows = CsvRows::new();
/// rows.read_page(page)?;
/// assert_eq!(rows.len(), 1);
/// let mut out = Vec::new();
/// let mut writer = CsvWriter::new(Sink::stream("test", &mut out), Compression::None)?;
/// for row in rows.iter() {
///     writer.write_csv_row(&row)?;
/// }
/// Box::new(writer).finish()?;
/// assert_eq!(
///     String::from_utf8(out)?,
///     "PartitionKey,RowKey,Timestamp,N,N@type,Name,Name@type\r\np,1,,5,Edm.Int64,\"a, b\",Edm.String\r\n"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct CsvRows {
    /// The fields of every row, one row after the other: its keys' and `Timestamp`'s, then each property's
    /// `,value,type`.
    fields: Vec<u8>,
    /// The keys and the property names, as they are.
    names: String,
    rows: Vec<RowSpans>,
    properties: Vec<PropertySpans>,
    /// A cell's text, before it is quoted.
    text: String,
    /// The size of the entity being read, as the service counts it (`docs/rules.md` §4.2).
    size: usize,
}

/// Where a row's parts are in [`CsvRows`].
#[derive(Debug, Clone)]
struct RowSpans {
    /// All its fields; the keys' and `Timestamp`'s first, up to `keys_end`.
    fields: Range<usize>,
    keys_end: usize,
    partition_key: Range<usize>,
    row_key: Range<usize>,
    properties: Range<usize>,
}

/// Where a property's name (in `names`) and fields (in `fields`) are.
#[derive(Debug, Clone)]
struct PropertySpans {
    name: Range<usize>,
    fields: Range<usize>,
}

/// One entity of [`CsvRows`]: its keys, and its fields for the writer.
#[derive(Debug, Clone, Copy)]
pub struct CsvRow<'a> {
    rows: &'a CsvRows,
    spans: &'a RowSpans,
}

impl<'a> CsvRow<'a> {
    /// The `PartitionKey`.
    pub fn partition_key(&self) -> &'a str {
        &self.rows.names[self.spans.partition_key.clone()]
    }

    /// The `RowKey`.
    pub fn row_key(&self) -> &'a str {
        &self.rows.names[self.spans.row_key.clone()]
    }

    /// The whole row's fields: the keys', the `Timestamp`'s, then each property's, in the entity's order.
    pub(super) fn fields(&self) -> &'a [u8] {
        &self.rows.fields[self.spans.fields.clone()]
    }

    /// The keys' and `Timestamp`'s fields.
    pub(super) fn key_fields(&self) -> &'a [u8] {
        &self.rows.fields[self.spans.fields.start..self.spans.keys_end]
    }

    /// The number of properties.
    pub(super) fn property_count(&self) -> usize {
        self.spans.properties.len()
    }

    /// The fields (`,value,type`) of the property at `position`.
    pub(super) fn property_fields(&self, position: usize) -> &'a [u8] {
        &self.rows.fields[self.rows.properties[self.spans.properties.start + position].fields.clone()]
    }

    /// Each property's name and its fields (`,value,type`), in the entity's order.
    pub(super) fn properties(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a [u8])> + 'a {
        let rows = self.rows;
        rows.properties[self.spans.properties.clone()]
            .iter()
            .map(move |p| (&rows.names[p.name.clone()], &rows.fields[p.fields.clone()]))
    }
}

impl CsvRows {
    /// No rows.
    pub fn new() -> Self {
        CsvRows::default()
    }

    /// Forgets the rows (keeping the buffers).
    pub fn clear(&mut self) {
        self.fields.clear();
        self.names.clear();
        self.rows.clear();
        self.properties.clear();
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The row at `index`.
    pub fn get(&self, index: usize) -> Option<CsvRow<'_>> {
        self.rows.get(index).map(|spans| CsvRow { rows: self, spans })
    }

    /// Keeps the first `len` rows (all of them, when there are fewer): a page cut where a range of keys ends.
    ///
    /// ```
    /// use table_model_transfer::format::csv::CsvRows;
    /// let mut rows = CsvRows::new();
    /// rows.read_page(br#"{"value":[{"PartitionKey":"p","RowKey":"1"},{"PartitionKey":"p","RowKey":"2"}]}"#)?;
    /// rows.truncate(1);
    /// assert_eq!(rows.iter().map(|r| r.row_key()).collect::<Vec<_>>(), ["1"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn truncate(&mut self, len: usize) {
        self.rows.truncate(len);
    }

    /// The rows, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = CsvRow<'_>> + '_ {
        self.rows.iter().map(|spans| CsvRow { rows: self, spans })
    }

    /// Appends an entity's row.
    pub fn push_entity(&mut self, entity: &Entity) {
        self.begin(entity.partition_key().as_str(), entity.row_key().as_str(), entity.timestamp());
        for (name, value) in entity.iter() {
            self.property(name.as_str(), value);
        }
        self.end();
    }

    /// Reads a query page (`{"value": [...]}`, the service's JSON at any metadata level) into rows, replacing
    /// the previous ones: the entities [`decode_query`](table_model::decode_query) (without hints) reads from
    /// it, each value's cells rendered as it is decoded, with no [`Entity`] built.
    ///
    /// # Errors
    /// A page `decode_query` refuses, or an entity over the size the service stores (which `decode_query` refuses
    /// when it builds the [`Entity`]): decode the page with `decode_query` for its error. The rows are then
    /// unspecified.
    pub fn read_page(&mut self, page: &[u8]) -> Result<(), DecodeError> {
        self.clear();
        // Room for what the page holds at once; the fields, the values' text, are most of its JSON.
        let room = crate::format::PageRoom::of(page.len());
        self.fields.reserve(page.len() / 3 * 2);
        self.names.reserve(room.names);
        self.properties.reserve(room.properties);
        self.rows.reserve(room.entities);
        let rows = RefCell::new(self);
        decode_query_with(page, || PageEntity { rows: &rows }).map(drop)
    }

    fn begin(&mut self, partition_key: &str, row_key: &str, timestamp: Option<DateTime>) {
        let start = self.fields.len();
        push_field(&mut self.fields, partition_key);
        self.fields.push(b',');
        push_field(&mut self.fields, row_key);
        self.fields.push(b',');
        if let Some(timestamp) = timestamp {
            push_value(&mut self.fields, &EdmValue::DateTime(timestamp), &mut self.text);
        }
        let keys_end = self.fields.len();
        self.size = crate::format::keys_size(partition_key, row_key);
        let partition_key = push(&mut self.names, partition_key);
        let row_key = push(&mut self.names, row_key);
        let properties = self.properties.len()..self.properties.len();
        self.rows.push(RowSpans { fields: start..keys_end, keys_end, partition_key, row_key, properties });
    }

    /// Appends a property of the row begun last: its name and its fields.
    fn property(&mut self, name: &str, value: &EdmValue) {
        let start = self.fields.len();
        self.fields.push(b',');
        push_value(&mut self.fields, value, &mut self.text);
        self.fields.push(b',');
        self.fields.extend_from_slice(value.edm_type().as_str().as_bytes());
        self.size += crate::format::property_size(name, value);
        let name = push(&mut self.names, name);
        self.properties.push(PropertySpans { name, fields: start..self.fields.len() });
    }

    /// Ends the row begun last.
    fn end(&mut self) {
        let row = self.rows.last_mut().expect("a row was begun");
        row.fields.end = self.fields.len();
        row.properties.end = self.properties.len();
    }
}

/// Appends `s` to `text`; where it is.
fn push(text: &mut String, s: &str) -> Range<usize> {
    let start = text.len();
    text.push_str(s);
    start..text.len()
}

/// One entity of [`CsvRows::read_page`]: the decoder makes one per entity, each writing into the rows (the
/// decoder never holds two at a time, but cannot say so to the borrow checker).
struct PageEntity<'a, 'b> {
    rows: &'a RefCell<&'b mut CsvRows>,
}

impl EntityVisitor for PageEntity<'_, '_> {
    type Value = ();

    fn begin(&mut self, system: SystemProperties) -> Result<(), DecodeError> {
        // The keys are checked as the decoder's `Entity` checks them: both there.
        let partition_key = system.partition_key.ok_or_else(|| DecodeError::missing_key(KeyKind::Partition))?;
        let row_key = system.row_key.ok_or_else(|| DecodeError::missing_key(KeyKind::Row))?;
        self.rows.borrow_mut().begin(partition_key.as_str(), row_key.as_str(), system.timestamp);
        Ok(())
    }

    fn property(&mut self, name: &str, value: EdmValue) -> Result<(), DecodeError> {
        let rows = &mut **self.rows.borrow_mut();
        rows.property(name, &value);
        if rows.size > ENTITY_MAX_BYTES {
            return Err(DecodeError::custom(format!(
                "the entity is over the {ENTITY_MAX_BYTES} bytes the service stores"
            )));
        }
        Ok(())
    }

    fn end(self) -> Result<(), DecodeError> {
        self.rows.borrow_mut().end();
        Ok(())
    }
}
