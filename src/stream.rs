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
use crate::record::{
    Kind, Limits, Place, Record, Store, glob_match, globs_overlap, parse_record_with,
};
use crate::scan;

/// The lean loader cannot decide on its own: run the exact loader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback;

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

/// Most words the kept-id prefilter may have (128 KiB): small enough to stay in cache
/// while the input streams past it. Most records are not kept, and most of those are
/// turned away by one word of it.
const FILTER_MAX_WORDS: usize = 1 << 14;

/// The prefilter's word for an id hash, and the three bits of that word the id sets (a
/// blocked Bloom filter: one cache line read per lookup). `words` is a power of two.
fn filter_slot(h: u64, words: usize) -> (usize, u64) {
    let bits = (1 << ((h >> 32) & 63)) | (1 << ((h >> 38) & 63)) | (1 << ((h >> 44) & 63));
    ((h as usize) & (words - 1), bits)
}

/// What the load is for: the kept ids (retention `given`) and the tools a gate will judge.
pub struct Plan<'a> {
    /// Each distinct kept id's hash, mapped to its index in `kept`.
    index: IdMap<u64, u32>,
    /// The kept ids' hashes in a blocked Bloom filter (see [`filter_slot`]); its length
    /// is a power of two.
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
        let kept = kept.into_iter();
        // Sized for the most ids the iterator may give (an upper bound, when it has one),
        // within reason: past that the index grows as it fills.
        let n = match kept.size_hint() {
            (_, Some(most)) => most,
            (least, None) => least,
        }
        .min(1 << 22);
        let mut plan = Plan {
            index: IdMap::with_capacity_and_hasher(n, Default::default()),
            filter: Vec::new(),
            kept: Vec::with_capacity(n),
            kept_hashes: Vec::with_capacity(n),
            clash: false,
            tools,
            pin: false,
            count_tokens: false,
            limits,
            origin: origin.to_string(),
        };
        for id in kept {
            let h = id_hash(id.as_bytes());
            match plan.index.entry(h) {
                std::collections::hash_map::Entry::Occupied(k) => {
                    // A repeat is harmless; another id of the same hash is a clash.
                    if plan.kept.get(*k.get() as usize) != Some(&id) {
                        plan.clash = true;
                    }
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(plan.kept.len() as u32);
                    plan.kept.push(id);
                    plan.kept_hashes.push(h);
                }
            }
        }
        // About ten bits per kept id, up to the cap (past it, more ids only raise the
        // filter's false positives, which the index then turns away).
        let words = (plan.kept.len() * 10 / 64)
            .next_power_of_two()
            .clamp(64, FILTER_MAX_WORDS);
        plan.filter = vec![0; words];
        for &h in &plan.kept_hashes {
            let (at, bits) = filter_slot(h, words);
            if let Some(w) = plan.filter.get_mut(at) {
                *w |= bits;
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

    /// Starts reading the filter word [`Plan::kept_index`] will test for `h`, so that it
    /// is in cache by then.
    fn fetch_filter(&self, h: u64) {
        let (at, _) = filter_slot(h, self.filter.len());
        #[cfg(target_arch = "x86_64")]
        if let Some(word) = self.filter.get(at) {
            // SAFETY: a prefetch only hints the cache; it never reads through the
            // pointer (and this one points at a live element anyway).
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    (word as *const u64).cast::<i8>(),
                );
            }
        }
    }

    /// The index of `id` (whose hash is `h`) among the kept ids.
    fn kept_index(&self, id: &str, h: u64) -> Option<u32> {
        let (at, bits) = filter_slot(h, self.filter.len());
        if self.filter.get(at).is_none_or(|w| w & bits != bits) {
            return None;
        }
        let k = *self.index.get(&h)?;
        (self.kept.get(k as usize) == Some(&id)).then_some(k)
    }

    fn in_scope(&self, record: &Record) -> bool {
        match &record.kind {
            Kind::Policy(p) => self.policy_in_scope(&p.scope),
            Kind::Effect(e) => self.effect_in_scope(&e.tool),
            _ => false,
        }
    }

    /// Whether records other than chatter may take the light paths, which count no
    /// tokens (`pin --budget` needs every record's).
    fn light(&self) -> bool {
        !self.count_tokens
    }

    /// Whether a policy with this `scope` scopes one of the tools (as
    /// [`crate::record::Policy::scopes`] decides; for `pin`, whose tools may be globs, as
    /// [`crate::record::Policy::may_scope`] does; any does when the tools are not known).
    fn policy_in_scope<S: AsRef<str>>(&self, scope: &[S]) -> bool {
        let scopes = |s: &str, t: &str| {
            if self.pin {
                globs_overlap(s, t)
            } else {
                glob_match(s, t)
            }
        };
        self.tools.as_ref().is_none_or(|tools| {
            tools
                .iter()
                .any(|t| scope.iter().any(|s| scopes(s.as_ref(), t)))
        })
    }

    /// Whether an effect of `tool` is one of the tools' (for `pin`, one a tool glob
    /// covers; any is when the tools are not known).
    fn effect_in_scope(&self, tool: &str) -> bool {
        self.tools.as_ref().is_none_or(|tools| {
            tools.iter().any(|t| {
                if self.pin {
                    glob_match(t, tool)
                } else {
                    t == tool
                }
            })
        })
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
    /// For `pin`, the line of a record not held (in the worker's `names`): parsed again if
    /// a held one depends on it.
    raw: Option<Name>,
}

const NOT_A_FACT: u32 = u32::MAX;

/// A record id in a worker's `names` (one string for all, instead of one allocation per
/// id): its offset and length.
#[derive(Clone, Copy)]
struct Name {
    at: u32,
    len: u32,
}

impl Name {
    /// `s`, added to the end of `buf`.
    fn push(buf: &mut String, s: &str) -> Result<Name, Fallback> {
        let at = u32::try_from(buf.len()).map_err(|_| Fallback)?;
        let len = u32::try_from(s.len()).map_err(|_| Fallback)?;
        at.checked_add(len).ok_or(Fallback)?;
        buf.push_str(s);
        Ok(Name { at, len })
    }

    /// This name in `buf`, the string it was pushed to.
    fn of(self, buf: &str) -> Option<&str> {
        buf.get(self.at as usize..self.at as usize + self.len as usize)
    }
}

/// A worker's fact field names: one buffer, and where each field's name is in it.
#[derive(Clone, Copy)]
struct Fields<'e> {
    names: &'e str,
    at: &'e [Name],
}

impl<'e> Fields<'e> {
    /// The name of field `i`.
    fn get(&self, i: u32) -> Option<&'e str> {
        self.at.get(i as usize)?.of(self.names)
    }

    /// Every field's name, by index.
    fn iter(&self) -> impl Iterator<Item = &'e str> + '_ {
        self.at
            .iter()
            .map(|at| at.of(self.names).unwrap_or_default())
    }
}

/// Per field: the newest fact, and the newest kept fact, this worker saw.
#[derive(Default)]
struct FactSlots {
    newest: Option<Slot>,
    newest_kept: Option<Slot>,
    /// The `seq` and id of the last fact of the field this worker met (in input order).
    last: Option<(u64, Name)>,
}

/// The newest (or newest kept) fact of a field: parsed, or the line of a fact the light
/// scan read (parsed at the end, only if it stays the newest and the gate reads its field).
enum Slot {
    Parsed(Box<Record>),
    Line(u64, String),
}

impl Slot {
    /// Puts the line `text` of a fact of `seq` in `slot`, unless what is there is newer
    /// (the buffer of a line it replaces is reused).
    fn hold(slot: &mut Option<Slot>, seq: u64, text: &str) {
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

    fn seq(&self) -> u64 {
        match self {
            Slot::Parsed(r) => r.seq,
            Slot::Line(seq, _) => *seq,
        }
    }

    /// The record (a line's with its digest when `digest`, as the strict path gives a kept
    /// record).
    fn record(self, plan: &Plan<'_>, digest: bool) -> Result<Record, Fallback> {
        match self {
            Slot::Parsed(r) => Ok(*r),
            Slot::Line(seq, text) => {
                let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
                let r =
                    parse_record_with(&plan.origin, &Place::Line(0), &value, plan.limits, digest)
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
    /// The ids the entries name (and for `pin`, the lines of the records it does not
    /// hold), one after the other.
    names: String,
    /// The `depends_on` ids of the entries, each entry's in one run.
    deps: Vec<Name>,
    held: Vec<Record>,
    /// The fact fields met, by the index entries use: their names one after the other
    /// in `field_names`, where `field_at` finds them (a lookup reads one small buffer,
    /// not a string of its own per field), and their slots.
    field_names: String,
    field_at: Vec<Name>,
    slots: Vec<FactSlots>,
    /// The index of each field by its name's hash, checked against its name.
    field_index: IdMap<u64, u32>,
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
        // Each decided line is dispatched one line late: its kept-id filter word is
        // fetched first, and arrives while the next line is scanned.
        let mut pending: Option<(scan::Simple<'_>, &str, u64)> = None;
        while at < chunk.len() {
            if let Some((s, end, next)) = scan::simple_in(chunk, at) {
                let text = chunk.get(at..end).ok_or(Fallback)?;
                let h = id_hash(s.id.as_bytes());
                plan.fetch_filter(h);
                if let Some((s, text, h)) = pending.replace((s, text, h)) {
                    self.dispatch(plan, text, scan::Fast::Done(s), Some(h))?;
                }
                at = next;
                continue;
            }
            if let Some((s, text, h)) = pending.take() {
                self.dispatch(plan, text, scan::Fast::Done(s), Some(h))?;
            }
            let rest = chunk.get(at..).ok_or(Fallback)?;
            let end = rest.find('\n').map_or(chunk.len(), |n| at + n);
            let text = chunk.get(at..end).ok_or(Fallback)?;
            if !text.bytes().all(|b| b.is_ascii_whitespace()) {
                self.record(plan, text)?;
            }
            at = end + 1;
        }
        if let Some((s, text, h)) = pending.take() {
            self.dispatch(plan, text, scan::Fast::Done(s), Some(h))?;
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
            Some(s) => self.dispatch(plan, item, scan::Fast::Done(s), None),
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

    /// With `keep`, the line `text` of a record not held, added to `names` for `pin` (see
    /// [`Entry::raw`]).
    fn raw(&mut self, keep: bool, text: &str) -> Result<Option<Name>, Fallback> {
        keep.then(|| Name::push(&mut self.names, text)).transpose()
    }

    /// `id`, added to `names`.
    fn name(&mut self, id: &str) -> Result<Name, Fallback> {
        Name::push(&mut self.names, id)
    }

    /// Notes a tool name the records name (checked first: most name a tool already met).
    fn name_tool(&mut self, tool: &str) {
        if !self.named.contains(tool) {
            self.named.insert(tool.to_string());
        }
    }

    /// This worker's fact field names.
    fn fields(&self) -> Fields<'_> {
        Fields {
            names: &self.field_names,
            at: &self.field_at,
        }
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

    /// The index of a fact field, added if new. Two fields whose names share a hash fall
    /// back.
    fn field(&mut self, name: &str) -> Result<u32, Fallback> {
        let h = id_hash(name.as_bytes());
        if let Some(&i) = self.field_index.get(&h) {
            return if self.fields().get(i) == Some(name) {
                Ok(i)
            } else {
                Err(Fallback)
            };
        }
        let i = u32::try_from(self.field_at.len()).map_err(|_| Fallback)?;
        let at = Name::push(&mut self.field_names, name)?;
        self.field_at.push(at);
        self.slots.push(FactSlots::default());
        self.field_index.insert(h, i);
        Ok(i)
    }

    /// Notes the fact `id` (`seq`) as the last of `field` this worker met, and tells
    /// whether its `supersedes` target is the fact met before it: an earlier fact of the
    /// same field, so the link holds and the end-of-load link check can pass it over.
    /// Facts usually supersede the previous fact of their field, which this worker met
    /// about half the time.
    fn note_fact(&mut self, field: u32, seq: u64, id: Name, target: Option<&str>) -> bool {
        let Some(slots) = self.slots.get_mut(field as usize) else {
            return false;
        };
        let last = slots.last.replace((seq, id));
        let (Some((last_seq, name)), Some(target)) = (last, target) else {
            return false;
        };
        last_seq < seq && name.of(&self.names) == Some(target)
    }

    fn record(&mut self, plan: &Plan<'_>, text: &str) -> Result<(), Fallback> {
        self.dispatch(plan, text, scan::simple(text), None)
    }

    /// [`Worker::record`], given what [`scan::simple`] made of `text` (and, for a line it
    /// decided, its id's hash if known).
    fn dispatch(
        &mut self,
        plan: &Plan<'_>,
        text: &str,
        fast: scan::Fast<'_>,
        hash: Option<u64>,
    ) -> Result<(), Fallback> {
        let chatter = match fast {
            scan::Fast::Done(s) if s.kind == "chatter" => s.chatter(),
            scan::Fast::Done(s)
                if plan.light() && !matches!(s.kind, "policy" | "fact" | "effect") =>
            {
                return self.light_unevaluable(plan, text, s);
            }
            scan::Fast::Done(s) => return self.not_chatter(plan, text, Some(s.kind)),
            scan::Fast::NotChatter(kind) => return self.not_chatter(plan, text, Some(kind)),
            scan::Fast::Unknown => scan::chatter_by_serde(text),
        };
        let Some(c) = chatter else {
            return self.not_chatter(plan, text, None);
        };
        let h = hash.unwrap_or_else(|| id_hash(c.id.as_bytes()));
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

    /// A record other than chatter (given its `kind` when the simple scan read it): by the
    /// light scan of its kind when that can decide it, else by the strict path. The rule
    /// scan stops as soon as it reads that the strict path will take the record.
    fn not_chatter(
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
    fn digest(&mut self, text: &str, seq: u64, k: u32) -> Result<(), Fallback> {
        if !scan::canonical(text, &mut self.scratch) {
            return Err(Fallback);
        }
        self.digests
            .push((seq, k, Sha256::digest(&self.scratch).into()));
        Ok(())
    }

    /// A fact the light scan read: only its line is held, while it is the newest (or, if
    /// kept, the newest kept) of its field; a kept one is digested.
    fn light_fact(
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

    /// A policy or effect the light scan read: one this load does not hold (not kept,
    /// out of scope, superseding nothing) is only noted for the cross-record checks; any
    /// other takes the strict path, which builds it.
    fn light_rule(
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
                for tool in scope.iter().filter(|t| !t.contains('*')) {
                    self.name_tool(tool);
                }
                true
            }
            scan::Rule::Effect { tool } => {
                if plan.effect_in_scope(tool) {
                    return self.strict(plan, text);
                }
                self.name_tool(tool);
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
                for tool in p.scope.iter().filter(|t| !t.contains('*')) {
                    self.name_tool(tool);
                }
                plan.in_scope(&record) || p.supersedes.is_some() || derived_and_kept
            }
            Kind::Effect(e) => {
                self.name_tool(&e.tool);
                plan.in_scope(&record)
            }
            Kind::Unevaluable(_) => !is_kept,
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
/// `plan`, and hands the lean store and its compaction (and with
/// [`Plan::counting_tokens`], the [`Budget`]) to `then`: its result, or [`Fallback`].
/// `then` runs while the last checks of the input do (see `finish`): it may be given a
/// store whose input then falls back, so it must only compute.
pub fn load<'a, I, R>(
    plan: &Plan<'_>,
    source: I,
    then: impl FnOnce(Store, Compaction, Option<Budget>) -> R,
) -> Result<R, Fallback>
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
    finish(plan, a?, b?, then)
}

/// Checks what needs the whole input (duplicates, `supersedes`, `depends_on`, kept ids),
/// builds the store and compaction, and hands them to `then`.
///
/// The duplicate-id and link checks decide only whether the input is valid, never what
/// the gate reads, so (but for `pin`, which reads the entries they index) they run on a
/// thread of their own while the store is built and `then` runs; if they fail, `then`'s
/// result is dropped and the load falls back. `then` may so see a store from input that
/// turns out invalid: it must only compute (the gate and report code do).
fn finish<R>(
    plan: &Plan<'_>,
    mut a: Worker,
    mut b: Worker,
    then: impl FnOnce(Store, Compaction, Option<Budget>) -> R,
) -> Result<R, Fallback> {
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
    if !rising && has_duplicate([&mut a.seqs, &mut b.seqs], true, [Vec::new(), Vec::new()]) {
        return Err(Fallback);
    }
    let total = a.hashes.len() + b.hashes.len();

    // The id hashes (sorted in place by the duplicate check, with the `seq` lists, as
    // long and no longer needed, for its scratch space) and the entries go to the checks;
    // the rest of each worker goes to the store.
    let hashes = Mutex::new((
        [std::mem::take(&mut a.hashes), std::mem::take(&mut b.hashes)],
        [std::mem::take(&mut a.seqs), std::mem::take(&mut b.seqs)],
    ));
    let mut parts = [Held::take(&mut a), Held::take(&mut b)];
    // The fingerprint of the kept records, from their digests: on the checks' thread when
    // there is one (the store is built meanwhile, and needs it last).
    let digests = Mutex::new(Some([
        std::mem::take(&mut a.digests),
        std::mem::take(&mut b.digests),
    ]));
    let fingerprint = || -> Result<String, Fallback> {
        let digests = digests.lock().map_err(|_| Fallback)?.take();
        kept_fingerprint(plan, digests.ok_or(Fallback)?)
    };
    let links = Links {
        entries: [&a.entries, &b.entries],
        names: [&a.names, &b.names],
        deps: [&a.deps, &b.deps],
        fields: [a.fields(), b.fields()],
    };
    if plan.pin {
        let index = links.index();
        links.check(&hashes, &index, true)?;
        let (store, compaction) = build(
            plan,
            &mut parts,
            links.fields,
            total,
            Some(&index),
            fingerprint,
        )?;
        return Ok(then(store, compaction, budget));
    }
    std::thread::scope(|s| {
        // The store is built beside them: one thread is theirs.
        let (sha, sha_here) = std::sync::mpsc::channel();
        let (links, hashes, fingerprint) = (&links, &hashes, &fingerprint);
        let checks = move || {
            // A failed send: the store's side gave up already.
            let _ = sha.send(fingerprint());
            links.check(hashes, &links.index(), false)
        };
        match std::thread::Builder::new().spawn_scoped(s, checks) {
            Ok(checker) => {
                let sha = || sha_here.recv().unwrap_or(Err(Fallback));
                let result = build(plan, &mut parts, links.fields, total, None, sha)
                    .map(|(store, compaction)| then(store, compaction, budget));
                checker.join().unwrap_or(Err(Fallback))?;
                result
            }
            // No second thread (a resource limit): the checks run here, first.
            Err(_) => {
                links.check(hashes, &links.index(), true)?;
                let (store, compaction) =
                    build(plan, &mut parts, links.fields, total, None, fingerprint)?;
                Ok(then(store, compaction, budget))
            }
        }
    })
}

/// What a worker gathered for the store: held records, fact slots, tool names.
struct Held {
    held: Vec<Record>,
    slots: Vec<FactSlots>,
    named: BTreeSet<String>,
}

impl Held {
    fn take(w: &mut Worker) -> Held {
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
fn build(
    plan: &Plan<'_>,
    parts: &mut [Held; 2],
    fields: [Fields<'_>; 2],
    total: usize,
    entries: Option<&Entries<'_>>,
    fingerprint: impl FnOnce() -> Result<String, Fallback>,
) -> Result<(Store, Compaction), Fallback> {
    let [a, b] = parts;

    // The facts a view can read: per field the newest, and the newest kept. The gate
    // and precheck look facts up only by the fields that policies in scope of their
    // tools read (a policy held only as another's revoker is never evaluated), so for
    // them a fact's line is parsed only when its field is one of those (pin reads all).
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
        if let Some(r) = slots.newest
            && mine.newest.as_ref().is_none_or(|d| d.seq() < r.seq())
        {
            mine.newest = Some(r);
        }
        if let Some(r) = slots.newest_kept
            && mine.newest_kept.as_ref().is_none_or(|d| d.seq() < r.seq())
        {
            mine.newest_kept = Some(r);
        }
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
            matches!(s, Some(Slot::Line(..))) && !plan.pin && !read.contains(field)
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
    named.append(&mut b.named);
    let store = Store::lean(held, total, named);
    let mask: Vec<bool> = store
        .records()
        .iter()
        .map(|r| plan.kept_index(&r.id, id_hash(r.id.as_bytes())).is_some())
        .collect();
    let hashes = plan.kept_hashes.clone();
    let compaction = Compaction::lean(&store, mask, hashes, fingerprint()?);
    Ok((store, compaction))
}

/// The fingerprint of the kept records (see [`fingerprint_of`]) from the two workers'
/// digests; [`Fallback`] unless every kept id named a record (each digested once).
fn kept_fingerprint(plan: &Plan<'_>, [a, b]: [Vec<Digested>; 2]) -> Result<String, Fallback> {
    if a.len() + b.len() != plan.kept.len() {
        return Err(Fallback);
    }
    Ok(fingerprint_of(in_seq_order(a, b).filter_map(
        |(_, k, d)| {
            let id = plan.kept.get(k as usize).copied()?;
            Some((id, d))
        },
    )))
}

/// A kept record's `seq`, index among the plan's kept ids, and digest.
type Digested = (u64, u32, [u8; 32]);

/// Two workers' digests in `seq` order: merged as they come when each is in order already
/// (a worker meets its batches in input order, so it is when the input's `seq`s rise),
/// sorted together otherwise.
fn in_seq_order(mut a: Vec<Digested>, mut b: Vec<Digested>) -> impl Iterator<Item = Digested> {
    let sorted = |v: &[Digested]| v.windows(2).all(|w| matches!(w, [x, y] if x.0 <= y.0));
    if !(sorted(&a) && sorted(&b)) {
        a.append(&mut b);
        a.sort_unstable_by_key(|d| d.0);
    }
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if y.0 < x.0 => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

/// Each worker's id hashes, and a spare buffer per worker for sorting them.
type IdHashes = ([Vec<u64>; 2], [Vec<u64>; 2]);

/// The workers' entries, for the checks that link records: their ids, `supersedes` and
/// `depends_on` (in `names` and `deps`) and fact fields.
struct Links<'e> {
    entries: [&'e [Entry]; 2],
    names: [&'e str; 2],
    deps: [&'e [Name]; 2],
    fields: [Fields<'e>; 2],
}

impl<'e> Links<'e> {
    /// Every entry, with its worker.
    fn all(&self) -> impl Iterator<Item = (usize, &'e Entry)> + '_ {
        let [a, b] = self.entries;
        a.iter().map(|e| (0, e)).chain(b.iter().map(|e| (1, e)))
    }

    /// The entries by id hash (distinct once the duplicate check has passed: a repeat
    /// only hides an entry from the link check, which then falls back or is moot).
    fn index(&self) -> Entries<'e> {
        Entries {
            map: self.all().map(|(w, e)| (e.hash, (w, e))).collect(),
            names: self.names,
            deps: self.deps,
        }
    }

    /// The field of a fact entry of worker `w`.
    fn field_of(&self, w: usize, e: &Entry) -> Option<&'e str> {
        self.fields.get(w)?.get(e.field)
    }

    /// No two records share an id (`hashes`, each worker's id hashes, are sorted in
    /// place, on a second thread too when `two_threads`), and each `supersedes` and
    /// `depends_on` names a record it may name.
    fn check(
        &self,
        hashes: &Mutex<IdHashes>,
        entries: &Entries<'e>,
        two_threads: bool,
    ) -> Result<(), Fallback> {
        {
            let mut hashes = hashes.lock().map_err(|_| Fallback)?;
            let ([a, b], spare) = &mut *hashes;
            // A shared hash may be a real duplicate: the exact loader decides.
            if has_duplicate([a, b], two_threads, std::mem::take(spare)) {
                return Err(Fallback);
            }
        }
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
        name.of(self.names.get(w)?)
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
        let (w, entry) = entries.get(&id).ok_or(Fallback)?;
        if have.contains(&entry.seq) {
            continue;
        }
        let raw = entry.raw.and_then(|r| entries.name(w, r)).ok_or(Fallback)?;
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

/// True when some value occurs twice across the two lists (each is put in order of its
/// top [`RUN_BITS`] bits in place, on two threads when `two_threads` and one can be had;
/// `spare[k]` is scratch space for list `k`).
///
/// A full sort is not needed to find a repeat: equal values have equal top bits, so after
/// ordering by those only the runs of equal top bits (across both lists) are compared
/// whole, and for uniform hashes nearly every run is a single value.
fn has_duplicate([a, b]: [&mut Vec<u64>; 2], two_threads: bool, spare: [Vec<u64>; 2]) -> bool {
    const LOW: u32 = 64 - RUN_BITS;
    let [mut spare_a, mut spare_b] = spare;
    let both = two_threads
        && std::thread::scope(|s| {
            let other = std::thread::Builder::new()
                .spawn_scoped(s, || radix_sort_from(b, std::mem::take(&mut spare_b), LOW));
            radix_sort_from(a, std::mem::take(&mut spare_a), LOW);
            other.is_ok_and(|h| h.join().is_ok())
        });
    if !both {
        radix_sort_from(a, spare_a, LOW);
        radix_sort_from(b, spare_b, LOW);
    }
    let top = |h: u64| h >> LOW;
    // The two lists merged by top bits: a value whose top bits are those of the value
    // before it starts a run of equal top bits (rare), whose values are compared whole.
    // The merge picks each next value without a branch that guesses.
    let (a, b) = (a.as_slice(), b.as_slice());
    let (mut i, mut j) = (0, 0);
    let mut last: Option<u64> = None;
    loop {
        let t = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => {
                let from_a = top(x) <= top(y);
                i += usize::from(from_a);
                j += usize::from(!from_a);
                if from_a { top(x) } else { top(y) }
            }
            (Some(&x), None) => {
                i += 1;
                top(x)
            }
            (None, Some(&y)) => {
                j += 1;
                top(y)
            }
            (None, None) => return false,
        };
        if last == Some(t) {
            // The whole run, in both lists: ordered, so a repeat is a neighbour.
            let run_of = |v: &[u64]| {
                let from = v.partition_point(|&h| top(h) < t);
                (from, v.partition_point(|&h| top(h) <= t))
            };
            let ((a_from, a_to), (b_from, b_to)) = (run_of(a), run_of(b));
            let mut run: Vec<u64> = a.get(a_from..a_to).unwrap_or_default().to_vec();
            run.extend_from_slice(b.get(b_from..b_to).unwrap_or_default());
            run.sort_unstable();
            if run.windows(2).any(|w| matches!(w, [p, q] if p == q)) {
                return true;
            }
            (i, j) = (a_to, b_to);
        }
        last = Some(t);
    }
}

/// How many top bits [`has_duplicate`] orders by: a pass of [`TOP_BITS`], then three of
/// at most [`DIGIT_BITS`] within each run.
const RUN_BITS: u32 = 33;

/// Bits of the first pass of [`radix_sort_from`] (the most significant ones): 256 runs,
/// few enough that writing to all of them at once stays within the cache and the TLB.
const TOP_BITS: u32 = 8;

/// Bits per pass of [`radix_sort_from`] within a run of equal top bits: a 512-entry count
/// table, and a run that stays in the first-level cache.
const DIGIT_BITS: u32 = 9;

/// Sorts `v`: hashes are uniform, and on them this radix sort is several times as fast as
/// a comparison sort. `spare` is scratch space.
pub(crate) fn radix_sort(v: &mut [u64], spare: Vec<u64>) {
    radix_sort_from(v, spare, 0);
}

/// [`radix_sort`] by the bits from `low` up only: `v` ends in order of `v >> low`. One
/// pass by the top [`TOP_BITS`] cuts `v` into runs, then each run is sorted by the bits
/// below them, least significant digit first, [`DIGIT_BITS`] per pass, while it is in
/// cache (one pass over the whole of `v` at a time would write to thousands of places
/// at once, and miss the cache and the TLB on most of them).
fn radix_sort_from(v: &mut [u64], spare: Vec<u64>, low: u32) {
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
        for low in [0, 20, 31, 38, 47, 55, 56, 60] {
            let mut radix = random.clone();
            radix_sort_from(&mut radix, Vec::new(), low);
            assert!(
                radix.windows(2).all(|w| w[0] >> low <= w[1] >> low),
                "{low}"
            );
            let (mut got, mut want) = (radix, random.clone());
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "{low}");
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

    #[test]
    fn the_id_hash_tells_lengths_and_padding_apart() {
        assert_ne!(id_hash(b""), id_hash(b"\0"));
        assert_ne!(id_hash(b"a"), id_hash(b"a\0"));
        assert_ne!(id_hash(b"abcdefgh"), id_hash(b"abcdefgh\0"));
        assert_ne!(id_hash(b"field_1181"), id_hash(b"field_1971"));
    }
}
