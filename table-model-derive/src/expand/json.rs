//! The direct JSON path of `TableEntity`: `to_json` statements and the generated `EntityVisitor` (a struct of
//! slots, one per field, filled as the decoder hands over typed properties).

use super::{bare_params, decode_unique, default_fn, edm_type_ident, private, private_at, read_expr, tie_source, Ctx};
use crate::ast::{Derive, Field, Role};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::collections::BTreeMap;
use syn::spanned::Spanned;
use syn::Generics;
use table_model_rules::name_hash;

/// The statement that writes a field into a JSON body (`__w: &mut BodyWriter`).
pub(super) fn json_write_stmt(cx: &Ctx, field: &Field) -> TokenStream {
    let ty = field.ty;
    let member = field.ident;
    let span = ty.span();
    let private = private_at(span);
    let name = |name: &str| match cx.derive {
        Derive::Properties => quote!(&#private::full_name(__prefix, #name)),
        _ => quote!(#name),
    };
    match field.role() {
        Role::Property { edm: None } => {
            let name = name(&field.name);
            quote_spanned!(span=> <#ty as #private::EdmField>::write_json(&self.#member, __w, #name)?;)
        }
        Role::Property { edm: Some((t, _)) } => {
            let name = name(&field.name);
            let t = edm_type_ident(t);
            quote_spanned!(span=> #private::write_json_as(
                __w, #name, <#ty as #private::EdmField>::to_edm(&self.#member), #private::EdmType::#t,
            )?;)
        }
        Role::Json => {
            let name = name(&field.name);
            quote_spanned!(span=> <#ty as #private::JsonField>::write_json(&self.#member, __w, #name)?;)
        }
        Role::Flatten { prefix } => {
            let prefix = cx.prefix_expr(&prefix);
            quote_spanned!(span=> <#ty as #private::TableProperties>::write_json(&self.#member, __w, #prefix)?;)
        }
        Role::PartitionKey { .. }
        | Role::RowKey { .. }
        | Role::TieBreaker
        | Role::Timestamp
        | Role::ETag
        | Role::Skip => quote!(),
    }
}

/// The decoding slot of a field, or `None` for a skipped one.
pub(super) fn slot_type(field: &Field) -> Option<TokenStream> {
    let ty = field.ty;
    let p = &private_at(ty.span());
    Some(match field.role() {
        Role::Skip => return None,
        Role::Flatten { .. } => quote!(#p::Option<#p::Entity>),
        Role::Timestamp => quote!(#p::Option<#p::DateTime>),
        Role::ETag => quote!(#p::Option<#p::ETag>),
        _ => quote!(#p::Option<#ty>),
    })
}

/// The arm of `__visit` that takes a property, for a field stored as one property: `index` is the field's
/// position, which `__index` gives for its name.
pub(super) fn visit_arm(field: &Field, index: usize, slot: &Ident) -> Option<TokenStream> {
    let ty = field.ty;
    let span = ty.span();
    let private = private_at(span);
    let index = Literal::usize_unsuffixed(index);
    let value = match field.role() {
        Role::Property { edm: None } => quote_spanned!(span=> <#ty as #private::EdmField>::from_edm(__value)),
        Role::Property { edm: Some(_) } => quote_spanned!(span=> #private::decode_as(
            __value, <#ty as #private::EdmField>::EDM_TYPE, <#ty as #private::EdmField>::from_edm,
        )),
        Role::Json => quote_spanned!(span=> <#ty as #private::JsonField>::decode(__value)),
        _ => return None,
    };
    Some(quote!(__tm::Some(#index) => __tm::fill(&mut self.#slot, #value),))
}

/// The arm of `__edm_type` for a field stored as one property (`index` as for [`visit_arm`]).
pub(super) fn edm_type_arm(field: &Field, index: usize) -> Option<TokenStream> {
    let ty = field.ty;
    let span = ty.span();
    let private = private_at(span);
    let index = Literal::usize_unsuffixed(index);
    let t = match field.role() {
        Role::Property { edm: None } => quote_spanned!(span=> <#ty as #private::EdmField>::EDM_TYPE),
        Role::Property { edm: Some((t, _)) } => {
            let t = edm_type_ident(t);
            quote!(__tm::Some(#private::EdmType::#t))
        }
        Role::Json => quote!(__tm::Some(#private::EdmType::String)),
        _ => return None,
    };
    Some(quote!(__tm::Some(#index) => #t,))
}

/// The expression that builds a field from its slot (the local `#slot`, moved out of `self`) once decoding is
/// done.
pub(super) fn finish_expr(cx: &Ctx, field: &Field, slot: Option<&Ident>) -> TokenStream {
    let ty = field.ty;
    let span = ty.span();
    let private = private_at(span);
    let name = &field.name;
    let absent = || match default_fn(field) {
        Some(f) => quote!(|| __tm::Some(#f())),
        None => match field.role() {
            Role::Json => quote_spanned!(span=> <#ty as #private::JsonField>::absent),
            _ => quote_spanned!(span=> <#ty as #private::EdmField>::absent),
        },
    };
    match (field.role(), slot) {
        (Role::Skip, _) | (_, None) => read_expr(cx, field),
        (Role::Flatten { prefix }, Some(slot)) => quote_spanned!(span=>
            <#ty as #private::TableProperties>::read_properties(&mut #private::buffered(#slot), #prefix)?
        ),
        (Role::PartitionKey { .. } | Role::RowKey { .. } | Role::TieBreaker, Some(slot)) => {
            let kind = match field.role() {
                Role::PartitionKey { .. } => quote!(Partition),
                Role::RowKey { .. } => quote!(Row),
                _ => {
                    let kind = tie_source(super::fields(cx.cont)).expect("checked: a unique key exists").kind();
                    quote!(#kind)
                }
            };
            quote!(match #slot {
                __tm::Some(__v) => __v,
                __tm::None => {
                    return __tm::Err(#private::DecodeError::missing_key(#private::KeyKind::#kind))
                }
            })
        }
        (Role::Timestamp, Some(slot)) => {
            quote_spanned!(span=> <#ty as #private::TimestampField>::from_timestamp(#slot))
        }
        (Role::ETag, Some(slot)) => {
            quote_spanned!(span=> <#ty as #private::ETagField>::from_etag(__tm::Option::as_ref(&#slot)))
        }
        (Role::Property { .. }, Some(slot)) if default_fn(field).is_none() => {
            quote_spanned!(span=> <#ty as #private::EdmField>::__finish(#slot, __prefix, #name)?)
        }
        (_, Some(slot)) => {
            let absent = absent();
            quote_spanned!(span=> #private::finish(#slot, __prefix, #name, #absent)?)
        }
    }
}

/// The statements of `EntityVisitor::begin`: keys, Timestamp and ETag.
pub(super) fn begin_stmts(cx: &Ctx, fields: &[Field], slots: &[Option<Ident>]) -> Vec<TokenStream> {
    let private = private();
    let a = &cx.cont.attrs;
    let mut out = Vec::new();
    for (lit, kind, member) in [
        (a.partition_key.get(), quote!(Partition), quote!(partition_key)),
        (a.row_key.get(), quote!(Row), quote!(row_key)),
    ] {
        if let Some(lit) = lit {
            out.push(quote!(#private::decode_constant_key(
                #private::KeyKind::#kind,
                #private::key_str(&__system.#member),
                #lit,
            )?;));
        }
    }
    for (field, slot) in fields.iter().zip(slots) {
        let Some(slot) = slot else { continue };
        let ty = field.ty;
        let span = ty.span();
        let p = private_at(span);
        let key = |kind: TokenStream, key: TokenStream, decode: TokenStream| {
            quote_spanned!(span=> self.#slot = __tm::Some(#p::decode_key(
                #p::KeyKind::#kind,
                #key,
                #decode,
            )?);)
        };
        // A `KeyField` takes the key string, which a `String` field keeps without copying.
        let owned = |member: TokenStream, key_type: TokenStream| quote!(__tm::Option::map(__tm::Option::take(&mut __system.#member), #p::#key_type::into_string));
        // The unique keys and the tie-breaker are parsed from borrowed keys: a key a field takes (`owned`) is
        // never a unique one.
        match field.role() {
            Role::PartitionKey { unique: true } => out.push(key(
                quote!(Partition),
                quote!(#p::key_str(&__system.partition_key)),
                decode_unique(field, false, None),
            )),
            Role::RowKey { reverse, unique: true } => {
                out.push(key(quote!(Row), quote!(#p::key_str(&__system.row_key)), decode_unique(field, reverse, None)))
            }
            Role::TieBreaker => {
                let source = tie_source(fields).expect("checked: a unique key exists");
                let (kind, member) = (source.kind(), source.getter());
                out.push(key(
                    quote!(#kind),
                    quote!(#p::key_str(&__system.#member)),
                    decode_unique(field, source.reverse, None),
                ))
            }
            Role::PartitionKey { unique: false } => out.push(key(
                quote!(Partition),
                owned(quote!(partition_key), quote!(PartitionKey)),
                quote_spanned!(span=> <#ty as #p::KeyField>::decode_key_string),
            )),
            Role::RowKey { reverse: false, unique: false } => out.push(key(
                quote!(Row),
                owned(quote!(row_key), quote!(RowKey)),
                quote_spanned!(span=> <#ty as #p::KeyField>::decode_key_string),
            )),
            Role::RowKey { reverse: true, unique: false } => out.push(key(
                quote!(Row),
                quote!(#p::key_str(&__system.row_key)),
                quote_spanned!(span=> <#ty as #p::ReverseChronologicalKey>::decode_reverse_key),
            )),
            Role::Timestamp => out.push(quote!(self.#slot = __system.timestamp;)),
            Role::ETag => out.push(quote!(self.#slot = __tm::Option::take(&mut __system.etag);)),
            _ => {}
        }
    }
    out
}

/// The slots struct that decodes a struct from JSON, with `__edm_type`, `__visit` and `__finish`.
pub(super) fn slots_items(cx: &Ctx, fields: &[Field], generics: &Generics, force: &TokenStream) -> TokenStream {
    let private = private();
    let ident = cx.cont.ident;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let vis = &cx.cont.original.vis;
    let mut slots: Vec<Option<Ident>> = Vec::with_capacity(fields.len());
    let mut decls: Vec<TokenStream> = Vec::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        let slot = slot_type(f).map(|ty| {
            let slot = format_ident!("__slot{}", i);
            decls.push(quote!(#slot: #ty));
            slot
        });
        slots.push(slot);
    }
    let inits: Vec<&Ident> = slots.iter().flatten().collect();
    let (_, marker) = bare_params(&cx.cont.original.generics);
    let (marker_decl, marker_init) = if marker.is_empty() {
        (quote!(), quote!())
    } else {
        (
            quote!(__marker: ::core::marker::PhantomData<fn() -> #marker>,),
            quote!(__marker: ::core::marker::PhantomData,),
        )
    };
    let visit_arms: Vec<TokenStream> = fields
        .iter()
        .zip(&slots)
        .enumerate()
        .filter_map(|(i, (f, s))| s.as_ref().and_then(|s| visit_arm(f, i, s)))
        .collect();
    // The fields `__index` finds by name: those of `__edm_type`'s arms, whose names the derive has checked
    // (check.rs, `check_names`), so they are distinct.
    let mut type_arms: Vec<TokenStream> = Vec::new();
    let mut indexed: Vec<(usize, &str)> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        if let Some(arm) = edm_type_arm(f, i) {
            type_arms.push(arm);
            indexed.push((i, f.name.as_str()));
        }
    }
    let index_body = index_body(&private, &indexed);
    let mut flatten_visits = Vec::new();
    let mut flatten_types = Vec::new();
    for (f, slot) in fields.iter().zip(&slots) {
        if let (Role::Flatten { prefix }, Some(slot)) = (f.role(), slot) {
            let ty = f.ty;
            let span = ty.span();
            let private = private_at(span);
            let group = quote_spanned!(span=> <#ty as #private::TableProperties>::FIELDS);
            flatten_visits.push(quote! {
                if let __tm::Some(__rest) = __name.strip_prefix(#prefix) {
                    if #private::group_has(#group, __rest) {
                        #private::buffer(&mut self.#slot, __name, __value)?;
                        return __tm::Ok(__tm::None);
                    }
                }
            });
            flatten_types.push(quote! {
                if let __tm::Some(__rest) = __name.strip_prefix(#prefix) {
                    if let __t @ __tm::Some(_) = #private::group_edm_type(#group, __rest) {
                        return __t;
                    }
                }
            });
        }
    }
    let members: Vec<&Ident> = fields.iter().map(|f| f.ident).collect();
    let finishes: Vec<TokenStream> = fields.iter().zip(&slots).map(|(f, s)| finish_expr(cx, f, s.as_ref())).collect();
    let vars: Vec<Ident> = (0..fields.len()).map(|i| format_ident!("__field{}", i)).collect();
    let entity_visitor = if cx.derive == Derive::Entity {
        let begin = begin_stmts(cx, fields, &slots);
        // `__index` finds only the names of `__edm_type`'s arms, which the derive has checked.
        let known = if indexed.is_empty() { quote!(false) } else { quote!(Self::__index(__name).is_some()) };
        let deny = if cx.cont.attrs.deny_unknown_properties.is_set() {
            quote!(__tm::Err(#private::unknown_property_json(__name)))
        } else {
            quote!(__tm::Ok(()))
        };
        quote! {
            #[automatically_derived]
            impl #impl_generics #private::EntityVisitor for __TableSlots #ty_generics #where_clause {
                type Value = #ident #ty_generics;

                #[inline]
                fn edm_type(&self, __name: &str) -> __tm::Option<#private::EdmType> {
                    Self::__edm_type(__name)
                }

                #[inline]
                fn is_known_property(&self, __name: &str) -> bool {
                    #known
                }

                #[allow(unused_mut, unused_variables)]
                #[inline]
                fn begin(&mut self, mut __system: #private::SystemProperties) -> __tm::StdResult<(), #private::DecodeError> {
                    #(#begin)*
                    __tm::Ok(())
                }

                #[inline]
                fn property(&mut self, __name: &str, __value: #private::EdmValue) -> __tm::StdResult<(), #private::DecodeError> {
                    match self.__visit(__name, __value)? {
                        __tm::None => __tm::Ok(()),
                        __tm::Some(_) => #deny,
                    }
                }

                #[inline]
                fn end(self) -> __tm::StdResult<#ident #ty_generics, #private::DecodeError> {
                    self.__finish("")
                }
            }
        }
    } else {
        quote!()
    };
    quote! {
        #[doc(hidden)]
        #vis struct __TableSlots #impl_generics #where_clause {
            #(#decls,)*
            #marker_decl
        }

        impl #impl_generics __tm::Default for __TableSlots #ty_generics #where_clause {
            fn default() -> Self {
                Self { #(#inits: __tm::None,)* #marker_init }
            }
        }

        impl #impl_generics __TableSlots #ty_generics #where_clause {
            // The position of the field stored as the property `__name`, in constant time: the name's bucket
            // (computed for every name when the struct was compiled), then the names of that bucket.
            #[inline]
            fn __index(__name: &str) -> __tm::Option<usize> {
                #index_body
            }

            #[inline]
            fn __edm_type(__name: &str) -> __tm::Option<#private::EdmType> {
                match Self::__index(__name) {
                    #(#type_arms)*
                    _ => {
                        #(#flatten_types)*
                        __tm::None
                    }
                }
            }

            #[allow(unused_mut)]
            #[inline]
            fn __visit(
                &mut self,
                __name: &str,
                __value: #private::EdmValue,
            ) -> __tm::StdResult<__tm::Option<#private::EdmValue>, #private::DecodeError> {
                match Self::__index(__name) {
                    #(#visit_arms)*
                    _ => {
                        #(#flatten_visits)*
                        __tm::Ok(__tm::Some(__value))
                    }
                }
            }

            #[inline]
            fn __finish(self, __prefix: &str) -> __tm::StdResult<#ident #ty_generics, #private::DecodeError> {
                #force
                // The slots are moved into locals first and each field is built by its own statement: one
                // struct literal with an early return per field would make the compiler drop the rest of
                // `self` separately at each of them, code quadratic in the number of fields.
                let __TableSlots { #(#inits,)* .. } = self;
                #(let #vars = #finishes;)*
                __tm::Ok(#ident { #(#members: #vars),* })
            }
        }

        #entity_visitor
    }
}

/// Up to this many names, `__index` compares the name with each in turn; beyond, it hashes it.
const LINEAR_INDEX_MAX: usize = 16;

/// The body of `__index`: for a few names a `match`, else `name_bucket` of the name, then a comparison with each
/// name of that bucket (about one: there are at least twice as many buckets as names, see
/// `table_model_rules::name_hash`).
fn index_body(private: &TokenStream, indexed: &[(usize, &str)]) -> TokenStream {
    if indexed.is_empty() {
        return quote! {
            let _ = __name;
            __tm::None
        };
    }
    if indexed.len() <= LINEAR_INDEX_MAX {
        // A few names: compared in turn (by length first), cheaper than hashing the name three times a property.
        let arms = indexed.iter().map(|(index, name)| {
            let index = Literal::usize_unsuffixed(*index);
            quote!(#name => __tm::Some(#index),)
        });
        return quote! {
            match __name {
                #(#arms)*
                _ => __tm::None,
            }
        };
    }
    let bits = name_hash::bucket_bits(indexed.len());
    let mut buckets: BTreeMap<usize, Vec<(usize, &str)>> = BTreeMap::new();
    for &(index, name) in indexed {
        buckets.entry(name_hash::name_bucket(name, bits)).or_default().push((index, name));
    }
    let arms = buckets.iter().map(|(bucket, names)| {
        let bucket = Literal::usize_unsuffixed(*bucket);
        let chain = names.iter().rev().fold(quote!(__tm::None), |rest, (index, name)| {
            let index = Literal::usize_unsuffixed(*index);
            quote!(if __name == #name { __tm::Some(#index) } else { #rest })
        });
        quote!(#bucket => #chain,)
    });
    let bits = Literal::u32_unsuffixed(bits);
    quote! {
        match #private::name_bucket(__name, #bits) {
            #(#arms)*
            _ => __tm::None,
        }
    }
}
