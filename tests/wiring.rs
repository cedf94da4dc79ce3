//! `init` and `doctor` for each harness: init then doctor is clean (in a fresh project and
//! in one with a configuration of its own, kept byte for byte), each wiring problem is
//! found with its exact line, and the example configurations are what init writes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_omission-gate");
const HARNESSES: [&str; 3] = ["claude-code", "codex", "gemini-cli"];

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A project directory and a home of its own, so no real user settings count.
struct Sandbox {
    _root: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let home = base.join("home");
        let project = base.join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        Sandbox {
            _root: root,
            home,
            project,
        }
    }

    fn run(&self, args: &[&str]) -> Out {
        self.run_with(args, &[])
    }

    /// Runs the binary with `vars` set in its environment.
    fn run_with(&self, args: &[&str], vars: &[(&str, &str)]) -> Out {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(&self.project)
            .env_remove("CLAUDE_CODE_SIMPLE")
            .env_remove("CLAUDE_CODE_SAFE_MODE")
            .env_remove("CLAUDE_CODE_SHELL_PREFIX")
            .env("HOME", &self.home)
            .env("CODEX_HOME", self.home.join(".codex"))
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CLAUDE_CODE_PLUGIN_CACHE_DIR")
            .env_remove("CLAUDE_CODE_PLUGIN_SEED_DIR")
            .env_remove("CLAUDE_CODE_USE_COWORK_PLUGINS")
            .env_remove("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
            .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
            .env_remove("GEMINI_RESTRICTED_MODE")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
            .env_remove("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
            .env_remove("BASH_ENV")
            .env_remove("ANTHROPIC_DEFAULT_OPUS_MODEL")
            .env_remove("ANTHROPIC_DEFAULT_FABLE_MODEL")
            .env_remove("CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK")
            .env_remove("CLAUDE_CODE_EXTRA_BODY")
            .envs(vars.iter().copied());
        let out = common::output_of(c, None);
        Out {
            code: out.status.code().unwrap(),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    fn p(&self) -> &str {
        self.project.to_str().unwrap()
    }

    fn init(&self, harness: &str) -> Out {
        let out = self.run(&["init", harness, "--dir", self.p()]);
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        out
    }

    fn doctor(&self, harness: &str) -> Out {
        self.doctor_in(harness, self.p())
    }

    fn doctor_in(&self, harness: &str, dir: &str) -> Out {
        self.run(&["doctor", harness, "--dir", dir])
    }

    fn settings(&self, harness: &str) -> PathBuf {
        self.project.join(match harness {
            "claude-code" => ".claude/settings.json",
            "codex" => ".codex/hooks.json",
            _ => ".gemini/settings.json",
        })
    }

    fn store(&self) -> PathBuf {
        self.project.join(".omission-gate/store.json")
    }

    /// Writes `store` (a store document's text) with `tools`, a JSON array, as its
    /// `tools`.
    fn write_store_listing(&self, store: &str, tools: &str) {
        let listed = store.replacen(
            "{\"records\"",
            &format!("{{\"tools\": {tools}, \"records\""),
            1,
        );
        assert_ne!(listed, store);
        std::fs::write(self.store(), listed).unwrap();
    }

    /// What the docs tell the user to do so the harness runs the hook: for Codex, the
    /// lines init printed, in the user config; for Gemini CLI, the folder trusted.
    fn trust(&self, harness: &str, init_stdout: &str) {
        match harness {
            "codex" => {
                let lines: Vec<&str> = init_stdout
                    .lines()
                    .skip_while(|l| !l.starts_with("[projects."))
                    .take_while(|l| !l.starts_with("check the wiring"))
                    .collect();
                assert!(!lines.is_empty(), "{init_stdout}");
                let dir = self.home.join(".codex");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("config.toml"), lines.join("\n")).unwrap();
            }
            "gemini-cli" => {
                let dir = self.home.join(".gemini");
                std::fs::create_dir_all(&dir).unwrap();
                let rules = serde_json::json!({ self.p(): "TRUST_FOLDER" });
                std::fs::write(dir.join("trustedFolders.json"), rules.to_string()).unwrap();
            }
            _ => {}
        }
    }

    /// Trusts the Codex hook as the file now has it.
    fn trust_codex_as_is(&self) {
        let hooks: Value =
            serde_json::from_str(&std::fs::read_to_string(self.settings("codex")).unwrap())
                .unwrap();
        let group = &hooks["hooks"]["PreToolUse"][0];
        let hash = common::codex_trusted_hash(group["matcher"].as_str(), &group["hooks"][0]);
        let key = format!(
            "{}:pre_tool_use:0:0",
            self.settings("codex").to_str().unwrap()
        );
        std::fs::write(
            self.home.join(".codex/config.toml"),
            common::codex_trust_lines(self.p(), &key, &hash),
        )
        .unwrap();
    }

    /// init, and the trust the docs describe.
    fn wired(&self, harness: &str) -> Out {
        let out = self.init(harness);
        self.trust(harness, &out.stdout);
        out
    }

    /// doctor is clean: the hook in the project's settings gates.
    #[track_caller]
    fn assert_doctor_clean(&self, harness: &str) {
        assert_clean(&self.doctor(harness), &self.settings(harness), harness);
    }

    /// Makes the hook init wrote run the program `path` instead of this binary.
    fn run_program(&self, harness: &str, path: &str) {
        self.edit_settings(harness, |t| t.replace(&binary(), path));
        if harness == "codex" {
            // The edit changed the hook: trust it as it now is, as the user would.
            self.trust_codex_as_is();
        }
    }

    fn edit_settings(&self, harness: &str, edit: impl Fn(String) -> String) {
        let path = self.settings(harness);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, edit(text)).unwrap();
    }
}

fn binary() -> String {
    std::fs::canonicalize(BIN)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string()
}

/// doctor's line for a hook that gates, in `settings`, with the project's default store.
#[track_caller]
fn assert_clean(out: &Out, settings: &Path, harness: &str) {
    // `settings` is `<project>/.<harness folder>/<file>`.
    let project = settings.parent().and_then(Path::parent).unwrap();
    assert_clean_with(
        out,
        settings,
        &project.join(".omission-gate/store.json"),
        harness,
    );
}

/// doctor's line for a hook that gates, in `settings`, with the store `store`.
#[track_caller]
fn assert_clean_with(out: &Out, settings: &Path, store: &Path, harness: &str) {
    assert_eq!(
        out.stdout,
        format!(
            "ok: the hook in `{}` gates with the store `{}`: run as {harness} runs it, it denied a call it must deny and let a harmless one run\n",
            settings.display(),
            store.display()
        ),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 0);
}

/// The findings doctor printed (all lines but the count), exit 1.
#[track_caller]
fn findings(out: &Out) -> Vec<String> {
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let lines: Vec<String> = out.stdout.lines().map(str::to_string).collect();
    let (last, rest) = lines.split_last().unwrap();
    assert!(last.contains("would not gate as configured"), "{last}");
    rest.to_vec()
}

#[track_caller]
fn assert_finds(out: &Out, line: &str) {
    let found = findings(out);
    assert!(
        found.iter().any(|l| l == line),
        "expected\n  {line}\namong\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn init_then_doctor_is_clean_in_a_fresh_directory() {
    for h in HARNESSES {
        let s = Sandbox::new();
        s.wired(h);
        assert_clean(&s.doctor(h), &s.settings(h), h);
        let store: Value =
            serde_json::from_str(&std::fs::read_to_string(s.store()).unwrap()).unwrap();
        // Claude Code's effect comes once for each of its three shell tools.
        let records = if h == "claude-code" { 6 } else { 4 };
        assert_eq!(store["records"].as_array().unwrap().len(), records, "{h}");
    }
}

#[test]
fn init_codex_prints_only_the_trust_the_user_config_lacks() {
    // A user who trusted the folder in the Codex TUI has `[projects."DIR"]` already;
    // adding the lines init printed then made a second such table, a TOML error
    // ("duplicate key", seen with Codex 0.171.0, which then does not start).
    let s = Sandbox::new();
    let config = s.home.join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let project = format!("[projects.\"{}\"]\ntrust_level = \"trusted\"\n", s.p());
    std::fs::write(&config, &project).unwrap();
    let out = s.init("codex");
    let added: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with('['))
        .take_while(|l| !l.starts_with("check the wiring"))
        .collect();
    assert!(added[0].starts_with("[hooks.state."), "{}", out.stdout);
    std::fs::write(&config, format!("{project}\n{}\n", added.join("\n"))).unwrap();
    s.assert_doctor_clean("codex");

    // A table there with another value is edited in place, by init's and doctor's word.
    let key = format!("{}:pre_tool_use:0:0", s.settings("codex").display());
    std::fs::write(
        &config,
        format!(
            "[projects.\"{}\"]\ntrust_level = \"untrusted\"\n\n[hooks.state.\"{key}\"]\ntrusted_hash = \"sha256:00\"\n",
            s.p()
        ),
    )
    .unwrap();
    let out = s.init("codex");
    assert!(
        !out.stdout.lines().any(|l| l.starts_with('[')),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "or edit `{}`, which has these tables already (a second one is a TOML error, and Codex will not start): set `trust_level = \"trusted\"` in its `[projects.\"{}\"]` table; set `trusted_hash = \"sha256:",
            config.display(),
            s.p()
        )),
        "{}",
        out.stdout
    );
    assert_finds(
        &s.doctor("codex"),
        &format!(
            "the project `{p}` is not trusted, so Codex ignores the hooks in its `.codex` folders: set `trust_level = \"trusted\"` in its `[projects.\"{p}\"]` table in `{}`",
            config.display(),
            p = s.p()
        ),
    );
}

#[test]
fn doctor_notes_a_claude_md_the_claude_code_hook_does_not_read() {
    // Claude Code 2.1.197 sends CLAUDE.md with every request and writes it in no
    // transcript: a rule it states was denied at its first call, and ran once the hook
    // read the file with --context-file. doctor said nothing of it.
    let s = Sandbox::new();
    s.wired("claude-code");
    std::fs::write(
        s.project.join("CLAUDE.md"),
        "Refunds over 5,000 need a human approver.\n",
    )
    .unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    let note = format!(
        "omission-gate doctor: note: `{}/CLAUDE.md` is sent with every request, and Claude Code writes it in no transcript, so the hook in `{}` does not count what it says as in view: a rule of the store that it states is denied at its first call; add `--context-file \"$CLAUDE_PROJECT_DIR\"/CLAUDE.md` to the hook command after `--kept-from transcript`\n",
        s.p(),
        s.settings("claude-code").display()
    );
    assert_eq!(out.stderr, note);
    let settings = std::fs::read_to_string(s.settings("claude-code")).unwrap();
    let read = settings.replace(
        "--kept-from transcript --timeout-ms",
        "--kept-from transcript --context-file \\\"$CLAUDE_PROJECT_DIR\\\"/CLAUDE.md --timeout-ms",
    );
    assert_ne!(read, settings);
    std::fs::write(s.settings("claude-code"), read).unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    assert_eq!(out.stderr, "");
}

#[test]
fn doctor_notes_every_instruction_file_claude_code_reads_that_the_hook_does_not() {
    // Claude Code 2.1.197 also reads `~/.claude/CLAUDE.md`, and from each folder above
    // the start directory down to it `CLAUDE.md`, `.claude/CLAUDE.md`, the rules in
    // `.claude/rules` and `CLAUDE.local.md` (its memory loader; seen: each in the first
    // request, none in the transcript); doctor noted only `<dir>/CLAUDE.md`.
    let s = Sandbox::new();
    s.wired("claude-code");
    let base = s.project.parent().unwrap();
    std::fs::create_dir_all(s.home.join(".claude")).unwrap();
    std::fs::create_dir_all(s.project.join(".claude/rules/sub")).unwrap();
    for file in [
        s.home.join(".claude/CLAUDE.md"),
        base.join("CLAUDE.md"),
        s.project.join(".claude/CLAUDE.md"),
        s.project.join(".claude/rules/sub/refunds.md"),
        s.project.join("CLAUDE.local.md"),
    ] {
        std::fs::write(file, "Refunds over 5,000 need a human approver.\n").unwrap();
    }
    // A link back up the rules folder is followed once: it listed `sub/loop/sub/...`
    // over and over, until the path grew too long to read.
    std::os::unix::fs::symlink("..", s.project.join(".claude/rules/sub/loop")).unwrap();
    // A rule with front matter may be read only once the agent touches a file its
    // `paths` cover (seen: not in the first request): never counted in view.
    std::fs::write(
        s.project.join(".claude/rules/src.md"),
        "---\npaths: src/**\n---\nRefunds over 5,000 need a human approver.\n",
    )
    .unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    let b = base.display();
    let flags = format!(
        "--context-file \"$HOME\"/.claude/CLAUDE.md --context-file {b}/CLAUDE.md --context-file \"$CLAUDE_PROJECT_DIR\"/.claude/CLAUDE.md --context-file \"$CLAUDE_PROJECT_DIR\"/.claude/rules/sub/refunds.md --context-file \"$CLAUDE_PROJECT_DIR\"/CLAUDE.local.md"
    );
    assert_eq!(
        out.stderr,
        format!(
            "omission-gate doctor: note: `{}/.claude/CLAUDE.md`, `{b}/CLAUDE.md`, `{p}/.claude/CLAUDE.md`, `{p}/.claude/rules/sub/refunds.md` and `{p}/CLAUDE.local.md` are sent with every request, and Claude Code writes them in no transcript, so the hook in `{}` does not count what they say as in view: a rule of the store that one of them states is denied at its first call; add `{flags}` to the hook command after `--kept-from transcript`\n",
            s.home.display(),
            s.settings("claude-code").display(),
            p = s.p(),
        )
    );
    // With the flags as the note gives them, nothing to note, and the hook gates.
    s.edit_settings("claude-code", |t| {
        t.replace(
            "--kept-from transcript --timeout-ms",
            &format!(
                "--kept-from transcript {} --timeout-ms",
                flags.replace('"', "\\\"")
            ),
        )
    });
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    assert_eq!(out.stderr, "");
}

#[test]
fn doctor_does_not_give_a_main_checkouts_claude_md_in_a_worktree_inside_it() {
    // Claude Code 2.1.197 in a git worktree inside its main checkout (as its own
    // `.claude/worktrees/<name>`) reads no `CLAUDE.md` of the main checkout (seen: not in
    // the request): doctor said it was sent and gave `--context-file` for it, with which
    // the call a rule there binds ran.
    let s = Sandbox::new();
    s.wired("claude-code");
    let base = s.project.parent().unwrap();
    let git = base.join(".git/worktrees/wt");
    std::fs::create_dir_all(&git).unwrap();
    std::fs::write(git.join("commondir"), "../..\n").unwrap();
    std::fs::write(git.join("gitdir"), format!("{}/.git\n", s.p())).unwrap();
    std::fs::write(
        s.project.join(".git"),
        format!("gitdir: {}\n", git.display()),
    )
    .unwrap();
    for file in [
        base.join("CLAUDE.md"),
        base.join("CLAUDE.local.md"),
        s.project.join("CLAUDE.md"),
    ] {
        std::fs::write(file, "Refunds over 5,000 need a human approver.\n").unwrap();
    }
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    let b = base.display();
    assert!(
        out.stderr.contains(&format!(
            "note: `{b}/CLAUDE.local.md` and `{p}/CLAUDE.md` are sent with every request",
            p = s.p()
        )),
        "{}",
        out.stderr
    );
    // Not a worktree of that checkout (its `gitdir` names another): the main one's too.
    std::fs::write(git.join("gitdir"), "/elsewhere/.git\n").unwrap();
    let out = s.doctor("claude-code");
    assert!(
        out.stderr
            .contains(&format!("note: `{b}/CLAUDE.md`, `{b}/CLAUDE.local.md` and")),
        "{}",
        out.stderr
    );
}

#[test]
fn a_second_init_changes_nothing() {
    for h in HARNESSES {
        let s = Sandbox::new();
        s.wired(h);
        let before = std::fs::read_to_string(s.settings(h)).unwrap();
        let store = std::fs::read_to_string(s.store()).unwrap();
        let out = s.init(h);
        assert!(
            out.stdout.starts_with(&format!(
                "`{}` already runs the gate: nothing to change\nkept the existing store `{}`\n",
                s.settings(h).display(),
                s.store().display()
            )),
            "{}",
            out.stdout
        );
        assert_eq!(std::fs::read_to_string(s.settings(h)).unwrap(), before);
        assert_eq!(std::fs::read_to_string(s.store()).unwrap(), store);
        if h == "codex" {
            assert!(
                out.stdout.contains("already trusts this hook"),
                "{}",
                out.stdout
            );
        }
    }
}

/// Whether every byte of `old` is in `new`, in order.
fn kept_in_order(old: &str, new: &str) -> bool {
    let mut rest = new.bytes();
    old.bytes().all(|b| rest.any(|n| n == b))
}

/// The settings with our groups taken out (and the lists that held only them).
fn without_ours(mut v: Value) -> Value {
    if let Some(hooks) = v.get_mut("hooks").and_then(Value::as_object_mut) {
        hooks.retain(|_, list| {
            let Some(groups) = list.as_array_mut() else {
                return true;
            };
            let before = groups.len();
            groups.retain(|g| !g.to_string().contains("omission-gate"));
            // A list that held only ours was added by init.
            !(groups.is_empty() && before > 0)
        });
        if hooks.is_empty()
            && let Some(o) = v.as_object_mut()
        {
            o.remove("hooks");
        }
    }
    v
}

#[test]
fn init_merges_into_an_existing_configuration_and_keeps_it_byte_for_byte() {
    let existing = [
        (
            "claude-code",
            "{\n    \"model\": \"opus\",\n    \"permissions\": {\"allow\": [\"Bash(ls:*)\"]},\n    \"hooks\": {\n        \"PreToolUse\": [ {\"matcher\": \"Read\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo read\"}]} ]\n    }\n}\n",
        ),
        (
            "codex",
            "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"^Read$\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo read\"}]}],\n \"Stop\": []}}",
        ),
        (
            "gemini-cli",
            "// my settings\n{\n  \"ui\": {\"theme\": \"GitHub\"}, /* keep */\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}\n",
        ),
    ];
    // Without the comments (outside strings) some settings files carry.
    let comment = regex::Regex::new(r#""(?:\\.|[^"\\])*"|//[^\n]*|/\*[\s\S]*?\*/"#).unwrap();
    for (h, text) in existing {
        let s = Sandbox::new();
        let path = s.settings(h);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        s.wired(h);
        let new = std::fs::read_to_string(&path).unwrap();
        assert!(kept_in_order(text, &new), "{h}:\n{new}");
        assert!(
            new.starts_with(&text[..text.find("\"hooks\"").unwrap_or(text.len() - 3)]),
            "{h}:\n{new}"
        );
        let strip = |t: &str| {
            let plain = comment.replace_all(t, |c: &regex::Captures<'_>| {
                let m = &c[0];
                if m.starts_with('"') {
                    m.to_string()
                } else {
                    String::new()
                }
            });
            serde_json::from_str::<Value>(&plain).unwrap()
        };
        assert_eq!(without_ours(strip(&new)), strip(text), "{h}");
        assert_clean(&s.doctor(h), &path, h);
    }
}

#[test]
fn init_refuses_a_file_it_cannot_parse_and_leaves_it_alone() {
    for h in HARNESSES {
        let s = Sandbox::new();
        let path = s.settings(h);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"hooks\": ").unwrap();
        let out = s.run(&["init", h, "--dir", s.p()]);
        assert_eq!(out.code, 2, "{h}");
        assert_eq!(
            out.stderr,
            format!(
                "omission-gate: init: `{}` is not valid JSON (line 1 column 10: EOF while parsing a value): it was left as it is; fix it, then run init again\n",
                path.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"hooks\": ");
        assert!(!s.store().exists(), "nothing else is written either");
    }
}

#[test]
fn init_refuses_claude_code_settings_that_claude_code_would_ignore() {
    for (text, problem) in [
        (
            "{\"permissions\": {\"allow\": \"Bash\"}}",
            "`permissions.allow` must be an array of strings",
        ),
        ("{\"sandbox\": 5}", "`sandbox` must be an object"),
    ] {
        let s = Sandbox::new();
        let path = s.settings("claude-code");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        let out = s.run(&["init", "claude-code", "--dir", s.p()]);
        assert_eq!(out.code, 2);
        assert_eq!(
            out.stderr,
            format!(
                "omission-gate: init: `{}`: {problem}, and Claude Code ignores the whole file (hooks included) until it is: it was left as it is; fix that key, then run init again\n",
                path.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}

#[test]
fn doctor_finds_a_settings_file_that_does_not_parse() {
    let s = Sandbox::new();
    s.wired("claude-code");
    s.edit_settings("claude-code", |t| t.replacen('{', "{,", 1));
    assert_finds(
        &s.doctor("claude-code"),
        &format!(
            "`{}` is not valid JSON (line 1 column 2: key must be a string), and Claude Code ignores it: fix the syntax",
            s.settings("claude-code").display()
        ),
    );
}

/// A Claude Code matcher written before Monitor and PowerShell were known selects `Bash`
/// but not them: a shell command run through either was never shown to the gate. doctor
/// names each, and init writes a matcher that selects them.
#[test]
fn doctor_finds_a_matcher_that_leaves_out_a_tool_that_runs_shell_commands() {
    let s = Sandbox::new();
    s.wired("claude-code");
    let old = "Bash|Edit|MultiEdit|Write|NotebookEdit|mcp__.*";
    s.edit_settings("claude-code", |t| {
        t.replace(
            "Bash|Monitor|PowerShell|Edit|MultiEdit|Write|NotebookEdit|mcp__.*",
            old,
        )
    });
    let out = s.doctor("claude-code");
    for tool in ["Monitor", "PowerShell"] {
        assert_finds(
            &out,
            &format!(
                "the matcher `{old}` of the hook in `{}` selects `Bash`, which record `done-invoice-7741` names, but not `{tool}`, which does the same in Claude Code, so the gate never sees those calls: add `{tool}` to the matcher (run `omission-gate init claude-code` again)",
                s.settings("claude-code").display()
            ),
        );
    }
    s.init("claude-code");
    assert_clean(
        &s.doctor("claude-code"),
        &s.settings("claude-code"),
        "claude-code",
    );
}

/// An MCP tool named with characters the harness replaces (`.` in a server's name) is
/// never sent so: doctor names the name to write, and says why, not that the name has
/// the wrong form.
#[test]
fn doctor_finds_an_mcp_name_the_harness_changes() {
    for (h, named, sent) in [
        (
            "claude-code",
            "mcp__bill.ing__refunds",
            "mcp__bill_ing__refunds",
        ),
        ("gemini-cli", "mcp_bill ing_refunds", "mcp_bill_ing_refunds"),
    ] {
        let s = Sandbox::new();
        s.wired(h);
        let store = format!(
            r#"{{"records": [{{"id": "r", "seq": 1, "kind": "policy", "scope": ["{named}"], "predicate": {{"all": []}}, "effect": "deny", "text": "Never issue refunds from this project."}}], "kept": []}}"#
        );
        std::fs::write(s.store(), store).unwrap();
        let title = if h == "claude-code" {
            "Claude Code"
        } else {
            "Gemini CLI"
        };
        // Claude Code replaces characters and cuts no name.
        let how = match h {
            "claude-code" => "it replaces characters it does not allow in a tool name",
            _ => "it replaces characters it does not allow in a tool name, and cuts a long name",
        };
        assert_finds(
            &s.doctor(h),
            &format!(
                "record `r` scopes to `{named}`, a name {title} never gives a tool ({how}): write `{sent}`, or name both if another harness shares this store"
            ),
        );
    }
}

/// A store that names `Bash` and never `Monitor` or `PowerShell`, which run shell
/// commands too: the hook denies their calls until it names them. The wiring gates, so
/// doctor is clean, and notes each; the starter store, which names all three, has no note.
#[test]
fn doctor_notes_a_built_in_the_store_never_names_beside_one_that_does_the_same() {
    let s = Sandbox::new();
    s.wired("claude-code");
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    assert!(
        !out.stderr.contains("which does the same"),
        "{}",
        out.stderr
    );
    let store = r#"{"records": [{"id": "e", "seq": 1, "kind": "effect", "tool": "Bash", "match": {"command": "./deploy.sh"}, "text": "The deploy already ran."}], "kept": []}"#;
    std::fs::write(s.store(), store).unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    for kin in ["Monitor", "PowerShell"] {
        let note = format!(
            "omission-gate doctor: note: record `e` names `Bash` and not `{kin}`, which does the same in Claude Code: the hook denies each call of `{kin}` until the store names it wherever it names `Bash` (beside it in a policy's scope, or in an effect record with the same `match`)"
        );
        assert!(out.stderr.contains(&note), "{}", out.stderr);
    }
    // An effect of a glob covering them, of the same `match`, replays their calls too.
    let store = r#"{"records": [{"id": "e", "seq": 1, "kind": "effect", "tool": "Bash", "match": {"command": "./deploy.sh"}, "text": "The deploy already ran."}, {"id": "m", "seq": 2, "kind": "effect", "tool": "Monito*", "match": {"command": "./deploy.sh"}}, {"id": "p", "seq": 3, "kind": "effect", "tool": "PowerShel*", "match": {"command": "./deploy.sh"}}], "kept": []}"#;
    std::fs::write(s.store(), store).unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    assert!(
        !out.stderr.contains("which does the same"),
        "{}",
        out.stderr
    );
}

/// A store whose rule names one of a harness's file-changing built-ins and not the
/// others (`Write`, not `Edit`): an agent that edits the file instead passes. The wiring
/// gates, so doctor is clean (exit 0) and notes the tools the store never names.
#[test]
fn doctor_notes_the_file_changing_tools_a_store_never_names_beside_one_it_names() {
    // The shell tools named in effect records of their own (a rule on `file_path` over
    // `Bash` would fail closed on doctor's harmless call).
    let rule = |scope: &str, shells: &[&str]| {
        let effects: String = (shells.iter().enumerate())
            .map(|(i, t)| format!(r#", {{"id": "e{i}", "seq": {}, "kind": "effect", "tool": "{t}", "match": {{"command": "./deploy.sh"}}, "text": "The deploy already ran."}}"#, i + 2))
            .collect();
        format!(
            r#"{{"records": [{{"id": "w", "seq": 1, "kind": "policy", "scope": {scope}, "predicate": {{"field": "file_path", "op": "eq", "value": "/srv/app/config.yml"}}, "effect": "deny", "text": "Never change config.yml."}}{effects}], "kept": []}}"#
        )
    };
    let cc_shells: &[&str] = &["Bash", "Monitor", "PowerShell"];
    let note = |h: &str, named: &str, unnamed: &str| {
        format!(
            "omission-gate doctor: note: record `w` names `{named}`, and the store never names {unnamed} in {h}: a rule binds only the tools it names, so their calls on the same file pass; if the rule is about the file, name them too (each carries the path in its own input key: see docs/hooks.md)"
        )
    };
    let cases: [(&str, &str, &[&str], Option<String>); 7] = [
        (
            "claude-code",
            r#"["Write"]"#,
            &[],
            Some(note(
                "Claude Code",
                "Write",
                "`Edit`, `MultiEdit`, `NotebookEdit`, which change files too, nor `Bash`, `Monitor`, `PowerShell`, whose commands can change any file",
            )),
        ),
        // `MultiEdit` beside `Edit` is the other note's (the hook denies it).
        (
            "claude-code",
            r#"["Edit"]"#,
            cc_shells,
            Some(note(
                "Claude Code",
                "Edit",
                "`Write`, `NotebookEdit`, which change files too",
            )),
        ),
        (
            "claude-code",
            r#"["Write", "Edit", "MultiEdit", "NotebookEdit"]"#,
            cc_shells,
            None,
        ),
        (
            "claude-code",
            r#"["Write", "Edit", "MultiEdit"]"#,
            cc_shells,
            Some(note(
                "Claude Code",
                "Write",
                "`NotebookEdit`, which changes files too",
            )),
        ),
        (
            "gemini-cli",
            r#"["write_file"]"#,
            &[],
            Some(note(
                "Gemini CLI",
                "write_file",
                "`replace`, which changes files too, nor `run_shell_command`, whose commands can change any file",
            )),
        ),
        (
            "codex",
            r#"["apply_patch"]"#,
            &[],
            Some(note(
                "Codex",
                "apply_patch",
                "`Bash`, whose commands can change any file",
            )),
        ),
        ("codex", r#"["apply_patch"]"#, &["Bash"], None),
    ];
    for (h, scope, shells, expected) in cases {
        let s = Sandbox::new();
        s.wired(h);
        std::fs::write(s.store(), rule(scope, shells)).unwrap();
        let out = s.doctor(h);
        assert_clean(&out, &s.settings(h), h);
        let notes: Vec<&str> = (out.stderr.lines())
            .filter(|l| l.contains("files too") || l.contains("can change any file"))
            .collect();
        assert_eq!(notes, expected.as_slice(), "{h} {scope}");
    }
}

/// Under init's `--kept-from transcript`, a record is kept when its text is in the
/// transcript: a rule whose text is a label (`data`) counts as in view wherever the
/// word occurs, so the hook may pass the call it forbids; a rule without text is never
/// in view. doctor used to say only `ok` for such a store (validate warns of it); the
/// wiring gates, so it stays clean (exit 0) and notes each such record.
#[test]
fn doctor_notes_a_rule_whose_text_a_transcript_can_hold_by_chance() {
    let store = r#"{"records": [
      {"id": "short", "seq": 1, "kind": "policy", "scope": ["Bash", "run_shell_command"], "predicate": {"field": "command", "op": "eq", "value": "rm -r data"}, "effect": "deny", "text": "data"},
      {"id": "mute", "seq": 2, "kind": "policy", "scope": ["Bash", "run_shell_command"], "predicate": {"field": "command", "op": "eq", "value": "rm -r logs"}, "effect": "deny"},
      {"id": "full", "seq": 3, "kind": "policy", "scope": ["Bash", "run_shell_command"], "predicate": {"field": "command", "op": "eq", "value": "rm -r www"}, "effect": "deny", "text": "Never delete the www folder."}
    ]}"#;
    for h in ["claude-code", "codex", "gemini-cli"] {
        let s = Sandbox::new();
        s.wired(h);
        std::fs::write(s.store(), store).unwrap();
        let out = s.doctor(h);
        assert_clean(&out, &s.settings(h), h);
        let at = format!(
            "omission-gate doctor: note: the store `{}`: record",
            s.store().display()
        );
        assert!(
            out.stderr.contains(&format!(
                "{at} `short`: policy whose `text` `data` is so short that a transcript can hold it by chance: read from a transcript, the record counts as in view wherever those words occur, even where it was never said; write it out in full\n"
            )),
            "{h}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains(&format!(
                "{at} `mute`: policy without `text`: it is never in view of a transcript, so a kept set read from one always drops it\n"
            )),
            "{h}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("`full`"), "{h}: {}", out.stderr);
    }
    // A large store: five lines, then a count.
    let facts: Vec<String> = (1..=12)
        .map(|i| {
            format!(r#"{{"id": "f{i}", "seq": {i}, "kind": "fact", "field": "x{i}", "value": 1}}"#)
        })
        .collect();
    let s = Sandbox::new();
    s.wired("codex");
    std::fs::write(
        s.store(),
        format!(
            r#"{{"records": [{}, {{"id": "e", "seq": 99, "kind": "effect", "tool": "Bash", "match": {{"command": "./deploy.sh"}}, "text": "The deploy already ran."}}]}}"#,
            facts.join(", ")
        ),
    )
    .unwrap();
    let out = s.doctor("codex");
    assert_clean(&out, &s.settings("codex"), "codex");
    let store = s.store().display().to_string();
    let notes: Vec<&str> = (out.stderr.lines())
        .filter(|l| l.contains(&format!("the store `{store}`:")))
        .collect();
    assert_eq!(notes.len(), 6, "{}", out.stderr);
    assert!(
        notes[4].contains("record `f5`: fact without `text`"),
        "{}",
        notes[4]
    );
    assert_eq!(
        notes[5],
        format!(
            "omission-gate doctor: note: the store `{store}`: 7 more records have no `text` or one too short to say the rule: `omission-gate validate {store}` lists them"
        )
    );
}

/// `"value": "5000"` with `gt` orders as text: a refund of `"10000"` is not over it and
/// passes, one of `8400` is a type mismatch. doctor said only `ok` for such a store; the
/// wiring gates, so it stays clean (exit 0) and notes the comparison, as validate warns.
#[test]
fn doctor_notes_a_number_written_as_a_string_in_an_ordering() {
    let store = r#"{"records": [
      {"id": "quoted", "seq": 1, "kind": "policy", "scope": ["mcp__billing__refunds_create", "mcp_billing_refunds_create"], "predicate": {"field": "amount", "op": "gt", "value": "5000"}, "effect": "require_approval", "text": "Refunds over 5,000 need a human approver."},
      {"id": "plain", "seq": 2, "kind": "policy", "scope": ["mcp__billing__refunds_create", "mcp_billing_refunds_create"], "predicate": {"field": "amount", "op": "gt", "value": 9000}, "effect": "deny", "text": "Refunds over 9,000 are never issued."}
    ]}"#;
    for h in ["claude-code", "codex", "gemini-cli"] {
        let s = Sandbox::new();
        s.wired(h);
        std::fs::write(s.store(), store).unwrap();
        let out = s.doctor(h);
        assert_clean(&out, &s.settings(h), h);
        assert!(
            out.stderr.contains(&format!(
                "omission-gate doctor: note: the store `{}`: record `quoted`: `predicate` compares `amount` `gt` the string `\"5000\"`, which orders as text, by code point (`\"9\"` is `gt` `\"10\"`), and a number against it is a type-mismatch ERROR: to compare numbers, write the number `5000`, without quotes\n",
                s.store().display()
            )),
            "{h}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("`plain`"), "{h}: {}", out.stderr);
    }
}

/// A schema in the store's `tools` that Gemini CLI's validator cannot compile (draft 04)
/// rules out no call in precheck and pin, which read it as admitting any params. doctor
/// said only `ok`; the wiring gates, so it stays clean (exit 0) and notes the tool, as
/// validate warns.
#[test]
fn doctor_notes_a_tool_schema_gemini_cli_cannot_compile() {
    let store = r#"{"records": [
      {"id": "plain", "seq": 1, "kind": "policy", "scope": ["mcp__billing__refunds_create", "mcp_billing_refunds_create"], "predicate": {"field": "amount", "op": "gt", "value": 9000}, "effect": "deny", "text": "Refunds over 9,000 are never issued."}
    ], "tools": [{"name": "*", "input_schema": {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}}]}"#;
    for h in ["claude-code", "codex", "gemini-cli"] {
        let s = Sandbox::new();
        s.wired(h);
        std::fs::write(s.store(), store).unwrap();
        let out = s.doctor(h);
        assert_clean(&out, &s.settings(h), h);
        // Only Gemini CLI holds a call to a schema: under the others none bounds a call.
        assert_eq!(
            out.stderr.contains(&format!(
                "omission-gate doctor: note: the store `{}`: tool `*`: its schema is one Gemini CLI's validator cannot compile (`$schema` is \"http://json-schema.org/draft-04/schema#\", a dialect it does not load), and then it checks no call against it and runs every call: precheck and pin read it as admitting any params, so it rules out no call (fix the tool's own schema, and give the gate the same)\n",
                s.store().display()
            )),
            h == "gemini-cli",
            "{h}: {}",
            out.stderr
        );
    }
}

/// init over an existing store that names `Bash` and never `Monitor` or `PowerShell`
/// says the hook will deny their calls, and what to add.
#[test]
fn init_warns_of_a_built_in_the_existing_store_never_names_beside_one_that_does_the_same() {
    let s = Sandbox::new();
    let store = r#"{"records": [{"id": "e", "seq": 1, "kind": "effect", "tool": "Bash", "match": {"command": "./deploy.sh"}, "text": "The deploy already ran."}, {"id": "p", "seq": 2, "kind": "policy", "scope": ["Bash"], "predicate": {"all": []}, "effect": "deny", "text": "Run no commands in this project."}], "kept": []}"#;
    std::fs::create_dir_all(s.store().parent().unwrap()).unwrap();
    std::fs::write(s.store(), store).unwrap();
    let out = s.wired("claude-code");
    let shown = s.store().display().to_string();
    for kin in ["Monitor", "PowerShell"] {
        let line = format!(
            "warning: record `e` names `Bash` and not `{kin}`, which does the same in Claude Code, so the hook denies each call of `{kin}`: add a copy of it (another id) whose `tool` is `{kin}` in `{shown}`"
        );
        assert!(out.stdout.lines().any(|l| l == line), "{}", out.stdout);
    }
    // Named beside `Bash` in the policy's scope only: the fix for a policy.
    let store = store.replace(r#""tool": "Bash""#, r#""tool": "Monitor""#);
    let store = store.replace(r#""id": "e""#, r#""id": "m""#);
    std::fs::write(s.store(), &store).unwrap();
    let out = s.wired("claude-code");
    // The effect naming `Monitor` does not make the policy bind its calls.
    for kin in ["Monitor", "PowerShell"] {
        let line = format!(
            "warning: record `p` names `Bash` and not `{kin}`, which does the same in Claude Code, so the hook denies each call of `{kin}`: add `{kin}` to its `scope` in `{shown}`"
        );
        assert!(out.stdout.lines().any(|l| l == line), "{}", out.stdout);
    }
}

/// A store with nothing that can stop a call (no records, or only facts, chatter and
/// permissions) is valid, and a hook wired to it passes every call: doctor says so.
#[test]
fn doctor_finds_a_store_that_binds_nothing() {
    for store in [
        r#"{"records": [], "kept": []}"#,
        r#"{"records": [{"id": "f", "seq": 1, "kind": "fact", "field": "tier", "value": "gold", "text": "The customer is on the gold tier."}], "kept": []}"#,
    ] {
        let s = Sandbox::new();
        s.wired("claude-code");
        std::fs::write(s.store(), store).unwrap();
        assert_finds(
            &s.doctor("claude-code"),
            &format!(
                "the store `{}` has no restrictive policy, effect record or record the gate cannot evaluate: nothing in it can stop a call, so check, and a hook wired to it, pass every call; add the rules the agent must keep to",
                s.store().display()
            ),
        );
    }
}

#[test]
fn doctor_finds_a_claude_code_key_of_the_wrong_shape() {
    // Each of these made Claude Code 2.1.197 ignore the file, its hooks with it, and run
    // the call the hook would have denied; an object-valued key of the wrong type too.
    for (key, problem) in [
        (
            r#""permissions": {"allow": "Bash(ls)"}"#,
            "`permissions.allow` must be an array of strings",
        ),
        (r#""sandbox": 5"#, "`sandbox` must be an object"),
        (
            r#""sandbox": {"network": {"allowedDomains": "x"}}"#,
            "`sandbox.network.allowedDomains` must be an array of strings",
        ),
        (r#""worktree": []"#, "`worktree` must be an object"),
    ] {
        let s = Sandbox::new();
        s.wired("claude-code");
        s.edit_settings("claude-code", |t| t.replacen('{', &format!("{{{key},"), 1));
        let out = s.doctor("claude-code");
        let path = s.settings("claude-code");
        assert_eq!(
            findings(&out),
            [format!(
                "`{}`: {problem}, and Claude Code ignores this whole file, hooks included (the gate's hook too): fix that key",
                path.display()
            )],
            "{key}"
        );
    }
    // A file Claude Code drops that does not hold the gate's hook leaves the gate where
    // it is: a note, not a problem (it made doctor say the wiring would not gate while
    // the real Claude Code ran the gate from the project's settings file).
    let s = Sandbox::new();
    s.wired("claude-code");
    let local = s.project.join(".claude/settings.local.json");
    std::fs::write(&local, r#"{"permissions": {"allow": "Bash"}}"#).unwrap();
    let out = s.doctor("claude-code");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "`{}`: `permissions.allow` must be an array of strings, and Claude Code ignores this whole file, hooks included: fix that key",
            local.display()
        )),
        "{}",
        out.stderr
    );
    // And these it read: a wrong value it drops alone, or makes a string.
    for key in [
        r#""theme": 5"#,
        r#""env": {"A": 1}"#,
        r#""permissions": {"allow": [5]}"#,
    ] {
        let s = Sandbox::new();
        s.wired("claude-code");
        s.edit_settings("claude-code", |t| t.replacen('{', &format!("{{{key},"), 1));
        let out = s.doctor("claude-code");
        assert_eq!(out.code, 0, "{key}: {}{}", out.stdout, out.stderr);
    }
}

#[test]
fn doctor_finds_a_claude_code_hook_field_of_the_wrong_shape() {
    // A hook's optional field of another shape than Claude Code 2.1.197's schema gives it
    // made it drop the whole file (seen: `"async": "no"` and `"shell": "zsh"` on the
    // gate's own hook, and the call the gate denies ran); doctor said the hook gates.
    for (field, problem) in [
        (r#""async": "no""#, "async` must be `true` or `false`"),
        (
            r#""shell": "zsh""#,
            "shell` must be one of `bash`, `powershell`",
        ),
        (r#""if": 5"#, "if` must be a string"),
    ] {
        let s = Sandbox::new();
        s.wired("claude-code");
        s.edit_settings("claude-code", |t| {
            t.replacen("\"timeout\": 30", &format!("\"timeout\": 30, {field}"), 1)
        });
        let out = s.doctor("claude-code");
        assert_eq!(
            findings(&out),
            [format!(
                "`{}`: `hooks.PreToolUse[0].hooks[0].{problem}, and Claude Code ignores this whole file, hooks included (the gate's hook too): fix that key",
                s.settings("claude-code").display()
            )],
            "{field}"
        );
    }
}

#[test]
fn doctor_finds_no_hook() {
    for h in HARNESSES {
        let s = Sandbox::new();
        let out = s.doctor(h);
        let found = findings(&out);
        assert_eq!(found.len(), 1, "{h}: {found:?}");
        assert!(
            found[0].starts_with(&format!(
                "no `omission-gate hook {h}` command under `hooks."
            )),
            "{}",
            found[0]
        );
        assert!(
            found[0].ends_with(&format!(": run `omission-gate init {h} --dir {}`", s.p())),
            "{}",
            found[0]
        );
    }
}

#[test]
fn doctor_finds_a_binary_that_is_not_there() {
    for h in HARNESSES {
        let s = Sandbox::new();
        s.wired(h);
        s.run_program(h, "/nowhere/omission-gate");
        let out = s.doctor(h);
        assert_finds(
            &out,
            &format!(
                "`/nowhere/omission-gate`, the program the hook in `{}` runs, is not found: run `omission-gate init {h} --dir {}` again to write this binary's absolute path",
                s.settings(h).display(),
                s.p()
            ),
        );
    }
}

#[test]
fn doctor_finds_a_matcher_that_misses_a_tool_the_store_names() {
    let s = Sandbox::new();
    s.wired("claude-code");
    std::fs::write(
        s.store(),
        r#"{"records": [{"id": "deploys", "seq": 1, "kind": "policy", "scope": "deploy_service", "predicate": {"all": []}, "effect": "require_approval"}], "kept": ["deploys"]}"#,
    )
    .unwrap();
    assert_finds(
        &s.doctor("claude-code"),
        &format!(
            "the matcher `Bash|Monitor|PowerShell|Edit|MultiEdit|Write|NotebookEdit|mcp__.*` of the hook in `{}` misses `deploy_service`, which record `deploys` names, so the gate never sees those calls: add it to the matcher",
            s.settings("claude-code").display()
        ),
    );
}

#[test]
fn doctor_tries_a_glob_against_the_matcher_with_names_the_harness_sends() {
    // A glob is tried with the harness's built-ins it covers and, in Claude Code and
    // Codex, an MCP tool's name (they send no other): `Bas*` with each `*` as `x` is
    // `Basx`, a name Claude Code never sends, and doctor said the matcher missed it;
    // `*_file` beside `Write` skipped the matcher altogether, and a matcher without
    // `mcp__.*` passed though the rule binds `mcp__fs__write_file` (reviewer).
    let s = Sandbox::new();
    s.wired("claude-code");
    let store = |scope: &str| {
        format!(
            r#"{{"records": [{{"id": "r", "seq": 1, "kind": "policy", "scope": {scope}, "predicate": {{"all": []}}, "effect": "require_approval"}}], "kept": ["r"]}}"#
        )
    };
    std::fs::write(s.store(), store(r#"["Bas*"]"#)).unwrap();
    let out = s.doctor("claude-code");
    assert!(!out.stdout.contains("misses"), "{}", out.stdout);
    std::fs::write(s.store(), store(r#"["*_file", "Write"]"#)).unwrap();
    let out = s.doctor("claude-code");
    assert!(!out.stdout.contains("misses"), "{}", out.stdout);
    s.edit_settings("claude-code", |t| t.replace("|mcp__.*", ""));
    assert_finds(
        &s.doctor("claude-code"),
        &format!(
            "the matcher `Bash|Monitor|PowerShell|Edit|MultiEdit|Write|NotebookEdit` of the hook in `{}` misses `*_file`, which record `r` names, so the gate never sees those calls: add it to the matcher",
            s.settings("claude-code").display()
        ),
    );
}

#[test]
fn doctor_finds_a_claude_code_mcp_name_in_a_gemini_cli_store() {
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let store = std::fs::read_to_string(s.store())
        .unwrap()
        .replace("mcp_billing_refunds_create", "mcp__billing__refunds_create");
    std::fs::write(s.store(), store).unwrap();
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [
            "record `rule-refund-approval` scopes to `mcp__billing__refunds_create`, a name Gemini CLI never gives a tool (it names MCP tools `mcp_<server>_<tool>`): write `mcp_billing_refunds_create`, or name both if another harness shares this store"
        ]
    );
    // A store shared with Claude Code names both spellings, as the finding says.
    let both = std::fs::read_to_string(s.store()).unwrap().replace(
        "\"mcp__billing__refunds_create\"",
        "\"mcp__billing__refunds_create\", \"mcp_billing_refunds_create\"",
    );
    std::fs::write(s.store(), both).unwrap();
    s.assert_doctor_clean("gemini-cli");
}

#[test]
fn init_for_a_second_harness_names_its_tools_in_the_starter_store() {
    // One project wired into Claude Code, Codex and Gemini CLI, in either order: the
    // unedited starter store comes to name each tool as every one of them names it, and
    // each harness's doctor finds its own hook clean (Gemini CLI never calls `Bash`).
    // Which init rewrites the store: Gemini CLI names every tool otherwise, and Claude
    // Code has two more shell tools than Codex (`Monitor`, `PowerShell`).
    let orders = [
        (["claude-code", "gemini-cli", "codex"], [false, true, false]),
        (["gemini-cli", "codex", "claude-code"], [false, true, true]),
    ];
    let mut stores = Vec::new();
    for (order, rewrites) in orders {
        let s = Sandbox::new();
        for (h, rewrite) in order.into_iter().zip(rewrites) {
            let out = s.wired(h);
            let rewrote = format!("rewrote the starter store `{}`", s.store().display());
            assert_eq!(
                out.stdout.contains(&rewrote),
                rewrite,
                "{order:?} {h}: {}",
                out.stdout
            );
        }
        let store = std::fs::read_to_string(s.store()).unwrap();
        for name in [
            r#""scope": ["mcp__billing__refunds_create", "mcp_billing_refunds_create"]"#,
            r#""tool": "Bash""#,
            r#""tool": "run_shell_command""#,
        ] {
            assert!(store.contains(name), "{store}");
        }
        for h in order {
            assert_clean(&s.doctor(h), &s.settings(h), h);
        }
        stores.push(store);
    }
    assert_eq!(stores[0], stores[1]);
    // A store the user has edited is left alone, and init says what Gemini CLI will not
    // see in it.
    let s = Sandbox::new();
    s.wired("claude-code");
    let edited = std::fs::read_to_string(s.store())
        .unwrap()
        .replace("Refunds over", "Refunds above");
    std::fs::write(s.store(), &edited).unwrap();
    let out = s.wired("gemini-cli");
    assert_eq!(std::fs::read_to_string(s.store()).unwrap(), edited);
    let store = s.store().display().to_string();
    for line in [
        format!(
            "warning: record `done-invoice-7741` names `Bash`, a name Gemini CLI never gives a tool, so it never binds a call there: add a copy of it (another id) whose `tool` is `run_shell_command` in `{store}`"
        ),
        format!(
            "warning: record `rule-refund-approval` names `mcp__billing__refunds_create`, a name Gemini CLI never gives a tool, so it never binds a call there: add `mcp_billing_refunds_create` to its `scope` in `{store}`"
        ),
    ] {
        assert!(out.stdout.lines().any(|l| l == line), "{}", out.stdout);
    }
}

#[test]
fn doctor_finds_a_store_that_does_not_load() {
    let s = Sandbox::new();
    s.wired("codex");
    std::fs::write(s.store(), "{\"records\": [").unwrap();
    let out = s.doctor("codex");
    let found = findings(&out);
    assert_eq!(
        found[0],
        format!(
            "the store the hook in `{}` reads does not load ({}:1:13: EOF while parsing a list), so the hook denies every call: fix it, or move it away and run init to write a starter store",
            s.settings("codex").display(),
            s.store().display()
        )
    );
}

#[test]
fn doctor_finds_a_harmless_call_denied() {
    let s = Sandbox::new();
    s.wired("gemini-cli");
    // A record the gate cannot evaluate, which the agent has not read, binds every call.
    let store = std::fs::read_to_string(s.store()).unwrap().replacen(
        "{\"records\": [\n",
        "{\"records\": [\n  {\"id\": \"memo\", \"seq\": 0, \"kind\": \"summary\", \"text\": \"Earlier work, summarised.\"},\n",
        1,
    );
    std::fs::write(s.store(), store).unwrap();
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [format!(
            "the hook in `{}` denied `run_shell_command` with `true`, a call nothing in the store binds: dropped-unevaluable-record: dropped record 'memo' (seq 0) is of kind `summary`, which the gate cannot evaluate: it can prove nothing about what it said",
            s.settings("gemini-cli").display(),
        )]
    );
}

#[test]
fn doctor_finds_a_codex_hook_that_is_not_trusted() {
    let s = Sandbox::new();
    s.init("codex");
    let key = format!("{}:pre_tool_use:0:0", s.settings("codex").display());
    let found = findings(&s.doctor("codex"));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with(&format!(
            "the hook `{key}` is not trusted, so `codex exec` skips it without a word and the tool runs: trust it in the Codex TUI (`/hooks`) or put `trusted_hash = \"sha256:"
        )),
        "{}",
        found[0]
    );
    assert_eq!(
        found[1],
        format!(
            "the project `{p}` is not trusted, so Codex ignores the hooks in its `.codex` folders: add `[projects.\"{p}\"]` with `trust_level = \"trusted\"` to `{}/.codex/config.toml`",
            s.home.display(),
            p = s.p()
        )
    );
}

#[test]
fn doctor_runs_a_claude_code_hook_through_the_shell_prefix_claude_code_uses() {
    // With CLAUDE_CODE_SHELL_PREFIX set, Claude Code 2.1.197 runs every hook command as
    // `/bin/sh -c "'PREFIX' 'COMMAND'"`. Seen: a prefix that ran the command and exited
    // 0 lost the gate's deny, and the call ran; doctor ran the command without it and
    // said the hook gates.
    let s = Sandbox::new();
    s.wired("claude-code");
    let write = |name: &str, body: &str| {
        let path = s.home.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).unwrap();
        path.to_str().unwrap().to_string()
    };
    let loses = write("audit", "/bin/sh -c \"$1\"\nexit 0");
    // The command is its last argument, after any flags.
    let keeps = write(
        "audit-ok",
        "for a; do last=$a; done\nexec /bin/sh -c \"$last\"",
    );
    let doctor = |prefix: &str| {
        s.run_with(
            &["doctor", "claude-code", "--dir", s.p()],
            &[("CLAUDE_CODE_SHELL_PREFIX", prefix)],
        )
    };
    let found = findings(&doctor(&loses));
    assert_eq!(found.len(), 1, "{found:?}");
    let at = format!("the hook in `{}`", s.settings("claude-code").display());
    assert!(
        found[0].starts_with(&format!("{at} let a malformed call run (exit 0, ")),
        "{}",
        found[0]
    );
    assert!(
        found[0].ends_with(&format!(
            "Claude Code would run the tool (run through `CLAUDE_CODE_SHELL_PREFIX` `{loses}`, as Claude Code runs every hook command while it is set: the prefix must run the command it is given and exit as that command exits, or be unset)"
        )),
        "{}",
        found[0]
    );
    // A prefix that passes the exit on, with flags after its program as Claude Code
    // splits them, gates; and an empty one is no prefix.
    for prefix in [keeps.clone(), format!("{keeps} -x"), String::new()] {
        assert_clean(&doctor(&prefix), &s.settings("claude-code"), "claude-code");
    }
    // Claude Code also takes the prefix from a settings file's `env`, which doctor's own
    // environment does not hold: it said the hook gates, and the call ran.
    let user = s.home.join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    for prefix in [&loses, &keeps] {
        let env = serde_json::json!({"env": {"CLAUDE_CODE_SHELL_PREFIX": prefix}});
        std::fs::write(&user, env.to_string()).unwrap();
        assert_eq!(
            findings(&doctor("")),
            [format!(
                "`{}` sets `env.CLAUDE_CODE_SHELL_PREFIX` to `{prefix}`: Claude Code runs every hook command through it, the gate's too, and a prefix that does not exit as the command exits loses the deny; doctor ran the hook without it: run `CLAUDE_CODE_SHELL_PREFIX={prefix} omission-gate doctor claude-code` to check the hook through it, or remove it",
                user.display()
            )]
        );
    }
    // Run with it, doctor checks the hook through it.
    assert_clean(&doctor(&keeps), &s.settings("claude-code"), "claude-code");
    let env = serde_json::json!({"env": {"CLAUDE_CODE_SHELL_PREFIX": loses}});
    std::fs::write(&user, env.to_string()).unwrap();
    let found = findings(&doctor(&loses));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("let a malformed call run"),
        "{}",
        found[0]
    );
}

#[test]
fn doctor_finds_a_claude_code_model_that_is_its_own_refusal_fallback() {
    // Claude Code 2.1.197 retries a refused response on the model
    // ANTHROPIC_DEFAULT_OPUS_MODEL names; one ending in `-eap` may refuse itself, and a
    // subagent's retry on it then looks like its next response: the gate answers ERROR
    // for such calls, which doctor says before they come.
    let s = Sandbox::new();
    s.wired("claude-code");
    let doctor =
        |vars: &[(&str, &str)]| s.run_with(&["doctor", "claude-code", "--dir", s.p()], vars);
    let settings = s.settings("claude-code");
    let opus = "ANTHROPIC_DEFAULT_OPUS_MODEL";
    let off = "CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK";
    let eap = (opus, "claude-opus-4-8-eap");
    let said = |at: &str| {
        [format!(
            "`ANTHROPIC_DEFAULT_OPUS_MODEL` is `claude-opus-4-8-eap` in {at}, which makes that model its own refusal fallback in Claude Code: a subagent's file then cannot tell a retry after a refusal from the model's next response, so the gate answers ERROR for a subagent's call that follows the subagent's earlier results: set `CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK` to `1` (here or in a settings file's `env`), or have `ANTHROPIC_DEFAULT_OPUS_MODEL` name another model"
        )]
    };
    assert_eq!(findings(&doctor(&[eap])), said("this environment"));
    for vars in [&[(opus, "claude-opus-4-8")][..], &[eap, (off, "1")]] {
        assert_clean(&doctor(vars), &settings, "claude-code");
    }
    // A settings file's `env`, which Claude Code copies into its environment.
    let user = s.home.join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(
        &user,
        r#"{"env": {"ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-opus-4-8-eap"}}"#,
    )
    .unwrap();
    let at = format!("`{}` (`env`)", user.display());
    assert_eq!(findings(&doctor(&[])), said(&at));
    assert_eq!(findings(&doctor(&[(opus, "claude-opus-4-8")])), said(&at));
    std::fs::write(
        &user,
        r#"{"env": {"ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-opus-4-8-eap", "CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK": true}}"#,
    )
    .unwrap();
    assert_clean(&doctor(&[]), &settings, "claude-code");
}

#[test]
fn doctor_finds_a_claude_code_skill_that_runs_a_command_inline() {
    // Claude Code 2.1.197 runs a skill's or a command's `` !`cmd` `` (and a ```! block)
    // when the agent uses it, through its shell tool with no `PreToolUse` hook: seen, a
    // `Skill` call of such a skill holding `touch gate-marker` created the marker while
    // the gate's hook never ran. `disableSkillShellExecution` true stops them all.
    let s = Sandbox::new();
    s.wired("claude-code");
    let settings = s.settings("claude-code");
    let skill = s.project.join(".claude/skills/mark/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    // A `!` right after a word is no inline command.
    std::fs::write(&skill, "---\nname: mark\n---\nDone!`touch gate-marker`\n").unwrap();
    assert_clean(&s.doctor("claude-code"), &settings, "claude-code");
    let said = |file: &Path, kind: &str, command: &str| {
        format!(
            "`{}`, a Claude Code {kind}, runs `{command}` inline when the agent uses it (a `Skill` call), and Claude Code runs such a command with no `PreToolUse` hook, so the gate never judges it: set `\"disableSkillShellExecution\": true` in the settings (Claude Code then runs no skill's inline command), or take the command out",
            file.display()
        )
    };
    std::fs::write(
        &skill,
        "---\nname: mark\n---\nStatus: !`touch gate-marker`\n",
    )
    .unwrap();
    assert_eq!(
        findings(&s.doctor("claude-code")),
        [said(&skill, "skill", "touch gate-marker")]
    );
    let command = s.project.join(".claude/commands/deep/markc.md");
    std::fs::create_dir_all(command.parent().unwrap()).unwrap();
    std::fs::write(&command, "Run:\n```!\ntouch gate-marker $ARGUMENTS\n```\n").unwrap();
    assert_eq!(
        findings(&s.doctor("claude-code")),
        [
            said(&skill, "skill", "touch gate-marker"),
            said(&command, "command", "touch gate-marker $ARGUMENTS"),
        ]
    );
    // Turned off in the local settings, which win over the project's.
    let local = s.project.join(".claude/settings.local.json");
    std::fs::write(&local, r#"{"disableSkillShellExecution": true}"#).unwrap();
    assert_clean(&s.doctor("claude-code"), &settings, "claude-code");
    std::fs::write(&local, r#"{"disableSkillShellExecution": false}"#).unwrap();
    assert_eq!(findings(&s.doctor("claude-code")).len(), 2);
}

#[test]
fn doctor_finds_a_claude_code_extra_body_that_asks_the_api_to_edit_the_context() {
    // Claude Code 2.1.197 spreads CLAUDE_CODE_EXTRA_BODY into every request; a
    // `context_management` edit in it (other than clearing thinking) has the API clear
    // tool results without a trace in the transcript, and the gate then answers ERROR for
    // every call: doctor says so before they come.
    let s = Sandbox::new();
    s.wired("claude-code");
    let doctor =
        |vars: &[(&str, &str)]| s.run_with(&["doctor", "claude-code", "--dir", s.p()], vars);
    let settings = s.settings("claude-code");
    let var = "CLAUDE_CODE_EXTRA_BODY";
    let clears = r#"{"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}}"#;
    let said = |at: &str| {
        [format!(
            "`CLAUDE_CODE_EXTRA_BODY` in {at} edits the context the model is sent (`messages` or `system` in place of Claude Code's, or `context_management` asking the API to clear tool results), which Claude Code's transcript does not record, so the gate answers ERROR for every call under `--kept-from transcript`: take those keys out of it"
        )]
    };
    // Set here, the trial call doctor has the hook judge is denied too, as every call is.
    let found = findings(&doctor(&[(var, clears)]));
    assert_eq!(found.first(), said("this environment").first(), "{found:?}");
    assert!(
        found.len() == 2 && found[1].contains("denied `Bash` with `true`"),
        "{found:?}"
    );
    let thinking = r#"{"context_management":{"edits":[{"type":"clear_thinking_20251015"}]}}"#;
    assert_clean(&doctor(&[(var, thinking)]), &settings, "claude-code");
    // A settings file's `env`, which Claude Code copies into its environment.
    let user = s.home.join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    let env = serde_json::json!({"env": {var: clears}}).to_string();
    std::fs::write(&user, env).unwrap();
    let at = format!("`{}` (`env`)", user.display());
    assert_eq!(findings(&doctor(&[(var, thinking)])), said(&at));
}

#[test]
fn doctor_finds_claude_code_hooks_turned_off_by_a_variable() {
    // Claude Code 2.1.197 runs no hook, and the tool runs, with CLAUDE_CODE_SIMPLE (what
    // `--bare` sets) or CLAUDE_CODE_SAFE_MODE true in its environment or a settings
    // file's `env`.
    let s = Sandbox::new();
    s.wired("claude-code");
    let doctor =
        |vars: &[(&str, &str)]| s.run_with(&["doctor", "claude-code", "--dir", s.p()], vars);
    assert_eq!(doctor(&[("CLAUDE_CODE_SIMPLE", "0")]).code, 0);
    for (var, value) in [
        ("CLAUDE_CODE_SIMPLE", "1"),
        ("CLAUDE_CODE_SAFE_MODE", " Yes "),
    ] {
        assert_eq!(
            findings(&doctor(&[(var, value)])),
            [format!(
                "`{var}` is `{value}` in this environment, and Claude Code started with it runs no hook at all (as with `--bare` or `--safe-mode`): unset it"
            )]
        );
    }
    let user = s.home.join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    // Claude Code makes a value a string: `1` and `true` turned every hook off too.
    for value in ["\"true\"", "true", "1"] {
        std::fs::write(
            &user,
            format!(r#"{{"env": {{"CLAUDE_CODE_SIMPLE": {value}}}}}"#),
        )
        .unwrap();
        assert_eq!(
            findings(&s.doctor("claude-code")),
            [format!(
                "`{}` sets `env.CLAUDE_CODE_SIMPLE` to `{}`, and Claude Code then runs no hook at all: remove it",
                user.display(),
                value.trim_matches('"')
            )]
        );
    }
}

#[test]
fn doctor_finds_claude_code_managed_settings_that_take_the_place_of_the_files() {
    // Claude Code 2.1.197 takes the first source of managed settings that holds any: a
    // `policyHelper`'s output, then the account's settings cached in
    // `remote-settings.json` (talking to Anthropic's API), then the files. Seen: with
    // either saying `allowManagedHooksOnly`, the project's gate never ran, and the tool
    // did.
    let s = Sandbox::new();
    s.wired("claude-code");
    s.assert_doctor_clean("claude-code");
    let remote = s.home.join(".claude/remote-settings.json");
    std::fs::create_dir_all(remote.parent().unwrap()).unwrap();
    let what = "the managed settings Claude Code fetched from your organization's account, which it reads in place of the managed settings files whenever it talks to Anthropic's API with an API key or a Team or Enterprise login";
    std::fs::write(&remote, r#"{"allowManagedHooksOnly": true}"#).unwrap();
    assert_eq!(
        findings(&s.doctor("claude-code")),
        [format!(
            "`{}`, {what}, sets `allowManagedHooksOnly`, so Claude Code runs only the hooks in those managed settings, and the hook in `{}` never runs: have the gate's hook added to your organization's managed settings, or that setting removed",
            remote.display(),
            s.settings("claude-code").display()
        )]
    );
    std::fs::write(&remote, r#"{"disableAllHooks": true}"#).unwrap();
    assert_eq!(
        findings(&s.doctor("claude-code")),
        [format!(
            "`{}`, {what}, sets `disableAllHooks` to true, so no hook runs and the tool runs: have that setting removed from your organization's managed settings",
            remote.display()
        )]
    );
    // What a helper computes doctor cannot tell.
    std::fs::write(
        &remote,
        r#"{"policyHelper": {"path": "/usr/local/bin/policy"}}"#,
    )
    .unwrap();
    let out = s.doctor("claude-code");
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("names a `policyHelper`"),
        "{}",
        out.stdout
    );
    // Empty, or not JSON: Claude Code reads no managed settings from it.
    for text in ["{}", "not json"] {
        std::fs::write(&remote, text).unwrap();
        s.assert_doctor_clean("claude-code");
    }
    // In `CLAUDE_CONFIG_DIR` when that is set.
    let config = s.home.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("remote-settings.json"),
        r#"{"disableAllHooks": true}"#,
    )
    .unwrap();
    let out = s.run_with(
        &["doctor", "claude-code", "--dir", s.p()],
        &[("CLAUDE_CONFIG_DIR", config.to_str().unwrap())],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
}

#[test]
fn doctor_finds_a_codex_hooks_file_codex_cannot_parse() {
    // Codex 0.171.0 warns "failed to parse hooks config", loads no hook from the file and
    // runs the tool: a hook of an unknown type, or a timeout that is not a whole number,
    // in any group of the file.
    let s = Sandbox::new();
    s.wired("codex");
    let group = r#""PostToolUse": [{"matcher": ".*", "hooks": [{"type": "command", "command": "true", "timeout": "30"}]}],"#;
    s.edit_settings("codex", |t| {
        t.replacen("\"PreToolUse\"", &format!("{group} \"PreToolUse\""), 1)
    });
    assert_eq!(
        findings(&s.doctor("codex")),
        [format!(
            "`{}`: `hooks.PostToolUse[0].hooks[0].timeout` must be a whole number of seconds, and Codex loads no hook from this file, the gate's included: fix that key",
            s.settings("codex").display()
        )]
    );
    // init leaves such a file alone.
    let out = s.run(&["init", "codex", "--dir", s.p()]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("Codex loads no hook from the file until it is"),
        "{}",
        out.stderr
    );
}

/// init's Codex group (from `.codex/hooks.json`) written as `config.toml` declares it:
/// `[[hooks.PreToolUse]]` and its `[[hooks.PreToolUse.hooks]]`.
fn codex_toml_group(group: &Value) -> String {
    let handler = &group["hooks"][0];
    format!(
        "[[hooks.PreToolUse]]\nmatcher = {}\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = {}\ntimeout = {}\n",
        group["matcher"], handler["command"], handler["timeout"]
    )
}

#[test]
fn doctor_reads_codex_hooks_declared_in_config_toml() {
    // Codex 0.171.0 (hooks/src/engine/discovery.rs, `discover_handlers`) loads, for each
    // config layer, the hooks of its `hooks.json` and then those under `[hooks]` in its
    // `config.toml`, with trust keys naming that file and the same hash. Seen: a hook in
    // a project's `.codex/config.toml` trusted under
    // `<project>/.codex/config.toml:pre_tool_use:0:0` ran without the bypass flag, and
    // untrusted it was skipped and the tool ran.
    let s = Sandbox::new();
    s.init("codex");
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(s.settings("codex")).unwrap()).unwrap();
    let group = &hooks["hooks"]["PreToolUse"][0];
    std::fs::remove_file(s.settings("codex")).unwrap();
    // The gate there is found, and trusted under its own key.
    let project_config = s.project.join(".codex/config.toml");
    std::fs::write(&project_config, codex_toml_group(group)).unwrap();
    let key = format!("{}:pre_tool_use:0:0", project_config.display());
    let hash = common::codex_trusted_hash(group["matcher"].as_str(), &group["hooks"][0]);
    let user = s.home.join(".codex/config.toml");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, common::codex_trust_lines(s.p(), &key, &hash)).unwrap();
    let out = s.doctor("codex");
    assert_clean(&out, &project_config, "codex");
    assert_eq!(out.stderr, "");
    // Untrusted there: the same finding as in `hooks.json`.
    std::fs::write(
        &user,
        format!("[projects.{:?}]\ntrust_level = \"trusted\"\n", s.p()),
    )
    .unwrap();
    let found = findings(&s.doctor("codex"));
    assert!(
        found[0].starts_with(&format!("the hook `{key}` is not trusted")),
        "{found:?}"
    );
    // Another PreToolUse hook in the user's config.toml that can rewrite the call: noted
    // as one in a hooks.json is.
    std::fs::write(
        &user,
        format!(
            "{}\n[[hooks.PreToolUse]]\nmatcher = \"^Bash$\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"./rewrite.sh\"\n",
            common::codex_trust_lines(s.p(), &key, &hash)
        ),
    )
    .unwrap();
    let out = s.doctor("codex");
    assert_clean(&out, &project_config, "codex");
    assert_eq!(
        out.stderr,
        format!(
            "omission-gate doctor: note: the hook `./rewrite.sh` in `{}` also runs before calls the gate judges, side by side with it, and Codex runs a call with the `updatedInput` a hook returns, which the gate never sees: if that hook rewrites calls, keep its matcher off the tools the gate judges\n",
            user.display()
        )
    );
    // A hook Codex cannot parse there: Codex does not start (seen: "Error loading
    // config.toml: unknown variant `bogus`").
    std::fs::write(
        &project_config,
        format!(
            "{}\n[[hooks.PostToolUse]]\n[[hooks.PostToolUse.hooks]]\ntype = \"bogus\"\n",
            codex_toml_group(group)
        ),
    )
    .unwrap();
    assert_eq!(
        findings(&s.doctor("codex"))[0],
        format!(
            "`{}`: `hooks.PostToolUse[0].hooks[0].type` must be one of `command`, `mcp_tool`, `prompt`, `agent`, and Codex will not start: fix that key",
            project_config.display()
        )
    );
    std::fs::write(&project_config, "[[hooks.PreToolUse]\n").unwrap();
    let found = findings(&s.doctor("codex"));
    assert!(
        found[0].starts_with(&format!(
            "`{}` is not valid TOML (",
            project_config.display()
        )) && found[0].ends_with("), and Codex will not start: fix it"),
        "{found:?}"
    );
}

/// The group init writes for Codex in `s`, then `.codex/hooks.json` removed, as if the
/// gate had never been wired there.
fn codex_group_unwired(s: &Sandbox) -> Value {
    group_unwired(s, "codex", "PreToolUse")
}

/// The pre-tool group (under `event`) init writes for `harness` in `s`, then the file it
/// wrote removed, as if the gate had never been wired there.
fn group_unwired(s: &Sandbox, harness: &str, event: &str) -> Value {
    s.init(harness);
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(s.settings(harness)).unwrap()).unwrap();
    std::fs::remove_file(s.settings(harness)).unwrap();
    hooks["hooks"][event][0].clone()
}

#[test]
fn init_codex_refuses_a_gate_already_declared_in_another_file_codex_reads() {
    // Codex 0.171.0 runs every hook it reads: seen, a hook in `$CODEX_HOME/hooks.json`,
    // `$CODEX_HOME/config.toml`, and `hooks.json` and `config.toml` of each `.codex` from
    // the project root down to the start directory all ran, in that order, before one
    // call. A second gate in `.codex/hooks.json` would run the gate twice on each call.
    let s = Sandbox::new();
    let group = codex_group_unwired(&s);
    let user_dir = s.home.join(".codex");
    std::fs::create_dir_all(&user_dir).unwrap();
    let project_dir = s.project.join(".codex");
    for file in [
        user_dir.join("config.toml"),
        project_dir.join("config.toml"),
        user_dir.join("hooks.json"),
    ] {
        let text = if file.ends_with("hooks.json") {
            serde_json::json!({"hooks": {"PreToolUse": [group.clone()]}}).to_string()
        } else {
            // Another hook first: the gate's is the second group.
            format!(
                "model = \"x\"\n\n[[hooks.PreToolUse]]\nmatcher = \"^Bash$\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"./audit.sh\"\n\n{}",
                codex_toml_group(&group)
            )
        };
        let group_index = if file.ends_with("hooks.json") { 0 } else { 1 };
        std::fs::write(&file, text).unwrap();
        let out = s.run(&["init", "codex", "--dir", s.p()]);
        assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
        assert_eq!(out.stdout, "");
        assert_eq!(
            out.stderr,
            format!(
                "omission-gate: init: `{f}` already runs the gate (the hook `{f}:pre_tool_use:{group_index}:0`), and Codex runs every hook it reads, so another in `{}` would run it twice before each call: nothing was written; check that one with `omission-gate doctor codex --dir {}`, or remove it from `{f}` and run init again\n",
                s.settings("codex").display(),
                s.p(),
                f = file.display()
            )
        );
        assert!(!s.settings("codex").exists());
        std::fs::remove_file(&file).unwrap();
    }
    // A config Codex cannot read as it reads hooks may declare the gate: init stops there
    // too, with doctor's line.
    let user = user_dir.join("config.toml");
    std::fs::write(&user, "[[hooks.PreToolUse]\n").unwrap();
    let out = s.run(&["init", "codex", "--dir", s.p()]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.starts_with(&format!(
            "omission-gate: init: `{}` is not valid TOML (",
            user.display()
        )) && out.stderr.ends_with(
            "), and Codex will not start: fix it, then run init again (nothing was written)\n"
        ),
        "{}",
        out.stderr
    );
    assert!(!s.settings("codex").exists());
    // Other hooks, and the trust records, are no gate: init writes its own.
    std::fs::write(
        &user,
        "[[hooks.PreToolUse]]\nmatcher = \"^Bash$\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"./audit.sh\"\n\n[hooks.state.\"/x/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:ab\"\n",
    )
    .unwrap();
    s.init("codex");
    assert!(s.settings("codex").exists());
}

#[test]
fn doctor_notes_the_codex_gate_wired_twice() {
    // Codex 0.171.0 ran both a hook in the user's `config.toml` and one in the project's
    // `.codex/hooks.json` before one call, and blocked it when the second denied it.
    let s = Sandbox::new();
    s.wired("codex");
    assert_eq!(s.doctor("codex").stderr, "");
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(s.settings("codex")).unwrap()).unwrap();
    let group = &hooks["hooks"]["PreToolUse"][0];
    let user = s.home.join(".codex/config.toml");
    let key = format!("{}:pre_tool_use:0:0", user.display());
    let hash = common::codex_trusted_hash(group["matcher"].as_str(), &group["hooks"][0]);
    let trusted = std::fs::read_to_string(&user).unwrap();
    std::fs::write(
        &user,
        format!(
            "{trusted}\n[hooks.state.{key:?}]\ntrusted_hash = {hash:?}\n\n{}",
            codex_toml_group(group)
        ),
    )
    .unwrap();
    let out = s.doctor("codex");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stderr,
        format!(
            "omission-gate doctor: note: the hooks `{key}` and `{}:pre_tool_use:0:0` both run the gate, and Codex runs every hook it reads, so each call both select runs it twice (a call either one denies is blocked): keep one of them and remove the other\n",
            s.settings("codex").display()
        )
    );
}

/// `command` with its `--store` value replaced by `store`.
fn with_store(command: &str, store: &Path) -> String {
    let (head, rest) = command.split_once("--store ").unwrap();
    let (_, tail) = rest.split_once(' ').unwrap();
    format!("{head}--store {} {tail}", store.display())
}

#[test]
fn doctor_checks_each_gate_hook_and_names_each_in_an_ok_line() {
    // Each harness runs every gate hook it reads (the commands differ: each reads its own
    // store), so each one gates or not: doctor named only the first hook and its store in
    // its ok line, and told two hooks in one file apart nowhere.
    for h in HARNESSES {
        let s = Sandbox::new();
        let event = if h == "gemini-cli" {
            "BeforeTool"
        } else {
            "PreToolUse"
        };
        s.wired(h);
        let text = std::fs::read_to_string(s.settings(h)).unwrap();
        let mut project: Value = serde_json::from_str(&text).unwrap();
        let group = project["hooks"][event][0].clone();
        let command = group["hooks"][0]["command"].as_str().unwrap();
        let other_store = s.home.join("store.json");
        std::fs::copy(s.store(), &other_store).unwrap();
        let mut other = group.clone();
        other["hooks"][0]["command"] = Value::from(with_store(command, &other_store));
        // The gate in the user's layer too (Codex: `$CODEX_HOME/hooks.json`).
        let user = s.home.join(match h {
            "claude-code" => ".claude/settings.json",
            "codex" => ".codex/hooks.json",
            _ => ".gemini/settings.json",
        });
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        std::fs::write(
            &user,
            serde_json::json!({"hooks": {event: [other.clone()]}}).to_string(),
        )
        .unwrap();
        let trust = |file: &Path, group_index: usize, group: &Value| {
            if h == "codex" {
                let config = s.home.join(".codex/config.toml");
                let before = std::fs::read_to_string(&config).unwrap();
                let key = format!("{}:pre_tool_use:{group_index}:0", file.display());
                let hash =
                    common::codex_trusted_hash(group["matcher"].as_str(), &group["hooks"][0]);
                std::fs::write(
                    &config,
                    format!("{before}\n[hooks.state.{key:?}]\ntrusted_hash = {hash:?}\n"),
                )
                .unwrap();
            }
        };
        trust(&user, 0, &other);
        let ok = |at: String, store: &Path| {
            format!(
                "ok: {at} gates with the store `{}`: run as {h} runs it, it denied a call it must deny and let a harmless one run\n",
                store.display()
            )
        };
        let out = s.doctor(h);
        assert_eq!(out.code, 0, "{h}: {}{}", out.stdout, out.stderr);
        assert_eq!(
            out.stdout,
            ok(format!("the hook in `{}`", user.display()), &other_store)
                + &ok(
                    format!("the hook in `{}`", s.settings(h).display()),
                    &s.store()
                ),
            "{h}"
        );
        // Each is run: the second store broken, the hook that reads it is named.
        std::fs::write(&other_store, "{\"records\": [").unwrap();
        let found = findings(&s.doctor(h));
        assert_eq!(
            found[0],
            format!(
                "the store the hook in `{}` reads does not load ({}:1:13: EOF while parsing a list), so the hook denies every call: fix it, or move it away and run init to write a starter store",
                user.display(),
                other_store.display()
            ),
            "{h}"
        );
        // Two in one file: where in the file each is (Codex: its trust key).
        std::fs::remove_file(&user).unwrap();
        std::fs::copy(s.store(), &other_store).unwrap();
        project["hooks"][event]
            .as_array_mut()
            .unwrap()
            .push(other.clone());
        std::fs::write(s.settings(h), project.to_string()).unwrap();
        trust(&s.settings(h), 1, &other);
        let at = |group: usize| match h {
            "codex" => format!(
                "the hook `{}:pre_tool_use:{group}:0`",
                s.settings(h).display()
            ),
            _ => format!(
                "the hook `hooks.{event}[{group}].hooks[0]` in `{}`",
                s.settings(h).display()
            ),
        };
        let out = s.doctor(h);
        assert_eq!(out.code, 0, "{h}: {}{}", out.stdout, out.stderr);
        assert_eq!(
            out.stdout,
            ok(at(0), &s.store()) + &ok(at(1), &other_store),
            "{h}"
        );
        std::fs::write(&other_store, "{\"records\": [").unwrap();
        let found = findings(&s.doctor(h));
        assert!(
            found[0].starts_with(&format!("the store {} reads does not load (", at(1))),
            "{h}: {found:?}"
        );
    }
}

#[test]
fn a_claude_code_or_gemini_cli_gate_that_runs_beside_another_is_refused_by_init_and_noted_by_doctor()
 {
    // Claude Code 2.1.197 runs a hook command once however many of its settings files
    // declare it (seen: the same command in the user's, the project's and the local
    // settings ran once before a call; with one space more in one of them, twice, and
    // the call was blocked when either denied it). Gemini CLI 0.61.0 runs a name and
    // command once (`HookPlanner.deduplicateHooks`; seen: the same pair in the user's
    // and the workspace's settings ran once; another name, or another command, twice).
    for h in ["claude-code", "gemini-cli"] {
        let s = Sandbox::new();
        let event = if h == "claude-code" {
            "PreToolUse"
        } else {
            "BeforeTool"
        };
        let group = group_unwired(&s, h, event);
        let user = s.home.join(if h == "claude-code" {
            ".claude/settings.json"
        } else {
            ".gemini/settings.json"
        });
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        let in_user = |group: &Value| {
            std::fs::write(
                &user,
                serde_json::json!({"hooks": {event: [group]}}).to_string(),
            )
            .unwrap();
        };
        // The same hook in the user's settings: the harness runs the two as one, so init
        // writes its own, and doctor notes nothing.
        in_user(&group);
        s.wired(h);
        let out = s.doctor(h);
        assert_eq!(
            (out.code, out.stderr.as_str()),
            (0, ""),
            "{h}: {}",
            out.stdout
        );
        // Another command (one space more), or for Gemini CLI another name: both run.
        let mut other = group.clone();
        if h == "claude-code" {
            let command = other["hooks"][0]["command"].as_str().unwrap();
            other["hooks"][0]["command"] = Value::from(command.replacen(" hook ", "  hook ", 1));
        } else {
            other["hooks"][0]["name"] = Value::from("omission-gate-user");
        }
        in_user(&other);
        let runs_each = if h == "claude-code" {
            "Claude Code runs every hook command it reads (the same command once)"
        } else {
            "Gemini CLI runs every hook it reads (the same name and command once)"
        };
        let out = s.doctor(h);
        assert_eq!(out.code, 0, "{h}: {}{}", out.stdout, out.stderr);
        assert_eq!(
            out.stderr,
            format!(
                "omission-gate doctor: note: the hooks `hooks.{event}[0].hooks[0]` in `{}` and `hooks.{event}[0].hooks[0]` in `{}` both run the gate, and {runs_each}, so each call both select runs it twice (a call either one denies is blocked): keep one of them and remove the other\n",
                user.display(),
                s.settings(h).display()
            )
        );
        // init in a project without the gate: it writes nothing.
        std::fs::remove_file(s.settings(h)).unwrap();
        let store = std::fs::read_to_string(s.store()).unwrap();
        std::fs::remove_file(s.store()).unwrap();
        let out = s.run(&["init", h, "--dir", s.p()]);
        assert_eq!(out.code, 2, "{h}: {}{}", out.stdout, out.stderr);
        assert_eq!(out.stdout, "");
        assert_eq!(
            out.stderr,
            format!(
                "omission-gate: init: `{u}` already runs the gate (the hook `hooks.{event}[0].hooks[0]`), and {runs_each}, so another in `{}` would run it twice before each call: nothing was written; check that one with `omission-gate doctor {h} --dir {}`, or remove it from `{u}` and run init again\n",
                s.settings(h).display(),
                s.p(),
                u = user.display()
            )
        );
        assert!(!s.settings(h).exists() && !s.store().exists());
        std::fs::write(s.store(), store).unwrap();
    }
}

#[test]
fn a_project_codex_folder_that_is_codex_home_is_one_file_not_a_gate_wired_twice() {
    // Codex skips a project's `.codex` that is its `CODEX_HOME` (as written, or once
    // symlinks are resolved): its hooks are read once. Read twice, doctor told the user
    // to remove one of two hooks that are the same one, and init refused to run again.
    let s = Sandbox::new();
    let folder = s.project.join(".codex");
    let link = s.home.join("codex-link");
    std::os::unix::fs::symlink(&folder, &link).unwrap();
    for codex_home in [&folder, &link] {
        let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
        for _ in 0..2 {
            let out = s.run_with(&["init", "codex", "--dir", s.p()], &env);
            assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        }
        let out = s.run_with(&["doctor", "codex", "--dir", s.p()], &env);
        assert!(
            !out.stderr.contains("both run the gate"),
            "{}{}",
            out.stdout,
            out.stderr
        );
    }
}

#[test]
fn a_codex_home_inside_the_project_needs_no_project_trust() {
    // Codex 0.171.0 loads `$CODEX_HOME/config.toml` and `hooks.json` as the user layer,
    // trust or no trust: seen, with `CODEX_HOME` a folder of an untrusted project (no
    // `[projects]` entry), a trusted hook in `$CODEX_HOME/hooks.json` ran and blocked
    // the call, while the same hook in the project's `.codex/hooks.json` was skipped
    // until the project was trusted.
    let s = Sandbox::new();
    let group = codex_group_unwired(&s);
    let codex_home = s.project.join(".codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    let hooks = codex_home.join("hooks.json");
    std::fs::write(
        &hooks,
        serde_json::json!({"hooks": {"PreToolUse": [group.clone()]}}).to_string(),
    )
    .unwrap();
    let key = format!("{}:pre_tool_use:0:0", hooks.display());
    let hash = common::codex_trusted_hash(group["matcher"].as_str(), &group["hooks"][0]);
    std::fs::write(
        codex_home.join("config.toml"),
        format!("[hooks.state.{key:?}]\ntrusted_hash = {hash:?}\n"),
    )
    .unwrap();
    let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    let out = s.run_with(&["doctor", "codex", "--dir", s.p()], &env);
    assert_clean(&out, &hooks, "codex");
    assert_eq!(out.stderr, "");
    // The project's own `.codex` still needs the project trusted.
    let project_hooks = s.settings("codex");
    std::fs::create_dir_all(project_hooks.parent().unwrap()).unwrap();
    std::fs::rename(&hooks, &project_hooks).unwrap();
    let project_key = format!("{}:pre_tool_use:0:0", project_hooks.display());
    std::fs::write(
        codex_home.join("config.toml"),
        format!("[hooks.state.{project_key:?}]\ntrusted_hash = {hash:?}\n"),
    )
    .unwrap();
    let out = s.run_with(&["doctor", "codex", "--dir", s.p()], &env);
    assert_eq!(
        findings(&out),
        [format!(
            "the project `{p}` is not trusted, so Codex ignores the hooks in its `.codex` folders: add `[projects.\"{p}\"]` with `trust_level = \"trusted\"` to `{}/config.toml`",
            codex_home.display(),
            p = s.p()
        )]
    );
}

#[test]
fn doctor_finds_codex_hooks_turned_off_as_a_feature() {
    // Codex 0.171.0 then runs the tool without a word: `[features] hooks = false` (or
    // `codex_hooks`) in the user config, or in the project's `.codex/config.toml`.
    let s = Sandbox::new();
    s.wired("codex");
    let user = s.home.join(".codex/config.toml");
    let trusted = std::fs::read_to_string(&user).unwrap();
    assert_eq!(s.doctor("codex").code, 0);
    for key in ["hooks", "codex_hooks"] {
        std::fs::write(&user, format!("{trusted}\n[features]\n{key} = false\n")).unwrap();
        assert_eq!(
            findings(&s.doctor("codex")),
            [format!(
                "`{}` sets `{key} = false` under `[features]`, so Codex runs no hook at all and the tool runs: remove that line",
                user.display()
            )]
        );
    }
    // The project's config is read after the user's.
    let project = s.project.join(".codex/config.toml");
    std::fs::write(&project, "[features]\nhooks = true\n").unwrap();
    assert_eq!(s.doctor("codex").code, 0);
    std::fs::write(&user, &trusted).unwrap();
    std::fs::write(&project, "[features]\nhooks = false\n").unwrap();
    assert_eq!(
        findings(&s.doctor("codex")),
        [format!(
            "`{}` sets `hooks = false` under `[features]`, so Codex runs no hook at all and the tool runs: remove that line",
            project.display()
        )]
    );
}

#[test]
fn doctor_reads_no_codex_project_config_in_a_project_codex_does_not_trust() {
    // Codex 0.171.0 reads no `.codex/config.toml` of an untrusted project: with the gate
    // in the user's folder, the user's `[features] hooks = false` held though the
    // project's config said `true`, and the tool ran; doctor said ok.
    let s = Sandbox::new();
    let out = s.run(&["init", "codex", "--dir", s.home.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    s.trust("codex", &out.stdout);
    let user = s.home.join(".codex/config.toml");
    let trusted = std::fs::read_to_string(&user).unwrap();
    assert!(!trusted.contains(s.p()), "{trusted}");
    assert_eq!(s.doctor("codex").code, 0);
    std::fs::write(&user, format!("{trusted}\n[features]\nhooks = false\n")).unwrap();
    let project = s.project.join(".codex/config.toml");
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    std::fs::write(&project, "[features]\nhooks = true\n").unwrap();
    assert_eq!(
        findings(&s.doctor("codex")),
        [format!(
            "`{}` sets `hooks = false` under `[features]`, so Codex runs no hook at all and the tool runs: remove that line",
            user.display()
        )]
    );
    // Nor its `false` (seen: the gate in the user's folder denied the call).
    std::fs::write(&user, &trusted).unwrap();
    std::fs::write(&project, "[features]\nhooks = false\n").unwrap();
    assert_eq!(s.doctor("codex").code, 0);
}

#[test]
fn doctor_names_a_hook_in_a_linked_codex_home_as_codex_does() {
    // Codex 0.171.0 resolves the links in `CODEX_HOME` and keys the trust of the hooks
    // there by the resolved path: a hook trusted under the link's path was skipped, and
    // the tool ran, while doctor said ok.
    let s = Sandbox::new();
    let x = s.home.join("x");
    let real = x.join(".codex");
    std::fs::create_dir_all(&real).unwrap();
    let link = s.home.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let vars = [("CODEX_HOME", link.to_str().unwrap())];
    let out = s.run_with(&["init", "codex", "--dir", x.to_str().unwrap()], &vars);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("[projects."))
        .take_while(|l| !l.starts_with("check the wiring"))
        .collect();
    let trust = lines.join("\n");
    let real_key = format!("{}/hooks.json:pre_tool_use:0:0", real.display());
    assert!(trust.contains(&real_key), "{trust}");
    let doctor = || s.run_with(&["doctor", "codex", "--dir", s.p()], &vars);
    std::fs::write(link.join("config.toml"), &trust).unwrap();
    assert_eq!(doctor().code, 0, "{}", doctor().stdout);
    let link_key = format!("{}/hooks.json:pre_tool_use:0:0", link.display());
    std::fs::write(
        link.join("config.toml"),
        trust.replace(&real_key, &link_key),
    )
    .unwrap();
    let out = doctor();
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout
            .contains(&format!("the hook `{real_key}` is not trusted")),
        "{}",
        out.stdout
    );
}

#[test]
fn doctor_finds_a_codex_output_limit_under_what_the_gate_counts_as_seen() {
    // Codex stores a code cell's output whole and cuts it only as it sends it, to about
    // 1.2 times `tool_output_token_limit` tokens: the gate counts the first 2,400 bytes
    // of a long one as seen, which a limit under 1,000 cuts, so a rule there counted as
    // in view though the model never got it, and doctor said ok.
    let s = Sandbox::new();
    s.wired("codex");
    let user = s.home.join(".codex/config.toml");
    let trusted = std::fs::read_to_string(&user).unwrap();
    let problem = |file: &std::path::Path, key: &str, v: i64| {
        format!(
            "`{}` sets `{key} = {v}`, under 1000: Codex then sends the model less of a long code cell's or subagent's output than the gate counts as seen (the first 2400 bytes of one it stores whole), so a rule past that cut counts as in view though the model never got it: raise it to 1000 or more, or remove it",
            file.display()
        )
    };
    std::fs::write(&user, format!("tool_output_token_limit = 500\n{trusted}")).unwrap();
    assert_eq!(
        findings(&s.doctor("codex")),
        [problem(&user, "tool_output_token_limit", 500)]
    );
    // The project's config is read after the user's: its value is the one used.
    let project = s.project.join(".codex/config.toml");
    std::fs::write(&project, "tool_output_token_limit = 1000\n").unwrap();
    assert_eq!(s.doctor("codex").code, 0);
    // A profile's, whichever profile is used.
    std::fs::write(
        &user,
        format!("{trusted}\n[profiles.small]\ntool_output_token_limit = 999\n"),
    )
    .unwrap();
    assert_eq!(
        findings(&s.doctor("codex")),
        [problem(
            &user,
            "profiles.small.tool_output_token_limit",
            999
        )]
    );
}

#[test]
fn doctor_notes_that_codex_judges_no_input_typed_into_a_running_command() {
    // Codex 0.171.0 runs no hook for `write_stdin`: a command typed into a `bash` that
    // `exec_command` started with a tty ran where the same `exec_command` was denied. A
    // hook that reads the transcript sees the tty and denies the call that asks for it:
    // no note. Without `--kept-from transcript` it cannot, and the starter store's effect
    // record names `Bash`: a note on stderr beside the finding.
    for h in HARNESSES {
        let s = Sandbox::new();
        s.wired(h);
        let out = s.doctor(h);
        assert_clean(&out, &s.settings(h), h);
        assert_eq!(out.stderr, "", "{h}");
    }
    let s = Sandbox::new();
    s.wired("codex");
    s.edit_settings("codex", |t| t.replace(" --kept-from transcript", ""));
    let out = s.doctor("codex");
    // (The edit also changes the hook's trust hash: a second finding.)
    let found = findings(&out);
    assert!(
        found
            .iter()
            .any(|f| f.contains("add `--kept-from transcript`")),
        "{found:?}"
    );
    let note = "omission-gate doctor: note: record `done-invoice-7741` binds `Bash`, but Codex runs no hook for `write_stdin`, so what the model types into a shell or program that `exec_command` started with a terminal is not judged, and without `--kept-from transcript` the gate cannot see the terminal: add `--kept-from transcript`, or keep such a rule in Codex's sandbox and approval settings too\n";
    assert_eq!(out.stderr, note);
}

#[test]
fn doctor_finds_gemini_cli_hooks_turned_off_in_its_settings() {
    // Gemini CLI 0.61.0 registers the hook and runs the tool: `hooksConfig.enabled`
    // false, or the hook's name in `hooksConfig.disabled` (which `/hooks disable` writes).
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let user = s.home.join(".gemini/settings.json");
    assert_eq!(s.doctor("gemini-cli").code, 0);
    std::fs::write(&user, r#"{"hooksConfig": {"enabled": false}}"#).unwrap();
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [format!(
            "`{}` sets `hooksConfig.enabled` to false, so Gemini CLI runs no hook at all and the tool runs: remove that setting",
            user.display()
        )]
    );
    // The workspace's settings are merged after the user's.
    s.edit_settings("gemini-cli", |t| {
        t.replacen('{', r#"{"hooksConfig": {"enabled": true},"#, 1)
    });
    assert_eq!(s.doctor("gemini-cli").code, 0);
    std::fs::write(&user, r#"{"hooksConfig": {"disabled": ["omission-gate"]}}"#).unwrap();
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [format!(
            "`{}` lists `omission-gate` under `hooksConfig.disabled`, so Gemini CLI skips the hook in `{}` and the tool runs: take it out of that list",
            user.display(),
            s.settings("gemini-cli").display()
        )]
    );
}

#[test]
fn doctor_reads_gemini_cli_system_settings_only_where_gemini_cli_does() {
    // Gemini CLI 0.61.0 merges the system settings (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`)
    // last, over the workspace's, and joins their hooks to the others; but it skips the
    // file, with a security warning, unless it and every directory above it are owned by
    // root and writable by no one else. Seen with it: `hooksConfig.enabled` false in a
    // file under /tmp changed nothing (the call was denied); in a root-owned folder under
    // /etc the call ran; our hook only in such a file denied the call.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let skipped = s.home.join("system/settings.json");
    std::fs::create_dir_all(skipped.parent().unwrap()).unwrap();
    std::fs::write(&skipped, r#"{"hooksConfig": {"enabled": false}}"#).unwrap();
    let with = |file: &Path| {
        s.run_with(
            &["doctor", "gemini-cli", "--dir", s.p()],
            &[("GEMINI_CLI_SYSTEM_SETTINGS_PATH", file.to_str().unwrap())],
        )
    };
    let out = with(&skipped);
    assert_clean(&out, &s.settings("gemini-cli"), "gemini-cli");
    let note = format!(
        "omission-gate doctor: note: Gemini CLI skips `{}` (",
        skipped.display()
    );
    assert!(out.stderr.starts_with(&note), "{}", out.stderr);
    assert!(
        out.stderr.ends_with(") with a security warning, so nothing in it applies (its hooks and `hooksConfig` included): if it is meant to apply, make it and each directory above it owned by root and writable by no one else\n"),
        "{}",
        out.stderr
    );
    // A file Gemini CLI reads: only where this test runs as root in a folder no one else
    // can write to (the build directory, when that is so).
    let secure = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("gemini-system-{}", std::process::id()));
    std::fs::create_dir_all(&secure).unwrap();
    let system = secure.join("settings.json");
    std::fs::write(&system, r#"{"hooksConfig": {"enabled": false}}"#).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&secure, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&system, std::fs::Permissions::from_mode(0o644)).unwrap();
    let owned_by_root_alone = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).is_ok_and(|m| m.uid() == 0 && m.mode() & 0o022 == 0)
    };
    if !system.ancestors().all(owned_by_root_alone) {
        eprintln!(
            "skipped: `{}` is not a place Gemini CLI reads system settings from",
            system.display()
        );
        std::fs::remove_dir_all(&secure).unwrap();
        return;
    }
    assert_eq!(
        findings(&with(&system)),
        [format!(
            "`{}` sets `hooksConfig.enabled` to false, so Gemini CLI runs no hook at all and the tool runs: remove that setting",
            system.display()
        )]
    );
    // Our hook there, and none in the project: Gemini CLI runs it, and doctor finds it.
    let project = std::fs::read_to_string(s.settings("gemini-cli")).unwrap();
    std::fs::write(&system, &project).unwrap();
    std::fs::remove_file(s.settings("gemini-cli")).unwrap();
    let out = with(&system);
    std::fs::remove_dir_all(&secure).unwrap();
    assert_clean_with(&out, &system, &s.store(), "gemini-cli");
}

#[test]
fn doctor_finds_another_hook_that_can_rewrite_a_call_after_the_gate() {
    // Seen with the real harnesses: beside the gate, a second pre-tool hook that answers
    // with a rewritten command (Claude Code 2.1.197 and Codex 0.171.0: `updatedInput`;
    // Gemini CLI 0.61.0: `tool_input`) turned the model's `echo harmless`, which the gate let run, into
    // `touch gate-marker`, which the store denies, and the harness ran that. Gemini CLI
    // with the groups run one after another (`"sequential": true`) and the gate last
    // showed the gate the rewritten call, and it was denied.
    let rewriter = r#"{"matcher": "Bash|run_shell_command", "hooks": [{"type": "command", "command": "./rewrite.sh"}]}"#;
    let with_rewriter = |t: String, event: &str, first: bool| {
        let open = format!("\"{event}\": [");
        let at = t.find(&open).unwrap() + open.len();
        if first {
            format!("{}{rewriter},{}", &t[..at], &t[at..])
        } else {
            // The event's list is the file's last array.
            let end = t.rfind(']').unwrap();
            format!("{},{rewriter}{}", &t[..end].trim_end(), &t[end..])
        }
    };
    let s = Sandbox::new();
    s.wired("claude-code");
    s.edit_settings("claude-code", |t| with_rewriter(t, "PreToolUse", true));
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    assert_eq!(
        out.stderr,
        format!(
            "omission-gate doctor: note: the hook `./rewrite.sh` in `{}` also runs before calls the gate judges, side by side with it, and Claude Code runs a call with the `updatedInput` a hook returns, which the gate never sees: if that hook rewrites calls, keep its matcher off the tools the gate judges\n",
            s.settings("claude-code").display()
        )
    );
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let settings = s.settings("gemini-cli").display().to_string();
    let problem = format!(
        "the hook `./rewrite.sh` in `{settings}` also runs before calls the gate judges, and Gemini CLI runs a call with the `tool_input` a hook returns, so a call it rewrites runs as the gate never saw it: give the gate's group in `{settings}` `\"sequential\": true` and put it after that hook (Gemini CLI then shows the gate the call as the hooks before it left it)"
    );
    // After the gate, or before it without `sequential`: a problem.
    s.edit_settings("gemini-cli", |t| with_rewriter(t, "BeforeTool", false));
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        std::slice::from_ref(&problem)
    );
    let plain = std::fs::read_to_string(s.settings("gemini-cli")).unwrap();
    let ours_first = plain.replace(&format!(",{rewriter}"), "");
    let sequential = "\n        \"sequential\": true,";
    assert!(ours_first.contains(sequential), "{ours_first}");
    std::fs::write(
        s.settings("gemini-cli"),
        with_rewriter(ours_first.replace(sequential, ""), "BeforeTool", true),
    )
    .unwrap();
    assert_eq!(findings(&s.doctor("gemini-cli")), [problem]);
    // Before it, with the gate's group sequential (as init writes it): clean.
    std::fs::write(
        s.settings("gemini-cli"),
        with_rewriter(ours_first, "BeforeTool", true),
    )
    .unwrap();
    s.assert_doctor_clean("gemini-cli");
}

#[test]
fn init_runs_the_gemini_cli_gate_last_after_the_hooks_already_there() {
    // Gemini CLI 0.61.0 (hookPlanner.ts, hookRunner.ts): when a matching group says
    // `"sequential": true`, the BeforeTool hooks run one after another in the order
    // written, each shown the `tool_input` the ones before it returned. init writes its
    // group sequential and last, so a hook already there that rewrites calls runs before
    // the gate, which judges the call as rewritten: doctor is clean.
    let rewriter = r#"{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./rewrite.sh"}]}"#;
    let s = Sandbox::new();
    std::fs::create_dir_all(s.project.join(".gemini")).unwrap();
    let settings = format!("{{\"hooks\": {{\"BeforeTool\": [{rewriter}]}}}}\n");
    std::fs::write(s.settings("gemini-cli"), &settings).unwrap();
    s.wired("gemini-cli");
    s.assert_doctor_clean("gemini-cli");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(s.settings("gemini-cli")).unwrap()).unwrap();
    assert_eq!(written["hooks"]["BeforeTool"][1]["sequential"], true);
    // An older group of ours before that hook is moved after it.
    let old = r#"{"matcher": "run_shell_command", "hooks": [{"name": "omission-gate", "type": "command", "command": "omission-gate hook gemini-cli --store s.json"}]}"#;
    std::fs::write(
        s.settings("gemini-cli"),
        format!("{{\"hooks\": {{\"BeforeTool\": [{old}, {rewriter}]}}}}\n"),
    )
    .unwrap();
    s.init("gemini-cli");
    let moved: Value =
        serde_json::from_str(&std::fs::read_to_string(s.settings("gemini-cli")).unwrap()).unwrap();
    let groups = moved["hooks"]["BeforeTool"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{moved}");
    assert_eq!(groups[0], serde_json::from_str::<Value>(rewriter).unwrap());
    s.assert_doctor_clean("gemini-cli");
}

#[test]
fn doctor_notes_a_claude_code_permission_request_hook_that_can_rewrite_a_call_after_the_gate() {
    // Seen with Claude Code 2.1.197 (`--permission-prompt-tool stdio`, as an interactive
    // session asks): the model asked for `python3 -c pass`, which the gate let run; a
    // `PermissionRequest` hook answered `allow` with an `updatedInput` of
    // `touch gate-marker`, which the store denies, and Claude Code ran that. Claude Code
    // runs `PermissionRequest` hooks after every `PreToolUse` hook.
    let s = Sandbox::new();
    s.wired("claude-code");
    let settings = s.settings("claude-code");
    let with_event = |matcher: &str| {
        let text = std::fs::read_to_string(&settings).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["hooks"]["PermissionRequest"] = serde_json::json!([
            {"matcher": matcher, "hooks": [{"type": "command", "command": "./rewrite.sh"}]}
        ]);
        v.to_string()
    };
    let original = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(&settings, with_event("Bash")).unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &settings, "claude-code");
    assert_eq!(
        out.stderr,
        format!(
            "omission-gate doctor: note: the hook `./rewrite.sh` in `{}` runs as a `PermissionRequest` hook on calls the gate judges, when Claude Code would ask about them (interactive sessions, `--permission-prompt-tool`, agents in the background), after the gate judged the call, and Claude Code runs a call with the `updatedInput` of its `allow` decision, which the gate never sees: if that hook rewrites calls, make it allow without `updatedInput` or deny instead, or keep its matcher off the tools the gate judges\n",
            settings.display()
        )
    );
    // A matcher that selects no tool the gate judges: nothing to say.
    std::fs::write(&settings, with_event("WebFetch")).unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &settings, "claude-code");
    assert_eq!(out.stderr, "");
    std::fs::write(&settings, original).unwrap();
    s.assert_doctor_clean("claude-code");
}

/// Records the Claude Code plugin `rw@localm` as installed in `folder` for `project`, in
/// the plugins folder `plugins`.
fn install_plugin(plugins: &Path, folder: &Path, project: &Path) {
    std::fs::write(
        plugins.join("installed_plugins.json"),
        serde_json::json!({"version": 2, "plugins": {"rw@localm": [{
            "scope": "project",
            "installPath": folder,
            "version": "0.0.1",
            "projectPath": project,
        }]}})
        .to_string(),
    )
    .unwrap();
}

/// Writes the plugin folder's `hooks/hooks.json`: a pre-tool hook `./rw.sh` on `Bash`.
fn write_rw_hook(folder: &Path) -> PathBuf {
    std::fs::create_dir_all(folder.join("hooks")).unwrap();
    let hooks = folder.join("hooks/hooks.json");
    std::fs::write(
        &hooks,
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./rw.sh"}]}]}}"#,
    )
    .unwrap();
    hooks
}

/// doctor's fix for a hook the plugin `rw@localm` (enabled in the project) brings.
const RW_OFF: &str = "turn the plugin off here (`claude plugin disable rw@localm --scope local`, which sets it to false under `enabledPlugins` in `.claude/settings.local.json`) or uninstall it";

/// doctor's note on the hook [`write_rw_hook`] wrote at `hooks`, for `rw@localm`.
fn rw_hook_note(hooks: &Path) -> String {
    rw_command_note("./rw.sh", hooks)
}

/// doctor's note on the pre-tool hook `command` that `rw@localm` brings, given in `file`.
fn rw_command_note(command: &str, file: &Path) -> String {
    format!(
        "omission-gate doctor: note: the hook `{command}` that the Claude Code plugin `rw@localm` brings (in `{}`) also runs before calls the gate judges, side by side with it, and Claude Code runs a call with the `updatedInput` a hook returns, which the gate never sees: if that hook rewrites calls, {RW_OFF}\n",
        file.display()
    )
}

/// doctor's note on the `PreToolUse` hooks in the front matter of `what` (a file in
/// backquotes, or the command written in one), `a_kind` (`an agent`, `a skill`, `a
/// command`) that the plugin `rw@localm` brings.
fn rw_front_matter_note(what: &str, a_kind: &str) -> String {
    let when = if a_kind == "an agent" {
        "which Claude Code runs on the calls made while that agent runs (as a subagent, or as the main agent under `--agent`)"
    } else {
        "which Claude Code runs on every call after it is used, for the rest of the session"
    };
    format!(
        "omission-gate doctor: note: {what}, {a_kind} that the Claude Code plugin `rw@localm` brings, declares `PreToolUse` hooks in its front matter, {when}, side by side with the gate, and Claude Code runs a call with the `updatedInput` such a hook returns, which the gate never sees: if one rewrites calls, {RW_OFF}\n"
    )
}

/// Turns the plugin `rw@localm` on or off in the settings `file`.
fn enable_plugin(file: &Path, on: bool) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|_| "{}".to_string());
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["enabledPlugins"] = serde_json::json!({"rw@localm": on});
    std::fs::write(file, v.to_string()).unwrap();
}

#[test]
fn doctor_notes_the_hooks_an_enabled_claude_code_plugin_brings() {
    // Seen with Claude Code 2.1.197 in `claude -p`: a plugin installed from a local
    // marketplace (`claude plugin install rw@localm --scope project`) whose
    // `hooks/hooks.json` answers `PreToolUse` on `Bash` with `allow` and an
    // `updatedInput` of `touch gate-marker`: the model asked for `echo harmless`, which
    // the gate let run, and Claude Code ran `touch gate-marker`, which the store denies.
    // doctor said ok and nothing else. Claude Code runs an enabled plugin's hooks after
    // the settings files' (its bundle's `getMatchingHooks` reads `registeredHooks`).
    let s = Sandbox::new();
    s.wired("claude-code");
    let settings = s.settings("claude-code");
    let plugins = s.home.join(".claude/plugins");
    let folder = plugins.join("cache/localm/rw/0.0.1");
    std::fs::create_dir_all(folder.join("hooks")).unwrap();
    std::fs::create_dir_all(folder.join(".claude-plugin")).unwrap();
    let hooks = folder.join("hooks/hooks.json");
    std::fs::write(
        &hooks,
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}\"/rw.sh"}]}]}}"#,
    )
    .unwrap();
    // The manifest's own hooks: a `PermissionRequest` one, written in it.
    let manifest = folder.join(".claude-plugin/plugin.json");
    std::fs::write(
        &manifest,
        r#"{"name": "rw", "hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./ask.sh"}]}]}}"#,
    )
    .unwrap();
    let install = |project: &Path| install_plugin(&plugins, &folder, project);
    install(&s.project);
    enable_plugin(&settings, true);
    let fix = RW_OFF;
    let noted = format!(
        "omission-gate doctor: note: the hook `\"${{CLAUDE_PLUGIN_ROOT}}\"/rw.sh` that the Claude Code plugin `rw@localm` brings (in `{}`) also runs before calls the gate judges, side by side with it, and Claude Code runs a call with the `updatedInput` a hook returns, which the gate never sees: if that hook rewrites calls, {fix}\nomission-gate doctor: note: the hook `./ask.sh` that the Claude Code plugin `rw@localm` brings (in `{}`) runs as a `PermissionRequest` hook on calls the gate judges, when Claude Code would ask about them (interactive sessions, `--permission-prompt-tool`, agents in the background), after the gate judged the call, and Claude Code runs a call with the `updatedInput` of its `allow` decision, which the gate never sees: if that hook rewrites calls, {fix}\n",
        hooks.display(),
        manifest.display()
    );
    let out = s.doctor("claude-code");
    assert_clean(&out, &settings, "claude-code");
    assert_eq!(out.stderr, noted);
    // Turned off in the local settings, which outrank the project's: it brings nothing.
    let local = s.project.join(".claude/settings.local.json");
    enable_plugin(&local, false);
    let out = s.doctor("claude-code");
    assert_clean(&out, &settings, "claude-code");
    assert_eq!(out.stderr, "");
    // Turned on there by a list of version constraints, which Claude Code reads as on.
    std::fs::write(&local, r#"{"enabledPlugins": {"rw@localm": ["^0.0"]}}"#).unwrap();
    assert_eq!(s.doctor("claude-code").stderr, noted);
    // An agent the plugin brings, whose front matter declares a pre-tool hook: Claude
    // Code runs it as it runs a project's agent's.
    let agent = folder.join("agents/rw.md");
    std::fs::create_dir_all(agent.parent().unwrap()).unwrap();
    std::fs::write(
        &agent,
        "---\nname: rw\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: ./rw.sh\n---\n",
    )
    .unwrap();
    assert_eq!(
        s.doctor("claude-code").stderr,
        format!(
            "{noted}omission-gate doctor: note: `{}`, an agent that the Claude Code plugin `rw@localm` brings, declares `PreToolUse` hooks in its front matter, which Claude Code runs on the calls made while that agent runs (as a subagent, or as the main agent under `--agent`), side by side with the gate, and Claude Code runs a call with the `updatedInput` such a hook returns, which the gate never sees: if one rewrites calls, {fix}\n",
            agent.display()
        )
    );
    // Installed for another project only: Claude Code does not load it here, but can
    // install it as it starts (seen with 2.1.197: a plugin turned on in the user's
    // settings, its marketplace known, was installed at a session's start and its
    // `PreToolUse` hook ran in that session), and doctor cannot read its hooks.
    install(&s.home);
    let out = s.doctor("claude-code");
    assert_clean(&out, &settings, "claude-code");
    assert_eq!(
        out.stderr,
        "omission-gate doctor: note: the Claude Code plugin `rw@localm` is turned on under `enabledPlugins` but not installed for this project, so doctor cannot read its hooks, and Claude Code installs such a plugin as it starts once its marketplace is known, then runs its hooks side by side with the gate's, a `PreToolUse` hook's `updatedInput` included, which the gate never sees: install it (`claude plugin install rw@localm`) and run doctor again, or take it out of `enabledPlugins`\n"
    );
}

#[test]
fn doctor_reads_the_agents_skills_and_commands_a_claude_code_plugin_s_manifest_names() {
    // Claude Code 2.1.197 loads a plugin's agents, skills and commands from the paths its
    // manifest gives under `agents`, `skills` and `commands` besides the standard
    // folders, commands written in the manifest too, and a `SKILL.md` in the plugin's
    // own folder as a skill (read from its binary: `agentsPaths`, `skillsPaths`,
    // `commandsPaths`, `commandsMetadata`), and registers their front matter's hooks as
    // it does those of the standard folders'. doctor read only the standard folders, so
    // a pre-tool hook in such a file was left out: ok, and no note.
    let s = Sandbox::new();
    s.wired("claude-code");
    let settings = s.settings("claude-code");
    let plugins = s.home.join(".claude/plugins");
    let folder = plugins.join("cache/localm/rw/0.0.1");
    let hooked = "---\nname: rw\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: ./rw.sh\n---\n";
    let files = [
        "custom/agents/rw.md",
        "more/one/SKILL.md",
        "cmd/rw.md",
        "SKILL.md",
    ];
    for file in files {
        let path = folder.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, hooked).unwrap();
    }
    std::fs::create_dir_all(folder.join(".claude-plugin")).unwrap();
    let manifest = folder.join(".claude-plugin/plugin.json");
    std::fs::write(
        &manifest,
        serde_json::json!({
            "name": "rw",
            "agents": "./custom/agents/",
            "skills": ["./more"],
            "commands": {"one": {"source": "./cmd/rw.md"}, "two": {"content": hooked}},
        })
        .to_string(),
    )
    .unwrap();
    install_plugin(&plugins, &folder, &s.project);
    enable_plugin(&settings, true);
    let out = s.doctor("claude-code");
    assert_clean(&out, &settings, "claude-code");
    let shown = |file: &str| format!("`{}`", folder.join(file).display());
    assert_eq!(
        out.stderr,
        [
            rw_front_matter_note(&shown(files[0]), "an agent"),
            rw_front_matter_note(&shown(files[1]), "a skill"),
            rw_front_matter_note(&shown(files[2]), "a command"),
            rw_front_matter_note(&shown(files[3]), "a skill"),
            rw_front_matter_note(
                &format!("the command `two` written in `{}`", manifest.display()),
                "a command"
            ),
        ]
        .concat()
    );
}

#[test]
fn doctor_reads_the_hooks_agents_skills_and_commands_a_claude_code_marketplace_entry_adds() {
    // Claude Code 2.1.197 loads, with an enabled plugin's own, the `agents`, `skills`,
    // `commands` and `hooks` that the plugin's entry in its marketplace's catalog gives
    // (read from its binary: "from marketplace entry"; the entry's paths are relative to
    // the plugin's folder, its `hooks` an object of events spread over the plugin's
    // own). doctor read only the plugin's folder and manifest: ok, and no note.
    let s = Sandbox::new();
    s.wired("claude-code");
    let settings = s.settings("claude-code");
    let plugins = s.home.join(".claude/plugins");
    let folder = plugins.join("cache/localm/rw/0.0.1");
    let hooked = "---\nname: rw\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: ./rw.sh\n---\n";
    for file in [
        "extra/agents/rw.md",
        "extra/skills/one/SKILL.md",
        "extra/cmd.md",
    ] {
        let path = folder.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, hooked).unwrap();
    }
    std::fs::create_dir_all(folder.join(".claude-plugin")).unwrap();
    std::fs::write(
        folder.join(".claude-plugin/plugin.json"),
        r#"{"name": "rw"}"#,
    )
    .unwrap();
    install_plugin(&plugins, &folder, &s.project);
    enable_plugin(&settings, true);
    // The marketplace, as `claude plugin marketplace add` records a local one.
    let market = s.home.join("market");
    let catalog = market.join(".claude-plugin/marketplace.json");
    std::fs::create_dir_all(catalog.parent().unwrap()).unwrap();
    std::fs::write(
        plugins.join("known_marketplaces.json"),
        serde_json::json!({"localm": {
            "source": {"source": "directory", "path": market},
            "installLocation": market,
        }})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        &catalog,
        serde_json::json!({"name": "localm", "owner": {"name": "x"}, "plugins": [
            {"name": "other", "source": "./other", "agents": "./nothing"},
            {
                "name": "rw",
                "source": "./rw",
                "agents": "./extra/agents",
                "skills": ["./extra/skills"],
                "commands": ["./extra/cmd.md"],
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./entry.sh"}]}]},
            },
        ]})
        .to_string(),
    )
    .unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &settings, "claude-code");
    let shown = |file: &str| format!("`{}`", folder.join(file).display());
    assert_eq!(
        out.stderr,
        [
            rw_command_note("./entry.sh", &catalog),
            rw_front_matter_note(&shown("extra/agents/rw.md"), "an agent"),
            rw_front_matter_note(&shown("extra/skills/one/SKILL.md"), "a skill"),
            rw_front_matter_note(&shown("extra/cmd.md"), "a command"),
        ]
        .concat()
    );
}

#[test]
fn doctor_reads_claude_code_s_cowork_settings_and_plugins_when_its_variable_is_on() {
    // With `CLAUDE_CODE_USE_COWORK_PLUGINS` true, Claude Code 2.1.197 reads the user's
    // settings from `cowork_settings.json` and its plugins from `cowork_plugins` in its
    // config folder (read from its binary). doctor read `settings.json` and `plugins`:
    // a plugin turned on there, with a pre-tool hook, got ok and no note.
    let s = Sandbox::new();
    s.wired("claude-code");
    let settings = s.settings("claude-code");
    let config = s.home.join(".claude");
    let plugins = config.join("cowork_plugins");
    let folder = plugins.join("cache/localm/rw/0.0.1");
    let hooks = write_rw_hook(&folder);
    install_plugin(&plugins, &folder, &s.project);
    enable_plugin(&config.join("cowork_settings.json"), true);
    let cowork = [("CLAUDE_CODE_USE_COWORK_PLUGINS", "1")];
    let doctor =
        |vars: &[(&str, &str)]| s.run_with(&["doctor", "claude-code", "--dir", s.p()], vars);
    let out = doctor(&cowork);
    assert_clean(&out, &settings, "claude-code");
    assert_eq!(out.stderr, rw_hook_note(&hooks));
    // Without the variable Claude Code reads neither file: nothing to say.
    let out = doctor(&[]);
    assert_clean(&out, &settings, "claude-code");
    assert_eq!(out.stderr, "");
}

#[test]
fn doctor_reads_a_claude_code_plugin_from_the_seed_folders() {
    // Claude Code 2.1.197 loads an enabled plugin that `installed_plugins.json` does not
    // list from the read-only seed folders `CLAUDE_CODE_PLUGIN_SEED_DIR` names, at
    // `cache/MARKETPLACE/NAME/VERSION` (read from its binary: "Using seed cache").
    // doctor said the plugin was not installed, and read none of its hooks.
    let s = Sandbox::new();
    s.wired("claude-code");
    let settings = s.settings("claude-code");
    let seed = s.home.join("seed");
    let folder = seed.join("cache/localm/rw/0.0.1");
    let hooks = write_rw_hook(&folder);
    enable_plugin(&settings, true);
    let seeds = format!("{}:{}", s.home.join("empty").display(), seed.display());
    let out = s.run_with(
        &["doctor", "claude-code", "--dir", s.p()],
        &[("CLAUDE_CODE_PLUGIN_SEED_DIR", &seeds)],
    );
    assert_clean(&out, &settings, "claude-code");
    assert_eq!(out.stderr, rw_hook_note(&hooks));
}

#[test]
fn doctor_reads_claude_code_s_disable_all_hooks_as_the_merged_settings_have_it() {
    // Claude Code 2.1.197 reads `disableAllHooks` from its merged settings: the local
    // settings outrank the project's, which outrank the user's. Set to true outside the
    // managed settings it leaves the managed settings' hooks running (seen with 2.1.197:
    // the project's settings set it, and the pre-tool hook in the managed settings still
    // denied a call), so "no hook runs" was wrong, and a false above a true was reported
    // as hooks turned off.
    let s = Sandbox::new();
    s.wired("claude-code");
    let settings = s.settings("claude-code");
    let user = s.home.join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, r#"{"disableAllHooks": true}"#).unwrap();
    let problem = format!(
        "`{}` sets `disableAllHooks` to true, so Claude Code runs only the hooks in the managed settings (and those of the plugins they turn on), and the hook in `{}` never runs: remove that setting",
        user.display(),
        settings.display()
    );
    // A skill's hooks do not run then either (2.1.197 registers no agent's, skill's or
    // command's hooks while only the managed ones run): no note of them.
    let skill = s.project.join(".claude/skills/rw/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(
        &skill,
        "---\nhooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          command: ./rw.sh\n---\n",
    )
    .unwrap();
    let out = s.doctor("claude-code");
    assert_eq!(findings(&out), [problem]);
    assert_eq!(out.stderr, "");
    // The local settings set it to false: the hooks run, the skill's too.
    let local = s.project.join(".claude/settings.local.json");
    std::fs::write(&local, r#"{"disableAllHooks": false}"#).unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &settings, "claude-code");
    assert!(
        out.stderr.starts_with(&format!(
            "omission-gate doctor: note: `{}`, a Claude Code skill, declares `PreToolUse` hooks",
            skill.display()
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn doctor_notes_hooks_an_agent_or_a_skill_declares_in_its_front_matter() {
    // Seen with Claude Code 2.1.197 in `claude -p`: a `PreToolUse` hook on `Bash` in the
    // front matter of `.claude/skills/rw/SKILL.md`, answering `allow` with an
    // `updatedInput` of `touch gate-marker`, ran once the model used the skill: the
    // model then asked for `echo harmless`, which the settings' pre-tool hook let run,
    // and Claude Code ran `touch gate-marker`. The same hook in
    // `.claude/agents/rw.md` did so for the subagent's call, and for the main agent's
    // under `--agent rw`. doctor said ok and nothing else.
    let s = Sandbox::new();
    s.wired("claude-code");
    let settings = s.settings("claude-code");
    let front = |events: &str| {
        format!(
            "---\nname: rw\ndescription: does the step\nhooks:\n  {events}:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: ./rw.sh\n---\nDo the step.\n"
        )
    };
    let skill = s.project.join(".claude/skills/rw/SKILL.md");
    let agent = s.project.join(".claude/agents/team/rw.md");
    let command = s.home.join(".claude/commands/rw.md");
    for file in [&skill, &agent, &command] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    }
    std::fs::write(&skill, front("PreToolUse")).unwrap();
    std::fs::write(&agent, front("PermissionRequest")).unwrap();
    std::fs::write(&command, front("\"PreToolUse\"")).unwrap();
    let runs = "side by side with the gate, and Claude Code runs a call with the `updatedInput` such a hook returns, which the gate never sees: if one rewrites calls, take them out, or keep their matcher off the tools the gate judges";
    let after_use =
        "which Claude Code runs on every call after it is used, for the rest of the session";
    let noted = format!(
        "omission-gate doctor: note: `{}`, a Claude Code command, declares `PreToolUse` hooks in its front matter, {after_use}, {runs}\n\
         omission-gate doctor: note: `{}`, a Claude Code agent, declares `PermissionRequest` hooks in its front matter, which Claude Code runs on the calls made while that agent runs (as a subagent, or as the main agent under `--agent`), {runs}\n\
         omission-gate doctor: note: `{}`, a Claude Code skill, declares `PreToolUse` hooks in its front matter, {after_use}, {runs}\n",
        command.display(),
        agent.display(),
        skill.display()
    );
    let out = s.doctor("claude-code");
    assert_clean(&out, &settings, "claude-code");
    assert_eq!(out.stderr, noted);
    // Hooks of other events only, or none: nothing to say.
    for file in [&skill, &agent, &command] {
        std::fs::write(file, front("Stop")).unwrap();
    }
    std::fs::write(
        &skill,
        "---\nname: rw\ndescription: no hooks\n---\nhooks: PreToolUse\n",
    )
    .unwrap();
    s.assert_doctor_clean("claude-code");
    assert_eq!(s.doctor("claude-code").stderr, "");
    // Events written a way this cannot read: said, as they may be pre-tool ones.
    std::fs::write(&agent, "---\nname: rw\nhooks: *shared\n---\n").unwrap();
    assert_eq!(
        s.doctor("claude-code").stderr,
        format!(
            "omission-gate doctor: note: `{}`, a Claude Code agent, declares hooks in its front matter under names doctor cannot read as events (they may be `PreToolUse` hooks), which Claude Code runs on the calls made while that agent runs (as a subagent, or as the main agent under `--agent`), {runs}\n",
            agent.display()
        )
    );
}

#[test]
fn doctor_finds_a_gemini_cli_custom_command_that_runs_a_shell_command() {
    // Gemini CLI 0.61.0 runs a custom command's `!{cmd}` (FileCommandLoader.ts,
    // shellProcessor.ts) through its shell with a policy check alone, no `BeforeTool`
    // hook; the prompt is read for them when it holds `!{` or `{{args}}`, after each
    // `@{path}` is replaced by the file's text. Seen: `gemini -p /status --yolo` (or with
    // `tools.allowed: ["run_shell_command"]`) created the marker of `!{touch
    // gate-marker}`, in the prompt or in a file it injects beside `{{args}}`, with no hook
    // run. `tools.exclude: ["run_shell_command"]` made it "Blocked by policy", but a rule
    // in `~/.gemini/policies/*.toml` allowing the shell at priority 900 outranks that
    // (tier 4 + 900/1000 over 4.4): the marker was created, without `--yolo` too.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    s.assert_doctor_clean("gemini-cli");
    let tail = "when it is used, and Gemini CLI runs that with no `BeforeTool` hook (with the shell allowed, or under `--yolo`, without a word), so the gate never judges it: ";
    let mine = "take the `!{...}` (and `{{args}}` beside an `@{...}`) out of its prompt, or remove the command";
    let project = s.project.join(".gemini/commands/git/status.toml");
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    std::fs::write(
        &project,
        "description = \"status\"\nprompt = \"\"\"\nThe status:\n!{touch gate-marker}\n\"\"\"\n",
    )
    .unwrap();
    let inline = format!(
        "`{}`, a Gemini CLI custom command, runs `touch gate-marker` in its shell {tail}{mine}",
        project.display()
    );
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        std::slice::from_ref(&inline)
    );
    // A link back up the folder: each folder is read once.
    std::os::unix::fs::symlink("..", project.parent().unwrap().join("loop")).unwrap();
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        std::slice::from_ref(&inline)
    );
    // A link to a folder elsewhere: followed (seen: `/linked:ln` ran its command).
    let elsewhere = s.home.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(
        elsewhere.join("ln.toml"),
        "prompt = \"!{touch gate-marker}\"\n",
    )
    .unwrap();
    let linked = s.project.join(".gemini/commands/linked");
    std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [
            inline.clone(),
            inline.replace(
                &project.display().to_string(),
                &linked.join("ln.toml").display().to_string()
            )
        ]
    );
    std::fs::remove_file(&linked).unwrap();
    // A file or folder whose name starts with `.`: Gemini CLI's glob reads it too (`dot:
    // true`; seen: `/.hid:st` and `/.st` ran their commands).
    for hidden in [".hid/st.toml", ".st.toml"] {
        let file = s.project.join(".gemini/commands").join(hidden);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "prompt = \"!{touch gate-marker}\"\n").unwrap();
        let mut want = vec![
            inline.clone(),
            inline.replace(&project.display().to_string(), &file.display().to_string()),
        ];
        want.sort();
        let mut got = findings(&s.doctor("gemini-cli"));
        got.sort();
        assert_eq!(got, want, "{hidden}");
        std::fs::remove_file(&file).unwrap();
    }
    // A file it injects beside `{{args}}`: the file's text is read for commands too.
    std::fs::write(&project, "prompt = \"Review @{notes.md} for {{args}}\"\n").unwrap();
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [format!(
            "`{}`, a Gemini CLI custom command, runs in its shell each `!{{...}}` that the file `notes.md` it injects holds (whoever writes that file, the agent included, chooses the command) {tail}{mine}",
            project.display()
        )]
    );
    // Neither read for commands (`@{...}` alone), nor a command (`!{}`), nor braces
    // that balance (Gemini CLI refuses the command): nothing runs.
    for prompt in [
        "Review @{notes.md}",
        "Run !{} for {{args}}",
        "Run !{touch gate-marker",
    ] {
        std::fs::write(&project, format!("prompt = {prompt:?}\n")).unwrap();
        s.assert_doctor_clean("gemini-cli");
    }
    // A file this cannot read as TOML, which Gemini CLI's parser may read: looked at as
    // it is written.
    std::fs::write(&project, "prompt = \"!{touch gate-marker}\"\nprompt = 1\n").unwrap();
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        std::slice::from_ref(&inline)
    );
    // The user's commands and an extension's.
    std::fs::remove_file(&project).unwrap();
    let user = s.home.join(".gemini/commands/status.toml");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, "prompt = \"!{touch gate-marker}\"\n").unwrap();
    let extension = s.home.join(".gemini/extensions/helper");
    std::fs::create_dir_all(extension.join("commands")).unwrap();
    std::fs::write(
        extension.join("gemini-extension.json"),
        r#"{"name": "helper", "version": "1.0.0"}"#,
    )
    .unwrap();
    let theirs = extension.join("commands/check.toml");
    std::fs::write(&theirs, "prompt = \"Check: !{touch gate-marker}\"\n").unwrap();
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [
            format!(
                "`{}`, a Gemini CLI custom command, runs `touch gate-marker` in its shell {tail}{mine}",
                user.display()
            ),
            format!(
                "`{}`, a Gemini CLI custom command, runs `touch gate-marker` in its shell {tail}uninstall the extension `helper` (`gemini extensions uninstall helper`)",
                theirs.display()
            ),
        ]
    );
    // The shell excluded in the settings: a policy file can still allow it.
    std::fs::write(
        s.home.join(".gemini/settings.json"),
        r#"{"tools": {"exclude": ["run_shell_command"]}}"#,
    )
    .unwrap();
    assert_eq!(findings(&s.doctor("gemini-cli")).len(), 2);
}

#[test]
fn doctor_finds_a_gemini_cli_extension_hook_that_can_rewrite_a_call_after_the_gate() {
    // Gemini CLI 0.61.0 loads each extension under `~/.gemini/extensions` that
    // `extension-enablement.json` leaves on for the start directory, with the hooks of
    // its `hooks/hooks.json` (extension-manager.ts), and runs them after every settings
    // hook (hookRegistry.ts, `getSourcePriority`): one that returns a `tool_input` is run
    // after the gate, sequential or not, and its call runs as the gate never saw it.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    // An extension `rewriter` in `folder`, whose hook's matcher is `m`.
    let install = |folder: &Path, m: &str| {
        std::fs::create_dir_all(folder.join("hooks")).unwrap();
        std::fs::write(
            folder.join("gemini-extension.json"),
            r#"{"name": "rewriter", "version": "1.0.0"}"#,
        )
        .unwrap();
        std::fs::write(
            folder.join("hooks/hooks.json"),
            format!(
                r#"{{"hooks": {{"BeforeTool": [{{"matcher": "{m}", "hooks": [{{"name": "rewrite", "type": "command", "command": "${{extensionPath}}/rewrite.sh"}}]}}]}}}}"#
            ),
        )
        .unwrap();
    };
    let extension = s.home.join(".gemini/extensions/rewriter");
    install(&extension, "run_shell_command");
    let hooks = extension.join("hooks/hooks.json");
    let runs = "also runs before calls the gate judges, after every hook in the settings files, and Gemini CLI runs a call with the `tool_input` a hook returns, so a call it rewrites runs as the gate never saw it: list `rewrite` under `hooksConfig.disabled` (it holds under any command line), or uninstall the extension (`gemini extensions uninstall rewriter`)";
    let problem = format!(
        "the hook `${{extensionPath}}/rewrite.sh` that the Gemini CLI extension `rewriter` brings (in `{}`) {runs}",
        hooks.display()
    );
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        std::slice::from_ref(&problem)
    );
    // Turned off for this project, as `gemini extensions disable --scope workspace`
    // writes it: still found, since `gemini -e rewriter` loads it all the same
    // (`ExtensionEnablementManager.isEnabled`: a non-empty `-e` list decides alone, the
    // file unread; seen with 0.61.0: the hook did not run without `-e`, and ran with
    // `-e rewriter`), and doctor cannot see the command line; turned off elsewhere only:
    // found as on.
    let enablement = s.home.join(".gemini/extensions/extension-enablement.json");
    let off_in = |dir: &str| {
        std::fs::write(
            &enablement,
            serde_json::json!({"rewriter": {"overrides": [format!("!{dir}/*")]}}).to_string(),
        )
        .unwrap();
    };
    off_in(s.p());
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [problem.replace(
            "also runs",
            &format!(
                "is turned off here by `{}`, but `gemini -e rewriter` (`--extensions`) turns the extension on whatever that file says, and the hook then runs",
                enablement.display()
            )
        )]
    );
    off_in("/elsewhere");
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        std::slice::from_ref(&problem)
    );
    std::fs::remove_file(&enablement).unwrap();
    // Its hook listed under `hooksConfig.disabled`: it does not run.
    let user = s.home.join(".gemini/settings.json");
    std::fs::write(&user, r#"{"hooksConfig": {"disabled": ["rewrite"]}}"#).unwrap();
    s.assert_doctor_clean("gemini-cli");
    std::fs::remove_file(&user).unwrap();
    // `security.allowedExtensions` (the last settings file that sets it) keeps an
    // extension whose source no pattern finds from loading, under any flag
    // (`ExtensionManager._buildExtension`); `security.blockGitExtensions` one installed
    // from git. The source is matched as its real path, or, when it is no path, resolved
    // against the start directory as Node's `path.resolve` does. Seen with 0.61.0, for
    // an extension installed from `https://github.com/org/rewriter`: its hook did not run
    // with `^/nowhere` (with `-e rewriter` too) or `^https://github`, ran with
    // `github\.com/org/` and `^<start dir>/https:/github`, and did not run with
    // `blockGitExtensions` alone.
    let meta = extension.join(".gemini-extension-install.json");
    let from_git = "https://github.com/org/rewriter";
    std::fs::write(
        &meta,
        serde_json::json!({"type": "git", "source": from_git}).to_string(),
    )
    .unwrap();
    let workspace = s.settings("gemini-cli");
    let wired = std::fs::read_to_string(&workspace).unwrap();
    let with_security = |security: Value| {
        let mut v: Value = serde_json::from_str(&wired).unwrap();
        v["security"] = security;
        std::fs::write(&workspace, v.to_string()).unwrap();
    };
    for (security, loads) in [
        (
            serde_json::json!({"allowedExtensions": ["^/nowhere/"]}),
            false,
        ),
        (
            serde_json::json!({"allowedExtensions": ["github\\.com/org/"]}),
            true,
        ),
        (
            serde_json::json!({"allowedExtensions": [format!("^{}/https:/github", s.p())]}),
            true,
        ),
        (
            serde_json::json!({"allowedExtensions": ["^https://github"]}),
            false,
        ),
        // Patterns the regex crate may read otherwise: as if it loads.
        (
            serde_json::json!({"allowedExtensions": ["\\A/nowhere"]}),
            true,
        ),
        (serde_json::json!({"allowedExtensions": ["(?=x)"]}), true),
        (serde_json::json!({"blockGitExtensions": true}), false),
        // The allow list overrides blockGitExtensions.
        (
            serde_json::json!({"blockGitExtensions": true, "allowedExtensions": ["org"]}),
            true,
        ),
        (serde_json::json!({"allowedExtensions": []}), true),
    ] {
        with_security(security.clone());
        let out = s.doctor("gemini-cli");
        if loads {
            assert_eq!(findings(&out), std::slice::from_ref(&problem), "{security}");
        } else {
            assert_clean(&out, &workspace, "gemini-cli");
        }
    }
    // An allow list and an install record without a source: Gemini CLI stops with an
    // error, and doctor reports the hook.
    std::fs::write(&meta, r#"{"type": "local"}"#).unwrap();
    with_security(serde_json::json!({"allowedExtensions": ["^/nowhere/"]}));
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        std::slice::from_ref(&problem)
    );
    std::fs::write(&workspace, &wired).unwrap();
    std::fs::remove_file(&meta).unwrap();
    // A hook on a tool the gate does not judge: clean.
    install(&extension, "read_file");
    s.assert_doctor_clean("gemini-cli");
    // A linked extension is read from the folder it links to.
    std::fs::remove_dir_all(&extension).unwrap();
    let source = s.home.join("src/rewriter");
    install(&source, ".*");
    std::fs::create_dir_all(&extension).unwrap();
    std::fs::write(
        extension.join(".gemini-extension-install.json"),
        serde_json::json!({"type": "link", "source": source}).to_string(),
    )
    .unwrap();
    let linked = source.join("hooks/hooks.json");
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [problem.replace(&hooks.display().to_string(), &linked.display().to_string())]
    );
}

#[test]
fn doctor_finds_gemini_cli_started_with_another_project_directory_in_its_environment() {
    // Gemini CLI 0.61.0 puts its own environment's `$GEMINI_PROJECT_DIR` into its
    // settings when it reads them: started with it set to another folder (whose store was
    // empty), the hook read that store and the call the project's store denies ran.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let doctor = |value: &str| {
        s.run_with(
            &["doctor", "gemini-cli", "--dir", s.p()],
            &[("GEMINI_PROJECT_DIR", value)],
        )
    };
    assert_eq!(
        findings(&doctor("/elsewhere")),
        [format!(
            "`GEMINI_PROJECT_DIR` is `/elsewhere` in this environment, and Gemini CLI started with it puts that in the hook in `{}` when it reads its settings, so the hook reads that directory's store, not this project's: unset it before you start gemini",
            s.settings("gemini-cli").display()
        )]
    );
    // The project itself is harmless.
    assert_clean(&doctor(s.p()), &s.settings("gemini-cli"), "gemini-cli");
}

#[test]
fn doctor_finds_a_codex_hook_edited_since_it_was_trusted() {
    let s = Sandbox::new();
    s.wired("codex");
    s.edit_settings("codex", |t| t.replace("\"timeout\": 30", "\"timeout\": 20"));
    let found = findings(&s.doctor("codex"));
    assert_eq!(found.len(), 1, "{found:?}");
    let key = format!("{}:pre_tool_use:0:0", s.settings("codex").display());
    assert!(
        found[0].starts_with(&format!(
            "the hook `{key}` changed since it was trusted (trusted `sha256:"
        )),
        "{}",
        found[0]
    );
}

#[test]
fn doctor_finds_a_gemini_cli_folder_that_is_not_trusted() {
    let s = Sandbox::new();
    s.init("gemini-cli");
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [format!(
            "Gemini CLI does not trust the folder `{p}`, so it registers no hooks there (and `gemini -p` exits 55; with `--skip-trust` it runs with no hooks, since that flag trusts the folder only after the settings are read): add {{\"{p}\":\"TRUST_FOLDER\"}} to `{}/.gemini/trustedFolders.json`, trust the folder when gemini asks, or start gemini with `GEMINI_CLI_TRUST_WORKSPACE=true` in its environment",
            s.home.display(),
            p = s.p()
        )]
    );
}

#[test]
fn doctor_resolves_a_gemini_cli_trust_rule_as_gemini_cli_does() {
    // Gemini CLI 0.61.0 (`isPathTrusted`) resolves each rule's folder (links, `.`, `..`)
    // before it compares, and the longest rule as written wins. Seen: with the folder
    // trusted and `<folder's parent>/./<folder>` marked `DO_NOT_TRUST`, `gemini -p` exited
    // 55 (untrusted: no hooks), and doctor said ok.
    let s = Sandbox::new();
    s.init("gemini-cli");
    s.trust("gemini-cli", "");
    s.assert_doctor_clean("gemini-cli");
    let dir = std::path::Path::new(s.p());
    let name = dir.file_name().unwrap().to_str().unwrap();
    let parent = dir.parent().unwrap().to_str().unwrap();
    let other = format!("{parent}/./{name}");
    let rules = serde_json::json!({ s.p(): "TRUST_FOLDER", other.clone(): "DO_NOT_TRUST" });
    let file = s.home.join(".gemini/trustedFolders.json");
    std::fs::write(&file, rules.to_string()).unwrap();
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [format!(
            "the rule `{other}` in `{}` (`DO_NOT_TRUST`, the longest rule that covers the folder once its links and dots are resolved, as Gemini CLI resolves them) makes Gemini CLI distrust the folder `{}`, so it registers no hooks there (and `gemini -p` exits 55; with `--skip-trust` it runs with no hooks, since that flag trusts the folder only after the settings are read): take that rule out, or start gemini with `GEMINI_CLI_TRUST_WORKSPACE=true` in its environment",
            file.display(),
            s.p()
        )]
    );
}

#[test]
fn doctor_reads_gemini_cli_trust_from_the_environment_first() {
    // Gemini CLI 0.61.0 asks its environment before the trusted folders (its
    // `checkPathTrust`). Seen: started with `GEMINI_CLI_TRUST_WORKSPACE=true` and no
    // trusted folder, its hook denied a call; doctor called that folder untrusted. And
    // `--skip-trust` sets that variable only after the settings are read: seen, the call
    // ran with no hook, so the finding says so.
    let s = Sandbox::new();
    s.init("gemini-cli");
    let doctor =
        |vars: &[(&str, &str)]| s.run_with(&["doctor", "gemini-cli", "--dir", s.p()], vars);
    let trusted = doctor(&[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    assert_clean(&trusted, &s.settings("gemini-cli"), "gemini-cli");
    // Only `true` itself: JavaScript compares the string.
    let found = findings(&doctor(&[("GEMINI_CLI_TRUST_WORKSPACE", "1")]));
    assert!(
        found[0].starts_with("Gemini CLI does not trust the folder"),
        "{found:?}"
    );
    // A trusted folder is not trusted under either of these.
    s.trust("gemini-cli", "");
    s.assert_doctor_clean("gemini-cli");
    for set in [
        "GEMINI_CLI_TRUST_WORKSPACE=false",
        "GEMINI_RESTRICTED_MODE=true",
    ] {
        let (key, value) = set.split_once('=').unwrap();
        assert_eq!(
            findings(&doctor(&[(key, value)])),
            [format!(
                "`{set}` is set in this environment, and Gemini CLI started with it trusts no folder, so it registers no hooks in `{}`: unset it before you start gemini",
                s.p()
            )]
        );
    }
}

#[test]
fn init_gemini_cli_says_skip_trust_does_not_trust_the_folder_for_hooks() {
    // Gemini CLI's own exit-55 message suggests `--skip-trust`; seen with 0.61.0, a
    // session started with it registers no workspace hook, and the call the gate denies
    // runs. init said only "trust that folder".
    let s = Sandbox::new();
    let out = s.init("gemini-cli");
    assert!(
        out.stdout.contains(&format!(
            "\nGemini CLI reads `.gemini/settings.json` only from the directory it starts in, and registers no hooks in a folder it does not trust: start `gemini` in `{}` and trust that folder (not with `--skip-trust`, which trusts it too late: gemini then runs with no hooks)\n",
            s.p()
        )),
        "{}",
        out.stdout
    );
}

#[test]
fn doctor_finds_the_codex_project_root_by_the_markers_the_user_config_gives() {
    // Codex 0.171.0 finds the project root by `project_root_markers` (`.git` by
    // default): with `project_root_markers = []` in the user config, started below the
    // repository's root, it read none of the root's `.codex` hooks, and the tool ran,
    // while doctor said ok.
    let s = Sandbox::new();
    s.wired("codex");
    std::fs::create_dir(s.project.join(".git")).unwrap();
    let sub = s.project.join("src");
    std::fs::create_dir(&sub).unwrap();
    let sub = sub.to_str().unwrap();
    assert_eq!(s.doctor_in("codex", sub).code, 0);
    let user = s.home.join(".codex/config.toml");
    let trusted = std::fs::read_to_string(&user).unwrap();
    std::fs::write(&user, format!("project_root_markers = []\n{trusted}")).unwrap();
    let out = s.doctor_in("codex", sub);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("is not read when Codex starts in"),
        "{}",
        out.stdout
    );
    // Another marker that the project holds makes it the root again.
    std::fs::write(
        &user,
        format!("project_root_markers = [\".hg\"]\n{trusted}"),
    )
    .unwrap();
    std::fs::create_dir(s.project.join(".hg")).unwrap();
    assert_eq!(s.doctor_in("codex", sub).code, 0);
}

#[test]
fn doctor_finds_a_harness_started_below_the_configured_directory() {
    // Observed: Claude Code 2.1.197 (with and without a git repository), Codex 0.171.0
    // (no `.git`) and Gemini CLI 0.61.0 started in a subdirectory load no hook of the
    // project's, and the tool runs.
    for (h, reads, folder) in [
        (
            "claude-code",
            "`.claude/settings.json` only from its start directory",
            ".claude",
        ),
        (
            "codex",
            "`.codex/hooks.json` and `.codex/config.toml` only from the project root (the nearest directory above with `.git`, or with a name `project_root_markers` gives instead, else the start directory) down to the start directory",
            ".codex",
        ),
        (
            "gemini-cli",
            "`.gemini/settings.json` only from its start directory",
            ".gemini",
        ),
    ] {
        let s = Sandbox::new();
        s.wired(h);
        let sub = s.project.join("src");
        std::fs::create_dir_all(&sub).unwrap();
        let found = findings(&s.doctor_in(h, sub.to_str().unwrap()));
        let name = match h {
            "claude-code" => "Claude Code",
            "codex" => "Codex",
            _ => "Gemini CLI",
        };
        assert_eq!(
            found[0],
            format!(
                "the hook in `{}` is not read when {name} starts in `{}`: it reads {reads}; start it where that file's `{folder}` is, or run `omission-gate init {h} --dir {}`",
                s.settings(h).display(),
                sub.display(),
                sub.display()
            )
        );
    }
    // Codex inside a git repository reads the root's `.codex` from a subdirectory too.
    let s = Sandbox::new();
    s.wired("codex");
    std::fs::create_dir_all(s.project.join(".git")).unwrap();
    let sub = s.project.join("src");
    std::fs::create_dir_all(&sub).unwrap();
    let out = s.doctor_in("codex", sub.to_str().unwrap());
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

#[test]
fn doctor_finds_gemini_cli_context_management_turned_on() {
    let s = Sandbox::new();
    s.wired("gemini-cli");
    assert_eq!(s.doctor("gemini-cli").code, 0);
    s.edit_settings("gemini-cli", |t| {
        t.replacen('{', r#"{"experimental": {"contextManagement": true},"#, 1)
    });
    let found = findings(&s.doctor("gemini-cli"));
    let problem = format!(
        "{}: settings: `experimental.contextManagement` is on: Gemini CLI then trims and summarises the history it sends the model without writing that to its session file, so the gate cannot tell what the model sees (turn it off to judge calls by the transcript, or use --kept)",
        s.settings("gemini-cli").display()
    );
    assert_eq!(found.first(), Some(&problem));
    // The hook, run as Gemini CLI runs it, denies every call for it.
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[1].ends_with(&format!("invalid-input: {problem}")),
        "{found:?}"
    );
}

#[test]
fn doctor_finds_a_gemini_cli_before_model_hook() {
    let s = Sandbox::new();
    s.wired("gemini-cli");
    s.edit_settings("gemini-cli", |t| {
        assert!(t.contains("\"hooks\": {"), "{t}");
        t.replacen(
            "\"hooks\": {",
            r#""hooks": {"BeforeModel": [{"hooks": [{"type": "command", "command": "redact"}]}],"#,
            1,
        )
    });
    let found = findings(&s.doctor("gemini-cli"));
    let problem = format!(
        "{}: settings: `hooks.BeforeModel` holds a hook: Gemini CLI sends the model the request such a hook returns (any message's text replaced) without writing that to its session file, so the gate cannot tell what the model sees (remove it to judge calls by the transcript, or use --kept)",
        s.settings("gemini-cli").display()
    );
    assert_eq!(found.first(), Some(&problem), "{found:?}");
}

#[test]
fn doctor_finds_a_gemini_cli_extension_s_before_model_hook() {
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let extension = s.home.join(".gemini/extensions/rewriter");
    std::fs::create_dir_all(extension.join("hooks")).unwrap();
    std::fs::write(
        extension.join("gemini-extension.json"),
        r#"{"name": "rewriter", "version": "1.0.0"}"#,
    )
    .unwrap();
    let hooks = extension.join("hooks/hooks.json");
    std::fs::write(
        &hooks,
        r#"{"hooks": {"BeforeModel": [{"hooks": [{"type": "command", "command": "redact"}]}]}}"#,
    )
    .unwrap();
    let found = findings(&s.doctor("gemini-cli"));
    let problem = format!(
        "{}: extension hooks: `hooks.BeforeModel` holds a hook: Gemini CLI runs an installed extension's hooks (one `extension-enablement.json` turns off too, when started with `gemini -e NAME`) and sends the model the request such a hook returns (any message's text replaced) without writing that to its session file, so the gate cannot tell what the model sees (uninstall the extension or remove the hook to judge calls by the transcript, or use --kept)",
        hooks.display()
    );
    assert_eq!(found.first(), Some(&problem), "{found:?}");
}

#[test]
fn doctor_finds_a_command_without_exit_2() {
    let s = Sandbox::new();
    s.wired("claude-code");
    s.edit_settings("claude-code", |t| t.replace(" || exit 2", ""));
    assert_eq!(
        findings(&s.doctor("claude-code")),
        [format!(
            "the hook in `{}` does not end in `|| exit 2`, so a binary that cannot be started lets the tool run: add it",
            s.settings("claude-code").display()
        )]
    );
}

#[test]
fn doctor_finds_a_hook_that_judges_against_a_kept_list_nothing_updates() {
    let s = Sandbox::new();
    s.wired("claude-code");
    s.edit_settings("claude-code", |t| t.replace(" --kept-from transcript", ""));
    assert_eq!(
        findings(&s.doctor("claude-code")),
        [format!(
            "the hook in `{}` judges calls against the store's `kept` ids, which Claude Code never updates, so a compaction that drops a rule goes unseen: add `--kept-from transcript` (run `omission-gate init claude-code --dir {}` again)",
            s.settings("claude-code").display(),
            s.project.display()
        )]
    );
}

#[test]
fn doctor_finds_a_hook_that_lets_a_malformed_call_run() {
    let s = Sandbox::new();
    s.wired("claude-code");
    // A command that swallows the gate's answer.
    s.edit_settings("claude-code", |t| t.replace(" || exit 2", " || exit 0"));
    let found = findings(&s.doctor("claude-code"));
    let ran = format!(
        "the hook in `{}` let a malformed call run (exit 0, `omission-gate denied this call: ERROR (invalid-input); report sha256 ",
        s.settings("claude-code").display()
    );
    assert!(
        found
            .iter()
            .any(|l| l.starts_with(&ran) && l.ends_with("`): Claude Code would run the tool")),
        "{found:?}"
    );
}

#[test]
fn init_and_doctor_say_to_give_dir_the_project_directory() {
    let s = Sandbox::new();
    let out = s.doctor_in("codex", "/no/such/dir");
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stdout,
        "omission-gate doctor: cannot tell whether codex gates: project directory `/no/such/dir`: no such file: give --dir the directory you start the harness in\n"
    );
    let out = s.run(&["init", "codex", "--dir", "/no/such/dir"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "omission-gate: init: project directory `/no/such/dir`: no such file: give --dir the directory you start the harness in\n"
    );
}

// ---------------------------------------------------------------------------------------
// The examples are what init writes.

/// Where the examples put the project and the binary.
const EXAMPLE_PROJECT: &str = "/path/to/project";

/// init's files, with this sandbox's project directory and binary path written as the
/// examples write them.
fn as_example(s: &Sandbox, text: &str) -> String {
    text.replace(&binary(), "omission-gate")
        .replace(s.p(), EXAMPLE_PROJECT)
}

fn example(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(path)
}

#[test]
fn the_example_configurations_are_what_init_writes() {
    let update = std::env::var_os("UPDATE_EXAMPLES").is_some();
    for (h, file) in [
        ("claude-code", "claude-code/settings.json"),
        ("codex", "codex/hooks.json"),
        ("gemini-cli", "gemini-cli/settings.json"),
    ] {
        let s = Sandbox::new();
        s.init(h);
        let written = as_example(&s, &std::fs::read_to_string(s.settings(h)).unwrap());
        if update {
            std::fs::write(example(file), &written).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(example(file)).unwrap(),
            written,
            "examples/{file} (UPDATE_EXAMPLES=1 rewrites it)"
        );
    }
    // The Codex trust lines, as init prints them for the example's paths.
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(example("codex/hooks.json")).unwrap())
            .unwrap();
    let group = &hooks["hooks"]["PreToolUse"][0];
    let hash = common::codex_trusted_hash(group["matcher"].as_str(), &group["hooks"][0]);
    let key = format!("{EXAMPLE_PROJECT}/.codex/hooks.json:pre_tool_use:0:0");
    let trust = format!(
        "# What `omission-gate init codex --dir {EXAMPLE_PROJECT}` asks you to add to\n# ~/.codex/config.toml (or $CODEX_HOME/config.toml) so that Codex runs the hook in\n# examples/codex/hooks.json: the project trusted, and the hook's hash. Codex skips an\n# untrusted hook, or one edited since, without a word.\n{}",
        common::codex_trust_lines(EXAMPLE_PROJECT, &key, &hash)
    );
    if update {
        std::fs::write(example("codex/config.toml"), &trust).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(example("codex/config.toml")).unwrap(),
        trust
    );
}

#[test]
fn the_docs_show_the_starter_store_init_writes() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hooks.md"))
        .unwrap();
    let s = Sandbox::new();
    s.init("claude-code");
    let store = std::fs::read_to_string(s.store()).unwrap();
    assert!(docs.contains(&store), "docs/hooks.md must show:\n{store}");
}

#[test]
fn doctor_finds_a_rule_over_every_tool_that_the_matcher_hides() {
    let s = Sandbox::new();
    s.wired("claude-code");
    std::fs::write(
        s.store(),
        r#"{"records": [
          {"id": "freeze", "seq": 1, "kind": "policy", "scope": "*", "predicate": {"field": "frozen", "op": "eq", "value": true}, "effect": "deny", "text": "Nothing runs during the freeze."},
          {"id": "thaw", "seq": 2, "kind": "fact", "field": "frozen", "value": false}
        ], "kept": ["freeze", "thaw"]}"#,
    )
    .unwrap();
    assert_eq!(
        findings(&s.doctor("claude-code")),
        [format!(
            "the matcher `Bash|Monitor|PowerShell|Edit|MultiEdit|Write|NotebookEdit|mcp__.*` of the hook in `{}` leaves tools out, and record `freeze` scopes to `*`, every tool, so the gate never sees the calls it leaves out: make the matcher `*`",
            s.settings("claude-code").display()
        )]
    );
    s.edit_settings("claude-code", |t| {
        t.replace(
            r#""matcher": "Bash|Monitor|PowerShell|Edit|MultiEdit|Write|NotebookEdit|mcp__.*""#,
            r#""matcher": "*""#,
        )
    });
    assert_clean(
        &s.doctor("claude-code"),
        &s.settings("claude-code"),
        "claude-code",
    );
}

#[test]
fn doctor_finds_our_deadline_not_below_the_harness_timeout() {
    let s = Sandbox::new();
    s.wired("claude-code");
    // Claude Code's timeout is 30 s as init writes it: a gate still waiting then is killed,
    // and the tool runs.
    for (own, shown) in [
        ("--timeout-ms 30000", "`--timeout-ms 30000`"),
        ("--timeout-ms 9x", "a `--timeout-ms` it cannot read"),
        // The binary reads a count as plain digits only: `+5000` is refused there.
        ("--timeout-ms +5000", "a `--timeout-ms` it cannot read"),
    ] {
        s.edit_settings("claude-code", |t| t.replace("--timeout-ms 10000", own));
        assert_finds(
            &s.doctor("claude-code"),
            &format!(
                "the hook in `{}` gives omission-gate {shown}, not below the harness's own timeout of 30000 ms, so a slow answer is killed first and Claude Code runs the tool: write `--timeout-ms 22500` or less",
                s.settings("claude-code").display()
            ),
        );
        s.edit_settings("claude-code", |t| t.replace(own, "--timeout-ms 10000"));
    }
    assert_clean(
        &s.doctor("claude-code"),
        &s.settings("claude-code"),
        "claude-code",
    );
}

#[test]
fn doctor_runs_the_hook_with_a_tool_the_matcher_selects() {
    let s = Sandbox::new();
    s.wired("claude-code");
    // Only MCP tools are gated: doctor calls one.
    s.edit_settings("claude-code", |t| {
        t.replace(
            "Bash|Monitor|PowerShell|Edit|MultiEdit|Write|NotebookEdit|mcp__.*",
            "mcp__.*",
        )
    });
    let store = r#"{"records": [{"id": "e", "seq": 1, "kind": "effect", "tool": "mcp__docs__publish", "match": {"page": "home"}}], "kept": []}"#;
    std::fs::write(s.store(), store).unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    // A matcher that selects no tool doctor knows: it cannot tell.
    std::fs::write(s.store(), store.replace("mcp__docs__publish", "Read")).unwrap();
    s.edit_settings("claude-code", |t| t.replace("\"mcp__.*\"", "\"Read\""));
    let out = s.doctor("claude-code");
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stdout,
        format!(
            "omission-gate doctor: cannot tell whether claude-code gates: the matcher `Read` of the hook in `{}` selects none of Bash, Write, Edit, mcp__doctor__check, so doctor has no call to run it with\n",
            s.settings("claude-code").display()
        )
    );
}

#[test]
fn doctor_reads_a_dollar_in_single_quotes_as_the_shell_does() {
    // A store path with a `$` in it: init quotes it, the shell never expands it, and
    // neither may doctor (it once read `$HOME` there as the variable).
    let s = Sandbox::new();
    let store = format!("{}/a$HOME/store.jsonl", s.p());
    let out = s.run(&["init", "claude-code", "--dir", s.p(), "--store", &store]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let settings = std::fs::read_to_string(s.settings("claude-code")).unwrap();
    assert!(
        settings.contains(&format!("--store '{store}'")),
        "{settings}"
    );
    let out = s.doctor("claude-code");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

#[test]
fn doctor_reads_the_store_written_as_store_equals_path() {
    // `--store=PATH` is the same flag to the gate: doctor once said it was missing.
    let s = Sandbox::new();
    let out = s.run(&["init", "claude-code", "--dir", s.p()]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let path = s.settings("claude-code");
    let settings = std::fs::read_to_string(&path).unwrap();
    let joined = settings.replacen("--store ", "--store=", 1);
    assert_ne!(joined, settings);
    std::fs::write(&path, joined).unwrap();
    let out = s.doctor("claude-code");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // And a missing store is still found missing, however the flag is written.
    let settings = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, settings.replacen("--store=", "--store=missing-", 1)).unwrap();
    let out = s.doctor("claude-code");
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// A hook's program that is there but has no execute bit was reported as not found, and
/// the fix given (run init again) wrote the same path: doctor says it is not executable
/// and how to make it so.
#[test]
fn doctor_finds_a_binary_that_is_not_executable() {
    use std::os::unix::fs::PermissionsExt;
    for h in HARNESSES {
        let s = Sandbox::new();
        s.wired(h);
        let copy = s.home.join("bin/omission-gate");
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(binary(), &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o644)).unwrap();
        let copy = copy.to_str().unwrap();
        s.run_program(h, copy);
        let out = s.doctor(h);
        assert_finds(
            &out,
            &format!(
                "`{copy}`, the program the hook in `{}` runs, is not executable, so the shell cannot start it: run `chmod +x {copy}`",
                s.settings(h).display(),
            ),
        );
        assert!(!out.stdout.contains("is not found"), "{}", out.stdout);
    }
}

/// A settings file that is not valid JSON, with no hook found elsewhere: doctor said to
/// run init, which refuses such a file. It says to fix the file (with where serde stopped),
/// then to run doctor again.
/// doctor's no-hook line says to fix `path` (said above) first, not to run init.
#[track_caller]
fn assert_says_fix_first(found: &[String], path: &Path) {
    assert!(
        found.iter().any(|l| l.starts_with("no `omission-gate hook")
            && l.ends_with(&format!(
                ": first fix `{}` as said above (the hook may be there, and init leaves such a file as it is), then run doctor again",
                path.display()
            ))),
        "{found:?}"
    );
}

#[test]
fn doctor_says_to_fix_a_settings_file_that_does_not_parse_not_to_run_init() {
    for h in HARNESSES {
        let s = Sandbox::new();
        let path = s.settings(h);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\n  \"hooks\": {,\n}\n").unwrap();
        let found = findings(&s.doctor(h));
        assert!(
            found.iter().any(|l| l.starts_with(&format!(
                "`{}` is not valid JSON (line 2 column 13: key must be a string)",
                path.display()
            ))),
            "{h}: {found:?}"
        );
        assert_says_fix_first(&found, &path);
        assert!(
            !found.iter().any(|l| l.contains("run `omission-gate init")),
            "{h}: {found:?}"
        );
        assert_eq!(s.run(&["init", h, "--dir", s.p()]).code, 2, "{h}");
    }
}

#[test]
fn doctor_says_claude_code_drops_hooks_that_are_not_of_the_shape_it_reads() {
    // Claude Code 2.1.197 drops a `hooks` that is not an object, and an event whose value
    // is not an array, and keeps the rest of the file: doctor said only that no hook was
    // found, and to run init, which refuses such a file.
    let cases = [
        (
            r#"{"hooks": "PreToolUse"}"#,
            "hooks",
            "an object of hook events",
            r#"{"PreToolUse": [...]}"#,
        ),
        (
            r#"{"hooks": {"PreToolUse": {"matcher": "*", "hooks": []}}}"#,
            "hooks.PreToolUse",
            "an array of hook groups",
            r#"[{"matcher": "...", "hooks": [...]}]"#,
        ),
    ];
    for (text, key, shape, example) in cases {
        let s = Sandbox::new();
        let path = s.settings("claude-code");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        let found = findings(&s.doctor("claude-code"));
        assert_eq!(
            found[0],
            format!(
                "`{}`: `{key}` is not {shape}, so Claude Code drops it, with every hook in it, and reads the rest of the file: make it {shape} such as `{example}` (or remove it), then run `omission-gate init claude-code --dir {}`",
                path.display(),
                s.p()
            ),
            "{text}"
        );
        assert_says_fix_first(&found, &path);
        assert_eq!(found.len(), 2, "{text}: {found:?}");
        // init refuses it, as said.
        assert_eq!(
            s.run(&["init", "claude-code", "--dir", s.p()]).code,
            2,
            "{text}"
        );
    }
}

/// `.claude` made a file, and a `--dir` under a file, gave the system's words ("not a
/// directory (os error 20)") and, in doctor, the fix for a permission problem. Each says
/// which file is in the way, and to move it.
#[test]
fn a_file_where_a_folder_should_be_is_named_with_the_fix() {
    let s = Sandbox::new();
    std::fs::write(s.project.join(".claude"), "").unwrap();
    let out = s.run(&["init", "claude-code", "--dir", s.p()]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        format!(
            "omission-gate: init: `{0}/.claude` is a file, not a folder, so `{0}/.claude/settings.json` cannot be read: move or rename that file\n",
            s.p()
        )
    );
    assert_finds(
        &s.doctor("claude-code"),
        &format!(
            "`{0}/.claude` is a file, not a folder, so `{0}/.claude/settings.json` cannot be read: Claude Code cannot read it either; move or rename that file",
            s.p()
        ),
    );
    let under = format!("{}/.claude/project", s.p());
    for command in ["init", "doctor"] {
        let out = s.run(&[command, "claude-code", "--dir", &under]);
        assert_eq!(out.code, 2, "{command}");
        // init says it on stderr, doctor ("cannot tell") on stdout.
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(
            said.contains(&format!(
                "project directory `{under}`: `{}/.claude` is a file, not a folder: give --dir the directory you start the harness in",
                s.p()
            )),
            "{command}: {said}"
        );
        assert_eq!(said.lines().count(), 1, "{said}");
    }
    let out = s.run(&["init", "claude-code", "--dir", "/does/not/exist"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "omission-gate: init: project directory `/does/not/exist`: no such file: give --dir the directory you start the harness in\n"
    );
    // A store folder that is a file: init says so, and writes nothing, the harness's
    // settings file (the hook) included: a hook whose store is missing denies every call.
    for h in HARNESSES {
        let t = Sandbox::new();
        std::fs::write(t.project.join(".omission-gate"), "").unwrap();
        let out = t.run(&["init", h, "--dir", t.p()]);
        assert_eq!(out.code, 2, "{h}");
        assert_eq!(
            out.stderr,
            format!(
                "omission-gate: init: cannot write `{0}/.omission-gate/store.json`: `{0}/.omission-gate` is a file, not a folder: move or rename that file, then run init again\n",
                t.p()
            ),
            "{h}"
        );
        assert_eq!(out.stdout, "", "{h}");
        let mut left: Vec<String> = std::fs::read_dir(&t.project)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [".omission-gate"],
            "{h}: a failed init wrote {left:?}"
        );
    }
}

#[test]
fn doctor_finds_a_store_name_no_hook_call_carries_whatever_the_matcher() {
    // A new user's store named Claude Code's shell tool `bash`, Codex's `exec_command`
    // (as its model calls it): no hook call carries those names, so the rule never binds.
    // doctor once said to add the name to the matcher, which changes nothing.
    for (h, named, sent) in [
        ("claude-code", "bash", "Bash"),
        ("codex", "exec_command", "Bash"),
        ("gemini-cli", "Run_Shell_Command", "run_shell_command"),
    ] {
        let s = Sandbox::new();
        s.wired(h);
        let store = std::fs::read_to_string(s.store()).unwrap().replace(
            &format!("\"tool\": \"{sent}\""),
            &format!("\"tool\": \"{named}\""),
        );
        std::fs::write(s.store(), store).unwrap();
        let title = match h {
            "claude-code" => "Claude Code",
            "codex" => "Codex",
            _ => "Gemini CLI",
        };
        let line = format!(
            "record `done-invoice-7741` names `{named}`, a name no call {title} sends its hooks carries: it sends that tool's calls as `{sent}`, and the hook denies each of them until the store names `{sent}` (adding `{named}` to the matcher does not help): write `{sent}` wherever the store names `{named}`"
        );
        let out = s.doctor(h);
        assert_finds(&out, &line);
        assert!(!out.stdout.contains("to the matcher:"), "{}", out.stdout);
        // Also once the name is in the matcher (Claude Code needs no new trust).
        if h == "claude-code" {
            s.edit_settings(h, |t| t.replace("\"Bash|", "\"Bash|bash|"));
            assert_finds(&s.doctor(h), &line);
        }
        // init warns of it in a store it keeps.
        let out = s.init(h);
        assert!(
            out.stdout.contains(&format!(
                "warning: record `done-invoice-7741` names `{named}`, a name no call {title} sends its hooks carries (it sends that tool's calls as `{sent}`), so the hook denies each of them until the store names `{sent}`: add a copy of it (another id) whose `tool` is `{sent}` in `{}`",
                s.store().display()
            )),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn doctor_finds_a_glob_that_covers_a_built_in_only_as_no_hook_call_names_it() {
    // `bas*` covers Claude Code's `Bash` only in another case, Codex's `exec_*` only the
    // name its model calls the shell tool by: the rule binds no call, and the hook
    // denies each call of the tool. doctor and init said nothing of the glob (doctor
    // said to add it to the matcher).
    for (h, title, glob, sent, covers) in [
        (
            "claude-code",
            "Claude Code",
            "bas*",
            "Bash",
            "covers `Bash` only in another case",
        ),
        (
            "codex",
            "Codex",
            "exec_*",
            "Bash",
            "covers `exec_command`, the model's name for it",
        ),
        (
            "gemini-cli",
            "Gemini CLI",
            "RUN_SHELL*",
            "run_shell_command",
            "covers `run_shell_command` only in another case",
        ),
    ] {
        let s = Sandbox::new();
        s.wired(h);
        let store = format!(
            r#"{{"records": [{{"id": "g", "seq": 1, "kind": "policy", "scope": ["{glob}"], "predicate": {{"all": []}}, "effect": "deny"}}], "kept": []}}"#
        );
        std::fs::write(s.store(), store).unwrap();
        let out = s.doctor(h);
        assert_finds(
            &out,
            &format!(
                "record `g` scopes to `{glob}`, which {covers}: {title} sends that tool's calls to its hooks as `{sent}`, and the hook denies each of them until the store names `{sent}` too (adding `{glob}` to the matcher does not help): name `{sent}` wherever the store names `{glob}` (beside it in a policy's scope, or in an effect record with the same `match`)"
            ),
        );
        assert!(!out.stderr.contains("misses"), "{h}: {}", out.stderr);
        let out = s.init(h);
        assert!(
            out.stdout.contains(&format!(
                "warning: record `g` names `{glob}`, which {covers} ({title} sends that tool's calls as `{sent}`), so the hook denies each of them until the store names `{sent}`: add `{sent}` to its `scope` in `{}`",
                s.store().display()
            )),
            "{h}: {}",
            out.stdout
        );
    }
}

#[test]
fn doctor_finds_another_harness_s_built_in_named_in_another_case() {
    // `bash` in a store wired into Gemini CLI: no tool there has that name, in any case,
    // and the hook passed each `run_shell_command` call; doctor said nothing of it.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    for (scope, line) in [
        (
            "bash",
            "record `g` scopes to `bash`, a name Gemini CLI never gives a tool: write `run_shell_command`, or name both if another harness shares this store",
        ),
        (
            "BAS*",
            "record `g` scopes to `BAS*`, which covers `Bash` only in another case, how Claude Code and Codex name the shell tool; Gemini CLI calls it `run_shell_command`, and the hook denies each of its calls until the store names `run_shell_command` too (adding `BAS*` to the matcher does not help): name `run_shell_command` wherever the store names `BAS*` (beside it in a policy's scope, or in an effect record with the same `match`)",
        ),
    ] {
        let store = format!(
            r#"{{"records": [{{"id": "g", "seq": 1, "kind": "policy", "scope": ["{scope}"], "predicate": {{"all": []}}, "effect": "deny"}}], "kept": []}}"#
        );
        std::fs::write(s.store(), store).unwrap();
        assert_finds(&s.doctor("gemini-cli"), line);
    }
}

#[test]
fn doctor_finds_a_store_name_written_as_a_matcher_or_shell_pattern() {
    // `Bash|Edit` (a matcher's syntax, as init writes matchers) or `Bas?` (a shell glob):
    // the store reads each as a name no tool has, and the hook passed each call they
    // were meant for; doctor said to add the name to the matcher.
    let s = Sandbox::new();
    s.wired("claude-code");
    // Each alternative is searched in the name, as a harness searches a matcher's regex,
    // but the fix is each alternative read against the whole name, and each built-in
    // covered only as searched (`MultiEdit`): the searched globs (`*Ba*` for `Bas?`)
    // would bind every tool whose name holds them.
    for (scope, globs) in [
        ("Bash|Edit", "`Bash`, `Edit`, `MultiEdit`, `NotebookEdit`"),
        // Read as a shell glob (`Bas*`) and as a regex (`Bas?` is `Ba` too).
        ("Bas?", "`Bas*`, `Ba`"),
        ("mcp__billing__.*", "`mcp__billing__*`"),
        ("^(Bash|Edit)$", "`Bash`, `Edit`"),
    ] {
        let store = format!(
            r#"{{"records": [{{"id": "p", "seq": 1, "kind": "policy", "scope": ["{scope}"], "predicate": {{"all": []}}, "effect": "deny"}}], "kept": []}}"#
        );
        std::fs::write(s.store(), store).unwrap();
        let out = s.doctor("claude-code");
        assert_finds(
            &out,
            &format!(
                "record `p` scopes to `{scope}`, and no tool is called that: the store's names are tool names or globs whose only wildcard is `*` (`|`, `?`, `[...]` and `.*` are read as written), so the hook denies each call it reads as covering until the store names the tool (adding `{scope}` to the matcher does not help): write one name or `*` glob per entry, such as {globs}"
            ),
        );
        assert!(!out.stderr.contains("misses"), "{scope}: {}", out.stderr);
        let out = s.init("claude-code");
        assert!(
            out.stdout.contains(&format!(
                "warning: record `p` names `{scope}`, and no tool is called that: the store's names are tool names or globs whose only wildcard is `*`, so the hook denies each call it reads as covering until the store names the tool: write one name or `*` glob per entry in `{}`, such as {globs}",
                s.store().display()
            )),
            "{scope}: {}",
            out.stdout
        );
    }
    // Each tool it reads as covering named beside it: the hook judges by those names.
    let store = r#"{"records": [{"id": "p", "seq": 1, "kind": "policy", "scope": ["^(Bash|Edit)$", "Bash", "Edit"], "predicate": {"all": []}, "effect": "deny"}], "kept": []}"#;
    std::fs::write(s.store(), store).unwrap();
    let out = s.doctor("claude-code");
    assert!(!out.stdout.contains("`^(Bash|Edit)$`"), "{}", out.stdout);
    // Searched in the name, `Bash|Edit` covers `MultiEdit` and `NotebookEdit` too, which
    // the hook denies while the store does not name them (read as the whole name, doctor
    // said nothing of it, and the hook passed their calls).
    let store = r#"{"records": [{"id": "p", "seq": 1, "kind": "policy", "scope": ["Bash|Edit", "Bash", "Edit"], "predicate": {"all": []}, "effect": "deny"}], "kept": []}"#;
    std::fs::write(s.store(), store).unwrap();
    let out = s.doctor("claude-code");
    assert_finds(
        &out,
        "record `p` scopes to `Bash|Edit`, and no tool is called that: the store's names are tool names or globs whose only wildcard is `*` (`|`, `?`, `[...]` and `.*` are read as written), so the hook denies each call it reads as covering until the store names the tool (adding `Bash|Edit` to the matcher does not help): write one name or `*` glob per entry, such as `Bash`, `Edit`, `MultiEdit`, `NotebookEdit`",
    );
}

#[test]
fn doctor_finds_a_record_naming_a_tool_otherwise_though_another_names_it() {
    // The store names `Bash` in a kept `allow`, and `bash` alone in a `deny`: the deny
    // never binds a `Bash` call (the hook now denies each), which doctor and init said
    // nothing of, since the store named `Bash` somewhere. Likewise `Edit` without
    // `MultiEdit` in one record beside a record naming `MultiEdit`.
    let s = Sandbox::new();
    s.wired("claude-code");
    let store = r#"{"records": [
      {"id": "a", "seq": 1, "kind": "policy", "scope": ["Bash", "MultiEdit"], "predicate": {"all": []}, "effect": "allow"},
      {"id": "b", "seq": 2, "kind": "policy", "scope": ["bash", "Edit"], "predicate": {"all": []}, "effect": "deny"}
    ], "kept": ["a"]}"#;
    std::fs::write(s.store(), store).unwrap();
    let out = s.doctor("claude-code");
    assert_finds(
        &out,
        "record `b` names `bash`, a name no call Claude Code sends its hooks carries: it sends that tool's calls as `Bash`, and the hook denies each of them until the store names `Bash` (adding `bash` to the matcher does not help): write `Bash` wherever the store names `bash`",
    );
    assert!(
        out.stderr.contains(
            "note: record `b` names `Edit` and not `MultiEdit`, which does the same in Claude Code"
        ),
        "{}",
        out.stderr
    );
    let out = s.init("claude-code");
    assert!(
        out.stdout
            .contains("warning: record `b` names `Edit` and not `MultiEdit`"),
        "{}",
        out.stdout
    );
    // Each record naming both: nothing to say of either.
    let store = store.replace(
        r#"["bash", "Edit"]"#,
        r#"["bash", "Bash", "Edit", "MultiEdit"]"#,
    );
    std::fs::write(s.store(), store).unwrap();
    let out = s.doctor("claude-code");
    assert!(!out.stderr.contains("`bash`"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("and not `MultiEdit`"),
        "{}",
        out.stderr
    );
    // An effect names one tool: only an effect of `Bash` with the same `match` (a ledger
    // shared by harnesses writes a call both ways) replays the calls an effect of
    // `run_shell_command` stands for, not one of another `match`.
    let effect = |id: &str, seq: u64, tool: &str, command: &str| {
        format!(
            r#"{{"id": "{id}", "seq": {seq}, "kind": "effect", "tool": "{tool}", "match": {{"command": "{command}"}}}}"#
        )
    };
    let ledger =
        |records: &[String]| format!(r#"{{"records": [{}], "kept": []}}"#, records.join(","));
    let store = ledger(&[
        effect("a", 1, "Bash", "ls"),
        effect("b", 2, "run_shell_command", "deploy"),
    ]);
    std::fs::write(s.store(), store).unwrap();
    assert_finds(
        &s.doctor("claude-code"),
        "record `b` scopes to `run_shell_command`, a name Claude Code never gives a tool: write `Bash`, or name both if another harness shares this store",
    );
    let store = ledger(&[
        effect("a", 1, "Bash", "deploy"),
        effect("b", 2, "run_shell_command", "deploy"),
    ]);
    std::fs::write(s.store(), store).unwrap();
    let out = s.doctor("claude-code");
    assert!(
        !out.stdout.contains("`run_shell_command`"),
        "{}",
        out.stdout
    );
}

#[test]
fn doctor_and_init_report_a_glob_of_another_harness_s_built_in_name() {
    // A dropped deny scoped to `Writ*` covers Claude Code's `Write`, not Gemini CLI's
    // `write_file` nor Codex's `apply_patch`: the hook denies those calls with the fix,
    // and doctor said only that the matcher missed `Writ*` (adding it does not help),
    // init nothing. `*_file` covers Gemini CLI's `write_file`, not Claude Code's `Write`.
    let cases = [
        (
            "gemini-cli",
            "Writ*",
            "Write",
            "how Claude Code names the file-writing tool",
            "Gemini CLI",
            "write_file",
        ),
        (
            "codex",
            "Writ*",
            "Write",
            "how Claude Code names the file-writing tool",
            "Codex",
            "apply_patch",
        ),
        (
            "claude-code",
            "*_file",
            "write_file",
            "how Gemini CLI names the file-writing tool",
            "Claude Code",
            "Write",
        ),
    ];
    for (h, glob, covered, how, title, instead) in cases {
        let s = Sandbox::new();
        s.wired(h);
        let store = |scope: &str| {
            format!(
                r#"{{"records": [
                  {{"id": "a", "seq": 1, "kind": "policy", "scope": [{scope}], "predicate": {{"all": []}}, "effect": "deny"}},
                  {{"id": "k", "seq": 2, "kind": "policy", "scope": ["{instead}"], "predicate": {{"all": []}}, "effect": "allow"}}
                ], "kept": ["k"]}}"#
            )
        };
        std::fs::write(s.store(), store(&format!(r#""{glob}""#))).unwrap();
        let out = s.doctor(h);
        assert_finds(
            &out,
            &format!(
                "record `a` scopes to `{glob}`, which covers `{covered}`, {how}; {title} calls it `{instead}`, and the hook denies each of its calls until the store names `{instead}` too (adding `{glob}` to the matcher does not help): name `{instead}` wherever the store names `{glob}` (beside it in a policy's scope, or in an effect record with the same `match`)"
            ),
        );
        assert!(!out.stdout.contains("misses"), "{h}: {}", out.stdout);
        let out = s.init(h);
        let warning = format!(
            "warning: record `a` names `{glob}`, which covers `{covered}`, {how}; {title} calls it `{instead}`, so the hook denies each of its calls until the store names `{instead}` too: add `{instead}` to its `scope` in `{}`",
            s.store().display()
        );
        assert!(
            out.stdout.lines().any(|l| l == warning),
            "{h}: {}",
            out.stdout
        );
        // The record names this harness's name beside the glob: nothing to say.
        std::fs::write(s.store(), store(&format!(r#""{glob}", "{instead}""#))).unwrap();
        let out = s.doctor(h);
        assert!(!out.stdout.contains(glob), "{h}: {}", out.stdout);
        assert!(!s.init(h).stdout.contains(glob), "{h}");
    }
}

/// A hook's guarded tools that name a built-in and not another of the harness's that does
/// the same (Claude Code's `Edit` and not `MultiEdit`, by name, by a glob, or as another
/// harness names it): the hook denies each call of the other, and doctor said nothing.
#[test]
fn doctor_and_init_report_a_guarded_built_in_without_its_kin() {
    let cases = [
        ("claude-code", "Edit", "MultiEdit", "Edit"),
        ("claude-code", "Edi*", "MultiEdit", "Edit"),
        ("claude-code", "Write,Bash,MultiEdit", "Monitor", "Bash"),
        ("claude-code", "replace", "MultiEdit", "Edit"),
        (
            "gemini-cli",
            "grep_search",
            "search_file_content",
            "grep_search",
        ),
    ];
    for (h, tools, kin, covered) in cases {
        let s = Sandbox::new();
        s.wired(h);
        s.edit_settings(h, |t| {
            t.replacen(
                "--kept-from transcript",
                &format!("--kept-from transcript --tools {tools}"),
                1,
            )
        });
        let title = match h {
            "gemini-cli" => "Gemini CLI",
            _ => "Claude Code",
        };
        let name = tools
            .rsplit(',')
            .find(|t| *t != "Write" && *t != "MultiEdit");
        let name = name.unwrap();
        assert_finds(
            &s.doctor(h),
            &format!(
                "the hook in `{}` guards `{name}` and not `{kin}`, which does what `{covered}` does in {title}, and the hook denies each call of `{kin}` until the list names it: add `{kin}` to its `--tools`",
                s.settings(h).display()
            ),
        );
    }
    // The store's `tools`, when the hook has no `--tools`: init warns, doctor reports.
    let s = Sandbox::new();
    s.wired("claude-code");
    let store = std::fs::read_to_string(s.store()).unwrap();
    s.write_store_listing(&store, r#"["Edit"]"#);
    assert_finds(
        &s.doctor("claude-code"),
        &format!(
            "the store `{}` lists `Edit` and not `MultiEdit`, which does what `Edit` does in Claude Code, and the hook denies each call of `MultiEdit` until the list names it: add `MultiEdit` to the store's `tools`",
            s.store().display()
        ),
    );
    let warning = format!(
        "warning: the store's `tools` lists `Edit`, and not `MultiEdit`, which does what `Edit` does in Claude Code, so the hook denies each call of `MultiEdit`: add `MultiEdit` to its `tools` in `{}`",
        s.store().display()
    );
    let out = s.init("claude-code");
    assert!(out.stdout.lines().any(|l| l == warning), "{}", out.stdout);
}

#[test]
fn doctor_and_init_report_a_guarded_tool_named_as_another_harness_names_it() {
    // A Claude Code hook whose `--tools` (or store `tools`) lists only Gemini CLI's
    // `run_shell_command` (or a glob of it) denies every `Bash` call, as one listing `edit`
    // denies every `Edit` call. doctor checked the store's scopes for such names, not the
    // guarded tools, and init warned of the scopes only.
    let s = Sandbox::new();
    s.wired("claude-code");
    s.edit_settings("claude-code", |t| {
        t.replace(
            "--kept-from transcript --timeout-ms",
            "--kept-from transcript --tools run_shell_command,edit,run_shell* --timeout-ms",
        )
    });
    let at = format!("the hook in `{}`", s.settings("claude-code").display());
    let out = s.doctor("claude-code");
    for line in [
        format!(
            "{at} guards `run_shell_command`, a name Claude Code never gives a tool, and the hook denies each call of `Bash` until the list names it: add `Bash` to its `--tools` (keep `run_shell_command` if another harness shares the list)"
        ),
        format!(
            "{at} guards `edit`, a name no call Claude Code sends its hooks carries: it sends that tool's calls as `Edit`, and the hook denies each of them until the list names it: write `Edit` in its `--tools`"
        ),
        format!(
            "{at} guards `run_shell*`, which covers `run_shell_command`, how Gemini CLI names the shell tool; Claude Code calls it `Bash`, and the hook denies each call of `Bash` until the list names it: add `Bash` to its `--tools` (keep `run_shell*` if another harness shares the list)"
        ),
    ] {
        assert_finds(&out, &line);
    }
    // Listed as Claude Code names them too (and their kin): nothing to say of the list.
    let all = "run_shell_command,edit,Bash,Edit,MultiEdit,Monitor,PowerShell";
    s.edit_settings("claude-code", |t| {
        t.replace("run_shell_command,edit,run_shell*", all)
    });
    let out = s.doctor("claude-code");
    assert!(!out.stdout.contains("guards"), "{}", out.stdout);
    // The store's `tools`, when the hook has no `--tools`.
    s.edit_settings("claude-code", |t| t.replace(&format!(" --tools {all}"), ""));
    let store = std::fs::read_to_string(s.store()).unwrap();
    s.write_store_listing(&store, r#"["run_shell_command"]"#);
    assert_finds(
        &s.doctor("claude-code"),
        &format!(
            "the store `{}` lists `run_shell_command`, a name Claude Code never gives a tool, and the hook denies each call of `Bash` until the list names it: add `Bash` to the store's `tools` (keep `run_shell_command` if another harness shares the list)",
            s.store().display()
        ),
    );
    // init keeps the store, and warns of it.
    let warning = format!(
        "warning: the store's `tools` lists `run_shell_command`, a name Claude Code never gives a tool, so the hook denies each call of `Bash`: add `Bash` to its `tools` in `{}`",
        s.store().display()
    );
    let out = s.init("claude-code");
    assert!(out.stdout.lines().any(|l| l == warning), "{}", out.stdout);
    // A pattern of another syntax: a name no tool has, so the hook denies each call it
    // reads as covering (doctor and init said nothing of it). Each alternative is
    // searched in the name, as a harness searches a matcher's regex: `Edit` listed
    // beside it leaves `MultiEdit` and `NotebookEdit` out, whose calls the hook denies.
    s.write_store_listing(&store, r#"["(Bash|Edit)", "Edit"]"#);
    let out = s.doctor("claude-code");
    for glob in ["*Bash*", "*Edit*"] {
        assert_finds(
            &out,
            &format!(
                "the store `{}` lists `(Bash|Edit)`, a name no tool has (`|`, `?`, `[...]` and `.*` are read as written, not as a pattern), and the hook denies each call of `{glob}` until the list names it: add `{glob}` to the store's `tools`",
                s.store().display()
            ),
        );
    }
    let warning = format!(
        "warning: the store's `tools` lists `(Bash|Edit)`, a name no tool has (`|`, `?`, `[...]` and `.*` are read as written, not as a pattern), so the hook denies each call of `*Bash*`: add `*Bash*` to its `tools` in `{}`",
        s.store().display()
    );
    let out = s.init("claude-code");
    assert!(out.stdout.lines().any(|l| l == warning), "{}", out.stdout);
    assert!(!out.stdout.contains("call of `Edit`"), "{}", out.stdout);
    // Anchored, it is the names themselves: listed beside it, nothing to say of it.
    s.write_store_listing(&store, r#"["^(Bash|Edit)$", "Bash", "Edit"]"#);
    let out = s.doctor("claude-code");
    assert!(!out.stdout.contains("`^(Bash|Edit)$`"), "{}", out.stdout);
    // Gemini CLI: `Bash` is Claude Code's name of its `run_shell_command`.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    s.edit_settings("gemini-cli", |t| {
        t.replace(
            "--kept-from transcript",
            "--kept-from transcript --tools Bash",
        )
    });
    assert_finds(
        &s.doctor("gemini-cli"),
        &format!(
            "the hook in `{}` guards `Bash`, a name Gemini CLI never gives a tool, and the hook denies each call of `run_shell_command` until the list names it: add `run_shell_command` to its `--tools` (keep `Bash` if another harness shares the list)",
            s.settings("gemini-cli").display()
        ),
    );
}

/// `--tools tools`, a file of the project meant without its `@`: the hook reads the word
/// as a tool's name wherever it runs (it cannot tell a file meant from a tool of that
/// name, and a harness's tools change from version to version), so it guards that tool
/// alone and a call of any tool no record names runs unjudged. doctor, which knows the
/// project's directory, reported nothing.
#[test]
fn doctor_finds_a_tools_value_that_names_a_file_of_the_project() {
    for h in ["claude-code", "gemini-cli"] {
        let s = Sandbox::new();
        s.wired(h);
        let first = match h {
            "gemini-cli" => "run_shell_command",
            _ => "Bash",
        };
        s.edit_settings(h, |t| {
            t.replacen(
                "--kept-from transcript",
                &format!("--kept-from transcript --tools {first},tools"),
                1,
            )
        });
        std::fs::write(s.project.join("tools"), "Bash\n").unwrap();
        std::fs::write(s.project.join(first), "").unwrap();
        assert_finds(
            &s.doctor(h),
            &format!(
                "the hook in `{}` guards `--tools {first},tools`, and `tools` is a file in `{}`: --tools reads a file only as `@FILE`, so the hook guards a tool named `tools` and lets every call of a tool no record names run unjudged: write --tools @tools for the file (or rename the file, if `tools` is a tool's name)",
                s.settings(h).display(),
                s.p()
            ),
        );
        // A built-in's name is the tool's, whatever file is there.
        let out = s.doctor(h);
        assert!(
            !out.stdout.contains(&format!("`{first}` is a file")),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn init_warns_of_a_store_name_on_one_clean_line() {
    // A record id holding a newline or a terminal escape (a tool name, a bidi override):
    // init's warnings about the store it keeps name it cleaned, as doctor does, one line
    // each.
    let s = Sandbox::new();
    std::fs::create_dir_all(s.store().parent().unwrap()).unwrap();
    let store = r#"{"records": [
      {"id": "a\u001b[31mb\nc", "seq": 1, "kind": "policy", "scope": ["bash", "Edit", "mcp__s__t\u202e"], "predicate": {"all": []}, "effect": "deny"}
    ], "kept": []}"#;
    std::fs::write(s.store(), store).unwrap();
    let out = s.init("claude-code");
    let warnings: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(warnings.len(), 3, "{}", out.stdout);
    for w in warnings {
        assert!(
            w.starts_with("warning: record `a\\u{001b}[31mb\\u{000a}c` names `"),
            "{w}"
        );
    }
    assert!(
        !out.stdout.contains(['\u{1b}', '\u{202e}']),
        "{}",
        out.stdout
    );
}

#[test]
fn doctor_finds_a_relative_path_in_a_claude_code_hook_command() {
    // Claude Code runs the hook in the session's current directory, which moves with the
    // agent's `cd` (seen with 2.1.197: after `cd sub`, a store at `sub/<same path>` was
    // the one read, and the call ran; the hook now denies there). doctor runs the hook in
    // the project, where the relative path names the right file, and once said it gated.
    let s = Sandbox::new();
    s.wired("claude-code");
    s.edit_settings("claude-code", |t| {
        t.replacen(
            r#"--store \"$CLAUDE_PROJECT_DIR\"/.omission-gate/store.json --kept-from transcript"#,
            "--store .omission-gate/store.json --kept-from transcript --context-file CLAUDE.md --tools @tools.txt",
            1,
        )
    });
    std::fs::write(s.project.join("CLAUDE.md"), "# rules\n").unwrap();
    std::fs::write(s.project.join("tools.txt"), "*\n").unwrap();
    let at = format!("the hook in `{}`", s.settings("claude-code").display());
    assert_eq!(
        findings(&s.doctor("claude-code")),
        [
            format!(
                "{at} reads --store `.omission-gate/store.json`, a relative path, and Claude Code runs the hook in the session's current directory, which moves with the agent's `cd`: there the path names another file, and the hook denies every call: write it as `\"$CLAUDE_PROJECT_DIR\"/.omission-gate/store.json` (`omission-gate init claude-code --dir {}` writes the store so)",
                s.p()
            ),
            // Written without its `@`, the path would be read as a tool's name.
            format!(
                "{at} reads --tools `@tools.txt`, a relative path, and Claude Code runs the hook in the session's current directory, which moves with the agent's `cd`: there the path names another file, and the hook denies every call: write it as `@\"$CLAUDE_PROJECT_DIR\"/tools.txt`"
            ),
            format!(
                "{at} reads --context-file `CLAUDE.md`, a relative path, and Claude Code runs the hook in the session's current directory, which moves with the agent's `cd`: there the path names another file, and the hook denies every call: write it as `\"$CLAUDE_PROJECT_DIR\"/CLAUDE.md`"
            ),
        ]
    );
    // Codex and Gemini CLI run the hook in the start directory for the whole session: a
    // relative path is read there, from the project, as doctor reads it.
    for h in ["codex", "gemini-cli"] {
        let s = Sandbox::new();
        s.wired(h);
        s.edit_settings(h, |t| {
            t.replacen(&format!("{}/.omission-gate", s.p()), ".omission-gate", 1)
                .replacen("$GEMINI_PROJECT_DIR/.omission-gate", ".omission-gate", 1)
        });
        assert!(
            std::fs::read_to_string(s.settings(h))
                .unwrap()
                .contains("--store .omission-gate/store.json"),
            "{h}"
        );
        if h == "codex" {
            s.trust_codex_as_is();
        }
        let out = s.doctor(h);
        assert_clean(&out, &s.settings(h), h);
        // Codex reads the project's `.codex` when started below it too, and runs the hook
        // there: noted.
        if h == "codex" {
            assert!(
                out.stderr.contains(&format!(
                    "omission-gate doctor: note: the hook in `{}` reads --store `.omission-gate/store.json`, a relative path, and Codex runs the hook in the directory it starts in, and reads this file when it starts in `{}` or any directory below it: started below, the hook reads whatever is at that path there; write it as `{}` (init writes the store's absolute path)\n",
                    s.settings(h).display(),
                    s.p(),
                    s.store().display()
                )),
                "{}",
                out.stderr
            );
        }
    }
}

#[test]
fn doctor_reads_a_hook_store_from_the_home_folder_as_the_shell_does() {
    // `--store ~/og/store.json`: the shell the harness runs the hook in puts $HOME in the
    // `~`'s place. doctor once read `~` as a folder of the project, checked another file
    // than the hook reads and said the store was not there.
    for h in ["claude-code", "gemini-cli"] {
        let s = Sandbox::new();
        s.wired(h);
        let home_store = s.home.join("og/store.json");
        std::fs::create_dir_all(home_store.parent().unwrap()).unwrap();
        std::fs::rename(s.store(), &home_store).unwrap();
        s.edit_settings(h, |t| {
            t.replacen(
                r#"--store \"$CLAUDE_PROJECT_DIR\"/.omission-gate/store.json"#,
                "--store ~/og/store.json",
                1,
            )
            .replacen(
                "--store $GEMINI_PROJECT_DIR/.omission-gate/store.json",
                "--store ~/og/store.json",
                1,
            )
        });
        assert!(
            std::fs::read_to_string(s.settings(h))
                .unwrap()
                .contains("--store ~/og/store.json"),
            "{h}"
        );
        assert_clean_with(&s.doctor(h), &s.settings(h), &home_store, h);
        // A user's home folder (`~name`) doctor does not look up: it says it cannot tell.
        s.edit_settings(h, |t| t.replacen("~/og", "~nobody/og", 1));
        let at = format!("the hook in `{}`", s.settings(h).display());
        assert_finds(
            &s.doctor(h),
            &format!(
                "{at} reads --store `~nobody/og/store.json`, which starts with a `~` that doctor does not resolve as the shell would (`~name` is that user's home folder, a quoted `~` a folder named `~`, and `~` with HOME unset depends on the shell), so it cannot tell which file the hook reads: write the path in full"
            ),
        );
    }
}

#[test]
fn init_claude_code_says_its_precompact_hook_keeps_rules_in_view() {
    // init wrote a PreCompact hook and said only that the gate runs before each call; a
    // user who stated a rule, ran `/compact` and then saw the bound call run took the gate
    // for broken, though the hook's list stays in the session and keeps the rule in view.
    let line = "and before each compaction the PreCompact hook gives Claude Code's summarizer the records that can bind a later call; after a `/compact` that list also stays in the session, so those rules stay in view and the calls they bind run (to see a rule block, judge a call with `check --kept '[]'`; docs/hooks.md, PreCompact)\n";
    let s = Sandbox::new();
    let out = s.init("claude-code");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let first = out.stdout.lines().next().unwrap_or_default();
    assert!(
        out.stdout.contains(&format!("{first}\n{line}")),
        "{}",
        out.stdout
    );
    // Nothing written, nothing to say; the other harnesses have no such hook.
    let again = s.init("claude-code");
    assert!(!again.stdout.contains("PreCompact"), "{}", again.stdout);
    for h in ["codex", "gemini-cli"] {
        let s = Sandbox::new();
        let out = s.init(h);
        assert!(!out.stdout.contains("PreCompact"), "{h}: {}", out.stdout);
    }
}

#[test]
fn init_says_it_wrote_a_starter_store_and_doctor_names_the_store_it_checked() {
    // A typo in --store: init writes a starter store there, and says so plainly; doctor
    // names the store the hook reads.
    let s = Sandbox::new();
    let typo = s.project.join("rules/stroe.json");
    let out = s.run(&[
        "init",
        "claude-code",
        "--dir",
        s.p(),
        "--store",
        "rules/stroe.json",
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&format!(
            "\nno store at `{}`, so wrote a starter store there: example records, not rules of yours; replace them with your own (docs/hooks.md), or, to use a store you already have, run init again with its path as --store; the hook takes the kept set from the session transcript, so no `kept` list needs updating\n",
            typo.display()
        )),
        "{}",
        out.stdout
    );
    assert_clean_with(
        &s.doctor("claude-code"),
        &s.settings("claude-code"),
        &typo,
        "claude-code",
    );
}

#[test]
fn doctor_reads_a_hook_timeout_with_a_fraction_as_the_harness_does() {
    // Claude Code takes a timeout of a fraction of a second (its schema: a positive
    // number; it kills the hook after `timeout * 1000` ms and runs the tool), and Gemini
    // CLI any number of milliseconds. doctor read only whole numbers, took `0.5` for no
    // timeout at all (60 s), and said nothing of a gate given 10 s.
    let claude_code = "gives omission-gate `--timeout-ms 10000`, not below the harness's own timeout of 500 ms, so a slow answer is killed first and Claude Code runs the tool: write `--timeout-ms 375` or less";
    // Node's timer waits 1 ms for anything below 1.
    let gemini_cli = "has `\"timeout\": 0.5`, less than 1, and Gemini CLI reads a hook's `timeout` in milliseconds (Claude Code and Codex read seconds) and hands it to Node's `setTimeout`, which waits 1 ms for anything less than 1, so it kills the hook after 1 ms, before the gate answers, and runs the tool: write `\"timeout\": 30000`";
    for (h, written, line) in [
        ("claude-code", "\"timeout\": 30", claude_code),
        ("gemini-cli", "\"timeout\": 30000", gemini_cli),
    ] {
        let s = Sandbox::new();
        s.wired(h);
        s.edit_settings(h, |t| t.replace(written, "\"timeout\": 0.5"));
        let at = format!("the hook in `{}`", s.settings(h).display());
        assert_finds(&s.doctor(h), &format!("{at} {line}"));
    }
}

#[test]
fn doctor_says_claude_code_cancels_a_hook_whose_timeout_its_timer_does_not_take() {
    // Claude Code 2.1.197 waits `timeout * 1000` ms with its runtime's `setTimeout`,
    // which waits 1 ms for more than 2147483647 ms or less than 1: it cancels the hook
    // and runs the tool (seen: `2147483.648`, `1e300` and `0.0005` ran the call the gate
    // would deny, `2147483.647` did not). doctor found nothing wrong with the large ones
    // (its own deadline is below), and for the small one advised `--timeout-ms 0`.
    let over = "more than 2147483.647 seconds, the longest its timer waits (2147483647 ms), so the timer waits 1 ms instead and Claude Code cancels the hook after 1 ms";
    let under = "less than 0.001 seconds (1 ms), so Claude Code's timer waits 1 ms and it cancels the hook after 1 ms";
    for (timeout, why) in [
        ("2147483.648", Some(over)),
        ("1e300", Some(over)),
        ("0.0005", Some(under)),
        ("2147483.647", None),
    ] {
        let s = Sandbox::new();
        s.wired("claude-code");
        s.edit_settings("claude-code", |t| {
            t.replace("\"timeout\": 30", &format!("\"timeout\": {timeout}"))
        });
        let out = s.doctor("claude-code");
        let at = format!("the hook in `{}`", s.settings("claude-code").display());
        match why {
            Some(why) => assert_finds(
                &out,
                &format!(
                    "{at} has `\"timeout\": {}`, {why}, before the gate answers, and runs the tool: write `\"timeout\": 30`",
                    serde_json::from_str::<serde_json::Value>(timeout).unwrap()
                ),
            ),
            None => assert!(!out.stdout.contains("timeout"), "{}", out.stdout),
        }
    }
}

#[test]
fn doctor_takes_claude_code_s_default_hook_timeout_as_ten_minutes() {
    // Without a `timeout`, Claude Code 2.1.197 gives a command hook 600 s
    // (`e.timeout?e.timeout*1000:pp`, `pp=600000`); doctor took 60 s and told a gate
    // given 100 s to wait less.
    let s = Sandbox::new();
    s.wired("claude-code");
    s.edit_settings("claude-code", |t| {
        let mut v: Value = serde_json::from_str(&t).unwrap();
        for group in v["hooks"]["PreToolUse"].as_array_mut().unwrap() {
            for h in group["hooks"].as_array_mut().unwrap() {
                h.as_object_mut().unwrap().remove("timeout");
            }
        }
        v.to_string()
            .replace("--timeout-ms 10000", "--timeout-ms 100000")
    });
    let out = s.doctor("claude-code");
    assert!(!out.stdout.contains("--timeout-ms"), "{}", out.stdout);
    s.edit_settings("claude-code", |t| {
        t.replace("--timeout-ms 100000", "--timeout-ms 600000")
    });
    assert_finds(
        &s.doctor("claude-code"),
        &format!(
            "the hook in `{}` gives omission-gate `--timeout-ms 600000`, not below the harness's own timeout of 600000 ms, so a slow answer is killed first and Claude Code runs the tool: write `--timeout-ms 450000` or less",
            s.settings("claude-code").display()
        ),
    );
}

#[test]
fn doctor_finds_a_claude_code_hook_it_would_not_wait_for_or_run_through_the_shell() {
    // Each key, added to the hook init writes, had Claude Code 2.1.197 run the call the
    // gate denies (a real `claude -p` against a mock; `asyncRewake` from its bundle:
    // backgrounded in an interactive session), while doctor ran the command itself
    // through `/bin/sh -c`, saw the deny, and said the hook gates (exit 0).
    for (key, why) in [
        (
            r#""async": true"#,
            "has `\"async\": true`, so Claude Code starts it in the background and runs the tool without waiting for its answer (a deny stops nothing): remove `\"async\"`",
        ),
        (
            r#""asyncRewake": true"#,
            "has `\"asyncRewake\": true`, so an interactive Claude Code session starts it in the background and runs the tool without waiting for its answer (a deny only wakes the model once the call has run): remove `\"asyncRewake\"`",
        ),
        (
            r#""shell": "powershell""#,
            "has `\"shell\": \"powershell\"`, so Claude Code runs its command in PowerShell, not in `/bin/sh` as it is written for (and as doctor ran it): with no PowerShell installed the hook fails to start and the tool runs, and in PowerShell `\"$CLAUDE_PROJECT_DIR\"` is no environment variable: remove `\"shell\"`",
        ),
        (
            r#""args": []"#,
            "has `\"args\"`, so Claude Code starts its `command` as one program with those arguments, with no shell (not as doctor ran it): `|| exit 2` is no shell's there, and a program that cannot be started lets the tool run: remove `\"args\"` and write the whole command line in `command`",
        ),
        (
            r#""if": "Bash(git *)""#,
            "has `\"if\": \"Bash(git *)\"`, so Claude Code runs it only for calls that match that permission rule, and every other call its matcher selects runs unjudged: remove `\"if\"`",
        ),
    ] {
        let s = Sandbox::new();
        s.wired("claude-code");
        s.edit_settings("claude-code", |t| {
            t.replacen("\"timeout\": 30", &format!("\"timeout\": 30, {key}"), 1)
        });
        let out = s.doctor("claude-code");
        assert_eq!(
            findings(&out),
            [format!(
                "the hook in `{}` {why}",
                s.settings("claude-code").display()
            )],
            "{key}"
        );
    }
    // The same keys where Claude Code runs the hook as written, and waits for it.
    for key in [
        r#""async": false"#,
        r#""asyncRewake": false"#,
        r#""shell": "bash""#,
        r#""if": """#,
        r#""once": true"#,
    ] {
        let s = Sandbox::new();
        s.wired("claude-code");
        s.edit_settings("claude-code", |t| {
            t.replacen("\"timeout\": 30", &format!("\"timeout\": 30, {key}"), 1)
        });
        s.assert_doctor_clean("claude-code");
    }
}

#[test]
fn doctor_finds_a_codex_hook_marked_async() {
    // Codex 0.171.0 never runs a hook with `"async": true`, trusted or not (seen: a
    // trusted one whose command first touched a file left no file, printed no
    // `hook: PreToolUse`, and the call the gate denies ran); doctor ran the command
    // itself, saw the deny and said the hook gates.
    let s = Sandbox::new();
    s.wired("codex");
    s.edit_settings("codex", |t| {
        t.replacen("\"timeout\": 30", "\"timeout\": 30, \"async\": true", 1)
    });
    s.trust_codex_as_is();
    assert_eq!(
        findings(&s.doctor("codex")),
        [format!(
            "the hook in `{}` has `async` set to true, and Codex never runs an async hook (it skips it without a word), so every call runs unjudged: remove `async`, then trust the hook again",
            s.settings("codex").display()
        )]
    );
    s.edit_settings("codex", |t| {
        t.replacen("\"async\": true", "\"async\": false", 1)
    });
    s.trust_codex_as_is();
    s.assert_doctor_clean("codex");
}

#[test]
fn doctor_says_a_gemini_cli_timeout_in_seconds_is_read_in_milliseconds() {
    // Copied from Claude Code's snippet, `"timeout": 30` is 30 ms to Gemini CLI, which
    // then kills the hook and runs the tool. doctor once advised `--timeout-ms 22`.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    s.edit_settings("gemini-cli", |t| {
        t.replace("\"timeout\": 30000", "\"timeout\": 30")
    });
    let out = s.doctor("gemini-cli");
    let found = findings(&out);
    assert_eq!(
        found[0],
        format!(
            "the hook in `{}` has `\"timeout\": 30`, and Gemini CLI reads a hook's `timeout` in milliseconds (Claude Code and Codex read seconds), so it kills the hook after 30 ms, before the gate answers, and runs the tool: write `\"timeout\": 30000`",
            s.settings("gemini-cli").display()
        )
    );
    assert!(!out.stdout.contains("--timeout-ms"), "{}", out.stdout);
    // A timeout in milliseconds below the gate's own deadline: the deadline must shrink.
    s.edit_settings("gemini-cli", |t| {
        t.replace("\"timeout\": 30", "\"timeout\": 8000")
    });
    assert_finds(
        &s.doctor("gemini-cli"),
        &format!(
            "the hook in `{}` gives omission-gate `--timeout-ms 10000`, not below the harness's own timeout of 8000 ms, so a slow answer is killed first and Gemini CLI runs the tool: write `--timeout-ms 6000` or less",
            s.settings("gemini-cli").display()
        ),
    );
}

#[test]
fn doctor_and_init_name_a_pre_tool_event_key_spelt_otherwise() {
    // Seen with Claude Code 2.1.197, Codex 0.171.0 and Gemini CLI 0.61.0: a hook under
    // each of these keys never ran, the rest of the file was read (a hook under another
    // event in it ran), and the tool ran. doctor said only that no hook was found, and
    // init added a second hook beside the one under the wrong key.
    for (h, event, key, skips) in [
        (
            "claude-code",
            "PreToolUse",
            "preToolUse",
            "skips it without a word",
        ),
        (
            "claude-code",
            "PreToolUse",
            "PreTooluse",
            "skips it without a word",
        ),
        (
            "claude-code",
            "PreToolUse",
            "BeforeTool",
            "skips it without a word",
        ),
        (
            "codex",
            "PreToolUse",
            "pre_tool_use",
            "skips it without a word",
        ),
        (
            "codex",
            "PreToolUse",
            "PreToolUSE",
            "skips it without a word",
        ),
        (
            "gemini-cli",
            "BeforeTool",
            "beforeTool",
            "skips it with only the warning `Invalid hook event name: \"beforeTool\"`",
        ),
        (
            "gemini-cli",
            "BeforeTool",
            "PreToolUse",
            "skips it with only the warning `Invalid hook event name: \"PreToolUse\"`",
        ),
    ] {
        let s = Sandbox::new();
        s.wired(h);
        s.edit_settings(h, |t| {
            t.replace(&format!("\"{event}\""), &format!("\"{key}\""))
        });
        let path = s.settings(h);
        let title = match h {
            "claude-code" => "Claude Code",
            "codex" => "Codex",
            _ => "Gemini CLI",
        };
        let line = format!(
            "`{}`: the gate's hook is under `hooks.{key}`, and {title} reads pre-tool hooks only under `hooks.{event}`, spelt exactly so, and {skips}, so the hook never runs and the tool runs: rename `{key}` to `{event}`",
            path.display()
        );
        assert_eq!(
            findings(&s.doctor(h)),
            std::slice::from_ref(&line),
            "{h} {key}"
        );
        let before = std::fs::read_to_string(&path).unwrap();
        let out = s.run(&["init", h, "--dir", s.p()]);
        assert_eq!(out.code, 2, "{h} {key}: {}{}", out.stdout, out.stderr);
        assert_eq!(
            out.stderr,
            format!("omission-gate: init: {line}, then run init again (nothing was written)\n")
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        // Another event's key, or the event's own, is no slip.
        s.edit_settings(h, |t| {
            t.replace(&format!("\"{key}\""), &format!("\"{event}\""))
        });
        if h == "codex" {
            s.trust_codex_as_is();
        }
        s.assert_doctor_clean(h);
    }
    // In a Codex `config.toml`, the fix names its table headers.
    let s = Sandbox::new();
    let group = codex_group_unwired(&s);
    let toml = codex_toml_group(&group).replace("hooks.PreToolUse", "hooks.preToolUse");
    std::fs::create_dir_all(s.project.join(".codex")).unwrap();
    std::fs::write(s.project.join(".codex/config.toml"), toml).unwrap();
    assert_eq!(
        findings(&s.doctor("codex")),
        [format!(
            "`{}`: the gate's hook is under `hooks.preToolUse`, and Codex reads pre-tool hooks only under `hooks.PreToolUse`, spelt exactly so, and skips it without a word, so the hook never runs and the tool runs: rename `preToolUse` to `PreToolUse` in its `[[hooks.preToolUse]]` and `[[hooks.preToolUse.hooks]]` headers",
            s.project.join(".codex/config.toml").display()
        )]
    );
    // A gate that runs from the right key elsewhere: the one that never runs is a note.
    let s = Sandbox::new();
    s.wired("claude-code");
    let user = s.home.join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(s.settings("claude-code"))
        .unwrap()
        .replace("\"PreToolUse\"", "\"pretooluse\"");
    std::fs::write(&user, text).unwrap();
    let out = s.doctor("claude-code");
    assert_clean(&out, &s.settings("claude-code"), "claude-code");
    assert!(
        out.stderr.contains(&format!(
            "omission-gate doctor: note: `{}`: `hooks.pretooluse` holds a hook of the gate that never runs: Claude Code reads pre-tool hooks only under `hooks.PreToolUse`, spelt exactly so, and skips it without a word; the gate runs from `hooks.PreToolUse`: remove `hooks.pretooluse`\n",
            user.display()
        )),
        "{}",
        out.stderr
    );
    // The same in the file init writes: init says to remove the key that never runs, not
    // to rename it (which would give the file the event's key twice), as doctor does.
    let s = Sandbox::new();
    s.wired("claude-code");
    s.edit_settings("claude-code", |t| {
        let mut v: serde_json::Value = serde_json::from_str(&t).unwrap();
        let group = v["hooks"]["PreToolUse"].clone();
        v["hooks"]["pretooluse"] = group;
        v.to_string()
    });
    let path = s.settings("claude-code");
    let out = s.run(&["init", "claude-code", "--dir", s.p()]);
    assert_eq!(
        (out.code, out.stderr),
        (
            2,
            format!(
                "omission-gate: init: `{}`: `hooks.pretooluse` holds a hook of the gate that never runs: Claude Code reads pre-tool hooks only under `hooks.PreToolUse`, spelt exactly so, and skips it without a word; the gate runs from `hooks.PreToolUse`: remove `hooks.pretooluse`, then run init again (nothing was written)\n",
                path.display()
            )
        )
    );
}

#[test]
fn doctor_says_what_gemini_cli_makes_of_a_timeout_that_is_not_a_number() {
    // Seen with Gemini CLI 0.61.0, a hook that takes 1 s: `"30"` killed it after 30 ms,
    // `"abc"`, `true`, `[]` and `3000000000` after 1 ms (Node's timer), and the tool ran;
    // `"30000"` let it answer. doctor read each but a number as no timeout (60 s) and
    // said the hook gates; `3000000000` it took for 3000000000 ms.
    let not_a_number = "not a number: Gemini CLI warns of it at start-up (`Invalid configuration in ...`) but keeps the hook, and its timer, which waits 1 ms for a value it cannot read as a number from 1 to 2147483647, kills the hook after 1 ms";
    for (timeout, what) in [
        (
            "\"30\"",
            "a string, which Gemini CLI reads as the number 30 (its settings schema makes a number of it) in milliseconds, not seconds, so it kills the hook after 30 ms",
        ),
        ("\"abc\"", not_a_number),
        ("true", not_a_number),
        ("[]", not_a_number),
        (
            "3000000000",
            "more than Node's timers wait (2147483647 ms), so Gemini CLI's timer waits 1 ms instead (with a `TimeoutOverflowWarning`) and kills the hook after 1 ms",
        ),
    ] {
        assert_gemini_timeout_finding(timeout, what);
    }
    // A string Gemini CLI reads as a number of milliseconds the gate fits in, or none.
    for timeout in ["\"30000\"", "null"] {
        gemini_with_timeout(timeout).assert_doctor_clean("gemini-cli");
    }
}

/// A Gemini CLI project wired by init, its hook's `timeout` then written as `timeout`.
fn gemini_with_timeout(timeout: &str) -> Sandbox {
    let s = Sandbox::new();
    s.wired("gemini-cli");
    s.edit_settings("gemini-cli", |t| {
        t.replace("\"timeout\": 30000", &format!("\"timeout\": {timeout}"))
    });
    s
}

/// doctor's one finding for a Gemini CLI hook whose `timeout` is `timeout`: `what` it
/// makes of it, and the fix.
fn assert_gemini_timeout_finding(timeout: &str, what: &str) {
    let s = gemini_with_timeout(timeout);
    assert_eq!(
        findings(&s.doctor("gemini-cli")),
        [format!(
            "the hook in `{}` has `\"timeout\": {timeout}`, {what}, before the gate answers, and runs the tool: write `\"timeout\": 30000`",
            s.settings("gemini-cli").display()
        )],
        "{timeout}"
    );
}

#[test]
fn doctor_says_gemini_cli_kills_a_hook_whose_timeout_is_below_1_after_1_ms() {
    // Gemini CLI 0.61.0 hands `timeout` to Node's `setTimeout` as written
    // (`HookRunner.executeCommandHook`: `setTimeout(..., hookConfig.timeout ?? 6e4)`),
    // and Node's timer waits 1 ms for anything below 1 (node 20: `setTimeout(f, -5)`,
    // `0` and `0.5` each have `_idleTimeout` 1). doctor said "after -5 ms".
    let below = "less than 1, and Gemini CLI reads a hook's `timeout` in milliseconds (Claude Code and Codex read seconds) and hands it to Node's `setTimeout`, which waits 1 ms for anything less than 1, so it kills the hook after 1 ms";
    for (timeout, what) in [
        ("-5", below.to_string()),
        ("0", below.to_string()),
        ("0.5", below.to_string()),
        (
            "\"-5\"",
            format!(
                "a string, which Gemini CLI reads as the number -5 (its settings schema makes a number of it), {below}"
            ),
        ),
    ] {
        assert_gemini_timeout_finding(timeout, &what);
    }
}

#[test]
fn doctor_runs_a_gemini_cli_hook_with_the_environment_gemini_cli_gives_it() {
    // Gemini CLI 0.61.0 gives a hook its own environment whole (unless it redacts), the
    // hook's `env` on top, and a socket for stdin. Seen: with `BASH_ENV` naming a file
    // that exits 0 for a hook, the gate never ran and the call ran, where doctor, which
    // ran the hook with only `PATH` and `HOME`, said ok.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let startup = s.home.join("startup.sh");
    std::fs::write(&startup, "[ -n \"$GEMINI_PROJECT_DIR\" ] && exit 0\n").unwrap();
    let startup = startup.to_str().unwrap();
    let doctor = |vars: &[(&str, &str)]| {
        let mut all = vec![
            ("SHLVL", "1"),
            ("BASH_ENV", ""),
            ("GITHUB_SHA", ""),
            ("SURFACE", ""),
        ];
        all.extend_from_slice(vars);
        s.run_with(&["doctor", "gemini-cli", "--dir", s.p()], &all)
    };
    let ran = format!(
        "the hook in `{}` let a malformed call run (exit 0): Gemini CLI would run the tool",
        s.settings("gemini-cli").display()
    );
    assert_eq!(doctor(&[]).code, 0);
    // `BASH_ENV` in the environment Gemini CLI starts in.
    assert_finds(
        &doctor(&[("BASH_ENV", startup)]),
        &format!(
            "{ran} (run with this environment, which Gemini CLI gives its hooks, where `BASH_ENV` is `{startup}`: bash runs that file before the command, so it must let the command run, or be unset)"
        ),
    );
    // Started with no `SHLVL`, bash takes the socket on its stdin for a remote shell's
    // and reads `~/.bashrc` instead (and `BASH_ENV` not at all).
    std::fs::write(s.home.join(".bashrc"), std::fs::read(startup).unwrap()).unwrap();
    assert_finds(&doctor(&[("SHLVL", "0")]), &ran);
    assert_eq!(doctor(&[]).code, 0);
    std::fs::remove_file(s.home.join(".bashrc")).unwrap();
    // Redacted, it does not reach the hook: named in `blocked`, or with `GITHUB_SHA` set,
    // which leaves out every variable but a few.
    let user = s.home.join(".gemini/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(
        &user,
        r#"{"security": {"environmentVariableRedaction": {"enabled": true, "blocked": ["bash_env"]}}}"#,
    )
    .unwrap();
    assert_eq!(doctor(&[("BASH_ENV", startup)]).code, 0);
    std::fs::write(
        &user,
        r#"{"security": {"environmentVariableRedaction": {"enabled": true, "allowed": ["BASH_ENV"]}}}"#,
    )
    .unwrap();
    assert_eq!(findings(&doctor(&[("BASH_ENV", startup)])).len(), 1);
    std::fs::remove_file(&user).unwrap();
    assert_eq!(
        doctor(&[("BASH_ENV", startup), ("GITHUB_SHA", "abc")]).code,
        0
    );
    // The hook's own `env`, laid over whatever Gemini CLI gives.
    s.edit_settings("gemini-cli", |t| {
        t.replacen(
            "\"type\": \"command\",",
            &format!(r#""type": "command", "env": {{"BASH_ENV": "{startup}"}},"#),
            1,
        )
    });
    assert_finds(&doctor(&[]), &ran);
    // Redacting, Gemini CLI leaves out `SHLVL` too, and then bash reads no `BASH_ENV`.
    assert_eq!(doctor(&[("GITHUB_SHA", "abc")]).code, 0);
}

#[test]
fn doctor_gives_a_gemini_cli_hook_the_plans_dir_gemini_cli_gives_it() {
    // Gemini CLI 0.61.0 (`executeCommandHook`) sets `GEMINI_PLANS_DIR` to
    // `Storage.getPlansDir()`: `<home>/.gemini/tmp/<project id>/<session>/plans`, the id
    // from `projects.json`, or `general.plan.directory` resolved against the project.
    // doctor set no `GEMINI_PLANS_DIR`, so a hook reading it ran otherwise than it does.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let gemini = s.home.join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    let registry = serde_json::json!({"projects": {s.p(): "reg-id"}});
    std::fs::write(gemini.join("projects.json"), registry.to_string()).unwrap();
    let startup = s.home.join("startup.sh");
    let ran = format!(
        "the hook in `{}` let a malformed call run (exit 0): Gemini CLI would run the tool (run with this environment, which Gemini CLI gives its hooks, where `BASH_ENV` is `{}`: bash runs that file before the command, so it must let the command run, or be unset)",
        s.settings("gemini-cli").display(),
        startup.display()
    );
    let startup_exits_0_when_the_plans_dir_is = |want: &str| {
        let check = format!("[ \"$GEMINI_PLANS_DIR\" = '{want}' ] && exit 0\n");
        std::fs::write(&startup, check).unwrap();
        let vars = [("SHLVL", "1"), ("BASH_ENV", startup.to_str().unwrap())];
        s.run_with(&["doctor", "gemini-cli", "--dir", s.p()], &vars)
    };
    let default = gemini.join("tmp/reg-id/omission-gate-doctor/plans");
    assert_finds(
        &startup_exits_0_when_the_plans_dir_is(default.to_str().unwrap()),
        &ran,
    );
    let user = gemini.join("settings.json");
    std::fs::write(
        &user,
        r#"{"general": {"plan": {"directory": "docs/../plans"}}}"#,
    )
    .unwrap();
    let custom = format!("{}/plans", s.p());
    assert_finds(&startup_exits_0_when_the_plans_dir_is(&custom), &ran);
    assert_eq!(
        startup_exits_0_when_the_plans_dir_is(default.to_str().unwrap()).code,
        0
    );
}

#[test]
fn doctor_reports_a_gemini_cli_plans_dir_outside_the_project_with_plan_mode_off() {
    // Seen in a real run of Gemini CLI 0.61.0 (scenario D): with `general.plan.directory`
    // outside the project and `general.plan.enabled` false, `Storage.getPlansDir` throws
    // as each hook starts, Gemini CLI logs the hook as failed (non-fatal) and runs the
    // denied call. doctor ran the hook with that directory and reported it as gating.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let gemini = s.home.join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    let outside = s.home.join("plans");
    let settings = |enabled: bool| {
        let value = serde_json::json!({"general": {"plan": {
            "directory": outside.to_str().unwrap(), "enabled": enabled}}});
        std::fs::write(gemini.join("settings.json"), value.to_string()).unwrap();
        s.run(&["doctor", "gemini-cli", "--dir", s.p()])
    };
    let off = settings(false);
    assert_eq!(off.code, 1, "{}", off.stdout);
    assert_finds(
        &off,
        &format!(
            "`general.plan.directory` resolves to `{}`, outside the project, and `general.plan.enabled` is false, so Gemini CLI fails every hook as it starts it and the tool runs: remove `general.plan.directory`, or put the directory inside the project",
            outside.display()
        ),
    );
    // Plan mode on: Gemini CLI drops the directory at start, and its hooks run.
    let on = settings(true);
    assert_eq!(on.code, 0, "{}", on.stdout);
}

#[test]
fn doctor_resolves_the_variables_of_a_gemini_cli_plans_dir_as_gemini_cli_does() {
    // Gemini CLI 0.61.0 resolves `$NAME` and `${NAME}` in every string of a settings file
    // as it loads it (`resolveEnvVarsInObject`): `$HOME/plans` is a directory outside the
    // project, which with plan mode off fails every hook. doctor read it as written, a
    // folder named `$HOME` in the project, and said the hook gates.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let gemini = s.home.join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    let doctor_with = |directory: &str| {
        let value = serde_json::json!({"general": {"plan": {
            "directory": directory, "enabled": false}}});
        std::fs::write(gemini.join("settings.json"), value.to_string()).unwrap();
        s.run(&["doctor", "gemini-cli", "--dir", s.p()])
    };
    let resolved = doctor_with("$HOME/plans");
    assert_eq!(resolved.code, 1, "{}", resolved.stdout);
    assert_finds(
        &resolved,
        &format!(
            "`general.plan.directory` resolves to `{}`, outside the project, and `general.plan.enabled` is false, so Gemini CLI fails every hook as it starts it and the tool runs: remove `general.plan.directory`, or put the directory inside the project",
            s.home.join("plans").display()
        ),
    );
    // A variable that is not set is left as written: a folder in the project.
    let unset = doctor_with("$OMISSION_GATE_TEST_UNSET/plans");
    assert_eq!(unset.code, 0, "{}", unset.stdout);
}

#[test]
fn doctor_reports_a_gemini_cli_extension_plans_dir_outside_the_project_with_plan_mode_off() {
    // Gemini CLI 0.61.0 takes an active extension's `plan.directory` when no settings
    // file sets `general.plan.directory` (`planSettings` in loadCliConfig), and holds it
    // to the project as the setting: seen, `plans` a link to a folder outside the project,
    // `general.plan.enabled` false, every `BeforeTool` hook failed ("Custom plans
    // directory 'plans' resolves to ... outside the project root") and the denied call
    // ran, while doctor said ok.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let extension = s.home.join(".gemini/extensions/planner");
    std::fs::create_dir_all(&extension).unwrap();
    let config = extension.join("gemini-extension.json");
    std::fs::write(
        &config,
        r#"{"name": "planner", "version": "1.0.0", "plan": {"directory": "plans"}}"#,
    )
    .unwrap();
    let outside = s.home.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, s.project.join("plans")).unwrap();
    let user = s.home.join(".gemini/settings.json");
    let settings = |plan: serde_json::Value| {
        std::fs::write(
            &user,
            serde_json::json!({"general": {"plan": plan}}).to_string(),
        )
        .unwrap();
        s.run(&["doctor", "gemini-cli", "--dir", s.p()])
    };
    let off = settings(serde_json::json!({"enabled": false}));
    assert_eq!(
        findings(&off),
        [format!(
            "`{}` sets `plan.directory`, which resolves to `{}`, outside the project, and `general.plan.enabled` is false, so Gemini CLI (which takes an active extension's plans directory when no settings file sets `general.plan.directory`) fails every hook as it starts it and the tool runs: set `general.plan.directory` to a directory inside the project in the settings, or uninstall the extension",
            config.display(),
            outside.display()
        )]
    );
    // Plan mode on: Gemini CLI drops the directory at start, and its hooks run; a
    // directory in the settings: the extension's is not read.
    assert_eq!(settings(serde_json::json!({"enabled": true})).code, 0);
    let inside = settings(serde_json::json!({"enabled": false, "directory": "docs"}));
    assert_eq!(inside.code, 0, "{}", inside.stdout);
}

#[test]
fn doctor_gives_a_gemini_cli_hook_the_default_plans_dir_when_plan_mode_drops_the_custom_one() {
    // Gemini CLI 0.61.0 with plan mode on (the default) drops a `general.plan.directory`
    // outside the project at start ("Falling back to default project temp directory"), so
    // a hook's `GEMINI_PLANS_DIR` is the default. doctor gave the dropped directory.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let gemini = s.home.join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    let registry = serde_json::json!({"projects": {s.p(): "reg-id"}});
    std::fs::write(gemini.join("projects.json"), registry.to_string()).unwrap();
    let value = serde_json::json!({"general": {"plan": {"directory": "../elsewhere"}}});
    std::fs::write(gemini.join("settings.json"), value.to_string()).unwrap();
    let startup = s.home.join("startup.sh");
    let default = gemini.join("tmp/reg-id/omission-gate-doctor/plans");
    let check = format!(
        "[ \"$GEMINI_PLANS_DIR\" = '{}' ] && exit 0\n",
        default.display()
    );
    std::fs::write(&startup, check).unwrap();
    let vars = [("SHLVL", "1"), ("BASH_ENV", startup.to_str().unwrap())];
    let out = s.run_with(&["doctor", "gemini-cli", "--dir", s.p()], &vars);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let ran = format!(
        "the hook in `{}` let a malformed call run (exit 0): Gemini CLI would run the tool (run with this environment, which Gemini CLI gives its hooks, where `BASH_ENV` is `{}`: bash runs that file before the command, so it must let the command run, or be unset)",
        s.settings("gemini-cli").display(),
        startup.display()
    );
    assert_finds(&out, &ran);
}

#[test]
fn doctor_runs_a_gemini_cli_hook_with_the_variables_of_the_env_file_gemini_cli_loads() {
    // Seen: with `BASH_ENV` in the project's `.env`, which Gemini CLI 0.61.0 loads into
    // its own environment at start, the gate never ran and the call ran.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    let startup = s.home.join("startup.sh");
    std::fs::write(&startup, "[ -n \"$GEMINI_PROJECT_DIR\" ] && exit 0\n").unwrap();
    let doctor = |vars: &[(&str, &str)]| {
        let mut all = vec![("SHLVL", "1"), ("GITHUB_SHA", ""), ("SURFACE", "")];
        all.extend_from_slice(vars);
        s.run_with(&["doctor", "gemini-cli", "--dir", s.p()], &all)
    };
    let ran = format!(
        "the hook in `{}` let a malformed call run (exit 0): Gemini CLI would run the tool",
        s.settings("gemini-cli").display()
    );
    let dotenv = s.project.join(".env");
    std::fs::write(
        &dotenv,
        format!(
            "# startup\nexport BASH_ENV=\"{}\" # here\n",
            startup.display()
        ),
    )
    .unwrap();
    assert_finds(&doctor(&[]), &ran);
    // A variable Gemini CLI has already is kept.
    assert_eq!(doctor(&[("BASH_ENV", "")]).code, 0);
    // `advanced.excludedEnvVars` keeps it out of a project's file.
    s.edit_settings("gemini-cli", |t| {
        t.replacen('{', r#"{"advanced": {"excludedEnvVars": ["BASH_ENV"]},"#, 1)
    });
    assert_eq!(doctor(&[]).code, 0);
    // Not out of `.gemini/.env`, which comes first.
    std::fs::rename(&dotenv, s.project.join(".gemini/.env")).unwrap();
    assert_finds(&doctor(&[]), &ran);
    // Gemini CLI reads a file that is not UTF-8 too, each bad byte as U+FFFD.
    let mut bytes = b"# \xff\n".to_vec();
    bytes.extend(format!("BASH_ENV={}\n", startup.display()).bytes());
    std::fs::write(s.project.join(".gemini/.env"), bytes).unwrap();
    assert_finds(&doctor(&[]), &ran);
}

#[test]
fn doctor_finds_a_gemini_cli_redaction_list_that_is_not_a_list_of_names() {
    // Seen: with `allowed` a string and redaction on, Gemini CLI 0.61.0 failed each hook
    // with a `TypeError` before starting it, and the call ran.
    for list in [r#""PATH""#, "[1]", "true"] {
        for key in ["allowed", "blocked"] {
            let s = Sandbox::new();
            s.wired("gemini-cli");
            let user = s.home.join(".gemini/settings.json");
            std::fs::create_dir_all(user.parent().unwrap()).unwrap();
            std::fs::write(
                &user,
                format!(r#"{{"security": {{"environmentVariableRedaction": {{"enabled": true, "{key}": {list}}}}}}}"#),
            )
            .unwrap();
            assert_finds(
                &s.doctor("gemini-cli"),
                &format!(
                    "`security.environmentVariableRedaction.{key}` in `{}` is not a list of variable names, so Gemini CLI fails before it starts any hook and the tool runs: make it a list of names, or remove it",
                    user.display()
                ),
            );
            // Redaction off, the list is never read.
            std::fs::write(
                &user,
                format!(
                    r#"{{"security": {{"environmentVariableRedaction": {{"{key}": {list}}}}}}}"#
                ),
            )
            .unwrap();
            assert_eq!(
                s.run_with(
                    &["doctor", "gemini-cli", "--dir", s.p()],
                    &[("GITHUB_SHA", ""), ("SURFACE", "")]
                )
                .code,
                0
            );
        }
    }
}

#[test]
fn doctor_finds_a_gemini_cli_gate_hook_whose_env_moves_gemini_cli_s_settings() {
    // Gemini CLI 0.61.0 lays a hook's own `env` over the hook's environment, not its own:
    // seen, a gate hook whose `env` named another system settings file passed a call
    // while the `BeforeModel` hook in the system settings Gemini CLI read ran.
    for var in [
        "HOME",
        "GEMINI_CLI_HOME",
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
    ] {
        let s = Sandbox::new();
        s.wired("gemini-cli");
        s.edit_settings("gemini-cli", |t| {
            assert!(t.contains("\"type\": \"command\","), "{t}");
            t.replacen(
                "\"type\": \"command\",",
                &format!(r#""type": "command", "env": {{"TZ": "UTC", "{var}": "/elsewhere"}},"#),
                1,
            )
        });
        let found = findings(&s.doctor("gemini-cli"));
        let problem = format!(
            "the hook in `{}` sets `{var}` in its `env`, which Gemini CLI gives the gate's process but does not read its own settings by, so under `--kept-from transcript` the gate cannot tell which settings and extensions Gemini CLI reads (a `BeforeModel` hook there would go unseen) and denies every call: take `{var}` out of the hook's `env`",
            s.settings("gemini-cli").display()
        );
        assert!(found.contains(&problem), "{var}: {found:?}");
    }
    // Another variable in its `env` is no such problem.
    let s = Sandbox::new();
    s.wired("gemini-cli");
    s.edit_settings("gemini-cli", |t| {
        t.replacen(
            "\"type\": \"command\",",
            r#""type": "command", "env": {"TZ": "UTC"},"#,
            1,
        )
    });
    assert_eq!(s.doctor("gemini-cli").code, 0);
}

/// The README's own store names `refunds.create`, a name Claude Code and Codex never
/// give a tool (theirs hold only letters, digits, `_` and `-`). doctor said "add it to the
/// matcher"; done so, it said `ok`, and the refund tool's calls (`mcp__billing__...`)
/// passed whatever the rule said. It now says the record binds none of their calls and
/// to name the tool, whatever the matcher.
#[test]
fn doctor_reports_a_name_the_harness_never_sends_whatever_the_matcher() {
    let store = |scope: &str| {
        format!(
            r#"{{"records": [{{"id": "r2", "seq": 1, "kind": "policy", "scope": {scope}, "predicate": {{"field": "amount", "op": "gt", "value": 5000}}, "effect": "require_approval", "text": "Refunds over 5,000 need a human approver."}}]}}"#
        )
    };
    for (h, title, matcher) in [
        (
            "claude-code",
            "Claude Code",
            "Bash|Monitor|PowerShell|Edit|MultiEdit|Write|NotebookEdit|mcp__.*",
        ),
        ("codex", "Codex", "^(Bash|apply_patch|mcp__.*)$"),
    ] {
        let s = Sandbox::new();
        s.wired(h);
        std::fs::write(s.store(), store(r#""refunds.create""#)).unwrap();
        let line = format!(
            "record `r2` names `refunds.create`, a name {title} never gives a tool (its tool names hold only ASCII letters, digits, `_` and `-`; it names MCP tools `mcp__<server>__<tool>`), so the record binds none of its calls (adding `refunds.create` to the matcher does not help): name the tool as {title} calls it, beside `refunds.create` if another program judges calls by that name"
        );
        let out = s.doctor(h);
        assert_finds(&out, &line);
        assert!(
            !out.stdout.contains("add it to the matcher"),
            "{}",
            out.stdout
        );
        // init, run again over the store, warns of it.
        let init = s.init(h);
        assert!(
            init.stdout.contains(&format!(
                "warning: record `r2` names `refunds.create`, a name {title} never gives a tool (it names MCP tools `mcp__<server>__<tool>`), so it never binds a call there: name the tool as {title} calls it in `{}`",
                s.store().display()
            )),
            "{}",
            init.stdout
        );
        // With the name added to the matcher, as the old line said: still a problem.
        s.edit_settings(h, |t| {
            t.replace(
                matcher,
                &matcher.replace("mcp__.*", "mcp__.*|refunds.create"),
            )
        });
        if h == "codex" {
            s.trust_codex_as_is();
        }
        assert_finds(&s.doctor(h), &line);
        // An MCP name the harness sends in another spelling has its own line, which
        // names that spelling, and no second one.
        std::fs::write(s.store(), store(r#""mcp__bill.ing__refunds_create""#)).unwrap();
        let found = findings(&s.doctor(h));
        assert!(
            !found.iter().any(|l| l.contains("its tool names hold only")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|l| l.contains("write `mcp__bill_ing__refunds_create`")),
            "{found:?}"
        );
        // Named as the harness calls it too, the record binds its calls: clean.
        std::fs::write(
            s.store(),
            store(r#"["refunds.create", "mcp__billing__refunds_create"]"#),
        )
        .unwrap();
        s.assert_doctor_clean(h);
    }
}

/// doctor's fix for `refunds.create` is to name the tool as the harness calls it,
/// beside `refunds.create`. Done so, under the matcher init writes, doctor said the
/// matcher misses `refunds.create` and to add it, a name the harness never sends: the
/// advice the line above calls useless, and a problem where the record binds the calls.
#[test]
fn doctor_asks_no_matcher_for_a_name_the_harness_never_sends_beside_one_it_does() {
    for h in ["claude-code", "codex"] {
        let s = Sandbox::new();
        s.wired(h);
        std::fs::write(
            s.store(),
            r#"{"records": [{"id": "r2", "seq": 1, "kind": "policy", "scope": ["refunds.create", "mcp__billing__refunds_create"], "predicate": {"field": "amount", "op": "gt", "value": 5000}, "effect": "require_approval", "text": "Refunds over 5,000 need a human approver."}]}"#,
        )
        .unwrap();
        s.assert_doctor_clean(h);
    }
}
