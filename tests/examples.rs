//! The files in examples/: the shell script gates for real, and each harness's settings
//! snippet parses and runs the right subcommand against the example store.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_omission-gate");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

struct Out {
    stdout: String,
    stderr: String,
    code: i32,
}

fn output(c: &mut Command) -> Out {
    let out = c.output().unwrap();
    Out {
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        code: out.status.code().unwrap(),
    }
}

fn gate_then_run(args: &[&str]) -> Out {
    output(
        Command::new("sh")
            .arg("examples/gate-then-run.sh")
            .args(args)
            .current_dir(root())
            .env("OMISSION_GATE", BIN)
            .stdin(Stdio::null()),
    )
}

#[test]
fn gate_then_run_runs_the_command_only_on_pass() {
    let out = gate_then_run(&[
        "examples/store.json",
        r#"{"tool":"refunds.create","params":{"amount":120}}"#,
        "--",
        "echo",
        "refund issued",
    ]);
    assert_eq!(out.stdout, "refund issued\n");
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains("verdict   : PASS exit 0\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn gate_then_run_refuses_on_block_and_error_with_the_gate_exit_code() {
    for (action, code, verdict) in [
        (
            r#"{"tool":"refunds.create","params":{"amount":8400}}"#,
            1,
            "verdict   : BLOCK (dropped-binding-constraint) exit 1\n",
        ),
        (
            r#"{"tool":"Bash","params":{"command":"./scripts/send-invoice.sh 7741"}}"#,
            1,
            "verdict   : BLOCK (dropped-effect-replay) exit 1\n",
        ),
        (
            r#"{"tool":"payouts.send","params":{"amount":10}}"#,
            2,
            "verdict   : ERROR (unresolved-field) exit 2\n",
        ),
        (
            r#"{"tool":"refunds.create""#,
            2,
            "verdict   : ERROR (invalid-input) exit 2\n",
        ),
    ] {
        let out = gate_then_run(&["examples/store.json", action, "--", "echo", "ran"]);
        assert_eq!(out.stdout, "", "{action}: the command must not run");
        assert_eq!(out.code, code, "{action}");
        assert!(out.stderr.contains(verdict), "{action}: {}", out.stderr);
        assert!(
            out.stderr.ends_with(&format!(
                "gate-then-run: not running `echo`: omission-gate exited {code}\n"
            )),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn gate_then_run_fails_closed_without_a_gate_or_with_bad_usage() {
    let out = output(
        Command::new("sh")
            .args([
                "examples/gate-then-run.sh",
                "examples/store.json",
                r#"{"tool":"refunds.create","params":{"amount":120}}"#,
                "--",
                "echo",
                "ran",
            ])
            .current_dir(root())
            .env("OMISSION_GATE", "/nonexistent/omission-gate"),
    );
    assert_eq!(out.stdout, "");
    assert_eq!(out.code, 127);
    let out = gate_then_run(&["examples/store.json", "echo", "ran"]);
    assert_eq!(
        (out.stdout.as_str(), out.code),
        ("", 2),
        "usage errors run nothing"
    );
    // Kept ids from the environment override the store's.
    let out = output(
        Command::new("sh")
            .args([
                "examples/gate-then-run.sh",
                "examples/store.json",
                r#"{"tool":"refunds.create","params":{"amount":8400}}"#,
                "--",
                "echo",
                "ran",
            ])
            .current_dir(root())
            .env("OMISSION_GATE", BIN)
            .env("OMISSION_GATE_KEPT", "r1,r2,r3,r4,r5,r6"),
    );
    assert_eq!((out.stdout.as_str(), out.code), ("ran\n", 0));
}

fn json_file(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The one hook command an event's first group declares.
fn command_of(settings: &Value, event: &str) -> (String, Value) {
    let group = &settings["hooks"][event][0];
    let handler = &group["hooks"][0];
    assert_eq!(handler["type"], "command", "{event}");
    (
        handler["command"].as_str().unwrap().to_string(),
        handler["timeout"].clone(),
    )
}

/// A real session transcript of the harness with no compaction, in which the example
/// store's records were never mentioned (tests/transcripts/README.md).
fn transcript(harness: &str) -> String {
    root()
        .join("tests/transcripts")
        .join(harness)
        .join("D-1.jsonl")
        .display()
        .to_string()
}

/// A project directory with the example store where the snippets expect it.
fn project(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("examples")
        .join(name);
    std::fs::create_dir_all(dir.join(".omission-gate")).unwrap();
    std::fs::copy(
        root().join("examples/store.json"),
        dir.join(".omission-gate/store.json"),
    )
    .unwrap();
    dir
}

/// Runs a snippet's command the way a harness does (through a shell, in the project
/// directory), with the built binary first on PATH (or, with `bin: false`, not on it)
/// and the payload on stdin.
fn run_snippet(command: &str, dir: &Path, env: &[(&str, &Path)], payload: &str) -> Out {
    run_snippet_with(command, dir, env, payload, true)
}

fn run_snippet_with(
    command: &str,
    dir: &Path,
    env: &[(&str, &Path)],
    payload: &str,
    bin: bool,
) -> Out {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = if bin {
        format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    } else {
        "/usr/bin:/bin".to_string()
    };
    let mut c = Command::new("sh");
    c.arg("-c").arg(command).current_dir(dir).env("PATH", path);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = common::output_of(c, Some(payload.as_bytes()));
    Out {
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        code: out.status.code().unwrap(),
    }
}

/// `--timeout-ms N` from a command line.
fn own_deadline_ms(command: &str) -> u64 {
    let words: Vec<&str> = command.split_whitespace().collect();
    let i = words.iter().position(|w| *w == "--timeout-ms").unwrap();
    words[i + 1].parse().unwrap()
}

const REFUND: &str = r#""tool_name":"mcp__billing__refunds_create","tool_input":{"amount":8400}"#;

/// A pre-tool deny: nothing on stdout, the reason on stderr, exit 2.
#[track_caller]
fn assert_blocked(out: &Out) {
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr
            .starts_with("omission-gate denied this call: BLOCK (dropped-binding-constraint)"),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 2);
}

/// Without the binary on PATH the snippet still blocks: exit 2 with the shell's
/// complaint on stderr (Codex and Gemini CLI need stderr not to be empty).
#[track_caller]
fn assert_blocks_without_the_binary(command: &str, dir: &Path, env: &[(&str, &Path)]) {
    let out = run_snippet_with(command, dir, env, "{}", false);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(!out.stderr.trim().is_empty());
}

#[test]
fn claude_code_settings_run_the_claude_code_adapters() {
    let settings = json_file("examples/claude-code/settings.json");
    let (pre_tool, timeout) = command_of(&settings, "PreToolUse");
    assert!(
        pre_tool.starts_with("omission-gate hook claude-code --store "),
        "{pre_tool}"
    );
    // Claude Code's timeout is in seconds; ours must run out first.
    assert!(own_deadline_ms(&pre_tool) < timeout.as_u64().unwrap() * 1000);
    let matcher = settings["hooks"]["PreToolUse"][0]["matcher"]
        .as_str()
        .unwrap();
    assert!(matcher.contains("Bash") && matcher.contains("mcp__.*"));

    let dir = project("claude-code");
    let env = [("CLAUDE_PROJECT_DIR", dir.as_path())];
    let payload = format!(
        r#"{{"session_id":"s","transcript_path":"{}","hook_event_name":"PreToolUse",{REFUND},"tool_use_id":"toolu_0003"}}"#,
        transcript("claude-code")
    );
    let out = run_snippet(&pre_tool, &dir, &env, &payload);
    assert_blocked(&out);
    assert_blocks_without_the_binary(&pre_tool, &dir, &env);

    let (pre_compact, timeout) = command_of(&settings, "PreCompact");
    assert!(
        pre_compact.starts_with("omission-gate hook claude-code-precompact --store "),
        "{pre_compact}"
    );
    assert!(own_deadline_ms(&pre_compact) < timeout.as_u64().unwrap() * 1000);
    let out = run_snippet(
        &pre_compact,
        &dir,
        &env,
        r#"{"hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}"#,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("- r2 (policy, seq 2)"),
        "{}",
        out.stdout
    );
    // Never exit 2 here, not even without the binary: it would block the compaction.
    assert!(!pre_compact.contains("exit 2"));
    let out = run_snippet_with(&pre_compact, &dir, &env, "{}", false);
    assert_ne!(out.code, 2);
}

#[test]
fn codex_hooks_json_runs_the_codex_adapter_and_config_toml_trusts_it() {
    let settings = json_file("examples/codex/hooks.json");
    let (command, timeout) = command_of(&settings, "PreToolUse");
    assert!(
        command.starts_with("omission-gate hook codex --store /path/to/project/"),
        "{command}"
    );
    assert!(own_deadline_ms(&command) < timeout.as_u64().unwrap() * 1000);

    // config.toml holds the trust Codex needs for exactly this hook.
    let text = std::fs::read_to_string(root().join("examples/codex/config.toml")).unwrap();
    let toml: toml::Table = text.parse().unwrap();
    assert_eq!(
        toml["projects"]["/path/to/project"]["trust_level"].as_str(),
        Some("trusted")
    );
    let group = &settings["hooks"]["PreToolUse"][0];
    let hash = common::codex_trusted_hash(group["matcher"].as_str(), &group["hooks"][0]);
    assert_eq!(
        toml["hooks"]["state"]["/path/to/project/.codex/hooks.json:pre_tool_use:0:0"]
            ["trusted_hash"]
            .as_str(),
        Some(hash.as_str())
    );

    let dir = project("codex");
    // Codex has no project-directory variable: init writes the store's absolute path.
    let command = command.replace("/path/to/project", dir.to_str().unwrap());
    let payload = format!(
        r#"{{"session_id":"s","turn_id":"t","transcript_path":"{}","cwd":"/repo","hook_event_name":"PreToolUse","model":"m",{REFUND},"tool_use_id":"call_0003"}}"#,
        transcript("codex")
    );
    let out = run_snippet(&command, &dir, &[], &payload);
    assert_blocked(&out);
    assert_blocks_without_the_binary(&command, &dir, &[]);
}

#[test]
fn gemini_cli_settings_run_the_gemini_adapter() {
    let settings = json_file("examples/gemini-cli/settings.json");
    let (command, timeout) = command_of(&settings, "BeforeTool");
    assert!(
        command.starts_with("omission-gate hook gemini-cli --store "),
        "{command}"
    );
    // Gemini CLI's timeout is in milliseconds.
    assert!(own_deadline_ms(&command) < timeout.as_u64().unwrap());

    let dir = project("gemini-cli");
    let env = [("GEMINI_PROJECT_DIR", dir.as_path())];
    // Gemini CLI replaces `$GEMINI_PROJECT_DIR` in the command text with the shell-quoted
    // directory before `bash -c` runs it (hookRunner.ts `expandCommand`), so the snippet
    // must not quote it again.
    let quoted = format!("'{}'", dir.display().to_string().replace('\'', "'\\''"));
    let command = command.replace("$GEMINI_PROJECT_DIR", &quoted);
    let payload = format!(
        // The session the transcript is (Gemini CLI's payload names it, and no call).
        r#"{{"session_id":"bbfa60dc-0bcb-4df3-896a-22fb7f409308","transcript_path":"{}","cwd":"/repo","hook_event_name":"BeforeTool","timestamp":"2026-11-01T10:30:00Z","tool_name":"mcp_billing_refunds_create","tool_input":{{"amount":8400}}}}"#,
        transcript("gemini-cli")
    );
    let out = run_snippet(&command, &dir, &env, &payload);
    assert_blocked(&out);
    assert_blocks_without_the_binary(&command, &dir, &env);
    // A harmless call passes silently.
    let payload = format!(
        r#"{{"session_id":"bbfa60dc-0bcb-4df3-896a-22fb7f409308","hook_event_name":"BeforeTool","transcript_path":"{}","cwd":"/repo","tool_name":"run_shell_command","tool_input":{{"command":"ls"}}}}"#,
        transcript("gemini-cli")
    );
    let out = run_snippet(&command, &dir, &env, &payload);
    assert_eq!((out.stdout.as_str(), out.code), ("", 0));
}
