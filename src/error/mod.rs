//! The one error type for input the gate cannot accept.
//!
//! Every message is one line, names where the problem is (file and line:col for JSON
//! syntax, the record id for a bad record, the flag or key otherwise) and what to fix.
//! Every refusal is typed: [`InputError`] says where (the origin and the place in it),
//! its [`Reason`] says what, with the data, and the message is rendered from it.
//!
//! The modules below this one own their reasons (a record, the action, the tools, the
//! kept ids, a value, a transcript line). The reasons of the modules that report through
//! this one live here, a file per owner, because the modules import one way and this one
//! cannot name theirs: `input` the loaders', `read` a read's (the loaders' and the
//! CLI's), `payload` the hook adapters', `cli` the CLI's.

use thiserror::Error;

use crate::action::{ActionError, ToolError};
use crate::compaction::KeptError;
use crate::predicate::ValueError;
use crate::record::{RecordError, RecordProblem};
use crate::text::clean;

mod cli;
mod input;
mod payload;
mod read;

pub use cli::{FlagProblem, GeminiDoubt, TranscriptRead};
pub use input::InputProblem;
pub use payload::PayloadProblem;
pub use read::{IoReason, ReadProblem};

/// Input the gate refuses: ERROR `invalid-input`, exit 2.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputError {
    /// Malformed JSON at a position.
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax {
        /// The file (or `<stdin>`, or a flag name) the JSON came from.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Well-formed input (or a read, a flag, a payload) refused, with its reason.
    #[error("{origin}: {}{}", place_part(.origin, .place), elide(.reason.to_string()))]
    Invalid {
        /// The file, `<stdin>` or flag the value came from.
        origin: String,
        /// Where in it: a record, a key, a flag.
        place: String,
        /// What is wrong (boxed: a `Result` carrying an error stays small).
        reason: Box<Reason>,
    },
}

/// Why a value was refused: its owner's error, with its data.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Reason {
    /// A record, alone or among the others.
    #[error(transparent)]
    Record(#[from] RecordProblem),
    /// The proposed call.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// The tools.
    #[error(transparent)]
    Tools(#[from] ToolError),
    /// The kept ids.
    #[error(transparent)]
    Kept(#[from] KeptError),
    /// A value the gate compares or carries (a hook's call params).
    #[error(transparent)]
    Value(#[from] ValueError),
    /// A line of a transcript.
    #[error(transparent)]
    Transcript(#[from] crate::transcript::Problem),
    /// The input's form.
    #[error(transparent)]
    Input(#[from] InputProblem),
    /// Reading a file or a stream.
    #[error(transparent)]
    Read(#[from] ReadProblem),
    /// A hook payload.
    #[error(transparent)]
    Payload(#[from] PayloadProblem),
    /// Reading a transcript fresh.
    #[error(transparent)]
    TranscriptRead(#[from] TranscriptRead),
    /// Flags that do not go together.
    #[error(transparent)]
    Flags(#[from] FlagProblem),
}

impl InputError {
    /// A value refused, at a named place in a named origin.
    pub fn invalid(
        origin: &str,
        place: impl Into<String>,
        reason: impl Into<Reason>,
    ) -> InputError {
        InputError::Invalid {
            origin: elide(clean(origin).into_owned()),
            place: elide(place.into()),
            reason: Box::new(reason.into()),
        }
    }

    /// A record refused, from the input `origin`.
    pub fn record(origin: &str, err: RecordError) -> InputError {
        InputError::invalid(origin, err.at.to_string(), err.problem)
    }

    /// A JSON syntax error, with the line and column shifted by `line_offset` lines
    /// (for a JSON Lines record that starts on a later line of the file).
    pub fn syntax(origin: &str, err: crate::json::SyntaxError, line_offset: usize) -> InputError {
        InputError::Syntax {
            origin: elide(clean(origin).into_owned()),
            line: err.line.saturating_add(line_offset),
            column: err.column,
            message: elide(err.message),
        }
    }
}

/// `PLACE: `, or nothing where the place only repeats the origin (`--kept` and `kept`),
/// so that no message reads `--kept: kept: ...`.
fn place_part(origin: &str, place: &str) -> String {
    if place.is_empty() || origin.trim_start_matches('-') == place.trim_start_matches('-') {
        String::new()
    } else {
        format!("{place}: ")
    }
}

/// Characters of a message part kept before and after the cut when it is too long.
const KEEP_HEAD: usize = 200;
const KEEP_TAIL: usize = 200;

/// Cuts the middle out of an overlong message part (a 100 MB id, a deep predicate's
/// path), keeping its start (where) and its end (what is wrong), so that every error
/// stays one readable line whatever the input holds.
fn elide(s: String) -> String {
    let count = s.chars().count();
    if count <= KEEP_HEAD + KEEP_TAIL + 40 {
        return s;
    }
    let head: String = s.chars().take(KEEP_HEAD).collect();
    let tail: String = s.chars().skip(count - KEEP_TAIL).collect();
    format!(
        "{head}...[{} characters cut]...{tail}",
        count - KEEP_HEAD - KEEP_TAIL
    )
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn a_huge_id_gives_a_short_message_that_keeps_both_ends() {
        let id = "x".repeat(1_000_000);
        let missing = RecordProblem::Missing("seq");
        let err = InputError::invalid("in.json", format!("record `{id}`"), missing.clone());
        let text = err.to_string();
        assert!(text.len() < 600, "{}", text.len());
        assert!(text.starts_with("in.json: record `xxx"), "{text}");
        assert!(text.contains("...[999609 characters cut]..."), "{text}");
        assert!(text.ends_with("xxx`: missing key `seq`"), "{text}");
        let short = InputError::invalid("in.json", "record `a`", missing);
        assert_eq!(short.to_string(), "in.json: record `a`: missing key `seq`");
    }

    #[test]
    fn a_typed_reason_reads_as_its_worded_form_and_is_cut_the_same() {
        use crate::record::{Place, RecordAt};
        let err = RecordError {
            at: RecordAt::Id("a".into()),
            problem: RecordProblem::Missing("seq"),
        };
        let typed = InputError::record("in.json", err);
        assert_eq!(typed.to_string(), "in.json: record `a`: missing key `seq`");
        let at_line = RecordError {
            at: RecordAt::Place(Place::Line(3)),
            problem: RecordProblem::NotObject,
        };
        assert_eq!(
            InputError::record("in.json", at_line).to_string(),
            "in.json: line 3: a record must be a JSON object"
        );
        // A reason as long as a huge id is cut in its middle, keeping both ends.
        let id = "y".repeat(100_000);
        let long = InputError::invalid(
            "in.json",
            "record `a`",
            RecordProblem::NoSuchRecord(id.clone()),
        );
        let worded = format!("`depends_on` names `{id}`, which is no other record");
        let cut = worded.chars().count() - KEEP_HEAD - KEEP_TAIL;
        let text = long.to_string();
        assert!(text.len() < 600, "{}", text.len());
        assert!(
            text.starts_with("in.json: record `a`: `depends_on` names `yyy"),
            "{text}"
        );
        assert!(
            text.contains(&format!("yyy...[{cut} characters cut]...yyy")),
            "{text}"
        );
        assert!(text.ends_with("yyy`, which is no other record"), "{text}");
        // So is a path in a reason, however deep it sits.
        let folder = PathBuf::from("d/".repeat(50_000));
        let io = IoReason::PermissionDenied;
        let doubt = GeminiDoubt::Folder { folder, reason: io };
        let text = InputError::invalid("t.jsonl", "transcript", TranscriptRead::Caller(doubt));
        let text = text.to_string();
        assert!(text.len() < 600, "{}", text.len());
        assert!(
            text.starts_with("t.jsonl: transcript: its subagents' folder `d/d/"),
            "{text}"
        );
        assert!(
            text.ends_with("so the gate cannot tell what the caller sees"),
            "{text}"
        );
        // The place is said once when it repeats the origin.
        let kept = InputError::invalid("--kept", "--kept", KeptError::NotArray);
        assert_eq!(kept.to_string(), "--kept: must be an array of record ids");
    }

    #[test]
    fn a_place_that_repeats_the_origin_is_said_once() {
        let unknown = KeptError::NoSuchRecord {
            id: "x".into(),
            near: None,
        };
        let kept = InputError::invalid("--kept", "kept", unknown);
        assert_eq!(
            kept.to_string(),
            "--kept: kept id `x` names no record: each kept id is a record's `id`: remove it from the kept ids, or add the record"
        );
        let flags = InputError::invalid("--kept", "flags", FlagProblem::KeptTwice);
        assert_eq!(
            flags.to_string(),
            "--kept: flags: --kept and --kept-from transcript both say what the agent kept: give one"
        );
        let read = ReadProblem::Io(IoReason::NotFound);
        let file = InputError::invalid("a.json", "kept file", read);
        assert_eq!(
            file.to_string(),
            "a.json: kept file: cannot read: no such file"
        );
    }

    #[test]
    fn the_reasons_above_the_lower_modules_read_as_their_messages_always_have() {
        let path = |p: &str| PathBuf::from(p);
        let cases: Vec<(Reason, &str)> = vec![
            (
                InputProblem::Empty.into(),
                "empty input: expected a document or JSON Lines records",
            ),
            (
                InputProblem::Array.into(),
                "a JSON array is neither input form: wrap the records as a document, `{\"records\": [...]}`, or write one record object per line (JSON Lines)",
            ),
            (
                InputProblem::KeptIsAFile("k\u{1b}.txt".into()).into(),
                "kept id `k\\u{001b}.txt` names no record (did you mean `@k\\u{001b}.txt`? a file of ids is read with @)",
            ),
            (
                ReadProblem::TooLarge(10).into(),
                "larger than the input limit of 10 bytes (raise it with --max-input-bytes)",
            ),
            (
                PayloadProblem::OtherEvent {
                    found: "Stop".into(),
                    expected: "PreToolUse",
                    adapter: "codex",
                }
                .into(),
                "`Stop` is not `PreToolUse`, the event the codex adapter answers: wire this adapter under `PreToolUse` only",
            ),
            (
                PayloadProblem::NoEvent("BeforeTool").into(),
                "missing: expected `BeforeTool`",
            ),
            (
                PayloadProblem::NotJsonl {
                    path: "s.txt".into(),
                    agent: "a1".into(),
                }
                .into(),
                "`s.txt` does not end in .jsonl, so the transcript of subagent `a1` cannot be found beside it",
            ),
            (
                PayloadProblem::TwoTranscripts {
                    agent: "a1".into(),
                    first: "x/agent-a1.jsonl".into(),
                    second: "y/agent-a1.jsonl".into(),
                }
                .into(),
                "subagent `a1` has two transcripts, `x/agent-a1.jsonl` and `y/agent-a1.jsonl`: the gate cannot tell which one the subagent sees",
            ),
            (
                TranscriptRead::CallNotRecorded {
                    call: "t1".into(),
                    ms: 50,
                }
                .into(),
                "does not record the call being judged (`t1`) after 50 ms: the gate never judges a transcript older than the call; if the harness writes it later than that, raise --timeout-ms",
            ),
            (
                TranscriptRead::TooFarBack(2000).into(),
                "its live context starts more than the input limit of 2000 bytes from its end (raise it with --max-input-bytes)",
            ),
            (
                TranscriptRead::Caller(GeminiDoubt::File {
                    file: path("c/s/a.jsonl"),
                    reason: IoReason::PermissionDenied,
                })
                .into(),
                "`c/s/a.jsonl` cannot be read: permission denied: Gemini CLI does not say whether the call being judged is the main agent's or a subagent's, so the gate cannot tell what the caller sees",
            ),
            (
                TranscriptRead::Caller(GeminiDoubt::Start(path("c/s/a.jsonl"))).into(),
                "the start of subagent `c/s/a.jsonl` cannot be set beside the session's last response: Gemini CLI does not say whether the call being judged is the main agent's or a subagent's, so the gate cannot tell what the caller sees",
            ),
            (
                FlagProblem::StdinTwice("INPUT `-`".into()).into(),
                "names standard input, already read for INPUT `-` (it is read once: put one of them in a file)",
            ),
        ];
        for (reason, want) in cases {
            assert_eq!(reason.to_string(), want);
        }
    }

    #[test]
    fn an_io_failure_reads_as_the_messages_word_it() {
        use std::io::{Error, ErrorKind};
        let say = |e: Error| IoReason::from(&e).to_string();
        assert_eq!(say(Error::from(ErrorKind::NotFound)), "no such file");
        assert_eq!(
            say(Error::from(ErrorKind::PermissionDenied)),
            "permission denied"
        );
        assert_eq!(say(Error::other("Disk Full")), "disk full");
        assert!(!say(Error::other("")).is_empty());
        // A relative path: where it was read from, without naming the folder.
        let relative = IoReason::reading("no/such.json", &Error::from(ErrorKind::NotFound));
        assert_eq!(
            relative.to_string(),
            "no such file in the working directory, which a relative path is read from (give the full path)"
        );
        let full = IoReason::reading("/no/such.json", &Error::from(ErrorKind::NotFound));
        assert_eq!(full, IoReason::NotFound);
    }
}
