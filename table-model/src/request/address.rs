//! Entity addresses (`docs/rules.md` §9.4): the keys as OData string literals, percent-encoded with the
//! `percent` module.

use crate::name::TableName;
use crate::percent::COMPONENT;
use percent_encoding::utf8_percent_encode;

/// A key as it goes into an entity address, in pieces: every `'` doubled (the key is an OData string literal),
/// then percent-encoded, which is each `%27` given twice. The service percent-decodes before it parses the
/// literal, so encoding alone is not enough: `%27` is a quote to it.
fn key_pieces(key: &str) -> impl Iterator<Item = &str> {
    utf8_percent_encode(key, COMPONENT).flat_map(|piece| std::iter::repeat_n(piece, if piece == "%27" { 2 } else { 1 }))
}

/// `/<table>(PartitionKey='<pk>',RowKey='<rk>')`, keys escaped by [`key_pieces`].
pub(crate) fn entity_path(table: &TableName, partition_key: &str, row_key: &str) -> String {
    entity_path_pieces(table, partition_key, row_key).collect()
}

/// [`entity_path`] in pieces, for writing it into a buffer or counting its bytes without building it.
pub(crate) fn entity_path_pieces<'a>(
    table: &'a TableName,
    partition_key: &'a str,
    row_key: &'a str,
) -> impl Iterator<Item = &'a str> {
    ["/", table.as_str(), "(PartitionKey='"]
        .into_iter()
        .chain(key_pieces(partition_key))
        .chain(["',RowKey='"])
        .chain(key_pieces(row_key))
        .chain(["')"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::percent::encode_component;
    use percent_encoding::percent_decode_str;
    use proptest::prelude::*;

    fn encode_key(key: &str) -> String {
        key_pieces(key).collect()
    }

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
