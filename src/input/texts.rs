//! The light pass of transcript mode: each record's id and `text`, and the tools its
//! rules name, read from a large JSON Lines store without building its records.
//!
//! Which records are in view depends on every record's text, and the lean loader needs
//! the kept ids before it starts. So a hook under `--kept-from transcript` reads the
//! store twice: this pass for the texts, then the lean loader with the records in view
//! as its kept ids. This pass decides nothing on its own: it reads only what it can read
//! plainly (a line serde cannot read as an object with a string `id` is `None`, and the
//! caller takes the exact path), and the lean loader then validates every record as it
//! always does, falling back to the exact loader for anything it cannot prove fine. The
//! texts are decoded as serde_json decodes them for the exact loader: by serde_json, but
//! for the escapes it writes itself (`\n`, `\"`, ...), which are undone here.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use std::collections::hash_map::Entry;

use crate::record::Limits;
use crate::scan;
use crate::view::{KeyMap, key_of};

/// The top-level keys of a record this pass reads; the others are skipped unread.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    scope: Option<Value>,
    #[serde(default)]
    tool: Option<Value>,
}

/// A record's `text` as the light pass meets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text<'t> {
    /// As written in its line: a JSON string, quotes and escapes included, as the simple
    /// scan read it (no raw control character, no quote unescaped). Two texts written
    /// alike are alike decoded. `plain`: the scan found no escapes in it but `\"`, `\\`,
    /// `\b`, `\f`, `\n`, `\r` and `\t` (see [`scan::Simple::text_plain`]).
    Written { raw: &'t str, plain: bool },
    /// Decoded already (a line serde read).
    Decoded(&'t str),
}

impl<'t> Text<'t> {
    /// The text, decoded (into `buf` when it holds an escape); `None` when it cannot be
    /// decoded: the light pass then gives up.
    pub fn decoded<'b>(self, buf: &'b mut String) -> Option<&'b str>
    where
        't: 'b,
    {
        match self {
            Text::Decoded(text) => Some(text),
            Text::Written { raw, plain: true } => unescape(raw, buf),
            Text::Written { raw, plain: false } => decode(raw, buf),
        }
    }
}

/// A JSON string the simple scan read with only the escapes serde_json writes (see
/// [`Text::Written`]), decoded: the text between its quotes when it has no escape, else
/// each escape undone into `buf`, as serde_json undoes it (anything else is left to
/// [`decode`]).
fn unescape<'t, 'b>(raw: &'t str, buf: &'b mut String) -> Option<&'b str>
where
    't: 'b,
{
    let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return decode(raw, buf);
    };
    let Some(mut at) = memchr::memchr(b'\\', inner.as_bytes()) else {
        return Some(inner);
    };
    buf.clear();
    let mut rest = inner;
    loop {
        // A backslash is ASCII: the cut is on a character boundary.
        let (plain, escaped) = rest.split_at_checked(at)?;
        buf.push_str(plain);
        let c = match escaped.as_bytes().get(1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            _ => return decode(raw, buf),
        };
        buf.push(c);
        rest = escaped.get(2..)?;
        match memchr::memchr(b'\\', rest.as_bytes()) {
            Some(next) => at = next,
            None => break,
        }
    }
    buf.push_str(rest);
    Some(buf)
}

/// The light pass over the JSON Lines store at `path` (`stdin`'s bytes instead, when
/// given): `each` is called with the id and `text` of each record that has a text, in
/// the store's order (for bytes given, each text written in a line is a slice of them);
/// when it gives `None`, so does the pass. What it gives back is the tool names and globs
/// that policy scopes and effect tools give (`None` in it when one could not be read as a
/// string: then every tool counts as named). `None`: a document, an input the lean
/// loader would not read (too small, too large), or a line the pass cannot read plainly.
pub fn record_texts(
    path: &str,
    stdin: Option<&[u8]>,
    limits: Limits,
    mut each: impl FnMut(&str, Text<'_>) -> Option<()>,
) -> Option<Option<Vec<String>>> {
    let mut named = Some(Vec::new());
    if let Some(bytes) = stdin {
        // Bytes already held are read where they are, in one piece.
        if bytes.len() < super::source::LEAN_FROM {
            return None;
        }
        let bytes = bytes.strip_prefix(super::BOM).unwrap_or(bytes);
        let prefix = bytes.get(..super::source::CHUNK).unwrap_or(bytes);
        if crate::stream::is_document(prefix) != Some(false) {
            return None;
        }
        let text = simdutf8::basic::from_utf8(bytes).ok()?;
        read_lines(text, &mut each, &mut named)?;
        return Some(named);
    }
    let (first, chunks, _) = super::source::lean_chunks(path, stdin, limits)?;
    let first = first.strip_prefix(super::BOM).unwrap_or(&first).to_vec();
    if crate::stream::is_document(&first) != Some(false) {
        return None;
    }
    for chunk in std::iter::once(Ok(first.into())).chain(chunks) {
        let chunk = chunk.ok()?;
        let chunk = simdutf8::basic::from_utf8(&chunk).ok()?;
        read_lines(chunk, &mut each, &mut named)?;
    }
    Some(named)
}

/// Each line of `text` that is not blank: read by the lean loader's byte scan in place
/// (chatter, summaries, facts of the commonest shapes; it decides only lines serde reads
/// the same), else cut out and read by serde ([`read_line`]).
fn read_lines(
    text: &str,
    each: &mut impl FnMut(&str, Text<'_>) -> Option<()>,
    named: &mut Option<Vec<String>>,
) -> Option<()> {
    let mut start = 0;
    while start < text.len() {
        let (id, raw, plain) = match scan::simple_in(text, start) {
            Ok((scan::Line::Simple(simple), _, next)) => {
                start = next;
                (Cow::Borrowed(simple.id), simple.text, simple.text_plain)
            }
            Ok((scan::Line::Fact(fact, raw, plain), _, next)) => {
                start = next;
                (fact.id, raw, plain)
            }
            Err(_) => {
                let end = memchr::memchr(b'\n', text.as_bytes().get(start..)?)
                    .map_or(text.len(), |n| start + n);
                // A line end is ASCII: the cuts are on character boundaries.
                let line = text.get(start..end)?;
                start = end + 1;
                if !line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
                    read_line(line, each, named)?;
                }
                continue;
            }
        };
        if let Some(raw) = raw {
            each(&id, Text::Written { raw, plain })?;
        }
    }
    Some(())
}

/// A line the byte scan did not decide, read by serde.
fn read_line(
    line: &str,
    each: &mut impl FnMut(&str, Text<'_>) -> Option<()>,
    named: &mut Option<Vec<String>>,
) -> Option<()> {
    let head: Head<'_> = serde_json::from_str(line).ok()?;
    if let Some(text) = &head.text {
        each(&head.id, Text::Decoded(text))?;
    }
    let names = match head.kind.as_deref() {
        Some("policy") => head.scope,
        Some("effect") => head.tool,
        _ => None,
    };
    let Some(names) = names else {
        return Some(());
    };
    let strings: Option<Vec<String>> = match names {
        Value::String(s) => Some(vec![s]),
        Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect(),
        _ => None,
    };
    match (strings, named.as_mut()) {
        (Some(strings), Some(named)) => named.extend(strings),
        (None, _) => *named = None,
        (Some(_), None) => {}
    }
    Some(())
}

/// Texts written in held bytes, met so far: most of a store's chatter repeats texts
/// word for word, and a text written as an earlier one is that one's, decoded and
/// normalised already. By a key of its bytes: where the first text of that key is in the
/// bytes, how long it is, and the record (counted among those with a text) that carries it.
#[derive(Default)]
pub(crate) struct Repeats(KeyMap<(u32, u32, u32)>);

impl Repeats {
    /// The record an earlier text written as `raw` (a slice of `whole`) belongs to, if
    /// there is one; else `raw` is noted as record `record`'s. Only bytes equal to `raw`
    /// make a repeat.
    pub(crate) fn earlier(&mut self, whole: &[u8], raw: &str, record: usize) -> Option<usize> {
        let bytes = raw.as_bytes();
        match self.0.entry(written_key(bytes)) {
            Entry::Occupied(first) => {
                let (at, len, of) = *first.get();
                let (at, len) = (at as usize, len as usize);
                (whole.get(at..at + len) == Some(bytes)).then_some(of as usize)
            }
            Entry::Vacant(slot) => {
                // Where `raw` is in `whole`, checked: a text is noted only at bytes equal to it.
                let at = (bytes.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
                if whole.get(at..at + bytes.len()) == Some(bytes) {
                    let small = |n: usize| u32::try_from(n).ok();
                    if let (Some(at), Some(len), Some(record)) =
                        (small(at), small(bytes.len()), small(record))
                    {
                        slot.insert((at, len, record));
                    }
                }
                None
            }
        }
    }
}

/// A key of a text's bytes for [`Repeats`]: its length and its first and last 16 bytes
/// (texts with one key are compared whole).
fn written_key(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    let head = key_of(bytes, 16);
    let tail = key_of(bytes.get(len.saturating_sub(16)..).unwrap_or(bytes), 16);
    head ^ tail.rotate_left(29) ^ (len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The JSON string `raw` decoded into `buf` (as `serde_json::from_str::<String>` reads
/// it, without a new `String` for each).
fn decode<'b>(raw: &str, buf: &'b mut String) -> Option<&'b str> {
    let mut de = serde_json::Deserializer::from_str(raw);
    String::deserialize_in_place(&mut de, buf).ok()?;
    de.end().ok()?;
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `lines` after enough chatter to reach the lean loader's size.
    fn big(lines: &[&str]) -> Vec<u8> {
        let mut out = String::new();
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
        let mut i = 0;
        while out.len() < super::super::source::LEAN_FROM + 10 {
            out.push_str(&format!(
                "{{\"id\":\"c{i}\",\"seq\":{},\"kind\":\"chatter\"}}\n",
                i + 100
            ));
            i += 1;
        }
        out.into_bytes()
    }

    #[test]
    fn texts_are_decoded_and_rules_name_their_tools() {
        let bytes = big(&[
            r#"{"id":"p1","seq":1,"kind":"policy","scope":["pay","re*"],"predicate":{"field":"a","op":"gt","value":1},"effect":"deny","text":"Pay \u00e9 no \"more\""}"#,
            r#"{"id":"e\u0031","seq":2,"kind":"effect","tool":"ship","match":{"text":"not a text"}}"#,
            r#"{"id":"c1","seq":3,"kind":"chatter","text":"plain words"}"#,
        ]);
        let mut texts = Vec::new();
        let mut buf = String::new();
        let named = record_texts("-", Some(&bytes), Limits::default(), |id, t| {
            texts.push((id.to_string(), t.decoded(&mut buf)?.to_string()));
            Some(())
        })
        .unwrap();
        assert_eq!(
            texts,
            [
                ("p1".to_string(), "Pay é no \"more\"".to_string()),
                ("c1".to_string(), "plain words".to_string()),
            ]
        );
        assert_eq!(named, Some(vec!["pay".into(), "re*".into(), "ship".into()]));
    }

    #[test]
    fn anything_not_read_plainly_is_left_to_the_exact_path() {
        let plain = r#"{"id":"c1","seq":3,"kind":"chatter","text":"x"}"#;
        for odd in [
            r#"{"id":"c1","seq":3,"kind":"chatter","text":"x","text":"y"}"#,
            r#"{"id":1,"seq":3,"kind":"chatter"}"#,
            r#"{"id":"c1","seq":3,"kind":"chatter","text":5}"#,
            r#"not json"#,
        ] {
            let got = record_texts("-", Some(&big(&[plain, odd])), Limits::default(), |_, _| {
                Some(())
            });
            assert!(got.is_none());
        }
        // A scope the pass cannot read names every tool.
        let bad_scope = r#"{"id":"p","seq":1,"kind":"policy","scope":[1],"text":"t"}"#;
        let got = record_texts("-", Some(&big(&[bad_scope])), Limits::default(), |_, _| {
            Some(())
        });
        assert_eq!(got, Some(None));
        // A document, and an input too small for the lean loader.
        let doc = format!("{{\"records\":[{plain}]}}{}", " ".repeat(1 << 21));
        let none =
            |bytes: &[u8]| record_texts("-", Some(bytes), Limits::default(), |_, _| Some(()));
        assert!(none(doc.as_bytes()).is_none());
        assert!(none(plain.as_bytes()).is_none());
    }

    /// Pieces of a JSON string as a line may write it: plain characters, each escape, and
    /// what no JSON string holds (a bad escape, a raw control character, a raw quote).
    const PIECES: [&str; 19] = [
        "a",
        " ",
        "é",
        "🙂",
        "/",
        "\\\"",
        "\\\\",
        "\\/",
        "\\b",
        "\\f",
        "\\n",
        "\\r",
        "\\t",
        "\\u00e9",
        "\\u0009",
        "\\ud83d\\ude00",
        "\\x",
        "\u{1}",
        "\"",
    ];

    proptest::proptest! {
        #[test]
        fn written_texts_are_decoded_as_serde_decodes_them(
            pieces in proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 0..24),
            fact in proptest::bool::ANY,
        ) {
            static PAD: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
            let raw = format!("\"{}\"", pieces.concat());
            // Chatter, or a fact (the scan reads both in place).
            let line = if fact {
                format!(r#"{{"id":"t","seq":1,"kind":"fact","field":"f","value":1,"text":{raw}}}"#)
            } else {
                format!(r#"{{"id":"t","seq":1,"kind":"chatter","text":{raw}}}"#)
            };
            // What the exact path reads: the text, or no record at all.
            let want = serde_json::from_str::<Value>(&line)
                .ok()
                .map(|v| v.get("text").and_then(Value::as_str).map(String::from));
            let mut bytes = format!("{line}\n").into_bytes();
            bytes.extend_from_slice(PAD.get_or_init(|| big(&[])));
            let (mut got, mut buf) = (None, String::new());
            let read = record_texts("-", Some(&bytes), Limits::default(), |id, t| {
                if id == "t" {
                    got = Some(t.decoded(&mut buf)?.to_string());
                }
                Some(())
            });
            proptest::prop_assert_eq!(read.map(|_| got), want);
        }
    }

    #[test]
    fn a_text_is_a_repeat_only_of_one_written_alike() {
        // Same length, same first and last 16 bytes (one key), one byte apart in the
        // middle; and one written alike, once escaped and once not.
        let whole = concat!(
            r#""the same start .. x .. the same end"|"#,
            r#""the same start .. y .. the same end"|"#,
            r#""the same start .. x .. the same end"|"#,
            r#""a\tb"|"a\tb"|"a\u0009b""#,
        );
        let texts: Vec<&str> = whole.split('|').collect();
        assert_eq!(texts.len(), 6);
        let mut repeats = Repeats::default();
        let found: Vec<Option<usize>> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| repeats.earlier(whole.as_bytes(), t, i))
            .collect();
        assert_eq!(found, [None, None, Some(0), None, Some(3), None]);
        // A text that is not a slice of the bytes is never noted, so never repeated.
        let mut repeats = Repeats::default();
        let elsewhere = String::from(r#""free""#);
        assert_eq!(repeats.earlier(whole.as_bytes(), &elsewhere, 0), None);
        assert_eq!(repeats.earlier(whole.as_bytes(), &elsewhere, 1), None);
    }
}
