//! The bodies of `table-model`'s fuzz targets: one plain function per parser of untrusted input, each taking the
//! fuzzer's bytes and asserting the round trips that must hold for whatever the parser accepts.
//!
//! The cargo-fuzz project in `fuzz/` (nightly and libFuzzer) calls these functions from its targets, one
//! `fuzz_targets/<name>.rs` per entry of [`TARGETS`]; the stable test `tests/replay.rs` runs every file of
//! `fuzz/corpus/<name>/` and `fuzz/regressions/<name>/` through them, and a bounded proptest of random bytes
//! per target. See `fuzz/README.md`.
//!
//! A function returns normally for every input the parser refuses and for every input whose round trips
//! hold. It panics only when a property is violated, which is a bug in `table-model` (or a panic inside
//! `table-model` itself, which is one too). The properties:
//!
//! - an entity that decodes re-encodes ([`encode_entity`](table_model::encode_entity) or the derived
//!   `to_json`) and decodes again to the same values, at every metadata level: the body as written
//!   (minimal), without annotations (none, typed by hints or the struct's schema), and with an annotation on
//!   every property and the full-metadata members;
//! - a batch response reads into as many ETags as operations, or an error whose operation index is inside
//!   the batch; an error response names the code of its header; stored access policies that are read write
//!   back and read again to the same list, and so do service properties (or are refused by their checks);
//! - a connection string that parses gives an endpoint that re-parses to itself, and requests built on it;
//! - a SAS token, a `DateTime`, a continuation token and every key helper's key display and re-parse to the
//!   same value;
//! - a filter literal built from any string reads back as that string;
//! - `$filter` text that parses renders, and the rendered text parses back to the same filter.

#![deny(missing_docs, missing_debug_implementations)]

mod connection;
mod filter;
mod json;
mod responses;
mod values;

pub use connection::{connection_string, endpoint, sas_token};
pub use filter::{filter_literal, filter_parse, read_string_literal};
pub use json::{entity_json, query_json, typed_entity_json, typed_query_json};
pub use responses::{
    access_policies, batch_response, error_response, service_properties, service_stats, table_listing,
};
pub use values::{composite_key, continuation, datetime, integer_key, time_key};

/// A fuzz target's body.
pub type Target = fn(&[u8]);

/// Every target: its name (the name of its fuzz binary and of its corpus and regression folders) and its
/// function.
pub const TARGETS: &[(&str, Target)] = &[
    ("entity_json", entity_json),
    ("query_json", query_json),
    ("typed_entity_json", typed_entity_json),
    ("typed_query_json", typed_query_json),
    ("batch_response", batch_response),
    ("error_response", error_response),
    ("table_listing", table_listing),
    ("access_policies", access_policies),
    ("service_properties", service_properties),
    ("service_stats", service_stats),
    ("connection_string", connection_string),
    ("endpoint", endpoint),
    ("sas_token", sas_token),
    ("datetime", datetime),
    ("time_key", time_key),
    ("integer_key", integer_key),
    ("composite_key", composite_key),
    ("continuation", continuation),
    ("filter_literal", filter_literal),
    ("filter_parse", filter_parse),
];

/// The fuzzer's bytes as text: parsers of text take `&str`, and a lossy conversion lets every input reach them.
fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}
