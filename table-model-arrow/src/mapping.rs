//! The EDM types of the Table service and their Arrow columns, both ways, never silently lossy (`docs/rules.md` §3.4).
//!
//! | EDM type | Arrow column ([`ColumnKind`]) | what the column alone keeps |
//! |---|---|---|
//! | `Edm.String` | `Utf8` | every string (at most 32,768 UTF-16 units, `""` apart from absent) |
//! | `Edm.Int32` | `Int32` | every value |
//! | `Edm.Int64` | `Int64` | every value |
//! | `Edm.Double` | `Float64` | the 64 bits: NaN payloads, `-0.0`, infinities, subnormals |
//! | `Edm.Boolean` | `Boolean` | every value |
//! | `Edm.Binary` | `Binary` | every value (at most 64 KiB) |
//! | `Edm.Guid` | `FixedSizeBinary(16)`, extension `arrow.uuid` (Parquet's `UUID`) | the 16 bytes in RFC 4122 order |
//! | `Edm.DateTime` | `Timestamp(Microsecond, "UTC")` | 1601 to 9999 to the microsecond; the 100 ns digit in `@overflow` |
//! | several types | `Utf8` text, `Int64` or `Float64` ([`ColumnKind::Text`] and the wide kinds) | the values of its own type |
//!
//! **DateTime.** The service keeps 100 ns ticks from 1601-01-01 to 9999-12-31 (`docs/rules.md` §3.3). No Arrow
//! timestamp holds both: nanoseconds in an `i64` end in 1677 and 2262, and microseconds lose the seventh digit.
//! So every DateTime column is a microsecond timestamp ([`ColumnKind::DateTime`]), which holds the whole range
//! and is what SQL engines and Parquet readers (DataFusion, DuckDB, Spark, pandas) compare with date literals,
//! truncate and print as time. A value with a 100 ns digit (every server `Timestamp` has one, most of the
//! time) shows in its column truncated to the microsecond (towards the past) and is also written, exactly, into
//! the overflow column; reading back takes the overflow's. Two other forms are read, and written only when a
//! schema file asks for them: [`ColumnKind::DateTimeNanos`] (`Timestamp(Nanosecond, "UTC")`, the DateTime
//! column of earlier versions and of other tools, exact from 1677 to 2262) and [`ColumnKind::DateTimeTicks`]
//! (an `Int64` of .NET ticks, marked [`DATETIME_KEY`]` = "ticks"`).
//!
//! **Several types.** A property seen with more than one EDM type (`Priority`, an Int32 in most entities and a
//! String in some) gets a column that shows every value ([`ColumnKind::for_types`]): an `Int64` when its types
//! are Int32 and Int64 (every Int32 is an Int64), a `Float64` when they are Int32 and Double (every Int32 is a
//! Double), and otherwise the `Utf8` text of each value ([`value_text`]). As for the 100 ns digit, a value the
//! column shows but does not keep (an Int32 in an `Int64` column, a `5` in a text column) is also written,
//! exactly, into the overflow column, so it reads back with its own type. Such a column is marked
//! [`MIXED_KEY`] with its types, so no SQL engine is told it holds one EDM type.
//!
//! A value that a column cannot show (a String in an Int32 column, read after the sample chose the column) and a
//! property outside the schema go to the overflow column alone (see [`OVERFLOW_COLUMN`]): never dropped or
//! clamped, and never shown as another type than the column's.
//!
//! **Metadata.** Every field this crate writes carries its EDM type in its metadata ([`EDM_TYPE_KEY`], such as
//! `table_model.edm = "Edm.Int64"`), so reading back is exact whatever the Arrow type. A field without it (a
//! Parquet file written by another tool) is read by its Arrow type alone, when that type is one of the table's.
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
//!     DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
//! );
//! assert_eq!(ColumnKind::for_types(&[EdmType::Int32, EdmType::String]), ColumnKind::Text);
//! # Ok::<(), table_model_arrow::Error>(())
//! ```
//!
//! Layer: mapping.

use crate::error::Error;
use arrow_schema::{DataType, Field, TimeUnit};
use std::collections::HashMap;
use std::fmt::Write as _;
use table_model::limits::UNIX_EPOCH_TICKS;
use table_model::{DateTime, EdmType, EdmValue};

/// The field metadata key holding a column's EDM type, such as `Edm.Int64`.
pub const EDM_TYPE_KEY: &str = "table_model.edm";
/// The field metadata key marking an `Int64` column of `Edm.DateTime` ticks: its value is `ticks`.
pub const DATETIME_KEY: &str = "table_model.datetime";
/// The field metadata key marking a column of several EDM types ([`ColumnKind::Text`], [`ColumnKind::WideInt64`],
/// [`ColumnKind::WideDouble`]): its value lists them, such as `Edm.Int32,Edm.String`.
pub const MIXED_KEY: &str = "table_model.mixed";
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
/// The overflow column, a nullable `Utf8`: for each row, as the service's own JSON (`table_model::json`, with
/// `@odata.type` annotations), the properties its columns do not keep exactly: a value its column cannot show
/// (another EDM type, a property outside the schema), and the exact value of one its column shows inexactly (a
/// DateTime's 100 ns digit, an Int32 in a wide or text column); such as
/// `{"Age@odata.type":"Edm.Int64","Age":"9007199254740993"}`; null when the columns keep every property. Its name
/// is not a valid property name (`docs/rules.md` §1.2), so it never collides with one.
pub const OVERFLOW_COLUMN: &str = "@overflow";

/// Nanoseconds per tick: a tick is 100 ns.
const NANOS_PER_TICK: i64 = 100;
/// Ticks per microsecond.
const TICKS_PER_MICRO: i64 = 10;

/// What a column holds: an EDM type (or several) and, for `Edm.DateTime`, which of its Arrow forms.
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
    /// `Edm.DateTime` as `Timestamp(Microsecond, "UTC")`: from 1601 to 9999, each value truncated to the
    /// microsecond (its 100 ns digit, when not 0, kept in the overflow column).
    DateTime,
    /// `Edm.DateTime` as `Timestamp(Nanosecond, "UTC")`: exact, from 1677-09-21 to 2262-04-11 (the DateTime column
    /// of earlier versions of this crate; written only when a schema asks for it).
    DateTimeNanos,
    /// `Edm.DateTime` as an `Int64` of ticks (100 ns since 0001-01-01): exact over the service's whole range
    /// (written only when a schema asks for it).
    DateTimeTicks,
    /// Values of several EDM types as `Utf8` text ([`value_text`]); a String is kept, every other value is also
    /// in the overflow column.
    Text,
    /// `Edm.Int32` and `Edm.Int64` values as `Int64`; an Int32 is also in the overflow column.
    WideInt64,
    /// `Edm.Int32` and `Edm.Double` values as `Float64`; an Int32 is also in the overflow column.
    WideDouble,
}

impl ColumnKind {
    /// Every kind, in the order of the module's table.
    pub const ALL: [ColumnKind; 13] = [
        ColumnKind::String,
        ColumnKind::Int32,
        ColumnKind::Int64,
        ColumnKind::Double,
        ColumnKind::Boolean,
        ColumnKind::Binary,
        ColumnKind::Guid,
        ColumnKind::DateTime,
        ColumnKind::DateTimeNanos,
        ColumnKind::DateTimeTicks,
        ColumnKind::Text,
        ColumnKind::WideInt64,
        ColumnKind::WideDouble,
    ];

    /// The column of an EDM type; `Edm.DateTime` gets the microsecond timestamp ([`ColumnKind::DateTime`]).
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

    /// The column of a property seen with these EDM types (most frequent first): that of its type when it has
    /// one, [`WideInt64`](ColumnKind::WideInt64) for Int32 and Int64, [`WideDouble`](ColumnKind::WideDouble) for
    /// Int32 and Double, and [`Text`](ColumnKind::Text) for any other mix, so that every value shows.
    ///
    /// ```
    /// use table_model::EdmType::{Double, Int32, Int64, String};
    /// use table_model_arrow::mapping::ColumnKind;
    /// assert_eq!(ColumnKind::for_types(&[Int64]), ColumnKind::Int64);
    /// assert_eq!(ColumnKind::for_types(&[Int32, Int64]), ColumnKind::WideInt64);
    /// assert_eq!(ColumnKind::for_types(&[Double, Int32]), ColumnKind::WideDouble);
    /// assert_eq!(ColumnKind::for_types(&[Int32, String]), ColumnKind::Text);
    /// assert_eq!(ColumnKind::for_types(&[Int64, Double]), ColumnKind::Text); // not every Int64 is a Double
    /// ```
    pub fn for_types(types: &[EdmType]) -> ColumnKind {
        let only = |allowed: &[EdmType]| types.iter().all(|t| allowed.contains(t));
        match types {
            [] => ColumnKind::String,
            [one] => ColumnKind::for_edm(*one),
            _ if only(&[EdmType::Int32, EdmType::Int64]) => ColumnKind::WideInt64,
            _ if only(&[EdmType::Int32, EdmType::Double]) => ColumnKind::WideDouble,
            _ => ColumnKind::Text,
        }
    }

    /// The EDM type of the values the column keeps exactly.
    pub const fn edm_type(self) -> EdmType {
        match self {
            ColumnKind::String | ColumnKind::Text => EdmType::String,
            ColumnKind::Int32 => EdmType::Int32,
            ColumnKind::Int64 | ColumnKind::WideInt64 => EdmType::Int64,
            ColumnKind::Double | ColumnKind::WideDouble => EdmType::Double,
            ColumnKind::Boolean => EdmType::Boolean,
            ColumnKind::Binary => EdmType::Binary,
            ColumnKind::Guid => EdmType::Guid,
            ColumnKind::DateTime | ColumnKind::DateTimeNanos | ColumnKind::DateTimeTicks => EdmType::DateTime,
        }
    }

    /// Whether the column shows values of several EDM types.
    pub const fn is_mixed(self) -> bool {
        matches!(self, ColumnKind::Text | ColumnKind::WideInt64 | ColumnKind::WideDouble)
    }

    /// The Arrow type of the column.
    pub fn data_type(self) -> DataType {
        match self {
            ColumnKind::String | ColumnKind::Text => DataType::Utf8,
            ColumnKind::Int32 => DataType::Int32,
            ColumnKind::Int64 | ColumnKind::WideInt64 | ColumnKind::DateTimeTicks => DataType::Int64,
            ColumnKind::Double | ColumnKind::WideDouble => DataType::Float64,
            ColumnKind::Boolean => DataType::Boolean,
            ColumnKind::Binary => DataType::Binary,
            ColumnKind::Guid => DataType::FixedSizeBinary(16),
            ColumnKind::DateTime => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            ColumnKind::DateTimeNanos => DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        }
    }

    /// The name of the column's form, as `tablectl schema` shows it and a schema file gives it: `Utf8`, `Int32`,
    /// `Int64`, `Float64`, `Boolean`, `Binary`, `Uuid`, `Timestamp`, `TimestampNanos`, `Ticks`, `Text`,
    /// `WideInt64`, `WideFloat64`.
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
            ColumnKind::DateTimeNanos => "TimestampNanos",
            ColumnKind::DateTimeTicks => "Ticks",
            ColumnKind::Text => "Text",
            ColumnKind::WideInt64 => "WideInt64",
            ColumnKind::WideDouble => "WideFloat64",
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

    /// The field of a column of this kind, with its metadata: the EDM type, the ticks marker, the UUID extension,
    /// the mixed marker (listing the types the column's kind shows; [`ColumnKind::mixed_field`] lists those seen).
    pub fn field(self, name: &str, nullable: bool) -> Field {
        let mut metadata = HashMap::from([(EDM_TYPE_KEY.to_owned(), self.edm_type().as_str().to_owned())]);
        match self {
            ColumnKind::DateTimeTicks => {
                metadata.insert(DATETIME_KEY.to_owned(), "ticks".to_owned());
            }
            ColumnKind::Guid => {
                metadata.insert(EXTENSION_NAME_KEY.to_owned(), UUID_EXTENSION.to_owned());
            }
            ColumnKind::Text => {
                metadata.insert(MIXED_KEY.to_owned(), "*".to_owned());
            }
            ColumnKind::WideInt64 => {
                metadata.insert(MIXED_KEY.to_owned(), "Edm.Int32,Edm.Int64".to_owned());
            }
            ColumnKind::WideDouble => {
                metadata.insert(MIXED_KEY.to_owned(), "Edm.Int32,Edm.Double".to_owned());
            }
            _ => {}
        }
        Field::new(name, self.data_type(), nullable).with_metadata(metadata)
    }

    /// The field of a column of several EDM types, its [`MIXED_KEY`] listing them (most frequent first).
    pub fn mixed_field(self, name: &str, types: &[EdmType]) -> Field {
        let mut field = self.field(name, true);
        if self.is_mixed() {
            let list: Vec<&str> = types.iter().map(|t| t.as_str()).collect();
            let mut metadata = field.metadata().clone();
            metadata.insert(MIXED_KEY.to_owned(), list.join(","));
            field = field.with_metadata(metadata);
        }
        field
    }

    /// The kind of a field: by its metadata when it has [`EDM_TYPE_KEY`] (which must then agree with its Arrow
    /// type), else by its Arrow type alone, as the module's table says (a `Timestamp(Microsecond)` or
    /// `Timestamp(Nanosecond)` in UTC is a DateTime).
    ///
    /// # Errors
    /// [`ErrorKind::Schema`](crate::ErrorKind::Schema) for an unknown EDM type in the metadata, a type that
    /// disagrees with it, or an Arrow type that holds no EDM type (`Float32`, `LargeUtf8`, lists...).
    pub fn of_field(field: &Field) -> Result<ColumnKind, Error> {
        let data_type = field.data_type();
        let metadata = field.metadata();
        let mixed = metadata.contains_key(MIXED_KEY);
        let by_type = match data_type {
            DataType::Utf8 if mixed => Some(ColumnKind::Text),
            DataType::Utf8 => Some(ColumnKind::String),
            DataType::Int32 => Some(ColumnKind::Int32),
            DataType::Int64 if metadata.get(DATETIME_KEY).is_some_and(|v| v == "ticks") => {
                Some(ColumnKind::DateTimeTicks)
            }
            DataType::Int64 if mixed => Some(ColumnKind::WideInt64),
            DataType::Int64 => Some(ColumnKind::Int64),
            DataType::Float64 if mixed => Some(ColumnKind::WideDouble),
            DataType::Float64 => Some(ColumnKind::Double),
            DataType::Boolean => Some(ColumnKind::Boolean),
            DataType::Binary => Some(ColumnKind::Binary),
            DataType::FixedSizeBinary(16) => Some(ColumnKind::Guid),
            DataType::Timestamp(TimeUnit::Microsecond, Some(tz)) if is_utc(tz) => Some(ColumnKind::DateTime),
            DataType::Timestamp(TimeUnit::Nanosecond, Some(tz)) if is_utc(tz) => Some(ColumnKind::DateTimeNanos),
            _ => None,
        };
        let Some(kind) = by_type else {
            return Err(Error::schema(format!(
                "column `{}` is {data_type}, which holds no EDM type (the types are Utf8, Int32, Int64, Float64, \
                 Boolean, Binary, FixedSizeBinary(16), Timestamp(Microsecond, \"UTC\"), Timestamp(Nanosecond, \
                 \"UTC\"))",
                field.name()
            )));
        };
        if let Some(edm) = metadata.get(EDM_TYPE_KEY) {
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

    /// Whether the column shows a value: one of its EDM type, for a nanosecond timestamp a DateTime within its
    /// range, for a wide column an Int32 too, for a text column any value. A value it shows but does not
    /// [keep](ColumnKind::keeps) is also written into the overflow column.
    ///
    /// ```
    /// use table_model::{DateTime, EdmValue};
    /// use table_model_arrow::mapping::ColumnKind;
    /// assert!(ColumnKind::DateTime.accepts(&EdmValue::DateTime(DateTime::MIN))); // 1601
    /// assert!(!ColumnKind::DateTimeNanos.accepts(&EdmValue::DateTime(DateTime::MIN)));
    /// assert!(!ColumnKind::Int64.accepts(&EdmValue::Int32(1))); // never retyped
    /// assert!(ColumnKind::WideInt64.accepts(&EdmValue::Int32(1)));
    /// assert!(ColumnKind::Text.accepts(&EdmValue::Boolean(true)));
    /// ```
    pub fn accepts(self, value: &EdmValue) -> bool {
        self.takes(value).is_some()
    }

    /// Whether the column alone gives the value back exactly (type and all): a value it
    /// [accepts](ColumnKind::accepts) of its own EDM type, for a microsecond timestamp one without a 100 ns digit.
    ///
    /// ```
    /// use table_model::{DateTime, EdmValue};
    /// use table_model_arrow::mapping::ColumnKind;
    /// let micro = DateTime::from_ticks(DateTime::UNIX_EPOCH.ticks() + 10)?;
    /// let tick = DateTime::from_ticks(DateTime::UNIX_EPOCH.ticks() + 11)?;
    /// assert!(ColumnKind::DateTime.keeps(&EdmValue::DateTime(micro)));
    /// assert!(!ColumnKind::DateTime.keeps(&EdmValue::DateTime(tick)));
    /// assert!(!ColumnKind::Text.keeps(&EdmValue::Int32(5)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn keeps(self, value: &EdmValue) -> bool {
        self.takes(value) == Some(true)
    }

    /// Whether the column [accepts](ColumnKind::accepts) a value, and if it does, whether it
    /// [keeps](ColumnKind::keeps) it: both questions in one, as each value of each row asks them.
    pub(crate) fn takes(self, value: &EdmValue) -> Option<bool> {
        let own_type = value.edm_type() == self.edm_type();
        match (self, value) {
            (ColumnKind::DateTime, EdmValue::DateTime(dt)) => Some(dt.ticks() % TICKS_PER_MICRO == 0),
            (ColumnKind::DateTimeNanos, EdmValue::DateTime(dt)) => timestamp_nanos(*dt).map(|_| true),
            // A Binary's text is twice its length and more: a long one would be no Edm.String.
            (ColumnKind::Text, EdmValue::Binary(b)) => {
                (2 + 2 * b.len() <= table_model::limits::STRING_MAX_UTF16).then_some(false)
            }
            (ColumnKind::Text, _) => Some(own_type),
            (ColumnKind::WideInt64 | ColumnKind::WideDouble, EdmValue::Int32(_)) => Some(false),
            _ => own_type.then_some(true),
        }
    }

    /// What the column holds, in words, for `SHOW COLUMNS` and `tablectl schema`: its EDM type(s) and how they
    /// are shown.
    ///
    /// ```
    /// use table_model::EdmType;
    /// use table_model_arrow::mapping::ColumnKind;
    /// let field = ColumnKind::Text.mixed_field("Priority", &[EdmType::Int32, EdmType::String]);
    /// assert_eq!(
    ///     ColumnKind::describe(&field),
    ///     "Edm.Int32,Edm.String: the text of each value (several types)"
    /// );
    /// ```
    pub fn describe(field: &Field) -> String {
        if field.metadata().contains_key(OVERFLOW_KEY) {
            return "the properties no column keeps exactly, as the service's JSON".to_owned();
        }
        let Ok(kind) = ColumnKind::of_field(field) else { return String::new() };
        let types = field.metadata().get(MIXED_KEY).filter(|t| *t != "*").cloned();
        let types = types.unwrap_or_else(|| kind.edm_type().as_str().to_owned());
        let how = match kind {
            ColumnKind::DateTime => ": microseconds, the 100 ns digit in @overflow",
            ColumnKind::DateTimeNanos => ": nanoseconds, 1677 to 2262",
            ColumnKind::DateTimeTicks => ": .NET ticks",
            ColumnKind::Text => ": the text of each value (several types)",
            ColumnKind::WideInt64 => ": each as Int64 (several types)",
            ColumnKind::WideDouble => ": each as Float64 (several types)",
            _ => "",
        };
        let mut text = if kind == ColumnKind::Text && types == "*" { "any EDM type".to_owned() } else { types };
        text.push_str(how);
        text
    }
}

/// Whether an Arrow time zone names UTC.
fn is_utc(tz: &str) -> bool {
    matches!(tz, "UTC" | "utc" | "Z" | "+00:00" | "Etc/UTC")
}

/// The text of a value in a [`ColumnKind::Text`] column: a String as it is, an Int32 or Int64 in decimal, a
/// Double as Rust's shortest round-trip form (`1.5`, `1e300`, `NaN`, `Infinity`, `-Infinity`), a Boolean as
/// `true` or `false`, a Guid hyphenated in lowercase, a DateTime as the service writes it (7 digits, `Z`), a
/// Binary as `0x` and lowercase hex.
///
/// ```
/// use table_model::EdmValue;
/// use table_model_arrow::mapping::value_text;
/// assert_eq!(value_text(&EdmValue::Int32(-7)), "-7");
/// assert_eq!(value_text(&EdmValue::Double(0.1)), "0.1");
/// assert_eq!(value_text(&EdmValue::Double(f64::NEG_INFINITY)), "-Infinity");
/// ```
pub fn value_text(value: &EdmValue) -> String {
    match value {
        EdmValue::String(s) => s.as_str().to_owned(),
        EdmValue::Int32(v) => v.to_string(),
        EdmValue::Int64(v) => v.to_string(),
        EdmValue::Double(v) if v.is_nan() => "NaN".to_owned(),
        EdmValue::Double(v) if v.is_infinite() => if *v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned(),
        EdmValue::Double(v) => {
            let text = format!("{v:?}");
            text.strip_suffix(".0").map(str::to_owned).unwrap_or(text)
        }
        EdmValue::Boolean(v) => v.to_string(),
        EdmValue::Guid(v) => v.hyphenated().to_string(),
        EdmValue::DateTime(v) => v.to_string(),
        EdmValue::Binary(v) => {
            let mut text = String::with_capacity(2 + 2 * v.len());
            text.push_str("0x");
            v.iter().for_each(|b| write!(text, "{b:02x}").expect("a String takes every write"));
            text
        }
    }
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

/// The microseconds since the Unix epoch of a DateTime, truncated towards the past (so the value lies in the
/// microsecond it names, before 1970 too); every DateTime has them.
///
/// ```
/// use table_model::DateTime;
/// use table_model_arrow::mapping::{datetime_from_micros, timestamp_micros};
/// let before_1970 = DateTime::from_ticks(DateTime::UNIX_EPOCH.ticks() - 1)?; // 1969-12-31T23:59:59.9999999Z
/// assert_eq!(timestamp_micros(before_1970), -1);
/// assert_eq!(datetime_from_micros(-1)?.to_string(), "1969-12-31T23:59:59.9999990Z");
/// assert_eq!(timestamp_micros(DateTime::MIN), -11_644_473_600_000_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn timestamp_micros(value: DateTime) -> i64 {
    (value.ticks() - UNIX_EPOCH_TICKS).div_euclid(TICKS_PER_MICRO)
}

/// The DateTime of microseconds since the Unix epoch.
///
/// # Errors
/// [`ErrorKind::Row`](crate::ErrorKind::Row) outside 1601-01-01 to 9999-12-31.
pub fn datetime_from_micros(micros: i64) -> Result<DateTime, Error> {
    let ticks = micros
        .checked_mul(TICKS_PER_MICRO)
        .and_then(|t| t.checked_add(UNIX_EPOCH_TICKS))
        .ok_or_else(|| Error::row(format!("timestamp {micros} µs is outside Edm.DateTime (docs/rules.md §3.3)")))?;
    datetime_from_ticks(ticks)
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
