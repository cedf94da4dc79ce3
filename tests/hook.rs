//! `omission-gate hook`: real-shaped payloads from each harness's documentation (see
//! docs/hooks.md) for PASS, BLOCK, ERROR, bad stores and malformed stdin, with the exact
//! stdout, stderr and exit code each must produce.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use omission_gate::{Format, Mode, Report};

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_omission-gate");
const STORE: &str = "examples/store.json";

struct Out {
    stdout: String,
    stderr: String,
    code: i32,
}

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn run(args: &[&str], payload: &str) -> Out {
    let out = common::output_of(command(args), Some(payload.as_bytes()));
    Out {
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        code: out.status.code().unwrap(),
    }
}

fn hook(harness: &str, payload: &str) -> Out {
    run(&["hook", harness, "--store", STORE], payload)
}

/// The sha256 `omission-gate check` prints for this action on the example store: the
/// deny reason must cite the same report.
fn check_sha(action: &str) -> String {
    let out = command(&["check", STORE, "--action", action])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let last = text.lines().last().unwrap();
    last.strip_prefix("sha256    : ").unwrap().to_string()
}

fn invalid_sha(message: &str) -> String {
    let bytes = Report::invalid_input(Mode::Check, message).render(Format::Text);
    omission_gate::verify(&bytes).unwrap()
}

fn json_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The JSON deny Claude Code and Codex read on stdout with exit 0 (the fallback).
fn claude_deny(reason: &str) -> String {
    format!(
        "{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"{}\"}}}}\n",
        json_escape(reason)
    )
}

/// The JSON deny Gemini CLI reads on stdout with exit 0 (the fallback).
fn gemini_deny(reason: &str) -> String {
    format!(
        "{{\"decision\":\"deny\",\"reason\":\"{}\"}}\n",
        json_escape(reason)
    )
}

/// A deny, the same for every harness: nothing on stdout, the reason on stderr, exit 2.
#[track_caller]
fn assert_denied(out: &Out, reason: &str, what: &str) {
    assert_eq!(out.stdout, "", "{what}: stdout");
    assert_eq!(out.stderr, format!("{reason}\n"), "{what}: stderr");
    assert_eq!(out.code, 2, "{what}: exit");
}

/// Asserts that the hook blocked the call on a finding of `code` (`dropped-binding-constraint`).
fn assert_blocked(out: &Out, code: &str, what: &str) {
    let block = format!("BLOCK ({code})");
    assert!(out.stderr.contains(&block), "{what}: {}", out.stderr);
}

const HARNESSES: [&str; 3] = ["claude-code", "codex", "gemini-cli"];

/// A pre-tool payload as each harness documents it.
fn payload(harness: &str, tool: &str, input: &str) -> String {
    match harness {
        "claude-code" => format!(
            r#"{{"session_id":"abc123","transcript_path":"/home/u/.claude/projects/proj/abc123.jsonl","cwd":"/home/u/proj","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"{tool}","tool_input":{input},"tool_use_id":"toolu_01ABC123"}}"#
        ),
        "codex" => format!(
            r#"{{"session_id":"019d0001-aaaa","turn_id":"019d036d-bbbb","transcript_path":null,"cwd":"/repo","hook_event_name":"PreToolUse","model":"gpt-5-codex","permission_mode":"default","tool_name":"{tool}","tool_input":{input},"tool_use_id":"call_abc"}}"#
        ),
        "gemini-cli" => format!(
            r#"{{"session_id":"s-1","transcript_path":"/abs/path/transcript.json","cwd":"/repo","hook_event_name":"BeforeTool","timestamp":"2026-11-01T10:30:00Z","tool_name":"{tool}","tool_input":{input},"mcp_context":{{"server_name":"billing","tool_name":"refunds_create","command":"billing-mcp"}}}}"#
        ),
        other => panic!("{other}"),
    }
}

const REFUND_TOOL: &str = "mcp__billing__refunds_create";
const BLOCK_ADVICE: &str = "Records the compactor dropped bind this call: they are listed under restore and shown below. Take them into account and re-plan; this call stays denied until they are restored to the record store's kept set";
const INVALID_ADVICE: &str = "omission-gate cannot read what it judges calls by (the reason says what), so it denied this call, and it will deny each call it is asked about until that is fixed: tell the user what the reason says; retrying will not help";
const RESHAPE_ADVICE: &str = "omission-gate cannot judge this call as it is made, so it fails closed: make it again the way the reason says; if that cannot be done, tell the user what the reason says";
const PAYLOAD_ADVICE: &str = "omission-gate cannot use the hook payload the harness sent, so it denied this call, and it will deny each call it is asked about until that is fixed: tell the user what the reason says (`omission-gate doctor` checks how the hook is wired); retrying will not help";
const MISNAMED_ADVICE: &str = "omission-gate cannot tell which rules in the record store bind this call (the reason says why), so it denied it, and it will deny each call of this tool until the record store (or the tool list the hook is given) is fixed: tell the user what the reason says; retrying will not help";
const UNDECIDED_ADVICE: &str = "omission-gate cannot decide, so it fails closed: supply what the reason says is missing (a tool parameter or a recorded fact) or ask the user";

fn refund_block_reason() -> String {
    let sha = check_sha(
        r#"{"tool":"mcp__billing__refunds_create","params":{"amount":8400,"currency":"USD"}}"#,
    );
    [
        format!("omission-gate denied this call: BLOCK (dropped-binding-constraint); report sha256 {sha}"),
        BLOCK_ADVICE.to_string(),
        r#"reason    : dropped-binding-constraint: dropped policy 'r2' (require_approval) scopes to mcp__billing__refunds_create and resolves TRUE here (amount = 8400 gt 5000); its text: "Refunds over 5,000 need a human approver.""#.to_string(),
        "restore   : r2".to_string(),
        r#"record    : r2 (policy, seq 2): require_approval on refunds.create, mcp__billing__refunds_create, mcp_billing_refunds_create when amount gt 5000; text: Refunds over 5,000 need a human approver."#.to_string(),
    ]
    .join("\n")
}

fn invalid_reason(message: &str) -> String {
    invalid_reason_with(message, INVALID_ADVICE)
}

/// The deny for a payload the harness sent that the adapter cannot use.
fn payload_reason(message: &str) -> String {
    invalid_reason_with(message, PAYLOAD_ADVICE)
}

fn invalid_reason_with(message: &str, advice: &str) -> String {
    [
        format!(
            "omission-gate denied this call: ERROR (invalid-input); report sha256 {}",
            invalid_sha(message)
        ),
        advice.to_string(),
        format!("reason    : invalid-input: {message}"),
    ]
    .join("\n")
}

#[test]
fn pass_prints_nothing_and_exits_0_for_every_harness() {
    for h in HARNESSES {
        for (tool, input) in [
            (REFUND_TOOL, r#"{"amount":120,"currency":"USD"}"#),
            (
                "Bash",
                r#"{"command":"npm test","description":"Run tests","timeout":120000}"#,
            ),
            ("run_shell_command", r#"{"command":"rm -rf build"}"#),
        ] {
            let out = hook(h, &payload(h, tool, input));
            assert_eq!(
                (out.stdout.as_str(), out.stderr.as_str(), out.code),
                ("", "", 0),
                "{h} {tool}"
            );
        }
    }
}

#[test]
fn block_denies_with_the_binding_record_its_restore_ids_and_the_report_sha() {
    let reason = refund_block_reason();
    for h in HARNESSES {
        let out = hook(
            h,
            &payload(h, REFUND_TOOL, r#"{"amount":8400,"currency":"USD"}"#),
        );
        assert_denied(&out, &reason, h);
    }
}

#[test]
fn a_replayed_effect_is_denied() {
    let sha = check_sha(r#"{"tool":"Bash","params":{"command":"./scripts/send-invoice.sh 7741"}}"#);
    let reason = [
        format!("omission-gate denied this call: BLOCK (dropped-effect-replay); report sha256 {sha}"),
        BLOCK_ADVICE.to_string(),
        r#"reason    : dropped-effect-replay: dropped effect 'r3' records that Bash already ran with {"command":"./scripts/send-invoice.sh 7741"} (seq 3); this call replays a non-idempotent side effect the agent can no longer see"#.to_string(),
        "restore   : r3".to_string(),
        r#"record    : r3 (effect, seq 3): Bash already ran with {"command":"./scripts/send-invoice.sh 7741"}; text: The corrected invoice for 7741 was already emailed."#.to_string(),
    ]
    .join("\n");
    let out = hook(
        "claude-code",
        &payload(
            "claude-code",
            "Bash",
            r#"{"command":"./scripts/send-invoice.sh 7741","description":"Send the invoice"}"#,
        ),
    );
    // The effect matches on `command` alone: other params do not hide the replay.
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("dropped-effect-replay"),
        "{}",
        out.stderr
    );
    let out = hook(
        "codex",
        &payload(
            "codex",
            "Bash",
            r#"{"command":"./scripts/send-invoice.sh 7741"}"#,
        ),
    );
    assert_denied(&out, &reason, "codex");
}

#[test]
fn error_denies_and_says_what_is_missing() {
    let sha = check_sha(r#"{"tool":"mcp__billing__payouts_send","params":{"amount":10}}"#);
    let reason = [
        format!("omission-gate denied this call: ERROR (unresolved-field); report sha256 {sha}"),
        UNDECIDED_ADVICE.to_string(),
        r#"reason    : unresolved-field: kept policy 'r4' (deny) scopes to mcp__billing__payouts_send but reads field `payee.verified` that no param and no fact resolves (payee.verified = ? ne true); the gate cannot decide, so it fails closed; its text: "Never pay out to an unverified payee.""#.to_string(),
    ]
    .join("\n");
    for h in HARNESSES {
        let out = hook(
            h,
            &payload(h, "mcp__billing__payouts_send", r#"{"amount":10}"#),
        );
        assert_denied(&out, &reason, h);
        // With the field supplied the same tool passes.
        let out = hook(
            h,
            &payload(
                h,
                "mcp__billing__payouts_send",
                r#"{"amount":10,"payee":{"verified":true}}"#,
            ),
        );
        assert_eq!((out.stdout.as_str(), out.code), ("", 0), "{h}");
    }
}

#[test]
fn malformed_stdin_is_a_denial_never_a_silent_pass() {
    let cases: [(&str, &str); 10] = [
        (
            "{\"hook_event_name\":",
            "payload:1:19: EOF while parsing a value",
        ),
        (
            "",
            "payload: stdin: empty: the harness sent no hook payload",
        ),
        (
            "[1,2]",
            "payload: stdin: the hook payload must be a JSON object",
        ),
        (
            r#"{"hook_event_name":"PreToolUse","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}"#,
            "payload:1:62: duplicate key `hook_event_name` in one object",
        ),
        (
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#,
            "payload: key `tool_input`: missing",
        ),
        (
            r#"{"hook_event_name":"PreToolUse","tool_name":"","tool_input":{}}"#,
            "payload: key `tool_name`: must be a non-empty string",
        ),
        // A padded name is no tool's: a rule on `Bash` would not bind it.
        (
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash ","tool_input":{"command":"ls"}}"#,
            "payload: key `tool_name`: `Bash ` has white space at an end (or nothing else): no harness names a tool that way, and no rule could bind the call (pass the payload on as the harness sent it)",
        ),
        (
            r#"{"hook_event_name":"PreToolUse","tool_name":" ","tool_input":{}}"#,
            "payload: key `tool_name`: ` ` has white space at an end (or nothing else): no harness names a tool that way, and no rule could bind the call (pass the payload on as the harness sent it)",
        ),
        // So is a name with a control character: the call passed unjudged.
        (
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash\u0000","tool_input":{"command":"ls"}}"#,
            "payload: key `tool_name`: `Bash\\u{0000}` has a control character: no harness names a tool that way, and no rule could bind the call (pass the payload on as the harness sent it)",
        ),
        (
            r#"{"hook_event_name":"PreToolUse","tool_name":"Ba\u001bsh","tool_input":{"command":"ls"}}"#,
            "payload: key `tool_name`: `Ba\\u{001b}sh` has a control character: no harness names a tool that way, and no rule could bind the call (pass the payload on as the harness sent it)",
        ),
    ];
    for (stdin, message) in cases {
        let out = hook("claude-code", stdin);
        assert_denied(&out, &payload_reason(message), stdin);
    }
}

#[test]
fn a_codex_payload_naming_the_shell_as_the_model_calls_it_is_a_denial() {
    // Codex 0.171.0 sends its shell calls to hooks as `Bash`. A payload naming the shell
    // `exec_command` comes from a Codex the gate does not know: a rule on `Bash` would not
    // bind the call, which passed unjudged.
    for name in ["exec_command", "shell", "shell_command", "local_shell"] {
        let out = hook("codex", &payload("codex", name, r#"{"cmd":"ls"}"#));
        let message = format!(
            "payload: key `tool_name`: `{name}` is the model's name for Codex's shell, which Codex 0.171.0 sends to hooks as `Bash`: this Codex sends its shell calls otherwise, and rules written for `Bash` would not bind them: run a Codex the gate was tested with (0.171.0) until it knows this one"
        );
        assert_denied(&out, &payload_reason(&message), name);
    }
    // Another harness may have a tool of that name.
    let out = hook(
        "claude-code",
        &payload("claude-code", "shell", r#"{"cmd":"ls"}"#),
    );
    assert!(!out.stderr.contains("Codex's shell"), "{}", out.stderr);
}

#[test]
fn arguments_that_cannot_be_read_deny_this_call_only() {
    // The call's own arguments, not the wiring: the same call made another way may pass,
    // and the model is told so (not that every call is denied from now on).
    let input = r#"{"amount":1,"a.b":1,"a":{"b":2}}"#;
    let message = "payload: key `tool_input`: the action's `params` give `a.b` two different values, as a key with dots and through nested objects: the gate cannot tell which one the tool reads, so send it once";
    for h in HARNESSES {
        let out = hook(h, &payload(h, REFUND_TOOL, input));
        assert_denied(&out, &invalid_reason_with(message, RESHAPE_ADVICE), h);
        assert!(!out.stderr.contains("each call"), "{h}: {}", out.stderr);
    }
}

#[test]
fn a_codex_patch_run_through_the_shell_is_judged_as_a_patch() {
    // Codex 0.171.0 applies `apply_patch <<'EOF' ... EOF` sent to its shell tool itself,
    // and the hook sees `Bash`: a store with rules on `apply_patch` cannot let it through
    // as a shell command.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-shell-patch");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("store.json");
    std::fs::write(
        &store,
        r#"{"records": [{"id": "no-patches", "seq": 1, "kind": "policy", "scope": ["apply_patch"], "predicate": {"all": []}, "effect": "deny", "text": "Never patch files here."}], "kept": ["no-patches"]}"#,
    )
    .unwrap();
    let store = store.to_str().unwrap();
    let patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x\n+x\n*** End Patch\nEOF";
    let call = |h: &str, store: &str, command: &str| {
        let input = serde_json::json!({ "command": command }).to_string();
        run(&["hook", h, "--store", store], &payload(h, "Bash", &input))
    };
    let out = call("codex", store, patch);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("the command runs `apply_patch` with a patch, which Codex applies as a patch while the hook sees a `Bash` call"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(RESHAPE_ADVICE), "{}", out.stderr);
    // `applypatch`, after a `cd`, is the same.
    let out = call(
        "codex",
        store,
        &format!(
            "cd src && {}",
            patch.replacen("apply_patch", "applypatch", 1)
        ),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    // The name against its heredoc (`apply_patch<<EOF`): Codex 0.171.0 applied it as a
    // patch (seen), and the hook passed it as a shell command.
    for joined in [
        "apply_patch<<EOF",
        "apply_patch<<'EOF'",
        "cd src&&applypatch<<\"EOF\"",
    ] {
        let command = patch.replacen("apply_patch <<'EOF'", joined, 1);
        let out = call("codex", store, &command);
        assert_eq!(out.code, 2, "{joined}: {}", out.stderr);
    }
    // A store that names the patch tool as Claude Code does (`Write`), which a direct
    // `apply_patch` call is denied for, is no way round: the shell patch passed.
    let written = dir.join("write.json");
    std::fs::write(
        &written,
        r#"{"records": [{"id": "no-writes", "seq": 1, "kind": "policy", "scope": ["Write"], "predicate": {"all": []}, "effect": "deny", "text": "Never write files here."}], "kept": []}"#,
    )
    .unwrap();
    let out = call("codex", written.to_str().unwrap(), patch);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the record store has rules on `apply_patch` calls (or on a name another harness gives it, `Write` or `Edit`)"),
        "{}",
        out.stderr
    );
    // Guarded tools that list the patch tool (not `Bash`) and a store of a dropped
    // summary: a direct `apply_patch` call is blocked, so the shell patch must not pass
    // (it did: `Bash` was outside the guarded tools).
    let summary = dir.join("summary.json");
    std::fs::write(
        &summary,
        r#"{"records": [{"id": "earlier", "seq": 1, "kind": "summary", "text": "Earlier turns: never patch the release branch."}], "kept": []}"#,
    )
    .unwrap();
    for tools in ["apply_patch", "apply*", "Write"] {
        let input = serde_json::json!({ "command": patch }).to_string();
        let out = run(
            &[
                "hook",
                "codex",
                "--store",
                summary.to_str().unwrap(),
                "--tools",
                tools,
            ],
            &payload("codex", "Bash", &input),
        );
        assert_eq!(out.code, 2, "{tools}: {}", out.stderr);
        assert!(
            out.stderr.contains("or the guarded tools list it"),
            "{tools}: {}",
            out.stderr
        );
    }
    // A command that only names the tool, a store without rules on patches, and the other
    // harnesses (which have no such shortcut) pass.
    assert_eq!(
        call("codex", store, "grep -n apply_patch notes.txt").code,
        0
    );
    assert_eq!(call("codex", STORE, patch).code, 0);
    assert_eq!(call("claude-code", store, patch).code, 0);
}

/// A harness reads exit 0 as "run the call": a hook command that asks for help or the
/// version (a flag pasted in by mistake) must deny, with a reason the harness shows;
/// the same flags elsewhere are successes.
#[test]
fn a_hook_command_that_asks_for_help_denies() {
    let payload = payload("claude-code", "Bash", r#"{"command": "ls"}"#);
    for args in [
        &["hook", "claude-code", "--store", STORE, "--help"][..],
        &["hook", "gemini-cli", "--store", STORE, "-h"],
        &["hook", "--help"],
        &["--quiet", "hook", "codex", "--help"],
        &["-V", "hook", "codex"],
        // The PreCompact hook's name as a flag's value is not the PreCompact hook.
        &[
            "hook",
            "claude-code",
            "--store",
            "claude-code-precompact",
            "--help",
        ],
    ] {
        let out = run(args, &payload);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(
            out.stderr
                .contains("so the call is denied: remove `--help`"),
            "{args:?}: {}",
            out.stderr
        );
    }
    // A subcommand's --version is not a flag clap knows there: a usage error, which
    // denies as any other does.
    let out = run(&["hook", "codex", "--version"], &payload);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("unexpected argument '--version'"),
        "{}",
        out.stderr
    );
    // Nor as a usage error's: exit 1 is PreCompact's never-block, which a tool hook's
    // harness reads as run the call.
    let args = [
        "hook",
        "codex",
        "--kept",
        "claude-code-precompact",
        "--bogus",
    ];
    assert_eq!(run(&args, &payload).code, 2);
    for args in [
        &["--help"][..],
        &["--version"],
        &["help", "hook"],
        &["check", "--help"],
        &["hook", "claude-code-precompact", "--help"],
    ] {
        let out = run(args, "");
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(out.stderr.is_empty(), "{args:?}: {}", out.stderr);
    }
}

#[test]
fn a_payload_for_another_event_is_denied() {
    // Each says how to fix the wiring: the adapter of the harness that sent the payload,
    // or the event to wire this one under.
    for (h, event, wanted, fix) in [
        (
            "claude-code",
            "PostToolUse",
            "PreToolUse",
            "wire this adapter under `PreToolUse` only",
        ),
        (
            "claude-code",
            "PreCompact",
            "PreToolUse",
            "wire `omission-gate hook claude-code-precompact` under `PreCompact`, and this adapter under `PreToolUse` only (`omission-gate init claude-code` writes both)",
        ),
        (
            "codex",
            "BeforeTool",
            "PreToolUse",
            "a `BeforeTool` payload is Gemini CLI's: write `omission-gate hook gemini-cli` in its hook command (`omission-gate init gemini-cli` writes it)",
        ),
        (
            "gemini-cli",
            "PreToolUse",
            "BeforeTool",
            "a `PreToolUse` payload is Claude Code's or Codex's: write `omission-gate hook claude-code` or `omission-gate hook codex` in its hook command (`omission-gate init claude-code` or `init codex` writes it)",
        ),
        (
            "gemini-cli",
            "AfterTool",
            "BeforeTool",
            "wire this adapter under `BeforeTool` only",
        ),
    ] {
        let stdin = format!(
            r#"{{"hook_event_name":"{event}","tool_name":"Bash","tool_input":{{"command":"ls"}}}}"#
        );
        let message = format!(
            "payload: key `hook_event_name`: `{event}` is not `{wanted}`, the event the {h} adapter answers: {fix}"
        );
        let out = hook(h, &stdin);
        assert_denied(&out, &payload_reason(&message), h);
    }
    let out = hook("codex", r#"{"tool_name":"Bash","tool_input":{}}"#);
    let message = "payload: key `hook_event_name`: missing: expected `PreToolUse`";
    assert_denied(&out, &payload_reason(message), "codex");
}

#[test]
fn an_unreadable_or_invalid_store_is_a_denial() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-stores");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("dup.jsonl");
    std::fs::write(
        &bad,
        "{\"id\":\"a\",\"seq\":1,\"kind\":\"chatter\"}\n{\"id\":\"a\",\"seq\":2,\"kind\":\"chatter\"}\n",
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    let no_kept = dir.join("no-kept.jsonl");
    std::fs::write(&no_kept, "{\"id\":\"a\",\"seq\":1,\"kind\":\"chatter\"}\n").unwrap();
    let no_kept = no_kept.to_str().unwrap();
    let cases = [
        (
            vec!["--store", "examples/no-such-store.json"],
            format!("examples/no-such-store.json: input: cannot read: {MISSING_HERE}"),
        ),
        (
            vec!["--store", bad],
            format!("{bad}: record `a`: duplicate id"),
        ),
        (
            vec!["--store", no_kept],
            format!(
                "{no_kept}: kept: retention=given needs the kept ids, and a JSON Lines store holds records only: give --kept (or have them computed from the harness's transcript: check --transcript FILE, hook --kept-from transcript)"
            ),
        ),
        (
            vec!["--store", STORE, "--kept", "r1,zz"],
            "--kept: kept id `zz` names no record: each kept id is a record's `id`: remove it from the kept ids, or add the record".to_string(),
        ),
        (
            vec!["--store", "-"],
            "stdin: --store `-`: names standard input, already read for the hook payload (it is read once: put one of them in a file)".to_string(),
        ),
    ];
    for h in HARNESSES {
        for (flags, message) in &cases {
            let mut args = vec!["hook", h];
            args.extend(flags);
            let out = run(&args, &payload(h, "Bash", r#"{"command":"ls"}"#));
            assert_denied(&out, &invalid_reason(message), &format!("{h} {flags:?}"));
        }
    }
}

#[test]
fn kept_and_retention_flags_change_the_compaction() {
    let p = payload(
        "claude-code",
        REFUND_TOOL,
        r#"{"amount":8400,"currency":"USD"}"#,
    );
    let out = run(
        &[
            "hook",
            "claude-code",
            "--store",
            STORE,
            "--kept",
            "r1,r2,r3,r4,r5,r6,r7",
        ],
        &p,
    );
    assert_eq!((out.stdout.as_str(), out.code), ("", 0));
    let out = run(
        &[
            "hook",
            "claude-code",
            "--store",
            STORE,
            "--retention",
            "recency:6",
        ],
        &p,
    );
    assert_eq!((out.stdout.as_str(), out.code), ("", 0));
    let out = run(
        &[
            "hook",
            "claude-code",
            "--store",
            STORE,
            "--retention",
            "recency:5",
        ],
        &p,
    );
    assert!(
        out.stderr.contains("dropped-binding-constraint"),
        "{}",
        out.stderr
    );
}

#[test]
fn tools_limits_which_calls_are_judged() {
    let p = |tool: &str| payload("gemini-cli", tool, r#"{"amount":8400}"#);
    let args = [
        "hook",
        "gemini-cli",
        "--store",
        STORE,
        "--tools",
        "mcp__billing__payouts_*",
    ];
    // Not a guarded tool, and no record names it: outside the gate's charge, as if the
    // matcher had not matched.
    let out = run(&args, &p("mcp__notes__append"));
    assert_eq!(
        (out.stdout.as_str(), out.stderr.as_str(), out.code),
        ("", "", 0)
    );
    // Not a guarded tool, but a rule in the store scopes to it: never out of sight.
    let out = run(&args, &p(REFUND_TOOL));
    assert!(
        out.stderr
            .starts_with("omission-gate denied this call: BLOCK (dropped-binding-constraint)"),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 2);
    let out = run(&args, &p("mcp__billing__payouts_send"));
    assert!(
        out.stderr
            .starts_with("omission-gate denied this call: ERROR (unresolved-field)"),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 2);
}

/// `--tools` reads the same in every directory the hook runs in (Claude Code runs it in
/// the session's current directory): a plain name is a tool's even where a file of that
/// name is there (`--tools Bash` was refused in a directory holding a file `Bash`), and a
/// name that looks like a file's is refused even where no such file is (`--tools
/// tools.json`, meant as the file, guarded one tool named `tools.json`, and a call of
/// any other tool no record names passed unjudged).
#[test]
fn tools_reads_the_same_in_every_directory() {
    let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-tools-cwd");
    let (with_file, without) = (base.join("with"), base.join("without"));
    for dir in [&with_file, &without] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(with_file.join("Bash"), "").unwrap();
    std::fs::write(with_file.join("tools.json"), r#"["Write"]"#).unwrap();
    let store = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(STORE);
    let store = store.to_str().unwrap();
    let call_in = |harness: &str, dir: &std::path::Path, tools: &str| {
        let mut c = Command::new(BIN);
        c.args(["hook", harness, "--store", store, "--tools", tools])
            .current_dir(dir);
        let (tool, input) = match harness {
            "gemini-cli" => ("write_file", r#"{"file_path":"a","content":"b"}"#),
            _ => ("Write", r#"{"file_path":"a","content":"b"}"#),
        };
        let payload = payload(harness, tool, input);
        let out = common::output_of(c, Some(payload.as_bytes()));
        let stderr = String::from_utf8(out.stderr).unwrap();
        (out.status.code().unwrap(), stderr)
    };
    let call = |dir: &std::path::Path, tools: &str| call_in("claude-code", dir, tools);
    for dir in [&with_file, &without] {
        // A tool's name: `Write` is not guarded and no record names it.
        assert_eq!(call(dir, "Bash"), (0, String::new()), "{}", dir.display());
        // A file's name, whether or not the file is there.
        for tools in ["tools.json", "Bash,./tools"] {
            let seen = tools.rsplit(',').next().unwrap();
            let message = format!(
                "--tools: `{seen}` looks like a file's name (a tool's name has no `/` and no ending such as `.json`), and --tools reads a file only as `@FILE`, whether or not the file is there; as written it names a tool `{seen}`: write --tools @{seen} for the file (or, for a tool of that name, give the list as a JSON array, --tools '[\"{seen}\"]')"
            );
            let (code, stderr) = call(dir, tools);
            assert_eq!(code, 2, "{tools} in {}: {stderr}", dir.display());
            assert_eq!(stderr, format!("{}\n", invalid_reason(&message)), "{tools}");
        }
        // As a JSON array, the name is a tool's.
        assert_eq!(call(dir, r#"["tools.json"]"#), (0, String::new()));
        // So is a name of MCP form with such an ending: Gemini CLI keeps an MCP tool's
        // `.` (`files.list` of a Drive server); it was refused, and every call denied.
        let gemini = "mcp_drive_files.list,mcp_sheets_export.csv";
        assert_eq!(call(dir, gemini), (0, String::new()), "{}", dir.display());
        let gemini_call = call_in("gemini-cli", dir, gemini);
        assert_eq!(gemini_call, (0, String::new()), "{}", dir.display());
        // In Gemini CLI, a name with a `.` and an ending a list file may have too is a
        // tool's (its MCP tools keep their `.`). Claude Code and Codex give no tool a
        // name with a `.`: there it was meant as a file (`--tools tools.list` guarded a
        // tool `tools.list`, and a call of any tool no record names passed unjudged).
        let listed = "notes.list,notes.text";
        assert_eq!(call_in("gemini-cli", dir, listed), (0, String::new()));
        for (harness, title) in [("claude-code", "Claude Code"), ("codex", "Codex")] {
            for (tools, seen) in [(listed, "notes.list"), ("Bash, tools.text", "tools.text")] {
                let message = format!(
                    "--tools: `{seen}` has a `.`, and {title} gives no tool a name with one (its tool names are ASCII letters, digits, `_` and `-`), so as written it guards no tool the hook sees; --tools reads a file only as `@FILE`: write --tools @{seen} for the file"
                );
                let (code, stderr) = call_in(harness, dir, tools);
                assert_eq!(code, 2, "{harness} {tools}: {stderr}");
                assert_eq!(stderr, format!("{}\n", invalid_reason(&message)), "{tools}");
            }
            // As a JSON array, or a pattern of another syntax (its own path), it is
            // read as before.
            assert_eq!(
                call_in(harness, dir, r#"["notes.list"]"#),
                (0, String::new())
            );
        }
    }
}

#[test]
fn dropped_unevaluable_records_block_unless_allowed() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-unevaluable");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("store.jsonl");
    std::fs::write(
        &store,
        "{\"id\":\"s1\",\"seq\":1,\"kind\":\"summary\",\"text\":\"We agreed on a refund rule.\"}\n{\"id\":\"c2\",\"seq\":2,\"kind\":\"chatter\"}\n",
    )
    .unwrap();
    let store = store.to_str().unwrap();
    let p = payload("claude-code", "Bash", r#"{"command":"ls"}"#);
    let out = run(
        &["hook", "claude-code", "--store", store, "--kept", "c2"],
        &p,
    );
    assert!(
        out.stderr.contains("dropped-unevaluable-record"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(r#"record    : s1 (summary, seq 1): the gate cannot evaluate this kind; text: We agreed on a refund rule."#),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 2);
    let out = run(
        &[
            "hook",
            "claude-code",
            "--store",
            store,
            "--kept",
            "c2",
            "--allow-unevaluable",
        ],
        &p,
    );
    assert_eq!((out.stdout.as_str(), out.code), ("", 0));
}

#[test]
fn our_own_deadline_denies_before_the_harness_times_out() {
    // stdin is never closed, so the payload never arrives: only the deadline can answer.
    for h in HARNESSES {
        let mut child = command(&["hook", h, "--store", STORE, "--timeout-ms", "300"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let code = child.wait().unwrap().code().unwrap();
        drop(stdin);
        let reason = "omission-gate denied this call: ERROR (no answer within 300 ms)\nomission-gate fails closed rather than let the harness's own timeout run the tool: the call can be retried, and may pass when the machine is less busy; if it is denied again, tell the user (the record store may be too large or unreadable, or the hook got no payload on stdin; the hook's --timeout-ms can be raised, below the harness's own timeout)";
        assert_denied(
            &Out {
                stdout,
                stderr,
                code,
            },
            reason,
            h,
        );
    }
}

/// Runs a hook whose stderr (`err`) or stdout (`out`) is `/dev/full`, where every write
/// fails; returns what reached the other stream and the exit code.
#[cfg(target_os = "linux")]
fn run_with_full(args: &[&str], payload: &str, full_stream: &str) -> (String, i32) {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let mut c = command(args);
    c.stdin(Stdio::piped());
    match full_stream {
        "err" => c.stdout(Stdio::piped()).stderr(Stdio::from(full())),
        "out" => c.stdout(Stdio::from(full())).stderr(Stdio::piped()),
        _ => c.stdout(Stdio::from(full())).stderr(Stdio::from(full())),
    };
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let seen = if full_stream == "err" {
        out.stdout
    } else {
        out.stderr
    };
    (String::from_utf8(seen).unwrap(), out.status.code().unwrap())
}

#[cfg(target_os = "linux")]
#[test]
fn a_deny_that_cannot_be_written_to_stderr_falls_back_to_the_json_deny() {
    let reason = refund_block_reason();
    for h in HARNESSES {
        let args = ["hook", h, "--store", STORE];
        let p = payload(h, REFUND_TOOL, r#"{"amount":8400,"currency":"USD"}"#);
        let (stdout, code) = run_with_full(&args, &p, "err");
        let json = if h == "gemini-cli" {
            gemini_deny(&reason)
        } else {
            claude_deny(&reason)
        };
        assert_eq!((stdout.as_str(), code), (json.as_str(), 0), "{h}");
        // With nothing writable at all the exit code is still 2, never 0.
        let (_, code) = run_with_full(&args, &p, "both");
        assert_eq!(code, 2, "{h}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_json_deny_carries_exactly_the_keys_codex_accepts() {
    let args = ["hook", "codex", "--store", STORE];
    let (stdout, _) = run_with_full(
        &args,
        &payload("codex", REFUND_TOOL, r#"{"amount":8400}"#),
        "err",
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let top: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(top, ["hookSpecificOutput"]);
    let inner: Vec<&String> = v["hookSpecificOutput"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        inner,
        [
            "hookEventName",
            "permissionDecision",
            "permissionDecisionReason"
        ]
    );
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
}

#[cfg(target_os = "linux")]
#[test]
fn precompact_instructions_that_cannot_be_written_are_a_non_blocking_error() {
    let (stderr, code) = run_with_full(
        &["hook", "claude-code-precompact", "--store", STORE],
        &precompact_payload("auto", ""),
        "out",
    );
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "omission-gate: precompact: cannot write the preservation instructions; the compaction goes ahead without preservation instructions\n"
    );
}

#[test]
fn a_malformed_hook_command_line_still_blocks_the_tool() {
    for h in HARNESSES {
        let out = run(&["hook", h, "--stor", STORE], &payload(h, "Bash", "{}"));
        assert_eq!(out.code, 2, "{h}");
        assert!(
            !out.stderr.trim().is_empty(),
            "{h}: exit 2 needs a reason on stderr"
        );
        assert_eq!(out.stdout, "");
    }
    let out = run(&["hook", "gemini", "--store", STORE], "{}");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("invalid value 'gemini'"),
        "{}",
        out.stderr
    );
}

// --- PreCompact -----------------------------------------------------------------------

fn precompact_payload(trigger: &str, instructions: &str) -> String {
    format!(
        r#"{{"session_id":"abc123","transcript_path":"/home/u/.claude/projects/proj/abc123.jsonl","cwd":"/home/u/proj","hook_event_name":"PreCompact","trigger":"{trigger}","custom_instructions":"{instructions}"}}"#
    )
}

const PRESERVE: &str = "omission-gate: keep each record below in the summary, verbatim and with its id. They can bind later tool calls (rules in force, the newest values those rules read, calls that already ran, records the gate cannot evaluate): an agent that loses them may break a rule or repeat a call.\n";

#[test]
fn precompact_prints_the_records_to_keep_for_manual_and_auto() {
    let expected = format!(
        "{PRESERVE}{}{}{}{}",
        "- r2 (policy, seq 2): require_approval on refunds.create, mcp__billing__refunds_create, mcp_billing_refunds_create when amount gt 5000; text: Refunds over 5,000 need a human approver. [kept because: active require_approval rule in scope of *: TRUE for a call with {\"amount\":5001}]\n",
        "- r3 (effect, seq 3): Bash already ran with {\"command\":\"./scripts/send-invoice.sh 7741\"}; text: The corrected invoice for 7741 was already emailed. [kept because: effect ledger entry of Bash: a reachable call can replay it]\n",
        "- r4 (policy, seq 4): deny on payouts.send, mcp__billing__payouts_send, mcp_billing_payouts_send when payee.verified ne true; text: Never pay out to an unverified payee. [kept because: active deny rule in scope of *: TRUE for a call with {\"payee\":{\"verified\":false}}]\n",
        "- r7 (effect, seq 7): run_shell_command already ran with {\"command\":\"./scripts/send-invoice.sh 7741\"}; text: The corrected invoice for 7741 was already emailed. [kept because: effect ledger entry of run_shell_command: a reachable call can replay it]\n",
    );
    for p in [
        precompact_payload("manual", "focus on the API work"),
        precompact_payload("auto", ""),
    ] {
        let out = hook("claude-code-precompact", &p);
        assert_eq!(out.stdout, expected);
        assert_eq!((out.stderr.as_str(), out.code), ("", 0));
    }
}

/// `--tools` never narrows what the precompact adapter keeps: the pre-tool adapters
/// judge a call of a tool a rule names whatever the list, so what those rules need is
/// kept for any list, as for none (pin over `*`).
#[test]
fn precompact_tools_never_narrow_what_is_kept() {
    let all = run(
        &["hook", "claude-code-precompact", "--store", STORE],
        &precompact_payload("auto", ""),
    );
    assert_eq!(all.code, 0, "{}", all.stderr);
    assert!(
        all.stdout.contains("\n- r2 (policy, seq 2): ")
            && all.stdout.contains("\n- r4 (policy, seq 4): "),
        "{}",
        all.stdout
    );
    let ids = |out: &str| -> Vec<String> {
        out.lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect()
    };
    for tools in ["mcp__billing__refunds_create", "Read"] {
        let out = run(
            &[
                "hook",
                "claude-code-precompact",
                "--store",
                STORE,
                "--tools",
                tools,
            ],
            &precompact_payload("auto", ""),
        );
        assert_eq!((out.stderr.as_str(), out.code), ("", 0), "{tools}");
        assert_eq!(
            ids(&out.stdout),
            ids(&all.stdout),
            "{tools}: {}",
            out.stdout
        );
    }
}

/// Claude Code 2.1.197 checks an MCP tool's call only for being a JSON object: in a live
/// run a refund of 8400 against the server's `maximum: 5000` reached the PreToolUse hook
/// and the server. So a schema in the store's `tools` rules out no call, and the rule
/// only a call outside it trips is kept: pin by the schema left it out, and the call the
/// hook then judged was blocked by the very rule the summary had dropped.
#[test]
fn precompact_keeps_a_rule_that_only_a_call_outside_the_store_schema_trips() {
    let scratch = common::Scratch::new();
    let tool = "mcp__billing__refunds_create";
    let store = serde_json::json!({
        "records": [{
            "id": "big-refunds", "seq": 1, "kind": "policy", "scope": tool,
            "predicate": {"field": "amount", "op": "gt", "value": 5000},
            "effect": "require_approval", "text": "Refunds over 5,000 need a human approver."
        }],
        "kept": [],
        "tools": [{"name": tool, "inputSchema": {
            "type": "object",
            "properties": {"amount": {"type": "integer", "minimum": 1, "maximum": 5000}},
            "required": ["amount"], "additionalProperties": false
        }}]
    });
    let store = scratch.file("store.json", store.to_string().as_bytes());
    let out = run(
        &["hook", "claude-code-precompact", "--store", &store],
        &precompact_payload("auto", ""),
    );
    assert_eq!((out.stderr.as_str(), out.code), ("", 0));
    assert!(
        out.stdout.contains(
            "\n- big-refunds (policy, seq 1): require_approval on mcp__billing__refunds_create when amount gt 5000"
        ),
        "{}",
        out.stdout
    );
    let call = run(
        &["hook", "claude-code", "--store", &store],
        &payload("claude-code", tool, r#"{"amount":8400}"#),
    );
    assert_eq!(
        call.code, 2,
        "the call the harness sends is judged: {}",
        call.stderr
    );
}

#[test]
fn precompact_wired_under_a_pre_tool_event_denies_the_call() {
    // Its exit 1, which never blocks a compaction, let a call run unjudged where the
    // adapter was wired under the pre-tool event: a call waits on it there, and exit 2
    // denies it in each harness.
    for harness in ["claude-code", "codex", "gemini-cli"] {
        for store in [STORE, "examples/no-such-store.json"] {
            let out = run(
                &["hook", "claude-code-precompact", "--store", store],
                &payload(harness, "Bash", "{}"),
            );
            assert_eq!(out.code, 2, "{harness}");
            assert_eq!(out.stdout, "");
            assert!(
                out.stderr.starts_with(
                    "omission-gate denied this call: ERROR (payload: key `hook_event_name`: `"
                ),
                "{}",
                out.stderr
            );
            assert!(
                out.stderr
                    .ends_with("and this adapter under `PreCompact` only)\n")
            );
        }
    }
}

/// What a read of a relative path that names no file says: where it was looked for,
/// without naming the folder (no report holds a path its command line did not give).
const MISSING_HERE: &str = "no such file in the working directory, which a relative path is read from (give the full path)";

#[test]
fn precompact_never_blocks_even_when_it_cannot_answer() {
    let tail = "; the compaction goes ahead without preservation instructions\n";
    let cases = [
        (
            vec!["--store", "examples/no-such-store.json"],
            precompact_payload("auto", ""),
            format!("examples/no-such-store.json: input: cannot read: {MISSING_HERE}"),
        ),
        (
            vec!["--store", "examples/no-such-store.json"],
            precompact_payload("manual", ""),
            format!("examples/no-such-store.json: input: cannot read: {MISSING_HERE}"),
        ),
        (
            vec!["--store", STORE],
            "{\"trigger\":".to_string(),
            "payload:1:11: EOF while parsing a value".to_string(),
        ),
        (
            vec!["--store", STORE],
            precompact_payload("auto", "").replace("PreCompact", "SessionStart"),
            "payload: key `hook_event_name`: `SessionStart` is not `PreCompact`, the event the claude-code-precompact adapter answers: wire this adapter under `PreCompact` only".to_string(),
        ),
    ];
    for (flags, stdin, message) in cases {
        let mut args = vec!["hook", "claude-code-precompact"];
        args.extend(flags);
        let out = run(&args, &stdin);
        assert_eq!(out.stdout, "");
        assert_eq!(
            out.stderr,
            format!("omission-gate: precompact: {message}{tail}")
        );
        assert_eq!(out.code, 1, "exit 2 would block the compaction");
    }
    // A malformed command line is exit 1 here too, not clap's usual 2.
    let out = run(
        &["hook", "claude-code-precompact", "--stor", STORE],
        &precompact_payload("auto", ""),
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("--stor"), "{}", out.stderr);
}

#[test]
fn precompact_deadline_is_a_non_blocking_error() {
    let mut child = command(&[
        "hook",
        "claude-code-precompact",
        "--store",
        STORE,
        "--timeout-ms",
        "300",
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let stdin = child.stdin.take().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let code = child.wait().unwrap().code().unwrap();
    drop(stdin);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "omission-gate: precompact: no answer within 300 ms; the compaction goes ahead without preservation instructions\n"
    );
}

#[test]
fn replies_are_byte_for_byte_deterministic() {
    let p = payload(
        "gemini-cli",
        REFUND_TOOL,
        r#"{"currency":"USD","amount":8400}"#,
    );
    let first = hook("gemini-cli", &p);
    assert!(first.stderr.contains("dropped-binding-constraint"));
    for _ in 0..3 {
        let again = hook("gemini-cli", &p);
        assert_eq!(
            (again.stdout, again.stderr, again.code),
            (first.stdout.clone(), first.stderr.clone(), first.code)
        );
    }
}

/// A store of one dropped `deny` policy over `scope`, written as `dir/name`: its path.
fn deny_store(dir: &str, name: &str, scope: &[&str]) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let record = serde_json::json!({
        "id": "no-changes", "seq": 1, "kind": "policy", "scope": scope,
        "predicate": {"all": []}, "effect": "deny", "text": "Change nothing here."
    });
    std::fs::write(&path, format!("{{\"records\": [{record}], \"kept\": []}}")).unwrap();
    path.to_str().unwrap().to_string()
}

/// A store in `CARGO_TARGET_TMPDIR/dir` (file `name`) of one dropped summary, which
/// binds every call the hook guards, with `tools` as its `tools` when any are given.
fn summary_store(dir: &str, name: &str, tools: &[&str]) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let summary = serde_json::json!({
        "id": "earlier", "seq": 1, "kind": "summary",
        "text": "Earlier turns: the user said never to touch the production database."
    });
    let mut doc = serde_json::json!({"records": [summary], "kept": []});
    if !tools.is_empty() {
        doc["tools"] = serde_json::json!(tools);
    }
    std::fs::write(&path, doc.to_string()).unwrap();
    path.to_str().unwrap().to_string()
}

/// A glob that covers a built-in of the harness only in another case (`bas*` for Claude
/// Code's `Bash`), or, in Codex, a name the model calls its shell tool by (`exec_*`),
/// covers no name the hook's calls carry: the rule bound nothing and the call passed, where
/// the name itself (`BASH`, `exec_command`) was already denied. Denied with the fix; with
/// the harness's name beside it, the rule binds the call.
#[test]
fn a_glob_that_covers_a_built_in_only_as_no_hook_call_names_it_denies_with_the_fix() {
    let write_store = |name: &str, scope: &[&str]| deny_store("hook-case-globs", name, scope);
    let covers = |harness: &str, glob: &str, call: &str, covers: &str| {
        format!(
            "{harness} sends this call to its hooks as `{call}`, and the store's `{glob}` {covers}, so a rule that names `{glob}` and not `{call}` never binds this call: name `{call}` too wherever the store names `{glob}` (beside it in a policy's scope, or in an effect record with the same `match`)"
        )
    };
    let other_case = |call: &str| format!("covers `{call}` only in another case");
    let cases = [
        (
            "claude-code",
            "Claude Code",
            "bas*",
            "Bash",
            other_case("Bash"),
        ),
        (
            "claude-code",
            "Claude Code",
            "*EDIT",
            "MultiEdit",
            other_case("MultiEdit"),
        ),
        ("codex", "Codex", "bas*", "Bash", other_case("Bash")),
        (
            "codex",
            "Codex",
            "Apply_*",
            "apply_patch",
            other_case("apply_patch"),
        ),
        (
            "codex",
            "Codex",
            "exec_*",
            "Bash",
            "covers `exec_command`, the model's name for it".into(),
        ),
        (
            "gemini-cli",
            "Gemini CLI",
            "RUN_SHELL*",
            "run_shell_command",
            other_case("run_shell_command"),
        ),
        // An MCP tool: the harnesses keep the case of a server's and a tool's names.
        (
            "claude-code",
            "Claude Code",
            "mcp__Billing__*",
            REFUND_TOOL,
            other_case(REFUND_TOOL),
        ),
        (
            "gemini-cli",
            "Gemini CLI",
            "mcp_Billing_*",
            "mcp_billing_refunds_create",
            other_case("mcp_billing_refunds_create"),
        ),
    ];
    for (i, (h, title, glob, call, how)) in cases.iter().enumerate() {
        let store = write_store(&format!("{i}.json"), &[glob]);
        let input = r#"{"command":"ls","file_path":"a"}"#;
        let out = run(&["hook", h, "--store", &store], &payload(h, call, input));
        let message = covers(title, glob, call, how);
        let reason = invalid_reason_with(&format!("{store}: {message}"), MISNAMED_ADVICE);
        assert_denied(&out, &reason, &format!("{h} {glob}"));
        let both = write_store(&format!("{i}-both.json"), &[glob, call]);
        let out = run(&["hook", h, "--store", &both], &payload(h, call, input));
        assert_blocked(&out, "dropped-binding-constraint", &format!("{h} {glob}"));
    }
    // Another harness's built-in in another case, named or covered by a glob: no tool of
    // this harness has the name, and the fix is this harness's name for it.
    let other = |harness: &str, named: &str, owners: &str, what: &str, instead: &str| {
        format!(
            "{named} is how {owners} the {what}; {harness} calls it `{instead}`, so a rule that names only `{}` never binds this call: name `{instead}` too wherever the store names `{}` (beside it in a policy's scope, or in an effect record with the same `match`)",
            named.split('`').nth(1).unwrap(),
            named.split('`').nth(1).unwrap()
        )
    };
    let cases = [
        (
            "gemini-cli",
            "bash",
            "run_shell_command",
            other(
                "Gemini CLI",
                "`bash`",
                "Claude Code and Codex name, as `Bash`,",
                "shell tool",
                "run_shell_command",
            ),
        ),
        (
            "gemini-cli",
            "BAS*",
            "run_shell_command",
            other(
                "Gemini CLI",
                "`BAS*` covers `Bash` only in another case, which",
                "Claude Code and Codex name",
                "shell tool",
                "run_shell_command",
            ),
        ),
        (
            "claude-code",
            "Run_Shell_Command",
            "Bash",
            other(
                "Claude Code",
                "`Run_Shell_Command`",
                "Gemini CLI names, as `run_shell_command`,",
                "shell tool",
                "Bash",
            ),
        ),
        (
            "codex",
            "WRITE_FILE",
            "apply_patch",
            other(
                "Codex",
                "`WRITE_FILE`",
                "Gemini CLI names, as `write_file`,",
                "file-writing tool",
                "apply_patch",
            ),
        ),
    ];
    for (i, (h, named, call, message)) in cases.iter().enumerate() {
        let store = write_store(&format!("other-{i}.json"), &[named]);
        let input = r#"{"command":"ls","file_path":"a"}"#;
        let out = run(&["hook", h, "--store", &store], &payload(h, call, input));
        let reason = invalid_reason_with(&format!("{store}: {message}"), MISNAMED_ADVICE);
        assert_denied(&out, &reason, &format!("{h} {named}"));
    }
    // A glob that covers the built-in as the harness sends it binds the call.
    let store = write_store("cased.json", &["Bas*"]);
    let out = run(
        &["hook", "claude-code", "--store", &store],
        &payload("claude-code", "Bash", r#"{"command":"ls"}"#),
    );
    assert_blocked(&out, "dropped-binding-constraint", "");
}

/// A store name written as a pattern of another syntax: a matcher's regex (`Bash|Edit`,
/// `mcp__billing__.*`, as init writes matchers) or a shell glob (`Bas?`, `[Bb]ash`). The
/// store reads it as a name, which no harness gives a tool, so the rule bound nothing and
/// the call passed. Denied with the fix; with the tool named beside it, the rule binds.
#[test]
fn a_store_name_written_as_a_matcher_or_shell_pattern_denies_with_the_fix() {
    let write_store = |name: &str, scope: &[&str]| deny_store("hook-patterns", name, scope);
    let cases = [
        ("claude-code", "Bash|Edit", "Bash"),
        ("codex", "(Bash|apply_patch)", "apply_patch"),
        ("claude-code", "mcp__billing__.*", REFUND_TOOL),
        ("gemini-cli", "mcp_billing_.*", "mcp_billing_refunds_create"),
        ("claude-code", "Bas?", "Bash"),
        // A regex's `?`: `Edits?` is `Edit` too (read as `Edits*`, it passed).
        ("claude-code", "Edits?", "Edit"),
        // A group made optional: `(Multi)?Edit` is `Edit` too (read as `Multi*Edit`, it
        // passed).
        ("claude-code", "(Multi)?Edit", "Edit"),
        ("gemini-cli", "[Rr]un_shell_command", "run_shell_command"),
        // An alternation inside a group: each alternative is meant (it passed).
        ("claude-code", "mcp__(shop|billing)__.*", REFUND_TOOL),
        ("claude-code", "(Edit|Bash)|Write", "Bash"),
        // A harness searches a matcher's regex in the tool's name (Claude Code's
        // `new RegExp(m).test(name)`): `(Bash|Edit)` covers `MultiEdit` and
        // `NotebookEdit` too (read as the whole name, their calls passed unjudged).
        ("claude-code", "(Bash|Edit)", "MultiEdit"),
        ("claude-code", "Edi(t)", "NotebookEdit"),
        ("claude-code", "Edit.*|Write", "MultiEdit"),
        ("claude-code", "[Ee]dit", "MultiEdit"),
        ("codex", "(Bash|patch)", "apply_patch"),
        ("gemini-cli", "(shell|file)", "run_shell_command"),
    ];
    for (i, (h, named, call)) in cases.iter().enumerate() {
        let store = write_store(&format!("{i}.json"), &[named]);
        let input = r#"{"command":"ls","amount":1}"#;
        let out = run(&["hook", h, "--store", &store], &payload(h, call, input));
        let message = format!(
            "{store}: no tool is called `{named}`: the store's names are tool names or globs whose only wildcard is `*` (`|`, `?`, `[...]` and `.*` are read as written), so a rule that names only `{named}` never binds this call of `{call}`: name `{call}` wherever the store names `{named}` (beside it in a policy's scope, or in an effect record with the same `match`)"
        );
        assert_denied(
            &out,
            &invalid_reason_with(&message, MISNAMED_ADVICE),
            &format!("{h} {named}"),
        );
        let both = write_store(&format!("{i}-both.json"), &[named, call]);
        let out = run(&["hook", h, "--store", &both], &payload(h, call, input));
        assert_blocked(&out, "dropped-binding-constraint", &format!("{h} {named}"));
    }
    // A pattern that does not read as covering the call, and a `*` glob with a `.`,
    // are left as they are; so is a call an anchored pattern does not cover as a whole
    // name (`^(Bash|Edit)$`, as a matcher, does not select `MultiEdit`).
    let other = write_store("other.json", &["Write|Edit", "notes.*"]);
    let anchored = write_store("anchored.json", &["^(Bash|Edit)$"]);
    for (store, call) in [(&other, "Bash"), (&anchored, "MultiEdit")] {
        let out = run(
            &["hook", "claude-code", "--store", store],
            &payload("claude-code", call, r#"{"command":"ls"}"#),
        );
        assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{call}");
    }
    // A class is the set it names: `[Bb]ash` is `Bash` and `bash`, not every name ending
    // `ash` (read as `*ash`, it denied `mcp__x__stash`), and `Bash` is still denied.
    let store = write_store("class.json", &["[Bb]ash"]);
    let out = run(
        &["hook", "claude-code", "--store", &store],
        &payload("claude-code", "mcp__x__stash", r#"{"command":"ls"}"#),
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let out = run(
        &["hook", "claude-code", "--store", &store],
        &payload("claude-code", "Bash", r#"{"command":"ls"}"#),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
}

/// A store name whose only pattern is `.*`. Under Gemini CLI, which keeps an MCP tool's
/// `.`, it may be the gate's own glob (`refunds.*`, as SPEC scopes a store): read against
/// the whole name, so an unrelated call of `mcp_billing_refunds_create` passes (searched,
/// `*refunds*`, it was denied). Claude Code and Codex name no tool with a `.`, so there it
/// binds no call as the gate's glob and is read as the matcher it was written as,
/// searched: `Edit.*` denies `MultiEdit` (read against the whole name, the call passed
/// unjudged, exit 0), and `refunds.*` denies `mcp__billing__refunds_create`.
#[test]
fn a_store_glob_whose_only_pattern_is_dot_star_is_read_as_each_harness_names_tools() {
    let store = deny_store("hook-dot-star", "refunds.json", &["refunds.*"]);
    let gemini = payload(
        "gemini-cli",
        "mcp_billing_refunds_create",
        r#"{"amount":1}"#,
    );
    let out = run(&["hook", "gemini-cli", "--store", &store], &gemini);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = run(
        &["hook", "claude-code", "--store", &store],
        &payload("claude-code", REFUND_TOOL, r#"{"amount":1}"#),
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    let store = deny_store("hook-dot-star", "edit.json", &["Edit.*"]);
    for harness in ["claude-code", "codex"] {
        let out = run(
            &["hook", harness, "--store", &store],
            &payload(harness, "MultiEdit", r#"{"file_path":"a"}"#),
        );
        assert_eq!(out.code, 2, "{harness}: {}", out.stdout);
    }
    let store = deny_store("hook-dot-star", "alternation.json", &["(Bash|Edit)"]);
    let out = run(
        &["hook", "claude-code", "--store", &store],
        &payload("claude-code", "MultiEdit", r#"{"file_path":"a"}"#),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
}

/// A store that names a tool otherwise than the harness sends it: Claude Code's `Edit`
/// without `MultiEdit`, which does the same; an MCP tool with characters the harness
/// replaces, or so long that it cuts the name (each as seen with Claude Code 2.1.332,
/// Codex 0.171.0 and Gemini CLI 0.61.0). No rule naming only the store's name binds the
/// call, which passed: it is denied with the fix. Named the harness's way too, the rule
/// binds the call; a tool the store does not mean passes.
#[test]
fn a_store_that_names_a_tool_otherwise_than_the_harness_sends_it_denies_with_the_fix() {
    let write_store = |name: &str, scope: &[&str]| deny_store("hook-sent-names", name, scope);
    let long = format!("refund_{}", "x".repeat(150));
    // As Codex 0.171.0 sent it: 129 characters.
    let cut = format!("refund_{}_f04219cc0e1a", "x".repeat(90));
    let gemini_long =
        "mcp_billing_refunds_create_for_the_customer_account_after_a_duplicate_charge_was_found";
    let gemini_cut = "mcp_billing_refunds_create_for...r_a_duplicate_charge_was_found";
    let plugin = |named: &str, sent: &str| {
        format!(
            "Claude Code sends the MCP tool the store names `{named}` as `{sent}` (it names a plugin's MCP servers `plugin_<plugin>_<server>`), so a rule that names only `{named}` never binds this call: name `{sent}` too wherever the store names `{named}` (beside it in a policy's scope, or in an effect record with the same `match`)"
        )
    };
    let hook_name = |harness: &str, named: &str, sent: &str| {
        format!(
            "{harness} sends this call to its hooks as `{sent}`, never as `{named}`, so a rule that names `{named}` and not `{sent}` never binds this call: name `{sent}` wherever the store names `{named}` (beside it in a policy's scope, or in an effect record with the same `match`)"
        )
    };
    let cases: [(&str, String, String, String); 19] = [
        // A name in another case, and Codex's shell tool named as the model calls it: no
        // hook call ever carries those names (a new user's store, run in the real CLIs:
        // the call ran).
        ("claude-code", "bash".into(), "Bash".into(), hook_name("Claude Code", "bash", "Bash")),
        ("gemini-cli", "Run_Shell_Command".into(), "run_shell_command".into(), hook_name("Gemini CLI", "Run_Shell_Command", "run_shell_command")),
        ("codex", "exec_command".into(), "Bash".into(), hook_name("Codex", "exec_command", "Bash")),
        ("codex", "shell".into(), "Bash".into(), hook_name("Codex", "shell", "Bash")),
        ("claude-code", "Edit".into(), "MultiEdit".into(), "`MultiEdit` does what `Edit` does in Claude Code, so a rule that names `Edit` and not `MultiEdit` never binds this call: name `MultiEdit` too wherever the store names `Edit` (beside it in a policy's scope, or in an effect record with the same `match`)".into()),
        // Gemini CLI 0.61.0 runs `grep_search` under its old name too, and its hook sees
        // the name the model called.
        ("gemini-cli", "grep_search".into(), "search_file_content".into(), "`search_file_content` does what `grep_search` does in Gemini CLI, so a rule that names `grep_search` and not `search_file_content` never binds this call: name `search_file_content` too wherever the store names `grep_search` (beside it in a policy's scope, or in an effect record with the same `match`)".into()),
        ("gemini-cli", "search_file_content".into(), "grep_search".into(), "`grep_search` does what `search_file_content` does in Gemini CLI, so a rule that names `search_file_content` and not `grep_search` never binds this call: name `grep_search` too wherever the store names `search_file_content` (beside it in a policy's scope, or in an effect record with the same `match`)".into()),
        // Claude Code 2.1.197's Monitor runs a shell command, as Bash does.
        ("claude-code", "Bash".into(), "Monitor".into(), "`Monitor` does what `Bash` does in Claude Code, so a rule that names `Bash` and not `Monitor` never binds this call: name `Monitor` too wherever the store names `Bash` (beside it in a policy's scope, or in an effect record with the same `match`)".into()),
        ("claude-code", "mcp__bill.ing-srv__refunds.create".into(), "mcp__bill_ing-srv__refunds_create".into(), String::new()),
        ("codex", "mcp__bill.ing-srv__refunds.create".into(), "mcp__bill_ing_srv__refunds_create".into(), String::new()),
        ("codex", format!("mcp__bill.ing-srv__{long}"), format!("mcp__bill_ing_srv__{cut}"), String::new()),
        // Codex 0.171.0 sent the tool `_refund` of the server `billing_` as
        // `mcp__billing__refund`, and `t` of `mcp__dup` as `mcp__dup__t`.
        ("codex", "mcp__billing____refund".into(), "mcp__billing__refund".into(), String::new()),
        ("codex", "mcp__mcp__dup__refunds_create".into(), "mcp__dup__refunds_create".into(), String::new()),
        // Two servers whose names Codex makes the same (`a-b`, `a.b`): it ends the server
        // part in a hash (openai/codex `append_namespace_hash_suffix`).
        ("codex", "mcp__a-b__refunds_create".into(), "mcp__a_b_f04219cc0e1a__refunds_create".into(), String::new()),
        ("codex", "mcp__a-b__*".into(), "mcp__a_b_f04219cc0e1a__refunds_create".into(), String::new()),
        ("gemini-cli", gemini_long.into(), gemini_cut.into(), String::new()),
        ("gemini-cli", "mcp_bill ing_refunds_create".into(), "mcp_bill_ing_refunds_create".into(), String::new()),
        // A plugin's MCP server: Claude Code names it `plugin:<plugin>:<server>`.
        ("claude-code", "mcp__billing__refunds_create".into(), "mcp__plugin_pay_tools_billing__refunds_create".into(), plugin("mcp__billing__refunds_create", "mcp__plugin_pay_tools_billing__refunds_create")),
        ("claude-code", "mcp__billing__*".into(), "mcp__plugin_pay_billing__refunds_create".into(), plugin("mcp__billing__*", "mcp__plugin_pay_billing__refunds_create")),
    ];
    for (i, (h, named, sent, message)) in cases.iter().enumerate() {
        let store = write_store(&format!("{i}.json"), &[named]);
        let message = match message.is_empty() {
            true => format!(
                "{} sends the MCP tool the store names `{named}` as `{sent}` ({}), so a rule that names only `{named}` never binds this call: name `{sent}` too wherever the store names `{named}` (beside it in a policy's scope, or in an effect record with the same `match`)",
                match *h {
                    "claude-code" => "Claude Code",
                    "codex" => "Codex",
                    _ => "Gemini CLI",
                },
                // Claude Code replaces characters and cuts no name; Codex trims the join.
                match *h {
                    "claude-code" => "it replaces characters it does not allow in a tool name",
                    "codex" =>
                        "it replaces characters it does not allow in a tool name, drops the `_`s next to the `__` that joins server and tool, and cuts a long name",
                    _ =>
                        "it replaces characters it does not allow in a tool name, and cuts a long name",
                }
            ),
            false => message.clone(),
        };
        let call = |store: &str, tool: &str| {
            run(
                &["hook", h, "--store", store],
                &payload(h, tool, r#"{"file_path":"a","amount":1}"#),
            )
        };
        let out = call(&store, sent);
        // A message over the reason's width is cut in the middle: compare its ends.
        let reason = invalid_reason_with(&format!("{store}: {message}"), MISNAMED_ADVICE);
        if reason.len() < 900 {
            assert_denied(&out, &reason, &format!("{h} {sent}"));
        } else {
            assert_eq!(out.code, 2, "{h} {sent}: {}", out.stderr);
            assert!(
                out.stderr.contains(&format!("{store}: {}", &message[..80])),
                "{h} {sent}: {}",
                out.stderr
            );
            assert!(
                out.stderr.contains(MISNAMED_ADVICE),
                "{h} {sent}: {}",
                out.stderr
            );
        }
        // Named the harness's way too, the rule binds the call.
        let both = write_store(&format!("{i}-both.json"), &[named, sent]);
        let out = call(&both, sent);
        assert_blocked(&out, "dropped-binding-constraint", &format!("{h} {sent}"));
        // A tool the store does not mean passes: under Codex, one whose name ends as a
        // hash does and begins as the store's name does, but is shorter.
        if *h == "codex" {
            assert_eq!(call(&store, "mcp__bill_0123456789ab").code, 0, "{h}");
        }
        let other = if *h == "gemini-cli" {
            "mcp_docs_search"
        } else {
            "mcp__docs__search"
        };
        assert_eq!(call(&store, other).code, 0, "{h}");
    }
    // A glob for the tools of Codex's server `billing_`: the fix is the glob as Codex
    // sends the names it covers.
    let store = write_store("codex-glob.json", &["mcp__billing___*"]);
    let out = run(
        &["hook", "codex", "--store", &store],
        &payload("codex", "mcp__billing__refund", r#"{"amount":1}"#),
    );
    let message = "Codex sends the MCP tool the store names `mcp__billing___*` as `mcp__billing__*` (it replaces characters it does not allow in a tool name, drops the `_`s next to the `__` that joins server and tool, and cuts a long name), so a rule that names only `mcp__billing___*` never binds this call: name `mcp__billing__*` too wherever the store names `mcp__billing___*` (beside it in a policy's scope, or in an effect record with the same `match`)";
    assert_denied(
        &out,
        &invalid_reason_with(&format!("{store}: {message}"), MISNAMED_ADVICE),
        "codex glob",
    );
    // Gemini CLI names a tool of a server whose name starts with `mcp_` without a second
    // `mcp_`: its payload's mcp_context tells the configured server and tool.
    let store = write_store("gemini-context.json", &["mcp_mcp_ops_deploy"]);
    let p = payload("gemini-cli", "mcp_ops_deploy", "{}").replace(
        r#""server_name":"billing","tool_name":"refunds_create""#,
        r#""server_name":"mcp_ops","tool_name":"deploy""#,
    );
    let out = run(&["hook", "gemini-cli", "--store", &store], &p);
    let message = "Gemini CLI sends the MCP tool the store names `mcp_mcp_ops_deploy` as `mcp_ops_deploy` (it replaces characters it does not allow in a tool name, and cuts a long name), so a rule that names only `mcp_mcp_ops_deploy` never binds this call: name `mcp_ops_deploy` too wherever the store names `mcp_mcp_ops_deploy` (beside it in a policy's scope, or in an effect record with the same `match`)";
    assert_denied(
        &out,
        &invalid_reason_with(&format!("{store}: {message}"), MISNAMED_ADVICE),
        "context",
    );
}

/// The guarded tools (`--tools`, a store's `tools`) name a tool only as another harness
/// does, or as a built-in that does the same: the call of this harness's tool was not
/// guarded, and passed although a dropped summary binds every call. It is denied with
/// the fix; listed the harness's way too, the dropped summary blocks it.
#[test]
fn guarded_tools_named_otherwise_than_the_harness_calls_them_deny_with_the_fix() {
    let write_store = |name: &str, tools: &[&str]| summary_store("hook-guarded-names", name, tools);
    let store = write_store("claude.json", &["Bash", "Edit", "mcp__billing__*"]);
    let cases = [
        (
            "gemini-cli",
            "run_shell_command",
            "Bash",
            "run_shell_command",
        ),
        (
            "gemini-cli",
            "mcp_billing_refunds_create",
            "mcp__billing__*",
            "mcp_billing_*",
        ),
        ("claude-code", "MultiEdit", "Edit", "MultiEdit"),
    ];
    for (h, tool, named, fix) in cases {
        let harness = if h == "gemini-cli" {
            "Gemini CLI"
        } else {
            "Claude Code"
        };
        let message = format!(
            "{store}: key `tools`: the guarded tools name `{named}` and not `{fix}`, which covers this call of `{tool}` in {harness}, so the call would go unjudged: name `{fix}` too"
        );
        let out = run(&["hook", h, "--store", &store], &payload(h, tool, "{}"));
        assert_denied(&out, &invalid_reason_with(&message, MISNAMED_ADVICE), tool);
        // The same list given by --tools.
        let tools = "Bash,Edit,mcp__billing__*";
        let out = run(
            &["hook", h, "--store", &store, "--tools", tools],
            &payload(h, tool, "{}"),
        );
        let message = message.replace(&format!("{store}: key `tools`"), "--tools");
        assert_denied(&out, &invalid_reason_with(&message, MISNAMED_ADVICE), tool);
        // Listed the harness's way too, the call is guarded: the dropped summary blocks it.
        let both = write_store(
            &format!("{tool}.json"),
            &["Bash", "Edit", "mcp__billing__*", fix],
        );
        let out = run(&["hook", h, "--store", &both], &payload(h, tool, "{}"));
        assert_blocked(&out, "dropped-unevaluable-record", tool);
    }
    // Codex 0.171.0 sends the tool `_refund` of the server `billing_` as
    // `mcp__billing__refund`: a list naming it as configured leaves it unguarded.
    let out = run(
        &[
            "hook",
            "codex",
            "--store",
            &store,
            "--tools",
            "mcp__billing____refund",
        ],
        &payload("codex", "mcp__billing__refund", "{}"),
    );
    let message = "--tools: the guarded tools name `mcp__billing____refund` and not `mcp__billing__refund`, which covers this call of `mcp__billing__refund` in Codex, so the call would go unjudged: name `mcp__billing__refund` too";
    assert_denied(
        &out,
        &invalid_reason_with(message, MISNAMED_ADVICE),
        "codex --tools",
    );
    // A tool the list does not mean is not guarded, as before.
    let out = run(
        &["hook", "claude-code", "--store", &store],
        &payload("claude-code", "Read", "{}"),
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
}

/// A dropped `deny` scoped to a glob that covers a built-in and not another built-in
/// that does the same (`Edi*`: `Edit`, not `MultiEdit`) binds the one's calls and not
/// the other's, as a rule naming `Edit` does: a `MultiEdit` call passed (a kept `allow`
/// on `MultiEdit`). It is denied with the fix, as for `Edit`; a glob covering both binds.
#[test]
fn a_dropped_rule_on_a_glob_covering_a_built_in_of_the_same_kind_is_named_otherwise() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-kin-glob");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, glob: &str, tool: &str| {
        let path = dir.join(name);
        let policy = |id: &str, seq: u64, scope: &str, effect: &str| {
            serde_json::json!({
                "id": id, "seq": seq, "kind": "policy", "scope": [scope],
                "predicate": {"all": []}, "effect": effect
            })
        };
        let doc = serde_json::json!({
            "records": [policy("a", 1, tool, "allow"), policy("b", 2, glob, "deny")],
            "kept": ["a"]
        });
        std::fs::write(&path, doc.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    for (h, glob, tool, kin) in [
        ("claude-code", "Edi*", "MultiEdit", "Edit"),
        ("claude-code", "Bas*", "Monitor", "Bash"),
        ("gemini-cli", "grep_*", "search_file_content", "grep_search"),
    ] {
        let store = write(&format!("{h}-{tool}.json"), glob, tool);
        let out = run(
            &["hook", h, "--store", &store],
            &payload(h, tool, r#"{"command":"ls","file_path":"a"}"#),
        );
        let message = format!(
            "{store}: `{tool}` does what `{kin}` does in {}, so a rule that names `{glob}` and not `{tool}` never binds this call: name `{tool}` too wherever the store names `{glob}` (beside it in a policy's scope, or in an effect record with the same `match`)",
            if h == "claude-code" {
                "Claude Code"
            } else {
                "Gemini CLI"
            }
        );
        assert_denied(&out, &invalid_reason_with(&message, MISNAMED_ADVICE), tool);
    }
    let store = write("both.json", "*Edit", "MultiEdit");
    let out = run(
        &["hook", "claude-code", "--store", &store],
        &payload("claude-code", "MultiEdit", r#"{"file_path":"a"}"#),
    );
    assert_blocked(&out, "dropped-binding-constraint", "");
}

/// A kept rule names the call's tool and a dropped `deny` names it otherwise (as no
/// hook call carries it, as another built-in of the same kind, as another harness does):
/// the store names the tool, but the dropped rule does not bind the call, which passed
/// (the check looked at the whole store's names, not at each record's). It is denied
/// with the fix; with the tool named beside it in the dropped rule's scope, the rule
/// blocks the call; with every record giving both names, or the two names given by one
/// record each in a shared store's effects, nothing changes.
#[test]
fn a_dropped_rule_naming_the_tool_otherwise_is_not_excused_by_another_record_naming_it() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-per-record");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, records: &[serde_json::Value]| {
        let path = dir.join(name);
        let doc = serde_json::json!({"records": records, "kept": ["a"]});
        std::fs::write(&path, doc.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let policy = |id: &str, seq: u64, scope: &[&str], effect: &str| {
        serde_json::json!({
            "id": id, "seq": seq, "kind": "policy", "scope": scope,
            "predicate": {"all": []}, "effect": effect, "text": "A rule."
        })
    };
    let cases = [
        // The reviewer's inputs: a kept `allow` on `Bash`, a dropped deny-all on `bash`.
        (
            "claude-code",
            "Bash",
            "bash",
            "Claude Code sends this call to its hooks as `Bash`, never as `bash`, so a rule that names `bash` and not `Bash` never binds this call: name `Bash` wherever the store names `bash` (beside it in a policy's scope, or in an effect record with the same `match`)",
        ),
        (
            "claude-code",
            "MultiEdit",
            "Edit",
            "`MultiEdit` does what `Edit` does in Claude Code, so a rule that names `Edit` and not `MultiEdit` never binds this call: name `MultiEdit` too wherever the store names `Edit` (beside it in a policy's scope, or in an effect record with the same `match`)",
        ),
        (
            "codex",
            "Bash",
            "exec_command",
            "Codex sends this call to its hooks as `Bash`, never as `exec_command`, so a rule that names `exec_command` and not `Bash` never binds this call: name `Bash` wherever the store names `exec_command` (beside it in a policy's scope, or in an effect record with the same `match`)",
        ),
        (
            "gemini-cli",
            "run_shell_command",
            "Bash",
            "`Bash` is how Claude Code and Codex name the shell tool; Gemini CLI calls it `run_shell_command`, so a rule that names only `Bash` never binds this call: name `run_shell_command` too wherever the store names `Bash` (beside it in a policy's scope, or in an effect record with the same `match`)",
        ),
    ];
    for (h, tool, other, message) in cases {
        let call = |store: &str| {
            run(
                &["hook", h, "--store", store],
                &payload(h, tool, r#"{"command":"ls","file_path":"a"}"#),
            )
        };
        let store = write(
            &format!("{h}-{other}.json"),
            &[
                policy("a", 1, &[tool], "allow"),
                policy("b", 2, &[other], "deny"),
            ],
        );
        let out = call(&store);
        let reason = invalid_reason_with(&format!("{store}: {message}"), MISNAMED_ADVICE);
        assert_denied(&out, &reason, &format!("{h} {tool}"));
        // The fix: the dropped rule names the tool beside the other name.
        let fixed = write(
            &format!("{h}-{other}-fixed.json"),
            &[
                policy("a", 1, &[tool], "allow"),
                policy("b", 2, &[other, tool], "deny"),
            ],
        );
        let out = call(&fixed);
        assert_blocked(&out, "dropped-binding-constraint", &format!("{h} {tool}"));
        // Each record gives both names: the dropped one binds; the kept one is in view.
        let kept_only = write(
            &format!("{h}-{other}-kept.json"),
            &[
                policy("a", 1, &[other, tool], "deny"),
                policy("b", 2, &[tool], "allow"),
            ],
        );
        assert_eq!(
            call(&kept_only).code,
            0,
            "{h} {tool}: {}",
            call(&kept_only).stderr
        );
    }
    // The same records as JSON Lines with --kept (the loader that holds only the
    // records in scope of the call, and names the rest).
    let path = dir.join("lines.jsonl");
    let lines = [
        policy("a", 1, &["Bash"], "allow"),
        policy("b", 2, &["bash"], "deny"),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    let lines = path.to_str().unwrap();
    let out = run(
        &["hook", "claude-code", "--store", lines, "--kept", "a"],
        &payload("claude-code", "Bash", r#"{"command":"ls"}"#),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("never as `bash`, so a rule that names `bash` and not `Bash`"),
        "{}",
        out.stderr
    );
    // A shared ledger gives a call both ways, in two records.
    let effect = |id: &str, seq: u64, tool: &str| {
        serde_json::json!({
            "id": id, "seq": seq, "kind": "effect", "tool": tool,
            "match": {"command": "rm -rf build"}
        })
    };
    let ledger = write(
        "ledger.json",
        &[
            effect("a", 1, "Bash"),
            effect("b", 2, "run_shell_command"),
            effect("c", 3, "Bash"),
        ],
    );
    let out = run(
        &["hook", "claude-code", "--store", &ledger],
        &payload("claude-code", "Bash", r#"{"command":"rm -rf build"}"#),
    );
    assert_blocked(&out, "dropped-effect-replay", "");
    // Or under a glob covering the tool: its effect of the same `match` is a twin.
    let globbed = write(
        "ledger-glob.json",
        &[effect("a", 1, "run_shell_command"), effect("c", 2, "B*")],
    );
    let out = run(
        &["hook", "claude-code", "--store", &globbed],
        &payload("claude-code", "Bash", r#"{"command":"rm -rf build"}"#),
    );
    assert_blocked(&out, "dropped-effect-replay", "a twin of `B*`");
    // An effect given only another harness's way, beside a policy on the tool: denied.
    let mixed = write(
        "mixed.json",
        &[
            policy("a", 1, &["Bash"], "allow"),
            effect("b", 2, "run_shell_command"),
        ],
    );
    let out = run(
        &["hook", "claude-code", "--store", &mixed],
        &payload("claude-code", "Bash", r#"{"command":"rm -rf build"}"#),
    );
    assert!(
        out.stderr
            .contains("a rule that names only `run_shell_command` never binds"),
        "{}",
        out.stderr
    );
    // An effect of the tool with another `match` is no twin: it replays other calls, and
    // the dropped `run_shell_command` one would never bind this call (it passed when any
    // effect of `Bash` was in the store).
    let ls = serde_json::json!({
        "id": "a", "seq": 1, "kind": "effect", "tool": "Bash", "match": {"command": "ls"}
    });
    let other_match = write(
        "other-match.json",
        &[ls, effect("b", 2, "run_shell_command")],
    );
    let out = run(
        &["hook", "claude-code", "--store", &other_match],
        &payload("claude-code", "Bash", r#"{"command":"rm -rf build"}"#),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("a rule that names only `run_shell_command` never binds"),
        "{}",
        out.stderr
    );
}

/// Guarded tools that name a built-in only in another case (`bash`, `bas*` under Claude
/// Code), or Codex's shell by the model's name for it (`exec_command`), guarded nothing:
/// the `Bash` call passed unjudged whatever the dropped summary says (a store naming the
/// tool so was already an error). It is denied with the fix; named as sent, the dropped
/// summary blocks it.
#[test]
fn guarded_tools_naming_a_built_in_in_another_case_deny_with_the_fix() {
    let store = &summary_store("hook-guarded-case", "summary.json", &[]);
    for (h, title, listed, call) in [
        ("claude-code", "Claude Code", "bash", "Bash"),
        ("claude-code", "Claude Code", "bas*", "Bash"),
        ("claude-code", "Claude Code", "EDIT", "Edit"),
        ("codex", "Codex", "exec_command", "Bash"),
        (
            "gemini-cli",
            "Gemini CLI",
            "Run_Shell_Command",
            "run_shell_command",
        ),
    ] {
        let out = run(
            &["hook", h, "--store", store, "--tools", listed],
            &payload(h, call, "{}"),
        );
        let message = format!(
            "--tools: the guarded tools name `{listed}` and not `{call}`, which covers this call of `{call}` in {title}, so the call would go unjudged: name `{call}` too"
        );
        assert_denied(
            &out,
            &invalid_reason_with(&message, MISNAMED_ADVICE),
            listed,
        );
        // Named as the harness sends it, the dropped summary blocks the call.
        let out = run(
            &[
                "hook",
                h,
                "--store",
                store,
                "--tools",
                &format!("{listed},{call}"),
            ],
            &payload(h, call, "{}"),
        );
        assert_blocked(&out, "dropped-unevaluable-record", &format!("{h} {listed}"));
    }
}

/// Guarded tools written as a pattern of another syntax (`--tools 'Bash|Edit'`, a
/// matcher's regex, or `[Bb]ash`) guard a tool of that name, which no harness has: a call
/// of `Bash` went unjudged and passed whatever a dropped record says. Denied with the fix,
/// as the store's names are; a pattern that does not read as covering the call is left.
#[test]
fn guarded_tools_written_as_a_pattern_deny_with_the_fix() {
    let store = &summary_store("hook-guarded-pattern", "summary.json", &[]);
    for (h, title, listed, call) in [
        ("claude-code", "Claude Code", r#"["Bash|Edit"]"#, "Bash"),
        (
            "claude-code",
            "Claude Code",
            r#"["mcp__billing__.*"]"#,
            REFUND_TOOL,
        ),
        (
            "gemini-cli",
            "Gemini CLI",
            r#"["[Rr]un_shell_command"]"#,
            "run_shell_command",
        ),
        // Searched in the name, as a harness searches a matcher's regex: `(Bash|Edit)`
        // covers `MultiEdit` (read as the whole name, the call went unjudged).
        (
            "claude-code",
            "Claude Code",
            r#"["(Bash|Edit)","Bash","Edit"]"#,
            "MultiEdit",
        ),
    ] {
        let out = run(
            &["hook", h, "--store", store, "--tools", listed],
            &payload(h, call, "{}"),
        );
        let named: Vec<String> = serde_json::from_str(listed).unwrap();
        let named = &named[0];
        let message = format!(
            "--tools: the guarded tools name `{named}` and not `{call}`, which covers this call of `{call}` in {title}, so the call would go unjudged: name `{call}` too"
        );
        assert_denied(&out, &invalid_reason_with(&message, MISNAMED_ADVICE), named);
    }
    let out = run(
        &[
            "hook",
            "claude-code",
            "--store",
            store,
            "--tools",
            r#"["Write|Edit","Bash"]"#,
        ],
        &payload("claude-code", "Bash", "{}"),
    );
    assert_blocked(&out, "dropped-unevaluable-record", "");
}

/// A glob in the guarded tools that covers a built-in and not another that does the same
/// (`Edi*`: `Edit`, not `MultiEdit`) left the other unguarded: a `MultiEdit` call passed
/// whatever the dropped summary says. It is denied with the fix. And an effect whose
/// `tool` is a glob covering the call's own name (`*`) is not another harness's spelling
/// of it: it made every MCP call an error that said it was.
#[test]
fn a_guarded_glob_covering_one_built_in_of_a_kind_denies_the_other_and_an_effect_glob_is_no_spelling()
 {
    let store = &summary_store("hook-guarded-glob", "summary.json", &[]);
    let out = run(
        &["hook", "claude-code", "--store", store, "--tools", "Edi*"],
        &payload("claude-code", "MultiEdit", "{}"),
    );
    let message = "--tools: the guarded tools name `Edi*` and not `MultiEdit`, which covers this call of `MultiEdit` in Claude Code, so the call would go unjudged: name `MultiEdit` too";
    assert_denied(&out, &invalid_reason_with(message, MISNAMED_ADVICE), "Edi*");
    // Listed too, the dropped summary blocks the call.
    let out = run(
        &[
            "hook",
            "claude-code",
            "--store",
            store,
            "--tools",
            "Edi*,MultiEdit",
        ],
        &payload("claude-code", "MultiEdit", "{}"),
    );
    assert_blocked(&out, "dropped-unevaluable-record", "");
    // Guarded tools that name an MCP tool (or a glob) as Gemini CLI does, under Claude Code
    // or Codex: the call passed unjudged, though a store rule named so is an error.
    for (h, named) in [
        ("claude-code", "mcp_billing_refunds_create"),
        ("codex", "mcp_billing_*"),
    ] {
        let out = run(
            &["hook", h, "--store", store, "--tools", named],
            &payload(h, REFUND_TOOL, r#"{"amount":2}"#),
        );
        let title = if h == "codex" { "Codex" } else { "Claude Code" };
        let message = format!(
            "--tools: the guarded tools name `{named}` and not `{REFUND_TOOL}`, which covers this call of `{REFUND_TOOL}` in {title}, so the call would go unjudged: name `{REFUND_TOOL}` too"
        );
        assert_denied(&out, &invalid_reason_with(&message, MISNAMED_ADVICE), h);
    }
    // An effect of `*` is no spelling of another harness's name: it replays the calls of
    // every tool with its `match`, and only those (an MCP call of another amount passes).
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-guarded-glob");
    let path = dir.join("effect-glob.json");
    let effect = serde_json::json!({
        "id": "e", "seq": 1, "kind": "effect", "tool": "*", "match": {"amount": 1}
    });
    let doc = serde_json::json!({"records": [effect], "kept": []});
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = run(
        &["hook", "claude-code", "--store", path.to_str().unwrap()],
        &payload("claude-code", REFUND_TOOL, r#"{"amount":2}"#),
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    // The call it covers with its `match` replays it (it passed: the hook judged the
    // call, and `check` compared the effect's tool by name).
    let out = run(
        &["hook", "claude-code", "--store", path.to_str().unwrap()],
        &payload("claude-code", REFUND_TOOL, r#"{"amount":1}"#),
    );
    assert_blocked(&out, "dropped-effect-replay", "an effect of `*`");
}

/// A glob of another harness's built-in name (`Bas*` for Claude Code's `Bash`, under
/// Gemini CLI) binds none of this harness's calls of that tool: a dropped deny so scoped
/// let `run_shell_command` pass, where the exact name (`Bash`) was already an ERROR. It
/// is denied with the fix, in a store and in the guarded tools; given this harness's name
/// beside it, the rule blocks; a glob that covers the call's own name binds it.
#[test]
fn a_glob_of_another_harness_s_built_in_name_denies_with_the_fix() {
    let write_store = |name: &str, scope: &[&str]| deny_store("hook-other-globs", name, scope);
    let cases = [
        (
            "gemini-cli",
            "run_shell_command",
            "Bas*",
            "Bash",
            "`Bas*` covers `Bash`, which is how Claude Code and Codex name the shell tool; Gemini CLI calls it `run_shell_command`",
        ),
        (
            "gemini-cli",
            "replace",
            "Edi*",
            "Edit",
            "`Edi*` covers `Edit`, which is how Claude Code names the file-editing tool; Gemini CLI calls it `replace`",
        ),
        (
            "codex",
            "apply_patch",
            "Writ*",
            "Write",
            "`Writ*` covers `Write`, which is how Claude Code names the file-writing tool; Codex calls it `apply_patch`",
        ),
        (
            "claude-code",
            "Write",
            "*_file",
            "write_file",
            "`*_file` covers `write_file`, which is how Gemini CLI names the file-writing tool; Claude Code calls it `Write`",
        ),
    ];
    for (h, tool, glob, _, message) in cases {
        let call = |store: &str, extra: &[&str]| {
            let mut args = vec!["hook", h, "--store", store];
            args.extend_from_slice(extra);
            run(
                &args,
                &payload(h, tool, r#"{"command":"ls","file_path":"a"}"#),
            )
        };
        let store = write_store(&format!("{h}-{tool}.json"), &[glob]);
        let out = call(&store, &[]);
        let full = format!(
            "{store}: {message}, so a rule that names only `{glob}` never binds this call: name `{tool}` too wherever the store names `{glob}` (beside it in a policy's scope, or in an effect record with the same `match`)"
        );
        assert_denied(
            &out,
            &invalid_reason_with(&full, MISNAMED_ADVICE),
            &format!("{h} {glob}"),
        );
        let both = write_store(&format!("{h}-{tool}-both.json"), &[glob, tool]);
        let out = call(&both, &[]);
        assert_blocked(&out, "dropped-binding-constraint", &format!("{h} {glob}"));
        // The guarded tools: the call would go unjudged.
        let out = call(STORE, &["--tools", glob]);
        assert_eq!(out.code, 2, "{h} --tools {glob}: {}", out.stderr);
        assert!(
            out.stderr
                .contains(&format!("the guarded tools name `{glob}` and not `{tool}`")),
            "{h} --tools {glob}: {}",
            out.stderr
        );
    }
    // A glob that covers the call's own name binds it.
    for (h, tool, glob) in [
        ("claude-code", "Bash", "Bas*"),
        ("gemini-cli", "run_shell_command", "*"),
    ] {
        let store = write_store(&format!("{h}-own.json"), &[glob]);
        let out = run(
            &["hook", h, "--store", &store],
            &payload(h, tool, r#"{"command":"ls"}"#),
        );
        assert_blocked(&out, "dropped-binding-constraint", &format!("{h} {glob}"));
    }
}

/// A store written for Claude Code names its tools as Claude Code does: under Gemini
/// CLI's hook (`run_shell_command`, `write_file`, `mcp_<server>_<tool>`) and Codex's
/// (`apply_patch`) no rule naming only those would bind a call, so the call is denied
/// with the fix; under Claude Code's hook, and with every name given both ways, the
/// store judges calls as before.
#[test]
fn a_store_that_names_tools_as_another_harness_does_denies_with_the_fix() {
    let write_store = |name: &str, scope: &[&str]| deny_store("hook-tool-names", name, scope);
    // Claude Code's names, and a Gemini CLI one, as a store copied from both would.
    let claude = write_store("claude.json", &["Bash", "Write", REFUND_TOOL, "replace"]);
    let both = write_store(
        "both.json",
        &[
            "Bash",
            "Write",
            REFUND_TOOL,
            "run_shell_command",
            "write_file",
            "mcp_billing_refunds_create",
            "apply_patch",
            "replace",
            "Edit",
            "MultiEdit",
        ],
    );
    let call = |h: &str, store: &str, tool: &str| {
        let input = r#"{"command":"rm -rf build","file_path":"a","amount":1}"#;
        run(&["hook", h, "--store", store], &payload(h, tool, input))
    };
    let shell = "`Bash` is how Claude Code and Codex name the shell tool; Gemini CLI calls it `run_shell_command`, so a rule that names only `Bash` never binds this call: name `run_shell_command` too wherever the store names `Bash` (beside it in a policy's scope, or in an effect record with the same `match`)";
    let cases = [
        ("gemini-cli", "run_shell_command", shell.to_string()),
        (
            "gemini-cli",
            "write_file",
            "`Write` is how Claude Code names the file-writing tool; Gemini CLI calls it `write_file`, so a rule that names only `Write` never binds this call: name `write_file` too wherever the store names `Write` (beside it in a policy's scope, or in an effect record with the same `match`)".to_string(),
        ),
        (
            "gemini-cli",
            "mcp_billing_refunds_create",
            format!("`{REFUND_TOOL}` is how Claude Code and Codex name an MCP tool; Gemini CLI calls it `mcp_billing_refunds_create`, so a rule that names only `{REFUND_TOOL}` never binds this call: name `mcp_billing_refunds_create` too wherever the store names `{REFUND_TOOL}` (beside it in a policy's scope, or in an effect record with the same `match`)"),
        ),
        (
            "codex",
            "apply_patch",
            "`Write` is how Claude Code names the file-writing tool; Codex calls it `apply_patch`, so a rule that names only `Write` never binds this call: name `apply_patch` too wherever the store names `Write` (beside it in a policy's scope, or in an effect record with the same `match`)".to_string(),
        ),
        (
            "claude-code",
            "MultiEdit",
            "`replace` is how Gemini CLI names the file-editing tool; Claude Code calls it `Edit`, so a rule that names only `replace` never binds this call: name `Edit` too wherever the store names `replace` (beside it in a policy's scope, or in an effect record with the same `match`)".to_string(),
        ),
    ];
    for (h, tool, message) in &cases {
        let out = call(h, &claude, tool);
        let reason = invalid_reason_with(&format!("{claude}: {message}"), MISNAMED_ADVICE);
        assert_denied(&out, &reason, &format!("{h} {tool}"));
        // Named both ways, the rule binds the call: the dropped deny blocks it.
        let out = call(h, &both, tool);
        assert_eq!(out.code, 2, "{h} {tool}: {}", out.stderr);
        assert_blocked(&out, "dropped-binding-constraint", &format!("{h} {tool}"));
    }
    // A glob over the server's name in Claude Code's form (`mcp__*`) bound no Gemini CLI
    // MCP call, and the call passed; named both ways, the rule binds it.
    let any_mcp = write_store("any-mcp.json", &["mcp__*"]);
    let message = "`mcp__*` is how Claude Code and Codex name an MCP tool; Gemini CLI calls it `mcp_*`, so a rule that names only `mcp__*` never binds this call: name `mcp_*` too wherever the store names `mcp__*` (beside it in a policy's scope, or in an effect record with the same `match`)";
    let out = call("gemini-cli", &any_mcp, "mcp_billing_refunds_create");
    let reason = invalid_reason_with(&format!("{any_mcp}: {message}"), MISNAMED_ADVICE);
    assert_denied(&out, &reason, "mcp__*");
    let any_mcp_both = write_store("any-mcp-both.json", &["mcp__*", "mcp_*"]);
    let out = call("gemini-cli", &any_mcp_both, "mcp_billing_refunds_create");
    assert_blocked(&out, "dropped-binding-constraint", "");
    // Claude Code's own names, under Claude Code (and Codex, which shares them): blocked
    // by the rule, as before; a tool no rule names passes under every harness.
    for (h, tool) in [
        ("claude-code", "Bash"),
        ("claude-code", "Write"),
        ("claude-code", REFUND_TOOL),
        ("codex", "Bash"),
        ("codex", REFUND_TOOL),
    ] {
        for store in [&claude, &both] {
            let out = call(h, store, tool);
            assert_eq!(out.code, 2, "{h} {tool}: {}", out.stderr);
            assert_blocked(&out, "dropped-binding-constraint", &format!("{h} {tool}"));
        }
    }
    // The other way round: an MCP tool as Gemini CLI names it, under Claude Code and Codex.
    let gemini = write_store("gemini.json", &["run_shell_command", "mcp_billing_*"]);
    for h in ["claude-code", "codex"] {
        let message = format!(
            "`mcp_billing_*` is how Gemini CLI names an MCP tool; {} calls it `{REFUND_TOOL}`, so a rule that names only `mcp_billing_*` never binds this call: name `{REFUND_TOOL}` too wherever the store names `mcp_billing_*` (beside it in a policy's scope, or in an effect record with the same `match`)",
            if h == "codex" { "Codex" } else { "Claude Code" }
        );
        let out = call(h, &gemini, REFUND_TOOL);
        let reason = invalid_reason_with(&format!("{gemini}: {message}"), MISNAMED_ADVICE);
        assert_denied(&out, &reason, h);
        assert_eq!(call(h, &gemini, "mcp__docs__search").code, 0, "{h}");
    }
    let out = call("gemini-cli", &gemini, "mcp_billing_refunds_create");
    assert_blocked(&out, "dropped-binding-constraint", "");
    for (h, tool) in [
        ("claude-code", "Read"),
        ("gemini-cli", "read_file"),
        ("codex", "mcp__docs__search"),
    ] {
        for store in [&claude, &both] {
            let out = call(h, store, tool);
            assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{h} {tool}");
        }
    }
}

/// Claude Code runs a hook command in the session's current directory, which moves when
/// the agent runs `cd sub` (a real run of 2.1.197: the hook's `cwd` was `sub`). A hook
/// wired with a relative `--store` then read `sub/`'s file of that name, a harmless store
/// there, and the refund passed. While the hook runs outside `$CLAUDE_PROJECT_DIR`, a
/// relative path flag is denied with the fix; in the project, and with an absolute path
/// anywhere, the call is judged as usual.
#[test]
fn a_relative_path_in_a_claude_code_hook_run_outside_the_project_denies_with_the_fix() {
    let project = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-relative");
    let sub = project.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let store = std::fs::read_to_string(STORE).unwrap();
    std::fs::write(project.join("s.json"), &store).unwrap();
    // What the agent's current directory may hold under the same name: nothing binds.
    std::fs::write(
        sub.join("s.json"),
        r#"{"records": [{"id": "n1", "seq": 1, "kind": "chatter", "text": "Notes."}], "kept": []}"#,
    )
    .unwrap();
    std::fs::write(project.join("tools.txt"), REFUND_TOOL).unwrap();
    let refund = payload(
        "claude-code",
        REFUND_TOOL,
        r#"{"amount":8400,"currency":"USD"}"#,
    );
    let compacting = precompact_payload("auto", "");
    let run_in = |dir: &std::path::Path, args: &[&str]| {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(dir)
            .env("CLAUDE_PROJECT_DIR", &project);
        let stdin = match args[1] {
            "claude-code-precompact" => &compacting,
            _ => &refund,
        };
        let out = common::output_of(c, Some(stdin.as_bytes()));
        Out {
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
            code: out.status.code().unwrap(),
        }
    };
    let (p, s) = (project.display(), sub.display());
    // `instead`: the flag's value as it should be written (an `@FILE` keeps its `@`).
    let fix = |instead: &str| {
        format!(
            "is a relative path, and Claude Code runs this hook in the session's current directory `{s}`, not the project `{p}`, so it would name another file: write it as {instead} in the hook command"
        )
    };
    let message = format!(
        "s.json: --store `s.json`: {}",
        fix("\"$CLAUDE_PROJECT_DIR\"/s.json")
    );
    let out = run_in(&sub, &["hook", "claude-code", "--store", "s.json"]);
    assert_denied(&out, &invalid_reason(&message), "relative --store");
    // The preservation instructions are not written from another store either (a
    // non-blocking error: the compaction goes ahead).
    let out = run_in(
        &sub,
        &["hook", "claude-code-precompact", "--store", "s.json"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains(&message), "{}", out.stderr);
    let absolute = project.join("s.json");
    let absolute = absolute.to_str().unwrap();
    let tools = format!("@{}", project.join("tools.txt").display());
    for (dir, args) in [
        (&project, vec!["hook", "claude-code", "--store", "s.json"]),
        (&sub, vec!["hook", "claude-code", "--store", absolute]),
        (
            &sub,
            vec![
                "hook",
                "claude-code",
                "--store",
                absolute,
                "--tools",
                &tools,
            ],
        ),
    ] {
        let out = run_in(dir, &args);
        let blocked = "omission-gate denied this call: BLOCK (dropped-binding-constraint)";
        assert!(out.stderr.starts_with(blocked), "{args:?}: {}", out.stderr);
        assert_eq!((out.stdout.as_str(), out.code), ("", 2), "{args:?}");
    }
    // Another path flag, relative, outside the project.
    let out = run_in(
        &sub,
        &[
            "hook",
            "claude-code",
            "--store",
            absolute,
            "--tools",
            "@../tools.txt",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    // Written without its `@`, the path would be read as a tool's name.
    assert!(
        out.stderr
            .contains(&fix("@\"$CLAUDE_PROJECT_DIR\"/../tools.txt")),
        "{}",
        out.stderr
    );
}

#[test]
fn a_number_a_double_reads_otherwise_is_refused() {
    // Codex 0.171.0 hands the tool's arguments on as the model wrote them (its serde_json
    // keeps number literals), and a tool reads a number as a double (JavaScript's
    // JSON.parse and Python's json both read 9999.9999999999999999 as 10000). The gate
    // read it exactly, below the dropped rule's `gte 10000`, and the call passed.
    let scratch = common::Scratch::new();
    let record = serde_json::json!({
        "id": "big-refunds", "seq": 1, "kind": "policy", "scope": REFUND_TOOL,
        "predicate": {"field": "amount", "op": "gte", "value": 10000},
        "effect": "require_approval", "text": "Refunds of 10,000 or more need a human approver."
    });
    let store = scratch.file(
        "store.json",
        format!("{{\"records\": [{record}], \"kept\": []}}").as_bytes(),
    );
    let judge = |input: &str| {
        run(
            &["hook", "codex", "--store", &store],
            &payload("codex", REFUND_TOOL, input),
        )
    };
    for input in [
        r#"{"amount":9999.9999999999999999,"ticket":"7741"}"#,
        r#"{"amount":1e400,"ticket":"7741"}"#,
        r#"{"ticket":"7741","lines":[{"amount":0.30000000000000000001}],"amount":10}"#,
    ] {
        let out = judge(input);
        assert_eq!(out.code, 2, "{input}: {}", out.stderr);
        assert!(
            out.stderr.contains("ERROR (invalid-input)"),
            "{input}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("in a double"),
            "{input}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains(RESHAPE_ADVICE),
            "{input}: {}",
            out.stderr
        );
    }
    let out = judge(r#"{"amount":9999.9999999999999999,"ticket":"7741"}"#);
    assert!(
        out.stderr
            .contains("make the call again with the number written as 10000"),
        "{}",
        out.stderr
    );
    // What a double reads as written (as every payload of Claude Code and Gemini CLI
    // holds it) is judged.
    assert_eq!(judge(r#"{"amount":10000,"ticket":"7741"}"#).code, 2);
    let out = judge(r#"{"amount":9999.5,"ticket":"7741","rate":0.1,"n":-0,"e":1e21}"#);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
}
