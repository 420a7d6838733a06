//! PartitionKey and RowKey checked against an independent model of `docs/rules.md` §2, on arbitrary input.

use proptest::prelude::*;
use regex::Regex;
use std::sync::LazyLock;
use table_model::{KeyErrorKind, KeyKind, PartitionKey, RowKey};

static FORBIDDEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[/\\#?\x00-\x1F\x7F-\x9F]").unwrap());

fn key_model(s: &str) -> Result<(), KeyErrorKind> {
    if let Some(m) = FORBIDDEN.find(s) {
        return Err(KeyErrorKind::ForbiddenChar { ch: m.as_str().chars().next().unwrap(), index: m.start() });
    }
    let len = s.encode_utf16().count();
    if len > 512 {
        return Err(KeyErrorKind::TooLong { utf16_len: len });
    }
    Ok(())
}

fn key_strings() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,40}",
        ".{0,40}",
        "[ -~]{0,40}",
        "[\\x00-\\x{A0}]{0,10}",
        (500usize..520, "[a-zé😀]").prop_map(|(n, c)| c.repeat(n / c.encode_utf16().count())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn keys_match_model(s in key_strings()) {
        let expected = key_model(&s);
        let row = RowKey::new(s.as_str()).map(|_| ()).map_err(|e| e.kind());
        let partition = PartitionKey::new(s.as_str()).map(|_| ()).map_err(|e| e.kind());
        prop_assert_eq!(row, expected);
        prop_assert_eq!(partition, expected);
    }

    #[test]
    fn accepted_keys_keep_their_exact_text(s in "[^/\\\\#?\\x00-\\x1F\\x7F-\\x9F]{0,100}") {
        let key = RowKey::new(s.as_str()).unwrap();
        prop_assert_eq!(key.as_str(), s.as_str());
        prop_assert_eq!(key.into_string(), s);
    }
}

#[test]
fn errors_name_the_key_and_position() {
    let err = PartitionKey::new("tenant\u{7F}").unwrap_err();
    assert_eq!(err.key(), KeyKind::Partition);
    // The key is quoted as `{:?}` quotes it, so the control character shows.
    assert_eq!(err.to_string(), "invalid partition key \"tenant\\u{7f}\": character U+007F at index 6 is not allowed");
    assert_eq!(err.value(), "tenant\u{7F}");
    let err = RowKey::new("a?").unwrap_err();
    assert_eq!(err.to_string(), "invalid row key \"a?\": character `?` at index 1 is not allowed");
    let err = "tab\there".parse::<RowKey>().unwrap_err();
    assert_eq!(err.to_string(), "invalid row key \"tab\\there\": character U+0009 at index 3 is not allowed");
}
