//! Shared helpers for the CLI tests: run the real binary, write temporary inputs.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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

/// Runs omission-gate with arguments and optional stdin.
pub fn run(args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_omission-gate"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn omission-gate");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().expect("exited by a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
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
