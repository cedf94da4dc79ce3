//! omission-gate: among the records a compactor dropped, is there one that binds this
//! action?
//!
//! The library reads a full pre-compaction record set, the kept ids and a proposed tool
//! call, computes the dropped set itself, resolves typed predicates against typed records
//! (exact decimal arithmetic, three-valued logic, no scoring) and returns PASS, BLOCK or
//! ERROR with every finding. Only [`cli`] does I/O.

pub mod action;
pub mod cli;
pub mod compaction;
pub mod decimal;
pub mod error;
pub mod gate;
pub mod input;
pub mod json;
pub mod predicate;
pub mod record;
pub mod report;
pub mod scan;
pub mod stream;
