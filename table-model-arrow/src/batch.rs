//! Entities to Arrow record batches and back: [`BatchBuilder`] appends entities to a batch of at most so many
//! rows, or the entities of a query page's JSON straight from the JSON ([`BatchBuilder::push_page`], no
//! [`Entity`](table_model::Entity) made); [`entities`] reads a batch's rows back into entities.
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

// The builder (entities into a batch) and the rows (a batch back into entities), each in a file; the schema both
// read is here.
mod builder;
mod rows;

pub use builder::{BatchBuilder, Properties};
pub use rows::{entities, Rows};

use crate::error::Error;
use crate::mapping::{ColumnKind, OVERFLOW_COLUMN, OVERFLOW_KEY, PARTITION_KEY, ROW_KEY, TIMESTAMP};
use arrow_schema::{DataType, SchemaRef};
use std::collections::HashMap;
use table_model::PropertyName;

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
    ///
    /// [`ErrorKind::Schema`]: crate::ErrorKind::Schema
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
