#![no_main]
//! libFuzzer on `flotilla_fuzzing::ros_messages`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| flotilla_fuzzing::ros_messages(data));
