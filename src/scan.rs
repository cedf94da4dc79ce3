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
    /// `text`, as written in the line (a JSON string).
    text: Option<&'a RawValue>,
    /// `tokens`, if declared.
    tokens: Option<u64>,
    /// Whether the record has keys besides id, seq, kind, text and tokens.
    other_keys: bool,
}

impl Chatter<'_> {
    /// Writes the record's canonical JSON (keys sorted, no whitespace, strings escaped as
    /// serde_json escapes them) into `out`, exactly as [`crate::json::canonical`] would.
    /// `false` (and `out` unspecified) when the record has other keys: use the strict path.
    pub fn canonical(&self, out: &mut Vec<u8>) -> bool {
        if self.other_keys {
            return false;
        }
        out.clear();
        out.extend_from_slice(b"{\"id\":");
        match &self.id {
            // No escapes in the line, and a JSON string cannot hold raw control characters.
            Cow::Borrowed(id) => {
                out.push(b'"');
                out.extend_from_slice(id.as_bytes());
                out.push(b'"');
            }
            Cow::Owned(id) => write_str(out, id),
        }
        out.extend_from_slice(b",\"kind\":\"chatter\",\"seq\":");
        out.extend_from_slice(self.seq.to_string().as_bytes());
        if let Some(text) = self.text {
            out.extend_from_slice(b",\"text\":");
            let raw = text.get();
            if raw.contains('\\') {
                match serde_json::from_str::<String>(raw) {
                    Ok(s) => write_str(out, &s),
                    Err(_) => return false,
                }
            } else {
                out.extend_from_slice(raw.as_bytes());
            }
        }
        if let Some(tokens) = self.tokens {
            out.extend_from_slice(b",\"tokens\":");
            out.extend_from_slice(tokens.to_string().as_bytes());
        }
        out.push(b'}');
        true
    }
}

/// Appends a string as serde_json writes it.
fn write_str(out: &mut Vec<u8>, s: &str) {
    // INVARIANT: writing a &str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Scans one JSON Lines record (already known to be UTF-8). `Some` only for a well-formed
/// chatter record that the strict path would accept with the same id and seq; `None` means
/// "take the strict path".
pub fn chatter(line: &str) -> Option<Chatter<'_>> {
    let mut de = serde_json::Deserializer::from_str(line);
    let head = de.deserialize_map(RecordVisitor).ok()?;
    de.end().ok()?;
    Some(head)
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
                    // (serde_json has checked its escapes; the caller its UTF-8).
                    let raw: &'de RawValue = map.next_value()?;
                    if !raw.get().starts_with('"') {
                        return Err(not_light());
                    }
                    text = Some(raw);
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
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        while let Some(key) = map.next_key_seed(StrSeed)? {
            if key == NUMBER_TOKEN || keys.contains(&key) {
                // A number too long for u64/i64 (or a key spelt like serde_json's token):
                // the strict path knows what to make of it.
                return Err(not_light());
            }
            map.next_value_seed(Skip)?;
            keys.push(key);
        }
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
}
