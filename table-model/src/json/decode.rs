//! Decoding: `serde_json` tokenizes; the seeds below collect one entity object's members, pair each type
//! annotation with its value, and hand the typed values to an [`EntityVisitor`]. [`decode_entity`] and
//! [`decode_query`] are that core with the visitor that builds an [`Entity`].

use super::error::{DecodeError, DecodeErrorKind};
use super::{NameFilter, NameHashes, TypeHints};
use crate::edm::datetime::{eight_digits, DateTime};
use crate::edm::error::ValueErrorKind;
use crate::edm::{EdmBinary, EdmString, EdmType, EdmValue};
use crate::entity::{ETag, Entity};
use crate::key::error::KeyError;
use crate::key::{PartitionKey, RowKey};
use crate::limits::MAX_CUSTOM_PROPERTIES;
use crate::name::error::PropertyNameError;
use crate::name::PropertyName;
use base64::Engine as _;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use table_model_rules::{property_name, KeyKind};
use uuid::Uuid;

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

/// A member value as JSON gave it, before typing. Strings borrow from the input unless they had escapes.
#[derive(Debug)]
enum Raw<'de> {
    Null,
    Bool(bool),
    /// An integer literal that fits 64 bits (serde_json hands larger ones over as floats).
    Int(JsonInt),
    /// A number with `.` or an exponent.
    Float(f64),
    Str(Cow<'de, str>),
}

/// A JSON integer as serde_json reads it: negative ones as `i64`, the others as `u64`.
#[derive(Debug, Clone, Copy)]
enum JsonInt {
    Negative(i64),
    Positive(u64),
}

impl JsonInt {
    fn to_i32(self) -> Option<i32> {
        match self {
            JsonInt::Negative(v) => i32::try_from(v).ok(),
            JsonInt::Positive(v) => i32::try_from(v).ok(),
        }
    }

    fn to_i64(self) -> Option<i64> {
        match self {
            JsonInt::Negative(v) => Some(v),
            JsonInt::Positive(v) => i64::try_from(v).ok(),
        }
    }

    /// Rounds to the nearest double, as parsing the same digits as a float would.
    fn to_f64(self) -> f64 {
        match self {
            JsonInt::Negative(v) => v as f64,
            JsonInt::Positive(v) => v as f64,
        }
    }
}

impl Raw<'_> {
    /// The value as an error message shows it: "JSON string `abc`".
    fn describe(&self) -> String {
        match self {
            Raw::Null => "JSON null".to_owned(),
            Raw::Bool(b) => format!("JSON {b}"),
            Raw::Int(JsonInt::Negative(i)) => format!("JSON number `{i}`"),
            Raw::Int(JsonInt::Positive(i)) => format!("JSON number `{i}`"),
            Raw::Float(f) => format!("JSON number `{f:?}`"),
            Raw::Str(s) => {
                const MAX_CHARS: usize = 40;
                match s.char_indices().nth(MAX_CHARS) {
                    Some((cut, _)) => format!("JSON string `{}…` ({} bytes)", &s[..cut], s.len()),
                    None => format!("JSON string `{s}`"),
                }
            }
        }
    }
}

/// A custom property of the object being read.
struct Member<'de> {
    name: Cow<'de, str>,
    value: Raw<'de>,
    annotation: Option<EdmType>,
}

/// An `<Name>@odata.type` annotation of a custom property, and how many members preceded it.
struct Annotation<'de> {
    target: Cow<'de, str>,
    edm_type: EdmType,
    position: usize,
}

/// The buffers of one entity object, reused across the entities of a query page.
struct Scratch<'de> {
    members: Vec<Member<'de>>,
    /// Annotations not paired as they were read: those after their value, or not next to it.
    annotations: Vec<Annotation<'de>>,
    /// The property names of an object with more than [`SCAN_MAX`] properties, for the duplicate check.
    property_hashes: NameHashes,
    /// The `odata.*` names other than `odata.etag` (which has its own slot), for the duplicate check.
    odata_names: NameSet<'de>,
    /// How many members have a value (are not `null`), counted once an object has more members than the
    /// property limit.
    values: Option<usize>,
}

impl<'de> Scratch<'de> {
    fn new() -> Self {
        const _: () = assert!(std::mem::size_of::<Member<'static>>() <= 64);
        // 12 members of 64 bytes stay under glibc's 1 KiB small-allocation bound, which a busy decoder feels.
        Scratch {
            members: Vec::with_capacity(12),
            annotations: Vec::new(),
            property_hashes: NameHashes::default(),
            odata_names: NameSet::default(),
            values: None,
        }
    }

    /// Empties the buffers for the next object. A set is cleared only when it was used, so that a large one
    /// costs its clearing once, not once per later entity.
    fn clear(&mut self) {
        self.members.clear();
        self.annotations.clear();
        if !self.property_hashes.is_empty() {
            self.property_hashes.clear();
        }
        self.odata_names.clear();
        self.values = None;
    }

    /// The number of properties with a value once `value`, read for the next member, is added: counted once,
    /// then kept up to date, so that an object of many `null`s stays linear.
    #[cold]
    #[inline(never)]
    fn count_values(&mut self, value: &Raw<'_>) -> usize {
        let earlier = match self.values {
            Some(n) => n,
            None => self.members.iter().filter(|m| !matches!(m.value, Raw::Null)).count(),
        };
        let count = earlier + usize::from(!matches!(value, Raw::Null));
        self.values = Some(count);
        count
    }

    /// Whether a property named `name` was read before, recording it; exact, and in constant time per name
    /// (expected), so that refusing duplicates keeps decoding linear in the object's size.
    fn repeats_property(&mut self, filter: &mut NameFilter, name: &str) -> bool {
        if self.members.len() < SCAN_MAX {
            // Most names are new, and the filter says so without comparing.
            return filter.insert(name) && self.members.iter().any(|m| m.name == name);
        }
        self.repeats_in_large_object(name)
    }

    /// [`repeats_property`](Scratch::repeats_property) past [`SCAN_MAX`] names: out of line, so that small
    /// entities do not carry the hashing.
    #[inline(never)]
    fn repeats_in_large_object(&mut self, name: &str) -> bool {
        if self.property_hashes.is_empty() {
            // Room for as many properties as an entity may have, and the one over the limit: a valid entity
            // never grows the table. (Nulls are not counted, so a body of many can still grow it.)
            self.property_hashes.reserve(MAX_CUSTOM_PROPERTIES + 1);
            for m in &self.members {
                self.property_hashes.insert(m.name.as_bytes());
            }
        }
        self.property_hashes.insert(name.as_bytes()) && self.members.iter().any(|m| m.name == name)
    }
}

/// Up to this many names, an object's names are compared one by one (after a Bloom filter for properties);
/// beyond it, a hash set answers, so that a hostile body with a million members decodes in linear time. Small:
/// the 128-bit filter is mostly full by 64 names (`P000` to `P251` set only 80 bits), and each name past it
/// would then be compared with every earlier one, so an entity of 252 properties paid more per property than
/// one of 12.
const SCAN_MAX: usize = 16;

/// Names read in one JSON object, for refusing a name read twice in time linear in the number of names: a
/// short list compared name by name, then a hash set (`std`'s, randomly keyed, so no input makes it slow).
#[derive(Default)]
struct NameSet<'de> {
    list: Vec<Cow<'de, str>>,
    /// Made when the list is full: a `HashSet` draws its random key when it is made, which every entity
    /// would otherwise pay for, odata.* names or not.
    set: Option<HashSet<Cow<'de, str>>>,
}

impl<'de> NameSet<'de> {
    /// Adds a name; `false` when it was there already. (A `&Cow`: the set keeps a clone, which for a name
    /// borrowed from the input is not a copy.)
    #[allow(clippy::ptr_arg)]
    fn insert(&mut self, name: &Cow<'de, str>) -> bool {
        if let Some(set) = self.set.as_mut().filter(|set| !set.is_empty()) {
            return set.insert(name.clone());
        }
        if self.list.iter().any(|n| n == name) {
            return false;
        }
        if self.list.len() < SCAN_MAX {
            self.list.push(name.clone());
            return true;
        }
        let set = self.set.get_or_insert_with(HashSet::new);
        set.extend(self.list.drain(..));
        set.insert(name.clone())
    }

    fn clear(&mut self) {
        self.list.clear();
        if let Some(set) = self.set.as_mut().filter(|set| !set.is_empty()) {
            set.clear();
        }
    }
}

/// What a member name says the member is.
enum MemberKind<'k> {
    Key(KeyKind),
    Timestamp,
    ETag,
    /// Any other `odata.*` control information: skipped.
    OData,
    TypeAnnotation(&'k str),
    Property,
}

/// What a member is, by its name. A name with another `@` annotation is told apart from an invalid
/// property name only when the property name check fails, off the hot path.
#[inline(always)]
fn classify(name: &str) -> MemberKind<'_> {
    if let Some(target) = name.strip_suffix("@odata.type") {
        return MemberKind::TypeAnnotation(target);
    }
    match name {
        "PartitionKey" => MemberKind::Key(KeyKind::Partition),
        "RowKey" => MemberKind::Key(KeyKind::Row),
        "Timestamp" => MemberKind::Timestamp,
        "odata.etag" => MemberKind::ETag,
        _ if name.starts_with("odata.") => MemberKind::OData,
        _ => MemberKind::Property,
    }
}

/// The system members as read, typed once the object is complete.
#[derive(Default)]
struct RawSystem<'de> {
    partition_key: Option<Raw<'de>>,
    row_key: Option<Raw<'de>>,
    timestamp: Option<Raw<'de>>,
    etag: Option<Raw<'de>>,
}

/// Reads one entity object into the visitor, up to [`EntityVisitor::end`], which the caller calls once the
/// object has been read (`serde_json` has then nothing left to refuse in it, so an error of `end` is still the
/// first error of the entity). The visitor is borrowed, not moved into the seed and on into
/// [`finish_entity`]: a derived struct's visitor is a few hundred bytes, and each move is a copy.
struct EntitySeed<'a, 'de, V> {
    visitor: &'a mut V,
    /// Empty: new, or cleared after the previous entity of a page (which a single entity then does not pay
    /// for).
    scratch: &'a mut Scratch<'de>,
    error: &'a mut Option<DecodeError>,
    /// The entity's index in a query page.
    index: Option<usize>,
}

impl<'de, V: EntityVisitor> DeserializeSeed<'de> for EntitySeed<'_, 'de, V> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, V: EntityVisitor> Visitor<'de> for EntitySeed<'_, 'de, V> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object (an entity)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let EntitySeed { visitor, scratch, error, index } = self;
        debug_assert!(scratch.members.is_empty() && scratch.annotations.is_empty() && scratch.values.is_none());
        let mut system = RawSystem::default();
        // Which system annotations were seen, to refuse one twice.
        let mut system_annotations = [false; 3];
        let mut names = NameFilter::default();
        // A type annotation read but not yet paired with its value.
        let mut pending: Option<Annotation<'de>> = None;
        let failed = |slot: &mut Option<DecodeError>, e: DecodeError| -> A::Error {
            fail(slot, if let Some(i) = index { e.in_entity(i) } else { e })
        };
        while let Some(name) = map.next_key_seed(KeySeed)? {
            let duplicate = || DecodeError::new(DecodeErrorKind::DuplicateMember { name: name.to_string() });
            match classify(&name) {
                MemberKind::Key(kind) => {
                    let slot = match kind {
                        KeyKind::Partition => &mut system.partition_key,
                        KeyKind::Row => &mut system.row_key,
                    };
                    if slot.is_some() {
                        return Err(failed(error, duplicate()));
                    }
                    *slot = Some(map.next_value_seed(RawSeed { name: &name, error: &mut *error, index })?);
                }
                MemberKind::Timestamp => {
                    if system.timestamp.is_some() {
                        return Err(failed(error, duplicate()));
                    }
                    system.timestamp = Some(map.next_value_seed(RawSeed { name: &name, error: &mut *error, index })?);
                }
                MemberKind::ETag => {
                    if system.etag.is_some() {
                        return Err(failed(error, duplicate()));
                    }
                    system.etag = Some(map.next_value_seed(RawSeed { name: &name, error: &mut *error, index })?);
                }
                MemberKind::OData => {
                    if !scratch.odata_names.insert(&name) {
                        return Err(failed(error, duplicate()));
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                MemberKind::TypeAnnotation(target) => {
                    let edm_type = match map.next_value_seed(AnnotationSeed(RawSeed {
                        name: target,
                        error: &mut *error,
                        index,
                    }))? {
                        Ok(edm_type) => edm_type,
                        // Not a type name: `annotation_type` says what is wrong with it.
                        Err(raw) => annotation_type(raw).map_err(|e| failed(error, e.in_property(target)))?,
                    };
                    let system_slot = match target {
                        "PartitionKey" => Some((0, EdmType::String)),
                        "RowKey" => Some((1, EdmType::String)),
                        "Timestamp" => Some((2, EdmType::DateTime)),
                        _ => None,
                    };
                    if let Some((i, expected)) = system_slot {
                        if std::mem::replace(&mut system_annotations[i], true) {
                            return Err(failed(error, duplicate()));
                        }
                        if edm_type != expected {
                            let e = DecodeError::new(DecodeErrorKind::SystemAnnotation { found: edm_type });
                            return Err(failed(error, e.in_property(target)));
                        }
                        continue;
                    }
                    let target = match &name {
                        Cow::Borrowed(whole) => Cow::Borrowed(&whole[..target.len()]),
                        Cow::Owned(_) => Cow::Owned(target.to_owned()),
                    };
                    // Usually the value comes next: keep the annotation at hand to pair it then.
                    let position = scratch.members.len();
                    if let Some(earlier) = pending.replace(Annotation { target, edm_type, position }) {
                        scratch.annotations.push(earlier);
                    }
                }
                MemberKind::Property => {
                    // A name the visitor knows was checked when it was compiled.
                    let checked = if visitor.is_known_property(&name) { Ok(()) } else { property_name::check(&name) };
                    if let Err(e) = checked {
                        // `@` is never in a property name: this is an annotation other than `@odata.type`.
                        let e = if name.contains('@') {
                            DecodeError::new(DecodeErrorKind::UnsupportedAnnotation { name: name.to_string() })
                        } else {
                            let e = PropertyNameError::new(e, &*name);
                            DecodeError::new(DecodeErrorKind::InvalidPropertyName(e)).in_property(&*name)
                        };
                        return Err(failed(error, e));
                    }
                    if scratch.repeats_property(&mut names, &name) {
                        return Err(failed(error, duplicate()));
                    }
                    let value = map.next_value_seed(RawSeed { name: &name, error: &mut *error, index })?;
                    // The limit is checked as each value is read, so that a body with more members than the
                    // limit is refused at the first one over it, without reading (or keeping) the rest. Only
                    // an object with more members than the limit counts its values.
                    if scratch.members.len() >= MAX_CUSTOM_PROPERTIES {
                        let count = scratch.count_values(&value);
                        if count > MAX_CUSTOM_PROPERTIES {
                            let e = DecodeError::new(DecodeErrorKind::TooManyProperties { count });
                            return Err(failed(error, e));
                        }
                    }
                    let annotation = match pending.take() {
                        Some(a) if a.target == name => Some(a.edm_type),
                        other => {
                            scratch.annotations.extend(other);
                            None
                        }
                    };
                    scratch.members.push(Member { name, value, annotation });
                }
            }
        }
        scratch.annotations.extend(pending);
        finish_entity(visitor, system, scratch).map_err(|e| failed(error, e))
    }
}

/// Pairs annotations with their values, types everything and drives the visitor up to its `end`, which the
/// caller calls (see [`EntitySeed`]). The number of properties with a value is within the limit (checked as
/// they were read).
fn finish_entity<V: EntityVisitor>(
    visitor: &mut V,
    system: RawSystem<'_>,
    scratch: &mut Scratch<'_>,
) -> Result<(), DecodeError> {
    let members = &mut scratch.members;
    // Where each property is, built when an annotation far from its value meets many properties.
    let mut positions: Option<HashMap<Cow<'_, str>, usize>> = None;
    for a in scratch.annotations.drain(..) {
        // The service writes an annotation just before its value; other writers just after.
        let adjacent = [a.position, a.position.wrapping_sub(1)];
        let found = adjacent.into_iter().find(|&i| members.get(i).is_some_and(|m| m.name == a.target)).or_else(|| {
            if members.len() <= SCAN_MAX {
                return members.iter().position(|m| m.name == a.target);
            }
            let positions =
                positions.get_or_insert_with(|| members.iter().enumerate().map(|(i, m)| (m.name.clone(), i)).collect());
            positions.get(&a.target).copied()
        });
        let Some(i) = found else {
            return Err(DecodeError::new(DecodeErrorKind::OrphanAnnotation).in_property(&*a.target));
        };
        if members[i].annotation.replace(a.edm_type).is_some() {
            let name = format!("{}@odata.type", a.target);
            return Err(DecodeError::new(DecodeErrorKind::DuplicateMember { name }));
        }
    }
    let count = members.iter().filter(|m| !matches!(m.value, Raw::Null)).count();
    debug_assert!(count <= MAX_CUSTOM_PROPERTIES);
    visitor.begin(SystemProperties {
        partition_key: system.partition_key.map(|raw| key(raw, KeyKind::Partition)).transpose()?.flatten(),
        row_key: system.row_key.map(|raw| key(raw, KeyKind::Row)).transpose()?.flatten(),
        timestamp: system.timestamp.map(timestamp).transpose()?.flatten(),
        etag: system.etag.map(etag).transpose()?.flatten(),
        property_count: count,
    })?;
    for m in members.drain(..) {
        if matches!(m.value, Raw::Null) {
            continue;
        }
        typed_value(m.value, m.annotation, visitor.edm_type(&m.name))
            .and_then(|value| visitor.property(&m.name, value))
            .map_err(|e| e.in_property(&*m.name))?;
    }
    Ok(())
}

/// A key value, validated; `None` for `null`.
fn key<K>(raw: Raw<'_>, kind: KeyKind) -> Result<Option<K>, DecodeError>
where
    K: TryFrom<String, Error = KeyError>,
{
    match raw {
        Raw::Null => Ok(None),
        Raw::Str(s) => K::try_from(s.into_owned())
            .map(Some)
            .map_err(|e| DecodeError::new(DecodeErrorKind::InvalidKey(e)).in_property(kind.property_name())),
        other => Err(invalid(EdmType::String, &other).in_property(kind.property_name())),
    }
}

/// `Timestamp`, annotated or not, read as an `Edm.DateTime`; `None` for `null`.
fn timestamp(raw: Raw<'_>) -> Result<Option<DateTime>, DecodeError> {
    let parsed = match &raw {
        Raw::Null => return Ok(None),
        Raw::Str(s) => parse_datetime(s),
        _ => Ok(None),
    };
    match parsed {
        Ok(Some(t)) => Ok(Some(t)),
        Ok(None) => Err(invalid(EdmType::DateTime, &raw).in_property("Timestamp")),
        Err(e) => Err(e.in_property("Timestamp")),
    }
}

/// Parses an `Edm.DateTime`; `Ok(None)` for text that is not ISO 8601 (the caller describes what it found),
/// an error for a valid date outside the service's range.
fn parse_datetime(s: &str) -> Result<Option<DateTime>, DecodeError> {
    match DateTime::parse(s) {
        Ok(t) => Ok(Some(t)),
        Err(e) if matches!(e.kind(), ValueErrorKind::DateTimeSyntax { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn etag(raw: Raw<'_>) -> Result<Option<ETag>, DecodeError> {
    match raw {
        Raw::Null => Ok(None),
        Raw::Str(s) => Ok(Some(ETag::new(s.into_owned()))),
        other => Err(invalid(EdmType::String, &other).in_property("odata.etag")),
    }
}

/// The EDM type an `@odata.type` value names.
#[inline]
fn annotation_type(raw: Raw<'_>) -> Result<EdmType, DecodeError> {
    match raw {
        Raw::Str(s) => s.parse().map_err(|e| DecodeError::new(DecodeErrorKind::UnknownEdmType(e))),
        other => Err(DecodeError::new(DecodeErrorKind::InvalidAnnotation { found: other.describe() })),
    }
}

fn invalid(expected: EdmType, raw: &Raw<'_>) -> DecodeError {
    DecodeError::new(DecodeErrorKind::InvalidValue { expected, found: raw.describe() })
}

/// Types a non-null property value by its annotation, else the hint, else its JSON form (module docs).
#[inline(always)]
fn typed_value(raw: Raw<'_>, annotation: Option<EdmType>, hint: Option<EdmType>) -> Result<EdmValue, DecodeError> {
    match (annotation, hint) {
        (Some(annotated), Some(expected)) if annotated != expected => {
            // An Int32 where the hints expect a wider number is widened, as at minimalmetadata, where Int32
            // carries no annotation and the hint types the bare integer.
            if annotated == EdmType::Int32
                && matches!(expected, EdmType::Int64 | EdmType::Double)
                && let EdmValue::Int32(v) = typed(EdmType::Int32, raw)?
            {
                return Ok(if expected == EdmType::Int64 {
                    EdmValue::Int64(i64::from(v))
                } else {
                    EdmValue::Double(f64::from(v))
                });
            }
            Err(DecodeError::new(DecodeErrorKind::HintMismatch { annotated, expected }))
        }
        (Some(t), _) | (None, Some(t)) => typed(t, raw),
        (None, None) => inferred(raw),
    }
}

/// The type the service infers for a value without an annotation (`docs/rules.md` §5.1).
fn inferred(raw: Raw<'_>) -> Result<EdmValue, DecodeError> {
    match raw {
        Raw::Bool(b) => Ok(EdmValue::Boolean(b)),
        Raw::Int(i) => i.to_i32().map(EdmValue::Int32).ok_or_else(|| {
            let value = match i {
                JsonInt::Negative(v) => v.to_string(),
                JsonInt::Positive(v) => v.to_string(),
            };
            DecodeError::new(DecodeErrorKind::IntegerOutOfRange { value })
        }),
        Raw::Float(f) => Ok(EdmValue::Double(f)),
        Raw::Str(s) => string(s),
        Raw::Null => Err(invalid(EdmType::String, &raw)),
    }
}

fn string(s: Cow<'_, str>) -> Result<EdmValue, DecodeError> {
    Ok(EdmValue::String(EdmString::new(s.into_owned())?))
}

/// Parses a value as the given type, strictly: only the JSON forms the service writes for it. Each form
/// returns its value as soon as it is recognised; anything else falls through to the one error.
#[inline(always)]
fn typed(t: EdmType, raw: Raw<'_>) -> Result<EdmValue, DecodeError> {
    let raw = match (t, raw) {
        (EdmType::String, Raw::Str(s)) => return string(s),
        (_, raw) => raw,
    };
    match (t, &raw) {
        (EdmType::Boolean, Raw::Bool(b)) => return Ok(EdmValue::Boolean(*b)),
        (EdmType::Int32, Raw::Int(i)) => {
            if let Some(v) = i.to_i32() {
                return Ok(EdmValue::Int32(v));
            }
        }
        (EdmType::Int64, Raw::Int(i)) => {
            if let Some(v) = i.to_i64() {
                return Ok(EdmValue::Int64(v));
            }
        }
        (EdmType::Int64, Raw::Str(s)) => {
            if let Some(v) = parse_i64(s) {
                return Ok(EdmValue::Int64(v));
            }
        }
        (EdmType::Double, Raw::Float(f)) => return Ok(EdmValue::Double(*f)),
        (EdmType::Double, Raw::Int(i)) => return Ok(EdmValue::Double(i.to_f64())),
        (EdmType::Double, Raw::Str(s)) => {
            if let Some(v) = special_double(s) {
                return Ok(EdmValue::Double(v));
            }
        }
        (EdmType::Guid, Raw::Str(s)) if s.len() == uuid::fmt::Hyphenated::LENGTH => {
            if let Ok(v) = Uuid::try_parse(s) {
                return Ok(EdmValue::Guid(v));
            }
        }
        (EdmType::DateTime, Raw::Str(s)) => {
            if let Some(v) = parse_datetime(s)? {
                return Ok(EdmValue::DateTime(v));
            }
        }
        (EdmType::Binary, Raw::Str(s)) => {
            if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(s.as_bytes()) {
                return Ok(EdmValue::Binary(EdmBinary::new(bytes)?));
            }
        }
        _ => {}
    }
    Err(invalid(t, &raw))
}

/// An Int64 as the service writes it: an optional `-` and decimal digits.
fn parse_i64(s: &str) -> Option<i64> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    // Up to 18 digits cannot overflow: no checked arithmetic, and eight digits at a time.
    if digits.len() <= 18 {
        let mut chunks = digits.as_bytes().chunks_exact(8);
        let mut value: i64 = 0;
        for chunk in &mut chunks {
            let chunk: [u8; 8] = chunk.try_into().ok()?;
            value = value * 100_000_000 + eight_digits(chunk)?;
        }
        for &b in chunks.remainder() {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                return None;
            }
            value = value * 10 + i64::from(digit);
        }
        return Some(if negative { -value } else { value });
    }
    // Accumulated as a negative number, so that `i64::MIN` fits; one pass, no UTF-8 or sign handling left
    // for `str::parse`.
    let mut value: i64 = 0;
    for b in digits.bytes() {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_sub(i64::from(digit))?;
    }
    if negative {
        Some(value)
    } else {
        value.checked_neg()
    }
}

/// The string forms of the special doubles: `NaN`, `Infinity`, `-Infinity`, and OData's `INF`, `-INF`.
fn special_double(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "Infinity" | "INF" => Some(f64::INFINITY),
        "-Infinity" | "-INF" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// Reads a member name, borrowing it from the input when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Cow<'de, str>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

/// Reads a member value: a scalar, never an object or array (refused without descending into it).
struct RawSeed<'a> {
    name: &'a str,
    error: &'a mut Option<DecodeError>,
    index: Option<usize>,
}

impl RawSeed<'_> {
    fn nested<E: de::Error>(self, found: &'static str) -> E {
        let e = DecodeError::new(DecodeErrorKind::NestedValue { found }).in_property(self.name);
        fail(self.error, if let Some(i) = self.index { e.in_entity(i) } else { e })
    }
}

impl<'de> DeserializeSeed<'de> for RawSeed<'_> {
    type Value = Raw<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Raw<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RawSeed<'_> {
    type Value = Raw<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string, number, boolean or null")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Raw<'de>, E> {
        Ok(Raw::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Raw<'de>, E> {
        Ok(Raw::Int(JsonInt::Negative(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Raw<'de>, E> {
        Ok(Raw::Int(JsonInt::Positive(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Raw<'de>, E> {
        Ok(Raw::Float(v))
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Raw<'de>, E> {
        Ok(Raw::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Raw<'de>, E> {
        Ok(Raw::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Raw<'de>, E> {
        Ok(Raw::Str(Cow::Owned(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Raw<'de>, E> {
        Ok(Raw::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Raw<'de>, E> {
        Ok(Raw::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<Raw<'de>, A::Error> {
        Err(self.nested("object"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<Raw<'de>, A::Error> {
        Err(self.nested("array"))
    }
}

/// Reads the value of an `@odata.type` annotation: the EDM type a string names, parsed as `serde_json` hands the
/// string over (no [`Raw`] built and dropped, no copy of an escaped string). Any other value, and a string that
/// names no type, comes back as the [`Raw`] that [`RawSeed`] reads, for [`annotation_type`] to report.
struct AnnotationSeed<'a>(RawSeed<'a>);

impl<'de> DeserializeSeed<'de> for AnnotationSeed<'_> {
    type Value = Result<EdmType, Raw<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AnnotationSeed<'_> {
    type Value = Result<EdmType, Raw<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(EdmType::from_name(v).ok_or(Raw::Str(Cow::Borrowed(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(EdmType::from_name(v).ok_or_else(|| Raw::Str(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(EdmType::from_name(&v).ok_or(Raw::Str(Cow::Owned(v))))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.0.visit_bool(v).map(Err)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.0.visit_i64(v).map(Err)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.0.visit_u64(v).map(Err)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.0.visit_f64(v).map(Err)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_unit().map(Err)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_none().map(Err)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(map).map(Err)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.visit_seq(seq).map(Err)
    }
}

/// Reads a query response page.
struct QuerySeed<'a, F> {
    new_visitor: F,
    error: &'a mut Option<DecodeError>,
}

impl<'de, V: EntityVisitor, F: FnMut() -> V> DeserializeSeed<'de> for QuerySeed<'_, F> {
    type Value = Vec<V::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<V::Value>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, V: EntityVisitor, F: FnMut() -> V> Visitor<'de> for QuerySeed<'_, F> {
    type Value = Vec<V::Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object (a query response)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<V::Value>, A::Error> {
        let QuerySeed { mut new_visitor, error } = self;
        let mut entities = None;
        let mut odata_names = NameSet::default();
        while let Some(name) = map.next_key_seed(KeySeed)? {
            if name == "value" {
                if entities.is_some() {
                    let e = DecodeError::new(DecodeErrorKind::DuplicateMember { name: name.into_owned() });
                    return Err(fail(error, e));
                }
                entities = Some(map.next_value_seed(PageSeed { new_visitor: &mut new_visitor, error: &mut *error })?);
            } else if name.starts_with("odata.") {
                if !odata_names.insert(&name) {
                    let e = DecodeError::new(DecodeErrorKind::DuplicateMember { name: name.into_owned() });
                    return Err(fail(error, e));
                }
                map.next_value::<IgnoredAny>()?;
            } else {
                return Err(fail(error, DecodeError::new(DecodeErrorKind::UnknownMember { name: name.into_owned() })));
            }
        }
        entities.ok_or_else(|| fail(error, DecodeError::new(DecodeErrorKind::MissingValueArray)))
    }
}

/// Reads the `value` array of a query response.
struct PageSeed<'a, F> {
    new_visitor: &'a mut F,
    error: &'a mut Option<DecodeError>,
}

impl<'de, V: EntityVisitor, F: FnMut() -> V> DeserializeSeed<'de> for PageSeed<'_, F> {
    type Value = Vec<V::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<V::Value>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, V: EntityVisitor, F: FnMut() -> V> Visitor<'de> for PageSeed<'_, F> {
    type Value = Vec<V::Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array of entities")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<V::Value>, A::Error> {
        let mut scratch = Scratch::new();
        let mut entities = Vec::new();
        loop {
            let mut visitor = (self.new_visitor)();
            let index = entities.len();
            let seed = EntitySeed {
                visitor: &mut visitor,
                scratch: &mut scratch,
                error: &mut *self.error,
                index: Some(index),
            };
            match seq.next_element_seed(seed)? {
                Some(()) => {
                    entities.push(visitor.end().map_err(|e| fail(self.error, e.in_entity(index)))?);
                    // The next entity starts from empty buffers (see `EntitySeed::scratch`).
                    scratch.clear();
                }
                None => return Ok(entities),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_i64;

    /// The definition: an optional `-`, then only ASCII digits, then `str::parse`.
    fn reference(s: &str) -> Option<i64> {
        let digits = s.strip_prefix('-').unwrap_or(s);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    }

    #[test]
    fn parse_i64_matches_the_definition() {
        let mut cases: Vec<String> = [
            "",
            "-",
            "+1",
            "--1",
            "0",
            "-0",
            "00",
            "007",
            "1",
            "-1",
            "12a",
            "a12",
            " 1",
            "1 ",
            "1.0",
            "1e3",
            "٣",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "00000000000000000000009223372036854775807",
            "99999999999999999999",
            "-99999999999999999999",
            "9007199254740993",
            "999999999999999999",
            "-999999999999999999",
            "1000000000000000000",
            "-1000000000000000000",
            "99999999999999999x",
            "000000000000000000",
            "-000000000000000000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for v in [i64::MIN, i64::MIN + 1, -1_000_000_007, -10, 10, 1 << 53, i64::MAX - 1, i64::MAX] {
            cases.push(v.to_string());
            cases.push(format!("{v}0"));
            cases.push(format!("{v}/"));
            cases.push(format!("{v}:"));
        }
        // Every byte that is not a digit, at every position of a number read eight digits at a time.
        for bad in (0..=u8::MAX).filter(|b| !b.is_ascii_digit()) {
            for at in 0..18 {
                let mut bytes = b"123456789012345678".to_vec();
                bytes[at] = bad;
                if let Ok(s) = String::from_utf8(bytes) {
                    cases.push(s);
                }
            }
        }
        for at in 0..=16 {
            for ch in ["é", "٣", "\u{10ffff}"] {
                cases.push(format!("{}{ch}{}", &"1234567890123456"[..at], &"1234567890123456"[at..]));
            }
        }
        for s in &cases {
            assert_eq!(parse_i64(s), reference(s), "{s:?}");
        }
    }
}
