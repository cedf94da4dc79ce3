//! The lean loader: a record store read in one streaming pass on two threads, holding
//! only what one command can consult.
//!
//! The exact loader ([`crate::input::load`]) builds a `Value` and a [`Record`] for every
//! record and keeps them all. For a million records that is seconds and gigabytes. This
//! loader is given the compaction (the kept ids) and the tools up front ([`Plan`]), so it
//! can:
//!
//! - read chatter, summaries, facts and the rules it does not hold with the light scans
//!   of `scan` (no `Value`), and parse only the records it holds with the strict
//!   path, on two threads over chunks of lines (`worker`);
//! - digest (sha256 of canonical JSON) only the kept records;
//! - hold per record only a 64-bit id hash and the `seq` (to refuse duplicates), and hold
//!   as a [`Record`] only what the gate can read for these tools under this compaction
//!   (see `build`; what it knows of the records it let go is in the load's `Totals`): out-of-scope policies and effects, superseded facts and
//!   chatter are validated, counted and let go;
//! - check what needs the whole input (`checks`: duplicate ids, `supersedes` and
//!   `depends_on`) beside the build, the gate and the report.
//!
//! It never reports an error itself. Anything it cannot prove fine (a line the strict path
//! refuses, two ids with one hash, a `depends_on` naming a record it let go, a kept id it
//! did not see, bytes that are not UTF-8, ...) is [`Fallback`]: the caller then runs the
//! exact loader, which gives the same report, or the same error, as it always did. This
//! module reads bytes handed to it; it never touches files.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::mem::take;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::compaction::{Compaction, Retention, Totals, fingerprint_of};
use crate::ids::id_hash;
use crate::json::{self, skip_ws};
use crate::record::{
    Kind, Limits, Named, Place, Record, Store, glob_match, globs_overlap, parse_record_with,
};
use crate::scan;

mod build;
mod checks;
mod document;
mod plan;
mod worker;

pub use document::{Member, Positional, layout, spans};
pub use plan::Plan;

use build::*;
use checks::*;
use plan::*;
use worker::*;

/// The lean loader cannot decide on its own: run the exact loader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback;

/// One unit of work: a chunk of JSON Lines, or a run of a document's records.
pub enum Batch<'a> {
    /// Whole lines (the chunk ends at a line end, or at the end of the input): read from
    /// a file, or lent by the bytes held.
    Lines(std::borrow::Cow<'a, [u8]>),
    /// Elements of a document's `records`, as [`document::spans`] cuts them: the
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
    then: impl FnOnce(Store, Totals, Compaction, Option<Budget>) -> R,
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
        // Each thread digests about half the kept records: room for them up front, not
        // grown (and copied) as they come. Within reason, and never an abort: a `--kept`
        // list may name far more ids than the store has records.
        let room = plan.kept.len().div_ceil(2).min(1 << 16);
        let _ = worker.digests.try_reserve_exact(room);
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
                    worker.lines(plan, index, text)
                }
                Batch::Span(bytes, last) => {
                    let text = simdutf8::basic::from_utf8(&bytes).map_err(|_| Fallback)?;
                    worker.span(plan, index, text, last)
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
    let (a, b) = (a?, b?);
    // A `--kept` JSON array, read as plain ids, may name this record: the exact loader
    // says whether it does.
    if plan.kept_json && (a.bracketed_id || b.bracketed_id) {
        return Err(Fallback);
    }
    finish(plan, a, b, then)
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
    then: impl FnOnce(Store, Totals, Compaction, Option<Budget>) -> R,
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
        let mut ranges = take(&mut a.ranges);
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
    if !rising && has_duplicate([&mut a.seqs, &mut b.seqs], true) {
        return Err(Fallback);
    }
    // Kept ids read from the input's ends for a retention: they must be the records it
    // keeps by `seq`.
    if let Some(ends) = plan.retention.ends()
        && !kept_by_seq(ends, [&a.seqs, &b.seqs], [&a.digests, &b.digests])
    {
        return Err(Fallback);
    }
    let total = a.hashes.len() + b.hashes.len();

    // The fact fields go to both sides; the rest of each worker goes to the store, or to
    // the checks (the id hashes, sorted in place by the duplicate check, and the entries).
    let [fa, fb] = [&mut a, &mut b].map(|w| (take(&mut w.field_names), take(&mut w.field_at)));
    let fields = [&fa, &fb].map(|(names, at)| Fields { names, at });
    let mut parts = [Held::take(&mut a), Held::take(&mut b)];
    // The fingerprint of the kept records, from their digests: on the checks' thread when
    // there is one (the store is built meanwhile, and needs it last).
    let digests = Mutex::new(Some([take(&mut a.digests), take(&mut b.digests)]));
    let fingerprint = || -> Result<String, Fallback> {
        let digests = digests.lock().map_err(|_| Fallback)?.take();
        kept_fingerprint(plan, digests.ok_or(Fallback)?)
    };
    if plan.pin {
        (a.seqs, b.seqs) = (Vec::new(), Vec::new());
        let hashes = [take(&mut a.hashes), take(&mut b.hashes)];
        let links = Links::of([&a, &b], fields);
        let index = links.index();
        links.check(hashes, &index, true)?;
        let (store, totals, compaction) =
            build(plan, &mut parts, fields, total, Some(&index), fingerprint)?;
        return Ok(then(store, totals, compaction, budget));
    }
    // What is left of the workers goes to the checks, which let it go when done: freeing
    // it (tens of megabytes) is then on neither the store's side nor the way out.
    let workers = Mutex::new(Some([a, b]));
    std::thread::scope(|s| {
        // The store is built beside them: one thread is theirs, and the duplicate check
        // sorts one worker's hashes on a thread of its own, which takes up the time the
        // store's side leaves when it is done first.
        let (sha, sha_here) = std::sync::mpsc::channel();
        let (workers, fingerprint) = (&workers, &fingerprint);
        let checks = move || {
            // A failed send: the store's side gave up already.
            let workers = for_checks(workers);
            let _ = sha.send(fingerprint());
            check_workers(workers?, fields)
        };
        match std::thread::Builder::new().spawn_scoped(s, checks) {
            Ok(checker) => {
                let sha = || sha_here.recv().unwrap_or(Err(Fallback));
                let result = build(plan, &mut parts, fields, total, None, sha)
                    .map(|(store, totals, compaction)| then(store, totals, compaction, budget));
                checker.join().unwrap_or(Err(Fallback))?;
                result
            }
            // No second thread (a resource limit): the checks run here, first.
            Err(_) => {
                check_workers(for_checks(workers)?, fields)?;
                let (store, totals, compaction) =
                    build(plan, &mut parts, fields, total, None, fingerprint)?;
                Ok(then(store, totals, compaction, budget))
            }
        }
    })
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
        if let scan::Fast::Done(s) = scan::simple(text) {
            if wanted.contains(&s.seq) {
                if !s.canonical(scratch) {
                    return Err(Fallback);
                }
                out.push((s.seq, s.id.to_string(), Sha256::digest(&*scratch).into()));
            }
            return Ok(());
        }
        let value = json::parse(text.as_bytes()).map_err(|_| Fallback)?;
        let seq = value
            .get("seq")
            .and_then(crate::record::whole_number)
            .ok_or(Fallback)?;
        if wanted.contains(&seq) {
            let r = parse_record_with(&Place::Line(0), &value, plan.limits, true)
                .map_err(|_| Fallback)?;
            out.push((r.seq, r.id, r.digest.ok_or(Fallback)?));
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
                            .filter(|l| !json::is_blank(l.as_bytes()))
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
    let start = prefix.iter().position(|&b| !json::is_whitespace(b))?;
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
                let end = document::value_end(text, at).ok_or(Fallback)?;
                let item = text.get(at..end).ok_or(Fallback)?;
                if !document::record_depth_ok(item.as_bytes()) {
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

#[cfg(test)]
mod tests;
