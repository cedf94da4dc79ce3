//! Arbitrary bytes as a harness transcript: never a panic, and reading only the file's
//! end (as the CLI does for a long session) gives what reading the whole file gives,
//! whenever the end holds the start of the live context.
#![no_main]

use libfuzzer_sys::fuzz_target;
use omission_gate::fuzzing::transcript_reads;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the harness (or none: recognised from the first line),
    // whether a pending call is named and whether Claude Code's environment makes a model
    // its own refusal fallback; the next two, where the end starts.
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Some((cut, bytes)) = rest.split_first_chunk::<2>() else {
        return;
    };
    let from = usize::from(u16::from_le_bytes(*cut)) % (bytes.len() + 1);
    let call = (pick & 4 != 0).then_some("call_1");
    let (whole, tail) = transcript_reads(pick, bytes, from, call);
    if let Some(tail) = tail {
        assert_eq!(
            tail, whole,
            "the end of the file from byte {from} reads otherwise than the whole file"
        );
    }
});
