//! Claude Code's session file: one entry a line, chained by `parentUuid`.
//!
//! The live context is the chain walked back from the newest entry to its root. After a
//! compaction the root is a `compact_boundary` system entry; the entry after it is the
//! summary (`isCompactSummary`), and the entries the boundary lists under
//! `compactMetadata.preservedMessages.uuids` (which sit before the boundary in the file)
//! follow the summary, in that order. Only user and assistant messages are sent to the
//! model: system entries, attachments and progress entries are links of the chain only.
//!
//! A subagent (the Agent tool) has a file of its own, `<session>/subagents/agent-<id>.jsonl`
//! beside the session's: its task as the first entry, then its own chain, every link
//! marked `isSidechain`. In that file the sidechain is the conversation; in the session's
//! file a sidechain link belongs to a subagent and is skipped.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use super::value::{Map, Value};
use super::{
    Failure, Line, Live, Piece, Problem, Role, Window, is_uuid, push_strings, shared_at, string_at,
};
use crate::harness::Harness;

const NAME: &str = "Claude Code";

/// Entries that are links of the `parentUuid` chain.
const CHAINED: [&str; 5] = ["user", "assistant", "system", "attachment", "progress"];

/// The kinds (`subtype`) of system entry: notices the model is not sent, and the two
/// boundaries that change what it is sent (`compact_boundary`, `microcompact_boundary`).
/// The notices are those Claude Code 2.1.197 can write (read from its binary): none of
/// them takes anything out of what the model is sent, and what they hold is never
/// counted as context. A newer kind may be another boundary, so it is an error until
/// the gate knows it.
const SYSTEM: [&str; 42] = [
    "compact_boundary",
    "microcompact_boundary",
    "agents_killed",
    "api_error",
    "api_retry",
    "away_summary",
    "bridge_state",
    "bridge_status",
    "commands_changed",
    "elicitation_complete",
    "file_snapshot",
    "hook_progress",
    "hook_response",
    "hook_started",
    "informational",
    "init",
    "local_command",
    "memory_recall",
    "memory_saved",
    "mirror_error",
    "model_consent_fallback",
    "model_fallback",
    "model_refusal_fallback",
    "model_refusal_no_fallback",
    "notification",
    "permission_denied",
    "permission_retry",
    "plugin_install",
    "post_turn_summary",
    "scheduled_task_fire",
    "session_state_changed",
    "status",
    "stop_hook_summary",
    "task_notification",
    "task_progress",
    "task_started",
    "task_summary",
    "task_updated",
    "thinking_tokens",
    "turn_duration",
    "turn_starting",
    "worker_shutting_down",
];

/// Entries outside the chain that are never sent to the model: titles, file snapshots,
/// the prompt queue, session labels and settings. Claude Code 2.1.197's session loader
/// reads each of these into the session's metadata only, never into its messages (the
/// interactive session writes `permission-mode` when a permission mode is set).
///
/// `content-replacement` is not sent either, but it says which tool results are sent as
/// something else (see [`replaced_results`]), which the reader reads apart.
///
/// `fork-context-ref` opens the own file of a fork (a subagent spawned with
/// `subagent_type: "fork"`, which inherits the main conversation; 2.1.197 offers it when
/// `CLAUDE_CODE_FORK_SUBAGENT` is true, or in an interactive session an account rollout
/// turns it on): in place of the parent's messages the fork was sent first, Claude Code
/// writes only this reference to them (`parentSessionId`, `parentLastUuid`), then the
/// fork's own chain, whose first link has no parent. That inherited prefix is not
/// counted (see [`is_subagents_file`]).
const UNCHAINED: [&str; 20] = [
    "mode",
    "content-replacement",
    "fork-context-ref",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "custom-title",
    "tag",
    "agent-name",
    "last-prompt",
    "pr-link",
    "ai-title",
    "relocated",
    "agent-color",
    "agent-setting",
    "permission-mode",
    "isolation-latch",
    "worktree-state",
    "bridge-session",
    "attribution-snapshot",
];

/// The entries of Claude Code's context collapse, which replaces spans of older messages
/// with summaries in what the model is sent. Claude Code 2.1.197 holds the code that
/// writes them but never calls it, and its session loader keeps them apart from the
/// messages without ever applying them: a file that holds one was written by another
/// build, whose requests the gate cannot rebuild (see [`Problem::ContextCollapse`]).
const COLLAPSE: [&str; 3] = [
    "marble-origami-commit",
    "marble-origami-snapshot",
    "marble-origami-reset",
];

/// True for a line that is a Claude Code entry (for recognising the format).
pub(super) fn is_entry(obj: &Map<'_>) -> bool {
    matches!(obj.get("type"), Some(Value::String(t))
        if CHAINED.contains(&t.as_ref()) || UNCHAINED.contains(&t.as_ref()))
}

/// A link of the chain.
struct Entry<'a> {
    at: u64,
    uuid: String,
    parent: Option<String>,
    obj: Map<'a>,
}

impl Entry<'_> {
    fn kind(&self) -> &str {
        match self.obj.get("type") {
            Some(Value::String(t)) => t,
            _ => "",
        }
    }

    fn is_boundary(&self) -> bool {
        self.kind() == "system"
            && matches!(self.obj.get("subtype"), Some(Value::String(s)) if s == "compact_boundary")
    }

    fn is_summary(&self) -> bool {
        self.kind() == "user" && self.obj.get("isCompactSummary") == Some(&Value::Bool(true))
    }

    /// True for a message Claude Code leaves out of every request: one it marks virtual,
    /// and the message it writes in the model's place for an API error.
    fn is_never_sent(&self) -> bool {
        let set = |key| self.obj.get(key) == Some(&Value::Bool(true));
        set("isVirtual") || (self.kind() == "assistant" && set("isApiErrorMessage"))
    }
}

/// Reads one line: a chain link, or `None` for an entry outside the chain (and, outside a
/// subagent's own file, for a sidechain link, which belongs to a subagent's conversation).
fn entry<'a>(line: &Line<'a>, subagent: bool) -> Result<Option<Entry<'a>>, Failure> {
    entry_of(line, line.object(NAME)?, subagent)
}

/// [`entry`], of the line's object.
fn entry_of<'a>(
    line: &Line<'a>,
    obj: Map<'a>,
    subagent: bool,
) -> Result<Option<Entry<'a>>, Failure> {
    let what = "a Claude Code entry";
    let kind = string_at(&obj, "type", line.at, what)?;
    if UNCHAINED.contains(&kind) {
        return Ok(None);
    }
    if COLLAPSE.contains(&kind) {
        return Err(Failure::at(line.at, Problem::ContextCollapse));
    }
    if !CHAINED.contains(&kind) {
        return Err(Failure::unknown(line.at, "an entry", Harness::ClaudeCode));
    }
    let uuid = string_at(&obj, "uuid", line.at, what)?.to_string();
    let parent = match obj.get("parentUuid") {
        Some(Value::String(p)) => Some(p.to_string()),
        Some(Value::Null) => None,
        _ => {
            return Err(Failure::at(
                line.at,
                Problem::Key {
                    what: "a Claude Code entry",
                    key: "parentUuid",
                    must: "a string or null",
                },
            ));
        }
    };
    if kind == "system" {
        match obj.get("subtype") {
            None => {}
            Some(Value::String(sub)) if SYSTEM.contains(&sub.as_ref()) => {}
            Some(_) => {
                return Err(Failure::unknown(
                    line.at,
                    "a system entry",
                    Harness::ClaudeCode,
                ));
            }
        }
    }
    if !subagent && is_sidechain(&obj) {
        return Ok(None);
    }
    if matches!(kind, "user" | "assistant") && !matches!(obj.get("message"), Some(Value::Object(_)))
    {
        return Err(Failure::at(
            line.at,
            Problem::Key {
                what: "a Claude Code message entry",
                key: "message",
                must: "an object",
            },
        ));
    }
    Ok(Some(Entry {
        at: line.at,
        uuid,
        parent,
        obj,
    }))
}

fn is_sidechain(obj: &Map<'_>) -> bool {
    obj.get("isSidechain") == Some(&Value::Bool(true))
}

/// True when the file whose first line is `head` is a subagent's own transcript: its
/// first entry is a sidechain link, or the `fork-context-ref` a fork's file opens with
/// (Claude Code 2.1.197 writes it before the fork's first message). A fork's file holds
/// its own chain only: the parent's messages it inherited are read as a subagent's
/// parent's conversation always is, as not sent to it (a rule there is blocked, and
/// comes back as the reason), never from the parent's file.
fn is_subagents_file(head: &[u8]) -> bool {
    matches!(super::value::parse(super::trim_line(head)), Ok(Value::Object(obj))
        if is_sidechain(&obj) || obj.get("type").and_then(Value::as_str) == Some("fork-context-ref"))
}

/// When Claude Code read its memory files (`CLAUDE.md` and the rest) for the session
/// whose transcript opens with `bytes`, at the latest, in milliseconds since 1970: the
/// earliest `timestamp` of its first lines (a queued prompt, the first message), which it
/// writes as the session's first turn starts, after reading them once for the whole
/// process (2.1.197: a file the agent rewrote mid-session was in no later request). A
/// resume reads them again later, and a resumed file keeps the first run's times, which
/// are earlier still. `None` when none of the whole lines there has a time it reads,
/// and for a subagent's own file, which opens only when the subagent starts.
pub fn session_start(bytes: &[u8]) -> Option<i64> {
    if is_subagents_file(bytes.split(|&b| b == b'\n').next().unwrap_or_default()) {
        return None;
    }
    // Whole lines only: the last may be cut where the read stopped.
    let whole =
        memchr::memrchr(b'\n', bytes).map_or(&[][..], |i| bytes.get(..i).unwrap_or_default());
    whole
        .split(|&b| b == b'\n')
        .filter_map(|line| match super::value::parse(super::trim_line(line)) {
            Ok(Value::Object(obj)) => obj
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(super::utc_millis),
            _ => None,
        })
        .min()
}

/// The lines read so far, from the end of the window back.
struct Backward<'l, 'a> {
    lines: &'l [Line<'a>],
    /// The file is a subagent's own transcript (see the module's note).
    subagent: bool,
    /// How many lines from the end have been read.
    read: usize,
    entries: Vec<Entry<'a>>,
    by_uuid: HashMap<String, usize>,
    /// What the passes over every line of the window ([`retracted`], [`replaced_results`],
    /// [`loads_every_entry`]) look for, noted in the lines read as they are parsed, so
    /// that those passes search only the lines not read: see [`Marks`].
    marks: Marks,
}

/// What the newest entry's chain leads back to (see
/// [`Backward::newest_response_on_chain`]).
enum Chained {
    /// The newest response on it, by its place among the entries read.
    Response(usize),
    /// No response before a message the user typed, a boundary or the chain's root.
    None,
    /// A parent that is not in the file: where the chain goes is not known.
    Lost,
}

/// The lines read that the passes over every line of the window look at. Each pass looks
/// only at the lines that hold its key's bytes, and of those only at the ones whose
/// object is of a certain shape: a line read is noted here when it is both (its bytes
/// are searched only once its object is of that shape, which few are), so that a pass
/// takes the same lines, in the same order, as it would by searching every line.
#[derive(Default)]
struct Marks {
    /// Lines (their place in the window, newest first) whose object has a key of
    /// [`RETRACTING`] and whose bytes hold one.
    retracting: Vec<usize>,
    /// Lines (newest first) whose object is a `content-replacement` entry and whose bytes
    /// hold [`REPLACEMENT`].
    replacing: Vec<usize>,
    /// The newest line that is a compaction boundary (a subagent's too) and whose bytes
    /// hold [`BOUNDARY`].
    boundary: Option<u64>,
}

/// The keys that list the messages a refusal retracted, and the entries that hold them
/// (see [`retracted`]).
const RETRACTING: [(&str, &str); 2] = [
    ("system", "retractedMessageUuids"),
    ("assistant", "supersedesUuids"),
];

/// The bytes every `content-replacement` line is searched for.
const REPLACEMENT: &[u8] = b"content-replacement";

/// The bytes every compaction boundary line is searched for.
const BOUNDARY: &[u8] = b"compact_boundary";

impl Marks {
    /// Notes line `index` of the window, read now (lines are read newest first).
    fn note(&mut self, index: usize, line: &Line<'_>, obj: &Map<'_>) {
        let holds = |bytes: &[u8]| memchr::memmem::find(line.bytes, bytes).is_some();
        let kind = obj.get("type").and_then(Value::as_str);
        if RETRACTING.iter().any(|(_, key)| obj.contains_key(key))
            && RETRACTING.iter().any(|(_, key)| holds(key.as_bytes()))
        {
            self.retracting.push(index);
        }
        if kind == Some("content-replacement") && holds(REPLACEMENT) {
            self.replacing.push(index);
        }
        if self.boundary.is_none() && is_boundary_object(obj) && holds(BOUNDARY) {
            self.boundary = Some(line.at);
        }
    }
}

impl<'a> Backward<'_, 'a> {
    /// Reads the next line back; false when the window is exhausted.
    fn step(&mut self) -> Result<bool, Failure> {
        let Some(index) = self.lines.len().checked_sub(self.read + 1) else {
            return Ok(false);
        };
        self.read += 1;
        let Some(line) = self.lines.get(index) else {
            return Ok(true);
        };
        let obj = line.object(NAME)?;
        self.marks.note(index, line, &obj);
        if let Some(e) = entry_of(line, obj, self.subagent)? {
            // The newest entry with a uuid wins: a later line is the later state.
            self.by_uuid
                .entry(e.uuid.clone())
                .or_insert(self.entries.len());
            self.entries.push(e);
        }
        Ok(true)
    }

    /// The entry with this uuid, reading further back as needed; `None` when the window
    /// holds no such entry.
    fn find(&mut self, uuid: &str) -> Result<Option<usize>, Failure> {
        loop {
            if let Some(&i) = self.by_uuid.get(uuid) {
                return Ok(Some(i));
            }
            if !self.step()? {
                return Ok(None);
            }
        }
    }

    /// The newest line with this uuid written before byte `at` (entries are numbered from
    /// the newest, so the first such found), reading further back as needed; `None` when
    /// the window holds none. Claude Code may write an entry again later under its uuid
    /// (a session reopened in an editor appends copies): what an entry names was written
    /// before it, and a later line under that uuid is not what the model was sent then.
    fn find_before(&mut self, uuid: &str, at: u64) -> Result<Option<usize>, Failure> {
        self.newest_where(|e| e.uuid == uuid && e.at < at)
    }

    /// Whether a line of the window written before byte `at` is an entry under `uuid`
    /// (only the lines whose bytes hold it are parsed).
    fn written_before(&self, uuid: &str, at: u64) -> Result<bool, Failure> {
        let finder = memchr::memmem::Finder::new(uuid.as_bytes());
        for line in self.lines.iter().take_while(|l| l.at < at) {
            if finder.find(line.bytes).is_some()
                && entry(line, self.subagent)?.is_some_and(|e| e.uuid == uuid)
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The newest entry that `holds`, reading further back as needed (each entry looked
    /// at once); `None` when the window holds none.
    fn newest_where(
        &mut self,
        holds: impl Fn(&Entry<'a>) -> bool,
    ) -> Result<Option<usize>, Failure> {
        let mut checked = 0;
        loop {
            if let Some(i) = self
                .entries
                .get(checked..)
                .and_then(|rest| rest.iter().position(&holds))
            {
                return Ok(Some(checked + i));
            }
            checked = self.entries.len();
            if !self.step()? {
                return Ok(None);
            }
        }
    }

    /// The entry that records the pending call `id` (its `tool_use` block), reading
    /// further back as needed; `None` when the window does not hold it. The chain is
    /// walked from there, not from the newest entry: when the model asks for several
    /// calls at once, Claude Code writes each call as its own entry, and a result of an
    /// earlier one (a child of that call's entry) may be written while the hook of a
    /// later one runs, so the newest entry may stand on another branch. Nothing written
    /// after the call's entry can have been sent to the model before it asked for it.
    /// Nor can a later line under that entry's uuid (a copy, as Claude Code appends when
    /// a session is reopened in an editor, or another entry): the call was made where the
    /// line that first recorded it stands, and the chain is walked from there (where that
    /// line does not record the call, the call is not seen, and the hook waits for it).
    fn holding_call(&mut self, id: &str) -> Result<Option<usize>, Failure> {
        // One searcher for every line (building one is dearer than searching a line).
        let finder = memchr::memmem::Finder::new(id.as_bytes());
        // From the end, where it is written.
        if !self
            .lines
            .iter()
            .rev()
            .any(|l| finder.find(l.bytes).is_some())
        {
            return Ok(None);
        }
        let records = |e: &Entry<'_>| {
            e.kind() == "assistant"
                && blocks(e).any(|b| {
                    b.get("type").and_then(Value::as_str) == Some("tool_use")
                        && b.get("id").and_then(Value::as_str) == Some(id)
                })
        };
        let Some(mut first) = self.newest_where(records)? else {
            return Ok(None);
        };
        // The first line that records it (only the lines whose bytes hold the id are
        // parsed), then the first line under that entry's uuid.
        let at = self.get(first).map_or(0, |e| e.at);
        let mut earliest = None;
        for line in self.lines.iter().take_while(|l| l.at < at) {
            if finder.find(line.bytes).is_some()
                && entry(line, self.subagent)?.is_some_and(|e| records(&e))
            {
                earliest = Some(line.at);
                break;
            }
        }
        if let Some(earliest) = earliest
            && let Some(i) = self.newest_where(|e| e.at == earliest)?
        {
            first = i;
        }
        while let Some((uuid, at)) = self.get(first).map(|e| (e.uuid.clone(), e.at)) {
            if !self.written_before(&uuid, at)? {
                break;
            }
            match self.find_before(&uuid, at)? {
                Some(earlier) => first = earlier,
                None => break,
            }
        }
        Ok(Some(first))
    }

    /// With no call named (`check --transcript`, `context`): the entry of the newest
    /// response that holds a call with no result anywhere in the file, reading further
    /// back as needed, the newest such entry first; it stands for the one that holds the
    /// call judged. `None` when the newest response has no such call (the call judged
    /// comes after the whole file), or there is no response since the last compaction.
    /// When the model asks for several calls at once, a result of one may be the newest
    /// entry, on a branch of its own (see [`Backward::holding_call`]): walked from there,
    /// the chain would miss the calls still pending, and count the response's text and
    /// that result as context. The response must also be the newest on the newest
    /// entry's chain (see [`Backward::newest_response_on_chain`]): a call left with no
    /// result on a branch the session went back from is not the one judged. `whole`:
    /// the window is the whole file; else a window that ends before the response's first
    /// entry asks for more.
    fn newest_pending(&mut self, whole: bool) -> Result<Option<usize>, Failure> {
        let mut answered = BTreeSet::new();
        // The newest response's message id, once met (`Some(None)`: it has none, and its
        // entries are the run of model entries up to the next user entry).
        let mut response: Option<Option<String>> = None;
        let mut i = 0;
        loop {
            while self.entries.len() <= i {
                if !self.step()? {
                    return if whole {
                        Ok(None)
                    } else {
                        Err(Failure::NeedMore)
                    };
                }
            }
            let Some(e) = self.entries.get(i) else {
                return Ok(None);
            };
            i += 1;
            if e.is_boundary() {
                return Ok(None);
            }
            let results: Vec<String> = blocks(e)
                .filter(|b| kind_of(b) == Some("tool_result"))
                .filter_map(|b| b.get("tool_use_id")?.as_str().map(str::to_string))
                .collect();
            match e.kind() {
                "user" if !results.is_empty() => answered.extend(results),
                // A message the user typed after the newest response's first entry: not
                // one response's.
                "user" if response.is_some() => return Ok(None),
                "assistant" if !e.is_never_sent() => {
                    let id = message_id(e).map(str::to_string);
                    match &response {
                        None => response = Some(id.clone()),
                        Some(r) if *r != id => return Ok(None),
                        Some(_) => {}
                    }
                    let pending = blocks(e)
                        .filter(|b| kind_of(b) == Some("tool_use"))
                        .filter_map(|b| b.get("id")?.as_str())
                        .any(|id| !answered.contains(id));
                    if pending {
                        let at = i - 1;
                        // A chain that cannot be followed (a parent the file left out)
                        // cannot show the call is on a branch left behind: the stricter
                        // reading, with less in view, stands.
                        let same = match self.newest_response_on_chain(whole)? {
                            Chained::Response(j) => {
                                j == at
                                    || self.entries.get(j).is_some_and(|r| {
                                        message_id(r).is_some_and(|r| id.as_deref() == Some(r))
                                    })
                            }
                            Chained::None => false,
                            Chained::Lost => true,
                        };
                        return Ok(same.then_some(at));
                    }
                }
                _ => {}
            }
        }
    }

    /// The newest response on the chain of the newest entry: walked back from it over
    /// tool results and Claude Code's own (`isMeta`) user entries, the first model entry
    /// that is sent ([`Chained::Response`]). [`Chained::None`] when a message the user
    /// typed, a compaction boundary or the chain's root comes first; [`Chained::Lost`]
    /// when a parent is not in the file.
    fn newest_response_on_chain(&mut self, whole: bool) -> Result<Chained, Failure> {
        let mut at = 0;
        let mut seen = BTreeSet::new();
        while seen.insert(at) {
            let Some(e) = self.entries.get(at) else {
                return Ok(Chained::Lost);
            };
            let passed = match e.kind() {
                "assistant" if !e.is_never_sent() => return Ok(Chained::Response(at)),
                "assistant" => true,
                "user" => {
                    e.obj.get("isMeta") == Some(&Value::Bool(true))
                        || blocks(e).any(|b| kind_of(b) == Some("tool_result"))
                }
                _ => !e.is_boundary(),
            };
            let Some(parent) = e.parent.clone().filter(|_| passed) else {
                return Ok(Chained::None);
            };
            at = match self.find(&parent)? {
                Some(j) => j,
                None if whole => return Ok(Chained::Lost),
                None => return Err(Failure::NeedMore),
            };
        }
        // A circle: the chain's walk proper reports it.
        Ok(Chained::Lost)
    }

    fn get(&self, i: usize) -> Option<&Entry<'a>> {
        self.entries.get(i)
    }

    /// The lines a pass over every line of the window takes, in the window's order: of
    /// the lines not read, those whose bytes hold one of `keys`; of the lines read, those
    /// noted (`noted`, one of [`Marks`]' lists).
    fn marked<'s>(
        &'s self,
        keys: &[&[u8]],
        noted: &'s [usize],
    ) -> impl Iterator<Item = &'s Line<'a>> + 's {
        let finders: Vec<memchr::memmem::Finder<'static>> = keys
            .iter()
            .map(|k| memchr::memmem::Finder::new(k).into_owned())
            .collect();
        let unread = self.lines.len().saturating_sub(self.read);
        let before = self.lines.get(..unread).unwrap_or_default();
        before
            .iter()
            .filter(move |l| finders.iter().any(|f| f.find(l.bytes).is_some()))
            .chain(noted.iter().rev().filter_map(|&i| self.lines.get(i)))
    }
}

/// True for a call a `REPL` script made (its id `repl_<uuid>`) or its result. Claude Code
/// writes them once the script has ended, as calls of their own with empty results, and
/// sends them so only after the session is resumed: the session that ran the script sends
/// the `REPL` call and its result, which the file does not hold. Neither form counts.
fn is_repl_script_block(item: &Value) -> bool {
    let id = match item.get("type").and_then(Value::as_str) {
        Some("tool_use") => item.get("id"),
        Some("tool_result") => item.get("tool_use_id"),
        _ => None,
    };
    id.and_then(Value::as_str).is_some_and(is_repl_inner)
}

/// True for the id Claude Code 2.1.197 gives a call made from a script of its `REPL`
/// tool (on with `CLAUDE_CODE_REPL`): `repl_` and a UUID. Such a call reaches the
/// pre-tool hook under its own tool's name, while the session file holds nothing of the
/// `REPL` call it is made from (run against a mock: the file leaves out every `REPL` call
/// and its result, which the model is sent, and writes the script's calls only once the
/// script has ended, as calls of their own with empty results), so the file cannot tell
/// what the model was sent when it wrote the script.
pub fn is_repl_inner(id: &str) -> bool {
    id.strip_prefix("repl_").is_some_and(is_uuid)
}

pub(super) fn read(
    lines: &[Line<'_>],
    window: Window<'_>,
    call: Option<&str>,
    fallback: &RefusalFallback,
) -> Result<Live, Failure> {
    let missing = |at: u64, problem: Problem| {
        if window.is_whole() {
            Failure::at(at, problem)
        } else {
            Failure::NeedMore
        }
    };
    let mut back = Backward {
        lines,
        subagent: is_subagents_file(window.head),
        read: 0,
        entries: Vec::new(),
        by_uuid: HashMap::new(),
        marks: Marks::default(),
    };
    // The newest link of the chain.
    while back.entries.is_empty() {
        if !back.step()? {
            if window.is_whole() {
                return Ok(Live {
                    harness: Harness::ClaudeCode,
                    pieces: Vec::new(),
                    compaction: None,
                    call_seen: false,
                    terminal: None,
                    responding: None,
                    instructions_read: None,
                });
            }
            return Err(Failure::NeedMore);
        }
    }
    let head = match call {
        Some(id) => back.holding_call(id)?.unwrap_or(0),
        None => back.newest_pending(window.is_whole())?.unwrap_or(0),
    };
    // A pending call has no result yet (its hook runs before it does). One that has
    // would be judged against the context it was asked in, which may hold a rule since
    // compacted away: the payload is not the harness's for a call about to run.
    if let Some(id) = call
        && let Some(e) = back.entries.get(..head).into_iter().flatten().find(|e| {
            e.kind() == "user"
                && blocks(e).any(|b| {
                    b.get("type").and_then(Value::as_str) == Some("tool_result")
                        && b.get("tool_use_id").and_then(Value::as_str) == Some(id)
                })
        })
    {
        return Err(Failure::at(e.at, Problem::CallAnswered));
    }
    // Nor is a compaction written after a pending call's entry: the call was asked in the
    // context before it, which may hold a rule the compaction took out.
    if call.is_some()
        && let Some(e) = back
            .entries
            .get(..head)
            .into_iter()
            .flatten()
            .find(|e| e.is_boundary())
    {
        return Err(Failure::at(e.at, Problem::CallBeforeCompaction));
    }
    // Walk back to the root, newest first. A compaction boundary is the root whatever
    // its `parentUuid` says: nothing before it is sent (a version that linked it to the
    // entries it summarised must not put them back in view).
    let mut chain = vec![head];
    // The entries by time, read once the chain first meets a parent that is not there.
    let mut clock = None;
    let mut seen = BTreeSet::from([head]);
    while let Some(current) = chain.last().and_then(|&i| back.get(i)) {
        let (at, Some(parent)) = (current.at, current.parent.clone()) else {
            break;
        };
        if current.is_boundary() {
            break;
        }
        // A summary stands on its compaction's boundary: with none there, the chain would
        // go on into what the compaction summarised.
        let summary = current.is_summary();
        let i = match back.find(&parent)? {
            Some(i) => i,
            // The parent may be further back in the file.
            None if !window.is_whole() => return Err(Failure::NeedMore),
            None if summary => return Err(Failure::at(at, Problem::SummaryWithoutBoundary)),
            // Claude Code left the parent out of the file (a `REPL` call or its result):
            // the chain goes on where Claude Code's loader takes it, or ends here.
            None => {
                let clock = clock.get_or_insert_with(|| Clock::of(&back));
                match chain.last().and_then(|&o| bridge(&back, clock, o, &seen)) {
                    Some(i) => i,
                    None => break,
                }
            }
        };
        if summary && !back.get(i).is_some_and(Entry::is_boundary) {
            return Err(Failure::at(at, Problem::SummaryWithoutBoundary));
        }
        // A parent is written before its child. One found after it is a later line under
        // the parent's uuid (a copy, or another entry), which would put what it says (or
        // where it leads) in the place of what the model was sent: the line written
        // before the child is the parent; with none, the chain cannot be read.
        let i = match back.get(i).is_some_and(|p| p.at > at) {
            false => i,
            true => match back.find_before(&parent, at)? {
                Some(j) => j,
                None if !window.is_whole() => return Err(Failure::NeedMore),
                None => return Err(Failure::at(at, Problem::ParentWrittenAfter)),
            },
        };
        if !seen.insert(i) {
            return Err(Failure::at(at, Problem::ChainCircle));
        }
        chain.push(i);
    }
    chain.reverse();
    let root = chain.first().and_then(|&i| back.get(i));
    // With no call named, the walk starts from the newest entry (or the newest response
    // with a call pending). A line under the uuid of one written before it is a copy
    // (Claude Code appends copies of entries when a session is reopened in an editor),
    // not where the session goes on from: walked from a copy of an entry written before
    // the last compaction, the chain would lead back into what the compaction took out.
    // A chain that starts at the newest boundary holds every line after it, a copy's
    // original too; any other may have its original further back.
    if call.is_none()
        && let Some(e) = back.get(head)
    {
        let newest = root.is_some_and(|r| r.is_boundary() && back.marks.boundary == Some(r.at));
        if !newest && !window.is_whole() {
            return Err(Failure::NeedMore);
        }
        if back.written_before(&e.uuid, e.at)? {
            return Err(Failure::at(e.at, Problem::NewestIsCopy));
        }
    }
    let chain = if loads_every_entry(window, &back, root)? {
        with_parallel_results(&back, chain)
    } else {
        chain
    };
    // A compaction: the root is its boundary; splice the preserved entries after the summary.
    let mut order: Vec<usize> = chain.clone();
    let mut compaction = None;
    // Where the preserved entries stand in `order`.
    let mut preserved_at = 0..0;
    if let Some(root) = chain.first().and_then(|&i| back.get(i))
        && root.is_boundary()
    {
        compaction = Some(root.at);
        let root_at = root.at;
        let preserved = preserved_uuids(root)?;
        let mut spliced = Vec::with_capacity(preserved.len());
        for uuid in &preserved {
            // What a compaction keeps was written before its boundary (a later copy
            // under the same uuid is not it).
            match back.find_before(uuid, root_at)? {
                Some(i) => spliced.push(i),
                // A fork of a compacted session (`--resume --fork-session`) writes the
                // chain it loaded, the preserved entries spliced in, under their uuids
                // and after the boundary: one on the chain walked is in its place
                // already.
                None if chain
                    .iter()
                    .any(|&i| back.get(i).is_some_and(|e| e.uuid == *uuid)) => {}
                None if back.find(uuid)?.is_some() && window.is_whole() => {
                    return Err(Failure::at(root_at, Problem::PreservedAfterBoundary));
                }
                None => {
                    return Err(missing(root_at, Problem::PreservedMissing));
                }
            }
        }
        let summary = chain
            .iter()
            .position(|&i| back.get(i).is_some_and(Entry::is_summary))
            .ok_or_else(|| Failure::at(root_at, Problem::NoSummary))?;
        order = chain.get(..=summary).unwrap_or_default().to_vec();
        preserved_at = order.len()..order.len() + spliced.len();
        order.extend(spliced);
        order.extend(chain.get(summary + 1..).unwrap_or_default());
    }
    // The messages a refusal retracted, and the responses abandoned for a retry, are
    // links of the chain, never context.
    let retracted = retracted(&back)?;
    let abandoned = abandoned(&back, &order, fallback)?;
    if !retracted.is_empty() || !abandoned.is_empty() {
        let kept = |i: &usize| {
            !abandoned.contains(i) && back.get(*i).is_some_and(|e| !is_retracted(e, &retracted))
        };
        let before = order.get(..preserved_at.start).unwrap_or_default();
        let start = before.iter().filter(|i| kept(i)).count();
        let spliced = order.get(preserved_at.clone()).unwrap_or_default();
        preserved_at = start..start + spliced.iter().filter(|i| kept(i)).count();
        order.retain(kept);
    }
    let entries: Vec<&Entry> = order.iter().filter_map(|&i| back.get(i)).collect();
    // The context hint clears old tool results only in an interactive session's own
    // conversation (not a subagent's, not `-p`'s).
    let hinted = !back.subagent && back.get(head).is_some_and(|e| !is_print_mode(e));
    let replaced = replaced_results(&back)?;
    pieces(
        &entries,
        compaction,
        call,
        hinted.then_some(preserved_at),
        replaced,
    )
}

/// The tool results that Claude Code sends as something else, as its
/// `content-replacement` entries record them. When one message's tool results exceed its
/// budget (200,000 characters in 2.1.197), Claude Code saves the largest to a file and
/// sends, in each request from then on, a `<persisted-output>` preview in their stead
/// (the `replacement`), while the result's own entry keeps the whole output. Such a
/// result counts not at all (the preview's first part only ever over-blocks unread).
/// Every such entry in the lines read counts, whichever session or agent it names: one
/// is written after the result it replaces, so it is in any window that holds that result.
fn replaced_results(back: &Backward<'_, '_>) -> Result<BTreeSet<String>, Failure> {
    replaced_in(back.marked(&[REPLACEMENT], &back.marks.replacing))
}

/// [`replaced_results`] of the lines given, in order.
fn replaced_in<'l, 'a: 'l>(
    lines: impl Iterator<Item = &'l Line<'a>>,
) -> Result<BTreeSet<String>, Failure> {
    let mut out = BTreeSet::new();
    for line in lines {
        let obj = line.object(NAME)?;
        if obj.get("type").and_then(Value::as_str) != Some("content-replacement") {
            continue;
        }
        let bad = |key, must| {
            Failure::at(
                line.at,
                Problem::Key {
                    what: "a content-replacement entry",
                    key,
                    must,
                },
            )
        };
        let items = obj
            .get("replacements")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("replacements", "an array"))?;
        for item in items {
            if item.get("kind").and_then(Value::as_str) != Some("tool-result") {
                return Err(bad("replacements[].kind", "\"tool-result\""));
            }
            let id = item
                .get("toolUseId")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("replacements[].toolUseId", "a string"))?;
            out.insert(id.to_string());
        }
    }
    Ok(out)
}

/// How many leading characters of a uuid Claude Code 2.1.197 compares when it matches a
/// retracted message: the uuid it gives each block of a message split in blocks keeps
/// the message's first 24 and ends in the block's number.
const UUID_STEM: usize = 24;

/// The messages a model refusal retracted, as the stems of their uuids (see
/// [`UUID_STEM`]). When the model refuses and Claude Code 2.1.197 retries on its fallback
/// model, it takes what the refused response wrote (its messages, the results of its
/// calls) out of the conversation it sends from then on, and tries to delete them from
/// the file (it skips that when the file is over 50 MB, and ignores any failure). It
/// lists them in `retractedMessageUuids` of the `model_refusal_fallback` system entry it
/// writes after them, and in `supersedesUuids` of the first message of the response that
/// replaces them; on resume it drops every message the system entry names (read from
/// its binary; run against a mock answering `claude-fable-5` with `stop_reason: "refusal"`,
/// `-p` wrote both lists, never wrote the refused message, and did not send it to the
/// fallback model). Both lists count, wherever they stand in the lines read: such an
/// entry is written after what it names, so it is in any window that holds it.
fn retracted(back: &Backward<'_, '_>) -> Result<BTreeSet<Vec<u8>>, Failure> {
    let keys = RETRACTING.map(|(_, key)| key.as_bytes());
    retracted_in(back.marked(&keys, &back.marks.retracting))
}

/// [`retracted`] of the lines given, in order.
fn retracted_in<'l, 'a: 'l>(
    lines: impl Iterator<Item = &'l Line<'a>>,
) -> Result<BTreeSet<Vec<u8>>, Failure> {
    let mut out = BTreeSet::new();
    for line in lines {
        let obj = line.object(NAME)?;
        for (kind, key) in RETRACTING {
            let Some(list) = obj.get(key) else {
                continue;
            };
            if obj.get("type").and_then(Value::as_str) != Some(kind) {
                continue;
            }
            let bad = || {
                Failure::at(
                    line.at,
                    Problem::Key {
                        what: "a Claude Code entry",
                        key,
                        must: "an array of strings",
                    },
                )
            };
            for uuid in list.as_array().ok_or_else(bad)? {
                let uuid = uuid.as_str().ok_or_else(bad)?.as_bytes();
                out.insert(uuid.get(..UUID_STEM).unwrap_or(uuid).to_vec());
            }
        }
    }
    Ok(out)
}

/// True for a message (any entry but a system one) whose uuid a refusal retracted.
fn is_retracted(e: &Entry<'_>, retracted: &BTreeSet<Vec<u8>>) -> bool {
    let uuid = e.uuid.as_bytes();
    e.kind() != "system" && retracted.contains(uuid.get(..UUID_STEM).unwrap_or(uuid))
}

/// The entries of the responses, along `order`, that Claude Code abandoned for a retry:
/// a model response that another response (another message id) follows with no user
/// entry between, or with only entries holding tool results between and the other
/// response made by another model (`message.model`), those entries with it.
///
/// When Claude Code 2.1.197 gives up a response it has begun to record (the model
/// refused and it retries on the fallback model; the server fell back to another model
/// mid-stream; a stream it retries without streaming; an error that moves it on to the
/// next model of its chain), it stops sending that response and asks for a new one to
/// the same request, and yields a `tombstone` for each of the response's messages and
/// for each result of its calls. The main conversation takes the message out of the file
/// (unless the file is over 50 MB and the line is not among its last 64 KB, or the write
/// fails); a subagent's recorder never does, and writes no `model_refusal_fallback` entry
/// nor `supersedesUuids` there (read from its binary; run against a mock whose
/// `claude-fable-5` wrote the rule in a subagent and refused: the subagent's file kept
/// the refused message, its `stop_reason` null, as the parent of the retry's first
/// entry, and the retry's request on the fallback model did not hold it). Every such
/// response is followed on the chain by the retry's, with no user entry between; a
/// response the model finished is followed by a user entry (its calls' results, the next
/// prompt) before any other response.
///
/// Unless the response made calls that ran before it was given up: Claude Code runs
/// each call as soon as the model has written it, while the response is still coming,
/// and writes its result as soon as it is done, so a retry may follow the results of the
/// calls of the response it replaces, just as the model's next response follows them
/// (run against the same mock, the refused reply writing the rule and `echo probe`
/// before it refused: the subagent's file kept the reply, the call and its result, the
/// retry's first entry the child of the result, and the retry's request held none of
/// them). Those retries cannot be told from the next response by the chain; one on
/// another model can be told by that in a subagent's file, where nothing else names
/// it. So in a subagent's file a response that the results of its calls and then a
/// response of another model follow is taken as abandoned, with those results. That
/// leaves out, too, a response that was sent when the request after its results fell
/// back before anything of the refused reply was written (or a model switched for plan
/// mode): a rule only it holds is blocked, and comes back as the reason.
///
/// Not in the main conversation's file: there the model also changes between two
/// requests of one turn with nothing given up (`opusplan` in plan mode moves from Opus to
/// Sonnet once the last response reports over 200,000 input tokens; run with
/// `--model 'opusplan[1m]'`: the Sonnet request held the Opus reply and its call's
/// result), and every response given up there after its calls' results is named in
/// `retractedMessageUuids` (a refusal's system entry, or the banner of a fallback the
/// server made mid-stream), which [`retracted`] reads (read from its binary).
///
/// A retry on the same model after such results cannot be told apart by the file. No
/// stream retry leads there: Claude Code falls back to a request without streaming, retries the stream, or
/// moves on along its model chain only while the stream has yielded nothing but thinking
/// (read from its binary; run against a mock that wrote the rule and `echo probe` in a
/// subagent and then closed the stream, reset it, or sent an `overloaded_error` event:
/// each time the next request held the reply and the result). A refusal does, when the
/// fallback model is the model that refused: that takes a model that may refuse
/// (`claude-fable-*`, a name ending in `-eap`, the one `ANTHROPIC_DEFAULT_FABLE_MODEL`
/// names) which is also the fallback (an Opus model, or the one
/// `ANTHROPIC_DEFAULT_OPUS_MODEL` names); run with `--model claude-opus-4-8-eap` and
/// `ANTHROPIC_DEFAULT_OPUS_MODEL=claude-opus-4-8-eap`, the subagent's file (RF-3) is
/// RF-2's with one model throughout, and the retry's request held neither the reply nor
/// the result. So where `fallback` (Claude Code's environment, which a hook runs in; see
/// [`RefusalFallback`]) makes a model its own fallback, a response on it in a subagent's
/// file that follows the results of an earlier one on it is
/// [`Problem::OwnRefusalFallback`]: the gate cannot tell what the subagent sees. Where
/// it does not, such a response is the model's next one, and what it follows counts.
///
/// A response is also given up when the model ended it for a tool call (`stop_reason`
/// `tool_use`) that Claude Code could not parse, and Claude Code retries it (once) the
/// clean way: with its `tengu_malformed_tool_use_clean_retry` flag on (a remote flag,
/// off by default, read from the feature fetch or the `cachedGrowthBookFeatures` cache
/// in `~/.claude.json`; off whatever they say with `DISABLE_GROWTHBOOK`, with any of
/// `DISABLE_TELEMETRY`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` and `DO_NOT_TRACK`,
/// or, unless `CLAUDE_CODE_PROVIDER_MANAGED_BY_HOST` is set, with a provider other than
/// Anthropic's own API), it gives the response up as above and writes an `isMeta` user
/// entry, [`CLEAN_RETRY`], before it asks again with the request the response answered
/// and that prompt. So a response that this prompt follows, with only the response's own
/// entries between, is abandoned, in any file: a subagent's keeps the response as the
/// prompt's parent, and the main conversation's does where taking it out failed (run
/// against a mock whose reply wrote the rule and ended so, with the flag on in the
/// cache: the main conversation's file no longer held the reply, the prompt naming it
/// as its parent; the subagent's file kept it; neither retry's request held it). With
/// the flag off, Claude Code keeps the response, writes "Your tool call was malformed
/// and could not be parsed. Please retry." and sends both: that response counts. The
/// prompt is matched on its exact text and `isMeta` (read from the 2.1.197 binary), so
/// a user who types it takes nothing out of view; it would over-block only where a build
/// writes that prompt and still sends the response, which 2.1.197 never does.
///
/// Entries with no message id are not told apart (see [`pieces`]); those never sent (an
/// API error's notice) and those Claude Code writes in the model's name (`model`
/// `<synthetic>`, such as `No response requested.`) are no retry and are passed over.
fn abandoned(
    back: &Backward<'_, '_>,
    order: &[usize],
    fallback: &RefusalFallback,
) -> Result<BTreeSet<usize>, Failure> {
    let mut out = BTreeSet::new();
    // The entries of the response read last, and those holding results that followed it,
    // while no other user entry has.
    let mut open: Vec<usize> = Vec::new();
    let mut open_id: Option<&str> = None;
    let mut open_model: Option<&str> = None;
    // True once results have followed it.
    let mut answered = false;
    for &i in order {
        let Some(e) = back.get(i) else { continue };
        match e.kind() {
            // Only the response's own entries stand between it and the prompt: a given-up
            // response made no call Claude Code could parse, so no result follows it.
            "user" if is_clean_retry(e) => {
                if !answered {
                    out.extend(open.drain(..));
                }
                open.clear();
                (open_id, open_model, answered) = (None, None, false);
            }
            "user" if !open.is_empty() && blocks(e).any(|b| kind_of(b) == Some("tool_result")) => {
                open.push(i);
                answered = true;
            }
            "user" => {
                open.clear();
                (open_id, open_model, answered) = (None, None, false);
            }
            "assistant" if !e.is_never_sent() && !is_synthetic(e) => {
                let (id, model) = (message_id(e), model_of(e));
                if let (Some(id), Some(before)) = (id, open_id)
                    && id != before
                {
                    let other_model = matches!((model, open_model), (Some(m), Some(b)) if m != b);
                    if !answered || (other_model && back.subagent) {
                        out.extend(open.drain(..));
                    } else if back.subagent
                        && let Some(variable) = model.and_then(|m| fallback.own(m))
                    {
                        // The model's next response, or a retry on the model that
                        // refused: the file does not say which.
                        return Err(Failure::at(e.at, Problem::OwnRefusalFallback(variable)));
                    }
                    open.clear();
                    (open_id, open_model, answered) = (None, None, false);
                }
                open.push(i);
                open_id = id.or(open_id);
                open_model = model.or(open_model);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The `isMeta` prompt Claude Code 2.1.197 writes when it gives up a response whose tool
/// call it could not parse, to ask again without it (see [`abandoned`]).
const CLEAN_RETRY: &str =
    "The previous response failed to produce a valid tool call. Please retry the tool call now.";

/// True for Claude Code's [`CLEAN_RETRY`] prompt: a user entry marked `isMeta` whose
/// content is that text, as a string or as its one text block.
fn is_clean_retry(e: &Entry<'_>) -> bool {
    if e.kind() != "user" || e.obj.get("isMeta") != Some(&Value::Bool(true)) {
        return false;
    }
    match e.obj.get("message").and_then(|m| m.get("content")) {
        Some(Value::String(s)) => s == CLEAN_RETRY,
        Some(Value::Array(items)) => {
            matches!(items.as_slice(), [item]
                if item.get("type").and_then(Value::as_str) == Some("text")
                    && item.get("text").and_then(Value::as_str) == Some(CLEAN_RETRY))
        }
        _ => false,
    }
}

/// What Claude Code's environment says of its refusal fallback: the model, if any, that
/// is its own fallback (see [`abandoned`]), and the variable that makes it so.
///
/// Claude Code 2.1.197 (read from its binary) retries a refused response on a fallback
/// model unless `CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK` is true (`1`, `true`, `yes` or
/// `on`, in any case, blanks around). A model may refuse when its name is a Fable model
/// (`claude-fable-*`), ends in `-eap` (before any `[1m]`), or is the one
/// `ANTHROPIC_DEFAULT_FABLE_MODEL` names; its fallback is the Opus model
/// `ANTHROPIC_DEFAULT_OPUS_MODEL` names, or, when that is not set, the catalog's default
/// Opus model (`claude-opus-4-8`, `claude-opus-4-7` or a provider's name for one, none of
/// which may refuse by its name). So a model is its own fallback when
/// `ANTHROPIC_DEFAULT_OPUS_MODEL` names it and it ends in `-eap` or is the one
/// `ANTHROPIC_DEFAULT_FABLE_MODEL` names, or when only `ANTHROPIC_DEFAULT_FABLE_MODEL` is
/// set and names an Opus model (a name holding `claude-opus`: taken as the default Opus
/// model, which it may be, in a provider's name for it). Names compare without blanks
/// around, case or `[1m]`. A hook gets Claude Code's environment, the `env` of its
/// settings included (2.1.197 copies that into its own environment before it runs any
/// hook). Not followed: the settings' `modelOverrides`, which can make the default Opus
/// model any name, and the `availableModels` allowlist, which can send the fallback to
/// another Opus model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefusalFallback {
    /// The model that is its own refusal fallback, as [`same_model`] compares names, and
    /// the variable that names it.
    own: Option<(String, &'static str)>,
}

impl RefusalFallback {
    /// Read from an environment (`env` gives a variable's value, `None` when unset).
    pub fn of(env: impl Fn(&str) -> Option<String>) -> RefusalFallback {
        let set = |key: &str| env(key).filter(|v| !v.trim().is_empty());
        let off = env("CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK").is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        });
        if off {
            return RefusalFallback::default();
        }
        let fable = set("ANTHROPIC_DEFAULT_FABLE_MODEL").map(|v| same_model(&v));
        let own = match set("ANTHROPIC_DEFAULT_OPUS_MODEL") {
            Some(opus) => {
                let eap = is_eap(&opus);
                let opus = same_model(&opus);
                (eap || fable.as_ref() == Some(&opus))
                    .then_some((opus, "ANTHROPIC_DEFAULT_OPUS_MODEL"))
            }
            None => fable
                .filter(|f| f.contains("claude-opus"))
                .map(|f| (f, "ANTHROPIC_DEFAULT_FABLE_MODEL")),
        };
        RefusalFallback { own }
    }

    /// The variable that makes `model` its own refusal fallback, if it is.
    fn own(&self, model: &str) -> Option<&'static str> {
        self.own
            .as_ref()
            .filter(|(own, _)| *own == same_model(model))
            .map(|&(_, variable)| variable)
    }

    /// The variable that makes a model its own refusal fallback, if one does.
    pub fn variable(&self) -> Option<&'static str> {
        self.own.as_ref().map(|&(_, variable)| variable)
    }
}

/// A model's name as Claude Code's refusal fallback compares it, loosely: without blanks
/// around, `[1m]` or case.
fn same_model(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace("[1m]", "")
}

/// True for a name that ends in `-eap`, before any `[`, in any case (Claude Code's
/// `/-eap($|\[)/i`).
fn is_eap(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    name.ends_with("-eap") || name.contains("-eap[")
}

/// The model an assistant entry names (`message.model`).
fn model_of<'e>(e: &'e Entry<'_>) -> Option<&'e str> {
    e.obj
        .get("message")
        .and_then(|m| m.get("model"))
        .and_then(Value::as_str)
}

/// True for a message Claude Code writes in the model's name, not the model's
/// (`message.model` `<synthetic>`).
fn is_synthetic(e: &Entry<'_>) -> bool {
    model_of(e) == Some("<synthetic>")
}

/// How far back Claude Code's loader looks for the entry to go on from when an entry's
/// `parentUuid` names no entry of the file (2.1.197, read from its binary: 5,000 ms).
const BRIDGE_MS: i64 = 5000;

/// The entry the chain goes on from when the parent of entry `orphan` is not in the file,
/// or `None` when it ends there.
///
/// Claude Code 2.1.197 writes no `REPL` call and no result of one (for a user outside
/// Anthropic it takes them out as it writes the file), so the entry after either names a
/// parent that is not there; the calls a script made are written as calls of their own
/// when it ends (their results empty). As it rebuilds the conversation from the file (a
/// resumed session), Claude Code goes on from the entry, not yet on the chain and on the
/// same side of a subagent's chain, whose `timestamp` is the nearest at or before the
/// orphan's, at most [`BRIDGE_MS`] before it (the first in the file of equals); with none,
/// the chain ends (run against a mock with `CLAUDE_CODE_REPL=1`: a script that ran 7 s
/// left the resumed request without the user's first prompt). The session that ran the
/// script has the `REPL` call and its result in memory instead, after the same entries.
/// So the chain goes on only from the entry Claude Code's loader takes that is also the
/// one written just before the orphan (progress entries aside), where the `REPL` call
/// stood: anything else (the entries disagree, a time that does not read as Claude Code
/// writes it) ends the chain at the orphan, which keeps fewer entries in view, never more.
/// `clock` holds the entries' times.
fn bridge(
    back: &Backward<'_, '_>,
    clock: &Clock,
    orphan: usize,
    seen: &BTreeSet<usize>,
) -> Option<usize> {
    let o = back.get(orphan)?;
    let side = is_sidechain(&o.obj);
    let at = timestamp(o)?;
    if !clock.all_timed {
        return None;
    }
    // Entries are numbered from the newest: the one written before the orphan is the
    // next one up that is a message, an attachment or a system entry.
    let before = (orphan + 1..back.entries.len())
        .find(|&i| back.get(i).is_some_and(|e| e.kind() != "progress"))?;
    // The nearest in time at or before the orphan's; of equals, the first in the file.
    let upto = clock.sorted.partition_point(|&(t, _)| t <= at);
    let taken = clock
        .sorted
        .get(..upto)?
        .iter()
        .rev()
        .take_while(|&&(t, _)| at - t <= BRIDGE_MS)
        .map(|&(_, i)| i)
        .find(|i| {
            !seen.contains(i) && back.get(*i).is_some_and(|e| is_sidechain(&e.obj) == side)
        })?;
    (taken == before).then_some(taken)
}

/// The entries Claude Code's loader holds (each uuid once, as its newest line; progress
/// entries aside), by time: oldest first, and of equal times the last in the file first
/// (entries are numbered from the newest).
struct Clock {
    sorted: Vec<(i64, usize)>,
    /// Every one of them has a time that reads as Claude Code writes it.
    all_timed: bool,
}

impl Clock {
    fn of(back: &Backward<'_, '_>) -> Clock {
        let mut sorted = Vec::new();
        let mut all_timed = true;
        for (i, e) in back.entries.iter().enumerate() {
            if back.by_uuid.get(&e.uuid) != Some(&i) || e.kind() == "progress" {
                continue;
            }
            match timestamp(e) {
                Some(t) => sorted.push((t, i)),
                None => all_timed = false,
            }
        }
        sorted.sort_unstable();
        Clock { sorted, all_timed }
    }
}

/// An entry's `timestamp` in milliseconds, when it reads as Claude Code writes it
/// (`YYYY-MM-DDTHH:MM:SS.mmmZ`, JavaScript's `toISOString`).
fn timestamp(e: &Entry<'_>) -> Option<i64> {
    super::utc_millis(e.obj.get("timestamp")?.as_str()?)
}

/// The size over which Claude Code's loader reads a session file in part (2.1.197, read
/// from its binary: 5,242,880 bytes).
const PARTIAL_LOAD_BYTES: u64 = 5_242_880;

/// True when Claude Code, resuming this session from the file, reads every entry, so
/// that the results [`with_parallel_results`] puts back are sent after a resume too.
///
/// Over [`PARTIAL_LOAD_BYTES`], its loader reads only the chain walked back from the
/// file's newest message (and the entries outside the chain: titles, replacements),
/// unless the newest compaction in the file kept messages (`compactMetadata` names a
/// `preservedSegment` or `preservedMessages`) or that walk meets a parent that is not
/// there. A result off the chain is then not read, and the resumed session drops the
/// call it answers with it (run against a mock: a session resumed at 5.6 MB no longer
/// sent the rule an off-chain result held, nor its call; resumed at 4.2 MB, it did). The
/// file does not tell whether the session was resumed since that result was written, so
/// over that size such results are put back only after a compaction that kept messages,
/// the root of `root`'s chain and the newest boundary in the lines read (a missing parent
/// is not taken as leave to): at worst a rule only such a result holds is blocked, and
/// comes back as the reason. The file's size is where the window ends.
fn loads_every_entry(
    window: Window<'_>,
    back: &Backward<'_, '_>,
    root: Option<&Entry<'_>>,
) -> Result<bool, Failure> {
    let size = window.offset.saturating_add(window.tail.len() as u64);
    if size <= PARTIAL_LOAD_BYTES {
        return Ok(true);
    }
    let Some(root) = root.filter(|e| e.is_boundary()) else {
        return Ok(false);
    };
    // The newest compaction boundary in the lines read, a subagent's too: Claude Code's
    // loader takes every line that says so. Every line after the root's has been read,
    // the root's too: the newest boundary among them is noted. With none noted, the one
    // looked for is older than the root, where the lines not read are searched (for a
    // line there that is not JSON).
    let Some(newest) = back.marks.boundary else {
        let unread = back.lines.len().saturating_sub(back.read);
        let finder = memchr::memmem::Finder::new(BOUNDARY);
        for line in back
            .lines
            .get(..unread)
            .unwrap_or_default()
            .iter()
            .rev()
            .filter(|l| finder.find(l.bytes).is_some())
        {
            let obj = line.object(NAME)?;
            if is_boundary_object(&obj) {
                break;
            }
        }
        return Ok(false);
    };
    if newest != root.at {
        return Ok(false);
    }
    let kept = |key| {
        matches!(
            root.obj.get("compactMetadata").and_then(|m| m.get(key)),
            Some(Value::Object(_))
        )
    };
    Ok(kept("preservedSegment") || kept("preservedMessages"))
}

/// True for the object of a compaction boundary line (a subagent's too).
fn is_boundary_object(obj: &Map<'_>) -> bool {
    obj.get("type").and_then(Value::as_str) == Some("system")
        && obj.get("subtype").and_then(Value::as_str) == Some("compact_boundary")
}

/// The chain with the results of calls made beside others put back. When the model asks
/// for several calls at once, Claude Code writes each call as its own entry, one the
/// child of the other, and each result as a child of its own call's entry: the chain
/// runs through the last call's result only. Claude Code sends the model every result of
/// the response together (on resume too, where its loader reads every entry: see
/// [`loads_every_entry`]), so a result off the chain that answers a call on it counts,
/// where the chain goes on past a result of
/// the same response (a response still being answered sends nothing yet). Each goes
/// just before that result on the chain, in file order. Only results written before the
/// chain's last entry count: one written after the call's entry was not sent before the
/// model asked for the call.
fn with_parallel_results(back: &Backward<'_, '_>, chain: Vec<usize>) -> Vec<usize> {
    let on_chain: BTreeSet<usize> = chain.iter().copied().collect();
    // Entries are numbered from the newest: those numbered below the chain's last entry
    // were written after it.
    let newest = chain.last().copied().unwrap_or(0);
    // Each call on the chain: the response it is part of.
    let mut response_of: HashMap<&str, &str> = HashMap::new();
    // Each response answered on the chain: where its first result stands.
    let mut answered_at: HashMap<&str, usize> = HashMap::new();
    let mut answered: BTreeSet<&str> = BTreeSet::new();
    for (pos, e) in chain.iter().filter_map(|&i| back.get(i)).enumerate() {
        for b in blocks(e) {
            let id = |key| b.get(key).and_then(Value::as_str);
            match (b.get("type").and_then(Value::as_str), e.kind()) {
                (Some("tool_use"), "assistant") => {
                    if let (Some(call), Some(response)) = (id("id"), message_id(e)) {
                        response_of.insert(call, response);
                    }
                }
                (Some("tool_result"), "user") => {
                    if let Some(call) = id("tool_use_id") {
                        answered.insert(call);
                        if let Some(&response) = response_of.get(call) {
                            answered_at.entry(response).or_insert(pos);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let mut put_back: Vec<(usize, u64, usize)> = Vec::new();
    for (i, e) in back.entries.iter().enumerate().skip(newest) {
        let canonical = back.by_uuid.get(&e.uuid) == Some(&i);
        let parent_on_chain = e
            .parent
            .as_ref()
            .and_then(|p| back.by_uuid.get(p))
            .is_some_and(|p| on_chain.contains(p));
        if !canonical || on_chain.contains(&i) || e.kind() != "user" || !parent_on_chain {
            continue;
        }
        let calls: Vec<Option<&str>> = blocks(e)
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("tool_result") => b.get("tool_use_id").and_then(Value::as_str),
                _ => None,
            })
            .collect();
        let mut responses = calls.iter().map(|call| {
            call.filter(|c| !answered.contains(c))
                .and_then(|c| response_of.get(c))
                .and_then(|r| answered_at.get(r))
        });
        let first = responses.next().flatten();
        if let Some(&pos) = first
            && responses.all(|r| r == Some(&pos))
        {
            put_back.push((pos, e.at, i));
        }
    }
    if put_back.is_empty() {
        return chain;
    }
    put_back.sort_unstable();
    let mut out = Vec::with_capacity(chain.len() + put_back.len());
    let mut extra = put_back.into_iter().peekable();
    for (pos, i) in chain.into_iter().enumerate() {
        while let Some((_, _, j)) = extra.next_if(|&(p, _, _)| p == pos) {
            out.push(j);
        }
        out.push(i);
    }
    out
}

/// The uuids a boundary's `compactMetadata.preservedMessages.uuids` lists (none when it
/// lists none).
fn preserved_uuids(boundary: &Entry) -> Result<Vec<String>, Failure> {
    let bad = || {
        Failure::at(
            boundary.at,
            Problem::Key {
                what: "a compaction boundary",
                key: "compactMetadata.preservedMessages.uuids",
                must: "an array of strings",
            },
        )
    };
    let Some(meta) = boundary.obj.get("compactMetadata") else {
        return Ok(Vec::new());
    };
    let Some(preserved) = meta.get("preservedMessages") else {
        return Ok(Vec::new());
    };
    match preserved.get("uuids") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(bad))
            .collect(),
        Some(_) => Err(bad()),
    }
}

/// The strings the chain sends, in order. A tool call with no result yet is pending, and
/// so is the one the hook asks about: their arguments are not context.
fn pieces(
    entries: &[&Entry],
    compaction: Option<u64>,
    call: Option<&str>,
    hint: Option<Range<usize>>,
    replaced: BTreeSet<String>,
) -> Result<Live, Failure> {
    let mut answered = BTreeSet::new();
    let mut call_seen = false;
    // The tool results a microcompaction cleared, or the context hint may have (see
    // below), or that are sent as a preview: the model is sent something else for them,
    // not their content.
    let mut cleared = replaced;
    for e in entries {
        cleared.extend(cleared_results(e)?);
        if edited_by_the_api(e) {
            return Err(Failure::at(e.at, Problem::ContextEdited));
        }
        for block in blocks(e) {
            match block.get("type").and_then(Value::as_str) {
                Some("tool_result") => {
                    if let Some(Value::String(id)) = block.get("tool_use_id") {
                        answered.insert(id.to_string());
                    }
                }
                Some("tool_use") => {
                    if let (Some(Value::String(id)), Some(c)) = (block.get("id"), call) {
                        call_seen |= id == c;
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(preserved) = hint {
        cleared.extend(hint_clearable(entries, preserved, &answered, call));
    }
    // The model's response that holds a pending call is what the model is sending, not
    // what it was sent: none of its blocks (text, other calls) is context yet. Claude
    // Code writes each block of a response as its own entry, under the same message id.
    let holds_pending = |e: &Entry| {
        blocks(e).any(|b| {
            b.get("type").and_then(Value::as_str) == Some("tool_use")
                && b.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| call == Some(id) || !answered.contains(id))
        })
    };
    let responding: BTreeSet<&str> = entries
        .iter()
        .filter(|e| holds_pending(e))
        .filter_map(|e| message_id(e))
        .collect();
    // An assistant entry without a message id cannot be told apart by it: it is part of
    // the response when it stands in the same run of model entries (up to the nearest
    // user entry) as an entry that holds a pending call.
    let mut unnamed = BTreeSet::new();
    for (i, e) in entries.iter().enumerate() {
        if !holds_pending(e) {
            continue;
        }
        let in_run = |j: &usize| entries.get(*j).is_some_and(|e| e.kind() != "user");
        let start = (0..i).rev().take_while(in_run).last().unwrap_or(i);
        let end = (i..entries.len()).take_while(in_run).last().unwrap_or(i);
        unnamed.extend((start..=end).filter(|&j| {
            entries
                .get(j)
                .is_some_and(|e| e.kind() == "assistant" && message_id(e).is_none())
        }));
    }
    let being_made = |i: usize, e: &Entry| {
        e.kind() == "assistant"
            && (message_id(e).is_some_and(|id| responding.contains(id)) || unnamed.contains(&i))
    };
    // The calls of that response: Claude Code runs them one after another and writes
    // each result as it comes, so the result of one made before (or beside) the pending
    // call may be on file while the hook runs. The model was not sent it.
    let beside: BTreeSet<&str> = entries
        .iter()
        .enumerate()
        .filter(|&(i, e)| being_made(i, e))
        .flat_map(|(_, e)| blocks(e))
        .filter(|b| kind_of(b) == Some("tool_use"))
        .filter_map(|b| b.get("id")?.as_str())
        .collect();
    // The context the call was asked in ends with the response that holds it: when the
    // newest response is being made (the call named is in it; without one, the call
    // judged is taken to be), what was written after it (a message the user typed while
    // the hook runs, say) was not sent before the model made it.
    let end = entries
        .iter()
        .enumerate()
        .rfind(|(_, e)| e.kind() == "assistant" && !e.is_never_sent())
        .filter(|&(i, e)| being_made(i, e))
        .map_or(entries.len(), |(i, _)| i + 1);
    let mut out = Vec::new();
    let mut pairing = Pairing::new(entries, cleared, beside);
    // What comes after it is still read, so that an entry the gate cannot read is an
    // error wherever it stands.
    let mut after = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let out = if i < end { &mut out } else { &mut after };
        let unsent = pairing.step(e);
        let role = match e.kind() {
            _ if e.is_never_sent() => continue,
            "user" if e.is_summary() => Role::Summary,
            "user" => Role::User,
            "assistant" if being_made(i, e) => continue,
            "assistant" => Role::Assistant,
            _ => continue,
        };
        let content = e.obj.get("message").and_then(|m| m.get("content"));
        match content {
            Some(Value::String(s)) => out.push(Piece {
                role,
                text: s.shared(),
                at: e.at,
            }),
            Some(Value::Array(items)) => {
                for (j, item) in items.iter().enumerate() {
                    let unsent = unsent.contains(&j) || is_repl_script_block(item);
                    block(out, role, e.at, item, &answered, unsent, call)?;
                }
            }
            _ => {
                return Err(Failure::at(
                    e.at,
                    Problem::Key {
                        what: "a Claude Code message",
                        key: "message.content",
                        must: "a string or an array",
                    },
                ));
            }
        }
    }
    Ok(Live {
        harness: Harness::ClaudeCode,
        pieces: out,
        compaction,
        call_seen,
        terminal: None,
        responding: None,
        instructions_read: None,
    })
}

/// What Claude Code's repair of the pairing of calls and results
/// (ensureToolResultPairing) leaves out of each request, read entry by entry along the
/// chain. It works on messages as Claude Code merges them: the entries of one response
/// (one message id) written one after another, with the results of its calls between
/// them, are one message, and so are the user entries that follow it.
#[derive(Default)]
struct Pairing<'e> {
    /// The tool results a microcompaction cleared, or sent as a preview: the model is
    /// sent something else for them.
    cleared: BTreeSet<String>,
    /// The calls of the response being made: their results were not sent when the model
    /// made it.
    beside: BTreeSet<&'e str>,
    /// The server tool calls (a web search, say) each response holds the result of, by
    /// the response's number.
    server_answered: BTreeSet<(usize, &'e str)>,
    /// The number of the response the entries read follow.
    response: usize,
    /// Its message id, when it has one.
    id: Option<&'e str>,
    /// True while only its entries and tool results have followed it (an entry of the
    /// same response then joins it).
    open: bool,
    /// The ids of its calls: a result for any other call is dropped as an orphan.
    calls: BTreeSet<&'e str>,
    /// The calls whose result has followed it: a second result for one is dropped.
    results: BTreeSet<&'e str>,
    /// Every call sent so far: a later call with the same id is dropped.
    asked: BTreeSet<&'e str>,
}

impl<'e> Pairing<'e> {
    fn new(
        entries: &[&'e Entry<'_>],
        cleared: BTreeSet<String>,
        beside: BTreeSet<&'e str>,
    ) -> Pairing<'e> {
        let mut pass = Pairing::default();
        let mut server_answered = BTreeSet::new();
        for e in entries {
            if pass.enter(e) {
                let answered = blocks(e).filter_map(|b| b.get("tool_use_id")?.as_str());
                server_answered.extend(answered.map(|id| (pass.response, id)));
            }
        }
        Pairing {
            cleared,
            beside,
            server_answered,
            ..Pairing::default()
        }
    }

    /// Moves past `e`, starting a new response when it is a model entry that does not
    /// join the open one; true for a model entry (one that is sent).
    fn enter(&mut self, e: &'e Entry<'_>) -> bool {
        if e.is_never_sent() {
            return false;
        }
        match e.kind() {
            "assistant" => {
                let id = message_id(e);
                if !(self.open && id.is_some() && id == self.id) {
                    self.response += 1;
                    self.calls.clear();
                    self.results.clear();
                }
                self.id = id;
                self.open = true;
                true
            }
            "user" => {
                self.open &= blocks(e).any(|b| kind_of(b) == Some("tool_result"));
                false
            }
            _ => false,
        }
    }

    /// Moves past `e`: the positions of the blocks of its content that are not sent.
    fn step(&mut self, e: &'e Entry<'_>) -> BTreeSet<usize> {
        let model = self.enter(e);
        let Some(Value::Array(items)) = e.obj.get("message").and_then(|m| m.get("content")) else {
            return BTreeSet::new();
        };
        let mut unsent = BTreeSet::new();
        for (j, item) in items.iter().enumerate() {
            let Value::Object(b) = item else { continue };
            let sent = match (model, kind_of(b)) {
                (true, Some("tool_use")) => match b.get("id").and_then(Value::as_str) {
                    Some(id) if self.asked.insert(id) => {
                        self.calls.insert(id);
                        true
                    }
                    _ => false,
                },
                (true, Some("server_tool_use")) => b
                    .get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| self.server_answered.contains(&(self.response, id))),
                (false, Some("tool_result")) => b
                    .get("tool_use_id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| {
                        !self.cleared.contains(id)
                            && !self.beside.contains(id)
                            && self.calls.contains(id)
                            && self.results.insert(id)
                    }),
                _ => true,
            };
            if !sent {
                unsent.insert(j);
            }
        }
        unsent
    }
}

/// A content block's `type`.
fn kind_of<'e>(b: &'e Map<'_>) -> Option<&'e str> {
    b.get("type").and_then(Value::as_str)
}

/// The tools whose old results Claude Code's context hint clears (2.1.197, read from its
/// binary).
const HINT_CLEARED_TOOLS: [&str; 9] = [
    "Read",
    "Bash",
    "PowerShell",
    "Grep",
    "Glob",
    "WebSearch",
    "WebFetch",
    "Edit",
    "Write",
];

/// How many of the newest calls of those tools the context hint leaves their results.
const HINT_KEEPS: usize = 5;

/// True for an entry written by `claude -p` (`entrypoint` `sdk-cli`), whose requests never
/// carry the context hint.
fn is_print_mode(e: &Entry) -> bool {
    e.obj.get("entrypoint").and_then(Value::as_str) == Some("sdk-cli")
}

/// The calls whose results Claude Code's context hint may have cleared: every call of
/// [`HINT_CLEARED_TOOLS`] but the [`HINT_KEEPS`] newest of those the request that asked
/// for the pending call held (those with a result, the call judged left out). In an interactive session, when
/// the model's API turns down a request that carries the hint (a feature flag Claude
/// Code fetches, on by the user's account, not by a setting), Claude Code replaces the
/// results of those calls, in its memory only, with a file reference or `[Old tool
/// result content cleared]`, and sends that from then on; the transcript keeps the
/// results whole and records no trace of it. Which calls it cleared depends on when that
/// happened, but never the newest: a result among the newest now was among the newest
/// then too. So none of the others counts (a rule only they hold is blocked, and its text
/// comes back as the reason). Nor does any of the calls of the entries a compaction
/// preserved (`preserved`, their place in `entries`): a compaction keeps them as Claude
/// Code holds them, cleared or not, and one that summarised the messages after them (a
/// partial compaction `from` a message keeps those before it) took away the newer calls
/// that made them old.
fn hint_clearable(
    entries: &[&Entry],
    preserved: Range<usize>,
    answered: &BTreeSet<String>,
    call: Option<&str>,
) -> BTreeSet<String> {
    let calls: Vec<(usize, &str)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind() == "assistant")
        .flat_map(|(i, e)| blocks(e).map(move |b| (i, b)))
        .filter(|(_, b)| kind_of(b) == Some("tool_use"))
        .filter(|(_, b)| {
            b.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| HINT_CLEARED_TOOLS.contains(&n))
        })
        .filter_map(|(i, b)| b.get("id").and_then(Value::as_str).map(|id| (i, id)))
        .filter(|&(_, id)| call != Some(id) && answered.contains(id))
        .collect();
    let old = calls.len().saturating_sub(HINT_KEEPS);
    calls
        .into_iter()
        .enumerate()
        .filter(|&(n, (i, _))| n < old || preserved.contains(&i))
        .map(|(_, (_, id))| id.to_string())
        .collect()
}

/// The tool calls whose results a `microcompact_boundary` entry cleared (none for any
/// other entry).
fn cleared_results(e: &Entry) -> Result<Vec<String>, Failure> {
    if e.kind() != "system"
        || !matches!(e.obj.get("subtype"), Some(Value::String(s)) if s == "microcompact_boundary")
    {
        return Ok(Vec::new());
    }
    let ids = e
        .obj
        .get("microcompactMetadata")
        .and_then(|m| m.get("compactedToolIds"))
        .and_then(Value::as_array)
        .and_then(|ids| {
            ids.iter()
                .map(|id| id.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()
        });
    ids.ok_or_else(|| {
        Failure::at(
            e.at,
            Problem::Key {
                what: "a microcompact boundary",
                key: "microcompactMetadata.compactedToolIds",
                must: "an array of strings",
            },
        )
    })
}

/// True for a response whose request the model's API edited (`context_management`'s
/// `applied_edits`) in a way that may have taken text out of it: anything but clearing
/// thinking, which the gate does not read.
fn edited_by_the_api(e: &Entry) -> bool {
    let edits = e
        .obj
        .get("message")
        .and_then(|m| m.get("context_management"))
        .and_then(|c| c.get("applied_edits"));
    match edits {
        None | Some(Value::Null) => false,
        Some(Value::Array(edits)) => edits.iter().any(|edit| {
            !edit
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.starts_with("clear_thinking"))
        }),
        Some(_) => true,
    }
}

/// The id of the model response an assistant entry is part of.
fn message_id<'e>(e: &'e Entry<'_>) -> Option<&'e str> {
    e.obj
        .get("message")
        .and_then(|m| m.get("id"))
        .and_then(Value::as_str)
}

fn blocks<'e>(e: &'e Entry<'_>) -> impl Iterator<Item = &'e Map<'e>> {
    e.obj
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

/// One content block of a message; `unsent` when Claude Code leaves it out of the
/// request (see [`Pairing`]).
fn block(
    out: &mut Vec<Piece>,
    role: Role,
    at: u64,
    item: &Value,
    answered: &BTreeSet<String>,
    unsent: bool,
    call: Option<&str>,
) -> Result<(), Failure> {
    let unknown = || Failure::unknown(at, "a message block", Harness::ClaudeCode);
    let Value::Object(b) = item else {
        return Err(unknown());
    };
    let kind = b.get("type").and_then(Value::as_str).ok_or_else(unknown)?;
    match kind {
        "text" => out.push(Piece {
            role,
            text: shared_at(b, "text", at, "a text block")?,
            at,
        }),
        "tool_use" | "server_tool_use" => {
            let id = string_at(b, "id", at, "a tool_use block")?;
            let pending = call == Some(id) || (kind == "tool_use" && !answered.contains(id));
            if !pending
                && !unsent
                && let Some(input) = b.get("input")
            {
                push_strings(out, Role::Call, at, &sent_input(b, input));
            }
        }
        "tool_result" => match b.get("content") {
            _ if unsent => {}
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => out.push(Piece {
                role: Role::Result,
                text: s.shared(),
                at,
            }),
            Some(Value::Array(parts)) => {
                for part in parts {
                    result_part(out, at, part)?;
                }
            }
            Some(_) => {
                return Err(Failure::at(
                    at,
                    Problem::Key {
                        what: "a tool_result block",
                        key: "content",
                        must: "a string or an array",
                    },
                ));
            }
        },
        // Sent, but not as text the gate can read: the model's own reasoning, images,
        // documents, search results.
        "thinking" | "redacted_thinking" | "image" | "document" | "web_search_tool_result" => {}
        _ => return Err(unknown()),
    }
    Ok(())
}

/// The keys of a tool call's input that Claude Code writes to the transcript but takes out
/// of every request (its normalizeToolInputForAPI, read from the 2.1.197 binary):
/// `ExitPlanMode`'s `plan` and `planFilePath`, which it adds as it records the call (the
/// plan file's text as it stands then, which the model may never have been sent), and
/// `Edit`'s `old_string`, `new_string` and `replace_all` beside an `edits` list. By name,
/// whatever tools the session has: leaving them out never puts a text in view.
fn unsent_keys(name: &str, input: &Map<'_>) -> &'static [&'static str] {
    match name {
        "ExitPlanMode" => &["plan", "planFilePath"],
        "Edit" if input.contains_key("edits") => &["old_string", "new_string", "replace_all"],
        _ => &[],
    }
}

/// A tool call's input as Claude Code sends it (see [`unsent_keys`]): the input itself
/// unless it holds a key Claude Code takes out, which only then is copied without it.
fn sent_input<'i, 'v>(block: &Map<'_>, input: &'i Value<'v>) -> Cow<'i, Value<'v>> {
    let name = block
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Value::Object(fields) = input else {
        return Cow::Borrowed(input);
    };
    let unsent = unsent_keys(name, fields);
    if !unsent.iter().any(|key| fields.contains_key(key)) {
        return Cow::Borrowed(input);
    }
    let mut fields = fields.clone();
    for key in unsent {
        fields.remove(key);
    }
    Cow::Owned(Value::Object(fields))
}

fn result_part(out: &mut Vec<Piece>, at: u64, part: &Value) -> Result<(), Failure> {
    match part.get("type").and_then(Value::as_str) {
        Some("text") => {
            let Some(Value::Object(p)) = Some(part) else {
                return Ok(());
            };
            out.push(Piece {
                role: Role::Result,
                text: shared_at(p, "text", at, "a tool result's text part")?,
                at,
            });
            Ok(())
        }
        Some("image" | "document" | "tool_reference") => Ok(()),
        _ => Err(Failure::unknown(
            at,
            "a tool result part",
            Harness::ClaudeCode,
        )),
    }
}

/// Every compaction boundary of a whole file whose first line is `head`.
pub(super) fn compactions(head: &[u8], lines: &[Line<'_>]) -> Result<Vec<u64>, Failure> {
    let subagent = is_subagents_file(head);
    let mut out = Vec::new();
    for line in lines {
        if let Some(e) = entry(line, subagent)?
            && e.is_boundary()
        {
            out.push(e.at);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`retracted`] as it was before [`Marks`]: every line searched for the keys.
    fn retracted_plain(lines: &[Line<'_>]) -> Result<BTreeSet<Vec<u8>>, Failure> {
        let finders = RETRACTING.map(|(_, key)| memchr::memmem::Finder::new(key.as_bytes()));
        retracted_in(
            lines
                .iter()
                .filter(|l| finders.iter().any(|f| f.find(l.bytes).is_some())),
        )
    }

    /// [`replaced_results`] as it was before [`Marks`].
    fn replaced_plain(lines: &[Line<'_>]) -> Result<BTreeSet<String>, Failure> {
        let finder = memchr::memmem::Finder::new(REPLACEMENT);
        replaced_in(lines.iter().filter(|l| finder.find(l.bytes).is_some()))
    }

    /// [`loads_every_entry`] as it was before [`Marks`], past the size it reads every
    /// entry below.
    fn loads_plain(lines: &[Line<'_>], root: &Entry<'_>) -> Result<bool, Failure> {
        let finder = memchr::memmem::Finder::new(BOUNDARY);
        for line in lines
            .iter()
            .rev()
            .filter(|l| finder.find(l.bytes).is_some())
        {
            let obj = line.object(NAME)?;
            if !is_boundary_object(&obj) {
                continue;
            }
            if line.at != root.at {
                return Ok(false);
            }
            let kept = |key| {
                matches!(
                    root.obj.get("compactMetadata").and_then(|m| m.get(key)),
                    Some(Value::Object(_))
                )
            };
            return Ok(kept("preservedSegment") || kept("preservedMessages"));
        }
        Ok(false)
    }

    /// A line of one of the shapes the passes over every line tell apart: by its bytes
    /// (a key written with an escape, a key's name in a message's text), by its object
    /// (an entry of another type with the key, a malformed list) and by neither (a
    /// line that is not JSON).
    fn line_of(kind: u8, n: usize) -> String {
        let parent = match n {
            0 => "null".to_string(),
            _ => format!("\"u-{:04}\"", n - 1),
        };
        let head = format!(
            r#""parentUuid":{parent},"uuid":"u-{n:04}","timestamp":"2026-01-01T00:00:0{}.000Z""#,
            n % 10
        );
        let message = |role: &str, text: &str| {
            format!(
                r#""message":{{"role":"{role}","id":"m{n}","content":[{{"type":"text","text":"{text}"}}]}}"#
            )
        };
        match kind {
            0 => format!(r#"{{"type":"user",{head},{}}}"#, message("user", "hello")),
            1 => format!(
                r#"{{"type":"assistant",{head},{}}}"#,
                message("assistant", "hi")
            ),
            2 => format!(
                r#"{{"type":"content-replacement","replacements":[{{"kind":"tool-result","toolUseId":"t{n}"}}]}}"#
            ),
            3 => r#"{"type":"content-replacement","replacements":"none"}"#.to_string(),
            4 => format!(
                r#"{{"type":"content\u002dreplacement","replacements":[{{"kind":"tool-result","toolUseId":"e{n}"}}]}}"#
            ),
            5 => format!(
                r#"{{"type":"system","subtype":"model_refusal_fallback",{head},"retractedMessageUuids":["r-{n:04}-0123456789abcdefghij"]}}"#
            ),
            6 => format!(
                r#"{{"type":"system","subtype":"model_refusal_fallback",{head},"retractedMessageUuids":[{n}]}}"#
            ),
            7 => format!(
                r#"{{"type":"assistant",{head},"supersedesUuids":["s-{n:04}"],{}}}"#,
                message("assistant", "again")
            ),
            8 => format!(
                r#"{{"type":"user",{head},"retractedMessageUuids":["x-{n}"],{}}}"#,
                message("user", "mine")
            ),
            9 => format!(
                r#"{{"type":"user",{head},{}}}"#,
                message(
                    "user",
                    "retractedMessageUuids supersedesUuids content-replacement compact_boundary"
                )
            ),
            10 => format!(
                r#"{{"type":"system","subtype":"compact_boundary",{head},"compactMetadata":{{"preservedSegment":{{}}}}}}"#
            ),
            11 => format!(r#"{{"type":"system","subtype":"compact_boundary",{head}}}"#),
            12 => format!(
                r#"{{"type":"system","subtype":"compact_boundary","isSidechain":true,{head}}}"#
            ),
            13 => format!(
                r#"{{"type":"system","subtype":"compact\u005fboundary",{head},"compactMetadata":{{"preservedMessages":{{}}}}}}"#
            ),
            14 => format!(
                r#"{{"type":"system","subtype":"model_refusal_fallback",{head},"retracted\u004dessageUuids":["q-{n:04}"]}}"#
            ),
            15 => format!(
                r#"{{"type":"system","subtype":"model_refusal_fallback",{head},"retracted\u004dessageUuids":["p-{n:04}"],"supersedesUuids":[]}}"#
            ),
            _ => r#"{"type":"system","subtype":"compact_boundary","retractedMessageUuids":["#
                .to_string(),
        }
    }

    proptest::proptest! {
        /// However many lines have been read, the passes over every line take the lines
        /// read from what was noted as they were read, and give what searching every
        /// line gives: the same lists, the same error at the same line.
        #[test]
        fn the_lines_noted_as_read_stand_for_searching_every_line(
            kinds in proptest::collection::vec(0u8..17, 0..14),
            subagent in proptest::bool::ANY,
        ) {
            let texts: Vec<String> = kinds.iter().enumerate().map(|(n, &k)| line_of(k, n)).collect();
            let mut at = 0u64;
            let lines: Vec<Line<'_>> = texts
                .iter()
                .map(|t| {
                    let line = Line { at, bytes: t.as_bytes() };
                    at += t.len() as u64 + 1;
                    line
                })
                .collect();
            // Past the size over which Claude Code reads a file in part.
            let window = Window { head: b"", tail: b"", offset: PARTIAL_LOAD_BYTES + 1 };
            for k in 0..=lines.len() {
                let mut back = Backward {
                    lines: &lines,
                    subagent,
                    read: 0,
                    entries: Vec::new(),
                    by_uuid: HashMap::new(),
                    marks: Marks::default(),
                };
                let mut stepped = true;
                for _ in 0..k {
                    stepped &= back.step().is_ok();
                }
                if !stepped {
                    break;
                }
                proptest::prop_assert_eq!(retracted(&back), retracted_plain(&lines));
                proptest::prop_assert_eq!(replaced_results(&back), replaced_plain(&lines));
                for root in back.entries.iter().filter(|e| e.is_boundary()) {
                    proptest::prop_assert_eq!(
                        loads_every_entry(window, &back, Some(root)),
                        loads_plain(&lines, root)
                    );
                }
            }
        }
    }
}
