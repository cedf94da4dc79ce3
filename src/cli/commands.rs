//! `check`, `check --precheck` and `pin`: each tries the lean loader (large inputs,
//! retention `given`) and otherwise loads exactly, then writes its report.

use super::*;

pub(super) fn run_check(args: &CheckArgs) -> Exit {
    let reads = [
        input_read("INPUT", &args.input),
        flag_read("--kept", args.kept.as_deref()),
        flag_read("--action", args.action.as_deref()),
        flag_read("--tools", args.tools.as_deref()),
        args.transcript
            .as_deref()
            .and_then(|t| input_read("--transcript", t)),
    ];
    let context_files = args
        .context_file
        .iter()
        .map(|f| input_read("--context-file", f));
    if let Err(e) = stdin_once(reads.into_iter().chain(context_files).flatten()) {
        let mode = if args.precheck {
            Mode::Precheck
        } else {
            Mode::Check
        };
        return fail(mode, &e, format_of(args.format));
    }
    if let Some(path) = &args.transcript {
        return run_check_transcript(args, path);
    }
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
    if let Some((bytes, exit)) = lean_check(
        args,
        stdin.as_deref(),
        kept.as_ref(),
        action.as_ref(),
        options,
        format,
    ) {
        return write_report(&bytes, exit);
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

/// `check --transcript` (and with `--precheck`): kept = the records in view of the
/// transcript's live context (retention `transcript:H`).
pub(super) fn run_check_transcript(args: &CheckArgs, path: &str) -> Exit {
    let format = format_of(args.format);
    let mode = if args.precheck {
        Mode::Precheck
    } else {
        Mode::Check
    };
    let report = (|| {
        let action = args
            .action
            .as_deref()
            .map(|v| flag_text("--action", v))
            .transpose()?;
        let tools = args.tools.as_deref().map(|v| flag_text("--tools", v));
        let bytes = read_source(&args.input)?;
        let origin = origin_name(&args.input);
        let input = input::load(origin, &bytes, limits())?;
        let context = read_context(&Wanted {
            path,
            harness: args.harness.map(HarnessArg::harness),
            call: None,
            deadline: None,
            files: &args.context_file,
        })?;
        let compaction = context.compaction(&input.store);
        let mut report = if args.precheck {
            let tools = tools_from_read(&input, tools)?;
            let options = PrecheckOptions {
                allow_unevaluable: args.allow_unevaluable,
                max_calls: args.max_calls,
            };
            let outcome = precheck::precheck(&input.store, &compaction, &tools, options);
            Report::precheck(&tools, &compaction, outcome)
        } else {
            let action = match &action {
                Some((o, text, _)) => input::action_from_flag(o, text)?,
                None => input.action.clone().ok_or_else(|| {
                    InputError::at(
                        origin,
                        "action",
                        "check needs an action: a document `action` key or --action",
                    )
                })?,
            };
            let options = CheckOptions {
                allow_unevaluable: args.allow_unevaluable,
            };
            let outcome = gate::check(&input.store, &compaction, &action, options);
            Report::check(&action, &compaction, outcome)
        };
        report.transcript = Some(context.summary());
        Ok::<_, InputError>(report)
    })();
    match report {
        Ok(r) => finish(&r, format),
        Err(e) => fail(mode, &e, format),
    }
}

pub(super) fn run_precheck(args: &CheckArgs) -> Exit {
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
        && let Some((bytes, exit)) = lean_load_then(
            &args.input,
            stdin.as_deref(),
            kept.as_ref(),
            tools_flag.as_ref(),
            Purpose::Precheck,
            |lean| {
                let store = &lean.input.store;
                let outcome = precheck::precheck(store, &lean.compaction, &lean.tools, options);
                let report = Report::precheck(&lean.tools, &lean.compaction, outcome);
                let r = Ok((report.render(format), Exit::from(report.verdict)));
                exiting_with((lean, report));
                r
            },
        )
    {
        return write_report(&bytes, exit);
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

/// The tools for precheck and pin: the `--tools` flag as read, else the document's
/// `tools`, else every tool a policy scope or an effect names exactly (SPEC 2.3).
pub(super) fn tools_from_read(
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
pub(super) fn lean_pin(
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
            let mut found = input::lean_digests_from(
                origin_name(&args.input),
                &args.input,
                stdin,
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

pub(super) fn run_pin(args: &PinArgs) -> Exit {
    let format = match args.format {
        PinFormat::Json => Format::Json,
        PinFormat::Text | PinFormat::Ids => Format::Text,
    };
    let reads = [
        input_read("INPUT", &args.input),
        flag_read("--tools", args.tools.as_deref()),
    ];
    if let Err(e) = stdin_once(reads.into_iter().flatten()) {
        if args.format == PinFormat::Ids {
            warn(&format!("omission-gate: invalid-input: {e}"));
            return Exit::Error;
        }
        return fail(Mode::Pin, &e, format);
    }
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
                    return Exit::Error;
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
        return Exit::from(report.verdict);
    }
    let ids: Vec<String> = match (&report.kept, &report.pinned) {
        (Some(kept), _) => kept.clone(),
        (None, Some(pinned)) => pinned.iter().map(|p| p.id.clone()).collect(),
        (None, None) => Vec::new(),
    };
    match emit(ids_file(&ids).as_bytes()) {
        Ok(()) => Exit::Success,
        Err(e) => {
            warn(&format!(
                "omission-gate: cannot write the ids: {}",
                io_reason(&e)
            ));
            Exit::Error
        }
    }
}

/// The ids as a file `--kept @FILE` reads: one per line, or a JSON array when some id
/// would not survive that (a line break, surrounding space, a leading `[`).
pub(super) fn ids_file(ids: &[String]) -> String {
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
        format!("{}\n", crate::json::json_text(&array))
    }
}

/// `check` by the lean loader, when it can decide: retention `given`, the flags readable,
/// the input valid. The report comes rendered in `format`, with its exit code (the gate
/// and the rendering run while the loader's last checks do). `None` sends the caller to
/// the exact path, which then reports exactly what it always did (errors included).
pub(super) fn lean_check(
    args: &CheckArgs,
    stdin: Option<&[u8]>,
    kept: Option<&FlagText>,
    action: Option<&FlagText>,
    options: CheckOptions,
    format: Format,
) -> Option<(Vec<u8>, Exit)> {
    if args.retention != Retention::Given {
        return None;
    }
    let action = match action {
        Some((o, text, _)) => Some(input::action_from_flag(o, text).ok()?),
        None => None,
    };
    input::load_lean_from(
        origin_name(&args.input),
        &args.input,
        stdin,
        kept.map(|(_, text, from_file)| (text.as_str(), *from_file)),
        Purpose::Check(action),
        limits(),
        |lean| {
            let action = lean.action.as_ref().ok_or(Fallback)?;
            let outcome = gate::check(&lean.input.store, &lean.compaction, action, options);
            let report = Report::check(action, &lean.compaction, outcome);
            let rendered = (report.render(format), Exit::from(report.verdict));
            exiting_with((lean, report));
            Ok(rendered)
        },
    )
    .ok()
}
