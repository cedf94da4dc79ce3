//! In view (SPEC 10): which records the agent can have read in its live context.
//!
//! A record is in view when its `text`, whitespace-normalised, occurs in one
//! whitespace-normalised string of the live context, as a whole: not as the start or
//! end of a longer word or number there (an invisible character, a soft hyphen or a
//! zero-width joiner, joins what it stands between). Normalising turns every run of
//! whitespace into one space and trims the ends; control characters count as
//! whitespace too. In a record's text, so do the other characters a report escapes
//! (bidirectional marks and overrides, the BOM), so that the text carried back to the
//! model in a hook's reason (where such characters cannot go as they are) comes back
//! into view; in the live context those are invisible characters, kept, that join what
//! they stand between: made spaces there, they would split words the agent read joined.
//! A record without `text`, or whose text is only whitespace, is never in view.
//!
//! Every text is looked for in every string at once: the strings are joined by a line
//! break (which no normalised string holds), and at each place a text can start, the
//! distinct texts whose first bytes are there (found by a hash of those bytes) are
//! compared whole. Where many texts start alike, they are told apart by the hash of
//! their next 16 bytes, and so on, so that a place is compared only with the texts that
//! start as the context does there. The cost is the texts plus the live context, not
//! their product, unless many texts share a start of more than 272 bytes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::compaction::{Compaction, Retention};
use crate::memory::Pages;
use crate::record::Store;
use crate::report::TranscriptSummary;
use crate::text::is_invisible;
use crate::transcript::Live;

/// What the agent sees: a transcript's live context and the instruction files named
/// with `--context-file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The transcript file, as named.
    pub file: String,
    /// True when its format was recognised rather than named.
    pub detected: bool,
    /// Its live context.
    pub live: Live,
    /// Each context file's name and the strings of its text that the harness sends (one
    /// for the whole text unless the harness leaves parts out).
    pub files: Vec<(String, Vec<String>)>,
    /// The live contexts of the subagents at work when the caller cannot be told apart
    /// from them (Gemini CLI): a record is in view only when each of them shows it too.
    pub also: Vec<Live>,
    /// Memory for the first haystack (see [`Spare`]).
    pub spare: Spare,
}

/// Memory a context lends its first haystack: the memory the transcript's end was read
/// into, of no use once its live context is taken out of it, whose pages are touched
/// already (a haystack the size of a live context of a megabyte would otherwise touch as
/// many afresh). Not part of what a context is: a clone has none, and contexts are equal
/// whatever their spare memory.
#[derive(Default)]
pub struct Spare(std::sync::Mutex<Option<Pages>>);

impl Spare {
    /// Memory lent from `pages` (their contents are of no further use).
    pub fn new(pages: Pages) -> Spare {
        Spare(std::sync::Mutex::new(Some(pages)))
    }

    /// The memory, emptied, if it was not taken already.
    fn take(&self) -> Option<Pages> {
        let mut pages = self.0.lock().ok()?.take()?;
        pages.clear();
        Some(pages)
    }
}

impl Clone for Spare {
    fn clone(&self) -> Spare {
        Spare::default()
    }
}

impl PartialEq for Spare {
    fn eq(&self, _: &Spare) -> bool {
        true
    }
}

impl Eq for Spare {}

impl std::fmt::Debug for Spare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spare")
    }
}

impl Context {
    /// Every string of the context: the transcript's, then the files' (each file as
    /// the harness sends it, which may be in pieces).
    pub fn strings(&self) -> impl Iterator<Item = &str> {
        self.live.pieces.iter().map(|p| &*p.text).chain(
            self.files
                .iter()
                .flat_map(|(_, texts)| texts.iter().map(String::as_str)),
        )
    }

    /// What to look for texts in: the context's strings, and each subagent's at work.
    pub fn haystack(&self) -> Haystack {
        let mut haystack = Haystack(Vec::new());
        haystack.also_in(self.strings(), self.spare.take());
        for live in &self.also {
            haystack.also(live.pieces.iter().map(|p| &*p.text));
        }
        haystack
    }

    /// The compaction whose kept set is the records in view (retention `transcript:H`).
    pub fn compaction(&self, store: &Store) -> Compaction {
        let sought = Sought::new(store.records().iter().map(|r| r.text.as_deref()));
        Compaction::from_mask(
            store,
            Retention::Transcript(self.live.harness),
            sought.in_view(&self.haystack()),
        )
    }

    /// The transcript as a report names it.
    pub fn summary(&self) -> TranscriptSummary {
        TranscriptSummary {
            file: self.file.clone(),
            harness: self.live.harness.name().to_string(),
            harness_detected: self.detected,
            last_compaction_byte: self.live.compaction,
            live_strings: self.strings().count(),
        }
    }
}

/// True for a character that normalising a record's text turns into a space: white
/// space and the characters a report never prints as they are (see
/// [`crate::text::is_unsafe`]), as the hook's reason writes the text back.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || crate::text::is_unsafe(c)
}

/// True for a character that normalising a string of the live context turns into a
/// space: white space and control characters. The invisible format characters among the
/// unsafe ones (bidirectional marks, embeddings and isolates, the byte order mark) stay:
/// they join what stands either side of them for the reader (see [`is_invisible`]), and
/// made spaces they would split `gate\u{feff}marker` into words the agent never read.
fn is_context_space(c: char) -> bool {
    c.is_whitespace() || c.is_control()
}

/// `s` with every run of whitespace (and unsafe characters) made one space, trimmed: a
/// record's text as it is looked for (see [`is_space`]).
pub fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    normalize_into::<false>(&mut out, s);
    out
}

/// What normalising makes of each byte: [`KEEP`] (printable ASCII, a byte of a
/// character no space starts with), [`ASCII_SPACE`] (a space, control or DEL) or
/// [`MAY_BE_SPACE`] (the first byte of a character beyond ASCII that may be a space).
// Indexing in a constant's initialiser is checked when the crate compiles: it cannot
// panic at run time.
#[allow(clippy::indexing_slicing)]
const CLASS: [u8; 256] = {
    let mut class = [KEEP; 256];
    let mut b = 0;
    while b < 256 {
        if b <= 0x20 || b == 0x7f {
            class[b] = ASCII_SPACE;
        } else if may_be_space(b as u8) {
            class[b] = MAY_BE_SPACE;
        }
        b += 1;
    }
    class
};
const KEEP: u8 = 0;
const ASCII_SPACE: u8 = 1;
const MAY_BE_SPACE: u8 = 2;

fn class_of(b: u8) -> u8 {
    CLASS.get(usize::from(b)).copied().unwrap_or(KEEP)
}

/// Appends [`normalize`]`(s)` to `out`; with `CONTEXT`, `s` normalised as a string of the
/// live context is (see [`is_context_space`]).
fn normalize_into<const CONTEXT: bool>(out: &mut String, s: &str) {
    let base = out.len();
    // Runs of characters kept as they are are copied whole; a lone space before a kept
    // byte stays in its run. Beyond ASCII, only a character whose first byte some space
    // starts with is decoded and looked at.
    let mut run = 0;
    let mut i = 0;
    let bytes = s.as_bytes();
    loop {
        // A block at a time while each byte stays as it is, up to the first that may not.
        while let Some(block) = bytes
            .get(i..i + BLOCK)
            .and_then(|b| <[u8; BLOCK]>::try_from(b).ok())
        {
            let after = i > run
                && i.checked_sub(1)
                    .and_then(|p| bytes.get(p))
                    .is_some_and(|&b| printable(b));
            let before = bytes.get(i + BLOCK).is_some_and(|&b| printable(b));
            let kept = plain(block, after, before);
            if kept != ALL {
                i += kept.trailing_ones() as usize;
                break;
            }
            i += BLOCK;
        }
        while bytes.get(i).is_some_and(|&b| class_of(b) == KEEP) {
            i += 1;
        }
        let Some(&b) = bytes.get(i) else {
            break;
        };
        let width = match class_of(b) {
            ASCII_SPACE
                if b == b' '
                    && i > run
                    && bytes.get(i + 1).is_some_and(|&n| class_of(n) == KEEP) =>
            {
                i += 1;
                continue;
            }
            ASCII_SPACE => 1,
            _ => {
                let c = s.get(i..).and_then(|r| r.chars().next()).unwrap_or(' ');
                let space = if CONTEXT {
                    is_context_space(c)
                } else {
                    is_space(c)
                };
                if !space {
                    i += c.len_utf8();
                    continue;
                }
                c.len_utf8()
            }
        };
        push_word(out, base, s.get(run..i).unwrap_or_default());
        i += width;
        run = i;
    }
    push_word(out, base, s.get(run..).unwrap_or_default());
}

/// The bytes the scans of this module look at together (normalising, word starts): one
/// [`Block`].
const BLOCK: usize = 32;

/// [`BLOCK`] bytes as SIMD vectors where the target has them (two of SSE2 on x86_64, of
/// NEON on aarch64), plain code elsewhere: a compare per byte class for the block.
type Block = wide::u8x32;

/// A bit for each byte of a block.
const ALL: u32 = u32::MAX >> (32 - BLOCK);

/// Printable ASCII other than a space: a byte normalising keeps as it is.
fn printable(b: u8) -> bool {
    (0x21..0x7f).contains(&b)
}

/// The bytes of `block` (bit `k` for byte `k`) that normalising keeps as they are, in a
/// run: printable ASCII, and a lone space between two such bytes. `after`: the byte
/// before `block` is one such byte of the run; `before`: the byte after `block` is
/// printable. (A byte beyond ASCII is not marked; the caller looks at it on its own.)
fn plain(block: [u8; BLOCK], after: bool, before: bool) -> u32 {
    let v = Block::new(block);
    let printable = within(v, 0x21, 0x7e).to_bitmask();
    let spaces = v.simd_eq(Block::splat(b' ')).to_bitmask();
    let left = (printable << 1) | u32::from(after);
    let right = (printable >> 1) | u32::from(before) << (BLOCK - 1);
    printable | spaces & left & right
}

/// Each byte of `v` within `lo..=hi` (all its bits set; unsigned: `v - lo`, wrapping,
/// is at most `hi - lo`).
fn within(v: Block, lo: u8, hi: u8) -> Block {
    let d = v - Block::splat(lo);
    d.min(Block::splat(hi.wrapping_sub(lo))).simd_eq(d)
}

/// True for the first byte (in UTF-8) of every character beyond ASCII that
/// [`is_space`] holds: U+0080 to U+00A0, U+061C, U+1680, U+2000 to U+206F, U+3000,
/// U+FEFF. A test checks it against every character.
const fn may_be_space(b: u8) -> bool {
    matches!(b, 0xc2 | 0xd8 | 0xe1 | 0xe2 | 0xe3 | 0xef)
}

/// Appends a word to the normalised text that starts at `base` in `out`.
fn push_word(out: &mut String, base: usize, word: &str) {
    if word.is_empty() {
        return;
    }
    if out.len() > base {
        out.push(' ');
    }
    out.push_str(word);
}

/// The kept mask (aligned with store positions) of the records in view of a live
/// context given as its strings.
#[cfg(test)]
fn in_view<'s>(store: &Store, strings: impl IntoIterator<Item = &'s str>) -> Vec<bool> {
    Sought::new(store.records().iter().map(|r| r.text.as_deref())).in_view(&Haystack::new(strings))
}

/// A live context's strings, normalised and joined by a line break (which no normalised
/// string holds), to look for texts in; with others that must each show a text too (the
/// views of every agent that may be making the call).
pub struct Haystack(Vec<View>);

/// A view's strings, each normalised and followed by a line end, one after another.
enum View {
    /// In memory of their own (a live context's, of a megabyte or so), where they were
    /// written as text only, so always UTF-8.
    Pages(Pages),
    Text(String),
}

impl View {
    fn as_str(&self) -> &str {
        match self {
            // Written from `str`s only: never the empty text that stands in for bytes
            // that are not UTF-8.
            View::Pages(pages) => simdutf8::basic::from_utf8(pages).unwrap_or_default(),
            View::Text(text) => text,
        }
    }
}

/// Views of this many bytes and more are written into memory of their own ([`Pages`]).
const PAGES_FROM: usize = 1 << 18;

impl Haystack {
    /// The haystack of these strings.
    #[cfg(test)]
    pub fn new<'s>(strings: impl IntoIterator<Item = &'s str>) -> Haystack {
        let mut haystack = Haystack(Vec::new());
        haystack.also(strings);
        haystack
    }

    /// Adds a view that must show a text too.
    pub fn also<'s>(&mut self, strings: impl IntoIterator<Item = &'s str>) {
        self.also_in(strings, None);
    }

    /// [`Haystack::also`], written into `memory` (emptied) where it has the room.
    fn also_in<'s>(&mut self, strings: impl IntoIterator<Item = &'s str>, memory: Option<Pages>) {
        // Sized once for all of them (normalising never lengthens a string): a live
        // context of a megabyte is not grown and copied step by step.
        let strings: Vec<&str> = strings.into_iter().collect();
        let most: usize = strings.iter().map(|s| s.len() + 1).sum();
        let pages = match memory {
            Some(mut pages) if pages.room() >= most => {
                pages.clear();
                Some(pages)
            }
            _ if most >= PAGES_FROM => Pages::new(most),
            _ => None,
        };
        if let Some(mut pages) = pages {
            // Each string normalised into one buffer, whose memory is reused, then copied
            // (never short of room: normalising never lengthens a string).
            let mut one = String::new();
            let fits = strings.iter().all(|s| {
                one.clear();
                normalize_into::<true>(&mut one, s);
                one.push('\n');
                pages.push(one.as_bytes())
            });
            if fits {
                self.0.push(View::Pages(pages));
                return;
            }
        }
        let mut view = String::with_capacity(most);
        for s in strings {
            normalize_into::<true>(&mut view, s);
            view.push('\n');
        }
        self.0.push(View::Text(view));
    }
}

/// The texts of records to look for: each distinct normalised text once, and which of
/// them each record carries.
#[derive(Default)]
pub struct Sought {
    /// The distinct normalised texts, one after another.
    texts: String,
    /// Where each distinct text ends in `texts` (it starts where the one before ends).
    ends: Vec<usize>,
    /// Per record, the distinct text it carries ([`NO_TEXT`]: none).
    slots: Vec<usize>,
    /// The last distinct text of each hash of a text.
    index: KeyMap<usize>,
    /// Per distinct text, the one before it of the same hash.
    before: Vec<Option<usize>>,
    /// The distinct texts indexed for the search, once [`Sought::prepare`] has built it
    /// (`None`: [`Sought::in_view`] builds it).
    prepared: Option<Index>,
}

/// The slot of a record without a text (or one that is only whitespace).
const NO_TEXT: usize = usize::MAX;

impl Sought {
    /// The texts of records given in order (`None`: a record without one).
    pub fn new<'t>(texts: impl IntoIterator<Item = Option<&'t str>>) -> Sought {
        let mut sought = Sought::default();
        for text in texts {
            sought.push(text);
        }
        sought
    }

    /// Room for texts of `bytes` bytes in all, as written (normalising never lengthens
    /// them), so that the texts are not grown and copied step by step.
    pub fn reserve(&mut self, bytes: usize) {
        // Only room: without it the texts grow as they come.
        let _ = self.texts.try_reserve(bytes);
    }

    /// Adds the next record's text (`None`: a record without one). Texts added after
    /// [`Sought::prepare`] undo it.
    pub fn push(&mut self, raw: Option<&str>) {
        self.prepared = None;
        let slot = raw.map_or(NO_TEXT, |raw| {
            // Normalised in place after the distinct texts; taken off again when it is
            // one of them already.
            let start = self.texts.len();
            normalize_into::<false>(&mut self.texts, raw);
            self.slot_of_last(start)
        });
        self.slots.push(slot);
    }

    /// Adds the next record, whose text is the one of record `earlier` (counted from 0
    /// in the order given): nothing is normalised again. False when there is no such
    /// record (nothing is added).
    pub fn push_same(&mut self, earlier: usize) -> bool {
        let Some(&slot) = self.slots.get(earlier) else {
            return false;
        };
        self.prepared = None;
        self.slots.push(slot);
        true
    }

    /// The slot of the text normalised at `start..` of `texts`, a new one if no distinct
    /// text is equal to it (it stays), else that one's (it goes).
    fn slot_of_last(&mut self, start: usize) -> usize {
        let Some(text) = self.texts.get(start..).filter(|t| !t.is_empty()) else {
            return NO_TEXT;
        };
        let mut h = Folded::default();
        h.write(text.as_bytes());
        let hash = h.finish();
        let mut at = self.index.get(&hash).copied();
        while let Some(slot) = at {
            if self.text(slot) == Some(text) {
                self.texts.truncate(start);
                return slot;
            }
            at = self.before.get(slot).copied().flatten();
        }
        let slot = self.ends.len();
        self.ends.push(self.texts.len());
        self.before.push(self.index.insert(hash, slot));
        slot
    }

    /// The distinct text in `slot`.
    fn text(&self, slot: usize) -> Option<&str> {
        let start = match slot.checked_sub(1) {
            Some(prev) => *self.ends.get(prev)?,
            None => 0,
        };
        self.texts.get(start..*self.ends.get(slot)?)
    }

    /// The distinct texts, by slot.
    fn distinct(&self) -> Vec<&str> {
        (0..self.ends.len())
            .map(|slot| self.text(slot).unwrap_or_default())
            .collect()
    }

    /// Indexes the texts for [`Sought::in_view`] now (which would otherwise do it): on a
    /// thread that has the texts while another is still reading the live context, say.
    pub fn prepare(&mut self) {
        if self.prepared.is_none() {
            self.prepared = Some(Index::new(&self.distinct()));
        }
    }

    /// The in-view mask of the records, in the order they were given.
    pub fn in_view(&self, haystack: &Haystack) -> Vec<bool> {
        let distinct = self.distinct();
        let built;
        let index = match &self.prepared {
            Some(index) => index,
            None => {
                built = Index::new(&distinct);
                &built
            }
        };
        // In view of every view: found in the first, and then in each of the others.
        let mut found = vec![true; distinct.len()];
        for view in &haystack.0 {
            for (f, seen) in found
                .iter_mut()
                .zip(index.occurring(&distinct, view.as_str()))
            {
                *f &= seen;
            }
        }
        self.slots
            .iter()
            .map(|&slot| found.get(slot).copied().unwrap_or(false))
            .collect()
    }
}

/// Most bytes of a text's start it is looked up by: a text is looked for where its first
/// bytes occur, and compared whole there.
const KEY: usize = 16;

/// Up to eight bytes as one word (zeros after them).
fn word_of(bytes: &[u8]) -> u64 {
    if let Some(whole) = bytes.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
        return u64::from_le_bytes(whole);
    }
    let mut word = [0u8; 8];
    for (w, b) in word.iter_mut().zip(bytes) {
        *w = *b;
    }
    u64::from_le_bytes(word)
}

/// The key of a text's first `len` bytes (at most [`KEY`]; the caller keeps texts of
/// each key length apart).
pub(crate) fn key_of(bytes: &[u8], len: usize) -> u64 {
    let (low, high) = head_words(bytes.get(..len).unwrap_or(bytes));
    key_of_words(low, high)
}

/// The first [`KEY`] of `bytes` as two words (as [`word_of`] reads them: zeros after
/// the last): the key of the first `len` is [`key_of_words`] of their
/// [`first_bytes`]`(len)` and `(len - 8)`.
fn head_words(bytes: &[u8]) -> (u64, u64) {
    // Most places have KEY bytes after them: two words read whole.
    if let Some((low, high)) = bytes
        .first_chunk::<KEY>()
        .and_then(|head| head.split_first_chunk::<8>())
        .and_then(|(low, rest)| Some((low, rest.first_chunk::<8>()?)))
    {
        return (u64::from_le_bytes(*low), u64::from_le_bytes(*high));
    }
    let (low, high) = bytes.split_at(bytes.len().min(8));
    (word_of(low), word_of(high))
}

/// The key of the bytes whose first eight are `low` and next eight `high` (as
/// [`word_of`] reads them: zeros after the last).
fn key_of_words(low: u64, high: u64) -> u64 {
    let mut h = Folded::default();
    h.mix(low);
    h.mix(high);
    h.0
}

/// The bits of a word's first `n` bytes (as [`word_of`] reads them): all of them from 8
/// on.
fn first_bytes(n: usize) -> u64 {
    u32::try_from(8 * n)
        .ok()
        .and_then(|bits| 1u64.checked_shl(bits))
        .map_or(u64::MAX, |bit| bit - 1)
}

/// A fast hash of the keys of this module's maps (see [`Hashed`]): a text's first bytes
/// and normalised texts, never chosen to collide by anyone but the store's own author.
#[derive(Default)]
struct Folded(u64);

impl Folded {
    fn mix(&mut self, word: u64) {
        let m = u128::from(self.0 ^ word) * 0x9E37_79B9_7F4A_7C15_u128;
        self.0 = (m >> 64) as u64 ^ m as u64;
    }
}

impl Hasher for Folded {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            self.mix(word_of(chunk));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }
}

/// A `Hasher` for keys that are hashes already (see [`key_of`]): they pass through.
#[derive(Default)]
pub(crate) struct Hashed(u64);

impl Hasher for Hashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            self.0 ^= word_of(chunk);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map keyed by [`key_of`].
pub(crate) type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<Hashed>>;

/// [`Index::occurring`] with a new index of `texts`.
#[cfg(test)]
fn occurring(texts: &[&str], haystack: &str) -> Vec<bool> {
    Index::new(texts).occurring(texts, haystack)
}

impl Index {
    /// Which of `texts` (the ones this index was built of) occur in `haystack`, as a
    /// whole (see [`bounded`]). A text can start only where its first byte is, and one
    /// that starts with a letter or digit only where no letter or digit comes before it:
    /// at each such place the texts whose first bytes are there are compared whole (see
    /// the module's note on texts that start alike).
    fn occurring(&self, texts: &[&str], haystack: &str) -> Vec<bool> {
        let len = haystack.len();
        // A long haystack is looked through in two halves at once (a text may run past
        // the end of the half it starts in).
        if len < PARALLEL_FROM {
            return self.found(texts, haystack, 0..len);
        }
        let half = len / 2;
        let (first, second) = std::thread::scope(|scope| {
            let other = std::thread::Builder::new()
                .spawn_scoped(scope, || self.found(texts, haystack, half..len));
            let first = self.found(texts, haystack, 0..half);
            // No second thread (a resource limit), or it did not finish: this one does it.
            let second = other
                .ok()
                .and_then(|h| h.join().ok())
                .unwrap_or_else(|| self.found(texts, haystack, half..len));
            (first, second)
        });
        first.into_iter().zip(second).map(|(a, b)| a || b).collect()
    }
}

/// Haystacks from this many bytes on are looked through on two threads.
const PARALLEL_FROM: usize = 1 << 18;

/// The texts by where they can start and by their first bytes.
struct Index {
    /// The texts by the length of the key they are looked up by, then by that key.
    by_key: Vec<KeyMap<Group>>,
    /// Per first byte: 1 when a text that starts with it starts with a letter, a digit or
    /// a combining mark (it needs none of these before it), 2 when one starts otherwise.
    starts: [u8; 256],
    /// The key lengths some text has, each with the bits of the two words of a place's
    /// first [`KEY`] bytes its key is made of (see [`key_of_words`]).
    lengths: Vec<(usize, u64, u64)>,
    /// The keys the texts have (see [`Keys`]): most places a word starts at start no
    /// text, and are told so without a look in `by_key`.
    keys: Keys,
    /// The first bytes of the texts, when there are at most three: the places to look at
    /// are then found with `memchr` rather than byte by byte.
    firsts: Option<Vec<u8>>,
    /// The ASCII bytes that start a text that does not start with a letter or digit,
    /// when there are at most three: only word starts and these need a look in a run of
    /// ASCII (see [`word_starts`]).
    marks: Option<Vec<u8>>,
}

/// The keys of the texts (of every key length), as a set that may hold a key it was not
/// given but never lacks one it was: a bit for each value of 16 bits of a key, 8 KiB.
/// A key at a place where no text starts almost always finds its bit unset, for a few
/// instructions, where a look in a map of thousands of texts costs several times as many.
struct Keys(Box<[u64; KEYS_WORDS]>);

/// The words of [`Keys`]: 2^16 bits.
const KEYS_WORDS: usize = 1 << 10;

impl Default for Keys {
    fn default() -> Keys {
        Keys(Box::new([0; KEYS_WORDS]))
    }
}

impl Keys {
    /// The word and bit of a key: 16 of its bits (a key is a hash already, see
    /// [`key_of`]; the maps' tables use its lowest and highest bits).
    fn bit(key: u64) -> (usize, u64) {
        let bits = (key >> 32) as usize;
        ((bits >> 6) % KEYS_WORDS, 1 << (bits & 63))
    }

    fn insert(&mut self, key: u64) {
        let (word, bit) = Keys::bit(key);
        if let Some(w) = self.0.get_mut(word) {
            *w |= bit;
        }
    }

    /// False only when no key inserted is `key`.
    fn may_hold(&self, key: u64) -> bool {
        let (word, bit) = Keys::bit(key);
        self.0.get(word).is_none_or(|w| w & bit != 0)
    }
}

/// Most texts a group holds before it is told apart by further bytes.
const FEW: usize = 8;

/// Most times a group is told apart by further bytes: texts that start alike for longer
/// than `KEY * (1 + DEEPEST)` bytes are compared whole.
const DEEPEST: usize = 16;

/// Texts that start alike (the key that leads here, and the keys of the groups above):
/// their first `depth` bytes. A few are compared whole where the group is reached; once
/// there are more than [`FEW`], each longer text is kept by the key of its next bytes,
/// so that a place is compared only with the texts that start as the haystack does there
/// (many texts that share a long start would otherwise each be compared at each place
/// that start occurs).
#[derive(Default)]
struct Group {
    /// Texts compared whole where the group is reached.
    whole: Few,
    /// The texts told apart by further bytes, when there were too many (boxed: most
    /// groups hold a text or two, and a small group keeps the index small).
    apart: Option<Box<Split>>,
}

/// Texts (their indices), the first held in place: most groups hold one text, which is
/// then reached without a pointer to follow, nor an allocation to make.
struct Few {
    /// The first text ([`NO_TEXT`]: none).
    first: usize,
    /// The others, in the order they came.
    more: Vec<usize>,
}

impl Default for Few {
    fn default() -> Few {
        Few {
            first: NO_TEXT,
            more: Vec::new(),
        }
    }
}

impl Few {
    fn push(&mut self, i: usize) {
        if self.first == NO_TEXT {
            self.first = i;
        } else {
            self.more.push(i);
        }
    }

    fn len(&self) -> usize {
        usize::from(self.first != NO_TEXT) + self.more.len()
    }

    /// The texts, in the order they came.
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (self.first != NO_TEXT)
            .then_some(self.first)
            .into_iter()
            .chain(self.more.iter().copied())
    }
}

/// The texts of a [`Group`] told apart by the bytes after its start.
#[derive(Default)]
struct Split {
    /// Texts with fewer than [`KEY`] bytes after the group's start, by how many (1 to
    /// `KEY - 1`), then by the key of those bytes.
    ends: Vec<(usize, KeyMap<Vec<usize>>)>,
    /// Texts with [`KEY`] bytes or more after the group's start, by the key of the next
    /// [`KEY`].
    deeper: KeyMap<Group>,
}

impl Group {
    /// Tells the texts of a group whose first `depth` bytes are alike apart by their next
    /// bytes, when there are too many to compare whole.
    fn split(&mut self, texts: &[&str], depth: usize, level: usize) {
        if self.whole.len() <= FEW || level >= DEEPEST {
            return;
        }
        let mut split = Split::default();
        for i in std::mem::take(&mut self.whole).iter() {
            let rest = texts
                .get(i)
                .and_then(|t| t.as_bytes().get(depth..))
                .unwrap_or_default();
            match rest.len() {
                0 => self.whole.push(i),
                n if n < KEY => {
                    let at = match split.ends.iter().position(|(len, _)| *len == n) {
                        Some(at) => at,
                        None => {
                            split.ends.push((n, KeyMap::default()));
                            split.ends.len() - 1
                        }
                    };
                    if let Some((_, map)) = split.ends.get_mut(at) {
                        map.entry(key_of(rest, n)).or_default().push(i);
                    }
                }
                _ => split
                    .deeper
                    .entry(key_of(rest, KEY))
                    .or_default()
                    .whole
                    .push(i),
            }
        }
        for group in split.deeper.values_mut() {
            group.split(texts, depth + KEY, level + 1);
        }
        self.apart = Some(Box::new(split));
    }

    /// Calls `each` with every text of this group (reached with the haystack's `rest`
    /// from the place looked at, whose first `depth` bytes led here) that may start
    /// there.
    fn candidates(&self, rest: &[u8], depth: usize, mut each: impl FnMut(usize)) {
        let mut group = self;
        let mut depth = depth;
        loop {
            group.whole.iter().for_each(&mut each);
            let Some(split) = &group.apart else {
                return;
            };
            for (n, map) in &split.ends {
                if let Some(ends) = rest
                    .get(depth..depth + n)
                    .and_then(|w| map.get(&key_of(w, *n)))
                {
                    ends.iter().for_each(|&i| each(i));
                }
            }
            match rest
                .get(depth..depth + KEY)
                .and_then(|w| split.deeper.get(&key_of(w, KEY)))
            {
                Some(next) => {
                    group = next;
                    depth += KEY;
                }
                None => return,
            }
        }
    }
}

impl Index {
    fn new(texts: &[&str]) -> Index {
        // Each map sized for its texts at once, rather than grown and rehashed.
        let mut per_length = [0usize; KEY + 1];
        for text in texts {
            if let Some(n) = per_length.get_mut(text.len().min(KEY)) {
                *n += 1;
            }
        }
        let mut by_key: Vec<KeyMap<Group>> = per_length
            .iter()
            .map(|&n| KeyMap::with_capacity_and_hasher(n, Default::default()))
            .collect();
        let mut starts = [0u8; 256];
        let mut keys = Keys::default();
        for (i, text) in texts.iter().enumerate() {
            let bytes = text.as_bytes();
            let len = bytes.len().min(KEY);
            let (Some(map), Some(&first)) = (by_key.get_mut(len), bytes.first()) else {
                continue;
            };
            let key = key_of(bytes, len);
            keys.insert(key);
            map.entry(key).or_default().whole.push(i);
            if let Some(s) = starts.get_mut(usize::from(first)) {
                *s |= if word(text.chars().next()) { 1 } else { 2 };
            }
        }
        for (len, map) in by_key.iter_mut().enumerate() {
            for group in map.values_mut() {
                group.split(texts, len, 0);
            }
        }
        let lengths = (1..=KEY)
            .filter(|&l| by_key.get(l).is_some_and(|m| !m.is_empty()))
            .map(|l| (l, first_bytes(l), first_bytes(l.saturating_sub(8))))
            .collect();
        let marks: Vec<u8> = (0..0x80)
            .filter(|&b| starts.get(usize::from(b)).is_some_and(|&s| s & 2 != 0))
            .collect();
        let firsts: Vec<u8> = (0..=u8::MAX)
            .filter(|&b| starts.get(usize::from(b)).is_some_and(|&s| s != 0))
            .collect();
        Index {
            by_key,
            starts,
            lengths,
            keys,
            firsts: (firsts.len() <= 3).then_some(firsts),
            marks: (marks.len() <= 3).then_some(marks),
        }
    }

    /// Which texts occur in `haystack` starting within `range`.
    fn found(&self, texts: &[&str], haystack: &str, range: std::ops::Range<usize>) -> Vec<bool> {
        let mut found = vec![false; texts.len()];
        let bytes = haystack.as_bytes();
        let (start, end) = (range.start, range.end.min(bytes.len()));
        let part = bytes.get(start..end).unwrap_or_default();
        let mut look = |at: usize| self.look::<false>(texts, haystack, at, &mut found);
        match self.firsts.as_deref() {
            Some(&[a]) => memchr::memchr_iter(a, part).for_each(|i| look(start + i)),
            Some(&[a, b]) => memchr::memchr2_iter(a, b, part).for_each(|i| look(start + i)),
            Some(&[a, b, c]) => memchr::memchr3_iter(a, b, c, part).for_each(|i| look(start + i)),
            Some(_) if self.lengths.is_empty() => {}
            // Word starts and up to three ASCII signs some text starts with, a block at
            // a time; else every place.
            _ => match self.marks.as_deref() {
                Some(marks) => {
                    word_starts(haystack, start, end, marks, |at| {
                        self.look::<true>(texts, haystack, at, &mut found);
                    });
                }
                None => (start..end).for_each(look),
            },
        }
        found
    }

    /// Notes in `found` each text that occurs in `haystack` starting at byte `at`
    /// (`WORD_STARTS`: a place [`word_starts`] gave).
    // Inlined into each loop over places: most places start no text, and are told so
    // by their first byte, the character before or the keys set, for a few instructions.
    #[inline(always)]
    fn look<const WORD_STARTS: bool>(
        &self,
        texts: &[&str],
        haystack: &str,
        at: usize,
        found: &mut [bool],
    ) {
        let bytes = haystack.as_bytes();
        let Some(&b) = bytes.get(at) else {
            return;
        };
        match self.starts.get(usize::from(b)) {
            None | Some(0) => return,
            Some(1) => {
                // An ASCII letter or digit that `word_starts` gave after an ASCII byte
                // follows no letter or digit: it told so with the block.
                let before = at.checked_sub(1).and_then(|i| bytes.get(i));
                let told = WORD_STARTS && b.is_ascii() && before.is_none_or(u8::is_ascii);
                if !told && word(char_before(haystack, at)) {
                    return;
                }
            }
            Some(_) => {}
        }
        // The first KEY bytes from `at` as two words, read once for the key of every
        // length (see `key_of`).
        let rest = bytes.get(at..).unwrap_or_default();
        let (low, high) = head_words(rest);
        for &(len, low_bits, high_bits) in &self.lengths {
            if len > rest.len() {
                break;
            }
            let key = key_of_words(low & low_bits, high & high_bits);
            if self.keys.may_hold(key) {
                self.compare(texts, haystack, at, len, key, found);
            }
        }
    }

    /// Notes in `found` each text whose first `len` bytes have `key` that occurs in
    /// `haystack` starting at byte `at`.
    #[inline(never)]
    fn compare(
        &self,
        texts: &[&str],
        haystack: &str,
        at: usize,
        len: usize,
        key: u64,
        found: &mut [bool],
    ) {
        let Some(group) = self.by_key.get(len).and_then(|map| map.get(&key)) else {
            return;
        };
        let rest = haystack.as_bytes().get(at..).unwrap_or_default();
        group.candidates(rest, len, |i| {
            if let (Some(f), Some(t)) = (found.get_mut(i), texts.get(i))
                && !*f
                && rest.starts_with(t.as_bytes())
                && bounded(haystack, t, at, at + t.len())
            {
                *f = true;
            }
        });
    }
}

/// Calls `each` with the places in `start..end` of a haystack where a text may start,
/// in order, found a [`Block`] at a time: each ASCII letter or digit that follows no
/// letter or digit (no ASCII one within the haystack, none at all at `start`), each of
/// the `marks` (ASCII signs some text starts with), and each first byte of a character
/// beyond ASCII. (`look` decides at each, and tells apart a letter or digit after a
/// letter beyond ASCII.)
// Inlined into its caller with the look at each place (see `Index::look`): a loop over
// the blocks and one over each block's places, their state in registers.
#[inline(always)]
fn word_starts(
    haystack: &str,
    start: usize,
    end: usize,
    marks: &[u8],
    mut each: impl FnMut(usize),
) {
    let bytes = haystack.as_bytes();
    let end = end.min(bytes.len());
    // Whether the byte before `at` is an ASCII letter or digit (at the start: whether the
    // character before is a letter or digit).
    let mut after_word = word(char_before(haystack, start));
    let mut at = start;
    while at < end {
        let (block, within) = match bytes.get(at..end).and_then(|b| b.first_chunk::<BLOCK>()) {
            Some(block) => (*block, ALL),
            None => {
                // Fewer than a block's bytes left: scanned as a block with zeros after
                // them, the places past them dropped.
                let rest = bytes.get(at..end).unwrap_or_default();
                let mut block = [0u8; BLOCK];
                for (b, r) in block.iter_mut().zip(rest) {
                    *b = *r;
                }
                (block, ALL >> (BLOCK - rest.len().min(BLOCK)))
            }
        };
        let (alnum, others) = starts_of(block, marks);
        let mut places = (alnum & !((alnum << 1) | u32::from(after_word)) | others) & within;
        after_word = alnum >> (BLOCK - 1) != 0;
        while places != 0 {
            each(at + places.trailing_zeros() as usize);
            places &= places - 1;
        }
        at += BLOCK;
    }
}

/// The ASCII letters and digits of `block`, and its bytes that are one of the `marks` or
/// the first byte of a character beyond ASCII (bit `k` for byte `k`).
fn starts_of(block: [u8; BLOCK], marks: &[u8]) -> (u32, u32) {
    let v = Block::new(block);
    // A letter, either case: `| 0x20` makes `A`..`Z` (and only them) `a`..`z`.
    let alnum = within(v | Block::splat(0x20), b'a', b'z') | within(v, b'0', b'9');
    // 0b11xxxxxx: the first byte of a character beyond ASCII (the bytes after it in that
    // character are 0b10xxxxxx, and start no text).
    let beyond = v.max(Block::splat(0xc0)).simd_eq(v);
    let others = marks
        .iter()
        .fold(beyond, |m, &b| m | v.simd_eq(Block::splat(b)));
    (alnum.to_bitmask(), others.to_bitmask())
}

/// A letter or digit, or a combining mark (which makes another letter of the one it
/// follows: `gate` + U+0300 reads `gatè`): what a text must not touch at either end.
fn word(c: Option<char>) -> bool {
    c.is_some_and(|c| {
        if c.is_ascii() {
            return c.is_ascii_alphanumeric();
        }
        c.is_alphanumeric()
            || matches!(c, '\u{300}'..='\u{36f}' | '\u{1ab0}'..='\u{1aff}' | '\u{1dc0}'..='\u{1dff}' | '\u{20d0}'..='\u{20ff}' | '\u{fe20}'..='\u{fe2f}')
    })
}

/// The character before byte `at` of `s` (`None` at its start or off a boundary).
fn char_before(s: &str, at: usize) -> Option<char> {
    match at.checked_sub(1).and_then(|i| s.as_bytes().get(i)) {
        Some(&b) if b < 0x80 => Some(char::from(b)),
        Some(_) => s.get(..at).and_then(|h| h.chars().next_back()),
        None => None,
    }
}

/// True when the text found at `start..end` of the haystack is not part of a longer
/// word or number there: a text that starts (ends) with a letter or digit needs no
/// letter or digit just before (after) it, nor one joined to it by a hyphen, an
/// underscore, an apostrophe, a dot or a slash, in any of their forms (a compound, a
/// name, a file, a path, a decimal: see [`joins`]), nor (for a digit) a digit joined to
/// it by a thousands separator, a space among them (see [`grouped`]). An invisible
/// character (see [`is_invisible`]) is not there: what it stands between is joined.
/// `Refunds over 500` does not occur in
/// `Refunds over 5000 need approval`, nor in `Refunds over 500,000`, `500 000` or
/// `500.50`; `touch gate` does not occur in `touch gate-marker`, `touch gate.bak` or
/// `touch gate\u{ad}marker`: the agent read another rule.
fn bounded(haystack: &str, text: &str, start: usize, end: usize) -> bool {
    let (head, tail) = (
        haystack.get(..start).unwrap_or_default(),
        haystack.get(end..).unwrap_or_default(),
    );
    let (mut before, mut after) = (seen(head.chars().rev()), seen(tail.chars()));
    !(goes_on(&mut seen(text.chars()), &mut before)
        || goes_on(&mut seen(text.chars().rev()), &mut after)
        || grouped(text, head, tail))
}

/// The characters a reader sees: without the invisible ones, which join what stands
/// either side of them (`gate\u{ad}marker` reads `gatemarker`, or `gate-marker` at a
/// line's end; a zero-width joiner or a word joiner shows nothing).
fn seen(chars: impl Iterator<Item = char>) -> impl Iterator<Item = char> {
    chars.filter(|&c| !is_invisible(c))
}

/// True when the number a text ends (starts) with goes on past one space as a group of
/// three digits (is one): thousands set apart by a space, or by the no-break or thin
/// space that normalising made one (`500 000`, `1 500`, `500\u{202f}000`). Another number
/// after a space (`500 2 times`, `500 2024`) is another word.
/// Invisible characters are not there (see [`bounded`]).
fn grouped(text: &str, head: &str, tail: &str) -> bool {
    let digit = |c: &char| c.is_ascii_digit();
    let three = |chars: &mut dyn Iterator<Item = char>| chars.take_while(digit).count() == 3;
    let spaced = |chars: &mut dyn Iterator<Item = char>| chars.next() == Some(' ');
    let ends = seen(text.chars().rev()).next().as_ref().is_some_and(digit) && {
        let mut after = seen(tail.chars());
        spaced(&mut after) && three(&mut after)
    };
    let starts = three(&mut seen(text.chars())) && {
        let mut before = seen(head.chars().rev());
        spaced(&mut before) && before.next().as_ref().is_some_and(digit)
    };
    ends || starts
}

/// True when the word or number at the end (start) of a text goes on in the haystack's
/// characters `next` to it, outward; `edge` gives the text's characters from that end
/// inward. A text that ends (starts) with a sign that joins (see [`joins`]), or a comma
/// after a digit, right after (before) a letter or digit ends (starts) inside a word
/// when the haystack goes on with a letter or digit there: `touch gate.` does not occur
/// in `touch gate.bak`, nor `/srv/data/` in `/srv/data/cache`, as `touch gate` does not.
fn goes_on(edge: &mut impl Iterator<Item = char>, next: &mut impl Iterator<Item = char>) -> bool {
    let Some(last) = edge.next() else {
        return false;
    };
    // The sign that may join the text's word to one of the haystack's, with the
    // characters either side of it: the text's own last character, or the haystack's
    // next one after a text that ends with a letter or digit.
    let (inside, sign) = if word(Some(last)) {
        match next.next() {
            c @ Some(_) if word(c) => return true,
            Some(c) => (Some(last), c),
            None => return false,
        }
    } else {
        (edge.next(), last)
    };
    let outside = next.next();
    match sign {
        ',' => {
            inside.is_some_and(|c| c.is_ascii_digit())
                && outside.is_some_and(|c| c.is_ascii_digit())
        }
        c => joins(c) && word(inside) && word(outside),
    }
}

/// A character that joins two words into one (a compound, a name, a file, a path, a
/// decimal, an address, a tag): a hyphen (a figure dash, an en dash and a minus sign
/// too), an underscore, an apostrophe (and what stands in for one), a dot, a slash or a
/// backslash, in each of the forms a writer or a model may use (`gate\u{2011}marker`,
/// with the no-break hyphen models often write, is one word as `gate-marker` is;
/// `gate\\x`, a Windows path, as `gate/x` is), and a colon, an at sign, a plus sign or
/// a tilde (`gate:latest`, `gate@host`, `gate+x`, `gate~1`). An em dash sets clauses
/// apart, and does not join.
fn joins(c: char) -> bool {
    matches!(
        c,
        // Hyphens and dashes that join.
        '-' | '\u{58a}'
            | '\u{1400}'
            | '\u{2010}'
            | '\u{2011}'
            | '\u{2012}'
            | '\u{2013}'
            | '\u{2027}'
            | '\u{2043}'
            | '\u{2212}'
            | '\u{2e17}'
            | '\u{30a0}'
            | '\u{fe63}'
            | '\u{ff0d}'
            // Underscores.
            | '_'
            | '\u{2017}'
            | '\u{fe33}'
            | '\u{fe34}'
            | '\u{fe4d}'
            ..='\u{fe4f}'
            | '\u{ff3f}'
            // Apostrophes, and the marks typed for one.
            | '\''
            | '`'
            | '\u{b4}'
            | '\u{2018}'
            | '\u{2019}'
            | '\u{201b}'
            | '\u{2032}'
            | '\u{ff07}'
            // Dots.
            | '.'
            | '\u{b7}'
            | '\u{2024}'
            | '\u{2025}'
            | '\u{2e31}'
            | '\u{30fb}'
            | '\u{fe52}'
            | '\u{ff0e}'
            | '\u{ff61}'
            | '\u{ff65}'
            // Slashes and backslashes.
            | '/'
            | '\\'
            | '\u{2044}'
            | '\u{2215}'
            | '\u{29f5}'
            | '\u{29f8}'
            | '\u{29f9}'
            | '\u{ff0f}'
            | '\u{ff3c}'
            // Names, addresses, tags, versions.
            | ':'
            | '@'
            | '+'
            | '~'
            | '\u{ff1a}'
            | '\u{ff20}'
            | '\u{ff0b}'
            | '\u{ff5e}'
    )
}

/// Whether `text` occurs in `haystack` as a whole, trying every position (occurrences
/// may overlap: the first may be part of a longer word and a later one not): the plain
/// definition the tests hold [`occurring`] to.
#[cfg(test)]
fn occurs_at_all(haystack: &str, text: &str) -> bool {
    haystack.char_indices().any(|(start, _)| {
        haystack
            .get(start..)
            .is_some_and(|rest| rest.starts_with(text))
            && bounded(haystack, text, start, start + text.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(texts: &[Option<&str>]) -> Store {
        let lines: Vec<String> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let text = t
                    .map(|t| format!(",\"text\":{}", serde_json::Value::String(t.to_string())))
                    .unwrap_or_default();
                format!("{{\"id\":\"r{i}\",\"seq\":{i},\"kind\":\"chatter\"{text}}}")
            })
            .collect();
        crate::input::load("t", lines.join("\n").as_bytes(), Default::default())
            .unwrap()
            .store
    }

    #[test]
    fn a_haystack_written_into_spare_memory_is_the_same_haystack() {
        let strings = ["Refunds over 5,000\tneed a human.", "  é\u{2028}x ", ""];
        let longest = "x\u{a0} y ".repeat(PAGES_FROM / 4);
        let strings_of = |long: bool| {
            let mut all = strings.to_vec();
            if long {
                all.push(longest.as_str());
            }
            all
        };
        let views = |h: &Haystack| {
            h.0.iter()
                .map(|v| v.as_str().to_string())
                .collect::<Vec<_>>()
        };
        let pages_of = |bytes: &[u8], room: usize| {
            let mut pages = Pages::new(room).unwrap();
            assert!(pages.push(bytes));
            Some(pages)
        };
        for long in [false, true] {
            let strings = strings_of(long);
            let fresh = Haystack::new(strings.iter().copied());
            assert!(matches!(fresh.0[0], View::Pages(_)) == long);
            // Memory that held other bytes (not text at all), with room enough or not.
            let other = b"\xff\xfe not text at all".repeat(100);
            for memory in [pages_of(&other, 1 << 21), pages_of(b"xy", 2), None] {
                let mut reused = Haystack(Vec::new());
                reused.also_in(strings.iter().copied(), memory);
                assert_eq!(views(&reused), views(&fresh));
            }
        }
        // A spare is lent once, emptied; a clone has none; it never makes contexts differ.
        let spare = Spare::new(pages_of(b"old bytes", 9).unwrap());
        assert!(spare.clone().take().is_none());
        assert_eq!(spare, Spare::default());
        let taken = spare.take().unwrap();
        assert!(taken.is_empty() && taken.room() >= 9);
        assert!(spare.take().is_none());
    }

    #[test]
    fn normalising_makes_runs_one_space_and_trims() {
        assert_eq!(normalize("  a \t\n b\u{a0}c  "), "a b c");
        assert_eq!(normalize("a\u{1b}b\u{202e}c"), "a b c");
        assert_eq!(normalize("\n\t "), "");
        assert_eq!(normalize("é\u{2028}\u{7f}x\u{85}ü "), "é x ü");
        assert_eq!(
            normalize("Refunds over €5,000 need a \"human\" approver."),
            "Refunds over €5,000 need a \"human\" approver."
        );
    }

    #[test]
    fn a_text_is_in_view_when_it_occurs_in_one_string() {
        let s = store(&[
            Some("Refunds over 5,000\nneed a human approver."),
            Some("split across"),
            None,
            Some("  "),
            Some("need a human"),
            Some("Refunds over 5,000 need a human approver."),
        ]);
        let live = [
            "The user said: refunds   over...",
            "Refunds over 5,000 need\ta human approver. Noted.",
            "split",
            "across",
        ];
        assert_eq!(
            in_view(&s, live.iter().copied()),
            [true, false, false, false, true, true]
        );
        assert_eq!(in_view(&s, []), [false; 6]);
    }

    #[test]
    fn a_space_at_either_edge_of_a_block_is_kept_only_when_lone() {
        for k in 0..2 * BLOCK + 4 {
            for (head, tail) in [
                ("", " "),
                ("", "  b"),
                ("", " \tb"),
                ("", " é"),
                ("", " \u{a0}b"),
                (" ", " b"),
                ("é ", "b c"),
                ("\t", "b c"),
            ] {
                let s = format!("{head}{}{tail}", "a".repeat(k));
                let words: Vec<&str> = s.split(is_space).filter(|w| !w.is_empty()).collect();
                assert_eq!(normalize(&s), words.join(" "), "{s:?}");
            }
        }
    }

    /// [`occurring`] finds each of `texts` in the strings `live` (joined as a haystack
    /// joins them) exactly when it occurs in one of them.
    fn found_exactly_where_they_occur(
        texts: &[String],
        live: &[String],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let distinct: Vec<&str> = texts.iter().map(String::as_str).collect();
        let found = occurring(&distinct, &live.join("\n"));
        for (text, f) in texts.iter().zip(found) {
            let occurs = live.iter().any(|l| occurs_at_all(l, text));
            proptest::prop_assert_eq!(f, occurs, "{:?} in {:?}", text, live);
        }
        Ok(())
    }

    proptest::proptest! {
        #[test]
        fn normalising_agrees_with_splitting_on_spaces(s in "[a b.\t\n\u{1b}\u{7f}é×\u{85}\u{a0}\u{202e}\u{3000}\u{feff}🙂]{0,40}") {
            let words: Vec<&str> = s.split(is_space).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(normalize(&s), words.join(" "));
        }

        #[test]
        fn normalising_the_live_context_agrees_with_splitting_on_its_spaces(s in "[a b.\t\n\u{1b}\u{7f}é×\u{85}\u{a0}\u{202e}\u{3000}\u{feff}\u{61c}🙂]{0,40}") {
            let words: Vec<&str> = s.split(is_context_space).filter(|w| !w.is_empty()).collect();
            let mut normal = String::new();
            normalize_into::<true>(&mut normal, &s);
            proptest::prop_assert_eq!(normal, words.join(" "));
        }

        #[test]
        fn normalising_mostly_plain_text_agrees_with_splitting_on_spaces(s in "[ab.~ \t\u{1f}\u{7f}é]{0,80}") {
            let words: Vec<&str> = s.split(is_space).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(normalize(&s), words.join(" "));
        }

        #[test]
        fn texts_are_in_view_as_each_is_found_alone(
            // Few words, so that many texts are alike, or alike once normalised.
            texts in proptest::collection::vec(proptest::option::of("[ab \t]{0,8}"), 0..24),
            live in proptest::collection::vec("[ab \t]{0,30}", 0..4),
        ) {
            let got = Sought::new(texts.iter().map(Option::as_deref))
                .in_view(&Haystack::new(live.iter().map(String::as_str)));
            let want: Vec<bool> = texts
                .iter()
                .map(|t| {
                    let t = normalize(t.as_deref().unwrap_or_default());
                    !t.is_empty() && live.iter().any(|l| occurs_at_all(&normalize(l), &t))
                })
                .collect();
            proptest::prop_assert_eq!(got, want);
        }

        #[test]
        fn a_text_is_found_exactly_when_it_occurs(
            // Letters, a digit, a letter and a sign that share their first byte in
            // UTF-8 (é, ×), punctuation and spaces: texts shorter and longer than a key.
            texts in proptest::collection::vec("[ab5é×. ]{1,30}", 1..12),
            live in proptest::collection::vec("[ab5é×. ]{0,60}", 0..4),
        ) {
            found_exactly_where_they_occur(&texts, &live)?;
        }

        #[test]
        fn a_haystack_split_anywhere_finds_what_it_finds_whole(
            // Few texts (memchr over their first bytes), more that start with letters and
            // up to three signs (word starts and marks), or with more signs (every
            // place); joiners and a combining mark at the edges. The split falls at every
            // byte, as the second thread's start may.
            texts in proptest::collection::vec("[a-d5é\u{300}(-][a-c5_. \u{300},/'-]{0,4}", 1..10),
            signs in 0usize..5,
            cuts in proptest::collection::vec((0usize..100, 1usize..6), 0..4),
            live in "([a-c5_. (\u{300},/'-]{0,12}[é×\u{300}\u{2019}]?){0,6}",
        ) {
            // Pieces of the haystack that start with a letter or digit too, so that many
            // texts do occur in it.
            let boundaries: Vec<usize> = live.char_indices().map(|(i, _)| i).chain([live.len()]).collect();
            let pieces = cuts.iter().filter_map(|&(at, n)| {
                let first = at % boundaries.len();
                let last = (first + n).min(boundaries.len() - 1);
                live.get(boundaries[first]..boundaries[last])
                    .filter(|p| p.starts_with(|c: char| c.is_ascii_alphanumeric()))
                    .map(str::to_string)
            });
            let texts: Vec<String> = [".a", ",b", "/c", "'5"]
                .iter()
                .take(signs)
                .map(|s| s.to_string())
                .chain(texts)
                .chain(pieces)
                .collect();
            let distinct: Vec<&str> = texts.iter().map(String::as_str).collect();
            let index = Index::new(&distinct);
            let len = live.len();
            let whole = index.found(&distinct, &live, 0..len);
            for (text, f) in texts.iter().zip(&whole) {
                proptest::prop_assert_eq!(*f, occurs_at_all(&live, text), "{:?} in {:?}", text, live);
            }
            for split in 0..=len {
                let first = index.found(&distinct, &live, 0..split);
                let second = index.found(&distinct, &live, split..len);
                let joined: Vec<bool> = first.iter().zip(&second).map(|(a, b)| *a || *b).collect();
                proptest::prop_assert_eq!(&joined, &whole, "split at {} of {:?}", split, live);
            }
        }

        #[test]
        fn texts_are_found_at_word_starts_and_at_their_marks_only(
            // More than three first bytes, letters and digits (é too) and two signs, so
            // that only word starts and those signs are looked at; live contexts in
            // ASCII and beyond, long enough for whole blocks.
            texts in proptest::collection::vec("[a-dé5.(][a-d5_. ]{0,4}", 4..12),
            live in proptest::collection::vec("([a-d5_. ]{0,12}[é×]?){0,8}", 0..4),
        ) {
            found_exactly_where_they_occur(&texts, &live)?;
        }
    }

    /// The places [`word_starts`] gives.
    fn places_of(haystack: &str, start: usize, end: usize, marks: &[u8]) -> Vec<usize> {
        let mut places = Vec::new();
        word_starts(haystack, start, end, marks, |at| places.push(at));
        places
    }

    /// The places [`word_starts`] gives, found a byte at a time: in the blocks from `start`,
    /// each ASCII letter or digit after no ASCII letter or digit (at `start`: after no
    /// letter or digit), each of the `marks` and each byte from 0xC0.
    fn word_starts_plainly(haystack: &str, start: usize, end: usize, marks: &[u8]) -> Vec<usize> {
        let bytes = haystack.as_bytes();
        (start..end)
            .filter(|&at| {
                let b = bytes[at];
                let after_word = if at == start {
                    word(char_before(haystack, at))
                } else {
                    bytes[at - 1].is_ascii_alphanumeric()
                };
                b.is_ascii_alphanumeric() && !after_word || marks.contains(&b) || b >= 0xc0
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn the_block_scans_agree_with_plain_ones_at_every_offset(
            // Runs of plain text longer than a block, between spaces of every kind (in
            // ASCII, controls, beyond ASCII, unsafe characters) and characters beyond
            // ASCII that are not spaces but start as one does; a lead of any length, so
            // that each falls at every offset of a block, and ranges that start and end
            // anywhere.
            lead in "[a-z0-9]{0,40}",
            body in proptest::collection::vec(
                "[a-zA-Z0-9 (.\"~-]{0,40}[ \t\n\r\u{b}\u{c}\u{1f}\u{7f}\u{85}\u{a0}\u{1680}\u{2000}-\u{200b}\u{2028}\u{2029}\u{202a}-\u{202f}\u{205f}\u{2066}-\u{2069}\u{3000}\u{feff}\u{61c}é×©\u{600}\u{1e00}\u{2019}\u{3001}\u{ff01}\u{300}🙂]{0,3}",
                0..8,
            ),
            marks in proptest::sample::subsequence(b"(\"-".to_vec(), 0..=3),
            from in 0usize..80,
            to in 0usize..400,
        ) {
            let s = format!("{lead}{}", body.concat());
            let words: Vec<&str> = s.split(is_space).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(normalize(&s), words.join(" "), "{:?}", s);
            let len = s.len();
            let (start, end) = (from.min(len), to.min(len));
            let places: Vec<usize> = places_of(&s, start, end, &marks);
            proptest::prop_assert_eq!(places, word_starts_plainly(&s, start, end, &marks), "{}..{} of {:?}", start, end, s);
        }
    }

    proptest::proptest! {
        #[test]
        fn word_starts_are_every_place_a_text_may_start(
            // Letters, digits and signs in ASCII, characters beyond it (letters, signs, a
            // combining mark), in haystacks of several blocks; up to three marks; any
            // range, a character's boundary or not.
            haystack in "([a-cA5 (\"-]{0,12}[é“—🙂×\u{300}]?){0,8}",
            marks in proptest::sample::subsequence(b"(\"-".to_vec(), 0..=3),
            from in 0usize..120,
            to in 0usize..120,
        ) {
            let len = haystack.len();
            let (start, end) = (from.min(len), to.min(len));
            let places: Vec<usize> = places_of(&haystack, start, end, &marks);
            proptest::prop_assert!(places.windows(2).all(|w| w[0] < w[1]), "{:?}", places);
            proptest::prop_assert!(places.iter().all(|p| (start..end).contains(p)));
            // Each place where a text may start, as `look` would find it: an ASCII letter
            // or digit after no letter or digit, a mark, any character beyond ASCII.
            for (at, c) in haystack.char_indices().filter(|(at, _)| (start..end).contains(at)) {
                let may_start = if c.is_ascii() {
                    c.is_ascii_alphanumeric() && !word(char_before(&haystack, at))
                        || marks.contains(&(c as u8))
                } else {
                    true
                };
                proptest::prop_assert!(!may_start || places.contains(&at), "{} in {:?}", at, haystack);
            }
        }

        #[test]
        fn the_key_at_a_place_is_the_key_of_its_first_bytes(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..24),
        ) {
            let (low, high) = head_words(&bytes);
            for len in 1..=KEY.min(bytes.len()) {
                let key = key_of_words(low & first_bytes(len), high & first_bytes(len.saturating_sub(8)));
                proptest::prop_assert_eq!(key, key_of(&bytes, len), "{}", len);
            }
        }

        #[test]
        fn texts_are_found_at_and_after_characters_beyond_ascii(
            // Texts that start with letters and signs beyond ASCII (and three in ASCII,
            // so that the places are word starts), of every key length and longer; live
            // contexts where those characters fall anywhere in a block.
            texts in proptest::collection::vec("[a-cé“—🙂(][a-c5 é“—\u{300}-]{0,20}", 1..12),
            live in proptest::collection::vec("([a-c5 (-]{0,10}[é“—🙂×\u{300}]?){0,10}", 0..4),
        ) {
            let texts: Vec<String> = ["a", "b5", "c"].iter().map(|t| t.to_string()).chain(texts).collect();
            found_exactly_where_they_occur(&texts, &live)?;
        }
    }

    proptest::proptest! {
        #[test]
        fn texts_that_start_alike_are_each_found_exactly_when_they_occur(
            // Many texts with one long start (longer than several keys), ends of every
            // length around a key's, and contexts that hold that start again and again.
            start in "[ab]{0,3}(a b){8,20}",
            ends in proptest::collection::vec("[ab ]{0,40}", 9..40),
            live in proptest::collection::vec(("[ab ]{0,6}", 0usize..40, "[ab ]{0,30}"), 1..12),
        ) {
            let texts: Vec<String> = ends.iter().map(|e| normalize(&format!("{start}{e}"))).collect();
            let mut distinct: Vec<&str> = texts.iter().map(String::as_str).filter(|t| !t.is_empty()).collect();
            distinct.sort_unstable();
            distinct.dedup();
            let live: Vec<String> = live
                .iter()
                .map(|(before, pick, after)| {
                    let middle = ends.get(pick % ends.len()).map_or("", String::as_str);
                    format!("{before}{start}{middle}{after}")
                })
                .collect();
            let found = occurring(&distinct, &normalize(&live.join(" ")));
            let haystack = normalize(&live.join(" "));
            for (text, f) in distinct.iter().zip(found) {
                proptest::prop_assert_eq!(f, occurs_at_all(&haystack, text), "{}", text);
            }
        }
    }

    #[test]
    fn every_space_beyond_ascii_starts_with_a_byte_that_may_be_one() {
        for c in (0x80..=0x10ffff).filter_map(char::from_u32) {
            if is_space(c) {
                let mut buf = [0u8; 4];
                let first = c.encode_utf8(&mut buf).as_bytes()[0];
                assert!(may_be_space(first), "U+{:04X}", u32::from(c));
            }
        }
    }

    #[test]
    fn a_long_haystack_looked_through_in_halves_finds_a_text_across_the_middle() {
        let filler = "filler ".repeat(PARALLEL_FROM / 7 + 10);
        let haystack = format!("first words {filler}alpha beta gamma {filler}last words");
        // "alpha beta gamma" starts in the first half and ends in the second.
        let middle = haystack.find("alpha").unwrap();
        assert!(middle < haystack.len() / 2 && haystack.len() / 2 < middle + 16);
        assert!(haystack.len() >= PARALLEL_FROM);
        let texts = [
            "first words",
            "last words",
            "alpha beta gamma",
            "beta gamma",
            "gamma filler filler",
            "not there",
            "lpha beta",
        ];
        let found = occurring(&texts, &haystack);
        assert_eq!(found, [true, true, true, true, true, false, false]);
    }

    #[test]
    fn the_keys_set_holds_every_key_given_and_few_others() {
        let key = |i: u64| key_of(format!("text number {i:>5}").as_bytes(), KEY);
        let mut keys = Keys::default();
        for i in 0..4000 {
            keys.insert(key(i));
        }
        assert!((0..4000).all(|i| keys.may_hold(key(i))));
        // 4,000 keys set at most 4,000 of the 65,536 bits: most other keys find theirs unset.
        let others = (4000..14000).filter(|&i| keys.may_hold(key(i))).count();
        assert!(others < 1000, "{others} of 10,000 keys not given are held");
    }

    #[test]
    fn overlapping_texts_are_all_found() {
        let s = store(&[Some("abc"), Some("b"), Some("bcd"), Some("abcde")]);
        assert_eq!(in_view(&s, ["x abc d x"]), [true, false, false, false]);
        assert_eq!(in_view(&s, ["(abcde) b"]), [false, true, false, true]);
        // Found as part of a longer word first, then on its own.
        assert_eq!(in_view(&s, ["xabc abc"]), [true, false, false, false]);
        // Occurrences that overlap: the first inside a word, the second whole.
        let t = store(&[Some("a a")]);
        assert_eq!(in_view(&t, ["ba a a"]), [true]);
        assert!(occurs_at_all("ba a a", "a a"));
    }

    #[test]
    fn a_number_or_word_that_goes_on_past_a_separator_is_another() {
        let s = store(&[
            Some("Refunds over 500"),
            Some("Never run touch gate"),
            Some("500 need approval"),
            Some("contact the user"),
        ]);
        for context in [
            "Refunds over 500,000 need approval; never run touch gate-marker",
            "Refunds over 500.50; never run touch gate_marker; refunds over 1,500 need approval",
            "Never run touch gate's twin; contact the user\u{2019}s manager; 2.500 need approval",
            "Never run touch gate.bak; contact the user/admin; refunds over 500/month; 1/500 need approval",
        ] {
            assert_eq!(in_view(&s, [context]), [false; 4], "{context}");
        }
        // A sentence's end, a list, quotes, a dash between spaces: the text is whole.
        assert_eq!(
            in_view(
                &s,
                [
                    "Refunds over 500. Never run touch gate, ever. 'contact the user' - 500 need approval, 2"
                ]
            ),
            [true; 4]
        );
        // Thousands set apart by a space, a no-break or a thin space: another number.
        let n = store(&[Some("Refunds over 500"), Some("500 need approval")]);
        for context in [
            "Refunds over 500 000; 1 500 need approval",
            "Refunds over 500\u{202f}000 need approval; 1\u{a0}500 need approval",
            "Refunds over 500\u{2009}000.50; 12 500 need approval",
        ] {
            assert_eq!(in_view(&n, [context]), [false, false], "{context}");
        }
        // A number after a space that is not a group of three is another word.
        for context in [
            "Refunds over 500 2 times; to 500 need approval",
            "Refunds over 500 2024; day 1, 500 need approval",
            "Refunds over 500 1000 days; (500 need approval)",
        ] {
            assert_eq!(in_view(&n, [context]), [true, true], "{context}");
        }
        // A combining mark makes another letter: `gatè`, written decomposed.
        assert_eq!(
            in_view(&s, ["Never run touch gate\u{300}; contact the user\u{301}"]),
            [false; 4]
        );
        assert_eq!(
            in_view(
                &s,
                ["_Refunds over 500_ (Never run touch gate-) 500 need approval./"]
            ),
            [true, true, true, false]
        );
    }

    #[test]
    fn a_word_joined_by_an_invisible_character_is_another_word() {
        // A soft hyphen, a zero-width space or joiner, a word joiner, a variation
        // selector: unseen, they join the words either side (`gate\u{ad}marker` reads
        // `gatemarker`, or `gate-marker` at a line's end). The rule `touch gate` was in
        // view in `touch gate\u{ad}marker`, where a hyphen keeps it out; and a text that
        // starts or ends with one was whole wherever it occurred.
        for joiner in [
            "\u{ad}",
            "\u{200b}",
            "\u{200c}",
            "\u{200d}",
            "\u{2060}",
            "\u{2063}",
            "\u{fe0f}",
            "\u{180e}",
            "\u{e0041}",
            "\u{ad}\u{200d}",
            // Those a report escapes: in a record's text they count as spaces (see
            // below), in the live context they join what they stand between. Made spaces
            // there, `touch gate` was in view in `touch gate\u{feff}marker`.
            "\u{feff}",
            "\u{200e}",
            "\u{200f}",
            "\u{61c}",
            "\u{202e}",
            "\u{2066}",
            "\u{2069}\u{200f}",
        ] {
            let (start, end) = (format!("{joiner}sign-off"), format!("user{joiner}"));
            let s = store(&[
                Some("Never run touch gate"),
                Some("Refunds over 500"),
                Some(&start),
                Some(&end),
            ]);
            let context = format!(
                "Never run touch gate{joiner}marker; Refunds over 500{joiner}000; \
                 co{joiner}sign-off; user{joiner}name"
            );
            assert_eq!(in_view(&s, [context.as_str()]), [false; 4], "{context:?}");
            // Nor does one hide a group of three digits.
            let context = format!(
                "Never run touch gate{joiner}-x; Refunds over 500 0{joiner}00; \
                 1 {joiner}000{joiner}sign-off; user{joiner}{joiner}2"
            );
            assert_eq!(in_view(&s, [context.as_str()]), [false; 4], "{context:?}");
            let context = format!(
                "Never run touch gate{joiner} now; Refunds over 500{joiner}-{joiner}5000; \
                 {joiner}sign-off{joiner}: user{joiner}!"
            );
            let seen = in_view(&s, [context.as_str()]);
            assert_eq!(seen, [true, false, true, true], "{context:?}");
        }
    }

    #[test]
    fn a_character_a_report_escapes_is_a_space_in_a_text_and_joins_words_in_the_context() {
        let text = "Never run touch gate\u{feff}marker\u{200f} before\u{2066}noon.";
        let s = store(&[Some(text), Some("Never run touch gate marker.")]);
        // The hook's reason carries the text with those made spaces: back in view.
        let reason = format!("its text: {}", normalize(text));
        assert_eq!(reason, "its text: Never run touch gate marker before noon.");
        assert_eq!(in_view(&s, [reason.as_str()]), [true, false]);
        // The context as written shows neither: `gate` and `marker` are joined there.
        assert_eq!(in_view(&s, [text]), [false, false]);
        assert_eq!(
            in_view(&s, ["Never run touch gate\u{feff}marker."]),
            [false, false]
        );
        // A control character is white space on both sides.
        assert_eq!(
            in_view(&s, ["Never run touch gate\u{7}marker."]),
            [false, true]
        );
    }

    #[test]
    fn a_text_inside_a_longer_word_or_number_is_not_in_view() {
        let s = store(&[
            Some("Refunds over 500"),
            Some("Refunds over 5000"),
            Some("Never deploy."),
            Some("sign-off"),
        ]);
        assert_eq!(
            in_view(
                &s,
                [
                    "Refunds over 5000 need approval",
                    "Never deploy.Ever",
                    "sign-offs"
                ]
            ),
            // `deploy.Ever` reads as one word, as `gate.bak` does: a text's last sign
            // that joins ends it inside that word.
            [false, true, false, false]
        );
        assert_eq!(
            in_view(&s, ["\"Refunds over 500\" (sign-off)"]),
            [true, false, false, true]
        );
    }

    #[test]
    fn a_text_that_ends_or_starts_with_a_joining_sign_inside_a_word_is_not_whole() {
        // `Never run touch gate.` was in view of `Never run touch gate.bak without
        // sign-off`, a rule on another file, where `Never run touch gate` was not: the
        // sign that ends the text joined it to the word the context goes on with.
        let s = store(&[
            Some("Never run touch gate."),
            Some("Never delete anything under /srv/data/"),
            Some("Refunds over 500."),
            Some(".env files stay unread"),
            Some("Refunds over 5,"),
        ]);
        for context in [
            "Never run touch gate.bak without sign-off",
            "Never delete anything under /srv/data/cache",
            "Refunds over 500.50 need approval",
            "prod.env files stay unread",
            "Refunds over 5,000 need approval",
            "Never run touch gate.\u{ad}bak",
        ] {
            assert_eq!(in_view(&s, [context]), [false; 5], "{context}");
        }
        // Followed (preceded) by a space, a sign or nothing, the text is whole.
        assert_eq!(
            in_view(
                &s,
                [
                    "Never run touch gate. Never delete anything under /srv/data/ (Refunds over 500.) .env files stay unread; Refunds over 5, 6",
                ]
            ),
            [true; 5]
        );
        assert_eq!(
            in_view(&s, ["(.env files stay unread) Never run touch gate.."]),
            [true, false, false, true, false]
        );
    }

    #[test]
    fn a_word_joined_by_any_form_of_a_hyphen_an_apostrophe_a_dot_or_a_slash_goes_on() {
        // `touch gate` was in view of `touch gate\u{2011}marker` (the no-break hyphen
        // models often write) and of `touch gate\\marker`, where `touch gate-marker`
        // keeps it out.
        let s = store(&[Some("Never run touch gate"), Some("deploy to prod")]);
        for joiner in [
            '-', '\u{58a}', '\u{1400}', '\u{2010}', '\u{2011}', '\u{2013}', '\u{2027}', '\u{2043}',
            '\u{2212}', '\u{2e17}', '\u{30a0}', '\u{fe63}', '\u{ff0d}', '_', '\u{2017}',
            '\u{fe33}', '\u{fe34}', '\u{fe4d}', '\u{fe4f}', '\u{ff3f}', '\'', '`', '\u{b4}',
            '\u{2018}', '\u{2019}', '\u{201b}', '\u{2032}', '\u{ff07}', '.', '\u{b7}', '\u{2024}',
            '\u{2e31}', '\u{30fb}', '\u{fe52}', '\u{ff0e}', '\u{ff61}', '\u{ff65}', '/', '\\',
            '\u{2044}', '\u{2215}', '\u{29f5}', '\u{29f8}', '\u{29f9}', '\u{ff0f}', '\u{ff3c}',
            '\u{2012}', '\u{2025}', ':', '@', '+', '~', '\u{ff1a}', '\u{ff20}', '\u{ff0b}',
            '\u{ff5e}',
        ] {
            let context = format!("Never run touch gate{joiner}marker; deploy to prod{joiner}eu");
            assert_eq!(
                in_view(&s, [context.as_str()]),
                [false, false],
                "{context:?}"
            );
            // Nor does one joined before its first word end before it.
            let context = format!("Never run touch gate{joiner}x; re{joiner}deploy to prod");
            assert_eq!(
                in_view(&s, [context.as_str()]),
                [false, false],
                "{context:?}"
            );
            // Not followed by a word, it ends one.
            let context = format!("Never run touch gate{joiner} now; deploy to prod{joiner}");
            assert_eq!(in_view(&s, [context.as_str()]), [true, true], "{context:?}");
        }
    }
}
