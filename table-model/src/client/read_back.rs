//! Writes whose reply was lost and whose retry the service refused in a way the first try could have caused (an
//! insert's `409`, an update's `412`, a transaction's failed operation): the entities are read back, and the write
//! succeeded when they are exactly as it leaves them; else its outcome is unknown (`docs/rules.md` §12, the
//! decisions on writes whose outcome is unknown and on reading a transaction back). [`TableClient::get_many`](super::TableClient::get_many)
//! reads entities back the same way.
//!
//! Layer: client.

use super::core::Core;
use super::error::{Error, ErrorKind, OutcomeUnknown};
use super::trace;
use crate::batch::Batch;
use crate::entity::ETag;
use crate::filter::{self, Filter};
use crate::json::{decode_entity, MetadataLevel};
use crate::key::service_order;
use crate::key::PartitionKey;
use crate::limits::{FILTER_MAX_COMPARISONS, QUERY_MAX_TOP};
use crate::name::TableName;
use crate::query::Query;
use crate::request::error::RequestError;
use crate::request::WriteEntity;
use crate::response::errors::ResponseError;
use crate::response::{BatchOutcome, ReadEntity as _};
use crate::{Entity, ErrorCode};
use azure_core::http::Context;
use std::collections::{BTreeSet, HashMap};

/// The read-back of one table's writes.
pub(super) struct ReadBack<'a> {
    core: &'a Core,
    table: &'a TableName,
}

impl<'a> ReadBack<'a> {
    pub(super) fn new(core: &'a Core, table: &'a TableName) -> Self {
        ReadBack { core, table }
    }

    /// After a lost reply and a refused retry of a write of `entity` whose body was `sent` (and whether the
    /// stored entity is exactly that body, or holds it merged into what was there): when the stored entity is
    /// as the write left it, the write landed and its ETag is the entity's; else the outcome is unknown.
    pub(super) async fn write(
        &self,
        operation: &'static str,
        refusal: Error,
        entity: &impl WriteEntity,
        (sent, exact): (&[u8], bool),
        ctx: &Context<'_>,
    ) -> Result<ETag, Error> {
        let mut settle = trace::settling(self.core.tracing.as_ref(), ctx);
        let result = {
            let ctx = settle.ctx();
            async {
                let (partition_key, row_key) = entity.keys().map_err(RequestError::from)?;
                let sent = decode_entity(sent, None).map_err(ResponseError::from)?;
                // Typed values need annotations to compare: read at minimal metadata whatever the client's level.
                let read = self.core.requests.clone().with_metadata(MetadataLevel::Minimal).get(
                    self.table,
                    &partition_key,
                    &row_key,
                );
                let stored = match self.core.call(read, ctx, Entity::read_entity).await {
                    Ok(entity) => Some(entity),
                    Err(e) if e.is_not_found() && e.error_code() != Some(ErrorCode::TableNotFound) => None,
                    Err(e) => return Err(e),
                };
                match settled(Some(&(sent, exact)), stored.as_ref()) {
                    Some(Some(etag)) => Ok(etag),
                    _ => Err(outcome_unknown(
                        operation,
                        refusal,
                        "the entity read back differs from the one sent".to_owned(),
                    )),
                }
            }
            .await
        };
        settle.end(result)
    }

    /// Reads every entity of a transaction back after a lost reply and a refused retry: when each is as the
    /// transaction leaves it, the first try was applied (all or nothing) and the transaction succeeded.
    pub(super) async fn transaction(
        &self,
        batch: &Batch,
        refusal: Error,
        ctx: &Context<'_>,
    ) -> Result<BatchOutcome, Error> {
        let mut settle = trace::settling(self.core.tracing.as_ref(), ctx);
        let result = self.transaction_with(batch, refusal, settle.ctx()).await;
        settle.end(result)
    }

    async fn transaction_with(&self, batch: &Batch, refusal: Error, ctx: &Context<'_>) -> Result<BatchOutcome, Error> {
        let mut expected = Vec::with_capacity(batch.len());
        for (row_key, effect) in batch.effects() {
            let sent = match effect {
                Some((body, exact)) => Some((decode_entity(body, None).map_err(ResponseError::from)?, exact)),
                None => None,
            };
            expected.push((row_key, sent));
        }
        let row_keys: Vec<&str> = expected.iter().map(|(row_key, _)| row_key.as_str()).collect();
        let select = read_back_selection(expected.iter().map(|(_, sent)| sent.as_ref()));
        let mut stored = self.entities(batch.partition_key(), row_keys, &select, ctx).await?;
        let mut etags = Vec::with_capacity(batch.len());
        for (row_key, sent) in &expected {
            match settled(sent.as_ref(), stored.remove(row_key.as_str()).as_ref()) {
                Some(etag) => etags.push(etag),
                None => {
                    let reason =
                        format!("the entity with RowKey {row_key:?} read back is not as the transaction leaves it");
                    return Err(outcome_unknown("transaction", refusal, reason));
                }
            }
        }
        Ok(BatchOutcome { etags })
    }

    /// The stored entities of one partition with these RowKeys (those that exist), in as few requests as the
    /// keys allow (`docs/rules.md` §12), with only the properties `select` names (all when it is empty).
    ///
    /// Up to 14 keys are one query, `PartitionKey eq .. and (RowKey eq .. or ..)`: the partition's comparison
    /// and 14 of the keys' are the 15 a filter may hold. More keys are first read as the range from the least to
    /// the greatest, which is one page when the range holds little else (as a bulk write's transaction of
    /// consecutive keys does); when a page holds more of other entities than of these (sparse keys in a large
    /// partition), the keys not found yet are read 14 to a query instead. Nothing assumes the order of a page
    /// (Cosmos DB does not sort them).
    pub(super) async fn entities(
        &self,
        partition_key: &PartitionKey,
        mut row_keys: Vec<&str>,
        select: &[String],
        ctx: &Context<'_>,
    ) -> Result<HashMap<String, Entity>, Error> {
        const KEYS_PER_QUERY: usize = FILTER_MAX_COMPARISONS - 1;
        // Typed values need annotations to compare: read at minimal metadata whatever the client's level.
        let requests = self.core.requests.clone().with_metadata(MetadataLevel::Minimal);
        let base = Query::new().select(select.iter().cloned());
        let partition = filter::PARTITION_KEY.eq(partition_key);
        let mut found = HashMap::with_capacity(row_keys.len());
        // Keeps the entities of a page whose RowKey is one of `row_keys` (sorted); returns how many.
        fn keep(entities: Vec<Entity>, row_keys: &[&str], found: &mut HashMap<String, Entity>) -> usize {
            let before = found.len();
            for entity in entities {
                if row_keys.binary_search_by(|k| service_order(k, entity.row_key().as_str())).is_ok() {
                    found.insert(entity.row_key().as_str().to_owned(), entity);
                }
            }
            found.len() - before
        }
        row_keys.sort_unstable_by(|a, b| service_order(a, b));
        if row_keys.len() > KEYS_PER_QUERY {
            let (least, greatest) = (row_keys[0], row_keys[row_keys.len() - 1]);
            let range = partition.clone() & filter::ROW_KEY.ge(least) & filter::ROW_KEY.le(greatest);
            let query = base.clone().filter(range).top(QUERY_MAX_TOP);
            let mut continuation = None;
            loop {
                let request = requests.query(self.table, &query, continuation.as_ref());
                let page = self.core.call(request, ctx, Entity::read_page).await?;
                let read = page.entities.len();
                let ours = keep(page.entities, &row_keys, &mut found);
                row_keys.retain(|k| !found.contains_key(*k));
                match page.continuation {
                    // The whole range was read: the keys not found do not exist.
                    None => row_keys.clear(),
                    Some(next) if !row_keys.is_empty() && 2 * ours >= read => {
                        continuation = Some(next);
                        continue;
                    }
                    Some(_) => {}
                }
                break;
            }
        }
        for keys in row_keys.chunks(KEYS_PER_QUERY) {
            let Some(any) = Filter::any(keys.iter().map(|k| filter::ROW_KEY.eq(*k))) else { continue };
            let query = base.clone().filter(partition.clone() & any);
            let mut continuation = None;
            loop {
                let request = requests.query(self.table, &query, continuation.as_ref());
                let page = self.core.call(request, ctx, Entity::read_page).await?;
                keep(page.entities, keys, &mut found);
                match page.continuation {
                    Some(next) => continuation = Some(next),
                    None => break,
                }
            }
        }
        Ok(found)
    }
}

/// What a write leaves: the entity sent, and whether the stored one is exactly it (an insert or a replace) or
/// holds it merged into what was there. A delete leaves nothing: `None` where an `Option<&Expected>` is taken.
type Expected = (Entity, bool);

/// Whether the stored entity (`None`: there is none) is as a write left it: `Some` with its ETag when it is
/// (`Some(None)` for an entity the write deleted), `None` when it is not.
fn settled(expected: Option<&Expected>, stored: Option<&Entity>) -> Option<Option<ETag>> {
    match (expected, stored) {
        (None, None) => Some(None),
        (Some((sent, exact)), Some(stored)) => {
            let holds = sent.iter().all(|(name, value)| stored.value(name.as_str()) == Some(value));
            (holds && (!exact || stored.len() == sent.len())).then(|| stored.etag().cloned())
        }
        _ => None,
    }
}

/// The `$select` a read-back needs: the keys alone when every operation deletes, the keys and the properties
/// written when none replaces a whole entity (a merge leaves the others as they were), else every property
/// (empty). A list over the service's projection limit of 255 names, or of more than 2,048 characters (to keep
/// the URL short), is left out too: the whole entities are read.
fn read_back_selection<'e>(expected: impl Iterator<Item = Option<&'e Expected>>) -> Vec<String> {
    const MAX_NAMES: usize = 255;
    const MAX_CHARS: usize = 2048;
    let mut names: BTreeSet<&str> = BTreeSet::from(["PartitionKey", "RowKey"]);
    for expected in expected {
        match expected {
            None => {}
            Some((_, true)) => return Vec::new(),
            Some((sent, false)) => names.extend(sent.iter().map(|(name, _)| name.as_str())),
        }
    }
    let chars: usize = names.iter().map(|n| n.len()).sum();
    if names.len() > MAX_NAMES || chars > MAX_CHARS {
        return Vec::new();
    }
    names.into_iter().map(str::to_owned).collect()
}

pub(super) fn outcome_unknown(operation: &'static str, refusal: Error, reason: String) -> Error {
    match refusal.into_kind() {
        ErrorKind::Service(answer) => {
            Error::new(ErrorKind::OutcomeUnknown(OutcomeUnknown { operation, answer, reason }))
        }
        other => Error::new(other),
    }
}
