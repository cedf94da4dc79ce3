//! omission-gate: among the records a compactor dropped, is there one that binds this
//! action?
//!
//! The library reads a full pre-compaction record set, the kept ids and a proposed tool
//! call, computes the dropped set itself, resolves typed predicates against typed records
//! (exact decimal arithmetic, three-valued logic, no scoring) and returns PASS, BLOCK or
//! ERROR with every finding. Its functions take and give values and do no I/O; the
//! binary's entry, [`run_cli`], is what reads files and writes to the terminal.
//!
//! # Use it from a harness written in Rust
//!
//! [`load`] reads a store (a document or JSON Lines), [`check`] judges one proposed call
//! under the compaction and returns the [`Report`]; [`Report::render`] gives its sealed
//! bytes. The verdict is data: a BLOCK is a result, not an error.
//!
//! ```
//! use omission_gate::{Action, CheckOptions, Format, Retention, Verdict};
//!
//! let store = br#"{"records": [
//!   {"id": "r1", "seq": 1, "kind": "policy", "scope": "refunds.create",
//!    "predicate": {"field": "amount", "op": "gt", "value": 5000},
//!    "effect": "require_approval", "text": "Refunds over 5,000 need a human approver."},
//!   {"id": "r2", "seq": 2, "kind": "chatter", "text": "Preparing the refund."}
//! ], "kept": ["r2"]}"#;
//! let input = omission_gate::load("store.json", store)?;
//! let call = Action::from_json(&serde_json::json!({
//!     "tool": "refunds.create", "params": {"amount": 8400}
//! }))?;
//!
//! // The compactor kept only r2, so the approval rule r1 was dropped: BLOCK.
//! let report = omission_gate::check(&input, Retention::Given, None, &call, CheckOptions::default())?;
//! assert_eq!(report.verdict, Verdict::Block);
//! assert_eq!(report.exit_code, 1);
//! assert_eq!(report.findings[0].restore, ["r1"]);
//!
//! // Keeping r1 as well makes the same call PASS.
//! let kept = ["r1".to_string(), "r2".to_string()];
//! let report = omission_gate::check(&input, Retention::Given, Some(&kept), &call, CheckOptions::default())?;
//! assert_eq!(report.verdict, Verdict::Pass);
//!
//! // The sealed text report, as `omission-gate check` prints it.
//! let bytes = report.render(Format::Text);
//! assert!(omission_gate::verify(&bytes).is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`precheck()`] asks the action-blind question (could a dropped record bind *some*
//! reachable call of the tools, given their JSON Schemas?) and [`pin()`] gives a
//! compactor the records it must keep, and with a token budget the ids to keep
//! (SPEC 5 and 6).
//!
//! ```
//! use omission_gate::{PinOptions, PrecheckOptions, Retention, Tool, Verdict};
//!
//! let store = br#"{"records": [
//!   {"id": "r1", "seq": 1, "kind": "policy", "scope": "refunds.create",
//!    "predicate": {"field": "amount", "op": "gt", "value": 5000},
//!    "effect": "require_approval"},
//!   {"id": "r2", "seq": 2, "kind": "chatter", "text": "Preparing the refund."}
//! ], "kept": ["r2"]}"#;
//! let input = omission_gate::load("store.json", store)?;
//! let tools = Tool::list_from_json(&serde_json::json!([{"name": "refunds.create",
//!     "input_schema": {"type": "object", "required": ["amount"],
//!                      "properties": {"amount": {"type": "integer", "minimum": 1}}}}]))?;
//!
//! // Some reachable call (the witness: amount 5001) is blocked: precheck says BLOCK.
//! let options = PrecheckOptions::default();
//! let report = omission_gate::precheck(&input, Retention::Given, None, Some(&tools), options)?;
//! assert_eq!(report.verdict, Verdict::Block);
//! let witness = report.findings[0].witness.as_ref().expect("a witness");
//! assert_eq!(witness.params["amount"], 5001);
//!
//! // Pin says what to keep; keeping it, precheck passes.
//! let pinned = omission_gate::pin(&input, Some(&tools), None, PinOptions::default())?;
//! let keep: Vec<String> = pinned.pinned.iter().flatten().map(|p| p.id.clone()).collect();
//! assert_eq!(keep, ["r1"]);
//! let report = omission_gate::precheck(&input, Retention::Given, Some(&keep), Some(&tools), options)?;
//! assert_eq!(report.verdict, Verdict::Pass);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

//! # What is public
//!
//! The functions above ([`load`], [`compaction()`], [`check()`], [`precheck()`],
//! [`pin()`]), [`verify`], which checks a sealed report's seal, and [`run_cli`], the
//! `omission-gate` binary itself; the types they take and give: [`Input`], [`Action`],
//! [`Tool`], [`Retention`] (with [`Harness`]), [`Compaction`], [`Totals`],
//! [`CheckOptions`], [`PrecheckOptions`], and the [`Report`] with its [`Verdict`],
//! [`Mode`], [`Finding`]s ([`Code`], [`Severity`]), [`Pinned`] records,
//! [`CompactionSummary`], [`TranscriptSummary`] and [`TokenSummary`], rendered in a
//! [`Format`]. Every module is private.
//!
//! What the gate refuses is typed: [`InputError`] says where, and its [`Reason`] says
//! what, with the data: the lower modules' own errors ([`RecordProblem`], [`ActionError`],
//! [`ToolError`], [`KeptError`], [`ValueError`], [`TranscriptProblem`], and inside them
//! [`PredicateError`], [`PredicateProblem`], [`Op`], [`Elements`], [`SchemaError`],
//! [`SchemaProblem`], [`DecimalError`]), the input's form ([`InputProblem`]), a read ([`ReadProblem`],
//! [`IoReason`]), a hook payload ([`PayloadProblem`]), a transcript read fresh
//! ([`TranscriptRead`], [`GeminiDoubt`]) and flags that do not go together
//! ([`FlagProblem`]); [`RetentionError`] and
//! [`UnknownHarness`] for a retention or a harness that cannot be read; [`VerifyError`]
//! for a report whose seal does not hold.
//!
//! Transcript mode (retention `transcript:H`: kept = the records in view of a harness's
//! live context) and the hook adapters for Claude Code, Codex and Gemini CLI are the
//! binary's (`omission-gate check --transcript`, `omission-gate hook`): they read files
//! and speak the harnesses' protocols on stdin and stdout.

mod action;
mod cli;
mod compaction;
mod decimal;
mod error;
mod gate;
mod harness;
mod hook;
mod ids;
mod input;
mod json;
mod memory;
mod pin;
mod precheck;
mod predicate;
mod record;
mod report;
mod scan;
mod schema;
mod stream;
mod text;
mod transcript;
mod validate;
mod view;
mod wiring;

/// For the fuzz targets in `fuzz/` alone, not part of the API: the lean loader, which the
/// commands use only on large inputs, run on an input of any size cut into chunks of the
/// caller's choosing, and the exact path on the same input and flags, so that a target
/// can compare their reports byte for byte.
#[doc(hidden)]
pub mod fuzzing {
    use crate::input::lean::{KeptIds, Purpose, load_lean_with};
    use crate::input::{self, Input};
    use crate::record::Limits;
    use crate::stream::Fallback;
    use crate::{
        CheckOptions, Compaction, InputError, PinOptions, PrecheckOptions, Report, Retention,
    };

    /// The readers of the flag values `--kept` (inline, or the text of `@FILE`),
    /// `--action` and `--tools`, as the CLI calls them.
    pub use crate::input::{action_from_flag, kept_from_flag, tools_from_flag};

    /// The exact loader ([`crate::load`]) under a `--max-predicate-depth` of `depth`.
    pub fn load_with_depth(origin: &str, bytes: &[u8], depth: usize) -> Result<Input, InputError> {
        let limits = Limits {
            max_predicate_depth: depth,
            ..Limits::default()
        };
        input::load(origin, bytes, limits)
    }

    /// True when two loads hold the same records, in the same order.
    pub fn same_records(a: &Input, b: &Input) -> bool {
        a.store.records() == b.store.records()
    }

    /// The ids of a load's records, in `seq` order.
    pub fn record_ids(input: &Input) -> Vec<&str> {
        input
            .store
            .records()
            .iter()
            .map(|r| r.id.as_str())
            .collect()
    }

    /// The tool names and globs a load's policies and effects give, in order.
    pub fn named_tools(input: &Input) -> Vec<&str> {
        input.store.named_tools().into_iter().collect()
    }

    /// What a load is for, and how it is judged.
    #[derive(Debug, Clone, Copy)]
    pub enum Ask<'a> {
        /// `check` of the action given (the `--action` flag's text), else the document's.
        Check(Option<&'a str>, CheckOptions),
        /// `check --precheck` of the document's tools, else every tool the records name.
        Precheck(PrecheckOptions),
        /// `pin` (no budget) of the tools, as for `Precheck`, with this call bound; reads
        /// no kept ids.
        Pin(PinOptions),
    }

    /// The report of a lean load of `chunks` (each but the last ending at a line end, as
    /// the CLI's reader cuts them) for `ask`, with `kept` the text of a `--kept @FILE`.
    /// `None`: the lean loader falls back to the exact one, as it must for every input
    /// the exact path refuses (an `--action` that cannot be read included).
    pub fn lean_report(chunks: Vec<Vec<u8>>, kept: Option<&str>, ask: Ask<'_>) -> Option<Report> {
        let whole = chunks.concat();
        let mut rest = chunks.into_iter().map(|c| Ok::<_, Fallback>(c.into()));
        let first = rest.next().and_then(Result::ok).unwrap_or_default();
        let limits = Limits::default();
        let kept = KeptIds::flag(kept.map(|k| (k, true))).ok()?;
        let load = |purpose| {
            load_lean_with(
                first,
                rest,
                &mut whole.as_slice(),
                kept,
                purpose,
                limits,
                Ok,
            )
            .ok()
        };
        match ask {
            Ask::Check(action, options) => {
                let action = action
                    .map(|a| input::action_from_flag("--action", a))
                    .transpose()
                    .ok()?;
                let lean = load(Purpose::Check(action))?;
                let action = lean.action.as_ref()?;
                let (store, totals) = (&lean.input.store, &lean.input.totals);
                let outcome = crate::gate::check(store, &lean.compaction, totals, action, options);
                Some(Report::check(action, &lean.compaction, totals, outcome))
            }
            Ask::Precheck(options) => {
                let lean = load(Purpose::Precheck(None))?;
                // No tools: the exact path says whether that is a list given empty.
                if lean.tools.is_empty() {
                    return None;
                }
                let (store, totals) = (&lean.input.store, &lean.input.totals);
                let outcome = crate::precheck::precheck(
                    store,
                    &lean.compaction,
                    totals,
                    &lean.tools,
                    options,
                );
                Some(Report::precheck(
                    &lean.tools,
                    &lean.compaction,
                    totals,
                    outcome,
                ))
            }
            Ask::Pin(options) => {
                let lean = load(Purpose::Pin(None))?;
                if lean.tools.is_empty() {
                    return None;
                }
                Some(crate::pin::report(
                    &lean.input.store,
                    &lean.input.totals.named,
                    &lean.tools,
                    None,
                    options,
                ))
            }
        }
    }

    /// The live context a transcript reader gives (`harness`: 0 recognises the format,
    /// 1-3 name Claude Code, Codex, Gemini CLI; with bit 3 set, Claude Code's
    /// environment makes `claude-opus-4-8-eap` its own refusal fallback) for the whole of
    /// `bytes`, and for its end from byte `from` on, as the CLI reads a long file: each as
    /// the `Debug` text of what the reader returned, so that a target can compare them. A
    /// window the reader needs more of gives `None`.
    pub fn transcript_reads(
        harness: u8,
        bytes: &[u8],
        from: usize,
        call: Option<&str>,
    ) -> (String, Option<String>) {
        use crate::transcript::{Failure, RefusalFallback, Window, read_with};
        let fallback = if harness & 8 != 0 {
            RefusalFallback::of(|key| {
                (key == "ANTHROPIC_DEFAULT_OPUS_MODEL").then(|| "claude-opus-4-8-eap".into())
            })
        } else {
            RefusalFallback::default()
        };
        let read = |harness, window, call| read_with(harness, window, call, &fallback);
        let harness = match harness % 4 {
            1 => Some(crate::Harness::ClaudeCode),
            2 => Some(crate::Harness::Codex),
            3 => Some(crate::Harness::GeminiCli),
            _ => None,
        };
        let whole = Window::whole(bytes);
        let whole_read = format!("{:?}", read(harness, whole, call));
        let from = from.min(bytes.len());
        let tail = Window {
            head: whole.head,
            tail: bytes.get(from..).unwrap_or_default(),
            offset: from as u64,
        };
        let tail_read = match read(harness, tail, call) {
            Err(Failure::NeedMore) => None,
            // Offsets in a failure are the file's, so the two compare as they are.
            other => Some(format!("{other:?}")),
        };
        (whole_read, tail_read)
    }

    /// The exact path's report on the same input and flags as [`lean_report`]'s, or what
    /// it refuses (retention `given`: the kept ids of `kept`, else the document's).
    pub fn exact_report(
        bytes: &[u8],
        kept: Option<&str>,
        ask: Ask<'_>,
    ) -> Result<Report, InputError> {
        let origin = "fuzz.json";
        let input = input::load(origin, bytes, Limits::default())?;
        let (store, totals) = (&input.store, &input.totals);
        let compaction = || {
            let kept = match kept {
                Some(k) => Some(kept_from_flag("--kept", k, true)?),
                None => input.kept.clone(),
            };
            Compaction::new(store, Retention::Given, kept.as_deref())
                .map_err(|e| InputError::invalid(origin, "kept", e))
        };
        match ask {
            Ask::Check(action, options) => {
                let c = compaction()?;
                let action = match action {
                    Some(a) => input::action_from_flag("--action", a)?,
                    None => (input.action.clone()).ok_or_else(|| {
                        InputError::invalid(origin, "action", crate::error::InputProblem::NoAction)
                    })?,
                };
                let outcome = crate::gate::check(store, &c, totals, &action, options);
                Ok(Report::check(&action, &c, totals, outcome))
            }
            Ask::Precheck(options) => {
                let c = compaction()?;
                let tools = crate::tools_for(&input, None)?;
                let outcome = crate::precheck::precheck(store, &c, totals, &tools, options);
                Ok(Report::precheck(&tools, &c, totals, outcome))
            }
            Ask::Pin(options) => Ok(crate::pin::report(
                store,
                &totals.named,
                &crate::tools_for(&input, None)?,
                None,
                options,
            )),
        }
    }
}

pub use crate::action::{Action, ActionError, Tool, ToolError};
pub use crate::cli::main as run_cli;
pub use crate::compaction::{Compaction, KeptError, Retention, RetentionError, Totals};
pub use crate::error::{
    FlagProblem, GeminiDoubt, InputError, InputProblem, IoReason, PayloadProblem, ReadProblem,
    Reason, TranscriptRead,
};
pub use crate::gate::{CheckOptions, Code, Finding, Severity, Verdict};
pub use crate::harness::{Harness, UnknownHarness};
pub use crate::input::Input;
pub use crate::pin::PinOptions;
pub use crate::precheck::PrecheckOptions;
pub use crate::record::RecordProblem;
pub use crate::report::{
    CompactionSummary, Format, Mode, Pinned, Report, TokenSummary, TranscriptSummary, VerifyError,
    verify,
};

// What the modules below the loaders refuse, typed, as carried inside the errors above.
pub use crate::decimal::DecimalError;
pub use crate::predicate::{Elements, Op, PredicateError, PredicateProblem, ValueError};
pub use crate::schema::{SchemaError, SchemaProblem};
pub use crate::transcript::Problem as TranscriptProblem;

/// Reads a record store: a document (`{"records": [...], "kept": [...], ...}`) or JSON
/// Lines (one record per line), told apart by the first JSON value (SPEC 2). `origin`
/// names the input in error messages (a path, `<stdin>`).
///
/// Bad input is an [`InputError`]: one line naming the file, the line and column or the
/// record id, and what to fix.
pub fn load(origin: &str, bytes: &[u8]) -> Result<Input, InputError> {
    input::load(origin, bytes, record::Limits::default())
}

/// The kept/dropped split of a loaded store (SPEC 3). With [`Retention::Given`], `kept`
/// overrides the document's `kept` ids; either must be present, and every id must name a
/// record. `kept` goes with retention given only: beside a retention that computes the
/// kept set itself it is refused ([`KeptError::WithRetention`]) rather than ignored; a
/// document's own `kept` does not decide the kept set under such a retention, nor beside
/// `kept`, but an id in it that names no record is refused all the same.
pub fn compaction(
    input: &Input,
    retention: Retention,
    kept: Option<&[String]>,
) -> Result<Compaction, InputError> {
    if kept.is_some() && retention.ends().is_some() {
        let problem = KeptError::WithRetention(retention);
        return Err(InputError::invalid("kept", "kept", problem));
    }
    // The document's own `kept` names records whatever overrides it (the loader checks
    // it; an `Input` changed after loading is held to it here).
    if let Some(ids) = &input.kept {
        compaction::document_kept_ids_name_records(&input.store, ids)
            .map_err(|e| InputError::invalid("input", "kept", e))?;
    }
    let kept_origin = if kept.is_some() { "kept" } else { "input" };
    let kept = kept.or(input.kept.as_deref());
    Compaction::new(&input.store, retention, kept)
        .map_err(|e| InputError::invalid(kept_origin, "kept", e))
}

/// Judges one proposed call under one compaction (SPEC 4): the [`Report`] that
/// `omission-gate check` would print, with its verdict, exit code and every finding.
/// Each block finding names in `restore` the dropped records whose restoration removes
/// it. `kept` is as for [`compaction()`]. An action built field by field is held to what
/// [`Action::from_json`] refuses (an empty `tool`, a dotted field given two values, a
/// number the gate cannot compare): it is refused here too, never judged as another call.
pub fn check(
    input: &Input,
    retention: Retention,
    kept: Option<&[String]>,
    action: &Action,
    options: CheckOptions,
) -> Result<Report, InputError> {
    action
        .validate()
        .map_err(|e| InputError::invalid("action", "action", e))?;
    let compaction = compaction(input, retention, kept)?;
    let outcome = gate::check(&input.store, &compaction, &input.totals, action, options);
    Ok(Report::check(action, &compaction, &input.totals, outcome))
}

/// Action-blind precheck (SPEC 5): could a dropped record bind some reachable call of the
/// tools? `tools` overrides the document's `tools`; with neither, the tools are every name
/// or glob a policy scope or an effect gives, with no schema; beside a list, each of those
/// the list does not cover is judged too, with no schema (a `not-listed` note). A tool
/// name may be a glob, standing for every tool it covers. Each finding about a concrete call carries it as
/// `witness`; a call `check` fails closed on whatever is kept is a note, not an error.
/// `kept` is as for [`compaction()`]. A list of tools given (here or as the document's
/// `tools`) that names no tool is refused ([`ToolError::Empty`]): precheck would judge
/// no call; so is a tool built field by field that [`Tool::list_from_json`] would refuse
/// (an empty name, a name twice, a schema it cannot read).
pub fn precheck(
    input: &Input,
    retention: Retention,
    kept: Option<&[String]>,
    tools: Option<&[Tool]>,
    options: PrecheckOptions,
) -> Result<Report, InputError> {
    let compaction = compaction(input, retention, kept)?;
    let tools = tools_for(input, tools)?;
    let outcome = precheck::precheck(&input.store, &compaction, &input.totals, &tools, options);
    Ok(Report::precheck(
        &tools,
        &compaction,
        &input.totals,
        outcome,
    ))
}

/// Pin (SPEC 6): the records a compactor must keep so that no reachable call of the tools
/// can be blocked (`report.pinned`, with why); with `budget` (tokens), the ids to keep
/// (`report.kept`), or ERROR `ledger-exceeds-budget` when the pinned records alone do not
/// fit. `tools` as for [`precheck()`] (a list that names no tool is refused: pin would
/// pin nothing); [`PinOptions`] bound the calls tried per rule and tool, and name the
/// harness when known.
pub fn pin(
    input: &Input,
    tools: Option<&[Tool]>,
    budget: Option<u64>,
    options: PinOptions,
) -> Result<Report, InputError> {
    let tools = tools_for(input, tools)?;
    Ok(pin::report(
        &input.store,
        &input.totals.named,
        &tools,
        budget,
        options,
    ))
}

/// The tools precheck and pin are given: `tools`, else the document's `tools`, else every
/// tool a rule names (SPEC 2.3; beside a list, they judge too each tool a rule names
/// that it does not cover). A list given that names no tool is refused, as the binary
/// refuses `--tools ""`.
fn tools_for(input: &Input, tools: Option<&[Tool]>) -> Result<Vec<Tool>, InputError> {
    let (tools, origin, place) = match tools {
        Some(tools) => (tools.to_vec(), "tools", "tools"),
        None if input.tools.is_some() => (input.tools_or_named(), "input", "key `tools`"),
        None => return Ok(input.tools_or_named()),
    };
    input::names_a_tool(&tools, origin, place)?;
    Tool::validate_list(&tools).map_err(|e| InputError::invalid(origin, place, e))?;
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STORE: &[u8] = br#"{"records": [
      {"id": "r1", "seq": 1, "kind": "policy", "scope": "pay",
       "predicate": {"field": "amount", "op": "gt", "value": 5},
       "effect": "require_approval"},
      {"id": "r2", "seq": 2, "kind": "chatter", "text": "hello"},
      {"id": "r3", "seq": 3, "kind": "chatter", "text": "again"}
    ], "kept": ["r2", "r3"]}"#;

    fn store() -> Input {
        load("store.json", STORE).unwrap()
    }

    fn no_tool(err: &InputError) -> bool {
        matches!(err, InputError::Invalid { reason, .. }
            if matches!(**reason, Reason::Tools(ToolError::Empty)))
    }

    #[test]
    fn precheck_of_a_tool_list_that_names_no_tool_is_refused() {
        let input = store();
        let options = PrecheckOptions::default();
        let err = precheck(&input, Retention::Given, None, Some(&[]), options).unwrap_err();
        assert!(no_tool(&err), "{err}");
        assert_eq!(
            err.to_string(),
            "tools: names no tool: precheck and pin would judge no call; name the tools the agent can call, or leave the tools out to judge every tool a rule names"
        );
        // Without it, the dropped rule r1 binds some call of `pay`.
        let report = precheck(&input, Retention::Given, None, None, options).unwrap();
        assert_eq!(report.verdict, Verdict::Block);
    }

    #[test]
    fn precheck_and_pin_refuse_a_document_tools_that_names_no_tool() {
        let mut input = store();
        input.tools = Some(Vec::new());
        let options = PrecheckOptions::default();
        let err = precheck(&input, Retention::Given, None, None, options).unwrap_err();
        assert!(no_tool(&err), "{err}");
        assert!(
            err.to_string()
                .starts_with("input: key `tools`: names no tool"),
            "{err}"
        );
        let err = pin(&input, None, None, PinOptions::default()).unwrap_err();
        assert!(no_tool(&err), "{err}");
    }

    #[test]
    fn pin_of_a_tool_list_that_names_no_tool_is_refused() {
        let input = store();
        let err = pin(
            &input,
            Some(&[]),
            None,
            crate::PinOptions {
                max_calls: 64,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(no_tool(&err), "{err}");
        let err = pin(
            &input,
            Some(&[]),
            Some(1_000),
            crate::PinOptions {
                max_calls: 64,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(no_tool(&err), "{err}");
        // Without it, the rule is pinned.
        let report = pin(
            &input,
            None,
            None,
            crate::PinOptions {
                max_calls: 64,
                ..Default::default()
            },
        )
        .unwrap();
        let pinned: Vec<&str> = report
            .pinned
            .iter()
            .flatten()
            .map(|p| p.id.as_str())
            .collect();
        assert_eq!(pinned, ["r1"]);
    }

    #[test]
    fn kept_ids_beside_a_retention_that_computes_the_kept_set_are_refused() {
        let input = store();
        let kept = ["r1".to_string()];
        let call = Action::from_json(&serde_json::json!({"tool": "pay", "params": {"amount": 9}}))
            .unwrap();
        for retention in [Retention::HeadTail(0), Retention::Recency(1)] {
            let err = compaction(&input, retention, Some(&kept)).unwrap_err();
            let refused = matches!(&err, InputError::Invalid { reason, .. }
                if matches!(**reason, Reason::Kept(KeptError::WithRetention(r)) if r == retention));
            assert!(refused, "{err}");
            let options = CheckOptions::default();
            assert!(check(&input, retention, Some(&kept), &call, options).is_err());
            let options = PrecheckOptions::default();
            assert!(precheck(&input, retention, Some(&kept), None, options).is_err());
        }
        let err = compaction(&input, Retention::Recency(1), Some(&kept)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "kept: kept ids go with retention given: retention `recency:1` computes the kept set itself and would ignore them (give no kept ids, or retention given)"
        );
    }

    /// `Action`'s fields are public: a call built with a dotted field given two values
    /// (`customer.tier` as a key and through `customer`) was judged by the key while the
    /// tool may read the nested value, and PASSed; `Action::from_json` refuses it.
    #[test]
    fn check_refuses_an_action_from_json_would_refuse() {
        let store = br#"{"records": [
          {"id": "r1", "seq": 1, "kind": "policy", "scope": "t", "effect": "deny",
           "predicate": {"field": "customer.tier", "op": "eq", "value": "suspended"}},
          {"id": "r2", "seq": 2, "kind": "chatter", "text": "hello"}
        ], "kept": ["r2"]}"#;
        let input = load("store.json", store).unwrap();
        let two =
            serde_json::json!({"customer.tier": "standard", "customer": {"tier": "suspended"}});
        let options = CheckOptions::default();
        let built = |tool: &str, params: &serde_json::Value| Action {
            tool: tool.to_string(),
            params: params.as_object().unwrap().clone(),
        };
        let err = check(&input, Retention::Given, None, &built("t", &two), options).unwrap_err();
        let refused = matches!(&err, InputError::Invalid { reason, .. }
            if matches!(**reason, Reason::Action(ActionError::TwoSpellings(_))));
        assert!(refused, "{err}");
        let empty = serde_json::json!({});
        let err = check(&input, Retention::Given, None, &built("", &empty), options).unwrap_err();
        assert_eq!(
            err.to_string(),
            "action: the action's `tool` must be a non-empty string"
        );
        // The same call spelt once is judged: the dropped rule binds it.
        let once = serde_json::json!({"customer": {"tier": "suspended"}});
        let report = check(&input, Retention::Given, None, &built("t", &once), options).unwrap();
        assert_eq!(report.verdict, Verdict::Block);
    }

    /// `Tool`'s fields are public: a tool with an empty name matched no rule, and
    /// precheck passed (and pin pinned nothing) as for a list that names no tool.
    #[test]
    fn precheck_and_pin_refuse_a_tool_list_from_json_would_refuse() {
        let input = store();
        let options = PrecheckOptions::default();
        let named = |name: &str, schema: Option<serde_json::Value>| Tool {
            name: name.to_string(),
            input_schema: schema,
        };
        let lists = [
            vec![named("", None)],
            vec![named("pay", None), named("pay", None)],
            vec![named("pay", Some(serde_json::json!(5)))],
            vec![named("pay", Some(serde_json::json!({"maximum": "x"})))],
        ];
        for tools in lists {
            let err = precheck(&input, Retention::Given, None, Some(&tools), options).unwrap_err();
            assert!(
                matches!(&err, InputError::Invalid { reason, .. }
                if matches!(**reason, Reason::Tools(_))),
                "{err}"
            );
            assert!(
                pin(
                    &input,
                    Some(&tools),
                    None,
                    crate::PinOptions {
                        max_calls: 64,
                        ..Default::default()
                    }
                )
                .is_err(),
                "{tools:?}"
            );
        }
        let err = precheck(
            &input,
            Retention::Given,
            None,
            Some(&[named("", None)]),
            options,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "tools: a tool needs a non-empty string `name`"
        );
    }

    #[test]
    fn a_documents_own_kept_under_another_retention_is_not_read() {
        // The document keeps r2 and r3; recency:1 keeps r3 alone, and the document's
        // `kept` is the compactor's record, not a conflict.
        let input = store();
        let c = compaction(&input, Retention::Recency(1), None).unwrap();
        assert_eq!(c.kept(), 1);
        let c = compaction(&input, Retention::HeadTail(5), None).unwrap();
        assert_eq!(c.kept(), 3);
    }
}
