//! The service's JSON wire format (OData v3 JSON, `docs/rules.md` §5): entity request bodies and the
//! entities of responses at every metadata level.
//!
//! - [`encode_entity`] writes the body of an insert or update: `PartitionKey`, `RowKey`, then each property,
//!   with an `"<Name>@odata.type"` annotation exactly for Binary, DateTime, Guid, Int64 and (always) Double.
//! - [`decode_entity`] reads a single-entity response and [`decode_query`] a query page
//!   `{"odata.metadata": ..., "value": [...]}`, at any [`MetadataLevel`]. With `nometadata` there are no type
//!   annotations, so Int64, Guid, DateTime and Binary arrive as plain strings: pass [`TypeHints`] to read them
//!   typed.
//!
//! ```
//! use table_model::json::{decode_entity, encode_entity};
//! use table_model::{EdmType, Entity, PartitionKey, RowKey};
//! use std::collections::HashMap;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let order = Entity::new(PartitionKey::new("customer-42")?, RowKey::new("0001")?)
//!     .with("Total".parse()?, 5.0)?
//!     .with("Lines".parse()?, 3i64)?;
//! let body = encode_entity(&order)?;
//! assert_eq!(
//!     body.as_str(),
//!     r#"{"PartitionKey":"customer-42","RowKey":"0001","Total@odata.type":"Edm.Double","Total":5.0,"Lines@odata.type":"Edm.Int64","Lines":"3"}"#
//! );
//! assert_eq!(decode_entity(body.as_bytes(), None)?, order);
//!
//! // A nometadata response carries no annotations: the Int64 arrives as a string.
//! let response = br#"{"PartitionKey":"customer-42","RowKey":"0001","Total":5.0,"Lines":"3"}"#;
//! assert_eq!(decode_entity(response, None)?.value("Lines").unwrap().edm_type(), EdmType::String);
//! let hints = HashMap::from([("Lines".to_string(), EdmType::Int64)]);
//! assert_eq!(decode_entity(response, Some(&hints))?, order);
//! # Ok(())
//! # }
//! ```
//!
//! ## Reading rules
//!
//! - `odata.etag` becomes the entity's [`ETag`](crate::ETag) and `Timestamp` (annotated or not) its
//!   [`timestamp`](crate::Entity::timestamp). Other `odata.*` members (`odata.metadata`, `odata.type`,
//!   `odata.id`, `odata.editLink`, ...) are skipped, whatever their value, but each name only once (see
//!   duplicates below). No ETag is made up when `odata.etag` is absent.
//! - A type annotation may come before or after its value. A value without one is typed by the hints when
//!   they name the property, else by its JSON form: an integer is `Edm.Int32` (an integer outside the Int32
//!   range is an error, never silently widened), a number with `.` or an exponent `Edm.Double`, a string
//!   `Edm.String`, `true`/`false` `Edm.Boolean`. `null` is an absent property (the service stores no nulls).
//! - Annotated values parse strictly: Int64 as a string of digits (or a JSON integer), Double as a number or
//!   one of `"NaN"`, `"Infinity"`, `"-Infinity"`, `"INF"`, `"-INF"`, DateTime as
//!   [`DateTime::parse`](crate::DateTime::parse) reads it (0 to 7 fractional digits, `Z` or none), Guid as
//!   8-4-4-4-12 hex in any case, Binary as standard padded base64. A string typed by the hints parses the
//!   same way.
//! - An annotation that disagrees with the hints is an error, except an `Edm.Int32` where the hints expect
//!   `Edm.Int64` or `Edm.Double`: the integer is widened to the hinted type, losslessly. That is what a bare
//!   integer with those hints gives at minimalmetadata (where Int32 carries no annotation), so decoding with
//!   hints gives the same entity at every metadata level.
//! - Refused, each with a [`DecodeError`](crate::DecodeError) naming the property: a duplicate member, an
//!   unknown `Edm.*` type, an `@odata.type` annotation without its property, any other `<Name>@...`
//!   annotation, a JSON object or array as a value, an invalid property name, an invalid or missing key,
//!   more than 252 properties. Decoding never panics and never recurses on the input: nested values are refused
//!   before they are entered, and skipped `odata.*` values are skipped by `serde_json` without recursion.
//! - A duplicate member is any name given twice in one object, `odata.*` names included: a property, a key,
//!   `Timestamp`, an `@odata.type` annotation, `odata.etag`, `odata.metadata`, `value` in a query page. JSON
//!   parsers disagree on which of two values wins, so the decoder takes neither (`docs/rules.md` §5.5); the
//!   service never writes one, and refuses a property given twice in a request (`DuplicatePropertiesSpecified`).
//!   The check is exact and keeps decoding linear in the size of the body: a body with a million repeated
//!   members is refused at the second, and one with a million distinct members is read in linear time.
//! - `serde_json` hands `-0` and integers beyond the 64-bit range to us as floats, so such literals without an
//!   annotation read as `Edm.Double` (`-0.0`, or the nearest double); the service writes neither.
//! - A NaN reads back as the canonical `f64::NAN`: the wire form `"NaN"` carries no sign or payload.
//!
//! ## Advanced API
//!
//! [`BodyWriter`] and [`EntityVisitor`] are the streaming cores of [`encode_entity`] and [`decode_entity`]:
//! they encode from and decode into any type without building an [`Entity`](crate::Entity), which is what
//! `#[derive(TableEntity)]` generates code for. They are public, documented and checked like the rest of the
//! crate. [`EncodedPage`] reads a query page straight into the bodies [`encode_entity`] writes for its
//! entities, for a reader that writes them in this format again (an export in JSON lines).
//!
//! Layer: wire.

mod decode;
mod encode;
mod encoded;
pub(crate) mod error;

pub use decode::{decode_entity, decode_entity_with, decode_query, decode_query_with, EntityVisitor, SystemProperties};
#[cfg(feature = "http")]
pub(crate) use encode::ascii_json;
#[cfg(feature = "client")]
pub(crate) use encode::ascii_json_len;
pub use encode::{encode_entity, write_property, AsPropertyName, BodyWriter, EntityBody};
pub(crate) use encode::{key_ranges, properties_json};
pub use encoded::{EncodedEntity, EncodedPage};

use crate::edm::EdmType;
use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

/// How much OData metadata a response carries, chosen by the request's `Accept` header (`docs/rules.md` §5.3).
///
/// ```
/// use table_model::json::MetadataLevel;
/// assert_eq!(MetadataLevel::None.accept_header(), "application/json;odata=nometadata");
/// assert_eq!(MetadataLevel::default(), MetadataLevel::Minimal);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MetadataLevel {
    /// `nometadata`: no annotations at all; Int64, Guid, DateTime and Binary arrive as plain strings and need
    /// [`TypeHints`] to be read typed. The smallest responses.
    None,
    /// `minimalmetadata`: `odata.metadata`, per-entity `odata.etag`, and annotations for the types JSON cannot
    /// show. What every official SDK asks for.
    #[default]
    Minimal,
    /// `fullmetadata`: adds `odata.type`, `odata.id`, `odata.editLink` and an annotation on every property.
    Full,
}

impl MetadataLevel {
    /// The `Accept` header value that asks for this level.
    pub const fn accept_header(&self) -> &'static str {
        match self {
            MetadataLevel::None => "application/json;odata=nometadata",
            MetadataLevel::Minimal => "application/json;odata=minimalmetadata",
            MetadataLevel::Full => "application/json;odata=fullmetadata",
        }
    }
}

/// The EDM type a caller expects for a property, used to read values that carry no annotation (all of them
/// with `nometadata`, where Int64, Guid, DateTime and Binary are plain strings).
///
/// Implemented for maps and slices of `(name, EdmType)` and for closures; `#[derive(TableEntity)]` implements
/// it from the struct's fields.
///
/// ```
/// use table_model::json::TypeHints;
/// use table_model::EdmType;
/// let hints = [("Count", EdmType::Int64), ("Id", EdmType::Guid)];
/// assert_eq!(hints.edm_type("Id"), Some(EdmType::Guid));
/// assert_eq!(hints.edm_type("Other"), None);
/// let by_suffix = |name: &str| name.ends_with("At").then_some(EdmType::DateTime);
/// assert_eq!(by_suffix.edm_type("CreatedAt"), Some(EdmType::DateTime));
/// ```
pub trait TypeHints {
    /// The type expected for this property, or `None` to type it by its JSON form.
    fn edm_type(&self, property: &str) -> Option<EdmType>;
}

impl<S: BuildHasher> TypeHints for HashMap<String, EdmType, S> {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.get(property).copied()
    }
}

impl<S: BuildHasher> TypeHints for HashMap<&str, EdmType, S> {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.get(property).copied()
    }
}

impl TypeHints for BTreeMap<String, EdmType> {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.get(property).copied()
    }
}

impl TypeHints for BTreeMap<&str, EdmType> {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.get(property).copied()
    }
}

impl TypeHints for [(&str, EdmType)] {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.iter().find(|(name, _)| *name == property).map(|&(_, t)| t)
    }
}

impl TypeHints for &[(&str, EdmType)] {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        (**self).edm_type(property)
    }
}

impl<const N: usize> TypeHints for [(&str, EdmType); N] {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.as_slice().edm_type(property)
    }
}

impl TypeHints for [(String, EdmType)] {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.iter().find(|(name, _)| name == property).map(|&(_, t)| t)
    }
}

impl TypeHints for Vec<(&str, EdmType)> {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.as_slice().edm_type(property)
    }
}

impl TypeHints for Vec<(String, EdmType)> {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self.as_slice().edm_type(property)
    }
}

impl<F: Fn(&str) -> Option<EdmType>> TypeHints for F {
    fn edm_type(&self, property: &str) -> Option<EdmType> {
        self(property)
    }
}

/// A 128-bit Bloom filter over property names. Both the writer and the reader must refuse a name seen twice;
/// most names are new, and the filter says so without comparing against every earlier name.
#[derive(Debug, Default, Clone, Copy)]
struct NameFilter(u128);

impl NameFilter {
    /// Adds a name; returns whether it may have been added before (then the caller compares for real).
    fn insert(&mut self, name: &str) -> bool {
        // Length and the first and last two bytes: O(1), and it tells apart the numbered names (`Col9`,
        // `Col10`) common in entities. A collision only costs the caller a real comparison.
        let b = name.as_bytes();
        let byte = |i: usize| u32::from(b.get(i).copied().unwrap_or(0));
        let n = b.len();
        let hash = (n as u32).wrapping_mul(0x9E37_79B9)
            ^ byte(0).wrapping_mul(0x85EB_CA6B)
            ^ byte(n.wrapping_sub(1)).wrapping_mul(0xC2B2_AE35)
            ^ byte(n.wrapping_sub(2)).wrapping_mul(0x27D4_EB2F);
        let bit = 1u128 << (hash >> 25);
        let seen = self.0 & bit != 0;
        self.0 |= bit;
        seen
    }
}

/// The names of a large object as keyed 64-bit hashes, for telling a new name from a possible repeat in
/// constant time once [`NameFilter`] is full: what keeps refusing duplicates linear in the number of names.
///
/// The hashes are `std`'s SipHash with a random key per process, so a body cannot be built to make its names
/// collide. A name whose hash is new is certainly new; one whose hash was seen is a repeat or (with
/// probability about 2^-64 per pair) a collision, which the caller tells apart by comparing names, once.
#[derive(Debug, Default)]
struct NameHashes {
    /// Drawn when the first name is added: small objects never need one.
    key: Option<RandomState>,
    seen: HashSet<u64, BuildHasherDefault<PassThrough>>,
}

impl NameHashes {
    /// Adds a name; returns whether its hash was seen before (then the caller compares for real).
    fn insert(&mut self, name: &[u8]) -> bool {
        let hash = self.key.get_or_insert_with(RandomState::new).hash_one(name);
        !self.seen.insert(hash)
    }

    /// Makes room for `additional` more names at once, when the caller knows how many may come: one table
    /// instead of growing it, and hashing every name again, at each power of two.
    fn reserve(&mut self, additional: usize) {
        self.seen.reserve(additional);
    }

    fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    fn clear(&mut self) {
        self.seen.clear();
    }
}

/// The hasher of [`NameHashes`]' set, whose keys are already keyed hashes: it passes them through.
#[derive(Debug, Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64`s are hashed; fold anything else in rather than drop it.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
