//! Table names and property names (`docs/rules.md` §1).
//!
//! Layer: model.

pub(crate) mod error;

use crate::validated::validated_string;
use error::{PropertyNameError, TableNameError};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use table_model_rules::{property_name, table_name};

/// A validated table name: 3 to 63 ASCII letters and digits, starting with a letter, not `tables`.
///
/// Table names are case-preserving and case-insensitive (`docs/rules.md` §1.1): `Orders` and `orders` name the
/// same table, so equality, ordering and hashing ignore ASCII case while [`Display`](fmt::Display) keeps the
/// case given. For that reason `TableName` does not implement `Borrow<str>`.
///
/// Storage Analytics tables such as `$MetricsHourPrimaryTransactionsBlob` can be read but not created; name
/// them with [`TableName::analytics`].
///
/// ```
/// use table_model::TableName;
/// # fn main() -> Result<(), table_model::TableNameError> {
/// let name: TableName = "Orders".parse()?;
/// assert_eq!(name, "ORDERS".parse::<TableName>()?);
/// assert_eq!(name.to_string(), "Orders");
/// assert_eq!(
///     "tables".parse::<TableName>().unwrap_err().to_string(),
///     "invalid table name \"tables\": `tables` is reserved"
/// );
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct TableName(Cow<'static, str>);

impl TableName {
    /// Validates a table name that can be created.
    ///
    /// # Errors
    /// [`TableNameError`] naming the rule: length, first character, a character at an index, or `tables`.
    pub fn new(name: impl Into<String>) -> Result<Self, TableNameError> {
        let name = name.into();
        if let Err(e) = table_name::check(&name) {
            return Err(TableNameError::new(e, name));
        }
        Ok(TableName(Cow::Owned(name)))
    }

    /// A table name from a literal, checked at compile time when used in a `const`.
    ///
    /// ```
    /// use table_model::TableName;
    /// const ORDERS: TableName = TableName::from_static("Orders");
    /// assert_eq!(ORDERS.as_str(), "Orders");
    /// ```
    ///
    /// An invalid literal in a `const` fails the build:
    ///
    /// ```compile_fail
    /// use table_model::TableName;
    /// const BAD: TableName = TableName::from_static("my-table");
    /// ```
    ///
    /// # Panics
    /// When the name is invalid, with the rule it breaks (a compile error in `const` context).
    ///
    /// ```should_panic
    /// let _ = table_model::TableName::from_static("ab");
    /// ```
    pub const fn from_static(name: &'static str) -> Self {
        match table_name::check(name) {
            Ok(()) => TableName(Cow::Borrowed(name)),
            Err(e) => panic!("{}", e.rule()),
        }
    }

    /// The table a derived struct names with `#[table(name = "...")]`, which the derive has checked: a name that
    /// can be created, or a Storage Analytics one. Evaluated in a `const`, so the check costs nothing at run time.
    pub(crate) const fn from_derived(name: &'static str) -> Self {
        let checked = match name.as_bytes() {
            [b'$', ..] => table_name::check_analytics(name),
            _ => table_name::check(name),
        };
        match checked {
            Ok(()) => TableName(Cow::Borrowed(name)),
            Err(e) => panic!("{}", e.rule()),
        }
    }

    /// Names a Storage Analytics table (`$Metrics...`), which can be read and queried but not created.
    ///
    /// ```
    /// use table_model::TableName;
    /// let metrics = TableName::analytics("$MetricsHourPrimaryTransactionsBlob")?;
    /// assert!(metrics.is_analytics());
    /// # Ok::<(), table_model::TableNameError>(())
    /// ```
    ///
    /// # Errors
    /// When the name is not `$Metrics` followed by ASCII letters.
    pub fn analytics(name: impl Into<String>) -> Result<Self, TableNameError> {
        let name = name.into();
        if let Err(e) = table_name::check_analytics(&name) {
            return Err(TableNameError::new(e, name));
        }
        Ok(TableName(Cow::Owned(name)))
    }

    /// Whether this names a Storage Analytics table (made by [`TableName::analytics`]).
    pub fn is_analytics(&self) -> bool {
        self.0.starts_with('$')
    }

    /// The name as given, case preserved.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Converts into the owned `String`, case preserved.
    pub fn into_string(self) -> String {
        self.0.into_owned()
    }
}

impl PartialEq for TableName {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_ignore_ascii_case(&other.0)
    }
}

impl Eq for TableName {}

impl PartialEq<str> for TableName {
    fn eq(&self, other: &str) -> bool {
        self.0.eq_ignore_ascii_case(other)
    }
}

impl PartialEq<&str> for TableName {
    fn eq(&self, other: &&str) -> bool {
        self.0.eq_ignore_ascii_case(other)
    }
}

impl Ord for TableName {
    fn cmp(&self, other: &Self) -> Ordering {
        let a = self.0.bytes().map(|b| b.to_ascii_lowercase());
        let b = other.0.bytes().map(|b| b.to_ascii_lowercase());
        a.cmp(b)
    }
}

impl PartialOrd for TableName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Hash for TableName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for b in self.0.bytes() {
            state.write_u8(b.to_ascii_lowercase());
        }
        state.write_u8(0xFF);
    }
}

impl fmt::Debug for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for TableName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A copy of the name: what takes `impl Into<TableName>` (the client's methods) takes a `&TableName` too.
impl From<&TableName> for TableName {
    fn from(value: &TableName) -> TableName {
        value.clone()
    }
}

impl FromStr for TableName {
    type Err = TableNameError;
    fn from_str(s: &str) -> Result<Self, TableNameError> {
        TableName::new(s)
    }
}

impl TryFrom<&str> for TableName {
    type Error = TableNameError;
    fn try_from(s: &str) -> Result<Self, TableNameError> {
        TableName::new(s)
    }
}

impl TryFrom<String> for TableName {
    type Error = TableNameError;
    fn try_from(s: String) -> Result<Self, TableNameError> {
        TableName::new(s)
    }
}

impl From<TableName> for String {
    fn from(value: TableName) -> String {
        value.into_string()
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for TableName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for TableName {
    /// Accepts creatable names and Storage Analytics names, both validated.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        if s.starts_with('$') { TableName::analytics(s) } else { TableName::new(s) }.map_err(serde::de::Error::custom)
    }
}

/// A validated custom property name: a C# identifier that is also an XML name, at most 255 UTF-16 code units,
/// and not `PartitionKey`, `RowKey` or `Timestamp` in any case (`docs/rules.md` §1.2, §1.3). Case-sensitive.
///
/// ```
/// use table_model::PropertyName;
/// # fn main() -> Result<(), table_model::PropertyNameError> {
/// let name: PropertyName = "UnitPrice".parse()?;
/// assert_eq!(name, "UnitPrice");
/// assert!("Größe".parse::<PropertyName>().is_ok());
/// assert_eq!(
///     "unit price".parse::<PropertyName>().unwrap_err().to_string(),
///     "invalid property name \"unit price\": character U+0020 at index 4 is not allowed; names follow C# identifier \
///      rules (letters, digits, `_`)"
/// );
/// # Ok(())
/// # }
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PropertyName(Cow<'static, str>);

impl PropertyName {
    /// Validates a property name.
    ///
    /// # Errors
    /// [`PropertyNameError`] naming the rule, the character and its byte index.
    pub fn new(name: impl Into<String>) -> Result<Self, PropertyNameError> {
        name.into().try_into()
    }

    /// A property name from an ASCII literal, checked at compile time when used in a `const`. Non-ASCII names
    /// need the Unicode tables, which `const` code cannot use: build those with [`PropertyName::new`].
    ///
    /// ```
    /// use table_model::PropertyName;
    /// const PRICE: PropertyName = PropertyName::from_static("Price");
    /// assert_eq!(PRICE, "Price");
    /// ```
    ///
    /// ```compile_fail
    /// use table_model::PropertyName;
    /// const BAD: PropertyName = PropertyName::from_static("RowKey");
    /// ```
    ///
    /// # Panics
    /// When the name is invalid or not ASCII (a compile error in `const` context).
    ///
    /// ```should_panic
    /// let _ = table_model::PropertyName::from_static("unit-price");
    /// ```
    pub const fn from_static(name: &'static str) -> Self {
        match property_name::check_const(name) {
            Ok(()) => PropertyName(Cow::Borrowed(name)),
            Err(e) => panic!("{}", e.rule()),
        }
    }

    /// A name checked by the derive when it expanded (`__private::derived_name`).
    pub(crate) const fn from_checked_static(name: &'static str) -> Self {
        PropertyName(Cow::Borrowed(name))
    }

    fn validate(name: &str) -> Result<(), property_name::PropertyNameError> {
        property_name::check(name)
    }

    /// A name the caller has already checked with `property_name::check` (the JSON decoder, which checks
    /// every member name once).
    pub(crate) fn from_checked(name: String) -> Self {
        debug_assert!(property_name::check(&name).is_ok());
        PropertyName(Cow::Owned(name))
    }
}

validated_string!(PropertyName, PropertyNameError, "property name");

impl std::borrow::Borrow<str> for PropertyName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn hash<T: Hash>(t: &T) -> u64 {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    }

    #[test]
    fn table_name_ignores_case_but_keeps_it() {
        let a = TableName::new("Orders").unwrap();
        let b = TableName::new("oRDERS").unwrap();
        assert_eq!(a, b);
        assert_eq!(hash(&a), hash(&b));
        assert_eq!(a.cmp(&b), Ordering::Equal);
        assert_eq!(a.to_string(), "Orders");
        assert_eq!(b.as_str(), "oRDERS");
        assert!(TableName::new("Apple").unwrap() < TableName::new("banana").unwrap());
        assert!(TableName::new("apple").unwrap() < TableName::new("Banana").unwrap());
        assert_ne!(TableName::new("abc").unwrap(), TableName::new("abcd").unwrap());
    }

    #[test]
    fn const_constructors() {
        const T: TableName = TableName::from_static("Orders");
        const P: PropertyName = PropertyName::from_static("Price");
        assert_eq!(T, "orders");
        assert_eq!(P.as_str(), "Price");
        assert!(std::panic::catch_unwind(|| TableName::from_static("a-b")).is_err());
    }

    #[test]
    fn every_constructor_validates() {
        assert!(PropertyName::try_from("a b").is_err());
        assert!(PropertyName::try_from(String::from("a b")).is_err());
        assert!("a b".parse::<PropertyName>().is_err());
        assert!(PropertyName::new("Timestamp").is_err());
        assert!(TableName::try_from("ab").is_err());
        assert!(TableName::try_from(String::from("ab")).is_err());
        assert!(TableName::analytics("Orders").is_err());
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_validates() {
        let ok: PropertyName = serde_json::from_str("\"Price\"").unwrap();
        assert_eq!(ok, "Price");
        // The serde error is the validator's message, naming the value.
        let err = serde_json::from_str::<PropertyName>("\"Unit Price\"").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid property name \"Unit Price\": character U+0020 at index 4 is not allowed; names follow C# \
             identifier rules (letters, digits, `_`)"
        );
        let t: TableName = serde_json::from_str("\"$MetricsCapacityBlob\"").unwrap();
        assert!(t.is_analytics());
        let err = serde_json::from_str::<TableName>("\"audit-log\"").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid table name \"audit-log\": character `-` at index 5 is not allowed; use ASCII letters and digits \
             only"
        );
        let err = serde_json::from_str::<crate::RowKey>("\"a\\u0000b\"").unwrap_err();
        assert_eq!(err.to_string(), "invalid row key \"a\\0b\": character U+0000 at index 1 is not allowed");
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"$MetricsCapacityBlob\"");
    }
}
