//! Entities to Arrow record batches and back: [`BatchBuilder`] appends entities to a batch of at most so many
//! rows, or the entities of a query page's JSON straight from the JSON ([`BatchBuilder::push_page`], no
//! [`Entity`] made); [`entities`] reads a batch's rows back into entities.
//!
//! A value goes into its property's column when [`ColumnKind::accepts`] it, and also into the row's overflow
//! column when the column does not [keep](ColumnKind::keeps) it exactly (a DateTime's 100 ns digit, an Int32 in
//! a wide or text column); every other one (another EDM type, a property outside the schema, a DateTime outside
//! a nanosecond column's range, a `Timestamp` the schema has no column for) goes into the overflow column alone,
//! as the service's JSON. Nothing is dropped; reading back merges the overflow into the entity, bit for bit (an
//! overflow value replaces the column's when the column shows it; when the column shows another value, as after
//! an edit of the column alone, the column's is taken). Properties come back in the schema's column order, then the
//! overflow's: an entity's properties have no order the service keeps.
//!
//! ```
//! use std::sync::Arc;
//! use table_model::{Entity, PartitionKey, RowKey};
//! use table_model_arrow::batch::{entities, BatchBuilder, EntitySchema};
//! use table_model_arrow::infer::Inference;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ada = Entity::new(PartitionKey::new("p")?, RowKey::new("1")?).with("Age".parse()?, 36)?;
//! let bob = Entity::new(PartitionKey::new("p")?, RowKey::new("2")?).with("Age".parse()?, "unknown")?;
//! let mut inference = Inference::new();
//! inference.observe(&ada);
//! let schema = Arc::new(EntitySchema::new(Arc::new(inference.to_schema()?))?);
//! let mut builder = BatchBuilder::new(schema.clone());
//! builder.push(&ada)?;
//! builder.push(&bob)?; // "unknown" is no Int32: it goes to the overflow column
//! let batch = builder.finish()?;
//! assert_eq!(batch.num_rows(), 2);
//! assert_eq!(entities(&batch, &schema)?, [ada, bob]);
//! # Ok(())
//! # }
//! ```
//!
//! Layer: entities.

use crate::error::{Error, ErrorKind};
use crate::mapping::{self, ColumnKind, OVERFLOW_COLUMN, OVERFLOW_KEY, PARTITION_KEY, ROW_KEY, TIMESTAMP};
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, FixedSizeBinaryBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder, TimestampNanosecondBuilder,
};
use arrow_array::cast::AsArray as _;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, TimestampMicrosecondType, TimestampNanosecondType};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, SchemaRef};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;
use table_model::json::{decode_entity_with, decode_query_with, BodyWriter, EntityVisitor, SystemProperties};
use table_model::KeyKind;
use table_model::{DateTime, DecodeError, EdmBinary, EdmString, EdmValue, Entity, PartitionKey, PropertyName, RowKey};
use uuid::Uuid;

/// An Arrow schema read as entities: which column holds the keys, the `Timestamp`, each property (with its
/// [`ColumnKind`]) and the overflow.
#[derive(Clone, Debug)]
pub struct EntitySchema {
    schema: SchemaRef,
    partition_key: usize,
    row_key: usize,
    timestamp: Option<(usize, ColumnKind)>,
    overflow: Option<usize>,
    /// The property columns: index in the schema, name, kind.
    properties: Vec<(usize, PropertyName, ColumnKind)>,
    by_name: HashMap<String, usize>,
}

impl EntitySchema {
    /// Reads a schema: `PartitionKey` and `RowKey` must be `Utf8` columns; `Timestamp`, if any, a DateTime
    /// column; the overflow column is the `Utf8` column with [`OVERFLOW_KEY`] in its metadata, or named
    /// [`OVERFLOW_COLUMN`]; every other column is a property, of the kind [`ColumnKind::of_field`] says.
    ///
    /// # Errors
    /// [`ErrorKind::Schema`]: a key column missing or not `Utf8`, a column that is not a property name or holds no
    /// EDM type, a column twice.
    pub fn new(schema: SchemaRef) -> Result<Self, Error> {
        let (mut partition_key, mut row_key, mut timestamp, mut overflow) = (None, None, None, None);
        let mut properties = Vec::new();
        let mut by_name = HashMap::new();
        for (i, field) in schema.fields().iter().enumerate() {
            let name = field.name().as_str();
            if by_name.insert(name.to_owned(), i).is_some() {
                return Err(Error::schema(format!("column `{name}` appears twice")));
            }
            let is_overflow = field.metadata().contains_key(OVERFLOW_KEY) || name == OVERFLOW_COLUMN;
            if is_overflow {
                if field.data_type() != &DataType::Utf8 {
                    return Err(Error::schema(format!("the overflow column `{name}` must be Utf8")));
                }
                if overflow.replace(i).is_some() {
                    return Err(Error::schema("more than one overflow column"));
                }
                continue;
            }
            let kind = ColumnKind::of_field(field)?;
            match name {
                PARTITION_KEY | ROW_KEY if kind != ColumnKind::String => {
                    return Err(Error::schema(format!("column `{name}` must be Utf8, found {}", field.data_type())));
                }
                PARTITION_KEY => partition_key = Some(i),
                ROW_KEY => row_key = Some(i),
                TIMESTAMP if kind.edm_type() != table_model::EdmType::DateTime => {
                    return Err(Error::schema(format!(
                        "column `{TIMESTAMP}` must hold Edm.DateTime, found {}",
                        field.data_type()
                    )));
                }
                TIMESTAMP => timestamp = Some((i, kind)),
                _ => {
                    let property = name
                        .parse::<PropertyName>()
                        .map_err(|e| Error::schema(format!("column `{name}` is not a property: {e}")))?;
                    properties.push((i, property, kind));
                }
            }
        }
        let missing = |key: &str| Error::schema(format!("there is no `{key}` column"));
        let partition_key = partition_key.ok_or_else(|| missing(PARTITION_KEY))?;
        let row_key = row_key.ok_or_else(|| missing(ROW_KEY))?;
        let by_name = properties.iter().enumerate().map(|(p, (_, name, _))| (name.to_string(), p)).collect();
        Ok(EntitySchema { schema, partition_key, row_key, timestamp, overflow, properties, by_name })
    }

    /// The Arrow schema.
    pub fn arrow(&self) -> &SchemaRef {
        &self.schema
    }

    /// Whether the schema has an overflow column (a schema this crate wrote always has one).
    pub fn has_overflow(&self) -> bool {
        self.overflow.is_some()
    }
}

/// A column being built.
#[derive(Debug)]
enum ColumnBuilder {
    String(StringBuilder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Double(Float64Builder),
    Boolean(BooleanBuilder),
    Binary(BinaryBuilder),
    Guid(FixedSizeBinaryBuilder),
    Micros(TimestampMicrosecondBuilder),
    Nanos(TimestampNanosecondBuilder),
}

impl ColumnBuilder {
    fn new(kind: ColumnKind, capacity: usize) -> Self {
        match kind {
            ColumnKind::String | ColumnKind::Text => {
                ColumnBuilder::String(StringBuilder::with_capacity(capacity, capacity * 16))
            }
            ColumnKind::Int32 => ColumnBuilder::Int32(Int32Builder::with_capacity(capacity)),
            ColumnKind::Int64 | ColumnKind::WideInt64 | ColumnKind::DateTimeTicks => {
                ColumnBuilder::Int64(Int64Builder::with_capacity(capacity))
            }
            ColumnKind::Double | ColumnKind::WideDouble => {
                ColumnBuilder::Double(Float64Builder::with_capacity(capacity))
            }
            ColumnKind::Boolean => ColumnBuilder::Boolean(BooleanBuilder::with_capacity(capacity)),
            ColumnKind::Binary => ColumnBuilder::Binary(BinaryBuilder::with_capacity(capacity, capacity * 16)),
            ColumnKind::Guid => ColumnBuilder::Guid(FixedSizeBinaryBuilder::with_capacity(capacity, 16)),
            ColumnKind::DateTime => {
                ColumnBuilder::Micros(TimestampMicrosecondBuilder::with_capacity(capacity).with_timezone("UTC"))
            }
            ColumnKind::DateTimeNanos => {
                ColumnBuilder::Nanos(TimestampNanosecondBuilder::with_capacity(capacity).with_timezone("UTC"))
            }
        }
    }

    /// Appends a value the column [accepts](ColumnKind::accepts) as the column shows it, or a null; returns the
    /// bytes it adds.
    fn append(&mut self, value: Option<&EdmValue>) -> usize {
        match (self, value) {
            (ColumnBuilder::String(b), Some(EdmValue::String(s))) => {
                b.append_value(s.as_str());
                s.len() + 4
            }
            (ColumnBuilder::String(b), Some(other)) => {
                // A text column's value of another type.
                let text = mapping::value_text(other);
                b.append_value(&text);
                text.len() + 4
            }
            (ColumnBuilder::String(b), None) => {
                b.append_null();
                4
            }
            (ColumnBuilder::Int32(b), Some(EdmValue::Int32(v))) => {
                b.append_value(*v);
                4
            }
            (ColumnBuilder::Int32(b), _) => {
                b.append_null();
                4
            }
            (ColumnBuilder::Int64(b), Some(EdmValue::Int64(v))) => {
                b.append_value(*v);
                8
            }
            (ColumnBuilder::Int64(b), Some(EdmValue::Int32(v))) => {
                b.append_value(i64::from(*v));
                8
            }
            (ColumnBuilder::Int64(b), Some(EdmValue::DateTime(dt))) => {
                b.append_value(dt.ticks());
                8
            }
            (ColumnBuilder::Int64(b), _) => {
                b.append_null();
                8
            }
            (ColumnBuilder::Double(b), Some(EdmValue::Double(v))) => {
                b.append_value(*v);
                8
            }
            (ColumnBuilder::Double(b), Some(EdmValue::Int32(v))) => {
                b.append_value(f64::from(*v));
                8
            }
            (ColumnBuilder::Double(b), _) => {
                b.append_null();
                8
            }
            (ColumnBuilder::Boolean(b), Some(EdmValue::Boolean(v))) => {
                b.append_value(*v);
                1
            }
            (ColumnBuilder::Boolean(b), _) => {
                b.append_null();
                1
            }
            (ColumnBuilder::Binary(b), Some(EdmValue::Binary(v))) => {
                b.append_value(v.as_bytes());
                v.len() + 4
            }
            (ColumnBuilder::Binary(b), _) => {
                b.append_null();
                4
            }
            (ColumnBuilder::Guid(b), Some(EdmValue::Guid(v))) => {
                b.append_value(v.as_bytes()).expect("a UUID is 16 bytes, the column's width");
                16
            }
            (ColumnBuilder::Guid(b), _) => {
                b.append_null();
                16
            }
            (ColumnBuilder::Micros(b), Some(EdmValue::DateTime(dt))) => {
                b.append_value(mapping::timestamp_micros(*dt));
                8
            }
            (ColumnBuilder::Micros(b), _) => {
                b.append_null();
                8
            }
            (ColumnBuilder::Nanos(b), Some(EdmValue::DateTime(dt))) => {
                b.append_option(mapping::timestamp_nanos(*dt));
                8
            }
            (ColumnBuilder::Nanos(b), _) => {
                b.append_null();
                8
            }
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::String(b) => Arc::new(b.finish()),
            ColumnBuilder::Int32(b) => Arc::new(b.finish()),
            ColumnBuilder::Int64(b) => Arc::new(b.finish()),
            ColumnBuilder::Double(b) => Arc::new(b.finish()),
            ColumnBuilder::Boolean(b) => Arc::new(b.finish()),
            ColumnBuilder::Binary(b) => Arc::new(b.finish()),
            ColumnBuilder::Guid(b) => Arc::new(b.finish()),
            ColumnBuilder::Micros(b) => Arc::new(b.finish()),
            ColumnBuilder::Nanos(b) => Arc::new(b.finish()),
        }
    }
}

/// Builds a record batch of entities, row by row, for an [`EntitySchema`] with an overflow column.
///
/// [`push`](BatchBuilder::push) entities, or [`push_page`](BatchBuilder::push_page) the JSON of a query page
/// (decoded straight into the columns, without an [`Entity`]), as many as a batch should hold (see
/// [`rows`](BatchBuilder::rows) and [`bytes`](BatchBuilder::bytes)), then [`finish`](BatchBuilder::finish) it;
/// the builder is then empty, ready for the next batch.
#[derive(Debug)]
pub struct BatchBuilder {
    schema: Arc<EntitySchema>,
    partition_key: StringBuilder,
    row_key: StringBuilder,
    timestamp: Option<ColumnBuilder>,
    properties: Vec<ColumnBuilder>,
    overflow: StringBuilder,
    rows: usize,
    bytes: usize,
    /// Per property column, where [`push`](BatchBuilder::push)'s entity has its value (reused).
    slots: Vec<Option<usize>>,
    /// The column of the n-th property of the last entity, the guess for the n-th of the next one: entities of
    /// a table mostly list their properties in the same order, so most names are found with one comparison.
    order: Vec<usize>,
    /// As `order`, for the n-th member name of a page's entity (`null`s included), which the decoder asks about
    /// before it types the values.
    member_order: Vec<usize>,
    /// The entity [`push_page`](BatchBuilder::push_page) is decoding.
    row: RowValues,
}

/// The values of the entity being decoded, held until its last property is read, so that an entity the
/// decoder refuses halfway appends nothing.
#[derive(Debug, Default)]
struct RowValues {
    keys: Option<(PartitionKey, RowKey)>,
    timestamp: Option<DateTime>,
    /// Per property column, the entity's value.
    values: Vec<Option<EdmValue>>,
    /// The values that fit no column, as the service's JSON.
    overflow: Option<BodyWriter>,
    /// How many properties of the entity were read.
    read: usize,
    /// Why the entity cannot be a row (not a decoding error: the schema has no overflow column).
    refused: Option<Error>,
}

/// No column is guessed for this position yet.
const NO_GUESS: usize = usize::MAX;

impl BatchBuilder {
    /// An empty batch of this schema. A schema of [`Inference::to_schema`](crate::infer::Inference::to_schema)
    /// has the overflow column; without one, what does not fit its column has nowhere to go, and
    /// [`push`](BatchBuilder::push) refuses such an entity.
    pub fn new(schema: Arc<EntitySchema>) -> Self {
        let columns = schema.properties.len();
        BatchBuilder {
            partition_key: StringBuilder::new(),
            row_key: StringBuilder::new(),
            timestamp: schema.timestamp.map(|(_, kind)| ColumnBuilder::new(kind, 0)),
            properties: schema.properties.iter().map(|&(_, _, kind)| ColumnBuilder::new(kind, 0)).collect(),
            overflow: StringBuilder::new(),
            rows: 0,
            bytes: 0,
            slots: vec![None; columns],
            order: Vec::new(),
            member_order: Vec::new(),
            row: RowValues { values: std::iter::repeat_with(|| None).take(columns).collect(), ..RowValues::default() },
            schema,
        }
    }

    /// The schema.
    pub fn schema(&self) -> &Arc<EntitySchema> {
        &self.schema
    }

    /// The rows in the batch so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// About how many bytes the batch's columns hold so far (values and offsets; what bounds a batch in memory).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Appends an entity as a row.
    ///
    /// # Errors
    /// [`ErrorKind::Schema`] when the schema has no overflow column and a value does not fit its column;
    /// [`ErrorKind::Encode`] when the overflow JSON cannot be written (never for a valid entity). Nothing is
    /// appended then.
    pub fn push(&mut self, entity: &Entity) -> Result<(), Error> {
        self.slots.iter_mut().for_each(|slot| *slot = None);
        let mut overflow: Option<BodyWriter> = None;
        let values: Vec<(&PropertyName, &EdmValue)> = entity.iter().collect();
        for (i, &(name, value)) in values.iter().enumerate() {
            let kind = match column(&self.schema, &mut self.order, i, name.as_str()) {
                Some(p) if self.schema.properties[p].2.accepts(value) => {
                    self.slots[p] = Some(i);
                    Some(self.schema.properties[p].2)
                }
                _ => None,
            };
            if !kind.is_some_and(|kind| kind.keeps(value)) {
                overflow.get_or_insert_with(|| BodyWriter::new("", "")).property(name, value);
            }
        }
        let (pk, rk) = (entity.partition_key().as_str(), entity.row_key().as_str());
        let (timestamp, overflow) = self.overflow(overflow, entity.timestamp(), pk, rk)?;
        let slots = std::mem::take(&mut self.slots);
        self.append(pk, rk, timestamp, overflow, slots.iter().map(|slot| slot.map(|i| values[i].1)));
        self.slots = slots;
        Ok(())
    }

    /// Appends the entities of a query page, the service's JSON (`{"value": [...]}`, as
    /// [`response::RawPage`](table_model::response::RawPage) holds it) at any metadata level but `nometadata`
    /// (whose Int64, Guid, DateTime and Binary values have no annotation and would read as strings), as rows.
    /// Each value goes straight from the JSON into its column, without an [`Entity`]; the decoder checks every
    /// rule [`decode_query`](table_model::json::decode_query) checks. Returns the number of rows appended.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::cast::AsArray as _;
    /// use arrow_array::types::Int64Type;
    /// use arrow_array::Array as _;
    /// use arrow_schema::{DataType, Field, Schema};
    /// use table_model_arrow::batch::{BatchBuilder, EntitySchema};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let schema = Schema::new(vec![
    ///     Field::new("PartitionKey", DataType::Utf8, false),
    ///     Field::new("RowKey", DataType::Utf8, false),
    ///     Field::new("Total", DataType::Int64, true),
    /// ]);
    /// let mut builder = BatchBuilder::new(Arc::new(EntitySchema::new(Arc::new(schema))?));
    /// let page = br#"{"value":[
    ///     {"PartitionKey":"p","RowKey":"1","Total@odata.type":"Edm.Int64","Total":"9007199254740993"},
    ///     {"PartitionKey":"p","RowKey":"2"}
    /// ]}"#;
    /// assert_eq!(builder.push_page(page)?, 2);
    /// let batch = builder.finish()?;
    /// let total = batch.column(2).as_primitive::<Int64Type>();
    /// assert_eq!((total.value(0), total.is_null(1)), (9_007_199_254_740_993, true));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Decode`] for a page the service's decoder refuses (invalid JSON, a broken rule), naming the
    /// entity's index in the page and the property; [`ErrorKind::Schema`] for an entity with a value that fits
    /// no column when the schema has no overflow column. The rows of the entities before the one that failed
    /// are appended, the failing entity's and those after it are not.
    pub fn push_page(&mut self, json: &[u8]) -> Result<usize, Error> {
        let builder = RefCell::new(self);
        let decoded = decode_query_with(json, || PageEntity { builder: &builder, members: Cell::new(0) });
        let this = builder.into_inner();
        match decoded {
            Ok(rows) => Ok(rows.len()),
            Err(e) => Err(match this.row.refused.take() {
                Some(refused) => refused,
                None => Error::new(ErrorKind::Decode(e)),
            }),
        }
    }

    /// The row's `Timestamp` when its column shows it, and the row's overflow JSON: the values their columns do
    /// not keep, and a `Timestamp` that its column does not keep or that has no column.
    fn overflow(
        &self,
        writer: Option<BodyWriter>,
        timestamp: Option<DateTime>,
        partition_key: &str,
        row_key: &str,
    ) -> Result<(Option<DateTime>, Option<String>), Error> {
        let (timestamp_shown, timestamp_kept) = match (&self.schema.timestamp, timestamp) {
            (_, None) => (true, true),
            (Some((_, kind)), Some(dt)) => (kind.accepts(&EdmValue::DateTime(dt)), kind.keeps(&EdmValue::DateTime(dt))),
            (None, Some(_)) => (false, false),
        };
        if writer.is_none() && timestamp_kept {
            return Ok((timestamp, None));
        }
        if self.schema.overflow.is_none() {
            return Err(Error::schema(format!(
                "entity ({partition_key}, {row_key}) has values that fit no column, and the schema has no overflow \
                 column"
            )));
        }
        let body = writer.unwrap_or_else(|| BodyWriter::new("", "")).finish();
        let body = body.map_err(|e| Error::new(ErrorKind::Encode(e)))?;
        let json = overflow_json(body.as_str(), (!timestamp_kept).then_some(timestamp).flatten());
        Ok((timestamp.filter(|_| timestamp_shown), Some(json)))
    }

    /// Appends a row: its keys, the `Timestamp` its column holds, the value of each property column in the
    /// schema's order, and the overflow. Nothing fails here.
    fn append<'v>(
        &mut self,
        partition_key: &str,
        row_key: &str,
        timestamp: Option<DateTime>,
        overflow: Option<String>,
        values: impl Iterator<Item = Option<&'v EdmValue>>,
    ) {
        self.partition_key.append_value(partition_key);
        self.row_key.append_value(row_key);
        self.bytes += partition_key.len() + row_key.len() + 8;
        if let Some(builder) = &mut self.timestamp {
            self.bytes += builder.append(timestamp.map(EdmValue::DateTime).as_ref());
        }
        for (builder, value) in self.properties.iter_mut().zip(values) {
            self.bytes += builder.append(value);
        }
        match &overflow {
            Some(json) => {
                self.overflow.append_value(json);
                self.bytes += json.len() + 4;
            }
            None => self.overflow.append_null(),
        }
        self.rows += 1;
    }

    /// The batch of the rows pushed so far; the builder is empty again.
    ///
    /// # Errors
    /// [`ErrorKind::Arrow`] if Arrow refuses the columns (never for columns this builder made).
    pub fn finish(&mut self) -> Result<RecordBatch, Error> {
        let mut columns: Vec<Option<ArrayRef>> = vec![None; self.schema.schema.fields().len()];
        columns[self.schema.partition_key] = Some(Arc::new(self.partition_key.finish()));
        columns[self.schema.row_key] = Some(Arc::new(self.row_key.finish()));
        if let (Some((i, _)), Some(builder)) = (self.schema.timestamp, &mut self.timestamp) {
            columns[i] = Some(builder.finish());
        }
        for ((i, _, _), builder) in self.schema.properties.iter().zip(&mut self.properties) {
            columns[*i] = Some(builder.finish());
        }
        let overflow = self.overflow.finish();
        if let Some(i) = self.schema.overflow {
            columns[i] = Some(Arc::new(overflow));
        }
        self.rows = 0;
        self.bytes = 0;
        let columns = columns.into_iter().map(|c| c.expect("every column of the schema is built")).collect();
        Ok(RecordBatch::try_new(self.schema.schema.clone(), columns)?)
    }
}

/// The property column named `name`, the `position`-th property of its entity: the column the same position
/// had last time when the name is its, else a hash lookup, which becomes the guess.
fn column(schema: &EntitySchema, order: &mut Vec<usize>, position: usize, name: &str) -> Option<usize> {
    if let Some(&p) = order.get(position) {
        if p != NO_GUESS && schema.properties[p].1.as_str() == name {
            return Some(p);
        }
    }
    let found = schema.by_name.get(name).copied();
    // Guesses for as many positions as an entity has properties: the members of a hostile page (`null`s do not
    // count towards the limit) are looked up without growing the table.
    if position <= table_model::limits::MAX_CUSTOM_PROPERTIES {
        if order.len() <= position {
            order.resize(position + 1, NO_GUESS);
        }
        order[position] = found.unwrap_or(NO_GUESS);
    }
    found
}

/// One entity of [`BatchBuilder::push_page`]: the decoder makes one per entity, and each writes into the
/// builder's [`RowValues`] (the decoder never holds two at a time, but cannot say so to the borrow checker).
struct PageEntity<'a, 'b> {
    builder: &'a RefCell<&'b mut BatchBuilder>,
    /// How many member names the decoder asked about.
    members: Cell<usize>,
}

impl EntityVisitor for PageEntity<'_, '_> {
    type Value = ();

    fn is_known_property(&self, property: &str) -> bool {
        // A column's name was checked when the schema was read.
        let position = self.members.replace(self.members.get() + 1);
        let builder = &mut **self.builder.borrow_mut();
        column(&builder.schema, &mut builder.member_order, position, property).is_some()
    }

    fn begin(&mut self, system: SystemProperties) -> Result<(), DecodeError> {
        let builder = &mut **self.builder.borrow_mut();
        let row = &mut builder.row;
        let partition_key = system.partition_key.ok_or_else(|| DecodeError::missing_key(KeyKind::Partition))?;
        let row_key = system.row_key.ok_or_else(|| DecodeError::missing_key(KeyKind::Row))?;
        row.keys = Some((partition_key, row_key));
        row.timestamp = system.timestamp;
        row.values.iter_mut().for_each(|value| *value = None);
        row.overflow = None;
        row.read = 0;
        Ok(())
    }

    fn property(&mut self, name: &str, value: EdmValue) -> Result<(), DecodeError> {
        let builder = &mut **self.builder.borrow_mut();
        let position = builder.row.read;
        builder.row.read += 1;
        match column(&builder.schema, &mut builder.order, position, name) {
            Some(p) if builder.schema.properties[p].2.accepts(&value) => {
                if !builder.schema.properties[p].2.keeps(&value) {
                    builder.row.overflow.get_or_insert_with(|| BodyWriter::new("", "")).property(name, &value);
                }
                builder.row.values[p] = Some(value);
            }
            _ => {
                builder.row.overflow.get_or_insert_with(|| BodyWriter::new("", "")).property(name, &value);
            }
        }
        Ok(())
    }

    fn end(self) -> Result<(), DecodeError> {
        let builder = &mut **self.builder.borrow_mut();
        let (partition_key, row_key) =
            builder.row.keys.take().ok_or_else(|| DecodeError::custom("end before begin"))?;
        let overflow = builder.row.overflow.take();
        let (timestamp, overflow) =
            match builder.overflow(overflow, builder.row.timestamp, partition_key.as_str(), row_key.as_str()) {
                Ok(row) => row,
                Err(e) => {
                    builder.row.refused = Some(e);
                    return Err(DecodeError::custom("the entity fits no row"));
                }
            };
        let values = std::mem::take(&mut builder.row.values);
        builder.append(
            partition_key.as_str(),
            row_key.as_str(),
            timestamp,
            overflow,
            values.iter().map(Option::as_ref),
        );
        builder.row.values = values;
        Ok(())
    }
}

/// The JSON object of a body written with empty keys, without them, plus a `Timestamp` that has no column.
fn overflow_json(body: &str, timestamp: Option<DateTime>) -> String {
    // `BodyWriter` always starts with the keys; the overflow holds properties only.
    const EMPTY_KEYS: &str = r#"{"PartitionKey":"","RowKey":"""#;
    let rest = body.strip_prefix(EMPTY_KEYS).expect("a body starts with its keys");
    let rest = rest.strip_prefix(',').unwrap_or(rest);
    let mut json = String::with_capacity(rest.len() + 64);
    json.push('{');
    json.push_str(&rest[..rest.len() - 1]);
    if let Some(dt) = timestamp {
        if json.len() > 1 {
            json.push(',');
        }
        json.push_str(r#""Timestamp@odata.type":"Edm.DateTime","Timestamp":""#);
        json.push_str(&dt.to_string());
        json.push('"');
    }
    json.push('}');
    json
}

/// Reads the overflow JSON of a row: its properties and `Timestamp`, checked by the service's decoder.
#[derive(Default)]
struct OverflowVisitor {
    timestamp: Option<DateTime>,
    properties: Vec<(String, EdmValue)>,
}

impl EntityVisitor for OverflowVisitor {
    type Value = Self;

    fn begin(&mut self, system: SystemProperties) -> Result<(), DecodeError> {
        self.timestamp = system.timestamp;
        Ok(())
    }

    fn property(&mut self, name: &str, value: EdmValue) -> Result<(), DecodeError> {
        self.properties.push((name.to_owned(), value));
        Ok(())
    }

    fn end(self) -> Result<Self, DecodeError> {
        Ok(self)
    }
}

/// The entities of a batch's rows, for the schema it was read with (the batch's own, read by
/// [`EntitySchema::new`]).
///
/// # Errors
/// [`ErrorKind::Row`] with the row (in the batch): a null or invalid key, a value outside its EDM type's limits,
/// a timestamp that is not a whole tick, an overflow that is not the JSON of properties; [`ErrorKind::Schema`]
/// when the batch's columns are not the schema's.
pub fn entities(batch: &RecordBatch, schema: &EntitySchema) -> Result<Vec<Entity>, Error> {
    let rows = Rows::new(batch, schema)?;
    (0..batch.num_rows()).map(|row| rows.entity(row).map_err(|e| e.at_row(row as u64))).collect()
}

/// The rows of a batch, read one at a time as entities (what [`entities`] does for all).
#[derive(Debug)]
pub struct Rows<'a> {
    batch: &'a RecordBatch,
    schema: &'a EntitySchema,
    partition_key: &'a StringArray,
    row_key: &'a StringArray,
    overflow: Option<&'a StringArray>,
}

impl<'a> Rows<'a> {
    /// The rows of a batch with this schema.
    ///
    /// # Errors
    /// [`ErrorKind::Schema`] when the batch's columns are not the schema's.
    pub fn new(batch: &'a RecordBatch, schema: &'a EntitySchema) -> Result<Self, Error> {
        if batch.num_columns() != schema.schema.fields().len() {
            return Err(Error::schema(format!(
                "the batch has {} columns, the schema {}",
                batch.num_columns(),
                schema.schema.fields().len()
            )));
        }
        Ok(Rows {
            batch,
            schema,
            partition_key: string_column(batch, schema.partition_key)?,
            row_key: string_column(batch, schema.row_key)?,
            overflow: schema.overflow.map(|i| string_column(batch, i)).transpose()?,
        })
    }

    /// The entity of a row (from 0; a row past the end is an error).
    ///
    /// # Errors
    /// [`ErrorKind::Row`]: a null or invalid key, a value outside its EDM type's limits, a timestamp that is
    /// not a whole tick, an overflow that is not the JSON of properties or repeats a column.
    pub fn entity(&self, row: usize) -> Result<Entity, Error> {
        if row >= self.batch.num_rows() {
            return Err(Error::row(format!("there is no row {row} in a batch of {}", self.batch.num_rows())));
        }
        let (pk, rk) = (self.partition_key, self.row_key);
        if pk.is_null(row) || rk.is_null(row) {
            return Err(Error::row("PartitionKey and RowKey must not be null"));
        }
        let (pk, rk) = (pk.value(row), rk.value(row));
        self.read(row, pk, rk).map_err(|e| e.with_keys(pk, rk))
    }

    fn read(&self, row: usize, pk: &str, rk: &str) -> Result<Entity, Error> {
        let partition_key = PartitionKey::new(pk).map_err(|e| Error::row(e.to_string()))?;
        let row_key = RowKey::new(rk).map_err(|e| Error::row(e.to_string()))?;
        let mut entity = Entity::new(partition_key, row_key);
        if let Some((i, kind)) = self.schema.timestamp {
            let value = value(self.batch.column(i), kind, row).map_err(|e| in_property(TIMESTAMP, e))?;
            if let Some(EdmValue::DateTime(dt)) = value {
                entity.set_server_metadata(Some(dt), None);
            }
        }
        for (i, name, kind) in &self.schema.properties {
            if let Some(value) = value(self.batch.column(*i), *kind, row).map_err(|e| in_property(name, e))? {
                entity.insert(name.clone(), value).map_err(|e| Error::row(e.to_string()).in_property(name))?;
            }
        }
        if let Some(json) = self.overflow.filter(|o| o.is_valid(row)).map(|o| o.value(row)) {
            merge_overflow(&mut entity, json, self.schema)?;
        }
        Ok(entity)
    }
}

fn in_property(name: &str, message: String) -> Error {
    Error::row(format!("property `{name}`: {message}")).in_property(name)
}

fn string_column(batch: &RecordBatch, i: usize) -> Result<&StringArray, Error> {
    batch.column(i).as_string_opt::<i32>().ok_or_else(|| {
        Error::schema(format!(
            "column `{}` is {}, not Utf8",
            batch.schema().field(i).name(),
            batch.column(i).data_type()
        ))
    })
}

/// Adds the properties (and `Timestamp`) of a row's overflow JSON to its entity: a value its column shows
/// replaces the column's (the overflow has it exactly), one the column shows otherwise is dropped (the column was
/// changed without it), and one of a property the entity has from a column that does not show it is an error.
fn merge_overflow(entity: &mut Entity, json: &str, schema: &EntitySchema) -> Result<(), Error> {
    // The decoder wants the keys; give it empty ones and the overflow's members.
    let mut body = String::with_capacity(json.len() + 32);
    body.push_str(r#"{"PartitionKey":"","RowKey":"""#);
    match json.trim_start().strip_prefix('{') {
        Some(rest) if rest.trim_start().starts_with('}') => body.push_str(rest),
        Some(rest) => {
            body.push(',');
            body.push_str(rest);
        }
        None => return Err(Error::row(format!("the {OVERFLOW_COLUMN} column is not a JSON object"))),
    }
    let visited = decode_entity_with(body.as_bytes(), OverflowVisitor::default())
        .map_err(|e| Error::row(format!("invalid {OVERFLOW_COLUMN} column: {e}")))?;
    if let Some(timestamp) = visited.timestamp {
        let exact = EdmValue::DateTime(timestamp);
        match (entity.timestamp(), schema.timestamp) {
            (None, _) => entity.set_server_metadata(Some(timestamp), None),
            (Some(shown), Some((_, kind))) if kind.accepts(&exact) => {
                if shows(kind, &exact).as_ref() == Some(&EdmValue::DateTime(shown)) {
                    entity.set_server_metadata(Some(timestamp), None);
                }
            }
            (Some(_), _) => {
                return Err(Error::row(format!("Timestamp is both in its column and in {OVERFLOW_COLUMN}")));
            }
        }
    }
    for (name, value) in visited.properties {
        let name: PropertyName = name.parse().map_err(|e| Error::row(format!("{e}")))?;
        if let Some(shown) = entity.value(name.as_str()) {
            let kind = schema.by_name.get(name.as_str()).map(|&p| schema.properties[p].2);
            match kind {
                Some(kind) if kind.accepts(&value) => {
                    if shows(kind, &value).as_ref() != Some(shown) {
                        continue;
                    }
                }
                _ => {
                    return Err(Error::row(format!(
                        "property `{name}` is both in its column and in {OVERFLOW_COLUMN}"
                    )));
                }
            }
        }
        entity.insert(name, value).map_err(|e| Error::row(e.to_string()))?;
    }
    Ok(())
}

/// The value a column of this kind reads back for a value it [accepts](ColumnKind::accepts); `None` when the
/// column cannot hold it (a DateTime outside a nanosecond timestamp).
fn shows(kind: ColumnKind, value: &EdmValue) -> Option<EdmValue> {
    Some(match (kind, value) {
        (ColumnKind::DateTime, EdmValue::DateTime(dt)) => {
            EdmValue::DateTime(mapping::datetime_from_micros(mapping::timestamp_micros(*dt)).ok()?)
        }
        (ColumnKind::Text, EdmValue::String(_)) => value.clone(),
        (ColumnKind::Text, other) => EdmValue::String(EdmString::new(mapping::value_text(other)).ok()?),
        (ColumnKind::WideInt64, EdmValue::Int32(v)) => EdmValue::Int64(i64::from(*v)),
        (ColumnKind::WideDouble, EdmValue::Int32(v)) => EdmValue::Double(f64::from(*v)),
        _ => value.clone(),
    })
}

/// The value of a row of a column of this kind, `None` when null.
fn value(array: &ArrayRef, kind: ColumnKind, row: usize) -> Result<Option<EdmValue>, String> {
    if array.is_null(row) {
        return Ok(None);
    }
    let mismatch = || format!("column is {}, not {}", array.data_type(), kind.data_type());
    let value = match kind {
        ColumnKind::String | ColumnKind::Text => {
            let s = array.as_string_opt::<i32>().ok_or_else(mismatch)?.value(row);
            EdmValue::String(EdmString::new(s).map_err(|e| e.to_string())?)
        }
        ColumnKind::Int32 => EdmValue::Int32(array.as_primitive_opt::<Int32Type>().ok_or_else(mismatch)?.value(row)),
        ColumnKind::Int64 | ColumnKind::WideInt64 => {
            EdmValue::Int64(array.as_primitive_opt::<Int64Type>().ok_or_else(mismatch)?.value(row))
        }
        ColumnKind::DateTimeTicks => {
            let ticks = array.as_primitive_opt::<Int64Type>().ok_or_else(mismatch)?.value(row);
            EdmValue::DateTime(mapping::datetime_from_ticks(ticks).map_err(|e| e.to_string())?)
        }
        ColumnKind::Double | ColumnKind::WideDouble => {
            EdmValue::Double(array.as_primitive_opt::<Float64Type>().ok_or_else(mismatch)?.value(row))
        }
        ColumnKind::Boolean => EdmValue::Boolean(array.as_boolean_opt().ok_or_else(mismatch)?.value(row)),
        ColumnKind::Binary => {
            let bytes = array.as_binary_opt::<i32>().ok_or_else(mismatch)?.value(row);
            EdmValue::Binary(EdmBinary::new(bytes).map_err(|e| e.to_string())?)
        }
        ColumnKind::Guid => {
            let bytes = array.as_fixed_size_binary_opt().ok_or_else(mismatch)?.value(row);
            EdmValue::Guid(Uuid::from_slice(bytes).map_err(|e| e.to_string())?)
        }
        ColumnKind::DateTime => {
            let micros = array.as_primitive_opt::<TimestampMicrosecondType>().ok_or_else(mismatch)?.value(row);
            EdmValue::DateTime(mapping::datetime_from_micros(micros).map_err(|e| e.to_string())?)
        }
        ColumnKind::DateTimeNanos => {
            let nanos = array.as_primitive_opt::<TimestampNanosecondType>().ok_or_else(mismatch)?.value(row);
            EdmValue::DateTime(mapping::datetime_from_nanos(nanos).map_err(|e| e.to_string())?)
        }
    };
    Ok(Some(value))
}
