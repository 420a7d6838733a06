//! The service's limits, as named constants (`docs/rules.md`). Every check in this crate and in the derive uses these.
//!
//! Layer: rules.
pub use table_model_rules::limits::*;
