//! Entity addresses and query values (`docs/rules.md` §9.4 and §7.4).

use crate::name::TableName;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use std::borrow::Cow;

/// Every byte but RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`) is percent-encoded: quotes, `%`,
/// `+`, `&`, `/`, `#`, `?`, spaces and all non-ASCII. Nothing in a value can then end the value, the key
/// literal or the path.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Percent-encodes a path segment or query value, [`COMPONENT`] bytes as `%XX` with uppercase hex.
pub(crate) fn encode_component(value: &str) -> Cow<'_, str> {
    utf8_percent_encode(value, COMPONENT).into()
}

/// A key as it goes into an entity address: every `'` doubled (the key is an OData string literal), then
/// percent-encoded. The service percent-decodes before it parses the literal, so encoding alone is not
/// enough: `%27` is a quote to it.
pub(crate) fn encode_key(key: &str) -> String {
    encode_component(&key.replace('\'', "''")).into_owned()
}

/// `/<table>(PartitionKey='<pk>',RowKey='<rk>')`, keys escaped by [`encode_key`].
pub(crate) fn entity_path(table: &TableName, partition_key: &str, row_key: &str) -> String {
    format!("/{}(PartitionKey='{}',RowKey='{}')", table.as_str(), encode_key(partition_key), encode_key(row_key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use percent_encoding::percent_decode_str;
    use proptest::prelude::*;

    #[test]
    fn spec_examples() {
        let t = TableName::new("People").unwrap();
        assert_eq!(entity_path(&t, "p", "r"), "/People(PartitionKey='p',RowKey='r')");
        assert_eq!(entity_path(&t, "", ""), "/People(PartitionKey='',RowKey='')");
        assert_eq!(encode_key("O'Brien"), "O%27%27Brien");
        assert_eq!(encode_key("50%"), "50%25");
        assert_eq!(encode_key("a+b c&d=e"), "a%2Bb%20c%26d%3De");
        assert_eq!(encode_key("é😀"), "%C3%A9%F0%9F%98%80");
        assert_eq!(encode_key("-._~"), "-._~");
        assert_eq!(encode_key("()',$"), "%28%29%27%27%2C%24");
    }

    /// Undoes what the service does: percent-decode, then read the quoted literal with `''` for `'`.
    fn service_reads(segment: &str) -> Option<String> {
        let decoded = percent_decode_str(segment).decode_utf8().ok()?;
        let mut out = String::new();
        let mut chars = decoded.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                // Inside the literal a quote is only ever half of a pair.
                if chars.next() != Some('\'') {
                    return None;
                }
            }
            out.push(c);
        }
        Some(out)
    }

    proptest! {
        /// Whatever the key, its encoded form is made of unreserved characters and `%XX` only, so it cannot end
        /// the literal or the path, and the service reads back exactly the key.
        #[test]
        fn keys_survive_escaping(key in ".*") {
            let encoded = encode_key(&key);
            prop_assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b)), "{}", encoded);
            prop_assert_eq!(service_reads(&encoded), Some(key));
        }

        #[test]
        fn components_decode_to_the_value(value in ".*") {
            let encoded = encode_component(&value);
            prop_assert_eq!(percent_decode_str(&encoded).decode_utf8().unwrap().into_owned(), value.clone());
        }
    }
}
