//! `#[derive(TableEntity)]`, `#[derive(TableProperties)]` and `#[derive(TableEnum)]`: see the
//! [`table-model`](https://docs.rs/table-model) crate, which re-exports them and documents their attributes.
#![deny(missing_docs)]

mod ast;
mod attr;
mod case;
mod check;
mod ctxt;
mod expand;
mod fallback;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Implements `table_model::TableEntity`; see `table_model::TableEntity` for the attributes.
#[proc_macro_derive(TableEntity, attributes(table))]
pub fn derive_table_entity(input: TokenStream) -> TokenStream {
    expand::derive(&parse_macro_input!(input as DeriveInput), ast::Derive::Entity).into()
}

/// Implements `table_model::TableProperties`, for structs embedded with `#[table(flatten)]`.
#[proc_macro_derive(TableProperties, attributes(table))]
pub fn derive_table_properties(input: TokenStream) -> TokenStream {
    expand::derive(&parse_macro_input!(input as DeriveInput), ast::Derive::Properties).into()
}

/// Implements `table_model::TableEnum` for a fieldless enum stored as its variant names.
#[proc_macro_derive(TableEnum, attributes(table))]
pub fn derive_table_enum(input: TokenStream) -> TokenStream {
    expand::derive(&parse_macro_input!(input as DeriveInput), ast::Derive::Enum).into()
}
