//! The commands, one module each; what they share: the [`Context`] of a run and the reading of `--filter`.

pub mod completions;
pub mod copy;
pub mod count;
pub mod export;
pub mod import;
pub mod query;
pub mod schema;
#[cfg(feature = "sql")]
pub mod sql;
pub mod tables;
pub mod validate;

use crate::error::CliError;
use crate::output::Format;
use table_model::client::TableServiceClient;
use table_model::filter::Filter;
use table_model::Query;

/// What every command gets: the client of the endpoint and the output format.
#[derive(Debug)]
pub struct Context {
    /// The service.
    pub service: TableServiceClient,
    /// How results are written on stdout.
    pub format: Format,
    /// Whether `--json` was given: `export` and `import` then write their summary on stdout as JSON (else only
    /// on stderr, as text).
    pub json: bool,
}

/// Parses `--filter` with [`Filter::parse`], so a mistake is an error with its position before any request.
///
/// ```
/// let err = table_model_cli::commands::parse_filter("Age gt").unwrap_err();
/// assert_eq!(err.outcome(), table_model_cli::error::Outcome::InvalidInput);
/// assert!(err.to_string().starts_with("invalid --filter `Age gt`: invalid filter at position 6: "), "{err}");
/// ```
///
/// # Errors
/// [`CliError`] ([`InvalidInput`](crate::error::Outcome::InvalidInput)) with the parser's message.
pub fn parse_filter(text: &str) -> Result<Filter, CliError> {
    Filter::parse(text).map_err(|e| CliError::invalid(format!("invalid --filter `{text}`: {e}")))
}

/// A query with the filter, if any.
///
/// # Errors
/// As [`parse_filter`].
pub fn filtered(filter: Option<&str>) -> Result<Query, CliError> {
    Ok(match filter {
        Some(text) => Query::new().filter(parse_filter(text)?),
        None => Query::new(),
    })
}

/// Adds `$select` to a query when properties are given: the `always` ones (the keys, say), then the given ones not
/// among them.
pub fn selecting(query: Query, always: &[&'static str], given: &[String]) -> Query {
    if given.is_empty() {
        return query;
    }
    let rest: Vec<String> = given.iter().filter(|name| !always.contains(&name.as_str())).cloned().collect();
    query.select(always.iter().copied()).select(rest)
}
