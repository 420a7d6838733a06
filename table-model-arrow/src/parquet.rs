//! Parquet files of entities, streamed both ways: [`ParquetEntityWriter`] writes row groups bounded in memory (by
//! rows and by bytes), [`ParquetEntityReader`] reads them back a batch at a time, row group by row group.
//!
//! The schema is given ([`Inference::to_schema`], a schema file) or inferred from the first entities written
//! ([`WriterOptions::sample`]: only those are buffered). The Arrow schema is stored in the file (Parquet's
//! `ARROW:schema` metadata, which keeps each field's EDM type), so a file reads back exactly. Columns are
//! compressed with zstd.
//!
//! ```
//! use table_model::{DateTime, Entity, PartitionKey, RowKey};
//! use table_model_arrow::parquet::{ParquetEntityReader, ParquetEntityWriter, ReaderOptions, WriterOptions};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let entity = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?)
//!     .with("Bits".parse()?, f64::from_bits(0x7ff8_0000_0000_0001))? // a NaN with a payload
//!     .with("Since".parse()?, DateTime::MIN)?; // 1601: a ticks column
//! let mut writer = ParquetEntityWriter::new(Vec::new(), None, WriterOptions::default())?;
//! writer.write(entity.clone())?;
//! let file = writer.finish()?;
//! let read: Vec<Entity> = ParquetEntityReader::new(bytes::Bytes::from(file), ReaderOptions::default())?
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(read, [entity]);
//! # Ok(())
//! # }
//! ```
//!
//! Layer: files.

use crate::batch::{self, BatchBuilder, EntitySchema, Properties};
use crate::error::Error;
use crate::infer::Inference;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::ChunkReader;
use std::collections::VecDeque;
use std::io::Write;
use std::sync::Arc;
use table_model::{DateTime, Entity, PartitionKey, PropertyName, RowKey};

/// How a [`ParquetEntityWriter`] bounds its memory and chooses its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterOptions {
    /// Without a schema, infer it from this many first entities (buffered until then). Default 1,000.
    pub sample: usize,
    /// Rows per record batch handed to the Parquet writer. Default 1,024.
    pub batch_rows: usize,
    /// Bytes of values per record batch, for entities of large strings and binaries. Default 4 MiB.
    pub batch_bytes: usize,
    /// Rows per row group. Default 8,192: small enough that a row group of typical entities stays within a few
    /// MiB, so memory does not depend on the table's size.
    pub row_group_rows: usize,
    /// Bytes of a row group being built (its encoded columns in memory). Default 16 MiB.
    pub row_group_bytes: usize,
}

impl WriterOptions {
    /// The Parquet writer's properties of these options: zstd columns, row groups of at most `row_group_rows`
    /// rows and `row_group_bytes` bytes, and `created_by` naming the writer in the file's metadata.
    pub fn properties(&self, created_by: impl Into<String>) -> WriterProperties {
        WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_max_row_group_row_count(Some(self.row_group_rows))
            .set_max_row_group_bytes(Some(self.row_group_bytes))
            .set_created_by(created_by.into())
            .build()
    }
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            sample: 1_000,
            batch_rows: 1_024,
            batch_bytes: 4 << 20,
            row_group_rows: 8_192,
            row_group_bytes: 16 << 20,
        }
    }
}

/// Writes entities to a Parquet file, streaming: memory holds at most the sample, one batch and one row group.
#[derive(Debug)]
pub struct ParquetEntityWriter<W: Write + Send> {
    options: WriterOptions,
    state: State<W>,
    entities: u64,
}

#[derive(Debug)]
enum State<W: Write + Send> {
    /// No schema yet: the first entities and what they say.
    Sampling {
        out: W,
        sample: Vec<Entity>,
        inference: Inference,
    },
    Writing {
        writer: Box<ArrowWriter<W>>,
        batch: Box<BatchBuilder>,
    },
    /// After an error that left the writer unusable.
    Failed,
}

impl<W: Write + Send> ParquetEntityWriter<W> {
    /// A writer to `out`, with this Arrow schema (see [`EntitySchema::new`]; it should have the overflow column,
    /// as [`Inference::to_schema`] makes it), or one inferred from the first [`WriterOptions::sample`]
    /// entities.
    ///
    /// # Errors
    /// [`ErrorKind::Schema`](crate::ErrorKind::Schema): the schema does not describe entities.
    pub fn new(out: W, schema: Option<SchemaRef>, options: WriterOptions) -> Result<Self, Error> {
        let options = WriterOptions {
            sample: options.sample.max(1),
            batch_rows: options.batch_rows.max(1),
            row_group_rows: options.row_group_rows.max(1),
            row_group_bytes: options.row_group_bytes.max(1),
            ..options
        };
        let state = match schema {
            Some(schema) => Self::writing(out, schema, &options)?,
            None => State::Sampling { out, sample: Vec::new(), inference: Inference::new() },
        };
        Ok(ParquetEntityWriter { options, state, entities: 0 })
    }

    fn writing(out: W, schema: SchemaRef, options: &WriterOptions) -> Result<State<W>, Error> {
        let entity_schema = Arc::new(EntitySchema::new(schema.clone())?);
        let properties = options.properties(format!("table-model-arrow {}", env!("CARGO_PKG_VERSION")));
        let writer = ArrowWriter::try_new(out, schema, Some(properties))?;
        Ok(State::Writing { writer: Box::new(writer), batch: Box::new(BatchBuilder::new(entity_schema)) })
    }

    /// The schema, once known (given, or inferred after the sample).
    pub fn schema(&self) -> Option<&SchemaRef> {
        match &self.state {
            State::Writing { batch, .. } => Some(batch.schema().arrow()),
            _ => None,
        }
    }

    /// How many entities were written (or buffered) so far.
    pub fn entities(&self) -> u64 {
        self.entities
    }

    /// Writes an entity (buffered while sampling).
    ///
    /// # Errors
    /// The sink failed, or the entity cannot be encoded (see [`BatchBuilder::push`]).
    pub fn write(&mut self, entity: Entity) -> Result<(), Error> {
        if let State::Sampling { sample, inference, .. } = &mut self.state {
            inference.observe(&entity);
            sample.push(entity);
            self.entities += 1;
            if sample.len() >= self.options.sample {
                self.start()?;
            }
            return Ok(());
        }
        self.push(&entity)?;
        self.entities += 1;
        Ok(())
    }

    /// Writes an entity given by reference: as [`write`](Self::write), cloned only while the writer samples
    /// (it holds the sample), pushed into the batch without a copy after.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub fn write_ref(&mut self, entity: &Entity) -> Result<(), Error> {
        if matches!(self.state, State::Sampling { .. }) {
            return self.write(entity.clone());
        }
        self.push(entity)?;
        self.entities += 1;
        Ok(())
    }

    /// Writes an entity given as its keys, its `Timestamp` and its properties (valid names, each once, as in an
    /// [`Entity`]; a query page's, decoded without one): as [`write`](Self::write) writes the entity. While the
    /// writer samples, the entity is made and held; after, its values go into the batch as they are
    /// ([`BatchBuilder::push_properties`]).
    ///
    /// # Errors
    /// As [`write`](Self::write); while sampling, [`ErrorKind::Row`](crate::ErrorKind::Row) for keys or names that
    /// an [`Entity`] refuses.
    pub fn write_properties<P: Properties + ?Sized>(
        &mut self,
        partition_key: &str,
        row_key: &str,
        timestamp: Option<DateTime>,
        properties: &P,
    ) -> Result<(), Error> {
        if matches!(self.state, State::Sampling { .. }) {
            let row = |e: &dyn std::fmt::Display| Error::new(crate::ErrorKind::Row(e.to_string()));
            let mut entity = Entity::new(
                PartitionKey::new(partition_key).map_err(|e| row(&e))?,
                RowKey::new(row_key).map_err(|e| row(&e))?,
            );
            for i in 0..properties.len() {
                let (name, value) = properties.property(i);
                let name: PropertyName = name.parse().map_err(|e| row(&e))?;
                entity.insert(name, value.clone()).map_err(|e| row(&e))?;
            }
            entity.set_server_metadata(timestamp, None);
            return self.write(entity);
        }
        let State::Writing { batch, .. } = &mut self.state else {
            return Err(Error::schema("the writer failed before"));
        };
        batch.push_properties(partition_key, row_key, timestamp, properties)?;
        if batch.rows() >= self.options.batch_rows || batch.bytes() >= self.options.batch_bytes {
            self.flush_batch()?;
        }
        self.entities += 1;
        Ok(())
    }

    /// Ends the sample: infers the schema, starts the file and writes the sample.
    fn start(&mut self) -> Result<(), Error> {
        if !matches!(self.state, State::Sampling { .. }) {
            return Ok(());
        }
        let State::Sampling { out, sample, inference } = std::mem::replace(&mut self.state, State::Failed) else {
            return Ok(());
        };
        self.state = Self::writing(out, Arc::new(inference.to_schema()?), &self.options)?;
        for entity in &sample {
            self.push(entity)?;
        }
        Ok(())
    }

    fn push(&mut self, entity: &Entity) -> Result<(), Error> {
        let State::Writing { batch, .. } = &mut self.state else {
            return Err(Error::schema("the writer failed before"));
        };
        batch.push(entity)?;
        if batch.rows() >= self.options.batch_rows || batch.bytes() >= self.options.batch_bytes {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn flush_batch(&mut self) -> Result<(), Error> {
        let State::Writing { writer, batch } = &mut self.state else {
            return Ok(());
        };
        if batch.rows() == 0 {
            return Ok(());
        }
        let records: RecordBatch = batch.finish()?;
        writer.write(&records)?;
        // The writer flushes by its own estimate of the encoded size; its buffers (dictionaries, pages not yet
        // compressed) may hold more: bound those too.
        if writer.memory_size() >= self.options.row_group_bytes {
            writer.flush()?;
        }
        Ok(())
    }

    /// Writes what is buffered and the file's footer; returns the sink.
    ///
    /// # Errors
    /// The sink failed, or the sample's schema could not be made.
    pub fn finish(mut self) -> Result<W, Error> {
        self.start()?;
        self.flush_batch()?;
        match std::mem::replace(&mut self.state, State::Failed) {
            State::Writing { writer, .. } => Ok(writer.into_inner()?),
            _ => Err(Error::schema("the writer failed before")),
        }
    }
}

/// How a [`ParquetEntityReader`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReaderOptions {
    /// Rows per record batch read. Default 1,024.
    pub batch_rows: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions { batch_rows: 1_024 }
    }
}

/// Reads the entities of a Parquet file, a batch of rows at a time; an iterator of entities, each error with
/// its row number in the file.
pub struct ParquetEntityReader {
    reader: ParquetRecordBatchReader,
    schema: EntitySchema,
    rows: u64,
    read: u64,
    pending: VecDeque<Result<Entity, Error>>,
    failed: bool,
}

impl std::fmt::Debug for ParquetEntityReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetEntityReader").field("rows", &self.rows).field("read", &self.read).finish()
    }
}

impl ParquetEntityReader {
    /// Opens a file (a [`std::fs::File`], or [`bytes::Bytes`] in memory): reads its footer and schema.
    ///
    /// # Errors
    /// [`ErrorKind::Parquet`](crate::ErrorKind::Parquet) for a file that is not Parquet (bad magic, truncated,
    /// a corrupt footer); [`ErrorKind::Schema`](crate::ErrorKind::Schema) for a schema that does not describe
    /// entities.
    pub fn new<R: ChunkReader + 'static>(file: R, options: ReaderOptions) -> Result<Self, Error> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
        let schema = EntitySchema::new(builder.schema().clone())?;
        let rows = u64::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
        let reader = builder.with_batch_size(options.batch_rows.max(1)).build()?;
        Ok(ParquetEntityReader { reader, schema, rows, read: 0, pending: VecDeque::new(), failed: false })
    }

    /// The entities the file holds, by its footer.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The file's schema.
    pub fn schema(&self) -> &EntitySchema {
        &self.schema
    }
}

impl Iterator for ParquetEntityReader {
    type Item = Result<Entity, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(entity) = self.pending.pop_front() {
                self.read += 1;
                return Some(entity);
            }
            if self.failed {
                return None;
            }
            let batch = match self.reader.next()? {
                Ok(batch) => batch,
                Err(e) => {
                    // A corrupt page: what follows cannot be read.
                    self.failed = true;
                    return Some(Err(Error::from(e).at_row(self.read)));
                }
            };
            // A row that is not an entity is an error of its own (with its row in the file); the others are read.
            let first = self.read;
            match batch::Rows::new(&batch, &self.schema) {
                Ok(rows) => self.pending.extend(
                    (0..batch.num_rows()).map(|row| rows.entity(row).map_err(|e| e.at_row(first + row as u64))),
                ),
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e.at_row(first)));
                }
            }
        }
    }
}
