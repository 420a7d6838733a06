//! How an offending character is shown in an error message.

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
