//! The light scans of one record line: what the lean loader needs of a record, without
//! building a DOM.
//!
//! About nine records in ten are chatter, and the gate needs nothing from a chatter
//! record but its id, its `seq` and its token estimate. The hand-written scan here
//! ([`simple`], [`simple_in`], [`simple_item`]) reads the commonest shape straight out of
//! the chunk; the typed serde scans of facts, policies and effects ([`fact`], [`rule`],
//! in `records`) read those with the seeds in `seeds` (values and predicates
//! checked as they are read: keys compared as borrowed strings, a key that appears twice
//! in any object refused, as [`crate::json`] does); [`canonical`] writes a kept record's
//! canonical JSON from its text. No `Value` is built for a record the gate does not hold.
//!
//! The scans only ever say yes to a record the strict path ([`crate::json::parse`] then
//! [`crate::record::parse_record`]) accepts with the same values. Anything else (an unknown
//! kind, a malformed line, an escaped key, an odd number) is `None`, and the caller takes
//! the strict path, which gives the exact record or the exact error. This module reads
//! bytes; it never touches files.

use crate::json::skip_ws;

mod canonical;
mod records;
mod seeds;

pub use canonical::canonical;
pub use records::{Early, FactLine, Rule, RuleLine, fact, rule, seq_of};

/// Writes the canonical JSON of a record with only id, kind, seq, text and tokens into
/// `out` (cleared first), exactly as [`crate::json::canonical`] would. `id` and `kind`
/// are written without escapes; `text` is as written in the line, with whether that is
/// already canonical. `false` (and `out` unspecified) when the text cannot be decoded.
fn write_canonical(
    out: &mut Vec<u8>,
    id: &str,
    kind: &str,
    seq: u64,
    text: Option<(&str, bool)>,
    tokens: Option<u64>,
) -> bool {
    out.clear();
    // No escapes in the line, and a JSON string cannot hold raw control characters.
    for (key, value) in [("{\"id\":\"", id), ("\",\"kind\":\"", kind)] {
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    out.push(b'"');
    out.extend_from_slice(b",\"seq\":");
    write_u64(out, seq);
    if let Some((raw, plain)) = text {
        out.extend_from_slice(b",\"text\":");
        if plain {
            out.extend_from_slice(raw.as_bytes());
        } else {
            match serde_json::from_str::<String>(raw) {
                Ok(s) => write_str(out, &s),
                Err(_) => return false,
            }
        }
    }
    if let Some(tokens) = tokens {
        out.extend_from_slice(b",\"tokens\":");
        write_u64(out, tokens);
    }
    out.push(b'}');
    true
}

/// Appends a number in decimal, without allocating.
fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        if let Some(d) = digits.get_mut(i) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    out.extend_from_slice(digits.get(i..).unwrap_or_default());
}

/// Appends a string as serde_json writes it.
fn write_str(out: &mut Vec<u8>, s: &str) {
    // INVARIANT: writing a &str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// A record line made of nothing but `id`, `seq`, `kind`, `text` and `tokens`, each a
/// plain value, as [`simple`] read it: most of a store's lines (chatter, summaries).
#[derive(Debug, Clone)]
pub struct Simple<'a> {
    /// `id` (non-empty, written without escapes).
    pub id: &'a str,
    /// `seq`.
    pub seq: u64,
    /// `kind` (written without escapes).
    pub kind: &'a str,
    /// `text`, as written in the line (quotes included).
    pub text: Option<&'a str>,
    /// Whether `text` as written is its canonical JSON already: its only escapes are
    /// among `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, which serde_json writes the same.
    pub text_plain: bool,
    /// `tokens`, if declared.
    pub tokens: Option<u64>,
}

impl<'a> Simple<'a> {
    /// Writes the record's canonical JSON into `out`, exactly as
    /// [`crate::json::canonical`] would; `false` when the text cannot be decoded.
    pub fn canonical(&self, out: &mut Vec<u8>) -> bool {
        write_canonical(
            out,
            self.id,
            self.kind,
            self.seq,
            self.text.map(|t| (t, self.text_plain)),
            self.tokens,
        )
    }

    /// `text`, decoded.
    pub fn text(&self) -> Option<Result<String, ()>> {
        self.text.map(|raw| {
            if !raw.contains('\\') {
                Ok(raw.get(1..raw.len() - 1).unwrap_or_default().to_string())
            } else {
                serde_json::from_str::<String>(raw).map_err(|_| ())
            }
        })
    }
}

/// What [`simple`] made of a line.
#[derive(Debug, Clone)]
pub enum Fast<'a> {
    /// A well-formed record of plain keys and values, which the strict JSON parser
    /// accepts with exactly these values.
    Done(Simple<'a>),
    /// Not decided, but its `kind` is a string other than `chatter` (this one): not
    /// chatter.
    NotChatter(&'a str),
    /// Not decided: anything else (another key, an escaped key or id, a `\u` escape that does not decode, an
    /// odd number, a nested value, a malformed line, ...).
    Unknown,
}

/// A hand-written scan of the commonest record shape: one object whose keys are among
/// `id`, `seq`, `kind`, `text` and `tokens` (each once, no escapes in the keys), with
/// string values for `id`, `kind` and `text` (`\u` escapes only if they decode; none at all in `id` and
/// `kind`) and integers below 2^64 for `seq` and `tokens`. It decides only lines that are
/// valid JSON for [`crate::json::parse`] and have exactly the values it reports; any
/// other line is [`Fast::Unknown`] (or [`Fast::NotChatter`]) and goes to the serde paths.
pub fn simple(line: &str) -> Fast<'_> {
    let mut f = Fields::default();
    let end = simple_scan::<false, false, false>(line, 0, &mut f);
    match f.finish::<false>(end, 0) {
        Ok((Line::Simple(s), ..)) => Fast::Done(s),
        Ok(_) => Fast::Unknown,
        Err(fast) => fast,
    }
}

/// A line [`simple_in`] decided: a record of the shape [`simple`] reads, or a fact of that
/// shape with a scalar `value`.
#[derive(Debug, Clone)]
pub enum Line<'a> {
    /// What [`simple`] decides.
    Simple(Simple<'a>),
    /// A fact whose keys are among those of [`simple`] and `field`, `value` and
    /// `supersedes` (no `depends_on` or `meta`), `field` and `supersedes` written without
    /// escapes, `value` `true`, `false`, `null`, an integer below 2^64 or a string:
    /// exactly what [`fact`] reads of it; with its `text` as written in the line, and
    /// whether that is canonical already (as [`Simple::text`] and [`Simple::text_plain`]).
    Fact(FactLine<'a>, Option<&'a str>, bool),
}

/// [`simple`] on the line of a JSON Lines chunk that starts at `start`, without finding
/// its end first: `Ok((record, end, next))` when [`simple`] decides the line
/// `chunk[start..end]` with exactly this record, or when it is a fact of the simple
/// shape ([`Line::Fact`]) that [`fact`] reads the same (`end` is the index of its `\n`,
/// or the chunk's length; `next` is where the next line starts). Otherwise what
/// [`simple`] makes of the line, [`Fast::NotChatter`] or [`Fast::Unknown`] (the scan
/// stops where it would on the line alone: a line ends at its `\n`, which no string,
/// number or whitespace of the scan takes).
pub fn simple_in(chunk: &str, start: usize) -> Result<(Line<'_>, usize, usize), Fast<'_>> {
    let mut f = Fields::default();
    let end = simple_scan::<true, false, true>(chunk, start, &mut f);
    f.finish::<true>(end, chunk.len())
}

/// [`simple`] on the object that starts at `start` in a document's text (an element of
/// its `records`), without finding its end first: `Some((record, end))` when the object
/// `text[start..end]` is one [`simple`] decides with exactly this record (`end` is just
/// past its `}`; what follows is not looked at). `None`: not decided here.
pub fn simple_item(text: &str, start: usize) -> Option<(Simple<'_>, usize)> {
    let mut f = Fields::default();
    let end = simple_scan::<false, true, false>(text, start, &mut f);
    match f.finish::<false>(end, 0) {
        Ok((Line::Simple(s), end, _)) => Some((s, end)),
        _ => None,
    }
}

/// The values [`simple_scan`] read of a line, so far: kept by the caller, which builds
/// its answer from them where it returns it (no copy of a finished record on the way).
#[derive(Default)]
struct Fields<'a> {
    id: Option<&'a str>,
    seq: Option<u64>,
    kind: Option<&'a str>,
    text: Option<&'a str>,
    text_plain: bool,
    tokens: Option<u64>,
    field: Option<&'a str>,
    supersedes: Option<&'a str>,
    value: bool,
}

impl<'a> Fields<'a> {
    /// The answer of a scan that read these fields and ended at `end` (`None`: not
    /// decided): the record and where its line ends, and where the next line starts
    /// in a chunk of `len` bytes. With `FACT`, a fact of the simple shape is decided
    /// too. Undecided: what the `kind` read tells of the line.
    #[inline(always)]
    fn finish<const FACT: bool>(
        self,
        end: Option<usize>,
        len: usize,
    ) -> Result<(Line<'a>, usize, usize), Fast<'a>> {
        let undecided = || match self.kind {
            Some(kind) if kind != "chatter" => Fast::NotChatter(kind),
            _ => Fast::Unknown,
        };
        let (Some(end), Some(id), Some(seq), Some(kind)) = (end, self.id, self.seq, self.kind)
        else {
            return Err(undecided());
        };
        let next = (end + 1).min(len);
        if FACT && (self.value || self.field.is_some() || self.supersedes.is_some()) {
            // A fact: `kind`, `field` and `value` are required (the rest as for any record).
            return match (kind == "fact" && self.value, self.field) {
                (true, Some(field)) => {
                    let fact = FactLine {
                        id: std::borrow::Cow::Borrowed(id),
                        seq,
                        field: std::borrow::Cow::Borrowed(field),
                        supersedes: self.supersedes.map(std::borrow::Cow::Borrowed),
                        depends_on: Vec::new(),
                    };
                    Ok((Line::Fact(fact, self.text, self.text_plain), end, next))
                }
                _ => Err(undecided()),
            };
        }
        let simple = Simple {
            id,
            seq,
            kind,
            text: self.text,
            text_plain: self.text_plain,
            tokens: self.tokens,
        };
        Ok((Line::Simple(simple), end, next))
    }
}

/// The scan of [`simple`] (`LINE` false: the object must fill `text` from `start` on) and
/// of [`simple_in`] (`LINE` true: the object must fill the line that starts at `start`;
/// whitespace never takes a `\n`). The record, and where its line ends. With `ITEM`
/// (for [`simple_item`]), the object may be followed by anything: the record, and the
/// index just past its `}`. With `FACT`, a fact of the simple shape is decided too
/// ([`Line::Fact`]); without, `field`, `value` and `supersedes` are keys it does not read.
fn simple_scan<'a, const LINE: bool, const ITEM: bool, const FACT: bool>(
    line: &'a str,
    start: usize,
    f: &mut Fields<'a>,
) -> Option<usize> {
    let b = line.as_bytes();
    let skip_ws = |b: &[u8], i: usize| {
        if LINE {
            skip_ws_in_line(b, i)
        } else {
            skip_ws(b, i)
        }
    };
    let mut i = skip_ws(b, start);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        // A key and its `:` written with nothing between them (a store's lines), read at
        // once; else with whitespace around them.
        let key = if let Some((key, end)) = key_colon(b, i) {
            i = end;
            key
        } else {
            let (key, end) = key_at(b, skip_ws(b, i))?;
            i = skip_ws(b, end);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i += 1;
            key
        };
        i = skip_ws(b, i);
        match key {
            Key::Id | Key::Kind | Key::Text => {
                if b.get(i) != Some(&b'"') {
                    return None;
                }
                let (end, escapes) = string_end(b, i + 1)?;
                let raw = line.get(i..end)?;
                let inner = line.get(i + 1..end - 1)?;
                let slot = match key {
                    Key::Id if !inner.is_empty() => &mut f.id,
                    Key::Kind => &mut f.kind,
                    Key::Text => &mut f.text,
                    _ => return None,
                };
                if slot.is_some() {
                    return None;
                }
                if key == Key::Text {
                    if escapes == Escapes::Unicode && !seeds::escapes_decode(raw) {
                        return None;
                    }
                    f.text_plain = escapes <= Escapes::Plain;
                    *slot = Some(raw);
                } else if escapes == Escapes::None {
                    *slot = Some(inner);
                } else {
                    return None;
                }
                i = end;
            }
            Key::Field | Key::Supersedes if FACT => {
                // A fact's: a non-empty string without escapes (any other goes to `fact`).
                if b.get(i) != Some(&b'"') {
                    return None;
                }
                let (end, escapes) = string_end(b, i + 1)?;
                let inner = line.get(i + 1..end - 1)?;
                let slot = if key == Key::Field {
                    &mut f.field
                } else {
                    &mut f.supersedes
                };
                if escapes != Escapes::None || inner.is_empty() || slot.replace(inner).is_some() {
                    return None;
                }
                i = end;
            }
            Key::Value if FACT => {
                if std::mem::replace(&mut f.value, true) {
                    return None;
                }
                i = scalar_end(line, i)?;
            }
            Key::Field | Key::Supersedes | Key::Value => return None,
            Key::Seq | Key::Tokens => {
                let (n, end) = integer(b, i)?;
                let slot = if key == Key::Seq {
                    &mut f.seq
                } else {
                    &mut f.tokens
                };
                if slot.replace(n).is_some() {
                    return None;
                }
                i = end;
            }
        }
        if !matches!(b.get(i), Some(b',' | b'}')) {
            i = skip_ws(b, i);
        }
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => break,
            _ => return None,
        }
    }
    let end = if ITEM { i + 1 } else { skip_ws(b, i + 1) };
    (ITEM || end == b.len() || LINE && b.get(end) == Some(&b'\n')).then_some(end)
}

/// The index just past the scalar value at `i` that a fact's `value` may be here: `true`,
/// `false`, `null`, an integer in `0..2^64`, or a string whose escapes decode (as the
/// strict path reads each). `None` for anything else (a negative or decimal number, an
/// array, an object), which [`fact`] checks instead.
fn scalar_end(line: &str, i: usize) -> Option<usize> {
    let b = line.as_bytes();
    let literal = |word: &[u8]| (b.get(i..i + word.len())? == word).then_some(i + word.len());
    match *b.get(i)? {
        b'"' => {
            let (end, escapes) = string_end(b, i + 1)?;
            if escapes == Escapes::Unicode && !seeds::escapes_decode(line.get(i..end)?) {
                return None;
            }
            Some(end)
        }
        b't' => literal(b"true"),
        b'f' => literal(b"false"),
        b'n' => literal(b"null"),
        _ => integer(b, i).map(|(_, end)| end),
    }
}

/// A key the simple scan reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Id,
    Seq,
    Kind,
    Text,
    Tokens,
    /// A fact's keys: read only with `FACT` (see [`simple_scan`]).
    Field,
    Value,
    Supersedes,
}

/// [`key_at`] and the `:` right after the key's closing quote, read as one word: the key
/// and the index just past the `:`. `None` when the key is not one of those written so
/// (or the line has fewer than eight bytes left, or the key is `supersedes`): the caller
/// then reads it with [`key_at`], whitespace allowed.
#[inline(always)]
fn key_colon(b: &[u8], i: usize) -> Option<(Key, usize)> {
    /// A key written in a word, little-endian (padded with zeros past its `:`).
    const fn word(s: &[u8; 8]) -> u64 {
        u64::from_le_bytes(*s)
    }
    /// The low `n` bytes of a word.
    const fn low(n: u32) -> u64 {
        u64::MAX >> (64 - 8 * n)
    }
    let w = u64::from_le_bytes(*b.get(i..)?.first_chunk::<8>()?);
    let (key, n) = match (w >> 8) as u8 {
        b'i' if w & const { low(5) } == const { word(b"\"id\":\0\0\0") } => (Key::Id, 5),
        b's' if w & const { low(6) } == const { word(b"\"seq\":\0\0") } => (Key::Seq, 6),
        b'k' if w & const { low(7) } == const { word(b"\"kind\":\0") } => (Key::Kind, 7),
        b't' if w & const { low(7) } == const { word(b"\"text\":\0") } => (Key::Text, 7),
        b't' if w == const { word(b"\"tokens\"") } && b.get(i + 8) == Some(&b':') => {
            (Key::Tokens, 9)
        }
        b'f' if w == const { word(b"\"field\":") } => (Key::Field, 8),
        b'v' if w == const { word(b"\"value\":") } => (Key::Value, 8),
        _ => return None,
    };
    Some((key, i + n))
}

/// The key whose string opens at `i` when it is one of those the simple scan reads,
/// written without escapes (the only way it is read: any other key sends the line to the
/// serde paths), and the index just past its closing quote.
fn key_at(b: &[u8], i: usize) -> Option<(Key, usize)> {
    // Each literal compared at its own length, known when compiled: no call to memcmp.
    fn written<const N: usize>(b: &[u8], i: usize, key: &[u8; N]) -> Option<usize> {
        (b.get(i..i + N)? == key).then_some(i + N)
    }
    match b.get(i + 1)? {
        b'i' => Some((Key::Id, written(b, i, b"\"id\"")?)),
        b's' if b.get(i + 2) == Some(&b'e') => Some((Key::Seq, written(b, i, b"\"seq\"")?)),
        b's' => Some((Key::Supersedes, written(b, i, b"\"supersedes\"")?)),
        b'k' => Some((Key::Kind, written(b, i, b"\"kind\"")?)),
        b't' if b.get(i + 2) == Some(&b'e') => Some((Key::Text, written(b, i, b"\"text\"")?)),
        b't' => Some((Key::Tokens, written(b, i, b"\"tokens\"")?)),
        b'f' => Some((Key::Field, written(b, i, b"\"field\"")?)),
        b'v' => Some((Key::Value, written(b, i, b"\"value\"")?)),
        _ => None,
    }
}

/// The escapes met in a string, the most telling of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Escapes {
    None,
    /// Only `\"`, `\\`, `\b`, `\f`, `\n`, `\r` and `\t`: as serde_json writes them.
    Plain,
    /// `\/` too (serde_json writes a bare `/`).
    Slash,
    /// `\u` too (its four hex digits not checked here: see [`seeds::escapes_decode`]).
    Unicode,
}

/// The index just past the closing quote of the string whose contents start at `i`, and
/// its escapes; `None` for an invalid escape, a raw control character or a string that
/// does not end.
fn string_end(b: &[u8], i: usize) -> Option<(usize, Escapes)> {
    let mut escapes = Escapes::None;
    let mut rest = b.get(i..)?;
    loop {
        // Sixteen bytes at a time up to the first `"`, `\` or byte below 0x20 (the last
        // few bytes of `b` one at a time, below).
        while let Some((block, tail)) = rest.split_first_chunk::<16>() {
            let special = specials(*block);
            if special != 0 {
                rest = rest.get(special.trailing_zeros() as usize..)?;
                break;
            }
            rest = tail;
        }
        match rest {
            [b'"', ..] => return Some((b.len() - rest.len() + 1, escapes)),
            [b'\\', e, tail @ ..] => {
                let this = match e {
                    b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Escapes::Plain,
                    b'/' => Escapes::Slash,
                    b'u' => Escapes::Unicode,
                    _ => return None,
                };
                escapes = escapes.max(this);
                rest = tail;
            }
            // (A `\` here is the last byte: no string ends after it.)
            [c, tail @ ..] if *c >= 0x20 => rest = tail,
            _ => return None,
        }
    }
}

/// Which bytes of `block` end a run of plain string bytes: `"`, `\` or a byte below 0x20,
/// as bit `k` for byte `k`. One SIMD compare per byte class where the target has one
/// (SSE2 on x86_64, NEON on aarch64), plain code elsewhere.
fn specials(block: [u8; 16]) -> u32 {
    use wide::u8x16;
    let v = u8x16::new(block);
    // `min(v, 0x1f) == v` is `v <= 0x1f`, unsigned.
    let control = v.min(u8x16::splat(0x1f)).simd_eq(v);
    (v.simd_eq(u8x16::splat(b'"')) | v.simd_eq(u8x16::splat(b'\\')) | control).to_bitmask()
}

/// A JSON integer in `0..2^64` at `i` (no sign, fraction or exponent), and the index just
/// past it; `None` otherwise, or when what follows is not whitespace, `,` or `}`.
fn integer(b: &[u8], mut i: usize) -> Option<(u64, usize)> {
    let first = *b.get(i)?;
    if !first.is_ascii_digit() {
        return None;
    }
    let mut n = u64::from(first - b'0');
    i += 1;
    if n != 0 {
        while let Some(&d) = b.get(i).filter(|d| d.is_ascii_digit()) {
            n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            i += 1;
        }
    }
    match b.get(i) {
        Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}') => Some((n, i)),
        _ => None,
    }
}

/// [`skip_ws`] within one line: a `\n` is where the line ends, not whitespace.
fn skip_ws_in_line(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\r')) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests;
