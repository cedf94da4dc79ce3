//! Report integrity, as properties over generated input: no string in the
//! input (ids, text, values, field names, kinds, tool names) can add, hide or change a
//! report line or put a terminal control character in the output, in either format;
//! and `verify` detects any single-byte change to a report.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use omission_gate::{CheckOptions, Format, Mode, Report, Retention, Severity, Verdict, verify};
use proptest::prelude::*;
use serde_json::{Value, json};

mod common;

use common::strategies::hostile::{Scenario, scenario};

/// Characters a report must never carry, written out independently of the library:
/// C0 controls but `\n`, DEL, C1 controls, line/paragraph separators, bidi controls
/// (embeddings, overrides, isolates, marks) and the BOM.
fn forbidden(c: char) -> bool {
    (c < ' ' && c != '\n')
        || ('\u{7f}'..='\u{9f}').contains(&c)
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{feff}'
        )
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

impl Scenario {
    /// A document that exercises every kind of finding text: a restrictive rule, a
    /// fact it reads, an allow rule and the policy that revokes it, an effect, an
    /// unevaluable record, a derived record; the action calls the attacker's tool.
    fn document(&self) -> Vec<u8> {
        let [p, f, s, e, a, o] = &self.ids;
        let records = json!([
            {"id": f, "seq": 1, "kind": "fact", "field": self.field, "value": self.value,
             "text": self.texts[0]},
            {"id": p, "seq": 2, "kind": "policy", "scope": [self.tool, "*"],
             "predicate": {"any": [
                 {"field": self.field, "op": "eq", "value": self.value},
                 {"field": self.param, "op": "gt", "value": 5000},
                 {"field": format!("{}.{}", self.param, self.field), "op": "lt", "value": self.value}
             ]},
             "effect": "require_approval", "text": self.texts[1], "depends_on": [f]},
            {"id": s, "seq": 3, "kind": self.kind, "text": self.texts[2]},
            {"id": e, "seq": 4, "kind": "effect", "tool": self.tool,
             "match": {self.param.clone(): self.amount}},
            {"id": o, "seq": 5, "kind": "policy", "scope": self.tool,
             "predicate": {"any": [{"all": []}, {"field": self.field, "op": "ne", "value": self.value}]},
             "effect": "allow", "depends_on": [f]},
            {"id": a, "seq": 6, "kind": "policy", "scope": self.tool,
             "predicate": {"field": self.field, "op": "ne", "value": self.value},
             "effect": "allow", "supersedes": o},
        ]);
        let kept: Vec<&String> = self
            .ids
            .iter()
            .zip(self.keep)
            .filter(|(_, k)| *k)
            .map(|(id, _)| id)
            .collect();
        let doc = json!({
            "records": records,
            "kept": kept,
            "action": {"tool": self.tool, "params": {self.param.clone(): self.amount, "note": self.value}},
        });
        serde_json::to_vec(&doc).unwrap()
    }

    /// The report the CLI would print for this scenario (an ERROR report for input
    /// the gate refuses, as the CLI does).
    fn report(&self) -> Report {
        let options = CheckOptions {
            allow_unevaluable: self.allow_unevaluable,
        };
        let judged = omission_gate::load("in.json", &self.document()).and_then(|i| {
            let action = i.action.clone().unwrap();
            omission_gate::check(&i, Retention::Given, None, &action, options)
        });
        judged.unwrap_or_else(|e| Report::invalid_input(Mode::Check, &e.to_string()))
    }
}

/// The labels the text report must have, line by line, derived from the report data.
fn expected_labels(r: &Report) -> Vec<&'static str> {
    let mut labels = Vec::new();
    if r.mode == Mode::Check && r.action.is_some() {
        labels.push("action");
    }
    if r.tools.is_some() {
        labels.push("tools");
    }
    if r.compaction.is_some() {
        labels.push("compaction");
    }
    labels.push("verdict");
    for f in &r.findings {
        labels.push(if f.severity == Severity::Note {
            "note"
        } else {
            "reason"
        });
        if f.witness.is_some() {
            labels.push("witness");
        }
        if !f.restore.is_empty() {
            labels.push("restore");
        }
    }
    labels.extend(r.pinned.iter().flatten().map(|_| "pinned"));
    if r.kept.is_some() {
        labels.push("kept");
    }
    labels.push("sha256");
    labels
}

fn assert_text_integrity(r: &Report) {
    let bytes = r.render(Format::Text);
    let text = String::from_utf8(bytes.clone()).unwrap();
    if let Some(c) = text.chars().find(|&c| forbidden(c)) {
        panic!("forbidden {c:?} in:\n{text}");
    }
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    let labels: Vec<&str> = lines
        .iter()
        .map(|l| {
            let (label, _) = l
                .split_once(": ")
                .unwrap_or_else(|| panic!("unlabelled line {l:?}"));
            assert_eq!(label.len(), 10, "label not padded to ten: {l:?}");
            label.trim_end()
        })
        .collect();
    assert_eq!(labels, expected_labels(r), "\n{text}");
    // The verdict line says exactly what the data says.
    let wanted = match r.verdict {
        Verdict::Pass => None,
        Verdict::Block => Some(Severity::Block),
        Verdict::Error => Some(Severity::Error),
    };
    let codes = r.verdict_codes(wanted);
    let verdict = if codes.is_empty() {
        format!("verdict   : {} exit {}", r.verdict.as_str(), r.exit_code)
    } else {
        format!(
            "verdict   : {} ({}) exit {}",
            r.verdict.as_str(),
            codes.join(", "),
            r.exit_code
        )
    };
    assert_eq!(
        lines.iter().filter(|l| **l == verdict).count(),
        1,
        "\n{text}"
    );
    // Each finding line starts with its own code.
    let mut finding_lines = lines
        .iter()
        .filter(|l| l.starts_with("reason    : ") || l.starts_with("note      : "));
    for f in &r.findings {
        let line = finding_lines.next().unwrap();
        assert!(
            line[12..].starts_with(&format!("{}: ", f.code.as_str())),
            "{line}"
        );
    }
    assert!(verify(&bytes).is_ok());
}

fn assert_json_integrity(r: &Report) {
    let bytes = r.render(Format::Json);
    let text = String::from_utf8(bytes.clone()).unwrap();
    if let Some(c) = text.chars().find(|&c| forbidden(c)) {
        panic!("forbidden {c:?} in:\n{text}");
    }
    // The JSON carries exactly the report's data plus the seal: nothing added, hidden
    // or changed by any string inside it.
    let mut parsed: Value = serde_json::from_str(&text).unwrap();
    let seal = parsed.as_object_mut().unwrap().remove("sha256").unwrap();
    assert_eq!(seal.as_str().map(str::len), Some(64));
    assert_eq!(parsed, serde_json::to_value(r).unwrap(), "\n{text}");
    assert!(verify(&bytes).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_input_string_can_forge_hide_or_change_a_line(s in scenario()) {
        let r = s.report();
        assert_text_integrity(&r);
        assert_json_integrity(&r);
    }

    #[test]
    fn verify_detects_any_single_byte_change(
        s in scenario(),
        json in any::<bool>(),
        at in any::<prop::sample::Index>(),
        new in any::<u8>(),
    ) {
        let format = if json { Format::Json } else { Format::Text };
        let bytes = s.report().render(format);
        let i = at.index(bytes.len());
        prop_assume!(bytes[i] != new);
        let mut changed = bytes.clone();
        changed[i] = new;
        prop_assert!(verify(&changed).is_err(), "byte {} -> {:#04x}", i, new);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Every position of a generated report, changed by a random non-zero mask.
    #[test]
    fn verify_detects_a_change_at_every_position(s in scenario(), mask in 1u8..=255) {
        for format in [Format::Text, Format::Json] {
            let bytes = s.report().render(format);
            prop_assert!(verify(&bytes).is_ok());
            for i in 0..bytes.len() {
                let mut changed = bytes.clone();
                changed[i] ^= mask;
                prop_assert!(verify(&changed).is_err(), "{:?} byte {}", format, i);
            }
        }
    }
}

#[test]
fn the_scenario_reaches_every_kind_of_finding() {
    // Guard against a generator that only ever produces refused input.
    let s = Scenario {
        ids: ["p", "f", "s", "e", "a", "o"].map(String::from),
        tool: "refunds.create".into(),
        field: "tier".into(),
        param: "amount".into(),
        value: "gold\n\u{1b}[2J".into(),
        kind: "summary".into(),
        texts: ["t0".into(), "t1".into(), "t2".into()],
        amount: 8400,
        keep: [false, false, false, false, false, true],
        allow_unevaluable: false,
    };
    let r = s.report();
    let codes: Vec<&str> = r.findings.iter().map(|f| f.code.as_str()).collect();
    for want in [
        "dropped-binding-constraint",
        "dropped-effect-replay",
        "dropped-unevaluable-record",
        "dropped-superseder-stale-permit",
        "derivation-input-dropped",
    ] {
        assert!(codes.contains(&want), "{codes:?}");
    }
    assert_text_integrity(&r);
    assert_json_integrity(&r);
}

#[test]
fn the_generator_mostly_produces_input_the_gate_accepts() {
    // The properties are only as strong as the reports they see: most scenarios must
    // load and be judged, not refused.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = scenario();
    let judged = (0..200)
        .filter(|_| {
            let s = strategy.new_tree(&mut runner).unwrap().current();
            s.report().compaction.is_some()
        })
        .count();
    assert!(judged > 150, "only {judged} of 200 scenarios were judged");
}
