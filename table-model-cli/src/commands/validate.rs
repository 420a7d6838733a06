//! `tablectl validate FILE|DIR|-|TABLE --service storage|cosmos|portable`: every entity the service would refuse
//! ([`table_model_transfer::validate`]); nothing is sent.
//!
//! The argument is read as a path when one exists (`-` is stdin), else as a table: `table:NAME`, or a bare NAME
//! that is a valid table name and no path ([`Input::parse`]). Only a table needs an endpoint. Each invalid entity
//! gets one line per rule it breaks: on a terminal `FILE:LINE: PartitionKey `p`, RowKey `r`: property `ID`:
//! RULE`, else (or with `--json`) a JSON object with `source`, `line` (or `entity`, for a table: its place in the
//! order read, from 1), `partition_key`, `row_key`, `property` and `rule`. A summary goes to stderr, and with
//! `--json` to stdout as the last line.

use super::Context;
use crate::cli::{given_format, ValidateArgs};
use crate::error::{CliError, Outcome};
use crate::output::Style;
use std::io::Write;
use table_model_transfer::check::Checked;
use table_model_transfer::error::TransferError;
use table_model_transfer::progress::Control;
use table_model_transfer::validate::{validate_path, validate_table, Findings, Input, Place, Summary, ValidateOptions};

/// A finding as a JSON line.
#[derive(serde::Serialize)]
struct Finding<'a> {
    source: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entity: Option<u64>,
    partition_key: Option<&'a str>,
    row_key: Option<&'a str>,
    property: Option<&'a str>,
    rule: &'a str,
}

/// Writes the findings of each invalid entity on stdout, in the format of the run: one line per rule broken.
struct Written<'a, W: Write> {
    out: &'a mut W,
    format: Style,
    line: Vec<u8>,
}

impl<W: Write> Findings for Written<'_, W> {
    fn invalid(&mut self, source: &str, place: Place, checked: &Checked) -> Result<(), TransferError> {
        for finding in &checked.findings {
            self.line.clear();
            match self.format {
                Style::Json => {
                    let (line, entity) = match place {
                        Place::Line(n) => (Some(n), None),
                        Place::Entity(n) => (None, Some(n)),
                    };
                    let finding = Finding {
                        source,
                        line,
                        entity,
                        partition_key: checked.partition_key.as_deref(),
                        row_key: checked.row_key.as_deref(),
                        property: finding.property.as_deref(),
                        rule: &finding.rule,
                    };
                    serde_json::to_writer(&mut self.line, &finding).expect("writing to a Vec cannot fail");
                    self.line.push(b'\n');
                }
                Style::Human => {
                    let place = match place {
                        Place::Line(n) => format!("{source}:{n}"),
                        Place::Entity(n) => format!("{source}, entity {n}"),
                    };
                    let key = |name: &str, value: &Option<String>| match value {
                        Some(v) => format!("{name} `{v}`"),
                        None => format!("no {name}"),
                    };
                    let property = match &finding.property {
                        Some(p) => format!(": property `{p}`"),
                        None => String::new(),
                    };
                    let text = format!(
                        "{place}: {}, {}{property}: {}\n",
                        key("PartitionKey", &checked.partition_key),
                        key("RowKey", &checked.row_key),
                        finding.rule
                    );
                    self.line.extend_from_slice(text.as_bytes());
                }
            }
            self.out.write_all(&self.line).map_err(|e| TransferError::output_closed_or("stdout", e))?;
        }
        Ok(())
    }
}

/// Validates the input. `connect` gives the context of the endpoint, called only for a table.
///
/// # Errors
/// An input that cannot be read or does not match its manifest ([`Outcome::InvalidInput`]), a failed request,
/// or stdout closed. Invalid entities are not errors: they make the outcome [`Outcome::Partial`].
pub async fn run(
    args: &ValidateArgs,
    format: Style,
    json: bool,
    connect: impl FnOnce() -> Result<Context, CliError>,
    control: &Control,
    out: &mut impl Write,
) -> Result<Outcome, CliError> {
    let rules = args.service.rules();
    let mut options = ValidateOptions::new(rules).parallel(args.parallel);
    options.format = given_format(args.format, args.compress);
    let mut written = Written { out: &mut *out, format, line: Vec::new() };
    let (summary, source) = match Input::parse(&args.input)? {
        Input::Path(path) => (validate_path(&path, &options, &mut written, control)?, format!("`{}`", path.display())),
        Input::Table(name) => {
            let ctx = connect()?;
            let table = ctx.service.table_client(name.clone());
            (validate_table(&table, &options, &mut written, control).await?, format!("table {name}"))
        }
    };
    let Summary { entities, invalid, findings } = summary;
    eprintln!(
        "tablectl: {entities} entities of {source} checked for {rules}: {} valid, {invalid} invalid ({findings} findings)",
        entities - invalid
    );
    if json {
        let summary = serde_json::json!({
            "service": rules.keyword(),
            "entities": entities,
            "valid": entities - invalid,
            "invalid": invalid,
            "findings": findings,
        });
        writeln!(out, "{summary}").map_err(CliError::stdout)?;
    }
    Ok(if invalid > 0 { Outcome::Partial } else { Outcome::Done })
}

#[cfg(test)]
mod tests {
    use super::*;
    use table_model_transfer::check::Finding as Rule;

    #[test]
    fn text_names_the_place_the_keys_the_property_and_the_rule() {
        let checked = Checked {
            partition_key: Some("p".into()),
            row_key: None,
            findings: vec![
                Rule { property: Some("ID".into()), rule: "reserved".into() },
                Rule { property: None, rule: "bad JSON".into() },
            ],
        };
        let mut out = Vec::new();
        let mut written = Written { out: &mut out, format: Style::Human, line: Vec::new() };
        written.invalid("a.jsonl", Place::Line(7), &checked).unwrap();
        written.invalid("table:People", Place::Entity(4), &checked).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a.jsonl:7: PartitionKey `p`, no RowKey: property `ID`: reserved\n\
             a.jsonl:7: PartitionKey `p`, no RowKey: bad JSON\n\
             table:People, entity 4: PartitionKey `p`, no RowKey: property `ID`: reserved\n\
             table:People, entity 4: PartitionKey `p`, no RowKey: bad JSON\n"
        );
        let mut out = Vec::new();
        let mut written = Written { out: &mut out, format: Style::Json, line: Vec::new() };
        written.invalid("a.jsonl", Place::Line(7), &checked).unwrap();
        let first = String::from_utf8(out).unwrap();
        assert_eq!(
            first.lines().next().unwrap(),
            r#"{"source":"a.jsonl","line":7,"partition_key":"p","row_key":null,"property":"ID","rule":"reserved"}"#
        );
    }
}
