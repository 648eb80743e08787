#![no_main]
//! libFuzzer on `flotilla_fuzzing::world_file`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| flotilla_fuzzing::world_file(data));
