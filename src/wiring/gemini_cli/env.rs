//! The environment Gemini CLI (0.61.0) gives a hook's process: its own, which holds the
//! variables of the `.env` file it loads at start ([`env_file`], [`env_file_vars`]),
//! less what its redaction leaves out ([`hook_environment`]), and a hook's own `env`
//! written as Node writes it ([`js_env_string`]), and its `GEMINI_PLANS_DIR`
//! ([`plans_dir`]). It reads the settings as Gemini CLI
//! merges them ([`merged`]); where the settings files are is the parent module's. It
//! reads no variable and no file itself (it only looks for where the `.env` file is, and
//! follows the symlinks of a plans directory):
//! the caller passes the environment, the settings and the file's text.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use super::truthy;

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
/// (see [`super::settings_by_precedence`]). Gemini CLI 0.61.0 (`executeCommandHook`) starts a
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
// Not `claude_code::js_string`: that one writes a list, an object and a number with an
// exponent where this gives `None`, and `-0` and a whole number past 2^53 otherwise
// (`"-0"`, `"12345678901234567168"` where Node writes `"0"`, `"12345678901234567000"`).
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
/// [`super::settings_by_precedence`]) merged as it merges them (`mergeSettings`): over its
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

/// A settings file's content as Gemini CLI 0.61.0 takes it (`resolveEnvVarsInObject`,
/// run on each file as it loads it, before merging): in every string (not in a key),
/// `$NAME` and `${NAME}` replaced by the variable's value, and `${NAME:-default}` by the
/// default when the variable is unset; a variable that is unset and has no default is
/// left as written. `NAME` in `$NAME` is ASCII letters, digits and `_`, as JavaScript's
/// `\w` reads them. So `"directory": "$HOME/plans"` is a directory outside the project.
pub fn resolve_env_vars(value: &mut Value, env: &dyn Fn(&str) -> Option<OsString>) {
    static VAR: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let Some(var) = VAR.get_or_init(|| {
        regex::Regex::new(r"\$(?:([0-9A-Za-z_]+)|\{([^}]+?)(?::-([^}]*))?\})").ok()
    }) else {
        return;
    };
    match value {
        Value::String(s) => {
            let resolved = var.replace_all(s, |c: &regex::Captures<'_>| {
                let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
                // Node reads its environment as UTF-8, a byte that is not as U+FFFD.
                match (env(name), c.get(3)) {
                    (Some(v), _) => v.to_string_lossy().into_owned(),
                    (None, Some(default)) => default.as_str().to_string(),
                    (None, None) => c.get(0).map_or("", |m| m.as_str()).to_string(),
                }
            });
            if let std::borrow::Cow::Owned(resolved) = resolved {
                *s = resolved;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| resolve_env_vars(v, env)),
        Value::Object(members) => members.values_mut().for_each(|v| resolve_env_vars(v, env)),
        _ => {}
    }
}

/// The settings read here whose lists Gemini CLI 0.61.0 merges with `mergeStrategy:
/// "union"`: the one before, then each new item (a value that is not a list is one
/// item).
const UNION: [&[&str]; 1] = [&["advanced", "excludedEnvVars"]];

/// The `.env` file Gemini CLI 0.61.0 loads into its own environment when it starts in
/// the trusted folder `start` (`findEnvFile`): in `start` and each directory above it,
/// `.gemini/.env`, then `.env` (with `advanced.ignoreLocalEnv` on, only in
/// `home`); past `/`, `<home>/.gemini/.env`, then `<home>/.env` (`home`: see
/// [`super::user_home`]). Its variables reach every hook (see [`env_file_vars`]). `settings`:
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

/// The `GEMINI_PLANS_DIR` Gemini CLI 0.61.0 gives a hook of the session `session` in
/// the project `project` (`Storage.getPlansDir`): `general.plan.directory` in the merged
/// settings (see [`merged`]) resolved against the project, if it is inside the project
/// once symlinks are followed (the one thing here that reads the disk), else
/// `<home>/.gemini/tmp/<id>/<session>/plans` (`home`: see [`super::user_home`]), where
/// `<id>` is the project's in `<home>/.gemini/projects.json` (`registry`), else the one
/// Gemini CLI gives a new project (its folder's name, lower case, each run of other
/// characters than `a-z0-9` one `-`). Not seen here: a plan directory an extension sets
/// (doctor looks at those apart), a name another project's folder already took, and
/// `SANDBOX=sandbox-exec`.
///
/// A directory outside the project: with plan mode on (`general.plan.enabled` not set to
/// a value JavaScript counts as false), Gemini CLI drops it at start with a warning and
/// the default above holds; with plan mode off, `getPlansDir` throws each time a hook
/// starts, so Gemini CLI runs no hook and runs the tool (seen in a real run). That is the
/// error: where the directory resolves.
pub fn plans_dir(
    project: &Path,
    home: &Path,
    settings: &Value,
    registry: Option<&Value>,
    session: &str,
) -> Result<PathBuf, PathBuf> {
    let project = resolve(Path::new("/"), project);
    if let Some(dir) = settings
        .pointer("/general/plan/directory")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
    {
        let custom = resolve(&project, Path::new(dir));
        let real = real_path(&custom);
        if is_subpath(&real_path(&project), &real) {
            return Ok(custom);
        }
        let plan_on = settings
            .pointer("/general/plan/enabled")
            .is_none_or(|on| on.is_null() || truthy(on));
        if !plan_on {
            return Err(real);
        }
    }
    let id = registry
        .and_then(|r| r.get("projects")?.get(project.to_str()?)?.as_str())
        .map_or_else(|| slug(&project), str::to_string);
    Ok(home
        .join(".gemini/tmp")
        .join(id)
        .join(session)
        .join("plans"))
}

/// Node's `isSubpath` (POSIX): `child` is `parent` or under it (on macOS, as lower case).
fn is_subpath(parent: &Path, child: &Path) -> bool {
    if cfg!(target_os = "macos") {
        let lower = |p: &Path| PathBuf::from(p.to_string_lossy().to_lowercase());
        return lower(child).starts_with(lower(parent));
    }
    child.starts_with(parent)
}

/// Gemini CLI's `resolveToRealPath` of an absolute path: its symlinks followed, a part
/// that does not exist kept as written under its parent's real path.
fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => real_path(parent).join(name),
        _ => path.to_path_buf(),
    }
}

/// Node's `path.resolve(base, path)` on POSIX: `path` under `base` unless absolute, `.`
/// and `..` taken away without reading the disk.
fn resolve(base: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for part in base.join(path).components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(name) => out.push(name),
            _ => {}
        }
    }
    out
}

/// `ProjectRegistry.slugify` of the project folder's name (`project` if none is left).
fn slug(project: &Path) -> String {
    let name = project
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase());
    let mut out = String::new();
    for c in name.unwrap_or_default().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-');
    if out.is_empty() { "project" } else { out }.to_string()
}

/// `dotenv.parse` (the version Gemini CLI 0.61.0 bundles): `KEY=value` lines (`export`
/// before, `:` for `=`, a `#` comment after), a value quoted with `'`, `"` or a
/// backquote taken whole across lines, and in `"` quotes `\n` and `\r` read as a new
/// line and a carriage return; a key given twice keeps its place and takes the last
/// value.
fn dotenv_parse(text: &str) -> Vec<(String, String)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_settings_file_s_variables_are_resolved_as_gemini_cli_resolves_them() {
        let env = |key: &str| match key {
            "HOME" => Some(OsString::from("/home/u")),
            "EMPTY" => Some(OsString::new()),
            _ => None,
        };
        let mut settings = json!({
            "general": {"plan": {"directory": "$HOME/plans", "enabled": "${EMPTY}"}},
            "list": ["${HOME}", "${UNSET:-d}", "$UNSET/x", "${UNSET}", "${HOME:-d}", "$", "${}",
                     "$HOME-$HOME", "${A:b}", "$HOMEX"],
            "$HOME": 1,
            "n": 2
        });
        resolve_env_vars(&mut settings, &env);
        assert_eq!(
            settings,
            json!({
                "general": {"plan": {"directory": "/home/u/plans", "enabled": ""}},
                "list": ["/home/u", "d", "$UNSET/x", "${UNSET}", "/home/u", "$", "${}",
                         "/home/u-/home/u", "${A:b}", "$HOMEX"],
                "$HOME": 1,
                "n": 2
            })
        );
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

    #[test]
    fn the_plans_dir_is_where_gemini_cli_puts_it() {
        let home = Path::new("/h");
        let none = json!({});
        let at = |project: &str, settings: &Value, registry: Option<&Value>| {
            plans_dir(Path::new(project), home, settings, registry, "s1").unwrap()
        };
        assert_eq!(
            at("/w/My Proj.v2/", &none, None),
            Path::new("/h/.gemini/tmp/my-proj-v2/s1/plans")
        );
        assert_eq!(
            at("/w/__/", &none, None),
            Path::new("/h/.gemini/tmp/project/s1/plans")
        );
        let registry = json!({"projects": {"/w/p": "p-2"}});
        assert_eq!(
            at("/w/x/../p", &none, Some(&registry)),
            Path::new("/h/.gemini/tmp/p-2/s1/plans")
        );
        let custom = |d: &str| json!({"general": {"plan": {"directory": d}}});
        assert_eq!(
            at("/w/p", &custom("./plans/../x"), None),
            Path::new("/w/p/x")
        );
        assert_eq!(at("/w/p", &custom("/w/p/abs"), None), Path::new("/w/p/abs"));
        assert_eq!(
            at("/w/p", &custom(""), None),
            Path::new("/h/.gemini/tmp/p/s1/plans")
        );
        // Outside the project: dropped at start while plan mode is on.
        let default = Path::new("/h/.gemini/tmp/p/s1/plans");
        assert_eq!(at("/w/p", &custom("/abs"), None), default);
        assert_eq!(at("/w/p", &custom("../p2"), None), default);
        let off =
            |d: &str, on: Value| json!({"general": {"plan": {"directory": d, "enabled": on}}});
        assert_eq!(at("/w/p", &off("/abs", json!(null)), None), default);
        assert_eq!(at("/w/p", &off("/abs", json!("no")), None), default);
        let throws = |settings: &Value| plans_dir(Path::new("/w/p"), home, settings, None, "s1");
        assert_eq!(
            throws(&off("/abs", json!(false))),
            Err(PathBuf::from("/abs"))
        );
        assert_eq!(throws(&off("../p2", json!(0))), Err(PathBuf::from("/w/p2")));
        assert_eq!(throws(&off("x", json!(false))), Ok(PathBuf::from("/w/p/x")));
    }

    #[test]
    fn a_plans_dir_is_judged_once_its_symlinks_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let project = base.join("p");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(base.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), project.join("out")).unwrap();
        let off = |d: &str| json!({"general": {"plan": {"directory": d, "enabled": false}}});
        let at = |d: &str| plans_dir(&project, Path::new("/h"), &off(d), None, "s1");
        assert_eq!(at("out/plans"), Err(base.join("elsewhere/plans")));
        assert_eq!(at("in/plans"), Ok(project.join("in/plans")));
    }
}
