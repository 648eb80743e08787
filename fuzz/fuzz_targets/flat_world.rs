#![no_main]
//! libFuzzer on `flotilla_fuzzing::flat_world`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| flotilla_fuzzing::flat_world(data));
