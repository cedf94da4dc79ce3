//! Hook adapters: the gate spoken in the protocols of agent harnesses.
//!
//! Three pre-tool adapters (Claude Code and Codex `PreToolUse`, Gemini CLI `BeforeTool`)
//! turn the harness's payload into an action, run `check` against the record store and
//! answer in the harness's own terms; one adapter answers Claude Code's `PreCompact`
//! event with preservation instructions for the summarizer.
//!
//! Everything here is pure: payload bytes and an already-loaded store go in, the bytes
//! to print and the exit code come out. The CLI reads stdin and the store, enforces the
//! deadline and writes the reply.
//!
//! The pre-tool adapters fail closed. Most harnesses run the tool when a hook crashes,
//! times out or exits with a code they do not treat as a block, so a malformed payload,
//! a payload for another event, an unreadable or invalid store, our own deadline and an
//! internal error are all denials, never a silent pass. A deny is exit 2 with the reason
//! on stderr, which all three harnesses read as a block when stderr is not empty and
//! which nothing printed on stdout (a shell profile's echo) can spoil; when stderr cannot
//! be written it falls back to the harness's JSON deny on stdout with exit 0. A PASS
//! prints nothing and exits 0: never "allow", which would skip the user's own permission
//! prompts. The PreCompact adapter is the opposite: it never blocks a compaction (an
//! automatic one at the context limit would deadlock the session), and its failures are
//! non-blocking errors.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::action::{Action, Tool};
use crate::compaction::{Compaction, Retention};
use crate::error::{InputError, InputProblem, PayloadProblem, Reason, TranscriptRead};
use crate::gate::{self, CheckOptions, Code, Exit, Severity, Verdict};
use crate::input::Input;
use crate::json;
use crate::json::json_text;
use crate::predicate::{Predicate, check_numbers};
use crate::record::{Kind, Record, Store, glob_match};
use crate::report::{self, Format, Mode, Pinned, Report};
use crate::text::{clean, one_line};
use crate::view::Context;

/// Where the payload came from, in messages.
const PAYLOAD: &str = "payload";

/// Where in the payload the call's own arguments are: a problem there is this call's,
/// and the same call made another way may pass.
const TOOL_INPUT: &str = "key `tool_input`";

/// Width of the labels in a deny reason, as in the text report.
const LABEL_WIDTH: usize = 10;

/// At most this many findings, and this many records, are spelt out in a deny reason;
/// the report's sha256 stands for the rest.
const MAX_SHOWN: usize = 8;

pub use crate::harness::Harness;

impl Harness {
    /// The `hook_event_name` of the harness's pre-tool event.
    pub fn event(self) -> &'static str {
        match self {
            Harness::ClaudeCode | Harness::Codex => "PreToolUse",
            Harness::GeminiCli => "BeforeTool",
        }
    }
}

/// Which hook is being answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Adapter {
    /// A harness's pre-tool event: deny or stay silent.
    PreTool(Harness),
    /// Claude Code's `PreCompact` event: preservation instructions, never a block.
    PreCompact,
}

/// The gate's side of a hook: the record store and what the flags said.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The loaded store (a document or JSON Lines).
    pub input: Input,
    /// The store's path as given, for messages.
    pub store: String,
    /// Kept ids from `--kept`, overriding the document's `kept`.
    pub kept: Option<Vec<String>>,
    /// Where the kept ids came from, for messages.
    pub kept_origin: String,
    /// How the kept set is obtained.
    pub retention: Retention,
    /// Tool names or `*` globs from `--tools`, overriding the document's `tools`.
    pub tools: Option<Vec<String>>,
    /// `--allow-unevaluable` and the like.
    pub options: CheckOptions,
    /// Where the kept set comes from.
    pub kept_from: KeptFrom,
    /// Under [`KeptFrom::Transcript`]: the agent's context read from the payload's
    /// transcript, or why it could not be read (`None` until it has been read).
    pub context: Option<Result<Context, Unread>>,
    /// The compaction the loader computed with the store, for the payload's call (a lean
    /// load holds only the records that call can consult, so the kept ids cannot be
    /// matched against it again); `None`: computed from `kept` and `retention`.
    pub compaction: Option<Compaction>,
}

/// Where a hook's kept set comes from (`--kept-from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeptFrom {
    /// The kept ids: `--kept`, else the store document's `kept`, under `--retention`.
    #[default]
    Kept,
    /// The records in view of the session transcript the payload names (SPEC 10).
    Transcript,
}

/// The transcript a pre-tool payload names, and the call it asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptRequest {
    /// The payload's `transcript_path`.
    pub path: String,
    /// The payload's `tool_use_id`, when it has one: the transcript is fresh once it
    /// records this call.
    pub call: Option<String>,
    /// Claude Code: the subagent that makes the call (the payload's `agent_id`), whose
    /// own transcript, beside `path`, is read instead.
    pub subagent: Option<Subagent>,
    /// Gemini CLI: the payload's `session_id`. Its payload names no call that the file
    /// would have to record, so the file must at least be that session's.
    pub session: Option<String>,
    /// Gemini CLI: the payload's `cwd`, the directory it started in, whose
    /// `.gemini/settings.json` it read (some settings change what it sends the model).
    pub cwd: Option<String>,
}

/// A Claude Code subagent that makes the call, and where its transcript is filed:
/// `<session without .jsonl>/subagents/agent-<id>.jsonl`, or the one file of that name
/// one folder further down (where Claude Code files a subagent under a group). The file
/// is looked for at each look at it, not once: Claude Code may file it while the hook
/// waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subagent {
    /// The payload's `agent_id`, a plain name.
    id: String,
    /// The session's `subagents` folder.
    folder: std::path::PathBuf,
    /// The payload's `agent_type`, when it is a string.
    kind: Option<String>,
}

impl Subagent {
    /// The subagent `agent`, of type `kind`, of the session whose transcript is `session`.
    fn new(session: &str, agent: &str, kind: Option<&str>) -> Result<Subagent, InputError> {
        if !crate::text::is_plain_name(agent) {
            let problem = PayloadProblem::NotAgentId(agent.to_string());
            return Err(invalid("key `agent_id`", problem));
        }
        let Some(stem) = session.strip_suffix(".jsonl") else {
            let problem = PayloadProblem::NotJsonl {
                path: session.to_string(),
                agent: agent.to_string(),
            };
            return Err(invalid("key `transcript_path`", problem));
        };
        Ok(Subagent {
            id: agent.to_string(),
            folder: std::path::Path::new(stem).join("subagents"),
            kind: kind.map(str::to_string),
        })
    }

    /// Its type (the payload's `agent_type`), when the payload gives it.
    pub fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    /// The session's `subagents` folder, where its transcript is filed.
    pub fn folder(&self) -> &std::path::Path {
        &self.folder
    }

    /// The name of its transcript file, `agent-<id>.jsonl`.
    pub fn file_name(&self) -> String {
        format!("agent-{}.jsonl", self.id)
    }

    /// The error for two files that answer to its name: the gate cannot tell which one
    /// the subagent sees.
    pub fn two_transcripts(&self, first: &str, second: &str) -> InputError {
        let problem = PayloadProblem::TwoTranscripts {
            agent: self.id.clone(),
            first: first.to_string(),
            second: second.to_string(),
        };
        invalid("key `agent_id`", problem)
    }
}

/// Why the agent's context could not be read from the transcript a payload names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// Not written yet when the wait ended: the file missing, empty, shrinking, not yet
    /// recording the call being judged, or a Gemini CLI subagent's file half-written.
    /// The harness may write it a moment later, so the call may pass when it is retried.
    NotYet(InputError),
    /// Anything else (no transcript named, an unknown or malformed one): the same call
    /// fails the same way again.
    Invalid(InputError),
}

impl From<Unread> for InputError {
    fn from(unread: Unread) -> InputError {
        match unread {
            Unread::NotYet(e) | Unread::Invalid(e) => e,
        }
    }
}

/// The transcript to read before answering, under `--kept-from transcript`: `None` when
/// the answer does not depend on it (a payload the adapter refuses anyway, a tool the
/// gate does not guard); an error when the payload names no transcript.
pub fn transcript_request(
    harness: Harness,
    payload: &[u8],
    setup: &Setup,
) -> Option<Result<TranscriptRequest, InputError>> {
    if setup.kept_from != KeptFrom::Transcript {
        return None;
    }
    let action = pre_tool_action(harness, payload).ok()?;
    if !setup.guards(&action.tool) {
        return None;
    }
    requested_transcript(harness, payload)
}

/// The transcript a pre-tool payload names and the call it asks about, whatever the
/// setup: `None` for a payload the adapter refuses anyway.
pub fn requested_transcript(
    harness: Harness,
    payload: &[u8],
) -> Option<Result<TranscriptRequest, InputError>> {
    let obj = payload_object(payload, harness.event(), harness.name()).ok()?;
    let path = match obj.get("transcript_path") {
        Some(Value::String(p)) if !p.is_empty() => p.clone(),
        Some(Value::String(_)) | Some(Value::Null) | None => {
            let problem = PayloadProblem::NoTranscript;
            return Some(Err(invalid("key `transcript_path`", problem)));
        }
        Some(_) => {
            let problem = PayloadProblem::NotString;
            return Some(Err(invalid("key `transcript_path`", problem)));
        }
    };
    // Claude Code and Codex name the call in every pre-tool payload, and Claude Code
    // writes its transcript after it calls the hook: without the id the gate cannot tell
    // a fresh transcript from a stale one. Gemini CLI names no call.
    let call = match (harness, obj.get("tool_use_id")) {
        (_, Some(Value::String(id))) if !id.is_empty() => Some(id.clone()),
        (Harness::GeminiCli, None) => None,
        (Harness::GeminiCli, Some(_)) => {
            let problem = PayloadProblem::NotNonEmptyString;
            return Some(Err(invalid("key `tool_use_id`", problem)));
        }
        (Harness::ClaudeCode | Harness::Codex, _) => {
            let problem = PayloadProblem::NoCall;
            return Some(Err(invalid("key `tool_use_id`", problem)));
        }
    };
    // A subagent's call (Claude Code's Agent tool) names the session's transcript; what
    // the subagent sees is its own, beside it.
    let subagent = match (harness, obj.get("agent_id")) {
        (Harness::ClaudeCode, Some(Value::String(agent))) => {
            let kind = obj.get("agent_type").and_then(Value::as_str);
            match Subagent::new(&path, agent, kind) {
                Ok(subagent) => Some(subagent),
                Err(e) => return Some(Err(e)),
            }
        }
        (Harness::ClaudeCode, Some(_)) => {
            let problem = PayloadProblem::NotString;
            return Some(Err(invalid("key `agent_id`", problem)));
        }
        _ => None,
    };
    // Gemini CLI names the session in every pre-tool payload (with no call to wait for,
    // it is what ties the file to the caller's session), and the directory it started in
    // (whose settings it read).
    let gemini = |key: &str, problem: PayloadProblem| match (harness, obj.get(key)) {
        (Harness::GeminiCli, Some(Value::String(v))) if !v.is_empty() => Ok(Some(v.clone())),
        (Harness::GeminiCli, _) => Err(invalid(&format!("key `{key}`"), problem)),
        _ => Ok(None),
    };
    let session = match gemini("session_id", PayloadProblem::NoSession) {
        Ok(session) => session,
        Err(e) => return Some(Err(e)),
    };
    let cwd = match gemini("cwd", PayloadProblem::NoCwd) {
        Ok(cwd) => cwd,
        Err(e) => return Some(Err(e)),
    };
    Some(Ok(TranscriptRequest {
        path,
        call,
        subagent,
        session,
        cwd,
    }))
}

impl Setup {
    /// Whether the gate judges calls of `tool`: a guarded tool, or one that a policy's
    /// scope or an effect record in the store names (a glob covering it included), so
    /// that no rule in the store is silently out of the gate's sight.
    fn guards(&self, tool: &str) -> bool {
        let Some(tools) = self.tools() else {
            return true;
        };
        tools.iter().any(|t| glob_match(t, tool)) || self.names(tool)
    }

    /// Whether a policy's scope or an effect record in the store names `tool` (a glob
    /// covering it included): some record binds its calls.
    fn names(&self, tool: &str) -> bool {
        self.input.store.records().iter().any(|r| match &r.kind {
            Kind::Policy(p) => p.scope.iter().any(|s| glob_match(s, tool)),
            Kind::Effect(e) => glob_match(&e.tool, tool),
            _ => false,
        })
    }

    /// Whether a policy's scope or an effect record of the input, held or not, names
    /// `tool` as [`covers_as`] says.
    fn names_as(&self, harness: Harness, tool: &str) -> bool {
        self.input
            .totals
            .named
            .iter()
            .any(|n| covers_as(harness, n, tool))
    }

    /// The guarded tools: `--tools`, else the document's `tools`, else none named (every
    /// tool is guarded).
    pub(crate) fn tools(&self) -> Option<Vec<String>> {
        self.tools.clone().or_else(|| {
            self.input
                .tools
                .as_ref()
                .map(|ts| ts.iter().map(|t| t.name.clone()).collect())
        })
    }
}

/// Why a hook could not be answered from its payload and store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The payload or the store could not be read.
    Input(InputError),
    /// No answer within the deadline, in milliseconds: a matter of timing (a busy
    /// machine, a slow disk), so the call may pass when it is retried.
    Timeout(u64),
    /// A bug: the gate did not return.
    Internal,
}

/// What a pre-tool adapter decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Nothing dropped binds the call, or the tool is not guarded: stay silent.
    Pass,
    /// Deny, with the reason the model reads.
    Deny(String),
}

/// The bytes to print and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// For stdout.
    pub stdout: Vec<u8>,
    /// For stderr.
    pub stderr: Vec<u8>,
    /// How the process ends.
    pub exit: Exit,
    /// What to print instead when this reply cannot be written: a pre-tool deny goes out
    /// as exit 2 with the reason on stderr, and falls back to the harness's JSON deny on
    /// stdout with exit 0. When neither can be written, the exit code is the larger of
    /// the two (2 for a deny, which Claude Code blocks on even with nothing written).
    pub fallback: Option<Box<Reply>>,
}

impl Reply {
    fn silent() -> Reply {
        Reply {
            stdout: Vec::new(),
            stderr: Vec::new(),
            exit: Exit::Success,
            fallback: None,
        }
    }
}

/// Answers a hook from its payload and the loaded store (or the error loading it).
pub fn answer(adapter: Adapter, payload: &[u8], setup: Result<&Setup, &InputError>) -> Reply {
    match adapter {
        Adapter::PreTool(h) => reply(h, &decide(h, payload, setup)),
        Adapter::PreCompact => pre_compact(payload, setup),
    }
}

/// The reply when the hook could not be answered at all.
pub fn failed(adapter: Adapter, failure: &Failure) -> Reply {
    match adapter {
        Adapter::PreTool(h) => reply(h, &Answer::Deny(failure_reason(failure))),
        Adapter::PreCompact => compact_error(&match failure {
            Failure::Input(e) => e.to_string(),
            Failure::Timeout(ms) => format!("no answer within {ms} ms"),
            Failure::Internal => "internal error".to_string(),
        }),
    }
}

/// The pre-tool decision: PASS or a deny with its reason.
pub fn decide(harness: Harness, payload: &[u8], setup: Result<&Setup, &InputError>) -> Answer {
    let action = match pre_tool_action(harness, payload) {
        Ok(a) => a,
        Err(e) => return refuse(&e),
    };
    let setup = match setup {
        Ok(s) => s,
        Err(e) => return refuse(e),
    };
    let raw = configured_mcp_name(harness, payload, &action.tool);
    if let Some(err) = named_another_way(harness, &action.tool, raw.as_deref(), setup) {
        return refuse_with(&err, Retry::Misnamed);
    }
    if let Some(err) = guarded_another_way(harness, &action.tool, setup) {
        return refuse_with(&err, Retry::Misnamed);
    }
    // Codex applies a patch the model runs through the shell (`apply_patch <<'EOF'`)
    // itself, and the hook sees a `Bash` call: rules on `apply_patch` (or naming it as
    // another harness does, `Write`) would not bind it. Guarded tools that list the patch
    // tool (and so leave `Bash` out, or the store would not matter) are as much a way
    // round.
    let lists_patch =
        || (setup.tools()).is_some_and(|ts| ts.iter().any(|t| covers_as(harness, t, PATCH_TOOL)));
    if harness == Harness::Codex
        && shell_patch(&action)
        && (setup.names_as(harness, PATCH_TOOL) || lists_patch())
    {
        let err = InputError::invalid(PAYLOAD, TOOL_INPUT, PayloadProblem::ShellPatch);
        return refuse_with(&err, Retry::Reshape);
    }
    if !setup.guards(&action.tool) {
        // Outside the gate's charge, as if the harness's matcher had not matched.
        return Answer::Pass;
    }
    if let Some(problem) = action.params.values().find_map(not_a_double) {
        let err = InputError::invalid(PAYLOAD, TOOL_INPUT, problem);
        return refuse_with(&err, Retry::Reshape);
    }
    let store = &setup.input.store;
    let (compaction, context) = match (setup.kept_from, &setup.context) {
        // A compaction the loader computed from this context (the lean loader is given
        // the records in view as its kept ids): only one under retention `transcript`.
        (KeptFrom::Transcript, Some(Ok(context)))
            if setup
                .compaction
                .as_ref()
                .is_some_and(|c| c.retention == Retention::Transcript(context.live.harness)) =>
        {
            (None, Some(context))
        }
        (KeptFrom::Transcript, Some(Ok(context))) => {
            (Some(context.compaction(store)), Some(context))
        }
        (KeptFrom::Transcript, Some(Err(Unread::NotYet(e)))) => {
            let retry = match e {
                InputError::Invalid { reason, .. }
                    if matches!(
                        **reason,
                        Reason::TranscriptRead(TranscriptRead::NotWritten { .. })
                    ) =>
                {
                    Retry::NoTranscript
                }
                _ => Retry::MayPass,
            };
            return refuse_with(e, retry);
        }
        (KeptFrom::Transcript, Some(Err(Unread::Invalid(e)))) => return refuse(e),
        (KeptFrom::Transcript, None) => {
            let problem = PayloadProblem::TranscriptNotRead;
            return refuse(&invalid("key `transcript_path`", problem));
        }
        (KeptFrom::Kept, _) if setup.compaction.is_some() => (None, None),
        (KeptFrom::Kept, _) => {
            let kept = setup.kept.as_deref().or(setup.input.kept.as_deref());
            match Compaction::new(store, setup.retention, kept) {
                Ok(c) => (Some(c), None),
                Err(e) => return refuse(&setup.input.kept_error(&setup.kept_origin, e)),
            }
        }
    };
    // Codex runs no hook for what the model types into a command that has a terminal: a
    // guarded tool's call that starts one would let anything after it run unjudged.
    if let Some(context) = context
        && let Some(call) = &context.live.terminal
    {
        // In code mode the call recorded, and named here, is the `exec` call that makes
        // the one judged.
        let judged = requested_transcript(harness, payload).and_then(|r| r.ok()?.call);
        let problem = if judged.as_ref() == Some(call) {
            TranscriptRead::Terminal(call.clone())
        } else {
            TranscriptRead::ExecTerminal(call.clone())
        };
        let err = InputError::invalid(&context.file, "transcript", problem);
        return refuse_with(&err, Retry::Reshape);
    }
    let Some(compaction) = compaction.as_ref().or(setup.compaction.as_ref()) else {
        return refuse(&invalid("kept", PayloadProblem::NoKeptSet));
    };
    let totals = &setup.input.totals;
    let outcome = gate::check(store, compaction, totals, &action, setup.options);
    if outcome.verdict == Verdict::Pass {
        return Answer::Pass;
    }
    let mut report = Report::check(&action, compaction, totals, outcome);
    report.transcript = context.map(Context::summary);
    Answer::Deny(deny_reason(&report, Some(store), Retry::Futile))
}

/// The error for a call of `tool` that a rule of the store is meant to bind but names
/// otherwise, so that no rule naming only that name binds the call and it would pass:
/// as another harness names the tool (`Bash` for Gemini CLI's `run_shell_command`,
/// `mcp__s__t` for its `mcp_s_t`; `mcp_s_t` for Claude Code's `mcp__s__t`), as another
/// built-in of this harness that does the same (`Edit` for Claude Code's `MultiEdit`), or
/// as this harness never sends an MCP tool (`mcp__my.server__t` for Claude Code's
/// `mcp__my_server__t`, a long name Gemini CLI or Codex cuts; `raw`, Gemini CLI's
/// payload's server and tool as configured, is matched too). Judged record by record:
/// a name is fine when each policy giving it names the call's tool beside it (and each
/// effect giving it has a twin, an effect of the call's tool with the same `match`), so
/// that each record binds the call by a name it gives; a store that names the call's
/// tool only in other records is not (a dropped `deny` on `bash` would never bind a
/// `Bash` call, whatever a kept rule on `Bash` says). From the names the load gathered
/// from every record, held or not.
fn named_another_way(
    harness: Harness,
    tool: &str,
    raw: Option<&str>,
    setup: &Setup,
) -> Option<InputError> {
    let named = &setup.input.totals.named;
    // `sent`: the store names the tool this harness's way, but not as the harness sends
    // it, which changes the name as `sent` says.
    let error = |name: &str, instead: &str, sent: Option<&'static str>| {
        let problem = if let Some(how) = sent {
            InputProblem::NotSentAs {
                tool: name.to_string(),
                harness: harness.title(),
                how,
                instead: instead.to_string(),
            }
        } else {
            let (owners, what) = crate::harness::whose(harness, name);
            InputProblem::OtherHarnessTool {
                tool: name.to_string(),
                owners,
                what,
                harness: harness.title(),
                instead: instead.to_string(),
            }
        };
        InputError::invalid(&setup.store, "", problem)
    };
    // A record giving `name` binds no call of `tool` by its own names.
    let unbound = |name: &str| !named.always_with(name, tool);
    let built_in = named.iter().find_map(|name| {
        let sent = crate::harness::sent_forms(harness, name);
        crate::harness::misnamed(harness, name, |n| named.always_with(name, n))
            .into_iter()
            .find(|instead| {
                glob_match(instead, tool) || crate::harness::does_the_same(harness, instead, tool)
            })
            .map(|instead| {
                let how = sent.contains(&instead).then(|| harness.mcp_name_change());
                error(name, &instead, how)
            })
    });
    if built_in.is_some() {
        return built_in;
    }
    // A glob that covers another harness's built-in (`Bas*` under Gemini CLI, `Writ*`
    // under Codex), and not the call's tool.
    let glob = named.iter().find_map(|name| {
        let (covered, instead) = crate::harness::glob_spellings(harness, name)
            .into_iter()
            .find(|(_, instead)| {
                glob_match(instead, tool) || crate::harness::does_the_same(harness, instead, tool)
            })?;
        (!glob_match(name, tool) && !named.always_with(name, &instead))
            .then_some((name, covered, instead))
    });
    if let Some((name, covered, instead)) = glob {
        let (owners, what) = crate::harness::whose(harness, covered);
        let problem = InputProblem::OtherHarnessGlob {
            tool: name.to_string(),
            covered,
            owners,
            what,
            harness: harness.title(),
            instead,
        };
        return Some(InputError::invalid(&setup.store, "", problem));
    }
    // The call's own tool, named as the harness never sends it to hooks.
    let meant = named
        .iter()
        .find(|name| crate::harness::hook_name_of(harness, name, tool) && unbound(name));
    if let Some(name) = meant {
        let problem = InputProblem::NotHookName {
            tool: name.to_string(),
            harness: harness.title(),
            covers: crate::harness::hook_glob_covers(harness, name, tool),
            instead: tool.to_string(),
        };
        return Some(InputError::invalid(&setup.store, "", problem));
    }
    // A pattern of another syntax that reads as covering the call (a matcher's
    // `Bash|Edit` or `mcp__billing__.*`, a shell's `Bas?`): as a name it binds nothing.
    let pattern = named
        .iter()
        .find(|name| crate::harness::pattern_meant(harness, name, tool) && unbound(name));
    if let Some(name) = pattern {
        let problem = InputProblem::PatternName {
            tool: name.to_string(),
            call: tool.to_string(),
        };
        return Some(InputError::invalid(&setup.store, "", problem));
    }
    // Another built-in of this harness that does what this one does, named or covered by
    // a glob (`Edi*` binds `Edit`, not `MultiEdit`).
    let sibling = named.iter().find_map(|name| {
        let (kin, _) = crate::harness::kin_left_out(harness, name).find(|(_, t)| *t == tool)?;
        unbound(name).then_some((name, kin))
    });
    if let Some((name, kin)) = sibling {
        let problem = InputProblem::SameKindTool {
            tool: name.to_string(),
            kin,
            harness: harness.title(),
            instead: tool.to_string(),
        };
        return Some(InputError::invalid(&setup.store, "", problem));
    }
    // An MCP tool name Codex ended in a hash.
    if crate::harness::hashed_stem(harness, tool).is_some() {
        let cut = named.iter().find(|name| {
            unbound(name)
                && crate::harness::with_spellings(harness, name)
                    .any(|sent| crate::harness::hashed_from(harness, &sent, tool))
        });
        if let Some(name) = cut {
            return Some(error(name, tool, Some(harness.mcp_name_change())));
        }
    }
    // Codex: an MCP tool of a server whose name it ended in a hash (another server's
    // name came out the same), which the store names without it.
    if let Some(stem) = crate::harness::unhashed_server(harness, tool) {
        let meant = named.iter().find(|name| {
            unbound(name)
                && crate::harness::with_spellings(harness, name)
                    .any(|sent| glob_match(&sent, &stem))
        });
        if let Some(name) = meant {
            return Some(error(name, tool, Some(harness.mcp_name_change())));
        }
    }
    // Claude Code: a tool of an MCP server a plugin brings, which the store names by the
    // server's own name.
    let meant = named.iter().find(|name| {
        unbound(name)
            && crate::harness::plugin_pattern(harness, name)
                .is_some_and(|pattern| glob_match(&pattern, tool))
    });
    if let Some(name) = meant {
        return Some(error(name, tool, Some(crate::harness::PLUGIN_MCP_NAMES)));
    }
    // Gemini CLI: the server and tool as configured, which it cut or changed.
    if let Some(raw) = raw.filter(|r| *r != tool) {
        let meant = named
            .iter()
            .find(|name| glob_match(name, raw) && !glob_match(name, tool) && unbound(name));
        if let Some(name) = meant {
            return Some(error(name, tool, Some(harness.mcp_name_change())));
        }
    }
    if harness == Harness::GeminiCli {
        return None;
    }
    // An MCP tool named as Gemini CLI names it (`mcp_s_t`, or a glob covering it) never
    // binds a call here; only this call tells which tool it meant. A record that gives
    // this harness's name beside it binds the call by that name; a glob that covers the
    // call's own name too (`*`, `mcp*`) is not another spelling of it.
    let theirs = crate::harness::spelling(Harness::GeminiCli, tool)?;
    named
        .iter()
        .find(|name| glob_match(name, &theirs) && !glob_match(name, tool) && unbound(name))
        .map(|name| error(name, tool, None))
}

/// The error for a call of `tool` that the guarded tools (`--tools`, else the store's
/// `tools`) are meant to cover but name only otherwise: as another harness names the tool
/// (`Bash` for Gemini CLI's `run_shell_command`), as another built-in of this harness
/// that does the same (`Edit` for `MultiEdit`), as this harness never sends an MCP
/// tool, in another case (`bash`, `bas*` for Claude Code's `Bash`), or as a pattern of
/// another syntax that reads as covering it (`Bash|Edit`). The call would be
/// left unguarded, and pass whatever the store's dropped records
/// say, unless a rule names it.
fn guarded_another_way(harness: Harness, tool: &str, setup: &Setup) -> Option<InputError> {
    let tools = setup.tools()?;
    if tools.iter().any(|t| glob_match(t, tool)) {
        return None;
    }
    let listed = |n: &str| tools.iter().any(|t| t == n);
    // Gemini CLI's name for the tool called (`mcp_s_t` for `mcp__s__t`), which no
    // spelling of a listed name gives back: its `_` joins no server from its tool.
    let theirs = (harness != Harness::GeminiCli)
        .then(|| crate::harness::spelling(Harness::GeminiCli, tool))
        .flatten();
    // The name listed, and the one to list too: the harness's spelling of it (a glob
    // stays a glob), else the tool called.
    let (name, fix) = tools.iter().find_map(|t| {
        let same = |other: &str| crate::harness::does_the_same(harness, other, tool);
        let mut misnamed = crate::harness::misnamed(harness, t, listed);
        // A glob covering another harness's built-in (`Bas*` under Gemini CLI).
        let globbed = crate::harness::glob_spellings(harness, t).into_iter();
        misnamed.extend(globbed.map(|(_, i)| i).filter(|i| !listed(i)));
        if let Some(i) = misnamed.iter().find(|i| glob_match(i, tool)) {
            return Some((t, i.clone()));
        }
        // A glob covering a built-in of the same kind and not this one (`Edi*`).
        let kin = || crate::harness::kin_left_out(harness, t).any(|(_, k)| k == tool);
        let gemini = || theirs.as_ref().is_some_and(|g| glob_match(t, g));
        // This harness's built-in (or an MCP tool) in another case (`bash`, `bas*`), or
        // Codex's shell by the model's name for it (`exec_command`).
        let cased = || crate::harness::hook_name_of(harness, t, tool);
        // A pattern of another syntax that reads as covering the call (`Bash|Edit`).
        let pattern = || crate::harness::pattern_meant(harness, t, tool);
        let meant = misnamed.iter().any(|i| same(i))
            || same(t)
            || kin()
            || gemini()
            || cased()
            || pattern();
        meant.then(|| (t, tool.to_string()))
    })?;
    let (origin, place) = match &setup.tools {
        Some(_) => ("--tools", "tools"),
        None => (setup.store.as_str(), "key `tools`"),
    };
    let problem = InputProblem::UnguardedSpelling {
        tool: name.clone(),
        harness: harness.title(),
        call: tool.to_string(),
        instead: fix,
    };
    Some(InputError::invalid(origin, place, problem))
}

/// Gemini CLI's name for the MCP tool called as its server and tool are configured,
/// `mcp_<server>_<tool>` from the payload's `mcp_context` (`server_name`, `tool_name`),
/// before Gemini CLI changes characters or cuts it; `None` for a payload without them,
/// or whose context is not of the tool called (`tool`).
fn configured_mcp_name(harness: Harness, payload: &[u8], tool: &str) -> Option<String> {
    if harness != Harness::GeminiCli {
        return None;
    }
    let obj = payload_object(payload, harness.event(), harness.name()).ok()?;
    let context = obj.get("mcp_context")?;
    let server = context.get("server_name")?.as_str()?;
    let name = context.get("tool_name")?.as_str()?;
    (crate::harness::gemini_mcp_name(server, name) == tool).then(|| format!("mcp_{server}_{name}"))
}

/// The first number in `value` that a double reads as another number, and what it
/// reads it as. The gate compares a number by the exact value of its literal (SPEC 2.2);
/// a tool reads it as a double (JavaScript's `JSON.parse`, Python's `json`). Claude Code
/// and Gemini CLI parse the model's arguments in JavaScript, so their payloads hold what
/// a double reads; Codex 0.171.0 keeps the literal as the model wrote it (its serde_json
/// is built with `arbitrary_precision`) and hands it on so: `9999.9999999999999999` was
/// below a rule's `gte 10000` for the gate, and 10000 for the tool that ran.
fn not_a_double(value: &Value) -> Option<PayloadProblem> {
    match value {
        Value::Number(n) => {
            let literal = n.to_string();
            let double: f64 = literal.parse().ok()?;
            let shown = format!("{double}");
            let same = double.is_finite()
                && matches!(
                    (
                        crate::decimal::Decimal::parse(&literal),
                        crate::decimal::Decimal::parse(&shown),
                    ),
                    (Ok(a), Ok(b)) if a.cmp(&b).is_eq()
                );
            (!same).then_some(PayloadProblem::NotADouble {
                literal,
                double: shown,
            })
        }
        Value::Array(items) => items.iter().find_map(not_a_double),
        Value::Object(map) => map.values().find_map(not_a_double),
        _ => None,
    }
}

/// Codex's patch tool.
const PATCH_TOOL: &str = "apply_patch";

/// Whether `name` (a tool name or glob) covers `tool`, as written or as another harness
/// names it and this harness would send it (`Write` or `Edit` for Codex's `apply_patch`).
fn covers_as(harness: Harness, name: &str, tool: &str) -> bool {
    crate::harness::with_spellings(harness, name).any(|n| glob_match(&n, tool))
}

/// Whether a Codex `Bash` call runs `apply_patch` (or `applypatch`) with a patch, which
/// Codex 0.171.0 applies itself (seen: `apply_patch <<'EOF'` with an `*** Add File`
/// created the file, and the hook saw only `Bash`; so did `apply_patch<<EOF`, the name
/// against its heredoc, which Codex's bash parser reads as the same command).
pub fn shell_patch(action: &Action) -> bool {
    if action.tool != "Bash" {
        return false;
    }
    let Some(Value::String(command)) = action.params.get("command") else {
        return false;
    };
    // Split where a shell word ends: at a blank, an operator or a redirection.
    let program = command
        .split(|c: char| {
            c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>' | '"' | '\'')
        })
        .any(|word| word == PATCH_TOOL || word == "applypatch");
    program && command.contains("*** Begin Patch")
}

/// The harness's rendering of an answer: PASS is silent, exit 0; a deny is exit 2 with
/// the reason on stderr, which all three harnesses read as a block when stderr is not
/// empty and which no stdout noise (a shell profile's echo) can spoil. Its fallback is
/// the JSON deny on stdout with exit 0.
pub fn reply(harness: Harness, answer: &Answer) -> Reply {
    let Answer::Deny(reason) = answer else {
        return Reply::silent();
    };
    let reason = crate::text::escape_unsafe(reason);
    Reply {
        stdout: Vec::new(),
        stderr: format!("{reason}\n").into_bytes(),
        exit: Exit::Deny,
        fallback: Some(Box::new(Reply {
            stdout: json_deny(harness, &reason).into_bytes(),
            stderr: Vec::new(),
            exit: Exit::Success,
            fallback: None,
        })),
    }
}

/// The harness's JSON deny, one line: what a hook prints on stdout with exit 0.
pub fn json_deny(harness: Harness, reason: &str) -> String {
    let json = match harness {
        Harness::ClaudeCode | Harness::Codex => serde_json::to_string(&HookOutput {
            hook_specific_output: DenyDecision {
                hook_event_name: harness.event(),
                permission_decision: "deny",
                permission_decision_reason: reason,
            },
        }),
        Harness::GeminiCli => serde_json::to_string(&GeminiDeny {
            decision: "deny",
            reason,
        }),
    };
    // INVARIANT: the output structs hold only strings, so serialization cannot fail.
    let mut line = crate::text::escape_unsafe(&json.unwrap_or_default()).into_owned();
    line.push('\n');
    line
}

/// Claude Code and Codex: `hookSpecificOutput` with exactly these three keys (Codex
/// rejects any key it does not know, and then runs the tool).
#[derive(Serialize)]
struct HookOutput<'a> {
    #[serde(rename = "hookSpecificOutput")]
    hook_specific_output: DenyDecision<'a>,
}

#[derive(Serialize)]
struct DenyDecision<'a> {
    #[serde(rename = "hookEventName")]
    hook_event_name: &'a str,
    #[serde(rename = "permissionDecision")]
    permission_decision: &'a str,
    #[serde(rename = "permissionDecisionReason")]
    permission_decision_reason: &'a str,
}

/// Gemini CLI: `{"decision":"deny","reason":...}`.
#[derive(Serialize)]
struct GeminiDeny<'a> {
    decision: &'a str,
    reason: &'a str,
}

/// Reads the payload's object and checks its `hook_event_name`.
fn payload_object(
    payload: &[u8],
    event: &'static str,
    adapter: &'static str,
) -> Result<Map<String, Value>, InputError> {
    let payload = payload.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(payload);
    if json::is_blank(payload) {
        return Err(invalid("stdin", PayloadProblem::Empty));
    }
    let value = json::parse(payload).map_err(|e| InputError::syntax(PAYLOAD, e, 0))?;
    let Value::Object(obj) = value else {
        return Err(invalid("stdin", PayloadProblem::NotObject));
    };
    match obj.get("hook_event_name") {
        Some(Value::String(e)) if e == event => Ok(obj),
        Some(Value::String(e)) => {
            let problem = PayloadProblem::OtherEvent {
                found: e.clone(),
                expected: event,
                adapter,
            };
            Err(invalid("key `hook_event_name`", problem))
        }
        Some(_) => Err(invalid("key `hook_event_name`", PayloadProblem::NotString)),
        None => Err(invalid(
            "key `hook_event_name`",
            PayloadProblem::NoEvent(event),
        )),
    }
}

/// The action a pre-tool payload proposes: `tool_name` → `tool`, `tool_input` → `params`.
/// Other keys (session ids, paths, `turn_id`, `mcp_context`, ...) are not read.
pub fn pre_tool_action(harness: Harness, payload: &[u8]) -> Result<Action, InputError> {
    let obj = payload_object(payload, harness.event(), harness.name())?;
    let tool = match obj.get("tool_name") {
        // A control character (`Bash\u0000`): no harness names a tool so (Claude Code and
        // Codex allow ASCII letters, digits, `_` and `-`, Gemini CLI `.` and `:` too), and
        // a rule written as the harness names its tools would not bind the call (it passed
        // unjudged).
        Some(Value::String(s)) if s.chars().any(char::is_control) => {
            return Err(invalid(
                "key `tool_name`",
                PayloadProblem::ControlInToolName(s.clone()),
            ));
        }
        // Version drift: the shell under a name Codex does not send, which no rule for
        // `Bash` would bind.
        Some(Value::String(s))
            if harness == Harness::Codex && crate::harness::is_codex_shell_name(s) =>
        {
            return Err(invalid(
                "key `tool_name`",
                PayloadProblem::CodexShellName(s.clone()),
            ));
        }
        Some(Value::String(s)) if crate::text::is_tool_name(s) => s.clone(),
        Some(Value::String(s)) if !s.is_empty() => {
            return Err(invalid(
                "key `tool_name`",
                PayloadProblem::NotToolName(s.clone()),
            ));
        }
        Some(_) => {
            return Err(invalid(
                "key `tool_name`",
                PayloadProblem::NotNonEmptyString,
            ));
        }
        None => return Err(invalid("key `tool_name`", PayloadProblem::Missing)),
    };
    let params = match obj.get("tool_input") {
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            return Err(invalid("key `tool_input`", PayloadProblem::NotAnObject));
        }
        None => return Err(invalid("key `tool_input`", PayloadProblem::Missing)),
    };
    check_numbers(&Value::Object(params.clone()))
        .map_err(|e| InputError::invalid(PAYLOAD, TOOL_INPUT, e))?;
    crate::action::one_spelling(&params)
        .map_err(|e| InputError::invalid(PAYLOAD, TOOL_INPUT, e))?;
    Ok(Action { tool, params })
}

/// Whether the same call, made again, may be answered otherwise: what the model is told
/// to do after an ERROR depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// The same input gives the same ERROR: a store, transcript or settings file that
    /// is malformed or of an unknown kind, a bug.
    Futile,
    /// The harness sent a payload the adapter cannot read (another harness's adapter,
    /// another event, a payload of a shape it does not know): every call this hook is
    /// run for gets the same ERROR until the wiring is fixed.
    Wiring,
    /// The ERROR is one of timing (the transcript not yet written, our own deadline
    /// passed): a retry may pass.
    MayPass,
    /// No transcript file by the deadline: the harness may write it late (a retry may
    /// pass), or the session keeps none (no retry will).
    NoTranscript,
    /// The store names this call's tool only as another harness names it: each call of
    /// the tool gets the same ERROR until the store (or the hook's tool list) is fixed;
    /// calls of other tools are judged.
    Misnamed,
    /// The call, as made, cannot be judged (a Codex command started with a terminal):
    /// the same call made another way may pass.
    Reshape,
}

/// A payload refused at `place` (a key, or stdin) for `problem`.
fn invalid(place: &str, problem: PayloadProblem) -> InputError {
    InputError::invalid(PAYLOAD, place, problem)
}

/// Refuses a call for an input that cannot be read, telling the model what the problem
/// is about: this call's arguments, the payload the harness sent, or a file.
fn refuse(err: &InputError) -> Answer {
    let retry = match err {
        InputError::Invalid {
            origin,
            place,
            reason,
        } if origin == PAYLOAD => match **reason {
            // The arguments are there, and this call's cannot be read as sent.
            Reason::Action(_) | Reason::Value(_) if place == TOOL_INPUT => Retry::Reshape,
            _ => Retry::Wiring,
        },
        InputError::Syntax { origin, .. } if origin == PAYLOAD => Retry::Wiring,
        _ => Retry::Futile,
    };
    refuse_with(err, retry)
}

fn refuse_with(err: &InputError, retry: Retry) -> Answer {
    Answer::Deny(deny_reason(
        &Report::invalid_input(Mode::Check, &err.to_string()),
        None,
        retry,
    ))
}

fn failure_reason(failure: &Failure) -> String {
    match failure {
        Failure::Input(e) => match refuse(e) {
            Answer::Deny(r) => r,
            Answer::Pass => String::new(),
        },
        Failure::Timeout(ms) => [
            format!("omission-gate denied this call: ERROR (no answer within {ms} ms)"),
            // A matter of timing (a busy machine, a slow disk): a retry may pass.
            "omission-gate fails closed rather than let the harness's own timeout run the tool: the call can be retried, and may pass when the machine is less busy; if it is denied again, tell the user (the record store may be too large or unreadable, or the hook got no payload on stdin; the hook's --timeout-ms can be raised, below the harness's own timeout)".to_string(),
        ]
        .join("\n"),
        Failure::Internal => [
            "omission-gate denied this call: ERROR (internal error)".to_string(),
            "omission-gate failed to answer, which is a bug in it; it fails closed: tell the user; retrying will not help".to_string(),
        ]
        .join("\n"),
    }
}

fn labelled(label: &str, value: &str) -> String {
    format!("{label:<LABEL_WIDTH$}: {}", one_line(value))
}

/// The reason the model reads: the verdict with the report's sha256, what to do (after an
/// `invalid-input` ERROR, by whether a retry may pass), each block or error finding with
/// its `restore` ids, and what each restore record says.
pub fn deny_reason(report: &Report, store: Option<&Store>, retry: Retry) -> String {
    let severity = match report.verdict {
        Verdict::Pass => None,
        Verdict::Block => Some(Severity::Block),
        Verdict::Error => Some(Severity::Error),
    };
    let codes = report.verdict_codes(severity);
    let sha = report::verify(&report.render(Format::Text)).unwrap_or_default();
    let mut lines = vec![format!(
        "omission-gate denied this call: {} ({}); report sha256 {sha}",
        report.verdict.as_str(),
        codes.join(", ")
    )];
    lines.push(match report.verdict {
        Verdict::Block if report.transcript.is_some() => "Records that are not in your context bind this call: they are listed under restore and shown below. Read them and re-plan: from now on they are in your context, so a call that takes them into account is not stopped for missing them again".to_string(),
        Verdict::Block => "Records the compactor dropped bind this call: they are listed under restore and shown below. Take them into account and re-plan; this call stays denied until they are restored to the record store's kept set".to_string(),
        _ if codes == ["invalid-input"] => match retry {
            Retry::Futile => "omission-gate cannot read what it judges calls by (the reason says what), so it denied this call, and it will deny each call it is asked about until that is fixed: tell the user what the reason says; retrying will not help",
            Retry::Wiring => "omission-gate cannot use the hook payload the harness sent, so it denied this call, and it will deny each call it is asked about until that is fixed: tell the user what the reason says (`omission-gate doctor` checks how the hook is wired); retrying will not help",
            Retry::Reshape => "omission-gate cannot judge this call as it is made, so it fails closed: make it again the way the reason says; if that cannot be done, tell the user what the reason says",
            Retry::Misnamed => "omission-gate cannot tell which rules in the record store bind this call (the reason says why), so it denied it, and it will deny each call of this tool until the record store (or the tool list the hook is given) is fixed: tell the user what the reason says; retrying will not help",
            Retry::MayPass => "omission-gate could not read the transcript as of this call in time (the harness may not have written it yet), so it fails closed: the call can be retried, and may pass once the harness has written it; if it is denied again, tell the user what the reason says (the hook's --timeout-ms can be raised to wait longer)",
            Retry::NoTranscript => "omission-gate found no transcript of this session in time, so it fails closed: either the session keeps none, and every call will be denied until the hook is run otherwise, or the harness writes it late, and a retry may pass; if it is denied again, tell the user what the reason says (it names the fix for each)",
        }
        .to_string(),
        _ => "omission-gate cannot decide, so it fails closed: supply what the reason says is missing (a tool parameter or a recorded fact) or ask the user".to_string(),
    });
    // The findings about this call (its policies, facts, effects) come first, then the
    // blanket ones that hold whatever the call (dropped unevaluable records), each in
    // report order: however many summaries were dropped, the rule that binds this call
    // is among those shown.
    let (mut binding, blanket): (Vec<_>, Vec<_>) = report
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Note)
        .partition(|f| f.code != Code::DroppedUnevaluableRecord);
    binding.extend(blanket);
    let mut restore: Vec<&str> = Vec::new();
    for f in binding.iter().take(MAX_SHOWN) {
        lines.push(labelled(
            "reason",
            &format!("{}: {}", f.code.as_str(), f.message),
        ));
        if !f.restore.is_empty() {
            let ids: Vec<_> = f.restore.iter().map(|id| clean(id)).collect();
            lines.push(labelled("restore", &ids.join(", ")));
        }
        for id in &f.restore {
            if !restore.contains(&id.as_str()) {
                restore.push(id);
            }
        }
    }
    if binding.len() > MAX_SHOWN {
        lines.push(labelled(
            "more",
            &format!(
                "{} more findings: `omission-gate check` on the store prints the full report",
                binding.len() - MAX_SHOWN
            ),
        ));
    }
    if let Some(store) = store {
        for id in restore.iter().take(MAX_SHOWN) {
            if let Some(record) = store.position(id).and_then(|p| store.get(p)) {
                lines.push(labelled("record", &describe(record)));
            }
        }
    }
    lines.join("\n")
}

/// `f_011 (policy, seq 11): require_approval on refunds.create when amount gt 5000; text: ...`
pub fn describe(record: &Record) -> String {
    let body = match &record.kind {
        Kind::Policy(p) => {
            let scope: Vec<_> = p.scope.iter().map(|s| clean(s)).collect();
            format!(
                "{} on {} when {}",
                p.effect.as_str(),
                scope.join(", "),
                spell(&p.predicate)
            )
        }
        Kind::Fact(f) => format!(
            "{} = {}",
            clean(&f.field),
            crate::json::json_brief(&f.value)
        ),
        Kind::Effect(e) => format!(
            "{} already ran with {}",
            clean(&e.tool),
            json_text(&Value::Object(e.matches.clone()))
        ),
        Kind::Chatter => "declared inconsequential".to_string(),
        Kind::Unevaluable(_) => "the gate cannot evaluate this kind".to_string(),
    };
    // The text goes whole and as it is (whitespace and control characters made single
    // spaces, nothing escaped), last on the line: the model reads it back from the
    // reason, and under `--kept-from transcript` that puts the record in view.
    let text = record
        .text
        .as_deref()
        .map(|t| format!("; text: {}", crate::view::normalize(t)))
        .unwrap_or_default();
    format!(
        "{} ({}, seq {}): {body}{text}",
        clean(&record.id),
        clean(record.kind.name()),
        record.seq
    )
}

/// A predicate as a reader would write it: `all(amount gt 5000; currency in ["USD"])`.
fn spell(p: &Predicate) -> String {
    match p {
        Predicate::Cmp(c) => format!(
            "{} {} {}",
            clean(&c.field),
            c.op.as_str(),
            json_text(&c.value)
        ),
        Predicate::All(ps) | Predicate::Any(ps) => {
            let name = if matches!(p, Predicate::All(_)) {
                "all"
            } else {
                "any"
            };
            let parts: Vec<String> = ps.iter().map(spell).collect();
            format!("{name}({})", parts.join("; "))
        }
        Predicate::Not(inner) => format!("not({})", spell(inner)),
    }
}

/// Claude Code `PreCompact`: the records to keep, as plain text on stdout with exit 0
/// (Claude Code adds a successful PreCompact hook's stdout to the compaction
/// instructions). Nothing to keep prints nothing. Failures exit 1, a non-blocking error:
/// never 2, which would block the compaction.
fn pre_compact(payload: &[u8], setup: Result<&Setup, &InputError>) -> Reply {
    if let Err(e) = payload_object(payload, "PreCompact", "claude-code-precompact") {
        // A pre-tool event's payload: this adapter is wired where a call waits on it, and
        // its exit 1 would let the call run unjudged. Exit 2 denies it in each harness.
        if let InputError::Invalid { reason, .. } = &e
            && let Reason::Payload(PayloadProblem::OtherEvent { found, .. }) = &**reason
            && Harness::ALL.iter().any(|h| h.event() == found)
        {
            let line = format!(
                "omission-gate denied this call: ERROR ({}; wire `omission-gate hook <harness>` under the pre-tool event, and this adapter under `PreCompact` only)\n",
                one_line(&e.to_string())
            );
            return Reply {
                stdout: Vec::new(),
                stderr: line.into_bytes(),
                exit: Exit::Deny,
                fallback: None,
            };
        }
        return compact_error(&e.to_string());
    }
    let setup = match setup {
        Ok(s) => s,
        Err(e) => return compact_error(&e.to_string()),
    };
    let store = &setup.input.store;
    let pinned = protected(setup);
    if pinned.is_empty() {
        return Reply::silent();
    }
    let mut out = String::from(
        "omission-gate: keep each record below in the summary, verbatim and with its id. They can bind later tool calls (rules in force, the newest values those rules read, calls that already ran, records the gate cannot evaluate): an agent that loses them may break a rule or repeat a call.\n",
    );
    for p in &pinned {
        if let Some(record) = store.position(&p.id).and_then(|pos| store.get(pos)) {
            out.push_str(&format!(
                "- {} [kept because: {}]\n",
                one_line(&describe(record)),
                one_line(&p.why)
            ));
        }
    }
    Reply {
        stdout: out.into_bytes(),
        stderr: Vec::new(),
        exit: Exit::Success,
        fallback: Some(Box::new(compact_error(
            "cannot write the preservation instructions",
        ))),
    }
}

fn compact_error(message: &str) -> Reply {
    let line = format!(
        "omission-gate: precompact: {}; the compaction goes ahead without preservation instructions\n",
        one_line(message)
    );
    Reply {
        stdout: Vec::new(),
        stderr: line.into_bytes(),
        exit: Exit::NonBlocking,
        fallback: None,
    }
}

/// The records a compactor must keep so that no call of the guarded tools can be blocked:
/// `pin` (SPEC 6) over the guarded tools, in `seq` order with why. The guarded tools are
/// the `--tools` names or globs, else the names in the document's `tools`, else every
/// tool (`*`), as the pre-tool adapters guard every tool; each is judged with any params.
/// A tool a rule names is judged too, listed or not, as the pre-tool adapters judge it.
pub fn protected(setup: &Setup) -> Vec<Pinned> {
    let schemaless = |name: &str| Tool {
        name: name.to_string(),
        input_schema: None,
    };
    // A schema in the document's `tools` bounds nothing here: Claude Code checks an MCP
    // tool's call only for being a JSON object (2.1.197 ran `amount` 8400 against the
    // server's `maximum: 5000`, and the PreToolUse hook saw it), and a built-in's call
    // against its own schema, not the document's. Pin by a schema would leave out a rule
    // that a call the hook then judges trips; under `harness` Claude Code it reads none.
    let tools: Vec<Tool> = match (&setup.tools, &setup.input.tools) {
        (Some(names), _) => names.iter().map(|n| schemaless(n)).collect(),
        (None, Some(tools)) => tools.clone(),
        (None, None) => vec![schemaless("*")],
    };
    let options = crate::pin::PinOptions {
        harness: Some(Harness::ClaudeCode),
        ..Default::default()
    };
    crate::pin::pin(
        &setup.input.store,
        &setup.input.totals.named,
        &tools,
        options,
    )
    .pinned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Limits;

    fn pinned(lines: &[&str], tools: Option<&[&str]>) -> Vec<(String, String)> {
        let input =
            crate::input::load("t", lines.join("\n").as_bytes(), Limits::default()).unwrap();
        let setup = Setup {
            input,
            store: "t".to_string(),
            kept: None,
            kept_origin: String::new(),
            retention: Retention::Given,
            tools: tools.map(|ts| ts.iter().map(|t| t.to_string()).collect()),
            options: CheckOptions::default(),
            kept_from: KeptFrom::Kept,
            context: None,
            compaction: None,
        };
        protected(&setup)
            .into_iter()
            .map(|p| (p.id, p.why))
            .collect()
    }

    const RECORDS: [&str; 9] = [
        r#"{"id":"f1","seq":1,"kind":"fact","field":"tier","value":"gold"}"#,
        r#"{"id":"p2","seq":2,"kind":"policy","scope":"refunds.*","predicate":{"field":"amount","op":"gt","value":5000},"effect":"require_approval"}"#,
        r#"{"id":"p3","seq":3,"kind":"policy","scope":"refunds.create","predicate":{"field":"tier","op":"eq","value":"gold"},"effect":"allow"}"#,
        r#"{"id":"f4","seq":4,"kind":"fact","field":"tier","value":"standard","supersedes":"f1","depends_on":["c5"]}"#,
        r#"{"id":"c5","seq":5,"kind":"chatter"}"#,
        r#"{"id":"p6","seq":6,"kind":"policy","scope":"refunds.create","predicate":{"all":[]},"effect":"deny"}"#,
        r#"{"id":"p7","seq":7,"kind":"policy","scope":"refunds.create","predicate":{"all":[]},"effect":"allow","supersedes":"p6"}"#,
        r#"{"id":"e8","seq":8,"kind":"effect","tool":"email.send","match":{"to":"x"}}"#,
        r#"{"id":"s9","seq":9,"kind":"summary","text":"..."}"#,
    ];

    #[test]
    fn protected_is_pin_over_the_guarded_tools_and_those_a_rule_names() {
        let all = pinned(&RECORDS, None);
        let ids: Vec<&str> = all.iter().map(|(id, _)| id.as_str()).collect();
        // Every tool is guarded: not f1 (stale), not p3 (a permission), not p6 (revoked by p7).
        assert_eq!(ids, ["p2", "f4", "c5", "p7", "e8", "s9"]);
        assert_eq!(all[1].1, "newest fact for `tier`, read by policy 'p3'");
        assert_eq!(all[2].1, "depends_on input of 'f4'");
        assert_eq!(all[3].1, "revokes in-scope policy 'p6'");
        // A list guards more, never less: the pre-tool adapters judge a call of a tool a
        // rule names whatever the list, so what those rules need is pinned too.
        for tools in [&["email.send"][..], &["refunds.*"], &["other"]] {
            let listed = pinned(&RECORDS, Some(tools));
            let listed: Vec<&str> = listed.iter().map(|(id, _)| id.as_str()).collect();
            assert_eq!(listed, ids, "{tools:?}");
        }
    }

    #[test]
    fn describe_spells_each_kind() {
        let s = crate::input::load("t", RECORDS.join("\n").as_bytes(), Limits::default())
            .unwrap()
            .store;
        let d = |i: usize| describe(s.get(i).unwrap());
        assert_eq!(
            d(1),
            "p2 (policy, seq 2): require_approval on refunds.* when amount gt 5000"
        );
        assert_eq!(d(3), "f4 (fact, seq 4): tier = \"standard\"");
        assert_eq!(
            d(7),
            "e8 (effect, seq 8): email.send already ran with {\"to\":\"x\"}"
        );
        assert_eq!(
            d(8),
            "s9 (summary, seq 9): the gate cannot evaluate this kind; text: ..."
        );
        let nested = Predicate::parse(
            &crate::json::parse(
                br#"{"any":[{"not":{"field":"a","op":"in","value":[1,2]}},{"all":[]}]}"#,
            )
            .unwrap(),
            8,
        )
        .unwrap();
        assert_eq!(spell(&nested), "any(not(a in [1,2]); all())");
    }

    #[test]
    fn pass_is_silent_and_deny_never_allows() {
        for h in [Harness::ClaudeCode, Harness::Codex, Harness::GeminiCli] {
            assert_eq!(reply(h, &Answer::Pass), Reply::silent());
            let r = reply(h, &Answer::Deny("why\nnot".into()));
            assert_eq!(
                (r.stdout.as_slice(), r.stderr.as_slice(), r.exit.code()),
                (&b""[..], &b"why\nnot\n"[..], 2)
            );
            let json = r.fallback.unwrap();
            let text = String::from_utf8(json.stdout).unwrap();
            assert!(
                text.contains("\"deny\"") && !text.contains("allow"),
                "{text}"
            );
            assert!(text.ends_with("}\n") && text.matches('\n').count() == 1);
            assert_eq!(json.exit.code(), 0);
        }
    }

    #[test]
    fn a_control_character_in_a_reason_cannot_reach_the_terminal() {
        let r = reply(
            Harness::GeminiCli,
            &Answer::Deny("a\u{1b}[2J\u{202e}b".into()),
        );
        assert_eq!(r.stderr, b"a\\u001b[2J\\u202eb\n");
        assert_eq!(
            json_deny(Harness::GeminiCli, "a\u{1b}[2J\u{202e}b"),
            "{\"decision\":\"deny\",\"reason\":\"a\\u001b[2J\\u202eb\"}\n"
        );
    }
}
