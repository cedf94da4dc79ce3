//! `doctor`: reads a harness's hook configuration the way the harness does (which files,
//! which directory, which trust), then runs each hook of ours exactly as the harness
//! would, with a call it must deny and one it must let run. Each problem is one line
//! with its fix. The harness facts and the pure checks are in [`crate::wiring`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::init::{codex_home, codex_project_root, home, project_dir, read_optional};
use super::*;
use crate::text::one_line;
use crate::wiring::{self, Handler, Outcome, Wiring, claude_code, codex, edit, gemini_cli};

/// The first line of every deny the gate writes.
const DENY_PREFIX: &str = "omission-gate denied this call";

/// What `doctor` found: problems (each one line with its fix), or why it cannot tell.
/// A note is a gap the wiring cannot close (the harness lets some calls past every
/// hook), or wiring that gates but costs (the gate run twice on a call): printed on
/// stderr, it does not change the exit code.
#[derive(Default)]
struct Findings {
    problems: Vec<String>,
    notes: Vec<String>,
    unsure: Option<String>,
}

impl Findings {
    fn problem(&mut self, line: String) {
        if !self.problems.contains(&line) {
            self.problems.push(line);
        }
    }

    fn note(&mut self, line: String) {
        if !self.notes.contains(&line) {
            self.notes.push(line);
        }
    }
}

pub(super) fn run_doctor(args: &DoctorArgs, limits: Limits, out: Output) -> Exit {
    let harness = args.harness.harness();
    let mut f = Findings::default();
    let passed = match project_dir(&args.dir) {
        Ok((dir, project)) => doctor(harness, &dir, &project, &mut f, limits),
        Err(e) => {
            f.unsure = Some(e);
            None
        }
    };
    for n in &f.notes {
        warn(&format!("omission-gate doctor: note: {n}"));
    }
    for p in &f.problems {
        out.say(p);
    }
    if let Some(why) = &f.unsure {
        out.say(&format!(
            "omission-gate doctor: cannot tell whether {} gates: {why}",
            harness.name()
        ));
        return Exit::Error;
    }
    if !f.problems.is_empty() {
        let n = f.problems.len();
        out.say(&format!(
            "{n} problem{}: {} would not gate as configured",
            if n == 1 { "" } else { "s" },
            harness.name()
        ));
        return Exit::Problems;
    }
    // One line for each hook of the gate doctor checked: the harness runs each.
    for (at, store) in passed.into_iter().flatten() {
        out.say(&format!(
            "ok: {at} gates with the store `{}`: run as {} runs it, it denied a call it must deny and let a harmless one run",
            clean(&store),
            harness.name()
        ));
    }
    Exit::Success
}

/// Checks the files, then runs each hook of ours; each hook that gated (as
/// [`hook_at`] names it), and the store it reads.
fn doctor(
    harness: Harness,
    dir: &Path,
    project: &str,
    f: &mut Findings,
    limits: Limits,
) -> Option<Vec<(String, String)>> {
    let w = Wiring::of(harness);
    let files = match settings_files(harness, dir) {
        Ok(files) => files,
        Err(e) => {
            f.unsure = Some(e);
            return None;
        }
    };
    let mut ours = Vec::new();
    // Other pre-tool hooks, and ours, each with where the harness reaches it (the file's
    // place in the merge, the group's in the file) and its group's `sequential`.
    let mut others: Vec<((usize, usize), wiring::OtherHook)> = Vec::new();
    let mut placed: Vec<((usize, usize), bool)> = Vec::new();
    // Claude Code's `PermissionRequest` hooks, which run after the gate's.
    let mut asking: Vec<wiring::OtherHook> = Vec::new();
    let mut dropped_ours = false;
    // The files doctor could not read, or whose hooks the harness would not (each said
    // above), where the gate may be, and which init refuses to edit.
    let mut unread: Vec<String> = Vec::new();
    // The gate's hooks under a key that spells the event otherwise, which the harness
    // never runs: each file, and the key.
    let mut misspelt: Vec<(PathBuf, String)> = Vec::new();
    // Claude Code: the settings files it keeps, by their place in `files`, for the
    // plugins they turn on.
    let mut kept: Vec<(usize, Value)> = Vec::new();
    for (file_index, path) in files.iter().enumerate() {
        let value = match read_hooks_of(harness, path) {
            Ok(Some(v)) => v,
            Ok(None) => continue,
            Err(problem) => {
                f.problem(problem);
                unread.push(format!("`{}`", path.display()));
                continue;
            }
        };
        let shown = path.display().to_string();
        if harness == Harness::Codex
            && let Some(problem) = codex::invalid_hooks_file(&value)
        {
            let lost = wiring::handlers_in(&value, w.event, harness.name(), &shown);
            f.problem(codex_unparsed(path, &problem, !lost.is_empty()));
            dropped_ours |= !lost.is_empty();
            unread.push(format!("`{shown}`"));
            continue;
        }
        if harness == Harness::ClaudeCode {
            if let Some(problem) = claude_code::invalid_key(&value) {
                let lost = wiring::handlers_in(&value, w.event, harness.name(), &shown);
                // A file without the gate's hook, dropped, leaves the gate where it is
                // (the hook found elsewhere, or its absence, is said on its own).
                let line = format!(
                    "`{shown}`: {problem}, and Claude Code ignores this whole file, hooks included{}: fix that key",
                    if lost.is_empty() {
                        ""
                    } else {
                        " (the gate's hook too)"
                    }
                );
                match lost.is_empty() {
                    true => f.note(line),
                    false => f.problem(line),
                }
                dropped_ours |= !lost.is_empty();
                unread.push(format!("`{shown}`"));
                continue;
            }
            kept.push((file_index, value.clone()));
            if let Some(dropped) = claude_code::dropped_hooks(&value, w.event) {
                f.problem(format!(
                    "`{shown}`: `{}` is not {shape}, so Claude Code drops it, with every hook in it, and reads the rest of the file: make it {shape} such as `{}` (or remove it), then run `omission-gate init claude-code --dir {}`",
                    dropped.key(),
                    dropped.example(),
                    wiring::sh_quote(project),
                    shape = dropped.shape(),
                ));
                unread.push(format!("`{shown}`"));
            }
            if let Some((var, v)) = claude_code::hooks_off_in_env(&value) {
                f.problem(format!(
                    "`{shown}` sets `env.{var}` to `{}`, and Claude Code then runs no hook at all: remove it",
                    clean(&v)
                ));
            }
            // doctor runs the hook through the prefix of its own environment only.
            if let Some((prefix, shown_prefix)) = claude_code::shell_prefix_in_env(&value)
                && prefix.as_str() != claude_shell_prefix().as_deref()
            {
                let var = claude_code::SHELL_PREFIX_VAR;
                f.problem(format!(
                    "`{shown}` sets `env.{var}` to `{}`: Claude Code runs every hook command through it, the gate's too, and a prefix that does not exit as the command exits loses the deny; doctor ran the hook without it: run `{var}={} omission-gate doctor claude-code` to check the hook through it, or remove it",
                    clean(&shown_prefix),
                    wiring::sh_quote(&shown_prefix)
                ));
            }
        }
        misspelt.extend(
            wiring::misspelt_events(harness, &value, harness.name())
                .into_iter()
                .map(|key| (path.clone(), key)),
        );
        let found = wiring::handlers_in(&value, w.event, harness.name(), &shown);
        for h in &found {
            let sequential = value
                .pointer(&format!("/hooks/{}/{}/sequential", w.event, h.group))
                .and_then(Value::as_bool)
                == Some(true);
            placed.push(((file_index, h.group), sequential));
        }
        ours.extend(found);
        others.extend(
            wiring::other_hooks_in(&value, w.event, harness.name(), &shown)
                .into_iter()
                .map(|o| ((file_index, o.group), o)),
        );
        if harness == Harness::ClaudeCode {
            asking.extend(wiring::other_hooks_in(
                &value,
                claude_code::PERMISSION_EVENT,
                harness.name(),
                &shown,
            ));
        }
    }
    // Claude Code: the agents', skills' and commands' own hooks, noted after the rest.
    let mut front_matter = Vec::new();
    // Claude Code: the settings file outside the managed ones whose `disableAllHooks`
    // true the merged settings keep.
    let mut hooks_off_in: Option<String> = None;
    if harness == Harness::ClaudeCode {
        // The enabled plugins' hooks run after every settings file's. The managed
        // settings come first in `files`, and take precedence over the rest.
        let managed = files.len().saturating_sub(3);
        let mut layers: Vec<&Value> = kept
            .iter()
            .filter(|(i, _)| *i >= managed)
            .map(|(_, v)| v)
            .collect();
        layers.extend(kept.iter().filter(|(i, _)| *i < managed).map(|(_, v)| v));
        // The settings files, the one whose value the merged settings keep first: the
        // managed ones, then the rest, each group's last read first.
        let by_precedence = || {
            kept.iter()
                .filter(|(i, _)| *i < managed)
                .rev()
                .chain(kept.iter().filter(|(i, _)| *i >= managed).rev())
        };
        // `disableAllHooks` as the merged settings have it, set outside the managed
        // settings (there, [`check_claude_managed`] reads it).
        hooks_off_in = by_precedence()
            .find_map(|(i, v)| v.get("disableAllHooks").map(|on| (*i, on)))
            .filter(|(i, on)| *i >= managed && **on == Value::Bool(true))
            .and_then(|(i, _)| files.get(i))
            .map(|p| p.display().to_string());
        // Only the managed settings' hooks run (`allowManagedHooksOnly` there, or
        // `disableAllHooks` elsewhere): Claude Code 2.1.197 then runs the hooks of no
        // plugin but those the managed settings turn on, and none of an agent's, a
        // skill's or a command's. Under `strictPluginOnlyCustomization` it runs those of
        // the plugins' and the managed folder's only.
        let policy: Vec<(String, &Value)> = kept
            .iter()
            .filter(|(i, _)| *i < managed)
            .filter_map(|(i, v)| Some((files.get(*i)?.display().to_string(), v)))
            .collect();
        let policy: Vec<(&str, &Value)> = policy.iter().map(|(p, v)| (p.as_str(), *v)).collect();
        let managed_says = claude_code::managed_hooks(&policy);
        let restricted = hooks_off_in.is_some()
            || matches!(
                managed_says,
                Some(claude_code::Managed::ManagedOnly(
                    "allowManagedHooksOnly",
                    _
                ))
            );
        let (mut folders, mut missing) = claude_plugin_folders(dir, &layers);
        if restricted {
            let managed_on = |id: &str| {
                policy
                    .iter()
                    .rev()
                    .find_map(|(_, v)| v.get("enabledPlugins")?.get(id))
                    == Some(&Value::Bool(true))
            };
            folders.retain(|(id, _)| managed_on(id));
            missing.retain(|id| managed_on(id));
        }
        for id in &missing {
            f.note(claude_plugin_not_installed(id));
        }
        let (pre, permission) = claude_plugin_hooks(&folders);
        let plugin_only = managed_says.is_some();
        let (hooks, inline) = claude_front_matter_hooks(dir, &folders, !plugin_only);
        if !restricted {
            front_matter = hooks;
        }
        // `disableSkillShellExecution` as the merged settings have it: true, Claude Code
        // runs no inline command of a skill or a command (but the managed folder's).
        let shell_off = by_precedence().find_map(|(_, v)| v.get("disableSkillShellExecution"))
            == Some(&Value::Bool(true));
        // The managed folder's skills run theirs even then.
        for (managed, line) in inline {
            if managed || !shell_off {
                f.problem(line);
            }
        }
        let after = files.len();
        others.extend(
            pre.into_iter()
                .enumerate()
                .map(|(i, o)| ((after + i, o.group), o)),
        );
        asking.extend(permission);
    }
    if harness == Harness::GeminiCli {
        // The extensions' hooks run after every settings file's.
        let after = files.len();
        others.extend(
            gemini_extension_hooks(dir)
                .into_iter()
                .enumerate()
                .map(|(i, o)| ((after + i, o.group), o)),
        );
        // A hook listed under `hooksConfig.disabled` does not run.
        let layers = gemini_layers(dir);
        let layers: Vec<(&str, &Value)> = layers.iter().map(|(p, v)| (p.as_str(), v)).collect();
        others.retain(|(_, o)| {
            let name = o.name.as_deref().unwrap_or(&o.command);
            !matches!(
                gemini_cli::hooks_off(&layers, name),
                Some(gemini_cli::HooksOff::Disabled { .. })
            )
        });
    }
    if harness == Harness::ClaudeCode {
        for var in claude_code::HOOKS_OFF_VARS {
            if let Some(v) = std::env::var(var).ok().filter(|v| claude_code::truthy(v)) {
                f.problem(format!(
                    "`{var}` is `{v}` in this environment, and Claude Code started with it runs no hook at all (as with `--bare` or `--safe-mode`): unset it"
                ));
            }
        }
        let managed = files.len().saturating_sub(3);
        check_claude_refusal_fallback(&files, &kept, managed, f);
        check_claude_extra_body(&files, &kept, managed, f);
    }
    for (path, key) in &misspelt {
        let line = misspelt_event(harness, path, key, !ours.is_empty());
        if ours.is_empty() {
            f.problem(line);
        } else {
            f.note(line);
        }
    }
    if ours.is_empty() && (dropped_ours || !misspelt.is_empty()) {
        // Said above: the hook is in a file the harness ignores, or under a key it
        // does not read.
        return None;
    }
    if ours.is_empty() {
        let looked: Vec<String> = files.iter().map(|p| format!("`{}`", p.display())).collect();
        if let Some(up) = hook_above(harness, dir) {
            let (reads, folder) = match harness {
                Harness::ClaudeCode => (
                    "`.claude/settings.json` only from its start directory",
                    ".claude",
                ),
                Harness::Codex => (
                    "`.codex/hooks.json` and `.codex/config.toml` only from the project root (the nearest directory above with `.git`, or with a name `project_root_markers` gives instead, else the start directory) down to the start directory",
                    ".codex",
                ),
                Harness::GeminiCli => (
                    "`.gemini/settings.json` only from its start directory",
                    ".gemini",
                ),
            };
            f.problem(format!(
                "the hook in `{up}` is not read when {} starts in `{project}`: it reads {reads}; start it where that file's `{folder}` is, or run `omission-gate init {} --dir {}`",
                w_name(harness),
                harness.name(),
                wiring::sh_quote(project)
            ));
        }
        // init leaves a file it cannot read as it is: fixing it comes first.
        let fix = if unread.is_empty() {
            format!(
                "run `omission-gate init {} --dir {}`",
                harness.name(),
                wiring::sh_quote(project)
            )
        } else {
            format!(
                "first fix {} as said above (the hook may be there, and init leaves such a file as it is), then run doctor again",
                unread.join(", ")
            )
        };
        f.problem(format!(
            "no `omission-gate hook {}` command under `hooks.{}` in {}: {fix}",
            harness.name(),
            w.event,
            looked.join(", "),
        ));
        return None;
    }
    match harness {
        Harness::Codex => check_codex_trust(dir, &ours, f),
        Harness::GeminiCli => {
            check_gemini_load_expansion(project, &ours, f);
            for (file, skipped) in gemini_cli::system_files(|key: &str| std::env::var_os(key)) {
                if let Some(why) = skipped {
                    f.note(format!(
                        "Gemini CLI skips `{}` ({why}) with a security warning, so nothing in it applies (its hooks and `hooksConfig` included): if it is meant to apply, make it and each directory above it owned by root and writable by no one else",
                        file.display()
                    ));
                }
            }
            check_gemini_trust(project, f);
            check_gemini_hooks_on(project, &ours, f);
            check_gemini_command_shell(project, f);
            // Gemini CLI lays a hook's own `env` over the hook's environment, not its
            // own: the gate would look for Gemini CLI's settings where it says.
            for h in &ours {
                if let Some(var) = gemini_cli::env_location(&h.object) {
                    let at = hook_at(harness, h, &ours);
                    f.problem(format!(
                        "{at} sets `{var}` in its `env`, which Gemini CLI gives the gate's process but does not read its own settings by, so under `--kept-from transcript` the gate cannot tell which settings and extensions Gemini CLI reads (a `BeforeModel` hook there would go unseen) and denies every call: take `{var}` out of the hook's `env`"
                    ));
                }
            }
            // A redaction list Gemini CLI cannot read: it starts no hook at all.
            if let Err(e) = gemini_hook_environment(project) {
                f.problem(format!(
                    "`{}.{}` in `{}` is not a list of variable names, so Gemini CLI fails before it starts any hook and the tool runs: make it a list of names, or remove it",
                    gemini_cli::REDACTION,
                    e.key,
                    e.file
                ));
                return None;
            }
            // A plans directory Gemini CLI refuses: it throws as each hook starts.
            if let Err(real) = gemini_plans_dir(project) {
                f.problem(format!(
                    "`general.plan.directory` resolves to `{}`, outside the project, and `general.plan.enabled` is false, so Gemini CLI fails every hook as it starts it and the tool runs: remove `general.plan.directory`, or put the directory inside the project",
                    clean(&real.display().to_string())
                ));
                return None;
            }
            // The same, from an extension's `plan.directory`.
            if let Some((config, real)) = gemini_extension_plans_dir(project) {
                f.problem(format!(
                    "`{}` sets `plan.directory`, which resolves to `{}`, outside the project, and `general.plan.enabled` is false, so Gemini CLI (which takes an active extension's plans directory when no settings file sets `general.plan.directory`) fails every hook as it starts it and the tool runs: set `general.plan.directory` to a directory inside the project in the settings, or uninstall the extension",
                    clean(&config.display().to_string()),
                    clean(&real.display().to_string())
                ));
                return None;
            }
            // A setting that changes what Gemini CLI sends the model, which its session
            // file does not show: every call under --kept-from transcript is an error.
            if let Err(e) = gemini_settings(Some(project), None) {
                f.problem(e.to_string());
            }
        }
        Harness::ClaudeCode => check_claude_managed(&ours, hooks_off_in.as_deref(), f),
    }
    check_gate_twice(harness, &ours, f);
    check_other_hooks(harness, &ours, &placed, &others, f);
    check_permission_hooks(&ours, &asking, f);
    for line in front_matter {
        f.note(line);
    }
    if f.unsure.is_some() {
        return None;
    }
    let mut gated = Vec::new();
    for h in &ours {
        let at = hook_at(harness, h, &ours);
        if let Some(store) = check_handler(harness, dir, project, h, &at, f, limits) {
            gated.push((at, store.display().to_string()));
        }
    }
    Some(gated)
}

/// Claude Code: a problem when its environment makes a model its own refusal fallback
/// (see [`crate::transcript::RefusalFallback`]): the gate then answers ERROR for a subagent's
/// call that follows the subagent's own results. The environment is doctor's own, with
/// the `env` of each settings file Claude Code reads over it (the managed ones last, as
/// they win); `kept` are those files, by their place in `files` (the first `managed` of
/// which are the managed ones).
fn check_claude_refusal_fallback(
    files: &[PathBuf],
    kept: &[(usize, Value)],
    managed: usize,
    f: &mut Findings,
) {
    let lookup = claude_env(files, kept, managed);
    let fallback = crate::transcript::RefusalFallback::of(|var| lookup(var).map(|(v, _)| v));
    let Some(var) = fallback.variable() else {
        return;
    };
    let Some((value, origin)) = lookup(var) else {
        return;
    };
    let at = match origin {
        Some(file) => format!("`{}` (`env`)", file.display()),
        None => "this environment".to_string(),
    };
    f.problem(format!(
        "`{var}` is `{}` in {at}, which makes that model its own refusal fallback in Claude Code: a subagent's file then cannot tell a retry after a refusal from the model's next response, so the gate answers ERROR for a subagent's call that follows the subagent's earlier results: set `CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK` to `1` (here or in a settings file's `env`), or have `{var}` name another model",
        clean(value.trim())
    ));
}

/// A variable of Claude Code's environment: its value and where it is set (`None`: this
/// environment), the `env` of each settings file Claude Code reads over doctor's own (the
/// managed ones last, as they win); arguments as [`check_claude_refusal_fallback`] takes
/// them.
fn claude_env<'a>(
    files: &'a [PathBuf],
    kept: &'a [(usize, Value)],
    managed: usize,
) -> impl Fn(&str) -> Option<(String, Option<&'a PathBuf>)> {
    move |var: &str| {
        let in_order = kept
            .iter()
            .filter(|(i, _)| *i >= managed)
            .chain(kept.iter().filter(|(i, _)| *i < managed));
        in_order
            .filter_map(|(i, v)| Some((claude_code::env_value(v, var)?, files.get(*i))))
            .next_back()
            .or_else(|| std::env::var(var).ok().map(|v| (v, None)))
    }
}

/// Claude Code: a problem when its environment's [`claude_code::EXTRA_BODY_VAR`] asks the
/// model's API to edit the context (see [`claude_code::extra_body_edits_context`]): the
/// gate then answers ERROR for every call under `--kept-from transcript`.
fn check_claude_extra_body(
    files: &[PathBuf],
    kept: &[(usize, Value)],
    managed: usize,
    f: &mut Findings,
) {
    let var = claude_code::EXTRA_BODY_VAR;
    let Some((value, origin)) = claude_env(files, kept, managed)(var) else {
        return;
    };
    if !claude_code::extra_body_edits_context(&value) {
        return;
    }
    let at = match origin {
        Some(file) => format!("`{}` (`env`)", file.display()),
        None => "this environment".to_string(),
    };
    f.problem(format!(
        "`{var}` in {at} edits the context the model is sent (`messages` or `system` in place of Claude Code's, or `context_management` asking the API to clear tool results), which Claude Code's transcript does not record, so the gate answers ERROR for every call under `--kept-from transcript`: take those keys out of it"
    ));
}

/// One of the gate's hooks `ours` in words: `the hook in `FILE``, or, when its file has
/// more than one, where it is in the file too (see [`hook_named`]).
fn hook_at(harness: Harness, h: &Handler, ours: &[Handler]) -> String {
    if ours.iter().filter(|o| o.file == h.file).count() > 1 {
        format!("the hook {}", hook_named(harness, h))
    } else {
        format!("the hook in `{}`", h.file)
    }
}

/// A hook of the gate, its file and where in it: Codex's trust key (which names the
/// file), else its place under `hooks` and its file.
fn hook_named(harness: Harness, h: &Handler) -> String {
    match harness {
        Harness::Codex => format!("`{}`", hook_label(harness, h)),
        _ => format!("`{}` in `{}`", hook_label(harness, h), h.file),
    }
}

/// Another pre-tool hook that runs on calls the gate judges can rewrite the call (Claude
/// Code's and Codex's `updatedInput`, Gemini CLI's `tool_input`), and the harness runs it
/// as rewritten: the gate judged it as the model made it. Gemini CLI runs the hooks one
/// after another when a group says `"sequential": true`, each shown the call as the
/// hooks before it left it, so there the gate can come last; the other two run them side
/// by side.
fn check_other_hooks(
    harness: Harness,
    ours: &[Handler],
    placed: &[((usize, usize), bool)],
    others: &[((usize, usize), wiring::OtherHook)],
    f: &mut Findings,
) {
    for (h, (at, sequential)) in ours.iter().zip(placed) {
        for (other_at, o) in others {
            if !wiring::overlap(harness, h.matcher.as_deref(), o.matcher.as_deref(), &[]) {
                continue;
            }
            let other = format!("the hook `{}` in `{}`", one_line(&o.command), o.file);
            match (harness, &o.extension) {
                (Harness::GeminiCli, Some(extension)) => {
                    let name = one_line(&extension.name);
                    // Turned off for this directory, it is on under `-e NAME`, which
                    // overrides the enablement file: doctor cannot see the command line.
                    let runs = match &extension.off_in {
                        None => "also runs".to_string(),
                        Some(file) => format!(
                            "is turned off here by `{file}`, but `gemini -e {}` (`--extensions`) turns the extension on whatever that file says, and the hook then runs",
                            wiring::sh_quote(&extension.name)
                        ),
                    };
                    f.problem(format!(
                        "the hook `{}` that the Gemini CLI extension `{name}` brings (in `{}`) {runs} before calls the gate judges, after every hook in the settings files, and Gemini CLI runs a call with the `tool_input` a hook returns, so a call it rewrites runs as the gate never saw it: list `{}` under `hooksConfig.disabled` (it holds under any command line), or uninstall the extension (`gemini extensions uninstall {}`)",
                        one_line(&o.command),
                        o.file,
                        one_line(o.name.as_deref().unwrap_or(&o.command)),
                        wiring::sh_quote(&extension.name)
                    ))
                }
                (Harness::GeminiCli, None) if *sequential && other_at < at => {}
                (Harness::GeminiCli, None) => f.problem(format!(
                    "{other} also runs before calls the gate judges, and Gemini CLI runs a call with the `tool_input` a hook returns, so a call it rewrites runs as the gate never saw it: give the gate's group in `{}` `\"sequential\": true` and put it after that hook (Gemini CLI then shows the gate the call as the hooks before it left it)",
                    h.file
                )),
                (Harness::ClaudeCode, Some(plugin)) => f.note(format!(
                    "the hook `{}` that the Claude Code plugin `{}` brings (in `{}`) also runs before calls the gate judges, side by side with it, and Claude Code runs a call with the `updatedInput` a hook returns, which the gate never sees: if that hook rewrites calls, {}",
                    one_line(&o.command),
                    one_line(&plugin.name),
                    o.file,
                    plugin_fix(&plugin.name)
                )),
                _ => f.note(format!(
                    "{other} also runs before calls the gate judges, side by side with it, and {} runs a call with the `updatedInput` a hook returns, which the gate never sees: if that hook rewrites calls, keep its matcher off the tools the gate judges",
                    w_name(harness)
                )),
            }
        }
    }
}

/// Claude Code runs its `PermissionRequest` hooks when it would ask the user about a call
/// (interactive sessions, `--permission-prompt-tool`, agents in the background), after
/// every `PreToolUse` hook, the gate's included, and runs the call with the
/// `updatedInput` of a hook's `allow` decision (seen with 2.1.197: `python3 -c pass`, which
/// the gate let run, rewritten to a command the store denies, ran). So the gate never
/// sees the call such a hook rewrites. Whether a hook rewrites is not in its settings,
/// so this is a note.
fn check_permission_hooks(ours: &[Handler], asking: &[wiring::OtherHook], f: &mut Findings) {
    let harness = Harness::ClaudeCode;
    for o in asking {
        if !ours
            .iter()
            .any(|h| wiring::overlap(harness, h.matcher.as_deref(), o.matcher.as_deref(), &[]))
        {
            continue;
        }
        let (brings, fix) = match &o.extension {
            Some(plugin) => (
                format!(
                    "that the Claude Code plugin `{}` brings (in `{}`)",
                    one_line(&plugin.name),
                    o.file
                ),
                plugin_fix(&plugin.name),
            ),
            None => (
                format!("in `{}`", o.file),
                "make it allow without `updatedInput` or deny instead, or keep its matcher off the tools the gate judges".to_string(),
            ),
        };
        f.note(format!(
            "the hook `{}` {brings} runs as a `{}` hook on calls the gate judges, when Claude Code would ask about them (interactive sessions, `--permission-prompt-tool`, agents in the background), after the gate judged the call, and Claude Code runs a call with the `updatedInput` of its `allow` decision, which the gate never sees: if that hook rewrites calls, {fix}",
            one_line(&o.command),
            claude_code::PERMISSION_EVENT
        ));
    }
}

/// How to keep a Claude Code plugin's hooks off: turn it off for the project (the local
/// settings outrank the user's and the project's; the managed settings outrank them all),
/// or uninstall it.
fn plugin_fix(id: &str) -> String {
    format!(
        "turn the plugin off here (`claude plugin disable {} --scope local`, which sets it to false under `enabledPlugins` in `.claude/settings.local.json`) or uninstall it",
        wiring::sh_quote(id)
    )
}

/// The gate's hook under `hooks.<key>` of `path`, a key that spells the pre-tool event
/// otherwise (see [`wiring::near_event`]), as one line with its fix: the harness skips
/// the key and runs the rest of the file; `elsewhere` when a hook of the gate under the
/// event's own key runs (the line is then a note: the gate gates).
pub(super) fn misspelt_event(harness: Harness, path: &Path, key: &str, elsewhere: bool) -> String {
    let event = Wiring::of(harness).event;
    let key = clean(key);
    let shown = path.display();
    let skips = match harness {
        Harness::GeminiCli => {
            format!("skips it with only the warning `Invalid hook event name: \"{key}\"`")
        }
        _ => "skips it without a word".to_string(),
    };
    let reads = format!(
        "{} reads pre-tool hooks only under `hooks.{event}`, spelt exactly so, and {skips}",
        w_name(harness)
    );
    if elsewhere {
        return format!(
            "`{shown}`: `hooks.{key}` holds a hook of the gate that never runs: {reads}; the gate runs from `hooks.{event}`: remove `hooks.{key}`"
        );
    }
    let rename = if is_toml(path) {
        format!(
            "rename `{key}` to `{event}` in its `[[hooks.{key}]]` and `[[hooks.{key}.hooks]]` headers"
        )
    } else {
        format!("rename `{key}` to `{event}`")
    };
    format!(
        "`{shown}`: the gate's hook is under `hooks.{key}`, and {reads}, so the hook never runs and the tool runs: {rename}"
    )
}

/// What is wrong with a Codex hooks file whose hooks Codex cannot parse (`problem`, from
/// [`codex::invalid_hooks_file`]), as one line with its fix: a `config.toml` stops Codex
/// from starting; a `hooks.json` loses every hook in it, the gate's too when `ours`.
fn codex_unparsed(path: &Path, problem: &str, ours: bool) -> String {
    let shown = path.display();
    if is_toml(path) {
        format!("`{shown}`: {problem}, and Codex will not start: fix that key")
    } else {
        format!(
            "`{shown}`: {problem}, and Codex loads no hook from this file{}: fix that key",
            if ours { ", the gate's included" } else { "" }
        )
    }
}

/// One file the harness reads hooks from, read as the harness reads its hooks (see
/// [`read_settings`]): `None` when it is not there, the problem line when it cannot be
/// read or parsed.
fn read_hooks_of(harness: Harness, path: &Path) -> Result<Option<Value>, String> {
    match read_optional(path) {
        Ok(Some(text)) => read_settings(harness, path, &text).map(Some),
        Ok(None) => Ok(None),
        Err(e) => Err(format!(
            "{}: {} cannot read it either; {}",
            e.problem,
            w_name(harness),
            e.fix
        )),
    }
}

/// The gate's hooks in the files the harness reads hooks from when started in `dir`,
/// read as doctor reads them, each file but `except` (the one `init` writes, under
/// whatever path reaches it). A file the harness cannot read, or whose hooks Codex cannot
/// parse, is the error: its problem line, since the gate may be declared in it.
pub(super) fn gates_besides(
    harness: Harness,
    dir: &Path,
    except: &Path,
) -> Result<Vec<Handler>, String> {
    let w = Wiring::of(harness);
    let mut gates = Vec::new();
    for path in settings_files(harness, dir)?
        .iter()
        .filter(|p| !same_path(p, except))
    {
        let Some(value) = read_hooks_of(harness, path)? else {
            continue;
        };
        let shown = path.display().to_string();
        let found = wiring::handlers_in(&value, w.event, harness.name(), &shown);
        if harness == Harness::Codex
            && let Some(problem) = codex::invalid_hooks_file(&value)
        {
            return Err(codex_unparsed(path, &problem, !found.is_empty()));
        }
        gates.extend(found);
    }
    Ok(gates)
}

/// A settings file as the harness reads its hooks (a Codex `config.toml`: its `[hooks]`
/// in the shape of a `hooks.json`, see [`codex::config_hooks`]), or the problem line when
/// the harness cannot read it.
fn read_settings(harness: Harness, path: &Path, text: &str) -> Result<Value, String> {
    let shown = path.display().to_string();
    if harness == Harness::Codex && is_toml(path) {
        return text
            .parse::<toml::Table>()
            .map(|config| codex::config_hooks(&config))
            .map_err(|e| invalid_toml(&shown, &e));
    }
    edit::read(text, Wiring::of(harness).comments).map_err(|e| {
        format!(
            "`{shown}` is not valid JSON ({e}), and {} ignores it: fix the syntax",
            w_name(harness)
        )
    })
}

fn is_toml(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "toml")
}

/// A Codex config file that is not TOML: Codex stops at it.
fn invalid_toml(shown: &str, e: &toml::de::Error) -> String {
    format!(
        "`{shown}` is not valid TOML ({}), and Codex will not start: fix it",
        one_line(&e.to_string())
    )
}

/// A note for the instruction files a Claude Code session started in `dir` reads that
/// the hook does not read with `--context-file` ([`claude_memory_files`]): Claude Code
/// sends them with every request and writes them in no transcript, so a rule of the
/// store that only they state is not in view, and the first call the rule binds is
/// denied (seen with 2.1.197 for the start directory's `CLAUDE.md`: the rule was in the
/// request the model answered, and the call was denied; with the flag, it ran; the
/// others are read and sent as that one is, in its bundle). A note, not a problem: the
/// gate over-blocks, never passes. Codex 0.171.0 and Gemini CLI 0.61.0 record
/// `AGENTS.md` and `GEMINI.md` in their transcripts.
fn note_unread_claude_md(dir: &Path, context_files: &[String], at: &str, f: &mut Findings) {
    let unread: Vec<(PathBuf, String)> = claude_memory_files(dir)
        .into_iter()
        .filter(|(file, _)| !context_files.iter().any(|w| same_path(&dir.join(w), file)))
        .collect();
    let files: Vec<String> = (unread.iter())
        .map(|(file, _)| format!("`{}`", clean(&file.display().to_string())))
        .collect();
    let flags: Vec<String> = (unread.iter())
        .map(|(_, flag)| format!("--context-file {flag}"))
        .collect();
    let (files, them, say, one) = match files.as_slice() {
        [] => return,
        [one] => (format!("{one} is"), "it", "it says", "it"),
        [rest @ .., last] => (
            format!("{} and {last} are", rest.join(", ")),
            "them",
            "they say",
            "one of them",
        ),
    };
    f.note(format!(
        "{files} sent with every request, and Claude Code writes {them} in no transcript, so {at} does not count what {say} as in view: a rule of the store that {one} states is denied at its first call; add `{}` to the hook command after `--kept-from transcript`",
        flags.join(" ")
    ));
}

/// The instruction files Claude Code (2.1.197, its bundle's memory loader) reads at the
/// start of a session begun in `dir`, that exist, in its order, each with the value of a
/// `--context-file` that names it in a hook command: the managed `CLAUDE.md` and rules,
/// the user's (in `$CLAUDE_CONFIG_DIR`, else `~/.claude`), then for each folder from the
/// top down to `dir` (the file system's root aside) its `CLAUDE.md`, `.claude/CLAUDE.md`,
/// `.claude/rules` and `CLAUDE.local.md` (seen with 2.1.197: each sent with the first
/// request, in this order, and none in the transcript). Rules as
/// [`always_read_rules`] says; left out too, the files an `@` import names.
fn claude_memory_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let managed = Path::new(claude_code::MANAGED_DIR);
    let mut files = vec![managed.join("CLAUDE.md")];
    files.extend(always_read_rules(&managed.join(".claude/rules")));
    let config = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty());
    let user = match (&config, home()) {
        (Some(c), _) => Some(PathBuf::from(c)),
        (None, Some(h)) => Some(h.join(".claude")),
        (None, None) => None,
    };
    if let Some(user) = &user {
        files.push(user.join("CLAUDE.md"));
        files.extend(always_read_rules(&user.join("rules")));
    }
    let mut folders: Vec<&Path> = dir.ancestors().filter(|d| d.parent().is_some()).collect();
    folders.reverse();
    let nested = super::context_files::nested_worktree(dir);
    for folder in folders {
        // In a worktree inside its main checkout, the main checkout's own files are not
        // read: the worktree has its copy.
        let skipped = nested.as_ref().is_some_and(|(main, worktree)| {
            std::fs::canonicalize(folder)
                .is_ok_and(|f| f.starts_with(main) && !f.starts_with(worktree))
        });
        if !skipped {
            files.push(folder.join("CLAUDE.md"));
            files.push(folder.join(".claude/CLAUDE.md"));
            files.extend(always_read_rules(&folder.join(".claude/rules")));
        }
        files.push(folder.join("CLAUDE.local.md"));
    }
    let home_claude = user.filter(|_| config.is_none());
    files
        .into_iter()
        .filter(|file| {
            file.is_file()
                && !claude_code::memory_path_skipped(&file.to_string_lossy())
                && !std::fs::canonicalize(file)
                    .is_ok_and(|f| claude_code::memory_path_skipped(&f.to_string_lossy()))
        })
        .map(|file| {
            // Spelt as the hook command can give it wherever the session runs it: from
            // the project by its variable, the user's by `$HOME`, others in full.
            let under = |root: &Path| {
                let rest = file.strip_prefix(root).ok()?;
                Some(wiring::sh_quote(&rest.display().to_string()))
            };
            let flag = if let Some(rest) = under(dir) {
                format!("\"$CLAUDE_PROJECT_DIR\"/{rest}")
            } else if let Some(rest) = home_claude.as_deref().and_then(under) {
                format!("\"$HOME\"/.claude/{rest}")
            } else {
                wiring::sh_quote(&file.display().to_string())
            };
            (file, flag)
        })
        .collect()
}

/// The `.md` files under a rules folder (its subfolders too, sorted) that Claude Code
/// reads at the start of every session: those without front matter (seen with 2.1.197:
/// such a rule was sent with the first request, and is in no transcript). One with
/// front matter may give `paths`, and then is read only once the agent touches a file
/// they cover: counted in view before that, its rule would not block; doctor does not
/// read YAML to tell, and leaves each such file out.
fn always_read_rules(folder: &Path) -> Vec<PathBuf> {
    let mut files = files_under(folder, "md");
    files.retain(|path| {
        std::fs::read(path).is_ok_and(|text| {
            let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&text);
            !text.trim_ascii_start().starts_with(b"---")
        })
    });
    files
}

/// True when a hook command's words take the kept set from the session transcript.
fn kept_from_transcript(words: &[String]) -> bool {
    flag_value(words, "--kept-from") == Ok(Some(wiring::KEPT_FROM))
}

/// The harness's name as its users know it.
/// The names or globs a pattern of another syntax stands for, for messages: "`Bash`,
/// `Edit`".
pub(super) fn pattern_fix(globs: &[String]) -> String {
    let shown: Vec<String> = globs.iter().map(|g| format!("`{}`", clean(g))).collect();
    shown.join(", ")
}

pub(super) fn w_name(h: Harness) -> &'static str {
    h.title()
}

/// True when two paths name the same file or folder: equal as written, or once symlinks
/// are resolved (when both exist).
fn same_path(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

/// The files the harness reads hooks from, lowest precedence first.
fn settings_files(harness: Harness, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let home = || home().ok_or("`HOME` is not set, so the user settings cannot be found");
    Ok(match harness {
        Harness::ClaudeCode => {
            let home = home()?;
            let user = std::env::var_os("CLAUDE_CONFIG_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".claude"));
            // The managed settings hold hooks that run too (and, with
            // `allowManagedHooksOnly`, the only ones that run).
            let mut files = claude_managed_files();
            files.extend([
                user.join(claude_user_settings_name()),
                dir.join(".claude/settings.json"),
                dir.join(".claude/settings.local.json"),
            ]);
            files
        }
        // The hooks of each config folder Codex reads, in its `hooks.json` and its
        // `config.toml`: the machine's, the user's, then each project's `.codex`.
        Harness::Codex => {
            let user = codex_home().ok_or(
                "neither `CODEX_HOME` nor `HOME` is set, so the user config cannot be found",
            )?;
            let projects = codex_project_folders(dir, &user);
            let mut folders = vec![PathBuf::from(codex::SYSTEM_DIR), user];
            folders.extend(projects);
            folders
                .iter()
                .flat_map(|folder| codex::HOOK_FILES.map(|file| folder.join(file)))
                .collect()
        }
        // Every file that can hold a hook Gemini CLI runs: it joins the `BeforeTool`
        // lists of the system defaults, the user's, the workspace's and the system
        // settings (those it does not skip as insecure).
        Harness::GeminiCli => {
            let home = home()?;
            gemini_cli::settings_by_precedence(dir, |key: &str| match key {
                "HOME" => Some(home.clone().into_os_string()),
                _ => std::env::var_os(key),
            })
        }
    })
}

/// Claude Code's managed settings files, in the order it merges them.
fn claude_managed_files() -> Vec<PathBuf> {
    let dir = Path::new(claude_code::MANAGED_DIR);
    let mut drop_ins: Vec<PathBuf> = std::fs::read_dir(dir.join("managed-settings.d"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".json") && !n.starts_with('.'))
                && p.is_file()
        })
        .collect();
    drop_ins.sort();
    let mut files = vec![dir.join("managed-settings.json")];
    files.extend(drop_ins);
    files
}

/// The managed settings that leave the gate's hook out: no hook runs, or only the
/// managed settings' own hooks, and ours is elsewhere. `hooks_off_in`: the file outside
/// them whose `disableAllHooks` true the merged settings keep; Claude Code 2.1.197 then
/// runs only the managed settings' hooks, and the hooks of the plugins they turn on (seen
/// with 2.1.197: the project's settings set it, and the pre-tool hook in the managed
/// settings still denied a call).
fn check_claude_managed(ours: &[Handler], hooks_off_in: Option<&str>, f: &mut Findings) {
    let managed = claude_managed_files();
    let mut layers = Vec::new();
    for path in &managed {
        if let Ok(Some(text)) = read_optional(path)
            && let Ok(value) = edit::read(&text, false)
        {
            layers.push((path.display().to_string(), value));
        }
    }
    let layers: Vec<(&str, &Value)> = layers.iter().map(|(p, v)| (p.as_str(), v)).collect();
    check_claude_remote_managed(ours, &layers, f);
    match claude_code::managed_hooks(&layers) {
        Some(claude_code::Managed::AllOff(file)) => f.problem(format!(
            "`{file}`, Claude Code's managed settings, sets `disableAllHooks` to true, so no hook runs and the tool runs: only whoever manages this machine can remove it"
        )),
        Some(claude_code::Managed::ManagedOnly(key, file)) => {
            let in_managed = |h: &Handler| managed.iter().any(|m| m.display().to_string() == h.file);
            if ours.iter().any(in_managed) {
                return;
            }
            for h in ours {
                f.problem(format!(
                    "`{file}`, Claude Code's managed settings, sets `{key}`, so Claude Code runs only the hooks in the managed settings, and the hook in `{}` never runs: have the gate's hook added to the managed settings, or that setting removed",
                    h.file
                ));
            }
        }
        None => {
            let Some(file) = hooks_off_in else {
                return;
            };
            let in_managed = |h: &Handler| managed.iter().any(|m| m.display().to_string() == h.file);
            for h in ours.iter().filter(|h| !in_managed(h)) {
                f.problem(format!(
                    "`{file}` sets `disableAllHooks` to true, so Claude Code runs only the hooks in the managed settings (and those of the plugins they turn on), and the hook in `{}` never runs: remove that setting",
                    h.file
                ));
            }
        }
    }
}

/// The managed settings Claude Code takes in place of the files: the ones an
/// organization's account delivers, cached in [`claude_code::REMOTE_SETTINGS`] (read when
/// Claude Code talks to Anthropic's own API, which doctor cannot tell, so such a file
/// counts), and what a `policyHelper` computes, which doctor does not run.
fn check_claude_remote_managed(ours: &[Handler], files: &[(&str, &Value)], f: &mut Findings) {
    let path = claude_config_dir().map(|d| d.join(claude_code::REMOTE_SETTINGS));
    let remote = path
        .as_ref()
        .and_then(|p| read_optional(p).ok().flatten())
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()));
    let name = path.map(|p| p.display().to_string()).unwrap_or_default();
    let remote: Vec<(&str, &Value)> = remote.iter().map(|v| (name.as_str(), v)).collect();
    for tier in [files, &remote[..]] {
        if let Some(file) = claude_code::policy_helper(tier) {
            f.unsure = Some(format!(
                "`{file}`, Claude Code's managed settings, names a `policyHelper`, a program Claude Code runs as it starts and whose `managedSettings` it then takes as its managed settings in place of these, which doctor does not run: run it, and check that its `managedSettings` set neither `disableAllHooks` nor `allowManagedHooksOnly` (nor `strictPluginOnlyCustomization` covering hooks)"
            ));
        }
    }
    let what = "the managed settings Claude Code fetched from your organization's account, which it reads in place of the managed settings files whenever it talks to Anthropic's API with an API key or a Team or Enterprise login";
    match claude_code::managed_hooks(&remote) {
        Some(claude_code::Managed::AllOff(file)) => f.problem(format!(
            "`{file}`, {what}, sets `disableAllHooks` to true, so no hook runs and the tool runs: have that setting removed from your organization's managed settings"
        )),
        Some(claude_code::Managed::ManagedOnly(key, file)) => {
            for h in ours {
                f.problem(format!(
                    "`{file}`, {what}, sets `{key}`, so Claude Code runs only the hooks in those managed settings, and the hook in `{}` never runs: have the gate's hook added to your organization's managed settings, or that setting removed",
                    h.file
                ));
            }
        }
        None => {}
    }
    // The managed files go unread, the gate's hook in them too.
    if let Some((name, _)) = remote.first() {
        let managed = claude_managed_files();
        for h in ours
            .iter()
            .filter(|h| managed.iter().any(|m| m.display().to_string() == h.file))
        {
            f.problem(format!(
                "`{name}` holds {what}, so the hook in `{}` never runs: have the gate's hook added to your organization's managed settings",
                h.file
            ));
        }
    }
}

/// Claude Code's config folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn claude_config_dir() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(d) => Some(PathBuf::from(d)),
        None => Some(home()?.join(".claude")),
    }
}

/// A project settings file with our hook in a directory above those the harness reads
/// when it starts in `dir` (Claude Code and Gemini CLI read only `dir`'s; Codex reads
/// from the project root down).
fn hook_above(harness: Harness, dir: &Path) -> Option<String> {
    let (start, files): (PathBuf, &[&str]) = match harness {
        Harness::ClaudeCode => (
            dir.to_path_buf(),
            &[".claude/settings.json", ".claude/settings.local.json"],
        ),
        Harness::Codex => (
            codex_project_root(dir),
            &[".codex/hooks.json", ".codex/config.toml"],
        ),
        Harness::GeminiCli => (dir.to_path_buf(), &[".gemini/settings.json"]),
    };
    let w = Wiring::of(harness);
    start.ancestors().skip(1).find_map(|a| {
        files.iter().find_map(|file| {
            let path = a.join(file);
            let value = read_hooks_of(harness, &path).ok()??;
            (!wiring::handlers_in(&value, w.event, harness.name(), "").is_empty())
                .then(|| path.display().to_string())
        })
    })
}

fn check_codex_trust(dir: &Path, ours: &[Handler], f: &mut Findings) {
    let Some(home) = codex_home() else {
        f.unsure = Some("neither `CODEX_HOME` nor `HOME` is set".into());
        return;
    };
    let config_path = home.join("config.toml");
    let config = config_path.display().to_string();
    let user = match read_optional(&config_path) {
        Ok(Some(t)) => match t.parse::<toml::Table>() {
            Ok(t) => t,
            Err(e) => {
                f.problem(invalid_toml(&config, &e));
                return;
            }
        },
        Ok(None) => toml::Table::new(),
        Err(e) => {
            f.problem(e.to_string());
            return;
        }
    };
    check_codex_config(dir, &config, &user, f);
    // The machine's requirements can leave only managed hooks, and ours is not one.
    let requirements = Path::new(codex::SYSTEM_DIR).join("requirements.toml");
    if let Ok(Some(text)) = read_optional(&requirements)
        && let Ok(table) = text.parse::<toml::Table>()
        && table
            .get("allow_managed_hooks_only")
            .and_then(toml::Value::as_bool)
            == Some(true)
    {
        for h in ours.iter().filter(|h| !codex::managed(Path::new(&h.file))) {
            f.problem(format!(
                "`{}` sets `allow_managed_hooks_only = true`, so Codex runs only the hooks its managed configuration brings, and the hook in `{}` never runs: have the gate's hook added there by whoever manages this machine, or that setting removed",
                requirements.display(),
                h.file
            ));
        }
    }
    let project_folders = codex_project_folders(dir, &home);
    // The machine's own hooks are managed: Codex runs them without trust.
    for h in ours.iter().filter(|h| !codex::managed(Path::new(&h.file))) {
        let key = codex::hook_key(&h.file, h.group, h.index);
        let hash = codex::trusted_hash(h.matcher.as_deref(), &h.object);
        let state = codex::hook_state(&user, &key);
        let add = format!(
            "trust it in the Codex TUI (`/hooks`) or put `trusted_hash = \"{hash}\"` under `[hooks.state.{}]` in `{config}`",
            codex::toml_string(&key)
        );
        if state.enabled == Some(false) {
            f.problem(format!(
                "the hook `{key}` is disabled (`enabled = false` in `{config}`): remove that line"
            ));
        }
        match state.trusted_hash {
            None => f.problem(format!(
                "the hook `{key}` is not trusted, so `codex exec` skips it without a word and the tool runs: {add}"
            )),
            Some(t) if t != hash => f.problem(format!(
                "the hook `{key}` changed since it was trusted (trusted `{t}`, now `{hash}`), so `codex exec` skips it without a word and the tool runs: {add}"
            )),
            Some(_) => {}
        }
        // A project's `.codex` is read only when the project (its root: the nearest
        // directory above with `.git`, else the start directory) is trusted. The user's
        // folder is read without it, even when `CODEX_HOME` is a folder of the project
        // (seen with 0.171.0: a hook in `$CODEX_HOME/hooks.json` of an untrusted
        // project ran).
        let root = codex_project_root(dir);
        let in_project = Path::new(&h.file)
            .parent()
            .is_some_and(|folder| project_folders.iter().any(|p| p == folder));
        let root_text = root.display().to_string();
        if in_project && codex::project_trust(&user, &root_text).as_deref() != Some("trusted") {
            // A second `[projects."DIR"]` table is a TOML error: an existing one is edited.
            let table = codex::toml_string(&root_text);
            let how = match codex::has_project_table(&user, &root_text) {
                true => {
                    format!("set `trust_level = \"trusted\"` in its `[projects.{table}]` table in")
                }
                false => format!("add `[projects.{table}]` with `trust_level = \"trusted\"` to"),
            };
            f.problem(format!(
                "the project `{root_text}` is not trusted, so Codex ignores the hooks in its `.codex` folders: {how} `{config}`"
            ));
        }
    }
}

/// Two of the gate's hooks whose matchers select the same call and that the harness does
/// not run as one (see [`wiring::run_as_one`]), in any files it reads: both run before
/// that call (seen with Codex 0.171.0: a hook in the user's `config.toml` and one in the
/// project's `.codex/hooks.json` both ran, and the call was blocked when either denied
/// it), so the gate runs twice on it.
fn check_gate_twice(harness: Harness, ours: &[Handler], f: &mut Findings) {
    let named = |h: &Handler| hook_named(harness, h);
    for (i, a) in ours.iter().enumerate() {
        for b in ours.iter().skip(i + 1) {
            if wiring::overlap(harness, a.matcher.as_deref(), b.matcher.as_deref(), &[])
                && !wiring::run_as_one(harness, a, b)
            {
                f.note(format!(
                    "the hooks {} and {} both run the gate, and {}, so each call both select runs it twice (a call either one denies is blocked): keep one of them and remove the other",
                    named(a),
                    named(b),
                    runs_each(harness)
                ));
            }
        }
    }
}

/// Where a hook of the gate is in its file: Codex's trust key (which names the file),
/// else its place under `hooks`.
pub(super) fn hook_label(harness: Harness, h: &Handler) -> String {
    match harness {
        Harness::Codex => codex::hook_key(&h.file, h.group, h.index),
        _ => format!(
            "hooks.{}[{}].hooks[{}]",
            Wiring::of(harness).event,
            h.group,
            h.index
        ),
    }
}

/// Which of the gate's hooks the harness runs (see [`wiring::run_as_one`]), in words.
pub(super) fn runs_each(harness: Harness) -> &'static str {
    match harness {
        Harness::Codex => "Codex runs every hook it reads",
        Harness::ClaudeCode => {
            "Claude Code runs every hook command it reads (the same command once)"
        }
        Harness::GeminiCli => {
            "Gemini CLI runs every hook it reads (the same name and command once)"
        }
    }
}

/// The project config folders Codex reads for a session started in `dir`, in order: the
/// `.codex` of each of [`codex_layers`], but for one that is `user`, its own config folder
/// (`CODEX_HOME`), as written or once symlinks are resolved: Codex reads that one once, as
/// the user's (a project that sets `CODEX_HOME` to its `.codex`, a start in `~`). Only
/// these need the project trusted; the user's folder does not, wherever it is.
fn codex_project_folders(dir: &Path, user: &Path) -> Vec<PathBuf> {
    codex_layers(dir)
        .iter()
        .map(|l| l.join(".codex"))
        .filter(|folder| !same_path(folder, user))
        .collect()
}

/// The directories whose `.codex` Codex reads, in order: from the project root (the
/// nearest directory above with `.git`, else `dir`) down to the start directory `dir`.
fn codex_layers(dir: &Path) -> Vec<&Path> {
    let root = codex_project_root(dir);
    let mut layers: Vec<&Path> = dir
        .ancestors()
        .take_while(|a| a.starts_with(&root))
        .collect();
    layers.reverse();
    layers
}

/// What the configs Codex reads (the machine's, the user's, each project's
/// `.codex/config.toml` from the project root down to the start directory when the
/// project is trusted, then the
/// machine's managed config, each read after the one above) say that makes the hook not run (`[features] hooks = false`) or
/// the gate count as seen what the model is not sent (`tool_output_token_limit` under
/// [`codex::OUTPUT_LIMIT_MIN`]).
fn check_codex_config(dir: &Path, config: &str, user: &toml::Table, f: &mut Findings) {
    let mut project = Vec::new();
    // Codex reads no project config in a project it does not trust (seen with 0.171.0:
    // `[features] hooks = true` there did not undo the user's `false`, and the tool ran).
    let root = codex_project_root(dir).display().to_string();
    let trusted = codex::project_trust(user, &root).as_deref() == Some("trusted");
    for layer in codex_layers(dir).into_iter().filter(|_| trusted) {
        let path = layer.join(".codex/config.toml");
        if let Ok(Some(text)) = read_optional(&path)
            && let Ok(table) = text.parse::<toml::Table>()
        {
            project.push((path.display().to_string(), table));
        }
    }
    // The machine's: its config read first, under the user's, and its managed config
    // last, over all the others.
    let machine = |name: &str| {
        let path = Path::new(codex::SYSTEM_DIR).join(name);
        let table = read_optional(&path)
            .ok()
            .flatten()
            .and_then(|t| t.parse::<toml::Table>().ok());
        table.map(|t| (path.display().to_string(), t))
    };
    let (system, managed) = (machine("config.toml"), machine(codex::MANAGED_CONFIG));
    fn layer((name, table): &(String, toml::Table)) -> (&str, &toml::Table) {
        (name.as_str(), table)
    }
    let configs = codex::config_order(
        system.as_ref().map(layer),
        (config, user),
        project.iter().map(layer),
        managed.as_ref().map(layer),
    );
    if let Some((file, key)) = codex::hooks_feature_off(&configs) {
        f.problem(format!(
            "`{file}` sets `{key} = false` under `[features]`, so Codex runs no hook at all and the tool runs: remove that line"
        ));
    }
    for (file, key, limit) in codex::output_limits_below(&configs) {
        f.problem(format!(
            "`{file}` sets `{} = {limit}`, under {}: Codex then sends the model less of a long code cell's or subagent's output than the gate counts as seen (the first {} bytes of one it stores whole), so a rule past that cut counts as in view though the model never got it: raise it to {} or more, or remove it",
            clean(&key),
            codex::OUTPUT_LIMIT_MIN,
            crate::transcript::CODEX_UNCUT_HEAD,
            codex::OUTPUT_LIMIT_MIN
        ));
    }
}

/// Gemini CLI replaces `$VAR` and `${VAR}` in its settings with the variable's value from
/// its own environment when it reads them, before it puts the project directory in
/// place of `$GEMINI_PROJECT_DIR` for a hook: started with `GEMINI_PROJECT_DIR` set to
/// another directory, the hook reads that directory's store (seen: with it set to a
/// folder whose store was empty, the call the project's store denies ran).
fn check_gemini_load_expansion(project: &str, ours: &[Handler], f: &mut Findings) {
    for h in ours {
        for var in ["GEMINI_PROJECT_DIR", "GEMINI_CWD", "CLAUDE_PROJECT_DIR"] {
            let named = h.command.contains(&format!("${var}"))
                || h.command.contains(&format!("${{{var}}}"));
            let Some(value) = std::env::var(var).ok().filter(|v| named && v != project) else {
                continue;
            };
            f.problem(format!(
                "`{var}` is `{}` in this environment, and Gemini CLI started with it puts that in the hook in `{}` when it reads its settings, so the hook reads that directory's store, not this project's: unset it before you start gemini",
                one_line(&value),
                h.file
            ));
        }
    }
}

/// The settings files Gemini CLI reads for a session started in `dir`, in the order it
/// merges them, each with its content as Gemini CLI takes it, the variables in its
/// strings resolved from doctor's environment (see [`gemini_cli::resolve_env_vars`];
/// those it cannot read left out).
fn gemini_layers(dir: &Path) -> Vec<(String, Value)> {
    let env = |key: &str| std::env::var_os(key);
    let mut layers = Vec::new();
    for path in gemini_cli::settings_by_precedence(dir, env) {
        if let Ok(Some(text)) = read_optional(&path)
            && let Ok(mut value) = edit::read(&text, true)
        {
            gemini_cli::resolve_env_vars(&mut value, &env);
            layers.push((path.display().to_string(), value));
        }
    }
    layers
}

/// The `BeforeTool` hooks that the Gemini CLI extensions a session started in `dir` can
/// load bring (see [`gemini_cli::EXTENSIONS_DIR`]), each with its extension. One that
/// the settings keep from loading (see [`gemini_cli::extension_not_loaded`]) is left out;
/// one that `extension-enablement.json` turns off for `dir` is kept, with that file
/// named, since `gemini -e NAME`, which doctor cannot see, turns it on.
fn gemini_extension_hooks(dir: &Path) -> Vec<wiring::OtherHook> {
    let mut out = Vec::new();
    for (folder, extension) in gemini_extensions(dir) {
        let file = folder.join(gemini_cli::EXTENSION_HOOKS);
        let Some(hooks) = json(&file) else {
            continue;
        };
        let shown = file.display().to_string();
        out.extend(
            wiring::other_hooks_in(&hooks, "BeforeTool", Harness::GeminiCli.name(), &shown)
                .into_iter()
                .map(|o| wiring::OtherHook {
                    extension: Some(extension.clone()),
                    ..o
                }),
        );
    }
    out
}

/// The folder of each Gemini CLI extension a session started in `dir` can load, with
/// its name and the file that turns it off for `dir` (kept: `gemini -e NAME` turns it
/// on); one the settings keep from loading (see [`gemini_cli::extension_not_loaded`])
/// is left out.
fn gemini_extensions(dir: &Path) -> Vec<(PathBuf, wiring::Extension)> {
    let Some(home) = gemini_cli::user_home(|key: &str| std::env::var_os(key)) else {
        return Vec::new();
    };
    let root = home.join(gemini_cli::EXTENSIONS_DIR);
    let enablement_file = root.join(gemini_cli::EXTENSION_ENABLEMENT);
    let enablement = json(&enablement_file).unwrap_or(Value::Null);
    let layers = gemini_layers(dir);
    let layers: Vec<(&str, &Value)> = layers.iter().map(|(p, v)| (p.as_str(), v)).collect();
    let folders = subfolders(&root);
    let start = dir.display().to_string();
    let mut out = Vec::new();
    for installed in folders {
        let install = json(&installed.join(gemini_cli::INSTALL_METADATA));
        let source = install
            .as_ref()
            .and_then(|m| m.get("source"))
            .and_then(Value::as_str);
        let real = source.and_then(|s| gemini_cli::real_source(s, dir));
        if gemini_cli::extension_not_loaded(&layers, install.as_ref(), real.as_deref()).is_some() {
            continue;
        }
        let linked = install.as_ref().and_then(|m| {
            (m.get("type").and_then(Value::as_str) == Some("link"))
                .then(|| source.map(PathBuf::from))
                .flatten()
        });
        let folder = linked.unwrap_or(installed);
        let Some(config) = json(&folder.join(gemini_cli::EXTENSION_CONFIG)) else {
            continue;
        };
        let text = |key: &str| {
            config
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
        };
        let (Some(name), Some(_)) = (text("name"), text("version")) else {
            continue;
        };
        let off_in = (!gemini_cli::extension_enabled(&enablement, name, &start))
            .then(|| enablement_file.display().to_string());
        out.push((
            folder,
            wiring::Extension {
                name: name.to_string(),
                off_in,
            },
        ));
    }
    out
}

/// The Gemini CLI custom commands a session started in `project` loads (the user's,
/// the project's, each extension's; see [`gemini_cli::COMMANDS_DIR`]) that run a shell
/// command when used: Gemini CLI runs it with no `BeforeTool` hook, so the gate never
/// judges it: under `--yolo`, or with the shell allowed (`tools.allowed`,
/// `--allowed-tools`, a policy file), it runs without a word. No setting stops it for
/// sure: `tools.exclude` listing `run_shell_command` is outranked by a policy file's
/// rule that allows it (the user's `~/.gemini/policies`, `--policy`; seen), so each is
/// a problem.
fn check_gemini_command_shell(project: &str, f: &mut Findings) {
    let home = gemini_cli::user_home(|key: &str| std::env::var_os(key));
    let mut dirs: Vec<(PathBuf, Option<String>)> = Vec::new();
    if let Some(home) = &home {
        dirs.push((home.join(".gemini").join(gemini_cli::COMMANDS_DIR), None));
    }
    let project_dir = Path::new(project);
    if home.as_deref() != Some(project_dir) {
        dirs.push((
            project_dir.join(".gemini").join(gemini_cli::COMMANDS_DIR),
            None,
        ));
    }
    for (folder, extension) in gemini_extensions(project_dir) {
        dirs.push((folder.join(gemini_cli::COMMANDS_DIR), Some(extension.name)));
    }
    for (dir, extension) in dirs {
        for file in toml_files(&dir) {
            let Some(text) = read_optional(&file).ok().flatten() else {
                continue;
            };
            // Gemini CLI reads it with another TOML parser: one this cannot read is
            // looked at as it is written.
            let prompt = match toml::from_str::<toml::Table>(&text) {
                Ok(table) => match table.get("prompt").and_then(|p| p.as_str()) {
                    Some(prompt) => prompt.to_string(),
                    None => continue,
                },
                Err(_) => text,
            };
            let Some(shell) = gemini_cli::command_shell(&prompt) else {
                continue;
            };
            let what = match shell {
                gemini_cli::CommandShell::Inline(command) => {
                    format!("runs `{}` in its shell", one_line(&command))
                }
                gemini_cli::CommandShell::File(path) => format!(
                    "runs in its shell each `!{{...}}` that the file `{}` it injects holds (whoever writes that file, the agent included, chooses the command)",
                    one_line(&path)
                ),
            };
            let fix = match &extension {
                Some(name) => format!(
                    "uninstall the extension `{name}` (`gemini extensions uninstall {name}`)"
                ),
                None => "take the `!{...}` (and `{{args}}` beside an `@{...}`) out of its prompt, or remove the command".to_string(),
            };
            f.problem(format!(
                "`{}`, a Gemini CLI custom command, {what} when it is used, and Gemini CLI runs that with no `BeforeTool` hook (with the shell allowed, or under `--yolo`, without a word), so the gate never judges it: {fix}",
                file.display(),
            ));
        }
    }
}

/// The `.toml` files under `dir`, as Gemini CLI's `**/*.toml` finds them ([`files_under`]):
/// with `dot: true`, so a file or folder whose name starts with `.` is read too (seen:
/// `commands/.hid/st.toml` and `commands/.st.toml` ran as `/.hid:st` and `/.st`); a link
/// to a folder is followed (seen: `commands/linked`, a link to a folder elsewhere, gave
/// `/linked:NAME`).
fn toml_files(dir: &Path) -> Vec<PathBuf> {
    files_under(dir, "toml")
}

/// The files under `dir` whose name ends in `.{ext}` (not the bare `.{ext}`), at any
/// depth, in sorted order, dot-named ones included. A link to a folder is followed, and
/// each folder is read once (by its real path, the first way it is reached in that
/// order), so a loop of links ends.
fn files_under(dir: &Path, ext: &str) -> Vec<PathBuf> {
    fn walk(
        folder: &Path,
        ext: &str,
        seen: &mut std::collections::BTreeSet<PathBuf>,
        out: &mut Vec<PathBuf>,
    ) {
        let real = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
        if !seen.insert(real) {
            return;
        }
        let Ok(entries) = std::fs::read_dir(folder) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            if path.is_dir() {
                walk(&path, ext, seen, out);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, ext, &mut std::collections::BTreeSet::new(), &mut out);
    out
}

/// The folders of the plugins the settings `layers` (lowest precedence first) turn on
/// (see [`claude_code::enabled_plugins`]) that Claude Code 2.1.197 has installed for
/// `dir`, each with its plugin, sorted; and the plugins turned on that it has not
/// installed here. It finds an installed plugin in `installed_plugins.json` under its
/// plugins folder ([`claude_plugins_dir`]), one entry per scope: a `project` or `local`
/// one applies only to its `projectPath`; a plugin not listed there, in the seed folders
/// ([`claude_seed_folders`]).
fn claude_plugin_folders(dir: &Path, layers: &[&Value]) -> (Vec<(String, PathBuf)>, Vec<String>) {
    let ids = claude_code::enabled_plugins(layers);
    if ids.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let Some(plugins) = claude_plugins_dir() else {
        return (Vec::new(), ids);
    };
    let installed = read_optional(&plugins.join("installed_plugins.json"))
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    let (mut found, mut missing) = (Vec::new(), Vec::new());
    for id in ids {
        let entries = installed
            .as_ref()
            .and_then(|i| {
                i.pointer(&format!(
                    "/plugins/{}",
                    id.replace('~', "~0").replace('/', "~1")
                ))
            })
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut folders: Vec<PathBuf> = entries
            .iter()
            .filter(|e| {
                let scope = e.get("scope").and_then(Value::as_str);
                !matches!(scope, Some("project" | "local"))
                    || e.get("projectPath")
                        .and_then(Value::as_str)
                        .is_some_and(|p| same_path(Path::new(p), dir))
            })
            .filter_map(|e| {
                e.get("installPath")
                    .and_then(Value::as_str)
                    .map(PathBuf::from)
            })
            .collect();
        if folders.is_empty() {
            folders = claude_seed_folders(&id);
        }
        folders.sort();
        folders.dedup();
        if folders.is_empty() {
            missing.push(id);
            continue;
        }
        found.extend(folders.into_iter().map(|f| (id.clone(), f)));
    }
    (found, missing)
}

/// Whether Claude Code 2.1.197 started in this environment uses its "cowork" plugins:
/// `CLAUDE_CODE_USE_COWORK_PLUGINS` true (read from its binary: the user settings file
/// is then `cowork_settings.json` and the plugins folder `cowork_plugins`, both in its
/// config folder).
fn claude_cowork() -> bool {
    std::env::var("CLAUDE_CODE_USE_COWORK_PLUGINS").is_ok_and(|v| claude_code::truthy(&v))
}

/// The name of Claude Code's user settings file in its config folder (see
/// [`claude_cowork`]).
fn claude_user_settings_name() -> &'static str {
    if claude_cowork() {
        "cowork_settings.json"
    } else {
        "settings.json"
    }
}

/// Claude Code's plugins folder, as 2.1.197 finds it: `CLAUDE_CODE_PLUGIN_CACHE_DIR`,
/// else `plugins` (`cowork_plugins`, see [`claude_cowork`]) in its config folder
/// (`CLAUDE_CONFIG_DIR`, else `~/.claude`).
fn claude_plugins_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("CLAUDE_CODE_PLUGIN_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let config = match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => home()?.join(".claude"),
    };
    Some(config.join(if claude_cowork() {
        "cowork_plugins"
    } else {
        "plugins"
    }))
}

/// The read-only seed folders `CLAUDE_CODE_PLUGIN_SEED_DIR` names (a `:`-separated
/// list), as Claude Code 2.1.197 reads it.
fn claude_seed_dirs() -> Vec<PathBuf> {
    std::env::var_os("CLAUDE_CODE_PLUGIN_SEED_DIR")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The JSON a file holds, or `None` where it is missing, unreadable or not JSON (doctor
/// then reads nothing from it).
fn json(path: &Path) -> Option<Value> {
    serde_json::from_str(&read_optional(path).ok()??).ok()
}

/// The folders in `dir`, sorted (none where it cannot be read).
fn subfolders(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found
}

/// The folders a seed folder holds for the plugin `id` (`name@marketplace`), which
/// Claude Code 2.1.197 loads an enabled plugin from when `installed_plugins.json` does
/// not list it: `cache/MARKETPLACE/NAME/VERSION` in each seed folder (read from its
/// binary; each name with every character but letters, digits, `-` and `_` made `-`).
/// It picks one version by what the marketplace entry says; this takes every version
/// there, so doctor reads at least the one Claude Code runs.
fn claude_seed_folders(id: &str) -> Vec<PathBuf> {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    let (name, market) = id.rsplit_once('@').unwrap_or((id, "unknown"));
    let mut out = Vec::new();
    for seed in claude_seed_dirs() {
        let versions = seed.join("cache").join(safe(market)).join(safe(name));
        out.extend(subfolders(&versions));
    }
    out
}

/// The entry of the plugin `id` (`name@marketplace`) in its marketplace's catalog, and
/// that catalog's file: Claude Code 2.1.197 finds the marketplace in
/// `known_marketplaces.json` (a seed folder's `marketplaces/NAME` or
/// `marketplaces/NAME.json` first, then the plugins folder's `installLocation`), reads
/// `.claude-plugin/marketplace.json` there (or the location itself, a file), and takes
/// the entry of `plugins` with the plugin's `name`. An entry's `agents`, `skills`,
/// `commands` and `hooks` are loaded with the plugin's own (read from its binary: "from
/// marketplace entry").
fn claude_marketplace_entry(id: &str) -> Option<(PathBuf, Value)> {
    let (name, market) = id.rsplit_once('@')?;
    let catalog = |location: &Path| -> Option<(PathBuf, Value)> {
        let inside = location.join(".claude-plugin/marketplace.json");
        json(&inside)
            .map(|v| (inside, v))
            .or_else(|| Some((location.to_path_buf(), json(location)?)))
    };
    let mut found = claude_seed_dirs().into_iter().find_map(|seed| {
        let known = json(&seed.join("known_marketplaces.json"))?;
        known.get(market)?;
        let at = seed.join("marketplaces");
        catalog(&at.join(market)).or_else(|| catalog(&at.join(format!("{market}.json"))))
    });
    if found.is_none() {
        let known = json(&claude_plugins_dir()?.join("known_marketplaces.json"))?;
        let location = known.get(market)?.get("installLocation")?.as_str()?;
        found = catalog(Path::new(location));
    }
    let (file, catalog) = found?;
    let entry = catalog
        .get("plugins")?
        .as_array()?
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))?
        .clone();
    Some((file, entry))
}

/// The `PreToolUse` and `PermissionRequest` hooks that the installed plugins `folders`
/// (see [`claude_plugin_folders`]) bring, each with its plugin. Claude Code 2.1.197 reads
/// a plugin's `hooks/hooks.json` and the hooks its manifest names (see
/// [`claude_code::manifest_hooks`]), and runs them after the settings files' hooks, side
/// by side with the gate's (seen with 2.1.197: a plugin's `PreToolUse` hook rewrote
/// `echo harmless`, which the gate let run, to a call the store denies, and Claude Code
/// ran that).
fn claude_plugin_hooks(
    folders: &[(String, PathBuf)],
) -> (Vec<wiring::OtherHook>, Vec<wiring::OtherHook>) {
    let (mut pre, mut permission) = (Vec::new(), Vec::new());
    let harness = Harness::ClaudeCode;
    for (id, folder) in folders {
        let mut sources: Vec<(String, Value)> = Vec::new();
        let standard = folder.join("hooks/hooks.json");
        if let Some(v) = json(&standard) {
            sources.push((standard.display().to_string(), v));
        }
        let manifest_file = folder.join(".claude-plugin/plugin.json");
        for source in json(&manifest_file)
            .as_ref()
            .map(claude_code::manifest_hooks)
            .unwrap_or_default()
        {
            match source {
                Ok(path) => {
                    let file = folder.join(&path);
                    if same_path(&file, &standard) {
                        continue;
                    }
                    if let Some(v) = json(&file) {
                        sources.push((file.display().to_string(), v));
                    }
                }
                Err(v) => sources.push((manifest_file.display().to_string(), v)),
            }
        }
        // The marketplace entry's `hooks`, an object of events (Claude Code 2.1.197
        // spreads it over the plugin's own, so a path there names no hook).
        if let Some((file, entry)) = claude_marketplace_entry(id)
            && let Some(hooks) = entry.get("hooks").filter(|h| h.is_object())
        {
            sources.push((
                file.display().to_string(),
                serde_json::json!({ "hooks": hooks }),
            ));
        }
        for (shown, value) in &sources {
            let with_plugin = |o: wiring::OtherHook| wiring::OtherHook {
                extension: Some(wiring::Extension {
                    name: id.clone(),
                    off_in: None,
                }),
                ..o
            };
            pre.extend(
                wiring::other_hooks_in(value, Wiring::of(harness).event, harness.name(), shown)
                    .into_iter()
                    .map(with_plugin),
            );
            permission.extend(
                wiring::other_hooks_in(value, claude_code::PERMISSION_EVENT, harness.name(), shown)
                    .into_iter()
                    .map(with_plugin),
            );
        }
    }
    (pre, permission)
}

/// A plugin the settings turn on that Claude Code has not installed for this project,
/// as a note: doctor cannot read its hooks, and Claude Code installs such a plugin as it
/// starts once its marketplace is known (seen with 2.1.197: a plugin turned on in the
/// user's settings, its marketplace in `extraKnownMarketplaces`, was installed at the
/// start of the second session, and its `PreToolUse` hook rewrote a call the gate had let
/// run).
fn claude_plugin_not_installed(id: &str) -> String {
    format!(
        "the Claude Code plugin `{}` is turned on under `enabledPlugins` but not installed for this project, so doctor cannot read its hooks, and Claude Code installs such a plugin as it starts once its marketplace is known, then runs its hooks side by side with the gate's, a `PreToolUse` hook's `updatedInput` included, which the gate never sees: install it (`claude plugin install {}`) and run doctor again, or take it out of `enabledPlugins`",
        one_line(id),
        wiring::sh_quote(id)
    )
}

/// The agents, skills and commands whose front matter declares hooks that can rewrite a
/// call the gate judged (see [`claude_code::front_matter_hooks`]), as notes: those of the
/// managed `.claude` folder, the user's config folder, each `.claude` folder from `dir`
/// up to the git root (never the home folder, as Claude Code 2.1.197 looks), and the
/// installed plugins `plugins`, with those their manifests name
/// ([`claude_code::manifest_markdown`]) and a `SKILL.md` in a plugin's own folder; with `yours` false (the managed settings'
/// `strictPluginOnlyCustomization`), only the managed folder's and the plugins'. Which
/// tools their hooks match is in YAML this does not read, so each is a note.
fn claude_front_matter_hooks(
    dir: &Path,
    plugins: &[(String, PathBuf)],
    yours: bool,
) -> (Vec<String>, Vec<(bool, String)>) {
    let mut roots: Vec<(PathBuf, Option<&str>)> =
        vec![(Path::new(claude_code::MANAGED_DIR).join(".claude"), None)];
    let config = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".claude")));
    roots.extend(config.filter(|_| yours).map(|c| (c, None)));
    let home = home();
    let mut at = Some(dir).filter(|_| yours);
    while let Some(d) = at {
        if home.as_deref().is_some_and(|h| same_path(h, d)) {
            break;
        }
        roots.push((d.join(".claude"), None));
        if d.join(".git").exists() {
            break;
        }
        at = d.parent();
    }
    roots.extend(plugins.iter().map(|(id, f)| (f.clone(), Some(id.as_str()))));
    // Each file once (a manifest may name a standard folder), as first found.
    let mut seen = std::collections::BTreeSet::new();
    // Where each text is (shown as it is), its text, what it is, and its plugin.
    let mut texts: Vec<(String, String, &str, Option<&str>)> = Vec::new();
    let mut read = |file: PathBuf, kind, plugin| {
        let file: PathBuf = file.components().collect();
        if seen.insert(file.clone())
            && let Some(text) = read_optional(&file).ok().flatten()
        {
            texts.push((
                format!("`{}`", clean(&file.display().to_string())),
                text,
                kind,
                plugin,
            ));
        }
    };
    for (root, plugin) in &roots {
        for (folder, kind) in claude_code::FRONT_MATTER_FOLDERS {
            for file in markdown_files(&root.join(folder), kind == "skill") {
                read(file, kind, *plugin);
            }
        }
    }
    // A plugin's manifest can name more agents, skills and commands, and a `SKILL.md` in
    // the plugin's own folder makes it a skill.
    let mut written = Vec::new();
    for (id, folder) in plugins {
        let manifest_file = folder.join(".claude-plugin/plugin.json");
        let manifest = json(&manifest_file).unwrap_or_default();
        // The plugin's marketplace entry names them as its manifest does, relative to
        // the plugin's folder.
        let mut manifests = vec![(manifest_file, manifest)];
        manifests.extend(claude_marketplace_entry(id));
        for ((field, kind), (manifest_file, manifest)) in claude_code::FRONT_MATTER_FOLDERS
            .into_iter()
            .flat_map(|f| manifests.iter().map(move |m| (f, m)))
        {
            for entry in claude_code::manifest_markdown(manifest, field) {
                match entry {
                    claude_code::Markdown::Path(path) => {
                        let path = folder.join(path);
                        if path.is_file() {
                            read(path, kind, Some(id.as_str()));
                            continue;
                        }
                        if kind == "skill" {
                            read(path.join("SKILL.md"), kind, Some(id.as_str()));
                        }
                        for file in markdown_files(&path, kind == "skill") {
                            read(file, kind, Some(id.as_str()));
                        }
                    }
                    claude_code::Markdown::Written(name, text) => {
                        let shown = format!(
                            "the command `{}` written in `{}`",
                            one_line(&name),
                            clean(&manifest_file.display().to_string())
                        );
                        written.push((shown, text, kind, Some(id.as_str())));
                    }
                }
            }
        }
        read(folder.join("SKILL.md"), "skill", Some(id.as_str()));
    }
    texts.extend(written);
    let mut out = Vec::new();
    let mut inline = Vec::new();
    let managed_root = format!(
        "`{}/",
        clean(
            &Path::new(claude_code::MANAGED_DIR)
                .join(".claude")
                .display()
                .to_string()
        )
    );
    for (shown, text, kind, plugin) in texts {
        if let Some(command) = claude_code::inline_shell(&text) {
            let managed = plugin.is_none() && shown.starts_with(&managed_root);
            let fix = match plugin {
                // Claude Code runs the managed folder's whatever the settings say.
                None if managed => "have the command taken out of the managed folder".to_string(),
                Some(id) => format!("set `\"disableSkillShellExecution\": true` in the settings (Claude Code then runs no skill's inline command), or {}", plugin_fix(id)),
                None => "set `\"disableSkillShellExecution\": true` in the settings (Claude Code then runs no skill's inline command), or take the command out".to_string(),
            };
            inline.push((
                managed,
                format!(
                    "{shown}, a Claude Code {kind}, runs `{}` inline when the agent uses it (a `Skill` call), and Claude Code runs such a command with no `PreToolUse` hook, so the gate never judges it: {fix}",
                    one_line(&command)
                ),
            ));
        }
        let Some(events) = claude_code::front_matter_hooks(&text) else {
            continue;
        };
        let gating: Vec<String> = events
            .iter()
            .filter(|e| {
                [
                    Wiring::of(Harness::ClaudeCode).event,
                    claude_code::PERMISSION_EVENT,
                ]
                .contains(e)
            })
            .map(|e| format!("`{e}`"))
            .collect();
        let declares = match (gating.is_empty(), events.is_empty()) {
                    (false, _) => format!("declares {} hooks in its front matter", gating.join(" and ")),
                    (true, true) => "declares hooks in its front matter under names doctor cannot read as events (they may be `PreToolUse` hooks)".to_string(),
                    (true, false) => continue,
                };
        let (what, fix) = match plugin {
            Some(id) => (
                format!(
                    "{} {kind} that the Claude Code plugin `{}` brings",
                    if kind == "agent" { "an" } else { "a" },
                    one_line(id)
                ),
                plugin_fix(id),
            ),
            None => (
                format!("a Claude Code {kind}"),
                "take them out, or keep their matcher off the tools the gate judges".to_string(),
            ),
        };
        let when = match kind {
            "agent" => {
                "on the calls made while that agent runs (as a subagent, or as the main agent under `--agent`)"
            }
            _ => "on every call after it is used, for the rest of the session",
        };
        out.push(format!(
            "{shown}, {what}, {declares}, which Claude Code runs {when}, side by side with the gate, and Claude Code runs a call with the `updatedInput` such a hook returns, which the gate never sees: if one rewrites calls, {fix}"
        ));
    }
    (out, inline)
}

/// The Markdown files under `folder`, sorted: each `*/SKILL.md` when `skills`, else each
/// `*.md` at any depth ([`files_under`]).
fn markdown_files(folder: &Path, skills: bool) -> Vec<PathBuf> {
    if !skills {
        return files_under(folder, "md");
    }
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join("SKILL.md"))
        .collect();
    paths.sort();
    paths.retain(|file| file.is_file());
    paths
}

/// `hooksConfig` in any settings file Gemini CLI reads: every hook turned off, or ours
/// listed as disabled.
fn check_gemini_hooks_on(project: &str, ours: &[Handler], f: &mut Findings) {
    let layers = gemini_layers(Path::new(project));
    let layers: Vec<(&str, &Value)> = layers.iter().map(|(p, v)| (p.as_str(), v)).collect();
    for h in ours {
        let Some(name) = gemini_cli::hook_name(&h.object) else {
            continue;
        };
        match gemini_cli::hooks_off(&layers, name) {
            Some(gemini_cli::HooksOff::All(file)) => f.problem(format!(
                "`{file}` sets `hooksConfig.enabled` to false, so Gemini CLI runs no hook at all and the tool runs: remove that setting"
            )),
            Some(gemini_cli::HooksOff::Disabled { file, name }) => f.problem(format!(
                "`{file}` lists `{name}` under `hooksConfig.disabled`, so Gemini CLI skips the hook in `{}` and the tool runs: take it out of that list",
                h.file
            )),
            None => {}
        }
    }
}

fn check_gemini_trust(project: &str, f: &mut Findings) {
    // Gemini CLI 0.61.0 (`checkPathTrust`) asks its environment first, before the
    // `folderTrust` setting and the trusted folders: `GEMINI_RESTRICTED_MODE=true` or
    // `GEMINI_CLI_TRUST_WORKSPACE=false` trusts no folder, `GEMINI_CLI_TRUST_WORKSPACE=true`
    // every one (seen: with it, and no trusted folders, the hook denied a call).
    let env_is = |key: &str, value: &str| std::env::var_os(key).is_some_and(|v| v == value);
    if env_is("GEMINI_RESTRICTED_MODE", "true") || env_is("GEMINI_CLI_TRUST_WORKSPACE", "false") {
        let set = if env_is("GEMINI_RESTRICTED_MODE", "true") {
            "GEMINI_RESTRICTED_MODE=true"
        } else {
            "GEMINI_CLI_TRUST_WORKSPACE=false"
        };
        f.problem(format!(
            "`{set}` is set in this environment, and Gemini CLI started with it trusts no folder, so it registers no hooks in `{project}`: unset it before you start gemini"
        ));
        return;
    }
    if env_is("GEMINI_CLI_TRUST_WORKSPACE", "true") {
        return;
    }
    let Some(home) = home() else {
        f.unsure = Some("`HOME` is not set".into());
        return;
    };
    // Gemini CLI decides trust from the system defaults, the user's and the system
    // settings (never the workspace's): the last of them that sets it wins.
    let workspace = Path::new(project).join(".gemini/settings.json");
    let trust_enabled =
        gemini_cli::settings_by_precedence(Path::new(project), |key: &str| std::env::var_os(key))
            .iter()
            .filter(|file| **file != workspace)
            .filter_map(|file| read_optional(file).ok().flatten())
            .filter_map(|t| edit::read(&t, true).ok())
            .filter_map(|s| s.pointer("/security/folderTrust/enabled").cloned())
            .next_back()
            .and_then(|v| v.as_bool())
            != Some(false);
    if !trust_enabled {
        return;
    }
    let path = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".gemini/trustedFolders.json"));
    let shown = path.display().to_string();
    let rules = match read_optional(&path) {
        Ok(Some(t)) => match edit::read(&t, true) {
            Ok(v) => v,
            Err(e) => {
                f.problem(format!(
                    "`{shown}` is not valid JSON ({e}), so Gemini CLI trusts no folder: fix it"
                ));
                return;
            }
        },
        Ok(None) => Value::Object(serde_json::Map::new()),
        Err(e) => {
            f.problem(e.to_string());
            return;
        }
    };
    let untrusted = "so it registers no hooks there (and `gemini -p` exits 55; with `--skip-trust` it runs with no hooks, since that flag trusts the folder only after the settings are read)";
    match gemini_cli::folder_trusted(&rules, project, Path::new(project)) {
        Some((true, _)) => {}
        // A rule that names the folder or one above it another way (a link, `.`, `..`)
        // applies as Gemini CLI resolves it, and may outrank the one that trusts it.
        Some((false, rule)) => f.problem(format!(
            "the rule `{rule}` in `{shown}` (`DO_NOT_TRUST`, the longest rule that covers the folder once its links and dots are resolved, as Gemini CLI resolves them) makes Gemini CLI distrust the folder `{project}`, {untrusted}: take that rule out, or start gemini with `GEMINI_CLI_TRUST_WORKSPACE=true` in its environment"
        )),
        None => f.problem(format!(
            "Gemini CLI does not trust the folder `{project}`, {untrusted}: add {} to `{shown}`, trust the folder when gemini asks, or start gemini with `GEMINI_CLI_TRUST_WORKSPACE=true` in its environment",
            serde_json::json!({ project: "TRUST_FOLDER" })
        )),
    }
}

/// Checks one handler, `at` in words, then runs it twice as the harness would. The store
/// it reads when it gated.
fn check_handler(
    harness: Harness,
    dir: &Path,
    project: &str,
    h: &Handler,
    at: &str,
    f: &mut Findings,
    limits: Limits,
) -> Option<PathBuf> {
    let w = Wiring::of(harness);
    if !wiring::exits_2_on_failure(&h.command) && harness != Harness::GeminiCli {
        f.problem(format!(
            "{at} does not end in `|| exit 2`, so a binary that cannot be started lets the tool run: add it"
        ));
    }
    // Keys that make Claude Code run the hook otherwise than doctor runs it below, or
    // not wait for it: the run would say it gates when the call runs unjudged.
    if harness == Harness::ClaudeCode {
        for why in claude_code::not_run_as_written(&h.object) {
            f.problem(format!("{at} {why}"));
        }
    }
    if harness == Harness::Codex
        && let Some(why) = codex::never_run(&h.object)
    {
        f.problem(format!("{at} {why}"));
    }
    let env = |name: &str| -> Option<String> {
        match (harness, name) {
            (Harness::ClaudeCode, "CLAUDE_PROJECT_DIR")
            | (Harness::GeminiCli, "GEMINI_PROJECT_DIR" | "GEMINI_CWD" | "CLAUDE_PROJECT_DIR") => {
                Some(project.to_string())
            }
            _ => std::env::var(name).ok(),
        }
    };
    // The words as the shell gives them to the program: variables expanded where the
    // shell expands them (not in single quotes), and a leading `~/` the home folder.
    let words = wiring::split_expanded(&h.command, env).unwrap_or_default();
    if !kept_from_transcript(&words) {
        f.problem(format!(
            "{at} judges calls against the store's `kept` ids, which {} never updates, so a compaction that drops a rule goes unseen: add `--kept-from transcript` (run `omission-gate init {} --dir {}` again)",
            w_name(harness),
            harness.name(),
            wiring::sh_quote(project)
        ));
    }
    // The command as the binary reads it; one it cannot parse fails, and running it
    // says how.
    let args = match Cli::try_parse_from(&words).map(|cli| cli.command) {
        Ok(Command::Hook(args)) => Some(args),
        _ => None,
    };
    if harness == Harness::ClaudeCode && kept_from_transcript(&words) {
        let files = args.as_ref().map_or(&[][..], |a| &a.context_file[..]);
        note_unread_claude_md(dir, files, at, f);
    }
    if let Some(bin) = words.first() {
        match find_binary(bin) {
            Binary::Runnable => {}
            Binary::NotExecutable(path) => f.problem(format!(
                "`{}`, the program {at} runs, is not executable, so the shell cannot start it: run `chmod +x {}`",
                path.display(),
                wiring::sh_quote(&path.display().to_string())
            )),
            Binary::NotFound => f.problem(format!(
                "`{bin}`, the program {at} runs, is not found: run `omission-gate init {} --dir {}` again to write this binary's absolute path",
                harness.name(),
                wiring::sh_quote(project)
            )),
        }
    }
    let harness_ms = harness_timeout_ms(harness, h);
    let given = h.object.get("timeout").filter(|t| t.is_number());
    let odd = match harness {
        Harness::GeminiCli => gemini_odd_timeout(h.object.get("timeout"), harness_ms),
        Harness::ClaudeCode => claude_code_odd_timeout(h.object.get("timeout")),
        Harness::Codex => None,
    };
    // The timeout doctor runs the hook with: the harness's, or, where it is said to be
    // a slip, the one meant, so that the rest is checked as it will run once fixed.
    let mut run_ms = harness_ms;
    match (own_timeout_ms(&words), given, odd) {
        (_, _, Some(odd)) => {
            run_ms = w.timeout;
            f.problem(format!(
                "{at} has `\"timeout\": {}`, {odd}, before the gate answers, and runs the tool: write `\"timeout\": {}`",
                h.object.get("timeout").map(Value::to_string).unwrap_or_default(),
                w.timeout
            ));
        }
        // Gemini CLI reads milliseconds: a value this small is a seconds value (as Claude
        // Code's and Codex's snippets write it), and the setting is what must grow.
        (_, Some(given), None)
            if harness == Harness::GeminiCli && gemini_cli::timeout_in_seconds(harness_ms) =>
        {
            // A whole number of seconds, as meant; else what init writes.
            let meant = match given.as_u64() {
                Some(seconds) if seconds > 0 => seconds * 1000,
                _ => w.timeout,
            };
            run_ms = meant;
            f.problem(format!(
                "{at} has `\"timeout\": {given}`, and Gemini CLI reads a hook's `timeout` in milliseconds (Claude Code and Codex read seconds), so it kills the hook after {given} ms, before the gate answers, and runs the tool: write `\"timeout\": {meant}`"
            ));
        }
        (Some(own), _, None) if own < harness_ms => {}
        (own, _, None) => f.problem(format!(
            "{at} gives omission-gate {}, not below the harness's own timeout of {harness_ms} ms, so a slow answer is killed first and {} runs the tool: write `--timeout-ms {}` or less",
            own.map_or("a `--timeout-ms` it cannot read".to_string(), |ms| format!("`--timeout-ms {ms}`")),
            w_name(harness),
            harness_ms.saturating_mul(3) / 4
        )),
    }
    if h.matcher.is_some() && wiring::matches(harness, h.matcher.as_deref(), "x").is_none() {
        f.problem(format!(
            "the matcher `{}` of {at} is not a valid regular expression, so {} never runs the hook: write a valid one such as `{}`",
            h.matcher.as_deref().unwrap_or(""),
            w_name(harness),
            w.matcher
        ));
    }
    if let Some(args) = &args {
        check_relative_paths(harness, dir, h, args, at, project, f);
    }
    let store = match flag_value(&words, "--store") {
        Ok(None) | Err(()) => {
            f.problem(format!("{at} has no `--store`: run init again"));
            None
        }
        // A `~` the shell leaves or resolves by itself: check_relative_paths says that
        // doctor cannot tell which file it is.
        Ok(Some(store)) if store.starts_with('~') => None,
        Ok(Some(store)) => {
            // Where the hook reads it at the start of a session: a relative path from the
            // directory the harness runs the hook in, the project's (a leading `~/` is
            // already the home folder, as the shell expands it).
            let path = if store.starts_with('/') {
                PathBuf::from(&store)
            } else {
                dir.join(store)
            };
            let typed = kept_from_transcript(&words);
            if let Some(input) = check_store(harness, &path, h, at, f, limits, typed) {
                let listed = args.as_ref().and_then(|a| a.tools.as_deref());
                if let Some(value) = listed {
                    check_tools_file(harness, dir, value, at, f);
                }
                let listed = listed.map(|v| tools_listed(dir, v, limits));
                check_guarded(harness, &input, &path, at, listed, f);
            }
            Some(path)
        }
    };
    run_checks(harness, dir, project, h, at, f, run_ms)
        .then_some(store)
        .flatten()
}

/// The files a hook command names by a relative path (as the hook itself finds them:
/// [`super::hooks::hook_files`] of `args`, the command parsed as the binary parses it,
/// from words where a leading `~/` is already `$HOME`'s, as the shell puts it; a path that
/// still starts with `~` (`~name`, a quoted `~`) doctor cannot resolve without guessing,
/// and says so). Claude Code runs
/// the hook in the session's current directory: the project at first, then wherever the
/// agent's `cd` left its shell (seen with 2.1.197: after `cd sub`, the hook ran in `sub`,
/// and a store at the same path there was the one read), where the hook now refuses a
/// relative path and denies every call. Codex and Gemini CLI run a hook in the directory
/// the session started in, for the whole session (seen with 0.171.0 and 0.61.0: after
/// `cd sub`, the hook still ran there); but Codex reads a project's `.codex` from every
/// start directory at or below it, so a relative path in a project hook is noted:
/// started below, the hook reads another file.
fn check_relative_paths(
    harness: Harness,
    dir: &Path,
    h: &Handler,
    args: &HookArgs,
    at: &str,
    project: &str,
    f: &mut Findings,
) {
    let (unresolved, relative): (Vec<_>, Vec<_>) = super::hooks::hook_files(args)
        .into_iter()
        .filter(|file| Path::new(&file.path).is_relative() && !names_stdin(&file.path))
        .partition(|file| file.path.starts_with('~'));
    for file in unresolved {
        f.problem(format!(
            "{at} reads {}, which starts with a `~` that doctor does not resolve as the shell would (`~name` is that user's home folder, a quoted `~` a folder named `~`, and `~` with HOME unset depends on the shell), so it cannot tell which file the hook reads: write the path in full",
            file.what
        ));
    }
    match harness {
        Harness::ClaudeCode => {
            for file in relative {
                let given = &file.what;
                f.problem(format!(
                    "{at} reads {given}, a relative path, and Claude Code runs the hook in the session's current directory, which moves with the agent's `cd`: there the path names another file, and the hook denies every call: write it as `{}`{}",
                    file.value_for(&format!(
                        "\"$CLAUDE_PROJECT_DIR\"/{}",
                        clean(&wiring::sh_quote(&file.path))
                    )),
                    if given.starts_with("--store") {
                        format!(
                            " (`omission-gate init claude-code --dir {}` writes the store so)",
                            wiring::sh_quote(project)
                        )
                    } else {
                        String::new()
                    }
                ));
            }
        }
        Harness::Codex => {
            let Some(home) = codex_home() else { return };
            let folder = Path::new(&h.file).parent();
            let layer = folder
                .filter(|folder| {
                    codex_project_folders(dir, &home)
                        .iter()
                        .any(|p| p == folder)
                })
                .and_then(Path::parent);
            let Some(layer) = layer else { return };
            for file in relative {
                let absolute = dir.join(&file.path).display().to_string();
                f.note(format!(
                    "{at} reads {}, a relative path, and Codex runs the hook in the directory it starts in, and reads this file when it starts in `{}` or any directory below it: started below, the hook reads whatever is at that path there; write it as `{}` (init writes the store's absolute path)",
                    file.what,
                    layer.display(),
                    file.value_for(&clean(&wiring::sh_quote(&absolute)))
                ));
            }
        }
        Harness::GeminiCli => {}
    }
}

/// What a hook command's program is, as the shell looks for it.
enum Binary {
    /// A file with an execute bit (by its path, or in a `PATH` folder).
    Runnable,
    /// A file there that no execute bit lets run (the first one, where no runnable one
    /// is in `PATH`): the shell says "permission denied".
    NotExecutable(PathBuf),
    /// No file by that path or name.
    NotFound,
}

/// Finds a hook command's program `bin`: by its path when it has a `/`, else in `PATH`.
fn find_binary(bin: &str) -> Binary {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.permissions().mode() & 0o111 != 0)
    };
    let candidates: Vec<PathBuf> = if bin.contains('/') {
        vec![PathBuf::from(bin)]
    } else {
        std::env::var_os("PATH")
            .map(|path| std::env::split_paths(&path).map(|d| d.join(bin)).collect())
            .unwrap_or_default()
    };
    let mut found = Binary::NotFound;
    for path in candidates {
        match mode(&path) {
            Some(true) => return Binary::Runnable,
            Some(false) if matches!(found, Binary::NotFound) => {
                found = Binary::NotExecutable(path);
            }
            _ => {}
        }
    }
    found
}

/// A plain `--tools` value (no `@`, not JSON) one of whose names is a file in the
/// directory the harness starts the hook in, and is neither one of the harness's
/// built-ins that change things nor of MCP form: the value was meant as that file
/// (`--tools tools`), and the hook reads it as a tool's name, which guards that tool
/// alone, so every call of a tool no record names passes unjudged. The hook itself
/// reads the word as a tool's name wherever it runs (a harness's tools change from one
/// version to the next, and Gemini CLI's discovered tools take any name), so only
/// doctor, which knows the project's directory, can see it.
fn check_tools_file(harness: Harness, dir: &Path, value: &str, at: &str, f: &mut Findings) {
    if !plain(value) {
        return;
    }
    let known = |name: &str| {
        let mut builtins =
            crate::harness::file_tools(harness).chain(crate::harness::shell_tools(harness));
        builtins.any(|t| t == name) || name.to_ascii_lowercase().starts_with("mcp_")
    };
    let file = value
        .split(',')
        .map(str::trim)
        .find(|name| !name.is_empty() && !known(name) && dir.join(name).is_file());
    if let Some(name) = file {
        let name = clean(name);
        f.problem(format!(
            "{at} guards `--tools {}`, and `{name}` is a file in `{}`: --tools reads a file only as `@FILE`, so the hook guards a tool named `{name}` and lets every call of a tool no record names run unjudged: write --tools @{name} for the file (or rename the file, if `{name}` is a tool's name)",
            clean(value),
            clean(&dir.display().to_string())
        ));
    }
}

/// The names the hook's `--tools` value gives, read as the hook reads it (an `@FILE`
/// relative to the directory doctor reads the store from). `None` when they cannot be
/// read: the hook then denies every call, which running it below reports.
fn tools_listed(dir: &Path, value: &str, limits: Limits) -> Option<Vec<String>> {
    let value = match value.strip_prefix('@') {
        Some(file) if !file.starts_with('/') && file != "-" => {
            format!("@{}", dir.join(file).display())
        }
        _ => value.to_string(),
    };
    let (origin, text, _) = flag_text("--tools", &value, limits).ok()?;
    let tools = input::tools_from_flag(&origin, &text).ok()?;
    Some(tools.into_iter().map(|t| t.name).collect())
}

/// The store loads, and the matcher lets the harness show the gate every tool a record
/// names (in this harness's naming). `reads_transcript`: the hook reads the session's
/// transcript, where it sees a Codex call that asks for a terminal (and denies it).
/// Returns the store as loaded, when it loads.
fn check_store(
    harness: Harness,
    path: &Path,
    h: &Handler,
    at: &str,
    f: &mut Findings,
    limits: Limits,
    reads_transcript: bool,
) -> Option<input::Input> {
    let w = Wiring::of(harness);
    let shown = path.display().to_string();
    // Read as the hook reads it (within the input limit), so that a store the hook
    // refuses is reported here too.
    let input = match read_source(&shown, limits)
        .and_then(|bytes| input::load(&shown, &bytes, limits))
    {
        Ok(input) => input,
        Err(e) => {
            f.problem(format!(
                "the store {at} reads does not load ({}), so the hook denies every call: fix it, or move it away and run init to write a starter store",
                one_line(&e.to_string())
            ));
            return None;
        }
    };
    if crate::validate::binds_nothing(&input.store) {
        f.problem(format!(
            "the store `{}` has {}",
            clean(&shown),
            crate::validate::BINDS_NOTHING
        ));
    }
    // A number written as a string in an ordering orders as text (`"10000"` is not over
    // `"5000"`): a note, as `validate` warns of it.
    let quoted: Vec<(&str, String)> = (input.store.records().iter())
        .flat_map(|r| {
            crate::validate::quoted_number_warnings(r)
                .into_iter()
                .map(|m| (r.id.as_str(), m))
        })
        .collect();
    for (id, message) in quoted.iter().take(5) {
        f.note(format!(
            "the store `{}`: record `{}`: {message}",
            clean(&shown),
            clean(id)
        ));
    }
    if quoted.len() > 5 {
        f.note(format!(
            "the store `{}`: {} more comparisons order a field against a number written as a string: `omission-gate validate {}` lists them",
            clean(&shown),
            quoted.len() - 5,
            clean(&shown)
        ));
    }
    // A schema in the store's `tools` that Gemini CLI cannot compile rules out no call:
    // a note, as `validate` warns of it. (Under the other two no schema bounds a call.)
    for tool in (input.tools.iter().flatten()).filter(|_| harness.holds_calls_to_schemas()) {
        if let Some(message) = crate::validate::unchecked_schema_warning(tool) {
            f.note(format!(
                "the store `{}`: tool `{}`: {message}",
                clean(&shown),
                clean(&tool.name)
            ));
        }
    }
    if reads_transcript {
        // The hook counts a record kept when its text is in the transcript's live
        // context: a rule with a label for a text may be "in view" where it was never
        // said, and never bind (what `validate` warns of).
        // At most a few lines for a large store: `validate` lists them all.
        const SHOWN: usize = 5;
        let texts: Vec<(&str, String)> = (input.store.records().iter())
            .filter_map(|r| crate::validate::text_warning(r).map(|m| (r.id.as_str(), m)))
            .collect();
        for (id, message) in texts.iter().take(SHOWN) {
            f.note(format!(
                "the store `{}`: record `{}`: {message}",
                clean(&shown),
                clean(id)
            ));
        }
        if texts.len() > SHOWN {
            f.note(format!(
                "the store `{}`: {} more records have no `text` or one too short to say the rule: `omission-gate validate {}` lists them",
                clean(&shown),
                texts.len() - SHOWN,
                clean(&shown)
            ));
        }
    }
    if let Some(id) = wiring::typed_input_unjudged(harness, &input.store)
        && !reads_transcript
    {
        f.note(format!(
            "record `{id}` binds `{}`, but Codex runs no hook for `write_stdin`, so what the model types into a shell or program that `exec_command` started with a terminal is not judged, and without `--kept-from transcript` the gate cannot see the terminal: add `--kept-from transcript`, or keep such a rule in Codex's sandbox and approval settings too",
            w.shell_tool
        ));
    }
    for u in wiring::unnamed_kin(harness, &input.store) {
        f.note(format!(
            "record `{}` names `{}` and not `{}`, which does the same in {}: the hook denies each call of `{}` until the store names it wherever it names `{}` (beside it in a policy's scope, or in an effect record with the same `match`)",
            clean(&u.id),
            clean(&u.named),
            u.kin,
            harness.title(),
            u.kin,
            clean(&u.named)
        ));
    }
    if let Some(u) = wiring::unnamed_file_tools(harness, &input.store) {
        let list = |tools: &[&str]| {
            let quoted: Vec<String> = tools.iter().map(|t| format!("`{t}`")).collect();
            quoted.join(", ")
        };
        let mut unnamed = Vec::new();
        if !u.files.is_empty() {
            let verb = if u.files.len() == 1 {
                "changes"
            } else {
                "change"
            };
            unnamed.push(format!("{}, which {verb} files too", list(&u.files)));
        }
        if !u.shells.is_empty() {
            unnamed.push(format!(
                "{}, whose commands can change any file",
                list(&u.shells)
            ));
        }
        f.note(format!(
            "record `{}` names `{}`, and the store never names {} in {}: a rule binds only the tools it names, so their calls on the same file pass; if the rule is about the file, name them too (each carries the path in its own input key: see docs/hooks.md)",
            clean(&u.id),
            clean(&u.named),
            unnamed.join(", nor "),
            harness.title()
        ));
    }
    // A name the harness never sends binds none of its calls, whatever the matcher: the
    // fix is the tool's own name, never the matcher.
    for (id, tool) in wiring::never_sent(harness, &input.store) {
        f.problem(format!(
            "record `{}` names `{}`, a name {} never gives a tool (its tool names hold only ASCII letters, digits, `_` and `-`; it names MCP tools `{}`), so the record binds none of its calls (adding `{}` to the matcher does not help): name the tool as {} calls it, beside `{}` if another program judges calls by that name",
            clean(&id),
            clean(&tool),
            w_name(harness),
            Wiring::of(harness).mcp_tool("<server>", "<tool>"),
            clean(&tool),
            w_name(harness),
            clean(&tool)
        ));
    }
    for miss in wiring::unguarded(harness, h.matcher.as_deref(), &input.store) {
        f.problem(match miss {
            wiring::Unguarded::Misnamed { id, tool, instead } => format!(
                "record `{id}` scopes to `{tool}`, {}: write `{instead}`, or name both if another harness shares this store",
                never_gives(harness, &tool)
            ),
            wiring::Unguarded::NotHookName {
                id,
                tool,
                covers: None,
                instead,
            } => format!(
                "record `{}` names `{}`, a name no call {} sends its hooks carries: it sends that tool's calls as `{instead}`, and the hook denies each of them until the store names `{instead}` (adding `{}` to the matcher does not help): write `{instead}` wherever the store names `{}`",
                clean(&id),
                clean(&tool),
                w_name(harness),
                clean(&tool),
                clean(&tool)
            ),
            wiring::Unguarded::NotHookName {
                id,
                tool,
                covers: Some(covers),
                instead,
            } => format!(
                "record `{}` scopes to `{}`, which {covers}: {} sends that tool's calls to its hooks as `{instead}`, and the hook denies each of them until the store names `{instead}` too (adding `{}` to the matcher does not help): name `{instead}` wherever the store names `{}` (beside it in a policy's scope, or in an effect record with the same `match`)",
                clean(&id),
                clean(&tool),
                w_name(harness),
                clean(&tool),
                clean(&tool)
            ),
            wiring::Unguarded::Pattern { id, tool, globs } => format!(
                "record `{}` scopes to `{}`, and no tool is called that: the store's names are tool names or globs whose only wildcard is `*` (`|`, `?`, `[...]` and `.*` are read as written), so the hook denies each call it reads as covering until the store names the tool (adding `{}` to the matcher does not help): write one name or `*` glob per entry, such as {}",
                clean(&id),
                clean(&tool),
                clean(&tool),
                pattern_fix(&globs)
            ),
            wiring::Unguarded::OtherHarnessGlob {
                id,
                tool,
                covered,
                instead,
            } => format!(
                "record `{}` scopes to `{}`, {}, and the hook denies each of its calls until the store names `{instead}` too (adding `{}` to the matcher does not help): name `{instead}` wherever the store names `{}` (beside it in a policy's scope, or in an effect record with the same `match`)",
                clean(&id),
                clean(&tool),
                crate::harness::glob_covers(harness, &tool, covered, &instead),
                clean(&tool),
                clean(&tool)
            ),
            wiring::Unguarded::Sibling { id, tool, sibling } => format!(
                "the matcher `{}` of {at} selects `{tool}`, which record `{id}` names, but not `{sibling}`, which does the same in {}, so the gate never sees those calls: add `{sibling}` to the matcher (run `omission-gate init {harness}` again)",
                h.matcher.as_deref().unwrap_or(""),
                harness.title()
            ),
            wiring::Unguarded::Missed { id, tool } if tool == "*" => format!(
                "the matcher `{}` of {at} leaves tools out, and record `{id}` scopes to `*`, every tool, so the gate never sees the calls it leaves out: make the matcher `*`",
                h.matcher.as_deref().unwrap_or("")
            ),
            wiring::Unguarded::Missed { id, tool } => format!(
                "the matcher `{}` of {at} misses `{tool}`, which record `{id}` names, so the gate never sees those calls: add it to the matcher",
                h.matcher.as_deref().unwrap_or("")
            ),
        });
    }
    Some(input)
}

/// "a name HARNESS never gives a tool", for `tool`, another harness's name of a tool,
/// with how this harness names an MCP tool when `tool` is one.
fn never_gives(harness: Harness, tool: &str) -> String {
    let how = if crate::harness::sent_as(harness, tool).is_some() {
        format!(" ({})", harness.mcp_name_change())
    } else if tool.starts_with("mcp") {
        let w = Wiring::of(harness);
        format!(
            " (it names MCP tools `{}`)",
            w.mcp_tool("<server>", "<tool>")
        )
    } else {
        String::new()
    };
    format!("a name {} never gives a tool{how}", w_name(harness))
}

/// The hook's guarded tools (`flag_tools`: its `--tools` if given, as read, else the
/// store's `tools`) checked for names the harness never sends ([`wiring::mislisted`]).
fn check_guarded(
    harness: Harness,
    input: &input::Input,
    path: &Path,
    at: &str,
    flag_tools: Option<Option<Vec<String>>>,
    f: &mut Findings,
) {
    let shown = path.display().to_string();
    // The guarded tools, as the hook takes them: `--tools`, else the store's `tools`.
    let store_tools = || {
        let names = input.tools.as_ref()?.iter().map(|t| t.name.clone());
        Some(names.collect::<Vec<_>>())
    };
    let (list, listing, fix) = match flag_tools {
        Some(Some(tools)) => (Some(tools), format!("{at} guards"), "its `--tools`"),
        // Running the hook says why it cannot read them.
        Some(None) => return,
        None => (
            store_tools(),
            format!("the store `{}` lists", clean(&shown)),
            "the store's `tools`",
        ),
    };
    let Some(list) = list else {
        return;
    };
    for m in wiring::mislisted(harness, &list) {
        let (tool, instead) = (clean(&m.tool), clean(&m.instead));
        f.problem(match m.how {
            wiring::Listed::Spelling => format!(
                "{listing} `{tool}`, {}, and the hook denies each call of `{instead}` until the list names it: add `{instead}` to {fix} (keep `{tool}` if another harness shares the list)",
                never_gives(harness, &m.tool)
            ),
            wiring::Listed::Glob(covered) => format!(
                "{listing} `{tool}`, {}, and the hook denies each call of `{instead}` until the list names it: add `{instead}` to {fix} (keep `{tool}` if another harness shares the list)",
                crate::harness::glob_covers(harness, &m.tool, covered, &m.instead)
            ),
            wiring::Listed::NotHookName => format!(
                "{listing} `{tool}`, a name no call {} sends its hooks carries: it sends that tool's calls as `{instead}`, and the hook denies each of them until the list names it: write `{instead}` in {fix}",
                w_name(harness)
            ),
            wiring::Listed::Pattern => format!(
                "{listing} `{tool}`, {PATTERN_NAME}, and the hook denies each call of `{instead}` until the list names it: add `{instead}` to {fix}"
            ),
            wiring::Listed::Kin(covered) => format!(
                "{listing} `{tool}` and not `{instead}`, which does what `{covered}` does in {}, and the hook denies each call of `{instead}` until the list names it: add `{instead}` to {fix}",
                w_name(harness)
            ),
        });
    }
}

/// What a name written as a pattern of another syntax is to the gate.
pub(super) const PATTERN_NAME: &str =
    "a name no tool has (`|`, `?`, `[...]` and `.*` are read as written, not as a pattern)";

/// Runs the hook with a call it must deny and one it must let run, killing it after
/// `timeout_ms` as the harness would. True when both did.
fn run_checks(
    harness: Harness,
    dir: &Path,
    project: &str,
    h: &Handler,
    at: &str,
    f: &mut Findings,
    timeout_ms: u64,
) -> bool {
    let Some(tool) = wiring::probe_tools(harness)
        .into_iter()
        .find(|t| wiring::matches(harness, h.matcher.as_deref(), t) == Some(true))
    else {
        f.unsure = Some(format!(
            "the matcher `{}` of {at} selects none of {}, so doctor has no call to run it with",
            h.matcher.as_deref().unwrap_or(""),
            wiring::probe_tools(harness).join(", ")
        ));
        return false;
    };
    // The session's transcript, for a hook that reads the kept set from it.
    let transcript = std::env::temp_dir().join(format!(
        "omission-gate-doctor-{}-{}.jsonl",
        std::process::id(),
        harness.name()
    ));
    if let Err(e) = std::fs::write(&transcript, wiring::doctor_transcript(harness)) {
        f.unsure = Some(format!(
            "cannot write a test transcript `{}`: {}",
            transcript.display(),
            io_reason(&e)
        ));
        return false;
    }
    let path = transcript.display().to_string();
    let deny = wiring::payload(
        harness,
        project,
        tool,
        Value::String("omission-gate doctor: a call the hook must deny".into()),
        &path,
    );
    let pass = wiring::payload(
        harness,
        project,
        tool,
        serde_json::json!({"command": "true", "description": "omission-gate doctor"}),
        &path,
    );
    let ok = run_both(
        harness,
        dir,
        project,
        h,
        f,
        timeout_ms,
        [at, tool, &deny, &pass],
    );
    let _ = std::fs::remove_file(&transcript);
    ok
}

/// Runs the two calls, one the hook must deny and one it must let run, each killed
/// after `timeout` ms; true when both went so. `at` names the hook.
fn run_both(
    harness: Harness,
    dir: &Path,
    project: &str,
    h: &Handler,
    f: &mut Findings,
    timeout: u64,
    [at, tool, deny, pass]: [&str; 4],
) -> bool {
    let mut ok = true;
    match run_hook_command(harness, dir, project, h, deny, timeout) {
        Err(e) => {
            f.unsure = Some(e);
            return false;
        }
        Ok(run) => match wiring::outcome(harness, run.exit, &run.stdout, &run.stderr) {
            Outcome::Denied(reason) if reason.starts_with(DENY_PREFIX) => {}
            Outcome::Denied(reason) => {
                ok = false;
                f.problem(format!(
                    "{at} did not answer as omission-gate (exit {}: {}): the harness denies, but not with the gate's reason",
                    exit_text(run.exit),
                    first_line(&reason)
                ));
            }
            Outcome::Runs => {
                ok = false;
                f.problem(format!(
                    "{at} let a malformed call run (exit {}{}): {} would run the tool{}",
                    exit_text(run.exit),
                    with_output(&run.stderr),
                    w_name(harness),
                    through_prefix(harness)
                ));
            }
        },
    }
    match run_hook_command(harness, dir, project, h, pass, timeout) {
        Err(e) => {
            f.unsure = Some(e);
            return false;
        }
        Ok(run) => match wiring::outcome(harness, run.exit, &run.stdout, &run.stderr) {
            Outcome::Denied(reason) => {
                ok = false;
                f.problem(format!(
                    "{at} denied `{tool}` with `true`, a call nothing in the store binds: {}",
                    reason_line(&reason)
                ));
            }
            Outcome::Runs if run.exit != Some(0) => {
                ok = false;
                f.problem(format!(
                    "{at} failed (exit {}{}), and {} runs the tool when it does{}",
                    exit_text(run.exit),
                    with_output(&run.stderr),
                    w_name(harness),
                    through_prefix(harness)
                ));
            }
            Outcome::Runs => {}
        },
    }
    ok
}

/// What Claude Code makes of a hook `timeout` (seconds) whose milliseconds its runtime's
/// timer does not take (below 1, or past [`wiring::TIMER_MAX_MS`]): it cancels the hook
/// after 1 ms (see [`claude_code::timeout_ms`]), in words; `None` for any other.
fn claude_code_odd_timeout(timeout: Option<&Value>) -> Option<String> {
    let ms = timeout.and_then(Value::as_f64)? * 1000.0;
    if ms > wiring::TIMER_MAX_MS {
        Some(format!(
            "more than {} seconds, the longest its timer waits ({} ms), so the timer waits 1 ms instead and Claude Code cancels the hook after 1 ms",
            wiring::TIMER_MAX_MS / 1000.0,
            wiring::TIMER_MAX_MS
        ))
    } else if ms < 1.0 {
        Some(
            "less than 0.001 seconds (1 ms), so Claude Code's timer waits 1 ms and it cancels the hook after 1 ms"
                .to_string(),
        )
    } else {
        None
    }
}

/// What Gemini CLI makes of a hook `timeout` that is not a number, or a number Node's
/// timers do not take (below 1, or past [`wiring::TIMER_MAX_MS`]), when it kills the
/// hook before the gate can answer (`ms`, as [`gemini_cli::timeout_ms`] reads it, under
/// 1000), in words: `None` for any other (a number from 1 to 999 is a seconds value, said
/// apart). Gemini CLI 0.61.0 hands the value to `setTimeout` as written
/// (`HookRunner.executeCommandHook`), which waits 1 ms for a number below 1.
fn gemini_odd_timeout(timeout: Option<&Value>, ms: u64) -> Option<String> {
    let timeout = timeout.filter(|t| !t.is_null())?;
    let n = gemini_cli::js_number(timeout);
    // A string is read as the number it spells.
    let read = match timeout {
        Value::Number(_) => String::new(),
        Value::String(_) if !n.is_nan() => format!(
            "a string, which Gemini CLI reads as the number {n} (its settings schema makes a number of it), "
        ),
        _ if gemini_cli::timeout_in_seconds(ms) => {
            return Some(format!(
                "not a number: Gemini CLI warns of it at start-up (`Invalid configuration in ...`) but keeps the hook, and its timer, which waits 1 ms for a value it cannot read as a number from 1 to {}, kills the hook after {ms} ms",
                wiring::TIMER_MAX_MS
            ));
        }
        _ => return None,
    };
    if n > wiring::TIMER_MAX_MS {
        return Some(format!(
            "{read}more than Node's timers wait ({} ms), so Gemini CLI's timer waits 1 ms instead (with a `TimeoutOverflowWarning`) and kills the hook after 1 ms",
            wiring::TIMER_MAX_MS
        ));
    }
    if n < 1.0 {
        return Some(format!(
            "{read}less than 1, and Gemini CLI reads a hook's `timeout` in milliseconds (Claude Code and Codex read seconds) and hands it to Node's `setTimeout`, which waits 1 ms for anything less than 1, so it kills the hook after 1 ms"
        ));
    }
    (timeout.is_string() && gemini_cli::timeout_in_seconds(ms)).then(|| {
        format!(
            "a string, which Gemini CLI reads as the number {n} (its settings schema makes a number of it) in milliseconds, not seconds, so it kills the hook after {ms} ms"
        )
    })
}

/// The handler's timeout as the harness reads it, in whole milliseconds (a fraction cut
/// off, 0 for a value below 0): Claude Code's seconds may have a fraction (its schema
/// takes any positive number; Codex refuses a file whose timeout is not a whole number,
/// which doctor reports), and Gemini CLI's as its timer reads it (see
/// [`gemini_cli::timeout_ms`]).
fn harness_timeout_ms(harness: Harness, h: &Handler) -> u64 {
    let given = h.object.get("timeout");
    let ms = match harness {
        Harness::GeminiCli => gemini_cli::timeout_ms(given),
        Harness::ClaudeCode => claude_code::timeout_ms(given),
        Harness::Codex => given.and_then(Value::as_f64).unwrap_or(60.0) * 1000.0,
    };
    // `as` saturates: NaN is not JSON, and a value past u64 is u64::MAX.
    ms.max(0.0) as u64
}

/// The `--timeout-ms` a hook command gives the gate (its default when it gives none);
/// `None` when it cannot be read (as the binary reads it: plain digits).
fn own_timeout_ms(words: &[String]) -> Option<u64> {
    match flag_value(words, "--timeout-ms").ok()? {
        None => Some(10_000),
        Some(v) => parse_count::<u64>(v).ok(),
    }
}

/// The value a hook command's words give `flag` (`--flag V` or `--flag=V`; the last one
/// when given twice), `None` when not given; `Err` when the flag ends the command with
/// no value.
fn flag_value<'w>(words: &'w [String], flag: &str) -> Result<Option<&'w str>, ()> {
    let mut given = None;
    for (i, w) in words.iter().enumerate() {
        if w == flag {
            given = Some(words.get(i + 1).ok_or(())?.as_str());
        } else if let Some(v) = w.strip_prefix(flag).and_then(|v| v.strip_prefix('=')) {
            given = Some(v);
        }
    }
    Ok(given)
}

fn exit_text(exit: Option<i32>) -> String {
    exit.map_or_else(|| "none: killed".to_string(), |c| c.to_string())
}

fn with_output(stderr: &str) -> String {
    let line = first_line(stderr);
    if line.is_empty() {
        String::new()
    } else {
        format!(", `{line}`")
    }
}

fn first_line(text: &str) -> String {
    one_line(text.trim().lines().next().unwrap_or("")).into_owned()
}

/// The line of a deny reason that says why: its first `reason` line, else its first.
fn reason_line(reason: &str) -> String {
    reason
        .lines()
        .find_map(|l| l.strip_prefix("reason"))
        .map(|l| l.trim_start().trim_start_matches(':').trim().to_string())
        .map_or_else(|| first_line(reason), |l| one_line(&l).into_owned())
}

struct Run {
    exit: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `CLAUDE_CODE_SHELL_PREFIX` as Claude Code reads it from the environment doctor runs
/// in (set, and not empty), through which it runs every hook command.
fn claude_shell_prefix() -> Option<String> {
    std::env::var(claude_code::SHELL_PREFIX_VAR)
        .ok()
        .filter(|p| !p.is_empty())
}

/// For a problem found running a Claude Code hook through `CLAUDE_CODE_SHELL_PREFIX`:
/// that it was, and what the prefix must do; for a Gemini CLI hook run with `BASH_ENV`
/// set in this environment (which Gemini CLI gives its hooks), that file's part; empty
/// otherwise.
fn through_prefix(harness: Harness) -> String {
    let bash_env = std::env::var("BASH_ENV").ok().filter(|v| !v.is_empty());
    match (harness, claude_shell_prefix(), bash_env) {
        (Harness::ClaudeCode, Some(prefix), _) => format!(
            " (run through `{}` `{}`, as Claude Code runs every hook command while it is set: the prefix must run the command it is given and exit as that command exits, or be unset)",
            claude_code::SHELL_PREFIX_VAR,
            one_line(&prefix)
        ),
        (Harness::GeminiCli, _, Some(file)) => format!(
            " (run with this environment, which Gemini CLI gives its hooks, where `BASH_ENV` is `{}`: bash runs that file before the command, so it must let the command run, or be unset)",
            one_line(&file)
        ),
        _ => String::new(),
    }
}

/// The environment Gemini CLI started in the project gives a hook's process before its
/// own variables (see [`gemini_cli::hook_environment`]), from doctor's own: run doctor
/// in the environment you start `gemini` in.
fn gemini_hook_environment(
    project: &str,
) -> Result<Vec<(OsString, OsString)>, gemini_cli::BadRedactionList> {
    let layers = gemini_layers(Path::new(project));
    let layers: Vec<(&str, &Value)> = layers.iter().map(|(p, v)| (p.as_str(), v)).collect();
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    // The `.env` file Gemini CLI loads into its environment when it starts.
    let settings = gemini_cli::merged(&layers);
    let home = gemini_cli::user_home(|key: &str| std::env::var_os(key));
    // Read as Node reads it (`readFileSync(file, "utf-8")`): a byte that is not UTF-8 is
    // U+FFFD, and a file that cannot be read sets nothing.
    if let Some(file) = gemini_cli::env_file(Path::new(project), home.as_deref(), &settings)
        && let Ok(bytes) = std::fs::read(&file)
    {
        let text = String::from_utf8_lossy(&bytes);
        let loaded = gemini_cli::env_file_vars(&file, &text, &settings, &vars);
        vars.extend(loaded.into_iter().map(|(k, v)| (k.into(), v.into())));
    }
    gemini_cli::hook_environment(vars, &layers)
}

/// The `GEMINI_PLANS_DIR` Gemini CLI gives a hook in the project (see
/// [`gemini_cli::plans_dir`]), for doctor's session. With neither `GEMINI_CLI_HOME` nor
/// `HOME` set, Gemini CLI keeps its folder in the temporary directory. The error: a
/// `general.plan.directory` outside the project with plan mode off (where it resolves),
/// which fails every hook.
fn gemini_plans_dir(project: &str) -> Result<PathBuf, PathBuf> {
    let layers = gemini_layers(Path::new(project));
    let layers: Vec<(&str, &Value)> = layers.iter().map(|(p, v)| (p.as_str(), v)).collect();
    let home =
        gemini_cli::user_home(|key: &str| std::env::var_os(key)).unwrap_or_else(std::env::temp_dir);
    let registry = std::fs::read(home.join(".gemini/projects.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
    gemini_cli::plans_dir(
        Path::new(project),
        &home,
        &gemini_cli::merged(&layers),
        registry.as_ref(),
        wiring::DOCTOR_SESSION,
    )
}

/// An extension's `gemini-extension.json` whose `plan.directory` Gemini CLI 0.61.0 would
/// refuse as each hook starts, with where that directory resolves. With no
/// `general.plan.directory` in the settings, Gemini CLI takes the first active
/// extension's (a string, not absolute, without `..`) in its place, and it is held to
/// the project as the setting is (see [`gemini_cli::plans_dir`]; seen: `plans` a link to
/// a folder outside the project, plan mode off, every `BeforeTool` hook failed and the
/// tool ran). Which extension is first depends on the order the folder lists them in,
/// so each one loaded is looked at.
fn gemini_extension_plans_dir(project: &str) -> Option<(PathBuf, PathBuf)> {
    let layers = gemini_layers(Path::new(project));
    let layers: Vec<(&str, &Value)> = layers.iter().map(|(p, v)| (p.as_str(), v)).collect();
    let merged = gemini_cli::merged(&layers);
    let set = merged
        .pointer("/general/plan/directory")
        .and_then(Value::as_str)
        .is_some_and(|d| !d.is_empty());
    if set {
        return None;
    }
    let enabled = merged
        .pointer("/general/plan/enabled")
        .cloned()
        .unwrap_or(Value::Null);
    let home =
        gemini_cli::user_home(|key: &str| std::env::var_os(key)).unwrap_or_else(std::env::temp_dir);
    for (folder, _) in gemini_extensions(Path::new(project)) {
        let config = folder.join(gemini_cli::EXTENSION_CONFIG);
        let Some(dir) = json(&config)
            .and_then(|c| c.pointer("/plan/directory").cloned())
            .and_then(|d| d.as_str().map(str::to_string))
            .filter(|d| !d.is_empty() && !d.starts_with('/') && !d.contains(".."))
        else {
            continue;
        };
        // What `plans_dir` reads: the directory, and whether plan mode is on.
        let settings = serde_json::json!({"general": {"plan": {
            "directory": dir,
            "enabled": enabled.clone(),
        }}});
        if let Err(real) = gemini_cli::plans_dir(
            Path::new(project),
            &home,
            &settings,
            None,
            wiring::DOCTOR_SESSION,
        ) {
            return Some((config, real));
        }
    }
    None
}

/// Runs a hook command as the harness does: its shell, the project directory as the
/// working directory, its variables (Gemini CLI: the command text expanded, the
/// environment it gives a hook, the hook's own `env` on top, and a socket, as Node
/// gives, for stdin, which bash started with no `SHLVL` takes for a remote shell's and
/// reads `~/.bashrc` for, not `BASH_ENV`).
fn run_hook_command(
    harness: Harness,
    dir: &Path,
    project: &str,
    h: &Handler,
    payload: &str,
    timeout_ms: u64,
) -> Result<Run, String> {
    let command = h.command.as_str();
    let w = Wiring::of(harness);
    let (shell, flags) = match w.shell {
        [shell, flags @ ..] => (*shell, flags),
        [] => return Err("no shell".into()),
    };
    let mut c = std::process::Command::new(shell);
    c.args(flags).current_dir(dir);
    match harness {
        Harness::ClaudeCode => {
            let command = match claude_shell_prefix() {
                Some(prefix) => claude_code::with_shell_prefix(&prefix, command),
                None => command.to_string(),
            };
            c.arg(command).env("CLAUDE_PROJECT_DIR", project);
        }
        Harness::Codex => {
            c.arg(command);
        }
        Harness::GeminiCli => {
            let env = gemini_hook_environment(project).map_err(|e| {
                format!(
                    "`{}.{}` in `{}` is not a list of variable names",
                    gemini_cli::REDACTION,
                    e.key,
                    e.file
                )
            })?;
            c.arg(gemini_cli::expand_command(command, project))
                .env_clear()
                .envs(env)
                .env("GEMINI_PROJECT_DIR", project)
                .env("GEMINI_PLANS_DIR", gemini_plans_dir(project).map_err(|real| {
                    format!("Gemini CLI starts no hook: `general.plan.directory` resolves to `{}`, outside the project", real.display())
                })?)
                .env("GEMINI_CWD", project)
                .env("GEMINI_SESSION_ID", wiring::DOCTOR_SESSION)
                .env("CLAUDE_PROJECT_DIR", project);
            for (var, value) in h
                .object
                .get("env")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let value = gemini_cli::js_env_string(value).ok_or_else(|| {
                    format!(
                        "doctor cannot tell what Gemini CLI gives the hook for `env.{var}` in `{}` (not a string, number, true, false or null): make it a string",
                        h.file
                    )
                })?;
                c.env(var, value);
            }
        }
    }
    let mut socket = None;
    if harness == Harness::GeminiCli {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(|e| {
            format!(
                "cannot make a socket for the hook's stdin: {}",
                io_reason(&e)
            )
        })?;
        c.stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)));
        socket = Some(ours);
    }
    if socket.is_none() {
        c.stdin(Stdio::piped());
    }
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c
        .spawn()
        .map_err(|e| format!("cannot run `{shell}`: {}", io_reason(&e)))?;
    // The Command holds the child's end of the socket: let it go, so that only the child
    // has it.
    drop(c);
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(payload.as_bytes());
    }
    if let Some(mut socket) = socket {
        let _ = socket.write_all(payload.as_bytes());
    }
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + Duration::from_millis(timeout_ms);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("cannot wait for the hook: {}", io_reason(&e))),
        }
    };
    Ok(Run {
        exit: status.and_then(|s| s.code()),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}
