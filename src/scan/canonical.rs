//! The canonical JSON of a record's text ([`canonical`]): what [`crate::json::canonical`]
//! writes of the value the strict parser reads from it, with nothing built but a tree of
//! the text's strings. The digest of a kept record the light scans read.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::seeds::*;
use super::*;

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
pub(super) enum Node<'de> {
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
    fn write(self, out: &mut Vec<u8>) -> bool {
        match self {
            Node::Literal(s) => out.extend_from_slice(s.as_bytes()),
            Node::Unsigned(n) => write_u64(out, n),
            Node::Negative(n) => {
                out.push(b'-');
                write_u64(out, n);
            }
            Node::Str(s) => write_str(out, &s),
            Node::Array(items) => {
                out.push(b'[');
                for (i, item) in items.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    if !item.write(out) {
                        return false;
                    }
                }
                out.push(b']');
            }
            Node::Object(mut entries) => {
                entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                if entries
                    .windows(2)
                    .any(|w| matches!(w, [a, b] if a.0 == b.0))
                {
                    return false;
                }
                out.push(b'{');
                for (i, (key, value)) in entries.into_iter().enumerate() {
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

pub(super) struct NodeVisitor;

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
        let value = if first == NUMBER_TOKEN {
            match map.next_value_seed(TokenOr(NodeVisitor))? {
                // A number beyond u64 and i64: serde_json's own text of it, as the value
                // the strict parser makes of its literal writes it.
                Token::Literal(literal) => {
                    let number = <serde_json::Number as std::str::FromStr>::from_str(&literal)
                        .map_err(|_| not_light::<A::Error>())?;
                    return Ok(Node::Literal(Cow::Owned(number.to_string())));
                }
                // An object the input keys with that text: an object.
                Token::Value(value) => value,
            }
        } else {
            map.next_value_seed(NodeVisitor)?
        };
        let mut entries = vec![(first, value)];
        while let Some(key) = map.next_key_seed(StrSeed)? {
            entries.push((key, map.next_value_seed(NodeVisitor)?));
        }
        Ok(Node::Object(entries))
    }
}
