//! The command line: parse flags, read files, call the library, write the report, map
//! the verdict to an exit code. The only module that does I/O.

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
use crate::report::{self, Format, Mode, Report, clean};
use crate::stream::Fallback;

/// Is there, among the records a compactor dropped, one that binds this action?
#[derive(Debug, Parser)]
#[command(
    name = "omission-gate",
    version,
    about,
    long_about = None,
    after_help = "Exit codes: 0 PASS, 1 BLOCK, 2 ERROR (invalid input, a predicate the gate cannot \
                  resolve, or a report that could not be written). Never 0 on error."
)]
pub struct Cli {
    #[command(flatten)]
    limits: LimitArgs,
    #[command(subcommand)]
    command: Command,
}

/// The limits a user can see and raise. Exceeding one is ERROR `invalid-input`.
#[derive(Debug, Args)]
struct LimitArgs {
    /// Refuse any input, flag file, hook payload or report larger than this (suffix K,
    /// M or G for powers of 1024).
    #[arg(long, global = true, help_heading = "Limits", value_name = "BYTES",
          default_value = "1G", value_parser = parse_bytes)]
    max_input_bytes: u64,
    /// Refuse any predicate nested deeper than this many levels (JSON nesting is capped
    /// at 127 levels of arrays and objects in any case).
    #[arg(long, global = true, help_heading = "Limits", value_name = "LEVELS",
          default_value_t = DEFAULT_MAX_DEPTH as u32,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_predicate_depth: u32,
}

impl LimitArgs {
    fn limits(&self) -> Limits {
        Limits {
            max_predicate_depth: usize::try_from(self.max_predicate_depth).unwrap_or(usize::MAX),
            max_input_bytes: self.max_input_bytes,
        }
    }
}

/// `1048576`, `512K`, `64M`, `1G` (powers of 1024).
fn parse_bytes(s: &str) -> Result<u64, String> {
    let (digits, unit) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (s.get(..i).unwrap_or(""), Some(c)),
        _ => (s, None),
    };
    let shift = match unit.map(|c| c.to_ascii_uppercase()) {
        None => 0,
        Some('K') => 10,
        Some('M') => 20,
        Some('G') => 30,
        Some(_) => return Err("expected a byte count such as 1048576, 512K, 64M or 1G".into()),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|&n| n > 0)
        .ok_or_else(|| "expected a positive byte count such as 1048576, 512K, 64M or 1G".into())
}

/// The limits of this run, set once from the command line before anything is read.
static LIMITS: OnceLock<Limits> = OnceLock::new();

fn limits() -> Limits {
    LIMITS.get().copied().unwrap_or_default()
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Judge one action under one compaction: PASS (0), BLOCK (1) or ERROR (2).
    Check(CheckArgs),
    /// Print the records a compactor must keep; with --budget, the ids to keep.
    Pin(PinArgs),
    /// Judge each input's own action under each retention; exit with the worst verdict.
    Sweep(SweepArgs),
    /// Recompute a report's seal: 0 when it matches, 1 when it does not, 2 if unreadable.
    Verify {
        /// The report file, or `-` for stdin.
        report: String,
    },
    /// Answer an agent harness's hook: read its payload on stdin, reply in its protocol.
    Hook(HookArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum HookArg {
    /// Claude Code PreToolUse: deny with exit 2 and the reason on stderr; silent on PASS.
    ClaudeCode,
    /// Codex PreToolUse: deny with exit 2 and the reason on stderr; silent on PASS.
    Codex,
    /// Gemini CLI BeforeTool: deny with exit 2 and the reason on stderr; silent on PASS.
    GeminiCli,
    /// Claude Code PreCompact: the records to keep, as text; never blocks.
    ClaudeCodePrecompact,
}

impl HookArg {
    fn adapter(self) -> Adapter {
        match self {
            HookArg::ClaudeCode => Adapter::PreTool(Harness::ClaudeCode),
            HookArg::Codex => Adapter::PreTool(Harness::Codex),
            HookArg::GeminiCli => Adapter::PreTool(Harness::GeminiCli),
            HookArg::ClaudeCodePrecompact => Adapter::PreCompact,
        }
    }
}

#[derive(Debug, Args)]
struct HookArgs {
    /// The harness and event to answer.
    #[arg(value_enum)]
    harness: HookArg,
    /// The record store: a document or JSON Lines file (stdin carries the payload).
    #[arg(long)]
    store: String,
    /// Kept ids: `a,b,c` inline, or `@FILE`; default: the store document's `kept`.
    #[arg(long)]
    kept: Option<String>,
    /// How the kept set is obtained: given, head_tail:K or recency:K.
    #[arg(long, default_value = "given", value_parser = parse_retention)]
    retention: Retention,
    /// The guarded tools (names or `*` globs, or `@FILE`); calls of other tools pass.
    #[arg(long)]
    tools: Option<String>,
    /// Report dropped unevaluable records as a signed note instead of blocking.
    #[arg(long)]
    allow_unevaluable: bool,
    /// Our own deadline: with no answer by then, deny (keep it below the harness's
    /// hook timeout, which would run the tool).
    #[arg(long, default_value_t = 10_000)]
    timeout_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SweepFormat {
    Text,
    Tsv,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The full pre-compaction records: a document or JSON Lines; `-` for stdin.
    input: String,
    /// The proposed call, `{"tool":...,"params":{...}}`, inline or `@FILE`.
    #[arg(long)]
    action: Option<String>,
    /// Judge every reachable call of the tools instead of one action (never reads one).
    #[arg(long, conflicts_with = "action")]
    precheck: bool,
    /// Tools for --precheck: names `a,b`, or a JSON array of `{"name","input_schema"}`,
    /// inline or `@FILE`. Default: the document's `tools`, else every tool a record names.
    #[arg(long, requires = "precheck")]
    tools: Option<String>,
    /// The most calls --precheck tries per rule and tool before answering "may bind".
    #[arg(long, help_heading = "Limits", default_value_t = DEFAULT_MAX_CALLS)]
    max_calls: usize,
    /// Kept ids: `a,b,c` inline, or `@FILE` (a JSON array or one id per line).
    #[arg(long)]
    kept: Option<String>,
    /// How the kept set is obtained: given, head_tail:K or recency:K.
    #[arg(long, default_value = "given", value_parser = parse_retention)]
    retention: Retention,
    /// Report dropped unevaluable records as a signed note instead of blocking.
    #[arg(long)]
    allow_unevaluable: bool,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PinFormat {
    Text,
    Json,
    /// The ids to keep (with --budget) or the pinned ids, one per line, for `--kept @FILE`.
    Ids,
}

#[derive(Debug, Args)]
struct PinArgs {
    /// The full records: a document or JSON Lines; `-` for stdin.
    input: String,
    /// Tools: names `a,b`, or a JSON array of `{"name","input_schema"}`, inline or `@FILE`.
    /// Default: the document's `tools`, else every tool a record names.
    #[arg(long)]
    tools: Option<String>,
    /// Token budget: keep the pinned records, then the most recent others that fit.
    #[arg(long)]
    budget: Option<u64>,
    /// Report format, or `ids` for a file `check --kept @FILE` reads.
    #[arg(long, value_enum, default_value = "text")]
    format: PinFormat,
    /// The most calls tried per rule and tool before a rule is pinned as undecided.
    #[arg(long, help_heading = "Limits", default_value_t = DEFAULT_MAX_CALLS)]
    max_calls: usize,
}

#[derive(Debug, Args)]
struct SweepArgs {
    /// Documents that carry their own action (and `kept` for retention=given).
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Retentions to judge under; repeat for a table input x retention.
    #[arg(long, value_parser = parse_retention)]
    retention: Vec<Retention>,
    /// Report dropped unevaluable records as a signed note instead of blocking.
    #[arg(long)]
    allow_unevaluable: bool,
    /// Precheck each input (every reachable call of its tools) instead of its action.
    #[arg(long)]
    precheck: bool,
    /// Tools for --precheck, for every input (default: each document's own `tools`, else
    /// every tool its records name).
    #[arg(long, requires = "precheck")]
    tools: Option<String>,
    /// The most calls --precheck tries per rule and tool before answering "may bind".
    #[arg(long, help_heading = "Limits", default_value_t = DEFAULT_MAX_CALLS)]
    max_calls: usize,
    /// `text`: an aligned table; `tsv`: `input<TAB>retention<TAB>VERDICT<TAB>codes` rows.
    #[arg(long, value_enum, default_value = "text")]
    format: SweepFormat,
}

fn parse_retention(s: &str) -> Result<Retention, String> {
    s.parse()
}

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
    let limits = limits();
    let origin = origin_name(path);
    let cannot =
        |e: io::Error| InputError::at(origin, "input", format!("cannot read: {}", io_reason(&e)));
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
            input::check_size(origin, meta.len(), limits)?;
            // Sized once, rather than grown by doubling (a failure only means growing).
            let len = usize::try_from(meta.len()).unwrap_or(usize::MAX);
            let _ = bytes.try_reserve_exact(len.saturating_add(1));
        }
        file.take(cap).read_to_end(&mut bytes).map_err(cannot)?;
    }
    input::check_size(origin, bytes.len() as u64, limits)?;
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
            let bytes = read_source(path)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| InputError::at(path, flag, "the file is not valid UTF-8"))?;
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

fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
    }
}

fn run_check(args: &CheckArgs) -> u8 {
    if args.precheck {
        return run_precheck(args);
    }
    let format = format_of(args.format);
    let options = CheckOptions {
        allow_unevaluable: args.allow_unevaluable,
    };
    // stdin can be read once: hold it for both paths.
    let stdin = if args.input == "-" {
        match read_source("-") {
            Ok(bytes) => Some(bytes),
            Err(e) => return fail(Mode::Check, &e, format),
        }
    } else {
        None
    };
    let flags = (|| {
        let kept = args
            .kept
            .as_deref()
            .map(|v| flag_text("--kept", v))
            .transpose()?;
        let action = args
            .action
            .as_deref()
            .map(|v| flag_text("--action", v))
            .transpose()?;
        Ok::<_, InputError>((kept, action))
    })();
    let (kept, action) = match flags {
        Ok(f) => f,
        Err(e) => return fail(Mode::Check, &e, format),
    };
    if let Some((bytes, exit_code)) = lean_check(
        args,
        stdin.as_deref(),
        kept.as_ref(),
        action.as_ref(),
        options,
        format,
    ) {
        return write_report(&bytes, exit_code);
    }
    let report = (|| {
        let loaded = load_from(&args.input, stdin.as_deref(), args.retention, kept.as_ref())?;
        let action = resolve_action(&loaded, action.as_ref(), origin_name(&args.input))?;
        let outcome = gate::check(&loaded.input.store, &loaded.compaction, &action, options);
        Ok::<_, InputError>(Report::check(&action, &loaded.compaction, outcome))
    })();
    match report {
        Ok(r) => finish(&r, format),
        Err(e) => fail(Mode::Check, &e, format),
    }
}

fn run_precheck(args: &CheckArgs) -> u8 {
    let format = format_of(args.format);
    let options = PrecheckOptions {
        allow_unevaluable: args.allow_unevaluable,
        max_calls: args.max_calls,
    };
    // Each flag and stdin is read once, in the order the exact path reports errors in:
    // --kept, the input, --tools.
    let kept = match args
        .kept
        .as_deref()
        .map(|v| flag_text("--kept", v))
        .transpose()
    {
        Ok(k) => k,
        Err(e) => return fail(Mode::Precheck, &e, format),
    };
    let stdin = if args.input == "-" {
        match read_source("-") {
            Ok(bytes) => Some(bytes),
            Err(e) => return fail(Mode::Precheck, &e, format),
        }
    } else {
        None
    };
    let tools_flag = args.tools.as_deref().map(|v| flag_text("--tools", v));
    if args.retention == Retention::Given
        && let Some((bytes, exit_code)) = lean_load_then(
            &args.input,
            stdin.as_deref(),
            kept.as_ref(),
            tools_flag.as_ref(),
            Purpose::Precheck,
            |lean| {
                let store = &lean.input.store;
                let outcome = precheck::precheck(store, &lean.compaction, &lean.tools, options);
                let report = Report::precheck(&lean.tools, &lean.compaction, outcome);
                let r = Ok((report.render(format), report.exit_code));
                exiting_with((lean, report));
                r
            },
        )
    {
        return write_report(&bytes, exit_code);
    }
    let report = (|| {
        let loaded = load_from(&args.input, stdin.as_deref(), args.retention, kept.as_ref())?;
        let tools = tools_from_read(&loaded.input, tools_flag)?;
        let outcome = precheck::precheck(&loaded.input.store, &loaded.compaction, &tools, options);
        Ok::<_, InputError>(Report::precheck(&tools, &loaded.compaction, outcome))
    })();
    match report {
        Ok(r) => finish(&r, format),
        Err(e) => fail(Mode::Precheck, &e, format),
    }
}

/// [`resolve_tools`] with the `--tools` flag already read.
fn tools_from_read(
    input: &Input,
    flag: Option<Result<FlagText, InputError>>,
) -> Result<Vec<Tool>, InputError> {
    match flag {
        Some(read) => {
            let (o, text, _) = read?;
            input::tools_from_flag(&o, &text)
        }
        None => Ok(input.tools_or_named()),
    }
}

/// The `pin` report by the lean loader, when it can decide; `None` sends the caller to
/// the exact path. With `--budget`, a first pass gathers every record's tokens, the fill
/// runs on those, and a second pass over the input reads the id and digest of the records
/// kept (only in the chunks that hold one).
fn lean_pin(
    args: &PinArgs,
    stdin: Option<&[u8]>,
    tools_flag: Option<&Result<FlagText, InputError>>,
) -> Option<Report> {
    let Some(budget) = args.budget else {
        let lean = lean_load(&args.input, stdin, None, tools_flag, Purpose::Pin)?;
        let report = pin::report(&lean.input.store, &lean.tools, None, args.max_calls);
        exiting_with(lean);
        return Some(report);
    };
    // The file must not change between the two passes.
    let stamp = |path: &str| {
        let m = std::fs::metadata(path).ok()?;
        Some((m.len(), m.modified().ok()?))
    };
    let before = if stdin.is_none() {
        Some(stamp(&args.input)?)
    } else {
        None
    };
    let lean = lean_load(&args.input, stdin, None, tools_flag, Purpose::PinBudget)?;
    let store = &lean.input.store;
    let info = lean.budget.as_ref()?;
    let pins = pin::pin(store, &lean.tools, args.max_calls);
    let pinned: Vec<u64> = pins
        .positions
        .iter()
        .filter_map(|&p| store.get(p).map(|r| r.seq))
        .collect();
    let kept = match pin::fill_seqs(&info.tokens, &pinned, budget) {
        Err(over) => Err(over),
        Ok((seqs, kept_tokens)) => {
            // Held records carry their digest: the second pass reads only the others.
            let held: std::collections::BTreeMap<u64, &crate::record::Record> =
                store.records().iter().map(|r| (r.seq, r)).collect();
            let wanted: std::collections::BTreeSet<u64> = seqs
                .iter()
                .copied()
                .filter(|s| !held.contains_key(s))
                .collect();
            let (first, chunks, mut whole) = lean_chunks(&args.input, stdin)?;
            let mut found = input::lean_digests_with(
                origin_name(&args.input),
                first,
                chunks,
                Some(&mut *whole),
                info,
                &wanted,
                limits(),
            )
            .ok()?;
            if stdin.is_none() && stamp(&args.input) != before {
                return None;
            }
            for s in &seqs {
                if let Some(r) = held.get(s) {
                    found.insert(*s, (r.id.clone(), r.digest));
                }
            }
            let kept: Vec<(&String, &[u8; 32])> = seqs
                .iter()
                .filter_map(|s| found.get(s).map(|(id, d)| (id, d)))
                .collect();
            let total = store.total();
            let summary = report::CompactionSummary {
                records: total,
                kept: kept.len(),
                dropped: total.checked_sub(kept.len())?,
                retention: Retention::Given.to_string(),
                kept_sha256: crate::compaction::fingerprint_of(
                    kept.iter().map(|(id, d)| (id.as_str(), *d)),
                ),
            };
            Ok(pin::Kept {
                ids: kept.iter().map(|(id, _)| (*id).clone()).collect(),
                compaction: summary,
                kept_tokens,
            })
        }
    };
    Some(pin::assemble(
        store,
        &lean.tools,
        Some(budget),
        pins,
        Some(kept),
    ))
}

/// Lets go of what a one-shot command built, without freeing it: the process ends once
/// its report is written, and freeing a large store's and report's many small
/// allocations (made on the loader's threads) would cost milliseconds for nothing. Only
/// for values built once per process.
fn exiting_with<T>(built: T) {
    std::mem::forget(built);
}

/// A load by the lean loader for precheck or pin (`purpose` given the `--tools` flag's
/// tools, if any), when it can decide. `None` sends the caller to the exact path.
fn lean_load(
    path: &str,
    stdin: Option<&[u8]>,
    kept: Option<&FlagText>,
    tools_flag: Option<&Result<FlagText, InputError>>,
    purpose: fn(Option<Vec<Tool>>) -> Purpose,
) -> Option<input::LeanFor> {
    lean_load_then(path, stdin, kept, tools_flag, purpose, Ok)
}

/// [`lean_load`], handing the load to `then` while the loader's last checks run (see
/// [`input::load_lean_with`]).
fn lean_load_then<R>(
    path: &str,
    stdin: Option<&[u8]>,
    kept: Option<&FlagText>,
    tools_flag: Option<&Result<FlagText, InputError>>,
    purpose: fn(Option<Vec<Tool>>) -> Purpose,
    then: impl FnOnce(input::LeanFor) -> Result<R, Fallback>,
) -> Option<R> {
    let tools = match tools_flag {
        Some(Ok((o, text, _))) => Some(input::tools_from_flag(o, text).ok()?),
        Some(Err(_)) => return None,
        None => None,
    };
    let (first, chunks, mut whole) = lean_chunks(path, stdin)?;
    input::load_lean_with(
        origin_name(path),
        first,
        chunks,
        Some(&mut *whole),
        kept.map(|(_, text, from_file)| (text.as_str(), *from_file)),
        purpose(tools),
        limits(),
        then,
    )
    .ok()
}

fn run_pin(args: &PinArgs) -> u8 {
    let format = match args.format {
        PinFormat::Json => Format::Json,
        PinFormat::Text | PinFormat::Ids => Format::Text,
    };
    let stdin = if args.input == "-" {
        Some(read_source("-"))
    } else {
        None
    };
    let tools_flag = args.tools.as_deref().map(|v| flag_text("--tools", v));
    let lean = match &stdin {
        Some(Err(_)) => None,
        _ => lean_pin(
            args,
            stdin.as_ref().and_then(|s| s.as_deref().ok()),
            tools_flag.as_ref(),
        ),
    };
    let report = match lean {
        Some(report) => report,
        None => {
            let loaded = (|| {
                let bytes = match stdin {
                    Some(read) => read?,
                    None => read_source(&args.input)?,
                };
                let input = input::load(origin_name(&args.input), &bytes, limits())?;
                let tools = tools_from_read(&input, tools_flag)?;
                Ok::<_, InputError>((input, tools))
            })();
            let (input, tools) = match loaded {
                Ok(x) => x,
                Err(e) if args.format == PinFormat::Ids => {
                    warn(&format!("omission-gate: invalid-input: {e}"));
                    return 2;
                }
                Err(e) => return fail(Mode::Pin, &e, format),
            };
            pin::report(&input.store, &tools, args.budget, args.max_calls)
        }
    };
    if args.format != PinFormat::Ids {
        let code = finish(&report, format);
        exiting_with(report);
        return code;
    }
    if report.verdict != Verdict::Pass {
        for f in report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
        {
            warn(&format!(
                "omission-gate: {}: {}",
                f.code.as_str(),
                f.message
            ));
        }
        return report.exit_code;
    }
    let ids: Vec<String> = match (&report.kept, &report.pinned) {
        (Some(kept), _) => kept.clone(),
        (None, Some(pinned)) => pinned.iter().map(|p| p.id.clone()).collect(),
        (None, None) => Vec::new(),
    };
    match emit(ids_file(&ids).as_bytes()) {
        Ok(()) => 0,
        Err(e) => {
            warn(&format!(
                "omission-gate: cannot write the ids: {}",
                io_reason(&e)
            ));
            2
        }
    }
}

/// The ids as a file `--kept @FILE` reads: one per line, or a JSON array when some id
/// would not survive that (a line break, surrounding space, a leading `[`).
fn ids_file(ids: &[String]) -> String {
    let line_safe = |id: &String| {
        !id.is_empty()
            && id.trim() == id
            && !id.starts_with('[')
            && !id.chars().any(|c| c.is_control() || c == '\u{feff}')
    };
    if ids.iter().all(line_safe) {
        ids.iter().map(|id| format!("{id}\n")).collect()
    } else {
        let array = serde_json::Value::Array(
            ids.iter()
                .map(|id| serde_json::Value::String(id.clone()))
                .collect(),
        );
        format!("{}\n", report::json_text(&array))
    }
}

/// Bytes read per chunk by the lean path.
const CHUNK: usize = 1 << 18;

/// Inputs smaller than this take the exact path: start-up dominates there, and threads
/// would only add to it.
const LEAN_FROM: usize = 1 << 20;

/// The input in chunks that end at a line end (the last may not), for the lean loader.
struct Chunks<'a> {
    source: ChunkSource<'a>,
    carry: Vec<u8>,
    /// Bytes a file may still yield under `--max-input-bytes`; past it (a file that grew
    /// after its size was checked) the lean path falls back, and the exact path refuses.
    left: u64,
}

enum ChunkSource<'a> {
    File(std::fs::File),
    Bytes(&'a [u8]),
}

impl Iterator for Chunks<'_> {
    type Item = Result<Vec<u8>, Fallback>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut buf = crate::stream::spare_buffer();
        buf.append(&mut self.carry);
        let eof = match &mut self.source {
            ChunkSource::Bytes(rest) => {
                let n = CHUNK.min(rest.len());
                let (now, later) = rest.split_at(n);
                buf.extend_from_slice(now);
                *rest = later;
                later.is_empty()
            }
            ChunkSource::File(file) => {
                // read_to_end fills spare capacity without zeroing it first.
                buf.reserve(CHUNK);
                match Read::by_ref(file).take(CHUNK as u64).read_to_end(&mut buf) {
                    Ok(n) => match self.left.checked_sub(n as u64) {
                        Some(left) => {
                            self.left = left;
                            n < CHUNK
                        }
                        None => return Some(Err(Fallback)),
                    },
                    Err(_) => return Some(Err(Fallback)),
                }
            }
        };
        if buf.is_empty() {
            return None;
        }
        if !eof && let Some(end) = buf.iter().rposition(|&b| b == b'\n') {
            self.carry
                .extend_from_slice(buf.get(end + 1..).unwrap_or_default());
            buf.truncate(end + 1);
        }
        Some(Ok(buf))
    }
}

/// The input (`stdin`'s bytes, else the file at `path`) as its first chunk and the rest,
/// for the lean loader, and the same input read by position (for a document); `None`
/// when it is too small or cannot be opened.
fn lean_chunks<'a>(
    path: &str,
    stdin: Option<&'a [u8]>,
) -> Option<(Vec<u8>, Chunks<'a>, Whole<'a>)> {
    let (source, whole): (ChunkSource<'a>, Whole<'a>) = match stdin {
        Some(bytes) if bytes.len() >= LEAN_FROM => (ChunkSource::Bytes(bytes), Box::new(bytes)),
        Some(_) => return None,
        None => {
            let file = std::fs::File::open(path).ok()?;
            let size = file.metadata().ok()?.len();
            // Over the size limit: the exact path refuses it.
            if size < LEAN_FROM as u64 || size > limits().max_input_bytes {
                return None;
            }
            // INVARIANT: the two handles share one file offset. The lean loader reads
            // either the chunks (JSON Lines) or, by position, the whole (a document),
            // never both after the first chunk.
            let at = FileAt {
                file: file.try_clone().ok()?,
                size,
            };
            (ChunkSource::File(file), Box::new(at))
        }
    };
    let mut chunks = Chunks {
        source,
        carry: Vec::new(),
        left: limits().max_input_bytes,
    };
    let first = chunks.next()?.ok()?;
    Some((first, chunks, whole))
}

/// An input read by position, for the lean loader's document path.
type Whole<'a> = Box<dyn Positional<'a> + 'a>;

/// A file read by position (seek, then read), as long as its size stays what it was.
struct FileAt {
    file: std::fs::File,
    size: u64,
}

impl<'a> Positional<'a> for FileAt {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&mut self, at: u64, len: usize) -> Result<Cow<'a, [u8]>, Fallback> {
        use std::io::{Seek, SeekFrom};
        let end = at.checked_add(len as u64).ok_or(Fallback)?;
        if end > self.size {
            return Err(Fallback);
        }
        self.file.seek(SeekFrom::Start(at)).map_err(|_| Fallback)?;
        let mut buf = crate::stream::spare_buffer();
        // read_to_end fills spare capacity without zeroing it first; one byte more than
        // asked for at the end tells a file that grew.
        buf.reserve(len.saturating_add(1));
        let more = u64::from(end == self.size);
        Read::by_ref(&mut self.file)
            .take(len as u64 + more)
            .read_to_end(&mut buf)
            .map_err(|_| Fallback)?;
        if buf.len() != len {
            return Err(Fallback);
        }
        Ok(Cow::Owned(buf))
    }
}

/// `check` by the lean loader, when it can decide: retention `given`, the flags readable,
/// the input valid. The report comes rendered in `format`, with its exit code (the gate
/// and the rendering run while the loader's last checks do). `None` sends the caller to
/// the exact path, which then reports exactly what it always did (errors included).
fn lean_check(
    args: &CheckArgs,
    stdin: Option<&[u8]>,
    kept: Option<&FlagText>,
    action: Option<&FlagText>,
    options: CheckOptions,
    format: Format,
) -> Option<(Vec<u8>, u8)> {
    if args.retention != Retention::Given {
        return None;
    }
    let action = match action {
        Some((o, text, _)) => Some(input::action_from_flag(o, text).ok()?),
        None => None,
    };
    let (first, chunks, mut whole) = lean_chunks(&args.input, stdin)?;
    input::load_lean_with(
        origin_name(&args.input),
        first,
        chunks,
        Some(&mut *whole),
        kept.map(|(_, text, from_file)| (text.as_str(), *from_file)),
        Purpose::Check(action),
        limits(),
        |lean| {
            let action = lean.action.as_ref().ok_or(Fallback)?;
            let outcome = gate::check(&lean.input.store, &lean.compaction, action, options);
            let report = Report::check(action, &lean.compaction, outcome);
            let rendered = (report.render(format), report.exit_code);
            exiting_with((lean, report));
            Ok(rendered)
        },
    )
    .ok()
}

/// One cell of a sweep: the verdict and its codes.
struct Cell {
    verdict: Verdict,
    codes: Vec<&'static str>,
}

impl Cell {
    fn text(&self) -> String {
        if self.codes.is_empty() {
            self.verdict.as_str().to_string()
        } else {
            format!("{} {}", self.verdict.as_str(), self.codes.join(","))
        }
    }
}

/// What a sweep judges in each cell.
#[derive(Clone, Copy)]
enum SweepMode<'a> {
    /// Each document's own action.
    Check(CheckOptions),
    /// Every reachable call of the tools (`--tools`, else each document's).
    Precheck(PrecheckOptions, Option<&'a str>),
}

fn sweep_cell(path: &str, retention: Retention, mode: SweepMode<'_>) -> Cell {
    let judged = load_with(path, retention, None).and_then(|loaded| match mode {
        SweepMode::Check(options) => {
            let action = resolve_action(&loaded, None, origin_name(path))?;
            Ok(gate::check(
                &loaded.input.store,
                &loaded.compaction,
                &action,
                options,
            ))
        }
        SweepMode::Precheck(options, tools) => {
            let tools = resolve_tools(&loaded.input, tools)?;
            Ok(precheck::precheck(
                &loaded.input.store,
                &loaded.compaction,
                &tools,
                options,
            ))
        }
    });
    match judged {
        Ok(outcome) => {
            let severity = match outcome.verdict {
                Verdict::Pass => None,
                Verdict::Block => Some(Severity::Block),
                Verdict::Error => Some(Severity::Error),
            };
            let report = Report::from_outcome(Mode::Check, outcome);
            Cell {
                verdict: report.verdict,
                codes: report.verdict_codes(severity),
            }
        }
        Err(e) => {
            warn(&format!("omission-gate: invalid-input: {e}"));
            Cell {
                verdict: Verdict::Error,
                codes: vec!["invalid-input"],
            }
        }
    }
}

fn run_sweep(args: &SweepArgs) -> u8 {
    let retentions = if args.retention.is_empty() {
        vec![Retention::Given]
    } else {
        args.retention.clone()
    };
    let mode = if args.precheck {
        SweepMode::Precheck(
            PrecheckOptions {
                allow_unevaluable: args.allow_unevaluable,
                max_calls: args.max_calls,
            },
            args.tools.as_deref(),
        )
    } else {
        SweepMode::Check(CheckOptions {
            allow_unevaluable: args.allow_unevaluable,
        })
    };
    let rows: Vec<(String, Vec<Cell>)> = args
        .inputs
        .iter()
        .map(|path| {
            let cells = retentions
                .iter()
                .map(|&r| sweep_cell(path, r, mode))
                .collect();
            (clean(path).into_owned(), cells)
        })
        .collect();
    let all = || rows.iter().flat_map(|(_, cells)| cells);
    let count = |v: Verdict| all().filter(|c| c.verdict == v).count();
    let worst = all().map(|c| c.verdict).max().unwrap_or(Verdict::Pass);
    let mut out = String::new();
    match args.format {
        SweepFormat::Tsv => {
            for (input, cells) in &rows {
                for (r, cell) in retentions.iter().zip(cells) {
                    let codes = if cell.codes.is_empty() {
                        "-".to_string()
                    } else {
                        cell.codes.join(",")
                    };
                    out.push_str(&format!(
                        "{input}\t{r}\t{}\t{codes}\n",
                        cell.verdict.as_str()
                    ));
                }
            }
        }
        SweepFormat::Text => {
            let mut table: Vec<Vec<String>> = vec![
                std::iter::once("input".to_string())
                    .chain(retentions.iter().map(ToString::to_string))
                    .collect(),
            ];
            for (input, cells) in &rows {
                table.push(
                    std::iter::once(input.clone())
                        .chain(cells.iter().map(Cell::text))
                        .collect(),
                );
            }
            out.push_str(&report::align(&table));
        }
    }
    out.push_str(&format!(
        "{} PASS, {} BLOCK, {} ERROR -> overall exit {}\n",
        count(Verdict::Pass),
        count(Verdict::Block),
        count(Verdict::Error),
        worst.exit_code()
    ));
    match emit(out.as_bytes()) {
        Ok(()) => worst.exit_code(),
        Err(e) => {
            warn(&format!(
                "omission-gate: cannot write the table: {}",
                io_reason(&e)
            ));
            2
        }
    }
}

fn run_verify(path: &str) -> u8 {
    let bytes = match read_source(path) {
        Ok(b) => b,
        Err(e) => {
            warn(&format!("omission-gate: verify: {e}"));
            return 2;
        }
    };
    match report::verify(&bytes) {
        Ok(digest) => match emit(format!("ok: sha256 {digest}\n").as_bytes()) {
            Ok(()) => 0,
            Err(_) => 2,
        },
        Err(e) => {
            warn(&format!(
                "omission-gate: verify: {}: {e}",
                clean(origin_name(path))
            ));
            1
        }
    }
}

/// Runs a hook adapter. The payload and the store are read and judged on a worker
/// thread so that our own deadline holds even when stdin never closes or the store is
/// slow to read; a deadline missed or a panic is a reply too (a deny, for the pre-tool
/// adapters), never the harness's fail-open crash or timeout.
fn run_hook(args: HookArgs) -> u8 {
    let adapter = args.harness.adapter();
    let timeout_ms = args.timeout_ms;
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::Builder::new()
        .name("hook".into())
        .spawn(move || {
            let reply = std::panic::catch_unwind(|| hook_reply(adapter, &args));
            let _ = tx.send(reply.ok());
        });
    let reply = match worker {
        Err(_) => hook::failed(adapter, &Failure::Internal),
        Ok(_) => match rx.recv_timeout(std::time::Duration::from_millis(timeout_ms)) {
            Ok(Some(reply)) => reply,
            Ok(None) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                hook::failed(adapter, &Failure::Internal)
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                hook::failed(adapter, &Failure::Timeout(timeout_ms))
            }
        },
    };
    write_reply(&reply)
}

/// Reads the payload and the store, then answers.
fn hook_reply(adapter: Adapter, args: &HookArgs) -> hook::Reply {
    let mut payload = Vec::new();
    let max = limits().max_input_bytes;
    let mut stdin = io::stdin().lock();
    if let Err(e) = (&mut stdin)
        .take(max.saturating_add(1))
        .read_to_end(&mut payload)
    {
        let err = InputError::at(
            "payload",
            "stdin",
            format!("cannot read: {}", io_reason(&e)),
        );
        return hook::failed(adapter, &Failure::Input(err));
    }
    if let Err(err) = input::check_size("payload", payload.len() as u64, limits()) {
        return hook::failed(adapter, &Failure::Input(err));
    }
    let setup = hook_setup(args);
    hook::answer(adapter, &payload, setup.as_ref())
}

fn hook_setup(args: &HookArgs) -> Result<Setup, InputError> {
    if args.store == "-" {
        return Err(InputError::at(
            "--store",
            "`-`",
            "the store must be a file: stdin carries the hook payload",
        ));
    }
    let bytes = read_source(&args.store)?;
    let input = input::load(&args.store, &bytes, limits())?;
    let kept = args
        .kept
        .as_deref()
        .map(|v| {
            let (origin, text, from_file) = flag_text("--kept", v)?;
            input::kept_from_flag(&origin, &text, from_file)
        })
        .transpose()?;
    let tools = args
        .tools
        .as_deref()
        .map(|v| {
            let (origin, text, _) = flag_text("--tools", v)?;
            input::tools_from_flag(&origin, &text)
        })
        .transpose()?
        .map(|ts| ts.into_iter().map(|t| t.name).collect());
    Ok(Setup {
        input,
        kept_origin: if args.kept.is_some() {
            "--kept".to_string()
        } else {
            clean(&args.store).into_owned()
        },
        kept,
        retention: args.retention,
        tools,
        options: CheckOptions {
            allow_unevaluable: args.allow_unevaluable,
        },
    })
}

/// Writes a hook's reply, or its fallback when it cannot be written. When neither can
/// be written the exit code is the larger of the two: a deny still exits 2.
fn write_reply(reply: &hook::Reply) -> u8 {
    if write_out(reply) {
        return reply.exit;
    }
    match reply.fallback.as_deref() {
        Some(f) if write_out(f) => f.exit,
        Some(f) => reply.exit.max(f.exit),
        None => reply.exit,
    }
}

fn write_out(reply: &hook::Reply) -> bool {
    let out = reply.stdout.is_empty() || emit(&reply.stdout).is_ok();
    let err = reply.stderr.is_empty() || {
        let mut e = io::stderr().lock();
        e.write_all(&reply.stderr).and_then(|()| e.flush()).is_ok()
    };
    out && err
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::DEFAULT_MAX_INPUT_BYTES;

    #[test]
    fn byte_counts_parse_with_binary_suffixes() {
        assert_eq!(parse_bytes("1G"), Ok(DEFAULT_MAX_INPUT_BYTES));
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("512k"), Ok(512 << 10));
        assert_eq!(parse_bytes("64M"), Ok(64 << 20));
        for bad in ["", "0", "G", "1T", "-1", "1.5G", "99999999999G", "1 G"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_file_read_by_position_must_keep_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let open = |size| FileAt {
            file: std::fs::File::open(&path).unwrap(),
            size,
        };
        let mut f = open(10);
        assert_eq!(&*f.read_at(2, 3).unwrap(), b"234");
        assert_eq!(&*f.read_at(0, 10).unwrap(), b"0123456789");
        assert_eq!(&*f.read_at(7, 3).unwrap(), b"789");
        assert!(f.read_at(8, 3).is_err());
        // Grown past the size it had: a read up to that size sees the byte after.
        let mut grown = open(8);
        assert_eq!(&*grown.read_at(0, 7).unwrap(), b"0123456");
        assert!(grown.read_at(4, 4).is_err());
        // Shrunk: the bytes are not there.
        assert!(open(12).read_at(6, 6).is_err());
    }

    #[test]
    fn the_help_shows_each_limit_and_its_default() {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        cli.build();
        let help = cli
            .find_subcommand_mut("check")
            .map(|c| c.render_help().to_string())
            .unwrap_or_default();
        assert!(help.contains("--max-input-bytes <BYTES>"), "{help}");
        assert!(help.contains("[default: 1G]"), "{help}");
        assert!(help.contains("--max-predicate-depth <LEVELS>"), "{help}");
        assert!(help.contains("[default: 64]"), "{help}");
    }
}
