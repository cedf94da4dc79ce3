//! The command line: parse flags, read files, call the library, write the report, map
//! the verdict to an exit code. The only module that does I/O.

use std::io::{self, Read, Write};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::action::Action;
use crate::compaction::{Compaction, Retention};
use crate::error::InputError;
use crate::gate::{self, CheckOptions, Severity, Verdict};
use crate::input::{self, Input};
use crate::predicate::DEFAULT_MAX_DEPTH;
use crate::record::Limits;
use crate::report::{self, Format, Mode, Report, clean};

/// Is there, among the records a compactor dropped, one that binds this action?
#[derive(Debug, Parser)]
#[command(name = "omission-gate", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    limits: LimitArgs,
    #[command(subcommand)]
    command: Command,
}

/// The limits a user can see and raise. Exceeding one is ERROR `invalid-input`.
#[derive(Debug, Args)]
struct LimitArgs {
    /// Refuse any input, flag file or report larger than this (suffix K, M or G for
    /// powers of 1024).
    #[arg(long, global = true, help_heading = "Limits", value_name = "BYTES", default_value = "1G", value_parser = parse_bytes)]
    max_input_bytes: u64,
    /// Refuse any predicate nested deeper than this many levels (JSON nesting is capped
    /// at 127 levels of arrays and objects in any case).
    #[arg(long, global = true, help_heading = "Limits", value_name = "LEVELS", default_value_t = DEFAULT_MAX_DEPTH as u32,
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

#[derive(Debug, Subcommand)]
enum Command {
    /// Judge one action under one compaction: PASS (0), BLOCK (1) or ERROR (2).
    Check(CheckArgs),
    /// Judge each input's own action under each retention; exit with the worst verdict.
    Sweep(SweepArgs),
    /// Recompute a report's seal: 0 when it matches, 1 when it does not, 2 if unreadable.
    Verify {
        /// The report file, or `-` for stdin.
        report: String,
    },
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
    /// `text`: an aligned table; `tsv`: `input<TAB>retention<TAB>VERDICT<TAB>codes` rows.
    #[arg(long, value_enum, default_value = "text")]
    format: SweepFormat,
}

fn parse_retention(s: &str) -> Result<Retention, String> {
    s.parse()
}

/// Runs the command line and returns the process exit code. A panic is a bug, never a
/// verdict: it is reported on one line and exits 2 (ERROR), not 101.
pub fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        warn(&format!(
            "omission-gate: internal error (a bug; please report it): {}",
            clean(&info.to_string())
        ));
    }));
    std::panic::catch_unwind(run).unwrap_or(ExitCode::from(2))
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
            // Help and version are successes; every usage error is exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let limits = cli.limits.limits();
    let code = match cli.command {
        Command::Check(args) => run_check(&args, limits),
        Command::Sweep(args) => run_sweep(&args, limits),
        Command::Verify { report } => run_verify(&report, limits),
    };
    ExitCode::from(code)
}

/// Reads a path, or stdin for `-`, refusing more than `limits.max_input_bytes`: a
/// regular file by its size before reading, anything else (a pipe, a device) after
/// reading one byte past the limit, so that memory stays bounded either way.
fn read_source(path: &str, limits: Limits) -> Result<Vec<u8>, InputError> {
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
fn flag_text(
    flag: &str,
    value: &str,
    limits: Limits,
) -> Result<(String, String, bool), InputError> {
    match value.strip_prefix('@') {
        Some(path) => {
            let bytes = read_source(path, limits)?;
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
    match emit(&report.render(format)) {
        Ok(()) => report.exit_code,
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

fn load_with(
    path: &str,
    retention: Retention,
    kept_flag: Option<&str>,
    limits: Limits,
) -> Result<Loaded, InputError> {
    let bytes = read_source(path, limits)?;
    let origin = origin_name(path);
    let input = input::load(origin, &bytes, limits)?;
    let kept = match kept_flag {
        Some(v) => {
            let (o, text, from_file) = flag_text("--kept", v, limits)?;
            Some(input::kept_from_flag(&o, &text, from_file)?)
        }
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
    flag: Option<&str>,
    origin: &str,
    limits: Limits,
) -> Result<Action, InputError> {
    match flag {
        Some(v) => {
            let (o, text, _) = flag_text("--action", v, limits)?;
            input::action_from_flag(&o, &text)
        }
        None => loaded.input.action.clone().ok_or_else(|| {
            InputError::at(
                origin,
                "action",
                "check needs an action: a document `action` key or --action",
            )
        }),
    }
}

fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
    }
}

fn run_check(args: &CheckArgs, limits: Limits) -> u8 {
    let format = format_of(args.format);
    let options = CheckOptions {
        allow_unevaluable: args.allow_unevaluable,
    };
    let report = (|| {
        let loaded = load_with(&args.input, args.retention, args.kept.as_deref(), limits)?;
        let action = resolve_action(
            &loaded,
            args.action.as_deref(),
            origin_name(&args.input),
            limits,
        )?;
        let outcome = gate::check(&loaded.input.store, &loaded.compaction, &action, options);
        Ok::<_, InputError>(Report::check(&action, &loaded.compaction, outcome))
    })();
    match report {
        Ok(r) => finish(&r, format),
        Err(e) => fail(Mode::Check, &e, format),
    }
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

fn sweep_cell(path: &str, retention: Retention, options: CheckOptions, limits: Limits) -> Cell {
    let judged = load_with(path, retention, None, limits).and_then(|loaded| {
        let action = resolve_action(&loaded, None, origin_name(path), limits)?;
        Ok(gate::check(
            &loaded.input.store,
            &loaded.compaction,
            &action,
            options,
        ))
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

fn run_sweep(args: &SweepArgs, limits: Limits) -> u8 {
    let retentions = if args.retention.is_empty() {
        vec![Retention::Given]
    } else {
        args.retention.clone()
    };
    let options = CheckOptions {
        allow_unevaluable: args.allow_unevaluable,
    };
    let rows: Vec<(String, Vec<Cell>)> = args
        .inputs
        .iter()
        .map(|path| {
            let cells = retentions
                .iter()
                .map(|&r| sweep_cell(path, r, options, limits))
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

fn run_verify(path: &str, limits: Limits) -> u8 {
    let bytes = match read_source(path, limits) {
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
