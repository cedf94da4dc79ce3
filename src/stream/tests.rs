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

#[test]
fn the_kept_fingerprint_merges_the_two_runs_as_a_stable_sort_would() {
    let ids: Vec<String> = (0..8).map(|i| format!("k{i}")).collect();
    let plan = Plan::new(ids.iter().map(String::as_str), None, Limits::default());
    let d = |seq: u64, k: u32| (seq, k, [k as u8; 32]);
    let sorted = |a: &[Digested], b: &[Digested]| {
        let mut all = a.to_vec();
        all.extend_from_slice(b);
        all.sort_by_key(|x| x.0);
        fingerprint_of(all.iter().map(|&(_, k, dg)| (ids[k as usize].as_str(), dg)))
    };
    for (a, b) in [
        // Rising runs, interleaved as the workers take chunks in turn, with a tie.
        (
            vec![d(1, 0), d(2, 1), d(7, 4), d(9, 6)],
            vec![d(3, 2), d(4, 3), d(7, 5), d(10, 7)],
        ),
        (vec![], (0..8).map(|k| d(u64::from(k), k)).collect()),
        // Not rising: sorted.
        (
            vec![d(9, 0), d(2, 1), d(5, 2), d(1, 3)],
            vec![d(3, 4), d(8, 5), d(4, 6), d(6, 7)],
        ),
    ] {
        let want = sorted(&a, &b);
        assert_eq!(kept_fingerprint(&plan, [a, b]), Ok(want));
    }
    // Not one digest per kept id: no fingerprint.
    assert_eq!(
        kept_fingerprint(&plan, [vec![d(1, 0)], vec![]]),
        Err(Fallback)
    );
}
