//! `#[derive(TableEnum)]`: the variant names, and the `EdmField` and `KeyField` impls that store them.

use super::{private, wrap};
use crate::ast::{Container, Data, Variant};
use proc_macro2::{Ident, TokenStream};
use quote::quote;

pub(super) fn expand_enum(cont: &Container) -> TokenStream {
    let krate = cont.attrs.krate();
    let private = private();
    let ident = cont.ident;
    let (impl_generics, ty_generics, where_clause) = cont.original.generics.split_for_impl();
    let variants: &[Variant] = match &cont.data {
        Data::Enum(v) => v,
        Data::Struct(_) => unreachable!("an enum"),
    };
    let idents: Vec<&Ident> = variants.iter().map(|v| v.ident).collect();
    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    let type_name = ident.to_string();
    let as_str =
        if variants.is_empty() { quote!(match *self {}) } else { quote!(match self { #(Self::#idents => #names,)* }) };
    wrap(
        &krate,
        quote! {
            #[automatically_derived]
            impl #impl_generics #private::TableEnum for #ident #ty_generics #where_clause {
                const NAME: &'static str = #type_name;
                const VARIANTS: &'static [&'static str] = &[#(#names),*];

                fn as_str(&self) -> &'static str {
                    #as_str
                }

                fn from_name(__name: &str) -> __tm::Option<Self> {
                    match __name {
                        #(#names => __tm::Some(Self::#idents),)*
                        _ => __tm::None,
                    }
                }
            }

            #[automatically_derived]
            impl #impl_generics #private::EdmField for #ident #ty_generics #where_clause {
                const EDM_TYPE: __tm::Option<#private::EdmType> =
                    __tm::Some(#private::EdmType::String);

                fn to_edm(&self) -> __tm::StdResult<__tm::Option<#private::EdmValue>, #private::ValueError> {
                    #private::enum_to_edm(self)
                }

                fn from_edm(__value: #private::EdmValue) -> __tm::StdResult<Self, #private::ValueError> {
                    #private::enum_from_edm(__value)
                }

                fn write_json(&self, __w: &mut #private::BodyWriter, __name: &str) -> __tm::StdResult<(), #private::EncodeError> {
                    __w.property_str(__name, #private::TableEnum::as_str(self));
                    __tm::Ok(())
                }
            }

            #[automatically_derived]
            impl #impl_generics #private::KeyField for #ident #ty_generics #where_clause {
                const ENCODING: #private::KeyEncoding = #private::KeyEncoding::Variant;

                fn encode_key(&self) -> __tm::StdResult<#private::Cow<'_, str>, #private::ValueError> {
                    __tm::Ok(#private::Cow::Borrowed(#private::TableEnum::as_str(self)))
                }

                fn decode_key(__key: &str) -> __tm::StdResult<Self, #private::ValueError> {
                    #private::enum_from_key(__key)
                }
            }
        },
    )
}
