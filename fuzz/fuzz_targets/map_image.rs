#![no_main]
//! libFuzzer on `flotilla_fuzzing::map_image`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| flotilla_fuzzing::map_image(data));
