#![no_main]
//! libFuzzer on `flotilla_fuzzing::pioneer_packets`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| flotilla_fuzzing::pioneer_packets(data));
