#![no_main]
//! libFuzzer on `flotilla_fuzzing::armap`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| flotilla_fuzzing::armap(data));
