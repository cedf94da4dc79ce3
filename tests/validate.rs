//! `validate`: a store's invalid input (exit 2), its warnings (exit 1) or a clean bill
//! (exit 0), one line each; and `check`'s note on a kind that looks misspelt.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::fmt::Write as _;

mod common;
use common::{Scratch, fixture, run};

const TYPO: &str = r#"{"records":[
 {"id":"p1","seq":1,"kind":"Policy","scope":"refunds.create","effect":"require_approval","predicate":{"field":"amount","op":"gt","value":5000},"text":"Refunds over $5,000 need approval."},
 {"id":"c2","seq":2,"kind":"chatter","text":"hi"}
],"kept":["p1","c2"],"action":{"tool":"refunds.create","params":{"amount":8400}}}"#;

#[test]
fn a_clean_store_exits_0_with_one_line() {
    let path = fixture("fx1_refund_thread.json");
    let r = run(&["validate", &path], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, format!("{path}: 52 records, valid\n"));
    assert!(r.stderr.is_empty());
}

#[test]
fn a_misspelt_kind_is_a_warning_and_check_notes_it() {
    let s = Scratch::new();
    let path = s.file("typo.json", TYPO.as_bytes());
    let r = run(&["validate", &path], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "warning: record `p1`: kind `Policy` is not a kind the gate evaluates: did you mean `policy`?"
    );
    assert!(lines[1].starts_with(
        "warning: record `p1`: kept, of kind `Policy`, which the gate cannot evaluate"
    ));
    assert_eq!(lines[2], format!("{path}: 2 records, valid, 2 warnings"));
    assert_eq!(lines.len(), 3);

    // check passes (a kept record of a kind it cannot evaluate binds nothing) but says why.
    let r = run(&["check", &path], None);
    assert_eq!(r.code, 0);
    assert_eq!(
        r.labelled("note"),
        [
            "misspelt-kind: record 'p1' (seq 1) is of kind `Policy`, which the gate cannot evaluate: did you mean `policy`?"
        ]
    );
    // Dropped, it blocks as any unevaluable record does, and is noted too.
    let r = run(&["check", &path, "--kept", "c2"], None);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.verdict_line(),
        "verdict   : BLOCK (dropped-unevaluable-record) exit 1"
    );
    assert_eq!(r.labelled("note").len(), 1, "{}", r.stdout);
    // Spelt right, the same call is blocked by the rule itself.
    let right = TYPO.replace("\"Policy\"", "\"policy\"");
    let path = s.file("right.json", right.as_bytes());
    assert_eq!(run(&["validate", &path], None).code, 0);
}

#[test]
fn the_note_is_the_same_on_a_large_store() {
    // A megabyte and more takes the lean loader: it must hold a kept misspelt record.
    let mut text = String::new();
    for i in 1..=30_000 {
        let _ = writeln!(text, r#"{{"id":"c{i}","seq":{i},"kind":"chatter"}}"#);
    }
    text.push_str(
        r#"{"id":"p","seq":0,"kind":"Policy","scope":"t","text":"a rule"}
"#,
    );
    assert!(text.len() > 1 << 20);
    let s = Scratch::new();
    let path = s.file("big.jsonl", text.as_bytes());
    let action = r#"{"tool":"t"}"#;
    let want = "misspelt-kind: record 'p' (seq 0) is of kind `Policy`, which the gate cannot evaluate: did you mean `policy`?";
    for kept in ["p,c1", "c1"] {
        let r = run(&["check", &path, "--action", action, "--kept", kept], None);
        assert_eq!(r.labelled("note"), [want], "{kept}: {}", r.stdout);
        // The exact loader (any other retention) says the same.
        let r = run(
            &[
                "check",
                &path,
                "--action",
                action,
                "--retention",
                "recency:1",
            ],
            None,
        );
        assert_eq!(r.labelled("note"), [want], "{}", r.stdout);
    }
}

#[test]
fn every_warning_kind_has_its_line() {
    let store = r#"{"records":[
 {"id":"s","seq":1,"kind":"summary","text":"prose"},
 {"id":"f","seq":2,"kind":"fact","field":"x","value":1,"depends_on":["g"]},
 {"id":"g","seq":3,"kind":"fact","field":"y","value":1,"text":"y is one for now","depends_on":["f"]},
 {"id":"p","seq":4,"kind":"policy","scope":"billing.charge","effect":"deny","predicate":{"all":[]},"text":"no charges on any account"}
],"kept":["s"],"tools":[{"name":"refunds.create"}]}"#;
    let s = Scratch::new();
    let path = s.file("store.json", store.as_bytes());
    let r = run(&["validate", &path], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", r.stdout);
    assert!(lines[0].starts_with("warning: record `s`: kept, of kind `summary`"));
    assert!(lines[1].starts_with("warning: record `f`: fact without `text`"));
    assert_eq!(
        lines[2],
        "warning: records `f`, `g`: `depends_on` cycle: `f` -> `g` -> `f` (each is derived from the next; none can be checked)"
    );
    assert_eq!(
        lines[3],
        "warning: record `p`: scope `billing.charge` matches none of the listed tools (`refunds.create`): no call of theirs is bound by the rule (precheck and pin judge it all the same, as a rule of a tool that takes any params)"
    );
    assert_eq!(lines[4], format!("{path}: 4 records, valid, 4 warnings"));
    // --tools and --kept replace the document's.
    let r = run(
        &["validate", &path, "--tools", "billing.*", "--kept", "f"],
        None,
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);
}

#[test]
fn validate_gives_an_invalid_store_s_message_once() {
    // stdout and stderr share a terminal: the message on both was read twice there.
    let s = Scratch::new();
    let bad = s.file("bad.jsonl", b"{\"id\":\"a\",\"kind\":\"chatter\"}\n");
    let doc = s.file("doc.json", TYPO.as_bytes());
    let missing = s.path().join("missing.json").to_str().unwrap().to_string();
    let cases: [&[&str]; 4] = [
        &[&bad],
        &[&doc, "--kept", "nope"],
        &[&doc, "--tools", "[]"],
        &[&missing],
    ];
    for case in cases {
        let mut args = vec!["validate"];
        args.extend_from_slice(case);
        let r = run(&args, None);
        assert_eq!(r.code, 2, "{case:?}");
        let message = r.stderr.trim_end().strip_prefix("omission-gate: ").unwrap();
        let both = format!("{}{}", r.stdout, r.stderr);
        assert_eq!(both.matches(message).count(), 1, "{case:?}: {both}");
    }
}

#[test]
fn invalid_input_exits_2_as_check_would() {
    let s = Scratch::new();
    let path = s.file("bad.jsonl", b"{\"id\":\"a\",\"kind\":\"chatter\"}\n");
    let r = run(&["validate", &path], None);
    assert_eq!(r.code, 2);
    let check = run(&["check", &path, "--action", r#"{"tool":"t"}"#], None);
    let message = check
        .stderr
        .trim_end()
        .strip_prefix("omission-gate: ")
        .unwrap();
    // The message once, on stderr as every command gives it; stdout says the store is
    // invalid (it used to repeat the message, so a terminal showed it twice).
    assert!(message.starts_with("invalid-input: "), "{message}");
    assert_eq!(r.stdout, format!("{path}: invalid\n"));
    assert_eq!(r.stderr, check.stderr);
    // --quiet: nothing on stdout, the error still on stderr.
    let q = run(&["validate", "-q", &path], None);
    assert_eq!((q.code, q.stdout.as_str()), (2, ""));
    assert_eq!(q.stderr, check.stderr);
    // A kept id that names no record is invalid too.
    let path = s.file("doc.json", TYPO.as_bytes());
    let r = run(&["validate", &path, "--kept", "nope"], None);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr
            .starts_with("omission-gate: invalid-input: --kept: kept id `nope` names no record")
    );
    assert_eq!(r.stdout, format!("{path}: invalid\n"));
    // Standard input is read once: naming it twice is invalid, never an empty second read.
    let r = run(&["validate", "-", "--kept", "@-"], Some(TYPO.as_bytes()));
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("names standard input"), "{}", r.stderr);
    let r = run(&["validate", "-"], Some(TYPO.as_bytes()));
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .ends_with("<stdin>: 2 records, valid, 2 warnings\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_store_without_kept_ids_is_validated_without_its_kept_records() {
    // A store for `--kept-from transcript` needs no `kept`: validate reads it and leaves
    // out only the findings on kept records, as its help says.
    let s = Scratch::new();
    let doc = TYPO.replace(r#","kept":["p1","c2"]"#, "");
    let path = s.file("nokept.json", doc.as_bytes());
    let r = run(&["validate", &path], None);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "warning: record `p1`: kind `Policy` is not a kind the gate evaluates: did you mean `policy`?\n{path}: 2 records, valid, 1 warning\n"
        )
    );
    let lines = "{\"id\":\"c1\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"hello there\"}\n{\"id\":\"e2\",\"seq\":2,\"kind\":\"effect\",\"tool\":\"t\",\"match\":{}}\n";
    let path = s.file("nokept.jsonl", lines.as_bytes());
    let r = run(&["validate", &path], None);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, format!("{path}: 2 records, valid\n"));
    // check still needs the kept ids.
    let r = run(
        &["check", &path, "--action", r#"{"tool":"t","params":{}}"#],
        None,
    );
    assert_eq!(r.code, 2);
}

/// A store with nothing that can stop a call is valid, but check and a hook over it pass
/// every call: validate warns (exit 1), on both loaders' inputs.
#[test]
fn a_store_that_binds_nothing_is_a_warning() {
    let s = Scratch::new();
    let warning = "warning: store: no restrictive policy, effect record or record the gate cannot evaluate: nothing in it can stop a call, so check, and a hook wired to it, pass every call; add the rules the agent must keep to";
    for (name, text, records) in [
        ("empty.json", r#"{"records": []}"#.to_string(), "0 records"),
        ("kept.json", r#"{"records": [], "kept": []}"#.to_string(), "0 records"),
        (
            "allow.jsonl",
            [
                r#"{"id":"f","seq":1,"kind":"fact","field":"tier","value":"gold","text":"the customer is on the gold tier"}"#,
                r#"{"id":"a","seq":2,"kind":"policy","scope":"t","predicate":{"all":[]},"effect":"allow","text":"calls of t are always allowed here"}"#,
                r#"{"id":"c","seq":3,"kind":"chatter","text":"hello there"}"#,
            ]
            .join("\n"),
            "3 records",
        ),
    ] {
        let path = s.file(name, text.as_bytes());
        let r = run(&["validate", &path], None);
        assert_eq!(r.code, 1, "{name}: {}{}", r.stdout, r.stderr);
        assert_eq!(
            r.stdout,
            format!("{warning}\n{path}: {records}, valid, 1 warning\n"),
            "{name}"
        );
    }
}

/// A tool schema Gemini CLI's validator cannot compile (a draft-04 `$schema`, a boolean
/// `exclusiveMaximum`) makes it check no call, and precheck reads it as admitting any
/// params: validate said nothing of it, and a user learnt it only from a precheck note.
#[test]
fn a_tool_schema_gemini_cli_cannot_compile_is_a_warning() {
    let tools = r#"[
 {"name":"refunds.create","input_schema":{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"amount":{"type":"integer","maximum":5000}},"required":["amount"]}},
 {"name":"notes.append","input_schema":{"type":"object","properties":{"n":{"type":"integer","maximum":5,"exclusiveMaximum":true}}}},
 {"name":"tickets.close","input_schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer","exclusiveMaximum":5}}}}
]"#;
    let s = Scratch::new();
    let tools_path = format!("@{}", s.file("tools.json", tools.as_bytes()));
    let path = fixture("fx1_refund_thread.json");
    let r = run(&["validate", &path, "--tools", &tools_path], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let fix = "and then it checks no call against it and runs every call: precheck and pin read it as admitting any params, so it rules out no call (fix the tool's own schema, and give the gate the same)";
    assert_eq!(
        r.stdout,
        format!(
            "warning: tool `refunds.create`: its schema is one Gemini CLI's validator cannot compile (`$schema` is \"http://json-schema.org/draft-04/schema#\", a dialect it does not load), {fix}\n\
             warning: tool `notes.append`: its schema is one Gemini CLI's validator cannot compile (`/properties/n/exclusiveMaximum` is a boolean (draft 4), which draft-07 refuses), {fix}\n\
             {path}: 52 records, valid, 2 warnings\n"
        )
    );
    // The document's `tools` are read the same way.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut doc = doc.as_object().unwrap().clone();
    doc.insert("tools".into(), serde_json::from_str(tools).unwrap());
    let doc_path = s.file(
        "doc.json",
        serde_json::Value::Object(doc).to_string().as_bytes(),
    );
    let r = run(&["validate", &doc_path], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout.matches("cannot compile").count(),
        2,
        "{}",
        r.stdout
    );
}
