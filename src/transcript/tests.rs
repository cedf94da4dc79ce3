//! The readers over real transcripts (trimmed copies under `tests/transcripts/`), each
//! fail-closed case on a real file made wrong in one place, and reading from the end.

use super::*;
use serde_json::Value;

const RULE: &str = "Never run touch gate-marker without the user's sign-off.";

macro_rules! fixture {
    ($harness:literal, $name:literal) => {
        (
            concat!($harness, "/", $name),
            &include_bytes!(concat!(
                "../../tests/transcripts/",
                $harness,
                "/",
                $name,
                ".jsonl"
            ))[..],
            include_str!(concat!(
                "../../tests/transcripts/",
                $harness,
                "/",
                $name,
                ".payload.json"
            )),
        )
    };
}

/// (name, transcript, payload) of every fixture.
fn fixtures() -> Vec<(&'static str, &'static [u8], &'static str)> {
    vec![
        fixture!("claude-code", "AE-1"),
        fixture!("claude-code", "AE-2"),
        fixture!("claude-code", "B-1"),
        fixture!("claude-code", "C-1"),
        fixture!("claude-code", "D-1"),
        fixture!("codex", "AE-1"),
        fixture!("codex", "AE-2"),
        fixture!("codex", "AE-3"),
        fixture!("codex", "B-1"),
        fixture!("codex", "B-2"),
        fixture!("codex", "C-1"),
        fixture!("codex", "C-2"),
        fixture!("codex", "D-1"),
        fixture!("codex", "D-2"),
        fixture!("gemini-cli", "AE-1"),
        fixture!("gemini-cli", "AE-2"),
        fixture!("gemini-cli", "AE-3"),
        fixture!("gemini-cli", "B-1"),
        fixture!("gemini-cli", "B-2"),
        fixture!("gemini-cli", "C-1"),
        fixture!("gemini-cli", "C-2"),
        fixture!("gemini-cli", "D-1"),
        fixture!("gemini-cli", "D-2"),
    ]
}

fn call_of(payload: &str) -> Option<String> {
    let v: Value = serde_json::from_str(payload).unwrap();
    v["tool_use_id"].as_str().map(str::to_string)
}

fn harness_of(name: &str) -> Harness {
    name.split('/').next().unwrap().parse().unwrap()
}

fn read_fixture(name: &str, bytes: &[u8], payload: &str) -> Live {
    let call = call_of(payload);
    let live = read(None, Window::whole(bytes), call.as_deref())
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    assert_eq!(live.harness, harness_of(name), "{name}: detected");
    live
}

fn in_view(live: &Live, text: &str) -> bool {
    let text = crate::view::normalize(text);
    live.pieces
        .iter()
        .any(|p| crate::view::normalize(&p.text).contains(&text))
}

/// Byte offset of the start of 1-based line `n`.
fn line_start(bytes: &[u8], n: usize) -> u64 {
    if n == 1 {
        return 0;
    }
    memchr::memchr_iter(b'\n', bytes).nth(n - 2).unwrap() as u64 + 1
}

fn lines_of(bytes: &[u8]) -> Vec<String> {
    String::from_utf8(bytes.to_vec())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// AE-1 (Claude Code): its bytes, the call it names, its lines, and the lines of the
/// call's entry and of the user's message stating the rule.
fn ae1_call_and_rule() -> (&'static [u8], String, Vec<String>, usize, usize) {
    let (_, bytes, payload) = fixture!("claude-code", "AE-1");
    let call = call_of(payload).unwrap();
    let lines = lines_of(bytes);
    let holding = lines
        .iter()
        .position(|l| l.contains(&format!(r#""id":"{call}""#)))
        .unwrap();
    let rule_line = lines
        .iter()
        .position(|l| {
            l.contains("Never run touch gate-marker")
                && serde_json::from_str::<Value>(l).unwrap()["type"] == "user"
        })
        .unwrap();
    (bytes, call, lines, holding, rule_line)
}

fn joined(lines: &[String]) -> Vec<u8> {
    let mut s = lines.join("\n");
    s.push('\n');
    s.into_bytes()
}

#[test]
fn the_rule_is_in_view_exactly_where_the_model_had_it() {
    // Claude Code: 1 = the call after the compaction, 2 = its retry after the block.
    // Codex and Gemini CLI: 1 = a warm-up call before the compaction, 2 = the call,
    // 3 = the retry. D never states the rule.
    let expected = [
        ("claude-code/AE-1", false),
        ("claude-code/AE-2", true),
        ("claude-code/B-1", true),
        ("claude-code/C-1", true),
        ("claude-code/D-1", false),
        ("codex/AE-1", true),
        ("codex/AE-2", false),
        ("codex/AE-3", true),
        ("codex/B-1", true),
        ("codex/B-2", true),
        ("codex/C-1", true),
        ("codex/C-2", true),
        ("codex/D-1", false),
        ("codex/D-2", false),
        ("gemini-cli/AE-1", true),
        ("gemini-cli/AE-2", false),
        ("gemini-cli/AE-3", true),
        ("gemini-cli/B-1", true),
        ("gemini-cli/B-2", true),
        ("gemini-cli/C-1", true),
        ("gemini-cli/C-2", true),
        ("gemini-cli/D-1", false),
        ("gemini-cli/D-2", false),
    ];
    let all = fixtures();
    assert_eq!(all.len(), expected.len());
    for ((name, bytes, payload), (want_name, want)) in all.into_iter().zip(expected) {
        assert_eq!(name, want_name);
        let live = read_fixture(name, bytes, payload);
        assert_eq!(in_view(&live, RULE), want, "{name}");
        if call_of(payload).is_some() {
            assert!(live.call_seen, "{name}: the call is recorded");
        }
    }
}

#[test]
fn with_no_call_named_the_newest_response_with_a_call_pending_is_the_one_being_made() {
    // Claude Code 2.1.197, three calls asked at once (`toolu_0006` to `toolu_0008`): the
    // first's result, a child of its own call's entry, was written while the second's
    // hook ran, and is the file's newest entry. `check --transcript` names no call: read
    // from that result, the chain missed the calls still pending, and the response's
    // calls and that result counted as context (a rule quoted in the result was in view,
    // a wrong PASS). It must read the file as a hook naming a pending call does.
    let bytes = include_bytes!("../../tests/transcripts/claude-code/R-3.jsonl");
    let texts = |call: Option<&str>| -> Vec<String> {
        let live = read(None, Window::whole(bytes), call).unwrap();
        live.pieces.iter().map(|p| p.text.to_string()).collect()
    };
    let named = texts(Some("toolu_0007"));
    assert_eq!(texts(None), named);
    assert_eq!(texts(Some("toolu_0008")), named);
    let result = String::from_utf8_lossy(bytes)
        .lines()
        .find(|l| l.contains(r#""tool_use_id":"toolu_0006""#))
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .and_then(|v| {
            v["message"]["content"][0]["content"]
                .as_str()
                .map(str::to_string)
        })
        .unwrap();
    assert!(!result.trim().is_empty());
    assert!(
        named.iter().all(|t| !t.contains(result.trim())),
        "{result:?}"
    );
    // The result's parent left out of the file (as around a `REPL` call): where its chain
    // goes is not known, and the context is still the one a hook naming a pending call
    // gets (the response with calls pending stands for the one being made; from the
    // result, Claude Code's loader would go on to the entry written before it, the last
    // of those calls, whose response keeps the result out).
    let lost: Vec<String> = lines_of(bytes)
        .into_iter()
        .map(|l| {
            if l.contains(r#""tool_use_id":"toolu_0006""#) {
                let mut v: Value = serde_json::from_str(&l).unwrap();
                v["parentUuid"] = "00000000-0000-4000-8000-000000000000".into();
                v.to_string()
            } else {
                l
            }
        })
        .collect();
    let lost = joined(&lost);
    let texts_lost: Vec<String> = read(None, Window::whole(&lost), None)
        .unwrap()
        .pieces
        .iter()
        .map(|p| p.text.to_string())
        .collect();
    assert_eq!(texts_lost, named);
}

#[test]
fn with_no_call_named_a_call_pending_on_a_branch_left_behind_is_not_the_one_judged() {
    // The session went back to "Hi." (a rewind) after a call that never got a result:
    // the newest prompt stands on "Hi.", and the rule and the call on the branch left
    // behind. Taken for the call judged, that call made the rule context (a wrong PASS).
    let user = |uuid: &str, parent: Option<&str>, text: &str| {
        serde_json::json!({"parentUuid": parent, "isSidechain": false, "type": "user",
            "message": {"role": "user", "content": text}, "uuid": uuid,
            "timestamp": "2026-12-01T10:00:00.000Z", "sessionId": "s", "version": "2.1.197"})
    };
    let model = |uuid: &str, parent: &str, id: &str, content: Value| {
        serde_json::json!({"parentUuid": parent, "isSidechain": false, "type": "assistant",
            "message": {"id": id, "type": "message", "role": "assistant", "content": [content]},
            "uuid": uuid, "timestamp": "2026-12-01T10:00:01.000Z", "sessionId": "s",
            "version": "2.1.197"})
    };
    let call = serde_json::json!({"type": "tool_use", "id": "toolu_0002", "name": "Bash",
        "input": {"command": "sleep 100"}});
    let lines = [
        user("u1", None, "hello"),
        model(
            "a1",
            "u1",
            "msg_0001",
            serde_json::json!({"type": "text", "text": "Hi."}),
        ),
        user("u2", Some("a1"), RULE),
        model("a2", "u2", "msg_0002", call),
        user("u3", Some("a1"), "GATE-GO: please run the step now."),
    ];
    let bytes: Vec<u8> = lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    let live = read(None, Window::whole(&bytes), None).unwrap();
    assert!(!in_view(&live, RULE));
    let texts: Vec<&str> = live.pieces.iter().map(|p| &*p.text).collect();
    assert_eq!(texts, ["hello", "Hi.", "GATE-GO: please run the step now."]);
}

#[test]
fn codex_a_snapshot_written_inside_a_response_does_not_split_it() {
    // A call quoting the rule, then a snapshot Codex keeps for undo, then the call judged,
    // all in the response being made: taken for the end of a response, the snapshot made
    // the first call an earlier response's, whose arguments counted as context.
    let (_, bytes, payload) = fixture!("codex", "AE-2");
    let call = call_of(payload);
    let mut lines = lines_of(bytes);
    let at = lines
        .iter()
        .position(|l| l.contains(r#""id":"fc_0007""#))
        .unwrap();
    let quoting = serde_json::json!({"timestamp": "2026-12-01T14:23:09.960Z",
        "type": "response_item", "payload": {"type": "function_call", "id": "fc_call_A",
        "name": "exec_command", "arguments": serde_json::json!({"cmd": format!("echo {RULE:?}")}).to_string(),
        "call_id": "call_A"}});
    let snapshot = serde_json::json!({"timestamp": "2026-12-01T14:23:09.960Z",
        "type": "response_item", "payload": {"type": "ghost_snapshot", "ghost_commit":
        {"id": "abc", "parent": null, "preexisting_untracked_files": [],
        "preexisting_untracked_dirs": []}}});
    lines.insert(at, snapshot.to_string());
    lines.insert(at, quoting.to_string());
    let bytes = joined(&lines);
    for named in [call.as_deref(), None] {
        let live = read(None, Window::whole(&bytes), named).unwrap();
        assert!(!in_view(&live, RULE), "{named:?}");
    }
}

#[test]
fn gemini_cli_content_that_is_no_part_list_is_an_error() {
    // An array of arrays is no `PartListUnion`: read as one, a user message of
    // `[[RULE]]` put the rule in view. A part of no known kind in the response being
    // made (which is not context) went unread.
    let (_, bytes, payload) = fixture!("gemini-cli", "D-2");
    let call = call_of(payload);
    let user_content = |content: serde_json::Value| -> Vec<u8> {
        let lines: Vec<String> = lines_of(bytes)
            .into_iter()
            .map(|l| {
                let mut v: Value = serde_json::from_str(&l).unwrap();
                let mut changed = false;
                if let Some(list) = v
                    .pointer_mut("/$set/messages")
                    .and_then(Value::as_array_mut)
                {
                    for m in list.iter_mut().filter(|m| m["type"] == "user") {
                        m["content"] = content.clone();
                        changed = true;
                    }
                }
                if v["type"] == "user" && v.get("content").is_some() {
                    v["content"] = content.clone();
                    changed = true;
                }
                if changed { v.to_string() } else { l }
            })
            .collect();
        joined(&lines)
    };
    for content in [
        serde_json::json!([[RULE]]),
        serde_json::json!([[{ "text": RULE }]]),
    ] {
        let bad = user_content(content.clone());
        assert!(
            matches!(
                read(None, Window::whole(&bad), call.as_deref()),
                Err(Failure::Invalid { .. })
            ),
            "{content}"
        );
    }
    let (_, bytes, payload) = fixture!("gemini-cli", "R-8");
    let call = call_of(payload);
    let mut lines = lines_of(bytes);
    let last = lines
        .iter()
        .rposition(|l| l.contains(r#""type":"gemini""#))
        .unwrap();
    let mut v: Value = serde_json::from_str(&lines[last]).unwrap();
    v["content"] = serde_json::json!([{ "fooPart": {} }]);
    lines[last] = v.to_string();
    let bad = joined(&lines);
    assert!(matches!(
        read(None, Window::whole(&bad), call.as_deref()),
        Err(Failure::Invalid { .. })
    ));
}

#[test]
fn the_compaction_is_found_where_each_harness_wrote_it() {
    let at =
        |name: &str, bytes: &[u8], payload: &str| read_fixture(name, bytes, payload).compaction;
    for (name, bytes, payload) in fixtures() {
        let line = match name {
            // The boundary (Claude Code), the `compacted` entry (Codex), the list set with
            // the summary (Gemini CLI).
            "claude-code/AE-1" | "claude-code/AE-2" | "claude-code/B-1" => Some(17),
            "codex/AE-2" | "codex/AE-3" | "codex/B-2" => Some(19),
            "gemini-cli/AE-2" | "gemini-cli/AE-3" | "gemini-cli/B-2" => Some(17),
            _ => None,
        };
        assert_eq!(
            at(name, bytes, payload),
            line.map(|n| line_start(bytes, n)),
            "{name}"
        );
        let all = compactions(harness_of(name), bytes).unwrap();
        assert_eq!(
            all,
            line.map(|n| line_start(bytes, n))
                .into_iter()
                .collect::<Vec<_>>(),
            "{name}"
        );
    }
}

#[test]
fn claude_code_splices_the_preserved_message_after_the_summary() {
    let (name, bytes, payload) = fixture!("claude-code", "AE-1");
    let live = read_fixture(name, bytes, payload);
    let roles: Vec<(Role, &str)> = live
        .pieces
        .iter()
        .take(2)
        .map(|p| (p.role, &*p.text))
        .collect();
    assert_eq!(roles[0].0, Role::Summary);
    assert!(
        roles[0].1.contains("working in a test project"),
        "{}",
        roles[0].1
    );
    // `/compact` preserved the last assistant message, which sits before the boundary.
    assert_eq!(roles[1], (Role::Assistant, "Noted."));
    assert!(live.pieces.iter().all(|p| p.at >= line_start(bytes, 11)));
}

#[test]
fn the_pending_call_is_not_context() {
    // Claude Code's retry: the first call's arguments (answered by the block) are
    // context; the retry's own (`toolu_0007`) are not, nor is a call with no result.
    let (name, bytes, payload) = fixture!("claude-code", "AE-2");
    let live = read_fixture(name, bytes, payload);
    let calls: Vec<u64> = live
        .pieces
        .iter()
        .filter(|p| p.role == Role::Call && &*p.text == "touch gate-marker")
        .map(|p| p.at)
        .collect();
    assert_eq!(calls, [line_start(bytes, 30)]);
    let without_id = read(None, Window::whole(bytes), None).unwrap();
    assert_eq!(without_id.pieces, live.pieces);
    assert!(!without_id.call_seen);
    // Codex records the pending call before the hook runs: it is seen, not context.
    let (name, bytes, payload) = fixture!("codex", "AE-2");
    let live = read_fixture(name, bytes, payload);
    assert!(live.call_seen);
    assert!(
        !live
            .pieces
            .iter()
            .any(|p| p.role == Role::Call && &*p.text == "touch gate-marker"),
        "{:?}",
        live.pieces
    );
}

#[test]
fn what_claude_code_takes_out_of_a_call_before_sending_it_is_not_in_view() {
    // P-1: plan mode; the plan (with the rule) written to the plan file before `/compact`,
    // then an `ExitPlanMode` call (which `-p` cannot run: its result is an error) and the
    // gated call. Where Claude Code runs `ExitPlanMode`, it records the call's input with
    // the plan file's text added (`plan`, `planFilePath`) and takes both out of every
    // request; an `Edit` input with an `edits` list loses its `old_string`, `new_string`
    // and `replace_all` the same way. Before, they counted: the rule was in view.
    let (name, bytes, payload) = fixture!("claude-code", "P-1");
    assert!(!in_view(&read_fixture(name, bytes, payload), RULE));
    // The file with the `ExitPlanMode` call made a call of `tool` with `input`.
    let with_call = |tool: &str, input: Value| {
        let lines: Vec<String> = lines_of(bytes)
            .into_iter()
            .map(|line| {
                let mut v: Value = serde_json::from_str(&line).unwrap();
                if let Some(block) = v.pointer_mut("/message/content/0")
                    && block["name"] == "ExitPlanMode"
                {
                    block["name"] = tool.into();
                    block["input"] = input.clone();
                }
                v.to_string()
            })
            .collect();
        read_fixture(name, &joined(&lines), payload)
    };
    let plan = format!("# Plan\n\nConstraint: {RULE}\n");
    let live = with_call(
        "ExitPlanMode",
        serde_json::json!({"plan": plan, "planFilePath": "/home/u/.claude/plans/p.md"}),
    );
    assert!(!in_view(&live, RULE), "{:?}", live.pieces);
    let edit = serde_json::json!({"file_path": "/p/notes.md", "old_string": "x", "new_string": RULE,
        "replace_all": false, "edits": [{"old_string": "x", "new_string": "y"}]});
    let live = with_call("Edit", edit);
    assert!(!in_view(&live, RULE), "{:?}", live.pieces);
    // What is sent of the input still counts; beside no `edits` list, all of it is.
    assert!(in_view(&live, "/p/notes.md"));
    let edit =
        serde_json::json!({"file_path": "/p/notes.md", "old_string": "x", "new_string": RULE});
    assert!(in_view(&with_call("Edit", edit), RULE));
}

#[test]
fn claude_code_s_session_settings_entries_are_not_context() {
    // Claude Code 2.1.197 writes these beside the conversation (an interactive session
    // writes `permission-mode` at each prompt); its loader reads them into the session's
    // metadata only. They were unknown entries: every call of such a session was an ERROR.
    let (name, bytes, payload) = fixture!("claude-code", "AE-1");
    let plain = read_fixture(name, bytes, payload);
    let sid = "\"sessionId\":\"s\"";
    let mut lines = lines_of(bytes);
    for kind in [
        "permission-mode",
        "worktree-state",
        "ai-title",
        "attribution-snapshot",
    ] {
        lines.insert(
            1,
            format!("{{\"type\":\"{kind}\",{sid},\"text\":\"{RULE}\"}}"),
        );
    }
    let with = read_fixture(name, &joined(&lines), payload);
    assert_eq!(with.pieces.len(), plain.pieces.len());
    assert!(!in_view(&with, RULE));
}

#[test]
fn an_interactive_claude_code_session_counts_only_the_newest_results_the_hint_spares() {
    // H-11 (an interactive session, `entrypoint` `cli`, with `permission-mode` entries):
    // ten Bash results, the rule in the first; the five newest count, the others may have
    // been cleared by the context hint.
    let (name, bytes, payload) = fixture!("claude-code", "H-11");
    let live = read_fixture(name, bytes, payload);
    assert!(!in_view(&live, RULE));
    for (n, counts) in [(3, false), (4, true), (8, true)] {
        assert_eq!(in_view(&live, &format!("more {n} line 1")), counts, "{n}");
    }
    // `claude -p` (`sdk-cli`) never sends the hint: there every result counts.
    let printed = String::from_utf8(bytes.to_vec())
        .unwrap()
        .replace("\"entrypoint\":\"cli\"", "\"entrypoint\":\"sdk-cli\"");
    let live = read_fixture(name, printed.as_bytes(), payload);
    assert!(in_view(&live, RULE));
    assert!(in_view(&live, "more 0 line 1"));
}

#[test]
fn a_result_a_compaction_preserved_may_have_been_cleared_by_the_context_hint() {
    // A partial compaction `from` a message keeps the messages before it as Claude Code
    // holds them (the context hint may have cleared their results while newer calls
    // stood after them) and summarises the newer ones: the preserved Bash result is the
    // only one left, yet it may be cleared.
    let entry = |uuid: &str, parent: &str, kind: &str, rest: &str| {
        let parent = match parent {
            "" => "null".to_string(),
            p => format!("\"{p}\""),
        };
        format!(
            r#"{{"type":"{kind}","uuid":"{uuid}","parentUuid":{parent},"entrypoint":"cli","sessionId":"s",{rest}}}"#
        )
    };
    let lines = [
        entry(
            "u1",
            "",
            "user",
            r#""message":{"role":"user","content":"hi"}"#,
        ),
        entry(
            "a1",
            "u1",
            "assistant",
            r#""message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cat rules"}}]}"#,
        ),
        entry(
            "r1",
            "a1",
            "user",
            &format!(
                r#""message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":"{RULE}"}}]}}"#
            ),
        ),
        entry(
            "b",
            "",
            "system",
            r#""subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"manual","preservedMessages":{"uuids":["a1","r1"]}}"#,
        ),
        entry(
            "s1",
            "b",
            "user",
            r#""isCompactSummary":true,"message":{"role":"user","content":"Summary: work went on."}"#,
        ),
        entry(
            "u2",
            "s1",
            "user",
            r#""message":{"role":"user","content":"GATE-GO"}"#,
        ),
        entry(
            "a2",
            "u2",
            "assistant",
            r#""message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"touch gate-marker"}}]}"#,
        ),
    ];
    let bytes = joined(&lines);
    let live = read(None, Window::whole(&bytes), Some("t2")).unwrap();
    assert!(live.call_seen);
    assert!(!in_view(&live, RULE));
    // `claude -p` never sends the hint: the preserved result counts.
    let printed = String::from_utf8(bytes.clone())
        .unwrap()
        .replace("\"entrypoint\":\"cli\"", "\"entrypoint\":\"sdk-cli\"");
    let live = read(None, Window::whole(printed.as_bytes()), Some("t2")).unwrap();
    assert!(in_view(&live, RULE));
}

#[test]
fn codex_keeps_the_summary_and_the_truncated_message() {
    let (name, bytes, payload) = fixture!("codex", "AE-2");
    let live = read_fixture(name, bytes, payload);
    assert!(live.pieces.iter().any(|p| {
        p.role == Role::Summary
            && p.text
                .starts_with("Another language model started to solve this problem")
    }));
    assert!(
        live.pieces
            .iter()
            .any(|p| p.role == Role::User && p.text.contains("tokens truncated"))
    );
}

#[test]
fn codex_base_instructions_a_resumed_session_may_not_be_sent_are_not_in_view() {
    // 0.171.0, run against a mock: the first `codex exec` had `model_instructions_file`
    // stating the rule, and its `session_meta` records that text; the file was edited
    // and `codex exec resume` sent the new text instead. The rollout has no other mark of
    // the resume, and the rule is nowhere else in it.
    let (name, bytes, payload) = fixture!("codex", "RI-2");
    let text = std::str::from_utf8(bytes).unwrap();
    let head = text.lines().next().unwrap();
    assert!(head.contains("\"session_meta\"") && head.contains(RULE));
    assert_eq!(text.matches(RULE).count(), 1);
    let live = read_fixture(name, bytes, payload);
    assert!(!in_view(&live, RULE));
    assert!(live.pieces.iter().all(|p| p.at != 0));
}

#[test]
fn reading_from_the_end_gives_the_whole_answer_or_asks_for_more() {
    for (name, bytes, payload) in fixtures() {
        let call = call_of(payload);
        let whole = read_fixture(name, bytes, payload);
        let head = Window::whole(bytes).head;
        let mut asked = false;
        for size in (1..bytes.len()).step_by(97) {
            let offset = bytes.len() - size;
            let window = Window {
                head,
                tail: &bytes[offset..],
                offset: offset as u64,
            };
            match read(None, window, call.as_deref()) {
                Ok(l) => assert_eq!(l, whole, "{name} from byte {offset}"),
                Err(Failure::NeedMore) => asked = true,
                Err(e) => panic!("{name} from byte {offset}: {e:?}"),
            }
        }
        assert!(asked, "{name}");
    }
}

#[test]
fn an_unterminated_last_line_is_not_read() {
    for (name, bytes, payload) in fixtures() {
        let call = call_of(payload);
        let cut = &bytes[..bytes.len() - 1];
        let lines = lines_of(bytes);
        let without_last = joined(&lines[..lines.len() - 1]);
        let a = read(None, Window::whole(cut), call.as_deref());
        let b = read(None, Window::whole(&without_last), call.as_deref());
        assert_eq!(a, b, "{name}");
    }
    // Claude Code's last line is the call: half written, it is not seen yet.
    let (_, bytes, payload) = fixture!("claude-code", "AE-1");
    let live = read(
        None,
        Window::whole(&bytes[..bytes.len() - 20]),
        call_of(payload).as_deref(),
    )
    .unwrap();
    assert!(!live.call_seen);
}

#[test]
fn an_unknown_entry_shape_is_an_error_at_its_line() {
    let extra = [
        (
            "claude-code",
            r#"{"type":"hologram","uuid":"u-x","parentUuid":null}"#,
        ),
        (
            "codex",
            r#"{"timestamp":"t","type":"hologram","payload":{}}"#,
        ),
        ("gemini-cli", r#"{"hologram":true}"#),
    ];
    for (name, bytes, payload) in fixtures() {
        let (_, line) = extra.iter().find(|(h, _)| name.starts_with(h)).unwrap();
        let mut lines = lines_of(bytes);
        let n = lines.len() + 1;
        lines.push(line.to_string());
        let bad = joined(&lines);
        match read(None, Window::whole(&bad), call_of(payload).as_deref()) {
            Err(Failure::Invalid { at, problem }) => {
                assert_eq!(at, line_start(&bad, n), "{name}");
                assert!(
                    matches!(problem, Problem::Unknown { .. }),
                    "{name}: {problem}"
                );
                let message = problem.to_string();
                assert!(message.contains("does not know"), "{name}: {message}");
                assert!(
                    !message.contains("hologram"),
                    "{name}: quotes the file: {message}"
                );
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // A model item or message block of an unknown type fails too.
    let (_, bytes, _) = fixture!("codex", "C-2");
    let mut lines = lines_of(bytes);
    lines.push(r#"{"timestamp":"t","type":"response_item","payload":{"type":"hologram"}}"#.into());
    assert!(matches!(
        read(None, Window::whole(&joined(&lines)), None),
        Err(Failure::Invalid { .. })
    ));
    let (_, bytes, _) = fixture!("gemini-cli", "C-2");
    let mut lines = lines_of(bytes);
    lines.push(r#"{"id":"m-x","timestamp":"t","type":"hologram","content":"x"}"#.into());
    assert!(matches!(
        read(None, Window::whole(&joined(&lines)), None),
        Err(Failure::Invalid { .. })
    ));
    let (_, bytes, _) = fixture!("claude-code", "C-1");
    let text = String::from_utf8(bytes.to_vec()).unwrap().replace(
        r#""type":"text","text":"Noted."#,
        r#""type":"hologram","text":"Noted."#,
    );
    assert!(matches!(
        read(None, Window::whole(text.as_bytes()), None),
        Err(Failure::Invalid { .. })
    ));
}

/// C-1 with `extra` lines put after its line 4 (the user message before the rule).
fn codex_c1_with(extra: &[&str], after: usize) -> (Vec<u8>, Option<String>) {
    let (_, bytes, payload) = fixture!("codex", "C-1");
    let mut lines = lines_of(bytes);
    for (i, line) in extra.iter().enumerate() {
        lines.insert(after + i, line.to_string());
    }
    (joined(&lines), call_of(payload))
}

#[test]
fn codex_reads_the_items_that_only_add_to_the_context_and_counts_none_of_their_text() {
    // Items and entries Codex 0.171.0 writes that the model is sent as text, as
    // something else, or not at all; none takes anything out of the context. No text of
    // theirs counts (an agent message's either). Real rollouts with some of them:
    // tests/transcript.rs, the_hook_reads_codex_0171_tool_searches_additional_tools_and_agent_messages.
    let extra = [
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"agent_message","author":"/root/worker","recipient":"/root","content":[{"type":"input_text","text":"ALPHA plain agent text"}]}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"agent_message","author":"/root/worker","recipient":"/root","content":[{"type":"input_text","text":"BETA header"},{"type":"encrypted_content","encrypted_content":"gAAAA"}]}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"additional_tools","role":"developer","tools":[{"type":"function","name":"x","description":"GAMMA tool text"}]}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"tool_search_call","call_id":"ts_1","execution":"client","arguments":{"query":"DELTA query"}}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"tool_search_output","call_id":"ts_1","status":"completed","execution":"client","tools":[{"type":"function","name":"y","description":"EPSILON tool text"}]}}"#,
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"configuration_update","reasoning":{"effort":"high"}}}"#,
        r#"{"timestamp":"t","type":"inter_agent_communication","payload":{"author":"/root","recipient":"/root/worker","other_recipients":[],"content":"ZETA task text","trigger_turn":true}}"#,
        r#"{"timestamp":"t","type":"inter_agent_communication_metadata","payload":{"trigger_turn":true}}"#,
        r#"{"timestamp":"t","type":"dynamic_tools_updated","payload":{"tools":[]}}"#,
        r#"{"timestamp":"t","type":"realtime_item","payload":{"type":"x"}}"#,
        r#"{"timestamp":"t","type":"security_risk_score","payload":{"score":1}}"#,
    ];
    let (bytes, call) = codex_c1_with(&extra, 4);
    let live = read(None, Window::whole(&bytes), call.as_deref()).unwrap();
    assert!(in_view(&live, RULE));
    for text in ["ALPHA", "BETA", "GAMMA", "DELTA", "EPSILON", "ZETA"] {
        assert!(!in_view(&live, text), "{text}");
    }
    assert_eq!(live.compaction, None);
}

#[test]
fn a_codex_compaction_trigger_starts_the_context_as_an_api_compaction_does() {
    let trigger =
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"compaction_trigger"}}"#;
    // After the rule: the rule is not counted, and the trigger is the compaction.
    let (bytes, call) = codex_c1_with(&[trigger], 8);
    let live = read(None, Window::whole(&bytes), call.as_deref()).unwrap();
    assert!(!in_view(&live, RULE));
    assert_eq!(live.compaction, Some(line_start(&bytes, 9)));
    // Before it: the rule is.
    let (bytes, call) = codex_c1_with(&[trigger], 4);
    let live = read(None, Window::whole(&bytes), call.as_deref()).unwrap();
    assert!(in_view(&live, RULE));
    assert_eq!(live.compaction, Some(line_start(&bytes, 5)));
}

#[test]
fn a_summary_without_its_boundary_is_an_error() {
    // The summary (line 18) stands on its boundary (line 17). Without it, the chain went
    // on from the summary as from a `REPL` call's orphan, into the entries the compaction
    // summarised, and a rule the summary left out was in view.
    let (_, bytes, payload) = fixture!("claude-code", "AE-1");
    let call = call_of(payload);
    let lines = lines_of(bytes);
    assert!(lines[16].contains("compact_boundary"));
    assert!(lines[17].contains("isCompactSummary"));
    let mut gone = lines.clone();
    gone.remove(16);
    let mut sidechain = lines.clone();
    sidechain[16] = sidechain[16].replace(r#""isSidechain":false"#, r#""isSidechain":true"#);
    assert_ne!(sidechain[16], lines[16]);
    let mut other: serde_json::Value = serde_json::from_str(&lines[16]).unwrap();
    other["subtype"] = "informational".into();
    let mut not_one = lines.clone();
    not_one[16] = other.to_string();
    for (what, bad, summary_line) in [
        ("boundary removed", joined(&gone), 17),
        ("boundary a sidechain's", joined(&sidechain), 18),
        ("boundary not one", joined(&not_one), 18),
    ] {
        match read(None, Window::whole(&bad), call.as_deref()) {
            Err(Failure::Invalid { at, problem }) => {
                assert_eq!(at, line_start(&bad, summary_line), "{what}");
                assert_eq!(problem, Problem::SummaryWithoutBoundary, "{what}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn a_chain_link_or_a_preserved_entry_written_after_what_names_it_is_not_what_it_names() {
    // A later line under the uuid of an entry on the call's chain (its parent, here, led
    // back to the rule before the compaction), and a boundary listing as preserved an
    // entry written after it (the rule, after the call): each was taken as written, and
    // put the rule in view. The line written before is what an entry names (Claude Code
    // may append copies of entries, when a session is reopened in an editor); with none
    // before, the file is an error.
    let (bytes, call, lines, holding, rule_line) = ae1_call_and_rule();
    let entry = |l: &String| serde_json::from_str::<Value>(l).unwrap();
    let parent = entry(&lines[holding])["parentUuid"]
        .as_str()
        .unwrap()
        .to_string();
    let at = lines
        .iter()
        .position(|l| entry(l)["uuid"].as_str() == Some(&parent))
        .unwrap();
    let rule_uuid = entry(&lines[rule_line])["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let texts = |bytes: &[u8]| -> Vec<String> {
        let live = read(None, Window::whole(bytes), Some(&call)).unwrap();
        assert!(!in_view(&live, RULE));
        live.pieces.iter().map(|p| p.text.to_string()).collect()
    };
    let plain = texts(bytes);
    // A copy of the parent, and one that leads back to the rule, appended after the call.
    let mut relinked = entry(&lines[at]);
    relinked["parentUuid"] = rule_uuid.into();
    for copy in [lines[at].clone(), relinked.to_string()] {
        let mut later = lines.clone();
        later.push(copy);
        assert_eq!(texts(&joined(&later)), plain);
    }
    // A parent written only after the call's entry.
    let mut moved = lines.clone();
    let parent_line = moved.remove(at);
    moved.push(parent_line);
    let bad = joined(&moved);
    match read(None, Window::whole(&bad), Some(&call)) {
        Err(Failure::Invalid { problem, .. }) => assert_eq!(problem, Problem::ParentWrittenAfter),
        other => panic!("{other:?}"),
    }
    let boundary = lines
        .iter()
        .position(|l| l.contains("compact_boundary"))
        .unwrap();
    let mut b = entry(&lines[boundary]);
    let mut said = entry(&lines[rule_line]);
    said["uuid"] = "99999999-9999-4999-8999-999999999999".into();
    said["parentUuid"] = Value::Null;
    b["compactMetadata"]["preservedMessages"]["uuids"]
        .as_array_mut()
        .unwrap()
        .push("99999999-9999-4999-8999-999999999999".into());
    let mut listed = lines.clone();
    listed[boundary] = b.to_string();
    listed.push(said.to_string());
    let bad = joined(&listed);
    match read(None, Window::whole(&bad), Some(&call)) {
        Err(Failure::Invalid { at, problem }) => {
            assert_eq!(problem, Problem::PreservedAfterBoundary);
            assert_eq!(at, line_start(&bad, boundary + 1));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_later_line_recording_the_call_named_is_not_where_the_call_was_made() {
    // A copy of the rule's entry, written before the compaction, and a line recording
    // the call again that stands on it, appended after the call's entry: under the
    // call's entry's uuid (a copy relinked) or another. The chain was walked from the
    // newest line recording the call, back into what the compaction took out, which put
    // the rule in view and passed the call.
    let (bytes, call, lines, holding, rule_line) = ae1_call_and_rule();
    let entry = |l: &String| serde_json::from_str::<Value>(l).unwrap();
    let plain = read(None, Window::whole(bytes), Some(&call)).unwrap();
    assert!(!in_view(&plain, RULE));
    for uuid in [None, Some("33333333-3333-4333-8333-333333333333")] {
        let mut again = entry(&lines[holding]);
        again["parentUuid"] = entry(&lines[rule_line])["uuid"].clone();
        if let Some(uuid) = uuid {
            again["uuid"] = uuid.into();
        }
        let mut later = lines.clone();
        later.push(lines[rule_line].clone());
        later.push(again.to_string());
        let bad = joined(&later);
        let live = read(None, Window::whole(&bad), Some(&call)).unwrap();
        assert!(live.call_seen, "{uuid:?}");
        assert_eq!(live.pieces, plain.pieces, "{uuid:?}");
        // Read from the end, in windows: the same answer, or a wider window asked for.
        let head = Window::whole(&bad).head;
        for size in (1..bad.len()).step_by(97) {
            let offset = bad.len() - size;
            let window = Window {
                head,
                tail: &bad[offset..],
                offset: offset as u64,
            };
            match read(None, window, Some(&call)) {
                Ok(l) => assert_eq!(l, live, "{uuid:?} from byte {offset}"),
                Err(Failure::NeedMore) => {}
                Err(e) => panic!("{uuid:?} from byte {offset}: {e:?}"),
            }
        }
    }
}

#[test]
fn codex_a_later_item_recording_the_call_named_is_not_where_the_call_was_made() {
    // A user message stating the rule, and the call's item again, appended after the
    // call's item: the context was taken to end with the later one, which put the rule
    // in view and passed the call.
    let (_, bytes, payload) = fixture!("codex", "AE-2");
    let call = call_of(payload).unwrap();
    let lines = lines_of(bytes);
    let holding = lines
        .iter()
        .position(|l| l.contains(&format!(r#""call_id":"{call}""#)))
        .unwrap();
    let plain = read(None, Window::whole(bytes), Some(&call)).unwrap();
    assert!(!in_view(&plain, RULE));
    let said = serde_json::json!({"timestamp": "2026-12-01T14:23:10.000Z", "type": "response_item",
        "payload": {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": RULE}]}});
    let mut later = lines.clone();
    later.push(said.to_string());
    later.push(lines[holding].clone());
    let live = read(None, Window::whole(&joined(&later)), Some(&call)).unwrap();
    assert!(live.call_seen);
    assert_eq!(live.pieces, plain.pieces);
}

#[test]
fn with_no_call_named_a_newest_entry_that_copies_an_earlier_one_is_an_error() {
    // A copy of the rule's entry, written before the compaction, appended at the end (as
    // Claude Code appends copies when a session is reopened in an editor): with no call
    // named, the walk started from it and led back into what the compaction took out,
    // which put the rule in view.
    let (_, bytes, _) = fixture!("claude-code", "AE-1");
    let lines = lines_of(bytes);
    let plain = read(None, Window::whole(bytes), None).unwrap();
    assert!(plain.compaction.is_some());
    assert!(!in_view(&plain, RULE));
    let rule_line = lines
        .iter()
        .position(|l| l.contains("Never run touch gate-marker") && l.contains(r#""type":"user""#))
        .unwrap();
    let boundary = lines
        .iter()
        .position(|l| l.contains("compact_boundary"))
        .unwrap();
    assert!(rule_line < boundary);
    let mut copied = lines.clone();
    copied.push(lines[rule_line].clone());
    let bad = joined(&copied);
    match read(None, Window::whole(&bad), None) {
        Err(Failure::Invalid { at, problem }) => {
            assert_eq!(problem, Problem::NewestIsCopy);
            assert_eq!(at, line_start(&bad, copied.len()));
        }
        other => panic!("{other:?}"),
    }
    // Read from the end, in windows: the same answer.
    for size in (1..bad.len()).step_by(211) {
        let offset = bad.len() - size;
        let window = Window {
            head: Window::whole(&bad).head,
            tail: &bad[offset..],
            offset: offset as u64,
        };
        match read(None, window, None) {
            Err(Failure::NeedMore) => {}
            Err(Failure::Invalid { problem, .. }) => assert_eq!(problem, Problem::NewestIsCopy),
            other => panic!("{size}: {other:?}"),
        }
    }
    // A call named is walked from its own entry: the copy changes nothing.
    let (_, _, payload) = fixture!("claude-code", "AE-1");
    let call = call_of(payload).unwrap();
    let live = read(None, Window::whole(&bad), Some(&call)).unwrap();
    assert!(!in_view(&live, RULE));
}

#[test]
fn a_fork_of_a_compacted_session_holds_its_preserved_entries_on_its_chain() {
    // `claude -p --resume S --fork-session` after `/compact`: the fork's file opens with
    // the boundary, the summary and the preserved entry ("Noted."), copied under their
    // uuids, the preserved entry a link of the chain after the summary. It was read as a
    // boundary listing an entry written after it (an error at every call of the fork).
    let (name, bytes, payload) = fixture!("claude-code", "FK-1");
    let live = read_fixture(name, bytes, payload);
    assert!(live.compaction.is_some());
    assert!(!in_view(&live, RULE));
    let noted = live.pieces.iter().filter(|p| &*p.text == "Noted.").count();
    assert_eq!(noted, 1);
    // A preserved entry written after the boundary and not on the chain is still an error.
    let mut lines = lines_of(bytes);
    let at = lines
        .iter()
        .position(|l| l.contains(r#""text":"Noted.""#))
        .unwrap();
    let mut noted: Value = serde_json::from_str(&lines[at]).unwrap();
    let summary = noted["parentUuid"].clone();
    noted["parentUuid"] = Value::Null;
    lines[at] = noted.to_string();
    let next = at + 1;
    let mut child: Value = serde_json::from_str(&lines[next]).unwrap();
    child["parentUuid"] = summary;
    lines[next] = child.to_string();
    let bad = joined(&lines);
    match read(None, Window::whole(&bad), call_of(payload).as_deref()) {
        Err(Failure::Invalid { problem, .. }) => {
            assert_eq!(problem, Problem::PreservedAfterBoundary);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_boundary_that_names_missing_entries_is_an_error() {
    let (_, bytes, payload) = fixture!("claude-code", "AE-1");
    let call = call_of(payload);
    let mut lines = lines_of(bytes);
    // Line 11 is the assistant's "Noted.", which the boundary (line 17) preserves.
    assert!(lines[10].contains("Noted."));
    lines.remove(10);
    let bad = joined(&lines);
    match read(None, Window::whole(&bad), call.as_deref()) {
        Err(Failure::Invalid { at, problem }) => {
            assert_eq!(at, line_start(&bad, 16));
            assert_eq!(problem, Problem::PreservedMissing);
        }
        other => panic!("{other:?}"),
    }
    // A broken link of the chain: the summary (line 18) removed. Claude Code's loader
    // would go on from an entry before the boundary (the nearest in time), which is not
    // the entry written before the orphan (the boundary, timed after it): the chain ends
    // at the orphan, and nothing before it is in view, the rule included.
    let mut lines = lines_of(bytes);
    assert!(lines[17].contains("isCompactSummary"));
    lines.remove(17);
    let bad = joined(&lines);
    let live = read(None, Window::whole(&bad), call.as_deref()).unwrap();
    assert_eq!(live.compaction, None);
    assert!(!in_view(&live, RULE));
    assert!(live.pieces.iter().all(|p| p.at >= line_start(&bad, 18)));
    // While the window is not the whole file, the parent may be further back.
    let offset = line_start(&bad, 10);
    let window = Window {
        head: Window::whole(&bad).head,
        tail: &bad[offset as usize..],
        offset,
    };
    assert!(matches!(
        read(None, window, call.as_deref()),
        Err(Failure::NeedMore)
    ));
}

#[test]
fn a_codex_compaction_without_its_history_is_an_error() {
    let (_, bytes, _) = fixture!("codex", "AE-2");
    let mut lines = lines_of(bytes);
    let mut v: Value = serde_json::from_str(&lines[18]).unwrap();
    assert_eq!(v["type"], "compacted");
    v["payload"]
        .as_object_mut()
        .unwrap()
        .remove("replacement_history");
    lines[18] = v.to_string();
    let bad = joined(&lines);
    assert!(matches!(
        read(None, Window::whole(&bad), None),
        Err(Failure::Invalid { at, .. }) if at == line_start(&bad, 19)
    ));
}

#[test]
fn gemini_cli_rewinds_and_replaces_in_place() {
    let (_, bytes, _) = fixture!("gemini-cli", "C-2");
    let base = read(None, Window::whole(bytes), None).unwrap();
    assert!(in_view(&base, RULE));
    // The rule's message id, from the file.
    let rule_id = lines_of(bytes)
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "user" && v.to_string().contains("gate-marker without"))
        .and_then(|v| v["id"].as_str().map(str::to_string))
        .unwrap();
    let mut lines = lines_of(bytes);
    lines.push(format!(r#"{{"$rewindTo":"{rule_id}"}}"#));
    let rewound = read(None, Window::whole(&joined(&lines)), None).unwrap();
    assert!(!in_view(&rewound, RULE));
    let mut lines = lines_of(bytes);
    lines.push(format!(
        r#"{{"id":"{rule_id}","timestamp":"t","type":"user","content":[{{"text":"something else"}}]}}"#
    ));
    let replaced = read(None, Window::whole(&joined(&lines)), None).unwrap();
    assert!(!in_view(&replaced, RULE));
    assert_eq!(replaced.pieces.len(), base.pieces.len());
    // A notice is never sent.
    let mut lines = lines_of(bytes);
    lines.push(format!(
        r#"{{"id":"n-1","timestamp":"t","type":"info","content":"{RULE}"}}"#
    ));
    let noticed = read(None, Window::whole(&joined(&lines)), None).unwrap();
    assert_eq!(noticed.pieces, base.pieces);
}

#[test]
fn a_file_of_no_known_format_is_refused() {
    for bad in [
        &b""[..],
        b"{\"records\":[]}\n",
        b"not json\n",
        b"{\"type\":\"user\"}",
    ] {
        assert!(matches!(
            read(None, Window::whole(bad), None),
            Err(Failure::Invalid { at: 0, .. })
        ));
    }
    // Named, a format is read as that format: a Codex rollout is not a Claude Code file.
    let (_, bytes, _) = fixture!("codex", "C-1");
    assert!(matches!(
        read(Some(Harness::ClaudeCode), Window::whole(bytes), None),
        Err(Failure::Invalid { .. })
    ));
}

#[test]
fn a_problem_reads_as_the_one_line_it_names() {
    // Composed from the kind of entry, the key and what it must be; never from the file.
    for (problem, want) in [
        (
            Problem::Key {
                what: "a Claude Code entry",
                key: "parentUuid",
                must: "a string or null",
            },
            "a Claude Code entry: `parentUuid` must be a string or null",
        ),
        (
            Problem::NoKey {
                what: "a text part",
                key: "text",
            },
            "a text part: no `text`",
        ),
        (
            Problem::OwnKey {
                owner: "a part",
                key: "text",
                must: "a string",
            },
            "a part's `text` must be a string",
        ),
        (
            Problem::Bare {
                key: "toolCalls",
                must: "an array",
            },
            "`toolCalls` must be an array",
        ),
        (
            Problem::Unknown {
                what: "a message part",
                harness: Harness::GeminiCli,
            },
            "a message part of a kind this version of omission-gate does not know (written by a newer Gemini CLI?): it cannot tell whether the model sees it",
        ),
        (
            Problem::NotJson {
                column: 7,
                harness: "Codex",
            },
            "not valid JSON at column 7: expected one Codex entry a line",
        ),
    ] {
        assert_eq!(problem.to_string(), want);
    }
}

#[test]
fn a_transcript_read_as_another_harness_says_whose_it_is() {
    for (name, bytes, _) in fixtures() {
        let found = harness_of(name);
        for named in [Harness::ClaudeCode, Harness::Codex, Harness::GeminiCli] {
            let got = read(Some(named), Window::whole(bytes), None);
            if named == found {
                assert!(got.is_ok(), "{name}");
                continue;
            }
            // The other reader refuses it, and the message names both harnesses: never a
            // silent misreading, never what the wrong reader made of it.
            let Err(Failure::Invalid { at, problem }) = got else {
                panic!("{name} read as {named:?}: {got:?}");
            };
            assert_eq!(
                (at, problem),
                (0, Problem::OtherHarness { named, found }),
                "{name}"
            );
        }
    }
}

#[test]
fn a_call_made_from_codex_code_mode_is_judged_as_its_pending_exec_call() {
    // Codex 0.171.0 in code mode: the model's `exec` call (line 15) runs JavaScript that
    // calls `tools.exec_command`; the hook names that call `exec-<uuid>`, an id no line
    // records. The rollout records the `exec` call before the hook runs: the call is
    // seen, and the pending `exec`'s JavaScript is not context, the answered one's is.
    let (name, bytes, payload) = fixture!("codex", "K-2");
    let call = call_of(payload);
    assert!(call.as_deref().unwrap().starts_with("exec-"));
    let live = read_fixture(name, bytes, payload);
    assert!(live.call_seen);
    let calls: Vec<&str> = live
        .pieces
        .iter()
        .filter(|p| p.role == Role::Call)
        .map(|p| &*p.text)
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].contains("echo warm-up"), "{calls:?}");
    assert_eq!(live.terminal, None);
    // Before the `exec` call is written: not seen (the hook waits, then denies).
    let lines = lines_of(bytes);
    let before = joined(&lines[..14]);
    let live = read(None, Window::whole(&before), call.as_deref()).unwrap();
    assert!(!live.call_seen);
    // Once it has its output, no `exec` call runs the call: not seen either.
    let mut done = lines.clone();
    done.push(lines[12].replace("call_0003", "call_0006"));
    let live = read(None, Window::whole(&joined(&done)), call.as_deref()).unwrap();
    assert!(!live.call_seen);
    // An id of another shape is not tied to an `exec` call.
    let live = read(None, Window::whole(bytes), Some("exec-0006")).unwrap();
    assert!(!live.call_seen);
}

/// Asserts that reading `lines` for `call` fails at 1-based line `n` with `problem`.
fn refused_at(lines: &[String], call: Option<&str>, n: usize, problem: Problem) {
    let bytes = joined(lines);
    let got = read(None, Window::whole(&bytes), call);
    assert_eq!(got, Err(Failure::at(line_start(&bytes, n), problem)));
}

#[test]
fn a_codex_code_mode_call_is_not_tied_to_one_of_two_pending_exec_calls() {
    // The first `exec` call's output (line 13) replaced by a user message: two `exec`
    // calls of two responses have no output, and either may make the call.
    let (_, bytes, payload) = fixture!("codex", "K-2");
    let call = call_of(payload);
    let mut lines = lines_of(bytes);
    lines[12] = lines[7].clone();
    refused_at(&lines, call.as_deref(), 15, Problem::CodexExecAmbiguous);
}

#[test]
fn a_codex_code_mode_call_whose_javascript_names_tty_may_start_a_terminal() {
    // The hook's `tool_input` does not carry `tty`: the `exec` call's JavaScript naming it
    // is taken as asking for a terminal, that of the pending `exec` call (line 15) or of
    // one beside it in the same response (line 10, its output on line 13 dropped).
    let (_, bytes, payload) = fixture!("codex", "K-2");
    let call = call_of(payload);
    for (line, cmd, exec) in [
        (14, "touch gate-marker", "call_0006"),
        (9, "echo warm-up", "call_0003"),
    ] {
        let mut lines = lines_of(bytes);
        let plain = format!(r#"{{cmd: \"{cmd}\"}}"#);
        let tty = format!(r#"{{cmd: \"{cmd}\", tty: true}}"#);
        lines[line] = lines[line].replace(&plain, &tty);
        assert!(lines[line].contains("tty"));
        if line == 9 {
            lines.remove(12);
        }
        let live = read(None, Window::whole(&joined(&lines)), call.as_deref()).unwrap();
        assert!(live.call_seen);
        assert_eq!(live.terminal.as_deref(), Some(exec));
    }
}

#[test]
fn a_codex_code_mode_call_that_loads_options_a_cell_stored_naming_tty_may_start_a_terminal() {
    // Code mode keeps values between cells: the warm-up cell (line 10) stores options
    // asking for a terminal, and the pending `exec` call's JavaScript (line 15) spreads
    // them into its command without naming `tty`.
    let (_, bytes, payload) = fixture!("codex", "K-2");
    let call = call_of(payload);
    let warm_up = r#"tools.exec_command({cmd: \"echo warm-up\"})"#;
    let gated = r#"tools.exec_command({cmd: \"touch gate-marker\"})"#;
    let loads = r#"tools.exec_command({...load(\"opts\"), cmd: \"touch gate-marker\"})"#;
    let with = |stored: &str, compacted: bool| {
        let mut lines = lines_of(bytes);
        let stores = format!(r#"store(\"opts\", {stored}); {warm_up}"#);
        lines[9] = lines[9].replace(warm_up, &stores);
        lines[14] = lines[14].replace(gated, loads);
        assert!(lines[9].contains("store(") && lines[14].contains("load("));
        if compacted {
            // The storing cell is before the last compaction: still read.
            lines.insert(
                14,
                r#"{"timestamp":"t","type":"compacted","payload":{"message":"summary","replacement_history":[]}}"#
                    .to_string(),
            );
        }
        read(None, Window::whole(&joined(&lines)), call.as_deref()).unwrap()
    };
    for compacted in [false, true] {
        let live = with("{tty: true}", compacted);
        assert!(live.call_seen);
        assert_eq!(live.terminal.as_deref(), Some("call_0006"), "{compacted}");
        // Stored options that do not name `tty`: nothing asks for a terminal.
        let live = with("{yield_time_ms: 100}", compacted);
        assert_eq!(live.terminal, None, "{compacted}");
    }
}

#[test]
fn a_codex_code_mode_call_while_a_yielded_cell_may_run_is_an_error() {
    // Codex 0.171.0: the first `exec` call's cell yielded (line 13, `Script running with
    // cell ID 1`) and went on; its JavaScript called `touch late-marker` while the second
    // `exec` call (line 15) ran. The call's id ties it to neither.
    let (_, bytes, payload) = fixture!("codex", "Y-4");
    let call = call_of(payload);
    let mut lines = lines_of(bytes);
    refused_at(&lines, call.as_deref(), 13, Problem::CodexCellRunning);
    // Once a `wait` for that cell shows it ended, the call is the pending `exec` call's.
    let wait = |payload: &str| {
        format!(r#"{{"timestamp":"t","type":"response_item","payload":{payload}}}"#)
    };
    lines.insert(13, wait(r#"{"type":"function_call","name":"wait","arguments":"{\"cell_id\":\"1\"}","call_id":"call_w"}"#));
    lines.insert(14, wait(r#"{"type":"function_call_output","call_id":"call_w","output":"Script completed\nWall time 3.0 seconds\nOutput:\n"}"#));
    let live = read(None, Window::whole(&joined(&lines)), call.as_deref()).unwrap();
    assert!(live.call_seen);
    // A `wait` that finds the cell still running leaves it running.
    lines[14] = lines[14].replace("Script completed", "Script running with cell ID 1");
    refused_at(&lines, call.as_deref(), 15, Problem::CodexCellRunning);
}

#[test]
fn a_codex_code_mode_call_while_a_cell_that_yielded_before_the_compaction_may_run_is_an_error() {
    // Y-4 with a compaction after the first cell yielded (line 13): the cell may still
    // run after it and make the call, so tying the call to the pending `exec` call is as
    // unsure as without the compaction.
    let (_, bytes, payload) = fixture!("codex", "Y-4");
    let call = call_of(payload);
    let mut lines = lines_of(bytes);
    lines.insert(
        13,
        r#"{"timestamp":"t","type":"compacted","payload":{"message":"summary","replacement_history":[]}}"#
            .to_string(),
    );
    refused_at(&lines, call.as_deref(), 13, Problem::CodexCellRunning);
    // Read from the compaction on, the file is asked for whole.
    let bytes = joined(&lines);
    let offset = line_start(&bytes, 14);
    let window = Window {
        head: Window::whole(&bytes).head,
        tail: &bytes[offset as usize..],
        offset,
    };
    assert_eq!(read(None, window, call.as_deref()), Err(Failure::NeedMore));
}

#[test]
fn a_codex_code_mode_call_while_its_cell_is_waited_on_is_judged_as_the_wait_call() {
    // Codex 0.171.0: the `exec` call's cell yielded (line 13) and the model called `wait`
    // for it (line 15); the cell's JavaScript made this call while the `wait` ran. The
    // context ends before that response; the `exec` call's JavaScript, sent to the model
    // since, is context.
    let (name, bytes, payload) = fixture!("codex", "W-3");
    let live = read_fixture(name, bytes, payload);
    assert!(live.call_seen);
    assert_eq!(live.terminal, None);
    assert!(
        live.pieces
            .iter()
            .any(|p| p.role == Role::Call && p.text.contains("touch late-marker")),
        "{:?}",
        live.pieces
    );
    assert!(!live.pieces.iter().any(|p| p.text.contains("20000")));
    let call = call_of(payload);
    let lines = lines_of(bytes);
    // A `wait` for another cell: this one may still run beside it.
    let other = lines
        .clone()
        .into_iter()
        .map(|l| l.replace(r#"\"cell_id\": \"1\""#, r#"\"cell_id\": \"2\""#))
        .collect::<Vec<_>>();
    assert_ne!(other, lines);
    refused_at(&other, call.as_deref(), 13, Problem::CodexCellRunning);
    // Before the `wait` call is written: no call runs the cell's (the hook waits).
    let live = read(None, Window::whole(&joined(&lines[..14])), call.as_deref()).unwrap();
    assert!(!live.call_seen);
    // The cell's JavaScript names `tty`: the `exec` call that started it may ask for a
    // terminal.
    let tty = lines
        .iter()
        .map(|l| l.replace("sleep 3", r#"sleep 3\", tty: \"1"#))
        .collect::<Vec<_>>();
    let live = read(None, Window::whole(&joined(&tty)), call.as_deref()).unwrap();
    assert_eq!(live.terminal.as_deref(), Some("call_0003"));
}

#[test]
fn a_codex_code_mode_call_after_a_compaction_reads_the_lines_before_only_if_a_cell_may_have_yielded()
 {
    // K-2 with a compaction before the pending `exec` call, and before it a line of a
    // kind the reader does not know. No line says a cell yielded: the lines before the
    // compaction are not read as JSON, so that line is never met (a long session's
    // rollout is not parsed whole at each call a code cell makes).
    let (_, bytes, payload) = fixture!("codex", "K-2");
    let call = call_of(payload);
    let odd = |said: &str| {
        format!(r#"{{"timestamp":"t","type":"no_such_entry","payload":{{"said":"{said}"}}}}"#)
    };
    let compacted = r#"{"timestamp":"t","type":"compacted","payload":{"message":"summary","replacement_history":[]}}"#;
    let mut lines = lines_of(bytes);
    lines.insert(13, odd("nothing"));
    lines.insert(14, compacted.to_string());
    let whole = joined(&lines);
    let live = read(None, Window::whole(&whole), call.as_deref());
    assert!(live.is_ok(), "{live:?}");
    // Once a line holds the words of a yielded cell, the lines before are read, the odd
    // one with them.
    lines[13] = odd("Script running with cell ID 7");
    let whole = joined(&lines);
    let got = read(None, Window::whole(&whole), call.as_deref());
    assert!(
        matches!(got, Err(Failure::Invalid { at, .. }) if at == line_start(&whole, 14)),
        "{got:?}"
    );
}

#[test]
fn a_subagents_response_after_its_results_on_a_model_that_is_its_own_refusal_fallback_is_an_error()
{
    // RF-3, the subagent's file: a response on `claude-opus-4-8-eap` wrote the rule and
    // called `echo probe`, whose result follows, and then a response on the same model
    // made the call. Run with `ANTHROPIC_DEFAULT_OPUS_MODEL=claude-opus-4-8-eap`, that
    // was a retry after a refusal, which the earlier response was not sent to.
    let bytes = include_bytes!(
        "../../tests/transcripts/claude-code/RF-3/subagents/agent-a7ea6e0c3e5db4f4f.jsonl"
    );
    let call = Some("toolu_000000000000000000000005");
    let sixth = line_start(bytes, 6);
    let read_in = |env: &[(&str, &str)]| {
        let fallback = RefusalFallback::of(|key| {
            env.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.to_string())
        });
        read_with(None, Window::whole(bytes), call, &fallback)
    };
    let opus = "ANTHROPIC_DEFAULT_OPUS_MODEL";
    let fable = "ANTHROPIC_DEFAULT_FABLE_MODEL";
    let off = "CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK";
    for env in [
        &[(opus, "claude-opus-4-8-eap")][..],
        &[(opus, " CLAUDE-OPUS-4-8-EAP[1m] ")],
        &[(opus, "claude-opus-4-8-eap"), (off, "0")],
        &[(opus, "claude-opus-4-8-eap"), (off, "")],
        &[(opus, "claude-opus-4-8-eap"), (fable, "claude-fable-5")],
        // The Fable variable names a model that may refuse; with no Opus one, the
        // fallback is the default Opus model, which such a name may be.
        &[(fable, "claude-opus-4-8-eap")],
    ] {
        let got = read_in(env);
        assert_eq!(
            got,
            Err(Failure::at(
                sixth,
                Problem::OwnRefusalFallback(if env.iter().any(|(k, _)| *k == opus) {
                    opus
                } else {
                    fable
                })
            )),
            "{env:?}"
        );
    }
    // The fallback off, another model its fallback, or a fallback that does not refuse:
    // the model's next response, which was sent the one before (the rule is in view).
    for env in [
        &[][..],
        &[(opus, "claude-opus-4-8-eap"), (off, "1")],
        &[(opus, "claude-opus-4-8-eap"), (off, " True ")],
        &[(opus, "claude-opus-4-8")],
        &[(opus, "claude-opus-4-8-eap-2")],
        &[(fable, "claude-opus-4-8-eap"), (opus, "claude-opus-4-8")],
        &[(fable, "claude-fable-5")],
    ] {
        let live = read_in(env).unwrap_or_else(|e| panic!("{env:?}: {e:?}"));
        assert!(in_view(&live, RULE), "{env:?}");
    }
}

/// Gemini CLI's memory loader reads `@word` as an import where the word starts with `.`,
/// `/` or a letter and the `@` starts the text or follows a space, tab or line break.
#[test]
fn a_gemini_cli_instruction_file_is_cut_at_each_import() {
    let cut = super::gemini::sent_of_file;
    assert_eq!(cut("no imports"), ["no imports"]);
    assert_eq!(cut("ask @alice. first"), ["ask ", " first"]);
    assert_eq!(cut("@./a.md\tb\n@/x c"), ["", "\tb\n", " c"]);
    // Not an import: an address, a number, a lone `@`, a word after a no-break space.
    let kept = "mail bob@example.com, @1, @ or\u{a0}@x";
    assert_eq!(cut(kept), [kept]);
    assert_eq!(cut("é @b"), ["é ", ""]);
    assert_eq!(cut("x @@y z"), ["x @@y z"]);
}
