//! Tests of precheck's call enumeration and judging.

use super::*;
use crate::json::parse;
use crate::predicate::DEFAULT_MAX_DEPTH;

fn v(text: &str) -> Value {
    parse(text.as_bytes()).unwrap()
}

fn domain(schema: Option<&str>) -> Domain {
    Domain::of(
        &Tool {
            name: "t".into(),
            input_schema: schema.map(v),
        },
        None,
    )
}

fn probes_of(pred: &str) -> BTreeMap<String, Probe> {
    probes(&Predicate::parse(&v(pred), DEFAULT_MAX_DEPTH).unwrap())
}

fn all_calls(d: &Domain, pred: &str, max: usize) -> Result<Vec<String>, Undecided> {
    calls_of(d, &probes_of(pred), max)
}

/// The calls, as [`all_calls`] gives them, where facts give every field the predicate reads.
fn calls_with_facts(d: &Domain, pred: &str, max: usize) -> Result<Vec<String>, Undecided> {
    let mut probes = probes_of(pred);
    probes.values_mut().for_each(|p| p.fact = true);
    calls_of(d, &probes, max)
}

fn calls_of(
    d: &Domain,
    probes: &BTreeMap<String, Probe>,
    max: usize,
) -> Result<Vec<String>, Undecided> {
    let calls = Calls::new(&d.name, d, probes, max)?;
    let mut out = Vec::new();
    calls.try_each(|a| {
        out.push(json_text(&Value::Object(a.params.clone())));
        false
    });
    assert!(
        out.len() <= calls.len(),
        "calls that give a dotted field two values are skipped"
    );
    Ok(out)
}

#[test]
fn probes_collect_every_constant_and_what_is_ordered() {
    let p = probes_of(
        r#"{"all":[{"field":"amount","op":"gt","value":5000},{"field":"amount","op":"in","value":[1,2]},
                   {"not":{"field":"tier","op":"eq","value":"x"}}]}"#,
    );
    assert_eq!(p["amount"].constants, [v("5000"), v("1"), v("2")]);
    assert!(p["amount"].orders_numbers && !p["amount"].orders_strings);
    assert_eq!(p["tier"].constants, [v("\"x\"")]);
    assert!(!p["tier"].orders_numbers && !p["tier"].orders_strings);
}

#[test]
fn a_part_spelt_apart_is_tried_only_where_the_schema_admits_its_key() {
    let pred = r#"{"field":"amount","op":"gt","value":5000}"#;
    // Required: the key keeps a value beside the part (the call must give it).
    let open = domain(Some(
        r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":5000}},"required":["amount"]}"#,
    ));
    let calls = all_calls(&open, pred, 100).unwrap();
    assert_eq!(
        calls.last().map(String::as_str),
        Some(r#"{"amount":4999,"amount.part":""}"#)
    );
    // No key but the ones it names: no part apart.
    let closed = domain(Some(
        r#"{"type":"object","properties":{"amount":{"type":"integer"}},"additionalProperties":false}"#,
    ));
    let calls = all_calls(&closed, pred, 100).unwrap();
    assert!(calls.iter().all(|c| !c.contains("amount.")), "{calls:?}");
    // A field below an object: the part apart inside it (and beside it, spelt with dots).
    let calls = calls_with_facts(
        &domain(None),
        r#"{"field":"customer.tier","op":"eq","value":"gold"}"#,
        1000,
    )
    .unwrap();
    assert!(
        calls.contains(&r#"{"customer":{"tier.part":""}}"#.to_string()),
        "{calls:?}"
    );
    assert!(
        calls.contains(&r#"{"customer.tier.part":""}"#.to_string()),
        "{calls:?}"
    );
    // A predicate reading the part too is undecided, so the part never meets a read key.
    let calls = all_calls(
        &domain(None),
        r#"{"any":[{"field":"c","op":"eq","value":1},{"field":"c.part","op":"eq","value":1}]}"#,
        1000,
    );
    assert!(calls.is_err(), "`c` and `c.part` overlap: {calls:?}");
}

#[test]
fn without_a_schema_calls_try_absent_then_every_class() {
    let calls = all_calls(
        &domain(None),
        r#"{"field":"amount","op":"gt","value":5000}"#,
        100,
    )
    .unwrap();
    assert_eq!(
        calls,
        [
            "{}",
            r#"{"amount":4999}"#,
            r#"{"amount":5000}"#,
            r#"{"amount":5001}"#,
            r#"{"amount":""}"#,
            r#"{"amount":true}"#,
            r#"{"amount":null}"#,
            r#"{"amount":[]}"#,
            r#"{"amount":{}}"#,
        ]
    );
    // Where a fact gives the field, a part given apart is a class of its own: `amount`
    // UNKNOWN, with no fact standing in (without one, `{}` is that class).
    let calls = calls_with_facts(
        &domain(None),
        r#"{"field":"amount","op":"gt","value":5000}"#,
        100,
    )
    .unwrap();
    assert_eq!(
        calls.last().map(String::as_str),
        Some(r#"{"amount.part":""}"#)
    );
}

#[test]
fn required_params_are_never_absent_and_unread_ones_are_filled() {
    let d = domain(Some(
        r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":5000},
            "currency":{"enum":["USD","EUR"]}},"required":["amount","currency"],"additionalProperties":false}"#,
    ));
    let calls = all_calls(&d, r#"{"field":"amount","op":"gt","value":5000}"#, 100).unwrap();
    assert_eq!(
        calls,
        [
            r#"{"amount":4999,"currency":"USD"}"#,
            r#"{"amount":5000,"currency":"USD"}"#
        ]
    );
    // A field the closed schema does not name can only be absent.
    let calls = all_calls(&d, r#"{"field":"tier","op":"eq","value":"gold"}"#, 100).unwrap();
    assert_eq!(calls, [r#"{"amount":0,"currency":"USD"}"#]);
    assert!(!d.may_leave_unset("amount"));
    assert!(d.may_leave_unset("tier"));
    assert!(!d.may_set("tier"));
}

#[test]
fn dotted_fields_read_the_nested_path_and_the_literal_key() {
    let calls = all_calls(
        &domain(None),
        r#"{"field":"customer.tier","op":"eq","value":"gold"}"#,
        1000,
    )
    .unwrap();
    // The literal key varies slowest, so the nested form comes first.
    assert_eq!(
        &calls[..4],
        [
            "{}",
            r#"{"customer":{}}"#,
            r#"{"customer":{"tier":"gold"}}"#,
            r#"{"customer":{"tier":""}}"#,
        ]
    );
    assert!(calls.contains(&r#"{"customer.tier":"gold"}"#.to_string()));
    // Objects without the path stand in for a number, a boolean or null, which lack it
    // too (`"customer":0` not needed); not for a string, through which the path is
    // UNKNOWN and no fact stands in.
    assert!(
        !calls.iter().any(|c| c.contains(r#""customer":0"#)),
        "{calls:?}"
    );
    assert!(
        calls.contains(&r#"{"customer":""}"#.to_string()),
        "{calls:?}"
    );
}

#[test]
fn a_required_nested_path_can_still_be_missed_through_a_non_object() {
    let d = domain(Some(
        r#"{"type":"object","properties":{"c":{"type":["object","null"],"properties":{"d":{"type":"integer"}},"required":["d"]}},"required":["c"]}"#,
    ));
    let calls = all_calls(&d, r#"{"field":"c.d","op":"gt","value":1}"#, 1000).unwrap();
    assert!(calls.contains(&r#"{"c":null}"#.to_string()), "{calls:?}");
    assert!(calls.contains(&r#"{"c":{"d":2}}"#.to_string()), "{calls:?}");
}

#[test]
fn what_cannot_be_told_apart_exactly_is_undecided() {
    let d = domain(None);
    assert!(matches!(
        all_calls(
            &d,
            r#"{"any":[{"field":"c","op":"eq","value":1},{"field":"c.d","op":"eq","value":1}]}"#,
            1000
        ),
        Err(Undecided::Overlap(_))
    ));
    assert_eq!(
        all_calls(&d, r#"{"field":"amount","op":"gt","value":5000}"#, 8),
        Err(Undecided::Bound(8))
    );
    assert!(matches!(
        all_calls(&d, r#"{"field":"amount","op":"gt","value":1e999999}"#, 100),
        Err(Undecided::Arithmetic(_))
    ));
}

#[test]
fn a_finite_root_enumerates_its_members() {
    let d = domain(Some(
        r#"{"enum":[{"amount":1},{"amount":9000},"not an object"]}"#,
    ));
    let calls = all_calls(&d, r#"{"field":"amount","op":"gt","value":5000}"#, 100).unwrap();
    assert_eq!(calls, [r#"{"amount":1}"#, r#"{"amount":9000}"#]);
    let never = domain(Some(r#"{"type":"string"}"#));
    assert!(!never.has_calls());
    // Gemini CLI's validator takes a schema of `false` for none, and runs every call.
    assert!(domain(Some("false")).has_calls());
    assert!(
        all_calls(&never, r#"{"field":"a","op":"eq","value":1}"#, 100)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn an_effect_witness_is_its_match_plus_the_required_params() {
    let effect = Effect {
        tool: "t".into(),
        matches: v(r#"{"order":"o_1"}"#).as_object().unwrap().clone(),
    };
    let d = domain(Some(
        r#"{"type":"object","properties":{"order":{"type":"string"},"n":{"type":"integer","minimum":3}},"required":["n"]}"#,
    ));
    let w = effect_witness(&d, &effect).unwrap().unwrap();
    assert_eq!(
        json_text(&Value::Object(w.params)),
        r#"{"n":3,"order":"o_1"}"#
    );
    let closed = domain(Some(
        r#"{"type":"object","properties":{"order":{"enum":["o_2"]}}}"#,
    ));
    assert_eq!(effect_witness(&closed, &effect), Ok(None));
}

/// A witness spelt a field twice, which `check` refuses as input: a dotted `match` key
/// beside a sampled required object holding the same field (`p.q` and `p: {q: ..}`), or
/// a field given both ways in `match` with two values. And where precheck could not build
/// a call, `Undecided::Overlap` named the first `match` key, not the one that overlapped.
#[test]
fn an_effect_witness_spells_each_field_once() {
    let effect = |m: &str| Effect {
        tool: "t".into(),
        matches: v(m).as_object().unwrap().clone(),
    };
    let once = |w: &crate::action::Action| {
        assert!(crate::action::one_spelling(&w.params).is_ok(), "{w:?}");
        assert!(w.validate().is_ok(), "{w:?}");
    };
    // `p.q` is a property of its own; a call must give `p`, whose `q` holds `r`.
    let required_p = domain(Some(
        r#"{"type":"object","additionalProperties":false,"properties":{"a":{"type":"integer"},
           "p.q":{"type":"object","properties":{"r":{"type":"integer"}}},
           "p":{"type":"object","additionalProperties":false,"required":["q"],"properties":{"q":{"type":"object","required":["r"],"properties":{"r":{"type":"integer"}}}}}},
           "required":["p"]}"#,
    ));
    let e = effect(r#"{"a":1,"p.q.r":2}"#);
    let w = effect_witness(&required_p, &e).unwrap().unwrap();
    once(&w);
    assert_eq!(crate::gate::replay(&e, &w), crate::predicate::Tri::True);
    assert_eq!(
        json_text(&Value::Object(w.params)),
        r#"{"a":1,"p":{"q":{"r":2}}}"#
    );
    // A dotted key and a required object whose schema holds the field otherwise.
    let typed = domain(Some(
        r#"{"type":"object","properties":{"invoice":{"type":"object","required":["id"],"properties":{"id":{"type":"integer"}}}},"required":["invoice"]}"#,
    ));
    let e = effect(r#"{"amount":5,"invoice.id":"INV-1"}"#);
    assert_eq!(
        effect_witness(&typed, &e),
        Err(Undecided::Overlap("invoice.id".into()))
    );
    // One field, two values: no call `check` accepts replays it; the same value twice is
    // one field.
    let any = domain(None);
    assert_eq!(
        effect_witness(&any, &effect(r#"{"a":{"b":2},"a.b":1}"#)),
        Ok(None)
    );
    let w = effect_witness(&any, &effect(r#"{"a":{"b":1},"a.b":1.0}"#))
        .unwrap()
        .unwrap();
    once(&w);
}

/// An object built to hold `match` fields (`invoice` for `invoice.id`) lacked the keys
/// its own schema requires: the witness `{"invoice": {"id": "A"}}` was a call the schema
/// rules out. It gets them, at every depth; a required key that no value fills is
/// undecided, never "no call replays it" (another spelling might).
#[test]
fn an_effect_witness_fills_the_objects_it_builds() {
    let effect = Effect {
        tool: "t".into(),
        matches: v(r#"{"invoice.id":"A"}"#).as_object().unwrap().clone(),
    };
    let schema = |cc: &str| {
        format!(
            r#"{{"type":"object","additionalProperties":false,"required":["invoice"],"properties":{{"invoice":{{"type":"object","additionalProperties":false,"required":["id","cc","x"],"properties":{{"id":{{"type":"string"}},"cc":{cc},"x":{{"type":"object","required":["y"],"properties":{{"y":{{"const":3}}}}}}}}}}}}}}"#
        )
    };
    let d = domain(Some(&schema(r#"{"type":"string"}"#)));
    let w = effect_witness(&d, &effect).unwrap().unwrap();
    let params = Value::Object(w.params.clone());
    assert_eq!(
        json_text(&params),
        r#"{"invoice":{"cc":"","id":"A","x":{"y":3}}}"#
    );
    assert!(d.schema.admits(&params));
    assert_eq!(
        crate::gate::replay(&effect, &w),
        crate::predicate::Tri::True
    );
    let never = domain(Some(&schema("false")));
    assert_eq!(
        effect_witness(&never, &effect),
        Err(Undecided::Overlap("invoice".into()))
    );
}

/// An effect of a glob `tool` is witnessed by a call of a concrete tool both it and the
/// domain cover; one whose `tool` the domain never meets has none; two globs too long to
/// meet exactly are undecided, never a quiet `None`.
#[test]
fn an_effect_witness_of_a_glob_tool_calls_a_tool_both_cover() {
    let effect = |tool: &str| Effect {
        tool: tool.into(),
        matches: v(r#"{"order":7}"#).as_object().unwrap().clone(),
    };
    let named = |name: &str| Domain::any(name);
    let w = effect_witness(&named("refunds.create"), &effect("refunds.*"));
    assert_eq!(w.unwrap().unwrap().tool, "refunds.create");
    let w = effect_witness(&named("*"), &effect("refunds.*"));
    let w = w.unwrap().unwrap();
    assert!(
        glob_match("refunds.*", &w.tool) && !w.tool.contains('*'),
        "{}",
        w.tool
    );
    assert_eq!(
        effect_witness(&named("orders.create"), &effect("refunds.*")),
        Ok(None)
    );
    let long = |c: &str| c.repeat(300);
    let (a, b) = (format!("x*{}", long("y")), format!("*{}*", long("z")));
    assert!(matches!(
        effect_witness(&named(&b), &effect(&a)),
        Err(Undecided::Globs(..))
    ));
}

#[test]
fn no_call_gives_a_dotted_field_two_values() {
    // The key `c.d` and the path `c` -> `d` both spell the field: a call setting them to
    // two values is refused by `check` whatever the compaction keeps, so a witness of it
    // reproduced nothing (seen by `every_witness_makes_check_report_that_finding`).
    let d = domain(Some(
        r#"{"type":"object","properties":{"c.d":{"type":"number"},
            "c":{"type":"object","properties":{"d":{"type":"number"}}}}}"#,
    ));
    let calls = all_calls(&d, r#"{"field":"c.d","op":"gt","value":0}"#, 1000).unwrap();
    assert!(!calls.is_empty());
    for call in &calls {
        let Value::Object(params) = v(call) else {
            panic!("{call}")
        };
        assert!(crate::action::one_spelling(&params).is_ok(), "{call}");
    }
    // Both spellings are still tried, each alone and together with one value.
    assert!(calls.contains(&r#"{"c.d":1}"#.to_string()), "{calls:?}");
    assert!(calls.contains(&r#"{"c":{"d":1}}"#.to_string()), "{calls:?}");
}

/// A `match` field whose path a call may give an array at (`items` for
/// `items.0.amount`): `check` cannot tell whether such a call replays the effect, and the
/// witness search said no call does (a schema of finite calls, or one typing `items` as
/// an array), so precheck passed and pin dropped the effect. It is undecided.
#[test]
fn an_effect_field_through_an_array_a_call_may_give_is_undecided() {
    let effect = Effect {
        tool: "t".into(),
        matches: v(r#"{"items.0.amount":5}"#).as_object().unwrap().clone(),
    };
    use crate::predicate::Elements;
    let undecided = |what: &[Elements]| {
        Err(Undecided::Elements(
            "items.0.amount".into(),
            "items".into(),
            what.to_vec(),
        ))
    };
    for (schema, what) in [
        (
            r#"{"enum":[{"items":5},{"items":[{"amount":5}]}]}"#,
            &[Elements::Array][..],
        ),
        (
            r#"{"type":"object","properties":{"items":{"type":"array"}},"additionalProperties":false}"#,
            &[Elements::Array],
        ),
        // A string is read as an array is: a tool may index it.
        (
            r#"{"enum":[{"items":5},{"items":"x"}]}"#,
            &[Elements::String],
        ),
        (
            r#"{"type":"object","properties":{"items":{"type":"string"}},"additionalProperties":false}"#,
            &[Elements::String],
        ),
        (
            r#"{"type":"object","properties":{"items":{"type":["array","string"]}},"additionalProperties":false}"#,
            &[Elements::Array, Elements::String],
        ),
    ] {
        assert_eq!(
            effect_witness(&domain(Some(schema)), &effect),
            undecided(what),
            "{schema}"
        );
    }
    // The note says which of the two a call may give there.
    for (what, says) in [
        (&[Elements::Array][..], "may give `items` an array, which"),
        (&[Elements::String], "may give `items` a string, which"),
        (
            &[Elements::Array, Elements::String],
            "may give `items` an array or a string, which",
        ),
    ] {
        let Err(why) = undecided(what) else {
            unreachable!()
        };
        assert!(why.describe().contains(says), "{}", why.describe());
    }
    for schema in [
        r#"{"enum":[{"items":5},{"items":{"0":{"amount":6}}}]}"#,
        r#"{"type":"object","properties":{"items":{"type":"number"}},"additionalProperties":false}"#,
    ] {
        assert_eq!(
            effect_witness(&domain(Some(schema)), &effect),
            Ok(None),
            "{schema}"
        );
    }
    assert_eq!(
        crate::action::elements_on_path(
            v(r#"{"items.0":[1],"items":{"0":{}}}"#)
                .as_object()
                .unwrap(),
            "items.0.amount"
        ),
        Some(("items.0", crate::predicate::Elements::Array))
    );
    assert_eq!(
        crate::action::elements_on_path(
            v(r#"{"items":{"0":{"amount":[5]}}}"#).as_object().unwrap(),
            "items.0.amount"
        ),
        None
    );
}

/// A `match` field whose path a call may give a string at a part that is not an index
/// (`invoice` for `invoice.id`, `name` for `name.length`) was ruled out: such a path was
/// read as one the call lacks, while a tool may read something there (a JavaScript
/// string's `length`). It is undecided, as through an array.
#[test]
fn an_effect_field_through_a_string_at_any_part_is_undecided() {
    use crate::predicate::Elements;
    let string = r#"{"type":"string"}"#;
    let number = r#"{"type":"number"}"#;
    let object = |key: &str, inner: &str| {
        format!(
            r#"{{"type":"object","properties":{{"{key}":{inner}}},"additionalProperties":false}}"#
        )
    };
    for (matches, field, at, admits, rules_out) in [
        (
            r#"{"invoice.id":"INV-7"}"#,
            "invoice.id",
            "invoice",
            [
                object("invoice", string),
                r#"{"enum":[{"invoice":5},{"invoice":"x"}]}"#.into(),
            ],
            object("invoice", number),
        ),
        (
            r#"{"name.length":3}"#,
            "name.length",
            "name",
            [
                object("name", string),
                r#"{"enum":[{"name":5},{"name":"x"}]}"#.into(),
            ],
            object("name", number),
        ),
        (
            r#"{"a.name.length":3}"#,
            "a.name.length",
            "a.name",
            [
                object("a", &object("name", string)),
                r#"{"enum":[{"a":5},{"a":{"name":"x"}}]}"#.into(),
            ],
            object("a", &object("name", number)),
        ),
    ] {
        let effect = Effect {
            tool: "t".into(),
            matches: v(matches).as_object().unwrap().clone(),
        };
        for schema in admits {
            assert_eq!(
                effect_witness(&domain(Some(&schema)), &effect),
                Err(Undecided::Elements(
                    field.into(),
                    at.into(),
                    vec![Elements::String]
                )),
                "{matches} {schema}"
            );
        }
        // A number there has nothing to read through: the effect is ruled out.
        assert_eq!(
            effect_witness(&domain(Some(&rules_out)), &effect),
            Ok(None),
            "{matches} {rules_out}"
        );
    }
}
