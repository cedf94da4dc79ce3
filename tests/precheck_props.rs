//! Property tests for precheck and pin over generated records, tool schemas and kept sets:
//! soundness against `check`, witnesses that `check` reproduces, and pin's promise. Rules
//! are scoped by names and globs, and the tools are names, globs (each standing for every
//! tool it covers) or, as without `--tools`, every name or glob the records give.
//!
//! Calls are sampled at and around every constant the generated predicates and effects
//! mention, and filtered by a small schema validator written here, independently of the
//! `schema` module, for the shapes this file generates.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use omission_gate::action::{Action, Tool};
use omission_gate::compaction::{Compaction, Retention};
use omission_gate::gate::{self, CheckOptions, Code, Outcome, Severity, Verdict};
use omission_gate::input;
use omission_gate::pin;
use omission_gate::precheck::{self, PrecheckOptions};
use omission_gate::record::{Limits, Store, glob_match};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Concrete tool names calls are sampled from: those a tool (a name or a glob) covers.
const NAMES: [&str; 7] = ["t1", "t2", "t3", "tx", "u1", "other", "x"];

/// The tools precheck and pin are given: two names, a glob and a name, or (`None`) every
/// name or glob the records give, without schemas.
fn tool_names() -> impl Strategy<Value = Option<[&'static str; 2]>> {
    prop_oneof![
        2 => Just(Some(["t1", "t2"])),
        1 => Just(Some(["t*", "t2"])),
        1 => Just(Some(["*", "t1"])),
        1 => Just(Some(["*1", "u*"])),
        2 => Just(None),
    ]
}

/// Fields predicates read: plain params, a dotted path, a fact-only field; `c` (which
/// overlaps `c.d`) is rare.
fn field() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        4 => Just("a"),
        3 => Just("b"),
        3 => Just("c.d"),
        2 => Just("e"),
        2 => Just("s"),
        1 => Just("c"),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (-1i64..4).prop_map(|n| json!(n)),
        1 => Just(json!(2.5)),
        1 => Just(json!(5000)),
        2 => prop::sample::select(vec!["", "x", "y", "x0"]).prop_map(|s| json!(s)),
        1 => any::<bool>().prop_map(|b| json!(b)),
        1 => Just(Value::Null),
    ]
}

fn constant() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => scalar(),
        1 => Just(json!([1])),
        1 => Just(json!({"d": 1})),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    (
        field(),
        prop::sample::select(vec!["eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in"]),
        constant(),
        prop::collection::vec(constant(), 0..3),
    )
        .prop_map(|(f, op, v, list)| {
            let v = if op == "in" || op == "not_in" {
                json!(list)
            } else {
                v
            };
            json!({"field": f, "op": op, "value": v})
        })
}

fn predicate() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(2, 6, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|ps| json!({"all": ps})),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|ps| json!({"any": ps})),
            inner.prop_map(|p| json!({"not": p})),
        ]
    })
}

/// A record body; `id`, `seq`, `supersedes` and `depends_on` are added when assembled.
fn body() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => Just(json!({"kind": "chatter", "text": "hi"})),
        4 => (field(), constant())
            .prop_map(|(f, v)| json!({"kind": "fact", "field": f, "value": v})),
        5 => (
            prop::sample::select(vec!["t1", "t2", "t*", "*", "other", "*1", "u*", "t?*"]),
            prop::sample::select(vec!["allow", "deny", "require_approval"]),
            predicate(),
        )
            .prop_map(|(s, e, p)| json!({"kind": "policy", "scope": s, "effect": e, "predicate": p})),
        2 => (prop::sample::select(vec!["t1", "t2", "t3"]), scalar(), prop::option::of(scalar()))
            .prop_map(|(t, a, b)| {
                let mut m = Map::new();
                m.insert("a".into(), a);
                if let Some(b) = b {
                    m.insert("b".into(), b);
                }
                json!({"kind": "effect", "tool": t, "match": m})
            }),
        1 => Just(json!({"kind": "summary", "text": "prose"})),
    ]
}

/// A generated schema for one param, and the validator for it.
#[derive(Debug, Clone)]
enum Prop {
    Number {
        integer: bool,
        min: Option<(i64, bool)>,
        max: Option<(i64, bool)>,
    },
    Str,
    Bool,
    Enum(Vec<Value>),
    Any,
}

impl Prop {
    fn json(&self) -> Value {
        match self {
            Prop::Number { integer, min, max } => {
                let mut m = Map::new();
                m.insert(
                    "type".into(),
                    json!(if *integer { "integer" } else { "number" }),
                );
                if let Some((v, excl)) = min {
                    let key = if *excl { "exclusiveMinimum" } else { "minimum" };
                    m.insert(key.into(), json!(v));
                }
                if let Some((v, excl)) = max {
                    let key = if *excl { "exclusiveMaximum" } else { "maximum" };
                    m.insert(key.into(), json!(v));
                }
                Value::Object(m)
            }
            Prop::Str => json!({"type": "string", "maxLength": 50}),
            Prop::Bool => json!({"type": "boolean"}),
            Prop::Enum(values) => json!({ "enum": values }),
            Prop::Any => json!({"description": "anything"}),
        }
    }

    fn admits(&self, v: &Value) -> bool {
        match self {
            Prop::Number { integer, min, max } => {
                let Some(x) = v.as_f64() else {
                    return false;
                };
                if *integer && x.fract() != 0.0 {
                    return false;
                }
                let lo =
                    min.is_none_or(|(m, excl)| if excl { x > m as f64 } else { x >= m as f64 });
                let hi =
                    max.is_none_or(|(m, excl)| if excl { x < m as f64 } else { x <= m as f64 });
                lo && hi
            }
            Prop::Str => v.as_str().is_some_and(|s| s.chars().count() <= 50),
            Prop::Bool => v.is_boolean(),
            Prop::Enum(values) => values.iter().any(|e| same(e, v)),
            Prop::Any => true,
        }
    }
}

/// JSON equality with numbers by value (the generated numbers are exact in f64).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same(p, q)))
        }
        _ => a == b,
    }
}

fn prop_schema() -> impl Strategy<Value = Prop> {
    let bound = prop::option::of((-1i64..4, any::<bool>()));
    prop_oneof![
        4 => (any::<bool>(), bound.clone(), bound).prop_map(|(integer, min, max)| Prop::Number { integer, min, max }),
        2 => Just(Prop::Str),
        1 => Just(Prop::Bool),
        2 => prop::collection::vec(scalar(), 1..4).prop_map(Prop::Enum),
        1 => Just(Prop::Any),
    ]
}

/// A tool's params schema: a few properties, `c` an object with `d`, the literal key
/// `c.d`, some required, maybe closed.
#[derive(Debug, Clone)]
struct ToolSchema {
    props: Vec<(&'static str, Prop)>,
    nested_d: Option<Prop>,
    required: Vec<&'static str>,
    closed: bool,
}

impl ToolSchema {
    fn json(&self) -> Value {
        let mut props = Map::new();
        for (k, p) in &self.props {
            props.insert((*k).into(), p.json());
        }
        if let Some(d) = &self.nested_d {
            props.insert(
                "c".into(),
                json!({"type": "object", "properties": {"d": d.json()}}),
            );
        }
        json!({
            "type": "object",
            "properties": props,
            "required": self.required,
            "additionalProperties": !self.closed,
        })
    }

    fn admits(&self, params: &Map<String, Value>) -> bool {
        if !self.required.iter().all(|k| params.contains_key(*k)) {
            return false;
        }
        params.iter().all(|(k, v)| {
            if let Some((_, p)) = self.props.iter().find(|(name, _)| name == k) {
                return p.admits(v);
            }
            if k == "c"
                && let Some(d) = &self.nested_d
            {
                return v
                    .as_object()
                    .is_some_and(|o| o.get("d").is_none_or(|x| d.admits(x)));
            }
            !self.closed
        })
    }
}

fn tool_schema() -> impl Strategy<Value = Option<ToolSchema>> {
    let keys = prop::sample::subsequence(vec!["a", "b", "c.d", "e", "s"], 0..=5);
    prop::option::of(
        (
            keys,
            prop::collection::vec(prop_schema(), 5),
            prop::option::of(prop_schema()),
            prop::collection::vec(any::<bool>(), 6),
            any::<bool>(),
        )
            .prop_map(|(keys, props, nested_d, req, closed)| {
                let props: Vec<(&str, Prop)> = keys.into_iter().zip(props).collect();
                let mut names: Vec<&str> = props.iter().map(|(k, _)| *k).collect();
                if nested_d.is_some() {
                    names.push("c");
                }
                let required = names
                    .into_iter()
                    .zip(req)
                    .filter(|(_, r)| *r)
                    .map(|(k, _)| k)
                    .collect();
                ToolSchema {
                    props,
                    nested_d,
                    required,
                    closed,
                }
            }),
    )
}

/// One generated case: a store, a kept mask, tool schemas and a sampling seed.
#[derive(Debug, Clone)]
struct Case {
    records: Vec<Value>,
    kept: Vec<bool>,
    schemas: Vec<Option<ToolSchema>>,
    tools: Option<[&'static str; 2]>,
    seed: u64,
    max_calls: usize,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(
            (
                body(),
                prop::option::of(0usize..12),
                prop::option::of(0usize..12),
            ),
            1..12,
        ),
        prop::collection::vec(any::<bool>(), 12),
        prop::collection::vec(tool_schema(), 2),
        tool_names(),
        any::<u64>(),
        prop_oneof![4 => Just(100_000usize), 1 => Just(3usize)],
    )
        .prop_map(|(bodies, kept, schemas, tools, seed, max_calls)| {
            let mut records: Vec<Value> = Vec::new();
            for (i, (mut b, sup, dep)) in bodies.into_iter().enumerate() {
                let id = format!("r{i}");
                let obj = b.as_object_mut().unwrap();
                obj.insert("id".into(), json!(id));
                obj.insert("seq".into(), json!(i + 1));
                let kind = obj["kind"].as_str().unwrap().to_string();
                if let Some(j) = sup.filter(|&j| j < i) {
                    let earlier = &records[j];
                    let same_kind = earlier["kind"] == json!(kind);
                    let same_field = kind != "fact" || earlier["field"] == obj["field"];
                    if (kind == "policy" || kind == "fact") && same_kind && same_field {
                        obj.insert("supersedes".into(), json!(format!("r{j}")));
                    }
                }
                if let Some(j) = dep.filter(|&j| j != i && j < 12)
                    && (kind == "policy" || kind == "fact")
                {
                    // depends_on must name an existing record: only earlier ones exist yet.
                    if j < i {
                        obj.insert("depends_on".into(), json!([format!("r{j}")]));
                    }
                }
                records.push(b);
            }
            let n = records.len();
            Case {
                records,
                kept: kept.into_iter().take(n).collect(),
                schemas,
                tools,
                seed,
                max_calls,
            }
        })
}

struct Loaded {
    store: Store,
    compaction: Compaction,
    /// The tools precheck and pin are given.
    tools: Vec<Tool>,
    /// The tools calls are sampled from (names or globs), with their schemas: the given
    /// ones, or without `--tools` every name or glob a policy scope or an effect gives,
    /// worked out here from the records.
    sampled: Vec<(String, Option<ToolSchema>)>,
}

fn load(case: &Case) -> Loaded {
    let text = json!({ "records": case.records }).to_string();
    let input = input::load("gen.json", text.as_bytes(), Limits::default())
        .unwrap_or_else(|e| panic!("generated input refused: {e}\n{text}"));
    let compaction = Compaction::from_mask(&input.store, Retention::Given, case.kept.clone());
    let (tools, sampled) = match case.tools {
        Some(names) => {
            let tools = names
                .iter()
                .zip(&case.schemas)
                .map(|(name, s)| {
                    let mut obj = json!({ "name": name });
                    if let Some(s) = s {
                        obj["input_schema"] = s.json();
                    }
                    Tool::from_json(&obj).unwrap()
                })
                .collect();
            let sampled = names
                .iter()
                .map(|n| n.to_string())
                .zip(case.schemas.iter().cloned())
                .collect();
            (tools, sampled)
        }
        None => {
            let mut given: Vec<String> = Vec::new();
            for r in &case.records {
                match r["kind"].as_str() {
                    Some("policy") => given.push(r["scope"].as_str().unwrap().to_string()),
                    Some("effect") => given.push(r["tool"].as_str().unwrap().to_string()),
                    _ => {}
                }
            }
            (
                input.tools_or_named(),
                given.into_iter().map(|g| (g, None)).collect(),
            )
        }
    };
    Loaded {
        store: input.store,
        compaction,
        tools,
        sampled,
    }
}

/// Every value the records mention, stepped around: n-1, n-0.5, n, n+0.5, n+1 for
/// numbers; each string, one after it, "" and "zz"; and a value of every other type.
fn boundary_values(records: &[Value]) -> Vec<Value> {
    fn walk(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Number(n) => {
                let x = n.as_f64().unwrap();
                for d in [-1.0, -0.5, 0.0, 0.5, 1.0] {
                    let y = x + d;
                    out.push(if y.fract() == 0.0 {
                        json!(y as i64)
                    } else {
                        json!(y)
                    });
                }
            }
            Value::String(s) => {
                out.push(json!(s));
                out.push(json!(format!("{s}0")));
                out.push(json!(format!("{s}\u{0}")));
            }
            Value::Array(items) => {
                out.push(v.clone());
                items.iter().for_each(|i| walk(i, out));
            }
            Value::Object(m) => {
                out.push(v.clone());
                m.values().for_each(|i| walk(i, out));
            }
            _ => out.push(v.clone()),
        }
    }
    let mut out = vec![
        Value::Null,
        json!(true),
        json!(false),
        json!(""),
        json!("zz"),
        json!([]),
        json!({}),
        json!(1e9),
        json!(-1e9),
    ];
    for r in records {
        for key in ["predicate", "match", "value"] {
            if let Some(v) = r.get(key) {
                walk(v, &mut out);
            }
        }
    }
    out
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// Calls of each tool inside its schema, built from the boundary values; a glob's calls
/// go to the tools it covers.
fn sample_calls(l: &Loaded, records: &[Value], seed: u64, n: usize) -> Vec<Action> {
    let values = boundary_values(records);
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    for (tool, schema) in &l.sampled {
        let covered: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|n| glob_match(tool, n))
            .collect();
        if covered.is_empty() {
            continue;
        }
        let mut made = 0;
        for _ in 0..n * 8 {
            if made == n {
                break;
            }
            let mut params = Map::new();
            for key in ["a", "b", "c.d", "e", "s", "zz"] {
                if !rng.next().is_multiple_of(3) {
                    params.insert(key.into(), rng.pick(&values).clone());
                }
            }
            match rng.next() % 4 {
                0 => {}
                1 => {
                    params.insert("c".into(), json!({ "d": rng.pick(&values).clone() }));
                }
                2 => {
                    params.insert("c".into(), json!({}));
                }
                _ => {
                    params.insert("c".into(), rng.pick(&values).clone());
                }
            }
            if schema.as_ref().is_some_and(|s| !s.admits(&params)) {
                continue;
            }
            made += 1;
            out.push(Action {
                tool: (*rng.pick(&covered)).to_string(),
                params,
            });
        }
    }
    out
}

fn run_precheck(l: &Loaded, compaction: &Compaction, max_calls: usize) -> Outcome {
    precheck::precheck(
        &l.store,
        compaction,
        &l.tools,
        PrecheckOptions {
            allow_unevaluable: false,
            max_calls,
        },
    )
}

fn describe(outcome: &Outcome) -> String {
    outcome
        .findings
        .iter()
        .map(|f| {
            format!(
                "  {} {:?} {}{}",
                f.code.as_str(),
                f.record,
                f.message,
                f.witness
                    .as_ref()
                    .map(|w| format!(" WITNESS {}", serde_json::to_string(&w.params).unwrap()))
                    .unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    /// Soundness: when precheck passes, `check` of every sampled call inside a tool's
    /// schema (a glob's calls going to tools it covers) has no block finding, and fails
    /// closed only on calls it fails closed on with nothing dropped.
    #[test]
    fn precheck_never_passes_what_check_blocks_or_errors(case in case()) {
        let l = load(&case);
        let pre = run_precheck(&l, &l.compaction, case.max_calls);
        if pre.verdict == Verdict::Pass {
            let everything =
                Compaction::from_mask(&l.store, Retention::Given, vec![true; l.store.len()]);
            for call in sample_calls(&l, &case.records, case.seed, 60) {
                let out = gate::check(&l.store, &l.compaction, &call, CheckOptions::default());
                let whatever = gate::check(&l.store, &everything, &call, CheckOptions::default());
                prop_assert!(
                    out.findings.iter().all(|f| f.severity != Severity::Block)
                        && (out.verdict != Verdict::Error || whatever.verdict == Verdict::Error),
                    "precheck passed but check of {} {} gives:\n{}\nprecheck said:\n{}",
                    call.tool,
                    serde_json::to_string(&call.params).unwrap(),
                    describe(&out),
                    describe(&pre)
                );
            }
        }
    }

    /// Every witness is inside its tool's schema, and `check` on it reports the finding
    /// precheck promised: a block on the same record for may-bind-some-action, the same
    /// error on the same record otherwise.
    #[test]
    fn every_witness_makes_check_report_that_finding(case in case()) {
        let l = load(&case);
        let pre = run_precheck(&l, &l.compaction, case.max_calls);
        for f in pre.findings.iter().filter(|f| f.witness.is_some()) {
            let w = f.witness.as_ref().unwrap();
            let inside = l.sampled.iter().any(|(t, s)| {
                glob_match(t, &w.tool) && s.as_ref().is_none_or(|s| s.admits(&w.params))
            });
            prop_assert!(inside, "witness outside every tool's schema: {} {:?}", w.tool, w.params);
            let out = gate::check(&l.store, &l.compaction, w, CheckOptions::default());
            let hit = out.findings.iter().any(|g| {
                g.record == f.record
                    && match f.code {
                        Code::MayBindSomeAction => g.severity == Severity::Block,
                        Code::FailsWhateverKept => g.severity == Severity::Error,
                        code => g.code == code,
                    }
            });
            if f.code == Code::FailsWhateverKept {
                // ... and with nothing dropped too: the compaction did not cause it.
                let everything =
                    Compaction::from_mask(&l.store, Retention::Given, vec![true; l.store.len()]);
                let out = gate::check(&l.store, &everything, w, CheckOptions::default());
                prop_assert!(
                    out.findings.iter().any(|g| g.record == f.record && g.severity == Severity::Error),
                    "a note's witness {} {} is decided with nothing dropped:\n{}",
                    w.tool,
                    serde_json::to_string(&w.params).unwrap(),
                    describe(&out)
                );
            }
            prop_assert!(
                hit,
                "witness {} {} of {} does not reproduce in check:\n{}",
                w.tool,
                serde_json::to_string(&w.params).unwrap(),
                f.code.as_str(),
                describe(&out)
            );
            if f.code == Code::MayBindSomeAction {
                prop_assert_ne!(out.verdict, Verdict::Pass);
            }
        }
    }

    /// For every kept set that contains pin's output, precheck never blocks, and `check`
    /// of any sampled call in the schema has no block finding.
    #[test]
    fn keeping_what_pin_pins_leaves_nothing_to_block(case in case()) {
        let l = load(&case);
        let pins = pin::pin(&l.store, &l.tools, case.max_calls);
        let mut mask = case.kept.clone();
        mask.resize(l.store.len(), false);
        for &p in &pins.positions {
            mask[p] = true;
        }
        let kept = Compaction::from_mask(&l.store, Retention::Given, mask);
        let pre = run_precheck(&l, &kept, case.max_calls);
        prop_assert!(
            pre.findings.iter().all(|f| f.severity != Severity::Block),
            "precheck blocks a kept set that contains pin's output:\n{}\npinned: {:?}",
            describe(&pre),
            pins.pinned
        );
        for call in sample_calls(&l, &case.records, case.seed, 40) {
            let out = gate::check(&l.store, &kept, &call, CheckOptions::default());
            prop_assert!(
                out.findings.iter().all(|f| f.severity != Severity::Block),
                "check blocks {} {} on a kept set that contains pin's output:\n{}",
                call.tool,
                serde_json::to_string(&call.params).unwrap(),
                describe(&out)
            );
        }
    }
}
