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
//! The action-blind `precheck` and the compactor-side `pin` (SPEC 5 and 6) join
//! [`check`] here as they land.

pub mod action;
pub mod cli;
pub mod compaction;
pub mod decimal;
pub mod error;
pub mod gate;
pub mod hook;
pub mod input;
pub mod json;
pub mod pin;
pub mod precheck;
pub mod predicate;
pub mod record;
pub mod report;
pub mod schema;

pub use crate::action::{Action, Tool};
pub use crate::compaction::{Compaction, Retention};
pub use crate::error::InputError;
pub use crate::gate::{CheckOptions, Code, Finding, Severity, Verdict};
pub use crate::input::Input;
pub use crate::report::{Format, Report};

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
    let outcome = gate::check(&input.store, &compaction, action, options);
    Ok(Report::check(action, &compaction, outcome))
}
