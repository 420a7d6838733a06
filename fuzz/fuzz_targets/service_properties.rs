#![no_main]

// The body is `table_model_fuzz_targets::service_properties`, which the stable tests replay (fuzz-targets/tests/replay.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| table_model_fuzz_targets::service_properties(data));
