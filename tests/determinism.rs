//! Byte-for-byte determinism, layout invariance of verdicts and fingerprints, the input
//! forms (document, JSON Lines, stdin, flags) and `verify`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
use common::{Scratch, fixture, run};
use serde_json::Value;

fn fx1() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("fx1_refund_thread.json")).unwrap())
        .unwrap()
}

#[test]
fn two_runs_give_identical_bytes() {
    for format in ["text", "json"] {
        let a = run(
            &[
                "check",
                &fixture("fx1_refund_thread.json"),
                "--format",
                format,
            ],
            None,
        );
        let b = run(
            &[
                "check",
                &fixture("fx1_refund_thread.json"),
                "--format",
                format,
            ],
            None,
        );
        assert_eq!(a.stdout, b.stdout);
        assert_eq!(a.code, 1);
    }
}

#[test]
fn shuffled_reformatted_records_give_the_same_report() {
    let original = run(&["check", &fixture("fx1_refund_thread.json")], None);
    let mut doc = fx1();
    let records = doc["records"].as_array_mut().unwrap();
    records.reverse();
    records.rotate_left(17);
    // Pretty-printed with different indentation, keys in serde_json's sorted order.
    let text = serde_json::to_string_pretty(&doc)
        .unwrap()
        .replace("  ", "\t");
    let s = Scratch::new();
    let path = s.file("shuffled.json", text.as_bytes());
    let shuffled = run(&["check", &path], None);
    assert_eq!(
        shuffled.stdout, original.stdout,
        "file order and layout must not reach the report"
    );
}

#[test]
fn the_same_records_as_json_lines_give_the_same_report() {
    let doc = fx1();
    let lines: String = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}\n", serde_json::to_string(r).unwrap()))
        .collect();
    let kept: Vec<&str> = doc["kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let s = Scratch::new();
    let path = s.file("fx1.jsonl", lines.as_bytes());
    let kept_file = s.file("kept.txt", kept.join("\n").as_bytes());
    let action = serde_json::to_string(&doc["action"]).unwrap();
    let from_file = run(
        &[
            "check",
            &path,
            "--kept",
            &format!("@{kept_file}"),
            "--action",
            &action,
        ],
        None,
    );
    let original = run(&["check", &fixture("fx1_refund_thread.json")], None);
    assert_eq!(from_file.stdout, original.stdout);
    let from_stdin = run(
        &["check", "-", "--kept", &kept.join(","), "--action", &action],
        Some(lines.as_bytes()),
    );
    assert_eq!(from_stdin.stdout, original.stdout);
}

#[test]
fn flags_override_document_keys() {
    let r = run(
        &[
            "check",
            &fixture("fx1_refund_thread.json"),
            "--kept",
            "f_011",
            "--action",
            r#"{"tool":"refunds.create","params":{"amount":8400}}"#,
        ],
        None,
    );
    assert!(
        r.labelled("compaction")[0]
            .starts_with("52 records, 1 kept, 51 dropped (retention=given, kept-sha256="),
        "{}",
        r.stdout
    );
    assert_eq!(r.code, 0, "the rule is kept: {}", r.stdout);
}

#[test]
fn kept_fingerprint_changes_only_with_kept_content() {
    let base = run(&["check", &fixture("fx1_refund_thread.json")], None).labelled("compaction")[0]
        .to_string();
    let edit = |index: usize| {
        let mut doc = fx1();
        doc["records"][index]["text"] = Value::String("edited".into());
        let s = Scratch::new();
        let path = s.file("e.json", serde_json::to_string(&doc).unwrap().as_bytes());
        run(&["check", &path], None).labelled("compaction")[0].to_string()
    };
    assert_eq!(
        edit(20),
        base,
        "record 21 is dropped: its content does not enter the fingerprint"
    );
    assert_ne!(edit(2), base, "record 3 is kept: its content does");
}

#[test]
fn verify_accepts_genuine_reports_and_rejects_a_changed_byte() {
    let s = Scratch::new();
    for format in ["text", "json"] {
        let report = run(
            &[
                "check",
                &fixture("fx6_stale_permit.json"),
                "--format",
                format,
            ],
            None,
        )
        .stdout;
        let good = s.file("good", report.as_bytes());
        let ok = run(&["verify", &good], None);
        assert_eq!(ok.code, 0, "{}", ok.stderr);
        assert!(ok.stdout.starts_with("ok: sha256 "));
        let mut bytes = report.into_bytes();
        let mid = bytes.len() / 2;
        bytes[mid] = if bytes[mid] == b'x' { b'y' } else { b'x' };
        let bad = s.file("bad", &bytes);
        let r = run(&["verify", &bad], None);
        assert_eq!(r.code, 1, "{format}: a changed byte must fail verification");
        assert!(r.stderr.contains("seal mismatch"), "{}", r.stderr);
    }
    assert_eq!(run(&["verify", "does/not/exist"], None).code, 2);
}

#[test]
fn verify_refuses_what_is_no_sealed_report() {
    // A seal line over no report (an empty body, or any text given a seal line) matches
    // its bytes, and "ok" (exit 0) vouched for a verdict that is not there; a file with
    // no seal cannot be verified at all. Both are exit 2, apart from a changed report
    // (exit 1).
    let s = Scratch::new();
    let digest = |body: &str| -> String {
        use sha2::{Digest, Sha256};
        Sha256::digest(body.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let seal = |body: &str| format!("{body}sha256    : {}\n", digest(body));
    let seal_json = |body: &str| format!("{body}  \"sha256\": \"{}\"\n}}\n", digest(body));
    let fx3 = fixture("fx3_genuinely_safe.json");
    let pass = run(&["check", &fx3], None).stdout;
    let json = run(&["check", &fx3, "--format", "json"], None).stdout;
    // The sealed JSON report, its closing brace taken off, with a member after its seal.
    let pass_json = format!("{},\n", json.strip_suffix("\n}\n").unwrap());
    // The JSON report with its seal taken off and another verdict member appended, as the
    // text one above with another verdict line.
    let unsealed_json = json.get(..json.rfind("  \"sha256\": ").unwrap()).unwrap();
    let verdicts_json = format!("{unsealed_json}  \"verdict\": \"BLOCK\",\n");
    for (name, bytes, says) in [
        ("only-seal", seal(""), "not a report"),
        (
            "any-text",
            seal("verdict: PASS\nall fine\n"),
            "not a report",
        ),
        ("json", seal("{\n  \"exit_code\": 0,\n"), "not a report"),
        // A report with another verdict and seal appended: its seal matched.
        (
            "appended",
            seal(&format!(
                "{pass}verdict   : BLOCK (dropped-binding-constraint) exit 1\n"
            )),
            "not a report",
        ),
        ("appended-json", seal_json(&pass_json), "not a report"),
        ("verdicts-json", seal_json(&verdicts_json), "not a report"),
        (
            "no-seal",
            "verdict   : PASS exit 0\n".to_string(),
            "no seal",
        ),
    ] {
        let path = s.file(name, bytes.as_bytes());
        let r = run(&["verify", &path], None);
        assert_eq!(r.code, 2, "{name}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{name}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{name}: {}", r.stdout);
    }
}

#[test]
fn sweep_exit_is_the_worst_verdict() {
    let pass = run(&["sweep", &fixture("fx3_genuinely_safe.json")], None);
    assert_eq!(pass.code, 0);
    let block = run(
        &[
            "sweep",
            &fixture("fx3_genuinely_safe.json"),
            &fixture("fx1_refund_thread.json"),
        ],
        None,
    );
    assert_eq!(block.code, 1);
    assert!(
        block
            .stdout
            .ends_with("1 PASS, 1 BLOCK, 0 ERROR -> overall exit 1\n"),
        "{}",
        block.stdout
    );
    let error = run(
        &[
            "sweep",
            &fixture("fx1_refund_thread.json"),
            "does/not/exist.json",
        ],
        None,
    );
    assert_eq!(error.code, 2);
    assert!(
        error.stdout.contains("ERROR invalid-input"),
        "{}",
        error.stdout
    );
}

#[test]
fn a_kept_file_that_is_a_pipe_is_read_once() {
    // `--kept @<(...)` is a pipe: reading it twice (once per loading path) would see it
    // empty the second time and silently keep nothing.
    let bin = env!("CARGO_BIN_EXE_omission-gate");
    let script = format!(
        "{bin} check fixtures/fx1_refund_thread.json --kept @<(printf 'f_011\\nf_020\\n') --action @<(printf '%s' '{{\"tool\":\"refunds.create\",\"params\":{{\"amount\":8400}}}}')"
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("52 records, 2 kept, 50 dropped"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}
