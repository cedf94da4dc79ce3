//! `hook`: the harness adapters' protocol on stdin and stdout.

use super::*;
use crate::hook::Unread;
use crate::view::Context;
use std::path::Path;

/// Runs a hook adapter. The payload and the store are read and judged on this thread
/// while a watchdog waits for our own deadline, so that it holds even when stdin never
/// closes or the store is slow to read; a deadline missed or a panic is a reply too (a
/// deny, for the pre-tool adapters), never the harness's fail-open crash or timeout.
///
/// The work stays on the main thread for its memory: glibc grows a spawned thread's
/// heap a page at a time, a system call each (some 300 in one transcript-mode call),
/// and the main thread's in steps of 128 KiB.
pub(super) fn run_hook(args: HookArgs, limits: Limits) -> Exit {
    let adapter = args.harness.adapter();
    let timeout_ms = args.timeout_ms;
    let deadline = std::time::Duration::from_millis(timeout_ms);
    // The transcript may be waited for until three quarters of the deadline, so that a
    // stale one is a clear error rather than our own timeout.
    let wait_until = std::time::Instant::now()
        + std::time::Duration::from_millis(timeout_ms.saturating_mul(3) / 4);
    // Whoever answers first, the work or the watchdog, writes the one reply.
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = {
        let answered = std::sync::Arc::clone(&answered);
        std::thread::Builder::new()
            .name("deadline".into())
            .spawn(move || {
                let missed = matches!(
                    finished.recv_timeout(deadline),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                );
                if missed && !answered.swap(true, std::sync::atomic::Ordering::SeqCst) {
                    // The process ends here whatever happens in the writing: the main
                    // thread, which lost the answer, only waits for the end.
                    let exit = std::panic::catch_unwind(|| {
                        write_reply(&hook::failed(adapter, &Failure::Timeout(timeout_ms)))
                    })
                    .unwrap_or(match adapter {
                        Adapter::PreTool(_) => Exit::Deny,
                        Adapter::PreCompact => Exit::NonBlocking,
                    });
                    std::process::exit(i32::from(exit.code()));
                }
            })
    };
    // Without a watchdog our deadline cannot hold: no judging then.
    let reply = match watchdog {
        Err(_) => hook::failed(adapter, &Failure::Internal),
        Ok(_) => std::panic::catch_unwind(|| hook_reply(adapter, &args, wait_until, limits))
            .unwrap_or_else(|_| hook::failed(adapter, &Failure::Internal)),
    };
    if answered.swap(true, std::sync::atomic::Ordering::SeqCst) {
        // INVARIANT: the watchdog took the answer, and it ends the process once its reply
        // is written (or could not be).
        loop {
            std::thread::park();
        }
    }
    drop(done);
    write_reply(&reply)
}

/// Reads the payload and the store (and under `--kept-from transcript` the transcript the
/// payload names, waiting for it until `wait_until`), then answers.
pub(super) fn hook_reply(
    adapter: Adapter,
    args: &HookArgs,
    wait_until: std::time::Instant,
    limits: Limits,
) -> hook::Reply {
    let early = early_light_pass(args, limits);
    let mut payload = Vec::new();
    let max = limits.max_input_bytes;
    let mut stdin = io::stdin().lock();
    if let Err(e) = (&mut stdin)
        .take(max.saturating_add(1))
        .read_to_end(&mut payload)
    {
        let err = InputError::invalid("payload", "stdin", ReadProblem::Io((&e).into()));
        return hook::failed(adapter, &Failure::Input(err));
    }
    if let Err(err) = input::check_size("payload", payload.len() as u64, limits) {
        return hook::failed(adapter, &Failure::Input(err));
    }
    // The call, when the payload gives one: a large store is then read by the lean
    // loader for that call alone.
    let call = match adapter {
        // A Codex patch run through the shell is judged against the records on
        // `apply_patch` too, which a store read for this `Bash` call alone would leave out.
        Adapter::PreTool(harness) => hook::pre_tool_action(harness, &payload)
            .ok()
            .filter(|call| !(harness == Harness::Codex && hook::shell_patch(call))),
        Adapter::PreCompact => None,
    };
    let mut setup = hook_setup(args, call, &payload, adapter, wait_until, limits, early);
    if let (Adapter::PreTool(harness), Ok(setup)) = (adapter, setup.as_mut())
        && setup.context.is_none()
        && let Some(request) = hook::transcript_request(harness, &payload, setup)
    {
        setup.context = Some(request.map_err(Unread::Invalid).and_then(|r| {
            read_context(&Wanted {
                path: &r.path,
                subagent: r.subagent.as_ref(),
                harness: Some(harness),
                call: r.call.as_deref(),
                session: r.session.as_deref(),
                cwd: r.cwd.as_deref(),
                deadline: Some(wait_until),
                files: &args.context_file,
                store: Some(&args.store),
                store_read: None,
                limits,
                live_call: true,
            })
        }));
    }
    hook::answer(adapter, &payload, setup.as_ref())
}

pub(super) fn hook_setup(
    args: &HookArgs,
    call: Option<Action>,
    payload: &[u8],
    adapter: Adapter,
    wait_until: std::time::Instant,
    limits: Limits,
    early: Option<input::LightPass>,
) -> Result<Setup, InputError> {
    // Standard input carries the hook payload, read before this.
    let payload_read = ("the hook payload".to_string(), "-".to_string());
    let files = hook_files(args);
    let reads = files.iter().map(|f| (f.what.clone(), f.path.clone()));
    stdin_once(std::iter::once(payload_read).chain(reads))?;
    if matches!(
        adapter,
        Adapter::PreTool(Harness::ClaudeCode) | Adapter::PreCompact
    ) {
        let project = std::env::var_os("CLAUDE_PROJECT_DIR").filter(|p| !p.is_empty());
        if let (Some(project), Ok(cwd)) = (project, std::env::current_dir()) {
            relative_outside_project(&files, Path::new(&project), &cwd)?;
        }
    }
    let kept_from = match args.kept_from {
        KeptFromArg::Kept => hook::KeptFrom::Kept,
        KeptFromArg::Transcript => hook::KeptFrom::Transcript,
    };
    kept_flags_agree(
        args.kept.as_deref(),
        args.retention,
        kept_from == hook::KeptFrom::Transcript,
    )?;
    if kept_from == hook::KeptFrom::Kept && !args.context_file.is_empty() {
        let problem = FlagProblem::ContextWithoutTranscript;
        return Err(InputError::invalid("--context-file", "flags", problem));
    }
    // The transcript's context, when it was read for the lean loader and the exact one
    // must do after all.
    let mut context = None;
    if let (hook::KeptFrom::Transcript, Adapter::PreTool(harness), Some(call)) =
        (kept_from, adapter, call.as_ref())
    {
        let wanted = Transcribed {
            harness,
            payload,
            call,
            wait_until,
        };
        match lean_transcript_setup(args, &wanted, limits, early) {
            Ok(setup) => return Ok(setup),
            Err(read) => context = *read,
        }
    }
    // Read once; an error in it is reported after the store's own (the exact loader's
    // order), and a large store is read for the payload's call only with these ids.
    let kept = args
        .kept
        .as_deref()
        .map(|v| kept_text(v, limits))
        .transpose();
    let call = call.filter(|_| kept_from == hook::KeptFrom::Kept && kept.is_ok());
    let request = input::Request {
        origin: &args.store,
        source: input::Source::Path(&args.store),
        kept: kept.as_ref().ok().and_then(Option::as_ref),
        retention: args.retention,
        limits,
    };
    let stored = input::load_store(&request, call)?;
    kept?;
    let tools = guarded_tools(args, limits)?;
    if tools.is_none() && stored.input.tools.as_ref().is_some_and(Vec::is_empty) {
        let problem = crate::action::ToolError::NoneGuarded;
        return Err(InputError::invalid(&args.store, "key `tools`", problem));
    }
    Ok(Setup {
        input: stored.input,
        store: args.store.clone(),
        kept_origin: if args.kept.is_some() {
            "--kept".to_string()
        } else {
            clean(&args.store).into_owned()
        },
        kept: stored.kept,
        retention: args.retention,
        tools,
        options: CheckOptions {
            allow_unevaluable: args.allow_unevaluable,
        },
        kept_from,
        context,
        compaction: stored.compaction,
    })
}

/// A file a hook reads besides its payload.
#[derive(Debug)]
pub(super) struct HookFile {
    /// The flag and its value, for messages and [`stdin_once`]: `--store `s.json``,
    /// `--kept `@k.txt`` (see [`input_read`], [`flag_read`]).
    pub(super) what: String,
    /// The path read.
    pub(super) path: String,
    /// Whether the flag's value is `@` and the path (`--kept`, `--tools`), as a fix
    /// must write it again: without the `@`, the path is read as ids or tool names.
    pub(super) at: bool,
}

impl HookFile {
    /// The flag's value that reads `path` (another way to write this file's path, as a
    /// shell word): `path`, or `@` and `path` for an `@FILE`.
    pub(super) fn value_for(&self, path: &str) -> String {
        format!("{}{path}", if self.at { "@" } else { "" })
    }
}

/// The files a hook reads besides its payload: `--store`, `--kept @FILE`, `--tools
/// @FILE` and each `--context-file`.
pub(super) fn hook_files(args: &HookArgs) -> Vec<HookFile> {
    let file = |at: bool| move |(what, path)| HookFile { what, path, at };
    let flags = [
        input_read("--store", &args.store).map(file(false)),
        flag_read("--kept", args.kept.as_deref()).map(file(true)),
        flag_read("--tools", args.tools.as_deref()).map(file(true)),
    ];
    let context_files = args
        .context_file
        .iter()
        .map(|f| input_read("--context-file", f).map(file(false)));
    flags.into_iter().chain(context_files).flatten().collect()
}

/// Claude Code runs a hook command in the session's current directory, which moves when
/// the agent changes directory, not in the project (`$CLAUDE_PROJECT_DIR`): a relative
/// path there names another file than the one `doctor` checked, and a store found there
/// would judge the call. So while the two directories differ, a relative path among
/// `files` is an error that says to anchor it at the project.
fn relative_outside_project(
    files: &[HookFile],
    project: &Path,
    cwd: &Path,
) -> Result<(), InputError> {
    let same = cwd == project
        || matches!(
            (cwd.canonicalize(), project.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        );
    if same {
        return Ok(());
    }
    let relative = files
        .iter()
        .find(|f| !names_stdin(&f.path) && Path::new(&f.path).is_relative());
    match relative {
        None => Ok(()),
        Some(f) => {
            let problem = FlagProblem::RelativeOutsideProject {
                instead: f.value_for(&format!("\"$CLAUDE_PROJECT_DIR\"/{}", clean(&f.path))),
                cwd: clean(&cwd.to_string_lossy()).into_owned(),
                project: clean(&project.to_string_lossy()).into_owned(),
            };
            Err(InputError::invalid(&f.path, f.what.as_str(), problem))
        }
    }
}

/// Begins the light pass over the store (see [`input::LightPass`]) as soon as the hook
/// starts, when the flags ask for the kept set from the transcript of a pre-tool call:
/// the store is then read while the payload is (half a millisecond sooner on the bench).
/// Its texts are used only by the lean setup of such a call, which judges the bytes it
/// read (see [`lean_transcript_setup`]); any other way through drops it, and it stops.
/// `None` when the flags ask for something else, the store is standard input or not a
/// regular file, or no thread could be had: the setup then runs the light pass itself.
fn early_light_pass(args: &HookArgs, limits: Limits) -> Option<input::LightPass> {
    let Adapter::PreTool(harness) = args.harness.adapter() else {
        return None;
    };
    if args.kept_from != KeptFromArg::Transcript || names_stdin(&args.store) {
        return None;
    }
    input::LightPass::begin(&args.store, Retention::Transcript(harness), limits)
}

/// A pre-tool call under `--kept-from transcript`.
struct Transcribed<'a> {
    harness: Harness,
    payload: &'a [u8],
    call: &'a Action,
    wait_until: std::time::Instant,
}

/// The setup of a pre-tool hook under `--kept-from transcript` whose store the lean
/// loader reads: a light pass over the store gives each record's text (on a thread of
/// its own, while the transcript is read), the transcript gives the live context, and
/// the records in view are the lean loader's kept ids. `Err` sends the caller to the
/// exact loader, with the context when it was read (`None`: read it as for any store),
/// boxed (a context is large).
fn lean_transcript_setup(
    args: &HookArgs,
    wanted: &Transcribed<'_>,
    limits: Limits,
    early: Option<input::LightPass>,
) -> Result<Setup, Box<Option<Result<Context, Unread>>>> {
    let tools = guarded_tools(args, limits).map_err(|_| Box::new(None))?;
    let read_context_of = || {
        hook::requested_transcript(wanted.harness, wanted.payload).map(|request| {
            request.map_err(Unread::Invalid).and_then(|r| {
                read_context(&Wanted {
                    path: &r.path,
                    subagent: r.subagent.as_ref(),
                    harness: Some(wanted.harness),
                    call: r.call.as_deref(),
                    session: r.session.as_deref(),
                    cwd: r.cwd.as_deref(),
                    deadline: Some(wanted.wait_until),
                    files: &args.context_file,
                    store: Some(&args.store),
                    store_read: None,
                    limits,
                    live_call: true,
                })
            })
        })
    };
    let haystack_of = |context: &Option<Result<Context, Unread>>| match context {
        Some(Ok(c)) => Some(c.haystack()),
        _ => None,
    };
    let request = input::Request {
        origin: &args.store,
        source: input::Source::Path(&args.store),
        kept: None,
        retention: Retention::Transcript(wanted.harness),
        limits,
    };
    // Every tool is guarded: read the transcript while the light pass runs, and normalise
    // it while the light pass still runs (once the pass is done, the context is
    // normalised after it: by the lean setup below, or by the exact path when the pass
    // gave up on the store).
    let beside = |done: &dyn Fn() -> bool| {
        let context = read_context_of();
        let early = if done() { None } else { haystack_of(&context) };
        (context, early)
    };
    let (texts, context, early) = match (tools.is_none(), early) {
        (true, light) => {
            let (texts, (context, early)) = match light {
                Some(light) => light.beside(beside),
                None => input::store_texts_beside(&request, beside),
            };
            (texts, context, early)
        }
        (false, light) => {
            // The light pass first: a tool it shows to be outside the gate's charge is
            // never waited for.
            let texts = match light {
                Some(light) => light.texts(),
                None => input::store_texts(&request),
            };
            let guarded = texts
                .as_ref()
                .is_some_and(|t| t.may_guard(tools.as_deref(), &wanted.call.tool));
            let context = if guarded { read_context_of() } else { None };
            (texts, context, None)
        }
    };
    let context = match context {
        Some(Ok(context)) => context,
        other => return Err(Box::new(other)),
    };
    let Some(texts) = texts else {
        return Err(Box::new(Some(Ok(context))));
    };
    let haystack = early.unwrap_or_else(|| context.haystack());
    let stored = texts.load_in_view(&request, wanted.call.clone(), &haystack);
    let Some(stored) = stored else {
        return Err(Box::new(Some(Ok(context))));
    };
    // A document's `tools` that names no tool: the exact path refuses it.
    if tools.is_none() && stored.input.tools.as_ref().is_some_and(Vec::is_empty) {
        return Err(Box::new(Some(Ok(context))));
    }
    Ok(Setup {
        input: stored.input,
        store: args.store.clone(),
        kept_origin: clean(&args.store).into_owned(),
        kept: None,
        retention: Retention::Given,
        tools,
        options: CheckOptions {
            allow_unevaluable: args.allow_unevaluable,
        },
        kept_from: hook::KeptFrom::Transcript,
        context: Some(Ok(context)),
        compaction: stored.compaction,
    })
}

/// The tool names `--tools` gives (inline or `@FILE`), if it is given. A list that names
/// no tool (`--tools "$TOOLS"` with the variable unset) is refused: the hook would guard
/// only the tools a rule names, and pass every other call unjudged.
fn guarded_tools(args: &HookArgs, limits: Limits) -> Result<Option<Vec<String>>, InputError> {
    args.tools
        .as_deref()
        .map(|v| {
            let harness = match args.harness.adapter() {
                Adapter::PreTool(harness) => Some(harness),
                Adapter::PreCompact => None,
            };
            let (origin, text, _) = hook_tools_text(v, harness, limits)?;
            let tools = input::tools_from_flag(&origin, &text)?;
            if tools.is_empty() {
                let problem = crate::action::ToolError::NoneGuarded;
                return Err(InputError::invalid(&origin, "tools", problem));
            }
            Ok(tools.into_iter().map(|t| t.name).collect())
        })
        .transpose()
}

/// Writes a hook's reply, or its fallback when it cannot be written. When neither can
/// be written the exit code is the larger of the two: a deny still exits 2.
pub(super) fn write_reply(reply: &hook::Reply) -> Exit {
    if write_out(reply) {
        return reply.exit;
    }
    match reply.fallback.as_deref() {
        Some(f) if write_out(f) => f.exit,
        Some(f) if f.exit.code() > reply.exit.code() => f.exit,
        Some(_) | None => reply.exit,
    }
}

pub(super) fn write_out(reply: &hook::Reply) -> bool {
    let out = reply.stdout.is_empty() || emit(&reply.stdout).is_ok();
    let err = reply.stderr.is_empty() || {
        let mut e = io::stderr().lock();
        e.write_all(&reply.stderr).and_then(|()| e.flush()).is_ok()
    };
    out && err
}
