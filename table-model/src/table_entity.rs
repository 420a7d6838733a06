//! The [`TableEntity`] trait that `#[derive(TableEntity)]` implements, and the traits its generated code calls:
//! [`TableProperties`] (a group of properties flattened into an entity), [`EdmField`] (a Rust type stored as
//! one property), [`KeyField`] (a Rust type stored as a PartitionKey or RowKey) and [`TableEnum`] (a fieldless
//! enum stored as its variant name).
//!
//! Layer: wire.

pub(crate) mod fields;
mod impls;
mod schema;
pub(crate) mod unique;

pub(crate) use schema::find;
pub use schema::{FieldSchema, KeyEncoding, KeySchema, KeySource, PropertySchema, Schema, SchemaProperty};

use crate::edm::{EdmType, EdmValue};
use std::borrow::Cow;

use crate::edm::error::ValueError;
use crate::entity::error::EntityError;
use crate::entity::Entity;
use crate::json::error::{DecodeError, EncodeError};
use crate::json::{decode_entity_with, decode_query_with, BodyWriter, EntityBody, EntityVisitor};

/// An application struct stored as a table entity.
///
/// Derive it with `#[derive(TableEntity)]` (see the [attribute reference](macro@crate::TableEntity)): the derive
/// checks property names, keys and the table name at compile time with the same rules the rest of the crate
/// checks at run time, and generates the conversions below.
///
#[cfg_attr(feature = "derive", doc = "```")]
#[cfg_attr(not(feature = "derive"), doc = "```ignore")]
/// use table_model::{EdmType, Entity, TableEntity};
///
/// #[derive(TableEntity, Debug, PartialEq)]
/// #[table(name = "Orders", rename_all = "PascalCase")]
/// struct Order {
///     #[table(partition_key)]
///     customer: String,
///     #[table(row_key)]
///     number: u32,
///     total: f64,
///     note: Option<String>,
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let order = Order { customer: "c42".into(), number: 7, total: 99.5, note: None };
/// let entity: Entity = order.to_entity()?;
/// assert_eq!(entity.partition_key(), "c42");
/// assert_eq!(entity.row_key(), "0000000007"); // zero-padded: keys sort as strings
/// assert_eq!(entity.get::<f64>("Total")?, 99.5);
/// assert_eq!(entity.value("Note"), None); // None is not stored
/// assert_eq!(Order::from_entity(entity)?, order);
///
/// // The static schema, for `$select`, documentation and validating dynamic entities:
/// assert_eq!(Order::SCHEMA.table_name().unwrap(), "Orders");
/// assert_eq!(Order::SCHEMA.property("Total").unwrap().edm_type(), Some(EdmType::Double));
/// assert_eq!(Order::SCHEMA.select(), "PartitionKey,RowKey,Total,Note");
/// // Typed property handles, for the filter builder:
/// assert_eq!(Order::PROPERTIES.total.name(), "Total");
/// # Ok(())
/// # }
/// ```
pub trait TableEntity: Sized {
    /// The struct's schema: table name, keys, and every property with its EDM type.
    const SCHEMA: Schema;

    /// A struct with one [`Property`](crate::Property) handle per stored property, named after the fields;
    /// the derive names it `<Struct>Properties`.
    type Properties;

    /// The property handles.
    const PROPERTIES: Self::Properties;

    /// The derive's `const` checks of flattened names and EDM overrides; not part of the API.
    #[doc(hidden)]
    const __CHECK: () = ();

    /// Converts to a dynamic [`Entity`]. `None` fields are left out, and the server-set `Timestamp` and ETag
    /// fields are not written.
    ///
    /// # Errors
    /// A value over its EDM limit (a string over 32,768 UTF-16 units, binary over 64 KiB, a date outside
    /// 1601 to 9999), an invalid key, or an entity over 1 MiB; each error names the property.
    fn to_entity(&self) -> Result<Entity, EntityError>;

    /// Converts from a dynamic [`Entity`], parsing the keys back into the key fields.
    ///
    /// # Errors
    /// A missing required property, a property of another EDM type (except the lossless widenings of
    /// [`FromEdm`](crate::FromEdm)), a key that does not parse as its field's type, an unknown enum variant,
    /// invalid JSON in a `#[table(json)]` property, or, when the struct has `#[table(deny_unknown_properties)]`,
    /// a property the struct does not have; each error names the property.
    fn from_entity(entity: Entity) -> Result<Self, EntityError>;

    /// The struct's PartitionKey, encoded exactly as [`to_json`](TableEntity::to_json) and
    /// [`to_entity`](TableEntity::to_entity) write it (zero-padded integers, reverse-chronological instants, a
    /// constant), so that a struct that was written can address its entity for a get, update or delete.
    ///
    /// # Errors
    /// A key field whose value is not a valid key.
    fn partition_key(&self) -> Result<crate::PartitionKey, EntityError> {
        Ok(self.to_entity()?.partition_key().clone())
    }

    /// The struct's RowKey, encoded as [`partition_key`](TableEntity::partition_key) says.
    ///
    /// # Errors
    /// A key field whose value is not a valid key.
    fn row_key(&self) -> Result<crate::RowKey, EntityError> {
        Ok(self.to_entity()?.row_key().clone())
    }

    /// The ETag in the struct's `#[table(etag)]` field, when it has one and the entity was read from the
    /// service: the precondition of an update or delete of this struct.
    fn etag(&self) -> Option<&crate::ETag> {
        None
    }

    /// Encodes the struct as the JSON body of an insert or update request (`docs/rules.md` §5), straight from
    /// the fields through a [`BodyWriter`]: no [`Entity`] is built. The body is the one
    /// [`encode_entity`](crate::json::encode_entity) writes for [`to_entity`](TableEntity::to_entity)'s result.
    ///
    /// # Errors
    /// As [`to_entity`](TableEntity::to_entity), and a body over 1 MiB.
    fn to_json(&self) -> Result<EntityBody, EncodeError>;

    /// Decodes a single-entity response at any metadata level straight into the struct. Values without a type
    /// annotation (all of them under `nometadata`) are typed from the struct's schema, so an `i64` field reads
    /// the Int64 string `"9007199254740993"` exactly. An [`EdmValue`] field has no type in the schema: under
    /// `nometadata` it receives what the JSON form says (a Guid arrives as an `Edm.String`).
    ///
    /// # Errors
    /// Invalid JSON or any rule of the [`json`](crate::json) module, and the errors of
    /// [`from_entity`](TableEntity::from_entity), naming the property.
    fn from_json(json: &[u8]) -> Result<Self, DecodeError> {
        decode_entity_with(json, Self::__Visitor::default())
    }

    /// Decodes a query response page (`{"value": [...]}`) at any metadata level straight into structs.
    ///
    /// # Errors
    /// As [`from_json`](TableEntity::from_json), naming the entity's index in the page.
    fn from_json_query(json: &[u8]) -> Result<Vec<Self>, DecodeError> {
        decode_query_with(json, Self::__Visitor::default)
    }

    /// The decoder the derive generates; not part of the API.
    #[doc(hidden)]
    type __Visitor: EntityVisitor<Value = Self> + Default;
}

/// A [`TableEntity`] that names its table, with `#[table(name = "...")]` on the struct: the derive implements
/// it then, so that the struct's table is known from the type alone, as
/// `TableServiceClient::table_for::<Order>()` (feature `client`) opens it.
///
#[cfg_attr(feature = "derive", doc = "```")]
#[cfg_attr(not(feature = "derive"), doc = "```ignore")]
/// use table_model::{NamedTable, TableEntity};
///
/// #[derive(TableEntity)]
/// #[table(name = "Orders")]
/// struct Order {
///     #[table(partition_key)]
///     customer: String,
///     #[table(row_key)]
///     number: u32,
/// }
///
/// assert_eq!(Order::TABLE_NAME, "Orders");
/// ```
///
/// A struct without `#[table(name = "...")]` does not implement it, so asking for its table fails the build:
///
#[cfg_attr(feature = "derive", doc = "```compile_fail")]
#[cfg_attr(not(feature = "derive"), doc = "```ignore")]
/// use table_model::{NamedTable, TableEntity};
///
/// #[derive(TableEntity)]
/// struct Order {
///     #[table(partition_key)]
///     customer: String,
///     #[table(row_key)]
///     number: u32,
/// }
///
/// let _ = Order::TABLE_NAME;
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not name its table",
    label = "no #[table(name = \"...\")] on `{Self}`",
    note = "name the table on the struct, `#[table(name = \"...\")]`, or pass a `TableName`"
)]
pub trait NamedTable: TableEntity {
    /// The table named by `#[table(name = "...")]`, checked at compile time (a Storage Analytics name such as
    /// `$MetricsCapacityBlob` included).
    const TABLE_NAME: crate::TableName;
}

/// A group of properties that a [`TableEntity`] embeds with `#[table(flatten)]`, under a name prefix.
///
/// Derive it with `#[derive(TableProperties)]`, which takes the same field attributes as `TableEntity` except
/// the keys and the server metadata (a flattened struct has none of its own).
///
#[cfg_attr(feature = "derive", doc = "```")]
#[cfg_attr(not(feature = "derive"), doc = "```ignore")]
/// use table_model::{TableEntity, TableProperties};
///
/// #[derive(TableProperties, Debug, PartialEq)]
/// #[table(rename_all = "PascalCase")]
/// struct Address {
///     city: String,
///     zip: String,
/// }
///
/// #[derive(TableEntity, Debug, PartialEq)]
/// struct Customer {
///     #[table(partition_key)]
///     region: String,
///     #[table(row_key)]
///     id: u64,
///     #[table(flatten)] // prefix `Home`: properties `HomeCity` and `HomeZip`
///     home: Address,
///     #[table(flatten, prefix = "Work")]
///     office: Address,
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let c = Customer {
///     region: "eu".into(),
///     id: 1,
///     home: Address { city: "Lyon".into(), zip: "69001".into() },
///     office: Address { city: "Paris".into(), zip: "75001".into() },
/// };
/// let entity = c.to_entity()?;
/// assert_eq!(entity.get::<String>("HomeCity")?, "Lyon");
/// assert_eq!(entity.get::<String>("WorkZip")?, "75001");
/// assert_eq!(Customer::from_entity(entity)?, c);
/// # Ok(())
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be flattened into an entity",
    label = "does not implement `TableProperties`",
    note = "derive it: `#[derive(table_model::TableProperties)]` on the nested struct"
)]
pub trait TableProperties: Sized {
    /// The properties' schema, names without the prefix.
    const FIELDS: &'static [FieldSchema];

    /// The derive's `const` checks; not part of the API.
    #[doc(hidden)]
    const __CHECK: () = ();

    /// Writes the properties into `entity`, each name prefixed with `prefix`.
    ///
    /// # Errors
    /// As [`TableEntity::to_entity`].
    fn write_properties(&self, entity: &mut Entity, prefix: &str) -> Result<(), EntityError>;

    /// Reads the properties named `prefix` + name out of `entity`, removing them.
    ///
    /// # Errors
    /// As [`TableEntity::from_entity`].
    fn read_properties(entity: &mut Entity, prefix: &str) -> Result<Self, EntityError>;

    /// Writes the properties into a JSON body, each name prefixed with `prefix`.
    ///
    /// # Errors
    /// A value the writer cannot convert; the writer's own checks are reported by [`BodyWriter::finish`].
    fn write_json(&self, writer: &mut BodyWriter, prefix: &str) -> Result<(), EncodeError>;
}

/// A Rust type stored as one property: the field types `#[derive(TableEntity)]` accepts.
///
/// Implemented for the types of `docs/rules.md` §3.1: `i32`, `i16`, `i8`, `u16`, `u8` (`Edm.Int32`), `i64`, `u32`
/// (`Edm.Int64`), `f64`, `f32` (`Edm.Double`), `bool`, `String`, `Vec<u8>`, `uuid::Uuid`,
/// `chrono::DateTime<Utc>`, [`DateTime`](crate::DateTime), [`EdmString`](crate::EdmString),
/// [`EdmBinary`](crate::EdmBinary), [`EdmValue`] (a property of any type), `Option` of these, and enums deriving
/// [`TableEnum`]. Implement it for a newtype of your own to store it as one of the EDM types.
///
/// ```
/// use table_model::{EdmField, EdmType, EdmValue, ValueError};
///
/// struct Cents(i64);
///
/// impl EdmField for Cents {
///     const EDM_TYPE: Option<EdmType> = Some(EdmType::Int64);
///     fn to_edm(&self) -> Result<Option<EdmValue>, ValueError> {
///         Ok(Some(EdmValue::Int64(self.0)))
///     }
///     fn from_edm(value: EdmValue) -> Result<Self, ValueError> {
///         <i64 as EdmField>::from_edm(value).map(Cents)
///     }
/// }
/// # assert_eq!(Cents(5).to_edm().unwrap(), Some(EdmValue::Int64(5)));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be stored as a table property",
    label = "unsupported property type",
    note = "supported: bool, i8, i16, i32, u8, u16 (Edm.Int32); i64, u32 (Edm.Int64); f32, f64 (Edm.Double); String; Vec<u8>; uuid::Uuid; chrono::DateTime<Utc>; table_model::DateTime; table_model::EdmValue; enums deriving TableEnum; and Option of these",
    note = "store any serde type as a JSON string with `#[table(json)]`, or a struct's fields as properties with `#[table(flatten)]`"
)]
pub trait EdmField: Sized {
    /// The EDM type the value is stored as; `None` for [`EdmValue`], whose type is chosen per value.
    const EDM_TYPE: Option<EdmType>;

    /// Whether the property may be absent (`Option<T>`).
    const OPTIONAL: bool = false;

    /// Converts the value; `Ok(None)` leaves the property out (`Option::None`).
    ///
    /// # Errors
    /// When the value breaks its EDM type's limit.
    fn to_edm(&self) -> Result<Option<EdmValue>, ValueError>;

    /// Converts a stored value back.
    ///
    /// # Errors
    /// A value of another EDM type (except the lossless widenings of [`FromEdm`](crate::FromEdm)) or out of
    /// the Rust type's range.
    fn from_edm(value: EdmValue) -> Result<Self, ValueError>;

    /// The value of an absent property: `Some(None)` for `Option<T>`, `None` (a missing-property error) otherwise.
    fn absent() -> Option<Self> {
        None
    }

    /// Writes the value into a JSON request body. The default converts with [`to_edm`](EdmField::to_edm);
    /// the crate's types write directly, without an [`EdmValue`].
    ///
    /// # Errors
    /// When the value breaks its EDM type's limit; the writer's own checks are reported by
    /// [`BodyWriter::finish`].
    fn write_json(&self, writer: &mut BodyWriter, name: &str) -> Result<(), EncodeError> {
        match self.to_edm() {
            Ok(Some(value)) => {
                writer.property(name, &value);
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => Err(e.in_property(name).into()),
        }
    }

    /// The field named `name` of a derived struct, taken from `entity` (its generated `from_entity`): the
    /// property converted with [`from_edm`](EdmField::from_edm), else [`absent`](EdmField::absent), else an
    /// error naming the property. A method of the trait so that the generated call, `<T as EdmField>::__read`,
    /// is short and an unsupported type is reported once, on the field's type.
    #[doc(hidden)]
    #[inline]
    fn __read(entity: &mut Entity, name: &str) -> Result<Self, EntityError> {
        fields::read(entity, name, Self::from_edm, Self::absent)
    }

    /// The field named `prefix` + `name` of a derived struct once decoding is done (its generated visitor):
    /// the decoded value in `slot`, else [`absent`](EdmField::absent), else an error naming the property.
    #[doc(hidden)]
    #[inline]
    fn __finish(slot: Option<Self>, prefix: &str, name: &str) -> Result<Self, DecodeError> {
        fields::finish(slot, prefix, name, Self::absent)
    }
}

/// A Rust type stored as a PartitionKey or RowKey, in a string form whose order is the order of the values.
///
/// Implemented for `String`, [`PartitionKey`](crate::PartitionKey), [`RowKey`](crate::RowKey) (as they are);
/// the types of [`SortableKey`](crate::key::SortableKey), with its encodings: the integers (zero-padded to the
/// width of their maximum; signed ones offset so that negative numbers sort first), `uuid::Uuid` (lowercase
/// hyphenated), [`DateTime`](crate::DateTime) (.NET ticks in 19 digits, oldest first), and
/// `std::cmp::Reverse` of each (largest or newest first); `chrono::DateTime<Utc>` (as `DateTime`); and enums
/// deriving [`TableEnum`] (the variant name). Implement it for a type of your own; unlike `SortableKey`, this
/// trait is open, so the derive checks the key it returns.
///
/// ```
/// use table_model::KeyField;
/// assert_eq!(42u32.encode_key()?, "0000000042");
/// assert_eq!((-1i8).encode_key()?, "127");
/// assert_eq!(i8::decode_key("127")?, -1);
/// assert!(u32::decode_key("42").is_err()); // not the fixed width
/// # Ok::<(), table_model::ValueError>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a partition or row key field",
    label = "unsupported key type",
    note = "key fields may be String, PartitionKey, RowKey, an integer, uuid::Uuid, table_model::DateTime, chrono::DateTime<Utc>, std::cmp::Reverse of an integer, Uuid or DateTime, an enum deriving TableEnum, or a type implementing table_model::KeyField"
)]
pub trait KeyField: Sized {
    /// How the value is written as a key.
    const ENCODING: KeyEncoding;

    /// The key string, borrowed when the value is already one. The caller validates it as a PartitionKey or
    /// RowKey.
    ///
    /// # Errors
    /// When the value has no key form (such as a date outside the service's range).
    fn encode_key(&self) -> Result<Cow<'_, str>, ValueError>;

    /// Parses a key string written by [`KeyField::encode_key`].
    ///
    /// # Errors
    /// When the key is not in this type's form.
    fn decode_key(key: &str) -> Result<Self, ValueError>;

    /// [`KeyField::decode_key`] from an owned key string, which a `String` key takes without copying. The
    /// default borrows it for [`KeyField::decode_key`].
    ///
    /// # Errors
    /// When the key is not in this type's form.
    fn decode_key_string(key: String) -> Result<Self, ValueError> {
        Self::decode_key(&key)
    }
}

/// An instant stored as a RowKey that sorts newest first: `DateTime.MaxValue.Ticks - ticks` in 19 digits
/// (`docs/rules.md` §6.2), for `#[table(row_key, reverse_chronological)]`.
///
/// ```
/// use table_model::{DateTime, ReverseChronologicalKey};
/// assert_eq!(DateTime::MAX.encode_reverse_key()?, "0000000000000000000");
/// let t = DateTime::UNIX_EPOCH;
/// assert_eq!(DateTime::decode_reverse_key(&t.encode_reverse_key()?)?, t);
/// # Ok::<(), table_model::ValueError>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a reverse-chronological key",
    label = "not an instant",
    note = "#[table(reverse_chronological)] needs a field of type table_model::DateTime or chrono::DateTime<Utc>"
)]
pub trait ReverseChronologicalKey: Sized {
    /// The key string.
    ///
    /// # Errors
    /// When the instant is outside the service's range.
    fn encode_reverse_key(&self) -> Result<String, ValueError>;

    /// Parses a key written by [`ReverseChronologicalKey::encode_reverse_key`].
    ///
    /// # Errors
    /// When the key is not 19 digits within the range.
    fn decode_reverse_key(key: &str) -> Result<Self, ValueError>;
}

/// An instant stored as a unique time key, `{ticks:019}-{tie_breaker:010}` (or its newest-first form), for
/// `#[table(row_key, unique)]` and `#[table(partition_key, unique)]`: [`DateTime`](crate::DateTime) and
/// `chrono::DateTime<Utc>`.
///
/// The derive writes the key with [`key::chronological_unique`](crate::key::chronological_unique) or
/// [`key::reverse_chronological_unique`](crate::key::reverse_chronological_unique) and reads the instant back,
/// whatever the tie-breaker; see the [attribute reference](macro@crate::TableEntity) for where the tie-breaker
/// comes from.
///
/// ```
/// use table_model::{DateTime, UniqueTimeKey};
/// let t = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
/// assert_eq!(t.to_instant()?, "2023-11-14T22:13:20Z".parse::<DateTime>()?);
/// assert_eq!(<chrono::DateTime<chrono::Utc>>::from_instant(t.to_instant()?), t);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a unique time key",
    label = "not an instant",
    note = "#[table(unique)] needs a field of type table_model::DateTime or chrono::DateTime<Utc>"
)]
pub trait UniqueTimeKey: Sized {
    /// The instant, in the service's range.
    ///
    /// # Errors
    /// When the instant is outside 1601-01-01 to 9999-12-31.
    fn to_instant(&self) -> Result<crate::DateTime, ValueError>;

    /// The field value of an instant read from a key.
    fn from_instant(instant: crate::DateTime) -> Self;
}

/// A fieldless enum stored as its variant name (an `Edm.String`, or a key).
///
/// Derive it with `#[derive(TableEnum)]`; `#[table(rename = "...")]` on a variant and `#[table(rename_all =
/// "...")]` on the enum choose the stored names. Reading a name that is not a variant is an error naming the
/// property and the value.
///
#[cfg_attr(feature = "derive", doc = "```")]
#[cfg_attr(not(feature = "derive"), doc = "```ignore")]
/// use table_model::{EdmField, EdmValue, TableEnum};
///
/// #[derive(TableEnum, Debug, PartialEq)]
/// #[table(rename_all = "snake_case")]
/// enum Status {
///     Pending,
///     InTransit,
///     #[table(rename = "done")]
///     Delivered,
/// }
///
/// assert_eq!(Status::VARIANTS, ["pending", "in_transit", "done"]);
/// assert_eq!(Status::InTransit.as_str(), "in_transit");
/// assert_eq!(Status::from_name("done"), Some(Status::Delivered));
/// let err = Status::from_edm(EdmValue::try_from("lost")?).unwrap_err();
/// assert_eq!(err.to_string(), "unknown variant `lost` of `Status`; expected one of `pending`, `in_transit`, `done`");
/// # Ok::<(), table_model::ValueError>(())
/// ```
pub trait TableEnum: Sized + 'static {
    /// The enum's name, for error messages.
    const NAME: &'static str;

    /// The stored names, in declaration order.
    const VARIANTS: &'static [&'static str];

    /// The stored name of this variant.
    fn as_str(&self) -> &'static str;

    /// The variant with this stored name (case-sensitive).
    fn from_name(name: &str) -> Option<Self>;
}

/// A field that receives the server-set `Timestamp` of an entity that was read (`#[table(timestamp)]`); never
/// written.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold the entity's Timestamp",
    label = "not an optional instant",
    note = "#[table(timestamp)] needs a field of type Option<table_model::DateTime> or Option<chrono::DateTime<Utc>>"
)]
pub trait TimestampField: Sized {
    /// The field's value for the entity's timestamp, `None` for an entity not read from the service.
    fn from_timestamp(timestamp: Option<crate::DateTime>) -> Self;
}

/// A field that receives the ETag of an entity that was read (`#[table(etag)]`); never written.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold the entity's ETag",
    label = "not an optional ETag",
    note = "#[table(etag)] needs a field of type Option<table_model::ETag>"
)]
pub trait ETagField: Sized {
    /// The field's value for the entity's ETag, `None` for an entity not read from the service.
    fn from_etag(etag: Option<&crate::ETag>) -> Self;

    /// The ETag the field holds.
    fn etag(&self) -> Option<&crate::ETag>;
}
