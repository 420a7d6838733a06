//! The service's writes: one entity's insert, update, merge or delete, and entity group transactions, each
//! through the partition's throttle, planned against the table and applied whole or not at all.
//!
//! Layer: harness.

use super::batch;
use super::reads::element;
use super::store::{self, Key, Property, Stored};
use super::time;
use super::{
    failure, invalid, not_found, table_not_found, Bucket, Failure, Metadata, Resource, Service, State, THROTTLED,
    TRANSACTION, TRANSACTIONS, WRITTEN,
};
use crate::loopback::{Request, Response};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Instant;
use table_model::DateTime;

/// A write of one entity, resolved from a request or a batch's operation.
#[derive(Debug)]
pub(super) enum Write<'a> {
    Insert { properties: Vec<Property<'a>>, echo: bool },
    Update { properties: Vec<Property<'a>>, merge: bool, if_match: Option<String> },
    Delete { if_match: Option<String> },
}

/// What a write does, before it is applied: the entity's new state (`None`: deleted), the status and ETag.
#[derive(Debug)]
struct Change {
    key: Key,
    entity: Option<Stored>,
    status: u16,
    /// An insert answered `201` with the entity (without `Prefer: return-no-content`).
    echo: bool,
    /// An insert.
    inserted: bool,
}

impl Service {
    // --------------------------------------------------------------------------------------------------------
    // Writes

    /// Takes `n` entities from the bucket of `table`'s `partition`: whether the throttle lets the write in.
    fn admit(&self, state: &mut State, table: &str, partition: &str, n: usize) -> bool {
        let Some(rate) = self.options.throttle else { return true };
        let rate = f64::from(rate);
        let now = Instant::now();
        let bucket =
            state.buckets.entry((table.to_owned(), partition.to_owned())).or_insert(Bucket { tokens: rate, at: now });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * rate).min(rate);
        bucket.at = now;
        let n = n as f64;
        if bucket.tokens < n.min(rate) {
            self.counters.add(THROTTLED, 1);
            return false;
        }
        bucket.tokens -= n;
        true
    }

    fn server_busy() -> Failure {
        failure(503, "ServerBusy", "The server is busy.")
    }

    /// What `write` does to the entity at `key` of `entities`, or why it cannot.
    fn plan(entities: &BTreeMap<Key, Stored>, key: Key, write: Write<'_>, at: DateTime) -> Result<Change, Failure> {
        let current = entities.get(&key);
        let matches = |if_match: &Option<String>| -> Result<(), Failure> {
            match (if_match.as_deref(), current) {
                (None, _) => Ok(()),
                (Some(_), None) => Err(not_found()),
                (Some("*"), Some(_)) => Ok(()),
                (Some(etag), Some(c)) if etag == time::etag(c.timestamp) => Ok(()),
                (Some(_), Some(_)) => Err(failure(
                    412,
                    "UpdateConditionNotSatisfied",
                    "The update condition specified in the request was not satisfied.",
                )),
            }
        };
        Ok(match write {
            Write::Insert { properties, echo } => {
                if current.is_some() {
                    return Err(failure(409, "EntityAlreadyExists", "The specified entity already exists."));
                }
                Change {
                    key,
                    entity: Some(Stored::new(&properties, at)),
                    status: if echo { 201 } else { 204 },
                    echo,
                    inserted: true,
                }
            }
            Write::Update { properties, merge, if_match } => {
                matches(&if_match)?;
                let properties = match (merge, current) {
                    (true, Some(current)) => {
                        let mut merged = current.properties();
                        for p in properties {
                            match merged.iter_mut().find(|m| m.name == p.name) {
                                Some(m) => *m = p,
                                None => merged.push(p),
                            }
                        }
                        merged
                    }
                    _ => properties,
                };
                Change { key, entity: Some(Stored::new(&properties, at)), status: 204, echo: false, inserted: false }
            }
            Write::Delete { if_match } => {
                matches(&if_match.or(Some("*".to_owned())))?;
                Change { key, entity: None, status: 204, echo: false, inserted: false }
            }
        })
    }

    /// Applies planned changes.
    fn apply(&self, entities: &mut BTreeMap<Key, Stored>, changes: Vec<Change>) {
        self.counters.add(TRANSACTIONS, 1);
        self.counters.add(WRITTEN, changes.len() as u64);
        for change in changes {
            match change.entity {
                Some(entity) => entities.insert(change.key, entity),
                None => entities.remove(&change.key),
            };
        }
    }

    pub(super) fn write_one(
        &self,
        table: &str,
        key: Key,
        write: Write<'_>,
        metadata: Metadata,
        host: &str,
    ) -> Result<Response, Failure> {
        let mut state = self.lock();
        let at = state.tick();
        let lower = table.to_ascii_lowercase();
        if !state.tables.contains_key(&lower) {
            return Err(table_not_found());
        }
        if !self.admit(&mut state, &lower, &key.partition, 1) {
            return Err(Self::server_busy());
        }
        let table = state.tables.get_mut(&lower).expect("checked");
        let change = Self::plan(&table.entities, key, write, at)?;
        let etag = change.entity.as_ref().map(|e| time::etag(e.timestamp));
        let body = match (&change.entity, change.echo) {
            (Some(entity), true) => element(&table.name, &change.key, entity, metadata, host),
            _ => String::new(),
        };
        let (status, inserted) = (change.status, change.inserted);
        self.apply(&mut table.entities, vec![change]);
        drop(state);
        let mut headers = Vec::new();
        if let Some(etag) = &etag {
            headers.push(("etag", etag.as_str()));
        }
        match status {
            201 => headers.push(("content-type", metadata.content_type())),
            _ if inserted => headers.push(("preference-applied", "return-no-content")),
            _ => {}
        }
        Ok(self.respond(status, &headers, body))
    }

    /// `POST /$batch`: one change set, applied whole or not at all.
    pub(super) fn batch(&self, request: &Request, host: &str) -> Result<Response, Failure> {
        let body = std::str::from_utf8(&request.body).map_err(|e| invalid(format!("the batch is not UTF-8: {e}")))?;
        let content_type = request.header("content-type").unwrap_or("");
        let operations = batch::read(content_type, body).map_err(invalid)?;
        if operations.is_empty() || operations.len() > TRANSACTION {
            return Err(invalid(format!(
                "a change set holds 1 to {TRANSACTION} operations, this one {}",
                operations.len()
            )));
        }
        // Each operation resolved to its table, key and write; the first that cannot be is the batch's error.
        let mut writes = Vec::with_capacity(operations.len());
        for (index, op) in operations.iter().enumerate() {
            let answer = |f: Failure| self.batch_failure(&f, index);
            let path =
                op.target.split_once("://").map_or(op.target, |(_, rest)| rest.find('/').map_or("", |i| &rest[i..]));
            let Some(resource) =
                path.strip_prefix('/').and_then(|p| p.split_once('/')).and_then(|(_, p)| Resource::parse(p))
            else {
                return Ok(answer(invalid(format!("the operation's URL `{}` is not an entity's", op.target))));
            };
            let method = op.header("x-http-method").unwrap_or(op.method);
            let properties = || store::read_body(op.body.as_bytes()).map_err(invalid);
            let if_match = op.header("if-match").map(str::to_owned);
            let (table, key, write) = match (method, resource) {
                ("POST", Resource::Entities(table)) => {
                    let store::Body { properties, partition, row } = match properties() {
                        Ok(p) => p,
                        Err(f) => return Ok(answer(f)),
                    };
                    let (Some(partition), Some(row)) = (partition, row) else {
                        return Ok(answer(failure(
                            400,
                            "PropertiesNeedValue",
                            "The values are not specified for all properties in the entity.",
                        )));
                    };
                    let echo = op.header("prefer") != Some("return-no-content");
                    (table, Key { partition, row }, Write::Insert { properties, echo })
                }
                (method @ ("PUT" | "MERGE" | "PATCH"), Resource::Entity(table, key)) => match properties() {
                    Ok(body) => {
                        (table, key, Write::Update { properties: body.properties, merge: method != "PUT", if_match })
                    }
                    Err(f) => return Ok(answer(f)),
                },
                ("DELETE", Resource::Entity(table, key)) => (table, key, Write::Delete { if_match }),
                (method, _) => {
                    return Ok(answer(invalid(format!("a change set does not hold `{method} {}`", op.target))))
                }
            };
            writes.push((table.to_ascii_lowercase(), key, write, op.header("accept").map(str::to_owned)));
        }
        let mut state = self.lock();
        let at = state.tick();
        let (lower, partition) = (writes[0].0.clone(), writes[0].1.partition.clone());
        for (index, (table, key, _, _)) in writes.iter().enumerate() {
            let refusal = if *table != lower || !state.tables.contains_key(table) {
                Some(if state.tables.contains_key(table) {
                    invalid("every operation of a change set targets one table")
                } else {
                    table_not_found()
                })
            } else if key.partition != partition {
                Some(failure(
                    400,
                    "CommandsInBatchActOnDifferentPartitions",
                    "All commands in a batch must operate on same entity group.",
                ))
            } else if writes[..index].iter().any(|(_, k, _, _)| k.row == key.row) {
                Some(failure(400, "InvalidDuplicateRow", "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request."))
            } else {
                None
            };
            if let Some(refusal) = refusal {
                return Ok(self.batch_failure(&refusal, index));
            }
        }
        if !self.admit(&mut state, &lower, &partition, writes.len()) {
            return Err(Self::server_busy());
        }
        let table = state.tables.get_mut(&lower).expect("checked");
        let mut changes = Vec::with_capacity(writes.len());
        let mut accepts = Vec::with_capacity(writes.len());
        for (index, (_, key, write, accept)) in writes.into_iter().enumerate() {
            match Self::plan(&table.entities, key, write, at) {
                Ok(change) => changes.push(change),
                Err(f) => return Ok(self.batch_failure(&f, index)),
            }
            accepts.push(accept);
        }
        let parts: Vec<batch::Part> = changes
            .iter()
            .zip(accepts)
            .map(|(change, accept)| {
                let mut headers = Vec::new();
                let mut body = String::new();
                if let Some(entity) = &change.entity {
                    if change.echo {
                        let metadata = Metadata::of(accept.as_deref());
                        body = element(&table.name, &change.key, entity, metadata, host);
                        headers.push(("Content-Type", metadata.content_type().to_owned()));
                    } else if change.inserted {
                        headers.push(("Preference-Applied", "return-no-content".to_owned()));
                    }
                    headers.push(("ETag", time::etag(entity.timestamp)));
                }
                batch::Part { status: change.status, headers, body }
            })
            .collect();
        self.apply(&mut table.entities, changes);
        drop(state);
        let id = format!("{:032x}", self.request_ids.load(Ordering::Relaxed));
        let (body, content_type) = batch::write(&parts, &id);
        Ok(self.respond(202, &[("content-type", &content_type)], body))
    }

    /// A batch's answer when operation `index` failed: `202` with that operation's error alone.
    fn batch_failure(&self, failure: &Failure, index: usize) -> Response {
        let part = batch::Part {
            status: failure.status,
            headers: vec![("Content-Type", Metadata::Minimal.content_type().to_owned())],
            body: self.error_body(failure, Some(index)),
        };
        let id = format!("{:032x}", self.request_ids.load(Ordering::Relaxed));
        let (body, content_type) = batch::write(&[part], &id);
        self.respond(202, &[("content-type", &content_type)], body)
    }
}
