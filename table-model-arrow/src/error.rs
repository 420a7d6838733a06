//! The error of every operation of the crate: [`Error`], and what it is about, [`ErrorKind`].
//!
//! Layer: base.

use std::fmt;

/// What went wrong, and where: a file that is not Parquet, a schema this crate cannot map, or a row that is not a
/// valid entity (with its row number in the file or batch, counted from 0).
///
/// ```
/// use table_model_arrow::parquet::ParquetEntityReader;
/// let err = ParquetEntityReader::new(bytes::Bytes::from_static(b"not a parquet file"), Default::default())
///     .unwrap_err();
/// assert!(matches!(err.kind(), table_model_arrow::ErrorKind::Parquet(_)));
/// ```
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    row: Option<u64>,
    keys: Option<Box<(String, String)>>,
    property: Option<String>,
}

/// The kinds of [`Error`].
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The Parquet reader or writer failed: not a Parquet file, a truncated or corrupt one, a codec this build
    /// does not have, or the sink refused a write.
    Parquet(parquet::errors::ParquetError),
    /// Arrow refused a batch (columns of different lengths, say).
    Arrow(arrow_schema::ArrowError),
    /// The schema does not describe entities: a missing or non-string key column, a column whose Arrow type has no
    /// EDM type, field metadata naming an unknown EDM type, or a schema file that does not parse.
    Schema(String),
    /// A row is not a valid entity: a null or invalid key, a value outside its EDM type's limits, or an overflow
    /// column that does not hold the service's JSON of properties.
    Row(String),
    /// An entity cannot be written: its overflow properties do not encode (an entity over 1 MiB).
    Encode(table_model::EncodeError),
    /// A query page does not decode ([`BatchBuilder::push_page`](crate::batch::BatchBuilder::push_page)): not
    /// JSON, or an entity that breaks the service's rules; the error names the entity's index and the property.
    Decode(table_model::DecodeError),
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Error { kind, row: None, keys: None, property: None }
    }

    pub(crate) fn schema(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Schema(message.into()))
    }

    pub(crate) fn row(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Row(message.into()))
    }

    /// Sets the row the error is about, unless it is known already.
    pub(crate) fn at_row(mut self, row: u64) -> Self {
        self.row.get_or_insert(row);
        self
    }

    /// Sets the keys of the row, as written (whether or not they are valid).
    pub(crate) fn with_keys(mut self, partition_key: &str, row_key: &str) -> Self {
        self.keys = Some(Box::new((partition_key.to_owned(), row_key.to_owned())));
        self
    }

    /// Sets the property the error is about.
    pub(crate) fn in_property(mut self, property: &str) -> Self {
        self.property = Some(property.to_owned());
        self
    }

    /// The PartitionKey and RowKey of the row, as written, when the error is about a row whose keys are strings.
    pub fn keys(&self) -> Option<(&str, &str)> {
        self.keys.as_deref().map(|(p, r)| (p.as_str(), r.as_str()))
    }

    /// The property the error is about, if one is.
    pub fn property(&self) -> Option<&str> {
        self.property.as_deref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The row (from 0, in the file for the Parquet reader, in the batch otherwise) the error is about, if any.
    pub fn row_number(&self) -> Option<u64> {
        self.row
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(row) = self.row {
            write!(f, "row {row}: ")?;
        }
        match &self.kind {
            ErrorKind::Parquet(e) => write!(f, "invalid parquet: {e}"),
            ErrorKind::Arrow(e) => write!(f, "invalid record batch: {e}"),
            ErrorKind::Schema(message) => write!(f, "invalid schema: {message}"),
            ErrorKind::Row(message) => f.write_str(message),
            ErrorKind::Encode(e) => write!(f, "cannot encode the overflow column: {e}"),
            ErrorKind::Decode(e) => write!(f, "invalid query page: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Parquet(e) => Some(e),
            ErrorKind::Arrow(e) => Some(e),
            ErrorKind::Encode(e) => Some(e),
            ErrorKind::Decode(e) => Some(e),
            ErrorKind::Schema(_) | ErrorKind::Row(_) => None,
        }
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Self {
        Error::new(ErrorKind::Parquet(e))
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::new(ErrorKind::Arrow(e))
    }
}
