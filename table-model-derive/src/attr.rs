//! Parsing of `#[table(...)]` attributes into typed structs. Parsers return no `Result`: a bad attribute is
//! recorded in the [`Ctxt`] and skipped, so that the user sees every problem in one build. Checks of one
//! attribute's value live here; checks across attributes and fields live in `check.rs`.
//!
//! Layer: parse.

use crate::case::RenameRule;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Token};
use table_model_rules::{EdmType, RuleSet};

/// The attributes of a struct or enum.
pub const CONTAINER: &[&str] =
    &["name", "rename_all", "partition_key", "row_key", "deny_unknown_properties", "service", "crate"];
/// The attributes of a field.
pub const FIELD: &[&str] = &[
    "partition_key",
    "row_key",
    "reverse_chronological",
    "unique",
    "tie_breaker",
    "rename",
    "skip",
    "default",
    "json",
    "flatten",
    "prefix",
    "timestamp",
    "edm",
    "etag",
];
/// The attributes of an enum variant.
pub const VARIANT: &[&str] = &["rename"];

/// One attribute: its value and the tokens it was written with (for spans). A second occurrence is an error
/// spanned on the second one.
pub struct Attr<T> {
    name: &'static str,
    set: Option<(TokenStream, T)>,
}

impl<T> Attr<T> {
    fn none(name: &'static str) -> Self {
        Attr { name, set: None }
    }

    fn set<A: ToTokens>(&mut self, cx: &Ctxt, obj: A, value: T) {
        if self.set.is_some() {
            cx.error_spanned_by(obj, format_args!("duplicate #[table({})] attribute", self.name));
        } else {
            self.set = Some((obj.into_token_stream(), value));
        }
    }

    pub fn get(&self) -> Option<&T> {
        self.set.as_ref().map(|(_, v)| v)
    }

    pub fn is_set(&self) -> bool {
        self.set.is_some()
    }

    /// The tokens the attribute was written with.
    pub fn tokens(&self) -> Option<&TokenStream> {
        self.set.as_ref().map(|(t, _)| t)
    }

    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// `#[table(default)]` or `#[table(default = "path")]`.
pub enum Default {
    Trait,
    Path(syn::ExprPath),
}

pub struct Container {
    pub name: Attr<LitStr>,
    pub rename_all: Attr<RenameRule>,
    pub partition_key: Attr<LitStr>,
    pub row_key: Attr<LitStr>,
    pub deny_unknown_properties: Attr<()>,
    /// `service = "storage" | "cosmos" | "portable"`: the rules the names are checked against.
    pub service: Attr<RuleSet>,
    pub crate_path: Attr<syn::Path>,
}

impl Container {
    /// The path of the runtime crate in the generated code: `#[table(crate = "...")]`, else `::table_model`.
    pub fn krate(&self) -> TokenStream {
        match self.crate_path.get() {
            Some(path) => path.to_token_stream(),
            None => quote!(::table_model),
        }
    }

    /// The rules of `#[table(service = "...")]`; Azure Table Storage's by default.
    pub fn rules(&self) -> RuleSet {
        self.service.get().copied().unwrap_or_default()
    }
}

pub struct Field {
    pub partition_key: Attr<()>,
    pub row_key: Attr<()>,
    pub reverse_chronological: Attr<()>,
    pub unique: Attr<()>,
    pub tie_breaker: Attr<()>,
    pub rename: Attr<LitStr>,
    pub skip: Attr<()>,
    pub default: Attr<Default>,
    pub json: Attr<()>,
    pub flatten: Attr<()>,
    pub prefix: Attr<LitStr>,
    pub timestamp: Attr<()>,
    pub etag: Attr<()>,
    pub edm: Attr<(EdmType, LitStr)>,
}

pub struct Variant {
    pub rename: Attr<LitStr>,
}

/// Runs `f` on each `key` of every `#[table(...)]` attribute; records syntax errors.
fn each_meta(cx: &Ctxt, attrs: &[Attribute], mut f: impl FnMut(&ParseNestedMeta, &str) -> syn::Result<()>) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("table")) {
        if let syn::Meta::Path(_) = attr.meta {
            cx.error_spanned_by(attr, "expected #[table(...)] with a list of attributes");
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            let key = meta.path.to_token_stream().to_string().replace(' ', "");
            f(&meta, &key)
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
}

/// Consumes the value of an attribute that is being rejected, so that parsing goes on with the next one.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

/// A flag such as `skip`: an error if it is given a value.
fn flag(cx: &Ctxt, meta: &ParseNestedMeta, attr: &mut Attr<()>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(&meta.path, format_args!("#[table({})] takes no value", attr.name));
        return skip_value(meta);
    }
    attr.set(cx, &meta.path, ());
    Ok(())
}

/// `key = "..."`: the string literal, or an error spanned on what was written instead.
fn string(cx: &Ctxt, meta: &ParseNestedMeta, name: &str) -> syn::Result<Option<LitStr>> {
    if !meta.input.peek(Token![=]) {
        cx.error_spanned_by(&meta.path, format_args!("expected #[table({name})] to be a string: `{name} = \"...\"`"));
        skip_value(meta)?;
        return Ok(None);
    }
    match meta.value()?.parse::<Expr>()? {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Ok(Some(s)),
        other => {
            cx.error_spanned_by(other, format_args!("expected #[table({name})] to be a string: `{name} = \"...\"`"));
            Ok(None)
        }
    }
}

/// The error for an unknown key: a "did you mean" when a known key is close, a pointer to the right place
/// when the key belongs to another position, else the list of keys.
fn unknown(cx: &Ctxt, meta: &ParseNestedMeta, key: &str, here: &[&str], what: &str) -> syn::Result<()> {
    let elsewhere = [(CONTAINER, "the struct or enum"), (FIELD, "a field"), (VARIANT, "an enum variant")];
    let msg = if let Some((_, place)) = elsewhere.iter().find(|(list, _)| list.contains(&key)) {
        format!("#[table({key})] does not apply to {what}; it belongs on {place}")
    } else if let Some(best) = suggest(key, here) {
        format!("unknown table attribute `{key}`; did you mean `{best}`?")
    } else {
        let list: Vec<String> = here.iter().map(|k| format!("`{k}`")).collect();
        format!("unknown table attribute `{key}`; expected one of {}", list.join(", "))
    };
    cx.error_spanned_by(&meta.path, msg);
    skip_value(meta)
}

/// The closest known key, if it is close enough to be a typo.
fn suggest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    // serde's name for the same thing.
    if key == "deny_unknown_fields" && known.contains(&"deny_unknown_properties") {
        return Some("deny_unknown_properties");
    }
    known
        .iter()
        .map(|k| (levenshtein(key, k), *k))
        .filter(|(d, k)| *d <= 2 || *d * 3 <= k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb { prev } else { 1 + prev.min(cur).min(row[j]) };
            prev = cur;
        }
    }
    row[b.len()]
}

impl Container {
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut c = Container {
            name: Attr::none("name"),
            rename_all: Attr::none("rename_all"),
            partition_key: Attr::none("partition_key"),
            row_key: Attr::none("row_key"),
            deny_unknown_properties: Attr::none("deny_unknown_properties"),
            service: Attr::none("service"),
            crate_path: Attr::none("crate"),
        };
        each_meta(cx, attrs, |meta, key| {
            match key {
                "name" => {
                    if let Some(s) = string(cx, meta, key)? {
                        c.name.set(cx, &meta.path, s);
                    }
                }
                "rename_all" => {
                    if let Some(s) = string(cx, meta, key)? {
                        match RenameRule::from_str(&s.value()) {
                            Some(rule) => c.rename_all.set(cx, &meta.path, rule),
                            None => {
                                let names: Vec<&str> = RenameRule::ALL.iter().map(|(n, _)| *n).collect();
                                let hint = match suggest(&s.value(), &names) {
                                    Some(best) => format!("did you mean \"{best}\"?"),
                                    None => format!("expected one of {}", RenameRule::expected()),
                                };
                                cx.error_spanned_by(
                                    &s,
                                    format_args!("unknown rename_all rule \"{}\"; {hint}", s.value()),
                                );
                            }
                        }
                    }
                }
                "partition_key" | "row_key" => {
                    if !meta.input.peek(Token![=]) {
                        cx.error_spanned_by(
                            &meta.path,
                            format_args!(
                                "#[table({key})] on the struct needs a constant: `{key} = \"...\"`; or put #[table({key})] on a field"
                            ),
                        );
                        return skip_value(meta);
                    }
                    if let Some(s) = string(cx, meta, key)? {
                        let attr = if key == "partition_key" { &mut c.partition_key } else { &mut c.row_key };
                        attr.set(cx, &meta.path, s);
                    }
                }
                "deny_unknown_properties" => flag(cx, meta, &mut c.deny_unknown_properties)?,
                "service" => {
                    if let Some(s) = string(cx, meta, key)? {
                        match RuleSet::parse(&s.value()) {
                            Some(rules) => c.service.set(cx, &meta.path, rules),
                            None => {
                                let words: Vec<String> =
                                    RuleSet::ALL.iter().map(|r| format!("\"{}\"", r.keyword())).collect();
                                cx.error_spanned_by(
                                    &s,
                                    format_args!(
                                        "unknown table service \"{}\"; expected one of {}",
                                        s.value(),
                                        words.join(", ")
                                    ),
                                );
                            }
                        }
                    }
                }
                "crate" => {
                    if let Some(s) = string(cx, meta, key)? {
                        match s.parse::<syn::Path>() {
                            Ok(path) => c.crate_path.set(cx, &meta.path, path),
                            Err(_) => cx.error_spanned_by(&s, format_args!("invalid crate path \"{}\"", s.value())),
                        }
                    }
                }
                _ => unknown(cx, meta, key, CONTAINER, "the struct or enum")?,
            }
            Ok(())
        });
        c
    }
}

impl Field {
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut f = Field {
            partition_key: Attr::none("partition_key"),
            row_key: Attr::none("row_key"),
            reverse_chronological: Attr::none("reverse_chronological"),
            unique: Attr::none("unique"),
            tie_breaker: Attr::none("tie_breaker"),
            rename: Attr::none("rename"),
            skip: Attr::none("skip"),
            default: Attr::none("default"),
            json: Attr::none("json"),
            flatten: Attr::none("flatten"),
            prefix: Attr::none("prefix"),
            timestamp: Attr::none("timestamp"),
            etag: Attr::none("etag"),
            edm: Attr::none("edm"),
        };
        each_meta(cx, attrs, |meta, key| {
            match key {
                "partition_key" | "row_key" if meta.input.peek(Token![=]) => {
                    cx.error_spanned_by(
                        &meta.path,
                        format_args!("#[table({key})] on a field takes no value; a constant key is set on the struct"),
                    );
                    skip_value(meta)?;
                }
                "partition_key" => flag(cx, meta, &mut f.partition_key)?,
                "row_key" => flag(cx, meta, &mut f.row_key)?,
                "reverse_chronological" => flag(cx, meta, &mut f.reverse_chronological)?,
                "unique" => flag(cx, meta, &mut f.unique)?,
                "tie_breaker" => flag(cx, meta, &mut f.tie_breaker)?,
                "skip" => flag(cx, meta, &mut f.skip)?,
                "json" => flag(cx, meta, &mut f.json)?,
                "flatten" => flag(cx, meta, &mut f.flatten)?,
                "timestamp" => flag(cx, meta, &mut f.timestamp)?,
                "etag" => flag(cx, meta, &mut f.etag)?,
                "rename" => {
                    if let Some(s) = string(cx, meta, key)? {
                        f.rename.set(cx, &meta.path, s);
                    }
                }
                "prefix" => {
                    if let Some(s) = string(cx, meta, key)? {
                        f.prefix.set(cx, &meta.path, s);
                    }
                }
                "default" => {
                    if meta.input.peek(Token![=]) {
                        if let Some(s) = string(cx, meta, key)? {
                            match s.parse::<syn::ExprPath>() {
                                Ok(path) => f.default.set(cx, &meta.path, Default::Path(path)),
                                Err(_) => cx.error_spanned_by(
                                    &s,
                                    format_args!(
                                        "expected #[table(default)] to name a function: `default = \"path::to::fn\"`"
                                    ),
                                ),
                            }
                        }
                    } else {
                        f.default.set(cx, &meta.path, Default::Trait);
                    }
                }
                "edm" => {
                    if let Some(s) = string(cx, meta, key)? {
                        let value = s.value();
                        let parsed =
                            EdmType::from_short_name(&value).map(Ok).unwrap_or_else(|| value.parse::<EdmType>());
                        match parsed {
                            Ok(t) => f.edm.set(cx, &meta.path, (t, s.clone())),
                            Err(e) => cx.error_spanned_by(&s, e),
                        }
                    }
                }
                _ => unknown(cx, meta, key, FIELD, "a field")?,
            }
            Ok(())
        });
        f
    }

    /// Every attribute that is set, in a fixed order, as (name, tokens), for the conflict checks.
    pub fn set_attrs(&self) -> Vec<(&'static str, &TokenStream)> {
        let all: [(&'static str, Option<&TokenStream>); 14] = [
            (self.partition_key.name(), self.partition_key.tokens()),
            (self.row_key.name(), self.row_key.tokens()),
            (self.reverse_chronological.name(), self.reverse_chronological.tokens()),
            (self.unique.name(), self.unique.tokens()),
            (self.tie_breaker.name(), self.tie_breaker.tokens()),
            (self.rename.name(), self.rename.tokens()),
            (self.skip.name(), self.skip.tokens()),
            (self.default.name(), self.default.tokens()),
            (self.json.name(), self.json.tokens()),
            (self.flatten.name(), self.flatten.tokens()),
            (self.prefix.name(), self.prefix.tokens()),
            (self.timestamp.name(), self.timestamp.tokens()),
            (self.etag.name(), self.etag.tokens()),
            (self.edm.name(), self.edm.tokens()),
        ];
        all.into_iter().filter_map(|(n, t)| t.map(|t| (n, t))).collect()
    }
}

impl Variant {
    pub fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut v = Variant { rename: Attr::none("rename") };
        each_meta(cx, attrs, |meta, key| {
            match key {
                "rename" => {
                    if let Some(s) = string(cx, meta, key)? {
                        v.rename.set(cx, &meta.path, s);
                    }
                }
                _ => unknown(cx, meta, key, VARIANT, "an enum variant")?,
            }
            Ok(())
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_suggestions() {
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("rwo_key", "row_key"), 2);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(suggest("rwo_key", FIELD), Some("row_key"));
        assert_eq!(suggest("renmae", FIELD), Some("rename"));
        assert_eq!(suggest("flaten", FIELD), Some("flatten"));
        assert_eq!(suggest("deny_unknown_fields", CONTAINER), Some("deny_unknown_properties"));
        assert_eq!(suggest("banana", FIELD), None);
        assert_eq!(suggest("uniqe", FIELD), Some("unique"));
        assert_eq!(suggest("unqiue", FIELD), Some("unique"));
        assert_eq!(suggest("tiebreaker", FIELD), Some("tie_breaker"));
        assert_eq!(suggest("tie_braker", FIELD), Some("tie_breaker"));
    }
}
