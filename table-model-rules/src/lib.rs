//! The Azure Table service rules, in one place.
//!
//! This crate is an implementation detail of [`table-model`](https://docs.rs/table-model): the runtime crate
//! and the `#[derive(TableEntity)]` macro both check names, keys and limits with the code below, so a rule
//! can never be checked one way at compile time and another way at run time. Depend on `table-model`, which
//! re-exports the kinds of error, and whose own name and key errors carry the refused value and show it with
//! the `with_value` messages below.
//!
//! Every rule is stated in `docs/rules.md`; each validator documents the section it enforces.
#![deny(missing_docs, missing_debug_implementations)]

pub mod display;
pub mod edm_type;
pub mod key;
pub mod limits;
pub mod name_hash;
pub mod property_name;
pub mod rule_set;
pub mod table_name;
mod utf8;

pub use display::DisplayChar;
pub use edm_type::{EdmType, UnknownEdmType};
pub use key::{KeyError, KeyErrorKind, KeyKind};
pub use property_name::{PropertyNameError, PropertyNameErrorKind};
pub use rule_set::{RuleSet, RuleSetError, RuleSetErrorKind};
pub use table_name::{TableNameError, TableNameErrorKind};
pub use utf8::utf16_len;
