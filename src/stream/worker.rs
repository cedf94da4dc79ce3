//! One loader thread: it reads the batches it is handed record by record, decides each by
//! the simple scan, a typed scan or the strict path, and gathers what the store and the
//! end-of-load checks need (id hashes, entries, digests, held records, each field's
//! newest fact line).

use super::*;

/// A record the loader validated, kept for the cross-record checks: ids, `seq`, kind,
/// and what it names. Lean on purpose: there is one per non-chatter record.
pub(super) struct Entry {
    pub(super) id: Name,
    /// `id_hash(id)`: distinct for distinct records once the duplicate check has passed.
    pub(super) hash: u64,
    pub(super) seq: u64,
    /// For a fact, its field's index in the worker's `facts` keys; `NOT_A_FACT` otherwise.
    pub(super) field: u32,
    pub(super) policy: bool,
    pub(super) supersedes: Option<Name>,
    /// The range of this record's `depends_on` in the worker's `deps`.
    pub(super) depends_on: (u32, u32),
    /// For `pin`, the line of a record not held (in the worker's `names`): parsed again if
    /// a held one depends on it.
    pub(super) raw: Option<Name>,
}

pub(super) const NOT_A_FACT: u32 = u32::MAX;

/// A record id in a worker's `names` (one string for all, instead of one allocation per
/// id): its offset and length.
#[derive(Clone, Copy)]
pub(super) struct Name {
    pub(super) at: u32,
    pub(super) len: u32,
}

impl Name {
    /// `s`, added to the end of `buf`.
    pub(super) fn push(buf: &mut String, s: &str) -> Result<Name, Fallback> {
        let at = u32::try_from(buf.len()).map_err(|_| Fallback)?;
        let len = u32::try_from(s.len()).map_err(|_| Fallback)?;
        at.checked_add(len).ok_or(Fallback)?;
        buf.push_str(s);
        Ok(Name { at, len })
    }

    /// This name in `buf`, the string it was pushed to.
    pub(super) fn of(self, buf: &str) -> Option<&str> {
        buf.get(self.at as usize..self.at as usize + self.len as usize)
    }
}

/// A worker's fact field names: one buffer, and where each field's name is in it.
#[derive(Clone, Copy)]
pub(super) struct Fields<'e> {
    pub(super) names: &'e str,
    pub(super) at: &'e [Name],
}

impl<'e> Fields<'e> {
    /// The name of field `i`.
    pub(super) fn get(&self, i: u32) -> Option<&'e str> {
        self.at.get(i as usize)?.of(self.names)
    }

    /// Every field's name, by index.
    pub(super) fn iter(&self) -> impl Iterator<Item = &'e str> + '_ {
        self.at
            .iter()
            .map(|at| at.of(self.names).unwrap_or_default())
    }
}

/// Per field: the newest fact, and the newest kept fact, this worker saw.
#[derive(Default)]
pub(super) struct FactSlots {
    pub(super) newest: Option<Slot>,
    pub(super) newest_kept: Option<Slot>,
    /// The `seq` and id of the last fact of the field this worker met (in input order).
    pub(super) last: Option<(u64, Name)>,
}

/// The newest (or newest kept) fact of a field: parsed, or the line of a fact the light
/// scan read (parsed at the end, only if it stays the newest and the gate reads its field).
pub(super) enum Slot {
    Parsed(Box<Record>),
    Line(u64, String),
}

impl Slot {
    /// Puts the line `text` of a fact of `seq` in `slot`, unless what is there is newer
    /// (the buffer of a line it replaces is reused).
    pub(super) fn hold(slot: &mut Option<Slot>, seq: u64, text: &str) {
        match slot {
            Some(Slot::Line(at, line)) if *at < seq => {
                *at = seq;
                line.clear();
                line.push_str(text);
            }
            Some(s) if s.seq() >= seq => {}
            _ => *slot = Some(Slot::Line(seq, text.to_string())),
        }
    }

    /// Puts `other` in `slot` if it is newer than what is there (the two workers' slots
    /// of one field, merged).
    pub(super) fn keep_newer(slot: &mut Option<Slot>, other: Option<Slot>) {
        if let Some(o) = other
            && slot.as_ref().is_none_or(|s| s.seq() < o.seq())
        {
            *slot = Some(o);
        }
    }

    pub(super) fn seq(&self) -> u64 {
        match self {
            Slot::Parsed(r) => r.seq,
            Slot::Line(seq, _) => *seq,
        }
    }

    /// The record (a line's with its digest when `digest`, as the strict path gives a kept
    /// record).
    pub(super) fn record(self, plan: &Plan<'_>, digest: bool) -> Result<Record, Fallback> {
        match self {
            Slot::Parsed(r) => Ok(*r),
            Slot::Line(seq, text) => {
                let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
                let r = parse_record_with(&Place::Line(0), &value, plan.limits, digest)
                    .map_err(|_| Fallback)?;
                if r.seq == seq && matches!(r.kind, Kind::Fact(_)) {
                    Ok(r)
                } else {
                    Err(Fallback)
                }
            }
        }
    }
}

/// First and last `seq` of a batch, and whether `seq` rose strictly within it.
pub(super) struct BatchSeqs {
    pub(super) batch: usize,
    pub(super) first: u64,
    pub(super) last: u64,
    pub(super) rising: bool,
}

/// What one thread gathered.
#[derive(Default)]
pub(super) struct Worker {
    pub(super) seqs: Vec<u64>,
    pub(super) hashes: Vec<u64>,
    pub(super) batches: Vec<BatchSeqs>,
    pub(super) entries: Vec<Entry>,
    /// The ids the entries name (and for `pin`, the lines of the records it does not
    /// hold), one after the other.
    pub(super) names: String,
    /// The `depends_on` ids of the entries, each entry's in one run.
    pub(super) deps: Vec<Name>,
    pub(super) held: Vec<Record>,
    /// The fact fields met, by the index entries use: their names one after the other
    /// in `field_names`, where `field_at` finds them (a lookup reads one small buffer,
    /// not a string of its own per field), and their slots.
    pub(super) field_names: String,
    pub(super) field_at: Vec<Name>,
    pub(super) slots: Vec<FactSlots>,
    /// The index of each field, and where its name is, by its name's hash (checked
    /// against the name: one lookup less on the way than through `field_at`).
    pub(super) field_index: IdMap<u64, (u32, Name)>,
    /// (seq, index into the plan's kept ids, sha256 of canonical JSON) per kept record.
    pub(super) digests: Vec<(u64, u32, [u8; 32])>,
    pub(super) named: Named,
    /// A buffer for canonical JSON.
    pub(super) scratch: Vec<u8>,
    /// With [`Plan::counting_tokens`]: each record's tokens, aligned with `seqs`.
    pub(super) tokens: Vec<u64>,
    /// With [`Plan::counting_tokens`]: (batch, lowest seq, highest seq) of each batch.
    pub(super) ranges: Vec<(usize, u64, u64)>,
    /// The kept id after the last one met: records and kept ids tend to come in the same
    /// order, so it is tried before the map.
    pub(super) next_kept: usize,
    /// Under [`Plan::kept_json`]: a record's id has a `[`, `]` or `"`.
    pub(super) bracketed_id: bool,
}

impl Worker {
    /// [`Worker::batch`] for a chunk of JSON Lines: the simple scan reads each line
    /// straight out of the chunk, and only the lines it does not decide are cut out
    /// (and handed on with what it made of them; blank lines are passed over, as a split
    /// on `\n` and a filter would).
    pub(super) fn lines(
        &mut self,
        plan: &Plan<'_>,
        index: usize,
        chunk: &str,
    ) -> Result<(), Fallback> {
        let start = self.seqs.len();
        let mut at = 0;
        while at < chunk.len() {
            let fast = match scan::simple_in(chunk, at) {
                Ok((line, end, next)) => {
                    let text = chunk.get(at..end).ok_or(Fallback)?;
                    match line {
                        scan::Line::Simple(s) => self.dispatch(plan, text, scan::Fast::Done(s))?,
                        scan::Line::Fact(f, ..) => self.fact(plan, text, f)?,
                    }
                    at = next;
                    continue;
                }
                Err(fast) => fast,
            };
            let rest = chunk.get(at..).ok_or(Fallback)?;
            let end = rest.find('\n').map_or(chunk.len(), |n| at + n);
            let text = chunk.get(at..end).ok_or(Fallback)?;
            if !json::is_blank(text.as_bytes()) {
                self.dispatch(plan, text, fast)?;
            }
            at = end + 1;
        }
        self.batch_done(plan, index, start);
        Ok(())
    }

    /// [`Worker::lines`] for a [`Batch::Span`] of a document's records (see
    /// [`walk_span`]).
    pub(super) fn span(
        &mut self,
        plan: &Plan<'_>,
        index: usize,
        text: &str,
        last: bool,
    ) -> Result<(), Fallback> {
        let start = self.seqs.len();
        walk_span(text, last, |item, simple| match simple {
            Some(s) => self.dispatch(plan, item, scan::Fast::Done(s)),
            None => self.record(plan, item),
        })?;
        self.batch_done(plan, index, start);
        Ok(())
    }

    /// Notes the `seq`s of the batch `index`, whose records start at `start` in `seqs`.
    pub(super) fn batch_done(&mut self, plan: &Plan<'_>, index: usize, start: usize) {
        if let (Some(&first), Some(&last)) = (self.seqs.get(start), self.seqs.last())
            && self.seqs.len() > start
        {
            let rising = self
                .seqs
                .get(start..)
                .is_some_and(|s| s.windows(2).all(|w| matches!(w, [a, b] if a < b)));
            self.batches.push(BatchSeqs {
                batch: index,
                first,
                last,
                rising,
            });
            if plan.count_tokens
                && let Some(s) = self.seqs.get(start..)
            {
                let (lo, hi) = s
                    .iter()
                    .fold((u64::MAX, 0), |(lo, hi), &q| (lo.min(q), hi.max(q)));
                self.ranges.push((index, lo, hi));
            }
        }
    }

    /// [`Plan::kept_index`], trying the kept id after the last one met first.
    pub(super) fn kept_index(&mut self, plan: &Plan<'_>, id: &str, h: u64) -> Option<u32> {
        if plan.kept_json && memchr::memchr3(b'[', b']', b'"', id.as_bytes()).is_some() {
            self.bracketed_id = true;
        }
        let k = if plan.kept_hashes.get(self.next_kept) == Some(&h)
            && plan.kept.get(self.next_kept) == Some(&id)
        {
            self.next_kept as u32
        } else {
            plan.kept_index(id, h)?
        };
        self.next_kept = k as usize + 1;
        Some(k)
    }

    /// With `keep`, the line `text` of a record not held, added to `names` for `pin` (see
    /// [`Entry::raw`]).
    pub(super) fn raw(&mut self, keep: bool, text: &str) -> Result<Option<Name>, Fallback> {
        keep.then(|| Name::push(&mut self.names, text)).transpose()
    }

    /// `id`, added to `names`.
    pub(super) fn name(&mut self, id: &str) -> Result<Name, Fallback> {
        Name::push(&mut self.names, id)
    }

    /// `ids`, added to `names` and, as one run, to `deps`: the run's range.
    pub(super) fn deps<'s>(
        &mut self,
        ids: impl IntoIterator<Item = &'s str>,
    ) -> Result<(u32, u32), Fallback> {
        let start = u32::try_from(self.deps.len()).map_err(|_| Fallback)?;
        for id in ids {
            let name = self.name(id)?;
            self.deps.push(name);
        }
        let end = u32::try_from(self.deps.len()).map_err(|_| Fallback)?;
        Ok((start, end))
    }

    /// The index of a fact field, added if new. Two fields whose names share a hash fall
    /// back.
    pub(super) fn field(&mut self, name: &str) -> Result<u32, Fallback> {
        let h = id_hash(name.as_bytes());
        if let Some(&(i, at)) = self.field_index.get(&h) {
            return if at.of(&self.field_names) == Some(name) {
                Ok(i)
            } else {
                Err(Fallback)
            };
        }
        let i = u32::try_from(self.field_at.len()).map_err(|_| Fallback)?;
        let at = Name::push(&mut self.field_names, name)?;
        self.field_at.push(at);
        self.slots.push(FactSlots::default());
        self.field_index.insert(h, (i, at));
        Ok(i)
    }

    /// Notes the fact `id` (`seq`) as the last of `field` this worker met, and tells
    /// whether its `supersedes` target is the fact met before it: an earlier fact of the
    /// same field, so the link holds and the end-of-load link check can pass it over.
    /// Facts usually supersede the previous fact of their field, which this worker met
    /// about half the time.
    pub(super) fn note_fact(
        &mut self,
        field: u32,
        seq: u64,
        id: Name,
        target: Option<&str>,
    ) -> bool {
        let Some(slots) = self.slots.get_mut(field as usize) else {
            return false;
        };
        let last = slots.last.replace((seq, id));
        let (Some((last_seq, name)), Some(target)) = (last, target) else {
            return false;
        };
        last_seq < seq && name.of(&self.names) == Some(target)
    }

    pub(super) fn record(&mut self, plan: &Plan<'_>, text: &str) -> Result<(), Fallback> {
        self.dispatch(plan, text, scan::simple(text))
    }

    /// [`Worker::record`], given what [`scan::simple`] made of `text`.
    pub(super) fn dispatch(
        &mut self,
        plan: &Plan<'_>,
        text: &str,
        fast: scan::Fast<'_>,
    ) -> Result<(), Fallback> {
        let c = match fast {
            scan::Fast::Done(s) if s.kind == "chatter" => s,
            scan::Fast::Done(s)
                if plan.light() && !matches!(s.kind, "policy" | "fact" | "effect") =>
            {
                return self.light_unevaluable(plan, text, s);
            }
            scan::Fast::Done(s) => return self.not_chatter(plan, text, Some(s.kind)),
            scan::Fast::NotChatter(kind) => return self.not_chatter(plan, text, Some(kind)),
            scan::Fast::Unknown => return self.not_chatter(plan, text, None),
        };
        let h = id_hash(c.id.as_bytes());
        self.seqs.push(c.seq);
        self.hashes.push(h);
        if plan.count_tokens {
            let tokens = match c.tokens {
                Some(t) => t,
                None if c.canonical(&mut self.scratch) => (self.scratch.len() as u64).div_ceil(4),
                None => {
                    let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
                    (json::canonical_len(&value) as u64).div_ceil(4)
                }
            };
            self.tokens.push(tokens);
        }
        if let Some(k) = self.kept_index(plan, c.id, h) {
            if c.canonical(&mut self.scratch) {
                self.note_digest(c.seq, k);
            } else {
                self.digest(text, c.seq, k)?;
            }
        }
        Ok(())
    }

    /// A record other than chatter (given its `kind` when the simple scan read it): by the
    /// light scan of its kind when that can decide it, else by the strict path. The rule
    /// scan stops as soon as it reads that the strict path will take the record.
    pub(super) fn not_chatter(
        &mut self,
        plan: &Plan<'_>,
        text: &str,
        kind: Option<&str>,
    ) -> Result<(), Fallback> {
        if !plan.light() {
            return self.strict(plan, text);
        }
        if matches!(kind, None | Some("fact"))
            && let Some(f) = scan::fact(text)
        {
            return self.light_fact(plan, text, f);
        }
        if matches!(kind, None | Some("policy" | "effect")) {
            let strict_anyway = |early: scan::Early<'_>| match early {
                scan::Early::Scope(scope) => plan.policy_in_scope(scope),
                scan::Early::Tool(tool) => plan.effect_in_scope(tool),
                scan::Early::Supersedes => true,
            };
            let depth = plan.limits.max_predicate_depth;
            if let Some(r) = scan::rule(text, depth, &strict_anyway) {
                return self.light_rule(plan, text, r);
            }
        }
        self.strict(plan, text)
    }

    /// A fact the simple scan read in the chunk: as [`Worker::not_chatter`] takes a fact
    /// that [`scan::fact`] reads.
    pub(super) fn fact(
        &mut self,
        plan: &Plan<'_>,
        text: &str,
        f: scan::FactLine<'_>,
    ) -> Result<(), Fallback> {
        if !plan.light() {
            return self.strict(plan, text);
        }
        self.light_fact(plan, text, f)
    }

    /// A record of a kind the gate cannot evaluate (a `summary`, ...) that the simple scan
    /// read: what the strict path makes of it, without building a `Value`.
    pub(super) fn light_unevaluable(
        &mut self,
        plan: &Plan<'_>,
        text: &str,
        s: scan::Simple<'_>,
    ) -> Result<(), Fallback> {
        if crate::record::misspelt_kind(s.kind).is_some() {
            // Held kept or not (`check` notes it): the strict path holds it.
            return self.strict(plan, text);
        }
        let h = id_hash(s.id.as_bytes());
        let kept = self.kept_index(plan, s.id, h);
        let tokens = match s.tokens {
            Some(t) if kept.is_none() => t,
            _ if !s.canonical(&mut self.scratch) => return self.strict(plan, text),
            Some(t) => t,
            None => (self.scratch.len() as u64).div_ceil(4),
        };
        self.seqs.push(s.seq);
        self.hashes.push(h);
        if let Some(k) = kept {
            self.note_digest(s.seq, k);
        } else {
            let text = match s.text() {
                Some(Ok(t)) => Some(t),
                Some(Err(())) => return Err(Fallback),
                None => None,
            };
            self.held.push(Record {
                id: s.id.to_string(),
                seq: s.seq,
                kind: Kind::Unevaluable(s.kind.to_string()),
                text,
                tokens,
                digest: None,
            });
        }
        let id = self.name(s.id)?;
        // A kept one is not held: `pin` parses it from its line if a held one depends on it.
        let raw = self.raw(plan.pin && kept.is_some(), text)?;
        self.entries.push(Entry {
            id,
            hash: h,
            seq: s.seq,
            field: NOT_A_FACT,
            policy: false,
            supersedes: None,
            depends_on: (0, 0),
            raw,
        });
        Ok(())
    }

    /// Notes the digest of the kept record of `seq` whose line is `text` (kept id `k`): the
    /// sha256 of its canonical JSON, as the strict path computes it.
    pub(super) fn digest(&mut self, text: &str, seq: u64, k: u32) -> Result<(), Fallback> {
        if !scan::canonical(text, &mut self.scratch) {
            return Err(Fallback);
        }
        self.note_digest(seq, k);
        Ok(())
    }

    /// Notes the digest of the kept record of `seq` (kept id `k`) whose canonical JSON is
    /// in `scratch`.
    pub(super) fn note_digest(&mut self, seq: u64, k: u32) {
        self.digests
            .push((seq, k, Sha256::digest(&self.scratch).into()));
    }

    /// A fact the light scan read: only its line is held, while it is the newest (or, if
    /// kept, the newest kept) of its field; a kept one is digested.
    pub(super) fn light_fact(
        &mut self,
        plan: &Plan<'_>,
        text: &str,
        f: scan::FactLine<'_>,
    ) -> Result<(), Fallback> {
        let h = id_hash(f.id.as_bytes());
        let kept = self.kept_index(plan, &f.id, h);
        // A kept fact that depends on others is held itself: the strict path builds it.
        if kept.is_some() && !f.depends_on.is_empty() {
            return self.strict(plan, text);
        }
        if let Some(k) = kept {
            self.digest(text, f.seq, k)?;
        }
        self.seqs.push(f.seq);
        self.hashes.push(h);
        let field = self.field(&f.field)?;
        let slots = self.slots.get_mut(field as usize).ok_or(Fallback)?;
        Slot::hold(&mut slots.newest, f.seq, text);
        if kept.is_some() {
            Slot::hold(&mut slots.newest_kept, f.seq, text);
        }
        let id = self.name(&f.id)?;
        let linked = self.note_fact(field, f.seq, id, f.supersedes.as_deref());
        let supersedes = match f.supersedes.as_deref() {
            Some(t) if !linked => Some(self.name(t)?),
            _ => None,
        };
        let depends_on = self.deps(f.depends_on.iter().map(|d| &**d))?;
        let raw = self.raw(plan.pin, text)?;
        self.entries.push(Entry {
            id,
            hash: h,
            seq: f.seq,
            field,
            policy: false,
            supersedes,
            depends_on,
            raw,
        });
        Ok(())
    }

    /// A policy or effect the light scan read: one this load does not hold (out of scope,
    /// superseding nothing, and if kept, depending on nothing) is only noted for the
    /// cross-record checks, and digested if kept; any other takes the strict path, which
    /// builds it.
    pub(super) fn light_rule(
        &mut self,
        plan: &Plan<'_>,
        text: &str,
        r: scan::RuleLine<'_>,
    ) -> Result<(), Fallback> {
        let h = id_hash(r.id.as_bytes());
        let kept = self.kept_index(plan, &r.id, h);
        let policy = match &r.rule {
            scan::Rule::Policy {
                scope,
                supersedes,
                depends_on,
            } => {
                // Held (so built by the strict path): in scope, superseding another, or
                // kept and depending on others.
                let derived_and_kept = kept.is_some() && !depends_on.is_empty();
                if supersedes.is_some() || plan.policy_in_scope(scope) || derived_and_kept {
                    return self.strict(plan, text);
                }
                self.named.scope(scope);
                true
            }
            scan::Rule::Effect { tool, matches } => {
                if plan.effect_in_scope(tool) {
                    return self.strict(plan, text);
                }
                // Its `match` tells its twin of another name (see `Named::always_with`):
                // hashed from its canonical JSON, written from its text.
                if !scan::canonical(matches, &mut self.scratch) {
                    return Err(Fallback);
                }
                let hash = crate::record::match_hash_of(&self.scratch);
                self.named.effect_hashed(tool, hash);
                false
            }
        };
        if let Some(k) = kept {
            self.digest(text, r.seq, k)?;
        }
        self.seqs.push(r.seq);
        self.hashes.push(h);
        let id = self.name(&r.id)?;
        let depends_on = match &r.rule {
            scan::Rule::Policy { depends_on, .. } => self.deps(depends_on.iter().map(|d| &**d))?,
            scan::Rule::Effect { .. } => (0, 0),
        };
        let raw = self.raw(plan.pin, text)?;
        self.entries.push(Entry {
            id,
            hash: h,
            seq: r.seq,
            field: NOT_A_FACT,
            policy,
            supersedes: None,
            depends_on,
            raw,
        });
        Ok(())
    }

    /// The strict path: exactly what the exact loader does with this record.
    pub(super) fn strict(&mut self, plan: &Plan<'_>, text: &str) -> Result<(), Fallback> {
        let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
        let kept = value
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| self.kept_index(plan, id, id_hash(id.as_bytes())));
        let record = parse_record_with(
            &Place::Line(0),
            &value,
            plan.limits,
            kept.is_some() || plan.count_tokens,
        )
        .map_err(|_| Fallback)?;
        let hash = id_hash(record.id.as_bytes());
        self.seqs.push(record.seq);
        self.hashes.push(hash);
        if plan.count_tokens {
            self.tokens.push(record.tokens);
        }
        if let Some(k) = kept {
            self.digests
                .push((record.seq, k, record.digest.ok_or(Fallback)?));
        }
        let is_kept = kept.is_some();
        let mut entry = Entry {
            id: self.name(&record.id)?,
            hash,
            seq: record.seq,
            field: NOT_A_FACT,
            policy: false,
            supersedes: record.supersedes().map(|t| self.name(t)).transpose()?,
            depends_on: self.deps(record.depends_on().iter().map(String::as_str))?,
            raw: None,
        };
        let derived_and_kept = is_kept && !record.depends_on().is_empty();
        let hold = match &record.kind {
            Kind::Chatter => return Ok(()),
            Kind::Policy(p) => {
                entry.policy = true;
                self.named.scope(&p.scope);
                plan.in_scope(&record) || p.supersedes.is_some() || derived_and_kept
            }
            Kind::Effect(e) => {
                self.named.effect(&e.tool, &e.matches);
                plan.in_scope(&record)
            }
            Kind::Unevaluable(k) => !is_kept || crate::record::misspelt_kind(k).is_some(),
            Kind::Fact(f) => {
                entry.field = self.field(&f.field)?;
                if self.note_fact(entry.field, record.seq, entry.id, f.supersedes.as_deref()) {
                    entry.supersedes = None;
                }
                let Some(slots) = self.slots.get_mut(entry.field as usize) else {
                    return Err(Fallback);
                };
                let to_kept = is_kept
                    && slots
                        .newest_kept
                        .as_ref()
                        .is_none_or(|r| r.seq() < record.seq);
                let to_newest = slots.newest.as_ref().is_none_or(|r| r.seq() < record.seq);
                if !derived_and_kept && !plan.pin {
                    // Held nowhere else: move the record into its slots, cloning at most once.
                    match (to_kept, to_newest) {
                        (true, true) => {
                            slots.newest_kept = Some(Slot::Parsed(Box::new(record.clone())));
                            slots.newest = Some(Slot::Parsed(Box::new(record)));
                        }
                        (true, false) => slots.newest_kept = Some(Slot::Parsed(Box::new(record))),
                        (false, true) => slots.newest = Some(Slot::Parsed(Box::new(record))),
                        (false, false) => {}
                    }
                    self.entries.push(entry);
                    return Ok(());
                }
                if to_kept {
                    slots.newest_kept = Some(Slot::Parsed(Box::new(record.clone())));
                }
                if to_newest {
                    slots.newest = Some(Slot::Parsed(Box::new(record.clone())));
                }
                derived_and_kept
            }
        };
        if hold {
            self.held.push(record);
        } else if plan.pin {
            entry.raw = self.raw(true, text)?;
        }
        self.entries.push(entry);
        Ok(())
    }
}
