//! Where the next page of a query starts (`docs/rules.md` §10): the service's continuation headers, and the
//! one opaque token a caller can keep, hand to a browser, and resume from later.
//!
//! A query of entities continues from two headers (`x-ms-continuation-NextPartitionKey`, and
//! `x-ms-continuation-NextRowKey` which may be absent); a table listing from one (`NextTableName`). Both pack
//! into one URL-safe token through `Display` and parse back through `FromStr` (and serde): version, kind,
//! the values, and a checksum, in unpadded base64url. A token that was cut, edited or made for the other kind
//! of listing is a [`ContinuationError`], never a wrong page.
//!
//! Layer: wire.

use base64::Engine as _;
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// Where the next page of a query of entities starts: the `x-ms-continuation-NextPartitionKey` and
/// `x-ms-continuation-NextRowKey` headers of the previous page, opaque values sent back as they are.
///
/// Its `Display` form is one token that [`FromStr`] reads back, for a caller to keep between requests:
///
/// ```
/// use table_model::response::Continuation;
/// let next = Continuation::new("1!8!dGVuYW50LTE-", Some("1!12!MDAwMDAwMDAwMQ--".to_owned()));
/// let token = next.to_string();
/// assert!(token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
/// assert_eq!(token.parse::<Continuation>()?, next);
///
/// // A token that was edited is refused:
/// let mut edited = token.into_bytes();
/// edited[10] = if edited[10] == b'A' { b'B' } else { b'A' };
/// let err = String::from_utf8(edited)?.parse::<Continuation>().unwrap_err();
/// assert!(err.to_string().starts_with("invalid continuation token: "));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Continuation {
    pub(crate) next_partition_key: String,
    pub(crate) next_row_key: Option<String>,
}

impl Continuation {
    /// A continuation from the two header values.
    pub fn new(next_partition_key: impl Into<String>, next_row_key: Option<String>) -> Self {
        Continuation { next_partition_key: next_partition_key.into(), next_row_key }
    }

    /// The `NextPartitionKey` value.
    pub fn next_partition_key(&self) -> &str {
        &self.next_partition_key
    }

    /// The `NextRowKey` value, when there is one.
    pub fn next_row_key(&self) -> Option<&str> {
        self.next_row_key.as_deref()
    }
}

/// Where the next page of a table listing starts: the `x-ms-continuation-NextTableName` header. Its
/// `Display` form is a token that [`FromStr`] reads back, as for [`Continuation`].
///
/// ```
/// use table_model::response::TableContinuation;
/// let next = TableContinuation::new("1!8!VGFibGU-");
/// assert_eq!(next.to_string().parse::<TableContinuation>()?, next);
/// # Ok::<(), table_model::response::ContinuationError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableContinuation {
    next_table_name: String,
}

impl TableContinuation {
    /// A continuation from the header value.
    pub fn new(next_table_name: impl Into<String>) -> Self {
        TableContinuation { next_table_name: next_table_name.into() }
    }

    /// The `NextTableName` value.
    pub fn next_table_name(&self) -> &str {
        &self.next_table_name
    }
}

/// Why a continuation token was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContinuationErrorKind {
    /// Not unpadded base64url text.
    NotBase64,
    /// A format version this crate does not write.
    UnknownVersion(u8),
    /// A token of the other listing: a table listing's token given to a query of entities, or the reverse.
    WrongKind,
    /// Shorter than its lengths say, or longer.
    BadLength,
    /// The checksum does not match: the token was cut or edited.
    Checksum,
    /// A value that is not UTF-8.
    NotUtf8,
}

/// The error for a continuation token that is not one this crate wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContinuationError {
    kind: ContinuationErrorKind,
}

impl ContinuationError {
    fn new(kind: ContinuationErrorKind) -> Self {
        ContinuationError { kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> &ContinuationErrorKind {
        &self.kind
    }
}

impl fmt::Display for ContinuationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid continuation token: ")?;
        match self.kind {
            ContinuationErrorKind::NotBase64 => f.write_str("not base64url text"),
            ContinuationErrorKind::UnknownVersion(v) => {
                write!(f, "format version {v} is not known (expected {VERSION})")
            }
            ContinuationErrorKind::WrongKind => {
                f.write_str("it continues the other kind of listing (tables instead of entities, or the reverse)")
            }
            ContinuationErrorKind::BadLength => f.write_str("its length does not match its contents"),
            ContinuationErrorKind::Checksum => f.write_str("the checksum does not match; it was cut or edited"),
            ContinuationErrorKind::NotUtf8 => f.write_str("a value is not UTF-8"),
        }
    }
}

impl std::error::Error for ContinuationError {}

/// The token layout's version, its first byte.
const VERSION: u8 = 1;
const KIND_ENTITIES: u8 = b'E';
const KIND_TABLES: u8 = b'T';
/// Bytes of SHA-256 kept as the checksum.
const CHECKSUM: usize = 8;

/// `version, kind, (u32 length, bytes) per value, then a u8 marker and the optional value, checksum`.
fn pack(kind: u8, first: &str, second: Option<&str>) -> String {
    let mut bytes = Vec::with_capacity(16 + first.len() + second.map_or(0, str::len));
    bytes.extend([VERSION, kind]);
    let mut put = |value: &str| {
        bytes.extend((value.len() as u32).to_be_bytes());
        bytes.extend(value.as_bytes());
    };
    put(first);
    if let Some(second) = second {
        put(second);
    }
    let sum = Sha256::digest(&bytes);
    bytes.extend(&sum[..CHECKSUM]);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The values of a token of this kind: one or two.
fn unpack(token: &str, kind: u8) -> Result<(String, Option<String>), ContinuationError> {
    let err = |k| Err(ContinuationError::new(k));
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token.trim()) else {
        return err(ContinuationErrorKind::NotBase64);
    };
    if bytes.len() < 2 + CHECKSUM {
        return err(ContinuationErrorKind::BadLength);
    }
    let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM);
    if Sha256::digest(body)[..CHECKSUM] != *sum {
        return err(ContinuationErrorKind::Checksum);
    }
    if body[0] != VERSION {
        return err(ContinuationErrorKind::UnknownVersion(body[0]));
    }
    if body[1] != kind {
        return err(ContinuationErrorKind::WrongKind);
    }
    let mut rest = &body[2..];
    let mut take = || -> Result<Option<String>, ContinuationError> {
        if rest.is_empty() {
            return Ok(None);
        }
        let (len, tail) = rest.split_at_checked(4).ok_or(ContinuationError::new(ContinuationErrorKind::BadLength))?;
        let len = u32::from_be_bytes(len.try_into().expect("four bytes")) as usize;
        let (value, tail) =
            tail.split_at_checked(len).ok_or(ContinuationError::new(ContinuationErrorKind::BadLength))?;
        rest = tail;
        let value = std::str::from_utf8(value).map_err(|_| ContinuationError::new(ContinuationErrorKind::NotUtf8))?;
        Ok(Some(value.to_owned()))
    };
    let first = take()?.ok_or(ContinuationError::new(ContinuationErrorKind::BadLength))?;
    let second = take()?;
    if !rest.is_empty() || (kind == KIND_TABLES && second.is_some()) {
        return err(ContinuationErrorKind::BadLength);
    }
    Ok((first, second))
}

impl fmt::Display for Continuation {
    /// The token: see the type's documentation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&pack(KIND_ENTITIES, &self.next_partition_key, self.next_row_key.as_deref()))
    }
}

impl FromStr for Continuation {
    type Err = ContinuationError;
    fn from_str(token: &str) -> Result<Self, ContinuationError> {
        let (next_partition_key, next_row_key) = unpack(token, KIND_ENTITIES)?;
        Ok(Continuation { next_partition_key, next_row_key })
    }
}

impl fmt::Display for TableContinuation {
    /// The token: see the type's documentation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&pack(KIND_TABLES, &self.next_table_name, None))
    }
}

impl FromStr for TableContinuation {
    type Err = ContinuationError;
    fn from_str(token: &str) -> Result<Self, ContinuationError> {
        Ok(TableContinuation { next_table_name: unpack(token, KIND_TABLES)?.0 })
    }
}

macro_rules! serde_as_token {
    ($ty:ty) => {
        #[cfg(feature = "serde")]
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let token = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                token.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
serde_as_token!(Continuation);
serde_as_token!(TableContinuation);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tokens_round_trip_and_keep_an_absent_row_key_absent() {
        for c in [
            Continuation::new("1!8!cA--", Some("1!4!Mw--".to_owned())),
            Continuation::new("1!8!cA--", None),
            Continuation::new("", Some(String::new())),
            Continuation::new("é😀 &=?#", None),
        ] {
            assert_eq!(c.to_string().parse::<Continuation>().unwrap(), c);
        }
        assert_eq!("1!8!cA--".parse::<Continuation>().unwrap_err().kind(), &ContinuationErrorKind::NotBase64);
    }

    #[test]
    fn every_kind_of_damage_is_refused() {
        let token = Continuation::new("pk", Some("rk".to_owned())).to_string();
        let kind = |t: &str| t.parse::<Continuation>().unwrap_err().kind().clone();
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let cut = engine.encode(&engine.decode(&token).unwrap()[..12]);
        assert_eq!(kind(&cut), ContinuationErrorKind::Checksum);
        assert_eq!(kind(""), ContinuationErrorKind::BadLength);
        assert_eq!(kind(&TableContinuation::new("t").to_string()), ContinuationErrorKind::WrongKind);
        assert_eq!(TableContinuation::from_str(&token).unwrap_err().kind(), &ContinuationErrorKind::WrongKind);
        let forged = |bytes: &[u8]| {
            let mut b = bytes.to_vec();
            let sum = Sha256::digest(&b);
            b.extend(&sum[..CHECKSUM]);
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
        };
        assert_eq!(kind(&forged(&[2, KIND_ENTITIES, 0, 0, 0, 0])), ContinuationErrorKind::UnknownVersion(2));
        assert_eq!(kind(&forged(&[VERSION, KIND_ENTITIES, 0, 0, 0, 9, b'a'])), ContinuationErrorKind::BadLength);
        assert_eq!(kind(&forged(&[VERSION, KIND_ENTITIES, 0, 0, 0, 1, 0xff])), ContinuationErrorKind::NotUtf8);
        assert_eq!(kind(&forged(&[VERSION, KIND_ENTITIES, 0, 0])), ContinuationErrorKind::BadLength);
        assert_eq!(kind(&forged(&[VERSION, KIND_ENTITIES])), ContinuationErrorKind::BadLength);
        assert_eq!(
            kind(&forged(&[VERSION, KIND_ENTITIES, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
            ContinuationErrorKind::BadLength
        );
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_uses_the_token() {
        let c = Continuation::new("a", Some("b".to_owned()));
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, format!("\"{c}\""));
        assert_eq!(serde_json::from_str::<Continuation>(&json).unwrap(), c);
        assert!(serde_json::from_str::<Continuation>("\"nope\"").is_err());
    }

    proptest! {
        #[test]
        fn any_continuation_round_trips(pk in any::<String>(), rk in proptest::option::of(any::<String>())) {
            let c = Continuation::new(pk, rk);
            prop_assert_eq!(c.to_string().parse::<Continuation>().unwrap(), c);
        }

        /// Any text, and any single-byte edit of a valid token, gives an error or (for text that happens to
        /// be a valid token) a value; never a panic. An edit is caught by the checksum.
        #[test]
        fn damaged_tokens_are_errors(text in "\\PC{0,64}", at in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let _ = text.parse::<Continuation>();
            let token = Continuation::new("pk", Some(text)).to_string();
            let mut bytes = token.clone().into_bytes();
            let i = at.index(bytes.len());
            let replacement = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[byte as usize % 64];
            prop_assume!(bytes[i] != replacement);
            bytes[i] = replacement;
            let edited = String::from_utf8(bytes).unwrap();
            prop_assert!(edited.parse::<Continuation>().is_err(), "{} accepted", edited);
        }
    }
}
