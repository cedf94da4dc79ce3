//! Paths that once talked the gate into PASS (or into judging less than it was given):
//! kept ids that were trimmed, standard input read twice, whitespace JSON does not have,
//! exponents the documentation promised, a report that grew with the square of its
//! input, and a hook reason whose binding rule fell under "more". Each store is inline.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use omission_gate::{Action, CheckOptions, Format, Retention};

mod common;

use common::{Run, Scratch, run};

/// A refund of 8,400: over the 5,000 a deny policy `p` allows.
const REFUND: &str = r#"{"tool":"refunds.create","params":{"amount":8400}}"#;

const POLICY_P: &str = r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"amount","op":"gt","value":5000},"effect":"deny","text":"Refunds over 5,000 are denied."}"#;

/// JSON Lines: the policy `p` and a chatter record with id `chatter_id`.
fn policy_and_chatter(chatter_id: &str) -> String {
    let chatter = serde_json::json!({"id": chatter_id, "seq": 2, "kind": "chatter"});
    format!("{POLICY_P}\n{chatter}\n")
}

fn check(args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    run(&all, stdin)
}

/// The Claude Code hook's answer to a pre-tool `payload`, over `store` with `--kept kept`.
fn claude_hook(store: &str, kept: &str, payload: &str) -> Run {
    let args = ["hook", "claude-code", "--store", store, "--kept", kept];
    run(&args, Some(payload.as_bytes()))
}

/// The Claude Code hook over `store` (kept `c`) with `--tools tools` denies `payload` as
/// invalid input that `says` so.
fn assert_tools_refused(store: &str, tools: &str, payload: &str, says: &str) {
    let args = [
        "hook",
        "claude-code",
        "--store",
        store,
        "--kept",
        "c",
        "--tools",
        tools,
    ];
    let out = run(&args, Some(payload.as_bytes()));
    assert_eq!(out.code, 2, "{store} {tools:?}: {}", out.stderr);
    assert!(
        out.stderr.contains("ERROR (invalid-input)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(says), "{}", out.stderr);
}

/// A call of `Bash` under Claude Code's hook.
const BASH_CALL: &str =
    r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;

/// Kept chatter `c` and a dropped summary that binds every call: as JSON Lines, small
/// and past the lean loader's threshold, in `dir`.
fn summary_stores(dir: &Scratch) -> [String; 2] {
    let lines = format!("{SUMMARY_CHATTER}\n{SUMMARY}\n");
    let small = dir.file("s.jsonl", lines.as_bytes());
    let large = dir.file("big.jsonl", format!("{lines}{}", padding(3)).as_bytes());
    [small, large]
}

/// The records of [`summary_stores`] as documents (kept `c`) whose `tools` is `tools`,
/// small and large, in `dir`: each with its file name.
fn summary_docs(dir: &Scratch, tools: &str) -> [(&'static str, String); 2] {
    let records = format!("{SUMMARY_CHATTER},{SUMMARY}");
    let big_records = format!("{records},{}", padding(3).trim_end().replace('\n', ","));
    [("doc.json", records), ("bigdoc.json", big_records)].map(|(name, records)| {
        let doc = format!(r#"{{"records":[{records}],"kept":["c"],"tools":{tools}}}"#);
        (name, dir.file(name, doc.as_bytes()))
    })
}

const SUMMARY: &str = r#"{"id":"s","seq":2,"kind":"summary","text":"never delete the backups"}"#;
const SUMMARY_CHATTER: &str = r#"{"id":"c","seq":1,"kind":"chatter","text":"hello"}"#;

/// Padding chatter that takes a store past the 1 MiB from which the CLI reads it with
/// the lean loader.
fn padding(from_seq: u64) -> String {
    let words = "padding ".repeat(50);
    (0..2800)
        .map(|i| {
            format!(
                "{{\"id\":\"pad{i}\",\"seq\":{},\"kind\":\"chatter\",\"text\":\"{words}\"}}\n",
                from_seq + i
            )
        })
        .collect()
}

const WHITESPACE: [&str; 6] = ["\u{a0}", " ", "\t", "\u{3000}", "\u{2003}", "\u{feff}"];

#[test]
fn kept_ids_are_matched_exactly_never_trimmed() {
    let dir = Scratch::new();
    for (i, ws) in WHITESPACE.iter().enumerate() {
        for id in [format!("p{ws}"), format!("{ws}p")] {
            let store = dir.file(&format!("s{i}.jsonl"), policy_and_chatter(&id).as_bytes());
            // Inline, and as the one line of a file (LF and CRLF): the compactor kept the
            // chatter, not the policy, so the refund is blocked.
            let file = dir.file(&format!("k{i}.txt"), format!("{id}\n").as_bytes());
            let crlf = dir.file(&format!("k{i}.crlf"), format!("{id}\r\n").as_bytes());
            for kept in [id.clone(), format!("@{file}"), format!("@{crlf}")] {
                let out = check(&[&store, "--kept", &kept, "--action", REFUND], None);
                assert_eq!(out.code, 1, "{id:?} via {kept:?}: {}", out.stdout);
                assert!(
                    out.stdout.contains("2 records, 1 kept, 1 dropped"),
                    "{}",
                    out.stdout
                );
                assert!(out.stdout.contains("dropped policy 'p'"), "{}", out.stdout);
            }
        }
    }
}

#[test]
fn a_kept_id_that_names_no_record_is_refused_with_the_id_it_nearly_names() {
    let dir = Scratch::new();
    let two = format!(
        "{POLICY_P}\n{}\n",
        r#"{"id":"f_002","seq":2,"kind":"chatter"}"#
    );
    let store = dir.file("s.jsonl", two.as_bytes());
    let cases = [
        (
            "p, f_002",
            "kept id ` f_002` names no record (did you mean `f_002`?)",
        ),
        (
            "p\u{a0}",
            "kept id `p\\u{00a0}` names no record (did you mean `p`?)",
        ),
        (
            "\u{feff}p",
            "kept id `\\u{feff}p` names no record (did you mean `p`?)",
        ),
        (
            "f_02",
            "kept id `f_02` names no record (did you mean `f_002`?)",
        ),
        (
            "F_002",
            "kept id `F_002` names no record (did you mean `f_002`?)",
        ),
        ("zzzzzz", "kept id `zzzzzz` names no record"),
    ];
    for (kept, message) in cases {
        let out = check(&[&store, "--kept", kept, "--action", REFUND], None);
        assert_eq!(out.code, 2, "{kept:?}: {}", out.stdout);
        assert!(
            out.stdout.contains("ERROR (invalid-input)"),
            "{}",
            out.stdout
        );
        assert!(out.stderr.contains(message), "{kept:?}: {}", out.stderr);
        assert!(
            !out.stderr.contains("zzzzzz` names no record (did"),
            "{}",
            out.stderr
        );
    }
    // A line of a file is an id as written, spaces and all.
    let file = dir.file("kept.txt", b"p\n f_002\n");
    let out = check(
        &[&store, "--kept", &format!("@{file}"), "--action", REFUND],
        None,
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("(did you mean `f_002`?)"),
        "{}",
        out.stderr
    );
    // `--kept FILE` without `@`: the id is the file's name, and the hint says so.
    let file = dir.file("ids.txt", b"p\n");
    let out = check(&[&store, "--kept", &file, "--action", REFUND], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains(&format!("(did you mean `@{file}`?")),
        "{}",
        out.stderr
    );
}

#[test]
fn kept_ids_are_matched_exactly_on_the_large_input_path() {
    let dir = Scratch::new();
    let store = format!("{}{}", policy_and_chatter("p\u{a0}"), padding(3));
    assert!(store.len() > 1 << 20);
    let store = dir.file("big.jsonl", store.as_bytes());
    let file = dir.file("k.txt", "p\u{a0}\n".as_bytes());
    for kept in ["p\u{a0}".to_string(), format!("@{file}")] {
        let out = check(&[&store, "--kept", &kept, "--action", REFUND], None);
        assert_eq!(out.code, 1, "{kept:?}: {}", out.stdout);
        assert!(
            out.stdout.contains("2802 records, 1 kept, 2801 dropped"),
            "{}",
            out.stdout
        );
    }
    let out = check(&[&store, "--kept", " p", "--action", REFUND], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("(did you mean `p`?)"), "{}", out.stderr);
}

/// An allow rule `a` kept without the rule that revoked it: BLOCK when `a` is kept (a
/// stale permit), PASS when nothing is, which is what an empty second read of standard
/// input would judge.
const STALE_PERMIT: &str = concat!(
    r#"{"id":"a","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"amount","op":"lt","value":10000},"effect":"allow"}"#,
    "\n",
    r#"{"id":"r","seq":2,"kind":"policy","scope":"refunds.create","predicate":{"field":"amount","op":"lt","value":10000},"effect":"deny","supersedes":"a"}"#,
    "\n"
);

#[test]
fn standard_input_is_read_at_most_once() {
    let dir = Scratch::new();
    let store = dir.file("s.jsonl", STALE_PERMIT.as_bytes());
    let kept = dir.file("k.txt", b"a\n");
    // The kept set read properly: BLOCK.
    let out = check(
        &[&store, "--kept", &format!("@{kept}"), "--action", REFUND],
        None,
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    let stdin_store = Some(STALE_PERMIT.as_bytes());
    for (args, names) in [
        (vec!["-", "--kept", "@-"], "--kept `@-`"),
        (vec!["-", "--kept", "@/dev/stdin"], "--kept `@/dev/stdin`"),
        (vec!["-", "--kept", "@/dev/fd/0"], "--kept `@/dev/fd/0`"),
        (
            vec!["-", "--kept", "@/proc/self/fd/0"],
            "--kept `@/proc/self/fd/0`",
        ),
        (vec!["/dev/stdin", "--kept", "@-"], "--kept `@-`"),
    ] {
        let mut args = args.clone();
        args.extend(["--action", REFUND]);
        let out = check(&args, stdin_store);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
        assert!(
            out.stdout.contains("ERROR (invalid-input)"),
            "{}",
            out.stdout
        );
        assert!(
            out.stderr
                .contains(&format!("{names}: names standard input, already read for")),
            "{args:?}: {}",
            out.stderr
        );
    }
    let out = check(&["-", "--kept", "a", "--action", "@-"], stdin_store);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = check(
        &["--precheck", "-", "--kept", "a", "--tools", "@-"],
        stdin_store,
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--tools `@-`"), "{}", out.stderr);
    let out = run(&["pin", "-", "--tools", "@/dev/stdin"], stdin_store);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = run(&["sweep", "-", "-"], stdin_store);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("INPUT `-`: names standard input"),
        "{}",
        out.stderr
    );
    // One name of it is fine, and it is read once however many cells judge it.
    let document =
        br#"{"records":[{"id":"s","seq":1,"kind":"chatter"}],"kept":["s"],"action":{"tool":"t"}}"#;
    let out = run(
        &[
            "sweep",
            "-",
            "--retention",
            "given",
            "--retention",
            "recency:1",
        ],
        Some(document),
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("2 PASS, 0 BLOCK, 0 ERROR"),
        "{}",
        out.stdout
    );
    // The hook's payload is standard input: a store or flag file naming it is refused.
    let payload = r#"{"hook_event_name":"PreToolUse","tool_name":"refunds.create","tool_input":{"amount":8400}}"#;
    for args in [
        vec!["--store", "-"],
        vec!["--store", "/dev/stdin"],
        vec!["--store", &store, "--kept", "@-"],
    ] {
        let mut all = vec!["hook", "claude-code"];
        all.extend(args.iter());
        let out = run(&all, Some(payload.as_bytes()));
        assert_eq!(out.code, 2, "{args:?}");
        assert!(
            out.stderr
                .contains("names standard input, already read for the hook payload"),
            "{args:?}: {}",
            out.stderr
        );
    }
}

#[test]
fn sweep_reads_an_input_on_a_pipe_once_for_every_retention() {
    // bash's `<(...)` names a pipe, which a second read finds empty: a sweep that read
    // each input once per retention judged it under the first retention only, and every
    // other cell was `ERROR invalid-input` (empty input) in place of its verdict.
    let dir = Scratch::new();
    let document = dir.file(
        "doc.json",
        &common::doc(
            &[
                r#"{"id":"p","seq":1,"kind":"policy","scope":"t","predicate":{"field":"amount","op":"gt","value":5000},"effect":"deny","text":"no refund over 5000"}"#,
                r#"{"id":"c","seq":2,"kind":"chatter"}"#,
            ],
            &["p", "c"],
            r#"{"tool":"t","params":{"amount":8400}}"#,
        )
        .into_bytes(),
    );
    let args = [
        "sweep",
        "--format",
        "tsv",
        common::PIPED,
        "--retention",
        "given",
        "--retention",
        "recency:1",
        "--retention",
        "head_tail:0",
    ];
    let piped = common::run_piped(&args, &document, None);
    let named = run(
        &args.map(|a| if a == common::PIPED { &*document } else { a }),
        None,
    );
    assert_eq!(named.code, 1, "{}{}", named.stdout, named.stderr);
    assert!(
        named.stdout.contains("1 PASS, 2 BLOCK, 0 ERROR"),
        "{}",
        named.stdout
    );
    assert_eq!(piped.code, 1, "{}{}", piped.stdout, piped.stderr);
    assert_eq!(
        piped.stdout.replace(common::PIPED, "IN"),
        named.stdout.replace(&*document, "IN")
    );
    assert_eq!(piped.stderr, "");
}

#[test]
fn a_derivation_note_names_a_few_dropped_inputs_and_counts_the_rest() {
    let mut lines: Vec<String> = (1..=7)
        .map(|i| format!(r#"{{"id":"in{i}","seq":{i},"kind":"chatter"}}"#))
        .collect();
    lines.push(r#"{"id":"d","seq":8,"kind":"fact","field":"tier","value":"gold","depends_on":["in1","in2","in3","in4","in5","in6","in7"]}"#.to_string());
    let dir = Scratch::new();
    let store = dir.file("s.jsonl", lines.join("\n").as_bytes());
    let out = check(
        &[&store, "--kept", "d,in3", "--action", r#"{"tool":"t"}"#],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "kept fact 'd' was derived from dropped 'in1', 'in2', 'in4', 'in5', 'in6' and 1 more: its conclusion can no longer be checked"
        ),
        "{}",
        out.stdout
    );
}

/// 10,000 dropped records and 1,000 kept facts, each derived from 250 of them: one note
/// per kept fact, each a line, so the report grows with the records, not with the kept
/// facts times their inputs (naming every input made a 198 MB report of a 200 MB
/// store). Kept small enough to stay fast; the bound below is what matters.
#[test]
fn derivation_notes_keep_the_report_linear_in_the_store() {
    const DROPPED: usize = 10_000;
    const DERIVED: usize = 1_000;
    const INPUTS: usize = 250;
    let ids: Vec<String> = (0..DROPPED).map(|i| format!("in{i}")).collect();
    let mut records: Vec<serde_json::Value> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| serde_json::json!({"id": id, "seq": i, "kind": "chatter", "tokens": 1}))
        .collect();
    for d in 0..DERIVED {
        let start = d * (DROPPED - INPUTS) / DERIVED;
        records.push(serde_json::json!({
            "id": format!("d{d}"),
            "seq": DROPPED + d,
            "kind": "fact",
            "field": format!("f{d}"),
            "value": d,
            "depends_on": ids[start..start + INPUTS],
            "tokens": 1,
        }));
    }
    let store = serde_json::to_vec(&serde_json::json!({ "records": records })).unwrap();
    let input = omission_gate::load("store.json", &store).unwrap();
    let kept: Vec<String> = (0..DERIVED).map(|d| format!("d{d}")).collect();
    let action = Action::from_json(&serde_json::json!({"tool": "t"})).unwrap();
    let report = omission_gate::check(
        &input,
        Retention::Given,
        Some(&kept),
        &action,
        CheckOptions::default(),
    )
    .unwrap();
    assert_eq!(report.findings.len(), DERIVED);
    let records = DROPPED + DERIVED;
    for format in [Format::Text, Format::Json] {
        let size = report.render(format).len();
        // A few hundred bytes per note (30 per record); naming every input would be
        // about 2.5 KB per note (250 per record).
        assert!(
            size < 60 * records,
            "{format:?}: {size} bytes for {records} records"
        );
    }
    assert!(
        report.findings[0]
            .message
            .ends_with("and 245 more: its conclusion can no longer be checked")
    );
}

#[test]
fn whitespace_json_does_not_have_is_refused_on_every_path() {
    let dir = Scratch::new();
    let chatter = r#"{"id":"a","seq":1,"kind":"chatter"}"#;
    let document = format!(r#"{{"records":[{chatter}],"kept":["a"],"action":{{"tool":"t"}}}}"#);
    let action = r#"{"tool":"t"}"#;
    let cases: Vec<(String, Vec<String>)> = vec![
        (format!("{document}\u{c}"), vec![]),
        (format!("{document}\n\u{c}\n"), vec![]),
        (
            format!("{chatter}\n\u{c}\n"),
            vec!["--kept".into(), "a".into()],
        ),
        (
            format!("{chatter}\u{c}\n"),
            vec!["--kept".into(), "a".into()],
        ),
        (
            format!("{chatter}\n\u{b}\n"),
            vec!["--kept".into(), "a".into()],
        ),
        (
            format!("{chatter}\n{}\u{c}\n", padding(2)),
            vec!["--kept".into(), "a".into()],
        ),
        (
            format!("{chatter}\n{}\u{c}", padding(2)),
            vec!["--kept".into(), "a".into()],
        ),
    ];
    for (i, (text, flags)) in cases.iter().enumerate() {
        let path = dir.file(&format!("in{i}"), text.as_bytes());
        let mut args: Vec<&str> = vec![&path, "--action", action];
        args.extend(flags.iter().map(String::as_str));
        let out = check(&args, None);
        assert_eq!(out.code, 2, "case {i}: {}", out.stdout);
        assert!(out.stdout.contains("ERROR (invalid-input)"), "case {i}");
        if text.len() > 1 << 20 {
            continue;
        }
        // The hook reads the same store the same way: it denies.
        let payload = r#"{"hook_event_name":"PreToolUse","tool_name":"t","tool_input":{}}"#;
        let mut hook = vec!["hook", "claude-code", "--store", &path];
        hook.extend(flags.iter().map(String::as_str));
        let out = run(&hook, Some(payload.as_bytes()));
        assert_eq!(out.code, 2, "hook, case {i}");
        assert!(
            out.stderr.contains("ERROR (invalid-input)"),
            "hook, case {i}: {}",
            out.stderr
        );
    }
    // Flag files: a kept line holding a form feed is an id (naming no record), an
    // action or a JSON kept list followed by one is not JSON.
    let store = dir.file("s.jsonl", chatter.as_bytes());
    for (name, content, flag) in [
        ("kept.txt", "a\n\u{c}\n", "--kept"),
        ("kept.json", "[\"a\"]\u{c}", "--kept"),
        ("action.json", "{\"tool\":\"t\"}\u{c}", "--action"),
    ] {
        let file = format!("@{}", dir.file(name, content.as_bytes()));
        let mut args = vec![store.as_str(), "--kept", "a", "--action", action];
        let at = if flag == "--kept" { 2 } else { 4 };
        args[at] = &file;
        let out = check(&args, None);
        assert_eq!(out.code, 2, "{name}: {}", out.stdout);
    }
}

#[test]
fn exponents_up_to_two_to_the_sixty_are_compared_however_they_are_spelt() {
    let dir = Scratch::new();
    let store = |limit: &str| {
        format!(
            r#"{{"records":[{{"id":"p","seq":1,"kind":"policy","scope":"t","predicate":{{"field":"amount","op":"lt","value":{limit}}},"effect":"deny"}}],"kept":[]}}"#
        )
    };
    // 10^18 and 2^60 have 19 digits; leading zeros count for nothing.
    for (i, limit) in [
        "1e1000000000000000000",
        "1e1152921504606846976",
        "1e+0000000000000000000005",
        "1E0000000000000000000000000000001152921504606846976",
    ]
    .iter()
    .enumerate()
    {
        let path = dir.file(&format!("ok{i}.json"), store(limit).as_bytes());
        let out = check(
            &[
                &path,
                "--action",
                r#"{"tool":"t","params":{"amount":8400}}"#,
            ],
            None,
        );
        assert_eq!(out.code, 1, "{limit}: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("dropped-binding-constraint"), "{limit}");
    }
    for (i, limit) in [
        "1e1152921504606846977",
        "1e-00000000000000000000001152921504606846977",
    ]
    .iter()
    .enumerate()
    {
        let path = dir.file(&format!("beyond{i}.json"), store(limit).as_bytes());
        let out = check(
            &[&path, "--action", r#"{"tool":"t","params":{"amount":1}}"#],
            None,
        );
        assert_eq!(out.code, 2, "{limit}: {}", out.stdout);
        assert!(
            out.stderr
                .contains("the gate compares exponents from -2^60 to 2^60"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn the_hook_reason_shows_the_rule_that_binds_this_call_before_dropped_summaries() {
    let dir = Scratch::new();
    let mut lines: Vec<String> = (1..=12)
        .map(|i| {
            format!(r#"{{"id":"sum{i}","seq":{i},"kind":"summary","text":"earlier turns {i}"}}"#)
        })
        .collect();
    lines.push(POLICY_P.replace(r#""seq":1"#, r#""seq":20"#));
    lines.push(r#"{"id":"c","seq":21,"kind":"chatter"}"#.to_string());
    let store = dir.file("s.jsonl", lines.join("\n").as_bytes());
    let payload = r#"{"hook_event_name":"PreToolUse","tool_name":"refunds.create","tool_input":{"amount":8400}}"#;
    let out = claude_hook(&store, "c", payload);
    assert_eq!(out.code, 2);
    let reasons: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("reason    :"))
        .collect();
    assert_eq!(reasons.len(), 8, "{}", out.stderr);
    assert!(
        reasons[0].starts_with("reason    : dropped-binding-constraint: dropped policy 'p'"),
        "{}",
        out.stderr
    );
    assert!(
        reasons[1].contains("dropped-unevaluable-record"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("more      : 5 more findings"),
        "{}",
        out.stderr
    );
    // The rule's own text comes back with it.
    assert!(
        out.stderr.contains("Refunds over 5,000 are denied."),
        "{}",
        out.stderr
    );
}

/// A store over the large-input size whose deny rule comes first, padded so that a line
/// starts exactly 256 KiB in (where a read of the input's first bytes would stop).
fn rule_first_store() -> String {
    let mut out = String::from(
        r#"{"id":"deny-big","seq":1,"kind":"policy","scope":"pay","predicate":{"field":"amount","op":"gt","value":5},"effect":"deny","text":"No payments over 5."}"#,
    );
    out.push('\n');
    let mut seq = 2;
    while out.len() < 1_300_000 {
        let line = format!(r#"{{"id":"c{seq}","seq":{seq},"kind":"chatter","text":"x"}}"#);
        // Pad the line before the 256 KiB mark so that the next one starts on it.
        let left = (1 << 18) - out.len() as i64;
        let line = if left > 0 && left < line.len() as i64 + 60 {
            let pad = "y".repeat((left - line.len() as i64 - 1).max(0) as usize);
            line.replace("\"x\"", &format!("\"x{pad}\""))
        } else {
            line
        };
        out.push_str(&line);
        out.push('\n');
        seq += 1;
    }
    out
}

#[test]
fn a_retention_on_a_piped_input_reads_every_record() {
    // Read from a pipe, the input must be read once and whole: a look at its first bytes
    // to guess the kept ids took them from the exact loader, which then judged a store
    // without its first rule, and PASSed.
    let scratch = Scratch::new();
    let text = rule_first_store();
    let path = scratch.file("big.jsonl", text.as_bytes());
    let action = r#"{"tool":"pay","params":{"amount":10}}"#;
    for retention in ["recency:2", "head_tail:1"] {
        let args = |input: &str| {
            vec![
                input.to_string(),
                "--retention".to_string(),
                retention.to_string(),
                "--action".to_string(),
                action.to_string(),
            ]
        };
        let from_file = check(
            &args(&path).iter().map(String::as_str).collect::<Vec<_>>(),
            None,
        );
        assert_eq!(
            from_file.code,
            if retention == "recency:2" { 1 } else { 0 },
            "{}",
            from_file.stdout
        );
        for piped in ["/dev/stdin", "-"] {
            let out = check(
                &args(piped).iter().map(String::as_str).collect::<Vec<_>>(),
                Some(text.as_bytes()),
            );
            assert_eq!(
                (out.code, out.verdict_line()),
                (from_file.code, from_file.verdict_line()),
                "{retention} {piped}: {}{}",
                out.stdout,
                out.stderr
            );
        }
    }
}

/// serde_json hands its own numbers to a parser as an object of one private key. An
/// object the input spells with that key is an object: the amount the tool receives is
/// `{"$serde_json::private::Number":"1"}`, not the number 1, so `amount gt 5000` cannot
/// be decided (ERROR), never PASS. The same on every path: the exact loader, the lean
/// one, the hook's payload, and a fact's value in the store.
#[test]
fn an_object_spelt_like_a_number_is_judged_as_the_object_it_is() {
    let dir = Scratch::new();
    let fake = r#"{"$serde_json::private::Number":"1"}"#;
    let action = format!(r#"{{"tool":"refunds.create","params":{{"amount":{fake}}}}}"#);
    let small = dir.file("s.jsonl", policy_and_chatter("c").as_bytes());
    let large = format!("{}{}", policy_and_chatter("c"), padding(3));
    let large = dir.file("big.jsonl", large.as_bytes());
    for store in [&small, &large] {
        let out = check(&[store, "--kept", "c", "--action", &action], None);
        assert_eq!(out.code, 2, "{store}: {}", out.stdout);
        assert!(
            out.verdict_line().contains("ERROR (type-mismatch)"),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout
                .contains(r#""amount":{"$serde_json::private::Number":"1"}"#),
            "the report shows the call as sent: {}",
            out.stdout
        );
    }
    let payload = format!(
        r#"{{"hook_event_name":"PreToolUse","tool_name":"refunds.create","tool_input":{{"amount":{fake}}}}}"#
    );
    let out = claude_hook(&small, "c", &payload);
    assert_eq!(out.code, 2, "hook: {} {}", out.stdout, out.stderr);
    assert!(out.stderr.contains("type-mismatch"), "{}", out.stderr);
    // A fact whose value is such an object: the rule reads an object, not 1.
    let fact = format!(
        "{POLICY_P}\n{{\"id\":\"f\",\"seq\":2,\"kind\":\"fact\",\"field\":\"amount\",\"value\":{fake}}}\n"
    );
    let store = dir.file("fact.jsonl", fact.as_bytes());
    let out = check(
        &[
            &store,
            "--kept",
            "f",
            "--action",
            r#"{"tool":"refunds.create"}"#,
        ],
        None,
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.verdict_line().contains("ERROR (type-mismatch)"));
}

/// Precheck and pin judge the calls of the tools they are given. A list that names none
/// (`--tools "$TOOLS"` with the variable unset, an empty file, `[]`, a document's
/// `"tools": []`) made them judge no call: precheck passed a compaction that dropped the
/// deny rule, and pin pinned nothing. It is refused, on both loaders; without the flag
/// every tool a rule names is judged.
#[test]
fn a_tool_list_that_names_no_tool_is_refused_by_precheck_and_pin() {
    let dir = Scratch::new();
    let small = dir.file("s.jsonl", policy_and_chatter("c").as_bytes());
    let large = format!("{}{}", policy_and_chatter("c"), padding(3));
    let large = dir.file("big.jsonl", large.as_bytes());
    let empty = format!("@{}", dir.file("tools.txt", b""));
    for store in [&small, &large] {
        for tools in ["", ",", " ", "[]", empty.as_str()] {
            let out = check(
                &["--precheck", store, "--kept", "c", "--tools", tools],
                None,
            );
            assert_eq!(out.code, 2, "{store} {tools:?}: {}", out.stdout);
            assert!(out.stdout.contains("names no tool"), "{}", out.stdout);
            for budget in [&[][..], &["--budget", "100000"][..]] {
                let mut args = vec!["pin", store.as_str(), "--tools", tools];
                args.extend_from_slice(budget);
                let out = run(&args, None);
                assert_eq!(out.code, 2, "pin {store} {tools:?}: {}", out.stdout);
            }
        }
        // Without --tools, the rule's own tool is judged.
        let out = check(&["--precheck", store, "--kept", "c"], None);
        assert_eq!(out.code, 1, "{}", out.stdout);
    }
    let doc = format!(r#"{{"records":[{POLICY_P}],"kept":[],"tools":[]}}"#);
    let doc = dir.file("doc.json", doc.as_bytes());
    let out = check(&["--precheck", &doc], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stdout.contains("key `tools`: names no tool"),
        "{}",
        out.stdout
    );
    let out = run(&["sweep", "--precheck", "--tools", "", &doc], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
}

/// The hook guards the calls of its tools (and of any tool a rule names). A list that
/// names none (`--tools "$TOOLS"` with the variable unset, `[]`, a store's
/// `"tools": []`) guarded only the tools a rule names: a call of any other tool passed
/// although a dropped summary binds every call. It is refused (the hook denies), on both
/// loaders and on the PreCompact hook; without the flag every tool is guarded.
#[test]
fn a_tool_list_that_names_no_tool_is_refused_by_the_hook() {
    let dir = Scratch::new();
    let payload = BASH_CALL;
    let empty = format!("@{}", dir.file("tools.txt", b""));
    let stores = summary_stores(&dir);
    for store in &stores {
        // Without --tools, the dropped summary binds the call.
        let out = claude_hook(store, "c", payload);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains("BLOCK (dropped-unevaluable-record)"));
        for tools in ["", ",", "[]", empty.as_str()] {
            assert_tools_refused(store, tools, payload, "names no tool");
        }
        let pre = r#"{"hook_event_name":"PreCompact","trigger":"manual"}"#;
        let args = [
            "hook",
            "claude-code-precompact",
            "--store",
            store,
            "--tools",
            "",
        ];
        let out = run(&args, Some(pre.as_bytes()));
        assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("names no tool"), "{}", out.stderr);
    }
    // A store whose own `tools` names none, small or past the lean loader's threshold.
    for (name, doc) in summary_docs(&dir, "[]") {
        let out = run(
            &["hook", "claude-code", "--store", &doc],
            Some(payload.as_bytes()),
        );
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        assert!(
            out.stderr.contains("ERROR (invalid-input)"),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("key `tools`: names no tool"),
            "{}",
            out.stderr
        );
        // validate refuses it as precheck and pin do.
        let out = run(&["validate", &doc], None);
        assert_eq!(out.code, 2, "{name}: {}", out.stdout);
        assert!(out.stderr.contains("names no tool"), "{}", out.stderr);
    }
    let out = run(&["validate", &stores[0], "--tools", ""], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
}

/// A tool name that is blank or has white space at an end names no tool a harness calls.
/// In a hook's `--tools` (`[" "]`, `[" ", "Bash"]`) or a store's `tools`, the hook guarded
/// only the tools a rule names and passed every other call that a dropped summary binds;
/// in a policy's scope or an effect's tool, the record bound no call and the call passed.
/// Each is refused (the hook denies, check is ERROR), on both loaders.
#[test]
fn a_blank_or_padded_tool_name_is_refused() {
    let dir = Scratch::new();
    for store in &summary_stores(&dir) {
        for tools in [r#"[" "]"#, r#"[" ", "Bash"]"#, r#"["Read "]"#, "[\"\\t\"]"] {
            assert_tools_refused(store, tools, BASH_CALL, "has white space at an end");
        }
    }
    for (name, doc) in summary_docs(&dir, r#"[" "]"#) {
        let out = run(
            &["hook", "claude-code", "--store", &doc],
            Some(BASH_CALL.as_bytes()),
        );
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        assert!(
            out.stderr.contains("key `tools`: tool ` ` has white space"),
            "{}",
            out.stderr
        );
    }
    // A rule or an effect on a padded name bound no call: `check` passed.
    let rules = [
        r#"{"id":"p","seq":1,"kind":"policy","scope":" deploy","predicate":{"all":[]},"effect":"deny","text":"never deploy on a friday afternoon"}"#,
        r#"{"id":"p","seq":1,"kind":"policy","scope":["deploy","\t"],"predicate":{"all":[]},"effect":"deny","text":"never deploy on a friday afternoon"}"#,
        r#"{"id":"e","seq":1,"kind":"effect","tool":"deploy ","match":{},"text":"the deploy already ran this morning"}"#,
    ];
    // A control character in the name, likewise.
    let controls = [
        r#"{"id":"p","seq":1,"kind":"policy","scope":"deploy\u0000","predicate":{"all":[]},"effect":"deny","text":"never deploy on a friday afternoon"}"#,
        r#"{"id":"e","seq":1,"kind":"effect","tool":"de\u001bploy","match":{},"text":"the deploy already ran this morning"}"#,
    ];
    for (i, rule) in rules.iter().chain(&controls).enumerate() {
        let small = dir.file(&format!("r{i}.jsonl"), format!("{rule}\n").as_bytes());
        let large = dir.file(
            &format!("rbig{i}.jsonl"),
            format!("{rule}\n{}", padding(3)).as_bytes(),
        );
        for store in [&small, &large] {
            let args = [
                "check",
                store,
                "--action",
                r#"{"tool":"deploy"}"#,
                "--kept",
                "[]",
            ];
            let out = run(&args, None);
            assert_eq!(out.code, 2, "{rule}: {}", out.stdout);
            assert!(
                out.stdout.contains("with white space at an end"),
                "{}",
                out.stdout
            );
        }
    }
    // A call of a tool whose name has a control character (`check` takes the action as
    // given, where the hook refuses the payload's): no rule for `deploy` bound it, and it
    // passed.
    let rule = rules[0].replace("\" deploy\"", "\"deploy\"");
    let store = dir.file("deploy.jsonl", format!("{rule}\n").as_bytes());
    for tool in ["deploy\\u0000", "deploy\\n", "de\\u007fploy"] {
        let action = format!(r#"{{"tool":"{tool}"}}"#);
        let out = run(
            &["check", &store, "--action", &action, "--kept", "[]"],
            None,
        );
        assert_eq!(out.code, 2, "{tool}: {}", out.stdout);
        assert!(
            out.stdout
                .contains("has white space at an end or a control character"),
            "{}",
            out.stdout
        );
    }
}

/// A plain `--kept` list that names no id (`--kept "$KEPT"` with the variable unset, an
/// empty or blank file) was read as keeping nothing. The compactor kept the allow rule and
/// the fact it reads, and dropped the newer fact that retracts it: the agent acts on a
/// stale permit, which `--kept f1,p2` blocks, but `--kept ""` judged a compaction with
/// nothing in view and passed. It is refused, on both loaders, in validate and the hook;
/// `[]` says that nothing was kept, and `pin --format ids` writes it.
#[test]
fn a_kept_list_that_names_no_id_is_refused() {
    let dir = Scratch::new();
    let permit = [
        r#"{"id":"f1","seq":1,"kind":"fact","field":"tier","value":"gold"}"#,
        r#"{"id":"p2","seq":2,"kind":"policy","scope":"refunds.create","effect":"allow","predicate":{"field":"tier","op":"eq","value":"gold"}}"#,
        r#"{"id":"f3","seq":3,"kind":"fact","field":"tier","value":"suspended","supersedes":"f1"}"#,
    ]
    .map(|r| format!("{r}\n"))
    .concat();
    let small = dir.file("s.jsonl", permit.as_bytes());
    let large = dir.file("big.jsonl", format!("{permit}{}", padding(4)).as_bytes());
    let empty = format!("@{}", dir.file("empty.txt", b""));
    let blank = format!("@{}", dir.file("blank.txt", b"\n\r\n"));
    let action = r#"{"tool":"refunds.create","params":{"amount":10}}"#;
    let payload = r#"{"hook_event_name":"PreToolUse","tool_name":"refunds.create","tool_input":{"amount":10}}"#;
    for store in [&small, &large] {
        let out = check(&[store, "--action", action, "--kept", "f1,p2"], None);
        assert_eq!(out.code, 1, "{}", out.stdout);
        assert!(out.stdout.contains("dropped-superseder-stale-permit"));
        for kept in ["", ",", empty.as_str(), blank.as_str()] {
            let out = check(&[store, "--action", action, "--kept", kept], None);
            assert_eq!(out.code, 2, "{store} {kept:?}: {}", out.stdout);
            assert!(out.stdout.contains("names no record id"), "{}", out.stdout);
            let out = check(&["--precheck", store, "--kept", kept], None);
            assert_eq!(out.code, 2, "precheck {store} {kept:?}: {}", out.stdout);
            let out = claude_hook(store, kept, payload);
            assert_eq!(out.code, 2, "hook {store} {kept:?}: {}", out.stderr);
            assert!(
                out.stderr.contains("ERROR (invalid-input)"),
                "{}",
                out.stderr
            );
            let out = run(&["validate", store, "--kept", kept], None);
            assert_eq!(out.code, 2, "validate {store} {kept:?}: {}", out.stdout);
        }
        // `[]` keeps nothing, as said.
        let out = check(&[store, "--action", action, "--kept", "[]"], None);
        assert!(out.stdout.contains(", 0 kept,"), "{}", out.stdout);
    }
    // Nothing to pin: the ids file says so in a form `--kept @FILE` reads.
    let chatter = dir.file(
        "c.jsonl",
        b"{\"id\":\"c\",\"seq\":1,\"kind\":\"chatter\"}\n",
    );
    let ids = run(&["pin", &chatter, "--format", "ids"], None);
    assert_eq!((ids.code, ids.stdout.as_str()), (0, "[]\n"));
    let kept = format!("@{}", dir.file("kept.txt", ids.stdout.as_bytes()));
    let out = check(&["--precheck", &chatter, "--kept", &kept], None);
    assert_eq!(out.code, 0, "{}", out.stdout);
}

/// An inline `--kept` list is split at commas. Beside records `a` (the deny rule), `b`
/// and `a,b`, a compactor that kept only `a,b` and wrote `--kept a,b` was read as keeping
/// `a` and `b`: the dropped rule judged kept, PASS. Such a list is refused, on both
/// loaders and in the hook; a JSON array says which, and a list that spells no such id
/// across its commas is read as before.
#[test]
fn an_inline_kept_list_that_spells_an_id_across_its_commas_is_refused() {
    let dir = Scratch::new();
    let records = concat!(
        r#"{"id":"a","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"amount","op":"gt","value":5000},"effect":"deny"}"#,
        "\n",
        r#"{"id":"b","seq":2,"kind":"chatter"}"#,
        "\n",
        r#"{"id":"a,b","seq":3,"kind":"chatter"}"#,
        "\n",
    );
    let small = dir.file("s.jsonl", records.as_bytes());
    let large = dir.file("big.jsonl", format!("{records}{}", padding(4)).as_bytes());
    for store in [&small, &large] {
        for kept in ["a,b", "b,a,b", "a,b,b"] {
            let out = check(&[store, "--kept", kept, "--action", REFUND], None);
            assert_eq!(out.code, 2, "{store} {kept}: {}", out.stdout);
            assert!(
                out.stdout.contains("record `a,b` has a comma in its id"),
                "{}",
                out.stdout
            );
        }
        for kept in [r#"["a,b"]"#, "b"] {
            let out = check(&[store, "--kept", kept, "--action", REFUND], None);
            assert_eq!(out.code, 1, "{store} {kept}: {}", out.stdout);
        }
        let out = check(&["--precheck", store, "--kept", "a,b"], None);
        assert_eq!(out.code, 2, "precheck {store}: {}", out.stdout);
    }
    let payload = r#"{"hook_event_name":"PreToolUse","tool_name":"refunds.create","tool_input":{"amount":8400}}"#;
    let out = claude_hook(&small, "a,b", payload);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("has a comma in its id"),
        "{}",
        out.stderr
    );
}

/// Resolution reads a param whose key is the field before a path through nested
/// objects. A call that gave `customer.tier` both ways, a decoy `"customer.tier":
/// "standard"` beside the `"customer": {"tier": "gold"}` the tool reads, was judged on
/// the decoy: PASS past a dropped rule on gold customers. Such params are refused, from
/// --action, a document's action and a hook payload; the same value both ways is one.
#[test]
fn params_that_give_a_field_two_values_are_refused() {
    let dir = Scratch::new();
    let rule = r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"customer.tier","op":"eq","value":"gold"},"effect":"deny"}"#;
    let store = dir.file(
        "s.jsonl",
        format!("{rule}\n{{\"id\":\"c\",\"seq\":2,\"kind\":\"chatter\"}}\n").as_bytes(),
    );
    let two = r#"{"customer.tier":"standard","customer":{"tier":"gold"}}"#;
    let action = format!(r#"{{"tool":"refunds.create","params":{two}}}"#);
    let out = check(&[&store, "--kept", "c", "--action", &action], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("give `customer.tier` two different values"),
        "{}",
        out.stdout
    );
    let doc = format!(r#"{{"records":[{rule}],"kept":[],"action":{action}}}"#);
    let doc = dir.file("doc.json", doc.as_bytes());
    assert_eq!(check(&[&doc], None).code, 2);
    let payload = format!(
        r#"{{"hook_event_name":"PreToolUse","tool_name":"refunds.create","tool_input":{two}}}"#
    );
    let out = claude_hook(&store, "c", &payload);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("two different values"),
        "{}",
        out.stderr
    );
    // One value, spelt both ways: judged, and blocked.
    let same =
        r#"{"tool":"refunds.create","params":{"customer.tier":"gold","customer":{"tier":"gold"}}}"#;
    let out = check(&[&store, "--kept", "c", "--action", same], None);
    assert_eq!(out.code, 1, "{}", out.stdout);
}

/// The gate does not read into arrays (SPEC 4), so a key with dots was the only reading
/// of its field: `{"items.0.amount": 100, "items": [{"amount": 8400}]}` was judged on the
/// decoy 100 and passed a dropped rule on amounts over 5,000, while a tool that reads
/// the path through the array gets 8,400. Such params are refused, as a field given two
/// ways is; without the dotted key the field resolves nowhere and the rule fails closed.
#[test]
fn params_that_give_a_field_through_an_array_with_dots_are_refused() {
    let dir = Scratch::new();
    let rule = r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"items.0.amount","op":"gt","value":5000},"effect":"deny"}"#;
    let store = dir.file(
        "s.jsonl",
        format!("{rule}\n{{\"id\":\"c\",\"seq\":2,\"kind\":\"chatter\"}}\n").as_bytes(),
    );
    let decoy = r#"{"items.0.amount":100,"items":[{"amount":8400}]}"#;
    let action = format!(r#"{{"tool":"refunds.create","params":{decoy}}}"#);
    let out = check(&[&store, "--kept", "c", "--action", &action], None);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("give `items.0.amount` as a key with dots while `items` is an array"),
        "{}",
        out.stdout
    );
    let payload = format!(
        r#"{{"hook_event_name":"PreToolUse","tool_name":"refunds.create","tool_input":{decoy}}}"#
    );
    let out = claude_hook(&store, "c", &payload);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("is an array"), "{}", out.stderr);
    // The array alone: the rule's field resolves nowhere, and the gate does not pass.
    let plain = r#"{"tool":"refunds.create","params":{"items":[{"amount":8400}]}}"#;
    let out = check(&[&store, "--kept", "c", "--action", plain], None);
    assert_ne!(out.code, 0, "{}", out.stdout);
}

/// `--kept` lists the ids retention `given` keeps. Beside a retention that computes the
/// kept set itself, the ids were ignored without a word (the report names only the
/// retention): a user who gave both believed both counted. Refused wherever the flags
/// meet, before any input is read; a document's own `kept` stays the compactor's record,
/// not read under another retention.
#[test]
fn kept_ids_beside_a_retention_that_computes_the_kept_set_are_refused() {
    let scratch = Scratch::new();
    let doc = serde_json::json!({
        "records": [serde_json::from_str::<serde_json::Value>(POLICY_P).unwrap(),
                    {"id": "c", "seq": 2, "kind": "chatter"}],
        "kept": ["p", "c"],
        "action": serde_json::from_str::<serde_json::Value>(REFUND).unwrap(),
    })
    .to_string();
    let store = scratch.file("store.json", doc.as_bytes());
    let payload = r#"{"hook_event_name":"PreToolUse","tool_name":"refunds.create","tool_input":{"amount":8400}}"#;
    for retention in ["head_tail:1", "recency:1", "recency:0"] {
        let want = format!(
            "--kept and --retention `{retention}` both say what was kept: give one (--kept goes with --retention given)"
        );
        for args in [
            vec!["check", &store, "--kept", "p", "--retention", retention],
            vec![
                "check",
                "--precheck",
                &store,
                "--kept",
                "p",
                "--retention",
                retention,
            ],
            vec![
                "hook",
                "claude-code",
                "--store",
                &store,
                "--kept",
                "p",
                "--retention",
                retention,
            ],
        ] {
            let out = run(&args, Some(payload.as_bytes()));
            assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
            let text = format!("{}{}", out.stdout, out.stderr);
            assert!(text.contains(&want), "{args:?}: {text}");
            assert!(!text.contains("PASS"), "{args:?}: {text}");
        }
        // The document's own `kept` under the same retention: read as the retention says.
        let out = check(&[&store, "--retention", retention], None);
        assert_ne!(out.code, 2, "{retention}: {}{}", out.stdout, out.stderr);
    }
    // --kept with `given`, said or not, is what it is for.
    for args in [
        vec![store.as_str(), "--kept", "p"],
        vec![store.as_str(), "--kept", "p", "--retention", "given"],
    ] {
        assert_eq!(check(&args, None).code, 0, "{args:?}");
    }
    // The hook's transcript reading says what was kept too: neither flag goes with it.
    for (flag, value) in [("--kept", "p"), ("--retention", "recency:1")] {
        let args = [
            "hook",
            "claude-code",
            "--store",
            &store,
            "--kept-from",
            "transcript",
            flag,
            value,
        ];
        let out = run(&args, Some(payload.as_bytes()));
        assert_eq!(out.code, 2, "{flag}: {}", out.stdout);
        assert!(
            out.stderr.contains("--kept-from transcript both say"),
            "{}",
            out.stderr
        );
    }
}

/// K is a count: plain digits. `recency:+1` was read as `recency:1`; a sign, a space or
/// an empty K is refused on every command that takes a retention.
#[test]
fn a_retention_count_is_plain_digits() {
    let scratch = Scratch::new();
    let store = scratch.file("store.jsonl", policy_and_chatter("c").as_bytes());
    for k in ["+1", "+0", " 1", "1 ", "", "-1", "1e0", "0x1"] {
        for strategy in ["recency", "head_tail"] {
            let retention = format!("{strategy}:{k}");
            for args in [
                vec![
                    "check",
                    &store,
                    "--action",
                    REFUND,
                    "--retention",
                    &retention,
                ],
                vec!["check", "--precheck", &store, "--retention", &retention],
                vec!["sweep", &store, "--retention", &retention],
                vec![
                    "hook",
                    "claude-code",
                    "--store",
                    &store,
                    "--retention",
                    &retention,
                ],
            ] {
                let out = run(&args, Some(b"{}"));
                assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
                assert!(
                    out.stderr.contains("K must be a count"),
                    "{args:?}: {}",
                    out.stderr
                );
            }
        }
    }
    let out = check(
        &[&store, "--action", REFUND, "--retention", "recency:01"],
        None,
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
}

/// Every other count a flag takes is plain digits too: `--budget +5000` was read as
/// 5000 (Rust's integer parsers take a leading `+`). A sign, a space or an empty value
/// is a one-line usage error, exit 2, on every command that takes the flag.
#[test]
fn every_count_flag_is_plain_digits() {
    let scratch = Scratch::new();
    let store = scratch.file("store.jsonl", policy_and_chatter("c").as_bytes());
    let report = scratch.file("report.txt", b"sha256    : 0\n");
    let flags: [(&str, &[&str]); 5] = [
        ("--budget", &["pin"]),
        ("--max-calls", &["pin", "precheck", "sweep"]),
        ("--timeout-ms", &["hook"]),
        ("--max-predicate-depth", &["check", "verify"]),
        ("--max-input-bytes", &["check", "pin", "sweep"]),
    ];
    for (flag, commands) in flags {
        for command in commands {
            for value in ["+5", "+0", " 5", "5 ", "", "-5", "5e0", "0x5", "+5K"] {
                let mut args: Vec<&str> = match *command {
                    "precheck" => vec!["check", "--precheck", &store],
                    "sweep" => vec!["sweep", &store, "--precheck"],
                    "hook" => vec!["hook", "claude-code", "--store", &store],
                    "verify" => vec!["verify", &report],
                    "check" => vec!["check", &store, "--action", REFUND, "--kept", "c"],
                    other => vec![other, &store],
                };
                // `=` keeps a leading `-` a value rather than a flag.
                let arg = format!("{flag}={value}");
                args.push(&arg);
                let out = run(&args, Some(b"{}"));
                assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
                assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
                assert!(
                    out.stderr
                        .starts_with(&format!("error: invalid value '{value}' for '{flag}")),
                    "{args:?}: {}",
                    out.stderr
                );
            }
        }
    }
    // Plain digits still read as before.
    let out = run(
        &["pin", &store, "--budget", "5000", "--max-calls", "08"],
        None,
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = check(
        &[
            &store,
            "--action",
            REFUND,
            "--kept",
            "c",
            "--max-input-bytes",
            "64K",
        ],
        None,
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
}

#[test]
fn an_action_tool_with_white_space_at_an_end_is_refused() {
    // A record may not name such a tool, so none could bind the call: it passed unjudged
    // (exit 0) though the dropped policy `p` binds `refunds.create`.
    let dir = Scratch::new();
    let store = dir.file("s.jsonl", policy_and_chatter("c").as_bytes());
    // U+FEFF is no white space (`char::is_whitespace`), so no name ends in it by that rule.
    for ws in WHITESPACE.iter().filter(|ws| **ws != "\u{feff}") {
        for tool in [format!("refunds.create{ws}"), format!("{ws}refunds.create")] {
            let action = serde_json::json!({"tool": tool, "params": {"amount": 8400}});
            let action = action.to_string();
            for format in ["text", "json"] {
                let args = [
                    &store, "--kept", "c", "--action", &action, "--format", format,
                ];
                let out = check(&args, None);
                assert_eq!(out.code, 2, "{tool:?}: {}{}", out.stdout, out.stderr);
                assert!(
                    out.stderr.contains("has white space at an end"),
                    "{tool:?}: {}",
                    out.stderr
                );
            }
        }
    }
    // The library refuses it too, the call built field by field.
    let input = omission_gate::load("s.jsonl", policy_and_chatter("c").as_bytes()).unwrap();
    let action = Action {
        tool: "refunds.create ".into(),
        params: serde_json::Map::new(),
    };
    let kept = ["c".to_string()];
    let report = omission_gate::check(
        &input,
        Retention::Given,
        Some(&kept),
        &action,
        CheckOptions::default(),
    );
    assert!(report.is_err());
}

/// Runs omission-gate through `sh` with `args`, its stdout (a pipe) redirected by
/// `redirect` (`>&-` closes it), and `stdin` on standard input.
fn run_with_stdout(redirect: &str, args: &[&str], stdin: &[u8]) -> Run {
    let mut command = std::process::Command::new("sh");
    command
        .args(["-c", &format!(r#"exec "$0" "$@" {redirect}"#)])
        .arg(env!("CARGO_BIN_EXE_omission-gate"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    common::run_of(command, Some(stdin))
}

/// With stdout closed (`>&-`), Rust puts `/dev/null` (open for reading and writing) on
/// fd 1 before `main`, so the report was written nowhere and the command exited with
/// its verdict: a PASS (exit 0) whose report, the only record of what was judged, was
/// lost without a word; a hook allowed a call with no reply. Now any command that would
/// write to such a stdout is exit 2 with one line on stderr saying how to fix it, the
/// hook included; `>/dev/null` (open for writing only) and `--quiet` still keep only the
/// exit code.
#[test]
fn a_closed_stdout_is_an_error_not_a_lost_report() {
    let dir = Scratch::new();
    let store = dir.file("s.jsonl", policy_and_chatter("c").as_bytes());
    let small = r#"{"tool":"refunds.create","params":{"amount":10}}"#;
    let args = ["check", &store, "--kept", "p,c", "--action", small];
    let closed = run_with_stdout(">&-", &args, b"");
    assert_eq!(closed.code, 2, "{}", closed.stderr);
    assert_eq!(
        closed.stderr,
        "omission-gate: stdout is closed (or /dev/null open for reading and writing), so the report would be lost: give it somewhere to go (`>FILE`, `>/dev/null`), or pass --quiet to keep only the exit code\n"
    );
    for (redirect, quiet) in [(">/dev/null", false), (">&-", true)] {
        let mut all = vec!["--quiet"];
        all.truncate(usize::from(quiet));
        all.extend_from_slice(&args);
        let out = run_with_stdout(redirect, &all, b"");
        assert_eq!(out.code, 0, "{redirect} {quiet}: {}", out.stderr);
        assert_eq!(out.stderr, "");
    }
    for command in [
        &["pin", &store][..],
        &["validate", &store],
        &["sweep", &store],
    ] {
        let out = run_with_stdout(">&-", command, b"");
        assert_eq!(out.code, 2, "{command:?}: {}", out.stderr);
        assert!(out.stderr.contains("stdout is closed"), "{}", out.stderr);
    }
    // A hook allows only with its reply on stdout: closed, it denies.
    let payload = r#"{"hook_event_name":"PreToolUse","tool_name":"refunds.create","tool_input":{"amount":10}}"#;
    let hook = ["hook", "claude-code", "--store", &store, "--kept", "p,c"];
    assert_eq!(run_with_stdout("", &hook, payload.as_bytes()).code, 0);
    for quiet in [false, true] {
        let mut all = vec!["--quiet"];
        all.truncate(usize::from(quiet));
        all.extend_from_slice(&hook);
        let out = run_with_stdout(">&-", &all, payload.as_bytes());
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(
            out.stderr
                .contains("the hook's reply would be lost and the call is denied"),
            "{}",
            out.stderr
        );
    }
}

/// A document whose own `kept` names a record it does not hold is wrong about what was
/// kept. With `--kept` beside it (retention `given`), that `kept` was set aside unread
/// and the document judged as if it were sound: `check` passed, `validate --kept` called
/// it valid, `pin` pinned from it. It is invalid input whatever decides the kept set, as
/// it already was under `--retention recency:K`, on both loaders.
#[test]
fn a_document_kept_naming_no_record_is_refused_whatever_overrides_it() {
    let dir = Scratch::new();
    let small = r#"{"tool":"refunds.create","params":{"amount":10}}"#;
    for (name, extra) in [("small.json", String::new()), ("big.json", padding(3))] {
        let records: Vec<String> = policy_and_chatter("c")
            .lines()
            .chain(extra.lines())
            .map(str::to_string)
            .collect();
        let doc = format!(
            r#"{{"records":[{}],"kept":["p","nosuch"]}}"#,
            records.join(",")
        );
        let store = dir.file(name, doc.as_bytes());
        let says = "kept: kept id `nosuch` names no record";
        let runs = [
            check(&[&store, "--kept", "p,c", "--action", small], None),
            check(&[&store, "--precheck", "--kept", "p,c"], None),
            check(
                &[&store, "--retention", "recency:1", "--action", small],
                None,
            ),
            run(&["validate", &store, "--kept", "p,c"], None),
            run(&["pin", &store], None),
            run(&["pin", &store, "--budget", "100000000"], None),
        ];
        for out in runs {
            assert_eq!(out.code, 2, "{name}: {}{}", out.stdout, out.stderr);
            assert!(out.stderr.contains(says), "{name}: {}", out.stderr);
        }
        let payload = r#"{"hook_event_name":"PreToolUse","tool_name":"refunds.create","tool_input":{"amount":10}}"#;
        let out = claude_hook(&store, "p,c", payload);
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{name}: {}", out.stderr);
        // The same document with a sound `kept` is judged by `--kept`.
        let sound = dir.file("sound.json", doc.replace(r#","nosuch""#, "").as_bytes());
        let out = check(&[&sound, "--kept", "p,c", "--action", small], None);
        assert_eq!(out.code, 0, "{name}: {}{}", out.stdout, out.stderr);
    }
    // The library holds an `Input` changed after loading to it too.
    let doc = format!(
        r#"{{"records":[{}],"kept":["p"]}}"#,
        policy_and_chatter("c")
            .lines()
            .collect::<Vec<_>>()
            .join(",")
    );
    let mut input = omission_gate::load("doc.json", doc.as_bytes()).unwrap();
    input.kept = Some(vec!["nosuch".to_string()]);
    let kept = ["p".to_string()];
    let err = omission_gate::compaction(&input, Retention::Given, Some(&kept[..])).unwrap_err();
    assert!(
        err.to_string().contains("`nosuch` names no record"),
        "{err}"
    );
}

/// A `--kept` value that parses as a JSON array of other ids but, read as ids one per
/// line, names a record (the compactor kept the record `["p"]`): the array reading
/// judged the dropped rule `p` kept, and the refund passed. Refused, small store and
/// large (the lean loader hands it to the exact one) alike; the array spelt so that no
/// line is a record's id still judges.
#[test]
fn a_kept_value_that_reads_two_ways_is_refused() {
    let dir = Scratch::new();
    let small = policy_and_chatter(r#"["p"]"#);
    // Past the lean loader's threshold (1 MiB), with chatter.
    let mut large = small.clone();
    let mut seq = 3;
    while large.len() < 1_100_000 {
        large.push_str(&format!(
            "{}\n",
            serde_json::json!({"id": format!("c{seq}"), "seq": seq, "kind": "chatter", "text": "filler ".repeat(10)})
        ));
        seq += 1;
    }
    let kept = dir.file("kept.txt", b"[\"p\"]\n");
    for (name, store) in [("small", small), ("large", large)] {
        let store = dir.file(&format!("{name}.jsonl"), store.as_bytes());
        for flag in [format!("@{kept}"), r#"["p"]"#.to_string()] {
            let out = check(&[&store, "--action", REFUND, "--kept", &flag], None);
            assert_eq!(out.code, 2, "{name} {flag}: {}", out.stdout);
            assert!(
                out.stdout.contains("cannot tell which the compactor meant"),
                "{}",
                out.stdout
            );
        }
        // Unambiguous: the record `["p"]` kept, `p` dropped.
        let out = check(
            &[&store, "--action", REFUND, "--kept", r#"["[\"p\"]"]"#],
            None,
        );
        assert_eq!(out.code, 1, "{name}: {}", out.stdout);
        // Spaced, the array names no record read line by line: `p` kept.
        let out = check(&[&store, "--action", REFUND, "--kept", r#"[ "p" ]"#], None);
        assert_eq!(out.code, 0, "{name}: {}", out.stdout);
    }
}
