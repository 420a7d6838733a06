//! The rows of `tablectl sql`, Arrow record batches of any schema, written as they come (memory holds a batch,
//! or a block of a terminal table, never the result): [`RowWriter`], in one of the [`RowFormat`]s, into a
//! [`Sink`] through [`Output`] (so `jsonl` and `csv` may be compressed as `export`'s files are). Each format is
//! one of arrow-rs's writers: arrow's pretty printer, arrow-json, arrow-csv and parquet's `ArrowWriter`.
//!
//! Layer: parts.

use crate::error::CliError;
use datafusion::arrow::array::{Array, ArrayRef, AsArray as _, RecordBatchOptions, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Float64Type, Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::json::writer::{Encoder, EncoderFactory, EncoderOptions, LineDelimited, NullableEncoder};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::ArrowWriter;
use std::io::Write as _;
use std::sync::Arc;
use table_model_transfer::format::compress::Output;
use table_model_transfer::format::{Compression, Sink};

/// How the rows are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum RowFormat {
    /// An aligned table (arrow's pretty printer), in blocks of 1,000 rows, control characters escaped and cells
    /// cut at 60 characters
    Table,
    /// One JSON object per row, every column in it (null included)
    Jsonl,
    /// A header of the column names, then a row per line (RFC 4180 quoting)
    Csv,
    /// Apache Parquet (zstd-compressed columns); never to a terminal
    Parquet,
}

impl RowFormat {
    /// Whether rows in this format can be compressed: jsonl and csv can; a table is text for a terminal, and a
    /// Parquet file compresses its columns itself.
    ///
    /// # Errors
    /// [`CliError`] ([`InvalidInput`](crate::error::Outcome::InvalidInput)): `compression` for a table or Parquet.
    pub fn check_compression(self, compression: Compression) -> Result<(), CliError> {
        if compression != Compression::None && matches!(self, RowFormat::Table | RowFormat::Parquet) {
            return Err(CliError::invalid(
                "--compress is for jsonl and csv: a table is text, and a Parquet file compresses its columns itself",
            ));
        }
        Ok(())
    }
}

/// Rows of a terminal table aligned together (as `tablectl query` aligns them).
pub const BLOCK: usize = crate::output::BLOCK;

/// Writes record batches in a [`RowFormat`].
///
/// ```
/// use std::sync::Arc;
/// use datafusion::arrow::array::{Float64Array, RecordBatch, StringArray};
/// use table_model_cli::rows::{RowWriter, RowFormat};
/// use table_model_transfer::format::{Compression, Sink};
/// let batch = RecordBatch::try_from_iter([
///     ("Name", Arc::new(StringArray::from(vec![Some("Ada"), None])) as _),
///     ("Score", Arc::new(Float64Array::from(vec![f64::NAN, -0.0])) as _),
/// ])?;
/// let mut out = Vec::new();
/// let mut writer = RowWriter::new(Sink::stream("stdout", &mut out), RowFormat::Jsonl, Compression::None, batch.schema())?;
/// writer.write(&batch)?;
/// assert_eq!(writer.finish()?, (2, 56));
/// assert_eq!(String::from_utf8(out)?, "{\"Name\":\"Ada\",\"Score\":\"NaN\"}\n{\"Name\":null,\"Score\":-0.0}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RowWriter<'a> {
    out: Output<'a>,
    schema: SchemaRef,
    state: State,
    rows: u64,
}

enum State {
    Table { block: Vec<RecordBatch>, rows: usize },
    Jsonl,
    Csv { header: bool },
    Parquet(Box<ArrowWriter<Vec<u8>>>),
}

impl std::fmt::Debug for RowWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowWriter").field("out", &self.out).field("rows", &self.rows).finish()
    }
}

impl<'a> RowWriter<'a> {
    /// A writer of rows of `schema` into `sink`; `compression` for `jsonl` and `csv` only.
    ///
    /// # Errors
    /// [`CliError`] ([`InvalidInput`](crate::error::Outcome::InvalidInput)) for a compressed table or Parquet
    /// file; ([`Failed`](crate::error::Outcome::Failed)) for a schema Parquet cannot hold.
    pub fn new(
        sink: Sink<'a>,
        format: RowFormat,
        compression: Compression,
        schema: SchemaRef,
    ) -> Result<Self, CliError> {
        format.check_compression(compression)?;
        let state = match format {
            RowFormat::Table => State::Table { block: Vec::new(), rows: 0 },
            RowFormat::Jsonl => State::Jsonl,
            RowFormat::Csv => State::Csv { header: true },
            RowFormat::Parquet => {
                // The row groups and column compression of `export`'s Parquet files.
                let properties = table_model_arrow::parquet::WriterOptions::default().properties(crate::TOOL);
                let writer = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(properties))
                    .map_err(|e| CliError::failed(format!("cannot write these rows as parquet: {e}")))?;
                State::Parquet(Box::new(writer))
            }
        };
        Ok(RowWriter { out: Output::new(sink, compression), schema, state, rows: 0 })
    }

    /// Writes the rows of `batch` (a terminal table holds them until its block is full).
    ///
    /// # Errors
    /// [`CliError`] when a value cannot be written in the format, or the output cannot be written (a closed
    /// stdout ends the run quietly, as [`CliError::stdout`] says).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), CliError> {
        self.rows += batch.num_rows() as u64;
        let bytes = match &mut self.state {
            State::Table { block, rows } => {
                // Blocks of exactly BLOCK rows: a batch that fills one starts the next.
                let mut text = Vec::new();
                let mut from = 0;
                while from < batch.num_rows() {
                    let take = (BLOCK - *rows).min(batch.num_rows() - from);
                    block.push(batch.slice(from, take));
                    (from, *rows) = (from + take, *rows + take);
                    if *rows == BLOCK {
                        text.extend(table(&self.schema, &std::mem::take(block))?);
                        *rows = 0;
                    }
                }
                text
            }
            State::Jsonl => jsonl(batch)?,
            State::Csv { header } => csv(batch, std::mem::replace(header, false))?,
            State::Parquet(writer) => {
                writer.write(batch).map_err(parquet_failed)?;
                std::mem::take(writer.inner_mut())
            }
        };
        self.emit(&bytes)
    }

    /// Ends the output (a terminal table's last block, a CSV header when there was no row, a Parquet footer):
    /// the rows written and the bytes that reached the output.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub fn finish(mut self) -> Result<(u64, u64), CliError> {
        let bytes = match std::mem::replace(&mut self.state, State::Jsonl) {
            State::Table { block, rows } if rows > 0 || self.rows == 0 => table(&self.schema, &block)?,
            State::Csv { header: true } => csv(&RecordBatch::new_empty(self.schema.clone()), true)?,
            State::Parquet(writer) => writer.into_inner().map_err(parquet_failed)?,
            _ => Vec::new(),
        };
        self.emit(&bytes)?;
        let (bytes, _) = self.out.finish()?;
        Ok((self.rows, bytes))
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        let out = &mut self.out;
        out.write_all(bytes).map_err(|e| out.error(e).into())
    }
}

/// A block of rows as arrow's pretty printer aligns them (the header alone for no row), each cell as `tablectl
/// query` shows text: control characters escaped, cut at [`MAX_CELL`](crate::output::MAX_CELL) characters; a
/// null is an empty cell.
fn table(schema: &SchemaRef, block: &[RecordBatch]) -> Result<Vec<u8>, CliError> {
    let failed = |e: ArrowError| CliError::failed(format!("cannot show the rows: {e}"));
    let shown = Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| Field::new(crate::output::escape_controls(f.name()), DataType::Utf8, true))
            .collect::<Vec<_>>(),
    ));
    let options = FormatOptions::default();
    let mut cells = Vec::with_capacity(block.len());
    for batch in block {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
        for column in batch.columns() {
            let formatter = ArrayFormatter::try_new(column.as_ref(), &options).map_err(failed)?;
            let text = (0..column.len()).map(|row| {
                column
                    .is_valid(row)
                    .then(|| crate::output::cut(&crate::output::escape_controls(&formatter.value(row).to_string())))
            });
            columns.push(Arc::new(text.collect::<StringArray>()));
        }
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        cells.push(RecordBatch::try_new_with_options(shown.clone(), columns, &options).map_err(failed)?);
    }
    let text = datafusion::arrow::util::pretty::pretty_format_batches_with_schema(shown, &cells).map_err(failed)?;
    Ok(format!("{text}\n").into_bytes())
}

/// Rows as JSON lines: every column, `null` included; Doubles JSON has no number for as `"NaN"`, `"Infinity"`,
/// `"-Infinity"` (arrow-json would write `null`), as the service's JSON writes them.
fn jsonl(batch: &RecordBatch) -> Result<Vec<u8>, CliError> {
    let mut writer = datafusion::arrow::json::WriterBuilder::new()
        .with_explicit_nulls(true)
        .with_encoder_factory(Arc::new(SpecialDoubles))
        .build::<_, LineDelimited>(Vec::new());
    writer
        .write(batch)
        .and_then(|()| writer.finish())
        .map_err(|e| CliError::failed(format!("cannot write JSON: {e}")))?;
    Ok(writer.into_inner())
}

/// Rows as CSV, after the header when `header`.
fn csv(batch: &RecordBatch, header: bool) -> Result<Vec<u8>, CliError> {
    let mut writer = datafusion::arrow::csv::WriterBuilder::new().with_header(header).build(Vec::new());
    writer.write(batch).map_err(|e| CliError::failed(format!("cannot write CSV: {e}")))?;
    Ok(writer.into_inner())
}

fn parquet_failed(e: impl std::fmt::Display) -> CliError {
    CliError::failed(format!("cannot write parquet: {e}"))
}

/// arrow-json's encoder of `Float64` columns, but for NaN and the infinities.
#[derive(Debug)]
struct SpecialDoubles;

impl EncoderFactory for SpecialDoubles {
    fn make_default_encoder<'a>(
        &self,
        _field: &'a FieldRef,
        array: &'a dyn Array,
        _options: &'a EncoderOptions,
    ) -> Result<Option<NullableEncoder<'a>>, ArrowError> {
        if array.data_type() != &DataType::Float64 {
            return Ok(None);
        }
        let values = array.as_primitive::<Float64Type>();
        Ok(Some(NullableEncoder::new(Box::new(DoubleEncoder(values.values())), values.nulls().cloned())))
    }
}

struct DoubleEncoder<'a>(&'a [f64]);

impl Encoder for DoubleEncoder<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let value = self.0[idx];
        match value {
            v if v.is_nan() => out.extend_from_slice(b"\"NaN\""),
            f64::INFINITY => out.extend_from_slice(b"\"Infinity\""),
            f64::NEG_INFINITY => out.extend_from_slice(b"\"-Infinity\""),
            // serde_json's shortest form that reads back to the same bits (`0.1`, `-0.0`, `1e300`).
            // Into the Vec directly (no String per value); a finite f64 into a Vec cannot fail.
            v => {
                let _ = serde_json::to_writer(&mut *out, &v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Float64Array, Int64Array};
    use datafusion::arrow::datatypes::{Field, Schema};

    fn write_all(format: RowFormat, batches: &[RecordBatch], schema: SchemaRef) -> (String, u64) {
        let mut out = Vec::new();
        let mut writer = RowWriter::new(Sink::stream("stdout", &mut out), format, Compression::None, schema).unwrap();
        for batch in batches {
            writer.write(batch).unwrap();
        }
        let (rows, bytes) = writer.finish().unwrap();
        assert_eq!(bytes, out.len() as u64);
        (String::from_utf8(out).unwrap(), rows)
    }

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("N", DataType::Int64, true), Field::new("D", DataType::Float64, true)]))
    }

    #[test]
    fn no_row_still_gives_a_header() {
        assert_eq!(write_all(RowFormat::Csv, &[], schema()), ("N,D\n".to_owned(), 0));
        assert_eq!(write_all(RowFormat::Jsonl, &[], schema()), (String::new(), 0));
        let (text, _) = write_all(RowFormat::Table, &[], schema());
        assert_eq!(text, "+---+---+\n| N | D |\n+---+---+\n+---+---+\n");
    }

    #[test]
    fn a_terminal_table_is_aligned_in_blocks() {
        let n = BLOCK + 2;
        let batch = RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(Int64Array::from_iter_values(0..n as i64)),
                Arc::new(Float64Array::from(vec![f64::INFINITY; n])),
            ],
        )
        .unwrap();
        // Two batches: a block of exactly BLOCK rows, then the rest at the end.
        let (text, rows) = write_all(RowFormat::Table, &[batch.clone(), batch.slice(0, 1)], schema());
        assert_eq!(rows, n as u64 + 1);
        let blocks: Vec<&str> = text.split("| N ").skip(1).collect();
        assert_eq!(blocks.len(), 2, "two blocks, each with its header");
        let rows_of = |block: &str| block.lines().filter(|l| l.starts_with("| ")).count();
        assert_eq!((rows_of(blocks[0]), rows_of(blocks[1])), (BLOCK, 3));
        assert!(text.contains("| 1001 | inf |"), "{text}");
    }

    #[test]
    fn a_terminal_table_escapes_control_characters_and_cuts_long_cells() {
        let schema = Arc::new(Schema::new(vec![Field::new("T\x1b", DataType::Utf8, true)]));
        let long = "é".repeat(crate::output::MAX_CELL + 1);
        let values = StringArray::from(vec![Some("\x1b[31mred\tx\n"), None, Some(long.as_str())]);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(values)]).unwrap();
        let (text, _) = write_all(RowFormat::Table, &[batch], schema);
        assert!(!text.contains('\x1b') && !text.contains('\t'), "{text:?}");
        let cut = format!("{}…", "é".repeat(crate::output::MAX_CELL - 1));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1].trim_end_matches([' ', '|']).trim_start_matches("| "), "T\\u{1b}");
        assert!(lines.iter().any(|l| l.contains("\\u{1b}[31mred\\tx\\n")), "{text}");
        assert!(lines.iter().any(|l| l.contains(&format!("| {cut} |"))), "{text}");
        assert_eq!(
            lines
                .iter()
                .filter(
                    |l| l.starts_with("| ") && l.trim_start_matches('|').trim().trim_end_matches('|').trim().is_empty()
                )
                .count(),
            1,
            "a null is an empty cell: {text}"
        );
    }

    #[test]
    fn compression_is_refused_where_it_means_nothing() {
        for format in [RowFormat::Table, RowFormat::Parquet] {
            let err =
                RowWriter::new(Sink::stream("stdout", Vec::new()), format, Compression::Gzip, schema()).unwrap_err();
            assert_eq!(err.outcome(), crate::error::Outcome::InvalidInput);
        }
    }

    #[test]
    fn doubles_keep_their_special_values_in_json() {
        let batch = RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(Int64Array::from(vec![Some(i64::MIN), None, Some(1)])),
                Arc::new(Float64Array::from(vec![Some(f64::NEG_INFINITY), Some(0.1), None])),
            ],
        )
        .unwrap();
        let (text, rows) = write_all(RowFormat::Jsonl, &[batch], schema());
        assert_eq!(rows, 3);
        assert_eq!(
            text,
            "{\"N\":-9223372036854775808,\"D\":\"-Infinity\"}\n{\"N\":null,\"D\":0.1}\n{\"N\":1,\"D\":null}\n"
        );
    }
}
