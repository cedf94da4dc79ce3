//! What every fuzz target asserts about a run of the gate, whatever the input.
//!
//! The targets hand bytes (or bytes serialized from a structured model) to the library
//! the way the CLI does; these helpers judge them under several retentions and assert
//! the invariants that must hold for any input: no panic, a sealed report that
//! verifies, nothing a terminal would act on, one line per error, the same bytes on
//! every run, and no BLOCK when nothing was dropped. Precheck and pin run on the same
//! input (with a small call bound), and the lean loader must agree with the exact one.

use omission_gate::fuzzing::{Ask, exact_report, lean_report};
use omission_gate::{
    Action, CheckOptions, Format, Input, InputError, Mode, PrecheckOptions, Report, Retention,
    Severity, Tool, Verdict,
};

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
    let seal = omission_gate::verify(&bytes)
        .unwrap_or_else(|e| panic!("report does not verify ({e}):\n{text}"));
    // The verdict is what the findings add up to, and the exit code is the verdict's.
    let worst = report
        .findings
        .iter()
        .map(|f| match f.severity {
            Severity::Error => Verdict::Error,
            Severity::Block => Verdict::Block,
            Severity::Note => Verdict::Pass,
        })
        .max()
        .unwrap_or(Verdict::Pass);
    assert_eq!(report.verdict, worst, "{text}");
    let code = match report.verdict {
        Verdict::Pass => 0,
        Verdict::Block => 1,
        Verdict::Error => 2,
    };
    assert_eq!(report.exit_code, code, "{text}");
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
            assert_eq!(last, format!("sha256    : {seal}"), "{text}");
            assert_eq!(text.lines().filter(|l| l.starts_with("sha256")).count(), 1);
        }
        Format::Json => {
            let v: serde_json::Value = serde_json::from_str(text).expect("the JSON report parses");
            assert_eq!(v["verdict"], verdict);
            assert_eq!(v["sha256"], seal.as_str());
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
    let input = match omission_gate::load("fuzz.json", bytes) {
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
        let compaction = match omission_gate::compaction(&input, retention, None) {
            Ok(c) => c,
            Err(e) => {
                assert_sound_error(&e);
                continue;
            }
        };
        let totals = &input.totals;
        assert_eq!(
            totals.kept(&compaction) + totals.dropped(&compaction),
            totals.records
        );
        let check = || omission_gate::check(&input, retention, None, &action, options);
        let report = check().expect("the compaction above was accepted");
        assert_eq!(report, check().expect("the compaction above was accepted"));
        if totals.dropped(&compaction) == 0 {
            // With nothing dropped both views are the same: nothing can block.
            assert_ne!(report.verdict, Verdict::Block, "{report:#?}");
        }
        assert_sound_report(&report, Format::Text);
        assert_sound_report(&report, Format::Json);
        if retention == Retention::Given {
            assert_restore_removes(&input, &report, &action, options);
        }
        let report = omission_gate::precheck(&input, retention, None, Some(&tools), pre);
        if tools.is_empty() {
            // A list that names no tool is refused: precheck would judge no call.
            assert_sound_error(&report.expect_err("no tool is refused"));
            continue;
        }
        let report = report.expect("the compaction above was accepted");
        assert_sound_report(&report, Format::Text);
        assert_sound_report(&report, Format::Json);
    }
    if tools.is_empty() {
        let pins = omission_gate::pin(&input, Some(&tools), None, MAX_CALLS);
        assert_sound_error(&pins.expect_err("no tool is refused"));
        return Some(input);
    }
    // pin: a sound report, and keeping what it pins leaves precheck nothing to block.
    let budget = (k as u64).saturating_mul(40);
    for budget in [None, Some(budget)] {
        let report = omission_gate::pin(&input, Some(&tools), budget, MAX_CALLS)
            .expect("the tools name one");
        assert_sound_report(&report, Format::Text);
        assert_sound_report(&report, Format::Json);
    }
    let pins =
        omission_gate::pin(&input, Some(&tools), None, MAX_CALLS).expect("the tools name one");
    let pinned: Vec<String> = pins.pinned.iter().flatten().map(|p| p.id.clone()).collect();
    let report =
        omission_gate::precheck(&input, Retention::Given, Some(&pinned), Some(&tools), pre)
            .expect("pinned ids name records");
    assert_ne!(
        report.verdict,
        Verdict::Block,
        "precheck blocks a kept set that holds pin's output {pinned:?}: {report:#?}"
    );
    Some(input)
}

/// Every block finding of a `check` report under the document's kept set names in
/// `restore` dropped records of the input (SPEC 7), and keeping those beside the kept set
/// removes it: a harness that re-injects them is not blocked for the same record and code.
fn assert_restore_removes(input: &Input, report: &Report, action: &Action, options: CheckOptions) {
    let Some(kept) = &input.kept else {
        return;
    };
    let ids = omission_gate::fuzzing::record_ids(input);
    for finding in report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Block)
    {
        assert!(
            !finding.restore.is_empty(),
            "a block names no record to restore: {finding:#?}"
        );
        for id in &finding.restore {
            assert!(
                ids.contains(&id.as_str()) && !kept.contains(id),
                "restore names '{id}', not a dropped record: {finding:#?}"
            );
        }
        let restored: Vec<String> = kept.iter().chain(&finding.restore).cloned().collect();
        let after = omission_gate::check(input, Retention::Given, Some(&restored), action, options)
            .expect("restored ids name records");
        assert!(
            !after.findings.iter().any(|f| f.severity == Severity::Block
                && f.code == finding.code
                && f.record == finding.record),
            "restoring {:?} leaves the block: {finding:#?}\nafter: {after:#?}",
            finding.restore
        );
    }
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
    assert_agree(bytes, kept, chunk, Ask::Check(action, options), "check");
}

/// A lean load's report for `ask` (none: it fell back) is the exact path's, which must
/// accept the input.
fn assert_agree(bytes: &[u8], kept: Option<&str>, chunk: usize, ask: Ask<'_>, what: &str) {
    let Some(lean) = lean_report(chunks(bytes, chunk), kept, ask) else {
        return;
    };
    let exact = exact_report(bytes, kept, ask).unwrap_or_else(|e| {
        panic!("the lean {what} load accepted what the exact path refuses: {e}")
    });
    assert_same_bytes(&exact, &lean, what);
}

/// Asserts two inputs give byte-identical reports under the retentions `judge` uses.
pub fn assert_same_reports(a: &Input, b: &Input, k: usize, allow_unevaluable: bool) {
    let options = CheckOptions { allow_unevaluable };
    let render = |input: &Input, retention: Retention| -> Option<Vec<u8>> {
        let action = input.action.clone()?;
        let report = omission_gate::check(input, retention, None, &action, options).ok()?;
        Some(report.render(Format::Json))
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
    assert_agree(bytes, kept, chunk, Ask::Precheck(pre), "precheck");
    assert_agree(bytes, None, chunk, Ask::Pin(MAX_CALLS), "pin");
}
