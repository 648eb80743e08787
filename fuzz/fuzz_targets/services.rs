#![no_main]
//! libFuzzer on `flotilla_fuzzing::services`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| flotilla_fuzzing::services(data));
