//! What every fuzz target asserts about a run of the gate, whatever the input.
//!
//! The targets hand bytes (or bytes serialized from a structured model) to the library
//! the way the CLI does; these helpers judge them under several retentions and assert
//! the invariants that must hold for any input: no panic, a sealed report that
//! verifies, nothing a terminal would act on, one line per error, the same bytes on
//! every run, and no BLOCK when nothing was dropped.

use omission_gate::action::Action;
use omission_gate::compaction::{Compaction, Retention};
use omission_gate::error::InputError;
use omission_gate::gate::{self, CheckOptions, Verdict};
use omission_gate::input::{self, Input};
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
        assert_eq!(compaction.kept() + compaction.dropped(), input.store.len());
        let outcome = gate::check(&input.store, &compaction, &action, options);
        assert_eq!(
            outcome,
            gate::check(&input.store, &compaction, &action, options)
        );
        if compaction.dropped() == 0 {
            // With nothing dropped both views are the same: nothing can block.
            assert_ne!(outcome.verdict, Verdict::Block, "{outcome:#?}");
        }
        let report = Report::check(&action, &compaction, outcome);
        assert_sound_report(&report, Format::Text);
        assert_sound_report(&report, Format::Json);
    }
    Some(input)
}

/// Asserts two inputs give byte-identical reports under the retentions `judge` uses.
pub fn assert_same_reports(a: &Input, b: &Input, k: usize, allow_unevaluable: bool) {
    let options = CheckOptions { allow_unevaluable };
    let render = |input: &Input, retention: Retention| -> Option<Vec<u8>> {
        let action = input.action.clone()?;
        let c =
            Compaction::new(&input.store, retention, input.kept.as_deref(), "fuzz.json").ok()?;
        let outcome = gate::check(&input.store, &c, &action, options);
        Some(Report::check(&action, &c, outcome).render(Format::Json))
    };
    for retention in [
        Retention::Given,
        Retention::HeadTail(k),
        Retention::Recency(k),
    ] {
        assert_eq!(render(a, retention), render(b, retention), "{retention}");
    }
}
