//! Codex's code mode: the model calls one tool, `exec`, whose input is JavaScript, and
//! the tools that JavaScript calls run the pre-tool hook as direct calls do, each with an
//! id of its own (`exec-<uuid>`) that no rollout line records (Codex 0.171.0,
//! `core/src/tools/code_mode/`). This module ties such a call to the recorded call the
//! model waits on while the cell that makes it runs, or says why it cannot; it reads
//! nothing else of the rollout.

use std::collections::{BTreeMap, BTreeSet};

use super::super::value::{Map, Value, parse_lenient};
use super::super::{Failure, Line, Problem, is_uuid, string_at};
use super::{answered_calls, call_id, is_output};

/// True for the id Codex gives a call made from code mode's JavaScript (the `exec` tool's):
/// `exec-` and a UUID of its own, which no rollout entry records (Codex 0.171.0,
/// `core/src/tools/code_mode/mod.rs`, `call_nested_tool`).
pub fn is_nested(id: &str) -> bool {
    id.strip_prefix("exec-").is_some_and(is_uuid)
}

/// The code cell whose JavaScript makes the call being judged, as the rollout records it.
pub(super) struct Cell {
    /// The recorded call the model is waiting on while the cell runs: the `exec` call
    /// that started it, or a `wait` call for it. The context ends before its response.
    pub(super) id: String,
    /// The `exec` call whose JavaScript the cell runs (of several `exec` calls of one
    /// response, which may each make the call, one whose JavaScript names `tty`).
    pub(super) exec: String,
    /// That JavaScript names `tty`, or loads a value (`load`) in a session where a cell
    /// stored one (`store`) and named `tty`: a command it starts may have a terminal (the
    /// hook's `tool_input` does not say).
    pub(super) may_ask_terminal: bool,
}

/// True for a model item of this type that calls code mode's tool of this name (`exec`,
/// `wait`), not a namespaced tool of the same name.
fn is_code_mode_call(m: &Map<'_>, kind: &str, name: &str) -> bool {
    m.get("type").and_then(Value::as_str) == Some(kind)
        && m.get("name").and_then(Value::as_str) == Some(name)
        && m.get("namespace").is_none()
}

/// The code cell that makes the call being judged: `None` when the rollout records none
/// running yet. Codex gives a call made from a cell's JavaScript an id of its own, so the
/// cell is known only when one alone can be running: the `exec` calls with no output
/// (all of one response) when no earlier cell may still run, or else the one cell that
/// yielded and has not been seen to end, while a `wait` call for it has no output. Any
/// other cell that may run beside it while the model waits (`exec` calls with no output
/// in two responses, a cell that yielded while an `exec` call runs or another cell is
/// waited on) is an error.
///
/// `earlier` is what the rollout records before the context starts (the lines before the
/// last compaction): a cell that yielded there may still run too.
pub(super) fn running_cell(
    earlier: &[(u64, Map<'_>, bool)],
    items: &[(u64, Map<'_>, bool)],
) -> Result<Option<Cell>, Failure> {
    let answered = answered_calls(items);
    let pending = |kind: &str, name: &str| -> Vec<usize> {
        items
            .iter()
            .enumerate()
            .filter(|(_, (_, m, _))| {
                is_code_mode_call(m, kind, name)
                    && call_id(m).is_some_and(|id| !answered.contains(id))
            })
            .map(|(i, _)| i)
            .collect()
    };
    let yielded = yielded_cells(earlier.iter().chain(items));
    // Code mode keeps values between cells (`store(key, value)`, `load(key)`): options
    // that ask for a terminal, stored by one cell, can be spread into a call by another
    // whose JavaScript does not name `tty`.
    let stored_tty = earlier.iter().chain(items).any(|(_, m, _)| {
        is_code_mode_call(m, "custom_tool_call", "exec")
            && m.get("input")
                .and_then(Value::as_str)
                .is_some_and(|s| s.contains("store") && s.contains("tty"))
    });
    let cell = |exec: &str, id: &str| {
        let source = items
            .iter()
            .find(|(_, m, _)| {
                is_code_mode_call(m, "custom_tool_call", "exec") && call_id(m) == Some(exec)
            })
            .and_then(|(_, m, _)| m.get("input").and_then(Value::as_str));
        Cell {
            id: id.to_string(),
            exec: exec.to_string(),
            may_ask_terminal: source
                .is_none_or(|s| s.contains("tty") || (stored_tty && s.contains("load"))),
        }
    };
    let execs = pending("custom_tool_call", "exec");
    if let Some((&newest, older)) = execs.split_last()
        && let Some((at, m, _)) = items.get(newest)
    {
        // The newest response: the model's output around the newest pending `exec`.
        let mut start = newest;
        while let Some(prev) = start.checked_sub(1)
            && items.get(prev).is_some_and(|(_, p, _)| is_output(p))
        {
            start = prev;
        }
        if older.iter().any(|&i| i < start) {
            return Err(Failure::at(*at, Problem::CodexExecAmbiguous));
        }
        if let Some(y) = yielded.values().next() {
            return Err(Failure::at(y.at, Problem::CodexCellRunning));
        }
        let id = string_at(m, "call_id", *at, "a custom_tool_call item")?;
        string_at(m, "input", *at, "a custom_tool_call item")?;
        // Any `exec` call of the response may make the call: each one's JavaScript counts.
        let tty = execs
            .iter()
            .filter_map(|&i| items.get(i).and_then(|(_, m, _)| call_id(m)))
            .map(|exec| cell(exec, id))
            .find(|c| c.may_ask_terminal);
        return Ok(Some(tty.unwrap_or_else(|| cell(id, id))));
    }
    let waited: BTreeSet<&str> = pending("function_call", "wait")
        .into_iter()
        .filter_map(|i| items.get(i))
        .filter_map(|(_, m, _)| call_id(m))
        .collect();
    let mut running = yielded.values();
    match (running.next(), running.next()) {
        // No call of the model's waits on a cell yet (a `wait` call may be written a
        // moment later), or no cell runs that could make the call.
        _ if waited.is_empty() => Ok(None),
        (None, _) => Ok(None),
        (Some(only), None) if only.waits.iter().any(|w| waited.contains(w.as_str())) => {
            let wait = only
                .waits
                .iter()
                .rev()
                .find(|w| waited.contains(w.as_str()));
            Ok(wait.map(|w| cell(&only.exec, w)))
        }
        (Some(y), _) => Err(Failure::at(y.at, Problem::CodexCellRunning)),
    }
}

/// What an `exec` or `wait` output says of a code cell, on its first line: `Script
/// running with cell ID <id>` while the cell runs on (it yielded: its JavaScript can
/// still make calls), `Script completed`, `Script failed` or `Script terminated` once it
/// ended (Codex 0.171.0, `core/src/tools/code_mode/mod.rs`, `format_script_status`).
const RUNNING: &str = "Script running with cell ID ";

/// False when no line of `lines` can tell of a cell that yielded: none holds the bytes of
/// [`RUNNING`]. Codex writes its rollout with serde_json, which escapes only quotes,
/// backslashes and control characters, so that status is in its line as written. The
/// lines before a compaction are parsed only when this is true: a long session's rollout
/// is then not read as JSON whole at each call its code cells make.
pub(super) fn may_have_yielded(lines: &[Line<'_>]) -> bool {
    let finder = memchr::memmem::Finder::new(RUNNING.as_bytes());
    lines.iter().any(|l| finder.find(l.bytes).is_some())
}

/// False when no line of `lines` can hold JavaScript that stores a value and names
/// `tty` (no line holds both words' bytes): what such a cell stores may ask a later
/// cell's command for a terminal, so the lines before a compaction are parsed when
/// this is true.
pub(super) fn may_have_stored_tty(lines: &[Line<'_>]) -> bool {
    let (store, tty) = (
        memchr::memmem::Finder::new("store"),
        memchr::memmem::Finder::new("tty"),
    );
    lines
        .iter()
        .any(|l| store.find(l.bytes).is_some() && tty.find(l.bytes).is_some())
}

/// A code cell that yielded and has not been seen to end.
struct Yielded {
    /// The line of the newest output that shows it running.
    at: u64,
    /// The `exec` call that started it.
    exec: String,
    /// The `wait` calls for it, oldest first.
    waits: Vec<String>,
}

/// The code cells that yielded (an `exec` or `wait` output says `Script running with
/// cell ID <id>`) and that no later `wait` output for them shows ended, by cell id.
fn yielded_cells<'m, 'a: 'm>(
    items: impl Iterator<Item = &'m (u64, Map<'a>, bool)>,
) -> BTreeMap<String, Yielded> {
    let mut execs = BTreeSet::new();
    let mut waits = BTreeMap::new();
    let mut running = BTreeMap::<String, Yielded>::new();
    for (at, m, _) in items {
        let Some(id) = call_id(m) else { continue };
        if is_code_mode_call(m, "custom_tool_call", "exec") {
            execs.insert(id.to_string());
            continue;
        }
        if is_code_mode_call(m, "function_call", "wait") {
            let args = m
                .get("arguments")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let cell = match parse_lenient(args) {
                Some(Value::Object(o)) => {
                    o.get("cell_id").and_then(Value::as_str).map(str::to_string)
                }
                _ => None,
            };
            if let Some(y) = cell.as_ref().and_then(|c| running.get_mut(c)) {
                y.waits.push(id.to_string());
            }
            waits.insert(id.to_string(), cell);
            continue;
        }
        if !matches!(
            m.get("type").and_then(Value::as_str),
            Some("function_call_output" | "custom_tool_call_output")
        ) {
            continue;
        }
        let status = first_text(m.get("output")).unwrap_or_default();
        let status = status.lines().next().unwrap_or_default();
        let waited = waits.get(id).cloned().flatten();
        if let Some(cell) = status.strip_prefix(RUNNING) {
            if execs.contains(id) {
                let exec = id.to_string();
                running.insert(
                    cell.to_string(),
                    Yielded {
                        at: *at,
                        exec,
                        waits: Vec::new(),
                    },
                );
            } else if let Some(y) = running.get_mut(cell).filter(|_| waited.is_some()) {
                y.at = *at;
            }
        } else if status.starts_with("Script ")
            && let Some(cell) = waited
        {
            running.remove(&cell);
        }
    }
    running
}

/// The first text of a tool output: the string, or its first content part's `text`.
fn first_text<'v>(output: Option<&'v Value<'_>>) -> Option<&'v str> {
    match output? {
        Value::String(s) => Some(s.as_ref()),
        Value::Array(parts) => parts.first()?.get("text")?.as_str(),
        Value::Object(o) => first_text(o.get("content")),
        _ => None,
    }
}
