//! `#[derive(TableEntity)]`: see the [`table-model`](https://docs.rs/table-model) crate, which re-exports it.
#![deny(missing_docs)]
