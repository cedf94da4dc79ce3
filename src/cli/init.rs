//! `init`: writes a project's hook configuration for a harness (merged into the file the
//! harness reads, every other byte kept), a starter store when there is none, and what
//! the user must still do (Codex's trust, Gemini CLI's start directory and folder
//! trust). It writes nothing when the gate is already declared in another file the
//! harness reads, in a hook the harness would run beside the one it adds. What is written
//! comes from [`crate::wiring`]; this module reads and writes.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;
use crate::wiring::{self, Wiring, claude_code, codex, edit};

/// A path for messages and for the harness's files: UTF-8 or refused.
pub(super) fn text_of(path: &Path) -> Result<String, String> {
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("`{}` is not valid UTF-8", path.display()))
}

/// The file that stands where a folder on the way to `path` should be (`.claude` made a
/// file, for `.claude/settings.json`), as one line: what a read or a write that failed
/// with "not a directory" (or, creating the folders, "file exists") ran into.
fn file_in_the_way(path: &Path) -> Option<String> {
    path.ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir()))
        .map(|file| format!("`{}` is a file, not a folder", file.display()))
}

/// The project directory, resolved (harnesses see the real path).
pub(super) fn project_dir(dir: &Path) -> Result<(PathBuf, String), String> {
    const FIX: &str = "give --dir the directory you start the harness in";
    let real = std::fs::canonicalize(dir).map_err(|e| {
        let why = match file_in_the_way(dir) {
            Some(file) if e.kind() == io::ErrorKind::NotADirectory => file,
            _ => io_reason(&e),
        };
        format!(
            "project directory `{}`: {why}: {FIX}",
            clean(&dir.display().to_string()),
        )
    })?;
    if !real.is_dir() {
        return Err(format!(
            "project directory `{}` is not a directory: {FIX}",
            real.display()
        ));
    }
    let text = text_of(&real)?;
    Ok((real, text))
}

/// What a write of `path` that failed with `e` says, as one line.
fn write_failure(path: &Path, e: &io::Error) -> String {
    match file_in_the_way(path) {
        Some(file) => format!(
            "cannot write `{}`: {file}: move or rename that file, then run init again",
            path.display()
        ),
        None => format!("cannot write `{}`: {}", path.display(), io_reason(e)),
    }
}

/// Writes each file whole, all or none, in order: every file goes first to a temporary
/// file beside it (its missing folders made), and only when all of them are there is each
/// renamed over its file. A write that fails takes back the temporary files and the
/// folders made for them, so that an init that fails (a store folder that is a file, say)
/// leaves no hook behind that reads a store it could not write.
fn write_all(files: &[(PathBuf, String)]) -> Result<(), String> {
    let mut made: Vec<PathBuf> = Vec::new();
    let mut tmps: Vec<PathBuf> = Vec::new();
    let undo = |made: &[PathBuf], tmps: &[PathBuf]| {
        for tmp in tmps {
            let _ = std::fs::remove_file(tmp);
        }
        // Deepest first; a folder something else has filled since stays.
        for dir in made.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    };
    for (path, text) in files {
        if let Some(parent) = path.parent() {
            let mut missing: Vec<PathBuf> = parent
                .ancestors()
                .filter(|a| !a.as_os_str().is_empty())
                .take_while(|a| std::fs::symlink_metadata(a).is_err())
                .map(Path::to_path_buf)
                .collect();
            missing.reverse();
            let made_now = std::fs::create_dir_all(parent);
            made.extend(missing.into_iter().filter(|d| d.is_dir()));
            if let Err(e) = made_now {
                undo(&made, &tmps);
                return Err(write_failure(path, &e));
            }
        }
        let tmp = path.with_extension("omission-gate.tmp");
        if let Err(e) = std::fs::write(&tmp, text) {
            let _ = std::fs::remove_file(&tmp);
            undo(&made, &tmps);
            return Err(write_failure(path, &e));
        }
        tmps.push(tmp);
    }
    for (i, ((path, _), tmp)) in files.iter().zip(&tmps).enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            // The files before this one are written; the rest are not.
            undo(&[], tmps.get(i..).unwrap_or_default());
            return Err(write_failure(path, &e));
        }
    }
    Ok(())
}

/// A file [`read_optional`] could not read: what went wrong, naming the file, and what
/// fixes it, kept apart so that doctor can say between them what the harness makes of
/// it. As one line: `problem: fix`.
pub(super) struct Unreadable {
    /// What went wrong.
    pub(super) problem: String,
    /// What fixes it.
    pub(super) fix: &'static str,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.problem, self.fix)
    }
}

impl From<Unreadable> for String {
    fn from(u: Unreadable) -> String {
        u.to_string()
    }
}

/// Reads a file that may be absent.
pub(super) fn read_optional(path: &Path) -> Result<Option<String>, Unreadable> {
    let shown = path.display();
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| Unreadable {
            problem: format!("`{shown}` is not valid UTF-8"),
            fix: "save it as UTF-8",
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(match file_in_the_way(path) {
            Some(file) if e.kind() == io::ErrorKind::NotADirectory => Unreadable {
                problem: format!("{file}, so `{shown}` cannot be read"),
                fix: "move or rename that file",
            },
            _ if e.kind() == io::ErrorKind::IsADirectory => Unreadable {
                problem: format!("`{shown}` is a folder, not a file"),
                fix: "move or rename that folder",
            },
            _ => Unreadable {
                problem: format!("cannot read `{shown}`: {}", io_reason(&e)),
                fix: "fix its permissions",
            },
        }),
    }
}

pub(super) fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `$CODEX_HOME` with its links resolved, as Codex 0.171.0 resolves it (it names the
/// hooks there, in their trust keys, by that path: seen, a hook trusted under the
/// link's path was skipped and the tool ran), else `~/.codex` as written (Codex resolves
/// no link in that one). A `CODEX_HOME` that does not resolve is kept as written.
pub(super) fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .filter(|h| !h.is_empty())
        .map(|h| std::fs::canonicalize(&h).unwrap_or_else(|_| PathBuf::from(h)))
        .or_else(|| home().map(|h| h.join(".codex")))
}

pub(super) fn run_init(args: &InitArgs, out: Output) -> Exit {
    match init(args) {
        Ok(lines) => {
            for l in lines {
                out.say(&l);
            }
            Exit::Success
        }
        Err(e) => {
            warn(&format!("omission-gate: init: {e}"));
            Exit::Error
        }
    }
}

fn init(args: &InitArgs) -> Result<Vec<String>, String> {
    let harness = args.harness.harness();
    let w = Wiring::of(harness);
    let (dir, project) = project_dir(&args.dir)?;
    let binary = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("cannot find this program's own path: {}", io_reason(&e)))?;
    let binary = text_of(&binary)?;
    let store_arg = w.store_arg(&project, &args.store);
    let command = w.command(&binary, &store_arg);
    let settings = dir.join(w.settings);
    let shown = text_of(&settings)?;
    let existing = read_optional(&settings)?;
    if let Some(text) = &existing {
        let value = edit::read(text, w.comments).map_err(|e| {
            format!("`{shown}` is not valid JSON ({e}): it was left as it is; fix it, then run init again")
        })?;
        if harness == Harness::ClaudeCode
            && let Some(problem) = claude_code::invalid_key(&value)
        {
            return Err(format!(
                "`{shown}`: {problem}, and Claude Code ignores the whole file (hooks included) until it is: it was left as it is; fix that key, then run init again"
            ));
        }
        if harness == Harness::Codex
            && let Some(problem) = wiring::codex::invalid_hooks_file(&value)
        {
            return Err(format!(
                "`{shown}`: {problem}, and Codex loads no hook from the file until it is: it was left as it is; fix that key, then run init again"
            ));
        }
        // The gate's hook under a key the harness does not read: another under the
        // event's own key would run beside it once that key is put right. With the gate
        // under the event's own key too, the slip is to be removed, not renamed.
        if let Some(key) = wiring::misspelt_events(harness, &value, harness.name()).first() {
            let runs = !wiring::handlers_in(&value, w.event, harness.name(), "").is_empty();
            return Err(format!(
                "{}, then run init again (nothing was written)",
                super::doctor::misspelt_event(harness, &settings, key, runs)
            ));
        }
    }
    refuse_gate_elsewhere(harness, &dir, &project, &settings, &shown, &command)?;
    let before = existing.clone().unwrap_or_else(|| "{}\n".to_string());
    let refuse = |e: wiring::ConfigError| {
        format!("`{shown}`: {e}: it was left as it is; fix it, then run init again")
    };
    let name = harness.name();
    let pre_tool = edit::add_group(
        &before,
        w.comments,
        w.event,
        &w.group(&command),
        w.sequential_last,
        |g| wiring::is_ours(g, name),
    )
    .map_err(refuse)?;
    let mut text = pre_tool.text.clone();
    if harness == Harness::ClaudeCode {
        let compact = Wiring::precompact_group(&binary, &store_arg);
        text = edit::add_group(&text, false, "PreCompact", &compact, false, |g| {
            wiring::is_ours(g, "claude-code-precompact")
        })
        .map_err(refuse)?
        .text;
    }
    // Everything is read and checked before anything is written: the store first, then
    // the hook that reads it, all or none (see [`write_all`]).
    let mut lines = Vec::new();
    let mut writes: Vec<(PathBuf, String)> = Vec::new();
    let settings_line = if existing.as_deref() == Some(text.as_str()) {
        format!("`{shown}` already runs the gate: nothing to change")
    } else {
        format!(
            "{} `{shown}`: the gate now runs before each call that the {} matcher `{}` selects",
            if existing.is_some() {
                "updated"
            } else {
                "wrote"
            },
            w.event,
            w.matcher
        )
    };
    // Claude Code also gets the PreCompact hook, which changes what a user sees after a
    // compaction: the records it lists stay in view, so the calls they bind run.
    let precompact_line = (harness == Harness::ClaudeCode
        && existing.as_deref() != Some(text.as_str()))
    .then(|| {
        "and before each compaction the PreCompact hook gives Claude Code's summarizer the records that can bind a later call; after a `/compact` that list also stays in the session, so those rules stay in view and the calls they bind run (to see a rule block, judge a call with `check --kept '[]'`; docs/hooks.md, PreCompact)".to_string()
    });
    let store_path = if args.store.starts_with('/') {
        PathBuf::from(&args.store)
    } else {
        dir.join(&args.store)
    };
    let store_shown = text_of(&store_path)?;
    let store_lines = if std::fs::symlink_metadata(&store_path).is_ok() {
        let (said, rewrite) = existing_store(harness, &store_path, &store_shown)?;
        writes.extend(rewrite.map(|t| (store_path.clone(), t)));
        said
    } else {
        writes.push((store_path.clone(), wiring::starter_store(harness)));
        vec![format!(
            "no store at `{store_shown}`, so wrote a starter store there: example records, not rules of yours; replace them with your own (docs/hooks.md), or, to use a store you already have, run init again with its path as --store; the hook takes the kept set from the session transcript, so no `kept` list needs updating"
        )]
    };
    if existing.as_deref() != Some(text.as_str()) {
        writes.push((settings.clone(), text.clone()));
    }
    let trust_lines = match harness {
        Harness::Codex => {
            let root = text_of(&codex_project_root(&dir))?;
            codex_trust_lines(&root, &shown, &text, pre_tool.index)?
        }
        Harness::GeminiCli => vec![format!(
            "Gemini CLI reads `.gemini/settings.json` only from the directory it starts in, and registers no hooks in a folder it does not trust: start `gemini` in `{project}` and trust that folder (not with `--skip-trust`, which trusts it too late: gemini then runs with no hooks)"
        )],
        Harness::ClaudeCode => Vec::new(),
    };
    write_all(&writes)?;
    lines.push(settings_line);
    lines.extend(precompact_line);
    lines.extend(store_lines);
    lines.extend(trust_lines);
    lines.push(format!(
        "check the wiring with: omission-gate doctor {name} --dir {}",
        wiring::sh_quote(&project)
    ));
    Ok(lines)
}

/// The harness runs every hook of the gate it reads but those it runs as one (see
/// [`wiring::run_as_one`]: for Codex, none; for Claude Code, the same command; for
/// Gemini CLI, the same name and command): a gate already declared in any file it reads
/// but `settings` (the file init writes, `shown` as text), say in the user's settings,
/// that would not run as one with the one init adds (whose command is `command`) would
/// run beside it, twice before each call. So init writes nothing and says where that gate is; it also stops at
/// a file the harness cannot read as it reads hooks, where a gate may be declared unseen.
fn refuse_gate_elsewhere(
    harness: Harness,
    dir: &Path,
    project: &str,
    settings: &Path,
    shown: &str,
    command: &str,
) -> Result<(), String> {
    let w = Wiring::of(harness);
    let group: Value = serde_json::from_str(&w.group(command)).map_err(|e| e.to_string())?;
    let written = serde_json::json!({ "hooks": { w.event: [group] } });
    let ours = wiring::handlers_in(&written, w.event, harness.name(), shown);
    let gates = super::doctor::gates_besides(harness, dir, settings)
        .map_err(|problem| format!("{problem}, then run init again (nothing was written)"))?;
    let twice = gates
        .iter()
        .find(|g| !ours.iter().any(|o| wiring::run_as_one(harness, o, g)));
    match twice {
        None => Ok(()),
        Some(g) => Err(format!(
            "`{}` already runs the gate (the hook `{}`), and {}, so another in `{shown}` would run it twice before each call: nothing was written; check that one with `omission-gate doctor {} --dir {}`, or remove it from `{}` and run init again",
            g.file,
            super::doctor::hook_label(harness, g),
            super::doctor::runs_each(harness),
            harness.name(),
            wiring::sh_quote(project),
            g.file
        )),
    }
}

/// What init says of (and does to) a store that is already there. Another harness's
/// starter store, unedited, is rewritten to name this harness's tools too; a store that
/// names a tool only as another harness does is reported, since this harness never calls
/// a tool by that name and the record would never bind its calls.
///
/// Returns what it says and, for a starter store to rewrite, its new text (for the
/// caller to write with the rest).
fn existing_store(
    harness: Harness,
    path: &Path,
    shown: &str,
) -> Result<(Vec<String>, Option<String>), String> {
    let text = read_optional(path)?.unwrap_or_default();
    if let Some(mut named) = wiring::starter_store_of(&text)
        && !named.contains(&harness)
    {
        named.push(harness);
        let shared = wiring::starter_store_for(&named);
        if shared != text {
            return Ok((
                vec![format!(
                    "rewrote the starter store `{shown}` to name each tool as {} names it too: it was still the unedited example",
                    super::doctor::w_name(harness)
                )],
                Some(shared),
            ));
        }
    }
    let mut lines = vec![format!("kept the existing store `{shown}`")];
    let Ok(input) = crate::input::load(shown, text.as_bytes(), Limits::default()) else {
        // doctor says what is wrong with it, and the hook denies every call it is asked
        // about until it loads.
        return Ok((lines, None));
    };
    let w = Wiring::of(harness);
    // An effect names one tool: a call of another is another record.
    let fix = |id: &str, instead: &str| {
        let is_effect = input
            .store
            .position(id)
            .and_then(|p| input.store.get(p))
            .is_some_and(|r| matches!(r.kind, crate::record::Kind::Effect(_)));
        if is_effect {
            format!("add a copy of it (another id) whose `tool` is `{instead}` in `{shown}`")
        } else {
            format!("add `{instead}` to its `scope` in `{shown}`")
        }
    };
    // Ids and names as the store gives them: cleaned, so that each warning is one line.
    for (id, tool) in wiring::never_sent(harness, &input.store) {
        lines.push(format!(
            "warning: record `{}` names `{}`, a name {} never gives a tool (it names MCP tools `{}`), so it never binds a call there: name the tool as {} calls it in `{shown}`",
            clean(&id),
            clean(&tool),
            super::doctor::w_name(harness),
            w.mcp_tool("<server>", "<tool>"),
            super::doctor::w_name(harness),
        ));
    }
    for miss in wiring::unguarded(harness, Some(w.matcher), &input.store) {
        match miss {
            wiring::Unguarded::Misnamed { id, tool, instead } => lines.push(format!(
                "warning: record `{}` names `{}`, a name {} never gives a tool, so it never binds a call there: {}",
                clean(&id),
                clean(&tool),
                super::doctor::w_name(harness),
                fix(&id, &clean(&instead))
            )),
            wiring::Unguarded::NotHookName {
                id,
                tool,
                covers,
                instead,
            } => lines.push(format!(
                "warning: record `{}` names `{}`, {} sends that tool's calls as `{instead}`), so the hook denies each of them until the store names `{instead}`: {}",
                clean(&id),
                clean(&tool),
                match covers {
                    Some(covers) => format!("which {covers} ({}", harness.title()),
                    None => format!(
                        "a name no call {} sends its hooks carries (it",
                        super::doctor::w_name(harness)
                    ),
                },
                fix(&id, &instead)
            )),
            wiring::Unguarded::Pattern { id, tool, globs } => lines.push(format!(
                "warning: record `{}` names `{}`, and no tool is called that: the store's names are tool names or globs whose only wildcard is `*`, so the hook denies each call it reads as covering until the store names the tool: write one name or `*` glob per entry in `{}`, such as {}",
                clean(&id),
                clean(&tool),
                shown,
                super::doctor::pattern_fix(&globs)
            )),
            wiring::Unguarded::OtherHarnessGlob {
                id,
                tool,
                covered,
                instead,
            } => lines.push(format!(
                "warning: record `{}` names `{}`, {}, so the hook denies each of its calls until the store names `{instead}` too: {}",
                clean(&id),
                clean(&tool),
                crate::harness::glob_covers(harness, &tool, covered, &instead),
                fix(&id, &instead)
            )),
            _ => {}
        }
    }
    // init writes no --tools: the store's `tools`, if any, are the guarded tools.
    let listed: Vec<String> = (input.tools.iter().flatten())
        .map(|t| t.name.clone())
        .collect();
    for m in wiring::mislisted(harness, &listed) {
        let (tool, instead) = (clean(&m.tool), clean(&m.instead));
        let what = match m.how {
            wiring::Listed::Spelling => format!(
                "a name {} never gives a tool, so the hook denies each call of `{instead}`",
                super::doctor::w_name(harness)
            ),
            wiring::Listed::Glob(covered) => format!(
                "{}, so the hook denies each call of `{instead}`",
                crate::harness::glob_covers(harness, &m.tool, covered, &m.instead)
            ),
            wiring::Listed::NotHookName => format!(
                "a name no call {} sends its hooks carries (it sends that tool's calls as `{instead}`), so the hook denies each call of `{instead}`",
                super::doctor::w_name(harness)
            ),
            wiring::Listed::Pattern => format!(
                "{}, so the hook denies each call of `{instead}`",
                super::doctor::PATTERN_NAME
            ),
            wiring::Listed::Kin(covered) => format!(
                "and not `{instead}`, which does what `{covered}` does in {}, so the hook denies each call of `{instead}`",
                super::doctor::w_name(harness)
            ),
        };
        lines.push(format!(
            "warning: the store's `tools` lists `{tool}`, {what}: add `{instead}` to its `tools` in `{shown}`"
        ));
    }
    for u in wiring::unnamed_kin(harness, &input.store) {
        lines.push(format!(
            "warning: record `{}` names `{}` and not `{}`, which does the same in {}, so the hook denies each call of `{}`: {}",
            clean(&u.id),
            clean(&u.named),
            u.kin,
            harness.title(),
            u.kin,
            fix(&u.id, u.kin)
        ));
    }
    Ok((lines, None))
}

/// What the user must do for Codex to run the hook, from the file as written.
fn codex_trust_lines(
    project: &str,
    settings: &str,
    text: &str,
    group: usize,
) -> Result<Vec<String>, String> {
    let value = edit::read(text, false).map_err(|e| e.to_string())?;
    let g = value
        .get("hooks")
        .and_then(|h| h.get("PreToolUse"))
        .and_then(|l| l.get(group))
        .ok_or("the hook just written is not where it was written")?;
    let matcher = g.get("matcher").and_then(Value::as_str);
    let Some(Value::Object(handler)) = g.get("hooks").and_then(|h| h.get(0)) else {
        return Err("the hook just written has no handler".into());
    };
    let key = codex::hook_key(settings, group, 0);
    let hash = codex::trusted_hash(matcher, handler);
    let config = codex_home()
        .map(|h| h.join("config.toml").display().to_string())
        .unwrap_or_else(|| "~/.codex/config.toml".to_string());
    let user = read_optional(Path::new(&config))
        .ok()
        .flatten()
        .and_then(|t| t.parse::<toml::Table>().ok());
    let empty = toml::Table::new();
    let user = user.as_ref().unwrap_or(&empty);
    let project_trusted = codex::project_trust(user, project).as_deref() == Some("trusted");
    let hook_trusted = codex::hook_state(user, &key).trusted_hash.as_deref() == Some(hash.as_str());
    if project_trusted && hook_trusted {
        return Ok(vec![format!("`{config}` already trusts this hook")]);
    }
    // A table the config already has is edited, not added again: a second
    // `[projects."DIR"]` or `[hooks.state."KEY"]` is a TOML error, and Codex would not
    // start (seen with 0.171.0: "duplicate key").
    let mut add = Vec::new();
    let mut edits = Vec::new();
    if !codex::has_project_table(user, project) {
        add.push(codex::project_trust_snippet(project));
    } else if !project_trusted {
        edits.push(format!(
            "set `trust_level = \"trusted\"` in its `[projects.{}]` table",
            codex::toml_string(project)
        ));
    }
    if !codex::has_hook_state_table(user, &key) {
        add.push(codex::hook_trust_snippet(&key, &hash));
    } else if !hook_trusted {
        edits.push(format!(
            "set `trusted_hash = {}` in its `[hooks.state.{}]` table",
            codex::toml_string(&hash),
            codex::toml_string(&key)
        ));
    }
    let tui = format!("trust it in the Codex TUI (run `codex` in `{project}`, then `/hooks`)");
    let mut lines = vec![
        "Codex runs this hook only once you trust it: `codex exec` skips an untrusted hook, or one edited since it was trusted, without a word, and the tool runs".to_string(),
    ];
    if edits.is_empty() {
        lines.push(format!("{tui}, or add these lines to `{config}`:"));
    } else {
        let and_add = if add.is_empty() {
            ""
        } else {
            ", and add these lines to it:"
        };
        lines.push(format!(
            "{tui}, or edit `{config}`, which has {} already (a second one is a TOML error, and Codex will not start): {}{and_add}",
            if edits.len() == 1 { "the table" } else { "these tables" },
            edits.join("; ")
        ));
    }
    if !add.is_empty() {
        lines.push(String::new());
        lines.push(add.join("\n").trim_end().to_string());
        lines.push(String::new());
    }
    Ok(lines)
}

/// Codex's project root: the nearest directory from `dir` up that holds one of its
/// project root markers (see [`codex_root_markers`]), else `dir` itself. Its `.codex`
/// folders from there down to `dir` are read.
pub(super) fn codex_project_root(dir: &Path) -> PathBuf {
    let markers = codex_root_markers();
    dir.ancestors()
        .find(|a| markers.iter().any(|m| a.join(m).exists()))
        .unwrap_or(dir)
        .to_path_buf()
}

/// The names Codex (0.171.0) finds a project's root by: `project_root_markers` as the
/// last of the machine's config, the user's and the machine's managed config that sets
/// it gives them, else `.git`. An empty list makes the start directory the root (seen:
/// with `project_root_markers = []`, Codex started below the repository's root read
/// none of its `.codex` hooks, and the tool ran).
fn codex_root_markers() -> Vec<String> {
    let system = Path::new(codex::SYSTEM_DIR);
    let files = [
        Some(system.join("config.toml")),
        codex_home().map(|h| h.join("config.toml")),
        Some(system.join(codex::MANAGED_CONFIG)),
    ];
    let mut markers = vec![".git".to_string()];
    for file in files.into_iter().flatten() {
        let set = read_optional(&file)
            .ok()
            .flatten()
            .and_then(|t| t.parse::<toml::Table>().ok())
            .and_then(|t| t.get("project_root_markers").cloned());
        if let Some(toml::Value::Array(names)) = set {
            markers = names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect();
        }
    }
    markers
}
