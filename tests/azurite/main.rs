//! The SDK's async client against a real Table service implementation: the Azurite emulator.
//!
//! Start it with `eval "$(scripts/azurite.sh start)"` (or run `scripts/azurite.sh run cargo test --workspace`):
//! the tests read its endpoint from `TABLE_MODEL_AZURITE_ENDPOINT`. Without it they are skipped with a notice,
//! except when `CI` is set, where they fail.

mod support;

mod auth;
mod batches;
mod entities;
mod error_codes;
mod matching;
mod non_ascii;
mod operations;
mod paging;
mod queries;
mod ranges;
mod readme;
mod sas;
mod script;
mod service_properties;
mod spec_gaps;
mod tables;
