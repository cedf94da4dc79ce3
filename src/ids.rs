//! Record ids as 64-bit hashes: what the lean loader keys its records by, and what a
//! lean compaction answers "was this id kept?" with.
//!
//! A hash is never taken for an id without a check: two records whose ids share a hash
//! make the lean load fall back to the exact loader.

/// A 64-bit hash of a record id: each eight-byte word (the last zero-padded, the length
/// mixed in first) is folded in by a full 64x64->128-bit multiply, whose halves are
/// XORed, then a murmur3 finalizer. Structured ids (`field_1181`, `field_1971`) must
/// not collide: the multiply-rotate mix this replaced made such pairs share a hash, and
/// every shared hash sends a load to the exact path. Equal hashes are never taken for
/// equal ids without a check: two records whose ids share a hash make the load fall back.
pub fn id_hash(bytes: &[u8]) -> u64 {
    const K1: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xd6e8_feb8_6659_fd93;
    let fold = |a: u64, b: u64| {
        let p = u128::from(a) * u128::from(b);
        (p as u64) ^ ((p >> 64) as u64)
    };
    let mut h = fold((bytes.len() as u64) ^ K2, K1);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = fold(h ^ u64::from_le_bytes(b) ^ K2, K1);
    }
    let mut b = [0u8; 8];
    let tail = words.remainder();
    if let Some(dst) = b.get_mut(..tail.len()) {
        dst.copy_from_slice(tail);
    }
    h = fold(h ^ u64::from_le_bytes(b) ^ K2, K1);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured_ids_do_not_share_a_hash() {
        // Every shared hash sends a load to the exact path: ids that differ in a digit or
        // two, of every length around a word boundary, must not collide.
        let mut hashes: Vec<u64> = Vec::new();
        for width in [4usize, 6, 7, 8, 9, 12, 15, 16, 17] {
            for prefix in ["r", "field_", "msg-", "record_id_"] {
                for n in 0..20_000u32 {
                    let id = format!("{prefix}{n:0width$}");
                    hashes.push(id_hash(id.as_bytes()));
                }
            }
        }
        let all = hashes.len();
        hashes.sort_unstable();
        hashes.dedup();
        // The ids are all distinct strings (the widths print different digit counts).
        assert_eq!(hashes.len(), all);
    }

    #[test]
    fn the_id_hash_tells_lengths_and_padding_apart() {
        assert_ne!(id_hash(b""), id_hash(b"\0"));
        assert_ne!(id_hash(b"a"), id_hash(b"a\0"));
        assert_ne!(id_hash(b"abcdefgh"), id_hash(b"abcdefgh\0"));
        assert_ne!(id_hash(b"field_1181"), id_hash(b"field_1971"));
    }
}
