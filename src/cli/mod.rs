//! The command line: parse flags, read files, call the library, write the report, map
//! the verdict to an exit code. The only module that does I/O. Here: the entry point and
//! the reading, loading and writing every command shares; the flags in `args`, the
//! commands in `commands`, `sweep` and `hooks`, the lean loader's reads in `lean`.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::process::ExitCode;
use std::sync::OnceLock;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::action::{Action, Tool};
use crate::compaction::{Compaction, Retention};
use crate::document::Positional;
use crate::error::InputError;
use crate::gate::{self, CheckOptions, Severity, Verdict};
use crate::hook::{self, Adapter, Failure, Harness, Setup};
use crate::input::{self, Input, Purpose};
use crate::pin;
use crate::precheck::{self, DEFAULT_MAX_CALLS, PrecheckOptions};
use crate::predicate::DEFAULT_MAX_DEPTH;
use crate::record::Limits;
use crate::report::{self, Format, Mode, Report, clean, clean_brief};
use crate::stream::Fallback;

mod args;
mod commands;
mod hooks;
mod lean;
mod sweep;
mod transcript;

pub use args::Cli;

use args::*;
use commands::*;
use hooks::*;
use lean::*;
use sweep::*;
use transcript::*;

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
        ExitCode::from(if is_precompact_hook(std::env::args_os()) {
            1
        } else {
            2
        })
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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version are successes; every usage error is exit 2, except for the
            // PreCompact hook, where exit 2 would block the compaction.
            let _ = e.print();
            let usage = if is_precompact_hook(std::env::args_os()) {
                1
            } else {
                2
            };
            return ExitCode::from(if e.use_stderr() { usage } else { 0 });
        }
    };
    let _ = LIMITS.set(cli.limits.limits());
    let code = match cli.command {
        Command::Check(args) => run_check(&args),
        Command::Pin(args) => run_pin(&args),
        Command::Sweep(args) => run_sweep(&args),
        Command::Verify { report } => run_verify(&report),
        Command::Hook(args) => run_hook(args),
        Command::Context(args) => run_context(&args),
    };
    ExitCode::from(code)
}

/// True for a command line that asks for the PreCompact hook, however malformed (even
/// with arguments that are not UTF-8).
fn is_precompact_hook(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    let args: Vec<std::ffi::OsString> = args.skip(1).collect();
    args.first().is_some_and(|a| a == "hook") && args.iter().any(|a| a == "claude-code-precompact")
}

/// Reads a path, or stdin for `-`, refusing more than the `--max-input-bytes` limit: a
/// regular file by its size before reading, anything else (a pipe, a device) after
/// reading one byte past the limit, so that memory stays bounded either way.
fn read_source(path: &str) -> Result<Vec<u8>, InputError> {
    read_as(path, "input")
}

/// [`read_source`] for a file that plays `role` (`input`, `kept file`...): messages name
/// the role, so that a missing `--kept @FILE` is not taken for a missing input.
fn read_as(path: &str, role: &str) -> Result<Vec<u8>, InputError> {
    let limits = limits();
    let origin = origin_name(path);
    let cannot =
        |e: io::Error| InputError::at(origin, role, format!("cannot read: {}", io_reason(&e)));
    let cap = limits.max_input_bytes.saturating_add(1);
    let mut bytes = Vec::new();
    if path == "-" {
        let mut stdin = io::stdin().lock();
        (&mut stdin)
            .take(cap)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
    } else {
        let file = std::fs::File::open(path).map_err(cannot)?;
        let meta = file.metadata().map_err(cannot)?;
        if meta.is_file() {
            input::check_size_of(origin, role, meta.len(), limits)?;
            // Sized once, rather than grown by doubling (a failure only means growing).
            let len = usize::try_from(meta.len()).unwrap_or(usize::MAX);
            let _ = bytes.try_reserve_exact(len.saturating_add(1));
        }
        file.take(cap).read_to_end(&mut bytes).map_err(cannot)?;
    }
    input::check_size_of(origin, role, bytes.len() as u64, limits)?;
    Ok(bytes)
}

fn origin_name(path: &str) -> &str {
    if path == "-" { "<stdin>" } else { path }
}

fn io_reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string().to_lowercase(),
    }
}

/// A flag value: inline text, or the contents of `@FILE`. Returns (origin, text, from_file).
fn flag_text(flag: &str, value: &str) -> Result<(String, String, bool), InputError> {
    match value.strip_prefix('@') {
        Some(path) => {
            let role = format!("{} file", flag.trim_start_matches('-'));
            let bytes = read_as(path, &role)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| InputError::at(path, &role, "not valid UTF-8"))?;
            Ok((path.to_string(), text, true))
        }
        None => Ok((flag.to_string(), value.to_string(), false)),
    }
}

/// Writes bytes to stdout. A report that cannot be written is exit 2, never 0.
fn emit(bytes: &[u8]) -> Result<(), io::Error> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

fn finish(report: &Report, format: Format) -> u8 {
    write_report(&report.render(format), report.exit_code)
}

/// Writes a rendered report: its exit code, or 2 when it cannot be written.
fn write_report(bytes: &[u8], exit_code: u8) -> u8 {
    match emit(bytes) {
        Ok(()) => exit_code,
        Err(e) => {
            warn(&format!(
                "omission-gate: cannot write the report: {}",
                io_reason(&e)
            ));
            2
        }
    }
}

fn fail(mode: Mode, err: &InputError, format: Format) -> u8 {
    let message = err.to_string();
    warn(&format!("omission-gate: invalid-input: {message}"));
    let _ = finish(&Report::invalid_input(mode, &message), format);
    2
}

/// The pieces a `check` needs, read from the input and the flags.
struct Loaded {
    input: Input,
    compaction: Compaction,
}

/// A flag value as read: (origin, text, from a file). An `@FILE` may be a pipe, which can
/// be read only once, so each flag is read once and the text passed on.
type FlagText = (String, String, bool);

fn load_with(
    path: &str,
    retention: Retention,
    kept_flag: Option<&str>,
) -> Result<Loaded, InputError> {
    let kept = kept_flag.map(|v| flag_text("--kept", v)).transpose()?;
    load_from(path, None, retention, kept.as_ref())
}

/// [`load_with`], for an input already read when `bytes` is given (stdin), with the
/// `--kept` value already read.
fn load_from(
    path: &str,
    bytes: Option<&[u8]>,
    retention: Retention,
    kept_flag: Option<&FlagText>,
) -> Result<Loaded, InputError> {
    let read;
    let bytes = match bytes {
        Some(b) => b,
        None => {
            read = read_source(path)?;
            &read
        }
    };
    let origin = origin_name(path);
    let input = input::load(origin, bytes, limits())?;
    let kept = match kept_flag {
        Some((o, text, from_file)) => Some(input::kept_from_flag(o, text, *from_file)?),
        None => input.kept.clone(),
    };
    let kept_origin = if kept_flag.is_some() {
        "--kept"
    } else {
        origin
    };
    let compaction = Compaction::new(&input.store, retention, kept.as_deref(), kept_origin)?;
    Ok(Loaded { input, compaction })
}

fn resolve_action(
    loaded: &Loaded,
    flag: Option<&FlagText>,
    origin: &str,
) -> Result<Action, InputError> {
    match flag {
        Some((o, text, _)) => input::action_from_flag(o, text),
        None => loaded.input.action.clone().ok_or_else(|| {
            InputError::at(
                origin,
                "action",
                "check needs an action: a document `action` key or --action",
            )
        }),
    }
}

/// The tools for precheck and pin: `--tools`, else the document's `tools`, else every
/// tool a policy scope or an effect names exactly (SPEC 2.3).
fn resolve_tools(input: &Input, flag: Option<&str>) -> Result<Vec<Tool>, InputError> {
    match flag {
        Some(v) => {
            let (o, text, _) = flag_text("--tools", v)?;
            input::tools_from_flag(&o, &text)
        }
        None => Ok(input.tools_or_named()),
    }
}

#[cfg(test)]
mod tests;
