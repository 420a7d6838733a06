//! What the write operations take: a dynamic [`Entity`] or a `#[derive(TableEntity)]` struct.

use crate::entity::error::EntityError;
use crate::entity::{ETag, Entity};
use crate::json::error::EncodeError;
use crate::json::{encode_entity, key_ranges, EntityBody};
use crate::key::{PartitionKey, RowKey};
use crate::table_entity::TableEntity;
use std::ops::Range;

/// An entity that insert, upsert, update and batches can write: it encodes to its keys, for the address, and
/// its JSON body.
///
/// Implemented for the dynamic [`Entity`] and for every `#[derive(TableEntity)]` struct, which is encoded
/// straight from its fields ([`TableEntity::to_json`]) without building an `Entity`.
pub trait WriteEntity {
    /// Encodes the entity.
    ///
    /// # Errors
    /// [`EncodeError`] when the entity breaks a rule or its body is over 1 MiB.
    fn encode(&self) -> Result<EncodedEntity, EncodeError>;

    /// The entity's keys, as [`encode`](WriteEntity::encode) writes them, without encoding the properties.
    ///
    /// # Errors
    /// A key field whose value is not a valid key.
    fn keys(&self) -> Result<(PartitionKey, RowKey), EntityError>;

    /// The ETag the entity was read with, if any: the precondition an update or delete of it takes by default.
    fn etag(&self) -> Option<&ETag>;
}

/// An encoded entity: its keys and its JSON request body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedEntity {
    partition_key: String,
    row_key: String,
    body: EntityBody,
}

impl EncodedEntity {
    /// The `PartitionKey`.
    pub fn partition_key(&self) -> &str {
        &self.partition_key
    }

    /// The `RowKey`.
    pub fn row_key(&self) -> &str {
        &self.row_key
    }

    /// The JSON body.
    pub fn body(&self) -> &EntityBody {
        &self.body
    }

    /// The JSON body, owned.
    pub fn into_body(self) -> EntityBody {
        self.body
    }

    /// The keys and the body, owned.
    pub(crate) fn into_parts(self) -> (String, String, EntityBody) {
        (self.partition_key, self.row_key, self.body)
    }
}

/// An entity of an [`EncodedPage`](crate::json::EncodedPage), whose body is the one
/// [`encode_entity`](crate::json::encode_entity) writes for it, copied without encoding it again.
///
/// ```
/// use table_model::json::EncodedPage;
/// use table_model::{EncodedEntity, WriteEntity as _};
/// let mut page = EncodedPage::new();
/// assert!(page.read_one(br#"{"PartitionKey":"p","RowKey":"r","N":1}"#));
/// let encoded = EncodedEntity::from(page.get(0).unwrap());
/// assert_eq!((encoded.partition_key(), encoded.row_key()), ("p", "r"));
/// assert_eq!(encoded.body().as_str(), r#"{"PartitionKey":"p","RowKey":"r","N":1}"#);
/// assert_eq!(encoded.encode()?, encoded);
/// # Ok::<(), table_model::EncodeError>(())
/// ```
impl From<crate::json::EncodedEntity<'_>> for EncodedEntity {
    fn from(entity: crate::json::EncodedEntity<'_>) -> Self {
        EncodedEntity {
            partition_key: entity.partition_key.to_owned(),
            row_key: entity.row_key.to_owned(),
            body: EntityBody::from_encoded(entity.body.as_bytes().to_vec(), entity.entity_size),
        }
    }
}

/// An entity encoded already (by [`WriteEntity::encode`], or read from a page): written as it is.
impl WriteEntity for EncodedEntity {
    fn encode(&self) -> Result<EncodedEntity, EncodeError> {
        Ok(self.clone())
    }

    fn keys(&self) -> Result<(PartitionKey, RowKey), EntityError> {
        // Checked as the body was written: every body is `BodyWriter`'s, which checks both keys.
        Ok((PartitionKey::from_checked(self.partition_key.clone()), RowKey::from_checked(self.row_key.clone())))
    }

    fn etag(&self) -> Option<&ETag> {
        None
    }
}

impl WriteEntity for Entity {
    fn encode(&self) -> Result<EncodedEntity, EncodeError> {
        Ok(EncodedEntity {
            partition_key: self.partition_key().to_string(),
            row_key: self.row_key().to_string(),
            body: encode_entity(self)?,
        })
    }

    fn keys(&self) -> Result<(PartitionKey, RowKey), EntityError> {
        Ok((self.partition_key().clone(), self.row_key().clone()))
    }

    fn etag(&self) -> Option<&ETag> {
        Entity::etag(self)
    }
}

impl<T: TableEntity> WriteEntity for T {
    fn encode(&self) -> Result<EncodedEntity, EncodeError> {
        let body = self.to_json()?;
        let (partition_key, row_key) = keys_of(body.as_bytes())
            .expect("a body starts with {\"PartitionKey\":<string>,\"RowKey\":<string>, as BodyWriter::new writes it");
        Ok(EncodedEntity { partition_key, row_key, body })
    }

    fn keys(&self) -> Result<(PartitionKey, RowKey), EntityError> {
        Ok((TableEntity::partition_key(self)?, TableEntity::row_key(self)?))
    }

    fn etag(&self) -> Option<&ETag> {
        TableEntity::etag(self)
    }
}

/// The keys at the start of a body: `{"PartitionKey":"..","RowKey":".."`, the order every body is written in.
pub(crate) fn keys_of(body: &[u8]) -> Option<(String, String)> {
    let (partition_key, row_key) = key_ranges(body)?;
    Some((json_string(body, partition_key)?, json_string(body, row_key)?))
}

/// The JSON string whose contents are `body[contents]`: the bytes themselves when nothing is escaped (the
/// usual key), else read by serde_json.
fn json_string(body: &[u8], contents: Range<usize>) -> Option<String> {
    let raw = &body[contents.clone()];
    if !raw.contains(&b'\\') {
        return std::str::from_utf8(raw).ok().map(str::to_owned);
    }
    serde_json::from_slice(&body[contents.start - 1..contents.end + 1]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::BodyWriter;
    use crate::key::{PartitionKey, RowKey};

    #[test]
    fn keys_are_read_from_any_body() {
        for (pk, rk) in [("p", "r"), ("", ""), ("\"quoted\" é😀 \u{2028}x", "O'Brien,\"RowKey\":\"x\"")] {
            let mut w = BodyWriter::new(pk, rk);
            w.property_i32("N", 1);
            let body = w.finish().unwrap();
            assert_eq!(keys_of(body.as_bytes()), Some((pk.to_owned(), rk.to_owned())), "{}", body.as_str());
        }
        assert_eq!(keys_of(b"{\"RowKey\":\"r\"}"), None);
    }

    #[test]
    fn entities_encode_with_their_keys() {
        let e = Entity::new(PartitionKey::new("p'").unwrap(), RowKey::new("").unwrap());
        let encoded = e.encode().unwrap();
        assert_eq!((encoded.partition_key(), encoded.row_key()), ("p'", ""));
        assert_eq!(encoded.body().as_str(), r#"{"PartitionKey":"p'","RowKey":""}"#);
    }

    #[cfg(feature = "derive")]
    #[derive(crate::TableEntity)]
    struct Row {
        #[table(partition_key)]
        pk: String,
        #[table(row_key)]
        rk: u32,
        #[table(rename = "Note")]
        note: String,
    }

    #[cfg(feature = "derive")]
    #[test]
    fn derived_structs_and_entities_encode_alike() {
        let row = Row { pk: "a'b".into(), rk: 7, note: "n".into() };
        let derived = row.encode().unwrap();
        let dynamic = row.to_entity().unwrap().encode().unwrap();
        assert_eq!(derived, dynamic);
        assert_eq!((derived.partition_key(), derived.row_key()), ("a'b", "0000000007"));
    }
}
