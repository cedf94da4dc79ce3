//! The domain of values a tool's JSON Schema admits (SPEC 5).
//!
//! A schema is compiled once into a [`Schema`] that models `type` (integer apart from
//! number), `properties`, `required`, `enum`, `const`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum` (the draft-4 booleans too),
//! `additionalProperties` and OpenAPI's `nullable: true`. Every other keyword is listed
//! as ignored and read as admitting every value, so the modelled domain always contains
//! the real one: precheck stays sound and is only less precise where a schema says more
//! than this module reads. The module answers the questions precheck asks of a domain:
//! does it admit this value, give any value it admits, and give one value per class of
//! values a predicate can tell apart. It knows nothing about records or views.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::str::FromStr;

use serde_json::{Map, Number, Value};
use thiserror::Error;

use crate::decimal::{Decimal, DecimalError};
use crate::predicate::{JsonKey, json_eq};
use crate::text::clean;

mod regexp;

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
/// Whole numbers only (`5000.0` is one).
const INTEGER: u8 = 4;
/// Every number.
const NUMBER: u8 = 8;
const STRING: u8 = 16;
const ARRAY: u8 = 32;
const OBJECT: u8 = 64;
const ALL: u8 = 127;

/// Keywords that annotate and never constrain: skipped without a note.
const ANNOTATIONS: [&str; 12] = [
    "title",
    "description",
    "default",
    "examples",
    "$schema",
    "$id",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
];

/// One end of a numeric range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// The limit.
    pub value: Decimal,
    /// True for `minimum`/`maximum`, false for the exclusive forms.
    pub inclusive: bool,
}

/// Why a question about a domain was not decided exactly. Every caller treats it as
/// "may bind": sound, never a silent PASS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undecided {
    /// More calls than the bound (`--max-calls`) would have to be tried.
    Bound(usize),
    /// Two fields of one predicate read overlapping params (`a` and `a.b`).
    Overlap(String),
    /// A constant too large to step around exactly.
    Arithmetic(String),
    /// No admitted value distinct from the predicate's constants could be built.
    NoOther(String),
    /// A field with more dots (the second, the most) than precheck tries every spelling
    /// of through keys with dots of their own.
    Spellings(String, usize),
    /// Two tool globs too long to tell exactly whether some name matches both.
    Globs(String, String),
    /// A key the schema requires (the first) that gives a part of a read field (the
    /// second) apart from it: `check` reads the field only where its value holds that
    /// part with the key's value, calls precheck does not build.
    RequiredPart(String, String),
    /// A field that the keys the schema requires give two ways with the values precheck
    /// gives them (`customer` beside `customer.tier`, where `customer` admits no number,
    /// boolean or null): `check` refuses such a call, and precheck does not look for
    /// other values.
    RequiredTwice(String),
    /// A field a predicate reads (or one above or below it) that every call the schema
    /// admits and precheck builds gives two ways, as a key with dots and through nested
    /// objects: precheck tries each spelling's own values, and a call gives both one.
    TwoWays(String),
    /// A field of an effect's `match` (the first) whose path an admitted call may give an
    /// array or a string at (the second, a part of the field; the
    /// third, which of the two an admitted call may give there, one or both in order):
    /// `check` cannot tell whether such a call replays the effect
    /// ([`crate::gate::replay`], [`crate::action::elements_on_path`]).
    Elements(String, String, Vec<crate::predicate::Elements>),
}

impl Undecided {
    /// One line for a report.
    pub fn describe(&self) -> String {
        match self {
            Undecided::Bound(n) => {
                format!("telling its reachable calls apart takes more than {n} calls (--max-calls)")
            }
            Undecided::Overlap(f) => format!(
                "it reads `{}` both as a whole and through a dotted path, which precheck does not split",
                clean(f)
            ),
            Undecided::Arithmetic(c) => {
                format!("the constant `{c}` is too large to step around exactly")
            }
            Undecided::NoOther(f) => format!(
                "no value of `{}` other than the predicate's constants could be built from the schema",
                clean(f)
            ),
            Undecided::Spellings(f, most) => format!(
                "it reads `{}`, a field of more than {most} dots, and precheck does not try every way a call can spell it through keys with dots",
                clean(f)
            ),
            Undecided::Elements(f, at, what) => format!(
                "a call may give `{}` {}, which the field `{}` passes through, and check cannot tell whether such a call replays it",
                clean(at),
                what.iter().map(|w| w.a()).collect::<Vec<_>>().join(" or "),
                clean(f)
            ),
            Undecided::RequiredPart(key, field) => format!(
                "the schema requires `{}`, which gives a part of the field `{}` apart from it, and precheck does not build the calls whose `{}` holds that part with the same value",
                clean(key),
                clean(field),
                clean(field)
            ),
            Undecided::RequiredTwice(field) => format!(
                "the keys the schema requires give `{}` two ways with the values precheck samples for them, which check refuses, and precheck does not look for other values",
                clean(field)
            ),
            Undecided::TwoWays(field) => format!(
                "every call that gives `{}` gives it two ways, as a key with dots and through nested objects, and precheck does not build the calls that give it one value both ways",
                clean(field)
            ),
            Undecided::Globs(a, b) => format!(
                "the globs {} and {} are too long to tell whether some tool name matches both",
                clean(a),
                clean(b)
            ),
        }
    }
}

/// What a predicate compares one field against: every constant it mentions, and whether
/// it orders numbers or strings (then the gaps between constants are classes too).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Probe {
    /// Every right-hand value (members of `in`/`not_in` arrays one by one).
    pub constants: Vec<Value>,
    /// Some `lt lte gt gte` compares this field with a number.
    pub orders_numbers: bool,
    /// Some `lt lte gt gte` compares this field with a string.
    pub orders_strings: bool,
    /// Some view's facts give this field a value (precheck sets it from the store). A
    /// call that leaves the field out is judged on that value; without one, leaving it
    /// out and giving a part of it apart (`c.part`) both leave it UNKNOWN.
    pub fact: bool,
}

/// A compiled schema: the set of JSON values it admits, as far as the modelled keywords
/// say. `Schema::any()` admits everything.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    types: u8,
    members: Option<Members>,
    lower: Option<Bound>,
    upper: Option<Bound>,
    properties: BTreeMap<String, Schema>,
    required: BTreeSet<String>,
    /// The schema of keys not in `properties`; `None` admits any value.
    additional: Option<Box<Schema>>,
}

static ANY: Schema = Schema {
    types: ALL,
    members: None,
    lower: None,
    upper: None,
    properties: BTreeMap::new(),
    required: BTreeSet::new(),
    additional: None,
};

/// The schema a key of an object gets, and whether the key must be there.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    /// The schema of the key's value.
    pub schema: &'a Schema,
    /// True when `required` lists the key.
    pub required: bool,
}

impl Schema {
    /// Admits every value (no schema, or `true`).
    pub fn any() -> Schema {
        ANY.clone()
    }

    /// Admits nothing (`false`).
    pub fn never() -> Schema {
        Schema {
            types: 0,
            ..Schema::any()
        }
    }

    /// Compiles a schema. Keywords it does not model are added to `ignored` and widen the
    /// domain; a modelled keyword with a malformed value is an error naming its path.
    pub fn compile(value: &Value, ignored: &mut BTreeSet<String>) -> Result<Schema, SchemaError> {
        compile_at(value, "", ignored)
    }

    /// True when the domain holds `value`.
    pub fn admits(&self, value: &Value) -> bool {
        if self.types == 0 {
            return false;
        }
        if let Some(members) = &self.members
            && !members.contains(value)
        {
            return false;
        }
        match value {
            Value::Null => self.types & NULL != 0,
            Value::Bool(_) => self.types & BOOLEAN != 0,
            Value::Number(n) => match Decimal::parse(n.as_str()) {
                Ok(d) => self.admits_number(&d),
                // INVARIANT: input numbers are checked at load; an unreadable one widens.
                Err(_) => true,
            },
            Value::String(_) => self.types & STRING != 0,
            Value::Array(_) => self.types & ARRAY != 0,
            Value::Object(map) => {
                self.types & OBJECT != 0
                    && self.required.iter().all(|k| map.contains_key(k))
                    && map.iter().all(|(k, v)| self.slot(k).schema.admits(v))
            }
        }
    }

    fn admits_number(&self, d: &Decimal) -> bool {
        let typed = self.types & NUMBER != 0 || (self.types & INTEGER != 0 && d.is_integer());
        typed
            && self.lower.as_ref().is_none_or(|b| above(d, b))
            && self.upper.as_ref().is_none_or(|b| below(d, b))
    }

    /// The same domain restricted to objects (a tool's params are always one).
    pub fn objects_only(mut self) -> Schema {
        self.types &= OBJECT;
        self
    }

    /// True when some admitted value is an object.
    pub fn admits_objects(&self) -> bool {
        self.types & OBJECT != 0
    }

    /// The schema of `key` inside an admitted object.
    pub fn slot(&self, key: &str) -> Slot<'_> {
        let schema = self
            .properties
            .get(key)
            .or(self.additional.as_deref())
            .unwrap_or(&ANY);
        Slot {
            schema,
            required: self.required.contains(key),
        }
    }

    /// Keys every admitted object must have.
    pub fn required(&self) -> impl Iterator<Item = &str> {
        self.required.iter().map(String::as_str)
    }

    /// Does an admitted value require the last key of the nested `path` in the object at
    /// the path before it? (`["a", "b"]`: `a`'s schema requires `b`.)
    pub fn requires_at(&self, path: &[&str]) -> bool {
        match path {
            [] => false,
            [key] => self.required.contains(*key),
            [first, rest @ ..] => self.slot(first).schema.requires_at(rest),
        }
    }

    /// Keys `properties` names, in key order.
    pub fn property_names(&self) -> impl Iterator<Item = &str> {
        self.properties.keys().map(String::as_str)
    }

    /// The admitted values, when `enum`/`const` make the domain a finite list.
    pub fn finite(&self) -> Option<Vec<Value>> {
        let members = self.members.as_ref()?;
        let mut out: Vec<Value> = Vec::new();
        let mut seen = HashSet::new();
        for m in &members.values {
            if self.admits(m) && seen.insert(JsonKey::of(m)) {
                out.push(m.clone());
            }
        }
        Some(out)
    }

    /// Some value the domain admits, or `None` when it admits nothing.
    pub fn sample(&self) -> Result<Option<Value>, Undecided> {
        if let Some(values) = self.finite() {
            return Ok(values.into_iter().next());
        }
        let objecty = !self.properties.is_empty() || !self.required.is_empty();
        if objecty
            && self.types & OBJECT != 0
            && let Some(obj) = self.sample_object()?
        {
            return Ok(Some(Value::Object(obj)));
        }
        if let Some(v) = self.sample_scalar(ALL)? {
            return Ok(Some(v));
        }
        if self.types & OBJECT != 0 {
            return Ok(self.sample_object()?.map(Value::Object));
        }
        Ok(None)
    }

    /// Some admitted number, boolean or null: it lacks every nested path, so that a
    /// field below it resolves from facts.
    pub fn sample_lacking(&self) -> Result<Option<Value>, Undecided> {
        self.sample_non_object(NULL | BOOLEAN | INTEGER | NUMBER)
    }

    /// Some admitted string or array: a field whose path meets it is UNKNOWN in the
    /// params and no fact stands in ([`crate::action::elements_on_path`]).
    pub fn sample_elements(&self) -> Result<Option<Value>, Undecided> {
        self.sample_non_object(STRING | ARRAY)
    }

    /// Some admitted value of one of `types` (no object).
    fn sample_non_object(&self, types: u8) -> Result<Option<Value>, Undecided> {
        if let Some(values) = self.finite() {
            return Ok(values
                .into_iter()
                .find(|v| type_bit(v) & types & !OBJECT != 0));
        }
        self.sample_scalar(types)
    }

    /// Some admitted value of one of `types`, not an object, in a fixed order of types.
    fn sample_scalar(&self, types: u8) -> Result<Option<Value>, Undecided> {
        let types = self.types & types;
        if types & STRING != 0 {
            return Ok(Some(Value::String(String::new())));
        }
        if types & (INTEGER | NUMBER) != 0 {
            let zero = Decimal::zero();
            if self.admits_number(&zero) {
                return Ok(Some(number_value(&zero)?));
            }
            if let Some(d) = self.number_in(None, None)? {
                return Ok(Some(number_value(&d)?));
            }
        }
        if types & BOOLEAN != 0 {
            return Ok(Some(Value::Bool(false)));
        }
        if types & NULL != 0 {
            return Ok(Some(Value::Null));
        }
        if types & ARRAY != 0 {
            return Ok(Some(Value::Array(Vec::new())));
        }
        Ok(None)
    }

    /// The smallest admitted object: each required key filled with some admitted value.
    pub fn sample_object(&self) -> Result<Option<Map<String, Value>>, Undecided> {
        if self.types & OBJECT == 0 {
            return Ok(None);
        }
        if let Some(values) = self.finite() {
            return Ok(values.into_iter().find_map(|v| match v {
                Value::Object(m) => Some(m),
                _ => None,
            }));
        }
        let mut out = Map::new();
        for key in &self.required {
            match self.slot(key).schema.sample()? {
                Some(v) => {
                    out.insert(key.clone(), v);
                }
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// Can an admitted value lack the nested path? (`true` when unsure.)
    pub fn may_lack(&self, path: &[&str]) -> bool {
        let [first, rest @ ..] = path else {
            return false;
        };
        if self.types == 0 {
            return false;
        }
        if let Some(values) = self.finite() {
            return values.iter().any(|v| lookup(v, path).is_none());
        }
        if self.types & !OBJECT != 0 {
            return true;
        }
        let slot = self.slot(first);
        !slot.required || (!rest.is_empty() && slot.schema.may_lack(rest))
    }

    /// Can an admitted value have the nested path? (`true` when unsure.)
    pub fn may_have(&self, path: &[&str]) -> bool {
        let [first, rest @ ..] = path else {
            return self.types != 0;
        };
        if let Some(values) = self.finite() {
            return values.iter().any(|v| lookup(v, path).is_some());
        }
        self.types & OBJECT != 0 && self.slot(first).schema.may_have(rest)
    }

    /// Can an admitted value hold an array at the nested path? (`true` when unsure.)
    pub fn may_hold_array(&self, path: &[&str]) -> bool {
        self.may_hold(path, ARRAY, Value::is_array)
    }

    /// Can an admitted value hold a string at the nested path? (`true` when unsure.)
    pub fn may_hold_string(&self, path: &[&str]) -> bool {
        self.may_hold(path, STRING, Value::is_string)
    }

    /// Can an admitted value hold a value of type `types` (`is`) at the nested path?
    fn may_hold(&self, path: &[&str], types: u8, is: fn(&Value) -> bool) -> bool {
        if let Some(values) = self.finite() {
            return values.iter().any(|v| lookup(v, path).is_some_and(is));
        }
        let [first, rest @ ..] = path else {
            return self.types & types != 0;
        };
        self.types & OBJECT != 0 && self.slot(first).schema.may_hold(rest, types, is)
    }

    /// Does the schema admit a value holding `value` at the nested path? (Every object on
    /// the way admitted, the last key's schema admitting `value`; other keys and
    /// `required` are not looked at, so this may say yes where no admitted value has it.)
    pub fn admits_at(&self, path: &[&str], value: &Value) -> bool {
        let [first, rest @ ..] = path else {
            return self.admits(value);
        };
        self.types & OBJECT != 0 && self.slot(first).schema.admits_at(rest, value)
    }

    /// Does an admitted value have the nested path with any value at all there? (Every
    /// object on the way admitted, the last key's schema admitting every value.)
    pub fn admits_any_at(&self, path: &[&str]) -> bool {
        let [first, rest @ ..] = path else {
            return self.types == ALL
                && self.members.is_none()
                && self.lower.is_none()
                && self.upper.is_none()
                && self.properties.is_empty()
                && self.additional.is_none();
        };
        self.finite().is_none()
            && self.types & OBJECT != 0
            && self.slot(first).schema.admits_any_at(rest)
    }

    /// One admitted value per class of values that `probe`'s comparisons can tell apart
    /// (SPEC 2.2): each constant, a value in each gap between ordered constants and
    /// beyond them, and one value of every other admitted type. Two values of one class
    /// give every comparison on the field the same result, type mismatches included, so
    /// trying these is trying every value the schema admits.
    pub fn reps(&self, field: &str, probe: &Probe) -> Result<Vec<Value>, Undecided> {
        if let Some(values) = self.finite() {
            return Ok(values);
        }
        // One group per admitted type; the types the constants have come first, so a
        // witness looks like what the rule talks about.
        let mut groups: Vec<(usize, Vec<Value>)> = Vec::new();
        let rank = |bits: u8, default: usize| {
            probe
                .constants
                .iter()
                .position(|c| type_bit(c) & bits != 0)
                .unwrap_or(probe.constants.len() + default)
        };
        if self.types & (INTEGER | NUMBER) != 0 {
            let mut out = Vec::new();
            self.number_reps(probe, &mut out)?;
            groups.push((rank(INTEGER | NUMBER, 0), out));
        }
        if self.types & STRING != 0 {
            let mut out = Vec::new();
            string_reps(probe, &mut out);
            groups.push((rank(STRING, 1), out));
        }
        if self.types & BOOLEAN != 0 {
            let out = if probe.constants.iter().any(Value::is_boolean) {
                vec![Value::Bool(true), Value::Bool(false)]
            } else {
                vec![Value::Bool(true)]
            };
            groups.push((rank(BOOLEAN, 2), out));
        }
        if self.types & NULL != 0 {
            groups.push((rank(NULL, 3), vec![Value::Null]));
        }
        if self.types & ARRAY != 0 {
            let mut out = Vec::new();
            let arrays: Vec<&Value> = probe.constants.iter().filter(|c| c.is_array()).collect();
            push_distinct(&mut out, arrays.iter().copied().filter(|c| self.admits(c)));
            // n + 1 arrays of nulls of different lengths: one differs from all n constants.
            let taken: HashSet<JsonKey> = arrays.iter().map(|c| JsonKey::of(c)).collect();
            let other = (0..=arrays.len())
                .map(|n| Value::Array(vec![Value::Null; n]))
                .find(|a| !taken.contains(&JsonKey::of(a)));
            out.extend(other);
            groups.push((rank(ARRAY, 4), out));
        }
        if self.types & OBJECT != 0 {
            let mut out = Vec::new();
            let objects: Vec<&Value> = probe.constants.iter().filter(|c| c.is_object()).collect();
            push_distinct(&mut out, objects.iter().copied().filter(|c| self.admits(c)));
            if let Some(other) = self.other_object(field, &objects)? {
                out.push(other);
            }
            groups.push((rank(OBJECT, 5), out));
        }
        groups.sort_by_key(|(r, _)| *r);
        Ok(groups.into_iter().flat_map(|(_, g)| g).collect())
    }

    fn number_reps(&self, probe: &Probe, out: &mut Vec<Value>) -> Result<(), Undecided> {
        let mut consts: Vec<(Decimal, &Value)> = probe
            .constants
            .iter()
            .filter_map(|v| match v {
                Value::Number(n) => Decimal::parse(n.as_str()).ok().map(|d| (d, v)),
                _ => None,
            })
            .collect();
        consts.sort_by(|a, b| a.0.cmp(&b.0));
        consts.dedup_by(|a, b| a.0 == b.0);
        let mut gap_found = false;
        for i in 0..=consts.len() {
            let prev = i.checked_sub(1).and_then(|j| consts.get(j));
            let next = consts.get(i);
            if probe.orders_numbers || !gap_found {
                let lower = prev.map(|(d, _)| Bound {
                    value: d.clone(),
                    inclusive: false,
                });
                let upper = next.map(|(d, _)| Bound {
                    value: d.clone(),
                    inclusive: false,
                });
                if let Some(d) = self.number_in(lower.as_ref(), upper.as_ref())? {
                    out.push(number_value(&d)?);
                    gap_found = true;
                }
            }
            if let Some((d, v)) = next
                && self.admits_number(d)
            {
                out.push((*v).clone());
            }
        }
        Ok(())
    }

    /// An admitted number strictly inside `(lower, upper)` intersected with this domain:
    /// for whole numbers the first one above the lower end (5001 above 5000), else one
    /// above the lower end, the exact midpoint, or the bound itself where it is included.
    fn number_in(
        &self,
        lower: Option<&Bound>,
        upper: Option<&Bound>,
    ) -> Result<Option<Decimal>, Undecided> {
        let lower = tighter(lower, self.lower.as_ref(), true);
        let upper = tighter(upper, self.upper.as_ref(), false);
        let integer = self.types & NUMBER == 0;
        let too_big = |b: &Bound| Undecided::Arithmetic(b.value.to_literal());
        let one = Decimal::one();
        if integer {
            let lo = match &lower {
                None => None,
                Some(b) if b.inclusive => Some(b.value.ceil().ok_or_else(|| too_big(b))?),
                Some(b) => Some(
                    b.value
                        .floor()
                        .and_then(|f| f.checked_add(&one))
                        .ok_or_else(|| too_big(b))?,
                ),
            };
            let hi = match &upper {
                None => None,
                Some(b) if b.inclusive => Some(b.value.floor().ok_or_else(|| too_big(b))?),
                Some(b) => Some(
                    b.value
                        .ceil()
                        .and_then(|c| c.checked_sub(&one))
                        .ok_or_else(|| too_big(b))?,
                ),
            };
            return Ok(match (lo, hi) {
                (Some(l), Some(h)) => (l <= h).then_some(l),
                (Some(l), None) => Some(l),
                (None, Some(h)) => Some(h),
                (None, None) => Some(Decimal::zero()),
            });
        }
        let inside = |d: &Decimal| {
            lower.as_ref().is_none_or(|b| above(d, b)) && upper.as_ref().is_none_or(|b| below(d, b))
        };
        Ok(match (&lower, &upper) {
            (None, None) => Some(Decimal::zero()),
            (Some(l), _) if l.inclusive => inside(&l.value).then(|| l.value.clone()),
            (Some(l), None) => Some(l.value.checked_add(&one).ok_or_else(|| too_big(l))?),
            (None, Some(u)) if u.inclusive => Some(u.value.clone()),
            (None, Some(u)) => Some(u.value.checked_sub(&one).ok_or_else(|| too_big(u))?),
            (Some(l), Some(u)) => {
                if l.value >= u.value {
                    (u.inclusive && inside(&u.value)).then(|| u.value.clone())
                } else {
                    match l.value.checked_add(&one).filter(|d| inside(d)) {
                        Some(d) => Some(d),
                        None if u.inclusive => Some(u.value.clone()),
                        None => Some(l.value.midpoint(&u.value).ok_or_else(|| too_big(l))?),
                    }
                }
            }
        })
    }

    /// An admitted object equal to none of `constants`.
    fn other_object(&self, field: &str, constants: &[&Value]) -> Result<Option<Value>, Undecided> {
        let Some(base) = self.sample_object()? else {
            return Ok(None);
        };
        let taken: HashSet<JsonKey> = constants.iter().map(|c| JsonKey::of(c)).collect();
        let differs = |v: &Value| !taken.contains(&JsonKey::of(v));
        let candidate = Value::Object(base.clone());
        if differs(&candidate) {
            return Ok(Some(candidate));
        }
        // n + 1 objects that differ in one extra key: one differs from all n constants.
        for i in 0..=constants.len() {
            let key = format!("_{i}");
            if base.contains_key(&key) {
                continue;
            }
            let Some(v) = self.slot(&key).schema.sample()? else {
                break;
            };
            let mut obj = base.clone();
            obj.insert(key, v);
            let candidate = Value::Object(obj);
            if differs(&candidate) && self.admits(&candidate) {
                return Ok(Some(candidate));
            }
        }
        Err(Undecided::NoOther(field.to_string()))
    }
}

/// The type bit of a value (any number counts as both integer and number).
fn type_bit(v: &Value) -> u8 {
    match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Number(_) => INTEGER | NUMBER,
        Value::String(_) => STRING,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
    }
}

fn push_distinct<'a>(out: &mut Vec<Value>, values: impl Iterator<Item = &'a Value>) {
    let mut seen: HashSet<JsonKey> = out.iter().map(JsonKey::of).collect();
    for v in values {
        if seen.insert(JsonKey::of(v)) {
            out.push(v.clone());
        }
    }
}

fn above(d: &Decimal, b: &Bound) -> bool {
    if b.inclusive {
        *d >= b.value
    } else {
        *d > b.value
    }
}

fn below(d: &Decimal, b: &Bound) -> bool {
    if b.inclusive {
        *d <= b.value
    } else {
        *d < b.value
    }
}

/// The tighter of two lower (`lower = true`) or upper bounds; at a tie the exclusive one.
fn tighter(a: Option<&Bound>, b: Option<&Bound>, lower: bool) -> Option<Bound> {
    match (a, b) {
        (None, None) => None,
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (Some(x), Some(y)) => {
            let order = x.value.cmp(&y.value);
            let pick_x = if lower { order.is_gt() } else { order.is_lt() };
            Some(if order.is_eq() {
                Bound {
                    value: x.value.clone(),
                    inclusive: x.inclusive && y.inclusive,
                }
            } else if pick_x {
                x.clone()
            } else {
                y.clone()
            })
        }
    }
}

/// A decimal as a JSON number value.
fn number_value(d: &Decimal) -> Result<Value, Undecided> {
    let literal = d.to_literal();
    Number::from_str(&literal)
        .map(Value::Number)
        .map_err(|_| Undecided::Arithmetic(literal))
}

/// Follows a nested path through objects.
fn lookup<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(value, |here, key| here.as_object()?.get(*key))
}

fn string_reps(probe: &Probe, out: &mut Vec<Value>) {
    let consts: BTreeSet<&str> = probe.constants.iter().filter_map(Value::as_str).collect();
    if probe.orders_strings {
        let sorted: Vec<&str> = consts.iter().copied().collect();
        for i in 0..=sorted.len() {
            let prev = i.checked_sub(1).and_then(|j| sorted.get(j)).copied();
            let next = sorted.get(i).copied();
            if let Some(s) = between(prev, next) {
                out.push(Value::String(s));
            }
            if let Some(s) = next {
                out.push(Value::String(s.to_string()));
            }
        }
    } else {
        out.extend(consts.iter().map(|s| Value::String((*s).to_string())));
        // n + 1 distinct candidates: one differs from all n constants.
        let other = std::iter::once(String::new())
            .chain((0..consts.len()).map(|i| format!("x{i}")))
            .find(|c| !consts.contains(c.as_str()));
        out.extend(other.map(Value::String));
    }
}

/// A string strictly between `lo` and `hi` in code point order (either end open), or
/// `None` when there is none. `lo + "\0"` (or `""` with no lower end) is in the gap
/// whenever the gap is not empty, so the search is exact; the other candidates are
/// tried first because they read better in a witness.
fn between(lo: Option<&str>, hi: Option<&str>) -> Option<String> {
    let step = |s: &str, up: bool| -> Option<String> {
        let mut chars: Vec<char> = s.chars().collect();
        let last = chars.pop()?;
        let code = u32::from(last);
        let next = if up {
            code.checked_add(1).and_then(char::from_u32)
        } else {
            code.checked_sub(1).and_then(char::from_u32)
        }?;
        chars.push(next);
        Some(chars.into_iter().collect())
    };
    let candidates = [
        lo.and_then(|l| step(l, true)),
        hi.and_then(|h| step(h, false)),
        lo.map(|l| format!("{l}0")),
        lo.map(|l| format!("{l}\u{0}")),
        Some(String::new()),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|c| lo.is_none_or(|l| l < c.as_str()) && hi.is_none_or(|h| c.as_str() < h))
}

/// A modelled keyword with a malformed value, and where it is in the schema.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{at}: {problem}")]
pub struct SchemaError {
    /// A JSON-pointer-like path, e.g. `/properties/n/type` (`/` for the whole schema).
    pub at: String,
    /// What is wrong there.
    pub problem: SchemaProblem,
}

/// What is wrong with a schema node or one of its keywords.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SchemaProblem {
    /// A node that is neither an object nor a boolean.
    #[error("a schema must be an object or a boolean")]
    NotSchema,
    /// A `type` naming no JSON type: the name as given.
    #[error(
        "unknown type {} (null, boolean, integer, number, string, array, object)",
        crate::json::json_text(.0)
    )]
    UnknownType(Value),
    /// A type spelt as the Gemini API's `Type` enum spells it (`NUMBER`): the name as
    /// given, and JSON Schema's spelling. Gemini CLI 0.61.0 hands a tool's schema to Ajv,
    /// which cannot compile one with such a type, and then checks no call against it:
    /// every call runs. Read as the lowercase type, the schema would admit fewer calls
    /// than the harness runs; read as admitting anything, it would quietly lose what the
    /// user wrote. So it is refused, and the message says both fixes.
    #[error(
        "type {} is how the Gemini API spells \"{}\", and JSON Schema does not read it: Gemini CLI checks no call against a schema with it (its validator cannot compile the schema, so every call runs, whatever the schema says); write \"{}\" in the tool's own schema and here, or give the tool without a schema",
        crate::json::json_text(.0),
        .1,
        .1
    )]
    GeminiType(Value, &'static str),
    /// An `enum` that is not an array.
    #[error("`enum` must be an array")]
    Enum,
    /// A bound (`minimum`, `exclusiveMaximum`...) that is not a number: the keyword.
    #[error("`{0}` must be a number")]
    NotNumber(String),
    /// A bound whose number cannot be read exactly.
    #[error(transparent)]
    Number(#[from] DecimalError),
    /// `properties` that is not an object.
    #[error("`properties` must be an object of schemas")]
    Properties,
    /// `required` that is not an array of names.
    #[error("`required` must be an array of names")]
    Required,
    /// `nullable` that is not a boolean.
    #[error("`nullable` must be a boolean")]
    Nullable,
}

fn compile_at(
    value: &Value,
    path: &str,
    ignored: &mut BTreeSet<String>,
) -> Result<Schema, SchemaError> {
    let here = |key: &str| format!("{path}/{}", clean(key));
    let fail = |at: &str, problem| SchemaError {
        at: at.to_string(),
        problem,
    };
    let obj = match value {
        Value::Bool(true) => return Ok(Schema::any()),
        Value::Bool(false) => return Ok(Schema::never()),
        Value::Object(obj) => obj,
        _ => {
            let at = if path.is_empty() { "/" } else { path };
            return Err(fail(at, SchemaProblem::NotSchema));
        }
    };
    if obj.contains_key("$ref") {
        // Beside `$ref`, drafts 4 to 7 ignore every other keyword: read the node as
        // admitting anything rather than guess what the reference says.
        ignored.insert("$ref".to_string());
        return Ok(Schema::any());
    }
    let mut s = Schema::any();
    let mut draft4_exclusive = (false, false);
    let mut nullable = false;
    for (key, v) in obj {
        let at = here(key);
        match key.as_str() {
            "type" => s.types = parse_types(v, &at)?,
            "enum" => {
                let Value::Array(items) = v else {
                    return Err(fail(&at, SchemaProblem::Enum));
                };
                s.members = Some(Members::meet(s.members.take(), as_sent_too(items)));
            }
            "const" => {
                let items = as_sent_too(std::slice::from_ref(v));
                s.members = Some(Members::meet(s.members.take(), items));
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                let lower = matches!(key.as_str(), "minimum" | "exclusiveMinimum");
                let inclusive = matches!(key.as_str(), "minimum" | "maximum");
                match v {
                    Value::Bool(flag) if !inclusive => {
                        if lower {
                            draft4_exclusive.0 = *flag;
                        } else {
                            draft4_exclusive.1 = *flag;
                        }
                    }
                    Value::Number(n) => {
                        let mut value =
                            Decimal::parse(n.as_str()).map_err(|e| fail(&at, e.into()))?;
                        // A harness in JavaScript reads the bound as the nearest double
                        // (5000.9999999999999999 is 5001): take whichever admits more.
                        if let Some(sent) = as_sent(n)
                            && (if lower { sent < value } else { sent > value })
                        {
                            value = sent;
                        }
                        let b = Bound { value, inclusive };
                        if lower {
                            s.lower = tighter(s.lower.as_ref(), Some(&b), true);
                        } else {
                            s.upper = tighter(s.upper.as_ref(), Some(&b), false);
                        }
                    }
                    _ => return Err(fail(&at, SchemaProblem::NotNumber(key.clone()))),
                }
            }
            "properties" => {
                let Value::Object(props) = v else {
                    return Err(fail(&at, SchemaProblem::Properties));
                };
                for (name, sub) in props {
                    if name == "__proto__" {
                        // Ajv skips this name in `properties` (allSchemaProperties), so
                        // a `__proto__` key in params meets `additionalProperties`.
                        ignored.insert(format!("properties/{name}"));
                        continue;
                    }
                    let sub_path = format!("{at}/{}", clean(name));
                    s.properties
                        .insert(name.clone(), compile_at(sub, &sub_path, ignored)?);
                }
            }
            "required" => {
                let Value::Array(items) = v else {
                    return Err(fail(&at, SchemaProblem::Required));
                };
                for item in items {
                    let Value::String(name) = item else {
                        return Err(fail(&at, SchemaProblem::Required));
                    };
                    if !unrequired(name) {
                        s.required.insert(name.clone());
                    }
                }
            }
            "additionalProperties" => {
                s.additional = match v {
                    Value::Bool(true) => None,
                    other => Some(Box::new(compile_at(other, &at, ignored)?)),
                };
            }
            "nullable" => match v {
                Value::Bool(b) => nullable = *b,
                _ => return Err(fail(&at, SchemaProblem::Nullable)),
            },
            k if ANNOTATIONS.contains(&k) => {}
            other => {
                ignored.insert(other.to_string());
            }
        }
    }
    if draft4_exclusive.0
        && let Some(b) = &mut s.lower
    {
        b.inclusive = false;
    }
    if draft4_exclusive.1
        && let Some(b) = &mut s.upper
    {
        b.inclusive = false;
    }
    if nullable {
        // OpenAPI's `nullable: true` admits null; JSON Schema ignores the keyword.
        // Admitting null is right under either reading's superset.
        s.types |= NULL;
        if let Some(m) = &mut s.members {
            m.push(Value::Null);
        }
    }
    if obj.contains_key("patternProperties") {
        // Keys matching a pattern are allowed even with `additionalProperties: false`;
        // patterns are not modelled, so every key is.
        s.additional = None;
    }
    Ok(s)
}

/// The parameter Gemini CLI 0.61.0 adds to every object schema of a tool.
pub const WAIT_FOR_PREVIOUS: &str = "wait_for_previous";

/// The schema Gemini CLI 0.61.0 checks a tool's calls against: for a schema whose `type`
/// is `"object"` and whose `properties` is absent or an object, the same with a boolean
/// property `wait_for_previous` added (over any of that name), as its
/// `addWaitForPreviousParameter` does; any other schema as it is.
pub fn as_checked(schema: &Value) -> std::borrow::Cow<'_, Value> {
    use std::borrow::Cow;
    let Value::Object(obj) = schema else {
        return Cow::Borrowed(schema);
    };
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Cow::Borrowed(schema);
    }
    let mut props = match obj.get("properties") {
        None => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Cow::Borrowed(schema),
    };
    props.insert(
        WAIT_FOR_PREVIOUS.to_string(),
        serde_json::json!({"type": "boolean"}),
    );
    let mut checked = obj.clone();
    checked.insert("properties".to_string(), Value::Object(props));
    Cow::Owned(Value::Object(checked))
}

/// The names every JavaScript object has through its prototype (`{}.constructor` is a
/// function, not `undefined`).
const INHERITED: [&str; 12] = [
    "constructor",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "toString",
    "valueOf",
    "__proto__",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
];

/// True for a `required` name that Gemini CLI's Ajv finds in every params object, so that
/// an object without the key passes: Ajv tests `params.name === undefined`, and an
/// inherited name is never `undefined`; the empty name sets the missing name to `""`,
/// which its generated test reads as false.
fn unrequired(name: &str) -> bool {
    name.is_empty() || INHERITED.contains(&name)
}

/// The `$schema` values Gemini CLI 0.61.0's validator compiles: Ajv's default (draft-07),
/// and Ajv2020 for exactly the 2020-12 URL. Any other `$schema` it cannot compile.
const VALIDATOR_DIALECTS: [&str; 3] = [
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft/2020-12/schema",
];

/// Keywords whose value draft-07's meta-schema wants a non-negative integer.
const COUNTS: [&str; 8] = [
    "maxContains",
    "minContains",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
];

/// Why the validator Gemini CLI 0.61.0 checks a tool call with (Ajv, `SchemaValidator`)
/// checks no call against this params schema, or `None` where it does (as far as this
/// function knows). Where Ajv cannot compile a schema, Gemini CLI logs "Skipping
/// parameter validation" and runs every call, whatever the rest of the schema says: one
/// bad keyword anywhere voids all of it. Read as modelled, the schema would admit fewer
/// calls than the harness runs, so the caller reads it as admitting any params. The cases
/// are those of Ajv's meta-schema and compiler that a schema precheck otherwise reads: an
/// unknown `$schema`, draft 4's boolean `exclusiveMinimum`/`exclusiveMaximum`, an empty or
/// repeating `enum`, `type` or `required`, `nullable` without `type` or `false` beside a
/// `type` that admits null, a `$ref` that does not resolve to a node of the schema or
/// leads back to itself, an `$anchor` that is no name or names two nodes, a count below
/// zero or not whole, `multipleOf` not above zero, a subschema that is neither an object
/// nor a boolean, an annotation of another type than the meta-schema's (`description: 5`,
/// `format: 5`), a `pattern` (or a key of `patternProperties`) that is no JavaScript
/// regular expression, or may not be one in some engine (see [`regexp`]); each in the
/// schema as written or as Gemini CLI rewrites an MCP tool's ([`gemini_mcp_rewrite`]).
/// `declared` is the schema as the tool declares it. And where it compiles but checks no
/// call or only the first: a schema of `false`
/// (`SchemaValidator` takes a falsy schema for none), an `$async` one (its answer is a
/// promise), one with an `$id` (compiled afresh for each call in one validator).
pub fn validator_skips(declared: &Value) -> Option<String> {
    // Gemini CLI checks a call against the schema with its own parameter added
    // ([`as_checked`]), and an MCP tool's call against its schema as rewritten too: a
    // schema that compiles only unrewritten (or only rewritten) is skipped for some tools.
    let checked = as_checked(declared);
    let root = checked.as_ref();
    let rewritten = gemini_mcp_rewrite(root);
    skips(root).or_else(|| {
        let why = (rewritten != *root).then(|| skips(&rewritten))??;
        Some(format!("{why}, once it has rewritten {GEMINI_MCP_REWRITE}"))
    })
}

/// How Gemini CLI rewrites an MCP tool's schema, for a message.
const GEMINI_MCP_REWRITE: &str = "each `type` of `\"null\"` and one other type as that type and `nullable: true`, as it does an MCP tool's schema, `enum` and `const` members and `dependencies` lists included";

/// A value as Gemini CLI rewrites an MCP tool's `inputSchema` before it checks any call
/// against it (0.61.0, `discoverTools`): at every depth, an object whose `type` is a list
/// of two, `"null"` and a string, takes that string as `type` and `nullable: true`. It
/// rewrites any such object, a member of an `enum` or a `const` too, and a `dependencies`
/// list for a property named `type`.
fn gemini_mcp_rewrite(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(gemini_mcp_rewrite).collect()),
        Value::Object(map) => {
            let mut out: Map<String, Value> = (map.iter())
                .map(|(k, v)| (k.clone(), gemini_mcp_rewrite(v)))
                .collect();
            if let Some(Value::Array(types)) = map.get("type")
                && let [first, second] = types.as_slice()
            {
                // JavaScript's `indexOf("null")`: the first `"null"`, and the other one.
                let other = if first == "null" {
                    Some(second)
                } else {
                    (second == "null").then_some(first)
                };
                if let Some(Value::String(other)) = other {
                    out.insert("type".to_string(), Value::String(other.clone()));
                    out.insert("nullable".to_string(), Value::Bool(true));
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// An `$anchor` or `$dynamicAnchor` Ajv refuses: one that names two schemas ("resolves
/// to more than one schema"), or under 2020-12 one that is no name (`^[A-Za-z_][-A-Za-z0-9._]*$`).
/// Read wider: every object of the schema is searched, a member of an `enum` too, and
/// the pattern checked in every dialect.
fn bad_anchor(root: &Value) -> Option<String> {
    let mut seen = HashSet::new();
    let mut stack = vec![root];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for key in ["$anchor", "$dynamicAnchor"] {
                    let Some(Value::String(name)) = map.get(key) else {
                        continue;
                    };
                    let mut chars = name.chars();
                    let named = chars
                        .next()
                        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                        && chars.all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
                    if !named || !seen.insert(name.as_str()) {
                        return Some(format!(
                            "`{key}` {} names two schemas or is no name",
                            crate::json::json_text(&Value::String(name.clone()))
                        ));
                    }
                }
                stack.extend(map.values());
            }
            _ => {}
        }
    }
    None
}

fn skips(root: &Value) -> Option<String> {
    if *root == Value::Bool(false) {
        // SchemaValidator.validate returns "valid" at once for a falsy schema.
        return Some("the schema is `false`, which it reads as no schema".to_string());
    }
    if let Some(why) = bad_anchor(root) {
        return Some(why);
    }
    if let Value::Object(obj) = root
        && let Some(dialect) = obj.get("$schema")
        && !dialect
            .as_str()
            .is_some_and(|d| VALIDATOR_DIALECTS.contains(&d))
    {
        return Some(format!(
            "`$schema` is {}, a dialect it does not load",
            crate::json::json_text(dialect)
        ));
    }
    let draft2020 =
        root.get("$schema").and_then(Value::as_str) == VALIDATOR_DIALECTS.get(2).copied();
    skips_at(root, root, "", draft2020)
}

fn skips_at(node: &Value, root: &Value, path: &str, draft2020: bool) -> Option<String> {
    let obj = match node {
        Value::Bool(_) => return None,
        Value::Object(obj) => obj,
        _ => {
            return Some(format!(
                "{} is neither a schema object nor a boolean",
                at(path)
            ));
        }
    };
    let here = |key: &str| format!("{path}/{}", clean(key));
    let unique = |items: &[Value]| {
        // Each member as sent, hashed: no pair compared.
        let mut seen = HashSet::new();
        items
            .iter()
            .all(|v| seen.insert(JsonKey::of(&sent_value(v))))
    };
    for (key, v) in obj {
        let where_ = here(key);
        let bad = |what: &str| Some(format!("{} {what}", at(&where_)));
        let sub = |s: &Value, at: &str| skips_at(s, root, at, draft2020);
        let each = |items: &[Value]| {
            (items.iter().enumerate()).find_map(|(i, s)| sub(s, &format!("{where_}/{i}")))
        };
        let number = |v: &Value| v.as_number().and_then(|n| Decimal::parse(n.as_str()).ok());
        let found = match key.as_str() {
            "exclusiveMinimum" | "exclusiveMaximum" if v.is_boolean() => {
                bad("is a boolean (draft 4), which draft-07 refuses")
            }
            "enum" => match v {
                Value::Array(items) if !items.is_empty() && unique(items) => None,
                _ => bad("is empty or repeats a member"),
            },
            "required" => match v {
                Value::Array(items) if unique(items) => None,
                _ => bad("repeats a name"),
            },
            "type" => match v {
                Value::Array(items) if items.is_empty() || !unique(items) => {
                    bad("is empty or repeats a type")
                }
                _ => None,
            },
            "format" | "title" | "description" | "$comment" | "contentMediaType"
            | "contentEncoding" | "$id" | "$anchor" | "$dynamicRef" | "$dynamicAnchor"
                if !v.is_string() =>
            {
                bad("is not a string")
            }
            "readOnly" | "writeOnly" | "deprecated" | "uniqueItems" | "nullable"
                if !v.is_boolean() =>
            {
                bad("is not a boolean")
            }
            "examples" if !v.is_array() => bad("is not an array"),
            "$id" if !path.is_empty() => {
                bad("is an id of a subschema, under which precheck does not resolve references")
            }
            // Ajv compiles an asynchronous validator at the root, whose answer is a promise
            // that Gemini CLI takes for a pass; it refuses one below.
            "$async" if *v != Value::Bool(false) => bad(
                "is not false: Ajv's validator then answers with a promise, which Gemini CLI takes for a pass (or, below the root, does not compile)",
            ),
            // Gemini CLI 0.61.0 adds `wait_for_previous` to a copy of the schema for each
            // call and compiles the copy in its one Ajv, which refuses a second schema of
            // an id it holds: from the second call on, it checks none.
            "$id" => bad(
                "is the id of the schema, which Gemini CLI compiles afresh for each call in one validator that refuses a second schema of an id it holds: it checks the first call only",
            ),
            "nullable" if !obj.contains_key("type") => bad("stands without `type`"),
            // Ajv: "type: null contradicts nullable: false".
            "nullable"
                if *v == Value::Bool(false)
                    && obj.get("type").is_some_and(|t| match t {
                        Value::Array(types) => types.iter().any(|t| t == "null"),
                        t => t == "null",
                    }) =>
            {
                bad("is false beside a `type` that admits null")
            }
            "$ref" if v.as_str().and_then(|r| resolve(root, r)).is_none() => {
                bad("names no node of the schema")
            }
            "$ref" if ref_cycles(root, node) => bad(
                "leads through `$ref`s alone back to where it began, which runs Ajv's compiler out of stack",
            ),
            "multipleOf" if number(v).is_none_or(|d| d <= Decimal::zero()) => {
                bad("is not a number above zero")
            }
            k if COUNTS.contains(&k)
                && !number(v).is_some_and(|d| d.is_integer() && d >= Decimal::zero()) =>
            {
                bad("is not a whole number of zero or more")
            }
            "additionalItems"
            | "contains"
            | "additionalProperties"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "contentSchema" => sub(v, &where_),
            "items" => match v {
                Value::Array(items) if items.is_empty() => bad("is an empty array"),
                Value::Array(_) if draft2020 => bad("is an array, which 2020-12 refuses"),
                Value::Array(items) => each(items),
                s => sub(s, &where_),
            },
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => match v {
                Value::Array(items) if !items.is_empty() => each(items),
                _ => bad("is not a non-empty array of schemas"),
            },
            "pattern" => match v {
                Value::String(p) if regexp::compiles(p) => None,
                Value::String(_) => bad(NO_REGEXP),
                _ => bad("is not a string"),
            },
            "patternProperties"
                if !v
                    .as_object()
                    .is_some_and(|o| o.keys().all(|p| regexp::compiles(p))) =>
            {
                bad(&format!("has a key that {NO_REGEXP}"))
            }
            "properties" | "patternProperties" | "definitions" | "$defs" | "dependentSchemas" => {
                match v {
                    Value::Object(subs) => (subs.iter())
                        .find_map(|(name, s)| sub(s, &format!("{where_}/{}", clean(name)))),
                    _ => bad("is not an object of schemas"),
                }
            }
            "dependencies" | "dependentRequired" => match v {
                Value::Object(subs) => subs.iter().find_map(|(name, s)| {
                    let at_name = format!("{where_}/{}", clean(name));
                    match s {
                        Value::Array(names)
                            if names.iter().all(Value::is_string) && unique(names) =>
                        {
                            None
                        }
                        Value::Array(_) => Some(format!(
                            "{} repeats a name or holds other than names",
                            at(&at_name)
                        )),
                        s if key == "dependencies" => sub(s, &at_name),
                        _ => Some(format!("{} is not an array of names", at(&at_name))),
                    }
                }),
                _ => bad("is not an object"),
            },
            "$vocabulary" if !v.is_object() => bad("is not an object"),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Why a `pattern` voids the schema where [`regexp::compiles`] is not sure of it.
const NO_REGEXP: &str = "is no regular expression that JavaScript is sure to compile both with and without the `u` flag";

/// A path for a message (`/` for the root).
fn at(path: &str) -> String {
    if path.is_empty() {
        "the root".to_string()
    } else {
        format!("`{path}`")
    }
}

/// Whether following `$ref` from `node`, and from each node it names that has a `$ref`
/// too, comes back to a node already passed: Ajv follows such a chain (where a node holds
/// nothing but its `$ref`) without end. Read wider: a node with other keywords beside its
/// `$ref` continues the chain here.
fn ref_cycles(root: &Value, node: &Value) -> bool {
    let mut passed: HashSet<*const Value> = HashSet::from([std::ptr::from_ref(node)]);
    let mut at = node;
    while let Some(next) = (at.get("$ref").and_then(Value::as_str)).and_then(|r| resolve(root, r)) {
        if !passed.insert(std::ptr::from_ref(next)) {
            return true;
        }
        at = next;
    }
    false
}

/// The node a local `$ref` (`#`, `#/a/b`) names in `root`, or `None` for one that names
/// none, or any other reference (Ajv resolves those against ids precheck does not track).
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.contains('%') {
        return None;
    }
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

/// A number as a harness that reads JSON into doubles (Gemini CLI's and Claude Code's
/// JavaScript, Ajv) holds it: the nearest double, written as the shortest decimal that
/// reads back as it (as JavaScript prints it). `None` beyond the doubles (`1e400`).
fn as_sent(n: &Number) -> Option<Decimal> {
    let double: f64 = n.as_str().parse().ok()?;
    if !double.is_finite() {
        return None;
    }
    Decimal::parse(&format!("{double:e}")).ok()
}

/// `value` with every number in it as [`as_sent`] holds it.
fn sent_value(value: &Value) -> Value {
    match value {
        Value::Number(n) => as_sent(n)
            .and_then(|d| number_value(&d).ok())
            .unwrap_or_else(|| value.clone()),
        Value::Array(items) => Value::Array(items.iter().map(sent_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), sent_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The members of an `enum` (or a `const`), each also as a harness that reads JSON into
/// doubles holds it where that differs (`5000.00000000000000001` is 5000 to Ajv), and as
/// Gemini CLI rewrites an MCP tool's schema ([`gemini_mcp_rewrite`]: `{"type": ["string",
/// "null"]}` is `{"type": "string", "nullable": true}` to it): the domain admits each.
fn as_sent_too(items: &[Value]) -> Vec<Value> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let rewritten = gemini_mcp_rewrite(item);
        let mut readings = vec![item.clone()];
        for reading in [sent_value(item), sent_value(&rewritten), rewritten] {
            if !readings.iter().any(|r| json_eq(r, &reading)) {
                readings.push(reading);
            }
        }
        out.extend(readings);
    }
    out
}

/// The type names of JSON Schema, as `parse_types` reads them.
const JSON_TYPES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// JSON Schema's spelling of a type the Gemini API's `Type` enum spells in capitals
/// (`NUMBER`: `number`).
fn gemini_type(name: &str) -> Option<&'static str> {
    JSON_TYPES
        .into_iter()
        .find(|t| t.to_ascii_uppercase() == name)
}

fn parse_types(v: &Value, at: &str) -> Result<u8, SchemaError> {
    let one = |name: &Value| -> Result<u8, SchemaError> {
        match name.as_str() {
            Some("null") => Ok(NULL),
            Some("boolean") => Ok(BOOLEAN),
            Some("integer") => Ok(INTEGER),
            Some("number") => Ok(NUMBER | INTEGER),
            Some("string") => Ok(STRING),
            Some("array") => Ok(ARRAY),
            Some("object") => Ok(OBJECT),
            Some(other) if let Some(lower) = gemini_type(other) => Err(SchemaError {
                at: at.to_string(),
                problem: SchemaProblem::GeminiType(name.clone(), lower),
            }),
            _ => Err(SchemaError {
                at: at.to_string(),
                problem: SchemaProblem::UnknownType(name.clone()),
            }),
        }
    };
    match v {
        Value::Array(names) => names.iter().try_fold(0, |acc, n| Ok(acc | one(n)?)),
        name => one(name),
    }
}

/// The members an `enum` or `const` admits, in the order written, with the class of each
/// under [`json_eq`] to look one up: a schema of 20,000 members is read in linear time,
/// where comparing every pair took a minute.
#[derive(Debug, Clone, PartialEq)]
struct Members {
    values: Vec<Value>,
    // INVARIANT: the keys of exactly `values`.
    keys: HashSet<JsonKey>,
}

impl Members {
    /// `items` where nothing was listed before, else the members listed before that
    /// `items` holds too (an `enum` beside a `const`), in the order of those before.
    fn meet(current: Option<Members>, items: Vec<Value>) -> Members {
        let keys: HashSet<JsonKey> = items.iter().map(JsonKey::of).collect();
        match current {
            None => Members {
                values: items,
                keys,
            },
            Some(cur) => {
                let values: Vec<Value> = (cur.values.into_iter())
                    .filter(|c| keys.contains(&JsonKey::of(c)))
                    .collect();
                Members {
                    keys: values.iter().map(JsonKey::of).collect(),
                    values,
                }
            }
        }
    }

    fn contains(&self, value: &Value) -> bool {
        self.keys.contains(&JsonKey::of(value))
    }

    fn push(&mut self, value: Value) {
        self.keys.insert(JsonKey::of(&value));
        self.values.push(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn schema(text: &str) -> Schema {
        Schema::compile(&parse(text.as_bytes()).unwrap(), &mut BTreeSet::new()).unwrap()
    }

    #[test]
    fn gemini_cli_checks_an_object_schema_with_wait_for_previous() {
        let checked = |text: &str| {
            let value = v(text);
            let out = as_checked(&value).into_owned();
            Schema::compile(&out, &mut BTreeSet::new()).unwrap()
        };
        let closed = checked(
            r#"{"type":"object","properties":{"wait_for_previous":{"const":false}},"additionalProperties":false}"#,
        );
        assert!(closed.admits(&v(r#"{"wait_for_previous":true}"#)));
        assert!(!closed.admits(&v(r#"{"wait_for_previous":1}"#)));
        assert!(
            checked(r#"{"type":"object","additionalProperties":false}"#)
                .admits(&v(r#"{"wait_for_previous":false}"#))
        );
        // Not `type: "object"`: Gemini CLI leaves the schema as it is.
        assert!(
            !checked(r#"{"type":["object"],"additionalProperties":false}"#)
                .admits(&v(r#"{"wait_for_previous":false}"#))
        );
    }

    #[test]
    fn a_property_named_proto_is_left_to_additional_properties() {
        let s = schema(
            r#"{"type":"object","properties":{"__proto__":{"type":"integer","maximum":5}}}"#,
        );
        assert!(s.admits(&v(r#"{"__proto__":8400}"#)));
        let closed = schema(
            r#"{"type":"object","properties":{"__proto__":{}},"additionalProperties":false}"#,
        );
        assert!(!closed.admits(&v(r#"{"__proto__":1}"#)));
    }

    #[test]
    fn a_required_name_every_javascript_object_has_is_not_required() {
        // Gemini CLI's Ajv passes {} against each of these (seen through SchemaValidator).
        for name in ["constructor", "toString", "__proto__", "hasOwnProperty", ""] {
            let s = schema(&format!(r#"{{"type":"object","required":[{name:?},"a"]}}"#));
            assert!(s.admits(&v(r#"{"a":1}"#)), "{name}");
            assert!(!s.admits(&v(r#"{"b":1}"#)), "{name}");
            assert!(s.may_lack(&[name]), "{name}");
        }
    }

    fn v(text: &str) -> Value {
        parse(text.as_bytes()).unwrap()
    }

    fn probe(consts: &str, numbers: bool, strings: bool) -> Probe {
        Probe {
            constants: v(consts).as_array().unwrap().clone(),
            orders_numbers: numbers,
            orders_strings: strings,
            fact: false,
        }
    }

    fn reps(s: &str, p: &Probe) -> Vec<String> {
        schema(s)
            .reps("f", p)
            .unwrap()
            .iter()
            .map(crate::json::canonical)
            .collect()
    }

    #[test]
    fn integer_boundary_steps_by_one() {
        let p = probe("[5000]", true, false);
        assert_eq!(reps(r#"{"type":"integer"}"#, &p), ["4999", "5000", "5001"]);
        assert_eq!(
            reps(r#"{"type":"integer","maximum":5000}"#, &p),
            ["4999", "5000"]
        );
        assert_eq!(
            reps(r#"{"type":"integer","exclusiveMaximum":5000}"#, &p),
            ["4999"]
        );
        assert_eq!(
            reps(r#"{"type":"integer","minimum":0,"maximum":0}"#, &p),
            ["0"]
        );
    }

    #[test]
    fn number_gaps_get_exact_midpoints() {
        let p = probe("[4999, 5000]", true, false);
        assert_eq!(
            reps(r#"{"type":"number"}"#, &p),
            ["4998", "4999", "4999.5", "5000", "5001"]
        );
        assert_eq!(
            reps(r#"{"type":"integer"}"#, &p),
            ["4998", "4999", "5000", "5001"]
        );
        let p = probe("[0.1, 0.2]", true, false);
        assert_eq!(
            reps(r#"{"type":"number","minimum":0.1,"maximum":0.2}"#, &p),
            ["0.1", "0.15", "0.2"]
        );
    }

    #[test]
    fn equality_only_fields_get_one_other_value_per_type() {
        let p = probe(r#"["suspended", 7]"#, false, false);
        assert_eq!(
            reps(r#"{"type":["string","integer"]}"#, &p),
            ["\"suspended\"", "\"\"", "6", "7"]
        );
        let p = probe(r#"["", "x0"]"#, false, false);
        assert_eq!(
            reps(r#"{"type":"string"}"#, &p),
            ["\"\"", "\"x0\"", "\"x1\""]
        );
    }

    #[test]
    fn no_schema_tries_every_type() {
        let p = probe("[5000]", true, false);
        assert_eq!(
            reps("{}", &p),
            ["4999", "5000", "5001", "\"\"", "true", "null", "[]", "{}"]
        );
    }

    #[test]
    fn string_gaps_follow_code_point_order() {
        assert_eq!(
            between(Some("2026-02-28"), Some("2026-03-01")).as_deref(),
            Some("2026-02-29")
        );
        assert_eq!(between(None, Some("b")).as_deref(), Some("a"));
        assert_eq!(between(Some("a"), None).as_deref(), Some("b"));
        assert_eq!(between(Some("a"), Some("a\u{0}")), None);
        assert_eq!(
            between(Some("a"), Some("a\u{1}")).as_deref(),
            Some("a\u{0}")
        );
        assert_eq!(between(None, Some("")), None);
        assert_eq!(between(Some("a"), Some("b")).as_deref(), Some("a0"));
    }

    #[test]
    fn enums_are_finite_and_filtered() {
        let s = schema(r#"{"type":"integer","enum":[1, 2.5, "x", 3],"maximum":2}"#);
        assert_eq!(s.finite().unwrap(), [v("1")]);
        let s = schema(r#"{"enum":["a","b"],"const":"b"}"#);
        assert_eq!(s.finite().unwrap(), [v("\"b\"")]);
    }

    #[test]
    fn enum_members_are_one_by_exact_decimal_and_deep_equality() {
        // Repeats by exact decimal value, deep, whatever the spelling or key order: Ajv
        // refuses each, and precheck reads the schema as admitting any params.
        for members in [
            "[1, 1.0]",
            "[1, 1e0]",
            "[100, 2, 1e2]",
            "[-0, 0]",
            r#"[{"a":1,"b":[2]}, "x", {"b":[2.0],"a":1}]"#,
            "[[1,2], [1.0,2.00]]",
            "[5000, 5000.00000000000000001]",
        ] {
            let text = format!(r#"{{"properties":{{"a":{{"enum":{members}}}}}}}"#);
            assert!(validator_skips(&v(&text)).is_some(), "{text}");
        }
        for members in [
            r#"[1, "1"]"#,
            "[[1,2], [2,1]]",
            r#"[{"a":1}, {"a":1,"b":1}]"#,
            "[true, 1]",
        ] {
            let text = format!(r#"{{"properties":{{"a":{{"enum":{members}}}}}}}"#);
            assert_eq!(validator_skips(&v(&text)), None, "{text}");
        }
        // A member admits every spelling of its value; `enum` meets `const` the same way
        // (keys are read in key order: `const` first, so its spelling is kept).
        let s = schema(r#"{"enum":[1e2, {"a":[1]}, 100.0, 3]}"#);
        assert!(s.admits(&v("100")));
        assert!(s.admits(&v(r#"{"a":[1.0]}"#)));
        assert!(!s.admits(&v("1")));
        assert_eq!(s.finite().unwrap(), [v("1e2"), v(r#"{"a":[1]}"#), v("3")]);
        let s = schema(r#"{"enum":[3, 1e2, 100.0, 4],"const":100}"#);
        assert_eq!(s.finite().unwrap(), [v("100")]);
        let s = schema(r#"{"const":100,"enum":[3, 1e2, 4]}"#);
        assert_eq!(s.finite().unwrap(), [v("100")]);
    }

    #[test]
    fn a_schema_is_read_as_gemini_cli_rewrites_an_mcp_tools_schema() {
        // Gemini CLI 0.61.0 rewrites `"type": [T, "null"]` as `"type": T, "nullable": true`
        // at every depth of an MCP tool's schema, in an `enum` or `const` member too:
        // Ajv then admits the rewritten member.
        let s = schema(r#"{"const":{"type":["string","null"],"n":[{"type":["null","x"]}]}}"#);
        assert!(s.admits(&v(
            r#"{"type":["string","null"],"n":[{"type":["null","x"]}]}"#
        )));
        assert!(s.admits(&v(
            r#"{"type":"string","nullable":true,"n":[{"type":"x","nullable":true}]}"#
        )));
        assert!(!s.admits(&v(r#"{"type":"string"}"#)));
        // A schema that compiles only as written, or only as rewritten, is skipped for
        // some tools.
        for text in [
            r#"{"properties":{"a":{"enum":[{"type":["string","null"]},{"type":"string","nullable":true}]}}}"#,
            r#"{"dependencies":{"type":["string","null"]}}"#,
            r#"{"dependentRequired":{"type":["null","b"]}}"#,
        ] {
            let why = validator_skips(&v(text));
            assert!(
                why.is_some_and(|w| w.contains("once it has rewritten")),
                "{text}"
            );
        }
        for text in [
            r#"{"properties":{"a":{"type":["string","null"]},"b":{"type":["null","integer"]}}}"#,
            r#"{"dependencies":{"type":["string","other"]}}"#,
            r#"{"properties":{"a":{"enum":[{"type":["string","null"]},{"type":"string"}]}}}"#,
        ] {
            assert_eq!(validator_skips(&v(text)), None, "{text}");
        }
    }

    #[test]
    fn objects_are_checked_key_by_key() {
        let s = schema(
            r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":5000},
                "customer":{"type":"object","properties":{"tier":{"enum":["gold","free"]}},"required":["tier"]}},
                "required":["amount"],"additionalProperties":false}"#,
        );
        assert!(s.admits(&v(r#"{"amount":5000}"#)));
        assert!(s.admits(&v(r#"{"amount":5000.0}"#)));
        assert!(!s.admits(&v(r#"{"amount":5001}"#)));
        assert!(!s.admits(&v(r#"{"amount":1.5}"#)));
        assert!(!s.admits(&v(r#"{}"#)));
        assert!(!s.admits(&v(r#"{"amount":1,"note":"x"}"#)));
        assert!(!s.admits(&v(r#"{"amount":1,"customer":{}}"#)));
        assert!(s.admits(&v(r#"{"amount":1,"customer":{"tier":"gold"}}"#)));
        assert_eq!(
            s.sample().unwrap().map(|x| crate::json::canonical(&x)),
            Some(r#"{"amount":0}"#.to_string())
        );
        assert!(!s.may_lack(&["amount"]));
        assert!(s.may_lack(&["customer", "tier"]));
        assert!(!s.may_have(&["note"]));
        assert!(s.may_have(&["customer", "tier"]));
    }

    #[test]
    fn schemas_gemini_cli_cannot_compile_are_told_apart() {
        for text in [
            r#"{"$schema":"http://json-schema.org/draft-04/schema#"}"#,
            r#"{"$schema":"https://json-schema.org/draft/2020-12/schema#"}"#,
            r#"{"properties":{"a":{"maximum":1,"exclusiveMaximum":true}}}"#,
            r#"{"properties":{"a":{"enum":[1,1]}}}"#,
            r#"{"properties":{"a":{"enum":[5000,5000.00000000000000001]}}}"#,
            r#"{"required":["a","a"]}"#,
            r#"{"properties":{"a":{"type":[]}}}"#,
            r#"{"properties":{"a":{"nullable":false}}}"#,
            r##"{"properties":{"a":{"$ref":"#/$defs/b"}}}"##,
            r#"{"properties":{"a":{"$ref":"other.json"}}}"#,
            r#"{"properties":{"a":{"minLength":1.5}}}"#,
            r#"{"properties":{"a":{"multipleOf":0}}}"#,
            r#"{"properties":{"a":{"items":[]}}}"#,
            r#"{"properties":{"a":{"anyOf":[]}}}"#,
            r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"a":{"items":[{}]}}}"#,
            r#"{"properties":{"a":{"additionalProperties":5}}}"#,
            r#"{"properties":{"a":{"dependencies":{"b":["c","c"]}}}}"#,
            r#"{"properties":{"a":{"pattern":"^\\d{3}\\-\\d{4}$"}}}"#,
            r#"{"properties":{"a":{"pattern":5}}}"#,
            r#"{"patternProperties":{"^x\\_":{}}}"#,
            r#"{"properties":{"a":{"format":5}}}"#,
            r#"{"description":5}"#,
            r#"{"properties":{"a":{"uniqueItems":"yes"}}}"#,
            r#"{"properties":{"a":{"type":"integer","nullable":"yes"}}}"#,
            r#"{"properties":{"a":{"type":"null","nullable":false}}}"#,
            r#"{"$id":"https://example.com/refund","type":"object"}"#,
            r#"{"$async":true,"type":"object"}"#,
            r##"{"properties":{"m":{"$ref":"#/properties/m"}}}"##,
            r#"{"properties":{"m":{"$anchor":"a"},"n":{"$anchor":"a"}}}"#,
            r#"{"properties":{"m":{"$anchor":"a"},"n":{"$dynamicAnchor":"a"}}}"#,
            r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","$anchor":"1bad"}"#,
            r##"{"properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"b":{"$ref":"#/$defs/c"},"c":{"$ref":"#/$defs/b"}}}"##,
            r#"{"properties":{"a":{"$async":true}}}"#,
            r#"{"properties":{"a":{"type":["integer","null"],"nullable":false}}}"#,
            r#"{"properties":{"a":{"examples":5}}}"#,
            r#"{"properties":{"a":{"dependencies":{"b":[5]}}}}"#,
            r#"{"properties":{"a":{"dependentRequired":{"b":{}}}}}"#,
            r#"{"properties":{"a":{"prefixItems":[]}}}"#,
            r#"{"properties":{"a":{"unevaluatedProperties":5}}}"#,
            r#"{"properties":{"a":{"dependentSchemas":5}}}"#,
            r#"{"properties":{"a":{"minContains":-1}}}"#,
            r#"{"properties":{"a":{"$dynamicRef":5}}}"#,
            r#"{"properties":{"a":{"$vocabulary":5}}}"#,
            "false",
        ] {
            assert!(validator_skips(&v(text)).is_some(), "{text}");
        }
        for text in [
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","required":[]}"#,
            r#"{"$schema":"https://json-schema.org/draft/2020-12/schema"}"#,
            r##"{"properties":{"a":{"$ref":"#/$defs/b"},"c":{"$ref":"#"}},"$defs":{"b":{}}}"##,
            r##"{"properties":{"c":{"$ref":"#"},"d":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$ref":"#/$defs/y"},"y":{"type":"string"}}}"##,
            r#"{"properties":{"m":{"$anchor":"a"},"n":{"$anchor":"_b-1.c"}}}"#,
            r#"{"properties":{"a":{"type":"integer","nullable":true,"enum":[1]}}}"#,
            r#"{"properties":{"a":{"type":"integer","nullable":false},"b":{"type":["integer","null"],"nullable":true}}}"#,
            r#"{"$async":false,"type":"object"}"#,
            r#"{"properties":{"a":{"minLength":2.0,"format":"zzz","items":{}}}}"#,
            r#"{"properties":{"a":{"pattern":"^\\d{3}-\\d{4}$","title":"t","examples":[]}}}"#,
            r#"{"patternProperties":{"^x_\\w+$":{}}}"#,
            r#"{"properties":{"a":{"dependentRequired":{"b":["c"]},"prefixItems":[{}],"minContains":0}}}"#,
            // Gemini CLI puts its own `wait_for_previous` over the one declared.
            r#"{"type":"object","properties":{"wait_for_previous":{"enum":[]}}}"#,
            "true",
        ] {
            assert_eq!(validator_skips(&v(text)), None, "{text}");
        }
    }

    #[test]
    fn unsatisfiable_schemas_have_no_sample() {
        for text in [
            "false",
            r#"{"type":"integer","minimum":1.2,"maximum":1.8}"#,
            r#"{"type":"object","required":["x"],"additionalProperties":false}"#,
            r#"{"enum":[]}"#,
            r#"{"type":"number","exclusiveMinimum":1,"exclusiveMaximum":1}"#,
        ] {
            assert_eq!(schema(text).sample().unwrap(), None, "{text}");
        }
        assert_eq!(
            schema(r#"{"type":"number","exclusiveMinimum":1,"maximum":1.5}"#)
                .sample()
                .unwrap(),
            Some(v("1.5"))
        );
    }

    #[test]
    fn draft4_exclusive_flags() {
        let s = schema(r#"{"type":"integer","minimum":0,"exclusiveMinimum":true}"#);
        assert!(!s.admits(&v("0")) && s.admits(&v("1")));
    }

    #[test]
    fn unmodelled_keywords_widen_and_are_listed() {
        let mut ignored = BTreeSet::new();
        let s = Schema::compile(
            &v(r##"{"type":"object","title":"t","description":"d",
                  "properties":{"s":{"type":"string","pattern":"^a","minLength":3},
                                "r":{"$ref":"#/$defs/x","type":"string"}},
                  "patternProperties":{"^x_":{}},"additionalProperties":false}"##),
            &mut ignored,
        )
        .unwrap();
        assert_eq!(
            ignored.into_iter().collect::<Vec<_>>(),
            ["$ref", "minLength", "pattern", "patternProperties"]
        );
        assert!(s.admits(&v(r#"{"s":"","r":5,"x_1":true}"#)));
    }

    #[test]
    fn malformed_modelled_keywords_are_refused() {
        for (text, needle) in [
            (r#"{"type":"integr"}"#, "/type: unknown type \"integr\""),
            (r#"{"required":"x"}"#, "/required"),
            (
                r#"{"properties":{"a":{"maximum":"5"}}}"#,
                "/properties/a/maximum",
            ),
            (r#"{"enum":1}"#, "/enum"),
            ("3", "/: a schema must be"),
        ] {
            let err = Schema::compile(&v(text), &mut BTreeSet::new()).unwrap_err();
            assert!(err.to_string().contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn gemini_type_names_are_refused_with_json_schema_s_spelling() {
        for (name, lower) in [
            ("OBJECT", "object"),
            ("NUMBER", "number"),
            ("STRING", "string"),
            ("INTEGER", "integer"),
            ("BOOLEAN", "boolean"),
            ("ARRAY", "array"),
            ("NULL", "null"),
        ] {
            for text in [
                format!(r#"{{"type":"{name}"}}"#),
                format!(r#"{{"type":["string","{name}"]}}"#),
            ] {
                let err = Schema::compile(&v(&text), &mut BTreeSet::new()).unwrap_err();
                assert_eq!(
                    err.problem,
                    SchemaProblem::GeminiType(Value::String(name.into()), lower),
                    "{text}"
                );
            }
        }
        // Neither JSON Schema's spelling nor the Gemini API's: an unknown type.
        let err = Schema::compile(&v(r#"{"type":"Number"}"#), &mut BTreeSet::new()).unwrap_err();
        assert!(
            matches!(err.problem, SchemaProblem::UnknownType(_)),
            "{err}"
        );
    }

    #[test]
    fn nullable_admits_null() {
        let s = schema(r#"{"type":"string","nullable":true}"#);
        assert!(s.admits(&Value::Null));
        // With an enum too: null is admitted beside its members (the wider reading).
        let s = schema(r#"{"type":"string","enum":["a"],"nullable":true}"#);
        assert!(s.admits(&Value::Null) && s.admits(&v(r#""a""#)));
    }

    #[test]
    fn other_object_differs_from_constants() {
        let p = probe(r#"[{}]"#, false, false);
        let r = reps(r#"{"type":"object"}"#, &p);
        assert_eq!(r, ["{}", r#"{"_0":""}"#]);
        let closed = schema(r#"{"type":"object","additionalProperties":false}"#);
        assert!(matches!(closed.reps("f", &p), Err(Undecided::NoOther(_))));
    }
}
