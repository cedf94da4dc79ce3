//! Tests of the lean loader's sorting and duplicate checks.

use super::*;
use crate::ids::radix_sort;

#[test]
fn the_radix_sort_sorts_and_duplicates_are_found() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut random: Vec<u64> = (0..5000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    for v in [
        random.clone(),
        // Runs long enough for the radix passes, and short ones sorted by comparison.
        random.iter().map(|h| h >> 8).collect(),
        random.iter().take(40).copied().collect(),
        (0..3000u64).rev().collect(),
        vec![7; 10],
        vec![u64::MAX, 0, 1 << 63, 255, 256],
        Vec::new(),
    ] {
        let mut sorted = v.clone();
        sorted.sort_unstable();
        let mut radix = v;
        radix_sort(&mut radix, vec![3; 7]);
        assert_eq!(radix, sorted);
    }
    // By the bits from `low` up only: odd and even numbers of passes within the runs,
    // and none.
    // Short runs (sorted by comparison) and one long run (sorted by the passes).
    let one_run: Vec<u64> = random.iter().map(|h| h >> 8).collect();
    for input in [&random, &one_run] {
        for low in [0, 20, 31, 38, 47, 55, 56, 60] {
            let mut radix = input.clone();
            radix_sort_from(&mut radix, Vec::new(), low);
            assert!(
                radix.windows(2).all(|w| w[0] >> low <= w[1] >> low),
                "{low}"
            );
            let (mut got, mut want) = (radix, input.clone());
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "{low}");
        }
    }
    let mut other: Vec<u64> = random.iter().map(|h| h.wrapping_add(1) | 1).collect();
    random.iter_mut().for_each(|h| *h &= !1);
    for two in [false, true] {
        let (mut a, mut b) = (random.clone(), other.clone());
        assert!(!has_duplicate(
            [&mut a, &mut b],
            two,
            [Vec::new(), vec![1; 9]]
        ));
        let (mut a, mut b) = (random.clone(), other.clone());
        b.push(random[1234]);
        assert!(has_duplicate(
            [&mut a, &mut b],
            two,
            [Vec::new(), Vec::new()]
        ));
        let (mut a, mut b) = (random.clone(), other.clone());
        a.push(random[17]);
        assert!(has_duplicate(
            [&mut a, &mut b],
            two,
            [Vec::new(), Vec::new()]
        ));
    }
    other.clear();
}

#[test]
fn repeats_are_found_inside_runs_of_equal_top_bits() {
    // Values that share their top bits (one run) but differ below: only a true repeat
    // counts, in either list or across the two.
    let high = 0xdead_beef_8000_0000u64;
    let a: Vec<u64> = (0..40).map(|k| high | ((k * 7919) % 1000)).collect();
    let b: Vec<u64> = (0..40).map(|k| high | (1000 + k)).collect();
    for two in [false, true] {
        let (mut x, mut y) = (a.clone(), b.clone());
        assert!(!has_duplicate(
            [&mut x, &mut y],
            two,
            [Vec::new(), Vec::new()]
        ));
        let (mut x, mut y) = (a.clone(), b.clone());
        y.push(a[5]);
        assert!(has_duplicate(
            [&mut x, &mut y],
            two,
            [Vec::new(), Vec::new()]
        ));
        let (mut x, mut y) = (a.clone(), b.clone());
        x.insert(3, a[30]);
        assert!(has_duplicate(
            [&mut x, &mut y],
            two,
            [Vec::new(), Vec::new()]
        ));
        // Runs of one value each, and empty lists.
        let (mut x, mut y) = (vec![1u64 << 40, 3u64 << 40], Vec::new());
        assert!(!has_duplicate(
            [&mut x, &mut y],
            two,
            [Vec::new(), Vec::new()]
        ));
        let (mut x, mut y) = (Vec::new(), Vec::new());
        assert!(!has_duplicate(
            [&mut x, &mut y],
            two,
            [Vec::new(), Vec::new()]
        ));
    }
}
