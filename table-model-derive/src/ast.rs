//! The derive's view of the input: the container, its fields or variants, their parsed attributes and the
//! property names they end up with. Keeps references to the `syn` items for spans.
//!
//! Layer: parse.

use crate::attr;
use crate::case::RenameRule;
use crate::ctxt::Ctxt;
use proc_macro2::Span;
use quote::ToTokens;
use syn::{Data as SynData, DeriveInput, Fields, Ident, LitStr, Type};
use table_model_rules::EdmType;

/// Which derive is running.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Derive {
    Entity,
    Properties,
    Enum,
}

impl Derive {
    pub fn trait_name(self) -> &'static str {
        match self {
            Derive::Entity => "TableEntity",
            Derive::Properties => "TableProperties",
            Derive::Enum => "TableEnum",
        }
    }
}

pub struct Container<'a> {
    pub derive: Derive,
    pub ident: &'a Ident,
    pub attrs: attr::Container,
    pub data: Data<'a>,
    pub original: &'a DeriveInput,
}

pub enum Data<'a> {
    Struct(Vec<Field<'a>>),
    Enum(Vec<Variant<'a>>),
}

pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    pub attrs: attr::Field,
    /// The property name, after `rename` or `rename_all`.
    pub name: String,
}

pub struct Variant<'a> {
    pub ident: &'a Ident,
    pub attrs: attr::Variant,
    /// The stored name, after `rename` or `rename_all`.
    pub name: String,
    pub original: &'a syn::Variant,
}

/// What a field is, once its attributes have passed the checks.
pub enum Role<'a> {
    /// `unique`: the unique chronological form, `{ticks:019}-{tie_breaker:010}`.
    PartitionKey {
        unique: bool,
    },
    RowKey {
        reverse: bool,
        unique: bool,
    },
    /// `#[table(tie_breaker)]`: the tie-breaker of the struct's unique key, not a property.
    TieBreaker,
    Timestamp,
    ETag,
    Skip,
    Flatten {
        prefix: String,
    },
    Json,
    Property {
        edm: Option<(EdmType, &'a LitStr)>,
    },
}

impl<'a> Container<'a> {
    /// The IR of `input`, whose container attributes are `attrs` (parsed first, so that the crate path is
    /// known even when the rest fails); or `None` (with the error recorded) for a shape the derive does not
    /// support.
    pub fn from_syn(cx: &Ctxt, input: &'a DeriveInput, attrs: attr::Container, derive: Derive) -> Option<Self> {
        let name = derive.trait_name();
        let data = match (&input.data, derive) {
            (SynData::Struct(s), Derive::Entity | Derive::Properties) => {
                match &s.fields {
                    Fields::Named(fields) => Data::Struct(
                        fields.named.iter().map(|f| Field::from_syn(cx, f, attrs.rename_all.get())).collect(),
                    ),
                    Fields::Unnamed(fields) => {
                        cx.error_spanned_by(
                        fields,
                        format_args!("{name} cannot be derived for tuple structs; name the fields, which name the properties"),
                    );
                        return None;
                    }
                    Fields::Unit => {
                        cx.error_spanned_by(
                            &input.ident,
                            format_args!("{name} cannot be derived for unit structs; an entity needs its key fields"),
                        );
                        return None;
                    }
                }
            }
            (SynData::Enum(e), Derive::Enum) => {
                Data::Enum(e.variants.iter().map(|v| Variant::from_syn(cx, v, attrs.rename_all.get())).collect())
            }
            (SynData::Enum(e), _) => {
                cx.error_spanned_by(
                    e.enum_token,
                    format_args!(
                        "{name} cannot be derived for enums; derive TableEnum to store a fieldless enum as its variant name"
                    ),
                );
                return None;
            }
            (SynData::Union(u), _) => {
                cx.error_spanned_by(u.union_token, format_args!("{name} cannot be derived for unions"));
                return None;
            }
            (SynData::Struct(s), Derive::Enum) => {
                cx.error_spanned_by(
                    s.struct_token,
                    "TableEnum can only be derived for fieldless enums; derive TableEntity for a struct",
                );
                return None;
            }
        };
        Some(Container { derive, ident: &input.ident, attrs, data, original: input })
    }

    /// The span for errors about the container as a whole: its name.
    pub fn span(&self) -> Span {
        self.ident.span()
    }
}

impl<'a> Field<'a> {
    fn from_syn(cx: &Ctxt, field: &'a syn::Field, rename_all: Option<&RenameRule>) -> Self {
        let ident = field.ident.as_ref().expect("named field");
        let attrs = attr::Field::from_attrs(cx, &field.attrs);
        let unraw = ident.to_string().trim_start_matches("r#").to_owned();
        let name = match (attrs.rename.get(), rename_all) {
            (Some(lit), _) => lit.value(),
            (None, Some(rule)) => rule.apply_to_field(&unraw),
            (None, None) => unraw,
        };
        Field { ident, ty: &field.ty, attrs, name }
    }

    /// The Rust field name without `r#`.
    pub fn field_name(&self) -> String {
        self.ident.to_string().trim_start_matches("r#").to_owned()
    }

    /// Where the property name came from, for messages; and the tokens to span them on.
    pub fn name_origin(&self, rename_all: Option<&RenameRule>) -> (String, proc_macro2::TokenStream) {
        match (self.attrs.rename.get(), rename_all) {
            (Some(lit), _) => ("from #[table(rename)]".to_owned(), lit.to_token_stream()),
            (None, Some(rule)) => (format!("from rename_all = \"{}\"", rule.name()), self.ident.to_token_stream()),
            (None, None) => ("from the field name".to_owned(), self.ident.to_token_stream()),
        }
    }

    /// The role; valid once `check` has passed.
    pub fn role(&self) -> Role<'_> {
        let a = &self.attrs;
        if a.partition_key.is_set() {
            Role::PartitionKey { unique: a.unique.is_set() }
        } else if a.row_key.is_set() {
            Role::RowKey { reverse: a.reverse_chronological.is_set(), unique: a.unique.is_set() }
        } else if a.tie_breaker.is_set() {
            Role::TieBreaker
        } else if a.timestamp.is_set() {
            Role::Timestamp
        } else if a.etag.is_set() {
            Role::ETag
        } else if a.skip.is_set() {
            Role::Skip
        } else if a.flatten.is_set() {
            Role::Flatten { prefix: self.prefix() }
        } else if a.json.is_set() {
            Role::Json
        } else {
            let edm = a.edm.get().map(|(t, lit)| (*t, lit));
            Role::Property { edm }
        }
    }

    /// The flatten prefix: `prefix = "..."`, or the field name in PascalCase.
    pub fn prefix(&self) -> String {
        match self.attrs.prefix.get() {
            Some(lit) => lit.value(),
            None => RenameRule::Pascal.apply_to_field(&self.field_name()),
        }
    }
}

impl<'a> Variant<'a> {
    fn from_syn(cx: &Ctxt, variant: &'a syn::Variant, rename_all: Option<&RenameRule>) -> Self {
        let attrs = attr::Variant::from_attrs(cx, &variant.attrs);
        let unraw = variant.ident.to_string().trim_start_matches("r#").to_owned();
        let name = match (attrs.rename.get(), rename_all) {
            (Some(lit), _) => lit.value(),
            (None, Some(rule)) => rule.apply_to_variant(&unraw),
            (None, None) => unraw,
        };
        Variant { ident: &variant.ident, attrs, name, original: variant }
    }
}
