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
use crate::record::Limits;
use crate::report::{self, Format, Mode, Report, clean};
use crate::stream::Fallback;

/// Is there, among the records a compactor dropped, one that binds this action?
#[derive(Debug, Parser)]
#[command(name = "omission-gate", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
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

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version are successes; every usage error is exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let code = match cli.command {
        Command::Check(args) => run_check(&args),
        Command::Sweep(args) => run_sweep(&args),
        Command::Verify { report } => run_verify(&report),
    };
    ExitCode::from(code)
}

/// Reads a path, or stdin for `-`.
fn read_source(path: &str) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    let result = if path == "-" {
        io::stdin().lock().read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map(|_| ())
    };
    result.map_err(|e| {
        InputError::at(
            origin_name(path),
            "input",
            format!("cannot read: {}", io_reason(&e)),
        )
    })?;
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
    match emit(&report.render(format)) {
        Ok(()) => report.exit_code,
        Err(e) => {
            eprintln!("omission-gate: cannot write the report: {}", io_reason(&e));
            2
        }
    }
}

fn fail(mode: Mode, err: &InputError, format: Format) -> u8 {
    let message = err.to_string();
    eprintln!("omission-gate: invalid-input: {message}");
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
) -> Result<Loaded, InputError> {
    load_from(path, None, retention, kept_flag)
}

/// [`load_with`], for an input already read when `bytes` is given (stdin).
fn load_from(
    path: &str,
    bytes: Option<&[u8]>,
    retention: Retention,
    kept_flag: Option<&str>,
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
    let input = input::load(origin, bytes, Limits::default())?;
    let kept = match kept_flag {
        Some(v) => {
            let (o, text, from_file) = flag_text("--kept", v)?;
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

fn resolve_action(loaded: &Loaded, flag: Option<&str>, origin: &str) -> Result<Action, InputError> {
    match flag {
        Some(v) => {
            let (o, text, _) = flag_text("--action", v)?;
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

fn run_check(args: &CheckArgs) -> u8 {
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
    if let Some(report) = lean_check(args, stdin.as_deref(), options) {
        return finish(&report, format);
    }
    let report = (|| {
        let loaded = load_from(
            &args.input,
            stdin.as_deref(),
            args.retention,
            args.kept.as_deref(),
        )?;
        let action = resolve_action(&loaded, args.action.as_deref(), origin_name(&args.input))?;
        let outcome = gate::check(&loaded.input.store, &loaded.compaction, &action, options);
        Ok::<_, InputError>(Report::check(&action, &loaded.compaction, outcome))
    })();
    match report {
        Ok(r) => finish(&r, format),
        Err(e) => fail(Mode::Check, &e, format),
    }
}

/// Bytes read per chunk by the lean path.
const CHUNK: usize = 1 << 20;

/// Inputs smaller than this take the exact path: start-up dominates there, and threads
/// would only add to it.
const LEAN_FROM: usize = 1 << 20;

/// The input in chunks that end at a line end (the last may not), for the lean loader.
struct Chunks<'a> {
    source: ChunkSource<'a>,
    carry: Vec<u8>,
}

enum ChunkSource<'a> {
    File(std::fs::File),
    Bytes(&'a [u8]),
}

impl Iterator for Chunks<'_> {
    type Item = Result<Vec<u8>, Fallback>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut buf = std::mem::take(&mut self.carry);
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
                    Ok(n) => n < CHUNK,
                    Err(_) => return Some(Err(Fallback)),
                }
            }
        };
        if buf.is_empty() {
            return None;
        }
        if !eof && let Some(end) = buf.iter().rposition(|&b| b == b'\n') {
            self.carry = buf.split_off(end + 1);
        }
        Some(Ok(buf))
    }
}

/// `check` by the lean loader, when it can decide: retention `given`, the flags readable,
/// the input valid. `None` sends the caller to the exact path, which then reports exactly
/// what it always did (errors included).
fn lean_check(args: &CheckArgs, stdin: Option<&[u8]>, options: CheckOptions) -> Option<Report> {
    if args.retention != Retention::Given {
        return None;
    }
    let kept = match &args.kept {
        Some(v) => Some(flag_text("--kept", v).ok()?),
        None => None,
    };
    let action = match &args.action {
        Some(v) => {
            let (o, text, _) = flag_text("--action", v).ok()?;
            Some(input::action_from_flag(&o, &text).ok()?)
        }
        None => None,
    };
    let source = match stdin {
        Some(bytes) if bytes.len() >= LEAN_FROM => ChunkSource::Bytes(bytes),
        Some(_) => return None,
        None => {
            let file = std::fs::File::open(&args.input).ok()?;
            if file.metadata().ok()?.len() < LEAN_FROM as u64 {
                return None;
            }
            ChunkSource::File(file)
        }
    };
    let mut chunks = Chunks {
        source,
        carry: Vec::new(),
    };
    let first = chunks.next()?.ok()?;
    let lean = input::load_lean(
        origin_name(&args.input),
        first,
        chunks,
        kept.as_ref()
            .map(|(_, text, from_file)| (text.as_str(), *from_file)),
        action,
        Limits::default(),
    )
    .ok()?;
    let outcome = gate::check(&lean.input.store, &lean.compaction, &lean.action, options);
    Some(Report::check(&lean.action, &lean.compaction, outcome))
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

fn sweep_cell(path: &str, retention: Retention, options: CheckOptions) -> Cell {
    let judged = load_with(path, retention, None).and_then(|loaded| {
        let action = resolve_action(&loaded, None, origin_name(path))?;
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
            eprintln!("omission-gate: invalid-input: {e}");
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
    let options = CheckOptions {
        allow_unevaluable: args.allow_unevaluable,
    };
    let rows: Vec<(String, Vec<Cell>)> = args
        .inputs
        .iter()
        .map(|path| {
            let cells = retentions
                .iter()
                .map(|&r| sweep_cell(path, r, options))
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
            eprintln!("omission-gate: cannot write the table: {}", io_reason(&e));
            2
        }
    }
}

fn run_verify(path: &str) -> u8 {
    let bytes = match read_source(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("omission-gate: verify: {e}");
            return 2;
        }
    };
    match report::verify(&bytes) {
        Ok(digest) => match emit(format!("ok: sha256 {digest}\n").as_bytes()) {
            Ok(()) => 0,
            Err(_) => 2,
        },
        Err(e) => {
            eprintln!("omission-gate: verify: {}: {e}", clean(origin_name(path)));
            1
        }
    }
}
