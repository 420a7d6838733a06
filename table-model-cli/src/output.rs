//! What goes to stdout: for a person at a terminal, aligned tables and plain numbers; for a program (stdout piped,
//! or `--json`), JSON lines. Progress and diagnostics go to stderr (see [`crate::progress`]).
//!
//! Layer: parts.

use std::fmt::Write as _;
use table_model::{EdmValue, Entity};

/// How results are written on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// For reading: aligned columns, plain numbers.
    Human,
    /// JSON lines.
    Json,
}

impl Style {
    /// `--json` asks for JSON; without it, JSON unless stdout is a terminal.
    ///
    /// ```
    /// use table_model_cli::output::Style;
    /// assert_eq!(Style::choose(false, true), Style::Human);
    /// assert_eq!(Style::choose(false, false), Style::Json);
    /// assert_eq!(Style::choose(true, true), Style::Json);
    /// ```
    pub fn choose(json: bool, stdout_is_terminal: bool) -> Style {
        if json || !stdout_is_terminal {
            Style::Json
        } else {
            Style::Human
        }
    }
}

/// The widest a cell of [`table`] is, in characters; longer values end with `…`.
pub const MAX_CELL: usize = 60;

/// A value as a cell shows it: the wire form of DateTime (7 digits), Guid and numbers, the text of a String
/// with control characters escaped, and `<N bytes>` for Binary.
///
/// ```
/// use table_model::{EdmString, EdmValue};
/// use table_model_cli::output::cell;
/// assert_eq!(cell(&EdmValue::Double(-0.0)), "-0");
/// assert_eq!(cell(&EdmValue::Int64(i64::MIN)), "-9223372036854775808");
/// assert_eq!(cell(&EdmValue::String(EdmString::new("a\tb")?)), "a\\tb");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn cell(value: &EdmValue) -> String {
    match value {
        EdmValue::Binary(b) => format!("<{} bytes>", b.as_bytes().len()),
        EdmValue::Boolean(b) => b.to_string(),
        EdmValue::DateTime(d) => d.to_string(),
        EdmValue::Double(d) => d.to_string(),
        EdmValue::Guid(g) => g.to_string(),
        EdmValue::Int32(i) => i.to_string(),
        EdmValue::Int64(i) => i.to_string(),
        EdmValue::String(s) => escape_controls(s.as_str()),
    }
}

/// The text with its control characters escaped as Rust writes them (`\t`, `\u{1b}`): a value shown on a
/// terminal never moves the cursor or starts an escape sequence.
pub(crate) fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// Entities as an aligned table: `PartitionKey`, `RowKey`, `Timestamp`, then every property in the order first
/// met; a property an entity lacks is an empty cell. Widths count characters, cut at [`MAX_CELL`].
///
/// ```
/// use table_model::{Entity, PartitionKey, RowKey};
/// let a = Entity::new(PartitionKey::new("eu")?, RowKey::new("1")?).with("Name".parse()?, "Ada")?;
/// let b = Entity::new(PartitionKey::new("eu")?, RowKey::new("22")?).with("Age".parse()?, 36)?;
/// assert_eq!(
///     table_model_cli::output::table(&[a, b]),
///     "PartitionKey  RowKey  Timestamp  Name  Age\n\
///      eu            1                  Ada\n\
///      eu            22                       36\n"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn table(entities: &[Entity]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for entity in entities {
        for (name, _) in entity {
            if !names.contains(&name.as_str()) {
                names.push(name.as_str());
            }
        }
    }
    let header = ["PartitionKey", "RowKey", "Timestamp"].into_iter().chain(names.iter().copied());
    let mut rows: Vec<Vec<String>> = vec![header.map(str::to_owned).collect()];
    for entity in entities {
        let mut row = vec![
            cut(entity.partition_key().as_str()),
            cut(entity.row_key().as_str()),
            entity.timestamp().map(|t| t.to_string()).unwrap_or_default(),
        ];
        row.extend(names.iter().map(|name| entity.value(name).map(|v| cut(&cell(v))).unwrap_or_default()));
        rows.push(row);
    }
    let widths: Vec<usize> =
        (0..rows[0].len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, value) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let _ = write!(line, "{value:<width$}", width = widths[i]);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Rows of a terminal table aligned together.
pub const BLOCK: usize = 1000;

/// An entity's keys, for messages: ``PartitionKey `p`, RowKey `r` ``.
///
/// ```
/// use table_model::{Entity, PartitionKey, RowKey};
/// let entity = Entity::new(PartitionKey::new("eu")?, RowKey::new("ada")?);
/// assert_eq!(table_model_cli::output::keys(&entity), "PartitionKey `eu`, RowKey `ada`");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn keys(entity: &Entity) -> String {
    format!("PartitionKey `{}`, RowKey `{}`", entity.partition_key(), entity.row_key())
}

/// The text cut to [`MAX_CELL`] characters.
pub(crate) fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_CELL - 1) {
        Some((end, _)) if text[end..].chars().nth(1).is_some() => format!("{}…", &text[..end]),
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use table_model::{EdmBinary, PartitionKey, RowKey};

    #[test]
    fn long_cells_are_cut_and_binary_is_its_size() {
        let long = "é".repeat(MAX_CELL + 5);
        let exact = "x".repeat(MAX_CELL);
        let entity = Entity::new(PartitionKey::new(long).unwrap(), RowKey::new(exact.clone()).unwrap())
            .with("B".parse().unwrap(), EdmBinary::new(vec![0; 3]).unwrap())
            .unwrap();
        let text = table(&[entity]);
        let row = text.lines().nth(1).unwrap();
        let cut_key = format!("{}…", "é".repeat(MAX_CELL - 1));
        assert_eq!(row, format!("{cut_key}  {exact}             <3 bytes>"));
    }

    #[test]
    fn doubles_show_their_special_values() {
        assert_eq!(cell(&EdmValue::Double(f64::NAN)), "NaN");
        assert_eq!(cell(&EdmValue::Double(f64::NEG_INFINITY)), "-inf");
        assert_eq!(cell(&EdmValue::Double(0.1)), "0.1");
    }
}
