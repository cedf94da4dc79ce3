//! Typed records and the validated store they form.
//!
//! This module turns JSON record objects into typed records (SPEC 2.1), refusing anything
//! the gate could misread: unknown keys on evaluable kinds, duplicate ids or seqs,
//! dangling `supersedes` and `depends_on`. The store keeps records ordered by `seq` and
//! the indexes the gate's views need. It does no I/O.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::action::Twice;
use crate::json::{canonical, canonical_len};
use crate::predicate::{self, Predicate, PredicateError, ValueError};
use crate::text::clean;

/// What a policy does when its predicate is TRUE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PolicyEffect {
    /// Permissive: licenses the call.
    Allow,
    /// Restrictive: forbids the call.
    Deny,
    /// Restrictive: the call needs a human approver.
    RequireApproval,
}

impl PolicyEffect {
    /// The effect as spelt in records.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyEffect::Allow => "allow",
            PolicyEffect::Deny => "deny",
            PolicyEffect::RequireApproval => "require_approval",
        }
    }

    /// True for `deny` and `require_approval`.
    pub fn is_restrictive(self) -> bool {
        !matches!(self, PolicyEffect::Allow)
    }
}

/// A rule over calls of the tools in its scope.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Tool names or `*` globs.
    pub scope: Vec<String>,
    /// When the rule applies.
    pub predicate: Predicate,
    /// What it does then.
    pub effect: PolicyEffect,
    /// The id of an earlier policy this one revokes.
    pub supersedes: Option<String>,
    /// Ids of the records this rule was derived from.
    pub depends_on: Vec<String>,
}

impl Policy {
    /// True when some scope entry matches `tool`.
    pub fn scopes(&self, tool: &str) -> bool {
        self.scope.iter().any(|s| glob_match(s, tool))
    }
}

/// The value of a named field as of the record's `seq`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    /// The field name.
    pub field: String,
    /// Its value.
    pub value: Value,
    /// The id of an earlier fact of the same field this one corrects.
    pub supersedes: Option<String>,
    /// Ids of the records this value was derived from.
    pub depends_on: Vec<String>,
}

/// A non-idempotent call that already ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    /// The tool that was called.
    pub tool: String,
    /// The params the call had, as written: each key a field (`invoice.id`, or
    /// `invoice` holding an object of fields).
    pub matches: Map<String, Value>,
}

impl Effect {
    /// The fields `match` names, each with the value the call gave it: a key whose value
    /// is a non-empty object stands for the fields below it (`{"invoice": {"id": "A"}}`
    /// is the field `invoice.id`, as `{"invoice.id": "A"}` is), so that both spellings of
    /// one field ask the same of a call, and a call's object may hold more keys than
    /// `match` names, as its params may. An empty object names no field. In key order.
    /// The names are those [`crate::action::field_names`] lists whose value is not an
    /// object.
    pub fn fields(&self) -> Vec<(String, &Value)> {
        crate::action::field_names(&self.matches)
            .into_iter()
            .filter(|(_, value)| !value.is_object())
            .collect()
    }
}

/// The first field that `matches` (an effect's `match`, or a fact's object `value`: the
/// field named below the fact's own) gives two ways, as a call's params are read
/// ([`crate::action::spelt_two_ways`]): spelt with dots in a key and through nested
/// objects, whatever the two values are (an object one way and a scalar the other
/// included), else with dots in a key while its path meets an array or a string of
/// `matches` (`{"items.0.amount": 1, "items": [...]}`, `{"s.length": 1, "s": "abc"}`). A
/// call may give one field the same value both ways; a record is written once, so it may
/// not.
pub fn spelt_twice(matches: &Map<String, Value>) -> Option<Twice> {
    crate::action::spelt_two_ways(matches, false)
}

/// What a record is, by its `kind`.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `policy`
    Policy(Policy),
    /// `fact`
    Fact(Fact),
    /// `effect`
    Effect(Effect),
    /// `chatter`: declared inconsequential.
    Chatter,
    /// Any other kind, e.g. `summary`: the gate can prove nothing about it.
    Unevaluable(String),
}

impl Kind {
    /// The kind as spelt in records.
    pub fn name(&self) -> &str {
        match self {
            Kind::Policy(_) => "policy",
            Kind::Fact(_) => "fact",
            Kind::Effect(_) => "effect",
            Kind::Chatter => "chatter",
            Kind::Unevaluable(k) => k,
        }
    }
}

/// The kinds the gate evaluates, as spelt in records.
pub const EVALUABLE_KINDS: [&str; 4] = ["policy", "fact", "effect", "chatter"];

/// The kind the gate evaluates that `kind` looks like a misspelling of (`Policy`,
/// `polcy`, `facts`): the nearest of [`EVALUABLE_KINDS`] within two edits (Levenshtein
/// over characters, letter case ignored), the first in that list on a tie. `None` for
/// the evaluable kinds themselves and for kinds far from all of them (`summary`).
pub fn misspelt_kind(kind: &str) -> Option<&'static str> {
    const MOST: usize = 2;
    if EVALUABLE_KINDS.contains(&kind) || kind.chars().count() > 7 + MOST {
        return None;
    }
    let lower: Vec<char> = kind.chars().flat_map(char::to_lowercase).collect();
    let mut best: Option<(usize, &'static str)> = None;
    for candidate in EVALUABLE_KINDS {
        if let Some(d) = crate::text::edit_distance(&lower, candidate, MOST)
            && best.is_none_or(|(b, _)| d < b)
        {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, k)| k)
}

/// One validated record.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Unique, non-empty id.
    pub id: String,
    /// Unique order key.
    pub seq: u64,
    /// The typed body.
    pub kind: Kind,
    /// Prose shown in reports.
    pub text: Option<String>,
    /// Declared or estimated token cost.
    pub tokens: u64,
    /// sha256 of the record's canonical JSON; `None` where it was not computed (a partial
    /// load digests only the records kept, which alone enter the kept set's fingerprint).
    pub digest: Option<[u8; 32]>,
}

impl Record {
    /// The tool names (or globs) this record gives: a policy's `scope`, an effect's
    /// `tool`; none for another kind.
    pub fn tool_names(&self) -> &[String] {
        match &self.kind {
            Kind::Policy(p) => &p.scope,
            Kind::Effect(e) => std::slice::from_ref(&e.tool),
            _ => &[],
        }
    }

    /// The ids this record was derived from (policies and facts only).
    pub fn depends_on(&self) -> &[String] {
        match &self.kind {
            Kind::Policy(p) => &p.depends_on,
            Kind::Fact(f) => &f.depends_on,
            _ => &[],
        }
    }

    /// The id of the earlier record this one supersedes.
    pub fn supersedes(&self) -> Option<&str> {
        match &self.kind {
            Kind::Policy(p) => p.supersedes.as_deref(),
            Kind::Fact(f) => f.supersedes.as_deref(),
            _ => None,
        }
    }
}

/// Default of [`Limits::max_input_bytes`]: 1 GiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 1 << 30;

/// The limits input is read under. Each is visible to the user (a CLI flag with its
/// default in `--help`) and exceeding one is ERROR `invalid-input`, never a silent cut.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Deepest predicate nesting accepted (`--max-predicate-depth`).
    pub max_predicate_depth: usize,
    /// Largest input accepted, in bytes (`--max-input-bytes`).
    pub max_input_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_predicate_depth: predicate::DEFAULT_MAX_DEPTH,
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }
}

/// Where a record came from, for error messages before its id is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The N-th element (0-based) of a document's `records`.
    Index(usize),
    /// A 1-based line of a JSON Lines stream.
    Line(usize),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Index(i) => write!(f, "records[{i}]"),
            Place::Line(l) => write!(f, "line {l}"),
        }
    }
}

/// A record the gate refuses: which one, and what is wrong with it. The loader adds the
/// file it came from (`InputError`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{at}: {problem}")]
pub struct RecordError {
    /// The record: where it is until its id is read, then its id.
    pub at: RecordAt,
    /// What is wrong.
    pub problem: RecordProblem,
}

/// Which record an error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordAt {
    /// Where a record without a readable id is.
    Place(Place),
    /// The record with this id.
    Id(String),
}

impl std::fmt::Display for RecordAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordAt::Place(place) => place.fmt(f),
            RecordAt::Id(id) => write!(f, "record `{}`", clean(id)),
        }
    }
}

/// What is wrong with one record, or with a record among the others.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RecordProblem {
    /// Not a JSON object.
    #[error("a record must be a JSON object")]
    NotObject,
    /// A key the record must have.
    #[error("missing key `{0}`")]
    Missing(&'static str),
    /// A key whose value must be a non-empty string (`id`, `field`, `tool`, the ids of
    /// `supersedes` and `depends_on`).
    #[error("`{0}` must be a non-empty string")]
    NotNonEmpty(&'static str),
    /// A key whose value must be a string (`kind`, `text`).
    #[error("`{0}` must be a string")]
    NotString(&'static str),
    /// A `seq` that is not an integer in `0..2^64`.
    #[error("`seq` must be a non-negative integer below 2^64")]
    Seq,
    /// A `tokens` that is not a non-negative integer.
    #[error("`tokens` must be a non-negative integer")]
    Tokens,
    /// Keys an evaluable kind does not take: the keys, the kind, the keys it takes.
    #[error(
        "unknown key {} (a {kind} record takes {})",
        keys.iter().map(|k| format!("`{}`", clean(k))).collect::<Vec<_>>().join(", "),
        takes.join(", ")
    )]
    UnknownKeys {
        /// The keys found, in order.
        keys: Vec<String>,
        /// The record's kind.
        kind: String,
        /// The kind's own keys.
        takes: &'static [&'static str],
    },
    /// A `depends_on` that is not an array.
    #[error("`{0}` must be an array of record ids")]
    NotIdList(&'static str),
    /// An element of an array of names or ids (a policy's `scope`, `depends_on`) that is
    /// not a non-empty string: the key, the element's index, what the key holds, and
    /// the element as written (cut short).
    #[error("`{key}[{index}]` is `{found}`: `{key}` holds {holds}, each a non-empty string")]
    NotNonEmptyAt {
        /// `scope` or `depends_on`.
        key: &'static str,
        /// The element's index in the array.
        index: usize,
        /// What the array holds: `tool names or globs`, `record ids`.
        holds: &'static str,
        /// The element as JSON, cut after a few dozen characters.
        found: String,
    },
    /// A value the gate cannot compare or carry, under a key.
    #[error("`{key}`: {error}")]
    Value {
        /// The key (`value`, `match`).
        key: &'static str,
        /// Why the value is refused.
        error: ValueError,
    },
    /// A tool name (in a policy's `scope`, an effect's `tool`) that is blank or has white
    /// space at an end or a control character: the key and the name.
    #[error(
        "`{key}` names `{}`, with white space at an end or a control character (or nothing else): no harness names a tool so, and the record would bind no call; write the name as the harness sends it",
        clean(name)
    )]
    NotToolName {
        /// `scope` or `tool`.
        key: &'static str,
        /// The name as written.
        name: String,
    },
    /// A policy's `scope` of the wrong shape.
    #[error("`scope` must be a tool name, a glob, or a non-empty array of those")]
    Scope,
    /// A malformed predicate.
    #[error("`predicate` at {}: {}", .0.path, .0.problem)]
    Predicate(PredicateError),
    /// An `effect` that is not one of the three: as written (a string, else its JSON).
    #[error("unknown effect `{0}` (allow, deny or require_approval)")]
    UnknownEffect(String),
    /// An effect record's `match` that is not an object.
    #[error("`match` must be an object of param names to values")]
    Match,
    /// An effect record's `match` that gives one field twice: as a key with dots and
    /// through nested objects (`{"invoice.id": "A", "invoice": {"id": "B"}}`). A call
    /// gives a field one value, so the gate could replay such a record by no call, or by
    /// one the record does not say; the field and whether the two values differ.
    #[error(
        "`match` gives the field `{}` twice{}, as a key with dots and through nested objects: a call gives a field one value, so write it once",
        clean(field),
        if *differ { ", with two different values" } else { "" }
    )]
    MatchTwice {
        /// The field, dotted.
        field: String,
        /// True when the two spellings give it different values.
        differ: bool,
    },
    /// A fact's object `value` that gives one field below the fact's twice, as a key with
    /// dots and through nested objects (`a` = `{"b": {"c": 1}, "b.c": 2}`). The gate reads
    /// the dotted key and a tool may read the nested value: a rule would be judged on a
    /// value other than the one the tool sees. The field (the fact's, then the one below)
    /// and whether the two values differ.
    #[error(
        "`value` gives the field `{}` twice{}, as a key with dots and through nested objects: a field has one value, so write it once",
        clean(field),
        if *differ { ", with two different values" } else { "" }
    )]
    ValueTwice {
        /// The field, dotted: the fact's `field`, then the field below it.
        field: String,
        /// True when the two spellings give it different values.
        differ: bool,
    },
    /// An effect record's `match` that gives a field as a key with dots while a part of
    /// its path is an array or a string of the `match` (`{"items.0.amount": 1, "items":
    /// [{"amount": 2}]}`, `{"s.length": 1, "s": "abc"}`). No call gives a field so (such
    /// params are refused), so the record could never bind as written. The field, the
    /// part of its path up to that value, and what it is.
    #[error(
        "`match` gives the field `{}` as a key with dots while `{}` is {}: the gate does not read into arrays or strings and a call may give the field there, so write it one way",
        clean(field),
        clean(at),
        what.a()
    )]
    MatchThrough {
        /// The field, dotted.
        field: String,
        /// The part of its path up to the array or string, dotted.
        at: String,
        /// Which of the two it is.
        what: predicate::Elements,
    },
    /// A fact's object `value` that gives a field below the fact's as a key with dots
    /// while a part of its path is an array or a string of the value (`order` =
    /// `{"items.0.amount": 100, "items": [{"amount": 9000}]}`). The gate reads the key,
    /// and a tool may read the field in the array or string (9000, or a string's length):
    /// a rule would be judged on a value other than the one the tool sees. The field and
    /// the part of its path (each the fact's `field`, then the one below), and what the
    /// value there is.
    #[error(
        "`value` gives the field `{}` as a key with dots while `{}` is {}: the gate does not read into arrays or strings and a tool may read the field there, so write it one way",
        clean(field),
        clean(at),
        what.a()
    )]
    ValueThrough {
        /// The field, dotted: the fact's `field`, then the field below it.
        field: String,
        /// The part of its path up to the array or string, dotted, after the fact's
        /// `field`.
        at: String,
        /// Which of the two it is.
        what: predicate::Elements,
    },
    /// A `seq` another record has too (that record's id).
    #[error("duplicate seq {seq} (also on record `{}`)", clean(other))]
    DuplicateSeq {
        /// The seq.
        seq: u64,
        /// The id of the other record with it.
        other: String,
    },
    /// An id another record has too.
    #[error("duplicate id")]
    DuplicateId,
    /// A `supersedes` that names no earlier record of the same kind (and fact field).
    #[error(
        "`supersedes` names `{}`, which is not {}",
        clean(target),
        field.as_ref().map_or_else(
            || "an earlier policy".to_string(),
            |f| format!("an earlier fact of field `{}`", clean(f))
        )
    )]
    NotEarlier {
        /// The id named.
        target: String,
        /// For a fact, its field.
        field: Option<String>,
    },
    /// A `depends_on` that names no other record.
    #[error("`depends_on` names `{}`, which is no other record", clean(.0))]
    NoSuchRecord(String),
}

/// Validates one record object, found at `place`.
pub fn parse_record(place: &Place, value: &Value, limits: Limits) -> Result<Record, RecordError> {
    parse_record_with(place, value, limits, true)
}

/// [`parse_record`], computing the sha256 of the canonical JSON only when `digest` is
/// true (otherwise `digest` is `None`): the lean loader needs it for kept records only.
pub(crate) fn parse_record_with(
    place: &Place,
    value: &Value,
    limits: Limits,
    digest: bool,
) -> Result<Record, RecordError> {
    let at_place = |problem| RecordError {
        at: RecordAt::Place(place.clone()),
        problem,
    };
    let Value::Object(obj) = value else {
        return Err(at_place(RecordProblem::NotObject));
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(_) => return Err(at_place(RecordProblem::NotNonEmpty("id"))),
        None => return Err(at_place(RecordProblem::Missing("id"))),
    };
    let fail = |problem| RecordError {
        at: RecordAt::Id(id.clone()),
        problem,
    };
    let seq = match obj.get("seq") {
        Some(v) => whole_number(v).ok_or_else(|| fail(RecordProblem::Seq))?,
        None => return Err(fail(RecordProblem::Missing("seq"))),
    };
    let kind_name = match obj.get("kind") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(fail(RecordProblem::NotString("kind"))),
        None => return Err(fail(RecordProblem::Missing("kind"))),
    };
    let text = match obj.get("text") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(fail(RecordProblem::NotString("text"))),
    };
    let canonical_json = digest.then(|| canonical(value));
    let tokens = match obj.get("tokens") {
        None => {
            let len = canonical_json
                .as_ref()
                .map_or_else(|| canonical_len(value), String::len);
            (len as u64).div_ceil(4)
        }
        Some(v) => whole_number(v).ok_or_else(|| fail(RecordProblem::Tokens))?,
    };
    let digest: Option<[u8; 32]> = canonical_json.map(|c| Sha256::digest(c.as_bytes()).into());
    let kind = match kind_name.as_str() {
        "policy" => Kind::Policy(parse_policy(obj, limits).map_err(&fail)?),
        "fact" => Kind::Fact(parse_fact(obj).map_err(&fail)?),
        "effect" => Kind::Effect(parse_effect(obj).map_err(&fail)?),
        "chatter" => Kind::Chatter,
        other => Kind::Unevaluable(other.to_string()),
    };
    Ok(Record {
        id,
        seq,
        kind,
        text,
        tokens,
        digest,
    })
}

/// Reads a JSON integer in `0..2^64` (no fraction, no exponent).
pub fn whole_number(v: &Value) -> Option<u64> {
    v.as_number().and_then(|n| n.as_str().parse::<u64>().ok())
}

const COMMON_KEYS: [&str; 6] = ["id", "seq", "kind", "text", "tokens", "meta"];

fn only_keys(obj: &Map<String, Value>, own: &'static [&'static str]) -> Result<(), RecordProblem> {
    let extra: Vec<String> = obj
        .keys()
        .filter(|k| !COMMON_KEYS.contains(&k.as_str()) && !own.contains(&k.as_str()))
        .cloned()
        .collect();
    if extra.is_empty() {
        Ok(())
    } else {
        Err(RecordProblem::UnknownKeys {
            keys: extra,
            kind: obj
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            takes: own,
        })
    }
}

fn required<'a>(
    obj: &'a Map<String, Value>,
    key: &'static str,
) -> Result<&'a Value, RecordProblem> {
    obj.get(key).ok_or(RecordProblem::Missing(key))
}

fn nonempty_string(v: &Value, key: &'static str) -> Result<String, RecordProblem> {
    match v {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        _ => Err(RecordProblem::NotNonEmpty(key)),
    }
}

fn optional_id(
    obj: &Map<String, Value>,
    key: &'static str,
) -> Result<Option<String>, RecordProblem> {
    obj.get(key).map(|v| nonempty_string(v, key)).transpose()
}

fn id_list(obj: &Map<String, Value>, key: &'static str) -> Result<Vec<String>, RecordProblem> {
    match obj.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => nonempty_strings(items, key, "record ids"),
        Some(_) => Err(RecordProblem::NotIdList(key)),
    }
}

/// The strings of an array under `key` that `holds` them, each non-empty; the message
/// for one that is not names its index, since the key's own value is an array.
fn nonempty_strings(
    items: &[Value],
    key: &'static str,
    holds: &'static str,
) -> Result<Vec<String>, RecordProblem> {
    (items.iter().enumerate())
        .map(|(index, v)| match v {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            v => Err(RecordProblem::NotNonEmptyAt {
                key,
                index,
                holds,
                found: crate::json::json_brief(v),
            }),
        })
        .collect()
}

fn numbers_ok(v: &Value, key: &'static str) -> Result<(), RecordProblem> {
    predicate::check_numbers(v).map_err(|error| RecordProblem::Value { key, error })
}

fn parse_policy(obj: &Map<String, Value>, limits: Limits) -> Result<Policy, RecordProblem> {
    only_keys(
        obj,
        &["scope", "predicate", "effect", "supersedes", "depends_on"],
    )?;
    let scope: Vec<String> = match required(obj, "scope")? {
        Value::String(s) if !s.is_empty() => vec![s.clone()],
        Value::Array(items) if !items.is_empty() => {
            nonempty_strings(items, "scope", "tool names or globs")?
        }
        _ => return Err(RecordProblem::Scope),
    };
    if let Some(name) = scope.iter().find(|s| !crate::text::is_tool_name(s)) {
        return Err(RecordProblem::NotToolName {
            key: "scope",
            name: name.clone(),
        });
    }
    let predicate = Predicate::parse(required(obj, "predicate")?, limits.max_predicate_depth)
        .map_err(RecordProblem::Predicate)?;
    let effect = match required(obj, "effect")? {
        Value::String(s) if s == "allow" => PolicyEffect::Allow,
        Value::String(s) if s == "deny" => PolicyEffect::Deny,
        Value::String(s) if s == "require_approval" => PolicyEffect::RequireApproval,
        other => {
            let shown = match other {
                Value::String(s) => clean(s).into_owned(),
                v => crate::json::json_text(v),
            };
            return Err(RecordProblem::UnknownEffect(shown));
        }
    };
    Ok(Policy {
        scope,
        predicate,
        effect,
        supersedes: optional_id(obj, "supersedes")?,
        depends_on: id_list(obj, "depends_on")?,
    })
}

fn parse_fact(obj: &Map<String, Value>) -> Result<Fact, RecordProblem> {
    only_keys(obj, &["field", "value", "supersedes", "depends_on"])?;
    let field = nonempty_string(required(obj, "field")?, "field")?;
    let value = required(obj, "value")?.clone();
    numbers_ok(&value, "value")?;
    if let Value::Object(inner) = &value {
        match spelt_twice(inner) {
            Some(Twice::Nested(below, differ)) => {
                return Err(RecordProblem::ValueTwice {
                    field: format!("{field}.{below}"),
                    differ,
                });
            }
            Some(Twice::Through(below, at, what)) => {
                return Err(RecordProblem::ValueThrough {
                    field: format!("{field}.{below}"),
                    at: format!("{field}.{at}"),
                    what,
                });
            }
            None => {}
        }
    }
    Ok(Fact {
        field,
        value,
        supersedes: optional_id(obj, "supersedes")?,
        depends_on: id_list(obj, "depends_on")?,
    })
}

fn parse_effect(obj: &Map<String, Value>) -> Result<Effect, RecordProblem> {
    only_keys(obj, &["tool", "match"])?;
    let tool = nonempty_string(required(obj, "tool")?, "tool")?;
    if !crate::text::is_tool_name(&tool) {
        return Err(RecordProblem::NotToolName {
            key: "tool",
            name: tool,
        });
    }
    let Value::Object(matches) = required(obj, "match")? else {
        return Err(RecordProblem::Match);
    };
    numbers_ok(required(obj, "match")?, "match")?;
    match spelt_twice(matches) {
        Some(Twice::Nested(field, differ)) => {
            return Err(RecordProblem::MatchTwice { field, differ });
        }
        Some(Twice::Through(field, at, what)) => {
            return Err(RecordProblem::MatchThrough { field, at, what });
        }
        None => {}
    }
    Ok(Effect {
        tool,
        matches: matches.clone(),
    })
}

/// The tool names and globs records give (a policy's scope, an effect's `tool`; SPEC
/// 2.3), each with what tells whether every record giving it binds a call of another
/// name too: the names every policy scope giving it gives, and the `match` of each effect
/// giving it. A hook asks this of a name the harness never sends that was meant for the
/// call (`bash` for Claude Code's `Bash`): a store that names `Bash` in one record binds
/// the call only by that record, not by one that names only `bash`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Named(BTreeMap<String, Giving>);

/// What the records giving one name give beside it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Giving {
    /// The names every policy scope giving this one gives (itself among them), sorted,
    /// distinct; `None` when no policy gives it.
    with: Option<Vec<String>>,
    /// [`match_hash`] of the `match` of each effect record that gives it.
    effects: BTreeSet<u64>,
}

/// A hash of an effect's `match` (the first 8 bytes of the sha256 of its canonical JSON):
/// two effects of the same `match` replay the same calls of their tools.
pub fn match_hash(matches: &Map<String, Value>) -> u64 {
    // As `crate::json::canonical` writes a value: serde_json's Map keeps its keys sorted.
    let json = serde_json::to_vec(matches).unwrap_or_default();
    match_hash_of(&json)
}

/// [`match_hash`], given the canonical JSON of the `match` (as [`crate::json::canonical`]
/// or [`crate::scan::canonical`] writes it).
pub fn match_hash_of(canonical: &[u8]) -> u64 {
    let digest: [u8; 32] = Sha256::digest(canonical).into();
    let [a, b, c, d, e, f, g, h, ..] = digest;
    u64::from_le_bytes([a, b, c, d, e, f, g, h])
}

impl Named {
    /// The names `records` give.
    pub fn of(records: &[Record]) -> Named {
        let mut named = Named::default();
        for r in records {
            match &r.kind {
                Kind::Policy(p) => named.scope(&p.scope),
                Kind::Effect(e) => named.effect(&e.tool, &e.matches),
                _ => {}
            }
        }
        named
    }

    /// Notes a policy's scope.
    pub fn scope<S: AsRef<str>>(&mut self, scope: &[S]) {
        let gives = |w: &String| scope.iter().any(|s| s.as_ref() == w);
        for name in scope {
            let name = name.as_ref();
            match self.0.get_mut(name) {
                Some(Giving {
                    with: Some(with), ..
                }) => with.retain(gives),
                Some(giving) => giving.with = Some(Self::sorted(scope)),
                None => {
                    let giving = Giving {
                        with: Some(Self::sorted(scope)),
                        effects: BTreeSet::new(),
                    };
                    self.0.insert(name.to_string(), giving);
                }
            }
        }
    }

    /// Notes an effect's tool and `match`.
    pub fn effect(&mut self, tool: &str, matches: &Map<String, Value>) {
        self.effect_hashed(tool, match_hash(matches));
    }

    /// [`Named::effect`], given the [`match_hash`] of the effect's `match`.
    pub fn effect_hashed(&mut self, tool: &str, hash: u64) {
        match self.0.get_mut(tool) {
            Some(giving) => {
                giving.effects.insert(hash);
            }
            None => {
                let giving = Giving {
                    with: None,
                    effects: BTreeSet::from([hash]),
                };
                self.0.insert(tool.to_string(), giving);
            }
        }
    }

    fn sorted<S: AsRef<str>>(scope: &[S]) -> Vec<String> {
        let mut names: Vec<String> = scope.iter().map(|s| s.as_ref().to_string()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Adds the names another part of the same input gives.
    pub fn append(&mut self, other: Named) {
        for (name, mut theirs) in other.0 {
            let Some(ours) = self.0.get_mut(&name) else {
                self.0.insert(name, theirs);
                continue;
            };
            ours.effects.append(&mut theirs.effects);
            ours.with = match (ours.with.take(), theirs.with) {
                (Some(mut a), Some(b)) => {
                    a.retain(|w| b.binary_search(w).is_ok());
                    Some(a)
                }
                (a, b) => a.or(b),
            };
        }
    }

    /// Whether some record gives `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// The names given, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Whether every record giving `name` binds calls of `tool` as well: each policy
    /// giving it has a name covering `tool` in its scope, and each effect giving it has a
    /// twin, an effect whose `tool` covers `tool` with the same `match` (a ledger shared
    /// by harnesses writes a call both ways, in two records, or once under a glob covering
    /// both). Told from the names all the policies giving `name` give, so policies that
    /// cover `tool` each by a name the others lack count as not binding it (fails closed).
    /// False when no record gives `name`.
    pub fn always_with(&self, name: &str, tool: &str) -> bool {
        let Some(giving) = self.0.get(name) else {
            return false;
        };
        let scopes = giving
            .with
            .as_ref()
            .is_none_or(|with| with.iter().any(|w| glob_match(w, tool)));
        scopes && self.twinned(name, tool)
    }

    /// Whether each effect of `name` has a twin covering `tool` ([`Named::always_with`]):
    /// an effect with the same `match` whose `tool` (itself, when `name` is a glob that
    /// covers `tool`) covers `tool`, so that it replays the same calls of `tool`.
    fn twinned(&self, name: &str, tool: &str) -> bool {
        let covering: Vec<&BTreeSet<u64>> = (self.0.iter())
            .filter(|(n, _)| glob_match(n, tool))
            .map(|(_, g)| &g.effects)
            .collect();
        self.0.get(name).is_none_or(|g| {
            g.effects
                .iter()
                .all(|h| covering.iter().any(|t| t.contains(h)))
        })
    }
}

/// `*` matches any run of characters (dots included); everything else is literal.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == name;
    };
    if parts.len() == 1 {
        return pattern == name;
    }
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = rest.get(i + part.len()..).unwrap_or(""),
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// True when some name matches both patterns (names or `*` globs), decided exactly.
pub fn globs_overlap(a: &str, b: &str) -> bool {
    glob_meet(a, b).is_some()
}

/// The most pattern characters [`glob_meet`] searches two globs with exactly (the product
/// of their lengths); past it two globs are taken to overlap.
const MEET_MAX_STATES: usize = 1 << 16;

/// A name that both patterns (names or `*` globs) match, or `None` when no name does. A
/// plain name is its own example; for two globs, a short common name (found
/// breadth-first), with one `x` where both could take any run (`deploy.*` and `*` meet
/// in `deploy.x`). Two globs too long to search exactly are taken to overlap, in `b`
/// itself: a caller then judges a rule it might have skipped, never the other way round.
pub fn glob_meet(a: &str, b: &str) -> Option<String> {
    if !a.contains('*') {
        return glob_match(b, a).then(|| a.to_string());
    }
    if !b.contains('*') {
        return glob_match(a, b).then(|| b.to_string());
    }
    let a: Vec<char> = a.chars().collect();
    let b_chars: Vec<char> = b.chars().collect();
    let (n, m) = (a.len() + 1, b_chars.len() + 1);
    if n.saturating_mul(m) > MEET_MAX_STATES {
        return Some(b.to_string());
    }
    meet_search(&a, &b_chars)
}

/// A breadth-first search of the product of the two patterns' automata: state `(i, j)`
/// has read `a[..i]` and `b[..j]`; a `*` may be passed over, or stay and take a
/// character the other side reads literally.
fn meet_search(a: &[char], b: &[char]) -> Option<String> {
    let m = b.len() + 1;
    let state = |i: usize, j: usize| i * m + j;
    let goal = state(a.len(), b.len());
    // For each state reached: the state before it and the character read on the way.
    let mut from: Vec<Option<(usize, Option<char>)>> = vec![None; (a.len() + 1) * m];
    let mut queue = std::collections::VecDeque::from([0usize]);
    if let Some(first) = from.get_mut(0) {
        *first = Some((0, None));
    }
    while let Some(s) = queue.pop_front() {
        if s == goal {
            break;
        }
        let (i, j) = (s / m, s % m);
        let (x, y) = (a.get(i).copied(), b.get(j).copied());
        let mut next: Vec<(usize, usize, Option<char>)> = Vec::new();
        match (x, y) {
            (Some('*'), Some('*')) => next.extend([(i + 1, j, None), (i, j + 1, None)]),
            (Some('*'), Some(c)) => next.extend([(i + 1, j, None), (i, j + 1, Some(c))]),
            (Some(c), Some('*')) => next.extend([(i, j + 1, None), (i + 1, j, Some(c))]),
            (Some(c), Some(d)) if c == d => next.push((i + 1, j + 1, Some(c))),
            (Some('*'), None) => next.push((i + 1, j, None)),
            (None, Some('*')) => next.push((i, j + 1, None)),
            _ => {}
        }
        for (i2, j2, c) in next {
            let t = state(i2, j2);
            if let Some(slot) = from.get_mut(t)
                && slot.is_none()
            {
                *slot = Some((s, c));
                queue.push_back(t);
            }
        }
    }
    // Walk back from the goal; where both patterns sit on a `*`, one `x` reads better
    // than nothing there.
    let mut out: Vec<char> = Vec::new();
    let mut s = goal;
    let mut filled = false;
    while s != 0 {
        let (before, c) = (*from.get(s)?)?;
        out.extend(c);
        let (i, j) = (before / m, before % m);
        if !filled && a.get(i) == Some(&'*') && b.get(j) == Some(&'*') && c.is_none() {
            out.push('x');
            filled = true;
        }
        s = before;
    }
    out.reverse();
    Some(out.into_iter().collect())
}

/// The validated record set, ordered by `seq`, with the indexes views need.
///
/// A store holds the records it was given: every record of the input when the exact
/// loader built it, or, from a partial load (`crate::stream`), only those a command can
/// consult; what such a load knows of the rest is in its [`crate::compaction::Totals`].
#[derive(Debug, Clone)]
pub struct Store {
    records: Vec<Record>,
    index: BTreeMap<String, usize>,
    facts_by_field: BTreeMap<String, Vec<usize>>,
    revokers: BTreeMap<usize, Vec<usize>>,
}

impl Store {
    /// Builds a store from records in any order, checking the cross-record rules:
    /// unique ids and seqs, `supersedes` naming an earlier record of the same kind (and
    /// field), `depends_on` naming records that exist.
    pub fn new(records: Vec<Record>) -> Result<Store, RecordError> {
        let store = Store::checked_elsewhere(records);
        store.check()?;
        Ok(store)
    }

    /// A store of records whose cross-record rules the caller has checked against the
    /// whole input they came from (the lean loader, which holds only some of its records:
    /// a `supersedes` or `depends_on` target may be one it did not hold, so the checks of
    /// [`Store::new`] cannot be run on these alone).
    ///
    /// For a gate over one compaction and a set of tools, the records must include: each
    /// policy in scope of a tool, each policy that supersedes another, each effect of a
    /// tool, each dropped record of an unevaluable kind (and each kept one whose kind looks
    /// misspelt: [`misspelt_kind`]), per fact field the newest fact and the newest kept
    /// fact, and each kept record with `depends_on`.
    pub(crate) fn checked_elsewhere(mut records: Vec<Record>) -> Store {
        records.sort_by_key(|r| r.seq);
        let index: BTreeMap<String, usize> = records
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.clone(), i))
            .collect();
        let mut facts_by_field: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        let mut revokers: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, r) in records.iter().enumerate() {
            match &r.kind {
                Kind::Fact(f) => facts_by_field.entry(f.field.clone()).or_default().push(i),
                Kind::Policy(p) => {
                    if let Some(&t) = p.supersedes.as_ref().and_then(|t| index.get(t)) {
                        revokers.entry(t).or_default().push(i);
                    }
                }
                _ => {}
            }
        }
        Store {
            records,
            index,
            facts_by_field,
            revokers,
        }
    }

    /// The cross-record rules of [`Store::new`], over the records held, in their order:
    /// seqs, then ids, then per record its `supersedes` and `depends_on`.
    fn check(&self) -> Result<(), RecordError> {
        let records = &self.records;
        let at = |id: &str, problem| RecordError {
            at: RecordAt::Id(id.to_string()),
            problem,
        };
        for pair in records.windows(2) {
            if let [a, b] = pair
                && a.seq == b.seq
            {
                return Err(at(
                    &b.id,
                    RecordProblem::DuplicateSeq {
                        seq: b.seq,
                        other: a.id.clone(),
                    },
                ));
            }
        }
        if self.index.len() != records.len() {
            let mut seen = BTreeSet::new();
            if let Some(r) = records.iter().find(|r| !seen.insert(r.id.as_str())) {
                return Err(at(&r.id, RecordProblem::DuplicateId));
            }
        }
        for (i, r) in records.iter().enumerate() {
            if let Some(target) = r.supersedes() {
                let earlier = self
                    .index
                    .get(target)
                    .filter(|&&t| t < i)
                    .and_then(|&t| records.get(t));
                let same = earlier.is_some_and(|old| match (&r.kind, &old.kind) {
                    (Kind::Policy(_), Kind::Policy(_)) => true,
                    (Kind::Fact(new), Kind::Fact(old)) => new.field == old.field,
                    _ => false,
                });
                if !same {
                    let field = match &r.kind {
                        Kind::Fact(f) => Some(f.field.clone()),
                        _ => None,
                    };
                    let target = target.to_string();
                    return Err(at(&r.id, RecordProblem::NotEarlier { target, field }));
                }
            }
            for dep in r.depends_on() {
                if !self.index.contains_key(dep) || dep == &r.id {
                    return Err(at(&r.id, RecordProblem::NoSuchRecord(dep.clone())));
                }
            }
        }
        Ok(())
    }

    /// Records in `seq` order.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Number of records held.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// The record at a position (positions follow `seq` order).
    pub fn get(&self, pos: usize) -> Option<&Record> {
        self.records.get(pos)
    }

    /// The position of the record with this id.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// Positions of the facts of `field`, in `seq` order.
    pub fn facts_of(&self, field: &str) -> &[usize] {
        self.facts_by_field.get(field).map_or(&[], Vec::as_slice)
    }

    /// Every field that some fact sets.
    pub fn fact_fields(&self) -> impl Iterator<Item = &str> {
        self.facts_by_field.keys().map(String::as_str)
    }

    /// The fact fields that meet `field`: `field` itself, the fields above it (`customer`
    /// for `customer.tier`: a fact of one may hold it in its value) and the fields below it (`customer.tier` for `customer`: a fact
    /// of one states a part of it). Each states `field`, or a part of it, in one spelling.
    pub fn fact_fields_meeting<'s>(&'s self, field: &'s str) -> impl Iterator<Item = &'s str> {
        let above = field
            .match_indices('.')
            .filter_map(|(at, _)| field.get(..at))
            .chain(std::iter::once(field))
            .filter_map(|f| {
                self.facts_by_field
                    .get_key_value(f)
                    .map(|(k, _)| k.as_str())
            });
        // The gate asks this for every field of every rule it judges: the bound of the
        // fields below is built only when a fact field goes on from `field` at all (the
        // keys that start with `field` are the ones right after it).
        use std::ops::Bound::{Excluded, Unbounded};
        let goes_on = self
            .facts_by_field
            .range::<str, _>((Excluded(field), Unbounded))
            .next()
            .is_some_and(|(k, _)| k.starts_with(field));
        let below = goes_on
            .then(|| {
                let start = format!("{field}.");
                self.facts_by_field
                    .range(start.clone()..)
                    .map(|(k, _)| k.as_str())
                    .take_while(move |k| k.starts_with(&start))
            })
            .into_iter()
            .flatten();
        above.chain(below)
    }

    /// Positions of the policies whose `supersedes` names the policy at `pos`.
    pub fn revokers_of(&self, pos: usize) -> &[usize] {
        self.revokers.get(&pos).map_or(&[], Vec::as_slice)
    }

    /// Every tool name or glob that a policy scope or an effect of a held record gives
    /// (SPEC 2.3).
    pub fn named_tools(&self) -> BTreeSet<&str> {
        let mut out = BTreeSet::new();
        for r in &self.records {
            match &r.kind {
                Kind::Policy(p) => out.extend(p.scope.iter().map(String::as_str)),
                Kind::Effect(e) => {
                    out.insert(e.tool.as_str());
                }
                _ => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn rec(text: &str) -> Result<Record, RecordError> {
        parse_record(
            &Place::Index(0),
            &parse(text.as_bytes()).unwrap(),
            Limits::default(),
        )
    }

    #[test]
    fn globs() {
        assert!(glob_match("refunds.*", "refunds.create"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "abc"));
        assert!(glob_match("a*b*c", "a-b-b-c"));
        assert!(!glob_match("a*b*c", "a-c"));
        assert!(!glob_match("refunds.*", "refund.create"));
        assert!(glob_match("refunds.create", "refunds.create"));
        assert!(!glob_match("refunds.create", "refunds.created"));
        assert!(!glob_match("ab*ba", "aba"));
    }

    #[test]
    fn named_tells_whether_every_record_giving_a_name_gives_another() {
        let matches = |v: Value| v.as_object().cloned().unwrap();
        let (ls, rm) = (
            matches(serde_json::json!({"command": "ls"})),
            matches(serde_json::json!({"command": "rm"})),
        );
        let mut named = Named::default();
        named.scope(&["bash", "Bash"]);
        named.scope(&["Bash"]);
        named.scope(&["Ed*", "x"]);
        named.effect("run_shell_command", &rm);
        assert_eq!(
            named.iter().collect::<Vec<_>>(),
            ["Bash", "Ed*", "bash", "run_shell_command", "x"]
        );
        assert!(named.always_with("bash", "Bash"));
        // A glob in the same scope covers the tool.
        assert!(named.always_with("x", "Edit"));
        // An effect of a name covers that name: an effect covering the tool with the same
        // `match` must give the tool; one of another `match` replays other calls.
        assert!(!named.always_with("run_shell_command", "Bash"));
        named.effect("Bash", &ls);
        assert!(!named.always_with("run_shell_command", "Bash"));
        named.effect("Bash", &rm);
        assert!(named.always_with("run_shell_command", "Bash"));
        // A second policy giving `bash` alone: not every record binds `Bash` now, and
        // the same from two parts of one input joined.
        let mut second = Named::default();
        second.scope(&["bash"]);
        second.effect("run_shell_command", &ls);
        let mut joined = named.clone();
        joined.append(second.clone());
        named.scope(&["bash"]);
        named.effect("run_shell_command", &ls);
        assert!(!named.always_with("bash", "Bash"));
        assert_eq!(joined, named);
        assert!(named.always_with("run_shell_command", "Bash"));
        assert!(!named.always_with("nothing", "nothing"));
    }

    /// An effect whose `tool` is a glob replays every call of a tool it covers: it is a
    /// twin for that tool, and an effect of a glob binds the tools it covers by itself.
    #[test]
    fn an_effect_of_a_glob_tool_is_a_twin_for_every_tool_it_covers() {
        let rm = serde_json::json!({"command": "rm"})
            .as_object()
            .cloned()
            .unwrap();
        let mut named = Named::default();
        named.effect("run_shell_command", &rm);
        assert!(!named.always_with("run_shell_command", "Bash"));
        named.effect("Ba*", &rm);
        assert!(named.always_with("run_shell_command", "Bash"));
        assert!(!named.always_with("run_shell_command", "Edit"));
        assert!(named.always_with("Ba*", "Bash"));
        assert!(!named.always_with("Ba*", "Edit"));
    }

    #[test]
    fn globs_overlap_exactly() {
        assert!(globs_overlap("refunds.create", "refunds.*"));
        assert!(globs_overlap("refunds.*", "refunds.create"));
        assert!(globs_overlap("*create", "refunds.*"));
        assert!(!globs_overlap("email.send", "refunds.*"));
        assert!(globs_overlap("*", "email.send"));
        assert!(!globs_overlap("deploy.*", "db.*"));
        assert!(!globs_overlap("*.run", "*.stop"));
        assert!(!globs_overlap("a*b", "c*"));
        assert!(globs_overlap("a*", "*b"));
        assert!(globs_overlap("a*a", "*aa*"));
        assert!(!globs_overlap("ab*", "ba*"));
    }

    #[test]
    fn glob_meet_names_a_tool_both_cover() {
        for (a, b, name) in [
            ("deploy.*", "*", "deploy.x"),
            ("*", "deploy.*", "deploy.x"),
            ("*.run", "deploy.*", "deploy.run"),
            ("refunds.create", "*", "refunds.create"),
            ("*", "*", "x"),
            ("a*", "*b", "axb"),
        ] {
            let got = glob_meet(a, b).unwrap();
            assert_eq!(got, name, "{a} {b}");
            assert!(glob_match(a, &got) && glob_match(b, &got), "{a} {b} {got}");
        }
        assert_eq!(glob_meet("deploy.*", "db.*"), None);
        // Past the search bound, two globs are taken to meet (judged, never skipped).
        let long = format!("{}*", "a".repeat(2000));
        let other = format!("{}*", "b".repeat(2000));
        assert_eq!(glob_meet(&long, &other), Some(other.clone()));
    }

    #[test]
    fn glob_meet_agrees_with_brute_force() {
        // Every pair of short patterns over {a, b, *}: an example exists exactly when
        // some name of up to 6 characters over {a, b} matches both.
        let alphabet = ['a', 'b', '*'];
        let mut patterns = vec![String::new()];
        for len in 1..=3 {
            let mut more = Vec::new();
            for p in patterns.iter().filter(|p| p.chars().count() == len - 1) {
                for c in alphabet {
                    more.push(format!("{p}{c}"));
                }
            }
            patterns.extend(more);
        }
        let mut names = vec![String::new()];
        for _ in 0..6 {
            let longer: Vec<String> = names
                .iter()
                .flat_map(|n| [format!("{n}a"), format!("{n}b")])
                .collect();
            names.extend(longer);
        }
        names.sort();
        names.dedup();
        for a in &patterns {
            for b in &patterns {
                let brute = names.iter().any(|n| glob_match(a, n) && glob_match(b, n));
                let meet = glob_meet(a, b);
                assert_eq!(meet.is_some(), brute, "{a:?} {b:?}");
                if let Some(name) = meet {
                    assert!(
                        glob_match(a, &name) && glob_match(b, &name),
                        "{a:?} {b:?} {name:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn misspelt_kinds_are_recognised() {
        for (kind, want) in [
            ("Policy", Some("policy")),
            ("POLICY", Some("policy")),
            ("polcy", Some("policy")),
            ("poilcy", Some("policy")),
            ("facts", Some("fact")),
            ("Fact", Some("fact")),
            ("efect", Some("effect")),
            ("affects", Some("effect")),
            ("chat", None),
            ("chatters", Some("chatter")),
            ("Chatter", Some("chatter")),
            ("summary", None),
            ("main", None),
            ("policy", None),
            ("fact", None),
            ("", None),
            ("a-very-long-kind-name", None),
        ] {
            assert_eq!(misspelt_kind(kind), want, "{kind}");
        }
    }

    #[test]
    fn a_bad_element_of_scope_or_depends_on_is_named_by_its_index() {
        // Each said "`scope` must be a non-empty string", of a key that holds an array.
        let policy = |extra: &str| {
            let text = format!(
                r#"{{"id":"p","seq":1,"kind":"policy","predicate":{{"all":[]}},"effect":"deny",{extra}}}"#
            );
            rec(&text).unwrap_err().to_string()
        };
        assert_eq!(
            policy(r#""scope":["a",5]"#),
            "record `p`: `scope[1]` is `5`: `scope` holds tool names or globs, each a non-empty string"
        );
        assert_eq!(
            policy(r#""scope":[""]"#),
            "record `p`: `scope[0]` is `\"\"`: `scope` holds tool names or globs, each a non-empty string"
        );
        assert_eq!(
            policy(r#""scope":"a","depends_on":["q",{"id":"r"}]"#),
            "record `p`: `depends_on[1]` is `{\"id\":\"r\"}`: `depends_on` holds record ids, each a non-empty string"
        );
        let fact =
            rec(r#"{"id":"f","seq":1,"kind":"fact","field":"a","value":1,"depends_on":[null]}"#);
        assert_eq!(
            fact.unwrap_err().to_string(),
            "record `f`: `depends_on[0]` is `null`: `depends_on` holds record ids, each a non-empty string"
        );
    }

    #[test]
    fn evaluable_kinds_refuse_unknown_keys() {
        let err = rec(r#"{"id":"p","seq":1,"kind":"policy","scope":"x","predicate":{"all":[]},"effect":"deny","supercedes":"q"}"#)
            .unwrap_err();
        assert!(
            err.to_string().contains("unknown key `supercedes`"),
            "{err}"
        );
        assert!(err.to_string().contains("record `p`"), "{err}");
        assert!(rec(r#"{"id":"c","seq":1,"kind":"chatter","whatever":1}"#).is_ok());
        assert!(rec(r#"{"id":"s","seq":1,"kind":"summary","whatever":1}"#).is_ok());
    }

    #[test]
    fn tokens_default_to_a_quarter_of_canonical_bytes() {
        let r = rec(r#"{"id":"c", "seq":1, "kind":"chatter"}"#).unwrap();
        // {"id":"c","kind":"chatter","seq":1} is 35 bytes
        assert_eq!(r.tokens, 9);
        assert_eq!(
            rec(r#"{"id":"c","seq":1,"kind":"chatter","tokens":3}"#)
                .unwrap()
                .tokens,
            3
        );
    }

    #[test]
    fn bad_fields_are_refused() {
        for bad in [
            r#"{"id":"","seq":1,"kind":"chatter"}"#,
            r#"{"id":"a","seq":-1,"kind":"chatter"}"#,
            r#"{"id":"a","seq":1.5,"kind":"chatter"}"#,
            r#"{"id":"a","seq":18446744073709551616,"kind":"chatter"}"#,
            r#"{"id":"a","seq":1}"#,
            r#"{"id":"a","seq":1,"kind":"policy","scope":"x","predicate":{"all":[]},"effect":"maybe"}"#,
            r#"{"id":"a","seq":1,"kind":"policy","scope":[],"predicate":{"all":[]},"effect":"deny"}"#,
            r#"{"id":"a","seq":1,"kind":"fact","field":"x"}"#,
            r#"{"id":"a","seq":1,"kind":"effect","tool":"x","match":[]}"#,
        ] {
            assert!(rec(bad).is_err(), "{bad}");
        }
        assert_eq!(
            rec(r#"{"id":"a","seq":18446744073709551615,"kind":"chatter"}"#)
                .unwrap()
                .seq,
            u64::MAX
        );
    }

    fn store(records: &[&str]) -> Result<Store, RecordError> {
        let rs = records
            .iter()
            .map(|t| rec(t))
            .collect::<Result<Vec<_>, _>>()?;
        Store::new(rs)
    }

    #[test]
    fn the_fact_fields_meeting_a_field_are_those_above_it_and_below_it() {
        let fields = [
            "a", "a!x", "a-b", "a.b", "a.b.c", "a.c", "a/b", "ab", "b", "b.c", "x",
        ];
        let facts: Vec<String> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                format!(r#"{{"id":"f{i}","seq":{i},"kind":"fact","field":"{f}","value":1}}"#)
            })
            .collect();
        let facts: Vec<&str> = facts.iter().map(String::as_str).collect();
        let s = store(&facts).unwrap();
        let meeting = |f: &'static str| s.fact_fields_meeting(f).collect::<Vec<_>>();
        assert_eq!(meeting("a"), ["a", "a.b", "a.b.c", "a.c"]);
        assert_eq!(meeting("a.b"), ["a", "a.b", "a.b.c"]);
        assert_eq!(meeting("b.c.d"), ["b", "b.c"]);
        assert_eq!(meeting("x"), ["x"]);
        assert!(meeting("c").is_empty());
        assert!(meeting("").is_empty());
    }

    #[test]
    fn cross_record_rules() {
        let f1 = r#"{"id":"f1","seq":1,"kind":"fact","field":"x","value":1}"#;
        assert!(
            store(&[
                f1,
                r#"{"id":"f2","seq":2,"kind":"fact","field":"x","value":2,"supersedes":"f1"}"#
            ])
            .is_ok()
        );
        let wrong_field =
            r#"{"id":"f2","seq":2,"kind":"fact","field":"y","value":2,"supersedes":"f1"}"#;
        assert!(store(&[f1, wrong_field]).is_err());
        let later = r#"{"id":"f0","seq":0,"kind":"fact","field":"x","value":2,"supersedes":"f1"}"#;
        assert!(store(&[f1, later]).is_err());
        assert!(store(&[f1, r#"{"id":"f1","seq":2,"kind":"chatter"}"#]).is_err());
        assert!(store(&[f1, r#"{"id":"f9","seq":1,"kind":"chatter"}"#]).is_err());
        let dep = r#"{"id":"d","seq":3,"kind":"fact","field":"z","value":1,"depends_on":["nope"]}"#;
        assert!(store(&[f1, dep]).is_err());
    }

    #[test]
    fn a_refused_record_says_which_and_why_in_its_own_words() {
        let f1 = r#"{"id":"f1","seq":1,"kind":"fact","field":"x","value":1}"#;
        let p1 = r#"{"id":"p1","seq":1,"kind":"policy","scope":"t","predicate":{"all":[]},"effect":"deny"}"#;
        let fact = r#"{"id":"f2","seq":2,"kind":"fact","field":"y","value":2,"supersedes":"f1"}"#;
        let policy = r#"{"id":"p2","seq":2,"kind":"policy","scope":"t","predicate":{"all":[]},"effect":"deny","supersedes":"f1"}"#;
        for (records, want) in [
            (
                [f1, fact],
                "record `f2`: `supersedes` names `f1`, which is not an earlier fact of field `y`",
            ),
            (
                [f1, policy],
                "record `p2`: `supersedes` names `f1`, which is not an earlier policy",
            ),
            (
                [p1, r#"{"id":"c","seq":1,"kind":"chatter"}"#],
                "record `c`: duplicate seq 1 (also on record `p1`)",
            ),
        ] {
            assert_eq!(store(&records).unwrap_err().to_string(), want);
        }
        let err =
            rec(r#"{"id":"e","seq":1,"kind":"effect","tool":"t","match":{},"x":1,"y\u0007":2}"#)
                .unwrap_err();
        assert_eq!(
            err.problem,
            RecordProblem::UnknownKeys {
                keys: vec!["x".into(), "y\u{7}".into()],
                kind: "effect".into(),
                takes: &["tool", "match"],
            }
        );
        assert_eq!(
            err.to_string(),
            "record `e`: unknown key `x`, `y\\u{0007}` (a effect record takes tool, match)"
        );
        let err = rec(r#"{"seq":1,"kind":"chatter"}"#).unwrap_err();
        assert_eq!(err.at, RecordAt::Place(Place::Index(0)));
        assert_eq!(err.to_string(), "records[0]: missing key `id`");
    }
}
