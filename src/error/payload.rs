//! What the hook adapters (`hook`) refuse in a harness's hook payload.

use thiserror::Error;

use crate::text::clean;

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
    #[error(
        "`{}` is not `{expected}`, the event the {adapter} adapter answers{}",
        clean(.found),
        other_event_fix(.found, .expected, .adapter)
    )]
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
    /// A tool name that is blank or has white space at an end: no harness names a tool
    /// so, and a rule written as the harness names it would not bind it.
    #[error(
        "`{}` has white space at an end (or nothing else): no harness names a tool that way, and no rule could bind the call (pass the payload on as the harness sent it)",
        clean(.0)
    )]
    NotToolName(String),
    /// A tool name with a control character: no harness names a tool so.
    #[error(
        "`{}` has a control character: no harness names a tool that way, and no rule could bind the call (pass the payload on as the harness sent it)",
        clean(.0)
    )]
    ControlInToolName(String),
    /// A Codex payload that names the shell tool as the model calls it: Codex sends its
    /// shell calls to hooks as `Bash`, so this payload comes from a Codex the gate does
    /// not know, whose shell calls rules written for `Bash` would not bind.
    #[error(
        "`{}` is the model's name for Codex's shell, which Codex 0.171.0 sends to hooks as `Bash`: this Codex sends its shell calls otherwise, and rules written for `Bash` would not bind them: run a Codex the gate was tested with (0.171.0) until it knows this one",
        clean(.0)
    )]
    CodexShellName(String),
    /// A key that must hold an object.
    #[error("must be an object")]
    NotAnObject,
    /// `--kept-from transcript`, and the payload names no transcript.
    #[error(
        "missing or empty: --kept-from transcript judges against the session transcript the harness names there, and this session has none (run the harness with session recording on, not `codex exec --ephemeral`, or use --kept)"
    )]
    NoTranscript,
    /// `--kept-from transcript`, and the payload names no call.
    #[error(
        "missing, empty or not a string: --kept-from transcript waits until the transcript records the call it names, and without it cannot tell a fresh transcript from a stale one (pass the payload on as the harness sent it, or use --kept)"
    )]
    NoCall,
    /// `--kept-from transcript`, and a Gemini CLI payload names no session.
    #[error(
        "missing, empty or not a string: --kept-from transcript judges against the transcript of the session that makes the call, and without it cannot tell that the file is that session's (pass the payload on as the harness sent it, or use --kept)"
    )]
    NoSession,
    /// `--kept-from transcript`, and a Gemini CLI payload names no start directory.
    #[error(
        "missing, empty or not a string: --kept-from transcript checks the settings Gemini CLI read in the directory it started in, some of which change what it sends the model (pass the payload on as the harness sent it, or use --kept)"
    )]
    NoCwd,
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
    /// Codex: a shell command that applies a patch (`apply_patch` with a patch), which
    /// Codex applies with no `apply_patch` call for the hook, in a store with rules on
    /// `apply_patch`, or with guarded tools that list it.
    #[error(
        "the command runs `apply_patch` with a patch, which Codex applies as a patch while the hook sees a `Bash` call, and the record store has rules on `apply_patch` calls (or on a name another harness gives it, `Write` or `Edit`), or the guarded tools list it: send the patch with the apply_patch tool, which the gate judges"
    )]
    ShellPatch,
    /// A number in the call's arguments that a double (as a tool reads JSON numbers, in
    /// JavaScript or Python) reads as another number: the gate compares the literal
    /// exactly, the tool runs with the double.
    #[error(
        "the number {} in the call's arguments reads as {double} in a double, as the tool may read it, and the gate compares it as written: make the call again with the number written as {double} (or as the value meant, in no more digits than a double holds)",
        clean(.literal)
    )]
    NotADouble {
        /// The number as the payload writes it.
        literal: String,
        /// What a double reads it as (`inf` when out of range).
        double: String,
    },
    /// Transcript mode, and the transcript was never read (a caller's slip).
    #[error("the transcript was not read")]
    TranscriptNotRead,
    /// No kept set to judge against (a caller's slip).
    #[error("no kept set was computed")]
    NoKeptSet,
}

/// How to fix a hook wired to the wrong adapter or event, after the message of
/// [`PayloadProblem::OtherEvent`]: another harness's pre-tool event names the adapter to
/// write; any other event, the event to wire the adapter under. Nothing for a pre-tool
/// event given to `claude-code-precompact`, whose denial says where each adapter goes.
fn other_event_fix(found: &str, expected: &str, adapter: &str) -> String {
    let pre_tool = ["PreToolUse", "BeforeTool"];
    match (found, adapter) {
        ("BeforeTool", "claude-code" | "codex") => {
            ": a `BeforeTool` payload is Gemini CLI's: write `omission-gate hook gemini-cli` in its hook command (`omission-gate init gemini-cli` writes it)".to_string()
        }
        ("PreToolUse", "gemini-cli") => {
            ": a `PreToolUse` payload is Claude Code's or Codex's: write `omission-gate hook claude-code` or `omission-gate hook codex` in its hook command (`omission-gate init claude-code` or `init codex` writes it)".to_string()
        }
        (found, "claude-code-precompact") if pre_tool.contains(&found) => String::new(),
        ("PreCompact", "claude-code") => {
            ": wire `omission-gate hook claude-code-precompact` under `PreCompact`, and this adapter under `PreToolUse` only (`omission-gate init claude-code` writes both)".to_string()
        }
        _ => format!(": wire this adapter under `{expected}` only"),
    }
}
