//! The dynamic [`Entity`] (`docs/rules.md` §4) and the opaque [`ETag`].
//!
//! Layer: model.

pub(crate) mod error;

use crate::edm::datetime::DateTime;
use crate::edm::{EdmValue, FromEdm, IntoEdm};
use crate::key::{PartitionKey, RowKey};
use crate::limits::{self, ENTITY_MAX_BYTES, MAX_CUSTOM_PROPERTIES};
use crate::name::PropertyName;
use error::{EntityError, EntityErrorKind};
use std::fmt;

/// An entity tag, as the service returns it in the `ETag` header and `odata.etag`: an opaque string such as
/// `W/"datetime'2024-01-02T03%3A04%3A05.1234567Z'"` or `W/"0x8D..."`. Only ever compared and sent back.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ETag(String);

impl ETag {
    /// Wraps an entity tag as received (for example one persisted from an earlier read).
    pub fn new(value: impl Into<String>) -> Self {
        ETag(value.into())
    }

    /// The tag, exactly as received.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ETag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ETag({:?})", self.0)
    }
}

impl fmt::Display for ETag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A dynamic entity: its keys, the server-set `Timestamp` and `ETag` when it was read, and up to 252 custom
/// properties in insertion order, within the 1 MiB size of `docs/rules.md` §4.2.
///
/// Every mutation checks the limits before it changes anything, so an `Entity` is always valid to send.
///
/// ```
/// use table_model::{EdmValue, Entity, PartitionKey, RowKey};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut e = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?);
/// e.insert("Name".parse()?, "Ada")?;
/// e.insert("Age".parse()?, 36)?;
/// assert_eq!(e.get::<String>("Name")?, "Ada");
/// assert_eq!(e.get::<i64>("Age")?, 36); // Int32 widens losslessly
/// assert!(e.get::<bool>("Age").is_err()); // a type mismatch is an error
/// assert_eq!(e.get_opt::<String>("Missing")?, None);
/// assert_eq!(e.size(), 4 + 2 + 2 + (8 + 8 + 10) + (8 + 6 + 4));
/// let names: Vec<&str> = e.iter().map(|(n, _)| n.as_str()).collect();
/// assert_eq!(names, ["Name", "Age"]);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entity {
    partition_key: PartitionKey,
    row_key: RowKey,
    timestamp: Option<DateTime>,
    etag: Option<ETag>,
    properties: Vec<(PropertyName, EdmValue)>,
    size: usize,
}

/// A property's share of the size formula (`limits::property_size`), with its value's size.
fn property_size(name: &PropertyName, value: &EdmValue) -> usize {
    limits::property_size(name, value.stored_size())
}

impl Entity {
    /// An entity with these keys and no properties.
    pub fn new(partition_key: PartitionKey, row_key: RowKey) -> Self {
        let size = limits::entity_keys_size(&partition_key, &row_key);
        Entity { partition_key, row_key, timestamp: None, etag: None, properties: Vec::new(), size }
    }

    /// The `PartitionKey`.
    pub fn partition_key(&self) -> &PartitionKey {
        &self.partition_key
    }

    /// The `RowKey`.
    pub fn row_key(&self) -> &RowKey {
        &self.row_key
    }

    /// Replaces both keys.
    ///
    /// # Errors
    /// [`EntityErrorKind::TooLarge`] when longer keys would take the entity over 1 MiB; nothing changes then.
    pub fn set_keys(&mut self, partition_key: PartitionKey, row_key: RowKey) -> Result<(), EntityError> {
        let size = self.size - limits::entity_keys_size(&self.partition_key, &self.row_key)
            + limits::entity_keys_size(&partition_key, &row_key);
        if size > ENTITY_MAX_BYTES {
            return Err(EntityError::new(EntityErrorKind::TooLarge { size }, None));
        }
        self.partition_key = partition_key;
        self.row_key = row_key;
        self.size = size;
        Ok(())
    }

    /// The `Timestamp` the server set, for an entity that was read.
    pub fn timestamp(&self) -> Option<DateTime> {
        self.timestamp
    }

    /// The entity tag, for an entity that was read.
    pub fn etag(&self) -> Option<&ETag> {
        self.etag.as_ref()
    }

    /// Records the server-set `Timestamp` and `ETag` of an entity that was read. They are never written: the
    /// service ignores a `Timestamp` sent on insert or update.
    pub fn set_server_metadata(&mut self, timestamp: Option<DateTime>, etag: Option<ETag>) {
        self.timestamp = timestamp;
        self.etag = etag;
    }

    /// Adds or replaces a property; returns the value it replaced.
    ///
    /// # Errors
    /// The value's own limit (a string over 32,768 UTF-16 units, binary over 64 KiB, a date out of range),
    /// a 253rd property, or a size over 1 MiB, each naming the property. Nothing changes on error.
    pub fn insert(&mut self, name: PropertyName, value: impl IntoEdm) -> Result<Option<EdmValue>, EntityError> {
        let value = value.into_edm().map_err(|e| EntityError::from(e.in_property(name.as_str())))?;
        self.insert_value(name, value)
    }

    /// Adds a property and returns the entity, for building one in an expression.
    ///
    /// # Errors
    /// As [`Entity::insert`].
    pub fn with(mut self, name: PropertyName, value: impl IntoEdm) -> Result<Self, EntityError> {
        self.insert(name, value)?;
        Ok(self)
    }

    fn insert_value(&mut self, name: PropertyName, value: EdmValue) -> Result<Option<EdmValue>, EntityError> {
        let added = property_size(&name, &value);
        match self.properties.iter().position(|(n, _)| *n == name) {
            Some(i) => {
                let size = self.size - property_size(&self.properties[i].0, &self.properties[i].1) + added;
                if size > ENTITY_MAX_BYTES {
                    return Err(EntityError::new(EntityErrorKind::TooLarge { size }, Some(&name)));
                }
                self.size = size;
                Ok(Some(std::mem::replace(&mut self.properties[i].1, value)))
            }
            None => self.push_new(name, value).map(|()| None),
        }
    }

    /// Makes room for this many more properties (the JSON decoder knows how many come).
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.properties.reserve(additional);
    }

    /// Adds a property the caller knows is not there yet (the JSON decoder refuses duplicates itself), with
    /// the count and size checks of [`Entity::insert`].
    pub(crate) fn push_new(&mut self, name: PropertyName, value: EdmValue) -> Result<(), EntityError> {
        let count = self.properties.len() + 1;
        if count > MAX_CUSTOM_PROPERTIES {
            return Err(EntityError::new(EntityErrorKind::TooManyProperties { count }, Some(&name)));
        }
        let size = self.size + property_size(&name, &value);
        if size > ENTITY_MAX_BYTES {
            return Err(EntityError::new(EntityErrorKind::TooLarge { size }, Some(&name)));
        }
        self.size = size;
        self.properties.push((name, value));
        Ok(())
    }

    /// Removes a property; returns its value.
    pub fn remove(&mut self, name: &str) -> Option<EdmValue> {
        let i = self.properties.iter().position(|(n, _)| n.as_str() == name)?;
        let (n, v) = self.properties.remove(i);
        self.size -= property_size(&n, &v);
        Some(v)
    }

    /// The value of a property, of whatever type it has.
    pub fn value(&self, name: &str) -> Option<&EdmValue> {
        self.properties.iter().find(|(n, _)| n.as_str() == name).map(|(_, v)| v)
    }

    /// A property converted to a Rust type.
    ///
    /// # Errors
    /// [`EntityErrorKind::MissingProperty`] when it is absent; a type mismatch or a number that does not fit,
    /// naming the property.
    pub fn get<T: FromEdm>(&self, name: &str) -> Result<T, EntityError> {
        self.get_opt(name)?
            .ok_or_else(|| EntityError::new(EntityErrorKind::MissingProperty { property: name.to_owned() }, Some(name)))
    }

    /// A property converted to a Rust type, `None` when it is absent.
    ///
    /// # Errors
    /// A type mismatch or a number that does not fit, naming the property.
    pub fn get_opt<T: FromEdm>(&self, name: &str) -> Result<Option<T>, EntityError> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => T::from_edm(v.clone()).map(Some).map_err(|e| EntityError::from(e.in_property(name))),
        }
    }

    /// The custom properties in insertion order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&PropertyName, &EdmValue)> {
        self.properties.iter().map(|(n, v)| (n, v))
    }

    /// The number of custom properties.
    pub fn len(&self) -> usize {
        self.properties.len()
    }

    /// Whether there are no custom properties.
    pub fn is_empty(&self) -> bool {
        self.properties.is_empty()
    }

    /// The entity's size by the formula of `docs/rules.md` §4.2, in bytes; always at most 1 MiB:
    /// `4 + 2*len(PartitionKey) + 2*len(RowKey) + sum of (8 + 2*len(name) + size(value))`, lengths in UTF-16 units.
    pub fn size(&self) -> usize {
        self.size
    }
}

impl<'a> IntoIterator for &'a Entity {
    type Item = (&'a PropertyName, &'a EdmValue);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (PropertyName, EdmValue)>,
        fn(&'a (PropertyName, EdmValue)) -> (&'a PropertyName, &'a EdmValue),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.properties.iter().map(|(n, v)| (n, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edm::error::ValueErrorKind;
    use crate::edm::{EdmBinary, EdmString};

    fn entity() -> Entity {
        Entity::new(PartitionKey::new("pk").unwrap(), RowKey::new("rk").unwrap())
    }

    fn name(s: &str) -> PropertyName {
        PropertyName::new(s).unwrap()
    }

    #[test]
    fn property_count_limit() {
        let mut e = entity();
        for i in 0..MAX_CUSTOM_PROPERTIES {
            e.insert(name(&format!("P{i}")), true).unwrap();
        }
        // Replacing an existing property is fine at the limit.
        e.insert(name("P0"), false).unwrap();
        let before = e.clone();
        let err = e.insert(name("Extra"), 1).unwrap_err();
        assert_eq!(err.kind(), &EntityErrorKind::TooManyProperties { count: 253 });
        assert_eq!(err.property(), Some("Extra"));
        assert_eq!(e, before);
    }

    #[test]
    fn size_limit_exactly() {
        let mut e = entity();
        let base = e.size();
        assert_eq!(base, 4 + 4 + 4);
        // Fill with 64 KiB binaries: each costs 8 + 2*len(name) + 65536 + 4.
        let mut i = 0;
        loop {
            let n = name(&format!("B{i:02}"));
            match e.insert(n, EdmBinary::new(vec![0; 65_536]).unwrap()) {
                Ok(_) => i += 1,
                Err(err) => {
                    assert!(matches!(err.kind(), EntityErrorKind::TooLarge { .. }));
                    break;
                }
            }
        }
        assert_eq!(i, 15);
        assert!(e.size() <= ENTITY_MAX_BYTES);
        // Fill the remainder exactly with a string: 8 + 2*3 ("S00") + 2*n + 4 bytes.
        let room = ENTITY_MAX_BYTES - e.size() - 8 - 6 - 4;
        let exact = EdmString::new("a".repeat(room / 2)).unwrap();
        let mut at_limit = e.clone();
        at_limit.insert(name("S00"), exact).unwrap();
        assert_eq!(at_limit.size(), ENTITY_MAX_BYTES - room % 2);
        let err = e.insert(name("S00"), EdmString::new("a".repeat(room / 2 + 1)).unwrap()).unwrap_err();
        assert_eq!(err.kind(), &EntityErrorKind::TooLarge { size: ENTITY_MAX_BYTES - room % 2 + 2 });
    }

    #[test]
    fn replace_and_remove_keep_size_exact() {
        let mut e = entity();
        let empty = e.size();
        e.insert(name("A"), "hello").unwrap();
        assert_eq!(e.size(), empty + 8 + 2 + 14);
        assert_eq!(e.insert(name("A"), 5).unwrap(), Some(EdmValue::try_from("hello").unwrap()));
        assert_eq!(e.size(), empty + 8 + 2 + 4);
        assert_eq!(e.remove("A"), Some(EdmValue::Int32(5)));
        assert_eq!(e.size(), empty);
        assert_eq!(e.remove("A"), None);
    }

    #[test]
    fn errors_name_the_property() {
        let mut e = entity();
        let err = e.insert(name("Blob"), vec![0u8; 70_000]).unwrap_err();
        assert_eq!(err.to_string(), "property `Blob`: invalid Edm.Binary: must be at most 65536 bytes, found 70000");
        e.insert(name("N"), "x").unwrap();
        let err = e.get::<i32>("N").unwrap_err();
        assert_eq!(err.to_string(), "property `N`: expected Edm.Int32, found Edm.String");
        assert!(
            matches!(err.kind(), EntityErrorKind::Value(v) if matches!(v.kind(), ValueErrorKind::TypeMismatch { .. }))
        );
        assert_eq!(e.get::<i32>("Nope").unwrap_err().to_string(), "missing property `Nope`");
    }

    #[test]
    fn keys_count_in_utf16() {
        let e = Entity::new(PartitionKey::new("😀").unwrap(), RowKey::new("é").unwrap());
        assert_eq!(e.size(), 4 + 2 * 2 + 2);
        let mut e = entity();
        e.set_keys(PartitionKey::new("a".repeat(512)).unwrap(), RowKey::empty()).unwrap();
        assert_eq!(e.size(), 4 + 1024);
    }
}
