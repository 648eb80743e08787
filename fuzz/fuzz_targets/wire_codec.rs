#![no_main]
//! libFuzzer on `flotilla_fuzzing::wire_codec`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| flotilla_fuzzing::wire_codec(data));
