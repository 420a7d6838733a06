//! The tie-breaker of a `#[table(unique)]` key when the struct has no `#[table(tie_breaker)]` field: a hash of
//! the entity's properties, so that the key is a function of the struct's value.
//!
//! Why not a number drawn per write: a key drawn anew by every `to_entity`, `to_json` or request would differ
//! between the insert of a struct and a later upsert, update or batch of the same struct (and between
//! `to_entity` and `to_json`), which would then address another entity. A key must be stable for a struct
//! value, so without a field to keep a drawn number in, it can only be computed from the value. What that gives:
//!
//! - the same struct value always has the same key, in this process and any other, with any build of this
//!   crate: the hash is fixed here and never changes (keys are stored);
//! - two struct values of the same tick and partition whose properties differ get different keys but for a
//!   chance of 1 in 2<sup>32</sup> per pair (about `n² / 2^33` for `n` values of one tick);
//! - two values with equal properties get the same key: writing the same event twice addresses one entity
//!   (an insert retried after a timeout gets `409 Conflict` instead of storing a duplicate);
//! - changing a property changes the key, so the changed struct addresses a new entity.
//!
//! A struct that needs distinct keys for equal values, or keys that survive changes, keeps its tie-breaker in a
//! `#[table(tie_breaker)]` field (filled from [`next_tie_breaker`](crate::key::next_tie_breaker) or a sequence).
//!
//! The hashed bytes are the properties as the request body writes them (names, `@odata.type` annotations and
//! values, in field order, without the keys): what is stored, so a struct read back re-encodes to the same
//! bytes. The hash is 64-bit FNV-1a finished with MurmurHash3's `fmix64`, keeping the upper 32 bits.

use crate::edm::datetime::DateTime;
use crate::entity::error::EntityError;
use crate::entity::Entity;
use crate::json::{key_ranges, properties_json, EntityBody};
use crate::key::{tie_breaker_digits, unique_key, TIE_BREAKER_OFFSET};

/// The tie-breaker for the properties as the body writes them after the keys.
pub(crate) fn content_tie_breaker(properties_json: &[u8]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in properties_json {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    (h >> 32) as u32
}

/// Replaces the placeholder tie-breakers of the unique keys (`Some(reverse)`) of a finished body with the
/// content tie-breaker, in place: the keys keep their length.
pub(crate) fn finish_body(mut body: EntityBody, partition: Option<bool>, row: Option<bool>) -> EntityBody {
    let (pk, rk) = key_ranges(body.as_bytes()).expect("a body starts with its two keys, as BodyWriter writes them");
    let bytes = body.as_bytes();
    let tie_breaker = content_tie_breaker(&bytes[rk.end + 1..bytes.len() - 1]);
    for (range, reverse) in [(pk, partition), (rk, row)] {
        if let Some(reverse) = reverse {
            let start = range.start + TIE_BREAKER_OFFSET;
            body.bytes_mut()[start..range.end].copy_from_slice(&tie_breaker_digits(tie_breaker, reverse));
        }
    }
    body
}

/// Sets the unique keys (`Some((instant, reverse))`) of an entity whose properties are all written, with the
/// content tie-breaker.
pub(crate) fn finish_entity(
    entity: &mut Entity,
    partition: Option<(DateTime, bool)>,
    row: Option<(DateTime, bool)>,
) -> Result<(), EntityError> {
    let tie_breaker = content_tie_breaker(&properties_json(entity));
    let pk = match partition {
        Some((instant, reverse)) => unique_key(instant, tie_breaker, reverse),
        None => entity.partition_key().clone(),
    };
    let rk = match row {
        Some((instant, reverse)) => unique_key(instant, tie_breaker, reverse),
        None => entity.row_key().clone(),
    };
    entity.set_keys(pk, rk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{encode_entity, BodyWriter};
    use crate::key::{self, PartitionKey, RowKey};

    #[test]
    fn the_hash_is_fixed() {
        // Keys are stored: these values must never change (checked against an independent implementation).
        let samples: Vec<u32> =
            [&b""[..], b",\"N\":1", b",\"N\":2", b",\"Name\":\"Ada\""].iter().map(|b| content_tie_breaker(b)).collect();
        assert_eq!(samples, [0xefd0_1f60, 0x2320_a9cd, 0xa4d2_beb2, 0xa950_9ce3]);
    }

    #[test]
    fn bodies_and_entities_get_the_same_keys() {
        let t = DateTime::UNIX_EPOCH;
        // A partition key the JSON escapes, before a unique row key.
        for (pk, reverse) in [("a\"b\"", true), ("", false), ("é😀'", true)] {
            let placeholder: RowKey = key::unique_key(t, 0, reverse);
            let mut writer = BodyWriter::new(pk, &placeholder);
            writer.property_str("Name", "x\"y").property_i64("N", 5);
            let body = finish_body(writer.finish().unwrap(), None, Some(reverse));

            let mut entity = Entity::new(PartitionKey::new(pk).unwrap(), placeholder.clone())
                .with("Name".parse().unwrap(), "x\"y")
                .unwrap()
                .with("N".parse().unwrap(), 5i64)
                .unwrap();
            finish_entity(&mut entity, None, Some((t, reverse))).unwrap();
            assert_eq!(body, encode_entity(&entity).unwrap(), "{pk}");
            let tie = content_tie_breaker(b",\"Name\":\"x\\\"y\",\"N@odata.type\":\"Edm.Int64\",\"N\":\"5\"");
            assert_eq!(*entity.row_key(), key::unique_key::<RowKey>(t, tie, reverse));
            assert_ne!(*entity.row_key(), placeholder);
        }
        // Both keys unique: one tie-breaker for both.
        let mut entity = Entity::new(key::unique_key(t, 0, false), key::unique_key(t, 0, true));
        finish_entity(&mut entity, Some((t, false)), Some((t, true))).unwrap();
        let tie = content_tie_breaker(b"");
        assert_eq!(key::parse_chronological_unique(entity.partition_key()).unwrap(), (t, tie));
        assert_eq!(key::parse_reverse_chronological_unique(entity.row_key()).unwrap(), (t, tie));
        let writer = BodyWriter::new(&key::unique_key::<RowKey>(t, 0, false), &key::unique_key::<RowKey>(t, 0, true));
        assert_eq!(finish_body(writer.finish().unwrap(), Some(false), Some(true)), encode_entity(&entity).unwrap());
    }
}
