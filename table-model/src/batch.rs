//! Entity group transactions (`docs/rules.md` §8): up to 100 operations on the entities of one PartitionKey
//! of one table, applied atomically.
//!
//! [`Batch`] checks each operation as it is added: the PartitionKey, a RowKey not yet in the batch, at
//! most 100 operations, a body that stays under 4 MiB, and an entity that encodes. An error names the
//! index the operation would have had, and leaves the batch unchanged. [`TableService::batch`] writes the
//! `multipart/mixed` request; [`response::batch`](crate::response::batch) reads the answer, including which
//! operation failed.
//!
//! Layer: requests.

use crate::json::ascii_json;
use crate::key::{PartitionKey, RowKey};
use crate::limits::BATCH_MAX_OPERATIONS;
use crate::name::TableName;
use crate::request::error::{BatchError, BatchErrorKind, RequestError};
use crate::request::{check_entity, check_key, check_keys, entity_path_pieces, if_match_header};
use crate::request::{IfMatch, TableService, UpdateMode, WriteEntity};
use crate::request::{DATA_SERVICE_VERSION, JSON_CONTENT_TYPE};
use crate::{KeyKind, RuleSet};
use http::header::{HeaderValue, CONTENT_TYPE};
use http::{Method, Request};
use row_keys::{Lookup, RowKeyIndex};
use std::hash::{BuildHasher, Hasher};

pub(crate) mod multipart;
mod row_keys;

/// The operations of one entity group transaction, on one table and one PartitionKey.
///
/// ```
/// use table_model::{Batch, Entity, IfMatch, PartitionKey, RowKey, TableService, UpdateMode};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let pk = PartitionKey::new("eu")?;
/// let mut batch = Batch::new("People".parse()?, pk.clone());
/// batch.insert(&Entity::new(pk.clone(), RowKey::new("a")?).with("N".parse()?, 1)?)?;
/// batch.upsert(&Entity::new(pk.clone(), RowKey::new("b")?), UpdateMode::Replace)?;
/// batch.delete(&RowKey::new("c")?, IfMatch::Any)?;
/// assert_eq!(batch.len(), 3);
///
/// // Each RowKey once:
/// let err = batch.delete(&RowKey::new("a")?, IfMatch::Any).unwrap_err();
/// assert_eq!(err.to_string(), "invalid batch operation 3: RowKey `a` is already in operation 0; each entity appears once per batch");
///
/// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
/// let request = service.batch(&batch)?;
/// assert_eq!(request.uri(), "http://127.0.0.1:10002/devstoreaccount1/$batch");
/// assert!(request.headers()["content-type"].to_str()?.starts_with("multipart/mixed; boundary=batch_"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Batch {
    table: TableName,
    partition_key: PartitionKey,
    operations: Vec<Operation>,
    /// Which operation holds each RowKey.
    row_keys: RowKeyIndex,
    /// The body's size without the endpoint URL and the `Accept` value of each sub-request, which the service
    /// adds at build time: a lower bound, checked exactly by [`TableService::batch`].
    size: usize,
    /// The rules each operation is checked against as it is added (`docs/rules.md` §13.1).
    rules: RuleSet,
}

#[derive(Clone, Debug)]
struct Operation {
    method: Method,
    row_key: String,
    /// An insert is addressed to the table and asks for no content back; every other operation is addressed to
    /// its entity.
    insert: bool,
    body: Option<Vec<u8>>,
    if_match: Option<HeaderValue>,
    /// The size of the operation's part without the endpoint URL and the `Accept` value.
    size: usize,
}

impl Operation {
    /// Whether the body holds a character outside ASCII.
    fn non_ascii(&self) -> bool {
        self.body.as_deref().is_some_and(|b| !b.is_ascii())
    }
}

/// What an operation leaves: the body the entity is stored with and whether it is exactly that (not merged),
/// or `None` for a delete.
#[cfg(feature = "client")]
pub(crate) type Effect<'a> = Option<(&'a [u8], bool)>;

/// The length of a boundary's random part: 32 hex digits (128 bits).
const BOUNDARY_HEX: usize = 32;
const BATCH_PREFIX: &str = "batch_";
const CHANGESET_PREFIX: &str = "changeset_";

impl Batch {
    /// An empty batch on this table and PartitionKey.
    pub fn new(table: TableName, partition_key: PartitionKey) -> Self {
        Batch {
            table,
            partition_key,
            operations: Vec::new(),
            row_keys: RowKeyIndex::new(),
            size: envelope_size(),
            rules: RuleSet::Storage,
        }
    }

    /// Checks each operation, as it is added, against these rules as well as Azure Table Storage's: the keys,
    /// the property names and the body limit of Cosmos DB for Table (`docs/rules.md` §13.1). Without it, the
    /// batch is checked against Storage's rules when it is added to, and against the service's when
    /// [`TableService::batch`] builds the request; the client's `TableClient::batch` sets its service's.
    ///
    /// ```
    /// use table_model::{Batch, Entity, PartitionKey, RowKey, RuleSet};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let pk = PartitionKey::new("p")?;
    /// let mut batch = Batch::new("Items".parse()?, pk.clone()).with_rules(RuleSet::CosmosDb);
    /// batch.insert(&Entity::new(pk.clone(), RowKey::new("a")?))?;
    /// let err = batch.insert(&Entity::new(pk, RowKey::new("b")?).with("Id".parse()?, 1)?).unwrap_err();
    /// assert_eq!(err.index(), 1);
    /// assert!(err.to_string().starts_with("invalid batch operation 1: invalid property name \"Id\" for Cosmos DB"));
    /// assert_eq!(batch.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_rules(mut self, rules: RuleSet) -> Self {
        self.rules = rules;
        self
    }

    /// The rules operations are checked against as they are added: Azure Table Storage's unless
    /// [`with_rules`](Batch::with_rules) chose others.
    ///
    /// ```
    /// use table_model::{Batch, PartitionKey, RuleSet};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let batch = Batch::new("Items".parse()?, PartitionKey::new("p")?);
    /// assert_eq!(batch.rules(), RuleSet::Storage);
    /// assert_eq!(batch.with_rules(RuleSet::Portable).rules(), RuleSet::Portable);
    /// # Ok(())
    /// # }
    /// ```
    pub fn rules(&self) -> RuleSet {
        self.rules
    }

    /// The table.
    pub fn table(&self) -> &TableName {
        &self.table
    }

    /// The PartitionKey of every operation.
    pub fn partition_key(&self) -> &PartitionKey {
        &self.partition_key
    }

    /// The number of operations.
    pub fn len(&self) -> usize {
        self.operations.len()
    }

    /// Whether there is no operation (an empty batch cannot be sent).
    pub fn is_empty(&self) -> bool {
        self.operations.is_empty()
    }

    /// Adds an insert (the entity must not exist).
    ///
    /// # Errors
    /// [`BatchError`] naming the operation's index: another PartitionKey, a RowKey already in the batch, a
    /// 101st operation, a body that would reach 4 MiB, or an entity that cannot be encoded.
    pub fn insert(&mut self, entity: &impl WriteEntity) -> Result<&mut Self, BatchError> {
        self.add_entity(entity, Method::POST, None, true)
    }

    /// Adds an insert-or-merge / insert-or-replace, without precondition.
    ///
    /// # Errors
    /// As [`Batch::insert`].
    pub fn upsert(&mut self, entity: &impl WriteEntity, mode: UpdateMode) -> Result<&mut Self, BatchError> {
        self.add_entity(entity, mode.method(), None, false)
    }

    /// Adds a merge or replace of an existing entity under a precondition.
    ///
    /// # Errors
    /// As [`Batch::insert`], and an ETag that cannot be sent as a header.
    pub fn update(
        &mut self,
        entity: &impl WriteEntity,
        mode: UpdateMode,
        if_match: IfMatch,
    ) -> Result<&mut Self, BatchError> {
        let header = if_match_header(&if_match).map_err(|e| self.request_error(e))?;
        self.add_entity(entity, mode.method(), Some(header), false)
    }

    /// Adds a delete under a precondition.
    ///
    /// # Errors
    /// A RowKey already in the batch, a 101st operation, a body that would reach 4 MiB, an ETag that cannot be
    /// sent as a header.
    pub fn delete(&mut self, row_key: &RowKey, if_match: IfMatch) -> Result<&mut Self, BatchError> {
        let slot = self.check_row_key(row_key)?;
        check_keys(self.rules, self.partition_key.as_str(), row_key.as_str()).map_err(|e| self.request_error(e))?;
        let header = if_match_header(&if_match).map_err(|e| self.request_error(e))?;
        let op = Operation {
            method: Method::DELETE,
            row_key: row_key.as_str().to_owned(),
            insert: false,
            body: None,
            if_match: Some(header),
            size: 0,
        };
        self.push(op, slot)
    }

    fn request_error(&self, e: RequestError) -> BatchError {
        BatchError::new(self.operations.len(), BatchErrorKind::Request(Box::new(e)))
    }

    fn add_entity(
        &mut self,
        entity: &impl WriteEntity,
        method: Method,
        if_match: Option<HeaderValue>,
        insert: bool,
    ) -> Result<&mut Self, BatchError> {
        let index = self.operations.len();
        let encoded = entity.encode().map_err(|e| self.request_error(e.into()))?;
        let (partition_key, row_key, body) = encoded.into_parts();
        if partition_key != self.partition_key.as_str() {
            return Err(BatchError::new(
                index,
                BatchErrorKind::PartitionKeyMismatch { expected: self.partition_key.to_string(), found: partition_key },
            ));
        }
        let slot = self.check_row_key(&row_key)?;
        check_entity(self.rules, &partition_key, &row_key, body.as_bytes()).map_err(|e| self.request_error(e))?;
        let op = Operation { method, row_key, insert, body: Some(body.into_bytes()), if_match, size: 0 };
        self.push(op, slot)
    }

    /// The free slot of a RowKey not yet in the batch, when the batch has room for another operation.
    fn check_row_key(&self, row_key: &str) -> Result<usize, BatchError> {
        let index = self.operations.len();
        match self.row_keys.lookup(row_key, |i| &self.operations[i].row_key) {
            Lookup::Held(first) => {
                Err(BatchError::new(index, BatchErrorKind::DuplicateRowKey { row_key: row_key.to_owned(), first }))
            }
            Lookup::Free(_) if index >= BATCH_MAX_OPERATIONS => {
                Err(BatchError::new(index, BatchErrorKind::TooManyOperations))
            }
            Lookup::Free(slot) => Ok(slot),
        }
    }

    /// Adds an operation whose RowKey takes `slot` of the index, if its part fits.
    fn push(&mut self, mut op: Operation, slot: usize) -> Result<&mut Self, BatchError> {
        let index = self.operations.len();
        op.size = self.part_size(&op, "", "");
        let size = self.size + op.size;
        let max = self.rules.batch_max_body_bytes();
        if size > max {
            return Err(BatchError::new(index, BatchErrorKind::BodyTooLarge { size, max, rules: self.rules }));
        }
        self.size = size;
        self.row_keys.insert(slot, index);
        self.operations.push(op);
        Ok(self)
    }

    #[cfg(feature = "client")]
    /// What each operation leaves in the table once the batch is applied, in order: the entity's RowKey, and
    /// the body it is stored with (and whether the stored entity is exactly that body, or holds it merged into
    /// what was there), or `None` for a delete. For checking, after a lost reply, whether the batch was applied.
    pub(crate) fn effects(&self) -> Vec<(String, Effect<'_>)> {
        self.operations
            .iter()
            .map(|op| {
                let exact = op.method != crate::request::merge_method();
                (op.row_key.clone(), op.body.as_deref().map(|b| (b, exact)))
            })
            .collect()
    }

    #[cfg(feature = "client")]
    /// The exact size of the last operation's part in the body `service` writes for the batch.
    pub(crate) fn last_part_size(&self, service: &TableService) -> usize {
        self.operations.last().map_or(0, |op| {
            let escapes = match &op.body {
                Some(body) if service.service_kind().ascii_json() => crate::json::ascii_json_len(body) - body.len(),
                _ => 0,
            };
            op.size + escapes + sub_request_extra(service)
        })
    }

    #[cfg(feature = "client")]
    /// The exact size of the body `service` writes for an empty batch: the envelope around the parts.
    pub(crate) fn envelope_size() -> usize {
        envelope_size()
    }

    #[cfg(feature = "client")]
    /// Removes the last operation (the one that did not fit, for a caller that splits batches).
    pub(crate) fn pop(&mut self) {
        if let Some(op) = self.operations.pop() {
            self.size -= op.size;
            let operations = &self.operations;
            self.row_keys.remove_last(operations.len(), |i| &operations[i].row_key);
        }
    }

    /// The operations with their bodies in ASCII ([`ascii_json`]), each part sized again.
    fn ascii_operations(&self) -> Vec<Operation> {
        self.operations
            .iter()
            .map(|op| {
                let mut op = op.clone();
                if op.non_ascii() {
                    op.body = op.body.as_deref().map(ascii_json);
                    op.size = self.part_size(&op, "", "");
                }
                op
            })
            .collect()
    }

    /// The size of an operation's part, for an endpoint URL of `base` and an `Accept` of `accept`.
    fn part_size(&self, op: &Operation, base: &str, accept: &str) -> usize {
        let mut counter = Counter(0);
        write_part(&mut counter, &self.table, &self.partition_key, op, &Boundaries::PLACEHOLDER, base, accept);
        counter.0
    }
}

/// What `service` adds to each sub-request at build time: its endpoint URL and `Accept` value.
fn sub_request_extra(service: &TableService) -> usize {
    service.endpoint().url().len() + service.metadata().accept_header().len()
}

/// Where parts are written: a buffer, or a counter of the bytes a buffer would get.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

struct Counter(usize);

impl Sink for Counter {
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
}

/// The boundaries of a body, `batch_<hex>` and `changeset_<hex>`, which share their 32 random hex digits: a body
/// that holds neither boundary is one that does not hold the digits, which one linear search tells.
struct Boundaries {
    hex: [u8; BOUNDARY_HEX],
}

impl Boundaries {
    /// Boundaries of the real length, for counting.
    const PLACEHOLDER: Boundaries = Boundaries { hex: [b'0'; BOUNDARY_HEX] };

    /// Random boundaries (128 bits, from the standard library's randomly keyed hasher).
    fn random() -> Self {
        let state = std::collections::hash_map::RandomState::new();
        let (mut a, mut b) = (state.build_hasher(), state.build_hasher());
        a.write_u8(1);
        b.write_u8(2);
        let bits = (u128::from(a.finish()) << 64) | u128::from(b.finish());
        let mut hex = [0; BOUNDARY_HEX];
        for (i, digit) in hex.iter_mut().enumerate() {
            *digit = b"0123456789abcdef"[((bits >> (4 * (BOUNDARY_HEX - 1 - i))) & 0xf) as usize];
        }
        Boundaries { hex }
    }

    /// Random boundaries that occur in none of `bodies`: drawn again in the (1 in 2<sup>128</sup> per body
    /// position) event that one does. Each draw searches each body once, in O(body) (`memchr::memmem`).
    fn absent_from<'a>(bodies: impl Iterator<Item = &'a [u8]> + Clone) -> Self {
        loop {
            let b = Boundaries::random();
            let finder = memchr::memmem::Finder::new(&b.hex);
            if bodies.clone().all(|body| finder.find(body).is_none()) {
                return b;
            }
        }
    }

    fn put_batch(&self, out: &mut impl Sink) {
        out.put(BATCH_PREFIX.as_bytes());
        out.put(&self.hex);
    }

    fn put_changeset(&self, out: &mut impl Sink) {
        out.put(CHANGESET_PREFIX.as_bytes());
        out.put(&self.hex);
    }
}

/// The bytes of the body around the parts: the batch part's head and the two closing delimiters.
fn envelope_size() -> usize {
    let mut counter = Counter(0);
    write_head(&mut counter, &Boundaries::PLACEHOLDER);
    write_tail(&mut counter, &Boundaries::PLACEHOLDER);
    counter.0
}

fn write_head(out: &mut impl Sink, b: &Boundaries) {
    out.put(b"--");
    b.put_batch(out);
    out.put(b"\r\nContent-Type: multipart/mixed; boundary=");
    b.put_changeset(out);
    out.put(b"\r\n\r\n");
}

fn write_tail(out: &mut impl Sink, b: &Boundaries) {
    out.put(b"--");
    b.put_changeset(out);
    out.put(b"--\r\n--");
    b.put_batch(out);
    out.put(b"--\r\n");
}

/// One `application/http` part: the sub-request with its own headers.
fn write_part(
    out: &mut impl Sink,
    table: &TableName,
    partition_key: &str,
    op: &Operation,
    b: &Boundaries,
    base: &str,
    accept: &str,
) {
    out.put(b"--");
    b.put_changeset(out);
    out.put(b"\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n");
    out.put(op.method.as_str().as_bytes());
    out.put(b" ");
    out.put(base.as_bytes());
    if op.insert {
        out.put(b"/");
        out.put(table.as_str().as_bytes());
    } else {
        for piece in entity_path_pieces(table, partition_key, &op.row_key) {
            out.put(piece.as_bytes());
        }
    }
    out.put(b" HTTP/1.1\r\n");
    if op.body.is_some() {
        out.put(b"Content-Type: ");
        out.put(JSON_CONTENT_TYPE.as_bytes());
        out.put(b"\r\n");
    }
    out.put(b"Accept: ");
    out.put(accept.as_bytes());
    out.put(b"\r\n");
    if op.insert {
        out.put(b"Prefer: return-no-content\r\n");
    }
    out.put(b"DataServiceVersion: ");
    out.put(DATA_SERVICE_VERSION.as_bytes());
    out.put(b"\r\n");
    if let Some(if_match) = &op.if_match {
        out.put(b"If-Match: ");
        out.put(if_match.as_bytes());
        out.put(b"\r\n");
    }
    out.put(b"\r\n");
    if let Some(body) = &op.body {
        out.put(body);
    }
    out.put(b"\r\n");
}

impl TableService {
    /// `POST /$batch`: the batch as one `multipart/mixed` request with one changeset. Success is
    /// `202 Accepted`, even when an operation failed: read the answer with
    /// [`response::batch`](crate::response::batch).
    ///
    /// # Errors
    /// [`RequestErrorKind::Batch`](crate::RequestErrorKind::Batch) for an empty batch, for an operation whose key
    /// or property name the service's kind refuses (`docs/rules.md` §13.1), or for a body over the kind's limit
    /// ([`RuleSet::batch_max_body_bytes`]: under 4 MiB on Storage, 2,000,000 bytes on Cosmos DB for Table) once
    /// the endpoint URL is in every sub-request (naming the first operation that does not fit).
    ///
    /// ```
    /// use table_model::{Batch, BatchErrorKind, Entity, PartitionKey, RequestErrorKind, RowKey};
    /// use table_model::{ServiceKind, TableService};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let pk = PartitionKey::new("p")?;
    /// let mut batch = Batch::new("Items".parse()?, pk.clone());
    /// for i in 0..5 {
    ///     // 480 KB of JSON each, in properties of 32,000 characters (a string holds at most 32,768).
    ///     let mut entity = Entity::new(pk.clone(), RowKey::new(format!("{i}"))?);
    ///     for p in 0..15 {
    ///         entity.insert(format!("S{p}").parse()?, "x".repeat(32_000))?;
    ///     }
    ///     batch.insert(&entity)?;
    /// }
    /// let storage = TableService::from_connection_string("UseDevelopmentStorage=true")?;
    /// assert!(storage.batch(&batch).is_ok());
    /// let err = storage.with_service_kind(ServiceKind::CosmosDb).batch(&batch).unwrap_err();
    /// let RequestErrorKind::Batch(e) = err.kind() else { unreachable!() };
    /// assert!(matches!(e.kind(), BatchErrorKind::BodyTooLarge { max: 2_000_000, .. }));
    /// assert!(err.to_string().ends_with("; Cosmos DB for Table takes at most 2000000 bytes in a batch"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn batch(&self, batch: &Batch) -> Result<Request<Vec<u8>>, RequestError> {
        if batch.is_empty() {
            return Err(BatchError::new(0, BatchErrorKind::Empty).into());
        }
        let rules = self.service_kind().rules();
        let refused = |index: usize, e: RequestError| BatchError::new(index, BatchErrorKind::Request(Box::new(e)));
        check_key(rules, KeyKind::Partition, batch.partition_key.as_str()).map_err(|e| refused(0, e))?;
        // Operations added under the same rules were checked then.
        if rules != batch.rules {
            for (index, op) in batch.operations.iter().enumerate() {
                match &op.body {
                    Some(body) => check_entity(rules, batch.partition_key.as_str(), &op.row_key, body),
                    None => check_key(rules, KeyKind::Row, &op.row_key),
                }
                .map_err(|e| refused(index, e))?;
            }
        }
        let max = rules.batch_max_body_bytes();
        let base = self.endpoint().url();
        let accept = self.metadata().accept_header();
        let extra = sub_request_extra(self);
        // The bodies in ASCII for a service that needs it (`docs/rules.md` §5.6): copies, sized again.
        let escaped;
        let operations = if self.service_kind().ascii_json() && batch.operations.iter().any(Operation::non_ascii) {
            escaped = batch.ascii_operations();
            &escaped
        } else {
            &batch.operations
        };
        let mut size = envelope_size();
        for (index, op) in operations.iter().enumerate() {
            size += op.size + extra;
            if size > max {
                return Err(BatchError::new(index, BatchErrorKind::BodyTooLarge { size, max, rules }).into());
            }
        }
        let boundaries = Boundaries::absent_from(operations.iter().filter_map(|op| op.body.as_deref()));
        let mut body = Vec::with_capacity(size);
        write_head(&mut body, &boundaries);
        for op in operations {
            write_part(&mut body, &batch.table, &batch.partition_key, op, &boundaries, base, accept);
        }
        write_tail(&mut body, &boundaries);
        debug_assert_eq!(body.len(), size);
        let mut request = self.request(Method::POST, "/$batch", &[], Some(body))?;
        let mut content_type = b"multipart/mixed; boundary=".to_vec();
        boundaries.put_batch(&mut content_type);
        request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_bytes(&content_type).expect("ASCII boundary"));
        self.sign(&mut request);
        Ok(request)
    }
}

#[cfg(test)]
mod tests;
