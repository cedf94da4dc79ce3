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
    Hooks,
    Permissions,
    PositiveInt,
    Enum(&'static [&'static str]),
    /// `{"type": "command", "command": "..."}`.
    CommandObject,
}

impl Shape {
    fn describe(self) -> String {
        match self {
            Shape::String => "a string".into(),
            Shape::Bool => "`true` or `false`".into(),
            Shape::Number => "a number".into(),
            Shape::Strings => "an array of strings".into(),
            Shape::StringMap => "an object of strings".into(),
            Shape::Hooks | Shape::Permissions => "an object".into(),
            Shape::PositiveInt => "a whole number above 0".into(),
            Shape::Enum(values) => {
                let quoted: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
                format!("one of {}", quoted.join(", "))
            }
            Shape::CommandObject => "an object with `type` `command` and a string `command`".into(),
        }
    }
}

/// The top-level keys whose shape is checked: those of Claude Code 2.1.197's settings
/// schema whose value it checks strictly (a key it reads leniently, replacing a bad value
/// with nothing, is left out, as are the complex ones).
const KEYS: &[(&str, Shape)] = &[
    ("$schema", Shape::String),
    ("advisorModel", Shape::String),
    ("agent", Shape::String),
    ("agentPushNotifEnabled", Shape::Bool),
    ("allowAllClaudeAiMcps", Shape::Bool),
    ("allowedHttpHookUrls", Shape::Strings),
    ("allowManagedHooksOnly", Shape::Bool),
    ("allowManagedMcpServersOnly", Shape::Bool),
    ("allowManagedPermissionRulesOnly", Shape::Bool),
    ("alwaysThinkingEnabled", Shape::Bool),
    ("apiKeyHelper", Shape::String),
    ("autoCompactEnabled", Shape::Bool),
    ("autoDreamEnabled", Shape::Bool),
    ("autoMemoryDirectory", Shape::String),
    ("autoMemoryEnabled", Shape::Bool),
    ("autoScrollEnabled", Shape::Bool),
    (
        "autoUpdatesChannel",
        Shape::Enum(&["latest", "stable", "rc"]),
    ),
    ("autoUploadSessions", Shape::Bool),
    ("availableModels", Shape::Strings),
    ("awaySummaryEnabled", Shape::Bool),
    ("awsAuthRefresh", Shape::String),
    ("awsCredentialExport", Shape::String),
    ("channelsEnabled", Shape::Bool),
    ("claudeMd", Shape::String),
    ("claudeMdExcludes", Shape::Strings),
    ("cleanupPeriodDays", Shape::PositiveInt),
    ("companyAnnouncements", Shape::Strings),
    ("daemonColdStart", Shape::Enum(&["transient", "ask"])),
    ("defaultShell", Shape::Enum(&["bash", "powershell"])),
    ("disableAgentView", Shape::Bool),
    ("disableAllHooks", Shape::Bool),
    ("disableArtifact", Shape::Bool),
    ("disableAutoMode", Shape::Enum(&["disable"])),
    ("disableBundledSkills", Shape::Bool),
    ("disableClaudeAiConnectors", Shape::Bool),
    ("disabledMcpjsonServers", Shape::Strings),
    ("disableRemoteControl", Shape::Bool),
    ("disableSideloadFlags", Shape::Bool),
    ("disableSkillShellExecution", Shape::Bool),
    ("disableWorkflows", Shape::Bool),
    ("doneMeansMerged", Shape::Bool),
    ("enableAllProjectMcpServers", Shape::Bool),
    ("enableArtifact", Shape::Bool),
    ("enabledMcpjsonServers", Shape::Strings),
    ("enableWorkflows", Shape::Bool),
    ("enforceAvailableModels", Shape::Bool),
    ("env", Shape::StringMap),
    ("fallbackModel", Shape::Strings),
    ("fastMode", Shape::Bool),
    ("fastModePerSessionOptIn", Shape::Bool),
    ("feedbackSurveyRate", Shape::Number),
    ("fileCheckpointingEnabled", Shape::Bool),
    ("fileSuggestion", Shape::CommandObject),
    ("forceRemoteSettingsRefresh", Shape::Bool),
    ("gcpAuthRefresh", Shape::String),
    ("hooks", Shape::Hooks),
    ("httpHookAllowedEnvVars", Shape::Strings),
    ("includeCoAuthoredBy", Shape::Bool),
    ("includeGitInstructions", Shape::Bool),
    ("inputNeededNotifEnabled", Shape::Bool),
    ("isolatePeerMachines", Shape::Bool),
    ("language", Shape::String),
    ("minimumVersion", Shape::String),
    ("model", Shape::String),
    ("otelHeadersHelper", Shape::String),
    ("outputStyle", Shape::String),
    (
        "parentSettingsBehavior",
        Shape::Enum(&["first-wins", "merge"]),
    ),
    ("permissions", Shape::Permissions),
    ("plansDirectory", Shape::String),
    ("pluginSuggestionMarketplaces", Shape::Strings),
    ("pluginTrustMessage", Shape::String),
    ("precomputeCompactionEnabled", Shape::Bool),
    ("prefersReducedMotion", Shape::Bool),
    ("promptSuggestionEnabled", Shape::Bool),
    ("proxyAuthHelper", Shape::String),
    ("prUrlTemplate", Shape::String),
    ("remoteControlAtStartup", Shape::Bool),
    ("requiredMaximumVersion", Shape::String),
    ("requiredMinimumVersion", Shape::String),
    ("respectGitignore", Shape::Bool),
    ("respondToBashCommands", Shape::Bool),
    ("showClearContextOnPlanAccept", Shape::Bool),
    ("showMessageTimestamps", Shape::Bool),
    ("showThinkingSummaries", Shape::Bool),
    ("showTurnDuration", Shape::Bool),
    ("skillListingBudgetFraction", Shape::Number),
    ("skillListingMaxDescChars", Shape::PositiveInt),
    ("skipDangerousModePermissionPrompt", Shape::Bool),
    ("skipWebFetchPreflight", Shape::Bool),
    ("skipWorkflowUsageWarning", Shape::Bool),
    ("spinnerTipsEnabled", Shape::Bool),
    ("statusLine", Shape::CommandObject),
    ("subagentStatusLine", Shape::CommandObject),
    ("switchModelsOnFlag", Shape::Bool),
    ("syntaxHighlightingDisabled", Shape::Bool),
    ("terminalProgressBarEnabled", Shape::Bool),
    ("terminalTitleFromRename", Shape::Bool),
    ("todoFeatureEnabled", Shape::Bool),
    (
        "totalTokensReminder",
        Shape::Enum(&["off", "infinite", "fixed", "countdown", "padded-countdown"]),
    ),
    ("totalTokensReminderBudget", Shape::PositiveInt),
    ("tui", Shape::Enum(&["default", "fullscreen"])),
    ("verbose", Shape::Bool),
    ("wheelScrollAccelerationEnabled", Shape::Bool),
    ("workflowKeywordTriggerEnabled", Shape::Bool),
    ("wslInheritsWindowsSettings", Shape::Bool),
];

const PERMISSION_KEYS: &[(&str, Shape)] = &[
    ("additionalDirectories", Shape::Strings),
    ("allow", Shape::Strings),
    ("ask", Shape::Strings),
    (
        "defaultMode",
        Shape::Enum(&[
            "acceptEdits",
            "auto",
            "bypassPermissions",
            "default",
            "dontAsk",
            "plan",
        ]),
    ),
    ("deny", Shape::Strings),
    ("disableAutoMode", Shape::Enum(&["disable"])),
    ("disableBypassPermissionsMode", Shape::Enum(&["disable"])),
];

/// The hook types, each with the string fields it requires.
const HOOK_TYPES: &[(&str, &[&str])] = &[
    ("command", &["command"]),
    ("prompt", &["prompt"]),
    ("agent", &["prompt"]),
    ("http", &["url"]),
    ("mcp_tool", &["server", "tool"]),
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
        Shape::PositiveInt if value.as_u64().is_none_or(|n| n == 0) => bad(),
        Shape::Enum(values) if !value.as_str().is_some_and(|v| values.contains(&v)) => bad(),
        Shape::CommandObject => {
            let ok = value.get("type").and_then(Value::as_str) == Some("command")
                && value.get("command").is_some_and(Value::is_string);
            if ok { None } else { bad() }
        }
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
            let kind = h.get("type").and_then(Value::as_str);
            let Some((_, required)) = HOOK_TYPES.iter().find(|(t, _)| Some(*t) == kind) else {
                let types: Vec<String> = HOOK_TYPES.iter().map(|(t, _)| format!("`{t}`")).collect();
                return Some(format!("`{at}.type` must be one of {}", types.join(", ")));
            };
            if let Some(field) = required
                .iter()
                .find(|f| !h.get(**f).is_some_and(Value::is_string))
            {
                return Some(format!("`{at}.{field}` must be a string"));
            }
            if let Some(t) = h.get("timeout")
                && !t.as_f64().is_some_and(|t| t > 0.0)
            {
                return Some(format!("`{at}.timeout` must be a positive number"));
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

/// Where Claude Code (2.1.197) reads the managed (policy) settings an administrator
/// sets: `managed-settings.json` in this folder, then each `*.json` in its
/// `managed-settings.d`, in name order, each merged over the ones before.
pub const MANAGED_DIR: &str = if cfg!(target_os = "macos") {
    "/Library/Application Support/ClaudeCode"
} else {
    "/etc/claude-code"
};

/// What the managed settings do to hooks in the other settings files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Managed {
    /// `disableAllHooks` true: no hook runs, the managed ones included.
    AllOff(String),
    /// Only the hooks in the managed settings run (`allowManagedHooksOnly`, or
    /// `strictPluginOnlyCustomization` true or listing `"hooks"`): the key, and the file.
    ManagedOnly(&'static str, String),
}

/// What the managed settings (their files and values, in the order Claude Code merges
/// them) do to hooks: for each key, the last file that sets it decides.
pub fn managed_hooks(layers: &[(&str, &Value)]) -> Option<Managed> {
    let last = |key: &str| {
        layers
            .iter()
            .rev()
            .find_map(|(file, v)| v.get(key).map(|value| (*file, value)))
    };
    if let Some((file, Value::Bool(true))) = last("disableAllHooks") {
        return Some(Managed::AllOff(file.to_string()));
    }
    if let Some((file, Value::Bool(true))) = last("allowManagedHooksOnly") {
        return Some(Managed::ManagedOnly(
            "allowManagedHooksOnly",
            file.to_string(),
        ));
    }
    match last("strictPluginOnlyCustomization") {
        Some((file, Value::Bool(true))) => Some(Managed::ManagedOnly(
            "strictPluginOnlyCustomization",
            file.to_string(),
        )),
        Some((file, Value::Array(keys))) if keys.iter().any(|k| k.as_str() == Some("hooks")) => {
            Some(Managed::ManagedOnly(
                "strictPluginOnlyCustomization",
                file.to_string(),
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_managed_settings_can_leave_only_their_own_hooks_or_none() {
        let (off, only, strict, list, other, back) = (
            json!({"disableAllHooks": true}),
            json!({"allowManagedHooksOnly": true}),
            json!({"strictPluginOnlyCustomization": true}),
            json!({"strictPluginOnlyCustomization": ["skills", "hooks"]}),
            json!({"strictPluginOnlyCustomization": ["skills"], "allowManagedHooksOnly": false}),
            json!({"allowManagedHooksOnly": false}),
        );
        assert_eq!(managed_hooks(&[]), None);
        assert_eq!(
            managed_hooks(&[("m", &only), ("d", &off)]),
            Some(Managed::AllOff("d".into()))
        );
        assert_eq!(
            managed_hooks(&[("m", &only)]),
            Some(Managed::ManagedOnly("allowManagedHooksOnly", "m".into()))
        );
        // A drop-in read later sets it back.
        assert_eq!(managed_hooks(&[("m", &only), ("d", &back)]), None);
        for v in [&strict, &list] {
            assert_eq!(
                managed_hooks(&[("m", v)]),
                Some(Managed::ManagedOnly(
                    "strictPluginOnlyCustomization",
                    "m".into()
                ))
            );
        }
        assert_eq!(managed_hooks(&[("m", &other)]), None);
    }

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

    #[test]
    fn values_claude_code_rejects_are_named() {
        // Each of these made Claude Code 2.1.197 drop the file, hooks and all.
        for (settings, problem) in [
            (
                json!({"permissions": {"defaultMode": "yolo"}}),
                "`permissions.defaultMode` must be one of `acceptEdits`, `auto`, `bypassPermissions`, `default`, `dontAsk`, `plan`",
            ),
            (
                json!({"hooks": {"Stop": [{"hooks": [{"type": "shell", "command": "true"}]}]}}),
                "`hooks.Stop[0].hooks[0].type` must be one of `command`, `prompt`, `agent`, `http`, `mcp_tool`",
            ),
            (
                json!({"hooks": {"Stop": [{"hooks": [{"type": "http"}]}]}}),
                "`hooks.Stop[0].hooks[0].url` must be a string",
            ),
            (
                json!({"statusLine": {"type": "bogus"}}),
                "`statusLine` must be an object with `type` `command` and a string `command`",
            ),
            (
                json!({"cleanupPeriodDays": 0}),
                "`cleanupPeriodDays` must be a whole number above 0",
            ),
            (
                json!({"tui": "bogus"}),
                "`tui` must be one of `default`, `fullscreen`",
            ),
        ] {
            assert_eq!(
                invalid_key(&settings).as_deref(),
                Some(problem),
                "{settings}"
            );
        }
        // And these it accepted.
        let fine = json!({
            "statusLine": {"type": "command", "command": "echo hi", "padding": 1},
            "permissions": {"defaultMode": "default", "allow": ["Bash(ls:*)"]},
            "tui": "default",
            "cleanupPeriodDays": 30,
            "hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "ok?"}]}]}
        });
        assert_eq!(invalid_key(&fine), None);
    }

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
