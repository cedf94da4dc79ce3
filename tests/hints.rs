//! Errors that say how to fix them: each common mistake is refused on one line of
//! stderr that names the file by its role and says what to write instead, with no
//! repeated prefix.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
use common::{Scratch, run};

const DOC: &str = r#"{"records":[{"id":"a","seq":1,"kind":"chatter"}],"kept":["a"]}"#;
const ACTION: &str = r#"{"tool":"t"}"#;

/// Runs the command, asserts an invalid-input refusal on one line, and returns that
/// line without the `omission-gate: invalid-input: ` prefix.
fn refusal(args: &[&str]) -> String {
    let r = run(args, None);
    assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
    let line = r
        .stderr
        .trim_end()
        .strip_prefix("omission-gate: invalid-input: ")
        .unwrap_or_else(|| panic!("{args:?}: {}", r.stderr))
        .to_string();
    assert_eq!(r.verdict_line(), "verdict   : ERROR (invalid-input) exit 2");
    line
}

#[test]
fn a_plain_array_of_records_is_told_to_wrap_them() {
    let s = Scratch::new();
    let path = s.file(
        "records.json",
        br#"[{"id":"a","seq":1,"kind":"chatter"},{"id":"b","seq":2,"kind":"chatter"}]"#,
    );
    let err = refusal(&["check", &path, "--action", ACTION, "--kept", "a"]);
    assert_eq!(
        err,
        format!(
            "{path}: input: a JSON array is neither input form: wrap the records as a document, `{{\"records\": [...]}}`, or write one record object per line (JSON Lines)"
        )
    );
    // Pretty-printed over several lines, the same.
    let pretty = s.file(
        "pretty_array.json",
        b"[\n  {\"id\": \"a\", \"seq\": 1, \"kind\": \"chatter\"}\n]\n",
    );
    let err = refusal(&["check", &pretty, "--action", ACTION, "--kept", "a"]);
    assert!(err.contains("wrap the records as a document"), "{err}");
}

#[test]
fn a_record_over_several_lines_of_json_lines_is_told_to_join_them() {
    let s = Scratch::new();
    let path = s.file(
        "pretty.jsonl",
        b"{\n  \"id\": \"a\",\n  \"seq\": 1,\n  \"kind\": \"chatter\"\n}\n",
    );
    let err = refusal(&["check", &path, "--action", ACTION, "--kept", "a"]);
    assert_eq!(
        err,
        format!(
            "{path}:1:1: EOF while parsing an object (in JSON Lines each record is one line: join its lines, or put the records in a document, `{{\"records\": [...]}}`)"
        )
    );
}

#[test]
fn an_action_that_is_not_json_is_shown_its_shape() {
    let s = Scratch::new();
    let doc = s.file("doc.json", DOC.as_bytes());
    let err = refusal(&["check", &doc, "--action", "deploy.run"]);
    assert_eq!(
        err,
        r#"--action:1:1: expected value (an action is one JSON object: `{"tool":"deploy.run","params":{}}`)"#
    );
    // Not a bare name: the shape with a placeholder.
    let err = refusal(&["check", &doc, "--action", "{tool: deploy.run}"]);
    assert!(
        err.ends_with(r#"(an action is one JSON object: `{"tool":"TOOL","params":{}}`)"#),
        "{err}"
    );
    // From a file, the file is named.
    let file = s.file("action.txt", b"deploy.run\n");
    let err = refusal(&["check", &doc, "--action", &format!("@{file}")]);
    assert!(
        err.starts_with(&format!("{file}:1:1: expected value")),
        "{err}"
    );
    assert!(
        err.contains(r#"`{"tool":"deploy.run","params":{}}`"#),
        "{err}"
    );
}

#[test]
fn a_missing_flag_file_is_named_by_its_role() {
    let s = Scratch::new();
    let doc = s.file("doc.json", DOC.as_bytes());
    let missing = s.path().join("nope.txt").to_str().unwrap().to_string();
    let at = format!("@{missing}");
    assert_eq!(
        refusal(&["check", &doc, "--kept", &at, "--action", ACTION]),
        format!("{missing}: kept file: cannot read: no such file")
    );
    assert_eq!(
        refusal(&["check", &doc, "--action", &at]),
        format!("{missing}: action file: cannot read: no such file")
    );
    assert_eq!(
        refusal(&["check", "--precheck", &doc, "--tools", &at]),
        format!("{missing}: tools file: cannot read: no such file")
    );
    // pin names it the same way (its text report is an ERROR report too).
    let r = run(&["pin", &doc, "--tools", &at], None);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!("omission-gate: invalid-input: {missing}: tools file: cannot read: no such file\n")
    );
    // The input itself is still the input.
    assert_eq!(
        refusal(&["check", &missing, "--action", ACTION]),
        format!("{missing}: input: cannot read: no such file")
    );
}

#[test]
fn no_message_repeats_its_prefix() {
    let s = Scratch::new();
    let doc = s.file("doc.json", DOC.as_bytes());
    assert_eq!(
        refusal(&["check", &doc, "--action", r#"{"tool":1}"#]),
        "--action: the action's `tool` must be a non-empty string"
    );
    let err = refusal(&["check", &doc, "--kept", "zz", "--action", ACTION]);
    assert!(
        err.starts_with("--kept: kept id `zz` names no record"),
        "{err}"
    );
    let err = refusal(&["check", &doc, "--kept", "[1]", "--action", ACTION]);
    assert_eq!(err, "--kept: expected a record id string, found 1");
    let err = refusal(&["check", "--precheck", &doc, "--tools", "[1]"]);
    assert!(err.starts_with("--tools: "), "{err}");
    assert!(!err.starts_with("--tools: --tools"), "{err}");
}

#[test]
fn a_tools_or_action_file_given_without_its_at_is_told_to_add_it() {
    let s = Scratch::new();
    let doc = s.file(
        "doc.json",
        br#"{"records":[{"id":"r","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"amount","op":"gt","value":5000},"effect":"deny","text":"No refund over 5,000."},{"id":"c","seq":2,"kind":"chatter"}],"kept":["c"]}"#,
    );
    let tools = s.file("tools.json", br#"["refunds.create"]"#);
    // Read as a tool named after the file, precheck passed and pin pinned nothing,
    // though the dropped rule binds refunds.create.
    let want = format!(
        "--tools: `{tools}` is a file, and --tools reads a file only as `@{tools}`; as written it names one tool, `{tools}`: write --tools @{tools} (or, for a tool of that name, give it as a JSON array, --tools '[\"{tools}\"]')"
    );
    assert_eq!(
        refusal(&["check", "--precheck", &doc, "--tools", &tools]),
        want
    );
    assert_eq!(refusal(&["pin", &doc, "--tools", &tools]), want);
    for args in [
        ["sweep", "--precheck", &doc, "--tools", &tools],
        ["validate", &doc, "--tools", &tools, "-q"],
    ] {
        let r = run(&args, None);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr, format!("omission-gate: invalid-input: {want}\n"));
    }
    // With its `@`, the file is read; as a JSON array, the name is a tool's.
    let at = format!("@{tools}");
    let r = run(&["check", "--precheck", &doc, "--tools", &at], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let array = format!("[\"{tools}\"]");
    let r = run(&["check", "--precheck", &doc, "--tools", &array], None);
    assert_eq!(r.labelled("tools"), [tools.as_str()], "{}", r.stderr);
    // The rule's tool, which the list leaves out, is judged all the same (SPEC 2.3).
    assert_eq!(r.code, 1, "{}", r.stdout);
    // An action file without its `@` was shown the file's name as a tool.
    let action = s.file(
        "action.json",
        br#"{"tool":"refunds.create","params":{"amount":8400}}"#,
    );
    assert_eq!(
        refusal(&["check", &doc, "--action", &action]),
        format!(
            "--action: `{action}` is a file, and --action reads a file only as `@{action}`: write --action @{action}"
        )
    );
}

/// A hook wired as another harness's (`hook codex` in Claude Code's settings) was told to
/// "leave the harness out to have it recognised", which a hook command cannot: the
/// message names the harness to write, as the hook command writes it.
#[test]
fn a_transcript_of_another_harness_names_the_adapter_to_wire() {
    let want = "this is a Claude Code transcript, not a Codex one: name the harness that wrote it, `claude-code` (in a hook command `omission-gate hook claude-code`, as `omission-gate init claude-code` writes it; `check` and `context` recognise it without --harness)";
    let err = refusal(&[
        "check",
        "tests/transcripts/store-claude-code.jsonl",
        "--transcript",
        "tests/transcripts/claude-code/AE-1.jsonl",
        "--harness",
        "codex",
        "--action",
        r#"{"tool":"Bash","params":{"command":"touch gate-marker"}}"#,
    ]);
    assert_eq!(
        err,
        format!("tests/transcripts/claude-code/AE-1.jsonl: line 1: {want}")
    );
    let payload = format!(
        r#"{{"session_id":"s","transcript_path":"{}/tests/transcripts/claude-code/AE-1.jsonl","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"touch gate-marker"}},"tool_use_id":"toolu_0005"}}"#,
        env!("CARGO_MANIFEST_DIR")
    );
    let r = run(
        &[
            "hook",
            "codex",
            "--store",
            "tests/transcripts/store-claude-code.jsonl",
            "--kept-from",
            "transcript",
        ],
        Some(payload.as_bytes()),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains(want), "{}", r.stderr);
}

/// The starter store's `kept` left beside records of one's own (the README says to delete
/// it): every call of a hook was denied with "did you mean", though the hook under
/// `--kept-from transcript` needs no `kept` at all. The message says it can go.
#[test]
fn a_documents_kept_naming_no_record_is_told_it_can_delete_the_key() {
    let s = Scratch::new();
    let store = s.file(
        "store.json",
        br#"{"records": [{"id": "refund-approval", "seq": 1, "kind": "policy", "scope": ["mcp__billing__refunds_create"], "predicate": {"field": "amount", "op": "gt", "value": 5000}, "effect": "require_approval", "text": "Refunds over 5,000 need a human approver."}],
 "kept": ["rule-refund-approval", "fact-currency"]}"#,
    );
    let fix = ": fix it, or delete the document's `kept`, which a kept set read from a transcript does not need (`hook --kept-from transcript`, as init writes it)";
    assert_eq!(
        refusal(&[
            "check",
            &store,
            "--action",
            r#"{"tool":"mcp__billing__refunds_create","params":{"amount":100}}"#
        ]),
        format!(
            "{store}: kept: kept id `rule-refund-approval` names no record (did you mean `refund-approval`?){fix}"
        )
    );
    let payload = format!(
        r#"{{"session_id":"s","transcript_path":"{}/tests/transcripts/claude-code/AE-1.jsonl","cwd":"/","hook_event_name":"PreToolUse","tool_name":"mcp__billing__refunds_create","tool_input":{{"amount":100}},"tool_use_id":"toolu_0005"}}"#,
        env!("CARGO_MANIFEST_DIR")
    );
    let r = run(
        &[
            "hook",
            "claude-code",
            "--store",
            &store,
            "--kept-from",
            "transcript",
        ],
        Some(payload.as_bytes()),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "names no record (did you mean `refund-approval`?){fix}"
        )),
        "{}",
        r.stderr
    );
    // An id near no record's says so too, without a guess.
    let other = s.file(
        "other.json",
        br#"{"records": [{"id": "r", "seq": 1, "kind": "chatter"}], "kept": ["zzzzzz"]}"#,
    );
    let r = run(&["validate", &other], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "omission-gate: invalid-input: {other}: kept: kept id `zzzzzz` names no record{fix}\n"
        )
    );
}

/// A comment in a store (`#` or `//` before a record, a note after one) was refused with
/// serde's "expected value" alone: JSON has none, and the message now says so.
#[test]
fn a_comment_in_a_store_is_told_json_has_none() {
    let s = Scratch::new();
    let hint = " (JSON has no comments: delete it, or say it in a record's `text`)";
    let record = r#"{"id":"a","seq":1,"kind":"chatter"}"#;
    for (name, text, at) in [
        (
            "hash.jsonl",
            format!("# my rules\n{record}\n"),
            "1:1: expected value",
        ),
        (
            "slashes.jsonl",
            format!("{record}\n// more\n"),
            "2:1: expected value",
        ),
        (
            "doc.json",
            format!("{{\"records\": [\n  // the rule\n  {record}\n], \"kept\": [\"a\"]}}\n"),
            "2:3: expected value",
        ),
        (
            "after.json",
            format!("{{\"records\": [{record}], \"kept\": [\"a\"]}}\n/* end */\n"),
            "2:1: trailing characters",
        ),
    ] {
        let path = s.file(name, text.as_bytes());
        assert_eq!(
            refusal(&["check", &path, "--action", ACTION]),
            format!("{path}:{at}{hint}")
        );
    }
    // Not at a comment: no hint.
    let path = s.file("plain.jsonl", b"{\"id\": \"a\",, }\n");
    let err = refusal(&["check", &path, "--action", ACTION]);
    assert!(!err.contains("comments"), "{err}");
}

/// A JSON Lines store with a line of kept ids (`{"kept": [...]}`), as a document has,
/// was refused as a record without an `id`: the message says a stream holds records
/// only, and where the kept ids go.
#[test]
fn a_line_of_kept_ids_in_json_lines_is_told_where_they_go() {
    let s = Scratch::new();
    let record = r#"{"id":"a","seq":1,"kind":"chatter"}"#;
    let kept = "a line with the document key `kept` and no record: a JSON Lines store holds records only, one a line: give the kept ids with --kept (a hook with --kept-from transcript needs none), or put the records in a document, `{\"records\": [...], \"kept\": [...]}`";
    for (name, text, line) in [
        (
            "after.jsonl",
            format!("{record}\n{{\"kept\": [\"a\"]}}\n"),
            2,
        ),
        (
            "first.jsonl",
            format!("{{\"kept\": [\"a\"]}}\n{record}\n"),
            1,
        ),
    ] {
        let path = s.file(name, text.as_bytes());
        assert_eq!(
            refusal(&["check", &path, "--action", ACTION, "--kept", "a"]),
            format!("{path}: line {line}: {kept}")
        );
    }
    let path = s.file(
        "action.jsonl",
        format!("{record}\n{{\"action\": {ACTION}}}\n").as_bytes(),
    );
    assert!(
        refusal(&["check", &path, "--action", ACTION, "--kept", "a"])
            .ends_with("give the call with --action, or put the records in a document, `{\"records\": [...], \"action\": {...}}`"),
    );
}
