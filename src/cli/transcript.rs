//! Reading a harness transcript: from the end, as much as the live context needs, and
//! fresh (waiting, within a deadline, until it records the call being judged).

use std::borrow::Cow;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::*;
use crate::hook::{Subagent, Unread};
use crate::memory::Pages;
use crate::transcript::{self, Live, Window};
use crate::view::{Context, Spare};
use crate::wiring::{self, claude_code, gemini_cli};

/// How much of a transcript's end is read first; each retry reads half as much again
/// (the bytes in front of what was read). A window without the harness's compaction
/// mark is turned away before it is parsed, so a retry costs little; a window that
/// overshoots the live context costs the bytes read, held and split into lines for
/// nothing, and growing by half overshoots by at most a third of what is read.
const FIRST_TAIL: u64 = 256 * 1024;

/// How long to sleep between looks at a transcript that is not fresh yet.
const POLL: Duration = Duration::from_millis(10);

/// What to read and how long to wait for it.
pub(super) struct Wanted<'a> {
    /// The transcript file (with `subagent`, the session's, beside which the subagent's is).
    pub(super) path: &'a str,
    /// Claude Code: the subagent that makes the call, whose own transcript is read.
    pub(super) subagent: Option<&'a Subagent>,
    /// Its format, when named; recognised otherwise.
    pub(super) harness: Option<Harness>,
    /// The call the transcript must record before it is judged.
    pub(super) call: Option<&'a str>,
    /// Gemini CLI: the session the transcript must be (the payload's `session_id`).
    pub(super) session: Option<&'a str>,
    /// Gemini CLI, a call being made now: the directory it started in (the payload's
    /// `cwd`), whose settings are checked for ones that change what it sends.
    pub(super) cwd: Option<&'a str>,
    /// Until when to wait for the file and the call; `None`: read once.
    pub(super) deadline: Option<Instant>,
    /// `--context-file` values.
    pub(super) files: &'a [String],
    /// The record store, which no context file may be (`None`: none given).
    pub(super) store: Option<&'a str>,
    /// The record store's bytes, when it was read from standard input (a pipe, which
    /// names no file): no context file may hold the same bytes.
    pub(super) store_read: Option<&'a [u8]>,
    /// The input limits (`--max-input-bytes`).
    pub(super) limits: Limits,
    /// The call is being made now (a hook): where the payload does not say which agent
    /// makes it (Gemini CLI), a subagent at work is looked for (see [`gemini_subagents`]).
    pub(super) live_call: bool,
}

/// The agent's context: the transcript's live context, read fresh, and the context files.
/// An error says whether the transcript may yet be written ([`Unread::NotYet`]).
pub(super) fn read_context(wanted: &Wanted<'_>) -> Result<Context, Unread> {
    // Claude Code writes nothing of a `REPL` call, and the calls its script makes only
    // once the script has ended: no wait finds the context such a call is made in.
    if wanted.harness == Some(Harness::ClaudeCode)
        && let Some(call) = wanted.call
        && transcript::is_claude_code_repl_call(call)
    {
        let problem = TranscriptRead::ReplCall(call.to_string());
        return Err(Unread::Invalid(InputError::invalid(
            wanted.path,
            "transcript",
            problem,
        )));
    }
    let limits = wanted.limits;
    let started = Instant::now();
    let (path, live, head, read) = loop {
        let waiting = wanted.deadline.is_some_and(|d| Instant::now() < d);
        // A subagent's transcript is looked for at each look: Claude Code may file it,
        // one folder down, only while the hook waits.
        let path = match wanted.subagent {
            Some(subagent) => Cow::Owned(subagent_transcript(subagent).map_err(Unread::Invalid)?),
            None => Cow::Borrowed(wanted.path),
        };
        match read_live(&path, wanted.harness, wanted.call, limits) {
            Ok((live, head, read)) if wanted.call.is_none() || live.call_seen => {
                break (path, live, head, read);
            }
            Ok(_) if waiting => {}
            Ok((live, _, _)) => {
                let call = wanted.call.unwrap_or_default().to_string();
                let ms = started.elapsed().as_millis();
                let problem = if live.harness == Harness::Codex
                    && transcript::is_codex_code_mode_call(&call)
                {
                    TranscriptRead::ExecNotRecorded { call, ms }
                } else {
                    TranscriptRead::CallNotRecorded { call, ms }
                };
                return Err(Unread::NotYet(InputError::invalid(
                    &path,
                    "transcript",
                    problem,
                )));
            }
            Err(Unread::NotYet(_)) if waiting => {}
            // Waited for, and still no file there at all: a session that keeps no
            // transcript looks just like one the harness writes late.
            Err(Unread::NotYet(_))
                if wanted.deadline.is_some()
                    && std::fs::symlink_metadata(&*path)
                        .is_err_and(|e| e.kind() == io::ErrorKind::NotFound) =>
            {
                let ms = started.elapsed().as_millis();
                return Err(Unread::NotYet(InputError::invalid(
                    &path,
                    "transcript",
                    TranscriptRead::NotWritten { ms },
                )));
            }
            Err(unread) => return Err(unread),
        }
        std::thread::sleep(POLL);
    };
    // A Gemini CLI payload names no call the file must record: the file must at least be
    // the payload's session's, not another's.
    if let Some(session) = wanted.session
        && live.harness == Harness::GeminiCli
        && transcript::session_head(&head).is_none_or(|h| h.id != session)
    {
        return Err(Unread::Invalid(InputError::invalid(
            &path,
            "line 1",
            TranscriptRead::OtherSession,
        )));
    }
    if live.harness == Harness::GeminiCli {
        // A call being made names its start directory; a session file where Gemini CLI
        // keeps it has it recorded beside it.
        let recorded = gemini_cli::project_root_of(Path::new(path.as_ref()));
        let cwd = wanted
            .cwd
            .map(str::to_string)
            .or_else(|| recorded.and_then(|p| p.to_str().map(str::to_string)));
        gemini_settings(cwd.as_deref(), Some(Path::new(path.as_ref()))).map_err(Unread::Invalid)?;
        if cwd.is_none() {
            warn(&format!(
                "omission-gate: note: `{}` is not where Gemini CLI keeps a session's file (`<.gemini>/tmp/<project>/chats/`, beside `.project_root`), so the settings of the directory the session started in were not checked: with context management on there, Gemini CLI sent the model less than this file shows; judge the file where Gemini CLI keeps it to have them checked",
                clean(&path)
            ));
        }
    }
    // Claude Code asks the API for whatever edits `CLAUDE_CODE_EXTRA_BODY` names, and the
    // transcript does not say what they took out. The hook has Claude Code's environment;
    // `check --transcript` reads its own, as for the refusal fallback.
    if live.harness == Harness::ClaudeCode
        && let Some(body) = std::env::var_os(claude_code::EXTRA_BODY_VAR)
        && claude_code::extra_body_edits_context(&body.to_string_lossy())
    {
        return Err(Unread::Invalid(InputError::invalid(
            claude_code::EXTRA_BODY_VAR,
            "environment",
            TranscriptRead::ExtraBodyEdits,
        )));
    }
    // The subagents at work (Gemini CLI), read as the session was: a file just created
    // or being written is looked at again while the hook may wait.
    let also = loop {
        let waiting = wanted.deadline.is_some_and(|d| Instant::now() < d);
        let read = gemini_subagents(wanted, &path, &live, &head).and_then(|files| {
            files
                .iter()
                .map(|file| {
                    read_live(file, Some(Harness::GeminiCli), None, limits).map(|(live, _, _)| live)
                })
                .collect::<Result<Vec<Live>, Unread>>()
        });
        match read {
            Ok(also) => break also,
            Err(_) if waiting => std::thread::sleep(POLL),
            Err(e) => return Err(e),
        }
    };
    let files = context_files::counted(wanted, &path, &live)?;
    Ok(Context {
        file: path.into_owned(),
        detected: wanted.harness.is_none(),
        live,
        files,
        also,
        spare: Spare::new(read),
    })
}

/// Gemini CLI's settings for a session started in `cwd` (whose file is `transcript`), as
/// it read them: an error when one turns on its context management or gives a
/// `BeforeModel` hook, either of which changes what it sends the model without writing
/// that to the session file, or when a
/// file that names such a setting cannot be read as Gemini CLI reads it (Gemini CLI does
/// not start with a settings file it cannot read). Also an error: a hook there (or in
/// the system files where Gemini CLI keeps them by default) whose own `env` may have
/// given this process the variables it finds them by (see
/// [`gemini_cli::hook_env_location`]).
pub(super) fn gemini_settings(
    cwd: Option<&str>,
    transcript: Option<&Path>,
) -> Result<(), InputError> {
    let env = |key: &str| match key {
        "HOME" => std::env::var_os(key).or_else(|| std::env::home_dir().map(Into::into)),
        _ => std::env::var_os(key),
    };
    let own = |key: &str| std::env::var_os(key);
    let files = gemini_cli::settings_files(cwd.map(Path::new), transcript, env);
    // The system files where Gemini CLI keeps them when its environment names none: a
    // hook's `env` may name others to the gate, and the gate's own hook may be there.
    let defaults: Vec<PathBuf> = gemini_cli::system_files(|_: &str| None)
        .into_iter()
        .filter(|(file, skipped)| skipped.is_none() && !files.contains(file))
        .map(|(file, _)| file)
        .collect();
    let read_by_gemini = files.iter().map(|f| (f, true));
    for (file, read) in read_by_gemini.chain(defaults.iter().map(|f| (f, false))) {
        let origin = file.to_string_lossy();
        let text = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                let problem = TranscriptRead::Settings(io_reason(&e));
                return Err(InputError::invalid(&origin, "settings", problem));
            }
        };
        // A key may spell a letter as a `\u` escape, which Gemini CLI reads as the letter:
        // a file with one is read whole.
        let names = |t: &[u8]| {
            memchr::memmem::find(t, b"\\u").is_some()
                || gemini_cli::CONTEXT_MANAGED
                    .iter()
                    .chain([&gemini_cli::MODEL_HOOK])
                    .chain(&gemini_cli::LOCATION_VARS)
                    .any(|key| memchr::memmem::find(t, key.as_bytes()).is_some())
        };
        if !names(&text) {
            continue;
        }
        let settings = std::str::from_utf8(&text)
            .map_err(|_| "not UTF-8 text".to_string())
            .and_then(|t| wiring::edit::read(t, true).map_err(|e| e.to_string()))
            .map_err(|why| {
                InputError::invalid(&origin, "settings", TranscriptRead::Settings(why))
            })?;
        if let Some(var) = gemini_cli::hook_env_location(&settings, own) {
            let problem = TranscriptRead::HookEnvLocation(var);
            return Err(InputError::invalid(&origin, "settings", problem));
        }
        if !read {
            continue;
        }
        if let Some(key) = gemini_cli::context_managed(&settings) {
            let problem = TranscriptRead::ContextManaged(key);
            return Err(InputError::invalid(&origin, "settings", problem));
        }
        if gemini_cli::model_hook(&settings) {
            let problem = TranscriptRead::ModelHook;
            return Err(InputError::invalid(&origin, "settings", problem));
        }
    }
    gemini_extensions(cwd, transcript, env, own)
}

/// The extensions Gemini CLI may load for a session started in `cwd` (whose file is
/// `transcript`): an error when one brings a `BeforeModel` hook (see
/// [`gemini_cli::extension_model_hook`]), or when where they are, or a file that may say
/// so, cannot be read. An extension `extension-enablement.json` turns off counts: `gemini
/// -e NAME` turns it on, and the hook does not see Gemini CLI's command line. One the
/// settings keep from loading counts too.
fn gemini_extensions(
    cwd: Option<&str>,
    transcript: Option<&Path>,
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
    own: impl Fn(&str) -> Option<std::ffi::OsString> + Copy,
) -> Result<(), InputError> {
    let dirs = gemini_cli::extension_dirs(transcript, env);
    if dirs.is_empty() {
        let problem = TranscriptRead::ExtensionsHome;
        return Err(InputError::invalid(
            gemini_cli::EXTENSIONS_DIR,
            "extensions",
            problem,
        ));
    }
    // A file is read whole only when it may name what is looked for (a `\u` escape may
    // spell it); one that then cannot be read as Gemini CLI reads it is an error.
    let read = |file: &Path, keys: &[&str]| -> Result<Option<serde_json::Value>, InputError> {
        let origin = file.to_string_lossy();
        let bad =
            |why: String| InputError::invalid(&origin, "extensions", TranscriptRead::Settings(why));
        let bytes = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(bad(io_reason(&e))),
        };
        let names = |t: &[u8]| {
            memchr::memmem::find(t, b"\\u").is_some()
                || keys
                    .iter()
                    .any(|k| memchr::memmem::find(t, k.as_bytes()).is_some())
        };
        if !names(&bytes) {
            return Ok(None);
        }
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| bad(e.to_string()))
    };
    for dir in dirs {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                let problem = TranscriptRead::ExtensionsFolder(io_reason(&e));
                return Err(InputError::invalid(
                    &dir.to_string_lossy(),
                    "extensions",
                    problem,
                ));
            }
        };
        let mut folders: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        folders.sort();
        for installed in folders {
            // A linked extension is read from the folder it was installed from.
            let install = read(&installed.join(gemini_cli::INSTALL_METADATA), &["link"])?;
            let linked = install
                .as_ref()
                .filter(|m| m.get("type").and_then(serde_json::Value::as_str) == Some("link"))
                .map(|m| m.get("source").and_then(serde_json::Value::as_str));
            let folder = match linked {
                None => installed.clone(),
                Some(Some(source)) if Path::new(source).is_absolute() || cwd.is_some() => {
                    Path::new(cwd.unwrap_or("/")).join(source)
                }
                Some(source) => {
                    let origin = installed.join(gemini_cli::INSTALL_METADATA);
                    let problem = match source {
                        None => TranscriptRead::LinkNotString,
                        Some(_) => TranscriptRead::LinkRelative,
                    };
                    return Err(InputError::invalid(
                        &origin.to_string_lossy(),
                        "extensions",
                        problem,
                    ));
                }
            };
            let file = folder.join(gemini_cli::EXTENSION_HOOKS);
            let keys: Vec<&str> = std::iter::once(gemini_cli::MODEL_HOOK)
                .chain(gemini_cli::LOCATION_VARS)
                .collect();
            let Some(hooks) = read(&file, &keys)? else {
                continue;
            };
            let problem = if let Some(var) = gemini_cli::hook_env_location(&hooks, own) {
                TranscriptRead::HookEnvLocation(var)
            } else if gemini_cli::extension_model_hook(&hooks) {
                TranscriptRead::ExtensionModelHook
            } else {
                continue;
            };
            return Err(InputError::invalid(
                &file.to_string_lossy(),
                "extension hooks",
                problem,
            ));
        }
    }
    Ok(())
}

/// The transcript of a Claude Code subagent as its folder holds it now:
/// `agent-<id>.jsonl` in the session's `subagents` folder, or the one file of that name
/// one or two folders further down (a subagent filed under a group; a Workflow's agent,
/// under `workflows/<run>`). When there is none yet, the first: the reader waits for it,
/// and names it. Two files of that name are an error.
fn subagent_transcript(subagent: &Subagent) -> Result<String, InputError> {
    let name = subagent.file_name();
    let direct = subagent.folder().join(&name);
    if direct.is_file() {
        return Ok(direct.to_string_lossy().into_owned());
    }
    let folders = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .collect()
    };
    let one_down = folders(subagent.folder());
    let two_down = one_down.iter().flat_map(|d| folders(d));
    let mut nested: Vec<PathBuf> = one_down
        .iter()
        .cloned()
        .chain(two_down)
        .map(|folder| folder.join(&name))
        .filter(|path| path.is_file())
        .collect();
    nested.sort();
    match nested.as_slice() {
        [one] => Ok(one.to_string_lossy().into_owned()),
        [] => Ok(direct.to_string_lossy().into_owned()),
        [first, second, ..] => {
            Err(subagent.two_transcripts(&first.to_string_lossy(), &second.to_string_lossy()))
        }
    }
}

/// The files of the Gemini CLI subagents at work, whose views the call is judged against
/// too.
///
/// Gemini CLI runs a subagent's tool calls through the same hook as the main agent's,
/// with the same payload: the session's transcript, and neither a call id nor an agent
/// id. A subagent keeps its own session file, `<chats>/<session id>/<agent id>.jsonl`
/// (its first line says `"kind":"subagent"`), started while the main agent's response
/// that invoked it is acted on; that response records the subagent's `agentId` only once
/// all its calls have ended, and they run side by side. So while the session's last
/// message is such a response, a subagent started since then (and not yet recorded as
/// ended) may be the caller, and so may the main agent: the call is judged against each
/// of their views, and a record is in view only when every one of them shows it. A file
/// the gate cannot read or date is an error: it cannot tell what the caller sees (one
/// not there any more, or whose first line is not written yet, may be read on a retry).
///
/// `path` is the session's file, `live` its live context and `head` its first line, as
/// read for the live context.
fn gemini_subagents(
    wanted: &Wanted<'_>,
    path: &str,
    live: &Live,
    head: &[u8],
) -> Result<Vec<String>, Unread> {
    if !wanted.live_call || live.harness != Harness::GeminiCli {
        return Ok(Vec::new());
    }
    let unsure =
        |why: GeminiDoubt| InputError::invalid(path, "transcript", TranscriptRead::Caller(why));
    let invalid = |why: GeminiDoubt| Unread::Invalid(unsure(why));
    let limits = wanted.limits;
    let head_of = |file: &Path| -> io::Result<Vec<u8>> {
        let mut f = File::open(file)?;
        let len = f.metadata()?.len();
        read_head(&mut f, len, limits)
    };
    let Some(session) = transcript::session_head(head) else {
        return Err(invalid(GeminiDoubt::NoSession));
    };
    if !crate::text::is_plain_name(&session.id) {
        return Err(invalid(GeminiDoubt::SessionNotPlain));
    }
    let folder = Path::new(path)
        .parent()
        .unwrap_or_else(|| Path::new(""))
        .join(&session.id);
    let folder_error = |e: &io::Error| {
        invalid(GeminiDoubt::Folder {
            folder: folder.clone(),
            reason: e.into(),
        })
    };
    let mut files = Vec::new();
    match std::fs::read_dir(&folder) {
        Ok(entries) => {
            for entry in entries {
                files.push(entry.map_err(|e| folder_error(&e))?.path());
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(folder_error(&e)),
    }
    files.retain(|f| f.extension().is_some_and(|x| x == "jsonl"));
    files.sort();
    let mut at_work = Vec::new();
    for file in files {
        let head = head_of(&file).map_err(|e| {
            let err = unsure(GeminiDoubt::File {
                file: file.clone(),
                reason: (&e).into(),
            });
            if e.kind() == io::ErrorKind::NotFound {
                Unread::NotYet(err)
            } else {
                Unread::Invalid(err)
            }
        })?;
        let Some(sub) = transcript::session_head(&head) else {
            let err = unsure(GeminiDoubt::NotSession(file));
            // A first line without its line break is still being written.
            return Err(if head.ends_with(b"\n") {
                Unread::Invalid(err)
            } else {
                Unread::NotYet(err)
            });
        };
        // A session file there that does not say it is the main one may be a subagent's
        // (a version that does not write `kind`): judged as one, it can only take
        // records out of view.
        if sub.kind.as_deref() == Some("main") {
            continue;
        }
        let Some(responding) = live.responding.as_deref() else {
            return Err(invalid(GeminiDoubt::NoResponse(file)));
        };
        let since = responding.since.as_str();
        match sub.start.as_deref() {
            Some(start) if transcript::is_utc_millis(start) && transcript::is_utc_millis(since) => {
                if start >= since && !responding.finished_agents.contains(&sub.id) {
                    at_work.push(file.to_string_lossy().into_owned());
                }
            }
            _ => {
                return Err(invalid(GeminiDoubt::Start(file)));
            }
        }
    }
    Ok(at_work)
}

/// Reads a transcript's live context from its end: a first tail, then half as much again
/// each time the reader asks for more, up to the whole file. With it, the file's first
/// line (Gemini CLI's names the session, whose subagents are looked for), and the bytes
/// read, whose memory a haystack can have once the live context is taken out of them.
fn read_live(
    path: &str,
    harness: Option<Harness>,
    call: Option<&str>,
    limits: Limits,
) -> Result<(Live, Vec<u8>, Pages), Unread> {
    let cannot = |e: &io::Error| {
        let err = InputError::invalid(path, "transcript", ReadProblem::Io(IoReason::from(e)));
        if e.kind() == io::ErrorKind::NotFound {
            Unread::NotYet(err)
        } else {
            Unread::Invalid(err)
        }
    };
    let mut file = File::open(path).map_err(|e| cannot(&e))?;
    let len = file.metadata().map_err(|e| cannot(&e))?.len();
    // The limit holds for what is read (the first line and the end), not for the file:
    // a long session costs only its live part.
    let head = read_head(&mut file, len, limits).map_err(|e| cannot(&e))?;
    input::check_size(path, head.len() as u64, limits).map_err(Unread::Invalid)?;
    let max = limits.max_input_bytes;
    let mut size = FIRST_TAIL.min(len).min(max);
    // The hook runs in Claude Code's environment (its settings' `env` included), which
    // says which model, if any, is its own refusal fallback; `check --transcript` reads
    // its own.
    let fallback = transcript::RefusalFallback::of(|key| std::env::var(key).ok());
    // The end of the file read so far: bytes `offset..len`. Each window is half as large
    // again as the last, and only the bytes in front of what was read are read (the file
    // only grows at its end, past `len`, which this read never looks at).
    let room = usize::try_from(len.min(max))
        .unwrap_or(usize::MAX)
        .min(TAIL_ROOM);
    let mut tail = Pages::new_from_end(room).ok_or_else(|| cannot(&too_large()))?;
    let mut offset = len;
    loop {
        let from = len - size;
        if from < offset {
            match read_in_front(&mut file, &mut tail, from, offset - from) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    // Shorter than it was: rewritten under us. Read it again from the start.
                    let shrank = InputError::invalid(path, "transcript", TranscriptRead::Shrank);
                    return Err(Unread::NotYet(shrank));
                }
                Err(e) => return Err(cannot(&e)),
            }
            offset = from;
        }
        let window = Window {
            head: &head,
            tail: &tail,
            offset,
        };
        match transcript::read_with(harness, window, call, &fallback) {
            Ok(live) => return Ok((live, head, tail)),
            Err(transcript::Failure::NeedMore) if offset > 0 => {
                if size >= max {
                    let problem = TranscriptRead::TooFarBack(max);
                    return Err(Unread::Invalid(InputError::invalid(
                        path,
                        "transcript",
                        problem,
                    )));
                }
                size = size.saturating_add(size / 2).min(len).min(max);
            }
            Err(transcript::Failure::NeedMore) => {
                let problem = TranscriptRead::NoStart;
                return Err(Unread::Invalid(InputError::invalid(
                    path,
                    "transcript",
                    problem,
                )));
            }
            Err(transcript::Failure::Invalid { at, problem }) => {
                let line = line_number(&mut file, at).map_err(|e| cannot(&e))?;
                let settled = problem.is_settled();
                let err = InputError::invalid(path, format!("line {line}"), problem);
                // A file that does not yet hold the call being judged is still being
                // written (a compaction's boundary before its summary, say): worth another
                // look while waiting. Past the deadline, the error stands.
                let unwritten = !settled
                    && call.is_some_and(|c| memchr::memmem::find(&tail, c.as_bytes()).is_none());
                return Err(
                    if len == 0 || at == 0 && !head.ends_with(b"\n") || unwritten {
                        Unread::NotYet(err)
                    } else {
                        Unread::Invalid(err)
                    },
                );
            }
        }
    }
}

/// The file's first line, up to and including its `\n` (all of a file that has none).
pub(super) fn read_head(file: &mut File, len: u64, limits: Limits) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut chunk = 64 * 1024u64;
    let cap = len.min(limits.max_input_bytes.saturating_add(1));
    while (head.len() as u64) < cap {
        let start = head.len() as u64;
        let more = read_range(file, start, chunk.min(cap - start))?;
        if more.is_empty() {
            break;
        }
        if let Some(i) = memchr::memchr(b'\n', &more) {
            head.extend_from_slice(more.get(..=i).unwrap_or_default());
            return Ok(head);
        }
        head.extend_from_slice(&more);
        chunk = chunk.saturating_mul(2);
    }
    Ok(head)
}

/// Reads the `size` bytes of the file at `offset` into the front of `tail`, in place: the
/// bytes held are not moved while there is room in front of them, and are copied once
/// into larger memory when there is not (four times the room, but never more than the
/// file holds from `offset` on and the bytes held). A file that ends before them is
/// `UnexpectedEof`.
fn read_in_front(file: &mut File, tail: &mut Pages, offset: u64, size: u64) -> io::Result<()> {
    let n = usize::try_from(size).map_err(|_| too_large())?;
    if tail.in_front() < n {
        let room = tail.len().checked_add(n).ok_or_else(too_large)?;
        let most = usize::try_from(offset).map_or(usize::MAX, |o| o.saturating_add(room));
        let grown_room = tail.room().saturating_mul(4).min(most).max(room);
        let mut grown = Pages::new_from_end(grown_room).ok_or_else(too_large)?;
        grown
            .front(tail.len())
            .ok_or_else(too_large)?
            .copy_from_slice(tail);
        *tail = grown;
    }
    let front = tail.front(n).ok_or_else(too_large)?;
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(front)
}

fn too_large() -> io::Error {
    io::Error::new(io::ErrorKind::OutOfMemory, "too large to hold")
}

/// The most room the end of a transcript is first read into: memory not touched costs
/// nothing, and a live context of a few megabytes is read without a copy.
const TAIL_ROOM: usize = 8 << 20;

pub(super) fn read_range(file: &mut File, offset: u64, size: u64) -> io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(offset))?;
    let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(size).read_to_end(&mut out)?;
    Ok(out)
}

/// The 1-based line that starts at byte `at` (for messages only: it reads the file up
/// to there).
fn line_number(file: &mut File, at: u64) -> io::Result<u64> {
    file.seek(SeekFrom::Start(0))?;
    let mut reader = io::BufReader::new(file.take(at));
    let mut count = 1u64;
    loop {
        let buf = io::BufRead::fill_buf(&mut reader)?;
        if buf.is_empty() {
            return Ok(count);
        }
        count += memchr::memchr_iter(b'\n', buf).count() as u64;
        let n = buf.len();
        io::BufRead::consume(&mut reader, n);
    }
}

/// `context FILE [--harness H] [--store S]`: the audit behind a `transcript` verdict.
pub(super) fn run_context(args: &ContextArgs, limits: Limits, out: Output) -> Exit {
    match context_text(args, limits) {
        Ok(text) => out.write_report(text.as_bytes(), Exit::Success),
        Err(e) => {
            warn(&format!("omission-gate: invalid-input: {e}"));
            Exit::Error
        }
    }
}

/// Whether two paths name one existing file (through symbolic links, `..` and, on Unix,
/// hard links: the same device and inode). On Unix, stdin (`-`) is the file it was
/// redirected from (`check - < store.jsonl`), and a pipe no file's; elsewhere, no file.
pub(super) fn same_file(a: &str, b: &str) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fn file(p: &str) -> &str {
            if names_stdin(p) { "/dev/stdin" } else { p }
        }
        match (std::fs::metadata(file(a)), std::fs::metadata(file(b))) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        if a == "-" || b == "-" {
            return false;
        }
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

fn context_text(args: &ContextArgs, limits: Limits) -> Result<String, InputError> {
    let reads = [
        input_read("FILE", &args.file),
        args.store.as_deref().and_then(|s| input_read("--store", s)),
    ];
    let context_files = args
        .context_file
        .iter()
        .map(|f| input_read("--context-file", f));
    stdin_once(reads.into_iter().chain(context_files).flatten())?;
    // A store on standard input is read first: no context file may hold its bytes.
    let piped = match args.store.as_deref() {
        Some(s) if names_stdin(s) => Some(read_source(s, limits)?),
        _ => None,
    };
    let context = read_context(&Wanted {
        path: &args.file,
        subagent: None,
        harness: args.harness.map(HarnessArg::harness),
        call: None,
        session: None,
        cwd: None,
        deadline: None,
        files: &args.context_file,
        store: args.store.as_deref(),
        store_read: piped.as_deref(),
        limits,
        live_call: false,
    })?;
    let live = &context.live;
    let bytes = read_source(&args.file, limits)?;
    let starts: Vec<u64> = std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', &bytes).map(|i| i as u64 + 1))
        .collect();
    let line_of = |at: u64| starts.partition_point(|&s| s <= at);
    let found = transcript::compactions(live.harness, &bytes).map_err(|f| match f {
        transcript::Failure::Invalid { at, problem } => {
            InputError::invalid(&args.file, format!("line {}", line_of(at)), problem)
        }
        transcript::Failure::NeedMore => {
            InputError::invalid(&args.file, "transcript", TranscriptRead::NotWhole)
        }
    })?;
    let store = args
        .store
        .as_deref()
        .map(|s| {
            let b = match piped {
                Some(b) => b,
                None => read_source(s, limits)?,
            };
            input::load(origin_name(s), &b, limits)
        })
        .transpose()?;
    let mut out = String::new();
    let mut line = |label: &str, value: &str| {
        out.push_str(&format!("{label:<10}: {}\n", crate::text::one_line(value)));
    };
    line(
        "harness",
        &format!(
            "{}{}",
            live.harness,
            if context.detected { " (detected)" } else { "" }
        ),
    );
    let lines: Vec<String> = found.iter().map(|&at| line_of(at).to_string()).collect();
    line(
        "compacted",
        &match found.len() {
            0 => "no compaction found".to_string(),
            n => format!(
                "{n} compaction{} found, at line{} {}; the live context starts at the last",
                if n == 1 { "" } else { "s" },
                if n == 1 { "" } else { "s" },
                lines.join(", ")
            ),
        },
    );
    line(
        "live",
        &format!(
            "{} strings from the transcript, {} context file{}",
            live.pieces.len(),
            context.files.len(),
            if context.files.len() == 1 { "" } else { "s" }
        ),
    );
    for piece in &live.pieces {
        line(
            "entry",
            &format!(
                "line {} {} ({} chars): {}",
                line_of(piece.at),
                piece.role.name(),
                piece.text.chars().count(),
                first_words(&piece.text)
            ),
        );
    }
    for (name, texts) in &context.files {
        let chars: usize = texts.iter().map(|t| t.chars().count()).sum();
        let first = texts.first().map_or("", String::as_str);
        line(
            "file",
            &format!("{} ({chars} chars): {}", clean(name), first_words(first)),
        );
    }
    if let Some(input) = &store {
        let compaction = context.compaction(&input.store);
        for (pos, record) in input.store.records().iter().enumerate() {
            let label = if compaction.is_kept(pos) {
                "in view"
            } else {
                "not seen"
            };
            let why = match &record.text {
                None => " (no text: never in view)".to_string(),
                Some(_) => String::new(),
            };
            line(
                label,
                &format!(
                    "{} ({}, seq {}){why}",
                    clean(&record.id),
                    clean(record.kind.name()),
                    record.seq
                ),
            );
        }
        line(
            "kept",
            &format!(
                "{} of {} records in view (retention={}, kept-sha256={})",
                compaction.kept(),
                input.store.len(),
                compaction.retention,
                compaction.kept_sha256
            ),
        );
    }
    Ok(out)
}

/// The first few words of a string, normalised, for a listing.
fn first_words(text: &str) -> String {
    const WORDS: usize = 12;
    let normal = crate::view::normalize(text);
    if normal.is_empty() {
        return "(no text)".to_string();
    }
    let mut words = normal.split(' ');
    let head: Vec<&str> = words.by_ref().take(WORDS).collect();
    let more = if words.next().is_some() { " ..." } else { "" };
    format!("{}{more}", clean_brief(&head.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The end of a file read in windows, each in front of the last, is the file's end,
    /// in memory with room for all of it or grown (copied once) when it has not; a file
    /// shorter than the window asked for is `UnexpectedEof`.
    #[test]
    fn windows_read_in_front_are_the_end_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let len = bytes.len() as u64;
        for room in [0, 1000, 256 * 1024, bytes.len()] {
            let mut file = File::open(&path).unwrap();
            let mut tail = Pages::new_from_end(room).unwrap();
            let mut offset = len;
            for size in [10, 256 * 1024, 384 * 1024, 1 << 20, len] {
                let from = len - size;
                if from < offset {
                    read_in_front(&mut file, &mut tail, from, offset - from).unwrap();
                    offset = from;
                }
                assert_eq!(
                    &*tail,
                    &bytes[from as usize..],
                    "room {room}, window {size}"
                );
            }
            let err = read_in_front(&mut file, &mut tail, len - 5, 10).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        }
    }
}
