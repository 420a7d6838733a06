//! The rules that differ between the services that serve the Table data model (`docs/rules.md` §13): which
//! set an entity is checked against, and the checks Cosmos DB for Table adds to Azure Table Storage's.
//!
//! Every entity, key and name is checked against Azure Table Storage's rules (§1 to §8) wherever it is sent.
//! Cosmos DB for Table is stricter in three ways, which [`RuleSet::CosmosDb`] and [`RuleSet::Portable`] add:
//! shorter keys counted in UTF-8 bytes, four reserved property names, and a smaller batch body. Where Cosmos is
//! looser (entity size, property count, table names), the Storage rule stays, so [`RuleSet::Portable`], the
//! intersection of both services' rules, checks exactly what [`RuleSet::CosmosDb`] checks.
//!
//! Layer: rules.

use crate::display::QuotedValue;
use crate::key::KeyKind;
use crate::limits::{
    BATCH_MAX_BODY_BYTES, COSMOS_BATCH_MAX_BODY_BYTES, COSMOS_PARTITION_KEY_MAX_UTF8_BYTES,
    COSMOS_RESERVED_PROPERTY_NAMES, COSMOS_ROW_KEY_MAX_UTF8_BYTES,
};
use crate::utf8::eq_ignore_ascii_case;
use core::fmt;

/// Which service's rules an entity is checked against.
///
/// ```
/// use table_model_rules::{KeyKind, RuleSet};
/// assert_eq!(RuleSet::parse("cosmos"), Some(RuleSet::CosmosDb));
/// assert!(RuleSet::Storage.check_property_name("ID").is_ok());
/// assert!(RuleSet::CosmosDb.check_property_name("ID").is_err());
/// assert!(RuleSet::Portable.check_key(KeyKind::Row, &"r".repeat(256)).is_err());
/// assert_eq!(RuleSet::CosmosDb.batch_max_body_bytes(), 2_000_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RuleSet {
    /// Azure Table Storage (and Azurite, which emulates it): `docs/rules.md` §1 to §12.
    #[default]
    Storage,
    /// Cosmos DB for Table: Storage's rules and the stricter ones of `docs/rules.md` §13.1.
    CosmosDb,
    /// Valid on both services: the intersection of their rules (today the same checks as [`RuleSet::CosmosDb`]).
    Portable,
}

impl RuleSet {
    /// Every rule set, in declaration order.
    pub const ALL: [RuleSet; 3] = [RuleSet::Storage, RuleSet::CosmosDb, RuleSet::Portable];

    /// The rule set named by the derive's `#[table(service = "...")]`: `storage`, `cosmos` or `portable`.
    pub fn parse(name: &str) -> Option<RuleSet> {
        match name {
            "storage" => Some(RuleSet::Storage),
            "cosmos" => Some(RuleSet::CosmosDb),
            "portable" => Some(RuleSet::Portable),
            _ => None,
        }
    }

    /// The word [`RuleSet::parse`] takes: `storage`, `cosmos` or `portable`.
    pub const fn keyword(self) -> &'static str {
        match self {
            RuleSet::Storage => "storage",
            RuleSet::CosmosDb => "cosmos",
            RuleSet::Portable => "portable",
        }
    }

    /// The service as error messages name it.
    pub const fn describe(self) -> &'static str {
        match self {
            RuleSet::Storage => "Azure Table Storage",
            RuleSet::CosmosDb => "Cosmos DB for Table",
            RuleSet::Portable => "both Azure Table Storage and Cosmos DB for Table",
        }
    }

    /// Whether Cosmos DB's stricter rules apply.
    const fn cosmos(self) -> bool {
        matches!(self, RuleSet::CosmosDb | RuleSet::Portable)
    }

    /// The largest key of this kind in UTF-8 bytes, when this rule set limits it beyond the 512 UTF-16 code
    /// units every key is held to (`docs/rules.md` §2.2 and §13.1).
    pub const fn key_max_utf8_bytes(self, key: KeyKind) -> Option<usize> {
        match (self.cosmos(), key) {
            (false, _) => None,
            (true, KeyKind::Partition) => Some(COSMOS_PARTITION_KEY_MAX_UTF8_BYTES),
            (true, KeyKind::Row) => Some(COSMOS_ROW_KEY_MAX_UTF8_BYTES),
        }
    }

    /// The largest batch request body this rule set allows, in bytes: Storage's "under 4 MiB" (so 4 MiB minus
    /// one), Cosmos DB's 2 MB (`docs/rules.md` §8.1 and §13.1).
    pub const fn batch_max_body_bytes(self) -> usize {
        if self.cosmos() {
            COSMOS_BATCH_MAX_BODY_BYTES
        } else {
            BATCH_MAX_BODY_BYTES - 1
        }
    }

    /// Checks a key, already valid by `docs/rules.md` §2, against this rule set's own limit on its size.
    ///
    /// ```
    /// use table_model_rules::{KeyKind, RuleSet};
    /// let err = RuleSet::CosmosDb.check_key(KeyKind::Row, &"é".repeat(128)).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid row key for Cosmos DB for Table: 256 bytes of UTF-8, at most 255 allowed");
    /// ```
    pub fn check_key(self, key: KeyKind, value: &str) -> Result<(), RuleSetError> {
        match self.key_max_utf8_bytes(key) {
            Some(max) if value.len() > max => Err(RuleSetError {
                rules: self,
                kind: RuleSetErrorKind::KeyTooLong { key, utf8_len: value.len(), max },
            }),
            _ => Ok(()),
        }
    }

    /// Checks a custom property name, already valid by `docs/rules.md` §1.2, against the names this rule set
    /// reserves (Cosmos DB's `ID`, `rid`, `etag` and `ResourceId`, in any ASCII case).
    ///
    /// ```
    /// use table_model_rules::RuleSet;
    /// let err = RuleSet::Portable.check_property_name("eTag").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid property name for both Azure Table Storage and Cosmos DB for Table: matches the reserved name \
    ///      `etag` (Cosmos DB for Table reserves ID, rid, etag and ResourceId, in any case)"
    /// );
    /// ```
    ///
    /// A `const fn`, so that `#[derive(TableEntity)]` runs this same check on the joined names of flattened
    /// groups in `const` context.
    pub const fn check_property_name(self, name: &str) -> Result<(), RuleSetError> {
        if !self.cosmos() {
            return Ok(());
        }
        let mut i = 0;
        while i < COSMOS_RESERVED_PROPERTY_NAMES.len() {
            let reserved = COSMOS_RESERVED_PROPERTY_NAMES[i];
            if eq_ignore_ascii_case(reserved.as_bytes(), name.as_bytes()) {
                return Err(RuleSetError { rules: self, kind: RuleSetErrorKind::ReservedPropertyName { reserved } });
            }
            i += 1;
        }
        Ok(())
    }
}

impl fmt::Display for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Which rule of a [`RuleSet`] was broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuleSetErrorKind {
    /// A key longer, in UTF-8 bytes, than the rule set allows.
    KeyTooLong {
        /// Which key.
        key: KeyKind,
        /// Its length in UTF-8 bytes.
        utf8_len: usize,
        /// The most allowed.
        max: usize,
    },
    /// A property name the service reserves.
    ReservedPropertyName {
        /// The reserved name it matches, as the service's documentation spells it.
        reserved: &'static str,
    },
}

/// A key or property name that is valid on Azure Table Storage but not under a stricter [`RuleSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleSetError {
    rules: RuleSet,
    kind: RuleSetErrorKind,
}

impl RuleSetError {
    /// The rule set that refused the value.
    pub const fn rules(&self) -> RuleSet {
        self.rules
    }

    /// Which rule was broken.
    pub const fn kind(&self) -> RuleSetErrorKind {
        self.kind
    }

    /// The message naming the refused value, as the other validators' `with_value` messages do:
    /// `invalid property name "Id" for Cosmos DB for Table: ...`.
    ///
    /// ```
    /// use table_model_rules::RuleSet;
    /// let err = RuleSet::CosmosDb.check_property_name("Id").unwrap_err();
    /// assert_eq!(
    ///     err.with_value("Id").to_string(),
    ///     "invalid property name \"Id\" for Cosmos DB for Table: matches the reserved name `ID` (Cosmos DB for \
    ///      Table reserves ID, rid, etag and ResourceId, in any case)"
    /// );
    /// ```
    pub fn with_value<'a>(&'a self, value: &'a str) -> impl fmt::Display + 'a {
        WithValue(self, value)
    }

    /// The message of a reserved property name as static pieces which, concatenated, are its `Display`: for the
    /// derive's check of flattened names in `const` context, which cannot format. `None` for a key too long.
    #[doc(hidden)]
    pub const fn static_message(&self) -> Option<[&'static str; 5]> {
        match self.kind {
            RuleSetErrorKind::ReservedPropertyName { reserved } => {
                Some(["invalid property name for ", self.rules.describe(), RESERVED_BEFORE, reserved, RESERVED_AFTER])
            }
            RuleSetErrorKind::KeyTooLong { .. } => None,
        }
    }

    fn subject(&self) -> &'static str {
        match self.kind {
            RuleSetErrorKind::KeyTooLong { key, .. } => key.describe(),
            RuleSetErrorKind::ReservedPropertyName { .. } => "property name",
        }
    }

    fn detail(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            RuleSetErrorKind::KeyTooLong { utf8_len, max, .. } => {
                write!(f, "{utf8_len} bytes of UTF-8, at most {max} allowed")
            }
            RuleSetErrorKind::ReservedPropertyName { reserved } => {
                write!(f, "{}{reserved}{RESERVED_AFTER}", &RESERVED_BEFORE[2..])
            }
        }
    }
}

impl fmt::Display for RuleSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {} for {}: ", self.subject(), self.rules)?;
        self.detail(f)
    }
}

/// The detail of a reserved-name message around the name, after "invalid property name for <service>".
const RESERVED_BEFORE: &str = ": matches the reserved name `";
const RESERVED_AFTER: &str = "` (Cosmos DB for Table reserves ID, rid, etag and ResourceId, in any case)";

struct WithValue<'a>(&'a RuleSetError, &'a str);

impl fmt::Display for WithValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let WithValue(err, value) = *self;
        write!(f, "invalid {} {} for {}: ", err.subject(), QuotedValue(value), err.rules)?;
        err.detail(f)
    }
}

impl std::error::Error for RuleSetError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_adds_nothing() {
        assert!(RuleSet::Storage.check_key(KeyKind::Row, &"r".repeat(512)).is_ok());
        for name in COSMOS_RESERVED_PROPERTY_NAMES {
            assert!(RuleSet::Storage.check_property_name(name).is_ok());
        }
        assert_eq!(RuleSet::Storage.key_max_utf8_bytes(KeyKind::Row), None);
        assert_eq!(RuleSet::Storage.batch_max_body_bytes(), 4 * 1024 * 1024 - 1);
    }

    #[test]
    fn cosmos_and_portable_check_the_same() {
        for rules in [RuleSet::CosmosDb, RuleSet::Portable] {
            assert!(rules.check_key(KeyKind::Row, &"r".repeat(255)).is_ok());
            assert!(rules.check_key(KeyKind::Row, &"r".repeat(256)).is_err());
            // Three bytes of UTF-8 per character: 85 fit, 86 do not.
            assert!(rules.check_key(KeyKind::Row, &"€".repeat(85)).is_ok());
            assert!(rules.check_key(KeyKind::Row, &"€".repeat(86)).is_err());
            assert!(rules.check_key(KeyKind::Partition, &"p".repeat(1024)).is_ok());
            let err = rules.check_key(KeyKind::Partition, &"p".repeat(1025)).unwrap_err();
            assert_eq!(err.kind(), RuleSetErrorKind::KeyTooLong { key: KeyKind::Partition, utf8_len: 1025, max: 1024 });
            for name in ["ID", "id", "Id", "RID", "rid", "ETag", "etag", "resourceid", "ResourceId"] {
                assert!(rules.check_property_name(name).is_err(), "{name}");
            }
            for name in ["IDs", "rid2", "_etag", "Resource", "Identity"] {
                assert!(rules.check_property_name(name).is_ok(), "{name}");
            }
            assert_eq!(rules.batch_max_body_bytes(), 2_000_000);
        }
    }

    #[test]
    fn static_message_is_the_display() {
        for rules in [RuleSet::CosmosDb, RuleSet::Portable] {
            let err = rules.check_property_name("Etag").unwrap_err();
            assert_eq!(err.static_message().unwrap().concat(), err.to_string());
        }
        const CHECKED: Result<(), RuleSetError> = RuleSet::CosmosDb.check_property_name("resourceID");
        assert!(CHECKED.is_err());
        let long = RuleSet::CosmosDb.check_key(KeyKind::Row, &"r".repeat(256)).unwrap_err();
        assert_eq!(long.static_message(), None);
    }

    #[test]
    fn parse_and_keyword_round_trip() {
        for rules in RuleSet::ALL {
            assert_eq!(RuleSet::parse(rules.keyword()), Some(rules));
        }
        assert_eq!(RuleSet::parse("Cosmos"), None);
    }

    #[test]
    fn messages_name_the_value_and_the_rule() {
        let err = RuleSet::CosmosDb.check_key(KeyKind::Partition, &"p".repeat(1100)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid partition key for Cosmos DB for Table: 1100 bytes of UTF-8, at most 1024 allowed"
        );
        let shown = err.with_value(&"p".repeat(1100)).to_string();
        assert!(
            shown.starts_with(&format!("invalid partition key \"{}\"... for Cosmos DB", "p".repeat(64))),
            "{shown}"
        );
    }
}
