//! The flags: what clap parses (commands, their arguments, the input limits), and the
//! small parsers and conversions of flag values.

use super::*;

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
    /// Print nothing on stdout: a verdict is then its exit code alone (errors are still
    /// one line on stderr).
    #[arg(long, short, global = true)]
    pub(super) quiet: bool,
    #[command(flatten)]
    pub(super) limits: LimitArgs,
    #[command(subcommand)]
    pub(super) command: Command,
}

/// The limits a user can see and raise. Exceeding one is ERROR `invalid-input`.
#[derive(Debug, Args)]
pub(super) struct LimitArgs {
    /// Refuse any input, flag file, hook payload or report larger than this (suffix K,
    /// M or G for powers of 1024).
    #[arg(long, global = true, help_heading = "Limits", value_name = "BYTES",
          default_value = "1G", value_parser = parse_bytes)]
    pub(super) max_input_bytes: u64,
    /// Refuse any predicate nested deeper than this many levels (JSON nesting is capped
    /// at 127 levels of arrays and objects in any case).
    #[arg(long, global = true, help_heading = "Limits", value_name = "LEVELS",
          default_value_t = DEFAULT_MAX_DEPTH as u32,
          value_parser = parse_depth)]
    pub(super) max_predicate_depth: u32,
}

impl LimitArgs {
    /// The limits these flags set.
    pub(super) fn limits(&self) -> Limits {
        Limits {
            max_predicate_depth: usize::try_from(self.max_predicate_depth).unwrap_or(usize::MAX),
            max_input_bytes: self.max_input_bytes,
        }
    }
}

/// A count: plain ASCII digits, as `--retention recency:K` takes its K. Rust's integer
/// parsers (and so clap's) would also take a leading `+`, which no flag here documents.
pub(super) fn parse_count<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    if !is_plain_digits(s) {
        return Err("expected a count, plain digits such as 8".into());
    }
    s.parse()
        .map_err(|_| format!("`{}` is too large a count", clean(s)))
}

/// A nesting depth: a count of at least 1.
pub(super) fn parse_depth(s: &str) -> Result<u32, String> {
    match parse_count::<u32>(s)? {
        0 => Err("expected a depth of at least 1 level".into()),
        depth => Ok(depth),
    }
}

/// `1048576`, `512K`, `64M`, `1G` (powers of 1024).
pub(super) fn parse_bytes(s: &str) -> Result<u64, String> {
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
    Some(digits)
        .filter(|d| is_plain_digits(d))
        .and_then(|d| d.parse::<u64>().ok())
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|&n| n > 0)
        .ok_or_else(|| "expected a positive byte count such as 1048576, 512K, 64M or 1G".into())
}

#[derive(Debug, Subcommand)]
pub(super) enum Command {
    /// Judge one action under one compaction: PASS (0), BLOCK (1) or ERROR (2).
    #[command(after_long_help = "Exit: 0 PASS, 1 BLOCK, 2 ERROR (never 0 on error).")]
    Check(CheckArgs),
    /// Check a store: invalid input (exit 2), else warnings (exit 1), else clean (exit 0).
    #[command(after_long_help = "Exit: 0 clean, 1 warnings (one line each), 2 invalid input.")]
    Validate(ValidateArgs),
    /// Print the records a compactor must keep; with --budget, the ids to keep.
    #[command(
        after_long_help = "Exit: 0 PASS, 2 ERROR (invalid input, or the pinned records alone over --budget). A rule undecided within --max-calls is pinned."
    )]
    Pin(PinArgs),
    /// Judge each input's own action under each retention; exit with the worst verdict.
    #[command(
        after_long_help = "Exit: the worst verdict's: 2 if any ERROR, else 1 if any BLOCK, else 0."
    )]
    Sweep(SweepArgs),
    /// Recompute a report's seal: 0 when it matches, 1 when it does not, 2 if no sealed report.
    #[command(
        after_long_help = "Exit: 0 the seal matches, 1 it does not, 2 the file cannot be read or is no sealed report (no seal line, or no verdict before it)."
    )]
    Verify(VerifyArgs),
    /// Answer an agent harness's hook: read its payload on stdin, reply in its protocol.
    #[command(
        after_long_help = "Exit: 0 allow (silent), 2 deny (the reason on stderr, as the harness reads it). This help itself exits 2, so that a hook command that asks for it denies. The PreCompact hook never blocks: 0, or 1 on error."
    )]
    Hook(HookArgs),
    /// Print a transcript's live context and, with --store, each record in view or not.
    #[command(after_long_help = "Exit: 0, or 2 when the transcript or the store cannot be read.")]
    Context(ContextArgs),
    /// Write a project's hook configuration for a harness, and a starter store if none.
    #[command(after_long_help = "Exit: 0 written, 2 when it cannot be (the reason on stderr).")]
    Init(InitArgs),
    /// Check a harness's hook wiring as the harness reads and runs it: 0 it gates, 1 problems
    /// (one line each, with the fix), 2 cannot tell.
    #[command(
        after_long_help = "Exit: 0 the hook gates, 1 problems (one line each, with the fix), 2 cannot tell."
    )]
    Doctor(DoctorArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    #[command(
        after_long_help = "Exit: 0, or 2 when it cannot be written. Bash: omission-gate completions bash > ~/.local/share/bash-completion/completions/omission-gate"
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page, omission-gate(1), in roff.
    #[command(
        after_long_help = "Exit: 0, or 2 when it cannot be written. Read it with: omission-gate man | man -l -"
    )]
    Man,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum KeptFromArg {
    /// The kept ids: --kept, else the store document's `kept`, under --retention.
    Kept,
    /// The records in view of the session transcript the payload's `transcript_path`
    /// names: what the agent can have read.
    Transcript,
}

/// A harness: its transcript format (`context`, `check --transcript`), the one `init`
/// and `doctor` wire the gate into, or for precheck and pin the one that runs the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum HarnessArg {
    /// Claude Code: session JSON Lines; `.claude/settings.json`.
    ClaudeCode,
    /// Codex: a rollout; `.codex/hooks.json` (and the trust Codex needs).
    Codex,
    /// Gemini CLI: a session file; `.gemini/settings.json`.
    GeminiCli,
}

impl HarnessArg {
    pub(super) fn harness(self) -> Harness {
        match self {
            HarnessArg::ClaudeCode => Harness::ClaudeCode,
            HarnessArg::Codex => Harness::Codex,
            HarnessArg::GeminiCli => Harness::GeminiCli,
        }
    }
}

#[derive(Debug, Args)]
pub(super) struct ContextArgs {
    /// The transcript file.
    pub(super) file: String,
    /// Its format; default: recognised from its first line.
    #[arg(long, value_enum)]
    pub(super) harness: Option<HarnessArg>,
    /// A record store: list each record in view and each not in view.
    #[arg(long)]
    pub(super) store: Option<String>,
    /// An instruction file the harness sends but does not record (Claude Code's
    /// CLAUDE.md); repeatable.
    #[arg(long, value_name = "FILE")]
    pub(super) context_file: Vec<String>,
}

#[derive(Debug, Args)]
pub(super) struct InitArgs {
    /// The harness to wire.
    #[arg(value_enum)]
    pub(super) harness: HarnessArg,
    /// The project directory (where the harness is started).
    #[arg(long, default_value = ".")]
    pub(super) dir: std::path::PathBuf,
    /// The record store, relative to the project directory or absolute; a starter store
    /// is written there when there is none.
    #[arg(long, default_value = crate::wiring::DEFAULT_STORE)]
    pub(super) store: String,
}

#[derive(Debug, Args)]
pub(super) struct DoctorArgs {
    /// The harness to check.
    #[arg(value_enum)]
    pub(super) harness: HarnessArg,
    /// The project directory: the one the harness is started in.
    #[arg(long, default_value = ".")]
    pub(super) dir: std::path::PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum HookArg {
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
    pub(super) fn adapter(self) -> Adapter {
        match self {
            HookArg::ClaudeCode => Adapter::PreTool(Harness::ClaudeCode),
            HookArg::Codex => Adapter::PreTool(Harness::Codex),
            HookArg::GeminiCli => Adapter::PreTool(Harness::GeminiCli),
            HookArg::ClaudeCodePrecompact => Adapter::PreCompact,
        }
    }
}

#[derive(Debug, Args)]
pub(super) struct HookArgs {
    /// The harness and event to answer.
    #[arg(value_enum)]
    pub(super) harness: HookArg,
    /// The record store: a document or JSON Lines file (stdin carries the payload).
    #[arg(long)]
    pub(super) store: String,
    /// Kept ids: `a,b,c` inline, or `@FILE` (a JSON array or one id per line), under
    /// retention given only. Default: the store document's `kept`.
    #[arg(long)]
    pub(super) kept: Option<String>,
    /// How the kept set is obtained: given, head_tail:K or recency:K.
    #[arg(long, default_value = "given", value_parser = parse_retention)]
    pub(super) retention: Retention,
    /// The guarded tools (calls of others pass, unless a record names them): names or `*` globs `a,b`, or a JSON array of `{"name","input_schema"}`, inline or `@FILE`. Default: the store
    /// document's `tools`, else every tool.
    #[arg(long)]
    pub(super) tools: Option<String>,
    /// Report dropped unevaluable records as a signed note instead of blocking.
    #[arg(long)]
    pub(super) allow_unevaluable: bool,
    /// Our own deadline: with no answer by then, deny (keep it below the harness's
    /// hook timeout, which would run the tool).
    #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = parse_count::<u64>)]
    pub(super) timeout_ms: u64,
    /// A hook's stdout is its reply to the harness: --quiet does not apply (not listed).
    #[arg(long, short, hide = true)]
    quiet: bool,
    /// Where the kept set comes from: `kept` (--kept or the store's `kept`) or
    /// `transcript` (the records in view of the session transcript the payload names).
    #[arg(long, value_enum, default_value = "kept")]
    pub(super) kept_from: KeptFromArg,
    /// With --kept-from transcript: an instruction file the harness sends but does not
    /// record (Claude Code's CLAUDE.md); repeatable.
    #[arg(long, value_name = "FILE")]
    pub(super) context_file: Vec<String>,
}

#[derive(Debug, Args)]
pub(super) struct VerifyArgs {
    /// The report file, or `-` for stdin.
    pub(super) report: String,
    /// A report holds no predicate: accepted like everywhere, but not listed here.
    #[arg(long, hide = true, value_parser = parse_depth)]
    max_predicate_depth: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum FormatArg {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum SweepFormat {
    Text,
    Tsv,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("judged_by_harness").args(["transcript", "precheck"]).multiple(true)))]
pub(super) struct CheckArgs {
    /// The full pre-compaction records: a document or JSON Lines; `-` for stdin.
    pub(super) input: String,
    /// The proposed call, `{"tool":...,"params":{...}}`, inline or `@FILE`. Default: the
    /// document's `action`.
    #[arg(long)]
    pub(super) action: Option<String>,
    /// Judge every reachable call of the tools instead of one action (never reads one).
    #[arg(long, conflicts_with = "action")]
    pub(super) precheck: bool,
    /// Tools for --precheck: names or `*` globs `a,b`, or a JSON array of `{"name","input_schema"}`, inline or `@FILE`. Default: the document's
    /// `tools`, else every tool a record names.
    #[arg(long, requires = "precheck")]
    pub(super) tools: Option<String>,
    /// The most calls --precheck tries per rule and tool before answering "may bind".
    #[arg(long, help_heading = "Limits", value_name = "CALLS", default_value_t = DEFAULT_MAX_CALLS,
          value_parser = parse_count::<usize>)]
    pub(super) max_calls: usize,
    /// Kept ids: `a,b,c` inline, or `@FILE` (a JSON array or one id per line), under
    /// retention given only. Default: the document's `kept`.
    #[arg(long)]
    pub(super) kept: Option<String>,
    /// How the kept set is obtained: given, head_tail:K or recency:K.
    #[arg(long, default_value = "given", value_parser = parse_retention)]
    pub(super) retention: Retention,
    /// Kept = the records in view of this harness transcript (retention transcript:H).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["kept", "retention"])]
    pub(super) transcript: Option<String>,
    /// The transcript's format (default: recognised from its first line); with
    /// --precheck, the harness that runs the calls (claude-code and codex run a call
    /// outside a tool's schema, so no schema bounds the calls).
    #[arg(long, value_enum, requires = "judged_by_harness")]
    pub(super) harness: Option<HarnessArg>,
    /// With --transcript: an instruction file the harness sends but does not record
    /// (Claude Code's CLAUDE.md); repeatable.
    #[arg(long, value_name = "FILE", requires = "transcript")]
    pub(super) context_file: Vec<String>,
    /// Report dropped unevaluable records as a signed note instead of blocking.
    #[arg(long)]
    pub(super) allow_unevaluable: bool,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: FormatArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum PinFormat {
    Text,
    Json,
    /// The ids to keep (with --budget) or the pinned ids, one per line, for `--kept @FILE`.
    Ids,
}

#[derive(Debug, Args)]
pub(super) struct PinArgs {
    /// The full records: a document or JSON Lines; `-` for stdin.
    pub(super) input: String,
    /// Tools to pin for: names or `*` globs `a,b`, or a JSON array of `{"name","input_schema"}`, inline or `@FILE`. Default: the document's `tools`,
    /// else every tool a record names.
    #[arg(long)]
    pub(super) tools: Option<String>,
    /// Token budget: keep the pinned records, then the most recent others that fit.
    /// Default: none (only the pinned records are listed).
    #[arg(long, value_name = "TOKENS", value_parser = parse_count::<u64>)]
    pub(super) budget: Option<u64>,
    /// Report format, or `ids` for a file `check --kept @FILE` reads.
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: PinFormat,
    /// The most calls tried per rule and tool before a rule is pinned as undecided.
    #[arg(long, help_heading = "Limits", value_name = "CALLS", default_value_t = DEFAULT_MAX_CALLS,
          value_parser = parse_count::<usize>)]
    pub(super) max_calls: usize,
    /// The harness that runs the calls: claude-code and codex run a call outside a tool's
    /// schema, so under them no schema bounds the calls. Default: the schemas bound them.
    #[arg(long, value_enum)]
    pub(super) harness: Option<HarnessArg>,
}

#[derive(Debug, Args)]
pub(super) struct SweepArgs {
    /// Documents that carry their own action (and `kept` for retention=given).
    #[arg(required = true)]
    pub(super) inputs: Vec<String>,
    /// Retentions to judge under (given, head_tail:K or recency:K); repeat for a table
    /// input x retention.
    #[arg(long, default_value = "given", value_parser = parse_retention)]
    pub(super) retention: Vec<Retention>,
    /// Report dropped unevaluable records as a signed note instead of blocking.
    #[arg(long)]
    pub(super) allow_unevaluable: bool,
    /// Precheck each input (every reachable call of its tools) instead of its action.
    #[arg(long)]
    pub(super) precheck: bool,
    /// Tools for --precheck, for every input: names or `*` globs `a,b`, or a JSON array of `{"name","input_schema"}`, inline or `@FILE`. Default:
    /// each document's `tools`, else every tool its records name.
    #[arg(long, requires = "precheck")]
    pub(super) tools: Option<String>,
    /// The most calls --precheck tries per rule and tool before answering "may bind".
    #[arg(long, help_heading = "Limits", value_name = "CALLS", default_value_t = DEFAULT_MAX_CALLS,
          value_parser = parse_count::<usize>)]
    pub(super) max_calls: usize,
    /// With --precheck, the harness that runs the calls: claude-code and codex run a
    /// call outside a tool's schema, so under them no schema bounds the calls.
    #[arg(long, value_enum, requires = "precheck")]
    pub(super) harness: Option<HarnessArg>,
    /// `text`: an aligned table; `tsv`: `input<TAB>retention<TAB>VERDICT<TAB>codes` rows.
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: SweepFormat,
}

/// The one rule for the flags that say what was kept: `--kept` lists the ids retention
/// `given` keeps, so it goes with no other retention (which computes the kept set itself
/// and would ignore the ids), and `--kept-from transcript` reads the kept set from the
/// transcript, so it goes with neither. A document's own `kept` is not a flag: under
/// another retention it is the compactor's record, not read (`sweep` compares retentions
/// over such documents).
pub(super) fn kept_flags_agree(
    kept: Option<&str>,
    retention: Retention,
    from_transcript: bool,
) -> Result<(), InputError> {
    let problem = match (kept.is_some(), retention, from_transcript) {
        (true, _, true) => ("--kept", FlagProblem::KeptTwice),
        (false, Retention::Given, _) => return Ok(()),
        (false, _, true) => ("--retention", FlagProblem::RetentionTwice),
        (true, Retention::Given, false) => return Ok(()),
        (true, other, false) => ("--kept", FlagProblem::KeptWithRetention(other)),
        (false, _, false) => return Ok(()),
    };
    Err(InputError::invalid(problem.0, "flags", problem.1))
}

pub(super) fn parse_retention(s: &str) -> Result<Retention, RetentionError> {
    s.parse()
}

pub(super) fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
    }
}
