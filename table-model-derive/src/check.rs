//! Checks across attributes and fields, on the IR built by `ast.rs`: which attributes combine, exactly one
//! partition key and one row key, property names valid and unique after renaming (and not reserved by the
//! service of `#[table(service = "...")]`), the property count. The
//! names, keys and table name are checked with `table_model_rules`, the code the runtime crate runs, and the
//! errors carry its messages.
//!
//! Layer: check.

use crate::ast::{Container, Data, Derive, Field, Variant};
use crate::attr::Attr;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use std::collections::HashMap;
use table_model_rules::limits::MAX_CUSTOM_PROPERTIES;
use table_model_rules::{key, property_name, table_name, KeyKind, PropertyNameErrorKind};

pub fn check(cx: &Ctxt, cont: &Container) {
    check_container_attrs(cx, cont);
    match &cont.data {
        Data::Struct(fields) => {
            for field in fields {
                check_field_attrs(cx, cont.derive, field);
            }
            if cont.derive == Derive::Entity {
                check_keys(cx, cont, fields);
                check_tie_breaker(cx, fields);
                check_table_name(cx, cont);
            }
            check_single(cx, fields, |f| &f.attrs.timestamp);
            check_single(cx, fields, |f| &f.attrs.etag);
            check_single(cx, fields, |f| &f.attrs.tie_breaker);
            check_names(cx, cont, fields);
        }
        Data::Enum(variants) => check_variants(cx, variants),
    }
}

fn check_container_attrs(cx: &Ctxt, cont: &Container) {
    let a = &cont.attrs;
    let (what, why) = match cont.derive {
        Derive::Entity => return,
        Derive::Properties => ("TableProperties", "set it on the TableEntity that flattens this struct"),
        Derive::Enum => ("TableEnum", "an enum is stored as one property value"),
    };
    let entity_only: [(&str, Option<&TokenStream>); 5] = [
        (a.name.name(), a.name.tokens()),
        (a.partition_key.name(), a.partition_key.tokens()),
        (a.row_key.name(), a.row_key.tokens()),
        (a.deny_unknown_properties.name(), a.deny_unknown_properties.tokens()),
        (a.service.name(), a.service.tokens()),
    ];
    for (name, tokens) in entity_only {
        if let Some(tokens) = tokens {
            cx.error_spanned_by(tokens, format_args!("#[table({name})] does not apply to {what}; {why}"));
        }
    }
}

/// The attributes that decide what a field is; at most one per field.
const PRIMARY: [&str; 8] = ["partition_key", "row_key", "tie_breaker", "timestamp", "etag", "skip", "flatten", "json"];

/// The attributes that modify a field, with the primary attributes they combine with ("" for a plain
/// property) and whether one of those is required.
const MODIFIERS: [(&str, &[&str], bool); 6] = [
    ("reverse_chronological", &["row_key"], true),
    ("unique", &["row_key", "partition_key"], true),
    ("rename", &["", "json"], false),
    ("default", &["", "json", "skip"], false),
    ("prefix", &["flatten"], true),
    ("edm", &[""], false),
];

fn check_field_attrs(cx: &Ctxt, derive: Derive, field: &Field) {
    let set = field.attrs.set_attrs();
    let mut primary: Option<&str> = None;
    for (name, tokens) in &set {
        if !PRIMARY.contains(name) {
            continue;
        }
        if derive == Derive::Properties
            && matches!(*name, "partition_key" | "row_key" | "tie_breaker" | "timestamp" | "etag")
        {
            let why = if name.ends_with("key") || *name == "tie_breaker" {
                "a flattened struct has no keys of its own"
            } else {
                "the server metadata belongs to the entity that flattens this struct"
            };
            cx.error_spanned_by(
                tokens,
                format_args!("#[table({name})] does not apply to a TableProperties field; {why}"),
            );
            continue;
        }
        match primary {
            None => primary = Some(name),
            Some(first) => cx.error_spanned_by(
                tokens,
                format_args!("#[table({first})] and #[table({name})] cannot be used together"),
            ),
        }
    }
    for (name, tokens) in &set {
        let Some((_, allowed, required)) = MODIFIERS.iter().find(|(m, _, _)| m == name) else { continue };
        let with = primary.unwrap_or("");
        if allowed.contains(&with) {
            continue;
        }
        let msg = match (primary, required) {
            (None, true) if *name == "reverse_chronological" => {
                "#[table(reverse_chronological)] applies only to the #[table(row_key)] field".to_owned()
            }
            (None, true) if *name == "unique" => UNIQUE_PLACE.to_owned(),
            (None, true) => format!("#[table({name})] requires #[table({})]", allowed[0]),
            (Some(p), _) if *name == "reverse_chronological" => {
                format!("#[table(reverse_chronological)] applies only to the #[table(row_key)] field, not a #[table({p})] field")
            }
            (Some(p), _) if *name == "unique" => format!("{UNIQUE_PLACE}, not a #[table({p})] field"),
            (Some(p), _) if *name == "rename" && p == "flatten" => {
                "#[table(flatten)] and #[table(rename)] cannot be used together; name the group with #[table(prefix = \"...\")]"
                    .to_owned()
            }
            (Some(p), _) => format!("#[table({p})] and #[table({name})] cannot be used together"),
            (None, false) => unreachable!("every optional modifier combines with a plain property"),
        };
        cx.error_spanned_by(tokens, msg);
    }
}

const UNIQUE_PLACE: &str =
    "#[table(unique)] applies only to the #[table(row_key)] or #[table(partition_key)] field (a DateTime)";

/// A `#[table(tie_breaker)]` field supplies the tie-breaker of a `#[table(unique)]` key, so one must exist.
fn check_tie_breaker(cx: &Ctxt, fields: &[Field]) {
    let unique =
        fields.iter().any(|f| f.attrs.unique.is_set() && (f.attrs.row_key.is_set() || f.attrs.partition_key.is_set()));
    if unique {
        return;
    }
    for field in fields {
        if let Some(tokens) = field.attrs.tie_breaker.tokens() {
            cx.error_spanned_by(
                tokens,
                "#[table(tie_breaker)] needs a key field with #[table(unique)], whose tie-breaker it holds; mark the DateTime row key #[table(row_key, unique)]",
            );
        }
    }
}

fn check_keys(cx: &Ctxt, cont: &Container, fields: &[Field]) {
    for (kind, constant, marked) in [
        (
            KeyKind::Partition,
            &cont.attrs.partition_key,
            fields.iter().filter(|f| f.attrs.partition_key.is_set()).collect::<Vec<_>>(),
        ),
        (KeyKind::Row, &cont.attrs.row_key, fields.iter().filter(|f| f.attrs.row_key.is_set()).collect()),
    ] {
        let attr = if kind == KeyKind::Partition { "partition_key" } else { "row_key" };
        if let Some(lit) = constant.get()
            && let Err(e) = key::check(kind, &lit.value())
        {
            cx.error_spanned_by(lit, e);
        }
        let mut first = constant.is_set();
        for field in marked {
            let tokens = if kind == KeyKind::Partition { &field.attrs.partition_key } else { &field.attrs.row_key };
            let tokens = tokens.tokens().expect("marked");
            if first {
                let why = if constant.is_set() { "the struct sets a constant" } else { "another field is the key" };
                cx.error_spanned_by(tokens, format_args!("duplicate #[table({attr})] attribute; {why}"));
            }
            first = true;
        }
        if !first {
            cx.error_at(
                cont.span(),
                format_args!(
                    "missing #[table({attr})] field; mark a field with #[table({attr})] or set a constant on the struct with #[table({attr} = \"...\")]"
                ),
            );
        }
    }
}

fn check_table_name(cx: &Ctxt, cont: &Container) {
    if let Some(lit) = cont.attrs.name.get() {
        let value = lit.value();
        let result =
            if value.starts_with('$') { table_name::check_analytics(&value) } else { table_name::check(&value) };
        if let Err(e) = result {
            cx.error_spanned_by(lit, e);
        }
    }
}

fn check_single<'a>(cx: &Ctxt, fields: &'a [Field<'a>], attr: impl Fn(&'a Field<'a>) -> &'a Attr<()>) {
    let mut seen = false;
    for field in fields {
        let a = attr(field);
        if let Some(tokens) = a.tokens() {
            if seen {
                cx.error_spanned_by(
                    tokens,
                    format_args!("duplicate #[table({})] attribute; one field receives it", a.name()),
                );
            }
            seen = true;
        }
    }
}

/// Whether a field is stored as one property with its own name.
fn is_property(field: &Field) -> bool {
    let a = &field.attrs;
    !(a.partition_key.is_set()
        || a.row_key.is_set()
        || a.tie_breaker.is_set()
        || a.timestamp.is_set()
        || a.etag.is_set()
        || a.skip.is_set()
        || a.flatten.is_set())
}

fn check_names(cx: &Ctxt, cont: &Container, fields: &[Field]) {
    let rename_all = cont.attrs.rename_all.get();
    let rules = cont.attrs.rules();
    let mut seen: HashMap<&str, &Field> = HashMap::new();
    let mut count = 0;
    for field in fields.iter().filter(|f| is_property(f)) {
        count += 1;
        let (origin, tokens) = field.name_origin(rename_all);
        if let Err(e) = property_name::check(&field.name) {
            cx.error_spanned_by(tokens, format_args!("{e}; in `{}` ({origin})", field.name));
            continue;
        }
        // The service's own rules (Cosmos DB's reserved names), with the function the runtime checks with.
        if let Err(e) = rules.check_property_name(&field.name) {
            cx.error_spanned_by(tokens, format_args!("{e}; in `{}` ({origin})", field.name));
            continue;
        }
        if let Some(first) = seen.get(field.name.as_str()) {
            cx.error_spanned_by(
                tokens,
                format_args!("duplicate property name `{}`; field `{}` already has it", field.name, first.field_name()),
            );
            continue;
        }
        seen.insert(&field.name, field);
    }
    for field in fields.iter().filter(|f| f.attrs.flatten.is_set()) {
        let prefix = field.prefix();
        if prefix.is_empty() {
            continue;
        }
        // A prefix is the start of a name: the system names are refused only once joined (`RowKey` + `Id`
        // is fine), which the derive checks in `const` context with the nested names.
        match property_name::check(&prefix) {
            Err(e) if !matches!(e.kind(), PropertyNameErrorKind::Reserved { .. }) => {
                let tokens = match field.attrs.prefix.get() {
                    Some(lit) => quote::ToTokens::to_token_stream(lit),
                    None => quote::ToTokens::to_token_stream(field.ident),
                };
                cx.error_spanned_by(tokens, format_args!("{e}; in the flatten prefix `{prefix}`"));
            }
            _ => {}
        }
    }
    let flattens = fields.iter().any(|f| f.attrs.flatten.is_set());
    if count > MAX_CUSTOM_PROPERTIES && !flattens {
        cx.error_at(
            cont.span(),
            format_args!(
                "invalid entity: at most {MAX_CUSTOM_PROPERTIES} custom properties are allowed, found {count}"
            ),
        );
    }
}

fn check_variants(cx: &Ctxt, variants: &[Variant]) {
    let mut seen: HashMap<&str, &Variant> = HashMap::new();
    for v in variants {
        if !matches!(v.original.fields, syn::Fields::Unit) {
            cx.error_spanned_by(
                &v.original.fields,
                "TableEnum variants cannot have fields; a variant is stored as its name",
            );
        }
        if let Some(first) = seen.get(v.name.as_str()) {
            let tokens = match v.attrs.rename.get() {
                Some(lit) => quote::ToTokens::to_token_stream(lit),
                None => quote::ToTokens::to_token_stream(v.ident),
            };
            cx.error_spanned_by(
                tokens,
                format_args!("duplicate variant name `{}`; variant `{}` already has it", v.name, first.ident),
            );
            continue;
        }
        seen.insert(&v.name, v);
    }
}
