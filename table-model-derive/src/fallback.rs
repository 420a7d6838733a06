//! After errors, stub impls with `unreachable!()` bodies, so that the user's code that uses the derived trait
//! does not add errors of its own to the ones that matter (thiserror's `fallback.rs`).
//!
//! Layer: expand.

use crate::ast::Derive;
use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

/// The stub impl of `derive` for `input`, through the runtime crate at `krate` (`#[table(crate = "...")]`).
pub fn stub(input: &DeriveInput, derive: Derive, krate: &TokenStream) -> TokenStream {
    let private = quote!(#krate::__private);
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let body = match derive {
        Derive::Entity => quote! {
            impl #impl_generics #private::TableEntity for #ident #ty_generics #where_clause {
                const SCHEMA: #private::Schema = #private::Schema::__new(
                    ::core::option::Option::None,
                    #private::KeySource::Constant(""),
                    #private::KeySource::Constant(""),
                    &[],
                    false,
                );
                type Properties = ();
                const PROPERTIES: () = ();
                fn to_entity(&self) -> #private::Result<#private::Entity> {
                    ::core::unreachable!()
                }
                fn from_entity(_: #private::Entity) -> #private::Result<Self> {
                    ::core::unreachable!()
                }
                fn to_json(&self) -> ::core::result::Result<#private::EntityBody, #private::EncodeError> {
                    ::core::unreachable!()
                }
                type __Visitor = #private::StubVisitor<Self>;
            }
        },
        Derive::Properties => quote! {
            impl #impl_generics #private::TableProperties for #ident #ty_generics #where_clause {
                const FIELDS: &'static [#private::FieldSchema] = &[];
                fn write_properties(&self, _: &mut #private::Entity, _: &str) -> #private::Result<()> {
                    ::core::unreachable!()
                }
                fn read_properties(_: &mut #private::Entity, _: &str) -> #private::Result<Self> {
                    ::core::unreachable!()
                }
                fn write_json(&self, _: &mut #private::BodyWriter, _: &str) -> ::core::result::Result<(), #private::EncodeError> {
                    ::core::unreachable!()
                }
            }
        },
        Derive::Enum => quote! {
            impl #impl_generics #private::TableEnum for #ident #ty_generics #where_clause {
                const NAME: &'static str = "";
                const VARIANTS: &'static [&'static str] = &[];
                fn as_str(&self) -> &'static str {
                    ::core::unreachable!()
                }
                fn from_name(_: &str) -> ::core::option::Option<Self> {
                    ::core::unreachable!()
                }
            }
        },
    };
    quote! {
        #[allow(unused_qualifications)]
        const _: () = {
            #body
        };
    }
}
