//! Property tests over stores and calls whose fields are spelt both ways, as keys with
//! dots and as paths through nested objects (mixed, with arrays on paths and dots
//! escaped as `\u002e` in the JSON text): respelling a call, an effect's `match` or a
//! fact's value never changes what `check` says; precheck passes only what `check`
//! passes on the calls a schema admits, and keeping what `pin` pins leaves precheck
//! nothing to block; the lean loader reports byte for byte what the exact one does.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use omission_gate::{
    Action, CheckOptions, Code, Format, Input, PrecheckOptions, Report, Retention, Severity, Tool,
    Verdict,
};
use proptest::prelude::*;
use serde_json::{Value, json};

mod common;

use common::strategies::spelling::{
    Body, Case, FIELDS, FactValue, Rng, SCHEMAS, Spelling, TOOLS, Tree, admits, case, escape_dots,
    leaves,
};

/// The records as a document, dots in its strings escaped as `rng` picks.
fn document(records: &[Value], rng: &mut Rng) -> String {
    escape_dots(&json!({ "records": records }).to_string(), rng)
}

fn load(records: &[Value], rng: &mut Rng) -> Input {
    let text = document(records, rng);
    omission_gate::load("gen.json", text.as_bytes())
        .unwrap_or_else(|e| panic!("generated input refused: {e}\n{text}"))
}

fn check(input: &Input, kept: &[String], call: &Action) -> Report {
    omission_gate::check(
        input,
        Retention::Given,
        Some(kept),
        call,
        CheckOptions::default(),
    )
    .unwrap_or_else(|e| panic!("check refuses {call:?}: {e}"))
}

/// What a report says, without the words: the verdict and each finding's code, severity
/// and record (a message quotes the params and the match as spelt).
fn gist(report: &Report) -> (Verdict, Vec<(String, Severity, Option<String>)>) {
    let mut findings: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.code.as_str().to_string(), f.severity, f.record.clone()))
        .collect();
    findings.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    (report.verdict, findings)
}

fn describe(report: &Report) -> String {
    String::from_utf8(report.render(Format::Text)).unwrap()
}

fn tools(case: &Case) -> Vec<Tool> {
    TOOLS
        .iter()
        .zip(case.schemas)
        .map(|(name, s)| {
            let mut obj = json!({ "name": name });
            if let Some(s) = SCHEMAS[s] {
                obj["input_schema"] = serde_json::from_str(s).unwrap();
            }
            Tool::from_json(&obj).unwrap()
        })
        .collect()
}

fn precheck(input: &Input, kept: &[String], tools: &[Tool]) -> Report {
    let options = PrecheckOptions::default();
    omission_gate::precheck(input, Retention::Given, Some(kept), Some(tools), options).unwrap()
}

/// Calls of each tool inside its schema: fields of [`FIELDS`] with leaf values (and now
/// and then values the records compare with), each call spelt its own way.
fn sample_calls(case: &Case, seed: u64, n: usize) -> Vec<Action> {
    let mut rng = Rng::new(seed);
    let mut values = leaves();
    values.extend([json!({"c": 1}), json!(4), json!("y")]);
    let mut out = Vec::new();
    for (tool, schema) in TOOLS.iter().zip(case.schemas) {
        let mut made = 0;
        for _ in 0..n * 10 {
            if made == n {
                break;
            }
            let given = (0..rng.next() % 4)
                .map(|_| (*rng.pick(&FIELDS), rng.pick(&values).clone()))
                .collect();
            let params = Tree::of(given).spell(&mut rng);
            if !admits(schema, &params) {
                continue;
            }
            made += 1;
            out.push(Action {
                tool: (*tool).to_string(),
                params,
            });
        }
    }
    out
}

/// True when a rule reads a field above one the call or a fact's value gives (`a` for
/// `a.b`): a spelling that gives the part apart leaves it undecided.
fn reads_above(case: &Case) -> bool {
    let (records, _) = case.render(Spelling {
        call: 0,
        effects: 0,
        facts: 0,
    });
    let mut read = Vec::new();
    fn fields(p: &Value, out: &mut Vec<String>) {
        match p {
            Value::Object(m) if m.contains_key("field") => {
                out.push(m["field"].as_str().unwrap().to_string())
            }
            Value::Object(m) => m.values().for_each(|v| fields(v, out)),
            Value::Array(items) => items.iter().for_each(|v| fields(v, out)),
            _ => {}
        }
    }
    for r in &records {
        if let Some(p) = r.get("predicate") {
            fields(p, &mut read);
        }
    }
    // What the call and the facts give, each as whole fields.
    let mut given: Vec<String> = case.call.0.iter().map(|(f, _)| f.clone()).collect();
    for b in &case.bodies {
        if let Body::Fact(field, FactValue::Object(t)) = b {
            given.extend(t.0.iter().map(|(f, _)| format!("{field}.{f}")));
        }
    }
    given
        .iter()
        .any(|g| read.iter().any(|f| g.starts_with(&format!("{f}."))))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The same store and call, the call's params, the effects' `match` or the facts'
    /// values (as `which` picks) spelt anew, and dots escaped anew in the JSON text:
    /// `check` gives the same verdict and the same findings.
    #[test]
    fn respelling_never_changes_the_verdict(
        case in case(),
        a in any::<(u64, u64, u64, u64)>(),
        b in any::<(u64, u64, u64, u64)>(),
        which in 1u8..8,
    ) {
        let first = Spelling { call: a.0, effects: a.1, facts: a.2 };
        let second = Spelling {
            call: if which & 1 != 0 { b.0 } else { a.0 },
            effects: if which & 2 != 0 { b.1 } else { a.1 },
            facts: if which & 4 != 0 { b.2 } else { a.2 },
        };
        let (_, kept) = case.ids();
        let (records_a, call_a) = case.render(first);
        let (records_b, call_b) = case.render(second);
        let one = check(&load(&records_a, &mut Rng::new(a.3)), &kept, &call_a);
        let two = check(&load(&records_b, &mut Rng::new(b.3)), &kept, &call_b);
        if reads_above(&case) {
            // A rule reads a field the call gives a part of: a spelling that gives that
            // part apart leaves the field undecided (UNKNOWN). Never a PASS where the
            // other spelling blocks.
            let verdicts = [one.verdict, two.verdict];
            prop_assert!(
                verdicts != [Verdict::Pass, Verdict::Block] && verdicts != [Verdict::Block, Verdict::Pass],
                "spelt one way:\n{}\n{}\nthe other:\n{}\n{}",
                document(&records_a, &mut Rng::new(0)),
                describe(&one),
                document(&records_b, &mut Rng::new(0)),
                describe(&two)
            );
            return Ok(());
        }
        prop_assert_eq!(
            gist(&one),
            gist(&two),
            "spelt one way:\n{}\n{}\nthe other:\n{}\n{}",
            document(&records_a, &mut Rng::new(0)),
            describe(&one),
            document(&records_b, &mut Rng::new(0)),
            describe(&two)
        );
    }

    /// When precheck passes, `check` of every sampled call inside its tool's schema (in
    /// any spelling) has no block finding, and fails closed only where it does with
    /// nothing dropped.
    #[test]
    fn precheck_never_passes_what_check_blocks(
        case in case(),
        spelling in any::<(u64, u64, u64)>(),
        seed in any::<u64>(),
    ) {
        let (ids, kept) = case.ids();
        let (records, _) = case.render(Spelling { call: 0, effects: spelling.0, facts: spelling.1 });
        let input = load(&records, &mut Rng::new(spelling.2));
        let tools = tools(&case);
        let pre = precheck(&input, &kept, &tools);
        if pre.verdict == Verdict::Pass {
            for call in sample_calls(&case, seed, 40) {
                let out = check(&input, &kept, &call);
                let whatever = check(&input, &ids, &call);
                prop_assert!(
                    out.findings.iter().all(|f| f.severity != Severity::Block)
                        && (out.verdict != Verdict::Error || whatever.verdict == Verdict::Error),
                    "precheck passed but check of {} {} gives:\n{}\non\n{}",
                    call.tool,
                    serde_json::to_string(&call.params).unwrap(),
                    describe(&out),
                    document(&records, &mut Rng::new(0))
                );
            }
        }
    }

    /// Keeping what `pin` pins (beside what the case keeps), precheck has nothing to
    /// block, and passes whenever it passes with every record kept.
    #[test]
    fn keeping_what_pin_pins_makes_precheck_pass(
        case in case(),
        spelling in any::<(u64, u64, u64)>(),
    ) {
        let (ids, mut kept) = case.ids();
        let (records, _) = case.render(Spelling { call: 0, effects: spelling.0, facts: spelling.1 });
        let input = load(&records, &mut Rng::new(spelling.2));
        let tools = tools(&case);
        let pins = omission_gate::pin(&input, Some(&tools), None, Default::default()).unwrap();
        kept.extend(pins.pinned.iter().flatten().map(|p| p.id.clone()));
        let pre = precheck(&input, &kept, &tools);
        let all = precheck(&input, &ids, &tools);
        // Pin promises no block, not a PASS: precheck may still fail closed where it
        // cannot decide (`undecided`), or on a kept rule that can never bind, which pin
        // does not pin with its facts, read on an older fact the compaction kept
        // (`type-mismatch` under this compaction only).
        let decided = pre.verdict == Verdict::Pass
            || pre.findings.iter().all(|f| {
                f.severity != Severity::Error || matches!(f.code, Code::Undecided | Code::TypeMismatch)
            });
        prop_assert!(
            pre.findings.iter().all(|f| f.severity != Severity::Block)
                && (all.verdict != Verdict::Pass || decided),
            "kept {:?} (with pin's) gives\n{}\nevery record kept gives\n{}\non\n{}",
            kept,
            describe(&pre),
            describe(&all),
            document(&records, &mut Rng::new(0))
        );
    }

    /// The store as JSON Lines, dots escaped now and then, padded with chatter and cut
    /// into two chunks at a line end: the lean loader's report is the exact loader's,
    /// byte for byte, for check (the action's dots escaped too), precheck and pin, or
    /// it leaves the input to the exact loader.
    #[test]
    fn the_lean_loader_reads_both_spellings_as_the_exact_one(
        case in case(),
        spelling in any::<(u64, u64, u64, u64)>(),
        padding in 0usize..40,
        split in any::<usize>(),
    ) {
        let (_, kept) = case.ids();
        let (records, call) = case.render(Spelling { call: spelling.0, effects: spelling.1, facts: spelling.2 });
        let mut rng = Rng::new(spelling.3);
        let mut text: String = records
            .iter()
            .map(|r| format!("{}\n", escape_dots(&r.to_string(), &mut rng)))
            .collect();
        let top = records.len() as u64 * 2 + 1;
        for i in 0..padding as u64 {
            text.push_str(&format!(
                "{{\"id\":\"pad{i}\",\"seq\":{},\"kind\":\"chatter\",\"text\":\"padding\"}}\n",
                top + i
            ));
        }
        let action = escape_dots(
            &json!({ "tool": call.tool, "params": call.params }).to_string(),
            &mut rng,
        );
        let kept = kept.join("\n");
        let ends: Vec<usize> = text.match_indices('\n').map(|(i, _)| i + 1).collect();
        let cut = ends[split % ends.len()];
        let chunks = vec![text.as_bytes()[..cut].to_vec(), text.as_bytes()[cut..].to_vec()];
        use omission_gate::fuzzing::{Ask, exact_report, lean_report};
        for ask in [
            Ask::Check(Some(&action), CheckOptions::default()),
            Ask::Precheck(PrecheckOptions::default()),
            Ask::Pin(Default::default()),
        ] {
            let exact = exact_report(text.as_bytes(), Some(&kept), ask);
            if let Some(lean) = lean_report(chunks.clone(), Some(&kept), ask) {
                prop_assert!(exact.is_ok(), "lean read what exact refused: {:?}\n{}", exact.err(), text);
                prop_assert_eq!(
                    String::from_utf8(lean.render(Format::Json)).unwrap(),
                    String::from_utf8(exact.unwrap().render(Format::Json)).unwrap(),
                    "{:?}\n{}\n{}", ask, action, text
                );
            }
        }
    }
}
