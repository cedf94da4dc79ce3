#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The CLI reads a large document (one JSON object with `records`) leanly, from a file
//! and from standard input, and prints what the exact loader's report would be, byte for
//! byte. (The lean document reader itself, cut into tiny chunks so that small documents
//! are cut everywhere, is tested inside the crate: `src/input/lean_tests.rs`.)

mod common;

use omission_gate::{CheckOptions, Format, PrecheckOptions, Retention};

/// What a load is for.
#[derive(Debug, Clone, Copy)]
enum Ask {
    Check,
    Precheck,
    Pin,
}

const MAX_CALLS: usize = 64;

/// The report the exact loader gives (JSON) for the document's own kept ids, action and
/// tools, or `None` when it refuses the input.
fn exact(bytes: &[u8], ask: Ask) -> Option<Vec<u8>> {
    let input = omission_gate::load("in.json", bytes).ok()?;
    let report = match ask {
        Ask::Check => {
            let a = input.action.clone()?;
            omission_gate::check(&input, Retention::Given, None, &a, CheckOptions::default())
                .ok()?
        }
        Ask::Precheck => omission_gate::precheck(
            &input,
            Retention::Given,
            None,
            None,
            PrecheckOptions::default(),
        )
        .ok()?,
        Ask::Pin => omission_gate::pin(&input, None, None, pin_options()).ok()?,
    };
    Some(report.render(Format::Json))
}

const RECORDS: [&str; 8] = [
    r#"{"id":"c1","seq":1,"kind":"chatter","text":"hello"}"#,
    r#"{"id":"f1","seq":2,"kind":"fact","field":"limit","value":100}"#,
    r#"{"id":"p1","seq":3,"kind":"policy","scope":"pay","predicate":{"all":[{"field":"amount","op":"gt","value":"limit"},{"any":[]}]},"effect":"deny"}"#,
    r#"{"id":"f2","seq":4,"kind":"fact","field":"limit","value":50,"supersedes":"f1","depends_on":["p1"]}"#,
    r#"{"id":"s1","seq":5,"kind":"summary","text":"earlier","tokens":3}"#,
    r#"{"id":"e1","seq":6,"kind":"effect","tool":"pay","match":{"amount":5}}"#,
    r#"{"id":"c2","seq":7,"kind":"chatter","text":"x","meta":{"a":[{"b":1}]}}"#,
    r#"{"id":"c3","seq":8,"kind":"chatter"}"#,
];

const KEPT: &str = r#"["c1","f2","c3"]"#;
const ACTION: &str = r#"{"tool":"pay","params":{"amount":70}}"#;
const TOOLS: &str = r#"[{"name":"pay","input_schema":{"type":"object","properties":{"amount":{"anyOf":[{"type":"integer"},{"type":"number"}]}}}},{"name":"other"}]"#;

/// A document with these top-level members, in this order (`records` is `RECORDS`
/// joined by `sep`).
fn doc(members: &[&str], sep: &str) -> String {
    let body: Vec<String> = members
        .iter()
        .map(|m| match *m {
            "records" => format!("\"records\":[{}]", RECORDS.join(sep)),
            "kept" => format!("\"kept\":{KEPT}"),
            "action" => format!("\"action\":{ACTION}"),
            "tools" => format!("\"tools\":{TOOLS}"),
            "meta" => r#""meta":{"k":[{"x":[1]}],"records":[{"id":"m"}]}"#.to_string(),
            other => other.to_string(),
        })
        .collect();
    format!("{{{}}}", body.join(","))
}

/// A store of a megabyte or more, as a document: the CLI reads it leanly, from a file
/// and from stdin.
fn big_document(members: &[&str]) -> String {
    let mut records: Vec<String> = Vec::new();
    for i in 0..14000 {
        records.push(format!(
            r#"{{"id":"b{i}","seq":{},"kind":"chatter","text":"padding \"words\" }},{{ }}],"}}"#,
            100 + i
        ));
    }
    let mut all: Vec<String> = RECORDS.iter().map(|r| r.to_string()).collect();
    all.extend(records);
    let text = doc(members, ",\n").replacen(&RECORDS.join(",\n"), &all.join(",\n"), 1);
    assert!(text.len() > 1 << 20);
    text
}

#[test]
fn the_cli_reads_a_large_document_leanly_from_a_file_and_from_stdin() {
    let scratch = common::Scratch::new();
    for members in [
        &["records", "kept", "action"][..],
        &["kept", "action", "records", "tools"],
    ] {
        let text = big_document(members);
        let want = exact(text.as_bytes(), Ask::Check).unwrap();
        let path = scratch.file("big.json", text.as_bytes());
        let from_file = common::run(&["check", &path, "--format", "json"], None);
        assert_eq!(from_file.stdout.as_bytes(), &want[..]);
        let from_stdin = common::run(&["check", "-", "--format", "json"], Some(text.as_bytes()));
        assert_eq!(from_stdin.stdout.as_bytes(), &want[..]);
        // With a byte-order mark, and in text.
        let bom = format!("\u{feff}{text}");
        let text_report = common::run(&["check", "-"], Some(bom.as_bytes()));
        let input = omission_gate::load("<stdin>", bom.as_bytes()).unwrap();
        let a = input.action.clone().unwrap();
        let want =
            omission_gate::check(&input, Retention::Given, None, &a, CheckOptions::default())
                .unwrap()
                .render(Format::Text);
        assert_eq!(text_report.stdout.as_bytes(), &want[..]);
        // precheck and pin through the CLI too.
        let pre = common::run(&["check", "--precheck", &path, "--format", "json"], None);
        let want = exact(text.as_bytes(), Ask::Precheck).unwrap();
        assert_eq!(pre.stdout.as_bytes(), &want[..]);
        let pin = common::run(
            &["pin", &path, "--max-calls", "64", "--format", "json"],
            None,
        );
        let want = exact(text.as_bytes(), Ask::Pin).unwrap();
        assert_eq!(pin.stdout.as_bytes(), &want[..]);
    }
    // pin --budget reads the document twice (the second time only the chunks that hold
    // a record to keep), from a file and from stdin.
    let text = big_document(&["kept", "records", "action", "tools"]);
    let path = scratch.file("budget.json", text.as_bytes());
    let input = omission_gate::load("x", text.as_bytes()).unwrap();
    for budget in [10u64, 3_000, 60_000, 10_000_000] {
        let want = omission_gate::pin(&input, None, Some(budget), pin_options())
            .unwrap()
            .render(Format::Json);
        let b = budget.to_string();
        let args = [
            "pin",
            &path,
            "--budget",
            &b,
            "--max-calls",
            "64",
            "--format",
            "json",
        ];
        assert_eq!(
            common::run(&args, None).stdout.as_bytes(),
            &want[..],
            "{budget}"
        );
        let args = [
            "pin",
            "-",
            "--budget",
            &b,
            "--max-calls",
            "64",
            "--format",
            "json",
        ];
        let run = common::run(&args, Some(text.as_bytes()));
        assert_eq!(run.stdout.as_bytes(), &want[..], "{budget}");
    }

    // Broken at the end: the CLI gives the exact loader's error.
    let text = big_document(&["records", "kept", "action"]);
    let cut = &text[..text.len() - 3];
    let run = common::run(&["check", "-", "--format", "json"], Some(cut.as_bytes()));
    assert_eq!(run.code, 2);
    let err = omission_gate::load("<stdin>", cut.as_bytes()).unwrap_err();
    assert!(run.stderr.contains(&err.to_string()), "{}", run.stderr);
}

fn pin_options() -> omission_gate::PinOptions {
    omission_gate::PinOptions {
        max_calls: MAX_CALLS,
        ..Default::default()
    }
}
