//! Table and property names checked against independent models of `docs/rules.md` §1, on arbitrary input.

use proptest::prelude::*;
use regex::Regex;
use std::sync::LazyLock;
use table_model::{PropertyName, PropertyNameErrorKind, TableName, TableNameErrorKind};

/// `docs/rules.md` §1.1, written as the regex it states.
static TABLE_NAME_MODEL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Za-z][A-Za-z0-9]{2,62}$").unwrap());

/// C# identifier classes intersected with XML 1.0 fifth-edition name classes, as one regex: an independent
/// model of the property-name rule (the crate checks per character with an ASCII fast path).
static PROPERTY_NAME_MODEL: LazyLock<Regex> = LazyLock::new(|| {
    let xml_start = r"A-Z_a-z\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{2FF}\x{370}-\x{37D}\x{37F}-\x{1FFF}\x{200C}-\x{200D}\x{2070}-\x{218F}\x{2C00}-\x{2FEF}\x{3001}-\x{D7FF}\x{F900}-\x{FDCF}\x{FDF0}-\x{FFFD}\x{10000}-\x{EFFFF}";
    let xml_extra = r"\-.0-9\x{B7}\x{300}-\x{36F}\x{203F}-\x{2040}";
    let cs_start = r"\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}\p{Nl}_";
    let cs_part = r"\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}\p{Nl}\p{Nd}\p{Pc}\p{Mn}\p{Mc}\p{Cf}_";
    Regex::new(&format!(r"^[[{cs_start}]&&[{xml_start}]][[{cs_part}]&&[{xml_start}{xml_extra}]]*$")).unwrap()
});

fn table_name_model(s: &str) -> bool {
    TABLE_NAME_MODEL.is_match(s) && !s.eq_ignore_ascii_case("tables")
}

fn property_name_model(s: &str) -> bool {
    PROPERTY_NAME_MODEL.is_match(s)
        && s.encode_utf16().count() <= 255
        && !["PartitionKey", "RowKey", "Timestamp"].iter().any(|r| r.eq_ignore_ascii_case(s))
}

fn name_chars() -> impl Strategy<Value = String> {
    // Mostly identifier-like characters, with the interesting edge cases mixed in.
    let pieces = prop_oneof![
        8 => "[A-Za-z0-9_]{1,8}",
        2 => "[\\-. @$#/]",
        2 => "\\PC",
        1 => Just("\u{200B}".to_owned()),
        1 => Just("\u{200C}".to_owned()),
        1 => Just("\u{0301}".to_owned()),
        1 => Just("😀".to_owned()),
        1 => Just("Größe".to_owned()),
    ];
    prop::collection::vec(pieces, 0..6).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn table_name_matches_model(s in "[A-Za-z0-9_ -]{0,70}|\\PC{0,10}") {
        prop_assert_eq!(TableName::new(s.as_str()).is_ok(), table_name_model(&s), "{:?}", s);
    }

    #[test]
    fn property_name_matches_model(s in name_chars()) {
        prop_assert_eq!(PropertyName::new(s.as_str()).is_ok(), property_name_model(&s), "{:?}", s);
    }

    #[test]
    fn property_name_never_panics_on_any_string(s in "\\PC{0,300}|.{0,40}") {
        let model = property_name_model(&s);
        match PropertyName::new(s.as_str()) {
            Ok(name) => { prop_assert!(model); prop_assert_eq!(name.as_str(), s.as_str()); }
            Err(e) => {
                prop_assert!(!model);
                let msg = e.to_string();
                // The name, escaped as `{:?}` escapes it, cut to 64 characters.
                let shown: String = s.chars().take(64).collect();
                let cut = if s.chars().count() > 64 { "..." } else { "" };
                prop_assert!(msg.starts_with(&format!("invalid property name {shown:?}{cut}: ")), "{}", msg);
                prop_assert!(!msg.ends_with('.'));
                prop_assert_eq!(e.value(), s.as_str());
            }
        }
    }

    #[test]
    fn long_property_names_are_counted_in_utf16(n in 200usize..300, wide in any::<bool>()) {
        let unit = if wide { "\u{10400}" } else { "a" };
        let s = unit.repeat(if wide { n / 2 } else { n });
        let len = s.encode_utf16().count();
        let result = PropertyName::new(s.as_str());
        if len <= 255 {
            prop_assert!(result.is_ok());
        } else {
            prop_assert_eq!(result.unwrap_err().kind(), PropertyNameErrorKind::TooLong { utf16_len: len });
        }
    }
}

#[test]
fn error_positions_point_at_the_offending_character() {
    let err = PropertyName::new("Unit.Price").unwrap_err();
    assert_eq!(err.kind(), PropertyNameErrorKind::InvalidChar { ch: '.', index: 4 });
    let err = PropertyName::new("Größe-1").unwrap_err();
    assert_eq!(err.kind(), PropertyNameErrorKind::InvalidChar { ch: '-', index: 7 });
    let err = TableName::new("Orders2024!").unwrap_err();
    assert_eq!(err.kind(), TableNameErrorKind::Char { ch: '!', index: 10 });
    assert_eq!(
        err.to_string(),
        "invalid table name \"Orders2024!\": character `!` at index 10 is not allowed; use ASCII letters and digits only"
    );
    // What `main` returning the error prints: the message, not the fields.
    assert_eq!(
        format!("Error: {err:?}"),
        "Error: invalid table name \"Orders2024!\": character `!` at index 10 is not allowed; use ASCII letters and \
         digits only"
    );
    assert_eq!(
        format!("{err:#?}"),
        "TableNameError {\n    kind: Char {\n        ch: '!',\n        index: 10,\n    },\n    value: \"Orders2024!\",\n}"
    );
}

#[test]
fn analytics_tables_can_be_named_for_reading() {
    let metrics = TableName::analytics("$MetricsMinutePrimaryTransactionsTable").unwrap();
    assert!(metrics.is_analytics());
    assert!(TableName::new("$MetricsMinutePrimaryTransactionsTable").is_err());
}
