//! The checks that need the whole input: no id twice (the id hashes sorted and
//! merged) and each `supersedes` and `depends_on` naming a record it may name.

use super::*;

/// Each worker's id hashes.
pub(super) type IdHashes = [Vec<u64>; 2];

/// The workers' entries, for the checks that link records: their ids, `supersedes` and
/// `depends_on` (in `names` and `deps`) and fact fields.
pub(super) struct Links<'e> {
    pub(super) entries: [&'e [Entry]; 2],
    pub(super) names: [&'e str; 2],
    pub(super) deps: [&'e [Name]; 2],
    pub(super) fields: [Fields<'e>; 2],
}

impl<'e> Links<'e> {
    /// The two workers' entries, with their fact fields (taken out of them before).
    pub(super) fn of([a, b]: [&'e Worker; 2], fields: [Fields<'e>; 2]) -> Links<'e> {
        Links {
            entries: [&a.entries, &b.entries],
            names: [&a.names, &b.names],
            deps: [&a.deps, &b.deps],
            fields,
        }
    }

    /// Every entry, with its worker.
    pub(super) fn all(&self) -> impl Iterator<Item = (usize, &'e Entry)> + '_ {
        let [a, b] = self.entries;
        a.iter().map(|e| (0, e)).chain(b.iter().map(|e| (1, e)))
    }

    /// The entries by id hash (distinct once the duplicate check has passed: a repeat
    /// only hides an entry from the link check, which then falls back or is moot).
    pub(super) fn index(&self) -> Entries<'e> {
        Entries {
            map: self.all().map(|(w, e)| (e.hash, (w, e))).collect(),
            names: self.names,
            deps: self.deps,
        }
    }

    /// The field of a fact entry of worker `w`.
    pub(super) fn field_of(&self, w: usize, e: &Entry) -> Option<&'e str> {
        self.fields.get(w)?.get(e.field)
    }

    /// No two records share an id (`hashes`, each worker's id hashes, are sorted, on a
    /// second thread too when `two_threads`, and let go), and each `supersedes` and
    /// `depends_on` names a record it may name.
    pub(super) fn check(
        &self,
        [mut a, mut b]: IdHashes,
        entries: &Entries<'e>,
        two_threads: bool,
    ) -> Result<(), Fallback> {
        // A shared hash may be a real duplicate: the exact loader decides.
        if has_duplicate([&mut a, &mut b], two_threads) {
            return Err(Fallback);
        }
        drop((a, b));
        for (w, e) in self.all() {
            if let Some(target) = e.supersedes {
                let target = entries.name(w, target).ok_or(Fallback)?;
                let ok = entries.get(target).is_some_and(|(tw, t)| {
                    t.seq < e.seq
                        && match (self.field_of(w, e), self.field_of(tw, t)) {
                            (Some(f), Some(g)) => f == g,
                            (None, None) => e.policy && t.policy,
                            _ => false,
                        }
                });
                if !ok {
                    return Err(Fallback);
                }
            }
            // A depends_on naming chatter (which this loader does not index) falls back too.
            if e.depends_on.0 == e.depends_on.1 {
                continue;
            }
            let id = entries.name(w, e.id).ok_or(Fallback)?;
            let deps = entries
                .deps
                .get(w)
                .and_then(|d| d.get(e.depends_on.0 as usize..e.depends_on.1 as usize));
            for &d in deps.ok_or(Fallback)? {
                let d = entries.name(w, d).ok_or(Fallback)?;
                if d == id || entries.get(d).is_none() {
                    return Err(Fallback);
                }
            }
        }
        Ok(())
    }
}

/// The two workers, out of `workers`, for [`check_workers`]; their `seq`s (read by now)
/// are let go first.
pub(super) fn for_checks(workers: &Mutex<Option<[Worker; 2]>>) -> Result<[Worker; 2], Fallback> {
    let mut both = workers
        .lock()
        .map_err(|_| Fallback)?
        .take()
        .ok_or(Fallback)?;
    for w in &mut both {
        w.seqs = Vec::new();
    }
    Ok(both)
}

/// [`Links::check`] of the two workers (their fact fields, taken out of them before, are
/// `fields`), which are then let go on this thread.
pub(super) fn check_workers(
    [mut a, mut b]: [Worker; 2],
    fields: [Fields<'_>; 2],
) -> Result<(), Fallback> {
    let hashes = [std::mem::take(&mut a.hashes), std::mem::take(&mut b.hashes)];
    let links = Links::of([&a, &b], fields);
    links.check(hashes, &links.index(), true)
}

/// The non-chatter records' entries by id hash, with the worker (0 or 1) each came from.
pub(super) struct Entries<'e> {
    pub(super) map: IdMap<u64, (usize, &'e Entry)>,
    /// Each worker's `names` and `deps`.
    pub(super) names: [&'e str; 2],
    pub(super) deps: [&'e [Name]; 2],
}

impl<'e> Entries<'e> {
    /// The entry whose id is `id`.
    pub(super) fn get(&self, id: &str) -> Option<(usize, &'e Entry)> {
        self.map
            .get(&id_hash(id.as_bytes()))
            .filter(|(w, e)| self.name(*w, e.id) == Some(id))
            .copied()
    }

    /// The id `name` of worker `w`.
    pub(super) fn name(&self, w: usize, name: Name) -> Option<&'e str> {
        name.of(self.names.get(w)?)
    }
}

/// True when some value occurs twice across the two lists (each sorted in place, the
/// second on a thread of its own when `two_threads` and one can be had).
pub(super) fn has_duplicate([a, b]: [&mut Vec<u64>; 2], two_threads: bool) -> bool {
    let both = two_threads
        && std::thread::scope(|s| {
            let other = std::thread::Builder::new().spawn_scoped(s, || b.sort_unstable());
            a.sort_unstable();
            other.is_ok_and(|h| h.join().is_ok())
        });
    if !both {
        a.sort_unstable();
        b.sort_unstable();
    }
    let repeat = |v: &[u64]| v.windows(2).any(|w| matches!(w, [p, q] if p == q));
    if repeat(a) || repeat(b) {
        return true;
    }
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// Whether the kept records (the `seq`s of their digests) are exactly the `head` lowest
/// and the `tail` highest `seq`s of all the records (`seqs`, distinct): the kept set of a
/// retention that keeps the ends of the `seq` order.
pub(super) fn kept_by_seq(
    (head, tail): (usize, usize),
    seqs: [&[u64]; 2],
    digests: [&[Digested]; 2],
) -> bool {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = seqs.iter().map(|s| s.len()).sum::<usize>();
    let mut kept: Vec<u64> = digests.iter().flat_map(|d| d.iter().map(|x| x.0)).collect();
    if head.saturating_add(tail) >= n {
        return kept.len() == n;
    }
    // The lowest `head` (a max-heap) and the highest `tail` (a min-heap), in one pass.
    let mut low: BinaryHeap<u64> = BinaryHeap::with_capacity(head + 1);
    let mut high: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(tail + 1);
    for &q in seqs.iter().flat_map(|s| s.iter()) {
        if head > 0 && (low.len() < head || low.peek().is_some_and(|&top| q < top)) {
            low.push(q);
            if low.len() > head {
                low.pop();
            }
        }
        if tail > 0 && (high.len() < tail || high.peek().is_some_and(|&Reverse(top)| q > top)) {
            high.push(Reverse(q));
            if high.len() > tail {
                high.pop();
            }
        }
    }
    let mut want = low.into_vec();
    want.extend(high.into_iter().map(|Reverse(q)| q));
    want.sort_unstable();
    kept.sort_unstable();
    want == kept
}
