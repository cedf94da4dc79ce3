#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Differential tests of the lean loader on odd but valid (and odd and invalid) inputs of
//! 1 MiB and more: the binary given the store's path (which the lean loader may read)
//! must answer exactly as when the same bytes come on a pipe (which the exact loader
//! reads), for `check`, precheck, `pin` and the hook adapters.

mod common;

use common::{PIPED, Run, Scratch, run, run_piped};

/// Plain chatter from `seq` 1 on, one record a line, at least `bytes` long: the padding
/// that takes a store over the lean loader's threshold. The next free `seq` with it.
fn chatter(bytes: usize) -> (String, u64) {
    let mut out = String::new();
    let mut seq = 1;
    while out.len() < bytes {
        out.push_str(&format!(
            "{{\"id\":\"c{seq}\",\"seq\":{seq},\"kind\":\"chatter\",\"text\":\"padding words, padding words, padding words\"}}\n"
        ));
        seq += 1;
    }
    (out, seq)
}

/// The store: `lines` (whose `SEQ` each become the next free `seq`) after 1.1 MiB of
/// chatter.
fn store(lines: &[&str]) -> String {
    let (mut out, mut seq) = chatter(1_100_000);
    for line in lines {
        out.push_str(&line.replace("SEQ", &seq.to_string()));
        out.push('\n');
        seq += 1;
    }
    assert!(out.len() >= 1 << 20);
    out
}

/// What a run printed, with the store's name as the pipe's (an error names its input,
/// and then its report's seal differs with the name: every sha256 is blanked).
fn named_as_pipe(run: Run, path: &str) -> (i32, String, String) {
    let unseal = |text: String| {
        if !text.contains(path) && !text.contains(PIPED) {
            return text;
        }
        let text = text.replace(path, PIPED);
        let mut out = String::new();
        let mut run = String::new();
        for c in text.chars().chain(['\n']) {
            if c.is_ascii_digit() || ('a'..='f').contains(&c) {
                run.push(c);
                continue;
            }
            out.push_str(if run.len() == 64 { "<sha256>" } else { &run });
            run.clear();
            out.push(c);
        }
        out.pop();
        out
    };
    (run.code, unseal(run.stdout), unseal(run.stderr))
}

/// Runs `args` (`STORE` standing for the store) on the store's file and on a pipe of it,
/// asserts that both answer the same, and returns the answer.
fn same_on_both_paths(args: &[&str], path: &str, stdin: Option<&[u8]>) -> (i32, String, String) {
    let on = |store: &str| -> Vec<String> {
        args.iter()
            .map(|a| if *a == "STORE" { store } else { a }.to_string())
            .collect()
    };
    let lean = on(path);
    let lean: Vec<&str> = lean.iter().map(String::as_str).collect();
    let exact = on(PIPED);
    let exact: Vec<&str> = exact.iter().map(String::as_str).collect();
    let got = named_as_pipe(run(&lean, stdin), path);
    let want = named_as_pipe(run_piped(&exact, path, stdin), path);
    assert_eq!(got, want, "{args:?}");
    want
}

/// A Claude Code pre-tool payload for `tool` with `input`.
fn claude_payload(tool: &str, input: &str) -> String {
    format!(
        r#"{{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/r","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"{tool}","tool_input":{input},"tool_use_id":"toolu_1"}}"#
    )
}

/// An effect whose `tool` is a glob names every tool it covers for a hook deciding which
/// calls it guards: the lean load of a large store must hold it, or a call the exact load
/// denies (here, for a dropped summary) passes unjudged.
#[test]
fn an_effect_tool_glob_makes_a_hook_guard_the_call_on_a_large_store() {
    let scratch = Scratch::new();
    let text = store(&[
        r#"{"id":"s0","seq":SEQ,"kind":"summary","text":"earlier work"}"#,
        r#"{"id":"e0","seq":SEQ,"kind":"effect","tool":"p*","match":{"amount":1}}"#,
    ]);
    let path = scratch.file("store.jsonl", text.as_bytes());
    let payload = claude_payload("pay", r#"{"amount":5}"#);
    for kept in ["c1", "c1,e0", "c1,s0"] {
        let (code, _, stderr) = same_on_both_paths(
            &[
                "hook",
                "claude-code",
                "--store",
                "STORE",
                "--kept",
                kept,
                "--tools",
                "Bash",
            ],
            &path,
            Some(payload.as_bytes()),
        );
        if kept == "c1,s0" {
            assert_eq!(code, 0, "{kept}: {stderr}");
        } else {
            assert_eq!(code, 2, "{kept}");
            assert!(stderr.contains("dropped-unevaluable-record"), "{stderr}");
        }
    }
}

/// An effect of a glob `tool` replays every call of a tool it covers: on a large store
/// the lean load holds it for `check`, for precheck and pin of a listed tool it covers or
/// a glob that meets it, and both loads block (or pin) alike.
#[test]
fn an_effect_tool_glob_replays_a_covered_call_alike_on_both_loads() {
    let scratch = Scratch::new();
    let text =
        store(&[r#"{"id":"e0","seq":SEQ,"kind":"effect","tool":"refunds.*","match":{"order":7}}"#]);
    let path = scratch.file("store.jsonl", text.as_bytes());
    let action = r#"{"tool":"refunds.create","params":{"order":7}}"#;
    let checked = same_on_both_paths(
        &["check", "STORE", "--kept", "c1", "--action", action],
        &path,
        None,
    );
    assert_eq!(checked.0, 1, "{}", checked.1);
    assert!(checked.1.contains("dropped-effect-replay"), "{}", checked.1);
    for tools in ["refunds.create", "refunds.c*", "*"] {
        let (code, stdout, _) = same_on_both_paths(
            &[
                "check",
                "--precheck",
                "STORE",
                "--kept",
                "c1",
                "--tools",
                tools,
            ],
            &path,
            None,
        );
        assert_eq!(code, 1, "{tools}: {stdout}");
        let (_, stdout, _) = same_on_both_paths(&["pin", "STORE", "--tools", tools], &path, None);
        assert!(
            stdout.contains("pinned    : e0 (effect ledger entry of refunds.*"),
            "{tools}: {stdout}"
        );
    }
}

/// The same under `--kept-from transcript`, where the records in view of the session are
/// the kept ones: the lean load for the call must hold the glob effect too.
#[test]
fn an_effect_tool_glob_makes_a_transcript_hook_guard_the_call_on_a_large_store() {
    let scratch = Scratch::new();
    let (padding, _) = chatter(1_100_000);
    let padding = padding.replace("\"id\":\"c", "\"id\":\"z");
    let text = format!(
        "{padding}{}\n{}\n",
        r#"{"id":"s0","seq":900001,"kind":"summary","text":"earlier work"}"#,
        r#"{"id":"e0","seq":900002,"kind":"effect","tool":"B*","match":{"command":"x"}}"#,
    );
    let path = scratch.file("store.jsonl", text.as_bytes());
    let dir = env!("CARGO_MANIFEST_DIR");
    let payload = std::fs::read_to_string(format!(
        "{dir}/tests/transcripts/claude-code/AE-1.payload.json"
    ))
    .unwrap();
    let mut payload: serde_json::Value = serde_json::from_str(&payload).unwrap();
    payload["transcript_path"] = format!("{dir}/tests/transcripts/claude-code/AE-1.jsonl").into();
    let payload = payload.to_string();
    let args = [
        "hook",
        "claude-code",
        "--store",
        "STORE",
        "--kept-from",
        "transcript",
        "--tools",
        "zz",
    ];
    let (code, _, stderr) = same_on_both_paths(&args, &path, Some(payload.as_bytes()));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("dropped-unevaluable-record"), "{stderr}");
}

/// A line longer than the lean loader's read size is read whole: two records run
/// together on one line (no line end between them) are an error on the exact path, and
/// a file cut between them must not read as two good lines.
#[test]
fn a_line_longer_than_a_chunk_is_never_cut_in_two() {
    let scratch = Scratch::new();
    // The lean loader reads 256 KiB at a time: the first record fills the first read.
    let read = 1 << 18;
    let head = r#"{"id":"big","seq":1,"kind":"chatter","text":""#;
    let first = format!("{head}{}\"}}", "x".repeat(read - head.len() - 2));
    assert_eq!(first.len(), read);
    let (rest, _) = chatter(1_100_000);
    // The chatter's ids and seqs start at 1: the first two lines are renamed.
    let rest = rest.replacen("\"c1\",\"seq\":1,", "\"d1\",\"seq\":1000001,", 1);
    for second in [
        r#"{"id":"r2","seq":1000002,"kind":"chatter"}"#,
        r#"{"id":"p2","seq":1000002,"kind":"policy","scope":"pay","predicate":{"field":"amount","op":"gt","value":1},"effect":"deny"}"#,
    ] {
        let text = format!("{first}{second}\n{rest}");
        let path = scratch.file("store.jsonl", text.as_bytes());
        let action = r#"{"tool":"pay","params":{"amount":500}}"#;
        for args in [
            &["check", "STORE", "--kept", "c2", "--action", action][..],
            &["check", "--precheck", "STORE", "--kept", "c2"],
            &["pin", "STORE"],
        ] {
            let (code, _, stderr) = same_on_both_paths(args, &path, None);
            assert_eq!(code, 2, "{args:?}");
            assert!(stderr.contains("trailing characters"), "{stderr}");
        }
        // The hook too (which reads the store for the payload's call).
        let payload = claude_payload("pay", r#"{"amount":500}"#);
        let (code, _, _) = same_on_both_paths(
            &["hook", "claude-code", "--store", "STORE", "--kept", "c2"],
            &path,
            Some(payload.as_bytes()),
        );
        assert_eq!(code, 2);
    }
}

/// Odd but valid record lines, together in one large store: escapes in keys, ids, kinds
/// and tool names, duplicate-free objects of many keys, numbers written in other forms
/// (`-0`, `1e2`, `1.0`, long decimals, big integers in `meta`), unicode, unknown keys on
/// chatter, kinds that differ from the evaluable ones by case or a letter, CRLF line
/// ends and blank lines of tabs. Every command reads them as the exact loader does.
#[test]
fn odd_but_valid_lines_read_as_on_the_exact_path() {
    let scratch = Scratch::new();
    let lines = [
        r#"{"\u0069d":"k1","seq":SEQ,"kind":"chatter","text":"escaped key"}"#,
        r#"{"id":"k\u0032","seq":SEQ,"kind":"chatter","text":"escaped id"}"#,
        r#"{"id":"k3","seq":SEQ,"kind":"\u0063hatter","text":"escaped kind","zeta":[1,{"a":null}]}"#,
        r#"{"id":"k4","seq":SEQ,"kind":"chatter","text":"a\/b \ud83d\ude00 \u00e9\t","tokens":0}"#,
        r#"{"id":"k5","seq":SEQ,"kind":"chatter","meta":{"n":123456789012345678901234567890,"m":-0,"x":1e-400}}"#,
        "{\"id\":\"k6\",\"seq\":SEQ,\"kind\":\"chatter\",\"text\":\"crlf\"}\r",
        " \t\r",
        r#"{"id":"f1","seq":SEQ,"kind":"fact","field":"limit","value":1e2}"#,
        r#"{"id":"f2","seq":SEQ,"kind":"fact","field":"l\u0069mit","value":100.0,"supersedes":"f\u0031"}"#,
        r#"{"id":"f3","seq":SEQ,"kind":"fact","field":"region","value":-0,"meta":{"k":[1.50,2]}}"#,
        r#"{"id":"p1","seq":SEQ,"kind":"policy","scope":"p\u0061y","predicate":{"field":"amount","op":"gt","value":"limit"},"effect":"deny","depends_on":["f2"]}"#,
        r#"{"id":"p2","seq":SEQ,"kind":"policy","scope":["zz","pa*"],"predicate":{"any":[{"field":"amount","op":"gte","value":0.000000000000000000001},{"not":{"field":"region","op":"eq","value":0}}]},"effect":"require_approval"}"#,
        r#"{"id":"p3","seq":SEQ,"kind":"policy","scope":"réfund","predicate":{"field":"amount","op":"in","value":[1,2.0,3e0]},"effect":"deny"}"#,
        r#"{"id":"p4","seq":SEQ,"kind":"policy","scope":"pay","predicate":{"field":"amount","op":"lt","value":-1},"effect":"allow","supersedes":"p1"}"#,
        r#"{"id":"e1","seq":SEQ,"kind":"effect","tool":"pay","match":{"amount":5.0}}"#,
        r#"{"id":"e2","seq":SEQ,"kind":"effect","tool":"r\u00e9fund","match":{}}"#,
        r#"{"id":"u1","seq":SEQ,"kind":"Policy","scope":"pay","text":"a misspelt kind"}"#,
        r#"{"id":"u2","seq":SEQ,"kind":"summary","text":"earlier work","tokens":3}"#,
        r#"{"id":"u3","seq":SEQ,"kind":"polcy","text":"another misspelt kind"}"#,
    ];
    let text = store(&lines);
    let path = scratch.file("store.jsonl", text.as_bytes());
    let pay = r#"{"tool":"pay","params":{"amount":500,"region":"eu"}}"#;
    let refund = r#"{"tool":"réfund","params":{"amount":2}}"#;
    for kept in [
        "c1,k1,k2,f1,f2,p1,e1",
        "c1,k3,k5,f3,p2,p4,u1,u2,u3",
        "k\u{32},k4,k6,p3,e2",
    ] {
        for args in [
            &[
                "check", "STORE", "--kept", kept, "--action", pay, "--format", "json",
            ][..],
            &["check", "STORE", "--kept", kept, "--action", refund],
            &[
                "check",
                "--precheck",
                "STORE",
                "--kept",
                kept,
                "--format",
                "json",
            ],
        ] {
            let (_, stdout, stderr) = same_on_both_paths(args, &path, None);
            assert!(!stderr.contains("invalid-input"), "{args:?}: {stderr}");
            assert!(!stdout.is_empty());
        }
    }
    for args in [
        &["pin", "STORE", "--format", "json"][..],
        &[
            "pin", "STORE", "--tools", "pay", "--budget", "40", "--format", "json",
        ],
        &[
            "check",
            "STORE",
            "--retention",
            "head_tail:3",
            "--action",
            pay,
        ],
    ] {
        let (_, _, stderr) = same_on_both_paths(args, &path, None);
        assert!(!stderr.contains("invalid-input"), "{args:?}: {stderr}");
    }
    let payload = claude_payload("pay", r#"{"amount":500}"#);
    let (code, _, _) = same_on_both_paths(
        &[
            "hook",
            "claude-code",
            "--store",
            "STORE",
            "--kept",
            "c1,f1,e1",
        ],
        &path,
        Some(payload.as_bytes()),
    );
    assert_eq!(code, 2);
}

/// Odd lines the exact loader refuses (a duplicate key, at the top or nested, also spelt
/// with an escape; a lone surrogate; a number no decimal holds; a `seq` written as a
/// float; a kind spelt with an escape that makes it a rule without its keys): each store
/// is refused with the exact loader's error, never read leniently.
#[test]
fn odd_invalid_lines_are_the_exact_paths_errors() {
    let scratch = Scratch::new();
    let action = r#"{"tool":"refund","params":{"amount":1}}"#;
    for line in [
        r#"{"id":"x","seq":SEQ,"kind":"chatter","text":"a","\u0074ext":"b"}"#,
        r#"{"id":"x","seq":SEQ,"kind":"chatter","meta":{"a":1,"\u0061":2}}"#,
        r#"{"id":"x","seq":SEQ,"kind":"chatter","text":"\ud800"}"#,
        r#"{"id":"x","seq":SEQ,"kind":"effect","tool":"pay","match":{"a":1e99999999999999999999}}"#,
        r#"{"id":"x","seq":SEQ.0,"kind":"chatter"}"#,
        r#"{"id":"x","seq":SEQ,"kind":"p\u006flicy","text":"no scope"}"#,
        r#"{"id":"x","seq":SEQ,"kind":"policy","scope":"zz","predicate":{"field":"a","op":"eq","value":1,"value":2},"effect":"deny"}"#,
    ] {
        let path = scratch.file("store.jsonl", store(&[line]).as_bytes());
        let args = ["check", "STORE", "--kept", "c1", "--action", action];
        let (code, _, stderr) = same_on_both_paths(&args, &path, None);
        assert_eq!(code, 2, "{line}: {stderr}");
    }
}

/// Large documents with odd top-level layout (keys before and after `records`, a key
/// given twice across the two, a key spelt with an escape, unknown keys, `meta`, CRLF,
/// text that looks like the end of `records`, no whitespace at all) read as the exact
/// loader reads them.
#[test]
fn odd_document_layouts_read_as_on_the_exact_path() {
    let scratch = Scratch::new();
    let (chatter, seq) = chatter(1_100_000);
    let mut records: Vec<String> = chatter.lines().map(str::to_string).collect();
    records.push(format!(
        r#"{{"id":"p0","seq":{seq},"kind":"policy","scope":"pay","predicate":{{"field":"amount","op":"gt","value":1}},"effect":"deny"}}"#
    ));
    records.push(format!(
        r#"{{"id":"z","seq":{},"kind":"chatter","text":"}}],\"kept\":[\"c1\"],\"action\":{{}}}}"}}"#,
        seq + 1
    ));
    let body = |sep: &str| format!("\"records\":[{}]", records.join(sep));
    let kept = r#""kept":["c1","z"]"#;
    let kept_all = r#""kept":["c1","z","p0"]"#;
    let action = r#""action":{"tool":"pay","params":{"amount":500}}"#;
    let lines = body(",\n");
    // Each document, and the exit code of its check: BLOCK (p0 dropped), or ERROR.
    for (doc, want) in [
        (format!("{{{lines},{kept},{action}}}"), 1),
        (format!("{{{kept},{action},{lines}}}"), 1),
        (format!("{{{kept_all},{lines},{kept},{action}}}"), 2),
        (
            format!("{{{lines},\"\\u006bept\":[\"c1\",\"p0\"],{kept},{action}}}"),
            2,
        ),
        (
            format!("{{\"meta\":{{\"a\":[1,2]}},{lines},{kept},{action},\"extra\":1}}"),
            2,
        ),
        (
            format!("{{\"meta\":{{\"a\":[1,2]}},{lines},{kept},{action}}}"),
            1,
        ),
        (format!("{{{},{kept},{action}}}\r\n", body(",\r\n")), 1),
        (format!("{{{},{kept},{action}}}", body(",")), 1),
        (format!("{{{lines},{kept},{action}}} {{}}"), 2),
    ] {
        let path = scratch.file("store.json", doc.as_bytes());
        let (code, _, _) = same_on_both_paths(&["check", "STORE", "--format", "json"], &path, None);
        assert_eq!(code, want, "{}", &doc[doc.len() - 120..]);
        same_on_both_paths(&["check", "--precheck", "STORE"], &path, None);
        same_on_both_paths(&["pin", "STORE", "--tools", "pay"], &path, None);
    }
}
