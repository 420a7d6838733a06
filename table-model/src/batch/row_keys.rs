//! Which operation of a batch holds each RowKey, for the rule that a transaction touches an entity once
//! (`docs/rules.md` §8): an open-addressed table of operation indices, with no key stored twice (the RowKeys
//! stay in the operations) and no allocation.
//!
//! The hash is FxHash's (a rotate, a xor and a multiply per 8 bytes): a batch holds at most 100 RowKeys, so
//! even keys chosen to collide cost at most 100 comparisons per lookup, and a keyed hash (SipHash, the
//! standard map's) would only add cost.

use crate::limits::BATCH_MAX_OPERATIONS;
use std::fmt;

/// Slots in the table: more than twice the most operations a batch holds, so probes stay short.
const SLOTS: usize = 256;

// A slot holds an operation's index plus one (0 is empty) in a byte.
const _: () = assert!(BATCH_MAX_OPERATIONS < u8::MAX as usize && 2 * BATCH_MAX_OPERATIONS < SLOTS);

/// The operation indices of a batch's RowKeys.
#[derive(Clone)]
pub(super) struct RowKeyIndex {
    slots: [u8; SLOTS],
}

/// Where a RowKey is: held by an operation, or absent, with the slot it would take.
pub(super) enum Lookup {
    Held(usize),
    Free(usize),
}

impl RowKeyIndex {
    /// An empty index.
    pub(super) const fn new() -> Self {
        RowKeyIndex { slots: [0; SLOTS] }
    }

    /// Looks `row_key` up, reading the RowKey of operation `i` with `row_key_of(i)`.
    pub(super) fn lookup<'a>(&self, row_key: &str, row_key_of: impl Fn(usize) -> &'a str) -> Lookup {
        let mut slot = hash(row_key.as_bytes());
        loop {
            match self.slots[slot] {
                0 => return Lookup::Free(slot),
                held => {
                    let index = usize::from(held - 1);
                    if row_key_of(index) == row_key {
                        return Lookup::Held(index);
                    }
                }
            }
            slot = (slot + 1) % SLOTS;
        }
    }

    /// Records that operation `index` holds the RowKey whose lookup gave `Lookup::Free(slot)`.
    pub(super) fn insert(&mut self, slot: usize, index: usize) {
        debug_assert!(index < BATCH_MAX_OPERATIONS);
        self.slots[slot] = u8::try_from(index + 1).expect("at most 100 operations");
    }

    #[cfg(feature = "client")]
    /// Forgets operation `index`, the last one: the table is rebuilt from the RowKeys of the operations before
    /// it (rare: a caller that splits batches takes back the operation that did not fit).
    pub(super) fn remove_last<'a>(&mut self, index: usize, row_key_of: impl Fn(usize) -> &'a str) {
        *self = RowKeyIndex::new();
        for i in 0..index {
            if let Lookup::Free(slot) = self.lookup(row_key_of(i), &row_key_of) {
                self.insert(slot, i);
            }
        }
    }
}

impl fmt::Debug for RowKeyIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowKeyIndex").field("len", &self.slots.iter().filter(|&&s| s != 0).count()).finish()
    }
}

/// The slot a RowKey hashes to: FxHash over 8-byte words, the top byte of the product.
fn hash(bytes: &[u8]) -> usize {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h: u64 = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        h = (h.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    // The length keeps `a` and `a\0` apart.
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail) ^ ((bytes.len() as u64) << 56)).wrapping_mul(SEED);
    (h >> 56) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(keys: &[String]) -> RowKeyIndex {
        let mut index = RowKeyIndex::new();
        for (i, key) in keys.iter().enumerate() {
            match index.lookup(key, |j| &keys[j]) {
                Lookup::Free(slot) => index.insert(slot, i),
                Lookup::Held(j) => panic!("{key:?} held by {j}"),
            }
        }
        index
    }

    #[test]
    fn finds_every_key_and_only_those() {
        let keys: Vec<String> = (0..BATCH_MAX_OPERATIONS).map(|i| format!("row-{i:05}")).collect();
        let index = fill(&keys);
        for (i, key) in keys.iter().enumerate() {
            assert!(matches!(index.lookup(key, |j| &keys[j]), Lookup::Held(j) if j == i), "{key}");
        }
        for absent in ["", "row-", "row-00100", "ROW-00001", "row-00001\0"] {
            assert!(matches!(index.lookup(absent, |j| &keys[j]), Lookup::Free(_)), "{absent:?}");
        }
    }

    #[test]
    fn keys_of_one_slot_are_all_kept() {
        // 100 keys hashing to one slot: the probe walks past each, so all are found.
        let keys: Vec<String> =
            (0u32..).map(|i| i.to_string()).filter(|k| hash(k.as_bytes()) == 7).take(BATCH_MAX_OPERATIONS).collect();
        let index = fill(&keys);
        for (i, key) in keys.iter().enumerate() {
            assert!(matches!(index.lookup(key, |j| &keys[j]), Lookup::Held(j) if j == i), "{key}");
        }
    }

    #[cfg(feature = "client")]
    #[test]
    fn removing_the_last_frees_its_key_only() {
        let keys: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
        let mut index = fill(&keys);
        index.remove_last(9, |j| &keys[j]);
        assert!(matches!(index.lookup("k9", |j| &keys[j]), Lookup::Free(_)));
        assert!(matches!(index.lookup("k8", |j| &keys[j]), Lookup::Held(8)));
    }
}
