//! `check --precheck` (SPEC 5) through the real binary: witnesses, schemas, the
//! precision suite (a schema that rules a dropped rule out gives PASS), sweep --precheck.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
use common::{Run, Scratch, fixture, run};

const FX1: &str = "fx1_refund_thread.json";

/// Runs `check --precheck` on `input` (a path) with a tools JSON written to a file.
fn precheck(s: &Scratch, input: &str, tools: Option<&str>, extra: &[&str]) -> Run {
    let mut args = vec!["check", "--precheck", input];
    let tools_path;
    if let Some(t) = tools {
        tools_path = format!("@{}", s.file("tools.json", t.as_bytes()));
        args.extend(["--tools", tools_path.as_str()]);
    }
    args.extend_from_slice(extra);
    run(&args, None)
}

/// A document with records and kept ids (no action: precheck never reads one).
fn store(records: &[&str], kept: &[&str]) -> String {
    let kept: Vec<String> = kept.iter().map(|k| format!("\"{k}\"")).collect();
    format!(
        "{{\"records\":[{}],\"kept\":[{}]}}",
        records.join(","),
        kept.join(",")
    )
}

fn tool(schema: &str) -> String {
    format!(r#"[{{"name":"refunds.create","input_schema":{schema}}}]"#)
}

const INTEGER_AMOUNT: &str = r#"[{"name":"refunds.create","input_schema":{"type":"object","properties":{"amount":{"type":"integer","minimum":1},"currency":{"type":"string","enum":["USD","EUR"]}},"required":["amount","currency"],"additionalProperties":false}},
 {"name":"notes.append","input_schema":{"type":"object","properties":{"ticket":{"type":"integer"},"text":{"type":"string","maxLength":2000}},"required":["ticket","text"]}}]"#;
const AMOUNT_AT_MOST_5000: &str = r#"[{"name":"refunds.create","input_schema":{"type":"object","properties":{"amount":{"type":"integer","minimum":1,"maximum":5000}},"required":["amount"],"additionalProperties":false}}]"#;

#[test]
fn precheck_never_reads_an_action_and_lists_its_tools() {
    let s = Scratch::new();
    let r = precheck(&s, &fixture(FX1), Some(INTEGER_AMOUNT), &[]);
    assert_eq!(
        r.labelled("action"),
        ["(the verdict below never consults it)"]
    );
    assert_eq!(r.labelled("tools"), ["refunds.create, notes.append"]);
    let usage = run(
        &[
            "check",
            "--precheck",
            &fixture(FX1),
            "--action",
            r#"{"tool":"x"}"#,
        ],
        None,
    );
    assert_eq!(usage.code, 2, "--action and --precheck conflict");
}

#[test]
fn fx1_without_schemas_blocks_on_5001_and_notes_what_fails_whatever_is_kept() {
    let s = Scratch::new();
    let r = precheck(&s, &fixture(FX1), None, &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1"
    );
    let witnesses = r.labelled("witness");
    assert_eq!(witnesses[0], r#"refunds.create {"amount":5001}"#);
    assert!(witnesses.contains(&"refunds.create {}"), "{witnesses:?}");
    assert_eq!(r.labelled("restore"), ["f_011"]);
    assert!(
        r.stdout
            .contains("a schema that requires `amount` rules it out"),
        "{}",
        r.stdout
    );
}

#[test]
fn fx1_with_an_integer_schema_blocks_on_5001_and_check_agrees() {
    let s = Scratch::new();
    let r = precheck(&s, &fixture(FX1), Some(INTEGER_AMOUNT), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1"
    );
    let witness = r.labelled("witness");
    assert_eq!(
        witness,
        [r#"refunds.create {"amount":5001,"currency":"USD"}"#]
    );
    assert_eq!(r.labelled("restore"), ["f_011"]);
    assert!(r.stdout.contains("gets dropped-binding-constraint"));
    assert!(
        r.stdout
            .contains("tool-schema: the schema of notes.append uses `maxLength`")
    );
    let c = run(
        &[
            "check",
            &fixture(FX1),
            "--action",
            r#"{"tool":"refunds.create","params":{"amount":5001,"currency":"USD"}}"#,
        ],
        None,
    );
    assert_eq!(
        c.verdict_line(),
        "verdict   : BLOCK (dropped-binding-constraint) exit 1"
    );
}

#[test]
fn fx1_with_maximum_5000_passes_and_says_why() {
    let s = Scratch::new();
    let r = precheck(&s, &fixture(FX1), Some(AMOUNT_AT_MOST_5000), &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
    assert_eq!(
        r.labelled("note"),
        [
            r#"ruled-out-by-schema: dropped policy 'f_011' (require_approval) binds calls that the schema of refunds.create rules out (e.g. {"amount":5001}), and no call it admits: not a block reason"#
        ]
    );
}

const BIG: &str = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"require_approval","predicate":{"field":"amount","op":"gt","value":5000}}"#;
const CHAT: &str = r#"{"id":"c9","seq":9,"kind":"chatter","text":"hi"}"#;

/// The precision suite: each schema rules the dropped rule (or effect) out, so precheck
/// passes; the same store without the schema does not pass.
#[test]
fn a_schema_that_rules_the_dropped_rule_out_gives_pass() {
    let currency = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"currency","op":"not_in","value":["USD","EUR"]}}"#;
    let tier_rule = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"customer.tier","op":"eq","value":"suspended"}}"#;
    let tier_fact = r#"{"id":"f2","seq":2,"kind":"fact","field":"customer.tier","value":"gold"}"#;
    let both = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"all":[{"field":"amount","op":"gte","value":100},{"field":"region","op":"eq","value":"eu"}]}}"#;
    let effect =
        r#"{"id":"e1","seq":1,"kind":"effect","tool":"refunds.create","match":{"order":"o_1"}}"#;
    let cases: [(&str, Vec<&str>, Vec<&str>, &str); 8] = [
        (
            "maximum 5000",
            vec![BIG, CHAT],
            vec!["c9"],
            r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":5000}},"required":["amount"]}"#,
        ),
        (
            "integer below an exclusive 5001",
            vec![BIG, CHAT],
            vec!["c9"],
            r#"{"type":"object","properties":{"amount":{"type":"integer","exclusiveMaximum":5001}},"required":["amount"]}"#,
        ),
        (
            "const",
            vec![BIG, CHAT],
            vec!["c9"],
            r#"{"type":"object","properties":{"amount":{"const":100}},"required":["amount"]}"#,
        ),
        (
            "enum of the allowed currencies",
            vec![currency, CHAT],
            vec!["c9"],
            r#"{"type":"object","properties":{"currency":{"type":"string","enum":["USD","EUR"]}},"required":["currency"]}"#,
        ),
        (
            "a nested enum",
            vec![tier_rule, CHAT],
            vec!["c9"],
            r#"{"type":"object","properties":{"customer":{"type":"object","properties":{"tier":{"enum":["gold","standard"]}},"required":["tier"]}},"required":["customer"],"additionalProperties":false}"#,
        ),
        (
            "no call can set the field, and the kept fact makes the rule false",
            vec![tier_rule, tier_fact, CHAT],
            vec!["f2", "c9"],
            r#"{"type":"object","properties":{"amount":{"type":"integer"}},"required":["amount"],"additionalProperties":false}"#,
        ),
        (
            "one conjunct can never hold",
            vec![both, CHAT],
            vec!["c9"],
            r#"{"type":"object","properties":{"amount":{"type":"integer"},"region":{"enum":["us","apac"]}},"required":["amount","region"]}"#,
        ),
        (
            "the effect's match is outside the schema",
            vec![effect, CHAT],
            vec!["c9"],
            r#"{"type":"object","properties":{"order":{"type":"string","enum":["o_2","o_3"]}},"required":["order"]}"#,
        ),
    ];
    for (name, records, kept, schema) in cases {
        let s = Scratch::new();
        let path = s.file("in.json", store(&records, &kept).as_bytes());
        let with = precheck(&s, &path, Some(&tool(schema)), &[]);
        assert_eq!(with.code, 0, "{name}: with the schema\n{}", with.stdout);
        assert!(
            with.labelled("note")
                .iter()
                .any(|n| n.starts_with("ruled-out-by-schema:")),
            "{name}: the note says the schema rules it out\n{}",
            with.stdout
        );
        let without = precheck(&s, &path, Some(r#"["refunds.create"]"#), &[]);
        assert_ne!(
            without.code, 0,
            "{name}: without the schema\n{}",
            without.stdout
        );
    }
}

#[test]
fn a_call_that_spells_the_field_through_a_key_with_dots_is_tried() {
    // `check` reads `{"a.b":{"c":500}}` as giving `a.b.c` the value 500, and blocks on a
    // dropped rule on it. precheck tried only the key `a.b.c` and the path `a`, `b`,
    // `c`, found that no call of this schema sets the field, judged on the kept fact,
    // and passed (exit 0).
    let s = Scratch::new();
    let rule = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"a.b.c","op":"gt","value":100}}"#;
    let fact = r#"{"id":"f2","seq":2,"kind":"fact","field":"a.b.c","value":0}"#;
    let path = s.file(
        "in.json",
        store(&[rule, fact, CHAT], &["f2", "c9"]).as_bytes(),
    );
    for schema in [
        r#"{"type":"object","properties":{"a.b":{"type":"object","properties":{"c":{"type":"integer"}},"required":["c"],"additionalProperties":false}},"required":["a.b"],"additionalProperties":false}"#,
        r#"{"type":"object","properties":{"a":{"type":"object","properties":{"b.c":{"type":"integer"}},"required":["b.c"],"additionalProperties":false}},"required":["a"],"additionalProperties":false}"#,
    ] {
        let r = precheck(&s, &path, Some(&tool(schema)), &[]);
        assert_eq!(r.code, 1, "{schema}\n{}", r.stdout);
        let witness = r.labelled("witness");
        let action = witness[0].strip_prefix("refunds.create ").unwrap();
        // The witness is a call `check` blocks.
        let check = check_witness(&path, action);
        assert_eq!(check.code, 1, "{action}\n{}", check.stdout);
    }
    // Where the schema takes any value under the key spelt whole (an open object, as
    // schemas usually are), the other spellings reach nothing more and are not tried:
    // trying them all made this schema, which rules the rule out, exceed --max-calls
    // and give an undecided BLOCK (reviewer).
    let rule = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"all":[{"field":"customer.address.country","op":"eq","value":"US"},{"field":"order.shipping.method","op":"eq","value":"air"},{"field":"amount","op":"gt","value":100}]}}"#;
    let path = s.file("open.json", store(&[rule, CHAT], &["c9"]).as_bytes());
    let schema = r#"{"type":"object","properties":{"customer":{"type":"object","properties":{"address":{"type":"object","properties":{"country":{"type":"string"}}}}},"order":{"type":"object","properties":{"shipping":{"type":"object","properties":{"method":{"type":"string"}}}}},"amount":{"type":"integer","maximum":50}},"required":["amount"]}"#;
    let r = precheck(&s, &path, Some(&tool(schema)), &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn a_call_that_gives_a_part_of_a_field_apart_is_tried() {
    // `check` reads `c` as UNKNOWN in `{"c.part": "", "e": 0}` (the tool may read `c`
    // with or without that part; no fact stands in), and the dropped rule resolves TRUE
    // on `e` alone: BLOCK. Every value of `c` itself makes `c lt false` a type mismatch,
    // so precheck, which did not try that class, read the rule as failing closed for
    // every call and passed (found by `keeping_what_pin_pins_leaves_nothing_to_block`).
    let s = Scratch::new();
    let rule = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"any":[{"field":"c","op":"lt","value":false},{"field":"e","op":"not_in","value":[]}]}}"#;
    let fact = r#"{"id":"f2","seq":2,"kind":"fact","field":"c","value":0}"#;
    let path = s.file(
        "in.json",
        store(&[rule, fact, CHAT], &["f2", "c9"]).as_bytes(),
    );
    let open = r#"{"type":"object","properties":{"e":{"type":"integer"}},"required":["e"]}"#;
    let r = precheck(&s, &path, Some(&tool(open)), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let witness = r.labelled("witness");
    let action = witness[0].strip_prefix("refunds.create ").unwrap();
    assert_eq!(action, r#"{"c.part":"","e":0}"#);
    let check = check_witness(&path, action);
    assert_eq!(
        check.verdict_line(),
        "verdict   : BLOCK (dropped-binding-constraint) exit 1",
        "{}",
        check.stdout
    );
    // A schema that admits no other key leaves no part apart: the rule fails closed on
    // every call it admits, whatever is kept (a note), and precheck passes.
    let closed = r#"{"type":"object","properties":{"c":{"type":"integer"},"e":{"type":"integer"}},"required":["e"],"additionalProperties":false}"#;
    let r = precheck(&s, &path, Some(&tool(closed)), &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    // Where the part apart leaves a kept rule undecided, the note says which schema
    // rules the call out.
    let kept = s.file(
        "kept.json",
        store(&[rule, fact, CHAT], &["p1", "f2", "c9"]).as_bytes(),
    );
    let r = precheck(&s, &kept, None, &[]);
    assert!(r.stdout.contains("admits no key `c.part`"), "{}", r.stdout);
}

#[test]
fn a_part_given_apart_under_a_key_the_schema_names_is_tried() {
    // A schema that admits no key but the ones it names may name one with dots below a
    // read field: `{"a": 1, "a.x": 0}` gives a part of `a` apart, `check` reads `a` as
    // UNKNOWN (no fact stands in), and the kept allow rule is TRUE in the agent's view on
    // the stale `b` = 2 alone and UNKNOWN on the full records: BLOCK. Precheck tried only
    // `a.part`, which the schema rules out, and passed.
    let s = Scratch::new();
    let path = stale_permit(
        &s,
        r#"{"any":[{"field":"a","op":"eq","value":1},{"field":"b","op":"eq","value":2}]}"#,
        "a",
    );
    let named = r#"{"type":"object","properties":{"a":{"const":1},"a.x":{"type":"integer"}},"additionalProperties":false}"#;
    let r = precheck(&s, &path, Some(&tool(named)), &[]);
    assert_eq!(witness_blocks(&path, &r, STALE_PERMIT), r#"{"a.x":0}"#);
    // Without that key the schema admits no part apart, and every call it admits gives
    // `a` = 1: nothing to block.
    let closed = r#"{"type":"object","properties":{"a":{"const":1}},"additionalProperties":false}"#;
    let r = precheck(&s, &path, Some(&tool(closed)), &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn a_string_on_a_read_field_s_way_under_a_key_with_dots_is_tried() {
    // `{"a.b": ""}` reaches `a.b.c` only through a string: `check` reads the field as
    // UNKNOWN (the tool may read into the string; no fact stands in), and the kept allow
    // rule is TRUE in the agent's view on the stale `b` = 2 alone and UNKNOWN on the full
    // records: BLOCK. The schema admits no `a.b.c` key and no `a`, so precheck tried only
    // calls that leave the field to its fact, and passed.
    let s = Scratch::new();
    let path = stale_permit(
        &s,
        r#"{"any":[{"field":"a.b.c","op":"eq","value":1},{"field":"b","op":"eq","value":2}]}"#,
        "a.b.c",
    );
    let string =
        r#"{"type":"object","properties":{"a.b":{"type":"string"}},"additionalProperties":false}"#;
    let r = precheck(&s, &path, Some(&tool(string)), &[]);
    assert_eq!(witness_blocks(&path, &r, STALE_PERMIT), r#"{"a.b":""}"#);
    // A number there holds nothing: every call leaves `a.b.c` to its fact, 1.
    let number =
        r#"{"type":"object","properties":{"a.b":{"type":"integer"}},"additionalProperties":false}"#;
    let r = precheck(&s, &path, Some(&tool(number)), &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn a_required_key_on_a_read_field_s_way_is_not_left_to_one_sampled_value() {
    // The schema requires `a.b`, which `a.b.c` passes through: precheck filled it, as a
    // key nobody reads, with `""`, so every call it tried met a string on the field's way
    // (`check` reads the field as UNKNOWN there) and the rule failed closed whatever was
    // kept: PASS, with a note that the schema rules the rule out. `check` blocks
    // `{"a.b": {"c": 101}}`, and the witness, which the schema admits.
    let s = Scratch::new();
    let rule = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"a.b.c","op":"gt","value":100}}"#;
    let path = s.file("in.json", store(&[rule, CHAT], &["c9"]).as_bytes());
    let r = precheck(
        &s,
        &path,
        Some(&tool(r#"{"type":"object","required":["a.b"]}"#)),
        &[],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    let witness = r.labelled("witness");
    let action = witness[0].strip_prefix("refunds.create ").unwrap();
    assert_eq!(action, r#"{"a.b":{},"a.b.c":101}"#);
    let check = check_witness(&path, action);
    assert_eq!(
        check.verdict_line(),
        "verdict   : BLOCK (dropped-binding-constraint) exit 1",
        "{}",
        check.stdout
    );
    // A required `a.b` that is a string or a number: no call sets the field, and one
    // that holds a number leaves it to its fact, which the compaction dropped (not the
    // sampled `""` alone).
    let fact = r#"{"id":"f2","seq":2,"kind":"fact","field":"a.b.c","value":500}"#;
    let path = s.file("fact.json", store(&[rule, fact, CHAT], &["c9"]).as_bytes());
    let r = precheck(
        &s,
        &path,
        Some(&tool(
            r#"{"type":"object","properties":{"a.b":{"type":["string","integer"]}},"required":["a.b"],"additionalProperties":false}"#,
        )),
        &[],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    let witness = r.labelled("witness");
    let action = witness[0].strip_prefix("refunds.create ").unwrap();
    let check = check_witness(&path, action);
    assert_eq!(check.code, 1, "{action}\n{}", check.stdout);
}

#[test]
fn a_required_key_that_gives_a_part_of_a_read_field_apart_is_not_passed() {
    // Every call of this schema has `a.x`, which gives a part of `a` apart: `check`
    // reads `a` only from a call whose `a` holds `x` with the same value, and blocks
    // `{"a": {"x": ""}, "a.x": ""}` on the dropped rule. precheck filled `a.x` with one
    // sampled value beside `a`'s classes, none of which held it, read the rule as
    // failing closed for every call, and passed, saying the schema rules it out.
    let s = Scratch::new();
    let rule = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"a","op":"ne","value":5}}"#;
    let path = s.file("in.json", store(&[rule, CHAT], &["c9"]).as_bytes());
    let check = check_witness(&path, r#"{"a":{"x":""},"a.x":""}"#);
    assert_eq!(check.code, 1, "{}", check.stdout);
    for schema in [
        r#"{"type":"object","required":["a.x"]}"#,
        // A part further below it.
        r#"{"type":"object","properties":{"a":{"type":"object"}},"required":["a.x.y"]}"#,
    ] {
        let r = precheck(&s, &path, Some(&tool(schema)), &[]);
        assert_eq!(r.code, 1, "{schema}\n{}", r.stdout);
        assert!(
            r.stdout
                .contains("precheck could not decide, because the schema requires"),
            "{}",
            r.stdout
        );
    }
}

#[test]
fn a_string_on_a_read_field_s_way_beside_another_read_field_is_tried() {
    // `{"a.b": "", "a": {"x": 1}}` leaves `a.b.c` UNKNOWN (its way meets a string, no
    // fact stands in) while `a.x` is 1: the kept allow rule is TRUE in the agent's view on
    // the stale `b` = 2 and UNKNOWN on the full records: BLOCK. precheck tried a string
    // only at `a`, where it leaves `a.x` UNKNOWN too, and passed.
    let s = Scratch::new();
    let path = stale_permit(
        &s,
        r#"{"any":[{"field":"a.b.c","op":"eq","value":1},{"all":[{"field":"a.x","op":"eq","value":1},{"field":"b","op":"eq","value":2}]}]}"#,
        "a.b.c",
    );
    let schema = r#"{"type":"object","properties":{"a":{"type":["object","string"],"properties":{"b":{"type":"object","properties":{"c":{"const":1}},"additionalProperties":false},"x":{"type":"integer"}},"additionalProperties":false},"a.b":{"type":"string"}},"additionalProperties":false}"#;
    let check = check_witness(&path, r#"{"a.b":"","a":{"x":1}}"#);
    assert_eq!(check.code, 1, "{}", check.stdout);
    let r = precheck(&s, &path, Some(&tool(schema)), &[]);
    witness_blocks(&path, &r, STALE_PERMIT);
}

#[test]
fn a_part_given_apart_under_another_spelling_of_a_read_field_is_tried() {
    // `{"a.b": {"c.part": 0}}` gives a part of `a.b.c` apart: `check` reads it as UNKNOWN
    // (no fact stands in), and the kept allow rule, TRUE for every value of the field,
    // is TRUE in the agent's view on the stale `b` = 2 and UNKNOWN on the full records:
    // BLOCK. The path `a`, `b`, `c` takes any value, so precheck tried no other spelling,
    // and neither it nor the key `a.b.c` admits a part apart: PASS.
    let s = Scratch::new();
    let path = stale_permit(
        &s,
        r#"{"any":[{"field":"a.b.c","op":"eq","value":1},{"field":"a.b.c","op":"ne","value":1},{"field":"b","op":"eq","value":2}]}"#,
        "a.b.c",
    );
    let schema = r#"{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{}},"additionalProperties":false}},"additionalProperties":false},"a.b":{"type":"object"}},"additionalProperties":false}"#;
    let check = check_witness(&path, r#"{"a.b":{"c.part":0}}"#);
    assert_eq!(check.code, 1, "{}", check.stdout);
    let r = precheck(&s, &path, Some(&tool(schema)), &[]);
    witness_blocks(&path, &r, STALE_PERMIT);
}

/// `check` of the store at `path` on a witness's params, a call of `refunds.create`.
fn check_witness(path: &str, params: &str) -> Run {
    let action = format!(r#"{{"tool":"refunds.create","params":{params}}}"#);
    run(&["check", path, "--action", &action], None)
}

/// A store whose kept allow rule on `refunds.create` reads `predicate`, beside `b eq 2`
/// somewhere in it, with `b`'s newest fact (3) dropped, so that the agent still sees
/// `b` = 2, and a kept fact `field` = 1. Where a call leaves the rule's other field
/// UNKNOWN with no fact standing in, the agent's view is TRUE on the stale `b` and the
/// full records UNKNOWN: `check` blocks (`dropped-superseder-stale-permit`).
fn stale_permit(s: &Scratch, predicate: &str, field: &str) -> String {
    let rule = format!(
        r#"{{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"allow","predicate":{predicate}}}"#
    );
    let old = r#"{"id":"f2","seq":2,"kind":"fact","field":"b","value":2}"#;
    let new = r#"{"id":"f3","seq":3,"kind":"fact","field":"b","value":3}"#;
    let fact = format!(r#"{{"id":"f4","seq":4,"kind":"fact","field":"{field}","value":1}}"#);
    s.file(
        "in.json",
        store(&[&rule, old, new, &fact, CHAT], &["p1", "f2", "f4", "c9"]).as_bytes(),
    )
}

/// Asserts that precheck's run `r` blocks and that `check` blocks its first witness
/// (on the store at `path`) with `verdict`; returns that witness's params.
fn witness_blocks(path: &str, r: &Run, verdict: &str) -> String {
    assert_eq!(r.code, 1, "{}", r.stdout);
    let witness = r.labelled("witness");
    let action = witness[0].strip_prefix("refunds.create ").unwrap();
    let check = check_witness(path, action);
    assert_eq!(check.verdict_line(), verdict, "{action}\n{}", check.stdout);
    action.to_string()
}

const STALE_PERMIT: &str = "verdict   : BLOCK (dropped-superseder-stale-permit) exit 1";

#[test]
fn a_dotted_effect_key_is_tried_through_the_nested_object_the_schema_admits() {
    // `check` reads the `match` key `invoice.id` through nested objects too, and blocks
    // `{"invoice":{"id":"INV-7741"}}` on the dropped effect. This schema admits no key
    // `invoice.id`, only the object: precheck must find that call, not rule the replay out.
    let s = Scratch::new();
    let effect = r#"{"id":"e1","seq":1,"kind":"effect","tool":"refunds.create","match":{"invoice.id":"INV-7741"}}"#;
    let path = s.file("in.json", store(&[effect, CHAT], &["c9"]).as_bytes());
    let schema = r#"{"type":"object","properties":{"invoice":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]},"amount":{"type":"integer"}},"required":["invoice","amount"],"additionalProperties":false}"#;
    let r = precheck(&s, &path, Some(&tool(schema)), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let witness = r.labelled("witness");
    let action = witness[0].strip_prefix("refunds.create ").unwrap();
    assert_eq!(action, r#"{"amount":0,"invoice":{"id":"INV-7741"}}"#);
    // The witness is a call `check` blocks on the effect.
    let check = check_witness(&path, action);
    assert_eq!(
        check.verdict_line(),
        "verdict   : BLOCK (dropped-effect-replay) exit 1",
        "{}",
        check.stdout
    );
    // A schema whose `invoice.id` cannot be INV-7741 rules the replay out.
    let closed = r#"{"type":"object","properties":{"invoice":{"type":"object","properties":{"id":{"enum":["INV-1"]}}}},"additionalProperties":false}"#;
    let r = precheck(&s, &path, Some(&tool(closed)), &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn a_number_schema_gets_a_witness_strictly_between_the_bounds() {
    let s = Scratch::new();
    let path = s.file("in.json", store(&[BIG, CHAT], &["c9"]).as_bytes());
    let schema = r#"{"type":"object","properties":{"amount":{"type":"number","exclusiveMaximum":5000.0000001}},"required":["amount"]}"#;
    let r = precheck(&s, &path, Some(&tool(schema)), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.labelled("witness"),
        [
            r#"refunds.create {"amount":5000.00000005}"#,
            // The note: a part given apart leaves `amount` undecided whatever is kept.
            r#"refunds.create {"amount":4999,"amount.part":""}"#
        ]
    );
}

#[test]
fn a_field_no_call_sets_and_no_fact_resolves_is_unresolved_field() {
    let s = Scratch::new();
    let kyc = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"require_approval","predicate":{"field":"customer.kyc_status","op":"ne","value":"verified"}}"#;
    let path = s.file("in.json", store(&[kyc, CHAT], &["p1", "c9"]).as_bytes());
    let schema = r#"{"type":"object","properties":{"amount":{"type":"integer"}},"required":["amount"],"additionalProperties":false}"#;
    let r = precheck(&s, &path, Some(&tool(schema)), &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : ERROR (unresolved-field) exit 2"
    );
    assert!(
        r.stdout.contains(
            "no reachable call of refunds.create sets `customer.kyc_status` and no fact resolves it"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn a_schema_that_makes_every_call_a_type_mismatch_is_a_note() {
    let s = Scratch::new();
    let path = s.file("in.json", store(&[BIG, CHAT], &["p1", "c9"]).as_bytes());
    let schema =
        r#"{"type":"object","properties":{"amount":{"type":"string"}},"required":["amount"]}"#;
    let r = precheck(&s, &path, Some(&tool(schema)), &[]);
    // `check` fails on every call whatever is kept: not the compaction's doing.
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
    // (A key `amount.part` beside a string `amount` gives the field two ways, which
    // `check` refuses: no call gives a part of `amount` apart.)
    assert_eq!(r.labelled("witness"), [r#"refunds.create {"amount":""}"#]);
    assert!(
        r.labelled("note")
            .iter()
            .any(|n| n.starts_with("fails-closed-whatever-kept:")
                && n.ends_with("(a schema that types `amount` rules it out)")),
        "{}",
        r.stdout
    );
}

#[test]
fn a_dropped_effect_a_call_can_replay_blocks_and_check_agrees() {
    let s = Scratch::new();
    let effect = r#"{"id":"e1","seq":1,"kind":"effect","tool":"refunds.create","match":{"order":"o_1","amount":250}}"#;
    let path = s.file("in.json", store(&[effect, CHAT], &["c9"]).as_bytes());
    let schema = r#"{"type":"object","properties":{"order":{"type":"string"},"amount":{"type":"integer"},"reason":{"type":"string"}},"required":["order","amount","reason"]}"#;
    let r = precheck(&s, &path, Some(&tool(schema)), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let witness = r.labelled("witness");
    assert_eq!(
        witness,
        [r#"refunds.create {"amount":250,"order":"o_1","reason":""}"#]
    );
    assert_eq!(r.labelled("restore"), ["e1"]);
    let action = r#"{"tool":"refunds.create","params":{"amount":250,"order":"o_1","reason":""}}"#;
    let c = run(&["check", &path, "--action", action], None);
    assert_eq!(
        c.verdict_line(),
        "verdict   : BLOCK (dropped-effect-replay) exit 1"
    );
}

/// A dropped effect of a glob `tool` may be replayed by a call of every tool it covers: a
/// listed tool it covers is judged, and the witness is a concrete call `check` blocks on
/// the same effect, never the glob itself.
#[test]
fn a_dropped_effect_of_a_glob_tool_blocks_a_tool_it_covers_and_check_agrees() {
    let s = Scratch::new();
    let effect = r#"{"id":"e1","seq":2,"kind":"effect","tool":"refunds.*","match":{"order":7},"text":"refund for order 7 issued"}"#;
    let path = s.file("in.json", store(&[effect, CHAT], &["c9"]).as_bytes());
    let named = run(
        &["check", "--precheck", &path, "--tools", "refunds.create"],
        None,
    );
    let star = run(&["check", "--precheck", &path, "--tools", "*"], None);
    let given = run(&["check", "--precheck", &path], None);
    let schema = r#"{"type":"object","properties":{"order":{"type":"integer"},"reason":{"type":"string"}},"required":["order","reason"]}"#;
    let typed = precheck(&s, &path, Some(&tool(schema)), &[]);
    for (r, witness) in [
        (&named, r#"refunds.create {"order":7}"#),
        (&star, r#"refunds.x {"order":7}"#),
        (&given, r#"refunds.x {"order":7}"#),
        (&typed, r#"refunds.create {"order":7,"reason":""}"#),
    ] {
        assert_eq!(r.code, 1, "{}", r.stdout);
        assert_eq!(
            r.verdict_line(),
            "verdict   : BLOCK (may-bind-some-action) exit 1"
        );
        assert_eq!(r.labelled("witness"), [witness], "{}", r.stdout);
        assert_eq!(r.labelled("restore"), ["e1"]);
        let (tool, params) = witness.split_once(' ').unwrap();
        let action = format!(r#"{{"tool":"{tool}","params":{params}}}"#);
        let c = run(&["check", &path, "--action", &action], None);
        assert_eq!(
            c.verdict_line(),
            "verdict   : BLOCK (dropped-effect-replay) exit 1",
            "{action}"
        );
        assert!(r.labelled("reason")[0].ends_with(&c.labelled("reason")[0]));
    }
    // The glob's other tools were judged too, as a tool that takes any params, and the
    // note says so; so they are for a list the glob covers none of (SPEC 2.3).
    let note = "not-listed: 1 tool name a policy scopes to or an effect gives is covered by no tool listed, and was judged as a tool that takes any params: refunds.* (list it if the agent has it, with its schema only where the harness refuses calls outside it)";
    assert_eq!(named.labelled("note"), [note]);
    let other = run(
        &["check", "--precheck", &path, "--tools", "orders.create"],
        None,
    );
    assert_eq!(
        other.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1"
    );
    assert_eq!(other.labelled("witness"), [r#"refunds.x {"order":7}"#]);
    assert_eq!(other.labelled("note"), [note]);
}

#[test]
fn a_stale_permit_is_found_without_an_action() {
    let s = Scratch::new();
    let schema = r#"[{"name":"refunds.create","input_schema":{"type":"object","properties":{"amount":{"type":"integer","maximum":5000}},"required":["amount"],"additionalProperties":false}}]"#;
    let r = precheck(&s, &fixture("fx6_stale_permit.json"), Some(schema), &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1"
    );
    assert!(r.stdout.contains("gets dropped-superseder-stale-permit"));
    assert_eq!(r.labelled("restore"), ["f_011"]);
}

#[test]
fn the_bound_answers_may_bind_never_pass() {
    let s = Scratch::new();
    let wide = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"any":[{"field":"a","op":"gt","value":1},{"field":"b","op":"gt","value":1},{"field":"c","op":"gt","value":1}]}}"#;
    let path = s.file("in.json", store(&[wide, CHAT], &["c9"]).as_bytes());
    let r = precheck(
        &s,
        &path,
        Some(r#"["refunds.create"]"#),
        &["--max-calls", "10"],
    );
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1"
    );
    assert!(
        r.stdout
            .contains("takes more than 10 calls (--max-calls); this is sound, not a proof"),
        "{}",
        r.stdout
    );
    assert!(r.labelled("witness").is_empty());
    assert_eq!(r.labelled("restore"), ["p1"]);
    let r = precheck(&s, &path, Some(r#"["refunds.create"]"#), &[]);
    assert_eq!(r.labelled("witness").len(), 3, "{}", r.stdout);
}

#[test]
fn unevaluable_records_block_unless_the_user_flies_blind() {
    let s = Scratch::new();
    let tools = r#"[{"name":"refunds.create","input_schema":{"type":"object","properties":{"amount":{"type":"integer","minimum":0}},"required":["amount"]}}]"#;
    let r = precheck(&s, &fixture("fx4_rolling_summary.json"), Some(tools), &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-unevaluable-record) exit 1"
    );
    assert_eq!(r.labelled("reason").len(), 8);
    let r = precheck(
        &s,
        &fixture("fx4_rolling_summary.json"),
        Some(tools),
        &["--allow-unevaluable"],
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);
    assert!(r.stdout.contains("you chose to fly blind"));
}

#[test]
fn tools_come_from_the_flag_then_the_document_then_the_records() {
    let s = Scratch::new();
    let with_tools =
        format!("{{\"records\":[{BIG},{CHAT}],\"kept\":[\"c9\"],\"tools\":{AMOUNT_AT_MOST_5000}}}");
    let path = s.file("in.json", with_tools.as_bytes());
    let r = precheck(&s, &path, None, &[]);
    assert_eq!(r.code, 0, "the document's schema: {}", r.stdout);
    let r = run(
        &["check", "--precheck", &path, "--tools", "refunds.create"],
        None,
    );
    assert_eq!(r.code, 1, "--tools names override: {}", r.stdout);
    let bare = s.file("bare.json", store(&[BIG, CHAT], &["c9"]).as_bytes());
    let r = precheck(&s, &bare, None, &[]);
    assert_eq!(r.labelled("tools"), ["refunds.create"]);
    // A list that leaves out the rule's tool judges it all the same (SPEC 2.3).
    let r = run(
        &["check", "--precheck", &bare, "--tools", "notes.append"],
        None,
    );
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1"
    );
    assert_eq!(r.labelled("tools"), ["notes.append"]);
}

/// Gemini CLI's declarations, as its request to the model carries them (`tools`: groups
/// of `functionDeclarations`, each schema under `parametersJsonSchema`), read as the same
/// schemas under `input_schema`: precheck and pin say the same, byte for byte.
#[test]
fn gemini_declarations_judge_as_the_same_json_schema_does() {
    let s = Scratch::new();
    for (schema, code) in [
        // Blocks on 5001, as INTEGER_AMOUNT does.
        (
            r#"{"type":"object","properties":{"amount":{"type":"integer","minimum":1},"ticket":{"type":"string"},"wait_for_previous":{"type":"boolean"}},"required":["amount","ticket"]}"#,
            1,
        ),
        // Rules the dropped rule out: passes, so the schema is read, not skipped.
        (
            r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":5000,"nullable":true}},"required":["amount"]}"#,
            0,
        ),
    ] {
        let gemini = format!(
            r#"[{{"functionDeclarations":[{{"name":"refunds.create","description":"Refund.","parametersJsonSchema":{schema}}}]}}]"#
        );
        let plain = tool(schema);
        let g = precheck(&s, &fixture(FX1), Some(&gemini), &[]);
        let p = precheck(&s, &fixture(FX1), Some(&plain), &[]);
        assert_eq!(g.code, code, "{}{}", g.stdout, g.stderr);
        assert_eq!((g.code, &g.stdout), (p.code, &p.stdout));
        let pin = |tools: &str| {
            let path = format!("@{}", s.file("pin-tools.json", tools.as_bytes()));
            run(&["pin", &fixture(FX1), "--tools", &path], None)
        };
        let (g, p) = (pin(&gemini), pin(&plain));
        assert_eq!(g.code, 0, "{}{}", g.stdout, g.stderr);
        assert_eq!(g.stdout, p.stdout);
        assert_eq!(
            g.labelled("pinned").len(),
            usize::from(code == 1),
            "{}",
            g.stdout
        );
    }
    // One group alone, not in an array, reads too.
    let group = r#"{"functionDeclarations":[{"name":"refunds.create","parametersJsonSchema":{"type":"object","properties":{"amount":{"type":"integer","maximum":5000}},"required":["amount"]}}]}"#;
    let r = precheck(&s, &fixture(FX1), Some(group), &[]);
    assert_eq!((r.code, r.labelled("tools")), (0, vec!["refunds.create"]));
    // Refused: another object (not split into names at its commas), and the Gemini API's
    // `"type": "NUMBER"` (Gemini CLI checks no call against it; not read as `number`).
    for (tools, needle) in [
        (
            r#"{"name":"refunds.create","x":1}"#,
            "--tools: tools must be an array",
        ),
        (
            r#"[{"functionDeclarations":[{"name":"refunds.create","parametersJsonSchema":{"type":"OBJECT","properties":{"amount":{"type":"NUMBER","maximum":5000}}}}]}]"#,
            r#"/properties/amount/type: type "NUMBER" is how the Gemini API spells "number""#,
        ),
    ] {
        let r = precheck(&s, &fixture(FX1), Some(tools), &[]);
        assert_eq!(r.code, 2, "{}", r.stdout);
        assert!(r.stderr.contains(needle), "{}", r.stderr);
    }
}

#[test]
fn a_malformed_schema_is_invalid_input_naming_the_tool() {
    let s = Scratch::new();
    let r = precheck(
        &s,
        &fixture(FX1),
        Some(&tool(
            r#"{"type":"object","properties":{"amount":{"type":"integr"}}}"#,
        )),
        &[],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("tool `refunds.create`")
            && r.stderr
                .contains("/properties/amount/type: unknown type \"integr\""),
        "{}",
        r.stderr
    );
}

#[test]
fn json_report_carries_witnesses_and_verifies() {
    let s = Scratch::new();
    let r = precheck(
        &s,
        &fixture(FX1),
        Some(INTEGER_AMOUNT),
        &["--format", "json"],
    );
    assert_eq!(r.code, 1);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["mode"], "precheck");
    assert_eq!(
        v["tools"],
        serde_json::json!(["refunds.create", "notes.append"])
    );
    assert!(v.get("action").is_none());
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "may-bind-some-action")
        .unwrap();
    assert_eq!(
        f["witness"],
        serde_json::json!({"tool": "refunds.create", "params": {"amount": 5001, "currency": "USD"}})
    );
    assert_eq!(f["record"], "f_011");
    let report = s.file("report.json", r.stdout.as_bytes());
    assert_eq!(run(&["verify", &report], None).code, 0);
}

#[test]
fn the_report_does_not_depend_on_record_order() {
    let s = Scratch::new();
    let text = std::fs::read_to_string(fixture(FX1)).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["records"].as_array_mut().unwrap().reverse();
    let reversed = s.file("rev.json", doc.to_string().as_bytes());
    let a = precheck(&s, &fixture(FX1), Some(INTEGER_AMOUNT), &[]);
    let b = precheck(&s, &reversed, Some(INTEGER_AMOUNT), &[]);
    let c = precheck(&s, &fixture(FX1), Some(INTEGER_AMOUNT), &[]);
    assert_eq!(a.stdout, c.stdout);
    // Only the origin differs: no line names the file.
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn sweep_precheck_tables_inputs_by_retention() {
    let s = Scratch::new();
    let tools = format!("@{}", s.file("tools.json", INTEGER_AMOUNT.as_bytes()));
    let r = run(
        &[
            "sweep",
            "--precheck",
            "--tools",
            &tools,
            &fixture(FX1),
            &fixture("fx3_genuinely_safe.json"),
            "--retention",
            "given",
            "--retention",
            "recency:16",
            "--format",
            "tsv",
        ],
        None,
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    let rows: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        rows,
        [
            "fixtures/fx1_refund_thread.json\tgiven\tBLOCK\tmay-bind-some-action",
            "fixtures/fx1_refund_thread.json\trecency:16\tBLOCK\tmay-bind-some-action",
            // The dropped rules of account.close and email.send, which the list leaves
            // out, are judged all the same (SPEC 2.3).
            "fixtures/fx3_genuinely_safe.json\tgiven\tBLOCK\tmay-bind-some-action",
            "fixtures/fx3_genuinely_safe.json\trecency:16\tBLOCK\tmay-bind-some-action",
            "0 PASS, 4 BLOCK, 0 ERROR -> overall exit 1",
        ]
    );
    let plain = run(&["sweep", "--precheck", &fixture(FX1)], None);
    assert_eq!(
        plain.code, 1,
        "no schemas: the dropped rule blocks\n{}",
        plain.stdout
    );
}

/// docs/precheck.md is real: every `$ omission-gate ...` line in a
/// fenced block, run with bash from the repository root, prints the lines under it.
#[test]
fn docs_precheck_examples_print_what_they_say() {
    let ran = common::doc_examples_hold("docs/precheck.md");
    assert!(ran >= 12, "found only {ran} examples");
}

/// Pads a document with kept chatter past the size from which the CLI reads through the
/// lean loader, so that the same store is judged on both paths.
fn padded(records: &[&str], kept: &[&str]) -> String {
    let filler: Vec<String> = (0..12_000)
        .map(|i| {
            format!(
                r#"{{"id":"pad{i}","seq":{},"kind":"chatter","text":"{}"}}"#,
                1000 + i,
                "x".repeat(80)
            )
        })
        .collect();
    let mut all: Vec<&str> = records.to_vec();
    all.extend(filler.iter().map(String::as_str));
    let doc = store(&all, kept);
    assert!(doc.len() > 1 << 20);
    doc
}

/// A glob in `--tools` stands for every tool it covers, including one no record spells
/// out (SPEC 2.3): it made precheck PASS while `check` blocked the 8,400 refund.
#[test]
fn a_glob_in_tools_stands_for_every_tool_it_covers() {
    let s = Scratch::new();
    let rule = r#"{"id":"r11","seq":11,"kind":"policy","scope":"refunds.create","effect":"require_approval","predicate":{"field":"amount","op":"gt","value":5000},"text":"Refunds over 5,000 need a human approver."}"#;
    let deploy = r#"{"id":"d12","seq":12,"kind":"policy","scope":"deploy.*","effect":"deny","predicate":{"all":[]}}"#;
    let paid = r#"{"id":"e13","seq":13,"kind":"effect","tool":"payouts.send","match":{"batch":7}}"#;
    let chat = r#"{"id":"c20","seq":20,"kind":"chatter","text":"Preparing the refund."}"#;
    let small = s.file("s.json", store(&[rule, chat], &["c20"]).as_bytes());
    let big = s.file("b.json", padded(&[rule, chat], &["c20"]).as_bytes());
    for path in [&small, &big] {
        let c = run(
            &[
                "check",
                path,
                "--action",
                r#"{"tool":"refunds.create","params":{"amount":8400}}"#,
            ],
            None,
        );
        assert_eq!(c.code, 1, "{}", c.stdout);
        for tools in ["*", "refunds.*", "*.create", "refunds.create,*"] {
            let r = run(&["check", "--precheck", path, "--tools", tools], None);
            assert_eq!(r.code, 1, "--tools {tools}: {}", r.stdout);
            assert_eq!(
                r.verdict_line(),
                "verdict   : BLOCK (may-bind-some-action) exit 1"
            );
            assert!(
                r.labelled("witness")
                    .contains(&r#"refunds.create {"amount":5001}"#),
                "--tools {tools}: {}",
                r.stdout
            );
        }
        // A glob that covers no rule's tool leaves none out (SPEC 2.3).
        let r = run(&["check", "--precheck", path, "--tools", "notes.*"], None);
        assert_eq!(r.code, 1, "a glob that covers no rule's tool: {}", r.stdout);
        assert!(
            r.labelled("witness")
                .contains(&r#"refunds.create {"amount":5001}"#),
            "{}",
            r.stdout
        );
        let r = run(&["sweep", "--precheck", "--tools", "*", path], None);
        assert_eq!(r.code, 1, "{}", r.stdout);
        assert!(
            r.stdout.contains("BLOCK may-bind-some-action"),
            "{}",
            r.stdout
        );
        let r = run(&["pin", path, "--tools", "*"], None);
        assert!(
            r.labelled("pinned").iter().any(|p| p.starts_with("r11 ")),
            "{}",
            r.stdout
        );
    }
    // Glob against glob: `*.run` meets `deploy.*` in `deploy.run`; `db.*` meets nothing.
    // An effect of a tool no `--tools` names is covered by `payouts.*`. What a list
    // does not cover is judged all the same, as a tool that takes any params (SPEC 2.3).
    let globs = s.file("g.json", store(&[deploy, paid, chat], &["c20"]).as_bytes());
    let r = run(&["check", "--precheck", &globs, "--tools", "*.run"], None);
    assert_eq!(
        r.labelled("witness"),
        ["deploy.run {}", r#"payouts.send {"batch":7}"#],
        "{}",
        r.stdout
    );
    let c = run(
        &[
            "check",
            &globs,
            "--action",
            r#"{"tool":"deploy.run","params":{}}"#,
        ],
        None,
    );
    assert_eq!(c.code, 1, "check blocks the witness: {}", c.stdout);
    for (tools, left_out) in [
        (
            "db.*",
            "tools that take any params: deploy.*, payouts.send (",
        ),
        ("payouts.*", "a tool that takes any params: deploy.* ("),
    ] {
        let r = run(&["check", "--precheck", &globs, "--tools", tools], None);
        assert_eq!(r.code, 1, "{}", r.stdout);
        assert_eq!(
            r.labelled("witness"),
            ["deploy.x {}", r#"payouts.send {"batch":7}"#],
            "{tools}: {}",
            r.stdout
        );
        assert!(r.labelled("note")[0].contains(left_out), "{}", r.stdout);
    }
}

/// With no tools given, the tools are every name or glob a policy scope or an effect
/// gives (SPEC 2.3): rules scoped by a glob were out of sight of pin and precheck.
#[test]
fn without_tools_rules_scoped_by_a_glob_are_judged() {
    let s = Scratch::new();
    let d1 = r#"{"id":"d1","seq":1,"kind":"policy","scope":"deploy.*","effect":"deny","predicate":{"field":"env","op":"eq","value":"prod"},"tokens":10}"#;
    let d2 = r#"{"id":"d2","seq":2,"kind":"policy","scope":"deploy.*","effect":"require_approval","predicate":{"all":[]},"tokens":10}"#;
    let t3 = r#"{"id":"t3","seq":3,"kind":"policy","scope":"db.drop_table","effect":"deny","predicate":{"all":[]},"tokens":10}"#;
    let chat: Vec<String> = (4..10)
        .map(|i| format!(r#"{{"id":"c{i}","seq":{i},"kind":"chatter","tokens":10}}"#))
        .collect();
    let mut records = vec![d1, d2, t3];
    records.extend(chat.iter().map(String::as_str));
    let path = s.file("s.json", store(&records, &["c9"]).as_bytes());
    let r = run(&["pin", &path, "--budget", "60"], None);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.labelled("tools"), ["db.drop_table, deploy.*"]);
    let pinned: Vec<&str> = r
        .labelled("pinned")
        .iter()
        .map(|p| p.split(' ').next().unwrap())
        .collect();
    assert_eq!(pinned, ["d1", "d2", "t3"], "{}", r.stdout);
    let ids = run(&["pin", &path, "--budget", "60", "--format", "ids"], None);
    let kept = s.file("kept.txt", ids.stdout.as_bytes());
    let c = run(
        &[
            "check",
            &path,
            "--kept",
            &format!("@{kept}"),
            "--action",
            r#"{"tool":"deploy.run","params":{"env":"dev"}}"#,
        ],
        None,
    );
    assert_eq!(c.verdict_line(), "verdict   : PASS exit 0", "{}", c.stdout);
    let r = run(
        &["check", "--precheck", &path, "--kept", &format!("@{kept}")],
        None,
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);

    // A store whose only rules are scoped by a glob: precheck judges the glob.
    let only = s.file("only.json", store(&[d1, d2, &chat[5]], &["c9"]).as_bytes());
    for path in [
        only.clone(),
        s.file("big.json", padded(&[d1, d2, &chat[5]], &["c9"]).as_bytes()),
    ] {
        let r = run(&["check", "--precheck", &path], None);
        assert_eq!(r.labelled("tools"), ["deploy.*"], "{}", r.stdout);
        assert_eq!(r.code, 1, "{}", r.stdout);
        assert_eq!(r.labelled("restore"), ["d1", "d2"], "{}", r.stdout);
    }
}

/// A call `check` rejects whatever is kept (it omits `amount`) is not the compaction's
/// doing (SPEC 5): precheck was ERROR on it, hiding the dropped rule's BLOCK, and could
/// never pass pin's kept set without a schema.
#[test]
fn precheck_notes_what_fails_whatever_is_kept_and_blocks_what_the_compaction_hides() {
    let s = Scratch::new();
    let rule = r#"{"id":"r11","seq":11,"kind":"policy","scope":"refunds.create","effect":"require_approval","predicate":{"field":"amount","op":"gt","value":5000}}"#;
    let small = r#"{"id":"r12","seq":12,"kind":"policy","scope":"refunds.create","effect":"allow","predicate":{"field":"amount","op":"lt","value":500}}"#;
    let chat = r#"{"id":"c20","seq":20,"kind":"chatter","text":"Preparing the refund."}"#;
    let path = s.file("s.json", store(&[rule, small, chat], &["c20"]).as_bytes());
    let r = run(&["check", "--precheck", &path], None);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1",
        "{}",
        r.stdout
    );
    let witnesses = r.labelled("witness");
    assert_eq!(witnesses[0], r#"refunds.create {"amount":5001}"#);
    assert!(witnesses.contains(&"refunds.create {}"), "{witnesses:?}");
    let notes = r.labelled("note");
    assert!(
        notes.iter().any(|n| n.starts_with(
            "fails-closed-whatever-kept: a reachable call of refunds.create gets unresolved-field whatever the compaction keeps"
        ) && n.ends_with("(a schema that requires `amount` rules it out)")),
        "{notes:?}"
    );
    // check agrees: the note's call fails with every record kept too.
    let c = run(
        &[
            "check",
            &path,
            "--kept",
            "r11,r12,c20",
            "--action",
            r#"{"tool":"refunds.create","params":{}}"#,
        ],
        None,
    );
    assert_eq!(c.code, 2, "{}", c.stdout);
    // Pin's kept set passes, with and without --tools.
    let ids = run(&["pin", &path, "--budget", "1000", "--format", "ids"], None);
    let kept = format!("@{}", s.file("kept.txt", ids.stdout.as_bytes()));
    for extra in [&[][..], &["--tools", "refunds.create"][..]] {
        let mut args = vec!["check", "--precheck", &path, "--kept", &kept];
        args.extend_from_slice(extra);
        let r = run(&args, None);
        assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);
        assert!(!r.labelled("note").is_empty());
    }
    // What the compaction does cause is still ERROR: a kept rule reads `tier`, whose
    // newest fact (a number) was dropped, and the older kept one is a string.
    let old = r#"{"id":"f1","seq":1,"kind":"fact","field":"tier","value":"gold"}"#;
    let new = r#"{"id":"f2","seq":2,"kind":"fact","field":"tier","value":5,"supersedes":"f1"}"#;
    let tier = r#"{"id":"p3","seq":3,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"tier","op":"gt","value":3}}"#;
    let path = s.file(
        "t.json",
        store(&[old, new, tier, chat], &["f1", "p3", "c20"]).as_bytes(),
    );
    let r = run(&["check", "--precheck", &path], None);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.verdict_line(), "verdict   : ERROR (type-mismatch) exit 2");
    assert_eq!(
        r.labelled("witness")[0],
        "refunds.create {}",
        "{}",
        r.stdout
    );
    assert!(
        r.labelled("reason")[0].ends_with(
            "(under this compaction only: with nothing dropped, check decides this call)"
        )
    );
    let r = run(
        &["check", "--precheck", &path, "--kept", "f1,f2,p3,c20"],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
}

/// A list given never narrows what precheck judges below the tools the records name
/// (SPEC 2.3). A misspelt `--tools refunds.creat` passed the compaction that drops the
/// refund rule, with only a note; now the rule's tool is judged as one that takes any
/// params, the note says so, and the verdict is the BLOCK a list naming it gives.
#[test]
fn a_list_that_leaves_out_a_named_tool_judges_it_all_the_same() {
    let not_listed = "not-listed: 1 tool name a policy scopes to or an effect gives is covered by no tool listed, and was judged as a tool that takes any params: refunds.create (list it if the agent has it, with its schema only where the harness refuses calls outside it)";
    let args = [
        "check",
        "--precheck",
        &fixture(FX1),
        "--tools",
        "refunds.creat",
    ];
    let r = run(&args, None);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1"
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.labelled("witness")[0],
        r#"refunds.create {"amount":5001}"#
    );
    assert_eq!(r.labelled("restore"), ["f_011"]);
    assert_eq!(r.labelled("note")[0], not_listed);
    let j = run(&[&args[..], &["--format", "json"]].concat(), None);
    assert_eq!(j.code, 1);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v["verdict"], "BLOCK");
    let note = &v["findings"][1];
    assert_eq!(note["code"], "not-listed");
    assert_eq!(note["severity"], "note");
    assert_eq!(
        note["message"].as_str(),
        not_listed.strip_prefix("not-listed: ")
    );
    // Listed, or no list: nothing left out, no note, and the same BLOCK.
    for tools in [&["--tools", "refunds.create"][..], &[]] {
        let r = run(&[&args[..3], tools].concat(), None);
        assert_eq!(r.code, 1, "{}", r.stdout);
        assert!(!r.stdout.contains("not-listed"), "{}", r.stdout);
    }
}

/// A listed glob covers a name or glob it matches as text: `*` covers every one (no
/// note); `refunds.*` covers `refunds.create` and the scope `refunds.*`, not
/// `account.close` or `email.send`. A name is shown as the input spells it, escaped.
#[test]
fn a_listed_glob_covers_what_it_matches_as_text() {
    let fx3 = fixture("fx3_genuinely_safe.json");
    let r = run(&["check", "--precheck", &fx3, "--tools", "*"], None);
    assert!(!r.stdout.contains("not-listed"), "{}", r.stdout);
    let r = run(&["check", "--precheck", &fx3, "--tools", "refunds.*"], None);
    let notes = r.labelled("note");
    let note = notes
        .iter()
        .find(|n| n.starts_with("not-listed: "))
        .expect("a not-listed note");
    assert!(
        note.starts_with("not-listed: 2 tool names a policy scopes to or an effect gives are covered by no tool listed, and were judged as tools that take any params: account.close, email.send (list those the agent has, "),
        "{note}"
    );
    let s = Scratch::new();
    let scopes: Vec<String> = (0..7)
        .map(|i| {
            format!(
                r#"{{"id":"p{i}","seq":{i},"kind":"policy","scope":"t{i}\u202e[31m","predicate":{{"all":[]}},"effect":"deny"}}"#
            )
        })
        .collect();
    let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let path = s.file("seven.json", store(&scopes, &[]).as_bytes());
    let r = run(&["check", "--precheck", &path, "--tools", "other"], None);
    let notes = r.labelled("note");
    assert_eq!(notes.len(), 1, "{}", r.stdout);
    assert!(
        notes[0].contains(
            r": t0\u{202e}[31m, t1\u{202e}[31m, t2\u{202e}[31m, t3\u{202e}[31m, t4\u{202e}[31m and 2 more ("
        ),
        "{}",
        notes[0]
    );
    assert!(
        notes[0].starts_with("not-listed: 7 tool names "),
        "{}",
        notes[0]
    );
}

/// A rule reading `a` and `a.b.c`, whose calls precheck does not build, was `undecided`
/// (ERROR) whenever it was dropped, though no compaction can make `check` fail closed
/// on a rule the agent's view does not evaluate: on the full records alone it fails
/// closed exactly as with nothing dropped, and an allow rule the agent cannot see never
/// blocks. A dropped allow rule now passes; a kept one with a fact it reads dropped (a
/// stale permit), and a dropped restrictive one, may still bind.
#[test]
fn a_rule_precheck_cannot_split_is_undecided_only_where_the_agent_evaluates_it() {
    let s = Scratch::new();
    let rule = |effect: &str| {
        format!(
            r#"{{"id":"p","seq":1,"kind":"policy","scope":"t","effect":"{effect}","predicate":{{"all":[{{"field":"a","op":"ne","value":null}},{{"field":"a.b.c","op":"eq","value":1}}]}}}}"#
        )
    };
    let fact = r#"{"id":"f","seq":2,"kind":"fact","field":"a.b.c","value":1}"#;
    let chat = r#"{"id":"c","seq":3,"kind":"chatter"}"#;
    let allow = rule("allow");
    let deny = rule("deny");
    let cases: [(&str, &[&str], &str); 4] = [
        (&allow, &["f", "c"], "verdict   : PASS exit 0"),
        (&allow, &["c"], "verdict   : PASS exit 0"),
        (
            &allow,
            &["p", "c"],
            "verdict   : BLOCK (may-bind-some-action) exit 1",
        ),
        (
            &deny,
            &["f", "c"],
            "verdict   : BLOCK (may-bind-some-action) exit 1",
        ),
    ];
    for (rule, kept, want) in cases {
        let input = s.file("in.json", store(&[rule, fact, chat], kept).as_bytes());
        let r = precheck(&s, &input, Some(r#"["t"]"#), &[]);
        assert_eq!(r.verdict_line(), want, "{kept:?}\n{}", r.stdout);
    }
}

/// A tool judged beside a list (here `refunds.*`, which another rule scopes to and no
/// listed tool covers) stands for the names no listed tool covers: the dropped rule of
/// `refunds.create`, listed with a schema capped at 5,000, is judged by that schema
/// only, so precheck still passes, and pin pins only what the glob's own tools need.
#[test]
fn a_listed_tool_keeps_its_schema_beside_a_glob_the_list_leaves_out() {
    let s = Scratch::new();
    let glob = r#"{"id":"g2","seq":2,"kind":"policy","scope":"refunds.*","effect":"deny","predicate":{"field":"amount","op":"gt","value":9000}}"#;
    let path = s.file(
        "in.json",
        store(&[BIG, glob, CHAT], &["g2", "c9"]).as_bytes(),
    );
    let r = precheck(&s, &path, Some(AMOUNT_AT_MOST_5000), &[]);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);
    assert_eq!(
        r.labelled("note")[..2],
        [
            "not-listed: 1 tool name a policy scopes to or an effect gives is covered by no tool listed, and was judged as a tool that takes any params: refunds.* (list it if the agent has it, with its schema only where the harness refuses calls outside it)",
            "ruled-out-by-schema: dropped policy 'p1' (require_approval) binds calls that the schema of refunds.create rules out (e.g. {\"amount\":5001}), and no call it admits: not a block reason",
        ],
        "{}",
        r.stdout
    );
    let tools = s.file("tools.json", AMOUNT_AT_MOST_5000.as_bytes());
    let pin = run(&["pin", &path, "--tools", &format!("@{tools}")], None);
    assert_eq!(
        pin.labelled("pinned"),
        [r#"g2 (active deny rule in scope of refunds.*: TRUE for a call with {"amount":9001})"#],
        "{}",
        pin.stdout
    );
    // Dropped, the glob's rule blocks a call of a tool no listed one covers.
    let path = s.file("in2.json", store(&[BIG, glob, CHAT], &["c9"]).as_bytes());
    let r = precheck(&s, &path, Some(AMOUNT_AT_MOST_5000), &[]);
    assert_eq!(
        r.labelled("witness")[0],
        r#"refunds.x {"amount":9001}"#,
        "{}",
        r.stdout
    );
    assert_eq!(r.labelled("restore"), ["g2"], "{}", r.stdout);
}

/// When the calls of more than one tool cannot be built within the bound, what precheck
/// says came from the first such tool alone: a kept rule whose dropped fact the listed
/// `t1` cannot leave unread (its schema requires `b`) can block no call of `t1`, and
/// precheck passed, though `t2`, whose calls were not built either, can leave `b` to the
/// dropped fact, and `check` blocks `t2 {"c":{"d":-1}}`.
#[test]
fn a_tool_left_undecided_after_another_is_not_passed() {
    let s = Scratch::new();
    let records = [
        r#"{"id":"r0","seq":1,"kind":"fact","field":"b","value":0}"#,
        r#"{"id":"r1","seq":2,"kind":"chatter","text":"hi"}"#,
        r#"{"id":"r2","seq":3,"kind":"policy","scope":"t*","effect":"deny","predicate":{"all":[{"field":"b","op":"lte","value":0},{"field":"c.d","op":"ne","value":0}]}}"#,
    ];
    let path = s.file("in.json", store(&records, &["r2"]).as_bytes());
    let tools = r#"[{"name":"t1","input_schema":{"type":"object","properties":{"b":{"type":"number"}},"required":["b"]}},{"name":"t2"}]"#;
    let r = precheck(&s, &path, Some(tools), &["--max-calls", "3"]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1",
        "{}",
        r.stdout
    );
    assert!(
        r.labelled("reason")[0]
            .contains("may bind some reachable call of t2: precheck could not decide"),
        "{}",
        r.stdout
    );
    let c = run(
        &[
            "check",
            &path,
            "--action",
            r#"{"tool":"t2","params":{"c":{"d":-1}}}"#,
        ],
        None,
    );
    assert_eq!(c.code, 1, "{}", c.stdout);
}

/// A store of `rule` and a chatter record `c1`, which alone is kept.
fn one_rule(s: &Scratch, rule: &str) -> String {
    s.file(
        "store.json",
        store(&[rule, r#"{"id":"c1","seq":2,"kind":"chatter"}"#], &["c1"]).as_bytes(),
    )
}

/// `check` of `input` blocks the call `action`.
fn assert_check_blocks(input: &str, action: &str) {
    let blocked = run(&["check", input, "--action", action], None);
    assert_eq!(blocked.code, 1, "{}", blocked.stdout);
}

/// `pin` of `input` over the tools `tools` (a tool list's JSON) keeps the record `id`.
fn assert_pins(s: &Scratch, input: &str, tools: &str, id: &str) {
    let tools_path = format!("@{}", s.file("tools.json", tools.as_bytes()));
    let pinned = run(
        &["pin", input, "--tools", &tools_path, "--format", "ids"],
        None,
    );
    assert_eq!(pinned.code, 0, "{}", pinned.stdout);
    assert!(pinned.stdout.lines().any(|l| l == id), "{}", pinned.stdout);
}

/// Two required keys nobody reads, `customer` (any value) and `customer.tier`: sampled
/// one by one, `customer` took `""`, a string a key with dots passes through, so every
/// call spelt `customer.tier` two ways, `check` refused each, no call was tried, and a
/// dropped deny on `n` that `check` blocks for `{"customer": 0, "customer.tier": 0, "n":
/// "z"}` was called ruled out by the schema: precheck passed (exit 0) and pin pinned
/// nothing.
#[test]
fn required_keys_nobody_reads_are_filled_so_that_each_field_is_spelt_once() {
    let s = Scratch::new();
    let input = one_rule(
        &s,
        r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"n","op":"eq","value":"z"},"effect":"deny"}"#,
    );
    let tools = tool(
        r#"{"type":"object","properties":{"n":{"type":"string"},"customer":{},"customer.tier":{"type":"number"}},"required":["customer","customer.tier"]}"#,
    );
    let r = precheck(&s, &input, Some(&tools), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1"
    );
    let witness = r.labelled("witness")[0].to_string();
    assert_eq!(
        witness,
        r#"refunds.create {"customer":0,"customer.tier":0,"n":"z"}"#
    );
    let action = format!(
        r#"{{"tool":"refunds.create","params":{}}}"#,
        witness.trim_start_matches("refunds.create ")
    );
    let checked = run(&["check", &input, "--action", &action], None);
    assert_eq!(checked.code, 1, "{}", checked.stdout);
    assert_pins(&s, &input, &tools, "p1");

    // A `customer` that admits no number, boolean or null: no call is built, and
    // precheck says the rule may bind rather than pass it.
    let strings = tool(
        r#"{"type":"object","properties":{"n":{"type":"string"},"customer":{"type":"string"},"customer.tier":{"type":"number"}},"required":["customer","customer.tier"]}"#,
    );
    let r = precheck(&s, &input, Some(&strings), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("the keys the schema requires give `customer.tier` two ways"),
        "{}",
        r.stdout
    );
}

/// A required key `x.z` beside a required object `x` whose own schema requires `z`:
/// each was sampled on its own (`"b"` and `"a"`), so every call with `x` gave `x.z` two
/// values, `check` refuses such a call, and a dropped deny on `x.y` that `check` blocks
/// for `{"x": {"y": 6000, "z": "b"}, "x.z": "b"}` was called ruled out by the schema:
/// precheck passed (exit 0) and pin pinned nothing. Precheck now says it may bind.
#[test]
fn a_field_sampled_two_ways_across_objects_is_not_a_call_ruled_out() {
    let s = Scratch::new();
    let input = one_rule(
        &s,
        r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"x.y","op":"gt","value":5000},"effect":"deny"}"#,
    );
    let tools = tool(
        r#"{"type":"object","properties":{"x":{"type":"object","properties":{"y":{"type":"integer"},"z":{"enum":["a","b"]}},"required":["y","z"]},"x.z":{"enum":["b"]}},"required":["x","x.z"]}"#,
    );
    assert_check_blocks(
        &input,
        r#"{"tool":"refunds.create","params":{"x":{"y":6000,"z":"b"},"x.z":"b"}}"#,
    );
    let r = precheck(&s, &input, Some(&tools), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "precheck could not decide, because the keys the schema requires give `x.z` two ways"
        ),
        "{}",
        r.stdout
    );
    assert_pins(&s, &input, &tools, "p1");
}

/// A rule on `x.y.w` where the schema admits the key `x.y.w` and requires an object `x`
/// that requires the key `y.w`: `x`'s `y.w` was filled as a required key nobody reads,
/// with one sampled value (`"a"`), so no call gave `x.y.w` another value inside `x`, and
/// a dropped deny on `x.y.w eq "b"` that `check` blocks for `{"n": 0, "x": {"y.w": "b"}}`
/// was called ruled out by the schema: precheck passed (exit 0) and pin pinned nothing.
#[test]
fn a_required_key_that_spells_a_read_field_is_tried_as_the_field() {
    let s = Scratch::new();
    let input = one_rule(
        &s,
        r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"x.y.w","op":"eq","value":"b"},"effect":"deny"}"#,
    );
    let tools = tool(
        r#"{"type":"object","properties":{"x":{"type":"object","properties":{"y.w":{"enum":["a","b"]}},"required":["y.w"]},"n":{"type":"integer"},"x.y.w":{"enum":["b"]}},"required":["x","n"],"additionalProperties":false}"#,
    );
    let r = precheck(&s, &input, Some(&tools), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.labelled("witness"),
        [r#"refunds.create {"n":0,"x":{"y.w":"b"}}"#]
    );
    assert_check_blocks(
        &input,
        r#"{"tool":"refunds.create","params":{"n":0,"x":{"y.w":"b"}}}"#,
    );
    assert_pins(&s, &input, &tools, "p1");
}

/// A rule on `x.z` under a schema that requires the key `x.z` (6000 or 100) and an
/// object `x` that requires `z` (any integer): every call gives `x.z` both ways, each
/// spelling took the values of its own classes (6000 and 100; 0), no value was common
/// to both, every call was skipped as giving `x.z` two values, and a dropped deny on
/// `x.z not_in [null]` that `check` blocks for `{"x": {"z": 6000}, "x.z": 6000}` was
/// called ruled out by the schema: precheck passed (exit 0) and pin pinned nothing.
#[test]
fn a_read_field_every_call_gives_two_ways_is_undecided() {
    let s = Scratch::new();
    let input = one_rule(
        &s,
        r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"x.z","op":"not_in","value":[null]},"effect":"deny"}"#,
    );
    let tools = tool(
        r#"{"type":"object","properties":{"x":{"type":"object","properties":{"z":{"type":"integer"}},"required":["z"],"additionalProperties":false},"x.z":{"enum":[6000,100]}},"required":["x","x.z"],"additionalProperties":false}"#,
    );
    assert_check_blocks(
        &input,
        r#"{"tool":"refunds.create","params":{"x":{"z":6000},"x.z":6000}}"#,
    );
    let r = precheck(&s, &input, Some(&tools), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "precheck could not decide, because every call that gives `x.z` gives it two ways"
        ),
        "{}",
        r.stdout
    );
    assert_pins(&s, &input, &tools, "p1");
}

/// Gemini CLI 0.61.0 checks a call against the tool's schema with Ajv, and where Ajv
/// cannot compile the schema it logs "Skipping parameter validation" and runs the call:
/// a `$schema` it does not load (draft 4), a draft-4 boolean `exclusiveMaximum`, an empty
/// `enum`, `nullable` without `type`, a `pattern` that JavaScript's `new RegExp(p, "u")`
/// refuses (`\-`) or an annotation of the wrong type (`format: 5`) anywhere voids every bound, and the call with
/// `amount` 8400 runs. Precheck must judge such a tool as taking any params.
#[test]
fn a_schema_gemini_cli_cannot_compile_is_read_as_admitting_any_params() {
    let s = Scratch::new();
    let input = one_rule(
        &s,
        r#"{"id":"f_011","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"amount","op":"gt","value":5000},"effect":"require_approval"}"#,
    );
    let capped = r#""amount":{"type":"integer","maximum":5000}"#;
    for (schema, why) in [
        (
            format!(r#"{{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{{{capped}}},"required":["amount"]}}"#),
            "a dialect it does not load",
        ),
        (
            r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":5001,"exclusiveMaximum":true}},"required":["amount"]}"#.to_string(),
            "is a boolean (draft 4)",
        ),
        (
            format!(r#"{{"type":"object","properties":{{{capped},"memo":{{"enum":[]}}}},"required":["amount"]}}"#),
            "is empty or repeats a member",
        ),
        (
            format!(r#"{{"type":"object","properties":{{{capped},"memo":{{"nullable":true}}}},"required":["amount"]}}"#),
            "stands without `type`",
        ),
        (
            format!(r#"{{"type":"object","properties":{{{capped},"memo":{{"type":"null","nullable":false}}}},"required":["amount"]}}"#),
            "is false beside a `type` that admits null",
        ),
        (
            format!(r#"{{"$id":"https://example.com/refund","type":"object","properties":{{{capped}}},"required":["amount"]}}"#),
            "it checks the first call only",
        ),
        (
            format!(r#"{{"$async":true,"type":"object","properties":{{{capped}}},"required":["amount"]}}"#),
            "which Gemini CLI takes for a pass",
        ),
        (
            format!(r##"{{"type":"object","properties":{{{capped},"memo":{{"$ref":"#/properties/memo"}}}},"required":["amount"]}}"##),
            "runs Ajv's compiler out of stack",
        ),
        (
            format!(r#"{{"type":"object","properties":{{{capped},"memo":{{"$anchor":"a"}},"note":{{"$anchor":"a"}}}},"required":["amount"]}}"#),
            "names two schemas or is no name",
        ),
        (
            format!(r##"{{"type":"object","properties":{{{capped},"memo":{{"$ref":"#/$defs/memo"}}}},"required":["amount"]}}"##),
            "names no node of the schema",
        ),
        (
            r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":5000},"memo":{"type":"string","pattern":"^\\d{3}\\-\\d{4}$"}},"required":["amount"]}"#.to_string(),
            "is no regular expression that JavaScript is sure to compile",
        ),
        (
            format!(r#"{{"type":"object","properties":{{{capped},"memo":{{"type":"string","format":5}}}},"required":["amount"]}}"#),
            "is not a string",
        ),
        ("false".to_string(), "the schema is `false`, which it reads as no schema"),
    ] {
        let r = precheck(&s, &input, Some(&tool(&schema)), &[]);
        assert_eq!(r.code, 1, "{schema}: {}", r.stdout);
        assert!(r.stdout.contains("witness   : refunds.create {\"amount\":5001}"), "{}", r.stdout);
        assert!(r.stdout.contains("Gemini CLI's validator cannot compile"), "{}", r.stdout);
        assert!(r.stdout.contains(why), "{}", r.stdout);
    }
    // The same bound in a schema Ajv compiles still rules the rule out.
    for fine in [
        format!(
            r##"{{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{{{capped},"memo":{{"$ref":"#/$defs/memo"}}}},"$defs":{{"memo":{{"type":"string"}}}},"required":["amount"]}}"##
        ),
        r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":5000},"memo":{"type":"string","pattern":"^\\d{3}-\\d{4}$","format":"date"}},"required":["amount"]}"#.to_string(),
    ] {
        let r = precheck(&s, &input, Some(&tool(&fine)), &[]);
        assert_eq!(r.code, 0, "{fine}: {}", r.stdout);
    }
}

/// Gemini CLI's Ajv tests a required name as `params.name === undefined`: a name every
/// JavaScript object inherits (`constructor`) is never that, so `{}` passes
/// `"required": ["constructor"]` and the gate reads `constructor` from the facts.
#[test]
fn a_required_name_every_javascript_object_has_does_not_rule_out_its_absence() {
    let s = Scratch::new();
    let input = s.file(
        "store.json",
        store(
            &[
                r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"constructor","op":"eq","value":-1},"effect":"deny"}"#,
                r#"{"id":"f2","seq":2,"kind":"fact","field":"constructor","value":-1}"#,
                r#"{"id":"c1","seq":3,"kind":"chatter"}"#,
            ],
            &["f2", "c1"],
        )
        .as_bytes(),
    );
    let schema = r#"{"type":"object","properties":{"constructor":{"minimum":0}},"required":["constructor"]}"#;
    let r = precheck(&s, &input, Some(&tool(schema)), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("witness   : refunds.create {}"),
        "{}",
        r.stdout
    );
}

/// Gemini CLI's Ajv skips a `__proto__` key of `properties`: `{"__proto__": 8400}` runs
/// against `"properties": {"__proto__": {"maximum": 5000}}`.
#[test]
fn a_property_named_proto_bounds_nothing() {
    let s = Scratch::new();
    let input = one_rule(
        &s,
        r#"{"id":"f_011","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"__proto__","op":"gt","value":5000},"effect":"require_approval"}"#,
    );
    let schema =
        r#"{"type":"object","properties":{"__proto__":{"type":"integer","maximum":5000}}}"#;
    let r = precheck(&s, &input, Some(&tool(schema)), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("witness   : refunds.create {\"__proto__\":5001}"),
        "{}",
        r.stdout
    );
}

/// Gemini CLI 0.61.0 checks a call against the tool's object schema with a boolean
/// `wait_for_previous` added, so `{"wait_for_previous": true}` runs even where the schema
/// says `additionalProperties: false`.
#[test]
fn gemini_clis_wait_for_previous_is_a_param_every_object_schema_admits() {
    let s = Scratch::new();
    let input = one_rule(
        &s,
        r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"wait_for_previous","op":"eq","value":true},"effect":"deny"}"#,
    );
    let schema = r#"{"type":"object","properties":{"amount":{"type":"integer"}},"additionalProperties":false}"#;
    let r = precheck(&s, &input, Some(&tool(schema)), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("witness   : refunds.create {\"wait_for_previous\":true}"),
        "{}",
        r.stdout
    );
}

/// Gemini CLI and Claude Code read a tool's schema into JavaScript doubles, and Ajv checks
/// a call against the nearest double of each bound and member: `maximum`
/// 5000.9999999999999999 is 5001 there, and `{"amount": 5001}` runs; an `enum` member
/// 5000.00000000000000001 is 5000, and `{"amount": 5000}` runs. Precheck must admit
/// those calls too.
#[test]
fn a_bound_or_member_a_double_rounds_admits_what_the_harness_admits() {
    let s = Scratch::new();
    for (op, value, amount) in [
        (
            "gt",
            "5000",
            r#"{"type":"integer","maximum":5000.9999999999999999}"#,
        ),
        (
            "lt",
            "9007199254740993",
            r#"{"type":"integer","minimum":9007199254740993}"#,
        ),
        ("eq", "5000", r#"{"enum":[5000.00000000000000001]}"#),
        ("eq", "5000", r#"{"const":5000.00000000000000001}"#),
    ] {
        let input = s.file(
            "store.json",
            store(
                &[
                    &format!(
                        r#"{{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","predicate":{{"field":"amount","op":"{op}","value":{value}}},"effect":"deny"}}"#
                    ),
                    r#"{"id":"c1","seq":2,"kind":"chatter"}"#,
                ],
                &["c1"],
            )
            .as_bytes(),
        );
        let schema = format!(
            r#"{{"type":"object","properties":{{"amount":{amount}}},"required":["amount"],"additionalProperties":false}}"#
        );
        let r = precheck(&s, &input, Some(&tool(&schema)), &[]);
        assert_eq!(r.code, 1, "{amount}: {}", r.stdout);
        assert!(r.stdout.contains("may-bind-some-action"), "{}", r.stdout);
    }
}

/// Claude Code 2.1.197 and Codex 0.171.0 run an MCP tool's call whatever its
/// `inputSchema` says (`amount` 8400 against `maximum: 5000` reached the pre-tool hook and
/// the server), so under `--harness claude-code` or `codex` a schema bounds no call:
/// precheck blocks and pin keeps the rule that call trips. Gemini CLI refuses such a call
/// before its hook, and with no harness named the schema bounds the calls as written.
#[test]
fn a_schema_bounds_no_call_under_a_harness_that_runs_calls_outside_it() {
    let s = Scratch::new();
    let input = s.file("in.json", store(&[BIG, CHAT], &["c9"]).as_bytes());
    for (harness, code) in [
        (None, 0),
        (Some("gemini-cli"), 0),
        (Some("claude-code"), 1),
        (Some("codex"), 1),
    ] {
        let extra: Vec<&str> = harness.iter().flat_map(|h| ["--harness", *h]).collect();
        let r = precheck(&s, &input, Some(AMOUNT_AT_MOST_5000), &extra);
        assert_eq!(r.code, code, "{harness:?}: {}", r.stdout);
        let tools = format!("@{}", s.file("tools.json", AMOUNT_AT_MOST_5000.as_bytes()));
        let mut args = vec!["pin", input.as_str(), "--tools", &tools, "--format", "ids"];
        args.extend(&extra);
        let pinned = run(&args, None);
        assert_eq!(pinned.code, 0, "{}", pinned.stdout);
        assert_eq!(
            pinned.stdout.lines().any(|l| l == "p1"),
            code == 1,
            "{harness:?}: {}",
            pinned.stdout
        );
        if code == 1 {
            assert!(
                r.stdout.contains("witness   : refunds.create {\"amount\":"),
                "{}",
                r.stdout
            );
            assert!(r.stdout.contains("bounds no call under"), "{}", r.stdout);
            let sweep = run(
                &[
                    "sweep",
                    "--precheck",
                    &input,
                    "--tools",
                    &tools,
                    "--harness",
                    harness.unwrap_or_default(),
                    "--format",
                    "tsv",
                ],
                None,
            );
            assert!(sweep.stdout.contains("BLOCK"), "{}", sweep.stdout);
        }
    }
    // --harness says which harness runs the calls only where something is judged by it.
    let r = run(
        &[
            "check",
            &input,
            "--action",
            r#"{"tool":"x","params":{}}"#,
            "--harness",
            "codex",
        ],
        None,
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// Gemini CLI 0.61.0 rewrites an MCP tool's schema before it checks a call against it
/// (`"type": ["string", "null"]` becomes `"type": "string", "nullable": true`, at every
/// depth): a `const` member so rewritten admits the rewritten call, and a schema whose
/// rewrite Ajv cannot compile (a repeating `enum` member, a `dependencies` list that is
/// no longer one) checks no call. Precheck passed each.
#[test]
fn a_schema_is_read_as_gemini_cli_rewrites_an_mcp_tools_schema() {
    let s = Scratch::new();
    let column = r#"{"id":"p1","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"column.type","op":"eq","value":"string"}}"#;
    let input = s.file("in.json", store(&[column, CHAT], &["c9"]).as_bytes());
    let schema = r#"{"type":"object","properties":{"column":{"const":{"type":["string","null"]}}},"required":["column"]}"#;
    let r = precheck(
        &s,
        &input,
        Some(&tool(schema)),
        &["--harness", "gemini-cli"],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains(r#"witness   : refunds.create {"column":{"nullable":true,"type":"string"}}"#),
        "{}",
        r.stdout
    );
    let input = s.file("big.json", store(&[BIG, CHAT], &["c9"]).as_bytes());
    for extra in [
        r#""column":{"enum":[{"type":["string","null"]},{"type":"string","nullable":true}]}"#,
        r#""type":{"type":"string"}},"dependencies":{"type":["string","null"]"#,
    ] {
        let schema = format!(
            r#"{{"type":"object","properties":{{"amount":{{"type":"integer","maximum":5000}},{extra}}},"required":["amount"]}}"#
        );
        let r = precheck(
            &s,
            &input,
            Some(&tool(&schema)),
            &["--harness", "gemini-cli"],
        );
        assert_eq!(r.code, 1, "{schema}: {}", r.stdout);
        assert!(r.stdout.contains("once it has rewritten"), "{}", r.stdout);
    }
}

/// With no harness named, a tool named as Claude Code and Codex name an MCP tool
/// (`mcp__billing__refunds_create`) has a schema neither of them holds a call to: it
/// bounds no call, unless `--harness gemini-cli` says Gemini CLI runs the calls.
#[test]
fn an_mcp_tool_named_as_claude_code_and_codex_name_it_is_bounded_by_no_schema() {
    let s = Scratch::new();
    let rule = BIG.replace("refunds.create", "mcp__billing__refunds_create");
    let input = s.file("in.json", store(&[&rule, CHAT], &["c9"]).as_bytes());
    let tools = AMOUNT_AT_MOST_5000.replace("refunds.create", "mcp__billing__refunds_create");
    let r = precheck(&s, &input, Some(&tools), &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("the name is an MCP tool's as Claude Code and Codex give it"),
        "{}",
        r.stdout
    );
    let r = precheck(&s, &input, Some(&tools), &["--harness", "gemini-cli"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    // A glob that covers the name judges its calls by the same schema: it bounds them
    // no more than under the name itself.
    for glob in ["*", "mcp_*", "mcp*create", "mcp__billing__*"] {
        let tools = AMOUNT_AT_MOST_5000.replace("refunds.create", glob);
        let r = precheck(&s, &input, Some(&tools), &[]);
        assert_eq!(r.code, 1, "{glob}: {}", r.stdout);
        assert!(
            r.stdout.contains("(or a glob that covers one)"),
            "{}",
            r.stdout
        );
        let path = format!("@{}", s.file("tools.json", tools.as_bytes()));
        let pinned = run(&["pin", &input, "--tools", &path, "--format", "ids"], None);
        assert_eq!(pinned.stdout.lines().collect::<Vec<_>>(), ["p1"], "{glob}");
        let r = precheck(&s, &input, Some(&tools), &["--harness", "gemini-cli"]);
        assert_eq!(r.code, 0, "{glob}: {}", r.stdout);
    }
    // The same schema under another name still bounds the calls.
    let plain = s.file("plain.json", store(&[BIG, CHAT], &["c9"]).as_bytes());
    let r = precheck(&s, &plain, Some(AMOUNT_AT_MOST_5000), &[]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}
