//! The light scan of one record: what a `chatter` record needs, without building a DOM.
//!
//! About nine records in ten are chatter, and the gate needs nothing from a chatter
//! record but its id, its `seq` and its token estimate. This module reads one record
//! object with a typed serde visitor: keys are compared as borrowed strings, values the
//! gate ignores are skipped (still refusing a key that appears twice in any object, as
//! [`crate::json`] does), and the canonical JSON length is summed on the way, so no
//! `Value` is built and nothing is allocated for a plain line.
//!
//! The scan only ever says yes to a record the strict path ([`crate::json::parse`] then
//! [`crate::record::parse_record`]) accepts as the same chatter record. Anything else (a
//! policy, a fact, an unknown kind, a malformed line, an escaped key, an odd number) is
//! `None`, and the caller takes the strict path, which gives the exact record or the exact
//! error. This module reads bytes; it never touches files.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// The key serde_json uses to hand an arbitrary-precision number to a visitor.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// A chatter record as the light scan read it.
#[derive(Debug, Clone)]
pub struct Chatter<'a> {
    /// The record's id (borrowed from the line unless it had escapes).
    pub id: Cow<'a, str>,
    /// The record's `seq`.
    pub seq: u64,
    /// `text`, as written in the line (a JSON string, quotes included).
    text: Option<&'a str>,
    /// Whether `text` as written is already canonical (see [`Simple::text_plain`]).
    text_plain: bool,
    /// `tokens`, if declared.
    tokens: Option<u64>,
    /// Whether the record has keys besides id, seq, kind, text and tokens.
    other_keys: bool,
}

impl Chatter<'_> {
    /// `tokens`, if the record declares it.
    pub fn tokens(&self) -> Option<u64> {
        self.tokens
    }

    /// Writes the record's canonical JSON (keys sorted, no whitespace, strings escaped as
    /// serde_json escapes them) into `out`, exactly as [`crate::json::canonical`] would.
    /// `false` (and `out` unspecified) when the record has other keys: use the strict path.
    pub fn canonical(&self, out: &mut Vec<u8>) -> bool {
        if self.other_keys {
            return false;
        }
        write_canonical(
            out,
            (&self.id, matches!(self.id, Cow::Borrowed(_))),
            "chatter",
            self.seq,
            self.text.map(|t| (t, self.text_plain)),
            self.tokens,
        )
    }
}

/// Writes the canonical JSON of a record with only id, kind, seq, text and tokens into
/// `out` (cleared first), exactly as [`crate::json::canonical`] would. `id` is decoded,
/// with whether it was written without escapes; `text` is as written in the line, with
/// whether that is already canonical. `false` (and `out`
/// unspecified) when the text cannot be decoded.
fn write_canonical(
    out: &mut Vec<u8>,
    id: (&str, bool),
    kind: &str,
    seq: u64,
    text: Option<(&str, bool)>,
    tokens: Option<u64>,
) -> bool {
    out.clear();
    out.extend_from_slice(b"{\"id\":");
    match id {
        // No escapes in the line, and a JSON string cannot hold raw control characters.
        (id, true) => {
            out.push(b'"');
            out.extend_from_slice(id.as_bytes());
            out.push(b'"');
        }
        (id, false) => write_str(out, id),
    }
    out.extend_from_slice(b",\"kind\":");
    write_str(out, kind);
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

/// Writes the canonical JSON of `text` (one JSON value) into `out` (cleared first), as
/// [`crate::json::canonical`] writes the value [`crate::json::parse`] reads from it: keys
/// in byte order, no whitespace, numbers as serde_json keeps them. `false` (with `out` in
/// any state) where the strict parser refuses the text. Strings are borrowed from `text`
/// where they can be, and nothing else is built: the digest of a kept record the light
/// scans read, without the strict path's value.
pub fn canonical(text: &str, out: &mut Vec<u8>) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    let Ok(node) = Node::deserialize(&mut de) else {
        return false;
    };
    out.clear();
    de.end().is_ok() && node.write(out)
}

/// A JSON value as [`canonical`] reads it.
enum Node<'de> {
    /// A number (serde_json's text of it), `true`, `false` or `null`.
    Literal(Cow<'de, str>),
    Unsigned(u64),
    Negative(u64),
    Str(Cow<'de, str>),
    Array(Vec<Node<'de>>),
    Object(Vec<(Cow<'de, str>, Node<'de>)>),
}

impl<'de> Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node<'de>, D::Error> {
        d.deserialize_any(NodeVisitor)
    }

    /// Writes the node's canonical JSON; `false` for an object with a key twice.
    fn write(mut self, out: &mut Vec<u8>) -> bool {
        match &mut self {
            Node::Literal(s) => out.extend_from_slice(s.as_bytes()),
            Node::Unsigned(n) => write_u64(out, *n),
            Node::Negative(n) => {
                out.push(b'-');
                write_u64(out, *n);
            }
            Node::Str(s) => write_str(out, s),
            Node::Array(items) => {
                out.push(b'[');
                for (i, item) in std::mem::take(items).into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    if !item.write(out) {
                        return false;
                    }
                }
                out.push(b']');
            }
            Node::Object(entries) => {
                entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                if entries
                    .windows(2)
                    .any(|w| matches!(w, [a, b] if a.0 == b.0))
                {
                    return false;
                }
                out.push(b'{');
                for (i, (key, value)) in std::mem::take(entries).into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_str(out, &key);
                    out.push(b':');
                    if !value.write(out) {
                        return false;
                    }
                }
                out.push(b'}');
            }
        }
        true
    }
}

struct NodeVisitor;

impl<'de> DeserializeSeed<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node<'de>, E> {
        Ok(Node::Literal(Cow::Borrowed(if v {
            "true"
        } else {
            "false"
        })))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node<'de>, E> {
        Ok(Node::Unsigned(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node<'de>, E> {
        Ok(if v < 0 {
            Node::Negative(v.unsigned_abs())
        } else {
            Node::Unsigned(v.unsigned_abs())
        })
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node<'de>, E> {
        // arbitrary_precision never hands out floats.
        Err(not_light())
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Literal(Cow::Borrowed("null")))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(NodeVisitor)? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let Some(first) = map.next_key_seed(StrSeed)? else {
            return Ok(Node::Object(Vec::new()));
        };
        if first == NUMBER_TOKEN {
            // A number beyond u64 and i64: serde_json's own text of it, as the value the
            // strict parser makes of its literal writes it.
            let literal = map.next_value_seed(StrSeed)?;
            let number = <serde_json::Number as std::str::FromStr>::from_str(&literal)
                .map_err(|_| not_light::<A::Error>())?;
            return Ok(Node::Literal(Cow::Owned(number.to_string())));
        }
        let mut entries = vec![(first, map.next_value_seed(NodeVisitor)?)];
        while let Some(key) = map.next_key_seed(StrSeed)? {
            entries.push((key, map.next_value_seed(NodeVisitor)?));
        }
        Ok(Node::Object(entries))
    }
}

/// Scans one JSON Lines record (already known to be UTF-8). `Some` only for a well-formed
/// chatter record that the strict path would accept with the same id and seq; `None` means
/// "take the strict path".
pub fn chatter(line: &str) -> Option<Chatter<'_>> {
    match simple(line) {
        Fast::Done(s) => s.chatter(),
        Fast::NotChatter(_) => None,
        Fast::Unknown => chatter_by_serde(line),
    }
}

/// [`chatter`] by the typed serde visitor, for lines [`simple`] does not decide.
pub fn chatter_by_serde(line: &str) -> Option<Chatter<'_>> {
    let mut de = serde_json::Deserializer::from_str(line);
    let head = de.deserialize_map(RecordVisitor).ok()?;
    de.end().ok()?;
    Some(head)
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
    /// The chatter record, if it is one.
    pub fn chatter(self) -> Option<Chatter<'a>> {
        (self.kind == "chatter").then_some(Chatter {
            id: Cow::Borrowed(self.id),
            seq: self.seq,
            text: self.text,
            text_plain: self.text_plain,
            tokens: self.tokens,
            other_keys: false,
        })
    }

    /// Writes the record's canonical JSON into `out`, exactly as
    /// [`crate::json::canonical`] would; `false` when the text cannot be decoded.
    pub fn canonical(&self, out: &mut Vec<u8>) -> bool {
        write_canonical(
            out,
            (self.id, true),
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
    /// Not decided: anything else (another key, an escaped key or id, a `\u` escape, an
    /// odd number, a nested value, a malformed line, ...).
    Unknown,
}

/// A hand-written scan of the commonest record shape: one object whose keys are among
/// `id`, `seq`, `kind`, `text` and `tokens` (each once, no escapes in the keys), with
/// string values for `id`, `kind` and `text` (no `\u` escapes; none at all in `id` and
/// `kind`) and integers below 2^64 for `seq` and `tokens`. It decides only lines that are
/// valid JSON for [`crate::json::parse`] and have exactly the values it reports; any
/// other line is [`Fast::Unknown`] (or [`Fast::NotChatter`]) and goes to the serde paths.
pub fn simple(line: &str) -> Fast<'_> {
    let mut kind_seen: Option<&str> = None;
    match simple_scan::<false, false>(line, 0, &mut kind_seen) {
        Some((s, _)) => Fast::Done(s),
        None => match kind_seen {
            Some(kind) if kind != "chatter" => Fast::NotChatter(kind),
            _ => Fast::Unknown,
        },
    }
}

/// [`simple`] on the line of a JSON Lines chunk that starts at `start`, without finding
/// its end first: `Some((record, end, next))` when [`simple`] decides the line
/// `chunk[start..end]` with exactly this record (`end` is the index of its `\n`, or the
/// chunk's length; `next` is where the next line starts). `None`: not decided here; find
/// the line's end and ask [`simple`].
pub fn simple_in(chunk: &str, start: usize) -> Option<(Simple<'_>, usize, usize)> {
    let (s, end) = simple_scan::<true, false>(chunk, start, &mut None)?;
    Some((s, end, (end + 1).min(chunk.len())))
}

/// [`simple`] on the object that starts at `start` in a document's text (an element of
/// its `records`), without finding its end first: `Some((record, end))` when the object
/// `text[start..end]` is one [`simple`] decides with exactly this record (`end` is just
/// past its `}`; what follows is not looked at). `None`: not decided here.
pub fn simple_item(text: &str, start: usize) -> Option<(Simple<'_>, usize)> {
    simple_scan::<false, true>(text, start, &mut None)
}

/// The scan of [`simple`] (`LINE` false: the object must fill `text` from `start` on) and
/// of [`simple_in`] (`LINE` true: the object must fill the line that starts at `start`;
/// whitespace never takes a `\n`). The record, and where its line ends. With `ITEM`
/// (for [`simple_item`]), the object may be followed by anything: the record, and the
/// index just past its `}`.
fn simple_scan<'a, const LINE: bool, const ITEM: bool>(
    line: &'a str,
    start: usize,
    kind_seen: &mut Option<&'a str>,
) -> Option<(Simple<'a>, usize)> {
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
    let (mut id, mut seq, mut kind, mut text, mut tokens) = (None, None, None, None, None);
    let mut text_plain = true;
    i = skip_ws(b, i + 1);
    loop {
        // A key: a string without escapes.
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let (end, escapes) = string_end(b, i + 1)?;
        if escapes != Escapes::None {
            return None;
        }
        let key = b.get(i + 1..end - 1)?;
        i = skip_ws(b, end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        match key {
            b"id" | b"kind" | b"text" => {
                if b.get(i) != Some(&b'"') {
                    return None;
                }
                let (end, escapes) = string_end(b, i + 1)?;
                let raw = line.get(i..end)?;
                let inner = line.get(i + 1..end - 1)?;
                let slot = match key {
                    b"id" if !inner.is_empty() => &mut id,
                    b"kind" => &mut kind,
                    b"text" => &mut text,
                    _ => return None,
                };
                if slot.is_some() {
                    return None;
                }
                if key == b"text" {
                    text_plain = escapes != Escapes::Slash;
                    *slot = Some(raw);
                } else if escapes == Escapes::None {
                    *slot = Some(inner);
                } else {
                    return None;
                }
                if key == b"kind" {
                    *kind_seen = kind;
                }
                i = end;
            }
            b"seq" | b"tokens" => {
                let (n, end) = integer(b, i)?;
                let slot = if key == b"seq" { &mut seq } else { &mut tokens };
                if slot.replace(n).is_some() {
                    return None;
                }
                i = end;
            }
            _ => return None,
        }
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    let end = if ITEM { i + 1 } else { skip_ws(b, i + 1) };
    if !(ITEM || end == b.len() || LINE && b.get(end) == Some(&b'\n')) {
        return None;
    }
    let simple = Simple {
        id: id?,
        seq: seq?,
        kind: kind?,
        text,
        text_plain,
        tokens,
    };
    Some((simple, end))
}

/// The escapes met in a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escapes {
    None,
    /// Only `\"`, `\\`, `\b`, `\f`, `\n`, `\r` and `\t`: as serde_json writes them.
    Plain,
    /// `\/` too (serde_json writes a bare `/`).
    Slash,
}

/// The index just past the closing quote of the string whose contents start at `i`, and
/// its escapes; `None` for a `\u` escape, an invalid escape, a raw control character or a
/// string that does not end.
fn string_end(b: &[u8], mut i: usize) -> Option<(usize, Escapes)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut escapes = Escapes::None;
    loop {
        // Eight bytes at a time up to the first `"`, `\` or byte below 0x20. A borrow can
        // only mark bytes after a true one, so the lowest mark is the first such byte.
        while let Some(word) = b.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
            let w = u64::from_le_bytes(word);
            let special = zero_byte(w ^ (ONES * 0x22))
                | zero_byte(w ^ (ONES * 0x5c))
                | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
            if special != 0 {
                i += (special.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        match *b.get(i)? {
            b'"' => return Some((i + 1, escapes)),
            b'\\' => {
                match *b.get(i + 1)? {
                    b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => {
                        if escapes == Escapes::None {
                            escapes = Escapes::Plain;
                        }
                    }
                    b'/' => escapes = Escapes::Slash,
                    _ => return None,
                }
                i += 2;
            }
            c if c < 0x20 => return None,
            _ => i += 1,
        }
    }
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

/// The index of the first byte at or after `i` that is not JSON whitespace.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// [`skip_ws`] within one line: a `\n` is where the line ends, not whitespace.
fn skip_ws_in_line(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\r')) {
        i += 1;
    }
    i
}

/// A `fact` record as the light scan read it: what the loader's cross-record checks need.
/// The line itself is parsed by the strict path only if its fact is the newest of its
/// field.
#[derive(Debug, Clone)]
pub struct FactLine<'a> {
    /// The record's id.
    pub id: Cow<'a, str>,
    /// The record's `seq`.
    pub seq: u64,
    /// `field`.
    pub field: Cow<'a, str>,
    /// `supersedes`, if present.
    pub supersedes: Option<Cow<'a, str>>,
    /// `depends_on` (empty when absent).
    pub depends_on: Vec<Cow<'a, str>>,
}

/// Scans one JSON Lines record (already known to be UTF-8). `Some` only for a fact record
/// the strict path accepts (same id, seq, field, supersedes and depends_on); `None` means
/// "take the strict path".
pub fn fact(line: &str) -> Option<FactLine<'_>> {
    let mut de = serde_json::Deserializer::from_str(line);
    let f = de.deserialize_map(FactVisitor).ok()?;
    de.end().ok()?;
    Some(f)
}

struct FactVisitor;

impl<'de> Visitor<'de> for FactVisitor {
    type Value = FactLine<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a fact record")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FactLine<'de>, A::Error> {
        let (mut id, mut seq, mut field, mut supersedes) = (None, None, None, None);
        let mut depends_on = Vec::new();
        let (mut fact, mut value) = (false, false);
        let mut seen = 0u16;
        while let Some(key) = map.next_key_seed(StrSeed)? {
            let bit: u16 = match &*key {
                "id" => 1,
                "seq" => 2,
                "kind" => 4,
                "text" => 8,
                "tokens" => 16,
                "meta" => 32,
                "field" => 64,
                "value" => 128,
                "supersedes" => 256,
                "depends_on" => 512,
                // An unknown key: the strict path refuses the record, and says why.
                _ => return Err(not_light()),
            };
            if seen & bit != 0 {
                return Err(not_light());
            }
            seen |= bit;
            match bit {
                1 => id = Some(nonempty(map.next_value_seed(StrSeed)?)?),
                2 => seq = Some(map.next_value_seed(U64Seed)?),
                4 => {
                    if map.next_value_seed(StrSeed)? != "fact" {
                        return Err(not_light());
                    }
                    fact = true;
                }
                // Decoded, not only skipped: a skipped string's `\u` escapes are not
                // checked (a lone surrogate passes), and the strict path refuses those.
                8 => drop(map.next_value_seed(StrSeed)?),
                16 => drop(map.next_value_seed(U64Seed)?),
                32 => map.next_value_seed(Skip)?,
                64 => field = Some(nonempty(map.next_value_seed(StrSeed)?)?),
                128 => {
                    map.next_value_seed(Checked::TOP)?;
                    value = true;
                }
                256 => supersedes = Some(nonempty(map.next_value_seed(StrSeed)?)?),
                _ => depends_on = map.next_value_seed(IdsSeed)?,
            }
        }
        match (id, seq, field, fact && value) {
            (Some(id), Some(seq), Some(field), true) => Ok(FactLine {
                id,
                seq,
                field,
                supersedes,
                depends_on,
            }),
            _ => Err(not_light()),
        }
    }
}

/// A `policy` or `effect` record as the light scan read it: what the loader needs of one
/// it does not hold (its id, `seq`, links, and the tools it names). A record the loader
/// holds is parsed again by the strict path.
#[derive(Debug, Clone)]
pub struct RuleLine<'a> {
    /// The record's id.
    pub id: Cow<'a, str>,
    /// The record's `seq`.
    pub seq: u64,
    /// What its kind adds.
    pub rule: Rule<'a>,
}

/// The part of a [`RuleLine`] its kind gives.
#[derive(Debug, Clone)]
pub enum Rule<'a> {
    /// A policy: its `scope` entries, `supersedes` and `depends_on`.
    Policy {
        /// `scope`, as a list.
        scope: Vec<Cow<'a, str>>,
        /// `supersedes`, if present.
        supersedes: Option<Cow<'a, str>>,
        /// `depends_on` (empty when absent).
        depends_on: Vec<Cow<'a, str>>,
    },
    /// An effect: its `tool`.
    Effect {
        /// `tool`.
        tool: Cow<'a, str>,
    },
}

/// Scans one JSON Lines record (already known to be UTF-8). `Some` only for a policy or
/// effect record the strict path accepts, predicates (of at most `max_depth` levels) and
/// `match` values included; `None` means "take the strict path". It is `None` too as
/// soon as `stop` says so of what the scan has read (see [`Early`]): a record the caller
/// will send the strict way anyway is not scanned to its end first.
pub fn rule<'a>(
    line: &'a str,
    max_depth: usize,
    stop: &dyn Fn(Early<'_>) -> bool,
) -> Option<RuleLine<'a>> {
    let mut de = serde_json::Deserializer::from_str(line);
    let r = de.deserialize_map(RuleVisitor { max_depth, stop }).ok()?;
    de.end().ok()?;
    Some(r)
}

/// What [`rule`] has just read, when it asks its caller whether to stop.
#[derive(Debug, Clone, Copy)]
pub enum Early<'a> {
    /// A `scope`, as a list.
    Scope(&'a [Cow<'a, str>]),
    /// A `tool`.
    Tool(&'a str),
    /// A `supersedes`.
    Supersedes,
}

struct RuleVisitor<'s> {
    max_depth: usize,
    stop: &'s dyn Fn(Early<'_>) -> bool,
}

/// The keys of a policy or effect record, as bits.
mod key {
    pub const ID: u16 = 1;
    pub const SEQ: u16 = 2;
    pub const KIND: u16 = 4;
    pub const TEXT: u16 = 8;
    pub const TOKENS: u16 = 16;
    pub const META: u16 = 32;
    pub const SCOPE: u16 = 64;
    pub const PREDICATE: u16 = 128;
    pub const EFFECT: u16 = 256;
    pub const SUPERSEDES: u16 = 512;
    pub const DEPENDS_ON: u16 = 1024;
    pub const TOOL: u16 = 2048;
    pub const MATCH: u16 = 4096;
    /// Every record has these.
    pub const REQUIRED: u16 = ID | SEQ | KIND;
    /// Keys any record may have.
    pub const COMMON: u16 = REQUIRED | TEXT | TOKENS | META;
    /// A policy must have these, and may have `supersedes` and `depends_on`.
    pub const POLICY: u16 = SCOPE | PREDICATE | EFFECT;
    /// An effect must have these, and has no other keys.
    pub const EFFECT_KEYS: u16 = TOOL | MATCH;
}

impl<'de> Visitor<'de> for RuleVisitor<'_> {
    type Value = RuleLine<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a policy or effect record")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RuleLine<'de>, A::Error> {
        let (mut id, mut seq, mut kind) = (None, None, None);
        let (mut scope, mut supersedes, mut depends_on) = (Vec::new(), None, Vec::new());
        let mut tool = None;
        let mut seen = 0u16;
        while let Some(k) = map.next_key_seed(StrSeed)? {
            let bit = match &*k {
                "id" => key::ID,
                "seq" => key::SEQ,
                "kind" => key::KIND,
                "text" => key::TEXT,
                "tokens" => key::TOKENS,
                "meta" => key::META,
                "scope" => key::SCOPE,
                "predicate" => key::PREDICATE,
                "effect" => key::EFFECT,
                "supersedes" => key::SUPERSEDES,
                "depends_on" => key::DEPENDS_ON,
                "tool" => key::TOOL,
                "match" => key::MATCH,
                // An unknown key: the strict path refuses the record, and says why.
                _ => return Err(not_light()),
            };
            if seen & bit != 0 {
                return Err(not_light());
            }
            seen |= bit;
            match bit {
                key::ID => id = Some(nonempty(map.next_value_seed(StrSeed)?)?),
                key::SEQ => seq = Some(map.next_value_seed(U64Seed)?),
                key::KIND => kind = Some(map.next_value_seed(StrSeed)?),
                key::TEXT => drop(map.next_value_seed(StrSeed)?),
                key::TOKENS => drop(map.next_value_seed(U64Seed)?),
                key::META => map.next_value_seed(Skip)?,
                key::SCOPE => {
                    scope = map.next_value_seed(ScopeSeed)?;
                    if (self.stop)(Early::Scope(&scope)) {
                        return Err(not_light());
                    }
                }
                key::PREDICATE => map.next_value_seed(PredicateSeed {
                    depth: 1,
                    max: self.max_depth,
                })?,
                key::EFFECT => {
                    let e = map.next_value_seed(StrSeed)?;
                    if !matches!(&*e, "allow" | "deny" | "require_approval") {
                        return Err(not_light());
                    }
                }
                key::SUPERSEDES => {
                    if (self.stop)(Early::Supersedes) {
                        return Err(not_light());
                    }
                    supersedes = Some(nonempty(map.next_value_seed(StrSeed)?)?);
                }
                key::DEPENDS_ON => depends_on = map.next_value_seed(IdsSeed)?,
                key::TOOL => {
                    let t = nonempty(map.next_value_seed(StrSeed)?)?;
                    if (self.stop)(Early::Tool(&t)) {
                        return Err(not_light());
                    }
                    tool = Some(t);
                }
                _ => {
                    // `match`: an object, as the strict path checks it.
                    if map.next_value_seed(Checked::TOP)? != Shape::Object {
                        return Err(not_light());
                    }
                }
            }
        }
        let (Some(id), Some(seq), Some(kind)) = (id, seq, kind) else {
            return Err(not_light());
        };
        let own = seen & !key::COMMON;
        let rule = match &*kind {
            "policy"
                if own & key::POLICY == key::POLICY
                    && own & !(key::POLICY | key::SUPERSEDES | key::DEPENDS_ON) == 0 =>
            {
                Rule::Policy {
                    scope,
                    supersedes,
                    depends_on,
                }
            }
            "effect" if own == key::EFFECT_KEYS => Rule::Effect {
                tool: tool.ok_or_else(not_light)?,
            },
            _ => return Err(not_light()),
        };
        Ok(RuleLine { id, seq, rule })
    }
}

/// A policy's `scope`: a non-empty tool name or glob, or a non-empty array of them.
struct ScopeSeed;

impl<'de> DeserializeSeed<'de> for ScopeSeed {
    type Value = Vec<Cow<'de, str>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScopeSeed {
    type Value = Vec<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scope")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(vec![nonempty(Cow::Borrowed(v))?])
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(vec![nonempty(Cow::Owned(v.to_string()))?])
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let ids = IdsSeed.visit_seq(seq)?;
        if ids.is_empty() {
            return Err(not_light());
        }
        Ok(ids)
    }
}

fn nonempty<E: de::Error>(s: Cow<'_, str>) -> Result<Cow<'_, str>, E> {
    if s.is_empty() {
        Err(not_light())
    } else {
        Ok(s)
    }
}

/// An array of non-empty strings (record ids).
struct IdsSeed;

impl<'de> DeserializeSeed<'de> for IdsSeed {
    type Value = Vec<Cow<'de, str>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for IdsSeed {
    type Value = Vec<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of ids")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(id) = seq.next_element_seed(StrSeed)? {
            out.push(nonempty(id)?);
        }
        Ok(out)
    }
}

/// The `seq` of a record line, read quickly: other values are skipped, not checked. Only
/// for lines already validated (the second pass of `pin --budget`).
pub fn seq_of(line: &str) -> Option<u64> {
    struct SeqVisitor;
    impl<'de> Visitor<'de> for SeqVisitor {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a record object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
            let mut seq = None;
            while let Some(key) = map.next_key_seed(StrSeed)? {
                if key == "seq" && seq.is_none() {
                    seq = Some(map.next_value_seed(U64Seed)?);
                } else {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
            seq.ok_or_else(not_light)
        }
    }
    serde_json::Deserializer::from_str(line)
        .deserialize_map(SeqVisitor)
        .ok()
}

/// Whether a raw JSON string's `\u` escapes decode to characters. Skipping a string
/// (`RawValue`, `IgnoredAny`) checks only their syntax, so a lone surrogate such as
/// `"\ud800"` passes there, while the strict path refuses it.
fn escapes_decode(raw: &str) -> bool {
    !raw.contains("\\u") || serde_json::from_str::<Cow<'_, str>>(raw).is_ok()
}

/// A quiet abort: the strict path will say what, if anything, is wrong.
fn not_light<E: de::Error>() -> E {
    E::custom("")
}

/// The top-level keys the scan reads; each may appear once.
#[derive(Clone, Copy)]
enum Known {
    Id = 1,
    Seq = 2,
    Kind = 4,
    Text = 8,
    Tokens = 16,
}

struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = Chatter<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a record object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Chatter<'de>, A::Error> {
        let mut id: Option<Cow<'de, str>> = None;
        let mut seq = None;
        let mut chatter = false;
        let mut text = None;
        let mut tokens = None;
        let mut seen = 0u8;
        let mut others: Vec<Cow<'de, str>> = Vec::new();
        while let Some(key) = map.next_key_seed(StrSeed)? {
            let known = match &*key {
                "id" => Some(Known::Id),
                "seq" => Some(Known::Seq),
                "kind" => Some(Known::Kind),
                "text" => Some(Known::Text),
                "tokens" => Some(Known::Tokens),
                _ => None,
            };
            if let Some(k) = known {
                if seen & k as u8 != 0 {
                    return Err(not_light());
                }
                seen |= k as u8;
            } else if key == NUMBER_TOKEN || others.contains(&key) {
                return Err(not_light());
            }
            match known {
                Some(Known::Id) => {
                    let v = map.next_value_seed(StrSeed)?;
                    if v.is_empty() {
                        return Err(not_light());
                    }
                    id = Some(v);
                }
                Some(Known::Seq) => seq = Some(map.next_value_seed(U64Seed)?),
                Some(Known::Kind) => {
                    if map.next_value_seed(StrSeed)? != "chatter" {
                        return Err(not_light());
                    }
                    chatter = true;
                }
                Some(Known::Text) => {
                    // Skipped, not decoded: the raw text is a string when it opens with `"`
                    // (serde_json has checked its escapes' syntax, the caller its UTF-8,
                    // and `escapes_decode` that its `\u` escapes make characters).
                    let raw: &'de RawValue = map.next_value()?;
                    if !raw.get().starts_with('"') || !escapes_decode(raw.get()) {
                        return Err(not_light());
                    }
                    text = Some(raw.get());
                }
                Some(Known::Tokens) => tokens = Some(map.next_value_seed(U64Seed)?),
                None => {
                    map.next_value_seed(Skip)?;
                    others.push(key);
                }
            }
        }
        match (id, seq, chatter) {
            (Some(id), Some(seq), true) => Ok(Chatter {
                id,
                seq,
                text,
                text_plain: text.is_some_and(|t| !t.contains('\\')),
                tokens,
                other_keys: !others.is_empty(),
            }),
            _ => Err(not_light()),
        }
    }
}

/// A string, borrowed from the input when it had no escapes.
struct StrSeed;

impl<'de> DeserializeSeed<'de> for StrSeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for StrSeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_string()))
    }
}

/// A JSON integer in `0..2^64` with no fraction or exponent; anything else aborts.
struct U64Seed;

impl<'de> DeserializeSeed<'de> for U64Seed {
    type Value = u64;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_u64(self)
    }
}

impl Visitor<'_> for U64Seed {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an unsigned integer")
    }

    fn visit_u64<E>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }
}

/// Validates any JSON value the way [`crate::json::parse`] does (duplicate keys refused
/// at every depth), keeping nothing.
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        // arbitrary_precision never hands out floats; be strict if it ever does.
        Err(not_light())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = Keys::default();
        while let Some(key) = map.next_key_seed(StrSeed)? {
            if key == NUMBER_TOKEN || !keys.insert(key) {
                // A number too long for u64/i64 (or a key spelt like serde_json's token):
                // the strict path knows what to make of it.
                return Err(not_light());
            }
            map.next_value_seed(Skip)?;
        }
        if keys.distinct() {
            Ok(())
        } else {
            Err(not_light())
        }
    }
}

/// The keys of one object, to refuse one that comes twice (as the strict path does):
/// compared one by one while they are few, sorted once at the end when they are many
/// (so that an object of many keys costs no more than sorting them).
#[derive(Default)]
struct Keys<'de>(Vec<Cow<'de, str>>);

impl<'de> Keys<'de> {
    const FEW: usize = 16;

    /// Notes `key`: `false` when it is already known to be a repeat.
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        if self.0.len() < Self::FEW && self.0.contains(&key) {
            return false;
        }
        self.0.push(key);
        true
    }

    /// Whether no key came twice.
    fn distinct(mut self) -> bool {
        if self.0.len() <= Self::FEW {
            return true;
        }
        self.0.sort_unstable();
        !self.0.windows(2).any(|w| matches!(w, [a, b] if a == b))
    }
}

/// What a [`Checked`] value was, for the checks that need an array or an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Array,
    Object,
    Other,
}

/// A JSON value the strict path accepts as a fact's `value`, an effect's `match` or a
/// comparison's `value` ([`crate::json::StrictValue`] then
/// [`crate::predicate::check_numbers`]): no key twice in one object, every number a
/// [`crate::decimal::Decimal`], arrays and objects at most
/// [`crate::predicate::MAX_VALUE_DEPTH`] levels deep. Checked as it is read; nothing is
/// built. `depth` is the level of the value (1 at the top).
struct Checked {
    depth: usize,
}

impl Checked {
    const TOP: Checked = Checked { depth: 1 };

    /// This value is an array or object: the level of its items, unless it is too deep.
    fn open<E: de::Error>(&self) -> Result<Checked, E> {
        if self.depth > crate::predicate::MAX_VALUE_DEPTH {
            return Err(not_light());
        }
        Ok(Checked {
            depth: self.depth + 1,
        })
    }
}

impl<'de> DeserializeSeed<'de> for Checked {
    type Value = Shape;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Shape, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    // arbitrary_precision hands out an integer that fits as u64 or i64 (a decimal), any
    // other number as a map of one token (below), never a float.
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
        Err(not_light())
    }

    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        // The level is checked before the items: an empty array too deep is refused.
        let item = self.open()?;
        while seq
            .next_element_seed(Checked { depth: item.depth })?
            .is_some()
        {}
        Ok(Shape::Array)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let Some(first) = map.next_key_seed(StrSeed)? else {
            self.open()?;
            return Ok(Shape::Object);
        };
        if first == NUMBER_TOKEN {
            // A number: its literal must be a decimal the gate can compare exactly.
            let literal = map.next_value_seed(StrSeed)?;
            let number = <serde_json::Number as std::str::FromStr>::from_str(&literal).is_ok()
                && crate::decimal::Decimal::parse(&literal).is_ok();
            return if number {
                Ok(Shape::Other)
            } else {
                Err(not_light())
            };
        }
        let item = self.open()?;
        let mut keys = Keys::default();
        let mut key = Some(first);
        while let Some(k) = key {
            if !keys.insert(k) {
                return Err(not_light());
            }
            map.next_value_seed(Checked { depth: item.depth })?;
            key = map.next_key_seed(StrSeed)?;
        }
        if keys.distinct() {
            Ok(Shape::Object)
        } else {
            Err(not_light())
        }
    }
}

/// A predicate the strict path accepts ([`crate::predicate::Predicate::parse`] of its
/// [`crate::json::StrictValue`]), at level `depth` of at most `max`: checked as it is
/// read; nothing is built.
#[derive(Clone, Copy)]
struct PredicateSeed {
    depth: usize,
    max: usize,
}

impl<'de> DeserializeSeed<'de> for PredicateSeed {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PredicateSeed {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a predicate")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        const ALL: u8 = 1;
        const ANY: u8 = 2;
        const NOT: u8 = 4;
        const FIELD: u8 = 8;
        const OP: u8 = 16;
        const VALUE: u8 = 32;
        if self.depth > self.max {
            return Err(not_light());
        }
        let inner = PredicateSeed {
            depth: self.depth + 1,
            max: self.max,
        };
        let (mut seen, mut listed, mut array) = (0u8, false, false);
        while let Some(key) = map.next_key_seed(StrSeed)? {
            let bit = match &*key {
                "all" => ALL,
                "any" => ANY,
                "not" => NOT,
                "field" => FIELD,
                "op" => OP,
                "value" => VALUE,
                _ => return Err(not_light()),
            };
            if seen & bit != 0 {
                return Err(not_light());
            }
            seen |= bit;
            match bit {
                ALL | ANY => map.next_value_seed(Predicates(inner))?,
                NOT => map.next_value_seed(inner)?,
                FIELD => drop(nonempty(map.next_value_seed(StrSeed)?)?),
                OP => {
                    let op = map.next_value_seed(StrSeed)?;
                    listed = match crate::predicate::Op::parse(&op) {
                        Some(op) => {
                            matches!(op, crate::predicate::Op::In | crate::predicate::Op::NotIn)
                        }
                        None => return Err(not_light()),
                    };
                }
                _ => array = map.next_value_seed(Checked::TOP)? == Shape::Array,
            }
        }
        // Exactly the keys of one form; `in` and `not_in` take an array.
        match seen {
            ALL | ANY | NOT => Ok(()),
            s if s == FIELD | OP | VALUE && (array || !listed) => Ok(()),
            _ => Err(not_light()),
        }
    }
}

/// The array of predicates of an `all` or `any`, each at the given level.
struct Predicates(PredicateSeed);

impl<'de> DeserializeSeed<'de> for Predicates {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Predicates {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of predicates")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let PredicateSeed { depth, max } = self.0;
        while seq
            .next_element_seed(PredicateSeed { depth, max })?
            .is_some()
        {}
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;
    use crate::record::{Kind, Limits, Place, parse_record};

    /// The strict path's answer for a line: id, seq and canonical JSON.
    fn strict(line: &str) -> Option<(String, u64, String)> {
        let v = json::parse(line.as_bytes()).ok()?;
        let r = parse_record("t", &Place::Line(1), &v, Limits::default()).ok()?;
        matches!(r.kind, Kind::Chatter).then(|| (r.id, r.seq, json::canonical(&v)))
    }

    fn light(line: &str) -> Option<(String, u64, String)> {
        let c = chatter(line)?;
        let mut out = Vec::new();
        let canonical = if c.canonical(&mut out) {
            String::from_utf8(out).unwrap()
        } else {
            json::canonical(&json::parse(line.as_bytes()).unwrap())
        };
        Some((c.id.into_owned(), c.seq, canonical))
    }

    #[test]
    fn plain_chatter_is_read_without_the_strict_path() {
        let line = r#"{"id":"r1","seq":7,"kind":"chatter","text":"hi \"there\"\t\u00e9"}"#;
        assert_eq!(light(line), strict(line));
        assert!(light(line).is_some());
        let c = chatter(line).unwrap();
        assert!(matches!(c.id, Cow::Borrowed("r1")));
    }

    #[test]
    fn canonical_json_matches_the_strict_path() {
        for line in [
            r#"{"id":"c", "seq":1, "kind":"chatter"}"#,
            r#"{"kind":"chatter","seq":18446744073709551615,"id":"\u0041\n","text":"\u0001\u001f\b\f\r\/\\\ud83d\ude42"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","meta":{"a":[1,-2,true,false,null,{},[],"x",{"b":"\u007f"}],"z":-9223372036854775808}}"#,
            r#"{"tokens":3,"text":"x","id":"c","seq":1,"kind":"chatter"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":"emoji 🙂 déjà vu"}"#,
        ] {
            assert_eq!(light(line), strict(line), "{line}");
            assert!(light(line).is_some(), "{line}");
        }
    }

    #[test]
    fn duplicate_keys_inside_chatter_are_not_light() {
        for line in [
            r#"{"id":"c","seq":1,"kind":"chatter","id":"d"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":"a","text":"a"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","meta":1,"meta":2}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","meta":{"a":1,"a":1}}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","meta":[{"a":{"b":1,"b":2}}]}"#,
        ] {
            assert!(chatter(line).is_none(), "{line}");
            assert_eq!(strict(line), None, "{line}");
        }
    }

    #[test]
    fn anything_unusual_takes_the_strict_path() {
        for line in [
            r#"{"id":"p","seq":1,"kind":"policy","scope":"x","predicate":{"all":[]},"effect":"deny"}"#,
            r#"{"id":"s","seq":1,"kind":"summary"}"#,
            r#"{"id":"","seq":1,"kind":"chatter"}"#,
            r#"{"id":"c","seq":-1,"kind":"chatter"}"#,
            r#"{"id":"c","seq":1.0,"kind":"chatter"}"#,
            r#"{"id":"c","seq":1e2,"kind":"chatter"}"#,
            r#"{"id":"c","seq":18446744073709551616,"kind":"chatter"}"#,
            r#"{"id":"c","seq":"1","kind":"chatter"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":5}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":["x"]}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":"\x"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":"a \ud800 lone surrogate"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":"\udc00"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","tokens":-1}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","meta":1.5}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","meta":{"$serde_json::private::Number":"1"}}"#,
            r#"{"id":"c","seq":1,"kind":"chatter"} x"#,
            r#"{"id":"c","seq":1,"kind":"chatter""#,
            r#"{"id":"c","seq":1}"#,
            r#"[1]"#,
        ] {
            assert!(chatter(line).is_none(), "{line}");
        }
    }

    #[test]
    fn escaped_ids_are_owned_and_equal() {
        let line = r#"{"id":"a\u0062","seq":1,"kind":"chatter"}"#;
        assert_eq!(light(line), strict(line));
        assert_eq!(light(line).unwrap().0, "ab");
    }

    /// The strict path's fact for a line: id, seq, field, supersedes, depends_on.
    type FactParts = (String, u64, String, Option<String>, Vec<String>);

    fn strict_fact(line: &str) -> Option<FactParts> {
        let v = json::parse(line.as_bytes()).ok()?;
        let r = parse_record("t", &Place::Line(1), &v, Limits::default()).ok()?;
        match r.kind {
            Kind::Fact(f) => Some((r.id, r.seq, f.field, f.supersedes, f.depends_on)),
            _ => None,
        }
    }

    fn light_fact(line: &str) -> Option<FactParts> {
        let f = fact(line)?;
        Some((
            f.id.into_owned(),
            f.seq,
            f.field.into_owned(),
            f.supersedes.map(Cow::into_owned),
            f.depends_on.into_iter().map(Cow::into_owned).collect(),
        ))
    }

    #[test]
    fn facts_the_scan_reads_are_the_strict_facts() {
        for line in [
            r#"{"id":"f","seq":3,"kind":"fact","field":"limit","value":100}"#,
            r#"{"seq":3,"value":{"a":[1,2.5,"x"]},"kind":"fact","field":"l\u0069mit","id":"f"}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":null,"text":"t\n","tokens":4,"meta":{"k":[true]}}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":false,"supersedes":"e","depends_on":["a","b"]}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1e400}"#,
        ] {
            assert!(light_fact(line).is_some(), "{line}");
            assert_eq!(light_fact(line), strict_fact(line), "{line}");
        }
    }

    /// What the loader reads of a policy or effect: id, seq, scope (or the effect's
    /// tool), supersedes, depends_on.
    type RuleParts = (String, u64, Vec<String>, Option<String>, Vec<String>);

    fn strict_rule(line: &str) -> Option<RuleParts> {
        let v = json::parse(line.as_bytes()).ok()?;
        let r = parse_record("t", &Place::Line(1), &v, Limits::default()).ok()?;
        match r.kind {
            Kind::Policy(p) => Some((r.id, r.seq, p.scope, p.supersedes, p.depends_on)),
            Kind::Effect(e) => Some((r.id, r.seq, vec![e.tool], None, Vec::new())),
            _ => None,
        }
    }

    fn light_rule(line: &str) -> Option<RuleParts> {
        let r = rule(line, Limits::default().max_predicate_depth, &|_| false)?;
        let owned = |v: Vec<Cow<'_, str>>| v.into_iter().map(Cow::into_owned).collect();
        Some(match r.rule {
            Rule::Policy {
                scope,
                supersedes,
                depends_on,
            } => (
                r.id.into_owned(),
                r.seq,
                owned(scope),
                supersedes.map(Cow::into_owned),
                owned(depends_on),
            ),
            Rule::Effect { tool } => (
                r.id.into_owned(),
                r.seq,
                vec![tool.into_owned()],
                None,
                Vec::new(),
            ),
        })
    }

    #[test]
    fn rules_the_scan_reads_are_the_strict_rules() {
        for line in [
            r#"{"id":"p","seq":3,"kind":"policy","scope":"pay","predicate":{"field":"amount","op":"gt","value":5000},"effect":"deny"}"#,
            r#"{"effect":"allow","predicate":{"all":[{"not":{"field":"a","op":"in","value":[1,"x",null]}},{"any":[]}]},"scope":["pay","re*"],"kind":"policy","seq":3,"id":"p\u0031"}"#,
            r#"{"id":"p","seq":3,"kind":"policy","scope":"x","predicate":{"all":[]},"effect":"require_approval","supersedes":"o","depends_on":["f","g"],"text":"t \u00e9\n","tokens":9,"meta":{"k":[true,"v"]}}"#,
            r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{"amount":8400,"to":{"iban":"x"}}}"#,
            r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{},"text":"sent"}"#,
        ] {
            assert!(light_rule(line).is_some(), "{line}");
            assert_eq!(light_rule(line), strict_rule(line), "{line}");
        }
    }

    #[test]
    fn the_rule_scan_stops_where_its_caller_says() {
        let depth = Limits::default().max_predicate_depth;
        let policy = r#"{"id":"p","seq":3,"kind":"policy","scope":["pay","re*"],"predicate":{"all":[]},"effect":"deny"}"#;
        let effect = r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{}}"#;
        let superseding = r#"{"id":"q","seq":5,"kind":"policy","scope":"x","predicate":{"all":[]},"effect":"deny","supersedes":"p"}"#;
        let scope_has = |name: &'static str| move |e: Early<'_>| matches!(e, Early::Scope(s) if s.iter().any(|t| t == name));
        assert!(rule(policy, depth, &scope_has("re*")).is_none());
        assert!(rule(policy, depth, &scope_has("other")).is_some());
        assert!(rule(effect, depth, &|e| matches!(e, Early::Tool("pay"))).is_none());
        assert!(rule(effect, depth, &|e| matches!(e, Early::Tool("other"))).is_some());
        let on_supersedes = |e: Early<'_>| matches!(e, Early::Supersedes);
        assert!(rule(superseding, depth, &on_supersedes).is_none());
        assert!(rule(policy, depth, &on_supersedes).is_some());
        assert!(rule(superseding, depth, &|_| false).is_some());
    }

    #[test]
    fn the_rule_scan_leaves_anything_doubtful_to_the_strict_path() {
        let p = r#""id":"p","seq":3,"kind":"policy","predicate":{"all":[]},"effect":"deny""#;
        for line in [
            format!(r#"{{{p}}}"#),
            format!(r#"{{{p},"scope":""}}"#),
            format!(r#"{{{p},"scope":[]}}"#),
            format!(r#"{{{p},"scope":["a",""]}}"#),
            format!(r#"{{{p},"scope":7}}"#),
            format!(r#"{{{p},"scope":"a","scope":"b"}}"#),
            format!(r#"{{{p},"scope":"a","extra":1}}"#),
            format!(r#"{{{p},"scope":"a","tool":"t"}}"#),
            format!(r#"{{{p},"scope":"a","supersedes":""}}"#),
            format!(r#"{{{p},"scope":"a","depends_on":"f"}}"#),
            format!(r#"{{{p},"scope":"a","text":"\ud800"}}"#),
            format!(r#"{{{p},"scope":"a","tokens":1.5}}"#),
            format!(r#"{{{p},"scope":"a","meta":{{"k":1,"k":2}}}}"#),
            format!(r#"{{{p},"scope":"a"}} x"#),
            r#"{"id":"p","seq":3,"kind":"policy","scope":"a","predicate":{"field":"x","op":"near","value":1},"effect":"deny"}"#.to_string(),
            r#"{"id":"p","seq":3,"kind":"policy","scope":"a","predicate":{"field":"x","op":"eq","value":1,"value":2},"effect":"deny"}"#.to_string(),
            r#"{"id":"p","seq":3,"kind":"policy","scope":"a","predicate":{"all":[]},"effect":"block"}"#.to_string(),
            r#"{"id":"p","seq":3,"kind":"policy","scope":"a","predicate":{"field":"x","op":"eq","value":1e99999999999999999999},"effect":"deny"}"#.to_string(),
            r#"{"id":"p","seq":3,"kind":"policy","scope":"a","effect":"deny"}"#.to_string(),
            r#"{"id":"e","seq":4,"kind":"effect","tool":"pay"}"#.to_string(),
            r#"{"id":"e","seq":4,"kind":"effect","tool":"","match":{}}"#.to_string(),
            r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":[1]}"#.to_string(),
            r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{},"supersedes":"x"}"#.to_string(),
            r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{"a":1e99999999999999999999}}"#.to_string(),
            r#"{"id":"e","seq":4,"kind":"fact","tool":"pay","match":{}}"#.to_string(),
            r#"{"id":"","seq":4,"kind":"effect","tool":"pay","match":{}}"#.to_string(),
            r#"{"id":"e","seq":-4,"kind":"effect","tool":"pay","match":{}}"#.to_string(),
        ] {
            assert!(light_rule(&line).is_none(), "{line}");
        }
        // Deeper than the limit: the strict path refuses it, so the scan must too.
        let deep = format!(
            r#"{{"id":"p","seq":3,"kind":"policy","scope":"a","predicate":{}{}{},"effect":"deny"}}"#,
            r#"{"not":"#.repeat(70),
            r#"{"all":[]}"#,
            "}".repeat(70)
        );
        assert!(strict_rule(&deep).is_none());
        assert!(light_rule(&deep).is_none());
    }

    #[test]
    fn the_fact_scan_leaves_anything_doubtful_to_the_strict_path() {
        for line in [
            r#"{"id":"f","seq":3,"kind":"fact","field":"x"}"#,
            r#"{"id":"f","seq":3,"kind":"fact","value":1}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"","value":1}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"extra":1}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"value":2}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":{"a":1,"a":1}}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"supersedes":""}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"supersedes":7}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"depends_on":"a"}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"depends_on":[""]}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"text":1}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"meta":{"k":1,"k":2}}"#,
            r#"{"id":"f","seq":3.0,"kind":"fact","field":"x","value":1}"#,
            r#"{"id":"f","seq":3,"kind":"chatter","field":"x","value":1}"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1} x"#,
            r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"text":"\ud800"}"#,
        ] {
            assert!(fact(line).is_none(), "{line}");
        }
    }

    #[test]
    fn seq_of_reads_the_seq_wherever_it_is() {
        assert_eq!(
            seq_of(r#"{"id":"f","kind":"fact","value":{"a":[1]},"seq":33,"text":"x"}"#),
            Some(33)
        );
        assert_eq!(seq_of(r#"{"id":"c","seq":7,"kind":"chatter"}"#), Some(7));
        assert_eq!(seq_of(r#"{"id":"c","kind":"chatter"}"#), None);
        assert_eq!(seq_of(r#"{"id":"c","seq":"7"}"#), None);
    }

    /// The strict path's record for a line: id, seq, kind, text, tokens, canonical JSON.
    type Parts = (String, u64, String, Option<String>, u64, String);

    fn strict_parts(line: &str) -> Option<Parts> {
        let v = json::parse(line.as_bytes()).ok()?;
        let r = parse_record("t", &Place::Line(1), &v, Limits::default()).ok()?;
        let kind = r.kind.name().to_string();
        Some((r.id, r.seq, kind, r.text, r.tokens, json::canonical(&v)))
    }

    fn simple_parts(line: &str) -> Option<Parts> {
        let Fast::Done(s) = simple(line) else {
            return None;
        };
        let mut out = Vec::new();
        assert!(s.canonical(&mut out), "{line}");
        let canonical = String::from_utf8(out).unwrap();
        let tokens = s.tokens.unwrap_or((canonical.len() as u64).div_ceil(4));
        let text = s.text().map(|t| t.unwrap());
        Some((s.id.into(), s.seq, s.kind.into(), text, tokens, canonical))
    }

    #[test]
    fn the_simple_scan_reads_what_the_strict_path_reads() {
        for line in [
            r#"{"id":"r1","seq":7,"kind":"chatter","text":"hi \"there\"\t\\ \b\f\n\r déjà 🙂"}"#,
            r#"{"id":"r1","seq":0,"kind":"summary","text":"a\/b","tokens":18446744073709551615}"#,
            " {\t\"kind\" :\"note\",\r\"seq\": 12 ,\"id\":\"x y\" } \r",
            r#"{"id":"r1","seq":7,"kind":"summary","text":""}"#,
            r#"{"id":"r1","seq":7,"kind":"chatter","tokens":0}"#,
            "{\"text\":\"0123456789abcdef0123456789abcdef\\\"x\",\"id\":\"\u{7f}\",\"seq\":7,\"kind\":\"chatter\"}",
        ] {
            assert!(simple_parts(line).is_some(), "{line}");
            assert_eq!(simple_parts(line), strict_parts(line), "{line}");
            assert_eq!(
                chatter(line).map(|c| (c.id.into_owned(), c.seq)),
                chatter_by_serde(line).map(|c| (c.id.into_owned(), c.seq)),
                "{line}"
            );
        }
    }

    #[test]
    fn the_simple_scan_decides_nothing_doubtful() {
        for line in [
            r#"{"id":"c","seq":1,"kind":"chatter","text":"\u00e9"}"#,
            r#"{"id":"c\n","seq":1,"kind":"chatter"}"#,
            r#"{"i\u0064":"c","seq":1,"kind":"chatter"}"#,
            r#"{"id":"c","seq":1,"kind":"chat\u0074er"}"#,
            r#"{"id":"","seq":1,"kind":"chatter"}"#,
            r#"{"id":"c","seq":01,"kind":"chatter"}"#,
            r#"{"id":"c","seq":-1,"kind":"chatter"}"#,
            r#"{"id":"c","seq":1.0,"kind":"chatter"}"#,
            r#"{"id":"c","seq":1e2,"kind":"chatter"}"#,
            r#"{"id":"c","seq":18446744073709551616,"kind":"chatter"}"#,
            r#"{"id":"c","seq":"1","kind":"chatter"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","tokens":true}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":null}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","id":"c"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","seq":1}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","meta":1}"#,
            r#"{"id":"c","seq":1,"kind":"chatter",}"#,
            r#"{"id":"c","seq":1,"kind":"chatter"} x"#,
            r#"{"id":"c","seq":1,"kind":"chatter"}}"#,
            r#"{"id":"c","seq":1,"kind":"chatter""#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":"a"#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":"a\x"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter","text":"a\"#,
            "{\"id\":\"c\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"a\u{1f}\"}",
            "{\"id\":\"c\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"0123456789\u{0}\"}",
            r#"{"id":"c","seq":1 "kind":"chatter"}"#,
            r#"{"id":"c","seq":1,"kind":"chatter"#,
            r#"{"id":"c","seq":1}"#,
            r#"{"seq":1,"kind":"chatter"}"#,
            r#"{"id":"c","kind":"chatter"}"#,
            r#"{"id":"c","seq":1,"kind":7}"#,
            r#"{}"#,
            r#"[1]"#,
            "",
        ] {
            assert!(!matches!(simple(line), Fast::Done(_)), "{line}");
        }
        // Only a kind that is a string other than chatter says "not chatter".
        assert!(matches!(
            simple(r#"{"id":"p","seq":1,"kind":"policy","scope":"x"}"#),
            Fast::NotChatter("policy")
        ));
        assert!(matches!(
            simple(r#"{"id":"c","seq":1,"kind":"chatter","meta":1}"#),
            Fast::Unknown
        ));
    }

    /// Every field of a [`Simple`], to compare two.
    type Fields<'a> = (&'a str, u64, &'a str, Option<&'a str>, bool, Option<u64>);

    fn fields<'a>(s: &Simple<'a>) -> Fields<'a> {
        (s.id, s.seq, s.kind, s.text, s.text_plain, s.tokens)
    }

    /// Walks `chunk` line by line as the loader does with [`simple_in`], checking at
    /// each line that it decides exactly what [`simple`] decides on the line cut out by
    /// a split on `\n`, with the same values, and that it visits the same lines. Returns
    /// how many lines it decided.
    fn walk_chunk(chunk: &str) -> usize {
        let split: Vec<&str> = chunk.split('\n').collect();
        let mut visited = Vec::new();
        let mut decided = 0;
        let mut at = 0;
        while at < chunk.len() {
            let end = chunk[at..].find('\n').map_or(chunk.len(), |n| at + n);
            let line = &chunk[at..end];
            visited.push(line);
            match (simple_in(chunk, at), simple(line)) {
                (Some((s, e, next)), Fast::Done(t)) => {
                    assert_eq!(e, end, "{chunk:?} at {at}");
                    assert_eq!(next, (end + 1).min(chunk.len()));
                    assert_eq!(fields(&s), fields(&t), "{chunk:?} at {at}");
                    decided += 1;
                }
                (None, Fast::Done(_)) => panic!("not decided in the chunk: {line:?}"),
                (Some(_), _) => panic!("decided in the chunk only: {line:?} in {chunk:?}"),
                (None, _) => {}
            }
            at = end + 1;
        }
        // The split also yields the empty text after a final `\n` (a blank line).
        let tail = usize::from(chunk.is_empty() || chunk.ends_with('\n'));
        assert_eq!(visited[..], split[..split.len() - tail], "{chunk:?}");
        decided
    }

    #[test]
    fn lines_are_decided_straight_out_of_the_chunk() {
        let good = r#"{"id":"r1","seq":1,"kind":"chatter","text":"a\tb"}"#;
        let chunks = [
            format!("{good}\n{good}\n"),
            format!("{good}\n{good}"),
            format!("\n\n {good} \r\n\t{good}\r"),
            format!("{good}\n{{\"id\":\"p\",\"seq\":2,\"kind\":\"policy\"}}\n{good}"),
            // Whitespace with a newline inside an object: two lines, neither decided.
            "{\"id\":\"r1\",\n\"seq\":1,\"kind\":\"chatter\"}".to_string(),
            "{\"id\":\"r1\",\"seq\":1\n,\"kind\":\"chatter\"}".to_string(),
            format!("{good}{good}\n{good} x\n{good}\u{c}\n"),
        ];
        let decided: Vec<usize> = chunks.iter().map(|c| walk_chunk(c)).collect();
        assert_eq!(decided, [2, 2, 2, 3, 0, 0, 0]);
    }

    /// JSON texts for predicates and values, good and bad: nested objects (keys of the
    /// predicate forms and others, some twice), arrays, and numbers, strings and literals
    /// the checks tell apart.
    fn json_piece() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = proptest::sample::select(vec![
            "0",
            "-0",
            "7",
            "-12",
            "1.5",
            "1e3",
            "-2.50E-7",
            "18446744073709551616",
            "123456789012345678901234567890123456789012345678901234567890",
            "1e999999999999",
            "true",
            "false",
            "null",
            "\"eq\"",
            "\"in\"",
            "\"not_in\"",
            "\"gt\"",
            "\"near\"",
            "\"\"",
            "\"amount\"",
            "\"a\\u00e9\"",
            "\"12\"",
            "\"x\"",
        ])
        .prop_map(str::to_string);
        leaf.prop_recursive(5, 40, 4, |inner| {
            let key = proptest::sample::select(vec![
                "all",
                "any",
                "not",
                "field",
                "op",
                "value",
                "x",
                "$serde_json::private::Number",
            ]);
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                proptest::collection::vec((key, inner), 0..4).prop_map(|kv| {
                    let parts: Vec<String> =
                        kv.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", parts.join(","))
                }),
            ]
        })
    }

    /// `depth` arrays around `inner`.
    fn nest(depth: usize, inner: &str) -> String {
        format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn values_are_checked_to_the_strict_depth() {
        let max = crate::predicate::MAX_VALUE_DEPTH;
        for depth in [max - 1, max, max + 1] {
            for inner in ["", "1", "{}"] {
                let value = nest(depth, inner);
                let line =
                    format!(r#"{{"id":"f","seq":1,"kind":"fact","field":"x","value":{value}}}"#);
                assert_eq!(light_fact(&line), strict_fact(&line), "{depth} {inner}");
                let line = format!(
                    r#"{{"id":"p","seq":1,"kind":"policy","scope":"a","effect":"deny","predicate":{{"field":"x","op":"in","value":{value}}}}}"#
                );
                assert_eq!(light_rule(&line), strict_rule(&line), "{depth} {inner}");
            }
        }
        // Predicates nested to the limit and past it.
        let max = Limits::default().max_predicate_depth;
        for depth in [max - 1, max, max + 1] {
            let p = format!(
                "{}{}{}",
                r#"{"not":"#.repeat(depth - 1),
                r#"{"all":[]}"#,
                "}".repeat(depth - 1)
            );
            let line = format!(
                r#"{{"id":"p","seq":1,"kind":"policy","scope":"a","effect":"deny","predicate":{p}}}"#
            );
            assert_eq!(light_rule(&line), strict_rule(&line), "{depth}");
        }
        // Many keys: a repeat far down is found (and many keys cost no more than a sort).
        let keys: Vec<String> = (0..40).map(|i| format!(r#""k{i}":{i}"#)).collect();
        for (extra, ok) in [("", true), (r#","k3":0"#, false)] {
            let line = format!(
                r#"{{"id":"f","seq":1,"kind":"fact","field":"x","value":{{{}{extra}}}}}"#,
                keys.join(",")
            );
            assert_eq!(light_fact(&line).is_some(), ok, "{extra}");
            assert_eq!(light_fact(&line), strict_fact(&line), "{extra}");
        }
    }

    #[test]
    fn canonical_text_is_the_strict_values_canonical_json() {
        for text in [
            r#"{"b":1,"a":[true,null,"x\u00e9\n\/"],"c":{"z":-0,"y":1.50,"x":1E3,"w":-12}}"#,
            r#"{"n":18446744073709551616,"m":-9223372036854775808,"o":{}}"#,
            r#" [ 1 , "é🙂" , { } , [ ] ] "#,
            r#""\u0000\t""#,
        ] {
            let mut out = Vec::new();
            assert!(canonical(text, &mut out), "{text}");
            let want = json::canonical(&json::parse(text.as_bytes()).unwrap());
            assert_eq!(String::from_utf8(out).unwrap(), want, "{text}");
        }
        for text in [
            r#"{"a":1,"a":2}"#,
            r#"[{"k":1,"k":1}]"#,
            "1 2",
            r#""\ud800""#,
            "{",
        ] {
            assert!(!canonical(text, &mut Vec::new()), "{text}");
            assert!(json::parse(text.as_bytes()).is_err(), "{text}");
        }
    }

    proptest::proptest! {
        /// JSON texts, good and bad: the canonical text is the strict path's, and it is
        /// refused exactly where the strict parser refuses the text.
        #[test]
        fn canonical_text_agrees_with_the_strict_path(piece in json_piece()) {
            for text in [piece.clone(), format!(r#"{{"id":"f","seq":1,"value":{piece}}}"#)] {
                let mut out = Vec::new();
                let got = canonical(&text, &mut out).then(|| String::from_utf8(out).unwrap());
                let want = json::parse(text.as_bytes()).ok().map(|v| json::canonical(&v));
                proptest::prop_assert_eq!(got, want, "{}", text);
            }
        }

        /// Predicates, comparison values, facts' values and effects' `match`es, good and
        /// bad: the scans accept exactly what the strict path accepts, without building it.
        #[test]
        fn checked_values_and_predicates_are_the_strict_ones(
            predicate in json_piece(),
            value in json_piece(),
            op in proptest::sample::select(vec!["eq", "in", "not_in", "near"]),
        ) {
            let rule = |p: &str| {
                format!(r#"{{"id":"p","seq":1,"kind":"policy","scope":"a","predicate":{p},"effect":"deny"}}"#)
            };
            for line in [
                rule(&predicate),
                rule(&format!(r#"{{"field":"x","op":"{op}","value":{value}}}"#)),
                rule(&format!(r#"{{"any":[{predicate},{{"not":{value}}}]}}"#)),
                format!(r#"{{"id":"e","seq":1,"kind":"effect","tool":"a","match":{value}}}"#),
            ] {
                proptest::prop_assert_eq!(light_rule(&line), strict_rule(&line), "{}", line);
            }
            let line = format!(r#"{{"id":"f","seq":1,"kind":"fact","field":"x","value":{value}}}"#);
            proptest::prop_assert_eq!(light_fact(&line), strict_fact(&line), "{}", line);
        }

        /// Chunks of lines put together from the same pieces (newlines included): the scan
        /// in the chunk decides exactly the lines the scan of each cut-out line decides,
        /// with the same values, and finds the same line ends.
        #[test]
        fn the_scan_in_a_chunk_agrees_with_the_scan_of_its_lines(
            lines in proptest::collection::vec((
                proptest::sample::select(vec![0usize, 1, 2, 3]),
                proptest::collection::vec(proptest::sample::select(vec![
                    "{", "}", ",", ":", " ", "\"", "\"id\"", "\"seq\"", "\"kind\"",
                    "\"text\"", "\"tokens\"", "\"chatter\"", "\"r1\"", "0", "7", "01",
                    r#""a\tb""#, "\"é🙂\"", "\"\u{1}\"", "\r", "\n", "\t", "\u{c}",
                ]), 0..6),
            ), 0..8),
            final_newline in proptest::bool::ANY,
        ) {
            let whole = r#"{"id":"r1","seq":3,"kind":"chatter","text":"x"}"#;
            let chunk: Vec<String> = lines
                .iter()
                .map(|(shape, pieces)| {
                    let rest = pieces.concat();
                    match shape {
                        0 => format!("{whole}{rest}"),
                        1 => format!("{rest}{whole}"),
                        2 => format!(r#"{{"id":"r2","seq":4,{rest}"kind":"summary"}}"#),
                        _ => rest,
                    }
                })
                .collect();
            let mut chunk = chunk.join("\n");
            if final_newline {
                chunk.push('\n');
            }
            walk_chunk(&chunk);
        }

        /// Lines put together from pieces, good and bad: whatever the simple scan decides
        /// is what the strict path reads, and `chatter` answers as the serde scan does.
        #[test]
        fn the_simple_scan_agrees_with_the_strict_path(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "{", "}", ",", ":", " ", "\"", "\"id\"", "\"seq\"", "\"kind\"", "\"text\"",
                "\"tokens\"", "\"meta\"", "\"chatter\"", "\"summary\"", "\"fact\"", "\"r1\"",
                "\"\"", "0", "7", "01", "-1", "1.5", "1e3", "18446744073709551616", "null",
                r#""a\tb""#, r#""a\/b""#, r#""\u00e9""#, "\"é🙂\"", r#""\x""#,
                "\"\u{1}\"", "[", "]", "\\", "\r", "\n",
            ]), 0..24),
            shape in proptest::sample::select(vec![0usize, 1, 2]),
        ) {
            // Mostly near-valid records: a valid prefix, then the random pieces.
            let prefix = ["", r#"{"id":"r1","seq":3,"#, r#"{"kind":"chatter","id":"r2","#][shape];
            let line = format!("{prefix}{}", pieces.concat());
            if let Fast::Done(_) = simple(&line) {
                let light = simple_parts(&line);
                proptest::prop_assert!(light.is_some());
                proptest::prop_assert_eq!(light, strict_parts(&line), "{}", line);
            }
            proptest::prop_assert_eq!(
                chatter(&line).map(|c| (c.id.into_owned(), c.seq)),
                chatter_by_serde(&line).map(|c| (c.id.into_owned(), c.seq))
            );
        }

        /// Whole records, shuffled keys and random texts: decided, and read as the strict
        /// path reads them.
        #[test]
        fn well_formed_simple_records_are_decided(
            text in "[a-z é🙂\\\\\"\t\n/]{0,40}",
            seq in proptest::num::u64::ANY,
            tokens in proptest::option::of(proptest::num::u64::ANY),
            kind in proptest::sample::select(vec!["chatter", "summary", "note"]),
            order in proptest::sample::select(vec![0usize, 1, 2]),
        ) {
            let text = serde_json::to_string(&text).unwrap();
            let mut keys = vec![
                format!("\"id\":\"r{seq}\""),
                format!("\"seq\":{seq}"),
                format!("\"kind\":\"{kind}\""),
                format!("\"text\":{text}"),
            ];
            if let Some(t) = tokens {
                keys.push(format!("\"tokens\":{t}"));
            }
            keys.rotate_left(order);
            let line = format!("{{{}}}", keys.join(","));
            proptest::prop_assert!(matches!(simple(&line), Fast::Done(_)), "{}", line);
            proptest::prop_assert_eq!(simple_parts(&line), strict_parts(&line), "{}", line);
        }
    }

    /// [`string_end`], one byte at a time: the reference the word and block searches
    /// must agree with.
    fn string_end_bytewise(b: &[u8], mut i: usize) -> Option<(usize, Escapes)> {
        let mut escapes = Escapes::None;
        loop {
            match *b.get(i)? {
                b'"' => return Some((i + 1, escapes)),
                b'\\' => {
                    match *b.get(i + 1)? {
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => {
                            if escapes == Escapes::None {
                                escapes = Escapes::Plain;
                            }
                        }
                        b'/' => escapes = Escapes::Slash,
                        _ => return None,
                    }
                    i += 2;
                }
                c if c < 0x20 => return None,
                _ => i += 1,
            }
        }
    }

    #[test]
    fn the_string_search_finds_every_special_byte_at_every_offset() {
        // One special byte (or escape) at each position of strings of every length
        // around the 8- and 16-byte steps, behind every start offset.
        let specials: [&[u8]; 9] = [
            b"\"", b"\\\"", b"\\\\", b"\\/", b"\\u", b"\\x", b"\x00", b"\x1f", b"\n",
        ];
        let fillers: [u8; 4] = [b'a', 0x20, 0x7f, 0xc3];
        for len in 0..48 {
            for at in 0..=len {
                for special in specials {
                    for &fill in &fillers {
                        for start in 0..3 {
                            let mut b = vec![fill; start];
                            b.extend(std::iter::repeat_n(fill, at));
                            b.extend_from_slice(special);
                            b.extend(std::iter::repeat_n(fill, len - at));
                            b.push(b'"');
                            assert_eq!(
                                string_end(&b, start),
                                string_end_bytewise(&b, start),
                                "{b:?} from {start}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        for n in [0, 7, 10, 99, 1234567890, u64::MAX] {
            let mut out = Vec::new();
            write_u64(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }
    }
}
