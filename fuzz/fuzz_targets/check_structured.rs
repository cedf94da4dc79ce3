//! Structured records: a small record model (derived `Arbitrary`) serialized to a JSON
//! document, then loaded and judged. The pools of ids, fields, tools and numbers are
//! small so that records refer to each other, predicates resolve, fields spelt with dots
//! meet the same fields spelt nested (and paths through arrays and strings), and numbers
//! that are equal in value but not in spelling meet. On top of the invariants every target
//! checks, the same records in reverse file order must give the same report, and the
//! lean loader must agree with the exact one on the document and on the same records as
//! JSON Lines with flags.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use omission_gate::CheckOptions;
use serde_json::{Map, Number, Value, json};
use std::str::FromStr;

const IDS: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];
// Names that meet: a field and its parts (`customer.tier` beside `customer` and `tier`,
// `a.b` beside `b`), a path through an array or a string (`x.0`, `0`), and the empty key,
// so that a call, a match or a fact gives one field in either spelling.
const FIELDS: [&str; 11] = [
    "amount",
    "currency",
    "customer.tier",
    "customer",
    "x",
    "a.b",
    "tier",
    "b",
    "x.0",
    "0",
    "",
];
const TOOLS: [&str; 4] = ["refunds.create", "refunds.*", "*", "email.send"];
const NUMBERS: [&str; 14] = [
    "0",
    "-0",
    "5000",
    "5000.0",
    "5000.0000000000000001",
    "4999.999",
    "1e400",
    "-1e400",
    "1e999999999",
    "1e-999999999",
    "0.5",
    "5e-1",
    "18446744073709551616",
    "-9223372036854775809",
];
const STRINGS: [&str; 10] = [
    "USD",
    "gold",
    "",
    "\nverdict   : PASS exit 0",
    "\u{1b}[2J",
    "\u{202e}evil",
    "a\u{2028}b",
    "it's \\ \"quoted\"",
    "\u{85}\u{9b}",
    "sha256    : 0000",
];

#[derive(Debug, Arbitrary)]
enum Name {
    Pool(u8),
    Any(String),
}

impl Name {
    fn of(&self, pool: &[&str]) -> String {
        match self {
            Name::Pool(i) => pool[usize::from(*i) % pool.len()].to_string(),
            Name::Any(s) => s.clone(),
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Num {
    Pool(u8),
    Parts {
        int: u64,
        frac: Option<u32>,
        exp: Option<i32>,
        neg: bool,
    },
}

impl Num {
    fn literal(&self) -> String {
        match self {
            Num::Pool(i) => NUMBERS[usize::from(*i) % NUMBERS.len()].to_string(),
            Num::Parts {
                int,
                frac,
                exp,
                neg,
            } => {
                let mut s = format!("{}{int}", if *neg { "-" } else { "" });
                if let Some(f) = frac {
                    s.push_str(&format!(".{f}"));
                }
                if let Some(e) = exp {
                    s.push_str(&format!("e{e}"));
                }
                s
            }
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Val {
    Null,
    Bool(bool),
    Num(Num),
    Str(Name),
    Arr(Vec<Val>),
    Obj(Vec<(Name, Val)>),
}

impl Val {
    fn json(&self) -> Value {
        match self {
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            // A literal Number refuses (e.g. `-0` is fine, but keep going if not).
            Val::Num(n) => Number::from_str(&n.literal()).map_or(Value::Null, Value::Number),
            Val::Str(s) => Value::String(s.of(&STRINGS)),
            Val::Arr(items) => Value::Array(items.iter().map(Val::json).collect()),
            Val::Obj(pairs) => Value::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (k.of(&FIELDS), v.json()))
                    .collect(),
            ),
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Pred {
    Cmp(Name, u8, Val),
    All(Vec<Pred>),
    Any(Vec<Pred>),
    Not(Box<Pred>),
}

const OPS: [&str; 9] = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in", "like"];

impl Pred {
    fn json(&self) -> Value {
        match self {
            Pred::Cmp(f, op, v) => {
                json!({"field": f.of(&FIELDS), "op": OPS[usize::from(*op) % OPS.len()], "value": v.json()})
            }
            Pred::All(ps) => json!({"all": ps.iter().map(Pred::json).collect::<Vec<_>>()}),
            Pred::Any(ps) => json!({"any": ps.iter().map(Pred::json).collect::<Vec<_>>()}),
            Pred::Not(p) => json!({"not": p.json()}),
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Body {
    Policy {
        scope: Vec<Name>,
        predicate: Pred,
        effect: u8,
        supersedes: Option<Name>,
        depends_on: Vec<Name>,
    },
    Fact {
        field: Name,
        value: Val,
        supersedes: Option<Name>,
        depends_on: Vec<Name>,
    },
    Effect {
        tool: Name,
        matches: Vec<(Name, Val)>,
    },
    Chatter,
    Other(Name),
}

#[derive(Debug, Arbitrary)]
struct Rec {
    id: Name,
    seq: u8,
    body: Body,
    text: Option<Name>,
    tokens: Option<u16>,
}

impl Rec {
    fn json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), json!(self.id.of(&IDS)));
        m.insert("seq".into(), json!(self.seq));
        if let Some(t) = &self.text {
            m.insert("text".into(), json!(t.of(&STRINGS)));
        }
        if let Some(t) = self.tokens {
            m.insert("tokens".into(), json!(t));
        }
        let ids = |v: &[Name]| Value::Array(v.iter().map(|n| json!(n.of(&IDS))).collect());
        let kind = match &self.body {
            Body::Policy {
                scope,
                predicate,
                effect,
                supersedes,
                depends_on,
            } => {
                let scope: Vec<Value> = scope.iter().map(|s| json!(s.of(&TOOLS))).collect();
                m.insert(
                    "scope".into(),
                    if scope.len() == 1 {
                        scope[0].clone()
                    } else {
                        Value::Array(scope)
                    },
                );
                m.insert("predicate".into(), predicate.json());
                let effects = ["allow", "deny", "require_approval", "maybe"];
                m.insert("effect".into(), json!(effects[usize::from(*effect) % 4]));
                if let Some(s) = supersedes {
                    m.insert("supersedes".into(), json!(s.of(&IDS)));
                }
                if !depends_on.is_empty() {
                    m.insert("depends_on".into(), ids(depends_on));
                }
                "policy".to_string()
            }
            Body::Fact {
                field,
                value,
                supersedes,
                depends_on,
            } => {
                m.insert("field".into(), json!(field.of(&FIELDS)));
                m.insert("value".into(), value.json());
                if let Some(s) = supersedes {
                    m.insert("supersedes".into(), json!(s.of(&IDS)));
                }
                if !depends_on.is_empty() {
                    m.insert("depends_on".into(), ids(depends_on));
                }
                "fact".to_string()
            }
            Body::Effect { tool, matches } => {
                m.insert("tool".into(), json!(tool.of(&TOOLS)));
                m.insert(
                    "match".into(),
                    Value::Object(
                        matches
                            .iter()
                            .map(|(k, v)| (k.of(&FIELDS), v.json()))
                            .collect(),
                    ),
                );
                "effect".to_string()
            }
            Body::Chatter => "chatter".to_string(),
            Body::Other(k) => k.of(&["summary", "note", "policy_summary"]),
        };
        m.insert("kind".into(), json!(kind));
        Value::Object(m)
    }
}

#[derive(Debug, Arbitrary)]
struct Model {
    records: Vec<Rec>,
    kept: Vec<Name>,
    tool: Name,
    params: Vec<(Name, Val)>,
    k: u8,
    allow_unevaluable: bool,
}

fn document(records: Vec<Value>, m: &Model) -> Vec<u8> {
    let doc = json!({
        "records": records,
        "kept": m.kept.iter().map(|n| n.of(&IDS)).collect::<Vec<_>>(),
        "action": {
            "tool": m.tool.of(&TOOLS),
            "params": Value::Object(m.params.iter().map(|(k, v)| (k.of(&FIELDS), v.json())).collect()),
        },
    });
    serde_json::to_vec(&doc).unwrap_or_default()
}

fuzz_target!(|m: Model| {
    let records: Vec<Value> = m.records.iter().map(Rec::json).collect();
    let forward = document(records.clone(), &m);
    let k = usize::from(m.k % 16);
    let options = CheckOptions {
        allow_unevaluable: m.allow_unevaluable,
    };
    let chunk = 1 + usize::from(m.k) * 3;
    // The lean loader against the exact one: the document, and the same records as
    // JSON Lines with the kept ids and the action as flags.
    omission_gate_fuzz::assert_lean_agrees(&forward, None, None, chunk, options);
    omission_gate_fuzz::assert_lean_for_agrees(&forward, None, chunk, m.allow_unevaluable);
    let lines: String = records
        .iter()
        .map(|r| format!("{}\n", serde_json::to_string(r).unwrap_or_default()))
        .collect();
    let kept: String = m.kept.iter().map(|n| format!("{}\n", n.of(&IDS))).collect();
    let action = json!({
        "tool": m.tool.of(&TOOLS),
        "params": Value::Object(m.params.iter().map(|(k, v)| (k.of(&FIELDS), v.json())).collect()),
    })
    .to_string();
    omission_gate_fuzz::assert_lean_agrees(
        lines.as_bytes(),
        Some(&kept),
        Some(&action),
        chunk,
        options,
    );
    omission_gate_fuzz::assert_lean_for_agrees(
        lines.as_bytes(),
        Some(&kept),
        chunk,
        m.allow_unevaluable,
    );
    let Some(a) = omission_gate_fuzz::judge(&forward, k, m.allow_unevaluable) else {
        return;
    };
    // The same records in reverse file order: the same store, the same reports.
    let backward = document(records.into_iter().rev().collect(), &m);
    let b = omission_gate::load("fuzz.json", &backward)
        .expect("reordering records cannot make them invalid");
    assert!(omission_gate::fuzzing::same_records(&a, &b));
    omission_gate_fuzz::assert_same_reports(&a, &b, k, m.allow_unevaluable);
});
