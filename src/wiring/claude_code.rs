//! Claude Code's settings, as its validation sees them.
//!
//! Claude Code checks each settings file against its schema and, in `-p` mode, drops a
//! file that fails without a word: one wrong unrelated key (`permissions.allow` given as
//! a string) and the hooks in that file are gone. This checks the shapes of the keys it
//! knows; unknown keys are left alone. Two variables turn every hook off (see
//! [`HOOKS_OFF_VARS`]), from the environment or a settings file's `env`.

use serde_json::Value;

/// The shape a settings key must have.
#[derive(Debug, Clone, Copy)]
enum Shape {
    String,
    Bool,
    Number,
    Strings,
    StringMap,
    Object,
    Hooks,
    Permissions,
}

impl Shape {
    fn describe(self) -> &'static str {
        match self {
            Shape::String => "a string",
            Shape::Bool => "`true` or `false`",
            Shape::Number => "a number",
            Shape::Strings => "an array of strings",
            Shape::StringMap => "an object of strings",
            Shape::Object | Shape::Hooks | Shape::Permissions => "an object",
        }
    }
}

/// The top-level keys whose shape is checked.
const KEYS: &[(&str, Shape)] = &[
    ("$schema", Shape::String),
    ("apiKeyHelper", Shape::String),
    ("awsAuthRefresh", Shape::String),
    ("awsCredentialExport", Shape::String),
    ("cleanupPeriodDays", Shape::Number),
    ("disableAllHooks", Shape::Bool),
    ("disabledMcpjsonServers", Shape::Strings),
    ("enableAllProjectMcpServers", Shape::Bool),
    ("enabledMcpjsonServers", Shape::Strings),
    ("env", Shape::StringMap),
    ("forceLoginMethod", Shape::String),
    ("hooks", Shape::Hooks),
    ("includeCoAuthoredBy", Shape::Bool),
    ("model", Shape::String),
    ("outputStyle", Shape::String),
    ("permissions", Shape::Permissions),
    ("statusLine", Shape::Object),
];

const PERMISSION_KEYS: &[(&str, Shape)] = &[
    ("additionalDirectories", Shape::Strings),
    ("allow", Shape::Strings),
    ("ask", Shape::Strings),
    ("defaultMode", Shape::String),
    ("deny", Shape::Strings),
    ("disableBypassPermissionsMode", Shape::String),
];

/// The first key whose value does not have the shape Claude Code requires, as
/// `` `path` must be SHAPE ``; `None` when every known key is well formed.
pub fn invalid_key(settings: &Value) -> Option<String> {
    let Value::Object(top) = settings else {
        return Some("the top level must be an object".to_string());
    };
    for (key, shape) in KEYS {
        if let Some(v) = top.get(*key)
            && let Some(problem) = check(key, v, *shape)
        {
            return Some(problem);
        }
    }
    None
}

fn check(path: &str, value: &Value, shape: Shape) -> Option<String> {
    let bad = || Some(format!("`{path}` must be {}", shape.describe()));
    match shape {
        Shape::String if !value.is_string() => bad(),
        Shape::Bool if !value.is_boolean() => bad(),
        Shape::Number if !value.is_number() => bad(),
        Shape::Strings => match value {
            Value::Array(a) if a.iter().all(Value::is_string) => None,
            _ => bad(),
        },
        Shape::StringMap => match value {
            Value::Object(o) if o.values().all(Value::is_string) => None,
            _ => bad(),
        },
        Shape::Object if !value.is_object() => bad(),
        Shape::Permissions => {
            let Value::Object(o) = value else {
                return bad();
            };
            PERMISSION_KEYS
                .iter()
                .find_map(|(k, s)| o.get(*k).and_then(|v| check(&format!("{path}.{k}"), v, *s)))
        }
        Shape::Hooks => {
            let Value::Object(events) = value else {
                return bad();
            };
            events
                .iter()
                .find_map(|(event, groups)| check_groups(&format!("hooks.{event}"), groups))
        }
        _ => None,
    }
}

fn check_groups(path: &str, groups: &Value) -> Option<String> {
    let Value::Array(groups) = groups else {
        return Some(format!("`{path}` must be an array of hook groups"));
    };
    for (i, g) in groups.iter().enumerate() {
        let here = format!("{path}[{i}]");
        let Value::Object(g) = g else {
            return Some(format!("`{here}` must be an object"));
        };
        if let Some(m) = g.get("matcher")
            && !m.is_string()
        {
            return Some(format!("`{here}.matcher` must be a string"));
        }
        let Some(Value::Array(handlers)) = g.get("hooks") else {
            return Some(format!("`{here}.hooks` must be an array of hooks"));
        };
        for (j, h) in handlers.iter().enumerate() {
            let at = format!("{here}.hooks[{j}]");
            let Value::Object(h) = h else {
                return Some(format!("`{at}` must be an object"));
            };
            if h.get("type").and_then(Value::as_str) == Some("command") {
                if !h.get("command").is_some_and(Value::is_string) {
                    return Some(format!("`{at}.command` must be a string"));
                }
                if let Some(t) = h.get("timeout")
                    && !t.as_f64().is_some_and(|t| t > 0.0)
                {
                    return Some(format!("`{at}.timeout` must be a positive number"));
                }
            }
        }
    }
    None
}

/// The variables that make Claude Code (2.1.197) run no hook at all when set to a value
/// it counts as true (see [`truthy`]): `CLAUDE_CODE_SIMPLE`, which `--bare` sets, and
/// `CLAUDE_CODE_SAFE_MODE`, `--safe-mode`'s.
pub const HOOKS_OFF_VARS: [&str; 2] = ["CLAUDE_CODE_SIMPLE", "CLAUDE_CODE_SAFE_MODE"];

/// Whether Claude Code counts a variable's value as true: `1`, `true`, `yes` or `on`, in
/// any case, spaces around it ignored.
pub fn truthy(value: &str) -> bool {
    let v = value.trim().to_ascii_lowercase();
    ["1", "true", "yes", "on"].contains(&v.as_str())
}

/// The first of [`HOOKS_OFF_VARS`] a settings file's `env` turns on, with its value.
pub fn hooks_off_in_env(settings: &Value) -> Option<(&'static str, &str)> {
    let env = settings.get("env")?;
    HOOKS_OFF_VARS.into_iter().find_map(|var| {
        let v = env.get(var)?.as_str()?;
        truthy(v).then_some((var, v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn these_variables_turn_every_hook_off_when_true() {
        for v in ["1", "true", " Yes ", "ON"] {
            assert!(truthy(v), "{v}");
        }
        for v in ["0", "", "false", "no", "2", "y"] {
            assert!(!truthy(v), "{v}");
        }
        let s = |t: &str| serde_json::from_str::<Value>(t).unwrap();
        assert_eq!(
            hooks_off_in_env(&s(r#"{"env": {"CLAUDE_CODE_SAFE_MODE": "true"}}"#)),
            Some(("CLAUDE_CODE_SAFE_MODE", "true"))
        );
        assert_eq!(
            hooks_off_in_env(&s(r#"{"env": {"CLAUDE_CODE_SIMPLE": "0"}}"#)),
            None
        );
        assert_eq!(hooks_off_in_env(&s("{}")), None);
    }
    use serde_json::json;

    #[test]
    fn a_wrong_shape_is_named_by_its_path() {
        assert_eq!(
            invalid_key(&json!({"permissions": {"allow": ["Bash"]}})),
            None
        );
        assert_eq!(
            invalid_key(&json!({"permissions": {"allow": "Bash"}})).unwrap(),
            "`permissions.allow` must be an array of strings"
        );
        assert_eq!(
            invalid_key(
                &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": 1}]}]}})
            )
            .unwrap(),
            "`hooks.PreToolUse[0].hooks[0].command` must be a string"
        );
        assert_eq!(
            invalid_key(&json!({"env": {"A": 1}})).unwrap(),
            "`env` must be an object of strings"
        );
        assert_eq!(invalid_key(&json!({"someFutureKey": 1})), None);
    }
}
