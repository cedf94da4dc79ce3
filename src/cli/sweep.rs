//! `sweep` (many inputs, many retentions, one line each) and `verify` (a report's seal).

use std::collections::BTreeMap;

use super::*;

/// One cell of a sweep: the verdict and its codes.
pub(super) struct Cell {
    pub(super) verdict: Verdict,
    pub(super) codes: Vec<&'static str>,
}

impl Cell {
    pub(super) fn text(&self) -> String {
        if self.codes.is_empty() {
            self.verdict.as_str().to_string()
        } else {
            format!("{} {}", self.verdict.as_str(), self.codes.join(","))
        }
    }
}

/// What a sweep judges in each cell.
#[derive(Clone, Copy)]
pub(super) enum SweepMode<'a> {
    /// Each document's own action.
    Check(CheckOptions),
    /// Every reachable call of the tools (`--tools` as read once, else each document's).
    Precheck(PrecheckOptions, Option<&'a Result<FlagText, InputError>>),
}

/// One cell: `path` under `retention`; `held` is the input as read once (see
/// [`reads_once`]), else `path` is read for this cell.
pub(super) fn sweep_cell(
    path: &str,
    held: Option<&Result<Vec<u8>, InputError>>,
    retention: Retention,
    mode: SweepMode<'_>,
    limits: Limits,
) -> Cell {
    let bytes = match held {
        Some(Ok(bytes)) => Ok(Some(bytes.as_slice())),
        Some(Err(e)) => Err(e.clone()),
        None => Ok(None),
    };
    let judged = bytes.and_then(|bytes| {
        let request = request(path, bytes, retention, None, limits);
        match mode {
            SweepMode::Check(options) => input::load_check(&request, None, |loaded, action| {
                let input::Loaded { input, compaction } = &loaded;
                gate::check(&input.store, compaction, &input.totals, action, options)
            }),
            SweepMode::Precheck(options, tools) => {
                input::load_precheck(&request, tools, |loaded, tools| {
                    let input::Loaded { input, compaction } = &loaded;
                    precheck::precheck(&input.store, compaction, &input.totals, tools, options)
                })
            }
        }
    });
    // The loader's wording names --action and --kept, which sweep does not take.
    let judged = judged.map_err(|e| match e {
        InputError::Invalid {
            origin,
            place,
            reason,
        } => {
            let sweep_problem = match *reason {
                Reason::Input(InputProblem::NoAction) => Some(InputProblem::NoSweepAction),
                Reason::Input(InputProblem::NoStreamAction) => {
                    Some(InputProblem::NoSweepStreamAction)
                }
                Reason::Kept(crate::compaction::KeptError::Missing) => {
                    Some(InputProblem::NoSweepKept)
                }
                Reason::Input(InputProblem::NoStreamKept) => Some(InputProblem::NoSweepStreamKept),
                _ => None,
            };
            InputError::Invalid {
                origin,
                place,
                reason: sweep_problem.map_or(reason, |p| Box::new(Reason::Input(p))),
            }
        }
        e => e,
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

pub(super) fn run_sweep(args: &SweepArgs, limits: Limits, output: Output) -> Exit {
    let retentions = if args.retention.is_empty() {
        vec![Retention::Given]
    } else {
        args.retention.clone()
    };
    let reads = args
        .inputs
        .iter()
        .map(|path| input_read("INPUT", path))
        .chain([flag_read("--tools", args.tools.as_deref())]);
    if let Err(e) = stdin_once(reads.flatten()) {
        warn(&format!("omission-gate: invalid-input: {e}"));
        return Exit::Error;
    }
    // Each is read once, however many cells use it.
    let mut held: BTreeMap<&str, Result<Vec<u8>, InputError>> = BTreeMap::new();
    for path in args.inputs.iter().filter(|p| reads_once(p)) {
        held.entry(path.as_str())
            .or_insert_with(|| read_source(path, limits));
    }
    let tools = args.tools.as_deref().map(|v| tools_text(v, limits));
    let mode = if args.precheck {
        SweepMode::Precheck(
            PrecheckOptions {
                allow_unevaluable: args.allow_unevaluable,
                max_calls: args.max_calls,
                harness: args.harness.map(HarnessArg::harness),
            },
            tools.as_ref(),
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
                .map(|&r| sweep_cell(path, held.get(path.as_str()), r, mode, limits))
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
        Exit::from(worst).code()
    ));
    match output.emit(out.as_bytes()) {
        Ok(()) => Exit::from(worst),
        Err(e) => {
            warn(&format!(
                "omission-gate: cannot write the table: {}",
                io_reason(&e)
            ));
            Exit::Error
        }
    }
}

/// True when a sweep reads the input at `path` once and holds it for every cell:
/// standard input, and any input that is no regular file (a pipe, such as bash's
/// `<(...)`), which a second read finds empty or waiting. A regular file is read for each
/// cell, so that a large one is not held.
fn reads_once(path: &str) -> bool {
    path == "-" || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

pub(super) fn run_verify(path: &str, limits: Limits, out: Output) -> Exit {
    let bytes = match read_source(path, limits) {
        Ok(b) => b,
        Err(e) => {
            warn(&format!("omission-gate: verify: {e}"));
            return Exit::Error;
        }
    };
    match report::verify(&bytes) {
        Ok(digest) => match out.emit(format!("ok: sha256 {digest}\n").as_bytes()) {
            Ok(()) => Exit::Success,
            Err(_) => Exit::Error,
        },
        Err(e) => {
            warn(&format!(
                "omission-gate: verify: {}: {e}",
                clean(origin_name(path))
            ));
            // A seal that does not match is the answer "changed" (exit 1); a file that
            // is no sealed report cannot be verified at all (exit 2).
            match e {
                report::VerifyError::Mismatch { .. } => Exit::Problems,
                report::VerifyError::NoSeal | report::VerifyError::NotAReport => Exit::Error,
            }
        }
    }
}
