//! The static schema of a [`TableEntity`](crate::TableEntity): what `#[derive(TableEntity)]` knows about a
//! struct, available at run time for `$select`, documentation and validating dynamic entities.

use crate::edm::error::{ValueError, ValueErrorKind};
use crate::edm::{EdmType, EdmValue};
use crate::entity::error::{EntityError, EntityErrorKind};
use crate::entity::Entity;
use crate::key::error::KeyKind;
use crate::name::TableName;
use std::borrow::Cow;
use table_model_rules::RuleSet;

/// The schema of a [`TableEntity`](crate::TableEntity), built by the derive as a constant.
///
#[cfg_attr(feature = "derive", doc = "```")]
#[cfg_attr(not(feature = "derive"), doc = "```ignore")]
/// use table_model::{EdmType, KeyEncoding, KeySource, TableEntity};
///
/// #[derive(TableEntity)]
/// #[table(partition_key = "config")]
/// struct Setting {
///     #[table(row_key)]
///     name: String,
///     #[table(rename = "Value")]
///     value: Option<i64>,
/// }
///
/// let schema = Setting::SCHEMA;
/// assert_eq!(schema.table_name(), None);
/// assert_eq!(schema.partition_key().source(), KeySource::Constant("config"));
/// assert_eq!(schema.row_key().source(), KeySource::Field { field: "name", encoding: KeyEncoding::Text });
/// let value = schema.property("Value").unwrap();
/// assert_eq!((value.edm_type(), value.is_optional()), (Some(EdmType::Int64), true));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Schema {
    table_name: Option<&'static str>,
    partition_key: KeySchema,
    row_key: KeySchema,
    fields: &'static [FieldSchema],
    deny_unknown_properties: bool,
    rules: RuleSet,
}

impl Schema {
    /// Built by the derive, which has checked every name; not part of the API.
    #[doc(hidden)]
    pub const fn __new(
        table_name: Option<&'static str>,
        partition_key: KeySource,
        row_key: KeySource,
        fields: &'static [FieldSchema],
        deny_unknown_properties: bool,
    ) -> Self {
        Schema {
            table_name,
            partition_key: KeySchema { kind: KeyKind::Partition, source: partition_key },
            row_key: KeySchema { kind: KeyKind::Row, source: row_key },
            fields,
            deny_unknown_properties,
            rules: RuleSet::Storage,
        }
    }

    /// The schema of a struct with `#[table(service = "...")]`; not part of the API.
    #[doc(hidden)]
    #[must_use]
    pub const fn __with_rules(mut self, rules: RuleSet) -> Self {
        self.rules = rules;
        self
    }

    /// The rules the struct's property names were checked against at compile time: `#[table(service =
    /// "...")]`, [`RuleSet::Storage`] by default. With `"cosmos"` or `"portable"`, no property name is one
    /// that Cosmos DB for Table reserves (`docs/rules.md` §13).
    ///
    #[cfg_attr(feature = "derive", doc = "```")]
    #[cfg_attr(not(feature = "derive"), doc = "```ignore")]
    /// use table_model::{RuleSet, TableEntity};
    ///
    /// #[derive(TableEntity)]
    /// #[table(service = "portable", partition_key = "settings")]
    /// struct Setting {
    ///     #[table(row_key)]
    ///     name: String,
    ///     identifier: String, // `Id` or `ID` would not build: Cosmos DB reserves them
    /// }
    ///
    /// #[derive(TableEntity)]
    /// #[table(partition_key = "settings")]
    /// struct Plain {
    ///     #[table(row_key)]
    ///     name: String,
    ///     #[table(rename = "ID")]
    ///     id: String, // fine on Azure Table Storage
    /// }
    ///
    /// assert_eq!(Setting::SCHEMA.rules(), RuleSet::Portable);
    /// assert_eq!(Plain::SCHEMA.rules(), RuleSet::Storage);
    /// assert!(Setting::SCHEMA.rules().check_property_name("Id").is_err());
    /// ```
    pub const fn rules(&self) -> RuleSet {
        self.rules
    }

    /// The table given by `#[table(name = "...")]` (checked at compile time; a Storage Analytics name such as
    /// `$MetricsCapacityBlob` is accepted too).
    pub fn table_name(&self) -> Option<TableName> {
        let name = self.table_name?;
        if name.starts_with('$') {
            TableName::analytics(name).ok()
        } else {
            Some(TableName::from_static(name))
        }
    }

    /// How the PartitionKey is made.
    pub const fn partition_key(&self) -> KeySchema {
        self.partition_key
    }

    /// How the RowKey is made.
    pub const fn row_key(&self) -> KeySchema {
        self.row_key
    }

    /// The stored fields in declaration order, flattened groups as one entry each.
    pub const fn fields(&self) -> &'static [FieldSchema] {
        self.fields
    }

    /// Whether reading refuses properties the struct does not have (`#[table(deny_unknown_properties)]`).
    pub const fn denies_unknown_properties(&self) -> bool {
        self.deny_unknown_properties
    }

    /// Every stored property other than the keys, flattened groups expanded, in declaration order.
    pub fn properties(&self) -> impl Iterator<Item = SchemaProperty> {
        let mut out = Vec::new();
        collect(self.fields, "", &mut out);
        out.into_iter()
    }

    /// The property with this name (case-sensitive), looking into flattened groups.
    pub fn property(&self, name: &str) -> Option<SchemaProperty> {
        find(self.fields, name).map(|p| SchemaProperty { name: Cow::Owned(name.to_owned()), schema: p })
    }

    /// The EDM type the struct reads the property `name` as, or `None` for a property it does not have or
    /// an [`EdmValue`] field. Looks into flattened groups without allocating.
    pub fn edm_type_of(&self, name: &str) -> Option<EdmType> {
        find(self.fields, name).and_then(|p| p.edm_type)
    }

    /// The `$select` list: `PartitionKey`, `RowKey`, then every property, comma-separated (`docs/rules.md` §7.3).
    /// Add `Timestamp` yourself when a field wants it.
    pub fn select(&self) -> String {
        let mut out = String::from("PartitionKey,RowKey");
        for p in self.properties() {
            out.push(',');
            out.push_str(p.name());
        }
        out
    }

    /// Checks a dynamic entity against the schema without converting it: every required property present,
    /// every known property of a type the struct reads (the lossless widenings included), and, when the struct
    /// denies unknown properties, no other property. Ranges (an `Int32` of 300 for a `u8` field) are checked
    /// when converting.
    ///
    /// # Errors
    /// The first problem, naming the property.
    pub fn validate(&self, entity: &Entity) -> Result<(), EntityError> {
        for p in self.properties() {
            match entity.value(p.name()) {
                None if !p.is_optional() => {
                    return Err(EntityError::new(
                        EntityErrorKind::MissingProperty { property: p.name().to_owned() },
                        Some(p.name()),
                    ))
                }
                None => {}
                Some(value) => {
                    if let Some(expected) = p.edm_type()
                        && !reads_as(value, expected)
                    {
                        let kind = ValueErrorKind::TypeMismatch { expected, found: value.edm_type() };
                        return Err(ValueError::new(kind).in_property(p.name()).into());
                    }
                }
            }
        }
        if self.deny_unknown_properties
            && let Some((name, _)) = entity.iter().find(|(n, _)| find(self.fields, n).is_none())
        {
            return Err(super::fields::unknown_property(name.as_str()));
        }
        Ok(())
    }
}

/// The schema types the values of a `nometadata` response: the EDM type of each property the struct has.
///
#[cfg_attr(feature = "derive", doc = "```")]
#[cfg_attr(not(feature = "derive"), doc = "```ignore")]
/// use table_model::json::decode_entity;
/// use table_model::{EdmValue, TableEntity};
///
/// #[derive(TableEntity)]
/// #[table(partition_key = "p", row_key = "r")]
/// struct Counter { hits: i64 }
///
/// // Without annotations an Int64 is a plain string; the schema types it.
/// let e = decode_entity(br#"{"PartitionKey":"p","RowKey":"r","hits":"12"}"#, Some(&Counter::SCHEMA))?;
/// assert_eq!(e.value("hits"), Some(&EdmValue::Int64(12)));
/// # Ok::<(), table_model::DecodeError>(())
/// ```
impl crate::json::TypeHints for Schema {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.edm_type_of(property)
    }
}

/// Whether a stored value converts to a field of EDM type `expected`: the same type, or an `Int32` into
/// `Int64` or `Double`, the lossless widenings of [`FromEdm`](crate::FromEdm).
fn reads_as(value: &EdmValue, expected: EdmType) -> bool {
    let found = value.edm_type();
    found == expected || (found == EdmType::Int32 && matches!(expected, EdmType::Int64 | EdmType::Double))
}

fn collect(fields: &'static [FieldSchema], prefix: &str, out: &mut Vec<SchemaProperty>) {
    for f in fields {
        match f {
            FieldSchema::Property(p) => {
                let name =
                    if prefix.is_empty() { Cow::Borrowed(p.name) } else { Cow::Owned(format!("{prefix}{}", p.name)) };
                out.push(SchemaProperty { name, schema: p });
            }
            FieldSchema::Flatten { prefix: inner, fields, .. } => collect(fields, &format!("{prefix}{inner}"), out),
        }
    }
}

pub(crate) fn find(fields: &'static [FieldSchema], name: &str) -> Option<&'static PropertySchema> {
    fields.iter().find_map(|f| match f {
        FieldSchema::Property(p) => (p.name == name).then_some(p),
        FieldSchema::Flatten { prefix, fields, .. } => name.strip_prefix(prefix).and_then(|rest| find(fields, rest)),
    })
}

/// One entry of [`Schema::fields`].
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum FieldSchema {
    /// A field stored as one property.
    Property(PropertySchema),
    /// A `#[table(flatten)]` field: the properties of a [`TableProperties`](crate::TableProperties) struct,
    /// each name prefixed.
    Flatten {
        /// The Rust field name.
        field: &'static str,
        /// The prefix of every property name in the group.
        prefix: &'static str,
        /// The group's fields, names without the prefix.
        fields: &'static [FieldSchema],
    },
}

/// A field stored as one property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PropertySchema {
    name: &'static str,
    field: &'static str,
    edm_type: Option<EdmType>,
    optional: bool,
}

impl PropertySchema {
    /// Built by the derive; not part of the API.
    #[doc(hidden)]
    pub const fn __new(name: &'static str, field: &'static str, edm_type: Option<EdmType>, optional: bool) -> Self {
        PropertySchema { name, field, edm_type, optional }
    }

    /// The property name, after `rename`/`rename_all` (without a flatten prefix).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The Rust field name.
    pub const fn field(&self) -> &'static str {
        self.field
    }

    /// The stored EDM type; `None` for an [`EdmValue`] field, which takes any.
    pub const fn edm_type(&self) -> Option<EdmType> {
        self.edm_type
    }

    /// Whether the property may be absent: an `Option` field, or one with `#[table(default)]`.
    pub const fn is_optional(&self) -> bool {
        self.optional
    }
}

/// A property of [`Schema::properties`]: a [`PropertySchema`] with its full name, flatten prefixes included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProperty {
    name: Cow<'static, str>,
    schema: &'static PropertySchema,
}

impl SchemaProperty {
    /// The full property name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Rust field name (of the innermost struct, for a flattened property).
    pub fn field(&self) -> &'static str {
        self.schema.field
    }

    /// The stored EDM type; `None` for an [`EdmValue`] field.
    pub fn edm_type(&self) -> Option<EdmType> {
        self.schema.edm_type
    }

    /// Whether the property may be absent.
    pub fn is_optional(&self) -> bool {
        self.schema.optional
    }
}

/// How one of the two keys is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySchema {
    kind: KeyKind,
    source: KeySource,
}

impl KeySchema {
    /// Which key this is.
    pub const fn kind(&self) -> KeyKind {
        self.kind
    }

    /// Where its value comes from.
    pub const fn source(&self) -> KeySource {
        self.source
    }
}

/// Where a key's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeySource {
    /// A constant given at struct level, such as `#[table(partition_key = "config")]`.
    Constant(&'static str),
    /// A field.
    Field {
        /// The Rust field name.
        field: &'static str,
        /// How the field's value is written as a key.
        encoding: KeyEncoding,
    },
}

/// How a [`KeyField`](crate::KeyField) value is written as a key string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyEncoding {
    /// The string as it is.
    Text,
    /// An integer in decimal, zero-padded to `width` digits; a signed one offset by its type's minimum so that
    /// the order of the strings is the order of the numbers.
    Integer {
        /// The number of digits.
        width: usize,
        /// Whether the type is signed (and the value offset).
        signed: bool,
    },
    /// A UUID, lowercase hyphenated.
    Uuid,
    /// An instant as .NET ticks in 19 digits: oldest first.
    Chronological,
    /// An instant as `DateTime.MaxValue.Ticks - ticks` in 19 digits: newest first.
    ReverseChronological,
    /// An instant as .NET ticks in 19 digits, `-` and a tie-breaker in 10 digits: oldest first, then by
    /// tie-breaker (`#[table(unique)]`, [`key::chronological_unique`](crate::key::chronological_unique)).
    ChronologicalUnique,
    /// The newest-first form of [`ChronologicalUnique`](KeyEncoding::ChronologicalUnique)
    /// (`#[table(reverse_chronological, unique)]`,
    /// [`key::reverse_chronological_unique`](crate::key::reverse_chronological_unique)).
    ReverseChronologicalUnique,
    /// The reverse of another encoding (`std::cmp::Reverse<T>`): largest or newest first.
    Reverse(&'static KeyEncoding),
    /// The variant name of a [`TableEnum`](crate::TableEnum).
    Variant,
    /// A [`KeyField`](crate::KeyField) implemented outside this crate.
    Custom,
}
