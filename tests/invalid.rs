//! SPEC 9: every kind of invalid input is ERROR `invalid-input`, exit 2, one clear line on
//! stderr naming what and where, and a sealed ERROR report on stdout. Never a panic.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
use common::{Scratch, run};

const ACTION: &str = r#""action":{"tool":"refunds.create","params":{"amount":1}}"#;
const P: &str = r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{"field":"amount","op":"gt","value":5}}"#;

/// Runs `check` on a document and asserts the invalid-input contract; returns stderr.
fn refused(document: &str, extra: &[&str]) -> String {
    let s = Scratch::new();
    let path = s.file("in.json", document.as_bytes());
    let mut args = vec!["check", path.as_str()];
    args.extend_from_slice(extra);
    let r = run(&args, None);
    assert_eq!(r.code, 2, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "one line: {}", r.stderr);
    assert!(
        r.stderr.starts_with("omission-gate: invalid-input: "),
        "{}",
        r.stderr
    );
    assert_eq!(r.verdict_line(), "verdict   : ERROR (invalid-input) exit 2");
    let verified = run(&["verify", "-"], Some(r.stdout.as_bytes()));
    assert_eq!(verified.code, 0, "the ERROR report is sealed too");
    r.stderr.replace(path.as_str(), "IN")
}

#[test]
fn bad_json_names_file_line_and_column() {
    let err = refused("{\"records\": [\n  {\"id\": \"a\",, }\n]}", &[]);
    assert!(err.contains("IN:2:"), "{err}");
}

#[test]
fn a_key_twice_in_one_object_is_refused() {
    let doc = format!(
        r#"{{"records":[{{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","effect":"allow","effect":"deny","predicate":{{"all":[]}}}}],"kept":[],{ACTION}}}"#
    );
    let err = refused(&doc, &[]);
    assert!(err.contains("duplicate key `effect`"), "{err}");
    assert!(err.contains("IN:1:"), "{err}");
}

#[test]
fn missing_and_mistyped_keys_name_the_record() {
    let cases = [
        (
            r#"{"id":"a","kind":"chatter"}"#,
            "record `a`: missing key `seq`",
        ),
        (
            r#"{"id":"a","seq":"1","kind":"chatter"}"#,
            "record `a`: `seq` must be a non-negative integer",
        ),
        (
            r#"{"seq":1,"kind":"chatter"}"#,
            "records[0]: missing key `id`",
        ),
        (
            r#"{"id":"a","seq":1,"kind":"fact","field":"x"}"#,
            "record `a`: missing key `value`",
        ),
        (
            r#"{"id":"a","seq":1,"kind":"policy","scope":"t","effect":"deny"}"#,
            "record `a`: missing key `predicate`",
        ),
        (
            r#"{"id":"a","seq":1,"kind":"effect","tool":"t","match":"x"}"#,
            "record `a`: `match` must be an object",
        ),
        (
            r#"{"id":"a","seq":1,"kind":"policy","scope":"t","effect":"deny","predicate":{"all":[]},"supercedes":"b"}"#,
            "unknown key `supercedes`",
        ),
    ];
    for (record, want) in cases {
        let err = refused(
            &format!(r#"{{"records":[{record}],"kept":[],{ACTION}}}"#),
            &[],
        );
        assert!(err.contains(want), "{record}: {err}");
    }
}

#[test]
fn duplicate_id_or_seq_is_refused() {
    let err = refused(
        &format!(r#"{{"records":[{P},{{"id":"p","seq":2,"kind":"chatter"}}],"kept":[],{ACTION}}}"#),
        &[],
    );
    assert!(err.contains("record `p`: duplicate id"), "{err}");
    let err = refused(
        &format!(r#"{{"records":[{P},{{"id":"q","seq":1,"kind":"chatter"}}],"kept":[],{ACTION}}}"#),
        &[],
    );
    assert!(err.contains("duplicate seq 1"), "{err}");
}

#[test]
fn a_kept_id_that_names_no_record_is_refused() {
    let err = refused(
        &format!(r#"{{"records":[{P}],"kept":["nope"],{ACTION}}}"#),
        &[],
    );
    assert!(err.contains("kept id `nope` names no record"), "{err}");
    let err = refused(
        &format!(r#"{{"records":[{P}],"kept":[],{ACTION}}}"#),
        &["--kept", "p,ghost"],
    );
    assert!(err.contains("`ghost`"), "{err}");
}

#[test]
fn supersedes_must_name_an_earlier_record_of_the_same_kind_and_field() {
    let cases = [
        r#"{"id":"q","seq":2,"kind":"policy","scope":"t","effect":"deny","predicate":{"all":[]},"supersedes":"nope"}"#,
        r#"{"id":"q","seq":0,"kind":"policy","scope":"t","effect":"deny","predicate":{"all":[]},"supersedes":"p"}"#,
        r#"{"id":"q","seq":2,"kind":"fact","field":"amount","value":1,"supersedes":"p"}"#,
    ];
    for q in cases {
        let err = refused(
            &format!(r#"{{"records":[{P},{q}],"kept":[],{ACTION}}}"#),
            &[],
        );
        assert!(err.contains("record `q`: `supersedes` names"), "{q}: {err}");
    }
    let f1 = r#"{"id":"f1","seq":1,"kind":"fact","field":"x","value":1}"#;
    let f2 = r#"{"id":"f2","seq":2,"kind":"fact","field":"y","value":1,"supersedes":"f1"}"#;
    let err = refused(
        &format!(r#"{{"records":[{f1},{f2}],"kept":[],{ACTION}}}"#),
        &[],
    );
    assert!(err.contains("not an earlier fact of field `y`"), "{err}");
}

#[test]
fn unknown_op_or_effect_is_refused() {
    let op = r#"{"id":"p","seq":1,"kind":"policy","scope":"t","effect":"deny","predicate":{"field":"a","op":"greater","value":1}}"#;
    let err = refused(&format!(r#"{{"records":[{op}],"kept":[],{ACTION}}}"#), &[]);
    assert!(err.contains("unknown op `greater`"), "{err}");
    let effect =
        r#"{"id":"p","seq":1,"kind":"policy","scope":"t","effect":"warn","predicate":{"all":[]}}"#;
    let err = refused(
        &format!(r#"{{"records":[{effect}],"kept":[],{ACTION}}}"#),
        &[],
    );
    assert!(err.contains("unknown effect `warn`"), "{err}");
    let mixed = r#"{"id":"p","seq":1,"kind":"policy","scope":"t","effect":"deny","predicate":{"all":[],"any":[]}}"#;
    let err = refused(
        &format!(r#"{{"records":[{mixed}],"kept":[],{ACTION}}}"#),
        &[],
    );
    assert!(err.contains("exactly the keys of one form"), "{err}");
    let not_array = r#"{"id":"p","seq":1,"kind":"policy","scope":"t","effect":"deny","predicate":{"field":"a","op":"in","value":1}}"#;
    let err = refused(
        &format!(r#"{{"records":[{not_array}],"kept":[],{ACTION}}}"#),
        &[],
    );
    assert!(err.contains("`in` takes an array value"), "{err}");
}

#[test]
fn check_without_an_action_is_refused() {
    let err = refused(&format!(r#"{{"records":[{P}],"kept":[]}}"#), &[]);
    assert!(err.contains("check needs an action"), "{err}");
}

#[test]
fn sweep_of_a_document_without_an_action_says_sweep_takes_none() {
    // sweep has no --action: the loader's advice to give one would not work there.
    let s = Scratch::new();
    let path = s.file(
        "in.json",
        format!(r#"{{"records":[{P}],"kept":[]}}"#).as_bytes(),
    );
    let r = run(&["sweep", path.as_str()], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr.replace(path.as_str(), "IN").trim_end(),
        "omission-gate: invalid-input: IN: action: sweep judges each document's own action, and this one has no `action` key: add one, or judge it with check --action"
    );
}

#[test]
fn sweep_of_a_store_without_kept_says_sweep_takes_no_kept() {
    // sweep has no --kept: the loader's advice to give it would not work there.
    let s = Scratch::new();
    let path = s.file(
        "in.json",
        format!(r#"{{"records":[{P}],{ACTION}}}"#).as_bytes(),
    );
    let r = run(&["sweep", path.as_str()], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr.replace(path.as_str(), "IN").trim_end(),
        "omission-gate: invalid-input: IN: kept: sweep judges each document under retention given by its own `kept`, and this one has no `kept` key (sweep takes no --kept): add one, give --retention head_tail:K or recency:K, or judge it with check --kept"
    );
}

#[test]
fn a_json_lines_store_without_kept_or_action_is_not_told_to_add_a_key() {
    // JSON Lines holds records only: advice to add a `kept` or `action` key cannot be
    // followed there. sweep (which takes neither flag) and check each say what can.
    let s = Scratch::new();
    let path = s.file("in.jsonl", format!("{P}\n").as_bytes());
    let stderr = |args: &[&str]| {
        let r = run(args, None);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        r.stderr.replace(path.as_str(), "IN").trim_end().to_string()
    };
    assert_eq!(
        stderr(&["sweep", &path]),
        "omission-gate: invalid-input: IN: kept: sweep judges each input under retention given by a document's own `kept`, and a JSON Lines store holds records only (sweep takes no --kept): give --retention head_tail:K or recency:K, put the records in a document with a `kept` key, or judge it with check --kept"
    );
    assert_eq!(
        stderr(&["sweep", &path, "--retention", "recency:1"]),
        "omission-gate: invalid-input: IN: action: sweep judges each input's own action, and a JSON Lines store holds records only (sweep takes no --action): put the records in a document with an `action` key, or judge it with check --action"
    );
    assert_eq!(
        stderr(&["check", &path, "--action", r#"{"tool":"t"}"#]),
        "omission-gate: invalid-input: IN: kept: retention=given needs the kept ids, and a JSON Lines store holds records only: give --kept (or have them computed from the harness's transcript: check --transcript FILE, hook --kept-from transcript)"
    );
    assert_eq!(
        stderr(&["check", &path, "--retention", "recency:1"]),
        "omission-gate: invalid-input: IN: action: check needs an action, and a JSON Lines store holds records only: give --action"
    );
}

#[test]
fn given_retention_without_kept_is_refused() {
    let err = refused(&format!(r#"{{"records":[{P}],{ACTION}}}"#), &[]);
    assert!(
        err.contains(
            "retention=given needs the kept ids: a document `kept` key or --kept (or have them computed from the harness's transcript: check --transcript FILE, hook --kept-from transcript)"
        ),
        "{err}"
    );
}

#[test]
fn a_bad_action_flag_is_refused() {
    let err = refused(
        &format!(r#"{{"records":[{P}],"kept":[]}}"#),
        &["--action", r#"{"tool":"x","params":[]}"#],
    );
    assert!(err.contains("--action"), "{err}");
    let err = refused(
        &format!(r#"{{"records":[{P}],"kept":[]}}"#),
        &["--action", "{nope"],
    );
    assert!(err.contains("--action:1:"), "{err}");
}

#[test]
fn a_missing_file_is_refused() {
    let r = run(&["check", "does/not/exist.json"], None);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("does/not/exist.json: input: cannot read: no such file"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_bad_jsonl_line_is_named() {
    let mut text = String::new();
    for i in 1..=50 {
        text.push_str(&format!(
            "{{\"id\":\"r{i}\",\"seq\":{i},\"kind\":\"chatter\"}}\n"
        ));
    }
    text.push_str("{\"id\":\"bad\",\"seq\":51,\"kind\":\"chatter\"\n");
    let s = Scratch::new();
    let path = s.file("in.jsonl", text.as_bytes());
    let r = run(
        &[
            "check",
            &path,
            "--retention",
            "recency:3",
            "--action",
            r#"{"tool":"t"}"#,
        ],
        None,
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("in.jsonl:51:"), "{}", r.stderr);
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    assert_eq!(run(&["check"], None).code, 2);
    assert_eq!(run(&["check", "x", "--retention", "tail:3"], None).code, 2);
    assert_eq!(run(&["frobnicate"], None).code, 2);
    assert_eq!(run(&["--help"], None).code, 0);
    assert_eq!(run(&["--version"], None).code, 0);
}

/// A usage error (an unknown flag, a flag without its value, a value clap refuses, an
/// unknown command, no command at all) was clap's block of lines: the message, a tip, the
/// usage and a pointer to `--help`. It is one line now, clap's message and tips kept,
/// exit 2; `--help` and `--version` are as clap prints them.
#[test]
fn usage_errors_are_one_line() {
    let cases: [(&[&str], &str); 8] = [
        (
            &["check", "--kep", "a", "x.json"],
            "unexpected argument '--kep' found",
        ),
        (
            &["check", "--kept"],
            "a value is required for '--kept <KEPT>'",
        ),
        (
            &["check", "x.json", "--format", "xml"],
            "[possible values: text, json]",
        ),
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'"),
        (&[], "a command is required: one of check, validate,"),
        (
            &["check", "x.json", "--kept", "a", "--retention"],
            "a value is required",
        ),
        (
            &["hook", "claude-code", "--store", "s", "--bogus"],
            "unexpected argument '--bogus'",
        ),
        (
            &["check", "x.json", "--action", "{}", "--precheck"],
            "cannot be used with",
        ),
    ];
    for (args, says) in cases {
        let r = run(args, None);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.starts_with("error: "), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("Usage:"), "{args:?}: {}", r.stderr);
    }
    let tip = run(&["check", "--kep", "a", "x.json"], None);
    assert!(
        tip.stderr
            .contains("; tip: a similar argument exists: '--kept'"),
        "{}",
        tip.stderr
    );
    let help = run(&["check", "--help"], None);
    assert_eq!(help.code, 0);
    assert!(
        help.stdout.contains("Usage: omission-gate check"),
        "{}",
        help.stdout
    );
    let version = run(&["--version"], None);
    assert_eq!(version.code, 0);
    assert!(
        version.stdout.starts_with("omission-gate "),
        "{}",
        version.stdout
    );
}

/// A document with a misspelt `records` (`{"record": [...]}`) is no document, so it was
/// read as JSON Lines and refused as a record without an `id` (or, spread over lines, as
/// a syntax error). The message says what the object is, and the key to use; an input
/// read by the lean loader (1 MiB or more) says the same. A JSON Lines record's own
/// error is as before.
#[test]
fn a_document_with_a_misspelt_records_key_names_the_key_to_use() {
    let scratch = Scratch::new();
    let record = r#"{"id":"a","seq":1,"kind":"chatter"}"#;
    let one_line = format!("{{\"record\": [{record}]}}\n");
    let pretty = format!("{{\n  \"record\": [\n    {record}\n  ]\n}}\n");
    let mut large = String::from("{\"Records\": [\n");
    for i in 0..20_000 {
        large.push_str(&format!(
            "{{\"id\":\"c{i}\",\"seq\":{i},\"kind\":\"chatter\",\"text\":\"some words to make it long\"}},\n"
        ));
    }
    large.push_str(&format!("{record}]}}\n"));
    assert!(large.len() > 1 << 20);
    for (name, text, key) in [
        ("one.json", one_line.as_str(), "record"),
        ("pretty.json", pretty.as_str(), "record"),
        ("large.json", large.as_str(), "Records"),
    ] {
        let path = scratch.file(name, text.as_bytes());
        for command in ["validate", "pin"] {
            let r = run(&[command, &path], None);
            assert_eq!(r.code, 2, "{name}: {}", r.stderr);
            assert!(
                r.stderr.contains(&format!(
                    "line 1: an object with key `{key}` where a record (with `id`, `seq` and `kind`) or a document (with `records`) was expected: rename `{key}` to `records`"
                )),
                "{name} {command}: {}",
                r.stderr
            );
            assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        }
    }
    // What `validate` says of the input `text`, refused.
    let refused = |name: &str, text: &str| {
        let r = run(&["validate", &scratch.file(name, text.as_bytes())], None);
        assert_eq!(r.code, 2, "{}", r.stderr);
        r.stderr
    };
    let other = refused(
        "other.json",
        &format!("\n{{\"entries\": [{record}], \"kept\": []}}\n"),
    );
    assert!(
        other.contains("line 2: an object with keys `entries`, `kept` where a record (with `id`, `seq` and `kind`) or a document (with `records`) was expected: put the records in a document, `{\"records\": [...]}`, or write one record object per line (JSON Lines)"),
        "{other}"
    );
    // A record stream's own errors are as they were.
    let second = refused(
        "s.jsonl",
        &format!("{record}\n{{\"seq\":2,\"kind\":\"chatter\"}}\n"),
    );
    assert!(second.contains("line 2: missing key `id`"), "{second}");
    let first = refused("r.jsonl", "{\"kind\":\"x\"}\n");
    assert!(first.contains("line 1: missing key `id`"), "{first}");
}

#[test]
fn a_document_kept_id_that_names_no_record_is_refused_under_every_retention() {
    // Under head_tail:K or recency:K the document's `kept` is not what is judged, but a
    // kept id that names no record is invalid input all the same (SPEC 9), as `validate`
    // says: it was passed over, and `check` and `sweep` passed the document.
    let doc = format!(r#"{{"records":[{P}],"kept":["q"],{ACTION}}}"#);
    for retention in ["recency:1", "head_tail:1", "recency:0"] {
        let err = refused(&doc, &["--retention", retention]);
        assert!(
            err.contains("IN: kept: kept id `q` names no record"),
            "{retention}: {err}"
        );
    }
    // So in a document large enough to be read leanly: under `recency:0` the lean load
    // judged it by the ends it read (none) and passed it.
    let chatter: Vec<String> = (2..20_000)
        .map(|i| format!(r#"{{"id":"c{i}","seq":{i},"kind":"chatter","text":"hello world"}}"#))
        .collect();
    let big = format!(
        r#"{{"records":[{P},{}],"kept":["q"],{ACTION}}}"#,
        chatter.join(",")
    );
    assert!(big.len() > 1 << 20);
    for retention in ["recency:0", "recency:1", "head_tail:1"] {
        let err = refused(&big, &["--retention", retention]);
        assert!(
            err.contains("kept: kept id `q` names no record"),
            "{retention}: {err}"
        );
    }
    let s = Scratch::new();
    let path = s.file("in.json", doc.as_bytes());
    let r = run(
        &[
            "sweep",
            path.as_str(),
            "--retention",
            "recency:1",
            "--format",
            "tsv",
        ],
        None,
    );
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("\trecency:1\tERROR\tinvalid-input\n"),
        "{}",
        r.stdout
    );
    let r = run(&["validate", path.as_str()], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
}
