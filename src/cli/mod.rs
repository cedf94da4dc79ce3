//! The command line: parse flags, read files, call the library, write the report, map
//! the outcome to an exit code ([`Exit`]). The only module that does I/O, besides the
//! loader's reads of an input (in `input`). Here: the entry point and the
//! reading, loading and writing every command shares; the flags in `args`, the commands
//! in `commands`, `sweep` and `hooks`, `init` and `doctor` in their own. Every command
//! loads its input through the library's one loader entry ([`input::load_check`] and its
//! siblings), which decides how to read it.

use std::io::{self, Read, Write};
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use crate::action::Action;
use crate::compaction::{Retention, RetentionError};
use crate::error::{
    FlagProblem, GeminiDoubt, InputError, InputProblem, IoReason, ReadProblem, Reason,
    TranscriptRead,
};
use crate::gate::{self, CheckOptions, Exit, Severity, Verdict};
use crate::hook::{self, Adapter, Failure, Harness, Setup};
use crate::input::{self, FlagText, io_reason};
use crate::pin::PinOptions;
use crate::precheck::{self, DEFAULT_MAX_CALLS, PrecheckOptions};
use crate::predicate::DEFAULT_MAX_DEPTH;
use crate::record::Limits;
use crate::report::{self, Format, Mode, Report};
use crate::text::{clean, clean_brief, is_plain_digits};

mod args;
mod commands;
mod context_files;
mod doctor;
mod hooks;
mod init;
mod output;
mod sweep;
mod transcript;
mod validate;

pub use args::Cli;

use args::*;
use commands::*;
use doctor::run_doctor;
use hooks::*;
use init::run_init;
use output::*;
use sweep::*;
use transcript::*;
use validate::*;

/// Runs the command line and returns the process exit code. A panic is a bug, never a
/// verdict: it is reported on one line and exits 2 (ERROR; 1 for the PreCompact hook,
/// where 2 would block the compaction), never 101.
pub fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        warn(&format!(
            "omission-gate: internal error (a bug; please report it): {}",
            clean(&info.to_string())
        ));
    }));
    std::panic::catch_unwind(run).unwrap_or_else(|_| {
        let exit = if is_precompact_hook(std::env::args_os()) {
            Exit::NonBlocking
        } else {
            Exit::Error
        };
        ExitCode::from(exit.code())
    })
}

/// Writes one line to stderr. Unlike `eprintln!`, a stderr that cannot be written (a
/// full disk, a closed pipe) is ignored instead of panicking: the exit code still says
/// what happened.
fn warn(line: &str) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

fn run() -> ExitCode {
    ExitCode::from(run_command().code())
}

/// Parses the command line and runs the command.
fn run_command() -> Exit {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version are successes, except in a tool hook: a harness reads exit
            // 0 as "run the call", so a hook command that asks for help (or the version)
            // denies instead. Every usage error is exit 2, except for the PreCompact hook,
            // where exit 2 would block the compaction.
            let precompact = is_precompact_hook(std::env::args_os());
            if !e.use_stderr() {
                let _ = e.print();
                if precompact || !is_tool_hook(std::env::args_os()) {
                    return Exit::Success;
                }
                warn(
                    "omission-gate: the hook printed its help or version instead of judging \
                     this call, so the call is denied: remove `--help`, `-h`, `--version` or \
                     `-V` from the hook command",
                );
                return Exit::Error;
            }
            warn(&usage_error_line(e));
            return if precompact {
                Exit::NonBlocking
            } else {
                Exit::Error
            };
        }
    };
    let limits = cli.limits.limits();
    // A command whose stdout is closed would print its report nowhere and exit with the
    // verdict: a PASS no one can read or verify. A tool hook's reply is its stdout
    // whatever --quiet says; PreCompact never blocks.
    let hook = matches!(cli.command, Command::Hook(_));
    if (hook || !cli.quiet) && stdout_lost() {
        if hook && is_precompact_hook(std::env::args_os()) {
            warn("omission-gate: stdout is closed, so the hook's reply would be lost");
            return Exit::NonBlocking;
        }
        warn(if hook {
            "omission-gate: stdout is closed (or /dev/null open for reading and writing), so \
             the hook's reply would be lost and the call is denied: give the hook a stdout"
        } else {
            "omission-gate: stdout is closed (or /dev/null open for reading and writing), so \
             the report would be lost: give it somewhere to go (`>FILE`, `>/dev/null`), or \
             pass --quiet to keep only the exit code"
        });
        return Exit::Error;
    }
    // A hook's stdout is its reply: --quiet never silences it (`run_hook` writes it
    // itself).
    let out = Output { quiet: cli.quiet };
    match cli.command {
        Command::Check(args) => run_check(&args, limits, out),
        Command::Validate(args) => run_validate(&args, limits, out),
        Command::Pin(args) => run_pin(&args, limits, out),
        Command::Sweep(args) => run_sweep(&args, limits, out),
        Command::Verify(args) => run_verify(&args.report, limits, out),
        Command::Hook(args) => run_hook(args, limits),
        Command::Context(args) => run_context(&args, limits, out),
        Command::Init(args) => run_init(&args, out),
        Command::Doctor(args) => run_doctor(&args, limits, out),
        Command::Completions { shell } => run_completions(shell, out),
        Command::Man => run_man(out),
    }
}

/// A usage error as one line (SPEC 9): clap's message and its tips, without the usage
/// block. The usage is taken out of the error's context, the way clap offers; what clap
/// still puts on lines of their own (a tip, `For more information`) is joined with `; `,
/// and with a space what completes the line before it (the first item of the list after
/// a line that ends in `:`, a `[possible values: ...]`). A command line without a
/// command, for which clap would print the whole help, names the commands instead.
fn usage_error_line(mut e: clap::Error) -> String {
    use clap::error::{ContextKind, ErrorKind};
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let cli = Cli::command();
        let names: Vec<&str> = cli
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name())
            .collect();
        return format!(
            "error: a command is required: one of {}; For more information, try '--help'.",
            names.join(", ")
        );
    }
    e.remove(ContextKind::Usage);
    let text = e.render().to_string();
    let mut line = String::new();
    for part in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !line.is_empty() {
            let completes = line.ends_with(':') || part.starts_with('[');
            line.push_str(if completes { " " } else { "; " });
        }
        line.push_str(part);
    }
    line
}

/// True for a command line that may be a tool hook (`hook` among its words, not after
/// `help`), however malformed: the words are not parsed, so that a hook command clap
/// cannot read still denies.
fn is_tool_hook(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    let args: Vec<std::ffi::OsString> = args.skip(1).collect();
    args.first().is_none_or(|a| a != "help") && args.iter().any(|a| a == "hook")
}

/// True for a command line that asks for the PreCompact hook, however malformed (even
/// with arguments that are not UTF-8). One that also names a tool hook's harness is not
/// taken for it: `claude-code-precompact` there may be a flag's value (`--store
/// claude-code-precompact`), and a tool hook must deny, never exit as PreCompact does.
fn is_precompact_hook(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    let args: Vec<std::ffi::OsString> = args.skip(1).collect();
    let tool_hook = |a: &std::ffi::OsString| Harness::ALL.iter().any(|h| a == h.name());
    args.first().is_some_and(|a| a == "hook")
        && args.iter().any(|a| a == "claude-code-precompact")
        && !args.iter().any(tool_hook)
}

/// Reads a path, or stdin for `-`, refusing more than the `--max-input-bytes` limit: a
/// regular file by its size before reading, anything else (a pipe, a device) after
/// reading one byte past the limit, so that memory stays bounded either way.
fn read_source(path: &str, limits: Limits) -> Result<Vec<u8>, InputError> {
    read_as(path, "input", limits)
}

/// [`read_source`] for a file that plays `role` (`input`, `kept file`...): messages name
/// the role, so that a missing `--kept @FILE` is not taken for a missing input.
fn read_as(path: &str, role: &str, limits: Limits) -> Result<Vec<u8>, InputError> {
    input::read(path, role, limits)
}

/// The well-known paths of standard input itself. A pid's own `/proc/PID/fd/0` is
/// checked besides these.
const STDIN_PATHS: [&str; 4] = [
    "/dev/stdin",
    "/dev/fd/0",
    "/proc/self/fd/0",
    "/proc/thread-self/fd/0",
];

/// True when reading `path` reads standard input: `-`, one of [`STDIN_PATHS`] or this
/// process's `/proc/PID/fd/0`, or (where standard input is a pipe, a terminal or a socket,
/// which a second read finds empty or waiting) any path to that same pipe, terminal or
/// socket: a symlink to it, a named pipe it reads.
fn names_stdin(path: &str) -> bool {
    path == "-"
        || STDIN_PATHS.contains(&path)
        || path == format!("/proc/{}/fd/0", std::process::id())
        || is_stdin_stream(path)
}

#[cfg(unix)]
fn is_stdin_stream(path: &str) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let Ok(fd) = io::stdin().as_fd().try_clone_to_owned() else {
        return false;
    };
    let Ok(stdin) = std::fs::File::from(fd).metadata() else {
        return false;
    };
    // A regular file opened again by its path starts from its beginning.
    !stdin.is_file()
        && std::fs::metadata(path).is_ok_and(|m| m.dev() == stdin.dev() && m.ino() == stdin.ino())
}

#[cfg(not(unix))]
fn is_stdin_stream(_path: &str) -> bool {
    false
}

/// Refuses a command that would read standard input more than once (SPEC 2): a second
/// read finds it empty, which must never pass for an empty kept list or tool list.
/// `reads` are what the command reads, in order: (what it is, as messages name it; its
/// path). See [`input_read`] and [`flag_read`].
fn stdin_once(reads: impl IntoIterator<Item = (String, String)>) -> Result<(), InputError> {
    let mut first: Option<String> = None;
    for (what, path) in reads {
        if !names_stdin(&path) {
            continue;
        }
        match &first {
            None => first = Some(what),
            Some(before) => {
                let problem = FlagProblem::StdinTwice(before.clone());
                return Err(InputError::invalid("stdin", what, problem));
            }
        }
    }
    Ok(())
}

/// What reading a path reads, for [`stdin_once`]: `INPUT `-``, `--store `FILE``.
fn input_read(what: &str, path: &str) -> Option<(String, String)> {
    Some((format!("{what} `{}`", clean(path)), path.to_string()))
}

/// What a flag's value reads, for [`stdin_once`]: the path after `@`, if any.
fn flag_read(flag: &str, value: Option<&str>) -> Option<(String, String)> {
    let path = value?.strip_prefix('@')?;
    Some((format!("{flag} `@{}`", clean(path)), path.to_string()))
}

fn origin_name(path: &str) -> &str {
    if path == "-" { "<stdin>" } else { path }
}

/// `--kept`'s value as [`flag_text`] reads it; a plain list that names no id is refused
/// (see [`input::kept_names_an_id`]).
fn kept_text(value: &str, limits: Limits) -> Result<FlagText, InputError> {
    let flag = flag_text("--kept", value, limits)?;
    input::kept_names_an_id(&flag.0, &flag.1, flag.2)?;
    Ok(flag)
}

/// `--tools`'s value as [`flag_text`] reads it; a plain value that names a file, or
/// that looks like a file's name, is refused (see [`names_a_file`] and
/// [`looks_like_a_file`]).
fn tools_text(value: &str, limits: Limits) -> Result<FlagText, InputError> {
    names_a_file("--tools", value)?;
    hook_tools_text(value, None, limits)
}

/// `hook`'s `--tools` value as [`flag_text`] reads it; a plain value that looks like a
/// file's name is refused (see [`looks_like_a_file`]). Whether a file of that name is
/// there is not asked: the hook runs in the session's current directory (Claude Code's
/// moves with the agent's `cd`), so the answer would change the hook's verdict from one
/// directory to the next (`--tools Bash` refused where a file `Bash` happens to be).
/// `harness`: the harness whose calls the hook judges, when it is one that never sends
/// a tool name with a `.` (see [`dotted_name`]).
fn hook_tools_text(
    value: &str,
    harness: Option<Harness>,
    limits: Limits,
) -> Result<FlagText, InputError> {
    looks_like_a_file(value)?;
    if let Some(harness) = harness {
        dotted_name(harness, value)?;
    }
    flag_text("--tools", value, limits)
}

/// Refuses a plain `--tools` value of a hook of Claude Code or Codex one of whose names
/// has a `.` (and is neither of MCP form nor a pattern of another syntax, which the hook
/// reads otherwise): those harnesses name their tools with ASCII letters, digits, `_` and
/// `-` only (the API's rule for a tool's name; each writes `_` for any other character
/// of an MCP tool's), so no call they send is of that name, and the value was meant as a
/// file (`--tools tools.list` guarded a tool `tools.list`, and every call of a tool no
/// record names passed unjudged). Gemini CLI keeps an MCP tool's `.`; its hook reads the
/// name as written.
fn dotted_name(harness: Harness, value: &str) -> Result<(), InputError> {
    if harness == Harness::GeminiCli || !plain(value) {
        return Ok(());
    }
    let dotted = value.split(',').map(str::trim).find(|name| {
        name.contains('.')
            && !name.to_ascii_lowercase().starts_with("mcp_")
            && crate::harness::pattern_globs(harness, name).is_none()
    });
    let Some(name) = dotted else {
        return Ok(());
    };
    let problem = InputProblem::DottedTool {
        harness: harness.title(),
        name: name.to_string(),
    };
    Err(InputError::invalid("--tools", "", problem))
}

/// `--action`'s value as [`flag_text`] reads it; a plain value that names a file is
/// refused (see [`names_a_file`]).
fn action_text(value: &str, limits: Limits) -> Result<FlagText, InputError> {
    names_a_file("--action", value)?;
    flag_text("--action", value, limits)
}

/// Whether `value` is given plainly: no `@`, and not JSON.
fn plain(value: &str) -> bool {
    !value.starts_with('@') && !value.trim_start().starts_with(['[', '{'])
}

/// Refuses a plain `--tools` or `--action` value that names a file: the user meant
/// `@FILE`. Read as written, `--tools tools.json` guarded a tool named `tools.json`, so
/// precheck passed and pin pinned nothing; `--action action.json` was refused with a
/// hint to write the file's name as the tool.
fn names_a_file(flag: &'static str, value: &str) -> Result<(), InputError> {
    if !plain(value) || !std::path::Path::new(value).is_file() {
        return Ok(());
    }
    let problem = InputProblem::FlagIsAFile {
        flag,
        value: value.to_string(),
        seen: None,
    };
    Err(InputError::invalid(flag, "", problem))
}

/// The endings of a file's name that no tool's name has: a plain `--tools` name ending
/// so names a file. (`.list` and `.text` are left out: `notes.list` is a tool's name as
/// `refunds.create` is.)
const FILE_ENDINGS: [&str; 10] = [
    ".json", ".jsonl", ".ndjson", ".txt", ".yaml", ".yml", ".toml", ".csv", ".tsv", ".ini",
];

/// Refuses a plain `--tools` value one of whose names looks like a file's, whether or
/// not a file of that name is there: a `/` or `\` (no harness sends a tool name with
/// one), or an ending of [`FILE_ENDINGS`] (a tool's name may have a `.`, as
/// `refunds.create` does) on a name not of MCP form (Gemini CLI keeps an MCP tool's `.`:
/// `mcp_drive_files.list` is a tool's name). Read as written, `--tools tools.json`
/// guards one tool named `tools.json`; a tool of such a name is given as a JSON array.
fn looks_like_a_file(value: &str) -> Result<(), InputError> {
    if !plain(value) {
        return Ok(());
    }
    let file = value.split(',').map(str::trim).find(|name| {
        let lower = name.to_ascii_lowercase();
        let ending = FILE_ENDINGS.iter().any(|e| lower.ends_with(e));
        name.contains(['/', '\\']) || ending && !lower.starts_with("mcp_")
    });
    let Some(file) = file else {
        return Ok(());
    };
    let problem = InputProblem::FlagIsAFile {
        flag: "--tools",
        value: value.to_string(),
        seen: Some(file.to_string()),
    };
    Err(InputError::invalid("--tools", "", problem))
}

/// A flag value: inline text, or the contents of `@FILE`. Returns (origin, text, from_file).
fn flag_text(
    flag: &str,
    value: &str,
    limits: Limits,
) -> Result<(String, String, bool), InputError> {
    match value.strip_prefix('@') {
        Some(path) => {
            let role = format!("{} file", flag.trim_start_matches('-'));
            let bytes = read_as(path, &role, limits)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| InputError::invalid(path, &role, ReadProblem::NotUtf8))?;
            Ok((path.to_string(), text, true))
        }
        None => Ok((flag.to_string(), value.to_string(), false)),
    }
}

/// Writes bytes to stdout, whatever `--quiet` says: a hook's reply, and what
/// [`Output::emit`] writes when not quiet. A report that cannot be written is exit 2,
/// never 0.
fn emit(bytes: &[u8]) -> Result<(), io::Error> {
    let mut out = io::stdout().lock();
    out.write_all(&shown(bytes))?;
    out.flush()
}

/// The library's request for the input at `path` (already read when `bytes` is given:
/// stdin), with the `--kept` flag as read.
fn request<'a>(
    path: &'a str,
    bytes: Option<&'a [u8]>,
    retention: Retention,
    kept: Option<&'a FlagText>,
    limits: Limits,
) -> input::Request<'a> {
    input::Request {
        origin: origin_name(path),
        source: bytes.map_or(input::Source::Path(path), input::Source::Bytes),
        kept,
        retention,
        limits,
    }
}

#[cfg(test)]
mod tests;
