//! Tests of the lean loader's duplicate checks.

use super::*;

#[test]
fn duplicates_are_found_within_and_across_the_two_lists() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let random: Vec<u64> = (0..5000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x & !1
        })
        .collect();
    let other: Vec<u64> = random.iter().map(|h| h.wrapping_add(1) | 1).collect();
    for two in [false, true] {
        let (mut a, mut b) = (random.clone(), other.clone());
        assert!(!has_duplicate([&mut a, &mut b], two));
        for (in_a, at) in [(false, 1234), (true, 17)] {
            let (mut a, mut b) = (random.clone(), other.clone());
            if in_a {
                a.push(random[at])
            } else {
                b.push(random[at])
            }
            assert!(has_duplicate([&mut a, &mut b], two));
        }
        let (mut a, mut b) = (vec![1u64 << 40, 3u64 << 40], Vec::new());
        assert!(!has_duplicate([&mut a, &mut b], two));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        assert!(!has_duplicate([&mut a, &mut b], two));
    }
}
