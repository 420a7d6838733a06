#![no_main]

// The body is `table_model_fuzz_targets::filter_parse`, which the stable tests replay (fuzz-targets/tests/replay.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| table_model_fuzz_targets::filter_parse(data));
