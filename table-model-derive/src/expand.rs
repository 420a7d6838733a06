//! Code generation from a checked IR. Infallible: every error was reported by `attr.rs` or `check.rs`.
//!
//! Paths go through `__tm`, the runtime crate's `__private` module, which [`wrap`] imports in the block it puts
//! every impl in (`__tm::Some`, `__tm::EdmField`, ...: short paths, for fewer tokens to expand and compile);
//! locals start with `__`. Each call that needs a
//! trait bound on a field type is spanned on that type, so an unsupported type is reported where it is written,
//! and names it as `<Type as Trait>::item` of the one trait of the field's role (`EdmField`, `KeyField`,
//! `JsonField`, ...), never through a generic helper's bound: every use of the type is then the same obligation
//! at the same span, which the compiler reports once, so a field gets one error and no follow-ups
//! (`tests/ui/one-error-per-field.rs`).
//!
//! Layer: expand.

mod entity;
mod enums;
mod json;

use crate::ast::{Container, Data, Derive, Field, Role};
use crate::ctxt::Ctxt;
use crate::{attr, check, fallback};
use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use std::collections::HashSet;
use syn::spanned::Spanned;
use syn::{DeriveInput, GenericParam, Generics, Type, WherePredicate};

pub fn derive(input: &DeriveInput, derive: Derive) -> TokenStream {
    let cx = Ctxt::new();
    let attrs = attr::Container::from_attrs(&cx, &input.attrs);
    // The stubs after an error need the crate path too, when the rest of the input is not read.
    let krate = attrs.krate();
    let cont = Container::from_syn(&cx, input, attrs, derive);
    if let Some(cont) = &cont {
        check::check(&cx, cont);
    }
    match (cx.check(), cont) {
        (Ok(()), Some(cont)) => match derive {
            Derive::Entity | Derive::Properties => expand_struct(&cont),
            Derive::Enum => enums::expand_enum(&cont),
        },
        (Err(errors), _) => {
            let mut out = errors.into_compile_error();
            out.extend(fallback::stub(input, derive, &krate));
            out
        }
        (Ok(()), None) => unreachable!("from_syn records an error when it returns None"),
    }
}

/// The identifiers of a type's generic type parameters.
fn type_params(generics: &Generics) -> HashSet<String> {
    generics.type_params().map(|p| p.ident.to_string()).collect()
}

/// The identifiers of all of a type's generic parameters: types, consts and lifetimes (without the `'`). A
/// type that [`mentions`] none of them means the same in every instantiation.
fn generic_names(generics: &Generics) -> HashSet<String> {
    generics
        .params
        .iter()
        .map(|p| match p {
            GenericParam::Type(t) => t.ident.to_string(),
            GenericParam::Const(c) => c.ident.to_string(),
            GenericParam::Lifetime(l) => l.lifetime.ident.to_string(),
        })
        .collect()
}

/// Whether a type mentions one of the generic parameters (then the impl needs a bound on it).
fn mentions(tokens: TokenStream, params: &HashSet<String>) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => params.contains(&i.to_string()),
        TokenTree::Group(g) => mentions(g.stream(), params),
        _ => false,
    })
}

/// `Option<X>` written as such gives `X`: the type a property handle compares with.
fn unwrap_option(ty: &Type) -> &Type {
    if let Type::Path(p) = ty
        && let Some(last) = p.path.segments.last()
        && last.ident == "Option"
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(inner)) = args.args.first()
    {
        return inner;
    }
    ty
}

/// The expression of a property name: for ASCII names, `derived_name`, which builds the `PropertyName` without
/// checking again (`check.rs` checked it with the runtime's rules); the runtime constructor for names that
/// need the Unicode tables.
fn name_expr(name: &str) -> TokenStream {
    if name.is_ascii() {
        quote!(__tm::derived_name(#name))
    } else {
        quote!(__tm::property_name(#name)?)
    }
}

/// The path of the runtime crate's `__private` module in the generated code: `__tm`, imported by [`wrap`].
fn private() -> TokenStream {
    quote!(__tm)
}

/// [`private`] spanned on `span` (a field's type), so that an expression built with it is reported there.
fn private_at(span: Span) -> TokenStream {
    Ident::new("__tm", span).into_token_stream()
}

/// The unique key a `#[table(tie_breaker)]` field's value comes from and goes into.
struct TieSource {
    row: bool,
    reverse: bool,
}

impl TieSource {
    fn kind(&self) -> Ident {
        Ident::new(if self.row { "Row" } else { "Partition" }, Span::call_site())
    }

    /// `row_key` or `partition_key`: the getter of `Entity` and the member of `SystemProperties`.
    fn getter(&self) -> Ident {
        Ident::new(if self.row { "row_key" } else { "partition_key" }, Span::call_site())
    }
}

/// Reads a unique key field or a `#[table(tie_breaker)]` field from a unique key (`reverse`: newest first):
/// `Result<FieldType, ValueError>` for the key string `key`, or without `key` a non-capturing closure
/// `fn(&str) -> Result<FieldType, ValueError>`. The field type is converted through its trait, spanned on the
/// type, so that a wrong type is one error there.
fn decode_unique(field: &Field, reverse: bool, key: Option<TokenStream>) -> TokenStream {
    let ty = field.ty;
    let span = ty.span();
    let p = private_at(span);
    let convert = if field.attrs.tie_breaker.is_set() {
        quote_spanned!(span=> |(_, __n)| <#ty as #p::TieBreakerField>::from_tie_breaker(__n))
    } else {
        quote_spanned!(span=> |(__t, _)| <#ty as #p::UniqueTimeKey>::from_instant(__t))
    };
    match key {
        Some(key) => quote_spanned!(span=> #p::decode_unique::<#reverse>(#key).map(#convert)),
        None => quote_spanned!(span=> |__key: &str| #p::decode_unique::<#reverse>(__key).map(#convert)),
    }
}

/// The key that holds the tie-breaker a `#[table(tie_breaker)]` field reads: the row key when it is unique,
/// else the partition key (when both are unique, both hold the same tie-breaker).
fn tie_source(fields: &[Field]) -> Option<TieSource> {
    let unique = |pick: fn(&Field) -> bool| fields.iter().find(|f| pick(f) && f.attrs.unique.is_set());
    if let Some(f) = unique(|f| f.attrs.row_key.is_set()) {
        return Some(TieSource { row: true, reverse: f.attrs.reverse_chronological.is_set() });
    }
    unique(|f| f.attrs.partition_key.is_set()).map(|_| TieSource { row: false, reverse: false })
}

fn edm_type_ident(t: table_model_rules::EdmType) -> Ident {
    Ident::new(t.short_name(), Span::call_site())
}

struct Ctx<'a> {
    krate: TokenStream,
    derive: Derive,
    cont: &'a Container<'a>,
}

impl Ctx<'_> {
    /// The name of a property as a `PropertyName` for writing, prefixed in a `TableProperties` impl.
    fn write_name(&self, name: &str) -> TokenStream {
        let expr = name_expr(name);
        match self.derive {
            Derive::Properties => quote!(__tm::prefixed(__prefix, #expr)?),
            _ => expr,
        }
    }

    /// The name of a property as a `&str` for reading.
    fn read_name(&self, name: &str) -> TokenStream {
        match self.derive {
            Derive::Properties => quote!(&__tm::full_name(__prefix, #name)),
            _ => quote!(#name),
        }
    }

    fn prefix_expr(&self, prefix: &str) -> TokenStream {
        match self.derive {
            Derive::Properties => quote!(&__tm::full_name(__prefix, #prefix)),
            _ => quote!(#prefix),
        }
    }
}

fn fields<'a>(cont: &'a Container<'a>) -> &'a [Field<'a>] {
    match &cont.data {
        Data::Struct(fields) => fields,
        Data::Enum(_) => unreachable!("a struct"),
    }
}

fn write_stmt(cx: &Ctx, field: &Field) -> TokenStream {
    let ty = field.ty;
    let ident = field.ident;
    let span = ty.span();
    let p = &private_at(span);
    match field.role() {
        Role::Property { edm: None } => {
            let name = cx.write_name(&field.name);
            quote_spanned!(span=> #p::write(
                __entity, #name, <#ty as #p::EdmField>::to_edm(&self.#ident),
            )?;)
        }
        Role::Property { edm: Some((t, _)) } => {
            let name = cx.write_name(&field.name);
            let t = edm_type_ident(t);
            quote_spanned!(span=> #p::write_as(
                __entity, #name, <#ty as #p::EdmField>::to_edm(&self.#ident), #p::EdmType::#t,
            )?;)
        }
        Role::Json => {
            let name = cx.write_name(&field.name);
            quote_spanned!(span=> <#ty as #p::JsonField>::write(&self.#ident, __entity, #name)?;)
        }
        Role::Flatten { prefix } => {
            let prefix = cx.prefix_expr(&prefix);
            quote_spanned!(span=> <#ty as #p::TableProperties>::write_properties(
                &self.#ident, __entity, #prefix,
            )?;)
        }
        Role::PartitionKey { .. }
        | Role::RowKey { .. }
        | Role::TieBreaker
        | Role::Timestamp
        | Role::ETag
        | Role::Skip => quote!(),
    }
}

fn default_fn(field: &Field) -> Option<TokenStream> {
    let ty = field.ty;
    field.attrs.default.get().map(|d| match d {
        attr::Default::Trait => quote_spanned!(ty.span()=> <#ty as __tm::Default>::default),
        attr::Default::Path(path) => quote!(#path),
    })
}

fn read_expr(cx: &Ctx, field: &Field) -> TokenStream {
    let ty = field.ty;
    let span = ty.span();
    let private = private_at(span);
    let absent = |field: &Field| match default_fn(field) {
        Some(f) => quote!(|| __tm::Some(#f())),
        None => quote_spanned!(span=> <#ty as #private::EdmField>::absent),
    };
    match field.role() {
        Role::PartitionKey { unique: true } => {
            let key = quote!(#private::Entity::partition_key(__entity));
            let value = decode_unique(field, false, Some(key));
            quote_spanned!(span=> #private::read_key(#private::KeyKind::Partition, #value)?)
        }
        Role::RowKey { reverse, unique: true } => {
            let value = decode_unique(field, reverse, Some(quote!(#private::Entity::row_key(__entity))));
            quote_spanned!(span=> #private::read_key(#private::KeyKind::Row, #value)?)
        }
        Role::TieBreaker => {
            let source = tie_source(fields(cx.cont)).expect("checked: a unique key exists");
            let (kind, getter) = (source.kind(), source.getter());
            let value = decode_unique(field, source.reverse, Some(quote!(#private::Entity::#getter(__entity))));
            quote_spanned!(span=> #private::read_key(#private::KeyKind::#kind, #value)?)
        }
        Role::PartitionKey { unique: false } => quote_spanned!(span=> #private::read_key(
            #private::KeyKind::Partition,
            <#ty as #private::KeyField>::decode_key(#private::Entity::partition_key(__entity)),
        )?),
        Role::RowKey { reverse: false, unique: false } => quote_spanned!(span=> #private::read_key(
            #private::KeyKind::Row,
            <#ty as #private::KeyField>::decode_key(#private::Entity::row_key(__entity)),
        )?),
        Role::RowKey { reverse: true, unique: false } => quote_spanned!(span=> #private::read_key(
            #private::KeyKind::Row,
            <#ty as #private::ReverseChronologicalKey>::decode_reverse_key(#private::Entity::row_key(__entity)),
        )?),
        Role::Timestamp => {
            quote_spanned!(span=> <#ty as #private::TimestampField>::from_timestamp(#private::Entity::timestamp(__entity)))
        }
        Role::ETag => {
            quote_spanned!(span=> <#ty as #private::ETagField>::from_etag(#private::Entity::etag(__entity)))
        }
        Role::Skip => match default_fn(field) {
            Some(f) => quote!(#f()),
            None => quote_spanned!(span=> <#ty as __tm::Default>::default()),
        },
        Role::Flatten { prefix } => {
            let prefix = cx.prefix_expr(&prefix);
            quote_spanned!(span=> <#ty as #private::TableProperties>::read_properties(__entity, #prefix)?)
        }
        Role::Json => {
            let name = cx.read_name(&field.name);

            let absent = match default_fn(field) {
                Some(f) => quote!(|| __tm::Some(#f())),
                None => quote_spanned!(span=> <#ty as #private::JsonField>::absent),
            };
            quote_spanned!(span=> <#ty as #private::JsonField>::read(__entity, #name, #absent)?)
        }
        Role::Property { edm: None } if default_fn(field).is_none() => {
            let name = cx.read_name(&field.name);
            quote_spanned!(span=> <#ty as #private::EdmField>::__read(__entity, #name)?)
        }
        Role::Property { edm: None } => {
            let name = cx.read_name(&field.name);
            let from = quote_spanned!(span=> <#ty as #private::EdmField>::from_edm);
            let absent = absent(field);
            quote_spanned!(span=> #private::read(__entity, #name, #from, #absent)?)
        }
        Role::Property { edm: Some(_) } => {
            let name = cx.read_name(&field.name);
            let natural = quote_spanned!(span=> <#ty as #private::EdmField>::EDM_TYPE);
            let from = quote_spanned!(span=> <#ty as #private::EdmField>::from_edm);
            let absent = absent(field);
            quote_spanned!(span=> #private::read_as(__entity, #name, #natural, #from, #absent)?)
        }
    }
}

/// The schema entry of a field, or nothing for keys, metadata and skipped fields.
fn field_schema(field: &Field) -> Option<TokenStream> {
    let ty = field.ty;
    let span = ty.span();
    let private = private_at(span);
    let name = &field.name;
    let field_name = field.field_name();
    let optional_default = field.attrs.default.is_set();
    match field.role() {
        Role::Property { edm } => {
            let edm_type = match edm {
                Some((t, _)) => {
                    let t = edm_type_ident(t);
                    quote!(__tm::Some(#private::EdmType::#t))
                }
                None => quote_spanned!(span=> <#ty as #private::EdmField>::EDM_TYPE),
            };
            let optional = if optional_default {
                quote!(true)
            } else {
                quote_spanned!(span=> <#ty as #private::EdmField>::OPTIONAL)
            };
            Some(quote_spanned! {span=>
                #private::property_schema(#name, #field_name, #edm_type, #optional)
            })
        }
        Role::Json => Some(quote! {
            #private::property_schema(#name, #field_name, __tm::Some(#private::EdmType::String), #optional_default)
        }),
        Role::Flatten { prefix } => {
            let fields = quote_spanned!(span=> <#ty as #private::TableProperties>::FIELDS);
            Some(quote!(#private::FieldSchema::Flatten { field: #field_name, prefix: #prefix, fields: #fields }))
        }
        _ => None,
    }
}

/// The path of a rule set in the generated code.
fn rule_set_tokens(private: &TokenStream, rules: table_model_rules::RuleSet) -> TokenStream {
    let variant = match rules {
        table_model_rules::RuleSet::Storage => quote!(Storage),
        table_model_rules::RuleSet::CosmosDb => quote!(CosmosDb),
        table_model_rules::RuleSet::Portable => quote!(Portable),
    };
    quote!(#private::RuleSet::#variant)
}

/// The `const` checks the derive cannot do itself: the flattened names joined with their prefixes, and the EDM
/// overrides against their field's type.
struct ConstChecks {
    /// Checks that depend on no generic parameter: evaluated where the struct is defined, in a `const _` item,
    /// so that `cargo check` reports them too.
    eager: Vec<TokenStream>,
    /// Checks that depend on a generic parameter: the associated `const __CHECK`, evaluated for each
    /// instantiation (see [`StructParts::force_check`]).
    lazy: Vec<TokenStream>,
}

impl ConstChecks {
    fn new(cx: &Ctx, fields: &[Field]) -> Self {
        let private = private();
        let generic = generic_names(&cx.cont.original.generics);
        let mut checks = ConstChecks { eager: Vec::new(), lazy: Vec::new() };
        if let Some(first) = fields.iter().find(|f| f.attrs.flatten.is_set()) {
            let span = first.attrs.flatten.tokens().map_or_else(Span::call_site, |t| t.span());
            let flattened_generic =
                fields.iter().filter(|f| f.attrs.flatten.is_set()).any(|f| mentions(f.ty.to_token_stream(), &generic));
            // Only the names are checked: a property's own type does not matter, so a field of a parameter's
            // type leaves the check eager; a flattened group whose type depends on a parameter does not.
            let all = match (flattened_generic, cx.derive) {
                (false, _) => {
                    let names = fields.iter().filter_map(name_schema);
                    quote!(&[#(#names),*])
                }
                (true, Derive::Entity) => quote!(<Self as #private::TableEntity>::SCHEMA.fields()),
                (true, _) => quote!(<Self as #private::TableProperties>::FIELDS),
            };
            // A flattened struct is checked by the entity that flattens it, with the entity's service.
            let rules = match cx.derive {
                Derive::Entity => rule_set_tokens(&private, cx.cont.attrs.rules()),
                _ => rule_set_tokens(&private, table_model_rules::RuleSet::Storage),
            };
            let check = quote_spanned! {span=>
                match #private::check_fields(#all, #rules) {
                    __tm::Ok(()) => {}
                    __tm::Err(__msg) => ::core::panic!("{}", __msg.as_str()),
                }
            };
            checks.push(flattened_generic, check);
        }
        for field in fields {
            if let Role::Property { edm: Some((t, lit)) } = field.role() {
                let ty = field.ty;
                let msg = format!(
                    "#[table(edm = \"{}\")] cannot store this field's type without loss; an override may only widen an Edm.Int32 type to Int64 or Double",
                    lit.value()
                );
                let t = edm_type_ident(t);
                let check = quote_spanned! {lit.span()=>
                    if !#private::lossless(<#ty as #private::EdmField>::EDM_TYPE, #private::EdmType::#t) {
                        ::core::panic!(#msg);
                    }
                };
                checks.push(mentions(ty.to_token_stream(), &generic), check);
            }
        }
        checks
    }

    fn push(&mut self, lazy: bool, check: TokenStream) {
        if lazy {
            self.lazy.push(check);
        } else {
            self.eager.push(check);
        }
    }
}

/// A field's entry in the list of names the flattened-names check reads: as [`field_schema`]'s, with no
/// EDM type (the check reads names only), so that it does not depend on the field's type.
fn name_schema(field: &Field) -> Option<TokenStream> {
    let private = private();
    let (name, field_name) = (&field.name, field.field_name());
    match field.role() {
        Role::Property { .. } | Role::Json => {
            Some(quote!(#private::property_schema(#name, #field_name, __tm::None, false)))
        }
        _ => field_schema(field),
    }
}

/// The impl's generics with a bound for every field type that mentions a type parameter.
fn bounded_generics(cx: &Ctx, fields: &[Field]) -> Generics {
    let mut generics = cx.cont.original.generics.clone();
    let params = type_params(&generics);
    if params.is_empty() {
        return generics;
    }
    let private = private();
    let mut predicates: Vec<WherePredicate> = Vec::new();
    for field in fields {
        let ty = field.ty;
        if !mentions(ty.to_token_stream(), &params) {
            continue;
        }
        let bound = match field.role() {
            Role::PartitionKey { unique: true } | Role::RowKey { unique: true, .. } => quote!(#private::UniqueTimeKey),
            Role::PartitionKey { unique: false } | Role::RowKey { reverse: false, unique: false } => {
                quote!(#private::KeyField)
            }
            Role::RowKey { reverse: true, unique: false } => quote!(#private::ReverseChronologicalKey),
            Role::TieBreaker => quote!(#private::TieBreakerField),
            Role::Timestamp => quote!(#private::TimestampField),
            Role::ETag => quote!(#private::ETagField),
            Role::Skip => quote!(__tm::Default),
            Role::Flatten { .. } => quote!(#private::TableProperties),
            Role::Json => quote!(#private::JsonField),
            Role::Property { .. } => quote!(#private::EdmField),
        };
        let bound = if field.attrs.default.get().is_some_and(|d| matches!(d, attr::Default::Trait))
            && !matches!(field.role(), Role::Skip)
        {
            quote!(#bound + __tm::Default)
        } else {
            bound
        };
        predicates.push(syn::parse_quote!(#ty: #bound));
    }
    generics.make_where_clause().predicates.extend(predicates);
    generics
}

/// The generic parameters of the handle struct: no bounds, no defaults.
fn bare_params(generics: &Generics) -> (TokenStream, TokenStream) {
    let mut params = Vec::new();
    let mut marker = Vec::new();
    for p in &generics.params {
        match p {
            GenericParam::Lifetime(l) => {
                let lt = &l.lifetime;
                params.push(quote!(#lt));
                marker.push(quote!(&#lt ()));
            }
            GenericParam::Type(t) => {
                let id = &t.ident;
                params.push(quote!(#id));
                marker.push(quote!(#id));
            }
            GenericParam::Const(c) => {
                let (id, ty) = (&c.ident, &c.ty);
                params.push(quote!(const #id: #ty));
                marker.push(quote!([(); #id]));
            }
        }
    }
    if params.is_empty() {
        (quote!(), quote!())
    } else {
        (quote!(<#(#params),*>), quote!((#(#marker,)*)))
    }
}

/// What the `TableEntity` and `TableProperties` impls of a struct share: the statements and expressions of its
/// fields, their schema entries, the `const` checks and the impl's generics.
struct StructParts<'a> {
    fields: &'a [Field<'a>],
    generics: Generics,
    /// Each field written into `__entity`.
    writes: Vec<TokenStream>,
    /// `__field0`, `__field1`, ...: each field's value read from `__entity`, before `Self` is built.
    vars: Vec<Ident>,
    reads: Vec<TokenStream>,
    members: Vec<&'a Ident>,
    schema_fields: Vec<TokenStream>,
    /// The associated `const __CHECK` of the checks that depend on a generic parameter, if any.
    checks: Option<TokenStream>,
    /// The checks that depend on none, evaluated where the struct is defined.
    eager_checks: Vec<TokenStream>,
    /// Each field written into the JSON body `__w`.
    json_writes: Vec<TokenStream>,
}

impl<'a> StructParts<'a> {
    fn new(cx: &Ctx<'a>) -> Self {
        let fields = fields(cx.cont);
        let ConstChecks { eager, lazy } = ConstChecks::new(cx, fields);
        let checks = (!lazy.is_empty()).then(|| quote!(const __CHECK: () = { #(#lazy)* };));
        StructParts {
            fields,
            generics: bounded_generics(cx, fields),
            writes: fields.iter().map(|f| write_stmt(cx, f)).collect(),
            vars: (0..fields.len()).map(|i| format_ident!("__field{}", i)).collect(),
            reads: fields.iter().map(|f| read_expr(cx, f)).collect(),
            members: fields.iter().map(|f| f.ident).collect(),
            schema_fields: fields.iter().filter_map(|f| field_schema(f)).collect(),
            checks,
            eager_checks: eager,
            json_writes: fields.iter().map(|f| json::json_write_stmt(cx, f)).collect(),
        }
    }

    /// The statement that evaluates the checks that depend on a generic parameter in each method of the impl
    /// (an associated `const` is evaluated only where it is used); nothing when there are none.
    fn force_check(&self, trait_path: &TokenStream) -> TokenStream {
        match &self.checks {
            Some(_) => quote! {
                #[allow(clippy::let_unit_value)]
                let () = <Self as #trait_path>::__CHECK;
            },
            None => quote!(),
        }
    }

    /// The item that evaluates the checks that depend on no generic parameter, when the crate is built or
    /// checked.
    fn eager_check(&self) -> TokenStream {
        let checks = &self.eager_checks;
        match checks.is_empty() {
            true => quote!(),
            false => quote!(const _: () = { #(#checks)* };),
        }
    }
}

fn expand_struct(cont: &Container) -> TokenStream {
    let cx = Ctx { krate: cont.attrs.krate(), derive: cont.derive, cont };
    let parts = StructParts::new(&cx);
    match cont.derive {
        Derive::Properties => wrap(&cx.krate, properties_impl(&cx, &parts)),
        _ => entity::expand_entity(&cx, &parts),
    }
}

/// The `TableProperties` impl of a struct flattened into entities.
fn properties_impl(cx: &Ctx, parts: &StructParts) -> TokenStream {
    let private = private();
    let ident = cx.cont.ident;
    let (impl_generics, ty_generics, where_clause) = parts.generics.split_for_impl();
    let StructParts { writes, vars, reads, members, schema_fields, checks, json_writes, .. } = parts;
    let trait_path = quote!(#private::TableProperties);
    let force = parts.force_check(&trait_path);
    let eager = parts.eager_check();
    quote! {
        #[automatically_derived]
        impl #impl_generics #trait_path for #ident #ty_generics #where_clause {
            const FIELDS: &'static [#private::FieldSchema] = &[#(#schema_fields),*];
            #checks

            fn write_properties(
                &self,
                __entity: &mut #private::Entity,
                __prefix: &str,
            ) -> #private::Result<()> {
                #force
                #(#writes)*
                __tm::Ok(())
            }

            fn read_properties(
                __entity: &mut #private::Entity,
                __prefix: &str,
            ) -> #private::Result<Self> {
                #force
                #(let #vars = #reads;)*
                __tm::Ok(Self { #(#members: #vars),* })
            }

            fn write_json(
                &self,
                __w: &mut #private::BodyWriter,
                __prefix: &str,
            ) -> __tm::StdResult<(), #private::EncodeError> {
                #force
                #(#json_writes)*
                __tm::Ok(())
            }
        }
        #eager
    }
}

/// Puts impls in an anonymous `const` so that nothing they use leaks into the user's module, with the runtime
/// crate's `__private` module imported as `__tm` (see [`private`]).
fn wrap(krate: &TokenStream, body: TokenStream) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(unused_qualifications, non_upper_case_globals, clippy::used_underscore_binding)]
        const _: () = {
            use #krate::__private as __tm;
            #body
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn expand(input: DeriveInput) -> String {
        derive(&input, Derive::Entity).to_string()
    }

    #[test]
    fn const_checks_wait_for_an_instantiation_only_where_a_parameter_decides_them() {
        // A property of a parameter's type: the names are known, so they are checked where the struct is
        // defined, and no method evaluates anything.
        let eager = expand(parse_quote! {
            struct G<'a, T, const N: usize> {
                #[table(partition_key)] pk: String,
                #[table(row_key)] rk: String,
                value: T,
                #[table(skip)] unused: Option<&'a [u8; N]>,
                #[table(flatten, prefix = "Row")] row: Part,
            }
        });
        assert!(!eager.contains("__CHECK"), "{eager}");
        assert_eq!(eager.matches("check_fields").count(), 1, "{eager}");
        assert!(eager.contains("property_schema (\"value\" , \"value\" , __tm :: None , false)"), "{eager}");

        // A flattened group whose type depends on a parameter (a lifetime counts): checked per instantiation,
        // in every method that can be the first used.
        for lazy in [
            expand(parse_quote! {
                struct G<T> {
                    #[table(partition_key)] pk: String,
                    #[table(row_key)] rk: String,
                    #[table(flatten)] row: Part<T>,
                }
            }),
            expand(parse_quote! {
                struct G<'a> {
                    #[table(partition_key)] pk: String,
                    #[table(row_key)] rk: String,
                    #[table(flatten)] row: Part<'a>,
                }
            }),
        ] {
            assert_eq!(lazy.matches("const __CHECK").count(), 1, "{lazy}");
            // to_entity, from_entity, to_json and the visitor's two methods
            assert!(lazy.matches(":: __CHECK ;").count() >= 4, "{lazy}");
            assert!(!lazy.contains("const _ : () = { match"), "{lazy}");
        }

        // An EDM override on a parameter's type waits; one on a concrete type does not.
        let mixed = expand(parse_quote! {
            struct G<T> {
                #[table(partition_key)] pk: String,
                #[table(row_key)] rk: String,
                #[table(edm = "Int64")] wide: T,
                #[table(edm = "Double")] concrete: i32,
            }
        });
        let lazy = mixed.split_once("const __CHECK").map(|(_, rest)| &rest[..rest.find("fn ").unwrap()]).unwrap();
        assert!(lazy.contains("< T as __tm :: EdmField >") && !lazy.contains("< i32 as"), "{mixed}");
        let eager = &mixed[mixed.rfind("const _ : () = {").unwrap()..];
        assert!(eager.contains("< i32 as __tm :: EdmField > :: EDM_TYPE") && !eager.contains("< T as"), "{mixed}");
    }
}
