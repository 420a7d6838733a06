//! `tablectl sql "SELECT ..."`: a SQL statement over the connection's tables, run by Apache DataFusion with
//! table-model-datafusion's provider ([`table_model_datafusion::AzureTable`]: filters, projection and `LIMIT`
//! pushed to the service, key ranges read side by side). The tables are DataFusion's default schema
//! ([`crate::catalog::ServiceTables`]: every table the service lists, or those of `--table`), each inferred from
//! a sample when the statement names it. The rows are written as they come ([`crate::rows`]).

use super::Context;
use crate::catalog::ServiceTables;
use crate::cli::SqlArgs;
use crate::error::{CliError, Outcome};
use crate::output::Style;
use crate::rows::{RowFormat, RowWriter};
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::TryStreamExt as _;
use std::io::Write;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use table_model::TableName;
use table_model_transfer::format::{Compression, FileFormat, Sink};

/// Where the rows go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Standard output.
    Stdout,
    /// A file.
    File(PathBuf),
}

impl SqlArgs {
    /// The destination, format and compression of the rows: `--format` and `--compress` when given, else what
    /// the output file's name tells ([`FileFormat::of_path`]), else jsonl for a file; on stdout, a table on a
    /// terminal (`Style::Human`) and jsonl otherwise. Parquet and compressed output never go to a terminal.
    ///
    /// ```
    /// use clap::Parser as _;
    /// use table_model_cli::rows::RowFormat;
    /// use table_model_cli::cli::{Cli, Command};
    /// use table_model_cli::commands::sql::Target;
    /// use table_model_transfer::format::Compression;
    /// use table_model_cli::output::Style;
    /// let of = |args: &[&str], stdout: Style, terminal: bool| match Cli::try_parse_from(args).unwrap().command {
    ///     Command::Sql(args) => args.destination(stdout, terminal),
    ///     _ => unreachable!(),
    /// };
    /// let q = ["tablectl", "sql", "SELECT 1"];
    /// assert_eq!(of(&q, Style::Human, true)?, (Target::Stdout, RowFormat::Table, Compression::None));
    /// assert_eq!(of(&q, Style::Json, false)?, (Target::Stdout, RowFormat::Jsonl, Compression::None));
    /// let file = of(&[&q[..], &["-o", "rows.csv.gz"]].concat(), Style::Human, true)?;
    /// assert_eq!(file, (Target::File("rows.csv.gz".into()), RowFormat::Csv, Compression::Gzip));
    /// let parquet = of(&[&q[..], &["--format", "parquet"]].concat(), Style::Human, true).unwrap_err();
    /// assert_eq!(parquet.to_string(), "parquet is binary and stdout is a terminal: give -o FILE, or redirect stdout");
    /// assert_eq!(of(&[&q[..], &["--format", "parquet"]].concat(), Style::Json, false)?.1, RowFormat::Parquet);
    /// # Ok::<(), table_model_cli::error::CliError>(())
    /// ```
    ///
    /// # Errors
    /// [`CliError`] ([`InvalidInput`](crate::error::Outcome::InvalidInput)): binary output to a terminal, or compression for a table or Parquet.
    pub fn destination(&self, stdout: Style, terminal: bool) -> Result<(Target, RowFormat, Compression), CliError> {
        let target = match &self.output {
            Some(path) if path.as_os_str() != "-" => Target::File(path.clone()),
            _ => Target::Stdout,
        };
        let named = match &target {
            Target::File(path) => FileFormat::of_path(path),
            Target::Stdout => None,
        };
        let format = self.format.unwrap_or(match (named, &target) {
            (Some((FileFormat::Jsonl, _)), _) | (None, Target::File(_)) => RowFormat::Jsonl,
            (Some((FileFormat::Csv, _)), _) => RowFormat::Csv,
            (Some((FileFormat::Parquet, _)), _) => RowFormat::Parquet,
            (None, Target::Stdout) if stdout == Style::Human => RowFormat::Table,
            (None, Target::Stdout) => RowFormat::Jsonl,
        });
        let compression = self.compress.map(Into::into).or(named.map(|(_, c)| c)).unwrap_or_default();
        format.check_compression(compression)?;
        if target == Target::Stdout && terminal {
            if format == RowFormat::Parquet {
                return Err(CliError::invalid(
                    "parquet is binary and stdout is a terminal: give -o FILE, or redirect stdout",
                ));
            }
            if compression != Compression::None {
                return Err(CliError::invalid(
                    "compressed output is binary and stdout is a terminal: give -o FILE, or redirect stdout",
                ));
            }
        }
        Ok((target, format, compression))
    }
}

/// Runs the statement and writes its rows; to a file, a summary on stderr.
///
/// # Errors
/// A statement DataFusion cannot parse or plan (a table it does not know, a column a table does not have), or
/// one that would create or drop a table, a view or a schema: [`InvalidInput`](Outcome::InvalidInput), before
/// anything is written; a failed
/// request, with the outcome of the client's error; a row that cannot be written; stdout closed.
pub async fn run(ctx: &Context, args: &SqlArgs, terminal: bool, out: &mut impl Write) -> Result<Outcome, CliError> {
    let (target, format, compression) = args.destination(ctx.format, terminal)?;
    let tables = if args.tables.is_empty() {
        ServiceTables::list(ctx.service.clone(), args.sample.get()).await?
    } else {
        ServiceTables::new(ctx.service.clone(), args.tables.iter().cloned(), args.sample.get())
    };
    let session = session(tables, args.partitions)?;
    let plan = plan(&session, &args.statement).await?;
    if let LogicalPlan::Ddl(ddl) = &plan.plan {
        // DataFusion would report a failed `DROP TABLE` as a table that does not exist.
        return Err(CliError::invalid(format!(
            "not supported: {}: tablectl sql reads and writes the service's tables, it does not create or drop \
             tables, views or schemas",
            ddl.name()
        )));
    }
    let frame = session.execute_logical_plan(plan.plan).await?;
    let frame = match plan.show_columns {
        Some(table) => described(&session, frame, &table).await?,
        None => frame,
    };
    let mut rows = frame.execute_stream().await?;
    let sink = match &target {
        Target::File(path) => Sink::create(path, args.force)?,
        Target::Stdout => Sink::stream("stdout", &mut *out),
    };
    let written = match RowWriter::new(sink, format, compression, rows.schema()) {
        Ok(writer) => write_rows(&mut rows, writer).await,
        Err(e) => Err(e),
    };
    let (count, bytes) = match (written, &target) {
        (Ok(written), _) => written,
        (Err(e), Target::File(path)) => {
            // A file cut short by an error (or left empty by a writer that could not start) is no result: it goes.
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        (Err(e), Target::Stdout) => return Err(e),
    };
    if let Target::File(path) = &target {
        eprintln!("tablectl: wrote {count} rows ({bytes} bytes) to {}", path.display());
        // With --json, stdout says it too, as `export`'s summary does.
        if ctx.json {
            let summary = serde_json::json!({ "rows": count, "bytes": bytes, "path": path.display().to_string() });
            writeln!(out, "{summary}").map_err(CliError::stdout)?;
        }
    }
    Ok(Outcome::Done)
}

/// A planned statement, and for `SHOW COLUMNS` the table it shows, as the service spells its name.
struct Planned {
    plan: LogicalPlan,
    show_columns: Option<TableName>,
}

/// Plans a statement. DataFusion answers `SHOW COLUMNS FROM t` from `information_schema.columns` by the name as
/// written (`orders`, or `customers` folded from an unquoted `Customers`), where the table is listed as the
/// service spells it (`Orders`): no row would match. So its table is found as a `SELECT` finds it
/// ([`ServiceTables::resolve`]) and named as the service spells it; a table it cannot find is an invalid input.
async fn plan(session: &SessionContext, sql: &str) -> Result<Planned, CliError> {
    use datafusion::sql::parser::Statement as DfStatement;
    use datafusion::sql::sqlparser::ast::{Ident, ObjectNamePart, Statement};
    let state = session.state();
    let dialect = state.config().options().sql_parser.dialect;
    let mut statement = state.sql_to_statement(sql, &dialect)?;
    let mut show_columns = None;
    if let DfStatement::Statement(inner) = &mut statement
        && let Statement::ShowColumns { show_options, .. } = inner.as_mut()
    {
        let name = show_options.show_in.as_mut().and_then(|show_in| show_in.parent_name.as_mut());
        if let Some(name) = name.filter(|name| name.0.len() == 1) {
            let ObjectNamePart::Identifier(ident) = &mut name.0[0] else {
                return Err(CliError::invalid("SHOW COLUMNS: the table must be named by an identifier"));
            };
            // As DataFusion reads an identifier: unquoted, folded to lowercase.
            let written = if ident.quote_style.is_some() { ident.value.clone() } else { ident.value.to_lowercase() };
            let table = service_tables(session)?
                .resolve(&written)?
                .cloned()
                .ok_or_else(|| CliError::invalid(format!("SHOW COLUMNS: there is no table `{written}`")))?;
            *ident = Ident::with_quote('"', table.as_str());
            show_columns = Some(table);
        }
    }
    Ok(Planned { plan: state.statement_to_plan(statement).await?, show_columns })
}

/// The connection's tables, the session's default schema.
fn service_tables(session: &SessionContext) -> Result<Arc<ServiceTables>, CliError> {
    let options = session.state().config().options().catalog.clone();
    let schema = session
        .catalog(&options.default_catalog)
        .and_then(|catalog| catalog.schema(&options.default_schema))
        .ok_or_else(|| CliError::failed("the session has no default schema"))?;
    let any: Arc<dyn std::any::Any + Send + Sync> = schema;
    any.downcast::<ServiceTables>().map_err(|_| CliError::failed("the default schema is not the service's tables"))
}

/// `SHOW COLUMNS`'s rows with a last column, `edm_type`: what each column holds
/// ([`ColumnKind::describe`](table_model_arrow::mapping::ColumnKind::describe)), such as `Edm.DateTime:
/// microseconds, the 100 ns digit in @overflow` or `Edm.Int32,Edm.String: the text of each value (several types)`.
async fn described(
    session: &SessionContext,
    frame: datafusion::dataframe::DataFrame,
    table: &TableName,
) -> Result<datafusion::dataframe::DataFrame, CliError> {
    use datafusion::prelude::{ident, lit, when};
    use table_model_arrow::mapping::ColumnKind;
    let provider = session.table_provider(datafusion::common::TableReference::bare(table.as_str())).await?;
    let schema = provider.schema();
    let mut cases = schema.fields().iter().map(|field| (field.name().clone(), ColumnKind::describe(field)));
    let Some((first, text)) = cases.next() else { return Ok(frame) };
    let mut edm = when(ident("column_name").eq(lit(first)), lit(text));
    for (name, text) in cases {
        edm = edm.when(ident("column_name").eq(lit(name)), lit(text));
    }
    Ok(frame.with_column("edm_type", edm.otherwise(lit(""))?)?)
}

/// A DataFusion session over `tables`, its default schema, with `information_schema` (`SHOW TABLES`, `SHOW
/// COLUMNS FROM t`) and `partitions` as `target_partitions` when given.
///
/// # Errors
/// Never for DataFusion's default catalog (kept for a session without it).
pub fn session(tables: ServiceTables, partitions: Option<NonZeroUsize>) -> Result<SessionContext, CliError> {
    let mut config = SessionConfig::new().with_information_schema(true);
    if let Some(n) = partitions {
        config = config.with_target_partitions(n.get());
    }
    let catalog_name = config.options().catalog.default_catalog.clone();
    let schema_name = config.options().catalog.default_schema.clone();
    let session = SessionContext::new_with_config(config);
    let catalog = session
        .catalog(&catalog_name)
        .ok_or_else(|| CliError::failed(format!("DataFusion has no catalog `{catalog_name}`")))?;
    catalog.register_schema(&schema_name, Arc::new(tables))?;
    Ok(session)
}

async fn write_rows(
    rows: &mut datafusion::physical_plan::SendableRecordBatchStream,
    mut writer: RowWriter<'_>,
) -> Result<(u64, u64), CliError> {
    while let Some(batch) = rows.try_next().await? {
        writer.write(&batch)?;
    }
    writer.finish()
}
