//! What a user of a CLI expects around the verdicts: `--help` that reads the same in
//! every command and states every default, shell completions and a man page from the
//! same definitions, `--quiet`, and colour only on a terminal.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::process::Command;

mod common;
use common::{fixture, run};

const COMMANDS: [&str; 11] = [
    "check",
    "validate",
    "pin",
    "sweep",
    "verify",
    "hook",
    "context",
    "init",
    "doctor",
    "completions",
    "man",
];

fn help(command: &str) -> String {
    let r = run(&[command, "--help"], None);
    // A harness reads a hook's exit 0 as "run the call": the hook's help denies.
    let code = if command == "hook" { 2 } else { 0 };
    assert_eq!(r.code, code, "{command}: {}", r.stderr);
    r.stdout
}

#[test]
fn every_command_has_the_same_help_layout_and_says_its_exit_codes() {
    let top = run(&["--help"], None).stdout;
    for command in COMMANDS {
        let text = help(command);
        // One layout: each option's description on the lines under it.
        assert!(
            text.contains("\n  -h, --help\n          Print help"),
            "{command}:\n{text}"
        );
        let exit = text.lines().last().unwrap();
        assert!(exit.starts_with("Exit: "), "{command}: {exit}");
        assert!(
            top.contains(&format!("\n  {command:<12}")),
            "{command} not in:\n{top}"
        );
    }
}

#[test]
fn tools_is_described_the_same_wherever_it_is_taken() {
    let format = r#"names or `*` globs `a,b`, or a JSON array of `{"name","input_schema"}`, inline or `@FILE`. Default:"#;
    for command in ["check", "pin", "sweep", "hook"] {
        let text = help(command).replace("\n          ", " ");
        assert!(text.contains(format), "{command}:\n{text}");
    }
}

#[test]
fn every_default_is_stated() {
    let sweep = help("sweep");
    assert!(sweep.contains("--retention <RETENTION>"), "{sweep}");
    assert!(sweep.contains("[default: given]"), "{sweep}");
    let check = help("check").replace("\n          ", " ");
    for default in [
        "[default: given]",
        "[default: text]",
        "Default: the document's `action`",
        "Default: the document's `kept`",
    ] {
        assert!(check.contains(default), "{default}:\n{check}");
    }
    let pin = help("pin").replace("\n          ", " ");
    assert!(pin.contains("--budget <TOKENS>"), "{pin}");
    assert!(pin.contains("Default: none"), "{pin}");
    let hook = help("hook");
    assert!(hook.contains("--timeout-ms <MS>"), "{hook}");
    assert!(hook.contains("[default: 10000]"), "{hook}");
}

#[test]
fn verify_lists_only_the_flags_that_act_on_it() {
    let verify = help("verify");
    assert!(!verify.contains("--max-predicate-depth"), "{verify}");
    assert!(verify.contains("--max-input-bytes <BYTES>"), "{verify}");
    // Still accepted (one command line for every command), and harmless.
    let report = run(&["check", &fixture("fx1_refund_thread.json")], None).stdout;
    let r = run(
        &["verify", "-", "--max-predicate-depth", "3"],
        Some(report.as_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The hook's stdout is its reply: --quiet is not listed there.
    assert!(!help("hook").contains("--quiet"));
}

#[test]
fn completions_and_the_man_page_come_from_the_definitions() {
    for (shell, marker) in [
        ("bash", "complete -F _omission__gate"),
        ("zsh", "#compdef omission-gate"),
        ("fish", "complete -c omission-gate"),
    ] {
        let r = run(&["completions", shell], None);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stdout.contains(marker), "{shell}:\n{}", r.stdout);
        for word in ["validate", "precheck", "max-input-bytes"] {
            assert!(r.stdout.contains(word), "{shell}: no {word}");
        }
    }
    assert_eq!(run(&["completions", "tcsh"], None).code, 2);
    let man = run(&["man"], None);
    assert_eq!(man.code, 0);
    assert!(man.stdout.contains(".TH omission-gate 1"), "{}", man.stdout);
    for command in ["check", "validate", "pin", "sweep", "verify", "hook"] {
        assert!(man.stdout.contains(command), "man page lacks {command}");
    }
}

#[test]
fn quiet_prints_nothing_and_exits_with_the_verdict() {
    let fx1 = fixture("fx1_refund_thread.json");
    for (args, code) in [
        (vec!["check", fx1.as_str(), "--quiet"], 1),
        (vec!["-q", "check", fx1.as_str(), "--kept", "f_011"], 0),
        (vec!["check", fx1.as_str(), "-q", "--format", "json"], 1),
        (vec!["sweep", "-q", fx1.as_str()], 1),
        (vec!["validate", "-q", fx1.as_str()], 0),
        (vec!["pin", "-q", fx1.as_str()], 0),
    ] {
        let r = run(&args, None);
        assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{args:?}");
        assert_eq!(r.stderr, "", "{args:?}");
    }
    // An error is still one line on stderr.
    let r = run(&["check", "-q", "no/such.json"], None);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "omission-gate: invalid-input: no/such.json: input: cannot read: no such file in the working directory, which a relative path is read from (give the full path)\n"
    );
}

/// The binary's stdout for `args` in the environment `env` (stdout a pipe).
fn piped(args: &[&str], env: &[(&str, &str)]) -> Vec<u8> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_omission-gate"));
    command
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap().stdout
}

#[test]
fn a_pipe_gets_the_sealed_bytes_whatever_the_terminal_settings() {
    let args = ["check", "fixtures/fx1_refund_thread.json"];
    let plain = piped(&args, &[]);
    assert!(!plain.contains(&0x1b));
    for env in [
        &[("TERM", "xterm-256color")][..],
        &[("TERM", "xterm-256color"), ("CLICOLOR_FORCE", "1")],
        &[("NO_COLOR", "1")],
        &[("COLORTERM", "truecolor")],
    ] {
        assert_eq!(piped(&args, env), plain, "{env:?}");
    }
    let r = run(&["verify", "-"], Some(&plain));
    assert_eq!(r.code, 0);
}

/// Runs `command` under a pseudo-terminal (util-linux `script`), returning what the
/// terminal received; `None` where `script` is not available.
fn on_a_terminal(command: &str, no_color: bool) -> Option<String> {
    let mut script = Command::new("script");
    script
        .args(["-qec", command, "/dev/null"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("TERM", "xterm")
        .env_remove("NO_COLOR");
    if no_color {
        script.env("NO_COLOR", "1");
    }
    let out = script.output().ok()?;
    out.status.code()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_terminal_sees_the_verdict_in_colour_unless_no_color() {
    let bin = env!("CARGO_BIN_EXE_omission-gate");
    let command = format!("{bin} check fixtures/fx1_refund_thread.json");
    let Some(coloured) = on_a_terminal(&command, false) else {
        return;
    };
    assert!(
        coloured
            .contains("\u{1b}[33mverdict   : BLOCK (dropped-binding-constraint) exit 1\u{1b}[0m"),
        "{coloured:?}"
    );
    // Only that line: the rest is as sealed.
    assert_eq!(coloured.matches('\u{1b}').count(), 2, "{coloured:?}");
    let plain = on_a_terminal(&command, true).unwrap();
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    assert!(plain.contains("verdict   : BLOCK"), "{plain:?}");
}
