//! `tablectl` end to end, one test binary (each binary of the crate links DataFusion through the `sql` feature:
//! one link, not ten). Each module is a suite of its own, run by the built binary as a user runs it.

#[macro_use]
mod support;

mod backup;
mod delete;
mod entra;
mod formats;
mod identities;
#[cfg(feature = "otlp")]
mod otlp;
mod parquet;
mod roundtrip;
mod scale;
mod schema;
mod sql;
mod tablectl;
mod validate;
