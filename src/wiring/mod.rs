//! Wiring the gate into a harness: what `init` writes and what `doctor` checks.
//!
//! Each harness reads its hook configuration from its own files, runs the command in its
//! own shell and reads the answer by its own rules; a slip in any of these leaves no gate
//! and nobody is told. This module holds those facts as data and pure functions: the
//! hook command and group `init` writes for each harness, the starter store, how each
//! harness matches a tool name against a matcher and how it reads a hook's exit code and
//! output. [`claude_code`], [`codex`] and [`gemini_cli`] hold what only one harness does
//! (settings validation, hook trust, folder trust). The CLI reads and writes the files
//! and runs the commands.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::harness::spelling;
use crate::hook::Harness;
use crate::record::{Kind, Named, Record, Store, glob_match, match_hash};

pub mod claude_code;
pub mod codex;
pub mod edit;
pub mod gemini_cli;
mod protocol;
mod shell;

pub use protocol::{Outcome, matches, outcome};
pub use shell::{exits_2_on_failure, runs_adapter, sh_quote, split_expanded};

/// Why a settings file cannot be read or edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not valid JSON (or TOML).
    #[error("line {line} column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The top level is not a JSON object.
    #[error("the top level is not a JSON object")]
    TopNotObject,
    /// `hooks` is not an object.
    #[error("`hooks` is not an object")]
    HooksNotObject,
    /// The hook list of an event (its name) is not an array.
    #[error("`hooks.{0}` is not an array")]
    EventNotArray(String),
}

/// The store path `init` uses when none is given, relative to the project directory.
pub const DEFAULT_STORE: &str = ".omission-gate/store.json";

/// Our own deadline in the hook command, in milliseconds: below every harness timeout
/// `init` writes, so that our fail-closed deny comes before the harness gives up (a hook
/// the harness kills counts as failed, and the tool runs).
pub const OWN_TIMEOUT_MS: u64 = 10_000;

/// The longest wait the timers of Node (Gemini CLI) and Bun (Claude Code's runtime) take,
/// in milliseconds (2^31 - 1): given more, or less than 1, or what is not a number,
/// `setTimeout` waits 1 ms, so a harness that times its hook so kills it after 1 ms and
/// runs the tool (seen with Claude Code 2.1.197 and Gemini CLI 0.61.0).
pub const TIMER_MAX_MS: f64 = 2_147_483_647.0;

/// How the gate learns which records the agent still sees: from the session transcript
/// the payload names (the harness's own record of the live context), so that nothing
/// has to keep the store's `kept` up to date.
pub const KEPT_FROM: &str = "transcript";

/// What `init` writes into a harness's settings, and how the harness runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wiring {
    /// The harness.
    pub harness: Harness,
    /// The project settings file `init` writes, relative to the project directory.
    pub settings: &'static str,
    /// The pre-tool event's key under `hooks`.
    pub event: &'static str,
    /// The matcher `init` writes: the tools that change things, and every MCP tool.
    pub matcher: &'static str,
    /// The harness's hook timeout `init` writes, in the harness's unit.
    pub timeout: u64,
    /// The shell and its flags, as the harness runs a hook command.
    pub shell: &'static [&'static str],
    /// The harness's shell tool: its name and an input it sends.
    pub shell_tool: &'static str,
    /// How the harness names an MCP tool, `mcp__<server>__<tool>` or `mcp_<server>_<tool>`.
    pub mcp_separator: &'static str,
    /// The variable the harness sets to the project directory, when the store path can
    /// be written relative to it.
    pub project_var: Option<&'static str>,
    /// Whether the settings file may hold comments.
    pub comments: bool,
    /// Whether the gate's group runs its hooks one after another and is kept last in the
    /// event's list: Gemini CLI runs a plan in which a group says `"sequential": true`
    /// in the order the groups are written, each hook shown the call as the hooks before
    /// it left it (a `tool_input` it returns is the call that runs), so the gate, last,
    /// judges the call that runs. Claude Code and Codex run their hooks side by side.
    pub sequential_last: bool,
}

impl Wiring {
    /// The wiring of one harness.
    pub fn of(harness: Harness) -> Wiring {
        match harness {
            Harness::ClaudeCode => Wiring {
                harness,
                settings: ".claude/settings.json",
                event: "PreToolUse",
                matcher: "Bash|Monitor|PowerShell|Edit|MultiEdit|Write|NotebookEdit|mcp__.*",
                timeout: 30,
                shell: &["/bin/sh", "-c"],
                shell_tool: "Bash",
                mcp_separator: Harness::ClaudeCode.mcp_separator(),
                project_var: Some("CLAUDE_PROJECT_DIR"),
                comments: false,
                sequential_last: false,
            },
            Harness::Codex => Wiring {
                harness,
                settings: ".codex/hooks.json",
                event: "PreToolUse",
                matcher: "^(Bash|apply_patch|mcp__.*)$",
                timeout: 30,
                shell: &["bash", "-lc"],
                shell_tool: "Bash",
                mcp_separator: Harness::Codex.mcp_separator(),
                project_var: None,
                comments: false,
                sequential_last: false,
            },
            Harness::GeminiCli => Wiring {
                harness,
                settings: ".gemini/settings.json",
                event: "BeforeTool",
                matcher: "run_shell_command|write_file|replace|mcp_.*",
                timeout: 30_000,
                shell: &["bash", "-c"],
                shell_tool: "run_shell_command",
                mcp_separator: Harness::GeminiCli.mcp_separator(),
                project_var: Some("GEMINI_PROJECT_DIR"),
                comments: true,
                sequential_last: true,
            },
        }
    }

    /// An MCP tool's name in this harness.
    pub fn mcp_tool(&self, server: &str, tool: &str) -> String {
        let sep = self.mcp_separator;
        format!("mcp{sep}{server}{sep}{tool}")
    }

    /// The store path as the hook command writes it: relative to the project variable
    /// where the harness sets one (quoted for Claude Code's `sh`; bare for Gemini CLI,
    /// which puts the already quoted directory in its place), else absolute.
    pub fn store_arg(&self, project: &str, store: &str) -> String {
        if store.starts_with('/') {
            return sh_quote(store);
        }
        match self.project_var {
            Some(var @ "CLAUDE_PROJECT_DIR") => format!("\"${var}\"/{}", sh_quote(store)),
            Some(var) => format!("${var}/{}", sh_quote(store)),
            None => sh_quote(&format!("{}/{store}", project.trim_end_matches('/'))),
        }
    }

    /// The pre-tool hook command: the binary by absolute path, the store, our deadline,
    /// and `|| exit 2` so that a binary that cannot be started still blocks.
    pub fn command(&self, binary: &str, store_arg: &str) -> String {
        format!(
            "{} hook {} --store {store_arg} --kept-from {KEPT_FROM} --timeout-ms {OWN_TIMEOUT_MS} || exit 2",
            sh_quote(binary),
            self.harness.name()
        )
    }

    /// The hook group `init` writes for the pre-tool event, as pretty JSON.
    pub fn group(&self, command: &str) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let handler = match self.harness {
            Harness::GeminiCli => format!(
                "{{\n      \"name\": \"omission-gate\",\n      \"type\": \"command\",\n      \"command\": {},\n      \"timeout\": {},\n      \"description\": \"deny a tool call that a record the compactor dropped binds\"\n    }}",
                q(command),
                self.timeout
            ),
            Harness::ClaudeCode | Harness::Codex => format!(
                "{{\n      \"type\": \"command\",\n      \"command\": {},\n      \"timeout\": {}\n    }}",
                q(command),
                self.timeout
            ),
        };
        let sequential = if self.sequential_last {
            "\n  \"sequential\": true,"
        } else {
            ""
        };
        format!(
            "{{\n  \"matcher\": {},{sequential}\n  \"hooks\": [\n    {handler}\n  ]\n}}",
            q(self.matcher)
        )
    }

    /// The `PreCompact` group for Claude Code: its stdout reaches the summarizer. No
    /// `|| exit 2` here, since exit 2 would block the compaction.
    pub fn precompact_group(binary: &str, store_arg: &str) -> String {
        let command = format!(
            "{} hook claude-code-precompact --store {store_arg} --timeout-ms {OWN_TIMEOUT_MS}",
            sh_quote(binary)
        );
        format!(
            "{{\n  \"hooks\": [\n    {{\n      \"type\": \"command\",\n      \"command\": {},\n      \"timeout\": 30\n    }}\n  ]\n}}",
            serde_json::to_string(&command).unwrap_or_default()
        )
    }
}

/// One hook handler of ours, as a harness would load it.
#[derive(Debug, Clone)]
pub struct Handler {
    /// The settings file, as shown to the user (and, for Codex, in the trust key).
    pub file: String,
    /// The group's index in the event's list.
    pub group: usize,
    /// The handler's index in its group.
    pub index: usize,
    /// The group's matcher.
    pub matcher: Option<String>,
    /// The command.
    pub command: String,
    /// The handler as written.
    pub object: serde_json::Map<String, Value>,
}

/// Every handler under `hooks.<event>` of one settings file, in order: its group's index
/// and matcher, its index in the group, and the handler as written.
fn each_handler<'v>(
    value: &'v Value,
    event: &str,
) -> impl Iterator<Item = (usize, Option<&'v str>, usize, &'v Value)> {
    let groups = value
        .get("hooks")
        .and_then(|h| h.get(event))
        .and_then(Value::as_array);
    groups
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(gi, g)| {
            let matcher = g.get("matcher").and_then(Value::as_str);
            g.get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .map(move |(hi, h)| (gi, matcher, hi, h))
        })
}

/// The handlers that run `omission-gate hook <adapter>` under `hooks.<event>` of one settings file.
pub fn handlers_in(value: &Value, event: &str, adapter: &str, file: &str) -> Vec<Handler> {
    each_handler(value, event)
        .filter_map(|(group, matcher, index, h)| {
            let Value::Object(obj) = h else { return None };
            let command = obj.get("command").and_then(Value::as_str)?;
            runs_adapter(command, adapter).then(|| Handler {
                file: file.to_string(),
                group,
                index,
                matcher: matcher.map(str::to_string),
                command: command.to_string(),
                object: obj.clone(),
            })
        })
        .collect()
}

/// The pre-tool event's name in each harness: another harness's is a slip too.
const PRE_TOOL_EVENTS: [&str; 2] = ["PreToolUse", "BeforeTool"];

/// Whether `key` under `hooks` is the harness's pre-tool event spelt otherwise: in
/// another case, with `_` or `-` (Codex's own label, `pre_tool_use`), within two edits
/// of it (`PreTooluse`, `PreToolUs`), or another harness's name for it (`BeforeTool` in
/// Claude Code or Codex, `PreToolUse` in Gemini CLI). Each of these harnesses reads its
/// event's key as spelt, and no other event of theirs is this close to it: seen with
/// Claude Code 2.1.197, Codex 0.171.0 (in `hooks.json` and `config.toml`) and Gemini
/// CLI 0.61.0, a hook under `preToolUse`, `pretooluse`, `PreToolUSE`, `PreTooluse`,
/// `pre_tool_use`, `beforeTool`, `before_tool` or the other harness's name never ran,
/// the rest of the file was read, and the tool ran.
pub fn near_event(harness: Harness, key: &str) -> bool {
    let event = Wiring::of(harness).event;
    let fold = |k: &str| -> String {
        k.chars()
            .filter(|c| !matches!(c, '_' | '-' | ' '))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted: Vec<char> = fold(event).chars().collect();
    key != event
        && (PRE_TOOL_EVENTS.contains(&key)
            || crate::text::edit_distance(&wanted, &fold(key), 2).is_some())
}

/// The keys under `hooks` of one settings file that spell the harness's pre-tool event
/// otherwise (see [`near_event`]) and hold a hook that runs `omission-gate hook
/// <adapter>`: the harness never runs it.
pub fn misspelt_events(harness: Harness, value: &Value, adapter: &str) -> Vec<String> {
    let Some(Value::Object(events)) = value.get("hooks") else {
        return Vec::new();
    };
    events
        .keys()
        .filter(|key| near_event(harness, key))
        .filter(|key| !handlers_in(value, key, adapter, "").is_empty())
        .cloned()
        .collect()
}

/// A pre-tool hook of someone else's, as a harness would load it.
#[derive(Debug, Clone)]
pub struct OtherHook {
    /// The settings file.
    pub file: String,
    /// The group's index in the event's list of that file.
    pub group: usize,
    /// The group's matcher.
    pub matcher: Option<String>,
    /// The command (or, for a handler without one, its name or type).
    pub command: String,
    /// The handler's `name`, when it gives one.
    pub name: Option<String>,
    /// The Gemini CLI extension that brings it, when one does (see
    /// [`gemini_cli::EXTENSIONS_DIR`]).
    pub extension: Option<Extension>,
}

/// A Gemini CLI extension that brings a hook.
#[derive(Debug, Clone)]
pub struct Extension {
    /// Its name.
    pub name: String,
    /// The file that turns it off for the start directory
    /// ([`gemini_cli::EXTENSION_ENABLEMENT`]), when one does: it is then on only in a
    /// session started with `gemini -e` naming it, which overrides that file.
    pub off_in: Option<String>,
}

/// The handlers under `hooks.<event>` of one settings file that do not run
/// `omission-gate hook <adapter>`.
pub fn other_hooks_in(value: &Value, event: &str, adapter: &str, file: &str) -> Vec<OtherHook> {
    each_handler(value, event)
        .filter_map(|(group, matcher, _, h)| {
            let text = |key: &str| h.get(key).and_then(Value::as_str).filter(|t| !t.is_empty());
            if text("command").is_some_and(|c| runs_adapter(c, adapter)) {
                return None;
            }
            let command = text("command")
                .or_else(|| text("name"))
                .or_else(|| text("type"))?;
            Some(OtherHook {
                file: file.to_string(),
                group,
                matcher: matcher.map(str::to_string),
                command: command.to_string(),
                name: text("name").map(str::to_string),
                extension: None,
            })
        })
        .collect()
}

/// Whether two matchers of the same harness both select some tool the gate judges (the
/// harness's shell, write and edit tools, an MCP tool, and the tools `named`): another
/// hook that runs on such a call can change it after the gate has judged it.
pub fn overlap(
    harness: Harness,
    ours: Option<&str>,
    other: Option<&str>,
    named: &[String],
) -> bool {
    probe_tools(harness)
        .iter()
        .map(|t| t.to_string())
        .chain(named.iter().map(|t| t.replace('*', "x")))
        .any(|t| {
            matches(harness, ours, &t) == Some(true) && matches(harness, other, &t) != Some(false)
        })
}

/// Whether the harness runs two of the gate's hooks that both select a call as one:
/// Claude Code 2.1.197 runs a command once however many hooks declare it (seen: the same
/// command in the user's, the project's and the local settings, with other matchers or
/// timeouts, ran once; one space more, and it ran twice), Gemini CLI 0.61.0 a name and
/// command once (`HookPlanner.deduplicateHooks`, keyed by `getHookKey`: seen, the same
/// pair in the user's and the workspace's settings ran once, another name or command
/// twice), Codex 0.171.0 every hook it reads (seen: the same command in
/// `$CODEX_HOME/hooks.json` and the project's ran twice). Hooks that run as one cost
/// nothing; two that do not both run before each call both select, and the call is
/// blocked when either denies it.
pub fn run_as_one(harness: Harness, a: &Handler, b: &Handler) -> bool {
    fn name(h: &Handler) -> &str {
        h.object.get("name").and_then(Value::as_str).unwrap_or("")
    }
    match harness {
        Harness::Codex => false,
        Harness::ClaudeCode => a.command == b.command,
        Harness::GeminiCli => a.command == b.command && name(a) == name(b),
    }
}

/// The payload the harness would send for a call of `tool` with `input`, in a session
/// whose transcript is `transcript` (see [`doctor_transcript`]).
pub fn payload(
    harness: Harness,
    project: &str,
    tool: &str,
    input: Value,
    transcript: &str,
) -> String {
    use serde_json::json;
    let event = Wiring::of(harness).event;
    let v = match harness {
        Harness::ClaudeCode => json!({
            "session_id": DOCTOR_SESSION, "transcript_path": transcript, "cwd": project,
            "permission_mode": "default", "hook_event_name": event, "tool_name": tool,
            "tool_input": input, "tool_use_id": "toolu_doctor"
        }),
        Harness::Codex => json!({
            "session_id": DOCTOR_SESSION, "turn_id": "doctor", "transcript_path": transcript,
            "cwd": project, "hook_event_name": event, "model": "doctor",
            "permission_mode": "default", "tool_name": tool, "tool_input": input,
            "tool_use_id": "call_doctor"
        }),
        Harness::GeminiCli => json!({
            "session_id": DOCTOR_SESSION, "transcript_path": transcript, "cwd": project,
            "hook_event_name": event, "timestamp": "2026-01-01T00:00:00.000Z",
            "tool_name": tool, "tool_input": input
        }),
    };
    v.to_string()
}

/// The session id of doctor's synthetic calls.
pub const DOCTOR_SESSION: &str = "omission-gate-doctor";

/// The tools doctor may call the hook with, in order: the first the matcher selects is
/// used (the shell tool, then the write and edit tools, then an MCP tool).
pub fn probe_tools(harness: Harness) -> [&'static str; 4] {
    match harness {
        Harness::ClaudeCode => ["Bash", "Write", "Edit", "mcp__doctor__check"],
        Harness::Codex => ["Bash", "apply_patch", "mcp__doctor__check", "Write"],
        Harness::GeminiCli => [
            "run_shell_command",
            "write_file",
            "replace",
            "mcp_doctor_check",
        ],
    }
}

/// A session transcript in the harness's format, as it stands when the harness calls the
/// hook for doctor's harmless call: one user message, then the call (recorded under the
/// `tool_use_id` the payload names, so a gate that waits for it finds it).
pub fn doctor_transcript(harness: Harness) -> &'static str {
    match harness {
        Harness::ClaudeCode => concat!(
            r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"omission-gate doctor: a harmless call"},"uuid":"doctor-1","sessionId":"omission-gate-doctor"}"#,
            "\n",
            r#"{"parentUuid":"doctor-1","isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_doctor","name":"Bash","input":{"command":"true"}}]},"uuid":"doctor-2","sessionId":"omission-gate-doctor"}"#,
            "\n"
        ),
        Harness::Codex => concat!(
            r#"{"type":"session_meta","payload":{"id":"omission-gate-doctor","cwd":"/","base_instructions":{"text":"omission-gate doctor"}}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"omission-gate doctor: a harmless call"}]}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"true\"}","call_id":"call_doctor"}}"#,
            "\n"
        ),
        Harness::GeminiCli => concat!(
            r#"{"sessionId":"omission-gate-doctor","projectHash":"0","startTime":"2026-01-01T00:00:00.000Z","lastUpdated":"2026-01-01T00:00:00.000Z","kind":"main"}"#,
            "\n",
            r#"{"id":"doctor-1","timestamp":"2026-01-01T00:00:00.000Z","type":"user","content":[{"text":"omission-gate doctor: a harmless call"}]}"#,
            "\n"
        ),
    }
}

/// A tool name no matcher lists: a matcher that does not select it leaves some tool out.
const ANY_TOOL: &str = "omission_gate_any_tool";

/// A tool name a record scopes to that the hook will never be asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unguarded {
    /// Spelt as another harness names its MCP tools (`mcp__s__t` in Gemini CLI).
    Misnamed {
        /// The first record naming it.
        id: String,
        /// The name as written.
        tool: String,
        /// The harness's spelling.
        instead: String,
    },
    /// A glob that covers another harness's built-in and not this harness's name for it
    /// (`Writ*` in Gemini CLI, which calls `Write` `write_file`), in a record that does
    /// not give that name too: the record binds none of those calls, and the hook denies
    /// each until the store names it.
    OtherHarnessGlob {
        /// The first record naming the glob without this harness's name.
        id: String,
        /// The glob as written.
        tool: String,
        /// The other harness's built-in it covers.
        covered: &'static str,
        /// This harness's name for that built-in.
        instead: String,
    },
    /// The matcher selects a built-in the store names, but not another built-in of the
    /// harness that does the same (Claude Code's `Monitor` beside `Bash`), whose calls the
    /// hook then never sees.
    Sibling {
        /// The first record naming the built-in.
        id: String,
        /// The built-in as written.
        tool: String,
        /// The built-in that does the same, which the matcher leaves out.
        sibling: String,
    },
    /// A built-in of the harness named as no hook call carries it (see
    /// [`crate::harness::hook_names_for`]: `bash` for Claude Code's `Bash`, Codex's
    /// `exec_command` for its `Bash`), in a store that never names it as the harness
    /// sends it: no matcher brings the hook such a call, and the hook denies each call of
    /// the built-in until the store names it so.
    NotHookName {
        /// The first record naming it.
        id: String,
        /// The name as written.
        tool: String,
        /// For a glob, what it covers instead (see
        /// [`crate::harness::hook_glob_covers`]); `None` for a name.
        covers: Option<String>,
        /// The name the harness sends to hooks.
        instead: String,
    },
    /// A name written as a pattern of another syntax (`Bash|Edit`, `mcp__billing__.*`,
    /// `Bas?`: see [`crate::harness::pattern_meant`]) that reads as covering tools this
    /// harness sends: the store reads it as a name no tool has, and the hook denies each
    /// call it reads as covering until the store names the tool.
    Pattern {
        /// The first record naming it.
        id: String,
        /// The name as written.
        tool: String,
        /// To write instead: its alternatives as names or `*` globs read against the
        /// whole name (see [`crate::harness::pattern_fixes`]), and the built-ins it
        /// covers only as searched that the store leaves unbound.
        globs: Vec<String>,
    },
    /// The matcher does not select it.
    Missed {
        /// The first record naming it.
        id: String,
        /// The name as written.
        tool: String,
    },
}

/// The tool names the store's policies and effect records give (each with the first
/// record naming it) that the harness never shows this hook: misspelt for the harness
/// (another harness's name or a glob covering one, or a built-in's name as no hook call
/// carries it), or outside the matcher. A glob stands for the names it covers that the
/// harness may send (see `matcher_samples`).
pub fn unguarded(harness: Harness, matcher: Option<&str>, store: &Store) -> Vec<Unguarded> {
    let named = named_tools(store);
    let giving = Named::of(store.records());
    let mut out = Vec::new();
    for (tool, id) in &named {
        let (id, name) = (id.to_string(), tool.to_string());
        if *tool == "*" {
            // Every tool: only a matcher that selects every tool shows the gate them all
            // (a name no matcher lists stands for the ones it leaves out).
            if matches(harness, matcher, ANY_TOOL) == Some(false) {
                out.push(Unguarded::Missed { id, tool: name });
            }
            continue;
        }
        if let Some(globs) = crate::harness::pattern_globs(harness, tool) {
            // Read as a name no tool has; it stands for the tools the harness sends that
            // its alternatives cover.
            // Records that name each such tool beside it bind its calls (the hook judges
            // by those names).
            let covered: Vec<String> = globs
                .iter()
                .flat_map(|g| matcher_samples(harness, g, false))
                .filter(|sample| crate::harness::pattern_meant(harness, tool, sample))
                .collect();
            let unbound = covered
                .iter()
                .find_map(|sample| unbinding(store, &giving, tool, sample));
            if let Some(id) = unbound {
                // To write instead: each alternative read against the whole name, and
                // each built-in it covers only as searched (`MultiEdit` for `Bash|Edit`)
                // that the store leaves unbound, never the searched globs (`*Ba*` for
                // `Bas?` binds every tool whose name holds `Ba`).
                let mut fixes = crate::harness::pattern_fixes(tool).unwrap_or_default();
                let built_in = |t: &str| {
                    use crate::harness::{file_tools, shell_tools};
                    file_tools(harness)
                        .chain(shell_tools(harness))
                        .any(|b| b == t)
                };
                for sample in &covered {
                    let fixed = fixes.iter().any(|f| glob_match(f, sample));
                    if !fixed
                        && built_in(sample)
                        && unbinding(store, &giving, tool, sample).is_some()
                    {
                        fixes.push(sample.clone());
                    }
                }
                out.push(Unguarded::Pattern {
                    id: id.to_string(),
                    tool: name.clone(),
                    globs: fixes,
                });
            }
            if !covered.is_empty() {
                continue;
            }
        }
        let calls = crate::harness::hook_names_for(harness, tool);
        let globbed = crate::harness::glob_spellings(harness, tool);
        for call in &calls {
            // No matcher helps: the name must change. Records that also name the
            // built-in as the harness sends it are fine (the hook judges by that name).
            // A glob that covers another harness's name for it too (`W*` in Gemini CLI,
            // `Write` and `write_file`) is reported as that, below, as the hook does.
            if globbed.iter().any(|(_, instead)| instead == call) {
                continue;
            }
            if let Some(id) = unbinding(store, &giving, tool, call) {
                out.push(Unguarded::NotHookName {
                    id: id.to_string(),
                    tool: name.clone(),
                    covers: crate::harness::hook_glob_covers(harness, tool, call),
                    instead: call.to_string(),
                });
            }
        }
        if !calls.is_empty() && !tool.contains('*') {
            continue;
        }
        for (covered, instead) in &globbed {
            // A glob of another harness's built-in (`Bas*` in Gemini CLI): as for the
            // name itself, no matcher helps, and a record naming this harness's name
            // beside it binds the calls.
            if let Some(id) = unbinding(store, &giving, tool, instead) {
                out.push(Unguarded::OtherHarnessGlob {
                    id: id.to_string(),
                    tool: name.clone(),
                    covered,
                    instead: instead.clone(),
                });
            }
        }
        if !calls.is_empty() || !globbed.is_empty() {
            // The matcher must still select what the glob covers in this harness (a
            // glob meant for another harness's built-in, or covering one of this
            // harness's only in another case: its built-ins and MCP tools).
            let samples = matcher_samples(harness, tool, false);
            if samples
                .iter()
                .any(|s| matches(harness, matcher, s) == Some(false))
            {
                out.push(Unguarded::Missed { id, tool: name });
            }
            continue;
        }
        if let Some(instead) = spelling(harness, tool) {
            // A store shared by harnesses may spell a tool both ways.
            if let Some(id) = unbinding(store, &giving, tool, &instead) {
                out.push(Unguarded::Misnamed {
                    id: id.to_string(),
                    tool: name,
                    instead,
                });
            }
        } else if matcher_missed(harness, matcher, tool)
            && !another_spelling_of_a_named(harness, tool, &named)
            // A name the harness never sends (`refunds.create` in Claude Code) is no
            // call a matcher can select: [`never_sent`] reports a record of such names
            // alone, and one beside a name the harness sends binds by that name.
            && crate::harness::may_send(harness, tool)
        {
            out.push(Unguarded::Missed { id, tool: name });
        } else {
            for sibling in crate::harness::same_kind(harness, tool) {
                if matches(harness, matcher, sibling) == Some(false) {
                    out.push(Unguarded::Sibling {
                        id: id.clone(),
                        tool: name.clone(),
                        sibling: sibling.to_string(),
                    });
                }
            }
        }
    }
    out
}

/// Whether the matcher leaves out a call the harness may send that `tool`, a name or a
/// glob, covers ([`matcher_samples`]; a glob that covers none of those is tried with
/// each `*` as `x`).
fn matcher_missed(harness: Harness, matcher: Option<&str>, tool: &str) -> bool {
    let mut samples = matcher_samples(harness, tool, true);
    if samples.is_empty() {
        samples.push(tool.replace('*', "x"));
    }
    samples
        .iter()
        .any(|s| matches(harness, matcher, s) == Some(false))
}

/// Names the harness may send that `tool` covers, to try its matcher with: the name
/// itself; for a glob, the harness's built-ins that change things that it covers, and a
/// name of another tool it covers: Claude Code and Codex send other tools only as MCP
/// tools (`mcp__x__x_file` for `*_file`, where `x_file` is a name they never send),
/// Gemini CLI under any name (each `*` as `x`; with `any_name`, else as an MCP tool).
fn matcher_samples(harness: Harness, tool: &str, any_name: bool) -> Vec<String> {
    use crate::harness::{file_tools, shell_tools};
    if !tool.contains('*') {
        return vec![tool.to_string()];
    }
    let mut samples: Vec<String> = file_tools(harness)
        .chain(shell_tools(harness))
        .filter(|b| glob_match(tool, b))
        .map(str::to_string)
        .collect();
    let plain = tool.replace('*', "x");
    let other = if harness == Harness::GeminiCli && any_name {
        Some(plain)
    } else {
        let sep = harness.mcp_separator();
        let prefix = format!("mcp{sep}");
        let mcp = match tool.strip_prefix('*') {
            Some(rest) => format!("{prefix}x{sep}x{}", rest.replace('*', "x")),
            None => plain,
        };
        mcp.starts_with(&prefix).then_some(mcp)
    };
    samples.extend(other.filter(|o| glob_match(tool, o) && !samples.contains(o)));
    samples
}

/// The names the store gives that `harness` never sends a hook (see
/// [`crate::harness::may_send`]: `refunds.create` in Claude Code and Codex), each with
/// the first record giving it that gives no name the harness may send besides: such a
/// record binds no call of that harness, and adding the name to a matcher does not help.
pub fn never_sent(harness: Harness, store: &Store) -> Vec<(String, String)> {
    let mut out: BTreeMap<&str, &str> = BTreeMap::new();
    for r in store.records() {
        let names = r.tool_names();
        // A name the harness sends in another spelling (`mcp__bill.ing__t` as
        // `mcp__bill_ing__t`) has its own report, which names that spelling.
        let spelt = |n: &str| {
            crate::harness::sent_as(harness, n).is_some() || spelling(harness, n).is_some()
        };
        if names
            .iter()
            .any(|n| crate::harness::may_send(harness, n) || spelt(n))
        {
            continue;
        }
        for n in names {
            out.entry(n).or_insert(&r.id);
        }
    }
    out.into_iter()
        .map(|(tool, id)| (id.to_string(), tool.to_string()))
        .collect()
}

/// The tool names the store's policies and effect records give, each with the first
/// record naming it.
fn named_tools(store: &Store) -> BTreeMap<&str, &str> {
    let mut named: BTreeMap<&str, &str> = BTreeMap::new();
    for r in store.records() {
        let names = r.tool_names();
        for n in names {
            named.entry(n).or_insert(&r.id);
        }
    }
    named
}

/// The first record that gives `name` and does not bind calls of `tool` by its own names,
/// when one does not ([`Named::always_with`], `giving` of the store): a policy whose
/// scope covers no `tool`, or an effect of `name` without a twin covering `tool` (an
/// effect of the same `match` whose `tool` covers `tool`).
fn unbinding<'s>(store: &'s Store, giving: &Named, name: &str, tool: &str) -> Option<&'s str> {
    if giving.always_with(name, tool) {
        return None;
    }
    let gives = |r: &&Record| match &r.kind {
        Kind::Policy(p) => p.scope.iter().any(|s| s == name),
        Kind::Effect(e) => e.tool == name,
        _ => false,
    };
    let twin = |hash: u64| {
        (store.records().iter()).any(
            |r| matches!(&r.kind, Kind::Effect(e) if glob_match(&e.tool, tool) && match_hash(&e.matches) == hash),
        )
    };
    let unbound = |r: &&Record| match &r.kind {
        Kind::Policy(p) => !p.scope.iter().any(|s| glob_match(s, tool)),
        Kind::Effect(e) => !twin(match_hash(&e.matches)),
        _ => false,
    };
    let mut records = store.records().iter().filter(gives);
    // Policies that each bind `tool` by a name the others lack: the first giving `name`.
    let first = records.clone().next();
    records.find(unbound).or(first).map(|r| r.id.as_str())
}

/// A name in a hook's guarded tools (its `--tools`, else its store's `tools`) that this
/// harness never sends, beside no listed name covering the one it sends instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MisListed {
    /// The name as listed.
    pub tool: String,
    /// The name this harness sends.
    pub instead: String,
    /// How the listed name misses it.
    pub how: Listed,
}

/// How a guarded tool's name misses the name the harness sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    /// Another harness's name of the tool (`run_shell_command` in Claude Code), or an MCP
    /// tool in another harness's form: the hook denies each call of the tool.
    Spelling,
    /// A glob covering another harness's built-in, this one's name of which it does not
    /// cover (`run_shell*` in Claude Code): the hook denies each call of the tool.
    Glob(&'static str),
    /// A built-in named as no hook call carries it (`bash` or `bas*` in Claude Code, or
    /// Codex's shell by the model's name, `exec_command`): the hook denies each call of
    /// the tool.
    NotHookName,
    /// A pattern of another syntax (`Bash|Edit`, `mcp__billing__.*`, `[Bb]ash`: see
    /// [`crate::harness::pattern_meant`]), a name no tool has; `instead` is one of its
    /// alternatives as a name or `*` glob: the hook denies each call it covers.
    Pattern,
    /// This harness's built-in that does what the listed name's built-in does (the one
    /// given: `MultiEdit` beside Claude Code's `Edit`, by name or by a glob such as
    /// `Edi*`, or as another harness names it): the hook denies each call of it.
    Kin(&'static str),
}

/// Each name of `tools`, the guarded tools of a hook, that misses a tool as this harness
/// sends it (see [`Listed`]), where no name of the list covers that tool. The hook
/// denies such a call, as `hook::guarded_another_way` judges it.
pub fn mislisted(harness: Harness, tools: &[String]) -> Vec<MisListed> {
    let listed = |n: &str| tools.iter().any(|t| glob_match(t, n));
    let mut out = Vec::new();
    for tool in tools {
        let found = |instead: String, how| MisListed {
            tool: tool.clone(),
            instead,
            how,
        };
        if let Some(globs) = crate::harness::pattern_globs(harness, tool) {
            for glob in globs.into_iter().filter(|g| !listed(g)) {
                out.push(found(glob, Listed::Pattern));
            }
            continue;
        }
        let calls = crate::harness::hook_names_for(harness, tool);
        for call in &calls {
            if !listed(call) {
                out.push(found(call.to_string(), Listed::NotHookName));
            }
        }
        if !calls.is_empty() {
            continue;
        }
        // The built-ins the name stands for: its own, and this harness's names of
        // another harness's (`Edit` for Gemini CLI's `replace`), whose kin the hook
        // denies too.
        let mut meant = vec![tool.clone()];
        for (covered, instead) in crate::harness::glob_spellings(harness, tool) {
            meant.push(instead.clone());
            if !listed(&instead) {
                out.push(found(instead, Listed::Glob(covered)));
            }
        }
        for instead in crate::harness::misnamed(harness, tool, listed) {
            meant.push(instead.clone());
            out.push(found(instead, Listed::Spelling));
        }
        for name in &meant {
            for (covered, kin) in crate::harness::kin_left_out(harness, name) {
                let seen = |m: &MisListed| m.tool == *tool && m.instead == kin;
                if !listed(kin) && !out.iter().any(seen) {
                    out.push(found(kin.to_string(), Listed::Kin(covered)));
                }
            }
        }
    }
    out
}

/// A built-in of the harness that a record naming one that does the same does not name
/// (the store may name it elsewhere): the hook denies its calls until that record names
/// it too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnnamedKin {
    /// The first record naming `named` and not `kin`.
    pub id: String,
    /// The built-in the store names, or a glob covering it.
    pub named: String,
    /// The built-in that does the same, which that record does not name.
    pub kin: &'static str,
}

/// Each built-in of the harness that a record naming another that does the same (or a
/// glob covering it) does not name (Claude Code's `Monitor` and `PowerShell` beside
/// `Bash`), once, with the first such record.
pub fn unnamed_kin(harness: Harness, store: &Store) -> Vec<UnnamedKin> {
    let named = named_tools(store);
    let giving = Named::of(store.records());
    let mut out: Vec<UnnamedKin> = Vec::new();
    for tool in named.keys() {
        for (_, kin) in crate::harness::kin_left_out(harness, tool) {
            if out.iter().any(|u| u.kin == kin) {
                continue;
            }
            if let Some(id) = unbinding(store, &giving, tool, kin) {
                out.push(UnnamedKin {
                    id: id.to_string(),
                    named: tool.to_string(),
                    kin,
                });
            }
        }
    }
    out
}

/// The built-ins of the harness that change files which the store never names, beside
/// one it names: the gate binds a call only by the tool a record names, so a rule on
/// `Write` does not bind an `Edit` of the same file, and the call passes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnnamedFileTools {
    /// The first record naming `named`.
    pub id: String,
    /// The file-changing built-in the store names.
    pub named: String,
    /// The other built-ins that change files, which no record names (those of the same
    /// kind as a named one left out: [`unnamed_kin`] gives them).
    pub files: Vec<&'static str>,
    /// The shell tools, which can change any file, when no record names any.
    pub shells: Vec<&'static str>,
}

/// The file-changing built-ins of the harness ([`crate::harness::file_tools`]) and its
/// shell tools that the store never names (by name or glob), when it names one of the
/// first; `None` when it names none of them, or all.
pub fn unnamed_file_tools(harness: Harness, store: &Store) -> Option<UnnamedFileTools> {
    use crate::harness::{file_tools, shell_tools};
    let named = named_tools(store);
    let is_named = |tool: &str| named.keys().any(|n| crate::record::glob_match(n, tool));
    let (tool, id) = file_tools(harness).find_map(|t| {
        let (n, id) = named
            .iter()
            .find(|(n, _)| crate::record::glob_match(n, t))?;
        Some((if n.contains('*') { t } else { *n }, *id))
    })?;
    // A tool of the same kind as a named one is `unnamed_kin`'s: the hook denies its calls.
    let kin_named = |t: &str| {
        (named.keys()).any(|n| crate::harness::kin_left_out(harness, n).any(|(_, k)| k == t))
    };
    let files: Vec<&'static str> = file_tools(harness)
        .filter(|t| !is_named(t) && !kin_named(t))
        .collect();
    let shells: Vec<&'static str> = match shell_tools(harness).any(is_named) {
        true => Vec::new(),
        false => shell_tools(harness).collect(),
    };
    (!files.is_empty() || !shells.is_empty()).then(|| UnnamedFileTools {
        id: id.to_string(),
        named: tool.to_string(),
        files,
        shells,
    })
}

/// Whether `tool` is how another harness names a tool the store also names this
/// harness's way (`mcp_billing_refunds_create` in Gemini CLI beside
/// `mcp__billing__refunds_create` in a store Claude Code shares): the hook is not meant
/// to see it.
fn another_spelling_of_a_named(harness: Harness, tool: &str, named: &BTreeMap<&str, &str>) -> bool {
    Harness::ALL
        .into_iter()
        .filter(|other| *other != harness)
        .any(|other| {
            named
                .keys()
                .any(|n| spelling(other, n).as_deref() == Some(tool))
        })
}

/// The first record (its id) that binds calls of the harness's shell tool when the
/// harness also lets the model run commands a way no hook sees: Codex 0.171.0 runs no
/// hook for `write_stdin`, the input the model sends a command that `exec_command` left
/// running, so what it types into an interactive shell is never judged. `None` for the
/// other harnesses, and for a store that names no such tool.
pub fn typed_input_unjudged(harness: Harness, store: &Store) -> Option<&str> {
    if harness != Harness::Codex {
        return None;
    }
    let shell = Wiring::of(harness).shell_tool;
    store.records().iter().find_map(|r| {
        let names = r.tool_names();
        names
            .iter()
            .any(|n| crate::record::glob_match(n, shell))
            .then_some(r.id.as_str())
    })
}

/// Whether a hook group is one `init` wrote for this adapter: a handler whose command
/// runs an `omission-gate` binary's `hook <adapter>`.
pub fn is_ours(group: &Value, adapter: &str) -> bool {
    handlers(group).any(|h| runs_adapter(h, adapter))
}

/// The command handlers of a hook group.
pub fn handlers(group: &Value) -> impl Iterator<Item = &str> {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|h| h.get("command").and_then(Value::as_str))
}

/// The store `init` writes when there is none: one record of each kind the gate
/// evaluates, each with its `text`, all kept, named the way this harness names its tools
/// (the effect once for each of its tools that runs a shell command).
pub fn starter_store(harness: Harness) -> String {
    starter_store_for(&[harness])
}

/// The starter store for a project wired into several harnesses: each tool named as
/// every one of them names it (a policy's scope lists each name; an effect record names
/// one tool, so there is one per name). For one harness, [`starter_store`].
pub fn starter_store_for(harnesses: &[Harness]) -> String {
    let mut refunds: Vec<String> = Vec::new();
    let mut shells: Vec<&str> = Vec::new();
    for h in Harness::ALL.into_iter().filter(|h| harnesses.contains(h)) {
        let w = Wiring::of(h);
        let refund = w.mcp_tool("billing", "refunds_create");
        if !refunds.contains(&refund) {
            refunds.push(refund);
        }
        // The shell tool and the built-ins that run a command as it does (Claude Code's
        // `Monitor` and `PowerShell`): a store naming one of them only would have the
        // hook deny the others' calls.
        let kin = std::iter::once(w.shell_tool).chain(crate::harness::same_kind(h, w.shell_tool));
        for shell in kin {
            if !shells.contains(&shell) {
                shells.push(shell);
            }
        }
    }
    let scope: Vec<String> = refunds.iter().map(|r| format!("\"{r}\"")).collect();
    let mut records = vec![
        format!(
            r#"  {{"id": "rule-refund-approval", "seq": 1, "kind": "policy", "scope": [{}], "predicate": {{"field": "amount", "op": "gt", "value": 5000}}, "effect": "require_approval", "text": "Refunds over 5,000 need a human approver."}}"#,
            scope.join(", ")
        ),
        r#"  {"id": "fact-currency", "seq": 2, "kind": "fact", "field": "currency", "value": "USD", "text": "The account is billed in USD."}"#.to_string(),
    ];
    let mut ids = vec![
        "rule-refund-approval".to_string(),
        "fact-currency".to_string(),
    ];
    for (i, shell) in shells.iter().enumerate() {
        let id = if i == 0 {
            "done-invoice-7741".to_string()
        } else {
            format!("done-invoice-7741-{shell}")
        };
        records.push(format!(
            r#"  {{"id": "{id}", "seq": {}, "kind": "effect", "tool": "{shell}", "match": {{"command": "./scripts/send-invoice.sh 7741"}}, "text": "The corrected invoice for ticket 7741 was already emailed."}}"#,
            records.len() + 1
        ));
        ids.push(id);
    }
    records.push(format!(
        r#"  {{"id": "note-ticket-7741", "seq": {}, "kind": "chatter", "text": "Ticket 7741: the customer asks for a refund of a duplicate charge."}}"#,
        records.len() + 1
    ));
    ids.push("note-ticket-7741".to_string());
    let kept: Vec<String> = ids.iter().map(|id| format!("\"{id}\"")).collect();
    format!(
        "{{\"records\": [\n{}\n],\n \"kept\": [{}]}}\n",
        records.join(",\n"),
        kept.join(", ")
    )
}

/// The harnesses whose starter store `text` is, byte for byte: an example nobody has
/// edited yet, which `init` may rewrite to name another harness's tools too.
pub fn starter_store_of(text: &str) -> Option<Vec<Harness>> {
    // Every set of harnesses, the smaller first: one project may be wired into any of them.
    let mut sets: Vec<Vec<Harness>> = (1..1u32 << Harness::ALL.len())
        .map(|bits| {
            (Harness::ALL.iter().enumerate())
                .filter(|(i, _)| bits >> i & 1 == 1)
                .map(|(_, h)| *h)
                .collect()
        })
        .collect();
    sets.sort_by_key(Vec::len);
    sets.into_iter().find(|set| starter_store_for(set) == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_store_loads_and_names_the_harness_tools() {
        // Claude Code's effect once for each tool that runs a shell command.
        for (h, records) in [
            (Harness::ClaudeCode, 6),
            (Harness::Codex, 4),
            (Harness::GeminiCli, 4),
        ] {
            let text = starter_store(h);
            let input =
                crate::input::load("s", text.as_bytes(), crate::record::Limits::default()).unwrap();
            assert_eq!(input.store.len(), records, "{h:?}");
            assert_eq!(input.kept.as_ref().map(Vec::len), Some(records));
        }
        for shell in ["Bash", "Monitor", "PowerShell"] {
            assert!(starter_store(Harness::ClaudeCode).contains(&format!("\"tool\": \"{shell}\"")));
        }
        assert!(starter_store(Harness::GeminiCli).contains("\"mcp_billing_refunds_create\""));
        assert!(starter_store(Harness::GeminiCli).contains("\"run_shell_command\""));
        assert!(starter_store(Harness::Codex).contains("\"mcp__billing__refunds_create\""));
        // Shared by every harness: each tool under each harness's name, and recognised.
        let shared = starter_store_for(&Harness::ALL);
        let input =
            crate::input::load("s", shared.as_bytes(), crate::record::Limits::default()).unwrap();
        assert_eq!(input.store.len(), 7);
        // Codex names these tools as Claude Code does: the smallest set is found.
        let cc_gemini = vec![Harness::ClaudeCode, Harness::GeminiCli];
        assert_eq!(starter_store_for(&cc_gemini), shared);
        assert_eq!(starter_store_of(&shared), Some(cc_gemini));
        // Every set's store is recognised as one that writes it.
        for bits in 1..1u32 << Harness::ALL.len() {
            let set: Vec<Harness> = (Harness::ALL.iter().enumerate())
                .filter(|(i, _)| bits >> i & 1 == 1)
                .map(|(_, h)| *h)
                .collect();
            let text = starter_store_for(&set);
            let found = starter_store_of(&text).unwrap();
            assert_eq!(starter_store_for(&found), text, "{set:?}");
            assert!(found.len() <= set.len(), "{set:?}");
        }
        assert_eq!(
            starter_store_of(&starter_store(Harness::GeminiCli)),
            Some(vec![Harness::GeminiCli])
        );
        assert_eq!(starter_store_of(&shared.replace("USD", "EUR")), None);
        for h in Harness::ALL {
            assert_eq!(
                unguarded(h, Some(Wiring::of(h).matcher), &input.store),
                [],
                "{h:?}"
            );
        }
    }

    #[test]
    fn the_pre_tool_event_spelt_otherwise_is_near_it_and_other_events_are_not() {
        use Harness::{ClaudeCode, Codex, GeminiCli};
        for (h, key) in [
            (ClaudeCode, "preToolUse"),
            (ClaudeCode, "pretooluse"),
            (ClaudeCode, "PreToolUSE"),
            (ClaudeCode, "PreTooluse"),
            (ClaudeCode, "PreToolUs"),
            (ClaudeCode, "BeforeTool"),
            (Codex, "pre_tool_use"),
            (Codex, "Pre-Tool-Use"),
            (GeminiCli, "beforeTool"),
            (GeminiCli, "before_tool"),
            (GeminiCli, "BeforeTOOL"),
            (GeminiCli, "PreToolUse"),
        ] {
            assert!(near_event(h, key), "{h:?} {key}");
        }
        for (h, key) in [
            (ClaudeCode, "PreToolUse"),
            (ClaudeCode, "PostToolUse"),
            (ClaudeCode, "PreCompact"),
            (Codex, "PostToolUse"),
            (Codex, "PermissionRequest"),
            (GeminiCli, "BeforeTool"),
            (GeminiCli, "AfterTool"),
            (GeminiCli, "BeforeToolSelection"),
            (GeminiCli, "BeforeModel"),
            (GeminiCli, "PreCompress"),
        ] {
            assert!(!near_event(h, key), "{h:?} {key}");
        }
        let v = serde_json::json!({"hooks": {
            "preToolUse": [{"hooks": [{"type": "command", "command": "/bin/omission-gate hook claude-code || exit 2"}]}],
            "pretooluse": [{"hooks": [{"type": "command", "command": "other"}]}]
        }});
        assert_eq!(
            misspelt_events(ClaudeCode, &v, "claude-code"),
            ["preToolUse"]
        );
    }

    /// A store of one policy, `r`, of this `scope` (JSON).
    fn load(scope: &str) -> Store {
        let text = format!(
            r#"{{"records": [{{"id": "r", "seq": 1, "kind": "policy", "scope": {scope}, "predicate": {{"all": []}}, "effect": "deny"}}], "kept": []}}"#
        );
        crate::input::load("s", text.as_bytes(), crate::record::Limits::default())
            .unwrap()
            .store
    }

    #[test]
    fn unnamed_kin_are_those_a_record_s_name_or_glob_does_not_cover() {
        let kin = |named: &str, kin| UnnamedKin {
            id: "r".into(),
            named: named.into(),
            kin,
        };
        let cc = Harness::ClaudeCode;
        // A glob that covers `Edit` and not `MultiEdit` binds only `Edit`, as `Edit` does.
        assert_eq!(
            unnamed_kin(cc, &load(r#"["Edi*"]"#)),
            [kin("Edi*", "MultiEdit")]
        );
        assert_eq!(
            unnamed_kin(cc, &load(r#"["Edit"]"#)),
            [kin("Edit", "MultiEdit")]
        );
        assert_eq!(
            unnamed_kin(cc, &load(r#"["Bas*"]"#)),
            [kin("Bas*", "Monitor"), kin("Bas*", "PowerShell")]
        );
        for scope in [r#"["*Edit"]"#, r#""*""#, r#"["Edi*", "MultiEdit"]"#] {
            assert_eq!(unnamed_kin(cc, &load(scope)), [], "{scope}");
        }
        // Named once, by `unnamed_kin`, not again as a file tool the store never names.
        let files = unnamed_file_tools(cc, &load(r#"["Edi*"]"#)).unwrap().files;
        assert!(!files.contains(&"MultiEdit"), "{files:?}");
    }

    #[test]
    fn unnamed_file_tools_are_those_a_glob_does_not_cover_either() {
        let cc = Harness::ClaudeCode;
        // Every tool, or none that changes files: nothing to say.
        for scope in [r#""*""#, r#""mcp__*""#, r#"["Bash"]"#] {
            assert_eq!(unnamed_file_tools(cc, &load(scope)), None, "{scope}");
        }
        // A glob names what it covers, and stands for the tool it first covers.
        assert_eq!(
            unnamed_file_tools(cc, &load(r#"["*Edit", "Bash", "Monitor", "PowerShell"]"#)),
            Some(UnnamedFileTools {
                id: "r".into(),
                named: "Edit".into(),
                files: vec!["Write"],
                shells: vec![],
            })
        );
        // Named for another harness only: this harness's names are misnamed's to give.
        assert_eq!(
            unnamed_file_tools(Harness::GeminiCli, &load(r#"["Write"]"#)),
            None
        );
    }

    #[test]
    fn unguarded_names_each_tool_the_hook_never_sees() {
        let text = r#"{"records": [
          {"id": "a", "seq": 1, "kind": "policy", "scope": ["mcp__billing__refunds_create", "deploy"], "predicate": {"all": []}, "effect": "deny"},
          {"id": "b", "seq": 2, "kind": "effect", "tool": "Bash", "match": {}},
          {"id": "c", "seq": 3, "kind": "policy", "scope": "mcp__ops__*", "predicate": {"all": []}, "effect": "deny"}
        ], "kept": []}"#;
        let store = crate::input::load("s", text.as_bytes(), crate::record::Limits::default())
            .unwrap()
            .store;
        let cc = Wiring::of(Harness::ClaudeCode);
        assert_eq!(
            unguarded(Harness::ClaudeCode, Some(cc.matcher), &store),
            [Unguarded::Missed {
                id: "a".into(),
                tool: "deploy".into()
            }]
        );
        let g = Wiring::of(Harness::GeminiCli);
        assert_eq!(
            unguarded(Harness::GeminiCli, Some(g.matcher), &store),
            [
                Unguarded::Misnamed {
                    id: "b".into(),
                    tool: "Bash".into(),
                    instead: "run_shell_command".into()
                },
                Unguarded::Missed {
                    id: "a".into(),
                    tool: "deploy".into()
                },
                Unguarded::Misnamed {
                    id: "a".into(),
                    tool: "mcp__billing__refunds_create".into(),
                    instead: "mcp_billing_refunds_create".into()
                },
                Unguarded::Misnamed {
                    id: "c".into(),
                    tool: "mcp__ops__*".into(),
                    instead: "mcp_ops_*".into()
                },
            ]
        );
        // A built-in named as no hook call carries it: whatever the matcher selects.
        let cased = r#"{"records": [
          {"id": "s", "seq": 1, "kind": "policy", "scope": ["bash", "exec_command"], "predicate": {"all": []}, "effect": "deny"}
        ], "kept": []}"#;
        let cased = crate::input::load("s", cased.as_bytes(), crate::record::Limits::default())
            .unwrap()
            .store;
        let not_hook_name = |tool: &str, instead: &str| Unguarded::NotHookName {
            id: "s".into(),
            tool: tool.into(),
            covers: None,
            instead: instead.into(),
        };
        let missed = Unguarded::Missed {
            id: "s".into(),
            tool: "exec_command".into(),
        };
        assert_eq!(
            unguarded(Harness::ClaudeCode, Some(cc.matcher), &cased),
            [not_hook_name("bash", "Bash"), missed]
        );
        for m in [Some("Bash|bash|exec_command"), None] {
            assert_eq!(
                unguarded(Harness::ClaudeCode, m, &cased),
                [not_hook_name("bash", "Bash")],
                "{m:?}"
            );
        }
        let codex = Wiring::of(Harness::Codex);
        assert_eq!(
            unguarded(Harness::Codex, Some(codex.matcher), &cased),
            [
                not_hook_name("bash", "Bash"),
                not_hook_name("exec_command", "Bash")
            ]
        );
        // A glob that covers a built-in only in another case, whatever the matcher; one
        // that covers another harness's name for it too is reported as that alone.
        let globs = |scope: &str| {
            let doc = format!(
                r#"{{"records": [{{"id": "g", "seq": 1, "kind": "policy", "scope": {scope}, "predicate": {{"all": []}}, "effect": "deny"}}], "kept": []}}"#
            );
            let limits = crate::record::Limits::default();
            crate::input::load("g", doc.as_bytes(), limits)
                .unwrap()
                .store
        };
        let cased = |tool: &str, instead: &str| Unguarded::NotHookName {
            id: "g".into(),
            tool: tool.into(),
            covers: Some(format!("covers `{instead}` only in another case")),
            instead: instead.into(),
        };
        for m in [Some(cc.matcher), None] {
            assert_eq!(
                unguarded(Harness::ClaudeCode, m, &globs(r#"["bas*"]"#)),
                [cased("bas*", "Bash")],
                "{m:?}"
            );
        }
        assert_eq!(
            unguarded(Harness::GeminiCli, None, &globs(r#"["RUN_*", "W*"]"#)),
            [
                cased("RUN_*", "run_shell_command"),
                Unguarded::OtherHarnessGlob {
                    id: "g".into(),
                    tool: "W*".into(),
                    covered: "Write",
                    instead: "write_file".into()
                }
            ]
        );
        // Named as the harness sends it too: the hook judges by that name.
        let both = r#"{"records": [
          {"id": "s", "seq": 1, "kind": "policy", "scope": ["bash", "Bash"], "predicate": {"all": []}, "effect": "deny"}
        ], "kept": []}"#;
        let both = crate::input::load("s", both.as_bytes(), crate::record::Limits::default())
            .unwrap()
            .store;
        assert_eq!(unguarded(Harness::ClaudeCode, Some(cc.matcher), &both), []);
        // A rule over every tool is out of sight of any matcher but `*` (or none).
        let every = r#"{"records": [
          {"id": "all", "seq": 1, "kind": "policy", "scope": "*", "predicate": {"all": []}, "effect": "deny"}
        ], "kept": []}"#;
        let every = crate::input::load("s", every.as_bytes(), crate::record::Limits::default())
            .unwrap()
            .store;
        for h in [Harness::ClaudeCode, Harness::Codex, Harness::GeminiCli] {
            assert_eq!(
                unguarded(h, Some(Wiring::of(h).matcher), &every),
                [Unguarded::Missed {
                    id: "all".into(),
                    tool: "*".into()
                }]
            );
            for m in [None, Some("*"), Some(""), Some(".*")] {
                assert_eq!(unguarded(h, m, &every), []);
            }
        }
        // A matcher that selects Bash but not the other tools that run shell commands.
        let shell = r#"{"records": [
          {"id": "b", "seq": 1, "kind": "effect", "tool": "Bash", "match": {}}
        ], "kept": []}"#;
        let shell = crate::input::load("s", shell.as_bytes(), crate::record::Limits::default())
            .unwrap()
            .store;
        let sibling = |s: &str| Unguarded::Sibling {
            id: "b".into(),
            tool: "Bash".into(),
            sibling: s.into(),
        };
        let old = "Bash|Edit|MultiEdit|Write|NotebookEdit|mcp__.*";
        assert_eq!(
            unguarded(Harness::ClaudeCode, Some(old), &shell),
            [sibling("Monitor"), sibling("PowerShell")]
        );
        assert_eq!(unguarded(Harness::ClaudeCode, Some(cc.matcher), &shell), []);
        // Codex: a rule on its shell tool (by name or glob) does not cover `write_stdin`.
        assert_eq!(typed_input_unjudged(Harness::Codex, &every), Some("all"));
        for h in [Harness::ClaudeCode, Harness::GeminiCli] {
            assert_eq!(typed_input_unjudged(h, &every), None);
        }
        let mcp_only = r#"{"records": [
          {"id": "r", "seq": 1, "kind": "policy", "scope": "mcp__*", "predicate": {"all": []}, "effect": "deny"}
        ], "kept": []}"#;
        let mcp_only =
            crate::input::load("s", mcp_only.as_bytes(), crate::record::Limits::default())
                .unwrap()
                .store;
        assert_eq!(typed_input_unjudged(Harness::Codex, &mcp_only), None);
        assert_eq!(
            spelling(Harness::Codex, "Edit").as_deref(),
            Some("apply_patch")
        );
        assert_eq!(spelling(Harness::ClaudeCode, "mcp__a__b"), None);
    }
}
