//! The lean loader's reading of a document (one JSON object with `records`) without
//! holding it whole: its top-level keys, and its records in chunks that start at a record.
//!
//! A `check` must know the kept ids and the action before it scans the records, and a
//! harness's document puts them anywhere: before `records` (the head, parsed as it is met)
//! or after it (the tail). The tail is found by speculation: from the end of the input,
//! candidate positions of the `]` that closes `records` are tried, and the text after one
//! is parsed strictly as the rest of the top-level object, up to the end of the input.
//! Then the records are cut into chunks at speculated item starts, and each chunk is
//! walked item by item by a worker of [the lean loader](super).
//!
//! Nothing here is trusted. The first chunk starts where the head parse saw the first
//! record start; each chunk's walk must consume it exactly, ending after a `,` (so the
//! next chunk starts at a true record) or, for the last chunk, after a record right
//! before the candidate `]`. A wrong guess anywhere fails a walk, and the load falls back
//! to the exact loader ([`Fallback`]), which gives the report or the error it always
//! gave. This module reads bytes handed to it through [`Positional`]; it never touches
//! files.

use std::borrow::Cow;

use serde::de::{Deserialize, IgnoredAny};
use serde_json::Value;

use super::{Batch, Fallback};
use crate::json::{MAX_NESTING, StrictValue, skip_ws};

/// An input the document walk reads by position: a file (the CLI's reader), or bytes
/// held in memory (stdin, or chunks put together).
pub trait Positional<'a>: Send {
    /// The input's length in bytes.
    fn size(&self) -> u64;

    /// Exactly `len` bytes of the input from `at`. Fewer (a file that shrank) is
    /// [`Fallback`], and so is a read that reaches [`Positional::size`] when the input
    /// goes on past it (a file that grew).
    fn read_at(&mut self, at: u64, len: usize) -> Result<Cow<'a, [u8]>, Fallback>;

    /// Takes back a buffer [`Positional::read_at`] gave, done with, to read into again
    /// (by default it is freed).
    fn give_back(&mut self, buf: Vec<u8>) {
        drop(buf);
    }

    /// Bytes per chunk of records (more when one record is larger). Tests make it small,
    /// to cut a small document in many places.
    fn chunk_size(&self) -> usize {
        SPAN
    }
}

impl<'a> Positional<'a> for &'a [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }

    fn read_at(&mut self, at: u64, len: usize) -> Result<Cow<'a, [u8]>, Fallback> {
        let bytes: &'a [u8] = self;
        let start = usize::try_from(at).map_err(|_| Fallback)?;
        let end = start.checked_add(len).ok_or(Fallback)?;
        bytes.get(start..end).map(Cow::Borrowed).ok_or(Fallback)
    }
}

/// Bytes per chunk of records, unless the reader says otherwise.
const SPAN: usize = 1 << 20;

/// Bytes first read for the head, and for the tail; each is read again four times larger
/// while it is not found, up to [`MOST`].
const HEAD_READ: usize = 64 << 10;
const TAIL_READ: usize = 4 << 20;

/// The most bytes read for the head or for the tail: past it, the exact loader runs.
const MOST: usize = 64 << 20;

/// The most candidate positions tried, for the `]` that ends `records` (its remainder is
/// parsed) and for a chunk's cut (what follows is read).
const TRIES: usize = 64;

/// Bytes read past a chunk's end to check that its cut is a record start (with a small
/// chunk size, as little as the chunk, but a kilobyte at least).
const LOOKAHEAD: usize = 16 << 10;

/// Where a document's records are, and its other top-level keys.
#[derive(Debug)]
pub struct Layout {
    /// Where the first record starts (just after `[` and whitespace).
    pub items: u64,
    /// Where the `]` that closes `records` is (as speculated from the tail).
    pub end: u64,
    /// The other top-level keys, in the order met (head, then tail), each value parsed
    /// strictly. Checking them (known keys, no repeats) is the caller's.
    pub keys: Vec<(String, Member)>,
}

/// The value of a top-level key other than `records`.
#[derive(Debug)]
pub enum Member {
    /// `kept`, read straight into ids (anything but an array of strings is refused, as
    /// the exact loader refuses it).
    Kept(Vec<String>),
    /// Any other key's value.
    Value(Value),
}

/// Why a parse stopped.
#[derive(Debug, PartialEq, Eq)]
enum Stop {
    /// The bytes read end first: read more.
    Short,
    /// Not what was expected.
    Bad,
}

/// Reads the head (from `start`, past a byte-order mark) and speculates the tail of the
/// document `src`. [`Fallback`] when either cannot be found within 64 MiB, when
/// `records` is empty, or when the input is not such a document at all.
pub fn layout(src: &mut dyn Positional<'_>, start: u64) -> Result<Layout, Fallback> {
    let size = src.size();
    let mut want = HEAD_READ;
    let (mut keys, items) = loop {
        let len = usize::try_from(size.saturating_sub(start))
            .unwrap_or(usize::MAX)
            .min(want);
        let buf = src.read_at(start, len)?;
        let whole = start + len as u64 == size;
        let parsed = head(&buf);
        recycle(src, buf);
        match parsed {
            Ok((keys, at)) => break (keys, start + at as u64),
            Err(Stop::Short) if !whole && want < MOST => want *= 4,
            Err(_) => return Err(Fallback),
        }
    };
    let mut want = TAIL_READ;
    loop {
        let from = size.saturating_sub(want as u64).max(items);
        let len = size
            .checked_sub(from)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or(Fallback)?;
        let buf = src.read_at(from, len)?;
        let found = tail(&buf);
        recycle(src, buf);
        if let Some((at, mut tail)) = found {
            keys.append(&mut tail);
            return Ok(Layout {
                items,
                end: from + at as u64,
                keys,
            });
        }
        if from == items || want >= MOST {
            return Err(Fallback);
        }
        want *= 4;
    }
}

/// Gives a buffer of the head or the tail back to the reader, which reads the first chunk
/// of records into it: freeing a large one would raise the allocator's threshold for
/// mapping memory of its own, and the chunk buffers freed after it would then stay in
/// the heap.
fn recycle(src: &mut dyn Positional<'_>, buf: Cow<'_, [u8]>) {
    if let Cow::Owned(mut buf) = buf {
        // A chunk's worth is kept (shrinking keeps the mapping).
        buf.clear();
        buf.shrink_to(SPAN + LOOKAHEAD + 1);
        src.give_back(buf);
    }
}

/// The top-level keys before `records` and where its first record starts, in `buf` (the
/// start of the input, past a byte-order mark).
fn head(buf: &[u8]) -> Result<(Vec<(String, Member)>, usize), Stop> {
    let mut keys = Vec::new();
    let mut i = skip_ws(buf, 0);
    expect(buf, i, b'{')?;
    loop {
        let (key, at) = key(buf, i + 1)?;
        if key == "records" {
            expect(buf, at, b'[')?;
            let first = skip_ws(buf, at + 1);
            // An empty `records` is left to the exact loader.
            expect(buf, first, b'{')?;
            return Ok((keys, first));
        }
        let (value, end) = member(&key, buf, at)?;
        keys.push((key, value));
        i = skip_ws(buf, end);
        expect(buf, i, b',')?;
    }
}

/// The `]` that closes `records` and the keys after it, speculated from `buf`, the last
/// bytes of the input: among the first [`TRIES`] candidates nearest the end (a `]` after
/// a `}`, before a `,` or a `}`), the earliest whose remainder parses as the rest of the
/// top-level object up to the end. The earliest, because the values after `records` may
/// hold arrays of objects too (`tools`), whose `]` would parse as well.
fn tail(buf: &[u8]) -> Option<(usize, Vec<(String, Member)>)> {
    let mut found = None;
    let mut tries = 0;
    let mut end = buf.len();
    while tries < TRIES {
        let at = buf.get(..end)?.iter().rposition(|&b| b == b']');
        let Some(at) = at else { break };
        end = at;
        let before = skip_ws_back(buf, at);
        let after = skip_ws(buf, at + 1);
        if before.checked_sub(1).and_then(|b| buf.get(b)) != Some(&b'}')
            || !matches!(buf.get(after), Some(b',' | b'}'))
        {
            continue;
        }
        tries += 1;
        if let Ok(keys) = rest(buf, at) {
            found = Some((at, keys));
        }
    }
    found
}

/// The members after the `]` at `at` in `buf` (which ends where the input ends): `}`, or
/// `,` and members up to `}`, then only whitespace.
fn rest(buf: &[u8], at: usize) -> Result<Vec<(String, Member)>, Stop> {
    let mut keys = Vec::new();
    let mut i = skip_ws(buf, at + 1);
    loop {
        match buf.get(i) {
            Some(b'}') if skip_ws(buf, i + 1) == buf.len() => return Ok(keys),
            Some(b',') => {
                let (key, at) = key(buf, i + 1)?;
                if key == "records" {
                    return Err(Stop::Bad);
                }
                let (value, end) = member(&key, buf, at)?;
                keys.push((key, value));
                i = skip_ws(buf, end);
            }
            _ => return Err(Stop::Bad),
        }
    }
}

/// A member's key at `i` (after whitespace), then `:`: the key, decoded, and where its
/// value starts.
fn key(buf: &[u8], i: usize) -> Result<(String, usize), Stop> {
    let i = skip_ws(buf, i);
    expect(buf, i, b'"')?;
    let (key, end) = one::<String>(buf, i)?;
    let colon = skip_ws(buf, end);
    expect(buf, colon, b':')?;
    Ok((key, skip_ws(buf, colon + 1)))
}

/// The value at `i` of the top-level key `key`, parsed strictly (duplicate keys refused),
/// and the index just past it. It sits one level deep in the document, so it may nest
/// one level less than a value on its own.
fn member(key: &str, buf: &[u8], i: usize) -> Result<(Member, usize), Stop> {
    if key == "kept" {
        let (ids, end) = one::<Vec<String>>(buf, i)?;
        return Ok((Member::Kept(ids), end));
    }
    let (StrictValue(value), end) = one::<StrictValue>(buf, i)?;
    if depth(&value) >= MAX_NESTING {
        return Err(Stop::Bad);
    }
    Ok((Member::Value(value), end))
}

/// One JSON value at `i` (after whitespace), and the index just past it.
fn one<'de, T: Deserialize<'de>>(buf: &'de [u8], i: usize) -> Result<(T, usize), Stop> {
    let rest = buf.get(i..).ok_or(Stop::Short)?;
    let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<T>();
    match values.next() {
        Some(Ok(value)) => Ok((value, i + values.byte_offset())),
        Some(Err(e)) if e.is_eof() => Err(Stop::Short),
        Some(Err(_)) => Err(Stop::Bad),
        None => Err(Stop::Short),
    }
}

/// Levels of arrays and objects in `value` (0 for a scalar).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// `Ok` when `buf[i]` is `byte`; [`Stop::Short`] past the end.
fn expect(buf: &[u8], i: usize, byte: u8) -> Result<(), Stop> {
    match buf.get(i) {
        Some(&b) if b == byte => Ok(()),
        Some(_) => Err(Stop::Bad),
        None => Err(Stop::Short),
    }
}

/// The index just past the last byte before `i` that is not JSON whitespace (0 if none).
fn skip_ws_back(b: &[u8], mut i: usize) -> usize {
    while i > 0 && matches!(b.get(i - 1), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i -= 1;
    }
    i
}

/// Where to cut a chunk of records: the last `{` in `buf` up to `limit` (not at 0) that
/// follows `}`, a `,` and whitespace, is followed by whitespace and `"` (a record's first
/// key), and from which the bytes after it read as records separated by commas up to
/// the end of `buf` (see [`reads_as_records`]). A speculation: the walks check it.
fn item_cut(buf: &[u8], limit: usize) -> Option<usize> {
    let mut end = limit.min(buf.len());
    let mut tries = 0;
    while tries < TRIES {
        let at = buf.get(..end)?.iter().rposition(|&b| b == b'{')?;
        end = at;
        if at == 0 {
            return None;
        }
        if buf.get(skip_ws(buf, at + 1)) != Some(&b'"') {
            continue;
        }
        let comma = skip_ws_back(buf, at);
        if comma < 2 || buf.get(comma - 1) != Some(&b',') {
            continue;
        }
        let close = skip_ws_back(buf, comma - 1);
        if close == 0 || buf.get(close - 1) != Some(&b'}') {
            continue;
        }
        tries += 1;
        if reads_as_records(buf.get(at..)?) {
            return Some(at);
        }
    }
    None
}

/// Whether `buf` (which starts with `{`) reads as JSON objects separated by commas (and
/// whitespace) up to its end, where it may stop anywhere. A `{` inside a record that
/// looks like a record start (`[{..},{"a":..}]`) fails this as soon as its array ends.
fn reads_as_records(buf: &[u8]) -> bool {
    let text = match simdutf8::compat::from_utf8(buf) {
        Ok(text) => text,
        // Read up to the first bad byte (or a character cut by the end of the read).
        Err(e) => match buf.get(..e.valid_up_to()).map(simdutf8::compat::from_utf8) {
            Some(Ok(text)) => text,
            _ => return false,
        },
    };
    let b = text.as_bytes();
    let mut at = 0;
    loop {
        let end = match crate::scan::simple_item(text, at) {
            Some((_, end)) => end,
            None => {
                let rest = text.get(at..).unwrap_or_default();
                let mut values = serde_json::Deserializer::from_str(rest).into_iter::<IgnoredAny>();
                match values.next() {
                    Some(Ok(_)) => at + values.byte_offset(),
                    Some(Err(e)) => return e.is_eof(),
                    None => return true,
                }
            }
        };
        at = skip_ws(b, end);
        match b.get(at) {
            None => return true,
            Some(b',') => at = skip_ws(b, at + 1),
            Some(_) => return false,
        }
        match b.get(at) {
            None => return true,
            Some(b'{') => {}
            Some(_) => return false,
        }
    }
}

/// The records of a document laid out as `layout` says, in chunks that each start at a
/// (speculated) record: [`Batch::Span`]s covering `layout.items..layout.end` exactly.
pub fn spans<'s, 'a>(
    src: &'s mut dyn Positional<'a>,
    layout: &Layout,
) -> impl Iterator<Item = Result<Batch<'a>, Fallback>> + Send + 's
where
    'a: 's,
{
    Spans {
        src,
        at: layout.items,
        end: layout.end,
    }
}

struct Spans<'s, 'a> {
    src: &'s mut dyn Positional<'a>,
    at: u64,
    end: u64,
}

impl<'a> Iterator for Spans<'_, 'a> {
    type Item = Result<Batch<'a>, Fallback>;

    fn next(&mut self) -> Option<Self::Item> {
        let left = self.end.checked_sub(self.at).filter(|&n| n > 0)?;
        // A chunk is cut within its first `want` bytes; the bytes after (up to
        // `lookahead` of them) tell a record start from a lookalike inside a record.
        let chunk = self.src.chunk_size().max(1);
        let lookahead = chunk.min(LOOKAHEAD) as u64;
        let mut want = chunk as u64;
        loop {
            let n = want.saturating_add(lookahead).min(left);
            let read = usize::try_from(n)
                .map_err(|_| Fallback)
                .and_then(|len| self.src.read_at(self.at, len));
            let buf = match read {
                Ok(buf) => buf,
                Err(e) => {
                    self.at = self.end;
                    return Some(Err(e));
                }
            };
            if n == left {
                self.at = self.end;
                return Some(Ok(Batch::Span(buf, true)));
            }
            let limit = usize::try_from(want).unwrap_or(usize::MAX);
            if let Some(cut) = item_cut(&buf, limit) {
                self.at += cut as u64;
                let buf = match buf {
                    Cow::Borrowed(b) => Cow::Borrowed(b.get(..cut).unwrap_or_default()),
                    Cow::Owned(mut b) => {
                        b.truncate(cut);
                        Cow::Owned(b)
                    }
                };
                return Some(Ok(Batch::Span(buf, false)));
            }
            // No record starts early enough (one record is larger than the chunk): read
            // a larger one.
            want = want.saturating_mul(2);
        }
    }
}

/// The index just past the JSON value that starts at `i` in `text` (syntax only: the
/// record paths validate it fully).
pub(crate) fn value_end(text: &str, i: usize) -> Option<usize> {
    let rest = text.get(i..)?;
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<IgnoredAny>();
    match values.next() {
        Some(Ok(_)) => Some(i + values.byte_offset()),
        _ => None,
    }
}

/// Whether a record's text nests at most as deep as a record in a document may: it sits
/// two levels deep (the document object, the `records` array), so it may nest two levels
/// less than [`MAX_NESTING`]. Checked because the record paths parse it on its own.
pub(crate) fn record_depth_ok(text: &[u8]) -> bool {
    let limit = MAX_NESTING - 2;
    // Deeper takes more than `limit` openers and as many closers.
    if text.len() <= 2 * limit || text.iter().filter(|&&b| b == b'{' || b == b'[').count() <= limit
    {
        return true;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return false;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_gives_the_keys_before_records_and_where_the_first_record_is() {
        let text = br#" { "kept" : ["a"], "meta":{"x":[{"y":1}]} , "records" : [ {"id":"a"}]}"#;
        let (keys, at) = head(text).unwrap();
        let names: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["kept", "meta"]);
        assert_eq!(&text[at..at + 5], br#"{"id""#);
        // Escaped keys are decoded.
        let (keys, _) = head(br#"{"k\u0065pt":[],"rec\u006frds":[{}]}"#).unwrap();
        assert_eq!(keys[0].0, "kept");
        // Cut short, or not such a head at all.
        for short in [
            &br#"{"kept":["a"#[..],
            br#"{"records""#,
            br#"{"records":[ "#,
            b" ",
        ] {
            assert_eq!(head(short).err(), Some(Stop::Short), "{short:?}");
        }
        for bad in [
            &br#"{"records":[]}"#[..],
            br#"{"records":{}}"#,
            br#"{"records":[1]}"#,
            br#"{"kept":[]}"#,
            br#"{"kept":[] "records":[{}]}"#,
            br#"{"kept":[1,]],"records":[{}]}"#,
            br#"{"kept":{"a":1,"a":2},"records":[{}]}"#,
            br#"{kept:[],"records":[{}]}"#,
            br#"["records"]"#,
        ] {
            assert_eq!(head(bad).err(), Some(Stop::Bad), "{bad:?}");
        }
    }

    #[test]
    fn the_tail_is_the_earliest_remainder_that_parses() {
        let tools = r#"[{"name":"t","input_schema":{"anyOf":[{"type":"object"}]}}]"#;
        // The `]` that ends `records` is the one right after the record `z`.
        for (text, want) in [
            (
                format!(r#"{{"id":"z"}}],"kept":["z"],"tools":{tools}}}"#),
                vec!["kept", "tools"],
            ),
            (
                format!(r#"{{"id":"z"}}] ,"tools":{tools} }} "#),
                vec!["tools"],
            ),
            (r#"{"id":"z"}] }"#.to_string(), vec![]),
            (
                r#"{"a":[{"b":1}]},{"meta":[{}],"id":"z"}],"kept":[]}"#.to_string(),
                vec!["kept"],
            ),
        ] {
            let (at, keys) = tail(text.as_bytes()).unwrap();
            let z = text.find(r#""z"}"#).unwrap() + 4;
            assert_eq!(at, skip_ws(text.as_bytes(), z), "{text}");
            let names: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(names, want, "{text}");
        }
        for none in [
            r#"{"id":"z"}],"kept":[]"#,
            r#"{"id":"z"}],"kept":[]}}"#,
            r#"{"id":"z"}],"kept":[],}"#,
            r#"{"id":"z"}],"records":[]}"#,
            r#"{"id":"z"}],"kept":{"a":1,"a":1}}"#,
            r#"{"id":"z"},]}"#,
            r#"{"id":"z"}"#,
        ] {
            assert!(tail(none.as_bytes()).is_none(), "{none}");
        }
    }

    #[test]
    fn a_chunk_is_cut_where_the_bytes_after_read_as_records() {
        let rec = r#"{"id":"a","seq":1,"kind":"chatter"}"#;
        let policy = r#"{"id":"p","predicate":{"all":[{"field":"x"},{"any":[]}]}}"#;
        // Cut before the last record start the lookahead bears out.
        let buf = format!("{rec},{rec},\n {rec},{rec}");
        let at = item_cut(buf.as_bytes(), buf.len()).unwrap();
        assert_eq!(&buf[at..], rec);
        let at = item_cut(buf.as_bytes(), buf.len() - rec.len()).unwrap();
        assert_eq!(&buf[at..], format!("{rec},{rec}"));
        // A lookalike inside a record is passed over once its array ends in view.
        let buf = format!("{rec},{policy},{rec}");
        let limit = buf.find("{\"any\"").unwrap() + 1;
        let at = item_cut(buf.as_bytes(), limit).unwrap();
        assert_eq!(&buf[at..], format!("{policy},{rec}"));
        // Not cut: at 0, nothing like a record start, or what follows is no record.
        for buf in [
            rec.to_string(),
            format!("{rec},1"),
            format!("{rec}, {{}}"),
            format!("{rec}{rec}"),
            format!("{rec},{{\"a\":1}} 7"),
            r#"{"t":"},{\"x\":1}"}"#.to_string(),
        ] {
            assert_eq!(item_cut(buf.as_bytes(), buf.len()), None, "{buf}");
        }
    }

    #[test]
    fn records_read_by_position_from_memory_must_be_there() {
        let mut bytes: &[u8] = b"0123456789";
        assert_eq!(bytes.size(), 10);
        assert_eq!(&*bytes.read_at(2, 3).unwrap(), b"234");
        assert_eq!(&*bytes.read_at(10, 0).unwrap(), b"");
        assert!(bytes.read_at(8, 3).is_err());
        assert!(bytes.read_at(u64::MAX, 1).is_err());
    }

    proptest::proptest! {
        /// The nesting a record may have inside a document, counted without parsing it,
        /// is what the parser of the whole document allows.
        #[test]
        fn the_record_depth_check_agrees_with_the_parser(
            depth in 118usize..130,
            opens in proptest::collection::vec(proptest::bool::ANY, 130),
            noise in proptest::sample::select(vec!["", "\"[{\\\"\"", "\"a\\\\\"", "1"]),
        ) {
            let mut item = String::from("{\"id\":\"r\",\"seq\":1,\"kind\":\"chatter\",\"meta\":");
            let mut closes = Vec::new();
            for open in opens.iter().take(depth - 1) {
                if *open {
                    item.push_str("{\"k\":");
                    closes.push("}");
                } else {
                    item.push('[');
                    item.push_str(noise);
                    if !noise.is_empty() {
                        item.push(',');
                    }
                    closes.push("]");
                }
            }
            item.push('0');
            for c in closes.iter().rev() {
                item.push_str(c);
            }
            item.push('}');
            let doc = format!("{{\"records\":[{item}]}}");
            proptest::prop_assert_eq!(
                record_depth_ok(item.as_bytes()),
                crate::json::parse(doc.as_bytes()).is_ok(),
                "{}", item
            );
        }
    }
}
