//! [`Property<T>`]: a typed handle on one property of a `#[derive(TableEntity)]` struct.
//!
//! Layer: model.

use core::fmt;
use core::marker::PhantomData;

/// A typed handle on a stored property: its name on the wire, and the Rust type its values have.
///
/// `#[derive(TableEntity)]` generates one per stored property in the struct's
/// [`TableEntity::PROPERTIES`](crate::TableEntity::PROPERTIES), so that code naming a property (a query filter,
/// a `$select` list) is checked by the compiler: a renamed field changes the name everywhere, and comparing a
/// `Property<f64>` with a string does not compile.
///
#[cfg_attr(feature = "derive", doc = "```")]
#[cfg_attr(not(feature = "derive"), doc = "```ignore")]
/// use table_model::{Property, TableEntity};
///
/// #[derive(TableEntity)]
/// #[table(rename_all = "PascalCase")]
/// struct Reading {
///     #[table(partition_key)]
///     sensor: String,
///     #[table(row_key)]
///     at: u64,
///     celsius: f64,
/// }
///
/// let celsius: Property<f64> = Reading::PROPERTIES.celsius;
/// assert_eq!(celsius.name(), "Celsius");
/// ```
pub struct Property<T> {
    name: &'static str,
    ty: PhantomData<fn() -> T>,
}

impl<T> Property<T> {
    /// A handle on the property `name`. Used by the derive, which has checked the name; not part of the API.
    #[doc(hidden)]
    pub const fn __new(name: &'static str) -> Self {
        Property { name, ty: PhantomData }
    }

    /// The property name on the wire, after `rename`/`rename_all`.
    pub const fn name(self) -> &'static str {
        self.name
    }
}

// Manual impls: `T` is only a marker, so the handle is `Copy` whatever `T` is.
impl<T> Clone for Property<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Property<T> {}

impl<T> PartialEq for Property<T> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl<T> Eq for Property<T> {}

impl<T> fmt::Debug for Property<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Property<{}>({:?})", core::any::type_name::<T>(), self.name)
    }
}

impl<T> fmt::Display for Property<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}
