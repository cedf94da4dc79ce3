//! Arbitrary bytes into the input loader and the flag readers: never a panic, and every
//! refusal is one terminal-safe line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use omission_gate::input;
use omission_gate::record::Limits;
use omission_gate::report;
use omission_gate_fuzz::assert_sound_error;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = input::load("fuzz.json", data, Limits::default()) {
        assert_sound_error(&e);
    }
    // A tight limit exercises the refusals of deep predicates.
    let tight = Limits {
        max_predicate_depth: 2,
        ..Limits::default()
    };
    if let Err(e) = input::load("fuzz.json", data, tight) {
        assert_sound_error(&e);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        for from_file in [false, true] {
            if let Err(e) = input::kept_from_flag("--kept", text, from_file) {
                assert_sound_error(&e);
            }
        }
        if let Err(e) = input::action_from_flag("--action", text) {
            assert_sound_error(&e);
        }
        if let Err(e) = input::tools_from_flag("--tools", text) {
            assert_sound_error(&e);
        }
    }
    let _ = report::verify(data);
});
