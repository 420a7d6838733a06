//! Count: the number of entities a filter selects, reading their keys only, key ranges side by side
//! ([`crate::scan`]).
//!
//! Layer: operations.

use crate::error::{ErrorKind, TransferError};
use crate::progress::{Control, Event, Operation};
use crate::scan;
use futures::TryStreamExt as _;
use std::num::NonZeroUsize;
use table_model::client::TableClient;
use table_model::MetadataLevel;

/// Counts the entities of `table` that `filter` selects (all without one), reading `parallel` key ranges side
/// by side.
///
/// ```no_run
/// use std::num::NonZeroUsize;
/// use table_model::client::TableServiceClient;
/// use table_model::TableName;
/// use table_model_transfer::count::count;
/// use table_model_transfer::progress::Control;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let service = TableServiceClient::from_connection_string("UseDevelopmentStorage=true", None)?;
/// let orders = service.table_client(TableName::from_static("Orders"));
/// let open = count(&orders, Some("Status eq 'open'"), NonZeroUsize::new(4).unwrap(), &Control::new()).await?;
/// println!("{open} open orders");
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// [`TransferError`]: an invalid filter (before any request), a failed request, [`ErrorKind::Cancelled`].
pub async fn count(
    table: &TableClient,
    filter: Option<&str>,
    parallel: NonZeroUsize,
    control: &Control,
) -> Result<u64, TransferError> {
    let query = scan::filtered(filter)?.select(["PartitionKey", "RowKey"]);
    let starts = scan::plan_reading(table, &query, parallel, Some(MetadataLevel::None)).await?.into_starts();
    control.report(Event::Started { operation: Operation::Count, total_bytes: None });
    let mut count = 0_u64;
    let scan = scan::scan_pages(table, &query, starts, parallel, Some(MetadataLevel::None)).try_for_each(|page| {
        count += page.entities.len() as u64;
        control.report(Event::Entities(count));
        async { Ok(()) }
    });
    let result = control.unless_cancelled(scan).await;
    control.report(Event::Finished);
    match result {
        Some(result) => result.map(|()| count),
        None => {
            Err(TransferError::new(ErrorKind::Cancelled, format!("the count was cancelled after {count} entities")))
        }
    }
}
