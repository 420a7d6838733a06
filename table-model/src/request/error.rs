//! The errors of building requests: a request that cannot be built, and a batch operation that breaks a batch
//! rule. Both are here, not the second beside the batch, because each holds the other: a batch operation's
//! request error, a request's batch error.

use crate::entity::error::EntityError;
use crate::json::error::EncodeError;
use crate::query::error::QueryError;
use crate::sas::error::SasError;
use crate::service_properties::error::ServicePropertiesError;
use std::fmt;

/// Why a request could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestErrorKind {
    /// The entity cannot be written as a JSON body.
    Encode(EncodeError),
    /// The query options break a rule.
    Query(QueryError),
    /// An ETag that cannot be sent as an `If-Match` header (a control character in it).
    InvalidETag {
        /// The ETag found.
        etag: String,
    },
    /// A Storage Analytics table (`$Metrics...`), which can be read but not created.
    ReadOnlyTable {
        /// The table name.
        table: String,
    },
    /// A batch that breaks a rule (checked again when the request is built).
    Batch(BatchError),
    /// An entity whose keys cannot be written (a key field that is not a valid key).
    Entity(EntityError),
    /// A batch sent through the client of another table.
    TableMismatch {
        /// The batch's table.
        batch: String,
        /// The client's table.
        client: String,
    },
    /// Stored access policies that break a rule (`docs/rules.md` §9.3).
    AccessPolicy(SasError),
    /// Service properties that break a rule (`docs/rules.md` §9.5).
    ServiceProperties(ServicePropertiesError),
    /// An operation the kind of service the requests are made for does not serve: the Cosmos DB Table API
    /// serves neither service properties and statistics nor stored access policies (`docs/rules.md` §9.5).
    NotSupported {
        /// The operation, as the error names it (`get service properties`).
        operation: &'static str,
        /// The service that does not serve it.
        service: crate::ServiceKind,
    },
    /// A key or property name that Azure Table Storage takes but the service the request is for refuses
    /// (Cosmos DB for Table's shorter keys and reserved names, `docs/rules.md` §13.1).
    ServiceRule {
        /// The rule broken, and the rule set it belongs to.
        error: crate::RuleSetError,
        /// The key or property name refused.
        value: String,
    },
}

/// The error for a request that cannot be built: nothing is sent.
///
/// ```
/// use table_model::{Query, RequestErrorKind, TableName, TableService};
/// let service = TableService::from_connection_string("UseDevelopmentStorage=true")?;
/// let err = service.query(&"People".parse::<TableName>()?, &Query::new().top(5000), None).unwrap_err();
/// assert!(matches!(err.kind(), RequestErrorKind::Query(_)));
/// assert_eq!(err.to_string(), "invalid query: $top must be from 1 to 1000, found 5000");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    kind: RequestErrorKind,
}

impl RequestError {
    pub(crate) fn new(kind: RequestErrorKind) -> Self {
        RequestError { kind }
    }

    /// What was wrong.
    pub fn kind(&self) -> &RequestErrorKind {
        &self.kind
    }
}

impl From<EncodeError> for RequestError {
    fn from(e: EncodeError) -> Self {
        RequestError::new(RequestErrorKind::Encode(e))
    }
}

impl From<QueryError> for RequestError {
    fn from(e: QueryError) -> Self {
        RequestError::new(RequestErrorKind::Query(e))
    }
}

impl From<BatchError> for RequestError {
    fn from(e: BatchError) -> Self {
        RequestError::new(RequestErrorKind::Batch(e))
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            RequestErrorKind::Encode(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::Query(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::InvalidETag { etag } => {
                write!(f, "invalid ETag {etag:?}: cannot be sent as an If-Match header")
            }
            RequestErrorKind::ReadOnlyTable { table } => {
                write!(f, "invalid table name: `{table}` is a Storage Analytics table, which cannot be created")
            }
            RequestErrorKind::Batch(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::Entity(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::TableMismatch { batch, client } => {
                write!(f, "invalid batch: its table is `{batch}`, but it was given to the client of table `{client}`")
            }
            RequestErrorKind::AccessPolicy(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::ServiceProperties(e) => fmt::Display::fmt(e, f),
            RequestErrorKind::NotSupported { operation, service } => {
                let service = match service {
                    crate::ServiceKind::CosmosDb => "Cosmos DB for Table",
                    crate::ServiceKind::Storage => "Azure Table Storage",
                    crate::ServiceKind::Azurite => "Azurite",
                };
                write!(f, "{operation} is not served by {service}")
            }
            RequestErrorKind::ServiceRule { error, value } => fmt::Display::fmt(&error.with_value(value), f),
        }
    }
}

impl From<EntityError> for RequestError {
    fn from(e: EntityError) -> Self {
        RequestError::new(RequestErrorKind::Entity(e))
    }
}

impl std::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            RequestErrorKind::Encode(e) => Some(e),
            RequestErrorKind::Query(e) => Some(e),
            RequestErrorKind::Batch(e) => Some(e),
            RequestErrorKind::Entity(e) => Some(e),
            RequestErrorKind::AccessPolicy(e) => Some(e),
            RequestErrorKind::ServiceProperties(e) => Some(e),
            RequestErrorKind::ServiceRule { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<SasError> for RequestError {
    fn from(e: SasError) -> Self {
        RequestError::new(RequestErrorKind::AccessPolicy(e))
    }
}

impl From<ServicePropertiesError> for RequestError {
    fn from(e: ServicePropertiesError) -> Self {
        RequestError::new(RequestErrorKind::ServiceProperties(e))
    }
}

/// Why a batch operation was refused before sending (`docs/rules.md` §8.1).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchErrorKind {
    /// An entity of another PartitionKey than the batch's.
    PartitionKeyMismatch {
        /// The batch's PartitionKey.
        expected: String,
        /// The entity's.
        found: String,
    },
    /// A RowKey that an earlier operation of the batch already has.
    DuplicateRowKey {
        /// The RowKey.
        row_key: String,
        /// The index of the earlier operation.
        first: usize,
    },
    /// A 101st operation.
    TooManyOperations,
    /// A request body over the service's limit: under 4 MiB on Azure Table Storage, 2 MB on Cosmos DB for
    /// Table (`docs/rules.md` §8.1 and §13.1).
    BodyTooLarge {
        /// The size the body would have, in bytes.
        size: usize,
        /// The largest body the service takes, in bytes
        /// ([`RuleSet::batch_max_body_bytes`](crate::RuleSet::batch_max_body_bytes)).
        max: usize,
        /// The rules of the service the batch is for.
        rules: crate::RuleSet,
    },
    /// A batch with no operation.
    Empty,
    /// The operation's request cannot be built (its entity cannot be encoded, or its ETag sent).
    Request(Box<RequestError>),
}

/// The error for a batch operation that breaks a batch rule; it names the operation's index (the position it
/// would have had), and nothing is added to the batch.
///
/// ```
/// use table_model::{Batch, BatchErrorKind, Entity, PartitionKey, RowKey, TableName};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut batch = Batch::new("People".parse()?, PartitionKey::new("eu")?);
/// batch.insert(&Entity::new(PartitionKey::new("eu")?, RowKey::new("a")?))?;
/// let err = batch.insert(&Entity::new(PartitionKey::new("us")?, RowKey::new("b")?)).unwrap_err();
/// assert_eq!(err.index(), 1);
/// assert_eq!(
///     err.to_string(),
///     "invalid batch operation 1: PartitionKey `us` differs from the batch's `eu`; a batch has one PartitionKey"
/// );
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchError {
    index: usize,
    kind: BatchErrorKind,
}

impl BatchError {
    pub(crate) fn new(index: usize, kind: BatchErrorKind) -> Self {
        BatchError { index, kind }
    }

    /// The index of the operation refused.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Which rule was broken.
    pub fn kind(&self) -> &BatchErrorKind {
        &self.kind
    }
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if matches!(self.kind, BatchErrorKind::Empty) {
            return f.write_str("invalid batch: a batch needs at least one operation");
        }
        write!(f, "invalid batch operation {}: ", self.index)?;
        match &self.kind {
            BatchErrorKind::PartitionKeyMismatch { expected, found } => {
                write!(f, "PartitionKey `{found}` differs from the batch's `{expected}`; a batch has one PartitionKey")
            }
            BatchErrorKind::DuplicateRowKey { row_key, first } => {
                write!(f, "RowKey `{row_key}` is already in operation {first}; each entity appears once per batch")
            }
            BatchErrorKind::TooManyOperations => {
                write!(f, "a batch holds at most {} operations", crate::limits::BATCH_MAX_OPERATIONS)
            }
            BatchErrorKind::BodyTooLarge { size, max, rules } => {
                write!(f, "the request body would be {size} bytes; {rules} takes at most {max} bytes in a batch")
            }
            BatchErrorKind::Request(e) => fmt::Display::fmt(e, f),
            BatchErrorKind::Empty => Ok(()),
        }
    }
}

impl std::error::Error for BatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            BatchErrorKind::Request(e) => Some(&**e),
            _ => None,
        }
    }
}
