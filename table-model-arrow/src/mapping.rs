//! The EDM types of the Table service and their Arrow columns, both ways, never silently lossy (`docs/rules.md` §3.4).
//!
//! | EDM type | Arrow column | kept exactly |
//! |---|---|---|
//! | `Edm.String` | `Utf8` | every string (at most 32,768 UTF-16 units, `""` apart from absent) |
//! | `Edm.Int32` | `Int32` | every value |
//! | `Edm.Int64` | `Int64` | every value |
//! | `Edm.Double` | `Float64` | the 64 bits: NaN payloads, `-0.0`, infinities, subnormals |
//! | `Edm.Boolean` | `Boolean` | every value |
//! | `Edm.Binary` | `Binary` | every value (at most 64 KiB) |
//! | `Edm.Guid` | `FixedSizeBinary(16)`, extension `arrow.uuid` | the 16 bytes in RFC 4122 order |
//! | `Edm.DateTime` | `Timestamp(Nanosecond, "UTC")` | 1677-09-21T00:12:43.1452242Z to 2262-04-11T23:47:16.8547758Z |
//! | `Edm.DateTime` | `Int64` of ticks (`table_model.datetime = "ticks"`) | 1601 to 9999, every 100 ns tick |
//!
//! **DateTime.** The service keeps 100 ns ticks from 1601-01-01 to 9999-12-31 (`docs/rules.md` §3.3). No Arrow
//! timestamp holds both: nanoseconds in an `i64` end in 1677 and 2262, and microseconds lose the seventh digit,
//! which every server `Timestamp` has. So a DateTime column is one of two [`ColumnKind`]s:
//! - [`ColumnKind::DateTime`], `Timestamp(Nanosecond, "UTC")`, exact for every tick it can hold, and what SQL
//!   engines and Parquet readers (DataFusion, DuckDB, Spark, pandas) compare, truncate and format as time. Schema
//!   inference chooses it when every sampled value fits, which is the case of nearly every real table.
//! - [`ColumnKind::DateTimeTicks`], an `Int64` of .NET ticks (100 ns since 0001-01-01T00:00:00Z, the service's own
//!   unit), exact over the whole range; chosen when a sampled value is outside the timestamp's range (a
//!   `DateTime.MinValue`-like 1601-01-01, a 9999-12-31 "never").
//!
//! A value that does not fit its column is never dropped or clamped: it goes to the overflow column (see
//! [`OVERFLOW_COLUMN`]), as does a value of another EDM type than its column's, and a property outside the schema.
//!
//! **Metadata.** Every field this crate writes carries its EDM type in its metadata ([`EDM_TYPE_KEY`], such as
//! `table_model.edm = "Edm.Int64"`), and a ticks column also [`DATETIME_KEY`]` = "ticks"`, so reading back is
//! exact whatever the Arrow type. A field without it (a Parquet file written by another tool) is read by its Arrow
//! type alone, as the table above says, when that type is one of them.
//!
//! ```
//! use arrow_schema::{DataType, TimeUnit};
//! use table_model::EdmType;
//! use table_model_arrow::mapping::ColumnKind;
//! let kind = ColumnKind::for_edm(EdmType::Int64);
//! let field = kind.field("Count", true);
//! assert_eq!(field.data_type(), &DataType::Int64);
//! assert_eq!(field.metadata()["table_model.edm"], "Edm.Int64");
//! assert_eq!(ColumnKind::of_field(&field)?, kind);
//! assert_eq!(
//!     ColumnKind::DateTime.data_type(),
//!     DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
//! );
//! # Ok::<(), table_model_arrow::Error>(())
//! ```

use crate::error::Error;
use arrow_schema::{DataType, Field, TimeUnit};
use std::collections::HashMap;
use table_model::limits::UNIX_EPOCH_TICKS;
use table_model::{DateTime, EdmType, EdmValue};

/// The field metadata key holding a column's EDM type, such as `Edm.Int64`.
pub const EDM_TYPE_KEY: &str = "table_model.edm";
/// The field metadata key marking an `Int64` column of `Edm.DateTime` ticks: its value is `ticks`.
pub const DATETIME_KEY: &str = "table_model.datetime";
/// The field metadata key marking the overflow column: its value is `json`.
pub const OVERFLOW_KEY: &str = "table_model.overflow";
/// The field metadata key of Arrow's canonical extension types (`ARROW:extension:name`).
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// The canonical extension name of a UUID column, [`FixedSizeBinary(16)`](DataType::FixedSizeBinary).
pub const UUID_EXTENSION: &str = "arrow.uuid";

/// The column of the `PartitionKey` (`Utf8`, never null).
pub const PARTITION_KEY: &str = "PartitionKey";
/// The column of the `RowKey` (`Utf8`, never null).
pub const ROW_KEY: &str = "RowKey";
/// The column of the server's `Timestamp` (a DateTime column, null for an entity that was not read).
pub const TIMESTAMP: &str = "Timestamp";
/// The overflow column, a nullable `Utf8`: for each row, the properties that do not fit their column (another
/// EDM type, a property outside the schema, a DateTime outside a timestamp column's range), as the service's own
/// JSON (`table_model::json`, with `@odata.type` annotations), such as
/// `{"Age@odata.type":"Edm.Int64","Age":"9007199254740993"}`; null when every property has its column. Its name
/// is not a valid property name (`docs/rules.md` §1.2), so it never collides with one.
pub const OVERFLOW_COLUMN: &str = "@overflow";

/// Ticks per nanosecond's unit of the timestamp column: a tick is 100 ns.
const NANOS_PER_TICK: i64 = 100;

/// What a column holds: an EDM type and, for `Edm.DateTime`, which of its two Arrow forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// `Edm.String` as `Utf8`.
    String,
    /// `Edm.Int32` as `Int32`.
    Int32,
    /// `Edm.Int64` as `Int64`.
    Int64,
    /// `Edm.Double` as `Float64`.
    Double,
    /// `Edm.Boolean` as `Boolean`.
    Boolean,
    /// `Edm.Binary` as `Binary`.
    Binary,
    /// `Edm.Guid` as `FixedSizeBinary(16)` with the `arrow.uuid` extension name.
    Guid,
    /// `Edm.DateTime` as `Timestamp(Nanosecond, "UTC")`: exact, from 1677-09-21 to 2262-04-11.
    DateTime,
    /// `Edm.DateTime` as an `Int64` of ticks (100 ns since 0001-01-01): exact over the service's whole range.
    DateTimeTicks,
}

impl ColumnKind {
    /// Every kind, in the order of the module's table.
    pub const ALL: [ColumnKind; 9] = [
        ColumnKind::String,
        ColumnKind::Int32,
        ColumnKind::Int64,
        ColumnKind::Double,
        ColumnKind::Boolean,
        ColumnKind::Binary,
        ColumnKind::Guid,
        ColumnKind::DateTime,
        ColumnKind::DateTimeTicks,
    ];

    /// The column of an EDM type; `Edm.DateTime` gets the timestamp ([`ColumnKind::DateTime`]).
    pub const fn for_edm(edm: EdmType) -> ColumnKind {
        match edm {
            EdmType::String => ColumnKind::String,
            EdmType::Int32 => ColumnKind::Int32,
            EdmType::Int64 => ColumnKind::Int64,
            EdmType::Double => ColumnKind::Double,
            EdmType::Boolean => ColumnKind::Boolean,
            EdmType::Binary => ColumnKind::Binary,
            EdmType::Guid => ColumnKind::Guid,
            EdmType::DateTime => ColumnKind::DateTime,
        }
    }

    /// The EDM type of the values.
    pub const fn edm_type(self) -> EdmType {
        match self {
            ColumnKind::String => EdmType::String,
            ColumnKind::Int32 => EdmType::Int32,
            ColumnKind::Int64 => EdmType::Int64,
            ColumnKind::Double => EdmType::Double,
            ColumnKind::Boolean => EdmType::Boolean,
            ColumnKind::Binary => EdmType::Binary,
            ColumnKind::Guid => EdmType::Guid,
            ColumnKind::DateTime | ColumnKind::DateTimeTicks => EdmType::DateTime,
        }
    }

    /// The Arrow type of the column.
    pub fn data_type(self) -> DataType {
        match self {
            ColumnKind::String => DataType::Utf8,
            ColumnKind::Int32 => DataType::Int32,
            ColumnKind::Int64 | ColumnKind::DateTimeTicks => DataType::Int64,
            ColumnKind::Double => DataType::Float64,
            ColumnKind::Boolean => DataType::Boolean,
            ColumnKind::Binary => DataType::Binary,
            ColumnKind::Guid => DataType::FixedSizeBinary(16),
            ColumnKind::DateTime => DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        }
    }

    /// The name of the column's form, as `tablectl schema` shows it and a schema file gives it: `Utf8`, `Int32`,
    /// `Int64`, `Float64`, `Boolean`, `Binary`, `Uuid`, `Timestamp`, `Ticks`.
    pub const fn name(self) -> &'static str {
        match self {
            ColumnKind::String => "Utf8",
            ColumnKind::Int32 => "Int32",
            ColumnKind::Int64 => "Int64",
            ColumnKind::Double => "Float64",
            ColumnKind::Boolean => "Boolean",
            ColumnKind::Binary => "Binary",
            ColumnKind::Guid => "Uuid",
            ColumnKind::DateTime => "Timestamp",
            ColumnKind::DateTimeTicks => "Ticks",
        }
    }

    /// The kind of a [`name`](ColumnKind::name).
    ///
    /// ```
    /// use table_model_arrow::mapping::ColumnKind;
    /// assert_eq!(ColumnKind::from_name("Ticks"), Some(ColumnKind::DateTimeTicks));
    /// assert_eq!(ColumnKind::from_name("ticks"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<ColumnKind> {
        ColumnKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The field of a column of this kind, with its metadata: the EDM type, the ticks marker, the UUID extension.
    pub fn field(self, name: &str, nullable: bool) -> Field {
        let mut metadata = HashMap::from([(EDM_TYPE_KEY.to_owned(), self.edm_type().as_str().to_owned())]);
        match self {
            ColumnKind::DateTimeTicks => {
                metadata.insert(DATETIME_KEY.to_owned(), "ticks".to_owned());
            }
            ColumnKind::Guid => {
                metadata.insert(EXTENSION_NAME_KEY.to_owned(), UUID_EXTENSION.to_owned());
            }
            _ => {}
        }
        Field::new(name, self.data_type(), nullable).with_metadata(metadata)
    }

    /// The kind of a field: by its metadata when it has [`EDM_TYPE_KEY`] (which must then agree with its Arrow
    /// type), else by its Arrow type alone, as the module's table says.
    ///
    /// # Errors
    /// [`ErrorKind::Schema`](crate::ErrorKind::Schema) for an unknown EDM type in the metadata, a type that
    /// disagrees with it, or an Arrow type that holds no EDM type (`Float32`, `LargeUtf8`, lists...).
    pub fn of_field(field: &Field) -> Result<ColumnKind, Error> {
        let data_type = field.data_type();
        let by_type = match data_type {
            DataType::Utf8 => Some(ColumnKind::String),
            DataType::Int32 => Some(ColumnKind::Int32),
            DataType::Int64 if field.metadata().get(DATETIME_KEY).is_some_and(|v| v == "ticks") => {
                Some(ColumnKind::DateTimeTicks)
            }
            DataType::Int64 => Some(ColumnKind::Int64),
            DataType::Float64 => Some(ColumnKind::Double),
            DataType::Boolean => Some(ColumnKind::Boolean),
            DataType::Binary => Some(ColumnKind::Binary),
            DataType::FixedSizeBinary(16) => Some(ColumnKind::Guid),
            DataType::Timestamp(TimeUnit::Nanosecond, Some(tz)) if is_utc(tz) => Some(ColumnKind::DateTime),
            _ => None,
        };
        let Some(kind) = by_type else {
            return Err(Error::schema(format!(
                "column `{}` is {data_type}, which holds no EDM type (the types are Utf8, Int32, Int64, Float64, \
                 Boolean, Binary, FixedSizeBinary(16), Timestamp(Nanosecond, \"UTC\"))",
                field.name()
            )));
        };
        if let Some(edm) = field.metadata().get(EDM_TYPE_KEY) {
            let Some(edm_type) = EdmType::from_name(edm) else {
                return Err(Error::schema(format!(
                    "column `{}` has {EDM_TYPE_KEY} `{edm}`, which is not an EDM type",
                    field.name()
                )));
            };
            if edm_type != kind.edm_type() {
                return Err(Error::schema(format!(
                    "column `{}` has {EDM_TYPE_KEY} `{edm}` but is {data_type}, the column of {}",
                    field.name(),
                    kind.edm_type().as_str()
                )));
            }
        }
        Ok(kind)
    }

    /// Whether a value goes into a column of this kind: one of its EDM type, and for a timestamp column a
    /// DateTime within its range.
    ///
    /// ```
    /// use table_model::{DateTime, EdmValue};
    /// use table_model_arrow::mapping::ColumnKind;
    /// assert!(ColumnKind::DateTime.accepts(&EdmValue::DateTime(DateTime::UNIX_EPOCH)));
    /// assert!(!ColumnKind::DateTime.accepts(&EdmValue::DateTime(DateTime::MIN))); // 1601
    /// assert!(ColumnKind::DateTimeTicks.accepts(&EdmValue::DateTime(DateTime::MIN)));
    /// assert!(!ColumnKind::Int64.accepts(&EdmValue::Int32(1))); // never retyped
    /// ```
    pub fn accepts(self, value: &EdmValue) -> bool {
        match (self, value) {
            (ColumnKind::DateTime, EdmValue::DateTime(dt)) => timestamp_nanos(*dt).is_some(),
            _ => value.edm_type() == self.edm_type(),
        }
    }
}

/// Whether an Arrow time zone names UTC.
fn is_utc(tz: &str) -> bool {
    matches!(tz, "UTC" | "utc" | "Z" | "+00:00" | "Etc/UTC")
}

/// The nanoseconds since the Unix epoch of a DateTime, `None` outside an `i64` (before 1677-09-21T00:12:43.1452242Z
/// or after 2262-04-11T23:47:16.8547758Z).
///
/// ```
/// use table_model::DateTime;
/// use table_model_arrow::mapping::{timestamp_nanos, datetime_from_nanos};
/// assert_eq!(timestamp_nanos(DateTime::UNIX_EPOCH), Some(0));
/// assert_eq!(timestamp_nanos(DateTime::MIN), None);
/// assert_eq!(datetime_from_nanos(1_700_000_000_000_000_000)?.to_string(), "2023-11-14T22:13:20.0000000Z");
/// # Ok::<(), table_model_arrow::Error>(())
/// ```
pub fn timestamp_nanos(value: DateTime) -> Option<i64> {
    (value.ticks() - UNIX_EPOCH_TICKS).checked_mul(NANOS_PER_TICK)
}

/// The DateTime of nanoseconds since the Unix epoch.
///
/// # Errors
/// [`ErrorKind::Row`](crate::ErrorKind::Row) when the nanoseconds are not a whole tick (a value finer than the
/// service keeps would be truncated: refused, not rounded) or the instant is before 1601.
pub fn datetime_from_nanos(nanos: i64) -> Result<DateTime, Error> {
    if nanos % NANOS_PER_TICK != 0 {
        return Err(Error::row(format!(
            "timestamp {nanos} ns is not a whole 100 ns tick, the resolution of Edm.DateTime (docs/rules.md §3.3)"
        )));
    }
    datetime_from_ticks(nanos / NANOS_PER_TICK + UNIX_EPOCH_TICKS)
}

/// The DateTime of .NET ticks.
///
/// # Errors
/// [`ErrorKind::Row`](crate::ErrorKind::Row) outside 1601-01-01 to 9999-12-31.
pub fn datetime_from_ticks(ticks: i64) -> Result<DateTime, Error> {
    DateTime::from_ticks(ticks).map_err(|e| Error::row(e.to_string()))
}
