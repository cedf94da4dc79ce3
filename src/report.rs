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
use crate::compaction::Compaction;
use crate::gate::{Finding, Outcome, Severity, Verdict};

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

impl From<&Compaction> for CompactionSummary {
    fn from(c: &Compaction) -> CompactionSummary {
        CompactionSummary {
            records: c.records(),
            kept: c.kept(),
            dropped: c.dropped(),
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
    /// Their tokens.
    pub pinned_tokens: u64,
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
    pub fn check(action: &Action, compaction: &Compaction, outcome: Outcome) -> Report {
        let mut r = Report::from_outcome(Mode::Check, outcome);
        r.action = Some(action.clone());
        r.compaction = Some(compaction.into());
        r
    }

    /// A `check --precheck` report: no action, the tools, the compaction.
    pub fn precheck(tools: &[Tool], compaction: &Compaction, outcome: Outcome) -> Report {
        let mut r = Report::from_outcome(Mode::Precheck, outcome);
        r.tools = Some(tools.iter().map(|t| t.name.clone()).collect());
        r.compaction = Some(compaction.into());
        r
    }

    /// A report with a verdict and findings and nothing else yet.
    pub fn from_outcome(mode: Mode, outcome: Outcome) -> Report {
        Report {
            verdict: outcome.verdict,
            exit_code: outcome.verdict.exit_code(),
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
                    "{} records, {} kept, {} dropped (retention={}, kept-sha256={})",
                    c.records, c.kept, c.dropped, c.retention, c.kept_sha256
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
/// Returns the verified sha256.
pub fn verify(bytes: &[u8]) -> Result<String, VerifyError> {
    let (prefix, claimed) = split_seal(bytes).ok_or(VerifyError::NoSeal)?;
    let actual = hex(&Sha256::digest(prefix));
    if actual == claimed {
        Ok(actual)
    } else {
        Err(VerifyError::Mismatch { claimed, actual })
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

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Characters that could forge or hide report content on a terminal: controls (C0,
/// DEL, C1), line and paragraph separators, bidirectional overrides, the BOM.
pub(crate) fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{FEFF}'
        )
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Escapes a raw input string for a text report: `\` and `'` get a backslash, unsafe
/// characters become `\u{XXXX}`. Safe strings are returned as they are.
pub fn clean(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| is_unsafe(c) || c == '\\' || c == '\'') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Replaces unsafe characters in JSON text with `\uXXXX` escapes, keeping the line
/// breaks of pretty-printing. Outside strings JSON is plain ASCII and inside them
/// serde_json has already escaped C0 controls, so this only rewrites string contents and
/// the JSON value is unchanged.
pub fn escape_unsafe(json: &str) -> Cow<'_, str> {
    escape_chars(json, true, |c| c != '\n' && is_unsafe(c))
}

/// Like `escape_unsafe`, but a line break is escaped too: the result is one line.
pub(crate) fn one_line(s: &str) -> Cow<'_, str> {
    escape_chars(s, false, is_unsafe)
}

fn escape_chars(s: &str, newline_ok: bool, unsafe_char: impl Fn(char) -> bool) -> Cow<'_, str> {
    // Printable ASCII (and a line break, when it is kept) is never unsafe: a text of
    // nothing else is passed over byte by byte, without decoding a char.
    let plain = |b: u8| (0x20..0x7f).contains(&b) || (newline_ok && b == b'\n');
    if s.bytes().all(plain) || !s.chars().any(&unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if unsafe_char(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A JSON value as compact, canonical, terminal-safe text.
pub fn json_text(value: &Value) -> String {
    escape_unsafe(&crate::json::canonical(value)).into_owned()
}

/// How much of an input value a finding message shows (`json_brief`, `clean_brief`).
pub const BRIEF_CHARS: usize = 120;

/// Like `json_text`, but cut after [`BRIEF_CHARS`] characters, marked `...`. For values
/// that a message may repeat once per rule (a resolved field, a fact's value): the work
/// and the text stay bounded however large the value, so that a few huge values times
/// many rules cannot blow up a report.
pub fn json_brief(value: &Value) -> String {
    let mut out = String::new();
    let complete = brief_into(value, &mut out);
    let cut = out.char_indices().nth(BRIEF_CHARS).map(|(i, _)| i);
    let text = match cut {
        Some(i) => format!("{}...", out.get(..i).unwrap_or(&out)),
        None if !complete => format!("{out}..."),
        None => out,
    };
    escape_unsafe(&text).into_owned()
}

/// Writes canonical JSON of `value` into `out` until it holds more than [`BRIEF_CHARS`]
/// bytes; false when it stopped early. Every value visited adds at least one byte, so
/// the work is bounded by the cap, not by the value.
fn brief_into(value: &Value, out: &mut String) -> bool {
    let room = (BRIEF_CHARS + 1).saturating_sub(out.len());
    if room == 0 {
        return false;
    }
    match value {
        Value::String(s) => {
            let end = s.char_indices().nth(room).map_or(s.len(), |(i, _)| i);
            let head = s.get(..end).unwrap_or("");
            out.push_str(&crate::json::canonical(&Value::String(head.to_string())));
            end == s.len()
        }
        Value::Number(n) => {
            let lit = n.as_str();
            out.push_str(lit.get(..room.min(lit.len())).unwrap_or(lit));
            lit.len() <= room
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !brief_into(item, out) {
                    return false;
                }
            }
            out.push(']');
            true
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !brief_into(&Value::String(k.clone()), out) {
                    return false;
                }
                out.push(':');
                if !brief_into(v, out) {
                    return false;
                }
            }
            out.push('}');
            true
        }
        Value::Null | Value::Bool(_) => {
            out.push_str(&crate::json::canonical(value));
            true
        }
    }
}

/// Like `clean`, but cut after [`BRIEF_CHARS`] characters, marked `...`.
pub fn clean_brief(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(BRIEF_CHARS) {
        Some((i, _)) => Cow::Owned(format!("{}...", clean(s.get(..i).unwrap_or(s)))),
        None => clean(s),
    }
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

    #[test]
    fn briefs_are_bounded_and_safe() {
        let small = serde_json::json!({"a": [1, "x"]});
        assert_eq!(json_brief(&small), json_text(&small));
        let big = Value::String("\u{202e}é".repeat(1_000_000));
        let b = json_brief(&big);
        assert!(b.len() < 8 * BRIEF_CHARS, "{}", b.len());
        assert!(b.starts_with("\"\\u202eé") && b.ends_with("..."), "{b}");
        assert!(!b.chars().any(is_unsafe));
        let nested =
            crate::json::parse(format!("[{}]", "[1,2],".repeat(100_000) + "0").as_bytes()).unwrap();
        let b = json_brief(&nested);
        assert!(b.starts_with("[[1,2],[1,2],") && b.ends_with("..."), "{b}");
        assert_eq!(b.chars().count(), BRIEF_CHARS + 3);
        let long_number = crate::json::parse("1".repeat(50_000).as_bytes()).unwrap();
        assert_eq!(
            json_brief(&long_number),
            format!("{}...", "1".repeat(BRIEF_CHARS))
        );
        let exact = Value::String("x".repeat(BRIEF_CHARS - 2));
        assert_eq!(json_brief(&exact), json_text(&exact));
        let id = "'".repeat(1000);
        assert_eq!(
            clean_brief(&id),
            format!("{}...", "\\'".repeat(BRIEF_CHARS))
        );
        assert_eq!(clean_brief("f_011"), "f_011");
    }

    #[test]
    fn clean_escapes_what_could_forge_a_line() {
        assert_eq!(clean("f_011"), "f_011");
        assert_eq!(clean("a\nb"), "a\\u{000a}b");
        assert_eq!(clean("it's"), "it\\'s");
        assert_eq!(clean("\u{202e}x"), "\\u{202e}x");
        assert_eq!(escape_unsafe("\"\u{85}\""), "\"\\u0085\"");
    }

    #[test]
    fn escaping_passes_plain_ascii_over_and_catches_what_follows_it() {
        let plain = "{\n  \"a\": \"b\"\n}";
        assert!(matches!(escape_unsafe(plain), Cow::Borrowed(_)));
        assert_eq!(one_line(plain), "{\\u000a  \"a\": \"b\"\\u000a}");
        assert!(matches!(escape_unsafe("caf\u{e9}\n"), Cow::Borrowed(_)));
        assert_eq!(escape_unsafe("ok\nx\u{2028}"), "ok\nx\\u2028");
        assert_eq!(escape_unsafe("ok\u{7f}"), "ok\\u007f");
        assert_eq!(one_line("ok\t"), "ok\\u0009");
    }
}
