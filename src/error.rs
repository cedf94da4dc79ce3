//! The one error type for input the gate cannot accept.
//!
//! Every message is one line, names where the problem is (file and line:col for JSON
//! syntax, the record id for a bad record, the flag or key otherwise) and what to fix.
//! Every refusal is typed: [`InputError`] says where (the origin and the place in it),
//! its [`Reason`] says what, with the data, and the message is rendered from it.
//!
//! The lower modules own their reasons (a record, the action, the tools, the kept ids,
//! a value, a transcript line). The reasons of the modules above this one (the loaders,
//! the hook adapters, the CLI) live here, one enum per owner, because the modules import
//! one way: this one cannot name theirs.

use std::path::PathBuf;

use thiserror::Error;

use crate::action::{ActionError, ToolError};
use crate::compaction::KeptError;
use crate::predicate::ValueError;
use crate::record::{RecordError, RecordProblem};
use crate::text::clean;

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

/// What is wrong with the input's form (the loaders', `input`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputProblem {
    /// Nothing but white space.
    #[error("empty input: expected a document or JSON Lines records")]
    Empty,
    /// A bare JSON array of records.
    #[error(
        "a JSON array is neither input form: wrap the records as a document, `{{\"records\": [...]}}`, or write one record object per line (JSON Lines)"
    )]
    Array,
    /// A document that is not an object.
    #[error("expected an object")]
    NotObject,
    /// A document key the format does not have (the key is the place).
    #[error("unknown document key (a document takes records, kept, action, tools, meta)")]
    UnknownKey,
    /// A document's `records` that is not an array.
    #[error("must be an array of record objects")]
    RecordsNotArray,
    /// `check` with neither a document `action` nor `--action`.
    #[error("check needs an action: a document `action` key or --action")]
    NoAction,
    /// `--kept VALUE` whose ids name no record, where `VALUE` is a file: the value.
    #[error(
        "kept id `{}` names no record (did you mean `@{}`? a file of ids is read with @)",
        clean(.0),
        clean(.0)
    )]
    KeptIsAFile(String),
}

/// Why a file or a stream could not be read in full.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadProblem {
    /// The read failed.
    #[error("cannot read: {0}")]
    Io(IoReason),
    /// More bytes than `--max-input-bytes`: the limit.
    #[error("larger than the input limit of {0} bytes (raise it with --max-input-bytes)")]
    TooLarge(u64),
    /// A flag's `@FILE` that is not UTF-8.
    #[error("not valid UTF-8")]
    NotUtf8,
    /// A `--context-file` that is not UTF-8.
    #[error("the file is not valid UTF-8 text")]
    NotUtf8Text,
}

/// Why a read failed, as messages word it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IoReason {
    /// No such file.
    #[error("no such file")]
    NotFound,
    /// Permission denied.
    #[error("permission denied")]
    PermissionDenied,
    /// Any other failure: the system's own words, lowercased.
    #[error("{0}")]
    Other(String),
}

impl From<&std::io::Error> for IoReason {
    fn from(e: &std::io::Error) -> IoReason {
        match e.kind() {
            std::io::ErrorKind::NotFound => IoReason::NotFound,
            std::io::ErrorKind::PermissionDenied => IoReason::PermissionDenied,
            // The system's words, or the kind of failure where it gives none.
            _ => match e.to_string().to_lowercase() {
                words if words.is_empty() => {
                    IoReason::Other(format!("{:?}", e.kind()).to_lowercase())
                }
                words => IoReason::Other(words),
            },
        }
    }
}

/// What is wrong with a hook payload (the hook adapters'). The key at fault is the
/// error's place.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PayloadProblem {
    /// Nothing on stdin.
    #[error("empty: the harness sent no hook payload")]
    Empty,
    /// JSON, but not an object.
    #[error("the hook payload must be a JSON object")]
    NotObject,
    /// The payload of another event.
    #[error("`{}` is not `{expected}`, the event the {adapter} adapter answers", clean(.found))]
    OtherEvent {
        /// The payload's `hook_event_name`.
        found: String,
        /// The event the adapter answers.
        expected: &'static str,
        /// The adapter, as the command line names it.
        adapter: &'static str,
    },
    /// No `hook_event_name`: the event expected.
    #[error("missing: expected `{0}`")]
    NoEvent(&'static str),
    /// A key the adapter needs is missing.
    #[error("missing")]
    Missing,
    /// A key that must hold a string.
    #[error("must be a string")]
    NotString,
    /// A key that must hold a non-empty string.
    #[error("must be a non-empty string")]
    NotNonEmptyString,
    /// A key that must hold an object.
    #[error("must be an object")]
    NotAnObject,
    /// `--kept-from transcript`, and the payload names no transcript.
    #[error(
        "missing or empty: --kept-from transcript judges against the session transcript the harness names there, and this session has none (run the harness with session recording on, or use --kept)"
    )]
    NoTranscript,
    /// `--kept-from transcript`, and the payload names no call.
    #[error(
        "missing, empty or not a string: --kept-from transcript waits until the transcript records the call it names, and without it cannot tell a fresh transcript from a stale one (pass the payload on as the harness sent it, or use --kept)"
    )]
    NoCall,
    /// An `agent_id` that cannot name a file: the id.
    #[error(
        "`{}` is not a subagent id (letters, digits, - and _): the gate cannot tell which transcript is the subagent's",
        clean(.0)
    )]
    NotAgentId(String),
    /// A session transcript beside which no subagent's can be found.
    #[error(
        "`{}` does not end in .jsonl, so the transcript of subagent `{}` cannot be found beside it",
        clean(.path),
        clean(.agent)
    )]
    NotJsonl {
        /// The session's `transcript_path`.
        path: String,
        /// The subagent's id (a plain name).
        agent: String,
    },
    /// Two files that could each be the subagent's transcript.
    #[error(
        "subagent `{}` has two transcripts, `{}` and `{}`: the gate cannot tell which one the subagent sees",
        clean(.agent),
        clean(.first),
        clean(.second)
    )]
    TwoTranscripts {
        /// The subagent's id (a plain name).
        agent: String,
        /// The first file, in path order.
        first: String,
        /// The second.
        second: String,
    },
    /// Transcript mode, and the transcript was never read (a caller's slip).
    #[error("the transcript was not read")]
    TranscriptNotRead,
    /// No kept set to judge against (a caller's slip).
    #[error("no kept set was computed")]
    NoKeptSet,
}

/// Why a transcript gives no fresh live context (the CLI's reader, which waits for it).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TranscriptRead {
    /// The call being judged is not in the transcript by the deadline.
    #[error(
        "does not record the call being judged (`{}`) after {ms} ms: the gate never judges a transcript older than the call; if the harness writes it later than that, raise --timeout-ms",
        clean(.call)
    )]
    CallNotRecorded {
        /// The call's id.
        call: String,
        /// How long the reader waited, in milliseconds.
        ms: u128,
    },
    /// The file got shorter while it was read.
    #[error("the file shrank while it was read: read it again once the harness has written it")]
    Shrank,
    /// The live context starts further from the end than the input limit: the limit.
    #[error(
        "its live context starts more than the input limit of {0} bytes from its end (raise it with --max-input-bytes)"
    )]
    TooFarBack(u64),
    /// The whole file was read and the live context has no start.
    #[error("the reader found no start of the live context")]
    NoStart,
    /// A file that must be read whole and could not be.
    #[error("cannot be read whole")]
    NotWhole,
    /// Gemini CLI: whose call it is cannot be told, and so what the caller sees.
    #[error(
        "{0}: Gemini CLI does not say whether the call being judged is the main agent's or a subagent's, so the gate cannot tell what the caller sees"
    )]
    Caller(GeminiDoubt),
}

/// Why the Gemini CLI subagents at work cannot be told.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GeminiDoubt {
    /// The session file's first line names no session.
    #[error("its first line names no session")]
    NoSession,
    /// A session id that cannot name a folder.
    #[error("its session id is not a plain name (letters, digits, - and _)")]
    SessionNotPlain,
    /// The session's folder of subagent files.
    #[error("its subagents' folder `{}` cannot be read: {reason}", clean(&.folder.to_string_lossy()))]
    Folder {
        /// The folder.
        folder: PathBuf,
        /// Why.
        reason: IoReason,
    },
    /// A file in that folder.
    #[error("`{}` cannot be read: {reason}", clean(&.file.to_string_lossy()))]
    File {
        /// The file.
        file: PathBuf,
        /// Why.
        reason: IoReason,
    },
    /// A file in that folder that is no session file.
    #[error("`{}` is not a Gemini CLI session file", clean(&.0.to_string_lossy()))]
    NotSession(PathBuf),
    /// A subagent, and no response being acted on.
    #[error(
        "the session's last message is not a response being acted on, and it has a subagent (`{}`)",
        clean(&.0.to_string_lossy())
    )]
    NoResponse(PathBuf),
    /// A subagent whose start cannot be compared with the response's.
    #[error(
        "the start of subagent `{}` cannot be set beside the session's last response",
        clean(&.0.to_string_lossy())
    )]
    Start(PathBuf),
}

/// Flags that do not go together (the CLI's).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FlagProblem {
    /// `--kept` with `--kept-from transcript`.
    #[error("--kept and --kept-from transcript both say what the agent kept: give one")]
    KeptTwice,
    /// `--retention` with `--kept-from transcript`.
    #[error("--retention and --kept-from transcript both say what the agent kept: give one")]
    RetentionTwice,
    /// `--context-file` without `--kept-from transcript`.
    #[error("a context file adds to a transcript's live context: it needs --kept-from transcript")]
    ContextWithoutTranscript,
    /// Standard input named twice: what read it first, as messages name it.
    #[error(
        "names standard input, already read for {0} (it is read once: put one of them in a file)"
    )]
    StdinTwice(String),
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
        assert_eq!(kept.to_string(), "--kept: kept id `x` names no record");
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
    }
}
