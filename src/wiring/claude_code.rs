//! Claude Code's settings, as its validation sees them.
//!
//! Claude Code checks each settings file against its schema and, in `-p` mode, drops a
//! file that fails without a word: one wrong unrelated key (`permissions.allow` given as
//! a string, or `"sandbox": 5`) and the hooks in that file are gone. This checks the
//! shapes of the keys whose wrong value drops the file (see [`invalid_key`]); unknown
//! keys, and keys whose wrong value Claude Code drops alone, are left alone. Two
//! variables turn every hook off (see [`HOOKS_OFF_VARS`]), from the environment or a
//! settings file's `env`.

use serde_json::Value;

use super::TIMER_MAX_MS;

/// The shape a settings key must have.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// Any value: Claude Code makes it a string (`env`'s values).
    Any,
    String,
    /// A string a test accepts, with what it must be.
    Text(fn(&str) -> bool, &'static str),
    Bool,
    Number,
    /// A number above `min` (or equal to it, when `min_in`) and at most `max`.
    Within {
        min: f64,
        min_in: bool,
        max: f64,
    },
    /// A whole number, below 0 too.
    Integer,
    /// A whole number from `min` to `max`.
    Int {
        min: u64,
        max: u64,
    },
    Strings,
    /// An array whose entries Claude Code sorts itself (dropping those that are not
    /// strings, or not rules, one by one): only the array is required (`permissions.allow`).
    Rules,
    ArrayOf(&'static Shape),
    /// An object; the keys listed must have their shapes, the others are left alone.
    Object(&'static [(&'static str, Shape)]),
    /// An object whose every value has the shape.
    Record(&'static Shape),
    AnyOf(&'static [Shape]),
    /// A key of an [`Shape::Object`] that must be there.
    Required(&'static Shape),
    Enum(&'static [&'static str]),
    Hooks,
}

impl Shape {
    fn describe(self) -> String {
        match self {
            Shape::Any => "anything".into(),
            Shape::String => "a string".into(),
            Shape::Text(_, what) => what.into(),
            Shape::Bool => "`true` or `false`".into(),
            Shape::Number => "a number".into(),
            Shape::Within { min, min_in, max } => {
                let from = if min_in { "from" } else { "above" };
                let to = if min_in { "to" } else { "and at most" };
                format!("a number {from} {min} {to} {max}")
            }
            Shape::Integer => "a whole number".into(),
            Shape::Int { min, max } => match (min, max) {
                (0, u64::MAX) => "a whole number".into(),
                (1, u64::MAX) => "a whole number above 0".into(),
                (min, u64::MAX) => format!("a whole number from {min}"),
                (min, max) if min == max => format!("`{min}`"),
                (min, max) => format!("a whole number from {min} to {max}"),
            },
            Shape::Strings | Shape::Rules => "an array of strings".into(),
            Shape::ArrayOf(_) => "an array".into(),
            Shape::Object(_) | Shape::Record(_) | Shape::Hooks => "an object".into(),
            Shape::AnyOf(shapes) => {
                let each: Vec<String> = shapes.iter().map(|s| s.describe()).collect();
                each.join(" or ")
            }
            Shape::Required(inner) => inner.describe(),
            Shape::Enum([one]) => format!("`{one}`"),
            Shape::Enum(values) => {
                let quoted: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
                format!("one of {}", quoted.join(", "))
            }
        }
    }
}

const POSITIVE: Shape = Shape::Int {
    min: 1,
    max: u64::MAX,
};
const NON_EMPTY: Shape = Shape::Text(|s| !s.is_empty(), "a string that is not empty");

/// `{"type": "command", "command": "..."}`.
const COMMAND: Shape = Shape::Object(&[
    ("type", Shape::Required(&Shape::Enum(&["command"]))),
    ("command", Shape::Required(&Shape::String)),
]);

/// A time of day, `HH:MM` (Claude Code's `^([01]?\d|2[0-3]):[0-5]\d$`).
fn clock_time(s: &str) -> bool {
    let Some((h, m)) = s.split_once(':') else {
        return false;
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    digits(h)
        && h.len() <= 2
        && h.parse::<u8>().is_ok_and(|h| h < 24)
        && digits(m)
        && m.len() == 2
        && m.as_bytes().first().is_some_and(|b| *b < b'6')
}

/// An environment variable's name as Claude Code allows it: `^[A-Za-z_][A-Za-z0-9_]*$`.
fn env_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A marketplace's source, by its `source` (what each kind requires is not checked).
const MARKETPLACE: Shape = Shape::Object(&[(
    "source",
    Shape::Required(&Shape::Enum(&[
        "url",
        "github",
        "git",
        "npm",
        "file",
        "directory",
        "skills-dir",
        "hostPattern",
        "pathPattern",
        "settings",
    ])),
)]);

/// A plugin option's value.
const OPTION: Shape = Shape::AnyOf(&[Shape::String, Shape::Number, Shape::Bool, Shape::Strings]);

const SANDBOX: Shape = Shape::Object(&[
    ("allowAppleEvents", Shape::Bool),
    ("allowUnsandboxedCommands", Shape::Bool),
    ("autoAllowBashIfSandboxed", Shape::Bool),
    (
        "credentials",
        Shape::Object(&[
            (
                "envVars",
                Shape::ArrayOf(&Shape::Object(&[
                    (
                        "name",
                        Shape::Required(&Shape::Text(
                            env_name,
                            "a variable's name (letters, digits and `_`, not starting with a digit)",
                        )),
                    ),
                    ("mode", Shape::Required(&Shape::Enum(&["deny"]))),
                ])),
            ),
            (
                "files",
                Shape::ArrayOf(&Shape::Object(&[
                    ("path", Shape::Required(&NON_EMPTY)),
                    ("mode", Shape::Required(&Shape::Enum(&["deny"]))),
                ])),
            ),
        ]),
    ),
    ("enabled", Shape::Bool),
    ("enableWeakerNestedSandbox", Shape::Bool),
    ("enableWeakerNetworkIsolation", Shape::Bool),
    ("excludedCommands", Shape::Strings),
    ("failIfUnavailable", Shape::Bool),
    (
        "filesystem",
        Shape::Object(&[
            ("allowManagedReadPathsOnly", Shape::Bool),
            ("allowRead", Shape::Strings),
            ("allowWrite", Shape::Strings),
            ("denyRead", Shape::Strings),
            ("denyWrite", Shape::Strings),
        ]),
    ),
    ("ignoreViolations", Shape::Record(&Shape::Strings)),
    (
        "network",
        Shape::Object(&[
            ("allowAllUnixSockets", Shape::Bool),
            ("allowedDomains", Shape::Strings),
            ("allowLocalBinding", Shape::Bool),
            ("allowMachLookup", Shape::Strings),
            ("allowManagedDomainsOnly", Shape::Bool),
            ("allowUnixSockets", Shape::Strings),
            ("deniedDomains", Shape::Strings),
            ("httpProxyPort", Shape::Number),
            ("socksProxyPort", Shape::Number),
            (
                "tlsTerminate",
                Shape::Object(&[("caCertPath", NON_EMPTY), ("caKeyPath", NON_EMPTY)]),
            ),
        ]),
    ),
    (
        "ripgrep",
        Shape::Object(&[
            ("command", Shape::Required(&Shape::String)),
            ("args", Shape::Strings),
        ]),
    ),
]);

const PERMISSIONS: Shape = Shape::Object(&[
    ("additionalDirectories", Shape::Strings),
    ("allow", Shape::Rules),
    ("ask", Shape::Rules),
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
    ("deny", Shape::Rules),
    ("disableAutoMode", Shape::Enum(&["disable"])),
    ("disableBypassPermissionsMode", Shape::Enum(&["disable"])),
]);

/// Every top-level key of Claude Code 2.1.197's settings schema (`gPr`, with the keys its
/// features add) that makes it drop the whole file when its value does not have the
/// shape, with the shape, to the depth checked here (nested objects' keys as listed;
/// what each kind of marketplace source requires, and the wildcards of
/// `sandbox.network.allowMachLookup`, are not checked). The schema lets unknown keys
/// through, at the top and inside `sandbox` and `permissions`, and drops other objects'
/// unknown keys, so those are left alone. Left out, as Claude Code drops a wrong value
/// alone and keeps the file (seen: `"theme": 5`, `"effortLevel": "bogus"`,
/// `"strictPluginOnlyCustomization": 5`, `"allowedMcpServers": 5`,
/// `sandbox.bwrapPath` 5 and `statusLine.refreshInterval` `"a"` each left it read):
/// those its schema reads with `.catch` (`theme`, `editorMode`, `effortLevel`,
/// `ultracode`, `autoCompactWindow`, `viewMode`, `teammateMode`,
/// `preferredNotifChannel`, `forceLoginMethod`, `forceLoginGatewayUrl`,
/// `strictPluginOnlyCustomization`, `footerLinksRegexes`, `worktree.bgIsolation`,
/// `statusLine.refreshInterval`, `sandbox.bwrapPath`, `sandbox.socatPath`) and those it
/// sorts before the schema sees them (`allowedMcpServers`, `deniedMcpServers`, an
/// unknown hook event or one whose value is not an array, `hooks` itself when not an
/// object, and `permissions`' entries that are not strings). `xaaIdp`, read only with
/// `CLAUDE_CODE_ENABLE_XAA` set, is left out too.
const KEYS: &[(&str, Shape)] = &[
    ("$schema", Shape::String),
    ("advisorModel", Shape::String),
    ("agent", Shape::String),
    ("agentPushNotifEnabled", Shape::Bool),
    ("allowAllClaudeAiMcps", Shape::Bool),
    (
        "allowedChannelPlugins",
        Shape::ArrayOf(&Shape::Object(&[
            ("marketplace", Shape::Required(&Shape::String)),
            ("plugin", Shape::Required(&Shape::String)),
        ])),
    ),
    ("allowedHttpHookUrls", Shape::Strings),
    ("allowManagedHooksOnly", Shape::Bool),
    ("allowManagedMcpServersOnly", Shape::Bool),
    ("allowManagedPermissionRulesOnly", Shape::Bool),
    ("alwaysThinkingEnabled", Shape::Bool),
    ("apiKeyHelper", Shape::String),
    (
        "attribution",
        Shape::Object(&[
            ("commit", Shape::String),
            ("pr", Shape::String),
            ("sessionUrl", Shape::Bool),
        ]),
    ),
    ("autoCompactEnabled", Shape::Bool),
    ("autoDreamEnabled", Shape::Bool),
    ("autoMemoryDirectory", Shape::String),
    ("autoMemoryEnabled", Shape::Bool),
    (
        "autoMode",
        Shape::Object(&[
            ("allow", Shape::Strings),
            ("classifyAllShell", Shape::Bool),
            ("environment", Shape::Strings),
            ("hard_deny", Shape::Strings),
            ("soft_deny", Shape::Strings),
        ]),
    ),
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
    ("axScreenReader", Shape::Bool),
    ("blockedMarketplaces", Shape::ArrayOf(&MARKETPLACE)),
    (
        "breakReminder",
        Shape::Object(&[
            ("breakThresholdMinutes", POSITIVE),
            ("enabled", Shape::Bool),
            ("intervalMinutes", POSITIVE),
            ("message", Shape::String),
        ]),
    ),
    ("channelsEnabled", Shape::Bool),
    ("claudeMd", Shape::String),
    ("claudeMdExcludes", Shape::Strings),
    ("cleanupPeriodDays", POSITIVE),
    ("companyAnnouncements", Shape::Strings),
    ("daemonColdStart", Shape::Enum(&["transient", "ask"])),
    ("defaultShell", Shape::Enum(&["bash", "powershell"])),
    ("defaultView", Shape::Enum(&["chat", "transcript"])),
    ("disableAgentView", Shape::Bool),
    ("disableAllHooks", Shape::Bool),
    ("disableArtifact", Shape::Bool),
    ("disableAutoMode", Shape::Enum(&["disable"])),
    ("disableBundledSkills", Shape::Bool),
    ("disableClaudeAiConnectors", Shape::Bool),
    ("disableDeepLinkRegistration", Shape::Enum(&["disable"])),
    ("disabledMcpjsonServers", Shape::Strings),
    ("disableRemoteControl", Shape::Bool),
    ("disableSideloadFlags", Shape::Bool),
    ("disableSkillShellExecution", Shape::Bool),
    ("disableWorkflows", Shape::Bool),
    ("doneMeansMerged", Shape::Bool),
    ("enableAllProjectMcpServers", Shape::Bool),
    ("enableArtifact", Shape::Bool),
    ("enabledMcpjsonServers", Shape::Strings),
    (
        "enabledPlugins",
        Shape::Record(&Shape::AnyOf(&[Shape::Strings, Shape::Bool])),
    ),
    ("enableWorkflows", Shape::Bool),
    ("enforceAvailableModels", Shape::Bool),
    // Claude Code makes each value a string (seen: `{"A": 1}` left the file read).
    ("env", Shape::Record(&Shape::Any)),
    (
        "extraKnownMarketplaces",
        Shape::Record(&Shape::Object(&[
            ("source", Shape::Required(&MARKETPLACE)),
            ("installLocation", Shape::String),
            ("autoUpdate", Shape::Bool),
        ])),
    ),
    ("fallbackModel", Shape::Strings),
    ("fastMode", Shape::Bool),
    ("fastModePerSessionOptIn", Shape::Bool),
    (
        "feedbackSurveyRate",
        Shape::Within {
            min: 0.0,
            min_in: true,
            max: 1.0,
        },
    ),
    ("fileCheckpointingEnabled", Shape::Bool),
    ("fileSuggestion", COMMAND),
    (
        "forceLoginOrgUUID",
        Shape::AnyOf(&[Shape::String, Shape::Strings]),
    ),
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
    ("modelOverrides", Shape::Record(&Shape::String)),
    ("otelHeadersHelper", Shape::String),
    ("outputStyle", Shape::String),
    (
        "parentSettingsBehavior",
        Shape::Enum(&["first-wins", "merge"]),
    ),
    ("permissions", PERMISSIONS),
    ("plansDirectory", Shape::String),
    (
        "pluginConfigs",
        Shape::Record(&Shape::Object(&[
            ("mcpServers", Shape::Record(&Shape::Record(&OPTION))),
            ("options", Shape::Record(&OPTION)),
        ])),
    ),
    ("pluginSuggestionMarketplaces", Shape::Strings),
    ("pluginTrustMessage", Shape::String),
    (
        "policyHelper",
        Shape::Object(&[
            ("path", Shape::Required(&Shape::String)),
            (
                "refreshIntervalMs",
                Shape::AnyOf(&[
                    Shape::Int { min: 0, max: 0 },
                    Shape::Int {
                        min: 60_000,
                        max: u64::MAX,
                    },
                ]),
            ),
            (
                "timeoutMs",
                Shape::Int {
                    min: 1000,
                    max: u64::MAX,
                },
            ),
        ]),
    ),
    ("precomputeCompactionEnabled", Shape::Bool),
    ("prefersReducedMotion", Shape::Bool),
    ("promptSuggestionEnabled", Shape::Bool),
    ("proxyAuthHelper", Shape::String),
    ("prUrlTemplate", Shape::String),
    (
        "quietHours",
        Shape::Object(&[
            ("enabled", Shape::Bool),
            ("end", Shape::Text(clock_time, "a time of day, `HH:MM`")),
            ("start", Shape::Text(clock_time, "a time of day, `HH:MM`")),
        ]),
    ),
    (
        "remote",
        Shape::Object(&[("defaultEnvironmentId", Shape::String)]),
    ),
    ("remoteControlAtStartup", Shape::Bool),
    ("requiredMaximumVersion", Shape::String),
    ("requiredMinimumVersion", Shape::String),
    ("respectGitignore", Shape::Bool),
    ("respondToBashCommands", Shape::Bool),
    ("sandbox", SANDBOX),
    ("showClearContextOnPlanAccept", Shape::Bool),
    ("showMessageTimestamps", Shape::Bool),
    ("showThinkingSummaries", Shape::Bool),
    ("showTurnDuration", Shape::Bool),
    (
        "skillListingBudgetFraction",
        Shape::Within {
            min: 0.0,
            min_in: false,
            max: 1.0,
        },
    ),
    ("skillListingMaxDescChars", POSITIVE),
    (
        "skillOverrides",
        Shape::Record(&Shape::Enum(&[
            "on",
            "name-only",
            "user-invocable-only",
            "off",
        ])),
    ),
    ("skipAutoPermissionPrompt", Shape::Bool),
    ("skipDangerousModePermissionPrompt", Shape::Bool),
    ("skipWebFetchPreflight", Shape::Bool),
    ("skipWorkflowUsageWarning", Shape::Bool),
    ("spinnerTipsEnabled", Shape::Bool),
    (
        "spinnerTipsOverride",
        Shape::Object(&[
            ("excludeDefault", Shape::Bool),
            ("tips", Shape::Required(&Shape::Strings)),
        ]),
    ),
    (
        "spinnerVerbs",
        Shape::Object(&[
            (
                "mode",
                Shape::Required(&Shape::Enum(&["append", "replace"])),
            ),
            ("verbs", Shape::Required(&Shape::Strings)),
        ]),
    ),
    (
        "sshConfigs",
        Shape::ArrayOf(&Shape::Object(&[
            ("id", Shape::Required(&Shape::String)),
            ("name", Shape::Required(&Shape::String)),
            ("sshHost", Shape::Required(&Shape::String)),
            ("sshIdentityFile", Shape::String),
            ("sshPort", Shape::Integer),
            ("startDirectory", Shape::String),
        ])),
    ),
    (
        "statusLine",
        Shape::Object(&[
            ("type", Shape::Required(&Shape::Enum(&["command"]))),
            ("command", Shape::Required(&Shape::String)),
            ("hideVimModeIndicator", Shape::Bool),
            ("padding", Shape::Number),
        ]),
    ),
    ("strictKnownMarketplaces", Shape::ArrayOf(&MARKETPLACE)),
    ("subagentStatusLine", COMMAND),
    ("switchModelsOnFlag", Shape::Bool),
    ("syntaxHighlightingDisabled", Shape::Bool),
    ("terminalProgressBarEnabled", Shape::Bool),
    ("terminalTitleFromRename", Shape::Bool),
    ("todoFeatureEnabled", Shape::Bool),
    (
        "totalTokensReminder",
        Shape::Enum(&["off", "infinite", "fixed", "countdown", "padded-countdown"]),
    ),
    ("totalTokensReminderBudget", POSITIVE),
    ("tui", Shape::Enum(&["default", "fullscreen"])),
    ("useAutoModeDuringPlan", Shape::Bool),
    ("verbose", Shape::Bool),
    (
        "voice",
        Shape::Object(&[
            ("autoSubmit", Shape::Bool),
            ("enabled", Shape::Bool),
            ("mode", Shape::Enum(&["hold", "tap"])),
        ]),
    ),
    ("voiceEnabled", Shape::Bool),
    ("wheelScrollAccelerationEnabled", Shape::Bool),
    ("workflowKeywordTriggerEnabled", Shape::Bool),
    (
        "worktree",
        Shape::Object(&[
            ("baseRef", Shape::Enum(&["fresh", "head"])),
            ("sparsePaths", Shape::Strings),
            ("symlinkDirectories", Shape::Strings),
        ]),
    ),
    ("wslInheritsWindowsSettings", Shape::Bool),
];

/// The hook events Claude Code 2.1.197 knows; it drops any other under `hooks` before it
/// checks the file.
const HOOK_EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "PermissionRequest",
    "PermissionDenied",
    "Setup",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "MessageDisplay",
];

/// The hook types, each with the string fields it requires.
const HOOK_TYPES: &[(&str, &[&str])] = &[
    ("command", &["command"]),
    ("prompt", &["prompt"]),
    ("agent", &["prompt"]),
    ("http", &["url"]),
    ("mcp_tool", &["server", "tool"]),
];

const NON_EMPTY_STRING: Shape = Shape::Text(|s| !s.is_empty(), "a string that is not empty");

/// The optional fields every hook type has (`timeout` is checked apart), and those of
/// each type, with the shape its schema (2.1.197's `fFu`) requires when they are given:
/// a value of another shape (`"async": "no"`, `"shell": "zsh"`: seen with 2.1.197, none
/// of the file's hooks ran) fails the schema, and Claude Code drops the whole file.
const HOOK_FIELDS: &[(&str, Shape)] = &[
    ("if", Shape::String),
    ("statusMessage", Shape::String),
    ("once", Shape::Bool),
];

const HOOK_TYPE_FIELDS: &[(&str, &[(&str, Shape)])] = &[
    (
        "command",
        &[
            ("args", Shape::Strings),
            ("shell", Shape::Enum(&["bash", "powershell"])),
            ("async", Shape::Bool),
            ("asyncRewake", Shape::Bool),
            ("rewakeMessage", NON_EMPTY_STRING),
            ("rewakeSummary", NON_EMPTY_STRING),
        ],
    ),
    (
        "prompt",
        &[("model", Shape::String), ("continueOnBlock", Shape::Bool)],
    ),
    ("agent", &[("model", Shape::String)]),
    (
        "http",
        &[
            ("headers", Shape::Record(&Shape::String)),
            ("allowedEnvVars", Shape::Strings),
        ],
    ),
    ("mcp_tool", &[("input", Shape::Record(&Shape::Any))]),
];

/// The first key whose value does not have the shape Claude Code requires, so that it
/// drops the whole file, hooks included, as `` `path` must be SHAPE ``; `None` when
/// every key it checks strictly is well formed.
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

/// A key as it stands in a path: cleaned of characters a message must not carry.
fn part(key: &str) -> std::borrow::Cow<'_, str> {
    crate::text::clean(key)
}

fn check(path: &str, value: &Value, shape: Shape) -> Option<String> {
    let bad = || Some(format!("`{path}` must be {}", shape.describe()));
    match shape {
        Shape::Any => None,
        Shape::String if !value.is_string() => bad(),
        Shape::Text(ok, _) if !value.as_str().is_some_and(ok) => bad(),
        Shape::Bool if !value.is_boolean() => bad(),
        Shape::Number if !value.is_number() => bad(),
        Shape::Within { min, min_in, max } => {
            let ok = value
                .as_f64()
                .is_some_and(|n| (n > min || (min_in && n == min)) && n <= max);
            if ok { None } else { bad() }
        }
        Shape::Integer if !value.as_f64().is_some_and(|n| n.fract() == 0.0) => bad(),
        Shape::Int { min, max } => {
            // A JSON number with a point (`5.0`) is whole to Claude Code too.
            let ok = value.as_f64().is_some_and(|n| {
                n.fract() == 0.0 && n >= min as f64 && (max == u64::MAX || n <= max as f64)
            });
            if ok { None } else { bad() }
        }
        Shape::Strings => match value {
            Value::Array(a) if a.iter().all(Value::is_string) => None,
            _ => bad(),
        },
        Shape::Rules if !value.is_array() => bad(),
        Shape::ArrayOf(item) => {
            let Value::Array(items) = value else {
                return bad();
            };
            (items.iter().enumerate()).find_map(|(i, v)| check(&format!("{path}[{i}]"), v, *item))
        }
        Shape::Object(fields) => {
            let Value::Object(o) = value else {
                return bad();
            };
            fields.iter().find_map(|(k, s)| match (o.get(*k), s) {
                (None, Shape::Required(_)) => {
                    Some(format!("`{path}.{k}` must be {}", s.describe()))
                }
                (None, _) => None,
                (Some(v), s) => check(&format!("{path}.{k}"), v, *s),
            })
        }
        Shape::Record(inner) => {
            let Value::Object(o) = value else {
                return bad();
            };
            o.iter()
                .find_map(|(k, v)| check(&format!("{path}.{}", part(k)), v, *inner))
        }
        Shape::AnyOf(shapes) if shapes.iter().all(|s| check(path, value, *s).is_some()) => bad(),
        Shape::Required(inner) => check(path, value, *inner),
        Shape::Enum(values) if !value.as_str().is_some_and(|v| values.contains(&v)) => bad(),
        Shape::Hooks => {
            // Claude Code drops `hooks` itself when it is not an object, and an event it
            // does not know or whose value is not an array, and reads the rest (see
            // [`dropped_hooks`]).
            let Value::Object(events) = value else {
                return None;
            };
            events
                .iter()
                .filter(|(event, groups)| {
                    HOOK_EVENTS.contains(&event.as_str()) && groups.is_array()
                })
                .find_map(|(event, groups)| check_groups(&format!("hooks.{event}"), groups))
        }
        _ => None,
    }
}

fn check_groups(path: &str, groups: &Value) -> Option<String> {
    let Value::Array(groups) = groups else {
        return None;
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
            let own = HOOK_TYPE_FIELDS
                .iter()
                .find(|(t, _)| Some(*t) == kind)
                .map_or(&[][..], |(_, fields)| fields);
            if let Some(problem) = HOOK_FIELDS.iter().chain(own).find_map(|(field, shape)| {
                h.get(*field)
                    .and_then(|v| check(&format!("{at}.{field}"), v, *shape))
            }) {
                return Some(problem);
            }
        }
    }
    None
}

/// Hooks Claude Code drops from a settings file before it checks the file, keeping the
/// rest of the file (so [`invalid_key`] leaves them be): see [`dropped_hooks`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dropped {
    /// `hooks` is not an object: every hook in the file is dropped.
    Hooks,
    /// `hooks.<event>` (the event's name, cleaned) is not an array: its hooks are dropped.
    Event(String),
}

impl Dropped {
    /// The key, as a path: `hooks` or `hooks.PreToolUse`.
    pub fn key(&self) -> String {
        match self {
            Dropped::Hooks => "hooks".to_string(),
            Dropped::Event(event) => format!("hooks.{event}"),
        }
    }

    /// The shape Claude Code reads there.
    pub fn shape(&self) -> &'static str {
        match self {
            Dropped::Hooks => "an object of hook events",
            Dropped::Event(_) => "an array of hook groups",
        }
    }

    /// A value of that shape, as JSON, to show.
    pub fn example(&self) -> &'static str {
        match self {
            Dropped::Hooks => r#"{"PreToolUse": [...]}"#,
            Dropped::Event(_) => r#"[{"matcher": "...", "hooks": [...]}]"#,
        }
    }
}

/// What Claude Code drops of a settings file's hooks for `event` (2.1.197's pre-filter):
/// `hooks` itself when it is not an object, and `hooks.<event>` when it is not an array.
/// `None` when the hooks for `event` are of the shape it reads (or there are none).
pub fn dropped_hooks(settings: &Value, event: &str) -> Option<Dropped> {
    match settings.get("hooks")? {
        Value::Object(events) => match events.get(event) {
            Some(groups) if !groups.is_array() => Some(Dropped::Event(part(event).into_owned())),
            _ => None,
        },
        _ => Some(Dropped::Hooks),
    }
}

/// The hook event Claude Code runs when it would ask the user about a call, after every
/// `PreToolUse` hook; an `allow` decision's `updatedInput` replaces the call's input.
pub const PERMISSION_EVENT: &str = "PermissionRequest";

/// The plugins the settings files turn on, sorted: each `enabledPlugins` key
/// (`name@marketplace`) whose value in the last of `layers` (lowest precedence first)
/// that names it is `true` or a list of version constraints. Claude Code 2.1.197 runs
/// the hooks of each such plugin it has installed, after the settings files' own.
pub fn enabled_plugins(layers: &[&Value]) -> Vec<String> {
    let mut last: std::collections::BTreeMap<&str, bool> = std::collections::BTreeMap::new();
    for layer in layers {
        let Some(plugins) = layer.get("enabledPlugins").and_then(Value::as_object) else {
            continue;
        };
        for (id, on) in plugins {
            last.insert(id, matches!(on, Value::Bool(true) | Value::Array(_)));
        }
    }
    last.into_iter()
        .filter(|(_, on)| *on)
        .map(|(id, _)| id.to_string())
        .collect()
}

/// Where one installed plugin's hooks are, besides its `hooks/hooks.json`: the `hooks`
/// of its manifest (`.claude-plugin/plugin.json`), a path relative to the plugin's
/// folder, the hooks themselves (an object of events, as under a settings file's
/// `hooks`), or a list of either. Each is given as what
/// [`super::other_hooks_in`] reads: a path, or an object with the hooks under `hooks`.
pub fn manifest_hooks(manifest: &Value) -> Vec<Result<String, Value>> {
    let one = |v: &Value| match v {
        Value::String(path) => Some(Ok(path.clone())),
        Value::Object(_) => Some(Err(serde_json::json!({ "hooks": v }))),
        _ => None,
    };
    match manifest.get("hooks") {
        Some(Value::Array(list)) => list.iter().filter_map(one).collect(),
        Some(v) => one(v).into_iter().collect(),
        None => Vec::new(),
    }
}

/// Where a plugin's Markdown files of one kind are, besides its standard folder (see
/// [`FRONT_MATTER_FOLDERS`]): what its manifest gives under `field` (`agents`, `skills`
/// or `commands`), a path relative to the plugin's folder (a file, or a folder) or a
/// list of them; for `commands`, also an object of commands, each with a `source` path
/// or its `content` written in the manifest. Claude Code 2.1.197 loads those besides the
/// standard folder's (read from its binary: `agentsPaths`, `skillsPaths`,
/// `commandsPaths`, `commandsMetadata`).
pub fn manifest_markdown(manifest: &Value, field: &str) -> Vec<Markdown> {
    let path = |v: &Value| v.as_str().map(|p| Markdown::Path(p.to_string()));
    match manifest.get(field) {
        Some(Value::Array(list)) => list.iter().filter_map(path).collect(),
        Some(Value::Object(commands)) if field == "commands" => commands
            .iter()
            .filter_map(|(name, c)| match (c.get("source"), c.get("content")) {
                (Some(source), _) => path(source),
                (None, Some(Value::String(text))) => {
                    Some(Markdown::Written(name.clone(), text.clone()))
                }
                _ => None,
            })
            .collect(),
        Some(v) => path(v).into_iter().collect(),
        None => Vec::new(),
    }
}

/// One entry of [`manifest_markdown`].
#[derive(Debug, PartialEq)]
pub enum Markdown {
    /// A file or a folder, relative to the plugin's folder.
    Path(String),
    /// A command written in the manifest: its name and its text.
    Written(String, String),
}

/// The folders under a `.claude` folder (and a plugin's) whose Markdown files can declare
/// hooks in their front matter, each with what Claude Code makes of a file there: an
/// agent (`agents/**/*.md`), a skill (`skills/NAME/SKILL.md`), a command
/// (`commands/**/*.md`, loaded as a skill).
pub const FRONT_MATTER_FOLDERS: [(&str, &str); 3] = [
    ("agents", "agent"),
    ("skills", "skill"),
    ("commands", "command"),
];

/// The first shell command a skill's or a command's text runs inline when it is used, if
/// any: a `` !`cmd` `` after the line's start or white space, or a fenced block opened
/// with ` ```! `. Claude Code 2.1.197 runs each (`/```!\s*\n?([\s\S]*?)\n?```/g`,
/// `/(?<=^|\s)!`([^`]+)`/gm`) through its shell tool's `call` after a permission check
/// alone, with no `PreToolUse` hook, and puts the output in the prompt. Seen with 2.1.197:
/// a `Skill` call of a skill whose body held `` !`touch gate-marker` `` created the
/// marker, and the only `PreToolUse` payload was the `Skill` call's. `None` when it has
/// neither.
pub fn inline_shell(text: &str) -> Option<String> {
    static INLINE: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?m)(?:^|\s)!`([^`]+)`|```!\s*\n?([\s\S]*?)\n?```").ok()
    });
    let Some(inline) = INLINE.as_ref() else {
        // Cannot happen (the pattern is fixed); say there may be one.
        return Some(String::new());
    };
    inline.captures_iter(text).find_map(|c| {
        let command = c.get(1).or_else(|| c.get(2))?.as_str().trim();
        (!command.is_empty()).then(|| command.to_string())
    })
}

/// The hook events named under the top-level `hooks` key of a Markdown file's front
/// matter, in [`HOOK_EVENTS`]' order; `None` when it has no front matter or no such key.
/// Claude Code 2.1.197 takes the front matter from a file that starts with `---` up to the
/// next `---` (`/^---\s*\n([\s\S]*?)---\s*\n?/`), reads it as YAML, and registers the
/// hooks of an agent while it runs (a subagent, or the main agent under `--agent`) and a
/// skill's or a command's once it is used, for the rest of the session. Seen with
/// 2.1.197: such a `PreToolUse` hook on `Bash` answering `allow` with an `updatedInput`
/// of `touch gate-marker` made `echo harmless`, which the settings' pre-tool hook let
/// run, run as `touch gate-marker` (an agent's, a subagent's call; a skill's, after the
/// skill was used; under `--agent`). Without a YAML parser this reads the key's block as
/// text: the lines after it that are indented, blank or start with `-` (or, for front
/// matter written as one `{...}`, all of it); an empty list means it names no event this
/// knows, and so may name one a way this cannot read.
pub fn front_matter_hooks(text: &str) -> Option<Vec<&'static str>> {
    // `---`, then only white space up to the line's end.
    let (head, rest) = text.strip_prefix("---")?.split_once('\n')?;
    if !head.trim().is_empty() {
        return None;
    }
    let (matter, _) = rest.split_once("---")?;
    let is_hooks_key = |line: &str| {
        let key = line.trim_start_matches(['"', '\'']);
        key.get(..5)
            .is_some_and(|k| k.eq_ignore_ascii_case("hooks"))
            && key.get(5..).is_some_and(|r| {
                r.trim_start_matches(['"', '\''])
                    .trim_start()
                    .starts_with(':')
            })
    };
    let block: String = if matter.trim_start().starts_with('{') {
        if !matter.to_ascii_lowercase().contains("hooks") {
            return None;
        }
        matter.to_string()
    } else {
        // The top-level keys may all be indented alike: YAML allows it, and Claude Code
        // reads front matter that does not parse again with leading tabs as two spaces
        // each (read from its binary). Read the lines from that indentation.
        let indent = matter
            .lines()
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .and_then(|l| l.strip_suffix(l.trim_start_matches([' ', '\t'])))
            .unwrap_or_default();
        let mut lines = matter
            .lines()
            .map(|l| l.strip_prefix(indent).unwrap_or(l))
            .skip_while(|l| !is_hooks_key(l));
        let first = lines.next()?;
        let mut block = first.to_string();
        for line in lines.take_while(|l| {
            l.trim().is_empty() || l.starts_with([' ', '\t', '-']) || l.starts_with('#')
        }) {
            block.push('\n');
            block.push_str(line);
        }
        block
    };
    let words: std::collections::BTreeSet<&str> = block
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    Some(
        HOOK_EVENTS
            .iter()
            .copied()
            .filter(|e| words.contains(e))
            .collect(),
    )
}

/// The types of Claude Code's built-in subagents that it sends no memory file (no
/// `CLAUDE.md`, rules file or `CLAUDE.local.md`): 2.1.197 gives its Explore and Plan agents
/// `omitClaudeMd` (seen: an Explore subagent's requests held no `CLAUDE.md`, a
/// general-purpose one's did). An agent of your own that takes one of these names is
/// sent them; it is counted as not, which blocks more, never less.
pub const NO_MEMORY_AGENTS: [&str; 2] = ["Explore", "Plan"];

/// Whether Claude Code sends a subagent of type `kind` the memory files.
pub fn agent_sees_memory(kind: &str) -> bool {
    !NO_MEMORY_AGENTS.contains(&kind)
}

/// A settings or global config file's JSON as Claude Code (2.1.197) reads it: after a
/// byte order mark, which it takes off first (seen: a project `settings.json` that starts
/// with one had its `claudeMdExcludes` applied). `None` when it is not JSON.
pub fn config_json(bytes: &[u8]) -> Option<Value> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    serde_json::from_slice(bytes).ok()
}

/// The variable that, set to a value Claude Code (2.1.197) counts as true (see
/// [`truthy`]), makes it send no memory file at all (seen: with it, from the environment
/// or a settings file's `env`, the project's `CLAUDE.md` was in no request).
pub const NO_MEMORY_VAR: &str = "CLAUDE_CODE_DISABLE_CLAUDE_MDS";

/// Whether a Claude Code command line (one process's arguments) leaves some of its
/// setting sources out with `--setting-sources` (`user`, `project`, `local`, comma
/// separated; the last one given counts): Claude Code 2.1.197 then reads no memory file
/// of a source left out (seen: with `--setting-sources project`, `CLAUDE.local.md` was in
/// no request). `None` when the flag is not given.
pub fn setting_sources_limited(args: &[String]) -> Option<bool> {
    const FLAG: &str = "--setting-sources";
    let mut value = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == FLAG {
            value = Some(args.next().map_or("", String::as_str));
        } else if let Some(v) = arg.strip_prefix(FLAG).and_then(|r| r.strip_prefix('=')) {
            value = Some(v);
        }
    }
    let sources: Vec<&str> = value?.split(',').map(str::trim).collect();
    Some(
        !["user", "project", "local"]
            .iter()
            .all(|s| sources.contains(s)),
    )
}

/// Settings a Claude Code command line gives beside its settings files: `--settings`
/// (a file, or its JSON when the value starts with `{` and ends with `}`) and
/// `--managed-settings` (JSON). Claude Code 2.1.197 merges them over the files, so their
/// `claudeMdExcludes` skip memory files too (seen: with
/// `--settings={"claudeMdExcludes":["**/CLAUDE.md"]}`, the project's `CLAUDE.md` was in
/// no request). Every value given is listed (Claude Code takes the last of each, and stops
/// at `--`): more patterns skip more files, never fewer.
pub fn flag_settings(args: &[String]) -> Vec<FlagSettings<'_>> {
    let mut out = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        for flag in ["--settings", "--managed-settings"] {
            let value = if arg == flag {
                args.next().map(String::as_str)
            } else {
                arg.strip_prefix(flag).and_then(|r| r.strip_prefix('='))
            };
            let Some(value) = value else { continue };
            let trimmed = value.trim();
            out.push(
                if flag == "--managed-settings"
                    || (trimmed.starts_with('{') && trimmed.ends_with('}'))
                {
                    FlagSettings::Json(trimmed)
                } else {
                    FlagSettings::File(value)
                },
            );
            break;
        }
    }
    out
}

/// Settings given on Claude Code's command line (see [`flag_settings`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagSettings<'a> {
    /// The settings' JSON itself.
    Json(&'a str),
    /// A settings file, relative to Claude Code's directory unless absolute.
    File(&'a str),
}

/// Whether a `claudeMdExcludes` pattern (a glob Claude Code 2.1.197 matches, with
/// picomatch and dotfiles included, against the path of each `CLAUDE.md`, rules file and
/// `CLAUDE.local.md` it would read, which it then skips: seen, the file's rule was in no
/// request) may match `path`. Read loosely, so that it says yes whenever picomatch might:
/// each wildcard, class (`[...]`), brace (`{...}`) or group (`(...)`) stands for any text,
/// `/` included, letters match in either case, and a pattern that starts with `!` (or
/// that this cannot read) matches every path.
pub fn md_exclude_may_match(pattern: &str, path: &str) -> bool {
    let pattern = pattern.replace('\\', "/");
    if pattern.starts_with('!') {
        return true;
    }
    let mut re = String::from("(?is)^");
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        let close = match c {
            '[' => Some(']'),
            '{' => Some('}'),
            '(' => Some(')'),
            _ => None,
        };
        if let Some(close) = close {
            // Up to the closing character (a class, brace or group as one).
            for d in chars.by_ref() {
                if d == close {
                    break;
                }
            }
            re.push_str(".*");
        } else if "*?!+@".contains(c) {
            re.push_str(".*");
        } else {
            re.push_str(&regex::escape(&c.to_string()));
        }
    }
    re.push('$');
    regex::Regex::new(&re).map_or(true, |re| re.is_match(&path.replace('\\', "/")))
}

/// Whether Claude Code (2.1.197) reads no memory file at `path` for where it lies: a
/// network path, `//host/...` (but for `//wsl$/` and `//wsl.localhost/`), or under
/// `/net/<host>` (`..` taken out as written), the automounter's folder (seen: a session
/// begun in `/net/<host>/<project>` was sent no `CLAUDE.md`). Its loader checks the path
/// it builds and the one its links resolve to.
pub fn memory_path_skipped(path: &str) -> bool {
    let two_slashes = path.starts_with("//")
        || path.starts_with("\\\\")
        || path.starts_with("/\\")
        || path.starts_with("\\/");
    let wsl = ["wsl$", "wsl.localhost"].iter().any(|w| {
        path.get(2..)
            .and_then(|rest| rest.get(..w.len()))
            .is_some_and(|h| h.eq_ignore_ascii_case(w))
            && path
                .get(2 + w.len()..)
                .is_some_and(|rest| rest.starts_with(['/', '\\']))
    });
    if two_slashes && !wsl {
        return true;
    }
    if !path.starts_with('/') {
        return false;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => {
                parts.push(part);
                if parts.len() == 2 && parts.first().is_some_and(|p| p.eq_ignore_ascii_case("net"))
                {
                    return true;
                }
            }
        }
    }
    false
}

/// The feature flag that, on, makes Claude Code (2.1.197) send none of the project's
/// memory files (`CLAUDE.md`, `.claude/CLAUDE.md`, rules, `CLAUDE.local.md`, and the
/// files they import), only the managed and the user's. Its value comes from Anthropic's
/// servers, and is kept in the global config file's `cachedGrowthBookFeatures` (seen:
/// with it true there, the project's `CLAUDE.md` was in no request).
pub const PROJECT_MEMORY_OFF_FLAG: &str = "tengu_paper_halyard";

/// Whether a Claude Code global config file (`~/.claude.json`) holds
/// [`PROJECT_MEMORY_OFF_FLAG`] on, as JavaScript reads a value as true.
pub fn project_memory_off(config: &Value) -> bool {
    let flag = config
        .get("cachedGrowthBookFeatures")
        .and_then(|f| f.get(PROJECT_MEMORY_OFF_FLAG));
    match flag {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_none_or(|n| n != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

/// The most bytes a memory file (a `CLAUDE.md`, a rules file, a file one imports) may
/// hold for Claude Code (2.1.197) to send it: its loader skips a larger one whole, without
/// a word (seen: a `CLAUDE.md` of 4.8 MB was in no request).
pub const MEMORY_MAX_BYTES: usize = 4 * 1024 * 1024;

/// The parts of a memory file's text that Claude Code 2.1.197 sends the model, each one
/// string; none for a text over [`MEMORY_MAX_BYTES`], nor for one whose front matter
/// says `paths` (a rules file with `paths` is sent only once the agent touches a file
/// they cover: seen absent from the first request). Its loader takes out the front
/// matter first: from a first line `---` to the
/// next `---` and the white space after it (`/^---\s*\n([\s\S]*?)---\s*\n?/`, JavaScript's
/// `\s`), whether or not it reads as YAML (seen: a rule written as a front matter's
/// `description` was in no request, the rest of the file was). It then takes out the
/// HTML comments (`<!-- ... -->`) of each Markdown block
/// that starts with one (seen: a rule written in such a comment was in no request, the
/// rest of the file was). It leaves a comment inside a paragraph or a code block, but
/// telling those apart takes a Markdown lexer, so this takes out every `<!--` up to the
/// first `-->` after it, wherever it stands, and splits the text there: what is left out
/// is never counted as sent, and the text on either side of a comment is not read as
/// one. A `<!--` with no `-->` after it stays, as in Claude Code.
pub fn memory_sent(text: &str) -> Vec<&str> {
    static FRONT_MATTER: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(
        || {
            // JavaScript's `\s`, which takes in the BOM and leaves out U+0085.
            const S: &str = r"[\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";
            regex::Regex::new(&format!(r"\A---{S}*\n[\s\S]*?---{S}*\n?")).ok()
        },
    );
    if text.len() > MEMORY_MAX_BYTES {
        return Vec::new();
    }
    let Some(front_matter) = FRONT_MATTER.as_ref() else {
        // Cannot happen (the pattern is fixed); count nothing as sent.
        return Vec::new();
    };
    let text = match front_matter.find(text) {
        // A rules file whose front matter gives `paths` is sent only once the agent
        // touches a file they cover; without a YAML reader, any front matter that says
        // `paths` is taken for such (a `CLAUDE.md` with it is sent, and blocks more).
        Some(m) if m.as_str().contains("paths") => return Vec::new(),
        Some(m) => text.get(m.end()..).unwrap_or_default(),
        None => text,
    };
    let opens = memchr::memmem::find_iter(text.as_bytes(), "<!--");
    let mut closes = memchr::memmem::find_iter(text.as_bytes(), "-->").peekable();
    let mut parts = Vec::new();
    // The end of the last comment taken out: the next part starts there.
    let mut from = 0;
    for open in opens {
        // Claude Code's `/<!--[\s\S]*?-->/`: the first `-->` that starts after the `<!--`.
        while closes.next_if(|&close| close < open + 4).is_some() {}
        let Some(&close) = closes.peek() else {
            break;
        };
        if open >= from {
            parts.extend(text.get(from..open));
        }
        from = from.max(close + 3);
    }
    parts.extend(text.get(from..));
    parts.retain(|p| !p.trim().is_empty());
    parts
}

/// The extensions (lower case, without the dot) of the files Claude Code (2.1.197) reads
/// as memory files or their imports (its `mpp`): a file with another extension it skips
/// (`Skipping non-text file in @include`), one with none it reads. Its list also has `R`,
/// which never matches, as it compares the extension in lower case.
pub const MEMORY_EXTENSIONS: [&str; 106] = [
    "md",
    "txt",
    "text",
    "json",
    "yaml",
    "yml",
    "toml",
    "xml",
    "csv",
    "html",
    "htm",
    "css",
    "scss",
    "sass",
    "less",
    "js",
    "ts",
    "tsx",
    "jsx",
    "mjs",
    "cjs",
    "mts",
    "cts",
    "py",
    "pyi",
    "pyw",
    "rb",
    "erb",
    "rake",
    "go",
    "rs",
    "java",
    "kt",
    "kts",
    "scala",
    "c",
    "cpp",
    "cc",
    "cxx",
    "h",
    "hpp",
    "hxx",
    "cs",
    "swift",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "bat",
    "cmd",
    "env",
    "ini",
    "cfg",
    "conf",
    "config",
    "properties",
    "sql",
    "graphql",
    "gql",
    "proto",
    "vue",
    "svelte",
    "astro",
    "ejs",
    "hbs",
    "pug",
    "jade",
    "php",
    "pl",
    "pm",
    "lua",
    "r",
    "dart",
    "ex",
    "exs",
    "erl",
    "hrl",
    "clj",
    "cljs",
    "cljc",
    "edn",
    "hs",
    "lhs",
    "elm",
    "ml",
    "mli",
    "f",
    "f90",
    "f95",
    "for",
    "cmake",
    "make",
    "makefile",
    "gradle",
    "sbt",
    "rst",
    "adoc",
    "asciidoc",
    "org",
    "tex",
    "latex",
    "lock",
    "log",
    "diff",
    "patch",
];

/// Whether Claude Code (2.1.197) skips a memory file or import at `path` for its
/// extension (Node's `path.extname`, in lower case, not in [`MEMORY_EXTENSIONS`]): a
/// name with a dot past its first character and an extension not on the list, or none
/// after the dot (`notes.`).
pub fn memory_extension_skipped(path: &std::path::Path) -> bool {
    match path.extension() {
        None => false,
        Some(ext) => {
            let ext = ext.to_string_lossy().to_lowercase();
            !MEMORY_EXTENSIONS.contains(&ext.as_str())
        }
    }
}

/// Whether Claude Code (2.1.197) reads the file at `rel` in its config folder (`rel` is
/// the path inside it) as one of the user's memory files: its `CLAUDE.md`, a file whose
/// name ends in `.md` under `rules` (at any depth), or an auto memory index,
/// `projects/<project>/memory/MEMORY.md`. The files these import are not told (they may
/// be anywhere): they do not count as the user's.
pub fn user_memory_file(rel: &std::path::Path) -> bool {
    let parts: Vec<&std::ffi::OsStr> = rel.iter().collect();
    match parts.as_slice() {
        [name] => *name == "CLAUDE.md",
        [first, .., name] if *first == "rules" => name.to_string_lossy().ends_with(".md"),
        [projects, _, memory, name] => {
            *projects == "projects" && *memory == "memory" && *name == AUTO_MEMORY_FILE
        }
        _ => false,
    }
}

/// Whether Claude Code (2.1.197) reads the file at `rel` in its managed folder
/// ([`MANAGED_DIR`]; `rel` is the path inside it) as a managed memory file: its
/// `CLAUDE.md`, or a file whose name ends in `.md` under `.claude/rules` (at any depth).
/// The files these import are not told: they do not count as managed.
pub fn managed_memory_file(rel: &std::path::Path) -> bool {
    let parts: Vec<&std::ffi::OsStr> = rel.iter().collect();
    match parts.as_slice() {
        [name] => *name == "CLAUDE.md",
        [claude, rules, .., name] if *claude == ".claude" && *rules == "rules" => {
            name.to_string_lossy().ends_with(".md")
        }
        _ => false,
    }
}

/// Whether Claude Code's (2.1.197) variables, as `get` gives them, turn its auto memory
/// off, so that it reads no auto memory index (its `au`): `CLAUDE_CODE_DISABLE_AUTO_MEMORY`
/// or `CLAUDE_CODE_SIMPLE` on, or `CLAUDE_CODE_REMOTE` on without a memory folder of its
/// own; or `CLAUDE_COWORK_MEMORY_INDEX_CONTENT` set, which it sends (if not empty) in
/// place of the file. A `CLAUDE_CODE_DISABLE_AUTO_MEMORY` set off (which keeps it on
/// whatever the rest say) is not looked at: the index counts for less, never more.
pub fn auto_memory_off_in_env(get: impl Fn(&str) -> Option<String>) -> bool {
    let on = |var: &str| get(var).is_some_and(|v| truthy(&v));
    let set = |var: &str| get(var).is_some_and(|v| !v.is_empty());
    on("CLAUDE_CODE_DISABLE_AUTO_MEMORY")
        || on("CLAUDE_CODE_SIMPLE")
        || (on("CLAUDE_CODE_REMOTE")
            && !set("CLAUDE_CODE_REMOTE_MEMORY_DIR")
            && !set("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"))
        || get("CLAUDE_COWORK_MEMORY_INDEX_CONTENT").is_some()
}

/// Whether a settings file turns Claude Code's (2.1.197) auto memory off: it gives
/// `autoMemoryEnabled` a value JavaScript reads as false. Any one file that does counts,
/// whichever of them Claude Code would take.
pub fn auto_memory_off_in_settings(settings: &Value) -> bool {
    match settings.get("autoMemoryEnabled") {
        None => false,
        Some(Value::Null) => true,
        Some(Value::Bool(b)) => !b,
        Some(Value::Number(n)) => n.as_f64().is_none_or(|n| n == 0.0),
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => false,
    }
}

/// The name of Claude Code's auto memory index (its memory folder's `MEMORY.md`, or a
/// subagent's agent memory one), which it sends cut to [`AUTO_MEMORY_MAX_LINES`] lines
/// and [`AUTO_MEMORY_MAX_CHARS`] characters (its `iUt`).
pub const AUTO_MEMORY_FILE: &str = "MEMORY.md";

/// The most lines of an auto memory index Claude Code (2.1.197) sends: of a longer one,
/// the first that many of its trimmed text, then a warning.
pub const AUTO_MEMORY_MAX_LINES: usize = 200;

/// The most characters (UTF-16 code units) of an auto memory index Claude Code (2.1.197)
/// sends: a longer one is cut at its last line break within them, else at them.
pub const AUTO_MEMORY_MAX_CHARS: usize = 25_000;

/// The parts of an auto memory index's text ([`AUTO_MEMORY_FILE`]) that Claude Code
/// 2.1.197 sends: those of [`memory_sent`], cut where its `iUt` cuts the file, at most.
/// It cuts the trimmed text after [`AUTO_MEMORY_MAX_LINES`] lines, then at the last line
/// break within [`AUTO_MEMORY_MAX_CHARS`] UTF-16 code units; this cuts the untrimmed text
/// the same way in bytes, which is never later (a UTF-8 byte count is never below the
/// UTF-16 one, and untrimmed text has no fewer lines before a point).
pub fn auto_memory_sent(text: &str) -> Vec<&str> {
    let mut end = text.len();
    if let Some((at, _)) = text.match_indices('\n').nth(AUTO_MEMORY_MAX_LINES - 1) {
        end = at;
    }
    if end > AUTO_MEMORY_MAX_CHARS {
        // The char boundary at or before `at`.
        let floor = |at: usize| (0..=at).rev().find(|&i| text.is_char_boundary(i));
        let within = floor(AUTO_MEMORY_MAX_CHARS + 1).unwrap_or(0);
        end = match text.get(..within).and_then(|t| t.rfind('\n')) {
            Some(at) if at > 0 => at,
            _ => floor(AUTO_MEMORY_MAX_CHARS).unwrap_or(0),
        };
    }
    let base = text.as_ptr() as usize;
    memory_sent(text)
        .into_iter()
        .filter_map(|part| {
            let from = part.as_ptr() as usize - base;
            let to = (from + part.len()).min(end);
            text.get(from..to).filter(|p| !p.trim().is_empty())
        })
        .collect()
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

/// The first of [`HOOKS_OFF_VARS`] a settings file's `env` turns on, with its value as
/// written. Claude Code makes each value a string as JavaScript's `String` does (seen:
/// `1` and `true` turned every hook off as `"1"` and `"true"` do).
pub fn hooks_off_in_env(settings: &Value) -> Option<(&'static str, String)> {
    let env = settings.get("env")?;
    HOOKS_OFF_VARS.into_iter().find_map(|var| {
        let v = env.get(var)?;
        truthy(&js_string(v)).then(|| (var, as_written(v)))
    })
}

/// The [`SHELL_PREFIX_VAR`] a settings file's `env` sets, unless it is the empty string:
/// the value, and it as written. Claude Code copies a settings file's `env` into its own
/// environment, and runs every hook command through that prefix.
pub fn shell_prefix_in_env(settings: &Value) -> Option<(&Value, String)> {
    let v = settings.get("env")?.get(SHELL_PREFIX_VAR)?;
    (v.as_str() != Some("")).then(|| (v, as_written(v)))
}

/// The variable whose value (a JSON object) Claude Code (2.1.197) spreads into the body of
/// every request it sends the model, over its own keys.
pub const EXTRA_BODY_VAR: &str = "CLAUDE_CODE_EXTRA_BODY";

/// True when a [`EXTRA_BODY_VAR`] value asks the model's API to edit the context it is
/// sent: its `context_management` holds an edit other than clearing thinking (the only one
/// Claude Code asks for itself). Such an edit (`clear_tool_uses_...`) takes tool results
/// out of the request on the API's side, and Claude Code writes no trace of it: the API
/// says which it cleared in the stream's `message_delta`, whose `context_management`
/// 2.1.197 does not read (run against a mock: the assistant entry kept
/// `"context_management":null`), so the transcript keeps what the model was not sent.
/// So does one that gives `messages` or `system`, which then stand in place of what
/// Claude Code sends (and records). A value Claude Code drops (not JSON, not an object)
/// asks nothing; one that names one of these keys (or may, through a `\u` escape) but is
/// not JSON the gate can read counts as asking.
pub fn extra_body_edits_context(value: &str) -> bool {
    const REPLACED: [&str; 2] = ["messages", "system"];
    match serde_json::from_str::<Value>(value) {
        Ok(Value::Object(body)) if REPLACED.iter().any(|k| body.contains_key(*k)) => true,
        Ok(Value::Object(body)) => body.get("context_management").is_some_and(|cm| {
            let clears_thinking = |edit: &Value| {
                edit.get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t.starts_with("clear_thinking"))
            };
            match cm {
                Value::Null => false,
                Value::Object(cm) => {
                    cm.keys().any(|k| k != "edits")
                        || cm.get("edits").is_some_and(|edits| {
                            edits
                                .as_array()
                                .is_none_or(|edits| !edits.iter().all(clears_thinking))
                        })
                }
                _ => true,
            }
        }),
        Ok(_) => false,
        Err(_) => ["context_management", "messages", "system", "\\u"]
            .iter()
            .any(|k| value.contains(k)),
    }
}

/// The value a settings file's `env` gives `var`, as Claude Code makes it a string (see
/// [`js_string`]).
pub fn env_value(settings: &Value, var: &str) -> Option<String> {
    settings.get("env")?.get(var).map(js_string)
}

/// A settings value as a message shows it: a string as it is, another value as JSON.
fn as_written(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A JSON value as JavaScript's `String` writes it: a whole number without a point, an
/// array's items joined by `,` (`null` as nothing), an object as `[object Object]`.
fn js_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
            _ => n.to_string(),
        },
        Value::Array(items) => {
            let each: Vec<String> = (items.iter())
                .map(|v| {
                    if v.is_null() {
                        String::new()
                    } else {
                        js_string(v)
                    }
                })
                .collect();
            each.join(",")
        }
        Value::Object(_) => "[object Object]".into(),
    }
}

/// Where Claude Code (2.1.197) reads the managed (policy) settings an administrator
/// sets: `managed-settings.json` in this folder, then each `*.json` in its
/// `managed-settings.d`, in name order, each merged over the ones before.
pub const MANAGED_DIR: &str = if cfg!(target_os = "macos") {
    "/Library/Application Support/ClaudeCode"
} else {
    "/etc/claude-code"
};

/// The cache, in Claude Code's config folder, of the managed settings an organization's
/// account delivers. Claude Code (2.1.197) takes the first source of managed settings
/// that holds any: what a [`policy_helper`] computes, then this file (read at start-up
/// whenever it talks to Anthropic's own API with an API key, or a Team or Enterprise
/// login), then the managed settings files, which it then leaves unread. Seen with
/// 2.1.197: `{"allowManagedHooksOnly": true}` here, and the project's gate never ran.
pub const REMOTE_SETTINGS: &str = "remote-settings.json";

/// The file, of the managed settings' `layers`, that names a `policyHelper`: a program
/// Claude Code (2.1.197) runs as it starts, whose `managedSettings` then are its managed
/// settings, in place of every file (seen: a helper that printed `{"managedSettings":
/// {"allowManagedHooksOnly": true}}` kept the project's gate from running, and the tool
/// ran). `None` when none names one.
pub fn policy_helper<'a>(layers: &[(&'a str, &Value)]) -> Option<&'a str> {
    layers.iter().rev().find_map(|(file, v)| {
        v.get("policyHelper")
            .filter(|h| !h.is_null())
            .map(|_| *file)
    })
}

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

/// How long Claude Code 2.1.197 lets a command hook run, in milliseconds, given its
/// `timeout` (a positive number of seconds, as [`invalid_key`] checks): `timeout * 1000`,
/// or 600 s without one (`e.timeout?e.timeout*1000:pp`, `pp=600000` in 2.1.197's
/// bundle), handed to its runtime's `setTimeout`, which waits 1 ms for a
/// wait not from 1 to [`TIMER_MAX_MS`]; the hook is then cancelled and the tool runs.
/// Seen with 2.1.197: `2147483.647` let a hook answer; `2147483.648`, `1e300` and
/// `0.0005` had it cancelled after 1 ms, and the tool ran.
pub fn timeout_ms(timeout: Option<&Value>) -> f64 {
    let ms = timeout.and_then(Value::as_f64).unwrap_or(600.0) * 1000.0;
    if (1.0..=TIMER_MAX_MS).contains(&ms) {
        ms
    } else {
        1.0
    }
}

/// The keys of a command hook that keep Claude Code (2.1.197) from running it before
/// the call through `/bin/sh -c` and waiting for its answer, each as `` `KEY`: why ``
/// and the fix, in the order written below; empty for a hook it runs as doctor does.
/// From its bundle's command-hook runner and hook filter, and seen with 2.1.197 against
/// a mock (each ran the call the gate denies, where the same hook without the key
/// blocked it):
/// - `"async": true`: the hook is started in the background and counts as a success at
///   once, so the tool runs whatever it answers (`(e.async||e.asyncRewake&&V)&&!d`;
///   a PreToolUse hook is never forced to wait);
/// - `"asyncRewake": true`: the same in an interactive session (or one fed streaming
///   input), where its exit 2 only wakes the model once the call has run; `claude -p`
///   waits for it (seen: blocked);
/// - `"shell": "powershell"`: the command runs in PowerShell, where `"$CLAUDE_PROJECT_DIR"`
///   is no environment variable; with no `pwsh` or `powershell` on `PATH` the hook
///   fails to start, and the tool runs (seen);
/// - `"args"` (any list, `[]` too): `command` is started as one program with those
///   arguments and no shell, so `|| exit 2` is no shell's and a program that cannot be
///   started runs the tool (seen with `[]`: the whole command line, read as a program's
///   name, was not found);
/// - `"if"` (a non-empty string): the hook runs only for calls that match that
///   permission rule (`Bash(git *)`), and every other call its matcher selects runs
///   unjudged (seen: `Bash(git *)` let `touch gate-marker` run).
pub fn not_run_as_written(handler: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut found = Vec::new();
    if handler.get("async") == Some(&Value::Bool(true)) {
        found.push(
            "has `\"async\": true`, so Claude Code starts it in the background and runs the tool without waiting for its answer (a deny stops nothing): remove `\"async\"`"
                .to_string(),
        );
    }
    if handler.get("asyncRewake") == Some(&Value::Bool(true)) {
        found.push(
            "has `\"asyncRewake\": true`, so an interactive Claude Code session starts it in the background and runs the tool without waiting for its answer (a deny only wakes the model once the call has run): remove `\"asyncRewake\"`"
                .to_string(),
        );
    }
    if handler.get("shell").and_then(Value::as_str) == Some("powershell") {
        found.push(
            "has `\"shell\": \"powershell\"`, so Claude Code runs its command in PowerShell, not in `/bin/sh` as it is written for (and as doctor ran it): with no PowerShell installed the hook fails to start and the tool runs, and in PowerShell `\"$CLAUDE_PROJECT_DIR\"` is no environment variable: remove `\"shell\"`"
                .to_string(),
        );
    }
    if handler.contains_key("args") {
        found.push(
            "has `\"args\"`, so Claude Code starts its `command` as one program with those arguments, with no shell (not as doctor ran it): `|| exit 2` is no shell's there, and a program that cannot be started lets the tool run: remove `\"args\"` and write the whole command line in `command`"
                .to_string(),
        );
    }
    if let Some(rule) = handler
        .get("if")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
    {
        found.push(format!(
            "has `\"if\": \"{}\"`, so Claude Code runs it only for calls that match that permission rule, and every other call its matcher selects runs unjudged: remove `\"if\"`",
            crate::text::clean_brief(rule)
        ));
    }
    found
}

/// The variable that makes Claude Code (2.1.197) run every hook command through a
/// program of yours: the command line given to `/bin/sh -c` is
/// [`with_shell_prefix`] of it.
pub const SHELL_PREFIX_VAR: &str = "CLAUDE_CODE_SHELL_PREFIX";

/// A hook command as Claude Code 2.1.197 hands it to `/bin/sh -c` when
/// `CLAUDE_CODE_SHELL_PREFIX` is `prefix` (its `W4n`): the prefix quoted as one word,
/// and the command quoted as one word after it, so the prefix's program gets the whole
/// command as its last argument; a prefix with ` -` in it (after its first character)
/// is cut at the last one, and what follows (`-c`, say) is left unquoted, as flags.
/// Seen with 2.1.197: with a prefix that ran the command and exited 0, the gate's deny
/// was lost and the call ran.
pub fn with_shell_prefix(prefix: &str, command: &str) -> String {
    let quote = super::sh_quote;
    match prefix.rfind(" -").filter(|&n| n > 0) {
        Some(n) => format!(
            "{} {} {}",
            quote(&prefix[..n]),
            &prefix[n + 1..],
            quote(command)
        ),
        None => format!("{} {}", quote(prefix), quote(command)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_files_of_the_user_and_managed_folders() {
        use std::path::Path;
        for rel in [
            "CLAUDE.md",
            "rules/a.md",
            "rules/deep/er/b.md",
            "projects/-work-x/memory/MEMORY.md",
        ] {
            assert!(super::user_memory_file(Path::new(rel)), "{rel}");
        }
        for rel in [
            "notes.md",
            "rules/a.txt",
            "rules",
            "projects/-work-x/memory/notes.md",
            "projects/-work-x/MEMORY.md",
            ".claude/rules/a.md",
            "settings.json",
        ] {
            assert!(!super::user_memory_file(Path::new(rel)), "{rel}");
        }
        for rel in ["CLAUDE.md", ".claude/rules/a.md", ".claude/rules/x/y.md"] {
            assert!(super::managed_memory_file(Path::new(rel)), "{rel}");
        }
        for rel in [
            "notes.md",
            "rules/a.md",
            ".claude/rules/a.txt",
            ".claude/CLAUDE.md",
            "managed-settings.json",
        ] {
            assert!(!super::managed_memory_file(Path::new(rel)), "{rel}");
        }
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn a_memory_file_is_sent_without_its_html_comments() {
        assert_eq!(memory_sent("a\n<!-- b -->\nc"), ["a\n", "\nc"]);
        // Every `<!--` up to the first `-->` that starts after it, an unclosed one too.
        assert_eq!(memory_sent("a <!-- b\n<!-- c -->d<!-- e -->"), ["a ", "d"]);
        assert_eq!(memory_sent("<!--->x-->y"), ["y"]);
        assert_eq!(memory_sent("a <!-- b"), ["a <!-- b"]);
        assert_eq!(memory_sent("<!-- only -->\n"), Vec::<&str>::new());
        assert_eq!(memory_sent("plain"), ["plain"]);
    }

    #[test]
    fn settings_given_on_the_command_line_are_read() {
        let given = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            flag_settings(&args)
                .into_iter()
                .map(|s| match s {
                    FlagSettings::Json(j) => format!("json {j}"),
                    FlagSettings::File(f) => format!("file {f}"),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(given(&["claude", "-p", "x"]), Vec::<String>::new());
        assert_eq!(
            given(&[
                "claude",
                "--settings",
                " {\"a\":1} ",
                "--settings=s.json",
                "--managed-settings={\"b\":2}",
                "--managed-settings",
                "[]",
                "--settings"
            ]),
            ["json {\"a\":1}", "file s.json", "json {\"b\":2}", "json []"]
        );
    }

    #[test]
    fn a_config_file_is_read_after_its_byte_order_mark() {
        let flag = r#"{"cachedGrowthBookFeatures":{"tengu_paper_halyard":true}}"#;
        let config = config_json(format!("\u{feff}{flag}").as_bytes()).unwrap();
        assert!(project_memory_off(&config));
        assert_eq!(config_json(flag.as_bytes()), Some(config));
        assert_eq!(config_json(b"\xef\xbb{}"), None);
    }

    #[test]
    fn setting_sources_that_leave_one_out_are_read() {
        let limited = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            setting_sources_limited(&args)
        };
        assert_eq!(limited(&["claude", "-p", "x"]), None);
        assert_eq!(
            limited(&["claude", "--setting-sources", "project"]),
            Some(true)
        );
        assert_eq!(
            limited(&["claude", "--setting-sources=user,local"]),
            Some(true)
        );
        assert_eq!(limited(&["claude", "--setting-sources", ""]), Some(true));
        assert_eq!(limited(&["claude", "--setting-sources"]), Some(true));
        assert_eq!(
            limited(&["claude", "--setting-sources", "local, project ,user"]),
            Some(false)
        );
        // The last one given counts.
        let twice = [
            "claude",
            "--setting-sources=user",
            "--setting-sources",
            "user,project,local",
        ];
        assert_eq!(limited(&twice), Some(false));
    }

    #[test]
    fn a_claude_md_exclude_may_match_wherever_picomatch_might() {
        let file = "/work/app/packages/web/CLAUDE.md";
        for pattern in [
            "**/CLAUDE.md",
            "/work/app/packages/web/CLAUDE.md",
            "/work/app/**",
            "/work/*/packages/*/CLAUDE.md",
            "**/packages/{web,api}/CLAUDE.md",
            "**/packages/[a-z]eb/CLAUDE.md",
            "**/+(web)/CLAUDE.md",
            "!**/other/CLAUDE.md",
            "**/claude.md",
            "\\work\\app\\**",
        ] {
            assert!(md_exclude_may_match(pattern, file), "{pattern}");
        }
        for pattern in [
            "CLAUDE.md",
            "/work/other/**",
            "**/api/CLAUDE.md",
            "**/CLAUDE.local.md",
        ] {
            assert!(!md_exclude_may_match(pattern, file), "{pattern}");
        }
    }

    #[test]
    fn a_memory_file_under_net_or_on_a_network_path_is_not_read() {
        for path in [
            "/net/host/p/CLAUDE.md",
            "/NET/host",
            "/x/../net/host/CLAUDE.md",
            "//server/share/CLAUDE.md",
            "\\\\server\\share\\CLAUDE.md",
        ] {
            assert!(memory_path_skipped(path), "{path}");
        }
        for path in [
            "/net",
            "/work/net/host/CLAUDE.md",
            "/network/host/CLAUDE.md",
            "//wsl$/Ubuntu/CLAUDE.md",
            "//wsl.localhost/Ubuntu/CLAUDE.md",
            "net/host/CLAUDE.md",
        ] {
            assert!(!memory_path_skipped(path), "{path}");
        }
    }

    #[test]
    fn the_flag_that_turns_the_project_memory_off_is_read_as_javascript_does() {
        let off = |flag: &str| {
            let v: Value = serde_json::from_str(&format!(
                r#"{{"cachedGrowthBookFeatures":{{"tengu_paper_halyard":{flag}}}}}"#
            ))
            .unwrap();
            project_memory_off(&v)
        };
        for on in ["true", "1", "\"x\"", "[]", "{}"] {
            assert!(off(on), "{on}");
        }
        for not in ["false", "0", "\"\"", "null"] {
            assert!(!off(not), "{not}");
        }
        assert!(!project_memory_off(
            &serde_json::json!({"cachedGrowthBookFeatures": {}})
        ));
    }

    #[test]
    fn a_memory_file_over_4_mib_is_not_sent() {
        let mut text = "Never run touch gate-marker.\n".to_string();
        text.push_str(&"x".repeat(MEMORY_MAX_BYTES - text.len()));
        assert_eq!(memory_sent(&text).concat(), text);
        text.push('x');
        assert_eq!(memory_sent(&text), Vec::<&str>::new());
    }

    #[test]
    fn a_memory_file_is_sent_without_its_front_matter() {
        let rule = "Never run touch gate-marker.";
        let sent = |text: &str| memory_sent(text).concat();
        assert_eq!(
            sent(&format!("---\ndescription: {rule}\n---\nbody\n")),
            "body\n"
        );
        // Up to the first `---`, inside a line too, and all the white space after it.
        assert_eq!(sent(&format!("---  \r\na: {rule}---\n\n  body")), "body");
        // YAML that does not parse is taken out all the same.
        assert_eq!(sent(&format!("---\n[{rule}\n---\nbody")), "body");
        // JavaScript's `\s`: U+FEFF is white space, U+0085 is not.
        assert_eq!(sent(&format!("---\u{feff}\n{rule}\n---\nbody")), "body");
        assert_eq!(
            sent(&format!("--- \u{85}\n{rule}\n---\nb")),
            format!("--- \u{85}\n{rule}\n---\nb")
        );
        // Not at the very start, or not closed: no front matter.
        for text in [
            format!(" ---\n{rule}\n---\n"),
            format!("---\n{rule}\n"),
            format!("--- x\n{rule}\n---\n"),
        ] {
            assert_eq!(sent(&text), text);
        }
        // Front matter that gives `paths`: nothing counts as sent.
        assert_eq!(
            sent(&format!("---\npaths:\n  - \"src/**\"\n---\n{rule}\n")),
            ""
        );
        assert_eq!(sent(&format!("---\n  {{paths: src}}\n---\n{rule}\n")), "");
        // The comments of what is left are taken out after.
        assert_eq!(sent(&format!("---\na: 1\n---\n<!-- {rule} -->\nb")), "\nb");
    }

    #[test]
    fn the_events_a_front_matter_s_hooks_name_are_read() {
        let hooks = "---\nname: rw\nhooks:\n  Stop:\n    - hooks: []\n  PreToolUse:\n- x\nmodel: PermissionRequest\n---\nbody PostToolUse\n";
        assert_eq!(front_matter_hooks(hooks), Some(vec!["PreToolUse", "Stop"]));
        // Top-level keys all indented alike, by spaces or tabs.
        let indented = "---\n  name: rw\n  hooks:\n    PreToolUse: []\n---\n";
        assert_eq!(front_matter_hooks(indented), Some(vec!["PreToolUse"]));
        let tabs = "---\n\tname: rw\n\thooks:\n\t\tPreToolUse: []\n---\n";
        assert_eq!(front_matter_hooks(tabs), Some(vec!["PreToolUse"]));
        // A quoted key, written in any case; flow style on its line.
        let quoted = "---  \n\"Hooks\" : {\"PermissionRequest\": []}\n---\n";
        assert_eq!(front_matter_hooks(quoted), Some(vec!["PermissionRequest"]));
        // Front matter written as one mapping: all of it.
        assert_eq!(
            front_matter_hooks("---\n{name: a, hooks: {PreToolUse: []}}\n---\n"),
            Some(vec!["PreToolUse"])
        );
        // Names this cannot read as events: an empty list.
        assert_eq!(front_matter_hooks("---\nhooks: *all\n---\n"), Some(vec![]));
        // Claude Code's front matter ends at the first `---`, even inside a line.
        assert_eq!(
            front_matter_hooks("---\nname: a---\nhooks:\n  PreToolUse: []\n---\n"),
            None
        );
        for none in [
            "hooks:\n  PreToolUse: []\n",
            "--- hooks:\n  PreToolUse: []\n---\n",
            "---\nname: a\n  hooks: x\nhooks_x: PreToolUse\n---\n",
            "---\nhooks:\n  PreToolUse: []\n",
            "---\nhook\u{e9}: PreToolUse\n---\n",
        ] {
            assert_eq!(front_matter_hooks(none), None, "{none:?}");
        }
    }

    #[test]
    fn a_shell_prefix_gets_the_command_as_one_word() {
        assert_eq!(
            with_shell_prefix("/usr/bin/wrap", "og hook \"$X\" || exit 2"),
            "/usr/bin/wrap 'og hook \"$X\" || exit 2'"
        );
        assert_eq!(
            with_shell_prefix("/opt/my wrap -q -c", "true"),
            "'/opt/my wrap -q' -c true"
        );
        assert_eq!(with_shell_prefix("-x", "true"), "-x true");
    }

    #[test]
    fn keys_that_keep_a_hook_from_running_as_written_are_named() {
        let named = |h: Value| -> Vec<String> {
            not_run_as_written(h.as_object().unwrap())
                .iter()
                .map(|l| l.split('`').nth(1).unwrap().to_string())
                .collect()
        };
        let base = json!({"type": "command", "command": "x || exit 2", "timeout": 30});
        assert!(named(base.clone()).is_empty());
        for quiet in [
            json!({"async": false, "asyncRewake": false, "shell": "bash", "if": ""}),
            json!({"statusMessage": "gate", "once": true}),
        ] {
            let mut h = base.clone();
            h.as_object_mut()
                .unwrap()
                .extend(quiet.as_object().unwrap().clone());
            assert!(named(h).is_empty(), "{quiet}");
        }
        let mut h = base;
        h.as_object_mut().unwrap().extend(
            json!({"if": "Bash(git *)", "args": [], "shell": "powershell", "asyncRewake": true, "async": true})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(
            named(h),
            [
                "\"async\": true",
                "\"asyncRewake\": true",
                "\"shell\": \"powershell\"",
                "\"args\"",
                "\"if\": \"Bash(git *)\""
            ]
        );
    }

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
            Some(("CLAUDE_CODE_SAFE_MODE", "true".to_string()))
        );
        // Made a string as JavaScript makes it: these turned every hook off too.
        for (v, shown) in [
            ("1", "1"),
            ("true", "true"),
            ("1.0", "1.0"),
            ("[\"on\"]", "[\"on\"]"),
        ] {
            assert_eq!(
                hooks_off_in_env(&s(&format!(r#"{{"env": {{"CLAUDE_CODE_SIMPLE": {v}}}}}"#))),
                Some(("CLAUDE_CODE_SIMPLE", shown.to_string())),
                "{v}"
            );
        }
        for v in ["0", "false", "null", "{}", "2"] {
            assert_eq!(
                hooks_off_in_env(&s(&format!(r#"{{"env": {{"CLAUDE_CODE_SIMPLE": {v}}}}}"#))),
                None,
                "{v}"
            );
        }
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
                "`statusLine.type` must be `command`",
            ),
            (json!({"sandbox": 5}), "`sandbox` must be an object"),
            (json!({"worktree": 5}), "`worktree` must be an object"),
            (json!({"autoMode": 5}), "`autoMode` must be an object"),
            (json!({"env": 5}), "`env` must be an object"),
            (
                json!({"sandbox": {"network": 5}}),
                "`sandbox.network` must be an object",
            ),
            (
                json!({"quietHours": {"start": "25:00"}}),
                "`quietHours.start` must be a time of day, `HH:MM`",
            ),
            (
                json!({"sshConfigs": [{"id": "a"}]}),
                "`sshConfigs[0].name` must be a string",
            ),
            (
                json!({"permissions": {"allow": "Bash"}}),
                "`permissions.allow` must be an array of strings",
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
        // Each of these it read, a wrong value dropped alone (its schema's `.catch`, or
        // sorted out before the schema sees the file), or made a string (`env`'s values).
        for settings in [
            json!({"theme": 5}),
            json!({"effortLevel": "bogus"}),
            json!({"strictPluginOnlyCustomization": 5}),
            json!({"allowedMcpServers": 5}),
            json!({"permissions": {"allow": [5]}}),
            json!({"hooks": {"Bogus": 5}}),
            json!({"hooks": {"Stop": 5}}),
            json!({"statusLine": {"type": "command", "command": "x", "refreshInterval": "a"}}),
            json!({"sandbox": {"someNewKey": 5}}),
            json!({"sandbox": {"bwrapPath": 5}}),
            json!({"env": {"A": 1, "B": null}}),
        ] {
            assert_eq!(invalid_key(&settings), None, "{settings}");
        }
    }

    #[test]
    fn a_hook_field_of_the_wrong_shape_is_named() {
        let hook = |fields: Value| {
            let mut h = json!({"type": "command", "command": "x"});
            h.as_object_mut()
                .unwrap()
                .extend(fields.as_object().unwrap().clone());
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [h]}]}})
        };
        let at = "`hooks.PreToolUse[0].hooks[0]";
        // `async` and `shell` seen with 2.1.197: the file's hooks did not run.
        for (fields, problem) in [
            (json!({"async": "no"}), "async` must be `true` or `false`"),
            (
                json!({"shell": "zsh"}),
                "shell` must be one of `bash`, `powershell`",
            ),
            (json!({"args": "a b"}), "args` must be an array of strings"),
            (json!({"if": 5}), "if` must be a string"),
            (json!({"once": 1}), "once` must be `true` or `false`"),
            (
                json!({"rewakeMessage": ""}),
                "rewakeMessage` must be a string that is not empty",
            ),
            (
                json!({"statusMessage": null}),
                "statusMessage` must be a string",
            ),
        ] {
            assert_eq!(
                invalid_key(&hook(fields.clone())),
                Some(format!("{at}.{problem}")),
                "{fields}"
            );
        }
        // A field of another type is not this type's: left alone, as Claude Code's schema
        // (which strips unknown keys) does; and well-formed values pass.
        for fields in [
            json!({"model": 5, "headers": 5, "input": 5, "continueOnBlock": "x"}),
            json!({"async": false, "asyncRewake": true, "shell": "bash", "args": ["a"], "if": "Bash(git *)", "once": true, "statusMessage": "s", "rewakeSummary": "r"}),
        ] {
            assert_eq!(invalid_key(&hook(fields.clone())), None, "{fields}");
        }
        let prompt = json!({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "ok?", "model": 5}]}]}});
        assert_eq!(
            invalid_key(&prompt).as_deref(),
            Some("`hooks.Stop[0].hooks[0].model` must be a string")
        );
        let http = json!({"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://x", "headers": {"A": 1}}]}]}});
        assert_eq!(
            invalid_key(&http).as_deref(),
            Some("`hooks.Stop[0].hooks[0].headers.A` must be a string")
        );
        let mcp = json!({"hooks": {"Stop": [{"hooks": [{"type": "mcp_tool", "server": "s", "tool": "t", "input": []}]}]}});
        assert_eq!(
            invalid_key(&mcp).as_deref(),
            Some("`hooks.Stop[0].hooks[0].input` must be an object")
        );
    }

    #[test]
    fn nested_shapes_are_checked_to_their_depth() {
        for (settings, problem) in [
            (
                json!({"sandbox": {"credentials": {"files": [{"path": "", "mode": "deny"}]}}}),
                "`sandbox.credentials.files[0].path` must be a string that is not empty",
            ),
            (
                json!({"sandbox": {"credentials": {"envVars": [{"name": "1A", "mode": "deny"}]}}}),
                "`sandbox.credentials.envVars[0].name` must be a variable's name (letters, digits and `_`, not starting with a digit)",
            ),
            (
                json!({"modelOverrides": {"a": 1}}),
                "`modelOverrides.a` must be a string",
            ),
            (
                json!({"enabledPlugins": {"a": 1}}),
                "`enabledPlugins.a` must be an array of strings or `true` or `false`",
            ),
            (
                json!({"policyHelper": {"path": "/p", "refreshIntervalMs": 5}}),
                "`policyHelper.refreshIntervalMs` must be `0` or a whole number from 60000",
            ),
            (
                json!({"feedbackSurveyRate": 2}),
                "`feedbackSurveyRate` must be a number from 0 to 1",
            ),
            (
                json!({"skillListingBudgetFraction": 0}),
                "`skillListingBudgetFraction` must be a number above 0 and at most 1",
            ),
            (
                json!({"strictKnownMarketplaces": [{"source": "ftp"}]}),
                "`strictKnownMarketplaces[0].source` must be one of `url`, `github`, `git`, `npm`, `file`, `directory`, `skills-dir`, `hostPattern`, `pathPattern`, `settings`",
            ),
            (
                json!({"sshConfigs": [{"id": "a", "name": "b", "sshHost": "h", "sshPort": 2.5}]}),
                "`sshConfigs[0].sshPort` must be a whole number",
            ),
            (
                json!({"spinnerVerbs": {"mode": "append"}}),
                "`spinnerVerbs.verbs` must be an array of strings",
            ),
        ] {
            assert_eq!(
                invalid_key(&settings).as_deref(),
                Some(problem),
                "{settings}"
            );
        }
        for settings in [
            json!({"cleanupPeriodDays": 5.0}),
            json!({"quietHours": {"start": "7:05", "end": "23:59"}}),
            json!({"policyHelper": {"path": "/p", "refreshIntervalMs": 0, "timeoutMs": 1000}}),
            json!({"enabledPlugins": {"a": true, "b": ["x"]}}),
            json!({"forceLoginOrgUUID": ["a"]}),
            json!({"sshConfigs": [{"id": "a", "name": "b", "sshHost": "h", "sshPort": -22}]}),
            json!({"pluginConfigs": {"p": {"options": {"a": 1, "b": ["x"]}}}}),
        ] {
            assert_eq!(invalid_key(&settings), None, "{settings}");
        }
        for t in ["0:00", "09:30", "23:59"] {
            assert!(clock_time(t), "{t}");
        }
        for t in ["24:00", "9:60", "9:5", "009:00", ":00", "a:00", "9:000"] {
            assert!(!clock_time(t), "{t}");
        }
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
            invalid_key(&json!({"env": ["A"]})).unwrap(),
            "`env` must be an object"
        );
        assert_eq!(invalid_key(&json!({"someFutureKey": 1})), None);
    }

    #[test]
    fn extra_body_edits_context_unless_it_only_clears_thinking() {
        let asks = [
            r#"{"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}}"#,
            r#"{"context_management":{"edits":[{"type":"clear_thinking_20251015"},{"type":"clear_tool_uses_20250919"}]}}"#,
            r#"{"context_management":{"edits":[{}]}}"#,
            r#"{"context_management":{"edits":"all"}}"#,
            r#"{"context_management":{"edits":[],"other":1}}"#,
            r#"{"context_management":true}"#,
            r#"{"context\u005fmanagement":{"edits":[{"type":"clear_tool_uses_20250919"}]}}"#,
            // Not JSON the gate reads (JavaScript reads a lone surrogate), naming it or
            // holding an escape that may spell it.
            r#"{"context_management":{"edits":[{"type":"x\ud800"}]}}"#,
            r#"{"a":"\ud800", "b": 1}"#,
            r#"{"messages":[]}"#,
            r#"{"system":"You are terse."}"#,
            r#"{"system": not json"#,
        ];
        for value in asks {
            assert!(extra_body_edits_context(value), "{value}");
        }
        let none = [
            r#"{"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}}"#,
            r#"{"context_management":{"edits":[]}}"#,
            r#"{"context_management":null}"#,
            r#"{"metadata":{"user_id":"x"}}"#,
            r#"["context_management"]"#,
            "not json",
            "",
        ];
        for value in none {
            assert!(!extra_body_edits_context(value), "{value}");
        }
    }
}
