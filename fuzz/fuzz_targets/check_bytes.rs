//! Arbitrary bytes through load and check under several retentions: never a panic, and
//! every report sealed, verifiable and terminal-safe.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks K and the flag; the rest is the input.
    let (k, allow) = match data.first() {
        Some(b) => (usize::from(b & 0x3f), b & 0x40 != 0),
        None => (0, false),
    };
    omission_gate_fuzz::judge(data.get(1..).unwrap_or(&[]), k, allow);
});
