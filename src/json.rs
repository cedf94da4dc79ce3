//! Strict JSON reading: serde_json's parser plus the guarantees the gate needs.
//!
//! A key that appears twice in one object is an error (never a silent pick of one), and
//! numbers keep their literal text (serde_json's `arbitrary_precision`), so they can be
//! compared as exact decimals. This module reads bytes; it never touches files.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::text::{BRIEF_CHARS, escape_unsafe};

/// The key serde_json uses to hand an arbitrary-precision number to a visitor.
pub(crate) const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// The refusal of a key that appears twice in one object.
pub(crate) fn duplicate_key<E: de::Error>(key: &str) -> E {
    E::custom(format!(
        "duplicate key `{}` in one object",
        crate::text::clean(key)
    ))
}

/// The refusal of a number literal (under [`NUMBER_TOKEN`]) that is no number.
pub(crate) fn bad_number<E: de::Error>(literal: &str) -> E {
    E::custom(format!("bad number `{literal}`"))
}

/// A position and message for malformed JSON, 1-based like an editor's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line of the error.
    pub line: usize,
    /// 1-based column of the error.
    pub column: usize,
    /// What is wrong, without the position.
    pub message: String,
}

impl SyntaxError {
    pub(crate) fn from_serde(err: &serde_json::Error) -> SyntaxError {
        let full = err.to_string();
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        let message = plain(full.strip_suffix(&suffix).unwrap_or(&full));
        SyntaxError {
            line: err.line().max(1),
            column: err.column().max(1),
            message,
        }
    }
}

/// Deepest nesting of arrays and objects the parser accepts: serde_json's recursion
/// limit (128) refuses the 128th level. It stays on, so that no input can exhaust the
/// stack of the parser or of the recursive code that walks a parsed value.
pub const MAX_NESTING: usize = 127;

/// serde_json's wording for the two refusals a user cannot act on as written.
fn plain(message: &str) -> String {
    match message {
        "recursion limit exceeded" => format!(
            "JSON nested deeper than {MAX_NESTING} levels of arrays and objects (a fixed limit)"
        ),
        "invalid unicode code point" => "invalid UTF-8 (the input must be UTF-8)".to_string(),
        other => other.to_string(),
    }
}

/// True for JSON whitespace: space, tab, line feed and carriage return, and nothing
/// else (a form feed or a vertical tab is not whitespace in JSON, unlike in
/// [`u8::is_ascii_whitespace`]).
pub fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// [`is_whitespace`] for a `char`.
pub fn is_whitespace_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// True when `bytes` hold nothing but JSON whitespace: an empty input, a blank line.
pub fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| is_whitespace(b))
}

/// Parses one complete JSON value from `bytes`, refusing duplicate keys and trailing data.
pub fn parse(bytes: &[u8]) -> Result<Value, SyntaxError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = StrictValue::deserialize(&mut de).map_err(|e| SyntaxError::from_serde(&e))?;
    de.end().map_err(|e| SyntaxError::from_serde(&e))?;
    Ok(value.0)
}

/// Parses the first JSON value in `bytes` and reports where it ended, for telling a
/// document from a record stream without reading the stream twice.
pub fn parse_first(bytes: &[u8]) -> Result<(Value, usize), SyntaxError> {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<StrictValue>();
    match stream.next() {
        Some(Ok(v)) => Ok((v.0, stream.byte_offset())),
        Some(Err(e)) => Err(SyntaxError::from_serde(&e)),
        None => Err(SyntaxError {
            line: 1,
            column: 1,
            message: "empty input".to_string(),
        }),
    }
}

/// A `serde_json::Value` that refuses duplicate object keys while it is built.
pub(crate) struct StrictValue(pub(crate) Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Value::Object(out));
        };
        let mut key = first;
        let mut value = if key == NUMBER_TOKEN {
            match map.next_value_seed(TokenOr(StrictVisitor))? {
                Token::Literal(literal) => {
                    return Number::from_str(&literal)
                        .map(Value::Number)
                        .map_err(|_| bad_number(&literal));
                }
                Token::Value(value) => value,
            }
        } else {
            map.next_value::<StrictValue>()?.0
        };
        loop {
            if out.contains_key(&key) {
                return Err(duplicate_key(&key));
            }
            out.insert(key, value);
            match map.next_key::<String>()? {
                Some(k) => key = k,
                None => break,
            }
            value = map.next_value::<StrictValue>()?.0;
        }
        Ok(Value::Object(out))
    }
}

/// The value under a first key spelt like [`NUMBER_TOKEN`]: serde_json's own number,
/// whose literal it hands over as an owned `String` (`visit_string`, which its parser
/// never calls for a string in the input), or a value the input wrote under that key,
/// read by the inner visitor. Every reader keeps such an object an object:
/// `{"amount": {"$serde_json::private::Number": "1"}}` is not the number 1, and judging
/// it as one would judge a call other than the one sent.
pub(crate) struct TokenOr<V>(pub(crate) V);

/// What [`TokenOr`] read.
pub(crate) enum Token<T> {
    /// serde_json's number literal.
    Literal(String),
    /// A value the input wrote under the key.
    Value(T),
}

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for TokenOr<V> {
    type Value = Token<V::Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for TokenOr<V> {
    type Value = Token<V::Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Token::Literal(v))
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        self.0.visit_borrowed_str(v).map(Token::Value)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.0.visit_str(v).map(Token::Value)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.0.visit_bool(v).map(Token::Value)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.0.visit_u64(v).map(Token::Value)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.0.visit_i64(v).map(Token::Value)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.0.visit_f64(v).map(Token::Value)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_unit().map(Token::Value)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_none().map(Token::Value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.visit_seq(seq).map(Token::Value)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(map).map(Token::Value)
    }
}

/// Writes `value` as canonical JSON: keys in byte order, no whitespace, number literals
/// as written. Used for fingerprints and token estimates.
pub fn canonical(value: &Value) -> String {
    // INVARIANT: serde_json's Map is a BTreeMap (no `preserve_order`), so keys serialize
    // sorted, and writing a Value into a String cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

/// The byte length of [`canonical`]`(value)`, without writing it.
pub fn canonical_len(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => n.as_str().len(),
        Value::String(s) => string_len(s),
        Value::Array(items) => {
            1 + items
                .iter()
                .map(|v| canonical_len(v) + 1)
                .sum::<usize>()
                .max(1)
        }
        Value::Object(map) => {
            1 + map
                .iter()
                .map(|(k, v)| string_len(k) + canonical_len(v) + 2)
                .sum::<usize>()
                .max(1)
        }
    }
}

/// The byte length of a string as serde_json writes it: quotes, `\"` `\\` and the short
/// control escapes take two bytes, other control characters six.
fn string_len(s: &str) -> usize {
    let extra: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0A | 0x0C | 0x0D => 1,
            0x00..=0x1F => 5,
            _ => 0,
        })
        .sum();
    s.len() + extra + 2
}

/// A JSON value as compact, canonical, terminal-safe text.
pub fn json_text(value: &Value) -> String {
    escape_unsafe(&canonical(value)).into_owned()
}

/// Like `json_text`, but cut after [`BRIEF_CHARS`] characters, marked `...`. For values
/// that a message may repeat once per rule (a resolved field, a fact's value): the work
/// and the text stay bounded however large the value, so that a few huge values times
/// many rules cannot blow up a report.
pub fn json_brief(value: &Value) -> String {
    let mut out = String::new();
    let complete = brief_into(value, &mut out);
    let cut = out.char_indices().nth(BRIEF_CHARS).map(|(i, _)| i);
    let text = match cut {
        Some(i) => format!("{}...", out.get(..i).unwrap_or(&out)),
        None if !complete => format!("{out}..."),
        None => out,
    };
    escape_unsafe(&text).into_owned()
}

/// Writes canonical JSON of `value` into `out` until it holds more than [`BRIEF_CHARS`]
/// bytes; false when it stopped early. Every value visited adds at least one byte, so
/// the work is bounded by the cap, not by the value.
fn brief_into(value: &Value, out: &mut String) -> bool {
    let room = (BRIEF_CHARS + 1).saturating_sub(out.len());
    if room == 0 {
        return false;
    }
    match value {
        Value::String(s) => {
            let end = s.char_indices().nth(room).map_or(s.len(), |(i, _)| i);
            let head = s.get(..end).unwrap_or("");
            out.push_str(&canonical(&Value::String(head.to_string())));
            end == s.len()
        }
        Value::Number(n) => {
            let lit = n.as_str();
            out.push_str(lit.get(..room.min(lit.len())).unwrap_or(lit));
            lit.len() <= room
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !brief_into(item, out) {
                    return false;
                }
            }
            out.push(']');
            true
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !brief_into(&Value::String(k.clone()), out) {
                    return false;
                }
                out.push(':');
                if !brief_into(v, out) {
                    return false;
                }
            }
            out.push('}');
            true
        }
        Value::Null | Value::Bool(_) => {
            out.push_str(&canonical(value));
            true
        }
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
#[inline]
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_key_is_refused_with_position() {
        let err = parse(br#"{"effect":"allow","effect":"deny"}"#).unwrap_err();
        assert!(err.message.contains("duplicate key `effect`"), "{err:?}");
        assert_eq!(err.line, 1);
    }

    #[test]
    fn nested_duplicate_key_is_refused() {
        assert!(parse(br#"{"a":{"b":1,"b":1}}"#).is_err());
    }

    #[test]
    fn numbers_keep_their_literal() {
        let v = parse(b"[5000.0000000000000001, 1e400, -0.0]").unwrap();
        let lits: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_number().unwrap().as_str().to_string())
            .collect();
        // serde_json spells the exponent's sign out; the digits are kept as written.
        assert_eq!(lits, ["5000.0000000000000001", "1e+400", "-0.0"]);
    }

    #[test]
    fn canonical_sorts_keys_and_strips_space() {
        let v = parse(br#"{ "b" : 1, "a" : [ 2.50 ] }"#).unwrap();
        assert_eq!(canonical(&v), r#"{"a":[2.50],"b":1}"#);
    }

    #[test]
    fn nesting_beyond_the_limit_is_refused_in_plain_words() {
        let ok = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(parse(ok.as_bytes()).is_ok());
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let err = parse(deep.as_bytes()).unwrap_err();
        assert_eq!(
            err.message,
            "JSON nested deeper than 127 levels of arrays and objects (a fixed limit)"
        );
        assert_eq!((err.line, err.column), (1, 128));
    }

    #[test]
    fn invalid_utf8_is_named() {
        let err = parse(b"[\"a\xff\"]").unwrap_err();
        assert_eq!(err.message, "invalid UTF-8 (the input must be UTF-8)");
    }

    #[test]
    fn canonical_len_is_the_canonical_length() {
        for text in [
            r#"{"b":1,"a":[2.50,-0.0,1e400,true,false,null,[],{}],"c":"\u0001\b\t\n\f\r\"\\/é🙂"}"#,
            "[]",
            "{}",
            "\"\"",
            "[[[1]],{\"x\":{\"y\":[null]}}]",
        ] {
            let v = parse(text.as_bytes()).unwrap();
            assert_eq!(canonical_len(&v), canonical(&v).len(), "{text}");
        }
    }

    #[test]
    fn an_object_keyed_like_serde_jsons_number_stays_an_object() {
        for text in [
            r#"{"$serde_json::private::Number":"1"}"#,
            r#"{"\u0024serde_json::private::Number":"1"}"#,
            r#"{"$serde_json::private::Number":"1","x":2}"#,
            r#"{"$serde_json::private::Number":1}"#,
            r#"{"$serde_json::private::Number":{"a":[1]}}"#,
        ] {
            let v = parse(text.as_bytes()).unwrap();
            assert!(v.is_object(), "{text} read as {v:?}");
        }
        let v = parse(br#"{"$serde_json::private::Number":"1","x":2}"#).unwrap();
        assert_eq!(
            canonical(&v),
            r#"{"$serde_json::private::Number":"1","x":2}"#
        );
        assert!(
            parse(br#"{"$serde_json::private::Number":"1","$serde_json::private::Number":"2"}"#)
                .is_err()
        );
        let (v, _) = parse_first(br#"{"a":{"$serde_json::private::Number":"1"}} 1"#).unwrap();
        assert!(v.get("a").is_some_and(Value::is_object));
        // A number is still a number, in every position.
        let v = parse(br#"{"$serde_json::private::Number":[1, 2.50]}"#).unwrap();
        assert_eq!(
            canonical(&v),
            r#"{"$serde_json::private::Number":[1,2.50]}"#
        );
    }

    #[test]
    fn trailing_data_is_refused() {
        assert!(parse(b"{} {}").is_err());
    }

    #[test]
    fn parse_first_reports_the_end() {
        let (v, end) = parse_first(b"{\"a\":1}\n{\"b\":2}").unwrap();
        assert_eq!(canonical(&v), r#"{"a":1}"#);
        assert_eq!(end, 7);
    }

    #[test]
    fn briefs_are_bounded_and_safe() {
        let small = serde_json::json!({"a": [1, "x"]});
        assert_eq!(json_brief(&small), json_text(&small));
        let big = Value::String("\u{202e}é".repeat(1_000_000));
        let b = json_brief(&big);
        assert!(b.len() < 8 * BRIEF_CHARS, "{}", b.len());
        assert!(b.starts_with("\"\\u202eé") && b.ends_with("..."), "{b}");
        assert!(!b.chars().any(crate::text::is_unsafe));
        let nested = parse(format!("[{}]", "[1,2],".repeat(100_000) + "0").as_bytes()).unwrap();
        let b = json_brief(&nested);
        assert!(b.starts_with("[[1,2],[1,2],") && b.ends_with("..."), "{b}");
        assert_eq!(b.chars().count(), BRIEF_CHARS + 3);
        let long_number = parse("1".repeat(50_000).as_bytes()).unwrap();
        assert_eq!(
            json_brief(&long_number),
            format!("{}...", "1".repeat(BRIEF_CHARS))
        );
        let exact = Value::String("x".repeat(BRIEF_CHARS - 2));
        assert_eq!(json_brief(&exact), json_text(&exact));
    }
}
