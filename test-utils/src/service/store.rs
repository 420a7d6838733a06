//! What the in-memory service keeps: its tables, each an ordered map of entities in the service's key order
//! (PartitionKey then RowKey, each by UTF-16 code unit: `docs/rules.md` §2.3), each entity its properties' JSON
//! members as received (the text the service answers with) and the `Timestamp` the service set on its last write.
//!
//! Layer: base.

use super::filter::{self, utf16_cmp, Value};
use super::time;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use table_model::DateTime;

/// An entity's keys, ordered as the service orders them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) partition: String,
    pub(crate) row: String,
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> Ordering {
        // Most keys compared share their partition: equal bytes are found at memcmp's speed.
        let partition = if self.partition == other.partition {
            Ordering::Equal
        } else {
            utf16_cmp(&self.partition, &other.partition)
        };
        partition.then_with(|| utf16_cmp(&self.row, &other.row))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One property's members within [`Stored::text`]: `"X@odata.type":"Edm.Int64","X":"5"` (from `start`) or
/// `"X":5` (`start == member`); `value` is where the value starts, `end` where the members end.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    member: u32,
    value: u32,
    end: u32,
}

/// An entity as kept: its properties as JSON text and when it was last written.
#[derive(Clone, Debug)]
pub(crate) struct Stored {
    /// The `Timestamp`; the ETag is made of it.
    pub(crate) timestamp: DateTime,
    /// The members `"odata.etag":"…"` and `"Timestamp":"…"` as a page writes them, made once at the write
    /// rather than at each read.
    etag_member: Box<str>,
    timestamp_member: Box<str>,
    /// The properties' members, comma-separated, in the order received, each annotation before its value.
    text: String,
    spans: Vec<Span>,
}

/// A member's name or a string value, borrowed from the body where it holds no escape.
struct Text<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text<'de>, D::Error> {
        struct Borrowing;
        impl<'de> Visitor<'de> for Borrowing {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(Borrowing)
    }
}

/// The string a JSON string's text (with its quotes) holds.
fn json_string(json: &str) -> Option<Cow<'_, str>> {
    let mut reader = serde_json::Deserializer::from_str(json);
    Text::deserialize(&mut reader).ok().map(|Text(text)| text)
}

/// The members of a JSON object, in order, each value as its JSON text.
struct Members<'de>(Vec<(Text<'de>, &'de RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members<'de>, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(16));
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Ordered)
    }
}

/// A property as written: its name, `@odata.type` annotation and value (its JSON text, as received), borrowed
/// from the request's body or from a [`Stored`] entity.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Property<'a> {
    pub(crate) name: Cow<'a, str>,
    pub(crate) annotation: Option<Cow<'a, str>>,
    pub(crate) value: &'a str,
}

/// Whether `name` is a member the service sets, not a property: `odata.*` and `Timestamp`.
fn is_system(name: &str) -> bool {
    name.starts_with("odata.") || name == "Timestamp" || name == "Timestamp@odata.type"
}

/// An entity's JSON body read: its properties, each with its annotation, and the keys it names.
pub(crate) struct Body<'a> {
    pub(crate) properties: Vec<Property<'a>>,
    pub(crate) partition: Option<String>,
    pub(crate) row: Option<String>,
}

/// Reads an entity's JSON body (`{"PartitionKey":..,"Name":"Ada","Age@odata.type":..}`), borrowing from it.
///
/// # Errors
/// A body that is not a JSON object, or an annotation or a key that is not a string.
pub(crate) fn read_body(body: &[u8]) -> Result<Body<'_>, String> {
    let Members(members) = serde_json::from_slice(body).map_err(|e| format!("the body is not a JSON object: {e}"))?;
    let mut read = Body { properties: Vec::with_capacity(members.len()), partition: None, row: None };
    let mut annotations = Vec::new();
    for (Text(name), value) in members {
        if is_system(&name) {
            continue;
        }
        let string = || json_string(value.get());
        if let Some(property) = name.strip_suffix("@odata.type") {
            let annotation = string().ok_or_else(|| format!("the annotation `{name}` is not a string"))?;
            annotations.push((property.to_owned(), annotation));
            continue;
        }
        let key = match name.as_ref() {
            "PartitionKey" => &mut read.partition,
            "RowKey" => &mut read.row,
            _ => {
                read.properties.push(Property { name, annotation: None, value: value.get() });
                continue;
            }
        };
        *key = Some(string().ok_or_else(|| format!("`{name}` is not a string"))?.into_owned());
    }
    for (name, annotation) in annotations {
        if let Some(p) = read.properties.iter_mut().find(|p| p.name == name) {
            p.annotation = Some(annotation);
        }
    }
    Ok(read)
}

/// Appends `text` as a JSON string.
fn push_json_string(out: &mut String, text: &str) {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(text).expect("a string is JSON"));
    }
}

impl Stored {
    /// An entity of `properties` written at `timestamp`.
    pub(crate) fn new(properties: &[Property<'_>], timestamp: DateTime) -> Stored {
        let size: usize = properties.iter().map(|p| p.name.len() * 2 + p.value.len() + 32).sum();
        let mut text = String::with_capacity(size);
        let mut spans = Vec::with_capacity(properties.len());
        for p in properties {
            if !text.is_empty() {
                text.push(',');
            }
            let start = text.len() as u32;
            if let Some(annotation) = &p.annotation {
                push_json_string(&mut text, &format!("{}@odata.type", p.name));
                text.push(':');
                push_json_string(&mut text, annotation);
                text.push(',');
            }
            let member = text.len() as u32;
            push_json_string(&mut text, &p.name);
            text.push(':');
            let value = text.len() as u32;
            text.push_str(p.value);
            spans.push(Span { start, member, value, end: text.len() as u32 });
        }
        let etag_member = format!("\"odata.etag\":{}", serde_json::to_string(&time::etag(timestamp)).expect("JSON"));
        let timestamp_member = format!("\"Timestamp\":\"{timestamp}\"");
        Stored { timestamp, etag_member: etag_member.into(), timestamp_member: timestamp_member.into(), text, spans }
    }

    /// The entity's properties, read back from its text.
    pub(crate) fn properties(&self) -> Vec<Property<'_>> {
        self.spans
            .iter()
            .map(|s| Property {
                name: self.name_json(s).and_then(json_string).unwrap_or_default(),
                annotation: (s.start != s.member).then(|| self.annotation(s)).flatten(),
                value: &self.text[s.value as usize..s.end as usize],
            })
            .collect()
    }

    /// The property's name as JSON text (with its quotes).
    fn name_json(&self, span: &Span) -> Option<&str> {
        Some(&self.text[span.member as usize..span.value as usize - 1])
    }

    fn annotation(&self, span: &Span) -> Option<Cow<'_, str>> {
        let members = &self.text[span.start as usize..span.member as usize - 1];
        let (_, value) = members.split_once(':')?;
        json_string(value)
    }

    /// The value of `property` as a filter compares it: a string (unannotated, or `Edm.String`), a time
    /// (`Edm.DateTime`), or another type.
    fn property(&self, property: &str) -> Option<Value<'_>> {
        let quoted = serde_json::to_string(property).ok()?;
        let span = self.spans.iter().find(|s| self.name_json(s) == Some(&quoted))?;
        let raw = &self.text[span.value as usize..span.end as usize];
        let annotation = (span.start != span.member).then(|| self.annotation(span)).flatten();
        let string = || serde_json::from_str::<String>(raw).ok();
        Some(match annotation.as_deref() {
            None | Some("Edm.String") => string().map_or(Value::Other, |s| Value::String(s.into())),
            Some("Edm.DateTime") => {
                string().and_then(|s| DateTime::parse(&s).ok()).map_or(Value::Other, Value::DateTime)
            }
            Some(_) => Value::Other,
        })
    }

    /// Appends the entity's JSON object to `out`: `odata.etag` (with `metadata`), the keys, `Timestamp` and the
    /// properties, each with its annotation when `metadata`; with `select`, only the properties it names (as
    /// JSON strings), a named property the entity does not have as `null`, as the service does.
    pub(crate) fn write(&self, key: &Key, metadata: bool, select: Option<&[String]>, out: &mut Vec<u8>) {
        let selected = |name: &str| select.is_none_or(|s| s.iter().any(|n| n == name));
        out.push(b'{');
        let mut first = true;
        let mut member = |out: &mut Vec<u8>, text: &[u8]| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
            out.extend_from_slice(text);
        };
        if metadata {
            member(out, self.etag_member.as_bytes());
        }
        for (name, value) in [("\"PartitionKey\"", &key.partition), ("\"RowKey\"", &key.row)] {
            if selected(name) {
                member(out, name.as_bytes());
                out.push(b':');
                serde_json::to_writer(&mut *out, value).expect("a string is JSON");
            }
        }
        if selected("\"Timestamp\"") {
            member(out, self.timestamp_member.as_bytes());
        }
        for span in &self.spans {
            let name = self.name_json(span).unwrap_or("");
            if selected(name) {
                let from = if metadata { span.start } else { span.member };
                member(out, &self.text.as_bytes()[from as usize..span.end as usize]);
            }
        }
        for name in select.unwrap_or_default() {
            let system = ["\"PartitionKey\"", "\"RowKey\"", "\"Timestamp\""].contains(&name.as_str());
            if !system && !self.spans.iter().any(|s| self.name_json(s) == Some(name)) {
                member(out, name.as_bytes());
                out.extend_from_slice(b":null");
            }
        }
        out.push(b'}');
    }
}

/// An entity with its keys, as a filter reads it.
pub(crate) struct Row<'a>(pub(crate) &'a Key, pub(crate) &'a Stored);

impl filter::Record for Row<'_> {
    fn value(&self, property: &str) -> Option<Value<'_>> {
        match property {
            "PartitionKey" => Some(Value::String(self.0.partition.as_str().into())),
            "RowKey" => Some(Value::String(self.0.row.as_str().into())),
            "Timestamp" => Some(Value::DateTime(self.1.timestamp)),
            _ => self.1.property(property),
        }
    }
}

/// A table: its name as created and its entities in key order.
#[derive(Debug, Default)]
pub(crate) struct Table {
    pub(crate) name: String,
    pub(crate) entities: BTreeMap<Key, Stored>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::filter::Record as _;

    #[test]
    fn an_entity_keeps_its_members_and_writes_them_per_metadata_level_and_select() {
        let body = br#"{"odata.etag":"x","PartitionKey":"p","RowKey":"r","Timestamp":"t","Name":"Ada","Born@odata.type":"Edm.DateTime","Born":"1815-12-10T00:00:00Z","Age":36}"#;
        let Body { properties, partition, row } = read_body(body).unwrap();
        assert_eq!((partition.as_deref(), row.as_deref()), (Some("p"), Some("r")));
        let timestamp = DateTime::parse("2024-05-06T07:08:10.7654321Z").unwrap();
        let stored = Stored::new(&properties, timestamp);
        assert_eq!(stored.properties(), properties);
        let key = Key { partition: "p".into(), row: "r".into() };
        let written = |metadata, select: Option<&[String]>| {
            let mut out = Vec::new();
            stored.write(&key, metadata, select, &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            written(true, None),
            r#"{"odata.etag":"W/\"datetime'2024-05-06T07%3A08%3A10.7654321Z'\"","PartitionKey":"p","RowKey":"r","Timestamp":"2024-05-06T07:08:10.7654321Z","Name":"Ada","Born@odata.type":"Edm.DateTime","Born":"1815-12-10T00:00:00Z","Age":36}"#
        );
        assert_eq!(
            written(false, Some(&["\"Born\"".into(), "\"RowKey\"".into(), "\"Gone\"".into()])),
            r#"{"RowKey":"r","Born":"1815-12-10T00:00:00Z","Gone":null}"#
        );
        let row = Row(&key, &stored);
        assert_eq!(row.value("Name"), Some(Value::String("Ada".into())));
        assert_eq!(row.value("Born"), Some(Value::DateTime(DateTime::parse("1815-12-10T00:00:00Z").unwrap())));
        assert_eq!((row.value("Age"), row.value("Gone")), (Some(Value::Other), None));
    }

    #[test]
    fn keys_order_by_utf16_code_unit_partition_first() {
        let key = |p: &str, r: &str| Key { partition: p.into(), row: r.into() };
        assert!(key("a", "\u{ff5e}") > key("a", "\u{1f600}"));
        assert!(key("a", "z") < key("b", ""));
        assert!(key("\u{1f600}", "z") < key("\u{ff5e}", ""));
    }
}
