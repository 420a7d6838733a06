//! The hash that maps a property name to its field in the code `#[derive(TableEntity)]` generates.
//!
//! The derive groups a struct's property names into `2^bits` buckets with [`name_bucket`] when it expands, and
//! the generated code calls the same function on each name it reads, then compares the name only with the
//! (usually one) names of its bucket: finding a field costs the same whether the struct has 1 property or 252,
//! whatever the names look like (`p000` .. `p251` included). Both sides call this one definition, so the
//! buckets computed at compile time are the ones looked up at run time.
//!
//! Not a rule of the service and not a stable hash: it may change in any release, with the derive.
//!
//! Layer: rules.

/// The multiplier: the 64-bit golden ratio, odd, so that multiplying by it is a bijection that spreads every
/// input bit into the high bits the buckets are taken from.
const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// A 64-bit hash of `name`, eight bytes at a time (names are at most 255 characters).
///
/// ```
/// use table_model_rules::name_hash::name_hash;
/// assert_eq!(name_hash("Total"), name_hash("Total"));
/// assert_ne!(name_hash("p000"), name_hash("p001"));
/// ```
#[inline]
#[must_use]
pub fn name_hash(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(K).rotate_left(23);
    }
    let mut tail = 0u64;
    for (i, &b) in chunks.remainder().iter().enumerate() {
        tail |= u64::from(b) << (8 * i);
    }
    (h ^ tail).wrapping_mul(K)
}

/// The bucket of `name` among `2^bits` buckets (`bits` at most 16): the top `bits` bits of [`name_hash`], the
/// best mixed ones. Every name is in bucket 0 when `bits` is 0.
///
/// ```
/// use table_model_rules::name_hash::name_bucket;
/// assert!(name_bucket("Total", 4) < 16);
/// assert_eq!(name_bucket("Total", 0), 0);
/// ```
#[inline]
#[must_use]
pub fn name_bucket(name: &str, bits: u32) -> usize {
    let bits = bits.min(16);
    if bits == 0 {
        0
    } else {
        (name_hash(name) >> (64 - bits)) as usize
    }
}

/// How many bits of buckets the derive uses for `count` names: at least twice as many buckets as names, so
/// that a bucket holds about one name on average, at most `2^16`.
///
/// ```
/// use table_model_rules::name_hash::bucket_bits;
/// assert_eq!(bucket_bits(0), 0);
/// assert_eq!(bucket_bits(1), 1);
/// assert_eq!(bucket_bits(252), 9);
/// ```
#[must_use]
pub fn bucket_bits(count: usize) -> u32 {
    if count == 0 {
        0
    } else {
        (count * 2).next_power_of_two().trailing_zeros().min(16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sequential names, the worst case for a hash of prefixes, spread over the buckets: no bucket of 252
    /// such names holds more than a few.
    #[test]
    fn sequential_names_spread() {
        let names: Vec<String> = (0..252).map(|i| format!("p{i:03}")).collect();
        let bits = bucket_bits(names.len());
        let mut load = vec![0usize; 1 << bits];
        for n in &names {
            load[name_bucket(n, bits)] += 1;
        }
        let max = load.iter().copied().max().unwrap_or(0);
        assert!(max <= 4, "a bucket holds {max} of 252 sequential names");
        let used = load.iter().filter(|&&l| l > 0).count();
        assert!(used >= 180, "252 names use only {used} of {} buckets", load.len());
    }

    /// Names that differ only past the first eight bytes, or only in length, hash apart.
    #[test]
    fn long_and_padded_names_differ() {
        assert_ne!(name_hash("PropertyNumber1"), name_hash("PropertyNumber2"));
        assert_ne!(name_hash("a"), name_hash("a\0"));
        assert_ne!(name_hash(""), name_hash("\0"));
    }
}
