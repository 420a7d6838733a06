//! The error of an entity that breaks a limit, or of a typed read that fails.

use crate::edm::error::ValueError;
use std::fmt;

/// Why an entity was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntityErrorKind {
    /// More than 252 custom properties.
    TooManyProperties {
        /// The number the entity would have.
        count: usize,
    },
    /// Over 1 MiB by the size formula of `docs/rules.md` §4.2.
    TooLarge {
        /// The size the entity would have, in bytes.
        size: usize,
    },
    /// A property that is not there.
    MissingProperty {
        /// Its name.
        property: String,
    },
    /// A property value that was refused.
    Value(ValueError),
    /// A property the struct does not have, read under `#[table(deny_unknown_properties)]`.
    UnknownProperty {
        /// Its name.
        property: String,
    },
}

/// The error for an entity that breaks a limit, or a typed read that fails.
///
/// ```
/// use table_model::{Entity, EntityErrorKind, PartitionKey, PropertyName, RowKey};
/// let mut e = Entity::new(PartitionKey::empty(), RowKey::empty());
/// for i in 0..252 {
///     e.insert(PropertyName::new(format!("P{i}"))?, i)?;
/// }
/// let err = e.insert("P252".parse()?, 0).unwrap_err();
/// assert_eq!(err.kind(), &EntityErrorKind::TooManyProperties { count: 253 });
/// assert_eq!(err.to_string(), "invalid entity: at most 252 custom properties are allowed, found 253 (adding `P252`)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityError {
    kind: EntityErrorKind,
    pub(crate) property: Option<String>,
}

impl EntityError {
    pub(crate) fn new(kind: EntityErrorKind, property: Option<&str>) -> Self {
        EntityError { kind, property: property.map(str::to_owned) }
    }

    /// Which rule was broken.
    pub fn kind(&self) -> &EntityErrorKind {
        &self.kind
    }

    /// The property being added or read, when there was one.
    pub fn property(&self) -> Option<&str> {
        self.property.as_deref()
    }
}

impl From<ValueError> for EntityError {
    fn from(e: ValueError) -> Self {
        let property = e.property.clone();
        EntityError { kind: EntityErrorKind::Value(e), property }
    }
}

impl fmt::Display for EntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let adding = |f: &mut fmt::Formatter<'_>| match &self.property {
            Some(p) => write!(f, " (adding `{p}`)"),
            None => Ok(()),
        };
        match &self.kind {
            EntityErrorKind::TooManyProperties { count } => {
                write!(
                    f,
                    "invalid entity: at most {} custom properties are allowed, found {count}",
                    crate::limits::MAX_CUSTOM_PROPERTIES
                )?;
                adding(f)
            }
            EntityErrorKind::TooLarge { size } => {
                write!(f, "invalid entity: must be at most {} bytes, found {size}", crate::limits::ENTITY_MAX_BYTES)?;
                adding(f)
            }
            EntityErrorKind::MissingProperty { property } => write!(f, "missing property `{property}`"),
            EntityErrorKind::UnknownProperty { property } => {
                write!(f, "property `{property}`: unknown property; the struct has #[table(deny_unknown_properties)]")
            }
            EntityErrorKind::Value(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for EntityError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            EntityErrorKind::Value(e) => Some(e),
            _ => None,
        }
    }
}
