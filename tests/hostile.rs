//! The hostile-input suite: input written by an adversary or a buggy harness,
//! run through the real binary. Every refusal must be ERROR `invalid-input`, exit 2,
//! one short stderr line naming the place, an ERROR verdict in the text and the JSON
//! report, and never a panic (exit 101). Valid-but-extreme inputs must get the right
//! verdict. Small inputs live in `tests/hostile/`; big ones are generated here, under
//! the target's temporary directory, at run time.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_omission-gate");
const ACTION: &str = r#"{"tool":"refunds.create","params":{"amount":8400}}"#;

fn fixture(name: &str) -> String {
    format!("{}/tests/hostile/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A file under the target's temporary directory, created once per name.
fn generated(name: &str, make: impl FnOnce() -> Vec<u8>) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(name);
    // Tests run in parallel; each generated name belongs to one test.
    std::fs::write(&path, make()).unwrap();
    path.to_string_lossy().into_owned()
}

fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut command = Command::new(BIN);
    command.args(args);
    let out = common::output_of(command, stdin);
    assert_ne!(
        out.status.code(),
        Some(101),
        "panic: {args:?}\n{}",
        stderr(&out)
    );
    assert!(out.status.code().is_some(), "killed by a signal: {args:?}");
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts `args` (a command and its input) is refused as invalid input, in both
/// formats, with one short stderr line that contains each of `expect`. Returns the
/// message.
fn refused(args: &[&str], stdin: Option<&[u8]>, expect: &[&str]) -> String {
    let out = run(args, stdin);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(err.ends_with('\n'));
    assert!(err.len() < 1000, "{args:?}: {} bytes of stderr", err.len());
    let message = err
        .trim_end()
        .strip_prefix("omission-gate: invalid-input: ")
        .unwrap_or_else(|| panic!("{args:?}: {err}"))
        .to_string();
    for want in expect {
        assert!(
            message.contains(want),
            "{args:?}: `{want}` not in: {message}"
        );
    }
    let text = stdout(&out);
    let verdicts: Vec<&str> = text.lines().filter(|l| l.starts_with("verdict")).collect();
    assert_eq!(
        verdicts,
        ["verdict   : ERROR (invalid-input) exit 2"],
        "{text}"
    );
    assert!(
        text.contains(&format!("reason    : invalid-input: {message}\n")),
        "{text}"
    );

    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let out = run(&json_args, stdin);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{json_args:?}: {}",
        stderr(&out)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["verdict"], "ERROR");
    assert_eq!(report["exit_code"], 2);
    assert_eq!(report["findings"][0]["code"], "invalid-input");
    assert_eq!(report["findings"][0]["message"], message.as_str());
    message
}

/// Runs `check` on a valid input and returns (exit code, text report).
fn judged(args: &[&str], stdin: Option<&[u8]>) -> (i32, String) {
    let out = run(args, stdin);
    let code = out.status.code().unwrap();
    assert!(
        matches!(code, 0 | 1),
        "{args:?}: exit {code}: {}",
        stderr(&out)
    );
    assert!(out.stderr.is_empty(), "{args:?}: {}", stderr(&out));
    (code, stdout(&out))
}

fn verdict_line(report: &str) -> &str {
    report
        .lines()
        .find(|l| l.starts_with("verdict"))
        .unwrap_or_default()
}

fn nested(open: &str, close: &str, depth: usize, inner: &str) -> String {
    let mut s = String::with_capacity(depth * (open.len() + close.len()) + inner.len());
    s.push_str(&open.repeat(depth));
    s.push_str(inner);
    s.push_str(&close.repeat(depth));
    s
}

// ---------------------------------------------------------------------------------
// Nesting

#[test]
fn arrays_nested_100000_deep_are_refused_by_the_nesting_limit() {
    let stream = generated("deep_arrays.json", || {
        nested("[", "]", 100_000, "").into_bytes()
    });
    let m = refused(
        &["check", &stream, "--action", ACTION, "--kept", "[]"],
        None,
        &[":1:128: ", "JSON nested deeper than 127 levels"],
    );
    assert!(m.ends_with("(a fixed limit)"), "{m}");
    let doc = generated("deep_arrays_in_document.json", || {
        format!("{{\"records\":{}}}", nested("[", "]", 100_000, "")).into_bytes()
    });
    refused(&["check", &doc], None, &["nested deeper than 127 levels"]);
    // The same through stdin.
    let bytes = nested("{\"a\":", "}", 100_000, "1").into_bytes();
    refused(
        &["check", "-"],
        Some(&bytes),
        &["<stdin>:1:", "nested deeper"],
    );
}

fn policy_with(predicate: &str) -> String {
    format!(
        r#"{{"records":[{{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{predicate}}}],"kept":["p"],"action":{ACTION}}}"#
    )
}

#[test]
fn predicates_nested_10000_deep_are_refused() {
    let leaf = r#"{"field":"amount","op":"gt","value":5000}"#;
    for (name, open, close) in [
        ("not", r#"{"not":"#, "}"),
        ("all", r#"{"all":["#, "]}"),
        ("any", r#"{"any":[{"all":[]},"#, "]}"),
    ] {
        let path = generated(&format!("deep_predicate_{name}.json"), || {
            policy_with(&nested(open, close, 10_000, leaf)).into_bytes()
        });
        refused(&["check", &path], None, &["nested deeper than 127 levels"]);
    }
}

#[test]
fn predicate_depth_limit_is_visible_and_raisable() {
    let leaf = r#"{"field":"amount","op":"gt","value":5000}"#;
    // 64 `not`s around a leaf: 65 levels, one more than the default.
    let path = generated("predicate_65.json", || {
        policy_with(&nested(r#"{"not":"#, "}", 64, leaf)).into_bytes()
    });
    let m = refused(
        &["check", &path],
        None,
        &[
            "record `p`",
            "predicate nested deeper than 64 levels (raise it with --max-predicate-depth)",
        ],
    );
    assert!(m.contains("`predicate` at /not/not/"), "{m}");
    let (code, report) = judged(&["check", &path, "--max-predicate-depth", "65"], None);
    // 64 negations of TRUE: TRUE, the rule is kept, nothing dropped.
    assert_eq!(code, 0, "{report}");
    refused(
        &["--max-predicate-depth", "3", "check", &path],
        None,
        &["deeper than 3 levels"],
    );
    let usage = run(&["check", &path, "--max-predicate-depth", "0"], None);
    assert_eq!(usage.status.code(), Some(2));
}

// ---------------------------------------------------------------------------------
// Numbers

#[test]
fn ten_thousand_digit_numbers_compare_exactly() {
    // 10^10000 - 1 >= 1e10000 is false: nothing binds.
    let (code, report) = judged(&["check", &fixture("digits_10000_below.json")], None);
    assert_eq!(code, 0, "{report}");
    assert_eq!(verdict_line(&report), "verdict   : PASS exit 0");
    // 999...9.000...0 >= 999...9 is true, and the rule was dropped.
    let (code, report) = judged(&["check", &fixture("digits_10000_equal.json")], None);
    assert_eq!(code, 1, "{report}");
    assert!(report.contains("dropped-binding-constraint"));
    // The report shows the 10,000-digit values briefly, not in full.
    assert!(report.len() < 5_000, "{} bytes", report.len());
}

#[test]
fn exponents_like_1e999999999_compare_exactly() {
    let (code, report) = judged(&["check", &fixture("exponent_huge_valid.json")], None);
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        verdict_line(&report),
        "verdict   : BLOCK (dropped-binding-constraint) exit 1"
    );
    assert!(
        report.contains("limit = 1e+999999999 gt 9.99e+999999998"),
        "{report}"
    );
}

#[test]
fn numbers_beyond_the_limits_are_refused_never_rounded() {
    refused(
        &["check", &fixture("exponent_out_of_range.json")],
        None,
        &["record `f`", "out of range", "2^60"],
    );
    let path = generated("digits_over_limit.json", || {
        format!(
            r#"{{"records":[{{"id":"f","seq":1,"kind":"fact","field":"x","value":{}}}],"kept":[]}}"#,
            "1".repeat(100_001)
        )
        .into_bytes()
    });
    refused(
        &["check", &path, "--action", ACTION],
        None,
        &["record `f`", "more than 100000 digits", "never rounds"],
    );
    // A number in the action is checked the same way.
    let action = format!(r#"{{"tool":"t","params":{{"x":1e{}}}}}"#, "9".repeat(30));
    refused(
        &["check", &fixture("no_bom.json"), "--action", &action],
        None,
        &["--action", "out of range"],
    );
}

// ---------------------------------------------------------------------------------
// Bytes that are not clean JSON text

#[test]
fn invalid_utf8_is_refused_with_its_position() {
    refused(
        &["check", &fixture("invalid_utf8_in_string.json")],
        None,
        &["invalid_utf8_in_string.json:1:", "invalid UTF-8"],
    );
    refused(
        &[
            "check",
            &fixture("invalid_utf8_in_key.jsonl"),
            "--action",
            ACTION,
            "--kept",
            "a",
        ],
        None,
        &["invalid_utf8_in_key.jsonl:2:", "invalid UTF-8"],
    );
    let kept = generated("kept_not_utf8.txt", || b"a\n\xff\n".to_vec());
    refused(
        &[
            "check",
            &fixture("no_bom.json"),
            "--kept",
            &format!("@{kept}"),
        ],
        None,
        &["kept_not_utf8.txt", "not valid UTF-8"],
    );
}

#[test]
fn a_leading_bom_is_skipped_and_changes_nothing() {
    let (code, with) = judged(&["check", &fixture("bom.json")], None);
    let (_, without) = judged(&["check", &fixture("no_bom.json")], None);
    assert_eq!(code, 1);
    assert_eq!(with, without, "a leading BOM must not change the report");
    // A BOM anywhere else is not whitespace: refused where it stands.
    refused(
        &[
            "check",
            &fixture("bom_mid_stream.jsonl"),
            "--action",
            ACTION,
            "--kept",
            "a",
        ],
        None,
        &["bom_mid_stream.jsonl:2:1: expected value"],
    );
}

#[test]
fn nul_bytes_are_refused_and_escaped_nuls_never_reach_the_terminal() {
    refused(
        &["check", &fixture("nul_raw_in_string.json")],
        None,
        &["nul_raw_in_string.json:1:", "control character"],
    );
    refused(
        &["check", &fixture("nul_raw_between_tokens.json")],
        None,
        &["nul_raw_between_tokens.json:1:31: key must be a string"],
    );
    refused(&["check", "-"], Some(b"\0"), &["<stdin>:1:1"]);
    refused(&["check", "-"], Some(&[0u8; 4096]), &["<stdin>:1:1"]);
    // `\u0000` is a valid JSON escape: the id is accepted, and shown escaped.
    let (code, report) = judged(&["check", &fixture("nul_escaped_id.json")], None);
    assert_eq!(code, 1);
    assert!(!report.contains('\0'));
    assert!(report.contains("restore   : a\\u{0000}b\n"), "{report}");
}

#[test]
fn empty_input_is_refused() {
    for path in [fixture("empty.json"), fixture("whitespace.json")] {
        refused(&["check", &path], None, &["empty input"]);
    }
    refused(&["check", "-"], Some(b""), &["<stdin>: input: empty input"]);
    // sweep prints a table, not a report: the row says ERROR, the exit is 2.
    let out = run(&["sweep", &fixture("empty.json")], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).contains("ERROR invalid-input"));
    assert!(stderr(&out).contains("empty.json: input: empty input"));
}

#[test]
fn duplicate_keys_in_a_record_are_refused_never_picked() {
    refused(
        &["check", &fixture("dup_effect.json")],
        None,
        &["dup_effect.json:2:", "duplicate key `effect` in one object"],
    );
    refused(
        &[
            "check",
            &fixture("dup_effect.jsonl"),
            "--action",
            ACTION,
            "--kept",
            "[]",
        ],
        None,
        &["dup_effect.jsonl:2:", "duplicate key `effect`"],
    );
    refused(
        &["check", &fixture("dup_in_predicate.json")],
        None,
        &["duplicate key `op`"],
    );
    refused(
        &[
            "check",
            &fixture("no_bom.json"),
            "--action",
            r#"{"tool":"a","tool":"b"}"#,
        ],
        None,
        &["--action:1:", "duplicate key `tool`"],
    );
}

// ---------------------------------------------------------------------------------
// Size

#[test]
fn a_100_mb_string_is_judged_in_bounded_output() {
    let path = generated("string_100mb.json", || {
        let mut s = String::with_capacity(100_000_200);
        s.push_str(r#"{"records":[{"id":"s","seq":1,"kind":"summary","text":""#);
        s.push_str(&"x".repeat(100_000_000));
        s.push_str(&format!(r#""}}],"kept":[],"action":{ACTION}}}"#));
        s.into_bytes()
    });
    let (code, report) = judged(&["check", &path], None);
    assert_eq!(code, 1);
    assert_eq!(
        verdict_line(&report),
        "verdict   : BLOCK (dropped-unevaluable-record) exit 1"
    );
    assert!(report.len() < 2_000, "{} bytes", report.len());
}

/// An id of `len` bytes on the second line of a JSON Lines store (past the lean path's
/// threshold, across many of its chunks) is refused in one short line.
fn a_huge_id_is_refused_in_one_short_line(len: usize) {
    let path = generated(&format!("id_{len}.jsonl"), || {
        let mut s = String::with_capacity(len + 100);
        s.push_str(r#"{"id":"a","seq":1,"kind":"chatter"}"#);
        s.push_str("\n{\"id\":\"");
        s.push_str(&"i".repeat(len));
        s.push_str("\",\"kind\":\"chatter\"}\n");
        s.into_bytes()
    });
    let m = refused(
        &["check", &path, "--action", ACTION, "--kept", "a"],
        None,
        &["record `iii", "characters cut]", "iii`: missing key `seq`"],
    );
    assert!(m.len() < 600, "{m}");
}

#[test]
fn an_8_mb_id_is_refused_in_one_short_line() {
    // 32 of the lean path's 256 KiB chunks.
    a_huge_id_is_refused_in_one_short_line(8 << 20);
}

#[test]
#[ignore = "large: run by .ci/run (cargo test -- --ignored)"]
fn a_100_mb_id_is_refused_in_one_short_line() {
    a_huge_id_is_refused_in_one_short_line(100_000_000);
}

#[test]
fn a_huge_tool_name_is_not_repeated_once_per_rule() {
    // 200 rules in scope of every tool, a 1 MB tool name: each message names the tool,
    // so printing it in full would make a 200 MB report.
    let tool = "t".repeat(1_000_000);
    let mut records = String::new();
    for i in 0..200 {
        let _ = write!(
            records,
            r#"{{"id":"p{i}","seq":{i},"kind":"policy","scope":"*","effect":"deny","predicate":{{"field":"amount","op":"gt","value":5000}}}},"#
        );
    }
    let path = generated("huge_tool.json", || {
        format!(
            r#"{{"records":[{}],"kept":[],"action":{{"tool":"{tool}","params":{{"amount":8400}}}}}}"#,
            records.trim_end_matches(',')
        )
        .into_bytes()
    });
    let (code, report) = judged(&["check", &path], None);
    assert_eq!(code, 1);
    assert_eq!(report.matches("dropped-binding-constraint:").count(), 200);
    // The action line shows the tool once in full; the 200 messages show it briefly.
    assert!(report.len() < 1_200_000, "{} bytes", report.len());
}

#[test]
fn a_huge_value_read_by_many_leaves_is_shown_briefly() {
    // One 1 MB fact, one rule with 3000 leaves reading it: once a 3 GB report.
    let leaf = r#"{"field":"x","op":"eq","value":"y"}"#;
    let leaves = vec![leaf; 3000].join(",");
    let path = generated("huge_value_many_leaves.json", || {
        format!(
            r#"{{"records":[{{"id":"f","seq":1,"kind":"fact","field":"x","value":"{}"}},{{"id":"p","seq":2,"kind":"policy","scope":"refunds.create","effect":"deny","predicate":{{"any":[{leaves},{{"field":"amount","op":"gt","value":5000}}]}}}}],"kept":["f"],"action":{ACTION}}}"#,
            "v".repeat(1_000_000)
        )
        .into_bytes()
    });
    let (code, report) = judged(&["check", &path], None);
    assert_eq!(code, 1);
    assert!(report.len() < 1_000_000, "{} bytes", report.len());
}

/// A trailing comma on line `bad` of `lines` chatter lines is named by its line number,
/// far into the lean path's chunks.
fn one_bad_line_is_named(lines: usize, bad: usize) {
    let path = generated(&format!("lines_{lines}.jsonl"), || {
        let mut s = String::with_capacity(lines * 48);
        for i in 1..=lines {
            if i == bad {
                let _ = writeln!(s, r#"{{"id":"r{i}","seq":{i},"kind":"chatter",}}"#);
            } else {
                let _ = writeln!(s, r#"{{"id":"r{i}","seq":{i},"kind":"chatter"}}"#);
            }
        }
        s.into_bytes()
    });
    refused(
        &["check", &path, "--action", ACTION, "--kept", "r1"],
        None,
        &[&format!("lines_{lines}.jsonl:{bad}:"), "trailing comma"],
    );
}

#[test]
fn one_bad_line_among_a_hundred_thousand_is_named() {
    // About 4.5 MB: the bad line is in the 14th of the lean path's 256 KiB chunks.
    one_bad_line_is_named(100_000, 76_543);
}

#[test]
#[ignore = "large: run by .ci/run (cargo test -- --ignored)"]
fn one_bad_line_among_a_million_is_named() {
    one_bad_line_is_named(1_000_000, 765_432);
}

/// A kept file naming `n` ids, each a record: all kept; one unknown id among them is
/// named.
fn kept_naming_ids(n: usize) {
    let records = generated(&format!("kept_{n}_records.jsonl"), || {
        let mut s = String::with_capacity(n * 40);
        for i in 0..n {
            let _ = writeln!(s, r#"{{"id":"r{i}","seq":{i},"kind":"chatter"}}"#);
        }
        s.into_bytes()
    });
    let kept = generated(&format!("kept_{n}.txt"), || {
        (0..n)
            .fold(String::new(), |mut s, i| {
                let _ = writeln!(s, "r{i}");
                s
            })
            .into_bytes()
    });
    let kept_arg = format!("@{kept}");
    let (code, report) = judged(
        &["check", &records, "--action", ACTION, "--kept", &kept_arg],
        None,
    );
    assert_eq!(code, 0);
    assert!(report.contains(&format!("compaction: {n} records, {n} kept, 0 dropped")));
    // One unknown id among them is named.
    let bad = generated(&format!("kept_{n}_one_bad.txt"), || {
        let mut s = String::from("nope-0\n");
        for i in 1..n {
            let _ = writeln!(s, "r{i}");
        }
        s.into_bytes()
    });
    refused(
        &[
            "check",
            &records,
            "--action",
            ACTION,
            "--kept",
            &format!("@{bad}"),
        ],
        None,
        &["kept id `nope-0` names no record"],
    );
}

#[test]
fn kept_naming_200_000_ids() {
    // Past the most ids the lean path's kept-id prefilter is sized for (about 105,000).
    kept_naming_ids(200_000);
}

#[test]
#[ignore = "large: run by .ci/run (cargo test -- --ignored)"]
fn kept_naming_a_million_ids() {
    kept_naming_ids(1_000_000);
}

#[test]
fn input_size_limit_is_visible_and_raisable() {
    let path = fixture("no_bom.json");
    let size = std::fs::metadata(&path).unwrap().len();
    let limit = (size - 1).to_string();
    refused(
        &["check", &path, "--max-input-bytes", &limit],
        None,
        &[
            "no_bom.json: input: larger than the input limit of",
            "--max-input-bytes",
        ],
    );
    let bytes = std::fs::read(&path).unwrap();
    refused(
        &["--max-input-bytes", &limit, "check", "-"],
        Some(&bytes),
        &["<stdin>: input: larger than the input limit"],
    );
    // A flag's file is bounded too.
    let action = generated("big_action.json", || {
        format!(
            r#"{{"tool":"t","params":{{"note":"{}"}}}}"#,
            "n".repeat(2048)
        )
        .into_bytes()
    });
    refused(
        &[
            "check",
            &path,
            "--max-input-bytes",
            "1K",
            "--action",
            &format!("@{action}"),
        ],
        None,
        &["big_action.json: action file: larger than the input limit of 1024 bytes"],
    );
    let (code, _) = judged(
        &["check", &path, "--max-input-bytes", &size.to_string()],
        None,
    );
    assert_eq!(code, 1);
    // An endless source is cut at the limit and refused, not read forever.
    refused(
        &["check", "/dev/zero", "--max-input-bytes", "64K"],
        None,
        &["/dev/zero: input: larger than the input limit of 65536 bytes"],
    );
}

#[test]
fn help_shows_every_limit_with_its_default() {
    for args in [
        &["--help"][..],
        &["check", "--help"],
        &["sweep", "--help"],
        &["pin", "--help"],
        &["verify", "--help"],
    ] {
        let out = run(args, None);
        assert_eq!(out.status.code(), Some(0));
        let help = stdout(&out);
        assert!(help.contains("Limits:"), "{help}");
        assert!(help.contains("--max-input-bytes <BYTES>"), "{help}");
        assert!(help.contains("[default: 1G]"), "{help}");
        // The predicate depth, where there are predicates to read.
        if args[0] != "verify" {
            assert!(help.contains("--max-predicate-depth <LEVELS>"), "{help}");
            assert!(help.contains("[default: 64]"), "{help}");
        }
        // The precheck decision bound, where there is a precheck to bound.
        if matches!(args[0], "check" | "sweep" | "pin") {
            assert!(help.contains("--max-calls <CALLS>"), "{help}");
            assert!(help.contains("[default: 100000]"), "{help}");
        }
    }
}

// ---------------------------------------------------------------------------------
// seq

#[test]
fn seq_is_accepted_up_to_2_64_minus_1_and_refused_beyond() {
    let (code, report) = judged(&["check", &fixture("seq_2_63.json")], None);
    assert_eq!(code, 1, "{report}");
    assert!(report.contains("(seq 18446744073709551615)"), "{report}");
    for (file, id) in [
        ("seq_2_64.json", "big"),
        ("seq_negative.json", "neg"),
        ("seq_fraction.json", "frac"),
        ("seq_exponent.json", "exp"),
    ] {
        refused(
            &["check", &fixture(file)],
            None,
            &[
                &format!("record `{id}`"),
                "`seq` must be a non-negative integer below 2^64",
            ],
        );
    }
}

#[test]
fn a_retention_k_near_the_integer_limit_keeps_everything() {
    // Regression: `i + k` overflowed (exit 101 in debug, a wrong kept set in release).
    for r in [
        "recency:18446744073709551615",
        "head_tail:18446744073709551615",
    ] {
        let (code, report) = judged(&["check", &fixture("no_bom.json"), "--retention", r], None);
        assert_eq!(code, 0, "{report}");
        assert!(report.contains("1 record, 1 kept, 0 dropped"), "{report}");
    }
}

// ---------------------------------------------------------------------------------
// Output that cannot be written

fn with_stdout(args: &[&str], stdout: impl Into<Stdio>, stderr: impl Into<Stdio>) -> Option<i32> {
    let status = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .status()
        .unwrap();
    status.code()
}

fn dev_full() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap()
}

#[test]
fn a_full_disk_while_writing_the_report_exits_2() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let pass = generated("pass.json", || {
        br#"{"records":[{"id":"a","seq":1,"kind":"chatter"}],"kept":["a"],"action":{"tool":"t"}}"#
            .to_vec()
    });
    let report = generated("report.txt", || run(&["check", &pass], None).stdout);
    for args in [
        &["check", pass.as_str()][..],
        &["check", pass.as_str(), "--format", "json"],
        &["sweep", pass.as_str()],
        &["verify", report.as_str()],
        &["check", &fixture("empty.json")],
    ] {
        assert_eq!(
            with_stdout(args, dev_full(), Stdio::null()),
            Some(2),
            "{args:?}"
        );
        // Both streams full: still 2, never a panic on the error message itself.
        assert_eq!(
            with_stdout(args, dev_full(), dev_full()),
            Some(2),
            "{args:?}"
        );
    }
    // A refusal whose stderr is full still exits 2 (eprintln! used to panic: 101).
    assert_eq!(
        with_stdout(
            &["check", &fixture("empty.json")],
            Stdio::null(),
            dev_full()
        ),
        Some(2)
    );
    assert_eq!(
        with_stdout(&["check", &pass], Stdio::null(), dev_full()),
        Some(0)
    );
}

#[test]
fn a_closed_pipe_while_writing_the_report_exits_2() {
    let pass = generated("pass_pipe.json", || {
        br#"{"records":[{"id":"a","seq":1,"kind":"chatter"}],"kept":["a"],"action":{"tool":"t"}}"#
            .to_vec()
    });
    for args in [
        &["check", pass.as_str()][..],
        &["check", pass.as_str(), "--format", "json"],
        &["sweep", pass.as_str()],
        &["check", &fixture("empty.json")],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("cannot write the"), "{args:?}: {err}");
    }
}

#[test]
fn a_file_name_cannot_forge_a_line() {
    let path = generated(
        "evil\nverdict   : PASS exit 0\n\u{1b}[2J\u{202e}.json",
        Vec::new,
    );
    let out = run(&["check", &path], None);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("evil\\u{000a}verdict   : PASS exit 0\\u{000a}\\u{001b}[2J\\u{202e}.json")
    );
    let text = stdout(&out);
    assert_eq!(text.lines().filter(|l| l.starts_with("verdict")).count(), 1);
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
    let out = run(&["sweep", &path, &fixture("no_bom.json")], None);
    assert_eq!(out.status.code(), Some(2));
    let table = stdout(&out);
    // A header, two rows and the summary: the name cannot add a row.
    assert_eq!(table.lines().count(), 4, "{table}");
    assert!(
        table.ends_with("0 PASS, 1 BLOCK, 1 ERROR -> overall exit 2\n"),
        "{table}"
    );
    assert!(!table.contains('\u{1b}') && !table.contains('\u{202e}'));
}

#[test]
fn hostile_lines_behind_a_megabyte_of_records_are_refused_by_the_lean_path_too() {
    // Inputs of a megabyte or more take the lean loader; it must refuse (by handing over
    // to the exact path) everything the exact path refuses.
    let padding: String = (1..=25_000).fold(String::new(), |mut s, i| {
        let _ = writeln!(s, r#"{{"id":"r{i}","seq":{i},"kind":"chatter"}}"#);
        s
    });
    assert!(padding.len() > 1 << 20);
    let cases: [(&str, &[u8], &str); 9] = [
        (
            "dup",
            br#"{"id":"p","seq":0,"kind":"policy","scope":"refunds.create","predicate":{"all":[]},"effect":"allow","effect":"deny"}"#,
            "duplicate key `effect`",
        ),
        ("utf8", b"{\"id\":\"u\",\"seq\":0,\"kind\":\"chatter\",\"text\":\"\xff\"}", "invalid UTF-8"),
        ("nul", b"{\"id\":\"n\0\",\"seq\":0,\"kind\":\"chatter\"}", "control character"),
        ("seq", br#"{"id":"s","seq":18446744073709551616,"kind":"chatter"}"#, "`seq` must be"),
        ("deep", &[b'['; 200], "nested deeper than 127 levels"),
        ("number", br#"{"id":"f","seq":0,"kind":"fact","field":"x","value":1e99999999999999999999}"#, "out of range"),
        ("dupid", br#"{"id":"r7","seq":0,"kind":"chatter"}"#, "duplicate id"),
        // A skipped string's escapes are only checked for syntax: the lean scans must
        // still refuse a lone surrogate the strict parser refuses.
        (
            "surrogate_chatter",
            br#"{"id":"s","seq":0,"kind":"chatter","text":"a \ud800 b"}"#,
            "unexpected end of hex escape",
        ),
        (
            "surrogate_fact",
            br#"{"id":"f","seq":0,"kind":"fact","field":"x","value":1,"text":"\udc00"}"#,
            "surrogate",
        ),
    ];
    for (name, line, want) in cases {
        let path = generated(&format!("lean_{name}.jsonl"), || {
            let mut bytes = padding.clone().into_bytes();
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
            bytes
        });
        refused(
            &["check", &path, "--kept", "r1", "--action", ACTION],
            None,
            &[want],
        );
    }
}

#[test]
fn a_witness_from_the_deepest_value_keeps_the_json_report_parseable() {
    // Regression (found by fuzzing check_structured): an effect's `match` value nested
    // 125 deep became a precheck witness, and the JSON report around it nested 128 deep,
    // past what serde_json (and the gate itself) will parse. Values now nest at most 64.
    let effect = |depth: usize| {
        format!(
            r#"{{"records":[{{"id":"e","seq":1,"kind":"effect","tool":"refunds.create","match":{{"ticket":{}}}}}],"kept":[]}}"#,
            nested("[", "]", depth, "7741")
        )
    };
    // The match object is level 1; its value brings the whole to 64 levels.
    let path = generated("deep_match_64.json", || effect(63).into_bytes());
    let out = run(&["check", &path, "--precheck", "--format", "json"], None);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("parseable");
    assert_eq!(report["findings"][0]["code"], "may-bind-some-action");
    assert!(report["findings"][0]["witness"]["params"]["ticket"].is_array());
    let path = generated("deep_match_65.json", || effect(64).into_bytes());
    refused(
        &["check", &path, "--precheck"],
        None,
        &["record `e`", "`match`: nested deeper than 64 levels"],
    );
    // Action params, the same way.
    let action = |depth: usize| {
        format!(
            r#"{{"tool":"refunds.create","params":{{"deep":{}}}}}"#,
            nested("[", "]", depth, "1")
        )
    };
    let out = run(
        &[
            "check",
            &fixture("no_bom.json"),
            "--action",
            &action(63),
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("parseable");
    refused(
        &["check", &fixture("no_bom.json"), "--action", &action(64)],
        None,
        &["--action", "nested deeper than 64 levels"],
    );
}
