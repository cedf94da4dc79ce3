//! A transcript line's JSON, its strings borrowed from the line where they hold no
//! escape: the readers look at a few keys of each entry and copy out the strings the
//! harness sends, so building an owned `serde_json::Value` per line (a `String` per key
//! and per string, a tree map per object) was most of the cost of reading a transcript.
//!
//! The guarantees are [`crate::json::parse`]'s: serde_json's parser and nesting limit,
//! a key that appears twice in one object refused (never a silent pick of one), no
//! trailing data. Numbers are kept as their literal text; the readers never read them.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::json::{NUMBER_TOKEN, SyntaxError, Token, TokenOr, bad_number, duplicate_key};

/// A JSON value whose strings borrow from the bytes it was parsed from where they can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value<'a> {
    Null,
    Bool(bool),
    /// A number, as written.
    Number(Cow<'a, str>),
    String(Str<'a>),
    Array(Vec<Value<'a>>),
    Object(Map<'a>),
}

/// A string of a line's JSON: borrowed from the line where it holds no escape, else
/// decoded once into memory that the live context's pieces share ([`Str::shared`]), so
/// that a tool result's text is not copied again into its piece.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Str<'a> {
    Borrowed(&'a str),
    Decoded(Arc<str>),
}

impl Str<'_> {
    /// The string as a piece holds it: the decoded one shared, a borrowed one copied.
    pub(crate) fn shared(&self) -> Arc<str> {
        match self {
            Str::Borrowed(s) => Arc::from(*s),
            Str::Decoded(s) => Arc::clone(s),
        }
    }
}

impl Deref for Str<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Str::Borrowed(s) => s,
            Str::Decoded(s) => s,
        }
    }
}

impl<'a> From<&'a str> for Str<'a> {
    fn from(s: &'a str) -> Str<'a> {
        Str::Borrowed(s)
    }
}

impl PartialEq<str> for Str<'_> {
    fn eq(&self, other: &str) -> bool {
        **self == *other
    }
}

impl PartialEq<&str> for Str<'_> {
    fn eq(&self, other: &&str) -> bool {
        **self == **other
    }
}

/// A JSON object: its keys (distinct) and values, in the order written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Map<'a>(Vec<(Cow<'a, str>, Value<'a>)>);

impl<'a> Map<'a> {
    /// The value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Takes the value of `key` out.
    pub(crate) fn remove(&mut self, key: &str) -> Option<Value<'a>> {
        let at = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(at).1)
    }

    /// The keys, in the order written.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_ref())
    }

    /// Whether the object has `key`.
    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The values, in the byte order of their keys.
    pub(crate) fn sorted(&self) -> impl Iterator<Item = &Value<'a>> {
        let mut pairs: Vec<&(Cow<'a, str>, Value<'a>)> = self.0.iter().collect();
        pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        pairs.into_iter().map(|(_, v)| v)
    }
}

impl<'a> Value<'a> {
    /// The value of `key`, when this is an object that has it.
    pub(crate) fn get(&self, key: &str) -> Option<&Value<'a>> {
        match self {
            Value::Object(map) => map.get(key),
            _ => None,
        }
    }

    /// The string, when this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The items, when this is an array.
    pub(crate) fn as_array(&self) -> Option<&Vec<Value<'a>>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The object, when this is one.
    pub(crate) fn as_object(&self) -> Option<&Map<'a>> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }
}

/// Parses one complete JSON value from `bytes`, refusing duplicate keys and trailing
/// data, as [`crate::json::parse`] does.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value<'_>, SyntaxError> {
    // A line checked as UTF-8 in one go is parsed without checking each string again;
    // one that is not is parsed as bytes, for the error and its column.
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => strict(serde_json::Deserializer::from_str(text)),
        Err(_) => strict(serde_json::Deserializer::from_slice(bytes)),
    }
}

fn strict<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
) -> Result<Value<'de>, SyntaxError> {
    let value = Strict::deserialize(&mut de).map_err(|e| SyntaxError::from_serde(&e))?;
    de.end().map_err(|e| SyntaxError::from_serde(&e))?;
    Ok(value.0)
}

/// Parses `text` leniently, as serde_json reads a `Value`: a repeated key's last value
/// wins (a tool call's arguments, which the harness sends as written). Unlike serde_json,
/// an object keyed by its private raw-value token is kept as an object (its strings are
/// the text the model wrote).
pub(crate) fn parse_lenient(text: &str) -> Option<Value<'_>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Lenient::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value.0)
}

/// Objects with more keys than this are checked for repeats with a set.
const FEW_KEYS: usize = 16;

struct Strict<'a>(Value<'a>);
struct Lenient<'a>(Value<'a>);

impl<'de> Deserialize<'de> for Strict<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(ValueVisitor { strict: true })
            .map(Strict)
    }
}

impl<'de> Deserialize<'de> for Lenient<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(ValueVisitor { strict: false })
            .map(Lenient)
    }
}

/// A string, borrowed when the input holds it unescaped.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(TextVisitor).map(Text)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

struct ValueVisitor {
    /// Refuse a repeated key (else its last value wins).
    strict: bool,
}

impl ValueVisitor {
    fn element<'de, A: SeqAccess<'de>>(&self, seq: &mut A) -> Result<Option<Value<'de>>, A::Error> {
        if self.strict {
            Ok(seq.next_element::<Strict<'de>>()?.map(|v| v.0))
        } else {
            Ok(seq.next_element::<Lenient<'de>>()?.map(|v| v.0))
        }
    }

    fn value<'de, A: MapAccess<'de>>(&self, map: &mut A) -> Result<Value<'de>, A::Error> {
        if self.strict {
            Ok(map.next_value::<Strict<'de>>()?.0)
        } else {
            Ok(map.next_value::<Lenient<'de>>()?.0)
        }
    }
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value<'de>, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value<'de>, E> {
        Ok(Value::Number(Cow::Owned(v.to_string())))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value<'de>, E> {
        Ok(Value::Number(Cow::Owned(v.to_string())))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value<'de>, E> {
        if v.is_finite() {
            Ok(Value::Number(Cow::Owned(v.to_string())))
        } else {
            Err(E::custom("number is not finite"))
        }
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Value<'de>, E> {
        Ok(Value::String(Str::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value<'de>, E> {
        Ok(Value::String(Str::Decoded(Arc::from(v))))
    }

    fn visit_string<E>(self, v: String) -> Result<Value<'de>, E> {
        Ok(Value::String(Str::Decoded(Arc::from(v))))
    }

    fn visit_unit<E>(self) -> Result<Value<'de>, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value<'de>, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = self.element(&mut seq)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value<'de>, A::Error> {
        let Some(Text(first)) = map.next_key::<Text<'de>>()? else {
            return Ok(Value::Object(Map::default()));
        };
        let mut key = first;
        // As json::parse: serde_json hands its own number over as an owned `String`; an
        // object the input keys with the same text stays an object.
        let mut value = if key == NUMBER_TOKEN {
            match map.next_value_seed(TokenOr(ValueVisitor {
                strict: self.strict,
            }))? {
                Token::Literal(literal) => {
                    if <serde_json::Number as std::str::FromStr>::from_str(&literal).is_err() {
                        return Err(bad_number(&literal));
                    }
                    return Ok(Value::Number(Cow::Owned(literal)));
                }
                Token::Value(value) => value,
            }
        } else {
            self.value(&mut map)?
        };
        let mut out: Vec<(Cow<'de, str>, Value<'de>)> = Vec::new();
        // Past a few keys, the keys seen so far, to find a repeat without a scan.
        let mut seen: Option<std::collections::HashSet<Cow<'de, str>>> = None;
        loop {
            let repeat = match &seen {
                Some(set) => set.contains(&key),
                None => out.iter().any(|(k, _)| *k == key),
            };
            if repeat {
                if self.strict {
                    return Err(duplicate_key(&key));
                }
                if let Some(slot) = out.iter_mut().find(|(k, _)| *k == key) {
                    slot.1 = value;
                }
            } else {
                if let Some(set) = seen.as_mut() {
                    set.insert(key.clone());
                } else if out.len() >= FEW_KEYS {
                    let mut set: std::collections::HashSet<Cow<'de, str>> =
                        out.iter().map(|(k, _)| k.clone()).collect();
                    set.insert(key.clone());
                    seen = Some(set);
                }
                out.push((key, value));
            }
            match map.next_key::<Text<'de>>()? {
                Some(Text(k)) => key = k,
                None => break,
            }
            value = self.value(&mut map)?;
        }
        Ok(Value::Object(Map(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string with an escape is decoded once: the pieces the readers make of it share
    /// that memory rather than copy it (the live context of a long session is mostly
    /// tool results with newlines in them); one without is copied out of the line.
    #[test]
    fn decoded_strings_are_shared_with_the_pieces() {
        let line = br#"{"a":"line\none\u00e9","b":"plain","c":["x\ty"]}"#;
        let v = parse(line).unwrap();
        let mut pieces = Vec::new();
        super::super::strings_of(&v, &mut pieces);
        let texts: Vec<&str> = pieces.iter().map(|p| &**p).collect();
        assert_eq!(texts, ["line\none\u{e9}", "plain", "x\ty"]);
        let Some(Value::String(Str::Decoded(a))) = v.get("a") else {
            panic!("an escaped string is decoded");
        };
        assert!(Arc::ptr_eq(a, &pieces[0]));
        let c = v.get("c").and_then(Value::as_array).unwrap();
        let Some(Value::String(Str::Decoded(x))) = c.first() else {
            panic!("an escaped string is decoded");
        };
        assert!(Arc::ptr_eq(x, &pieces[2]));
        assert!(matches!(
            v.get("b"),
            Some(Value::String(Str::Borrowed("plain")))
        ));
    }

    #[test]
    fn strings_are_borrowed_unless_escaped_and_keys_are_distinct() {
        let line = br#"{"a":"plain","b":"esc\"aped","c":[1,2.5,null,true,{"d":-0}]}"#;
        let v = parse(line).unwrap();
        assert!(matches!(
            v.get("a"),
            Some(Value::String(Str::Borrowed("plain")))
        ));
        assert_eq!(v.get("b").and_then(Value::as_str), Some("esc\"aped"));
        let c = v.get("c").and_then(Value::as_array).unwrap();
        assert_eq!(c.len(), 5);
        assert_eq!(c[1], Value::Number(Cow::Borrowed("2.5")));
        assert_eq!(c[4].get("d"), Some(&Value::Number(Cow::Borrowed("-0"))));
        // A repeat is refused at any size of object, and only strictly.
        for n in [1, 16, 40] {
            let mut keys: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{i}")).collect();
            keys.push("\"k0\":\"again\"".to_string());
            let text = format!("{{{}}}", keys.join(","));
            let err = parse(text.as_bytes()).unwrap_err();
            assert!(
                err.message.contains("duplicate key `k0`"),
                "{}",
                err.message
            );
            let lenient = parse_lenient(&text).unwrap();
            assert_eq!(lenient.get("k0").and_then(Value::as_str), Some("again"));
        }
        // An object that only looks like serde_json's number stays an object, as
        // json::parse reads it.
        for fake in [
            r#"{"$serde_json::private::Number":"words"}"#,
            r#"{"$serde_json::private::Number":"12"}"#,
            r#"{"$serde_json::private::Number":"12","x":1}"#,
        ] {
            assert!(
                parse(fake.as_bytes()).unwrap().as_object().is_some(),
                "{fake}"
            );
            assert!(parse_lenient(fake).unwrap().as_object().is_some(), "{fake}");
            assert!(
                crate::json::parse(fake.as_bytes()).unwrap().is_object(),
                "{fake}"
            );
        }
        assert_eq!(
            parse(b"[12.50]").unwrap().as_array().map(|a| a[0].clone()),
            Some(Value::Number(Cow::Borrowed("12.50")))
        );
        // Trailing data, and nesting past serde_json's limit, as json::parse refuses them.
        assert!(parse(b"{} x").is_err());
        // Bytes that are not UTF-8 are refused where they are, as json::parse does.
        let bad = b"{\"a\":\"ok\",\"b\":\"\xff\"}";
        assert_eq!(
            parse(bad).unwrap_err().column,
            crate::json::parse(bad).unwrap_err().column
        );
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(
            parse(deep.as_bytes()).is_err(),
            crate::json::parse(deep.as_bytes()).is_err()
        );
        assert!(parse(deep.as_bytes()).is_err());
    }
}

#[cfg(test)]
mod props {
    use super::*;

    /// The strings of an owned value as the readers take them: depth first, an object's
    /// values in its keys' byte order.
    fn owned_strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|i| owned_strings(i, out)),
            serde_json::Value::Object(map) => map.values().for_each(|i| owned_strings(i, out)),
            _ => {}
        }
    }

    proptest::proptest! {
        /// On any bytes, the borrowed parse refuses what the strict owned parse refuses
        /// (at the same column), and otherwise gives the same strings in the same order.
        #[test]
        fn the_borrowed_parse_agrees_with_the_strict_one(
            text in r#"[{}\[\]",:a-c0-9 .eE+\-\\u00e9]{0,40}"#,
            json in proptest::collection::vec(
                (r#"[a-c]{1,2}"#, proptest::option::of(r#"[a-c \\"é\n]{0,6}"#)),
                0..6,
            ),
        ) {
            let object = format!(
                "{{{}}}",
                json.iter()
                    .map(|(k, v)| match v {
                        Some(s) => format!("{}:{}", serde_json::json!(k), serde_json::json!(s)),
                        None => format!("{}:[1,{{\"x\":\"{k}\"}}]", serde_json::json!(k)),
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            );
            for input in [text.as_bytes(), object.as_bytes()] {
                match (parse(input), crate::json::parse(input)) {
                    (Ok(ours), Ok(theirs)) => {
                        let mut a = Vec::new();
                        super::super::strings_of(&ours, &mut a);
                        let mut b = Vec::new();
                        owned_strings(&theirs, &mut b);
                        let a: Vec<String> = a.iter().map(|s| s.to_string()).collect();
                        proptest::prop_assert_eq!(a, b);
                    }
                    (Err(ours), Err(theirs)) => {
                        proptest::prop_assert_eq!((ours.line, ours.column), (theirs.line, theirs.column));
                    }
                    (ours, theirs) => proptest::prop_assert!(
                        false,
                        "{:?}: ours {:?}, strict {:?}",
                        String::from_utf8_lossy(input),
                        ours.is_ok(),
                        theirs.is_ok()
                    ),
                }
            }
        }
    }
}
