//! A record batch's rows back into entities: [`Rows`] and [`entities`], the overflow merged into each.

use super::EntitySchema;
use crate::error::Error;
use crate::mapping::{self, ColumnKind, OVERFLOW_COLUMN, TIMESTAMP};
use arrow_array::cast::AsArray as _;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, TimestampMicrosecondType, TimestampNanosecondType};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use table_model::json::{decode_entity_with, EntityVisitor, SystemProperties};
use table_model::{DateTime, DecodeError, EdmBinary, EdmString, EdmValue, Entity, PartitionKey, PropertyName, RowKey};
use uuid::Uuid;

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
///
/// [`ErrorKind::Row`]: crate::ErrorKind::Row
/// [`ErrorKind::Schema`]: crate::ErrorKind::Schema
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
    ///
    /// [`ErrorKind::Schema`]: crate::ErrorKind::Schema
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
    ///
    /// [`ErrorKind::Row`]: crate::ErrorKind::Row
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
