//! What `tablectl validate` checks: whether a service would take an entity, without sending it.
//!
//! An entity is checked in the order the client checks it before sending (`docs/rules.md` §13.1): read with
//! Azure Table Storage's rules (§1 to §8: keys, names, types, values, 252 properties, the size formula), then
//! against the chosen [`RuleSet`]'s own rules (Cosmos DB's key sizes in UTF-8 bytes and reserved names), then its
//! JSON body against the 1 MiB every service takes (§4.2). Every rule here is the library's (a
//! [`DecodeError`](table_model::DecodeError), a [`RuleSetError`](table_model::RuleSetError) or an
//! [`EncodeError`](table_model::EncodeError)), so `validate`
//! refuses exactly what `import` and `copy` would refuse before sending.
//!
//! A record of any format ([`crate::format`]) is checked with [`check`]; a line of `jsonl` with [`check_line`].
//!
//! ```
//! use table_model::RuleSet;
//! use table_model_transfer::check::check_line;
//! let line = br#"{"PartitionKey":"p","RowKey":"r","ID":1,"etag":"x"}"#;
//! assert!(check_line(RuleSet::Storage, line).unwrap().findings.is_empty());
//! let cosmos = check_line(RuleSet::CosmosDb, line).unwrap();
//! let names: Vec<_> = cosmos.findings.iter().map(|f| f.property.as_deref()).collect();
//! assert_eq!(names, [Some("ID"), Some("etag")]);
//! ```
//!
//! Layer: files.

use crate::format::{jsonl, Rejected};
use table_model::{encode_entity, Entity, KeyErrorKind, KeyKind, PartitionKey, RowKey, RuleSet};

/// One rule an entity breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The property or key at fault (`PartitionKey`, `RowKey`, or a property's name), when one is.
    pub property: Option<String>,
    /// The rule broken, as the library words it.
    pub rule: String,
}

/// Appends to `findings` every rule of `rules` an entity already read (so valid by Storage's rules §1 to §8)
/// breaks: each key over the rule set's size, each reserved property name, and a JSON body over 1 MiB. Nothing is
/// appended for a valid entity.
///
/// ```
/// use table_model::{Entity, PartitionKey, RowKey, RuleSet};
/// use table_model_transfer::check::check_entity;
/// let entity = Entity::new(PartitionKey::new("p")?, RowKey::new("é".repeat(128))?);
/// let mut findings = Vec::new();
/// check_entity(RuleSet::Storage, &entity, &mut findings);
/// assert!(findings.is_empty());
/// check_entity(RuleSet::Portable, &entity, &mut findings);
/// assert_eq!(findings[0].property.as_deref(), Some("RowKey"));
/// assert_eq!(
///     findings[0].rule,
///     "invalid row key for both Azure Table Storage and Cosmos DB for Table: 256 bytes of UTF-8, at most 255 allowed"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check_entity(rules: RuleSet, entity: &Entity, findings: &mut Vec<Finding>) {
    let keys = [
        (KeyKind::Partition, "PartitionKey", entity.partition_key().as_str()),
        (KeyKind::Row, "RowKey", entity.row_key().as_str()),
    ];
    for (kind, name, value) in keys {
        if let Err(e) = rules.check_key(kind, value) {
            findings.push(Finding { property: Some(name.to_owned()), rule: e.to_string() });
        }
    }
    for (name, _) in entity {
        if let Err(e) = rules.check_property_name(name.as_str()) {
            findings.push(Finding { property: Some(name.as_str().to_owned()), rule: e.to_string() });
        }
    }
    // Encoding costs as much as reading: only an entity near the limit can have a body over it.
    if body_may_be_too_large(entity)
        && let Err(e) = encode_entity(entity)
    {
        findings.push(Finding { property: e.property().map(str::to_owned), rule: e.to_string() });
    }
}

/// Whether an entity's JSON body may be over 1 MiB, judged from its size by the formula (`docs/rules.md` §4.2)
/// and its property count; `false` only when it surely is not. The formula counts 2 bytes per UTF-16 code unit
/// of a key, a name or a String; the body writes such a unit in at most 6 bytes (`\uXXXX`), a name twice (the
/// property and its annotation): at most 6 times the formula. It counts Binary once and writes it as base64, a
/// third larger; it counts at least 1 byte for any other value, which the body writes in at most 40 (a quoted
/// Guid or DateTime), and at most 40 bytes of punctuation and annotation per property. So the body is at most 6
/// times the formula size plus 64 bytes per property plus 64.
fn body_may_be_too_large(entity: &Entity) -> bool {
    6 * entity.size() + 64 * (entity.len() + 1) > table_model::limits::ENTITY_MAX_BYTES
}

/// An entity, or a line that is not one, with what is wrong with it.
#[derive(Debug, Default)]
pub struct Checked {
    /// The keys: the entity's, or as written in a line that does not read (`None` when missing or not a string).
    pub partition_key: Option<String>,
    /// See [`Checked::partition_key`].
    pub row_key: Option<String>,
    /// Every rule broken; empty when the entity is valid.
    pub findings: Vec<Finding>,
}

/// Checks one record of an input ([`Record::entity`](crate::format::Record)): a line or row that is not an
/// entity gets one finding, why it is not (bad JSON, a broken Storage rule), with the keys as written when they
/// could be read; an entity is checked with [`check_entity`]. The keys are filled in only when there are
/// findings.
///
/// ```
/// use table_model::{Entity, PartitionKey, RowKey, RuleSet};
/// use table_model_transfer::check::check;
/// let entity = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?).with("rid".parse()?, 1)?;
/// let checked = check(RuleSet::CosmosDb, Ok(entity));
/// assert_eq!((checked.row_key.as_deref(), checked.findings[0].property.as_deref()), (Some("r"), Some("rid")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check(rules: RuleSet, record: Result<Entity, Rejected>) -> Checked {
    let mut checked = Checked::default();
    match record {
        Ok(entity) => {
            check_entity(rules, &entity, &mut checked.findings);
            if !checked.findings.is_empty() {
                checked.partition_key = Some(entity.partition_key().as_str().to_owned());
                checked.row_key = Some(entity.row_key().as_str().to_owned());
            }
        }
        Err(rejected) => {
            let rejected = judged_for(rules, rejected);
            checked.partition_key = rejected.partition_key;
            checked.row_key = rejected.row_key;
            checked.findings.push(Finding { property: rejected.property, rule: rejected.rule });
        }
    }
    checked
}

/// A record read with Storage's rules and refused, as the rules of its target judge it: a key over Storage's 512
/// UTF-16 code units is over Cosmos DB's own limit too (1,024 bytes of UTF-8 for a PartitionKey, 255 for a
/// RowKey), which the rule then cites; a key within Cosmos DB's limit keeps Storage's rule, said to be Storage's
/// and kept for every service (`docs/rules.md` §13.1: where Cosmos DB is looser, Storage's rule stays). Any
/// other rejection is as it was.
///
/// ```
/// use table_model::RuleSet;
/// use table_model_transfer::check::judged_for;
/// use table_model_transfer::format::jsonl;
/// let line = format!(r#"{{"PartitionKey":"{}","RowKey":"r"}}"#, "p".repeat(1025));
/// let rejected = jsonl::read_line(line.as_bytes()).unwrap().unwrap_err();
/// let rule = judged_for(RuleSet::CosmosDb, rejected.clone()).rule;
/// assert!(rule.ends_with("for Cosmos DB for Table: 1025 bytes of UTF-8, at most 1024 allowed"), "{rule}");
/// assert_eq!(judged_for(RuleSet::Storage, rejected.clone()), rejected);
/// let line = format!(r#"{{"PartitionKey":"{}","RowKey":"r"}}"#, "p".repeat(600));
/// let rule = judged_for(RuleSet::CosmosDb, jsonl::read_line(line.as_bytes()).unwrap().unwrap_err()).rule;
/// assert!(rule.ends_with("found 600; Azure Table Storage's limit, kept for every service (Cosmos DB for Table's own is 1024 bytes of UTF-8)"), "{rule}");
/// ```
pub fn judged_for(rules: RuleSet, mut rejected: Rejected) -> Rejected {
    let (kind, value) = match rejected.property.as_deref() {
        Some("PartitionKey") => (KeyKind::Partition, rejected.partition_key.as_deref()),
        Some("RowKey") => (KeyKind::Row, rejected.row_key.as_deref()),
        _ => return rejected,
    };
    let (Some(value), Some(max)) = (value, rules.key_max_utf8_bytes(kind)) else { return rejected };
    let too_long = match kind {
        KeyKind::Partition => PartitionKey::new(value).err().map(|e| e.kind()),
        KeyKind::Row => RowKey::new(value).err().map(|e| e.kind()),
    };
    if !matches!(too_long, Some(KeyErrorKind::TooLong { .. })) {
        return rejected;
    }
    rejected.rule = match rules.check_key(kind, value) {
        Err(e) => e.with_value(value).to_string(),
        Ok(()) => format!(
            "{}; Azure Table Storage's limit, kept for every service ({rules}'s own is {max} bytes of UTF-8)",
            rejected.rule
        ),
    };
    rejected
}

/// Checks one line of `jsonl` ([`jsonl::read_line`], then [`check`]); `None` for a blank line, which is no
/// entity.
///
/// ```
/// use table_model::RuleSet;
/// use table_model_transfer::check::check_line;
/// let checked = check_line(RuleSet::Storage, br#"{"PartitionKey":"a/b","RowKey":"1"}"#).unwrap();
/// assert_eq!(checked.partition_key.as_deref(), Some("a/b"));
/// assert_eq!(checked.findings[0].property.as_deref(), Some("PartitionKey"));
/// assert!(check_line(RuleSet::Storage, b"{\"PartitionKey\":\"a\"").unwrap().findings[0].rule.contains("EOF"));
/// assert!(check_line(RuleSet::Storage, b"\n").is_none());
/// ```
pub fn check_line(rules: RuleSet, line: &[u8]) -> Option<Checked> {
    jsonl::read_line(line).map(|record| check(rules, record))
}

#[cfg(test)]
mod tests {
    use super::*;
    use table_model::{EdmBinary, EdmValue, PartitionKey, RowKey};

    fn rules_of(line: &[u8], rules: RuleSet) -> Vec<(Option<String>, String)> {
        check_line(rules, line).unwrap().findings.into_iter().map(|f| (f.property, f.rule)).collect()
    }

    #[test]
    fn lines_that_are_not_entities_get_their_error() {
        let bad = rules_of(b"{\"PartitionKey\":\"p\",\"RowKey\":\"r\",}\n", RuleSet::Storage);
        assert_eq!(bad.len(), 1);
        assert!(bad[0].1.contains("trailing comma"), "{bad:?}");
        let truncated = check_line(RuleSet::Storage, b"{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"N\":1").unwrap();
        assert_eq!(truncated.partition_key, None, "keys are read only from a whole object");
        assert!(truncated.findings[0].rule.contains("EOF"), "{:?}", truncated.findings);
        let utf8 = rules_of(b"{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"S\":\"\xff\"}", RuleSet::Storage);
        assert_eq!(utf8[0].1, "invalid JSON at line 1 column 39: invalid unicode code point");
        assert!(rules_of(b"[1]", RuleSet::Storage)[0].1.contains("JSON"));
    }

    #[test]
    fn storage_rules_name_the_property() {
        let slash = check_line(RuleSet::Storage, br#"{"PartitionKey":"p","RowKey":"a/b"}"#).unwrap();
        assert_eq!((slash.partition_key.as_deref(), slash.row_key.as_deref()), (Some("p"), Some("a/b")));
        assert_eq!(slash.findings[0].property.as_deref(), Some("RowKey"));
        let range = rules_of(br#"{"PartitionKey":"p","RowKey":"r","N":2147483648}"#, RuleSet::Storage);
        assert_eq!(range[0].0.as_deref(), Some("N"));
        let date = br#"{"PartitionKey":"p","RowKey":"r","D@odata.type":"Edm.DateTime","D":"1600-12-31T23:59:59Z"}"#;
        assert_eq!(rules_of(date, RuleSet::Storage)[0].0.as_deref(), Some("D"));
        let reserved = rules_of(br#"{"PartitionKey":"p","RowKey":"r","rowkey":1}"#, RuleSet::Storage);
        assert_eq!(reserved[0].0.as_deref(), Some("rowkey"));
        let many: String = (0..253).map(|i| format!(",\"P{i}\":{i}")).collect();
        let line = format!("{{\"PartitionKey\":\"p\",\"RowKey\":\"r\"{many}}}");
        let too_many = rules_of(line.as_bytes(), RuleSet::Storage);
        assert_eq!(too_many.len(), 1);
        assert!(too_many[0].1.contains("252"), "{too_many:?}");
    }

    #[test]
    fn cosmos_rules_report_every_finding() {
        let row_key = "r".repeat(256);
        let line = format!(r#"{{"PartitionKey":"{}","RowKey":"{row_key}","Id":1,"ok":2,"ETAG":3}}"#, "€".repeat(342));
        assert!(rules_of(line.as_bytes(), RuleSet::Storage).is_empty());
        for rules in [RuleSet::CosmosDb, RuleSet::Portable] {
            let found = rules_of(line.as_bytes(), rules);
            let properties: Vec<_> = found.iter().map(|(p, _)| p.as_deref().unwrap()).collect();
            assert_eq!(properties, ["PartitionKey", "RowKey", "Id", "ETAG"]);
            assert_eq!(found[1].1, format!("invalid row key for {rules}: 256 bytes of UTF-8, at most 255 allowed"));
        }
        let checked = check_line(RuleSet::CosmosDb, line.as_bytes()).unwrap();
        assert_eq!(checked.row_key.as_deref(), Some(row_key.as_str()));
    }

    /// An entity within the size formula whose body is over 1 MiB: base64 makes Binary a third larger.
    #[test]
    fn a_body_over_one_mebibyte_is_found() {
        let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
        for i in 0..15 {
            let value = EdmValue::Binary(EdmBinary::new(vec![7; 64 * 1024]).unwrap());
            entity.insert(format!("B{i}").parse().unwrap(), value).unwrap();
        }
        assert!(entity.size() <= table_model::limits::ENTITY_MAX_BYTES);
        let mut findings = Vec::new();
        check_entity(RuleSet::Storage, &entity, &mut findings);
        assert_eq!(findings.len(), 1);
        assert!(findings[0].rule.contains("JSON body must be at most 1048576 bytes"), "{findings:?}");
    }

    /// The bound that spares the encoding holds for the entities that come closest to it: escaped control
    /// characters, short values with long annotations, names written twice.
    #[test]
    fn the_body_bound_holds() {
        let mut entities = Vec::new();
        let keyed =
            || Entity::new(PartitionKey::new("é".repeat(512)).unwrap(), RowKey::new("\u{10000}".repeat(256)).unwrap());
        let mut controls = keyed();
        controls.insert("S".parse().unwrap(), "\u{1}".repeat(32 * 1024)).unwrap();
        entities.push(controls);
        for value in [
            EdmValue::Boolean(false),
            EdmValue::Int32(i32::MIN),
            EdmValue::Int64(i64::MIN),
            EdmValue::Double(-f64::MIN_POSITIVE),
            EdmValue::Double(f64::NEG_INFINITY),
            EdmValue::DateTime("1601-01-01T00:00:00.0000001Z".parse().unwrap()),
            EdmValue::Guid("5b5e3a84-3c4c-4f6e-9b8a-0c1d2e3f4a5b".parse().unwrap()),
            EdmValue::Binary(EdmBinary::new(vec![1]).unwrap()),
            EdmValue::String(table_model::EdmString::new("\"").unwrap()),
        ] {
            let mut entity = keyed();
            for i in 0..252 {
                let name = format!("{}{i}", "ǅ".repeat(250));
                entity.insert(name.parse().unwrap(), value.clone()).unwrap();
            }
            entities.push(entity);
        }
        for entity in entities {
            let body = match encode_entity(&entity) {
                Ok(body) => body.as_bytes().len(),
                Err(e) => match e.kind() {
                    table_model::EncodeErrorKind::BodyTooLarge { size } => *size,
                    _ => panic!("{e}"),
                },
            };
            let bound = 6 * entity.size() + 64 * (entity.len() + 1);
            assert!(body <= bound, "{body} > {bound}");
        }
    }
}
