#![no_main]
//! libFuzzer on `flotilla_fuzzing::line_segments`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| flotilla_fuzzing::line_segments(data));
