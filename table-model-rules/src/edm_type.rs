//! The eight EDM property types of the Table service (`docs/rules.md` §3.1).
//!
//! Layer: rules.

use core::fmt;
use core::str::FromStr;

/// The type of a property value, as the service names it (`Edm.Int64`, ...).
///
/// ```
/// use table_model_rules::EdmType;
/// assert_eq!(EdmType::Int64.as_str(), "Edm.Int64");
/// assert_eq!("Edm.Guid".parse::<EdmType>(), Ok(EdmType::Guid));
/// assert_eq!(EdmType::from_short_name("DateTime"), Some(EdmType::DateTime));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdmType {
    /// `Edm.Binary`: bytes, at most 64 KiB.
    Binary,
    /// `Edm.Boolean`.
    Boolean,
    /// `Edm.DateTime`: a UTC instant from 1601-01-01 to 9999-12-31 at 100 ns resolution.
    DateTime,
    /// `Edm.Double`: any IEEE 754 double, NaN and infinities included.
    Double,
    /// `Edm.Guid`: a 128-bit UUID.
    Guid,
    /// `Edm.Int32`.
    Int32,
    /// `Edm.Int64`.
    Int64,
    /// `Edm.String`: at most 32,768 UTF-16 code units.
    String,
}

impl EdmType {
    /// Every EDM type, in the order of the service documentation.
    pub const ALL: [EdmType; 8] = [
        EdmType::Binary,
        EdmType::Boolean,
        EdmType::DateTime,
        EdmType::Double,
        EdmType::Guid,
        EdmType::Int32,
        EdmType::Int64,
        EdmType::String,
    ];

    /// The name used in `@odata.type` annotations, such as `Edm.Int64`.
    pub const fn as_str(self) -> &'static str {
        match self {
            EdmType::Binary => "Edm.Binary",
            EdmType::Boolean => "Edm.Boolean",
            EdmType::DateTime => "Edm.DateTime",
            EdmType::Double => "Edm.Double",
            EdmType::Guid => "Edm.Guid",
            EdmType::Int32 => "Edm.Int32",
            EdmType::Int64 => "Edm.Int64",
            EdmType::String => "Edm.String",
        }
    }

    /// The name without the `Edm.` prefix, such as `Int64`.
    pub const fn short_name(self) -> &'static str {
        match self {
            EdmType::Binary => "Binary",
            EdmType::Boolean => "Boolean",
            EdmType::DateTime => "DateTime",
            EdmType::Double => "Double",
            EdmType::Guid => "Guid",
            EdmType::Int32 => "Int32",
            EdmType::Int64 => "Int64",
            EdmType::String => "String",
        }
    }

    /// Parses a full name such as `Edm.Int64` (case-sensitive, as the service writes it); `None` for anything
    /// else. [`FromStr`] is this with an error that names the input.
    ///
    /// ```
    /// use table_model_rules::EdmType;
    /// assert_eq!(EdmType::from_name("Edm.Int64"), Some(EdmType::Int64));
    /// assert_eq!(EdmType::from_name("Int64"), None);
    /// ```
    #[inline]
    pub fn from_name(name: &str) -> Option<EdmType> {
        name.strip_prefix("Edm.").and_then(EdmType::from_short_name)
    }

    /// Parses a short name such as `Int64` (case-sensitive); `None` for anything else.
    #[inline]
    pub fn from_short_name(name: &str) -> Option<EdmType> {
        // A `match` dispatches on the length first, faster than comparing against each of `ALL` (the decoder
        // parses every annotation); `names_round_trip` checks it against `short_name`.
        match name {
            "Binary" => Some(EdmType::Binary),
            "Boolean" => Some(EdmType::Boolean),
            "DateTime" => Some(EdmType::DateTime),
            "Double" => Some(EdmType::Double),
            "Guid" => Some(EdmType::Guid),
            "Int32" => Some(EdmType::Int32),
            "Int64" => Some(EdmType::Int64),
            "String" => Some(EdmType::String),
            _ => None,
        }
    }

    /// Whether a written value of this type needs an `@odata.type` annotation for the service to store it with
    /// this type. `Double` is always annotated by this crate although the service could infer it from a
    /// decimal point (`docs/rules.md` §5.1).
    pub const fn needs_annotation(self) -> bool {
        !matches!(self, EdmType::Boolean | EdmType::Int32 | EdmType::String)
    }
}

impl fmt::Display for EdmType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a type name that is not one of the eight EDM types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEdmType {
    name: String,
}

impl UnknownEdmType {
    /// Off the hot path of [`EdmType::from_str`], which decoders inline.
    #[cold]
    #[inline(never)]
    fn new(name: &str) -> Self {
        UnknownEdmType { name: name.to_owned() }
    }

    /// The name that was not recognised.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for UnknownEdmType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown EDM type `{}`: expected one of Edm.Binary, Edm.Boolean, Edm.DateTime, Edm.Double, Edm.Guid, Edm.Int32, Edm.Int64, Edm.String",
            self.name
        )
    }
}

impl std::error::Error for UnknownEdmType {}

impl FromStr for EdmType {
    type Err = UnknownEdmType;

    /// Parses a full name such as `Edm.Int64` (case-sensitive, as the service writes it).
    #[inline]
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match EdmType::from_name(s) {
            Some(t) => Ok(t),
            None => Err(UnknownEdmType::new(s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in EdmType::ALL {
            assert_eq!(t.as_str().parse::<EdmType>(), Ok(t));
            assert_eq!(EdmType::from_short_name(t.short_name()), Some(t));
            assert_eq!(t.as_str(), format!("Edm.{}", t.short_name()));
        }
        assert!("edm.int32".parse::<EdmType>().is_err());
        assert!("Emd.Boolean".parse::<EdmType>().is_err());
        for bad in ["", "Edm.", "Int64", "Edm.int64", "Edm.Int64 ", "Edm.Edm.Int64", "Edm.Single"] {
            assert_eq!(bad.parse::<EdmType>().unwrap_err().name(), bad);
        }
        for bad in ["", "Edm.Int64", "int64", "Int64 ", "Single", "Guid2"] {
            assert_eq!(EdmType::from_short_name(bad), None, "{bad}");
        }
        assert_eq!(
            "Edm.Decimal".parse::<EdmType>().unwrap_err().to_string(),
            "unknown EDM type `Edm.Decimal`: expected one of Edm.Binary, Edm.Boolean, Edm.DateTime, Edm.Double, Edm.Guid, Edm.Int32, Edm.Int64, Edm.String"
        );
    }

    #[test]
    fn annotation_rule() {
        let annotated: Vec<_> = EdmType::ALL.into_iter().filter(|t| t.needs_annotation()).collect();
        assert_eq!(annotated, [EdmType::Binary, EdmType::DateTime, EdmType::Double, EdmType::Guid, EdmType::Int64]);
    }
}
