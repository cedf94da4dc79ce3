//! Which text of a `--context-file` the harness sends its model: the files Claude Code,
//! Codex and Gemini CLI send but do not record (a `CLAUDE.md`, Codex's
//! `model_instructions_file`, Gemini CLI's global `GEMINI.md`), counted as in view only
//! as far as the harness really sends them. A harness reads such a file once, as it
//! starts, so one changed since counts for nothing; Claude Code leaves out front matter
//! and HTML comments, cuts its auto memory `MEMORY.md`, skips a file over 4 MiB or of an
//! extension it does not read, one its settings exclude and those of sources it was
//! started without, and sends its Explore and Plan subagents none; Gemini CLI sends an
//! import in place of each `@word`. Where it cannot be told, the file counts for less,
//! never more.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::transcript::{Wanted, read_head, read_range, same_file};
use super::*;
use crate::hook::{Subagent, Unread};
use crate::transcript::{self, Live};
use crate::wiring::claude_code;

/// The context files of `wanted`, each with the strings of it that the harness sends (none
/// when it sends none of it), for the transcript at `path` whose live context is `live`:
/// an error for a file that cannot be read or is the store or the transcript itself.
pub(super) fn counted(
    wanted: &Wanted<'_>,
    path: &str,
    live: &Live,
) -> Result<Vec<(String, Vec<String>)>, Unread> {
    // What follows reads files (and, for a call being made, the command lines of its
    // ancestors): only for context files, which most hooks are given none of.
    if wanted.files.is_empty() {
        return Ok(Vec::new());
    }
    let limits = wanted.limits;
    let claude = live.harness == Harness::ClaudeCode;
    let memory = !claude || claude_memory_sent(path, wanted.subagent);
    // A call being made: Claude Code started with `--setting-sources` leaving a source out
    // reads none of its memory files; which source a file named here is of cannot be told
    // for sure (a file one imports is of its importer's), so only the managed ones count.
    let ancestors = if wanted.live_call {
        ancestor_args(Path::new("/proc"), std::process::id())
    } else {
        Vec::new()
    };
    let managed_only = claude
        && ancestors
            .iter()
            .find_map(|(_, a)| claude_code::setting_sources_limited(a))
            .unwrap_or(false);
    let (settings, unread_settings) = match live.harness {
        Harness::ClaudeCode => claude_settings(&ancestors),
        _ => (Vec::new(), false),
    };
    let excludes = claude_md_excludes(&settings, unread_settings);
    // Claude Code reads no auto memory index with auto memory off (its `au`): by its
    // variables (the hook has Claude Code's environment) or a settings file.
    let auto_memory_off = claude_code::auto_memory_off_in_env(|var| {
        std::env::var_os(var).map(|v| v.to_string_lossy().into_owned())
    }) || unread_settings
        || settings
            .iter()
            .any(claude_code::auto_memory_off_in_settings);
    // A session in a git worktree inside its main checkout: Claude Code reads none of the
    // main checkout's own files (see [`nested_worktree`]).
    let nested = match live.harness {
        Harness::ClaudeCode => std::env::var_os("CLAUDE_PROJECT_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .and_then(|dir| nested_worktree(&dir)),
        _ => None,
    };
    let project_off = claude && claude_project_memory_off();
    // When the harness read the files named here for this session, at the latest: each
    // reads them as it starts, and sends what it read all session (seen: a `CLAUDE.md`,
    // Codex's `model_instructions_file` or the global `GEMINI.md` that the agent rewrote
    // mid-turn was in no later request). Claude Code and Codex read them before their
    // transcript dates the session (however long the first prompt waits), so a call
    // being made dates them by its process too, if earlier; Gemini CLI dates its session
    // context message right after it reads them. A resume reads them again, but the
    // transcript keeps its first start: a file changed since counts for nothing.
    let files_read = match live.harness {
        Harness::ClaudeCode => {
            claude_session_start(wanted.subagent.map_or(path, |_| wanted.path), limits)
        }
        Harness::Codex | Harness::GeminiCli => live.instructions_read,
    }
    .map(|at| {
        let process = wanted
            .live_call
            .then(|| harness_started(live.harness, &ancestors))
            .flatten();
        process.map_or(at, |p| p.min(at))
    });
    let mut files = Vec::with_capacity(wanted.files.len());
    for name in wanted.files {
        // The harness sends the model neither the store nor the transcript's file: as a
        // context file, either puts in view what the agent never reads (every record;
        // the whole session, what a compaction dropped included).
        let refused = |problem: crate::error::Reason| {
            Unread::Invalid(InputError::invalid(name, "--context-file", problem))
        };
        let is = |other: &str| same_file(name, other);
        if wanted.store.is_some_and(is) {
            return Err(refused(FlagProblem::ContextIsStore.into()));
        }
        if is(path) {
            return Err(refused(FlagProblem::ContextIsTranscript.into()));
        }
        // The harness read its instruction files as files when it started: what a pipe,
        // standard input or a device gives now is not what it gave then (and a pipe no
        // one writes to would hold this read forever).
        if names_stdin(name) || std::fs::metadata(name).is_ok_and(|m| !m.is_file()) {
            return Err(refused(FlagProblem::ContextNotFile.into()));
        }
        let bytes = read_source(name, limits).map_err(Unread::Invalid)?;
        if wanted
            .store_read
            .is_some_and(|store| store == bytes.as_slice())
        {
            return Err(refused(FlagProblem::ContextIsStore.into()));
        }
        let text =
            String::from_utf8(bytes).map_err(|_| refused(ReadProblem::NotUtf8Text.into()))?;
        // Changed since the harness read it: the model may not have its text (a rule only
        // it holds is blocked and comes back as the reason). Looked at after the read,
        // so that what was read is no newer.
        if !unchanged_since(name, files_read) {
            if !wanted.live_call {
                warn(&format!(
                    "omission-gate: note: `{}` changed after {} read it for this session, so the model may not have its text, and none of it counts: a new session (not one resumed: the transcript dates it from its first start) counts it",
                    clean(name),
                    live.harness.title()
                ));
            }
            continue;
        }
        // Only what the harness sends of a file is counted: for Claude Code, nothing to
        // an agent it sends none, nor of a file it skips, else the file as
        // [`claude_code::memory_sent`] says; for Gemini CLI, the text between its imports
        // ([`transcript::gemini_file_strings`]).
        let texts = match live.harness {
            Harness::ClaudeCode if !memory => Vec::new(),
            Harness::ClaudeCode if managed_only && !is_managed(name) => Vec::new(),
            Harness::ClaudeCode if claude_path_skipped(name) => Vec::new(),
            Harness::ClaudeCode if claude_extension_skipped(name) => Vec::new(),
            Harness::ClaudeCode if project_off && !is_managed(name) && !is_user_file(name) => {
                Vec::new()
            }
            Harness::ClaudeCode if nested.as_ref().is_some_and(|n| in_main_checkout(name, n)) => {
                Vec::new()
            }
            Harness::ClaudeCode if !excludes.is_empty() && md_excluded(name, &excludes) => {
                Vec::new()
            }
            Harness::ClaudeCode if is_auto_memory(name) && auto_memory_off => Vec::new(),
            Harness::ClaudeCode if is_auto_memory(name) => claude_code::auto_memory_sent(&text)
                .into_iter()
                .map(str::to_string)
                .collect(),
            Harness::ClaudeCode => claude_code::memory_sent(&text)
                .into_iter()
                .map(str::to_string)
                .collect(),
            Harness::GeminiCli => transcript::gemini_file_strings(&text)
                .into_iter()
                .map(str::to_string)
                .collect(),
            Harness::Codex => vec![text],
        };
        files.push((name.clone(), texts));
    }
    Ok(files)
}

/// How long before the time the transcript dates it a harness may have read its
/// instruction files (Gemini CLI reads them, then builds its session context message;
/// Claude Code reads them as it starts, then writes the first prompt): a file changed
/// within it counts as changed after the read.
const READ_LEAD_MS: i64 = 5_000;

/// How much of a Claude Code session's file is read for its first times, past its first
/// line.
const SESSION_HEAD: u64 = 64 * 1024;

/// When Claude Code read its memory files for the session whose file is `path` (a
/// subagent's own, `<session>/subagents/agent-<id>.jsonl`, stands for `<session>.jsonl`,
/// as a subagent is sent what its session's process read), at the latest: see
/// [`transcript::claude_code_session_start`]. `None` when that cannot be read.
fn claude_session_start(path: &str, limits: Limits) -> Option<i64> {
    let at = Path::new(path);
    let main = match at.parent() {
        Some(folder) if folder.file_name().is_some_and(|n| n == "subagents") => {
            let session = folder.parent()?;
            let mut name = session.file_name()?.to_os_string();
            name.push(".jsonl");
            session.with_file_name(name)
        }
        _ => at.to_path_buf(),
    };
    let mut file = File::open(main).ok()?;
    let len = file.metadata().ok()?.len();
    // The first line whole (it holds the first prompt, however long), then what follows.
    let mut head = read_head(&mut file, len, limits).ok()?;
    let start = head.len() as u64;
    head.extend(
        read_range(
            &mut file,
            start,
            len.saturating_sub(start).min(SESSION_HEAD),
        )
        .ok()?,
    );
    transcript::claude_code_session_start(&head)
}

/// True when the file at `path` (and the link that names it, if it is one) has not
/// changed, in its text or as a file (its change time, which no one can set back, as a
/// copy that keeps the modification time can), since `read` (milliseconds since 1970,
/// less [`READ_LEAD_MS`]). False when either is unknown.
fn unchanged_since(path: &str, read: Option<i64>) -> bool {
    let Some(read) = read else { return false };
    let millis = |t: std::time::SystemTime| -> Option<i64> {
        let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
        // Rounded up: a change within the millisecond of the read is after it.
        i64::try_from(d.as_nanos().div_ceil(1_000_000)).ok()
    };
    let changed = |m: std::fs::Metadata| -> Option<i64> {
        let modified = millis(m.modified().ok()?)?;
        #[cfg(unix)]
        let modified = {
            use std::os::unix::fs::MetadataExt;
            let ns = i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec());
            modified.max(i64::try_from((ns + 999_999).div_euclid(1_000_000)).ok()?)
        };
        Some(modified)
    };
    [std::fs::symlink_metadata(path), std::fs::metadata(path)]
        .into_iter()
        .map(|m| m.ok().and_then(changed))
        .all(|t| t.is_some_and(|t| t.saturating_add(READ_LEAD_MS) <= read))
}

/// When the harness process that runs this hook started, in milliseconds since 1970
/// (from `/proc`; `None` where it cannot be read or is not found): for Claude Code, which
/// gives the processes it starts `CLAUDECODE=1` (this one's too, when it runs it), the
/// nearest ancestor whose own environment has none; for Codex the nearest named `codex`. It read its instruction
/// files after that (seen: Claude Code 2.1.197 reads them as it starts, and a `CLAUDE.md`
/// changed before the first prompt was in no request).
fn harness_started(harness: Harness, ancestors: &[(u32, Vec<String>)]) -> Option<i64> {
    let is_harness = |pid: u32| match harness {
        Harness::ClaudeCode => std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| !env.split(|&b| b == 0).any(|v| v == b"CLAUDECODE=1")),
        Harness::Codex => std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|comm| comm.trim_end() == "codex"),
        Harness::GeminiCli => false,
    };
    if harness == Harness::ClaudeCode && std::env::var_os("CLAUDECODE").is_none_or(|v| v != "1") {
        return None;
    }
    let pid = ancestors
        .iter()
        .map(|(pid, _)| *pid)
        .find(|&pid| is_harness(pid))?;
    // Field 22, the start in clock ticks (100 a second) since boot, which `/proc/stat`
    // gives in seconds since 1970.
    let ticks = stat_fields(Path::new("/proc"), pid)?
        .get(19)?
        .parse::<i64>()
        .ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    let boot = boot
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse::<i64>()
        .ok()?;
    boot.checked_mul(1000)?.checked_add(ticks.checked_mul(10)?)
}

/// The fields of process `pid`'s `stat` in the `/proc` folder `proc` after its name
/// (`STATE PPID ...`, the state first); `None` when it cannot be read.
fn stat_fields(proc: &Path, pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(proc.join(pid.to_string()).join("stat")).ok()?;
    // `PID (COMM) STATE PPID ...`: COMM may hold spaces and parentheses.
    let (_, rest) = text.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// The command lines of the ancestors of process `pid`, nearest first, as the `/proc`
/// folder `proc` gives them. PID 1 is one too: Claude Code run as a container's first
/// process is.
fn ancestor_args(proc: &Path, pid: u32) -> Vec<(u32, Vec<String>)> {
    let mut lines = Vec::new();
    let mut pid = pid;
    // Far enough up for a shell or two between Claude Code and the hook.
    for _ in 0..8 {
        let Some(parent) =
            stat_fields(proc, pid).and_then(|fields| fields.get(1)?.parse::<u32>().ok())
        else {
            break;
        };
        // 0: no parent (that of PID 1, or one outside this PID namespace).
        if parent == 0 {
            break;
        }
        pid = parent;
        if let Ok(line) = std::fs::read(proc.join(pid.to_string()).join("cmdline")) {
            let args = line
                .split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            lines.push((pid, args));
        }
    }
    lines
}

/// The settings files Claude Code reads (its managed settings, the user's in its config
/// folder, the project's in `$CLAUDE_PROJECT_DIR`, else this directory), and those given
/// on the command line of one of `ancestors` (see [`claude_code::flag_settings`]); with
/// true when one of the latter cannot be read or is not JSON (Claude Code refuses to start
/// with most such). A file that cannot be read or is not JSON gives none: Claude Code does
/// not take settings from it either.
fn claude_settings(ancestors: &[(u32, Vec<String>)]) -> (Vec<serde_json::Value>, bool) {
    let managed = Path::new(claude_code::MANAGED_DIR);
    let mut files = vec![managed.join("managed-settings.json")];
    let mut drop_ins: Vec<PathBuf> = std::fs::read_dir(managed.join("managed-settings.d"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    drop_ins.sort();
    files.extend(drop_ins);
    let config = claude_config_dir();
    if let Some(config) = &config {
        files.extend(["settings.json", "cowork_settings.json"].map(|n| config.join(n)));
    }
    let project = std::env::var_os("CLAUDE_PROJECT_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    if let Some(project) = project {
        files.extend(
            [".claude/settings.json", ".claude/settings.local.json"].map(|n| project.join(n)),
        );
    }
    // The remote managed settings Claude Code keeps in its config folder.
    files.extend(config.as_ref().map(|c| c.join("remote-settings.json")));
    let mut values: Vec<serde_json::Value> = files
        .iter()
        .filter_map(|file| std::fs::read(file).ok())
        .filter_map(|bytes| claude_code::config_json(&bytes))
        .collect();
    let mut unread = false;
    for (pid, args) in ancestors {
        for given in claude_code::flag_settings(args) {
            let bytes = match given {
                claude_code::FlagSettings::Json(json) => Some(json.as_bytes().to_vec()),
                claude_code::FlagSettings::File(file) => {
                    std::fs::read(Path::new(&format!("/proc/{pid}/cwd")).join(file)).ok()
                }
            };
            match bytes.and_then(|b| claude_code::config_json(&b)) {
                Some(value) => values.push(value),
                None => unread = true,
            }
        }
    }
    (values, unread)
}

/// The `claudeMdExcludes` patterns of `settings` (see [`claude_settings`]), each absolute
/// one also with its folder's links resolved, as Claude Code adds it; every file when
/// `unread` (settings on the command line could not be read).
fn claude_md_excludes(settings: &[serde_json::Value], unread: bool) -> Vec<String> {
    let mut patterns = Vec::new();
    if unread {
        patterns.push("**".to_string());
    }
    for value in settings {
        let listed = value.get("claudeMdExcludes").and_then(|v| v.as_array());
        for pattern in listed.into_iter().flatten().filter_map(|p| p.as_str()) {
            let pattern = pattern.replace('\\', "/");
            // The folder before the first wildcard, with its links resolved.
            let literal = pattern
                .find(['*', '?', '{', '['])
                .and_then(|i| pattern.get(..i))
                .unwrap_or(&pattern);
            if pattern.starts_with('/')
                && let Some(folder) = Path::new(literal).parent()
                && let Ok(real) = std::fs::canonicalize(folder)
                && let Some(rest) = pattern.strip_prefix(folder.to_string_lossy().as_ref())
            {
                patterns.push(format!("{}{rest}", real.display()));
            }
            if !pattern.is_empty() {
                patterns.push(pattern);
            }
        }
    }
    patterns
}

/// The paths Claude Code may know the context file `name` by: as named (made absolute
/// against this directory) and with its links resolved (when it resolves).
fn spellings(name: &str) -> impl Iterator<Item = PathBuf> {
    let named = std::env::current_dir()
        .map(|d| d.join(name))
        .unwrap_or_else(|_| PathBuf::from(name));
    [Some(named), std::fs::canonicalize(name).ok()]
        .into_iter()
        .flatten()
}

/// Whether Claude Code may skip the context file `name` for one of `patterns` (see
/// [`claude_code::md_exclude_may_match`]): its path as named (made absolute) or with its
/// links resolved may match. A managed file is never skipped.
fn md_excluded(name: &str, patterns: &[String]) -> bool {
    if is_managed(name) {
        return false;
    }
    spellings(name).any(|path| {
        let path = path.to_string_lossy();
        patterns
            .iter()
            .any(|p| claude_code::md_exclude_may_match(p, &path))
    })
}

/// Whether Claude Code reads no memory file at the context file `name` for where it
/// lies (see [`claude_code::memory_path_skipped`]): its path as named (made absolute), or
/// with its links resolved.
fn claude_path_skipped(name: &str) -> bool {
    spellings(name).any(|p| claude_code::memory_path_skipped(&p.to_string_lossy()))
}

/// Whether Claude Code skips the context file `name` for its extension (see
/// [`claude_code::memory_extension_skipped`]): its path as named or with its links
/// resolved.
fn claude_extension_skipped(name: &str) -> bool {
    // Made absolute, a path keeps its extension.
    spellings(name).any(|p| claude_code::memory_extension_skipped(&p))
}

/// Whether the context file `name` lies in the main checkout but outside the worktree of
/// `nested` (main checkout, worktree), and is not a `CLAUDE.local.md`, the one file there
/// Claude Code still reads.
fn in_main_checkout(name: &str, (main, worktree): &(PathBuf, PathBuf)) -> bool {
    std::fs::canonicalize(name).is_ok_and(|file| {
        file.starts_with(main)
            && !file.starts_with(worktree)
            && file.file_name().is_none_or(|n| n != "CLAUDE.local.md")
    })
}

/// Claude Code's config folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn claude_config_dir() -> Option<PathBuf> {
    let var = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty());
    var("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".claude")))
}

/// Whether a global config file Claude Code may read holds
/// [`claude_code::PROJECT_MEMORY_OFF_FLAG`] on: `.config.json` in its config folder, or
/// `.claude.json` (or one of its OAuth variants) in `$CLAUDE_CONFIG_DIR`, else the home
/// folder. A file that does not name the flag (nor holds a `\u` escape) is not parsed.
fn claude_project_memory_off() -> bool {
    let var = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty());
    let mut files: Vec<PathBuf> = claude_config_dir()
        .map(|d| d.join(".config.json"))
        .into_iter()
        .collect();
    if let Some(base) = var("CLAUDE_CONFIG_DIR").or_else(|| var("HOME")) {
        let base = PathBuf::from(base);
        files.extend(
            ["", "-custom-oauth", "-local-oauth", "-staging-oauth"]
                .map(|suffix| base.join(format!(".claude{suffix}.json"))),
        );
    }
    files.iter().any(|file| {
        std::fs::read(file).is_ok_and(|bytes| {
            // A key may spell a letter as a `\u` escape: a file with one is parsed.
            let may_name = |needle: &[u8]| memchr::memmem::find(&bytes, needle).is_some();
            (may_name(claude_code::PROJECT_MEMORY_OFF_FLAG.as_bytes()) || may_name(b"\\u"))
                && claude_code::config_json(&bytes)
                    .is_some_and(|v| claude_code::project_memory_off(&v))
        })
    })
}

/// Whether Claude Code may read the context file `name` as an auto memory index, which it
/// sends cut (see [`claude_code::auto_memory_sent`]): its name, as named or with its
/// links resolved, is [`claude_code::AUTO_MEMORY_FILE`] in any case (its folder, its
/// settings' `autoMemoryDirectory` or one under its config folder, is not looked at).
fn is_auto_memory(name: &str) -> bool {
    // Made absolute, a path keeps its file name.
    spellings(name).any(|p| {
        p.file_name().is_some_and(|n| {
            n.to_string_lossy()
                .eq_ignore_ascii_case(claude_code::AUTO_MEMORY_FILE)
        })
    })
}

/// Whether `name` is one of the user's memory files in Claude Code's config folder (see
/// [`claude_code::user_memory_file`]), with its links resolved.
fn is_user_file(name: &str) -> bool {
    match (
        std::fs::canonicalize(name),
        claude_config_dir().and_then(|d| std::fs::canonicalize(d).ok()),
    ) {
        (Ok(file), Some(dir)) => file
            .strip_prefix(dir)
            .is_ok_and(claude_code::user_memory_file),
        _ => false,
    }
}

/// Whether `name` is one of the memory files of Claude Code's managed folder (see
/// [`claude_code::managed_memory_file`]), with its links resolved: it reads those whatever
/// `--setting-sources` says.
fn is_managed(name: &str) -> bool {
    match (
        std::fs::canonicalize(name),
        std::fs::canonicalize(claude_code::MANAGED_DIR),
    ) {
        (Ok(file), Ok(dir)) => file
            .strip_prefix(dir)
            .is_ok_and(claude_code::managed_memory_file),
        _ => false,
    }
}

/// Whether Claude Code sends the agent whose transcript is `path` its memory files (what
/// `--context-file` names): not when [`claude_code::NO_MEMORY_VAR`] is on (the hook has
/// Claude Code's environment; `check --transcript` reads its own), nor when the call's
/// subagent is of a type it sends none (see
/// [`claude_code::NO_MEMORY_AGENTS`]) or of a type the payload does not give, nor when the
/// type Claude Code files beside a subagent's transcript (`agent-<id>.meta.json`, which
/// `check --transcript` finds without a payload) is such a type, is not given, or cannot
/// be read; nor when a subagent's transcript (a file named `agent-<id>.jsonl`, as Claude
/// Code names one) has no such file beside it (a copy, say): its type is then unknown.
fn claude_memory_sent(path: &str, subagent: Option<&Subagent>) -> bool {
    if std::env::var_os(claude_code::NO_MEMORY_VAR)
        .is_some_and(|v| claude_code::truthy(&v.to_string_lossy()))
    {
        return false;
    }
    // The payload's type, when the call is a subagent's, decides.
    if let Some(subagent) = subagent {
        return subagent.kind().is_some_and(claude_code::agent_sees_memory);
    }
    let Some(stem) = path.strip_suffix(".jsonl") else {
        return true;
    };
    let of_subagent = Path::new(stem)
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("agent-"));
    match std::fs::read(format!("{stem}.meta.json")) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => !of_subagent,
        Err(_) => false,
        Ok(bytes) => serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| {
                Some(claude_code::agent_sees_memory(
                    v.get("agentType")?.as_str()?,
                ))
            })
            .unwrap_or(false),
    }
}

/// The main checkout and the worktree (both with symlinks resolved) when `dir` is in a
/// git worktree that lies inside its main checkout, as Claude Code's own worktrees do
/// (`.claude/worktrees/<name>`). Claude Code 2.1.197 then reads no `CLAUDE.md`,
/// `.claude/CLAUDE.md` or rules of a folder inside the main checkout but outside the
/// worktree (seen: the main checkout's `CLAUDE.md` was in no request of a session begun
/// in such a worktree), only their `CLAUDE.local.md`. As its bundle tells a worktree: the
/// nearest folder up from `dir` with a `.git`, a file `gitdir: <dir>` whose folder is in
/// the `worktrees` folder of the `commondir` it names, and whose `gitdir` file names that
/// `.git` back.
pub(super) fn nested_worktree(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let root = dir.ancestors().find(|d| d.join(".git").exists())?;
    let text = std::fs::read_to_string(root.join(".git")).ok()?;
    let gitdir = lexical(&root.join(text.trim().strip_prefix("gitdir:")?.trim()));
    let common = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = lexical(&gitdir.join(common.trim()));
    if gitdir.parent() != Some(common.join("worktrees").as_path()) {
        return None;
    }
    let back = std::fs::read_to_string(gitdir.join("gitdir")).ok()?;
    let root = std::fs::canonicalize(root).ok()?;
    if std::fs::canonicalize(back.trim()).ok()? != root.join(".git") {
        return None;
    }
    let main = match common.file_name() {
        Some(name) if name == ".git" => common.parent()?.to_path_buf(),
        _ => common,
    };
    let main = std::fs::canonicalize(main).ok()?;
    (main != root && root.starts_with(&main)).then_some((main, root))
}

/// `path` with `.` and `..` taken out as written, as Node's `path.resolve` does.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ancestors' command lines reach PID 1, which Claude Code is when it is a
    /// container's first process, and stop at its parent, 0.
    #[test]
    fn ancestors_command_lines_reach_pid_1() {
        let dir = tempfile::tempdir().unwrap();
        for (pid, stat, cmdline) in [
            (40, "40 (omission gate) S 7 40", "omission-gate\0hook\0"),
            (7, "7 (sh) S 1 7", "/bin/sh\0-c\0og\0"),
            (
                1,
                "1 (claude) S 0 1",
                "claude\0--setting-sources\0project\0",
            ),
        ] {
            let folder = dir.path().join(pid.to_string());
            std::fs::create_dir(&folder).unwrap();
            std::fs::write(folder.join("stat"), stat).unwrap();
            std::fs::write(folder.join("cmdline"), cmdline).unwrap();
        }
        let args = ancestor_args(dir.path(), 40);
        let ids: Vec<u32> = args.iter().map(|(pid, _)| *pid).collect();
        assert_eq!(ids, [7, 1]);
        assert_eq!(
            args.iter()
                .find_map(|(_, a)| claude_code::setting_sources_limited(a)),
            Some(true)
        );
    }
}
