//! What the tests, benchmarks and examples of the table-model workspace share, found by a crate path
//! (`table_model_test_utils::proxy::Proxy`) rather than a relative file path. Not published: each crate takes it as
//! a dev-dependency with the features it uses.
//!
//! - [`azurite`] (no feature): whether an Azurite suite runs: the endpoint, or skipped with a notice, or failed
//!   in CI.
//! - `proxy` (feature `proxy`): the fault-injecting HTTP/1.1 proxy between a client and Azurite.
//! - `faults` (feature `faults`): the fault tests' clients (fast retries, a short per-try timeout) and their
//!   tables.
//! - `loopback` (features `loopback`, `tls` for HTTPS, `bare` for the baseline client): a loopback HTTP(S) server
//!   that answers with a handler and records what it saw, the benchmarks' server in a child process, and their
//!   baseline client of it.
//! - `service` (feature `service`): an in-memory Table service on loopback with the service's latency and
//!   per-partition throttle, the benchmarks' server; the binary `table-server` serves it.
//! - `entity` (feature `entity`): the benchmarks' entity of every EDM type and its recorded JSON.
//! - [`temp_dir`] (no feature): a directory of a test's own, removed when the test ends.

#![warn(missing_docs)]

pub mod azurite;
#[cfg(feature = "entity")]
pub mod entity;
#[cfg(feature = "faults")]
pub mod faults;
#[cfg(feature = "loopback")]
pub mod loopback;
#[cfg(feature = "proxy")]
pub mod proxy;
#[cfg(feature = "service")]
pub mod service;
pub mod temp_dir;
