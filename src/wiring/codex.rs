//! Codex's hook trust.
//!
//! `codex exec` runs a non-managed hook only when the user config holds
//! `[hooks.state."<key>"] trusted_hash = "<hash>"` for it, and the hash is the hook's
//! current one: an untrusted hook, or a trusted one edited since, is skipped without a
//! word and the tool runs. The key is `<settings file>:pre_tool_use:<group>:<handler>`;
//! the hash is Codex's: sha256 over the compact JSON, keys sorted, of the event's label
//! and the matcher group reduced to this one handler, normalized the way Codex does
//! (the timeout defaulted to 600 seconds, `async` written out, absent fields left out).
//! Hooks as a whole are a feature: `[features] hooks = false` (or its older name
//! `codex_hooks`) in the user config or a trusted project's `.codex/config.toml` turns
//! every hook off, again without a word. Hooks are declared in a config folder's
//! `hooks.json` or under `[hooks]` in its `config.toml`, and Codex runs both (see
//! [`HOOK_FILES`]).

use std::path::Path;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::text::hex;

/// Codex's label for the pre-tool event in trust keys and hashes.
pub const EVENT_LABEL: &str = "pre_tool_use";

/// The trust key of a handler: `<settings file>:pre_tool_use:<group>:<handler>`.
pub fn hook_key(settings_path: &str, group: usize, handler: usize) -> String {
    format!("{settings_path}:{EVENT_LABEL}:{group}:{handler}")
}

/// The hash Codex compares with `trusted_hash`, for one command handler of a group.
/// `handler` is the handler object as written in the settings.
pub fn trusted_hash(matcher: Option<&str>, handler: &Map<String, Value>) -> String {
    let command = handler.get("command").cloned().unwrap_or(Value::Null);
    let timeout = handler
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(600)
        .max(1);
    let is_async = handler
        .get("async")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut normalized = Map::new();
    normalized.insert("type".into(), json!("command"));
    normalized.insert("command".into(), command);
    normalized.insert("timeout".into(), json!(timeout));
    normalized.insert("async".into(), json!(is_async));
    if let Some(s) = handler.get("statusMessage").filter(|s| s.is_string()) {
        normalized.insert("statusMessage".into(), s.clone());
    }
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(EVENT_LABEL));
    if let Some(m) = matcher {
        identity.insert("matcher".into(), json!(m));
    }
    identity.insert(
        "hooks".into(),
        Value::Array(vec![Value::Object(normalized)]),
    );
    // serde_json's map keeps its keys sorted, which is Codex's canonical form.
    let bytes = serde_json::to_vec(&Value::Object(identity)).unwrap_or_default();
    format!("sha256:{}", hex(&Sha256::digest(&bytes)))
}

/// What the user config says of one handler: its `trusted_hash` and `enabled`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookState {
    /// The hash the user trusted, if any.
    pub trusted_hash: Option<String>,
    /// `enabled = false` turns the hook off.
    pub enabled: Option<bool>,
}

/// The state of a handler in the user config (`[hooks.state."<key>"]`).
pub fn hook_state(user_config: &toml::Table, key: &str) -> HookState {
    let state = hook_state_table(user_config, key);
    HookState {
        trusted_hash: state
            .and_then(|s| s.get("trusted_hash"))
            .and_then(|h| h.as_str())
            .map(str::to_string),
        enabled: state
            .and_then(|s| s.get("enabled"))
            .and_then(|e| e.as_bool()),
    }
}

/// The trust level the user config gives a project directory (`[projects."<dir>"]`).
pub fn project_trust(user_config: &toml::Table, dir: &str) -> Option<String> {
    project_table(user_config, dir)
        .and_then(|p| p.get("trust_level"))
        .and_then(|t| t.as_str())
        .map(str::to_string)
}

/// The handler types Codex 0.171.0 knows in `hooks.json`.
pub const HOOK_TYPES: [&str; 4] = ["command", "mcp_tool", "prompt", "agent"];

/// Why Codex would fail to parse a `hooks.json` (it then warns and loads no hook from
/// that file, ours included, and the tool runs): the first value of the wrong shape, as
/// `` `path` must be SHAPE ``. Checks what Codex 0.171.0 was seen to refuse: an event
/// that is not a list of groups, a group's `matcher` or `hooks` of the wrong kind, a
/// handler of an unknown `type`, and a command handler's `command`, `timeout`, `async`
/// and `statusMessage`. Unknown events and keys are left alone.
pub fn invalid_hooks_file(value: &Value) -> Option<String> {
    let Value::Object(events) = value.get("hooks")? else {
        return Some("`hooks` must be an object".into());
    };
    for (event, groups) in events {
        let Value::Array(groups) = groups else {
            return Some(format!("`hooks.{event}` must be an array of hook groups"));
        };
        for (i, g) in groups.iter().enumerate() {
            let here = format!("hooks.{event}[{i}]");
            if g.get("matcher")
                .is_some_and(|m| !m.is_string() && !m.is_null())
            {
                return Some(format!("`{here}.matcher` must be a string"));
            }
            let Some(Value::Array(handlers)) = g.get("hooks") else {
                return Some(format!("`{here}.hooks` must be an array of hooks"));
            };
            for (j, h) in handlers.iter().enumerate() {
                let at = format!("{here}.hooks[{j}]");
                let kind = h.get("type").and_then(Value::as_str);
                if !HOOK_TYPES.iter().any(|t| Some(*t) == kind) {
                    let types: Vec<String> = HOOK_TYPES.iter().map(|t| format!("`{t}`")).collect();
                    return Some(format!("`{at}.type` must be one of {}", types.join(", ")));
                }
                if kind != Some("command") {
                    continue;
                }
                let field = |k: &str, ok: fn(&Value) -> bool| h.get(k).is_some_and(|v| !ok(v));
                if !h.get("command").is_some_and(Value::is_string) {
                    return Some(format!("`{at}.command` must be a string"));
                }
                if field("timeout", |v| v.is_u64()) {
                    return Some(format!("`{at}.timeout` must be a whole number of seconds"));
                }
                if field("async", Value::is_boolean) {
                    return Some(format!("`{at}.async` must be `true` or `false`"));
                }
                if field("statusMessage", Value::is_string) {
                    return Some(format!("`{at}.statusMessage` must be a string"));
                }
            }
        }
    }
    None
}

/// Why Codex 0.171.0 never runs a command handler that it parses and trusts, with the
/// fix; `None` when it runs it. `"async": true` (`async = true` in a `config.toml`):
/// Codex skips the hook (seen: `codex exec` ran neither the hook, which was to touch a
/// file first, nor any `hook: PreToolUse` line, and ran the call the gate denies).
pub fn never_run(handler: &Map<String, Value>) -> Option<&'static str> {
    (handler.get("async") == Some(&Value::Bool(true))).then_some(
        "has `async` set to true, and Codex never runs an async hook (it skips it without a word), so every call runs unjudged: remove `async`, then trust the hook again",
    )
}

/// The names of Codex's hooks feature under `[features]`: the current one and the older.
pub const HOOKS_FEATURE: [&str; 2] = ["hooks", "codex_hooks"];

/// Where the hooks feature is turned off: the config (its name as given) and key of the
/// last setting in `configs`, lowest precedence first, when that setting is `false`.
pub fn hooks_feature_off<'a>(
    configs: &[(&'a str, &toml::Table)],
) -> Option<(&'a str, &'static str)> {
    let mut last = None;
    for (name, config) in configs {
        let features = config.get("features").and_then(|f| f.as_table());
        for key in HOOKS_FEATURE {
            if let Some(on) = features.and_then(|f| f.get(key)).and_then(|v| v.as_bool()) {
                last = Some((*name, key, on));
            }
        }
    }
    match last {
        Some((name, key, false)) => Some((name, key)),
        _ => None,
    }
}

/// The least `tool_output_token_limit` under which Codex keeps, of a long output it
/// stores whole and cuts only as it sends it (a code cell's, a subagent's answer), the
/// start the gate counts as seen (see `transcript::codex`'s `UNCUT_MAX`: 1.2 times 1,000
/// tokens of 4 bytes).
pub const OUTPUT_LIMIT_MIN: i64 = 1000;

/// Each `tool_output_token_limit` below [`OUTPUT_LIMIT_MIN`] in the configs (read in the
/// order given; the last top-level one is the one Codex uses, and a profile's, under
/// `[profiles.NAME]`, when that profile is): (file, key, value).
pub fn output_limits_below<'a>(configs: &[(&'a str, &toml::Table)]) -> Vec<(&'a str, String, i64)> {
    const KEY: &str = "tool_output_token_limit";
    let mut top = None;
    let mut profiles = Vec::new();
    for (name, config) in configs {
        if let Some(v) = config.get(KEY).and_then(toml::Value::as_integer) {
            top = Some((*name, KEY.to_string(), v));
        }
        let tables = config.get("profiles").and_then(toml::Value::as_table);
        for (profile, table) in tables.into_iter().flatten() {
            if let Some(v) = table.get(KEY).and_then(toml::Value::as_integer) {
                profiles.push((*name, format!("profiles.{profile}.{KEY}"), v));
            }
        }
    }
    (top.into_iter().chain(profiles))
        .filter(|(_, _, v)| *v < OUTPUT_LIMIT_MIN)
        .collect()
}

/// The files of one config folder that Codex (0.171.0) reads hooks from, in the order it
/// loads them: `hooks.json`, then the `[hooks]` tables of `config.toml` (`[[hooks.
/// PreToolUse]]` and its `[[hooks.PreToolUse.hooks]]`; both files' hooks run, with a
/// warning). The folders are the machine's ([`SYSTEM_DIR`]), the user's (`$CODEX_HOME`)
/// and each project `.codex` from the project root down, in that order. A handler's trust
/// key names the file it is in, and its hash is the same in either.
pub const HOOK_FILES: [&str; 2] = ["hooks.json", "config.toml"];

/// Whether Codex runs a hook of this file without the user's trust: the machine's own
/// configuration is managed.
pub fn managed(file: &Path) -> bool {
    file.parent() == Some(Path::new(SYSTEM_DIR))
}

/// The hooks a `config.toml` declares, in the shape of a `hooks.json` (`{"hooks": {...}}`)
/// so that one reader takes both: its `[hooks]` table without `state`, which holds the
/// trust records, not hooks. `{}` when it declares none.
pub fn config_hooks(config: &toml::Table) -> Value {
    let Some(hooks) = config.get("hooks") else {
        return json!({});
    };
    let mut hooks = hooks.clone();
    if let Some(table) = hooks.as_table_mut() {
        table.remove("state");
    }
    json!({ "hooks": serde_json::to_value(hooks).unwrap_or(Value::Null) })
}

/// Where Codex (0.171.0) reads the machine's own configuration: `config.toml`, read
/// before the user's, and `requirements.toml`, whose `allow_managed_hooks_only = true`
/// leaves only the hooks the managed configuration brings (seen: a hook in the user's
/// config was skipped without a word, and the tool ran).
pub const SYSTEM_DIR: &str = "/etc/codex";

/// The machine's managed configuration, this file in [`SYSTEM_DIR`]: Codex 0.171.0 reads
/// it over every other config (its "legacy managed_config.toml" layer), so its
/// `[features] hooks = false` turns every hook off (seen: with it, `codex exec` ran the
/// call the trusted gate denies, without a word).
pub const MANAGED_CONFIG: &str = "managed_config.toml";

/// The configs Codex reads, lowest precedence first: the machine's `config.toml`, the
/// user's, each project's from the root down, then the machine's [`MANAGED_CONFIG`].
pub fn config_order<T>(
    system: Option<T>,
    user: T,
    projects: impl IntoIterator<Item = T>,
    managed: Option<T>,
) -> Vec<T> {
    let mut configs: Vec<T> = system.into_iter().collect();
    configs.push(user);
    configs.extend(projects);
    configs.extend(managed);
    configs
}

/// The user config's table that marks the project trusted.
pub fn project_trust_snippet(project: &str) -> String {
    format!(
        "[projects.{}]\ntrust_level = \"trusted\"\n",
        toml_string(project)
    )
}

/// The user config's table that trusts the handler `key` with its hash.
pub fn hook_trust_snippet(key: &str, hash: &str) -> String {
    format!(
        "[hooks.state.{}]\ntrusted_hash = {}\n",
        toml_string(key),
        toml_string(hash)
    )
}

/// Whether the user config has a table for the project (`[projects."<dir>"]`), trusted
/// or not: another such table would be a TOML error, and Codex would not start.
pub fn has_project_table(user_config: &toml::Table, dir: &str) -> bool {
    project_table(user_config, dir).is_some()
}

/// Whether the user config has a table for the handler `key` (`[hooks.state."<key>"]`),
/// with any hash or none.
pub fn has_hook_state_table(user_config: &toml::Table, key: &str) -> bool {
    hook_state_table(user_config, key).is_some()
}

/// The user config's `[projects."<dir>"]`.
fn project_table<'t>(user_config: &'t toml::Table, dir: &str) -> Option<&'t toml::Value> {
    user_config.get("projects")?.get(dir)
}

/// The user config's `[hooks.state."<key>"]`.
fn hook_state_table<'t>(user_config: &'t toml::Table, key: &str) -> Option<&'t toml::Value> {
    user_config.get("hooks")?.get("state")?.get(key)
}

/// A TOML basic string.
pub fn toml_string(s: &str) -> String {
    // A JSON string is a TOML basic string for every character JSON escapes.
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_over_the_sorted_normalized_identity() {
        let handler = json!({"type": "command", "command": "echo hello", "timeout": 30});
        let Value::Object(h) = handler else {
            unreachable!()
        };
        let hash = trusted_hash(Some("^Bash$"), &h);
        let expected = format!(
            "sha256:{}",
            hex(&Sha256::digest(
                br#"{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"echo hello","timeout":30,"type":"command"}],"matcher":"^Bash$"}"#
            ))
        );
        assert_eq!(hash, expected);
        // No timeout is Codex's default of 600 seconds.
        let Value::Object(h) = json!({"type": "command", "command": "x"}) else {
            unreachable!()
        };
        let Value::Object(h600) = json!({"type": "command", "command": "x", "timeout": 600}) else {
            unreachable!()
        };
        assert_eq!(trusted_hash(None, &h), trusted_hash(None, &h600));
    }

    #[test]
    fn state_and_snippet_agree_on_the_key() {
        let key = hook_key("/p/.codex/hooks.json", 0, 0);
        assert_eq!(key, "/p/.codex/hooks.json:pre_tool_use:0:0");
        let snippet = format!(
            "{}\n{}",
            project_trust_snippet("/p"),
            hook_trust_snippet(&key, "sha256:ab")
        );
        let table: toml::Table = snippet.parse().unwrap();
        assert_eq!(
            hook_state(&table, &key).trusted_hash.as_deref(),
            Some("sha256:ab")
        );
        assert_eq!(project_trust(&table, "/p").as_deref(), Some("trusted"));
        assert!(has_project_table(&table, "/p") && has_hook_state_table(&table, &key));
        assert!(!has_project_table(&table, "/q") && !has_hook_state_table(&table, "/q"));
    }

    #[test]
    fn a_hooks_file_codex_cannot_parse_is_named_by_its_path() {
        // Codex 0.171.0 warned "failed to parse hooks config" and ran the tool for the
        // first two; the unknown event it loaded.
        let hook =
            |h: Value| json!({"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [h]}]}});
        assert_eq!(
            invalid_hooks_file(&hook(json!({"type": "bogus", "command": "true"}))).as_deref(),
            Some(
                "`hooks.PreToolUse[0].hooks[0].type` must be one of `command`, `mcp_tool`, `prompt`, `agent`"
            )
        );
        assert_eq!(
            invalid_hooks_file(&hook(
                json!({"type": "command", "command": "true", "timeout": "x"})
            ))
            .as_deref(),
            Some("`hooks.PreToolUse[0].hooks[0].timeout` must be a whole number of seconds")
        );
        let fine = json!({"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "true", "timeout": 30}]}]}, "other": 1});
        assert_eq!(invalid_hooks_file(&fine), None);
        assert_eq!(
            invalid_hooks_file(&hook(json!({"type": "prompt", "prompt": "ok?"}))),
            None
        );
    }

    #[test]
    fn config_toml_hooks_read_as_a_hooks_file() {
        let t = |s: &str| s.parse::<toml::Table>().unwrap();
        let config = t(r#"
model = "x"

[[hooks.PreToolUse]]
matcher = "^Bash$"

[[hooks.PreToolUse.hooks]]
type = "command"
command = "og hook codex"
timeout = 30

[hooks.state."/p/.codex/config.toml:pre_tool_use:0:0"]
trusted_hash = "sha256:ab"
"#);
        let value = config_hooks(&config);
        assert_eq!(
            value,
            json!({"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [
                {"type": "command", "command": "og hook codex", "timeout": 30}
            ]}]}})
        );
        assert_eq!(invalid_hooks_file(&value), None);
        assert_eq!(config_hooks(&t("model = \"x\"\n")), json!({}));
        // A handler Codex refuses (it then does not start) is named as in a hooks file.
        let bogus = config_hooks(&t(
            "[[hooks.PostToolUse]]\n[[hooks.PostToolUse.hooks]]\ntype = \"bogus\"\n",
        ));
        assert!(
            invalid_hooks_file(&bogus)
                .is_some_and(|p| p.starts_with("`hooks.PostToolUse[0].hooks[0].type`"))
        );
        assert!(managed(Path::new("/etc/codex/config.toml")));
        assert!(!managed(Path::new("/home/u/.codex/config.toml")));
    }

    #[test]
    fn the_last_hooks_feature_setting_wins() {
        let t = |s: &str| s.parse::<toml::Table>().unwrap();
        let (none, off, old_off, on) = (
            t(""),
            t("[features]\nhooks = false\n"),
            t("[features]\ncodex_hooks = false\n"),
            t("[features]\nhooks = true\n"),
        );
        assert_eq!(hooks_feature_off(&[("u", &none)]), None);
        assert_eq!(hooks_feature_off(&[("u", &off)]), Some(("u", "hooks")));
        assert_eq!(
            hooks_feature_off(&[("u", &old_off), ("p", &none)]),
            Some(("u", "codex_hooks"))
        );
        // A project config read later turns it back on, or off.
        assert_eq!(hooks_feature_off(&[("u", &off), ("p", &on)]), None);
        assert_eq!(
            hooks_feature_off(&[("u", &on), ("p", &off)]),
            Some(("p", "hooks"))
        );
    }

    #[test]
    fn the_machine_s_managed_config_is_read_over_the_others() {
        let t = |s: &str| s.parse::<toml::Table>().unwrap();
        let (on, off) = (
            t("[features]\nhooks = true\n"),
            t("[features]\nhooks = false\n"),
        );
        let configs = config_order(
            Some(("system", &on)),
            ("user", &on),
            [("project", &on)],
            Some(("managed", &off)),
        );
        assert_eq!(hooks_feature_off(&configs), Some(("managed", "hooks")));
        let configs = config_order(None, ("user", &off), [], Some(("managed", &on)));
        assert_eq!(hooks_feature_off(&configs), None);
    }
}
