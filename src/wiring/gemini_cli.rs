//! Gemini CLI's folder trust and command expansion.
//!
//! Gemini CLI reads workspace settings only from the directory it starts in, and in a
//! folder it does not trust it registers no hooks at all (user-level ones included) and
//! a headless run exits 55. Trust comes from `~/.gemini/trustedFolders.json`: the rule
//! with the longest path that contains the folder wins (`TRUST_PARENT` stands for its
//! path's parent). Before running a hook it replaces `$GEMINI_PROJECT_DIR` (and
//! `$GEMINI_CWD`, `$CLAUDE_PROJECT_DIR`) in the command text with the shell-quoted
//! project directory. Some of its settings make it send the model something other than
//! what its session file records (see [`context_managed`], [`model_hook`]). Its `hooksConfig` turns
//! hooks off without a word: `enabled: false` all of them, `disabled` the ones it names
//! (see [`hooks_off`]). An installed extension brings hooks of its own, which run after
//! every settings hook (see [`EXTENSIONS_DIR`]). A hook runs with Gemini CLI's own
//! environment, which holds its `.env` file's variables, less what it redacts (see
//! [`hook_environment`], [`env_file`]). A custom command can run shell commands that no
//! hook sees (see [`command_shell`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::TIMER_MAX_MS;

mod env;

pub use env::{
    BadRedactionList, REDACTION, env_file, env_file_vars, hook_environment, js_env_string, merged,
    plans_dir, resolve_env_vars,
};

/// The `experimental` settings that turn on Gemini CLI's context management (0.61.0: any
/// one of them set to a value JavaScript counts as true): it then trims, masks and
/// summarises the history it sends the model, and its session file does not record what
/// was sent.
pub const CONTEXT_MANAGED: [&str; 4] = [
    "contextManagement",
    "generalistProfile",
    "powerUserProfile",
    "stressTestProfile",
];

/// The first of [`CONTEXT_MANAGED`] that a settings file (parsed, its comments taken
/// out) turns on.
pub fn context_managed(settings: &Value) -> Option<&'static str> {
    let experimental = settings.get("experimental")?;
    CONTEXT_MANAGED
        .into_iter()
        .find(|key| experimental.get(key).is_some_and(truthy))
}

/// The hook event whose hooks may rewrite the request Gemini CLI sends the model.
pub const MODEL_HOOK: &str = "BeforeModel";

/// True when a settings file (parsed, its comments taken out) gives [`MODEL_HOOK`] a hook:
/// `hooks.BeforeModel` lists a definition whose `hooks` holds one. Gemini CLI 0.61.0 runs
/// each before every request to the model and sends the request such a hook returns
/// (its `llm_request`: the text of any message replaced, messages added), while the
/// session file keeps what it recorded before; a hook of any shape counts, and so does
/// one `hooksConfig.disabled` names (the gate does not redo which of them run). Gemini
/// CLI keeps a settings file that fails its schema (with a warning) and merges the event
/// into its default `[]` by `concat`, which wraps a value that is not a list in one: a
/// single definition written without the list (an object) still runs (`HookRegistry`
/// drops a definition that is not an object, or whose `hooks` is not a list).
pub fn model_hook(settings: &Value) -> bool {
    match settings.get("hooks").and_then(|h| h.get(MODEL_HOOK)) {
        Some(Value::Array(definitions)) => definitions.iter().any(holds_a_hook),
        Some(definition @ Value::Object(_)) => holds_a_hook(definition),
        _ => false,
    }
}

/// True when an extension's `hooks/hooks.json` (parsed) gives [`MODEL_HOOK`] a hook.
/// Gemini CLI 0.61.0 (`ExtensionManager.loadExtensionHooks`) takes the file's `hooks`
/// when it is an object and hands it to `HookRegistry` unmerged, which skips an event
/// whose value is not a list.
pub fn extension_model_hook(file: &Value) -> bool {
    match file.get("hooks").and_then(|h| h.get(MODEL_HOOK)) {
        Some(Value::Array(definitions)) => definitions.iter().any(holds_a_hook),
        _ => false,
    }
}

/// The variables that say where Gemini CLI finds its settings and extensions (see
/// [`user_home`], [`system_files`]). A hook's own `env` object is laid over the
/// environment Gemini CLI 0.61.0 gives the hook's process (`executeCommandHook`:
/// `{...sanitizeEnvironment(process.env), GEMINI_PROJECT_DIR, ..., ...hookConfig.env}`),
/// while Gemini CLI itself reads its settings by its own environment: set there, one of
/// these points the gate's runtime settings check away from the files Gemini CLI reads
/// (seen: a `BeforeModel` hook in the system settings Gemini CLI read ran, and the gate,
/// whose `env` named another system settings file, passed the call).
pub const LOCATION_VARS: [&str; 4] = [
    "GEMINI_CLI_HOME",
    "HOME",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
];

/// The hooks' `env` objects in a settings file or an extension's `hooks/hooks.json`
/// (parsed): every handler under `hooks.<event>`, an event's single definition written
/// without its list included (see [`model_hook`]).
fn hook_envs(file: &Value) -> impl Iterator<Item = &serde_json::Map<String, Value>> {
    file.get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|events| events.values())
        .flat_map(|definitions| match definitions {
            Value::Array(list) => list.iter().collect::<Vec<_>>(),
            one @ Value::Object(_) => vec![one],
            _ => Vec::new(),
        })
        .filter_map(|definition| definition.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter_map(|handler| handler.get("env").and_then(Value::as_object))
}

/// The first of [`LOCATION_VARS`] that a hook in `file` (parsed) sets in its `env` to a
/// value the environment `own` may have been given by it: the same string, one Gemini
/// CLI may expand (it holds a `$`), or one that is not a string (which Node writes as
/// its own string). That hook may be the one running the gate, whose environment then
/// does not say where Gemini CLI's settings are. A string `own` does not hold was not
/// given to this process.
pub fn hook_env_location(
    file: &Value,
    own: impl Fn(&str) -> Option<OsString>,
) -> Option<&'static str> {
    hook_envs(file).find_map(|env| {
        LOCATION_VARS.into_iter().find(|var| match env.get(*var) {
            None => false,
            Some(Value::String(s)) => s.contains('$') || own(var).is_some_and(|o| o == **s),
            Some(_) => true,
        })
    })
}

/// The first of [`LOCATION_VARS`] that a hook's own `env` (the handler's object) sets.
pub fn env_location(handler: &serde_json::Map<String, Value>) -> Option<&'static str> {
    let env = handler.get("env").and_then(Value::as_object)?;
    LOCATION_VARS.into_iter().find(|var| env.contains_key(*var))
}

/// A hook definition whose `hooks` is a list that is not empty.
fn holds_a_hook(definition: &Value) -> bool {
    definition
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hooks| !hooks.is_empty())
}

/// The folders that may hold the extensions Gemini CLI loads for a session whose file is
/// `transcript` (when given), given its environment (`env`): `.gemini/extensions` under
/// [`user_home`], and beside the `tmp` folder the session file is kept in (Gemini CLI
/// 0.61.0 puts both under the same `.gemini`). Empty when neither is known.
pub fn extension_dirs(
    transcript: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = user_home(env)
        .map(|home| home.join(EXTENSIONS_DIR))
        .into_iter()
        .collect();
    dirs.extend(
        transcript
            .and_then(gemini_dir_of)
            .map(|dir| dir.join("extensions")),
    );
    dirs.dedup();
    dirs
}

/// What JavaScript counts as true: anything but `false`, `0`, `""` and `null`.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_none_or(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// Why Gemini CLI registers a hook of ours and still never runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HooksOff {
    /// This file sets `hooksConfig.enabled` to false, and no file read after it sets it
    /// back: no hook runs.
    All(String),
    /// This file lists the hook's name in `hooksConfig.disabled`.
    Disabled {
        /// The file.
        file: String,
        /// The hook's name as listed: its `name`, or its command when it has none.
        name: String,
    },
}

/// The name Gemini CLI gives a command hook, which `hooksConfig.disabled` lists: its
/// `name`, else its command.
pub fn hook_name(handler: &serde_json::Map<String, Value>) -> Option<&str> {
    handler
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .or_else(|| handler.get("command").and_then(Value::as_str))
}

/// Whether Gemini CLI runs a hook named `name`, given its settings files (their names
/// and contents) in the order it merges them, lowest precedence first (see
/// [`settings_by_precedence`]): `hooksConfig.enabled` is the last file's that sets it,
/// and `hooksConfig.disabled` the union of all.
pub fn hooks_off(layers: &[(&str, &Value)], name: &str) -> Option<HooksOff> {
    let config = |v: &Value| v.get("hooksConfig").cloned();
    let enabled = layers.iter().rev().find_map(|(file, v)| {
        config(v)?
            .get("enabled")
            .filter(|e| !e.is_null())
            .map(|e| (*file, truthy(e)))
    });
    if let Some((file, false)) = enabled {
        return Some(HooksOff::All(file.to_string()));
    }
    layers.iter().find_map(|(file, v)| {
        let listed = config(v)?
            .get("disabled")?
            .as_array()?
            .iter()
            .any(|d| d.as_str() == Some(name));
        listed.then(|| HooksOff::Disabled {
            file: file.to_string(),
            name: name.to_string(),
        })
    })
}

/// Where Gemini CLI (0.61.0, `ExtensionManager.loadExtensions`) finds the extensions it
/// loads, under the user's folder (`GEMINI_CLI_HOME`, else `HOME`): each directory there
/// is one, read from the folder its `.gemini-extension-install.json` names when that says
/// `"type": "link"`. It needs a `gemini-extension.json` with a `name` and a `version`, and
/// brings hooks in `hooks/hooks.json` (`{"hooks": {"BeforeTool": [...]}}`, as in the
/// settings). No workspace folder holds extensions. The settings can keep one from
/// loading (see [`extension_not_loaded`]). One loaded is active unless
/// `extension-enablement.json` there turns it off for the start directory (see
/// [`extension_enabled`]); but given `gemini -e` (`--extensions`), exactly the extensions
/// it names are active, whatever that file says (`ExtensionEnablementManager.isEnabled`).
/// Its hooks go into the same `BeforeTool` plan as the settings' hooks, after all of them
/// (`HookRegistry.getSourcePriority`): they run beside the gate or, when a group is
/// `"sequential"`, after it, shown the call as the gate let it through, and a
/// `tool_input` one returns is the call that runs.
pub const EXTENSIONS_DIR: &str = ".gemini/extensions";

/// The file beside the extensions that turns each on or off by directory.
pub const EXTENSION_ENABLEMENT: &str = "extension-enablement.json";

/// The file in an extension's folder that says where it was installed from.
pub const INSTALL_METADATA: &str = ".gemini-extension-install.json";

/// The file in an extension's folder that names it.
pub const EXTENSION_CONFIG: &str = "gemini-extension.json";

/// The file in an extension's folder that holds its hooks.
pub const EXTENSION_HOOKS: &str = "hooks/hooks.json";

/// The folder of custom commands (`NAME.toml`, any depth) in the user's `.gemini`, in the
/// project's `.gemini` (not when the project is the home folder, nor in a folder Gemini
/// CLI does not trust) and in each active extension's folder. Gemini CLI 0.61.0 runs a
/// command's shell injections (`!{...}`) when it is used (`/NAME`, `gemini -p /NAME`
/// included) through its shell directly (`ShellProcessor`), after a check of its policy
/// alone, with no `BeforeTool` hook (see [`command_shell`]).
pub const COMMANDS_DIR: &str = "commands";

/// What a custom command's `prompt` has Gemini CLI run through its shell when it is used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandShell {
    /// The first command it injects (`!{cmd}`).
    Inline(String),
    /// The first file it injects (`@{path}`): the prompt is also read for shell
    /// injections (it holds `!{` or `{{args}}`), and Gemini CLI looks for them in the
    /// file's text too, so whoever writes that file chooses what runs.
    File(String),
}

/// What Gemini CLI 0.61.0 runs through its shell when the custom command whose `prompt`
/// this is gets used: `FileCommandLoader` reads the prompt for shell injections when it
/// holds `!{` or `{{args}}`, after it has put the text of each file `@{path}` names in
/// place; `ShellProcessor` then runs each `!{cmd}` (braces balanced, `cmd` not empty)
/// with no `BeforeTool` hook, checked only against the policy for `run_shell_command`
/// (seen: `gemini -p /status --yolo` with `!{touch gate-marker}` in the prompt, or in
/// a file it injects with `@{notes.md}` beside `{{args}}`, created the marker, and no
/// hook ran). `None` when it runs nothing: not read for injections, or no command in it
/// (Gemini CLI refuses the whole command when an injection's braces do not balance).
pub fn command_shell(prompt: &str) -> Option<CommandShell> {
    if !prompt.contains("!{") && !prompt.contains("{{args}}") {
        return None;
    }
    if let Some(path) = injections(prompt, "@{").and_then(|found| found.into_iter().next()) {
        return Some(CommandShell::File(path));
    }
    injections(prompt, "!{")?
        .into_iter()
        .find(|c| !c.is_empty())
        .map(CommandShell::Inline)
}

/// The trimmed contents of each `trigger...}` in `text`, braces balanced inside, as
/// Gemini CLI's `extractInjections` finds them; `None` when one does not close (Gemini
/// CLI then refuses the command).
fn injections(text: &str, trigger: &str) -> Option<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(trigger) {
        let body = rest.get(start + trigger.len()..)?;
        let mut depth = 1usize;
        let end = body.char_indices().find_map(|(i, c)| {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        })?;
        found.push(body.get(..end)?.trim().to_string());
        rest = body.get(end + 1..)?;
    }
    Some(found)
}

/// Whether `extension-enablement.json` (parsed) leaves the extension `name` on for a
/// session started in `dir`, as Gemini CLI 0.61.0 reads it
/// (`ExtensionEnablementManager.isEnabled`): on, unless the last of its `overrides`
/// rules that matches `dir` starts with `!`. A rule is a directory, `*` at its end
/// standing for it and everything below; a file of the wrong shape counts as no rules.
pub fn extension_enabled(enablement: &Value, name: &str, dir: &str) -> bool {
    let rules_of = |entry: &Value| -> Option<Vec<String>> {
        entry
            .get("overrides")?
            .as_array()?
            .iter()
            .map(|r| r.as_str().map(str::to_string))
            .collect()
    };
    // Gemini CLI reads the whole file or none of it.
    let Some(all) = enablement.as_object() else {
        return true;
    };
    let Some(parsed) = all
        .iter()
        .map(|(n, e)| rules_of(e).map(|r| (n, r)))
        .collect::<Option<Vec<_>>>()
    else {
        return true;
    };
    let path = with_slashes(dir);
    let mut enabled = true;
    for (_, rules) in parsed.iter().filter(|(n, _)| *n == name) {
        for rule in rules {
            let (off, base) = match rule.strip_prefix('!') {
                Some(base) => (true, base),
                None => (false, rule.as_str()),
            };
            if glob_regex(base).is_some_and(|r| r.is_match(&path)) {
                enabled = !off;
            }
        }
    }
    enabled
}

/// Why Gemini CLI 0.61.0 (`ExtensionManager._buildExtension`) loads no part of an
/// installed extension, whatever its command line, given its settings files (`layers`,
/// names and contents, in the order it merges them: see [`settings_by_precedence`]), the
/// extension's `.gemini-extension-install.json` (`install`, parsed) and its `source` as
/// [`real_source`] resolves it. The last file that sets `security.allowedExtensions`
/// wins: when it is a list that is not empty, only an extension whose source one of its
/// patterns (JavaScript regular expressions) finds is loaded; else, with
/// `security.blockGitExtensions` on, one installed from git or a GitHub release is not.
/// `None` when it loads, and wherever the reading is not sure (an install record
/// without a source, which Gemini CLI stops at with an error; a pattern that is not a
/// string, or that the regex crate may read otherwise than JavaScript does; a source
/// that is not ASCII, where the two read `\w` and `\d` otherwise): a hook it may bring is
/// still reported.
pub fn extension_not_loaded(
    layers: &[(&str, &Value)],
    install: Option<&Value>,
    real_source: Option<&str>,
) -> Option<String> {
    // The merged value: the last file's that has the key, null included.
    let last = |pointer: &str| {
        layers
            .iter()
            .rev()
            .find_map(|(file, v)| v.pointer(pointer).map(|value| (*file, value)))
    };
    let allowed = last("/security/allowedExtensions");
    let listed = allowed.is_some_and(|(_, v)| match v {
        Value::Array(a) => !a.is_empty(),
        Value::String(s) => !s.is_empty(),
        _ => false,
    });
    if let (true, Some((file, Value::Array(patterns)))) = (listed, allowed) {
        let source = real_source.filter(|s| s.is_ascii())?;
        install?.get("source")?.as_str()?;
        let mut found = false;
        for pattern in patterns {
            found |= js_regex(pattern.as_str()?)?.is_match(source);
        }
        return (!found).then(|| {
            format!("`{file}` sets `security.allowedExtensions`, and no pattern in it finds its source `{source}`")
        });
    }
    if listed {
        return None;
    }
    let kind = install?.get("type")?.as_str()?;
    match last("/security/blockGitExtensions") {
        Some((file, v)) if truthy(v) && matches!(kind, "git" | "github-release") => Some(format!(
            "`{file}` sets `security.blockGitExtensions`, and it was installed from {}",
            if kind == "git" {
                "git"
            } else {
                "a GitHub release"
            }
        )),
        _ => None,
    }
}

/// A pattern of `security.allowedExtensions` as a regex that finds what JavaScript's
/// `new RegExp(pattern).test` finds in ASCII text; `None` when it may not: the regex crate
/// does not compile it, or it holds an escape the two read otherwise (JavaScript reads
/// `\A` as `A`, `\p` as `p`, the regex crate as an anchor and a class) or a group whose
/// syntax only one of them knows (`(?`, but for a named or non-capturing group).
fn js_regex(pattern: &str) -> Option<regex::Regex> {
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let next = chars.next()?;
            if next.is_ascii_alphanumeric() && !"dDwWsSbBnrtfvxu".contains(next) {
                return None;
            }
        }
    }
    let groups_agree = pattern.match_indices("(?").all(|(i, _)| {
        let after = &pattern[i + 2..];
        after.starts_with(':') || (after.starts_with('<') && !after[1..].starts_with(['=', '!']))
    });
    if !groups_agree {
        return None;
    }
    regex::Regex::new(pattern).ok()
}

/// An extension's install `source` as Gemini CLI 0.61.0 matches it against
/// `security.allowedExtensions` (`getRealPath`): the path with every link resolved when
/// it is there, else resolved against the start directory `cwd` as Node's `path.resolve`
/// does (so `https://host/org/repo` becomes `<cwd>/https:/host/org/repo`). `None` when it
/// is not UTF-8.
pub fn real_source(source: &str, cwd: &Path) -> Option<String> {
    let joined = cwd.join(source);
    if let Ok(real) = std::fs::canonicalize(&joined) {
        return real.to_str().map(str::to_string);
    }
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for part in joined.components() {
        match part {
            std::path::Component::Normal(p) => parts.push(p),
            std::path::Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    let mut out = String::new();
    for p in parts {
        out.push('/');
        out.push_str(p.to_str()?);
    }
    Some(if out.is_empty() { "/".to_string() } else { out })
}

/// A directory as the enablement rules are matched against it: `/` at both ends.
fn with_slashes(dir: &str) -> String {
    let dir = dir.replace('\\', "/");
    let mut out = String::new();
    if !dir.starts_with('/') {
        out.push('/');
    }
    out.push_str(&dir);
    if !out.ends_with('/') {
        out.push('/');
    }
    out
}

/// Gemini CLI's `globToRegex`: the rule literally, each `*` (with a `/` before it) being
/// `(.*)?` (`(/.*)?`), the whole path.
fn glob_regex(glob: &str) -> Option<regex::Regex> {
    let pieces: Vec<&str> = glob.split('*').collect();
    let mut pattern = String::from("^");
    for (i, piece) in pieces.iter().enumerate() {
        if i + 1 == pieces.len() {
            pattern.push_str(&regex::escape(piece));
        } else if let Some(before) = piece.strip_suffix('/') {
            pattern.push_str(&regex::escape(before));
            pattern.push_str("(/.*)?");
        } else {
            pattern.push_str(&regex::escape(piece));
            pattern.push_str("(.*)?");
        }
    }
    pattern.push('$');
    regex::Regex::new(&pattern).ok()
}

/// [`settings_files`] without a transcript, in the order Gemini CLI merges them, lowest
/// precedence first: the system defaults, the user's, the workspace's, then the system
/// settings, which override everything.
pub fn settings_by_precedence(cwd: &Path, env: impl Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let mut files = settings_files(Some(cwd), None, env);
    if !files.is_empty() {
        let system = files.remove(0);
        files.push(system);
    }
    files
}

/// The settings files Gemini CLI reads for a session started in `cwd`, given its
/// environment (`env`): the system settings, the system defaults, the user's and the
/// workspace's. A system file Gemini CLI skips as insecure (see [`system_files`]) is
/// left out. Gemini CLI gives a hook its `GEMINI_CLI_HOME` (see [`hook_environment`]),
/// but the hook's own `env` may change it, so the user's settings are also looked for
/// where the session's file (`transcript`, when given) is kept:
/// `<.gemini>/tmp/<project>/chats/<file>`.
pub fn settings_files(
    cwd: Option<&Path>,
    transcript: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = system_files(&env)
        .into_iter()
        .filter(|(_, skipped)| skipped.is_none())
        .map(|(file, _)| file)
        .collect();
    if let Some(home) = user_home(&env) {
        files.push(home.join(".gemini/settings.json"));
    }
    if let Some(dir) = transcript.and_then(gemini_dir_of) {
        files.push(dir.join("settings.json"));
    }
    files.extend(cwd.map(|cwd| cwd.join(".gemini/settings.json")));
    let mut seen = std::collections::BTreeSet::new();
    files.retain(|f| seen.insert(f.clone()));
    files
}

/// The folder that holds the user's `.gemini`: `GEMINI_CLI_HOME`, else `HOME`.
pub fn user_home(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    env("GEMINI_CLI_HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| env("HOME"))
        .map(PathBuf::from)
}

/// The system settings file and the system defaults file, as `env` places them, each
/// with why Gemini CLI skips it (see [`insecure`]), when it does.
pub fn system_files(env: impl Fn(&str) -> Option<OsString>) -> [(PathBuf, Option<String>); 2] {
    let system = env("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(if cfg!(target_os = "macos") {
                "/Library/Application Support/GeminiCli/settings.json"
            } else {
                "/etc/gemini-cli/settings.json"
            })
        });
    let defaults = env("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            system
                .parent()
                .unwrap_or(Path::new(""))
                .join("system-defaults.json")
        });
    [system, defaults].map(|file| {
        let skipped = insecure(&file);
        (file, skipped)
    })
}

/// Why Gemini CLI (0.61.0) skips a system settings or system defaults file, with a
/// "Security Warning" on its stderr and nothing else: the file, each directory above it
/// and, when it is reached through a symbolic link, the file it resolves to and each
/// directory above that, must be owned by root and writable by no one else (a link
/// itself owned by root too). `None` when it reads the file, or there is none.
pub fn insecure(file: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let check = |path: &Path, dir: bool| -> Option<String> {
        let shown = path.display();
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(_) => return Some(format!("`{shown}` cannot be read")),
        };
        if dir && !meta.is_dir() {
            return Some(format!("`{shown}` is not a directory"));
        }
        if !dir && !meta.is_file() {
            return Some(format!("`{shown}` is not a file"));
        }
        if std::fs::symlink_metadata(path).is_ok_and(|l| l.file_type().is_symlink() && l.uid() != 0)
        {
            return Some(format!("the link `{shown}` is not owned by root"));
        }
        if meta.uid() != 0 {
            return Some(format!("`{shown}` is not owned by root"));
        }
        (meta.mode() & 0o022 != 0).then(|| format!("`{shown}` is writable by group or others"))
    };
    if !file.exists() {
        return None;
    }
    let real = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let mut paths: Vec<(&Path, bool)> = Vec::new();
    for f in [file, real.as_path()] {
        paths.extend(
            f.parent()
                .into_iter()
                .flat_map(Path::ancestors)
                .map(|a| (a, true)),
        );
        paths.push((f, false));
    }
    paths.into_iter().find_map(|(p, dir)| check(p, dir))
}

/// The directory a session started in, as Gemini CLI records it beside the session's
/// file: `<.gemini>/tmp/<project>/.project_root` holds it. `None` for a file kept
/// elsewhere, or a folder without it.
pub fn project_root_of(transcript: &Path) -> Option<PathBuf> {
    let chats = transcript.parent()?;
    if chats.file_name()? != "chats" {
        return None;
    }
    let text = std::fs::read_to_string(chats.parent()?.join(".project_root")).ok()?;
    let root = text.trim();
    root.starts_with('/').then(|| PathBuf::from(root))
}

/// The folder a session file is kept under, `<folder>/tmp/<project>/chats/<file>`: the
/// user's `.gemini`, which holds the user's settings.
fn gemini_dir_of(transcript: &Path) -> Option<&Path> {
    let chats = transcript.parent()?;
    let tmp = chats.parent()?.parent()?;
    (chats.file_name()? == "chats" && tmp.file_name()? == "tmp").then_some(tmp.parent()?)
}

/// Whether the trusted-folders rules trust `dir` (an absolute, resolved path) for a
/// Gemini CLI started in `cwd`, and the rule that decides: `None` when none applies (the
/// folder is then untrusted). As Gemini CLI 0.61.0 does (`isPathTrusted`), each rule's
/// folder is resolved first (every link, `.`, `..` and doubled `/`, and a relative one
/// against `cwd`: [`real_source`]), so a rule that names the folder another way applies
/// to it; the longest rule as written wins.
pub fn folder_trusted<'r>(rules: &'r Value, dir: &str, cwd: &Path) -> Option<(bool, &'r str)> {
    let Value::Object(rules) = rules else {
        return None;
    };
    let mut best: Option<(usize, &str, &str)> = None;
    for (path, level) in rules {
        let Some(level) = level.as_str() else {
            continue;
        };
        let effective = if level == "TRUST_PARENT" {
            parent(path)
        } else {
            path.as_str()
        };
        let Some(effective) = real_source(effective, cwd) else {
            continue;
        };
        if within(&effective, dir) && best.is_none_or(|(len, ..)| path.len() > len) {
            best = Some((path.len(), path.as_str(), level));
        }
    }
    let (_, rule, level) = best?;
    match level {
        "TRUST_FOLDER" | "TRUST_PARENT" => Some((true, rule)),
        "DO_NOT_TRUST" => Some((false, rule)),
        _ => None,
    }
}

fn parent(path: &str) -> &str {
    let p = path.trim_end_matches('/');
    match p.rfind('/') {
        Some(0) => "/",
        Some(i) => p.get(..i).unwrap_or(p),
        None => p,
    }
}

/// Whether `dir` is `root` or inside it.
fn within(root: &str, dir: &str) -> bool {
    let root = root.trim_end_matches('/');
    dir == root || root.is_empty() || dir.strip_prefix(root).is_some_and(|r| r.starts_with('/'))
}

/// The hook `timeout` Gemini CLI 0.61.0 uses when a handler gives none, in milliseconds
/// (its `DEFAULT_HOOK_TIMEOUT`: it reads `timeout` in milliseconds, where Claude Code and
/// Codex read seconds).
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;

/// How long Gemini CLI 0.61.0 lets a hook run, in milliseconds, given its `timeout` as
/// written: `timeout ?? 60000` goes to Node's `setTimeout`, which makes a number of it
/// as JavaScript's `Number` does and waits 1 ms for one it does not take (see
/// [`TIMER_MAX_MS`]). Its settings schema turns a string that reads as a number into
/// that number, and keeps a file whose `timeout` is of another kind with only a warning
/// (`Invalid configuration in FILE`), so the timer sees the value as written. Seen with
/// 0.61.0: `"30000"`, `" 5000 "`, `"5e3"` and `[5000]` let a hook that takes 1 s
/// answer; `"30"` killed it after 30 ms, and `"abc"`, `""`, `true`, `[]` and
/// `3000000000` after 1 ms, and the tool ran; `null` is the default, 60 s.
pub fn timeout_ms(timeout: Option<&Value>) -> f64 {
    let n = match timeout {
        None | Some(Value::Null) => return DEFAULT_TIMEOUT_MS as f64,
        Some(v) => js_number(v),
    };
    if (1.0..=TIMER_MAX_MS).contains(&n) {
        n
    } else {
        1.0
    }
}

/// A JSON value as JavaScript's `Number` reads it: NaN for one it cannot.
pub fn js_number(value: &Value) -> f64 {
    match value {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => js_string_number(s),
        // An array is read as its items joined by `,`: two or more never read as a
        // number, one as its own text (`null` as nothing, `true` as `"true"`).
        Value::Array(items) => match items.as_slice() {
            [] | [Value::Null] => 0.0,
            [one @ (Value::Number(_) | Value::String(_) | Value::Array(_))] => js_number(one),
            _ => f64::NAN,
        },
        Value::Object(_) => f64::NAN,
    }
}

/// A string as JavaScript's `Number` reads it: white space around it dropped, nothing
/// is 0, a decimal number (`5e3`, `.5`), `Infinity` with a sign or none, or a whole
/// number in hex, octal or binary (`0x1F`, `0o17`, `0b101`, no sign); else NaN.
fn js_string_number(s: &str) -> f64 {
    let space = |c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}';
    let t = s.trim_matches(space);
    if t.is_empty() {
        return 0.0;
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    let radix = match t.get(..2) {
        Some("0x" | "0X") => Some(16),
        Some("0o" | "0O") => Some(8),
        Some("0b" | "0B") => Some(2),
        _ => None,
    };
    if let (Some(radix), Some(digits)) = (radix, t.get(2..)) {
        if digits.is_empty() {
            return f64::NAN;
        }
        return digits
            .chars()
            .try_fold(0.0, |n: f64, c| {
                c.to_digit(radix)
                    .map(|d| n * f64::from(radix) + f64::from(d))
            })
            .unwrap_or(f64::NAN);
    }
    // Rust reads `inf` and `nan` too, which JavaScript does not.
    if !t
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return f64::NAN;
    }
    t.parse().unwrap_or(f64::NAN)
}

/// Whether a handler's `timeout` is so small that it can only be meant in seconds (as
/// Claude Code and Codex read it, whose snippets say `"timeout": 30`): under one second,
/// Gemini CLI kills the hook before the gate has read its store, and runs the tool.
pub fn timeout_in_seconds(timeout: u64) -> bool {
    timeout < 1_000
}

/// The command as Gemini CLI runs it: the project-directory variables replaced in the
/// text by the quoted directory (`shell-quote`'s quoting: bare when safe, else single
/// quotes).
pub fn expand_command(command: &str, project: &str) -> String {
    let quoted = shell_quote(project);
    let mut out = command.to_string();
    // Gemini CLI's patterns have no word boundary: `$GEMINI_PROJECT_DIRX` is replaced
    // too, and so it is here.
    for var in ["$GEMINI_PROJECT_DIR", "$GEMINI_CWD", "$CLAUDE_PROJECT_DIR"] {
        out = out.replace(var, &quoted);
    }
    out
}

/// `shell-quote`'s `quote([arg])`, which Gemini CLI uses for bash.
fn shell_quote(arg: &str) -> String {
    if arg.is_empty() {
        return "''".to_string();
    }
    let plain = arg
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+:,@%=".contains(&b));
    if plain {
        arg.to_string()
    } else if !arg.contains('\'') {
        format!("'{arg}'")
    } else {
        let mut out = String::from('"');
        for c in arg.chars() {
            if matches!(c, '"' | '\\' | '$' | '`' | '!') {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extension_source_is_resolved_as_node_resolves_a_path() {
        // Seen with 0.61.0: the source `https://github.com/org/rewriter` of an extension
        // installed from git is found by `github\.com/org/` and `^<start dir>/https:/github`
        // in `security.allowedExtensions`, not by `^https://github`.
        let cwd = Path::new("/nonexistent-og/start");
        assert_eq!(
            real_source("https://github.com/org/x/", cwd).as_deref(),
            Some("/nonexistent-og/start/https:/github.com/org/x")
        );
        assert_eq!(
            real_source("/nonexistent-og/a/../b/./c", cwd).as_deref(),
            Some("/nonexistent-og/b/c")
        );
        assert_eq!(real_source("../../..", cwd).as_deref(), Some("/"));
    }

    #[test]
    fn only_patterns_both_engines_read_alike_are_used() {
        assert!(js_regex("github\\.com/org/").is_some());
        assert!(js_regex("^/home/(?:a|b)/(?<n>x)\\d+$").is_some());
        for unsure in ["\\A/x", "\\p{L}", "(?i)x", "(?=x)", "(?<!x)y", "[", "\\"] {
            assert!(js_regex(unsure).is_none(), "{unsure}");
        }
    }

    #[test]
    fn hooks_are_off_by_the_last_enabled_or_any_disabled_list() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let (none, off, on, named, other) = (
            v("{}"),
            v(r#"{"hooksConfig": {"enabled": false}}"#),
            v(r#"{"hooksConfig": {"enabled": true}}"#),
            v(r#"{"hooksConfig": {"disabled": ["x", "omission-gate"]}}"#),
            v(r#"{"hooksConfig": {"disabled": ["omission-gate-2"], "enabled": 1}}"#),
        );
        let off_in = |f: &str| Some(HooksOff::All(f.into()));
        assert_eq!(
            hooks_off(&[("u", &none), ("w", &other)], "omission-gate"),
            None
        );
        assert_eq!(
            hooks_off(&[("u", &off), ("w", &none)], "omission-gate"),
            off_in("u")
        );
        // A file read later sets it back; a later `false` wins over an earlier `true`.
        assert_eq!(hooks_off(&[("u", &off), ("w", &on)], "omission-gate"), None);
        assert_eq!(
            hooks_off(&[("u", &on), ("s", &off)], "omission-gate"),
            off_in("s")
        );
        // What JavaScript counts as false.
        let zero = v(r#"{"hooksConfig": {"enabled": 0}}"#);
        assert_eq!(hooks_off(&[("u", &zero)], "omission-gate"), off_in("u"));
        // The disabled lists add up, whatever `enabled` says; names match exactly.
        assert_eq!(
            hooks_off(&[("u", &on), ("w", &named)], "omission-gate"),
            Some(HooksOff::Disabled {
                file: "w".into(),
                name: "omission-gate".into()
            })
        );
        assert_eq!(hooks_off(&[("u", &named)], "omission-gat"), None);
        let Value::Object(h) = v(r#"{"name": "", "command": "og hook"}"#) else {
            unreachable!()
        };
        assert_eq!(hook_name(&h), Some("og hook"));
    }
    use serde_json::json;

    #[test]
    fn context_management_is_on_for_any_value_javascript_counts_as_true() {
        for on in [json!(true), json!(1), json!("yes"), json!({}), json!([])] {
            for key in CONTEXT_MANAGED {
                let settings = json!({"experimental": {key: on.clone()}});
                assert_eq!(context_managed(&settings), Some(key), "{settings}");
            }
        }
        for off in [json!(false), json!(0), json!(""), json!(null)] {
            let settings = json!({"experimental": {"contextManagement": off}});
            assert_eq!(context_managed(&settings), None, "{settings}");
        }
        // Elsewhere than under `experimental`, the keys turn nothing on.
        let settings =
            json!({"contextManagement": {"enabled": true}, "ui": {"generalistProfile": true}});
        assert_eq!(context_managed(&settings), None);
    }

    #[test]
    fn a_hook_env_that_may_have_moved_the_settings_is_found() {
        let own = |key: &str| (key == "HOME").then(|| OsString::from("/home/u"));
        let file = |hooks: Value| serde_json::json!({ "hooks": hooks });
        let handler = |env: Value| serde_json::json!({"hooks": [{"command": "g", "env": env}]});
        let listed = |env: Value| file(serde_json::json!({ "BeforeTool": [handler(env)] }));
        assert_eq!(
            hook_env_location(&listed(serde_json::json!({"HOME": "/home/u"})), own),
            Some("HOME")
        );
        // A single definition written without its list runs too.
        let single = file(
            serde_json::json!({ "BeforeTool": handler(serde_json::json!({"HOME": "/home/u"})) }),
        );
        assert_eq!(hook_env_location(&single, own), Some("HOME"));
        for env in [
            serde_json::json!({"GEMINI_CLI_HOME": "${HOME}"}),
            serde_json::json!({"GEMINI_CLI_SYSTEM_DEFAULTS_PATH": null}),
        ] {
            assert!(
                hook_env_location(&listed(env.clone()), own).is_some(),
                "{env}"
            );
        }
        for env in [
            serde_json::json!({"HOME": "/home/v"}),
            serde_json::json!({"GEMINI_CLI_HOME": "/g"}),
            serde_json::json!({"PATH": "/home/u"}),
            serde_json::json!(["HOME"]),
        ] {
            assert_eq!(hook_env_location(&listed(env.clone()), own), None, "{env}");
        }
    }

    #[test]
    fn the_settings_files_follow_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(*v))
            }
        };
        let cwd = Path::new("/work/p");
        let plain = settings_files(Some(cwd), None, env(&[("HOME", "/home/u")]));
        let system = if cfg!(target_os = "macos") {
            "/Library/Application Support/GeminiCli"
        } else {
            "/etc/gemini-cli"
        };
        assert_eq!(
            plain,
            [
                PathBuf::from(system).join("settings.json"),
                PathBuf::from(system).join("system-defaults.json"),
                PathBuf::from("/home/u/.gemini/settings.json"),
                PathBuf::from("/work/p/.gemini/settings.json"),
            ]
        );
        let moved = settings_files(
            Some(cwd),
            None,
            env(&[
                ("HOME", "/home/u"),
                ("GEMINI_CLI_HOME", "/g"),
                ("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "/s/sys.json"),
            ]),
        );
        assert_eq!(
            moved,
            [
                PathBuf::from("/s/sys.json"),
                PathBuf::from("/s/system-defaults.json"),
                PathBuf::from("/g/.gemini/settings.json"),
                PathBuf::from("/work/p/.gemini/settings.json"),
            ]
        );
        let defaults = settings_files(
            Some(cwd),
            None,
            env(&[("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "/d.json")]),
        );
        assert_eq!(defaults.get(1), Some(&PathBuf::from("/d.json")));
        // Where the session's file is kept names the user's folder (a hook is not given
        // `GEMINI_CLI_HOME`), once.
        let session = Path::new("/g/.gemini/tmp/p/chats/session-1.jsonl");
        let kept = settings_files(Some(cwd), Some(session), env(&[("HOME", "/home/u")]));
        assert_eq!(
            kept.get(3),
            Some(&PathBuf::from("/g/.gemini/settings.json"))
        );
        assert_eq!(kept.len(), 5);
        let home = Path::new("/home/u/.gemini/tmp/p/chats/session-1.jsonl");
        assert_eq!(
            settings_files(Some(cwd), Some(home), env(&[("HOME", "/home/u")])),
            plain
        );
        let elsewhere = Path::new("/x/session-1.jsonl");
        assert_eq!(
            settings_files(Some(cwd), Some(elsewhere), env(&[("HOME", "/home/u")])),
            plain
        );
    }

    #[test]
    fn an_extension_is_on_unless_the_last_matching_rule_turns_it_off() {
        let rules = json!({
            "rewriter": {"overrides": ["!/home/u/*", "/home/u/ok/", "!/srv/p/"]},
            "other": {"overrides": ["!/work/*"]}
        });
        let on = |name: &str, dir: &str| extension_enabled(&rules, name, dir);
        // What `gemini extensions disable --scope workspace` writes: the folder and below.
        assert!(!on("rewriter", "/home/u"));
        assert!(!on("rewriter", "/home/u/proj/sub"));
        // A later rule without `*`: that folder alone.
        assert!(on("rewriter", "/home/u/ok"));
        assert!(!on("rewriter", "/home/u/ok/sub"));
        assert!(!on("rewriter", "/srv/p"));
        assert!(on("rewriter", "/srv/p/sub"));
        assert!(on("rewriter", "/home/user2"));
        assert!(on("unknown", "/home/u"));
        assert!(!on("other", "/work/x"));
        // A file of the wrong shape turns nothing off.
        let bad = json!({"rewriter": {"overrides": ["!/home/u/*"]}, "other": {"overrides": "x"}});
        assert!(extension_enabled(&bad, "rewriter", "/home/u"));
        assert!(extension_enabled(&json!([]), "rewriter", "/home/u"));
    }

    #[test]
    fn the_longest_rule_wins() {
        let rules = json!({"/home/u": "TRUST_FOLDER", "/home/u/secret": "DO_NOT_TRUST",
                           "/srv/p/child": "TRUST_PARENT"});
        let trusted = |dir: &str| folder_trusted(&rules, dir, Path::new(dir)).map(|(t, _)| t);
        assert_eq!(trusted("/home/u/proj"), Some(true));
        assert_eq!(trusted("/home/u/secret/x"), Some(false));
        assert_eq!(trusted("/home/user2"), None);
        assert_eq!(trusted("/srv/p/other"), Some(true));
        assert_eq!(trusted("/srv"), None);
    }

    #[test]
    fn a_rule_naming_the_folder_another_way_applies_to_it() {
        // Seen with 0.61.0: `{"<root>/proj": "TRUST_FOLDER", "<root>/./proj":
        // "DO_NOT_TRUST"}` left `gemini -p` in `<root>/proj` untrusted (exit 55), so it
        // registered no hooks there; read as written, the second rule named no folder.
        let root = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(root.path()).unwrap();
        let proj = root.join("proj");
        std::fs::create_dir(&proj).unwrap();
        std::os::unix::fs::symlink(&proj, root.join("proj-link")).unwrap();
        let dir = proj.to_str().unwrap();
        let r = root.to_str().unwrap();
        for other in [
            format!("{r}/./proj"),
            format!("{r}//proj"),
            format!("{r}/x/../proj"),
            format!("{r}/proj-link"),
            format!("{r}/proj-link/./"),
        ] {
            let rules = json!({dir: "TRUST_FOLDER", other.clone(): "DO_NOT_TRUST"});
            assert_eq!(
                folder_trusted(&rules, dir, &proj),
                Some((false, other.as_str())),
                "{other}"
            );
        }
        // A relative rule is read from the start directory.
        let rules = json!({"/": "TRUST_FOLDER", "../proj/././": "DO_NOT_TRUST"});
        assert_eq!(
            folder_trusted(&rules, dir, &proj),
            Some((false, "../proj/././"))
        );
        let rules = json!({"/": "DO_NOT_TRUST", "../proj-link": "TRUST_FOLDER"});
        assert_eq!(
            folder_trusted(&rules, dir, &proj),
            Some((true, "../proj-link"))
        );
    }

    #[test]
    fn a_hook_timeout_is_read_as_node_s_timer_reads_it() {
        // Each as seen with 0.61.0 (a hook that takes 1 s answered, or was killed).
        for (timeout, ms) in [
            (json!(30000), 30000.0),
            (json!("30000"), 30000.0),
            (json!(" 5000 "), 5000.0),
            (json!("5e3"), 5000.0),
            (json!([5000]), 5000.0),
            (json!("30"), 30.0),
            (json!("abc"), 1.0),
            (json!(""), 1.0),
            (json!(true), 1.0),
            (json!([]), 1.0),
            (json!(3_000_000_000_u64), 1.0),
            (json!(null), 60000.0),
        ] {
            assert_eq!(timeout_ms(Some(&timeout)), ms, "{timeout}");
        }
        assert_eq!(timeout_ms(None), 60000.0);
        // As JavaScript's `Number` reads them.
        for (text, n) in [
            ("0x10", 16.0),
            ("0b11", 3.0),
            ("0o17", 15.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("+7", 7.0),
            ("\u{a0}8\n", 8.0),
        ] {
            assert_eq!(js_string_number(text), n, "{text:?}");
        }
        for text in [
            "inf",
            "nan",
            "Infinityx",
            "0x",
            "-0x10",
            "1e",
            "e5",
            ".",
            "1_000",
            "1,2",
        ] {
            assert!(js_string_number(text).is_nan(), "{text:?}");
        }
        assert_eq!(js_string_number("-Infinity"), f64::NEG_INFINITY);
        for v in [json!([1, 2]), json!([true]), json!({}), json!([[]])] {
            let n = js_number(&v);
            assert!(n.is_nan() || n == 0.0, "{v}");
        }
        assert_eq!(js_number(&json!([["7"]])), 7.0);
    }

    #[test]
    fn the_project_variable_becomes_the_quoted_directory() {
        assert_eq!(
            expand_command("og --store $GEMINI_PROJECT_DIR/s.json", "/a b"),
            "og --store '/a b'/s.json"
        );
        assert_eq!(expand_command("x $GEMINI_PROJECT_DIR", "/p"), "x /p");
    }
}
