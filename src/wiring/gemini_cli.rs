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
//! [`hook_environment`], [`env_file`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use super::TIMER_MAX_MS;

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

/// Whether the trusted-folders rules trust `dir` (an absolute, resolved path): `Some`
/// when a rule decides, `None` when none applies (the folder is then untrusted).
pub fn folder_trusted(rules: &Value, dir: &str) -> Option<bool> {
    let Value::Object(rules) = rules else {
        return None;
    };
    let mut best: Option<(usize, &str)> = None;
    for (path, level) in rules {
        let Some(level) = level.as_str() else {
            continue;
        };
        let effective = if level == "TRUST_PARENT" {
            parent(path)
        } else {
            path.trim_end_matches('/')
        };
        if within(effective, dir) && best.is_none_or(|(len, _)| path.len() > len) {
            best = Some((path.len(), level));
        }
    }
    match best?.1 {
        "TRUST_FOLDER" | "TRUST_PARENT" => Some(true),
        "DO_NOT_TRUST" => Some(false),
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

/// The `security.environmentVariableRedaction` settings that decide which of Gemini CLI's
/// own variables a hook's process gets.
pub const REDACTION: &str = "security.environmentVariableRedaction";

/// A redaction list (`allowed` or `blocked`) that is not a list of names: given one,
/// Gemini CLI 0.61.0 throws a `TypeError` before it starts any hook, which runs no hook
/// and lets the tool run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRedactionList {
    /// The last settings file that sets it.
    pub file: String,
    /// `allowed` or `blocked`.
    pub key: &'static str,
}

/// The variables of Gemini CLI's own environment (`vars`) that it gives a hook's
/// process, given its settings files (names and contents) in the order it merges them
/// (see [`settings_by_precedence`]). Gemini CLI 0.61.0 (`executeCommandHook`) starts a
/// hook with `sanitizeEnvironment(process.env, ...)`, then its `GEMINI_*` variables and
/// the hook's own `env` on top: that is the whole environment unless
/// `security.environmentVariableRedaction.enabled` is set (a value JavaScript counts as
/// true) or `GITHUB_SHA` (not empty) or `SURFACE=Github` is in it; then each variable
/// [`redacted`] is left out. Seen in a real run: `BASH_ENV`, `GEMINI_API_KEY` and `LANG`
/// reached the hook.
pub fn hook_environment(
    vars: Vec<(OsString, OsString)>,
    layers: &[(&str, &Value)],
) -> Result<Vec<(OsString, OsString)>, BadRedactionList> {
    let value = |key: &str| vars.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let strict = value("GITHUB_SHA").is_some_and(|v| !v.is_empty())
        || value("SURFACE").is_some_and(|v| v == "Github");
    let merged = merged(layers);
    let setting =
        |key: &str| merged.pointer(&format!("/security/environmentVariableRedaction/{key}"));
    if !strict && !setting("enabled").is_some_and(truthy) {
        return Ok(vars);
    }
    // `(list || []).map((k) => k.toUpperCase())`
    let names = |key: &'static str| -> Result<Vec<String>, BadRedactionList> {
        match setting(key) {
            None => Ok(Vec::new()),
            Some(v) if !truthy(v) => Ok(Vec::new()),
            Some(Value::Array(list)) => list
                .iter()
                .map(|n| n.as_str().map(str::to_uppercase))
                .collect::<Option<Vec<_>>>()
                .ok_or(()),
            Some(_) => Err(()),
        }
        .map_err(|()| BadRedactionList {
            file: layers
                .iter()
                .rev()
                .find(|(_, l)| {
                    l.pointer(&format!("/security/environmentVariableRedaction/{key}"))
                        .is_some()
                })
                .map_or_else(String::new, |(file, _)| file.to_string()),
            key,
        })
    };
    let (allowed, blocked) = (names("allowed")?, names("blocked")?);
    let patterns = secret_patterns();
    Ok(vars
        .into_iter()
        .filter(|(k, v)| {
            let (k, v) = (k.to_string_lossy(), v.to_string_lossy());
            !redacted(&k, &v, &allowed, &blocked, strict, patterns)
        })
        .collect())
}

/// A value of a hook's `env` as Node writes it into the process's environment
/// (`${value}`): a string as it is, `true`, `false`, `null`, and a number as
/// JavaScript spells it; `None` for one whose spelling is not worked out here (a list,
/// an object, a number JavaScript writes with an exponent).
pub fn js_env_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("null".to_string()),
        Value::Number(n) => {
            let x = n.as_f64()?;
            if x == 0.0 {
                Some("0".to_string())
            } else if (1e-6..1e21).contains(&x.abs()) {
                // Both write the shortest digits that read back as the number.
                Some(format!("{x}"))
            } else {
                None
            }
        }
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// Gemini CLI's settings files (names and contents, in the order it merges them: see
/// [`settings_by_precedence`]) merged as it merges them (`mergeSettings`): over its
/// schema's defaults, of which only those read here are written
/// (`advanced.excludedEnvVars`), each list in [`UNION`] joined with the one before it,
/// anything else as [`js_merge`] does.
pub fn merged(layers: &[(&str, &Value)]) -> Value {
    let mut merged = serde_json::json!({"advanced": {"excludedEnvVars": ["DEBUG", "DEBUG_MODE"]}});
    for (_, layer) in layers {
        js_merge(&mut merged, layer, &mut Vec::new());
    }
    merged
}

/// The settings read here whose lists Gemini CLI 0.61.0 merges with `mergeStrategy:
/// "union"`: the one before, then each new item (a value that is not a list is one
/// item).
const UNION: [&[&str]; 1] = [&["advanced", "excludedEnvVars"]];

/// The `.env` file Gemini CLI 0.61.0 loads into its own environment when it starts in
/// the trusted folder `start` (`findEnvFile`): in `start` and each directory above it,
/// `.gemini/.env`, then `.env` (with `advanced.ignoreLocalEnv` on, only in
/// `home`); past `/`, `<home>/.gemini/.env`, then `<home>/.env` (`home`: see
/// [`user_home`]). Its variables reach every hook (see [`env_file_vars`]). `settings`:
/// the merged settings (see [`merged`]); Gemini CLI's `--ignore-env` works as
/// `ignoreLocalEnv` does, but is not seen here.
pub fn env_file(start: &Path, home: Option<&Path>, settings: &Value) -> Option<PathBuf> {
    let ignore_local = settings
        .pointer("/advanced/ignoreLocalEnv")
        .is_some_and(truthy);
    for dir in start.ancestors() {
        let gemini = dir.join(".gemini/.env");
        if gemini.exists() {
            return Some(gemini);
        }
        let plain = dir.join(".env");
        if plain.exists() && (!ignore_local || Some(dir) == home) {
            return Some(plain);
        }
    }
    let home = home?;
    [home.join(".gemini/.env"), home.join(".env")]
        .into_iter()
        .find(|f| f.exists())
}

/// The variables Gemini CLI 0.61.0 sets in its own environment from the `.env` file
/// `file` (its text `text`), given its merged settings (see [`merged`]) and the
/// variables it has (`vars`, each kept as it is: `loadEnvironment`). A project's file
/// (one whose path holds no `.gemini`) does not set the names in
/// `advanced.excludedEnvVars`, which always holds `DEBUG` and `DEBUG_MODE` (see
/// [`merged`]), unless `advanced` itself is replaced by something else; a value there
/// that is neither a list nor a string makes Gemini CLI load nothing.
pub fn env_file_vars(
    file: &Path,
    text: &str,
    settings: &Value,
    vars: &[(OsString, OsString)],
) -> Vec<(String, String)> {
    let project = !file.to_string_lossy().contains(".gemini");
    let excluded = settings
        .pointer("/advanced/excludedEnvVars")
        .filter(|v| truthy(v));
    let is_excluded = |key: &str| -> Option<bool> {
        Some(match excluded {
            // `DEFAULT_EXCLUDED_ENV_VARS`
            None => [
                "DEBUG",
                "DEBUG_MODE",
                "GEMINI_CLI_IDE_SERVER_STDIO_COMMAND",
                "GEMINI_CLI_IDE_SERVER_STDIO_ARGS",
            ]
            .contains(&key),
            Some(Value::Array(list)) => list.iter().any(|v| v.as_str() == Some(key)),
            // `String.prototype.includes`: a part of the text.
            Some(Value::String(s)) => s.contains(key),
            Some(_) => return None,
        })
    };
    let mut out = Vec::new();
    for (key, value) in dotenv_parse(text) {
        if project {
            match is_excluded(&key) {
                None => return Vec::new(),
                Some(true) => continue,
                Some(false) => {}
            }
        }
        if !vars.iter().any(|(k, _)| k.to_str() == Some(key.as_str())) {
            out.push((key, value));
        }
    }
    out
}

/// `dotenv.parse` (the version Gemini CLI 0.61.0 bundles): `KEY=value` lines (`export`
/// before, `:` for `=`, a `#` comment after), a value quoted with `'`, `"` or a
/// backquote taken whole across lines, and in `"` quotes `\n` and `\r` read as a new
/// line and a carriage return; a key given twice keeps its place and takes the last
/// value.
pub fn dotenv_parse(text: &str) -> Vec<(String, String)> {
    static LINE: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let line = LINE.get_or_init(|| {
        // dotenv's `LINE`, with JavaScript's `\s`.
        let pattern = r#"(?m)^\s*(?:export\s+)?([A-Za-z0-9_.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:#.*)?$"#;
        regex::Regex::new(&pattern.replace(r"\s", &format!("[{JS_SPACE}]"))).ok()
    });
    let Some(line) = line else {
        return Vec::new();
    };
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut out: Vec<(String, String)> = Vec::new();
    for m in line.captures_iter(&text) {
        let key = m.get(1).map_or("", |k| k.as_str()).to_string();
        let value = m.get(2).map_or("", |v| v.as_str());
        let mut value = value.trim_matches(js_space).to_string();
        let quote = value.chars().next();
        if let Some(q @ ('\'' | '"' | '`')) = quote
            && let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q))
        {
            value = inner.to_string();
        }
        if quote == Some('"') {
            value = value.replace("\\n", "\n").replace("\\r", "\r");
        }
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => out.push((key, value)),
        }
    }
    out
}

/// `mergeRecursively`, as Gemini CLI merges its settings files: a list at a path in
/// [`UNION`] joined with a new value, an object into an object key by key, anything
/// else replacing what was there. `path`: where `target` is.
fn js_merge(target: &mut Value, source: &Value, path: &mut Vec<String>) {
    let (Value::Object(t), Value::Object(s)) = (target, source) else {
        return;
    };
    for (key, value) in s {
        path.push(key.clone());
        let union = (UNION.iter()).any(|u| u.iter().copied().eq(path.iter().map(String::as_str)));
        match (t.get_mut(key), value) {
            (Some(Value::Array(old)), _) if union => {
                let new = match value {
                    Value::Array(items) => items.as_slice(),
                    item => std::slice::from_ref(item),
                };
                for item in new {
                    if !old.contains(item) {
                        old.push(item.clone());
                    }
                }
            }
            (Some(old @ Value::Object(_)), Value::Object(_)) => js_merge(old, value, path),
            (_, Value::Object(_)) => {
                let mut fresh = Value::Object(serde_json::Map::new());
                js_merge(&mut fresh, value, path);
                t.insert(key.clone(), fresh);
            }
            _ => {
                t.insert(key.clone(), value.clone());
            }
        }
        path.pop();
    }
}

/// Variables always given (`ALWAYS_ALLOWED_ENVIRONMENT_VARIABLES`), unless named in
/// `blocked` or their value looks like a secret.
const ALWAYS_ALLOWED: [&str; 32] = [
    "PATH",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "SYSTEMDRIVE",
    "HOME",
    "LANG",
    "SHELL",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "TERM",
    "COLORTERM",
    "ADDITIONAL_CONTEXT",
    "AVAILABLE_LABELS",
    "BRANCH_NAME",
    "DESCRIPTION",
    "EVENT_NAME",
    "GITHUB_ENV",
    "IS_PULL_REQUEST",
    "ISSUES_TO_TRIAGE",
    "ISSUE_BODY",
    "ISSUE_NUMBER",
    "ISSUE_TITLE",
    "PULL_REQUEST_NUMBER",
    "REPOSITORY",
    "TITLE",
    "TRIGGERING_ACTOR",
];

/// Variables never given (`NEVER_ALLOWED_ENVIRONMENT_VARIABLES`), unless named in
/// `allowed`.
const NEVER_ALLOWED: [&str; 12] = [
    "CLIENT_ID",
    "DB_URI",
    "CONNECTION_STRING",
    "AWS_DEFAULT_REGION",
    "AZURE_CLIENT_ID",
    "AZURE_TENANT_ID",
    "SLACK_WEBHOOK_URL",
    "TWILIO_ACCOUNT_SID",
    "DATABASE_URL",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_ACCOUNT",
    "FIREBASE_PROJECT_ID",
];

/// Words a variable's name holds that keep it back (`NEVER_ALLOWED_NAME_PATTERNS`, any
/// case).
const SECRET_NAMES: [&str; 10] = [
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "KEY",
    "AUTH",
    "CREDENTIAL",
    "CREDS",
    "PRIVATE",
    "CERT",
];

/// `NEVER_ALLOWED_VALUE_PATTERNS`, as the regex crate writes them (JavaScript's `/i`
/// as `(?i)`, its `\s` as [`JS_SPACE`]), compiled once.
fn secret_patterns() -> &'static [regex::Regex] {
    static PATTERNS: OnceLock<Vec<regex::Regex>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            r"-----BEGIN (RSA|OPENSSH|EC|PGP) PRIVATE KEY-----",
            r"-----BEGIN CERTIFICATE-----",
            r"(https?|ftp|smtp)://[^:\s]{1,1024}:[^@\s]{1,1024}@",
            r"(ghp|gho|ghu|ghs|ghr|github_pat)_[a-zA-Z0-9_]{36,}",
            r"AIzaSy[a-zA-Z0-9_\\\-]{33}",
            r"AKIA[A-Z0-9]{16}",
            r"eyJ[a-zA-Z0-9_-]{0,10240}\.[a-zA-Z0-9_-]{0,10240}\.[a-zA-Z0-9_-]{0,10240}",
            r"(s|r)k_(live|test)_[0-9a-zA-Z]{24}",
            r"xox[abpr]-[a-zA-Z0-9-]+",
        ]
        .iter()
        .filter_map(|p| {
            regex::RegexBuilder::new(&p.replace(r"\s", JS_SPACE))
                .case_insensitive(true)
                .size_limit(64 << 20)
                .build()
                .ok()
        })
        .collect()
    })
}

/// JavaScript's `\s` (its white space and line ends) inside a regex class; the regex
/// crate's `\s` holds U+0085 and not U+FEFF (a byte order mark).
const JS_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// Whether JavaScript's `\s` and `trim` take `c` for white space (see [`JS_SPACE`]).
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{B}' | '\u{C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// Whether Gemini CLI 0.61.0 keeps the variable `key` (its value `value`) from a hook
/// when it redacts (`shouldRedactEnvironmentVariable`), given the names `allowed` and
/// `blocked` (upper case) and whether the redaction is the strict one (`GITHUB_SHA` or
/// `SURFACE=Github` in its environment).
fn redacted(
    key: &str,
    value: &str,
    allowed: &[String],
    blocked: &[String],
    strict: bool,
    patterns: &[regex::Regex],
) -> bool {
    let key = key.to_uppercase();
    let value = value.to_uppercase();
    if key.starts_with("GEMINI_CLI_") {
        return false;
    }
    if !value.is_empty() && patterns.iter().any(|p| p.is_match(&value)) {
        return true;
    }
    if key.starts_with("GIT_CONFIG_") || allowed.contains(&key) {
        return false;
    }
    if blocked.contains(&key) {
        return true;
    }
    if ALWAYS_ALLOWED.contains(&key.as_str()) {
        return false;
    }
    if NEVER_ALLOWED.contains(&key.as_str()) {
        return true;
    }
    strict || SECRET_NAMES.iter().any(|w| key.contains(w))
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
        assert_eq!(folder_trusted(&rules, "/home/u/proj"), Some(true));
        assert_eq!(folder_trusted(&rules, "/home/u/secret/x"), Some(false));
        assert_eq!(folder_trusted(&rules, "/home/user2"), None);
        assert_eq!(folder_trusted(&rules, "/srv/p/other"), Some(true));
        assert_eq!(folder_trusted(&rules, "/srv"), None);
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

    #[test]
    fn a_hook_gets_the_environment_gemini_cli_gives_it() {
        let vars = |pairs: &[(&str, &str)]| -> Vec<(OsString, OsString)> {
            pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
        };
        let names = |env: Vec<(OsString, OsString)>| -> Vec<String> {
            env.into_iter()
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect()
        };
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc";
        let own = vars(&[
            ("PATH", "/bin"),
            ("BASH_ENV", "/x"),
            ("MY_TOKEN", "t"),
            ("GEMINI_CLI_HOME", "/h"),
            ("GIT_CONFIG_GLOBAL", "/g"),
            ("DATABASE_URL", "u"),
            ("NOTE", jwt),
            ("SHLVL", "1"),
        ]);
        // Redaction off: everything.
        assert_eq!(hook_environment(own.clone(), &[]).unwrap(), own);
        let off = json!({"security": {"environmentVariableRedaction": {"enabled": false}}});
        assert_eq!(hook_environment(own.clone(), &[("u", &off)]).unwrap(), own);
        // On: secrets by name, by value, and the never-allowed ones go.
        let on = json!({"security": {"environmentVariableRedaction": {"enabled": true}}});
        assert_eq!(
            names(hook_environment(own.clone(), &[("u", &on)]).unwrap()),
            [
                "PATH",
                "BASH_ENV",
                "GEMINI_CLI_HOME",
                "GIT_CONFIG_GLOBAL",
                "SHLVL"
            ]
        );
        // A later file turns it off; `allowed` and `blocked` in any case.
        assert_eq!(
            hook_environment(own.clone(), &[("u", &on), ("w", &off)]).unwrap(),
            own
        );
        let lists = json!({"security": {"environmentVariableRedaction": {
            "allowed": ["my_token", "database_url"], "blocked": ["path", "bash_env"]}}});
        assert_eq!(
            names(hook_environment(own.clone(), &[("u", &on), ("w", &lists)]).unwrap()),
            [
                "MY_TOKEN",
                "GEMINI_CLI_HOME",
                "GIT_CONFIG_GLOBAL",
                "DATABASE_URL",
                "SHLVL"
            ]
        );
        // Strict (`GITHUB_SHA` set, or `SURFACE=Github`): only the always-given ones.
        for strict in [("GITHUB_SHA", "abc"), ("SURFACE", "Github")] {
            let mut with = own.clone();
            with.push((strict.0.into(), strict.1.into()));
            assert_eq!(
                names(hook_environment(with, &[]).unwrap()),
                ["PATH", "GEMINI_CLI_HOME", "GIT_CONFIG_GLOBAL"]
            );
        }
        let mut empty_sha = own.clone();
        empty_sha.push(("GITHUB_SHA".into(), "".into()));
        assert_eq!(hook_environment(empty_sha.clone(), &[]).unwrap(), empty_sha);
        // A list that is not one of names is named with the last file that sets it.
        let bad = json!({"security": {"environmentVariableRedaction": {"blocked": "PATH"}}});
        assert_eq!(
            hook_environment(own.clone(), &[("u", &on), ("w", &bad)]),
            Err(BadRedactionList {
                file: "w".to_string(),
                key: "blocked"
            })
        );
        let falsy = json!({"security": {"environmentVariableRedaction": {"blocked": ""}}});
        assert!(hook_environment(own, &[("u", &on), ("w", &falsy)]).is_ok());
    }

    #[test]
    fn every_secret_pattern_compiles_and_finds_its_secret() {
        let patterns = secret_patterns();
        assert_eq!(patterns.len(), 9);
        let found = |v: &str| redacted("X", v, &[], &[], false, patterns);
        assert!(found("-----BEGIN RSA PRIVATE KEY-----"));
        assert!(found("https://me:pw@host"));
        assert!(found(&format!("ghp_{}", "a".repeat(36))));
        assert!(found(&format!("AIzaSy{}", "\\".repeat(33))));
        assert!(found("AKIAABCDEFGHIJKLMNOP"));
        assert!(found("sk_live_012345678901234567890123"));
        assert!(found("xoxb-1"));
        assert!(!found("https://host/path"));
        // JavaScript's `\s` (seen in Node).
        assert!(!found("https://a\u{FEFF}:b@h"));
        assert!(found("https://a\u{85}:b@h"));
        assert!(!found("plain"));
    }

    #[test]
    fn hook_env_values_are_written_as_node_writes_them() {
        assert_eq!(js_env_string(&json!("a")).as_deref(), Some("a"));
        assert_eq!(js_env_string(&json!(true)).as_deref(), Some("true"));
        assert_eq!(js_env_string(&json!(null)).as_deref(), Some("null"));
        assert_eq!(js_env_string(&json!(30)).as_deref(), Some("30"));
        assert_eq!(js_env_string(&json!(1.5)).as_deref(), Some("1.5"));
        assert_eq!(js_env_string(&json!(-0.0)).as_deref(), Some("0"));
        assert_eq!(js_env_string(&json!(1e21)), None);
        assert_eq!(js_env_string(&json!([1])), None);
    }

    #[test]
    fn a_dotenv_file_is_read_as_dotenv_reads_it() {
        let text = "# c\nA=1\nexport B = two words # note\nC:  x\r\nD=\"l1\\nl2\"\nE='q # not\nF'\nA=last\nG=\nbad line\nH=`t`";
        let got = dotenv_parse(text);
        let want = [
            ("A", "last"),
            ("B", "two words"),
            ("C", "x"),
            ("D", "l1\nl2"),
            ("E", "q # not\nF"),
            ("G", ""),
            ("H", "t"),
        ];
        assert_eq!(
            got,
            want.map(|(k, v)| (k.to_string(), v.to_string())).to_vec()
        );
        // White space as JavaScript has it: a byte order mark, not U+0085 (seen in Node).
        let got = dotenv_parse("\u{FEFF}A=1\nB=\u{FEFF}x\u{FEFF}\nC=\u{85}y\n");
        let want = [("A", "1"), ("B", "x"), ("C", "\u{85}y")];
        assert_eq!(
            got,
            want.map(|(k, v)| (k.to_string(), v.to_string())).to_vec()
        );
    }

    #[test]
    fn js_space_is_javascripts_white_space() {
        let class = regex::Regex::new(&format!("^[{JS_SPACE}]$")).unwrap();
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            assert_eq!(
                class.is_match(c.encode_utf8(&mut [0; 4])),
                js_space(c),
                "{c:?}"
            );
        }
        assert!(js_space('\u{FEFF}') && !js_space('\u{85}') && !js_space('\u{180E}'));
    }

    #[test]
    fn an_env_file_sets_what_gemini_cli_sets() {
        let file = Path::new("/p/.env");
        let text = "DEBUG=1\nX=1\nPATH=/evil\n";
        let has = [(OsString::from("PATH"), OsString::from("/bin"))];
        let keys = |layers: &[Value], file: &Path| -> Vec<String> {
            let layers: Vec<(&str, &Value)> = layers.iter().map(|l| ("s", l)).collect();
            env_file_vars(file, text, &merged(&layers), &has)
                .into_iter()
                .map(|(k, _)| k)
                .collect()
        };
        assert_eq!(keys(&[], file), ["X"]);
        assert_eq!(keys(&[], Path::new("/h/.gemini/.env")), ["DEBUG", "X"]);
        // A list adds to Gemini CLI's own (`DEBUG`, `DEBUG_MODE`), and to the one before.
        let list = |v: Value| json!({"advanced": {"excludedEnvVars": v}});
        assert!(keys(&[list(json!(["X"]))], file).is_empty());
        let (x, other) = (list(json!(["X"])), list(json!(["OTHER"])));
        assert!(keys(&[x, other], file).is_empty());
        // Another value is one more name, compared whole.
        assert_eq!(keys(&[list(json!("XY"))], file), ["X"]);
        assert_eq!(keys(&[list(json!({"X": true}))], file), ["X"]);
        // With `advanced` replaced, the list is Gemini CLI's fallback, or the new one: a
        // string is searched for the name (`includes`), another value throws, and nothing
        // is loaded.
        let gone = json!({"advanced": null});
        assert_eq!(keys(std::slice::from_ref(&gone), file), ["X"]);
        assert_eq!(keys(&[gone.clone(), list(json!("XY"))], file), ["DEBUG"]);
        assert!(keys(&[gone, list(json!({"X": true}))], file).is_empty());
    }

    #[test]
    fn the_env_file_is_found_where_gemini_cli_looks() {
        let root = tempfile::tempdir().unwrap();
        let base = root.path();
        let start = base.join("a/b");
        let home = base.join("home");
        std::fs::create_dir_all(start.join(".gemini")).unwrap();
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        let none = json!({});
        let ignore = json!({"advanced": {"ignoreLocalEnv": true}});
        assert_eq!(env_file(&start, Some(&home), &none), None);
        std::fs::write(home.join(".env"), "").unwrap();
        assert_eq!(
            env_file(&start, Some(&home), &none),
            Some(home.join(".env"))
        );
        std::fs::write(home.join(".gemini/.env"), "").unwrap();
        let home_gemini = Some(home.join(".gemini/.env"));
        assert_eq!(env_file(&start, Some(&home), &none), home_gemini);
        std::fs::write(base.join("a/.env"), "").unwrap();
        assert_eq!(
            env_file(&start, Some(&home), &none),
            Some(base.join("a/.env"))
        );
        assert_eq!(env_file(&start, Some(&home), &ignore), home_gemini);
        std::fs::write(start.join(".gemini/.env"), "").unwrap();
        let own = Some(start.join(".gemini/.env"));
        assert_eq!(env_file(&start, Some(&home), &ignore), own);
    }
}
