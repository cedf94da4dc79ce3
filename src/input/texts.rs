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
//! texts are decoded by serde_json, as the exact loader decodes them.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use crate::record::Limits;
use crate::scan;

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

/// The light pass over the JSON Lines store at `path` (`stdin`'s bytes instead, when
/// given): `each` is called with the id and `text` of each record that has a text, in
/// the store's order. What it gives back is the tool names and globs that policy scopes
/// and effect tools give (`None` in it when one could not be read as a string: then
/// every tool counts as named). `None`: a document, an input the lean loader would not
/// read (too small, too large), or a line the pass cannot read plainly.
pub fn record_texts(
    path: &str,
    stdin: Option<&[u8]>,
    limits: Limits,
    mut each: impl FnMut(&str, &str),
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

/// [`read_line`] of each line of `text` that is not blank.
fn read_lines(
    text: &str,
    each: &mut impl FnMut(&str, &str),
    named: &mut Option<Vec<String>>,
) -> Option<()> {
    let mut start = 0;
    // One buffer for every text with an escape, decoded in place.
    let mut decoded = String::new();
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    for end in ends {
        // A line end is ASCII: the cuts are on character boundaries.
        let line = text.get(start..end)?;
        start = end + 1;
        if line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            continue;
        }
        read_line(line, each, named, &mut decoded)?;
    }
    Some(())
}

fn read_line(
    line: &str,
    each: &mut impl FnMut(&str, &str),
    named: &mut Option<Vec<String>>,
    decoded: &mut String,
) -> Option<()> {
    // The commonest shape (id, seq, kind, text, tokens; chatter and summaries) by the
    // lean loader's own byte scan, which decides only lines serde reads the same.
    if let scan::Fast::Done(simple) = scan::simple(line) {
        if let Some(raw) = simple.text {
            match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
                Some(plain) if !plain.contains('\\') => each(simple.id, plain),
                _ => each(simple.id, decode(raw, decoded)?),
            }
        }
        return Some(());
    }
    let head: Head<'_> = serde_json::from_str(line).ok()?;
    if let Some(text) = &head.text {
        each(&head.id, text);
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
        let named = record_texts("-", Some(&bytes), Limits::default(), |id, t| {
            texts.push((id.to_string(), t.to_string()))
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
            let got = record_texts("-", Some(&big(&[plain, odd])), Limits::default(), |_, _| {});
            assert!(got.is_none());
        }
        // A scope the pass cannot read names every tool.
        let bad_scope = r#"{"id":"p","seq":1,"kind":"policy","scope":[1],"text":"t"}"#;
        let got = record_texts("-", Some(&big(&[bad_scope])), Limits::default(), |_, _| {});
        assert_eq!(got, Some(None));
        // A document, and an input too small for the lean loader.
        let doc = format!("{{\"records\":[{plain}]}}{}", " ".repeat(1 << 21));
        let none = |bytes: &[u8]| record_texts("-", Some(bytes), Limits::default(), |_, _| {});
        assert!(none(doc.as_bytes()).is_none());
        assert!(none(plain.as_bytes()).is_none());
    }
}
