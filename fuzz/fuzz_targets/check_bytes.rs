//! Arbitrary bytes through load, check, precheck and pin under several retentions: never
//! a panic, every report sealed, verifiable and terminal-safe; and the lean loader agrees
//! with the exact one, with the document's own kept set and action and with flags.
#![no_main]

use libfuzzer_sys::fuzz_target;
use omission_gate::CheckOptions;
use omission_gate::fuzzing::{named_tools, record_ids};

fuzz_target!(|data: &[u8]| {
    // The first byte picks K, the flag and the lean loader's chunk size; the rest is the
    // input.
    let (k, allow, chunk) = match data.first() {
        Some(b) => (
            usize::from(b & 0x3f),
            b & 0x40 != 0,
            1 + usize::from(b & 0x3f) * 7,
        ),
        None => (0, false, 1),
    };
    let bytes = data.get(1..).unwrap_or(&[]);
    let options = CheckOptions {
        allow_unevaluable: allow,
    };
    omission_gate_fuzz::assert_lean_agrees(bytes, None, None, chunk, options);
    omission_gate_fuzz::assert_lean_for_agrees(bytes, None, chunk, allow);
    let Some(input) = omission_gate_fuzz::judge(bytes, k, allow) else {
        return;
    };
    // The same bytes with the flags a harness would pass: every other record kept, and a
    // call of a tool the records name.
    let kept: String = record_ids(&input)
        .iter()
        .step_by(2)
        .map(|id| format!("{id}\n"))
        .collect();
    let tool = named_tools(&input)
        .into_iter()
        .next()
        .unwrap_or("t")
        .to_string();
    let action = serde_json::json!({"tool": tool, "params": {"amount": 5001}}).to_string();
    omission_gate_fuzz::assert_lean_agrees(bytes, Some(&kept), Some(&action), chunk, options);
    omission_gate_fuzz::assert_lean_for_agrees(bytes, Some(&kept), chunk, allow);
});
