//! Golden reports for the fixtures: the exact bytes `check` prints, text and JSON.
//! Regenerate deliberately with `UPDATE_GOLDEN=1 cargo test --test golden` and review the
//! diff; a test run never rewrites them.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
use common::run;

fn golden(name: &str, args: &[&str]) {
    let r = run(args, None);
    assert!(r.code <= 2, "{name}: exit {}", r.code);
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    let got = format!("{}(exit {})\n", r.stdout, r.code);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(format!("{}/tests/golden", env!("CARGO_MANIFEST_DIR"))).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing {path}: run with UPDATE_GOLDEN=1"));
    assert!(
        got == want,
        "{name} differs from its golden report:\n--- want\n{want}\n--- got\n{got}"
    );
}

const FIXTURES: [&str; 7] = [
    "fx1_refund_thread",
    "fx2_superseded_fact",
    "fx3_genuinely_safe",
    "fx4_rolling_summary",
    "fx5_unresolved_field",
    "fx6_stale_permit",
    "fx7_stale_deny",
];

#[test]
fn fixture_reports_text() {
    for fx in FIXTURES {
        golden(
            &format!("{fx}.txt"),
            &[
                "check",
                &format!("fixtures/{fx}.json"),
                "--retention",
                "given",
            ],
        );
    }
}

#[test]
fn fixture_reports_json() {
    for fx in FIXTURES {
        golden(
            &format!("{fx}.json"),
            &[
                "check",
                &format!("fixtures/{fx}.json"),
                "--retention",
                "given",
                "--format",
                "json",
            ],
        );
    }
}

#[test]
fn fixture_reports_under_other_retentions() {
    for fx in FIXTURES {
        for r in ["head_tail:8", "recency:16"] {
            let tag = r.replace(':', "-");
            golden(
                &format!("{fx}.{tag}.txt"),
                &["check", &format!("fixtures/{fx}.json"), "--retention", r],
            );
        }
    }
}

#[test]
fn refund_thread_action_variants() {
    for (tag, action) in [
        (
            "120",
            r#"{"tool":"refunds.create","params":{"amount":120}}"#,
        ),
        (
            "5001",
            r#"{"tool":"refunds.create","params":{"amount":5001}}"#,
        ),
        (
            "notes",
            r#"{"tool":"notes.append","params":{"ticket":7741}}"#,
        ),
    ] {
        golden(
            &format!("fx1_refund_thread.action-{tag}.txt"),
            &[
                "check",
                "fixtures/fx1_refund_thread.json",
                "--action",
                action,
            ],
        );
    }
}

#[test]
fn rolling_summary_variants() {
    golden(
        "fx4_rolling_summary.allow-unevaluable.txt",
        &[
            "check",
            "fixtures/fx4_rolling_summary.json",
            "--allow-unevaluable",
        ],
    );
    golden(
        "fx4_rolling_summary_as_chatter.txt",
        &[
            "check",
            "fixtures/variants/fx4_rolling_summary_as_chatter.json",
        ],
    );
}

#[test]
fn sweep_table() {
    golden(
        "sweep.txt",
        &[
            "sweep",
            "fixtures/fx1_refund_thread.json",
            "fixtures/fx2_superseded_fact.json",
            "fixtures/fx3_genuinely_safe.json",
            "fixtures/fx4_rolling_summary.json",
            "fixtures/fx5_unresolved_field.json",
            "fixtures/fx6_stale_permit.json",
            "fixtures/fx7_stale_deny.json",
            "--retention",
            "given",
            "--retention",
            "head_tail:8",
            "--retention",
            "recency:16",
        ],
    );
}
