#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Inputs of 1 MiB and more take the lean loader in the CLI: its reports must be the
//! exact path's, byte for byte, for check, precheck and pin (computed here by the
//! library, whose `load` is the exact loader), and for the hooks (the same hook with the
//! store on a pipe, which the exact loader reads).

mod common;

use std::process::Command;

use common::{PIPED, run_piped};
use omission_gate::{Action, CheckOptions, Format, PrecheckOptions, Retention, Tool};

const BIN: &str = env!("CARGO_BIN_EXE_omission-gate");

/// A store over 1 MiB: chatter padding around policies, facts (with supersedes and
/// depends_on chains), effects and summaries.
fn big_store() -> String {
    let mut out = String::new();
    let mut seq = 0;
    for i in 0..9000 {
        seq += 1;
        out.push_str(&format!(
            "{{\"id\":\"c{i}\",\"seq\":{seq},\"kind\":\"chatter\",\"text\":\"{}\"}}\n",
            "padding words ".repeat(8)
        ));
        if i % 300 == 7 {
            let n = i / 300;
            seq += 1;
            let sup = if n > 0 {
                format!(",\"supersedes\":\"f{}\"", n - 1)
            } else {
                String::new()
            };
            let dep = if n > 1 {
                format!(",\"depends_on\":[\"f{}\"]", n - 2)
            } else {
                String::new()
            };
            out.push_str(&format!(
                "{{\"id\":\"f{n}\",\"seq\":{seq},\"kind\":\"fact\",\"field\":\"limit\",\"value\":{}{sup}{dep}}}\n",
                100 + n
            ));
            seq += 1;
            let tool = ["pay", "refund", "pa*"][n % 3];
            out.push_str(&format!(
                "{{\"id\":\"p{n}\",\"seq\":{seq},\"kind\":\"policy\",\"scope\":\"{tool}\",\"predicate\":{{\"field\":\"amount\",\"op\":\"gt\",\"value\":\"limit\"}},\"effect\":\"deny\",\"depends_on\":[\"f{n}\"]}}\n"
            ));
            seq += 1;
            out.push_str(&format!(
                "{{\"id\":\"e{n}\",\"seq\":{seq},\"kind\":\"effect\",\"tool\":\"{}\",\"match\":{{\"amount\":{n}}}}}\n",
                ["pay", "refund"][n % 2]
            ));
            seq += 1;
            out.push_str(&format!(
                "{{\"id\":\"s{n}\",\"seq\":{seq},\"kind\":\"summary\",\"text\":\"earlier {n}\"}}\n"
            ));
            // Facts of a field one policy reads (kept ones among them: the newest kept is
            // read from its line at the end), with no depends_on.
            seq += 1;
            let sup = if n > 0 {
                format!(",\"supersedes\":\"g{}\"", n - 1)
            } else {
                String::new()
            };
            out.push_str(&format!(
                "{{\"id\":\"g{n}\",\"seq\":{seq},\"kind\":\"fact\",\"field\":\"region\",\"value\":\"eu-{}\"{sup},\"meta\":{{\"n\":[{n},1.50]}}}}\n",
                n % 3
            ));
            if n == 5 {
                seq += 1;
                out.push_str(&format!(
                    "{{\"id\":\"q{n}\",\"seq\":{seq},\"kind\":\"policy\",\"scope\":\"pay\",\"predicate\":{{\"field\":\"region\",\"op\":\"eq\",\"value\":\"eu-1\"}},\"effect\":\"require_approval\"}}\n"
                ));
            }
        }
    }
    assert!(out.len() > 1 << 20);
    out
}

fn run(args: &[&str]) -> Vec<u8> {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 2), "{args:?}");
    out.stdout
}

/// The ids of a `--kept` list.
fn ids(kept: &str) -> Vec<String> {
    kept.split(',').map(str::to_string).collect()
}

/// The tools of a `--tools` list of names.
fn tools(names: &str) -> Vec<Tool> {
    let names: Vec<&str> = names.split(',').collect();
    Tool::list_from_json(&serde_json::json!(names)).unwrap()
}

fn action(text: &str) -> Action {
    Action::from_json(&serde_json::from_str(text).unwrap()).unwrap()
}

fn json(report: Result<omission_gate::Report, omission_gate::InputError>) -> String {
    String::from_utf8(report.unwrap().render(Format::Json)).unwrap()
}

#[test]
fn lean_cli_reports_are_the_exact_reports() {
    let dir = std::env::temp_dir().join(format!("og-lean-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("store.jsonl");
    let text = big_store();
    std::fs::write(&path, &text).unwrap();
    let p = path.to_str().unwrap();
    let exact = omission_gate::load(p, text.as_bytes()).unwrap();
    let kept_text = "c8990,p29,f28,c5,e3,s29,f1,g10,g20,e4";
    let kept = ids(kept_text);

    // Globs stand for every tool they cover: `*`, one that meets the `pa*` scope and
    // covers `pay` and `pat` (no record names `pat`), one that covers nothing.
    for names in [
        Some("pay"),
        Some("pay,refund"),
        None,
        Some("*"),
        Some("p*t"),
        Some("*y"),
        Some("zz*"),
    ] {
        // precheck
        let t = names.map(tools);
        let want = json(omission_gate::precheck(
            &exact,
            Retention::Given,
            Some(&kept),
            t.as_deref(),
            PrecheckOptions::default(),
        ));
        // Only `*` and no list cover every name the records give (`pay`, `refund`,
        // `pa*`): the lean store holds none of a name left out, and still notes it.
        let left_out = !matches!(names, None | Some("*"));
        assert_eq!(want.contains("not-listed"), left_out, "{names:?}: {want}");
        let mut args = vec!["check", "--precheck", p, "--kept", kept_text];
        if let Some(names) = names {
            args.extend(["--tools", names]);
        }
        args.extend(["--format", "json"]);
        assert_eq!(
            String::from_utf8(run(&args)).unwrap(),
            want,
            "precheck {names:?}"
        );
        // pin
        let want = omission_gate::pin(&exact, t.as_deref(), None, pin_options())
            .unwrap()
            .render(Format::Json);
        let want = String::from_utf8(want).unwrap();
        assert_eq!(want.contains("not-listed"), left_out, "pin {names:?}");
        let mut args = vec!["pin", p, "--max-calls", "64"];
        if let Some(names) = names {
            args.extend(["--tools", names]);
        }
        args.extend(["--format", "json"]);
        assert_eq!(
            String::from_utf8(run(&args)).unwrap(),
            want,
            "pin {names:?}"
        );
    }

    // pin --budget: over the pinned tokens, a little room, much room, and everything.
    for budget in [10u64, 2_000, 20_000, 200_000, 10_000_000] {
        let want =
            omission_gate::pin(&exact, Some(&tools("pay")), Some(budget), pin_options()).unwrap();
        let notes: Vec<_> = want.findings.iter().map(|f| f.code.as_str()).collect();
        assert!(notes.contains(&"not-listed"), "budget {budget}: {notes:?}");
        let b = budget.to_string();
        for format in ["json", "ids"] {
            let got = run(&[
                "pin",
                p,
                "--tools",
                "pay",
                "--budget",
                &b,
                "--max-calls",
                "64",
                "--format",
                format,
            ]);
            let want = if format == "json" {
                String::from_utf8(want.render(Format::Json)).unwrap()
            } else {
                want.kept
                    .iter()
                    .flatten()
                    .map(|id| format!("{id}\n"))
                    .collect()
            };
            assert_eq!(String::from_utf8(got).unwrap(), want, "budget {budget}");
        }
    }

    // check, also with the newest fact of a read field kept (and a kept rule on it)
    let action_text = r#"{"tool":"pay","params":{"amount":500}}"#;
    let a = action(action_text);
    for kept_text in [kept_text, "g29,g10,f0,q5,e5,c7"] {
        let want = json(omission_gate::check(
            &exact,
            Retention::Given,
            Some(&ids(kept_text)),
            &a,
            CheckOptions::default(),
        ));
        let got = run(&[
            "check",
            p,
            "--kept",
            kept_text,
            "--action",
            action_text,
            "--format",
            "json",
        ]);
        assert_eq!(String::from_utf8(got).unwrap(), want, "{kept_text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_pre_tool_hook_on_a_large_store_replies_as_on_the_exact_load() {
    let scratch = common::Scratch::new();
    let p = scratch.file("store.jsonl", big_store().as_bytes());
    // A BLOCK (p29 dropped, and dropped facts it reads), a PASS, an ERROR (no amount:
    // unresolved), and a kept id that names no record (the exact path's error).
    for (kept_text, tool, params) in [
        (
            "c8990,f28,c5,e3,s29,f1,g10,g20,e4",
            "pay",
            r#"{"amount":500}"#,
        ),
        (
            "c8990,p29,f28,f29,c5,e3,s29,f1,g10,g20,g29,e4",
            "refund",
            r#"{"amount":1}"#,
        ),
        ("c8990,f28,c5", "pay", r#"{"currency":"EUR"}"#),
        ("c8990,nope", "pay", r#"{"amount":500}"#),
    ] {
        let payload = format!(
            r#"{{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/r","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"{tool}","tool_input":{params},"tool_use_id":"toolu_1"}}"#
        );
        let got = common::run(
            &["hook", "claude-code", "--store", &p, "--kept", kept_text],
            Some(payload.as_bytes()),
        );
        let want = run_piped(
            &["hook", "claude-code", "--store", PIPED, "--kept", kept_text],
            &p,
            Some(payload.as_bytes()),
        );
        assert_eq!(got.stderr, want.stderr, "{kept_text} {tool} {params}");
        assert_eq!(got.stdout, want.stdout);
        assert_eq!(got.code, want.code);
        assert!(!want.stdout.is_empty() || !want.stderr.is_empty());
    }
}

/// The big store as a document, with its own `kept` and `action`.
fn big_document(kept: &[&str], action: &str) -> String {
    let store = big_store();
    let records: Vec<&str> = store.lines().collect();
    let kept: Vec<String> = kept.iter().map(|k| format!("\"{k}\"")).collect();
    format!(
        "{{\"records\":[\n{}\n],\"kept\":[{}],\"action\":{action}}}\n",
        records.join(",\n"),
        kept.join(",")
    )
}

/// The library's one loader entry decides for itself how to read an input: on a large
/// one (a file, or standard input's bytes), under any retention, the commands give what
/// the exact loader gives.
#[test]
fn the_loader_entry_gives_the_exact_report_on_a_large_input() {
    let scratch = common::Scratch::new();
    let text = big_store();
    let p = scratch.file("store.jsonl", text.as_bytes());
    let exact = omission_gate::load(&p, text.as_bytes()).unwrap();
    let kept_text = "c8990,p29,f28,c5,e3,s29,f1,g10,g20,e4";
    let kept = ids(kept_text);
    let action_text = r#"{"tool":"pay","params":{"amount":500}}"#;
    let a = action(action_text);
    // The input by its path, or on standard input.
    let from = |input: &str, args: &[&str]| {
        let mut all = vec![args[0], input];
        all.extend_from_slice(&args[1..]);
        let stdin = (input == "-").then_some(text.as_bytes());
        let out = common::run(&all, stdin);
        assert!(out.code <= 2, "{all:?}: {}", out.stderr);
        out.stdout
    };
    for retention in [
        Retention::Given,
        Retention::HeadTail(8),
        Retention::Recency(16),
        Retention::HeadTail(0),
        Retention::HeadTail(5000),
    ] {
        // The kept ids go with `given` only (beside another retention they are refused).
        let given = (retention == Retention::Given).then_some(&kept[..]);
        let want_check = json(omission_gate::check(
            &exact,
            retention,
            given,
            &a,
            CheckOptions::default(),
        ));
        let want_precheck = json(omission_gate::precheck(
            &exact,
            retention,
            given,
            None,
            PrecheckOptions::default(),
        ));
        let r = retention.to_string();
        for input in [p.as_str(), "-"] {
            let mut flags = vec!["--retention", r.as_str(), "--format", "json"];
            // --kept goes with `given` only (beside another retention it is refused).
            if retention == Retention::Given {
                flags.extend(["--kept", kept_text]);
            }
            let mut check = vec!["check", "--action", action_text];
            check.extend(&flags);
            assert_eq!(from(input, &check), want_check, "check {r} {input}");
            let mut precheck = vec!["check", "--precheck"];
            precheck.extend(&flags);
            assert_eq!(
                from(input, &precheck),
                want_precheck,
                "precheck {r} {input}"
            );
        }
    }
    // A retention that keeps the ends of the `seq` order, on an input whose lines are
    // not in `seq` order (its first and last lines swapped, and a line in the middle moved
    // to the end): the kept set is still read by `seq`.
    let mut lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    lines.swap(0, n - 1);
    let middle = lines.remove(n / 2);
    lines.push(middle);
    let shuffled = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let q = scratch.file("shuffled.jsonl", shuffled.as_bytes());
    let exact_q = omission_gate::load(&q, shuffled.as_bytes()).unwrap();
    for retention in [
        Retention::HeadTail(8),
        Retention::Recency(3),
        Retention::HeadTail(0),
    ] {
        let want = json(omission_gate::check(
            &exact_q,
            retention,
            None,
            &a,
            CheckOptions::default(),
        ));
        let r = retention.to_string();
        let args = [
            "check",
            "--retention",
            &r,
            "--action",
            action_text,
            "--format",
            "json",
        ];
        let got = common::run(&[&[args[0], q.as_str()], &args[1..]].concat(), None);
        assert_eq!(got.stdout, want, "shuffled {r} file");
        let got = common::run(
            &[&[args[0], "-"], &args[1..]].concat(),
            Some(shuffled.as_bytes()),
        );
        assert_eq!(got.stdout, want, "shuffled {r} stdin");
    }

    // pin --budget's two passes, from the file and from standard input.
    for budget in [None, Some(10u64), Some(20_000), Some(10_000_000)] {
        let want = omission_gate::pin(
            &exact,
            Some(&tools("pay")),
            budget,
            omission_gate::PinOptions {
                max_calls: 64,
                ..Default::default()
            },
        )
        .unwrap()
        .render(Format::Json);
        let b = budget.map(|b| b.to_string());
        for input in [p.as_str(), "-"] {
            let mut args = vec![
                "pin",
                "--tools",
                "pay",
                "--max-calls",
                "64",
                "--format",
                "json",
            ];
            if let Some(b) = &b {
                args.extend(["--budget", b]);
            }
            assert_eq!(
                from(input, &args),
                String::from_utf8(want.clone()).unwrap(),
                "pin {budget:?} {input}"
            );
        }
    }
    // An error is the exact loader's: a kept id that names no record.
    let args = |input| ["check", input, "--kept", "c1,nope", "--action", action_text];
    let got = common::run(&args(&p), None);
    let want = run_piped(&args(PIPED), &p, None);
    assert_eq!((got.code, &got.stderr), (want.code, &want.stderr));
    assert!(got.stderr.contains("`nope`"), "{}", got.stderr);
}

/// `sweep`, `check --retention` and the PreCompact hook on a large document give what
/// the same commands give on the store read exactly (by the library, or on a pipe).
#[test]
fn sweep_retentions_and_precompact_on_a_large_store_are_the_exact_ones() {
    let scratch = common::Scratch::new();
    let action = r#"{"tool":"pay","params":{"amount":500}}"#;
    let doc = big_document(&["c8990", "p29", "f28", "c5", "e3", "s29", "f1"], action);
    assert!(doc.len() > 1 << 20);
    let p = scratch.file("store.json", doc.as_bytes());
    let exact = omission_gate::load(&p, doc.as_bytes()).unwrap();
    let a = exact.action.clone().unwrap();
    let mut want_cells = Vec::new();
    for retention in [
        Retention::Given,
        Retention::HeadTail(8),
        Retention::Recency(16),
    ] {
        let report =
            omission_gate::check(&exact, retention, None, &a, CheckOptions::default()).unwrap();
        let r = retention.to_string();
        let got = run(&["check", &p, "--retention", &r, "--format", "json"]);
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(report.render(Format::Json)).unwrap(),
            "check --retention {r}"
        );
        let severity = match report.verdict {
            omission_gate::Verdict::Pass => None,
            omission_gate::Verdict::Block => Some(omission_gate::Severity::Block),
            omission_gate::Verdict::Error => Some(omission_gate::Severity::Error),
        };
        let codes = report.verdict_codes(severity).join(",");
        let codes = if codes.is_empty() {
            "-".to_string()
        } else {
            codes
        };
        want_cells.push(format!("{p}\t{r}\t{}\t{codes}", report.verdict.as_str()));
    }
    let got = String::from_utf8(run(&[
        "sweep",
        &p,
        "--retention",
        "given",
        "--retention",
        "head_tail:8",
        "--retention",
        "recency:16",
        "--format",
        "tsv",
    ]))
    .unwrap();
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines[..3], want_cells[..]);
    // PreCompact: the records to keep, as on the exact load.
    let payload = br#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/r","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}"#;
    let hook = |store| ["hook", "claude-code-precompact", "--store", store];
    let out = common::run(&hook(&p), Some(payload));
    let want = run_piped(&hook(PIPED), &p, Some(payload));
    assert_eq!((out.code, &out.stdout), (want.code, &want.stdout));
    assert!(!out.stdout.is_empty());
}

fn pin_options() -> omission_gate::PinOptions {
    omission_gate::PinOptions {
        max_calls: 64,
        ..Default::default()
    }
}
