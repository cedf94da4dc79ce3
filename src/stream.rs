//! The lean loader: a record store read in one streaming pass on two threads, holding
//! only what one `check` can consult.
//!
//! The exact loader ([`crate::input::load`]) builds a `Value` and a [`Record`] for every
//! record and keeps them all. For a million records that is seconds and gigabytes. This
//! loader is given the compaction (the kept ids) and the tools up front, so it can:
//!
//! - read chatter with the light scan of [`crate::scan`] (no `Value`, no allocation), and
//!   parse everything else with the strict path, on two threads over chunks of lines;
//! - digest (sha256 of canonical JSON) only the kept records;
//! - hold per record only a 64-bit id hash and the `seq` (to refuse duplicates), and hold
//!   as a [`Record`] only what the gate can read for these tools under this compaction
//!   (see `Store::lean`): out-of-scope policies and effects, superseded facts and chatter
//!   are validated, counted and let go.
//!
//! It never reports an error itself. Anything it cannot prove fine (a line the strict path
//! refuses, two ids with one hash, a `depends_on` naming a record it let go, a kept id it
//! did not see, bytes that are not UTF-8, ...) is [`Fallback`]: the caller then runs the
//! exact loader, which gives the same report, or the same error, as it always did. This
//! module reads bytes handed to it; it never touches files.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::compaction::{Compaction, fingerprint_of};
use crate::json;
use crate::record::{Kind, Limits, Place, Record, Store, glob_match, parse_record_with};
use crate::scan;

/// The lean loader cannot decide on its own: run the exact loader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback;

/// A 64-bit hash of a record id (FxHash-style words, then a murmur3 finalizer). Equal
/// hashes are never taken for equal ids without a check: two records whose ids share a
/// hash make the load fall back.
pub fn id_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(K);
    }
    let mut b = [0u8; 8];
    let tail = words.remainder();
    if let Some(dst) = b.get_mut(..tail.len()) {
        dst.copy_from_slice(tail);
    }
    h = (h.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(K);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A `Hasher` over [`id_hash`], for maps keyed by ids.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 ^= id_hash(bytes);
    }

    fn write_u64(&mut self, n: u64) {
        // Keys that are already id hashes pass through.
        self.0 ^= n;
    }
}

type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Bits in the kept-id prefilter: most records are not kept, and most of those are
/// turned away by one bit that sits in cache.
const FILTER_BITS: usize = 1 << 21;

/// What the load is for: the kept ids (retention `given`) and the tools a gate will judge.
pub struct Plan<'a> {
    /// Each distinct kept id's hash, mapped to its index in `kept`.
    index: IdMap<u64, u32>,
    /// One bit per `id_hash % FILTER_BITS` of the kept ids.
    filter: Vec<u64>,
    /// The distinct kept ids, in first-seen order.
    kept: Vec<&'a str>,
    /// The hash of each of `kept`.
    kept_hashes: Vec<u64>,
    /// Two distinct kept ids share a hash: the load falls back.
    clash: bool,
    /// Tools whose in-scope policies and effects must be held; `None`: every policy and
    /// every effect (the tools are known only once the whole store is read).
    tools: Option<Vec<String>>,
    /// For `pin`: scope by [`crate::record::Policy::may_scope`] and effect globs, and hold
    /// every record a held one depends on, transitively.
    pin: bool,
    /// For `pin --budget`: gather every record's tokens (see [`Budget`]), and digest
    /// every record parsed by the strict path (so each held record has its digest).
    count_tokens: bool,
    /// Limits for the strict path.
    limits: Limits,
    /// The file name, for the strict path's messages (never shown: errors fall back).
    origin: String,
}

impl<'a> Plan<'a> {
    /// A plan for kept ids `kept` (repeats are harmless) and the given tools.
    pub fn new(
        origin: &str,
        kept: impl IntoIterator<Item = &'a str>,
        tools: Option<Vec<String>>,
        limits: Limits,
    ) -> Plan<'a> {
        let mut plan = Plan {
            index: IdMap::default(),
            filter: vec![0; FILTER_BITS / 64],
            kept: Vec::new(),
            kept_hashes: Vec::new(),
            clash: false,
            tools,
            pin: false,
            count_tokens: false,
            limits,
            origin: origin.to_string(),
        };
        for id in kept {
            let h = id_hash(id.as_bytes());
            match plan.index.get(&h).and_then(|&k| plan.kept.get(k as usize)) {
                Some(other) if *other == id => {}
                Some(_) => plan.clash = true,
                None => {
                    plan.index.insert(h, plan.kept.len() as u32);
                    plan.kept.push(id);
                    plan.kept_hashes.push(h);
                    let bit = (h as usize) % FILTER_BITS;
                    if let Some(w) = plan.filter.get_mut(bit / 64) {
                        *w |= 1 << (bit % 64);
                    }
                }
            }
        }
        plan
    }

    /// The plan for `pin`: tool names may be globs, a policy is held when it may scope one
    /// of them, an effect when one covers its tool, and every record a held record
    /// depends on (transitively) is held too.
    pub fn for_pin(mut self) -> Plan<'a> {
        self.pin = true;
        self
    }

    /// Also gather every record's tokens, for `pin --budget` (see [`Budget`]), and give
    /// every held record its digest.
    pub fn counting_tokens(mut self) -> Plan<'a> {
        self.count_tokens = true;
        self
    }

    /// The index of `id` (whose hash is `h`) among the kept ids.
    fn kept_index(&self, id: &str, h: u64) -> Option<u32> {
        let bit = (h as usize) % FILTER_BITS;
        if self
            .filter
            .get(bit / 64)
            .is_none_or(|w| w & (1 << (bit % 64)) == 0)
        {
            return None;
        }
        let k = *self.index.get(&h)?;
        (self.kept.get(k as usize) == Some(&id)).then_some(k)
    }

    fn in_scope(&self, record: &Record) -> bool {
        let Some(tools) = &self.tools else {
            return matches!(record.kind, Kind::Policy(_) | Kind::Effect(_));
        };
        match (&record.kind, self.pin) {
            (Kind::Policy(p), false) => tools.iter().any(|t| p.scopes(t)),
            (Kind::Policy(p), true) => tools.iter().any(|t| p.may_scope(t)),
            (Kind::Effect(e), false) => tools.contains(&e.tool),
            (Kind::Effect(e), true) => tools.iter().any(|t| glob_match(t, &e.tool)),
            _ => false,
        }
    }
}

/// A record the loader validated, kept for the cross-record checks: ids, `seq`, kind,
/// and what it names. Lean on purpose: there is one per non-chatter record.
struct Entry {
    id: Name,
    /// `id_hash(id)`: distinct for distinct records once the duplicate check has passed.
    hash: u64,
    seq: u64,
    /// For a fact, its field's index in the worker's `facts` keys; `NOT_A_FACT` otherwise.
    field: u32,
    policy: bool,
    supersedes: Option<Name>,
    /// The range of this record's `depends_on` in the worker's `deps`.
    depends_on: (u32, u32),
    /// For `pin`, the line of a record not held: parsed again if a held one depends on it.
    raw: Option<Box<str>>,
}

const NOT_A_FACT: u32 = u32::MAX;

/// A record id in a worker's `names` (one string for all, instead of one allocation per
/// id): its offset and length.
#[derive(Clone, Copy)]
struct Name {
    at: u32,
    len: u32,
}

/// Per field: the newest fact, and the newest kept fact, this worker saw.
#[derive(Default)]
struct FactSlots {
    newest: Option<Slot>,
    newest_kept: Option<Record>,
}

/// The newest fact of a field: parsed, or the line of a fact the light scan read (parsed
/// at the end, only if it stays the newest).
enum Slot {
    Parsed(Box<Record>),
    Line(u64, String),
}

impl Slot {
    fn seq(&self) -> u64 {
        match self {
            Slot::Parsed(r) => r.seq,
            Slot::Line(seq, _) => *seq,
        }
    }

    fn record(self, plan: &Plan<'_>) -> Result<Record, Fallback> {
        match self {
            Slot::Parsed(r) => Ok(*r),
            Slot::Line(seq, text) => {
                let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
                let r =
                    parse_record_with(&plan.origin, &Place::Line(0), &value, plan.limits, false)
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
struct BatchSeqs {
    batch: usize,
    first: u64,
    last: u64,
    rising: bool,
}

/// What one thread gathered.
#[derive(Default)]
struct Worker {
    seqs: Vec<u64>,
    hashes: Vec<u64>,
    batches: Vec<BatchSeqs>,
    entries: Vec<Entry>,
    /// The ids the entries name, one after the other.
    names: String,
    /// The `depends_on` ids of the entries, each entry's in one run.
    deps: Vec<Name>,
    held: Vec<Record>,
    /// The fact fields met, by the index entries use, and their slots.
    fields: Vec<String>,
    slots: Vec<FactSlots>,
    field_index: IdMap<String, u32>,
    /// (seq, index into the plan's kept ids, sha256 of canonical JSON) per kept record.
    digests: Vec<(u64, u32, [u8; 32])>,
    named: BTreeSet<String>,
    /// A buffer for canonical JSON.
    scratch: Vec<u8>,
    /// With [`Plan::counting_tokens`]: each record's tokens, aligned with `seqs`.
    tokens: Vec<u64>,
    /// With [`Plan::counting_tokens`]: (batch, lowest seq, highest seq) of each batch.
    ranges: Vec<(usize, u64, u64)>,
    /// The kept id after the last one met: records and kept ids tend to come in the same
    /// order, so it is tried before the filter and the map.
    next_kept: usize,
}

impl Worker {
    /// [`Worker::batch`] for a chunk of JSON Lines: the simple scan reads each line
    /// straight out of the chunk, and only the lines it does not decide are cut out
    /// first (blank lines are passed over, as a split on `\n` and a filter would).
    fn lines(&mut self, plan: &Plan<'_>, index: usize, chunk: &str) -> Result<(), Fallback> {
        let start = self.seqs.len();
        let mut at = 0;
        while at < chunk.len() {
            if let Some((s, end, next)) = scan::simple_in(chunk, at) {
                let text = chunk.get(at..end).ok_or(Fallback)?;
                self.dispatch(plan, text, scan::Fast::Done(s))?;
                at = next;
                continue;
            }
            let rest = chunk.get(at..).ok_or(Fallback)?;
            let end = rest.find('\n').map_or(chunk.len(), |n| at + n);
            let text = chunk.get(at..end).ok_or(Fallback)?;
            if !text.bytes().all(|b| b.is_ascii_whitespace()) {
                self.record(plan, text)?;
            }
            at = end + 1;
        }
        self.batch_done(plan, index, start);
        Ok(())
    }

    /// [`Worker::lines`] for a [`Batch::Span`] of a document's records (see
    /// [`walk_span`]).
    fn span(
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
    fn batch_done(&mut self, plan: &Plan<'_>, index: usize, start: usize) {
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
    fn kept_index(&mut self, plan: &Plan<'_>, id: &str, h: u64) -> Option<u32> {
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

    /// `id`, added to `names`.
    fn name(&mut self, id: &str) -> Result<Name, Fallback> {
        let at = u32::try_from(self.names.len()).map_err(|_| Fallback)?;
        let len = u32::try_from(id.len()).map_err(|_| Fallback)?;
        at.checked_add(len).ok_or(Fallback)?;
        self.names.push_str(id);
        Ok(Name { at, len })
    }

    /// `ids`, added to `names` and, as one run, to `deps`: the run's range.
    fn deps<'s>(&mut self, ids: impl IntoIterator<Item = &'s str>) -> Result<(u32, u32), Fallback> {
        let start = u32::try_from(self.deps.len()).map_err(|_| Fallback)?;
        for id in ids {
            let name = self.name(id)?;
            self.deps.push(name);
        }
        let end = u32::try_from(self.deps.len()).map_err(|_| Fallback)?;
        Ok((start, end))
    }

    /// The index of a fact field, added if new.
    fn field(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.field_index.get(name) {
            return i;
        }
        let i = self.fields.len() as u32;
        self.fields.push(name.to_string());
        self.slots.push(FactSlots::default());
        self.field_index.insert(name.to_string(), i);
        i
    }

    fn record(&mut self, plan: &Plan<'_>, text: &str) -> Result<(), Fallback> {
        self.dispatch(plan, text, scan::simple(text))
    }

    /// [`Worker::record`], given what [`scan::simple`] made of `text`.
    fn dispatch(
        &mut self,
        plan: &Plan<'_>,
        text: &str,
        fast: scan::Fast<'_>,
    ) -> Result<(), Fallback> {
        // The light paths for records other than chatter hold less than `pin` reads.
        let light = !plan.pin && !plan.count_tokens;
        let chatter = match fast {
            scan::Fast::Done(s) if s.kind == "chatter" => s.chatter(),
            scan::Fast::Done(s) if light && !matches!(s.kind, "policy" | "fact" | "effect") => {
                return self.light_unevaluable(plan, text, s);
            }
            scan::Fast::Done(_) | scan::Fast::NotChatter => None,
            scan::Fast::Unknown => scan::chatter_by_serde(text),
        };
        let Some(c) = chatter else {
            if light && let Some(f) = scan::fact(text) {
                return self.light_fact(plan, text, f);
            }
            return self.strict(plan, text);
        };
        let h = id_hash(c.id.as_bytes());
        self.seqs.push(c.seq);
        self.hashes.push(h);
        if plan.count_tokens {
            let tokens = match c.tokens() {
                Some(t) => t,
                None if c.canonical(&mut self.scratch) => (self.scratch.len() as u64).div_ceil(4),
                None => {
                    let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
                    (json::canonical_len(&value) as u64).div_ceil(4)
                }
            };
            self.tokens.push(tokens);
        }
        if let Some(k) = self.kept_index(plan, &c.id, h) {
            let digest: [u8; 32] = if c.canonical(&mut self.scratch) {
                Sha256::digest(&self.scratch).into()
            } else {
                let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
                Sha256::digest(json::canonical(&value).as_bytes()).into()
            };
            self.digests.push((c.seq, k, digest));
        }
        Ok(())
    }

    /// A record of a kind the gate cannot evaluate (a `summary`, ...) that the simple scan
    /// read: what the strict path makes of it, without building a `Value`.
    fn light_unevaluable(
        &mut self,
        plan: &Plan<'_>,
        text: &str,
        s: scan::Simple<'_>,
    ) -> Result<(), Fallback> {
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
            self.digests
                .push((s.seq, k, Sha256::digest(&self.scratch).into()));
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
                digest: [0; 32],
            });
        }
        let id = self.name(s.id)?;
        self.entries.push(Entry {
            id,
            hash: h,
            seq: s.seq,
            field: NOT_A_FACT,
            policy: false,
            supersedes: None,
            depends_on: (0, 0),
            raw: None,
        });
        Ok(())
    }

    /// A fact the light scan read: unless it is kept (then the strict path digests it),
    /// only its line is held, while it is the newest of its field.
    fn light_fact(
        &mut self,
        plan: &Plan<'_>,
        text: &str,
        f: scan::FactLine<'_>,
    ) -> Result<(), Fallback> {
        let h = id_hash(f.id.as_bytes());
        if self.kept_index(plan, &f.id, h).is_some() {
            return self.strict(plan, text);
        }
        self.seqs.push(f.seq);
        self.hashes.push(h);
        let field = self.field(&f.field);
        let slots = self.slots.get_mut(field as usize).ok_or(Fallback)?;
        match &mut slots.newest {
            // The buffer of the line it replaces is reused.
            Some(Slot::Line(seq, line)) if *seq < f.seq => {
                *seq = f.seq;
                line.clear();
                line.push_str(text);
            }
            Some(r) if r.seq() >= f.seq => {}
            _ => slots.newest = Some(Slot::Line(f.seq, text.to_string())),
        }
        let id = self.name(&f.id)?;
        let supersedes = f.supersedes.as_deref().map(|t| self.name(t)).transpose()?;
        let depends_on = self.deps(f.depends_on.iter().map(|d| &**d))?;
        self.entries.push(Entry {
            id,
            hash: h,
            seq: f.seq,
            field,
            policy: false,
            supersedes,
            depends_on,
            raw: None,
        });
        Ok(())
    }

    /// The strict path: exactly what the exact loader does with this record.
    fn strict(&mut self, plan: &Plan<'_>, text: &str) -> Result<(), Fallback> {
        let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
        let kept = value
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| self.kept_index(plan, id, id_hash(id.as_bytes())));
        let record = parse_record_with(
            &plan.origin,
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
            self.digests.push((record.seq, k, record.digest));
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
                self.named
                    .extend(p.scope.iter().filter(|s| !s.contains('*')).cloned());
                plan.in_scope(&record) || p.supersedes.is_some() || derived_and_kept
            }
            Kind::Effect(e) => {
                self.named.insert(e.tool.clone());
                plan.in_scope(&record)
            }
            Kind::Unevaluable(_) => !is_kept,
            Kind::Fact(f) => {
                entry.field = self.field(&f.field);
                let Some(slots) = self.slots.get_mut(entry.field as usize) else {
                    return Err(Fallback);
                };
                let to_kept = is_kept
                    && slots
                        .newest_kept
                        .as_ref()
                        .is_none_or(|r| r.seq < record.seq);
                let to_newest = slots.newest.as_ref().is_none_or(|r| r.seq() < record.seq);
                if !derived_and_kept && !plan.pin {
                    // Held nowhere else: move the record into its slots, cloning at most once.
                    match (to_kept, to_newest) {
                        (true, true) => {
                            slots.newest_kept = Some(record.clone());
                            slots.newest = Some(Slot::Parsed(Box::new(record)));
                        }
                        (true, false) => slots.newest_kept = Some(record),
                        (false, true) => slots.newest = Some(Slot::Parsed(Box::new(record))),
                        (false, false) => {}
                    }
                    self.entries.push(entry);
                    return Ok(());
                }
                if to_kept {
                    slots.newest_kept = Some(record.clone());
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
            entry.raw = Some(text.into());
        }
        self.entries.push(entry);
        Ok(())
    }
}

/// Chunk buffers the workers are done with, for the reader to fill again: a fresh
/// megabyte per chunk costs page faults to map it and a system call to unmap it.
static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// An empty buffer to read a chunk into: a spare one when there is one.
pub fn spare_buffer() -> Vec<u8> {
    SPARE
        .lock()
        .ok()
        .and_then(|mut spare| spare.pop())
        .unwrap_or_default()
}

/// Gives a chunk buffer back (a few are kept; the rest are freed).
pub(crate) fn give_back(mut buf: Vec<u8>) {
    buf.clear();
    if let Ok(mut spare) = SPARE.lock()
        && spare.len() < 4
    {
        spare.push(buf);
    }
}

/// One unit of work: a chunk of JSON Lines, or a run of a document's records.
pub enum Batch<'a> {
    /// Whole lines (the chunk ends at a line end, or at the end of the input).
    Lines(Vec<u8>),
    /// Elements of a document's `records`, as [`crate::document::spans`] cuts them: the
    /// text starts at a record and ends after a `,` (and whitespace), or, when the flag
    /// says it is the last, after a record (and whitespace) right before the `]`.
    Span(std::borrow::Cow<'a, [u8]>, bool),
}

/// For `pin --budget` ([`Plan::counting_tokens`]): every record's `(seq, tokens)`, and
/// each batch's `seq` range, so that [`digests`] reads again only the batches it needs.
pub struct Budget {
    /// `(seq, tokens)` of every record of the input, in `seq` order.
    pub tokens: Vec<(u64, u64)>,
    /// (batch, lowest seq, highest seq) per batch.
    ranges: Vec<(usize, u64, u64)>,
}

/// Loads records from batches handed out by `source` (pulled from two threads), for
/// `plan`. Returns the lean store and its compaction (and with
/// [`Plan::counting_tokens`], the [`Budget`]), or [`Fallback`].
pub fn load<'a, I>(
    plan: &Plan<'_>,
    source: I,
) -> Result<(Store, Compaction, Option<Budget>), Fallback>
where
    I: Iterator<Item = Result<Batch<'a>, Fallback>> + Send,
{
    if plan.clash {
        return Err(Fallback);
    }
    let source = Mutex::new(source.enumerate());
    let failed = AtomicBool::new(false);
    let work = || -> Result<Worker, Fallback> {
        let mut worker = Worker::default();
        loop {
            if failed.load(Ordering::Relaxed) {
                return Err(Fallback);
            }
            let next = source.lock().map_err(|_| Fallback)?.next();
            let Some((index, batch)) = next else {
                return Ok(worker);
            };
            let result = batch.and_then(|b| match b {
                Batch::Lines(bytes) => {
                    let text = simdutf8::basic::from_utf8(&bytes).map_err(|_| Fallback)?;
                    let done = worker.lines(plan, index, text);
                    give_back(bytes);
                    done
                }
                Batch::Span(bytes, last) => {
                    let text = simdutf8::basic::from_utf8(&bytes).map_err(|_| Fallback)?;
                    let done = worker.span(plan, index, text, last);
                    if let std::borrow::Cow::Owned(bytes) = bytes {
                        give_back(bytes);
                    }
                    done
                }
            });
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
                return Err(Fallback);
            }
        }
    };
    let (a, b) = std::thread::scope(|s| {
        // No second thread (a resource limit): this one does all the batches.
        match std::thread::Builder::new().spawn_scoped(s, work) {
            Ok(other) => {
                let mine = work();
                (other.join().unwrap_or(Err(Fallback)), mine)
            }
            Err(_) => (Ok(Worker::default()), work()),
        }
    });
    finish(plan, a?, b?)
}

/// Checks what needs the whole input (duplicates, `supersedes`, `depends_on`, kept ids)
/// and builds the store and compaction.
fn finish(
    plan: &Plan<'_>,
    mut a: Worker,
    mut b: Worker,
) -> Result<(Store, Compaction, Option<Budget>), Fallback> {
    let budget = plan.count_tokens.then(|| {
        let mut tokens: Vec<(u64, u64)> = a
            .seqs
            .iter()
            .copied()
            .zip(a.tokens.iter().copied())
            .chain(b.seqs.iter().copied().zip(b.tokens.iter().copied()))
            .collect();
        tokens.sort_unstable_by_key(|t| t.0);
        let mut ranges = std::mem::take(&mut a.ranges);
        ranges.append(&mut b.ranges);
        Budget { tokens, ranges }
    });
    if budget
        .as_ref()
        .is_some_and(|t| t.tokens.len() != a.seqs.len() + b.seqs.len())
    {
        return Err(Fallback);
    }
    // Duplicate seqs: none when seq rises strictly through the batches in input order.
    let mut batches: Vec<&BatchSeqs> = a.batches.iter().chain(&b.batches).collect();
    batches.sort_by_key(|s| s.batch);
    let rising = batches.iter().all(|s| s.rising)
        && batches
            .windows(2)
            .all(|w| matches!(w, [x, y] if x.last < y.first));
    if !rising && has_duplicate(&mut a.seqs, &mut b.seqs) {
        return Err(Fallback);
    }
    // Duplicate ids: a shared hash may be a real duplicate; the exact loader decides.
    if has_duplicate(&mut a.hashes, &mut b.hashes) {
        return Err(Fallback);
    }
    let total = a.hashes.len() + b.hashes.len();
    drop((a.seqs, a.hashes, b.seqs, b.hashes));

    // supersedes and depends_on, checked against every non-chatter record.
    let field_of = |worker: usize, e: &Entry| -> Option<&str> {
        let fields = if worker == 0 { &a.fields } else { &b.fields };
        fields.get(e.field as usize).map(String::as_str)
    };
    let all = || {
        a.entries
            .iter()
            .map(|e| (0, e))
            .chain(b.entries.iter().map(|e| (1, e)))
    };
    // Keyed by the id hashes, which are distinct (checked above): no id is hashed again.
    let entries = Entries {
        map: all().map(|(w, e)| (e.hash, (w, e))).collect(),
        names: [&a.names, &b.names],
        deps: [&a.deps, &b.deps],
    };
    for (w, e) in all() {
        if let Some(target) = e.supersedes {
            let target = entries.name(w, target).ok_or(Fallback)?;
            let ok = entries.get(target).is_some_and(|(tw, t)| {
                t.seq < e.seq
                    && match (field_of(w, e), field_of(tw, t)) {
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

    // Every kept id names a record: each was digested exactly once.
    let mut digests: Vec<(u64, u32, [u8; 32])> = a.digests;
    digests.append(&mut b.digests);
    if digests.len() != plan.kept.len() {
        return Err(Fallback);
    }
    digests.sort_unstable_by_key(|d| d.0);

    // The facts a view can read: per field the newest, and the newest kept.
    let mut held = a.held;
    held.append(&mut b.held);
    let mut fields: IdMap<String, FactSlots> = std::mem::take(&mut a.fields)
        .into_iter()
        .zip(std::mem::take(&mut a.slots))
        .collect();
    for (field, slots) in std::mem::take(&mut b.fields)
        .into_iter()
        .zip(std::mem::take(&mut b.slots))
    {
        let mine = fields.entry(field).or_default();
        if let Some(r) = slots.newest
            && mine.newest.as_ref().is_none_or(|d| d.seq() < r.seq())
        {
            mine.newest = Some(r);
        }
        if let Some(r) = slots.newest_kept
            && mine.newest_kept.as_ref().is_none_or(|d| d.seq < r.seq)
        {
            mine.newest_kept = Some(r);
        }
    }
    for slots in fields.into_values() {
        if let Some(newest) = slots.newest {
            held.push(newest.record(plan)?);
        }
        held.extend(slots.newest_kept);
    }
    held.sort_by_key(|r| r.seq);
    held.dedup_by_key(|r| r.seq);
    if plan.pin {
        hold_inputs(plan, &entries, &mut held)?;
    }
    drop(entries);

    let mut named = a.named;
    named.append(&mut b.named);
    let store = Store::lean(held, total, named);
    let mask: Vec<bool> = store
        .records()
        .iter()
        .map(|r| plan.kept_index(&r.id, id_hash(r.id.as_bytes())).is_some())
        .collect();
    let sha = fingerprint_of(digests.iter().filter_map(|(_, k, d)| {
        let id = plan.kept.get(*k as usize).copied()?;
        Some((id, d))
    }));
    let hashes = plan.kept_hashes.clone();
    let compaction = Compaction::lean(&store, mask, hashes, sha);
    Ok((store, compaction, budget))
}

/// A second pass over the same batches as the [`load`] that gave `budget`: the id and the
/// sha256 of canonical JSON of each record whose `seq` is in `wanted`, by `seq`. Batches
/// whose `seq` range holds none of them are not parsed. [`Fallback`] unless each wanted
/// `seq` is met exactly once.
pub fn digests<'a, I>(
    plan: &Plan<'_>,
    budget: &Budget,
    wanted: &BTreeSet<u64>,
    source: I,
) -> Result<BTreeMap<u64, (String, [u8; 32])>, Fallback>
where
    I: Iterator<Item = Result<Batch<'a>, Fallback>> + Send,
{
    let ranges: IdMap<u64, (u64, u64)> = budget
        .ranges
        .iter()
        .map(|&(i, lo, hi)| (i as u64, (lo, hi)))
        .collect();
    let source = Mutex::new(source.enumerate());
    let failed = AtomicBool::new(false);
    let one = |text: &str,
               out: &mut Vec<(u64, String, [u8; 32])>,
               scratch: &mut Vec<u8>|
     -> Result<(), Fallback> {
        // The lines were validated by the load: most are passed over on their seq alone.
        if !wanted.contains(&scan::seq_of(text).ok_or(Fallback)?) {
            return Ok(());
        }
        if let Some(c) = scan::chatter(text) {
            if wanted.contains(&c.seq) {
                let digest: [u8; 32] = if c.canonical(scratch) {
                    Sha256::digest(&*scratch).into()
                } else {
                    let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
                    Sha256::digest(json::canonical(&value).as_bytes()).into()
                };
                out.push((c.seq, c.id.into_owned(), digest));
            }
            return Ok(());
        }
        let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
        let seq = value
            .get("seq")
            .and_then(crate::record::whole_number)
            .ok_or(Fallback)?;
        if wanted.contains(&seq) {
            let r = parse_record_with(&plan.origin, &Place::Line(0), &value, plan.limits, true)
                .map_err(|_| Fallback)?;
            out.push((r.seq, r.id, r.digest));
        }
        Ok(())
    };
    let work = || -> Result<Vec<(u64, String, [u8; 32])>, Fallback> {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        loop {
            if failed.load(Ordering::Relaxed) {
                return Err(Fallback);
            }
            let next = source.lock().map_err(|_| Fallback)?.next();
            let Some((index, batch)) = next else {
                return Ok(out);
            };
            let needed = ranges
                .get(&(index as u64))
                .is_some_and(|&(lo, hi)| wanted.range(lo..=hi).next().is_some());
            let result = batch.and_then(|b| {
                if !needed {
                    return Ok(());
                }
                match b {
                    Batch::Lines(bytes) => {
                        let text = simdutf8::basic::from_utf8(&bytes).map_err(|_| Fallback)?;
                        text.split('\n')
                            .filter(|l| !l.bytes().all(|b| b.is_ascii_whitespace()))
                            .try_for_each(|l| one(l, &mut out, &mut scratch))
                    }
                    Batch::Span(bytes, last) => {
                        let text = simdutf8::basic::from_utf8(&bytes).map_err(|_| Fallback)?;
                        walk_span(text, last, |item, _| one(item, &mut out, &mut scratch))
                    }
                }
            });
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
                return Err(Fallback);
            }
        }
    };
    let (a, b) = std::thread::scope(
        |s| match std::thread::Builder::new().spawn_scoped(s, work) {
            Ok(other) => {
                let mine = work();
                (other.join().unwrap_or(Err(Fallback)), mine)
            }
            Err(_) => (Ok(Vec::new()), work()),
        },
    );
    let mut found = BTreeMap::new();
    for (seq, id, digest) in a?.into_iter().chain(b?) {
        if found.insert(seq, (id, digest)).is_some() {
            return Err(Fallback);
        }
    }
    if found.len() != wanted.len() {
        return Err(Fallback);
    }
    Ok(found)
}

/// The non-chatter records' entries by id hash, with the worker (0 or 1) each came from.
struct Entries<'e> {
    map: IdMap<u64, (usize, &'e Entry)>,
    /// Each worker's `names` and `deps`.
    names: [&'e str; 2],
    deps: [&'e [Name]; 2],
}

impl<'e> Entries<'e> {
    /// The entry whose id is `id`.
    fn get(&self, id: &str) -> Option<(usize, &'e Entry)> {
        self.map
            .get(&id_hash(id.as_bytes()))
            .filter(|(w, e)| self.name(*w, e.id) == Some(id))
            .copied()
    }

    /// The id `name` of worker `w`.
    fn name(&self, w: usize, name: Name) -> Option<&'e str> {
        let names = *self.names.get(w)?;
        names.get(name.at as usize..name.at as usize + name.len as usize)
    }
}

/// Adds to `held` (sorted by seq, no repeats) every record a held record depends on,
/// transitively, parsing again the lines `pin` kept for that. Every `depends_on` target
/// is among `entries` (checked before).
fn hold_inputs(
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
        let (_, entry) = entries.get(&id).ok_or(Fallback)?;
        if have.contains(&entry.seq) {
            continue;
        }
        let raw = entry.raw.as_deref().ok_or(Fallback)?;
        let value = json::parse(raw.as_bytes()).map_err(|_| Fallback)?;
        let record = parse_record_with(
            &plan.origin,
            &Place::Line(0),
            &value,
            plan.limits,
            plan.count_tokens,
        )
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

/// True when some value occurs twice across `a` and `b` (both are sorted in place).
fn has_duplicate(a: &mut [u64], b: &mut [u64]) -> bool {
    let both = std::thread::scope(|s| {
        let other = std::thread::Builder::new().spawn_scoped(s, || b.sort_unstable());
        a.sort_unstable();
        other.is_ok_and(|h| h.join().is_ok())
    });
    if !both {
        // No second thread could be had: sort the other half here.
        b.sort_unstable();
    }
    let twice = |s: &[u64]| s.windows(2).any(|w| matches!(w, [x, y] if x == y));
    if twice(a) || twice(b) {
        return true;
    }
    let (mut i, mut j) = (a.iter().peekable(), b.iter().peekable());
    while let (Some(&&x), Some(&&y)) = (i.peek(), j.peek()) {
        match x.cmp(&y) {
            std::cmp::Ordering::Less => {
                i.next();
            }
            std::cmp::Ordering::Greater => {
                j.next();
            }
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// Whether the first JSON value of an input is a document (an object with `records`),
/// decided from a prefix of the input. `None`: the prefix does not tell.
pub fn is_document(prefix: &[u8]) -> Option<bool> {
    struct Probe<'f>(&'f std::cell::Cell<bool>);
    impl<'de> Visitor<'de> for Probe<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "records" {
                    self.0.set(true);
                    return Err(de::Error::custom("document"));
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let start = prefix.iter().position(|b| !b.is_ascii_whitespace())?;
    if prefix.get(start) != Some(&b'{') {
        return Some(false);
    }
    let found = std::cell::Cell::new(false);
    let mut de = serde_json::Deserializer::from_slice(prefix.get(start..)?);
    match de.deserialize_map(Probe(&found)) {
        Ok(()) => Some(false),
        Err(_) if found.get() => Some(true),
        Err(_) => None,
    }
}

/// Walks the records of a [`Batch::Span`] one by one from its first byte (a record's
/// `{`), each followed by whitespace and a `,` (and whitespace); the walk must end exactly
/// at the end of `text`: after a `,` unless `last`, after a record if `last`. Anything
/// else is [`Fallback`]. `each` is given each record's text, and what the simple scan
/// made of it when it decided it; a record it did not decide is held to the nesting a
/// record may have in a document.
fn walk_span<'t>(
    text: &'t str,
    last: bool,
    mut each: impl FnMut(&'t str, Option<scan::Simple<'t>>) -> Result<(), Fallback>,
) -> Result<(), Fallback> {
    let b = text.as_bytes();
    let mut at = 0;
    loop {
        if b.get(at) != Some(&b'{') {
            return Err(Fallback);
        }
        let end = match scan::simple_item(text, at) {
            Some((s, end)) => {
                each(text.get(at..end).ok_or(Fallback)?, Some(s))?;
                end
            }
            None => {
                let end = crate::document::value_end(text, at).ok_or(Fallback)?;
                let item = text.get(at..end).ok_or(Fallback)?;
                if !crate::document::record_depth_ok(item.as_bytes()) {
                    return Err(Fallback);
                }
                each(item, None)?;
                end
            }
        };
        at = skip_ws(b, end);
        match b.get(at) {
            None if last => return Ok(()),
            Some(b',') => {
                at = skip_ws(b, at + 1);
                if at == b.len() {
                    return if last { Err(Fallback) } else { Ok(()) };
                }
            }
            _ => return Err(Fallback),
        }
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}
