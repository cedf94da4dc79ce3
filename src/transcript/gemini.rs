//! Gemini CLI's session file: a metadata line, message records and updates.
//!
//! As Gemini CLI's own resume loader does: the messages form a list ordered by `id`; a
//! message record whose id is listed replaces that message in place (that is how a
//! call's `toolCalls` arrive), otherwise it is appended; `{"$set": {"messages": [...]}}`
//! replaces the whole list (a compression writes one, and so do a session's start and a
//! resume), and records after it apply on top; `{"$rewindTo": ID}` removes ID and every
//! message after it (every message, when ID is not listed). Only `user` and `gemini`
//! messages are sent to the model; `info`, `warning` and `error` are screen notices.

use std::collections::{BTreeSet, HashMap};

use super::value::{Map, Value};
use super::{Failure, Line, Live, Piece, Problem, Role, Window, push_strings};
use crate::harness::Harness;

const NAME: &str = "Gemini CLI session";

/// The model's fixed reply that follows a compression's summary (the summary is the user
/// message just before it).
const COMPRESSED: &str = "Got it. Thanks for the additional context!";

/// True for a session file's first line (for recognising the format).
pub(super) fn is_head(obj: &Map<'_>) -> bool {
    matches!(obj.get("sessionId"), Some(Value::String(_)))
        && matches!(obj.get("projectHash"), Some(Value::String(_)))
        && !obj.contains_key("type")
}

/// What a session file's first line says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHead {
    /// `sessionId`: for a subagent's file, the subagent's id.
    pub id: String,
    /// `kind`: `main`, or `subagent` for the file a subagent keeps in
    /// `<chats>/<main session id>/`.
    pub kind: Option<String>,
    /// `startTime`, as the file gives it.
    pub start: Option<String>,
}

/// The first line of a session file, read; `None` for a line that is not one.
pub fn session_head(line: &[u8]) -> Option<SessionHead> {
    let Some(Value::Object(obj)) = super::value::parse_lenient(std::str::from_utf8(line).ok()?)
    else {
        return None;
    };
    if !is_head(&obj) {
        return None;
    }
    let text = |key: &str| obj.get(key).and_then(Value::as_str).map(str::to_string);
    Some(SessionHead {
        id: text("sessionId")?,
        kind: text("kind"),
        start: text("startTime"),
    })
}

enum Record<'a> {
    /// `$rewindTo`.
    Rewind(String),
    /// A message record.
    Message(Map<'a>),
    /// A `$set` update or the metadata line; with `messages`, the list that replaces all.
    Set(Option<Vec<Value<'a>>>),
}

fn record<'a>(line: &Line<'a>) -> Result<Record<'a>, Failure> {
    let mut obj = line.object(NAME)?;
    if let Some(Value::String(id)) = obj.get("$rewindTo") {
        return Ok(Record::Rewind(id.to_string()));
    }
    if matches!(obj.get("id"), Some(Value::String(_))) {
        check_message(&obj, line.at)?;
        return Ok(Record::Message(obj));
    }
    let set = match obj.remove("$set") {
        Some(Value::Object(set)) => Some(set),
        Some(_) => {
            return Err(Failure::at(line.at, Problem::SetNotObject));
        }
        None if is_head(&obj) => Some(obj),
        None => None,
    };
    let Some(mut set) = set else {
        return Err(Failure::unknown(line.at, "a line", Harness::GeminiCli));
    };
    match set.remove("messages") {
        None => Ok(Record::Set(None)),
        Some(Value::Array(items)) => Ok(Record::Set(Some(items))),
        Some(_) => Err(Failure::at(
            line.at,
            Problem::Bare {
                key: "messages",
                must: "an array",
            },
        )),
    }
}

fn check_message(obj: &Map<'_>, at: u64) -> Result<(), Failure> {
    match obj.get("type").and_then(Value::as_str) {
        Some("user" | "gemini" | "info" | "error" | "warning") => Ok(()),
        _ => Err(Failure::unknown(at, "a message", Harness::GeminiCli)),
    }
}

/// The ordered message list, by id.
#[derive(Default)]
struct Messages<'a> {
    list: Vec<(u64, Map<'a>)>,
    index: HashMap<String, usize>,
}

impl<'a> Messages<'a> {
    fn id(m: &Map<'_>) -> String {
        m.get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }

    fn put(&mut self, at: u64, m: Map<'a>) {
        let id = Messages::id(&m);
        match self.index.get(&id).and_then(|&i| self.list.get_mut(i)) {
            Some(slot) => *slot = (at, m),
            None => {
                self.index.insert(id, self.list.len());
                self.list.push((at, m));
            }
        }
    }

    fn clear(&mut self) {
        self.list.clear();
        self.index.clear();
    }

    fn rewind(&mut self, id: &str) {
        match self.index.get(id).copied() {
            Some(i) => {
                for (_, m) in self.list.drain(i..) {
                    self.index.remove(&Messages::id(&m));
                }
            }
            None => self.clear(),
        }
    }
}

pub(super) fn read(
    lines: &[Line<'_>],
    window: Window<'_>,
    call: Option<&str>,
) -> Result<Live, Failure> {
    // The last line that sets the whole list: the live context starts there.
    let mut records = Vec::new();
    let mut start = None;
    for line in lines.iter().rev() {
        let r = record(line)?;
        let sets_all = matches!(r, Record::Set(Some(_)));
        records.push((line.at, r));
        if sets_all {
            start = Some(line.at);
            break;
        }
    }
    if start.is_none() && !window.is_whole() {
        return Err(Failure::NeedMore);
    }
    records.reverse();
    let mut messages = Messages::default();
    let mut compaction = None;
    let mut summary = None;
    for (at, r) in records {
        match r {
            Record::Rewind(id) => messages.rewind(&id),
            Record::Message(m) => messages.put(at, m),
            Record::Set(None) => {}
            Record::Set(Some(items)) => {
                messages.clear();
                if let Some(id) = summary_id(&items) {
                    compaction = Some(at);
                    summary = Some(id);
                }
                for item in items {
                    let Value::Object(m) = item else {
                        return Err(Failure::at(at, Problem::ElementNotObject("messages")));
                    };
                    if !matches!(m.get("id"), Some(Value::String(_))) {
                        return Err(Failure::at(at, Problem::MessageWithoutId));
                    }
                    check_message(&m, at)?;
                    messages.put(at, m);
                }
            }
        }
    }
    // The model's last message is the response that holds the pending call: Gemini CLI
    // records it before the hook runs, and its calls' results only after they end. It is
    // what the model is sending, not what it was sent: its text, its calls' arguments and
    // the results of its calls that ended already (run one after another, sent together
    // once all have ended) are not what the model saw when it asked for the pending call.
    // (Screen notices after it are not messages the model is sent.)
    let last = messages.list.iter().rposition(|(_, m)| {
        matches!(
            m.get("type").and_then(Value::as_str),
            Some("user" | "gemini")
        )
    });
    // A call that ended is answered by a user message of function responses, so a model
    // message that is still the last one sent is the response being acted on, even when
    // some of its calls (run one after another) already have their results.
    let responding_to = last
        .and_then(|i| messages.list.get(i))
        .filter(|(_, m)| m.get("type").and_then(Value::as_str) == Some("gemini"));
    let responding = responding_to.is_some();
    let responding_now = responding_to.and_then(|(_, m)| {
        let since = m.get("timestamp").and_then(Value::as_str)?.to_string();
        let calls = m.get("toolCalls").and_then(Value::as_array);
        let finished_agents = calls
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("agentId").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
        Some(Box::new(super::Responding {
            since,
            finished_agents,
        }))
    });
    let pending = last.filter(|_| responding);
    let unsent = unsent_runs(&messages.list, pending);
    let mut out = Vec::new();
    let mut call_seen = false;
    for (i, (at, m)) in messages.list.iter().enumerate() {
        if Some(i) == pending {
            if holds_null_part(m.get("content")) {
                return Err(Failure::at(*at, Problem::NullPart));
            }
            // Not context, but read as any message is: a part the reader does not know
            // is an error wherever it stands.
            parts(&mut Vec::new(), Role::Assistant, *at, m.get("content"))?;
            call_seen |= tool_calls(&mut Vec::new(), *at, m, false, call)?;
            continue;
        }
        let role = match m.get("type").and_then(Value::as_str) {
            Some("gemini") if holds_null_part(m.get("content")) => {
                return Err(Failure::at(*at, Problem::NullPart));
            }
            Some("user") if summary.as_deref() == m.get("id").and_then(Value::as_str) => {
                Role::Summary
            }
            Some("user") => Role::User,
            Some("gemini") => Role::Assistant,
            _ => continue,
        };
        // A model message in a run Gemini CLI leaves out sends nothing of its own; the
        // results of its calls are sent apart from it, as the user's.
        let sent = !unsent.contains(&i);
        let mut own = Vec::new();
        parts(&mut own, role, *at, m.get("content"))?;
        if sent && !(role == Role::Assistant && text_joined(m)) {
            out.append(&mut own);
        }
        // Only a model message's calls are sent (a user message's are not).
        let mut calls = Vec::new();
        let args = sent && calls_sent_apart(m);
        call_seen |= tool_calls(&mut calls, *at, m, args, call)?;
        if role == Role::Assistant {
            out.append(&mut calls);
        }
    }
    Ok(Live {
        harness: Harness::GeminiCli,
        pieces: out,
        compaction,
        call_seen,
        terminal: None,
        responding: responding_now,
        instructions_read: instructions_read(&messages.list),
    })
}

/// The id of a compression's summary in a list of messages: the user message followed by
/// the model's fixed reply.
fn summary_id(items: &[Value]) -> Option<String> {
    items.windows(2).find_map(|pair| {
        let [user, model] = pair else { return None };
        let text = |m: &Value| -> Option<String> {
            match m.get("content") {
                Some(Value::String(s)) => Some(s.to_string()),
                Some(Value::Array(parts)) => Some(
                    parts
                        .iter()
                        .filter_map(|p| {
                            p.get("text").and_then(Value::as_str).or_else(|| p.as_str())
                        })
                        .collect(),
                ),
                _ => None,
            }
        };
        let is = |m: &Value, t: &str| m.get("type").and_then(Value::as_str) == Some(t);
        (is(user, "user") && is(model, "gemini") && text(model).as_deref() == Some(COMPRESSED))
            .then(|| user.get("id").and_then(Value::as_str).map(str::to_string))
            .flatten()
    })
}

/// The messages (by their place in `list`) whose model content Gemini CLI leaves out of
/// every request: before each one it drops a whole run of model contents (the model's
/// messages not parted by a user's: one of the user, or the results of a message's
/// calls) when any of them is one its API would refuse (`isValidContent`). The response
/// being acted on (`pending`) was not in the history the model was sent.
fn unsent_runs(list: &[(u64, Map<'_>)], pending: Option<usize>) -> BTreeSet<usize> {
    let mut unsent = BTreeSet::new();
    let mut run = Vec::new();
    let mut refused = false;
    let mut end = |run: &mut Vec<usize>, refused: &mut bool| {
        if *refused {
            unsent.extend(run.iter().copied());
        }
        run.clear();
        *refused = false;
    };
    for (i, (_, m)) in list.iter().enumerate() {
        if Some(i) == pending {
            continue;
        }
        match m.get("type").and_then(Value::as_str) {
            Some("user") if !left_out_on_resume(m.get("content")) => end(&mut run, &mut refused),
            Some("gemini") => {
                run.push(i);
                refused |= !valid_content(m.get("content"));
                if answered(m) {
                    end(&mut run, &mut refused);
                }
            }
            _ => {}
        }
    }
    end(&mut run, &mut refused);
    unsent
}

/// True when a model message's `content` is one Gemini CLI's API check accepts
/// (`isValidContent`): no part is empty (`{}`, or a part that is not an object), nor
/// an empty text that is not a thought and carries nothing else. A string is one text
/// part, and an empty one none.
fn valid_content(content: Option<&Value>) -> bool {
    let valid_part = |part: &Value| match part {
        Value::String(s) => !s.is_empty(),
        Value::Object(p) => {
            let empty_text = p.get("text").and_then(Value::as_str) == Some("")
                && !p.get("thought").is_some_and(is_set)
                && p.keys()
                    .all(|k| matches!(k, "text" | "thought" | "callIndex"));
            p.keys().next().is_some() && !empty_text
        }
        _ => false,
    };
    match content {
        Some(Value::Array(items)) => items.iter().all(valid_part),
        Some(part @ Value::Object(_)) => valid_part(part),
        _ => true,
    }
}

/// True for a model message's `content` that holds a `null` part: Gemini CLI's API check
/// (`isValidContent`, before every request) and its resume loader both throw on one, so
/// the session cannot go on (the reader does not guess which of its messages were sent).
fn holds_null_part(content: Option<&Value>) -> bool {
    content
        .and_then(Value::as_array)
        .is_some_and(|parts| parts.contains(&Value::Null))
}

/// True when Gemini CLI sends the results of a model message's calls after it, as a user
/// message of their own: one call has a result that makes a part (one JavaScript counts
/// as true, and not an empty list).
fn answered(m: &Map<'_>) -> bool {
    m.get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("result"))
        .any(|r| is_set(r) && r.as_array().is_none_or(|parts| !parts.is_empty()))
}

/// True for a user message Gemini CLI leaves out of the history when it resumes a
/// session (its text, each part of another kind shown as `[...]`, is empty or starts
/// with `/`, `?`, `<session_context>` or `<hook_context>`): such a message does not part
/// two runs of model messages then. (It is counted all the same: Gemini CLI records a
/// user message as it adds it to the history it sends, and a resume writes the whole
/// list again, a `$set`, without such messages.)
fn left_out_on_resume(content: Option<&Value>) -> bool {
    const SHOWN: [&str; 8] = [
        "videoMetadata",
        "thought",
        "codeExecutionResult",
        "executableCode",
        "fileData",
        "functionCall",
        "functionResponse",
        "inlineData",
    ];
    let shown = |part: &Value| -> String {
        match part {
            Value::String(s) => s.to_string(),
            Value::Object(p) if SHOWN.iter().any(|k| p.contains_key(k)) => "[...]".to_string(),
            Value::Object(p) => p
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            _ => String::new(),
        }
    };
    let text: String = match content {
        Some(Value::Array(items)) => items.iter().map(shown).collect(),
        Some(part) => shown(part),
        None => String::new(),
    };
    let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    text.is_empty()
        || ["/", "?", "<session_context>", "<hook_context>"]
            .iter()
            .any(|p| text.starts_with(p))
}

/// True when a model message's `content` is a string that may join texts Gemini CLI sent
/// apart. As a response arrives, Gemini CLI keeps its parts as they came (text parts
/// next to each other made one) and sends them so, but records the text of all of them
/// as one string: a call or a thought between two texts (a `toolCalls` or `thoughts`
/// list that is not empty) split what the record joins, so a rule the record shows whole
/// may be in no one string the model was sent (0.61.0, run against a mock: a response of
/// a text, a call and a text was sent as three parts and recorded as one text). Where
/// they split is not recorded, so none of such a text counts. A list set since
/// (`$set`) holds the parts as they are sent: content that is a list is read as it is.
fn text_joined(m: &Map<'_>) -> bool {
    let listed = |key: &str| {
        m.get(key)
            .and_then(Value::as_array)
            .is_some_and(|l| !l.is_empty())
    };
    matches!(m.get("content"), Some(Value::String(_)))
        && (listed("toolCalls") || listed("thoughts"))
}

/// True when Gemini CLI sends a model message's calls from its `toolCalls`: it does
/// unless its content holds a call or a thought of its own.
fn calls_sent_apart(m: &Map<'_>) -> bool {
    let holds = |part: &Value| {
        part.get("functionCall").is_some_and(is_set) || part.get("thought").is_some_and(is_set)
    };
    match m.get("content") {
        Some(Value::Array(items)) => !items.iter().any(holds),
        Some(part @ Value::Object(_)) => !holds(part),
        _ => true,
    }
}

/// A message's `toolCalls` list: each call's result, and with `args` (the calls are sent
/// as the model's) its arguments; a call with no result yet is pending and its arguments
/// are not context. True when it records `call`.
fn tool_calls(
    out: &mut Vec<Piece>,
    at: u64,
    m: &Map<'_>,
    args: bool,
    call: Option<&str>,
) -> Result<bool, Failure> {
    let calls = match m.get("toolCalls") {
        None | Some(Value::Null) => return Ok(false),
        Some(Value::Array(calls)) => calls,
        Some(_) => {
            return Err(Failure::at(
                at,
                Problem::Bare {
                    key: "toolCalls",
                    must: "an array",
                },
            ));
        }
    };
    let mut seen = false;
    for c in calls {
        let Value::Object(c) = c else {
            return Err(Failure::at(at, Problem::ElementNotObject("toolCalls")));
        };
        let id = c.get("id").and_then(Value::as_str);
        seen |= call.is_some() && id == call;
        // A result JavaScript counts as false (`""`, `0`, `false`, `null`) is none: Gemini
        // CLI sends no response for it, and the call counts as one without a result.
        let result = c.get("result").filter(|r| is_set(r));
        if args
            && result.is_some()
            && id != call
            && let Some(args) = c.get("args")
        {
            push_strings(out, Role::Call, at, args);
        }
        parts(out, Role::Result, at, result)?;
    }
    Ok(seen)
}

/// Keys a part may carry besides the one that says what it is.
const PART_KEYS: [&str; 12] = [
    "text",
    "thought",
    "thoughtSignature",
    "functionCall",
    "functionResponse",
    "inlineData",
    "fileData",
    "executableCode",
    "codeExecutionResult",
    "videoMetadata",
    "partMetadata",
    "mediaResolution",
];

/// True for a value JavaScript counts as true: Gemini CLI strips a part whose `thought`
/// is, whatever its type, from what it sends.
fn is_set(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => false,
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.parse::<f64>() != Ok(0.0),
        Value::Bool(true) | Value::Array(_) | Value::Object(_) => true,
    }
}

/// A `PartListUnion`: a string, a part, or an array of strings and parts (not of
/// arrays: Gemini CLI writes none, and one is read as no format the gate knows). A part
/// marked `thought` is not sent.
fn parts(out: &mut Vec<Piece>, role: Role, at: u64, value: Option<&Value>) -> Result<(), Failure> {
    let not_content = || {
        Failure::at(
            at,
            Problem::OwnKey {
                owner: "a message",
                key: "content",
                must: "a string, a part or an array of them",
            },
        )
    };
    match value {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(s)) => {
            out.push(Piece {
                role,
                text: s.shared(),
                at,
            });
            Ok(())
        }
        Some(Value::Array(items)) => items.iter().try_for_each(|p| match p {
            Value::Array(_) => Err(not_content()),
            _ => parts(out, role, at, Some(p)),
        }),
        Some(Value::Object(p)) => {
            if p.keys().any(|k| !PART_KEYS.contains(&k)) {
                return Err(Failure::unknown(at, "a message part", Harness::GeminiCli));
            }
            if p.get("thought").is_some_and(is_set) {
                return Ok(());
            }
            match p.get("text") {
                Some(Value::String(s)) => out.push(Piece {
                    role,
                    text: s.shared(),
                    at,
                }),
                Some(_) => {
                    return Err(Failure::at(
                        at,
                        Problem::OwnKey {
                            owner: "a part",
                            key: "text",
                            must: "a string",
                        },
                    ));
                }
                None => {}
            }
            if let Some(args) = p.get("functionCall").and_then(|f| f.get("args")) {
                push_strings(out, Role::Call, at, args);
            }
            if let Some(response) = p.get("functionResponse").and_then(|f| f.get("response")) {
                push_strings(out, Role::Result, at, response);
            }
            Ok(())
        }
        Some(_) => Err(not_content()),
    }
}

/// Every compression of a whole file: each list set that holds a compression's summary
/// (a resume sets the list again, with the same summary: that is not a new compression).
pub(super) fn compactions(lines: &[Line<'_>]) -> Result<Vec<u64>, Failure> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for line in lines {
        if let Record::Set(Some(items)) = record(line)?
            && let Some(id) = summary_id(&items)
            && seen.insert(id)
        {
            out.push(line.at);
        }
    }
    Ok(out)
}

/// The strings of an instruction file (`--context-file`) that Gemini CLI sends as they
/// are. Its memory loader (0.61.0) reads `@word` (an `@` at the start or after a space,
/// tab or line break, then anything up to the next, starting with `.`, `/` or a letter)
/// as an import, and sends in its place the file it names, or an HTML comment that says
/// the import failed: `sign-off from @alice.` reaches the model as `sign-off from <!--
/// Import failed: alice. - ENOENT... -->`. So the file counts as the text between its
/// imports, each piece apart. Gemini CLI leaves an `@word` inside backticks as it is;
/// it is cut here too (less in view, never more). An imported file's text is not
/// counted: a user who sees it sent names it with its own `--context-file`.
pub fn sent_of_file(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    // Gemini CLI's whitespace here: no other (it scans by these four).
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let mut pieces = Vec::new();
    let mut last = 0;
    let mut i = 0;
    while let Some(found) = memchr::memchr(b'@', bytes.get(i..).unwrap_or_default()) {
        let at = i + found;
        if at > 0 && !bytes.get(at - 1).copied().is_some_and(space) {
            i = at + 1;
            continue;
        }
        let end = bytes
            .get(at + 1..)
            .and_then(|rest| rest.iter().position(|&b| space(b)))
            .map_or(bytes.len(), |n| at + 1 + n);
        let import = bytes
            .get(at + 1)
            .is_some_and(|&b| b == b'.' || b == b'/' || b.is_ascii_alphabetic());
        if import {
            // `@` and the bytes that end the word are ASCII: both are char boundaries.
            pieces.push(text.get(last..at).unwrap_or_default());
            last = end;
        }
        i = end + 1;
    }
    pieces.push(text.get(last..).unwrap_or_default());
    pieces
}

/// When Gemini CLI read its instruction files for the process that sends `list`, at the
/// latest (see [`Live::instructions_read`](super::Live)): the earliest `timestamp` of a
/// user message that opens with `<session_context>`, which Gemini CLI builds as it starts,
/// right after reading them. A resume sends a fresh one but records the first one's
/// time, which is earlier still. A message without a time it reads makes it `None`.
fn instructions_read(list: &[(u64, Map<'_>)]) -> Option<i64> {
    list.iter()
        .filter(|(_, m)| m.get("type").and_then(Value::as_str) == Some("user"))
        .filter(|(_, m)| {
            let first = match m.get("content") {
                Some(Value::Array(parts)) => parts.first(),
                part => part,
            };
            first
                .and_then(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str()))
                .is_some_and(|t| t.trim_start().starts_with("<session_context>"))
        })
        .map(|(_, m)| {
            m.get("timestamp")
                .and_then(Value::as_str)
                .and_then(super::utc_millis)
        })
        .min()
        .flatten()
}
