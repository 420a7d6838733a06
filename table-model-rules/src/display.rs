//! How an offending character, and the value it is in, are shown in an error message.
//!
//! Layer: base.

use core::fmt;

/// Shows a character in backticks when it is visible, and as `U+XXXX` when it is a control, a space or an
/// otherwise invisible character, so that every error message says exactly which character was refused.
///
/// ```
/// use table_model_rules::DisplayChar;
/// assert_eq!(DisplayChar('#').to_string(), "`#`");
/// assert_eq!(DisplayChar('\n').to_string(), "U+000A");
/// assert_eq!(DisplayChar('\u{200B}').to_string(), "U+200B");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisplayChar(pub char);

impl fmt::Display for DisplayChar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.0;
        let invisible = c.is_control()
            || c.is_whitespace()
            || matches!(c, '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
                | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFFB}' | '\u{E0000}'..='\u{E0FFF}');
        if invisible {
            write!(f, "U+{:04X}", c as u32)
        } else {
            write!(f, "`{c}`")
        }
    }
}

/// Longest part of a refused value an error message shows, in characters: enough to recognize a name or a key,
/// short enough for one log line (a key may be 512 characters and more).
pub(crate) const VALUE_MAX_CHARS: usize = 64;

/// A value as error messages show it: quoted and escaped as `{:?}` escapes a string (so that control and
/// invisible characters show), and cut to its first 64 characters with `...` after the closing quote when it is
/// longer (a key may be 512 characters and more).
///
/// ```
/// use table_model_rules::display::QuotedValue;
/// assert_eq!(QuotedValue("O'Brien\t1").to_string(), "\"O'Brien\\t1\"");
/// assert_eq!(QuotedValue(&"k".repeat(100)).to_string(), format!("\"{}\"...", "k".repeat(64)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotedValue<'a>(pub &'a str);

impl fmt::Display for QuotedValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(VALUE_MAX_CHARS) {
            Some((end, _)) => write!(f, "{:?}...", &self.0[..end]),
            None => write!(f, "{:?}", self.0),
        }
    }
}

/// An error message in two parts, `invalid <subject>: <detail>`, so that the value can go after the subject.
pub(crate) trait Message {
    /// What was refused: `table name`, `property name`, `row key`.
    fn subject(&self) -> &'static str;

    /// What is wrong with it and the rule, after `invalid <subject>: `.
    fn detail(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;

    /// `invalid <subject>: <detail>`, or with the value `invalid <subject> "<value>": <detail>`.
    fn write(&self, value: Option<&str>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match value {
            Some(value) => write!(f, "invalid {} {}: ", self.subject(), QuotedValue(value))?,
            None => write!(f, "invalid {}: ", self.subject())?,
        }
        self.detail(f)
    }
}

/// An error's message naming the value it refused (the errors' `with_value`).
pub(crate) struct WithValue<'a, E>(pub(crate) &'a E, pub(crate) &'a str);

impl<E: Message> fmt::Display for WithValue<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write(Some(self.1), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_escaped_and_cut() {
        assert_eq!(QuotedValue("audit-log").to_string(), "\"audit-log\"");
        assert_eq!(QuotedValue("").to_string(), "\"\"");
        assert_eq!(QuotedValue("tab\there \"q\" \\ \u{200B}").to_string(), "\"tab\\there \\\"q\\\" \\\\ \\u{200b}\"");
        let exact = "é".repeat(VALUE_MAX_CHARS);
        assert_eq!(QuotedValue(&exact).to_string(), format!("\"{exact}\""));
        let long = format!("{exact}😀 and more");
        assert_eq!(QuotedValue(&long).to_string(), format!("\"{exact}\"..."));
    }
}
