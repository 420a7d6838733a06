//! `rename_all` rules, with serde's names and conventions: fields are read as snake_case, variants as
//! PascalCase.
//!
//! Layer: base.

use std::fmt::Write as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    pub const ALL: [(&'static str, RenameRule); 8] = [
        ("lowercase", RenameRule::Lower),
        ("UPPERCASE", RenameRule::Upper),
        ("PascalCase", RenameRule::Pascal),
        ("camelCase", RenameRule::Camel),
        ("snake_case", RenameRule::Snake),
        ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
        ("kebab-case", RenameRule::Kebab),
        ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
    ];

    pub fn from_str(s: &str) -> Option<Self> {
        RenameRule::ALL.iter().find(|(name, _)| *name == s).map(|(_, r)| *r)
    }

    pub fn name(self) -> &'static str {
        RenameRule::ALL.iter().find(|(_, r)| *r == self).map(|(n, _)| *n).unwrap_or_default()
    }

    /// The expected names, for an error message.
    pub fn expected() -> String {
        let mut s = String::new();
        for (i, (name, _)) in RenameRule::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            let _ = write!(s, "{sep}\"{name}\"");
        }
        s
    }

    /// Renames a snake_case field name.
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.extend(ch.to_uppercase());
                        capitalize = false;
                    } else {
                        out.push(ch);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                lower_first(&pascal)
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// Renames a PascalCase variant name.
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => lower_first(variant),
            RenameRule::Snake => {
                let mut out = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        out.push('_');
                    }
                    out.push(ch.to_ascii_lowercase());
                }
                out
            }
            RenameRule::ScreamingSnake => RenameRule::Snake.apply_to_variant(variant).to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake.apply_to_variant(variant).replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake.apply_to_variant(variant).replace('_', "-"),
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule::*;

    #[test]
    fn fields_as_serde_renames_them() {
        for (field, expected) in [
            ("outcome", ["outcome", "OUTCOME", "Outcome", "outcome", "outcome", "OUTCOME", "outcome", "OUTCOME"]),
            (
                "very_tasty",
                [
                    "very_tasty",
                    "VERY_TASTY",
                    "VeryTasty",
                    "veryTasty",
                    "very_tasty",
                    "VERY_TASTY",
                    "very-tasty",
                    "VERY-TASTY",
                ],
            ),
            ("a", ["a", "A", "A", "a", "a", "A", "a", "A"]),
            ("z42", ["z42", "Z42", "Z42", "z42", "z42", "Z42", "z42", "Z42"]),
        ] {
            for (rule, want) in
                [Lower, Upper, Pascal, Camel, Snake, ScreamingSnake, Kebab, ScreamingKebab].iter().zip(expected)
            {
                assert_eq!(rule.apply_to_field(field), want, "{rule:?} {field}");
            }
        }
    }

    #[test]
    fn variants_as_serde_renames_them() {
        for (variant, expected) in [
            ("Outcome", ["outcome", "OUTCOME", "Outcome", "outcome", "outcome", "OUTCOME", "outcome", "OUTCOME"]),
            (
                "VeryTasty",
                [
                    "verytasty",
                    "VERYTASTY",
                    "VeryTasty",
                    "veryTasty",
                    "very_tasty",
                    "VERY_TASTY",
                    "very-tasty",
                    "VERY-TASTY",
                ],
            ),
            ("A", ["a", "A", "A", "a", "a", "A", "a", "A"]),
            ("Z42", ["z42", "Z42", "Z42", "z42", "z42", "Z42", "z42", "Z42"]),
        ] {
            for (rule, want) in
                [Lower, Upper, Pascal, Camel, Snake, ScreamingSnake, Kebab, ScreamingKebab].iter().zip(expected)
            {
                assert_eq!(rule.apply_to_variant(variant), want, "{rule:?} {variant}");
            }
        }
    }
}
