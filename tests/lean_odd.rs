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
