//! Decoding: `serde_json` tokenizes; the seeds below collect one entity object's members, pair each type
//! annotation with its value, and hand the typed values to an [`EntityVisitor`]. [`decode_entity`] and
//! [`decode_query`] are that core with the visitor that builds an [`Entity`].

mod seed;
pub(super) mod value;

use super::error::{DecodeError, DecodeErrorKind};
use super::TypeHints;
use crate::edm::datetime::DateTime;
use crate::edm::{EdmType, EdmValue};
use crate::entity::{ETag, Entity};
use crate::key::{PartitionKey, RowKey};
use crate::name::PropertyName;
use seed::{EntitySeed, QuerySeed, Scratch};
use serde::de::{self, DeserializeSeed};
use table_model_rules::KeyKind;

/// The system members of an entity: its keys, and what the server sets. Handed to
/// [`EntityVisitor::begin`] before any property.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SystemProperties {
    /// `PartitionKey`, validated; `None` when the response leaves it out (a projection without it).
    pub partition_key: Option<PartitionKey>,
    /// `RowKey`, validated; `None` when the response leaves it out.
    pub row_key: Option<RowKey>,
    /// `Timestamp`, when present.
    pub timestamp: Option<DateTime>,
    /// `odata.etag`, when present (minimal and full metadata).
    pub etag: Option<ETag>,
    /// How many times [`EntityVisitor::property`] will be called (non-null properties), to size collections.
    pub property_count: usize,
}

/// Receives one decoded entity: the streaming core of [`decode_entity`] and [`decode_query`], for decoding
/// into any type without building an [`Entity`] (what `#[derive(TableEntity)]` generates).
///
/// The decoder reads the whole entity object first, because a type annotation may follow its value. It then
/// calls [`begin`](EntityVisitor::begin) once, [`property`](EntityVisitor::property) once per non-null
/// property in document order, and [`end`](EntityVisitor::end). By then every rule of the [module
/// docs](crate::json) has been checked: names are valid property names, no name repeats, keys are valid, and
/// each value has been typed by its annotation, [`edm_type`](EntityVisitor::edm_type) or its JSON form.
/// An error a method returns is reported with the property's name when it has none.
///
/// ```
/// use table_model::json::{decode_entity_with, EntityVisitor, SystemProperties};
/// use table_model::{DecodeError, EdmType, EdmValue, FromEdm};
///
/// #[derive(Default)]
/// struct Visits { row_key: String, count: Option<i64> }
///
/// impl EntityVisitor for Visits {
///     type Value = Visits;
///     fn edm_type(&self, property: &str) -> Option<EdmType> {
///         (property == "Count").then_some(EdmType::Int64)
///     }
///     fn begin(&mut self, system: SystemProperties) -> Result<(), DecodeError> {
///         self.row_key = system.row_key.map(|k| k.into_string()).unwrap_or_default();
///         Ok(())
///     }
///     fn property(&mut self, name: &str, value: EdmValue) -> Result<(), DecodeError> {
///         if name == "Count" {
///             self.count = Some(i64::from_edm(value)?);
///         }
///         Ok(())
///     }
///     fn end(self) -> Result<Visits, DecodeError> {
///         Ok(self)
///     }
/// }
///
/// // nometadata: the Int64 is a plain string, typed by `edm_type`.
/// let v = decode_entity_with(br#"{"PartitionKey":"p","RowKey":"r","Count":"9007199254740993"}"#, Visits::default())?;
/// assert_eq!((v.row_key.as_str(), v.count), ("r", Some(9_007_199_254_740_993)));
/// # Ok::<(), DecodeError>(())
/// ```
pub trait EntityVisitor {
    /// What the visitor produces.
    type Value;

    /// The type expected for a property without an annotation (see [`TypeHints`]); `None` types it by its
    /// JSON form. The default expects nothing.
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        let _ = property;
        None
    }

    /// Whether `property` is one of the visitor's own property names and known to be a valid one, as the
    /// derive checks its names at compile time. The decoder skips checking such a name again; it checks every
    /// other name as always. The default knows none.
    ///
    /// Returning `true` for a name that is not a valid property name lets that name through unchecked.
    fn is_known_property(&self, property: &str) -> bool {
        let _ = property;
        false
    }

    /// Receives the keys, `Timestamp` and ETag, before any property.
    ///
    /// # Errors
    /// Whatever the visitor refuses, such as a missing key.
    fn begin(&mut self, system: SystemProperties) -> Result<(), DecodeError>;

    /// Receives one property, typed.
    ///
    /// # Errors
    /// Whatever the visitor refuses, such as a value of the wrong type.
    fn property(&mut self, name: &str, value: EdmValue) -> Result<(), DecodeError>;

    /// Called after the last property.
    ///
    /// # Errors
    /// Whatever the visitor refuses, such as a missing property.
    fn end(self) -> Result<Self::Value, DecodeError>
    where
        Self: Sized;
}

/// Decodes a single-entity response (the bare entity object) at any metadata level.
///
/// ```
/// use table_model::json::decode_entity;
/// let json = br#"{
///     "odata.metadata": "https://myaccount.table.core.windows.net/$metadata#Customers/@Element",
///     "odata.etag": "W/\"0x5B168C7B6E589D2\"",
///     "PartitionKey": "Customer", "RowKey": "Name",
///     "Timestamp": "2013-08-22T00:20:16.3134645Z",
///     "Quantity@odata.type": "Edm.Int64", "Quantity": "255"
/// }"#;
/// let e = decode_entity(json, None)?;
/// assert_eq!(e.etag().unwrap().as_str(), r#"W/"0x5B168C7B6E589D2""#);
/// assert_eq!(e.timestamp().unwrap().to_string(), "2013-08-22T00:20:16.3134645Z");
/// assert_eq!(e.get::<i64>("Quantity")?, 255);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// Invalid JSON, or any rule of the [module docs](crate::json), naming the property.
pub fn decode_entity(json: &[u8], hints: Option<&dyn TypeHints>) -> Result<Entity, DecodeError> {
    decode_entity_with(json, EntityBuilder { hints, entity: None })
}

/// Decodes a query response page, `{"odata.metadata": ..., "value": [...]}`, at any metadata level.
///
/// ```
/// use table_model::json::decode_query;
/// let page = br#"{"odata.metadata":"https://a.table.core.windows.net/$metadata#T","value":[
///     {"odata.etag":"W/\"1\"","PartitionKey":"p","RowKey":"1","N":1},
///     {"odata.etag":"W/\"2\"","PartitionKey":"p","RowKey":"2","N":2.5}
/// ]}"#;
/// let entities = decode_query(page, None)?;
/// assert_eq!(entities.len(), 2);
/// assert_eq!(entities[1].get::<f64>("N")?, 2.5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// Invalid JSON, a page without `value`, a member other than `value` and `odata.*`, a member given twice, or
/// any rule of the [module docs](crate::json) in an entity, naming the entity's index and the property.
pub fn decode_query(json: &[u8], hints: Option<&dyn TypeHints>) -> Result<Vec<Entity>, DecodeError> {
    decode_query_with(json, || EntityBuilder { hints, entity: None })
}

/// Decodes a single-entity response with a visitor: the core of [`decode_entity`].
///
/// # Errors
/// As [`decode_entity`], and whatever the visitor returns.
pub fn decode_entity_with<V: EntityVisitor>(json: &[u8], mut visitor: V) -> Result<V::Value, DecodeError> {
    let ((), rest) = run(json, EntityTask(&mut visitor))?;
    // The visitor ends here, once the object has been read (see `EntitySeed`), and its value is returned as
    // `end` makes it: a derived struct's visitor and value are a few hundred bytes, and each move is a copy.
    match rest {
        Ok(()) => visitor.end(),
        // The entity's own error first: it comes before what follows the entity.
        Err(e) => Err(visitor.end().err().unwrap_or(e)),
    }
}

/// Decodes a query response page with a fresh visitor per entity: the core of [`decode_query`].
///
/// `new_visitor` may be called once more than there are entities (serde asks for the next element's seed
/// before it knows the array has ended); an unused visitor is dropped.
///
/// # Errors
/// As [`decode_query`], and whatever a visitor returns.
pub fn decode_query_with<V: EntityVisitor>(
    json: &[u8],
    new_visitor: impl FnMut() -> V,
) -> Result<Vec<V::Value>, DecodeError> {
    let (entities, rest) = run(json, QueryTask(new_visitor))?;
    rest.map(|()| entities)
}

/// One decoding job, run over whichever `serde_json` reader [`run`] picks.
trait Task<'de> {
    type Output;

    fn read<R: serde_json::de::Read<'de>>(
        self,
        de: &mut serde_json::Deserializer<R>,
        error: &mut Option<DecodeError>,
    ) -> Result<Self::Output, serde_json::Error>;
}

/// A single entity, read into the visitor up to its `end`, which [`decode_entity_with`] calls.
struct EntityTask<'v, V>(&'v mut V);

impl<'de, V: EntityVisitor> Task<'de> for EntityTask<'_, V> {
    type Output = ();

    fn read<R: serde_json::de::Read<'de>>(
        self,
        de: &mut serde_json::Deserializer<R>,
        error: &mut Option<DecodeError>,
    ) -> Result<(), serde_json::Error> {
        let mut scratch = Scratch::new();
        EntitySeed { visitor: self.0, scratch: &mut scratch, error, index: None }.deserialize(de)
    }
}

struct QueryTask<F>(F);

impl<'de, V: EntityVisitor, F: FnMut() -> V> Task<'de> for QueryTask<F> {
    type Output = Vec<V::Value>;

    fn read<R: serde_json::de::Read<'de>>(
        self,
        de: &mut serde_json::Deserializer<R>,
        error: &mut Option<DecodeError>,
    ) -> Result<Vec<V::Value>, serde_json::Error> {
        QuerySeed { new_visitor: self.0, error }.deserialize(de)
    }
}

/// What follows the JSON value: `Ok` for nothing but whitespace. Reported after any error the caller still
/// finds in the value, which comes first in the input.
type Rest = Result<(), DecodeError>;

/// Runs a task over the input, and checks the end of the input. An error recorded by the seeds is the typed
/// error; otherwise the error is `serde_json`'s.
///
/// UTF-8 is checked once for the whole input, which is faster than `serde_json` checking each string; input
/// that is not UTF-8 goes to `serde_json`'s byte reader, which reports where.
fn run<'de, T: Task<'de>>(json: &'de [u8], task: T) -> Result<(T::Output, Rest), DecodeError> {
    let mut error = None;
    let result = match std::str::from_utf8(json) {
        Ok(text) => {
            let mut de = serde_json::Deserializer::from_str(text);
            task.read(&mut de, &mut error).map(|output| (output, de.end()))
        }
        Err(_) => {
            let mut de = serde_json::Deserializer::from_slice(json);
            task.read(&mut de, &mut error).map(|output| (output, de.end()))
        }
    };
    match result {
        Ok((output, rest)) => Ok((output, rest.map_err(|e| invalid_json(&e)))),
        Err(e) => Err(error.take().unwrap_or_else(|| invalid_json(&e))),
    }
}

fn invalid_json(e: &serde_json::Error) -> DecodeError {
    let (line, column) = (e.line(), e.column());
    let text = e.to_string();
    let suffix = format!(" at line {line} column {column}");
    let message = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
    DecodeError::new(DecodeErrorKind::InvalidJson { line, column, message })
}

/// Records a typed error for [`run`] and returns the `serde` error that stops `serde_json`.
fn fail<E: de::Error>(slot: &mut Option<DecodeError>, error: DecodeError) -> E {
    *slot = Some(error);
    E::custom("entity decoding stopped")
}

/// The visitor behind [`decode_entity`] and [`decode_query`].
struct EntityBuilder<'h> {
    hints: Option<&'h dyn TypeHints>,
    entity: Option<Entity>,
}

impl EntityVisitor for EntityBuilder<'_> {
    type Value = Entity;

    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.hints.and_then(|h| h.edm_type(property))
    }

    fn begin(&mut self, system: SystemProperties) -> Result<(), DecodeError> {
        let partition_key = system.partition_key.ok_or_else(|| DecodeError::missing_key(KeyKind::Partition))?;
        let row_key = system.row_key.ok_or_else(|| DecodeError::missing_key(KeyKind::Row))?;
        let mut entity = Entity::new(partition_key, row_key);
        entity.set_server_metadata(system.timestamp, system.etag);
        entity.reserve(system.property_count);
        self.entity = Some(entity);
        Ok(())
    }

    fn property(&mut self, name: &str, value: EdmValue) -> Result<(), DecodeError> {
        let entity = self.entity.as_mut().ok_or_else(|| DecodeError::custom("property before begin"))?;
        // The core has checked the name and that it is not repeated.
        entity.push_new(PropertyName::from_checked(name.to_owned()), value)?;
        Ok(())
    }

    fn end(self) -> Result<Entity, DecodeError> {
        self.entity.ok_or_else(|| DecodeError::custom("end before begin"))
    }
}
