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

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::compaction::{Compaction, fingerprint_of};
use crate::json::{self, StrictValue};
use crate::record::{Kind, Limits, Place, Record, Store, parse_record_with};
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
    /// Two distinct kept ids share a hash: the load falls back.
    clash: bool,
    /// Tools whose in-scope policies and effects must be held.
    tools: Vec<String>,
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
        tools: Vec<String>,
        limits: Limits,
    ) -> Plan<'a> {
        let mut plan = Plan {
            index: IdMap::default(),
            filter: vec![0; FILTER_BITS / 64],
            kept: Vec::new(),
            clash: false,
            tools,
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
                    let bit = (h as usize) % FILTER_BITS;
                    if let Some(w) = plan.filter.get_mut(bit / 64) {
                        *w |= 1 << (bit % 64);
                    }
                }
            }
        }
        plan
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
        match &record.kind {
            Kind::Policy(p) => self.tools.iter().any(|t| p.scopes(t)),
            Kind::Effect(e) => self.tools.contains(&e.tool),
            _ => false,
        }
    }
}

/// A record the loader validated, kept for the cross-record checks: ids, `seq`, kind,
/// and what it names. Lean on purpose: there is one per non-chatter record.
struct Entry {
    id: Box<str>,
    seq: u64,
    /// For a fact, its field's index in the worker's `facts` keys; `NOT_A_FACT` otherwise.
    field: u32,
    policy: bool,
    supersedes: Option<Box<str>>,
    depends_on: Box<[Box<str>]>,
}

const NOT_A_FACT: u32 = u32::MAX;

/// Per field: the newest fact, and the newest kept fact, this worker saw.
#[derive(Default)]
struct FactSlots {
    newest: Option<Record>,
    newest_kept: Option<Record>,
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
    held: Vec<Record>,
    facts: IdMap<String, FactSlots>,
    /// The fields of `facts`, by the index entries use.
    fields: Vec<String>,
    field_index: IdMap<String, u32>,
    /// (seq, index into the plan's kept ids, sha256 of canonical JSON) per kept record.
    digests: Vec<(u64, u32, [u8; 32])>,
    named: BTreeSet<String>,
    /// A buffer for canonical JSON.
    scratch: Vec<u8>,
}

impl Worker {
    fn batch<'t>(
        &mut self,
        plan: &Plan<'_>,
        index: usize,
        texts: impl Iterator<Item = &'t str>,
    ) -> Result<(), Fallback> {
        let start = self.seqs.len();
        for text in texts {
            self.record(plan, text)?;
        }
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
        }
        Ok(())
    }

    fn record(&mut self, plan: &Plan<'_>, text: &str) -> Result<(), Fallback> {
        let Some(c) = scan::chatter(text) else {
            return self.strict(plan, text);
        };
        let h = id_hash(c.id.as_bytes());
        self.seqs.push(c.seq);
        self.hashes.push(h);
        if let Some(k) = plan.kept_index(&c.id, h) {
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

    /// The strict path: exactly what the exact loader does with this record.
    fn strict(&mut self, plan: &Plan<'_>, text: &str) -> Result<(), Fallback> {
        let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
        let kept = value
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| plan.kept_index(id, id_hash(id.as_bytes())));
        let record = parse_record_with(
            &plan.origin,
            &Place::Line(0),
            &value,
            plan.limits,
            kept.is_some(),
        )
        .map_err(|_| Fallback)?;
        self.seqs.push(record.seq);
        self.hashes.push(id_hash(record.id.as_bytes()));
        if let Some(k) = kept {
            self.digests.push((record.seq, k, record.digest));
        }
        let is_kept = kept.is_some();
        let mut entry = Entry {
            id: record.id.as_str().into(),
            seq: record.seq,
            field: NOT_A_FACT,
            policy: false,
            supersedes: record.supersedes().map(Into::into),
            depends_on: record
                .depends_on()
                .iter()
                .map(|d| d.as_str().into())
                .collect(),
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
                entry.field = match self.field_index.get(f.field.as_str()) {
                    Some(&i) => i,
                    None => {
                        let i = self.fields.len() as u32;
                        self.fields.push(f.field.clone());
                        self.field_index.insert(f.field.clone(), i);
                        i
                    }
                };
                if !self.facts.contains_key(f.field.as_str()) {
                    self.facts.insert(f.field.clone(), FactSlots::default());
                }
                let Some(slots) = self.facts.get_mut(f.field.as_str()) else {
                    return Err(Fallback);
                };
                if is_kept
                    && slots
                        .newest_kept
                        .as_ref()
                        .is_none_or(|r| r.seq < record.seq)
                {
                    slots.newest_kept = Some(record.clone());
                }
                if slots.newest.as_ref().is_none_or(|r| r.seq < record.seq) {
                    slots.newest = Some(record.clone());
                }
                derived_and_kept
            }
        };
        self.entries.push(entry);
        if hold {
            self.held.push(record);
        }
        Ok(())
    }
}

/// One unit of work: a chunk of JSON Lines, or a run of a document's record texts.
pub enum Batch<'a> {
    /// Whole lines (the chunk ends at a line end, or at the end of the input).
    Lines(Vec<u8>),
    /// Record objects of a document.
    Items(&'a [&'a str]),
}

/// Loads records from batches handed out by `source` (pulled from two threads), for
/// `plan`. Returns the lean store and its compaction, or [`Fallback`].
pub fn load<'a, I>(plan: &Plan<'_>, source: I) -> Result<(Store, Compaction), Fallback>
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
                    worker.batch(
                        plan,
                        index,
                        text.split('\n')
                            .filter(|l| !l.bytes().all(|b| b.is_ascii_whitespace())),
                    )
                }
                Batch::Items(items) => worker.batch(plan, index, items.iter().copied()),
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
fn finish(plan: &Plan<'_>, mut a: Worker, mut b: Worker) -> Result<(Store, Compaction), Fallback> {
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
    let entries: IdMap<&str, (usize, &Entry)> = a
        .entries
        .iter()
        .map(|e| (0, e))
        .chain(b.entries.iter().map(|e| (1, e)))
        .map(|(w, e)| (&*e.id, (w, e)))
        .collect();
    for &(w, e) in entries.values() {
        if let Some(target) = &e.supersedes {
            let ok = entries.get(&**target).is_some_and(|&(tw, t)| {
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
        if e.depends_on
            .iter()
            .any(|d| *d == e.id || !entries.contains_key(&**d))
        {
            return Err(Fallback);
        }
    }
    drop(entries);

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
    let mut fields: IdMap<String, FactSlots> = a.facts;
    for (field, slots) in b.facts {
        let mine = fields.entry(field).or_default();
        for (dst, src) in [
            (&mut mine.newest, slots.newest),
            (&mut mine.newest_kept, slots.newest_kept),
        ] {
            if let Some(r) = src
                && dst.as_ref().is_none_or(|d| d.seq < r.seq)
            {
                *dst = Some(r);
            }
        }
    }
    for slots in fields.into_values() {
        held.extend(slots.newest);
        held.extend(slots.newest_kept);
    }
    held.sort_by_key(|r| r.seq);
    held.dedup_by_key(|r| r.seq);

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
    let hashes = plan.kept.iter().map(|id| id_hash(id.as_bytes())).collect();
    let compaction = Compaction::lean(&store, mask, hashes, sha);
    Ok((store, compaction))
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

/// A document split for the lean loader: each record's JSON text, and the other keys.
pub struct Document<'a> {
    /// The text of each element of `records`, in order.
    pub records: Vec<&'a str>,
    /// `kept`, if present.
    pub kept: Option<Value>,
    /// `action`, if present.
    pub action: Option<Value>,
    /// `tools`, if present.
    pub tools: Option<Value>,
}

/// Splits a document (the whole input, BOM already removed) without parsing its records:
/// they are only checked to be well-formed JSON here, and parsed by [`load`].
pub fn split_document(text: &str) -> Result<Document<'_>, Fallback> {
    struct Top;
    impl<'de> Visitor<'de> for Top {
        type Value = Document<'de>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a document")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document<'de>, A::Error> {
            let mut doc = Document {
                records: Vec::new(),
                kept: None,
                action: None,
                tools: None,
            };
            let mut seen: Vec<String> = Vec::new();
            let mut records = false;
            while let Some(key) = map.next_key::<String>()? {
                if seen.contains(&key) {
                    return Err(de::Error::custom("duplicate key"));
                }
                match key.as_str() {
                    "records" => {
                        let raw: Vec<&'de RawValue> = map.next_value()?;
                        doc.records = raw.into_iter().map(RawValue::get).collect();
                        records = true;
                    }
                    "kept" => doc.kept = Some(map.next_value::<StrictValue>()?.0),
                    "action" => doc.action = Some(map.next_value::<StrictValue>()?.0),
                    "tools" => doc.tools = Some(map.next_value::<StrictValue>()?.0),
                    "meta" => drop(map.next_value::<StrictValue>()?),
                    _ => return Err(de::Error::custom("unknown key")),
                }
                seen.push(key);
            }
            if records {
                Ok(doc)
            } else {
                Err(de::Error::custom("no records"))
            }
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let doc = de.deserialize_map(Top).map_err(|_| Fallback)?;
    de.end().map_err(|_| Fallback)?;
    Ok(doc)
}

/// The batches of a document's records, a few thousand at a time.
pub fn items<'a>(
    records: &'a [&'a str],
) -> impl Iterator<Item = Result<Batch<'a>, Fallback>> + Send {
    records.chunks(4096).map(|c| Ok(Batch::Items(c)))
}
