//! The error of a shared access signature or a stored access policy that breaks a rule.

use std::fmt;

/// Why a shared access signature or a stored access policy breaks a rule (`docs/rules.md` §9.3).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SasErrorKind {
    /// No permission, and no stored access policy named that could hold them.
    NoPermission,
    /// An account SAS without a permission (an account SAS has no stored access policy to hold them).
    NoAccountPermission,
    /// A letter that is not one of a set's: permissions (`sp`) or resource types (`srt`).
    UnknownLetter {
        /// Which set: `sp` or `srt`.
        field: &'static str,
        /// The letter.
        letter: char,
        /// Its byte index.
        index: usize,
        /// The set's letters, in the service's order.
        allowed: &'static str,
    },
    /// A letter given twice in permissions (`sp`) or resource types (`srt`).
    RepeatedLetter {
        /// Which set: `sp` or `srt`.
        field: &'static str,
        /// The letter.
        letter: char,
        /// The byte index of its second occurrence.
        index: usize,
    },
    /// An account name that is not ASCII letters, digits and `-`: it would change the string to sign.
    InvalidAccountName {
        /// The name found.
        account: String,
    },
    /// A key range bound (`spk`, `srk`, `epk`, `erk`) with a control character, which no key holds.
    KeyBoundCharacter {
        /// The character.
        ch: char,
        /// Its byte index.
        index: usize,
    },
    /// No expiry, and no stored access policy named that could hold it.
    NoExpiry,
    /// An expiry that is not after the start.
    ExpiryNotAfterStart {
        /// The start, as signed.
        start: String,
        /// The expiry, as signed.
        expiry: String,
    },
    /// A time that cannot be written as `YYYY-MM-DDThh:mm:ssZ`: outside the years 1 to 9999.
    TimeOutOfRange {
        /// Which time: `st`, `se`, or a stored policy's `Start` or `Expiry`.
        field: &'static str,
        /// The year found.
        year: i32,
    },
    /// A RowKey bound without the PartitionKey bound of its pair (`srk` without `spk`, `erk` without `epk`).
    RowKeyWithoutPartitionKey {
        /// The RowKey bound's parameter.
        row: &'static str,
        /// The PartitionKey bound's parameter it needs.
        partition: &'static str,
    },
    /// A key range whose start (`spk`, `srk`) comes after its end (`epk`, `erk`) in the service's key order:
    /// it reaches no entity.
    EmptyKeyRange {
        /// The start, `spk` or `spk`/`srk`.
        start: String,
        /// The end, `epk` or `epk`/`erk`.
        end: String,
    },
    /// An IP range whose first address comes after its last.
    InvalidIpRange {
        /// The first address.
        start: std::net::Ipv4Addr,
        /// The last address.
        end: std::net::Ipv4Addr,
    },
    /// An IP range (`sip`) that is not an IPv4 address or two joined by `-`.
    IpRangeSyntax {
        /// The text found.
        value: String,
    },
    /// An account SAS without a resource type.
    NoResourceType,
    /// A stored access policy identifier that is empty or longer than 64 characters.
    PolicyIdLength {
        /// Its length, in characters.
        chars: usize,
    },
    /// A stored access policy identifier with a control character, which the policies' XML cannot carry.
    PolicyIdCharacter {
        /// The character.
        ch: char,
        /// Its byte index.
        index: usize,
    },
    /// More than 5 stored access policies for one table.
    TooManyPolicies {
        /// How many were given.
        found: usize,
    },
    /// Two stored access policies with one identifier.
    DuplicatePolicyId {
        /// The identifier.
        id: String,
    },
}

/// The error for a shared access signature or stored access policy that breaks a rule: nothing is signed or
/// sent.
///
/// ```
/// use table_model::sas::{TableSas, TableSasPermissions};
/// use table_model::{AccountKey, SasErrorKind};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let expiry = chrono::DateTime::parse_from_rfc3339("2026-11-23T00:00:00Z")?.to_utc();
/// let err = TableSas::new("AuditLog".parse()?)
///     .expiry(expiry)
///     .sign("devstoreaccount1", &AccountKey::development())
///     .unwrap_err();
/// assert_eq!(err.kind(), &SasErrorKind::NoPermission);
/// assert_eq!(
///     err.to_string(),
///     "invalid shared access signature: `sp` (permissions) is empty; give at least one permission, \
///      or name a stored access policy that holds them"
/// );
/// # let _ = TableSasPermissions::READ;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SasError {
    kind: SasErrorKind,
}

impl SasError {
    pub(crate) fn new(kind: SasErrorKind) -> Self {
        SasError { kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> &SasErrorKind {
        &self.kind
    }
}

impl fmt::Display for SasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SAS: &str = "invalid shared access signature";
        const POLICY: &str = "invalid stored access policy";
        match &self.kind {
            SasErrorKind::NoPermission => write!(
                f,
                "{SAS}: `sp` (permissions) is empty; give at least one permission, or name a stored access policy \
                 that holds them"
            ),
            SasErrorKind::NoAccountPermission => {
                write!(f, "{SAS}: `sp` (permissions) of an account SAS is empty; give at least one permission")
            }
            SasErrorKind::UnknownLetter { field, letter, index, allowed } => {
                let (what, shown) = (letters_name(field), table_model_rules::DisplayChar(*letter));
                write!(f, "{SAS}: `{field}` ({what}) has {shown} at index {index}, which is not one of `{allowed}`")
            }
            SasErrorKind::RepeatedLetter { field, letter, index } => {
                let (what, shown) = (letters_name(field), table_model_rules::DisplayChar(*letter));
                write!(f, "{SAS}: `{field}` ({what}) has {shown} again at index {index}; give each letter once")
            }
            SasErrorKind::InvalidAccountName { account } => {
                write!(f, "{SAS}: account name {account:?} must be ASCII letters, digits and `-`")
            }
            SasErrorKind::KeyBoundCharacter { ch, index } => {
                let shown = table_model_rules::DisplayChar(*ch);
                write!(
                    f,
                    "{SAS} key bound: character {shown} at index {index} is not allowed (a control character, which \
                     no key holds)"
                )
            }
            SasErrorKind::NoExpiry => {
                write!(f, "{SAS}: `se` (expiry) is missing; give one, or name a stored access policy that holds it")
            }
            SasErrorKind::ExpiryNotAfterStart { start, expiry } => {
                write!(f, "{SAS}: `se` (expiry) {expiry} must be after `st` (start) {start}")
            }
            SasErrorKind::TimeOutOfRange { field, year } => {
                write!(f, "invalid shared access time: `{field}` must be in the years 1 to 9999, found {year}")
            }
            SasErrorKind::RowKeyWithoutPartitionKey { row, partition } => write!(
                f,
                "{SAS}: `{row}` (a RowKey bound) needs `{partition}` (the PartitionKey bound of its pair); a RowKey \
                 bound applies within a PartitionKey"
            ),
            SasErrorKind::EmptyKeyRange { start, end } => write!(
                f,
                "{SAS}: the key range starts at {start} after it ends at {end}, so it reaches no entity; keys are \
                 ordered by PartitionKey, then RowKey, by UTF-16 code unit"
            ),
            SasErrorKind::InvalidIpRange { start, end } => {
                write!(f, "{SAS}: `sip` (IP range) must not start after its end, found {start}-{end}")
            }
            SasErrorKind::IpRangeSyntax { value } => {
                write!(f, "{SAS}: `sip` (IP range) must be an IPv4 address or two joined by `-`, found {value:?}")
            }
            SasErrorKind::NoResourceType => {
                write!(f, "{SAS}: `srt` (resource types) is empty; give at least one of service, container and object")
            }
            SasErrorKind::PolicyIdLength { chars } => write!(
                f,
                "{POLICY} identifier: must be 1 to {} characters, found {chars}",
                crate::limits::ACCESS_POLICY_ID_MAX_CHARS
            ),
            SasErrorKind::PolicyIdCharacter { ch, index } => {
                let shown = table_model_rules::DisplayChar(*ch);
                write!(
                    f,
                    "{POLICY} identifier: character {shown} at index {index} is not allowed (a control character)"
                )
            }
            SasErrorKind::TooManyPolicies { found } => write!(
                f,
                "{POLICY} list: a table has at most {} stored access policies, found {found}",
                crate::limits::ACCESS_POLICIES_MAX
            ),
            SasErrorKind::DuplicatePolicyId { id } => {
                write!(f, "{POLICY} list: identifier `{id}` is given more than once")
            }
        }
    }
}

/// What a set of SAS letters is, by its parameter.
fn letters_name(field: &str) -> &'static str {
    if field == "srt" {
        "resource types"
    } else {
        "permissions"
    }
}

impl std::error::Error for SasError {}
