//! Arbitrary bytes into the input loader and the flag readers: never a panic, and every
//! refusal is one terminal-safe line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use omission_gate::fuzzing::{action_from_flag, kept_from_flag, load_with_depth, tools_from_flag};
use omission_gate_fuzz::assert_sound_error;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = omission_gate::load("fuzz.json", data) {
        assert_sound_error(&e);
    }
    // A tight limit exercises the refusals of deep predicates.
    if let Err(e) = load_with_depth("fuzz.json", data, 2) {
        assert_sound_error(&e);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        for from_file in [false, true] {
            if let Err(e) = kept_from_flag("--kept", text, from_file) {
                assert_sound_error(&e);
            }
        }
        if let Err(e) = action_from_flag("--action", text) {
            assert_sound_error(&e);
        }
        if let Err(e) = tools_from_flag("--tools", text) {
            assert_sound_error(&e);
        }
    }
    let _ = omission_gate::verify(data);
});
