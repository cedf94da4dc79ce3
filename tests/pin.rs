//! `pin` (SPEC 6) through the real binary: the protected set and why, the closure over
//! `depends_on`, `--budget` and the kept ids a compactor hands back to `check --kept`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
use common::{Scratch, fixture, run};

const FX1: &str = "fx1_refund_thread.json";
const TYPED: &str = r#"[{"name":"refunds.create","input_schema":{"type":"object","properties":{"amount":{"type":"integer","minimum":1}},"required":["amount"],"additionalProperties":false}}]"#;

fn records(rs: &[&str]) -> String {
    format!("{{\"records\":[{}]}}", rs.join(","))
}

#[test]
fn fx1_pins_the_approval_rule_and_says_why() {
    let r = run(&["pin", &fixture(FX1)], None);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
    assert_eq!(
        r.labelled("pinned"),
        [
            r#"f_011 (active require_approval rule in scope of refunds.create: TRUE for refunds.create {"amount":5001})"#
        ]
    );
    assert_eq!(r.labelled("tokens"), ["pinned 1 record = 50 tokens"]);
    let j = run(&["pin", &fixture(FX1), "--format", "json"], None);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v["mode"], "pin");
    assert_eq!(v["pinned"][0]["id"], "f_011");
    assert!(v["pinned"][0]["why"].as_str().unwrap().contains("TRUE for"));
    assert!(v.get("kept").is_none());
}

#[test]
fn a_schema_that_rules_a_rule_out_saves_its_budget() {
    let s = Scratch::new();
    let tools = s.file(
        "t.json",
        br#"[{"name":"refunds.create","input_schema":{"type":"object","properties":{"amount":{"type":"integer","maximum":5000}},"required":["amount"]}}]"#,
    );
    let r = run(
        &["pin", &fixture(FX1), "--tools", &format!("@{tools}")],
        None,
    );
    assert_eq!(r.code, 0);
    assert!(r.labelled("pinned").is_empty(), "{}", r.stdout);
}

#[test]
fn the_newest_fact_a_rule_reads_is_pinned_with_the_rule() {
    let r = run(&["pin", &fixture("fx6_stale_permit.json")], None);
    let pinned = r.labelled("pinned");
    assert!(
        pinned.contains(&"f_011 (newest fact for `customer.tier`, read by policy 'f_003')"),
        "{pinned:?}"
    );
    // With a schema that requires `customer.tier`, every call sets it: the fact is not
    // needed.
    let s = Scratch::new();
    let tools = s.file(
        "t.json",
        br#"[{"name":"refunds.create","input_schema":{"type":"object","properties":{"amount":{"type":"integer"},"customer.tier":{"type":"string"}},"required":["amount","customer.tier"]}}]"#,
    );
    let r = run(
        &[
            "pin",
            &fixture("fx6_stale_permit.json"),
            "--tools",
            &format!("@{tools}"),
        ],
        None,
    );
    assert!(
        !r.labelled("pinned").iter().any(|p| p.starts_with("f_011")),
        "{}",
        r.stdout
    );
}

#[test]
fn pin_closes_over_depends_on_and_keeps_revokers_effects_and_unevaluable_records() {
    let s = Scratch::new();
    let doc = records(&[
        r#"{"id":"c1","seq":1,"kind":"chatter","text":"source"}"#,
        r#"{"id":"f2","seq":2,"kind":"fact","field":"limit","value":5000,"depends_on":["c1"]}"#,
        r#"{"id":"p3","seq":3,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"amount","op":"gt","value":5000},"depends_on":["f2"]}"#,
        r#"{"id":"p4","seq":4,"kind":"policy","scope":"refunds.*","effect":"deny","predicate":{"all":[]}}"#,
        r#"{"id":"p5","seq":5,"kind":"policy","scope":"refunds.create","effect":"allow","predicate":{"all":[]},"supersedes":"p4"}"#,
        r#"{"id":"e6","seq":6,"kind":"effect","tool":"refunds.create","match":{"order":"o_1"}}"#,
        r#"{"id":"s7","seq":7,"kind":"summary","text":"we talked about limits"}"#,
        r#"{"id":"c8","seq":8,"kind":"chatter","text":"noise"}"#,
        r#"{"id":"p9","seq":9,"kind":"policy","scope":"email.send","effect":"deny","predicate":{"all":[]}}"#,
    ]);
    let path = s.file("in.json", doc.as_bytes());
    let r = run(&["pin", &path, "--tools", "refunds.create"], None);
    assert_eq!(
        r.labelled("pinned"),
        [
            "c1 (depends_on input of 'f2')",
            "f2 (depends_on input of 'p3')",
            r#"p3 (active deny rule in scope of refunds.create: TRUE for refunds.create {"amount":5001})"#,
            "p5 (revokes in-scope policy 'p4')",
            "e6 (effect ledger entry of refunds.create: a reachable call can replay it)",
            "s7 (unevaluable record of kind `summary`: the gate can prove nothing about it)",
            // Not listed, judged all the same (SPEC 2.3).
            "p9 (active deny rule in scope of email.send: TRUE for email.send {})",
        ],
        "{}",
        r.stdout
    );
}

/// An effect of a glob `tool` is pinned for a listed tool it covers: a call of that tool
/// can replay it; and for a list that covers none of its tools, since precheck and pin
/// never judge fewer tools than the records name (SPEC 2.3).
#[test]
fn pin_keeps_an_effect_of_a_glob_tool_for_a_tool_it_covers() {
    let s = Scratch::new();
    let doc = records(&[
        r#"{"id":"c1","seq":1,"kind":"chatter","text":"hi"}"#,
        r#"{"id":"e1","seq":2,"kind":"effect","tool":"refunds.*","match":{"order":7}}"#,
    ]);
    let path = s.file("in.json", doc.as_bytes());
    for tools in ["refunds.create", "*", "refunds.*", "orders.create"] {
        let r = run(&["pin", &path, "--tools", tools], None);
        assert_eq!(
            r.labelled("pinned"),
            ["e1 (effect ledger entry of refunds.*: a reachable call can replay it)"],
            "{tools}: {}",
            r.stdout
        );
    }
}

#[test]
fn budget_then_check_kept_is_the_compactor_loop() {
    let s = Scratch::new();
    let tools = format!("@{}", s.file("tools.json", TYPED.as_bytes()));
    let ids = run(
        &[
            "pin",
            &fixture(FX1),
            "--tools",
            &tools,
            "--budget",
            "800",
            "--format",
            "ids",
        ],
        None,
    );
    assert_eq!(ids.code, 0, "{}", ids.stderr);
    let kept: Vec<&str> = ids.stdout.lines().collect();
    assert_eq!(
        kept.first(),
        Some(&"f_011"),
        "the pinned rule, then the newest"
    );
    assert_eq!(kept.last(), Some(&"f_052"));
    let kept_file = format!("@{}", s.file("kept.txt", ids.stdout.as_bytes()));

    let report = run(
        &["pin", &fixture(FX1), "--tools", &tools, "--budget", "800"],
        None,
    );
    assert_eq!(report.labelled("kept"), [kept.join(",")]);
    let tokens = report.labelled("tokens");
    assert!(
        tokens[0].starts_with("pinned 1 record = 50 tokens; budget 800; kept "),
        "{tokens:?}"
    );

    let pre = run(
        &[
            "check",
            "--precheck",
            &fixture(FX1),
            "--tools",
            &tools,
            "--kept",
            &kept_file,
        ],
        None,
    );
    assert_eq!(
        pre.verdict_line(),
        "verdict   : PASS exit 0",
        "{}",
        pre.stdout
    );
    assert_eq!(
        pre.labelled("compaction"),
        report.labelled("compaction"),
        "pin's kept-sha256 is the one check prints"
    );
    let check = run(
        &[
            "check",
            &fixture(FX1),
            "--kept",
            &kept_file,
            "--action",
            r#"{"tool":"refunds.create","params":{"amount":8400}}"#,
        ],
        None,
    );
    assert_eq!(check.verdict_line(), "verdict   : PASS exit 0");
}

#[test]
fn pinned_records_over_the_budget_are_ledger_exceeds_budget() {
    let r = run(&["pin", &fixture(FX1), "--budget", "49"], None);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.verdict_line(),
        "verdict   : ERROR (ledger-exceeds-budget) exit 2"
    );
    assert!(r.labelled("kept").is_empty());
    assert!(r.stdout.contains("need 50 tokens, over the budget of 49"));
    let ids = run(
        &["pin", &fixture(FX1), "--budget", "49", "--format", "ids"],
        None,
    );
    assert_eq!(ids.code, 2);
    assert!(ids.stdout.is_empty());
    assert!(
        ids.stderr.contains("ledger-exceeds-budget"),
        "{}",
        ids.stderr
    );
    assert_eq!(run(&["pin", &fixture(FX1), "--budget", "50"], None).code, 0);
}

#[test]
fn the_budget_skips_what_does_not_fit_and_keeps_older_records_that_do() {
    let s = Scratch::new();
    let doc = records(&[
        r#"{"id":"a","seq":1,"kind":"chatter","tokens":5}"#,
        r#"{"id":"b","seq":2,"kind":"chatter","tokens":100}"#,
        r#"{"id":"c","seq":3,"kind":"chatter","tokens":5}"#,
    ]);
    let path = s.file("in.json", doc.as_bytes());
    let r = run(&["pin", &path, "--tools", "x", "--budget", "12"], None);
    assert_eq!(r.labelled("kept"), ["a,c"]);
    assert_eq!(
        r.labelled("tokens"),
        ["pinned 0 records = 0 tokens; budget 12; kept 2 records = 10 tokens"]
    );
}

#[test]
fn ids_that_would_not_survive_a_line_come_as_a_json_array() {
    let s = Scratch::new();
    let doc = records(&[
        r#"{"id":" spaced ","seq":1,"kind":"summary"}"#,
        r#"{"id":"line\nbreak","seq":2,"kind":"summary"}"#,
    ]);
    let path = s.file("in.json", doc.as_bytes());
    let ids = run(&["pin", &path, "--tools", "x", "--format", "ids"], None);
    assert_eq!(ids.stdout, "[\" spaced \",\"line\\nbreak\"]\n");
    let kept = format!("@{}", s.file("kept.txt", ids.stdout.as_bytes()));
    let pre = run(
        &[
            "check",
            "--precheck",
            &path,
            "--tools",
            "x",
            "--kept",
            &kept,
        ],
        None,
    );
    assert_eq!(
        pre.verdict_line(),
        "verdict   : PASS exit 0",
        "{}",
        pre.stdout
    );
}

/// Pin never judges fewer tools than the records name, as precheck does (SPEC 2.3): a
/// name the list leaves out (here misspelt) gets a `not-listed` note, and its rules are
/// pinned as a tool's that takes any params.
#[test]
fn a_list_that_leaves_out_a_named_tool_says_so_and_pins_its_rules() {
    let r = run(&["pin", &fixture(FX1), "--tools", "refunds.creat"], None);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(
        r.labelled("note"),
        [
            "not-listed: 1 tool name a policy scopes to or an effect gives is covered by no tool listed, and was judged as a tool that takes any params: refunds.create (list it if the agent has it, with its schema only where the harness refuses calls outside it)"
        ]
    );
    let all = run(&["pin", &fixture(FX1)], None);
    assert!(
        r.labelled("pinned").iter().any(|p| p.starts_with("f_011 ")),
        "{}",
        r.stdout
    );
    assert_eq!(r.labelled("pinned"), all.labelled("pinned"));
    for tools in ["refunds.create", "*", "refunds.*"] {
        let r = run(&["pin", &fixture(FX1), "--tools", tools], None);
        assert!(!r.stdout.contains("not-listed"), "{tools}: {}", r.stdout);
    }
}

/// Tokens are integers below 2^64 each, so the pinned records' sum may pass 2^64: it was
/// summed in 64 bits, saturating at 2^64 - 1, so two records of 2^63 tokens (2^64 in
/// all) fitted a budget of 2^64 - 1 and the report said they needed 2^64 - 1 tokens.
/// The sum is exact, on the exact loader's path and on the lean one's (1 MiB or more).
#[test]
fn pinned_tokens_past_two_to_the_64_are_summed_exactly_and_exceed_every_budget() {
    let s = Scratch::new();
    let heavy = [
        r#"{"id":"u1","seq":1,"kind":"summary","tokens":9223372036854775808}"#,
        r#"{"id":"u2","seq":2,"kind":"summary","tokens":9223372036854775808}"#,
    ];
    let small = s.file("small.jsonl", format!("{}\n", heavy.join("\n")).as_bytes());
    let mut lines: Vec<String> = heavy.iter().map(|l| (*l).to_string()).collect();
    for i in 0..20_000 {
        lines.push(format!(
            r#"{{"id":"c{i}","seq":{},"kind":"chatter","tokens":0,"text":"{}"}}"#,
            i + 3,
            "x".repeat(48)
        ));
    }
    let text = format!("{}\n", lines.join("\n"));
    assert!(text.len() >= 1 << 20, "the lean loader reads 1 MiB or more");
    let large = s.file("large.jsonl", text.as_bytes());
    for path in [&small, &large] {
        let r = run(&["pin", path, "--tools", "x"], None);
        assert_eq!(r.code, 0, "{}", r.stdout);
        assert_eq!(
            r.labelled("tokens"),
            ["pinned 2 records = 18446744073709551616 tokens"],
            "{path}"
        );
        let r = run(
            &[
                "pin",
                path,
                "--tools",
                "x",
                "--budget",
                "18446744073709551615",
            ],
            None,
        );
        assert_eq!(
            r.verdict_line(),
            "verdict   : ERROR (ledger-exceeds-budget) exit 2",
            "{path}: {}",
            r.stdout
        );
        assert_eq!(r.code, 2);
        assert!(r.labelled("kept").is_empty(), "{path}: {}", r.stdout);
        assert!(
            r.stdout.contains(
                "need 18446744073709551616 tokens, over the budget of 18446744073709551615"
            ),
            "{path}: {}",
            r.stdout
        );
    }
}
