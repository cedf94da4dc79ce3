//! The README's examples are real: every `$ omission-gate ...` line in a fenced block is
//! run with bash from the repository root, and its stdout must be the lines that follow
//! it in the README, byte for byte.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;
use std::process::Command;

#[test]
fn readme_examples_print_what_the_readme_says() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(Path::new(root).join("README.md")).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_omission-gate"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut examples = 0;
    let mut in_block = false;
    let mut current: Option<(String, Vec<String>)> = None;
    let mut all = Vec::new();
    for line in readme.lines() {
        if line.starts_with("```") {
            if let Some(done) = current.take() {
                all.push(done);
            }
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            if let Some(done) = current.take() {
                all.push(done);
            }
            current = Some((cmd.to_string(), Vec::new()));
        } else if let Some((_, out)) = current.as_mut() {
            out.push(line.to_string());
        }
    }
    for (cmd, expected) in all {
        if !cmd.starts_with("omission-gate ") {
            continue;
        }
        examples += 1;
        let out = Command::new("bash")
            .arg("-c")
            .arg(&cmd)
            .env("PATH", &path)
            .current_dir(root)
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let want = expected
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>();
        assert_eq!(stdout, want, "README example `{cmd}` prints something else");
    }
    assert!(examples >= 4, "found only {examples} README examples");
}

#[test]
fn readme_json_snippets_parse() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut blocks = readme.split("```json\n").skip(1).peekable();
    assert!(blocks.peek().is_some(), "the README has settings snippets");
    for block in blocks {
        let body = block.split("```").next().unwrap();
        let v: serde_json::Value =
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert!(body.contains("omission-gate hook"), "{v}");
    }
}
