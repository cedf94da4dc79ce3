//! Typed predicates over named fields, evaluated in three-valued (Kleene) logic.
//!
//! A predicate is parsed once from a policy record, then evaluated against a resolver
//! that maps a field name to a JSON value (or to nothing: UNKNOWN). Numbers compare as
//! exact decimals, strings by code point; any other ordering is a type mismatch. This
//! module knows nothing about records or views: resolution is the caller's business.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;

use serde_json::Value;
use thiserror::Error;

use crate::decimal::{Decimal, DecimalError};
use crate::json::{json_brief, json_text};

/// Nesting deeper than this is refused at parse time.
pub const DEFAULT_MAX_DEPTH: usize = 64;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    /// Deep JSON equality.
    Eq,
    /// Deep JSON inequality.
    Ne,
    /// Less than.
    Lt,
    /// Less than or equal.
    Lte,
    /// Greater than.
    Gt,
    /// Greater than or equal.
    Gte,
    /// Member of an array.
    In,
    /// Not a member of an array.
    NotIn,
}

impl Op {
    pub(crate) fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "eq" => Op::Eq,
            "ne" => Op::Ne,
            "lt" => Op::Lt,
            "lte" => Op::Lte,
            "gt" => Op::Gt,
            "gte" => Op::Gte,
            "in" => Op::In,
            "not_in" => Op::NotIn,
            _ => return None,
        })
    }

    /// The operator as spelt in records.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Ne => "ne",
            Op::Lt => "lt",
            Op::Lte => "lte",
            Op::Gt => "gt",
            Op::Gte => "gte",
            Op::In => "in",
            Op::NotIn => "not_in",
        }
    }
}

/// One comparison: the resolved value of `field` on the left, `value` on the right.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The field resolved against params and facts.
    pub field: String,
    /// The operator.
    pub op: Op,
    /// The literal on the right-hand side.
    pub value: Value,
    /// For `in` and `not_in`, the [`JsonKey`] of each member of `value`, so that a call is
    /// looked up in a list of 20,000 members, not compared with each one; else empty.
    // INVARIANT: built from `value` by `Comparison::new`, never changed apart from it.
    members: HashSet<JsonKey>,
}

impl Comparison {
    fn new(field: String, op: Op, value: Value) -> Comparison {
        let members = match (op, &value) {
            (Op::In | Op::NotIn, Value::Array(items)) => items.iter().map(JsonKey::of).collect(),
            _ => HashSet::new(),
        };
        Comparison {
            field,
            op,
            value,
            members,
        }
    }
}

/// A predicate tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// A leaf comparison.
    Cmp(Comparison),
    /// TRUE when every part is TRUE; `all: []` is TRUE.
    All(Vec<Predicate>),
    /// TRUE when some part is TRUE; `any: []` is FALSE.
    Any(Vec<Predicate>),
    /// Negation; `not UNKNOWN` is UNKNOWN.
    Not(Box<Predicate>),
}

/// A three-valued truth value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tri {
    /// Definitely false.
    False,
    /// Not decidable from what resolves.
    Unknown,
    /// Definitely true.
    True,
}

impl Tri {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Tri::True => "TRUE",
            Tri::False => "FALSE",
            Tri::Unknown => "UNKNOWN",
        }
    }

    fn not(self) -> Tri {
        match self {
            Tri::True => Tri::False,
            Tri::False => Tri::True,
            Tri::Unknown => Tri::Unknown,
        }
    }
}

/// Why a predicate object is malformed; `path` is a JSON-pointer-like location.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{path}: {problem}")]
pub struct PredicateError {
    /// Where in the predicate, e.g. `/all/1/op` (`/` for the whole).
    pub path: String,
    /// What is wrong there.
    pub problem: PredicateProblem,
}

/// What is wrong at one place of a predicate.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PredicateProblem {
    /// Nested deeper than the limit (`--max-predicate-depth`).
    #[error("predicate nested deeper than {0} levels (raise it with --max-predicate-depth)")]
    TooDeep(usize),
    /// Not a JSON object.
    #[error("a predicate must be an object")]
    NotObject,
    /// `all` or `any` whose value is not an array.
    #[error("`{0}` takes an array of predicates")]
    PartsNotArray(&'static str),
    /// A comparison's `field` that is not a non-empty string.
    #[error("`field` must be a non-empty string")]
    Field,
    /// An `op` that is none of the operators: as written (a string, else its JSON).
    #[error("unknown op `{0}` (eq ne lt lte gt gte in not_in)")]
    UnknownOp(String),
    /// `in` or `not_in` with a value that is not an array.
    #[error("`{}` takes an array value", .0.as_str())]
    NotArray(Op),
    /// A comparison's value the gate cannot compare or carry.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// Keys that are no form's: the keys found.
    #[error(
        "a predicate has exactly the keys of one form ({{field, op, value}}, {{all}}, {{any}} or {{not}}); found {{{}}}",
        .0.iter().map(|k| crate::text::clean(k)).collect::<Vec<_>>().join(", ")
    )]
    Form(Vec<String>),
}

/// Why a value the gate compares or carries (a fact's value, an effect's `match`, a
/// predicate's value, an action's params, a tool's schema) is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ValueError {
    /// A number that cannot be read as an exact decimal.
    #[error(transparent)]
    Number(#[from] DecimalError),
    /// Nesting deeper than the fixed limit, `MAX_VALUE_DEPTH`.
    #[error(
        "nested deeper than {MAX_VALUE_DEPTH} levels of arrays and objects (a fixed limit, so that every report stays readable by JSON parsers)"
    )]
    TooDeep,
}

/// A comparison whose operands cannot be compared, found while evaluating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMismatch {
    /// The field whose resolved value was compared.
    pub field: String,
    /// A readable account of the comparison.
    pub detail: String,
}

/// A value a tool may read something in (an item, a character, a length) and the gate
/// does not read into: what a field's path through params may meet, which
/// [`ActionError::ThroughArray`], [`RecordProblem::MatchThrough`] and
/// [`RecordProblem::ValueThrough`] name.
///
/// [`ActionError::ThroughArray`]: crate::ActionError::ThroughArray
/// [`RecordProblem::MatchThrough`]: crate::RecordProblem::MatchThrough
/// [`RecordProblem::ValueThrough`]: crate::RecordProblem::ValueThrough
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Elements {
    /// An array: a tool may read an item (`items.0`).
    #[default]
    Array,
    /// A string: a tool may read a character (`name.0`), or its length (`s.length`).
    String,
}

impl Elements {
    /// The noun: `array`, `string`.
    pub fn noun(self) -> &'static str {
        match self {
            Elements::Array => "array",
            Elements::String => "string",
        }
    }

    /// The noun with its article: `an array`, `a string`.
    pub fn a(self) -> &'static str {
        match self {
            Elements::Array => "an array",
            Elements::String => "a string",
        }
    }
}

impl std::fmt::Display for Elements {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.noun())
    }
}

/// Gives the value a field resolves to, or `None` for UNKNOWN.
pub trait Resolve {
    /// The value of `field`, if it resolves.
    fn resolve(&self, field: &str) -> Option<&Value>;
}

impl Predicate {
    /// Parses a predicate object, refusing extra or mixed keys, unknown ops, non-array
    /// operands of `in`/`not_in`, and nesting deeper than `max_depth`.
    pub fn parse(value: &Value, max_depth: usize) -> Result<Predicate, PredicateError> {
        parse_at(value, "", 1, max_depth)
    }

    /// Every field name this predicate reads, in sorted order.
    pub fn fields(&self) -> BTreeSet<&str> {
        let mut out = BTreeSet::new();
        self.collect_fields(&mut out);
        out
    }

    fn collect_fields<'a>(&'a self, out: &mut BTreeSet<&'a str>) {
        match self {
            Predicate::Cmp(c) => {
                out.insert(c.field.as_str());
            }
            Predicate::All(ps) | Predicate::Any(ps) => {
                ps.iter().for_each(|p| p.collect_fields(out))
            }
            Predicate::Not(p) => p.collect_fields(out),
        }
    }

    /// Whether some comparison orders (`lt`, `lte`, `gt`, `gte`): only those can meet a
    /// [`TypeMismatch`], so [`Predicate::eval`] of a predicate without one never fails.
    pub fn orders(&self) -> bool {
        match self {
            Predicate::Cmp(c) => matches!(c.op, Op::Lt | Op::Lte | Op::Gt | Op::Gte),
            Predicate::All(ps) | Predicate::Any(ps) => ps.iter().any(Predicate::orders),
            Predicate::Not(p) => p.orders(),
        }
    }

    /// Evaluates in Kleene logic. Every part is evaluated (no short-circuit), so a type
    /// mismatch anywhere is always reported, whatever the other parts say.
    pub fn eval(&self, env: &dyn Resolve) -> Result<Tri, TypeMismatch> {
        match self {
            Predicate::Cmp(c) => match env.resolve(&c.field) {
                None => Ok(Tri::Unknown),
                Some(left) => compare(c, left).map(|b| if b { Tri::True } else { Tri::False }),
            },
            Predicate::All(ps) => {
                let mut acc = Tri::True;
                for p in ps {
                    acc = acc.min(p.eval(env)?);
                }
                Ok(acc)
            }
            Predicate::Any(ps) => {
                let mut acc = Tri::False;
                for p in ps {
                    acc = acc.max(p.eval(env)?);
                }
                Ok(acc)
            }
            Predicate::Not(p) => Ok(p.eval(env)?.not()),
        }
    }

    /// The predicate with resolved values filled in, for reports:
    /// `amount = 8400 gt 5000`, `all(a = 1 eq 1; b = ? gt 2)`.
    pub fn explain(&self, env: &dyn Resolve) -> String {
        let mut out = String::new();
        self.explain_into(env, &mut out);
        out
    }

    fn explain_into(&self, env: &dyn Resolve, out: &mut String) {
        match self {
            Predicate::Cmp(c) => {
                // Values are shown brief: a predicate may read one huge value many times.
                let left = env
                    .resolve(&c.field)
                    .map_or_else(|| "?".to_string(), json_brief);
                let _ = write!(
                    out,
                    "{} = {} {} {}",
                    crate::text::clean(&c.field),
                    left,
                    c.op.as_str(),
                    json_brief(&c.value)
                );
            }
            Predicate::All(ps) | Predicate::Any(ps) => {
                out.push_str(if matches!(self, Predicate::All(_)) {
                    "all("
                } else {
                    "any("
                });
                for (i, p) in ps.iter().enumerate() {
                    if i > 0 {
                        out.push_str("; ");
                    }
                    p.explain_into(env, out);
                }
                out.push(')');
            }
            Predicate::Not(p) => {
                out.push_str("not(");
                p.explain_into(env, out);
                out.push(')');
            }
        }
    }
}

fn parse_at(
    value: &Value,
    path: &str,
    depth: usize,
    max: usize,
) -> Result<Predicate, PredicateError> {
    let err = |p: &str, problem: PredicateProblem| PredicateError {
        path: if p.is_empty() {
            "/".to_string()
        } else {
            p.to_string()
        },
        problem,
    };
    if depth > max {
        return Err(err(path, PredicateProblem::TooDeep(max)));
    }
    let Value::Object(obj) = value else {
        return Err(err(path, PredicateProblem::NotObject));
    };
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    let parts = |name: &'static str, v: &Value| -> Result<Vec<Predicate>, PredicateError> {
        let p = format!("{path}/{name}");
        let Value::Array(items) = v else {
            return Err(err(&p, PredicateProblem::PartsNotArray(name)));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_at(item, &format!("{p}/{i}"), depth + 1, max))
            .collect()
    };
    match (
        keys.as_slice(),
        obj.get("all"),
        obj.get("any"),
        obj.get("not"),
    ) {
        (["all"], Some(v), _, _) => Ok(Predicate::All(parts("all", v)?)),
        (["any"], _, Some(v), _) => Ok(Predicate::Any(parts("any", v)?)),
        (["not"], _, _, Some(v)) => Ok(Predicate::Not(Box::new(parse_at(
            v,
            &format!("{path}/not"),
            depth + 1,
            max,
        )?))),
        (["field", "op", "value"], _, _, _) => {
            let field = match obj.get("field") {
                Some(Value::String(s)) if !s.is_empty() => s.clone(),
                _ => {
                    return Err(err(&format!("{path}/field"), PredicateProblem::Field));
                }
            };
            let op_text = obj.get("op").and_then(Value::as_str).unwrap_or("");
            let Some(op) = Op::parse(op_text) else {
                let shown = match obj.get("op") {
                    Some(Value::String(s)) => crate::text::clean(s).into_owned(),
                    Some(other) => json_text(other),
                    None => String::new(),
                };
                return Err(err(
                    &format!("{path}/op"),
                    PredicateProblem::UnknownOp(shown),
                ));
            };
            let value = obj.get("value").cloned().unwrap_or(Value::Null);
            if matches!(op, Op::In | Op::NotIn) && !value.is_array() {
                return Err(err(
                    &format!("{path}/value"),
                    PredicateProblem::NotArray(op),
                ));
            }
            check_numbers(&value).map_err(|e| err(&format!("{path}/value"), e.into()))?;
            Ok(Predicate::Cmp(Comparison::new(field, op, value)))
        }
        _ => Err(err(
            path,
            PredicateProblem::Form(keys.iter().map(|k| k.to_string()).collect()),
        )),
    }
}

/// Deepest nesting of arrays and objects accepted in a value the gate compares or
/// carries: a fact's value, an effect's `match`, a predicate's value, an action's params,
/// a tool's schema. A report carries such values inside its own structure (the action,
/// a witness), so this keeps every report within the 128 levels that JSON parsers accept
/// by default (serde_json's limit; the gate's own input limit).
pub const MAX_VALUE_DEPTH: usize = 64;

/// Refuses any number in `value` that cannot be read as an exact decimal, and nesting
/// deeper than [`MAX_VALUE_DEPTH`].
pub fn check_numbers(value: &Value) -> Result<(), ValueError> {
    check_value_at(value, 1)
}

fn check_value_at(value: &Value, depth: usize) -> Result<(), ValueError> {
    match value {
        Value::Number(n) => Decimal::parse(n.as_str())
            .map(|_| ())
            .map_err(ValueError::from),
        Value::Array(_) | Value::Object(_) if depth > MAX_VALUE_DEPTH => Err(ValueError::TooDeep),
        Value::Array(items) => items.iter().try_for_each(|v| check_value_at(v, depth + 1)),
        Value::Object(map) => map.values().try_for_each(|v| check_value_at(v, depth + 1)),
        _ => Ok(()),
    }
}

fn decimal(n: &serde_json::Number) -> Option<Decimal> {
    Decimal::parse(n.as_str()).ok()
}

/// Deep JSON equality with numbers compared by exact decimal value; `true` is not `1`.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (decimal(x), decimal(y)) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_str() == y.as_str(),
        },
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .all(|(k, x)| ys.get(k).is_some_and(|y| json_eq(x, y)))
        }
        _ => a == b,
    }
}

/// A value's class under [`json_eq`], to hash and look up: `json_eq(a, b)` exactly when
/// `JsonKey::of(a) == JsonKey::of(b)`. A number is its exact decimal (`1`, `1.0` and `1e0`
/// are one key), or its text where it is no decimal, as `json_eq` falls back to the text;
/// an object is its entries in key order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum JsonKey {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number read as an exact decimal.
    Number(Decimal),
    /// A number that is no decimal, by its text.
    Text(String),
    /// A string.
    String(String),
    /// An array, member by member.
    Array(Vec<JsonKey>),
    /// An object, entry by entry in key order.
    Object(Vec<(String, JsonKey)>),
}

impl JsonKey {
    /// The key of `value`.
    pub fn of(value: &Value) -> JsonKey {
        match value {
            Value::Null => JsonKey::Null,
            Value::Bool(b) => JsonKey::Bool(*b),
            // INVARIANT: `json_eq` compares two numbers as decimals when both read as one,
            // else by text; a number that reads as one never has the text of one that does
            // not, so the two kinds of key never meet.
            Value::Number(n) => match decimal(n) {
                Some(d) => JsonKey::Number(d),
                None => JsonKey::Text(n.as_str().to_string()),
            },
            Value::String(s) => JsonKey::String(s.clone()),
            Value::Array(items) => JsonKey::Array(items.iter().map(JsonKey::of).collect()),
            Value::Object(map) => {
                let mut entries: Vec<(String, JsonKey)> = (map.iter())
                    .map(|(k, v)| (k.clone(), JsonKey::of(v)))
                    .collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                JsonKey::Object(entries)
            }
        }
    }
}

/// Orders two values that `lt lte gt gte` may compare: two numbers or two strings.
pub fn order(left: &Value, right: &Value) -> Option<Ordering> {
    match (left, right) {
        (Value::Number(x), Value::Number(y)) => Some(decimal(x)?.cmp(&decimal(y)?)),
        (Value::String(x), Value::String(y)) => Some(x.as_str().cmp(y.as_str())),
        _ => None,
    }
}

fn compare(c: &Comparison, left: &Value) -> Result<bool, TypeMismatch> {
    let member = || c.members.contains(&JsonKey::of(left));
    let ordered = |want: fn(Ordering) -> bool| {
        order(left, &c.value).map(want).ok_or_else(|| TypeMismatch {
            field: c.field.clone(),
            detail: format!(
                "{} = {} {} {}: `{}` orders two numbers or two strings",
                crate::text::clean(&c.field),
                json_brief(left),
                c.op.as_str(),
                json_brief(&c.value),
                c.op.as_str()
            ),
        })
    };
    match c.op {
        Op::Eq => Ok(json_eq(left, &c.value)),
        Op::Ne => Ok(!json_eq(left, &c.value)),
        Op::In => Ok(member()),
        Op::NotIn => Ok(!member()),
        Op::Lt => ordered(Ordering::is_lt),
        Op::Lte => ordered(Ordering::is_le),
        Op::Gt => ordered(Ordering::is_gt),
        Op::Gte => ordered(Ordering::is_ge),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;
    use std::collections::BTreeMap;

    struct Env(BTreeMap<String, Value>);

    impl Resolve for Env {
        fn resolve(&self, field: &str) -> Option<&Value> {
            self.0.get(field)
        }
    }

    fn env(pairs: &str) -> Env {
        let v = parse(pairs.as_bytes()).unwrap();
        Env(v.as_object().unwrap().clone().into_iter().collect())
    }

    fn pred(text: &str) -> Predicate {
        Predicate::parse(&parse(text.as_bytes()).unwrap(), DEFAULT_MAX_DEPTH).unwrap()
    }

    fn eval(p: &str, e: &str) -> Tri {
        pred(p).eval(&env(e)).unwrap()
    }

    #[test]
    fn boundary_is_arithmetic() {
        let p = r#"{"field":"amount","op":"gt","value":5000}"#;
        assert_eq!(eval(p, r#"{"amount":4999}"#), Tri::False);
        assert_eq!(eval(p, r#"{"amount":5000}"#), Tri::False);
        assert_eq!(eval(p, r#"{"amount":5000.0}"#), Tri::False);
        assert_eq!(eval(p, r#"{"amount":5000.0000000000000001}"#), Tri::True);
        assert_eq!(eval(p, r#"{"amount":5001}"#), Tri::True);
        assert_eq!(eval(p, r#"{"amount":1e400}"#), Tri::True);
        assert_eq!(eval(p, r#"{}"#), Tri::Unknown);
    }

    #[test]
    fn kleene_connectives() {
        let t = r#"{"field":"t","op":"eq","value":true}"#;
        let f = r#"{"field":"t","op":"eq","value":false}"#;
        let u = r#"{"field":"u","op":"eq","value":1}"#;
        let e = r#"{"t":true}"#;
        assert_eq!(eval(&format!(r#"{{"all":[{t},{u}]}}"#), e), Tri::Unknown);
        assert_eq!(eval(&format!(r#"{{"all":[{f},{u}]}}"#), e), Tri::False);
        assert_eq!(eval(&format!(r#"{{"any":[{t},{u}]}}"#), e), Tri::True);
        assert_eq!(eval(&format!(r#"{{"any":[{f},{u}]}}"#), e), Tri::Unknown);
        assert_eq!(eval(&format!(r#"{{"not":{u}}}"#), e), Tri::Unknown);
        assert_eq!(eval(&format!(r#"{{"not":{f}}}"#), e), Tri::True);
        assert_eq!(eval(r#"{"all":[]}"#, e), Tri::True);
        assert_eq!(eval(r#"{"any":[]}"#, e), Tri::False);
    }

    #[test]
    fn values_nest_at_most_max_value_depth() {
        let deep =
            |n: usize| parse(format!("{}1{}", "[".repeat(n), "]".repeat(n)).as_bytes()).unwrap();
        assert!(check_numbers(&deep(MAX_VALUE_DEPTH)).is_ok());
        let err = check_numbers(&deep(MAX_VALUE_DEPTH + 1)).unwrap_err();
        assert!(
            err.to_string().starts_with("nested deeper than 64 levels"),
            "{err}"
        );
        let obj = parse(br#"{"a":{"b":{"c":1e99999999999999999999}}}"#).unwrap();
        let err = check_numbers(&obj).unwrap_err();
        assert!(
            matches!(err, ValueError::Number(DecimalError::ExponentRange(_))),
            "{err}"
        );
        assert!(err.to_string().contains("out of range"), "{err}");
    }

    #[test]
    fn equality_is_deep_and_typed() {
        let p = r#"{"field":"x","op":"eq","value":{"a":[1,2.0]}}"#;
        assert_eq!(eval(p, r#"{"x":{"a":[1.0,2]}}"#), Tri::True);
        assert_eq!(
            eval(r#"{"field":"x","op":"eq","value":1}"#, r#"{"x":true}"#),
            Tri::False
        );
        assert_eq!(
            eval(
                r#"{"field":"x","op":"in","value":[1,"a"]}"#,
                r#"{"x":1.00}"#
            ),
            Tri::True
        );
        assert_eq!(
            eval(
                r#"{"field":"x","op":"not_in","value":[1,"a"]}"#,
                r#"{"x":"b"}"#
            ),
            Tri::True
        );
    }

    #[test]
    fn json_keys_are_equal_exactly_where_json_eq_is() {
        let values = [
            "null",
            "true",
            "false",
            "0",
            "-0",
            "0.0",
            "0e5",
            "1",
            "1.0",
            "1e0",
            "10e-1",
            "0.1e1",
            "100",
            "1e2",
            "1.5",
            "15e-1",
            "-1",
            "-1.0",
            "1e400",
            "10e399",
            "\"1\"",
            "\"\"",
            "\"a\"",
            "[]",
            "[1]",
            "[1.0]",
            "[1,2]",
            "[2,1]",
            "[[1]]",
            "{}",
            "{\"a\":1}",
            "{\"a\":1.0}",
            "{\"a\":1,\"b\":2}",
            "{\"b\":2.0,\"a\":1e0}",
            "{\"a\":\"1\"}",
            "{\"b\":1}",
            "[{\"a\":[1]}]",
            "[{\"a\":[1.00]}]",
        ];
        let parsed: Vec<Value> = (values.iter())
            .map(|t| parse(t.as_bytes()).unwrap())
            .collect();
        for a in &parsed {
            for b in &parsed {
                assert_eq!(
                    json_eq(a, b),
                    JsonKey::of(a) == JsonKey::of(b),
                    "{a} and {b}"
                );
            }
        }
    }

    #[test]
    fn membership_is_by_exact_decimal_and_deep() {
        let p = r#"{"field":"x","op":"in","value":[1e2,"1",[1,2],{"a":1.5},null]}"#;
        for yes in [
            "100",
            "100.0",
            "1.00e2",
            "\"1\"",
            "[1.0,2e0]",
            "{\"a\":15e-1}",
            "null",
        ] {
            assert_eq!(eval(p, &format!(r#"{{"x":{yes}}}"#)), Tri::True, "{yes}");
        }
        for no in [
            "1",
            "\"100\"",
            "[2,1]",
            "{\"a\":1.5,\"b\":1}",
            "false",
            "100.0000000000000000001",
        ] {
            assert_eq!(eval(p, &format!(r#"{{"x":{no}}}"#)), Tri::False, "{no}");
        }
        let q = r#"{"field":"x","op":"not_in","value":[1e2]}"#;
        assert_eq!(eval(q, r#"{"x":100.000}"#), Tri::False);
        assert_eq!(eval(q, r#"{"x":101}"#), Tri::True);
    }

    #[test]
    fn strings_order_by_code_point() {
        let p = r#"{"field":"d","op":"lt","value":"2026-03-01"}"#;
        assert_eq!(eval(p, r#"{"d":"2026-02-28"}"#), Tri::True);
        assert_eq!(eval(p, r#"{"d":"2026-03-01"}"#), Tri::False);
    }

    #[test]
    fn ordering_a_string_against_a_number_is_a_mismatch() {
        let p = pred(r#"{"field":"amount","op":"gt","value":5000}"#);
        let err = p.eval(&env(r#"{"amount":"8400"}"#)).unwrap_err();
        assert_eq!(err.field, "amount");
        let p = pred(
            r#"{"any":[{"field":"t","op":"eq","value":1},{"field":"b","op":"lt","value":1}]}"#,
        );
        assert!(
            p.eval(&env(r#"{"t":1,"b":null}"#)).is_err(),
            "mismatch is reported even when any is TRUE"
        );
    }

    /// Only an ordering comparison meets a type mismatch: precheck leaves the code out of
    /// what it looks for in a rule without one, so this must hold for every value.
    #[test]
    fn a_predicate_that_orders_nothing_never_mismatches() {
        let values = [
            r#"null"#,
            "true",
            "1",
            "-0.5",
            r#""a""#,
            "[1]",
            r#"{"x":1}"#,
        ];
        for op in ["eq", "ne", "in", "not_in", "lt", "lte", "gt", "gte"] {
            for constant in values {
                let cmp = format!(r#"{{"field":"x","op":"{op}","value":{constant}}}"#);
                for text in [cmp.clone(), format!(r#"{{"not":{{"all":[{cmp}]}}}}"#)] {
                    let Ok(p) =
                        Predicate::parse(&parse(text.as_bytes()).unwrap(), DEFAULT_MAX_DEPTH)
                    else {
                        continue;
                    };
                    let ordering = ["lt", "lte", "gt", "gte"].contains(&op);
                    assert_eq!(p.orders(), ordering, "{text}");
                    for value in values {
                        let result = p.eval(&env(&format!(r#"{{"x":{value}}}"#)));
                        assert!(ordering || result.is_ok(), "{text} on {value}");
                    }
                }
            }
        }
    }

    #[test]
    fn malformed_predicates_are_refused() {
        for bad in [
            r#"{"field":"a","op":"gt"}"#,
            r#"{"field":"a","op":"gt","value":1,"extra":1}"#,
            r#"{"field":"a","op":"greater","value":1}"#,
            r#"{"field":"a","op":"in","value":1}"#,
            r#"{"all":[],"any":[]}"#,
            r#"{"all":{}}"#,
            r#"{"not":[]}"#,
            r#"{"field":"","op":"eq","value":1}"#,
            r#"{"field":1,"op":"eq","value":1}"#,
            r#"[]"#,
        ] {
            let v = parse(bad.as_bytes()).unwrap();
            assert!(Predicate::parse(&v, DEFAULT_MAX_DEPTH).is_err(), "{bad}");
        }
    }

    #[test]
    fn depth_limit_is_enforced() {
        let mut text = r#"{"field":"a","op":"eq","value":1}"#.to_string();
        for _ in 0..10 {
            text = format!(r#"{{"not":{text}}}"#);
        }
        let v = parse(text.as_bytes()).unwrap();
        assert!(Predicate::parse(&v, 11).is_ok());
        let err = Predicate::parse(&v, 10).unwrap_err();
        assert_eq!(err.problem, PredicateProblem::TooDeep(10));
        assert_eq!(
            err.to_string(),
            "/not/not/not/not/not/not/not/not/not/not: predicate nested deeper than 10 levels (raise it with --max-predicate-depth)"
        );
    }

    #[test]
    fn explain_shows_resolved_values() {
        let p = pred(
            r#"{"all":[{"field":"amount","op":"gt","value":5000},{"field":"c","op":"eq","value":"x"}]}"#,
        );
        assert_eq!(
            p.explain(&env(r#"{"amount":8400}"#)),
            r#"all(amount = 8400 gt 5000; c = ? eq "x")"#
        );
    }
}
