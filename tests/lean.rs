#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Inputs of 1 MiB and more take the lean loader in the CLI: its reports must be the
//! exact path's, byte for byte, for check, precheck and pin (computed here by the
//! library's exact loader).

mod common;

use std::process::Command;

use omission_gate::compaction::{Compaction, Retention};
use omission_gate::input::{self, kept_from_flag, tools_from_flag};
use omission_gate::record::Limits;
use omission_gate::{Format, PrecheckOptions, Report};

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

#[test]
fn lean_cli_reports_are_the_exact_reports() {
    let dir = std::env::temp_dir().join(format!("og-lean-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("store.jsonl");
    let text = big_store();
    std::fs::write(&path, &text).unwrap();
    let p = path.to_str().unwrap();
    let exact = input::load(p, text.as_bytes(), Limits::default()).unwrap();
    let kept_text = "c8990,p29,f28,c5,e3,s29,f1,g10,g20,e4";
    let kept = kept_from_flag("--kept", kept_text, false).unwrap();
    let c = Compaction::new(&exact.store, Retention::Given, Some(&kept), "--kept").unwrap();

    // Globs stand for every tool they cover: `*`, one that meets the `pa*` scope and
    // covers `pay` and `pat` (no record names `pat`), one that covers nothing.
    for tools in [
        Some("pay"),
        Some("pay,refund"),
        None,
        Some("*"),
        Some("p*t"),
        Some("*y"),
        Some("zz*"),
    ] {
        // precheck
        let t = tools.map_or_else(
            || exact.tools_or_named(),
            |t| tools_from_flag("--tools", t).unwrap(),
        );
        let outcome = omission_gate::precheck::precheck(
            &exact.store,
            &c,
            &exact.totals,
            &t,
            PrecheckOptions::default(),
        );
        let want = Report::precheck(&t, &c, &exact.totals, outcome).render(Format::Json);
        let mut args = vec!["check", "--precheck", p, "--kept", kept_text];
        if let Some(tools) = tools {
            args.extend(["--tools", tools]);
        }
        args.extend(["--format", "json"]);
        assert_eq!(
            String::from_utf8(run(&args)).unwrap(),
            String::from_utf8(want).unwrap(),
            "precheck {tools:?}"
        );
        // pin
        let want = omission_gate::pin::report(&exact.store, &t, None, 64).render(Format::Json);
        let mut args = vec!["pin", p, "--max-calls", "64"];
        if let Some(tools) = tools {
            args.extend(["--tools", tools]);
        }
        args.extend(["--format", "json"]);
        assert_eq!(
            String::from_utf8(run(&args)).unwrap(),
            String::from_utf8(want).unwrap(),
            "pin {tools:?}"
        );
    }

    // pin --budget: over the pinned tokens, a little room, much room, and everything.
    for budget in [10u64, 2_000, 20_000, 200_000, 10_000_000] {
        let t = tools_from_flag("--tools", "pay").unwrap();
        let want = omission_gate::pin::report(&exact.store, &t, Some(budget), 64);
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
    let action = r#"{"tool":"pay","params":{"amount":500}}"#;
    let a = input::action_from_flag("--action", action).unwrap();
    for kept_text in [kept_text, "g29,g10,f0,q5,e5,c7"] {
        let kept = kept_from_flag("--kept", kept_text, false).unwrap();
        let c = Compaction::new(&exact.store, Retention::Given, Some(&kept), "--kept").unwrap();
        let outcome =
            omission_gate::gate::check(&exact.store, &c, &exact.totals, &a, Default::default());
        let want = Report::check(&a, &c, &exact.totals, outcome).render(Format::Json);
        let got = run(&[
            "check", p, "--kept", kept_text, "--action", action, "--format", "json",
        ]);
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap(),
            "{kept_text}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_pre_tool_hook_on_a_large_store_replies_as_on_the_exact_load() {
    use omission_gate::hook::{self, Adapter, Harness, KeptFrom, Setup};
    use std::io::Write;
    use std::process::Stdio;
    let dir = std::env::temp_dir().join(format!("og-lean-hook-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("store.jsonl");
    let text = big_store();
    std::fs::write(&path, &text).unwrap();
    let p = path.to_str().unwrap();
    let exact = input::load(p, text.as_bytes(), Limits::default()).unwrap();
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
        let setup = Setup {
            input: exact.clone(),
            kept: Some(kept_from_flag("--kept", kept_text, false).unwrap()),
            kept_origin: "--kept".to_string(),
            retention: Retention::Given,
            tools: None,
            options: Default::default(),
            kept_from: KeptFrom::Kept,
            context: None,
            compaction: None,
        };
        let want = hook::answer(
            Adapter::PreTool(Harness::ClaudeCode),
            payload.as_bytes(),
            Ok(&setup),
        );
        let mut child = Command::new(BIN)
            .args(["hook", "claude-code", "--store", p, "--kept", kept_text])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            String::from_utf8(want.stderr).unwrap(),
            "{kept_text} {tool} {params}"
        );
        assert_eq!(out.stdout, want.stdout);
        assert_eq!(out.status.code(), Some(i32::from(want.exit.code())));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn source_is_bytes(source: &input::Source<'_>) -> bool {
    matches!(source, input::Source::Bytes(_))
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
/// one (a file or bytes already read), under any retention, it gives what the exact
/// loader gives.
#[test]
fn the_loader_entry_gives_the_exact_report_on_a_large_input() {
    let scratch = common::Scratch::new();
    let text = big_store();
    let p = scratch.file("store.jsonl", text.as_bytes());
    let exact = input::load(&p, text.as_bytes(), Limits::default()).unwrap();
    let kept_text = "c8990,p29,f28,c5,e3,s29,f1,g10,g20,e4";
    let kept_flag = ("--kept".to_string(), kept_text.to_string(), false);
    let action_text = r#"{"tool":"pay","params":{"amount":500}}"#;
    let action_flag = ("--action".to_string(), action_text.to_string(), false);
    let a = input::action_from_flag("--action", action_text).unwrap();
    for retention in [
        Retention::Given,
        Retention::HeadTail(8),
        Retention::Recency(16),
        Retention::HeadTail(0),
        Retention::HeadTail(5000),
    ] {
        let kept = kept_from_flag("--kept", kept_text, false).unwrap();
        let c = Compaction::new(&exact.store, retention, Some(&kept), "--kept").unwrap();
        let outcome =
            omission_gate::gate::check(&exact.store, &c, &exact.totals, &a, Default::default());
        let want_check = Report::check(&a, &c, &exact.totals, outcome).render(Format::Json);
        let t = exact.tools_or_named();
        let outcome = omission_gate::precheck::precheck(
            &exact.store,
            &c,
            &exact.totals,
            &t,
            PrecheckOptions::default(),
        );
        let want_precheck = Report::precheck(&t, &c, &exact.totals, outcome).render(Format::Json);
        for source in [
            input::Source::Path(&p),
            input::Source::Bytes(text.as_bytes()),
        ] {
            let request = input::Request {
                origin: &p,
                source,
                // Under another retention, with --kept too (the exact loader reads it).
                kept: (retention == Retention::Given || source_is_bytes(&source))
                    .then_some(&kept_flag),
                retention,
                limits: Limits::default(),
            };
            let got = input::load_check(&request, Some(&action_flag), |loaded, action| {
                let outcome = omission_gate::gate::check(
                    &loaded.input.store,
                    &loaded.compaction,
                    &loaded.input.totals,
                    action,
                    Default::default(),
                );
                Report::check(action, &loaded.compaction, &loaded.input.totals, outcome)
                    .render(Format::Json)
            })
            .unwrap();
            assert_eq!(got, want_check, "check {retention} {source:?}");
            let got = input::load_precheck(&request, None, |loaded, tools| {
                let outcome = omission_gate::precheck::precheck(
                    &loaded.input.store,
                    &loaded.compaction,
                    &loaded.input.totals,
                    tools,
                    PrecheckOptions::default(),
                );
                Report::precheck(tools, &loaded.compaction, &loaded.input.totals, outcome)
                    .render(Format::Json)
            })
            .unwrap();
            assert_eq!(got, want_precheck, "precheck {retention} {source:?}");
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
    let exact = input::load(&q, shuffled.as_bytes(), Limits::default()).unwrap();
    for retention in [
        Retention::HeadTail(8),
        Retention::Recency(3),
        Retention::HeadTail(0),
    ] {
        let c = Compaction::new(&exact.store, retention, None, &q).unwrap();
        let outcome =
            omission_gate::gate::check(&exact.store, &c, &exact.totals, &a, Default::default());
        let want = Report::check(&a, &c, &exact.totals, outcome).render(Format::Json);
        for source in [
            input::Source::Path(&q),
            input::Source::Bytes(shuffled.as_bytes()),
        ] {
            let request = input::Request {
                origin: &q,
                source,
                kept: None,
                retention,
                limits: Limits::default(),
            };
            let got = input::load_check(&request, Some(&action_flag), |loaded, action| {
                let outcome = omission_gate::gate::check(
                    &loaded.input.store,
                    &loaded.compaction,
                    &loaded.input.totals,
                    action,
                    Default::default(),
                );
                Report::check(action, &loaded.compaction, &loaded.input.totals, outcome)
                    .render(Format::Json)
            })
            .unwrap();
            assert_eq!(got, want, "shuffled {retention} {source:?}");
        }
    }
    let exact = input::load(&p, text.as_bytes(), Limits::default()).unwrap();

    // pin --budget's two passes, from the file and from bytes already read.
    let tools = ("--tools".to_string(), "pay".to_string(), false);
    let t = tools_from_flag("--tools", "pay").unwrap();
    for budget in [None, Some(10u64), Some(20_000), Some(10_000_000)] {
        let want = omission_gate::pin::report(&exact.store, &t, budget, 64).render(Format::Json);
        for source in [
            input::Source::Path(&p),
            input::Source::Bytes(text.as_bytes()),
        ] {
            let request = input::Request {
                origin: &p,
                source,
                kept: None,
                retention: Retention::Given,
                limits: Limits::default(),
            };
            let got = input::pin_report(&request, Some(&Ok(tools.clone())), budget, 64).unwrap();
            assert_eq!(got.render(Format::Json), want, "pin {budget:?} {source:?}");
        }
    }
    // An error is the exact loader's: a kept id that names no record.
    let bad = ("--kept".to_string(), "c1,nope".to_string(), false);
    let request = input::Request {
        origin: &p,
        source: input::Source::Path(&p),
        kept: Some(&bad),
        retention: Retention::Given,
        limits: Limits::default(),
    };
    let kept = kept_from_flag("--kept", "c1,nope", false).unwrap();
    let want = Compaction::new(&exact.store, Retention::Given, Some(&kept), "--kept").unwrap_err();
    let got = input::load_check(&request, Some(&action_flag), |_, _| ()).unwrap_err();
    assert_eq!(got.to_string(), want.to_string());
}

/// `sweep`, `check --retention` and the PreCompact hook on a large document give what
/// the same commands give on the store read exactly by the library.
#[test]
fn sweep_retentions_and_precompact_on_a_large_store_are_the_exact_ones() {
    use omission_gate::hook::{self, Adapter, KeptFrom, Setup};
    let scratch = common::Scratch::new();
    let action = r#"{"tool":"pay","params":{"amount":500}}"#;
    let doc = big_document(&["c8990", "p29", "f28", "c5", "e3", "s29", "f1"], action);
    assert!(doc.len() > 1 << 20);
    let p = scratch.file("store.json", doc.as_bytes());
    let exact = input::load(&p, doc.as_bytes(), Limits::default()).unwrap();
    let a = exact.action.clone().unwrap();
    let mut want_cells = Vec::new();
    for retention in [
        Retention::Given,
        Retention::HeadTail(8),
        Retention::Recency(16),
    ] {
        let c = Compaction::new(&exact.store, retention, exact.kept.as_deref(), &p).unwrap();
        let outcome =
            omission_gate::gate::check(&exact.store, &c, &exact.totals, &a, Default::default());
        let report = Report::check(&a, &c, &exact.totals, outcome);
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
    let setup = Setup {
        input: exact.clone(),
        kept: None,
        kept_origin: p.clone(),
        retention: Retention::Given,
        tools: None,
        options: Default::default(),
        kept_from: KeptFrom::Kept,
        context: None,
        compaction: None,
    };
    let payload = br#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/r","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}"#;
    let want = hook::answer(Adapter::PreCompact, payload, Ok(&setup));
    let out = common::run(
        &["hook", "claude-code-precompact", "--store", &p],
        Some(payload),
    );
    assert_eq!(out.stdout, String::from_utf8(want.stdout).unwrap());
    assert!(!out.stdout.is_empty());
}
