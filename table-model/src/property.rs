//! [`Property<T>`]: a typed handle on one property of an entity type.

use std::fmt;
use std::marker::PhantomData;

/// A typed handle on a property: its wire name and, in the type, the Rust type of its values.
///
/// `#[derive(TableEntity)]` generates one per field; the filter builder uses them so that a comparison with a
/// value of the wrong type does not compile.
pub struct Property<T> {
    name: &'static str,
    _type: PhantomData<fn() -> T>,
}

impl<T> Property<T> {
    /// Used by the generated code, which has already checked the name. Not public API.
    #[doc(hidden)]
    pub const fn __new(name: &'static str) -> Self {
        Property { name, _type: PhantomData }
    }

    /// The property's name on the wire.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<T> fmt::Debug for Property<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Property").field(&self.name).finish()
    }
}

impl<T> Clone for Property<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Property<T> {}
