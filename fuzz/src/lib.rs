//! What every fuzz target asserts about a run of the gate, whatever the input.
//!
//! The targets hand bytes (or bytes serialized from a structured model) to the library
//! the way the CLI does; these helpers judge them under several retentions and assert
//! the invariants that must hold for any input: no panic, a sealed report that
//! verifies, nothing a terminal would act on, one line per error, the same bytes on
//! every run, and no BLOCK when nothing was dropped. Precheck and pin run on the same
//! input (with a small call bound), and the lean loader must agree with the exact one.

use omission_gate::action::{Action, Tool};
use omission_gate::compaction::{Compaction, Retention};
use omission_gate::error::InputError;
use omission_gate::fuzzing::{Ask, lean_load};
use omission_gate::gate::{self, CheckOptions, Verdict};
use omission_gate::input::{self, Input};
use omission_gate::pin;
use omission_gate::precheck::{self, PrecheckOptions};
use omission_gate::record::Limits;
use omission_gate::report::{self, Format, Mode, Report};

/// True for characters a report must never contain: C0 controls other than `\n`, DEL,
/// C1 controls, line/paragraph separators, bidi controls and the BOM. Written out here,
/// independently of the library's own list, so that a gap in one shows up.
pub fn forbidden(c: char) -> bool {
    (c < ' ' && c != '\n')
        || ('\u{7f}'..='\u{9f}').contains(&c)
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{feff}'
        )
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Asserts a rendered report is UTF-8, terminal-safe, sealed and verifiable.
pub fn assert_sound_report(report: &Report, format: Format) {
    let bytes = report.render(format);
    assert_eq!(
        bytes,
        report.render(format),
        "rendering is not deterministic"
    );
    let text = std::str::from_utf8(&bytes).expect("a report is UTF-8");
    if let Some(c) = text.chars().find(|&c| forbidden(c)) {
        panic!("report carries {:?}:\n{text}", c);
    }
    assert!(
        report::verify(&bytes).is_ok(),
        "report does not verify:\n{text}"
    );
    let verdict = report.verdict.as_str();
    match format {
        Format::Text => {
            let verdicts: Vec<&str> = text.lines().filter(|l| l.starts_with("verdict")).collect();
            assert_eq!(verdicts.len(), 1, "{text}");
            assert!(
                verdicts[0].starts_with(&format!("verdict   : {verdict} ")),
                "{text}"
            );
            let last = text.lines().last().unwrap_or("");
            assert!(last.starts_with("sha256    : "), "{text}");
            assert_eq!(text.lines().filter(|l| l.starts_with("sha256")).count(), 1);
        }
        Format::Json => {
            let v: serde_json::Value = serde_json::from_str(text).expect("the JSON report parses");
            assert_eq!(v["verdict"], verdict);
            assert_eq!(v["exit_code"], report.exit_code);
            assert_eq!(
                v["findings"].as_array().map(Vec::len),
                Some(report.findings.len())
            );
        }
    }
}

/// Asserts an input error is one terminal-safe line and renders as a sound ERROR report.
pub fn assert_sound_error(err: &InputError) {
    let message = err.to_string();
    if let Some(c) = message.chars().find(|&c| c == '\n' || forbidden(c)) {
        panic!("error message carries {c:?}: {message}");
    }
    let report = Report::invalid_input(Mode::Check, &message);
    assert_eq!(report.verdict, Verdict::Error);
    assert_eq!(report.exit_code, 2);
    assert_sound_report(&report, Format::Text);
    assert_sound_report(&report, Format::Json);
}

/// Loads `bytes` and judges them under the document's own compaction and a few
/// retentions picked by `k`, asserting every invariant on the way.
pub fn judge(bytes: &[u8], k: usize, allow_unevaluable: bool) -> Option<Input> {
    let input = match input::load("fuzz.json", bytes, Limits::default()) {
        Ok(input) => input,
        Err(e) => {
            assert_sound_error(&e);
            return None;
        }
    };
    let action = input.action.clone().unwrap_or(Action {
        tool: "t".to_string(),
        params: serde_json::Map::new(),
    });
    let options = CheckOptions { allow_unevaluable };
    let pre = PrecheckOptions {
        allow_unevaluable,
        max_calls: MAX_CALLS,
    };
    let tools: Vec<Tool> = input.tools_or_named();
    for retention in [
        Retention::Given,
        Retention::HeadTail(k),
        Retention::Recency(k),
        Retention::HeadTail(usize::MAX),
        Retention::Recency(usize::MAX - k),
    ] {
        let compaction =
            match Compaction::new(&input.store, retention, input.kept.as_deref(), "fuzz.json") {
                Ok(c) => c,
                Err(e) => {
                    assert_sound_error(&e);
                    continue;
                }
            };
        let totals = &input.totals;
        assert_eq!(
            totals.kept(&compaction) + totals.dropped(&compaction),
            input.store.len()
        );
        let outcome = gate::check(&input.store, &compaction, &input.totals, &action, options);
        assert_eq!(
            outcome,
            gate::check(&input.store, &compaction, &input.totals, &action, options)
        );
        if totals.dropped(&compaction) == 0 {
            // With nothing dropped both views are the same: nothing can block.
            assert_ne!(outcome.verdict, Verdict::Block, "{outcome:#?}");
        }
        let report = Report::check(&action, &compaction, &input.totals, outcome);
        assert_sound_report(&report, Format::Text);
        assert_sound_report(&report, Format::Json);
        let outcome = precheck::precheck(&input.store, &compaction, &input.totals, &tools, pre);
        let report = Report::precheck(&tools, &compaction, &input.totals, outcome);
        assert_sound_report(&report, Format::Text);
        assert_sound_report(&report, Format::Json);
    }
    // pin: a sound report, and keeping what it pins leaves precheck nothing to block.
    let budget = (k as u64).saturating_mul(40);
    for budget in [None, Some(budget)] {
        let report = pin::report(&input.store, &tools, budget, MAX_CALLS);
        assert_sound_report(&report, Format::Text);
        assert_sound_report(&report, Format::Json);
    }
    let pins = pin::pin(&input.store, &tools, MAX_CALLS);
    let mut mask = vec![false; input.store.len()];
    for &p in &pins.positions {
        if let Some(slot) = mask.get_mut(p) {
            *slot = true;
        }
    }
    let kept = Compaction::from_mask(&input.store, Retention::Given, mask);
    let outcome = precheck::precheck(&input.store, &kept, &input.totals, &tools, pre);
    assert_ne!(
        outcome.verdict,
        Verdict::Block,
        "precheck blocks a kept set that holds pin's output {:?}: {outcome:#?}",
        pins.pinned
    );
    Some(input)
}

/// The call bound precheck and pin run with here: small, to keep executions fast.
pub const MAX_CALLS: usize = 64;

/// The input in chunks as the CLI's reader cuts them for the lean loader: `size` bytes
/// plus what the previous chunk carried over, cut after the last line end unless the
/// input ends there (so a line longer than a chunk spans chunks).
fn chunks(bytes: &[u8], size: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut carry: Vec<u8> = Vec::new();
    let mut rest = bytes;
    loop {
        let mut buf = std::mem::take(&mut carry);
        let (now, later) = rest.split_at(size.max(1).min(rest.len()));
        buf.extend_from_slice(now);
        rest = later;
        if buf.is_empty() {
            return out;
        }
        if !rest.is_empty()
            && let Some(end) = buf.iter().rposition(|&b| b == b'\n')
        {
            carry = buf.split_off(end + 1);
        }
        out.push(buf);
    }
}

/// The lean loader must never accept what the exact path refuses, and where it accepts,
/// its report must be byte-identical to the exact path's (`check`, retention `given`).
/// `kept` and `action` are the flags' texts, as the CLI would pass them.
pub fn assert_lean_agrees(
    bytes: &[u8],
    kept: Option<&str>,
    action: Option<&str>,
    chunk: usize,
    options: CheckOptions,
) {
    let action_flag = match action.map(|a| input::action_from_flag("--action", a)) {
        Some(Ok(a)) => Some(a),
        Some(Err(_)) => return,
        None => None,
    };
    let lean = lean_load(
        chunks(bytes, chunk),
        kept.map(|k| (k, true)),
        Ask::Check(action_flag.clone()),
    );
    let Some(lean) = lean else { return };
    let Some(lean_action) = lean.action else {
        panic!("a lean check load without an action")
    };
    let exact = (|| {
        let (input, c) = exact_given(bytes, kept)?;
        let action = match action_flag {
            Some(a) => a,
            None => input
                .action
                .clone()
                .ok_or_else(|| InputError::at("fuzz.json", "action", "check needs an action"))?,
        };
        let outcome = gate::check(&input.store, &c, &input.totals, &action, options);
        Ok::<_, InputError>(Report::check(&action, &c, &input.totals, outcome))
    })();
    let exact = match exact {
        Ok(r) => r,
        Err(e) => panic!("the lean loader accepted what the exact path refuses: {e}"),
    };
    let outcome = gate::check(
        &lean.input.store,
        &lean.compaction,
        &lean.input.totals,
        &lean_action,
        options,
    );
    let lean = Report::check(&lean_action, &lean.compaction, &lean.input.totals, outcome);
    assert_same_bytes(&exact, &lean, "check");
}

/// The exact load of `bytes` and its compaction under retention `given`, the kept ids
/// from `kept` (the `--kept` flag's text, as from a file) or else the document's.
fn exact_given(bytes: &[u8], kept: Option<&str>) -> Result<(Input, Compaction), InputError> {
    let input = input::load("fuzz.json", bytes, Limits::default())?;
    let kept_ids = match kept {
        Some(k) => Some(input::kept_from_flag("--kept", k, true)?),
        None => input.kept.clone(),
    };
    let c = Compaction::new(
        &input.store,
        Retention::Given,
        kept_ids.as_deref(),
        "fuzz.json",
    )?;
    Ok((input, c))
}

/// Asserts two inputs give byte-identical reports under the retentions `judge` uses.
pub fn assert_same_reports(a: &Input, b: &Input, k: usize, allow_unevaluable: bool) {
    let options = CheckOptions { allow_unevaluable };
    let render = |input: &Input, retention: Retention| -> Option<Vec<u8>> {
        let action = input.action.clone()?;
        let c =
            Compaction::new(&input.store, retention, input.kept.as_deref(), "fuzz.json").ok()?;
        let outcome = gate::check(&input.store, &c, &input.totals, &action, options);
        Some(Report::check(&action, &c, &input.totals, outcome).render(Format::Json))
    };
    for retention in [
        Retention::Given,
        Retention::HeadTail(k),
        Retention::Recency(k),
    ] {
        assert_eq!(render(a, retention), render(b, retention), "{retention}");
    }
}

fn assert_same_bytes(exact: &Report, lean: &Report, what: &str) {
    for format in [Format::Text, Format::Json] {
        let (a, b) = (exact.render(format), lean.render(format));
        assert!(
            a == b,
            "lean and exact {what} reports differ:\n{}\n---\n{}",
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b)
        );
    }
}

/// As [`assert_lean_agrees`], for the lean loads of `check --precheck` (with `kept`, the
/// `--kept` flag's text, or the document's) and of `pin` (no budget): never accept what
/// the exact path refuses, and give byte-identical reports.
pub fn assert_lean_for_agrees(
    bytes: &[u8],
    kept: Option<&str>,
    chunk: usize,
    allow_unevaluable: bool,
) {
    let pre = PrecheckOptions {
        allow_unevaluable,
        max_calls: MAX_CALLS,
    };
    let lean = lean_load(chunks(bytes, chunk), kept.map(|k| (k, true)), Ask::Precheck);
    if let Some(lean) = lean {
        let exact = (|| {
            let (input, c) = exact_given(bytes, kept)?;
            let tools = input.tools_or_named();
            let outcome = precheck::precheck(&input.store, &c, &input.totals, &tools, pre);
            Ok::<_, InputError>(Report::precheck(&tools, &c, &input.totals, outcome))
        })()
        .unwrap_or_else(|e| {
            panic!("the lean precheck load accepted what the exact path refuses: {e}")
        });
        let outcome = precheck::precheck(
            &lean.input.store,
            &lean.compaction,
            &lean.input.totals,
            &lean.tools,
            pre,
        );
        assert_same_bytes(
            &exact,
            &Report::precheck(&lean.tools, &lean.compaction, &lean.input.totals, outcome),
            "precheck",
        );
    }
    let lean = lean_load(chunks(bytes, chunk), None, Ask::Pin);
    if let Some(lean) = lean {
        let exact = input::load("fuzz.json", bytes, Limits::default())
            .map(|input| {
                let tools = input.tools_or_named();
                pin::report(&input.store, &tools, None, MAX_CALLS)
            })
            .unwrap_or_else(|e| {
                panic!("the lean pin load accepted what the exact path refuses: {e}")
            });
        let lean = pin::report(&lean.input.store, &lean.tools, None, MAX_CALLS);
        assert_same_bytes(&exact, &lean, "pin");
    }
}
