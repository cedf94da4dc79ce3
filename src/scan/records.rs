//! The typed serde scans of whole records: a fact ([`fact`]), a policy or effect
//! ([`rule`]), and a quick `seq` ([`seq_of`]). Each says yes only to a record the strict path accepts with
//! the same values; anything else is `None`, and the caller takes the strict path.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::seeds::*;

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

pub(super) struct FactVisitor;

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
                    // Its text is kept: an object with a key with a dot may give a field
                    // twice, which the strict path refuses, and is read whole to tell.
                    let (raw, shape) = checked_value(&mut map)?;
                    if shape == Shape::Object && spelt_twice(raw) {
                        return Err(not_light());
                    }
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
    /// An effect: its `tool`, and the text of its `match` (checked as the strict path
    /// checks it), for [`crate::record::match_hash_of`].
    Effect {
        /// `tool`.
        tool: Cow<'a, str>,
        /// `match`, as written in the line.
        matches: &'a str,
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

pub(super) struct RuleVisitor<'s> {
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
        let (mut tool, mut matches) = (None, None);
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
                key::PREDICATE => map.next_value_seed(PredicateSeed::top(self.max_depth))?,
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
                    let t = tool_name(map.next_value_seed(StrSeed)?)?;
                    if (self.stop)(Early::Tool(&t)) {
                        return Err(not_light());
                    }
                    tool = Some(t);
                }
                _ => {
                    // `match`: an object, as the strict path checks it. Its text is kept:
                    // its hash is taken from it, without a `Value` of the whole line.
                    // Only a key with a dot can give a field twice, which the strict
                    // path refuses: such a `match` is read whole and checked as it does.
                    // A dot may be written as an escape (`\u002e`), so text with a
                    // backslash is read whole too.
                    let (raw, shape) = checked_value(&mut map)?;
                    if shape != Shape::Object || spelt_twice(raw) {
                        return Err(not_light());
                    }
                    matches = Some(raw);
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
                matches: matches.ok_or_else(not_light)?,
            },
            _ => return Err(not_light()),
        };
        Ok(RuleLine { id, seq, rule })
    }
}

/// The next value of `map`, checked as the strict path checks a value (see
/// [`Checked`]), as written in the line, and its shape.
fn checked_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(&'de str, Shape), A::Error> {
    let raw: &'de serde_json::value::RawValue = map.next_value()?;
    let mut de = serde_json::Deserializer::from_str(raw.get());
    let shape = Checked::TOP.deserialize(&mut de).map_err(|_| not_light())?;
    de.end().map_err(|_| not_light())?;
    Ok((raw.get(), shape))
}

/// True unless `raw`, an object the scan has checked (a `match`, or a fact's `value`),
/// gives no field two ways ([`crate::record::spelt_twice`]: twice, or through an array or
/// a string). Only a key with a dot can spell a field a second way, and its dot may be
/// written `\u002e`: text with neither a `.` nor a `\` gives no field twice and is not
/// parsed.
fn spelt_twice(raw: &str) -> bool {
    if !raw.contains(['.', '\\']) {
        return false;
    }
    match crate::json::parse(raw.as_bytes()) {
        Ok(serde_json::Value::Object(m)) => crate::record::spelt_twice(&m).is_some(),
        _ => true,
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
