//! One CLI test per row of SPEC 4's firing table, plus effects, unevaluable records,
//! revocation and derivation notes. Each runs the real binary on a small document.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
use common::{Scratch, doc, run};

const ACTION: &str = r#"{"tool":"refunds.create","params":{"amount":8400}}"#;
const DENY_BIG: &str = r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.*","effect":"require_approval","predicate":{"field":"amount","op":"gt","value":5000}}"#;
const CHAT: &str = r#"{"id":"c","seq":9,"kind":"chatter","text":"hello"}"#;

fn tier_policy(effect: &str, value: &str) -> String {
    format!(
        r#"{{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","effect":"{effect}","predicate":{{"field":"customer.tier","op":"eq","value":"{value}"}}}}"#
    )
}
const TIER_OLD: &str =
    r#"{"id":"t1","seq":2,"kind":"fact","field":"customer.tier","value":"gold"}"#;
const TIER_NEW: &str = r#"{"id":"t2","seq":3,"kind":"fact","field":"customer.tier","value":"standard","supersedes":"t1"}"#;

/// Asserts that `pin` over `path` with the tools `tools` pins the effect `id` of `tool`
/// as one a reachable call can replay.
fn assert_pins_replayable(path: &str, tools: &str, id: &str, tool: &str) {
    let r = run(&["pin", path, "--tools", tools], None);
    let line = format!("{id} (effect ledger entry of {tool}: a reachable call can replay it)");
    assert!(
        r.labelled("pinned").contains(&line.as_str()),
        "{}",
        r.stdout
    );
}

fn check(records: &[&str], kept: &[&str], action: &str, extra: &[&str]) -> common::Run {
    let s = Scratch::new();
    let path = s.file("in.json", doc(records, kept, action).as_bytes());
    let mut args = vec!["check", path.as_str()];
    args.extend_from_slice(extra);
    run(&args, None)
}

#[test]
fn restrictive_unknown_is_error_unresolved_field() {
    let r = check(
        &[DENY_BIG, CHAT],
        &["p", "c"],
        r#"{"tool":"refunds.create","params":{}}"#,
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(
        r.verdict_line(),
        "verdict   : ERROR (unresolved-field) exit 2"
    );
    assert!(r.stdout.contains("field `amount`"), "{}", r.stdout);
}

#[test]
fn restrictive_dropped_true_is_block_dropped_binding_constraint() {
    let r = check(&[DENY_BIG, CHAT], &["c"], ACTION, &[]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-binding-constraint) exit 1"
    );
    assert_eq!(r.labelled("restore"), ["p"]);
    assert!(r.stdout.contains("(amount = 8400 gt 5000)"), "{}", r.stdout);
}

#[test]
fn restrictive_dropped_false_is_nothing() {
    let r = check(
        &[DENY_BIG, CHAT],
        &["c"],
        r#"{"tool":"refunds.create","params":{"amount":5000}}"#,
        &[],
    );
    assert_eq!(r.code, 0);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
    assert!(
        r.labelled("note").is_empty() && r.labelled("reason").is_empty(),
        "{}",
        r.stdout
    );
}

#[test]
fn restrictive_kept_true_false_is_block_stale_kept() {
    // The rule is kept, the newer fact that makes it fire is dropped.
    let r = check(
        &[&tier_policy("deny", "standard"), TIER_OLD, TIER_NEW],
        &["p", "t1"],
        ACTION,
        &[],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-superseder-stale-kept) exit 1"
    );
    assert_eq!(r.labelled("restore"), ["t2"]);
}

#[test]
fn restrictive_kept_true_unknown_is_block_dropped_binding_fact() {
    let r = check(
        &[&tier_policy("deny", "standard"), TIER_OLD, TIER_NEW],
        &["p"],
        ACTION,
        &[],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-binding-fact) exit 1"
    );
    assert_eq!(r.labelled("restore"), ["t2"]);
}

#[test]
fn restrictive_false_true_is_a_safe_direction_note() {
    let r = check(
        &[&tier_policy("deny", "gold"), TIER_OLD, TIER_NEW],
        &["p", "t1"],
        ACTION,
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
    let notes = r.labelled("note");
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].starts_with("stale-value-safe-direction: kept policy 'p' (deny)"),
        "{}",
        notes[0]
    );
}

#[test]
fn allow_true_in_view_only_is_block_stale_permit() {
    let r = check(
        &[&tier_policy("allow", "gold"), TIER_OLD, TIER_NEW],
        &["p", "t1"],
        ACTION,
        &[],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-superseder-stale-permit) exit 1"
    );
    assert_eq!(r.labelled("restore"), ["t2"]);
}

#[test]
fn allow_unknown_in_full_true_in_view_is_block_stale_permit() {
    // any(unresolvable, tier eq gold): UNKNOWN on the full records, TRUE in the view.
    let p = r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","effect":"allow","predicate":{"any":[{"field":"nowhere","op":"eq","value":1},{"field":"customer.tier","op":"eq","value":"gold"}]}}"#;
    let r = check(&[p, TIER_OLD, TIER_NEW], &["p", "t1"], ACTION, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-superseder-stale-permit) exit 1"
    );
}

#[test]
fn revoked_allow_kept_without_its_revoker_is_block_stale_permit() {
    let allow = r#"{"id":"a","seq":1,"kind":"policy","scope":"refunds.create","effect":"allow","predicate":{"all":[]}}"#;
    let revoker = r#"{"id":"r","seq":2,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"amount","op":"gt","value":100000},"supersedes":"a"}"#;
    let r = check(&[allow, revoker], &["a"], ACTION, &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-superseder-stale-permit) exit 1"
    );
    assert_eq!(r.labelled("restore"), ["r"]);
    assert!(
        r.stdout.contains("revoked by dropped policy 'r'"),
        "{}",
        r.stdout
    );
    // With the revoker kept too, both views agree: the allow rule is inactive.
    let r = check(&[allow, revoker], &["a", "r"], ACTION, &[]);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
}

#[test]
fn allow_true_in_full_only_is_a_permissive_note() {
    let allow = r#"{"id":"a","seq":1,"kind":"policy","scope":"refunds.create","effect":"allow","predicate":{"field":"amount","op":"lt","value":500}}"#;
    let r = check(
        &[allow, CHAT],
        &["c"],
        r#"{"tool":"refunds.create","params":{"amount":120}}"#,
        &[],
    );
    assert_eq!(r.code, 0);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
    assert_eq!(
        r.labelled("note"),
        [
            "permissive: dropped policy 'a' (allow) resolves TRUE here (amount = 120 lt 500) but losing a permission cannot license an action; not a block reason"
        ]
    );
}

#[test]
fn equal_views_give_nothing() {
    let r = check(&[DENY_BIG, CHAT], &["p", "c"], ACTION, &[]);
    assert_eq!(
        r.code, 0,
        "a kept binding rule is the agent's business, not a compaction hazard"
    );
    assert_eq!(r.labelled("reason").len() + r.labelled("note").len(), 0);
}

#[test]
fn out_of_scope_rules_do_not_fire() {
    let r = check(
        &[DENY_BIG, CHAT],
        &["c"],
        r#"{"tool":"notes.append","params":{"amount":8400}}"#,
        &[],
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
}

#[test]
fn revocation_is_literal_and_chains_do_not_revive() {
    // a is revoked by b, b is revoked by c; all dropped but for a and b kept: a stays inactive.
    let a = r#"{"id":"a","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"all":[]}}"#;
    let b = r#"{"id":"b","seq":2,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"any":[]},"supersedes":"a"}"#;
    let c = r#"{"id":"c","seq":3,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"any":[]},"supersedes":"b"}"#;
    let r = check(&[a, b, c], &["a", "b", "c"], ACTION, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : PASS exit 0",
        "a is revoked by b even though b is revoked"
    );
    // Dropping b alone: on the full records a is still revoked (b is there), in the view a is
    // active and TRUE: restrictive FALSE/TRUE, the safe direction.
    let r = check(&[a, b, c], &["a", "c"], ACTION, &[]);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
    assert!(r.labelled("note")[0].starts_with("stale-value-safe-direction: kept policy 'a'"));
}

#[test]
fn type_mismatch_is_error() {
    let r = check(
        &[DENY_BIG],
        &["p"],
        r#"{"tool":"refunds.create","params":{"amount":"8400"}}"#,
        &[],
    );
    assert_eq!(r.code, 2);
    assert_eq!(r.verdict_line(), "verdict   : ERROR (type-mismatch) exit 2");
}

#[test]
fn dropped_effect_replay_blocks_and_kept_one_is_a_note() {
    let e =
        r#"{"id":"e","seq":1,"kind":"effect","tool":"refunds.create","match":{"amount":8400.0}}"#;
    let r = check(&[e, CHAT], &["c"], ACTION, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-effect-replay) exit 1"
    );
    assert_eq!(r.labelled("restore"), ["e"]);
    let r = check(&[e, CHAT], &["e"], ACTION, &[]);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
    assert!(r.labelled("note")[0].starts_with("kept-effect-replay:"));
    // A missing param never equals.
    let r = check(
        &[e, CHAT],
        &["c"],
        r#"{"tool":"refunds.create","params":{}}"#,
        &[],
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
}

/// A `match` key with dots names the param as a predicate's field does (SPEC 4): the key
/// spelt so, or the path through nested objects. The gate holds the two spellings for one
/// field (params that give them two values are refused: a tool may read either), so a
/// call that gives the recorded value nested replays the effect as surely as one that
/// spells the key with its dots.
#[test]
fn a_dotted_match_key_is_replayed_by_the_nested_param() {
    let e = r#"{"id":"e","seq":1,"kind":"effect","tool":"invoices.send","match":{"invoice.id":"INV-7741"},"text":"invoice INV-7741 was already sent"}"#;
    for action in [
        r#"{"tool":"invoices.send","params":{"invoice.id":"INV-7741"}}"#,
        r#"{"tool":"invoices.send","params":{"invoice":{"id":"INV-7741","cc":"ops"}}}"#,
    ] {
        let r = check(&[e, CHAT], &["c"], action, &[]);
        assert_eq!(
            r.verdict_line(),
            "verdict   : BLOCK (dropped-effect-replay) exit 1",
            "{action}\n{}",
            r.stdout
        );
        assert_eq!(r.labelled("restore"), ["e"]);
    }
    // Another invoice, or none, does not replay it.
    for action in [
        r#"{"tool":"invoices.send","params":{"invoice":{"id":"INV-7742"}}}"#,
        r#"{"tool":"invoices.send","params":{}}"#,
    ] {
        let r = check(&[e, CHAT], &["c"], action, &[]);
        assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{action}");
    }
    // `invoice` given as a string: the gate does not read into it, and a tool may read
    // something as `invoice.id` there, so whether the call replays the effect is not
    // decided, and check fails closed.
    let r = check(
        &[e, CHAT],
        &["c"],
        r#"{"tool":"invoices.send","params":{"invoice":"INV-7741"}}"#,
        &[],
    );
    assert_eq!(
        r.verdict_line(),
        "verdict   : ERROR (undecided) exit 2",
        "{}",
        r.stdout
    );
}

/// The reverse of the test above: an effect whose `match` gives the field nested
/// (`{"invoice": {"id": ..}}`) was not replayed by a call giving it with a dotted key,
/// nor by a call whose `invoice` held one more key: check passed both. `match` is read as
/// the fields it names, each spelt either way, as params are.
#[test]
fn a_nested_match_value_is_replayed_by_either_spelling_of_its_fields() {
    let e = r#"{"id":"e","seq":1,"kind":"effect","tool":"pay","match":{"invoice":{"id":"INV-1"},"amount":5},"text":"invoice INV-1 was paid"}"#;
    for params in [
        r#"{"invoice.id":"INV-1","amount":5}"#,
        r#"{"invoice":{"id":"INV-1","extra":1},"amount":5.0}"#,
        r#"{"invoice":{"id":"INV-1"},"amount":5,"note":"again"}"#,
    ] {
        let action = format!(r#"{{"tool":"pay","params":{params}}}"#);
        let r = check(&[e, CHAT], &["c"], &action, &[]);
        assert_eq!(
            r.verdict_line(),
            "verdict   : BLOCK (dropped-effect-replay) exit 1",
            "{action}\n{}",
            r.stdout
        );
        assert_eq!(r.labelled("restore"), ["e"]);
    }
    // Another invoice, a field missing, or the object given as something else while
    // another field tells the call apart: no replay.
    for params in [
        r#"{"invoice.id":"INV-2","amount":5}"#,
        r#"{"invoice":{"id":"INV-1"}}"#,
        r#"{"invoice":"INV-1","amount":6}"#,
        r#"{"invoice":5,"amount":5}"#,
        r#"{"invoice":{"number":"INV-1"},"amount":5}"#,
    ] {
        let action = format!(r#"{{"tool":"pay","params":{params}}}"#);
        let r = check(&[e, CHAT], &["c"], &action, &[]);
        assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{action}");
    }
    // An empty object names no field: it asks nothing of the call, as an empty `match`.
    let empty = r#"{"id":"e","seq":1,"kind":"effect","tool":"pay","match":{"invoice":{"id":"INV-1"},"options":{}}}"#;
    let r = check(
        &[empty, CHAT],
        &["c"],
        r#"{"tool":"pay","params":{"invoice.id":"INV-1","options":{"dry_run":false}}}"#,
        &[],
    );
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-effect-replay) exit 1"
    );
}

/// An effect whose `match` gave one field both as a dotted key and through nested objects
/// was accepted: with two values no call replays it, so `check`, `--precheck` and `pin`
/// all passed a record the gate cannot read (and `pin` did not pin it). It is invalid
/// input, naming the record and the field, whatever the two values are.
#[test]
fn an_effect_match_giving_one_field_twice_is_invalid_input() {
    for (matches, field, differ) in [
        (
            r#"{"invoice.id":"A","invoice":{"id":"B"}}"#,
            "invoice.id",
            true,
        ),
        (
            r#"{"invoice":{"id":"A"},"invoice.id":"A"}"#,
            "invoice.id",
            false,
        ),
        (r#"{"a":{"b.c":1},"a.b":{"c":2}}"#, "a.b.c", true),
        (
            r#"{"x":1,"a":{"b":{"c":[1]}},"a.b.c":[1.0]}"#,
            "a.b.c",
            false,
        ),
    ] {
        let e = format!(r#"{{"id":"e7","seq":1,"kind":"effect","tool":"pay","match":{matches}}}"#);
        let s = Scratch::new();
        let path = s.file(
            "in.json",
            doc(
                &[&e, CHAT],
                &["c"],
                r#"{"tool":"pay","params":{"invoice.id":"A"}}"#,
            )
            .as_bytes(),
        );
        let two = if differ {
            ", with two different values"
        } else {
            ""
        };
        let want = format!(
            "omission-gate: invalid-input: {path}: record `e7`: `match` gives the field `{field}` twice{two}, as a key with dots and through nested objects: a call gives a field one value, so write it once\n"
        );
        refused_by_check_precheck_and_pin(&path, &want, matches);
    }
}

/// `check`, `check --precheck` and `pin` each refuse the input at `path` with exactly
/// `want` on stderr and exit 2.
fn refused_by_check_precheck_and_pin(path: &str, want: &str, what: &str) {
    for args in [
        vec!["check", path],
        vec!["check", "--precheck", path],
        vec!["pin", path],
    ] {
        let r = run(&args, None);
        assert_eq!(r.code, 2, "{args:?} {what}\n{}", r.stdout);
        assert_eq!(r.stderr, want, "{args:?}");
    }
}

/// A fact whose object `value` gave one field below it both as a dotted key and through
/// nested objects was accepted: `a` = `{"b": {"c": 1}, "b.c": 2}` was read as `a.b.c` = 2
/// (the dotted key first), where a tool may read 1, so a rule denying `a.b.c` = 1 passed.
/// It is invalid input naming the record and the field, whatever the two values are.
#[test]
fn a_fact_value_giving_one_field_twice_is_invalid_input() {
    let deny = r#"{"id":"p1","seq":1,"kind":"policy","scope":"pay","predicate":{"field":"a.b.c","op":"eq","value":1},"effect":"deny"}"#;
    for (value, field, differ) in [
        (r#"{"b":{"c":1},"b.c":2}"#, "a.b.c", true),
        (r#"{"b.c":1,"b":{"c":1.0}}"#, "a.b.c", false),
        (r#"{"b":{"c.d":1},"b.c":{"d":2}}"#, "a.b.c.d", true),
    ] {
        let f = format!(r#"{{"id":"f7","seq":2,"kind":"fact","field":"a","value":{value}}}"#);
        let s = Scratch::new();
        let path = s.file(
            "in.json",
            doc(
                &[deny, &f, CHAT],
                &["p1", "f7", "c"],
                r#"{"tool":"pay","params":{}}"#,
            )
            .as_bytes(),
        );
        let two = if differ {
            ", with two different values"
        } else {
            ""
        };
        let want = format!(
            "omission-gate: invalid-input: {path}: record `f7`: `value` gives the field `{field}` twice{two}, as a key with dots and through nested objects: a field has one value, so write it once\n"
        );
        refused_by_check_precheck_and_pin(&path, &want, value);
    }
    // A dot in a key that spells no field twice is a value like any other.
    let f = r#"{"id":"f7","seq":2,"kind":"fact","field":"a","value":{"b.c":2,"b":{"d":1}}}"#;
    let r = check(
        &[deny, f, CHAT],
        &["p1", "f7", "c"],
        r#"{"tool":"pay","params":{}}"#,
        &[],
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
}

/// A fact whose object `value` gave a field as an object one way and as a scalar the
/// other was accepted: `x` = `{"b.c": {"d": 1}, "b": {"c": 5}}` gives `x.b.c` as `{"d":
/// 1}` (the dotted key) and as 5 (through `b`), and only fields that are not objects
/// were compared, so a rule denying `x.b.c` = 5 passed on a value a tool may read as 5.
/// Every field name is compared, as a call's params are: it is invalid input, and so is
/// an effect `match` spelt so.
#[test]
fn a_fact_value_or_match_giving_a_field_as_an_object_and_as_a_scalar_is_invalid_input() {
    let deny = r#"{"id":"p1","seq":1,"kind":"policy","scope":"pay","predicate":{"field":"x.b.c","op":"eq","value":5},"effect":"deny"}"#;
    for (value, field) in [
        (r#"{"b.c":{"d":1},"b":{"c":5}}"#, "x.b.c"),
        (r#"{"b":{"c":{"d":1}},"b.c":5}"#, "x.b.c"),
        (r#"{"b.c":{"d":1},"b":{"c":{"e":2}}}"#, "x.b.c"),
    ] {
        let f = format!(r#"{{"id":"f7","seq":2,"kind":"fact","field":"x","value":{value}}}"#);
        let s = Scratch::new();
        let path = s.file(
            "in.json",
            doc(
                &[deny, &f, CHAT],
                &["f7", "c"],
                r#"{"tool":"pay","params":{}}"#,
            )
            .as_bytes(),
        );
        let want = format!(
            "omission-gate: invalid-input: {path}: record `f7`: `value` gives the field `{field}` twice, with two different values, as a key with dots and through nested objects: a field has one value, so write it once\n"
        );
        refused_by_check_precheck_and_pin(&path, &want, value);
    }
    for (matches, field) in [
        (r#"{"invoice.id":{"n":1},"invoice":{"id":5}}"#, "invoice.id"),
        (r#"{"a.b":{"c":1},"a":{"b":{"d":2}}}"#, "a.b"),
    ] {
        let e = format!(r#"{{"id":"e7","seq":1,"kind":"effect","tool":"pay","match":{matches}}}"#);
        let s = Scratch::new();
        let path = s.file(
            "in.json",
            doc(&[&e, CHAT], &["c"], r#"{"tool":"pay","params":{}}"#).as_bytes(),
        );
        let want = format!(
            "omission-gate: invalid-input: {path}: record `e7`: `match` gives the field `{field}` twice, with two different values, as a key with dots and through nested objects: a call gives a field one value, so write it once\n"
        );
        refused_by_check_precheck_and_pin(&path, &want, matches);
    }
}

/// A fact whose object `value` gave a field as a key with dots while a part of its path
/// is an array or a string was accepted: `order` = `{"items.0.amount": 100, "items":
/// [{"amount": 9000}]}` was read as `order.items.0.amount` = 100 (the dotted key), where
/// a tool reads 9000, so a rule denying an amount above 5000 passed; `{"s.length": 1,
/// "s": "abc"}` likewise, where a JavaScript tool reads 3. It is invalid input naming the
/// record, the field and the array or string, as such params are.
#[test]
fn a_fact_value_giving_a_field_through_an_array_or_a_string_is_invalid_input() {
    for (value, rule, field, at, what) in [
        (
            r#"{"items.0.amount":100,"items":[{"amount":9000}]}"#,
            "order.items.0.amount",
            "order.items.0.amount",
            "order.items",
            "an array",
        ),
        (
            r#"{"s.length":1,"s":"abc"}"#,
            "order.s.length",
            "order.s.length",
            "order.s",
            "a string",
        ),
        (
            r#"{"name.0":"x","name":"abc"}"#,
            "order.name.0",
            "order.name.0",
            "order.name",
            "a string",
        ),
        (
            r#"{"a":{"items.0":100},"a.items":[9000]}"#,
            "order.a.items.0",
            "order.a.items.0",
            "order.a.items",
            "an array",
        ),
        (
            r#"{"items.0":{"amount":100},"items":[{"amount":9000}]}"#,
            "order.items.0.amount",
            "order.items.0",
            "order.items",
            "an array",
        ),
    ] {
        let deny = format!(
            r#"{{"id":"p1","seq":1,"kind":"policy","scope":"pay","predicate":{{"field":"{rule}","op":"ne","value":100}},"effect":"deny"}}"#
        );
        let f = format!(r#"{{"id":"f7","seq":2,"kind":"fact","field":"order","value":{value}}}"#);
        let s = Scratch::new();
        let path = s.file(
            "in.json",
            doc(&[&deny, &f, CHAT], &["c"], r#"{"tool":"pay","params":{}}"#).as_bytes(),
        );
        let want = format!(
            "omission-gate: invalid-input: {path}: record `f7`: `value` gives the field `{field}` as a key with dots while `{at}` is {what}: the gate does not read into arrays or strings and a tool may read the field there, so write it one way\n"
        );
        refused_by_check_precheck_and_pin(&path, &want, value);
    }
    // A key with dots beside a number, a boolean, null, or an object without the field
    // gives the field its one value, as in params.
    for (value, dotted) in [
        (r#"{"count.0":100,"count":5}"#, "count.0"),
        (r#"{"a.b":100,"a":true}"#, "a.b"),
        (r#"{"a.b":100,"a":null}"#, "a.b"),
        (r#"{"a.b":100,"a":{"c":[1]}}"#, "a.b"),
    ] {
        let deny = format!(
            r#"{{"id":"p1","seq":1,"kind":"policy","scope":"pay","predicate":{{"field":"order.{dotted}","op":"eq","value":100}},"effect":"deny"}}"#
        );
        let f = format!(r#"{{"id":"f7","seq":2,"kind":"fact","field":"order","value":{value}}}"#);
        let r = check(
            &[&deny, &f, CHAT],
            &["c"],
            r#"{"tool":"pay","params":{}}"#,
            &[],
        );
        assert_eq!(
            r.verdict_line(),
            "verdict   : BLOCK (dropped-binding-constraint) exit 1",
            "{value}\n{}",
            r.stdout
        );
    }
}

/// An effect whose `match` gave a field as a key with dots while a part of its path is an
/// array or a string was accepted (`{"items.0.amount": 100, "items": [{"amount":
/// 9000}]}`): no call gives a field so (`check` refuses such params), so the record could
/// never bind as written. It is invalid input naming the record, the field and the array
/// or string, as a `match` giving a field twice is.
#[test]
fn an_effect_match_giving_a_field_through_an_array_or_a_string_is_invalid_input() {
    for (matches, field, at, what) in [
        (
            r#"{"items.0.amount":100,"items":[{"amount":9000}]}"#,
            "items.0.amount",
            "items",
            "an array",
        ),
        (r#"{"s.length":1,"s":"abc"}"#, "s.length", "s", "a string"),
        (
            r#"{"x":1,"a":{"name.0":"b"},"a.name":"abc"}"#,
            "a.name.0",
            "a.name",
            "a string",
        ),
    ] {
        let e = format!(r#"{{"id":"e7","seq":1,"kind":"effect","tool":"pay","match":{matches}}}"#);
        let s = Scratch::new();
        let path = s.file(
            "in.json",
            doc(
                &[&e, CHAT],
                &["c"],
                r#"{"tool":"pay","params":{"items":[{"amount":9000}],"s":"abc"}}"#,
            )
            .as_bytes(),
        );
        let want = format!(
            "omission-gate: invalid-input: {path}: record `e7`: `match` gives the field `{field}` as a key with dots while `{at}` is {what}: the gate does not read into arrays or strings and a call may give the field there, so write it one way\n"
        );
        refused_by_check_precheck_and_pin(&path, &want, matches);
    }
}

/// A dropped effect whose `match` field's path meets an array in the call
/// (`items.0.amount` in `{"items": [{"amount": 5}]}`) passed: the gate reads no field into
/// an array, so the field was missing and the call was cleared, while the tool may read
/// the element and repeat the effect; precheck called it ruled out by a schema that types
/// `items` as an array, and pin did not keep it. `check` now fails closed (ERROR
/// `undecided`), precheck says it may bind, and pin keeps it.
#[test]
fn an_effect_field_whose_path_meets_an_array_in_the_call_is_undecided() {
    let deny = r#"{"id":"p1","seq":1,"kind":"policy","scope":"pay","predicate":{"field":"amount","op":"gt","value":100},"effect":"deny"}"#;
    for matches in [
        r#"{"items.0.amount":5,"to":"x"}"#,
        r#"{"items":{"0":{"amount":5}},"to":"x"}"#,
        r#"{"items.0":{"amount":5},"to":"x"}"#,
    ] {
        let e = format!(r#"{{"id":"e7","seq":2,"kind":"effect","tool":"pay","match":{matches}}}"#);
        for params in [
            r#"{"items":[{"amount":5}],"to":"x","amount":1}"#,
            r#"{"amount":1,"to":"x","items":[{"amount":6},{"amount":5}]}"#,
        ] {
            let action = format!(r#"{{"tool":"pay","params":{params}}}"#);
            let r = check(&[deny, &e, CHAT], &["p1", "c"], &action, &[]);
            assert_eq!(r.code, 2, "{matches} {params}\n{}", r.stdout);
            assert_eq!(r.verdict_line(), "verdict   : ERROR (undecided) exit 2");
            assert!(
                r.stdout.contains(
                    "this call reaches the field `items.0.amount` only through the array `items`,"
                ),
                "{}",
                r.stdout
            );
            assert_eq!(r.labelled("restore"), ["e7"]);
            // Kept, the agent sees it: nothing to fail closed on.
            let r = check(&[deny, &e, CHAT], &["p1", "e7", "c"], &action, &[]);
            assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);
        }
        // A string on the way is read as an array is: a tool may index it.
        let action = r#"{"tool":"pay","params":{"items":"5","to":"x","amount":1}}"#;
        let r = check(&[deny, &e, CHAT], &["p1", "c"], action, &[]);
        assert_eq!(r.verdict_line(), "verdict   : ERROR (undecided) exit 2");
        assert!(
            r.stdout.contains(
                "this call reaches the field `items.0.amount` only through the string `items`,"
            ),
            "{}",
            r.stdout
        );
        // A field the call gives another value, or lacks with no array or string on its
        // way, tells the call apart: no replay, whatever the array holds.
        for params in [
            r#"{"items":[{"amount":5}],"to":"y","amount":1}"#,
            r#"{"items":{"0":{"amount":6}},"to":"x","amount":1}"#,
            r#"{"items":5,"to":"x","amount":1}"#,
        ] {
            let action = format!(r#"{{"tool":"pay","params":{params}}}"#);
            let r = check(&[deny, &e, CHAT], &["p1", "c"], &action, &[]);
            assert_eq!(
                r.verdict_line(),
                "verdict   : PASS exit 0",
                "{matches} {params}\n{}",
                r.stdout
            );
        }
    }
    // precheck and pin, with a schema that gives `items` an array.
    let e = r#"{"id":"e7","seq":2,"kind":"effect","tool":"pay","match":{"items.0.amount":5}}"#;
    let tools = r#"[{"name":"pay","input_schema":{"type":"object","properties":{"items":{"type":"array"},"amount":{"type":"integer"}},"additionalProperties":false}}]"#;
    let s = Scratch::new();
    let path = s.file(
        "in.json",
        doc(
            &[deny, e, CHAT],
            &["p1", "c"],
            r#"{"tool":"pay","params":{}}"#,
        )
        .as_bytes(),
    );
    let tools_file = s.file("tools.json", tools.as_bytes());
    let at = format!("@{tools_file}");
    let r = run(&["check", "--precheck", &path, "--tools", &at], None);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1",
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("dropped effect 'e7' may be replayed by a reachable call of pay: precheck could not decide, because a call may give `items` an array, which the field `items.0.amount` passes through"),
        "{}",
        r.stdout
    );
    assert_eq!(r.labelled("restore"), ["e7"]);
    assert_pins_replayable(&path, &at, "e7", "pay");
    // A schema that gives `items` neither an array nor a string rules the replay out, as
    // before.
    let closed = tools.replace(r#"{"type":"array"}"#, r#"{"type":"number"}"#);
    let closed_file = s.file("closed.json", closed.as_bytes());
    let at = format!("@{closed_file}");
    let r = run(&["check", "--precheck", &path, "--tools", &at], None);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);
    assert!(
        r.labelled("note")
            .iter()
            .any(|n| n.starts_with("ruled-out-by-schema: dropped effect 'e7'")),
        "{}",
        r.stdout
    );
}

/// An empty key below the top of `match` or of the params was dropped from the field's
/// name (`{"": {"": 5}}` was read as the field ``, not `.`): the call that the effect
/// records passed, replaying it, and params that give `.b` two values (`{".b": 1, "":
/// {"b": 2}}`) were taken for one value each of `.b` and `b`, so a rule read 1 where the
/// tool may read 2.
#[test]
fn an_empty_key_inside_an_object_is_a_part_of_the_field() {
    let e = r#"{"id":"e","seq":1,"kind":"effect","tool":"pay","match":{"":{"":5}}}"#;
    for params in [r#"{"":{"":5}}"#, r#"{".":5}"#, r#"{"":{"":5,"b":1}}"#] {
        let action = format!(r#"{{"tool":"pay","params":{params}}}"#);
        let r = check(&[e, CHAT], &["c"], &action, &[]);
        assert_eq!(
            r.verdict_line(),
            "verdict   : BLOCK (dropped-effect-replay) exit 1",
            "{action}\n{}",
            r.stdout
        );
    }
    for params in [r#"{"":5}"#, r#"{"":{"":6}}"#] {
        let action = format!(r#"{{"tool":"pay","params":{params}}}"#);
        let r = check(&[e, CHAT], &["c"], &action, &[]);
        assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{action}");
    }
    // `.b` and `b` are two fields; `.b` given twice with two values is refused.
    let p = r#"{"id":"p","seq":1,"kind":"policy","scope":"pay","effect":"deny","predicate":{"field":".b","op":"eq","value":2}}"#;
    let r = check(
        &[p, CHAT],
        &["p", "c"],
        r#"{"tool":"pay","params":{"":{"b":1},"b":2}}"#,
        &[],
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stderr);
    let r = check(
        &[p, CHAT],
        &["p", "c"],
        r#"{"tool":"pay","params":{".b":1,"":{"b":2}}}"#,
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("give `.b` two different values"),
        "{}",
        r.stderr
    );
}

/// A newer fact that gives a field inside an object (`customer` = `{"tier": "gold"}`)
/// did not override a kept older fact of the dotted field (`customer.tier` =
/// "standard"), nor the reverse: the full records and the agent's view both read the
/// older value, and the rule that the newest statement makes TRUE passed.
#[test]
fn the_newest_fact_of_a_field_is_the_newest_in_either_spelling() {
    let deny_gold = tier_policy("deny", "gold");
    let action = r#"{"tool":"refunds.create","params":{}}"#;
    let dotted_old =
        r#"{"id":"t1","seq":2,"kind":"fact","field":"customer.tier","value":"standard"}"#;
    let nested_new = r#"{"id":"t2","seq":3,"kind":"fact","field":"customer","value":{"tier":"gold","name":"Acme"}}"#;
    let r = check(
        &[&deny_gold, dotted_old, nested_new, CHAT],
        &["p", "t1", "c"],
        action,
        &[],
    );
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-superseder-stale-kept) exit 1",
        "{}",
        r.stdout
    );
    assert_eq!(r.labelled("restore"), ["t2"]);
    // Restored, the agent sees it and the rule binds in both views: nothing hidden.
    let r = check(
        &[&deny_gold, dotted_old, nested_new, CHAT],
        &["p", "t1", "t2", "c"],
        action,
        &[],
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);
    // The reverse: the dotted fact is the newer one.
    let nested_old =
        r#"{"id":"t1","seq":2,"kind":"fact","field":"customer","value":{"tier":"standard"}}"#;
    let dotted_new = r#"{"id":"t2","seq":3,"kind":"fact","field":"customer.tier","value":"gold"}"#;
    let r = check(
        &[&deny_gold, nested_old, dotted_new, CHAT],
        &["p", "t1", "c"],
        action,
        &[],
    );
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-superseder-stale-kept) exit 1",
        "{}",
        r.stdout
    );
    assert_eq!(r.labelled("restore"), ["t2"]);
    // A newer object that does not hold the field, or a newer part of an object the rule
    // reads whole: the gate cannot tell the value, and fails closed.
    let no_tier = r#"{"id":"t2","seq":3,"kind":"fact","field":"customer","value":{"name":"Acme"}}"#;
    let r = check(
        &[&deny_gold, TIER_OLD, no_tier, CHAT],
        &["p", "t1", "t2", "c"],
        action,
        &[],
    );
    assert_eq!(
        r.verdict_line(),
        "verdict   : ERROR (unresolved-field) exit 2",
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("its newest statement, fact 't2' (`customer` = {\"name\":\"Acme\"}, seq 3), does not give it whole"),
        "{}",
        r.stdout
    );
    let whole = r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"customer","op":"eq","value":{"tier":"standard"}}}"#;
    let r = check(
        &[whole, nested_old, dotted_new, CHAT],
        &["p", "t1", "t2", "c"],
        action,
        &[],
    );
    assert_eq!(
        r.verdict_line(),
        "verdict   : ERROR (unresolved-field) exit 2",
        "{}",
        r.stdout
    );
}

/// An effect's `tool` may be a glob (SPEC 2): it records a call of a tool it covers, and
/// every call of such a tool with its `match` replays it.
#[test]
fn an_effect_of_a_glob_tool_replays_every_call_of_a_tool_it_covers() {
    let s = Scratch::new();
    let path = s.file(
        "s.json",
        br#"{"records":[{"id":"c1","seq":1,"kind":"chatter","text":"hi"},{"id":"e1","seq":2,"kind":"effect","tool":"refunds.*","match":{"order":7},"text":"refund for order 7 issued"}],"kept":["c1"]}"#,
    );
    let action = r#"{"tool":"refunds.create","params":{"order":7}}"#;
    let r = run(&["check", &path, "--action", action], None);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-effect-replay) exit 1"
    );
    assert_eq!(
        r.labelled("reason"),
        [
            r#"dropped-effect-replay: dropped effect 'e1' records that refunds.* (a glob covering refunds.create) already ran with {"order":7} (seq 2); this call replays a non-idempotent side effect the agent can no longer see"#
        ]
    );
    assert_eq!(r.labelled("restore"), ["e1"]);
    // Kept, it is a note; a tool it does not cover, or another `match`, does not replay it.
    let r = run(
        &["check", &path, "--kept", "c1,e1", "--action", action],
        None,
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
    assert!(
        r.labelled("note")[0].starts_with(
            "kept-effect-replay: kept effect 'e1' records that refunds.* (a glob covering refunds.create) already ran"
        ),
        "{}",
        r.stdout
    );
    for other in [
        r#"{"tool":"orders.create","params":{"order":7}}"#,
        r#"{"tool":"refunds.create","params":{"order":8}}"#,
    ] {
        let r = run(&["check", &path, "--action", other], None);
        assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{other}");
    }
}

#[test]
fn dropped_unevaluable_records_block_unless_flying_blind() {
    let s = r#"{"id":"s","seq":1,"kind":"summary","text":"the middle of the thread"}"#;
    let r = check(&[s, CHAT], &["c"], ACTION, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-unevaluable-record) exit 1"
    );
    assert_eq!(r.labelled("restore"), ["s"]);
    let r = check(&[s, CHAT], &["c"], ACTION, &["--allow-unevaluable"]);
    assert_eq!(r.code, 0);
    assert!(r.labelled("note")[0].ends_with("[--allow-unevaluable: you chose to fly blind]"));
    let r = check(&[s, CHAT], &["s"], ACTION, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : PASS exit 0",
        "kept ones are fine"
    );
}

#[test]
fn kept_derived_record_with_dropped_inputs_gets_a_note() {
    let f = r#"{"id":"f","seq":1,"kind":"fact","field":"x","value":1}"#;
    let d = r#"{"id":"d","seq":2,"kind":"fact","field":"risk","value":"low","depends_on":["f"]}"#;
    let r = check(&[f, d], &["d"], ACTION, &[]);
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0");
    assert_eq!(
        r.labelled("note"),
        [
            "derivation-input-dropped: kept fact 'd' was derived from dropped 'f': its conclusion can no longer be checked"
        ]
    );
}

#[test]
fn every_finding_is_listed_in_a_stable_order() {
    let s = r#"{"id":"s","seq":5,"kind":"summary"}"#;
    let e = r#"{"id":"e","seq":3,"kind":"effect","tool":"refunds.create","match":{}}"#;
    let r = check(
        &[DENY_BIG, s, e, CHAT],
        &["c"],
        ACTION,
        &["--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "dropped-binding-constraint",
            "dropped-effect-replay",
            "dropped-unevaluable-record"
        ]
    );
    assert_eq!(r.verdict_line_json(), "BLOCK");
}

trait JsonVerdict {
    fn verdict_line_json(&self) -> String;
}

impl JsonVerdict for common::Run {
    fn verdict_line_json(&self) -> String {
        let v: serde_json::Value = serde_json::from_str(&self.stdout).unwrap();
        v["verdict"].as_str().unwrap().to_string()
    }
}

#[test]
fn boundary_4999_5000_5001() {
    for (amount, want) in [
        ("4999", 0),
        ("5000", 0),
        ("5000.0", 0),
        ("5e3", 0),
        ("5000.0000000000000001", 1),
        ("5001", 1),
        ("1e400", 1),
    ] {
        let action = format!(r#"{{"tool":"refunds.create","params":{{"amount":{amount}}}}}"#);
        let r = check(&[DENY_BIG, CHAT], &["c"], &action, &[]);
        assert_eq!(r.code, want, "amount {amount}: {}", r.stdout);
    }
}

#[test]
fn dotted_fields_resolve_through_nested_params() {
    let r = check(
        &[&tier_policy("deny", "standard"), CHAT],
        &["c"],
        r#"{"tool":"refunds.create","params":{"customer":{"tier":"standard"}}}"#,
        &[],
    );
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-binding-constraint) exit 1"
    );
}

/// A rule reading a field whole (`customer`) passed a call that gives a part of it spelt
/// apart with dots (`{"customer.tier": "gold"}`): the params gave no key `customer`, so
/// the field came from a fact (`customer` = `{"tier": "standard"}`) and the dropped rule
/// `customer eq {"tier": "gold"}` was FALSE (exit 0), while the same call spelt nested
/// (`{"customer": {"tier": "gold"}}`) is blocked by it. The gate cannot tell what the
/// tool reads as `customer` then: the rule fails closed, naming the part.
#[test]
fn a_field_the_call_gives_in_part_apart_is_not_read_from_a_fact() {
    let deny_gold = r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"customer","op":"eq","value":{"tier":"gold"}}}"#;
    let fact = r#"{"id":"f","seq":2,"kind":"fact","field":"customer","value":{"tier":"standard"}}"#;
    let nested = r#"{"tool":"refunds.create","params":{"customer":{"tier":"gold"}}}"#;
    let r = check(&[deny_gold, fact, CHAT], &["f", "c"], nested, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-binding-constraint) exit 1",
        "{}",
        r.stdout
    );
    for params in [
        r#"{"customer.tier":"gold"}"#,
        // The nested value does not hold the part given apart.
        r#"{"customer":{"name":"Acme"},"customer.tier":"gold"}"#,
    ] {
        let action = format!(r#"{{"tool":"refunds.create","params":{params}}}"#);
        let r = check(&[deny_gold, fact, CHAT], &["f", "c"], &action, &[]);
        assert_eq!(
            r.verdict_line(),
            "verdict   : ERROR (unresolved-field) exit 2",
            "{params}: {}",
            r.stdout
        );
        assert!(
            r.stdout
                .contains("the params give `customer.tier` spelt apart from it"),
            "{}",
            r.stdout
        );
    }
    // A part the nested value holds too is one value: read whole.
    let both =
        r#"{"tool":"refunds.create","params":{"customer":{"tier":"gold"},"customer.tier":"gold"}}"#;
    let r = check(&[deny_gold, fact, CHAT], &["f", "c"], both, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-binding-constraint) exit 1",
        "{}",
        r.stdout
    );
}

/// A fact whose object value gave a part of a field apart from it (`customer` =
/// `{"account": {"tier": "gold"}, "account.region": "eu"}`) gave a rule reading
/// `customer.account` the nested object alone (`{"tier": "gold"}`): the dropped rule
/// `customer.account ne {"tier": "gold"}` was FALSE (exit 0), while the same fact spelt
/// nested (`{"account": {"tier": "gold", "region": "eu"}}`) makes it TRUE. Such a value
/// does not give the field whole: the rule fails closed.
#[test]
fn a_fact_value_giving_a_part_apart_does_not_give_the_field_whole() {
    let deny = r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"customer.account","op":"ne","value":{"tier":"gold"}}}"#;
    let action = r#"{"tool":"refunds.create","params":{}}"#;
    let nested = r#"{"id":"f","seq":2,"kind":"fact","field":"customer","value":{"account":{"tier":"gold","region":"eu"}}}"#;
    let r = check(&[deny, nested, CHAT], &["f", "c"], action, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-binding-constraint) exit 1",
        "{}",
        r.stdout
    );
    let apart = r#"{"id":"f","seq":2,"kind":"fact","field":"customer","value":{"account":{"tier":"gold"},"account.region":"eu"}}"#;
    let r = check(&[deny, apart, CHAT], &["f", "c"], action, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : ERROR (unresolved-field) exit 2",
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("does not give it whole"), "{}", r.stdout);
}

/// A rule reading `items.0.amount` passed a call `{"items": [{"amount": 8400}]}`: the
/// gate does not read into arrays, so the field came from a fact (`items.0.amount` = 1)
/// and the dropped rule `items.0.amount gt 5000` was FALSE (exit 0), while the tool may
/// read 8400 from the element. No fact stands in for a field whose path through the
/// params meets an array: the rule fails closed, naming the array.
#[test]
fn a_field_whose_path_meets_an_array_in_the_call_is_not_read_from_a_fact() {
    let deny = r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"items.0.amount","op":"gt","value":5000}}"#;
    let fact = r#"{"id":"f","seq":2,"kind":"fact","field":"items.0.amount","value":1}"#;
    let action = r#"{"tool":"refunds.create","params":{"items":[{"amount":8400}]}}"#;
    let r = check(&[deny, fact, CHAT], &["f", "c"], action, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : ERROR (unresolved-field) exit 2",
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("meets the array `items`"), "{}", r.stdout);
    // Without the array the fact is read.
    let r = check(
        &[deny, fact, CHAT],
        &["f", "c"],
        r#"{"tool":"refunds.create","params":{}}"#,
        &[],
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);
}

/// A string is read as an array is: a tool may index it (`name[0]` of `"abc"` is `"a"`).
/// A path through the params that meets one was read as a field the call lacks, so a
/// fact stood in for the character (a deny rule `name.0 eq "a"` passed a call whose
/// `name` is `"abc"` on a fact saying `"x"`), and a dropped effect matching `name.0`
/// was told apart from the call. Now the field is UNKNOWN (the rule fails closed, naming
/// the string), the effect is undecided, and precheck and pin agree.
#[test]
fn a_field_whose_path_meets_a_string_in_the_call_is_not_read_from_a_fact() {
    let deny = r#"{"id":"p","seq":1,"kind":"policy","scope":"t","effect":"deny","predicate":{"field":"name.0","op":"eq","value":"a"}}"#;
    let fact = r#"{"id":"f","seq":2,"kind":"fact","field":"name.0","value":"x"}"#;
    let action = r#"{"tool":"t","params":{"name":"abc"}}"#;
    for kept in [&["c"][..], &["p", "f", "c"]] {
        let r = check(&[deny, fact, CHAT], kept, action, &[]);
        assert_eq!(
            r.verdict_line(),
            "verdict   : ERROR (unresolved-field) exit 2",
            "{kept:?}\n{}",
            r.stdout
        );
        assert!(r.stdout.contains("meets the string `name`"), "{}", r.stdout);
    }
    // A number, a boolean or null has no elements: the call lacks the field, and the
    // fact is read.
    for params in [
        r#"{"name":5}"#,
        r#"{"name":true}"#,
        r#"{"name":null}"#,
        "{}",
    ] {
        let action = format!(r#"{{"tool":"t","params":{params}}}"#);
        let r = check(&[deny, fact, CHAT], &["p", "f", "c"], &action, &[]);
        assert_eq!(
            r.verdict_line(),
            "verdict   : PASS exit 0",
            "{params}\n{}",
            r.stdout
        );
    }
    // A dropped effect on `name.0`: undecided for the string, told apart for a number.
    let e = r#"{"id":"e","seq":3,"kind":"effect","tool":"t","match":{"name.0":"a"}}"#;
    let r = check(&[e, CHAT], &["c"], action, &[]);
    assert_eq!(
        r.verdict_line(),
        "verdict   : ERROR (undecided) exit 2",
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("only through the string `name`, which the gate does not read into"),
        "{}",
        r.stdout
    );
    // The fix it names is one for a string: the record's `match` names `name` whole.
    assert!(
        r.stdout
            .contains("restore the record, or have its `match` name `name` whole\n"),
        "{}",
        r.stdout
    );
    let r = check(
        &[e, CHAT],
        &["c"],
        r#"{"tool":"t","params":{"name":5}}"#,
        &[],
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);
    // Precheck and pin, with a schema that types `name` a string.
    let s = Scratch::new();
    let path = s.file(
        "in.json",
        doc(&[e, CHAT], &["c"], r#"{"tool":"t","params":{}}"#).as_bytes(),
    );
    let tools = r#"[{"name":"t","input_schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}}]"#;
    let r = run(&["check", "--precheck", &path, "--tools", tools], None);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1",
        "{}",
        r.stdout
    );
    // The schema types `name` a string: the note says a string, not "an array or a string".
    assert!(
        r.stdout
            .contains("a call may give `name` a string, which the field `name.0` passes through"),
        "{}",
        r.stdout
    );
    // The deny rule on `name.0`, under a schema that admits other keys: a reachable call
    // `{"name": ""}` fails closed whatever is kept, and the schema that would rule it out
    // does not let `name` be a string.
    let rule = s.file(
        "rule.json",
        doc(&[deny, CHAT], &["c"], r#"{"tool":"t","params":{}}"#).as_bytes(),
    );
    let open = r#"[{"name":"t","input_schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}]"#;
    let r = run(&["check", "--precheck", &rule, "--tools", open], None);
    assert!(
        r.stdout.contains(
            "(a schema that requires `name.0` and does not let `name` be a string rules it out)"
        ),
        "{}",
        r.stdout
    );
    assert_pins_replayable(&path, tools, "e", "t");
    // Params that give `name.0` as a key beside the string are refused, as beside an
    // array.
    let r = check(
        &[e, CHAT],
        &["c"],
        r#"{"tool":"t","params":{"name.0":"b","name":"abc"}}"#,
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("while `name` is a string"),
        "{}",
        r.stderr
    );
}

/// Params that gave a field as a key with dots beside a string its path meets at a part
/// that is not an index were accepted (`{"s.length": 1, "s": "abc"}`): the gate read the
/// key, 1, where a JavaScript tool reading `s.length` gets 3, so a rule denying a length
/// above 2 passed. A string is now refused beside such a key at any part, as an array
/// is.
#[test]
fn params_giving_a_field_through_a_string_at_any_part_are_refused() {
    let deny = r#"{"id":"p","seq":1,"kind":"policy","scope":"t","effect":"deny","predicate":{"field":"s.length","op":"gt","value":2}}"#;
    for (params, field, at) in [
        (r#"{"s.length":1,"s":"abc"}"#, "s.length", "s"),
        (r#"{"a":{"s.length":1},"a.s":"abc"}"#, "a.s.length", "a.s"),
        (
            r#"{"invoice.id":"A","invoice":"INV-7"}"#,
            "invoice.id",
            "invoice",
        ),
    ] {
        let action = format!(r#"{{"tool":"t","params":{params}}}"#);
        let r = check(&[deny, CHAT], &["c"], &action, &[]);
        assert_eq!(r.code, 2, "{params}\n{}", r.stdout);
        let want = format!("give `{field}` as a key with dots while `{at}` is a string:");
        assert!(r.stderr.contains(&want), "{params}\n{}", r.stderr);
    }
}

/// A path that met a string at a part that is not an index (`name.length` in `{"name":
/// "abcdefghij"}`) was read as a field the call lacks, so a fact stood in for it: a deny
/// rule `name.length gt 5` passed on a fact saying 3, while a JavaScript tool reads 10.
/// The gate cannot know what a tool reads through a string (a length, a property), so a
/// string at any next part is read as one at an index is: the rule fails closed naming
/// the string, a dropped effect on such a field is undecided, and precheck and pin agree.
#[test]
fn a_field_whose_path_meets_a_string_at_any_part_is_not_read_from_a_fact() {
    let deny = r#"{"id":"p","seq":1,"kind":"policy","scope":"t","effect":"deny","predicate":{"field":"name.length","op":"gt","value":5}}"#;
    let fact = r#"{"id":"f","seq":2,"kind":"fact","field":"name.length","value":3}"#;
    let action = r#"{"tool":"t","params":{"name":"abcdefghij"}}"#;
    for kept in [&["f", "c"][..], &["p", "f", "c"]] {
        let r = check(&[deny, fact, CHAT], kept, action, &[]);
        assert_eq!(
            r.verdict_line(),
            "verdict   : ERROR (unresolved-field) exit 2",
            "{kept:?}\n{}",
            r.stdout
        );
        assert!(r.stdout.contains("meets the string `name`"), "{}", r.stdout);
    }
    // Without the string the fact is read.
    let r = check(
        &[deny, fact, CHAT],
        &["p", "f", "c"],
        r#"{"tool":"t","params":{"name":5}}"#,
        &[],
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);
    // A dropped effect on `invoice.id`, and a call that gives `invoice` as a string:
    // undecided; another field that tells the call apart still does.
    let e = r#"{"id":"e","seq":3,"kind":"effect","tool":"t","match":{"invoice.id":"INV-7","amount":5}}"#;
    let r = check(
        &[e, CHAT],
        &["c"],
        r#"{"tool":"t","params":{"invoice":"INV-7","amount":5}}"#,
        &[],
    );
    assert_eq!(
        r.verdict_line(),
        "verdict   : ERROR (undecided) exit 2",
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("only through the string `invoice`, which the gate does not read into"),
        "{}",
        r.stdout
    );
    let r = check(
        &[e, CHAT],
        &["c"],
        r#"{"tool":"t","params":{"invoice":"INV-7","amount":6}}"#,
        &[],
    );
    assert_eq!(r.verdict_line(), "verdict   : PASS exit 0", "{}", r.stdout);
    // Precheck and pin, with a schema that lets `invoice` be a string only.
    let s = Scratch::new();
    let path = s.file(
        "in.json",
        doc(&[e, CHAT], &["c"], r#"{"tool":"t","params":{}}"#).as_bytes(),
    );
    let tools = r#"[{"name":"t","input_schema":{"type":"object","properties":{"invoice":{"type":"string"},"amount":{"type":"number"}},"required":["invoice","amount"],"additionalProperties":false}}]"#;
    let r = run(&["check", "--precheck", &path, "--tools", tools], None);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (may-bind-some-action) exit 1",
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "a call may give `invoice` a string, which the field `invoice.id` passes through"
        ),
        "{}",
        r.stdout
    );
    assert_pins_replayable(&path, tools, "e", "t");
    // The rule under a schema that types `name` a string: a reachable call fails closed
    // whatever is kept (a fact on `name.length` in the view or not), and the schema that
    // would rule it out does not let `name` be a string.
    let open = r#"[{"name":"t","input_schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}]"#;
    for (records, kept) in [
        (&[deny, fact, CHAT][..], &["f", "c"][..]),
        (&[deny, CHAT], &["c"]),
    ] {
        let rule = s.file(
            "rule.json",
            doc(records, kept, r#"{"tool":"t","params":{}}"#).as_bytes(),
        );
        let r = run(&["check", "--precheck", &rule, "--tools", open], None);
        let note = r.labelled("note").join("\n");
        assert!(
            note.contains("fails-closed-whatever-kept: a reachable call of t gets unresolved-field")
                && note.contains("(its path through the params meets the string `name`, which the gate does not read into)"),
            "{kept:?}\n{}",
            r.stdout
        );
        assert_eq!(r.labelled("witness"), [r#"t {"name":""}"#], "{}", r.stdout);
        // Without the fact, the hint names the schema that would rule the call out.
        let hint = "(a schema that requires `name.length` and does not let `name` be a string rules it out)";
        assert_eq!(note.contains(hint), kept == ["c"], "{kept:?}\n{}", r.stdout);
    }
}

/// Precheck tried, for a param a rule reads only below it (`b` for `b.c`), its objects
/// and, when no object could lack the field, one value that is no object, read as one
/// that lacks the field: the field then resolves from facts. A string or an array does
/// not lack it: `check` reads `b.c` through one as UNKNOWN and no fact stands in. So with
/// `b` an object or a string (or an array), a dropped rule `amount gt 100 or b.c lt 5`
/// and a dropped fact `b.c` = "x", every object `b` fails closed on the fact
/// (type-mismatch, whatever is kept), and precheck passed, while `check` blocks the call
/// `{"amount": 200, "b": ""}` (any(TRUE, UNKNOWN) is TRUE). A string and an array on
/// the path are now a class of their own, tried whether or not an object can lack it.
/// (`b` admits no key but `c`: no part of `b.c` can be given apart, another class.)
#[test]
fn precheck_tries_a_string_or_an_array_on_the_path_of_a_field_it_reads() {
    let fact = r#"{"id":"f","seq":1,"kind":"fact","field":"b.c","value":"x"}"#;
    let deny = r#"{"id":"p","seq":2,"kind":"policy","scope":"t","effect":"deny","predicate":{"any":[{"field":"amount","op":"gt","value":100},{"field":"b.c","op":"lt","value":5}]}}"#;
    let s = Scratch::new();
    let path = s.file(
        "in.json",
        doc(&[fact, deny, CHAT], &["c"], r#"{"tool":"t","params":{}}"#).as_bytes(),
    );
    for (types, given) in [
        (r#"["object","string"]"#, r#""""#),
        (r#"["object","array"]"#, "[]"),
    ] {
        let tools = format!(
            r#"[{{"name":"t","input_schema":{{"type":"object","properties":{{"amount":{{"type":"number","minimum":200}},"b":{{"type":{types},"properties":{{"c":{{"type":"string"}}}},"additionalProperties":false}}}},"required":["amount"],"additionalProperties":false}}}}]"#
        );
        let action = format!(r#"{{"tool":"t","params":{{"amount":200,"b":{given}}}}}"#);
        let r = check(&[fact, deny, CHAT], &["c"], &action, &[]);
        assert_eq!(
            r.verdict_line(),
            "verdict   : BLOCK (dropped-binding-constraint) exit 1",
            "{}",
            r.stdout
        );
        let r = run(&["check", "--precheck", &path, "--tools", &tools], None);
        assert_eq!(
            r.verdict_line(),
            "verdict   : BLOCK (may-bind-some-action) exit 1",
            "{types}\n{}",
            r.stdout
        );
        let witness = format!(r#"t {{"amount":200,"b":{given}}}"#);
        assert!(
            r.labelled("witness").contains(&witness.as_str()),
            "{}",
            r.stdout
        );
    }
}
