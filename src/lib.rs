//! omission-gate: among the records a compactor dropped, is there one that binds this
//! action?
//!
//! The library reads a full pre-compaction record set, the kept ids and a proposed tool
//! call, computes the dropped set itself, resolves typed predicates against typed records
//! (exact decimal arithmetic, three-valued logic, no scoring) and returns PASS, BLOCK or
//! ERROR with every finding. Only [`cli`] does I/O.
//!
//! # Use it from a harness written in Rust
//!
//! [`load`] reads a store (a document or JSON Lines), [`check`] judges one proposed call
//! under the compaction and returns the [`Report`]; [`Report::render`] gives its sealed
//! bytes. The verdict is data: a BLOCK is a result, not an error. [`hook`] holds the
//! adapters that speak Claude Code's, Codex's and Gemini CLI's hook protocols.
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
//! assert!(omission_gate::report::verify(&bytes).is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`precheck()`] asks the action-blind question (could a dropped record bind *some*
//! reachable call of the tools, given their JSON Schemas?) and [`pin()`] gives a
//! compactor the records it must keep, and with a token budget the ids to keep
//! (SPEC 5 and 6).
//!
//! ```
//! use omission_gate::{PrecheckOptions, Retention, Tool, Verdict};
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
//! let pinned = omission_gate::pin(&input, Some(&tools), None, options.max_calls);
//! let keep: Vec<String> = pinned.pinned.iter().flatten().map(|p| p.id.clone()).collect();
//! assert_eq!(keep, ["r1"]);
//! let report = omission_gate::precheck(&input, Retention::Given, Some(&keep), Some(&tools), options)?;
//! assert_eq!(report.verdict, Verdict::Pass);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

//! # Judge against what the agent sees
//!
//! [`transcript::read`] gives the live context of a Claude Code, Codex or Gemini CLI
//! session transcript (the strings the harness sends its model next, read from the end of
//! the file), and [`view::Context::compaction`] the compaction whose kept set is the
//! records in view of it (retention `transcript:H`).

pub mod action;
pub mod cli;
pub mod compaction;
mod decimal;
pub mod error;
pub mod gate;
mod harness;
pub mod hook;
mod ids;
pub mod input;
mod json;
pub mod pin;
pub mod precheck;
mod predicate;
pub mod record;
pub mod report;
mod scan;
mod schema;
mod stream;
mod text;
pub mod transcript;
mod validate;
pub mod view;
pub mod wiring;

/// For the fuzz targets in `fuzz/` alone, not part of the API: the lean loader, which the
/// commands use only on large inputs, run on an input of any size cut into chunks of the
/// caller's choosing, so that a target can compare it with the exact loader ([`load`]).
#[doc(hidden)]
pub mod fuzzing {
    use crate::input::lean::{Purpose, load_lean, load_lean_for};
    use crate::record::Limits;
    use crate::stream::Fallback;
    use crate::{Action, Compaction, Input, Tool};

    /// What a lean load is for.
    #[derive(Debug, Clone)]
    pub enum Ask {
        /// `check` of the action given (the `--action` flag's), else the document's.
        Check(Option<Action>),
        /// `check --precheck` of the document's tools, else every tool the records name.
        Precheck,
        /// `pin` (no budget) of the tools, as for `Precheck`; reads no kept ids.
        Pin,
    }

    /// What a lean load gives.
    #[derive(Debug)]
    pub struct LeanLoad {
        /// The records the command can consult, and the document's `action` and `tools`.
        pub input: Input,
        /// The kept set under retention `given` (keeping nothing for `pin`).
        pub compaction: Compaction,
        /// For `check`, the action to judge.
        pub action: Option<Action>,
        /// For precheck and pin, the tools to judge.
        pub tools: Vec<Tool>,
    }

    /// Loads an input leanly, in `chunks` (each but the last ending at a line end, as the
    /// CLI's reader cuts them), for `ask`, with `kept` the `--kept` flag's text (and
    /// whether it came from a file). `None`: the lean loader falls back to the exact one,
    /// as it must for every input the exact loader refuses.
    pub fn lean_load(
        chunks: Vec<Vec<u8>>,
        kept: Option<(&str, bool)>,
        ask: Ask,
    ) -> Option<LeanLoad> {
        let mut chunks = chunks.into_iter();
        let first = chunks.next().unwrap_or_default();
        let rest = chunks.map(Ok::<_, Fallback>);
        let limits = Limits::default();
        let purpose = match ask {
            Ask::Check(action) => {
                let lean = load_lean(first, rest, kept, action, limits).ok()?;
                return Some(LeanLoad {
                    input: lean.input,
                    compaction: lean.compaction,
                    action: Some(lean.action),
                    tools: Vec::new(),
                });
            }
            Ask::Precheck => Purpose::Precheck(None),
            Ask::Pin => Purpose::Pin(None),
        };
        let lean = load_lean_for(first, rest, kept, purpose, limits).ok()?;
        Some(LeanLoad {
            input: lean.input,
            compaction: lean.compaction,
            action: lean.action,
            tools: lean.tools,
        })
    }
}

pub use crate::action::{Action, Tool};
pub use crate::compaction::{Compaction, Retention, Totals};
pub use crate::error::InputError;
pub use crate::gate::{CheckOptions, Code, Finding, Severity, Verdict};
pub use crate::input::Input;
pub use crate::precheck::PrecheckOptions;
pub use crate::report::{Format, Report};

// What the modules below the loaders refuse, typed, as carried inside `InputError` (see
// `error::Reason`), `action::ToolError` and `record::RecordProblem`.
pub use crate::decimal::DecimalError;
pub use crate::predicate::{PredicateError, PredicateProblem, ValueError};
pub use crate::schema::{SchemaError, SchemaProblem};

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
/// record.
pub fn compaction(
    input: &Input,
    retention: Retention,
    kept: Option<&[String]>,
) -> Result<Compaction, InputError> {
    let kept_origin = if kept.is_some() { "kept" } else { "input" };
    let kept = kept.or(input.kept.as_deref());
    Compaction::new(&input.store, retention, kept, kept_origin)
}

/// Judges one proposed call under one compaction (SPEC 4): the [`Report`] that
/// `omission-gate check` would print, with its verdict, exit code and every finding.
/// Each block finding names in `restore` the dropped records whose restoration removes
/// it. `kept` is as for [`compaction()`].
pub fn check(
    input: &Input,
    retention: Retention,
    kept: Option<&[String]>,
    action: &Action,
    options: CheckOptions,
) -> Result<Report, InputError> {
    let compaction = compaction(input, retention, kept)?;
    let outcome = gate::check(&input.store, &compaction, &input.totals, action, options);
    Ok(Report::check(action, &compaction, &input.totals, outcome))
}

/// Action-blind precheck (SPEC 5): could a dropped record bind some reachable call of the
/// tools? `tools` overrides the document's `tools`; with neither, the tools are every name
/// or glob a policy scope or an effect gives, with no schema. A tool name may be a glob,
/// standing for every tool it covers. Each finding about a concrete call carries it as
/// `witness`; a call `check` fails closed on whatever is kept is a note, not an error.
/// `kept` is as for [`compaction()`].
pub fn precheck(
    input: &Input,
    retention: Retention,
    kept: Option<&[String]>,
    tools: Option<&[Tool]>,
    options: PrecheckOptions,
) -> Result<Report, InputError> {
    let compaction = compaction(input, retention, kept)?;
    let tools = tools.map_or_else(|| input.tools_or_named(), <[Tool]>::to_vec);
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
/// fit. `tools` as for [`precheck()`]; `max_calls` bounds the calls tried per rule and tool.
pub fn pin(input: &Input, tools: Option<&[Tool]>, budget: Option<u64>, max_calls: usize) -> Report {
    let tools = tools.map_or_else(|| input.tools_or_named(), <[Tool]>::to_vec);
    pin::report(&input.store, &tools, budget, max_calls)
}
