//! Harness transcripts: the live context a harness will send its model next (SPEC 10).
//!
//! Claude Code, Codex and Gemini CLI each write their session to a JSON Lines file and
//! record their compactions in it, each in its own way (a module per harness reads one
//! format). A reader gives the live context as the strings the harness sends: message
//! text, tool-call arguments, tool results, the compaction's summary. It reads from the
//! end: everything after the last compaction sits there, so a reader is handed the end
//! of the file ([`Window`]) and asks for more ([`Failure::NeedMore`]) until it has
//! reached the compaction, which keeps the cost in line with the live context rather
//! than the session.
//!
//! Readers are exact and fail closed: an entry shape a reader does not know, a boundary
//! that names entries that are not there, is [`Failure::Invalid`] at that entry's line,
//! with a message that never quotes the file (a hook's reason goes to the model). The
//! last line is read only when it is terminated: the harness may still be writing it.
//! This module reads bytes; the CLI reads the file.

use std::sync::Arc;

use thiserror::Error;

use crate::harness::Harness;

mod claude;
mod codex;
mod gemini;
mod value;

use value::{Map, Str, Value};

pub use claude::RefusalFallback;
pub use claude::is_repl_inner as is_claude_code_repl_call;
pub use claude::session_start as claude_code_session_start;
pub(crate) use codex::UNCUT_HEAD as CODEX_UNCUT_HEAD;
pub use codex::is_nested as is_codex_code_mode_call;
pub use gemini::session_head;

/// The part of a transcript file a reader is given: its first line and its end.
#[derive(Debug, Clone, Copy)]
pub struct Window<'a> {
    /// The file's first line (up to and including its `\n`, when it has one).
    pub head: &'a [u8],
    /// The last bytes of the file.
    pub tail: &'a [u8],
    /// Where `tail` starts in the file: 0 when it is the whole file.
    pub offset: u64,
}

impl<'a> Window<'a> {
    /// A window over a whole file.
    pub fn whole(bytes: &'a [u8]) -> Window<'a> {
        let head_end = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |i| i + 1);
        Window {
            head: bytes.get(..head_end).unwrap_or(bytes),
            tail: bytes,
            offset: 0,
        }
    }

    /// True when the window holds the whole file.
    pub fn is_whole(&self) -> bool {
        self.offset == 0
    }
}

/// What a live-context string is, for `context` and for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// A developer or system message.
    Developer,
    /// A user message.
    User,
    /// A model message.
    Assistant,
    /// A string in a tool call's arguments.
    Call,
    /// A tool result.
    Result,
    /// A compaction's summary.
    Summary,
}

impl Role {
    /// The role as `context` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Call => "call",
            Role::Result => "result",
            Role::Summary => "summary",
        }
    }
}

/// One string of the live context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// What it is.
    pub role: Role,
    /// The string as the harness sends it (shared with the line's parsed JSON where it
    /// had to be decoded).
    pub text: Arc<str>,
    /// Byte offset of the line of the entry it came from (0 for a context file).
    pub at: u64,
}

/// The live context of a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    /// The harness whose format it is.
    pub harness: Harness,
    /// The strings the harness will send its model, in order.
    pub pieces: Vec<Piece>,
    /// Byte offset of the line of the last compaction, when there is one.
    pub compaction: Option<u64>,
    /// True when the transcript records the pending call the reader was asked about.
    pub call_seen: bool,
    /// Codex: the pending call's id, when it starts a command with a terminal
    /// (`exec_command` with `tty`), which the model can then type into with
    /// `write_stdin`, a call Codex runs no hook for.
    pub terminal: Option<String>,
    /// Gemini CLI: the model's response being acted on (the session's last message, when
    /// that is the model's). `None` otherwise.
    pub responding: Option<Box<Responding>>,
    /// Gemini CLI: when the process that sends this context read its instruction files
    /// (`GEMINI.md`), at the latest, in milliseconds since 1970: the `timestamp` of the
    /// session context message (`<session_context>`), which it writes as it starts, just
    /// after that read (a resume keeps the first process's). `None` when the context
    /// holds no such message with a time. Codex: the time its first line
    /// (`session_meta`) gives, written as it starts, just after reading its configuration
    /// (`model_instructions_file`). `None` for Claude Code, whose reader may not see the
    /// session's first line (see [`claude_code_session_start`]).
    pub instructions_read: Option<i64>,
}

/// Gemini CLI: the model's response being acted on, as far as the file records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Responding {
    /// When it was recorded, as the file gives it.
    pub since: String,
    /// The subagents its calls that ended ran (their `agentId`).
    pub finished_agents: Vec<String>,
}

/// Why a window gave no live context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The live context starts before the window: give the reader more of the file.
    NeedMore,
    /// The transcript cannot be read: at the line starting at this byte offset, and why.
    Invalid {
        /// Byte offset of the line's start.
        at: u64,
        /// What was expected there.
        problem: Problem,
    },
}

/// What a reader found wrong with a transcript, in its own terms. The message never
/// quotes the file: it names the kind of entry and the key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Problem {
    /// The first line is not complete yet.
    #[error("the transcript has no complete first line yet")]
    NoFirstLine,
    /// The first line is no known harness's.
    #[error(
        "not a transcript of a known harness: expected Claude Code's session JSON Lines, a Codex rollout or a Gemini CLI session file (name it with --harness)"
    )]
    UnknownFormat,
    /// The harness named is not the one whose format the file is.
    #[error(
        "this is a {} transcript, not a {} one: name the harness that wrote it, `{}` (in a hook command `omission-gate hook {}`, as `omission-gate init {}` writes it; `check` and `context` recognise it without --harness)",
        harness_name(*found),
        harness_name(*named),
        found.name(),
        found.name(),
        found.name()
    )]
    OtherHarness {
        /// The harness named.
        named: Harness,
        /// The harness the first line is of.
        found: Harness,
    },
    /// A line that is JSON but not an object (the harness, by name).
    #[error("expected a JSON object, one {0} entry a line")]
    NotObject(&'static str),
    /// A line that is not JSON.
    #[error("not valid JSON at column {column}: expected one {harness} entry a line")]
    NotJson {
        /// 1-based column of the syntax error.
        column: usize,
        /// The harness, by name.
        harness: &'static str,
    },
    /// An entry, block or part of a kind the reader does not know: a newer version of
    /// the harness may send it to the model, or may not.
    #[error(
        "{what} of a kind this version of omission-gate does not know (written by a newer {}?): it cannot tell whether the model sees it",
        harness_name(*harness)
    )]
    Unknown {
        /// What it is (`an entry`, `a message block`...).
        what: &'static str,
        /// Whose format it is.
        harness: Harness,
    },
    /// A key an entry must have.
    #[error("{what}: no `{key}`")]
    NoKey {
        /// The entry, block or part.
        what: &'static str,
        /// The key.
        key: &'static str,
    },
    /// A key of an entry, with a value of the wrong shape.
    #[error("{what}: `{key}` must be {must}")]
    Key {
        /// The entry, block or part.
        what: &'static str,
        /// The key (a dotted path inside it, for a nested one).
        key: &'static str,
        /// What its value must be (`a string`, `an object`...).
        must: &'static str,
    },
    /// A key of a thing named with its owner (`a part's `text``), of the wrong shape.
    #[error("{owner}'s `{key}` must be {must}")]
    OwnKey {
        /// The thing (`a part`, `a message`).
        owner: &'static str,
        /// The key.
        key: &'static str,
        /// What its value must be.
        must: &'static str,
    },
    /// A key, alone on its line's object, of the wrong shape.
    #[error("`{key}` must be {must}")]
    Bare {
        /// The key.
        key: &'static str,
        /// What its value must be.
        must: &'static str,
    },
    /// An element of a list (`messages`, `toolCalls`) that is not an object.
    #[error("each of `{0}` must be an object")]
    ElementNotObject(&'static str),
    /// A Gemini CLI message without a string `id`.
    #[error("each of `messages` needs a string `id`")]
    MessageWithoutId,
    /// A Gemini CLI model message with a `null` part: Gemini CLI throws on it before
    /// every request, and when it resumes the session.
    #[error(
        "a model message's `content` holds a `null` part: Gemini CLI cannot send this session to the model (remove the part)"
    )]
    NullPart,
    /// A Gemini CLI `$set` update that holds no object.
    #[error("a `$set` update must hold an object")]
    SetNotObject,
    /// A Codex content part that is not an object.
    #[error("a content part must be an object")]
    PartNotObject,
    /// A Codex compaction's replacement history item that is not an object.
    #[error("a compacted entry: each `replacement_history` item must be an object")]
    HistoryItemNotObject,
    /// A Codex compaction of a kind the reader does not read.
    #[error(
        "a compacted entry without a `replacement_history` array: this Codex version's compactions are not supported"
    )]
    CodexCompaction,
    /// A Claude Code response whose request the model's API edited.
    #[error(
        "the model's API cleared parts of this session's context (context editing): the gate cannot tell which tool results the model still sees (turn context editing off for sessions the gate judges, or compact the session)"
    )]
    ContextEdited,
    /// A Claude Code context-collapse entry (`marble-origami-commit`, `-snapshot`,
    /// `-reset`): the build that wrote it replaces spans of older messages with summaries,
    /// which Claude Code 2.1.197 neither does nor records how.
    #[error(
        "a context-collapse entry (`marble-origami-*`): the Claude Code that wrote it replaces older messages with summaries in what the model is sent, which the gate cannot follow (Claude Code 2.1.197 never writes these entries): it cannot tell which messages the model still sees (start a new session with a Claude Code release that does not collapse context, such as 2.1.197)"
    )]
    ContextCollapse,
    /// A Codex thread rollback after the last compaction.
    #[error(
        "a thread rollback after the last compaction: the gate cannot tell which turns the model still sees (compact the session, or start a new one, to have its calls judged again)"
    )]
    CodexRollback,
    /// A call made from Codex's code mode while `exec` calls of two responses have no
    /// output: which one runs it, and so which context it was made in, is not known.
    #[error(
        "a call made from code mode (`exec`), while this `exec` call and one of an earlier response both have no output: the gate cannot tell which one makes it (finish or end the earlier one's cell, or start a new session)"
    )]
    CodexExecAmbiguous,
    /// A call made from Codex's code mode while a code cell that yielded may still run:
    /// that cell's JavaScript can make calls too, and which one makes it is not known.
    #[error(
        "a call made from code mode (`exec`), while a code cell that yielded here (`Script running with cell ID`) may still run and make calls of its own: the gate cannot tell which cell makes it (`wait` for that cell until it ends, or end it with `wait` and `terminate`, then make the call again)"
    )]
    CodexCellRunning,
    /// Claude Code, a subagent's file: a response that follows the results of the
    /// subagent's own earlier response on the same model, which the environment (the
    /// variable named) makes its own refusal fallback: the model's next response, which
    /// was sent that earlier response, or a retry after a refusal, which was not (read
    /// from the variables `ANTHROPIC_DEFAULT_OPUS_MODEL`, `ANTHROPIC_DEFAULT_FABLE_MODEL`
    /// and `CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK`, as Claude Code reads them).
    #[error(
        "a subagent's response that follows the results of its earlier response on the same model, which {0} makes its own refusal fallback: a retry after a refusal looks just the same and is not sent that earlier response, so the gate cannot tell what the subagent sees (set CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK=1 for Claude Code, or have {0} name another model, or use --kept)"
    )]
    OwnRefusalFallback(&'static str),
    /// A Codex rollout whose first entry is not its `session_meta`.
    #[error("a Codex rollout starts with its `session_meta` entry")]
    NoSessionMeta,
    /// A Claude Code `parentUuid` chain that comes back to an entry.
    #[error("the `parentUuid` chain runs in a circle")]
    ChainCircle,
    /// A Claude Code compaction boundary that lists entries not in the transcript.
    #[error("this compaction boundary lists preserved entries that are not in the transcript")]
    PreservedMissing,
    /// A Claude Code compaction boundary that lists, as preserved, an entry written after
    /// it.
    #[error(
        "this compaction boundary lists as preserved an entry written after it: a compaction keeps entries written before its boundary"
    )]
    PreservedAfterBoundary,
    /// A Claude Code entry whose `parentUuid` names only entries written after it.
    #[error(
        "this entry's `parentUuid` names only entries written after it: an entry's parent is written before it, so the chain cannot be read as Claude Code wrote it"
    )]
    ParentWrittenAfter,
    /// With no call named, the newest Claude Code entry (or the newest response with a
    /// call pending) repeats the uuid of an entry written before it.
    #[error(
        "with no call named, the gate walks the session from its newest entry, and this one repeats the uuid of an entry written before it (Claude Code appends copies of entries when a session is reopened in an editor): the gate cannot tell where the session goes on from (judge the call with the hook, whose payload names it, or with a copy of the transcript taken before the repeated lines)"
    )]
    NewestIsCopy,
    /// A Claude Code compaction boundary without its summary.
    #[error("this compaction boundary is followed by no compaction summary (`isCompactSummary`)")]
    NoSummary,
    /// A Claude Code compaction summary whose `parentUuid` is not its boundary's.
    #[error(
        "this compaction summary (`isCompactSummary`) does not follow a compaction boundary: its `parentUuid` names no `compact_boundary` entry of the transcript"
    )]
    SummaryWithoutBoundary,
    /// The call being judged already has a result: the hook payload names a call that
    /// ran, and the context it was asked in is not the agent's now.
    #[error(
        "this entry records a result for the call being judged: the hook payload names a call that already ran"
    )]
    CallAnswered,
    /// The call being judged was asked before this compaction: the hook payload names a
    /// call from before it, and the context it was asked in is not the agent's now.
    #[error(
        "this compaction boundary was written after the call being judged: the hook payload names a call asked before the last compaction"
    )]
    CallBeforeCompaction,
}

/// A harness's name, as messages give it.
fn harness_name(harness: Harness) -> &'static str {
    harness.title()
}

impl Problem {
    /// True for a problem that the lines written after it cannot take away: a call made
    /// from Codex's code mode is never recorded under its own id, and once the `exec`
    /// call that runs it is, nothing written later tells which cell makes it.
    pub fn is_settled(&self) -> bool {
        matches!(
            self,
            Problem::CodexExecAmbiguous | Problem::CodexCellRunning
        )
    }
}

impl Failure {
    pub(crate) fn at(at: u64, problem: Problem) -> Failure {
        Failure::Invalid { at, problem }
    }

    /// `what` (an entry, a block, a part) of a kind the reader does not know.
    pub(crate) fn unknown(at: u64, what: &'static str, harness: Harness) -> Failure {
        Failure::at(at, Problem::Unknown { what, harness })
    }
}

/// Reads the live context from a window. `harness` names the format; without it the
/// format is recognised from the first line. `call` is the pending call's id when the
/// hook payload gives one: its arguments are never context, and [`Live::call_seen`] says
/// whether the transcript records it yet. No model is taken to be its own refusal
/// fallback (see [`read_with`]). The tests' shorthand: the CLI and the fuzz targets call
/// [`read_with`].
#[cfg(test)]
pub fn read(
    harness: Option<Harness>,
    window: Window<'_>,
    call: Option<&str>,
) -> Result<Live, Failure> {
    read_with(harness, window, call, &RefusalFallback::default())
}

/// [`read`], with what Claude Code's environment says of its refusal fallback: where it
/// makes a model its own fallback, a subagent's response on it that follows the results
/// of its own earlier one is [`Problem::OwnRefusalFallback`].
pub fn read_with(
    harness: Option<Harness>,
    window: Window<'_>,
    call: Option<&str>,
    fallback: &RefusalFallback,
) -> Result<Live, Failure> {
    let harness = match harness {
        Some(h) => h,
        None => detect(window.head)?,
    };
    // A window that is not the whole file holds the start of the live context only if
    // it holds this mark; without it, ask for more before parsing anything.
    if !window.is_whole() && memchr::memmem::find(window.tail, mark(harness)).is_none() {
        return Err(Failure::NeedMore);
    }
    let lines = lines(window);
    let read = match harness {
        Harness::ClaudeCode => claude::read(&lines, window, call, fallback),
        Harness::Codex => codex::read(&lines, window, call),
        Harness::GeminiCli => gemini::read(&lines, window, call),
    };
    match read {
        // A file its reader refuses whose first line is another harness's: say so,
        // rather than what the wrong reader made of it.
        Err(Failure::Invalid { .. }) => match detect(window.head) {
            Ok(found) if found != harness => Err(Failure::Invalid {
                at: 0,
                problem: Problem::OtherHarness {
                    named: harness,
                    found,
                },
            }),
            _ => read,
        },
        _ => read,
    }
}

/// Byte offsets of the lines of every compaction in a whole transcript, oldest first.
pub fn compactions(harness: Harness, bytes: &[u8]) -> Result<Vec<u64>, Failure> {
    let window = Window::whole(bytes);
    // Only a line that holds the harness's mark can be a compaction.
    let finder = memchr::memmem::Finder::new(mark(harness));
    let lines: Vec<Line<'_>> = lines(window)
        .into_iter()
        .filter(|l| finder.find(l.bytes).is_some())
        .collect();
    match harness {
        Harness::ClaudeCode => claude::compactions(window.head, &lines),
        Harness::Codex => codex::compactions(&lines),
        Harness::GeminiCli => gemini::compactions(&lines),
    }
}

/// Bytes every line that can start a live context holds: a compaction's, or (Gemini
/// CLI) any line that sets the message list. Codex: a `compacted` entry and a compaction
/// model item (`compaction`, `compaction_summary`, `context_compaction`) alike.
fn mark(harness: Harness) -> &'static [u8] {
    match harness {
        Harness::ClaudeCode => b"compact_boundary",
        Harness::Codex => b"compact",
        Harness::GeminiCli => b"\"messages\"",
    }
}

/// The strings of an instruction file named with `--context-file` that Gemini CLI sends
/// its model as they are: it reads `@word` in such a file as an import and sends
/// something else in its place (see [`gemini::sent_of_file`]).
pub fn gemini_file_strings(text: &str) -> Vec<&str> {
    gemini::sent_of_file(text)
}

/// The harness whose transcript starts with this line.
pub fn detect(head: &[u8]) -> Result<Harness, Failure> {
    let line = trim_line(head);
    if line.is_empty() || !head.ends_with(b"\n") {
        return Err(Failure::at(0, Problem::NoFirstLine));
    }
    let Ok(Value::Object(obj)) = value::parse(line) else {
        return Err(Failure::at(0, Problem::UnknownFormat));
    };
    if codex::is_head(&obj) {
        Ok(Harness::Codex)
    } else if gemini::is_head(&obj) {
        Ok(Harness::GeminiCli)
    } else if claude::is_entry(&obj) {
        Ok(Harness::ClaudeCode)
    } else {
        Err(Failure::at(0, Problem::UnknownFormat))
    }
}

/// A complete, non-blank line of a window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// Byte offset of the line's start in the file.
    pub at: u64,
    /// The line without its terminator.
    pub bytes: &'a [u8],
}

impl<'a> Line<'a> {
    /// The line's JSON object, or why it is not one.
    pub(crate) fn object(&self, harness: &'static str) -> Result<Map<'a>, Failure> {
        match value::parse(self.bytes) {
            Ok(Value::Object(obj)) => Ok(obj),
            Ok(_) => Err(Failure::at(self.at, Problem::NotObject(harness))),
            Err(e) => Err(Failure::at(
                self.at,
                Problem::NotJson {
                    column: e.column,
                    harness,
                },
            )),
        }
    }
}

/// A time as Claude Code and Gemini CLI write it (JavaScript's `toISOString`),
/// `YYYY-MM-DDTHH:MM:SS.mmmZ`: two of them compare as their text does.
pub(crate) fn is_utc_millis(time: &str) -> bool {
    let b = time.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'.',
            23 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// A time written as [`is_utc_millis`] reads it, in milliseconds since 1970-01-01;
/// `None` for any other text, or a day the calendar does not have.
pub(crate) fn utc_millis(t: &str) -> Option<i64> {
    if !is_utc_millis(t) {
        return None;
    }
    let t = t.as_bytes();
    let n = |r: std::ops::Range<usize>| {
        t.get(r)?
            .iter()
            .try_fold(0i64, |acc, &c| Some(acc * 10 + i64::from(c - b'0')))
    };
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (h, min, sec, ms) = (n(11..13)?, n(14..16)?, n(17..19)?, n(20..23)?);
    let days_in = [
        31,
        28 + i64::from(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)),
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let month_days = *days_in.get(usize::try_from(m.checked_sub(1)?).ok()?)?;
    if !(1..=month_days).contains(&d) || h > 23 || min > 59 || sec > 59 {
        return None;
    }
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((((days * 24 + h) * 60 + min) * 60 + sec) * 1000 + ms)
}

/// The complete lines of a window, blank ones left out. A window that does not start
/// the file starts with a cut line, which is left out too; so is an unterminated last
/// line, which the harness may still be writing.
pub(crate) fn lines(window: Window<'_>) -> Vec<Line<'_>> {
    let tail = window.tail;
    let mut start = if window.is_whole() {
        0
    } else {
        match memchr::memchr(b'\n', tail) {
            Some(i) => i + 1,
            None => tail.len(),
        }
    };
    let mut out = Vec::new();
    for end in memchr::memchr_iter(b'\n', tail) {
        if end < start {
            continue;
        }
        let bytes = trim_line(tail.get(start..end).unwrap_or_default());
        if !bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            out.push(Line {
                at: window.offset + start as u64,
                bytes,
            });
        }
        start = end + 1;
    }
    out
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Every string in a JSON value (object keys left out), depth first: the strings of a
/// tool call's arguments or a tool result, each on its own.
pub(crate) fn strings_of(value: &Value, out: &mut Vec<Arc<str>>) {
    match value {
        Value::String(s) => out.push(s.shared()),
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        // In the order of their keys, as serde_json's map gives them.
        Value::Object(map) => map.sorted().for_each(|v| strings_of(v, out)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// The live-context pieces of `role` from a JSON value's strings.
pub(crate) fn push_strings(out: &mut Vec<Piece>, role: Role, at: u64, value: &Value) {
    let mut strings = Vec::new();
    strings_of(value, &mut strings);
    out.extend(strings.into_iter().map(|text| Piece { role, text, at }));
}

/// True for a UUID in its usual text form: 36 characters, hex digits in groups of 8, 4,
/// 4, 4 and 12 joined by `-` (the ids harnesses give calls no entry records).
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A key's value as a string, or an error naming the key.
pub(crate) fn string_at<'v>(
    obj: &'v Map<'_>,
    key: &'static str,
    at: u64,
    what: &'static str,
) -> Result<&'v str, Failure> {
    str_at(obj, key, at, what).map(|s| &**s)
}

/// [`string_at`], as a piece holds it (see [`Str::shared`]).
pub(crate) fn shared_at(
    obj: &Map<'_>,
    key: &'static str,
    at: u64,
    what: &'static str,
) -> Result<Arc<str>, Failure> {
    str_at(obj, key, at, what).map(Str::shared)
}

fn str_at<'v, 'a>(
    obj: &'v Map<'a>,
    key: &'static str,
    at: u64,
    what: &'static str,
) -> Result<&'v Str<'a>, Failure> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(Failure::at(
            at,
            Problem::Key {
                what,
                key,
                must: "a string",
            },
        )),
        None => Err(Failure::at(at, Problem::NoKey { what, key })),
    }
}

#[cfg(test)]
mod tests;
