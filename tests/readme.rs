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

mod common;

#[test]
fn readme_examples_print_what_the_readme_says() {
    let ran = common::doc_examples_hold("README.md");
    assert!(ran >= 10, "found only {ran} README examples");
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
