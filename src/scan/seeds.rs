//! The serde seeds the record scans read values with: strings (borrowed where they can
//! be), integers, ids, scopes, and values and predicates checked as they are read. Each
//! accepts exactly what the strict path accepts (or less: then the strict path decides),
//! and builds nothing it does not return.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The key serde_json uses to hand an arbitrary-precision number to a visitor.
pub(super) use crate::json::{NUMBER_TOKEN, Token, TokenOr};

/// A policy's `scope`: a non-empty tool name or glob, or a non-empty array of them.
pub(super) struct ScopeSeed;

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
        Ok(vec![tool_name(Cow::Borrowed(v))?])
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(vec![tool_name(Cow::Owned(v.to_string()))?])
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let ids = IdsSeed.visit_seq(seq)?;
        if ids.is_empty() || !ids.iter().all(|t| crate::text::is_tool_name(t)) {
            return Err(not_light());
        }
        Ok(ids)
    }
}

/// A tool name as the strict path takes one ([`crate::text::is_tool_name`]); anything
/// else is left to it, which says why.
pub(super) fn tool_name<E: de::Error>(s: Cow<'_, str>) -> Result<Cow<'_, str>, E> {
    if crate::text::is_tool_name(&s) {
        Ok(s)
    } else {
        Err(not_light())
    }
}

pub(super) fn nonempty<E: de::Error>(s: Cow<'_, str>) -> Result<Cow<'_, str>, E> {
    if s.is_empty() {
        Err(not_light())
    } else {
        Ok(s)
    }
}

/// An array of non-empty strings (record ids).
pub(super) struct IdsSeed;

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

/// Whether a raw JSON string's `\u` escapes decode to characters. Skipping a string
/// (`RawValue`, `IgnoredAny`) checks only their syntax, so a lone surrogate such as
/// `"\ud800"` passes there, while the strict path refuses it.
pub(super) fn escapes_decode(raw: &str) -> bool {
    !raw.contains("\\u") || serde_json::from_str::<Cow<'_, str>>(raw).is_ok()
}

/// A quiet abort: the strict path will say what, if anything, is wrong.
pub(super) fn not_light<E: de::Error>() -> E {
    E::custom("")
}

/// A string, borrowed from the input when it had no escapes.
pub(super) struct StrSeed;

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
pub(super) struct U64Seed;

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
pub(super) struct Skip;

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
pub(super) struct Keys<'de>(Vec<Cow<'de, str>>);

impl<'de> Keys<'de> {
    const FEW: usize = 16;

    /// Notes `key`: `false` when it is already known to be a repeat.
    pub(super) fn insert(&mut self, key: Cow<'de, str>) -> bool {
        if self.0.len() < Self::FEW && self.0.contains(&key) {
            return false;
        }
        self.0.push(key);
        true
    }

    /// Whether no key came twice.
    pub(super) fn distinct(mut self) -> bool {
        if self.0.len() <= Self::FEW {
            return true;
        }
        self.0.sort_unstable();
        !self.0.windows(2).any(|w| matches!(w, [a, b] if a == b))
    }
}

/// What a [`Checked`] value was, for the checks that need an array or an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
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
pub(super) struct Checked {
    depth: usize,
}

impl Checked {
    pub(super) const TOP: Checked = Checked { depth: 1 };

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
        let item = Checked {
            depth: self.depth + 1,
        };
        if first == NUMBER_TOKEN {
            match map.next_value_seed(TokenOr(item))? {
                // A number: its literal must be a decimal the gate can compare exactly.
                Token::Literal(literal) => {
                    let number = <serde_json::Number as std::str::FromStr>::from_str(&literal)
                        .is_ok()
                        && crate::decimal::Decimal::parse(&literal).is_ok();
                    return if number {
                        Ok(Shape::Other)
                    } else {
                        Err(not_light())
                    };
                }
                // An object the input keys with that text: an object.
                Token::Value(_) => {}
            }
        }
        let item = self.open()?;
        let mut keys = Keys::default();
        let mut key = Some(first);
        let mut read = key.as_deref() == Some(NUMBER_TOKEN);
        while let Some(k) = key {
            if !keys.insert(k) {
                return Err(not_light());
            }
            if !read {
                map.next_value_seed(Checked { depth: item.depth })?;
            }
            read = false;
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
pub(super) struct PredicateSeed {
    depth: usize,
    max: usize,
}

impl PredicateSeed {
    /// A record's predicate: level 1 of at most `max`.
    pub(super) fn top(max: usize) -> PredicateSeed {
        PredicateSeed { depth: 1, max }
    }
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
pub(super) struct Predicates(PredicateSeed);

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
