//! The `TableEntity` impl of a struct, in steps: the schema's key sources, the `#[table(unique)]` keys and their
//! tie-breaker, the keys as `to_entity` and `to_json` write them, the methods only some structs have, the typed
//! property handles, and the impl, with the `NamedTable` impl of a struct that names its table.

use super::{bare_params, json, private, private_at, rule_set_tokens, unwrap_option, wrap, Ctx, StructParts};
use crate::ast::{Field, Role};
use crate::attr;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::LitStr;

pub(super) fn expand_entity(cx: &Ctx, parts: &StructParts) -> TokenStream {
    let krate = &cx.krate;
    let private = private();
    let cont = cx.cont;
    let ident = cont.ident;
    let fields = parts.fields;
    let generics = &parts.generics;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let StructParts { writes, vars, reads, members, schema_fields, checks, json_writes, .. } = parts;
    let trait_path = quote!(#private::TableEntity);
    let force = parts.force_check(&trait_path);
    let eager = parts.eager_check();
    let slots_items = json::slots_items(cx, fields, generics, &slots_force(parts, ident));
    let capacity = 64 + fields.iter().map(|f| f.name.len() + 32).sum::<usize>();

    let a = &cont.attrs;
    let table_name = match a.name.get() {
        Some(lit) => quote!(__tm::Some(#lit)),
        None => quote!(__tm::None),
    };
    let keys = KeyFields::new(fields);
    let pk_source = key_source(a.partition_key.get(), keys.partition);
    let rk_source = key_source(a.row_key.get(), keys.row);
    let deny_flag = a.deny_unknown_properties.is_set();
    let with_rules = a.service.is_set().then(|| {
        let rules = rule_set_tokens(&private, a.rules());
        quote!(.__with_rules(#rules))
    });
    let unique = UniqueKeys::new(fields, &keys);
    let (entity_finish, json_finish) = unique.finish();
    let entity_prelude = unique.prelude(quote!(EntityError));
    let json_prelude = unique.prelude(quote!(EncodeError));
    // Without flattened groups every name is one the derive checked to be distinct (check.rs): the
    // writer need not look for repeats.
    let writer = if fields.iter().any(|f| f.attrs.flatten.is_set()) {
        quote!(#private::BodyWriter::with_capacity)
    } else {
        quote!(#private::body_writer_distinct)
    };
    let json_pk = unique.json_key(a.partition_key.get(), keys.partition, quote!(Partition));
    let json_rk = unique.json_key(a.row_key.get(), keys.row, quote!(Row));
    let etag_fn = etag_fn(fields);
    let pk = unique.entity_key(a.partition_key.get(), keys.partition, "partition");
    let rk = unique.entity_key(a.row_key.get(), keys.row, "row");
    let key_fns = key_fns(&unique, &pk, &rk);
    let constant_checks = constant_key_checks(a);
    let deny = if deny_flag { quote!(#private::deny_unknown(__entity)?;) } else { quote!() };
    let handles = PropertyHandles::new(cx, fields);
    let (handles_ident, handle_values, marker_value) = (&handles.ident, &handles.values, &handles.marker_value);
    let impl_block = quote! {
        #[automatically_derived]
        impl #impl_generics #trait_path for #ident #ty_generics #where_clause {
            const SCHEMA: #private::Schema = #private::Schema::__new(
                #table_name,
                #pk_source,
                #rk_source,
                &[#(#schema_fields),*],
                #deny_flag,
            )#with_rules;
            type Properties = #handles_ident #ty_generics;
            const PROPERTIES: Self::Properties = #handles_ident { #(#handle_values,)* #marker_value };
            #checks

            #[inline]
            fn to_entity(&self) -> #private::Result<#private::Entity> {
                #force
                #entity_prelude
                let mut __owned = #private::Entity::new(#pk, #rk);
                let __entity = &mut __owned;
                #(#writes)*
                #entity_finish
                __tm::Ok(__owned)
            }

            #[inline]
            fn from_entity(mut __owned: #private::Entity) -> #private::Result<Self> {
                #force
                let __entity = &mut __owned;
                #(#constant_checks)*
                #(let #vars = #reads;)*
                #deny
                __tm::Ok(Self { #(#members: #vars),* })
            }

            #key_fns

            #etag_fn

            #[inline]
            fn to_json(&self) -> __tm::StdResult<#private::EntityBody, #private::EncodeError> {
                #force
                #json_prelude
                let __pk = #json_pk;
                let __rk = #json_rk;
                let mut __writer = #writer(#capacity, &__pk, &__rk);
                let __w = &mut __writer;
                #(#json_writes)*
                #json_finish
            }

            type __Visitor = __TableSlots #ty_generics;
        }
        #slots_items
        #eager
    };
    let named_table = named_table(cx, generics);
    let impl_block = quote!(#impl_block #named_table);
    let wrapped = wrap(krate, impl_block);
    let handles = handles.item;
    quote! {
        #handles
        #wrapped
    }
}

/// The statement that evaluates the checks that depend on a generic parameter in the generated visitor's
/// methods (see [`StructParts::force_check`]).
fn slots_force(parts: &StructParts, ident: &Ident) -> TokenStream {
    let private = private();
    match &parts.checks {
        Some(_) => {
            let (_, ty_generics, _) = parts.generics.split_for_impl();
            quote! {
                #[allow(clippy::let_unit_value)]
                let () = <#ident #ty_generics as #private::TableEntity>::__CHECK;
            }
        }
        None => quote!(),
    }
}

/// The fields that hold the keys, when a key is not a constant of the struct.
struct KeyFields<'a> {
    partition: Option<&'a Field<'a>>,
    row: Option<&'a Field<'a>>,
}

impl<'a> KeyFields<'a> {
    fn new(fields: &'a [Field<'a>]) -> Self {
        let key_field = |pick: &dyn Fn(&Field) -> bool| fields.iter().find(|f| pick(f));
        KeyFields {
            partition: key_field(&|f| f.attrs.partition_key.is_set()),
            row: key_field(&|f| f.attrs.row_key.is_set()),
        }
    }
}

/// Where the schema says a key comes from: a constant, or a field and how it encodes the key.
fn key_source(constant: Option<&LitStr>, field: Option<&Field>) -> TokenStream {
    let private = private();
    match (constant, field) {
        (Some(lit), _) => quote!(#private::KeySource::Constant(#lit)),
        (None, Some(f)) => {
            let name = f.field_name();
            let ty = f.ty;
            let encoding = if f.attrs.unique.is_set() {
                if f.attrs.reverse_chronological.is_set() {
                    quote!(#private::KeyEncoding::ReverseChronologicalUnique)
                } else {
                    quote!(#private::KeyEncoding::ChronologicalUnique)
                }
            } else if f.attrs.reverse_chronological.is_set() {
                quote!(#private::KeyEncoding::ReverseChronological)
            } else {
                quote_spanned!(ty.span()=> <#ty as #private::KeyField>::ENCODING)
            };
            quote!(#private::KeySource::Field { field: #name, encoding: #encoding })
        }
        (None, None) => unreachable!("checked"),
    }
}

fn reverse_of(f: &Field) -> bool {
    f.attrs.reverse_chronological.is_set()
}

/// The `#[table(unique)]` keys: the instants are taken first (an error names the key); the tie-breaker is the
/// `#[table(tie_breaker)]` field's, else a placeholder that the content tie-breaker replaces once the properties
/// are written (`finish_unique_*`).
struct UniqueKeys<'a> {
    /// The partition key's and the row key's: the field when the key is unique, the variable holding its
    /// instant, and the key's kind.
    uniques: [(Option<&'a Field<'a>>, Ident, TokenStream); 2],
    /// The tie-breaker of the keys: the `#[table(tie_breaker)]` field's, or `None`.
    tie: TokenStream,
    /// Whether the tie-breaker is the content's, computed once the properties are written.
    content_tie: bool,
}

impl<'a> UniqueKeys<'a> {
    fn new(fields: &'a [Field<'a>], keys: &KeyFields<'a>) -> Self {
        let unique_pk = keys.partition.filter(|f| f.attrs.unique.is_set());
        let unique_rk = keys.row.filter(|f| f.attrs.unique.is_set());
        let uniques = [
            (unique_pk, format_ident!("__pk_at"), quote!(Partition)),
            (unique_rk, format_ident!("__rk_at"), quote!(Row)),
        ];
        let tie_field = fields.iter().find(|f| f.attrs.tie_breaker.is_set());
        let tie = match tie_field {
            Some(f) => {
                let (ty, member) = (f.ty, f.ident);
                let private = private_at(ty.span());
                quote_spanned!(ty.span()=> __tm::Some(
                    <#ty as #private::TieBreakerField>::tie_breaker(&self.#member)
                ))
            }
            None => quote!(__tm::None),
        };
        let content_tie = tie_field.is_none() && (unique_pk.is_some() || unique_rk.is_some());
        UniqueKeys { uniques, tie, content_tie }
    }

    /// Whether a key is `#[table(unique)]`.
    fn any(&self) -> bool {
        self.uniques.iter().any(|(f, _, _)| f.is_some())
    }

    /// The variable holding a unique key field's instant.
    fn instant_of(&self, f: &Field) -> Ident {
        let (_, var, _) =
            self.uniques.iter().find(|(u, _, _)| u.is_some_and(|u| std::ptr::eq(u, f))).expect("a unique key field");
        var.clone()
    }

    /// The statements that take the unique keys' instants, failing with the `error` type of the method.
    fn prelude(&self, error: TokenStream) -> TokenStream {
        self.uniques
            .iter()
            .filter_map(|(f, var, kind)| {
                let f = (*f)?;
                let (ty, member) = (f.ty, f.ident);
                let private = private_at(ty.span());
                Some(quote_spanned!(ty.span()=> let #var = #private::unique_instant::<#private::#error>(
                    #private::KeyKind::#kind,
                    <#ty as #private::UniqueTimeKey>::to_instant(&self.#member),
                )?;))
            })
            .collect()
    }

    /// The end of `to_entity` and of `to_json`: with a content tie-breaker, the unique keys made once the
    /// properties are written.
    fn finish(&self) -> (TokenStream, TokenStream) {
        let private = private();
        if !self.content_tie {
            return (quote!(), quote!(__writer.finish()));
        }
        let none = quote!(__tm::None);
        let [pk_at, rk_at] = self.uniques.each_ref().map(|(f, var, _)| match f {
            Some(f) => {
                let reverse = reverse_of(f);
                quote!(__tm::Some((#var, #reverse)))
            }
            None => none.clone(),
        });
        let [pk_rev, rk_rev] = self.uniques.each_ref().map(|(f, _, _)| match f {
            Some(f) => {
                let reverse = reverse_of(f);
                quote!(__tm::Some(#reverse))
            }
            None => none.clone(),
        });
        (
            quote!(#private::finish_unique_entity(__entity, #pk_at, #rk_at)?;),
            quote!(#private::finish_unique_body(__writer.finish(), #pk_rev, #rk_rev)),
        )
    }

    /// A key of `to_entity` (`kind`: `partition` or `row`): a constant, checked once; a unique key from its
    /// instant and the tie-breaker; or the field's value encoded by its type.
    fn entity_key(&self, constant: Option<&LitStr>, field: Option<&Field>, kind: &str) -> TokenStream {
        let private = private();
        let tie = &self.tie;
        match (constant, field) {
            (Some(lit), _) => {
                let ty = if kind == "partition" { quote!(PartitionKey) } else { quote!(RowKey) };
                quote!({
                    const __KEY: #private::#ty = #private::#ty::from_static(#lit);
                    __KEY
                })
            }
            (None, Some(f)) if f.attrs.unique.is_set() => {
                let key_ty = if kind == "partition" { quote!(PartitionKey) } else { quote!(RowKey) };
                let (var, reverse) = (self.instant_of(f), reverse_of(f));
                quote!(#private::unique_key::<#private::#key_ty>(#var, #reverse, #tie))
            }
            (None, Some(f)) => {
                let (ty, member) = (f.ty, f.ident);
                let private = private_at(ty.span());
                let helper = if kind == "partition" { quote!(partition_key) } else { quote!(row_key) };
                let value = if f.attrs.reverse_chronological.is_set() {
                    quote_spanned!(ty.span()=> <#ty as #private::ReverseChronologicalKey>::encode_reverse_key(&self.#member))
                } else {
                    quote_spanned!(ty.span()=> <#ty as #private::KeyField>::encode_key(&self.#member))
                };
                quote_spanned!(ty.span()=> #private::#helper(#value)?)
            }
            (None, None) => unreachable!("checked"),
        }
    }

    /// A key of `to_json`, as a string: the same three cases as [`entity_key`](Self::entity_key).
    fn json_key(&self, constant: Option<&LitStr>, field: Option<&Field>, kind: TokenStream) -> TokenStream {
        let private = private();
        let tie = &self.tie;
        match (constant, field) {
            (Some(lit), _) => quote!(#lit),
            (None, Some(f)) if f.attrs.unique.is_set() => {
                let (var, reverse) = (self.instant_of(f), reverse_of(f));
                quote!(#private::unique_key_string(#var, #reverse, #tie))
            }
            (None, Some(f)) => {
                let (ty, member) = (f.ty, f.ident);
                let private = private_at(ty.span());
                let value = if f.attrs.reverse_chronological.is_set() {
                    quote_spanned!(ty.span()=> <#ty as #private::ReverseChronologicalKey>::encode_reverse_key(&self.#member))
                } else {
                    quote_spanned!(ty.span()=> <#ty as #private::KeyField>::encode_key(&self.#member))
                };
                quote_spanned!(ty.span()=> #private::encode_key(#private::KeyKind::#kind, #value)?)
            }
            (None, None) => unreachable!("checked"),
        }
    }
}

/// `etag`, for a struct with a `#[table(etag)]` field.
fn etag_fn(fields: &[Field]) -> Option<TokenStream> {
    let private = private();
    fields.iter().find(|f| f.attrs.etag.is_set()).map(|f| {
        let (ty, member) = (f.ty, f.ident);
        quote_spanned!(ty.span()=>
            fn etag(&self) -> __tm::Option<&#private::ETag> {
                <#ty as #private::ETagField>::etag(&self.#member)
            }
        )
    })
}

/// The keys alone, without the properties; a `#[table(unique)]` key depends on the properties (or the
/// tie-breaker), so it keeps the trait's default, which takes it from `to_entity`.
fn key_fns(unique: &UniqueKeys, pk: &TokenStream, rk: &TokenStream) -> Option<TokenStream> {
    let private = private();
    (!unique.any()).then(|| {
        quote! {
            #[allow(clippy::needless_question_mark)]
            fn partition_key(&self) -> #private::Result<#private::PartitionKey> {
                __tm::Ok(#pk)
            }

            #[allow(clippy::needless_question_mark)]
            fn row_key(&self) -> #private::Result<#private::RowKey> {
                __tm::Ok(#rk)
            }
        }
    })
}

/// The checks of `from_entity` that a key the struct has as a constant is that constant.
fn constant_key_checks(a: &attr::Container) -> Vec<TokenStream> {
    let private = private();
    [(a.partition_key.get(), quote!(Partition)), (a.row_key.get(), quote!(Row))]
        .into_iter()
        .filter_map(|(lit, kind)| {
            lit.map(|lit| quote!(#private::read_constant_key(__entity, #private::KeyKind::#kind, #lit)?;))
        })
        .collect()
}

/// The typed property handles, `<Struct>Properties`: the struct, and its value.
struct PropertyHandles {
    /// The handle struct's definition.
    item: TokenStream,
    ident: Ident,
    /// Each handle's value, `member: __tm::Property::__new("Name")`.
    values: Vec<TokenStream>,
    /// The value of the marker of the struct's generic parameters, if it has any.
    marker_value: TokenStream,
}

impl PropertyHandles {
    fn new(cx: &Ctx, fields: &[Field]) -> Self {
        let krate = &cx.krate;
        let cont = cx.cont;
        let ident = cont.ident;
        let handles_ident = format_ident!("{}Properties", ident);
        let vis = &cont.original.vis;
        let (params, marker) = bare_params(&cont.original.generics);
        let mut handle_fields = Vec::new();
        let mut handle_values = Vec::new();
        for f in fields {
            let (name, hty) = match f.role() {
                Role::Property { edm: Some((t, _)) } => {
                    let rust = match t {
                        table_model_rules::EdmType::Int64 => quote!(i64),
                        table_model_rules::EdmType::Double => quote!(f64),
                        _ => unwrap_option(f.ty).to_token_stream(),
                    };
                    (f.name.clone(), rust)
                }
                Role::Property { edm: None } => (f.name.clone(), unwrap_option(f.ty).to_token_stream()),
                Role::Json => (f.name.clone(), quote!(#krate::__private::String)),
                Role::Timestamp => ("Timestamp".to_owned(), quote!(#krate::DateTime)),
                _ => continue,
            };
            let member = f.ident;
            let doc = format!("The property `{name}`.");
            handle_fields.push(quote!(#[doc = #doc] pub #member: #krate::Property<#hty>));
            handle_values.push(quote!(#member: __tm::Property::__new(#name)));
        }
        let (marker_field, marker_value) = if marker.is_empty() {
            (quote!(), quote!())
        } else {
            (
                quote!(#[doc(hidden)] pub __marker: ::core::marker::PhantomData<fn() -> #marker>,),
                quote!(__marker: ::core::marker::PhantomData,),
            )
        };
        let doc = format!(
            "Typed property handles of [`{ident}`], generated by `#[derive(TableEntity)]`: `{ident}::PROPERTIES`."
        );
        let item = quote! {
            #[doc = #doc]
            #[allow(dead_code)]
            #vis struct #handles_ident #params {
                #(#handle_fields,)*
                #marker_field
            }
        };
        PropertyHandles { item, ident: handles_ident, values: handle_values, marker_value }
    }
}

/// The table named on the struct, for `TableServiceClient::table_for` (a struct without a name does not
/// implement `NamedTable`, so asking for its table fails the build).
fn named_table(cx: &Ctx, generics: &syn::Generics) -> Option<TokenStream> {
    let private = private();
    let ident = cx.cont.ident;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    cx.cont.attrs.name.get().map(|lit| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #private::NamedTable for #ident #ty_generics #where_clause {
                const TABLE_NAME: #private::TableName = #private::derived_table_name(#lit);
            }
        }
    })
}
