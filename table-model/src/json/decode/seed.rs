//! The `serde` seeds that read the JSON: an entity object's members collected ([`EntitySeed`]), each type
//! annotation paired with its value, the values typed ([`super::value`]) and handed to the visitor; a query
//! response's `value` array of them ([`QuerySeed`]).

use super::value::{annotation_type, etag, key, timestamp, typed_value, JsonInt, Raw};
use super::{fail, EntityVisitor, SystemProperties};
use crate::edm::EdmType;
use crate::json::error::{DecodeError, DecodeErrorKind};
use crate::json::{NameFilter, NameHashes};
use crate::limits::MAX_CUSTOM_PROPERTIES;
use crate::name::error::PropertyNameError;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use table_model_rules::{property_name, KeyKind};

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
pub(super) struct Scratch<'de> {
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
    pub(super) fn new() -> Self {
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
pub(super) struct EntitySeed<'a, 'de, V> {
    pub(super) visitor: &'a mut V,
    /// Empty: new, or cleared after the previous entity of a page (which a single entity then does not pay
    /// for).
    pub(super) scratch: &'a mut Scratch<'de>,
    pub(super) error: &'a mut Option<DecodeError>,
    /// The entity's index in a query page.
    pub(super) index: Option<usize>,
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
pub(super) struct QuerySeed<'a, F> {
    pub(super) new_visitor: F,
    pub(super) error: &'a mut Option<DecodeError>,
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
