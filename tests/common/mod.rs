//! Shared helpers for the tests: run the real binary, write temporary inputs; and the
//! proptest strategies every property test draws from ([`strategies`]).
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

pub mod strategies;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What one run of the binary produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The report's `verdict   :` line.
    pub fn verdict_line(&self) -> &str {
        self.stdout
            .lines()
            .find(|l| l.starts_with("verdict   :"))
            .unwrap_or_else(|| panic!("no verdict line in:\n{}", self.stdout))
    }

    /// Lines with a given label, without the label.
    pub fn labelled(&self, label: &str) -> Vec<&str> {
        let prefix = format!("{label:<10}: ");
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(prefix.as_str()))
            .collect()
    }
}

/// The variables by which Claude Code's environment, which a hook runs in, makes a model
/// its own refusal fallback (and so changes how the gate reads a subagent's file): taken
/// out of every run's environment, so that the one the tests run in does not count.
pub const CLAUDE_FALLBACK_VARS: [&str; 3] = [
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_FABLE_MODEL",
    "CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK",
];

/// Runs omission-gate with arguments and optional stdin.
pub fn run(args: &[&str], stdin: Option<&[u8]>) -> Run {
    run_env(args, stdin, &[])
}

/// [`run`], with these variables set in its environment.
pub fn run_env(args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_omission-gate"));
    command.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    for var in CLAUDE_FALLBACK_VARS {
        command.env_remove(var);
    }
    // Not as a hook Claude Code runs, which context files it dates by its process.
    command.env_remove("CLAUDECODE");
    command.envs(env.iter().copied());
    run_of(command, stdin)
}

/// What `command` did with `stdin` (see [`output_of`]).
pub fn run_of(command: Command, stdin: Option<&[u8]>) -> Run {
    let out = output_of(command, stdin);
    Run {
        code: out.status.code().expect("exited by a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// The argument [`run_piped`] puts a pipe in place of.
pub const PIPED: &str = "/dev/fd/3";

/// Runs omission-gate as [`run`] does, with the file `file` on a pipe that an argument
/// [`PIPED`] names (bash's `3< <(cat FILE)`). A pipe is no regular file: whatever its
/// size, the loader reads it whole and loads it exactly, so a large input named this way
/// is the exact loader's reference for the same input named by its path (which the lean
/// loader may read).
pub fn run_piped(args: &[&str], file: &str, stdin: Option<&[u8]>) -> Run {
    let mut command = Command::new("bash");
    command
        .args([
            "-c",
            r#"file=$1; shift; exec "$@" 3< <(cat "$file")"#,
            "bash",
            file,
        ])
        .arg(env!("CARGO_BIN_EXE_omission-gate"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    for var in CLAUDE_FALLBACK_VARS {
        command.env_remove(var);
    }
    // Not as a hook Claude Code runs, which context files it dates by its process.
    command.env_remove("CLAUDECODE");
    run_of(command, stdin)
}

/// Runs `command` with `stdin` on its standard input (none: `/dev/null`) and collects
/// what it writes. The input is written from a thread of its own, so a child that writes
/// before it has read everything cannot block, and one that stops reading early (a size
/// limit, a usage error) only closes the pipe.
pub fn output_of(mut command: Command, stdin: Option<&[u8]>) -> Output {
    let mut child = command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the command");
    let writer = stdin.map(|bytes| {
        let mut pipe = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        })
    });
    let out = child.wait_with_output().unwrap();
    if let Some(writer) = writer {
        writer.join().unwrap();
    }
    out
}

/// A temporary directory that lives as long as the value.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Writes a file and returns its path as a string.
    pub fn file(&self, name: &str, content: &[u8]) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path.to_str().unwrap().to_string()
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The repository's fixtures directory.
pub fn fixture(name: &str) -> String {
    let p: PathBuf = ["fixtures", name].iter().collect();
    p.to_str().unwrap().to_string()
}

/// A document from record JSON snippets, kept ids and an action.
pub fn doc(records: &[&str], kept: &[&str], action: &str) -> String {
    let kept: Vec<String> = kept.iter().map(|k| format!("\"{k}\"")).collect();
    format!(
        "{{\"records\":[{}],\"kept\":[{}],\"action\":{}}}",
        records.join(","),
        kept.join(","),
        action
    )
}

/// Every `$ ` line in a fenced block of the markdown file at `doc` (relative to the
/// repository root) is a shell command, and prints exactly the lines under it. A command
/// may end in a here-document (`<<'EOF'`): its lines, up to the `EOF` line, are part of
/// it. The commands run in order with bash, in a scratch directory that holds a link to
/// every top-level entry of the repository (so `fixtures/...` resolves and a file one
/// example writes is there for the next), with the binary on PATH. Returns how many
/// examples ran.
pub fn doc_examples_hold(doc: &str) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(doc)).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_omission-gate"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut examples: Vec<(String, String)> = Vec::new();
    let mut in_block = false;
    let mut open = false;
    let mut heredoc: Option<String> = None;
    for line in text.lines() {
        if let Some(end) = &heredoc {
            let (cmd, _) = examples.last_mut().unwrap();
            cmd.push('\n');
            cmd.push_str(line);
            if line == end {
                heredoc = None;
            }
        } else if line.starts_with("```") {
            in_block = !in_block;
            open = false;
        } else if in_block && let Some(cmd) = line.strip_prefix("$ ") {
            heredoc = cmd
                .split_once("<<'")
                .and_then(|(_, rest)| rest.split_once('\''))
                .map(|(end, _)| end.to_string());
            examples.push((cmd.to_string(), String::new()));
            open = true;
        } else if open && let Some((_, out)) = examples.last_mut() {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(heredoc.is_none(), "{doc}: a here-document does not end");
    let scratch = Scratch::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), scratch.path().join(&name)).unwrap();
    }
    for (cmd, want) in &examples {
        let out = Command::new("bash")
            .arg("-c")
            .arg(cmd)
            .env("PATH", &path)
            .env_remove("NO_COLOR")
            .current_dir(scratch.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let got = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            &got,
            want,
            "{doc} example `{cmd}` prints something else (stderr: {})",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    examples.len()
}

/// The hash Codex keeps as `trusted_hash` for the pre-tool hook `handler` of a group with
/// `matcher`: the sha256 of the hook's identity (its handler normalized, Codex's
/// defaults filled in) as sorted JSON. Written out here from what Codex does, apart from
/// the library's own, so that the two check each other.
pub fn codex_trusted_hash(matcher: Option<&str>, handler: &serde_json::Value) -> String {
    use sha2::Digest;
    let mut hook = serde_json::json!({
        "type": "command",
        "command": handler["command"],
        "timeout": handler["timeout"].as_u64().unwrap_or(600).max(1),
        "async": handler["async"].as_bool().unwrap_or(false),
    });
    if handler["statusMessage"].is_string() {
        hook["statusMessage"] = handler["statusMessage"].clone();
    }
    let mut identity = serde_json::json!({ "event_name": "pre_tool_use", "hooks": [hook] });
    if let Some(m) = matcher {
        identity["matcher"] = m.into();
    }
    let digest = sha2::Sha256::digest(identity.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The lines Codex's `config.toml` needs to run the hook `key` of a trusted `project`.
pub fn codex_trust_lines(project: &str, key: &str, hash: &str) -> String {
    format!(
        "[projects.{project:?}]\ntrust_level = \"trusted\"\n\n[hooks.state.{key:?}]\ntrusted_hash = {hash:?}\n"
    )
}
