//! The lean store, its totals and its compaction, from what the two workers gathered: the
//! held records in `seq` order, the newest facts parsed where the gate reads them, the
//! kept records' fingerprint, and what the store does not hold (how many records, the
//! tools they name, the kept ones).

use super::*;

/// What a worker gathered for the store: held records, fact slots, tool names.
pub(super) struct Held {
    pub(super) held: Vec<Record>,
    pub(super) slots: Vec<FactSlots>,
    pub(super) named: Named,
}

impl Held {
    pub(super) fn take(w: &mut Worker) -> Held {
        Held {
            held: std::mem::take(&mut w.held),
            slots: std::mem::take(&mut w.slots),
            named: std::mem::take(&mut w.named),
        }
    }
}

/// The store and compaction from what the workers gathered (`fields[w]` names the fact
/// fields of `parts[w].slots`); for `pin`, given the entries, with every record a held
/// record depends on, transitively.
pub(super) fn build(
    plan: &Plan<'_>,
    parts: &mut [Held; 2],
    fields: [Fields<'_>; 2],
    total: usize,
    entries: Option<&Entries<'_>>,
    fingerprint: impl FnOnce() -> Result<String, Fallback>,
) -> Result<(Store, Totals, Compaction), Fallback> {
    let [a, b] = parts;

    // The facts a view can read: per field the newest, and the newest kept. The gate
    // and precheck look facts up only by the fields that policies in scope of their
    // tools read (a policy held only as another's revoker is never evaluated), so for
    // them a fact's line is parsed only when its field meets one of those, spelt either
    // way (`View::newest_fact`: `customer` for `customer.tier`); pin reads all.
    let mut held = std::mem::take(&mut a.held);
    held.append(&mut b.held);
    let read: BTreeSet<String> = held
        .iter()
        .filter(|r| plan.in_scope(r))
        .filter_map(|r| match &r.kind {
            Kind::Policy(p) => Some(p.predicate.fields()),
            _ => None,
        })
        .flatten()
        .map(str::to_string)
        .collect();
    let [a_fields, b_fields] = fields;
    let mut merged: IdMap<&str, FactSlots> =
        a_fields.iter().zip(std::mem::take(&mut a.slots)).collect();
    for (field, slots) in b_fields.iter().zip(std::mem::take(&mut b.slots)) {
        let mine = merged.entry(field).or_default();
        Slot::keep_newer(&mut mine.newest, slots.newest);
        Slot::keep_newer(&mut mine.newest_kept, slots.newest_kept);
    }
    for (field, slots) in merged {
        let FactSlots {
            newest,
            newest_kept,
            ..
        } = slots;
        // A line is parsed only when its field is read; a fact that is both the newest
        // and the newest kept, once (with its digest, as a kept record).
        let unread = |s: &Option<Slot>| {
            matches!(s, Some(Slot::Line(..))) && !plan.pin && !meets_read(&read, field)
        };
        let same = matches!((&newest, &newest_kept), (Some(n), Some(k)) if n.seq() == k.seq());
        if !same && !unread(&newest) {
            held.extend(newest.map(|s| s.record(plan, false)).transpose()?);
        }
        if !unread(&newest_kept) {
            held.extend(newest_kept.map(|s| s.record(plan, true)).transpose()?);
        }
    }
    held.sort_by_key(|r| r.seq);
    held.dedup_by_key(|r| r.seq);
    if let Some(entries) = entries {
        hold_inputs(plan, entries, &mut held)?;
    }

    let mut named = std::mem::take(&mut a.named);
    named.append(std::mem::take(&mut b.named));
    let store = Store::checked_elsewhere(held);
    let mut held_kept: Vec<u64> = Vec::new();
    let mask: Vec<bool> = store
        .records()
        .iter()
        .map(|r| {
            let h = id_hash(r.id.as_bytes());
            let kept = plan.kept_index(&r.id, h).is_some();
            if kept {
                held_kept.push(h);
            }
            kept
        })
        .collect();
    held_kept.sort_unstable();
    let not_held: Vec<u64> = plan
        .kept_hashes
        .iter()
        .copied()
        .filter(|h| held_kept.binary_search(h).is_err())
        .collect();
    let totals = Totals::partial(total, named, not_held);
    let compaction = Compaction::with_fingerprint(&store, plan.retention, mask, fingerprint()?);
    Ok((store, totals, compaction))
}

/// The fingerprint of the kept records (see [`fingerprint_of`]) from the two workers'
/// digests; [`Fallback`] unless every kept id named a record (each digested once).
pub(super) fn kept_fingerprint(
    plan: &Plan<'_>,
    [a, b]: [Vec<Digested>; 2],
) -> Result<String, Fallback> {
    if a.len() + b.len() != plan.kept.len() {
        return Err(Fallback);
    }
    let named = |&(_, k, d): &Digested| Some((plan.kept.get(k as usize).copied()?, d));
    let rising = |v: &[Digested]| v.windows(2).all(|w| matches!(w, [x, y] if x.0 <= y.0));
    if !rising(&a) || !rising(&b) {
        let mut all = a;
        all.extend(b);
        all.sort_by_key(|d| d.0);
        return Ok(fingerprint_of(all.iter().filter_map(named)));
    }
    // Each worker's are in `seq` order when the input's `seq`s rise: merged as a stable
    // sort of the two runs one after the other would order them (on a tie, `a`'s first).
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    let merged = std::iter::from_fn(|| match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if y.0 < x.0 => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    });
    Ok(fingerprint_of(merged.filter_map(named)))
}

/// A kept record's `seq`, index among the plan's kept ids, and digest.
pub(super) type Digested = (u64, u32, [u8; 32]);

/// Adds to `held` (sorted by seq, no repeats) every record a held record depends on,
/// transitively, parsing again the lines `pin` kept for that. Every `depends_on` target
/// is among `entries` (checked before).
pub(super) fn hold_inputs(
    plan: &Plan<'_>,
    entries: &Entries<'_>,
    held: &mut Vec<Record>,
) -> Result<(), Fallback> {
    let mut have: std::collections::HashSet<u64, BuildHasherDefault<IdHasher>> =
        held.iter().map(|r| r.seq).collect();
    let mut queue: Vec<Box<str>> = held
        .iter()
        .flat_map(|r| r.depends_on().iter().map(|d| d.as_str().into()))
        .collect();
    let mut added = false;
    while let Some(id) = queue.pop() {
        let (w, entry) = entries.get(&id).ok_or(Fallback)?;
        if have.contains(&entry.seq) {
            continue;
        }
        let raw = entry.raw.and_then(|r| entries.name(w, r)).ok_or(Fallback)?;
        let value = json::parse(raw.as_bytes()).map_err(|_| Fallback)?;
        let record = parse_record_with(&Place::Line(0), &value, plan.limits, plan.count_tokens)
            .map_err(|_| Fallback)?;
        if record.seq != entry.seq {
            return Err(Fallback);
        }
        queue.extend(record.depends_on().iter().map(|d| d.as_str().into()));
        have.insert(record.seq);
        held.push(record);
        added = true;
    }
    if added {
        held.sort_by_key(|r| r.seq);
    }
    Ok(())
}

/// True when a fact of `field` may state a field in `read` or a part of one (as
/// [`crate::record::Store::fact_fields_meeting`] pairs them): `field` itself, one above
/// it or one below it.
fn meets_read(read: &BTreeSet<String>, field: &str) -> bool {
    let above = field
        .match_indices('.')
        .filter_map(|(at, _)| field.get(..at))
        .chain(std::iter::once(field))
        .any(|f| read.contains(f));
    let start = format!("{field}.");
    above
        || read
            .range(start.clone()..)
            .next()
            .is_some_and(|r| r.starts_with(&start))
}
