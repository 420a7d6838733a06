//! How a derived struct reads its fields: the property, else the field's default, else an error naming the
//! property. `EdmField::__read` and `__finish` and the schema's check call these; the generated code calls them
//! through `table_model::__private`, which re-exports them.

use crate::edm::error::ValueError;
use crate::edm::EdmValue;
use crate::entity::error::{EntityError, EntityErrorKind};
use crate::entity::Entity;
use crate::json::error::DecodeError;
use std::borrow::Cow;

/// `Result<T, EntityError>`, for signatures.
pub type Result<T> = core::result::Result<T, EntityError>;

/// The full name of a property of a flattened group: `prefix` + `name`.
pub fn full_name<'a>(prefix: &str, name: &'a str) -> Cow<'a, str> {
    if prefix.is_empty() {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(format!("{prefix}{name}"))
    }
}

/// The error for a field whose property is absent and has no default.
pub(crate) fn missing(name: &str) -> EntityError {
    EntityError::new(EntityErrorKind::MissingProperty { property: name.to_owned() }, Some(name))
}

/// Takes a field's property out of the entity and converts it with `from_edm`; an absent property is
/// `absent()` (`Some(None)` for an `Option`, the default under `#[table(default)]`), else a missing-property
/// error.
pub fn read<T>(
    entity: &mut Entity,
    name: &str,
    from_edm: fn(EdmValue) -> core::result::Result<T, ValueError>,
    absent: fn() -> Option<T>,
) -> Result<T> {
    match entity.remove(name) {
        Some(v) => from_edm(v).map_err(|e| e.in_property(name).into()),
        None => absent().ok_or_else(|| missing(name)),
    }
}

/// The error for a property the struct does not have, under `deny_unknown_properties`.
pub fn unknown_property(name: &str) -> EntityError {
    EntityError::new(EntityErrorKind::UnknownProperty { property: name.to_owned() }, Some(name))
}

/// The value of a field once every property has been seen: the decoded one, else `absent()`, else an error
/// naming `prefix` + `name`.
pub fn finish<T>(
    slot: Option<T>,
    prefix: &str,
    name: &str,
    absent: fn() -> Option<T>,
) -> core::result::Result<T, DecodeError> {
    match slot {
        Some(v) => Ok(v),
        None => absent().ok_or_else(|| DecodeError::missing_property(full_name(prefix, name))),
    }
}
