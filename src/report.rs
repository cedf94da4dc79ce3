//! Rendering and sealing reports (SPEC 7).
//!
//! A report is data (`Report`) rendered to bytes in one of two formats; the seal is the
//! sha256 of exactly the bytes before it. Every string that came from the input passes
//! through `clean` (text) or `json_text` / `escape_unsafe` (JSON) so that no input can
//! add, hide or change a report line or send terminal control sequences.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::action::{Action, Tool};
use crate::compaction::{Compaction, Totals};
use crate::gate::{Exit, Finding, Outcome, Severity, Verdict};
use crate::json::json_text;
use crate::text::{clean, escape_unsafe, hex, one_line};

/// Width of the text report's labels, padding included.
const LABEL_WIDTH: usize = 10;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// One labelled line per item.
    #[default]
    Text,
    /// One JSON object.
    Json,
}

/// The compaction as a report states it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompactionSummary {
    /// Number of records.
    pub records: usize,
    /// Number kept.
    pub kept: usize,
    /// Number dropped.
    pub dropped: usize,
    /// `given`, `head_tail:K` or `recency:K`.
    pub retention: String,
    /// First 12 hex digits of the kept set's fingerprint.
    pub kept_sha256: String,
}

impl CompactionSummary {
    /// The summary of `c`, counting the records in `totals`.
    pub(crate) fn new(c: &Compaction, totals: &Totals) -> CompactionSummary {
        CompactionSummary {
            records: totals.records,
            kept: totals.kept(c),
            dropped: totals.dropped(c),
            retention: c.retention.to_string(),
            kept_sha256: c.kept_sha256.clone(),
        }
    }
}

/// The transcript a `transcript:H` compaction was read from (SPEC 10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TranscriptSummary {
    /// The transcript file, as named.
    pub file: String,
    /// The harness whose format it is.
    pub harness: String,
    /// True when the format was recognised rather than named with `--harness`.
    pub harness_detected: bool,
    /// Byte offset of the line of the last compaction, when the live context starts at one.
    pub last_compaction_byte: Option<u64>,
    /// How many strings the live context holds (context files included).
    pub live_strings: usize,
}

impl TranscriptSummary {
    /// `session.jsonl (claude-code, detected; last compaction at byte 5120; 42 live strings)`
    pub fn describe(&self) -> String {
        let detected = if self.harness_detected {
            ", detected"
        } else {
            ""
        };
        let compaction = match self.last_compaction_byte {
            Some(at) => format!("last compaction at byte {at}"),
            None => "no compaction".to_string(),
        };
        format!(
            "{} ({}{detected}; {compaction}; {} live string{})",
            clean(&self.file),
            self.harness,
            self.live_strings,
            if self.live_strings == 1 { "" } else { "s" }
        )
    }
}

/// A record `pin` protects, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pinned {
    /// The record's id.
    pub id: String,
    /// Why it must be kept.
    pub why: String,
}

/// `pin`: tokens of the pinned and the kept records, against the budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenSummary {
    /// `--budget`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    /// How many records are pinned.
    pub pinned_records: usize,
    /// Their tokens (a sum of counts each below 2^64, so it may pass 2^64).
    pub pinned_tokens: u128,
    /// How many records the budget keeps, pinned ones included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_records: Option<usize>,
    /// Their tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_tokens: Option<u64>,
}

/// Which question a report answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `check`: this action under this compaction.
    Check,
    /// `check --precheck`: some reachable call under this compaction.
    Precheck,
    /// `pin`: what a compactor must keep.
    Pin,
}

/// Everything a report says, before rendering.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// PASS, BLOCK or ERROR.
    pub verdict: Verdict,
    /// 0, 1 or 2.
    pub exit_code: u8,
    /// Which question this answers.
    pub mode: Mode,
    /// The action judged (`check`), if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// The tools considered (precheck, pin).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// The compaction judged, if the input got that far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<CompactionSummary>,
    /// The transcript the kept set was read from (retention `transcript:H`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptSummary>,
    /// Every finding, in order.
    pub findings: Vec<Finding>,
    /// `pin`: the protected records, in seq order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned: Option<Vec<Pinned>>,
    /// `pin --budget`: the ids to keep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<Vec<String>>,
    /// `pin`: tokens pinned and kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenSummary>,
}

impl Report {
    /// A `check` report.
    pub(crate) fn check(
        action: &Action,
        compaction: &Compaction,
        totals: &Totals,
        outcome: Outcome,
    ) -> Report {
        let mut r = Report::from_outcome(Mode::Check, outcome);
        r.action = Some(action.clone());
        r.compaction = Some(CompactionSummary::new(compaction, totals));
        r
    }

    /// A `check --precheck` report: no action, the tools, the compaction.
    pub(crate) fn precheck(
        tools: &[Tool],
        compaction: &Compaction,
        totals: &Totals,
        outcome: Outcome,
    ) -> Report {
        let mut r = Report::from_outcome(Mode::Precheck, outcome);
        r.tools = Some(tools.iter().map(|t| t.name.clone()).collect());
        r.compaction = Some(CompactionSummary::new(compaction, totals));
        r
    }

    /// A report with a verdict and findings and nothing else yet.
    pub(crate) fn from_outcome(mode: Mode, outcome: Outcome) -> Report {
        Report {
            verdict: outcome.verdict,
            exit_code: Exit::from(outcome.verdict).code(),
            mode,
            action: None,
            tools: None,
            compaction: None,
            transcript: None,
            findings: outcome.findings,
            pinned: None,
            kept: None,
            tokens: None,
        }
    }

    /// The ERROR report for input the gate refused.
    pub fn invalid_input(mode: Mode, message: &str) -> Report {
        let finding = Finding::new(crate::gate::Code::InvalidInput, None, message.to_string());
        Report::from_outcome(mode, Outcome::from_findings(vec![finding]))
    }

    /// The report's bytes, sealed.
    pub fn render(&self, format: Format) -> Vec<u8> {
        match format {
            Format::Text => seal_text(self.body_text()),
            Format::Json => seal_json(self.body_json()),
        }
    }

    fn body_text(&self) -> String {
        let mut out = String::new();
        let mut line = |label: &str, value: &str| {
            let _ = writeln!(out, "{label:<LABEL_WIDTH$}: {}", one_line(value));
        };
        match (self.mode, &self.action) {
            (Mode::Check, Some(a)) => line("action", &action_text(a)),
            (Mode::Precheck, _) => line("action", "(the verdict below never consults it)"),
            _ => {}
        }
        if let Some(tools) = &self.tools {
            let names: Vec<Cow<str>> = tools.iter().map(|t| clean(t)).collect();
            line(
                "tools",
                &if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(", ")
                },
            );
        }
        if let Some(c) = &self.compaction {
            line(
                "compaction",
                &format!(
                    "{} record{}, {} kept, {} dropped (retention={}, kept-sha256={})",
                    c.records,
                    if c.records == 1 { "" } else { "s" },
                    c.kept,
                    c.dropped,
                    c.retention,
                    c.kept_sha256
                ),
            );
        }
        if let Some(t) = &self.transcript {
            line("transcript", &t.describe());
        }
        line("verdict", &self.verdict_text());
        for f in &self.findings {
            let label = if f.severity == Severity::Note {
                "note"
            } else {
                "reason"
            };
            line(label, &format!("{}: {}", f.code.as_str(), f.message));
            if let Some(w) = &f.witness {
                line("witness", &action_text(w));
            }
            if !f.restore.is_empty() {
                let ids: Vec<Cow<str>> = f.restore.iter().map(|id| clean(id)).collect();
                line("restore", &ids.join(", "));
            }
        }
        for p in self.pinned.iter().flatten() {
            line("pinned", &format!("{} ({})", clean(&p.id), p.why));
        }
        if let Some(t) = &self.tokens {
            let mut text = format!(
                "pinned {} record{} = {} tokens",
                t.pinned_records,
                if t.pinned_records == 1 { "" } else { "s" },
                t.pinned_tokens
            );
            if let Some(b) = t.budget {
                let _ = write!(text, "; budget {b}");
            }
            if let (Some(n), Some(k)) = (t.kept_records, t.kept_tokens) {
                let _ = write!(
                    text,
                    "; kept {n} record{} = {k} tokens",
                    if n == 1 { "" } else { "s" }
                );
            }
            line("tokens", &text);
        }
        if let Some(kept) = &self.kept {
            let ids: Vec<Cow<str>> = kept.iter().map(|id| clean(id)).collect();
            line("kept", &ids.join(","));
        }
        out
    }

    /// `BLOCK (dropped-binding-constraint) exit 1`
    fn verdict_text(&self) -> String {
        let wanted = match self.verdict {
            Verdict::Pass => None,
            Verdict::Block => Some(Severity::Block),
            Verdict::Error => Some(Severity::Error),
        };
        let codes = self.verdict_codes(wanted);
        if codes.is_empty() {
            format!("{} exit {}", self.verdict.as_str(), self.exit_code)
        } else {
            format!(
                "{} ({}) exit {}",
                self.verdict.as_str(),
                codes.join(", "),
                self.exit_code
            )
        }
    }

    /// Distinct codes of the findings with this severity, sorted.
    pub fn verdict_codes(&self, severity: Option<Severity>) -> Vec<&'static str> {
        let mut codes: Vec<&'static str> = self
            .findings
            .iter()
            .filter(|f| Some(f.severity) == severity)
            .map(|f| f.code.as_str())
            .collect();
        codes.sort_unstable();
        codes.dedup();
        codes
    }

    fn body_json(&self) -> String {
        // INVARIANT: Report holds only strings, numbers and serde_json values, so
        // serialization cannot fail.
        let body = serde_json::to_string_pretty(self).unwrap_or_default();
        match escape_unsafe(&body) {
            Cow::Borrowed(_) => body,
            Cow::Owned(escaped) => escaped,
        }
    }
}

/// `refunds.create {"amount":8400}`
pub fn action_text(a: &Action) -> String {
    format!(
        "{} {}",
        clean(&a.tool),
        json_text(&Value::Object(a.params.clone()))
    )
}

fn seal_text(mut body: String) -> Vec<u8> {
    let digest = hex(&Sha256::digest(body.as_bytes()));
    let _ = writeln!(body, "{:<LABEL_WIDTH$}: {digest}", "sha256");
    body.into_bytes()
}

const JSON_SEAL_KEY: &str = "  \"sha256\": \"";

/// How a JSON report's verdict member begins, as its first line below `{`.
const JSON_VERDICT_KEY: &str = "  \"verdict\": ";

fn seal_json(mut body: String) -> Vec<u8> {
    // The pretty body ends with "\n}"; the seal becomes its last member, hashed over
    // every byte before its line. Built in place: a report can be megabytes.
    if body.ends_with("\n}") {
        body.truncate(body.len() - 2);
    }
    body.push_str(",\n");
    let digest = hex(&Sha256::digest(body.as_bytes()));
    body.reserve(JSON_SEAL_KEY.len() + digest.len() + 4);
    body.push_str(JSON_SEAL_KEY);
    body.push_str(&digest);
    body.push_str("\"\n}\n");
    body.into_bytes()
}

/// Why a report failed verification.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifyError {
    /// No seal line where one must be.
    #[error("no seal: the report must end with its sha256 line")]
    NoSeal,
    /// A seal that matches, over bytes that are not one report of this tool: no verdict,
    /// or more than one verdict or seal (a report with another appended).
    #[error(
        "not a report: the seal matches, but the bytes before it are not one report (a report of check or pin has one `verdict` line, or `\"verdict\"` first in JSON, and one seal, its last line)"
    )]
    NotAReport,
    /// The seal does not match the bytes before it.
    #[error("seal mismatch: the report says {claimed} but its bytes hash to {actual}")]
    Mismatch {
        /// The sha256 the report carries.
        claimed: String,
        /// The sha256 of its bytes.
        actual: String,
    },
}

/// Recomputes a report's seal (either format) and compares it with the one it carries.
/// Returns the verified sha256. A seal that matches over bytes that are not one report
/// (an empty body, any text given a seal line, a report with another verdict and seal
/// appended) is [`VerifyError::NotAReport`]: "ok" would vouch for a verdict that is not
/// there, or for one of two.
pub fn verify(bytes: &[u8]) -> Result<String, VerifyError> {
    let (prefix, claimed) = split_seal(bytes).ok_or(VerifyError::NoSeal)?;
    let actual = hex(&Sha256::digest(prefix));
    if actual != claimed {
        return Err(VerifyError::Mismatch { claimed, actual });
    }
    let lines = || prefix.split(|&b| b == b'\n');
    // One verdict line (`verdict`) and no seal line (`seal`) above the last.
    let one = |verdict: &str, seal: &str| {
        lines()
            .filter(|l| l.starts_with(verdict.as_bytes()))
            .count()
            == 1
            && !lines().any(|l| l.starts_with(seal.as_bytes()))
    };
    let one_report = match prefix.first() {
        // Every line of a JSON report but its seal is indented, and no string in it
        // holds a line break: a line that opens with a member `"verdict"` or `"sha256"`
        // indented as the report's own is one of the report's.
        Some(b'{') => {
            prefix.starts_with(b"{\n  \"verdict\": \"") && one(JSON_VERDICT_KEY, JSON_SEAL_KEY)
        }
        _ => {
            let label = |name: &str| format!("{name:<LABEL_WIDTH$}: ");
            one(&label("verdict"), &label("sha256"))
        }
    };
    if one_report {
        Ok(actual)
    } else {
        Err(VerifyError::NotAReport)
    }
}

fn split_seal(bytes: &[u8]) -> Option<(&[u8], String)> {
    let text_label = format!("{:<LABEL_WIDTH$}: ", "sha256");
    let is_hex = |s: &[u8]| {
        s.len() == 64
            && s.iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    };
    // Text: the last line is "sha256    : <hex>\n".
    if let Some(body) = bytes.strip_suffix(b"\n") {
        let start = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let (prefix, last) = body.split_at(start);
        if let Some(h) = last.strip_prefix(text_label.as_bytes()) {
            return is_hex(h).then(|| (prefix, String::from_utf8_lossy(h).into_owned()));
        }
    }
    // JSON: the last member is `  "sha256": "<hex>"` followed by "\n}\n".
    let rest = bytes.strip_suffix(b"\"\n}\n")?;
    let h = rest.get(rest.len().checked_sub(64)?..)?;
    let before = rest
        .get(..rest.len() - 64)?
        .strip_suffix(JSON_SEAL_KEY.as_bytes())?;
    if !before.ends_with(b",\n") || !bytes.starts_with(b"{") {
        return None;
    }
    is_hex(h).then(|| (before, String::from_utf8_lossy(h).into_owned()))
}

/// Lays out rows as columns separated by two spaces, the last column unpadded.
pub fn align(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                let w = widths.get(i).copied().unwrap_or(0);
                let _ = write!(line, "{cell:<w$}  ");
            }
        }
        out.push_str(one_line(line.trim_end()).as_ref());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Code;

    fn sample() -> Report {
        let action = Action {
            tool: "t\nverdict   : PASS".into(),
            params: serde_json::Map::new(),
        };
        let finding = Finding::new(
            Code::DroppedUnevaluableRecord,
            None,
            "x\u{1b}[2Jy\u{9b}z".into(),
        );
        let mut r = Report::from_outcome(Mode::Check, Outcome::from_findings(vec![finding]));
        r.action = Some(action);
        r
    }

    #[test]
    fn text_report_is_sealed_and_verifies() {
        let bytes = sample().render(Format::Text);
        assert!(verify(&bytes).is_ok());
        let text = String::from_utf8(bytes.clone()).unwrap();
        let verdicts: Vec<&str> = text.lines().filter(|l| l.starts_with("verdict")).collect();
        assert_eq!(
            verdicts,
            ["verdict   : BLOCK (dropped-unevaluable-record) exit 1"]
        );
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'));
    }

    #[test]
    fn json_report_is_sealed_and_verifies() {
        let bytes = sample().render(Format::Json);
        assert!(
            verify(&bytes).is_ok(),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["verdict"], "BLOCK");
        assert_eq!(v["findings"][0]["message"], "x\u{1b}[2Jy\u{9b}z");
        assert!(
            !String::from_utf8(bytes)
                .unwrap()
                .chars()
                .any(|c| c.is_control() && c != '\n')
        );
    }

    #[test]
    fn every_single_byte_change_is_detected() {
        for format in [Format::Text, Format::Json] {
            let bytes = sample().render(format);
            for i in 0..bytes.len() {
                let mut changed = bytes.clone();
                changed[i] ^= 0x01;
                assert!(verify(&changed).is_err(), "{format:?} byte {i}");
            }
        }
    }
}
