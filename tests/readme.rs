//! The README's and the docs' examples are real: every `$ ` line in a fenced block is run
//! with bash and its stdout must be the lines that follow it, byte for byte
//! (`common::doc_examples_hold`); docs/precheck.md is checked by tests/precheck.rs. The
//! set-up commands are the ones `.ci/run` runs.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;

mod common;

fn read(file: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap()
}

#[test]
fn readme_examples_print_what_the_readme_says() {
    let ran = common::doc_examples_hold("README.md");
    assert!(ran >= 6, "found only {ran} README examples");
}

#[test]
fn docs_examples_print_what_the_docs_say() {
    for (doc, least) in [
        ("docs/commands.md", 8),
        ("docs/reference.md", 0),
        ("docs/threat-model.md", 0),
        ("docs/performance.md", 0),
        ("docs/document-reading.md", 0),
        ("docs/layout.md", 0),
    ] {
        let ran = common::doc_examples_hold(doc);
        assert!(ran >= least, "{doc}: found only {ran} examples");
    }
}

#[test]
fn the_readme_is_short_and_its_set_up_commands_are_what_ci_runs() {
    let readme = read("README.md");
    assert!(
        readme.lines().count() <= 250,
        "{} lines",
        readme.lines().count()
    );
    let ci = read(".ci/run");
    for command in ["./run_demo.sh", "cargo test", "cargo test -- --ignored"] {
        assert!(
            readme.contains(&format!("{command} ")) || readme.contains(&format!("`{command}`")),
            "{command}"
        );
        assert!(
            ci.lines().any(|l| l == command),
            ".ci/run does not run `{command}`"
        );
    }
    // The minimum Rust version is the one Cargo.toml declares.
    let manifest: toml::Value = toml::from_str(&read("Cargo.toml")).unwrap();
    let msrv = manifest["package"]["rust-version"].as_str().unwrap();
    assert!(readme.contains(&format!("Rust {msrv} or newer")), "{msrv}");
}

#[test]
fn the_command_table_lists_every_command() {
    let readme = read("README.md");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_omission-gate"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<&str> = help
        .split("Commands:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 9, "{commands:?}");
    for command in commands {
        assert!(
            readme.contains(&format!("| `{command} "))
                || readme.contains(&format!(", `{command} "))
                || readme.contains(&format!("`{command}`")),
            "the README's command table lacks `{command}`"
        );
    }
}

#[test]
fn user_pages_speak_to_users() {
    let mut pages: Vec<String> = [
        "README.md",
        "BENCHMARKS.md",
        "FUZZING.md",
        "examples/README.md",
    ]
    .map(String::from)
    .to_vec();
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    for page in pages {
        let text = read(&page);
        for word in [
            "the seed",
            "SPEC ",
            "issue 3",
            "issue 5",
            "issue 6",
            "(issue ",
            "The issue asked",
            "Issue ",
            "by the helper",
            "helper's branch",
            "README material",
            "the lead",
            "the post",
        ] {
            assert!(!text.contains(word), "{page} says `{word}`");
        }
    }
}

#[test]
fn json_snippets_parse_and_settings_run_the_hook() {
    let readme = read("README.md");
    for block in readme.split("```json\n").skip(1) {
        let body = block.split("```").next().unwrap();
        let v: serde_json::Value =
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
        if body.contains("\"hooks\"") {
            assert!(body.contains("omission-gate hook"), "{v}");
        }
    }
}

#[test]
fn local_links_name_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for link in text.split("](").skip(1) {
            let target = link.split(')').next().unwrap();
            let file = target.split('#').next().unwrap();
            if file.is_empty() || file.contains("://") || file.starts_with("mailto:") {
                continue;
            }
            let path = page.parent().unwrap().join(file);
            assert!(
                path.exists(),
                "{}: link to `{target}`, no such file",
                page.display()
            );
        }
    }
}
