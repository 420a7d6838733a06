//! The service's reads: the table list and a table's creation, queries of entities and one entity's read, and
//! how their answers are written (continuation tokens, `$top`, `$select`, one entity's body).
//!
//! Layer: harness.

use super::filter::{Filter, Record, Value};
use super::store::{Key, Row, Stored, Table};
use super::time;
use super::{
    failure, invalid, not_found, table_not_found, valid_table_name, Failure, Metadata, Service, ACCOUNT, PAGE, PAGES,
    SENT,
};
use crate::loopback::Response;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// A table's name, as its filter reads it.
struct TableRecord<'a>(&'a str);

impl Record for TableRecord<'_> {
    fn value(&self, property: &str) -> Option<Value<'_>> {
        (property == "TableName").then(|| Value::String(self.0.into()))
    }
}

impl Service {
    // --------------------------------------------------------------------------------------------------------
    // Tables

    pub(super) fn list_tables(
        &self,
        params: &HashMap<String, String>,
        metadata: Metadata,
        host: &str,
    ) -> Result<Response, Failure> {
        let filter = filter(params)?;
        let top = top(params)?;
        let after = params.get("NextTableName").map(|n| n.to_ascii_lowercase());
        let state = self.lock();
        let mut names: Vec<(&String, &str)> = state.tables.iter().map(|(k, t)| (k, t.name.as_str())).collect();
        names.sort();
        let mut chosen = names
            .into_iter()
            .filter(|(k, _)| after.as_ref().is_none_or(|a| *k >= a))
            .filter(|(_, name)| filter.as_ref().is_none_or(|f| f.matches(&TableRecord(name))));
        let page: Vec<&str> = chosen.by_ref().take(top).map(|(_, name)| name).collect();
        let next = chosen.next().map(|(k, _)| k.clone());
        let value: Vec<String> =
            page.iter().map(|n| format!("{{\"TableName\":{}}}", serde_json::to_string(n).expect("JSON"))).collect();
        let mut body = String::from("{");
        if metadata != Metadata::None {
            let _ = write!(body, "{},", metadata_member(host, "Tables"));
        }
        let _ = write!(body, "\"value\":[{}]}}", value.join(","));
        let mut headers = vec![("content-type", metadata.content_type())];
        if let Some(next) = &next {
            headers.push(("x-ms-continuation-NextTableName", next));
        }
        self.counters.add(PAGES, 1);
        Ok(self.respond(200, &headers, body))
    }

    pub(super) fn create_table(
        &self,
        body: &[u8],
        metadata: Metadata,
        host: &str,
        no_content: bool,
    ) -> Result<Response, Failure> {
        let json: serde_json::Value =
            serde_json::from_slice(body).map_err(|e| invalid(format!("the body is not JSON: {e}")))?;
        let name = json["TableName"].as_str().ok_or_else(|| invalid("no `TableName` in the body"))?;
        if !valid_table_name(name) {
            return Err(failure(400, "InvalidResourceName", "The specifed resource name contains invalid characters."));
        }
        {
            let mut state = self.lock();
            let entry = state.tables.entry(name.to_ascii_lowercase());
            if matches!(entry, std::collections::hash_map::Entry::Occupied(_)) {
                return Err(failure(409, "TableAlreadyExists", "The table specified already exists."));
            }
            entry.or_insert(Table { name: name.to_owned(), entities: BTreeMap::new() });
        }
        if no_content {
            return Ok(self.respond(204, &[("preference-applied", "return-no-content")], ""));
        }
        let mut body = String::from("{");
        if metadata != Metadata::None {
            let _ = write!(body, "{},", metadata_member(host, "Tables/@Element"));
        }
        let _ = write!(body, "\"TableName\":{}}}", serde_json::to_string(name).expect("JSON"));
        Ok(self.respond(201, &[("content-type", metadata.content_type())], body))
    }

    // --------------------------------------------------------------------------------------------------------
    // Reads

    pub(super) fn query(
        &self,
        table: &str,
        params: &HashMap<String, String>,
        metadata: Metadata,
        host: &str,
    ) -> Result<Response, Failure> {
        let filter = filter(params)?;
        let top = top(params)?;
        let select = select(params);
        let state = self.lock();
        let table = state.tables.get(&table.to_ascii_lowercase()).ok_or_else(table_not_found)?;
        let resume = resume(params)?;
        let lowest =
            filter.as_ref().and_then(Filter::lowest).map(|p| Key { partition: p.to_owned(), row: String::new() });
        let start = match (resume, lowest) {
            (Some(a), Some(b)) => a.max(b),
            (a, b) => a.or(b).unwrap_or(Key { partition: String::new(), row: String::new() }),
        };
        let mut range = table
            .entities
            .range(start..)
            .take_while(|(k, _)| filter.as_ref().is_none_or(|f| f.below_highest(&k.partition)))
            .peekable();
        let mut body = Vec::with_capacity(1024);
        body.push(b'{');
        if metadata != Metadata::None {
            body.extend_from_slice(format!("{},", metadata_member(host, &table.name)).as_bytes());
        }
        body.extend_from_slice(b"\"value\":[");
        let mut sent = 0;
        while sent < top {
            let Some((key, entity)) = range.next() else { break };
            if filter.as_ref().is_some_and(|f| !f.matches(&Row(key, entity))) {
                continue;
            }
            if sent > 0 {
                body.push(b',');
            }
            entity.write(key, metadata != Metadata::None, select.as_deref(), &mut body);
            sent += 1;
        }
        body.extend_from_slice(b"]}");
        let next = range.peek().map(|(k, _)| (*k).clone());
        drop(state);
        let tokens = next.map(|next| (token(&next.partition), token(&next.row)));
        let mut headers = vec![("content-type", metadata.content_type())];
        if let Some((partition, row)) = &tokens {
            headers.push(("x-ms-continuation-NextPartitionKey", partition));
            headers.push(("x-ms-continuation-NextRowKey", row));
        }
        self.counters.add(PAGES, 1);
        self.counters.add(SENT, sent as u64);
        Ok(self.respond(200, &headers, body))
    }

    pub(super) fn get(&self, table: &str, key: &Key, metadata: Metadata, host: &str) -> Result<Response, Failure> {
        let state = self.lock();
        let table = state.tables.get(&table.to_ascii_lowercase()).ok_or_else(table_not_found)?;
        let entity = table.entities.get(key).ok_or_else(not_found)?;
        let body = element(&table.name, key, entity, metadata, host);
        let etag = time::etag(entity.timestamp);
        drop(state);
        self.counters.add(PAGES, 1);
        self.counters.add(SENT, 1);
        Ok(self.respond(200, &[("content-type", metadata.content_type()), ("etag", &etag)], body))
    }
}

/// A continuation token as the service writes one (opaque to clients, ASCII whatever the key): `1!`, the
/// length of the key's base64, `!`, the base64 (`1!12!dGVuYW50LTAx` for `tenant-01`).
fn token(key: &str) -> String {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(key);
    format!("1!{}!{encoded}", encoded.len())
}

/// The key of a continuation token ([`token`]).
fn untoken(token: &str) -> Result<String, Failure> {
    use base64::Engine as _;
    let refused = || invalid(format!("`{token}` is not a continuation token of the loopback service"));
    let mut parts = token.splitn(3, '!');
    let (Some("1"), Some(len), Some(encoded)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(refused());
    };
    if len.parse::<usize>().ok() != Some(encoded.len()) {
        return Err(refused());
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|_| refused())?;
    String::from_utf8(bytes).map_err(|_| refused())
}

/// `$filter`, read; `None` without one.
fn filter(params: &HashMap<String, String>) -> Result<Option<Filter>, Failure> {
    params.get("$filter").map(|f| Filter::parse(f)).transpose().map_err(invalid)
}

/// Where a query resumes: the keys of `NextPartitionKey` and `NextRowKey` (the partition's start without it);
/// `None` without a `NextPartitionKey`.
fn resume(params: &HashMap<String, String>) -> Result<Option<Key>, Failure> {
    let Some(partition) = params.get("NextPartitionKey") else { return Ok(None) };
    let partition = untoken(partition)?;
    let row = params.get("NextRowKey").map_or(Ok(String::new()), |r| untoken(r))?;
    Ok(Some(Key { partition, row }))
}

/// `$top`: 1 to 1,000, the page's size without it.
fn top(params: &HashMap<String, String>) -> Result<usize, Failure> {
    match params.get("$top") {
        None => Ok(PAGE),
        Some(top) => match top.parse::<usize>() {
            Ok(n @ 1..=PAGE) => Ok(n),
            _ => Err(invalid(format!("`$top={top}` is not 1 to {PAGE}"))),
        },
    }
}

/// `$select`'s names, each as a JSON string; `None` without one (or `*`).
fn select(params: &HashMap<String, String>) -> Option<Vec<String>> {
    let text = params.get("$select").filter(|s| !s.trim().is_empty() && s.trim() != "*")?;
    Some(text.split(',').map(|n| serde_json::to_string(n.trim()).expect("JSON")).collect())
}

/// One entity's answer: the entity with `odata.metadata` (`#Table/@Element`) first.
pub(super) fn element(table: &str, key: &Key, entity: &Stored, metadata: Metadata, host: &str) -> String {
    let mut out = Vec::new();
    entity.write(key, metadata != Metadata::None, None, &mut out);
    let object = String::from_utf8(out).expect("the entity is UTF-8");
    if metadata == Metadata::None {
        return object;
    }
    let separator = if object.len() > 2 { "," } else { "" };
    format!("{{{}{separator}{}", metadata_member(host, &format!("{table}/@Element")), &object[1..])
}

/// The `odata.metadata` member of an answer about `what` (`Tables`, `Customers`, `Customers/@Element`):
/// `"odata.metadata":"http://<host>/devstoreaccount1/$metadata#<what>"`.
fn metadata_member(host: &str, what: &str) -> String {
    format!("\"odata.metadata\":\"http://{host}/{ACCOUNT}/$metadata#{what}\"")
}
