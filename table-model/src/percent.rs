//! Percent-encoding of path segments and query values (`docs/rules.md` §9.4 and §7.4), for the entity
//! addresses and queries of requests and the parameters of shared access signatures.
//!
//! Layer: wire.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use std::borrow::Cow;

/// Every byte but RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`) is percent-encoded: quotes, `%`,
/// `+`, `&`, `/`, `#`, `?`, spaces and all non-ASCII. Nothing in a value can then end the value, the key
/// literal or the path.
pub(crate) const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Percent-encodes a path segment or query value, [`COMPONENT`] bytes as `%XX` with uppercase hex.
pub(crate) fn encode_component(value: &str) -> Cow<'_, str> {
    utf8_percent_encode(value, COMPONENT).into()
}
