//! Schema inference: feed it entities (a sample, or a whole table), get each property with its EDM types, how many
//! entities carry it, its conflicts, and the Arrow schema of the entities ([`Inference::to_schema`]).
//!
//! Properties come in first-seen order, after `PartitionKey`, `RowKey` and `Timestamp` (when an entity was read
//! and has one). A property seen with several EDM types is a conflict: its column shows every value
//! ([`ColumnKind::for_types`]: a wide numeric column, or the text of each), and the values of the other types are
//! also kept exactly in the overflow column, so none reads back retyped.
//!
//! The inference serializes as JSON (the document `tablectl schema --json` prints) and reads back from it, so a
//! schema file is an inference saved earlier or written by hand:
//!
//! ```
//! use table_model::{Entity, PartitionKey, RowKey};
//! use table_model_arrow::infer::Inference;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut inference = Inference::new();
//! let e = |rk: &str| Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(rk).unwrap());
//! inference.observe(&e("1").with("Age".parse()?, 36)?);
//! inference.observe(&e("2").with("Age".parse()?, 36_i64)?.with("Name".parse()?, "Ada")?);
//! let age = inference.property("Age").unwrap();
//! assert_eq!((age.count(), age.types().len(), age.is_conflict()), (2, 2, true));
//! let names: Vec<&str> = inference.properties().iter().map(|p| p.name()).collect();
//! assert_eq!(names, ["PartitionKey", "RowKey", "Age", "Name"]);
//! let json = serde_json::to_string(&inference)?;
//! assert!(json.contains(r#"{"name":"Name","count":1,"types":[{"type":"Edm.String","count":1}],"column":"Utf8"}"#));
//! let schema = serde_json::from_str::<Inference>(&json)?.to_schema()?;
//! let columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
//! assert_eq!(columns, ["PartitionKey", "RowKey", "Age", "Name", "@overflow"]);
//! # Ok(())
//! # }
//! ```
//!
//! Layer: entities.

use crate::error::Error;
use crate::mapping::{ColumnKind, OVERFLOW_COLUMN, OVERFLOW_KEY, PARTITION_KEY, ROW_KEY, TIMESTAMP};
use arrow_schema::{Field, Schema};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use table_model::{EdmType, Entity, PropertyName};

/// What was seen of entities: how many, and each property.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(from = "InferenceFile")]
pub struct Inference {
    entities: u64,
    properties: Vec<PropertyStats>,
    #[serde(skip)]
    index: HashMap<String, usize>,
}

/// An [`Inference`] as a schema file holds it, before its index is built.
#[derive(Deserialize)]
struct InferenceFile {
    #[serde(default)]
    entities: u64,
    properties: Vec<PropertyStats>,
}

impl From<InferenceFile> for Inference {
    fn from(file: InferenceFile) -> Self {
        let mut inference = Inference { entities: file.entities, properties: file.properties, index: HashMap::new() };
        inference.reindex();
        inference
    }
}

/// One property: its name, how many entities carry it, and its EDM types with their counts (most frequent first,
/// the first seen among equals). As JSON, it also has its `column` ([`PropertyStats::column`]); a schema file
/// may give the column (say `Ticks` for a DateTime) or leave it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertyStats {
    name: String,
    count: u64,
    types: Vec<TypeCount>,
    /// The column a schema file gives.
    given: Option<ColumnKind>,
}

/// An EDM type and how many entities have the property with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeCount {
    /// The type.
    #[serde(rename = "type", with = "edm_name")]
    pub edm_type: EdmType,
    /// How many entities.
    #[serde(default)]
    pub count: u64,
}

#[derive(Serialize, Deserialize)]
struct PropertyJson {
    name: String,
    #[serde(default)]
    count: u64,
    types: Vec<TypeCount>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "column_name")]
    column: Option<ColumnKind>,
}

impl Serialize for PropertyStats {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        PropertyJson {
            name: self.name.clone(),
            count: self.count,
            types: self.types.clone(),
            column: self.column().ok(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for PropertyStats {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let json = PropertyJson::deserialize(d)?;
        Ok(PropertyStats { name: json.name, count: json.count, types: json.types, given: json.column })
    }
}

impl Inference {
    /// Nothing seen yet.
    pub fn new() -> Self {
        Inference::default()
    }

    /// Counts an entity's keys, `Timestamp` and properties.
    pub fn observe(&mut self, entity: &Entity) {
        if self.properties.is_empty() {
            // The keys come first, whatever is seen first.
            self.slot(PARTITION_KEY);
            self.slot(ROW_KEY);
        }
        self.entities += 1;
        self.count(PARTITION_KEY, EdmType::String);
        self.count(ROW_KEY, EdmType::String);
        if entity.timestamp().is_some() {
            if !self.index.contains_key(TIMESTAMP) {
                // After the keys, before any property.
                self.properties.insert(2, PropertyStats::new(TIMESTAMP));
                self.reindex();
            }
            self.count(TIMESTAMP, EdmType::DateTime);
        }
        for (name, value) in entity {
            self.count(name.as_str(), value.edm_type());
        }
    }

    /// How many entities were seen.
    pub fn entities(&self) -> u64 {
        self.entities
    }

    /// The properties, `PartitionKey`, `RowKey` and `Timestamp` first, then in first-seen order.
    pub fn properties(&self) -> &[PropertyStats] {
        &self.properties
    }

    /// A property by name.
    pub fn property(&self, name: &str) -> Option<&PropertyStats> {
        self.index.get(name).map(|&i| &self.properties[i])
    }

    /// The properties seen with more than one EDM type.
    pub fn conflicts(&self) -> impl Iterator<Item = &PropertyStats> {
        self.properties.iter().filter(|p| p.is_conflict())
    }

    /// The Arrow schema of these entities: `PartitionKey` and `RowKey` (`Utf8`, never null), `Timestamp` when
    /// seen, one nullable column per property ([`PropertyStats::column`]), and the overflow column last.
    ///
    /// # Errors
    /// [`ErrorKind::Schema`](crate::ErrorKind::Schema), for an inference read from a schema file: a property
    /// name that is not one, the keys with another type than `Edm.String`, a property without any type, or a
    /// column that does not hold its type.
    pub fn to_schema(&self) -> Result<Schema, Error> {
        let mut fields = vec![ColumnKind::String.field(PARTITION_KEY, false), ColumnKind::String.field(ROW_KEY, false)];
        for property in &self.properties {
            let column = property.column()?;
            match property.name.as_str() {
                PARTITION_KEY | ROW_KEY if column != ColumnKind::String => {
                    return Err(Error::schema(format!("`{}` must be Edm.String", property.name)));
                }
                PARTITION_KEY | ROW_KEY => continue,
                TIMESTAMP if column.edm_type() != EdmType::DateTime => {
                    return Err(Error::schema(format!("`{TIMESTAMP}` must be Edm.DateTime")));
                }
                TIMESTAMP => {}
                name => {
                    name.parse::<PropertyName>().map_err(|e| Error::schema(format!("{e}")))?;
                }
            }
            let types: Vec<EdmType> = property.types.iter().map(|t| t.edm_type).collect();
            fields.push(column.mixed_field(&property.name, &types));
        }
        fields.push(overflow_field());
        Ok(Schema::new(fields))
    }

    fn slot(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.properties.push(PropertyStats::new(name));
        self.index.insert(name.to_owned(), self.properties.len() - 1);
        self.properties.len() - 1
    }

    fn reindex(&mut self) {
        self.index = self.properties.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
    }

    fn count(&mut self, name: &str, edm_type: EdmType) {
        let i = self.slot(name);
        let property = &mut self.properties[i];
        property.count += 1;
        match property.types.iter().position(|t| t.edm_type == edm_type) {
            Some(t) => {
                property.types[t].count += 1;
                // Keep the most frequent first; among equals, the first seen (a stable bubble up).
                let mut t = t;
                while t > 0 && property.types[t - 1].count < property.types[t].count {
                    property.types.swap(t - 1, t);
                    t -= 1;
                }
            }
            None => property.types.push(TypeCount { edm_type, count: 1 }),
        }
    }
}

/// The Arrow schema of a `#[derive(TableEntity)]` struct's static [`Schema`](table_model::Schema): its exact
/// types, where [`Inference::to_schema`] has a sample's. `PartitionKey`, `RowKey`, a `Timestamp` column (the
/// server's, which every entity read has), a column per property of a fixed EDM type in the struct's order,
/// and the overflow column, for what fits none: a property without a fixed type (an `EdmValue` field), one the
/// struct does not name, a value of another type, a DateTime outside the timestamp column's range. Every
/// property column is nullable, a required one too: the struct's rules are checked when it is read, while a
/// table may hold entities without the property.
///
/// ```
/// use table_model::TableEntity;
/// use table_model_arrow::infer::declared_schema;
/// #[derive(TableEntity)]
/// struct Reading {
///     #[table(partition_key)]
///     sensor: String,
///     #[table(row_key)]
///     at: u64,
///     #[table(rename = "Celsius")]
///     celsius: f64,
///     #[table(rename = "Count")]
///     count: Option<i64>,
/// }
/// let schema = declared_schema(&Reading::SCHEMA);
/// let columns: Vec<String> =
///     schema.fields().iter().map(|f| format!("{}:{}", f.name(), f.data_type())).collect();
/// assert_eq!(
///     columns,
///     [
///         "PartitionKey:Utf8",
///         "RowKey:Utf8",
///         "Timestamp:Timestamp(µs, \"UTC\")",
///         "Celsius:Float64",
///         "Count:Int64",
///         "@overflow:Utf8"
///     ]
/// );
/// assert!(schema.fields().iter().skip(2).all(|f| f.is_nullable()));
/// ```
pub fn declared_schema(schema: &table_model::Schema) -> Schema {
    let mut fields = vec![
        ColumnKind::String.field(PARTITION_KEY, false),
        ColumnKind::String.field(ROW_KEY, false),
        ColumnKind::DateTime.field(TIMESTAMP, true),
    ];
    for property in schema.properties() {
        let name = property.name();
        if let (Some(edm), false) = (property.edm_type(), [PARTITION_KEY, ROW_KEY, TIMESTAMP].contains(&name)) {
            fields.push(ColumnKind::for_edm(edm).field(name, true));
        }
    }
    fields.push(overflow_field());
    Schema::new(fields)
}

/// The overflow column's field ([`OVERFLOW_COLUMN`]).
pub fn overflow_field() -> Field {
    Field::new(OVERFLOW_COLUMN, arrow_schema::DataType::Utf8, true)
        .with_metadata(HashMap::from([(OVERFLOW_KEY.to_owned(), "json".to_owned())]))
}

impl PropertyStats {
    fn new(name: &str) -> Self {
        PropertyStats { name: name.to_owned(), count: 0, types: Vec::new(), given: None }
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many entities carry the property.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Its EDM types with their counts, most frequent first (the first seen among equals).
    pub fn types(&self) -> &[TypeCount] {
        &self.types
    }

    /// Whether it was seen with more than one EDM type.
    pub fn is_conflict(&self) -> bool {
        self.types.len() > 1
    }

    /// Its column: the one given in a schema file, else that of its types ([`ColumnKind::for_types`]): its EDM
    /// type's (a DateTime's is a microsecond timestamp, whatever the years), or, for several types, one that
    /// shows each value (Int64 for Int32 and Int64, Float64 for Int32 and Double, the text of each otherwise).
    ///
    /// # Errors
    /// [`ErrorKind::Schema`](crate::ErrorKind::Schema) when there is no type, or the given column does not hold
    /// the most frequent one.
    pub fn column(&self) -> Result<ColumnKind, Error> {
        let Some(first) = self.types.first() else {
            return Err(Error::schema(format!("property `{}` has no type", self.name)));
        };
        let types: Vec<EdmType> = self.types.iter().map(|t| t.edm_type).collect();
        let derived = ColumnKind::for_types(&types);
        match self.given {
            Some(given) if given.edm_type() == first.edm_type || shows_all(given, &types) => Ok(given),
            Some(given) => Err(Error::schema(format!(
                "property `{}` is {} but its column is {}, the column of {}",
                self.name,
                first.edm_type.as_str(),
                given.name(),
                given.edm_type().as_str()
            ))),
            None => Ok(derived),
        }
    }
}

/// Whether a column of several types shows values of each of these types.
fn shows_all(kind: ColumnKind, types: &[EdmType]) -> bool {
    let allowed: &[EdmType] = match kind {
        ColumnKind::Text => return true,
        ColumnKind::WideInt64 => &[EdmType::Int32, EdmType::Int64],
        ColumnKind::WideDouble => &[EdmType::Int32, EdmType::Double],
        _ => return false,
    };
    types.iter().all(|t| allowed.contains(t))
}

mod edm_name {
    use serde::{Deserialize, Deserializer, Serializer};
    use table_model::EdmType;

    pub fn serialize<S: Serializer>(edm: &EdmType, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(edm.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<EdmType, D::Error> {
        let name = String::deserialize(d)?;
        // Both spellings, as Storage Explorer writes them: `Edm.Int64` and `Int64`.
        EdmType::from_name(&name)
            .or_else(|| EdmType::ALL.into_iter().find(|t| t.short_name() == name))
            .ok_or_else(|| serde::de::Error::custom(format!("unknown EDM type `{name}`")))
    }
}

mod column_name {
    use crate::mapping::ColumnKind;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(column: &Option<ColumnKind>, s: S) -> Result<S::Ok, S::Error> {
        match column {
            Some(kind) => s.serialize_str(kind.name()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ColumnKind>, D::Error> {
        let name = String::deserialize(d)?;
        ColumnKind::from_name(&name).map(Some).ok_or_else(|| {
            let names: Vec<&str> = ColumnKind::ALL.iter().map(|k| k.name()).collect();
            serde::de::Error::custom(format!("unknown column `{name}`, expected one of {}", names.join(", ")))
        })
    }
}
