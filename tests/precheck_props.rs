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

use omission_gate::{
    Action, CheckOptions, Code, Input, InputError, PrecheckOptions, Reason, Report, Retention,
    Severity, Tool, Verdict,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

mod common;

use common::strategies::precheck::{Case, ToolSchema, case};

/// Concrete tool names calls are sampled from: those a tool (a name or a glob) covers.
const NAMES: [&str; 7] = ["t1", "t2", "t3", "tx", "u1", "other", "x"];

struct Loaded {
    input: Input,
    /// Every record's id, in `seq` order (the case's order, which its kept mask follows).
    ids: Vec<String>,
    /// The ids the case keeps.
    kept: Vec<String>,
    /// The tools precheck and pin are given (none: every name or glob the records give).
    tools: Option<Vec<Tool>>,
    /// The tools calls are sampled from (names or globs), with their schemas: the given
    /// ones, or without `--tools` every name or glob a policy scope or an effect gives,
    /// worked out here from the records.
    sampled: Vec<(String, Option<ToolSchema>)>,
}

fn load(case: &Case) -> Loaded {
    let text = json!({ "records": case.records }).to_string();
    let input = omission_gate::load("gen.json", text.as_bytes())
        .unwrap_or_else(|e| panic!("generated input refused: {e}\n{text}"));
    let ids: Vec<String> = case
        .records
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let kept = kept_ids(&ids, &case.kept);
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
            // With no harness named, a tool whose name covers an MCP tool's as Claude Code
            // and Codex give it (`*1` covers `mcp__1`) is bounded by no schema. (Of these
            // names, only one that begins with `*` can.)
            let mut sampled: Vec<(String, Option<ToolSchema>)> = names
                .iter()
                .map(|n| n.to_string())
                .zip(case.schemas.iter().cloned())
                .map(|(n, s)| {
                    let unbounded = glob_match(&n, &format!("mcp__{}", n.replace('*', "")));
                    (n, s.filter(|_| !unbounded))
                })
                .collect();
            // A list never judges fewer tools than the records name (SPEC 2.3): a name
            // or glob no listed one covers stands, with any params, for the names it
            // covers that no listed one does.
            let unlisted = named(&case.records)
                .into_iter()
                .filter(|g| !names.iter().any(|n| glob_match(n, g)));
            let unlisted: Vec<String> = unlisted.collect();
            sampled.extend(unlisted.into_iter().map(|g| (g, None)));
            (Some(tools), sampled)
        }
        None => (
            None,
            named(&case.records)
                .into_iter()
                .map(|g| (g, None))
                .collect(),
        ),
    };
    Loaded {
        input,
        ids,
        kept,
        tools,
        sampled,
    }
}

/// The ids a mask over them keeps (a short mask keeps nothing past its end).
fn kept_ids(ids: &[String], mask: &[bool]) -> Vec<String> {
    ids.iter()
        .zip(mask)
        .filter(|(_, k)| **k)
        .map(|(id, _)| id.clone())
        .collect()
}

/// True when `name` matches `pattern`, a name or a glob where `*` matches any run of
/// characters (dots included).
fn glob_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<String> = pattern.split('*').map(regex::escape).collect();
    regex::Regex::new(&format!("(?s)^{}$", parts.join(".*")))
        .unwrap()
        .is_match(name)
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
/// Every name or glob a policy scope or an effect gives, worked out here from the records.
fn named(records: &[Value]) -> Vec<String> {
    let mut given: Vec<String> = Vec::new();
    for r in records {
        match r["kind"].as_str() {
            Some("policy") => given.push(r["scope"].as_str().unwrap().to_string()),
            Some("effect") => given.push(r["tool"].as_str().unwrap().to_string()),
            _ => {}
        }
    }
    given
}

fn sample_calls(l: &Loaded, records: &[Value], seed: u64, n: usize) -> Vec<Action> {
    let values = boundary_values(records);
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    for (tool, schema) in &l.sampled {
        // A tool judged beside a list stands for the names no listed tool covers.
        let listed = |name: &str| {
            schema.is_none()
                && l.tools.as_ref().is_some_and(|ts| {
                    !ts.iter().any(|t| &t.name == tool)
                        && ts.iter().any(|t| glob_match(&t.name, name))
                })
        };
        let covered: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|n| glob_match(tool, n) && !listed(n))
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

fn run_precheck(l: &Loaded, kept: &[String], max_calls: usize) -> Report {
    let options = PrecheckOptions {
        max_calls,
        ..PrecheckOptions::default()
    };
    omission_gate::precheck(
        &l.input,
        Retention::Given,
        Some(kept),
        l.tools.as_deref(),
        options,
    )
    .unwrap()
}

/// `check` of `call` with `kept` kept.
fn run_check(l: &Loaded, kept: &[String], call: &Action) -> Report {
    judged(l, kept, call).unwrap_or_else(|| panic!("check refuses the call {call:?}"))
}

/// `check` of a sampled `call` with `kept` kept; `None` when the call itself is refused
/// (params that give a dotted field two values): the gate denies it whatever is kept,
/// so it is never a PASS to miss.
fn judged(l: &Loaded, kept: &[String], call: &Action) -> Option<Report> {
    let options = CheckOptions::default();
    match omission_gate::check(&l.input, Retention::Given, Some(kept), call, options) {
        Ok(report) => Some(report),
        Err(InputError::Invalid { reason, .. }) if matches!(*reason, Reason::Action(_)) => None,
        Err(e) => panic!("{e}"),
    }
}

fn describe(report: &Report) -> String {
    report
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
        let pre = run_precheck(&l, &l.kept, case.max_calls);
        if pre.verdict == Verdict::Pass {
            for call in sample_calls(&l, &case.records, case.seed, 60) {
                let Some(out) = judged(&l, &l.kept, &call) else {
                    continue;
                };
                let whatever = run_check(&l, &l.ids, &call);
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
        let pre = run_precheck(&l, &l.kept, case.max_calls);
        for f in pre.findings.iter().filter(|f| f.witness.is_some()) {
            let w = f.witness.as_ref().unwrap();
            let inside = l.sampled.iter().any(|(t, s)| {
                glob_match(t, &w.tool) && s.as_ref().is_none_or(|s| s.admits(&w.params))
            });
            prop_assert!(inside, "witness outside every tool's schema: {} {:?}", w.tool, w.params);
            let out = run_check(&l, &l.kept, w);
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
                let out = run_check(&l, &l.ids, w);
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
        let pins = omission_gate::pin(&l.input, l.tools.as_deref(), None, pin_options(case.max_calls)).unwrap();
        let pinned: Vec<String> = pins.pinned.iter().flatten().map(|p| p.id.clone()).collect();
        let mut kept = l.kept.clone();
        kept.extend(pinned.iter().cloned());
        let pre = run_precheck(&l, &kept, case.max_calls);
        prop_assert!(
            pre.findings.iter().all(|f| f.severity != Severity::Block),
            "precheck blocks a kept set that contains pin's output:\n{}\npinned: {:?}",
            describe(&pre),
            pinned
        );
        for call in sample_calls(&l, &case.records, case.seed, 40) {
            let Some(out) = judged(&l, &kept, &call) else {
                continue;
            };
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

fn pin_options(max_calls: usize) -> omission_gate::PinOptions {
    omission_gate::PinOptions {
        max_calls,
        ..Default::default()
    }
}
