//! Codex's rollout: `{"timestamp", "type", "payload"}` a line.
//!
//! The live context is the last `compacted` entry's `replacement_history` (the messages
//! the compaction kept and its summary, as a user message), then the model items recorded
//! after it (`response_item`). Before any compaction it is every model item. Turn
//! contexts and events are the harness's own bookkeeping and are not sent. The base
//! instructions the first line records (`session_meta`) are not counted: a resumed
//! session may be sent others (see [`session_head`]).
//!
//! A call made from code mode's JavaScript is not recorded: it is judged as the call the
//! model waits on while the cell that makes it runs ([`code_mode`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use super::value::{Map, Value};
use super::{
    Failure, Line, Live, Piece, Problem, Role, Window, push_strings, shared_at, string_at,
};
use crate::harness::Harness;

mod code_mode;

pub use code_mode::is_nested;
use code_mode::running_cell;

const NAME: &str = "Codex rollout";

/// True for a rollout's first line (for recognising the format).
pub(super) fn is_head(obj: &Map<'_>) -> bool {
    matches!(obj.get("type"), Some(Value::String(t)) if t == "session_meta")
        && matches!(obj.get("payload"), Some(Value::Object(_)))
}

/// One rollout line.
enum Item<'a> {
    /// A model item.
    Model(Map<'a>),
    /// A compaction: its summary message and the items it kept.
    Compacted {
        message: String,
        history: Vec<Value<'a>>,
    },
    /// A compaction the model's API made and Codex recorded as a model item (`compaction`,
    /// `context_compaction`): an encrypted summary the gate cannot read, standing for
    /// what came before it.
    Opaque,
    /// A thread rollback: the newest turns are taken out of the model's context.
    Rollback,
    /// Anything the model is not sent.
    Other,
}

fn item<'a>(line: &Line<'a>) -> Result<Item<'a>, Failure> {
    let mut obj = line.object(NAME)?;
    let what = "a rollout entry";
    let kind = string_at(&obj, "type", line.at, what)?.to_string();
    let mut payload = match obj.remove("payload") {
        Some(Value::Object(p)) => p,
        _ => {
            return Err(Failure::at(
                line.at,
                Problem::Key {
                    what: "a rollout entry",
                    key: "payload",
                    must: "an object",
                },
            ));
        }
    };
    match kind.as_str() {
        "response_item" if is_opaque_compaction(&payload) => Ok(Item::Opaque),
        "response_item" => Ok(Item::Model(payload)),
        "compacted" => {
            let message = string_at(&payload, "message", line.at, "a compacted entry")?.to_string();
            match payload.remove("replacement_history") {
                Some(Value::Array(history)) => Ok(Item::Compacted { message, history }),
                _ => Err(Failure::at(line.at, Problem::CodexCompaction)),
            }
        }
        "event_msg"
            if payload.get("type").and_then(Value::as_str) == Some("thread_rolled_back") =>
        {
            Ok(Item::Rollback)
        }
        // A message between agents (multi-agent v2): Codex records it here, not as a model
        // item, and the model is sent it as an agent message or, in other builds, as the
        // JSON of the whole entry inside an assistant message. The gate does not redo that
        // form, so none of its text counts (a block the restore loop lifts, never a pass).
        "inter_agent_communication" => Ok(Item::Other),
        // Bookkeeping the model is not sent: turn settings, events, token counts, the
        // session's dynamic tools (sent as tools, not as history), a realtime session's
        // presentation, a security score.
        "session_meta"
        | "turn_context"
        | "event_msg"
        | "world_state"
        | "token_usage_record"
        | "inter_agent_communication_metadata"
        | "dynamic_tools_updated"
        | "realtime_item"
        | "security_risk_score" => Ok(Item::Other),
        _ => Err(Failure::unknown(line.at, "a rollout entry", Harness::Codex)),
    }
}

pub(super) fn read<'a>(
    lines: &[Line<'a>],
    window: Window<'_>,
    call: Option<&str>,
) -> Result<Live, Failure> {
    let mut after: Vec<(u64, Map<'a>)> = Vec::new();
    let mut compacted = None;
    for line in lines.iter().rev() {
        match item(line)? {
            Item::Model(m) => after.push((line.at, m)),
            Item::Compacted { message, history } => {
                compacted = Some((line.at, message, history));
                break;
            }
            // Whether the API drops what came before such an item or only adds to it, the
            // gate cannot tell: taking it as the start of the context keeps fewer records in
            // view, never more.
            Item::Opaque => {
                compacted = Some((line.at, String::new(), Vec::new()));
                break;
            }
            // Codex drops the newest user turns from the history it sends; which items
            // a turn holds is Codex's own reckoning, which the gate does not redo.
            Item::Rollback => return Err(Failure::at(line.at, Problem::CodexRollback)),
            Item::Other => {}
        }
    }
    if compacted.is_none() && !window.is_whole() {
        return Err(Failure::NeedMore);
    }
    after.reverse();
    // Every model item in order, with the summary marked.
    let mut items: Vec<(u64, Map<'a>, bool)> = Vec::new();
    let mut compaction = None;
    if let Some((at, message, history)) = compacted {
        compaction = Some(at);
        for v in history {
            let Value::Object(m) = v else {
                return Err(Failure::at(at, Problem::HistoryItemNotObject));
            };
            let is_summary = message_text(&m).as_deref() == Some(message.as_str());
            items.push((at, m, is_summary));
        }
    }
    items.extend(after.into_iter().map(|(at, m)| (at, m, false)));

    // A call made from code mode's JavaScript is not in the rollout: the call recorded,
    // and judged in its stead, is the one the model waits on while the cell runs (the
    // `exec` call that runs it, or a `wait` call for it).
    let outer = match call {
        Some(id) if is_nested(id) && !items.iter().any(|(_, m, _)| call_id(m) == Some(id)) => {
            // A cell that yielded before the last compaction may run on after it: its
            // outputs are in the lines before; so may a cell that stored options asking
            // for a terminal.
            let earlier = match compaction {
                Some(_) if !window.is_whole() => return Err(Failure::NeedMore),
                Some(at)
                    if code_mode::may_have_yielded(lines)
                        || code_mode::may_have_stored_tty(lines) =>
                {
                    model_items_before(lines, at)?
                }
                Some(_) | None => Vec::new(),
            };
            running_cell(&earlier, &items)?
        }
        _ => None,
    };
    let call = outer.as_ref().map_or(call, |cell| Some(cell.id.as_str()));
    let holds_call = |m: &Map<'_>| {
        is_call(m) && call.is_some() && m.get("call_id").and_then(Value::as_str) == call
    };
    let call_seen = items.iter().any(|(_, m, _)| holds_call(m));
    let terminal = items
        .iter()
        .any(|(_, m, _)| holds_call(m) && asks_terminal(m))
        .then(|| call.unwrap_or_default().to_string())
        .or_else(|| {
            outer
                .as_ref()
                .filter(|cell| cell.may_ask_terminal)
                .map(|cell| cell.exec.clone())
        });
    // What was recorded after the response that holds the call being judged was not
    // sent before the model made it: the context ends with that response. It is the
    // one that holds the call named; without one, the newest response when it holds a
    // call with no output yet (otherwise the call judged comes after the file).
    let answered = answered_calls(&items);
    let made = responding(&items, &answered, call);
    // A later item recording the call again is not where it was made: the first is.
    let judged = match items.iter().position(|(_, m, _)| holds_call(m)) {
        Some(i) => Some(i),
        None => items
            .iter()
            .rposition(|(_, m, _)| is_output(m))
            .filter(|i| made.contains(i)),
    };
    let mut after = Vec::new();
    if let Some(mut end) = judged {
        while made.contains(&(end + 1)) {
            end += 1;
        }
        after = items.split_off(end + 1);
    }
    // The response being made is now the last run of the model's output, if any; a call
    // before it that no output answers was cut off (its process killed, say) and is sent
    // as answered: Codex puts an `aborted` output right after it in every request.
    let being_made = match judged {
        Some(_) => run_start(&items, items.len()),
        None => items.len(),
    };
    let mut answered = answered_calls(&items);
    answered.extend(aborted_calls(&items, being_made, call, &answered));
    let responding = responding(&items, &answered, call);
    let calls = Calls::sent(&items, &responding);
    session_head(window.head)?;
    let mut out = Vec::new();
    for (i, (at, m, is_summary)) in items.iter().enumerate() {
        if responding.contains(&i) {
            continue;
        }
        model_item(&mut out, *at, m, *is_summary, &answered, &calls, call)?;
    }
    // What was recorded after it is still read, so that an item the gate cannot read is
    // an error wherever it stands.
    for (at, m, is_summary) in &after {
        model_item(
            &mut Vec::new(),
            *at,
            m,
            *is_summary,
            &answered,
            &calls,
            call,
        )?;
    }
    Ok(Live {
        harness: Harness::Codex,
        pieces: out,
        compaction,
        call_seen,
        terminal,
        responding: None,
        instructions_read: instructions_read(window.head),
    })
}

/// When Codex read its configuration (its `model_instructions_file` among it) for the
/// session whose first line is `head`, at the latest: the earlier of the `session_meta`
/// line's own `timestamp` and its payload's, which Codex writes as the session starts,
/// after reading it once for the whole process (0.171.0, run against a mock: a
/// `model_instructions_file` the agent rewrote mid-turn was in no later request). A
/// resume reads it again, later than the first process's times the file keeps. A
/// subagent's rollout begins when the subagent does, maybe long after its process read
/// the file: the times its threads' ids carry (each a UUID version 7, which begins with
/// the time it was made: its own, its session's, its parent's) count too, and the
/// session's is the first thread's. `None` without a time it reads.
fn instructions_read(head: &[u8]) -> Option<i64> {
    let Ok(Value::Object(obj)) = super::value::parse(super::trim_line(head)) else {
        return None;
    };
    let time = |o: &Map<'_>| {
        o.get("timestamp")
            .and_then(Value::as_str)
            .and_then(super::utc_millis)
    };
    let Some(Value::Object(payload)) = obj.get("payload") else {
        return time(&obj);
    };
    let ids = ["id", "session_id", "parent_thread_id"]
        .into_iter()
        .filter_map(|key| payload.get(key).and_then(Value::as_str))
        .filter_map(uuid_v7_millis);
    [time(&obj), time(payload)]
        .into_iter()
        .flatten()
        .chain(ids)
        .min()
}

/// The time a UUID of version 7 was made (its first 48 bits: milliseconds since 1970),
/// as Codex makes its thread ids; `None` for any other string.
fn uuid_v7_millis(id: &str) -> Option<i64> {
    let hex: Vec<u8> = id.bytes().filter(|&b| b != b'-').collect();
    let groups: Vec<usize> = id.split('-').map(str::len).collect();
    let version = hex.get(12).copied();
    let variant = hex.get(16).copied();
    if groups != [8, 4, 4, 4, 12]
        || !hex.iter().all(u8::is_ascii_hexdigit)
        || version != Some(b'7')
        || !matches!(variant, Some(b'8' | b'9' | b'a' | b'b' | b'A' | b'B'))
    {
        return None;
    }
    let millis = std::str::from_utf8(hex.get(..12)?).ok()?;
    i64::from_str_radix(millis, 16).ok()
}

/// The model items the rollout records before line `at`, in order (the histories of
/// earlier compactions aside).
fn model_items_before<'a>(
    lines: &[Line<'a>],
    at: u64,
) -> Result<Vec<(u64, Map<'a>, bool)>, Failure> {
    let mut out = Vec::new();
    for line in lines.iter().take_while(|l| l.at < at) {
        if let Item::Model(m) = item(line)? {
            out.push((line.at, m, false));
        }
    }
    Ok(out)
}

/// A model item's `call_id`.
pub(super) fn call_id<'m>(m: &'m Map<'_>) -> Option<&'m str> {
    m.get("call_id").and_then(Value::as_str)
}

/// True for a call that starts a command with a terminal: `exec_command` whose arguments
/// ask for a `tty`. The model can type into such a command with `write_stdin`, for which
/// Codex runs no hook. A `tty` of any value but `false` or `null` counts (Codex runs no
/// call whose `tty` is not a boolean); arguments that are not a JSON object do not
/// (Codex runs no such call).
fn asks_terminal(m: &Map<'_>) -> bool {
    if m.get("type").and_then(Value::as_str) != Some("function_call")
        || m.get("name").and_then(Value::as_str) != Some("exec_command")
    {
        return false;
    }
    let Some(args) = m.get("arguments").and_then(Value::as_str) else {
        return false;
    };
    match super::value::parse_lenient(args) {
        Some(Value::Object(o)) => {
            !matches!(o.get("tty"), None | Some(Value::Null | Value::Bool(false)))
        }
        _ => false,
    }
}

/// The calls (by `call_id`) an output of `items` answers.
pub(super) fn answered_calls(items: &[(u64, Map<'_>, bool)]) -> BTreeSet<String> {
    items
        .iter()
        .filter(|(_, m, _)| {
            matches!(
                m.get("type").and_then(Value::as_str),
                Some("function_call_output" | "custom_tool_call_output")
            )
        })
        .filter_map(|(_, m, _)| m.get("call_id").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// Where the run of the model's output that ends before `end` starts (`end` when the
/// item before it is not the model's output).
fn run_start(items: &[(u64, Map<'_>, bool)], end: usize) -> usize {
    let mut start = end;
    while let Some(prev) = start.checked_sub(1)
        && items.get(prev).is_some_and(|(_, m, _)| is_output(m))
    {
        start = prev;
    }
    start
}

/// The calls before `before` (the start of the response being made) that no output
/// answers, but the call judged: the model is sent each of them with an output that
/// reads `aborted`. Codex 0.171.0 fills in a missing output so in every request it
/// builds (`ensure_call_outputs_present` in `core/src/context_manager/normalize.rs`),
/// which is what a call whose process was killed before it ended gets after a resume:
/// run against a mock, a `sleep` killed with its `codex exec` had no output in the
/// rollout, and the resumed turn's request held the call, `aborted` after it, and the
/// output of the call made beside it (fixture `codex/X-3`). An interrupt Codex handles
/// records an output of its own (`aborted by user`). A `local_shell_call` without a
/// `call_id` is left out: Codex fills in nothing for it (see [`unanswered`]).
fn aborted_calls(
    items: &[(u64, Map<'_>, bool)],
    before: usize,
    call: Option<&str>,
    answered: &BTreeSet<String>,
) -> Vec<String> {
    items
        .iter()
        .take(before)
        .filter(|(_, m, _)| is_call(m))
        .filter_map(|(_, m, _)| call_id(m))
        .filter(|id| call != Some(*id) && !answered.contains(*id))
        .map(str::to_string)
        .collect()
}

/// The calls the model was sent, by the kind of output that answers them. Codex sends no
/// output whose call is not in its history: it drops such an orphan from each request.
#[derive(Default)]
struct Calls {
    /// `function_call` and `local_shell_call` ids, answered by `function_call_output`.
    function: BTreeSet<String>,
    /// `custom_tool_call` ids, answered by `custom_tool_call_output`.
    custom: BTreeSet<String>,
    /// The calls whose output Codex cuts to the session's budget before it stores it (see
    /// [`is_stored_cut`]): stored whole, such an output was sent whole.
    stored_cut: BTreeSet<String>,
}

impl Calls {
    /// The calls of `items` but those of the response being made (`responding`): the
    /// history the model asked from held none of them, so an output answering one (the
    /// pending call's own id, a call made beside it) was an orphan then.
    fn sent(items: &[(u64, Map<'_>, bool)], responding: &BTreeSet<usize>) -> Calls {
        let mut calls = Calls::default();
        let sent = items
            .iter()
            .enumerate()
            .filter(|(i, _)| !responding.contains(i));
        for (_, (_, m, _)) in sent {
            let set = match m.get("type").and_then(Value::as_str) {
                Some("custom_tool_call") => &mut calls.custom,
                Some("function_call" | "local_shell_call") => &mut calls.function,
                _ => continue,
            };
            let id = m.get("call_id").and_then(Value::as_str).map(str::to_string);
            set.extend(id.clone());
            if is_stored_cut(m) {
                calls.stored_cut.extend(id);
            }
        }
        calls
    }

    /// True when Codex cuts the output of call `id` to the session's budget before it
    /// stores it.
    fn stored_cut(&self, id: Option<&str>) -> bool {
        id.is_some_and(|id| self.stored_cut.contains(id))
    }

    /// True when the output item of this kind, answering `id`, is sent.
    fn answers(&self, kind: &str, id: Option<&str>) -> bool {
        let set = if kind == "custom_tool_call_output" {
            &self.custom
        } else {
            &self.function
        };
        id.is_some_and(|id| set.contains(id))
    }
}

/// The items of the model's response that holds a pending call: the run of model
/// output (its messages, reasoning and calls) around the call, up to the nearest input
/// (a user message, a tool output). They are what the model is sending, not what it was
/// sent, so none of them is context yet.
fn responding(
    items: &[(u64, Map<'_>, bool)],
    answered: &BTreeSet<String>,
    call: Option<&str>,
) -> BTreeSet<usize> {
    let pending = |m: &Map<'_>| {
        is_call(m) && unanswered(m.get("call_id").and_then(Value::as_str), answered, call)
    };
    let mut out = BTreeSet::new();
    for (i, (_, m, _)) in items.iter().enumerate() {
        if !pending(m) || out.contains(&i) {
            continue;
        }
        let mut start = i;
        while let Some(prev) = start.checked_sub(1)
            && items.get(prev).is_some_and(|(_, p, _)| is_output(p))
        {
            start = prev;
        }
        let mut end = i + 1;
        while items.get(end).is_some_and(|(_, n, _)| is_output(n)) {
            end += 1;
        }
        out.extend(start..end);
    }
    out
}

/// True for a model item that is one of the model's calls.
fn is_call(m: &Map<'_>) -> bool {
    matches!(
        m.get("type").and_then(Value::as_str),
        Some("function_call" | "custom_tool_call" | "local_shell_call")
    )
}

/// True for a model item that is, or may be, the model's output: a message of its own,
/// reasoning, a call. A tool search's output (the model's own with `"execution":
/// "server"`, Codex's otherwise) and a message between agents count as output too:
/// taking an input for output only keeps more of the response out of the context. So
/// does a snapshot Codex keeps for undo (`ghost_snapshot`, never sent as text): should
/// Codex write one while a response streams, it must not split the response, or a call
/// made before it would count as an earlier response's, its arguments as context.
pub(super) fn is_output(m: &Map<'_>) -> bool {
    match m.get("type").and_then(Value::as_str) {
        Some("message") => m.get("role").and_then(Value::as_str) == Some("assistant"),
        Some(
            "ghost_snapshot"
            | "reasoning"
            | "function_call"
            | "custom_tool_call"
            | "local_shell_call"
            | "web_search_call"
            | "image_generation_call"
            | "tool_search_call"
            | "tool_search_output"
            | "agent_message",
        ) => true,
        _ => false,
    }
}

/// True for a call (by its `call_id`) that is the one being judged or has no output
/// yet: its arguments are not context. A call without a `call_id` (a `local_shell_call`
/// may have none) has no output that can answer it: Codex does not run it, and nothing
/// shows it is not the call being made.
fn unanswered(id: Option<&str>, answered: &BTreeSet<String>, call: Option<&str>) -> bool {
    id.is_none_or(|id| call == Some(id) || !answered.contains(id))
}

/// True for a model item that is a compaction made by the model's API: its summary is
/// encrypted, and the model is sent it in place of what it summarised. A
/// `compaction_trigger` (the last item of the request that asks the API for such a
/// compaction; 0.171.0 sends it only there and was not seen to record it) counts as one
/// too: what the API kept of the context before it the gate cannot tell.
fn is_opaque_compaction(payload: &Map<'_>) -> bool {
    matches!(
        payload.get("type").and_then(Value::as_str),
        Some("compaction" | "compaction_summary" | "context_compaction" | "compaction_trigger")
    )
}

/// Checks the first line: a `session_meta` entry whose `base_instructions`, if any, is a
/// string or an object (`{"text": ...}`).
///
/// None of their text counts. They are what the process that started the session sent,
/// and a process that resumes it sends them only when its own config sets none: Codex
/// 0.171.0, run against a mock, sent the text of the `model_instructions_file` that the
/// resumed process was given (or that file as edited since), while the rollout's only
/// `session_meta` still held the first process's, and it records no mark of a resume. A
/// rule only they state is blocked once and restored by the block's reason; one a user
/// keeps in such a file can be named with `--context-file`.
fn session_head(head: &[u8]) -> Result<(), Failure> {
    let line = Line {
        at: 0,
        bytes: super::trim_line(head),
    };
    let obj = line.object(NAME)?;
    if !is_head(&obj) {
        return Err(Failure::at(0, Problem::NoSessionMeta));
    }
    match obj.get("payload").and_then(|p| p.get("base_instructions")) {
        None | Some(Value::Null | Value::String(_) | Value::Object(_)) => Ok(()),
        Some(_) => Err(Failure::at(
            0,
            Problem::Key {
                what: "a session_meta entry",
                key: "base_instructions",
                must: "a string or an object with `text`",
            },
        )),
    }
}

/// A message item's text parts joined, for recognising the summary.
fn message_text(m: &Map<'_>) -> Option<String> {
    if m.get("type").and_then(Value::as_str) != Some("message") {
        return None;
    }
    let parts = m.get("content")?.as_array()?;
    Some(
        parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
    )
}

fn model_item(
    out: &mut Vec<Piece>,
    at: u64,
    m: &Map<'_>,
    is_summary: bool,
    answered: &BTreeSet<String>,
    calls: &Calls,
    call: Option<&str>,
) -> Result<(), Failure> {
    let unknown = || Failure::unknown(at, "a model item", Harness::Codex);
    let kind = m.get("type").and_then(Value::as_str).ok_or_else(unknown)?;
    let pending = |id: Option<&str>| unanswered(id, answered, call);
    match kind {
        "message" => {
            let role = match string_at(m, "role", at, "a message item")? {
                // Codex leaves system messages out of the history it sends.
                "system" => return Ok(()),
                _ if is_summary => Role::Summary,
                "user" => Role::User,
                "assistant" => Role::Assistant,
                "developer" => Role::Developer,
                _ => return Err(unknown()),
            };
            let Some(Value::Array(parts)) = m.get("content") else {
                return Err(Failure::at(
                    at,
                    Problem::Key {
                        what: "a message item",
                        key: "content",
                        must: "an array",
                    },
                ));
            };
            for part in parts {
                content_part(out, role, at, part)?;
            }
        }
        "function_call" => {
            let id = string_at(m, "call_id", at, "a function_call item")?;
            let args = string_at(m, "arguments", at, "a function_call item")?;
            if !pending(Some(id)) {
                call_arguments(out, at, args);
            }
        }
        "custom_tool_call" => {
            let id = string_at(m, "call_id", at, "a custom_tool_call item")?;
            let input = shared_at(m, "input", at, "a custom_tool_call item")?;
            if !pending(Some(id)) {
                out.push(Piece {
                    role: Role::Call,
                    text: input,
                    at,
                });
            }
        }
        "local_shell_call" => {
            let id = m.get("call_id").and_then(Value::as_str);
            if !pending(id)
                && let Some(action) = m.get("action")
            {
                push_strings(out, Role::Call, at, action);
            }
        }
        "function_call_output" | "custom_tool_call_output" => {
            let id = m.get("call_id").and_then(Value::as_str);
            if calls.answers(kind, id) {
                output(out, at, m.get("output"), calls.stored_cut(id))?;
            }
        }
        // Sent, but not as text the gate can read: reasoning (encrypted), snapshots the
        // harness keeps for undo, encrypted compaction items (in what a compaction kept; one
        // recorded on its own line starts the context, see `Item::Opaque`), web searches,
        // images; tools added to the model's (`additional_tools`, a tool search's output:
        // sent as tool definitions, not as text of the conversation), a tool search's
        // query; a change of the reasoning settings (`configuration_update`); a message
        // between agents (multi-agent v2; seen sent as it is, a plain header and the
        // message in an encrypted part; from the source, as a user message of its texts
        // for a provider that cannot take it, or as a note that it could not be delivered
        // when a part is encrypted: none of it counts, at worst a block the restore loop
        // lifts). Fixtures `codex/TS-1`, `LK-1`, `V2-1` hold them as 0.171.0 wrote them.
        "reasoning"
        | "ghost_snapshot"
        | "compaction"
        | "compaction_summary"
        | "context_compaction"
        | "compaction_trigger"
        | "web_search_call"
        | "image_generation_call"
        | "additional_tools"
        | "tool_search_call"
        | "tool_search_output"
        | "configuration_update"
        | "agent_message" => {}
        _ => return Err(unknown()),
    }
    Ok(())
}

/// A function call's arguments: a JSON text whose strings count each on its own; text
/// that is not JSON counts whole.
fn call_arguments(out: &mut Vec<Piece>, at: u64, args: &str) {
    match super::value::parse_lenient(args) {
        Some(v @ (Value::Object(_) | Value::Array(_))) => push_strings(out, Role::Call, at, &v),
        _ => out.push(Piece {
            role: Role::Call,
            text: Arc::from(args),
            at,
        }),
    }
}

/// Pushes a tool output's texts, unless one of them holds Codex's mark of a cut
/// (`…N chars truncated…` or `…N tokens truncated…`): then none of the output counts.
/// Such an output was longer than the budget it was stored under, and Codex may cut it
/// again as it takes it into the history it sends, to a budget the rollout does not
/// record (the model's `truncation_policy`, or the config's `tool_output_token_limit`):
/// 0.171.0 sent `sign-off…8 tokens truncated…` for an MCP tool's output stored as
/// `sign-off.…87795 chars truncated…`, so no part of the text the rollout shows is sure
/// to be sent.
///
/// An output stored whole is sent whole when Codex cuts it to that budget before storing
/// it (`stored_cut`: a command's, an MCP tool's; see [`is_stored_cut`]), also after the
/// session is resumed: the resumed process sends each output recorded before it as the
/// rollout holds it, whatever its own model or budget (0.171.0, `codex exec resume` and
/// `codex resume` run against a mock; fixture `codex/Q-3`). Any other output Codex stores
/// as it came and cuts only as it takes it into its history (to 1.2 times the budget,
/// keeping its start and its end): a code cell's (code mode's `exec` and `wait`, whose
/// outputs it caps at about 10,000 tokens whatever the budget), a subagent's answer to
/// `wait_agent`. 0.171.0 stored a code cell's 27 KB output whole and sent the model
/// 12 KB of it, without the rule in its middle (fixture `codex/CM-2`). Such an output
/// counts whole up to [`UNCUT_MAX`] bytes; of a longer one only the first
/// [`UNCUT_HEAD`] bytes count, which Codex keeps under any budget of twice that.
fn push_output(out: &mut Vec<Piece>, pieces: Vec<Piece>, stored_cut: bool) {
    if pieces.iter().any(|p| next_cut(&p.text).is_some()) {
        return;
    }
    let total: usize = pieces.iter().map(|p| p.text.len()).sum();
    if stored_cut || total <= UNCUT_MAX {
        out.extend(pieces);
        return;
    }
    let mut room = UNCUT_HEAD;
    for mut piece in pieces {
        if piece.text.len() > room {
            piece.text = Arc::from(head_of(&piece.text, room));
            room = 0;
        } else {
            room -= piece.text.len();
        }
        if !piece.text.is_empty() {
            out.push(piece);
        }
        if room == 0 {
            break;
        }
    }
}

/// The longest output (in bytes of text) of a call whose output Codex does not cut before
/// storing it that counts whole: the budget a `tool_output_token_limit` of 1,000 tokens
/// gives (1.2 times 1,000 tokens of 4 bytes), under the smallest Codex 0.171.0 applies by
/// default (12,000 bytes for a model its catalog does not describe, seen; a catalog
/// model's, `gpt-5.6-sol`, was seen to send 41 KB whole).
const UNCUT_MAX: usize = 4_800;

/// How much of the start of a longer such output counts: half of [`UNCUT_MAX`], which
/// Codex keeps (it cuts an output to its budget by keeping the start and the end, and
/// leaves out the later parts of one in several).
pub(crate) const UNCUT_HEAD: usize = UNCUT_MAX / 2;

/// The first `room` bytes of `text`, up to (not including) the last whitespace within
/// them: a text found at the end of what is kept must end there in the output too, not
/// go on into a longer word or number that the cut would hide (`500` of `5000`).
fn head_of(text: &str, room: usize) -> &str {
    let mut end = room.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = text.get(..end).unwrap_or_default();
    match head.char_indices().rev().find(|(_, c)| c.is_whitespace()) {
        Some((at, _)) => head.get(..at).unwrap_or_default(),
        None => "",
    }
}

/// True for a call whose output Codex 0.171.0 cuts to the session's budget before it
/// stores it, so that an output stored whole was sent whole: a command's (`exec_command`,
/// and `write_stdin`, whose output Codex writes as it writes a command's) and an MCP
/// tool's (`namespace` `mcp__<server>`). Seen run against a mock: such outputs stored
/// whole up to the budget, with Codex's mark past it, and sent as stored. Any other call,
/// the older shell tools (`shell`, `shell_command`, `local_shell_call`) among them, is not
/// known to be: a long output of one counts as [`push_output`] says.
fn is_stored_cut(m: &Map<'_>) -> bool {
    if m.get("type").and_then(Value::as_str) != Some("function_call") {
        return false;
    }
    match m.get("namespace").and_then(Value::as_str) {
        Some(ns) => ns.starts_with("mcp__"),
        None => matches!(
            m.get("name").and_then(Value::as_str),
            Some("exec_command" | "write_stdin")
        ),
    }
}

/// The first mark of Codex's cut in `text`: where it starts, how long it is, and what
/// follows it.
fn next_cut(text: &str) -> Option<(usize, usize, &str)> {
    const ELLIPSIS: &str = "\u{2026}";
    let mut from = 0;
    while let Some(i) = text.get(from..).and_then(|t| t.find(ELLIPSIS)) {
        let start = from + i;
        let body = text.get(start + ELLIPSIS.len()..).unwrap_or_default();
        let digits = body.bytes().take_while(u8::is_ascii_digit).count();
        let words = body.get(digits..).unwrap_or_default();
        let tail = [" chars truncated", " tokens truncated"]
            .iter()
            .find_map(|w| words.strip_prefix(w))
            .and_then(|t| t.strip_prefix(ELLIPSIS));
        if let (true, Some(after)) = (digits > 0, tail) {
            return Some((start, text.len() - start - after.len(), after));
        }
        from = start + ELLIPSIS.len();
    }
    None
}

/// A tool output: a string, content parts, or `{"content": ...}`; `stored_cut` as
/// [`push_output`] takes it.
fn output(
    out: &mut Vec<Piece>,
    at: u64,
    value: Option<&Value>,
    stored_cut: bool,
) -> Result<(), Failure> {
    let mut pieces = Vec::new();
    output_parts(&mut pieces, at, value)?;
    push_output(out, pieces, stored_cut);
    Ok(())
}

/// The texts of a tool output, as [`output`] reads it.
fn output_parts(out: &mut Vec<Piece>, at: u64, value: Option<&Value>) -> Result<(), Failure> {
    match value {
        Some(Value::String(s)) => {
            out.push(Piece {
                role: Role::Result,
                text: s.shared(),
                at,
            });
            Ok(())
        }
        Some(Value::Array(parts)) => parts
            .iter()
            .try_for_each(|p| content_part(out, Role::Result, at, p)),
        Some(Value::Object(o)) if o.contains_key("content") => {
            output_parts(out, at, o.get("content"))
        }
        _ => Err(Failure::at(
            at,
            Problem::Key {
                what: "a tool output",
                key: "output",
                must: "a string, an array of content parts or an object with `content`",
            },
        )),
    }
}

fn content_part(out: &mut Vec<Piece>, role: Role, at: u64, part: &Value) -> Result<(), Failure> {
    let Value::Object(p) = part else {
        return Err(Failure::at(at, Problem::PartNotObject));
    };
    match p.get("type").and_then(Value::as_str) {
        Some("input_text" | "output_text" | "text") => {
            out.push(Piece {
                role,
                text: shared_at(p, "text", at, "a text part")?,
                at,
            });
            Ok(())
        }
        Some("input_image" | "input_file") => Ok(()),
        _ => Err(Failure::unknown(at, "a content part", Harness::Codex)),
    }
}

/// Every `compacted` entry of a whole file.
pub(super) fn compactions(lines: &[Line<'_>]) -> Result<Vec<u64>, Failure> {
    let mut out = Vec::new();
    for line in lines {
        if let Item::Compacted { .. } | Item::Opaque = item(line)? {
            out.push(line.at);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUT: &str = "\u{2026}87795 chars truncated\u{2026}";

    fn read_output(value: &Value) -> Vec<String> {
        read_output_of(value, false)
    }

    fn read_output_of(value: &Value, stored_cut: bool) -> Vec<String> {
        let mut out = Vec::new();
        output(&mut out, 0, Some(value), stored_cut).unwrap();
        out.into_iter().map(|p| p.text.to_string()).collect()
    }

    fn call(json: &str) -> bool {
        match super::super::value::parse(json.as_bytes()).unwrap() {
            Value::Object(m) => is_stored_cut(&m),
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_uuid_v7_gives_the_time_it_was_made_and_no_other_string_gives_one() {
        // 0x01a23a903049 ms: 2026-12-03T06:20:57.801Z.
        let at = super::super::utc_millis("2026-12-03T06:20:57.801Z");
        assert_eq!(uuid_v7_millis("01a23a90-3049-7061-bf51-4f79fe50c842"), at);
        assert_eq!(uuid_v7_millis("01A23A90-3049-7061-BF51-4F79FE50C842"), at);
        for other in [
            "01a23a90-3049-4061-bf51-4f79fe50c842",
            "01a23a90-3049-7061-7f51-4f79fe50c842",
            "01a23a903049-7061-bf51-4f79fe50c842",
            "01a23a90-3049-7061-bf51-4f79fe50c84",
            "01a23a90-3049-7061-bf51-4f79fe50c84g",
            "0+a23a90-3049-7061-bf51-4f79fe50c842",
            "",
        ] {
            assert_eq!(uuid_v7_millis(other), None, "{other}");
        }
    }

    /// A subagent's rollout begins with the subagent: its process read the instructions
    /// file by the time its session's first thread was made, which that id carries.
    #[test]
    fn a_subagents_instructions_were_read_by_its_sessions_start() {
        let head = br#"{"timestamp":"2026-12-03T07:00:00.000Z","type":"session_meta","payload":{"id":"01a23a90-3135-7c31-aca6-0436815bf192","session_id":"01a23a90-3049-7061-bf51-4f79fe50c842","parent_thread_id":"01a23a90-3049-7061-bf51-4f79fe50c842","timestamp":"2026-12-03T07:00:00.000Z"}}"#;
        let root = super::super::utc_millis("2026-12-03T06:20:57.801Z");
        assert_eq!(instructions_read(head), root);
        let alone = br#"{"timestamp":"2026-12-03T07:00:00.000Z","type":"session_meta","payload":{"id":"not-a-uuid","timestamp":"2026-12-03T07:00:01.000Z"}}"#;
        let meta = super::super::utc_millis("2026-12-03T07:00:00.000Z");
        assert_eq!(instructions_read(alone), meta);
    }

    #[test]
    fn an_output_codex_stores_as_it_came_counts_only_as_far_as_any_budget_keeps_it() {
        let line = "line of the notes, nothing here.\n";
        let rule = "Refunds over 500 need approval.";
        let far = line.repeat(200);
        let text = format!("{far}{rule}\n{far}");
        // A command's or an MCP tool's output, stored whole: whole.
        let whole = Value::String(text.as_str().into());
        assert_eq!(read_output_of(&whole, true), [text.as_str()]);
        // A code cell's as long: only its start, which ends before a whitespace.
        let head = read_output_of(&whole, false).concat();
        assert!(head.len() <= UNCUT_HEAD && head.len() > UNCUT_HEAD - line.len());
        assert!(text.starts_with(&head) && text[head.len()..].starts_with(char::is_whitespace));
        assert!(!head.contains(rule));
        // Its start counts, across parts: the first whole, the next cut, the rest left out.
        let parts = format!(
            r#"[{{"type": "input_text", "text": "Script completed"}},
                {{"type": "input_text", "text": "{rule} {far}"}},
                {{"type": "input_text", "text": "{rule}"}}]"#,
            far = far.replace('\n', " ")
        );
        let parts = super::super::value::parse(parts.as_bytes()).unwrap();
        let read = read_output_of(&parts, false);
        assert_eq!(read.len(), 2);
        assert_eq!(read[0], "Script completed");
        assert!(read[1].starts_with(rule) && read[1].len() <= UNCUT_HEAD);
        // A word cut at the end is left out (`500` of `5000` is not `500`).
        let (before, after) = ("x".repeat(UNCUT_HEAD - 17), "y ".repeat(UNCUT_MAX));
        let numbers = format!("{before} Refunds over 5000 need approval {after}");
        let read = read_output_of(&Value::String(numbers.as_str().into()), false).concat();
        assert!(!read.ends_with("500") && read.ends_with("over"), "{read:?}");
        // One up to the most any budget keeps whole: whole.
        let short = format!("{}{rule}", "x ".repeat((UNCUT_MAX - rule.len()) / 2));
        assert!(short.len() <= UNCUT_MAX);
        let short = Value::String(short.as_str().into());
        assert_eq!(read_output_of(&short, false).concat().len(), UNCUT_MAX - 1);
        // Which calls Codex cuts before storing their output.
        assert!(call(r#"{"type": "function_call", "name": "exec_command"}"#));
        assert!(call(r#"{"type": "function_call", "name": "write_stdin"}"#));
        assert!(!call(r#"{"type": "local_shell_call"}"#));
        assert!(!call(
            r#"{"type": "function_call", "name": "shell_command"}"#
        ));
        assert!(call(
            r#"{"type": "function_call", "name": "report", "namespace": "mcp__big"}"#
        ));
        assert!(!call(r#"{"type": "custom_tool_call", "name": "exec"}"#));
        assert!(!call(r#"{"type": "function_call", "name": "wait"}"#));
        assert!(!call(
            r#"{"type": "function_call", "name": "wait_agent", "namespace": "multi_agent_v1"}"#
        ));
        assert!(!call(
            r#"{"type": "function_call", "name": "exec_command", "namespace": "multi_agent_v1"}"#
        ));
    }

    #[test]
    fn a_tool_output_codex_cut_does_not_count_at_all() {
        let far = "x".repeat(64 * 1024);
        // No mark: the whole output.
        assert_eq!(read_output(&Value::String("plain".into())), ["plain"]);
        // A mark anywhere: nothing, however far from it a text stands (Codex may cut it
        // again, to a budget the rollout does not record).
        let text = format!("head rule. {far}{CUT}{far} tail rule.");
        assert!(read_output(&Value::String(text.as_str().into())).is_empty());
        // In one part of several: no part counts.
        let parts = r#"[{"type": "input_text", "text": "Output:"},
            {"type": "input_text", "text": "a\u20267 tokens truncated\u2026b"}]"#;
        let parts = super::super::value::parse(parts.as_bytes()).unwrap();
        assert!(read_output(&parts).is_empty());
        // What only looks like a mark is text.
        for text in [
            "wait\u{2026} chars truncated\u{2026} or not",
            "\u{2026}12 lines truncated\u{2026}",
            "\u{2026}12 chars truncated",
        ] {
            assert_eq!(read_output(&Value::String(text.into())), [text]);
        }
    }
}
