//! Record ids as 64-bit hashes, and sorting them: what the lean loader keys its records
//! by, and what a lean compaction answers "was this id kept?" with.
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

/// Bits of the first pass of [`radix_sort_from`] (the most significant ones): 256 runs,
/// few enough that writing to all of them at once stays within the cache and the TLB.
pub const TOP_BITS: u32 = 8;

/// Bits per pass of [`radix_sort_from`] within a run of equal top bits: a 512-entry count
/// table, and a run that stays in the first-level cache.
pub const DIGIT_BITS: u32 = 9;

/// Runs of [`radix_sort_from`]'s first pass at most this long are sorted by comparison.
const SHORT_RUN: usize = 64;

/// Sorts `v`: hashes are uniform, and on them this radix sort is several times as fast as
/// a comparison sort. `spare` is scratch space.
pub fn radix_sort(v: &mut [u64], spare: Vec<u64>) {
    radix_sort_from(v, spare, 0);
}

/// [`radix_sort`] by the bits from `low` up only: `v` ends in order of `v >> low`. One
/// pass by the top [`TOP_BITS`] cuts `v` into runs, then each run is sorted by the bits
/// below them, least significant digit first, [`DIGIT_BITS`] per pass, while it is in
/// cache (one pass over the whole of `v` at a time would write to thousands of places
/// at once, and miss the cache and the TLB on most of them).
pub fn radix_sort_from(v: &mut [u64], spare: Vec<u64>, low: u32) {
    const RUNS: usize = 1 << TOP_BITS;
    const TOP_SHIFT: u32 = 64 - TOP_BITS;
    let mut other = spare;
    other.clear();
    other.resize(v.len(), 0);
    // The runs' bounds: run r is other[starts[r]..starts[r + 1]].
    let mut starts = [0usize; RUNS + 1];
    for &x in v.iter() {
        if let Some(n) = starts.get_mut((x >> TOP_SHIFT) as usize + 1) {
            *n += 1;
        }
    }
    for r in 1..=RUNS {
        let before = starts.get(r - 1).copied().unwrap_or(0);
        if let Some(n) = starts.get_mut(r) {
            *n += before;
        }
    }
    let mut at = starts;
    for &x in v.iter() {
        if let Some(n) = at.get_mut((x >> TOP_SHIFT) as usize) {
            if let Some(slot) = other.get_mut(*n) {
                *slot = x;
            }
            *n += 1;
        }
    }
    let shifts: Vec<u32> = (low.min(TOP_SHIFT)..TOP_SHIFT)
        .step_by(DIGIT_BITS as usize)
        .collect();
    let mut counts = [0usize; 1 << DIGIT_BITS];
    for bounds in starts.windows(2) {
        let &[from, to] = bounds else { continue };
        let (Some(mut src), Some(mut dst)) = (other.get_mut(from..to), v.get_mut(from..to)) else {
            continue;
        };
        // A short run (most of them, when `v` is small) is sorted by comparison: the
        // passes' count tables would cost more than the run.
        if to - from <= SHORT_RUN {
            dst.copy_from_slice(src);
            dst.sort_unstable();
            continue;
        }
        for &shift in &shifts {
            let mask = (1u64 << DIGIT_BITS.min(TOP_SHIFT - shift)) - 1;
            counts.fill(0);
            for &x in src.iter() {
                if let Some(n) = counts.get_mut(((x >> shift) & mask) as usize) {
                    *n += 1;
                }
            }
            let mut sum = 0;
            for n in counts.iter_mut() {
                let here = *n;
                *n = sum;
                sum += here;
            }
            for &x in src.iter() {
                if let Some(n) = counts.get_mut(((x >> shift) & mask) as usize) {
                    if let Some(slot) = dst.get_mut(*n) {
                        *slot = x;
                    }
                    *n += 1;
                }
            }
            std::mem::swap(&mut src, &mut dst);
        }
        // The run ends where the last pass wrote it (`src` after the swap): in `v`, or
        // copied there.
        if shifts.len().is_multiple_of(2) {
            dst.copy_from_slice(src);
        }
    }
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
