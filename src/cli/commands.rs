//! `check`, `check --precheck` and `pin`: each reads its flags, hands the library's
//! loader what it needs, judges what it loaded and writes the report.

use super::*;

pub(super) fn run_check(args: &CheckArgs, limits: Limits, out: Output) -> Exit {
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
        return out.fail(mode, &e, format_of(args.format));
    }
    // --transcript goes with neither --kept nor --retention (clap refuses those).
    if let Err(e) = kept_flags_agree(args.kept.as_deref(), args.retention, false) {
        let mode = if args.precheck {
            Mode::Precheck
        } else {
            Mode::Check
        };
        return out.fail(mode, &e, format_of(args.format));
    }
    if let Some(path) = &args.transcript {
        return run_check_transcript(args, path, limits, out);
    }
    if args.precheck {
        return run_precheck(args, limits, out);
    }
    let format = format_of(args.format);
    let options = CheckOptions {
        allow_unevaluable: args.allow_unevaluable,
    };
    // stdin can be read once: hold it for both paths.
    let stdin = match held_stdin(&args.input, limits) {
        Ok(bytes) => bytes,
        Err(e) => return out.fail(Mode::Check, &e, format),
    };
    let flags = (|| {
        let kept = args
            .kept
            .as_deref()
            .map(|v| kept_text(v, limits))
            .transpose()?;
        let action = args
            .action
            .as_deref()
            .map(|v| action_text(v, limits))
            .transpose()?;
        Ok::<_, InputError>((kept, action))
    })();
    let (kept, action) = match flags {
        Ok(f) => f,
        Err(e) => return out.fail(Mode::Check, &e, format),
    };
    let request = request(
        &args.input,
        stdin.as_deref(),
        args.retention,
        kept.as_ref(),
        limits,
    );
    let rendered = input::load_check(&request, action.as_ref(), |loaded, action| {
        let outcome = gate::check(
            &loaded.input.store,
            &loaded.compaction,
            &loaded.input.totals,
            action,
            options,
        );
        let report = Report::check(action, &loaded.compaction, &loaded.input.totals, outcome);
        let rendered = (report.render(format), Exit::from(report.verdict));
        exiting_with((loaded, report));
        rendered
    });
    match rendered {
        Ok((bytes, exit)) => out.write_report(&bytes, exit),
        Err(e) => out.fail(Mode::Check, &e, format),
    }
}

/// `check --transcript` (and with `--precheck`): kept = the records in view of the
/// transcript's live context (retention `transcript:H`).
pub(super) fn run_check_transcript(
    args: &CheckArgs,
    path: &str,
    limits: Limits,
    out: Output,
) -> Exit {
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
            .map(|v| action_text(v, limits))
            .transpose()?;
        let tools = args.tools.as_deref().map(|v| tools_text(v, limits));
        let wanted = Wanted {
            path,
            subagent: None,
            harness: args.harness.map(HarnessArg::harness),
            call: None,
            session: None,
            cwd: None,
            deadline: None,
            files: &args.context_file,
            store: Some(&args.input),
            store_read: None,
            limits,
            live_call: false,
        };
        // A check of the action given on a large JSON Lines input: the light pass, the
        // transcript, then the lean loader with the records in view kept. Otherwise (or
        // when the lean loader cannot decide) every record is loaded below, with the
        // context as read here.
        let mut context_read = None;
        let call = action
            .as_ref()
            .and_then(|(o, text, _)| input::action_from_flag(o, text).ok());
        if let (false, false, Some(call)) = (args.precheck, names_stdin(&args.input), call) {
            let request = request(&args.input, None, Retention::Given, None, limits);
            // The light pass on a thread of its own while the transcript is read.
            let (texts, context) = input::store_texts_beside(&request, |_| read_context(&wanted));
            match (texts, context) {
                (Some(texts), Ok(context)) => {
                    let request = input::Request {
                        retention: Retention::Transcript(context.live.harness),
                        ..request
                    };
                    let haystack = context.haystack();
                    if let Some(stored) = texts.load_in_view(&request, call.clone(), &haystack)
                        && let Some(compaction) = &stored.compaction
                    {
                        let options = CheckOptions {
                            allow_unevaluable: args.allow_unevaluable,
                        };
                        let (store, totals) = (&stored.input.store, &stored.input.totals);
                        let outcome = gate::check(store, compaction, totals, &call, options);
                        let mut report = Report::check(&call, compaction, totals, outcome);
                        report.transcript = Some(context.summary());
                        return Ok(report);
                    }
                    context_read = Some(Ok(context));
                }
                // Read once: the transcript may be standard input.
                (_, context) => context_read = Some(context),
            }
        }
        let bytes = read_source(&args.input, limits)?;
        let origin = origin_name(&args.input);
        let input = input::load(origin, &bytes, limits)?;
        let context = match context_read {
            Some(read) => read?,
            None => read_context(&Wanted {
                store_read: names_stdin(&args.input).then_some(bytes.as_slice()),
                ..wanted
            })?,
        };
        let compaction = context.compaction(&input.store);
        let mut report = if args.precheck {
            let tools = input::tools_of(&input, tools.as_ref(), origin)?;
            // The transcript says which harness runs the calls.
            let options = PrecheckOptions {
                allow_unevaluable: args.allow_unevaluable,
                max_calls: args.max_calls,
                harness: Some(context.live.harness),
            };
            let totals = &input.totals;
            let outcome = precheck::precheck(&input.store, &compaction, totals, &tools, options);
            Report::precheck(&tools, &compaction, totals, outcome)
        } else {
            let action = input::action_of(&input, action.as_ref(), origin)?;
            let options = CheckOptions {
                allow_unevaluable: args.allow_unevaluable,
            };
            let totals = &input.totals;
            let outcome = gate::check(&input.store, &compaction, totals, &action, options);
            Report::check(&action, &compaction, totals, outcome)
        };
        report.transcript = Some(context.summary());
        Ok::<_, InputError>(report)
    })();
    match report {
        Ok(r) => out.finish(&r, format),
        Err(e) => out.fail(mode, &e, format),
    }
}

pub(super) fn run_precheck(args: &CheckArgs, limits: Limits, out: Output) -> Exit {
    let format = format_of(args.format);
    let options = PrecheckOptions {
        allow_unevaluable: args.allow_unevaluable,
        max_calls: args.max_calls,
        harness: args.harness.map(HarnessArg::harness),
    };
    // Each flag and stdin is read once, in the order the exact path reports errors in:
    // --kept, the input, --tools.
    let kept = match args
        .kept
        .as_deref()
        .map(|v| kept_text(v, limits))
        .transpose()
    {
        Ok(k) => k,
        Err(e) => return out.fail(Mode::Precheck, &e, format),
    };
    let stdin = match held_stdin(&args.input, limits) {
        Ok(bytes) => bytes,
        Err(e) => return out.fail(Mode::Precheck, &e, format),
    };
    let tools_flag = args.tools.as_deref().map(|v| tools_text(v, limits));
    let request = request(
        &args.input,
        stdin.as_deref(),
        args.retention,
        kept.as_ref(),
        limits,
    );
    let rendered = input::load_precheck(&request, tools_flag.as_ref(), |loaded, tools| {
        let store = &loaded.input.store;
        let totals = &loaded.input.totals;
        let outcome = precheck::precheck(store, &loaded.compaction, totals, tools, options);
        let report = Report::precheck(tools, &loaded.compaction, totals, outcome);
        let rendered = (report.render(format), Exit::from(report.verdict));
        exiting_with((loaded, report));
        rendered
    });
    match rendered {
        Ok((bytes, exit)) => out.write_report(&bytes, exit),
        Err(e) => out.fail(Mode::Precheck, &e, format),
    }
}

pub(super) fn run_pin(args: &PinArgs, limits: Limits, out: Output) -> Exit {
    let format = match args.format {
        PinFormat::Json => Format::Json,
        PinFormat::Text | PinFormat::Ids => Format::Text,
    };
    let reads = [
        input_read("INPUT", &args.input),
        flag_read("--tools", args.tools.as_deref()),
    ];
    let refuse = |e: &InputError| {
        if args.format == PinFormat::Ids {
            warn(&format!("omission-gate: invalid-input: {e}"));
            return Exit::Error;
        }
        out.fail(Mode::Pin, e, format)
    };
    if let Err(e) = stdin_once(reads.into_iter().flatten()) {
        return refuse(&e);
    }
    let stdin = match held_stdin(&args.input, limits) {
        Ok(bytes) => bytes,
        Err(e) => return refuse(&e),
    };
    let tools_flag = args.tools.as_deref().map(|v| tools_text(v, limits));
    let request = request(
        &args.input,
        stdin.as_deref(),
        Retention::Given,
        None,
        limits,
    );
    let options = PinOptions {
        max_calls: args.max_calls,
        harness: args.harness.map(HarnessArg::harness),
    };
    let report = match input::pin_report(&request, tools_flag.as_ref(), args.budget, options) {
        Ok(report) => report,
        Err(e) => return refuse(&e),
    };
    if args.format != PinFormat::Ids {
        let code = out.finish(&report, format);
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
    match out.emit(ids_file(&ids).as_bytes()) {
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
    // An empty file would be refused by `--kept @FILE` (it reads as a list that names no
    // id, an unset variable's): `[]` says that nothing is to be kept.
    if ids.is_empty() {
        return "[]\n".to_string();
    }
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

/// Standard input's bytes when the input is `-`, read once so that the loader can look
/// at them more than once (`None`: the input is a path the loader reads itself).
fn held_stdin(input: &str, limits: Limits) -> Result<Option<Vec<u8>>, InputError> {
    (input == "-").then(|| read_source("-", limits)).transpose()
}
