//! What the CLI refuses: a transcript it cannot read fresh, flags that do not go together.

use std::path::PathBuf;

use thiserror::Error;

use super::IoReason;
use crate::text::clean;

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
    /// The transcript file is not there by the deadline. Either the session keeps none
    /// (Claude Code's `-p --no-session-persistence` names a file it never writes), or the
    /// harness writes it later than that: the gate cannot tell which, so both are named.
    #[error(
        "is not there after {ms} ms: either the session keeps no transcript (as with `claude -p --no-session-persistence`), and --kept-from transcript can then judge no call: run the harness without that flag, or give the hook --kept; or the harness writes it later than that: raise --timeout-ms"
    )]
    NotWritten {
        /// How long the reader waited, in milliseconds.
        ms: u128,
    },
    /// Codex: the call being judged is made from code mode's JavaScript, and no `exec`
    /// call without its output is in the transcript by the deadline.
    #[error(
        "the call being judged (`{}`) is made from code mode's JavaScript, and the transcript records no `exec` call still running after {ms} ms (a cell that yielded and runs on, or one whose `notify` output was recorded, is not tied to its calls): the gate cannot tell the context the call was made in; have it made from an `exec` call that runs it before it returns",
        clean(.call)
    )]
    ExecNotRecorded {
        /// The call's id.
        call: String,
        /// How long the reader waited, in milliseconds.
        ms: u128,
    },
    /// Claude Code: the call being judged is made from a `REPL` script, of which the
    /// session file holds nothing.
    #[error(
        "the call being judged (`{}`) is made from a script of Claude Code's REPL tool, and Claude Code does not write the REPL calls the model makes, nor their results, to its session file (it writes the script's calls only once the script has ended), so the file cannot tell what the model was sent: turn the REPL tool off (unset CLAUDE_CODE_REPL), or give the hook --kept instead of --kept-from transcript",
        clean(.0)
    )]
    ReplCall(String),
    /// Codex: the call being judged starts a command with a terminal, whose input Codex
    /// runs no hook for.
    #[error(
        "the call being judged (`{}`) starts a command with a terminal (`tty`), and Codex runs no hook for the input typed into it, so the gate cannot judge what will run: run the command without `tty`",
        clean(.0)
    )]
    Terminal(String),
    /// Codex: the call being judged is made from code mode's JavaScript, which names
    /// `tty`; the hook's `tool_input` does not say whether the call asks for a terminal.
    #[error(
        "the call being judged is made from code mode's JavaScript, and that `exec` call (`{}`) names `tty`: a command it starts may have a terminal, whose input Codex runs no hook for (and the hook's `tool_input` does not say whether it asked for one), so the gate cannot judge what will run: run the command without `tty`",
        clean(.0)
    )]
    ExecTerminal(String),
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
    /// Gemini CLI: the transcript is not the session's the payload names.
    #[error(
        "this is another session's transcript: its `sessionId` is not the hook payload's `session_id` (pass the payload on as the harness sent it)"
    )]
    OtherSession,
    /// Gemini CLI: a settings file turns on its context management (the key under
    /// `experimental`).
    #[error(
        "`experimental.{0}` is on: Gemini CLI then trims and summarises the history it sends the model without writing that to its session file, so the gate cannot tell what the model sees (turn it off to judge calls by the transcript, or use --kept)"
    )]
    ContextManaged(&'static str),
    /// Claude Code: `CLAUDE_CODE_EXTRA_BODY` gives `messages` or `system`, or asks the API
    /// to clear tool results (`context_management`): what the model is sent is not what
    /// the transcript records.
    #[error(
        "`CLAUDE_CODE_EXTRA_BODY` edits the context the model is sent (it gives `messages` or `system`, which stand in place of Claude Code's, or asks the API to clear tool results with `context_management`), and the transcript does not record what it took out, so the gate cannot tell what the model sees (take those keys out of it to judge calls by the transcript, or use --kept)"
    )]
    ExtraBodyEdits,
    /// Gemini CLI: a settings file gives `BeforeModel` a hook, which may rewrite the
    /// request sent the model.
    #[error(
        "`hooks.BeforeModel` holds a hook: Gemini CLI sends the model the request such a hook returns (any message's text replaced) without writing that to its session file, so the gate cannot tell what the model sees (remove it to judge calls by the transcript, or use --kept)"
    )]
    ModelHook,
    /// Gemini CLI: an installed extension gives `BeforeModel` a hook.
    #[error(
        "`hooks.BeforeModel` holds a hook: Gemini CLI runs an installed extension's hooks (one `extension-enablement.json` turns off too, when started with `gemini -e NAME`) and sends the model the request such a hook returns (any message's text replaced) without writing that to its session file, so the gate cannot tell what the model sees (uninstall the extension or remove the hook to judge calls by the transcript, or use --kept)"
    )]
    ExtensionModelHook,
    /// Gemini CLI: a hook's own `env` sets a variable that says where Gemini CLI's
    /// settings are, to a value the gate's environment may have from it.
    #[error(
        "a hook here sets `{0}` in its `env`, which Gemini CLI gives that hook's process but does not read its own settings by, so if that hook runs the gate, the gate cannot tell which settings and extensions Gemini CLI reads (a `BeforeModel` hook or context management there would go unseen): take `{0}` out of the hook's `env` (or use --kept)"
    )]
    HookEnvLocation(&'static str),
    /// Gemini CLI: a settings file that names a setting that may turn on its context
    /// management, and cannot be read as Gemini CLI reads it: why.
    #[error(
        "cannot be read as Gemini CLI reads it ({0}), and it names a setting that may change what Gemini CLI sends the model"
    )]
    Settings(String),
    /// Gemini CLI: neither `GEMINI_CLI_HOME` nor `HOME` is set, so the user's
    /// extensions folder cannot be found.
    #[error(
        "neither `GEMINI_CLI_HOME` nor `HOME` is set, so the gate cannot find the extensions Gemini CLI loads, whose hooks may change what it sends the model: set `HOME` or `GEMINI_CLI_HOME` for the hook as Gemini CLI sees it (or use --kept)"
    )]
    ExtensionsHome,
    /// Gemini CLI: a folder of installed extensions that cannot be listed: why.
    #[error(
        "the folder cannot be read ({0}), and an extension in it may bring a hook that changes what Gemini CLI sends the model: make the folder readable (or use --kept)"
    )]
    ExtensionsFolder(String),
    /// Gemini CLI: a linked extension whose `source` is not a string.
    #[error(
        "it says the extension is linked, and its `source` is not a string, so the gate cannot tell which folder Gemini CLI loads the extension (and its hooks, which may change what it sends the model) from: write `source` as the path of the folder the extension was linked from"
    )]
    LinkNotString,
    /// Gemini CLI: a linked extension whose `source` is a relative path, read against a
    /// directory the hook payload does not give.
    #[error(
        "it says the extension is linked, and its `source` is not an absolute path, and the hook payload gives no `cwd` to read it against, so the gate cannot tell which folder Gemini CLI loads the extension (and its hooks, which may change what it sends the model) from: write `source` as an absolute path"
    )]
    LinkRelative,
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
    /// `--kept` with a retention that computes the kept set itself: the retention.
    #[error(
        "--kept and --retention `{0}` both say what was kept: give one (--kept goes with --retention given)"
    )]
    KeptWithRetention(crate::compaction::Retention),
    /// `--context-file` without `--kept-from transcript`.
    #[error("a context file adds to a transcript's live context: it needs --kept-from transcript")]
    ContextWithoutTranscript,
    /// A `--context-file` that is the record store.
    #[error(
        "is the record store: the harness never sends it to the model, and as context it would put every record in view; name the instruction files the harness sends (CLAUDE.md, AGENTS.md, GEMINI.md)"
    )]
    ContextIsStore,
    /// A `--context-file` that is the transcript read.
    #[error(
        "is the session's transcript: it holds what a compaction dropped too, which the harness no longer sends, and as context it would put all of it in view; name the instruction files the harness sends (CLAUDE.md, AGENTS.md, GEMINI.md)"
    )]
    ContextIsTranscript,
    /// A `--context-file` that is no regular file: a pipe, standard input, a folder.
    #[error(
        "is not a regular file (a pipe, standard input, a device or a folder): the harness read its instruction files as files when it started, and a read now may not give what it read then; name the file itself (CLAUDE.md, AGENTS.md, GEMINI.md)"
    )]
    ContextNotFile,
    /// Standard input named twice: what read it first, as messages name it.
    #[error(
        "names standard input, already read for {0} (it is read once: put one of them in a file)"
    )]
    StdinTwice(String),
    /// A relative path flag in a Claude Code hook run outside the project: Claude Code
    /// runs hook commands in the session's current directory, which the agent moves.
    #[error(
        "is a relative path, and Claude Code runs this hook in the session's current directory `{cwd}`, not the project `{project}`, so it would name another file: write it as {instead} in the hook command"
    )]
    RelativeOutsideProject {
        /// The flag's value anchored at the project: `"$CLAUDE_PROJECT_DIR"/s.json`,
        /// `@"$CLAUDE_PROJECT_DIR"/tools.txt`.
        instead: String,
        /// The hook's working directory.
        cwd: String,
        /// `$CLAUDE_PROJECT_DIR`.
        project: String,
    },
}
