//! `tablectl schema TABLE|FILE [--sample N] [--rust]`: the properties of the first N entities of a table or a
//! file (JSON lines or Parquet), by [`Inference`] (the one the Parquet format and SQL share): each property's
//! EDM types, how many entities carry it, its conflicts and its Parquet column. On a terminal, an aligned table;
//! piped or with `--json`, the inference as JSON, which `export --format parquet --schema FILE` reads. With
//! `--rust`, a `#[derive(TableEntity)]` struct that reads these entities ([`crate::rust_struct`]).

use super::Context;
use crate::cli::SchemaArgs;
use crate::error::{CliError, Outcome};
use crate::output::Style;
use crate::progress::Progress;
use futures::{StreamExt as _, TryStreamExt as _};
use std::io::{Read as _, Write};
use std::path::{Path, PathBuf};
use table_model::{Entity, Query, TableName};
use table_model_arrow::infer::Inference;
use table_model_transfer::format::{self, Compression, FileFormat};

/// Where the entities come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A table of the endpoint.
    Table(TableName),
    /// A file.
    File(PathBuf),
}

impl Source {
    /// A value with a `.`, `/` or `\` is a file (a table name has none); any other, a table.
    ///
    /// ```
    /// use table_model_cli::commands::schema::Source;
    /// assert_eq!(Source::of("People")?, Source::Table("People".parse()?));
    /// assert_eq!(Source::of("people.jsonl")?, Source::File("people.jsonl".into()));
    /// assert_eq!(Source::of("./people")?, Source::File("./people".into()));
    /// assert!(Source::of("no-dash").unwrap_err().to_string().starts_with("`no-dash` is neither a file"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`CliError`] ([`InvalidInput`](Outcome::InvalidInput)) for a value that is neither.
    pub fn of(text: &str) -> Result<Source, CliError> {
        if text.contains(['.', '/', '\\']) {
            return Ok(Source::File(PathBuf::from(text)));
        }
        TableName::new(text).map(Source::Table).map_err(|e| {
            CliError::invalid(format!(
                "`{text}` is neither a file (a file's name has a `.` or a `/`) nor a table name: {e}"
            ))
        })
    }
}

/// The schema of a table's first `--sample` entities.
///
/// # Errors
/// A value that is neither a table nor a file, a failed request, or stdout closed.
pub async fn run(ctx: &Context, args: &SchemaArgs, out: &mut impl Write) -> Result<Outcome, CliError> {
    let table = match Source::of(&args.source)? {
        Source::Table(table) => table,
        Source::File(path) => return run_file(&path, args, ctx.format, out),
    };
    let top = usize::try_from(args.sample.min(1000)).unwrap_or(1000);
    let limit = usize::try_from(args.sample).unwrap_or(usize::MAX);
    let client = ctx.service.table_client(table.clone());
    let mut entities = client.query::<Entity>(&Query::new().top(top), None)?.take(limit);
    let progress = Progress::entities("schema");
    let mut inference = Inference::new();
    while let Some(entity) = entities.try_next().await? {
        inference.observe(&entity);
        if inference.entities().is_multiple_of(100) {
            progress.set_entities(inference.entities());
        }
    }
    progress.finish();
    write(&inference, args, table.as_str(), Some(table.as_str()), ctx.format, out)
}

/// The schema of a file's first `--sample` entities (see [`infer_file`]).
///
/// # Errors
/// A file that cannot be read or holds a line or row that is not an entity (with its line or row), or stdout
/// closed.
pub fn run_file(path: &Path, args: &SchemaArgs, format: Style, out: &mut impl Write) -> Result<Outcome, CliError> {
    let inference = infer_file(path, args.sample)?;
    let name = path.display().to_string();
    write(&inference, args, &name, None, format, out)
}

/// What the first `sample` entities of a file say: a file in any format `import` reads, told by its name
/// ([`FileFormat::of_path`]), else Parquet when it starts with Parquet's magic bytes, else JSON lines.
///
/// # Errors
/// As [`run_file`].
pub fn infer_file(path: &Path, sample: u64) -> Result<Inference, CliError> {
    let format = match FileFormat::of_path(path) {
        Some(format) => format,
        None => {
            let mut magic = [0_u8; 4];
            let mut file = std::fs::File::open(path).map_err(|e| CliError::io("open", path, e))?;
            let is_parquet = file.read_exact(&mut magic).is_ok() && &magic == b"PAR1";
            (if is_parquet { FileFormat::Parquet } else { FileFormat::Jsonl }, Compression::None)
        }
    };
    let mut reader = format::open_reader(path, Some(format))?;
    let mut inference = Inference::new();
    while inference.entities() < sample {
        let Some(record) = reader.next_record()? else {
            break;
        };
        let entity = record.entity.map_err(|rejected| {
            CliError::invalid(format!("`{}` line {}: {}", path.display(), record.position.line, rejected.rule))
        })?;
        inference.observe(&entity);
    }
    Ok(inference)
}

fn write(
    inference: &Inference,
    args: &SchemaArgs,
    source: &str,
    table: Option<&str>,
    format: Style,
    out: &mut impl Write,
) -> Result<Outcome, CliError> {
    let text = if args.rust {
        crate::rust_struct::generate(inference, &crate::rust_struct::type_name(source), table)
    } else {
        match format {
            Style::Json => {
                let mut json = serde_json::to_string(inference).expect("an inference serializes");
                json.push('\n');
                json
            }
            Style::Human => human(inference, source),
        }
    };
    out.write_all(text.as_bytes()).map_err(CliError::stdout)?;
    Ok(Outcome::Done)
}

/// The aligned table of a terminal.
///
/// ```
/// use table_model::{Entity, PartitionKey, RowKey};
/// use table_model_arrow::infer::Inference;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut inference = Inference::new();
/// let e = |rk: &str| Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(rk).unwrap());
/// inference.observe(&e("1").with("Age".parse()?, 36)?);
/// inference.observe(&e("2").with("Age".parse()?, "old")?);
/// assert_eq!(
///     table_model_cli::commands::schema::human(&inference, "People"),
///     "2 entities of People\n\
///      property      entities  types                      column\n\
///      PartitionKey  2         Edm.String 2               Utf8\n\
///      RowKey        2         Edm.String 2               Utf8\n\
///      Age           2         Edm.Int32 1, Edm.String 1  Text    conflict\n"
/// );
/// # Ok(())
/// # }
/// ```
pub fn human(inference: &Inference, source: &str) -> String {
    let mut rows = vec![["property".to_owned(), "entities".to_owned(), "types".to_owned(), "column".to_owned()]];
    let mut conflict = vec![false];
    for property in inference.properties() {
        let column = property.column().map(|c| c.name()).unwrap_or("-");
        rows.push([
            property.name().to_owned(),
            property.count().to_string(),
            crate::rust_struct::types_text(property),
            column.to_owned(),
        ]);
        conflict.push(property.is_conflict());
    }
    let widths: Vec<usize> = (0..4).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = format!("{} entities of {source}\n", inference.entities());
    for (row, conflict) in rows.iter().zip(conflict) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            if i < 3 || conflict {
                line.extend(std::iter::repeat_n(' ', widths[i] - cell.chars().count()));
            }
        }
        if conflict {
            line.push_str("  conflict");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
