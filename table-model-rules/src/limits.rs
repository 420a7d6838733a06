//! The service's numeric limits, each named once (`docs/rules.md` §1 to §8).
//!
//! Layer: base.

use crate::utf8::utf16_len;

/// Minimum length of a table name, in ASCII characters (`docs/rules.md` §1.1).
pub const TABLE_NAME_MIN_LEN: usize = 3;
/// Maximum length of a table name, in ASCII characters (`docs/rules.md` §1.1).
pub const TABLE_NAME_MAX_LEN: usize = 63;
/// Maximum length of a property name, in UTF-16 code units (`docs/rules.md` §1.2).
pub const PROPERTY_NAME_MAX_UTF16: usize = 255;
/// Maximum length of a PartitionKey or RowKey, in UTF-16 code units (`docs/rules.md` §2.2, our decision).
pub const KEY_MAX_UTF16: usize = 512;
/// Maximum length of an `Edm.String` value, in UTF-16 code units (64 KiB as UTF-16, `docs/rules.md` §3.1).
pub const STRING_MAX_UTF16: usize = 32 * 1024;
/// Maximum size of an `Edm.Binary` value, in decoded bytes (`docs/rules.md` §3.1).
pub const BINARY_MAX_BYTES: usize = 64 * 1024;
/// Maximum number of custom properties of one entity: 255 minus the 3 system properties (`docs/rules.md` §4.1).
pub const MAX_CUSTOM_PROPERTIES: usize = 252;
/// Maximum size of one entity, by the published size formula and as an encoded request body (`docs/rules.md` §4.2).
pub const ENTITY_MAX_BYTES: usize = 1024 * 1024;

/// An entity's keys' share of its size by the published formula (`docs/rules.md` §4.2): 4 bytes, and 2 for each
/// UTF-16 code unit of either key. The size is this plus each property's [`property_size`].
///
/// ```
/// use table_model_rules::limits::{entity_keys_size, property_size};
/// // PartitionKey "p" and RowKey "é" (one unit each), a property "Age" of an Int32 (4 bytes).
/// assert_eq!(entity_keys_size("p", "é") + property_size("Age", 4), 8 + (8 + 6 + 4));
/// ```
pub const fn entity_keys_size(partition_key: &str, row_key: &str) -> usize {
    4 + 2 * utf16_len(partition_key.as_bytes()) + 2 * utf16_len(row_key.as_bytes())
}

/// A property's share of its entity's size (`docs/rules.md` §4.2): 8 bytes, 2 for each UTF-16 code unit of its
/// name, and the size of its value (`value_size`, as the EDM type counts it: 4 for an Int32, 2 a unit of a
/// String, ...).
pub const fn property_size(name: &str, value_size: usize) -> usize {
    property_size_of(utf16_len(name.as_bytes()), value_size)
}

/// At least [`property_size`], without a pass over the name: its bytes stand for its UTF-16 code units, of which
/// there are never more. For a running check against the entity's limit that counts exactly only once this
/// bound is over it.
///
/// ```
/// use table_model_rules::limits::{property_size, property_size_at_most};
/// assert_eq!(property_size_at_most("Age", 4), property_size("Age", 4));
/// assert!(property_size_at_most("Größe", 4) > property_size("Größe", 4)); // ö is 2 bytes, 1 unit
/// ```
pub const fn property_size_at_most(name: &str, value_size: usize) -> usize {
    property_size_of(name.len(), value_size)
}

/// The size formula of a property (`docs/rules.md` §4.2), given its name's UTF-16 code units.
const fn property_size_of(name_units: usize, value_size: usize) -> usize {
    8 + 2 * name_units + value_size
}
/// Maximum number of operations in one entity group transaction (`docs/rules.md` §8.1).
pub const BATCH_MAX_OPERATIONS: usize = 100;
/// A batch request body must stay under this many bytes (`docs/rules.md` §8.1: "under 4 MiB").
pub const BATCH_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Maximum number of discrete comparisons in one `$filter` (`docs/rules.md` §7.1).
pub const FILTER_MAX_COMPARISONS: usize = 15;
/// Maximum number of nested parentheses and `not` operators that `$filter` text may hold, our decision: twice
/// what 15 comparisons can need, and a bound on the parser's recursion (`docs/rules.md` §7.1).
pub const FILTER_MAX_NESTING: usize = 64;
/// The largest `timeout` URI parameter the service honours, in seconds (`docs/rules.md` §12).
pub const SERVER_TIMEOUT_MAX_SECONDS: u64 = 30;
/// How far a Shared Key request's `x-ms-date` may be from the service's clock, in seconds: 15 minutes
/// (`docs/rules.md` §9.1).
pub const SIGNED_DATE_MAX_SKEW_SECONDS: i64 = 15 * 60;
/// Maximum value of `$top`, and the largest page the service returns (`docs/rules.md` §7.3 and §10).
pub const QUERY_MAX_TOP: usize = 1000;
/// Earliest `Edm.DateTime` the service accepts, 1601-01-01T00:00:00Z, in .NET ticks (`docs/rules.md` §3.3 and §6.2).
pub const DATETIME_MIN_TICKS: i64 = 504_911_232_000_000_000;
/// Latest `Edm.DateTime`, 9999-12-31T23:59:59.9999999Z, in .NET ticks: `DateTime.MaxValue.Ticks` (`docs/rules.md` §6).
pub const DATETIME_MAX_TICKS: i64 = 3_155_378_975_999_999_999;
/// The Unix epoch, 1970-01-01T00:00:00Z, in .NET ticks (`docs/rules.md` §6.2).
pub const UNIX_EPOCH_TICKS: i64 = 621_355_968_000_000_000;
/// .NET ticks (100 ns) per second.
pub const TICKS_PER_SECOND: i64 = 10_000_000;
/// Earliest year of a time the service writes as text with a four-digit year: SAS times, stored access
/// policies' `Start` and `Expiry`, RFC 1123 dates such as `LastSyncTime` (`docs/rules.md` §9.3 and §9.5).
pub const TIME_MIN_YEAR: i32 = 1;
/// Latest year of a time the service writes as text with a four-digit year (`docs/rules.md` §9.3 and §9.5).
pub const TIME_MAX_YEAR: i32 = 9999;

/// The system property names, which a custom property may not take in any case (`docs/rules.md` §1.3).
pub const SYSTEM_PROPERTIES: [&str; 3] = ["PartitionKey", "RowKey", "Timestamp"];

/// Maximum number of stored access policies on one table (`docs/rules.md` §9.3).
pub const ACCESS_POLICIES_MAX: usize = 5;
/// Maximum length of a stored access policy's identifier, in characters (`docs/rules.md` §9.3).
pub const ACCESS_POLICY_ID_MAX_CHARS: usize = 64;

/// Shortest retention of Storage Analytics logs and metrics, in days (`docs/rules.md` §9.5).
pub const RETENTION_DAYS_MIN: u32 = 1;
/// Longest retention of Storage Analytics logs and metrics, in days: one year (`docs/rules.md` §9.5).
pub const RETENTION_DAYS_MAX: u32 = 365;
/// Maximum number of CORS rules of one service (`docs/rules.md` §9.5).
pub const CORS_RULES_MAX: usize = 5;
/// Maximum number of allowed origins of one CORS rule (`docs/rules.md` §9.5).
pub const CORS_ORIGINS_MAX: usize = 64;
/// Maximum number of headers named in full in one CORS rule's allowed or exposed headers (`docs/rules.md` §9.5).
pub const CORS_HEADERS_MAX: usize = 64;
/// Maximum number of prefixed headers (`x-ms-meta-*`) in one CORS rule's allowed or exposed headers
/// (`docs/rules.md` §9.5).
pub const CORS_PREFIXED_HEADERS_MAX: usize = 2;
/// Maximum length of one CORS origin or header, in characters (`docs/rules.md` §9.5).
pub const CORS_VALUE_MAX_CHARS: usize = 256;
/// Maximum size of all CORS rules of a request, without the XML tags, in bytes: 2 KiB (`docs/rules.md` §9.5).
pub const CORS_RULES_MAX_BYTES: usize = 2 * 1024;
/// The methods a CORS rule may allow, in the order the service's documentation lists them (`docs/rules.md` §9.5).
pub const CORS_METHODS: [&str; 7] = ["DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT"];

/// Maximum size of a RowKey on Cosmos DB for Table, in UTF-8 bytes (`docs/rules.md` §13.1, our reading of
/// "255 bytes": Cosmos stores the RowKey as the item's `id`, measured in UTF-8).
pub const COSMOS_ROW_KEY_MAX_UTF8_BYTES: usize = 255;
/// Maximum size of a PartitionKey on Cosmos DB for Table, in UTF-8 bytes (`docs/rules.md` §13.1: "1 KB").
pub const COSMOS_PARTITION_KEY_MAX_UTF8_BYTES: usize = 1024;
/// Maximum size of a batch request body on Cosmos DB for Table: "2 MB" read as 2,000,000 bytes, the smaller
/// reading (`docs/rules.md` §13.1).
pub const COSMOS_BATCH_MAX_BODY_BYTES: usize = 2_000_000;
/// The property names Cosmos DB for Table reserves, compared without regard to ASCII case
/// (`docs/rules.md` §13.1).
pub const COSMOS_RESERVED_PROPERTY_NAMES: [&str; 4] = ["ID", "rid", "etag", "ResourceId"];
